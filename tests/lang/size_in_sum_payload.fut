-- A function whose result has a payload sized by its parameter, called directly or inside a
-- lambda that uses the payload: the size is known where it is needed.

type opt 't = #none | #some t

def gen (k: i64) : opt ([k]i64) = if k > 0 then #some (iota k) else #none

def total [n] (o: opt ([n]i64)) : i64 =
  match o
  case #some xs -> i64.sum xs
  case #none -> 0

-- ==
-- entry: direct
-- input { 4i64 } output { 6i64 }
-- input { 0i64 } output { 0i64 }
entry direct (k: i64) = total (gen k)

-- ==
-- entry: mapped
-- input { [1i64, 3i64, 0i64] } output { [0i64, 3i64, 0i64] }
entry mapped (ks: []i64) = map (\k -> total (gen k)) ks

-- An abstract type's size argument is part of the type, not hidden in a payload: piping
-- into a function that returns one is fine.
module M : {
  type arr [n]
  val mk : (n: i64) -> arr [n]
  val len [n] : arr [n] -> i64
} = {
  type arr [n] = [n]i32
  def mk (n: i64) : arr [n] = replicate n 0
  def len [n] (_: arr [n]) = n
}

-- ==
-- entry: piped_abstract
-- input { 5i64 } output { 5i64 }
entry piped_abstract (n: i64) = n |> M.mk |> M.len
