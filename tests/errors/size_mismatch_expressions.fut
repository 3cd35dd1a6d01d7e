-- `xs ++ xs` has the size `n + n`, which is not `n`: a function declared to keep the size
-- cannot double it.
-- ==
-- error: Sizes "n" and "n\+n" do not match

def double [n] (xs: [n]i32) : [n]i32 = xs ++ xs :> [n+n]i32
