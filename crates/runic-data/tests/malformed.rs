//! A corpus of malformed inputs: each must be rejected with an error at the right position.

use runic_data::*;

/// Reads all of `input` with the given hints; expects an error at `line:col` (text) whose
/// message contains `needle`.
fn text_err(input: &str, hint: Option<&str>, line: usize, col: usize, needle: &str) {
    let hints = [hint.map(|h| parse_value_type(h).unwrap())];
    match read_all(input.as_bytes(), "<stdin>", &hints) {
        Ok(v) => panic!("{input:?} was accepted: {v:?}"),
        Err(e) => {
            assert_eq!(
                (e.line, e.col),
                (line, col),
                "{input:?}: wrong position in `{e}`"
            );
            assert!(
                e.message.contains(needle),
                "{input:?}: `{e}` lacks `{needle}`"
            );
        }
    }
}

fn binary_err(input: &[u8], offset: usize, needle: &str) {
    match read_all(input, "data", &[]) {
        Ok(v) => panic!("{input:?} was accepted: {v:?}"),
        Err(e) => {
            assert!(e.is_binary_position(), "{e}");
            assert_eq!(e.byte_offset, offset, "{input:?}: `{e}`");
            assert!(
                e.message.contains(needle),
                "{input:?}: `{e}` lacks `{needle}`"
            );
        }
    }
}

#[test]
fn bad_literals() {
    text_err("1i32x", None, 1, 5, "unexpected `x`");
    text_err("12ab", None, 1, 3, "unexpected `a`");
    text_err("1.", None, 1, 3, "expected a digit after `.`");
    text_err(".5", None, 1, 1, "expected a value, found `.`");
    text_err("1e5i32", None, 1, 4, "integer suffix");
    text_err("  1e", None, 1, 5, "exponent");
    text_err("-f32.nan", None, 1, 1, "cannot have a sign");
    text_err("+f64.inf", None, 1, 1, "not allowed");
    text_err("f32.nope", None, 1, 1, "expected a value");
    text_err("0x", None, 1, 3, "hexadecimal digit");
    text_err("0b12", None, 1, 4, "unexpected `2`");
    text_err("0xffp1", None, 1, 5, "unexpected `p`");
    text_err("1i3", None, 1, 2, "unexpected `i`");
    text_err("- 1", None, 1, 2, "expected a number after `-`");
    text_err("1\n\n  nope", None, 3, 3, "expected a value, found `nope`");
    text_err("1,2", None, 1, 2, "expected a value, found `,`");
    text_err("tru", None, 1, 1, "`tru`");
    text_err("\u{1F600}", None, 1, 1, "expected a value");
}

#[test]
fn bad_arrays() {
    text_err("[]", None, 1, 1, "`[]` is not allowed");
    text_err("[[1], []]", None, 1, 7, "`[]` is not allowed");
    text_err("[[]]", None, 1, 2, "`[]` is not allowed");
    text_err("[1, 2", None, 1, 6, "found end of input");
    text_err("[1 2]", None, 1, 4, "expected `,` or `]`");
    text_err("[1,,2]", None, 1, 4, "expected a value, found `,`");
    text_err("[,]", None, 1, 2, "expected a value");
    text_err("[[1,2],[3]]", None, 1, 10, "irregular");
    text_err("[[1],[2,3]]", None, 1, 9, "irregular");
    text_err("[[1],2]", None, 1, 6, "irregular");
    text_err("[1,[2]]", None, 1, 4, "irregular");
    text_err("[[1,2],\n [3,4],\n [5]]", None, 3, 4, "irregular");
    text_err("[1, 2.5]", None, 1, 5, "cannot have type i32");
    text_err("[1i64, 2i32]", None, 1, 8, "different types (i64 and i32)");
    text_err("[true, 1.0]", None, 1, 8, "cannot have type bool");
    text_err("[1, true]", None, 1, 5, "cannot have type i32");
    text_err(&"[".repeat(40), None, 1, 1, "rank");
    text_err(
        &format!("{}1{}", "[".repeat(33), "]".repeat(33)),
        None,
        1,
        1,
        "rank",
    );
}

