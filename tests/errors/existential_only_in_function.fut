-- An existential size that only a function type inside the quantified type uses: no value
-- of the type shows it.
-- ==
-- error: Existential size "n" is used only inside a function type

def make (k: i64) : ?[n].bool -> [n]bool = \(b: bool) -> replicate k b
