-- A parametric module matched against a parametric module type whose parameter gives less
-- than the parametric module's own parameter needs (it uses `scale`, the type has no such value).
-- ==
-- error: does not define the value "scale"

module type field = { type t val one : t }
module type scalable = { type t val one : t val scale : t -> t -> t }

module mk_unit (F: scalable) = {
  def unit = F.scale F.one F.one
}

module u : (F: field) -> { val unit : F.t } = mk_unit
