-- A loop whose tape would exceed reverse mode's memory budget (256 MiB) is strip-mined
-- automatically: 20000 iterations over 4000 f64 would need a 640 MB tape; strip-mined, the
-- whole program peaks at about 30 MB (checked by hand with /usr/bin/time: 27 MB, against
-- 633 MB with #[stripmine(0)]). Expected value: the gradient of x ↦ Σ (x + n·0.5) is all
-- ones, so its sum is m.
--
-- ir only: the interpreter has no such budget (its runtime tape is per scalar), and
-- 8·10⁷ differentiated element steps take it about 45 s.
-- ==
-- tags { autodiff no_interp }
-- entry: big_tape
-- input { 4000i64 20000 } output { 4000.0 }

entry big_tape (m: i64) (n: i32) =
  let xs = replicate m 0.5
  let g = vjp (\xs -> f64.sum (loop ys = xs for _i < n do map (+ 0.5) ys)) xs 1
  in f64.sum g
