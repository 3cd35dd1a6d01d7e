-- An operator section captures its operand like a lambda, so the operand cannot
-- be for a consuming parameter.
-- ==
-- error: Operator sections may not supply an argument for a consuming parameter

def (+=!) (dst: *[]f32) (x: f32) : *[]f32 = dst with [0] = dst[0] + x

def k (arr: *[]f32) = (arr +=!) 2.5
