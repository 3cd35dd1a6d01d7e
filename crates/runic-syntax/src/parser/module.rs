//! Modules: module bindings, module expressions, module types and specs (spec §4.9).

use super::{PResult, Parser};
use crate::ast::*;
use crate::diag::Diagnostic;
use crate::lexer::{Keyword, Tok};
use crate::source::Span;

impl Parser {
    /// After `module`: a module binding or, after `module type`, a module type binding.
    pub(crate) fn module_dec(&mut self, start: Span) -> PResult<Dec> {
        if self.eat_kw(Keyword::Type) {
            let (name, name_span) = self.name("a module type name")?;
            self.expect(&Tok::Equals, "`=` in this module type definition")?;
            let def = self.mod_type()?;
            return Ok(Dec::ModType(ModTypeBind {
                name,
                name_span,
                def,
                span: self.since(start),
            }));
        }
        let (name, name_span) = self.name("a module name")?;
        let mut params = Vec::new();
        while self.is(&Tok::LParen) {
            params.push(self.mod_param()?);
        }
        let sig = if self.eat(&Tok::Colon) {
            Some(self.mod_type()?)
        } else {
            None
        };
        self.expect(&Tok::Equals, "`=` in this module definition")?;
        let body = self.mod_exp()?;
        Ok(Dec::Module(ModBind {
            name,
            name_span,
            params,
            sig,
            body,
            span: self.since(start),
        }))
    }

    /// `(name: mt)`
    fn mod_param(&mut self) -> PResult<ModParam> {
        let start = self.expect(&Tok::LParen, "`(`")?;
        let (name, name_span) = self.name("a module parameter name")?;
        self.expect(&Tok::Colon, "`:` and the parameter's module type")?;
        let sig = self.mod_type()?;
        self.expect(&Tok::RParen, "`)` after the module parameter")?;
        Ok(ModParam {
            name,
            name_span,
            sig,
            span: self.since(start),
        })
    }

    /// A module expression: a lambda, or an application with optional ascriptions.
    pub(crate) fn mod_exp(&mut self) -> PResult<ModExp> {
        self.nested(|p| {
            let start = p.span();
            if p.eat(&Tok::Backslash) {
                let param = p.mod_param()?;
                // The `->` after a result type belongs to the lambda.
                let sig = if p.eat(&Tok::Colon) {
                    Some(p.mod_type_refined()?)
                } else {
                    None
                };
                p.expect(&Tok::Arrow, "`->` in this parametric module")?;
                let body = p.mod_exp()?;
                return Ok(ModExp::Lambda(param, sig, Box::new(body), p.since(start)));
            }
            let mut m = p.mod_atom()?;
            while p.mod_atom_start() {
                let arg = p.mod_atom()?;
                m = ModExp::Apply(Box::new(m), Box::new(arg), p.since(start));
            }
            loop {
                let transparent = if p.eat(&Tok::Colon) {
                    false
                } else if p.eat(&Tok::ColonGt) {
                    true
                } else {
                    return Ok(m);
                };
                let mt = p.mod_type()?;
                m = ModExp::Ascribe(Box::new(m), mt, transparent, p.since(start));
            }
        })
    }

    /// Can a module argument start here? An `import` first on its line (at any indentation,
    /// as in a module body) begins the next declaration instead.
    fn mod_atom_start(&self) -> bool {
        if self.is_kw(Keyword::Import) && self.token(0).first_on_line {
            return false;
        }
        matches!(
            self.peek(),
            Tok::Name(_) | Tok::LParen | Tok::LBrace | Tok::Keyword(Keyword::Import)
        )
    }

    fn mod_atom(&mut self) -> PResult<ModExp> {
        let start = self.span();
        match self.peek().clone() {
            Tok::Name(_) => {
                let (q, span) = self.qual_name("a module name")?;
                Ok(ModExp::Var(q, span))
            }
            Tok::LParen => {
                self.bump();
                let m = self.mod_exp()?;
                self.expect(&Tok::RParen, "`)`")?;
                Ok(m)
            }
            Tok::LBrace => {
                self.bump();
                let mut decs = Vec::new();
                while !self.is(&Tok::RBrace) {
                    if self.at_eof() {
                        return Err(self.expected("`}` to close the module"));
                    }
                    decs.push(self.dec()?);
                }
                self.bump();
                Ok(ModExp::Struct(decs, self.since(start)))
            }
            Tok::Keyword(Keyword::Import) => {
                self.bump();
                let path = self.import_path()?;
                Ok(ModExp::Import(path, self.since(start)))
            }
            _ => Err(self.expected("a module expression (a module name, `{`, `(` or `import`)")),
        }
    }

