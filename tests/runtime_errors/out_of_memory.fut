-- Arrays whose size comes from the input and cannot fit in memory are run-time errors at
-- the expression that asked for them (language.md §9.6), not process aborts.
-- ==
-- entry: iota_sum
-- no_ir input { 11264000000i64 } error: out_of_memory.fut:12:.*out of memory
-- input { 1000i64 } output { 499500i64 }

-- 90 GB of i64: more than the machines this suite runs on. The ir backend never builds
-- this iota (runic-opt's `chunk-iotas` reduces it a cache-sized range at a time), so it
-- computes the sum instead, in about 10 s: tests/native/iotas.fut tests that form.
entry iota_sum (n: i64) =
  iota n |> reduce (+) 0

-- ==
-- entry: replicate_sum
-- input { 11264000000i64 } error: out_of_memory.fut:19:.*out of memory
-- input { 4i64 } output { 10.0f64 }

entry replicate_sum (n: i64) = replicate n 2.5f64 |> reduce (+) 0

-- ==
-- entry: map_rows
-- input { 100000i64 } error: out_of_memory.fut:26:.*out of memory
-- input { 3i64 } output { 9i64 }

entry map_rows (n: i64) = map (\i -> replicate n i) (iota n) |> flatten |> reduce (+) 0

-- ==
-- entry: concat_sum
-- input { 6000000000i64 } error: out of memory
-- input { 3i64 } output { 6i64 }

entry concat_sum (n: i64) = iota n ++ iota n |> reduce (+) 0
