-- Inside the local function, `k` is a size parameter; the constructor payload of the outer
-- `s`, whose type is being inferred, would have to have that size.
-- ==
-- error: Scope violation: here the size "k" would have to appear in the type of something from outside its scope

def outer s =
  let take_k (k: i64) (xs: [k]f32) =
    map2 (+) xs (match s
                 case #some (ys: [k]f32) -> ys
                 case #none -> xs)
  let _ = (s : (#some ([]f32) | #none))
  in take_k