#[test]
fn bad_empty() {
    text_err("empty([2]f32)", None, 1, 1, "dimension of size 0");
    text_err("empty([0])", None, 1, 10, "element type");
    text_err("empty(i32)", None, 1, 7, "dimension");
    text_err("empty([0]i32", None, 1, 13, "`)`");
    text_err("empty[0]i32", None, 1, 6, "`(`");
    text_err("empty([x]i32)", None, 1, 8, "dimension size");
    text_err("empty([0]int)", None, 1, 10, "element type");
    text_err("empty([0]i32 x)", None, 1, 14, "`)`");
    text_err(
        "empty([99999999999999999999999][0]i32)",
        None,
        1,
        8,
        "too large",
    );
    text_err("[1, empty([0]i32)]", None, 1, 5, "irregular");
}

#[test]
fn wrong_types_against_hints() {
    text_err(
        "5i32",
        Some("[]f32"),
        1,
        1,
        "expected a value of type []f32, found i32",
    );
    text_err(
        "[1, 2]",
        Some("i32"),
        1,
        1,
        "expected a value of type i32, found []i32",
    );
    text_err("[[1]]", Some("[]i32"), 1, 1, "found [][]i32");
    text_err("  [1i8]", Some("[]u8"), 1, 3, "found []i8");
    text_err("[1u8, 2i8]", Some("[]u8"), 1, 7, "found `2i8` of type i8");
    text_err("5.5", Some("i64"), 1, 1, "cannot have type i64");
    text_err("[1, 2.5]", Some("[]i64"), 1, 5, "cannot have type i64");
    text_err("empty([0]f32)", Some("[][]f32"), 1, 1, "found []f32");
    text_err("f32.nan", Some("f64"), 1, 1, "found f32");
    text_err("\"ab\"", Some("[]i32"), 1, 1, "[]i32");
}

#[test]
fn bad_binary() {
    binary_err(b"b", 0, "truncated");
    binary_err(b"b\x02\x00 i3", 0, "truncated");
    binary_err(b"b\x03\x00 i32\x01\x00\x00\x00", 1, "version 3");
    binary_err(
        b"b\x02\x00 i31\x01\x00\x00\x00",
        3,
        "unknown binary type tag",
    );
    binary_err(
        b"b\x02\x00\xff\xfe\x00\x01\x01\x00\x00\x00",
        3,
        "unknown binary type tag",
    );
    binary_err(b"b\x02\x40 i32", 2, "rank 64");
    binary_err(b"b\x02\x01 i32\x02\x00\x00", 7, "truncated");
    binary_err(
        b"b\x02\x01 i32\x02\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00",
        15,
        "truncated",
    );
    binary_err(b"b\x02\x00 f64\x01\x00", 7, "truncated");
    let mut overflow = b"b\x02\x03  u8".to_vec();
    for d in [1u64 << 32, 1 << 32, 2] {
        overflow.extend_from_slice(&d.to_le_bytes());
    }
    binary_err(&overflow, 7, "overflows");
    // Offsets are absolute in a mixed stream.
    let mut mixed = b"[1] -- x\n".to_vec();
    mixed.extend_from_slice(b"b\x02\x00 i32\x01");
    binary_err(&mixed, 16, "truncated");
}

#[test]
fn garbage_bytes() {
    text_err("\x00", None, 1, 1, "byte 0x00");
    text_err("1 \x7f", None, 1, 3, "byte 0x7f");
    match read_all(b"\xff\xfe", "<stdin>", &[]) {
        Err(e) => assert_eq!((e.line, e.col, e.byte_offset), (1, 1, 0), "{e}"),
        Ok(v) => panic!("accepted {v:?}"),
    }
}
