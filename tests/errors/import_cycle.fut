-- Files that import each other: the error shows the chain of files.
-- ==
-- error: Import cycle: .*cycle_a.fut imports .*cycle_b.fut imports .*cycle_a.fut

import "modlib/cycle_a"

def main = 1i32
