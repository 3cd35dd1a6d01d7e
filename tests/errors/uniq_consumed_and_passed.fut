-- One call consuming an array that it also receives through another argument.
-- ==
-- error: Argument is consumed, but aliases "xs", which is also passed in another argument

def put (dst: *[]i32) (src: []i32) = dst with [0] = src[1]

def f (xs: *[]i32) = put xs xs
