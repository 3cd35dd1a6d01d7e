//! A preallocated result buffer that parallel chunks write into directly, each into its own
//! disjoint range of elements — so that chunk outputs need no concatenation.

use crate::error::{err, R};
use runic_data::{Buffer, PrimType};
use runic_prim::Prim;

/// Raw access to the elements of a `Buffer` owned by the caller.
///
/// Soundness rests on how it is used: the buffer outlives every write and is neither moved
/// nor resized while an `OutPtr` to it exists, and concurrent writers use disjoint element
/// ranges (the SOAC chunks).
pub struct OutPtr {
    ptr: *mut u8,
    elem: PrimType,
    size: usize,
    len: usize,
}

// SAFETY: see the type's documentation; writers never overlap.
unsafe impl Send for OutPtr {}
unsafe impl Sync for OutPtr {}

fn elem_size<T>(_: &[T]) -> usize {
    std::mem::size_of::<T>()
}

impl OutPtr {
    pub fn new(b: &mut Buffer) -> OutPtr {
        let elem = b.elem_type();
        let len = b.len();
        runic_data::with_buffer!(b, v => OutPtr {
            ptr: v.as_mut_ptr().cast::<u8>(),
            elem,
            size: elem_size(v),
            len,
        })
    }

    /// Raw access to the first `n` elements of room of an empty buffer with at least that
    /// capacity ([`Buffer::try_with_capacity`]): written before they exist, the buffer's
    /// length set afterwards ([`filled`]).
    pub fn spare(b: &mut Buffer, n: usize) -> R<OutPtr> {
        if !b.is_empty() || b.capacity() < n {
            return err("internal error: an output buffer without room for its elements");
        }
        let elem = b.elem_type();
        runic_data::with_buffer!(b, v => {
            let v = v.to_mut();
            Ok(OutPtr {
                ptr: v.as_mut_ptr().cast::<u8>(),
                elem,
                size: elem_size(v),
                len: n,
            })
        })
    }

    /// Address of the first element.
    pub fn base(&self) -> *mut u8 {
        self.ptr
    }

    pub fn elem(&self) -> PrimType {
        self.elem
    }

    /// Copy elements `start..start + n` of `src` to elements `at..at + n`.
    pub fn write(&self, at: usize, src: &Buffer, start: usize, n: usize) -> R<()> {
        if src.elem_type() != self.elem || at + n > self.len || start + n > src.len() {
            return err("internal error: a chunk output does not fit its result");
        }
        runic_data::with_buffer!(src, v => {
            // SAFETY: bounds and element type checked above; ranges of concurrent writers
            // are disjoint.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    v.as_ptr().add(start).cast::<u8>(),
                    self.ptr.add(at * self.size),
                    n * self.size,
                )
            }
        });
        Ok(())
    }

    /// Store one scalar at `at`.
    pub fn set(&self, at: usize, p: Prim) -> R<()> {
        let b = Buffer::filled(self.elem, 1, p);
        self.write(at, &b, 0, 1)
    }

    /// Elements `at..at + n` as a typed slice.
    ///
    /// # Safety
    /// `T` must be the element type of the buffer, and no other live reference may cover
    /// the range.
    #[allow(clippy::mut_from_ref)] // the memory is the caller's buffer, not `self`
    pub unsafe fn slice_mut<T>(&self, at: usize, n: usize) -> R<&mut [T]> {
        if std::mem::size_of::<T>() != self.size || at + n > self.len {
            return err("internal error: a chunk output does not fit its result");
        }
        Ok(std::slice::from_raw_parts_mut(
            self.ptr.cast::<T>().add(at),
            n,
        ))
    }
}

/// Gives an empty buffer written through [`OutPtr::spare`] its `n` elements.
///
/// # Safety
/// Every one of the first `n` elements must have been written with a valid value of the
/// buffer's element type.
pub unsafe fn set_filled(b: &mut Buffer, n: usize) {
    // SAFETY: the caller's contract; `spare` checked the capacity.
    runic_data::with_buffer!(b, v => unsafe { v.to_mut().set_len(n) })
}

