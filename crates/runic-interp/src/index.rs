//! Indexing, slicing and in-place writes (language.md §7.6, §7.12) and ranges (§7.5).

use crate::prim::Prim;
use crate::value::{Array, Data, Value};
use runic_data::Buffer;
use runic_prim::RangeKind;
use runic_syntax::ast::RangeEnd;
use std::rc::Rc;

pub use runic_prim::index::{select, DimVal, Selection, MAX_ELEMS};

/// The value selected from `arr`.
pub fn extract<'a>(arr: &Array<'a>, sel: &Selection) -> Value<'a> {
    let inner = sel.inner();
    if sel.is_single() {
        let off = sel.block_offsets()[0];
        return arr.data.get(off);
    }
    let shape = sel.result_shape();
    if sel.is_contiguous() {
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

/// The array of a range `a [.. b] (..< | ..> | ...) c`, or the invalid-range message.
pub fn range<'a>(a: Prim, b: Option<Prim>, c: Prim, kind: &RangeEnd) -> Result<Value<'a>, String> {
    let kind = match kind {
        RangeEnd::UpToExclusive => RangeKind::UpToExclusive,
        RangeEnd::DownToExclusive => RangeKind::DownToExclusive,
        RangeEnd::Inclusive => RangeKind::Inclusive,
    };
    let t = a.ty();
    let (first, s, count) = runic_prim::index::range_elements(a, b, c, kind)?;
    let mut buf = Buffer::try_with_capacity(t, count)?;
    if let Buffer::I64(v) = &mut buf {
        let (a64, s64) = (first as i64, s as i64);
        v.extend((0..count as i64).map(|k| a64.wrapping_add(k.wrapping_mul(s64))));
    } else {
        for k in 0..count as i128 {
            buf.push(Prim::int(t, first + k * s));
        }
    }
    Ok(Value::Array(Rc::new(Array::new(
        vec![count],
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
