-- The third parameter's type names the first two, which `uncurry` cannot keep.
-- ==
-- error: Existential size would appear in function parameter

def corner (rows: i64) (cols: i64) (g: [rows][cols]u8) = g[rows - 1, cols - 1]

def corner_of = uncurry corner
