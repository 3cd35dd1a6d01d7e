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
    // The bias's adjoint is the sum of the stored per-row adjoints: row by row when there
    // are at least as many rows as elements per row (decided at run time), else element
    // by element (the second sum above).
    assert!(after.contains("acc_rows_"), "{after}");
    assert!(after.contains("}, {zeros_"), "{after}");
    assert!(after.contains(" = if "), "{after}");
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

/// Hoisting the products out of the RNN's adjoint maps and splitting them leaves maps that
/// compute nothing (no results, only the iotas the products used), and so does dropping the
/// shape checks a map held: the last DCE removes them, at every depth.
#[test]
fn emptied_maps_are_removed_after_splitting() {
    let split = ir_after("fuse-after-split", "rnn_weights");
    assert!(
        split.contains("let {} = map("),
        "the shells this test is about:\n{split}"
    );
    let last = ir_after("final-dce", "rnn_weights");
    assert!(!last.contains("let {} = map("), "{last}");
}

/// Reverse mode broadcasts a point's adjoint into a vector for the elementwise map of its
/// nearest centre's adjoint; that map takes the scalar as a free variable instead, and the
/// vector is never built (a kernel filled it per point and read it back in SIMD lanes).
#[test]
fn broadcast_adjoints_are_free_scalars_of_elementwise_maps() {
    let broadcasts = |ir: &str| {
        ir.lines()
            .filter(|l| l.contains("= replicate([") && l.contains("], adj_"))
            .count()
    };
    assert_eq!(
        broadcasts(&ir_after("fuse-after-split", "nearest_centre")),
        1
    );
    let after = ir_after("final-dce", "nearest_centre");
    assert_eq!(broadcasts(&after), 0, "{after}");
}

/// The k-means Newton step's IR after `pass` (it is the last entry of the file).
fn kmeans_newton_after(pass: &str) -> String {
    let ir = common::dev_ir(&["--print-ir-after", pass], "bench/apps/kmeans.fut");
    ir[ir
        .find("entry \"kmeans_newton\"")
        .expect("the Newton entry")..]
        .to_string()
}

/// Forward mode along `replicate k (replicate d 1)` (a Newton step's direction): the
/// tangent map reads the row of ones itself rather than rows of the replicated matrix, and
/// its inner elementwise map the scalar `1`. (In k-means' Newton step that map now goes
/// altogether: it computed the distances' tangents nothing reads.)
#[test]
fn maps_over_replicated_rows_read_the_row() {
    let before = ir_after("fuse-after-split", "replicated_rows");
    let rows = before
        .lines()
        .find(|l| l.contains("= replicate([") && l.contains("], rep_"))
        .and_then(|l| l.trim_start().strip_prefix("let {"))
        .and_then(|l| l.split(' ').next())
        .expect("the replicated rows")
        .to_string();
    // Map inputs are listed on the line that closes the lambda.
    let mapped_over = |ir: &str| {
        ir.lines()
            .any(|l| l.trim_start().starts_with("}, ") && l.contains(&rows))
    };
    assert!(mapped_over(&before), "{before}");
    let after = ir_after("final-dce", "replicated_rows");
    assert!(!mapped_over(&after), "{after}");
}

#[test]
fn the_newton_step_computes_no_tangent_of_the_distances() {
    // Forward mode over the gradient carries the tangents of the distances into the
    // minimum's tangent, which nothing reads (the gradient reads the index of the
    // minimum): DCE drops that component of the reduction, then what computed it.
    let before = kmeans_newton_after("ad");
    // The points' dimension, `d`: the size of their rows.
    let d = before
        .lines()
        .find_map(|l| {
            let l = l.trim_start().strip_prefix("let {")?;
            let (name, rest) = l.split_once(" : i64} = size(points_")?;
            rest.ends_with(", 1)").then(|| name.to_string())
        })
        .unwrap_or_else(|| panic!("the size of the points' rows: {before}"));
    let sums_over_d = |ir: &str| ir.matches(&format!("reduce_comm({d},")).count();
    assert!(before.contains("let {dred_"), "{before}");
    assert!(
        sums_over_d(&before) >= 2,
        "distances and tangents:\n{before}"
    );
    let after = kmeans_newton_after("final-dce");
    insta::assert_snapshot!(after);
    assert_eq!(sums_over_d(&after), 1, "the distance only:\n{after}");
    assert!(!after.contains("dred_"), "{after}");
}

