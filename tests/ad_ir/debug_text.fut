-- An assertion's message holds the user's source text; text that looks like the IR's
-- debug form (`Jvp {`, `VName(0)`, `UpdateAcc`) must not change what AD does.
-- ==
-- entry: grad
-- input { 3.0f64 } output { 6.0f64 }
-- input { -2.0f64 } output { -4.0f64 }

entry grad (x: f64) : f64 =
  vjp (\y -> assert (length "Jvp { VName(0) } UpdateAcc WithVjp {" > 0) (y * y)) x 1.0

-- ==
-- entry: tangent
-- input { 3.0f64 } output { 6.0f64 }

entry tangent (x: f64) : f64 =
  jvp (\y -> assert (length "Vjp { VName(1) } Jvp {" > 0) (y * y)) x 1.0
