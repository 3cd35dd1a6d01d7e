-- A program with a test block but no cases: it passes if it type-checks.
-- ==

def twice 'a (f: a -> a) (x: a) = f (f x)
