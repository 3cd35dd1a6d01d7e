-- A plain `type` abbreviation with an anonymous size (needs a size parameter or `type~`).
-- ==
-- error: Non-lifted type abbreviations may not use anonymous sizes

type vec = []f32

def norm (v: vec) = f32.sqrt (f32.sum (map (\x -> x * x) v))
