-- A top-level binding must bind a single name.
-- ==
-- error: 

def (a, b) = (1, 2)
