-- A type parameter that no parameter or result mentions can never be known.
-- ==
-- error: Type parameter "elem" of "count" is not used in the type of any parameter or of the result

def count 'elem (n: i64) : i64 = n
