//! Helpers both modes share: the variables an expression mentions (for dependence checks),
//! the run-time check that seeds have their values' shapes, and recognising a simple
//! binary operator.

use runic_ir::traverse::{add_uses, binders, Walk};
use runic_ir::*;
use std::collections::HashSet;

use crate::error::AdError;

/// Every variable mentioned anywhere in `x`: what it reads and what it binds (an
/// over-approximation of what it reads, which is what dependence checks need).
pub fn mentions<T: Walk + ?Sized>(x: &T, out: &mut HashSet<VName>) {
    add_uses(x, out);
    out.extend(binders(x));
}

/// A run-time size error unless every array seed (tangent or cotangent) has its value's
/// shape, after `skip` leading seed dimensions (the seeds' own dimension of `jmp`/`mjp`);
/// the message is §9.6's shape mismatch with run-time sizes, as in the interpreter.
pub fn check_seed_shapes(
    b: &mut Builder,
    values: &[SubExp],
    seeds: &[SubExp],
    skip: usize,
) -> Result<(), AdError> {
    for (a, t) in values.iter().zip(seeds) {
        let (Some(av), Some(tv)) = (a.as_var(), t.as_var()) else {
            continue;
        };
        let value_t = b.type_of(a)?;
        let (rank, Some(elem)) = (value_t.rank(), value_t.elem()) else {
            continue;
        };
        if rank == 0 {
            continue;
        }
        // The seeds' outer `skip` dimensions, then the value's.
        let dims = (0..skip).map(|d| (tv, d)).chain((0..rank).map(|d| (av, d)));
        let mut shape = Vec::new();
        for (arr, d) in dims {
            shape.push(b.let_basic("n", BasicOp::ArraySize(arr, d))?);
        }
        let type_text = (0..shape.len())
            .map(|k| format!("[{{{k}}}]"))
            .collect::<String>()
            + elem.name();
        let check = BasicOp::ShapeCheck {
            arr: tv,
            shape,
            type_text,
        };
        b.let_basic("ok", check)?;
    }
    Ok(())
}
