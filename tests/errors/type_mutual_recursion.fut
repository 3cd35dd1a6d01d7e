-- Two functions that call each other: the first uses a name defined further down.
-- ==
-- error: Unknown name "odd": it is defined further down.*recursion

def even (n: i64) : bool = if n == 0 then true else odd (n - 1)
def odd (n: i64) : bool = if n == 0 then false else even (n - 1)
