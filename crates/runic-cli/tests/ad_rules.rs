//! The reverse-mode rules chosen for the programs in `tests/ad_rules/`, seen in the output
//! of `runic dev --backend ir --print-ir-after ad` (the "symbolic view" of the derivative):
//! a snapshot of the whole derivative program, and assertions on the parts that show which
//! rule was used (so a regression to the general rules fails even if the snapshot is
//! accepted carelessly).

mod common;

fn after_ad(name: &str) -> String {
    common::ir_after("ad", name)
}

/// The number of SOACs of a kind (`scan`, `reduce`, `hist`, …) in the program text
/// (`reduce` also counts `reduce_comm`).
fn count(text: &str, what: &str) -> usize {
    text.matches(&format!(" = {what}(")).count() + text.matches(&format!(" = {what}_comm(")).count()
}

#[test]
fn reduce_add_replicates_the_cotangent() {
    let ir = after_ad("reduce_add");
    insta::assert_snapshot!(ir);
    assert_eq!(count(&ir, "scan"), 0);
    assert_eq!(count(&ir, "reduce"), 1, "only the primal reduce");
    assert!(ir.contains("replicate("));
}

#[test]
fn reduce_mul_counts_zeros() {
    let ir = after_ad("reduce_mul");
    insta::assert_snapshot!(ir);
    assert_eq!(
        count(&ir, "scan"),
        0,
        "no exclusive scans of the general rule"
    );
    // The primal, the product of the non-zeros and the number of zeros, all three in the
    // forward sweep (before the cotangent is seeded).
    assert_eq!(count(&ir, "reduce"), 3);
    assert!(ir.contains("{nz_"));
    let seeded = ir.find(" = map(").expect("the return sweep's map");
    assert!(
        ir.rfind("{nz_").unwrap() < seeded,
        "saved by the forward sweep"
    );
}

#[test]
fn reduce_min_finds_the_first_argmin() {
    let ir = after_ad("reduce_min");
    insta::assert_snapshot!(ir);
    assert_eq!(count(&ir, "scan"), 0);
    // The forward sweep keeps the primal reduce (it runs in vector lanes) and finds the
    // index by a second one, an integer `min` over the positions holding the result; the
    // return sweep reads that index instead of searching again.
    assert_eq!(count(&ir, "reduce"), 2, "the value, then its index");
    assert!(ir.contains("= Min(x_3, x_4)"), "the primal reduce");
    assert!(
        ir.contains("Eq(x_10, red_6)"),
        "positions holding the minimum"
    );
    assert!(
        ir.contains("{arg_18 : i64} = reduce_comm"),
        "the first of them"
    );
    let seeded = ir
        .find("with [t_20]")
        .expect("the cotangent goes to that index");
    assert!(ir.find("{arg_18").unwrap() < seeded);
}

#[test]
fn scan_add_is_a_reversed_scan() {
    let ir = after_ad("scan_add");
    insta::assert_snapshot!(ir);
    // The primal scan and one scan of the reversed cotangents; no Jacobian-pair scan.
    assert_eq!(count(&ir, "scan"), 2);
    assert!(!ir.contains("{z_"));
}

#[test]
fn reduce_by_index_min_tracks_the_first_position() {
    let ir = after_ad("rbi_min");
    insta::assert_snapshot!(ir);
    assert!(ir.contains("{first_"), "the min-position histogram");
    assert!(!ir.contains("sorted"), "not the general, sort-based rule");
}

#[test]
fn map_with_a_free_array_uses_an_accumulator() {
    let ir = after_ad("map_free_array");
    insta::assert_snapshot!(ir);
    assert!(ir.contains("with_acc("));
    assert!(ir.contains("update_acc("));
}

#[test]
fn scan_with_a_block_diagonal_jacobian_uses_one_recurrence_per_block() {
    let ir = after_ad("scan_blocks");
    insta::assert_snapshot!(ir);
    // The primal scan and two 1×1 Jacobian-pair scans (each of a vector and a matrix
    // entry), not one 2×2 scan of six arrays.
    assert_eq!(count(&ir, "scan"), 3);
    assert_eq!(ir.matches("{z_").count(), 2);
}

