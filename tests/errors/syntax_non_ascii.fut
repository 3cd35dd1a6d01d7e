-- A non-ASCII character outside a string literal.
-- ==
-- error: 

def main = λ
