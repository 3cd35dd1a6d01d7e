//! Fallible allocation of arrays whose size comes from user data (`iota n`, `replicate n x`,
//! scratch and result arrays): a request that cannot be met is an error value, so that the
//! backends report it at the user's location (language.md §9.6) instead of aborting.

use std::sync::OnceLock;

use runic_prim::PrimType;

use crate::Buffer;

/// The most bytes one array may take: the machine's physical memory (an array larger than
/// that could only be paged to death), or no limit where it is unknown.
pub fn memory_limit() -> u128 {
    static LIMIT: OnceLock<u128> = OnceLock::new();
    *LIMIT.get_or_init(|| physical_memory().unwrap_or(u128::MAX))
}

/// `MemTotal` from `/proc/meminfo`, in bytes.
fn physical_memory() -> Option<u128> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u128 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The out-of-memory message for `n` elements of `elem_bytes` bytes each.
pub fn out_of_memory(n: u128, elem_bytes: usize) -> String {
    format!(
        "out of memory: cannot allocate {} bytes for an array of {n} elements",
        n * elem_bytes as u128
    )
}

/// Ok when `n` elements of `elem_bytes` bytes each fit under [`memory_limit`].
pub fn check_alloc(n: u128, elem_bytes: usize) -> Result<(), String> {
    let bytes = n.saturating_mul(elem_bytes as u128);
    if bytes > memory_limit() || bytes > isize::MAX as u128 {
        return Err(out_of_memory(n, elem_bytes));
    }
    Ok(())
}

impl Buffer {
    /// [`Buffer::with_capacity`], or the out-of-memory message when the room cannot be had.
    pub fn try_with_capacity(elem: PrimType, n: usize) -> Result<Buffer, String> {
        check_alloc(n as u128, elem.size_bytes())?;
        let mut b = Buffer::new(elem);
        let reserved = crate::with_buffer!(&mut b, v => v.try_reserve_exact(n).is_ok());
        if !reserved {
            return Err(out_of_memory(n as u128, elem.size_bytes()));
        }
        Ok(b)
    }

    /// [`Buffer::filled`] after the size check; it keeps `vec![x; n]`, whose zero fill comes
    /// from the allocator's zeroed pages.
    pub fn try_filled(elem: PrimType, n: usize, p: runic_prim::Prim) -> Result<Buffer, String> {
        check_alloc(n as u128, elem.size_bytes())?;
        Ok(Buffer::filled(elem, n, p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_requests_are_errors() {
        let e = Buffer::try_with_capacity(PrimType::I64, 11_264_000_000 * 1000).unwrap_err();
        assert!(
            e.starts_with("out of memory: cannot allocate 90112000000000 bytes"),
            "{e}"
        );
        assert!(
            Buffer::try_filled(PrimType::F64, usize::MAX / 4, runic_prim::Prim::F64(0.0)).is_err()
        );
    }

    #[test]
    fn small_requests_succeed() {
        assert_eq!(
            Buffer::try_with_capacity(PrimType::I32, 10).unwrap().len(),
            0
        );
        assert_eq!(
            Buffer::try_filled(PrimType::I8, 3, runic_prim::Prim::I8(7)).unwrap(),
            Buffer::I8(vec![7, 7, 7].into())
        );
    }
}
