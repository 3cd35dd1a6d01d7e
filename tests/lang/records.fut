-- Records and tuples: literals, punning, projection, functional update, field order,
-- type abbreviations, user-defined operators on records (language.md Appendix B.5).
-- ==
-- entry: walk
-- input { 4i64 } output { 4.47213595499958 }

type pt = {x: f64, y: f64}
def (a: pt) <+> (b: pt) : pt = {x = a.x + b.x, y = a.y + b.y}
def len (p: pt) = f64.(sqrt (p.x * p.x + p.y * p.y))
entry walk (n: i64) : f64 =
  let step = {x = 0.5, y = 1.0}
  in len (loop p = {x = 0, y = 0} for _i < n do p <+> step)

-- ==
-- entry: update
-- input { 1.0 } output { 1.0 5.0 7 }

type particle = {pos: pt, id: i32}
entry update (x: f64) =
  let p : particle = {pos = {y = 2, x}, id = 3}
  let p = p with pos.y = 5
  let p = p with id = p.id + 4
  in (p.pos.x, p.pos.y, p.id)

-- ==
-- entry: tuples
-- input { 1 2.0 } output { 2.0 1 3 }

entry tuples (a: i32) (b: f64) =
  let t = (a, b, (a + 1, a + 2))
  in (t.1, t.0, t.2.1)

-- ==
-- entry: tuple_as_record
-- input { } output { 7 true }

entry tuple_as_record : (i32, bool) =
  let r = {0 = 7, 1 = true}
  let (a, b) = r
  in (a, b)

-- ==
-- entry: record_pattern_param
-- input { 3.0 4.0 } output { 25.0 }

def norm2 ({x, y}: pt) = x * x + y * y
entry record_pattern_param (x: f64) (y: f64) = norm2 {y, x}

-- ==
-- entry: projection_section
-- input { [1, 2, 3] [4, 5, 6] } output { [4, 5, 6] }

entry projection_section (xs: []i32) (ys: []i32) = map (.1) (zip xs ys)
