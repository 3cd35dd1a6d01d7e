-- A type abbreviation applied to too few arguments.
-- ==
-- error: takes 2 arguments but is given 1

type pair 'a 'b = (a, b)
def main : pair i32 = (1, 2)
