-- An in-place update of a parameter that is not declared unique.
-- ==
-- error: Consuming "xs", which is not consumable

def f (xs: []i32) =
  let xs[0] = 1
  in xs
