//! Traced functions against the same functions written in the language and run through the
//! front end: values, gradients (vjp), tangents (jvp), finite differences, the executor's
//! decisions (GEMM, native kernels), and errors.

mod common;

use common::*;
use runic_data::Value;
use runic_trace::PrimType::{F32, F64};
use runic_trace::*;

const SCALARS: &str = "
def f (x: f64) (y: f64) : f64 = x * y + f64.sin x / y - f64.exp (y * 0.5) + f64.max x y
entry value (x: f64) (y: f64) : f64 = f x y
entry df (x: f64) (y: f64) : (f64, f64) = vjp (\\(a, b) -> f a b) (x, y) 1
entry tf (x: f64) (y: f64) (dx: f64) (dy: f64) : (f64, f64) = jvp2 (\\(a, b) -> f a b) (x, y) (dx, dy)
";

fn f_scalars(a: &[Tracer]) -> Tracer {
    let (x, y) = (a[0], a[1]);
    x * y + x.sin() / y - (y * 0.5).exp() + max(x, y)
}

fn two_scalars() -> Vec<ParamSpec> {
    vec![ParamSpec::scalar(F64), ParamSpec::scalar(F64)]
}

#[test]
fn scalar_function_value_gradient_and_tangent_match_the_language() {
    let lang = language(SCALARS);
    let args = vec![f64v(0.7), f64v(1.3)];
    let v = trace(&two_scalars(), |a| vec![f_scalars(a)]).unwrap();
    let got = run(&v, &args);
    let want = run_lang(&lang, "value", &args);
    assert_eq!(got, want, "the same IR gives bit-identical values");
    // By hand: 0.7*1.3 + sin 0.7 / 1.3 - exp 0.65 + 1.3.
    let by_hand = 0.7 * 1.3 + 0.7f64.sin() / 1.3 - 0.65f64.exp() + 1.3;
    assert!((floats(&got[0])[0] - by_hand).abs() < 1e-12);

    let g = grad(&two_scalars(), &[0, 1], f_scalars).unwrap();
    let got = run(&g, &args);
    let want = run_lang(&lang, "df", &args);
    assert_close(
        &Value::Tuple(got.clone()),
        &Value::Tuple(want),
        1e-12,
        "gradient",
    );
    // d/dx = y + cos x / y; d/dy = x - sin x / y² - exp(y/2)/2 + 1 (y > x).
    let dx = 1.3 + 0.7f64.cos() / 1.3;
    let dy = 0.7 - 0.7f64.sin() / (1.3 * 1.3) - 0.5 * 0.65f64.exp() + 1.0;
    assert_close(
        &Value::Tuple(got),
        &Value::Tuple(vec![f64v(dx), f64v(dy)]),
        1e-12,
        "gradient by hand",
    );

    let t = jvp(&two_scalars(), &[0, 1], |a| vec![f_scalars(a)]).unwrap();
    let mut targs = args.clone();
    targs.extend([f64v(0.25), f64v(-2.0)]);
    let got = run(&t, &targs);
    let want = run_lang(&lang, "tf", &targs);
    assert_close(
        &Value::Tuple(got.clone()),
        &Value::Tuple(want),
        1e-12,
        "jvp",
    );
    assert!((floats(&got[1])[0] - (0.25 * dx - 2.0 * dy)).abs() < 1e-12);
}

const ARRAYS: &str = "
def g [n] (xs: [n]f64) (ys: [n]f64) : f64 =
  let s = scan (+) 0 (map2 (*) xs ys)
  let m = reduce (\\a b -> a * b) 1 (map (\\x -> 1 + x * x) xs)
  let t = f64.sum (map (\\i -> f64.i64 i * xs[i]) (iota n))
  in f64.sum (map f64.tanh s) + m + t + f64.maximum ys + f64.sqrt (f64.sum (map (\\y -> y * y) ys))
entry value [n] (xs: [n]f64) (ys: [n]f64) : f64 = g xs ys
entry dg [n] (xs: [n]f64) (ys: [n]f64) : ([n]f64, [n]f64) = vjp (\\(a, b) -> g a b) (xs, ys) 1
";

