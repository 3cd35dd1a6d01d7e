//! Dead-code elimination: statements whose results are unused and that cannot fail or
//! have effects are removed (failing operations stay, so run-time errors are kept).

use runic_ir::traverse::{
    add_uses, any_exp, free_vars, uses, walk_lambda_mut, walk_stm_mut, VisitorMut,
};
use runic_ir::*;
use std::collections::HashSet;

pub fn dce(mut prog: Prog) -> Prog {
    for f in &mut prog.funs {
        let mut d = Dce {
            sizes: known_sizes(f),
            ..Dce::default()
        };
        f.ret.iter().for_each(|t| add_uses(t, &mut d.live));
        d.body(&mut f.body);
    }
    prog
}

/// Removes the dead statements of a lambda's body (at every depth).
pub(crate) fn dce_lambda(l: &mut Lambda) {
    Dce::default().lambda(l)
}

/// Operations that can be dropped when unused: basic operations that cannot fail, and
/// branches and SOACs made only of such operations (at any depth).
pub fn removable(e: &Exp) -> bool {
    removable_given(e, &HashSet::new())
}

/// [`removable`], where the variables `sizes` are known to hold sizes of existing arrays
/// ([`known_sizes`]): `iota` and `replicate` of such sizes cannot fail either.
pub(crate) fn removable_given(e: &Exp, sizes: &HashSet<VName>) -> bool {
    !any_exp(e, |x| !removable_itself(x, sizes))
}

/// Whether `e`, not counting what is nested in it, can be dropped when unused.
fn removable_itself(e: &Exp, sizes: &HashSet<VName>) -> bool {
    let scalar = regular_rows;
    if valid_array(e, sizes) {
        return true;
    }
    match e {
        Exp::If { .. } => true,
        // Histograms and scatters check the shapes of their values at run time, and so does
        // a map or fold whose lambda returns arrays of sizes it computes itself (rows of
        // different shapes): kept.
        Exp::Soac(s) => match s {
            Soac::Map { lam, .. } => scalar(lam),
            Soac::Reduce { pre, lam, .. } | Soac::Scan { pre, lam, .. } => {
                scalar(lam) && pre.as_ref().is_none_or(scalar)
            }
            Soac::Hist { .. } | Soac::Scatter { .. } => false,
        },
        Exp::Basic(op) => match op {
            BasicOp::SubExp(_)
            | BasicOp::UnOp(..)
            | BasicOp::Convert(..)
            | BasicOp::TernOp(..)
            | BasicOp::ArraySize(..)
            | BasicOp::Copy(_)
            | BasicOp::Rearrange(..)
            | BasicOp::ArrayLit(..)
            | BasicOp::Scratch(..) => true,
            BasicOp::BinOp(o, _, _) => !matches!(
                o,
                BinOp::Div | BinOp::Mod | BinOp::Quot | BinOp::Rem | BinOp::Pow
            ),
            _ => false,
        },
        _ => false,
    }
}

/// Whether every result of `l` is a scalar or an array whose sizes are constants or
/// variables from outside the lambda: then all its rows have one shape, and a SOAC over
/// it cannot fail for rows of different shapes.
fn regular_rows(l: &Lambda) -> bool {
    let scalar = |t: &Type| matches!(t, Type::Prim(_));
    if l.ret.iter().all(scalar) {
        return true;
    }
    let inside = runic_ir::traverse::binders(l);
    l.ret.iter().all(|t| match t {
        Type::Prim(_) => true,
        Type::Array { shape, .. } => shape.iter().all(|d| match d {
            SubExp::Const(_) => true,
            SubExp::Var(v) => !inside.contains(v),
        }),
        Type::Acc { .. } => false,
    })
}

/// Removes dead statements from every body at every depth. Each body is cleaned from its
/// last statement up; the bodies nested in a statement are cleaned once the statement is
/// known to stay (and after its dead map results are dropped), each from its own live set.
#[derive(Default)]
struct Dce {
    /// Variables known to hold sizes of existing arrays (so `iota` of them cannot fail).
    sizes: HashSet<VName>,
    /// What is live at the end of the next body visited: its function's or lambda's result
    /// types (taken by [`VisitorMut::body`], so that bodies nested in it start empty).
    live: HashSet<VName>,
}

impl VisitorMut for Dce {
    fn lambda(&mut self, l: &mut Lambda) {
        l.ret.iter().for_each(|t| add_uses(t, &mut self.live));
        walk_lambda_mut(self, l)
    }

    fn body(&mut self, b: &mut Body) {
        let mut live = std::mem::take(&mut self.live);
        add_uses(&b.result, &mut live);
        let mut kept = Vec::new();
        for mut s in std::mem::take(&mut b.stms).into_iter().rev() {
            let used = s.pat.iter().any(|p| live.contains(&p.name));
            if !used && removable_given(&s.exp, &self.sizes) {
                continue;
            }
            drop_dead_map_results(&mut s, &live);
            drop_dead_reduction_results(&mut s, &live, &self.sizes);
            walk_stm_mut(self, &mut s);
            add_uses(&s, &mut live);
            kept.push(s);
        }
        kept.reverse();
        b.stms = kept;
    }
}

