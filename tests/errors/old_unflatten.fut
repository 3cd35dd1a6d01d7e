-- The 2022-era form of unflatten, which took the two sizes first.
-- ==
-- error: "unflatten n m xs" is the old form.*Write "unflatten xs"

def main (xs: [6]i32) = unflatten 2 3 xs
