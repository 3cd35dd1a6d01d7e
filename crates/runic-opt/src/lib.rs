//! runic-opt: IR → IR simplification passes, one per module.
//!
//! - [`copy_prop`] (module `simplify`): copy propagation and constant folding;
//! - [`cse`]: common-subexpression elimination of pure operations;
//! - [`dce`]: dead-code elimination (operations that may fail are kept);
//! - [`sparse_adjoints`] (module `sparse`): a map over an array that is zero but at one
//!   index (the adjoint of `reduce min`/`max`) runs its lambda at that index only;
//! - [`sums_before_updates`] (module `acc_sums`): a map whose iterations all add into the
//!   same accumulator elements becomes a sum inside the map below it;
//! - [`acc_to_reduce`] (module `accs`): the adjoint of an array every iteration of a map
//!   reads, a reduction over the map instead of accumulator updates;
//! - [`hoist`]: invariant statements out of map lambdas;
//! - [`fuse`]: vertical fusion of a map into its only consumer (map, reduce or scan);
//! - [`chunk_iotas`] (module `iotas`): a reduction over `iota n` alone, as a map over
//!   chunks of a reduction over each chunk's range, so that no iota is built;
//! - [`split_contractions`] (module `contract`): dot-product nests apart from the scalar
//!   code after them and from each other, hoisted out of enclosing maps (with fission of a
//!   map before a nest that reads its earlier values), so that the executor can run them
//!   as (batched) matrix products; then `reuse`: maps equal to earlier ones, and values a
//!   later map recomputes that an earlier one stored, are not computed again;
//! - [`sum_batched_products`] (module `batch_sums`): a sum over a batch of matrix products
//!   computes each product's element in place, as one nest the executor runs as
//!   accumulating GEMMs;
//! - [`transposed_operands`] (module `transposed`): the maps of a matrix product that take
//!   rows of `transpose b` take columns of `b` instead, so that no transposed copy is made;
//! - [`stencil_rows`] (module `stencils`): a map over a range of indices that reads free
//!   arrays at the index plus constant offsets takes slices of those arrays as inputs
//!   (guarded: when a slice would be out of bounds, the original map runs);
//! - [`copies`]: elision of copies made for consuming operations once the original is dead;
//! - [`loops_as_kernels`] (module `loop_kernels`): a `for` loop without SOACs in a body the
//!   executor evaluates becomes the one element of a map, which runic-jit compiles.
//!
//! There is no inlining pass: lowering already inlines every call (the language has no
//! recursion), so each entry point is one IR function without `Apply`.
//!
//! [`simplify`] runs them to a small fixed number of rounds; [`pipeline`] lists the passes
//! by name for the command line's `--list-passes` / `--print-ir-after`.

pub mod acc_sums;
pub mod accs;
pub mod batch_sums;
pub mod boundaries;
pub mod checks;
pub mod contract;
pub mod copies;
pub mod cse;
pub mod dce;
pub mod fuse;
pub mod hoist;
pub mod iotas;
mod linear;
pub mod loop_kernels;
mod reuse;
pub mod simplify;
pub mod sparse;
pub mod stencils;
pub mod transposed;

pub use acc_sums::sums_before_updates;
pub use accs::acc_to_reduce;
pub use batch_sums::sum_batched_products;
pub use boundaries::split_boundaries;
pub use contract::split_contractions;
pub use copies::elide_copies;
pub use cse::{cse, drop_repeated_checks};
pub use dce::dce;
pub use fuse::fuse;
pub use hoist::hoist;
pub use iotas::chunk_iotas;
pub use loop_kernels::loops_as_kernels;
use runic_ir::Prog;
pub use simplify::{copy_prop, inline_replicates};
pub use sparse::sparse_adjoints;
pub use stencils::stencil_rows;
pub use transposed::transposed_operands;

/// Copy propagation, constant folding, CSE and DCE, twice.
pub fn simplify(prog: Prog) -> Prog {
    let mut p = prog;
    for _ in 0..2 {
        p = dce(cse(copy_prop(p)));
    }
    p
}

