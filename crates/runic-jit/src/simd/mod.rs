//! SIMD code for maps over `f32` and `f64` vectors: 128-bit lanes (`F32X4`, `F64X2`), with
//! the scalar loop finishing what the vector loop leaves (the tail, and any group of lanes
//! the vector code cannot do exactly).
//!
//! A lambda is vectorised when every parameter and result has one float type `T` and its
//! body uses only values of type `T` and booleans (lane masks): `+ - * /`, comparisons,
//! `min`/`max`, `&&`/`||`/`!`, `neg`, `abs`, `sqrt`, `recip`, `floor`/`ceil`/`trunc`/`round`,
//! `isnan`/`isinf`, `mad`/`lerp`, conversions between `T` and `bool`, `exp`, `log`, `tanh`,
//! and `if`s of such bodies (both branches are computed, the lanes selected by the
//! condition: none of these operations can fail). Free scalars of type `T` or `bool` are
//! broadcast. Everything else keeps the scalar code.
//!
//! Arithmetic, comparisons, `min`/`max`, `sqrt` and rounding give exactly `runic_prim`'s
//! results (a group of lanes where `min`/`max` would have to choose between `0` and `-0`
//! leaves the vector loop, so the scalar code decides those as it always does). `exp`,
//! `log` and `tanh` are polynomials, evaluated with fused multiply-adds where the host has
//! them (so their last bit may differ between hosts with and without FMA, within the
//! bounds below); one algorithm for both lane types (module `math`: [`exp`], [`log`],
//! [`tanh`]). On `f64` lanes they are within 1, 1 and 4 ulp of std's; on `f32` lanes they
//! are computed in `f32`, within 1, 1 and 2 ulp of the correctly rounded result that
//! `runic_prim` gives (it computes in `f64` and rounds), where widening to `f64` took
//! twice the time. Measured
//! over random inputs and edge cases in `tests/simd.rs` (on hosts with FMA; without, each
//! polynomial step rounds twice); special values (±inf, 0, NaN, overflow, underflow,
//! subnormals) are std's and `runic_prim`'s exactly.

use crate::gen::ba;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::immediates::{Ieee32, Ieee64};
use cranelift_codegen::ir::{types, Endianness, InstBuilder, MemFlagsData, Type as CType, Value};
use cranelift_frontend::FunctionBuilder;
use runic_ir::*;
use std::collections::HashMap;

type R<T> = Result<T, String>;

mod fold;
mod math;
pub(crate) mod rows;
pub(crate) use fold::{vector_fold, Fold};
pub(crate) use math::{exp, log, tanh};

/// Whether SIMD code is generated: the host has 128-bit float vectors with the rounding
/// instructions (SSE4.1 on x86_64, NEON on aarch64), and `RUNIC_SIMD` is not `0`.
pub(crate) fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        if std::env::var("RUNIC_SIMD").is_ok_and(|v| v == "0") {
            return false;
        }
        #[cfg(target_arch = "x86_64")]
        {
            std::arch::is_x86_feature_detected!("sse4.1")
        }
        #[cfg(target_arch = "aarch64")]
        {
            true
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            false
        }
    })
}

/// How a vectorisable lambda runs: its element type and the lanes per vector.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan {
    pub elem: PrimType,
    pub lanes: i64,
    /// The parameters that are the element's index (bit `k`: parameter `k`), read by the
    /// body only through conversions to `elem`: their lanes are the indices converted,
    /// and they have no column.
    pub index: u64,
}

impl Plan {
    /// Whether parameter `k` is the element's index.
    pub(crate) fn is_index(self, k: usize) -> bool {
        k < 64 && self.index & (1 << k) != 0
    }
    /// The scalar type of a lane.
    pub(crate) fn elem_type(self) -> CType {
        if self.elem == PrimType::F32 {
            types::F32
        } else {
            types::F64
        }
    }
    fn vt(self) -> CType {
        if self.elem == PrimType::F32 {
            types::F32X4
        } else {
            types::F64X2
        }
    }
    fn mt(self) -> CType {
        if self.elem == PrimType::F32 {
            types::I32X4
        } else {
            types::I64X2
        }
    }
}

/// The plan of `lam` if its body can run in vector lanes (see the module comment); `free`
/// gives the type of a variable the lambda does not bind.
pub(crate) fn plan(lam: &Lambda, free: &dyn Fn(VName) -> Option<PrimType>) -> Option<Plan> {
    plan_indexed(lam, 0, free)
}

