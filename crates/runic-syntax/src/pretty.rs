//! Pretty-printer: turns a tree back into idiomatic source text.
//!
//! Parentheses are not stored in the tree, so the printer inserts them exactly where the
//! grammar needs them: each expression form has a binding level (the rows of spec §3.4), and
//! a subexpression is parenthesised when its level is below what its position accepts.
//! The property `parse(print(t)) == t` (after [`crate::normalize`]) is tested by
//! `tests/roundtrip.rs`.

use crate::ast::*;
use crate::lexer::is_keyword;
use crate::parser::{fixity, prec as level};

/// Lines longer than this are broken where the layout allows it.
const WIDTH: usize = 80;

/// What the position of an expression accepts.
#[derive(Clone, Copy)]
struct Ctx {
    /// Lowest level allowed without parentheses.
    min: u8,
    /// A `match` here would swallow the `case`s that follow (it is the tail of a case body
    /// that is not the last one).
    no_open_match: bool,
}

impl Ctx {
    const TOP: Ctx = Ctx {
        min: level::OPEN,
        no_open_match: false,
    };
    fn at(min: u8) -> Ctx {
        Ctx {
            min,
            no_open_match: false,
        }
    }
    /// The tail position of an open form inherits the restriction on trailing `match`es.
    fn tail(self) -> Ctx {
        Ctx {
            min: level::OPEN,
            no_open_match: self.no_open_match,
        }
    }
}

pub fn print_program(p: &Program) -> String {
    let mut out = String::new();
    for (i, d) in p.decs.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&dec(d));
        out.push('\n');
    }
    out
}

pub fn print_dec(d: &Dec) -> String {
    dec(d)
}

pub fn print_exp(e: &Exp) -> String {
    exp(e, Ctx::TOP, 0)
}

pub fn print_type(t: &TypeExp) -> String {
    ty(t, 0)
}

pub fn print_pat(p: &Pat) -> String {
    pat(p, 0)
}

fn indent(n: usize) -> String {
    " ".repeat(n)
}

fn doc_comment(doc: &Option<String>) -> String {
    let Some(text) = doc else {
        return String::new();
    };
    let mut out = String::new();
    for (i, line) in text.split('\n').enumerate() {
        let lead = if i == 0 { "-- |" } else { "--" };
        if line.is_empty() {
            out.push_str(lead);
        } else {
            out.push_str(&format!("{lead} {line}"));
        }
        out.push('\n');
    }
    out
}