fn g_arrays(a: &[Tracer]) -> Tracer {
    let (xs, ys) = (a[0], a[1]);
    let s = map2(xs, ys, |x, y| x * y).scan(0.0, |p, q| p + q);
    let m = xs.map(|x| 1.0 + x * x).reduce(1.0, |p, q| p * q);
    let t = iota(xs.len()).map(|i| i.to(F64) * xs.at(i)).sum();
    s.map(|v| v.tanh()).sum() + m + t + ys.maximum() + ys.map(|y| y * y).sum().sqrt()
}

fn two_vectors() -> Vec<ParamSpec> {
    vec![ParamSpec::array(F64, &["n"]), ParamSpec::array(F64, &["n"])]
}

#[test]
fn array_function_value_and_gradient_match_the_language_and_finite_differences() {
    let n = 9;
    let (xs, ys) = (noise(n, 11), noise(n, 12));
    let args = vec![f64s(&[n], xs.clone()), f64s(&[n], ys.clone())];
    let lang = language(ARRAYS);
    let v = trace(&two_vectors(), |a| vec![g_arrays(a)]).unwrap();
    let value = run(&v, &args);
    assert_eq!(value, run_lang(&lang, "value", &args));

    let g = grad(&two_vectors(), &[0, 1], g_arrays).unwrap();
    let got = run(&g, &args);
    let want = run_lang(&lang, "dg", &args);
    assert_close(
        &Value::Tuple(got.clone()),
        &Value::Tuple(want),
        1e-12,
        "gradient",
    );

    // Central differences of the traced function itself.
    let exec = executor(&v);
    let at = |xs: &[f64], ys: &[f64]| {
        let a = vec![f64s(&[n], xs.to_vec()), f64s(&[n], ys.to_vec())];
        floats(&exec.run_entry("main", a).unwrap()[0])[0]
    };
    let h = 1e-6;
    let grads = floats(&Value::Tuple(got));
    for k in 0..2 * n {
        let (mut xp, mut yp, mut xm, mut ym) = (xs.clone(), ys.clone(), xs.clone(), ys.clone());
        if k < n {
            xp[k] += h;
            xm[k] -= h;
        } else {
            yp[k - n] += h;
            ym[k - n] -= h;
        }
        let fd = (at(&xp, &yp) - at(&xm, &ym)) / (2.0 * h);
        assert!(
            (fd - grads[k]).abs() < 1e-5 * fd.abs().max(1.0),
            "component {k}: finite differences {fd}, gradient {}",
            grads[k]
        );
    }
}

const MATRICES: &str = "
def dot [n] (a: [n]f32) (b: [n]f32) : f32 = f32.sum (map2 (*) a b)
def abt [n][m][p] (a: [n][m]f32) (b: [p][m]f32) : [n][p]f32 = map (\\row -> map (\\col -> dot row col) b) a
def loss [n][m][p] (a: [n][m]f32) (b: [p][m]f32) : f32 = f32.sum (map (\\r -> f32.sum (map (\\x -> x * x) r)) (abt a b))
entry prod [n][m][p] (a: [n][m]f32) (b: [p][m]f32) : [n][p]f32 = abt a b
entry dloss [n][m][p] (a: [n][m]f32) (b: [p][m]f32) : ([n][m]f32, [p][m]f32) = vjp (\\(a, b) -> loss a b) (a, b) 1
";

fn abt(a: Tracer, b: Tracer) -> Tracer {
    a.map(|row| b.map(|col| dot(row, col)))
}

fn matrices() -> Vec<ParamSpec> {
    vec![
        ParamSpec::array(F32, &["n", "m"]),
        ParamSpec::array(F32, &["p", "m"]),
    ]
}

/// The executor's decision for every SOAC of the entry point, in order.
fn decisions(exec: &runic_exec::Executor, entry: &str) -> Vec<String> {
    exec.explain()
        .into_iter()
        .filter(|r| r.entry == entry)
        .map(|r| format!("{}{}: {}", "  ".repeat(r.depth), r.kind, r.how))
        .collect()
}

