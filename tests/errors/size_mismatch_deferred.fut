-- `t -> t` keeps the size of its argument; concatenating an array with itself does not.
-- The mismatch shows only once `t` is solved from the second argument.
-- ==
-- error: Sizes "n" and "n\+n" do not match

def apply_same 't (f: t -> t) (x: t) = f x

def doubled [n] (xs: [n]f32) = apply_same (\ys -> ys ++ ys) xs
