//! The statement builder: fresh names, binding expressions, nested bodies and lambdas, so
//! that transformations producing IR stay short.
//!
//! The builder records the type of every variable it binds in the [`NameSource`], and the
//! typed operations (`let_exp`, `op2`, `map`, `if_else`, …) compute the types of what they
//! bind from their operands (see [`crate::typing`]), so a rule names no types it does not
//! choose. The untyped forms (`bind`, `binop`, `lambda`) take types explicitly, for the
//! few results whose shapes are computed at run time.

use crate::ir::*;
use crate::traverse::binders;
use crate::typing::{exp_types, prim_type, subexp_type, TResult, TypeError};

/// The result type of a binary operator applied to operands of type `t`.
pub fn binop_type(op: BinOp, t: PrimType) -> PrimType {
    match op {
        BinOp::Eq | BinOp::Neq | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => PrimType::Bool,
        BinOp::GetBit => PrimType::I32,
        _ => t,
    }
}

/// The result type of a unary operator applied to an operand of type `t`.
pub fn unop_type(op: UnOp, t: PrimType) -> PrimType {
    match op {
        UnOp::Popc | UnOp::Clz | UnOp::Ctz => PrimType::I32,
        UnOp::IsInf | UnOp::IsNan => PrimType::Bool,
        UnOp::ToBits => match t {
            PrimType::F16 => PrimType::U16,
            PrimType::F32 => PrimType::U32,
            PrimType::F64 => PrimType::U64,
            t => t,
        },
        UnOp::FromBits => match t {
            PrimType::U16 | PrimType::I16 => PrimType::F16,
            PrimType::U32 | PrimType::I32 => PrimType::F32,
            PrimType::U64 | PrimType::I64 => PrimType::F64,
            t => t,
        },
        _ => t,
    }
}

/// `false && b`, `true && b`, `true || b` and `false || b` (either way round) without a
/// statement: the derivative table's NaN cases of an operand that is a constant, such as
/// a ReLU's `0`, vanish this way.
fn logic_identity(op: BinOp, a: &SubExp, b: &SubExp) -> Option<SubExp> {
    let (k, other) = match (a, b) {
        (SubExp::Const(Prim::Bool(k)), o) | (o, SubExp::Const(Prim::Bool(k))) => (*k, o),
        _ => return None,
    };
    match (op, k) {
        (BinOp::LogAnd, false) | (BinOp::LogOr, true) => Some(SubExp::Const(Prim::Bool(k))),
        (BinOp::LogAnd, true) | (BinOp::LogOr, false) => Some(other.clone()),
        _ => None,
    }
}

/// Collects statements. Nested bodies (branches, loop bodies, lambdas) are built with
/// sub-builders that share the same [`NameSource`].
pub struct Builder<'a> {
    pub names: &'a mut NameSource,
    stms: Vec<Stm>,
    /// Source information given to every statement added from now on.
    pub src: SrcInfo,
}

impl<'a> Builder<'a> {
    pub fn new(names: &'a mut NameSource) -> Self {
        Builder {
            names,
            stms: Vec::new(),
            src: SrcInfo::default(),
        }
    }

    pub fn fresh(&mut self, hint: &str) -> VName {
        self.names.fresh(hint)
    }

    /// A fresh parameter of type `ty` (its type is recorded).
    pub fn param(&mut self, hint: &str, ty: Type) -> Param {
        Param {
            name: self.names.fresh_typed(hint, ty.clone()),
            ty,
        }
    }

    /// Add a statement as is (the types of its binders are recorded).
    pub fn add(&mut self, stm: Stm) {
        self.names.record_types(&stm);
        self.stms.push(stm);
    }

    pub fn stms(&self) -> &[Stm] {
        &self.stms
    }

    /// Bind `exp` to fresh variables of the given types.
    pub fn bind(&mut self, exp: Exp, types: Vec<Type>) -> Vec<VName> {
        let hints = vec!["t"; types.len()];
        self.bind_named(&hints, exp, types)
    }

    /// Bind `exp` to fresh variables with the given name hints (the last hint is reused if
    /// there are fewer hints than types).
    pub fn bind_named(&mut self, hints: &[&str], exp: Exp, types: Vec<Type>) -> Vec<VName> {
        let pat: Vec<Param> = types
            .into_iter()
            .enumerate()
            .map(|(i, ty)| {
                let h = hints.get(i).or(hints.last()).copied().unwrap_or("t");
                self.param(h, ty)
            })
            .collect();
        let names = pat.iter().map(|p| p.name).collect();
        self.stms.push(Stm {
            pat,
            exp,
            src: self.src.clone(),
        });
        names
    }