/// [`plan`] for a lambda whose parameters in `index` (bit `k`: parameter `k`, an `i64`)
/// are the element's index, which the body may only convert to the lanes' type.
pub(crate) fn plan_indexed(
    lam: &Lambda,
    index: u64,
    free: &dyn Fn(VName) -> Option<PrimType>,
) -> Option<Plan> {
    if !enabled() {
        return None;
    }
    let is_index = |k: usize| k < 64 && index & (1 << k) != 0;
    let elements = lam.params.iter().enumerate().filter(|(k, _)| !is_index(*k));
    let t = match elements.clone().map(|(_, p)| &p.ty).chain(&lam.ret).next() {
        Some(Type::Prim(t @ (PrimType::F32 | PrimType::F64))) => *t,
        _ => return None,
    };
    let is_t = |ty: &Type| matches!(ty, Type::Prim(p) if *p == t);
    let indices_i64 = (lam.params.iter().enumerate())
        .all(|(k, p)| !is_index(k) || p.ty == Type::Prim(PrimType::I64));
    if !elements.clone().all(|(_, p)| is_t(&p.ty)) || !lam.ret.iter().all(is_t) || !indices_i64 {
        return None;
    }
    // An index is the only `i64` in scope: the body's own bindings are of `t` or `bool`.
    let mut tys: HashMap<VName, PrimType> = (lam.params.iter().enumerate())
        .map(|(k, p)| (p.name, if is_index(k) { PrimType::I64 } else { t }))
        .collect();
    check_body(&lam.body, t, &mut tys, free)?;
    let results_t = lam
        .body
        .result
        .iter()
        .all(|r| sub_type(r, &tys, free) == Some(t));
    results_t.then_some(Plan {
        elem: t,
        lanes: if t == PrimType::F32 { 4 } else { 2 },
        index,
    })
}

fn sub_type(
    s: &SubExp,
    tys: &HashMap<VName, PrimType>,
    free: &dyn Fn(VName) -> Option<PrimType>,
) -> Option<PrimType> {
    match s {
        SubExp::Const(p) => Some(p.ty()),
        SubExp::Var(v) => tys.get(v).copied().or_else(|| free(*v)),
    }
}

/// The type of what `op` gives on lanes of `t` (or masks), if it is vectorised.
fn op_type(
    op: &BasicOp,
    t: PrimType,
    ty: &dyn Fn(&SubExp) -> Option<PrimType>,
) -> Option<PrimType> {
    use PrimType::Bool;
    let lane = |s: &SubExp| ty(s).filter(|&x| x == t || x == Bool);
    match op {
        BasicOp::SubExp(a) => lane(a),
        BasicOp::BinOp(o, a, b) => {
            let (ta, tb) = (lane(a)?, lane(b)?);
            if ta != tb {
                return None;
            }
            match o {
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Min | BinOp::Max
                    if ta == t =>
                {
                    Some(t)
                }
                BinOp::Eq | BinOp::Neq => Some(Bool),
                BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge if ta == t => Some(Bool),
                BinOp::LogAnd | BinOp::LogOr | BinOp::And | BinOp::Or | BinOp::Xor
                    if ta == Bool =>
                {
                    Some(Bool)
                }
                _ => None,
            }
        }
        BasicOp::UnOp(o, a) => {
            let ta = lane(a)?;
            match o {
                UnOp::Not if ta == Bool => Some(Bool),
                UnOp::IsNan | UnOp::IsInf if ta == t => Some(Bool),
                UnOp::Neg
                | UnOp::Abs
                | UnOp::Sqrt
                | UnOp::Recip
                | UnOp::Floor
                | UnOp::Ceil
                | UnOp::Trunc
                | UnOp::Round
                | UnOp::Exp
                | UnOp::Log
                | UnOp::Tanh
                    if ta == t =>
                {
                    Some(t)
                }
                _ => None,
            }
        }
        BasicOp::Convert(to, a) => {
            let ta = lane(a)?;
            (*to == t || *to == Bool)
                .then_some(*to)
                .filter(|_| ta == t || ta == Bool)
        }
        BasicOp::TernOp(TernOp::Mad | TernOp::Lerp, a, b, c) => {
            (lane(a)? == t && lane(b)? == t && lane(c)? == t).then_some(t)
        }
        _ => None,
    }
}

