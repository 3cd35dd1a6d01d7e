-- With explicit type parameters, they must name every type in the function's type: here
-- the type of `y` is left to inference.
-- ==
-- error: The type of "pick" is not closed over by its type parameters

def pick 't (x: t) y = (x, y)
