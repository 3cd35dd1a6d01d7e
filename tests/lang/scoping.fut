-- Top-level scoping: a definition sees only the definitions before it, never itself or
-- later ones, and prelude code keeps its own meaning when the user redefines a name it
-- uses.
-- ==
-- entry: copy
-- input { [1f32, 2] } output { [1f32, 2] }

entry copy (xs: []f32) = copy xs

-- ==
-- entry: uses_prelude_jvp
-- input { 3.0 } output { 6.0 }

-- A user function named like the intrinsic behind the prelude's `jvp`.
def jvp2 'a 'b (f: a -> b) (x: a) (_dx: a) : (b, b) = (f x, f x)
entry uses_prelude_jvp (x: f64) = jvp (\y -> y * y) x 1

-- ==
-- entry: uses_own
-- input { 3.0 } output { 9.0 9.0 }

entry uses_own (x: f64) = jvp2 (\y -> y * y) x 1
