//! The lexer: turns source text into [`Token`]s (spec §2).
//!
//! `logos` recognises the raw token classes; a small post-pass then applies the
//! context-dependent rules that a regular lexer cannot express: keywords, `=`/`->`/`!` as
//! punctuation, qualified symbols (`f32.+`), index brackets (§2.8 rule 1) and documentation
//! comments.

use crate::ast::PrimType;
use crate::diag::Diagnostic;
use crate::source::{FileId, Span};
use logos::Logos;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Keyword {
    Assert,
    Case,
    Def,
    Do,
    Else,
    Entry,
    False,
    For,
    If,
    Import,
    In,
    Include,
    Let,
    Local,
    Loop,
    Match,
    Module,
    Open,
    Then,
    True,
    Type,
    Val,
    While,
    With,
}

impl Keyword {
    pub fn from_name(s: &str) -> Option<Keyword> {
        use Keyword::*;
        Some(match s {
            "assert" => Assert,
            "case" => Case,
            "def" => Def,
            "do" => Do,
            "else" => Else,
            "entry" => Entry,
            "false" => False,
            "for" => For,
            "if" => If,
            "import" => Import,
            "in" => In,
            "include" => Include,
            "let" => Let,
            "local" => Local,
            "loop" => Loop,
            "match" => Match,
            "module" => Module,
            "open" => Open,
            "then" => Then,
            "true" => True,
            "type" => Type,
            "val" => Val,
            "while" => While,
            "with" => With,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        use Keyword::*;
        match self {
            Assert => "assert",
            Case => "case",
            Def => "def",
            Do => "do",
            Else => "else",
            Entry => "entry",
            False => "false",
            For => "for",
            If => "if",
            Import => "import",
            In => "in",
            Include => "include",
            Let => "let",
            Local => "local",
            Loop => "loop",
            Match => "match",
            Module => "module",
            Open => "open",
            Then => "then",
            True => "true",
            Type => "type",
            Val => "val",
            While => "while",
            With => "with",
        }
    }
}

/// Whether a name is reserved (cannot be bound).
pub fn is_keyword(s: &str) -> bool {
    Keyword::from_name(s).is_some()
}

/// A token class with its payload.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    LParen,
    RParen,
    /// `[` not touching a preceding name character, `)` or `]`.
    LBracket,
    /// `[` touching a preceding name character, `)` or `]` (§2.8 rule 1).
    IndexLBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Colon,
    /// `:>`
    ColonGt,
    /// `->`
    Arrow,
    /// `=`
    Equals,
    Backslash,
    Question,
    /// `???`
    Holes,
    Underscore,
    /// `'`
    Tick,
    /// `'^`
    TickCaret,
    /// `'~`
    TickTilde,
    Tilde,
    Backtick,
    /// `#[`
    HashLBracket,
    Dot,
    DotDot,
    DotDotDot,
    DotDotLt,
    DotDotGt,
    Keyword(Keyword),
    Name(String),
    /// An operator symbol, including `-`, `*`, `<`, `^`, `|` and the lone `!`.
    Symbol(String),
    /// `f32.+`, `M.N.<+>`
    QualSymbol(Vec<String>, String),
    /// `#name`
    Constructor(String),
    Int(u128, Option<PrimType>),
    Float(String, Option<PrimType>),
    Char(u32),
    Str(Vec<u8>),
    Eof,
}

impl Tok {
    /// How the token is described in an error message.
    pub fn describe(&self) -> String {
        match self {
            Tok::Eof => "end of file".to_string(),
            Tok::Name(n) => format!("`{n}`"),
            Tok::Symbol(s) => format!("`{s}`"),
            Tok::QualSymbol(q, s) => format!("`{}.{s}`", q.join(".")),
            Tok::Constructor(c) => format!("`#{c}`"),
            Tok::Int(..) | Tok::Float(..) => "a number".to_string(),
            Tok::Char(_) => "a character literal".to_string(),
            Tok::Str(_) => "a string literal".to_string(),
            Tok::Keyword(k) => format!("`{}`", k.as_str()),
            other => format!("`{}`", other.punct_text()),
        }
    }