    /// Bind `exp` (of one result) to a fresh variable.
    pub fn bind1(&mut self, hint: &str, exp: Exp, ty: Type) -> VName {
        self.bind_named(&[hint], exp, vec![ty])[0]
    }

    /// Bind a basic operation of one result; returns it as an operand.
    pub fn basic(&mut self, hint: &str, op: BasicOp, ty: Type) -> SubExp {
        SubExp::Var(self.bind1(hint, Exp::Basic(op), ty))
    }

    /// `a op b` where both operands have primitive type `t`; constant operands are folded
    /// when that cannot fail.
    pub fn binop(&mut self, op: BinOp, a: SubExp, b: SubExp, t: PrimType) -> SubExp {
        if let (SubExp::Const(x), SubExp::Const(y)) = (&a, &b) {
            if let Ok(r) = runic_prim::binop(op, *x, *y) {
                return SubExp::Const(r);
            }
        }
        if let Some(r) = logic_identity(op, &a, &b) {
            return r;
        }
        let rt = binop_type(op, t);
        self.basic("b", BasicOp::BinOp(op, a, b), Type::Prim(rt))
    }

    pub fn unop(&mut self, op: UnOp, a: SubExp, t: PrimType) -> SubExp {
        let rt = unop_type(op, t);
        self.basic("u", BasicOp::UnOp(op, a), Type::Prim(rt))
    }

    pub fn convert(&mut self, to: PrimType, a: SubExp) -> SubExp {
        if let SubExp::Const(x) = &a {
            return SubExp::Const(runic_prim::convert(*x, to));
        }
        self.basic("c", BasicOp::Convert(to, a), Type::Prim(to))
    }

    /// `i64` addition, subtraction and multiplication (sizes and indices).
    pub fn add_i64(&mut self, a: SubExp, b: SubExp) -> SubExp {
        self.binop(BinOp::Add, a, b, PrimType::I64)
    }
    pub fn sub_i64(&mut self, a: SubExp, b: SubExp) -> SubExp {
        self.binop(BinOp::Sub, a, b, PrimType::I64)
    }
    pub fn mul_i64(&mut self, a: SubExp, b: SubExp) -> SubExp {
        self.binop(BinOp::Mul, a, b, PrimType::I64)
    }

    /// The size of dimension `dim` of `arr`, read from its type when given.
    pub fn array_size(&mut self, arr: VName, dim: usize) -> SubExp {
        self.basic("d", BasicOp::ArraySize(arr, dim), Type::Prim(PrimType::I64))
    }

    /// Build a nested body with a sub-builder; `f` returns the body's result.
    pub fn body(&mut self, f: impl FnOnce(&mut Builder) -> Vec<SubExp>) -> Body {
        let src = self.src.clone();
        let mut sub = Builder::new(self.names);
        sub.src = src;
        let result = f(&mut sub);
        Body {
            stms: sub.stms,
            result,
        }
    }

    /// A lambda with fresh parameters of the given (hint, type); `f` gets the parameter
    /// names and returns the results.
    pub fn lambda(
        &mut self,
        params: Vec<(&str, Type)>,
        ret: Vec<Type>,
        f: impl FnOnce(&mut Builder, &[VName]) -> Vec<SubExp>,
    ) -> Lambda {
        let params: Vec<Param> = params.into_iter().map(|(h, t)| self.param(h, t)).collect();
        let names: Vec<VName> = params.iter().map(|p| p.name).collect();
        let body = self.body(|b| f(b, &names));
        Lambda::new(params, body, ret)
    }

    /// `if cond then … else …` with results of types `ret`.
    pub fn if_(
        &mut self,
        cond: SubExp,
        ret: Vec<Type>,
        then_f: impl FnOnce(&mut Builder) -> Vec<SubExp>,
        else_f: impl FnOnce(&mut Builder) -> Vec<SubExp>,
    ) -> Vec<VName> {
        let then_body = self.body(then_f);
        let else_body = self.body(else_f);
        self.bind(
            Exp::If {
                cond,
                then_body,
                else_body,
                ret: ret.clone(),
            },
            ret,
        )
    }

    // ----------------------------------------------------------------------------------
    // Typed construction: result types come from the operands.

    /// The type of an operand.
    pub fn type_of(&self, s: &SubExp) -> TResult<Type> {
        subexp_type(&*self.names, s)
    }

