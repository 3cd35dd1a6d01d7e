-- A constructor whose sum type is never determined.
-- ==
-- error: ambiguous

def main = match #foo 1
  case #foo x -> x
