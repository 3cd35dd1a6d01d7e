//! Which functional updates `x with [i] = v` may take `x` out of its binding and update it in
//! place. The language does not require `x` to be dead afterwards (language.md §7.12: runic
//! "must merely produce the new value"), so the evaluator may only steal the binding when a
//! syntactic liveness check shows that nothing evaluated later in the same scope mentions
//! `x`, and `x` is bound in that scope (not a free variable of a lambda or loop body that may
//! run again).

use runic_syntax::ast::*;
use std::collections::HashSet;

/// NodeIds of `Update` / `LetUpdate` expressions whose target variable may be consumed.
pub fn safe_updates(decs: &[Dec]) -> HashSet<NodeId> {
    let mut out = HashSet::new();
    for d in decs {
        if let Dec::Val(vb) = d {
            let mut local = HashSet::new();
            for p in &vb.params {
                pat_names(p, &mut local);
            }
            walk(&vb.body, &mut Vec::new(), &local, &mut out);
        }
    }
    out
}

fn pat_names<'a>(p: &'a Pat, out: &mut HashSet<&'a str>) {
    match &p.kind {
        PatKind::Var(n) => {
            out.insert(n);
        }
        PatKind::Tuple(ps) | PatKind::Constr(_, ps) => ps.iter().for_each(|q| pat_names(q, out)),
        PatKind::Record(fs) => fs.iter().for_each(|(_, q)| pat_names(q, out)),
        PatKind::Ascribe(q, _) | PatKind::Attr(_, q) => pat_names(q, out),
        PatKind::Wildcard | PatKind::Literal { .. } => {}
    }
}

/// The direct sub-expressions of `e`.
fn dims<'e>(ds: &'e [DimIndex], v: &mut Vec<&'e Exp>) {
    for d in ds {
        match d {
            DimIndex::Index(x) => v.push(x),
            DimIndex::Slice { start, end, stride } => {
                v.extend([start, end, stride].into_iter().flatten())
            }
        }
    }
}

fn children(e: &Exp) -> Vec<&Exp> {
    let mut v: Vec<&Exp> = Vec::new();
    match &e.kind {
        ExpKind::Lambda { body, .. } => v.push(body),
        ExpKind::LetPat { rhs, body, .. }
        | ExpKind::LetFun { rhs, body, .. }
        | ExpKind::LetUpdate { rhs, body, .. } => {
            v.push(rhs);
            v.push(body);
            if let ExpKind::LetUpdate { steps, .. } = &e.kind {
                for s in steps {
                    if let UpdateStep::Index(d, _) = s {
                        dims(d, &mut v);
                    }
                }
            }
        }
        ExpKind::Loop {
            init, form, body, ..
        } => {
            v.extend(init.as_deref());
            match form {
                LoopForm::For { bound, .. } => v.push(bound),
                LoopForm::ForIn { array, .. } => v.push(array),
                LoopForm::While(c) => v.push(c),
            }
            v.push(body);
        }
        ExpKind::Match { scrutinee, cases } => {
            v.push(scrutinee);
            v.extend(cases.iter().map(|c| &c.body));
        }
        ExpKind::Tuple(es) | ExpKind::ArrayLit(es) | ExpKind::Constr(_, es) => v.extend(es),
        ExpKind::Record(fs) => {
            for f in fs {
                if let RecordField::Explicit(_, x) = f {
                    v.push(x);
                }
            }
        }
        ExpKind::Range {
            start, second, end, ..
        } => {
            v.push(start);
            v.extend(second.as_deref());
            v.push(end);
        }
        ExpKind::Project(x, _)
        | ExpKind::Negate(x)
        | ExpKind::Not(x)
        | ExpKind::Ascribe(x, _)
        | ExpKind::Coerce(x, _)
        | ExpKind::Attr(_, x)
        | ExpKind::LocalOpen(_, x)
        | ExpKind::LeftSection { lhs: x, .. }
        | ExpKind::RightSection { rhs: x, .. } => v.push(x),
        ExpKind::Index(x, ds) => {
            v.push(x);
            dims(ds, &mut v);
        }
        ExpKind::Apply(f, args) => {
            v.push(f);
            v.extend(args);
        }
        ExpKind::BinOp { lhs, rhs, .. } => {
            v.push(lhs);
            v.push(rhs);
        }
        ExpKind::If {
            cond,
            then_branch,
            else_branch,
        } => {
            v.push(cond);
            v.push(then_branch);
            v.push(else_branch);
        }
        ExpKind::Update {
            target,
            steps,
            value,
        } => {
            v.push(target);
            for s in steps {
                if let UpdateStep::Index(d, _) = s {
                    dims(d, &mut v);
                }
            }
            v.push(value);
        }
        ExpKind::Assert { cond, body } => {
            v.push(cond);
            v.push(body);
        }
        ExpKind::Literal(_)
        | ExpKind::Var(_)
        | ExpKind::OpSection(_)
        | ExpKind::ProjSection(_)
        | ExpKind::Hole => {}
    }
    v
}