#[test]
fn jmp_runs_loops_and_branches_once_with_vector_tangents() {
    let ir = after_ad("jmp_once");
    insta::assert_snapshot!(ir);
    // The top-level loop, the branch and the map holding a loop appear once each (the
    // map's loop once inside it), carrying arrays of tangents, one per seed.
    assert_eq!(ir.matches("= loop {").count(), 2);
    let tangent_ifs = ir
        .lines()
        .filter(|l| l.contains(" = if ") && l.contains("[seeds_"));
    assert_eq!(tangent_ifs.count(), 1);
    assert!(ir.contains("dacc_") && ir.contains(": [seeds_"));
    assert!(ir.contains("dmapped_") && ir.contains("[2i64][seeds_"));
    // No map over the seeds re-runs a loop, a branch or the product's gradient (its
    // zero-counting reduces): per seed, the reduce's tangent is one dot product.
    for map in ir.split(" = map(seeds_").skip(1) {
        let lambda = &map[..map.find("\n  }").unwrap_or(map.len())];
        assert!(!lambda.contains("loop {") && !lambda.contains("{nz_"));
        assert!(!lambda
            .lines()
            .any(|l| l.contains(" = if ") && l.contains("[seeds_")));
    }
    assert!(ir.contains("{nz_"));
}

#[test]
fn jvp_of_an_accumulator_adds_a_tangent_accumulator() {
    let ir = after_ad("hvp_acc");
    insta::assert_snapshot!(ir);
    assert_eq!(ir.matches("with_acc(").count(), 1);
    // Two primal updates, each followed by the update of the tangent accumulator.
    assert_eq!(ir.matches("update_acc(acc_").count(), 2);
    assert_eq!(ir.matches("update_acc(dacc_").count(), 2);
}

#[test]
fn vjp_of_an_accumulator_reads_the_destination_adjoint() {
    let ir = after_ad("hvp_rev_acc");
    insta::assert_snapshot!(ir);
    // The inner gradient's accumulator (run once, in the forward sweep) and the outer
    // gradient's for the free array; the return sweep adds no accumulator of its own.
    assert_eq!(ir.matches("with_acc(").count(), 2);
    let sweep = &ir[ir.rfind("with_acc(").unwrap()..];
    // Each of the two updates reads the cotangent v at its index, guarded by a bounds test.
    assert_eq!(sweep.matches("= v_").count(), 2);
    assert_eq!(sweep.matches("LogAnd(").count(), 2);
    assert_eq!(sweep.matches("update_acc(").count(), 2);
}

#[test]
fn a_loop_whose_array_changes_shape_keeps_a_flat_tape() {
    let ir = after_ad("loop_grow");
    insta::assert_snapshot!(ir);
    // Per level of the strip-mined loop: sizes recorded by a first run, offsets from a
    // scan, one flat tape written and read at those offsets.
    assert_eq!(count(&ir, "scan"), 2);
    assert_eq!(ir.matches("{offsets_").count(), 2);
    assert!(ir.contains("with [off_"));
    assert!(!ir.contains("changes shape"), "no assertion left");
    // The backward loops carry the size of the array's adjoint before the adjoint.
    assert_eq!(ir.matches("= loop {size_").count(), 2);
}

#[test]
fn a_strip_mined_loop_keeps_its_last_chunk() {
    let ir = after_ad("loop_last_chunk");
    insta::assert_snapshot!(ir);
    // The forward sweep's inner loop stores its states into one chunk of storage, carried
    // by the outer loop; the return sweep's first chunk reads it back (a branch on the
    // backward counter) and only the other chunks run the inner loop again.
    let forward = &ir[..ir.find("adj_").unwrap()];
    assert!(forward.contains("= scratch(f64, [chunk_"));
    assert!(ir.contains("= Eq(k_") && ir.contains("= chunk_"));
    // The kept chunk is the tape as it is (a chunk's rows, the first `count` filled): no
    // slice, so that DCE can drop a kept tape the return sweep does not read.
    assert!(!ir.contains("[0i64:count_"));
    assert!(
        ir.lines()
            .any(|l| l.trim_start().starts_with("in {loop_") && l.contains(", chunk_")),
        "{ir}"
    );
    // Loops: forward outer and inner; backward outer, the other chunks' inner re-run, and
    // the inner backward loop.
    assert_eq!(ir.matches("= loop {").count(), 5);
}

