-- The `+` rule of reduce: the cotangent is replicated, no scan (see the snapshot of
-- `runic dev --backend ir --print-ir-after ad` in crates/runic-cli/tests/ad_rules.rs).
-- ==
-- tags { autodiff }
-- input { [1f32, 2, 3] } output { [2f32, 2, 2] }

entry main (xs: []f32) = vjp (reduce (+) 0) xs 2
