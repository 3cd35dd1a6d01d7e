-- The unique components of a result may not be the same array.
-- ==
-- error: aliased to some other component

def split (n: i64) : (*[]i32, *[]i32) =
  let z = replicate n 0i32
  in (z, z)