fn check_body(
    body: &Body,
    t: PrimType,
    tys: &mut HashMap<VName, PrimType>,
    free: &dyn Fn(VName) -> Option<PrimType>,
) -> Option<()> {
    for s in &body.stms {
        let pat: Vec<PrimType> = s
            .pat
            .iter()
            .map(|p| match p.ty {
                Type::Prim(x) if x == t || x == PrimType::Bool => Some(x),
                _ => None,
            })
            .collect::<Option<_>>()?;
        match &s.exp {
            // An index converted to the lanes' type: its lanes, as they are.
            Exp::Basic(BasicOp::Convert(to, SubExp::Var(a)))
                if tys.get(a) == Some(&PrimType::I64) =>
            {
                if *to != t || pat != [t] {
                    return None;
                }
            }
            Exp::Basic(op) => {
                let [pt] = pat[..] else { return None };
                let got = op_type(op, t, &|x| sub_type(x, tys, free))?;
                if got != pt {
                    return None;
                }
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                if sub_type(cond, tys, free)? != PrimType::Bool {
                    return None;
                }
                for b in [then_body, else_body] {
                    check_body(b, t, tys, free)?;
                    if b.result.len() != pat.len() {
                        return None;
                    }
                    for (r, pt) in b.result.iter().zip(&pat) {
                        if sub_type(r, tys, free)? != *pt {
                            return None;
                        }
                    }
                }
            }
            _ => return None,
        }
        for (p, pt) in s.pat.iter().zip(pat) {
            tys.insert(p.name, pt);
        }
    }
    Some(())
}

fn little() -> MemFlagsData {
    let mut f = MemFlagsData::new();
    f.set_endianness(Endianness::Little);
    f
}

/// Reinterprets the bits of vector `v` as vector type `to`.
fn vcast(b: &mut FunctionBuilder, to: CType, v: Value) -> Value {
    if b.func.dfg.value_type(v) == to {
        v
    } else {
        b.ins().bitcast(to, little(), v)
    }
}

fn splat_f64(b: &mut FunctionBuilder, x: f64) -> Value {
    let c = b.ins().f64const(Ieee64::with_bits(x.to_bits()));
    b.ins().splat(types::F64X2, c)
}

fn splat_f32(b: &mut FunctionBuilder, x: f32) -> Value {
    let c = b.ins().f32const(Ieee32::with_bits(x.to_bits()));
    b.ins().splat(types::F32X4, c)
}

/// `x` in every lane of a float vector of type `ty` (`F32X4`: rounded to `f32`).
fn splat_as(b: &mut FunctionBuilder, ty: CType, x: f64) -> Value {
    if ty == types::F32X4 {
        splat_f32(b, x as f32)
    } else {
        splat_f64(b, x)
    }
}

/// `m ? x : y` lane by lane (`m`: all ones or all zeros per lane, of any vector type).
fn select(b: &mut FunctionBuilder, m: Value, x: Value, y: Value) -> Value {
    let ty = b.func.dfg.value_type(x);
    let it = if ty.lane_bits() == 32 {
        types::I32X4
    } else {
        types::I64X2
    };
    let (m, xi, yi) = (vcast(b, it, m), vcast(b, it, x), vcast(b, it, y));
    let r = b.ins().bitselect(m, xi, yi);
    vcast(b, ty, r)
}

/// A value in lanes: `T` lanes, or a lane mask (all ones: true) of the same width.
#[derive(Clone, Copy)]
struct V {
    v: Value,
    mask: bool,
}

/// Emits a lambda's body on vectors of lanes.
struct VGen<'a, 'b> {
    b: &'a mut FunctionBuilder<'b>,
    plan: Plan,
    env: HashMap<VName, V>,
    /// Lanes for which the vector result is not `runic_prim`'s (all ones), if any.
    bail: Option<Value>,
}

impl<'a, 'b> VGen<'a, 'b> {
    /// Code on lanes outside a lambda (a fold's accumulators): no variables, no bails yet.
    fn bare(b: &'a mut FunctionBuilder<'b>, plan: Plan) -> Self {
        VGen {
            b,
            plan,
            env: HashMap::new(),
            bail: None,
        }
    }

