//! Each pass on lowered programs: the result verifies and is simpler in the expected way.

use runic_syntax::SourceMap;

fn lower(text: &str) -> runic_ir::Prog {
    let mut sources = SourceMap::new();
    let file = sources.add("t.fut", text);
    let program = runic_syntax::parse_program(file, text, 0).expect("parses");
    let checked = runic_types::check_program(program, &sources).expect("checks");
    runic_lower::lower_with_sources(&checked, Some(&sources)).expect("lowers")
}

/// `text` lowered and cleaned by DCE (which must leave a valid program), printed.
fn after_dce(text: &str) -> String {
    let q = runic_opt::dce(lower(text));
    runic_ir::verify(&q).unwrap();
    q.to_string()
}

fn stms(p: &runic_ir::Prog) -> usize {
    p.to_string().matches("let {").count()
}

#[test]
fn dce_removes_unused_pure_code_but_keeps_failing_code() {
    let p = lower("entry main (x: i32) = let _a = x + 1 let _b = x / 0 in x");
    let q = runic_opt::dce(p.clone());
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    assert!(!t.contains("Add("), "{t}");
    assert!(t.contains("Div("), "{t}");
}

#[test]
fn dce_removes_unused_soacs_that_cannot_fail_but_keeps_those_that_can() {
    let p = lower(
        "entry main (xs: []i32) =
           let _a = map (\\x -> x * 2) xs
           let _b = reduce (+) 0 xs
           let _c = map (\\x -> x / 0) xs
           in xs",
    );
    let q = runic_opt::dce(p);
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    assert!(!t.contains("Mul(") && !t.contains("reduce"), "{t}");
    assert!(t.contains("Div("), "{t}");
}

#[test]
fn dce_removes_unused_replicates_of_known_sizes_but_keeps_those_that_can_fail() {
    // `length xs` is the size of an existing array, 3 a constant: neither replicate can
    // fail. `k` comes from the user and may be negative: that one stays.
    let p = lower(
        "entry main (xs: []i32) (k: i64) =
           let _a = replicate (length xs) 0f32
           let _b = replicate 3 (replicate (length xs) 1i32)
           let _c = replicate k 2i8
           in xs",
    );
    let q = runic_opt::dce(p);
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    assert_eq!(t.matches("replicate(").count(), 1, "{t}");
    assert!(t.contains("2i8"), "{t}");
}

#[test]
fn dce_drops_unused_float_division_but_keeps_integer_division() {
    // A float `/`, `%` or `**` cannot fail: unused, it goes, and so does the sum it
    // divides. The integer division by zero stays (it fails).
    let p = lower(
        "entry main (xs: []f32) (n: i32) =
           let _mean = f32.sum xs / 3
           let _r = f32.sum xs % 2 + 2 ** f32.sum xs
           let _q = n / 0
           in xs",
    );
    let q = runic_opt::dce(p);
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    assert!(!t.contains("reduce") && !t.contains("Pow("), "{t}");
    assert_eq!(t.matches("Div(").count(), 1, "{t}");
    assert!(t.contains("0i32"), "{t}");
}

#[test]
fn dce_drops_unused_writes_that_their_branch_condition_proves_in_bounds() {
    // `0 <= i && i < length xs` guards the first write: unused, it goes. The second has
    // only half a guard and may fail: it stays (and so does its branch).
    let p = lower(
        "entry main (xs: *[]f32) (i: i64) (j: i64) =
           let n = length xs
           let _a = if 0 <= i && i < n then copy xs with [i] = 1 else copy xs
           let _b = if 0 <= j then copy xs with [j] = 2 else copy xs
           in xs",
    );
    let q = runic_opt::dce(p);
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    assert_eq!(t.matches(" with [").count(), 1, "{t}");
    assert!(t.contains("2f32"), "{t}");
}

#[test]
fn dce_drops_unused_nests_whose_reads_iotas_prove_in_bounds() {
    // `a[l, j]` with `l` and `j` elements of `iota n` and `iota m`, `a : [n][m]`: the
    // unused sums go (what a gradient of one argument of several leaves of the others'
    // adjoints). `a[l + 1, j]` and `a[j, l]` (dimensions swapped, n and m unrelated) may
    // fail: those stay.
    let p = lower(
        "entry main [n][m] (a: [n][m]f32) =
           let _sums = map (\\j -> f32.sum (map (\\l -> a[l, j] * 2) (iota n))) (iota m)
           let _shifted = map (\\j -> f32.sum (map (\\l -> a[l + 1, j]) (iota n))) (iota m)
           let _swapped = map (\\j -> f32.sum (map (\\l -> a[j, l]) (iota n))) (iota m)
           in a",
    );
    let q = runic_opt::dce(p);
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    assert!(!t.contains("Mul("), "{t}");
    assert_eq!(t.matches("= a_0[").count(), 2, "{t}");
    assert!(t.contains("Add("), "{t}");
}

#[test]
fn dce_drops_unused_whole_columns() {
    // `a[:, j]` with `j` an element of `iota m`, `a : [n][m]`, cannot fail: the unused
    // sums of columns go. `a[1:, j]` fails for an empty `a`: it stays.
    let p = lower(
        "entry main [n][m] (a: [n][m]f32) =
           let _cols = map (\\j -> f32.sum a[:, j]) (iota m)
           let _tails = map (\\j -> f32.sum a[1:, j]) (iota m)
           in a",
    );
    let q = runic_opt::dce(p);
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    assert_eq!(t.matches("= a_0[").count(), 1, "{t}");
    assert!(t.contains("= a_0[1i64"), "{t}");
}

