-- A size parameter of an abbreviation that its definition does not use.
-- ==
-- error: Size parameter "\[n\]" is not used in the definition of "grid"

type grid [n] = [3][3]f32
