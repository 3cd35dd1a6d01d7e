//! One test per lowering rule: lower, verify, and look at the printed IR.

mod common;
use common::lowered;

#[test]
fn map_becomes_a_map_soac() {
    let ir = lowered("entry main (xs: []f32) = map (\\x -> x * 2) xs");
    assert!(ir.contains("= map("), "{ir}");
    assert!(ir.contains("Mul(x_"), "{ir}");
}

#[test]
fn sum_becomes_reduce_with_neutral_zero() {
    let ir = lowered("entry main (xs: []i32) = i32.sum xs");
    assert!(ir.contains("reduce_comm("), "{ir}");
    assert!(ir.contains("{0i32}"), "{ir}");
}

#[test]
fn tuples_are_flattened_and_arrays_of_tuples_are_tuples_of_arrays() {
    let ir = lowered("entry main (xs: []i32) (ys: []f32) = let ps = zip xs ys in map (\\(a, b) -> f32.i32 a + b) ps");
    assert!(ir.contains("map(d_"), "{ir}");
    assert!(ir.contains("to_f32("), "{ir}");
}

#[test]
fn higher_order_functions_are_inlined() {
    let ir =
        lowered("def twice (f: i32 -> i32) (x: i32) = f (f x)\nentry main (x: i32) = twice (+1) x");
    assert!(!ir.contains("Apply"), "{ir}");
    assert_eq!(ir.matches("Add(").count(), 2, "{ir}");
}

#[test]
fn short_circuit_and_is_an_if() {
    let ir = lowered("entry main (a: bool) (b: bool) = a && b");
    assert!(ir.contains("if a_"), "{ir}");
}

#[test]
fn while_loop_has_a_bool_parameter() {
    let ir = lowered("entry main (n: i32) = loop x = 1 while x < n do x * 2");
    assert!(ir.contains("while cond_"), "{ir}");
}

#[test]
fn entry_sizes_are_checked() {
    let ir = lowered("entry main [n] (xs: [n]i32) (ys: [n]i32) = map2 (+) xs ys");
    assert!(
        ir.contains("entry point arguments have invalid sizes."),
        "{ir}"
    );
    assert!(ir.contains("size(xs_"), "{ir}");
}

#[test]
fn filter_is_scan_and_scatter() {
    let ir = lowered("entry main (xs: []i32) = filter (>0) xs");
    assert!(ir.contains("scan("), "{ir}");
    assert!(ir.contains("scatter("), "{ir}");
}

#[test]
fn sums_are_a_tag_and_payloads() {
    let ir = lowered(
        "type t = #a i32 | #b f32\nentry main (x: i32) = match (if x > 0 then #a x else #b 1.0 : t) case #a y -> y case #b _ -> 0",
    );
    assert!(ir.contains("Eq("), "{ir}");
}

#[test]
fn in_place_update_is_update() {
    let ir = lowered("entry main (xs: *[]i32) = let xs[0] = 5 in xs");
    assert!(
        ir.contains(" with [0i64] = 5i32") || ir.contains(" with [0i32] = 5i32"),
        "{ir}"
    );
}

#[test]
fn jvp_becomes_the_ir_construct() {
    let ir = lowered("entry main (x: f64) = jvp (\\y -> y * y) x 1.0");
    assert!(ir.contains("jvp("), "{ir}");
}

#[test]
fn result_sizes_computed_in_a_lambda_are_copied_out_for_the_statement() {
    // Rows have size n + 1, computed inside the lambda; the map's result type must name a
    // variable in scope at the map (the verifier in `lowered` checks this).
    let ir = lowered("entry main (xs: []i32) = map (\\x -> xs ++ [x]) xs");
    assert!(ir.contains("= map("), "{ir}");
    let ir =
        lowered("entry main (xs: []f64) (dxs: []f64) = jvp (\\xs -> reverse xs ++ [xs[0]]) xs dxs");
    assert!(ir.contains("jvp("), "{ir}");
}
