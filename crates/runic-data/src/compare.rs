//! Comparing results with expected values (§5.8), including the reference's tolerance rule.

use crate::print::print_scalar;
use crate::value::{Array, Value};
use crate::Buffer;
use runic_prim::Prim;
use std::fmt::Write;

/// Compares result values with expected ones; returns the mismatch lines in order (empty when
/// they are equal). At most `max_mismatches` element mismatches are listed per value, followed
/// by `...and N other mismatches`.
pub fn compare_values(expected: &[Value], got: &[Value], max_mismatches: usize) -> Vec<String> {
    if expected.len() != got.len() {
        let noun = if expected.len() == 1 {
            "value"
        } else {
            "values"
        };
        return vec![format!(
            "Expected {} {noun}, got {}",
            expected.len(),
            got.len()
        )];
    }
    let mut out = Vec::new();
    for (k, (e, g)) in expected.iter().zip(got).enumerate() {
        compare_one(k, e, g, max_mismatches, &mut out);
    }
    out
}

fn shape_text(shape: &[usize]) -> String {
    shape.iter().map(|d| format!("[{d}]")).collect()
}

fn compare_one(k: usize, e: &Value, g: &Value, max: usize, out: &mut Vec<String>) {
    let (Some(es), Some(gs)) = (e.shape(), g.shape()) else {
        out.push(format!(
            "Value #{k}: values of opaque type cannot be compared"
        ));
        return;
    };
    if es != gs {
        let describe = |s: &[usize]| {
            if s.is_empty() {
                "a scalar".to_string()
            } else {
                shape_text(s)
            }
        };
        let line = if es.is_empty() {
            format!(
                "Value #{k}: expected a scalar, got array of shape {}",
                describe(gs)
            )
        } else {
            format!(
                "Value #{k}: expected array of shape {}, got {}",
                describe(es),
                describe(gs)
            )
        };
        out.push(line);
        return;
    }
    let (et, gt) = (elem_of(e), elem_of(g));
    if et != gt {
        out.push(format!("Value #{k}: expected type {et}, got {gt}"));
        return;
    }
    match (e, g) {
        (Value::Scalar(x), Value::Scalar(y)) => {
            let tol = tolerance(std::iter::once(*x));
            if !elements_match(*x, *y, tol) {
                out.push(format!(
                    "Value #{k}: expected {}, got {}",
                    print_scalar(*x),
                    print_scalar(*y)
                ));
            }
        }
        (Value::Array(x), Value::Array(y)) => compare_arrays(k, x, y, max, out),
        _ => {}
    }
}

fn elem_of(v: &Value) -> crate::types::PrimType {
    match v {
        Value::Scalar(s) => s.ty(),
        Value::Array(a) => a.elem_type(),
        // compare_one only calls this for data values.
        _ => crate::types::PrimType::Bool,
    }
}

fn compare_arrays(k: usize, x: &Array, y: &Array, max: usize, out: &mut Vec<String>) {
    let tol = float_tolerance(&x.data);
    let mut mismatches = 0usize;
    for i in 0..x.len() {
        let (a, b) = (x.data.get(i), y.data.get(i));
        if elements_match(a, b, tol) {
            continue;
        }
        mismatches += 1;
        if mismatches <= max {
            let mut line = format!("Value #{k} index [");
            write_index(&mut line, &x.shape, i);
            let _ = write!(
                line,
                "]: expected {}, got {}",
                print_scalar(a),
                print_scalar(b)
            );
            out.push(line);
        }
    }
    if mismatches > max {
        out.push(format!("...and {} other mismatches", mismatches - max));
    }
}

/// Writes the multidimensional position of flat index `i` as `i,j,k`.
fn write_index(out: &mut String, shape: &[usize], mut i: usize) {
    let mut idx = vec![0; shape.len()];
    for (slot, &d) in idx.iter_mut().zip(shape).rev() {
        *slot = i % d;
        i /= d;
    }
    for (n, x) in idx.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        let _ = write!(out, "{x}");
    }
}

/// The tolerance of an expected float array (0 for other types, which compare exactly).
fn float_tolerance(data: &Buffer) -> f64 {
    match data {
        Buffer::F16(v) => tolerance(v.iter().map(|&x| Prim::F16(x))),
        Buffer::F32(v) => tolerance(v.iter().map(|&x| Prim::F32(x))),
        Buffer::F64(v) => tolerance(v.iter().map(|&x| Prim::F64(x))),
        _ => 0.0,
    }
}

/// `0.002 × max(1, M)` with `M` the largest finite expected element (signed), 1 if none.
fn tolerance(expected: impl Iterator<Item = Prim>) -> f64 {
    let m = expected
        .filter_map(|s| s.as_float())
        .filter(|x| x.is_finite())
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
        .unwrap_or(1.0);
    0.002 * m.max(1.0)
}

