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
    Value::Array(Array::new(vec![v.len()], Buffer::I32(v.to_vec().into())).unwrap())
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
fn maps_over_rows_fuse_inside_after_they_fuse_outside() {
    // Composing the maps over rows puts their maps over a row side by side in one lambda
    // (whose body fusion had already visited); they fuse too: one map over rows of one map.
    // Rows [x, x+1, x+2] of [1, 2], plus one, times two.
    let (b, a) = check(
        "entry main (xs: []i32) = \
           let rows = map (\\x -> map (\\j -> x + i32.i64 j) (iota 3)) xs \
           in map (map (*2)) (map (map (+1)) rows)",
        &[1, 2],
        Value::Array(Array::new(vec![2, 3], Buffer::I32(vec![4, 6, 8, 6, 8, 10].into())).unwrap()),
    );
    assert_eq!(soacs(&b).0, 6);
    assert_eq!(soacs(&a).0, 2, "{a}");
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
fn a_map_read_again_after_its_first_map_reader_fuses_and_returns_its_result_too() {
    // ys = xs + 1 = [2, 3, 4], zs = 2 * ys = [4, 6, 8], zs + ys = [6, 9, 12]. ys is read
    // by zs's map and again by the last map: it fuses into zs's map, which returns ys
    // too, and that map (now the last map's only producer) fuses into it.
    let (b, a) = check(
        "entry main (xs: []i32) = let ys = map (+1) xs let zs = map (*2) ys in map2 (+) zs ys",
        &[1, 2, 3],
        i32s(&[6, 9, 12]),
    );
    assert_eq!(soacs(&b).0, 3);
    assert_eq!(soacs(&a).0, 1);
}

#[test]
fn a_map_returning_a_result_read_later_keeps_it_for_that_reader() {
    // ys = [2, 3, 4] is read by zs's map, then by a reduction after it: fused into zs's
    // map, which returns it for the sum (a reduction has no per-element results to
    // return it from, so it does not fuse further). zs + sum ys = [4, 6, 8] + 9.
    let (b, a) = check(
        "entry main (xs: []i32) = let ys = map (+1) xs let zs = map (*2) ys let s = i32.sum ys in map (+s) zs",
        &[1, 2, 3],
        i32s(&[13, 15, 17]),
    );
    assert_eq!(soacs(&b).0, 3);
    assert_eq!(soacs(&a).0, 2);
}

#[test]
fn a_failing_producer_is_not_interleaved_with_a_failing_consumer() {
    // Producer divides (can fail), consumer indexes (can fail): order of errors matters.
    let before =
        lower("entry main (xs: []i32) = map (\\i -> xs[i64.i32 i]) (map (\\x -> 10 / x) xs)");
    let after = runic_opt::fuse(before.clone());
    assert_eq!(soacs(&after).0, 2);
}

/// Every lambda of a program, outermost first.
fn lambdas(p: &runic_ir::Prog) -> Vec<runic_ir::Lambda> {
    use runic_ir::traverse::{walk_lambda, Visitor};
    struct All(Vec<runic_ir::Lambda>);
    impl Visitor for All {
        fn lambda(&mut self, l: &runic_ir::Lambda) {
            self.0.push(l.clone());
            walk_lambda(self, l)
        }
    }
    let mut all = All(Vec::new());
    p.funs.iter().for_each(|f| all.body(&f.body));
    all.0
}

#[test]
fn a_fused_lambda_is_new_code_with_a_fresh_id() {
    let (b, a) = check(
        "entry main (xs: []i32) = map (*2) (map (+1) xs)",
        &[1, 2, 3],
        i32s(&[4, 6, 8]),
    );
    let before: Vec<_> = lambdas(&b).iter().map(|l| l.id).collect();
    let after = lambdas(&a);
    assert_eq!((before.len(), after.len()), (2, 1));
    assert!(!before.contains(&after[0].id));
    assert!(!runic_ir::traverse::has_duplicate_lambda_ids(&a));
}

#[test]
fn maps_fuse_inside_a_loop_body() {
    // Twice (x + 1) * 2 from [1, 2]: [4, 6], then [10, 14].
    let text = "entry main (xs: []i32) = loop ys = xs for _i < 2 do map (*2) (map (+1) ys)";
    let (b, a) = check(text, &[1, 2], i32s(&[10, 14]));
    assert_eq!((soacs(&b).0, soacs(&a).0), (2, 1));
}

#[test]
fn the_identity_pre_lambda_of_a_fold_has_typed_parameters() {
    // A reduce over (map (*2) xs, xs): the second input passes through the new `pre`.
    let (_, a) = check(
        "entry main (xs: []i32) =
           let ys = map (*2) xs
           let (s, t) = reduce (\\(a, b) (c, d) -> (a + c, b + d)) (0, 0) (zip ys xs)
           in s - t",
        &[1, 2, 3],
        Value::Scalar(runic_data::Prim::I32(6)),
    );
    assert_eq!(soacs(&a), (0, 1));
    let pre = lambdas(&a)
        .into_iter()
        .find(|l| l.params.len() == 2 && l.body.stms.len() == 1)
        .expect("the pre lambda");
    let elems: Vec<_> = pre
        .params
        .iter()
        .filter(|q| a.names.hint(q.name) == "elem")
        .collect();
    assert_eq!(elems.len(), 1, "{a}");
    assert_eq!(a.names.type_of(elems[0].name), Some(&elems[0].ty));
}

#[test]
fn an_iota_of_a_known_size_between_producer_and_consumer_does_not_stop_fusion() {
    // `iota n` of an array's size cannot fail, so the producer may move past it:
    // Σ (3x + i) over [1, 2, 3, 4] with i = 0..3 is 30 + 6 = 36.
    let (b, a) = check(
        "entry main [n] (xs: [n]i32) = let ys = map (*3) xs
                                       let is = map i32.i64 (iota n)
                                       in i32.sum (map2 (+) ys is)",
        &[1, 2, 3, 4],
        Value::Scalar(runic_data::Prim::I32(36)),
    );
    assert!(soacs(&b).0 >= 2, "{b}");
    assert_eq!(soacs(&a), (0, 1), "{a}");
}

#[test]
fn nested_maps_with_rows_of_fixed_size_fuse_into_a_sum_of_rows() {
    // The rows of `map (map (*2))` have the outer array's row size, so the producer cannot
    // fail for rows of different shapes and joins the vectorised sum as its pre lambda:
    // 2·([1, 2] + [3, 4] + [5, 6]) = [18, 24].
    let text = "entry main (xs: []i32) = let m = unflatten (xs :> [3 * 2]i32)
                in reduce (map2 (+)) [0, 0] (map (map (* 2)) m)";
    let (_, a) = check(text, &[1, 2, 3, 4, 5, 6], i32s(&[18, 24]));
    let t = a.to_string();
    assert!(t.contains("reduce(3i64, pre"), "{a}");
}

#[test]
fn an_inner_reduction_stays_out_of_a_reduction() {
    // Σ_rows min(row): the per-row minimum is its own map (one value per row), the sum
    // reads it. min [1, 2] + min [3, 0] + min [5, 6] = 1 + 0 + 5 = 6.
    let text = "entry main (xs: []i32) = let m = unflatten (xs :> [3 * 2]i32)
                in i32.sum (map i32.minimum m)";
    let (_, a) = check(
        text,
        &[1, 2, 3, 0, 5, 6],
        Value::Scalar(runic_data::Prim::I32(6)),
    );
    let t = a.to_string();
    assert!(!t.contains("reduce_comm(3i64, pre"), "{a}");
}

#[test]
fn a_matrix_vector_product_stays_apart_from_its_consumer() {
    // relu (M·v) with M = [[1, -2], [3, 4]] and v = [1, 1]: [max 0 (−1), 7] = [0, 7]. The
    // dot products stay a map of their own (a GEMM for the executor), the relu another.
    let text = "entry main (xs: []i32) = let m = map (map f32.i32) (unflatten (xs :> [2 * 2]i32))
                let v = [1f32, 1]
                in map (\\z -> i32.max 0 (i32.f32 z)) (map (\\r -> f32.sum (map2 (*) r v)) m)";
    let (_, a) = check(text, &[1, -2, 3, 4], i32s(&[0, 7]));
    let t = a.to_string();
    let maps: Vec<&str> = t.split("= map(").skip(1).collect();
    let dots = maps.iter().filter(|m| m.contains("reduce_comm(")).count();
    assert_eq!(dots, 1, "{a}");
    let relu = maps
        .iter()
        .find(|m| m.contains("Max("))
        .expect("the relu map");
    assert!(!relu.contains("reduce_comm("), "{a}");
}

#[test]
fn inputs_the_fused_lambda_does_not_read_are_dropped() {
    // The producer's second input is read only for a size (nothing per element), so the
    // fused map over xs·2 keeps one input: [2, 4].
    let (_, a) = check(
        "entry main (xs: []i32) = let ys = map2 (\\x (r: [2]i32) -> x + i32.i64 (length r) - 2)
                                               xs (map (\\x -> [x, x]) xs)
                                  in map (*2) ys",
        &[1, 2],
        i32s(&[2, 4]),
    );
    let t = a.to_string();
    let header = t.lines().find(|l| l.contains("= map(")).unwrap();
    let params = header
        .split("\\{")
        .nth(1)
        .unwrap()
        .split('}')
        .next()
        .unwrap();
    assert_eq!(params.matches(" : ").count(), 1, "{a}");
}

#[test]
fn a_producer_read_only_by_an_if_moves_into_its_branches_and_fuses_there() {
    // ys = 2·xs read by both branches: each gets its copy, fused into its sum.
    // [1, 2, 3] takes the first branch: 2 + 4 + 6 = 12.
    let text = "entry main (xs: []i32) = let ys = map (*2) xs
                in if length xs > 2 then i32.sum ys else i32.sum (map (+1) ys)";
    let (b, a) = check(text, &[1, 2, 3], Value::Scalar(runic_data::Prim::I32(12)));
    assert!(soacs(&b).0 >= 1, "{b}");
    assert_eq!(soacs(&a), (0, 2), "{a}");
    // [1, 2] takes the second: 3 + 5 = 8.
    let got = runic_exec::run_entry(&a, "main", vec![i32s(&[1, 2])]).expect("runs");
    assert_eq!(got, vec![Value::Scalar(runic_data::Prim::I32(8))]);
}

#[test]
fn maps_of_widths_the_entry_point_equates_fuse() {
    // `xs` and `ys` have sizes `n` and `m`, which the entry point's own check of its
    // arguments equates (the type says `[n]` twice): the map over `ys`'s size fuses with
    // the one over `xs`'s. Without that check the widths stay apart.
    let same = "entry main [n] (xs: [n]i32) (ys: [n]i32) =
                  let a = map (+1) xs
                  in map2 (+) a ys";
    let before = lower(same);
    let after = runic_opt::fuse(before.clone());
    runic_ir::verify(&after).unwrap();
    assert_eq!(soacs(&before).0, 2, "{before}");
    assert_eq!(soacs(&after).0, 1, "{after}");
    let args = || vec![i32s(&[1, 2, 3]), i32s(&[10, 20, 30])];
    for p in [&before, &after] {
        let got = runic_exec::run_entry(p, "main", args()).expect("runs");
        assert_eq!(got, vec![i32s(&[12, 23, 34])]);
    }
    // Sizes the program only equates later (a size coercion after the first map) are not
    // known equal where the maps are: no fusion across them.
    let later = "entry main (xs: []i32) (ys: []i32) =
                   let a = map (+1) xs
                   let b = map (*2) ys
                   in map2 (+) a (b :> [length xs]i32)";
    let before = lower(later);
    let after = runic_opt::fuse(before.clone());
    runic_ir::verify(&after).unwrap();
    assert!(soacs(&after).0 >= 2, "{after}");
}
