mod common;
use common::*;
use runic_syntax::ast::{Dec, ExpKind};
use runic_types::{Size, Type};

#[test]
fn prelude_checks() {
    let c = ok("def main = 1");
    assert!(c.prelude_decs > 20);
    assert_eq!(c.info.entries.len(), 1);
}

#[test]
fn defaulting() {
    let c = ok("def half x = x / 2\ndef two = 2.5\ndef lt x y = x < y");
    assert_eq!(def_type(&c, "half"), "i32 -> i32");
    assert_eq!(def_type(&c, "two"), "f64");
    assert_eq!(def_type(&c, "lt"), "i32 -> i32 -> bool");
}

#[test]
fn overloading_is_resolved_per_definition() {
    let e = fails("def inc x = x + 1\ndef main (y: f32) = inc y");
    assert!(e.contains("Cannot unify"), "{e}");
    assert!(e.contains("prog.fut:2:"), "{e}");
}

#[test]
fn generalisation() {
    let c = ok("def swap (a, b) = (b, a)\ndef use = (swap (1, true), swap (2.0f32, 3u8))");
    assert_eq!(def_type(&c, "swap"), "(a, b) -> (b, a)");
    assert_eq!(def_type(&c, "use"), "((bool, i32), (u8, f32))");
}

#[test]
fn projection_on_not_yet_known_types() {
    let c = ok("def f (pairs: [](i32, f32)) = map (\\p -> p.1) pairs\ndef g (pairs: [](i32, f32)) = map (.0) pairs");
    assert_eq!(
        def_type(&c, "f"),
        "[]((i32, f32)) -> []f32"
            .replace("((", "(")
            .replace("))", ")")
            .as_str()
    );
    assert!(def_type(&c, "g").ends_with("[]i32"));
}

#[test]
fn indexing_unknown_arrays() {
    let c = ok("def swap01 = map (\\r -> (r[1], r[0]))");
    let t = def_type(&c, "swap01");
    assert!(t.contains("(a, a)"), "{t}");
}

#[test]
fn getx_without_annotation_is_ambiguous() {
    let e = fails("def getx r = r.x");
    assert!(e.contains("ambiguous"), "{e}");
}

#[test]
fn local_open_qualifies_names() {
    let c = ok("def len (x: f64) (y: f64) = f64.(sqrt (x * x + y * y))");
    let vb = c
        .program
        .decs
        .iter()
        .find_map(|d| match d {
            Dec::Val(v) if v.name == "len" => Some(v),
            _ => None,
        })
        .unwrap();
    let ExpKind::Apply(f, args) = &vb.body.kind else {
        panic!("{:?}", vb.body.kind)
    };
    assert!(matches!(&f.kind, ExpKind::Var(q) if q.to_string() == "f64.sqrt"));
    let ExpKind::BinOp { op, .. } = &args[0].kind else {
        panic!()
    };
    assert_eq!(op.name.to_string(), "f64.+");
}

#[test]
fn dotted_projection_is_rewritten() {
    let c = ok("def f (p: {a: {b: i32}}) = p.a.b");
    let vb = c
        .program
        .decs
        .iter()
        .rev()
        .find_map(|d| match d {
            Dec::Val(v) => Some(v),
            _ => None,
        })
        .unwrap();
    let ExpKind::Project(inner, b) = &vb.body.kind else {
        panic!("{:?}", vb.body.kind)
    };
    assert_eq!(b, "b");
    assert!(matches!(&inner.kind, ExpKind::Project(_, a) if a == "a"));
    assert_eq!(
        c.info.exp_types[&inner.id],
        Type::Record(vec![("b".into(), Type::Prim(runic_syntax::PrimType::I32))])
    );
}

#[test]
fn records_and_updates() {
    let c = ok("type pt = {x: f64, y: f64}\ndef m (p: pt) = p with x = 1\ndef r = {y = 2i8, x = true}\ndef q (a: pt) = let {x, y} = a in x + y");
    assert_eq!(def_type(&c, "m"), "{x: f64, y: f64} -> {x: f64, y: f64}");
    assert_eq!(def_type(&c, "r"), "{x: bool, y: i8}");
    assert_eq!(def_type(&c, "q"), "{x: f64, y: f64} -> f64");
}

