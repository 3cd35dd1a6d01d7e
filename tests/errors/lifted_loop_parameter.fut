-- A function cannot be a loop parameter.
-- ==
-- error: A function cannot be a loop parameter

def main (n: i64) (x: i64) =
  let f = loop f = (\(y: i64) -> y + 1) for _i < n do (\(y: i64) -> f y + 1)
  in f x
