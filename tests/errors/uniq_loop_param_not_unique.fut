-- A loop parameter declared without * is not consumable in the body.
-- ==
-- error: Consuming "acc", which is not consumable

def fill (xs: *[]i32) =
  loop acc : []i32 = xs for i < 3 do
    acc with [i] = 0
