-- A non-lifted type abbreviation whose definition is a lifted type parameter: it could then
-- stand for a function type.
-- ==
-- error: Non-lifted type abbreviations may not contain functions

type wrapper '^a = (a, i32)
