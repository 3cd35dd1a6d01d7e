-- A top-level function compares values whose type nothing fixes: equality is not defined on
-- every type, so the type must be written.
-- ==
-- error: Type is ambiguous \(must be equality type\)

def same x y = x == y
