-- Only `#some`'s payload is given; the size of `#other`'s array is never determined.
-- ==
-- error: constructor "#other" of the ascribed type is ambiguous

type~ either = #some ([]u8) | #other ([]u8)

def wrap (bytes: *[]u8) =
  let tagged : either = #some bytes
  in (tagged, 0)
