-- A member of a parametric module used without applying it first.
-- ==
-- error: is a parametric module

module F (P: { val x : i32 }) = { def y = P.x }

def main = F.y
