-- Loop parameters without an initial value start as the variables of the same name in
-- scope, whatever the shape of the pattern (tuple, record, ascription). Expected values
-- by hand.
-- ==
-- entry: tuple
-- input { 5 } output { 10 }
-- input { 0 } output { 0 }

entry tuple (n: i32) : i32 =
  let x = 0
  let i = 0
  let (x, _) = loop (x, i) while i < n do (x + i, i + 1)
  in x

-- ==
-- entry: record
-- input { 5 } output { 5 32.0 }

entry record (n: i32) : (i32, f64) =
  let x: f64 = 1
  let i = 0
  let {i, x} = loop {i, x: f64} while i < n do {i = i + 1, x = x * 2}
  in (i, x)

-- ==
-- entry: ascribed
-- input { 3 } output { 192 }

entry ascribed (x: i32) : i32 =
  loop (x: i32) while x < 100 do x * 2

-- The derivative of y ↦ y⁴ (three multiplications by y) is 4y³: 32 at y = 2.
-- ==
-- entry: gradient
-- input { 2.0 } output { 32.0 }

entry gradient (y0: f64) : f64 =
  vjp (\y -> let s = y
             let i = 0
             in (loop (s, i) while i < 3 do (s * y, i + 1)).0) y0 1