#[test]
fn nested_maps_trace_to_the_front_ends_nest_and_run_as_gemm() {
    let (n, m, p) = (6, 5, 4);
    let args = vec![
        f32s(&[n, m], noise(n * m, 1).iter().map(|&x| x as f32).collect()),
        f32s(&[p, m], noise(p * m, 2).iter().map(|&x| x as f32).collect()),
    ];
    let lang = language(MATRICES);
    let v = trace(&matrices(), |a| vec![abt(a[0], a[1])]).unwrap();
    let exec = executor(&v);
    assert_eq!(
        exec.run_entry("main", args.clone()).unwrap(),
        run_lang(&lang, "prod", &args)
    );
    let ours = decisions(&exec, "main");
    assert_eq!(ours, decisions(&lang, "prod"));
    assert!(ours.iter().any(|d| d.contains("GEMM")), "{ours:?}");

    let g = grad(&matrices(), &[0, 1], |a| {
        abt(a[0], a[1]).map(|r| r.map(|x| x * x).sum()).sum()
    })
    .unwrap();
    let gexec = executor(&g);
    let got = gexec.run_entry("main", args.clone()).unwrap();
    let want = run_lang(&lang, "dloss", &args);
    assert_close(&Value::Tuple(got), &Value::Tuple(want), 1e-6, "gradient");
    assert_eq!(decisions(&gexec, "main"), decisions(&lang, "dloss"));
}

#[test]
fn vjp_takes_a_cotangent_per_result_and_zip_maps_rows_together() {
    // f (xs, ys, zs) = (xs * ys + zs, Σ xs): two results, two cotangents.
    let specs = vec![
        ParamSpec::array(F64, &["n"]),
        ParamSpec::array(F64, &["n"]),
        ParamSpec::array(F64, &["n"]),
    ];
    let t = vjp(&specs, &[0, 2], |a| {
        let r = zip(&[a[0], a[1], a[2]]).map(|x| x[0] * x[1] + x[2]);
        vec![r, a[0].sum()]
    })
    .unwrap();
    assert_eq!(t.params.len(), 5);
    assert_eq!(t.params[3], ParamSpec::array(F64, &["n"]));
    assert_eq!(t.params[4], ParamSpec::scalar(F64));
    let args = vec![
        f64s(&[3], vec![1.0, 2.0, 3.0]),
        f64s(&[3], vec![4.0, 5.0, 6.0]),
        f64s(&[3], vec![0.5, 0.5, 0.5]),
        f64s(&[3], vec![1.0, 10.0, 100.0]),
        f64v(2.0),
    ];
    let out = run(&t, &args);
    assert_eq!(floats(&out[0]), vec![4.5, 10.5, 18.5]);
    assert_eq!(floats(&out[1]), vec![6.0]);
    // x̄ = ȳ·ys + s̄; z̄ = ȳ.
    assert_eq!(floats(&out[2]), vec![6.0, 52.0, 602.0]);
    assert_eq!(floats(&out[3]), vec![1.0, 10.0, 100.0]);
}

#[test]
fn sums_over_rows_replicate_select_and_transpose() {
    let specs = vec![ParamSpec::array(F64, &["n", "m"])];
    let t = trace(&specs, |a| {
        let x = a[0];
        let cols = x.sum(); // the sum of the rows: a vector of m
        let clipped = x.map(|r| r.map(|e| select(e.gt(0.0), e, 0.0)));
        let ones = replicate(x.size(1), constant(F64, 1.0));
        vec![cols, clipped.transpose(), dot(cols, ones) * 2.0]
    })
    .unwrap();
    let out = run(&t, &[f64s(&[2, 3], vec![1.0, -2.0, 3.0, 4.0, 5.0, -6.0])]);
    assert_eq!(floats(&out[0]), vec![5.0, 3.0, -3.0]);
    assert_eq!(out[1].shape(), Some(&[3usize, 2][..]));
    assert_eq!(floats(&out[1]), vec![1.0, 4.0, 0.0, 5.0, 3.0, 0.0]);
    assert_eq!(floats(&out[2]), vec![10.0]);
}