/// A product over the rows of `transpose b` reads `b`'s columns in place and the
/// transpose dies; a map over the same rows that is not a product (a sum of each row),
/// and an integer product (no GEMM runs it), keep reading the transposed copy.
#[test]
fn products_read_transposed_operands_in_place() {
    let p = lower(
        "def dot [n] (a: [n]f32) (b: [n]f32) = f32.sum (map2 (*) a b)
         entry prod [m][k][p] (a: [m][k]f32) (b: [k][p]f32) : [m][p]f32 =
           map (\\r -> map (\\c -> dot r c) (transpose b)) a
         entry sums [k][p] (b: [k][p]f32) : [p]f32 = map f32.sum (transpose b)
         entry iprod [m][k][p] (a: [m][k]i32) (b: [k][p]i32) : [m][p]i32 =
           map (\\r -> map (\\c -> i32.sum (map2 (*) r c)) (transpose b)) a",
    );
    let q = runic_opt::pipeline()
        .into_iter()
        .fold(p, |prog, (_, pass)| pass(prog));
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    let entry = |name: &str| {
        let start = t.find(&format!("entry \"{name}\"")).expect("entry");
        let rest = &t[start..];
        rest[..rest[1..].find("\nentry ").map_or(rest.len(), |e| e + 1)].to_string()
    };
    let prod = entry("prod");
    assert!(!prod.contains("rearrange"), "{prod}");
    assert!(prod.contains("[:, col_"), "{prod}");
    for other in ["sums", "iprod"] {
        let e = entry(other);
        assert!(e.contains("rearrange") && !e.contains("[:, "), "{e}");
    }
}

#[test]
fn dce_drops_the_unused_results_of_a_map() {
    let p = lower(
        "entry main (xs: []f64) =
           let (ys, zs) = unzip (map (\\x -> (f64.sin x, f64.cos x)) xs)
           let _ = zs
           in ys",
    );
    let q = runic_opt::simplify(p);
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    assert!(t.contains("Sin(") && !t.contains("Cos("), "{t}");
}

#[test]
fn rearranges_compose_and_cancel() {
    let p = lower(
        "entry main (a: [][][]f64) = (transpose (transpose a), transpose (transpose (transpose a)))",
    );
    let q = runic_opt::simplify(p);
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    // transpose ∘ transpose is a copy of the input; three transposes are one rearrange of it.
    assert_eq!(t.matches("copy(a_").count(), 1, "{t}");
    assert_eq!(t.matches("rearrange([1, 0, 2], a_").count(), 1, "{t}");
    assert_eq!(t.matches("rearrange(").count(), 1, "{t}");
}

#[test]
fn concatenations_flatten_and_the_inner_one_goes() {
    let p = lower(
        "entry main (a: []i32) (b: []i32) (c: []i32) (m: [][2]i32) (n: [][2]i32) =
           (a ++ b ++ c ++ a, m ++ n ++ m)",
    );
    let q = runic_opt::dce(runic_opt::simplify(p));
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    // One concatenation of all the parts for each chain; the partial one of the vectors is
    // unused and gone (a concatenation of vectors cannot fail), that of the rows stays
    // (rows of different lengths would make it fail) but is no longer copied again.
    let parts: Vec<usize> = t
        .lines()
        .filter(|l| l.contains("concat@0("))
        .map(|l| l.matches(',').count() + 1)
        .collect();
    assert_eq!(parts, vec![4, 2, 3], "{t}");
}

#[test]
fn a_concatenation_whose_part_was_consumed_is_not_flattened() {
    // After `elide-copies`, the update writes `a` in place: a later concatenation may not
    // read `a` for the earlier one's part.
    let p = lower(
        "entry main (a: *[]i32) (b: []i32) (z: []i32) =
           let c1 = a ++ b
           let a[0] = 5
           in (c1 ++ z, a)",
    );
    let q = runic_opt::simplify(runic_opt::elide_copies(p));
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    assert!(!t.contains("copy("), "the update is in place: {t}");
    let cats: Vec<&str> = t.lines().filter(|l| l.contains("concat@0(")).collect();
    assert_eq!(cats.len(), 2, "{t}");
    assert!(cats[1].contains("concat@0(cat_"), "{t}");
}

/// `text` after `simplify`, `split-boundaries` and DCE, verified and printed.
fn split_at_boundaries(text: &str) -> String {
    let q = runic_opt::dce(runic_opt::split_boundaries(runic_opt::simplify(lower(
        text,
    ))));
    runic_ir::verify(&q).unwrap();
    q.to_string()
}

