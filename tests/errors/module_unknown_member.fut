-- A qualified name whose module has no such member.
-- ==
-- error: Module "geometry" has no member "aera"; did you mean "geometry.area"

module geometry = {
  def area (w: f64) (h: f64) = w * h
}

def main = geometry.aera 2 3
