-- Importing a file that does not exist.
-- ==
-- error: Cannot import "modlib/no_such_file"

import "modlib/no_such_file"

def main = 1i32
