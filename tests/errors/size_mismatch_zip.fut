-- zip needs two arrays of one size; n and m are different size parameters.
-- ==
-- error: Sizes "n" and "m" do not match

def f [n] [m] (xs: [n]i32) (ys: [m]f32) = zip xs ys
