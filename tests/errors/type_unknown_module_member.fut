-- A misspelt member of a numeric module.
-- ==
-- error: has no member "sqr"; did you mean "f32.sqrt"

def main = f32.sqr 2.0