#[test]
fn the_lstm_tape_keeps_only_what_the_return_sweep_reads() {
    // The loop's tape stored the gates' pre-activations (`[4][B][H]` per step) for the
    // return sweep, which reads the gates' residuals instead: DCE drops that tape, the
    // loss's and the per-row errors' with it, once the kept last chunk is not sliced.
    let ir = common::dev_ir(&["--print-ir-after", "final-dce"], "bench/apps/lstm.fut");
    let grad = &ir[ir.find("entry \"lstm_grad\"").expect("the gradient")..];
    let stores: Vec<&str> = grad.lines().filter(|l| l.contains(" with [j_")).collect();
    // Rows `[B][H]` or `[B][O]` of a tape of chunk rows: three brackets in the type.
    let rank = |l: &str| l.split(" = ").next().unwrap_or("").matches('[').count();
    assert!(!stores.is_empty(), "{grad}");
    assert!(stores.iter().all(|l| rank(l) == 3), "{stores:#?}");
    // Forward: h, c, five residuals and the readout's predictions; the same again where a
    // chunk other than the last is run again.
    assert_eq!(stores.len(), 16, "{stores:#?}");
}

#[test]
fn a_sum_over_gates_puts_the_product_into_the_sum() {
    // Σ_g δ_g·U_g: the batched product moves into the branch that adds whole products
    // (a batch at least as large as the matrix); the other branch computes each element
    // of the product inside the sum over the batch, a nest the executor runs as
    // accumulating GEMMs.
    let file = "tests/linalg/gates_sum.fut";
    let before = common::dev_ir(&["--print-ir-after", "simplify-late"], file);
    let after = common::dev_ir(&["--print-ir-after", "sum-batched-products"], file);
    let branches = |ir: &str| -> (String, String) {
        let at = ir.find("= if b_").expect("the run-time choice of the sum");
        let rest = &ir[at..];
        let split = rest.find("} else {").expect("two branches");
        (rest[..split].to_string(), rest[split..].to_string())
    };
    let (then_before, else_before) = branches(&before);
    assert!(
        !then_before.contains("Mul(") && !else_before.contains("Mul("),
        "{before}"
    );
    let (then_after, else_after) = branches(&after);
    insta::assert_snapshot!(format!("{then_after}{else_after}"));
    assert!(
        then_after.contains("Mul("),
        "the product in the first branch:\n{after}"
    );
    // The second: a sum over the batch whose pre-lambda sums over the inner index.
    let inner = &else_after[else_after.find("reduce_comm(").expect("the sum")..];
    assert!(
        inner[1..].contains("reduce_comm(") && inner.contains("Mul("),
        "{after}"
    );
    let explained = explain(file);
    assert_eq!(gemms(&explained), 3, "{explained}");
}

/// `runic dev --backend ir --explain-exec FILE`.
fn explain(file: &str) -> String {
    common::dev_ir(&["--explain-exec"], file)
}

fn gemms(text: &str) -> usize {
    text.matches("a matrix product: GEMM").count()
}

/// The lines of one entry point in `--explain-exec` output.
fn explained_entry<'a>(text: &'a str, name: &str) -> &'a str {
    let start = text
        .find(&format!("entry {name}:"))
        .expect("the entry point");
    let rest = &text[start..];
    &rest[..rest[1..].find("entry ").map_or(rest.len(), |e| e + 1)]
}