#[test]
fn boundary_conditions_split_a_map_into_its_ends_and_interior() {
    let t = split_at_boundaries(
        "entry main [n] (a: [n]f32) : [n]f32 =
           map (\\i -> if i == 0 || i >= n - 2 then a[i] else a[i - 1] + a[i + 2]) (iota n)",
    );
    // Three maps over ranges (the ends and the interior) and their concatenation.
    assert_eq!(t.matches("= map(").count(), 3, "{t}");
    assert_eq!(t.matches("concat@0(").count(), 1, "{t}");
    assert_eq!(t.matches("range_i64(").count(), 3, "{t}");
    // The interior's map (the second) does not branch; the ends' do.
    let maps: Vec<&str> = t.split("= map(").skip(1).collect();
    let branches = |m: &str| m.split("}, range_").next().unwrap().contains(" = if ");
    assert!(
        branches(maps[0]) && !branches(maps[1]) && branches(maps[2]),
        "{t}"
    );
}

#[test]
fn the_other_inputs_of_a_split_map_are_sliced_at_its_bounds() {
    let t = split_at_boundaries(
        "entry main [n] (a: [n]f32) (xs: [n]f32) : [n]f32 =
           map2 (\\x i -> if i == 0 then x else x + a[i - 1]) xs (iota n)",
    );
    assert_eq!(t.matches("= map(").count(), 3, "{t}");
    // Each map takes a slice of `xs` beside its range, in the original order.
    assert_eq!(t.matches("= xs_").count(), 3, "{t}");
    assert_eq!(t.matches("}, rows_").count(), 3, "{t}");
}

#[test]
fn maps_whose_condition_or_branch_is_not_a_boundary_stay_whole() {
    for text in [
        // Not a comparison with the index.
        "entry main [n] (a: [n]f32) : [n]f32 =
           map (\\i -> if i % 2 == 0 then a[i] else a[i - 1]) (iota n)",
        // Nothing read at an index in the interior: splitting would only copy.
        "entry main [n] (a: [n]f32) : [n]f32 =
           map (\\i -> if i == 0 then 1 else f32.i64 i) (iota n)",
        // Not over an iota.
        "entry main [n] (a: [n]f32) (is: [n]i64) : [n]f32 =
           map (\\i -> if i == 0 then 1 else a[i - 1]) is",
    ] {
        let t = split_at_boundaries(text);
        assert_eq!(t.matches("= map(").count(), 1, "{t}");
        assert!(!t.contains("concat@0("), "{t}");
    }
}

#[test]
fn cse_shares_repeated_computations() {
    let p = lower("entry main (x: i32) = (x * x + 1, x * x + 1)");
    let q = runic_opt::simplify(p.clone());
    runic_ir::verify(&q).unwrap();
    assert_eq!(q.to_string().matches("Mul(").count(), 1, "{q}");
    assert!(stms(&q) < stms(&p));
}

#[test]
fn constants_fold() {
    let p = lower("entry main (x: i32) = x + (2 * 3)");
    let q = runic_opt::copy_prop(p);
    runic_ir::verify(&q).unwrap();
    assert!(
        q.to_string().contains("Add(x_0, 6i32)") || q.to_string().contains(", 6i32)"),
        "{q}"
    );
}

#[test]
fn integer_identities_fold_but_float_ones_do_not() {
    let p = lower("entry main (i: i64) (x: f64) = (0 + i * 1 - 0, x + 0, x * 1)");
    let q = runic_opt::copy_prop(p);
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    // The integer result is `i` itself; `x + 0` stays (`-0 + 0` is `0`), and so does `x * 1`.
    assert!(!t.contains("Sub("), "{t}");
    assert_eq!(t.matches("Add(").count(), 1, "{t}");
    assert_eq!(t.matches("Mul(").count(), 1, "{t}");
    assert!(t.contains("in {i_"), "{t}");
}

#[test]
fn simplify_keeps_every_test_program_valid() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests");
    for dir in ["lang", "soacs", "prims", "examples"] {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in rd.flatten() {
            let path = e.path();
            if path.extension().is_none_or(|x| x != "fut") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let mut sources = SourceMap::new();
            let file = sources.add("t.fut", text.clone());
            let Ok(program) = runic_syntax::parse_program(file, &text, 0) else {
                continue;
            };
            let Ok(checked) = runic_types::check_program(program, &sources) else {
                continue;
            };
            let Ok(p) = runic_lower::lower_with_sources(&checked, Some(&sources)) else {
                continue;
            };
            for (name, pass) in runic_opt::pipeline() {
                let q = pass(p.clone());
                if let Err(e) = runic_ir::verify(&q) {
                    panic!("{} after {name}: {e:?}", path.display());
                }
            }
        }
    }
}

/// The IR of one function (its printed text, from `entry "name"` to the next blank line).
fn fun_text(p: &runic_ir::Prog, name: &str) -> String {
    let t = p.to_string();
    let start = t
        .find(&format!("entry \"{name}\""))
        .unwrap_or_else(|| panic!("no entry {name} in {t}"));
    let rest = &t[start..];
    rest[..rest.find("\n\n").unwrap_or(rest.len())].to_string()
}

#[test]
fn simplify_reaches_branches_loop_bodies_and_lambdas() {
    // In each nested body: a dead addition, and a product computed twice.
    let p = lower(
        "entry main (xs: []i32) (c: bool) (n: i64) (k: i32) =
           let a = if c then (let _d = k + 1 in k * k + k * k) else k
           let b = loop acc = k for _i < n do (let _d = acc + 7 in acc * acc + acc * acc)
           let ys = map (\\x -> let _d = x + 5 in x * x + x * x) xs
           let s = reduce (\\u v -> let _d = u + 9 in u * v + u * v) 1 xs
           in (a, b, ys, s)",
    );
    let q = runic_opt::simplify(p);
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    assert_eq!(t.matches("Mul(").count(), 4, "{t}");
    for dead in [", 1i32)", ", 7i32)", ", 5i32)", ", 9i32)"] {
        assert!(!t.contains(dead), "{dead} in {t}");
    }
}

