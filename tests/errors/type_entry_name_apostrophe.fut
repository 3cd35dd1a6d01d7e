-- Entry point names may not contain an apostrophe.
-- ==
-- error: Entry point names may not contain

entry f' = 1i32
