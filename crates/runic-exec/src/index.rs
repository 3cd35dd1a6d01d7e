//! Indexing, slicing, in-place updates (language.md §7.6, §7.12) and ranges (§7.5), with the
//! interpreter's error messages.

use crate::value::Val;
use runic_data::{Array, Buffer};
use runic_ir::RangeKind;
use runic_prim::{Prim, PrimType};
use std::sync::Arc;

pub use runic_prim::index::{select, DimVal, Selection, MAX_ELEMS};

/// The value selected from `arr`.
pub fn extract(arr: &Array, sel: &Selection) -> Val {
    let inner = sel.inner();
    if sel.is_single() {
        let off = sel.block_offsets()[0];
        return Val::Prim(arr.data.get(off));
    }
    let shape = sel.result_shape();
    // A strided slice of a vector (`xs[::-1]`, used by reverse-mode AD): a typed copy.
    if let (Some((start, count, stride)), 1) = (sel.outer_slice(), inner) {
        let data = arr.data.strided(start, count, stride);
        return crate::value::arr(shape, data);
    }
    let offs = sel.block_offsets();
    // Blocks one after the other (rows `a..b` of an array) are one block.
    let adjacent = offs.windows(2).all(|w| w[1] == w[0] + inner);
    let data = if let (Some(&first), true) = (offs.first(), adjacent) {
        arr.data.slice(first, inner * offs.len())
    } else if inner == 1 {
        arr.data.gather(&offs)
    } else {
        let idx: Vec<usize> = offs.iter().flat_map(|&o| o..o + inner).collect();
        arr.data.gather(&idx)
    };
    crate::value::arr(shape, data)
}

/// `a[dims]`, sharing `a` itself when the selection is all of it (`a[0:n]`).
pub fn index_shared(a: &Arc<Array>, dims: &[DimVal]) -> Result<Val, String> {
    if dims.iter().all(|d| matches!(d, DimVal::Slice { .. })) {
        let sel = select(&a.shape, dims)?;
        if sel.is_whole() {
            return Ok(Val::Arr(a.clone()));
        }
        return Ok(extract(a, &sel));
    }
    index(a, dims)
}

/// `a[dims]`
pub fn index(a: &Array, dims: &[DimVal]) -> Result<Val, String> {
    // Fast path: a full index of a vector.
    if let ([DimVal::Idx(i)], 1) = (dims, a.shape.len()) {
        if *i >= 0 && (*i as usize) < a.shape[0] {
            return Ok(Val::Prim(a.data.get(*i as usize)));
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
            arr.data.set_converted(off, *p);
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
        arr.data.copy_converted(off, &src.data, b * inner, inner);
    }
    Ok(())
}

/// The array of a range `a [.. b] (..< | ..> | ...) c`, or the invalid-range message.
pub fn range(a: Prim, b: Option<Prim>, c: Prim, kind: RangeKind) -> Result<Val, String> {
    let t = a.ty();
    let (first, s, n) = runic_prim::index::range_elements(a, b, c, kind)?;
    let buf = if t == PrimType::I64 {
        let (a64, s64) = (first as i64, s as i64);
        let mut buf = Buffer::try_with_capacity(t, n)?;
        if let Buffer::I64(v) = &mut buf {
            v.extend((0..n as i64).map(|k| a64.wrapping_add(k.wrapping_mul(s64))));
        }
        buf
    } else {
        let mut buf = Buffer::try_with_capacity(t, n)?;
        for k in 0..n as i128 {
            buf.push_converted(Prim::int(t, first + k * s));
        }
        buf
    };
    Ok(crate::value::arr(vec![n], buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(shape: Vec<usize>) -> Arc<Array> {
        let n: usize = shape.iter().product();
        let data: Vec<f32> = (0..n).map(|k| k as f32).collect();
        Arc::new(Array::new(shape, Buffer::F32(data.into())).expect("a shape that fits"))
    }

    fn slice(start: i64, end: i64) -> DimVal {
        DimVal::Slice {
            start: Some(start),
            end: Some(end),
            stride: None,
        }
    }

    #[test]
    fn a_slice_of_all_of_an_array_shares_it() {
        let a = rows(vec![3, 2, 2]);
        let Ok(Val::Arr(b)) = index_shared(&a, &[slice(0, 3)]) else {
            panic!("an array");
        };
        assert!(Arc::ptr_eq(&a, &b));
        // Not all of it: a copy of the rows, which are adjacent.
        let Ok(Val::Arr(c)) = index_shared(&a, &[slice(1, 3)]) else {
            panic!("an array");
        };
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(c.shape, vec![2, 2, 2]);
        let Buffer::F32(v) = &c.data else {
            panic!("f32")
        };
        assert_eq!(&v[..], &(4..12).map(|k| k as f32).collect::<Vec<_>>()[..]);
        // Columns are not adjacent: gathered.
        let Ok(Val::Arr(d)) = index_shared(&a, &[slice(0, 3), slice(1, 2)]) else {
            panic!("an array");
        };
        let Buffer::F32(v) = &d.data else {
            panic!("f32")
        };
        assert_eq!(&v[..], &[2.0, 3.0, 6.0, 7.0, 10.0, 11.0]);
        // A reversed slice of all rows is not the array.
        let rev = DimVal::Slice {
            start: Some(2),
            end: None,
            stride: Some(-1),
        };
        let Ok(Val::Arr(e)) = index_shared(&a, &[rev]) else {
            panic!("an array");
        };
        assert!(!Arc::ptr_eq(&a, &e));
        let Buffer::F32(v) = &e.data else {
            panic!("f32")
        };
        assert_eq!(v[0], 8.0);
        // No rows at all: an empty array of the rows' shape.
        let Ok(Val::Arr(f)) = index_shared(&a, &[slice(1, 1)]) else {
            panic!("an array");
        };
        assert_eq!((f.shape.clone(), f.data.len()), (vec![0, 2, 2], 0));
    }
}
