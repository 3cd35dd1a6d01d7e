-- A `with` refinement whose definition takes another number of type parameters than the
-- refined type.
-- ==
-- error: Cannot refine a type with 1 parameter\(s\) by a definition with 0

module type container = { type box 'a  val size 'a : box a -> i64 }
module type int_container = container with box = []i32
