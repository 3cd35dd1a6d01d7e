-- A keyword used as a definition name.
-- ==
-- error: 

def if = 1