/// A map's unused results are not computed (its lambda stops returning them, and what
/// computed only them dies in turn).
fn drop_dead_map_results(s: &mut Stm, live: &HashSet<VName>) {
    let Exp::Soac(Soac::Map { lam, .. }) = &mut s.exp else {
        return;
    };
    let in_types = uses(&s.pat);
    let keep: Vec<bool> = s
        .pat
        .iter()
        .map(|p| live.contains(&p.name) || in_types.contains(&p.name))
        .collect();
    if keep.iter().all(|k| *k) || keep.len() != lam.body.result.len() {
        return;
    }
    filter(&mut s.pat, &keep);
    filter(&mut lam.body.result, &keep);
    filter(&mut lam.ret, &keep);
}

/// A reduction's (or scan's) unused results are not computed when the operator's other
/// results do not read them: the component goes from the neutral elements, the operator
/// (both its parameters and its result), the fused `pre` lambda's results, and the inputs
/// only it read. Forward mode over a `reduce min` carries the minimum's tangent that way,
/// although a Newton step only reads the index of the minimum.
fn drop_dead_reduction_results(s: &mut Stm, live: &HashSet<VName>, sizes: &HashSet<VName>) {
    let in_types = uses(&s.pat);
    let (Exp::Soac(Soac::Reduce {
        arrs,
        pre,
        lam,
        neutral,
        ..
    })
    | Exp::Soac(Soac::Scan {
        arrs,
        pre,
        lam,
        neutral,
        ..
    })) = &mut s.exp
    else {
        return;
    };
    let n = neutral.len();
    if s.pat.len() != n || lam.params.len() != 2 * n || lam.body.result.len() != n {
        return;
    }
    let mut keep: Vec<bool> = s
        .pat
        .iter()
        .map(|p| live.contains(&p.name) || in_types.contains(&p.name))
        .collect();
    // The operator's results that the kept ones read, to a fixed point.
    loop {
        let read = operator_reads(lam, &keep, sizes);
        let grown: Vec<bool> = (0..n)
            .map(|k| {
                keep[k]
                    || read.contains(&lam.params[k].name)
                    || read.contains(&lam.params[n + k].name)
            })
            .collect();
        if grown == keep {
            break;
        }
        keep = grown;
    }
    if keep.iter().all(|k| *k) || !keep.contains(&true) {
        return;
    }
    let mut params_keep = keep.clone();
    params_keep.extend(keep.iter().copied());
    filter(&mut s.pat, &keep);
    filter(neutral, &keep);
    filter(&mut lam.body.result, &keep);
    filter(&mut lam.ret, &keep);
    filter(&mut lam.params, &params_keep);
    match pre {
        None => filter(arrs, &keep),
        Some(pre) => {
            filter(&mut pre.body.result, &keep);
            filter(&mut pre.ret, &keep);
            dce_lambda(pre);
            let read = free_vars(&pre.body);
            let used: Vec<bool> = pre.params.iter().map(|p| read.contains(&p.name)).collect();
            // At least one input stays: it gives the reduction its width.
            if used.contains(&true) {
                filter(&mut pre.params, &used);
                filter(arrs, &used);
            }
        }
    }
}

/// The variables that computing the results `keep` of a reduction operator reads (its
/// statements that may fail are always kept, and read what they read).
fn operator_reads(lam: &Lambda, keep: &[bool], sizes: &HashSet<VName>) -> HashSet<VName> {
    let mut read = HashSet::new();
    for (r, k) in lam.body.result.iter().zip(keep) {
        if *k {
            add_uses(r, &mut read);
        }
    }
    for st in lam.body.stms.iter().rev() {
        let needed = st.pat.iter().any(|p| read.contains(&p.name));
        if needed || !removable_given(&st.exp, sizes) {
            add_uses(&st.exp, &mut read);
        }
    }
    read
}

fn filter<T>(v: &mut Vec<T>, keep: &[bool]) {
    let mut it = keep.iter();
    v.retain(|_| *it.next().unwrap_or(&true));
}

/// `iota n` (`0 .. 1 ..< n`) or `replicate shape x` where every size is a constant ≥ 0 or
/// one of `sizes` (the size of an array that exists): it cannot fail, so an unused one
/// goes (reverse mode leaves many).
fn valid_array(e: &Exp, sizes: &HashSet<VName>) -> bool {
    let valid = |n: &SubExp| match n {
        SubExp::Const(c) => c.as_int().is_some_and(|n| n >= 0),
        SubExp::Var(v) => sizes.contains(v),
    };
    match e {
        Exp::Basic(BasicOp::Replicate(shape, _)) => shape.iter().all(valid),
        _ => runic_ir::traverse::iota_width(e).is_some_and(|n| valid(&n)),
    }
}

/// The variables that are dimensions of a parameter's array type (of the function or of a
/// lambda: their arrays exist when the code runs) or results of `ArraySize`.
pub(crate) fn known_sizes(f: &FunDef) -> HashSet<VName> {
    use runic_ir::traverse::{walk_lambda, walk_stm, Visitor};
    struct Sizes(HashSet<VName>);
    impl Sizes {
        fn params(&mut self, ps: &[Param]) {
            for p in ps {
                if let Type::Array { shape, .. } = &p.ty {
                    self.0.extend(shape.iter().filter_map(SubExp::as_var));
                }
            }
        }
    }
    impl Visitor for Sizes {
        fn lambda(&mut self, l: &Lambda) {
            self.params(&l.params);
            walk_lambda(self, l)
        }
        fn stm(&mut self, s: &Stm) {
            if let (Exp::Basic(BasicOp::ArraySize(..)), [p]) = (&s.exp, s.pat.as_slice()) {
                self.0.insert(p.name);
            }
            walk_stm(self, s)
        }
    }
    let mut v = Sizes(HashSet::new());
    v.params(&f.params);
    v.body(&f.body);
    v.0
}