fn attr(a: &Attr) -> String {
    match a {
        Attr::Name(n) => n.clone(),
        Attr::Int(i) => i.to_string(),
        Attr::Call(n, args) => format!(
            "{n}({})",
            args.iter().map(attr).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn dec(d: &Dec) -> String {
    match d {
        Dec::Val(v) => {
            let mut out = doc_comment(&v.doc);
            for a in &v.attrs {
                out.push_str(&format!("#[{}]\n", attr(a)));
            }
            let kw = match v.kind {
                ValKind::Def => "def",
                ValKind::Entry => "entry",
                ValKind::Let => "let",
            };
            let mut head = format!("{kw} {}", bind_name(&v.name));
            head.push_str(&type_params(&v.type_params));
            for p in &v.params {
                head.push(' ');
                head.push_str(&pat(p, PAT_ATOM));
            }
            if let Some(t) = &v.ret {
                head.push_str(&format!(" : {}", ty(t, 0)));
            }
            head.push_str(" =");
            let body = exp(&v.body, Ctx::TOP, 2);
            if !body.contains('\n') && head.len() + body.len() < WIDTH {
                out.push_str(&format!("{head} {body}"));
            } else {
                out.push_str(&format!("{head}\n  {body}"));
            }
            out
        }
        Dec::Type(t) => {
            let mut out = doc_comment(&t.doc);
            for a in &t.attrs {
                out.push_str(&format!("#[{}]\n", attr(a)));
            }
            let kw = match t.lifted {
                Liftedness::Unlifted => "type",
                Liftedness::SizeLifted => "type~",
                Liftedness::Lifted => "type^",
            };
            out.push_str(&format!(
                "{kw} {}{} = {}",
                t.name,
                type_params(&t.params),
                ty(&t.def, 0)
            ));
            out
        }
        Dec::Open(m, _) => format!("open {}", mod_exp(m)),
        Dec::Import(path, _) => format!("import {}", string_lit(path.as_bytes())),
        Dec::Local(d, _) => format!("local {}", dec(d)),
        Dec::Module(m) => {
            let mut out = format!("module {}", m.name);
            for p in &m.params {
                out.push_str(&format!(" {}", mod_param(p)));
            }
            if let Some(mt) = &m.sig {
                out.push_str(&format!(" : {}", mod_type(mt)));
            }
            out.push_str(&format!(" = {}", mod_exp(&m.body)));
            out
        }
        Dec::ModType(m) => format!("module type {} = {}", m.name, mod_type(&m.def)),
    }
}

fn mod_param(p: &ModParam) -> String {
    format!("({}: {})", p.name, mod_type(&p.sig))
}

/// Indents every line but the first by two spaces (bodies of modules and signatures).
fn indent_block(items: &[String]) -> String {
    let mut out = String::from("{");
    for it in items {
        out.push('\n');
        for line in it.lines() {
            out.push_str("  ");
            out.push_str(line);
            out.push('\n');
        }
        out.pop();
    }
    out.push_str("\n}");
    out
}

pub fn mod_exp(m: &ModExp) -> String {
    match m {
        ModExp::Var(q, _) => q.to_string(),
        ModExp::Struct(decs, _) => indent_block(&decs.iter().map(dec).collect::<Vec<_>>()),
        ModExp::Import(p, _) => format!("import {}", string_lit(p.as_bytes())),
        ModExp::Ascribe(m, mt, transparent, _) => format!(
            "({} {} {})",
            mod_exp(m),
            if *transparent { ":>" } else { ":" },
            mod_type(mt)
        ),
        ModExp::Apply(f, a, _) => {
            let a = match **a {
                ModExp::Apply(..) => format!("({})", mod_exp(a)),
                _ => mod_exp(a),
            };
            format!("{} {a}", mod_exp(f))
        }
        ModExp::Lambda(p, mt, body, _) => {
            let sig = mt
                .as_ref()
                .map(|mt| format!(" : {}", mod_type_atom(mt)))
                .unwrap_or_default();
            format!("(\\{}{sig} -> {})", mod_param(p), mod_exp(body))
        }
    }
}

pub fn mod_type(mt: &ModTypeExp) -> String {
    match mt {
        ModTypeExp::Var(q, _) => q.to_string(),
        ModTypeExp::Sig(specs, _) => indent_block(&specs.iter().map(spec).collect::<Vec<_>>()),
        ModTypeExp::With(m, q, ps, t, _) => format!(
            "{} with {q}{} = {}",
            mod_type_atom(m),
            type_params(ps),
            ty(t, 0)
        ),
        ModTypeExp::Arrow(Some(n), a, b, _) => {
            format!("({n}: {}) -> {}", mod_type(a), mod_type(b))
        }
        ModTypeExp::Arrow(None, a, b, _) => {
            format!("{} -> {}", mod_type_atom(a), mod_type(b))
        }
    }
}

fn mod_type_atom(mt: &ModTypeExp) -> String {
    match mt {
        ModTypeExp::Var(..) | ModTypeExp::Sig(..) => mod_type(mt),
        _ => format!("({})", mod_type(mt)),
    }
}

fn spec(sp: &Spec) -> String {
    match sp {
        Spec::Val {
            name,
            type_params: tps,
            ty: t,
            ..
        } => format!("val {}{} : {}", bind_name(name), type_params(tps), ty(t, 0)),
        Spec::Type {
            name,
            lifted,
            params,
            def,
            ..
        } => {
            let kw = match lifted {
                Liftedness::Unlifted => "type",
                Liftedness::SizeLifted => "type~",
                Liftedness::Lifted => "type^",
            };
            let def = def
                .as_ref()
                .map(|t| format!(" = {}", ty(t, 0)))
                .unwrap_or_default();
            format!("{kw} {name}{}{def}", type_params(params))
        }
        Spec::Module { name, sig, .. } => format!("module {name} : {}", mod_type(sig)),
        Spec::Include(mt, _) => format!("include {}", mod_type(mt)),
    }
}

/// A bound name: operators are written in parentheses.
fn bind_name(n: &str) -> String {
    if is_symbol_name(n) {
        format!("({n})")
    } else {
        n.to_string()
    }
}

fn is_symbol_name(n: &str) -> bool {
    n.starts_with(|c: char| "+-*/%=!><|&^".contains(c))
}

fn type_params(ps: &[TypeParam]) -> String {
    let mut out = String::new();
    for p in ps {
        out.push(' ');
        match p {
            TypeParam::Size(n, _) => out.push_str(&format!("[{n}]")),
            TypeParam::Type(n, l, _) => {
                let tick = match l {
                    Liftedness::Unlifted => "'",
                    Liftedness::SizeLifted => "'~",
                    Liftedness::Lifted => "'^",
                };
                out.push_str(&format!("{tick}{n}"));
            }
        }
    }
    out
}

// ----- expressions -----

fn exp_level(e: &Exp) -> u8 {
    match &e.kind {
        ExpKind::If { .. }
        | ExpKind::LetPat { .. }
        | ExpKind::LetFun { .. }
        | ExpKind::LetUpdate { .. }
        | ExpKind::Loop { .. }
        | ExpKind::Match { .. }
        | ExpKind::Lambda { .. }
        | ExpKind::Assert { .. }
        | ExpKind::Attr(..) => level::OPEN,
        ExpKind::Ascribe(..) | ExpKind::Coerce(..) => level::ASCRIBE,
        ExpKind::Range { .. } => level::RANGE,
        ExpKind::BinOp { op, .. } => fixity(op).0,
        ExpKind::Update { .. } => level::WITH,
        ExpKind::Apply(..) | ExpKind::Negate(_) | ExpKind::Not(_) => level::APPLY,
        ExpKind::Constr(_, args) if !args.is_empty() => level::APPLY,
        _ => level::ATOM,
    }
}

fn exp(e: &Exp, ctx: Ctx, ind: usize) -> String {
    let needs_parens =
        exp_level(e) < ctx.min || (ctx.no_open_match && matches!(e.kind, ExpKind::Match { .. }));
    if needs_parens {
        // Inside parentheses everything is allowed again; continuation lines go one deeper.
        format!("({})", exp_bare(e, Ctx::TOP, ind + 1))
    } else {
        exp_bare(e, ctx, ind)
    }
}

/// An expression in a position where a postfix `[i]` or `.f` may follow it.
fn postfix_target(e: &Exp, field_follows: bool, ind: usize) -> String {
    let bare = match &e.kind {
        ExpKind::Var(_) => !field_follows,
        ExpKind::Project(..)
        | ExpKind::Index(..)
        | ExpKind::Tuple(_)
        | ExpKind::ArrayLit(_)
        | ExpKind::OpSection(_)
        | ExpKind::LeftSection { .. }
        | ExpKind::RightSection { .. }
        | ExpKind::ProjSection(_)
        | ExpKind::LocalOpen(..) => true,
        _ => false,
    };
    if bare {
        exp(e, Ctx::at(level::ATOM), ind)
    } else {
        format!("({})", exp(e, Ctx::TOP, ind + 1))
    }
}

/// An argument of an application or constructor.
fn arg(e: &Exp, ind: usize) -> String {
    exp(e, Ctx::at(level::ATOM), ind)
}

fn is_numeric_field(f: &str) -> bool {
    !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit())
}

fn exp_bare(e: &Exp, ctx: Ctx, ind: usize) -> String {
    match &e.kind {
        ExpKind::Literal(l) => literal(l),
        ExpKind::Var(q) => q.to_string(),
        ExpKind::Hole => "???".to_string(),
        ExpKind::Tuple(es) => format!("({})", comma_exps(es, ind + 1)),
        ExpKind::ArrayLit(es) => format!("[{}]", comma_exps(es, ind + 1)),
        ExpKind::Record(fs) => {
            let parts: Vec<String> = fs
                .iter()
                .map(|f| match f {
                    RecordField::Explicit(n, e) => format!("{n} = {}", exp(e, Ctx::TOP, ind + 2)),
                    RecordField::Punned(n, _) => n.clone(),
                })
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        ExpKind::Range {
            start,
            second,
            end,
            kind,
        } => {
            let part = |e: &Exp| exp(e, Ctx::at(level::RANGE + 1), ind);
            let simple = |e: &Exp| exp_level(e) >= level::APPLY;
            let all_simple = simple(start) && simple(end) && second.as_deref().is_none_or(simple);
            let sep = if all_simple { "" } else { " " };
            let op = match kind {
                RangeEnd::UpToExclusive => "..<",
                RangeEnd::DownToExclusive => "..>",
                RangeEnd::Inclusive => "...",
            };
            let mut out = part(start);
            if let Some(s) = second {
                out.push_str(&format!("{sep}..{sep}{}", part(s)));
            }
            out.push_str(&format!("{sep}{op}{sep}{}", part(end)));
            out
        }
        ExpKind::Project(target, f) => {
            let field_follows = !is_numeric_field(f);
            format!("{}.{f}", postfix_target(target, field_follows, ind))
        }
        ExpKind::Index(target, idx) => {
            format!("{}[{}]", postfix_target(target, false, ind), dims(idx, ind))
        }
        ExpKind::Apply(f, args) => {
            let head = match &f.kind {
                ExpKind::Constr(..) => format!("({})", exp(f, Ctx::TOP, ind + 1)),
                _ => arg(f, ind),
            };
            let mut out = head;
            for a in args {
                out.push(' ');
                out.push_str(&arg(a, ind + 2));
            }
            out
        }
        ExpKind::Constr(c, args) => {
            let mut out = format!("#{c}");
            for a in args {
                out.push(' ');
                out.push_str(&arg(a, ind + 2));
            }
            out
        }
        ExpKind::Negate(x) => format!("-{}", unary_operand(x, ind)),
        ExpKind::Not(x) => format!("!{}", unary_operand(x, ind)),
        ExpKind::BinOp { op, lhs, rhs } => {
            let (row, right) = fixity(op);
            let (lmin, rmin) = if right {
                (row + 1, row)
            } else {
                (row, row + 1)
            };
            format!(
                "{} {} {}",
                exp(lhs, Ctx::at(lmin), ind),
                binop(op),
                exp(rhs, Ctx::at(rmin), ind)
            )
        }
        ExpKind::OpSection(op) => format!("({})", binop(op)),
        ExpKind::LeftSection { op, lhs } => {
            format!(
                "({} {})",
                exp(lhs, Ctx::at(level::RANGE), ind + 1),
                binop(op)
            )
        }
        ExpKind::RightSection { op, rhs } => {
            format!(
                "({} {})",
                binop(op),
                exp(rhs, Ctx::at(level::RANGE), ind + 1)
            )
        }
        ExpKind::ProjSection(steps) => {
            let mut out = String::from("(");
            for (i, s) in steps.iter().enumerate() {
                match s {
                    ProjStep::Field(f) => out.push_str(&format!(".{f}")),
                    ProjStep::Index(idx) if i == 0 => {
                        out.push_str(&format!(".[{}]", dims(idx, ind)))
                    }
                    ProjStep::Index(idx) => out.push_str(&format!("[{}]", dims(idx, ind))),
                }
            }
            out.push(')');
            out
        }
        ExpKind::LocalOpen(q, e) => format!("{q}.({})", exp(e, Ctx::TOP, ind + 2)),
        ExpKind::Ascribe(e, t) => {
            format!("{} : {}", exp(e, Ctx::at(level::ASCRIBE), ind), ty(t, 0))
        }
        ExpKind::Coerce(e, t) => {
            format!("{} :> {}", exp(e, Ctx::at(level::ASCRIBE), ind), ty(t, 0))
        }
        ExpKind::Update {
            target,
            steps,
            value,
        } => format!(
            "{} with {} = {}",
            exp(target, Ctx::at(level::WITH), ind),
            update_steps(steps, true, ind),
            exp(value, Ctx::at(level::WITH + 1), ind)
        ),
        ExpKind::Lambda { params, ret, body } => {
            let mut head = String::from("\\");
            head.push_str(
                &params
                    .iter()
                    .map(|p| pat(p, PAT_ATOM))
                    .collect::<Vec<_>>()
                    .join(" "),
            );
            if let Some(t) = ret {
                head.push_str(&format!(" : {}", ty(t, T_TERM)));
            }
            head.push_str(" ->");
            let b = exp(body, ctx.tail(), ind + 2);
            if b.contains('\n') {
                format!("{head}\n{}{b}", indent(ind + 2))
            } else {
                format!("{head} {b}")
            }
        }
        ExpKind::If {
            cond,
            then_branch,
            else_branch,
        } => {
            let c = exp(cond, Ctx::TOP, ind + 3);
            let t = exp(then_branch, Ctx::TOP, ind + 2);
            let el = exp(else_branch, ctx.tail(), ind + 2);
            let one = format!("if {c} then {t} else {el}");
            if one.contains('\n') || one.len() + ind > WIDTH {
                let pad = indent(ind);
                format!("if {c}\n{pad}then {t}\n{pad}else {el}")
            } else {
                one
            }
        }
        ExpKind::LetPat { .. } | ExpKind::LetFun { .. } | ExpKind::LetUpdate { .. } => {
            let_chain(e, ctx, ind)
        }
        ExpKind::Loop {
            pat: p,
            init,
            form,
            body,
        } => {
            let mut head = format!("loop {}", pat(p, PAT_TERM));
            if let Some(i) = init {
                head.push_str(&format!(" = {}", exp(i, Ctx::TOP, ind + 4)));
            }
            match form {
                LoopForm::For { var, bound, .. } => {
                    head.push_str(&format!(" for {var} < {}", exp(bound, Ctx::TOP, ind + 4)))
                }
                LoopForm::ForIn { pat: p, array } => head.push_str(&format!(
                    " for {} in {}",
                    pat(p, PAT_TERM),
                    exp(array, Ctx::TOP, ind + 4)
                )),
                LoopForm::While(c) => {
                    head.push_str(&format!(" while {}", exp(c, Ctx::TOP, ind + 4)))
                }
            }
            let b = exp(body, ctx.tail(), ind + 2);
            format!("{head} do\n{}{b}", indent(ind + 2))
        }
        ExpKind::Match { scrutinee, cases } => {
            let scrutinee_ctx = Ctx {
                min: level::OPEN,
                no_open_match: true,
            };
            let mut out = format!("match {}", exp(scrutinee, scrutinee_ctx, ind + 2));
            for (i, c) in cases.iter().enumerate() {
                let last = i + 1 == cases.len();
                let body_ctx = if last {
                    ctx.tail()
                } else {
                    Ctx {
                        min: level::OPEN,
                        no_open_match: true,
                    }
                };
                out.push_str(&format!(
                    "\n{}case {} -> {}",
                    indent(ind),
                    pat(&c.pat, PAT_TERM),
                    exp(&c.body, body_ctx, ind + 2)
                ));
            }
            out
        }
        ExpKind::Assert { cond, body } => {
            format!(
                "assert {} {}",
                arg(cond, ind + 2),
                exp(body, ctx.tail(), ind)
            )
        }
        ExpKind::Attr(a, body) => format!("#[{}] {}", attr(a), exp(body, ctx.tail(), ind)),
    }
}

/// The operand of prefix `-` or `!`: an application, never another prefix operator (`--`
/// would start a comment and `-!` is a different symbol).
fn unary_operand(x: &Exp, ind: usize) -> String {
    match x.kind {
        ExpKind::Negate(_) | ExpKind::Not(_) => format!("({})", exp(x, Ctx::TOP, ind + 1)),
        _ => exp(x, Ctx::at(level::APPLY), ind),
    }
}

/// A `let` chain: one binding per line, `in` on its own line before the final body.
fn let_chain(e: &Exp, ctx: Ctx, ind: usize) -> String {
    let pad = indent(ind);
    let mut lines = Vec::new();
    let mut cur = e;
    loop {
        let (head, rhs, body) = match &cur.kind {
            ExpKind::LetPat {
                sizes,
                pat: p,
                rhs,
                body,
            } => {
                let mut head = String::from("let");
                for (n, _) in sizes {
                    head.push_str(&format!(" [{n}]"));
                }
                head.push_str(&format!(" {}", pat(p, PAT_FULL)));
                (head, rhs, body)
            }
            ExpKind::LetFun {
                name,
                type_params: tps,
                params,
                ret,
                rhs,
                body,
                ..
            } => {
                let mut head = format!("let {}{}", bind_name(name), type_params(tps));
                for p in params {
                    head.push_str(&format!(" {}", pat(p, PAT_ATOM)));
                }
                if let Some(t) = ret {
                    head.push_str(&format!(" : {}", ty(t, 0)));
                }
                (head, rhs, body)
            }
            ExpKind::LetUpdate {
                name,
                steps,
                rhs,
                body,
                ..
            } => (
                format!("let {name}{}", update_steps(steps, false, ind)),
                rhs,
                body,
            ),
            _ => {
                lines.push(format!("in {}", exp(cur, ctx.tail(), ind + 3)));
                break;
            }
        };
        let r = exp(rhs, Ctx::TOP, ind + 2);
        if r.contains('\n') && !r.starts_with('(') {
            lines.push(format!("{head} =\n{}{r}", indent(ind + 2)));
        } else {
            lines.push(format!("{head} = {r}"));
        }
        cur = body;
    }
    lines.join(&format!("\n{pad}"))
}

fn comma_exps(es: &[Exp], ind: usize) -> String {
    es.iter()
        .map(|e| exp(e, Ctx::TOP, ind))
        .collect::<Vec<_>>()
        .join(", ")
}

fn dims(idx: &[DimIndex], ind: usize) -> String {
    let part = |e: &Exp| exp(e, Ctx::at(level::RANGE), ind);
    idx.iter()
        .map(|d| match d {
            DimIndex::Index(e) => part(e),
            DimIndex::Slice { start, end, stride } => {
                let mut s = start.as_ref().map(part).unwrap_or_default();
                s.push(':');
                s.push_str(&end.as_ref().map(part).unwrap_or_default());
                if let Some(st) = stride {
                    s.push(':');
                    s.push_str(&part(st));
                }
                s
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn update_steps(steps: &[UpdateStep], after_with: bool, ind: usize) -> String {
    let mut out = String::new();
    for (i, s) in steps.iter().enumerate() {
        match s {
            UpdateStep::Index(idx, _) => out.push_str(&format!("[{}]", dims(idx, ind))),
            // `r with 0.1 = v` would lex `0.1` as a float: write `r with .0.1 = v` instead.
            UpdateStep::Field(f, _)
                if i == 0 && after_with && !(is_numeric_field(f) && steps.len() > 1) =>
            {
                out.push_str(f)
            }
            UpdateStep::Field(f, _) => out.push_str(&format!(".{f}")),
        }
    }
    out
}

fn binop(op: &BinOpName) -> String {
    if op.backtick {
        format!("`{}`", op.name)
    } else {
        op.name.to_string()
    }
}

// ----- literals -----

fn literal(l: &Literal) -> String {
    match l {
        Literal::Int { value, suffix } => {
            format!("{value}{}", suffix.map(|s| s.name()).unwrap_or(""))
        }
        Literal::Float { text, suffix } => {
            format!("{text}{}", suffix.map(|s| s.name()).unwrap_or(""))
        }
        Literal::Bool(b) => b.to_string(),
        Literal::Char(c) => {
            let ch = char::from_u32(*c).unwrap_or('\u{FFFD}');
            format!("'{}'", escape_char(ch, '\''))
        }
        Literal::String(bytes) => string_lit(bytes),
    }
}

fn escape_char(c: char, quote: char) -> String {
    match c {
        '\n' => "\\n".to_string(),
        '\t' => "\\t".to_string(),
        '\r' => "\\r".to_string(),
        '\\' => "\\\\".to_string(),
        c if c == quote => format!("\\{c}"),
        c if (c as u32) < 0x20 || c as u32 == 0x7f => format!("\\x{:02x}", c as u32),
        c => c.to_string(),
    }
}

fn string_lit(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::from("\"");
    for c in text.chars() {
        out.push_str(&escape_char(c, '"'));
    }
    out.push('"');
    out
}

// ----- types -----

const T_FULL: u8 = 0;
const T_TERM: u8 = 1;
const T_ATOM: u8 = 2;

fn type_level(t: &TypeExp) -> u8 {
    match t {
        TypeExp::Arrow(..) | TypeExp::Exists(..) => T_FULL,
        TypeExp::Unique(..) | TypeExp::Sum(..) | TypeExp::Apply(..) => T_TERM,
        _ => T_ATOM,
    }
}

fn ty(t: &TypeExp, min: u8) -> String {
    if type_level(t) < min {
        format!("({})", ty_bare(t))
    } else {
        ty_bare(t)
    }
}

/// An argument of a type application or a constructor payload: an array type would swallow
/// the following arguments as its element type, so it is parenthesised.
fn type_arg(t: &TypeExp) -> String {
    match t {
        TypeExp::Array(..) => format!("({})", ty_bare(t)),
        _ => ty(t, T_ATOM),
    }
}

fn size(d: &SizeExp) -> String {
    match d {
        SizeExp::Anon(_) => "[]".to_string(),
        SizeExp::Exp(e) => format!("[{}]", exp(e, Ctx::TOP, 0)),
    }
}

fn ty_bare(t: &TypeExp) -> String {
    match t {
        TypeExp::Var(q, _) => q.to_string(),
        TypeExp::Apply(f, a, _) => {
            let arg = match &**a {
                TypeArg::Size(d) => size(d),
                TypeArg::Type(t) => type_arg(t),
            };
            format!("{} {arg}", ty(f, T_TERM))
        }
        TypeExp::Tuple(ts, _) => format!(
            "({})",
            ts.iter()
                .map(|t| ty(t, T_FULL))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        TypeExp::Record(fs, _) => format!(
            "{{{}}}",
            fs.iter()
                .map(|(n, t)| format!("{n}: {}", ty(t, T_FULL)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        TypeExp::Array(d, elem, _) => format!("{}{}", size(d), ty(elem, T_TERM)),
        TypeExp::Unique(t, _) => format!("*{}", ty(t, T_TERM)),
        TypeExp::Arrow(Some(n), a, b, _) => {
            format!("({n}: {}) -> {}", ty(a, T_FULL), ty(b, T_FULL))
        }
        TypeExp::Arrow(None, a, b, _) => format!("{} -> {}", ty(a, T_TERM), ty(b, T_FULL)),
        TypeExp::Sum(cs, _) => cs
            .iter()
            .map(|(c, ts)| {
                let mut s = format!("#{c}");
                for t in ts {
                    s.push(' ');
                    s.push_str(&type_arg(t));
                }
                s
            })
            .collect::<Vec<_>>()
            .join(" | "),
        TypeExp::Exists(ns, t, _) => {
            format!(
                "?{}.{}",
                ns.iter().map(|n| format!("[{n}]")).collect::<String>(),
                ty(t, T_FULL)
            )
        }
    }
}

// ----- patterns -----

const PAT_FULL: u8 = 0;
const PAT_TERM: u8 = 1;
const PAT_ATOM: u8 = 2;

fn pat_level(p: &Pat) -> u8 {
    match &p.kind {
        PatKind::Ascribe(..) | PatKind::Attr(..) => PAT_FULL,
        PatKind::Constr(_, args) if !args.is_empty() => PAT_TERM,
        PatKind::Literal { negated: true, .. } => PAT_TERM,
        _ => PAT_ATOM,
    }
}

fn pat(p: &Pat, min: u8) -> String {
    if pat_level(p) < min {
        format!("({})", pat_bare(p))
    } else {
        pat_bare(p)
    }
}

fn pat_bare(p: &Pat) -> String {
    match &p.kind {
        PatKind::Var(n) => bind_name(n),
        PatKind::Wildcard => "_".to_string(),
        PatKind::Tuple(ps) => format!(
            "({})",
            ps.iter()
                .map(|p| pat(p, PAT_FULL))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        PatKind::Record(fs) => {
            let parts: Vec<String> = fs
                .iter()
                .map(|(f, p)| match &p.kind {
                    PatKind::Var(v) if v == f => f.clone(),
                    PatKind::Ascribe(inner, t) if matches!(&inner.kind, PatKind::Var(v) if v == f) => {
                        format!("{f}: {}", ty(t, T_FULL))
                    }
                    _ => format!("{f} = {}", pat(p, PAT_FULL)),
                })
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        PatKind::Ascribe(p, t) => format!("{}: {}", pat(p, PAT_TERM), ty(t, T_FULL)),
        PatKind::Literal { lit, negated } => {
            format!("{}{}", if *negated { "-" } else { "" }, literal(lit))
        }
        PatKind::Constr(c, args) => {
            let mut s = format!("#{c}");
            for a in args {
                s.push(' ');
                s.push_str(&pat(a, PAT_ATOM));
            }
            s
        }
        PatKind::Attr(a, p) => format!("#[{}] {}", attr(a), pat(p, PAT_FULL)),
    }
}

/// Whether `n` can be printed as a plain name (used by tests that generate trees).
pub fn is_plain_name(n: &str) -> bool {
    let b = n.as_bytes();
    let ok_rest = |s: &[u8]| {
        s.iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'\'')
    };
    let shape = match b {
        [c, rest @ ..] if c.is_ascii_alphabetic() => ok_rest(rest),
        [b'_', c, rest @ ..] if c.is_ascii_alphanumeric() => ok_rest(rest),
        _ => false,
    };
    shape && !is_keyword(n)
}