    fn konst(&mut self, p: Prim) -> R<V> {
        let b = &mut self.b;
        Ok(match p {
            Prim::F32(x) => {
                let c = b.ins().f32const(Ieee32::with_bits(x.to_bits()));
                V {
                    v: b.ins().splat(types::F32X4, c),
                    mask: false,
                }
            }
            Prim::F64(x) => V {
                v: splat_f64(b, x),
                mask: false,
            },
            Prim::Bool(t) => {
                let lane = self.plan.mt().lane_type();
                let c = b.ins().iconst(lane, if t { -1 } else { 0 });
                V {
                    v: b.ins().splat(self.plan.mt(), c),
                    mask: true,
                }
            }
            _ => {
                return Err(format!(
                    "internal error: a {} constant in vector lanes",
                    p.ty()
                ))
            }
        })
    }

    fn opd(&mut self, s: &SubExp) -> R<V> {
        match s {
            SubExp::Const(p) => self.konst(*p),
            SubExp::Var(v) => self
                .env
                .get(v)
                .copied()
                .ok_or_else(|| format!("internal error: {v} is not in vector scope")),
        }
    }

    fn mask(&mut self, v: Value) -> V {
        V {
            v: vcast(self.b, self.plan.mt(), v),
            mask: true,
        }
    }

    fn lanes(&mut self, v: Value) -> V {
        V { v, mask: false }
    }

    fn body(&mut self, body: &Body) -> R<Vec<V>> {
        for s in &body.stms {
            self.stm(s)?;
        }
        body.result.iter().map(|r| self.opd(r)).collect()
    }

