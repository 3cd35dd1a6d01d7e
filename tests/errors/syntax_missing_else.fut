-- An `if` without `else` (there is no one-armed `if`).
-- ==
-- error: 

def main (b: bool) = if b then 1