/// Every product of the MLP's gradient is a GEMM, and none is computed twice: the loss's
/// two layers (the second taken out of the sum over the rows that fusion put it in; the
/// adjoint map's recomputed layers are the loss's, reused — the entry's sizes are one
/// variable each, so the two computations are equal), the two weight adjoints
/// (acc-to-reduce), and the hidden layer's adjoint `δ·W₂` (after fission of the adjoint
/// map).
#[test]
fn mlp_gradient_products_run_as_gemm() {
    let text = explain("tests/linalg/mlp_grad.fut");
    assert_eq!(gemms(&text), 5, "{text}");
}

/// The recurrent cell's gradient: forward products in both sweeps and the weight
/// adjoints inside the reverse loop.
#[test]
fn rnn_gradient_products_run_as_gemm() {
    let text = explain("tests/ad_rules/rnn_weights.fut");
    assert!(gemms(&text) >= 8, "{text}");
}

/// Matrix products as users write them (rows by rows, by indices, transposed operands,
/// a transpose inside the map, a layer with an epilogue, batches of products, columns
/// taken by slices — one operand, both, and slices shorter than their dimension, which
/// the run-time shape check sends back to the nest as written — and a product by indices
/// that only a sum reads, which fusion leaves apart, and products with one matrix of a
/// stack, `ws[g]`, read inside the map over rows).
#[test]
fn user_products_run_as_gemm() {
    let text = explain("tests/linalg/matmul_forms.fut");
    assert_eq!(gemms(&text), 15, "{text}");
    for entry in [
        "columns",
        "columns_both",
        "prefix_columns",
        "summed_by_indices",
        "one_of_a_stack",
        "first_of_a_stack",
    ] {
        assert_eq!(gemms(explained_entry(&text, entry)), 1, "{entry}: {text}");
    }
}

/// The text of one entry point in a printed program.
fn entry_text<'a>(ir: &'a str, name: &str) -> &'a str {
    let start = ir
        .find(&format!("entry \"{name}\""))
        .expect("the entry point");
    let rest = &ir[start..];
    match rest[1..].find("\nentry ") {
        Some(end) => &rest[..end + 1],
        None => rest,
    }
}

/// The GMM's inner loop (`Σ_i Σ_k a_k ‖Q_k (x_i − μ_k)‖²`): after split-contractions the
/// products leave the sum over the points as their own nest over points, components and
/// rows (`hoisted_…`), with `x_i − μ_k` stored before it; the sum over the points reads
/// the products and has no dot product left.
#[test]
fn gmm_products_leave_the_sum_over_points() {
    let ir = common::ir_after("split-contractions", "gmm_quad");
    let quad = entry_text(&ir, "quad");
    insta::assert_snapshot!(quad);
    let stms: Vec<&str> = quad.split("\n  let ").skip(1).collect();
    let nests: Vec<&&str> = stms.iter().filter(|s| products(s) > 0).collect();
    assert_eq!(nests.len(), 1, "one nest of products:\n{quad}");
    assert_eq!(products(nests[0]), 1);
    assert!(nests[0].starts_with("{hoisted_"), "{}", nests[0]);
    assert_eq!(
        nests[0].matches(" = map(").count(),
        3,
        "points, components, rows"
    );
    // The sum over the points (a map of per-point sums, then their sum) reads them.
    let at = stms.iter().position(|s| s == nests[0]).unwrap();
    assert!(
        stms[at + 1..].iter().any(|s| s.contains("hoisted_")),
        "the sum reads the products:\n{quad}"
    );
    assert!(stms.last().unwrap().contains("reduce_comm("), "{quad}");
}

/// The number of multiplications of two different variables (`Mul(x_1, x_2)`, not a
/// square) in a printed statement.
fn products(text: &str) -> usize {
    text.split("Mul(")
        .skip(1)
        .filter(|s| {
            let args: Vec<&str> = s.split(')').next().unwrap().split(", ").collect();
            args.len() == 2 && args[0] != args[1] && args.iter().all(|a| a.starts_with("x_"))
        })
        .count()
}

