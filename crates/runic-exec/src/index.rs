//! Indexing, slicing, in-place updates (language.md §7.6, §7.12) and ranges (§7.5), with the
//! interpreter's error messages.

use crate::value::{
    buf_copy, buf_gather, buf_get, buf_push, buf_slice, buf_with_capacity, shape_string, Val,
};
use runic_data::{Array, Buffer};
use runic_ir::RangeKind;
use runic_prim::{Prim, PrimType};

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

/// A resolved selection: per indexed dimension (start, count, stride, is a plain index).
#[derive(Clone, Debug)]
pub struct Selection {
    dims: Vec<(i64, usize, i64, bool)>,
    shape: Vec<usize>,
}

impl Selection {
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
pub fn extract(arr: &Array, sel: &Selection) -> Val {
    let inner = sel.inner();
    if sel.is_single() {
        let off = sel.block_offsets()[0];
        return Val::Prim(buf_get(&arr.data, off));
    }
    let shape = sel.result_shape();
    let offs = sel.block_offsets();
    let data = if offs.len() == 1 {
        buf_slice(&arr.data, offs[0], inner)
    } else if inner == 1 {
        buf_gather(&arr.data, &offs)
    } else {
        let idx: Vec<usize> = offs.iter().flat_map(|&o| o..o + inner).collect();
        buf_gather(&arr.data, &idx)
    };
    crate::value::arr(shape, data)
}

/// `a[dims]`
pub fn index(a: &Array, dims: &[DimVal]) -> Result<Val, String> {
    // Fast path: a full index of a vector.
    if let ([DimVal::Idx(i)], 1) = (dims, a.shape.len()) {
        if *i >= 0 && (*i as usize) < a.shape[0] {
            return Ok(Val::Prim(buf_get(&a.data, *i as usize)));
        }
    }
    let sel = select(&a.shape, dims)?;
    Ok(extract(a, &sel))
}

/// Overwrite the selection with `v` (which must have the selection's shape).
pub fn write(arr: &mut Array, sel: &Selection, v: &Val) -> Result<(), String> {
    if sel.is_single() {
        let off = sel.block_offsets()[0];
        if let Val::Prim(p) = v {
            crate::value::buf_set(&mut arr.data, off, *p);
            return Ok(());
        }
    }
    let shape = sel.result_shape();
    let src = match v {
        Val::Arr(src) if src.shape == shape => src,
        _ => return Err("Shape of slice does not match shape of value.".into()),
    };
    let inner = sel.inner();
    for (b, off) in sel.block_offsets().into_iter().enumerate() {
        buf_copy(&mut arr.data, off, &src.data, b * inner, inner);
    }
    Ok(())
}

/// Largest number of elements a range or replicate may allocate.
pub const MAX_ELEMS: i128 = 1 << 34;

/// The array of a range `a [.. b] (..< | ..> | ...) c`, or the invalid-range message.
pub fn range(a: Prim, b: Option<Prim>, c: Prim, kind: RangeKind) -> Result<Val, String> {
    let t = a.ty();
    let ai = a.as_int().unwrap_or(0);
    let ci = c.as_int().unwrap_or(0);
    let s: i128 = match b {
        Some(b) => {
            let diff = b.as_int().unwrap_or(0) - ai;
            let bits = t.bits();
            let low = diff & ((1i128 << bits) - 1);
            if low >> (bits - 1) & 1 == 1 {
                low - (1i128 << bits)
            } else {
                low
            }
        }
        None => match kind {
            RangeKind::DownToExclusive => -1,
            _ => 1,
        },
    };
    let count: Option<i128> = match kind {
        RangeKind::UpToExclusive => (s > 0 && ai <= ci).then(|| (ci - ai + s - 1) / s),
        RangeKind::DownToExclusive => (s < 0 && ai >= ci).then(|| (ai - ci + (-s) - 1) / (-s)),
        RangeKind::Inclusive => {
            (s != 0 && (s < 0 || ai <= ci) && (s > 0 || ai >= ci)).then(|| (ci - ai) / s + 1)
        }
    };
    let Some(count) = count else {
        let op = match kind {
            RangeKind::UpToExclusive => "..<",
            RangeKind::DownToExclusive => "..>",
            RangeKind::Inclusive => "...",
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
    let n = count as usize;
    let buf = if t == PrimType::I64 {
        let (a64, s64) = (ai as i64, s as i64);
        Buffer::I64(
            (0..n as i64)
                .map(|k| a64.wrapping_add(k.wrapping_mul(s64)))
                .collect(),
        )
    } else {
        let mut buf = buf_with_capacity(t, n);
        for k in 0..count {
            buf_push(&mut buf, Prim::int(t, ai + k * s));
        }
        buf
    };
    Ok(crate::value::arr(vec![n], buf))
}
