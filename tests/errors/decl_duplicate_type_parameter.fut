-- The same type parameter twice in an abbreviation.
-- ==
-- error: Type parameter "e" is given more than once; it was previously given here

type pair 'e 'e = (e, e)
