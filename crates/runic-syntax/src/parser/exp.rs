//! Expressions (spec §3.3, §3.4, §7).

use super::{fixity, prec, PResult, Parser};
use crate::ast::*;
use crate::diag::Diagnostic;
use crate::lexer::{Keyword, Tok};
use crate::source::Span;

impl Parser {
    /// `exp`: an `exp2` optionally followed by `: type` / `:> type`.
    pub(crate) fn exp(&mut self) -> PResult<Exp> {
        self.nested(|p| {
            let start = p.span();
            let mut e = p.exp2()?;
            loop {
                if p.eat(&Tok::Colon) {
                    let t = p.ty()?;
                    e = p.mk_exp(ExpKind::Ascribe(Box::new(e), t), p.since(start));
                } else if p.eat(&Tok::ColonGt) {
                    let t = p.ty()?;
                    e = p.mk_exp(ExpKind::Coerce(Box::new(e), t), p.since(start));
                } else {
                    return Ok(e);
                }
                p.deeper()?;
            }
        })
    }

    /// `exp2`: everything but ascription; ranges are the loosest binding form.
    pub(crate) fn exp2(&mut self) -> PResult<Exp> {
        let p = self;
        {
            let start = p.span();
            let first = p.binary(prec::RANGE + 1)?;
            let mut second = None;
            if p.is(&Tok::DotDot) {
                p.bump();
                second = Some(Box::new(p.binary(prec::RANGE + 1)?));
            }
            let kind = match p.peek() {
                Tok::DotDotDot => RangeEnd::Inclusive,
                Tok::DotDotLt => RangeEnd::UpToExclusive,
                Tok::DotDotGt => RangeEnd::DownToExclusive,
                _ if second.is_some() => {
                    return Err(Diagnostic::error(
                        p.since(start),
                        "`a..b` needs `...`, `..<` or `..>` after it, e.g. `a..b...c` or `a..<c`",
                    ));
                }
                _ => return Ok(first),
            };
            p.bump();
            let end = p.binary(prec::RANGE + 1)?;
            Ok(p.mk_exp(
                ExpKind::Range {
                    start: Box::new(first),
                    second,
                    end: Box::new(end),
                    kind,
                },
                p.since(start),
            ))
        }
    }

    /// Precedence climbing over binary operators of row `min` and above, plus `with`.
    fn binary(&mut self, min: u8) -> PResult<Exp> {
        self.nested(|p| {
            let start = p.span();
            let mut lhs = p.unary()?;
            let saved_depth = p.depth;
            loop {
                if p.is_kw(Keyword::With) {
                    if prec::WITH < min {
                        break;
                    }
                    p.bump();
                    let steps = p.update_steps(true)?;
                    p.expect(&Tok::Equals, "`=` in the `with` update")?;
                    let value = p.binary(prec::WITH + 1)?;
                    p.deeper()?;
                    lhs = p.mk_exp(
                        ExpKind::Update {
                            target: Box::new(lhs),
                            steps,
                            value: Box::new(value),
                        },
                        p.since(start),
                    );
                    continue;
                }
                let Some((op, ntoks)) = p.peek_binop() else {
                    break;
                };
                let (row, right) = fixity(&op);
                if row < min {
                    break;
                }
                // `(e op)` is a left section: leave the operator for the caller.
                if *p.peek_at(ntoks) == Tok::RParen {
                    break;
                }
                p.skip(ntoks);
                let rhs = p.binary(if right { row } else { row + 1 })?;
                p.deeper()?;
                lhs = p.mk_exp(
                    ExpKind::BinOp {
                        op,
                        lhs: Box::new(lhs),
                        rhs: Box::new(rhs),
                    },
                    p.since(start),
                );
            }
            p.depth = saved_depth;
            Ok(lhs)
        })
    }

