-- `let a [i] = v` is neither an in-place update nor a valid local function.
-- ==
-- error: 

def main (v: []i32) =
  let a [i] = v
  in a
