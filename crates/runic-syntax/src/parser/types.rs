//! Type expressions (spec §3.2).

use super::{PResult, Parser};
use crate::ast::*;
use crate::lexer::Tok;

impl Parser {
    /// A full type: arrows (possibly with a named parameter), existentials, or a `type_term`.
    pub(crate) fn ty(&mut self) -> PResult<TypeExp> {
        self.nested(|p| {
            let start = p.span();
            if p.is(&Tok::LParen)
                && matches!(p.peek_at(1), Tok::Name(_))
                && *p.peek_at(2) == Tok::Colon
            {
                p.bump();
                let (name, _) = p.name("a parameter name")?;
                p.bump();
                let param = p.ty()?;
                p.expect(&Tok::RParen, "`)` after the named parameter's type")?;
                p.expect(&Tok::Arrow, "`->` after a named parameter `(n: t)`")?;
                let result = p.ty()?;
                return Ok(TypeExp::Arrow(
                    Some(name),
                    Box::new(param),
                    Box::new(result),
                    p.since(start),
                ));
            }
            if p.eat(&Tok::Question) {
                let mut names = Vec::new();
                while p.is(&Tok::LBracket) || p.is(&Tok::IndexLBracket) {
                    p.bump();
                    names.push(p.name("a size name")?.0);
                    p.expect(&Tok::RBracket, "`]`")?;
                }
                if names.is_empty() {
                    return Err(p.expected("`[n]` after `?`"));
                }
                p.expect(&Tok::Dot, "`.` after the existential sizes")?;
                let body = p.ty()?;
                return Ok(TypeExp::Exists(names, Box::new(body), p.since(start)));
            }
            let t = p.type_term()?;
            if p.eat(&Tok::Arrow) {
                let result = p.ty()?;
                return Ok(TypeExp::Arrow(
                    None,
                    Box::new(t),
                    Box::new(result),
                    p.since(start),
                ));
            }
            Ok(t)
        })
    }

    /// `*t`, a sum type, or a type application.
    pub(crate) fn type_term(&mut self) -> PResult<TypeExp> {
        let p = self;
        {
            let start = p.span();
            // `*t`; `**t` lexes as one symbol but means `*(*t)`.
            if let Tok::Symbol(s) = p.peek() {
                if s.bytes().all(|b| b == b'*') {
                    let stars = s.len();
                    p.bump();
                    let mut t = p.nested(|p| p.type_term())?;
                    for _ in 0..stars {
                        t = TypeExp::Unique(Box::new(t), p.since(start));
                    }
                    return Ok(t);
                }
            }
            if matches!(p.peek(), Tok::Constructor(_)) {
                let mut clauses = Vec::new();
                loop {
                    let Tok::Constructor(c) = p.peek().clone() else {
                        return Err(p.expected("a constructor `#name` after `|`"));
                    };
                    p.bump();
                    let mut payload = Vec::new();
                    while p.type_atom_start() {
                        payload.push(p.type_atom()?);
                    }
                    clauses.push((c, payload));
                    if !p.is_symbol("|") {
                        break;
                    }
                    p.bump();
                }
                return Ok(TypeExp::Sum(clauses, p.since(start)));
            }
            let head = p.type_atom()?;
            if !matches!(head, TypeExp::Var(..)) {
                return Ok(head);
            }
            let mut t = head;
            let saved_depth = p.depth;
            loop {
                let arg = if p.is(&Tok::LBracket) || p.is(&Tok::IndexLBracket) {
                    TypeArg::Size(p.size()?)
                } else if p.type_atom_start() {
                    TypeArg::Type(p.type_atom()?)
                } else {
                    break;
                };
                p.deeper()?;
                t = TypeExp::Apply(Box::new(t), Box::new(arg), p.since(start));
            }
            p.depth = saved_depth;
            Ok(t)
        }
    }

    fn type_atom_start(&self) -> bool {
        matches!(
            self.peek(),
            Tok::LParen | Tok::LBrace | Tok::LBracket | Tok::IndexLBracket | Tok::Name(_)
        )
    }

    /// `[e]` or `[]`.
    fn size(&mut self) -> PResult<SizeExp> {
        let start = self.bump().span;
        if self.eat(&Tok::RBracket) {
            return Ok(SizeExp::Anon(self.since(start)));
        }
        let e = self.exp()?;
        self.expect(&Tok::RBracket, "`]` to close the size")?;
        Ok(SizeExp::Exp(Box::new(e)))
    }

    fn type_atom(&mut self) -> PResult<TypeExp> {
        self.nested(|p| {
            let start = p.span();
            match p.peek() {
                Tok::LParen => {
                    p.bump();
                    let mut elems = p.comma_list(&Tok::RParen, "`)`", |p| p.ty())?;
                    if elems.len() == 1 {
                        let mut t = elems.remove(0);
                        set_type_span(&mut t, p.since(start));
                        return Ok(t);
                    }
                    Ok(TypeExp::Tuple(elems, p.since(start)))
                }
                Tok::LBrace => {
                    p.bump();
                    let fields = p.comma_list(&Tok::RBrace, "`}`", |p| {
                        let (f, _) = p.field_name()?;
                        p.expect(&Tok::Colon, "`:` after the field name")?;
                        Ok((f, p.ty()?))
                    })?;
                    Ok(TypeExp::Record(fields, p.since(start)))
                }
                Tok::LBracket | Tok::IndexLBracket => {
                    let d = p.size()?;
                    let elem = p.type_term()?;
                    Ok(TypeExp::Array(d, Box::new(elem), p.since(start)))
                }
                Tok::Name(_) => {
                    let (q, span) = p.qual_name("a type name")?;
                    Ok(TypeExp::Var(q, span))
                }
                _ => Err(p.expected("a type")),
            }
        })
    }
}

fn set_type_span(t: &mut TypeExp, s: Span) {
    match t {
        TypeExp::Var(_, sp)
        | TypeExp::Apply(_, _, sp)
        | TypeExp::Tuple(_, sp)
        | TypeExp::Record(_, sp)
        | TypeExp::Array(_, _, sp)
        | TypeExp::Unique(_, sp)
        | TypeExp::Arrow(_, _, _, sp)
        | TypeExp::Sum(_, sp)
        | TypeExp::Exists(_, _, sp) => *sp = s,
    }
}

use crate::source::Span;
