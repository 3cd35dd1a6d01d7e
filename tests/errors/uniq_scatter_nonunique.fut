-- scatter consumes its destination, which must therefore be consumable.
-- ==
-- error: Consuming "dest", which is not consumable

def f (dest: []i32) = scatter dest [0] [1]
