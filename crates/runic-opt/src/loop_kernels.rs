//! Sequential loops as native kernels.
//!
//! The executor runs a loop at the level of a function body statement by statement (about
//! a microsecond per iteration even for a few scalar operations), while a loop inside a
//! map's lambda is compiled with it by runic-jit. A `for` loop whose body holds no SOAC
//! but over a few elements (scalar arithmetic, indexing and element updates of arrays,
//! nested such loops and branches, maps over a `[2]` state — a recurrence, an ODE
//! integrator, the tape loops reverse mode makes of them) has no parallelism to lose, so
//! it becomes the one element of a map:
//!
//! ```text
//! let (a, b) = loop … for i < n do body
//! ⇒ let (a₁, b₁) = map (\_ -> loop … for i < n do body) (iota 1)
//!   let a = a₁[0]
//!   let b = b₁[0]
//! ```
//!
//! A SOAC over a variable number of elements (a map over the state `[n]f64` whose size
//! the entry point fixes) makes the rewrite conditional: `if n ≤ 64 then (the map) else
//! (the loop as written)`, the variable bound before the loop. The map runs native where
//! runic-jit compiles its lambda, and as the loop did where it does not. Not rewritten:
//! `while` loops (a native loop cannot be interrupted, and one need not end), loops over
//! accumulators, loops with a SOAC whose width is computed inside them, and loops whose
//! results' shapes are named by the loop itself.

use runic_ir::traverse::{any_exp, uses};
use runic_ir::*;

pub fn loops_as_kernels(mut prog: Prog) -> Prog {
    let mut ns = std::mem::take(&mut prog.names);
    for f in &mut prog.funs {
        body(&mut ns, &mut f.body);
    }
    prog.names = ns;
    prog
}

/// Rewrites the loops of a body the executor evaluates itself, and of the branches and
/// loops (with SOACs) nested in it at that level.
fn body(ns: &mut NameSource, b: &mut Body) {
    let mut out = Vec::with_capacity(b.stms.len());
    for mut s in std::mem::take(&mut b.stms) {
        if let Some(widths) = sequential(&s) {
            out.extend(as_kernel(ns, s, &widths));
            continue;
        }
        match &mut s.exp {
            Exp::If {
                then_body,
                else_body,
                ..
            } => {
                body(ns, then_body);
                body(ns, else_body);
            }
            Exp::Loop { body: inner, .. } => body(ns, inner),
            _ => {}
        }
        out.push(s);
    }
    b.stms = out;
}

/// The widest SOAC a loop kernel runs inside (sequentially): one over a state of a few
/// elements (an ODE's `[2]f64`), not one with parallelism to use.
const SMALL: i64 = 64;

/// The widths of the SOACs in `body` that are not constants of at most [`SMALL`]
/// elements: variables, to be checked at run time; `None` if one is a larger constant.
fn unknown_widths(body: &Body) -> Option<Vec<VName>> {
    let vars = std::cell::RefCell::new(Vec::new());
    let large = any_exp(body, |e| {
        let Exp::Soac(soac) = e else { return false };
        match width(soac) {
            SubExp::Const(Prim::I64(n)) => *n > SMALL,
            SubExp::Var(v) => {
                vars.borrow_mut().push(*v);
                false
            }
            SubExp::Const(_) => true,
        }
    });
    let mut vars = vars.into_inner();
    vars.sort();
    vars.dedup();
    (!large).then_some(vars)
}

fn width(soac: &Soac) -> &SubExp {
    match soac {
        Soac::Map { w, .. }
        | Soac::Reduce { w, .. }
        | Soac::Scan { w, .. }
        | Soac::Hist { w, .. }
        | Soac::Scatter { w, .. } => w,
    }
}

