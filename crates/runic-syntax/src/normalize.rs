//! Erasing source positions and node ids, so that trees can be compared structurally (used by
//! the round-trip property `parse(print(ast)) == ast`).

use crate::ast::*;
use crate::source::Span;

/// Zero every [`Span`] and [`NodeId`] in the program (and its `next_id`).
pub fn normalize_program(p: &mut Program) {
    p.next_id = 0;
    for d in &mut p.decs {
        normalize_dec(d);
    }
}

pub fn normalize_dec(d: &mut Dec) {
    match d {
        Dec::Val(v) => {
            v.name_span = Span::default();
            v.span = Span::default();
            v.type_params.iter_mut().for_each(normalize_type_param);
            v.params.iter_mut().for_each(normalize_pat);
            if let Some(t) = &mut v.ret {
                normalize_type(t);
            }
            normalize_exp(&mut v.body);
        }
        Dec::Type(t) => {
            t.span = Span::default();
            t.params.iter_mut().for_each(normalize_type_param);
            normalize_type(&mut t.def);
        }
        Dec::Open(_, s) | Dec::Import(_, s) => *s = Span::default(),
        Dec::Local(d, s) => {
            *s = Span::default();
            normalize_dec(d);
        }
    }
}

fn normalize_type_param(p: &mut TypeParam) {
    match p {
        TypeParam::Size(_, s) | TypeParam::Type(_, _, s) => *s = Span::default(),
    }
}

fn normalize_op(op: &mut BinOpName) {
    op.span = Span::default();
}

fn normalize_dims(idx: &mut [DimIndex]) {
    for d in idx {
        match d {
            DimIndex::Index(e) => normalize_exp(e),
            DimIndex::Slice { start, end, stride } => {
                for e in [start, end, stride].into_iter().flatten() {
                    normalize_exp(e);
                }
            }
        }
    }
}

fn normalize_steps(steps: &mut [UpdateStep]) {
    for s in steps {
        match s {
            UpdateStep::Index(idx, sp) => {
                *sp = Span::default();
                normalize_dims(idx);
            }
            UpdateStep::Field(_, sp) => *sp = Span::default(),
        }
    }
}

pub fn normalize_exp(e: &mut Exp) {
    e.id = NodeId(0);
    e.span = Span::default();
    match &mut e.kind {
        ExpKind::Literal(_) | ExpKind::Var(_) | ExpKind::Hole => {}
        ExpKind::Tuple(es) | ExpKind::ArrayLit(es) => es.iter_mut().for_each(normalize_exp),
        ExpKind::Constr(_, es) => es.iter_mut().for_each(normalize_exp),
        ExpKind::Record(fs) => {
            for f in fs {
                match f {
                    RecordField::Explicit(_, e) => normalize_exp(e),
                    RecordField::Punned(_, s) => *s = Span::default(),
                }
            }
        }
        ExpKind::Range {
            start, second, end, ..
        } => {
            normalize_exp(start);
            if let Some(s) = second {
                normalize_exp(s);
            }
            normalize_exp(end);
        }
        ExpKind::Project(e, _) | ExpKind::Negate(e) | ExpKind::Not(e) | ExpKind::Attr(_, e) => {
            normalize_exp(e)
        }
        ExpKind::LocalOpen(_, e) => normalize_exp(e),
        ExpKind::Index(e, idx) => {
            normalize_exp(e);
            normalize_dims(idx);
        }
        ExpKind::Apply(f, args) => {
            normalize_exp(f);
            args.iter_mut().for_each(normalize_exp);
        }
        ExpKind::BinOp { op, lhs, rhs } => {
            normalize_op(op);
            normalize_exp(lhs);
            normalize_exp(rhs);
        }
        ExpKind::OpSection(op) => normalize_op(op),
        ExpKind::LeftSection { op, lhs: e } | ExpKind::RightSection { op, rhs: e } => {
            normalize_op(op);
            normalize_exp(e);
        }
        ExpKind::ProjSection(steps) => {
            for s in steps {
                if let ProjStep::Index(idx) = s {
                    normalize_dims(idx);
                }
            }
        }
        ExpKind::Lambda { params, ret, body } => {
            params.iter_mut().for_each(normalize_pat);
            if let Some(t) = ret {
                normalize_type(t);
            }
            normalize_exp(body);
        }
        ExpKind::If {
            cond,
            then_branch,
            else_branch,
        } => {
            normalize_exp(cond);
            normalize_exp(then_branch);
            normalize_exp(else_branch);
        }
        ExpKind::LetPat {
            sizes,
            pat,
            rhs,
            body,
        } => {
            sizes.iter_mut().for_each(|(_, s)| *s = Span::default());
            normalize_pat(pat);
            normalize_exp(rhs);
            normalize_exp(body);
        }
        ExpKind::LetFun {
            name_span,
            type_params,
            params,
            ret,
            rhs,
            body,
            ..
        } => {
            *name_span = Span::default();
            type_params.iter_mut().for_each(normalize_type_param);
            params.iter_mut().for_each(normalize_pat);
            if let Some(t) = ret {
                normalize_type(t);
            }
            normalize_exp(rhs);
            normalize_exp(body);
        }
        ExpKind::LetUpdate {
            name_span,
            steps,
            rhs,
            body,
            ..
        } => {
            *name_span = Span::default();
            normalize_steps(steps);
            normalize_exp(rhs);
            normalize_exp(body);
        }
        ExpKind::Update {
            target,
            steps,
            value,
        } => {
            normalize_exp(target);
            normalize_steps(steps);
            normalize_exp(value);
        }
        ExpKind::Loop {
            pat,
            init,
            form,
            body,
        } => {
            normalize_pat(pat);
            if let Some(i) = init {
                normalize_exp(i);
            }
            match form {
                LoopForm::For {
                    var_span, bound, ..
                } => {
                    *var_span = Span::default();
                    normalize_exp(bound);
                }
                LoopForm::ForIn { pat, array } => {
                    normalize_pat(pat);
                    normalize_exp(array);
                }
                LoopForm::While(c) => normalize_exp(c),
            }
            normalize_exp(body);
        }
        ExpKind::Match { scrutinee, cases } => {
            normalize_exp(scrutinee);
            for c in cases {
                c.span = Span::default();
                normalize_pat(&mut c.pat);
                normalize_exp(&mut c.body);
            }
        }
        ExpKind::Ascribe(e, t) | ExpKind::Coerce(e, t) => {
            normalize_exp(e);
            normalize_type(t);
        }
        ExpKind::Assert { cond, body } => {
            normalize_exp(cond);
            normalize_exp(body);
        }
    }
}

