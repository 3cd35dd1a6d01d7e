-- Ascription with a module type that does not exist.
-- ==
-- error: Unknown module type "vector_space"

module M : vector_space = { def x = 1 }
