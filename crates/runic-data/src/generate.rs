//! Deterministic random values (§5.6): SplitMix64 draws, one per element, mapped into
//! per-type ranges.

use crate::types::{PrimType, ValueType};
use crate::value::{shape_product, Array, Value};
use crate::Buffer;
use runic_prim::Prim;

/// The SplitMix64 generator; its state is the seed.
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// An inclusive range set with `--T-bounds=MIN:MAX`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Range {
    Int(i128, i128),
    Float(f64, f64),
}

/// Per-element-type ranges for generation; types without bounds use the defaults (full range
/// for integers, `[0, 1]` for floats).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bounds {
    ranges: Vec<(PrimType, Range)>,
}

fn int_limits(t: PrimType) -> (i128, i128) {
    match t {
        PrimType::I8 => (i8::MIN as i128, i8::MAX as i128),
        PrimType::I16 => (i16::MIN as i128, i16::MAX as i128),
        PrimType::I32 => (i32::MIN as i128, i32::MAX as i128),
        PrimType::I64 => (i64::MIN as i128, i64::MAX as i128),
        PrimType::U8 => (0, u8::MAX as i128),
        PrimType::U16 => (0, u16::MAX as i128),
        PrimType::U32 => (0, u32::MAX as i128),
        _ => (0, u64::MAX as i128),
    }
}

impl Bounds {
    pub fn new() -> Self {
        Bounds::default()
    }

    /// Sets the inclusive range of `elem` from the texts of `--T-bounds=MIN:MAX`.
    pub fn set(&mut self, elem: PrimType, min: &str, max: &str) -> Result<(), String> {
        let range = if elem.is_int() {
            let (tmin, tmax) = int_limits(elem);
            let parse = |s: &str| -> Result<i128, String> {
                let v = s
                    .trim()
                    .replace('_', "")
                    .parse::<i128>()
                    .map_err(|_| format!("invalid {elem} bound `{s}`"))?;
                if v < tmin || v > tmax {
                    return Err(format!("bound `{s}` is out of range for {elem}"));
                }
                Ok(v)
            };
            let (lo, hi) = (parse(min)?, parse(max)?);
            if lo > hi {
                return Err(format!("invalid {elem} bounds: {lo} is greater than {hi}"));
            }
            Range::Int(lo, hi)
        } else if elem.is_float() {
            let parse = |s: &str| -> Result<f64, String> {
                s.trim()
                    .replace('_', "")
                    .parse::<f64>()
                    .ok()
                    .filter(|x| !x.is_nan())
                    .ok_or_else(|| format!("invalid {elem} bound `{s}`"))
            };
            let (lo, hi) = (parse(min)?, parse(max)?);
            if lo > hi {
                return Err(format!(
                    "invalid {elem} bounds: {min} is greater than {max}"
                ));
            }
            Range::Float(lo, hi)
        } else {
            return Err(format!("bounds cannot be given for {elem}"));
        };
        self.ranges.retain(|(t, _)| *t != elem);
        self.ranges.push((elem, range));
        Ok(())
    }

    fn get(&self, elem: PrimType) -> Option<Range> {
        self.ranges
            .iter()
            .find(|(t, _)| *t == elem)
            .map(|&(_, r)| r)
    }
}

/// A random value of type `ty` (every dimension must be known) from `seed`.
pub fn generate(ty: &ValueType, seed: u64, bounds: &Bounds) -> Result<Value, String> {
    let shape = ty.known_shape().ok_or_else(|| {
        format!("cannot generate a value of type {ty}: every dimension must be a constant")
    })?;
    let n = shape_product(&shape).ok_or_else(|| format!("type {ty} has too many elements"))?;
    let mut rng = SplitMix64::new(seed);
    let elem = ty.elem;
    let data = if elem.is_int() {
        let (lo, hi) = match bounds.get(elem) {
            Some(Range::Int(lo, hi)) => (lo, hi),
            _ => int_limits(elem),
        };
        let span = (hi - lo + 1) as u128;
        fill(elem, n, || {
            let x = lo + (rng.next_u64() as u128 % span) as i128;
            Prim::int(elem, x)
        })?
    } else if elem.is_float() {
        let (lo, hi) = match bounds.get(elem) {
            Some(Range::Float(lo, hi)) => (lo, hi),
            _ => (0.0, 1.0),
        };
        let unit = 2f64.powi(-53);
        fill(elem, n, || {
            let u = (rng.next_u64() >> 11) as f64 * unit;
            let x = lo + u * (hi - lo);
            Prim::float(elem, x)
        })?
    } else {
        fill(elem, n, || Prim::Bool(rng.next_u64() >> 63 == 1))?
    };
    if shape.is_empty() {
        return Ok(Value::Scalar(data.get(0)));
    }
    Ok(Value::Array(Array { shape, data }))
}

