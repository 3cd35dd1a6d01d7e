-- Applying a number to an argument.
-- ==
-- error: is not a function

def x : i32 = 3
def main = x 1