    /// The string after `import`.
    pub(crate) fn import_path(&mut self) -> PResult<String> {
        let Tok::Str(bytes) = self.peek().clone() else {
            return Err(self.expected("a file path in double quotes after `import`"));
        };
        self.bump();
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// A module type.
    pub(crate) fn mod_type(&mut self) -> PResult<ModTypeExp> {
        self.nested(|p| {
            let start = p.span();
            let named_param = p.is(&Tok::LParen)
                && matches!(p.peek_at(1), Tok::Name(_))
                && *p.peek_at(2) == Tok::Colon;
            if named_param {
                p.bump();
                let (name, _) = p.name("a parameter name")?;
                p.expect(&Tok::Colon, "`:`")?;
                let param = p.mod_type()?;
                p.expect(&Tok::RParen, "`)`")?;
                p.expect(&Tok::Arrow, "`->` after the parameter's module type")?;
                let res = p.mod_type()?;
                return Ok(ModTypeExp::Arrow(
                    Some(name),
                    Box::new(param),
                    Box::new(res),
                    p.since(start),
                ));
            }
            let mut mt = p.mod_type_refined()?;
            if p.eat(&Tok::Arrow) {
                let res = p.mod_type()?;
                mt = ModTypeExp::Arrow(None, Box::new(mt), Box::new(res), p.since(start));
            }
            Ok(mt)
        })
    }

    /// A module type atom with its `with` refinements.
    fn mod_type_refined(&mut self) -> PResult<ModTypeExp> {
        let start = self.span();
        let mut mt = self.mod_type_atom()?;
        while self.eat_kw(Keyword::With) {
            let (q, _) = self.qual_name("a type name after `with`")?;
            let params = self.type_params()?;
            self.expect(&Tok::Equals, "`=` in this refinement")?;
            let t = self.ty()?;
            mt = ModTypeExp::With(Box::new(mt), q, params, t, self.since(start));
        }
        Ok(mt)
    }

    fn mod_type_atom(&mut self) -> PResult<ModTypeExp> {
        let start = self.span();
        match self.peek().clone() {
            Tok::Name(_) => {
                let (q, span) = self.qual_name("a module type name")?;
                Ok(ModTypeExp::Var(q, span))
            }
            Tok::LParen => {
                self.bump();
                let mt = self.mod_type()?;
                self.expect(&Tok::RParen, "`)`")?;
                Ok(mt)
            }
            Tok::LBrace => {
                self.bump();
                let mut specs = Vec::new();
                while !self.eat(&Tok::RBrace) {
                    specs.push(self.spec()?);
                }
                Ok(ModTypeExp::Sig(specs, self.since(start)))
            }
            _ => Err(self.expected("a module type (a name or `{`)")),
        }
    }

    /// One specification inside `{ }` of a module type; attributes are accepted and dropped.
    fn spec(&mut self) -> PResult<Spec> {
        while self.is(&Tok::HashLBracket) {
            self.attr_bracket()?;
        }
        let start = self.span();
        match self.peek().clone() {
            Tok::Keyword(Keyword::Val) => {
                self.bump();
                let (name, name_span) = match self.peek().clone() {
                    Tok::Symbol(s) => (s, self.bump().span),
                    _ => self.bind_name()?,
                };
                let type_params = self.type_params()?;
                self.expect(&Tok::Colon, "`:` and the value's type")?;
                let ty = self.ty()?;
                Ok(Spec::Val {
                    name,
                    name_span,
                    type_params,
                    ty,
                    span: self.since(start),
                })
            }
            Tok::Keyword(Keyword::Type) => {
                self.bump();
                let lifted = self.liftedness();
                let (name, _) = self.name("a type name")?;
                let params = self.type_params()?;
                let def = if self.eat(&Tok::Equals) {
                    Some(self.ty()?)
                } else {
                    None
                };
                Ok(Spec::Type {
                    name,
                    lifted,
                    params,
                    def,
                    span: self.since(start),
                })
            }
            Tok::Keyword(Keyword::Module) => {
                self.bump();
                let (name, _) = self.name("a module name")?;
                self.expect(&Tok::Colon, "`:` and the module's type")?;
                let sig = self.mod_type()?;
                Ok(Spec::Module {
                    name,
                    sig,
                    span: self.since(start),
                })
            }
            Tok::Keyword(Keyword::Include) => {
                self.bump();
                let mt = self.mod_type()?;
                Ok(Spec::Include(mt, self.since(start)))
            }
            Tok::Keyword(Keyword::Def) => Err(Diagnostic::error(
                self.span(),
                "a module type specifies values with `val name: type`, not `def`",
            )),
            _ => Err(self.expected("a specification (`val`, `type`, `module`, `include`) or `}`")),
        }
    }

    /// `^` or `~` glued to a preceding `type`.
    pub(crate) fn liftedness(&mut self) -> Liftedness {
        if self.is_symbol("^") && !self.token(0).ws_before {
            self.bump();
            Liftedness::Lifted
        } else if self.is(&Tok::Tilde) && !self.token(0).ws_before {
            self.bump();
            Liftedness::SizeLifted
        } else {
            Liftedness::Unlifted
        }
    }
}
