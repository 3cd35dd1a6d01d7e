-- A while condition runs before every iteration: it may consume nothing.
-- ==
-- error: Consuming "st", which is not consumable inside a while-loop condition

def spin (st0: *[]i32) =
  loop st = st0 while (let st[0] = 9 in st[0] > 100) do
    st with [2] = 1
