-- let-bindings: chains with and without `in`, tuple and record patterns, local functions,
-- shadowing, wildcards.
-- ==
-- entry: area
-- input { 3.0 4.0 } output { 18.0 }

def area_of (w: f64) (h: f64) =
  let a = w * h
  let b = a / 2
  in a + b

entry area_e (w: f64) (h: f64) = area_of w h
entry area = area_e

-- ==
-- entry: patterns
-- input { 1 2 3 } output { 6 3 }

entry patterns (x: i32) (y: i32) (z: i32) =
  let (a, (b, _)) = (x, (y, z))
  let {p, q = r} = {p = z, q = a + b}
  let s = p + r
  in (s, p)

-- ==
-- entry: local_fun
-- input { 5 } output { 26 10 }

entry local_fun (n: i32) =
  let sq x = x * x
  let twice 'a (f: a -> a) (x: a) = f (f x)
  in (sq n + 1, twice (\x -> x + 5) 0)

-- ==
-- entry: shadowing
-- input { 1 } output { 4 }

entry shadowing (x: i32) =
  let x = x + 1
  let x = x * 2
  in x

-- ==
-- entry: sized_let
-- input { [1, 2, 3] } output { 3i64 }

entry sized_let (xs: []i32) =
  let [n] (ys: [n]i32) = xs
  in n

-- Several size binders, written without spaces between them.
def three_parts (x: i32) : ?[n][m].([n]i32, [m]i32, [n + m]i32) =
  (replicate 1 x, replicate 2 x, replicate 3 x)

-- ==
-- entry: two_size_binders
-- input { 7 } output { 1i64 2i64 }
entry two_size_binders (x: i32) =
  let [a][b] (_: ([a]i32, [b]i32, [a + b]i32)) = three_parts x
  in (a, b)
