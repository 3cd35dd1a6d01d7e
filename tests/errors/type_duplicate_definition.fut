-- The same name defined twice in one file.
-- ==
-- error: Duplicate definition of "f"

def f = 1
def f = 2
