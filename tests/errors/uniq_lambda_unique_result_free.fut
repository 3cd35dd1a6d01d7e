-- An anonymous function declared to return a unique value may not return what it
-- captures.
-- ==
-- error: Fresh-declared return value of an anonymous function is aliased to "base"

def f (base: *[]i32) =
  let mk = \(_: i64) : *[]i32 -> base
  in (mk 1)[0]
