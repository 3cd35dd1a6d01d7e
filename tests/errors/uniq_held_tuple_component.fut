-- A tuple holds its first component while the second is evaluated, so the second
-- may not consume what the first uses.
-- ==
-- error: Using variable "buf", but this was consumed

def pair (buf: *[]f32) = (buf, let tmp = buf with [1] = 0 in tmp[0])
