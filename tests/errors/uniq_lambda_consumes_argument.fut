-- An anonymous function applied directly consumes the arguments of its unique parameters.
-- ==
-- error: Using variable "cells", but this was consumed

def f (cells: *[]u32) =
  let out = (\(c: *[]u32) -> c with [0] = 1) cells
  in (out, cells[1])