#[test]
fn a_loop_of_element_updates_restores_its_array() {
    let ir = after_ad("loop_restore");
    insta::assert_snapshot!(ir);
    let backward_at = ir.find("= replicate([d_1], 1f64)").unwrap();
    let (forward, backward) = ir.split_at(backward_at);
    // Not strip-mined, and no tape of whole arrays: per iteration, the position updated
    // (i64) and the element it overwrites (f64), read before the update.
    assert!(!ir.contains("chunk_"), "{ir}");
    assert_eq!(forward.matches("= scratch(").count(), 2);
    assert!(forward.contains("= scratch(i64, [b_7])") && forward.contains("= scratch(f64, [b_7])"));
    let old = forward.find("= cp_19[idx_10]").expect("the old element");
    assert!(old < forward.find("= cp_19 with [idx_10]").unwrap());
    // The return sweep carries the array from the loop's result and writes the old
    // element back at the stored position before re-running the body on it.
    assert!(
        backward.contains("restored_58 : [d_1]f64 = loop_21"),
        "{backward}"
    );
    let restore = backward.find("= restored_58 with [i_61] = old_62").unwrap();
    assert!(restore < backward.find("= range_8[i_43]").unwrap());
    assert!(backward.contains("in {adj_77, acc_44}"));
}

#[test]
fn a_loop_stores_its_products_and_reads_them_back() {
    let ir = after_ad("loop_stored");
    insta::assert_snapshot!(ir);
    let forward = &ir[..ir.find("= replicate([d_1], 1f64)").unwrap()];
    let backward = &ir[ir.find("= replicate([d_1], 1f64)").unwrap()..];
    // The forward sweep's inner loop writes each iteration's product `W h` (a map with an
    // inner reduction) into a chunk of storage of its own, beside the states.
    assert_eq!(forward.matches("= scratch(f64, [chunk_").count(), 2);
    let product = forward.find("= reduce_comm(").unwrap();
    assert!(forward[product..].contains("with [j_") && forward[product..].contains("] = mapped_"));
    // The return sweep re-runs the chunks it did not keep (storing the products again), but
    // its innermost loop, the one that propagates adjoints, computes no product: it reads
    // the stored one. Nor does it compute `tanh` again: the map of `tanh` is the next
    // state, and its derivative reads the value (a residual) from the tape's next row.
    let innermost = &backward[backward.rfind("= loop {adj_").unwrap()..];
    assert_eq!(count(innermost, "reduce"), 0);
    assert!(innermost.contains("= tape_") && !innermost.contains("Tanh("));
    assert!(innermost.contains("res_"));
}

#[test]
fn a_loop_reads_the_next_state_from_its_tape() {
    // The LSTM-like cell: `c'` is a map whose result is the next state, which the return
    // sweep takes from the tape's next row (the loop's result in its last iteration)
    // instead of recomputing it before its own return sweep; `tanh c'`'s adjoint reads it.
    let ir = common::ir_after("ad", "../ad_rev/loop_stored");
    let cell = &ir[ir.find("entry \"cell\"").unwrap()..];
    let cell = &cell[..cell.find("entry \"while_rnn\"").unwrap_or(cell.len())];
    let backward = &cell[cell.rfind("= loop {adj_").unwrap()..];
    assert!(backward.contains("= Add(b_") && backward.contains("= Lt("));
    let restored = &backward[backward.find(" = if b_").unwrap()..];
    assert!(restored.contains("next_") && restored.contains("} else {\n        in {inner_"));
}

#[test]
fn a_loop_whose_state_may_change_shape_still_stores_its_products() {
    // `rnn` starts from an argument whose size the loop cannot tell from that of `W h`:
    // its state goes to a flat tape, the product (of a fixed shape) to a tape of rows that
    // the innermost return sweep reads.
    let ir = common::ir_after("ad", "../ad_rev/loop_stored");
    let rnn = &ir[..ir.find("entry \"consumed\"").unwrap()];
    assert!(rnn.contains("= scratch(i64, ["), "the flat tape's sizes");
    let backward = &rnn[rnn.rfind("= loop {").unwrap()..];
    assert!(backward.contains(": [d_1]f64} = tape_"), "{backward}");
    assert_eq!(count(backward, "reduce"), 0);
}

#[test]
fn a_gate_in_a_loop_keeps_its_residuals_in_the_tape() {
    let ir = after_ad("residuals");
    insta::assert_snapshot!(ir);
    let forward = &ir[..ir.find("= replicate([d_").unwrap()];
    let backward = &ir[ir.rfind("= loop {adj_").unwrap()..];
    // The forward sweep's gate map also returns e^{-a} and tanh c (two arrays besides its
    // result), written to the tape.
    let gate = forward
        .lines()
        .find(|l| l.contains("= map(") && l.contains(", res_"))
        .expect("a map returning residuals");
    assert_eq!(gate.matches("res_").count(), 2, "{gate}");
    assert!(forward.contains("Exp(") && forward.contains("Tanh("));
    assert_eq!(
        forward.matches("] = res_").count(),
        2,
        "the residuals go to the tape"
    );
    // The return sweep reads them: no transcendental function is computed again.
    assert!(
        !backward.contains("Exp(") && !backward.contains("Tanh("),
        "{backward}"
    );
    assert!(backward.contains("res_"));
}