    /// The primitive type of a scalar operand.
    pub fn prim_of(&self, s: &SubExp) -> TResult<PrimType> {
        prim_type(&*self.names, s)
    }

    /// Bind `exp` to fresh variables named after `hint`, of the types it computes.
    pub fn let_exp(&mut self, hint: &str, exp: Exp) -> TResult<Vec<VName>> {
        let types = exp_types(&*self.names, &exp)?;
        Ok(self.bind_named(&[hint], exp, types))
    }

    /// Bind an expression of one result; returns it as an operand.
    pub fn let1(&mut self, hint: &str, exp: Exp) -> TResult<SubExp> {
        match self.let_exp(hint, exp)?.as_slice() {
            [v] => Ok(SubExp::Var(*v)),
            vs => Err(TypeError(format!("let1 of {} results", vs.len()))),
        }
    }

    /// Bind a basic operation of one result.
    pub fn let_basic(&mut self, hint: &str, op: BasicOp) -> TResult<SubExp> {
        self.let1(hint, Exp::Basic(op))
    }

    /// `a op b` at the operands' type (constants folded when that cannot fail).
    pub fn op2(&mut self, op: BinOp, a: SubExp, b: SubExp) -> TResult<SubExp> {
        let t = self.prim_of(&a)?;
        let u = self.prim_of(&b)?;
        if t != u && !matches!(op, BinOp::Ldexp | BinOp::GetBit) {
            return Err(TypeError(format!("{op:?} of {t} and {u}")));
        }
        Ok(self.binop(op, a, b, t))
    }
    pub fn add_(&mut self, a: SubExp, b: SubExp) -> TResult<SubExp> {
        self.op2(BinOp::Add, a, b)
    }
    pub fn sub_(&mut self, a: SubExp, b: SubExp) -> TResult<SubExp> {
        self.op2(BinOp::Sub, a, b)
    }
    pub fn mul_(&mut self, a: SubExp, b: SubExp) -> TResult<SubExp> {
        self.op2(BinOp::Mul, a, b)
    }

    /// `op a` at the operand's type.
    pub fn op1(&mut self, op: UnOp, a: SubExp) -> TResult<SubExp> {
        let t = self.prim_of(&a)?;
        Ok(self.unop(op, a, t))
    }

    /// `if c then a else b` on operands (a `select`; a constant condition is folded).
    pub fn select(&mut self, c: SubExp, a: SubExp, b: SubExp) -> TResult<SubExp> {
        if let SubExp::Const(Prim::Bool(k)) = c {
            return Ok(if k { a } else { b });
        }
        let t = self.type_of(&a)?;
        let r = self.if_(c, vec![t], |_| vec![a], |_| vec![b]);
        Ok(SubExp::Var(r[0]))
    }

    /// The types of a nested body's results, which must not name variables bound inside
    /// the body (such results need explicit types: use the untyped forms).
    fn result_types(&self, body: &Body) -> TResult<Vec<Type>> {
        let inner = binders(body);
        body.result
            .iter()
            .map(|r| {
                let t = self.type_of(r)?;
                if crate::traverse::uses(&t).iter().any(|v| inner.contains(v)) {
                    return Err(TypeError(format!(
                        "a result's shape {t:?} is computed inside its body"
                    )));
                }
                Ok(t)
            })
            .collect()
    }

    /// A nested body whose builder reports type errors.
    pub fn body_try<E>(
        &mut self,
        f: impl FnOnce(&mut Builder) -> Result<Vec<SubExp>, E>,
    ) -> Result<Body, E> {
        let src = self.src.clone();
        let mut sub = Builder::new(self.names);
        sub.src = src;
        let result = f(&mut sub)?;
        Ok(Body {
            stms: sub.stms,
            result,
        })
    }

    /// A lambda with fresh parameters of the given (hint, type); its result types are
    /// those of the results `f` returns.
    pub fn lam<E: From<TypeError>>(
        &mut self,
        params: Vec<(&str, Type)>,
        f: impl FnOnce(&mut Builder, &[SubExp]) -> Result<Vec<SubExp>, E>,
    ) -> Result<Lambda, E> {
        let params: Vec<Param> = params.into_iter().map(|(h, t)| self.param(h, t)).collect();
        let args: Vec<SubExp> = params.iter().map(|p| SubExp::Var(p.name)).collect();
        let body = self.body_try(|b| f(b, &args))?;
        let ret = self.result_types(&body)?;
        Ok(Lambda::new(params, body, ret))
    }

