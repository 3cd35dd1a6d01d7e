-- Module declarations, qualified names, nested modules, aliases, open, local, local opens
-- and operators defined in modules. Expected values are worked out in the comments.

module geometry = {
  type point = {x: f64, y: f64}
  def origin : point = {x = 0, y = 0}
  def dist (a: point) (b: point) : f64 = f64.sqrt ((a.x - b.x) ** 2 + (a.y - b.y) ** 2)
  module units = {
    def cm_per_inch : f64 = 2.54
    def to_cm (inches: f64) = inches * cm_per_inch
  }
}

module g = geometry
module u = geometry.units

-- dist (0,0) (3,4) = 5; 5 inches = 12.7 cm
-- ==
-- entry: qualified
-- input { 3.0 4.0 } output { 5.0 12.700000000000001 }
entry qualified (x: f64) (y: f64) : (f64, f64) =
  let p : g.point = {x, y}
  let d = geometry.dist geometry.origin p
  in (d, u.to_cm d)

-- A record field reached through a module member: geometry.origin.x is 0.
-- ==
-- entry: member_field
-- input { 1.5 } output { 1.5 }
entry member_field (z: f64) = geometry.origin.x + z

module vec2 = {
  type t = (i32, i32)
  def (a: t) + (b: t) : t = (a.0 + b.0, a.1 + b.1)
  def scale (k: i32) ((x, y): t) : t = (k * x, k * y)
  local def secret = 100i32
  def bump (v: t) : t = v + (secret, secret)
}

-- (1,2) vec2.+ (10,20) = (11,22); scaled by 2 = (22,44); the section (vec2.+) adds (1,1);
-- inside vec2.( ), + is vec2's: (1,2)+(3,4) = (4,6); bump adds 100 to each.
-- ==
-- entry: operators
-- input { 1 2 } output { 22 44 12 23 4 6 101 102 }
entry operators (a: i32) (b: i32) =
  let v = (a, b) vec2.+ (10, 20)
  let w = vec2.scale 2 v
  let s = (vec2.+) v (1, 1)
  let o = vec2.((a, b) + (3, 4))
  let m = vec2.bump (a, b)
  in (w.0, w.1, s.0, s.1, o.0, o.1, m.0, m.1)

module counting = {
  open vec2
  def twice (v: t) : t = v + v
}

-- open re-exports: counting.scale is vec2.scale. twice (3,4) = (6,8); scale 3 (6,8) = (18,24)
-- ==
-- entry: opened
-- input { 3 4 } output { 18 24 }
entry opened (a: i32) (b: i32) = counting.scale 3 (counting.twice (a, b))

-- A local variable shadows a module of the same name: g.x is then a field.
-- ==
-- entry: shadowing
-- input { 7.0 } output { 7.0 }
entry shadowing (v: f64) = let g = {x = v} in g.x

-- f64.(...) still opens the numeric module, and numeric modules can be opened in a module.
module with_f64 = {
  open f64
  def hyp (a: t) (b: t) : t = sqrt (a * a + b * b)
}

-- ==
-- entry: numeric_open
-- input { 6.0 8.0 } output { 10.0 10.0 }
entry numeric_open (a: f64) (b: f64) = (with_f64.hyp a b, f64.(sqrt (a * a + b * b)))