/// The gradient with respect to μ and Q: no accumulator is left, and Q's adjoint is a sum
/// over the points of one product of two per-point values read at three indices
/// (`δ[i, k, r] · (x_i − μ_k)[j]`: a batched product over the components).
#[test]
fn gmm_q_adjoint_is_a_sum_over_points() {
    let ir = common::ir_after("acc-to-reduce", "gmm_quad");
    let grad = entry_text(&ir, "quad_grad");
    assert!(!grad.contains("with_acc("), "{grad}");
    assert!(!grad.contains("update_acc("));
    let q = element_bodies(grad)
        .into_iter()
        .filter(|e| e.matches(", j_").count() == 4)
        .collect::<Vec<_>>();
    assert_eq!(q.len(), 1, "{grad}");
    assert_eq!(
        q[0].matches("[iter_").count(),
        2,
        "two per-point reads:\n{}",
        q[0]
    );
    assert_eq!(q[0].matches("Mul(").count(), 1, "{}", q[0]);
    assert!(
        !q[0].contains("replicate("),
        "no array per element:\n{}",
        q[0]
    );
}

/// The top-level statement of `text` that binds `name`, up to the next one.
fn statement_of<'a>(text: &'a str, name: &str) -> &'a str {
    let start = text
        .find(&format!("\n  let {{{name} :"))
        .unwrap_or_else(|| panic!("no statement binds {name}:\n{text}"));
    let rest = &text[start + 1..];
    let end = rest[1..]
        .find("\n  let ")
        .or_else(|| rest.find("\n  in "))
        .map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

/// The names an entry point's body returns (`in {a, b}` at its end).
fn returned(text: &str) -> Vec<String> {
    let last = text.rfind("\n  in {").expect("the body's result");
    let inner = &text[last + 7..];
    inner[..inner.find('}').unwrap()]
        .split(", ")
        .map(str::to_string)
        .collect()
}

/// μ's adjoint in the gradient of `Σ_i Σ_k a_k ‖Q_k (x_i − μ_k)‖²` is, per point, the
/// linear function `−Q_kᵀ·δ_ik` of the point's adjoint of the product, with the same
/// coefficients `Q_k` for every point (runic-opt's `linear.rs`): the points' `δ_ik` are
/// summed first and `Q_kᵀ` applied once per component after the sum. The map over the
/// points stores two per-point arrays (`δ`, and `x − μ` for Q's adjoint), not a third of
/// μ's adjoints.
#[test]
fn gmm_mean_adjoint_applies_q_after_the_sum() {
    let ir = common::ir_after("acc-to-reduce", "gmm_quad");
    let grad = entry_text(&ir, "quad_grad");
    insta::assert_snapshot!(grad);
    let points = grad
        .lines()
        .find(|l| l.contains("let {per_iter_"))
        .expect("the map over the points");
    let pat = &points[..points.find(" = map(").unwrap()];
    assert_eq!(pat.matches("per_iter_").count(), 2, "{pat}");
    let gmu = statement_of(grad, &returned(grad)[1]);
    let last = gmu.lines().last().unwrap();
    assert!(
        last.contains(", acc_") && last.contains(", qs_"),
        "a map over a sum and the matrices:\n{gmu}"
    );
    assert_eq!(gmu.matches("Mul(").count(), 1, "Q_kᵀ·Σδ:\n{gmu}");
    assert_eq!(gmu.matches("Neg(").count(), 1, "{gmu}");
    assert!(
        !gmu.contains("per_iter_"),
        "nothing per point after the sum:\n{gmu}"
    );
}

/// When each point scales `Q_k` (by its first coordinate), `Q_kᵀ` differs from point to
/// point and μ's per-point adjoint is summed as it is: no map over the components applies a
/// product to a sum.
#[test]
fn per_point_coefficients_stay_inside_the_sum() {
    let ir = common::ir_after("acc-to-reduce", "gmm_quad");
    let grad = entry_text(&ir, "quad_scaled_grad");
    assert!(!grad.contains("with_acc("), "{grad}");
    let gmu = statement_of(grad, &returned(grad)[1]);
    assert!(!gmu.contains("Mul("), "a plain sum:\n{gmu}");
    assert!(gmu.contains("per_iter_"), "of the stored adjoints:\n{gmu}");
}

