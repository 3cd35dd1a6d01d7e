//! A statement builder: fresh names, binding expressions, and nested bodies/lambdas, so that
//! transformations producing IR stay short.

use crate::ir::*;

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

    pub fn param(&mut self, hint: &str, ty: Type) -> Param {
        Param {
            name: self.fresh(hint),
            ty,
        }
    }

    /// Add a statement as is.
    pub fn add(&mut self, stm: Stm) {
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
        self.add(Stm {
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
        Lambda { params, body, ret }
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
}
