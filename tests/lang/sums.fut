-- Sum types, constructors with payloads, and match with literal, constructor and
-- wildcard patterns.
-- ==
-- entry: area
-- input { 0 2.0 3.0 } output { 12.566370614359172 }
-- input { 1 2.0 3.0 } output { 6.0 }
-- input { 2 2.0 3.0 } output { 0.0 }

type shape = #circle f64 | #rect f64 f64 | #point

def shape_area (s: shape) : f64 =
  match s
  case #circle r -> f64.pi * r * r
  case #rect w h -> w * h
  case #point -> 0

entry area (k: i32) (a: f64) (b: f64) =
  let s : shape = if k == 0 then #circle a else if k == 1 then #rect a b else #point
  in shape_area s

-- ==
-- entry: classify
-- input { 0 } output { 100 }
-- input { 1 } output { 200 }
-- input { 7 } output { 7 }

entry classify (x: i32) =
  match x
  case 0 -> 100
  case 1 -> 200
  case n -> n

-- ==
-- entry: option
-- input { [3, -1, 4] } output { 7 }

type opt = #some i32 | #none
def get_or (d: i32) (o: opt) = match o case #some x -> x case #none -> d
entry option (xs: []i32) =
  let opts = map (\x -> if x >= 0 then #some x else #none) xs
  in i32.sum (map (get_or 0) opts)

-- ==
-- entry: sum_equality
-- input { 5 } output { true false }

entry sum_equality (x: i32) =
  let a : opt = #some x
  in (a == #some 5, a == #none)
