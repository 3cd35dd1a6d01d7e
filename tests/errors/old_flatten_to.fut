-- The 2022-era flatten_to, which is gone.
-- ==
-- error: "flatten_to n xs" is the old form: write "flatten xs :> \[n\]t"

def main (xs: [2][3]i32) = flatten_to 6 xs
