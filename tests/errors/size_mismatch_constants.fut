-- A slice of statically known size 2 updated with 3 elements.
-- ==
-- error: Sizes "2" and "3" do not match

def f (xs: *[]i32) = xs with [0:2] = [7, 8, 9]
