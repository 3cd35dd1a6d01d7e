//! Which SOACs run native code, and why the others do not (`runic dev --explain-exec`).
//!
//! The answer is the executor's own decision, [`crate::native::Jit::route`], taken with the
//! IR's binder types instead of run-time values (they agree on a well-typed program), so
//! what is reported is what runs. The same walk compiles the kernels of the top-level SOACs
//! when the executor is prepared, so that a program is compiled once, before its first run.

use crate::native::{Jit, Route, VarTy};
use runic_ir::traverse::binder_types;
use runic_ir::*;
use std::collections::HashMap;

/// One SOAC of an entry point, in program order.
#[derive(Clone, Debug, PartialEq)]
pub struct SoacReport {
    /// The entry point's external name.
    pub entry: String,
    /// 0 at the top level; nested SOACs (inside a SOAC's lambda) count their enclosing ones.
    pub depth: usize,
    /// `map`, `reduce`, `scan`, `hist` or `scatter`.
    pub kind: &'static str,
    pub loc: Option<Loc>,
    /// `native (…)`, `built-in (…)`, or `not native: reason`.
    pub how: String,
    /// The SOAC's (first) lambda, to match it with the profile's entries.
    pub lambda: Option<runic_ir::LamId>,
}

pub(crate) fn kind(s: &Soac) -> &'static str {
    match s {
        Soac::Map { .. } => "map",
        Soac::Reduce { .. } => "reduce",
        Soac::Scan { .. } => "scan",
        Soac::Hist { .. } => "hist",
        Soac::Scatter { .. } => "scatter",
    }
}

pub(crate) fn lambdas(s: &Soac) -> Vec<&Lambda> {
    match s {
        Soac::Map { lam, .. } | Soac::Hist { lam, .. } => vec![lam],
        Soac::Reduce { pre, lam, .. } | Soac::Scan { pre, lam, .. } => {
            pre.iter().chain(std::iter::once(lam)).collect()
        }
        Soac::Scatter { .. } => vec![],
    }
}

struct Walk<'a> {
    jit: &'a Jit,
    gemm: &'a crate::gemm::Contractions,
    types: HashMap<VName, Type>,
    /// The operator of every accumulator `with_acc` binds (of one array).
    acc_ops: HashMap<VName, Option<Lambda>>,
    entry: String,
    out: Vec<SoacReport>,
    /// Whether to describe nested SOACs (otherwise only top-level kernels are compiled).
    nested: bool,
}

/// A map over one element whose lambda is one loop: a sequential loop the
/// `loops-as-kernels` pass made a kernel.
fn loop_kernel(s: &Soac) -> bool {
    match s {
        Soac::Map {
            w: SubExp::Const(runic_prim::Prim::I64(1)),
            lam,
            ..
        } => matches!(&lam.body.stms[..], [st] if matches!(st.exp, Exp::Loop { .. })),
        _ => false,
    }
}

