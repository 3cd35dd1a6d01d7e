//! `Interpreter::grad_check`: jvp and vjp of an entry point against central differences.
mod common;
use common::*;

#[test]
fn correct_derivatives_pass_and_a_wrong_custom_derivative_is_caught() {
    let src = "entry f (xs: []f64) (k: f64) = (f64.sum (map (\\x -> x * x * k) xs), f64.sin k)
entry wrong (x: f64) = with_vjp (\\x -> x * x) (\\_ dy -> dy * 100) x
entry ints (n: i64) (x: f64) = x * f64.i64 n\n";
    let p = load(src);
    let r = p
        .interp
        .grad_check("f", vec![f64s(&[1.0, 2.0, 3.0]), f64v(0.5)], Some(1e-6))
        .unwrap();
    assert_eq!(r.len(), 2);
    assert_eq!((r[0].input, r[0].scalars), (0, 3));
    assert!(r.iter().all(|c| c.max_rel < 1e-6), "{r:?}");
    // vjp uses the custom derivative 100·dy while the true derivative at 3 is 6.
    let r = p
        .interp
        .grad_check("wrong", vec![f64v(3.0)], Some(1e-6))
        .unwrap();
    assert!((r[0].max_abs - 94.0).abs() < 1e-4, "{r:?}");
    // Integer inputs are skipped.
    let r = p
        .interp
        .grad_check("ints", vec![i64v(4), f64v(2.0)], Some(1e-6))
        .unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].input, 1);
    // f32 inputs get a larger default step and still agree within the f32 tolerance.
    let p = load("entry g (xs: []f32) = f32.sum (map (\\x -> f32.sin x * x) xs)\n");
    let r = p
        .interp
        .grad_check("g", vec![f32s(&[0.3, 1.7])], None)
        .unwrap();
    assert_eq!(r[0].float_bits, 32);
    assert!(r[0].max_rel < runic_interp::default_tolerance(32), "{r:?}");
}
