-- Types that a literal, an integer-only use or a constant's use leaves open default to i32
-- (tests/errors/ambiguous_overloaded_function.fut is the ambiguous case).

-- A literal fixes the operand type: i32.
def twice x = x * 2

-- A loop bound may be any integer type: i32.
def tri n = loop s = 0 for i < n do s + i

-- A constant is not generalised: its type defaults.
def plus = (+)

-- ==
-- entry: main
-- input { 5 } output { 10 10 7 }
entry main (k: i32) = (twice k, tri k, plus k 2)