    /// Prefix `-` and `!`, and the keyword forms that extend as far right as possible.
    fn unary(&mut self) -> PResult<Exp> {
        let p = self;
        {
            let start = p.span();
            match p.peek() {
                Tok::Symbol(s) if s == "-" => {
                    p.bump();
                    let e = p.nested(|p| p.unary())?;
                    Ok(p.mk_exp(ExpKind::Negate(Box::new(e)), p.since(start)))
                }
                Tok::Symbol(s) if s == "!" => {
                    p.bump();
                    let e = p.nested(|p| p.unary())?;
                    Ok(p.mk_exp(ExpKind::Not(Box::new(e)), p.since(start)))
                }
                Tok::Keyword(Keyword::If) => p.if_exp(),
                Tok::Keyword(Keyword::Let) => p.let_exp(),
                Tok::Keyword(Keyword::Loop) => p.loop_exp(),
                Tok::Keyword(Keyword::Match) => p.match_exp(),
                Tok::Keyword(Keyword::Assert) => {
                    p.bump();
                    let cond = p.atom()?;
                    let body = p.exp()?;
                    Ok(p.mk_exp(
                        ExpKind::Assert {
                            cond: Box::new(cond),
                            body: Box::new(body),
                        },
                        p.since(start),
                    ))
                }
                Tok::Backslash => p.lambda(),
                Tok::HashLBracket => {
                    let a = p.attr_bracket()?;
                    let e = p.exp()?;
                    Ok(p.mk_exp(ExpKind::Attr(a, Box::new(e)), p.since(start)))
                }
                _ => p.application(),
            }
        }
    }

    fn if_exp(&mut self) -> PResult<Exp> {
        let start = self.expect_kw(Keyword::If)?;
        let cond = self.exp()?;
        self.expect_kw(Keyword::Then)?;
        let then_branch = self.exp()?;
        self.expect_kw(Keyword::Else)?;
        let else_branch = self.exp()?;
        Ok(self.mk_exp(
            ExpKind::If {
                cond: Box::new(cond),
                then_branch: Box::new(then_branch),
                else_branch: Box::new(else_branch),
            },
            self.since(start),
        ))
    }

    fn lambda(&mut self) -> PResult<Exp> {
        let start = self.expect(&Tok::Backslash, "`\\`")?;
        let mut params = Vec::new();
        while self.pat_atom_start() {
            params.push(self.pat_atom()?);
        }
        if params.is_empty() {
            return Err(self.expected("a parameter after `\\`"));
        }
        let ret = if self.eat(&Tok::Colon) {
            Some(self.type_term()?)
        } else {
            None
        };
        self.expect(&Tok::Arrow, "`->` after the lambda's parameters")?;
        let body = self.exp()?;
        Ok(self.mk_exp(
            ExpKind::Lambda {
                params,
                ret,
                body: Box::new(body),
            },
            self.since(start),
        ))
    }

    fn loop_exp(&mut self) -> PResult<Exp> {
        let start = self.expect_kw(Keyword::Loop)?;
        let pat = self.pat()?;
        let init = if self.eat(&Tok::Equals) {
            Some(Box::new(self.exp()?))
        } else {
            None
        };
        let form = if self.eat_kw(Keyword::For) {
            let counted = matches!(self.peek(), Tok::Name(_))
                && matches!(self.peek_at(1), Tok::Symbol(s) if s == "<");
            if counted {
                let (var, var_span) = self.name("a loop variable")?;
                self.bump();
                let bound = self.exp()?;
                LoopForm::For {
                    var,
                    var_span,
                    bound: Box::new(bound),
                }
            } else {
                let pat = self.pat()?;
                self.expect_kw(Keyword::In)?;
                let array = self.exp()?;
                LoopForm::ForIn {
                    pat,
                    array: Box::new(array),
                }
            }
        } else if self.eat_kw(Keyword::While) {
            LoopForm::While(Box::new(self.exp()?))
        } else {
            return Err(self.expected("`for` or `while` in this `loop`"));
        };
        self.expect_kw(Keyword::Do)?;
        let body = self.exp()?;
        Ok(self.mk_exp(
            ExpKind::Loop {
                pat,
                init,
                form,
                body: Box::new(body),
            },
            self.since(start),
        ))
    }