#[test]
fn the_mlp_gradient_equals_the_language_versions() {
    let (bs, i, h, c) = (16, 40, 24, 10);
    let args = mlp_args(bs, i, h, c);
    let lang = language(&mlp_source());
    let loss = trace(&mlp_params(), |a| vec![mlp_loss(a)]).unwrap();
    let lexec = executor(&loss);
    let value = lexec.run_entry("main", args.clone()).unwrap();
    assert_eq!(value, run_lang(&lang, "mlp_loss", &args));
    let l = floats(&value[0])[0];
    assert!(
        l > 1.5 && l < 4.0,
        "a loss near ln 10 at initialisation: {l}"
    );

    let g = grad(&mlp_params(), &[0, 1, 2, 3], mlp_loss).unwrap();
    let gexec = executor(&g);
    let got = gexec.run_entry("main", args.clone()).unwrap();
    let want = run_lang(&lang, "mlp_grad", &args);
    assert_close(
        &Value::Tuple(got),
        &Value::Tuple(want),
        1e-6,
        "MLP gradient",
    );
    assert_eq!(decisions(&gexec, "main"), decisions(&lang, "mlp_grad"));
    // The loss: the same matrix products; without the front end's shape checks, the map of
    // per-example losses also fuses into their sum.
    let gemms = |d: Vec<String>| d.iter().filter(|l| l.contains("GEMM")).count();
    assert_eq!(gemms(decisions(&lexec, "main")), 2);
    assert_eq!(gemms(decisions(&lang, "mlp_loss")), 2);
}

#[test]
fn bad_traces_are_errors_not_panics() {
    let mixed = vec![ParamSpec::scalar(F32), ParamSpec::scalar(F64)];
    let e = trace(&mixed, |a| vec![a[0] + a[1]]).unwrap_err();
    assert!(e.message.contains("f32 and f64"), "{}", e.message);

    let v = vec![ParamSpec::array(F64, &["n"])];
    let e = trace(&v, |a| {
        let mut leaked = None;
        let ys = a[0].map(|x| {
            leaked = Some(x);
            x * 2.0
        });
        vec![ys, leaked.expect("set") + 1.0]
    })
    .unwrap_err();
    assert!(e.message.contains("outside the closure"), "{}", e.message);

    let e = grad(&v, &[0], |a| a[0] * 2.0).unwrap_err();
    assert!(e.message.contains("not one float scalar"), "{}", e.message);

    let e = grad(
        &[ParamSpec::scalar(runic_trace::PrimType::I64)],
        &[0],
        |a| a[0].to(F64),
    )
    .unwrap_err();
    assert!(e.message.contains("not a float"), "{}", e.message);

    let e = trace(&v, |a| {
        let inner = trace(&v, |b| vec![b[0]]);
        assert!(inner.is_err());
        vec![a[0]]
    });
    assert!(e.is_ok(), "the outer trace is unaffected");
    let e = trace(&v, |_| vec![]).unwrap_err();
    assert!(e.message.contains("no values"), "{}", e.message);
}

#[test]
fn sizes_are_checked_at_run_time() {
    // Same size name: checked on entry, like the language's size parameters.
    let t = trace(&two_vectors(), |a| vec![dot(a[0], a[1])]).unwrap();
    let exec = executor(&t);
    let e = exec
        .run_entry(
            "main",
            vec![f64s(&[2], vec![1.0, 2.0]), f64s(&[3], vec![1.0; 3])],
        )
        .unwrap_err();
    assert_eq!(e.message, "entry point arguments have invalid sizes.");
    // Different size names: a map over both checks them where it needs them.
    let specs = vec![ParamSpec::array(F64, &["n"]), ParamSpec::array(F64, &["m"])];
    let t = trace(&specs, |a| vec![dot(a[0], a[1])]).unwrap();
    let exec = executor(&t);
    let ok = exec
        .run_entry(
            "main",
            vec![f64s(&[2], vec![1.0, 2.0]), f64s(&[2], vec![3.0, 4.0])],
        )
        .unwrap();
    assert_eq!(floats(&ok[0]), vec![11.0]);
    let e = exec
        .run_entry(
            "main",
            vec![f64s(&[2], vec![1.0, 2.0]), f64s(&[3], vec![1.0; 3])],
        )
        .unwrap_err();
    assert!(e.message.contains("cannot match shape"), "{}", e.message);
}
