-- A top-level constant is shared by every use: it cannot be unique.
-- ==
-- error: Top-level constant "table" may not have a unique type

def table : *[]f64 = [0.5, 1.5]
