//! Stencil rows (`stencil-rows`, runic-opt's `stencils` module) on `tests/soacs/stencils.fut`:
//! a map over a range that reads arrays at the index plus an offset becomes, behind a test
//! that every row is in bounds, a map over slices of those arrays; otherwise the original
//! map runs, with the range it reads. The IR of the finite differences after the pass is
//! snapshot-tested, and the assertions check what the snapshot shows. The program's test
//! block (run on both backends by `runic test`) checks the values and the errors.

mod common;

use common::dev_ir;

fn ir_after(pass: &str) -> String {
    dev_ir(&["--print-ir-after", pass], "tests/soacs/stencils.fut")
}

/// The part of `ir` that defines `entry`.
fn entry<'a>(ir: &'a str, name: &str) -> &'a str {
    let start = ir
        .find(&format!("entry \"{name}\""))
        .unwrap_or_else(|| panic!("{name}: {ir}"));
    let rest = &ir[start..];
    let end = rest[1..].find("\nentry ").map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

#[test]
fn finite_differences_read_two_slices() {
    let before = ir_after("transposed-operands");
    let after = ir_after("stencil-rows");
    let diffs = entry(&after, "diffs");
    insta::assert_snapshot!(diffs);
    // Before: one map over `iota (n-1)` reading `a` at `i+1` and `i`.
    assert_eq!(entry(&before, "diffs").matches("a_0[").count(), 2);
    // After: the slices a[1 : 1+w] and a[0 : w] feed a map of floats, the original map
    // (with its iota) runs only in the other branch, and the iota's place holds the check
    // of `iota (min (n-1) 0)`.
    assert!(diffs.contains("= a_0[1i64:"), "{diffs}");
    assert!(diffs.contains("= a_0[0i64:"), "{diffs}");
    assert_eq!(diffs.matches("map(").count(), 2, "{diffs}");
    assert_eq!(
        diffs.matches("range_i64(0i64 .. 1i64 ..< b_2)").count(),
        1,
        "{diffs}"
    );
    assert!(diffs.contains("range_check"), "{diffs}");
    let (fast, slow) = diffs.split_once("} else {").expect("a branch");
    assert!(!fast.contains("range_i64(0i64 .. 1i64 ..< b_2)"), "{fast}");
    assert!(slow.contains("range_i64(0i64 .. 1i64 ..< b_2)"), "{slow}");
}

#[test]
fn what_the_rows_cannot_replace_stays() {
    let after = ir_after("stencil-rows");
    // The index also read as a value: the fast map keeps it as an input (and the range
    // stays before the branch), the reads become rows.
    let weighted = entry(&after, "weighted");
    let (before_if, _) = weighted.split_once(" = if ").expect("a branch");
    assert!(
        before_if.contains("range_i64(0i64 .. 1i64 ..< d_"),
        "{weighted}"
    );
    // Rows of a grid: the slices are of rows, and the inner map reads along them.
    let grid = entry(&after, "rows_above_below");
    let (fast, _) = grid.split_once("} else {").expect("a branch");
    assert!(fast.contains("= g_59[0i64:b_68]"), "{grid}");
    assert!(fast.contains("= g_59[2i64:"), "{grid}");
    assert!(!fast.contains("= g_59[b_"), "{grid}");
    // A read that is out of bounds at the range's first index (`a[i-1]` from 0, under a
    // condition) makes the test false before it runs: the map is left as it was, its
    // range with it, not put behind an `if false`.
    let shifted = entry(&after, "row_shifted");
    assert!(
        !shifted.contains(" = if false") && !shifted.contains("range_check"),
        "{shifted}"
    );
    // At the top level, `split-boundaries` first takes such a map apart at its condition
    // (`if i > 0 then a[i-1] + a[i] else a[i]`): the interior, `1..n`, reads slices.
    let guarded = entry(&after, "guarded");
    assert!(!guarded.contains(" = if false"), "{guarded}");
    assert_eq!(guarded.matches("concat@0(").count(), 1, "{guarded}");
    assert!(guarded.contains("= a_47[b_"), "{guarded}");
    // A map over something other than a range is left alone.
    let rot = dev_ir(
        &["--print-ir-after", "stencil-rows"],
        "tests/soacs/rotate.fut",
    );
    assert!(!rot.contains("range_check"), "{rot}");
}

#[test]
fn reads_along_rows_take_slices_of_the_rows() {
    let after = ir_after("stencil-rows");
    // A map over the rows whose inner map reads each row at j-1 and j+1: the fast map
    // slices every row twice and reads no element by index; the test of the slices' bounds
    // comes before the branch, once for the whole grid.
    let grid = entry(&after, "row_neighbours");
    let (before_if, rest) = grid.split_once(" = if ").expect("a branch");
    assert!(before_if.contains("Le("), "{grid}");
    let (fast, slow) = rest.split_once("} else {").expect("a branch");
    assert_eq!(
        fast.matches("[0i64:").count() + fast.matches("[2i64:").count(),
        2,
        "{fast}"
    );
    // (The index arithmetic `j - 1`, `j + 1` is gone with the reads.)
    assert!(
        !fast.contains("Sub(x_") && !fast.contains("Add(x_"),
        "{fast}"
    );
    // The only range left in it is the inner range's check.
    assert_eq!(fast.matches("range_i64(").count(), 1, "{fast}");
    assert_eq!(fast.matches("range_check").count(), 1, "{fast}");
    assert!(slow.contains("Sub(x_") && slow.contains("Add(x_"), "{slow}");
    assert!(slow.contains("range_i64(1i64 ..<"), "{slow}");
    // The Laplacian: three rows of the grid outside, five slices of them inside.
    let lap = entry(&after, "laplacian");
    let (fast, _) = lap.split_once("} else {").expect("a branch");
    assert_eq!(fast.matches("= g_").count(), 3, "{fast}");
    assert_eq!(fast.matches("]f32} = row_").count(), 5, "{fast}");
}