/// Every product of `tests/linalg/batched_matvec.fut` runs as a GEMM: the products
/// (batch index in the middle of the nest), the energy's (taken out of the sum of
/// squares), and in the gradient w.r.t. μ and Q the forward products (once: the primal's
/// own run of them, whose value the gradient does not return, was read only by a map left
/// with no results, and the last DCE removes both) and `Σ_i δ_ik ⊗ (x_i − μ_k)` for Q's
/// adjoint (μ's is `Q_kᵀ·Σ_i δ_ik`, a product per component after the sum, not a GEMM).
#[test]
fn gmm_products_run_as_gemm() {
    let text = explain("tests/linalg/batched_matvec.fut");
    let per_entry: Vec<usize> = text.split("entry ").skip(1).map(gemms).collect();
    assert_eq!(per_entry[..3], [1, 1, 2], "{text}");
}

/// The GMM application (`tests/apps/gmm.fut`, the benchmark's program): one batched
/// product in the objective; in the gradient, the forward products once (reverse mode's
/// second copy of them and of `x − μ` is reused) and Q's adjoint (the means' adjoint
/// applies `Q_kᵀ` to the sum over the points, once per component).
#[test]
fn gmm_app_runs_its_products_as_gemm_once() {
    let text = explain("tests/apps/gmm.fut");
    let per_entry: Vec<usize> = text.split("entry ").skip(1).map(gemms).collect();
    assert_eq!(per_entry, [1, 2], "{text}");
}

/// `fuse-after-split`: maps that fission in `split-contractions` left beside the
/// contractions (an epilogue and the map reading it) fuse, and the contractions do not.
#[test]
fn what_fission_leaves_fuses_after_split_contractions() {
    let top_maps = |ir: &str| {
        ir.lines()
            .filter(|l| l.starts_with("  let ") && l.contains(" = map("))
            .count()
    };
    let split = common::ir_after("split-contractions", "gmm_quad");
    let fused = common::ir_after("fuse-after-split", "gmm_quad");
    assert!(top_maps(&fused) < top_maps(&split), "{split}\n{fused}");
    let nests = |ir: &str| ir.split("\n  let ").filter(|s| products(s) > 0).count();
    assert_eq!(nests(&fused), nests(&split), "{fused}");
}

/// Attention (`tests/ad_apps/attention.fut`): the values' adjoint is the transpose of a
/// per-query outer product (the primal reads `transpose v`), the keys' a per-query outer
/// product of the scores' adjoint and the query. Both become sums over the queries, so
/// the gradient keeps no accumulator and runs the products of attention's derivative
/// (`QKᵀ`, `dO·Vᵀ`, `dS·K`, `dSᵀ·Q`, `Aᵀ·dO`) as GEMMs; the primal's `A·V` is not
/// computed (the seed's shape is the type's, not the product's), and with a loss that
/// reads the output it is, a sixth.
#[test]
fn attention_adjoints_are_matrix_products() {
    assert_products_only("tests/ad_apps/attention.fut", "att_grad", 5);
    assert_products_only("tests/ad_apps/attention.fut", "att_loss_grad", 6);
}

