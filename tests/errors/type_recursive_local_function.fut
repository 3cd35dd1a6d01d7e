-- A local function that calls itself.
-- ==
-- error: "go" is used in its own definition: recursive functions are not supported

entry main (n: i64) =
  let go (k: i64) : i64 = if k == 0 then 0 else 1 + go (k - 1)
  in go n
