-- A partial application that consumed an argument, passed to map, would consume it
-- once per element.
-- ==
-- error: Partial application of "poke" performs consumption

def poke (a: *[]i64) (i: i64) : i64 = let a[i] = 1 in a[i]

def many (n: i64) = map (poke (iota n)) (iota n)
