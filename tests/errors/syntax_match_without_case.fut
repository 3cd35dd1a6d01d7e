-- A `match` with no cases.
-- ==
-- error: 

def main = match 1