fn size_args_of(c: &runic_types::Checked, fname: &str) -> Vec<Vec<(String, Size)>> {
    let mut out = Vec::new();
    for d in &c.program.decs[c.prelude_decs..] {
        if let Dec::Val(v) = d {
            collect(&v.body, fname, c, &mut out);
        }
    }
    out
}

fn collect(
    e: &runic_syntax::ast::Exp,
    fname: &str,
    c: &runic_types::Checked,
    out: &mut Vec<Vec<(String, Size)>>,
) {
    // A cheap walk via Debug is not possible for ids; walk the forms used in the tests.
    match &e.kind {
        ExpKind::Var(q) if q.to_string() == fname => {
            out.push(c.info.size_args.get(&e.id).cloned().unwrap_or_default())
        }
        ExpKind::Apply(f, args) => {
            collect(f, fname, c, out);
            args.iter().for_each(|a| collect(a, fname, c, out));
        }
        ExpKind::BinOp { lhs, rhs, .. } => {
            collect(lhs, fname, c, out);
            collect(rhs, fname, c, out);
        }
        ExpKind::LetPat { rhs, body, .. } => {
            collect(rhs, fname, c, out);
            collect(body, fname, c, out);
        }
        ExpKind::Ascribe(x, _) | ExpKind::Coerce(x, _) => collect(x, fname, c, out),
        _ => {}
    }
}

#[test]
fn size_args_of_unflatten_rep_and_zeros() {
    let c = ok("def f [r][k] (xs: [r*k]f32) : [r][k]f32 = unflatten xs\n\
                def g (n: i64) : [n]f32 = rep 1\n\
                def zeros [n] : [n]f32 = replicate n 0\n\
                def h (k: i64) = map2 (+) zeros (map f32.i64 (iota (k + 1)))");
    let u = size_args_of(&c, "unflatten");
    assert_eq!(
        u,
        vec![vec![
            ("n".into(), Size::Var("r".into())),
            ("m".into(), Size::Var("k".into()))
        ]]
    );
    let r = size_args_of(&c, "rep");
    assert_eq!(r, vec![vec![("n".into(), Size::Var("n".into()))]]);
    let z = size_args_of(&c, "zeros");
    assert_eq!(z.len(), 1);
    assert_eq!(z[0][0].0, "n");
    let Size::Exp(e) = &z[0][0].1 else {
        panic!("{:?}", z)
    };
    assert!(matches!(&e.kind, ExpKind::BinOp { .. }));
}

#[test]
fn ambiguous_size() {
    let e = fails("def main = unflatten (iota 12)");
    assert!(e.contains("Ambiguous size"), "{e}");
    ok("def main = unflatten (iota 12 :> [3*4]i64)");
    ok("def main = unflatten (iota (3*4))");
}

#[test]
fn entry_point_eta_expansion() {
    let c = ok("entry dsin = vjp f64.sin");
    let ep = &c.info.entries[0];
    assert_eq!(ep.name, "dsin");
    assert_eq!(ep.params.len(), 2);
    assert!(ep
        .params
        .iter()
        .all(|p| p.ty == Type::Prim(runic_syntax::PrimType::F64)));
    assert_eq!(ep.results, vec![Type::Prim(runic_syntax::PrimType::F64)]);
    let c = ok("entry diff = map2 (i64.-)\nentry pair (x: i32) = (x, x + 1)");
    assert_eq!(c.info.entries[0].params.len(), 2);
    assert_eq!(c.info.entries[1].results.len(), 2);
}

#[test]
fn ad_function_types() {
    let c = ok("def a = jvp2\ndef b = vjp\ndef c = mjp\ndef d = with_vjp_tape");
    assert_eq!(def_type(&c, "a"), "(a -> b) -> a -> a -> (b, b)");
    assert_eq!(def_type(&c, "b"), "(a -> b) -> a -> b -> a");
    assert!(
        def_type(&c, "c").ends_with("a -> [][]b -> [][]a") || def_type(&c, "c").contains("-> a ->")
    );
}

