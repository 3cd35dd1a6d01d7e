-- A section whose operand computes a value of unknown size, passed to a function: the
-- function's result type needs that size before the argument is made.
-- ==
-- error: Causality check: the result of this section has the size of a value its operand computes

entry main (xs: []f32) (rows: [][]f32) = map (filter (> 0) xs ++) rows