    fn match_exp(&mut self) -> PResult<Exp> {
        let start = self.expect_kw(Keyword::Match)?;
        let scrutinee = self.exp()?;
        let mut cases = Vec::new();
        while self.is_kw(Keyword::Case) {
            let cstart = self.bump().span;
            let pat = self.pat()?;
            self.expect(&Tok::Arrow, "`->` after the case pattern")?;
            let body = self.exp()?;
            cases.push(MatchCase {
                pat,
                body,
                span: self.since(cstart),
            });
        }
        if cases.is_empty() {
            return Err(self.expected("`case` after the `match` expression"));
        }
        Ok(self.mk_exp(
            ExpKind::Match {
                scrutinee: Box::new(scrutinee),
                cases,
            },
            self.since(start),
        ))
    }

    /// All `let` forms; the body is `in exp` or another `let`.
    fn let_exp(&mut self) -> PResult<Exp> {
        self.nested(|p| {
            let start = p.expect_kw(Keyword::Let)?;
            let kind = p.let_binding()?;
            let body = if p.eat_kw(Keyword::In) {
                p.exp()?
            } else if p.is_kw(Keyword::Let) {
                p.let_exp()?
            } else if p.at_eof() {
                return Err(Diagnostic::error(
                    start,
                    "unexpected end of file: this `let` needs an `in`",
                ));
            } else {
                return Err(p.expected("`in` (or another `let`) after this `let` binding"));
            };
            let kind = match kind {
                LetHead::Pat { sizes, pat, rhs } => ExpKind::LetPat {
                    sizes,
                    pat,
                    rhs,
                    body: Box::new(body),
                },
                LetHead::Fun {
                    name,
                    name_span,
                    type_params,
                    params,
                    ret,
                    rhs,
                } => ExpKind::LetFun {
                    name,
                    name_span,
                    type_params,
                    params,
                    ret,
                    rhs,
                    body: Box::new(body),
                },
                LetHead::Update {
                    name,
                    name_span,
                    steps,
                    rhs,
                } => ExpKind::LetUpdate {
                    name,
                    name_span,
                    steps,
                    rhs,
                    body: Box::new(body),
                },
            };
            Ok(p.mk_exp(kind, p.since(start)))
        })
    }

    /// What comes between `let` and `in`.
    fn let_binding(&mut self) -> PResult<LetHead> {
        let name_tok = matches!(self.peek(), Tok::Name(_));
        // `let (op) x y = ...` defines a local operator; `let (op) = ...` binds a pattern.
        let op_len = if self.is(&Tok::LParen) {
            self.peek_binop_at(1)
        } else {
            None
        };
        let op_name = op_len.is_some_and(|n| {
            *self.peek_at(1 + n) == Tok::RParen
                && !matches!(self.peek_at(2 + n), Tok::Equals | Tok::Colon)
        });
        if name_tok {
            match self.peek_at(1) {
                Tok::IndexLBracket => return self.let_update(),
                Tok::Dot if !self.token(1).ws_before => return self.let_update(),
                Tok::LBracket => {
                    // `let f [n] ...` is a local function; `let a [i] = v` a mistaken update.
                    let single_name = matches!(self.peek_at(2), Tok::Name(_))
                        && *self.peek_at(3) == Tok::RBracket;
                    if !single_name || *self.peek_at(4) == Tok::Equals {
                        return Err(Diagnostic::error(
                            self.token(1).span,
                            "`[` with a space before it starts an array literal; write `a[i]` to index (or update in place with `let a[i] = v`)",
                        ));
                    }
                    return self.let_fun();
                }
                Tok::Equals | Tok::Colon => {}
                _ => {
                    let t = self.token(1).clone();
                    self.pos += 1;
                    let fun = self.pat_atom_start()
                        || matches!(t.tok, Tok::Tick | Tok::TickCaret | Tok::TickTilde);
                    self.pos -= 1;
                    if fun {
                        return self.let_fun();
                    }
                }
            }
        } else if op_name {
            return self.let_fun();
        }
        let mut sizes = Vec::new();
        // `let [a][b] p = e`: the second `[` follows `]` directly, so it lexes as an index
        // bracket.
        while (self.is(&Tok::LBracket) || (!sizes.is_empty() && self.is(&Tok::IndexLBracket)))
            && matches!(self.peek_at(1), Tok::Name(_))
            && *self.peek_at(2) == Tok::RBracket
        {
            self.bump();
            sizes.push(self.name("a size name")?);
            self.bump();
        }
        let pat = self.pat()?;
        self.expect(&Tok::Equals, "`=` after the pattern of this `let`")?;
        let rhs = Box::new(self.exp()?);
        Ok(LetHead::Pat { sizes, pat, rhs })
    }