fn elements_match(e: Prim, g: Prim, tol: f64) -> bool {
    match (e.as_float(), g.as_float()) {
        (Some(e), Some(g)) => {
            (e.is_nan() && g.is_nan())
                || (e.is_infinite() && g.is_infinite() && e == g)
                || (g - e).abs() <= tol
        }
        _ => e == g,
    }
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // literal value lists read better in tests
mod tests {
    use super::*;

    fn f32s(shape: Vec<usize>, v: Vec<f32>) -> Value {
        Array::from_f32(shape, v).unwrap().into()
    }

    #[test]
    fn counts_and_shapes() {
        let one = Value::Scalar(Prim::I32(1));
        assert_eq!(
            compare_values(&[one.clone(), one.clone()], &[one.clone()], 5),
            vec!["Expected 2 values, got 1"]
        );
        assert_eq!(
            compare_values(
                &[f32s(vec![3], vec![1.0; 3])],
                &[f32s(vec![4], vec![1.0; 4])],
                5
            ),
            vec!["Value #0: expected array of shape [3], got [4]"]
        );
        assert_eq!(
            compare_values(&[one.clone()], &[f32s(vec![1, 2], vec![1.0; 2])], 5),
            vec!["Value #0: expected a scalar, got array of shape [1][2]"]
        );
        assert_eq!(
            compare_values(&[one.clone()], &[Value::Scalar(Prim::I64(1))], 5),
            vec!["Value #0: expected type i32, got i64"]
        );
        assert!(compare_values(&[one.clone()], &[one], 5).is_empty());
    }

    #[test]
    fn element_mismatches_with_indices() {
        let e = f32s(vec![2, 2], vec![1.0, 2.0, 3.0, 4.0]);
        let g = f32s(vec![2, 2], vec![1.0, 2.5, 3.0, 4.0]);
        assert_eq!(
            compare_values(&[e], &[g], 5),
            vec!["Value #0 index [0,1]: expected 2.0f32, got 2.5f32"]
        );
        let e = Value::Scalar(Prim::F32(2.0));
        let g = Value::Scalar(Prim::F32(2.5));
        assert_eq!(
            compare_values(&[e], &[g], 5),
            vec!["Value #0: expected 2.0f32, got 2.5f32"]
        );
    }

    #[test]
    fn mismatch_limit() {
        let e: Value = Array::from_i64(vec![10], (0..10).collect()).unwrap().into();
        let g: Value = Array::from_i64(vec![10], vec![9; 10]).unwrap().into();
        let lines = compare_values(&[e], &[g], 2);
        assert_eq!(
            lines,
            vec![
                "Value #0 index [0]: expected 0i64, got 9i64",
                "Value #0 index [1]: expected 1i64, got 9i64",
                "...and 7 other mismatches",
            ]
        );
    }

    #[test]
    fn tolerance_rule() {
        // M = 1000 loosens every element to 2.0.
        let e = Array::from_f64(vec![2], vec![1000.0, 1.0]).unwrap().into();
        let ok = Array::from_f64(vec![2], vec![1001.9, 2.9]).unwrap().into();
        assert!(compare_values(&[e], &[ok], 5).is_empty());
        // Large negative numbers keep the small tolerance 0.002 (signed maximum).
        let e: Value = Array::from_f64(vec![2], vec![-1000.0, -2000.0])
            .unwrap()
            .into();
        let g: Value = Array::from_f64(vec![2], vec![-1000.001, -2000.01])
            .unwrap()
            .into();
        assert_eq!(
            compare_values(&[e], &[g], 5),
            vec!["Value #0 index [1]: expected -2000.0f64, got -2000.01f64"]
        );
        // Non-finite elements do not count for M; NaN = NaN; infinities by sign.
        let e: Value = Array::from_f32(
            vec![4],
            vec![f32::INFINITY, f32::NAN, 0.0, f32::NEG_INFINITY],
        )
        .unwrap()
        .into();
        let g: Value = Array::from_f32(
            vec![4],
            vec![f32::INFINITY, f32::NAN, -0.0015, f32::INFINITY],
        )
        .unwrap()
        .into();
        assert_eq!(
            compare_values(&[e], &[g], 5),
            vec!["Value #0 index [3]: expected -f32.inf, got f32.inf"]
        );
        let nan = Value::Scalar(Prim::F64(f64::NAN));
        let num = Value::Scalar(Prim::F64(1.0));
        assert_eq!(
            compare_values(&[nan], &[num.clone()], 5),
            vec!["Value #0: expected f64.nan, got 1.0f64"]
        );
        let inf = Value::Scalar(Prim::F64(f64::INFINITY));
        assert_eq!(compare_values(&[inf], &[num], 5).len(), 1);
        // Exactly at the tolerance boundary passes.
        let e = Value::Scalar(Prim::F64(0.5));
        let g = Value::Scalar(Prim::F64(0.5 + 0.001953125));
        assert!(compare_values(&[e], &[g], 5).is_empty());
    }

    #[test]
    fn opaque_values_do_not_compare() {
        let t = Value::Tuple(vec![]);
        assert_eq!(
            compare_values(&[t.clone()], &[t], 5),
            vec!["Value #0: values of opaque type cannot be compared"]
        );
    }
}
