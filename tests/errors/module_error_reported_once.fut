-- A module whose definition has an error is reported once, not again at each use.
-- ==
-- error: does not define the value "x"

module M : { val x : i32 } = { def y = 1i32 }

def main = M.x + M.z + M.x
