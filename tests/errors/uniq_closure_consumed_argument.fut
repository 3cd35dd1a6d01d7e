-- A consumed argument may not be what the function itself captures.
-- ==
-- error: aliases the function "upd"

def g (ws: *[]i32) =
  let upd = \(v: *[]i32) : i32 -> let v[0] = 1 in v[0] + ws[1]
  in upd ws
