-- An entry point taking a function.
-- ==
-- error: Entry point functions may not be higher-order

entry main (f: i32 -> i32) = f 1
