-- A loop body consuming a variable bound outside the loop (it would be consumed on every
-- iteration).
-- ==
-- error: Consuming "a", which is not consumable inside a loop body: it is bound outside it

def f (n: i64) =
  let a = replicate 3 0i32
  in loop acc = 0i32 for i < n do
       let c = a with [0] = 1
       in acc + c[0]
