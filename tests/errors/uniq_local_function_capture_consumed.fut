-- Calling a local function uses what it captures, which must not have been consumed.
-- ==
-- error: Using variable "tbl", but this was consumed

def g (tbl: *[]i32) (k: i32) =
  let look (i: i64) = tbl[i] + k
  let tbl[0] = 1
  in look 0
