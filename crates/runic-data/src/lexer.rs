//! Scanning of the textual value format: whitespace, comments and scalar literal tokens (§2.2),
//! and the conversion of a literal to its final element type (§2.3, §2.4).

use crate::types::PrimType;
use runic_prim::Prim;

/// How a literal was written; decides which element types it may take (§2.4 table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LitKind {
    /// Integer literal; `digits` is the byte range of the digits (after `0x`/`0b`).
    Int {
        negative: bool,
        radix: u32,
        digits: (usize, usize),
    },
    /// Decimal literal with `.` or exponent; the range covers sign, digits and exponent.
    Decimal {
        text: (usize, usize),
    },
    Bool(bool),
    Nan,
    Inf {
        negative: bool,
    },
}

/// A scanned scalar literal: kind, optional explicit type and its byte range.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lit {
    pub kind: LitKind,
    /// The suffix, or the type named by a special (`f32.nan`).
    pub explicit: Option<PrimType>,
    pub start: usize,
    pub end: usize,
}

impl Lit {
    /// The type the literal has on its own: its explicit type, else the default of its kind.
    pub fn own_type(&self) -> PrimType {
        match (self.explicit, self.kind) {
            (Some(t), _) => t,
            (None, LitKind::Int { .. }) => PrimType::I32,
            (None, LitKind::Bool(_)) => PrimType::Bool,
            (None, _) => PrimType::F64,
        }
    }

    /// Whether this literal may take element type `t` (§2.4 compatibility table).
    pub fn fits(&self, t: PrimType) -> bool {
        match (self.explicit, self.kind) {
            (Some(s), _) => s == t,
            (None, LitKind::Int { .. }) => t != PrimType::Bool,
            (None, LitKind::Decimal { .. }) => t.is_float(),
            (None, LitKind::Bool(_)) => t == PrimType::Bool,
            // Specials always carry their type.
            (None, _) => false,
        }
    }

    /// A short description of the literal's kind for messages.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            LitKind::Int { .. } => "integer literal",
            LitKind::Decimal { .. } => "decimal literal",
            LitKind::Bool(_) => "boolean literal",
            LitKind::Nan | LitKind::Inf { .. } => "special float literal",
        }
    }
}

/// A lexical error: byte offset and message.
pub(crate) type LexError = (usize, String);

const FLOAT_SUFFIXES: [PrimType; 3] = [PrimType::F16, PrimType::F32, PrimType::F64];

/// Describes what is at `pos` for "found …" parts of messages.
pub(crate) fn describe_at(bytes: &[u8], pos: usize) -> String {
    match bytes.get(pos) {
        None => "end of input".to_string(),
        Some(&b) if b.is_ascii_graphic() => format!("`{}`", b as char),
        Some(&b) if b >= 0x80 => {
            let len = utf8_len(b).min(bytes.len() - pos);
            match std::str::from_utf8(&bytes[pos..pos + len]) {
                Ok(s) => format!("`{s}`"),
                Err(_) => format!("byte 0x{b:02x}"),
            }
        }
        Some(&b) => format!("byte 0x{b:02x}"),
    }
}

fn utf8_len(lead: u8) -> usize {
    match lead {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}

/// Skips whitespace (any Unicode white space) and `--` comments; returns the new position.
pub(crate) fn skip_blank(bytes: &[u8], mut pos: usize) -> usize {
    loop {
        match bytes.get(pos) {
            Some(b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) => pos += 1,
            Some(b'-') if bytes.get(pos + 1) == Some(&b'-') => {
                pos = match bytes[pos..].iter().position(|&b| b == b'\n') {
                    Some(i) => pos + i + 1,
                    None => bytes.len(),
                };
            }
            Some(&b) if b >= 0x80 => {
                let len = utf8_len(b);
                let is_space = bytes
                    .get(pos..pos + len)
                    .and_then(|s| std::str::from_utf8(s).ok())
                    .and_then(|s| s.chars().next())
                    .is_some_and(char::is_whitespace);
                if !is_space {
                    return pos;
                }
                pos += len;
            }
            _ => return pos,
        }
    }
}

fn starts_with_at(bytes: &[u8], pos: usize, word: &[u8]) -> bool {
    bytes.get(pos..pos + word.len()) == Some(word)
}

/// True if `b` may not directly follow a scalar token.
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'.'
}

