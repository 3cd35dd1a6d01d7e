//! The canonical printer (§3): scalars, multi-line and single-line arrays, REPL notation, and the
//! debugging notation for non-data values.

use crate::types::PrimType;
use crate::value::{Array, Value};
use half::f16;
use runic_prim::Prim;
use std::fmt::Write;

/// Layout and suffix choices of the three printed forms.
#[derive(Clone, Copy)]
struct Style {
    /// Rows of rank ≥ 2 arrays go on separate, indented lines.
    multiline: bool,
    /// Type suffixes on numbers (`1i32`, `2.0f32`).
    suffixes: bool,
}

/// Canonical multi-line form (§3.1, §3.2), without trailing newline.
pub fn print_value(v: &Value) -> String {
    print_with(
        v,
        Style {
            multiline: true,
            suffixes: true,
        },
    )
}

/// Single-line form (§3.3): like [`print_value`] with every row break replaced by `, `.
pub fn print_value_single_line(v: &Value) -> String {
    print_with(
        v,
        Style {
            multiline: false,
            suffixes: true,
        },
    )
}

/// REPL form (§3.5): canonical layout without type suffixes.
pub fn print_value_repl(v: &Value) -> String {
    print_with(
        v,
        Style {
            multiline: true,
            suffixes: false,
        },
    )
}

/// A scalar in canonical form (`-3i32`, `2.0f32`, `f64.nan`).
pub fn print_scalar(s: Prim) -> String {
    let mut out = String::new();
    let mut scratch = String::new();
    write_scalar(&mut out, &mut scratch, s, true);
    out
}

/// Digits and suffix of an f32 (§3.1): `0.1f32`, `1.0e-45f32`, `f32.nan`, `-f32.inf`.
pub fn format_float_f32(x: f32) -> String {
    print_scalar(Prim::F32(x))
}

/// Digits and suffix of an f64 (§3.1): `123.456f64`, `1.0e7f64`.
pub fn format_float_f64(x: f64) -> String {
    print_scalar(Prim::F64(x))
}

/// `{}` formats a value in canonical multi-line form, like [`print_value`].
impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&print_value(self))
    }
}

fn print_with(v: &Value, style: Style) -> String {
    let mut out = String::new();
    let mut scratch = String::new();
    write_value(&mut out, &mut scratch, v, style);
    out
}

fn write_value(out: &mut String, scratch: &mut String, v: &Value, style: Style) {
    match v {
        Value::Scalar(s) => write_scalar(out, scratch, *s, style.suffixes),
        Value::Array(a) => write_array(out, scratch, a, style),
        // Components of non-data values are kept on one line: the notation is only for reading
        // by people (§3.6).
        Value::Tuple(items) => {
            out.push('(');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, scratch, item, one_line(style));
            }
            out.push(')');
        }
        Value::Record(fields) => {
            let mut sorted: Vec<&(String, Value)> = fields.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(&b.0));
            out.push('{');
            for (i, (name, item)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(name);
                out.push_str(" = ");
                write_value(out, scratch, item, one_line(style));
            }
            out.push('}');
        }
        Value::Sum(tag, payload) => {
            out.push('#');
            out.push_str(tag);
            for item in payload {
                out.push(' ');
                // A nested constructor with arguments needs parentheses to stay unambiguous.
                let parens = matches!(item, Value::Sum(_, p) if !p.is_empty());
                if parens {
                    out.push('(');
                }
                write_value(out, scratch, item, one_line(style));
                if parens {
                    out.push(')');
                }
            }
        }
        Value::Opaque(text) => out.push_str(text),
    }
}

fn one_line(style: Style) -> Style {
    Style {
        multiline: false,
        ..style
    }
}

