//! Erasing source positions and node ids, so that trees can be compared structurally (used by
//! the round-trip property `parse(print(ast)) == ast`), and giving copies of a tree fresh node
//! ids. Both are one walk over every id and span of a tree.

use crate::ast::*;
use crate::source::Span;

/// What a walk does at each node id and span.
trait Visit {
    fn id(&mut self, id: &mut NodeId);
    fn span(&mut self, s: &mut Span);
}

/// Zeroes ids and spans.
struct Zero;

impl Visit for Zero {
    fn id(&mut self, id: &mut NodeId) {
        *id = NodeId(0);
    }
    fn span(&mut self, s: &mut Span) {
        *s = Span::default();
    }
}

/// Hands out fresh ids, keeping spans.
struct Renumber<'a>(&'a mut u32);

impl Visit for Renumber<'_> {
    fn id(&mut self, id: &mut NodeId) {
        *id = NodeId(*self.0);
        *self.0 += 1;
    }
    fn span(&mut self, _: &mut Span) {}
}

/// Zero every [`Span`] and [`NodeId`] in the program (and its `next_id`).
pub fn normalize_program(p: &mut Program) {
    p.next_id = 0;
    walk_program(p, &mut Zero);
}

pub fn normalize_dec(d: &mut Dec) {
    walk_dec(d, &mut Zero)
}

pub fn normalize_exp(e: &mut Exp) {
    walk_exp(e, &mut Zero)
}

pub fn normalize_pat(p: &mut Pat) {
    walk_pat(p, &mut Zero)
}

pub fn normalize_type(t: &mut TypeExp) {
    walk_type(t, &mut Zero)
}

/// Gives every node of a module expression a fresh id from `*next` (for copies of a
/// parametric module's body: ids must stay unique in the program).
pub fn renumber_mod_exp(m: &mut ModExp, next: &mut u32) {
    walk_mod_exp(m, &mut Renumber(next))
}

fn walk_program(p: &mut Program, vz: &mut dyn Visit) {
    for d in &mut p.decs {
        walk_dec(d, vz);
    }
}

fn walk_dec(d: &mut Dec, vz: &mut dyn Visit) {
    match d {
        Dec::Val(v) => {
            vz.span(&mut v.name_span);
            vz.span(&mut v.span);
            v.type_params
                .iter_mut()
                .for_each(|x| walk_type_param(x, vz));
            v.params.iter_mut().for_each(|x| walk_pat(x, vz));
            if let Some(t) = &mut v.ret {
                walk_type(t, vz);
            }
            walk_exp(&mut v.body, vz);
        }
        Dec::Type(t) => {
            vz.span(&mut t.span);
            t.params.iter_mut().for_each(|x| walk_type_param(x, vz));
            walk_type(&mut t.def, vz);
        }
        Dec::Open(m, s) => {
            vz.span(s);
            walk_mod_exp(m, vz);
        }
        Dec::Import(_, s) => vz.span(s),
        Dec::Local(d, s) => {
            vz.span(s);
            walk_dec(d, vz);
        }
        Dec::Module(m) => {
            vz.span(&mut m.name_span);
            vz.span(&mut m.span);
            m.params.iter_mut().for_each(|x| walk_mod_param(x, vz));
            if let Some(mt) = &mut m.sig {
                walk_mod_type(mt, vz);
            }
            walk_mod_exp(&mut m.body, vz);
        }
        Dec::ModType(m) => {
            vz.span(&mut m.name_span);
            vz.span(&mut m.span);
            walk_mod_type(&mut m.def, vz);
        }
    }
}

fn walk_mod_param(p: &mut ModParam, vz: &mut dyn Visit) {
    vz.span(&mut p.name_span);
    vz.span(&mut p.span);
    walk_mod_type(&mut p.sig, vz);
}

fn walk_mod_exp(m: &mut ModExp, vz: &mut dyn Visit) {
    match m {
        ModExp::Var(_, s) | ModExp::Import(_, s) => vz.span(s),
        ModExp::Struct(decs, s) => {
            vz.span(s);
            decs.iter_mut().for_each(|x| walk_dec(x, vz));
        }
        ModExp::Ascribe(m, mt, _, s) => {
            vz.span(s);
            walk_mod_exp(m, vz);
            walk_mod_type(mt, vz);
        }
        ModExp::Apply(f, a, s) => {
            vz.span(s);
            walk_mod_exp(f, vz);
            walk_mod_exp(a, vz);
        }
        ModExp::Lambda(p, mt, body, s) => {
            vz.span(s);
            walk_mod_param(p, vz);
            if let Some(mt) = mt {
                walk_mod_type(mt, vz);
            }
            walk_mod_exp(body, vz);
        }
    }
}

