//! Indexing, slicing, in-place updates (language.md §7.6, §7.12) and ranges (§7.5), with the
//! interpreter's error messages.

use crate::value::Val;
use runic_data::{Array, Buffer};
use runic_ir::{BasicOp, Exp, Prog, RangeKind, Soac, VName};
use runic_prim::{Prim, PrimType};
use std::collections::HashSet;
use std::sync::Arc;

pub use runic_prim::index::{select, DimVal, Selection, MAX_ELEMS};

/// The value selected from `arr`. A run of consecutive elements (adjacent rows) is one
/// block: `view(start, len)` may give it without a copy.
fn extract(
    arr: &Array,
    sel: &Selection,
    view: impl FnOnce(usize, usize) -> Option<Buffer>,
) -> Result<Val, String> {
    let inner = sel.inner();
    if sel.is_single() {
        let off = sel.block_offsets()[0];
        return Ok(Val::Prim(arr.data.get(off)));
    }
    let shape = sel.result_shape();
    if let (Some((start, count, stride)), 1) = (sel.outer_slice(), inner) {
        // A run of a vector (`xs[1:]`): a view or one copy, without listing its offsets
        // (a copy element by element cost 2 ns an element).
        if stride == 1 && count > 0 {
            let first = start as usize;
            let data = match view(first, count) {
                Some(b) => b,
                None => crate::out::slice(&arr.data, first, count).map_err(|e| e.message)?,
            };
            return Ok(crate::value::arr(shape, data));
        }
        // A strided slice (`xs[::-1]`, used by reverse-mode AD): a typed copy.
        let data = arr.data.strided(start, count, stride);
        return Ok(crate::value::arr(shape, data));
    }
    let offs = sel.block_offsets();
    let adjacent = offs.windows(2).all(|w| w[1] == w[0] + inner);
    let data = if let (Some(&first), true) = (offs.first(), adjacent) {
        let len = inner * offs.len();
        match view(first, len) {
            Some(b) => b,
            None => crate::out::slice(&arr.data, first, len).map_err(|e| e.message)?,
        }
    } else if inner == 1 {
        arr.data.gather(&offs)
    } else {
        let idx: Vec<usize> = offs.iter().flat_map(|&o| o..o + inner).collect();
        arr.data.gather(&idx)
    };
    Ok(crate::value::arr(shape, data))
}

/// The fewest elements a view ([`index_shared`]) covers: below that a copy is cheap.
const VIEW_MIN_ELEMS: usize = 1 << 14;

/// The most times larger than a view its array may be: a view keeps all of it alive.
const VIEW_MAX_RATIO: usize = 64;

/// `a[dims]`, sharing `a` itself when the selection is all of it (`a[0:n]`). With
/// `may_view` (nothing updates `a` in place, so no write will have to copy all of `a`
/// because a view of it is alive), a large block of consecutive elements — a row of a
/// loop's tape, say — is read in place instead of copied.
pub fn index_shared(
    a: &Arc<Array>,
    dims: &[DimVal],
    may_view: impl FnOnce() -> bool,
) -> Result<Val, String> {
    if let ([DimVal::Idx(_)], 1) = (dims, a.shape.len()) {
        return index(a, dims);
    }
    let sel = select(&a.shape, dims)?;
    if sel.is_whole() {
        return Ok(Val::Arr(a.clone()));
    }
    extract(a, &sel, |start, len| {
        let large = len >= VIEW_MIN_ELEMS && len * VIEW_MAX_RATIO >= a.data.len();
        if !large || !may_view() {
            return None;
        }
        let owner: Arc<dyn std::any::Any + Send + Sync> = a.clone();
        // SAFETY: `owner` is the array holding the buffer (an `Arc`, so it does not move);
        // arrays change only through `Arc::make_mut`/`try_unwrap`, which copy while the view
        // holds it; `start..start + len` is a block of the selection, inside the array.
        Some(unsafe { a.data.view(start, len, owner) })
    })
}

/// The arrays a program updates in place anywhere (`with`, scatter and histogram
/// destinations, accumulator arrays): the others may be read through views.
pub fn updated_in_place(prog: &Prog) -> HashSet<VName> {
    let found = std::cell::RefCell::new(HashSet::new());
    for f in &prog.funs {
        runic_ir::traverse::any_exp(&f.body, |e| {
            found.borrow_mut().extend(updated_by(e));
            false
        });
    }
    found.into_inner()
}

