//! Common-subexpression elimination for pure scalar and shape operations and element reads
//! within a body (and the bodies nested in it): a repeated computation reuses the earlier
//! result (and, in [`drop_repeated_checks`], a repeated shape check or assertion goes: the
//! earlier one passed).

use crate::dce::removable;
use runic_ir::traverse::{type_mut, walk_stm_mut, VisitorMut};
use runic_ir::*;
use std::collections::HashMap;
use std::mem::{discriminant, Discriminant};

pub fn cse(prog: Prog) -> Prog {
    eliminate(prog, false)
}

/// CSE that also drops a shape check or assertion an identical one before it (in its body
/// or an enclosing one) already made: such a check cannot fail. Run late, after the
/// passes that compare computations structurally (`reuse` in `split-contractions`), to
/// which two copies of a map would otherwise look different; its use is to leave the
/// innermost loops of kernels free of checks (fusion copies them into the consumer).
pub fn drop_repeated_checks(prog: Prog) -> Prog {
    eliminate(prog, true)
}

fn eliminate(mut prog: Prog, checks: bool) -> Prog {
    for f in &mut prog.funs {
        let mut cse = Cse {
            checks,
            ..Cse::default()
        };
        cse.body(&mut f.body);
        // A result's size may be one computed inside the body.
        f.ret.iter_mut().for_each(|t| type_mut(&mut cse, t));
    }
    prog
}

type Table = HashMap<Vec<Tok>, Vec<VName>>;

/// One piece of what identifies a statement for CSE (see [`key`]).
#[derive(Clone, PartialEq, Eq, Hash)]
enum Tok {
    Kind(Discriminant<BasicOp>),
    Bin(Discriminant<BinOp>),
    Un(Discriminant<UnOp>),
    Tern(Discriminant<TernOp>),
    Var(VName),
    /// A constant by its type and bits: `0.0` and `-0.0` differ, a NaN equals itself.
    Const(PrimType, u64),
    Num(usize),
    Prim(PrimType),
    Array(PrimType, usize),
    Acc(usize, usize),
}

/// What makes two statements compute the same value: the operation (kind, operator,
/// operands) and the types it binds, as a sequence of tokens in which each part's length
/// comes first, so that different statements never give the same sequence. `None` for the
/// operations CSE leaves alone.
fn key(op: &BasicOp, types: &[Type]) -> Option<Vec<Tok>> {
    let opd = |s: &SubExp| match s {
        SubExp::Var(v) => Tok::Var(*v),
        SubExp::Const(c) => Tok::Const(c.ty(), bits(c)),
    };
    let mut k = vec![Tok::Kind(discriminant(op))];
    match op {
        BasicOp::SubExp(a) => k.push(opd(a)),
        BasicOp::UnOp(o, a) => k.extend([Tok::Un(discriminant(o)), opd(a)]),
        BasicOp::BinOp(o, a, b) => k.extend([Tok::Bin(discriminant(o)), opd(a), opd(b)]),
        BasicOp::TernOp(o, a, b, c) => {
            k.extend([Tok::Tern(discriminant(o)), opd(a), opd(b), opd(c)])
        }
        BasicOp::Convert(t, a) => k.extend([Tok::Prim(*t), opd(a)]),
        BasicOp::ArraySize(a, d) => k.extend([Tok::Var(*a), Tok::Num(*d)]),
        BasicOp::Rearrange(perm, a) => {
            k.push(Tok::Num(perm.len()));
            k.extend(perm.iter().map(|&d| Tok::Num(d)));
            k.push(Tok::Var(*a));
        }
        BasicOp::ArrayLit(rows, t) => {
            k.push(Tok::Num(rows.len()));
            k.extend(rows.iter().map(opd));
            type_key(&mut k, t, opd);
        }
        // A check made again where an identical one already passed cannot fail: its
        // message does not matter.
        BasicOp::ShapeCheck { arr, shape, .. } => {
            k.push(Tok::Var(*arr));
            k.push(Tok::Num(shape.len()));
            k.extend(shape.iter().map(opd));
        }
        BasicOp::Assert { cond, .. } => k.push(opd(cond)),
        BasicOp::Index(a, idx) => {
            k.extend([Tok::Var(*a), Tok::Num(idx.len())]);
            for d in idx {
                let DimIndex::Fix(x) = d else { return None };
                k.push(opd(x));
            }
        }
        _ => return None,
    }
    k.push(Tok::Num(types.len()));
    types.iter().for_each(|t| type_key(&mut k, t, opd));
    Some(k)
}

