-- An entry point that stays polymorphic.
-- ==
-- error: Entry point functions may not be polymorphic

entry main 't (x: t) = x
