-- Arguments are evaluated right to left and held: the first argument may not
-- consume what the second one passed.
-- ==
-- error: Using variable "v", but this was consumed

def add2 (a: []i64) (b: []i64) = map2 (+) a b

def g (v: *[]i64) = add2 (v with [0] = 7) v
