-- What a loop returns for a parameter it consumes must be fresh in every iteration.
-- ==
-- error: Return value for consuming loop parameter "acc" aliases "rows"

def last_row (rows: [][4]f64) =
  loop acc = replicate 4 0f64 for r in rows do
    let acc[1] = 2
    in r