/// Scans the scalar literal starting at `start` (greedily, §2.2 lexical rules).
pub(crate) fn lex_scalar(bytes: &[u8], start: usize) -> Result<Lit, LexError> {
    let mut p = start;
    let sign = match bytes.get(p) {
        Some(&c @ (b'-' | b'+')) => {
            p += 1;
            Some(c)
        }
        _ => None,
    };
    let lit = match bytes.get(p) {
        Some(b'f') => lex_special(bytes, start, p, sign)?,
        Some(b) if b.is_ascii_alphabetic() && sign.is_none() => lex_word(bytes, start)?,
        Some(b'0') if matches!(bytes.get(p + 1), Some(b'x' | b'b')) => {
            lex_radix(bytes, start, p, sign == Some(b'-'))?
        }
        Some(b) if b.is_ascii_digit() => lex_decimal(bytes, start, p, sign == Some(b'-'))?,
        _ if sign.is_some() => {
            return Err((
                p,
                format!(
                    "expected a number after `{}`, found {}",
                    sign.unwrap_or(b'-') as char,
                    describe_at(bytes, p)
                ),
            ))
        }
        _ => {
            return Err((
                start,
                format!("expected a value, found {}", describe_at(bytes, start)),
            ))
        }
    };
    if let Some(&b) = bytes.get(lit.end) {
        if is_word_byte(b) {
            let text = String::from_utf8_lossy(&bytes[start..lit.end]);
            return Err((
                lit.end,
                format!(
                    "unexpected {} after literal `{text}`",
                    describe_at(bytes, lit.end)
                ),
            ));
        }
    }
    Ok(lit)
}

