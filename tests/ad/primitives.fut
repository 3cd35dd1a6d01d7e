-- The derivative table of language.md §11.3 at one point, forward and reverse.
-- Expected values are the closed-form derivatives evaluated with Python's math module.
-- ==
-- tags { autodiff }
-- entry: unary_fwd unary_rev
-- input { 0.7 }
-- output { [0.7648421872844885, -0.644217687237691, 1.709449715863117, 1.4002800840280099,
--           -1.4002800840280099, 0.6711409395973155, 1.255169005630943, 0.7585837018395334,
--           0.6347395899824584, 0.8192319205190405, 1.9607843137254901, 2.0137527074704766,
--           1.4285714285714286, 2.060992915555662, 0.620420688433217, 0.5882352941176471,
--           0.5976143046671968, 0.42281142940123845, -0.8537347209531384, 0.6912748604105386] }

entry unary_fwd (x: f64) : [20]f64 =
  [jvp f64.sin x 1, jvp f64.cos x 1, jvp f64.tan x 1, jvp f64.asin x 1, jvp f64.acos x 1,
   jvp f64.atan x 1, jvp f64.sinh x 1, jvp f64.cosh x 1, jvp f64.tanh x 1, jvp f64.asinh x 1,
   jvp f64.atanh x 1, jvp f64.exp x 1, jvp f64.log x 1, jvp f64.log2 x 1, jvp f64.log10 x 1,
   jvp f64.log1p x 1, jvp f64.sqrt x 1, jvp f64.cbrt x 1, jvp f64.rsqrt x 1, jvp f64.erf x 1]

entry unary_rev (x: f64) : [20]f64 =
  [vjp f64.sin x 1, vjp f64.cos x 1, vjp f64.tan x 1, vjp f64.asin x 1, vjp f64.acos x 1,
   vjp f64.atan x 1, vjp f64.sinh x 1, vjp f64.cosh x 1, vjp f64.tanh x 1, vjp f64.asinh x 1,
   vjp f64.atanh x 1, vjp f64.exp x 1, vjp f64.log x 1, vjp f64.log2 x 1, vjp f64.log10 x 1,
   vjp f64.log1p x 1, vjp f64.sqrt x 1, vjp f64.cbrt x 1, vjp f64.rsqrt x 1, vjp f64.erf x 1]

-- ==
-- entry: binary
-- input { 0.7 1.3 }
-- output { [1.3, 0.7, 0.7692307692307692, -0.4142011834319526, 1.1680804743278317,
--           -0.22433655875981934, 0.5963302752293578, -0.3211009174311926,
--           0.4740998230350174, 0.8804710999221753, 0.0, 1.0, 1.0, 0.0] }

def partials (f: (f64, f64) -> f64) (a: f64) (b: f64) : [2]f64 =
  let (da, db) = vjp f (a, b) 1
  in [da, db]

entry binary (a: f64) (b: f64) : []f64 =
  partials (\(x, y) -> x * y) a b
  ++ partials (\(x, y) -> x / y) a b
  ++ partials (\(x, y) -> x ** y) a b
  ++ partials (\(x, y) -> f64.atan2 x y) a b
  ++ partials (\(x, y) -> f64.hypot x y) a b
  ++ partials (\(x, y) -> f64.max x y) a b
  ++ partials (\(x, y) -> f64.min x y) a b

-- ==
-- entry: ties
-- input { 2.0 } output { 1.0 0.0 1.0 0.0 0.0 }

entry ties (x: f64) =
  (jvp (\y -> f64.max y x) x 1, jvp (\y -> f64.max x y) x 1,
   jvp (\y -> f64.min y x) x 1, jvp (\y -> f64.min x y) x 1, jvp f64.abs 0 1)

-- ==
-- entry: integers
-- input { 5 1500000000 } output { 75 75 -1294967296 }

def icube (x: i32) = x * x * x
entry integers (x: i32) (k: i32) = (jvp icube x 1, vjp icube x 1, vjp (\a -> a * k) x 2)

-- Fixed: the second component is the cotangent of the i64 argument `k`, so it is 0i64
-- (the type of `vjp f x dy` is the type of `x`; spec 11.4 Sizes gives its value as 0).
-- ==
-- entry: sizes
-- input { 4i64 } output { 4i64 0i64 }

entry sizes (n: i64) =
  (vjp (\k -> i64.sum (iota k)) n 1, vjp (\k -> f64.sum (replicate k 1.5 :> [4]f64)) n 1.0)

-- ==
-- entry: booleans
-- input { 1.0 } output { false false 0.0 }

entry booleans (x: f64) = (jvp (\b -> !b) false true, jvp f64.isinf x 1, vjp f64.isinf x true)

-- ==
-- entry: conversions
-- input { 2.5f32 } output { 1i64 3.0f32 1065353216u32 0i64 }

entry conversions (x: f32) =
  (jvp i64.f32 x 1.0, vjp i64.f32 x 3i64, jvp f32.to_bits x 1.0, jvp (\x -> i64.f32 (f32.floor x)) x 1)

-- ==
-- entry: trunc
-- input { 2.7 } output { 1.0 0.0 }

entry trunc (x: f64) = (jvp f64.trunc x 1.0, jvp f64.trunc x 0.5)
