-- A function whose parameter is unique does not have a type that says the
-- parameter is not.
-- ==
-- error: "zero_first" does not have expected type

def zero_first (xs: *[]u16) : *[]u16 = xs with [0] = 0

def reset : []u16 -> []u16 = zero_first
