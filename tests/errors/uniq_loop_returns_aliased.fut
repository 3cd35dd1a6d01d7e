-- The values a loop returns for two unique parameters must be distinct arrays: in the
-- next iteration each may be updated in place.
-- ==
-- error: Return value for loop parameter "hi" aliases another returned value

def spread (n: i64) =
  loop (lo: *[]u8, hi: *[]u8) = (replicate n 0u8, replicate n 0u8) for i < n do
    let lo[i] = 1
    in (lo, lo)
