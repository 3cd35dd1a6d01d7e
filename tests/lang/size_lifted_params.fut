-- Size-lifted type parameters ('~t) may be instantiated with arrays of any size, and passed
-- on to other size-lifted parameters; only a plain 'a parameter refuses them
-- (tests/errors/lifted_size_lifted_as_unlifted.fut).

def apply_to '~t (make: i64 -> t) (k: i64) : t = make k

def twice '~t (make: i64 -> t) (k: i64) : (t, t) = (apply_to make k, apply_to make (k + 1))

-- ==
-- entry: main
-- input { 2i64 } output { 2i64 3i64 }
entry main (k: i64) =
  let (a, b) = twice iota k
  in (length a, length b)
