//! Type-checking random and mutated programs must never panic (bounded: a few seconds).
mod common;
use proptest::prelude::*;

const SEEDS: &[&str] = &[
    "def sqnorm [n] (v: [n]f32) : f32 = f32.sum (map (\\x -> x * x) v)\nentry grad [n] (v: [n]f32) : [n]f32 = vjp sqnorm v 1",
    "def poly (p: (f64, f64)) : [3]f64 = let (a, b) = p in [a * b, a + b, f64.sin a]\nentry jac (a: f64) (b: f64) = transpose (jmp poly (a, b) [(1, 0), (0, 1)])",
    "def prefix_max [n] (xs: [n]i32) : [n]i32 =\n  let out = copy xs\n  let (out, _) = loop (out, best) = (out, i32.lowest) for i < n do\n    let best = i32.max best xs[i]\n    let out[i] = best\n    in (out, best)\n  in out",
    "type pt = {x: f64, y: f64}\ndef (a: pt) <+> (b: pt) : pt = {x = a.x + b.x, y = a.y + b.y}\ndef len (p: pt) = f64.(sqrt (p.x * p.x + p.y * p.y))",
    "entry picks (xs: []i64) : []i64 = let ys = filter (\\x -> x % 3 == 1) xs let k = length ys in map2 (+) (ys :> [k]i64) (iota k)",
    "def area (s: #circle f64 | #rect f64 f64) : f64 = match s case #circle r -> f64.pi * r * r case #rect w h -> w * h",
    "def f [n][m] (xs: [n*m]f32) = unflatten xs : [n][m]f32\ndef g = xs[1:3] with [0] = 2",
    "def h (r: {a: [3]i32, b: bool}) = r with a[1] = 5\ndef k = (.a) {a = 1, b = 2}\ndef z = zip3 [1] [2] [3] |> unzip3",
    "module type ord = { type t  val <= : t -> t -> bool  include numeric }\nmodule mk (O: ord) (P: { val n : i64 }) : { type t = O.t  val best [n] : [n]t -> t } = { type t = O.t  def best [n] (xs: [n]t) = xs[0] }\nmodule m = mk i32 { def n = 1i64 }\nmodule k : { type a  val z : a } = { type a = i32  def z = 1i32 }\nentry main (xs: []i32) = m.best xs + m.(best xs) + i32.(1 + 2)",
];

const VOCAB: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ".",
    "=",
    "->",
    "\\",
    "x",
    "xs",
    "f32",
    "i64",
    "[]",
    "map",
    "let",
    "in",
    "if",
    "then",
    "else",
    "loop",
    "for",
    "<",
    "do",
    "match",
    "case",
    "#c",
    "1",
    "2.5",
    ":",
    ":>",
    "+",
    "==",
    "&&",
    "unflatten",
    "rep",
    "?",
    "'t",
    "[n]",
    "def",
    "entry",
    "type",
    "module",
    "open",
    "val",
    "include",
    "with",
    "m.",
    "with",
    "f64.",
    "(+)",
    "(.0)",
    "...",
    "..<",
    "true",
];

fn tokens(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for ch in s.chars() {
        if ch.is_alphanumeric() || ch == '_' || ch == '\'' || ch == '.' {
            cur.push(ch);
        } else {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            out.push(ch.to_string());
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn mutate(seed: usize, ops: &[(u8, usize, usize)]) -> String {
    let mut toks = tokens(SEEDS[seed % SEEDS.len()]);
    for &(op, a, b) in ops {
        if toks.is_empty() {
            break;
        }
        let i = a % toks.len();
        match op % 4 {
            0 => {
                toks.remove(i);
            }
            1 => {
                let t = toks[b % toks.len()].clone();
                toks.insert(i, t);
            }
            2 => {
                let j = b % toks.len();
                toks.swap(i, j);
            }
            _ => toks[i] = VOCAB[b % VOCAB.len()].to_string(),
        }
    }
    toks.concat()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn mutated_programs_do_not_panic(seed in 0usize..64, ops in proptest::collection::vec((0u8..4, 0usize..1000, 0usize..1000), 1..4)) {
        let src = mutate(seed, &ops);
        let _ = common::check(&src);
    }

    #[test]
    fn random_token_soup_does_not_panic(words in proptest::collection::vec(0usize..1000, 1..30)) {
        let mut src = String::from("def main = ");
        for w in words {
            src.push_str(VOCAB[w % VOCAB.len()]);
            src.push(' ');
        }
        let _ = common::check(&src);
    }
}

#[test]
fn seeds_check() {
    for s in SEEDS.iter().take(6) {
        common::ok(s);
    }
}
