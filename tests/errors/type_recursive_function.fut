-- A function that calls itself: recursion is not part of the language.
-- ==
-- error: "fact" is used in its own definition: recursive functions are not supported

def fact (n: i64) : i64 = if n == 0 then 1 else n * fact (n - 1)
