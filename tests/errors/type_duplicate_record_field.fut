-- A record literal giving a field twice.
-- ==
-- error: given more than once

def main = {x = 1, x = 2}
