-- A record field accessed on a parameter whose type is unknown.
-- ==
-- error: ambiguous

def getx r = r.x