const APPENDIX_B: &[&str] = &[
    "def sqnorm [n] (v: [n]f32) : f32 = f32.sum (map (\\x -> x * x) v)\n\
     entry grad [n] (v: [n]f32) : [n]f32 = vjp sqnorm v 1\n\
     entry dir [n] (v: [n]f32) : f32 = jvp sqnorm v (replicate n 1)",
    "def poly (p: (f64, f64)) : [3]f64 =\n  let (a, b) = p\n  in [a * b, a + b, f64.sin a]\n\
     entry jac_fwd (a: f64) (b: f64) : [3][2]f64 =\n  let cols = jmp poly (a, b) [(1, 0), (0, 1)]\n  in transpose cols\n\
     entry jac_rev (a: f64) (b: f64) : [3][2]f64 =\n  tabulate 3 (\\i -> let (da, db) = vjp poly (a, b) (tabulate 3 (\\j -> f64.bool (i == j)))\n                    in [da, db])",
    "def weighted_hist [n] (bins: [n]i64) (w: f32) (xs: [n]f32) : [4]f32 =\n  hist (+) 0 4 bins (map (* w) xs)\n\
     entry dw [n] (bins: [n]i64) (w: f32) (xs: [n]f32) : f32 =\n  jvp (\\w' -> f32.sum (weighted_hist bins w' xs)) w 1",
    "def prefix_max [n] (xs: [n]i32) : [n]i32 =\n  let out = copy xs\n  let (out, _) =\n    loop (out, best) = (out, i32.lowest) for i < n do\n      let best = i32.max best xs[i]\n      let out[i] = best\n      in (out, best)\n  in out",
    "type pt = {x: f64, y: f64}\ndef (a: pt) <+> (b: pt) : pt = {x = a.x + b.x, y = a.y + b.y}\n\
     def len (p: pt) = f64.(sqrt (p.x * p.x + p.y * p.y))\n\
     entry walk (n: i64) : f64 =\n  let step = {x = 0.5, y = 1.0}\n  in len (loop p = {x = 0, y = 0} for _i < n do p <+> step)",
    "entry picks (xs: []i64) : []i64 =\n  let ys = filter (\\x -> x % 3 == 1) xs\n  let k = length ys\n  in map2 (+) (ys :> [k]i64) (iota k)",
    "def f (v: [2]f64) : f64 = v[0] * v[0] * v[1]\ndef grad (v: [2]f64) : [2]f64 = vjp f v 1\n\
     entry hvp (v: [2]f64) (d: [2]f64) : [2]f64 = jvp grad v d",
];

#[test]
fn appendix_b_programs_check() {
    for src in APPENDIX_B {
        let c = ok(src);
        assert!(!c.info.entries.is_empty() || src.contains("prefix_max"));
    }
}

#[test]
fn appendix_b_types() {
    let c = ok(APPENDIX_B[4]);
    assert_eq!(
        c.info.entries[0].params[0].ty,
        Type::Prim(runic_syntax::PrimType::I64)
    );
    let c = ok(APPENDIX_B[0]);
    let g = &c.info.entries[0];
    assert_eq!(g.params[0].ty.to_string(), "[n]f32");
}

