-- An abstract type with size parameters whose definition only uses one inside a size
-- expression, so its size could not be read back from a value.
-- ==
-- error: uses its size parameter "m" non-constructively

module type grid = {
  type cells [n] [m]
  val make [n] [m] : [n][m]i32 -> cells [n] [m]
}

module flat_grid : grid = {
  type cells [n] [m] = [n][n * m]i32
  def make [n] [m] (g: [n][m]i32) : cells [n] [m] = map (\r -> flatten (replicate n r) :> [n * m]i32) g
}
