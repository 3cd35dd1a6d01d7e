-- A top-level function whose operand type only an arithmetic operator constrains is
-- ambiguous: it may be any integer or float type, no literal fixes which, and a function
-- cannot be generalised over such a choice.
-- ==
-- error: Type is ambiguous \(could be one of a numeric type\): nothing here fixes which

def add x y = x + y
