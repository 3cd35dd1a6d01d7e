//! Static values of the lowering: what a source-level value is made of in the IR.
//!
//! Records and tuples are [`Val::Rec`]; a sum is a tag plus the payload of every
//! constructor; an array of records is a record of arrays (leaves carry the outer
//! dimensions). Functions are known statically ([`Fun`]), so no function value reaches the
//! IR: applying one inlines it.

use runic_ir::{Loc, SubExp, Type};
use runic_syntax::ast::{Exp, Pat, ProjStep, TypeExp, TypeParam};
use std::rc::Rc;

#[derive(Clone, Debug)]
pub enum Val<'a> {
    Leaf(SubExp, Type),
    Rec(Vec<(String, Val<'a>)>),
    /// Tag (an `i8` leaf, or array of them) and every constructor's payload, by name.
    Sum(Box<Val<'a>>, Vec<(String, Vec<Val<'a>>)>),
    Fun(Rc<Fun<'a>>),
    /// An array of empty records (`[n][m]()`): a shape without data. Its leaf is a witness
    /// array `[n][m][0]bool`, which has no elements (so no memory) but carries the
    /// dimensions through every array operation as any other leaf does. A row of `[n]()`
    /// is the plain empty record: [`Val::rebuild`] turns a witness of rank 1 back into it.
    Units(SubExp, Type),
}

/// The intrinsic behind a builtin function value.
#[derive(Clone, Debug)]
pub enum Builtin {
    /// A prelude intrinsic or overloaded operator, by name.
    Named(String),
    /// A member of a numeric module (`f32.sqrt`).
    Member(runic_ir::PrimType, String),
}

#[derive(Clone, Debug)]
pub enum Fun<'a> {
    Closure {
        params: &'a [Pat],
        body: &'a Exp,
        env: Env<'a>,
        args: Vec<Val<'a>>,
        type_params: &'a [TypeParam],
        /// Size parameters given at the occurrence.
        sizes: Vec<(String, Val<'a>)>,
        ret: Option<&'a TypeExp>,
        /// Index of the declaration whose code this is: top-level names in the body resolve
        /// to definitions *before* it, wherever the closure is applied.
        scope: usize,
    },
    Builtin {
        b: Builtin,
        arity: usize,
        args: Vec<Val<'a>>,
        /// Size arguments recorded at the occurrence (None: not known statically).
        sizes: Vec<(String, Option<SubExp>)>,
        loc: Option<Loc>,
    },
    RightSection {
        op: Val<'a>,
        rhs: Val<'a>,
    },
    Proj {
        steps: &'a [ProjStep],
        env: Env<'a>,
    },
    /// A function bound to a parameter declared with a function type whose result is an
    /// array (`f: [n]i32 -> [n]i32`, or `f: t -> t` with `t` an array): once `arity` more
    /// arguments are applied, its result is checked against the expected shape.
    Checked {
        inner: Val<'a>,
        ret: runic_syntax::ast::Expect<'a, Val<'a>>,
        /// Arguments given so far, and still to come.
        given: usize,
        arity: usize,
        env: Env<'a>,
        span: runic_syntax::Span,
    },
}

/// A persistent environment: cheap to capture in closures.
#[derive(Clone, Debug, Default)]
pub struct Env<'a>(Option<Rc<(String, Val<'a>, Env<'a>)>>);

impl<'a> Env<'a> {
    pub fn bind(&self, name: &str, v: Val<'a>) -> Env<'a> {
        Env(Some(Rc::new((name.to_string(), v, self.clone()))))
    }
    pub fn lookup(&self, name: &str) -> Option<&Val<'a>> {
        let mut cur = &self.0;
        while let Some(node) = cur {
            if node.0 == name {
                return Some(&node.1);
            }
            cur = &(node.2).0;
        }
        None
    }
}

impl<'a> Val<'a> {
    pub fn unit() -> Val<'a> {
        Val::Rec(Vec::new())
    }
    /// The IR values, in order; `None` if a function is inside.
    pub fn leaves(&self) -> Option<Vec<(SubExp, Type)>> {
        let mut out = Vec::new();
        self.collect(&mut out).then_some(out)
    }
    fn collect(&self, out: &mut Vec<(SubExp, Type)>) -> bool {
        match self {
            Val::Leaf(s, t) | Val::Units(s, t) => {
                out.push((s.clone(), t.clone()));
                true
            }
            Val::Rec(fs) => fs.iter().all(|(_, v)| v.collect(out)),
            Val::Sum(tag, cs) => {
                tag.collect(out) && cs.iter().all(|(_, vs)| vs.iter().all(|v| v.collect(out)))
            }
            Val::Fun(_) => false,
        }
    }
    /// The same structure with other leaves (taken in order).
    pub fn rebuild(&self, leaves: &mut impl Iterator<Item = (SubExp, Type)>) -> Val<'a> {
        match self {
            Val::Leaf(..) => {
                let (s, t) = leaves
                    .next()
                    .unwrap_or((SubExp::i64(0), Type::Prim(runic_ir::PrimType::I64)));
                Val::Leaf(s, t)
            }
            Val::Units(..) => match leaves.next() {
                Some((s, t)) if t.rank() > 1 => Val::Units(s, t),
                _ => Val::unit(),
            },
            Val::Rec(fs) => Val::Rec(
                fs.iter()
                    .map(|(n, v)| (n.clone(), v.rebuild(leaves)))
                    .collect(),
            ),
            Val::Sum(tag, cs) => Val::Sum(
                Box::new(tag.rebuild(leaves)),
                cs.iter()
                    .map(|(n, vs)| (n.clone(), vs.iter().map(|v| v.rebuild(leaves)).collect()))
                    .collect(),
            ),
            Val::Fun(f) => Val::Fun(f.clone()),
        }
    }
    pub fn field(&self, name: &str) -> Option<&Val<'a>> {
        match self {
            Val::Rec(fs) => fs.iter().find(|(n, _)| n == name).map(|(_, v)| v),
            _ => None,
        }
    }
    /// Whether each leaf (in [`Val::leaves`] order) is the witness of an array of empty
    /// records.
    fn unit_flags(&self, out: &mut Vec<bool>) {
        match self {
            Val::Leaf(..) => out.push(false),
            Val::Units(..) => out.push(true),
            Val::Rec(fs) => fs.iter().for_each(|(_, v)| v.unit_flags(out)),
            Val::Sum(tag, cs) => {
                tag.unit_flags(out);
                cs.iter()
                    .for_each(|(_, vs)| vs.iter().for_each(|v| v.unit_flags(out)));
            }
            Val::Fun(_) => {}
        }
    }
    /// For each leaf, whether it has no counterpart in an element of the array `self` with
    /// `depth` dimensions indexed away: a witness left with rank 1 is a plain empty record.
    pub fn vanishing(&self, depth: usize) -> Vec<bool> {
        let mut flags = Vec::new();
        self.unit_flags(&mut flags);
        let leaves = self.leaves().unwrap_or_default();
        flags
            .into_iter()
            .zip(leaves)
            .map(|(u, (_, t))| u && t.rank() <= depth + 1)
            .collect()
    }
    /// The leaves of the array `self` that its elements (`depth` dimensions in) still have.
    pub fn row_leaves(&self, depth: usize) -> Option<Vec<(SubExp, Type)>> {
        let flags = self.vanishing(depth);
        let leaves = self.leaves()?;
        Some(
            leaves
                .into_iter()
                .zip(flags)
                .filter(|(_, v)| !v)
                .map(|(l, _)| l)
                .collect(),
        )
    }
    /// The array `self` with the leaves its elements have replaced (taken in order from
    /// `leaves`) and the witnesses they lack kept: the result of an in-place update.
    pub fn rebuild_rows(
        &self,
        depth: usize,
        leaves: impl Iterator<Item = (SubExp, Type)>,
    ) -> Val<'a> {
        let old = self.leaves().unwrap_or_default();
        let mut leaves = leaves;
        let merged: Vec<(SubExp, Type)> = old
            .into_iter()
            .zip(self.vanishing(depth))
            .map(|(o, v)| if v { Some(o) } else { leaves.next() })
            .collect::<Option<_>>()
            .unwrap_or_default();
        self.rebuild(&mut merged.into_iter())
    }
    /// The first leaf (to read the outer size of an array of records).
    pub fn first_leaf(&self) -> Option<(SubExp, Type)> {
        self.leaves().and_then(|l| l.into_iter().next())
    }
}
