//! Constructs lowered recently, each run on the interpreter and on lower → opt → exec:
//! results are compared with hand-computed values and errors with the interpreter's text.

use runic_syntax::SourceMap;
use std::sync::Arc;

/// Run `entry` of `text` on both backends with arguments in the text value format;
/// returns the printed results (or the rendered error) of the ir backend after checking
/// that the interpreter says exactly the same.
fn both(text: &str, entry: &str, args: &str) -> String {
    let mut sources = SourceMap::new();
    let file = sources.add("t.fut", text);
    let program = runic_syntax::parse_program(file, text, 0).expect("parses");
    let checked = runic_types::check_program(program, &sources).expect("type-checks");
    let prog = runic_lower::lower_with_sources(&checked, Some(&sources))
        .unwrap_or_else(|e| panic!("lowering failed: {e}"));
    if let Err(errs) = runic_ir::verify(&prog) {
        panic!("verifier: {errs:#?}\n{prog}");
    }
    let prog = runic_opt::pipeline()
        .iter()
        .fold(prog, |p, (_, pass)| pass(p));
    let args = runic_data::read_all(args.as_bytes(), "args", &[]).expect("arguments");
    let (checked, sources) = (Arc::new(checked), Arc::new(sources));
    let interp = runic_interp::Interpreter::new(checked, sources.clone());
    let exec = runic_exec::Executor::new(Arc::new(prog));
    let show = |vs: Vec<runic_data::Value>| {
        vs.iter()
            .map(runic_data::print_value_single_line)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let want = interp
        .call_entry(entry, args.clone())
        .map(show)
        .map_err(|e| e.render(&sources));
    let got = exec
        .run_entry(entry, args)
        .map(show)
        .map_err(|e| render_exec_error(&e, &sources));
    assert_eq!(want, got, "interpreter vs ir");
    got.unwrap_or_else(|e| e)
}

/// The ir backend's error report, as the CLI renders it (`backend_ir::render_error`).
fn render_exec_error(e: &runic_exec::ExecError, sources: &runic_syntax::SourceMap) -> String {
    let span = |l: runic_ir::Loc| runic_syntax::Span {
        file: runic_syntax::FileId(l.file),
        start: l.start,
        end: l.end,
    };
    let backtrace: Vec<_> = e.backtrace.iter().map(|&l| span(l)).collect();
    runic_syntax::render_runtime_error(&e.message, e.loc.map(span), &backtrace, sources)
}

#[test]
fn tabulate_2d_and_3d() {
    let t = "entry a (n: i64) = tabulate_2d 2 n (\\i j -> i * 10 + j)\n\
             entry b = tabulate_3d 2 2 2 (\\i j k -> i * 100 + j * 10 + k)";
    assert_eq!(
        both(t, "a", "3i64"),
        "[[0i64, 1i64, 2i64], [10i64, 11i64, 12i64]]"
    );
    assert_eq!(
        both(t, "b", ""),
        "[[[0i64, 1i64], [10i64, 11i64]], [[100i64, 101i64], [110i64, 111i64]]]"
    );
    assert!(both(t, "a", "0i64").contains("[2][0]i64"));
    assert!(both(t, "a", "-1i64").contains("Error"));
}

#[test]
fn partition_and_partition2() {
    let t = "entry a (xs: []i32) = partition (\\x -> x % 2 == 0) xs\n\
             entry b (xs: []i32) = partition2 (\\x -> x < 2) (\\x -> x < 4) xs";
    assert_eq!(
        both(t, "a", "[1, 2, 3, 4, 6]"),
        "[2i32, 4i32, 6i32] [1i32, 3i32]"
    );
    assert_eq!(
        both(t, "b", "[5, 0, 3, 1, 2, 7]"),
        "[0i32, 1i32] [3i32, 2i32] [5i32, 7i32]"
    );
}

#[test]
fn spread_and_rotate() {
    let t = "entry s (is: []i64) (vs: []i32) = spread 4 (-1) is vs\n\
             entry r (k: i64) (xs: [][]i32) = rotate k xs";
    assert_eq!(
        both(t, "s", "[2i64, 0i64, 9i64] [7, 8, 9]"),
        "[8i32, -1i32, 7i32, -1i32]"
    );
    assert_eq!(
        both(t, "r", "1i64 [[1, 2], [3, 4], [5, 6]]"),
        "[[3i32, 4i32], [5i32, 6i32], [1i32, 2i32]]"
    );
    assert_eq!(
        both(t, "r", "-4i64 [[1, 2], [3, 4], [5, 6]]"),
        "[[5i32, 6i32], [1i32, 2i32], [3i32, 4i32]]"
    );
    assert_eq!(both(t, "r", "3i64 empty([0][2]i32)"), "empty([0][2]i32)");
}

#[test]
fn flatten_and_unflatten_of_higher_rank() {
    let t = "entry f (xs: [][][]i32) = flatten_3d xs\n\
             entry u (xs: []i32) = unflatten_3d (xs :> [2*2*2]i32)";
    assert_eq!(
        both(t, "f", "[[[1, 2]], [[3, 4]]]"),
        "[1i32, 2i32, 3i32, 4i32]"
    );
    assert_eq!(
        both(t, "u", "[1, 2, 3, 4, 5, 6, 7, 8]"),
        "[[[1i32, 2i32], [3i32, 4i32]], [[5i32, 6i32], [7i32, 8i32]]]"
    );
}

#[test]
fn sized_checks_the_length_with_the_run_time_size_in_the_message() {
    let t = "entry s (n: i64) (xs: []i32) = sized n xs";
    assert_eq!(both(t, "s", "2i64 [1, 2]"), "[1i32, 2i32]");
    let e = both(t, "s", "3i64 [1, 2]");
    assert!(
        e.contains("Value of (desugared) shape [2] cannot match shape of type \"[3]i32\"."),
        "{e}"
    );
}

#[test]
fn map2_and_zip_size_mismatches_name_run_time_sizes() {
    let t = "entry m (a: []i32) (b: [][]i32) = map2 (\\x r -> map (+x) r) a b\n\
             entry z (a: []i32) (b: []i32) = zip a b";
    let e = both(t, "m", "[1, 2] [[3, 4, 5]]");
    assert!(
        e.contains("Value of (desugared) shape [1][3] cannot match shape of type \"[2][3]i32\"."),
        "{e}"
    );
    let e = both(t, "z", "[1, 2, 3] [1]");
    assert!(
        e.contains("shape [1] cannot match shape of type \"[3]i32\"."),
        "{e}"
    );
}

#[test]
fn holes_fail_when_reached() {
    let t = "entry h (x: i32) : i32 = if x > 0 then ??? else x";
    assert_eq!(both(t, "h", "-3"), "-3i32");
    assert!(both(t, "h", "1").contains("Reached hole of type: i32"));
}

#[test]
fn equality_on_arrays_and_records_of_arrays() {
    let t = "entry e (a: []i32) (b: []i32) = (a == b, a != b)\n\
             entry r (a: [][]i32) (b: [][]i32) = {x = a, y = 1} == {x = b, y = 1}";
    assert_eq!(both(t, "e", "[1, 2] [1, 2]"), "true false");
    assert_eq!(both(t, "e", "[1, 2] [1, 3]"), "false true");
    assert_eq!(both(t, "e", "[1, 2] [1]"), "false true");
    assert_eq!(both(t, "r", "[[1], [2]] [[1], [2]]"), "true");
    assert_eq!(both(t, "r", "[[1], [2]] [[1, 2]]"), "false");
}

#[test]
fn qualified_operators_are_values() {
    let t = "entry p (a: []i32) (b: []i32) = map2 (i32.+) a b\n\
             entry q (a: []f32) = reduce (f32.max) f32.lowest a";
    assert_eq!(both(t, "p", "[1, 2] [10, 20]"), "[11i32, 22i32]");
    assert_eq!(both(t, "q", "[1f32, 5f32, 2f32]"), "5.0f32");
}

#[test]
fn failing_constants_fail_only_when_used() {
    let t = "def bad : i32 = assert false 7\n\
             def table = [10, 20, 30]\n\
             def pick : i32 = table[3]\n\
             entry c (x: i32) = if x > 0 then bad + table[1] else table[2]\n\
             entry d (x: i32) = if x > 0 then pick else x + table[0]";
    assert_eq!(both(t, "c", "0"), "30i32");
    assert!(both(t, "c", "1").contains("Assertion is false: false"));
    assert_eq!(both(t, "d", "-1"), "9i32");
    assert!(both(t, "d", "1").contains("Index [3] out of bounds"));
}

#[test]
fn empty_arrays_of_a_type_parameter_take_the_instance_structure() {
    let t = "def none 't (_: t) : []t = []\n\
             def pad 't (xs: []t) : []t = xs ++ []\n\
             entry a (x: i32) = length (none x)\n\
             entry b (xs: [][]i32) = pad xs\n\
             entry c (xs: []i32) (ys: []f32) = unzip (pad (zip xs ys))";
    assert_eq!(both(t, "a", "5"), "0i64");
    assert_eq!(
        both(t, "b", "[[1, 2], [3, 4]]"),
        "[[1i32, 2i32], [3i32, 4i32]]"
    );
    assert_eq!(
        both(t, "c", "[1, 2] [0.5f32, 1f32]"),
        "[1i32, 2i32] [0.5f32, 1.0f32]"
    );
}

#[test]
fn flatmap_concatenates_segments_of_any_length() {
    let t = "entry a (xs: []i64) = flatmap (\\x -> (iota x, x * 2)) xs\n\
             entry b (xs: []i32) = flatmap' (\\x -> replicate (i64.i32 x) [x, x + 1]) xs\n\
             entry c (xs: []i64) = flatmap' (\\x -> iota (x - 1)) xs";
    // Sizes [2,0,1,3] give flags [t,f,t,t,f,f] and offsets [0,2,2,3] (language.md §10).
    assert_eq!(
        both(t, "a", "[2i64, 0i64, 1i64, 3i64]"),
        "[2i64, 0i64, 1i64, 3i64] [true, false, true, true, false, false] \
         [0i64, 2i64, 2i64, 3i64] [0i64, 1i64, 0i64, 0i64, 1i64, 2i64] [4i64, 0i64, 2i64, 6i64]"
    );
    assert_eq!(
        both(t, "b", "[1, 2]"),
        "[1i64, 2i64] [true, true, false] [0i64, 1i64] [[1i32, 2i32], [2i32, 3i32], [2i32, 3i32]]"
    );
    assert_eq!(
        both(t, "a", "empty([0]i64)"),
        "empty([0]i64) empty([0]bool) empty([0]i64) empty([0]i64) empty([0]i64)"
    );
    assert!(both(t, "c", "[2i64, 0i64]").contains("Error"));
}
