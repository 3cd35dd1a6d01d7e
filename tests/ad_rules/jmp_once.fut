-- jmp with vector tangents: the loop and the branch run once for all seeds, each carrying
-- an array of tangents (one per seed). The map whose lambda holds a loop keeps vector
-- tangents too, so that loop also runs once per element; the reduce, a SOAC without a
-- loop, is a map over the seeds of its scalar derivative.
-- ==
-- tags { autodiff }
-- input { 2.0 3i32 [1.0, 0.0, 2.0] }
-- output { [391455504.0, 0.0, 782911008.0] }
-- input { -1.5 2i32 [1.0, -0.5] }
-- output { [-444.17381286621094, 222.08690643310547] }

def f (x: f64) (n: i32) : f64 =
  let y = loop acc = x for _i < n do acc * x
  let z = if y > 0 then y + x else y - x
  let ws = map (\i -> loop a = z + f64.i64 i for _j < 2 do a * z) (iota 2)
  in reduce (*) 1 ws

entry main (x: f64) (n: i32) (seeds: []f64) = jmp (\x -> f x n) x seeds
