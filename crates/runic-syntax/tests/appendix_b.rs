//! Every worked example of Appendix B of the language specification parses.

use runic_syntax::{parse_program, FileId};

fn parses(name: &str, src: &str) {
    match parse_program(FileId(0), src, 0) {
        Ok(p) => assert!(!p.decs.is_empty(), "{name}: no declarations"),
        Err(e) => panic!("{name} failed to parse: {e:#?}"),
    }
}

#[test]
fn appendix_b_1() {
    parses(
        "B.1",
        r#"def sqnorm [n] (v: [n]f32) : f32 = f32.sum (map (\x -> x * x) v)

-- gradient of the squared norm is 2v
entry grad [n] (v: [n]f32) : [n]f32 = vjp sqnorm v 1

-- directional derivative along the all-ones vector
entry dir [n] (v: [n]f32) : f32 = jvp sqnorm v (replicate n 1)
"#,
    );
}

#[test]
fn appendix_b_2() {
    parses(
        "B.2",
        r#"def poly (p: (f64, f64)) : [3]f64 =
  let (a, b) = p
  in [a * b, a + b, f64.sin a]

entry jac_fwd (a: f64) (b: f64) : [3][2]f64 =
  let cols = jmp poly (a, b) [(1, 0), (0, 1)]  -- [2][3]f64, one column per seed
  in transpose cols

entry jac_rev (a: f64) (b: f64) : [3][2]f64 =
  tabulate 3 (\i -> let (da, db) = vjp poly (a, b) (tabulate 3 (\j -> f64.bool (i == j)))
                    in [da, db])
"#,
    );
}

#[test]
fn appendix_b_3() {
    parses(
        "B.3",
        r#"def weighted_hist [n] (bins: [n]i64) (w: f32) (xs: [n]f32) : [4]f32 =
  hist (+) 0 4 bins (map (* w) xs)

entry dw [n] (bins: [n]i64) (w: f32) (xs: [n]f32) : f32 =
  jvp (\w' -> f32.sum (weighted_hist bins w' xs)) w 1
"#,
    );
}

#[test]
fn appendix_b_4() {
    parses(
        "B.4",
        r#"def prefix_max [n] (xs: [n]i32) : [n]i32 =
  let out = copy xs
  let (out, _) =
    loop (out, best) = (out, i32.lowest) for i < n do
      let best = i32.max best xs[i]
      let out[i] = best
      in (out, best)
  in out
"#,
    );
}

#[test]
fn appendix_b_5() {
    parses(
        "B.5",
        r#"type pt = {x: f64, y: f64}
def (a: pt) <+> (b: pt) : pt = {x = a.x + b.x, y = a.y + b.y}
def len (p: pt) = f64.(sqrt (p.x * p.x + p.y * p.y))
entry walk (n: i64) : f64 =
  let step = {x = 0.5, y = 1.0}
  in len (loop p = {x = 0, y = 0} for _i < n do p <+> step)
"#,
    );
}

#[test]
fn appendix_b_6() {
    parses(
        "B.6",
        r#"entry picks (xs: []i64) : []i64 =
  let ys = filter (\x -> x % 3 == 1) xs
  let k = length ys
  in map2 (+) (ys :> [k]i64) (iota k)   -- ys has an unknown size; coerce it to [k]
"#,
    );
}

#[test]
fn appendix_b_7() {
    parses(
        "B.7",
        r#"def f (v: [2]f64) : f64 = v[0] * v[0] * v[1]
def grad (v: [2]f64) : [2]f64 = vjp f v 1
entry hvp (v: [2]f64) (d: [2]f64) : [2]f64 = jvp grad v d
"#,
    );
}
