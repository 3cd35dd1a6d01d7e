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