#[test]
fn assorted_forms() {
    let c = ok("def a = -128 : i8\n\
                def b = 'A' + 1u8\n\
                def s = \"héllo\"\n\
                def l (n: i64) = loop acc = 0 for i < n do acc + i\n\
                def w = loop x = 1 while x < 1000 do x * 3\n\
                def fi (xs: []f32) = loop s = 0 for x in xs do s + x\n\
                def imp (acc: i32) = loop acc for i < 10 do acc + 1\n\
                def asr (x: i32) = assert (x > 0) (#[trace] x)\n\
                def r (n: i64) = (0..<n, 1...n, 0..2..<n)\n\
                def sl (xs: [10]i32) = (xs[1:], xs[:3], xs[::-1])\n\
                def sec = (map (+ 1) [1, 2], map (2 -) [1, 2], map (`i32.max` 3) [1])\n\
                def bits = (1u32 u32.>>> 2, i64.f32 2.5, (2: f32.int_t), (1: f64.t))");
    assert_eq!(def_type(&c, "a"), "i8");
    assert_eq!(def_type(&c, "b"), "u8");
    assert_eq!(def_type(&c, "s"), "[6]u8");
    assert_eq!(def_type(&c, "l"), "i64 -> i64");
    assert_eq!(def_type(&c, "w"), "i32");
    assert_eq!(def_type(&c, "fi"), "[]f32 -> f32");
    assert_eq!(def_type(&c, "imp"), "i32 -> i32");
    assert_eq!(def_type(&c, "r"), "i64 -> ([n]i64, [?]i64, []i64)");
    assert_eq!(def_type(&c, "sl"), "[10]i32 -> ([?]i32, [3]i32, [10]i32)");
    assert_eq!(def_type(&c, "sec"), "([2]i32, [2]i32, [1]i32)");
}

#[test]
fn sums_and_match() {
    let c = ok("type opt = #some i32 | #none\n\
                def get (o: opt) = match o case #some x -> x case #none -> 0\n\
                def mk : opt = #some 3\n\
                def lit (x: i32) = match x case 0 -> true case _ -> false");
    assert_eq!(def_type(&c, "get"), "(#none | #some i32) -> i32");
    assert_eq!(def_type(&c, "mk"), "#none | #some i32");
    let e = fails("def lit (x: i32) = match x case 0 -> true case 1 -> false");
    assert!(e.contains("Unmatched cases"), "{e}");
}

#[test]
fn literal_types_are_recorded() {
    let c = ok("def f (x: f32) = x + 1");
    let vb = c
        .program
        .decs
        .iter()
        .rev()
        .find_map(|d| match d {
            Dec::Val(v) => Some(v),
            _ => None,
        })
        .unwrap();
    let ExpKind::BinOp { rhs, .. } = &vb.body.kind else {
        panic!()
    };
    assert_eq!(
        c.info.exp_types[&rhs.id],
        Type::Prim(runic_syntax::PrimType::F32)
    );
}

#[test]
fn user_ids_starting_at_zero_are_accepted() {
    let mut sm = runic_syntax::SourceMap::new();
    let src = "def main (x: i32) = x + 1";
    let f = sm.add("p.fut", src);
    let prog = runic_syntax::parse_program(f, src, 0).unwrap();
    let c = runic_types::check_program(prog, &sm).unwrap();
    // Prelude ids were moved after the user's; every id has one type.
    let main = c.program.decs.last().unwrap();
    let Dec::Val(vb) = main else { panic!() };
    assert_eq!(
        c.info.exp_types[&vb.body.id],
        Type::Prim(runic_syntax::PrimType::I32)
    );
    assert!(c.prelude_decs > 0);
}

#[test]
fn local_polymorphism_and_prelude_combinators() {
    let c = ok("def p = let f 't (x: t) = x in (f 1i32, f true)\n\
                def q (xs: []f32) = foldl (+) 0 xs\n\
                def r = iterate 3 (\\x -> x * 2) 1\n\
                def s (xs: []i32) = xs |> map (+ 1) |> reduce (+) 0\n\
                def t = (id >-> not) true\n\
                def u (m: [2][3]f32) = m |> flatten |> unflatten : [2][3]f32");
    assert_eq!(def_type(&c, "p"), "(i32, bool)");
    assert_eq!(def_type(&c, "q"), "[]f32 -> f32");
    assert_eq!(def_type(&c, "r"), "i32");
    assert_eq!(def_type(&c, "s"), "[]i32 -> i32");
    assert_eq!(def_type(&c, "t"), "bool");
    assert_eq!(def_type(&c, "u"), "[2][3]f32 -> [2][3]f32");
}

#[test]
fn several_errors_are_reported() {
    let e = fails("def a : i32 = true\ndef b = nope\ndef c = 1");
    assert!(
        e.contains("prog.fut:1:") && e.contains("prog.fut:2:"),
        "{e}"
    );
}