#[test]
fn cse_reuses_enclosing_computations_but_not_those_of_sibling_or_inner_bodies() {
    let p = lower(
        "entry outer (c: bool) (k: i32) = let s = k * k in (s, if c then k * k + 1 else 0)
         entry inner (c: bool) (k: i32) = (if c then k * k else k * k, k * k)",
    );
    let q = runic_opt::simplify(p);
    runic_ir::verify(&q).unwrap();
    let outer = fun_text(&q, "outer");
    assert_eq!(outer.matches("Mul(").count(), 1, "{outer}");
    // One product per branch and one after the branch: what a body computes ends with it.
    let inner = fun_text(&q, "inner");
    assert_eq!(inner.matches("Mul(").count(), 3, "{inner}");
}

/// An element read and an integer division may fail, but a repeat of one that passed in
/// an enclosing body is its value; a read of a row (a view another statement may consume)
/// and a read in a sibling body are not shared.
#[test]
fn cse_shares_repeated_element_reads_and_divisions() {
    let p = lower(
        "entry reads [n][m] (a: [n][m]f32) (i: i64) (j: i64) =
           if a[i, j] > 0 then a[i, j] * 2 else -a[i, j]
         entry divs (x: i32) (y: i32) (c: bool) = let q = x / y in (q, if c then x / y + 1 else 0)
         entry rows [n][m] (a: [n][m]f32) (i: i64) = (a[i], a[i])
         entry siblings [n] (a: [n]f32) (c: bool) (i: i64) = if c then a[i] else a[i] + 1",
    );
    let q = runic_opt::simplify(p);
    runic_ir::verify(&q).unwrap();
    let reads = fun_text(&q, "reads");
    assert_eq!(reads.matches("[i_").count(), 1, "{reads}");
    let divs = fun_text(&q, "divs");
    assert_eq!(divs.matches("Div(").count(), 1, "{divs}");
    let siblings = fun_text(&q, "siblings");
    assert_eq!(siblings.matches("[i_").count(), 2, "{siblings}");
    let rows = fun_text(&q, "rows");
    assert_eq!(rows.matches("[i_").count(), 2, "{rows}");
}

#[test]
fn copy_propagation_substitutes_into_nested_bodies() {
    use runic_ir::traverse::{binders, uses};
    use runic_ir::*;
    // main (n, xs: [n]i32, c, k) =
    //   let y = k; let six = 2 * 3
    //   in (map (\x -> x + y) xs, if c then y else six, loop a = 0 for i < n do a + y)
    // Lowering never writes such copies (AD does); built here so that each nested use is
    // known.
    let mut names = NameSource::default();
    let i32t = Type::Prim(PrimType::I32);
    let n = names.fresh_typed("n", Type::Prim(PrimType::I64));
    let xs_t = i32t.array_of(SubExp::Var(n));
    let xs = names.fresh_typed("xs", xs_t.clone());
    let c = names.fresh_typed("c", Type::Prim(PrimType::Bool));
    let k = names.fresh_typed("k", i32t.clone());
    let mut b = Builder::new(&mut names);
    let y = b.basic("y", BasicOp::SubExp(SubExp::Var(k)), i32t.clone());
    let i32c = |v| SubExp::Const(Prim::I32(v));
    let six = b.basic(
        "six",
        BasicOp::BinOp(BinOp::Mul, i32c(2), i32c(3)),
        i32t.clone(),
    );
    let lam = b.lambda(vec![("x", i32t.clone())], vec![i32t.clone()], |b, ps| {
        vec![b.binop(BinOp::Add, SubExp::Var(ps[0]), y.clone(), PrimType::I32)]
    });
    let ys = b.map("ys", SubExp::Var(n), lam, vec![xs]).unwrap();
    let r = b.if_(
        SubExp::Var(c),
        vec![i32t.clone()],
        |_| vec![y.clone()],
        |_| vec![six.clone()],
    );
    let a = b.param("a", i32t.clone());
    let i = b.fresh("i");
    let loop_body =
        b.body(|b| vec![b.binop(BinOp::Add, SubExp::Var(a.name), y.clone(), PrimType::I32)]);
    let l = b.bind(
        Exp::Loop {
            params: vec![(a, i32c(0))],
            form: LoopForm::For {
                i,
                bound: SubExp::Var(n),
            },
            body: loop_body,
        },
        vec![i32t.clone()],
    );
    let body = b.finish(vec![
        SubExp::Var(ys[0]),
        SubExp::Var(r[0]),
        SubExp::Var(l[0]),
    ]);
    let params = [
        (n, Type::Prim(PrimType::I64)),
        (xs, xs_t.clone()),
        (c, Type::Prim(PrimType::Bool)),
        (k, i32t.clone()),
    ];
    let f = FunDef {
        name: "main".into(),
        params: params
            .into_iter()
            .map(|(name, ty)| Param { name, ty })
            .collect(),
        ret: vec![xs_t, i32t.clone(), i32t],
        body,
        entry: None,
        src: SrcInfo::default(),
    };
    let p = Prog {
        funs: vec![f],
        names,
    };
    runic_ir::verify(&p).unwrap();
    let q = runic_opt::copy_prop(p);
    runic_ir::verify(&q).unwrap();
    let body = &q.funs[0].body;
    let (y, six) = (y.as_var().unwrap(), six.as_var().unwrap());
    assert!(
        !uses(body).contains(&y) && !binders(body).contains(&y),
        "{q}"
    );
    assert!(!binders(body).contains(&six), "{q}");
    let t = q.to_string();
    // The parameter, and its uses in the lambda, the branch and the loop body.
    assert_eq!(t.matches("k_3").count(), 4, "{t}");
    assert!(t.contains("in {6i32}"), "{t}");
}

