-- A run-time error raised inside a prelude definition (the AD wrapper `vjp`, the
-- combinators `|>` and `flip`) is reported at the user's expression that reached it, the
-- innermost call site in a user file, not at a line of `<prelude>`; the prelude frames
-- inside that call are left out of the backtrace. Both backends print the same report.
-- Expected: the locations below are counted by hand (line:first column-column after the last).
-- ==
-- entry: direct
-- input { [1.0, 2.0, 3.0] [1.0] } error: prelude_calls.fut:14:3-23: Error: Value of \(desugared\) shape \[1\] cannot match shape of type "\[3\]f64"
-- input { [1.0, 2.0, 3.0] [1.0] } error: Backtrace:\n-> #0  [^\n]*prelude_calls.fut:14:3-23\n$
-- input { [1.0, 2.0] [1.0, 1.0] } output { [2.0, 2.0] }

-- The cotangent's shape does not match the result's: the check is in `vjp`'s definition.
entry direct (xs: []f64) (s: []f64) =
  vjp (map (* 2)) xs s

-- ==
-- entry: piped
-- input { [1.0, 2.0, 3.0] [1.0] } error: prelude_calls.fut:23:3-26: Error: Value of \(desugared\) shape \[1\] cannot match
-- input { [1.0, 2.0] [1.0, 1.0] } output { [2.0, 2.0] }

-- The same through `|>` (and `vjp` partially applied inside it).
entry piped (xs: []f64) (s: []f64) =
  s |> vjp (map (* 2)) xs

-- ==
-- entry: flipped
-- input { [1.0, 2.0, 3.0] [1.0] } error: prelude_calls.fut:32:3-30: Error: Value of
-- input { [1.0, 2.0] [1.0, 1.0] } output { [2.0, 2.0] }

-- And through `flip`.
entry flipped (xs: []f64) (s: []f64) =
  flip (vjp (map (* 2))) s xs