    fn peek_binop_at(&mut self, ahead: usize) -> Option<usize> {
        self.pos += ahead;
        let r = self.peek_binop().map(|(_, n)| n);
        self.pos -= ahead;
        r
    }

    fn let_fun(&mut self) -> PResult<LetHead> {
        let (name, name_span) = self.bind_name()?;
        let type_params = self.type_params()?;
        let mut params = Vec::new();
        while self.pat_atom_start() {
            params.push(self.pat_atom()?);
        }
        let ret = if self.eat(&Tok::Colon) {
            Some(self.ty()?)
        } else {
            None
        };
        self.expect(&Tok::Equals, "`=` in this local function definition")?;
        let rhs = Box::new(self.exp()?);
        Ok(LetHead::Fun {
            name,
            name_span,
            type_params,
            params,
            ret,
            rhs,
        })
    }

    fn let_update(&mut self) -> PResult<LetHead> {
        let (name, name_span) = self.name("a variable name")?;
        let steps = self.update_steps(false)?;
        self.expect(&Tok::Equals, "`=` in this in-place update")?;
        let rhs = Box::new(self.exp()?);
        Ok(LetHead::Update {
            name,
            name_span,
            steps,
            rhs,
        })
    }

    /// Update steps: `[i, j]` and `.f`; after `with`, the first may also be a bare field name.
    pub(crate) fn update_steps(&mut self, after_with: bool) -> PResult<Vec<UpdateStep>> {
        let mut steps = Vec::new();
        loop {
            let start = self.span();
            let first = steps.is_empty();
            if self.is(&Tok::IndexLBracket) || (first && after_with && self.is(&Tok::LBracket)) {
                self.bump();
                let idx = self.indices()?;
                steps.push(UpdateStep::Index(idx, self.since(start)));
            } else if first && after_with && matches!(self.peek(), Tok::Name(_) | Tok::Int(_, None))
            {
                let (f, s) = self.field_name()?;
                steps.push(UpdateStep::Field(f, s));
            } else if self.is(&Tok::Dot) && (!self.token(0).ws_before || (first && after_with)) {
                self.bump();
                let (f, _) = self.field_name()?;
                steps.push(UpdateStep::Field(f, self.since(start)));
            } else if first {
                return Err(self.expected("an index `[i]` or a field name to update"));
            } else {
                return Ok(steps);
            }
        }
    }

    /// Index components up to and including `]`.
    pub(crate) fn indices(&mut self) -> PResult<Vec<DimIndex>> {
        self.comma_list(&Tok::RBracket, "`]`", |p| {
            let start = if p.is(&Tok::Colon) {
                None
            } else {
                Some(p.exp2()?)
            };
            if !p.eat(&Tok::Colon) {
                return match start {
                    Some(e) => Ok(DimIndex::Index(e)),
                    None => Err(p.expected("an index")),
                };
            }
            let ends_part =
                |p: &Parser| matches!(p.peek(), Tok::Colon | Tok::Comma | Tok::RBracket);
            let end = if ends_part(p) { None } else { Some(p.exp2()?) };
            let stride = if p.eat(&Tok::Colon) {
                if ends_part(p) {
                    None
                } else {
                    Some(p.exp2()?)
                }
            } else {
                None
            };
            Ok(DimIndex::Slice { start, end, stride })
        })
    }

