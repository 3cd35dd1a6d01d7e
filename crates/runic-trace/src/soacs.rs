//! Second-order operations: closures traced into IR lambdas of `map`, `reduce` and `scan`,
//! and the array constructors. Each emits the statement the front end emits for the
//! prelude function of the same name, so that fusion, GEMM recognition and native kernels
//! apply to traced code as they do to the language.

use crate::ctx::{self, Ctx};
use crate::tracer::{Operand, Tracer};
use runic_ir::{BasicOp, Exp, Prim, PrimType, Soac, SubExp, Type, VName};

/// The arrays of a SOAC: their variables, the common outer size (the first array's), and
/// the types of their rows. Arrays whose outer size is another operand are checked at run
/// time against the first one's (the front end's `shape_check`).
fn inputs(cx: &mut Ctx, arrs: &[Tracer], what: &str) -> Option<(SubExp, Vec<VName>, Vec<Type>)> {
    let mut w: Option<SubExp> = None;
    let mut vars = Vec::new();
    let mut rows = Vec::new();
    for &a in arrs {
        let (se, ty) = cx.get(a)?;
        let (Some(v), Type::Array { shape, .. }) = (se.as_var(), &ty) else {
            cx.fail(format!("{what} over a scalar"));
            return None;
        };
        match &w {
            None => w = Some(shape[0].clone()),
            Some(w0) if *w0 != shape[0] => {
                if let (SubExp::Const(x), SubExp::Const(y)) = (w0, &shape[0]) {
                    cx.fail(format!(
                        "{what} over arrays of sizes {} and {}",
                        x.plain(),
                        y.plain()
                    ));
                    return None;
                }
                let text = format!(
                    "[{{0}}]{}{}",
                    "[]".repeat(shape.len() - 1),
                    ty.elem().map(|p| p.name()).unwrap_or("")
                );
                let check = BasicOp::ShapeCheck {
                    arr: v,
                    shape: vec![w0.clone()],
                    type_text: text,
                };
                cx.emit(0, |b| {
                    b.let_basic("ok", check)?;
                    Ok(vec![])
                });
            }
            Some(_) => {}
        }
        vars.push(v);
        rows.push(ty.row());
    }
    match w {
        Some(w) => Some((w, vars, rows)),
        None => {
            cx.fail(format!("{what} of no arrays"));
            None
        }
    }
}

/// `map f a b …` over the rows of several arrays of one outer size, with any number of
/// results: the general form of [`Tracer::map`] and [`map2`] (`zip` in the language: arrays
/// of tuples are tuples of arrays).
pub fn map_n(arrs: &[Tracer], f: impl FnOnce(&[Tracer]) -> Vec<Tracer>) -> Vec<Tracer> {
    let Some((w, vars, rows)) = ctx::with(|cx| inputs(cx, arrs, "map")) else {
        return vec![];
    };
    let Some(lam) = ctx::lambda(&rows, f) else {
        return ctx::with(|cx| (0..1).map(|_| cx.dummy()).collect());
    };
    let n = lam.ret.len();
    ctx::with(|cx| {
        cx.emit(n, |b| {
            let vs = b.map("mapped", w, lam, vars)?;
            Ok(vs.into_iter().map(SubExp::Var).collect())
        })
    })
}

/// `map2 f a b`.
pub fn map2(a: Tracer, b: Tracer, f: impl FnOnce(Tracer, Tracer) -> Tracer) -> Tracer {
    one(map_n(&[a, b], |xs| vec![f(xs[0], xs[1])]))
}

/// `map3 f a b c`.
pub fn map3(
    a: Tracer,
    b: Tracer,
    c: Tracer,
    f: impl FnOnce(Tracer, Tracer, Tracer) -> Tracer,
) -> Tracer {
    one(map_n(&[a, b, c], |xs| vec![f(xs[0], xs[1], xs[2])]))
}

/// The arrays `arrs` zipped: map over their rows together with [`Zip::map`].
pub fn zip(arrs: &[Tracer]) -> Zip {
    Zip(arrs.to_vec())
}

/// Arrays zipped by [`zip`].
#[derive(Clone, Debug)]
pub struct Zip(Vec<Tracer>);

impl Zip {
    /// `map f (zip a b …)`, `f` taking one row of each array.
    pub fn map(self, f: impl FnOnce(&[Tracer]) -> Tracer) -> Tracer {
        one(map_n(&self.0, |xs| vec![f(xs)]))
    }
}

fn one(v: Vec<Tracer>) -> Tracer {
    match v.first() {
        Some(t) => *t,
        None => ctx::with(|cx| cx.dummy()),
    }
}

/// `f32.sum (map2 (*) a b)`: the dot product of two vectors.
pub fn dot(a: Tracer, b: Tracer) -> Tracer {
    map2(a, b, |x, y| x * y).sum()
}

/// `iota n`: `[0, 1, …, n-1]` (i64).
pub fn iota(n: impl Into<Operand>) -> Tracer {
    ctx::with(|cx| {
        let n = n.into().at(cx, PrimType::I64);
        let Some((s, _)) = cx.get(n) else {
            return cx.dummy();
        };
        cx.emit(1, |b| Ok(vec![SubExp::Var(b.iota(s))]))[0]
    })
}