fn write_array(out: &mut String, scratch: &mut String, a: &Array, style: Style) {
    if !a.is_valid() {
        let _ = write!(
            out,
            "#<invalid array: shape {:?} with {} elements>",
            a.shape,
            a.data.len()
        );
        return;
    }
    if a.data.is_empty() {
        out.push_str("empty(");
        for d in &a.shape {
            let _ = write!(out, "[{d}]");
        }
        out.push_str(a.elem_type().name());
        out.push(')');
        return;
    }
    let mut next = 0;
    write_rows(out, scratch, a, 0, &mut next, style);
}

/// Writes the sub-array at dimension `dim` whose first element is `data[*next]`, advancing
/// `next`. `dim` is also the number of `[` already open, i.e. the row indentation.
fn write_rows(
    out: &mut String,
    scratch: &mut String,
    a: &Array,
    dim: usize,
    next: &mut usize,
    style: Style,
) {
    out.push('[');
    let n = a.shape[dim];
    if dim + 1 == a.shape.len() {
        for i in 0..n {
            if i > 0 {
                out.push_str(", ");
            }
            write_scalar(out, scratch, a.data.get(*next), style.suffixes);
            *next += 1;
        }
    } else {
        for i in 0..n {
            if i > 0 {
                if style.multiline {
                    out.push_str(",\n");
                    out.extend(std::iter::repeat_n(' ', dim + 1));
                } else {
                    out.push_str(", ");
                }
            }
            write_rows(out, scratch, a, dim + 1, next, style);
        }
    }
    out.push(']');
}

fn write_scalar(out: &mut String, scratch: &mut String, s: Prim, suffixes: bool) {
    let elem = s.ty();
    let _ = match s {
        Prim::I8(x) => write!(out, "{x}"),
        Prim::I16(x) => write!(out, "{x}"),
        Prim::I32(x) => write!(out, "{x}"),
        Prim::I64(x) => write!(out, "{x}"),
        Prim::U8(x) => write!(out, "{x}"),
        Prim::U16(x) => write!(out, "{x}"),
        Prim::U32(x) => write!(out, "{x}"),
        Prim::U64(x) => write!(out, "{x}"),
        Prim::Bool(b) => {
            out.push_str(if b { "true" } else { "false" });
            return;
        }
        // f16 is printed with the f32 digit rule (§3.1 step 1); widening is exact.
        Prim::F16(x) => return write_float(out, scratch, f16::to_f32(x), elem, suffixes),
        Prim::F32(x) => return write_float(out, scratch, x, elem, suffixes),
        Prim::F64(x) => return write_float(out, scratch, x, elem, suffixes),
    };
    if suffixes {
        out.push_str(elem.name());
    }
}

/// The float operations the digit rule needs, for f32 and f64.
trait PrintFloat: Copy + std::fmt::LowerExp {
    fn is_nan(self) -> bool;
    fn is_infinite(self) -> bool;
    fn is_sign_negative(self) -> bool;
    fn is_zero(self) -> bool;
    fn abs(self) -> Self;
}

macro_rules! print_float_impl {
    ($t:ty) => {
        impl PrintFloat for $t {
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn is_infinite(self) -> bool {
                <$t>::is_infinite(self)
            }
            fn is_sign_negative(self) -> bool {
                <$t>::is_sign_negative(self)
            }
            fn is_zero(self) -> bool {
                self == 0.0
            }
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
        }
    };
}
print_float_impl!(f32);
print_float_impl!(f64);

fn write_float<F: PrintFloat>(
    out: &mut String,
    scratch: &mut String,
    x: F,
    elem: PrimType,
    suffixes: bool,
) {
    let name = elem.name();
    if x.is_nan() {
        out.push_str(name);
        out.push_str(".nan");
        return;
    }
    if x.is_sign_negative() {
        out.push('-');
    }
    if x.is_infinite() {
        out.push_str(name);
        out.push_str(".inf");
        return;
    }
    if x.is_zero() {
        out.push_str("0.0");
    } else {
        // `{:e}` gives the shortest round-tripping digits as `d1.d2…dnE(e-1)`.
        scratch.clear();
        let _ = write!(scratch, "{:e}", x.abs());
        write_digits(out, scratch);
    }
    if suffixes {
        out.push_str(name);
    }
}