pub fn normalize_pat(p: &mut Pat) {
    p.id = NodeId(0);
    p.span = Span::default();
    match &mut p.kind {
        PatKind::Var(_) | PatKind::Wildcard | PatKind::Literal { .. } => {}
        PatKind::Tuple(ps) | PatKind::Constr(_, ps) => ps.iter_mut().for_each(normalize_pat),
        PatKind::Record(fs) => fs.iter_mut().for_each(|(_, p)| normalize_pat(p)),
        PatKind::Ascribe(p, t) => {
            normalize_pat(p);
            normalize_type(t);
        }
        PatKind::Attr(_, p) => normalize_pat(p),
    }
}

pub fn normalize_type(t: &mut TypeExp) {
    match t {
        TypeExp::Var(_, s) => *s = Span::default(),
        TypeExp::Apply(f, arg, s) => {
            *s = Span::default();
            normalize_type(f);
            match &mut **arg {
                TypeArg::Size(d) => normalize_size(d),
                TypeArg::Type(t) => normalize_type(t),
            }
        }
        TypeExp::Tuple(ts, s) => {
            *s = Span::default();
            ts.iter_mut().for_each(normalize_type);
        }
        TypeExp::Record(fs, s) => {
            *s = Span::default();
            fs.iter_mut().for_each(|(_, t)| normalize_type(t));
        }
        TypeExp::Array(d, t, s) => {
            *s = Span::default();
            normalize_size(d);
            normalize_type(t);
        }
        TypeExp::Unique(t, s) => {
            *s = Span::default();
            normalize_type(t);
        }
        TypeExp::Arrow(_, a, b, s) => {
            *s = Span::default();
            normalize_type(a);
            normalize_type(b);
        }
        TypeExp::Sum(cs, s) => {
            *s = Span::default();
            cs.iter_mut()
                .for_each(|(_, ts)| ts.iter_mut().for_each(normalize_type));
        }
        TypeExp::Exists(_, t, s) => {
            *s = Span::default();
            normalize_type(t);
        }
    }
}

fn normalize_size(d: &mut SizeExp) {
    match d {
        SizeExp::Anon(s) => *s = Span::default(),
        SizeExp::Exp(e) => normalize_exp(e),
    }
}
