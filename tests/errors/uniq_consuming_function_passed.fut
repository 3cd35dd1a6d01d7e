-- A function that consumes its argument cannot be passed where the parameter type
-- does not say so: the callee may call it twice on the same value.
-- ==
-- error: Function "wipe" is consuming

def wipe (a: *[]i64) : i64 = let a[0] = 0 in a[0]

def both 'x 'y (f: x -> y) (v: x) = (f v, f v)

def go (arr: *[]i64) = both wipe arr
