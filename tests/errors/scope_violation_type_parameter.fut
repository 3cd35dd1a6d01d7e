-- The local function's type parameter `t` would have to be the type of the outer `v`.
-- ==
-- error: Scope violation: here the type "t" would have to appear in the type of something from outside its scope

def outer v =
  let pick 't (w: t) = if true then w else v
  in pick
