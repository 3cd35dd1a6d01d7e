-- A function consuming a top-level definition (one of its free variables).
-- ==
-- error: Consuming "table", which is not consumable: it is a top-level definition

def table = [1, 2, 3]

def f (i: i64) = table with [i] = 0
