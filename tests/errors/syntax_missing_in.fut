-- A let binding without `in` or a following let.
-- ==
-- error: 

def main =
  let x = 1