    /// `if c then … else …`; the result types are those of the `then` branch.
    pub fn if_else<E: From<TypeError>>(
        &mut self,
        cond: SubExp,
        then_f: impl FnOnce(&mut Builder) -> Result<Vec<SubExp>, E>,
        else_f: impl FnOnce(&mut Builder) -> Result<Vec<SubExp>, E>,
    ) -> Result<Vec<SubExp>, E> {
        self.let_if("t", cond, then_f, else_f)
    }

    /// `map lam arrs` over the outer dimension `w` of the arrays.
    pub fn map(
        &mut self,
        hint: &str,
        w: SubExp,
        lam: Lambda,
        arrs: Vec<VName>,
    ) -> TResult<Vec<VName>> {
        self.let_exp(hint, Exp::Soac(Soac::Map { w, lam, arrs }))
    }

    /// `reduce lam neutral arrs` (not known to be commutative).
    pub fn reduce(
        &mut self,
        hint: &str,
        w: SubExp,
        lam: Lambda,
        neutral: Vec<SubExp>,
        arrs: Vec<VName>,
    ) -> TResult<Vec<SubExp>> {
        self.reduce_with(hint, w, lam, neutral, arrs, false)
    }

    fn reduce_with(
        &mut self,
        hint: &str,
        w: SubExp,
        lam: Lambda,
        neutral: Vec<SubExp>,
        arrs: Vec<VName>,
        commutative: bool,
    ) -> TResult<Vec<SubExp>> {
        let exp = Exp::Soac(Soac::Reduce {
            w,
            arrs,
            pre: None,
            lam,
            neutral,
            commutative,
        });
        let vs = self.let_exp(hint, exp)?;
        Ok(vs.into_iter().map(SubExp::Var).collect())
    }

    /// Inclusive `scan lam neutral arrs`.
    pub fn scan(
        &mut self,
        hint: &str,
        w: SubExp,
        lam: Lambda,
        neutral: Vec<SubExp>,
        arrs: Vec<VName>,
    ) -> TResult<Vec<VName>> {
        let exp = Exp::Soac(Soac::Scan {
            w,
            arrs,
            pre: None,
            lam,
            neutral,
        });
        self.let_exp(hint, exp)
    }

    /// `arr[i]` (a row or an element).
    pub fn index1(&mut self, arr: VName, i: SubExp) -> TResult<SubExp> {
        self.let_basic("e", BasicOp::Index(arr, vec![DimIndex::Fix(i)]))
    }

    /// An array of the given shape filled with `v`.
    pub fn replicate(&mut self, shape: Vec<SubExp>, v: SubExp) -> TResult<VName> {
        let op = BasicOp::Replicate(shape, v);
        Ok(self.let_exp("rep", Exp::Basic(op))?[0])
    }

    /// The operator `\x y -> x op y` at the scalar type `t`.
    pub fn binop_lam(&mut self, op: BinOp, t: PrimType) -> Lambda {
        binop_lambda(self.names, op, t)
    }

    /// Finish into a body with the given result.
    pub fn finish(self, result: Vec<SubExp>) -> Body {
        Body {
            stms: self.stms,
            result,
        }
    }

    /// Take the statements collected so far.
    pub fn take_stms(&mut self) -> Vec<Stm> {
        std::mem::take(&mut self.stms)
    }

    // ----------------------------------------------------------------------------------
    // Combinators added for runic-lower (issue 12).

    /// `a` as a value of type `to`: `a` itself when it already has that type, else a
    /// conversion (of a constant, folded).
    pub fn convert_to(&mut self, to: PrimType, a: SubExp) -> TResult<SubExp> {
        if a.as_var().is_some() && self.prim_of(&a)? == to {
            return Ok(a);
        }
        Ok(self.convert(to, a))
    }

    // End of the combinators added for runic-lower.
    // ----------------------------------------------------------------------------------
}