    fn punct_text(&self) -> &'static str {
        match self {
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBracket | Tok::IndexLBracket => "[",
            Tok::RBracket => "]",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::Comma => ",",
            Tok::Colon => ":",
            Tok::ColonGt => ":>",
            Tok::Arrow => "->",
            Tok::Equals => "=",
            Tok::Backslash => "\\",
            Tok::Question => "?",
            Tok::Holes => "???",
            Tok::Underscore => "_",
            Tok::Tick => "'",
            Tok::TickCaret => "'^",
            Tok::TickTilde => "'~",
            Tok::Tilde => "~",
            Tok::Backtick => "`",
            Tok::HashLBracket => "#[",
            Tok::Dot => ".",
            Tok::DotDot => "..",
            Tok::DotDotDot => "...",
            Tok::DotDotLt => "..<",
            Tok::DotDotGt => "..>",
            _ => "?",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
    /// Whitespace (or a comment) separates this token from the previous one.
    pub ws_before: bool,
    /// The token is the first thing on its line, in column 1.
    pub at_line_start: bool,
    /// Only whitespace (or comments) precede the token on its line (any column).
    pub first_on_line: bool,
    /// A `-- |` documentation comment immediately preceding this token.
    pub doc: Option<String>,
}

/// Why a raw token could not be formed (logos requires `Default`).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum RawError {
    #[default]
    Unexpected,
    Msg(String),
}

#[derive(Logos, Clone, Debug, PartialEq)]
#[logos(error = RawError)]
#[logos(skip r"[ \t\r\n\x0B\x0C]+")]
enum Raw {
    #[regex(r"--[^\n]*", priority = 20)]
    Comment,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(",")]
    Comma,
    #[token(":")]
    Colon,
    #[token(":>")]
    ColonGt,
    #[token("\\")]
    Backslash,
    #[token("?")]
    Question,
    #[token("???")]
    Holes,
    #[token("_")]
    Underscore,
    #[token("'")]
    Tick,
    #[token("'^")]
    TickCaret,
    #[token("'~")]
    TickTilde,
    #[token("~")]
    Tilde,
    #[token("`")]
    Backtick,
    #[token("#[")]
    HashLBracket,
    #[token(".")]
    Dot,
    #[token("..")]
    DotDot,
    #[token("...")]
    DotDotDot,
    #[token("..<")]
    DotDotLt,
    #[token("..>")]
    DotDotGt,
    #[regex(r"[a-zA-Z][a-zA-Z0-9_']*|_[a-zA-Z0-9][a-zA-Z0-9_']*")]
    Name,
    #[regex(r"[+\-*/%=!><|&^][+\-*/%=!><|&^.]*")]
    Symbol,
    #[regex(r"#[a-zA-Z][a-zA-Z0-9_']*|#_[a-zA-Z0-9][a-zA-Z0-9_']*")]
    Constructor,
    #[regex(r"[0-9]", lex_number)]
    Number(Number),
    #[regex(r"'([^'\\\n]|\\[^\n][0-9a-fA-F]*)'", lex_char)]
    Char(u32),
    #[regex(r#""([^"\\\n]|\\[^\n])*""#, lex_string)]
    Str(Vec<u8>),
}

#[derive(Clone, Debug, PartialEq)]
enum Number {
    Int(u128, Option<PrimType>),
    Float(String, Option<PrimType>),
}

fn is_name_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'\''
}