/// `replicate n v`: an array of `n` copies of `v` (a scalar or an array).
pub fn replicate(n: impl Into<Operand>, v: Tracer) -> Tracer {
    ctx::with(|cx| {
        let n = n.into().at(cx, PrimType::I64);
        let (Some((sn, _)), Some((sv, _))) = (cx.get(n), cx.get(v)) else {
            return cx.dummy();
        };
        let op = BasicOp::Replicate(vec![sn], sv);
        cx.emit(1, |b| Ok(vec![b.let_basic("rep", op)?]))[0]
    })
}

impl Tracer {
    /// `map f self` over the rows (elements) of an array.
    pub fn map(self, f: impl FnOnce(Tracer) -> Tracer) -> Tracer {
        one(map_n(&[self], |xs| vec![f(xs[0])]))
    }

    /// `reduce op ne self` with an associative operator `op` and its neutral element `ne`
    /// (rows of the array are combined, so `ne` has the type of a row).
    pub fn reduce(
        self,
        ne: impl Into<Operand>,
        op: impl FnOnce(Tracer, Tracer) -> Tracer,
    ) -> Tracer {
        self.fold_with(ne.into(), op, false)
    }

    /// [`Tracer::reduce`] with an operator that is also commutative (`reduce_comm`).
    pub fn reduce_comm(
        self,
        ne: impl Into<Operand>,
        op: impl FnOnce(Tracer, Tracer) -> Tracer,
    ) -> Tracer {
        self.fold_with(ne.into(), op, true)
    }

    /// The same as [`Tracer::reduce`]: a parallel fold needs an associative operator.
    pub fn fold(self, ne: impl Into<Operand>, op: impl FnOnce(Tracer, Tracer) -> Tracer) -> Tracer {
        self.reduce(ne, op)
    }

    fn fold_with(
        self,
        ne: Operand,
        op: impl FnOnce(Tracer, Tracer) -> Tracer,
        commutative: bool,
    ) -> Tracer {
        let Some((w, vars, rows, ne)) = ctx::with(|cx| operator_inputs(cx, self, ne, "reduce"))
        else {
            return ctx::with(|cx| cx.dummy());
        };
        let Some(lam) = ctx::lambda(&[rows.clone(), rows], |xs| vec![op(xs[0], xs[1])]) else {
            return ctx::with(|cx| cx.dummy());
        };
        let exp = Exp::Soac(Soac::Reduce {
            w,
            arrs: vars,
            pre: None,
            lam,
            neutral: vec![ne],
            commutative,
        });
        ctx::with(|cx| cx.emit(1, |b| b.let1("red", exp).map(|r| vec![r]))[0])
    }

    /// Inclusive `scan op ne self`.
    pub fn scan(self, ne: impl Into<Operand>, op: impl FnOnce(Tracer, Tracer) -> Tracer) -> Tracer {
        let Some((w, vars, rows, ne)) =
            ctx::with(|cx| operator_inputs(cx, self, ne.into(), "scan"))
        else {
            return ctx::with(|cx| cx.dummy());
        };
        let Some(lam) = ctx::lambda(&[rows.clone(), rows], |xs| vec![op(xs[0], xs[1])]) else {
            return ctx::with(|cx| cx.dummy());
        };
        ctx::with(|cx| {
            cx.emit(1, |b| {
                let vs = b.scan("scanned", w, lam, vec![ne], vars)?;
                Ok(vs.into_iter().map(SubExp::Var).collect())
            })[0]
        })
    }

    /// The sum of the rows (`f32.sum` for a vector).
    pub fn sum(self) -> Tracer {
        self.reduce_comm(Operand::I(0), |a, b| a + b)
    }

    /// The largest element of a vector (`f32.maximum`: `-inf` when empty).
    pub fn maximum(self) -> Tracer {
        let t = self.elem();
        let ne = constant_prim(Prim::lowest(t));
        self.reduce_comm(ne, crate::max)
    }

    /// The smallest element of a vector (`inf` when empty).
    pub fn minimum(self) -> Tracer {
        let t = self.elem();
        let ne = constant_prim(Prim::highest(t));
        self.reduce_comm(ne, crate::min)
    }
}

fn constant_prim(p: Prim) -> Tracer {
    ctx::with(|cx| cx.new_val(SubExp::Const(p), Type::Prim(p.ty())))
}

/// The array, outer size and row type of a reduction or scan over `arr`, and its neutral
/// element: a literal becomes a constant of the element type, or an array of it filled
/// for rows that are arrays.
fn operator_inputs(
    cx: &mut Ctx,
    arr: Tracer,
    ne: Operand,
    what: &str,
) -> Option<(SubExp, Vec<VName>, Type, SubExp)> {
    let (w, vars, rows) = inputs(cx, &[arr], what)?;
    let row = rows[0].clone();
    let elem = row.elem()?;
    let ne = ne.at(cx, elem);
    let (s, t) = cx.get(ne)?;
    let ne = match (&row, &t) {
        (Type::Array { shape, .. }, Type::Prim(_)) => {
            let op = BasicOp::Replicate(shape.clone(), s);
            let v = cx.emit(1, |b| Ok(vec![b.let_basic("ne", op)?]))[0];
            cx.get(v)?.0
        }
        _ if t.rank() != row.rank() || t.elem() != row.elem() => {
            cx.fail(format!(
                "the neutral element of a {what} has the wrong type"
            ));
            return None;
        }
        _ => s,
    };
    Some((w, vars, row, ne))
}