/// The commutative, associative binary operator `op` at scalar type `t` as a lambda
/// (e.g. `\x y -> x + y` for sums).
pub fn binop_lambda(names: &mut NameSource, op: BinOp, t: PrimType) -> Lambda {
    let mut b = Builder::new(names);
    let rt = Type::Prim(binop_type(op, t));
    b.lambda(
        vec![("x", Type::Prim(t)), ("y", Type::Prim(t))],
        vec![rt],
        |b, ps| {
            let r = b.binop(op, SubExp::Var(ps[0]), SubExp::Var(ps[1]), t);
            vec![r]
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binds_fresh_names_and_folds_constants() {
        let mut names = NameSource::default();
        let mut b = Builder::new(&mut names);
        let x = b.fresh("x");
        let r = b.binop(BinOp::Add, SubExp::i64(2), SubExp::i64(3), PrimType::I64);
        assert_eq!(r, SubExp::i64(5));
        let s = b.binop(BinOp::Lt, SubExp::Var(x), SubExp::i64(3), PrimType::I64);
        let body = b.finish(vec![s.clone()]);
        assert_eq!(body.stms.len(), 1);
        assert_eq!(body.stms[0].pat[0].ty, Type::Prim(PrimType::Bool));
        assert_ne!(s.as_var(), Some(x));
    }

    #[test]
    fn logic_with_a_constant_operand_needs_no_statement() {
        let mut names = NameSource::default();
        let mut b = Builder::new(&mut names);
        let v = SubExp::Var(b.param("v", Type::Prim(PrimType::Bool)).name);
        let (t, f) = (
            SubExp::Const(Prim::Bool(true)),
            SubExp::Const(Prim::Bool(false)),
        );
        let bool_ = PrimType::Bool;
        for (a, c) in [(v.clone(), f.clone()), (f.clone(), v.clone())] {
            assert_eq!(b.binop(BinOp::LogAnd, a.clone(), c.clone(), bool_), f);
            assert_eq!(b.binop(BinOp::LogOr, a, c, bool_), v);
        }
        for (a, c) in [(v.clone(), t.clone()), (t.clone(), v.clone())] {
            assert_eq!(b.binop(BinOp::LogAnd, a.clone(), c.clone(), bool_), v);
            assert_eq!(b.binop(BinOp::LogOr, a, c, bool_), t);
        }
        assert!(b.stms().is_empty());
        // Other operators with a constant operand still make a statement.
        let x = b.binop(BinOp::Eq, v.clone(), t, bool_);
        assert!(x.as_var().is_some());
        assert_eq!(b.stms().len(), 1);
    }

    #[test]
    fn lambda_and_if_nest_bodies() {
        let mut names = NameSource::default();
        let mut b = Builder::new(&mut names);
        let lam = b.lambda(
            vec![("x", Type::Prim(PrimType::F32))],
            vec![Type::Prim(PrimType::F32)],
            |b, ps| {
                let c = b.binop(
                    BinOp::Gt,
                    SubExp::Var(ps[0]),
                    SubExp::Const(Prim::F32(0.0)),
                    PrimType::F32,
                );
                let r = b.if_(
                    c,
                    vec![Type::Prim(PrimType::F32)],
                    |_| vec![SubExp::Var(ps[0])],
                    |_| vec![SubExp::Const(Prim::F32(0.0))],
                );
                vec![SubExp::Var(r[0])]
            },
        );
        assert_eq!(lam.params.len(), 1);
        assert_eq!(lam.body.stms.len(), 2);
        assert!(matches!(lam.body.stms[1].exp, Exp::If { .. }));
        assert!(b.stms().is_empty());
    }

    #[test]
    fn convert_to_skips_conversions_to_the_same_type() {
        let mut names = NameSource::default();
        let mut b = Builder::new(&mut names);
        let x = SubExp::Var(b.param("x", Type::Prim(PrimType::I64)).name);
        assert_eq!(b.convert_to(PrimType::I64, x.clone()).unwrap(), x);
        let y = b.convert_to(PrimType::I32, x).unwrap();
        assert_eq!(b.prim_of(&y).unwrap(), PrimType::I32);
        let c = b
            .convert_to(PrimType::I64, SubExp::Const(Prim::I32(3)))
            .unwrap();
        assert_eq!(c, SubExp::i64(3));
        assert_eq!(b.stms().len(), 1);
    }
}

// ======================================================================================
// Added for forward-mode AD (runic-ad/src/fwd): binding a given pattern, and a lambda over
// parameters made beforehand. General: nothing here knows about AD.

impl Builder<'_> {
    /// Bind `exp` to the given pattern (its types recorded), with the builder's source
    /// information: for rules that keep the pattern of the statement they rewrite.
    pub fn let_pat(&mut self, pat: Vec<Param>, exp: Exp) {
        let src = self.src.clone();
        self.add(Stm { pat, exp, src });
    }

    /// Bind `exp` to fresh variables with the given name hints (one per result; the last
    /// is reused if there are fewer), of the types it computes.
    pub fn let_named(&mut self, hints: &[&str], exp: Exp) -> TResult<Vec<VName>> {
        let types = exp_types(&*self.names, &exp)?;
        Ok(self.bind_named(hints, exp, types))
    }

    /// A lambda over `params` (made beforehand, e.g. with [`Builder::param`], when their
    /// number or names are decided before the body is built); its result types are those
    /// of the results `f` returns, as with [`Builder::lam`].
    pub fn lam_over<E: From<TypeError>>(
        &mut self,
        params: Vec<Param>,
        f: impl FnOnce(&mut Builder) -> Result<Vec<SubExp>, E>,
    ) -> Result<Lambda, E> {
        let body = self.body_try(f)?;
        let ret = self.result_types(&body)?;
        Ok(Lambda::new(params, body, ret))
    }
}

#[cfg(test)]
mod fwd_additions_tests {
    use super::*;

    #[test]
    fn let_pat_binds_the_given_pattern_with_the_builders_source() {
        let mut names = NameSource::default();
        let mut b = Builder::new(&mut names);
        b.src.stripmine = Some(3);
        let p = Param {
            name: b.fresh("p"),
            ty: Type::Prim(PrimType::I64),
        };
        b.let_pat(vec![p.clone()], Exp::Basic(BasicOp::SubExp(SubExp::i64(1))));
        let body = b.finish(vec![SubExp::Var(p.name)]);
        assert_eq!(body.stms[0].pat, vec![p.clone()]);
        assert_eq!(body.stms[0].src.stripmine, Some(3));
        assert_eq!(names.type_of(p.name), Some(&Type::Prim(PrimType::I64)));
    }

    #[test]
    fn lam_over_infers_result_types_over_given_parameters() {
        let mut names = NameSource::default();
        let mut b = Builder::new(&mut names);
        let x = b.param("x", Type::Prim(PrimType::F32));
        let lam = b
            .lam_over(vec![x.clone()], |b| {
                let c = b.op2(
                    BinOp::Lt,
                    SubExp::Var(x.name),
                    SubExp::Const(Prim::F32(1.0)),
                )?;
                Ok::<_, TypeError>(vec![SubExp::Var(x.name), c])
            })
            .unwrap();
        assert_eq!(lam.params, vec![x]);
        assert_eq!(
            lam.ret,
            vec![Type::Prim(PrimType::F32), Type::Prim(PrimType::Bool)]
        );
        // A result whose shape is bound inside the body has no type outside it.
        let n = b.param("n", Type::Prim(PrimType::I64));
        let bad = b.lam_over(vec![n.clone()], |b| {
            let m = b.add_(SubExp::Var(n.name), SubExp::i64(1))?;
            let r = b.replicate(vec![m], SubExp::i64(0))?;
            Ok::<_, TypeError>(vec![SubExp::Var(r)])
        });
        assert!(bad.is_err());
    }

    #[test]
    fn let_named_names_each_result() {
        let mut names = NameSource::default();
        let mut b = Builder::new(&mut names);
        let n = b.param("n", Type::Prim(PrimType::I64));
        let x = b.param("x", Type::Prim(PrimType::F32));
        let lam = b
            .lam(vec![("i", Type::Prim(PrimType::I64))], |_, is| {
                Ok::<_, TypeError>(vec![is[0].clone(), SubExp::Var(x.name)])
            })
            .unwrap();
        let iota = b.param(
            "iota",
            Type::Prim(PrimType::I64).array_of(SubExp::Var(n.name)),
        );
        let exp = Exp::Soac(Soac::Map {
            w: SubExp::Var(n.name),
            lam,
            arrs: vec![iota.name],
        });
        let vs = b.let_named(&["is", "xs"], exp).unwrap();
        assert_eq!(b.names.hint(vs[0]), "is");
        assert_eq!(b.names.hint(vs[1]), "xs");
        let xs_ty = Type::Prim(PrimType::F32).array_of(SubExp::Var(n.name));
        assert_eq!(b.names.type_of(vs[1]), Some(&xs_ty));
    }
}
// End of the block added for forward-mode AD.
// ======================================================================================

// =======================================================================================
// Added for reverse-mode AD (branch wt-rev): iota, reversed rows, renamed copies and
// inlining of lambdas, maps of lambdas built in place, commutative reduces, branches with
// a name hint, zeros of a type (binding to a given pattern is `let_pat`, above).

impl Builder<'_> {
    /// `iota n`: the `i64` array `[0, 1, …, n-1]`.
    pub fn iota(&mut self, n: SubExp) -> VName {
        let ty = Type::Prim(PrimType::I64).array_of(n.clone());
        let range = BasicOp::Range {
            start: SubExp::i64(0),
            second: Some(SubExp::i64(1)),
            end: n,
            kind: RangeKind::UpToExclusive,
            elem: PrimType::I64,
        };
        self.bind1("iota", Exp::Basic(range), ty)
    }

    /// The rows of `arr` in reverse order (`arr[::-1]`); `w` is its outer size.
    pub fn reverse(&mut self, w: SubExp, arr: VName) -> TResult<VName> {
        let mut ty = subexp_type(&*self.names, &SubExp::Var(arr))?;
        match &mut ty {
            Type::Array { shape, .. } => shape[0] = w,
            t => return Err(TypeError(format!("reversing {t:?}"))),
        }
        let idx = vec![DimIndex::Slice {
            start: None,
            end: None,
            stride: Some(SubExp::i64(-1)),
        }];
        Ok(self.bind1("rev", Exp::Basic(BasicOp::Index(arr, idx)), ty))
    }

    /// A copy of `lam` with fresh binders (their types recorded) and a fresh id, to live in
    /// the same function as the original.
    pub fn renamed(&mut self, lam: &Lambda) -> Lambda {
        use crate::traverse::VisitorMut;
        let mut l = lam.clone();
        crate::traverse::Renamer::new(self.names).lambda(&mut l);
        self.names.record_types(&l);
        l
    }

    /// `lam args` inlined: a renamed copy's parameters bound to `args`, its statements
    /// added; returns its results.
    pub fn inline(&mut self, lam: &Lambda, args: &[SubExp]) -> Vec<SubExp> {
        let l = self.renamed(lam);
        for (p, a) in l.params.into_iter().zip(args) {
            self.let_pat(vec![p], Exp::Basic(BasicOp::SubExp(a.clone())));
        }
        for s in l.body.stms {
            self.add(s);
        }
        l.body.result
    }

    /// [`Builder::if_else`] bound to variables named after `hint`.
    pub fn let_if<E: From<TypeError>>(
        &mut self,
        hint: &str,
        cond: SubExp,
        then_f: impl FnOnce(&mut Builder) -> Result<Vec<SubExp>, E>,
        else_f: impl FnOnce(&mut Builder) -> Result<Vec<SubExp>, E>,
    ) -> Result<Vec<SubExp>, E> {
        let then_body = self.body_try(then_f)?;
        let else_body = self.body_try(else_f)?;
        let ret = self.result_types(&then_body)?;
        let exp = Exp::If {
            cond,
            then_body,
            else_body,
            ret: ret.clone(),
        };
        let vs = self.bind_named(&[hint], exp, ret);
        Ok(vs.into_iter().map(SubExp::Var).collect())
    }

    /// `map (\x… -> f x…) arrs` over the outer dimension `w`: the lambda's parameters are
    /// rows of `arrs` (named `x`), its body is built by `f`.
    pub fn map_fn<E: From<TypeError>>(
        &mut self,
        hint: &str,
        w: SubExp,
        arrs: Vec<VName>,
        f: impl FnOnce(&mut Builder, &[SubExp]) -> Result<Vec<SubExp>, E>,
    ) -> Result<Vec<VName>, E> {
        let mut params = Vec::new();
        for a in &arrs {
            params.push(("x", self.type_of(&SubExp::Var(*a))?.row()));
        }
        let lam = self.lam(params, f)?;
        Ok(self.map(hint, w, lam, arrs)?)
    }

    /// `reduce lam neutral arrs` with an operator known to be commutative.
    pub fn reduce_comm(
        &mut self,
        hint: &str,
        w: SubExp,
        lam: Lambda,
        neutral: Vec<SubExp>,
        arrs: Vec<VName>,
    ) -> TResult<Vec<SubExp>> {
        self.reduce_with(hint, w, lam, neutral, arrs, true)
    }

    /// `a + c` on values of type `ty`: scalars (`||` on booleans), or arrays elementwise
    /// into a fresh array (a map nest, one level per dimension).
    pub fn add_values(&mut self, ty: &Type, a: SubExp, c: SubExp) -> TResult<SubExp> {
        match ty {
            Type::Prim(PrimType::Bool) => self.op2(BinOp::LogOr, a, c),
            Type::Prim(_) => self.op2(BinOp::Add, a, c),
            Type::Array { shape, .. } => {
                let (SubExp::Var(a), SubExp::Var(c)) = (a, c) else {
                    return Err(TypeError("arrays to add must be variables".into()));
                };
                let plus = self.add_lambda(&ty.row())?;
                Ok(SubExp::Var(
                    self.map("adj", shape[0].clone(), plus, vec![a, c])?[0],
                ))
            }
            Type::Acc { .. } => Err(TypeError("adding accumulators".into())),
        }
    }

    /// `\x y -> x + y` on values of type `ty` (elementwise for arrays).
    pub fn add_lambda(&mut self, ty: &Type) -> TResult<Lambda> {
        self.lam(vec![("x", ty.clone()), ("y", ty.clone())], |b, xy| {
            Ok(vec![b.add_values(ty, xy[0].clone(), xy[1].clone())?])
        })
    }

    /// The zero of type `ty`: a constant, or a fresh array of zeros named `zeros`.
    pub fn zeros(&mut self, ty: &Type) -> TResult<SubExp> {
        match ty {
            Type::Prim(p) => Ok(SubExp::Const(Prim::zero(*p))),
            Type::Array { elem, shape } => {
                let z = SubExp::Const(Prim::zero(*elem));
                let op = BasicOp::Replicate(shape.clone(), z);
                Ok(self.basic("zeros", op, ty.clone()))
            }
            Type::Acc { .. } => Err(TypeError("zeros of an accumulator".into())),
        }
    }
}

