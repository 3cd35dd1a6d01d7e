-- A loop that consumes its initial value may not also iterate over it.
-- ==
-- error: Argument is consumed, but aliases "grid"

def bump (grid: *[][]i64) =
  loop g = grid for row in grid do g with [0] = map (+ 1) row