/// Lays out the digits of a `{:e}`-formatted positive number per §3.1 steps 5–6.
fn write_digits(out: &mut String, sci: &str) {
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let first = &mantissa[..1];
    let rest = mantissa.get(2..).unwrap_or("");
    let e = exp.parse::<i32>().unwrap_or(0) + 1;
    let n = 1 + rest.len() as i32;
    if (0..=7).contains(&e) {
        if e == 0 {
            out.push_str("0.");
            out.push_str(first);
            out.push_str(rest);
            return;
        }
        let digits_before = e as usize;
        out.push_str(first);
        if n >= e {
            out.push_str(&rest[..digits_before - 1]);
            out.push('.');
            let after = &rest[digits_before - 1..];
            out.push_str(if after.is_empty() { "0" } else { after });
        } else {
            out.push_str(rest);
            out.extend(std::iter::repeat_n('0', (e - n) as usize));
            out.push_str(".0");
        }
    } else {
        out.push_str(first);
        out.push('.');
        out.push_str(if rest.is_empty() { "0" } else { rest });
        let _ = write!(out, "e{}", e - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Buffer;

    #[test]
    fn float_table_of_3_1() {
        assert_eq!(format_float_f64(0.0), "0.0f64");
        assert_eq!(format_float_f64(-0.0), "-0.0f64");
        assert_eq!(format_float_f32(1.0), "1.0f32");
        assert_eq!(format_float_f32(100.0), "100.0f32");
        assert_eq!(format_float_f32(0.1), "0.1f32");
        assert_eq!(format_float_f64(123.456), "123.456f64");
        assert_eq!(format_float_f64(0.01), "1.0e-2f64");
        assert_eq!(format_float_f64(0.099), "9.9e-2f64");
        assert_eq!(format_float_f64(9999999.0), "9999999.0f64");
        assert_eq!(format_float_f64(1.0e7), "1.0e7f64");
        assert_eq!(format_float_f64(12345678.0), "1.2345678e7f64");
        assert_eq!(format_float_f64(1.0 / 3.0), "0.3333333333333333f64");
        assert_eq!(format_float_f32(1.0 / 3.0), "0.33333334f32");
        assert_eq!(format_float_f32(f32::from_bits(1)), "1.0e-45f32");
        assert_eq!(print_scalar(Prim::F16(f16::from_f32(3.0))), "3.0f16");
        assert_eq!(
            print_scalar(Prim::F16(f16::from_f64(0.1))),
            "9.9975586e-2f16"
        );
    }

    #[test]
    fn float_specials_and_edges() {
        assert_eq!(format_float_f32(f32::NAN), "f32.nan");
        assert_eq!(format_float_f64(-f64::NAN), "f64.nan");
        assert_eq!(format_float_f64(f64::INFINITY), "f64.inf");
        assert_eq!(format_float_f64(f64::NEG_INFINITY), "-f64.inf");
        assert_eq!(print_scalar(Prim::F16(f16::NEG_INFINITY)), "-f16.inf");
        assert_eq!(format_float_f64(0.1), "0.1f64");
        assert_eq!(format_float_f64(0.5), "0.5f64");
        assert_eq!(format_float_f64(-2.5), "-2.5f64");
        assert_eq!(format_float_f64(1234567.5), "1234567.5f64");
        assert_eq!(format_float_f64(1e6), "1000000.0f64");
        assert_eq!(format_float_f64(1.5e300), "1.5e300f64");
        assert_eq!(format_float_f64(-3e2), "-300.0f64");
        assert_eq!(format_float_f64(f64::MAX), "1.7976931348623157e308f64");
    }

    #[test]
    fn integers_and_bools() {
        assert_eq!(print_scalar(Prim::I32(-3)), "-3i32");
        assert_eq!(print_scalar(Prim::U8(255)), "255u8");
        assert_eq!(print_scalar(Prim::U64(u64::MAX)), "18446744073709551615u64");
        assert_eq!(print_scalar(Prim::I8(-128)), "-128i8");
        assert_eq!(print_scalar(Prim::Bool(true)), "true");
        assert_eq!(print_scalar(Prim::I16(-5)), "-5i16");
        assert_eq!(Value::Scalar(Prim::U32(7)).to_string(), "7u32");
    }

    fn iota2(rows: usize, cols: usize) -> Value {
        Value::Array(
            Array::from_i32(vec![rows, cols], (1..=(rows * cols) as i32).collect()).unwrap(),
        )
    }

    #[test]
    fn array_layouts() {
        let v = Value::Array(Array::from_i32(vec![3], vec![1, 2, 3]).unwrap());
        assert_eq!(print_value(&v), "[1i32, 2i32, 3i32]");
        assert_eq!(print_value(&iota2(2, 2)), "[[1i32, 2i32],\n [3i32, 4i32]]");
        let v3 = Value::Array(Array::from_i32(vec![2, 2, 2], (1..=8).collect()).unwrap());
        assert_eq!(
            print_value(&v3),
            "[[[1i32, 2i32],\n  [3i32, 4i32]],\n [[5i32, 6i32],\n  [7i32, 8i32]]]"
        );
        assert_eq!(
            print_value_single_line(&v3),
            "[[[1i32, 2i32], [3i32, 4i32]], [[5i32, 6i32], [7i32, 8i32]]]"
        );
        assert_eq!(print_value_repl(&iota2(2, 2)), "[[1, 2],\n [3, 4]]");
    }

    #[test]
    fn empty_arrays() {
        let e = |shape: Vec<usize>, buf| Value::Array(Array::new(shape, buf).unwrap());
        assert_eq!(
            print_value(&e(vec![0], Buffer::I32(vec![].into()))),
            "empty([0]i32)"
        );
        assert_eq!(
            print_value(&e(vec![2, 0], Buffer::F32(vec![].into()))),
            "empty([2][0]f32)"
        );
        assert_eq!(
            print_value_single_line(&e(vec![0, 3], Buffer::Bool(vec![].into()))),
            "empty([0][3]bool)"
        );
    }

    #[test]
    fn repl_form() {
        assert_eq!(print_value_repl(&Value::Scalar(Prim::I32(3))), "3");
        assert_eq!(print_value_repl(&Value::Scalar(Prim::F64(1.5))), "1.5");
        assert_eq!(
            print_value_repl(&Value::Scalar(Prim::F32(f32::NAN))),
            "f32.nan"
        );
        assert_eq!(print_value_repl(&Value::Scalar(Prim::F64(0.01))), "1.0e-2");
        assert_eq!(print_value_repl(&Value::Scalar(Prim::Bool(true))), "true");
    }

    #[test]
    fn invalid_arrays_do_not_panic() {
        let bad = Value::Array(Array {
            shape: vec![2],
            data: Buffer::I32(vec![1].into()),
        });
        assert_eq!(
            print_value(&bad),
            "#<invalid array: shape [2] with 1 elements>"
        );
    }

    #[test]
    fn opaque_notation() {
        let v = Value::Tuple(vec![
            Value::Scalar(Prim::I32(1)),
            Value::Record(vec![
                ("y".into(), Value::Scalar(Prim::Bool(false))),
                ("x".into(), iota2(2, 1)),
            ]),
            Value::Sum(
                "some".into(),
                vec![
                    Value::Sum("none".into(), vec![]),
                    Value::Sum("pair".into(), vec![Value::Scalar(Prim::U8(1))]),
                ],
            ),
            Value::Opaque("#<fun>".into()),
        ]);
        assert_eq!(
            print_value(&v),
            "(1i32, {x = [[1i32], [2i32]], y = false}, #some #none (#pair 1u8), #<fun>)"
        );
    }
}
