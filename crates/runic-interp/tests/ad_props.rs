//! Property tests of the runtime AD: for random small inputs of a few fixed programs,
//! forward and reverse mode agree (⟨ȳ, J·ẋ⟩ = ⟨Jᵀ·ȳ, ẋ⟩) and match central differences.
mod common;
use common::*;
use proptest::prelude::*;

/// Each program maps `xs: [n]f64` to `[m]f64`; the entries return (jvp, vjp, f(x)).
const PROGRAMS: &[&str] = &[
    // polynomial
    "def f (xs: []f64) : []f64 = map (\\x -> 3 * x * x * x - 2 * x + 1) xs",
    // map/reduce/scan composition
    "def f (xs: []f64) : []f64 = let s = scan (+) 0 (map (\\x -> x * x) xs) in map (* (f64.sum xs)) s",
    // loop with products and a maximum
    "def f (xs: []f64) : []f64 = loop ys = xs for _i < 3 do map2 (\\a b -> a * 0.5 + f64.sin b + f64.max a b) ys (reverse ys)",
];

fn harness(p: &str) -> String {
    format!(
        "{p}
entry fwd (xs: []f64) (dx: []f64) = jvp f xs dx
entry rev (xs: []f64) (dy: []f64) = vjp f xs dy
entry primal (xs: []f64) = f xs\n"
    )
}

fn floats(v: runic_data::Value) -> Vec<f64> {
    match v {
        runic_data::Value::Array(a) => match a.data {
            runic_data::Buffer::F64(v) => v.into_vec(),
            _ => panic!("not f64"),
        },
        _ => panic!("not an array"),
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn jvp_and_vjp_agree_with_each_other_and_with_differences(
        which in 0..PROGRAMS.len(),
        xs in prop::collection::vec(-2.0f64..2.0, 1..5),
        seed in prop::collection::vec(-1.0f64..1.0, 8),
    ) {
        let p = load(&harness(PROGRAMS[which]));
        let n = xs.len();
        let dx: Vec<f64> = seed[..n].to_vec();
        let call = |e: &str, args: Vec<runic_data::Value>| floats(p.interp.call_entry(e, args).unwrap().remove(0));
        let y = call("primal", vec![f64s(&xs)]);
        let dy: Vec<f64> = (0..y.len()).map(|i| seed[(i + 3) % 8]).collect();
        let jdx = call("fwd", vec![f64s(&xs), f64s(&dx)]);
        let jtdy = call("rev", vec![f64s(&xs), f64s(&dy)]);
        let lhs = dot(&dy, &jdx);
        let rhs = dot(&jtdy, &dx);
        prop_assert!((lhs - rhs).abs() <= 1e-9 * (1.0 + lhs.abs()), "{lhs} vs {rhs}");
        // Central difference along dx.
        let h = 1e-6;
        let plus: Vec<f64> = xs.iter().zip(&dx).map(|(x, d)| x + h * d).collect();
        let minus: Vec<f64> = xs.iter().zip(&dx).map(|(x, d)| x - h * d).collect();
        let (yp, ym) = (call("primal", vec![f64s(&plus)]), call("primal", vec![f64s(&minus)]));
        for i in 0..y.len() {
            let fd = (yp[i] - ym[i]) / (2.0 * h);
            prop_assert!((fd - jdx[i]).abs() <= 1e-4 * (1.0 + fd.abs()), "fd {fd} vs jvp {}", jdx[i]);
        }
    }
}
