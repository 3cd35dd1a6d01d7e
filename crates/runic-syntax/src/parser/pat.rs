//! Patterns (spec §8).

use super::{PResult, Parser};
use crate::ast::*;
use crate::lexer::{Keyword, Tok};
use crate::Diagnostic;

impl Parser {
    /// A full pattern: `pat_term [: type]`.
    pub(crate) fn pat(&mut self) -> PResult<Pat> {
        self.nested(|p| {
            let start = p.span();
            let mut pat = p.pat_term()?;
            while p.eat(&Tok::Colon) {
                let t = p.ty()?;
                pat = p.mk_pat(PatKind::Ascribe(Box::new(pat), t), p.since(start));
                p.deeper()?;
            }
            Ok(pat)
        })
    }

    /// A constructor with payloads, an attributed pattern, a negative literal, or an atom.
    fn pat_term(&mut self) -> PResult<Pat> {
        let start = self.span();
        match self.peek().clone() {
            Tok::HashLBracket => {
                let a = self.attr_bracket()?;
                let p = self.pat()?;
                Ok(self.mk_pat(PatKind::Attr(a, Box::new(p)), self.since(start)))
            }
            Tok::Constructor(c) => {
                self.bump();
                let mut args = Vec::new();
                while self.pat_atom_start() {
                    args.push(self.pat_atom()?);
                }
                Ok(self.mk_pat(PatKind::Constr(c, args), self.since(start)))
            }
            Tok::Symbol(s) if s == "-" => {
                self.bump();
                let lit = self
                    .literal_token()
                    .ok_or_else(|| self.expected("a number after `-` in a pattern"))?;
                self.bump();
                Ok(self.mk_pat(PatKind::Literal { lit, negated: true }, self.since(start)))
            }
            _ => self.pat_atom(),
        }
    }

    fn literal_token(&self) -> Option<Literal> {
        Some(match self.peek().clone() {
            Tok::Int(value, suffix) => Literal::Int { value, suffix },
            Tok::Float(text, suffix) => Literal::Float { text, suffix },
            Tok::Char(c) => Literal::Char(c),
            Tok::Str(s) => Literal::String(s),
            Tok::Keyword(Keyword::True) => Literal::Bool(true),
            Tok::Keyword(Keyword::False) => Literal::Bool(false),
            _ => return None,
        })
    }

    pub(crate) fn pat_atom_start(&self) -> bool {
        matches!(
            self.peek(),
            Tok::Name(_)
                | Tok::Underscore
                | Tok::LParen
                | Tok::LBrace
                | Tok::Constructor(_)
                | Tok::Int(..)
                | Tok::Float(..)
                | Tok::Char(_)
                | Tok::Str(_)
                | Tok::Keyword(Keyword::True | Keyword::False)
        )
    }

    /// A pattern that can stand as a function parameter.
    pub(crate) fn pat_atom(&mut self) -> PResult<Pat> {
        self.nested(|p| {
            let start = p.span();
            if let Some(lit) = p.literal_token() {
                p.bump();
                return Ok(p.mk_pat(
                    PatKind::Literal {
                        lit,
                        negated: false,
                    },
                    start,
                ));
            }
            match p.peek().clone() {
                Tok::Name(n) => {
                    p.bump();
                    Ok(p.mk_pat(PatKind::Var(n), start))
                }
                Tok::Underscore => {
                    p.bump();
                    Ok(p.mk_pat(PatKind::Wildcard, start))
                }
                Tok::Constructor(c) => {
                    p.bump();
                    Ok(p.mk_pat(PatKind::Constr(c, Vec::new()), start))
                }
                Tok::LParen => {
                    p.bump();
                    if p.eat(&Tok::RParen) {
                        return Ok(p.mk_pat(PatKind::Tuple(Vec::new()), p.since(start)));
                    }
                    if let Some((op, n)) = p.peek_binop() {
                        if *p.peek_at(n) == Tok::RParen && !op.backtick && !op.name.is_qualified() {
                            p.skip(n + 1);
                            return Ok(p.mk_pat(PatKind::Var(op.name.name), p.since(start)));
                        }
                    }
                    let first = p.pat()?;
                    if p.eat(&Tok::RParen) {
                        let mut first = first;
                        first.span = p.since(start);
                        return Ok(first);
                    }
                    if !p.eat(&Tok::Comma) {
                        return Err(p.expected("`,` or `)` in this pattern"));
                    }
                    let mut elems = vec![first];
                    elems.extend(p.comma_list(&Tok::RParen, "`)`", |p| p.pat())?);
                    if elems.len() == 1 {
                        return Ok(elems.remove(0));
                    }
                    Ok(p.mk_pat(PatKind::Tuple(elems), p.since(start)))
                }
                Tok::LBrace => {
                    p.bump();
                    let fields = p.comma_list(&Tok::RBrace, "`}`", |p| {
                        let punnable = matches!(p.peek(), Tok::Name(_));
                        let (f, fspan) = p.field_name()?;
                        if p.eat(&Tok::Equals) {
                            return Ok((f, p.pat()?));
                        }
                        if !punnable {
                            return Err(p.expected("`=` after the numbered field"));
                        }
                        let var = p.mk_pat(PatKind::Var(f.clone()), fspan);
                        if p.eat(&Tok::Colon) {
                            let t = p.ty()?;
                            let span = p.since(fspan);
                            return Ok((f, p.mk_pat(PatKind::Ascribe(Box::new(var), t), span)));
                        }
                        Ok((f, var))
                    })?;
                    Ok(p.mk_pat(PatKind::Record(fields), p.since(start)))
                }
                // `let 't y = x`, `loop ('t y = x)`: a type parameter where only values are
                // bound.
                Tok::Tick | Tok::TickCaret | Tok::TickTilde => Err(Diagnostic::error(
                    p.span(),
                    "Type parameters can only be given to a function definition (`def f 't ...` or `let f 't ...` with parameters); this pattern binds values only.",
                )),
                _ => Err(p.expected("a pattern")),
            }
        })
    }
}