/// Replaces each statement of `body` for which `rewrite` (given the statements before it
/// and the statement) returns statements, in order, and goes on after what it put in;
/// whether anything was replaced.
pub(crate) fn expand_stms(
    body: &mut runic_ir::Body,
    mut rewrite: impl FnMut(&[runic_ir::Stm], &runic_ir::Stm) -> Option<Vec<runic_ir::Stm>>,
) -> bool {
    let mut changed = false;
    let mut i = 0;
    while i < body.stms.len() {
        match rewrite(&body.stms[..i], &body.stms[i]) {
            Some(stms) => {
                let n = stms.len();
                body.stms.splice(i..=i, stms);
                i += n;
                changed = true;
            }
            None => i += 1,
        }
    }
    changed
}

/// Runs `rewrite` on the bodies of `s`'s branches or loop (the bodies the executor runs at
/// the level of `s`, not those of lambdas), with the name source.
pub(crate) fn rewrite_nested_bodies(
    s: &mut runic_ir::Stm,
    ns: &mut runic_ir::NameSource,
    rewrite: &mut impl FnMut(&mut runic_ir::Body, &mut runic_ir::NameSource),
) {
    match &mut s.exp {
        runic_ir::Exp::If {
            then_body,
            else_body,
            ..
        } => {
            rewrite(then_body, ns);
            rewrite(else_body, ns);
        }
        runic_ir::Exp::Loop { body, .. } => rewrite(body, ns),
        _ => {}
    }
}

/// Runs `rewrite` on the body of every function, with the program's name source (the
/// types of all binders recorded first, so that a rewrite can look them up).
pub(crate) fn rewrite_bodies(
    mut prog: Prog,
    mut rewrite: impl FnMut(&mut runic_ir::Body, &mut runic_ir::NameSource),
) -> Prog {
    prog.record_types();
    let mut ns = std::mem::take(&mut prog.names);
    for f in &mut prog.funs {
        rewrite(&mut f.body, &mut ns);
    }
    prog.names = ns;
    prog
}

/// A pass: a whole-program transformation.
pub type Pass = fn(Prog) -> Prog;

/// The passes by name, in the order the compiler runs them.
pub fn pipeline() -> Vec<(&'static str, Pass)> {
    vec![
        ("copy-prop", copy_prop as Pass),
        ("cse", cse),
        ("dce", dce),
        ("simplify", simplify),
        ("sparse-adjoints", sparse_adjoints),
        ("acc-to-reduce", acc_to_reduce),
        ("hoist", hoist),
        ("fuse", fuse),
        ("chunk-iotas", chunk_iotas),
        ("split-contractions", split_contractions),
        ("drop-repeated-checks", drop_repeated_checks),
        ("drop-proven-checks", checks::drop_proven_checks),
        // What fission left beside the contractions (an epilogue and its consumers), now
        // that the checks the entry point's assertions prove no longer make it fallible.
        ("fuse-after-split", fuse),
        ("inline-replicates", inline_replicates),
        ("elide-copies", elide_copies),
        // The shells hoisting, splitting and dropping checks emptied (maps left with no
        // results, which still ran per element), and copies.
        ("simplify-late", simplify),
        // Once a scalar adjoint's replicate is read as the scalar and has gone.
        ("sums-before-updates", sums_before_updates),
        // Once only the sum reads a batch of products: the product's element put into it.
        ("sum-batched-products", sum_batched_products),
        // After the nests are final; the transposes it leaves unread die in the DCE.
        ("transposed-operands", transposed_operands),
        // Once the maps are final; before `stencil-rows`, which then slices the interior's
        // reads.
        ("split-boundaries", split_boundaries),
        // Once the maps are final: the iotas it no longer reads die in the DCE.
        ("stencil-rows", stencil_rows),
        ("final-dce", dce),
        // Last, so that no pass looks into the maps it makes.
        ("loops-as-kernels", loops_as_kernels),
    ]
}
