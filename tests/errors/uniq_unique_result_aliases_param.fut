-- A result declared unique that is (an alias of) a non-unique parameter.
-- ==
-- error: Fresh-declared return value of "f" is aliased to "xs", which is not consumable

def f (xs: []i32) : *[]i32 = xs
