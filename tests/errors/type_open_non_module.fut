-- A local open of something that is not a module.
-- ==
-- error: is not a module

def foo = 1
def main = foo.(1 + 2)