#[test]
fn dce_keeps_a_branch_or_map_with_a_failing_operation_at_any_depth() {
    let p = lower(
        "entry main (xs: []i32) (c: bool) (k: i32) =
           let _a = if c then k + 1 else k * 2
           let _b = if c then (if c then k / 2 else k) else k
           let _m = map (\\x -> if x > 0 then x % 3 else x) xs
           let _n = map (\\x -> if x > 0 then x - 3 else x) xs
           in k",
    );
    let q = runic_opt::dce(p);
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    assert!(t.contains("Div(") && t.contains("Mod("), "{t}");
    assert!(!t.contains("Add(") && !t.contains("Sub("), "{t}");
}

#[test]
fn dce_drops_dead_map_results_inside_a_loop_body() {
    let p = lower(
        "entry main (xs: []f64) (n: i64) =
           loop acc = xs for _i < n do
             let (ys, _zs) = unzip (map (\\x -> (f64.sin x, f64.cos x)) acc)
             in ys",
    );
    let q = runic_opt::dce(p);
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    assert!(t.contains("Sin(") && !t.contains("Cos("), "{t}");
}

#[test]
fn dce_drops_the_unused_components_of_a_reduction_and_what_only_they_read() {
    let t = after_dce(
        "entry main (xs: []f64) =
           let (m, _s) = reduce (\\(a, b) (c, d) -> (f64.min a c, b + d)) (f64.inf, 0)
                                (zip xs (map f64.sin xs))
           in m",
    );
    assert!(
        t.contains("Min(") && !t.contains("Sin(") && !t.contains("Add("),
        "{t}"
    );
}

#[test]
fn dce_keeps_reduction_components_that_the_kept_ones_read() {
    // The index of the minimum reads the values: both stay.
    let t = after_dce(
        "entry main [n] (xs: [n]f64) =
           let (_v, i) = reduce (\\(a, i) (b, j) -> if a <= b then (a, i) else (b, j))
                                (f64.inf, -1) (zip (map f64.sin xs) (iota n))
           in i",
    );
    assert!(t.contains("Sin(") && t.contains("Le("), "{t}");
}

#[test]
fn dce_drops_the_unused_components_of_a_scan_and_of_its_fused_producer() {
    let p = lower(
        "entry main (xs: []f64) =
           let (ps, _qs) = unzip (scan (\\(a, b) (c, d) -> (a + c, b * d)) (0, 1)
                                       (map (\\x -> (x * 2, f64.cos x)) xs))
           in ps",
    );
    let q = runic_opt::dce(runic_opt::fuse(p));
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    // `x * 2` stays, `b * d` and the cosine go.
    assert!(t.contains("scan(") && !t.contains("Cos("), "{t}");
    assert_eq!(t.matches("Mul(").count(), 1, "{t}");
}

#[test]
fn dce_drops_loop_results_only_their_own_next_values_read() {
    let t = after_dce(
        "entry main (x: f64) (n: i64) =
           let (a, _b, _c) = loop (a, b, c) = (x, x, x) for _i < n do (a + c, f64.sin b, c * 2)
           in a",
    );
    // `c` feeds `a`: it stays; `b` goes with its sine.
    assert!(t.contains("Mul(") && !t.contains("Sin("), "{t}");
}

#[test]
fn dce_keeps_what_a_loop_it_cannot_drop_reads() {
    // The outer loop's `c` is unused, but the inner loop that reads it stays (DCE does not
    // remove loops): `c` must stay too. (A random program found the IR left invalid.)
    let t = after_dce(
        "entry main (x: f64) =
           let (a, _) = loop (a, c) = (0i64, x) while a < 3 do
                          (a + 1, loop d = c for _i < 0i64 do -d)
           in a",
    );
    assert!(t.contains("while"), "{t}");
}

#[test]
fn dce_drops_a_tape_written_in_bounds_but_keeps_a_write_that_can_fail() {
    let tape = |bound: &str| {
        lower(&format!(
            "entry main [n] (xs: [n]f64) =
               let (s, _t) = loop (s, t) = (0, replicate n 0) for i < {bound} do
                               (s + xs[i % n], t with [i] = s)
               in s"
        ))
    };
    // Row i < n of a tape of n rows: the tape goes.
    let q = runic_opt::dce(tape("n"));
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    assert!(!t.contains(" with [") && !t.contains("replicate("), "{t}");
    // Row i < n + 1 may be out of bounds: the write stays, and so does its error.
    let q = runic_opt::dce(tape("n + 1"));
    runic_ir::verify(&q).unwrap();
    assert!(q.to_string().contains(" with ["), "{q}");
}

