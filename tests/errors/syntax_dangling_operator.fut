-- A binary operator without a right operand.
-- ==
-- error: 

def main = 1 +
