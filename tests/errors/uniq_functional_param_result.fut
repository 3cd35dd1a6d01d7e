-- The result of a functional parameter may alias anything, so it is not consumable.
-- ==
-- error: Consuming "mk", which is not consumable

def run (mk: i64 -> []i32) =
  let t = mk 3
  let t[0] = 5
  in t[1]