/// Scans a numeric literal by hand: the rules of §2.6 (suffixes, `1.` is not a float, no
/// float right after a projection dot) are easier to state as code than as a regex.
fn lex_number(lex: &mut logos::Lexer<Raw>) -> Result<Number, RawError> {
    let src = lex.source().as_bytes();
    let start = lex.span().start;
    // Rule 4: right after a single `.` (a projection), only an integer is possible.
    let after_proj_dot =
        start >= 1 && src[start - 1] == b'.' && !(start >= 2 && src[start - 2] == b'.');
    let mut i = start;
    let err = |m: &str| Err(RawError::Msg(m.to_string()));
    let digits_while = |mut i: usize, pred: &dyn Fn(u8) -> bool| {
        while i < src.len() && (pred(src[i]) || src[i] == b'_') {
            i += 1;
        }
        i
    };
    let result;
    let is_hex = src[i] == b'0' && i + 1 < src.len() && (src[i + 1] | 0x20) == b'x';
    let is_bin = src[i] == b'0' && i + 1 < src.len() && (src[i + 1] | 0x20) == b'b';
    if is_hex && i + 2 < src.len() && src[i + 2].is_ascii_hexdigit() {
        i += 2;
        let int_start = i;
        i = digits_while(i, &|b| b.is_ascii_hexdigit());
        let int_text = strip_underscores(&src[int_start..i]);
        if !after_proj_dot && i + 1 < src.len() && src[i] == b'.' && src[i + 1].is_ascii_hexdigit()
        {
            // Hexadecimal float: 0xH.Fp±E
            let frac_start = i + 1;
            i = digits_while(frac_start, &|b| b.is_ascii_hexdigit());
            let frac_text = strip_underscores(&src[frac_start..i]);
            if i >= src.len() || (src[i] | 0x20) != b'p' {
                return err("a hexadecimal float needs an exponent `p...`");
            }
            i += 1;
            let mut neg = false;
            if i < src.len() && (src[i] == b'+' || src[i] == b'-') {
                neg = src[i] == b'-';
                i += 1;
            }
            let exp_start = i;
            while i < src.len() && src[i].is_ascii_digit() {
                i += 1;
            }
            if exp_start == i {
                return err("a hexadecimal float needs digits after `p`");
            }
            let exp: i64 = std::str::from_utf8(&src[exp_start..i])
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(i64::MAX);
            let exp = if neg { -exp } else { exp };
            let mut mant = 0f64;
            for c in int_text.chars().chain(frac_text.chars()) {
                mant = mant * 16.0 + c.to_digit(16).unwrap_or(0) as f64;
            }
            let scale = exp
                .saturating_sub(4 * frac_text.len() as i64)
                .clamp(-4000, 4000) as i32;
            // Two steps so that tiny scales do not underflow before the multiplication.
            let value = mant * 2f64.powi(scale / 2) * 2f64.powi(scale - scale / 2);
            if !value.is_finite() {
                return err("hexadecimal float literal is too large");
            }
            let (suffix, ni) = float_suffix(src, i);
            i = ni;
            result = Number::Float(format!("{value:?}"), suffix);
        } else {
            let value = u128::from_str_radix(&int_text, 16)
                .map_err(|_| RawError::Msg("integer literal is too large".into()))?;
            let (suffix, ni) = int_suffix(src, i);
            i = ni;
            result = Number::Int(value, suffix);
        }
    } else if is_bin && i + 2 < src.len() && (src[i + 2] == b'0' || src[i + 2] == b'1') {
        i += 2;
        let s = i;
        i = digits_while(i, &|b| b == b'0' || b == b'1');
        let text = strip_underscores(&src[s..i]);
        let value = u128::from_str_radix(&text, 2)
            .map_err(|_| RawError::Msg("integer literal is too large".into()))?;
        let (suffix, ni) = int_suffix(src, i);
        i = ni;
        result = Number::Int(value, suffix);
    } else {
        i = digits_while(i, &|b| b.is_ascii_digit());
        let int_text = strip_underscores(&src[start..i]);
        let mut is_float = false;
        let mut text = int_text.clone();
        if !after_proj_dot && i + 1 < src.len() && src[i] == b'.' && src[i + 1].is_ascii_digit() {
            let s = i + 1;
            i = digits_while(s, &|b| b.is_ascii_digit());
            text.push('.');
            text.push_str(&strip_underscores(&src[s..i]));
            is_float = true;
        }
        if !after_proj_dot && i < src.len() && (src[i] | 0x20) == b'e' {
            let mut j = i + 1;
            if j < src.len() && (src[j] == b'+' || src[j] == b'-') {
                j += 1;
            }
            if j < src.len() && src[j].is_ascii_digit() {
                let e_start = i;
                while j < src.len() && src[j].is_ascii_digit() {
                    j += 1;
                }
                text.push_str(std::str::from_utf8(&src[e_start..j]).unwrap_or(""));
                i = j;
                is_float = true;
            }
        }
        let (fsuffix, ni) = float_suffix(src, i);
        if fsuffix.is_some() && !after_proj_dot {
            i = ni;
            result = Number::Float(text, fsuffix);
        } else if is_float {
            result = Number::Float(text, None);
        } else {
            let value = int_text
                .parse::<u128>()
                .map_err(|_| RawError::Msg("integer literal is too large".into()))?;
            let (suffix, ni) = int_suffix(src, i);
            i = ni;
            result = Number::Int(value, suffix);
        }
    }
    if i < src.len() && is_name_char(src[i]) && !after_proj_dot {
        return err("invalid numeric literal (a number may only be followed by a type suffix such as `i32` or `f64`)");
    }
    lex.bump(i - lex.span().end);
    Ok(result)
}

