-- A function returned by a definition may not return a top-level array: the caller
-- could consume it.
-- ==
-- error: aliases the free variable "coeffs"

def coeffs : []f64 = [1, 2, 3]

def getter (_: bool) = \(_: i64) -> coeffs
