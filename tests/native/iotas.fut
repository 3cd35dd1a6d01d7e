-- Reductions over `iota n` alone never build the iota on the compiled path (runic-opt's
-- `chunk-iotas`: a map over chunks of 65 536 indices, each reducing its own range, then a
-- reduction of the chunks' results in order). The sizes straddle the chunk boundaries;
-- expected values by hand (n·(n−1)/2), by a closed form, or, for the non-commutative
-- operator, by its definition.
-- ==
-- entry: sum_iota
-- input { 0i64 } output { 0i64 }
-- input { 1i64 } output { 0i64 }
-- input { 65535i64 } output { 2147385345i64 }
-- input { 65536i64 } output { 2147450880i64 }
-- input { 65537i64 } output { 2147516416i64 }
-- input { 200001i64 } output { 20000100000i64 }

entry sum_iota (n: i64) = iota n |> reduce (+) 0

-- ==
-- entry: sum_squares
-- input { 0i64 } output { 0i64 }
-- input { 131073i64 } output { 750608527851520i64 }

-- Σ i² for i < n = (n−1)·n·(2n−1)/6.
entry sum_squares (n: i64) = i64.sum (map (\i -> i * i) (iota n))

-- ==
-- entry: compose_affine
-- input { 3i64 } output { 8i64 4i64 }
-- input { 65537i64 } output { 0i64 -65538i64 }

-- Composition of the affine maps x ↦ a·x + b with a = 2 and b = i, in order: (a, b) then
-- (c, d) is x ↦ c·(a·x + b) + d. Associative, not commutative: the chunks must be combined
-- in order. For n maps the result is (2ⁿ, Σ_i 2^(n−1−i)·i) with i64 wrap-around: (8, 4)
-- for n = 3 (4·0 + 2·1 + 1·2); for n = 65 537 (computed with Python integers mod 2⁶⁴)
-- the power wraps to 0 and the sum to −65 538.
entry compose_affine (n: i64) =
  reduce (\(a, b) (c, d) -> (c * a, c * b + d)) (1, 0) (map (\i -> (2i64, i)) (iota n))

-- ==
-- entry: empty_keeps_neutral
-- input { 0i64 } output { 7i64 }
-- input { 2i64 } output { 8i64 }

-- An empty iota reduces to the given neutral element with no application of the operator,
-- even one whose "neutral" element is not neutral (7 + 7 would be 14): no chunk is made
-- for n = 0; and one chunk's result is the reduction's (7 + 0 + 1 for n = 2, with no
-- second 7 from combining the chunks). (With several chunks such an element is added
-- once per chunk: a reduction's neutral element must be neutral.)
entry empty_keeps_neutral (n: i64) = iota n |> reduce (+) 7

-- ==
-- entry: negative
-- input { -3i64 } error: Range 0..1..<-3 is invalid

entry negative (n: i64) = iota n |> reduce (+) 0
