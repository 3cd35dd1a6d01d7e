-- Matching binds the function a consuming partial application yields, which could
-- then be called any number of times.
-- ==
-- error: Matched expression of higher-order type may not perform consumption

def set (a: *[]u8) (v: u8) : *[]u8 = a with [0] = v

def twice (buf: *[]u8) = match set buf case g -> (g 1, g 2)
