-- A literal pattern in a `let`.
-- ==
-- error: Refutable pattern

def main = let 1 = 1 in 2
