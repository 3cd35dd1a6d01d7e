-- A type declared lifted may hold functions, so it cannot be an array element.
-- ==
-- error: Cannot create arrays of "op": it is declared lifted

type^ op = i32

type ops = [4]op
