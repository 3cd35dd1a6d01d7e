//! Test helpers: the ir pipeline for a traced program (AD, the optimisation passes with the
//! IR verified after each, the executor), the same pipeline for a source text through the
//! front end, values, and the MLP of `bench/apps/mlp.fut` written with the tracing API.

#![allow(dead_code)]

use runic_data::{Array, Value};
use runic_ir::Prog;
use runic_trace::{dot, map2, max, PrimType::F32, PrimType::I64, Tracer};
use runic_trace::{ParamSpec, Traced};
use std::sync::Arc;

/// AD and the optimisation passes, the IR verified after each (as `runic dev` does in
/// debug builds).
pub fn optimise(prog: Prog) -> Prog {
    let (mut prog, errors) = runic_ad::eliminate_where_possible(prog);
    assert!(errors.is_empty(), "AD failed: {:?}", errors);
    runic_ir::verify(&prog).unwrap_or_else(|e| panic!("after ad: {e:?}"));
    for (name, pass) in runic_opt::pipeline() {
        prog = pass(prog);
        runic_ir::verify(&prog).unwrap_or_else(|e| panic!("after {name}: {e:?}"));
    }
    prog
}

/// A traced program prepared for calls.
pub fn executor(t: &Traced) -> runic_exec::Executor {
    runic_exec::Executor::new(Arc::new(optimise(t.prog.clone())))
}

/// Calls the traced program's entry point.
pub fn run(t: &Traced, args: &[Value]) -> Vec<Value> {
    executor(t)
        .run_entry(&t.entry, args.to_vec())
        .unwrap_or_else(|e| panic!("{}", e.message))
}

/// A source program through the front end, lowered and optimised like a traced one.
pub fn language(src: &str) -> runic_exec::Executor {
    let mut sources = runic_syntax::SourceMap::new();
    let file = sources.add("t.fut", src.to_string());
    let program = runic_syntax::parse_program(file, src, runic_types::first_user_node_id())
        .unwrap_or_else(|d| panic!("{}", runic_syntax::diag::render_all(&d, &sources)));
    let prelude = sources.add(runic_types::PRELUDE_NAME, runic_types::PRELUDE_SOURCE);
    let checked = runic_types::check_program_with_prelude_file(program, &sources, prelude)
        .unwrap_or_else(|d| panic!("{}", runic_syntax::diag::render_all(&d, &sources)));
    let prog = runic_lower::lower_with_sources(&checked, Some(&sources))
        .unwrap_or_else(|e| panic!("lowering: {}", e.message));
    runic_exec::Executor::new(Arc::new(optimise(prog)))
}

pub fn run_lang(exec: &runic_exec::Executor, entry: &str, args: &[Value]) -> Vec<Value> {
    exec.run_entry(entry, args.to_vec())
        .unwrap_or_else(|e| panic!("{}", e.message))
}

pub fn f32s(shape: &[usize], data: Vec<f32>) -> Value {
    Value::Array(Array::from_f32(shape.to_vec(), data).expect("shape fits"))
}
pub fn f64s(shape: &[usize], data: Vec<f64>) -> Value {
    Value::Array(Array::from_f64(shape.to_vec(), data).expect("shape fits"))
}
pub fn i64s(shape: &[usize], data: Vec<i64>) -> Value {
    Value::Array(Array::from_i64(shape.to_vec(), data).expect("shape fits"))
}
pub fn f64v(x: f64) -> Value {
    Value::Scalar(runic_ir::Prim::F64(x))
}

/// The elements of a value as f64 (a scalar: one element).
pub fn floats(v: &Value) -> Vec<f64> {
    match v {
        Value::Scalar(p) => vec![p.as_float().unwrap_or(f64::NAN)],
        Value::Array(a) => (0..a.data.len())
            .map(|i| a.data.get(i).as_float().unwrap_or(f64::NAN))
            .collect(),
        Value::Tuple(vs) => vs.iter().flat_map(floats).collect(),
        _ => vec![],
    }
}

/// Both values agree to a relative tolerance `tol` (of the larger magnitude, at least 1).
pub fn assert_close(a: &Value, b: &Value, tol: f64, what: &str) {
    let (x, y) = (floats(a), floats(b));
    assert_eq!(x.len(), y.len(), "{what}: element counts");
    for (k, (p, q)) in x.iter().zip(&y).enumerate() {
        let scale = p.abs().max(q.abs()).max(1.0);
        assert!(
            (p - q).abs() <= tol * scale,
            "{what}: element {k}: {p} vs {q}"
        );
    }
}

/// Deterministic pseudo-random numbers in [-1, 1).
pub fn noise(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// The MLP of bench/apps/mlp.fut.

/// The source of bench/apps/mlp.fut.
pub fn mlp_source() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/apps/mlp.fut");
    std::fs::read_to_string(path).expect("bench/apps/mlp.fut")
}

/// `w1 [h][i], b1 [h], w2 [c][h], b2 [c], xs [bs][i], labels [bs]` as in mlp.fut.
pub fn mlp_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::array(F32, &["h", "i"]),
        ParamSpec::array(F32, &["h"]),
        ParamSpec::array(F32, &["c", "h"]),
        ParamSpec::array(F32, &["c"]),
        ParamSpec::array(F32, &["bs", "i"]),
        ParamSpec::array(I64, &["bs"]),
    ]
}

/// Rows of `xs` times the transpose of `w`, plus `b`.
fn linear(w: Tracer, b: Tracer, xs: Tracer) -> Tracer {
    xs.map(|x| map2(w, b, |wr, bv| dot(wr, x) + bv))
}

fn logsumexp(xs: Tracer) -> Tracer {
    let m = xs.maximum();
    m + xs.map(|x| (x - m).exp()).sum().log()
}

/// The loss of mlp.fut, traced: the arguments in the order of [`mlp_params`].
pub fn mlp_loss(a: &[Tracer]) -> Tracer {
    let (w1, b1, w2, b2, xs, labels) = (a[0], a[1], a[2], a[3], a[4], a[5]);
    let hidden = linear(w1, b1, xs).map(|r| r.map(|v| max(0.0, v)));
    let logits = linear(w2, b2, hidden);
    let nll = map2(logits, labels, |z, lab| logsumexp(z) - z.at(lab));
    nll.sum() / xs.len().to(F32)
}

/// Arguments for the MLP: weights scaled like a usual initialisation, inputs in [0, 1).
pub fn mlp_args(bs: usize, i: usize, h: usize, c: usize) -> Vec<Value> {
    let scaled = |n: usize, seed: u64, s: f64| -> Vec<f32> {
        noise(n, seed).into_iter().map(|x| (x * s) as f32).collect()
    };
    let labels: Vec<i64> = noise(bs, 7)
        .into_iter()
        .map(|x| (((x + 1.0) / 2.0) * c as f64) as i64 % c as i64)
        .collect();
    vec![
        f32s(&[h, i], scaled(h * i, 1, (1.0 / i as f64).sqrt())),
        f32s(&[h], scaled(h, 2, 0.1)),
        f32s(&[c, h], scaled(c * h, 3, (1.0 / h as f64).sqrt())),
        f32s(&[c], scaled(c, 4, 0.1)),
        f32s(
            &[bs, i],
            scaled(bs * i, 5, 0.5).iter().map(|x| x + 0.5).collect(),
        ),
        i64s(&[bs], labels),
    ]
}
