-- Two size parameters are different sizes: a function may not return one as the other.
-- ==
-- error: Sizes "n" and "m" do not match

def f [n] [m] (xs: [n]i32) (ys: [m]i32) : [n]i32 = ys
