-- Both fields of the record loop parameter are consumed, so they must come back distinct.
-- ==
-- error: Return value for loop parameter "hi" aliases another returned value

def split (n: i64) =
  loop {lo = lo: *[]u8, hi = hi: *[]u8} = {lo = replicate n 0, hi = replicate n 1}
  for i < n do
    let lo[i] = 2
    in {lo = lo, hi = lo}
