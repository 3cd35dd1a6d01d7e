//! Each pass on lowered programs: the result verifies and is simpler in the expected way.

use runic_syntax::SourceMap;

fn lower(text: &str) -> runic_ir::Prog {
    let mut sources = SourceMap::new();
    let file = sources.add("t.fut", text);
    let program = runic_syntax::parse_program(file, text, 0).expect("parses");
    let checked = runic_types::check_program(program, &sources).expect("checks");
    runic_lower::lower_with_sources(&checked, Some(&sources)).expect("lowers")
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
