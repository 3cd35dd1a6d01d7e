//! Regression tests for interpreter bugs found in integration.
mod common;
use common::*;

#[test]
fn functional_update_does_not_consume_a_variable_used_later() {
    // `xs with [1] = 20` must leave `xs` intact for the later uses (language.md §7.12).
    let src = "entry f (xs: []i32) =
  let ys = xs with [1] = 20
  let zs = copy xs with [0:2] = [0, 0]
  in (ys, xs, zs)\n";
    let v = run1(src, "f", vec![i32s(&[1, 2, 3, 4])]);
    assert_eq!(
        print(&v),
        "([1i32, 20i32, 3i32, 4i32], [1i32, 2i32, 3i32, 4i32], [0i32, 0i32, 3i32, 4i32])"
    );
}

#[test]
fn functional_update_in_a_lambda_keeps_the_captured_array() {
    let src = "entry f (xs: []i32) = map (\\i -> (xs with [i] = 0)[0] + xs[i]) (iota 3)\n";
    let v = run1(src, "f", vec![i32s(&[5, 6, 7])]);
    assert_eq!(print(&v), "[5i32, 11i32, 12i32]");
}

#[test]
fn a_definition_does_not_see_itself() {
    // `scatter` in the body is the intrinsic, not the entry point being defined.
    let src = "entry scatter (d: *[]i32) (is: []i64) (vs: []i32) = scatter d is vs\n";
    let is = i64s(&[0, 2]);
    let v = run1(src, "scatter", vec![i32s(&[1, 2, 3]), is, i32s(&[9, 8])]);
    assert_eq!(print(&v), "[9i32, 2i32, 8i32]");
}

#[test]
fn runaway_call_depth_is_a_runtime_error() {
    let src = "entry chain (n: i64) (x: i64) =
  let f = loop f = (\\(y: i64) -> y + 1) for _i < n do (\\(y: i64) -> f y + 1)
  in f x\n";
    let ok = run1(src, "chain", vec![i64v(100), i64v(0)]);
    assert_eq!(print(&ok), "101i64");
    let e = run(src, "chain", vec![i64v(1_000_000), i64v(0)]).unwrap_err();
    assert_eq!(e.message, "stack overflow: recursion too deep");
}

#[test]
fn let_update_in_a_lambda_keeps_the_captured_array() {
    let src = "entry f (a: []i32) = map (\\i -> let a[i] = 0 in a[0] + a[2]) (iota 3)\n";
    let v = run1(src, "f", vec![i32s(&[5, 6, 7])]);
    assert_eq!(print(&v), "[7i32, 12i32, 5i32]");
}
