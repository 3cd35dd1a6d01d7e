-- `g`'s argument gets the size of the filtered array, which exists only once the lambda's
-- body has run `filter`; the function passed for `g` is there before that.
-- ==
-- error: Causality check: the type .* of this parameter

def count_pos (xs: []i32) = (\g -> g (filter (> 0) xs)) (\_ -> 0i64)