/// Whether evaluating `e` may read the variable `x` (conservative: ignores shadowing).
fn mentions(e: &Exp, x: &str) -> bool {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match &e.kind {
            ExpKind::Var(q) if !q.is_qualified() && q.name == x => return true,
            ExpKind::Record(fs)
                if fs
                    .iter()
                    .any(|f| matches!(f, RecordField::Punned(n, _) if n == x)) =>
            {
                return true
            }
            ExpKind::LetUpdate { name, .. } if name == x => return true,
            ExpKind::Loop {
                pat, init: None, ..
            } => {
                let mut ns = HashSet::new();
                pat_names(pat, &mut ns);
                if ns.contains(x) {
                    return true;
                }
            }
            _ => {}
        }
        stack.extend(children(e));
    }
    false
}

/// An expression evaluated later in the same scope, with the names bound before it runs
/// (the body of `let p = ... in body` sees `p`'s names, not the outer ones).
type Later<'a> = (&'a Exp, Vec<&'a str>);

fn live(rest: &[Later], x: &str) -> bool {
    rest.iter()
        .any(|(e, shadow)| !shadow.contains(&x) && mentions(e, x))
}

fn later(e: &Exp) -> Later<'_> {
    (e, Vec::new())
}

/// `rest`: expressions evaluated after `e` in the current scope; `local`: names bound in the
/// current scope (function or loop body).
fn walk<'a>(
    e: &'a Exp,
    rest: &mut Vec<Later<'a>>,
    local: &HashSet<&'a str>,
    out: &mut HashSet<NodeId>,
) {
    let with_local = |extra: &dyn Fn(&mut HashSet<&'a str>)| {
        let mut l = local.clone();
        extra(&mut l);
        l
    };
    match &e.kind {
        ExpKind::Update { target, .. } => {
            if let ExpKind::Var(q) = &target.kind {
                let x = q.name.as_str();
                if !q.is_qualified() && local.contains(x) && !live(rest, x) {
                    out.insert(e.id);
                }
            }
            walk_siblings(e, rest, local, out);
        }
        ExpKind::LetPat { pat, rhs, body, .. } => {
            let mut names = HashSet::new();
            pat_names(pat, &mut names);
            rest.push((body, names.into_iter().collect()));
            walk(rhs, rest, local, out);
            rest.pop();
            let l = with_local(&|l| pat_names(pat, l));
            walk(body, rest, &l, out);
        }
        ExpKind::LetFun {
            name,
            params,
            rhs,
            body,
            ..
        } => {
            if params.is_empty() {
                rest.push(later(body));
                walk(rhs, rest, local, out);
                rest.pop();
            } else {
                let mut l = HashSet::new();
                params.iter().for_each(|p| pat_names(p, &mut l));
                walk(rhs, &mut Vec::new(), &l, out);
            }
            let l = with_local(&|l| {
                l.insert(name);
            });
            walk(body, rest, &l, out);
        }
        ExpKind::Lambda { params, body, .. } => {
            let mut l = HashSet::new();
            params.iter().for_each(|p| pat_names(p, &mut l));
            walk(body, &mut Vec::new(), &l, out);
        }
        ExpKind::Loop {
            pat,
            init,
            form,
            body,
        } => {
            rest.push(later(e));
            if let Some(i) = init {
                walk(i, rest, local, out);
            }
            let mut l = HashSet::new();
            pat_names(pat, &mut l);
            match form {
                LoopForm::For { var, bound, .. } => {
                    walk(bound, rest, local, out);
                    l.insert(var);
                }
                LoopForm::ForIn { pat: xp, array } => {
                    walk(array, rest, local, out);
                    pat_names(xp, &mut l);
                }
                LoopForm::While(c) => walk(c, &mut vec![later(body)], &l, out),
            }
            rest.pop();
            walk(body, &mut Vec::new(), &l, out);
        }
        ExpKind::If {
            cond,
            then_branch,
            else_branch,
        } => {
            rest.push(later(then_branch));
            rest.push(later(else_branch));
            walk(cond, rest, local, out);
            rest.pop();
            rest.pop();
            walk(then_branch, rest, local, out);
            walk(else_branch, rest, local, out);
        }
        ExpKind::Match { scrutinee, cases } => {
            let n = rest.len();
            rest.extend(cases.iter().map(|c| later(&c.body)));
            walk(scrutinee, rest, local, out);
            rest.truncate(n);
            for c in cases {
                let l = with_local(&|l| pat_names(&c.pat, l));
                walk(&c.body, rest, &l, out);
            }
        }
        ExpKind::LetUpdate {
            name, rhs, body, ..
        } => {
            // `let a[i] = v` rebinds `a`, so only a variable of this scope may be taken.
            if local.contains(name.as_str()) {
                out.insert(e.id);
            }
            rest.push(later(body));
            walk(rhs, rest, local, out);
            rest.pop();
            walk(body, rest, local, out);
        }
        _ => walk_siblings(e, rest, local, out),
    }
}

