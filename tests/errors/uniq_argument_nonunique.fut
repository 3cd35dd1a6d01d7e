-- A non-unique parameter passed for a unique (consuming) parameter.
-- ==
-- error: Consuming "ys", which is not consumable

def update (xs: *[]i32) = xs with [0] = 0

def f (ys: []i32) = update ys
