//! Regression tests for interpreter bugs found in integration.
mod common;
use common::*;

#[test]
fn functional_update_does_not_consume_a_variable_used_later() {
    // `copy xs with [1] = 20` must leave `xs` intact for the later uses (language.md §7.12;
    // without the `copy` the program consumes the non-unique `xs`, which §5.6 rejects).
    let src = "entry f (xs: []i32) =
  let ys = copy xs with [1] = 20
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
    let src = "entry f (xs: []i32) = map (\\i -> (copy xs with [i] = 0)[0] + xs[i]) (iota 3)\n";
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
fn runaway_call_chains_cannot_be_built() {
    // A function-valued loop parameter was the one way to nest calls as deep as the data
    // says (the interpreter's depth guard answered "stack overflow: recursion too deep");
    // functions cannot be loop parameters (language.md §6), so the checker rejects it.
    let src = "entry chain (n: i64) (x: i64) =
  let f = loop f = (\\(y: i64) -> y + 1) for _i < n do (\\(y: i64) -> f y + 1)
  in f x\n";
    let r = std::panic::catch_unwind(|| load(src));
    let msg = r
        .err()
        .and_then(|e| e.downcast::<String>().ok())
        .unwrap_or_default();
    assert!(
        msg.contains("A function cannot be a loop parameter"),
        "{msg}"
    );
}

#[test]
fn let_update_in_a_lambda_keeps_the_captured_array() {
    let src =
        "entry f (a: []i32) = map (\\i -> let a = copy a let a[i] = 0 in a[0] + a[2]) (iota 3)\n";
    let v = run1(src, "f", vec![i32s(&[5, 6, 7])]);
    assert_eq!(print(&v), "[7i32, 12i32, 5i32]");
}
