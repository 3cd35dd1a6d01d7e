-- A string literal that is never closed.
-- ==
-- error: 

def main = "abc
