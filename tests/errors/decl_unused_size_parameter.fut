-- A size parameter that no parameter or result mentions.
-- ==
-- error: Size parameter "\[k\]" of "first" is not used

def first [k] (xs: []i32) : i32 = xs[0]
