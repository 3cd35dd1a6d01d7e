//! [`Store`]: the elements behind a [`Buffer`](crate::Buffer) variant — a `Vec` runic owns,
//! or memory a host owns (a NumPy array) that runic reads without copying it.
//!
//! Borrowed memory is never written: the first write (any `&mut` access) copies it into a
//! `Vec` of runic's own (copy on write), so an in-place update of an argument cannot change
//! the caller's array. A borrowed store keeps the host's owner alive (an `Arc` of it) for
//! as long as any clone of the store exists.

use std::any::Any;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::Arc;

/// Row-major elements of one type: owned, or borrowed from a host for reading.
pub struct Store<T> {
    repr: Repr<T>,
}

enum Repr<T> {
    Owned(Vec<T>),
    Borrowed {
        ptr: NonNull<T>,
        len: usize,
        /// Whatever keeps the memory valid and unchanged (the host's array object).
        _owner: Arc<dyn Any + Send + Sync>,
    },
}

// SAFETY: a borrowed store is only read, through shared references, and its owner is
// `Send + Sync`; an owned store is a `Vec`.
unsafe impl<T: Send + Sync> Send for Store<T> {}
unsafe impl<T: Send + Sync> Sync for Store<T> {}

impl<T> Store<T> {
    /// Elements that `owner` keeps alive, read in place.
    ///
    /// # Safety
    /// `ptr` must point to `len` initialised, properly aligned values of `T` that stay
    /// valid and are not written by anyone for as long as `owner` is alive.
    pub unsafe fn borrowed(ptr: *const T, len: usize, owner: Arc<dyn Any + Send + Sync>) -> Self {
        let ptr = if len == 0 {
            NonNull::dangling()
        } else {
            NonNull::new(ptr as *mut T).unwrap_or(NonNull::dangling())
        };
        Store {
            repr: Repr::Borrowed {
                ptr,
                len,
                _owner: owner,
            },
        }
    }

    /// Room for elements without reallocating (the length, for borrowed elements).
    pub fn capacity(&self) -> usize {
        match &self.repr {
            Repr::Owned(v) => v.capacity(),
            Repr::Borrowed { len, .. } => *len,
        }
    }

    /// Whether the elements are a host's memory (not copied).
    pub fn is_borrowed(&self) -> bool {
        matches!(self.repr, Repr::Borrowed { .. })
    }

    /// The elements as a `Vec` runic owns (a copy only if they were borrowed).
    pub fn into_vec(self) -> Vec<T>
    where
        T: Clone,
    {
        match self.repr {
            Repr::Owned(v) => v,
            Repr::Borrowed { .. } => self.deref().to_vec(),
        }
    }

    /// The `Vec` to write into, copying borrowed elements first.
    pub fn to_mut(&mut self) -> &mut Vec<T>
    where
        T: Clone,
    {
        if let Repr::Borrowed { .. } = self.repr {
            self.repr = Repr::Owned(self.deref().to_vec());
        }
        match &mut self.repr {
            Repr::Owned(v) => v,
            Repr::Borrowed { .. } => unreachable!("made owned above"),
        }
    }

    pub fn push(&mut self, x: T)
    where
        T: Clone,
    {
        self.to_mut().push(x);
    }

    pub fn extend_from_slice(&mut self, xs: &[T])
    where
        T: Clone,
    {
        self.to_mut().extend_from_slice(xs);
    }

    pub fn try_reserve_exact(&mut self, n: usize) -> Result<(), std::collections::TryReserveError>
    where
        T: Clone,
    {
        self.to_mut().try_reserve_exact(n)
    }
}

impl<T> Deref for Store<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match &self.repr {
            Repr::Owned(v) => v,
            // SAFETY: `borrowed`'s contract: valid, aligned, unchanged while the owner lives.
            Repr::Borrowed { ptr, len, .. } => unsafe {
                std::slice::from_raw_parts(ptr.as_ptr(), *len)
            },
        }
    }
}

impl<T: Clone> DerefMut for Store<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.to_mut()
    }
}

impl<T> From<Vec<T>> for Store<T> {
    fn from(v: Vec<T>) -> Self {
        Store {
            repr: Repr::Owned(v),
        }
    }
}

impl<T> Default for Store<T> {
    fn default() -> Self {
        Store::from(Vec::new())
    }
}

/// A clone of borrowed elements shares them (and their owner); owned ones are copied.
impl<T: Clone> Clone for Store<T> {
    fn clone(&self) -> Self {
        match &self.repr {
            Repr::Owned(v) => Store::from(v.clone()),
            Repr::Borrowed { ptr, len, _owner } => Store {
                repr: Repr::Borrowed {
                    ptr: *ptr,
                    len: *len,
                    _owner: _owner.clone(),
                },
            },
        }
    }
}

impl<T: PartialEq> PartialEq for Store<T> {
    fn eq(&self, other: &Self) -> bool {
        self.deref() == other.deref()
    }
}

impl<T: fmt::Debug> fmt::Debug for Store<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.deref().fmt(f)
    }
}

impl<T> FromIterator<T> for Store<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Store::from(iter.into_iter().collect::<Vec<T>>())
    }
}

impl<T: Clone> Extend<T> for Store<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        self.to_mut().extend(iter);
    }
}

impl<'a, T> IntoIterator for &'a Store<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.deref().iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_borrowed_store_reads_in_place_and_copies_on_the_first_write() {
        let host: Arc<Vec<f32>> = Arc::new(vec![1.0, 2.0, 3.0]);
        let owner: Arc<dyn Any + Send + Sync> = host.clone();
        // SAFETY: `host` is never written and `owner` keeps it alive.
        let mut s = unsafe { Store::borrowed(host.as_ptr(), host.len(), owner) };
        assert!(s.is_borrowed());
        assert_eq!(s.as_ptr(), host.as_ptr(), "no copy");
        let shared = s.clone();
        assert_eq!(shared.as_ptr(), host.as_ptr(), "clones share the memory");
        s[1] = 20.0;
        assert!(!s.is_borrowed());
        assert_eq!(&*s, &[1.0, 20.0, 3.0]);
        assert_eq!(&**host, &[1.0, 2.0, 3.0], "the host's memory is unchanged");
        assert_eq!(shared.into_vec(), vec![1.0, 2.0, 3.0]);
        // The owner lives as long as a borrowed store does.
        assert_eq!(Arc::strong_count(&host), 1);
    }

    #[test]
    fn an_empty_borrowed_store_is_an_empty_slice() {
        let owner: Arc<dyn Any + Send + Sync> = Arc::new(());
        // SAFETY: no elements are read.
        let s: Store<u8> = unsafe { Store::borrowed(std::ptr::null(), 0, owner) };
        assert!(s.is_empty());
        assert_eq!(s.into_vec(), Vec::<u8>::new());
    }
}
