-- A size of the result may name a parameter bound as a whole, not a name bound inside a
-- tuple pattern of a parameter.
-- ==
-- error: The return type uses "k" as a size, but "k" is bound inside a tuple or record pattern

def blank (k: i64, _: bool) : [0][k]f32 = []

entry main (k: i64) = length (blank (k, true))
