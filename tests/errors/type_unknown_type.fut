-- A misspelt type name.
-- ==
-- error: Unknown type "flot"

def main (x: flot) = x
