//! Indexing, slicing and in-place writes (language.md §7.6, §7.12) and ranges (§7.5).

use crate::prim::Prim;
use crate::value::{shape_string, Array, Buf, Data, Value};
use runic_syntax::ast::RangeEnd;
use std::rc::Rc;

/// One evaluated index component, as written.
#[derive(Clone, Debug, PartialEq)]
pub enum DimVal {
    Idx(i64),
    Slice {
        start: Option<i64>,
        end: Option<i64>,
        stride: Option<i64>,
    },
}

/// A resolved selection: per indexed dimension (start, count, stride, is a plain index),
/// plus the inner dimensions that are kept whole.
#[derive(Clone, Debug)]
pub struct Selection {
    dims: Vec<(i64, usize, i64, bool)>,
    /// Full shape of the indexed array.
    shape: Vec<usize>,
}

impl Selection {
    /// Shape of the selected value.
    pub fn result_shape(&self) -> Vec<usize> {
        let mut out: Vec<usize> = self.dims.iter().filter(|d| !d.3).map(|d| d.1).collect();
        out.extend_from_slice(&self.shape[self.dims.len()..]);
        out
    }
    fn inner(&self) -> usize {
        self.shape[self.dims.len()..].iter().product()
    }
    fn is_single(&self) -> bool {
        self.dims.len() == self.shape.len() && self.dims.iter().all(|d| d.3)
    }
    /// Flat offsets of the start of every selected block of `inner()` elements, row-major.
    fn block_offsets(&self) -> Vec<usize> {
        let mut strides = vec![0usize; self.shape.len()];
        let mut acc = 1usize;
        for k in (0..self.shape.len()).rev() {
            strides[k] = acc;
            acc *= self.shape[k];
        }
        let mut offs = vec![0usize];
        for (k, &(start, count, step, _)) in self.dims.iter().enumerate() {
            let mut next = Vec::with_capacity(offs.len() * count);
            for &o in &offs {
                for c in 0..count {
                    let i = start + c as i64 * step;
                    next.push(o + i as usize * strides[k]);
                }
            }
            offs = next;
        }
        offs
    }
}

fn describe(dims: &[DimVal], resolved_start: &[Option<i64>]) -> String {
    let parts: Vec<String> = dims
        .iter()
        .enumerate()
        .map(|(k, d)| match d {
            DimVal::Idx(i) => i.to_string(),
            DimVal::Slice { start, end, stride } => {
                let s = |o: &Option<i64>| o.map(|v| v.to_string()).unwrap_or_default();
                match (end, stride) {
                    (None, None) => format!("{}:", start.or(resolved_start[k]).unwrap_or(0)),
                    (_, None) => format!("{}:{}", s(start), s(end)),
                    _ => format!("{}:{}:{}", s(start), s(end), s(stride)),
                }
            }
        })
        .collect();
    format!("[{}]", parts.join(", "))
}

/// Resolve index components against a shape, or the out-of-bounds message.
pub fn select(shape: &[usize], dims: &[DimVal]) -> Result<Selection, String> {
    let mut out = Vec::with_capacity(dims.len());
    let mut starts = Vec::with_capacity(dims.len());
    let mut ok = dims.len() <= shape.len();
    for (k, d) in dims.iter().enumerate() {
        let w = shape.get(k).copied().unwrap_or(0) as i64;
        match d {
            DimVal::Idx(i) => {
                starts.push(None);
                if *i < 0 || *i >= w {
                    ok = false;
                }
                out.push((*i, 1, 1, true));
            }
            DimVal::Slice { start, end, stride } => {
                let s = stride.unwrap_or(1);
                let i = start.unwrap_or(if s > 0 { 0 } else { w - 1 });
                let j = end.unwrap_or(if s > 0 { w } else { -1 });
                starts.push(Some(i));
                if s == 0 {
                    ok = false;
                    out.push((i, 0, s, false));
                    continue;
                }
                let diff = j as i128 - i as i128;
                let s128 = s as i128;
                let n = (diff + s128 - s128.signum()) / s128;
                let valid = n >= 0
                    && (n == 0 || {
                        let last = i as i128 + (n - 1) * s128;
                        (0..w as i128).contains(&(i as i128)) && (0..w as i128).contains(&last)
                    });
                if !valid {
                    ok = false;
                }
                out.push((i, n.max(0) as usize, s, false));
            }
        }
    }
    if !ok {
        let shown: Vec<usize> = shape.iter().take(dims.len()).copied().collect();
        return Err(format!(
            "Index {} out of bounds for array of shape {}.",
            describe(dims, &starts),
            shape_string(&shown)
        ));
    }
    Ok(Selection {
        dims: out,
        shape: shape.to_vec(),
    })
}