fn strip_underscores(b: &[u8]) -> String {
    b.iter()
        .filter(|&&c| c != b'_')
        .map(|&c| c as char)
        .collect()
}

fn suffix_at(src: &[u8], i: usize, allowed: &[PrimType]) -> (Option<PrimType>, usize) {
    for p in allowed {
        let n = p.name().as_bytes();
        if src[i..].starts_with(n) && !src.get(i + n.len()).is_some_and(|&b| is_name_char(b)) {
            return (Some(*p), i + n.len());
        }
    }
    (None, i)
}

fn int_suffix(src: &[u8], i: usize) -> (Option<PrimType>, usize) {
    use PrimType::*;
    suffix_at(src, i, &[I8, I16, I32, I64, U8, U16, U32, U64])
}

fn float_suffix(src: &[u8], i: usize) -> (Option<PrimType>, usize) {
    use PrimType::*;
    suffix_at(src, i, &[F16, F32, F64])
}

/// Decodes the escapes of a character or string literal body into code points.
fn decode_escapes(body: &str) -> Result<Vec<char>, RawError> {
    let mut out = Vec::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars
            .next()
            .ok_or(RawError::Msg("unfinished escape sequence".into()))?;
        let code = match e {
            'n' => '\n' as u32,
            't' => '\t' as u32,
            'r' => '\r' as u32,
            '\\' => '\\' as u32,
            '\'' => '\'' as u32,
            '"' => '"' as u32,
            'x' => {
                let mut v = 0u32;
                for _ in 0..2 {
                    let d = chars.next().and_then(|c| c.to_digit(16));
                    v = v * 16
                        + d.ok_or(RawError::Msg(
                            "`\\x` must be followed by two hexadecimal digits".into(),
                        ))?;
                }
                v
            }
            d if d.is_ascii_digit() => {
                let mut v = d as u32 - '0' as u32;
                while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                    chars.next();
                    v = v.saturating_mul(10).saturating_add(d);
                }
                v
            }
            other => {
                return Err(RawError::Msg(format!(
                    "unknown escape sequence `\\{other}`"
                )))
            }
        };
        out.push(char::from_u32(code).ok_or(RawError::Msg(format!(
            "escape `{code}` is not a valid character"
        )))?);
    }
    Ok(out)
}

