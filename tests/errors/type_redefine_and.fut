-- `&&` cannot be redefined.
-- ==
-- error: cannot be (re)?defined

def (&&) (a: bool) (b: bool) = a
