-- Helpers imported by ../../files.fut and by ../shapes/area.fut (a diamond: this file is
-- checked once).
def square (x: f64) : f64 = x * x
local def half (x: f64) : f64 = x / 2
def triangle (b: f64) (h: f64) : f64 = half (b * h)
-- Exports a name that the importer also defines: the importer's own definition wins there.
def describe : i32 = 1
