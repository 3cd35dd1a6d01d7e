-- A numeric literal with a malformed exponent.
-- ==
-- error: 

def main = 1.5e
