-- A small linear-algebra library in parametric-module style, vendored the way the
-- reference's package manager lays dependencies out (used by ../../../../linalg.fut).

module type linalg = {
  type t
  val dot [n] : [n]t -> [n]t -> t
  val matvec [n] [m] : [n][m]t -> [m]t -> [n]t
  val matmul [n] [m] [p] : [n][m]t -> [m][p]t -> [n][p]t
  val scale [n] : t -> [n]t -> [n]t
}

module mk_linalg (T: real) : linalg with t = T.t = {
  type t = T.t
  def dot [n] (a: [n]t) (b: [n]t) : t = T.sum (map2 (T.*) a b)
  def matvec [n] [m] (a: [n][m]t) (v: [m]t) : [n]t = map (\row -> dot row v) a
  def matmul [n] [m] [p] (a: [n][m]t) (b: [m][p]t) : [n][p]t =
    map (\row -> map (\col -> dot row col) (transpose b)) a
  def scale [n] (k: t) (v: [n]t) : [n]t = map (T.* k) v
}
