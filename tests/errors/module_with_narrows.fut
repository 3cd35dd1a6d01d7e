-- A `with` refinement that narrows a lifted type parameter of the refined type to a
-- non-lifted one.
-- ==
-- error: Cannot refine a type whose parameter is "'\^f" by one whose parameter is "'f"

module type runner = { type task '^f  val run '^f : task f -> i32 }
module type plain_runner = runner with task 'f = (f, i32)
