-- A `let` written as the argument of a function with size parameters: the sizes it binds
-- are known where the function is applied, so a size parameter that is one of them is
-- known too (the reference suite's `types/ext9`).

def halves [n] [m] 't (_: [n + m]t) = (n, m)

-- ==
-- entry: one_let
-- input { [1, 2, 3] } output { 2i64 3i64 }
-- input { [5, 7] } output { 0i64 2i64 }
entry one_let [n] (xs: [n]i32) =
  halves (let small = filter (< 3) xs
          in small ++ xs)

-- Nested lets.
-- ==
-- entry: nested
-- input { [1, -2, 3, -4, -5] } output { 2i64 3i64 }
entry nested (xs: []i32) =
  halves (let pos = filter (> 0) xs
          let neg = filter (< 0) xs
          in pos ++ neg)

-- The let's names do not capture those of the other arguments.
def weigh [n] [m] (_: [n + m]i32) (k: i64) = n * 10 + m + k

-- ==
-- entry: beside
-- input { [4, 0, 6] } output { 24i64 }
entry beside (xs: []i32) =
  let k = length xs
  in weigh (let nz = filter (!= 0) xs in nz ++ [i32.i64 k]) k