/// `reuse`'s third rewrite (`export_recomputed`): the return sweep of a loss of attention's
/// output computed its softmax again (scores, maximum, exps, sum) before the adjoint. The
/// forward map now also returns the exps and the return sweep's map receives them: the
/// gradient computes each exp once, as the primal does, for one more stored array of the
/// scores' shape (the cheap scores and maximum are computed again, not stored). A vjp
/// seeded at the output itself has no forward sweep of the softmax to share with.
#[test]
fn attention_gradient_computes_its_exps_once() {
    let file = "tests/ad_apps/attention.fut";
    let exps = |pass: &str, entry: &str| {
        let ir = common::dev_ir(&["--print-ir-after", pass], file);
        entry_text(&ir, entry).matches("= Exp(").count()
    };
    assert_eq!(exps("final-dce", "att_fwd"), 1);
    assert_eq!(
        exps("chunk-iotas", "att_loss_grad"),
        2,
        "forward and return sweep"
    );
    for entry in ["att_loss_grad", "att_grad", "causal_grad"] {
        assert_eq!(exps("final-dce", entry), 1, "{entry}");
    }
    let ir = common::dev_ir(&["--print-ir-after", "final-dce"], file);
    let grad = entry_text(&ir, "att_loss_grad");
    // The types of the binders `kept_N : T` (uses of the names have no type after them).
    let kept: Vec<&str> = grad
        .split("kept_")
        .skip(1)
        .filter_map(|s| {
            let digits = s.find(|c: char| !c.is_ascii_digit())?;
            s[digits..].strip_prefix(" : ")
        })
        .collect();
    // Bound twice: the forward map's result (a row per query) and the parameter of the
    // return sweep's lambda (one query's row).
    assert_eq!(kept.len(), 2, "{grad}");
    assert!(kept[0].starts_with("[d_284][d_287]f64"), "{grad}");
    assert!(kept[1].starts_with("[d_287]f64"), "{grad}");
}

/// The entry point `entry` of `file` keeps no accumulator after the last pass and runs
/// `products` GEMMs.
fn assert_products_only(file: &str, entry: &str, products: usize) {
    let ir = common::dev_ir(&["--print-ir-after", "final-dce"], file);
    let grad = entry_text(&ir, entry);
    assert!(!grad.contains("with_acc("), "{grad}");
    assert!(!grad.contains("update_acc("), "{grad}");
    let text = explain(file);
    assert_eq!(gemms(explained_entry(&text, entry)), products, "{text}");
}

/// Message passing (`tests/ad_apps/gnn.fut`): one `with_acc` gathers the weights'
/// adjoint (whole-array updates, a product of the edges' adjoints and rows) and scatters
/// the gathered rows' adjoints (`acc[src[e], …] +=`). acc-to-reduce sums the weights
/// over the edges and leaves the scatter an accumulator of its own `with_acc`.
#[test]
fn message_passing_sums_the_weights_and_keeps_the_scatter() {
    let file = "tests/ad_apps/gnn.fut";
    let before = common::dev_ir(&["--print-ir-after", "simplify"], file);
    let after = common::dev_ir(&["--print-ir-after", "acc-to-reduce"], file);
    // Accumulators of W's shape ([d][d]) and of the node states' ([n][d]).
    let (w, h) = ("acc([d_7][d_7], f64)", "acc([d_16][d_7], f64)");
    let before = entry_text(&before, "gnn_grad");
    assert!(before.contains(w) && before.contains(h), "{before}");
    let grad = entry_text(&after, "gnn_grad");
    assert!(!grad.contains(w), "{grad}");
    assert_eq!(
        grad.matches("with_acc(").count(),
        2,
        "one per layer:\n{grad}"
    );
    assert!(grad.contains(h), "{grad}");
    // Per layer, W's adjoint is a sum over the edges of a product of two per-edge values
    // (the messages' adjoints and the gathered rows); each edge's row adjoint `Wᵀ·δ`, a
    // sum over W's rows, was one already.
    let sums = element_bodies(grad);
    assert_eq!(
        sums.iter().filter(|e| e.contains("Mul(")).count(),
        4,
        "{grad}"
    );
    let over_edges = sums
        .iter()
        .filter(|e| e.matches("= per_iter_").count() == 2);
    assert_eq!(over_edges.count(), 2, "{grad}");
}

