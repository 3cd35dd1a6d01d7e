-- A function's named size parameter (`(k: i64) -> … [k]a`) is replaced by its argument in
-- the function's own type only: a caller's size of the same name that a type variable
-- stands for keeps its meaning. Before the fix, `hist`'s `k` (its bins) turned the
-- caller's rows `[k]f64` into `[2]f64` ("Sizes "2" and "k" do not match"), and a user
-- function whose named parameter follows its polymorphic one got `[3][3]f64` for
-- `[3][k]f64`. Expected values by hand.
-- ==
-- entry: rows_hist
-- input { [1i64, 0i64, 1i64] [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]] }
-- output { [[4.0, 5.0, 6.0], [8.0, 10.0, 12.0]] }

entry rows_hist [k] (is: []i64) (m: [][k]f64) : [2][k]f64 =
  hist (map2 (+)) (replicate k 0) 2 is m

-- ==
-- entry: copies
-- input { [1.5, 2.5] }
-- output { [[1.5, 2.5], [1.5, 2.5], [1.5, 2.5]] }

def copies_of 'a (x: a) (k: i64) : [k]a = replicate k x

entry copies [k] (xs: [k]f64) : [3][k]f64 = copies_of xs 3
