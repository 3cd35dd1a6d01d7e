//! Indexing, slicing and ranges on shapes (language.md §7.5, §7.6): which elements an index
//! selects, whether it is in bounds, how many elements a range has, and the exact error
//! messages of §9.6. Both backends use these so that they agree to the letter; they only
//! differ in how they move the selected data.

/// `[2][3]`: a shape as error messages print it.
pub fn shape_string(shape: &[usize]) -> String {
    shape.iter().map(|d| format!("[{d}]")).collect()
}

/// Largest number of elements a range or replicate may allocate.
pub const MAX_ELEMS: i128 = 1 << 34;

use crate::ops::Prim;

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
    /// `(start, count, stride)` when the selection is one strided slice of the outer
    /// dimension (a vector slice such as `xs[::-1]`), for copying without an offset table.
    pub fn outer_slice(&self) -> Option<(i64, usize, i64)> {
        match self.dims.as_slice() {
            [(start, count, stride, false)] => Some((*start, *count, *stride)),
            _ => None,
        }
    }
    /// Elements per selected block (the product of the dimensions kept whole).
    pub fn inner(&self) -> usize {
        self.shape[self.dims.len()..].iter().product()
    }
    /// Whether every indexed dimension uses a plain index, so the selection is one
    /// contiguous block of `inner()` elements.
    pub fn is_contiguous(&self) -> bool {
        self.dims.iter().all(|d| d.3)
    }
    /// Whether the selection is all of the array, in order (`a[0:n]`, `a[:, 0:m]`): every
    /// indexed dimension a slice of all of it, forwards.
    pub fn is_whole(&self) -> bool {
        self.dims
            .iter()
            .zip(&self.shape)
            .all(|(&(start, count, step, fixed), &n)| {
                !fixed && count == n && (count <= 1 || (start == 0 && step == 1))
            })
    }
    /// Whether every dimension is indexed by a plain index (the result is one element).
    pub fn is_single(&self) -> bool {
        self.dims.len() == self.shape.len() && self.dims.iter().all(|d| d.3)
    }
    /// Flat offsets of the start of every selected block of `inner()` elements, row-major.
    pub fn block_offsets(&self) -> Vec<usize> {
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

/// The three range forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeKind {
    /// `..<`
    UpToExclusive,
    /// `..>`
    DownToExclusive,
    /// `...`
    Inclusive,
}

/// The elements of a range `a [.. b] (..< | ..> | ...) c` at an integer type: the first
/// element, the stride and the count, or the invalid-range message (or an out-of-memory
/// message for absurd counts).
pub fn range_elements(
    a: Prim,
    b: Option<Prim>,
    c: Prim,
    kind: RangeKind,
) -> Result<(i128, i128, usize), String> {
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
    Ok((ai, s, count as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(start: Option<i64>, end: Option<i64>, stride: Option<i64>) -> DimVal {
        DimVal::Slice { start, end, stride }
    }

    #[test]
    fn slices_follow_the_spec() {
        let sel = select(&[7], &[slice(Some(5), Some(1), Some(-2))]).unwrap();
        assert_eq!(sel.result_shape(), vec![2]);
        assert_eq!(sel.block_offsets(), vec![5, 3]);
        // An empty slice is valid even at the end of the array.
        assert_eq!(
            select(&[7], &[slice(Some(7), Some(7), None)])
                .unwrap()
                .result_shape(),
            vec![0]
        );
        // a[::-1] reverses.
        let rev = select(&[3], &[slice(None, None, Some(-1))]).unwrap();
        assert_eq!(rev.block_offsets(), vec![2, 1, 0]);
    }

    #[test]
    fn bounds_errors_print_the_index_as_written() {
        let e = select(
            &[2, 3],
            &[slice(Some(0), Some(2), None), slice(Some(1), Some(0), None)],
        );
        assert_eq!(
            e.unwrap_err(),
            "Index [0:2, 1:0] out of bounds for array of shape [2][3]."
        );
        assert_eq!(
            select(&[4], &[DimVal::Idx(-1)]).unwrap_err(),
            "Index [-1] out of bounds for array of shape [4]."
        );
    }

    #[test]
    fn ranges_follow_the_spec() {
        let r = |a: i32, b: Option<i32>, c: i32, k| {
            range_elements(Prim::I32(a), b.map(Prim::I32), Prim::I32(c), k)
        };
        assert_eq!(r(1, Some(3), 9, RangeKind::Inclusive), Ok((1, 2, 5)));
        assert_eq!(r(5, None, 2, RangeKind::DownToExclusive), Ok((5, -1, 3)));
        assert_eq!(r(10, Some(7), 0, RangeKind::Inclusive), Ok((10, -3, 4)));
        assert_eq!(r(0, None, 0, RangeKind::UpToExclusive), Ok((0, 1, 0)));
        assert_eq!(
            r(5, None, 2, RangeKind::UpToExclusive).unwrap_err(),
            "Range 5..<2 is invalid."
        );
        assert_eq!(
            r(4, None, 1, RangeKind::Inclusive).unwrap_err(),
            "Range 4...1 is invalid."
        );
    }
}