/// For a `for` loop with no `while` loop or accumulator inside, whose results' types name
/// only variables bound before it, and whose SOACs are over a few elements: the widths to
/// check at run time (none when all are small constants).
fn sequential(s: &Stm) -> Option<Vec<VName>> {
    let Exp::Loop {
        params,
        form: form @ LoopForm::For { .. },
        body,
    } = &s.exp
    else {
        return None;
    };
    let other_work = any_exp(body, |e| {
        matches!(
            e,
            Exp::WithAcc { .. }
                | Exp::Apply { .. }
                | Exp::Jvp { .. }
                | Exp::Vjp { .. }
                | Exp::Loop {
                    form: LoopForm::While { .. },
                    ..
                }
                | Exp::Basic(BasicOp::UpdateAcc { .. })
        )
    });
    let no_accs = params
        .iter()
        .all(|(p, _)| !matches!(p.ty, Type::Acc { .. }));
    let bound: Vec<VName> = s.pat.iter().map(|p| p.name).collect();
    let shapes_outside = s
        .pat
        .iter()
        .all(|p| uses(&p.ty).iter().all(|v| !bound.contains(v)));
    if other_work || !no_accs || !shapes_outside {
        return None;
    }
    let widths = unknown_widths(body)?;
    // A width computed inside the loop (its parameters and counter included) is not known
    // before it.
    let mut inside = runic_ir::traverse::binders(body);
    inside.extend(params.iter().map(|(p, _)| p.name));
    if let LoopForm::For { i, .. } = form {
        inside.insert(*i);
    }
    widths.iter().all(|w| !inside.contains(w)).then_some(widths)
}

/// The loop `s` as the one element of a map over `iota 1`, its results read back; when
/// some of its SOACs' `widths` are variables, only where they are all small at run time
/// (the loop as it was otherwise).
fn as_kernel(ns: &mut NameSource, s: Stm, widths: &[VName]) -> Vec<Stm> {
    let mut b = Builder::new(ns);
    b.src = s.src.clone();
    if widths.is_empty() {
        let results = kernel(&mut b, &s);
        for (p, r) in s.pat.into_iter().zip(results) {
            b.let_pat(vec![p], Exp::Basic(BasicOp::SubExp(r)));
        }
        return b.take_stms();
    }
    let mut ok = SubExp::Const(Prim::Bool(true));
    for w in widths {
        let small = b.binop(
            BinOp::Le,
            SubExp::Var(*w),
            SubExp::i64(SMALL),
            PrimType::Bool,
        );
        ok = b.binop(BinOp::LogAnd, ok, small, PrimType::Bool);
    }
    let then_body = b.body(|b| kernel(b, &s));
    // The loop as written, its results under new names.
    let outer: Vec<Param> = s
        .pat
        .iter()
        .map(|p| b.param("loop", p.ty.clone()))
        .collect();
    let else_body = Body {
        result: outer.iter().map(|p| SubExp::Var(p.name)).collect(),
        stms: vec![Stm {
            pat: outer,
            exp: s.exp,
            src: s.src.clone(),
        }],
    };
    let ret = s.pat.iter().map(|p| p.ty.clone()).collect();
    let exp = Exp::If {
        cond: ok,
        then_body,
        else_body,
        ret,
    };
    b.let_pat(s.pat, exp);
    b.take_stms()
}

/// A renamed copy of the loop `s` as the one element of a map over `iota 1`; returns its
/// results, read from the map's.
fn kernel(b: &mut Builder, s: &Stm) -> Vec<SubExp> {
    let one = SubExp::i64(1);
    let iota = b.iota(one.clone());
    let ret: Vec<Type> = s.pat.iter().map(|p| p.ty.clone()).collect();
    let element = Param {
        name: b.fresh("unit"),
        ty: Type::Prim(PrimType::I64),
    };
    let body = Body {
        stms: vec![s.clone()],
        result: s.pat.iter().map(|p| SubExp::Var(p.name)).collect(),
    };
    let lam = b.renamed(&Lambda::new(vec![element], body, ret));
    let rows: Vec<Param> = s
        .pat
        .iter()
        .map(|p| b.param("rows", p.ty.array_of(one.clone())))
        .collect();
    let map = Soac::Map {
        w: one,
        lam,
        arrs: vec![iota],
    };
    b.let_pat(rows.clone(), Exp::Soac(map));
    rows.iter()
        .zip(&s.pat)
        .map(|(r, p)| {
            let first = BasicOp::Index(r.name, vec![DimIndex::Fix(SubExp::i64(0))]);
            SubExp::Var(b.bind1("result", Exp::Basic(first), p.ty.clone()))
        })
        .collect()
}
