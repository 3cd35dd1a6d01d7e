-- `uncurry` sees `grid` as `a -> b -> c`, so the sizes `rows` and `cols` of its result
-- would name nothing.
-- ==
-- error: "cols" is used as size in its result

def grid (rows: i64) (cols: i64) (fill: u8) = replicate rows (replicate cols fill)

def from_pair = uncurry grid