/// Elements at and above which a fill or a copy is split over the rayon workers: one
/// core does not reach the memory's bandwidth, and a single-threaded pass over megabytes
/// leaves the other workers idle.
pub const PAR_ELEMS: usize = 1 << 17;

/// Elements per piece of a split fill or copy.
const PIECE: usize = 1 << 15;

/// `n` copies of `p` (of type `elem`), written by the workers in pieces when `n` is large.
pub fn filled(elem: PrimType, n: usize, p: Prim) -> R<Buffer> {
    if n < PAR_ELEMS {
        return Buffer::try_filled(elem, n, p).or_else(err);
    }
    let piece = Buffer::filled(elem, PIECE, p);
    in_pieces(elem, n, |out, at, len| out.write(at, &piece, 0, len))
}

/// Elements `from..from + len` of `src` as a new buffer, copied by the workers in pieces
/// when `len` is large.
pub fn slice(src: &Buffer, from: usize, len: usize) -> R<Buffer> {
    if len < PAR_ELEMS {
        return Ok(src.slice(from, len));
    }
    in_pieces(src.elem_type(), len, |out, at, n| {
        out.write(at, src, from + at, n)
    })
}

/// A new buffer of `n` elements of type `elem`, each piece `at..at + len` written by
/// `write(out, at, len)` on some worker (every element of its piece, as [`OutPtr::write`]
/// does).
fn in_pieces(
    elem: PrimType,
    n: usize,
    write: impl Fn(&OutPtr, usize, usize) -> R<()> + Sync,
) -> R<Buffer> {
    use rayon::prelude::*;
    let mut b = Buffer::try_with_capacity(elem, n).or_else(err)?;
    let out = OutPtr::spare(&mut b, n)?;
    (0..n.div_ceil(PIECE)).into_par_iter().try_for_each(|k| {
        let at = k * PIECE;
        write(&out, at, PIECE.min(n - at))
    })?;
    // SAFETY: the pieces cover `0..n`, and `write` writes every element of each.
    unsafe { set_filled(&mut b, n) };
    Ok(b)
}

/// `dst[at..at + len] = src[from..from + len]` for buffers of one element type (false,
/// nothing copied, if the types differ), split over the workers when `len` is large.
pub fn copy_within_types(
    dst: &mut Buffer,
    at: usize,
    src: &Buffer,
    from: usize,
    len: usize,
) -> bool {
    if len < PAR_ELEMS {
        return dst.copy_from(at, src, from, len);
    }
    use rayon::prelude::*;
    runic_data::with_buffer2!(dst, src, x, y => {
        x[at..at + len]
            .par_chunks_mut(PIECE)
            .zip(y[from..from + len].par_chunks(PIECE))
            .for_each(|(a, b)| a.copy_from_slice(b));
        true
    }, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Large fills, slices and copies, split over the workers, write every element (pieces of a
    /// size that does not divide the length included); types that differ copy nothing.
    #[test]
    fn split_fills_and_copies_cover_every_element() {
        let n = PAR_ELEMS + 3 * PIECE / 2 + 7;
        let b = filled(PrimType::F32, n, Prim::F32(2.5)).expect("memory");
        let Buffer::F32(v) = &b else { panic!("f32") };
        assert_eq!(v.len(), n);
        assert!(v.iter().all(|&x| x == 2.5));
        let src: Vec<f32> = (0..n).map(|k| k as f32).collect();
        let src = Buffer::F32(src.into());
        let mut dst = filled(PrimType::F32, n + 10, Prim::F32(0.0)).expect("memory");
        assert!(copy_within_types(&mut dst, 10, &src, 0, n));
        let Buffer::F32(d) = &dst else { panic!("f32") };
        assert_eq!(d[..10], [0.0; 10]);
        assert!((0..n).all(|k| d[10 + k] == k as f32));
        let part = slice(&src, 5, n - 5).expect("memory");
        let Buffer::F32(q) = &part else { panic!("f32") };
        assert_eq!(q.len(), n - 5);
        assert!((0..n - 5).all(|k| q[k] == (k + 5) as f32));
        let mut ints = filled(PrimType::I32, n, Prim::I32(0)).expect("memory");
        assert!(!copy_within_types(&mut ints, 0, &src, 0, n));
    }
}
