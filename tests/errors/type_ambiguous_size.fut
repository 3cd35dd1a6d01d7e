-- unflatten on an array whose size gives no factors.
-- ==
-- error: Ambiguous size

def main = unflatten (iota 12)
