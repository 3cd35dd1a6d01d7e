//! Declarations (spec §3.1, §4).

use super::{PResult, Parser};
use crate::ast::*;
use crate::diag::Diagnostic;
use crate::lexer::{Keyword, Tok};
use crate::source::Span;

impl Parser {
    /// A whole file; errors are collected in `self.errors`.
    pub(crate) fn program(&mut self) -> Vec<Dec> {
        let mut decs = Vec::new();
        while !self.at_eof() {
            self.depth = 0;
            match self.dec() {
                Ok(d) => decs.push(d),
                Err(e) => {
                    self.errors.push(e);
                    self.recover();
                }
            }
        }
        decs
    }

    /// Skips to the next declaration keyword in column 1.
    fn recover(&mut self) {
        self.bump();
        while !self.at_eof() {
            let t = self.token(0);
            let starts_dec = matches!(
                t.tok,
                Tok::Keyword(
                    Keyword::Def
                        | Keyword::Entry
                        | Keyword::Type
                        | Keyword::Let
                        | Keyword::Local
                        | Keyword::Open
                        | Keyword::Import
                        | Keyword::Module
                ) | Tok::HashLBracket
            );
            if starts_dec && t.at_line_start {
                return;
            }
            self.bump();
        }
    }

    pub(crate) fn dec(&mut self) -> PResult<Dec> {
        let doc = self.token(0).doc.clone();
        let start = self.span();
        let mut attrs = Vec::new();
        while self.is(&Tok::HashLBracket) {
            attrs.push(self.attr_bracket()?);
        }
        let doc = doc.or_else(|| self.token(0).doc.clone());
        match self.peek().clone() {
            Tok::Keyword(k @ (Keyword::Def | Keyword::Entry | Keyword::Let)) => {
                let kind = match k {
                    Keyword::Def => ValKind::Def,
                    Keyword::Entry => ValKind::Entry,
                    _ => ValKind::Let,
                };
                self.bump();
                let mut v = self.val_bind(kind, start)?;
                v.attrs = attrs;
                v.doc = doc;
                Ok(Dec::Val(v))
            }
            Tok::Keyword(Keyword::Type) => {
                self.bump();
                let mut t = self.type_bind(start)?;
                t.attrs = attrs;
                t.doc = doc;
                Ok(Dec::Type(t))
            }
            Tok::Keyword(Keyword::Open) => {
                self.bump();
                let m = self.mod_exp()?;
                Ok(Dec::Open(m, self.since(start)))
            }
            Tok::Keyword(Keyword::Import) => {
                self.bump();
                let path = self.import_path()?;
                Ok(Dec::Import(path, self.since(start)))
            }
            Tok::Keyword(Keyword::Local) => {
                self.bump();
                let inner = self.dec()?;
                Ok(Dec::Local(Box::new(inner), self.since(start)))
            }
            Tok::Keyword(Keyword::Module) => {
                self.bump();
                self.module_dec(start)
            }
            Tok::Keyword(Keyword::Val | Keyword::Include) => Err(Diagnostic::error(
                self.span(),
                "`val` and `include` only appear in module types (`module type S = { ... }`)",
            )),
            _ => Err(self.expected("a declaration (`def`, `entry`, `type`, ...)")),
        }
    }

    /// After `def`/`entry`/`let`.
    fn val_bind(&mut self, kind: ValKind, start: Span) -> PResult<ValBind> {
        let infix_by_name = matches!(self.peek(), Tok::Name(_))
            && matches!(self.peek_at(1), Tok::Symbol(s) if s != "!");
        let prefix_op = self.is(&Tok::LParen)
            && matches!(self.peek_at(1), Tok::Symbol(_))
            && *self.peek_at(2) == Tok::RParen;
        let (name, name_span, type_params, params) =
            if infix_by_name || (self.is(&Tok::LParen) && !prefix_op) {
                // Infix operator definition: `def p1 op p2`.
                let lhs = self.pat_atom()?;
                let (name, name_span) = match self.peek().clone() {
                    Tok::Symbol(s) if s != "!" => (s, self.bump().span),
                    Tok::Equals | Tok::Colon => {
                        return Err(Diagnostic::error(
                            lhs.span,
                            "a top-level binding must bind a single name",
                        ));
                    }
                    _ => return Err(self.expected("an operator symbol in this infix definition")),
                };
                check_definable(&name, name_span)?;
                let rhs = self.pat_atom()?;
                (name, name_span, Vec::new(), vec![lhs, rhs])
            } else {
                let (name, name_span) = self.bind_name()?;
                if prefix_op {
                    check_definable(&name, name_span)?;
                }
                let type_params = self.type_params()?;
                let mut params = Vec::new();
                while self.pat_atom_start() {
                    params.push(self.pat_atom()?);
                }
                (name, name_span, type_params, params)
            };
        let ret = if self.eat(&Tok::Colon) {
            Some(self.ty()?)
        } else {
            None
        };
        self.expect(&Tok::Equals, "`=` in this definition")?;
        let body = self.exp()?;
        Ok(ValBind {
            kind,
            name,
            name_span,
            type_params,
            params,
            ret,
            body,
            attrs: Vec::new(),
            doc: None,
            span: self.since(start),
        })
    }

    /// `NAME` or `(op)`.
    pub(crate) fn bind_name(&mut self) -> PResult<(Name, Span)> {
        if self.is(&Tok::LParen) {
            let start = self.bump().span;
            let name = match self.peek().clone() {
                Tok::Symbol(s) => s,
                _ => return Err(self.expected("an operator symbol")),
            };
            self.bump();
            self.expect(&Tok::RParen, "`)`")?;
            return Ok((name, self.since(start)));
        }
        self.name("a name")
    }

    /// `[n]`, `'a`, `'~a`, `'^a` in any order.
    pub(crate) fn type_params(&mut self) -> PResult<Vec<TypeParam>> {
        let mut params = Vec::new();
        loop {
            let start = self.span();
            match self.peek() {
                Tok::LBracket | Tok::IndexLBracket => {
                    self.bump();
                    let (n, _) = self.name("a size parameter name")?;
                    self.expect(&Tok::RBracket, "`]` after the size parameter")?;
                    params.push(TypeParam::Size(n, self.since(start)));
                }
                Tok::Tick | Tok::TickCaret | Tok::TickTilde => {
                    let l = match self.bump().tok {
                        Tok::Tick => Liftedness::Unlifted,
                        Tok::TickTilde => Liftedness::SizeLifted,
                        _ => Liftedness::Lifted,
                    };
                    let (n, _) = self.name("a type parameter name")?;
                    params.push(TypeParam::Type(n, l, self.since(start)));
                }
                _ => return Ok(params),
            }
        }
    }

    /// After `type`.
    fn type_bind(&mut self, start: Span) -> PResult<TypeBind> {
        let lifted = self.liftedness();
        let (name, _) = self.name("a type name")?;
        let params = self.type_params()?;
        self.expect(&Tok::Equals, "`=` in this type definition")?;
        let def = self.ty()?;
        Ok(TypeBind {
            name,
            lifted,
            params,
            def,
            attrs: Vec::new(),
            doc: None,
            span: self.since(start),
        })
    }
}

fn check_definable(name: &str, span: Span) -> PResult<()> {
    if matches!(name, "&&" | "||" | "=" | "!") {
        return Err(Diagnostic::error(
            span,
            format!("the operator `{name}` cannot be defined"),
        ));
    }
    Ok(())
}
