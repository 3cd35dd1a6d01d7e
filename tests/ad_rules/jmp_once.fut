-- jmp with vector tangents: the loop, the branch and the reduce run once for all seeds,
-- each carrying an array of tangents (one per seed), instead of once per seed.
-- ==
-- tags { autodiff }
-- input { 2.0 3i32 [1.0, 0.0, 2.0] }
-- output { [1221.0, 0.0, 2442.0] }
-- input { -1.0 2i32 [1.0, 1.0] }
-- output { [2.0, 2.0] }

def f (x: f64) (n: i32) : f64 =
  let y = loop acc = x for _i < n do acc * x
  let z = if y > 0 then y + x else y - x
  in reduce (*) 1 (map (\i -> z + f64.i64 i) (iota 2))

entry main (x: f64) (n: i32) (seeds: []f64) = jmp (\x -> f x n) x seeds
