-- A lambda's functional parameter that is never used leaves the type of the polymorphic
-- function passed for it open: nothing says how to instantiate it.
-- ==
-- error: Type is ambiguous: nothing fixes the type "a -> b -> a" of this functional parameter

def pick (k: i64) (flag: bool) =
  let first a _ = a
  in (\unused -> if flag then k else 0) first
