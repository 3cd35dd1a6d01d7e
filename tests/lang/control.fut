-- if-then-else and every loop form.
-- ==
-- entry: sign
-- input { -3 } output { -1 }
-- input { 0 } output { 0 }
-- input { 9 } output { 1 }

entry sign (x: i32) = if x < 0 then -1 else if x == 0 then 0 else 1

-- ==
-- entry: for_loop
-- input { 10 } output { 45 }
-- input { 0 } output { 0 }
-- input { -3 } output { 0 }

entry for_loop (n: i32) = loop acc = 0 for i < n do acc + i

-- A counter has the type of its loop's bound, also when the bound is an outer counter.
-- ==
-- entry: nested_counters
-- input { 5 } output { 35 }
-- input { 0 } output { 0 }

entry nested_counters (n: i32) =
  loop acc = 0 for i < n do loop acc = acc for j < i do acc + j * i

-- ==
-- entry: for_in
-- input { [1f32, 2, 3, 4] } output { 10f32 24f32 }

entry for_in (xs: []f32) = loop (s, p) = (0f32, 1f32) for x in xs do (s + x, p * x)

-- ==
-- entry: while_loop
-- input { 1 } output { 2187 }
-- input { 5000 } output { 5000 }

entry while_loop (x0: i32) = loop x = x0 while x < 1000 do x * 3

-- ==
-- entry: implicit_init
-- input { } output { 10 }

entry implicit_init : i32 =
  let acc = 0
  in loop acc for i < 10 do acc + 1

-- ==
-- entry: long_loop
-- input { 10000000i64 } output { 49999995000000i64 }

entry long_loop (n: i64) = loop acc = 0 for i < n do acc + i

-- ==
-- entry: nested_loops
-- input { 4 } output { 48 }

entry nested_loops (n: i32) =
  loop s = 0 for i < n do
    loop s for j < n do s + i + j

-- ==
-- entry: short_circuit
-- input { [1, 2] 5 } output { false true }

entry short_circuit (xs: []i32) (i: i64) =
  (i < length xs && xs[i] > 0, i >= length xs || xs[i] > 0)
