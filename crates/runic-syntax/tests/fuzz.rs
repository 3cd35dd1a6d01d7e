//! The parser never panics: random bytes, random token soups and mutated valid programs.
//! Whenever a mutated program happens to parse, it must also survive a print/parse round trip.

use proptest::prelude::*;
use runic_syntax::normalize::normalize_program;
use runic_syntax::pretty::print_program;
use runic_syntax::*;

const SAMPLES: &[&str] = &[
    r#"def sqnorm [n] (v: [n]f32) : f32 = f32.sum (map (\x -> x * x) v)
entry grad [n] (v: [n]f32) : [n]f32 = vjp sqnorm v 1
"#,
    r#"def prefix_max [n] (xs: [n]i32) : [n]i32 =
  let out = copy xs
  let (out, _) =
    loop (out, best) = (out, i32.lowest) for i < n do
      let best = i32.max best xs[i]
      let out[i] = best
      in (out, best)
  in out
"#,
    r#"type pt = {x: f64, y: f64}
def (a: pt) <+> (b: pt) : pt = {x = a.x + b.x, y = a.y + b.y}
def len (p: pt) = f64.(sqrt (p.x * p.x + p.y * p.y))
entry walk (n: i64) : f64 =
  let step = {x = 0.5, y = 1.0}
  in len (loop p = {x = 0, y = 0} for _i < n do p <+> step)
"#,
    r#"-- | Shapes.
type^ shape 'a = #circle f64 | #rect f64 f64 | #poly ([]a)
def area (s: shape i32) : f64 =
  match s
  case #circle r -> f64.pi * r * r
  case #rect w h -> w * h
  case _ -> -1.0
#[noinline]
def upd (a: *[]i32) (r: {f: [3]i32}) = (a with [0] = 1, r with f[2] = 0, a[1:3:-1], a[::2], 'c', "s\n")
entry main (xs: []i64) = xs |> map (+1) |> filter (>0) |> reduce (+) 0 |> (\x -> x ** 2 ... 10) |> (.0)
def f = assert (1 < 2) (#[trace] ???) :> [0]i32
"#,
    r#"import "lib/util/math"
module type ordered = { type t  val <= : t -> t -> bool  include has_zero with t = i32 }
module mk_sort (O: ordered) (P: { val n : i64 }) : { val sort [n] : [n]O.t -> [n]O.t } = {
  local open O
  def sort [n] (xs: [n]t) = xs
}
module s = mk_sort i32 { def n = 3i64 } : { val sort [n] : [n]i32 -> [n]i32 }
module L = (\(X: { type t }) -> { type u = X.t }) (import "x")
entry main (xs: []i32) = s.sort xs |> map (i32.+ 1) |> s.(sort)
"#,
];

/// Byte offsets of the tokens of `src` (the samples all lex).
fn token_ranges(src: &str) -> Vec<(usize, usize)> {
    let toks = lexer::lex(FileId(0), src).unwrap_or_default();
    toks.iter()
        .map(|t| (t.span.start as usize, t.span.end as usize))
        .filter(|(s, e)| s < e)
        .collect()
}

/// If `text` parses, printing and re-parsing must give the same tree.
fn check(text: &str) -> Result<(), TestCaseError> {
    if let Ok(mut p) = parse_program(FileId(0), text, 0) {
        let printed = print_program(&p);
        let mut back = parse_program(FileId(0), &printed, 0).map_err(|d| {
            TestCaseError::fail(format!("reprint of {text:?} fails:\n{printed}\n{d:?}"))
        })?;
        normalize_program(&mut p);
        normalize_program(&mut back);
        prop_assert_eq!(back, p, "input {:?} printed as\n{}", text, printed);
    }
    Ok(())
}

#[derive(Clone, Debug)]
enum Mutation {
    Delete(usize),
    Duplicate(usize),
    Swap(usize, usize),
    Truncate(usize),
}

fn mutate(src: &str, muts: &[Mutation]) -> String {
    let mut pieces: Vec<String> = Vec::new();
    let ranges = token_ranges(src);
    let mut last = 0;
    for &(s, e) in &ranges {
        pieces.push(src[last..s].to_string());
        pieces.push(src[s..e].to_string());
        last = e;
    }
    pieces.push(src[last..].to_string());
    // Token pieces sit at odd indices.
    for m in muts {
        let n = pieces.len() / 2;
        if n == 0 {
            break;
        }
        match *m {
            Mutation::Delete(i) => pieces[2 * (i % n) + 1].clear(),
            Mutation::Duplicate(i) => {
                let k = 2 * (i % n) + 1;
                let t = pieces[k].clone();
                pieces[k] = format!("{t} {t}");
            }
            Mutation::Swap(i, j) => pieces.swap(2 * (i % n) + 1, 2 * (j % n) + 1),
            Mutation::Truncate(i) => {
                let k = (2 * (i % n) + 1).min(pieces.len());
                pieces.truncate(k);
            }
        }
    }
    pieces.concat()
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => any::<usize>().prop_map(Mutation::Delete),
        3 => any::<usize>().prop_map(Mutation::Duplicate),
        3 => (any::<usize>(), any::<usize>()).prop_map(|(i, j)| Mutation::Swap(i, j)),
        1 => any::<usize>().prop_map(Mutation::Truncate),
    ]
}

const VOCAB: &[&str] = &[
    "def", "entry", "let", "in", "if", "then", "else", "loop", "for", "while", "do", "match",
    "case", "type", "type^", "with", "assert", "local", "open", "import", "module", "(", ")", "[",
    "]", "{", "}", ",", ":", ":>", "->", "=", "\\", "?", "???", "_", "'", "'^", "'~", "`", "#[",
    "#c", ".", "..", "...", "..<", "..>", "x", "f32", "f32.+", "M.x", "+", "-", "*", "!", "|>",
    "<|", "**", "&&", "1", "2.5", "3i32", "'c'", "\"s\"", "\n", "\ndef", "--", "-- |", "\0",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse_program(FileId(0), &text, 0);
        let _ = parse_exp(FileId(0), &text, 0);
        let _ = parse_type(FileId(0), &text);
    }

    #[test]
    fn ascii_soup_never_panics(text in "[ -~\n\t]{0,120}") {
        let _ = parse_exp(FileId(0), &text, 0);
        check(&text)?;
    }

    #[test]
    fn token_soup_never_panics(
        words in prop::collection::vec((prop::sample::select(VOCAB), any::<bool>()), 0..60)
    ) {
        let text: String = words.iter().map(|(w, space)| if *space { format!("{w} ") } else { w.to_string() }).collect();
        let _ = parse_exp(FileId(0), &text, 0);
        let _ = parse_type(FileId(0), &text);
        check(&text)?;
    }

    #[test]
    fn mutated_programs_never_panic(
        which in 0..SAMPLES.len(),
        muts in prop::collection::vec(mutation(), 1..4)
    ) {
        let text = mutate(SAMPLES[which], &muts);
        check(&text)?;
    }
}

#[test]
fn samples_parse() {
    for s in SAMPLES {
        parse_program(FileId(0), s, 0).unwrap_or_else(|e| panic!("{s}\n{e:?}"));
        check(s).unwrap();
    }
}
