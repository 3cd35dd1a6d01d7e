//! Calls: both backends agree, threads share a program, gradients, and programs given as IR.

use ndarray::{array, Array1, Ix1};
use runic::{Backend, Program};

const PROGRAMS: &str = "
def dot [n] (a: [n]f64) (b: [n]f64): f64 = f64.sum (map2 (*) a b)
entry dot_e [n] (a: [n]f64) (b: [n]f64): f64 = dot a b
entry matvec [n][m] (w: [n][m]f64) (x: [m]f64): [n]f64 = map (\\r -> dot r x) w
entry prefix (xs: []i32): []i32 = scan (+) 0 xs
entry hist (k: i64) (is: []i64): []i32 = reduce_by_index (replicate k 0) (+) 0 is (map (const 1) is)
entry grad_norm [n] (x: [n]f64): [n]f64 = vjp (\\x -> dot x x) x 1
";

#[test]
fn both_backends_agree() {
    let c = Program::from_source_with("p.fut", PROGRAMS, Backend::Compiled).unwrap();
    let i = Program::from_source_with("p.fut", PROGRAMS, Backend::Interpreter).unwrap();
    assert_eq!(c.backend(), Backend::Compiled);
    assert_eq!(i.backend(), Backend::Interpreter);
    let w = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let x = array![0.5, -1.0, 2.0];
    let cases: Vec<(&str, Vec<runic::Value>)> = vec![
        ("dot_e", runic::IntoArgs::into_args((&x, &x))),
        ("matvec", runic::IntoArgs::into_args((&w, &x))),
        (
            "prefix",
            runic::IntoArgs::into_args((array![3i32, -1, 4, 1, -5],)),
        ),
        (
            "hist",
            runic::IntoArgs::into_args((4i64, array![0i64, 3, 3, 1, 3])),
        ),
        ("grad_norm", runic::IntoArgs::into_args((&x,))),
    ];
    for (entry, args) in cases {
        let a = c.entry(entry).unwrap().call_values(args.clone()).unwrap();
        let b = i.entry(entry).unwrap().call_values(args).unwrap();
        assert_eq!(a, b, "{entry}");
    }
    let mut out = c.call("matvec", (&w, &x)).unwrap();
    assert_eq!(out.take::<Array1<f64>>(0).unwrap(), array![4.5, 9.0]);
    let g = c
        .call("grad_norm", (&x,))
        .unwrap()
        .into_array::<f64, Ix1>(0);
    assert_eq!(g.unwrap(), array![1.0, -2.0, 4.0]);
    let h = c.call("hist", (4i64, array![0i64, 3, 3, 1, 3])).unwrap();
    assert_eq!(h.get::<Array1<i32>>(0).unwrap(), array![1, 1, 0, 3]);
}

#[test]
fn four_threads_call_one_program_at_once() {
    let p = Program::from_source("p.fut", PROGRAMS).unwrap();
    let dot = p.entry("dot_e").unwrap();
    std::thread::scope(|s| {
        for t in 0..4 {
            let dot = dot.clone();
            s.spawn(move || {
                for k in 0..50 {
                    let n = 100 + 10 * t + k;
                    let a = Array1::from_shape_fn(n, |i| i as f64);
                    let b = Array1::from_elem(n, (t + 1) as f64);
                    let got = dot.call((&a, &b)).unwrap().get::<f64>(0).unwrap();
                    let want = (t + 1) as f64 * (n * (n - 1) / 2) as f64;
                    assert_eq!(got, want, "thread {t} call {k}");
                }
            });
        }
    });
}

#[test]
fn signatures_name_parameters_and_results() {
    let p = Program::from_source("p.fut", PROGRAMS).unwrap();
    let names: Vec<&str> = p.entries().iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["dot_e", "matvec", "prefix", "hist", "grad_norm"]);
    let sig = p.entry("matvec").unwrap().signature().clone();
    let shown: Vec<String> = sig
        .params
        .iter()
        .map(|q| format!("{}: {}", q.name.as_deref().unwrap_or("_"), q.ty))
        .collect();
    assert_eq!(shown, ["w: [n][m]f64", "x: [m]f64"]);
    assert_eq!(sig.results, ["[n]f64"]);
    assert_eq!(p.warnings(), "");
}

#[test]
fn a_program_given_as_ir_is_differentiated_and_optimised() {
    // IR straight from lowering still has its `vjp`: `from_ir` must run AD before the
    // optimisation passes and the executor.
    let loaded = runic::load::load_text("p.fut", PROGRAMS).unwrap();
    let ir = runic::pipeline::compile(&loaded, Some("lower"), |_, _, _| {}).unwrap();
    assert!(
        ir.to_string().contains("vjp"),
        "lowered IR keeps its AD constructs"
    );
    let p = Program::from_ir(ir).unwrap();
    let x = array![0.5, -1.0, 2.0];
    let g = p
        .call("grad_norm", (&x,))
        .unwrap()
        .into_array::<f64, Ix1>(0);
    assert_eq!(g.unwrap(), array![1.0, -2.0, 4.0]);
    // Element types, ranks and sizes are checked before the call: the entry's two
    // parameters share one size variable in the IR (named `v1` here: IR has no source
    // names), so the second argument's length is checked against the first's.
    let e = p.call("dot_e", (&x, array![1.0f32])).unwrap_err();
    assert!(
        matches!(e, runic::Error::Argument { index: 1, .. }),
        "{e:?}"
    );
    let e = p.call("dot_e", (&x, array![1.0])).unwrap_err();
    assert!(
        matches!(&e, runic::Error::Argument { index: 1, message, .. }
                 if message.contains("is 1, but size v1 is 3")),
        "{e:?}"
    );
    let h = p.call("hist", (2i64, array![0i64, 5])).unwrap();
    assert_eq!(h.get::<Array1<i32>>(0).unwrap(), array![1, 0]);
}

#[test]
fn a_panic_inside_runic_is_an_internal_error() {
    let r = runic::engine::quietly(|| -> i32 { panic!("broken invariant") });
    assert_eq!(r, Err("broken invariant".to_string()));
    let e: runic::Error = runic::engine::CallError::Internal("broken invariant".into()).into();
    assert_eq!(
        e.to_string(),
        "Error: internal error (a bug in runic): broken invariant"
    );
}