    fn stm(&mut self, s: &Stm) -> R<()> {
        let vals = match &s.exp {
            Exp::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                let c = self.opd(cond)?;
                let t = self.body(then_body)?;
                let e = self.body(else_body)?;
                t.iter()
                    .zip(&e)
                    .map(|(x, y)| V {
                        v: select(self.b, c.v, x.v, y.v),
                        mask: x.mask,
                    })
                    .collect()
            }
            Exp::Basic(op) => vec![self.basic(op)?],
            _ => return Err("internal error: a statement SIMD code does not do".into()),
        };
        for (p, v) in s.pat.iter().zip(vals) {
            self.env.insert(p.name, v);
        }
        Ok(())
    }

    fn basic(&mut self, op: &BasicOp) -> R<V> {
        Ok(match op {
            BasicOp::SubExp(a) => self.opd(a)?,
            BasicOp::BinOp(o @ (BinOp::Min | BinOp::Max), x, SubExp::Const(c))
            | BasicOp::BinOp(o @ (BinOp::Min | BinOp::Max), SubExp::Const(c), x)
                if c.as_float().is_some_and(|c| !c.is_nan()) =>
            {
                let (x, k) = (self.opd(x)?, self.opd(&SubExp::Const(*c))?);
                self.min_max_const(*o, x.v, k.v, c.as_float().unwrap_or(1.0))
            }
            BasicOp::BinOp(o, a, b) => {
                let (a, b) = (self.opd(a)?, self.opd(b)?);
                self.binop(*o, a, b)?
            }
            BasicOp::UnOp(o, a) => {
                let a = self.opd(a)?;
                self.unop(*o, a)?
            }
            BasicOp::Convert(to, a) => {
                let a = self.opd(a)?;
                match (a.mask, *to == PrimType::Bool) {
                    (true, true) | (false, false) => a,
                    (false, true) => {
                        let z = self.konst(Prim::float(self.plan.elem, 0.0))?.v;
                        let m = self.b.ins().fcmp(FloatCC::NotEqual, a.v, z);
                        self.mask(m)
                    }
                    (true, false) => {
                        let one = self.konst(Prim::float(self.plan.elem, 1.0))?.v;
                        let one = vcast(self.b, self.plan.mt(), one);
                        let r = self.b.ins().band(a.v, one);
                        let r = vcast(self.b, self.plan.vt(), r);
                        self.lanes(r)
                    }
                }
            }
            BasicOp::TernOp(o, a, b, c) => {
                let (a, b, c) = (self.opd(a)?, self.opd(b)?, self.opd(c)?);
                let bb = &mut self.b;
                let r = if *o == TernOp::Mad {
                    let p = bb.ins().fmul(a.v, b.v);
                    bb.ins().fadd(p, c.v)
                } else {
                    let d = bb.ins().fsub(b.v, a.v);
                    let p = bb.ins().fmul(d, c.v);
                    bb.ins().fadd(a.v, p)
                };
                self.lanes(r)
            }
            _ => return Err("internal error: an operation SIMD code does not do".into()),
        })
    }

    fn binop(&mut self, op: BinOp, x: V, y: V) -> R<V> {
        let b = &mut self.b;
        if x.mask {
            let r = match op {
                BinOp::LogAnd | BinOp::And => b.ins().band(x.v, y.v),
                BinOp::LogOr | BinOp::Or => b.ins().bor(x.v, y.v),
                BinOp::Xor | BinOp::Neq => b.ins().bxor(x.v, y.v),
                BinOp::Eq => {
                    let d = b.ins().bxor(x.v, y.v);
                    b.ins().bnot(d)
                }
                _ => return Err("internal error: a boolean operation".into()),
            };
            return Ok(V { v: r, mask: true });
        }
        let cmp = |cc| Some(cc);
        let cc = match op {
            BinOp::Eq => cmp(FloatCC::Equal),
            BinOp::Neq => cmp(FloatCC::NotEqual),
            BinOp::Lt => cmp(FloatCC::LessThan),
            BinOp::Le => cmp(FloatCC::LessThanOrEqual),
            BinOp::Gt => cmp(FloatCC::GreaterThan),
            BinOp::Ge => cmp(FloatCC::GreaterThanOrEqual),
            _ => None,
        };
        if let Some(cc) = cc {
            let m = b.ins().fcmp(cc, x.v, y.v);
            return Ok(self.mask(m));
        }
        let r = match op {
            BinOp::Add => b.ins().fadd(x.v, y.v),
            BinOp::Sub => b.ins().fsub(x.v, y.v),
            BinOp::Mul => b.ins().fmul(x.v, y.v),
            BinOp::Div => b.ins().fdiv(x.v, y.v),
            BinOp::Min | BinOp::Max => return Ok(self.min_max(op, x.v, y.v)),
            _ => return Err("internal error: a float operation".into()),
        };
        Ok(self.lanes(r))
    }

    /// runic_prim's `min`/`max`: a NaN operand gives the other one, and `-0 < 0`. `y`
    /// where it is larger (smaller) or `x` is NaN, else `x`; where the operands are equal
    /// (the result is `x` there) their bits are combined, `x & y` for `max` and `x | y` for
    /// `min`: the two zeros give `0` and `-0`, other equal values stay as they are.
    fn min_max(&mut self, op: BinOp, x: Value, y: Value) -> V {
        let mt = self.plan.mt();
        let b = &mut self.b;
        let y_better = if op == BinOp::Min {
            FloatCC::GreaterThan
        } else {
            FloatCC::LessThan
        };
        let better = b.ins().fcmp(y_better, x, y);
        let xn = b.ins().fcmp(FloatCC::NotEqual, x, x);
        let y_wins = b.ins().bor(better, xn);
        let r = select(b, y_wins, y, x);
        let eq = b.ins().fcmp(FloatCC::Equal, x, y);
        let (ri, yi, eq) = (vcast(b, mt, r), vcast(b, mt, y), vcast(b, mt, eq));
        let r = if op == BinOp::Min {
            // r | (eq & y)
            let add = b.ins().band(eq, yi);
            b.ins().bor(ri, add)
        } else {
            // r & ~(eq & ~y): r & y where equal, r elsewhere
            let clear = b.ins().band_not(eq, yi);
            b.ins().band_not(ri, clear)
        };
        let float = b.func.dfg.value_type(x);
        let r = vcast(b, float, r);
        self.lanes(r)
    }

    /// `min`/`max` with a constant `k` (of value `c`, not NaN; ReLU's `max 0 x`): `x` where it is
    /// larger (smaller), else `k` — which is also right where `x` is NaN, and where `x`
    /// equals `k` unless they are the two zeros and `k` is the wrong one (`-0` for `max`,
    /// `0` for `min`): then `x` wins ties too.
    fn min_max_const(&mut self, op: BinOp, x: Value, k: Value, c: f64) -> V {
        let x_wins_ties = c == 0.0 && (op == BinOp::Max) == c.is_sign_negative();
        let cc = match (op, x_wins_ties) {
            (BinOp::Max, false) => FloatCC::GreaterThan,
            (BinOp::Max, true) => FloatCC::GreaterThanOrEqual,
            (_, false) => FloatCC::LessThan,
            (_, true) => FloatCC::LessThanOrEqual,
        };
        let b = &mut self.b;
        let x_wins = b.ins().fcmp(cc, x, k);
        let r = select(b, x_wins, x, k);
        self.lanes(r)
    }

    /// Leaves the lanes of mask `m` to the scalar code (with those left before).
    fn leave(&mut self, m: Value) {
        self.bail = Some(match self.bail {
            Some(old) => self.b.ins().bor(old, m),
            None => m,
        });
    }

    /// `x ⊕ y` lane by lane, for a fold's operator.
    fn combine(&mut self, fold: Fold, x: Value, y: Value) -> Value {
        match fold {
            Fold::Add => self.b.ins().fadd(x, y),
            Fold::Min => self.min_max(BinOp::Min, x, y).v,
            Fold::Max => self.min_max(BinOp::Max, x, y).v,
        }
    }

    fn unop(&mut self, op: UnOp, x: V) -> R<V> {
        let b = &mut self.b;
        let r = match op {
            UnOp::Not => {
                let r = b.ins().bnot(x.v);
                return Ok(V { v: r, mask: true });
            }
            UnOp::IsNan => {
                let m = b.ins().fcmp(FloatCC::NotEqual, x.v, x.v);
                return Ok(self.mask(m));
            }
            UnOp::IsInf => {
                let a = b.ins().fabs(x.v);
                let inf = self.konst(Prim::float(self.plan.elem, f64::INFINITY))?.v;
                let m = self.b.ins().fcmp(FloatCC::Equal, a, inf);
                return Ok(self.mask(m));
            }
            UnOp::Neg => b.ins().fneg(x.v),
            UnOp::Abs => b.ins().fabs(x.v),
            UnOp::Sqrt => b.ins().sqrt(x.v),
            UnOp::Floor => b.ins().floor(x.v),
            UnOp::Ceil => b.ins().ceil(x.v),
            UnOp::Trunc => b.ins().trunc(x.v),
            UnOp::Round => b.ins().nearest(x.v),
            UnOp::Recip => {
                let one = self.konst(Prim::float(self.plan.elem, 1.0))?.v;
                self.b.ins().fdiv(one, x.v)
            }
            UnOp::Exp => exp(b, x.v),
            UnOp::Log => log(b, x.v),
            UnOp::Tanh => tanh(b, x.v),
            _ => return Err("internal error: a unary operation".into()),
        };
        Ok(self.lanes(r))
    }
}

