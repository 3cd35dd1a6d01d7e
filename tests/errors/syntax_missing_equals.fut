-- A definition without `=`.
-- ==
-- error: 

def main : i32 1
