-- Declarations: type abbreviations with size and type parameters, polymorphic functions,
-- constants, attributes, doc comments, deprecated top-level let, local open, trailing
-- commas, character and string literals, and `main` as the default entry point.
-- ==
-- input { 3i64 } output { 12i64 }

-- | A matrix with size parameters.
type matrix [n][m] = [n][m]f32
type pair 'a 'b = (a, b)

def m : matrix [2][3] = [[1, 2, 3], [4, 5, 6],]
let legacy = 41 + 1

#[noinline]
def swap 'a 'b ((x, y): pair a b) : pair b a = (y, x)

def hyp (x: f64) (y: f64) = f64.(sqrt (x * x + y * y))

def main (n: i64) : i64 = #[unsafe] (n * 4)

-- ==
-- entry: uses
-- input { } output { 5.0f32 42 true 2.0 5.0 }

entry uses : (f32, i32, bool, f64, f64) =
  let (b, a) = swap (1, true)
  in (m[1, 1], legacy, b && a == 1, (swap (2.0, 'a')).1, hyp 3 4)

-- ==
-- entry: chars
-- input { } output { 65 [104u8, 105u8] 10 }

entry chars : (i32, []u8, i32) = ('A', "hi", '\n')

-- ==
-- entry: polymorphic
-- input { [1, 2, 3] [true, false] } output { 3 false }

def last_of 't (xs: []t) : t = xs[length xs - 1]
entry polymorphic (xs: []i32) (bs: []bool) = (last_of xs, last_of bs)
