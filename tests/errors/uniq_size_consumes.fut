-- A size in a type may not consume anything.
-- ==
-- error: Consuming "q", which is not consumable inside a size expression

def sz (q: *[]i64) =
  let ws = replicate 2 1f32 :> [let r = q with [0] = 2 in r[0]]f32
  in (ws, q)