/// Broadcasts the free scalars of type `plan.elem` or `bool` in `env` (emitted where the
/// caller is, so before the loop).
pub(crate) fn splat_env(
    b: &mut FunctionBuilder,
    plan: Plan,
    env: &HashMap<VName, (Value, PrimType)>,
    lam: &Lambda,
) -> HashMap<VName, (Value, bool)> {
    let used = runic_ir::traverse::free_vars(lam);
    let mut out = HashMap::new();
    for v in used {
        let Some(&(x, t)) = env.get(&v) else { continue };
        let x = crate::scalar::pinned_if_computed(b, x);
        if t == plan.elem {
            out.insert(v, (b.ins().splat(plan.vt(), x), false));
        } else if t == PrimType::Bool {
            let lane = plan.mt().lane_type();
            let w = b.ins().uextend(lane, x);
            let m = b.ins().ineg(w);
            out.insert(v, (b.ins().splat(plan.mt(), m), true));
        }
    }
    out
}

/// How [`vector_loop`] writes its results into the output columns.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Write {
    /// `outs[k][j] = r`.
    Store,
    /// `outs[k][j] = outs[k][j] + r` (an accumulator's row: each element is updated once
    /// per result, in the order of the results, so this is exactly the scalar update).
    Add,
}

/// Emits `for (j = from; j + lanes <= to; j += lanes) outs[k][j..] = lam(ins[..][j..])`
/// (contiguous columns at the addresses `ins` and `outs`, the broadcast free scalars
/// `frees`; `write` says whether results replace or are added to the outputs) and returns
/// the `j` it stops at: where the scalar code takes over, at the tail or at the first
/// group of lanes the vector code leaves to it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn vector_loop(
    b: &mut FunctionBuilder,
    plan: Plan,
    lam: &Lambda,
    frees: &HashMap<VName, (Value, bool)>,
    ins: &[Value],
    (outs, write): (&[Value], Write),
    from: Value,
    to: Value,
) -> R<Value> {
    // Bodies of a few statements are unrolled (see `lane_groups`); longer ones are
    // compute bound and would only grow the code.
    let unroll = if lam.body.stms.len() <= UNROLL_MAX_STMS {
        4
    } else {
        1
    };
    lane_groups(
        b,
        plan,
        (from, to),
        unroll,
        |b, off| lanes_body(b, plan, lam, frees, ins, off),
        |b, off, res| {
            for (r, base) in res.iter().zip(outs) {
                let a = b.ins().iadd(*base, off);
                let v = match write {
                    Write::Store => r.v,
                    Write::Add => {
                        let old = b.ins().load(plan.vt(), unaligned(), a, 0);
                        b.ins().fadd(old, r.v)
                    }
                };
                b.ins().store(unaligned(), v, a, 0);
            }
        },
    )
}

