//! Vertical fusion: the IR before and after, and unchanged results under runic-exec.

use runic_data::{Array, Buffer, Value};
use runic_syntax::SourceMap;

fn lower(text: &str) -> runic_ir::Prog {
    let mut sources = SourceMap::new();
    let file = sources.add("t.fut", text);
    let program = runic_syntax::parse_program(file, text, 0).expect("parses");
    let checked = runic_types::check_program(program, &sources).expect("checks");
    let p = runic_lower::lower_with_sources(&checked, Some(&sources)).expect("lowers");
    runic_opt::simplify(p)
}

fn soacs(p: &runic_ir::Prog) -> (usize, usize) {
    let t = p.to_string();
    (t.matches("map(").count(), t.matches("pre ").count())
}

fn i32s(v: &[i32]) -> Value {
    Value::Array(Array::new(vec![v.len()], Buffer::I32(v.to_vec())).unwrap())
}

/// Fuse, verify, print both forms, and check that both programs give `want`.
fn check(text: &str, arg: &[i32], want: Value) -> (runic_ir::Prog, runic_ir::Prog) {
    let before = lower(text);
    let after = runic_opt::fuse(before.clone());
    println!("before:\n{before}\nafter:\n{after}");
    runic_ir::verify(&after).unwrap_or_else(|e| panic!("{e:?}\n{after}"));
    for p in [&before, &after] {
        let got = runic_exec::run_entry(p, "main", vec![i32s(arg)]).expect("runs");
        assert_eq!(got, vec![want.clone()]);
    }
    (before, after)
}

#[test]
fn map_of_map_becomes_one_map() {
    // (x + 1) * 2 on [1, 2, 3] = [4, 6, 8]
    let (b, a) = check(
        "entry main (xs: []i32) = map (*2) (map (+1) xs)",
        &[1, 2, 3],
        i32s(&[4, 6, 8]),
    );
    assert_eq!(soacs(&b).0, 2);
    assert_eq!(soacs(&a).0, 1);
}

#[test]
fn map_into_reduce_becomes_its_pre_lambda() {
    // 3 * (1 + 2 + 3 + 4) = 30
    let (b, a) = check(
        "entry main (xs: []i32) = i32.sum (map (*3) xs)",
        &[1, 2, 3, 4],
        Value::Scalar(runic_data::Prim::I32(30)),
    );
    assert_eq!(soacs(&b), (1, 0));
    assert_eq!(soacs(&a), (0, 1));
}

#[test]
fn map_chain_into_scan_fuses_completely() {
    // squares of x - 1 on [1, 2, 3, 4] = [0, 1, 4, 9]; prefix sums [0, 1, 5, 14]
    let (b, a) = check(
        "entry main (xs: []i32) = scan (+) 0 (map (\\x -> x * x) (map (\\x -> x - 1) xs))",
        &[1, 2, 3, 4],
        i32s(&[0, 1, 5, 14]),
    );
    assert_eq!(soacs(&b).0, 2);
    assert_eq!(soacs(&a), (0, 1));
}

#[test]
fn one_consumer_reading_both_inputs_from_the_producer_fuses() {
    // ys = [2, 4]; ys + ys = [4, 8]
    let (b, a) = check(
        "entry main (xs: []i32) = let ys = map (*2) xs in map2 (+) ys ys",
        &[1, 2],
        i32s(&[4, 8]),
    );
    assert_eq!((soacs(&b).0, soacs(&a).0), (2, 1));
}

#[test]
fn a_map_with_two_readers_is_not_fused() {
    // (sum ys, ys): ys has two readers, so it must be built.
    let before2 = lower("entry main (xs: []i32) = let ys = map (*2) xs in (i32.sum ys, ys)");
    let after2 = runic_opt::fuse(before2.clone());
    assert_eq!(before2.to_string(), after2.to_string());
}

#[test]
fn a_failing_producer_is_not_interleaved_with_a_failing_consumer() {
    // Producer divides (can fail), consumer indexes (can fail): order of errors matters.
    let before =
        lower("entry main (xs: []i32) = map (\\i -> xs[i64.i32 i]) (map (\\x -> 10 / x) xs)");
    let after = runic_opt::fuse(before.clone());
    assert_eq!(soacs(&after).0, 2);
}
