-- A record result whose unique field is the parameter itself: the field is declared fresh
-- but aliases an array the caller keeps.
-- ==
-- error: Fresh-declared return value of "split" is aliased to "xs"

def split [n] (xs: [n]i32) : {out: *[n]i32, k: i64} = {out = xs, k = n}

entry main (xs: []i32) = (split xs).out