/// The most statements a lambda may have for its vector loop to be unrolled.
const UNROLL_MAX_STMS: usize = 8;

/// One application of a [`vector_chain`]'s lambda: the broadcast free scalars it sees and
/// the addresses of its parameters' columns (the first, the accumulator's, read only by
/// the first application).
pub(crate) struct ChainStep {
    pub frees: HashMap<VName, (Value, bool)>,
    pub ins: Vec<Value>,
}

/// Emits `for (j = from; j + lanes <= to; j += lanes) acc[j..] = lam(…lam(lam(acc[j..],
/// steps[0]…), steps[1]…)…)`: the steps of a column reduction one after another on the
/// same lanes, the accumulator (the lambda's first parameter, read from `acc` by the first
/// step) kept in a register between them. Where any step leaves lanes to the scalar code,
/// nothing is stored for that group and the loop stops there, so the scalar code runs
/// every step on it; returns the `j` the scalar code takes over from.
pub(crate) fn vector_chain(
    b: &mut FunctionBuilder,
    plan: Plan,
    lam: &Lambda,
    steps: &[ChainStep],
    acc: Value,
    from: Value,
    to: Value,
) -> R<Value> {
    let chain = |b: &mut FunctionBuilder, off| {
        let mut value = None;
        let mut bails = None;
        for step in steps {
            let (res, bail) = lanes_body_from(b, plan, lam, &step.frees, value, &step.ins, off)?;
            let [r] = &res[..] else {
                return Err("internal error: a chained step of several results".into());
            };
            value = Some(r.v);
            if let Some(m) = bail {
                bails = Some(match bails {
                    Some(old) => b.ins().bor(old, m),
                    None => m,
                });
            }
        }
        match value {
            Some(v) => Ok((v, bails)),
            None => Err("internal error: a chain of no steps".into()),
        }
    };
    lane_groups(b, plan, (from, to), 1, chain, |b, off, value| {
        let a = b.ins().iadd(acc, off);
        b.ins().store(unaligned(), value, a, 0);
    })
}

/// The loop over groups of lanes `for (j = from; j + lanes <= to; j += lanes)`: `group`
/// emits a group's code at byte offset `off` and returns its values and the lanes it
/// leaves to the scalar code, if any can be; `store` writes the values when no lane is
/// left, else the loop stops at that group. Returns the `j` it stops at.
///
/// With `unroll > 1`, `unroll` groups at a time come first while they last, then one at a
/// time: a body of a few instructions (a scaling, a mask, an outer product's row) was
/// otherwise half loop control, two taken branches per group.
fn lane_groups<T>(
    b: &mut FunctionBuilder,
    plan: Plan,
    (from, to): (Value, Value),
    unroll: i64,
    mut group: impl FnMut(&mut FunctionBuilder, Value) -> R<(T, Option<Value>)>,
    mut store: impl FnMut(&mut FunctionBuilder, Value, T),
) -> R<Value> {
    let i64t = types::I64;
    let rest = b.create_block();
    b.append_block_param(rest, i64t);
    // One group at `j`: its code, then to `rest` at `j` if it leaves lanes to the scalar
    // code, else stored.
    let mut one = |b: &mut FunctionBuilder, j: Value| -> R<()> {
        let off = byte_offset(b, plan, j);
        let (values, bail) = group(b, off)?;
        let store_block = b.create_block();
        match bail {
            Some(m) => {
                let any = b.ins().vany_true(m);
                b.ins().brif(any, rest, &ba(&[j]), store_block, &[]);
            }
            None => {
                b.ins().jump(store_block, &[]);
            }
        }
        b.switch_to_block(store_block);
        store(b, off, values);
        Ok(())
    };
    // `for (j = start; j + per·lanes <= to; j += per·lanes)` of `per` groups; returns
    // where it stopped.
    let mut groups_loop = |b: &mut FunctionBuilder, start: Value, per: i64| -> R<Value> {
        let header = b.create_block();
        b.append_block_param(header, i64t);
        let body = b.create_block();
        let after = b.create_block();
        b.append_block_param(after, i64t);
        b.ins().jump(header, &ba(&[start]));
        b.switch_to_block(header);
        let j = b.block_params(header)[0];
        let last = b.ins().iadd_imm_s(j, per * plan.lanes);
        let more = b.ins().icmp(IntCC::SignedLessThanOrEqual, last, to);
        b.ins().brif(more, body, &[], after, &ba(&[j]));
        b.switch_to_block(body);
        for u in 0..per {
            let ju = b.ins().iadd_imm_s(j, u * plan.lanes);
            one(b, ju)?;
        }
        b.ins().jump(header, &ba(&[last]));
        b.switch_to_block(after);
        Ok(b.block_params(after)[0])
    };
    let mut start = from;
    if unroll > 1 {
        start = groups_loop(b, start, unroll)?;
    }
    let stop = groups_loop(b, start, 1)?;
    b.ins().jump(rest, &ba(&[stop]));
    b.switch_to_block(rest);
    Ok(b.block_params(rest)[0])
}