#[cfg(test)]
mod rev_additions_tests {
    use super::*;

    fn f32t() -> Type {
        Type::Prim(PrimType::F32)
    }

    #[test]
    fn iota_reverse_and_map_fn_are_typed() {
        let mut names = NameSource::default();
        let n = names.fresh_typed("n", Type::Prim(PrimType::I64));
        let mut b = Builder::new(&mut names);
        let is = b.iota(SubExp::Var(n));
        let r = b.reverse(SubExp::Var(n), is).unwrap();
        let ys = b
            .map_fn("m", SubExp::Var(n), vec![is, r], |b, xs| -> TResult<_> {
                let s = b.add_(xs[0].clone(), xs[1].clone())?;
                Ok(vec![b.convert(PrimType::F32, s)])
            })
            .unwrap();
        let arr = f32t().array_of(SubExp::Var(n));
        assert_eq!(b.names.type_of(ys[0]), Some(&arr));
        let z = b.zeros(&arr).unwrap();
        assert_eq!(b.type_of(&z).unwrap(), arr);
        assert_eq!(b.zeros(&f32t()).unwrap(), SubExp::Const(Prim::F32(0.0)));
        let plus = b.binop_lam(BinOp::Add, PrimType::F32);
        let zero = b.zeros(&f32t()).unwrap();
        let s = b
            .reduce_comm("sum", SubExp::Var(n), plus, vec![zero], vec![ys[0]])
            .unwrap();
        assert_eq!(b.type_of(&s[0]).unwrap(), f32t());
        assert!(matches!(
            b.stms().last().map(|s| &s.exp),
            Some(Exp::Soac(Soac::Reduce {
                commutative: true,
                ..
            }))
        ));
    }