/// The value selected from `arr`.
pub fn extract<'a>(arr: &Array<'a>, sel: &Selection) -> Value<'a> {
    let inner = sel.inner();
    if sel.is_single() {
        let off = sel.block_offsets()[0];
        return arr.data.get(off);
    }
    let shape = sel.result_shape();
    if sel.dims.iter().all(|d| d.3) {
        let off = sel.block_offsets()[0];
        return Value::Array(Rc::new(Array::new(shape, arr.data.slice(off, inner))));
    }
    let offs = sel.block_offsets();
    let data = if inner == 1 {
        arr.data.gather(&offs)
    } else {
        let idx: Vec<usize> = offs.iter().flat_map(|&o| o..o + inner).collect();
        arr.data.gather(&idx)
    };
    Value::Array(Rc::new(Array::new(shape, data)))
}

/// `v[dims]`
pub fn index_value<'a>(v: &Value<'a>, dims: &[DimVal]) -> Result<Value<'a>, String> {
    if dims.is_empty() {
        return Ok(v.clone());
    }
    let Value::Array(arr) = v else {
        return Err("internal error: indexing a non-array".into());
    };
    // Fast path: one plain index.
    if let [DimVal::Idx(i)] = dims {
        let n = arr.len();
        if *i >= 0 && (*i as usize) < n {
            return Ok(arr.row(*i as usize));
        }
    }
    let sel = select(&arr.shape, dims)?;
    Ok(extract(arr, &sel))
}

/// Overwrite the selection with `v` (which must have the selection's shape).
pub fn write<'a>(arr: &mut Array<'a>, sel: &Selection, v: Value<'a>) -> Result<(), String> {
    if sel.is_single() {
        let off = sel.block_offsets()[0];
        arr.data.set(off, v);
        return Ok(());
    }
    let shape = sel.result_shape();
    let Value::Array(src) = v else {
        return Err("Shape of slice does not match shape of value.".into());
    };
    if src.shape != shape {
        return Err("Shape of slice does not match shape of value.".into());
    }
    let inner = sel.inner();
    for (b, off) in sel.block_offsets().into_iter().enumerate() {
        arr.data.copy_from(off, &src.data, b * inner, inner);
    }
    Ok(())
}

/// Largest number of elements a range or replicate may allocate.
pub const MAX_ELEMS: i128 = 1 << 34;

/// The array of a range `a [.. b] (..< | ..> | ...) c`, or the invalid-range message.
pub fn range<'a>(a: Prim, b: Option<Prim>, c: Prim, kind: &RangeEnd) -> Result<Value<'a>, String> {
    let t = a.ty();
    let ai = a.as_int().unwrap_or(0);
    let ci = c.as_int().unwrap_or(0);
    let s: i128 = match b {
        Some(b) => {
            let diff = b.as_int().unwrap_or(0) - ai;
            // Wrap in the type, then read as signed.
            let bits = t.bits();
            let low = diff & ((1i128 << bits) - 1);
            if low >> (bits - 1) & 1 == 1 {
                low - (1i128 << bits)
            } else {
                low
            }
        }
        None => match kind {
            RangeEnd::DownToExclusive => -1,
            _ => 1,
        },
    };
    let count: Option<i128> = match kind {
        RangeEnd::UpToExclusive => (s > 0 && ai <= ci).then(|| (ci - ai + s - 1) / s),
        RangeEnd::DownToExclusive => (s < 0 && ai >= ci).then(|| (ai - ci + (-s) - 1) / (-s)),
        RangeEnd::Inclusive => {
            (s != 0 && (s < 0 || ai <= ci) && (s > 0 || ai >= ci)).then(|| (ci - ai) / s + 1)
        }
    };
    let Some(count) = count else {
        let op = match kind {
            RangeEnd::UpToExclusive => "..<",
            RangeEnd::DownToExclusive => "..>",
            RangeEnd::Inclusive => "...",
        };
        let mid = b.map(|b| format!("..{}", b.plain())).unwrap_or_default();
        return Err(format!(
            "Range {}{mid}{op}{} is invalid.",
            a.plain(),
            c.plain()
        ));
    };
    if count > MAX_ELEMS {
        return Err("out of memory: range too large".into());
    }
    let mut buf = Buf::with_capacity(t, count as usize);
    if let Buf::I64(v) = &mut buf {
        let (a64, s64) = (ai as i64, s as i64);
        v.extend((0..count as i64).map(|k| a64.wrapping_add(k.wrapping_mul(s64))));
    } else {
        for k in 0..count {
            buf.push(Prim::int(t, ai + k * s));
        }
    }
    Ok(Value::Array(Rc::new(Array::new(
        vec![count as usize],
        Data::Flat(buf),
    ))))
}

/// `iota n` as the range `0..1..<n`.
pub fn iota<'a>(n: i64) -> Result<Value<'a>, String> {
    range(
        Prim::I64(0),
        Some(Prim::I64(1)),
        Prim::I64(n),
        &RangeEnd::UpToExclusive,
    )
}
