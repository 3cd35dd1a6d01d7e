-- One call consuming an array that it also receives through another argument.
-- ==
-- error: "xs" is consumed by this call and also passed in another of its arguments

def put (dst: *[]i32) (src: []i32) = dst with [0] = src[1]

def f (xs: *[]i32) = put xs xs
