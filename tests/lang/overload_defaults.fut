-- Overloaded types that nothing fixes default to i32 (language.md §6.4), whether a literal,
-- an operator, an integer-only use or a constant's use leaves them open; and a lambda's
-- functional parameter gets its type from its use or from the function's own type
-- (tests/errors/ambiguous_functional_parameter.fut is the ambiguous case).

-- A literal fixes the operand type: i32.
def twice x = x * 2

-- A loop bound may be any integer type: i32.
def tri n = loop s = 0 for i < n do s + i

-- A constant is not generalised: its type defaults.
def plus = (+)

-- Only an operator constrains the operands: i32 as well.
def add x y = x + y

-- ==
-- entry: main
-- input { 5 } output { 10 10 7 12 }
entry main (k: i32) = (twice k, tri k, plus k 2, add k 7)

-- The parameter `g` is used, so the instance of `swap` passed for it is fixed.
def swapped (x: i32) (y: bool) =
  let swap a b = (b, a)
  in (\g -> g x y) swap

-- `g`'s type is part of the function's own type: it is generalised.
def apply_to f x = (\g -> g x) f

-- ==
-- entry: functional
-- input { 3 true } output { true 3 4 }
entry functional (x: i32) (y: bool) =
  let (b, a) = swapped x y
  in (b, a, apply_to (+ 1) x)
