-- A `let` that binds a value cannot also bind a type parameter.
-- ==
-- error: Type parameters can only be given to a function definition

def twice (x: f32) =
  let 'a y = x
  in y + y
