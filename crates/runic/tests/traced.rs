//! The tracing API through the library: a traced function and gradient compiled by
//! `runic::trace`/`runic::grad`, called like any entry point, against the same function
//! written in the language (values and gradients) and against finite differences.

use ndarray::{arr1, Array1, Array2, Ix0, Ix1};
use runic::trace::{dot, map2, max, ParamSpec, PrimType::F64, PrimType::I64, Tracer};
use runic::Program;

/// A small MLP (one hidden layer, ReLU, softmax cross-entropy), as in bench/apps/mlp.fut.
const MLP: &str = "
def linear [o][i][b] (w: [o][i]f64) (bias: [o]f64) (xs: [b][i]f64): [b][o]f64 =
  map (\\x -> map2 (\\wr bv -> f64.sum (map2 (*) wr x) + bv) w bias) xs
def logsumexp [n] (z: [n]f64): f64 = let m = f64.maximum z in m + f64.log (f64.sum (map (\\v -> f64.exp (v - m)) z))
def loss [h][i][c][b] (w1: [h][i]f64) (b1: [h]f64) (w2: [c][h]f64) (b2: [c]f64) (xs: [b][i]f64) (labels: [b]i64): f64 =
  let hidden = map (map (\\v -> f64.max 0 v)) (linear w1 b1 xs)
  let logits = linear w2 b2 hidden
  in f64.sum (map2 (\\z l -> logsumexp z - z[l]) logits labels) / f64.i64 b
entry grad_loss [h][i][c][b] (w1: [h][i]f64) (b1: [h]f64) (w2: [c][h]f64) (b2: [c]f64) (xs: [b][i]f64) (labels: [b]i64) =
  vjp (\\(w1, b1, w2, b2) -> loss w1 b1 w2 b2 xs labels) (w1, b1, w2, b2) 1
";

fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::array(F64, &["h", "i"]),
        ParamSpec::array(F64, &["h"]),
        ParamSpec::array(F64, &["c", "h"]),
        ParamSpec::array(F64, &["c"]),
        ParamSpec::array(F64, &["b", "i"]),
        ParamSpec::array(I64, &["b"]),
    ]
}

fn linear(w: Tracer, b: Tracer, xs: Tracer) -> Tracer {
    xs.map(|x| map2(w, b, |wr, bv| dot(wr, x) + bv))
}

fn traced_loss(a: &[Tracer]) -> Tracer {
    let (w1, b1, w2, b2, xs, labels) = (a[0], a[1], a[2], a[3], a[4], a[5]);
    let hidden = linear(w1, b1, xs).map(|r| r.map(|v| max(0.0, v)));
    let logits = linear(w2, b2, hidden);
    let nll = map2(logits, labels, |z, l| {
        let m = z.maximum();
        m + z.map(|v| (v - m).exp()).sum().log() - z.at(l)
    });
    nll.sum() / xs.len().to(F64)
}

fn matrix(rows: usize, cols: usize, seed: f64) -> Array2<f64> {
    Array2::from_shape_fn((rows, cols), |(r, c)| {
        ((r * 7 + c * 3) as f64 * seed).sin() * 0.5
    })
}

#[test]
fn the_traced_mlp_gradient_equals_the_language_versions() {
    let (h, i, c, b) = (5, 4, 3, 6);
    let w1 = matrix(h, i, 0.7);
    let b1 = Array1::from_shape_fn(h, |k| k as f64 * 0.1 - 0.2);
    let w2 = matrix(c, h, 1.3);
    let b2 = Array1::from_shape_fn(c, |k| 0.05 * k as f64);
    let xs = matrix(b, i, 0.4);
    let labels = Array1::from_shape_fn(b, |k| (k % c) as i64);
    let args = (&w1, &b1, &w2, &b2, &xs, &labels);

    let language = Program::from_source("mlp.fut", MLP).unwrap();
    let mut want = language.entry("grad_loss").unwrap().call(args).unwrap();
    let traced = runic::grad(&params(), &[0, 1, 2, 3], traced_loss).unwrap();
    let mut got = traced.call(args).unwrap();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * (1.0 + b.abs());
    let (gw1, ww1) = (
        got.take::<Array2<f64>>(0).unwrap(),
        want.take::<Array2<f64>>(0).unwrap(),
    );
    assert!(
        gw1.iter().zip(&ww1).all(|(a, b)| close(*a, *b)),
        "{gw1} vs {ww1}"
    );
    let (gb2, wb2) = (
        got.take::<Array1<f64>>(3).unwrap(),
        want.take::<Array1<f64>>(3).unwrap(),
    );
    assert!(
        gb2.iter().zip(&wb2).all(|(a, b)| close(*a, *b)),
        "{gb2} vs {wb2}"
    );
    // The gradient in b2 of the mean cross-entropy sums to zero over the classes.
    assert!(gb2.sum().abs() < 1e-12, "{gb2}");
}

#[test]
fn a_traced_gradient_matches_finite_differences() {
    // f(x) = Σ tanh(x)·x² + (x·x)
    let f = |a: &[Tracer]| {
        let x = a[0];
        x.map(|v| v.tanh() * v * v).sum() + dot(x, x)
    };
    let value = runic::trace(&[ParamSpec::array(F64, &["n"])], |a| vec![f(a)]).unwrap();
    let grad = runic::grad(&[ParamSpec::array(F64, &["n"])], &[0], f).unwrap();
    let x = arr1(&[0.3, -1.2, 2.0]);
    let g = grad.call((&x,)).unwrap().into_array::<f64, Ix1>(0).unwrap();
    let eps = 1e-6;
    for k in 0..x.len() {
        let at = |d: f64| {
            let mut y = x.clone();
            y[k] += d;
            value
                .call((&y,))
                .unwrap()
                .into_array::<f64, Ix0>(0)
                .unwrap()
                .into_scalar()
        };
        let fd = (at(eps) - at(-eps)) / (2.0 * eps);
        assert!((g[k] - fd).abs() < 1e-6, "component {k}: {} vs {fd}", g[k]);
    }
}

#[test]
fn a_bad_trace_is_an_error_not_a_panic() {
    // Adding an f64 array to an i64 array is a type error inside the trace.
    let r = runic::trace(
        &[ParamSpec::array(F64, &["n"]), ParamSpec::array(I64, &["n"])],
        |a| vec![a[0] + a[1]],
    );
    let e = r.err().expect("an error");
    assert!(e.to_string().contains("traced function"), "{e}");
}
