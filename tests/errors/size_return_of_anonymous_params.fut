-- The declared result size is a constant, but the body's size comes from the parameters'
-- anonymous sizes, which each caller chooses.
-- ==
-- error: Sizes "4" and the size of the body do not match

def join (xs: []i32) (ys: []i32) : [4]i32 = xs ++ ys