fn unaligned() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

fn byte_offset(b: &mut FunctionBuilder, plan: Plan, j: Value) -> Value {
    let shift = plan.elem.size_bytes().trailing_zeros() as i64;
    b.ins().ishl_imm_u(j, shift)
}

/// The indices of the elements at byte offset `off`, converted to the lanes' type: the
/// lanes of a parameter that is the element's index, as its conversions read it (an
/// `f32` lane from 32-bit integers, exact while the index fits in an `i32`, which the
/// caller ensures; an `f64` lane from the `i64` itself).
fn index_lanes(b: &mut FunctionBuilder, plan: Plan, off: Value) -> Value {
    let shift = plan.elem.size_bytes().trailing_zeros() as i64;
    let j = b.ins().ushr_imm_u(off, shift);
    let steps: Vec<u8> = if plan.elem == PrimType::F32 {
        [0i32, 1, 2, 3]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect()
    } else {
        [0i64, 1].iter().flat_map(|x| x.to_le_bytes()).collect()
    };
    let steps = b.func.dfg.constants.insert(steps.into());
    if plan.elem == PrimType::F32 {
        let steps = b.ins().vconst(types::I32X4, steps);
        let j = b.ins().ireduce(types::I32, j);
        let js = b.ins().splat(types::I32X4, j);
        let is = b.ins().iadd(js, steps);
        b.ins().fcvt_from_sint(types::F32X4, is)
    } else {
        let steps = b.ins().vconst(types::I64X2, steps);
        let js = b.ins().splat(types::I64X2, j);
        let is = b.ins().iadd(js, steps);
        b.ins().fcvt_from_sint(types::F64X2, is)
    }
}

/// The lanes of the elements at byte offset `off` of the columns `ins` through `lam`:
/// its results, and the lanes to leave to the scalar code, if any can be.
fn lanes_body(
    b: &mut FunctionBuilder,
    plan: Plan,
    lam: &Lambda,
    frees: &HashMap<VName, (Value, bool)>,
    ins: &[Value],
    off: Value,
) -> R<(Vec<V>, Option<Value>)> {
    lanes_body_from(b, plan, lam, frees, None, ins, off)
}

/// [`lanes_body`] with the first parameter's lanes `first` when given (its column in `ins`
/// then not read).
fn lanes_body_from(
    b: &mut FunctionBuilder,
    plan: Plan,
    lam: &Lambda,
    frees: &HashMap<VName, (Value, bool)>,
    first: Option<Value>,
    ins: &[Value],
    off: Value,
) -> R<(Vec<V>, Option<Value>)> {
    let mut env: HashMap<VName, V> = frees
        .iter()
        .map(|(k, &(v, mask))| (*k, V { v, mask }))
        .collect();
    for (k, (p, base)) in lam.params.iter().zip(ins).enumerate() {
        if let (0, Some(v)) = (k, first) {
            env.insert(p.name, V { v, mask: false });
            continue;
        }
        if plan.is_index(k) {
            let v = index_lanes(b, plan, off);
            env.insert(p.name, V { v, mask: false });
            continue;
        }
        let a = b.ins().iadd(*base, off);
        let x = b.ins().load(plan.vt(), unaligned(), a, 0);
        env.insert(p.name, V { v: x, mask: false });
    }
    let mut g = VGen {
        b,
        plan,
        env,
        bail: None,
    };
    let res = g.body(&lam.body)?;
    Ok((res, g.bail))
}
