-- A function that may return a top-level definition returns nothing consumable.
-- ==
-- error: Consuming "pick", which is not consumable

def weights : []f32 = [0.25, 0.75]

def pick (k: i64) = if k == 0 then weights else replicate k 1f32

def tweak (k: i64) = pick k with [0] = 1