/// Message passing's return sweep computes each layer's gathered rows and products again
/// inside the `with_acc` that scatters the rows' adjoints; they move out of it, `reuse`
/// finds them equal to the forward sweep's, and the gradient runs six products: the two
/// layers' forward products and, per layer, `δ·W` and `dW = δᵀ·h_src`.
#[test]
fn message_passing_reuses_the_forward_products() {
    let text = explain("tests/ad_apps/gnn.fut");
    let grad = explained_entry(&text, "gnn_grad");
    assert_eq!(gemms(grad), 6, "{text}");
}

/// What moves out of a `with_acc` for `reuse` and is not reused goes back, where it fuses
/// with the map that accumulates: the per-point gradient of a GMM-like energy keeps no
/// per-point `[k][d][d]` array (a `[n][k][d][d]` one when it stayed outside, 512 MB for
/// the GMM's sizes).
#[test]
fn unreused_statements_stay_in_their_with_acc() {
    let ir = common::dev_ir(
        &["--print-ir-after", "final-dce"],
        "tests/linalg/batched_matvec.fut",
    );
    let grad = entry_text(&ir, "energy_grad_x");
    // The types in the program text: `: ` then the dimensions, `[…]` each.
    let ranks: Vec<usize> = grad
        .split(": ")
        .skip(1)
        .map(|t| {
            t.split(['f', 'i', 'b', 'a'])
                .next()
                .unwrap_or("")
                .matches('[')
                .count()
        })
        .collect();
    assert!(
        ranks.contains(&3),
        "the per-point products' adjoint, [k][d][d]:\n{grad}"
    );
    assert!(ranks.iter().all(|&r| r < 4), "{grad}");
}

/// Causal attention's scores are dot products under a mask (`if j <= i then q_i·k_j
/// else -inf`): taken out of the branch before differentiation (`runic_ir::dots`), their
/// adjoints are not in a branch either, so every accumulator becomes a sum and the
/// gradient runs five GEMMs, as unmasked attention's does.
#[test]
fn causal_attention_adjoints_are_matrix_products() {
    assert_products_only("tests/ad_apps/attention.fut", "causal_grad", 5);
}

/// A masked score that is not a plain dot product stays in its branch, and so does the
/// keys' adjoint, an accumulator; an accumulator whose updates cannot be written out no
/// longer keeps the others of its `with_acc` from becoming sums: the values' adjoint
/// `Aᵀ·dO` (an `[n][dv]` accumulator before) is a sum over the queries.
#[test]
fn an_accumulator_built_in_a_branch_leaves_the_others_sums() {
    let before = common::ir_after("simplify", "masked_scores");
    let after = common::ir_after("acc-to-reduce", "masked_scores");
    let (keys, values) = ("acc([d_1][d_2], f64)", "acc([d_1][d_14], f64)");
    assert!(before.contains(keys) && before.contains(values), "{before}");
    assert!(after.contains(keys), "{after}");
    assert!(!after.contains(values), "{after}");
    let text = explain("tests/ad_rules/masked_scores.fut");
    // `dO·Vᵀ` and `Aᵀ·dO` (one before: the last was an accumulator; the primal's `A·V`
    // is not computed for the seed's shape check any more).
    assert_eq!(gemms(&text), 2, "{text}");
}

/// The gradient of a product written with indices with respect to its left operand: the
/// accumulator's update at `[i, l]` is independent of the middle map's `j`, so
/// sums-before-updates makes that map a sum inside the map over `l`, and the accumulator,
/// written once per element, the nest of those sums; that nest runs as a GEMM. (Before,
/// one scattered update per `(i, j, l)`: 584 ms for `[256][1024]·[1024][784]`, 4.8 now.)
/// The right operand's update is independent of the outer map instead, with another map
/// between: the two maps swap first (462 → 3.0 ms for the same shapes in `f32`).
#[test]
fn index_product_adjoint_is_a_product() {
    let ir = common::ir_after("loops-as-kernels", "index_product");
    let grad_a = entry_text(&ir, "grad_a");
    assert!(!grad_a.contains("with_acc"), "{grad_a}");
    let explained = explain("tests/ad_rules/index_product.fut");
    assert_eq!(
        gemms(explained_entry(&explained, "grad_a")),
        1,
        "{explained}"
    );
    // The right operand's (the update at `[l, j]` under the map over `i`, which swaps with
    // the map over `j` and becomes a sum inside the map over `l`), and dᵀ·x by indices
    // (the update at `[l, j]`, inner index first): both nests transposed.
    for entry in ["grad_b", "grad_d"] {
        let text = entry_text(&ir, entry);
        assert!(!text.contains("with_acc"), "{text}");
        assert!(text.contains("rearrange([1, 0]"), "{text}");
        assert_eq!(
            gemms(explained_entry(&explained, entry)),
            1,
            "{entry}: {explained}"
        );
    }
    let grad_b = entry_text(&ir, "grad_b");
    insta::assert_snapshot!(grad_b);
}

