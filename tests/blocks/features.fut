-- Test-block features: several entry points per block, named datasets, case tags,
-- random input with auto output, data files (text, binary and gzip), input without
-- expectation.
-- ==
-- tags { example }
-- entry: sum_a sum_b
-- input { [1, 2, 3] } output { 6 }
-- "named" input { [10, 20] } output { 30 }
-- random input { [100]i32 } auto output
-- input @ data/ints.txt output @ data/ints_sum.txt
-- input @ data/ints.bin output { 15 }
-- input @ data/more_ints.txt.gz output { 15 }
-- input { [7] }

entry sum_a (xs: []i32) = i32.sum xs
entry sum_b (xs: []i32) = reduce (+) 0 xs

-- ==
-- entry: scale
-- random input { 2f32 [10]f32 } auto output
-- nobench input { 0.5f32 [2f32, 4] } output { [1f32, 2] }

entry scale (k: f32) (xs: []f32) = map (* k) xs
