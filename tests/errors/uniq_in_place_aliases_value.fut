-- The value written in place may not share memory with the array it is written to.
-- ==
-- error: The value written in-place aliases "m"

def rowdup [k] (m: *[][k]u8) = m with [1] = m[0]