/// dᵀ·x written with columns sliced out: the adjoint of each column updated its
/// accumulator through a map over the slice, under the maps over j and k (2·10⁸ updates
/// for the MLP's shapes). Each operand's adjoint is now a plain nest, run as a GEMM.
#[test]
fn column_product_adjoints_are_products() {
    let ir = common::ir_after("loops-as-kernels", "column_product");
    let explained = explain("tests/ad_rules/column_product.fut");
    for entry in ["grad_d", "grad_x"] {
        let text = entry_text(&ir, entry);
        assert!(!text.contains("with_acc"), "{text}");
        assert!(!text.contains("[:, "), "no column is sliced: {text}");
        assert_eq!(
            gemms(explained_entry(&explained, entry)),
            1,
            "{entry}: {explained}"
        );
    }
}

/// Matrices of a stack read by index inside a map (`w[1]`, `w[g]`, all four gates in one
/// map): reverse mode updates the stack's adjoint at `[g, j, k]` from every row.
/// acc-to-reduce narrows each such accumulator to one accumulator per row of the stack it
/// updates; each becomes a sum over the rows (a GEMM), added into its row where the row is
/// in bounds (out of bounds the accumulator ignored the updates; equal rows add up). The
/// test blocks hold JAX's gradients, including two run-time indices that are equal.
#[test]
fn a_matrix_of_a_stack_gets_its_adjoint_as_a_sum_over_rows() {
    let before = ir_after("simplify", "stack_slices");
    let fixed_before = entry_text(&before, "fixed");
    assert_eq!(
        fixed_before.matches("update_acc(").count(),
        2,
        "{fixed_before}"
    );
    assert!(fixed_before.contains("[3i64, j_"), "{fixed_before}");
    let after = ir_after("acc-to-reduce", "stack_slices");
    let fixed = entry_text(&after, "fixed");
    insta::assert_snapshot!(fixed);
    assert!(!after.contains("with_acc("), "{after}");
    assert!(!after.contains("update_acc("), "{after}");
    // One check of the row and one replaced row per matrix read.
    assert_eq!(fixed.matches(" = if ").count(), 2, "{fixed}");
    assert_eq!(fixed.matches(" with [3i64] = ").count(), 1, "{fixed}");
    assert_eq!(fixed.matches(" with [1i64] = ").count(), 1, "{fixed}");
    assert_eq!(element_bodies(fixed).len(), 2, "{fixed}");
    let explained = explain("tests/ad_rules/stack_slices.fut");
    // The loss's two products and the two matrices' adjoints (x is not differentiated).
    assert_eq!(
        gemms(explained_entry(&explained, "fixed")),
        4,
        "{explained}"
    );
    assert_eq!(
        gemms(explained_entry(&explained, "chosen")),
        2,
        "{explained}"
    );
    assert_eq!(
        gemms(explained_entry(&explained, "gates")),
        8,
        "{explained}"
    );
    assert_eq!(gemms(explained_entry(&explained, "pair")), 4, "{explained}");
    let gates = entry_text(&after, "gates");
    for g in 0..4 {
        assert!(gates.contains(&format!(" with [{g}i64] = ")), "{gates}");
    }
}