/// Children in any order, each with all its siblings counted as evaluated later.
fn walk_siblings<'a>(
    e: &'a Exp,
    rest: &mut Vec<Later<'a>>,
    local: &HashSet<&'a str>,
    out: &mut HashSet<NodeId>,
) {
    let cs = children(e);
    for (i, c) in cs.iter().enumerate() {
        let n = rest.len();
        rest.extend(
            cs.iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, s)| later(s)),
        );
        walk(c, rest, local, out);
        rest.truncate(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn safe_count(src: &str) -> usize {
        let prog = runic_syntax::parse_program(runic_syntax::FileId(0), src, 0)
            .unwrap_or_else(|_| panic!("parse error in {src}"));
        safe_updates(&prog.decs).len()
    }

    #[test]
    fn updates_of_dead_local_variables_may_consume() {
        // Loop parameter updated as the whole body, and rebound by `let` in the body.
        assert_eq!(
            safe_count("def f (a: *[]i64) = loop a for i < 3 do a with [i] = i"),
            1
        );
        assert_eq!(
            safe_count("def f (a: *[]i64) = loop a for i < 3 do let a = a with [i] = i in a"),
            1
        );
    }

    #[test]
    fn updates_of_live_or_captured_variables_copy() {
        // `xs` is used after the update.
        assert_eq!(
            safe_count("def f (xs: []i64) = let ys = xs with [0] = 1 in (xs, ys)"),
            0
        );
        // `xs` is a free variable of a lambda that runs once per element.
        assert_eq!(
            safe_count("def f (xs: []i64) = map (\\i -> (xs with [i] = 0)[0]) (iota 3)"),
            0
        );
        // A loop body must not consume a variable bound outside the loop.
        assert_eq!(
            safe_count("def f (xs: []i64) = loop acc = 0 for i < 3 do acc + (xs with [i] = 0)[0]"),
            0
        );
        // `let a[i] = v` on a free variable of a lambda.
        assert_eq!(
            safe_count("def f (a: []i64) = map (\\i -> let a[i] = 0 in a[0]) (iota 3)"),
            0
        );
    }
}
