//! `jmp` (vector mode): the body is differentiated once, with `k` seeds. The tangent of a
//! value of type `[n]t` has type `[n][k]t` (seeds innermost, so indexing, in-place updates
//! and map rows carry over unchanged); the seeds arrive as `[k]..` rows and are transposed
//! in, the result tangents transposed back out. Each scalar rule becomes one `map` over
//! the seeds ([`Diff::combine`]). Loops, branches and straight-line code run their primal
//! once; SOACs without a loop inside run per seed (see [`super::map`]).
//!
//! Work: the primal's plus `k` times the tangent code's; span: the primal's (plus the
//! transpositions).

use super::{bind_results, copy_stm, may_consume, Contribution, Diff, R};
use crate::alg::prim_of;
use crate::error::AdError;
use runic_ir::*;
use runic_prim::deriv::Partial;

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
        let n = lam.ret.len();
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
        let k = self.bind(
            b,
            "seeds",
            Exp::Basic(BasicOp::ArraySize(first, 0)),
            Type::Prim(PrimType::I64),
        );
        self.seeds = Some(SubExp::Var(k));
        for (p, a) in lam.params.iter().zip(&args) {
            b.names.set_type(p.name, p.ty.clone());
            b.add(copy_stm(
                p.clone(),
                Exp::Basic(BasicOp::SubExp(a.clone())),
                &src,
            ));
        }
        let consumes = may_consume(&lam.body);
        for (p, s) in lam.params.iter().zip(seeds) {
            let rank = p.ty.rank();
            let ty = self.tan_ty(&p.ty);
            let mut t = s;
            if rank > 0 {
                let perm = (1..=rank).chain([0]).collect();
                t = self.bind(
                    b,
                    "dseed",
                    Exp::Basic(BasicOp::Rearrange(perm, t)),
                    ty.clone(),
                );
            }
            if consumes {
                t = self.bind(b, "dseed", Exp::Basic(BasicOp::Copy(t)), ty);
            }
            self.tans.insert(p.name, SubExp::Var(t));
        }
        let res = lam.body.result.clone();
        let tres = self.body(b, lam.body)?;
        bind_results(b, &pat[..res.len()], &res, &src);
        for (i, (t, r)) in tres.into_iter().zip(&res).enumerate() {
            let mut t = self.materialise(b, t, r)?;
            let rank = b.type_of(r)?.rank();
            if rank > 0 {
                let v = t
                    .as_var()
                    .ok_or_else(|| AdError::internal("an array tangent is a constant"))?;
                let perm = [rank].into_iter().chain(0..rank).collect();
                let out_ty = pat[n + i].ty.clone();
                let exp = Exp::Basic(BasicOp::Rearrange(perm, v));
                t = SubExp::Var(self.bind(b, "dres", exp, out_ty));
            }
            b.add(copy_stm(
                pat[n + i].clone(),
                Exp::Basic(BasicOp::SubExp(t)),
                &src,
            ));
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
            return self.combine_scalar(b, rt, parts);
        };
        let mut mb = Builder::new(b.names);
        mb.src = b.src.clone();
        let mut params = Vec::new();
        let mut arrs = Vec::new();
        let mut per_seed = Vec::new();
        for (p, (x, dx)) in parts {
            let Some(dx) = dx else { continue };
            if matches!(p, Partial::Zero) {
                continue;
            }
            let dx = dx
                .as_var()
                .ok_or_else(|| AdError::internal("a vector tangent is a constant"))?;
            let in_t = prim_of(mb.names, &x)?;
            let e = self.fresh_param(&mut mb, "dx", &Type::Prim(in_t));
            per_seed.push((p, (x, Some(SubExp::Var(e.name)))));
            params.push(e);
            arrs.push(dx);
        }
        // A lone identity partial passes the tangent through.
        if let [(Partial::One, (x, _))] = per_seed.as_slice() {
            if prim_of(mb.names, x)? == rt {
                return Ok(Some(SubExp::Var(arrs[0])));
            }
        }
        let Some(t) = self.combine_scalar(&mut mb, rt, per_seed)? else {
            return Ok(None);
        };
        let lam = Lambda {
            id: runic_ir::LamId::fresh(),
            params,
            body: Body {
                stms: mb.take_stms(),
                result: vec![t],
            },
            ret: vec![Type::Prim(rt)],
        };
        drop(mb);
        let ty = self.tan_ty(&Type::Prim(rt));
        let map = Exp::Soac(Soac::Map { w: k, lam, arrs });
        Ok(Some(SubExp::Var(self.bind(b, "d", map, ty))))
    }
}
