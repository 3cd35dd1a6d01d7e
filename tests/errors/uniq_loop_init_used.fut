-- A loop that consumes its initial value may not read the original in its body.
-- ==
-- error: Using variable "orig" in the loop, but it was consumed

def shift (orig: *[]i32) =
  loop cur = orig for i < 3 do
    cur with [i] = orig[i + 1]
