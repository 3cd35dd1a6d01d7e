-- A plain type parameter ('a) cannot be instantiated with a size-lifted one ('~t): values of
-- 'a may be array elements, which all have one size.
-- ==
-- error: Cannot instantiate the unlifted type parameter "'a" with the size-lifted type "t"

def first_of 'a (gen: i64 -> a) : a = (tabulate 4 gen)[0]

def pick '~t (make: i64 -> t) : t = first_of make

entry main (k: i64) = length (pick (\i -> iota (i + k)))
