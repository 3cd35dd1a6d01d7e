-- A function cannot be returned from a case of a "match".
-- ==
-- error: returned from branch

def main (k: i32) (n: i32) : i32 =
  let h = match k
          case 0 -> (\x -> x + 1)
          case _ -> (\x -> x * 2)
  in h n