#[test]
fn dce_drops_the_unused_results_of_a_branch() {
    let t = after_dce(
        "entry main (x: f64) (c: bool) =
           let (a, _b) = if c then (x + 1, f64.sin x) else (x, f64.cos x)
           in a",
    );
    assert!(
        t.contains("Add(") && !t.contains("Sin(") && !t.contains("Cos("),
        "{t}"
    );
}

#[test]
fn copies_are_elided_only_where_the_original_is_owned_and_dead() {
    let p = lower(
        "entry owned (xs: *[]i32) = xs with [0] = 1
         entry read_later (xs: []i32) = (copy xs with [0] = 1, xs)
         entry in_loop (xs: *[]i32) (n: i64) = loop ys = xs for i < n do ys with [i] = 1
         entry in_map (rows: [][]i32) = map (\\r -> copy r with [0] = 1) rows
         entry in_branch (xs: *[]i32) (c: bool) = if c then xs with [0] = 1 else xs
         entry branch_then_read (xs: []i32) (c: bool) =
           (if c then copy xs with [0] = 1 else copy xs, xs)
         entry branch_in_loop (xs: *[]i32) (n: i64) =
           loop ys = xs for i < n do if i % 2 == 0 then ys with [i] = 1 else ys
         entry outer_in_loop_branch (xs: []i32) (n: i64) =
           loop acc = 0 for i < n do
             if i > 0 then acc + (copy xs with [0] = 1)[i % 2] else acc",
    );
    let q = runic_opt::elide_copies(runic_opt::simplify(p));
    runic_ir::verify(&q).unwrap();
    let copies = |name: &str| fun_text(&q, name).matches("copy(").count();
    // A function's and a loop's parameters belong to their body.
    assert_eq!(copies("owned"), 0, "{q}");
    assert_eq!(copies("in_loop"), 0, "{q}");
    // Read after the update; a row of a map's input; bound outside the branch.
    assert_eq!(copies("read_later"), 1, "{q}");
    assert_eq!(copies("in_map"), 1, "{q}");
    // A branch runs at most once: it may consume what its enclosing body owns, when
    // nothing after the branch reads it.
    assert_eq!(copies("in_branch"), 0, "{q}");
    assert_eq!(copies("branch_in_loop"), 0, "{q}");
    assert_eq!(copies("branch_then_read"), 1, "{q}");
    // A loop body runs many times: it owns only its parameters.
    assert_eq!(copies("outer_in_loop_branch"), 1, "{q}");
}

#[test]
fn cse_compares_constants_by_their_bits() {
    // `0.0` and `-0.0` are equal numbers but give different products (of -x, or of
    // infinities); two NaN constants are the same constant.
    let p = lower("entry main (x: f64) = (x * 0.0, x * -0.0, x * 0.0, f64.nan + x, f64.nan + x)");
    let q = runic_opt::simplify(p);
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    assert_eq!(t.matches("Mul(").count(), 2, "{t}");
    assert_eq!(t.matches("Add(").count(), 1, "{t}");
}

#[test]
fn an_elementwise_sum_with_zeros_is_the_other_operand() {
    // Row 1 of `z` is zero (only row 0 was written): adding it to `ys` is `ys`; row 0 is
    // not zero and its sum stays.
    let p = lower(
        "entry main [n] (xs: [n]f64) (ys: [n]f64) =
           let z = replicate 2 (replicate n 0f64) with [0] = xs
           let a = map2 (+) z[1] ys
           let b = map2 (+) ys z[0]
           let c = map2 (map2 (+)) (replicate 3 (replicate n 0)) [xs, ys, xs]
           in (a, b, c)",
    );
    let q = runic_opt::copy_prop(p.clone());
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    assert_eq!(t.matches("Add(").count(), 1, "{t}");
    for prog in [&p, &q] {
        let arr = |v: &[f64]| {
            runic_data::Value::Array(
                runic_data::Array::new(vec![v.len()], runic_data::Buffer::F64(v.to_vec().into()))
                    .unwrap(),
            )
        };
        let got = runic_exec::run_entry(prog, "main", vec![arr(&[1.0, 2.0]), arr(&[10.0, 20.0])])
            .expect("runs");
        assert_eq!(got[0], arr(&[10.0, 20.0]));
        assert_eq!(got[1], arr(&[11.0, 22.0]));
        assert_eq!(
            got[2].to_string(),
            "[[1.0f64, 2.0f64],\n [10.0f64, 20.0f64],\n [1.0f64, 2.0f64]]"
        );
    }
}

/// `reuse` (part of split-contractions): a map equal to an earlier one up to the names it
/// binds (here after its unused input is dropped) becomes a copy of it; a map with a
/// different body stays.
#[test]
fn equal_maps_are_computed_once() {
    let p = lower(
        "entry main (xs: []f64) (ys: []f64) =
           let a = map (\\x -> f64.sin x * 2) xs
           let b = map2 (\\x _ -> f64.sin x * 2) xs ys
           let c = map (\\x -> f64.sin x * 3) xs
           in (a, b, c)",
    );
    let q = runic_opt::split_contractions(runic_opt::simplify(p));
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    assert_eq!(t.matches("Sin(").count(), 2, "{t}");
    assert_eq!(t.matches(" = map(").count(), 2, "{t}");
}

