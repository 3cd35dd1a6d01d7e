-- A non-lifted type abbreviation that holds a size-lifted abstract type through a type
-- parameter of another abbreviation.
-- ==
-- error: Non-lifted type abbreviations may not contain size-lifted types

module type ragged = { type~ row }

module tables (R: ragged) = {
  type labelled 'a = (i32, a)
  type table = labelled R.row
}