fn walk_mod_type(mt: &mut ModTypeExp, vz: &mut dyn Visit) {
    match mt {
        ModTypeExp::Var(_, s) => vz.span(s),
        ModTypeExp::Sig(specs, s) => {
            vz.span(s);
            specs.iter_mut().for_each(|x| walk_spec(x, vz));
        }
        ModTypeExp::With(m, _, ps, t, s) => {
            vz.span(s);
            walk_mod_type(m, vz);
            ps.iter_mut().for_each(|x| walk_type_param(x, vz));
            walk_type(t, vz);
        }
        ModTypeExp::Arrow(_, a, b, s) => {
            vz.span(s);
            walk_mod_type(a, vz);
            walk_mod_type(b, vz);
        }
    }
}

fn walk_spec(sp: &mut Spec, vz: &mut dyn Visit) {
    match sp {
        Spec::Val {
            name_span,
            type_params,
            ty,
            span,
            ..
        } => {
            vz.span(name_span);
            vz.span(span);
            type_params.iter_mut().for_each(|x| walk_type_param(x, vz));
            walk_type(ty, vz);
        }
        Spec::Type {
            params, def, span, ..
        } => {
            vz.span(span);
            params.iter_mut().for_each(|x| walk_type_param(x, vz));
            if let Some(t) = def {
                walk_type(t, vz);
            }
        }
        Spec::Module { sig, span, .. } => {
            vz.span(span);
            walk_mod_type(sig, vz);
        }
        Spec::Include(mt, s) => {
            vz.span(s);
            walk_mod_type(mt, vz);
        }
    }
}

fn walk_type_param(p: &mut TypeParam, vz: &mut dyn Visit) {
    match p {
        TypeParam::Size(_, s) | TypeParam::Type(_, _, s) => vz.span(s),
    }
}

fn walk_op(op: &mut BinOpName, vz: &mut dyn Visit) {
    vz.span(&mut op.span);
}

fn walk_dims(idx: &mut [DimIndex], vz: &mut dyn Visit) {
    for d in idx {
        match d {
            DimIndex::Index(e) => walk_exp(e, vz),
            DimIndex::Slice { start, end, stride } => {
                for e in [start, end, stride].into_iter().flatten() {
                    walk_exp(e, vz);
                }
            }
        }
    }
}

fn walk_steps(steps: &mut [UpdateStep], vz: &mut dyn Visit) {
    for s in steps {
        match s {
            UpdateStep::Index(idx, sp) => {
                vz.span(sp);
                walk_dims(idx, vz);
            }
            UpdateStep::Field(_, sp) => vz.span(sp),
        }
    }
}