    /// Application `f a b`, a constructor with payload `#c a b`, or a lone atom. A lambda may
    /// be the last argument.
    fn application(&mut self) -> PResult<Exp> {
        let start = self.span();
        if let Tok::Constructor(c) = self.peek().clone() {
            self.bump();
            let mut args = Vec::new();
            while self.atom_start() {
                args.push(self.atom()?);
            }
            return Ok(self.mk_exp(ExpKind::Constr(c, args), self.since(start)));
        }
        let head = self.atom()?;
        let mut args = Vec::new();
        loop {
            if self.atom_start() {
                args.push(self.atom()?);
            } else if self.is(&Tok::Backslash) {
                args.push(self.lambda()?);
                break;
            } else {
                break;
            }
        }
        if args.is_empty() {
            Ok(head)
        } else {
            Ok(self.mk_exp(ExpKind::Apply(Box::new(head), args), self.since(start)))
        }
    }

    /// Can the current token start an atom (and therefore an argument)?
    fn atom_start(&self) -> bool {
        matches!(
            self.peek(),
            Tok::Int(..)
                | Tok::Float(..)
                | Tok::Char(_)
                | Tok::Str(_)
                | Tok::Keyword(Keyword::True | Keyword::False)
                | Tok::Name(_)
                | Tok::Constructor(_)
                | Tok::Holes
                | Tok::LParen
                | Tok::LBracket
                | Tok::LBrace
        )
    }

    pub(crate) fn atom(&mut self) -> PResult<Exp> {
        let p = self;
        {
            let start = p.span();
            let mut e = p.atom_base()?;
            let saved_depth = p.depth;
            // Postfix indexing and projection.
            loop {
                if p.is(&Tok::IndexLBracket) {
                    p.bump();
                    let idx = p.indices()?;
                    e = p.mk_exp(ExpKind::Index(Box::new(e), idx), p.since(start));
                } else if p.dot_then(|t| matches!(t, Tok::Name(_) | Tok::Int(_, None))) {
                    p.bump();
                    let (f, _) = p.field_name()?;
                    e = p.mk_exp(ExpKind::Project(Box::new(e), f), p.since(start));
                } else {
                    break;
                }
                p.deeper()?;
            }
            p.depth = saved_depth;
            Ok(e)
        }
    }

    fn atom_base(&mut self) -> PResult<Exp> {
        let start = self.span();
        let lit = |p: &mut Parser, l: Literal| {
            p.bump();
            Ok(p.mk_exp(ExpKind::Literal(l), start))
        };
        match self.peek().clone() {
            Tok::Int(value, suffix) => lit(self, Literal::Int { value, suffix }),
            Tok::Float(text, suffix) => lit(self, Literal::Float { text, suffix }),
            Tok::Char(c) => lit(self, Literal::Char(c)),
            Tok::Str(s) => lit(self, Literal::String(s)),
            Tok::Keyword(Keyword::True) => lit(self, Literal::Bool(true)),
            Tok::Keyword(Keyword::False) => lit(self, Literal::Bool(false)),
            Tok::Holes => {
                self.bump();
                Ok(self.mk_exp(ExpKind::Hole, start))
            }
            Tok::Constructor(c) => {
                self.bump();
                Ok(self.mk_exp(ExpKind::Constr(c, Vec::new()), start))
            }
            Tok::Name(_) => {
                let (q, span) = self.qual_name("a name")?;
                if self.dot_then(|t| *t == Tok::LParen) {
                    self.bump();
                    self.bump();
                    let e = self.exp()?;
                    self.expect(&Tok::RParen, "`)` to close the local open")?;
                    return Ok(self.mk_exp(ExpKind::LocalOpen(q, Box::new(e)), self.since(start)));
                }
                Ok(self.mk_exp(ExpKind::Var(q), span))
            }
            Tok::LParen => self.paren(),
            Tok::LBracket => {
                self.bump();
                let elems = self.comma_list(&Tok::RBracket, "`]`", |p| p.exp())?;
                Ok(self.mk_exp(ExpKind::ArrayLit(elems), self.since(start)))
            }
            Tok::LBrace => {
                self.bump();
                let fields = self.comma_list(&Tok::RBrace, "`}`", |p| {
                    let fstart = p.span();
                    let punnable = matches!(p.peek(), Tok::Name(_));
                    let (f, fspan) = p.field_name()?;
                    if p.eat(&Tok::Equals) {
                        Ok(RecordField::Explicit(f, p.exp()?))
                    } else if punnable {
                        Ok(RecordField::Punned(f, fspan))
                    } else {
                        Err(Diagnostic::error(
                            fstart,
                            "a numbered field needs a value: write `0 = e`",
                        ))
                    }
                })?;
                Ok(self.mk_exp(ExpKind::Record(fields), self.since(start)))
            }
            _ => Err(self.expected("an expression")),
        }
    }

