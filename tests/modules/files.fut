-- Multi-file programs: import (not re-exported), module M = import, "..", a file imported
-- twice is checked once, an importer's definition shadowing an imported name.

import "lib/util/math"
module area = import "lib/shapes/area"

def describe : i32 = 2

-- square 3 = 9; rect 2 5 = 10; tri 4 3 = 6; circle 1 = pi.
-- ==
-- entry: shapes
-- input { 3.0 } output { 9.0 10.0 6.0 3.141592653589793 2 }
entry shapes (x: f64) = (square x, area.rect 2 5, area.tri 4 3, area.circle 1, describe)