/// `true`, `false` (no sign) — or an unknown word.
fn lex_word(bytes: &[u8], start: usize) -> Result<Lit, LexError> {
    for (word, b) in [(&b"true"[..], true), (&b"false"[..], false)] {
        if starts_with_at(bytes, start, word) {
            return Ok(Lit {
                kind: LitKind::Bool(b),
                explicit: None,
                start,
                end: start + word.len(),
            });
        }
    }
    let end = start
        + bytes[start..]
            .iter()
            .take_while(|&&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
            .count();
    Err((
        start,
        format!(
            "expected a value, found `{}`",
            String::from_utf8_lossy(&bytes[start..end.min(start + 40)])
        ),
    ))
}

/// `fN.nan`, `fN.inf`, `-fN.inf`, or `false` when no sign was given.
fn lex_special(bytes: &[u8], start: usize, p: usize, sign: Option<u8>) -> Result<Lit, LexError> {
    for t in FLOAT_SUFFIXES {
        let name = t.name().as_bytes();
        if !starts_with_at(bytes, p, name) || bytes.get(p + 3) != Some(&b'.') {
            continue;
        }
        let kind = if starts_with_at(bytes, p + 4, b"nan") {
            if sign.is_some() {
                return Err((start, format!("`{}.nan` cannot have a sign", t.name())));
            }
            LitKind::Nan
        } else if starts_with_at(bytes, p + 4, b"inf") {
            if sign == Some(b'+') {
                return Err((
                    start,
                    format!(
                        "`+{}.inf` is not allowed; write `{}.inf`",
                        t.name(),
                        t.name()
                    ),
                ));
            }
            LitKind::Inf {
                negative: sign == Some(b'-'),
            }
        } else {
            continue;
        };
        return Ok(Lit {
            kind,
            explicit: Some(t),
            start,
            end: p + 7,
        });
    }
    if sign.is_none() {
        return lex_word(bytes, start);
    }
    Err((
        p,
        format!(
            "expected a number after `{}`, found {}",
            sign.unwrap_or(b'-') as char,
            describe_at(bytes, p)
        ),
    ))
}

/// Scans an optional type suffix at `p`; returns it and the position after it.
fn lex_suffix(bytes: &[u8], p: usize) -> (Option<PrimType>, usize) {
    let at = |i: usize| bytes.get(p + i).copied().unwrap_or(0);
    let t = match (at(0), at(1), at(2)) {
        (b'i', b'8', _) => PrimType::I8,
        (b'u', b'8', _) => PrimType::U8,
        (b'i', b'1', b'6') => PrimType::I16,
        (b'i', b'3', b'2') => PrimType::I32,
        (b'i', b'6', b'4') => PrimType::I64,
        (b'u', b'1', b'6') => PrimType::U16,
        (b'u', b'3', b'2') => PrimType::U32,
        (b'u', b'6', b'4') => PrimType::U64,
        (b'f', b'1', b'6') => PrimType::F16,
        (b'f', b'3', b'2') => PrimType::F32,
        (b'f', b'6', b'4') => PrimType::F64,
        _ => return (None, p),
    };
    (Some(t), p + t.name().len())
}

/// `0x…` and `0b…` integers; digits are read greedily before the suffix.
fn lex_radix(bytes: &[u8], start: usize, p: usize, negative: bool) -> Result<Lit, LexError> {
    let (radix, name) = if bytes[p + 1] == b'x' {
        (16, "hexadecimal")
    } else {
        (2, "binary")
    };
    let first = p + 2;
    let is_digit = |b: u8| (b as char).is_digit(radix);
    if !bytes.get(first).is_some_and(|&b| is_digit(b)) {
        return Err((
            first,
            format!(
                "expected a {name} digit, found {}",
                describe_at(bytes, first)
            ),
        ));
    }
    let end_digits = first
        + bytes[first..]
            .iter()
            .take_while(|&&b| is_digit(b) || b == b'_')
            .count();
    let (explicit, end) = lex_suffix(bytes, end_digits);
    if let Some(t) = explicit {
        if t.is_float() {
            return Err((
                end_digits,
                format!("a {name} literal cannot have the float suffix `{t}`"),
            ));
        }
    }
    Ok(Lit {
        kind: LitKind::Int {
            negative,
            radix,
            digits: (first, end_digits),
        },
        explicit,
        start,
        end,
    })
}

fn digit_run_end(bytes: &[u8], p: usize) -> usize {
    p + bytes[p..]
        .iter()
        .take_while(|&&b| b.is_ascii_digit() || b == b'_')
        .count()
}

/// Decimal integers and floats: `12`, `1_000i64`, `2.5`, `1e-3f32`, `2f32`.
fn lex_decimal(bytes: &[u8], start: usize, p: usize, negative: bool) -> Result<Lit, LexError> {
    let int_end = digit_run_end(bytes, p);
    let mut q = int_end;
    let mut is_float = false;
    if bytes.get(q) == Some(&b'.') {
        if !bytes.get(q + 1).is_some_and(u8::is_ascii_digit) {
            return Err((
                q + 1,
                format!(
                    "expected a digit after `.` in a decimal literal, found {}",
                    describe_at(bytes, q + 1)
                ),
            ));
        }
        q = digit_run_end(bytes, q + 1);
        is_float = true;
    }
    if matches!(bytes.get(q), Some(b'e' | b'E')) {
        let mut e = q + 1;
        if matches!(bytes.get(e), Some(b'+' | b'-')) {
            e += 1;
        }
        if !bytes.get(e).is_some_and(u8::is_ascii_digit) {
            return Err((
                e,
                format!(
                    "expected a digit in the exponent, found {}",
                    describe_at(bytes, e)
                ),
            ));
        }
        q = digit_run_end(bytes, e);
        is_float = true;
    }
    let (explicit, end) = lex_suffix(bytes, q);
    if let Some(t) = explicit {
        if is_float && !t.is_float() {
            return Err((
                q,
                format!("a decimal literal cannot have the integer suffix `{t}`"),
            ));
        }
    }
    let kind = if is_float {
        LitKind::Decimal { text: (start, q) }
    } else {
        LitKind::Int {
            negative,
            radix: 10,
            digits: (p, int_end),
        }
    };
    Ok(Lit {
        kind,
        explicit,
        start,
        end,
    })
}

/// Converts literal text to final values; owns a scratch buffer so that numbers with
/// underscores or floats need no allocation per element.
#[derive(Default)]
pub(crate) struct Converter {
    scratch: String,
}

impl Converter {
    /// The literal's value as element type `t`. The caller has checked `lit.fits(t)`.
    pub fn convert(&mut self, bytes: &[u8], lit: &Lit, t: PrimType) -> Result<Prim, LexError> {
        Ok(match lit.kind {
            LitKind::Bool(b) => Prim::Bool(b),
            LitKind::Nan => Prim::float(t, f64::NAN),
            LitKind::Inf { negative } => Prim::float(
                t,
                if negative {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                },
            ),
            LitKind::Int {
                negative,
                radix,
                digits,
            } if t.is_int() => {
                let mut v: u64 = 0;
                for &b in &bytes[digits.0..digits.1] {
                    if b != b'_' {
                        let d = (b as char).to_digit(radix).unwrap_or(0) as u64;
                        // Arithmetic mod 2^64 gives the exact value mod 2^bits (§2.3).
                        v = v.wrapping_mul(radix as u64).wrapping_add(d);
                    }
                }
                if negative {
                    v = v.wrapping_neg();
                }
                Prim::int(t, v as i128)
            }
            LitKind::Int {
                negative,
                radix: 10,
                digits,
            } => {
                self.fill_scratch(bytes, digits, negative);
                self.parse_float(t, lit)?
            }
            LitKind::Int {
                negative,
                radix,
                digits,
            } => {
                let mut exact: Option<u128> = Some(0);
                let mut approx = 0f64;
                for &b in &bytes[digits.0..digits.1] {
                    if b != b'_' {
                        let d = (b as char).to_digit(radix).unwrap_or(0);
                        exact = exact
                            .and_then(|x| x.checked_mul(radix as u128))
                            .and_then(|x| x.checked_add(d as u128));
                        approx = approx * radix as f64 + d as f64;
                    }
                }
                let sign = if negative { -1.0 } else { 1.0 };
                match (t, exact) {
                    (PrimType::F32, Some(x)) => Prim::F32(x as f32 * sign as f32),
                    (_, Some(x)) => Prim::float(t, x as f64 * sign),
                    (_, None) => Prim::float(t, approx * sign),
                }
            }
            LitKind::Decimal { text } => {
                self.fill_scratch(bytes, text, false);
                self.parse_float(t, lit)?
            }
        })
    }

    /// Puts the number text (sign, digits without underscores) into the scratch buffer.
    fn fill_scratch(&mut self, bytes: &[u8], range: (usize, usize), negative: bool) {
        self.scratch.clear();
        if negative {
            self.scratch.push('-');
        }
        let text = &bytes[range.0..range.1];
        match std::str::from_utf8(text) {
            Ok(s) if !s.contains('_') => self.scratch.push_str(s),
            _ => self
                .scratch
                .extend(text.iter().filter(|&&b| b != b'_').map(|&b| b as char)),
        }
    }

    /// Parses the scratch text straight into the final float type (one rounding; f16 goes
    /// through f64).
    fn parse_float(&self, t: PrimType, lit: &Lit) -> Result<Prim, LexError> {
        let bad = || (lit.start, format!("invalid number `{}`", self.scratch));
        Ok(match t {
            PrimType::F32 => Prim::F32(self.scratch.parse::<f32>().map_err(|_| bad())?),
            _ => Prim::float(t, self.scratch.parse::<f64>().map_err(|_| bad())?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;

    fn scalar(text: &str, t: Option<PrimType>) -> Result<Prim, LexError> {
        let lit = lex_scalar(text.as_bytes(), 0)?;
        let t = t.unwrap_or(lit.own_type());
        assert!(lit.fits(t), "{text} does not fit {t}");
        Converter::default().convert(text.as_bytes(), &lit, t)
    }

    #[test]
    fn integer_literals_wrap() {
        assert_eq!(scalar("128i8", None), Ok(Prim::I8(-128)));
        assert_eq!(scalar("255i8", None), Ok(Prim::I8(-1)));
        assert_eq!(scalar("32768i16", None), Ok(Prim::I16(-32768)));
        assert_eq!(scalar("-1u8", None), Ok(Prim::U8(255)));
        assert_eq!(scalar("256u8", None), Ok(Prim::U8(0)));
        assert_eq!(scalar("1_000_000i64", None), Ok(Prim::I64(1_000_000)));
        assert_eq!(
            scalar("340282366920938463463374607431768211457u64", None),
            Ok(Prim::U64(1))
        );
        assert_eq!(
            scalar("-9223372036854775808i64", None),
            Ok(Prim::I64(i64::MIN))
        );
        assert_eq!(scalar("42", None), Ok(Prim::I32(42)));
        assert_eq!(scalar("+42", None), Ok(Prim::I32(42)));
    }

    #[test]
    fn hex_and_binary() {
        assert_eq!(scalar("0x1f32", None), Ok(Prim::I32(7986)));
        assert_eq!(scalar("0xffu8", None), Ok(Prim::U8(255)));
        assert_eq!(scalar("0xfi8", None), Ok(Prim::I8(15)));
        assert_eq!(scalar("0xFF_FFi16", None), Ok(Prim::I16(-1)));
        assert_eq!(scalar("-0x10", None), Ok(Prim::I32(-16)));
        assert_eq!(scalar("0b1010u8", None), Ok(Prim::U8(10)));
        assert_eq!(scalar("0b1111_1111i8", None), Ok(Prim::I8(-1)));
        assert_eq!(scalar("0x10", Some(PrimType::F32)), Ok(Prim::F32(16.0)));
    }

    #[test]
    fn float_literals() {
        assert_eq!(scalar("3.0", None), Ok(Prim::F64(3.0)));
        assert_eq!(scalar("3f32", None), Ok(Prim::F32(3.0)));
        assert_eq!(scalar("1e3", None), Ok(Prim::F64(1000.0)));
        assert_eq!(scalar("1E5", None), Ok(Prim::F64(1e5)));
        assert_eq!(scalar("-3e2f32", None), Ok(Prim::F32(-300.0)));
        assert_eq!(scalar("2.5e-1_0", None), Ok(Prim::F64(2.5e-10)));
        assert_eq!(scalar("5", Some(PrimType::F32)), Ok(Prim::F32(5.0)));
        // Rounded directly to f32: 0.1f32 is the f32 nearest to 0.1.
        assert_eq!(scalar("0.1f32", None), Ok(Prim::F32(0.1f32)));
        // 16777217 is a tie between two f32 values; round to even directly.
        assert_eq!(
            scalar("16777217", Some(PrimType::F32)),
            Ok(Prim::F32(16777216.0))
        );
        assert_eq!(
            scalar("0.1f16", None),
            Ok(Prim::F16(f16::from_bits(0x2e66)))
        );
        match scalar("-f64.inf", None) {
            Ok(Prim::F64(x)) => assert_eq!(x, f64::NEG_INFINITY),
            other => panic!("{other:?}"),
        }
        match scalar("f16.nan", None) {
            Ok(Prim::F16(x)) => assert!(x.is_nan()),
            other => panic!("{other:?}"),
        }
        assert_eq!(scalar("true", None), Ok(Prim::Bool(true)));
    }

    #[test]
    fn lexical_errors() {
        let err = |s: &str| lex_scalar(s.as_bytes(), 0).unwrap_err().0;
        assert_eq!(err("1i32x"), 4);
        assert_eq!(err("12ab"), 2);
        assert_eq!(err("1."), 2);
        assert_eq!(err("1.e5"), 2);
        assert_eq!(err("1e5i32"), 3);
        assert_eq!(err(".5"), 0);
        assert_eq!(err("-f32.nan"), 0);
        assert_eq!(err("+f32.inf"), 0);
        assert_eq!(err("f32.nanx"), 7);
        assert_eq!(err("0x"), 2);
        assert_eq!(err("0b2"), 2);
        assert_eq!(err("0b101f32"), 5);
        assert_eq!(err("1e"), 2);
        assert_eq!(err("-"), 1);
        assert_eq!(err("truex"), 4);
        assert_eq!(err("1.5.2"), 3);
        assert_eq!(err("f128"), 0);
        assert_eq!(err("1i3"), 1);
    }

    #[test]
    fn blanks_and_comments() {
        assert_eq!(skip_blank(b"  -- c\n 1", 0), 8);
        assert_eq!(skip_blank(b"-- only", 0), 7);
        assert_eq!(skip_blank("\u{a0}\u{2028}x".as_bytes(), 0), 5);
        assert_eq!(skip_blank(b"-1", 0), 0);
        assert_eq!(skip_blank(b"\xff", 0), 0);
    }
}
