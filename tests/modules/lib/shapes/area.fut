-- Areas, using ../util/math.fut through a relative path with "..".
import "../util/math"

def circle (r: f64) : f64 = f64.pi * square r
def rect (w: f64) (h: f64) : f64 = w * h
def tri (b: f64) (h: f64) : f64 = triangle b h
