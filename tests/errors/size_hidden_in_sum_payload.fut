-- A function is passed where its parameter's size would be hidden in a constructor's
-- payload: a value of the sum type does not show that size.
-- ==
-- error: a size inside a sum type's payload cannot be known from the value

type opt 't = #none | #some t

def build 'e (f: i64 -> opt e) (k: i64) : opt ([k](opt e)) = #some (tabulate k f)

def leaf (k: i64) : opt i64 = #some k

def main = build (build leaf) 2
