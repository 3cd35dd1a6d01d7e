-- An array literal that is never closed.
-- ==
-- error: 

def main = [1, 2
