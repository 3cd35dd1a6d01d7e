-- A function applied to itself has an infinite type.
-- ==
-- error: infinite type|Occurs

def f x = x x
