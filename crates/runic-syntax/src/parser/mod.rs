//! Recursive-descent parser with precedence climbing (spec §3).
//!
//! The parser works on the token vector produced by [`crate::lexer`]. Each grammar area has its
//! own module: declarations, expressions, patterns and types. Errors are single
//! [`Diagnostic`]s propagated with `?`; the declaration loop records them and skips to the next
//! declaration keyword in column 1, so one run reports several independent errors.

mod dec;
mod exp;
mod module;
mod pat;
mod types;

use crate::ast::*;
use crate::diag::Diagnostic;
use crate::lexer::{Keyword, Tok, Token};
use crate::source::{FileId, Span};

/// How deeply expressions, types and patterns may nest before the parser gives up (this keeps
/// the parser and every later recursive pass clear of stack overflows).
pub(crate) const MAX_DEPTH: u32 = 1000;

pub(crate) type PResult<T> = Result<T, Diagnostic>;

pub(crate) struct Parser {
    toks: Vec<Token>,
    pos: usize,
    file: FileId,
    next_id: u32,
    depth: u32,
    /// End offset of the last consumed token.
    last_end: u32,
    pub errors: Vec<Diagnostic>,
}

impl Parser {
    pub fn new(file: FileId, toks: Vec<Token>, first_id: u32) -> Parser {
        Parser {
            toks,
            pos: 0,
            file,
            next_id: first_id,
            depth: 0,
            last_end: 0,
            errors: Vec::new(),
        }
    }

    pub fn next_id(&self) -> u32 {
        self.next_id
    }

    fn fresh_id(&mut self) -> NodeId {
        let id = NodeId(self.next_id);
        self.next_id += 1;
        id
    }

    fn mk_exp(&mut self, kind: ExpKind, span: Span) -> Exp {
        Exp {
            id: self.fresh_id(),
            span,
            kind,
        }
    }

    fn mk_pat(&mut self, kind: PatKind, span: Span) -> Pat {
        Pat {
            id: self.fresh_id(),
            span,
            kind,
        }
    }

    // ----- token access -----

    fn token(&self, ahead: usize) -> &Token {
        let i = (self.pos + ahead).min(self.toks.len() - 1);
        &self.toks[i]
    }

    fn peek(&self) -> &Tok {
        &self.token(0).tok
    }

    fn peek_at(&self, ahead: usize) -> &Tok {
        &self.token(ahead).tok
    }

    fn span(&self) -> Span {
        self.token(0).span
    }

    fn at_eof(&self) -> bool {
        matches!(self.peek(), Tok::Eof)
    }

    fn bump(&mut self) -> Token {
        let t = self.token(0).clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        self.last_end = t.span.end;
        t
    }

    /// The span from `start` to the end of the last consumed token.
    fn since(&self, start: Span) -> Span {
        Span {
            file: self.file,
            start: start.start,
            end: self.last_end.max(start.start),
        }
    }

    fn is(&self, t: &Tok) -> bool {
        self.peek() == t
    }

    fn is_kw(&self, k: Keyword) -> bool {
        matches!(self.peek(), Tok::Keyword(x) if *x == k)
    }

