-- A misspelt name; the message suggests the right one.
-- ==
-- error: Unknown name "fo"; did you mean "foo"

def foo = 1
def main = fo + 1
