//! `jmp` (vector mode): the body is differentiated once, with `k` seeds. The tangent of a
//! value of type `[n]t` has type `[n][k]t` (seeds innermost, so indexing, in-place updates
//! and map rows carry over unchanged); the seeds arrive as `[k]..` rows and are transposed
//! in, the result tangents transposed back out. Each scalar rule becomes one `map` over
//! the seeds ([`Diff::combine`]). Loops, branches and straight-line code run their primal
//! once; SOACs without a loop inside run per seed (see [`super::map`]).
//!
//! Work: the primal's plus `k` times the tangent code's; span: the primal's (plus the
//! transpositions).

use super::basic::push_forward_sum;
use super::{bind_to, may_consume, Contribution, Diff, R};
use crate::alg::prim_of;
use crate::error::AdError;
use runic_ir::*;
use runic_prim::deriv::Partial;

/// The permutation of a rank `rank + 1` array that moves its outer dimension (the seeds,
/// as they arrive) innermost, where tangents keep them.
pub(super) fn seeds_innermost(rank: usize) -> Vec<usize> {
    (1..=rank).chain([0]).collect()
}

/// The inverse of [`seeds_innermost`]: the innermost dimension (the seeds) outermost.
pub(super) fn seeds_outermost(rank: usize) -> Vec<usize> {
    [rank].into_iter().chain(0..rank).collect()
}

impl Diff {
    /// `jmp`: the body differentiated once with vector tangents (see [`Diff::seeds`]). The
    /// seeds arrive as `[k]..` rows and are transposed to put the seed dimension innermost;
    /// the result tangents are transposed back.
    pub(super) fn vector_jvp(
        &mut self,
        b: &mut Builder,
        lam: Lambda,
        args: Vec<SubExp>,
        tangents: Vec<SubExp>,
        pat: &[Param],
    ) -> R<()> {
        let src = b.src.clone();
        let seeds: Vec<VName> = tangents
            .iter()
            .map(|t| {
                t.as_var()
                    .ok_or_else(|| AdError::internal("jmp seeds must be arrays"))
            })
            .collect::<R<_>>()?;
        let Some(&first) = seeds.first() else {
            return Err(AdError::unsupported("jmp of a function without parameters"));
        };
        crate::scope::check_seed_shapes(b, &args, &tangents, 1)?;
        let k = b.let_basic("seeds", BasicOp::ArraySize(first, 0))?;
        self.seeds = Some(k);
        for (p, a) in lam.params.iter().zip(&args) {
            b.let_pat(vec![p.clone()], Exp::Basic(BasicOp::SubExp(a.clone())));
        }
        // dp = transpose seeds (copied if the body may update it in place), of the tangent
        // type of p (the seeds' own type names other sizes).
        let consumes = may_consume(&lam.body);
        for (p, s) in lam.params.iter().zip(seeds) {
            let (rank, ty) = (p.ty.rank(), self.tan_ty(&p.ty));
            let mut t = s;
            if rank > 0 {
                let exp = Exp::Basic(BasicOp::Rearrange(seeds_innermost(rank), t));
                t = b.bind1("dseed", exp, ty.clone());
            }
            if consumes {
                t = b.bind1("dseed", Exp::Basic(BasicOp::Copy(t)), ty);
            }
            self.tans.insert(p.name, SubExp::Var(t));
        }
        let res = lam.body.result.clone();
        let tres = self.body(b, lam.body)?;
        let (pat, dpat) = pat.split_at(res.len());
        for (p, r) in pat.iter().zip(&res) {
            bind_to(b, p, r.clone(), &src);
        }
        // The tangents of the results, seeds outermost again (of the pattern's types).
        for ((dp, t), r) in dpat.iter().zip(tres).zip(&res) {
            let mut t = self.materialise(b, t, r)?;
            let rank = b.type_of(r)?.rank();
            if rank > 0 {
                let v = t
                    .as_var()
                    .ok_or_else(|| AdError::internal("an array tangent is a constant"))?;
                let exp = Exp::Basic(BasicOp::Rearrange(seeds_outermost(rank), v));
                t = SubExp::Var(b.bind1("dres", exp, dp.ty.clone()));
            }
            bind_to(b, dp, t, &src);
        }
        self.seeds = None;
        Ok(())
    }

    /// Sum the contributions `∂ᵢ·dxᵢ` (tangent arithmetic of type `rt`). In vector mode the
    /// tangents are arrays of seeds: one `map` over the seeds applies the scalar rule to
    /// each, reading the partials (primal values, computed once) as free variables.
    pub(super) fn combine(
        &mut self,
        b: &mut Builder,
        rt: PrimType,
        parts: Vec<Contribution>,
    ) -> R<Option<SubExp>> {
        let Some(k) = self.seeds.clone() else {
            return push_forward_sum(b, rt, parts);
        };
        // map (\dx₁ .. dxₘ -> Σᵢ ∂ᵢ·dxᵢ) dxs₁ .. dxsₘ, over the nonzero terms.
        let (mut params, mut arrs, mut terms) = (Vec::new(), Vec::new(), Vec::new());
        for (p, (x, dxs)) in parts {
            let Some(dxs) = dxs else { continue };
            if matches!(p, Partial::Zero) {
                continue;
            }
            // One seed's tangent: a row of the tangents.
            let dx = b.param("dx", b.type_of(&dxs)?.row());
            terms.push((p, (x, Some(SubExp::Var(dx.name)))));
            params.push(dx);
            arrs.push(
                dxs.as_var()
                    .ok_or_else(|| AdError::internal("a vector tangent is a constant"))?,
            );
        }
        match terms.as_slice() {
            [] => return Ok(None),
            // A lone identity partial passes the tangent through.
            [(Partial::One, (x, _))] if prim_of(b.names, x)? == rt => {
                return Ok(Some(SubExp::Var(arrs[0])))
            }
            _ => {}
        }
        let lam = b.lam_over(params, |b| {
            let t = push_forward_sum(b, rt, terms)?
                .ok_or_else(|| AdError::internal("nonzero terms summed to nothing"))?;
            Ok::<_, AdError>(vec![t])
        })?;
        Ok(Some(SubExp::Var(b.map("d", k, lam, arrs)?[0])))
    }
}
