-- The size of the function's argument would be hidden inside the abbreviation.
-- ==
-- error: anonymous size in the parameter type

type^ scorer = []f32 -> f32

def best (f: scorer) (xs: []f32) = f xs
