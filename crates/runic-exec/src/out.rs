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
pub unsafe fn filled(b: &mut Buffer, n: usize) {
    // SAFETY: the caller's contract; `spare` checked the capacity.
    runic_data::with_buffer!(b, v => unsafe { v.to_mut().set_len(n) })
}
