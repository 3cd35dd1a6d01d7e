-- A result size written as a projection of a parameter (`[s.0]`, `[d.w]`): at a call the
-- argument takes the parameter's place in it, or, when the argument is not simple enough to
-- stand in a size, the size is unknown and read from the value.

def grid (s: (i64, i64)) : [s.0][s.1]i32 = replicate s.0 (replicate s.1 7)

def frame (d: {w: i64, h: i64}) : [0][d.w][d.h]() = []

def swap (a: i64, b: i64) : (i64, i64) = (b, a)

-- The argument is a variable; a local variable named like the parameter does not capture
-- the size.
-- ==
-- entry: by_variable
-- input { 2i64 3i64 } output { 2i64 3i64 42i32 }
entry by_variable (a: i64) (b: i64) =
  let s = (b, a)
  let p = (a, b)
  let [x][y] (g: [x][y]i32) = grid p
  in (x, y, reduce (+) 0 (flatten g) + i32.i64 (s.0 - b))

-- The argument is a call on a tuple: the sizes come from the value.
-- ==
-- entry: by_call
-- input { 2i64 5i64 } output { 5i64 2i64 }
entry by_call (a: i64) (b: i64) =
  let [x][y] (_: [0][x][y]()) = frame {w = (swap (a, b)).0, h = a}
  in (x, y)

-- A record literal argument (not simple): each projection is its own unknown size.
-- ==
-- entry: by_record
-- input { 4i64 1i64 } output { 4i64 1i64 4i64 }
entry by_record (a: i64) (b: i64) =
  let [x][y] (v: [0][x][y]()) = frame {w = a, h = b}
  in (x, y, length (transpose v))

-- A size named in a parametric module: the result of one function, passed to another
-- whose size parameters are read from it.
module units (_p: {}) = {
  type box [a] [b] = [0][a][b]()

  def mk (s: (i64, i64)) : box [s.0] [s.1] = []

  def combine [a0] [b0] [a1] [b1] (_: box [a0] [b0]) (_: box [a1] [b1]) =
    mk (a0 * b1 + a1 * b0, b0 * b1)

  def half = mk (1, 2)
}

module u = units {}

-- ==
-- entry: in_module
-- input { } output { 4i64 4i64 }
entry in_module =
  let [x][y] (_: [0][x][y]()) = u.combine u.half u.half
  in (x, y)