    /// Everything that starts with `(`: unit, parentheses, tuples and sections.
    fn paren(&mut self) -> PResult<Exp> {
        let start = self.expect(&Tok::LParen, "`(`")?;
        if self.eat(&Tok::RParen) {
            return Ok(self.mk_exp(ExpKind::Tuple(Vec::new()), self.since(start)));
        }
        if let Some((op, n)) = self.peek_binop() {
            if *self.peek_at(n) == Tok::RParen {
                self.skip(n + 1);
                return Ok(self.mk_exp(ExpKind::OpSection(op), self.since(start)));
            }
            let is_minus = !op.backtick && !op.name.is_qualified() && op.name.name == "-";
            if !is_minus {
                self.skip(n);
                let rhs = self.exp2()?;
                self.expect(&Tok::RParen, "`)` to close the operator section")?;
                return Ok(self.mk_exp(
                    ExpKind::RightSection {
                        op,
                        rhs: Box::new(rhs),
                    },
                    self.since(start),
                ));
            }
        }
        if self.is(&Tok::Dot) {
            let steps = self.proj_steps()?;
            self.expect(&Tok::RParen, "`)` to close the projection section")?;
            return Ok(self.mk_exp(ExpKind::ProjSection(steps), self.since(start)));
        }
        let first = self.exp()?;
        if let Some((op, n)) = self.peek_binop() {
            if *self.peek_at(n) == Tok::RParen {
                self.skip(n + 1);
                return Ok(self.mk_exp(
                    ExpKind::LeftSection {
                        op,
                        lhs: Box::new(first),
                    },
                    self.since(start),
                ));
            }
        }
        if self.eat(&Tok::RParen) {
            // Parentheses are not represented; widen the span to include them.
            let mut e = first;
            e.span = self.since(start);
            return Ok(e);
        }
        if !self.eat(&Tok::Comma) {
            return Err(self.expected("`,` or `)`"));
        }
        let mut elems = vec![first];
        elems.extend(self.comma_list(&Tok::RParen, "`)`", |p| p.exp())?);
        if elems.len() == 1 {
            // `(e,)` is just `e`: there are no one-element tuples.
            return Ok(elems.remove(0));
        }
        Ok(self.mk_exp(ExpKind::Tuple(elems), self.since(start)))
    }

    /// `.f.g[i]` inside a projection section.
    fn proj_steps(&mut self) -> PResult<Vec<ProjStep>> {
        let mut steps = Vec::new();
        loop {
            if self.is(&Tok::Dot) {
                self.bump();
                if self.eat(&Tok::LBracket) || (steps.is_empty() && self.eat(&Tok::IndexLBracket)) {
                    steps.push(ProjStep::Index(self.indices()?));
                } else {
                    let (f, _) = self.field_name()?;
                    steps.push(ProjStep::Field(f));
                }
            } else if self.is(&Tok::IndexLBracket) && !steps.is_empty() {
                self.bump();
                steps.push(ProjStep::Index(self.indices()?));
            } else {
                return Ok(steps);
            }
        }
    }
}

/// The part of a `let` before its body.
enum LetHead {
    Pat {
        sizes: Vec<(Name, Span)>,
        pat: Pat,
        rhs: Box<Exp>,
    },
    Fun {
        name: Name,
        name_span: Span,
        type_params: Vec<TypeParam>,
        params: Vec<Pat>,
        ret: Option<TypeExp>,
        rhs: Box<Exp>,
    },
    Update {
        name: Name,
        name_span: Span,
        steps: Vec<UpdateStep>,
        rhs: Box<Exp>,
    },
}