#[test]
fn dce_removes_unused_maps_of_rows_of_fixed_size_but_keeps_rows_of_computed_size() {
    // `map (\x -> replicate 3 x)` has rows of one shape and cannot fail: it goes. The rows of
    // `map (\x -> iota x)` have a size each computes (different rows would be an error,
    // and so is a negative size): it stays.
    let p = lower(
        "entry main (xs: []i64) =
           let _a = map (\\x -> replicate 3 x) xs
           let _b = map (\\x -> iota x) xs
           in xs",
    );
    let q = runic_opt::dce(p);
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    assert!(!t.contains("replicate("), "{t}");
    assert!(t.contains("range_i64("), "{t}");
}

#[test]
fn a_repeated_check_goes_only_in_drop_repeated_checks() {
    // Every row of `m` is checked against `k` inside the map; the same check of the same
    // row repeated in the inner lambda cannot fail once the outer one passed.
    let p = lower(
        "entry main [n] [k] (m: [][n]i32) (v: [k]i32) =
           map (\\r -> let r2 = r :> [k]i32
                       in map (\\x -> x + (r :> [k]i32)[0] + v[0]) r2) m",
    );
    let checks = |q: &runic_ir::Prog| q.to_string().matches("shape_check(").count();
    let cse = runic_opt::cse(p.clone());
    let dropped = runic_opt::drop_repeated_checks(p.clone());
    runic_ir::verify(&dropped).unwrap();
    assert!(checks(&cse) >= 2, "{cse}");
    assert_eq!(checks(&dropped), checks(&cse) - 1, "{dropped}");
    // Both give the same result: [[1, 2], [3, 4]] and v = [0, 5] → [[2, 3], [6, 7]].
    let arg = runic_data::read_all(b"[[1, 2], [3, 4]] [0, 5]", "t", &[]).unwrap();
    let run = |q: &runic_ir::Prog| runic_exec::run_entry(q, "main", arg.clone()).unwrap();
    assert_eq!(run(&cse), run(&dropped));
}

#[test]
fn checks_proven_by_the_entry_points_size_assertions_go() {
    // `dot`'s parameters check each row of `v` (of `v`'s own column size) against the
    // column size of `w`, inside the map; the coercion of `v` at the top level checks the
    // two sizes equal once, so those checks cannot fail. (Sizes that the entry point's
    // type names twice are one variable from the start and need no such check.) A check of
    // something the top-level checks do not cover stays.
    let p = lower(
        "def dot [n] (a: [n]f32) (b: [n]f32) = f32.sum (map2 (*) a b)
         entry main [m] [d] [e] (w: [m][d]f32) (xs: [d]f32) (v0: [m][e]f32) (k: i64) =
           let v = v0 :> [m][d]f32
           in map2 (\\wr vr -> dot wr xs + dot vr xs + f32.i64 (length (iota k :> [d]i64))) w v",
    );
    let before = runic_opt::simplify(p);
    let after = runic_opt::checks::drop_proven_checks(before.clone());
    runic_ir::verify(&after).unwrap_or_else(|e| panic!("{e:?}\n{after}"));
    let row_checks = |q: &runic_ir::Prog| q.to_string().matches("shape_check(x_").count();
    assert!(row_checks(&before) > 0, "{before}");
    assert_eq!(row_checks(&after), 0, "{after}");
    assert!(after.to_string().contains("shape_check(iota"), "{after}");
    let run = |q: &runic_ir::Prog, input: &[u8]| {
        let arg = runic_data::read_all(input, "t", &[]).unwrap();
        format!("{:?}", runic_exec::run_entry(q, "main", arg))
    };
    // Rows: 3 + 1 + 2 and 7 + 1 + 2.
    let ok = b"[[1f32, 2], [3, 4]] [1f32, 1] [[1f32, 0], [0, 1]] 2i64";
    assert_eq!(run(&before, ok), run(&after, ok));
    assert!(run(&after, ok).contains("6.0") && run(&after, ok).contains("10.0"));
    // The check that stays still fails.
    let bad = b"[[1f32, 2], [3, 4]] [1f32, 1] [[1f32, 0], [0, 1]] 3i64";
    assert_eq!(run(&before, bad), run(&after, bad));
    assert!(run(&after, bad).contains("Err"));
}

