//! The accumulator optimisation (`acc-to-reduce`, runic-opt's `accs` module) on the
//! weights of an MLP layer and of a recurrent cell: the program after the pass is
//! snapshot-tested, and the assertions check what the snapshot shows — no accumulator is
//! left, and each weight's adjoint is a map over its indices of a sum over the batch rows
//! that reads two per-row values (the matrix product δᵀ·x). The programs' test blocks
//! (run on both backends by `runic test`) hold gradients computed with JAX.

mod common;

use common::ir_after;

/// The bodies of the `pre` lambdas of the sums over iterations the pass builds.
fn element_bodies(ir: &str) -> Vec<String> {
    ir.split("reduce_comm(")
        .skip(1)
        .filter(|s| s.contains("pre \\{iter_"))
        .map(|s| s.split("}, \\{").next().unwrap().to_string())
        .collect()
}

#[test]
fn mlp_weight_adjoint_is_a_sum_over_rows() {
    let before = ir_after("simplify", "mlp_weights");
    assert!(before.contains("with_acc("), "AD gives an accumulator");
    assert!(before.contains("update_acc("));
    let after = ir_after("acc-to-reduce", "mlp_weights");
    insta::assert_snapshot!(after);
    assert!(!after.contains("with_acc("));
    assert!(!after.contains("update_acc("));
    let elems = element_bodies(&after);
    assert_eq!(elems.len(), 2, "one sum for the weights, one for the bias");
    // The weights: δ[b, j] · x[b, k], one multiplication per (row, j, k).
    let w = elems
        .iter()
        .find(|e| e.contains("Mul("))
        .expect("the weights' sum");
    assert_eq!(w.matches("Mul(").count(), 1);
    assert_eq!(w.matches("[iter_").count(), 2, "two per-row reads:\n{w}");
    assert!(!w.contains("replicate("), "no array per element:\n{w}");
}

#[test]
fn rnn_weight_adjoints_are_sums_over_rows() {
    let before = ir_after("simplify", "rnn_weights");
    assert_eq!(before.matches("with_acc(").count(), 2);
    let after = ir_after("acc-to-reduce", "rnn_weights");
    insta::assert_snapshot!(after);
    assert!(!after.contains("with_acc("));
    assert!(!after.contains("update_acc("));
    // W, U, the bias, and the hidden state's adjoint through U (inside the batch map).
    let elems = element_bodies(&after);
    assert_eq!(elems.len(), 4, "{after}");
    for e in &elems {
        assert!(!e.contains("replicate("), "no array per element:\n{e}");
        assert!(!e.contains("map("), "no map per element:\n{e}");
    }
}

/// `runic dev --backend ir --explain-exec FILE`.
fn explain(file: &str) -> String {
    common::dev_ir(&["--explain-exec"], file)
}

fn gemms(text: &str) -> usize {
    text.matches("a matrix product: GEMM").count()
}

/// Every product of the MLP's gradient is a GEMM: the two forward layers (also recomputed
/// inside the adjoint map, hoisted out of it), the two weight adjoints (acc-to-reduce),
/// and the hidden layer's adjoint `δ·W₂` (after fission of the adjoint map).
#[test]
fn mlp_gradient_products_run_as_gemm() {
    let text = explain("tests/linalg/mlp_grad.fut");
    assert_eq!(gemms(&text), 6, "{text}");
}

/// The recurrent cell's gradient: forward products in both sweeps and the weight
/// adjoints inside the reverse loop.
#[test]
fn rnn_gradient_products_run_as_gemm() {
    let text = explain("tests/ad_rules/rnn_weights.fut");
    assert!(gemms(&text) >= 8, "{text}");
}

/// Matrix products as users write them (rows by rows, by indices, transposed operands,
/// a transpose inside the map, a layer with an epilogue, batches of products).
#[test]
fn user_products_run_as_gemm() {
    let text = explain("tests/linalg/matmul_forms.fut");
    assert_eq!(gemms(&text), 9, "{text}");
}
