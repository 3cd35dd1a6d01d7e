-- Uniqueness is about arrays: a scalar cannot be unique.
-- ==
-- error: Only arrays \(and types holding them\) can be unique, but "\*i64" is a non-array type

type count = i64

def bump (c: *count) : count = c + 1
