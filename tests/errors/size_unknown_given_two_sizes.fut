-- The anonymous size of the result is one size, so it cannot be both `k+1` and `k+2`.
-- ==
-- error: Sizes "k\+1" and "k\+2" do not match

type grid [n] = [n][n]i32

def widen (k: i64) : grid [] = tabulate_2d (k + 1) (k + 2) (\i j -> i32.i64 (i * j))