    #[test]
    fn inline_renames_and_let_if_names_results() {
        let mut names = NameSource::default();
        let x = names.fresh_typed("x", f32t());
        let mut b = Builder::new(&mut names);
        let sq = b
            .lam(vec![("a", f32t())], |b, a| -> TResult<_> {
                Ok(vec![b.mul_(a[0].clone(), a[0].clone())?])
            })
            .unwrap();
        let r1 = b.inline(&sq, &[SubExp::Var(x)]);
        let r2 = b.inline(&sq, &[r1[0].clone()]);
        assert_ne!(r1, r2);
        assert_eq!(b.stms().len(), 4, "two parameter bindings and two products");
        let c = b.op2(BinOp::Lt, SubExp::Var(x), r2[0].clone()).unwrap();
        let r = b
            .let_if(
                "r",
                c,
                |_| -> TResult<_> { Ok(vec![SubExp::Var(x)]) },
                |_| Ok(vec![SubExp::Const(Prim::F32(0.0))]),
            )
            .unwrap();
        let v = r[0].as_var().unwrap();
        assert_eq!(b.names.hint(v), "r");
        assert_eq!(b.names.type_of(v), Some(&f32t()));
        assert_eq!(
            b.select(
                SubExp::Const(Prim::Bool(false)),
                r[0].clone(),
                SubExp::Var(x)
            )
            .unwrap(),
            SubExp::Var(x)
        );
    }
}
