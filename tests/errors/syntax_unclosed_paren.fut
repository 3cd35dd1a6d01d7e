-- An opening parenthesis is never closed.
-- ==
-- error: 

def main = (1 + 2