fn lex_char(lex: &mut logos::Lexer<Raw>) -> Result<u32, RawError> {
    let s = lex.slice();
    let chars = decode_escapes(&s[1..s.len() - 1])?;
    match chars.as_slice() {
        [c] => Ok(*c as u32),
        _ => Err(RawError::Msg(
            "a character literal must contain exactly one character".into(),
        )),
    }
}

fn lex_string(lex: &mut logos::Lexer<Raw>) -> Result<Vec<u8>, RawError> {
    let s = lex.slice();
    let chars = decode_escapes(&s[1..s.len() - 1])?;
    Ok(chars.into_iter().collect::<String>().into_bytes())
}

/// Lexes a whole file. Returns the tokens (ending with [`Tok::Eof`]) or every lexical error.
pub fn lex(file: FileId, text: &str) -> Result<Vec<Token>, Vec<Diagnostic>> {
    let bytes = text.as_bytes();
    let mut raw = Raw::lexer(text);
    let mut out: Vec<Token> = Vec::new();
    let mut errors = Vec::new();
    let mut prev_end = 0usize;
    // Documentation comment being collected, and where the last comment line ended.
    let mut doc: Option<String> = None;
    let mut doc_last_line_end = 0usize;
    while let Some(res) = raw.next() {
        let range = raw.span();
        let span = Span::new(file, range.start, range.end);
        let ws_before = range.start != prev_end;
        let at_line_start = range.start == 0 || bytes[range.start - 1] == b'\n';
        let first_on_line = prev_end == 0 || bytes[prev_end..range.start].contains(&b'\n');
        let tok = match res {
            Err(e) => {
                let msg = match e {
                    RawError::Msg(m) => m,
                    RawError::Unexpected => describe_bad_char(text, range.start),
                };
                let end = next_char_boundary(text, range.start).max(range.end);
                errors.push(Diagnostic::error(Span::new(file, range.start, end), msg));
                prev_end = range.end;
                continue;
            }
            Ok(Raw::Comment) => {
                let body = raw.slice();
                if let Some(rest) = body.strip_prefix("-- |") {
                    doc = Some(rest.strip_prefix(' ').unwrap_or(rest).to_string());
                } else if let Some(d) = doc.as_mut() {
                    // A continuation line: only directly on the next line.
                    let between = &text[doc_last_line_end..range.start];
                    if between.chars().filter(|&c| c == '\n').count() == 1
                        && between.trim().is_empty()
                    {
                        let rest = &body[2..];
                        d.push('\n');
                        d.push_str(rest.strip_prefix(' ').unwrap_or(rest));
                    } else {
                        doc = None;
                    }
                }
                doc_last_line_end = range.end;
                prev_end = range.end;
                continue;
            }
            Ok(r) => convert(r, raw.slice()),
        };
        let tok = match tok {
            Tok::LBracket
                if !ws_before && range.start > 0 && {
                    let b = bytes[range.start - 1];
                    is_name_char(b) || b == b')' || b == b']'
                } =>
            {
                Tok::IndexLBracket
            }
            t => t,
        };
        prev_end = range.end;
        out.push(Token {
            tok,
            span,
            ws_before,
            at_line_start,
            first_on_line,
            doc: doc.take(),
        });
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let merged = merge_qualified_symbols(out);
    let end = Span::new(file, text.len(), text.len());
    let mut merged = merged;
    merged.push(Token {
        tok: Tok::Eof,
        span: end,
        ws_before: true,
        at_line_start: false,
        first_on_line: false,
        doc: None,
    });
    Ok(merged)
}

fn next_char_boundary(text: &str, i: usize) -> usize {
    let mut j = i + 1;
    while j < text.len() && !text.is_char_boundary(j) {
        j += 1;
    }
    j.min(text.len())
}

fn describe_bad_char(text: &str, at: usize) -> String {
    match text[at..].chars().next() {
        Some(c) if !c.is_ascii() => {
            format!("non-ASCII character `{c}` is only allowed in comments, strings and character literals")
        }
        Some('\0') => "unexpected NUL character".to_string(),
        Some('"') => "unterminated string literal (strings may not span lines)".to_string(),
        Some('#') => "`#` must be followed by a constructor name or `[`".to_string(),
        Some(c) if c.is_ascii_control() => {
            format!("unexpected control character (code {})", c as u32)
        }
        Some(c) => format!("unexpected character `{c}`"),
        None => "unexpected end of file".to_string(),
    }
}

fn convert(r: Raw, slice: &str) -> Tok {
    match r {
        // Comments never reach here (the caller consumes them); treat one as a symbol.
        Raw::Comment => Tok::Symbol(slice.to_string()),
        Raw::LParen => Tok::LParen,
        Raw::RParen => Tok::RParen,
        Raw::LBracket => Tok::LBracket,
        Raw::RBracket => Tok::RBracket,
        Raw::LBrace => Tok::LBrace,
        Raw::RBrace => Tok::RBrace,
        Raw::Comma => Tok::Comma,
        Raw::Colon => Tok::Colon,
        Raw::ColonGt => Tok::ColonGt,
        Raw::Backslash => Tok::Backslash,
        Raw::Question => Tok::Question,
        Raw::Holes => Tok::Holes,
        Raw::Underscore => Tok::Underscore,
        Raw::Tick => Tok::Tick,
        Raw::TickCaret => Tok::TickCaret,
        Raw::TickTilde => Tok::TickTilde,
        Raw::Tilde => Tok::Tilde,
        Raw::Backtick => Tok::Backtick,
        Raw::HashLBracket => Tok::HashLBracket,
        Raw::Dot => Tok::Dot,
        Raw::DotDot => Tok::DotDot,
        Raw::DotDotDot => Tok::DotDotDot,
        Raw::DotDotLt => Tok::DotDotLt,
        Raw::DotDotGt => Tok::DotDotGt,
        Raw::Name => match Keyword::from_name(slice) {
            Some(k) => Tok::Keyword(k),
            None => Tok::Name(slice.to_string()),
        },
        Raw::Symbol => match slice {
            "=" => Tok::Equals,
            "->" => Tok::Arrow,
            _ => Tok::Symbol(slice.to_string()),
        },
        Raw::Constructor => Tok::Constructor(slice[1..].to_string()),
        Raw::Number(Number::Int(v, s)) => Tok::Int(v, s),
        Raw::Number(Number::Float(t, s)) => Tok::Float(t, s),
        Raw::Char(c) => Tok::Char(c),
        Raw::Str(s) => Tok::Str(s),
    }
}

/// Joins `NAME . NAME . SYMBOL` written without spaces into one qualified symbol token.
fn merge_qualified_symbols(toks: Vec<Token>) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        if let Tok::Name(_) = &toks[i].tok {
            // Find the longest chain NAME (. NAME)* . SYMBOL with no whitespace.
            let mut quals = Vec::new();
            let mut j = i;
            let mut found = None;
            while let Tok::Name(n) = &toks[j].tok {
                quals.push(n.clone());
                if j + 2 < toks.len()
                    && toks[j + 1].tok == Tok::Dot
                    && !toks[j + 1].ws_before
                    && !toks[j + 2].ws_before
                {
                    match &toks[j + 2].tok {
                        Tok::Name(_) => j += 2,
                        Tok::Symbol(s) => {
                            found = Some((j + 2, s.clone()));
                            break;
                        }
                        _ => break,
                    }
                } else {
                    break;
                }
            }
            if let Some((k, sym)) = found {
                let first = &toks[i];
                out.push(Token {
                    tok: Tok::QualSymbol(quals, sym),
                    span: first.span.to(toks[k].span),
                    ws_before: first.ws_before,
                    at_line_start: first.at_line_start,
                    first_on_line: first.first_on_line,
                    doc: first.doc.clone(),
                });
                i = k + 1;
                continue;
            }
        }
        out.push(toks[i].clone());
        i += 1;
    }
    out
}