fn type_key(k: &mut Vec<Tok>, t: &Type, opd: impl Fn(&SubExp) -> Tok) {
    match t {
        Type::Prim(p) => k.push(Tok::Prim(*p)),
        Type::Array { elem, shape } => {
            k.push(Tok::Array(*elem, shape.len()));
            k.extend(shape.iter().map(opd));
        }
        Type::Acc { shape, elems } => {
            k.push(Tok::Acc(shape.len(), elems.len()));
            k.extend(shape.iter().map(opd));
            k.extend(elems.iter().map(|p| Tok::Prim(*p)));
        }
    }
}

/// A shape check or assertion: it fails or binds `true`, so a repeat of one that passed
/// in an enclosing scope (or earlier in the body) is its value.
fn is_check(op: &BasicOp) -> bool {
    matches!(op, BasicOp::ShapeCheck { .. } | BasicOp::Assert { .. })
}

/// An operation that may fail but otherwise always gives the same value for the same
/// operands: an element read (arrays are immutable values; one consumed by an in-place
/// update is not read again) and an integer division or remainder. A repeat after one
/// that passed, in its body or an enclosing one, cannot fail and is its value.
fn deterministic(op: &BasicOp, types: &[Type]) -> bool {
    match op {
        BasicOp::Index(_, idx) => {
            matches!(types, [Type::Prim(_)]) && idx.iter().all(|d| matches!(d, DimIndex::Fix(_)))
        }
        BasicOp::BinOp(..) => true,
        _ => false,
    }
}

/// The bits of a constant (its type is kept beside them).
fn bits(c: &Prim) -> u64 {
    match *c {
        Prim::I8(v) => v as u64,
        Prim::I16(v) => v as u64,
        Prim::I32(v) => v as u64,
        Prim::I64(v) => v as u64,
        Prim::U8(v) => v as u64,
        Prim::U16(v) => v as u64,
        Prim::U32(v) => v as u64,
        Prim::U64(v) => v,
        Prim::F16(v) => v.to_bits() as u64,
        Prim::F32(v) => v.to_bits() as u64,
        Prim::F64(v) => v.to_bits(),
        Prim::Bool(v) => v as u64,
    }
}

/// Each body is visited with the computations of the bodies around it (`table`) and the
/// renamings made so far (`subst`); what a body adds to the table is forgotten when it
/// ends.
#[derive(Default)]
struct Cse {
    /// Whether repeated checks go too.
    checks: bool,
    table: Table,
    /// Eliminated variables and the earlier results that replace them.
    subst: HashMap<VName, VName>,
}

impl VisitorMut for Cse {
    fn use_var(&mut self, v: &mut VName) {
        if let Some(r) = self.subst.get(v) {
            *v = *r;
        }
    }

    fn body(&mut self, b: &mut Body) {
        // The renamings outlive the body: a lambda's or branch's result type may name a
        // size computed inside it (an existential), and names are unique.
        let outer = self.table.clone();
        let mut out = Vec::new();
        for mut s in std::mem::take(&mut b.stms) {
            // Renames the statement's operands and eliminates in its nested bodies.
            walk_stm_mut(self, &mut s);
            // Copies and scratch arrays are fresh storage that a later operation may
            // consume: two of them are never the same value.
            let fresh = matches!(s.exp, Exp::Basic(BasicOp::Copy(_) | BasicOp::Scratch(..)));
            // Only basic operations: two SOACs or branches producing arrays are two
            // arrays, and either may be consumed.
            let types: Vec<Type> = s.pat.iter().map(|p| p.ty.clone()).collect();
            let key = match &s.exp {
                Exp::Basic(op)
                    if (removable(&s.exp)
                        || deterministic(op, &types)
                        || self.checks && is_check(op))
                        && !fresh =>
                {
                    key(op, &types)
                }
                _ => None,
            };
            if let Some(key) = key {
                if let Some(prev) = self.table.get(&key) {
                    for (p, v) in s.pat.iter().zip(prev) {
                        self.subst.insert(p.name, *v);
                    }
                    continue;
                }
                self.table
                    .insert(key, s.pat.iter().map(|p| p.name).collect());
            }
            out.push(s);
        }
        b.stms = out;
        b.result.iter_mut().for_each(|r| self.subexp(r));
        self.table = outer;
    }
}