impl Walk<'_> {
    fn route(&self, s: &Soac) -> Route {
        let (types, ops) = (&self.types, &self.acc_ops);
        self.jit.route(s, &|v| match types.get(&v)? {
            Type::Acc { shape, elems } => match (elems.as_slice(), ops.get(&v)) {
                ([e], Some(op)) => Some(VarTy::Acc(*e, shape.len(), op.clone())),
                _ => None,
            },
            t => VarTy::of_type(t),
        })
    }

    /// `depth` counts enclosing SOACs; `parent_native`: an enclosing SOAC's lambda is
    /// native code, which runs this one as a loop of its own.
    fn body(&mut self, b: &Body, depth: usize, parent_native: bool) {
        for stm in &b.stms {
            match &stm.exp {
                // (Inside a native kernel the nest is a loop of the kernel instead.)
                Exp::Soac(s @ Soac::Map { lam, .. })
                    if self.gemm.contains(lam) && !parent_native =>
                {
                    // A matrix product: its inner map and reduce are part of it.
                    self.out.push(SoacReport {
                        entry: self.entry.clone(),
                        depth,
                        kind: kind(s),
                        loc: stm.src.loc,
                        how: "built-in (a matrix product: GEMM)".into(),
                        lambda: Some(lam.id),
                    });
                }
                // Ahead of the runs, not a loop made a kernel (`loops-as-kernels`): it is
                // compiled where it first runs, and one behind a check of its widths may
                // never run (a large LSTM's loops would double the compile time).
                Exp::Soac(s) if !self.nested && loop_kernel(s) => {}
                Exp::Soac(s) => {
                    let route = (depth == 0).then(|| self.route(s));
                    let native = matches!(
                        route,
                        Some(Route::Map(_) | Route::Fold(_) | Route::Scan(..) | Route::Hist(_))
                    );
                    let how = if let Some(r) = &route {
                        r.describe()
                    } else if !self.nested {
                        continue;
                    } else if parent_native {
                        match s {
                            Soac::Map { lam, .. } if runic_jit::is_column_reduction(lam) => {
                                "native (a column reduction inside the enclosing kernel, its \
                                 loops swapped)"
                                    .into()
                            }
                            _ => "native (a loop inside the enclosing kernel)".into(),
                        }
                    } else {
                        match self.route(s) {
                            // (A scatter's kernel runs wherever the scatter does.)
                            r @ (Route::Builtin(_) | Route::Scatter(_)) => r.describe(),
                            Route::Map(_) | Route::Fold(_) | Route::Scan(..) | Route::Hist(_) => {
                                "not native: nested in a lambda \
                                 the evaluator runs (native only when the enclosing map is too \
                                 narrow to split)"
                                    .into()
                            }
                            Route::Evaluator(why) => {
                                format!("not native: nested in a lambda the evaluator runs; {why}")
                            }
                        }
                    };
                    self.out.push(SoacReport {
                        entry: self.entry.clone(),
                        depth,
                        kind: kind(s),
                        loc: stm.src.loc,
                        how,
                        lambda: lambdas(s).first().map(|l| l.id),
                    });
                    if self.nested {
                        for l in lambdas(s) {
                            self.body(&l.body, depth + 1, native || parent_native);
                        }
                    }
                }
                Exp::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    self.body(then_body, depth, parent_native);
                    self.body(else_body, depth, parent_native);
                }
                Exp::Loop { body, .. } => self.body(body, depth, parent_native),
                Exp::WithAcc { inputs, lam } => {
                    for (p, inp) in lam.params.iter().zip(inputs) {
                        if inp.arrays.len() == 1 {
                            let op = inp.op.as_ref().map(|(l, _)| l.clone());
                            self.acc_ops.insert(p.name, op);
                        }
                    }
                    self.body(&lam.body, depth, parent_native)
                }
                _ => {}
            }
        }
    }
}

/// Walk every function (entry points: with their reports), deciding every SOAC's route.
pub(crate) fn walk(
    prog: &Prog,
    jit: &Jit,
    gemm: &crate::gemm::Contractions,
    nested: bool,
) -> Vec<SoacReport> {
    let mut types = HashMap::new();
    for f in &prog.funs {
        for p in &f.params {
            types.insert(p.name, p.ty.clone());
        }
        binder_types(&f.body, &mut types);
    }
    let mut w = Walk {
        jit,
        gemm,
        types,
        acc_ops: HashMap::new(),
        entry: String::new(),
        out: Vec::new(),
        nested,
    };
    for f in &prog.funs {
        w.entry = match &f.entry {
            Some(e) => e.name.clone(),
            None if nested => continue,
            None => f.name.clone(),
        };
        w.body(&f.body, 0, false);
    }
    w.out
}

/// The SOAC reports with, after each entry point's, one report per body whose independent
/// statements run as parallel tasks (kind `tasks`).
pub(crate) fn with_tasks(soacs: Vec<SoacReport>, tasks: &crate::tasks::Plans) -> Vec<SoacReport> {
    let mut out: Vec<SoacReport> = Vec::with_capacity(soacs.len());
    let mut pending: Vec<(&str, &crate::tasks::Plan)> = tasks.reports().collect();
    let flush =
        |out: &mut Vec<SoacReport>, entry: &str, pending: &mut Vec<(&str, &crate::tasks::Plan)>| {
            for (_, p) in pending.iter().filter(|(e, _)| *e == entry) {
                out.push(SoacReport {
                    entry: entry.to_string(),
                    depth: 0,
                    kind: "tasks",
                    loc: p.loc,
                    how: format!(
                        "{} expensive statements, up to {} independent: run as parallel tasks{}",
                        p.expensive_count,
                        p.width,
                        if tasks.is_on() {
                            ""
                        } else {
                            " (off: RUNIC_TASKS=0)"
                        }
                    ),
                    lambda: None,
                });
            }
            pending.retain(|(e, _)| *e != entry);
        };
    for r in soacs {
        if let Some(last) = out.last() {
            if last.entry != r.entry {
                let e = last.entry.clone();
                flush(&mut out, &e, &mut pending);
            }
        }
        out.push(r);
    }
    if let Some(last) = out.last() {
        let e = last.entry.clone();
        flush(&mut out, &e, &mut pending);
    }
    // Entry points without SOACs (tasks of loops alone).
    let rest: Vec<String> = pending.iter().map(|(e, _)| e.to_string()).collect();
    for e in rest {
        flush(&mut out, &e, &mut pending);
    }
    out
}