    fn is_symbol(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Symbol(x) if x == s)
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.is(t) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn eat_kw(&mut self, k: Keyword) -> bool {
        if self.is_kw(k) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// "expected WHAT, found TOKEN" at the current token.
    fn expected(&self, what: &str) -> Diagnostic {
        let found = self.peek();
        if *found == Tok::Eof {
            Diagnostic::error(
                self.span(),
                format!("unexpected end of file: expected {what}"),
            )
        } else {
            Diagnostic::error(
                self.span(),
                format!("expected {what}, found {}", found.describe()),
            )
        }
    }

    fn expect(&mut self, t: &Tok, what: &str) -> PResult<Span> {
        if self.is(t) {
            Ok(self.bump().span)
        } else {
            Err(self.expected(what))
        }
    }

    fn expect_kw(&mut self, k: Keyword) -> PResult<Span> {
        if self.is_kw(k) {
            Ok(self.bump().span)
        } else {
            Err(self.expected(&format!("`{}`", k.as_str())))
        }
    }

    /// Runs `f` one nesting level deeper, failing cleanly beyond [`MAX_DEPTH`].
    fn nested<T>(&mut self, f: impl FnOnce(&mut Parser) -> PResult<T>) -> PResult<T> {
        self.deeper()?;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn deeper(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.depth -= 1;
            return Err(Diagnostic::error(
                self.span(),
                "expression nested too deeply",
            ));
        }
        Ok(())
    }

    /// A plain name, with a helpful message for reserved words.
    fn name(&mut self, what: &str) -> PResult<(Name, Span)> {
        match self.peek().clone() {
            Tok::Name(n) => Ok((n, self.bump().span)),
            Tok::Keyword(k) => Err(Diagnostic::error(
                self.span(),
                format!(
                    "expected {what}, found the reserved word `{}` (it cannot be used as a name)",
                    k.as_str()
                ),
            )),
            _ => Err(self.expected(what)),
        }
    }

    /// A record field name: a name or a decimal number.
    fn field_name(&mut self) -> PResult<(Name, Span)> {
        match self.peek().clone() {
            Tok::Name(n) => Ok((n, self.bump().span)),
            Tok::Int(v, None) => Ok((v.to_string(), self.bump().span)),
            _ => Err(self.expected("a field name")),
        }
    }

    /// `NAME (. NAME)*` with no whitespace around the dots.
    fn qual_name(&mut self, what: &str) -> PResult<(QualName, Span)> {
        let (first, start) = self.name(what)?;
        let mut parts = vec![first];
        while self.dot_then(|t| matches!(t, Tok::Name(_))) {
            self.bump();
            let (n, _) = self.name(what)?;
            parts.push(n);
        }
        let name = parts.pop().unwrap_or_default();
        Ok((QualName { quals: parts, name }, self.since(start)))
    }

    /// Is the current token a `.` glued to the previous token and to a following token for
    /// which `pred` holds?
    fn dot_then(&self, pred: impl Fn(&Tok) -> bool) -> bool {
        let dot = self.token(0);
        let next = self.token(1);
        dot.tok == Tok::Dot && !dot.ws_before && !next.ws_before && pred(&next.tok)
    }

    /// An attribute body: `NAME`, `INT` or `NAME(attr, ...)`.
    fn attr(&mut self) -> PResult<Attr> {
        self.nested(|p| match p.peek().clone() {
            Tok::Int(v, None) => {
                p.bump();
                i64::try_from(v).map(Attr::Int).map_err(|_| {
                    Diagnostic::error(p.since(p.span()), "attribute number is too large")
                })
            }
            Tok::Name(_) => {
                let (n, _) = p.name("an attribute")?;
                if p.eat(&Tok::LParen) {
                    let args = p.comma_list(&Tok::RParen, "`)`", |p| p.attr())?;
                    Ok(Attr::Call(n, args))
                } else {
                    Ok(Attr::Name(n))
                }
            }
            _ => Err(p.expected("an attribute (a name or a number)")),
        })
    }

    /// `#[ attr ]`, with the `#[` already current.
    fn attr_bracket(&mut self) -> PResult<Attr> {
        self.expect(&Tok::HashLBracket, "`#[`")?;
        let a = self.attr()?;
        self.expect(&Tok::RBracket, "`]` to close the attribute")?;
        Ok(a)
    }

    /// Elements separated by commas up to `close` (consumed); a trailing comma is allowed.
    fn comma_list<T>(
        &mut self,
        close: &Tok,
        close_desc: &str,
        mut item: impl FnMut(&mut Parser) -> PResult<T>,
    ) -> PResult<Vec<T>> {
        let mut items = Vec::new();
        loop {
            if self.eat(close) {
                return Ok(items);
            }
            items.push(item(self)?);
            if self.eat(close) {
                return Ok(items);
            }
            if !self.eat(&Tok::Comma) {
                return Err(self.expected(&format!("`,` or {close_desc}")));
            }
        }
    }

    /// The binary operator starting at the current token, and how many tokens it spans.
    fn peek_binop(&self) -> Option<(BinOpName, usize)> {
        let t = self.token(0);
        match &t.tok {
            Tok::Symbol(s) if s != "!" => Some((
                BinOpName {
                    name: QualName::unqual(s.clone()),
                    backtick: false,
                    span: t.span,
                },
                1,
            )),
            Tok::QualSymbol(q, s) => Some((
                BinOpName {
                    name: QualName {
                        quals: q.clone(),
                        name: s.clone(),
                    },
                    backtick: false,
                    span: t.span,
                },
                1,
            )),
            Tok::Backtick => {
                let mut parts = Vec::new();
                let mut i = 1;
                loop {
                    match self.peek_at(i) {
                        Tok::Name(n) => parts.push(n.clone()),
                        _ => return None,
                    }
                    i += 1;
                    match self.peek_at(i) {
                        Tok::Dot => i += 1,
                        Tok::Backtick => break,
                        _ => return None,
                    }
                }
                let name = parts.pop()?;
                let span = t.span.to(self.token(i).span);
                Some((
                    BinOpName {
                        name: QualName { quals: parts, name },
                        backtick: true,
                        span,
                    },
                    i + 1,
                ))
            }
            _ => None,
        }
    }

    /// Runs `f` and requires that it consumed all input.
    pub fn whole<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        let r = f(self)?;
        if !self.at_eof() {
            return Err(self.expected("end of input"));
        }
        Ok(r)
    }

    fn skip(&mut self, n: usize) {
        for _ in 0..n {
            self.bump();
        }
    }
}

/// Binding strength of a binary operator (rows of the table in spec §3.4; higher binds
/// tighter) and whether it is right-associative.
pub fn fixity(op: &BinOpName) -> (u8, bool) {
    if op.backtick {
        return (3, false);
    }
    let s = op.name.name.as_str();
    const BUILTIN: [(&str, u8); 26] = [
        ("|>", 5),
        ("<|", 6),
        ("||", 7),
        ("&&", 8),
        ("==", 9),
        ("!=", 9),
        ("<=", 9),
        (">=", 9),
        ("<<", 11),
        (">>", 11),
        ("**", 14),
        ("//", 13),
        ("%%", 13),
        ("<", 9),
        (">", 9),
        ("+", 12),
        ("-", 12),
        ("*", 13),
        ("/", 13),
        ("%", 13),
        ("&", 10),
        ("^", 10),
        ("|", 10),
        ("!", 9),
        ("=", 9),
        ("", 9),
    ];
    let (_, row) = BUILTIN
        .iter()
        .filter(|(b, _)| s.starts_with(b))
        .max_by_key(|(b, _)| b.len())
        .copied()
        .unwrap_or(("", 9));
    (row, row == 6)
}

/// Precedence rows that are not binary operators (spec §3.4).
pub(crate) mod prec {
    /// `if`, `let`, `loop`, `match`, lambdas, `assert`, `#[attr] e`: they extend as far right
    /// as possible, so they are only left bare where nothing can follow them.
    pub const OPEN: u8 = 0;
    /// `e : t`, `e :> t`
    pub const ASCRIBE: u8 = 1;
    pub const RANGE: u8 = 2;
    pub const WITH: u8 = 4;
    /// Application, prefix `-` and `!`.
    pub const APPLY: u8 = 15;
    /// Atoms, indexing and projection.
    pub const ATOM: u8 = 16;
}
