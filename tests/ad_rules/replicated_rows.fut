-- Forward mode in the direction of a replicated row of ones (a Newton step's direction):
-- the tangent map runs over `replicate k row`, which `inline-replicates` turns into the
-- row itself (and its elements into the scalar 1). Expected: the tangent of x² is 2x.
-- ==
-- input { [[1.0, 2.0, -0.5], [3.0, 4.0, 0.25]] }
-- output { [[2.0, 4.0, -1.0], [6.0, 8.0, 0.5]] }

entry main [k] [d] (cs: [k][d]f64) : [k][d]f64 =
  (jvp2 (\cs -> map (map (\x -> x * x)) cs) cs (replicate k (replicate d 1))).1