fn walk_exp(e: &mut Exp, vz: &mut dyn Visit) {
    vz.id(&mut e.id);
    vz.span(&mut e.span);
    match &mut e.kind {
        ExpKind::Literal(_) | ExpKind::Var(_) | ExpKind::Hole => {}
        ExpKind::Tuple(es) | ExpKind::ArrayLit(es) => es.iter_mut().for_each(|x| walk_exp(x, vz)),
        ExpKind::Constr(_, es) => es.iter_mut().for_each(|x| walk_exp(x, vz)),
        ExpKind::Record(fs) => {
            for f in fs {
                match f {
                    RecordField::Explicit(_, e) => walk_exp(e, vz),
                    RecordField::Punned(_, s) => vz.span(s),
                }
            }
        }
        ExpKind::Range {
            start, second, end, ..
        } => {
            walk_exp(start, vz);
            if let Some(s) = second {
                walk_exp(s, vz);
            }
            walk_exp(end, vz);
        }
        ExpKind::Project(e, _) | ExpKind::Negate(e) | ExpKind::Not(e) | ExpKind::Attr(_, e) => {
            walk_exp(e, vz)
        }
        ExpKind::LocalOpen(_, e) => walk_exp(e, vz),
        ExpKind::Index(e, idx) => {
            walk_exp(e, vz);
            walk_dims(idx, vz);
        }
        ExpKind::Apply(f, args) => {
            walk_exp(f, vz);
            args.iter_mut().for_each(|x| walk_exp(x, vz));
        }
        ExpKind::BinOp { op, lhs, rhs } => {
            walk_op(op, vz);
            walk_exp(lhs, vz);
            walk_exp(rhs, vz);
        }
        ExpKind::OpSection(op) => walk_op(op, vz),
        ExpKind::LeftSection { op, lhs: e } | ExpKind::RightSection { op, rhs: e } => {
            walk_op(op, vz);
            walk_exp(e, vz);
        }
        ExpKind::ProjSection(steps) => {
            for s in steps {
                if let ProjStep::Index(idx) = s {
                    walk_dims(idx, vz);
                }
            }
        }
        ExpKind::Lambda { params, ret, body } => {
            params.iter_mut().for_each(|x| walk_pat(x, vz));
            if let Some(t) = ret {
                walk_type(t, vz);
            }
            walk_exp(body, vz);
        }
        ExpKind::If {
            cond,
            then_branch,
            else_branch,
        } => {
            walk_exp(cond, vz);
            walk_exp(then_branch, vz);
            walk_exp(else_branch, vz);
        }
        ExpKind::LetPat {
            sizes,
            pat,
            rhs,
            body,
        } => {
            sizes.iter_mut().for_each(|(_, s)| vz.span(s));
            walk_pat(pat, vz);
            walk_exp(rhs, vz);
            walk_exp(body, vz);
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
            vz.span(name_span);
            type_params.iter_mut().for_each(|x| walk_type_param(x, vz));
            params.iter_mut().for_each(|x| walk_pat(x, vz));
            if let Some(t) = ret {
                walk_type(t, vz);
            }
            walk_exp(rhs, vz);
            walk_exp(body, vz);
        }
        ExpKind::LetUpdate {
            name_span,
            steps,
            rhs,
            body,
            ..
        } => {
            vz.span(name_span);
            walk_steps(steps, vz);
            walk_exp(rhs, vz);
            walk_exp(body, vz);
        }
        ExpKind::Update {
            target,
            steps,
            value,
        } => {
            walk_exp(target, vz);
            walk_steps(steps, vz);
            walk_exp(value, vz);
        }
        ExpKind::Loop {
            pat,
            init,
            form,
            body,
        } => {
            walk_pat(pat, vz);
            if let Some(i) = init {
                walk_exp(i, vz);
            }
            match form {
                LoopForm::For {
                    var_span, bound, ..
                } => {
                    vz.span(var_span);
                    walk_exp(bound, vz);
                }
                LoopForm::ForIn { pat, array } => {
                    walk_pat(pat, vz);
                    walk_exp(array, vz);
                }
                LoopForm::While(c) => walk_exp(c, vz),
            }
            walk_exp(body, vz);
        }
        ExpKind::Match { scrutinee, cases } => {
            walk_exp(scrutinee, vz);
            for c in cases {
                vz.span(&mut c.span);
                walk_pat(&mut c.pat, vz);
                walk_exp(&mut c.body, vz);
            }
        }
        ExpKind::Ascribe(e, t) | ExpKind::Coerce(e, t) => {
            walk_exp(e, vz);
            walk_type(t, vz);
        }
        ExpKind::Assert { cond, body } => {
            walk_exp(cond, vz);
            walk_exp(body, vz);
        }
    }
}

fn walk_pat(p: &mut Pat, vz: &mut dyn Visit) {
    vz.id(&mut p.id);
    vz.span(&mut p.span);
    match &mut p.kind {
        PatKind::Var(_) | PatKind::Wildcard | PatKind::Literal { .. } => {}
        PatKind::Tuple(ps) | PatKind::Constr(_, ps) => ps.iter_mut().for_each(|x| walk_pat(x, vz)),
        PatKind::Record(fs) => fs.iter_mut().for_each(|(_, p)| walk_pat(p, vz)),
        PatKind::Ascribe(p, t) => {
            walk_pat(p, vz);
            walk_type(t, vz);
        }
        PatKind::Attr(_, p) => walk_pat(p, vz),
    }
}

fn walk_type(t: &mut TypeExp, vz: &mut dyn Visit) {
    match t {
        TypeExp::Var(_, s) => vz.span(s),
        TypeExp::Apply(f, arg, s) => {
            vz.span(s);
            walk_type(f, vz);
            match &mut **arg {
                TypeArg::Size(d) => walk_size(d, vz),
                TypeArg::Type(t) => walk_type(t, vz),
            }
        }
        TypeExp::Tuple(ts, s) => {
            vz.span(s);
            ts.iter_mut().for_each(|x| walk_type(x, vz));
        }
        TypeExp::Record(fs, s) => {
            vz.span(s);
            fs.iter_mut().for_each(|(_, t)| walk_type(t, vz));
        }
        TypeExp::Array(d, t, s) => {
            vz.span(s);
            walk_size(d, vz);
            walk_type(t, vz);
        }
        TypeExp::Unique(t, s) => {
            vz.span(s);
            walk_type(t, vz);
        }
        TypeExp::Arrow(_, a, b, s) => {
            vz.span(s);
            walk_type(a, vz);
            walk_type(b, vz);
        }
        TypeExp::Sum(cs, s) => {
            vz.span(s);
            cs.iter_mut()
                .for_each(|(_, ts)| ts.iter_mut().for_each(|x| walk_type(x, vz)));
        }
        TypeExp::Exists(_, t, s) => {
            vz.span(s);
            walk_type(t, vz);
        }
    }
}

fn walk_size(d: &mut SizeExp, vz: &mut dyn Visit) {
    match d {
        SizeExp::Anon(s) => vz.span(s),
        SizeExp::Exp(e) => walk_exp(e, vz),
    }
}