/// The arrays the expression `e` itself (not its nested bodies) updates in place.
pub(crate) fn updated_by(e: &Exp) -> Vec<VName> {
    match e {
        Exp::Basic(BasicOp::Update(v, ..)) => vec![*v],
        Exp::Soac(Soac::Hist { dests, .. } | Soac::Scatter { dests, .. }) => dests.clone(),
        Exp::WithAcc { inputs, .. } => inputs.iter().flat_map(|i| i.arrays.clone()).collect(),
        _ => Vec::new(),
    }
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
    extract(a, &sel, |_, _| None)
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
        if !crate::out::copy_within_types(&mut arr.data, off, &src.data, b * inner, inner) {
            arr.data.copy_converted(off, &src.data, b * inner, inner);
        }
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
        let Ok(Val::Arr(b)) = index_shared(&a, &[slice(0, 3)], || true) else {
            panic!("an array");
        };
        assert!(Arc::ptr_eq(&a, &b));
        // Not all of it: a copy of the rows, which are adjacent.
        let Ok(Val::Arr(c)) = index_shared(&a, &[slice(1, 3)], || true) else {
            panic!("an array");
        };
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(c.shape, vec![2, 2, 2]);
        let Buffer::F32(v) = &c.data else {
            panic!("f32")
        };
        assert_eq!(&v[..], &(4..12).map(|k| k as f32).collect::<Vec<_>>()[..]);
        // Columns are not adjacent: gathered.
        let Ok(Val::Arr(d)) = index_shared(&a, &[slice(0, 3), slice(1, 2)], || true) else {
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
        let Ok(Val::Arr(e)) = index_shared(&a, &[rev], || true) else {
            panic!("an array");
        };
        assert!(!Arc::ptr_eq(&a, &e));
        let Buffer::F32(v) = &e.data else {
            panic!("f32")
        };
        assert_eq!(v[0], 8.0);
        // No rows at all: an empty array of the rows' shape.
        let Ok(Val::Arr(f)) = index_shared(&a, &[slice(1, 1)], || true) else {
            panic!("an array");
        };
        assert_eq!((f.shape.clone(), f.data.len()), (vec![0, 2, 2], 0));
    }

    /// A run of a vector (`xs[1:]`) is one block: a view when large and allowed, else one
    /// copy; a strided run is still gathered. (It was copied element by element.)
    #[test]
    fn runs_of_vectors_are_views_or_one_copy() {
        let n = 2 * VIEW_MIN_ELEMS;
        let a = rows(vec![n]);
        let tail = [slice(1, n as i64)];
        for may_view in [true, false] {
            let Ok(Val::Arr(t)) = index_shared(&a, &tail, || may_view) else {
                panic!("an array");
            };
            let Buffer::F32(v) = &t.data else {
                panic!("f32")
            };
            assert_eq!(v.is_borrowed(), may_view);
            assert_eq!(t.shape, vec![n - 1]);
            assert_eq!((v[0], v[n - 2]), (1.0, (n - 1) as f32));
        }
        // Short runs, the last element alone, and every other element.
        let Ok(Val::Arr(t)) = index(&a, &[slice(5, 8)]) else {
            panic!("an array");
        };
        let Buffer::F32(v) = &t.data else {
            panic!("f32")
        };
        assert_eq!(&v[..], &[5.0, 6.0, 7.0]);
        let Ok(Val::Arr(t)) = index(&a, &[slice(n as i64 - 1, n as i64)]) else {
            panic!("an array");
        };
        assert_eq!(
            (t.shape.clone(), t.data.get(0)),
            (vec![1], Prim::F32((n - 1) as f32))
        );
        let every_other = DimVal::Slice {
            start: Some(1),
            end: Some(7),
            stride: Some(2),
        };
        let Ok(Val::Arr(t)) = index(&a, &[every_other]) else {
            panic!("an array");
        };
        let Buffer::F32(v) = &t.data else {
            panic!("f32")
        };
        assert_eq!(&v[..], &[1.0, 3.0, 5.0]);
    }

    /// A row of a large array that nothing updates in place is read in place; writes to
    /// either side copy first, so neither sees the other's.
    #[test]
    fn large_rows_of_arrays_not_updated_in_place_are_views() {
        let n = VIEW_MIN_ELEMS;
        let mut a = rows(vec![8, n]);
        let row = |k: i64| [DimVal::Idx(k)];
        let Ok(Val::Arr(copy)) = index_shared(&a, &row(3), || false) else {
            panic!("an array");
        };
        let Ok(Val::Arr(mut view)) = index_shared(&a, &row(3), || true) else {
            panic!("an array");
        };
        let (Buffer::F32(c), Buffer::F32(v)) = (&copy.data, &view.data) else {
            panic!("f32")
        };
        assert!(!c.is_borrowed() && v.is_borrowed());
        assert_eq!(&c[..], &v[..]);
        assert_eq!(v[0], (3 * n) as f32);
        // Writing the array copies it (the view holds it) and leaves the view as it was.
        let sel = select(&a.shape, &row(3)).expect("in bounds");
        write(Arc::make_mut(&mut a), &sel, &Val::Arr(rows(vec![n]))).expect("fits");
        let Buffer::F32(v) = &view.data else {
            panic!("f32")
        };
        assert_eq!(v[0], (3 * n) as f32);
        // Writing the view copies its elements first.
        Arc::make_mut(&mut view).data.set(0, Prim::F32(-1.0));
        let Buffer::F32(v) = &view.data else {
            panic!("f32")
        };
        assert!(!v.is_borrowed());
        assert_eq!((v[0], v[1]), (-1.0, (3 * n + 1) as f32));
        // Small rows, and rows of an array many times larger, are copied.
        let small = rows(vec![8, 16]);
        let Ok(Val::Arr(s)) = index_shared(&small, &row(1), || true) else {
            panic!()
        };
        let Buffer::F32(s) = &s.data else {
            panic!("f32")
        };
        assert!(!s.is_borrowed());
        let tall = rows(vec![VIEW_MAX_RATIO + 1, n]);
        let Ok(Val::Arr(t)) = index_shared(&tall, &row(1), || true) else {
            panic!()
        };
        let Buffer::F32(t) = &t.data else {
            panic!("f32")
        };
        assert!(!t.is_borrowed());
    }
}
