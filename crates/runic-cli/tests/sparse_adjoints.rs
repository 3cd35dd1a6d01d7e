//! Sparse adjoints (`sparse-adjoints`, runic-opt's `sparse` module) on the nearest-centre
//! cost of k-means: the adjoint of `reduce min` is one-hot, so the adjoint map over the
//! centres and the accumulator updates after it run at the nearest centre only. The
//! program after the pass is snapshot-tested, and the assertions check what the snapshot
//! shows. The program's test block (run on both backends by `runic test`) holds gradients
//! computed by hand.

mod common;

use common::ir_after;

/// Maps over the centres (`d_4` is the number of centres in this program).
fn maps_over_centres(ir: &str) -> usize {
    ir.matches("map(d_4,").count()
}

#[test]
fn nearest_centre_adjoint_runs_at_one_centre() {
    let before = ir_after("simplify", "nearest_centre");
    // The distances, the positions holding their minimum (the forward sweep's search for
    // the nearest centre), the adjoint of the distances, and the accumulator updates (the
    // centres' rows have the points' size variable: no shape check maps over them).
    assert_eq!(maps_over_centres(&before), 4, "{before}");
    let after = ir_after("sparse-adjoints", "nearest_centre");
    insta::assert_snapshot!(after);
    // Only the distances (the primal) and the search still map over every centre.
    assert_eq!(maps_over_centres(&after), 2, "{after}");
    // The adjoint and the updates share one branch, taken when a minimum was found, and
    // the one-hot array between them is never built.
    let branch = after
        .split("let {} = if ")
        .nth(1)
        .expect("a branch without results");
    let branch = branch.split("} else {").next().unwrap();
    assert!(
        branch.contains("centres_"),
        "reads the nearest centre:\n{branch}"
    );
    assert_eq!(branch.matches("update_acc(").count(), 1, "{branch}");
    assert!(!after.contains("onehot_"), "{after}");
    // Nor is the adjoint of the distances: its one element is the cotangent itself, read
    // off the rule's write, which then goes (its branch proves the write in bounds).
    assert!(!after.contains(" with ["), "{after}");
}
