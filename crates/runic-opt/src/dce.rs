//! Dead-code elimination: statements whose results are unused and that cannot fail or
//! have effects are removed (failing operations stay, so run-time errors are kept).

use runic_ir::traverse::{
    add_uses, any_exp, free_vars, uses, walk_lambda_mut, walk_stm_mut, VisitorMut,
};
use runic_ir::*;
use std::collections::{HashMap, HashSet};

pub fn dce(mut prog: Prog) -> Prog {
    for f in &mut prog.funs {
        let mut d = Dce {
            sizes: known_sizes(f),
            bounds: Bounds::of(f),
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
/// known to stay (and after its dead map, reduction, loop and branch results are dropped),
/// each from its own live set.
#[derive(Default)]
struct Dce {
    /// Variables known to hold sizes of existing arrays (so `iota` of them cannot fail).
    sizes: HashSet<VName>,
    /// What is live at the end of the next body visited: its function's or lambda's result
    /// types (taken by [`VisitorMut::body`], so that bodies nested in it start empty).
    live: HashSet<VName>,
    /// What proves a row read or write in bounds.
    bounds: Bounds,
}

/// Row reads and writes that cannot fail: `a[i]` and `a with [i] = v` where `i` counts a
/// `for` loop around them whose bound is at most `a`'s outer size (the same size, or a
/// `min` of it), or is an element of an `iota` of such a size that a SOAC around them
/// takes, or the condition of a branch around them says `0 ≤ i < n` with such an `n`, and
/// `v` has the type of `a`'s rows; `a[i, j, …]` when each index is so bounded by its
/// dimension. Reverse mode writes its tapes that way (row `j`
/// of a tape of `chunk` rows, `j < min(chunk, rest)`), so a tape the return sweep does not
/// read goes with the loop results that carried it; and the adjoint of a `reduce min` at
/// the minimum's position, under `0 ≤ i < n`, goes when nothing reads it.
#[derive(Default)]
struct Bounds {
    /// The counters of the `for` loops around the body being cleaned, with their bounds.
    counters: HashMap<VName, SubExp>,
    /// Indices the conditions of the branches around the body bound, with their bounds.
    guards: HashMap<VName, SubExp>,
    /// The function's lambda parameters that take the elements of an `iota n`, with `n`
    /// (each is below `n` wherever it is in scope). An accumulator's update becomes a sum
    /// over such indices (`reduce (+) 0 (map (\l -> δ[l, j] · x[l, k]) (iota n))`); when
    /// nothing reads the sum (the gradient of one argument of several), its nest goes.
    elements: HashMap<VName, SubExp>,
    /// The function's comparisons and conjunctions (`v = a op b` of a boolean `v`; a
    /// short-circuit `a && b`, `if a then b else false`, as `LogAnd`).
    tests: HashMap<VName, (BinOp, SubExp, SubExp)>,
    /// The function's `v = min(a, b)` statements.
    mins: HashMap<VName, (SubExp, SubExp)>,
    /// The function's variables' types.
    types: HashMap<VName, Type>,
}

impl Bounds {
    fn of(f: &FunDef) -> Bounds {
        use runic_ir::traverse::{binder_types, walk_stm, Visitor};
        #[derive(Default)]
        struct Defs {
            mins: HashMap<VName, (SubExp, SubExp)>,
            tests: HashMap<VName, (BinOp, SubExp, SubExp)>,
        }
        impl Visitor for Defs {
            fn stm(&mut self, s: &Stm) {
                if let (Exp::Basic(BasicOp::BinOp(op, a, b)), [p]) = (&s.exp, &s.pat[..]) {
                    let ab = (a.clone(), b.clone());
                    match op {
                        BinOp::Min => _ = self.mins.insert(p.name, ab),
                        BinOp::LogAnd | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                            _ = self.tests.insert(p.name, (*op, ab.0, ab.1))
                        }
                        _ => {}
                    }
                }
                if let (
                    Exp::If {
                        cond,
                        then_body,
                        else_body,
                        ..
                    },
                    [p],
                ) = (&s.exp, &s.pat[..])
                {
                    if let ([b], [SubExp::Const(Prim::Bool(false))]) =
                        (&then_body.result[..], &else_body.result[..])
                    {
                        let and = (BinOp::LogAnd, cond.clone(), b.clone());
                        self.tests.insert(p.name, and);
                    }
                }
                walk_stm(self, s)
            }
        }
        let mut defs = Defs::default();
        defs.body(&f.body);
        let mut types = HashMap::new();
        binder_types(f.params.as_slice(), &mut types);
        binder_types(&f.body, &mut types);
        Bounds {
            counters: HashMap::new(),
            guards: HashMap::new(),
            elements: iota_elements(f),
            tests: defs.tests,
            mins: defs.mins,
            types,
        }
    }

    /// Learns the indices `cond` bounds (`0 ≤ i` and `i < n` among its conjuncts) for the
    /// body of a branch on it; returns them, for [`Bounds::forget`] after the body.
    fn guard(&mut self, cond: &SubExp) -> Vec<VName> {
        let mut lower = HashSet::new();
        let mut upper = HashMap::new();
        let mut todo = vec![cond.clone()];
        while let Some(SubExp::Var(c)) = todo.pop() {
            let Some((op, a, b)) = self.tests.get(&c) else {
                continue;
            };
            let zero = |x: &SubExp| matches!(x, SubExp::Const(k) if k.as_int() == Some(0));
            match (op, a, b) {
                (BinOp::LogAnd, a, b) => todo.extend([a.clone(), b.clone()]),
                (BinOp::Ge, SubExp::Var(i), z) | (BinOp::Le, z, SubExp::Var(i)) if zero(z) => {
                    lower.insert(*i);
                }
                (BinOp::Lt, SubExp::Var(i), n) | (BinOp::Gt, n, SubExp::Var(i)) => {
                    upper.insert(*i, n.clone());
                }
                _ => {}
            }
        }
        let mut added = Vec::new();
        for (i, n) in upper {
            if lower.contains(&i) && !self.guards.contains_key(&i) {
                self.guards.insert(i, n);
                added.push(i);
            }
        }
        added
    }

    fn forget(&mut self, guarded: Vec<VName>) {
        for i in guarded {
            self.guards.remove(&i);
        }
    }

    /// `n ≤ d`: the same size, or a `min` with an operand at most `d`.
    fn at_most(&self, n: &SubExp, d: &SubExp) -> bool {
        n == d
            || matches!(n, SubExp::Var(v) if self.mins.get(v).is_some_and(|(a, b)| {
                self.at_most(a, d) || self.at_most(b, d)
            }))
    }

    /// `arr[i, …]` is in bounds: each index counts an enclosing loop, or ranges over an
    /// iota, of at most its dimension of `arr`, or a branch's condition bounds it so; or
    /// it is a slice of the whole dimension (`arr[:, j]`).
    fn row_in_bounds(&self, arr: VName, idx: &[DimIndex]) -> bool {
        let Some(Type::Array { shape, .. }) = self.types.get(&arr) else {
            return false;
        };
        !idx.is_empty()
            && idx.len() <= shape.len()
            && idx.iter().zip(shape).all(|(ix, d)| {
                let i = match ix {
                    DimIndex::Fix(SubExp::Var(i)) => i,
                    DimIndex::Slice { .. } => return ix.is_prefix_slice(Some(d)),
                    DimIndex::Fix(_) => return false,
                };
                let bound = (self.counters.get(i))
                    .or_else(|| self.guards.get(i))
                    .or_else(|| self.elements.get(i));
                bound.is_some_and(|n| self.at_most(n, d))
            })
    }

    /// `/`, `%` or `**` of floats: unlike the integer ones, they cannot fail. (A gradient
    /// computes its primal's loss up to the division by the batch size, and nothing reads
    /// it: with the division kept, the whole forward pass of the loss stayed.)
    fn float_arithmetic(&self, e: &Exp) -> bool {
        let Exp::Basic(BasicOp::BinOp(op, a, _)) = e else {
            return false;
        };
        let float = match a {
            SubExp::Const(c) => c.ty().is_float(),
            SubExp::Var(v) => matches!(self.types.get(v), Some(Type::Prim(t)) if t.is_float()),
        };
        float && matches!(op, BinOp::Div | BinOp::Mod | BinOp::Pow)
    }

    /// A row read or write that cannot fail.
    fn safe_access(&self, e: &Exp) -> bool {
        match e {
            Exp::Basic(BasicOp::Index(arr, idx)) => self.row_in_bounds(*arr, idx),
            Exp::Basic(BasicOp::Update(arr, idx, v)) => {
                let Some(Type::Array { elem, shape }) = self.types.get(arr) else {
                    return false;
                };
                let row = match &shape[1..] {
                    [] => Type::Prim(*elem),
                    rest => Type::Array {
                        elem: *elem,
                        shape: rest.to_vec(),
                    },
                };
                let given = match v {
                    SubExp::Const(c) => Some(Type::Prim(c.ty())),
                    SubExp::Var(x) => self.types.get(x).cloned(),
                };
                // A whole slice is a read's only: a write's value must fit the row.
                let fixed = idx.iter().all(|ix| matches!(ix, DimIndex::Fix(_)));
                given == Some(row) && fixed && self.row_in_bounds(*arr, idx)
            }
            _ => false,
        }
    }
}

impl Dce {
    /// [`removable_given`], row accesses [`Bounds`] proves included (a branch's own
    /// condition among what proves them in its `then` body).
    fn removable_here(&mut self, e: &Exp) -> bool {
        if let Exp::If {
            cond,
            then_body,
            else_body,
            ..
        } = e
        {
            let guarded = self.bounds.guard(cond);
            let then_ok = then_body.stms.iter().all(|s| self.removable_stm(s));
            self.bounds.forget(guarded);
            return then_ok && else_body.stms.iter().all(|s| self.removable_stm(s));
        }
        !any_exp(e, |x| {
            !(removable_itself(x, &self.sizes)
                || self.bounds.safe_access(x)
                || self.bounds.float_arithmetic(x))
        })
    }

    /// Whether statement `s` can be dropped when unused ([`Dce::removable_here`], or a
    /// [`concat_of_vectors`]).
    fn removable_stm(&mut self, s: &Stm) -> bool {
        concat_of_vectors(s) || self.removable_here(&s.exp)
    }

    /// What statement `s` reads when only its results `needed` are used: a loop or branch
    /// what computes those and what it cannot drop; anything else all its operands when it
    /// stays, nothing when it goes.
    fn stm_reads(&mut self, s: &Stm, needed: &[bool]) -> HashSet<VName> {
        let mut read = HashSet::new();
        match &s.exp {
            Exp::Loop { params, form, body } => {
                let keep = self.loop_keep(&s.pat, params, form, body, needed);
                // As `drop_dead_loop_results`: a loop keeping nothing stays as it is.
                if !keep.contains(&true) {
                    add_uses(s, &mut read);
                    return read;
                }
                for ((p, init), k) in params.iter().zip(&keep) {
                    if *k {
                        add_uses(init, &mut read);
                        add_uses(&p.ty, &mut read);
                    }
                }
                if let LoopForm::For { i, bound } = form {
                    add_uses(bound, &mut read);
                    self.bounds.counters.insert(*i, bound.clone());
                    read.extend(self.body_reads(body, &keep));
                    self.bounds.counters.remove(i);
                } else {
                    read.extend(self.body_reads(body, &keep));
                }
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                // As `drop_dead_branch_results`: results other results' types name stay.
                let in_types = uses(&s.pat);
                let needed: Vec<bool> = s
                    .pat
                    .iter()
                    .zip(needed)
                    .map(|(p, n)| *n || in_types.contains(&p.name))
                    .collect();
                add_uses(cond, &mut read);
                let guarded = self.bounds.guard(cond);
                read.extend(self.body_reads(then_body, &needed));
                self.bounds.forget(guarded);
                read.extend(self.body_reads(else_body, &needed));
            }
            _ => {
                if needed.contains(&true) || !self.removable_stm(s) {
                    add_uses(s, &mut read);
                }
            }
        }
        for (p, n) in s.pat.iter().zip(needed) {
            if *n {
                add_uses(&p.ty, &mut read);
            }
        }
        read
    }

    /// What a body reads to compute its results `needed` and the statements it cannot drop.
    fn body_reads(&mut self, b: &Body, needed: &[bool]) -> HashSet<VName> {
        let mut read = HashSet::new();
        for (r, n) in b.result.iter().zip(needed) {
            if *n {
                add_uses(r, &mut read);
            }
        }
        for s in b.stms.iter().rev() {
            let need: Vec<bool> = s.pat.iter().map(|p| read.contains(&p.name)).collect();
            let r = self.stm_reads(s, &need);
            read.extend(r);
        }
        read
    }

    /// The loop results to keep when `needed` are used: those, the `while` condition, and
    /// every result whose parameter the kept ones (or what cannot be dropped) read, to a
    /// fixed point.
    fn loop_keep(
        &mut self,
        pat: &[Param],
        params: &[(Param, SubExp)],
        form: &LoopForm,
        body: &Body,
        needed: &[bool],
    ) -> Vec<bool> {
        let n = params.len();
        if pat.len() != n || body.result.len() != n || needed.len() != n {
            return vec![true; n];
        }
        let in_types = uses(pat);
        let cond = match form {
            LoopForm::While { cond } => Some(*cond),
            LoopForm::For { .. } => None,
        };
        let mut keep: Vec<bool> = (0..n)
            .map(|k| needed[k] || in_types.contains(&pat[k].name) || cond == Some(params[k].0.name))
            .collect();
        let counter = match form {
            LoopForm::For { i, bound } => Some((*i, bound.clone())),
            LoopForm::While { .. } => None,
        };
        if let Some((i, bound)) = &counter {
            self.bounds.counters.insert(*i, bound.clone());
        }
        loop {
            let mut read = self.body_reads(body, &keep);
            for ((p, _), k) in params.iter().zip(&keep) {
                if *k {
                    add_uses(&p.ty, &mut read);
                }
            }
            let grown: Vec<bool> = (0..n)
                .map(|k| keep[k] || read.contains(&params[k].0.name))
                .collect();
            if grown == keep {
                break;
            }
            keep = grown;
        }
        if let Some((i, _)) = &counter {
            self.bounds.counters.remove(i);
        }
        keep
    }

    /// A reduction's (or scan's) unused results are not computed when the operator's other
    /// results do not read them: the component goes from the neutral elements, the operator
    /// (both its parameters and its result), the fused `pre` lambda's results, and the inputs
    /// only it read. Forward mode over a `reduce min` carries the minimum's tangent that way,
    /// although a Newton step only reads the index of the minimum.
    fn drop_dead_reduction_results(&mut self, s: &mut Stm, live: &HashSet<VName>) {
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
            let read = self.body_reads(&lam.body, &keep);
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

    /// A loop's unused results whose parameters only their own next values read (a tape
    /// the return sweep does not read) are not carried.
    fn drop_dead_loop_results(&mut self, s: &mut Stm, live: &HashSet<VName>) {
        let Stm { pat, exp, .. } = s;
        let Exp::Loop { params, form, body } = exp else {
            return;
        };
        let needed: Vec<bool> = pat.iter().map(|p| live.contains(&p.name)).collect();
        let keep = self.loop_keep(pat, params, form, body, &needed);
        if keep.iter().all(|k| *k) || !keep.contains(&true) {
            return;
        }
        filter(pat, &keep);
        filter(params, &keep);
        filter(&mut body.result, &keep);
    }
}

/// A branch's unused results are not returned (what computed only them dies in turn).
fn drop_dead_branch_results(s: &mut Stm, live: &HashSet<VName>) {
    let in_types = uses(&s.pat);
    let Exp::If {
        then_body,
        else_body,
        ret,
        ..
    } = &mut s.exp
    else {
        return;
    };
    let keep: Vec<bool> = s
        .pat
        .iter()
        .map(|p| live.contains(&p.name) || in_types.contains(&p.name))
        .collect();
    let n = keep.len();
    if keep.iter().all(|k| *k)
        || ret.len() != n
        || then_body.result.len() != n
        || else_body.result.len() != n
    {
        return;
    }
    filter(&mut s.pat, &keep);
    filter(ret, &keep);
    filter(&mut then_body.result, &keep);
    filter(&mut else_body.result, &keep);
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
            if !used && self.removable_stm(&s) {
                continue;
            }
            drop_dead_map_results(&mut s, &live);
            self.drop_dead_reduction_results(&mut s, &live);
            self.drop_dead_loop_results(&mut s, &live);
            drop_dead_branch_results(&mut s, &live);
            // The loop's body is cleaned knowing its counter's bound.
            let counter = match &s.exp {
                Exp::Loop {
                    form: LoopForm::For { i, bound },
                    ..
                } => Some((*i, bound.clone())),
                _ => None,
            };
            if let Some((i, bound)) = &counter {
                self.bounds.counters.insert(*i, bound.clone());
            }
            if let Exp::If {
                cond,
                then_body,
                else_body,
                ..
            } = &mut s.exp
            {
                // The `then` body is cleaned knowing what its condition bounds.
                let guarded = self.bounds.guard(cond);
                self.body(then_body);
                self.bounds.forget(guarded);
                self.body(else_body);
            } else {
                walk_stm_mut(self, &mut s);
            }
            if let Some((i, _)) = &counter {
                self.bounds.counters.remove(i);
            }
            // Inputs the cleaned lambda no longer reads (forward mode's tangents of what
            // only an index is taken of) are not passed, so their producers may die too.
            crate::checks::drop_unread_inputs(&mut s);
            add_uses(&s, &mut live);
            kept.push(s);
        }
        kept.reverse();
        b.stms = kept;
    }
}

/// The lambda parameters of `f`'s maps, reduces and scans that take the elements of an
/// `iota n`, with `n`.
fn iota_elements(f: &FunDef) -> HashMap<VName, SubExp> {
    use runic_ir::traverse::{iotas, walk_exp, Visitor};
    struct Elements {
        iotas: HashMap<VName, SubExp>,
        found: HashMap<VName, SubExp>,
    }
    impl Visitor for Elements {
        fn exp(&mut self, e: &Exp) {
            let (lam, arrs) = match e {
                Exp::Soac(Soac::Map { lam, arrs, .. }) => (Some(lam), arrs),
                Exp::Soac(Soac::Reduce { pre, arrs, .. } | Soac::Scan { pre, arrs, .. }) => {
                    (pre.as_ref(), arrs)
                }
                _ => (None, &Vec::new()),
            };
            for (p, a) in lam.map_or(&[][..], |l| &l.params[..]).iter().zip(arrs) {
                if let Some(n) = self.iotas.get(a) {
                    self.found.insert(p.name, n.clone());
                }
            }
            walk_exp(self, e)
        }
    }
    let mut v = Elements {
        iotas: iotas(&f.body),
        found: HashMap::new(),
    };
    v.body(&f.body);
    v.found
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

fn filter<T>(v: &mut Vec<T>, keep: &[bool]) {
    let mut it = keep.iter();
    v.retain(|_| *it.next().unwrap_or(&true));
}

/// A concatenation of one-dimensional arrays (its result one-dimensional: the verifier
/// holds the parts to its rank), which cannot fail: there are no other dimensions to
/// disagree. `simplify` leaves one behind when it flattens `(a ++ b) ++ c`.
fn concat_of_vectors(s: &Stm) -> bool {
    matches!(
        (&s.exp, s.pat.as_slice()),
        (Exp::Basic(BasicOp::Concat(0, _)), [p]) if p.ty.rank() == 1
    )
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
