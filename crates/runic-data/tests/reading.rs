//! Reading text and binary values: the examples of §2 and the type rules of §2.4.

use runic_data::*;

fn read(text: &str) -> Vec<Value> {
    read_all(text.as_bytes(), "<stdin>", &[]).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn read1(text: &str, hint: Option<&str>) -> Result<String, String> {
    let hint = hint.map(|h| parse_value_type(h).unwrap());
    let mut r = Reader::new(text.as_bytes(), "<stdin>");
    match r.next_value(hint.as_ref()) {
        Ok(Some(v)) => Ok(print_value_single_line(&v)),
        Ok(None) => Err("no value".into()),
        Err(e) => Err(e.to_string()),
    }
}

fn ok(text: &str) -> String {
    read1(text, None).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn ok_hint(text: &str, hint: &str) -> String {
    read1(text, Some(hint)).unwrap_or_else(|e| panic!("{text} : {hint}: {e}"))
}

#[test]
fn example_stream_of_2_1() {
    let vs = read(
        "-- first argument\n10i64\n[[0.5f32, 1.0f32],   -- rows may span lines\n [2.0f32, -3e2f32]]\n[true, false, true]\n",
    );
    let printed: Vec<String> = vs.iter().map(print_value).collect();
    assert_eq!(
        printed,
        vec![
            "10i64",
            "[[0.5f32, 1.0f32],\n [2.0f32, -300.0f32]]",
            "[true, false, true]"
        ]
    );
}

#[test]
fn values_need_no_separators_after_brackets() {
    let vs = read("[1][2]empty([0]i32)1 2");
    let printed: Vec<String> = vs.iter().map(print_value).collect();
    assert_eq!(
        printed,
        vec!["[1i32]", "[2i32]", "empty([0]i32)", "1i32", "2i32"]
    );
    assert!(read("").is_empty());
    assert!(read("  -- nothing\n\r\n").is_empty());
}

#[test]
fn examples_of_2_4() {
    assert_eq!(ok("42"), "42i32");
    assert_eq!(ok("-7i8"), "-7i8");
    assert_eq!(ok("3.0"), "3.0f64");
    assert_eq!(ok("3f32"), "3.0f32");
    assert_eq!(ok("1e3"), "1000.0f64");
    assert_eq!(ok("[1, 2, 3]"), "[1i32, 2i32, 3i32]");
    assert_eq!(ok("[4f32, 5, 6]"), "[4.0f32, 5.0f32, 6.0f32]");
    assert_eq!(ok("[1.0f32, 2, 3.5]"), "[1.0f32, 2.0f32, 3.5f32]");
    assert_eq!(ok("[[1i64, 2], [3, 4]]"), "[[1i64, 2i64], [3i64, 4i64]]");
    assert_eq!(ok_hint("5", "i64"), "5i64");
    assert_eq!(ok_hint("5", "f32"), "5.0f32");
    assert_eq!(ok_hint("[1, 2]", "[]u8"), "[1u8, 2u8]");
    assert_eq!(ok("empty([0][3]f64)"), "empty([0][3]f64)");
    assert_eq!(ok("empty ( [2] [ 0 ] f32 )"), "empty([2][0]f32)");
}

#[test]
fn type_errors_of_2_4() {
    assert_eq!(
        read1("[1, 2.5]", None).unwrap_err(),
        "<stdin>:1:5: Error: decimal literal `2.5` cannot have type i32"
    );
    assert_eq!(
        read1("[1i64,\n        2i32]", None).unwrap_err(),
        "<stdin>:2:9: Error: array elements have different types (i64 and i32)"
    );
    assert_eq!(
        read1("5i32", Some("[]f32")).unwrap_err(),
        "<stdin>:1:1: Error: expected a value of type []f32, found i32"
    );
    assert_eq!(
        read1("5.5", Some("i64")).unwrap_err(),
        "<stdin>:1:1: Error: decimal literal `5.5` cannot have type i64"
    );
    assert_eq!(
        read1("[[1,2],[3]]", None).unwrap_err(),
        "<stdin>:1:10: Error: irregular array: this row has 1 elements, but the rows before it have 2"
    );
    assert_eq!(
        read1("[1f32, 2]", Some("[][]f32")).unwrap_err(),
        "<stdin>:1:1: Error: expected a value of type [][]f32, found []f32"
    );
    assert_eq!(
        read1("[1f64, 2]", Some("[]f32")).unwrap_err(),
        "<stdin>:1:1: Error: expected a value of type []f32, found []f64"
    );
    assert_eq!(
        read1("[1, 2f64]", Some("[]f32")).unwrap_err(),
        "<stdin>:1:5: Error: expected an element of type f32, found `2f64` of type f64"
    );
    assert_eq!(
        read1("empty([0]i32)", Some("[]i64")).unwrap_err(),
        "<stdin>:1:1: Error: expected a value of type []i64, found []i32"
    );
    assert_eq!(
        read1("true", Some("i32")).unwrap_err(),
        "<stdin>:1:1: Error: boolean literal `true` cannot have type i32"
    );
    assert_eq!(
        read1("[true, 1]", None).unwrap_err(),
        "<stdin>:1:8: Error: integer literal `1` cannot have type bool"
    );
}

#[test]
fn compatibility_table() {
    // Integer literal: wraps to integer types, converts to floats.
    assert_eq!(ok_hint("300", "u8"), "44u8");
    assert_eq!(ok_hint("0xff", "i8"), "-1i8");
    assert_eq!(ok_hint("7", "f16"), "7.0f16");
    // Decimal literal: any float type.
    assert_eq!(ok_hint("2.5", "f16"), "2.5f16");
    assert!(read1("2.5", Some("bool")).is_err());
    // Suffixed literals and specials: only their own type.
    assert_eq!(ok_hint("7i64", "i64"), "7i64");
    assert!(read1("7i64", Some("i32")).is_err());
    assert!(read1("f32.nan", Some("f64")).is_err());
    assert_eq!(
        ok_hint("[f32.nan, -f32.inf]", "[]f32"),
        "[f32.nan, -f32.inf]"
    );
    // Booleans.
    assert_eq!(ok_hint("[false]", "[]bool"), "[false]");
    assert!(read1("1", Some("bool")).is_err());
}

#[test]
fn wraparound_in_arrays() {
    assert_eq!(ok("[128i8, 255, -129]"), "[-128i8, -1i8, 127i8]");
    assert_eq!(ok("[32768i16]"), "[-32768i16]");
    assert_eq!(ok("-1u8"), "255u8");
    assert_eq!(ok("[1u64, 18446744073709551616]"), "[1u64, 0u64]");
}

#[test]
fn specials_and_lexical_forms() {
    assert_eq!(ok("f32.nan"), "f32.nan");
    assert_eq!(ok("-f64.inf"), "-f64.inf");
    assert_eq!(ok("f16.inf"), "f16.inf");
    assert_eq!(ok("0x1f32"), "7986i32");
    assert_eq!(ok("0xffu8"), "255u8");
    assert_eq!(ok("0xfi8"), "15i8");
    assert_eq!(ok("0b101"), "5i32");
    assert_eq!(ok("1_000_000i64"), "1000000i64");
    assert_eq!(ok("1E5"), "100000.0f64");
    assert_eq!(ok("[1,2,]"), "[1i32, 2i32]");
    assert_eq!(ok("[ -- c\n 1 , -- d\n 2 ]"), "[1i32, 2i32]");
    assert_eq!(ok("\u{a0}\u{2003}7"), "7i32");
}

#[test]
fn empty_rows_inside_arrays() {
    assert_eq!(ok("[empty([0]i32), empty([0]i32)]"), "empty([2][0]i32)");
    assert!(read1("[[1], empty([0]i32)]", None).is_err());
    assert!(read1("[empty([0]i32), empty([0]i64)]", None).is_err());
}

#[test]
fn strings() {
    assert_eq!(ok("\"ab\""), "[97u8, 98u8]");
    assert_eq!(ok("\"\\n\\x41\\955\""), "[10u8, 65u8, 206u8, 187u8]");
    assert_eq!(ok("\"\""), "empty([0]u8)");
    assert!(read1("\"abc", None).is_err());
    assert!(read1("\"a\"", Some("[]i32")).is_err());
}

#[test]
fn binary_values_in_a_mixed_stream() {
    let mut bytes = b"1 ".to_vec();
    write_binary(&Value::Scalar(Prim::I32(5)), &mut bytes).unwrap();
    write_binary(
        &Array::from_f32(vec![2], vec![1.0, -2.5]).unwrap().into(),
        &mut bytes,
    )
    .unwrap();
    bytes.extend_from_slice(b" -- comment\n[true]");
    let vs = read_all(&bytes, "x", &[]).unwrap();
    let printed: Vec<String> = vs.iter().map(print_value).collect();
    assert_eq!(printed, vec!["1i32", "5i32", "[1.0f32, -2.5f32]", "[true]"]);

    // Binary values must match the hint exactly (no conversion).
    let hints = [None, Some(parse_value_type("i64").unwrap())];
    let err = read_all(&bytes, "x", &hints).unwrap_err();
    assert_eq!(
        err.to_string(),
        "x: byte 2: Error: expected a value of type i64, found binary value of type i32"
    );
    let hints = [
        None,
        Some(parse_value_type("i32").unwrap()),
        Some(parse_value_type("[]f32").unwrap()),
    ];
    assert_eq!(read_all(&bytes, "x", &hints).unwrap().len(), 4);
}

#[test]
fn gzipped_files() {
    use std::io::Write;
    let dir = std::env::temp_dir().join(format!("runic-data-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plain = dir.join("v.in");
    std::fs::write(&plain, b"[1, 2]").unwrap();
    assert_eq!(read_file_bytes(&plain).unwrap(), b"[1, 2]");
    let gz = dir.join("v.in.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(b"3i8").unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    assert_eq!(read_file_bytes(&gz).unwrap(), b"3i8");
    std::fs::remove_dir_all(&dir).unwrap();
}