/// Sparse adjoints: a map strict in a one-hot array runs at its one index, under that
/// array's condition. Another one-hot array at the same index but under another condition
/// may be all zero there: its element is read from memory, not taken as the value it was
/// written with (which would give `2·(5 + 1)` where `c2` is false).
#[test]
fn sparse_adjoints_read_a_one_hot_array_of_another_condition_from_memory() {
    let src = "entry main (k: i64) (i: i64) (c1: bool) (c2: bool) (a: f32) (v: f32) : []f32 =
      let r1 = if c1 then (replicate k 0f32 with [i] = a) else replicate k 0f32
      let r2 = if c2 then (replicate k 0f32 with [i] = v) else replicate k 0f32
      in map2 (\\x y -> x * (y + 1)) r1 r2";
    // Zeros updated in place, as reverse mode makes one-hot arrays.
    let before = runic_opt::elide_copies(lower(src));
    assert!(!before.to_string().contains("copy("), "{before}");
    let after = runic_opt::sparse_adjoints(before.clone());
    runic_ir::verify(&after).unwrap();
    assert!(
        !after.to_string().contains("map("),
        "the map runs at the index:\n{after}"
    );
    let scalar = |p: runic_prim::Prim| runic_data::Value::Scalar(p);
    use runic_prim::Prim::{Bool, F32, I64};
    for (c1, c2, want) in [
        (true, false, [0f32, 2.0, 0.0]),
        (true, true, [0f32, 12.0, 0.0]),
        (false, true, [0f32, 0.0, 0.0]),
    ] {
        let args = || {
            [I64(3), I64(1), Bool(c1), Bool(c2), F32(2.0), F32(5.0)]
                .into_iter()
                .map(scalar)
                .collect::<Vec<_>>()
        };
        let want =
            runic_data::Value::Array(runic_data::Array::from_f32(vec![3], want.to_vec()).unwrap());
        for p in [&before, &after] {
            let got = runic_exec::run_entry(p, "main", args()).expect("runs");
            assert_eq!(got, vec![want.clone()], "c1 = {c1}, c2 = {c2}\n{p}");
        }
    }
}

/// `loops-as-kernels`: which loops become the one element of a map (and whether behind a
/// run-time check of their SOACs' widths), and which stay loops. The rewritten program
/// verifies.
#[test]
fn sequential_for_loops_become_kernels() {
    let p = lower(
        "entry scalar (x: f64) (n: i64) = loop y = x for _i < n do y * 0.5 + 1
         entry small_state (x: f64) (y: f64) (n: i64) =
           loop s = [x, y] for _i < n do map (\\i -> s[i] * 0.5 + s[1 - i]) (iota 2)
         entry run_time_width [m] (xs: [m]f64) (n: i64) =
           loop a = copy xs for i < n do map (\\v -> v + f64.i64 i) a
         entry wide (n: i64) = loop a = replicate 100 0f64 for i < n do map (+ 1) a
         entry a_while (x: f64) = loop y = x while y < 10 do y * 2
         entry counter_width (n: i64) = loop s = 0f64 for i < n do s + f64.sum (map f64.i64 (iota i))
         entry updates [m] (xs: [m]f64) = loop a = copy xs for i in 1..<m do a with [i] = a[i - 1]",
    );
    let q = runic_opt::loops_as_kernels(runic_opt::simplify(p));
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    let entry = |name: &str| -> String {
        let at = t.find(&format!("entry \"{name}\"")).unwrap();
        let rest = &t[at + 1..];
        rest[..rest.find("\nentry \"").unwrap_or(rest.len())].to_string()
    };
    // Loops over scalars and constant-sized states, and in-place updates: one map over
    // `iota 1` holding the loop, its result read back, no run-time check.
    for name in ["scalar", "small_state", "updates"] {
        let e = entry(name);
        assert!(e.contains("= map(1i64, \\{unit_"), "{e}");
        assert!(e.contains("= loop {"), "{e}");
        assert!(e.contains("[0i64]"), "{e}");
        assert!(!e.contains(" = if "), "{e}");
    }
    // A map as wide as the array: the kernel where the width is at most 64, the loop as
    // written otherwise.
    let e = entry("run_time_width");
    assert!(e.contains("Le(d_") && e.contains(", 64i64)"), "{e}");
    assert!(e.contains(" = if "), "{e}");
    assert_eq!(e.matches("= loop {").count(), 2, "{e}");
    // A map over 100 elements, a while loop, and a map as wide as the loop's counter (not
    // known before the loop): unchanged.
    for name in ["wide", "a_while", "counter_width"] {
        let e = entry(name);
        assert!(!e.contains("unit_"), "{e}");
        assert_eq!(e.matches("= loop {").count(), 1, "{e}");
    }
}

/// split-contractions: a matrix product whose weights are one matrix of a stack read
/// inside the map over rows (`ws[g]`, an LSTM gate's) keeps that read with the product,
/// which becomes a map of its own, and nothing stores the matrix once per row (it was a
/// copy of the matrix per row, and the nest no longer a GEMM).
#[test]
fn a_slice_of_an_outside_array_goes_with_its_product_and_is_not_stored_per_row() {
    let p = lower(
        "def dot [n] (a: [n]f32) (b: [n]f32) : f32 = f32.sum (map2 (*) a b)
         entry main [m][k][p] (a: [m][k]f32) (ws: [][p][k]f32) (g: i64) : [m][p]f32 =
           map (\\r -> map (\\c -> dot r c) ws[g]) a",
    );
    let q =
        runic_opt::split_contractions(runic_opt::fuse(runic_opt::hoist(runic_opt::simplify(p))));
    // The map the product left is empty (its copy of the read went): DCE drops it.
    let q = runic_opt::dce(q);
    runic_ir::verify(&q).unwrap();
    let t = q.to_string();
    assert!(!t.contains("stored"), "{t}");
    // One map over the rows remains, the product's, and the slice is read once in it.
    let top_maps = t
        .lines()
        .filter(|l| l.starts_with("  let {") && l.contains(" = map("))
        .count();
    assert_eq!(top_maps, 1, "{t}");
    assert_eq!(t.matches("= ws_").count(), 1, "{t}");
    assert!(t.contains("hoisted"), "{t}");
}
