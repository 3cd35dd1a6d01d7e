//! Reading data streams (§2.1, §4.2): text and binary values mixed, with optional type hints.

use crate::binary::read_binary;
use crate::error::DataError;
use crate::lexer::skip_blank;
use crate::text::TextParser;
use crate::types::ValueType;
use crate::value::Value;
use std::io::Read;
use std::path::Path;

/// Reads values one at a time from a byte stream.
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    source_name: String,
    text: TextParser<'a>,
}

impl<'a> Reader<'a> {
    /// `source_name` is used in error messages: `<stdin>` or a file path.
    pub fn new(bytes: &'a [u8], source_name: &str) -> Self {
        Reader {
            bytes,
            pos: 0,
            source_name: source_name.to_string(),
            text: TextParser::new(bytes),
        }
    }

    /// Byte offset of the next unread input.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The next value, or `Ok(None)` at the end of the input (after blanks and comments).
    ///
    /// With a hint, the value must have the hint's element type and rank (its dimensions are
    /// not checked here). Text literals take the hint's type (§2.4); a binary value must match
    /// it exactly.
    pub fn next_value(&mut self, hint: Option<&ValueType>) -> Result<Option<Value>, DataError> {
        self.pos = skip_blank(self.bytes, self.pos);
        if self.pos >= self.bytes.len() {
            return Ok(None);
        }
        let start = self.pos;
        if self.bytes[start] == b'b' {
            let (value, end) = read_binary(self.bytes, start)
                .map_err(|(at, msg)| DataError::in_binary(&self.source_name, at, msg))?;
            if let (Some(h), Some(t)) = (hint, value.value_type()) {
                if !h.same_elem_and_rank(&t) {
                    return Err(DataError::in_binary(
                        &self.source_name,
                        start,
                        format!(
                            "expected a value of type {}, found binary value of type {}",
                            h.rank_only_string(),
                            t
                        ),
                    ));
                }
            }
            self.pos = end;
            return Ok(Some(value));
        }
        let (value, end) = self
            .text
            .parse_value(start, hint)
            .map_err(|(at, msg)| DataError::in_text(self.bytes, &self.source_name, at, msg))?;
        self.pos = end;
        Ok(Some(value))
    }
}

/// Reads every value of a stream; value `i` gets hint `hints[i]` (none beyond the list).
pub fn read_all(
    bytes: &[u8],
    source_name: &str,
    hints: &[Option<ValueType>],
) -> Result<Vec<Value>, DataError> {
    let mut reader = Reader::new(bytes, source_name);
    let mut values = Vec::new();
    while let Some(v) = reader.next_value(hints.get(values.len()).and_then(Option::as_ref))? {
        values.push(v);
    }
    Ok(values)
}

/// The contents of a data file, gunzipped if its name ends in `.gz`.
pub fn read_file_bytes(path: &Path) -> std::io::Result<Vec<u8>> {
    let raw = std::fs::read(path)?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..]).read_to_end(&mut out)?;
        Ok(out)
    } else {
        Ok(raw)
    }
}