#[test]
fn a_relu_adjoint_reads_the_layers_output() {
    let ir = after_ad("relu");
    insta::assert_snapshot!(ir);
    // The hidden layer of relu_rows_grad: the map whose lambda computes `max 0 x`.
    let rows = &ir[ir.find("entry \"relu_rows_grad\"").unwrap()..];
    // The return sweep starts where the loss's adjoint is seeded: the first `replicate`
    // of ones.
    let split = rows
        .find("= replicate([d_")
        .filter(|&at| {
            rows[at..]
                .lines()
                .next()
                .unwrap_or("")
                .ends_with("], 1f32)")
        })
        .unwrap_or_else(|| panic!("the seed: {rows}"));
    let (forward, backward) = rows.split_at(split);
    let relu = forward[..forward.find("Max(0f32").unwrap()]
        .lines()
        .rfind(|l| l.starts_with("  let {") && l.contains("= map("))
        .expect("the layer's map");
    let name = &relu["  let {".len()..relu.find(" : ").unwrap()];
    // Its adjoint reads its result (`r == 0`) from the layer's output array, and does not
    // compute `max` again from the layer's input.
    assert!(!backward.contains("Max("), "{backward}");
    assert!(
        backward.contains("Eq(b_") && backward.contains("res_"),
        "{backward}"
    );
    assert!(
        backward.contains(&format!(", {name})")),
        "{name} in {backward}"
    );
}

#[test]
fn a_log_sum_exp_adjoint_reads_the_rows_exps() {
    let ir = after_ad("logsumexp_rows");
    insta::assert_snapshot!(ir);
    // One `exp` in the primal's forward sweep, one in the row's forward sweep that its
    // return sweep runs again; the adjoint of `exp` reads the latter's result array.
    assert_eq!(ir.matches("Exp(").count(), 2, "{ir}");
    let sweep = &ir[ir.find("let {adj_").unwrap()..];
    let again = sweep[..sweep.find("Exp(").unwrap()]
        .lines()
        .rfind(|l| l.trim_start().starts_with("let {") && l.contains("= map("))
        .expect("the row's map of exps");
    let name = &again[again.find("let {").unwrap() + "let {".len()..again.find(" : ").unwrap()];
    let after = &sweep[sweep.find(again).unwrap() + again.len()..];
    assert!(
        after.matches(name).count() >= 2,
        "{name} read by the sum and by the adjoint: {after}"
    );
}

#[test]
fn a_histogram_of_pairs_is_one_histogram_per_component() {
    let ir = after_ad("hist_pairs");
    insta::assert_snapshot!(ir);
    // (+, +) and (+, max): a gather per sum, the bins' winners for the max; the general
    // rule would sort the indices and run segmented scans.
    assert_eq!(count(&ir, "scan"), 0, "{ir}");
    assert_eq!(count(&ir, "scatter"), 0, "{ir}");
    // The max component's rule: a `min` histogram of the winning positions.
    assert!(ir.contains("Min("), "{ir}");
}

#[test]
fn a_histogram_of_row_sums_gathers_rows() {
    let ir = after_ad("hist_rows");
    insta::assert_snapshot!(ir);
    // The primal histograms keep their rows (no transposition into histograms of
    // columns), and each value's adjoint is a row of the result's, read once per value.
    assert!(!ir.contains("rearrange("), "{ir}");
    assert_eq!(count(&ir, "hist"), 3, "only the primal histograms:\n{ir}");
    assert_eq!(count(&ir, "scan"), 0, "{ir}");
    // rows_grad: the gather is a map over the indices whose element is a row of `s`.
    let rows = &ir[ir.find("entry \"rows_grad\"").unwrap()..];
    let rows = &rows[..rows.find("\nentry ").unwrap_or(rows.len())];
    assert!(rows.contains(": [d_6]f64} = s_7[x_"), "{rows}");
}

/// `size(a, k)` is the dimension `a`'s type gives (copy propagation), so an array need
/// not exist to be measured: the vjp of a scan checks its seed's shape against the
/// primal's, and once kept the whole primal scan alive for it.
#[test]
fn a_shape_check_does_not_keep_the_primal() {
    let ir = common::ir_after("final-dce", "scan_add");
    assert!(!ir.contains("size(red"), "{ir}");
    assert_eq!(count(&ir, "scan"), 1, "only the adjoint's scan: {ir}");
}
