-- An `if` without `then`.
-- ==
-- error: 

def main = if true 1 else 2
