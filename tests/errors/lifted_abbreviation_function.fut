-- A plain `type` abbreviation standing for a function type (needs `type^`).
-- ==
-- error: Non-lifted type abbreviations may not contain functions

type op = i32 -> i32 -> i32

def apply (f: op) (x: i32) = f x x
