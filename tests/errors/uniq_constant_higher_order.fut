-- A top-level constant of function type is shared by every use, so computing it
-- may not consume.
-- ==
-- error: Top-level constant of higher-order type "put" may not perform consumption

def store (a: *[]i64) (v: i64) : *[]i64 = a with [1] = v

def put : i64 -> *[]i64 = store (iota 4)
