//! Parsing of one textual value (§2.2–§2.4): scalars, regular arrays read straight into a typed
//! buffer, `empty(...)`, and string literals.

use crate::lexer::{describe_at, lex_scalar, skip_blank, Converter, Lit};
use crate::types::{PrimType, ValueType};
use crate::value::{shape_product, Array, Value};
use crate::Buffer;

/// Largest array rank accepted (the binary reader has the same limit).
pub(crate) const MAX_RANK: usize = 32;

/// A parse error: byte offset and message.
pub(crate) type ParseError = (usize, String);

pub(crate) struct TextParser<'a> {
    bytes: &'a [u8],
    conv: Converter,
}

fn hint_mismatch(hint: &ValueType, found: &str) -> String {
    format!(
        "expected a value of type {}, found {found}",
        hint.rank_only_string()
    )
}

fn ranked(rank: usize, elem: PrimType) -> String {
    format!("{}{}", "[]".repeat(rank), elem)
}

impl<'a> TextParser<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        TextParser {
            bytes,
            conv: Converter::default(),
        }
    }

    fn text(&self, start: usize, end: usize) -> String {
        String::from_utf8_lossy(&self.bytes[start..end]).into_owned()
    }

    fn is_empty_at(&self, pos: usize) -> bool {
        self.bytes.get(pos..pos + 5) == Some(b"empty")
    }

    /// Parses the value starting at `start` (which is not blank); returns it and the position
    /// just after it.
    pub fn parse_value(
        &mut self,
        start: usize,
        hint: Option<&ValueType>,
    ) -> Result<(Value, usize), ParseError> {
        match self.bytes.get(start) {
            Some(b'[') => self.parse_array(start, hint),
            Some(b'"') => self.parse_string(start, hint),
            _ if self.is_empty_at(start) => {
                let (dims, elem, end) = self.parse_empty(start)?;
                if let Some(h) = hint {
                    if h.elem != elem || h.rank() != dims.len() {
                        return Err((start, hint_mismatch(h, &ranked(dims.len(), elem))));
                    }
                }
                let data = Buffer::new(elem);
                Ok((Value::Array(Array { shape: dims, data }), end))
            }
            _ => {
                let lit = lex_scalar(self.bytes, start)?;
                let elem = match hint {
                    Some(h) if h.rank() != 0 => {
                        return Err((start, hint_mismatch(h, lit.own_type().name())))
                    }
                    Some(h) => h.elem,
                    None => lit.own_type(),
                };
                if !lit.fits(elem) {
                    return Err(self.misfit(&lit, elem, hint, true, 0, start));
                }
                let s = self.conv.convert(self.bytes, &lit, elem)?;
                Ok((Value::Scalar(s), lit.end))
            }
        }
    }

    /// The error for literal `lit` that cannot take the value's element type `elem`.
    fn misfit(
        &self,
        lit: &Lit,
        elem: PrimType,
        hint: Option<&ValueType>,
        first: bool,
        rank: usize,
        value_start: usize,
    ) -> ParseError {
        let text = self.text(lit.start, lit.end);
        match (lit.explicit, hint) {
            (Some(own), Some(h)) if first => (value_start, hint_mismatch(h, &ranked(rank, own))),
            (Some(own), Some(_)) => (
                lit.start,
                format!("expected an element of type {elem}, found `{text}` of type {own}"),
            ),
            (Some(own), None) => (
                lit.start,
                format!("array elements have different types ({elem} and {own})"),
            ),
            (None, _) => (
                lit.start,
                format!("{} `{text}` cannot have type {elem}", lit.kind_name()),
            ),
        }
    }

    /// `empty(` dims elem-type `)`, blanks allowed between tokens; returns shape, type, end.
    fn parse_empty(&self, start: usize) -> Result<(Vec<usize>, PrimType, usize), ParseError> {
        let b = self.bytes;
        let expect = |pos: usize, what: &str| -> ParseError {
            (
                pos,
                format!(
                    "expected {what} in `empty(...)`, found {}",
                    describe_at(b, pos)
                ),
            )
        };
        let mut p = skip_blank(b, start + 5);
        if b.get(p) != Some(&b'(') {
            return Err(expect(p, "`(`"));
        }
        p = skip_blank(b, p + 1);
        let mut dims = Vec::new();
        while b.get(p) == Some(&b'[') {
            p = skip_blank(b, p + 1);
            if !b.get(p).is_some_and(u8::is_ascii_digit) {
                return Err(expect(p, "a dimension size"));
            }
            let mut n: Option<usize> = Some(0);
            let digits_start = p;
            while let Some(&c) = b.get(p).filter(|c| c.is_ascii_digit() || **c == b'_') {
                if c != b'_' {
                    n = n
                        .and_then(|n| n.checked_mul(10))
                        .and_then(|n| n.checked_add((c - b'0') as usize));
                }
                p += 1;
            }
            let n = n.ok_or_else(|| {
                (
                    digits_start,
                    format!(
                        "dimension size `{}` is too large",
                        self.text(digits_start, p)
                    ),
                )
            })?;
            dims.push(n);
            p = skip_blank(b, p);
            if b.get(p) != Some(&b']') {
                return Err(expect(p, "`]`"));
            }
            p = skip_blank(b, p + 1);
        }
        if dims.is_empty() {
            return Err(expect(p, "a dimension `[n]`"));
        }
        if dims.len() > MAX_RANK {
            return Err((
                start,
                format!(
                    "arrays of rank {} are not supported (at most {MAX_RANK})",
                    dims.len()
                ),
            ));
        }
        let word_end = p + b[p..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric())
            .count();
        let elem = PrimType::from_name(&self.text(p, word_end))
            .ok_or_else(|| expect(p, "an element type"))?;
        p = skip_blank(b, word_end);
        if b.get(p) != Some(&b')') {
            return Err(expect(p, "`)`"));
        }
        if !dims.contains(&0) {
            let shape: String = dims.iter().map(|d| format!("[{d}]")).collect();
            return Err((
                start,
                format!("`empty` needs a dimension of size 0, but its shape is {shape}"),
            ));
        }
        Ok((dims, elem, p + 1))
    }

    /// An array literal. The element type is decided before any element is stored (hint, or
    /// the first scalar found by looking ahead), so elements go straight into a typed buffer.
    fn parse_array(
        &mut self,
        start: usize,
        hint: Option<&ValueType>,
    ) -> Result<(Value, usize), ParseError> {
        let b = self.bytes;
        // Look ahead to the first leaf: it fixes the rank and, without a hint, the type.
        let mut p = start;
        let mut depth = 0;
        let mut last_open = start;
        loop {
            p = skip_blank(b, p);
            if b.get(p) != Some(&b'[') {
                break;
            }
            last_open = p;
            depth += 1;
            p += 1;
            if depth > MAX_RANK {
                return Err((
                    start,
                    format!("arrays of rank above {MAX_RANK} are not supported"),
                ));
            }
        }
        let (leaf_type, rank) = match b.get(p) {
            Some(b']') => return Err(empty_brackets(last_open)),
            Some(b'"') => {
                return Err((p, "not supported yet: string literals inside arrays".into()))
            }
            _ if self.is_empty_at(p) => {
                let (dims, elem, _) = self.parse_empty(p)?;
                (elem, depth + dims.len())
            }
            _ => (lex_scalar(b, p)?.own_type(), depth),
        };
        if rank > MAX_RANK {
            return Err((
                start,
                format!("arrays of rank {rank} are not supported (at most {MAX_RANK})"),
            ));
        }
        let elem = match hint {
            Some(h) if h.rank() != rank => {
                return Err((start, hint_mismatch(h, &ranked(rank, leaf_type))))
            }
            Some(h) => h.elem,
            None => leaf_type,
        };

        // dims[l]: length of rows at level l once known; counts[l]: elements so far in the
        // open row at level l; row_start[l]: where that row's `[` is.
        let mut dims: Vec<Option<usize>> = vec![None; rank];
        let mut counts = vec![0usize; rank];
        let mut row_start = vec![start; rank];
        let mut buf = Buffer::new(elem);
        let mut first = true;
        let mut depth = 1;
        let mut pos = start + 1;
        'element: loop {
            pos = skip_blank(b, pos);
            let level = depth - 1;
            if let Some(d) = dims[level] {
                if counts[level] >= d {
                    return Err((
                        pos,
                        format!("irregular array: this row has more than {d} elements, unlike the rows before it"),
                    ));
                }
            }
            let c = b.get(pos).copied();
            if c == Some(b']') {
                return Err(empty_brackets(row_start[level]));
            }
            if depth < rank {
                if c == Some(b'[') {
                    row_start[depth] = pos;
                    counts[depth] = 0;
                    depth += 1;
                    pos += 1;
                    continue 'element;
                }
                if !self.is_empty_at(pos) {
                    return Err((
                        pos,
                        format!(
                            "irregular array: expected a nested array `[`, found {}",
                            describe_at(b, pos)
                        ),
                    ));
                }
                let (edims, eelem, end) = self.parse_empty(pos)?;
                if eelem != elem {
                    let msg = match hint {
                        Some(h) if first => {
                            return Err((start, hint_mismatch(h, &ranked(rank, eelem))))
                        }
                        Some(_) => format!(
                            "expected elements of type {elem}, found `empty` of type {eelem}"
                        ),
                        None => format!("array elements have different types ({elem} and {eelem})"),
                    };
                    return Err((pos, msg));
                }
                if edims.len() != rank - depth {
                    return Err((
                        pos,
                        format!(
                            "irregular array: expected an element of rank {}, found `empty` of rank {}",
                            rank - depth,
                            edims.len()
                        ),
                    ));
                }
                for (i, &d) in edims.iter().enumerate() {
                    match dims[depth + i] {
                        Some(k) if k != d => {
                            return Err((
                                pos,
                                format!("irregular array: `empty` has dimension {d} where the other rows have {k}"),
                            ))
                        }
                        _ => dims[depth + i] = Some(d),
                    }
                }
                pos = end;
            } else {
                if c == Some(b'[') || self.is_empty_at(pos) {
                    return Err((
                        pos,
                        format!(
                            "irregular array: expected a scalar element, found {}",
                            describe_at(b, pos)
                        ),
                    ));
                }
                let lit = lex_scalar(b, pos)?;
                if !lit.fits(elem) {
                    return Err(self.misfit(&lit, elem, hint, first, rank, start));
                }
                buf.push(self.conv.convert(b, &lit, elem)?);
                pos = lit.end;
            }
            first = false;
            counts[level] += 1;
            // Separators and closing brackets after an element.
            loop {
                pos = skip_blank(b, pos);
                match b.get(pos) {
                    Some(b',') => {
                        pos = skip_blank(b, pos + 1);
                        if b.get(pos) != Some(&b']') {
                            continue 'element;
                        }
                    }
                    Some(b']') => {}
                    _ => {
                        return Err((
                            pos,
                            format!(
                                "expected `,` or `]` in array, found {}",
                                describe_at(b, pos)
                            ),
                        ))
                    }
                }
                let level = depth - 1;
                let n = counts[level];
                match dims[level] {
                    Some(d) if d != n => {
                        return Err((
                            pos,
                            format!("irregular array: this row has {n} elements, but the rows before it have {d}"),
                        ))
                    }
                    _ => dims[level] = Some(n),
                }
                pos += 1;
                depth -= 1;
                if depth == 0 {
                    break 'element;
                }
                counts[depth - 1] += 1;
            }
        }
        let shape: Vec<usize> = dims.into_iter().map(|d| d.unwrap_or(0)).collect();
        if shape_product(&shape) != Some(buf.len()) {
            return Err((start, "irregular array".into()));
        }
        Ok((Value::Array(Array { shape, data: buf }), pos))
    }

    /// `"…"`: the UTF-8 bytes of the contents as a `[n]u8` array.
    fn parse_string(
        &mut self,
        start: usize,
        hint: Option<&ValueType>,
    ) -> Result<(Value, usize), ParseError> {
        if let Some(h) = hint {
            if h.elem != PrimType::U8 || h.rank() != 1 {
                return Err((start, hint_mismatch(h, "[]u8 (a string)")));
            }
        }
        let b = self.bytes;
        let mut out = Vec::new();
        let mut p = start + 1;
        loop {
            match b.get(p) {
                None | Some(b'\n') => {
                    return Err((p, "unterminated string literal".into()));
                }
                Some(b'"') => break,
                Some(b'\\') => {
                    let (c, next) = self.escape(p)?;
                    let mut tmp = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
                    p = next;
                }
                Some(&c) => {
                    out.push(c);
                    p += 1;
                }
            }
        }
        let n = out.len();
        Ok((
            Value::Array(Array {
                shape: vec![n],
                data: Buffer::U8(out.into()),
            }),
            p + 1,
        ))
    }

    /// One escape sequence at `p` (the backslash); returns the character and the next position.
    fn escape(&self, p: usize) -> Result<(char, usize), ParseError> {
        let b = self.bytes;
        let simple = |c: char| Ok((c, p + 2));
        match b.get(p + 1) {
            Some(b'n') => simple('\n'),
            Some(b't') => simple('\t'),
            Some(b'r') => simple('\r'),
            Some(b'\\') => simple('\\'),
            Some(b'\'') => simple('\''),
            Some(b'"') => simple('"'),
            Some(b'x') => {
                let hex = b
                    .get(p + 2..p + 4)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .and_then(char::from_u32);
                hex.map(|c| (c, p + 4))
                    .ok_or_else(|| (p, "expected two hexadecimal digits after `\\x`".into()))
            }
            Some(c) if c.is_ascii_digit() => {
                let end = p + 1 + b[p + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
                self.text(p + 1, end)
                    .parse::<u32>()
                    .ok()
                    .and_then(char::from_u32)
                    .map(|c| (c, end))
                    .ok_or_else(|| (p, "invalid code point in escape".to_string()))
            }
            _ => Err((
                p,
                format!("invalid escape `\\` followed by {}", describe_at(b, p + 1)),
            )),
        }
    }
}

fn empty_brackets(pos: usize) -> ParseError {
    (
        pos,
        "an array must have at least one element: `[]` is not allowed, write `empty([0]t)` for an element type t".into(),
    )
}
