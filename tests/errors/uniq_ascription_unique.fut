-- Ascribing a unique type does not make a shared value unique.
-- ==
-- error: Consuming "shared", which is not consumable \(it is ascribed the unique type \*\[\]i16\)

def own (shared: []i16) = shared : *[]i16