/// `n` elements from `next`, in order; fails cleanly instead of aborting when memory is short.
fn fill(elem: PrimType, n: usize, mut next: impl FnMut() -> Prim) -> Result<Buffer, String> {
    let mut buf = Buffer::new(elem);
    crate::with_buffer!(&mut buf, v => v.try_reserve_exact(n))
        .map_err(|_| format!("not enough memory for {n} elements of type {elem}"))?;
    for _ in 0..n {
        buf.push(next());
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::print::print_value;
    use crate::types::parse_value_type;

    fn gen(ty: &str, seed: u64, bounds: &Bounds) -> String {
        print_value(&generate(&parse_value_type(ty).unwrap(), seed, bounds).unwrap())
    }

    #[test]
    fn raw_draws() {
        let mut r = SplitMix64::new(1);
        assert_eq!(r.next_u64(), 0x910a2dec89025cc1);
        assert_eq!(r.next_u64(), 0xbeeb8da1658eec67);
        assert_eq!(r.next_u64(), 0xf893a2eefb32555e);
    }

    #[test]
    fn golden_vectors() {
        let none = Bounds::new();
        assert_eq!(
            gen("[3]i32", 1, &none),
            "[151149761i32, -443618201i32, 2066896222i32]"
        );
        assert_eq!(gen("[4]u8", 1, &none), "[193u8, 103u8, 94u8, 11u8]");
        let mut b = Bounds::new();
        b.set(PrimType::I64, "0", "9").unwrap();
        assert_eq!(gen("[5]i64", 1, &b), "[5i64, 9i64, 0i64, 5i64, 1i64]");
        assert_eq!(
            gen("[3]f32", 1, &none),
            "[0.5665616f32, 0.7457818f32, 0.97100276f32]"
        );
        assert_eq!(
            gen("[2]f64", 1, &none),
            "[0.5665615751722809f64, 0.7457817572627011f64]"
        );
        assert_eq!(gen("[4]bool", 1, &none), "[true, true, true, false]");
        assert_eq!(gen("i32", 5, &none), "596231002i32");
        assert_eq!(gen("[2]u8", 6, &none), "[0u8, 153u8]");
    }

    #[test]
    fn shapes_and_bounds() {
        let mut b = Bounds::new();
        b.set(PrimType::F32, "-1", "1").unwrap();
        let v = generate(&parse_value_type("[10][3]f32").unwrap(), 3, &b).unwrap();
        let a = v.as_array().unwrap();
        assert_eq!(a.shape, vec![10, 3]);
        match &a.data {
            Buffer::F32(xs) => assert!(xs.iter().all(|x| (-1.0..=1.0).contains(x))),
            other => panic!("{other:?}"),
        }
        assert_eq!(gen("[0][3]i32", 1, &Bounds::new()), "empty([0][3]i32)");
        let full = generate(&parse_value_type("[3]u64").unwrap(), 1, &Bounds::new()).unwrap();
        assert_eq!(
            print_value(&full),
            "[10451216379200822465u64, 13757245211066428519u64, 17911839290282890590u64]"
        );
        assert!(generate(&parse_value_type("[]i32").unwrap(), 1, &Bounds::new()).is_err());
        assert!(b.set(PrimType::I8, "0", "200").is_err());
        assert!(b.set(PrimType::I8, "5", "1").is_err());
        assert!(b.set(PrimType::Bool, "0", "1").is_err());
        assert!(b.set(PrimType::F64, "x", "1").is_err());
    }
}
