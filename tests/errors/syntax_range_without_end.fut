-- `a..b` needs `...`, `..<` or `..>`.
-- ==
-- error: 

def main = 1..5
