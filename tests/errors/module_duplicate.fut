-- The same module name defined twice in one file.
-- ==
-- error: Duplicate definition of module "M"

module M = { def x = 1i32 }
module M = { def x = 2i32 }
