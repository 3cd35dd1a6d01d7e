//! Errors in input data, with the position of the offending token or byte.

use std::fmt;

/// A malformed or ill-typed input value.
///
/// For text, `line` and `col` are 1-based (a tab advances the column to the next multiple of 8,
/// plus 1, as in compiler diagnostics). For binary data, `line` and `col` are 0 and only
/// `byte_offset` is meaningful. `byte_offset` is always the 0-based offset in the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataError {
    pub source_name: String,
    pub line: usize,
    pub col: usize,
    pub byte_offset: usize,
    pub message: String,
}

impl DataError {
    /// An error in text data at `offset` of `bytes`; computes line and column.
    pub fn in_text(bytes: &[u8], source_name: &str, offset: usize, message: String) -> DataError {
        let (line, col) = line_col(bytes, offset);
        DataError {
            source_name: source_name.to_string(),
            line,
            col,
            byte_offset: offset,
            message,
        }
    }

    /// An error in binary data at byte `offset`.
    pub fn in_binary(source_name: &str, offset: usize, message: String) -> DataError {
        DataError {
            source_name: source_name.to_string(),
            line: 0,
            col: 0,
            byte_offset: offset,
            message,
        }
    }

    /// True if the position is a byte offset in binary data rather than a line and column.
    pub fn is_binary_position(&self) -> bool {
        self.line == 0
    }
}

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_binary_position() {
            write!(
                f,
                "{}: byte {}: Error: {}",
                self.source_name, self.byte_offset, self.message
            )
        } else {
            write!(
                f,
                "{}:{}:{}: Error: {}",
                self.source_name, self.line, self.col, self.message
            )
        }
    }
}

impl std::error::Error for DataError {}

/// 1-based line and column of byte `offset`. Only LF starts a line (CR LF therefore counts
/// once); UTF-8 continuation bytes take no column.
fn line_col(bytes: &[u8], offset: usize) -> (usize, usize) {
    let offset = offset.min(bytes.len());
    let before = &bytes[..offset];
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let mut col = 1;
    for &b in &before[line_start..] {
        if b == b'\t' {
            col = (col - 1) / 8 * 8 + 9;
        } else if b == b'\r' || (0x80..0xC0).contains(&b) {
            // CR of a CR LF pair and UTF-8 continuation bytes take no column.
        } else {
            col += 1;
        }
    }
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions() {
        assert_eq!(line_col(b"abc", 0), (1, 1));
        assert_eq!(line_col(b"abc\ndef", 6), (2, 3));
        assert_eq!(line_col(b"a\r\nb", 3), (2, 1));
        assert_eq!(line_col(b"\tx", 1), (1, 9));
        assert_eq!(line_col("é x".as_bytes(), 3), (1, 3));
        assert_eq!(line_col(b"ab", 99), (1, 3));
    }

    #[test]
    fn display() {
        let e = DataError::in_text(b"\n        x", "<stdin>", 9, "bad".into());
        assert_eq!(e.to_string(), "<stdin>:2:9: Error: bad");
        let e = DataError::in_binary("in.data", 17, "truncated".into());
        assert_eq!(e.to_string(), "in.data: byte 17: Error: truncated");
    }
}
