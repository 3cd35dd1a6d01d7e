-- A map over no rows still has the rows' shape: `[0][3]` rows of a `[0][3]` array, so that
-- flatten, transpose and unzip of the result, and a derivative through it, see the shape
-- the type gives. (The interpreter once lost it: "flatten of an array of too low rank".)
-- ==
-- entry: flatten_rows
-- input { empty([0][3]f32) }
-- output { empty([0]f32) }
-- input { [[1f32, 2f32, 3f32]] }
-- output { [2f32, 4f32, 6f32] }

def rows 't [n] [m] (f: [m]t -> [m]t) (xs: [n][m]t) : [n][m]t = map f xs

entry flatten_rows [n] (xs: [n][3]f32) : []f32 = flatten (rows (map (* 2)) xs)

-- ==
-- entry: transpose_rows
-- input { empty([0][3]f32) }
-- output { empty([3][0]f32) }
-- input { [[1f32, 2f32, 3f32], [4f32, 5f32, 6f32]] }
-- output { [[2f32, 5f32], [3f32, 6f32], [4f32, 7f32]] }

entry transpose_rows [n] (xs: [n][3]f32) : [3][n]f32 = transpose (map (\r -> map (+ 1) r) xs)

-- ==
-- entry: unzip_rows
-- input { empty([0][3]f32) }
-- output { empty([0]f32) empty([0]f32) }
-- input { [[1f32, 2f32, 3f32]] }
-- output { [1f32, 2f32, 3f32] [6f32] }

entry unzip_rows [n] (xs: [n][3]f32) : ([]f32, [n]f32) =
  let (a, b) = unzip (map (\r -> (r, f32.sum r)) xs)
  in (flatten a, b)

-- ==
-- entry: nested_pipe
-- input { empty([0][2][2]f64) }
-- output { 0i64 }
-- input { [[[1f64, 2f64], [3f64, 4f64]]] }
-- output { 4i64 }

entry nested_pipe [g] [h] (us: [g][h][h]f64) : i64 =
  us |> map (\u -> map (\r -> map (+ 1) r) u) |> flatten |> flatten |> length

-- The gradient of a sum over a batch of no gates is zero.
-- ==
-- entry: no_gates_grad
-- input { empty([0][2][2]f64) empty([0][1][2]f64) [[1f64, 2f64]] }
-- output { [[0f64, 0f64]] }

def dot [n] (a: [n]f64) (b: [n]f64) : f64 = f64.sum (map2 (*) a b)

entry no_gates_grad [g] [b] [h] (us: [g][h][h]f64) (c: [g][b][h]f64) (x: [b][h]f64) : [b][h]f64 =
  vjp (\x -> f64.sum (flatten (flatten (map2 (\u cg -> map2 (\xr cr -> map2 (\ur cv -> cv * dot ur xr) u cr) x cg) us c))))
      x 1
