-- An integer literal too large for its type.
-- ==
-- error: 300 does not fit in type "u8"

def main : u8 = 300
