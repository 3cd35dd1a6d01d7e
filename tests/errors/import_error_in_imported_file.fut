-- A type error inside an imported file is reported in that file.
-- ==
-- error: modlib/bad_helper.fut:4:.*Cannot unify

import "modlib/bad_helper"

def main : i32 = helper 1
