-- A library with a type error (for ../import_error_in_imported_file.fut).

def helper (x: i32) : i32 =
  x + 1.5f32
