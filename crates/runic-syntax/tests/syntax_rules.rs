//! The whitespace rules of spec §2.8, the precedence consequences listed in §3.4, operator
//! fixity, the number rules of §2.6 and the error messages. Tree shapes are checked through a
//! fully parenthesised rendering written here (independent of the pretty-printer).

use runic_syntax::lexer::{lex, Tok};
use runic_syntax::*;

/// Fully parenthesised rendering of the parts of a tree these tests look at.
fn sx(e: &Exp) -> String {
    match &e.kind {
        ExpKind::Literal(Literal::Int { value, .. }) => value.to_string(),
        ExpKind::Literal(Literal::Float { text, .. }) => text.clone(),
        ExpKind::Literal(l) => format!("{l:?}"),
        ExpKind::Var(q) => q.to_string(),
        ExpKind::Apply(f, args) => {
            format!(
                "(app {} {})",
                sx(f),
                args.iter().map(sx).collect::<Vec<_>>().join(" ")
            )
        }
        ExpKind::BinOp { op, lhs, rhs } => format!("({} {} {})", op.name, sx(lhs), sx(rhs)),
        ExpKind::Negate(x) => format!("(neg {})", sx(x)),
        ExpKind::Not(x) => format!("(not {})", sx(x)),
        ExpKind::Index(a, idx) => format!("(idx {} {})", sx(a), idx.len()),
        ExpKind::Project(a, f) => format!("(proj {} {f})", sx(a)),
        ExpKind::ArrayLit(es) => format!("[{}]", es.iter().map(sx).collect::<Vec<_>>().join(" ")),
        ExpKind::Tuple(es) => format!(
            "(tuple {})",
            es.iter().map(sx).collect::<Vec<_>>().join(" ")
        ),
        ExpKind::Update { target, value, .. } => format!("(with {} {})", sx(target), sx(value)),
        ExpKind::Range { start, end, .. } => format!("(range {} {})", sx(start), sx(end)),
        ExpKind::Coerce(e, _) => format!("(coerce {})", sx(e)),
        ExpKind::Ascribe(e, _) => format!("(ascribe {})", sx(e)),
        ExpKind::OpSection(op) => format!("(section {})", op.name),
        ExpKind::LeftSection { op, lhs } => format!("(lsection {} {})", sx(lhs), op.name),
        ExpKind::RightSection { op, rhs } => format!("(rsection {} {})", op.name, sx(rhs)),
        ExpKind::Lambda { body, .. } => format!("(lambda {})", sx(body)),
        ExpKind::If {
            cond,
            then_branch,
            else_branch,
        } => {
            format!("(if {} {} {})", sx(cond), sx(then_branch), sx(else_branch))
        }
        ExpKind::Constr(c, args) => format!(
            "(#{c} {})",
            args.iter().map(sx).collect::<Vec<_>>().join(" ")
        ),
        ExpKind::LocalOpen(q, e) => format!("(open {q} {})", sx(e)),
        other => format!("{other:?}"),
    }
}

fn parse(src: &str) -> String {
    match parse_exp(FileId(0), src, 0) {
        Ok((e, _)) => sx(&e),
        Err(d) => panic!("{src:?} failed: {d:?}"),
    }
}

fn error_of(src: &str) -> String {
    match parse_program(FileId(0), src, 0) {
        Ok(_) => panic!("{src:?} should not parse"),
        Err(d) => d
            .iter()
            .map(|d| d.message.clone())
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

fn toks(src: &str) -> Vec<Tok> {
    let mut t: Vec<Tok> = lex(FileId(0), src)
        .unwrap()
        .into_iter()
        .map(|t| t.tok)
        .collect();
    t.pop(); // Eof
    t
}

// ----- §2.8 rule 1: index brackets -----

#[test]
fn bracket_touching_a_name_indexes() {
    assert_eq!(parse("a[i]"), "(idx a 1)");
    assert_eq!(parse("a [i]"), "(app a [i])");
}

#[test]
fn indexing_attaches_to_the_atom_it_touches() {
    assert_eq!(parse("xs[i][j]"), "(idx (idx xs 1) 1)");
    assert_eq!(parse("(f x)[0]"), "(idx (app f x) 1)");
    assert_eq!(parse("f(x)[0]"), "(app f (idx x 1))");
    assert_eq!(parse("f xs[i]"), "(app f (idx xs 1))");
    assert_eq!(parse("g a b.0"), "(app g a (proj b 0))");
}

#[test]
fn let_update_needs_a_touching_bracket() {
    let ok = parse_program(FileId(0), "def f (a: *[3]i32) = let a[1] = 2 in a", 0);
    assert!(ok.is_ok());
    assert!(error_of("def f (a: *[3]i32) = let a [1] = 2 in a").contains("starts an array literal"));
}

#[test]
fn types_accept_both_brackets() {
    let a = parse_type(FileId(0), "[n][m]f32").unwrap();
    let b = parse_type(FileId(0), "[n] [m]f32").unwrap();
    let (mut a, mut b) = (a, b);
    normalize::normalize_type(&mut a);
    normalize::normalize_type(&mut b);
    assert_eq!(a, b);
}

#[test]
fn local_function_with_size_parameter() {
    let p = parse_program(FileId(0), "def g = let f [n] (xs: [n]i32) = xs in f", 0).unwrap();
    let Dec::Val(v) = &p.decs[0] else { panic!() };
    assert!(matches!(&v.body.kind, ExpKind::LetFun { type_params, .. } if type_params.len() == 1));
}

// ----- §2.8 rule 2: minus -----

#[test]
fn minus_after_an_operand_is_subtraction() {
    assert_eq!(parse("f -1"), "(- f 1)");
    assert_eq!(parse("f - 1"), "(- f 1)");
    assert_eq!(parse("f-1"), "(- f 1)");
    assert_eq!(parse("f (-1)"), "(app f (neg 1))");
}

#[test]
fn minus_sections_and_negation() {
    assert_eq!(parse("(-x)"), "(neg x)");
    assert_eq!(parse("(-)"), "(section -)");
    assert_eq!(parse("(x -)"), "(lsection x -)");
    assert_eq!(parse("(+ 1)"), "(rsection + 1)");
    assert_eq!(parse("(`f` 1)"), "(rsection f 1)");
}

// ----- §2.8 rules 3-5 -----

#[test]
fn dots_are_qualified_names_projections_or_local_opens() {
    assert_eq!(parse("f32.sqrt x"), "(app f32.sqrt x)");
    assert_eq!(parse("x.0.1"), "(proj (proj x 0) 1)");
    assert_eq!(parse("(e).f"), "(proj e f)");
    assert_eq!(parse("f64.(sqrt x)"), "(open f64 (app sqrt x))");
    assert_eq!(parse("a f32.+ b"), "(f32.+ a b)");
    assert_eq!(parse("(f32.+)"), "(section f32.+)");
}

#[test]
fn constructor_payloads() {
    assert_eq!(parse("#a #b"), "(#a (#b ))");
    assert_eq!(parse("#some 1 x"), "(#some 1 x)");
}

#[test]
fn type_application_with_sizes() {
    let t = parse_type(FileId(0), "t [n]u8").unwrap();
    let TypeExp::Apply(f, arg, _) = t else {
        panic!("{t:?}")
    };
    assert!(matches!(*arg, TypeArg::Type(TypeExp::Var(..))));
    assert!(matches!(*f, TypeExp::Apply(_, ref a, _) if matches!(**a, TypeArg::Size(_))));
    let t = parse_type(FileId(0), "t ([n]u8)").unwrap();
    assert!(
        matches!(t, TypeExp::Apply(_, ref a, _) if matches!(**a, TypeArg::Type(TypeExp::Array(..))))
    );
}

// ----- §3.4 consequences -----

#[test]
fn pipes() {
    assert_eq!(
        parse("xs |> map f |> reduce (+) 0"),
        "(|> (|> xs (app map f)) (app reduce (section +) 0))"
    );
    assert_eq!(parse("a + b |> f"), "(|> (+ a b) f)");
    assert_eq!(parse("c || d |> not"), "(|> (|| c d) not)");
    assert_eq!(parse("f <| g <| x"), "(<| f (<| g x))");
}

#[test]
fn bitwise_binds_tighter_than_comparison() {
    assert_eq!(parse("x & m == 0"), "(== (& x m) 0)");
}

#[test]
fn power_is_left_associative() {
    assert_eq!(parse("2 ** 3 ** 2"), "(** (** 2 3) 2)");
}

#[test]
fn prefix_operators_bind_like_application() {
    assert_eq!(parse("-x ** 2"), "(** (neg x) 2)");
    assert_eq!(parse("-f x"), "(neg (app f x))");
    assert_eq!(parse("!p x"), "(not (app p x))");
}

#[test]
fn with_has_low_precedence() {
    assert_eq!(parse("a with [i] = v + 1"), "(with a (+ v 1))");
    assert_eq!(parse("xs ++ ys with [0] = 1"), "(with (++ xs ys) 1)");
    assert_eq!(parse("a with [i] = x + 1 |> f"), "(with a (|> (+ x 1) f))");
    assert_eq!(parse("a with [i] = x `g` y"), "(g (with a x) y)");
    assert_eq!(parse("u `g` a with [i] = x"), "(g u (with a x))");
}

#[test]
fn ranges() {
    assert_eq!(parse("0..<n-1"), "(range 0 (- n 1))");
    assert_eq!(parse("map f (0..<n)"), "(app map f (range 0 n))");
    assert!(parse_exp(FileId(0), "1..3", 0).unwrap_err()[0]
        .message
        .contains("needs `...`, `..<` or `..>`"));
}

#[test]
fn coercion_is_outermost() {
    assert_eq!(parse("e |> g :> [n]f32"), "(coerce (|> e g))");
    assert_eq!(parse("if c then a else b : i32"), "(if c a (ascribe b))");
}

#[test]
fn lambda_as_last_argument() {
    assert_eq!(
        parse("foo xs \\x -> x + 1"),
        "(app foo xs (lambda (+ x 1)))"
    );
}

// ----- user-defined operator fixity -----

#[test]
fn user_operators_take_the_fixity_of_their_longest_builtin_prefix() {
    assert_eq!(parse("a +^ b * c"), "(+^ a (* b c))");
    assert_eq!(parse("a ++ b * c"), "(++ a (* b c))");
    assert_eq!(parse("a >>= b + c"), "(>>= a (+ b c))");
    assert_eq!(parse("a >>> b == c"), "(== (>>> a b) c)");
    assert_eq!(parse("a **. b * c"), "(* (**. a b) c)");
    assert_eq!(parse("a |>> f |> g"), "(|> (|>> a f) g)");
    assert_eq!(parse("a <-> b + c"), "(<-> a (+ b c))");
    assert_eq!(parse("a !+ b + c"), "(!+ a (+ b c))");
    assert_eq!(parse("a => b & c"), "(=> a (& b c))");
    assert_eq!(parse("a f32.+ b f32.* c"), "(f32.+ a (f32.* b c))");
    assert_eq!(parse("a `f` b + c"), "(f a (+ b c))");
    assert_eq!(parse("a `f` b `g` c"), "(g (f a b) c)");
}

#[test]
fn operator_definitions() {
    let p = parse_program(
        FileId(0),
        "def (a: i32) <+> (b: i32) = a\ndef (<&>) 'a (x: a) = x",
        0,
    )
    .unwrap();
    let names: Vec<_> = p
        .decs
        .iter()
        .map(|d| match d {
            Dec::Val(v) => (v.name.clone(), v.params.len(), v.type_params.len()),
            _ => panic!(),
        })
        .collect();
    assert_eq!(
        names,
        vec![("<+>".to_string(), 2, 0), ("<&>".to_string(), 1, 1)]
    );
    assert!(error_of("def (&&) a b = a").contains("cannot be defined"));
}

// ----- lexer: numbers, names, comments -----

#[test]
fn number_rules() {
    assert_eq!(toks("1_000_000"), vec![Tok::Int(1_000_000, None)]);
    assert_eq!(
        toks("3f32"),
        vec![Tok::Float("3".into(), Some(PrimType::F32))]
    );
    assert_eq!(toks("1e3"), vec![Tok::Float("1e3".into(), None)]);
    assert_eq!(toks("2"), vec![Tok::Int(2, None)]);
    assert_eq!(toks("1."), vec![Tok::Int(1, None), Tok::Dot]);
    assert_eq!(
        toks("2 i32"),
        vec![Tok::Int(2, None), Tok::Name("i32".into())]
    );
    assert_eq!(toks("255u8"), vec![Tok::Int(255, Some(PrimType::U8))]);
    assert_eq!(
        toks("0xFF_FFi64"),
        vec![Tok::Int(0xFFFF, Some(PrimType::I64))]
    );
    assert_eq!(toks("0b1010"), vec![Tok::Int(10, None)]);
    assert_eq!(
        toks("1_0.2_5e-2f64"),
        vec![Tok::Float("10.25e-2".into(), Some(PrimType::F64))]
    );
    // 0x1.8p3 = (1 + 8/16) * 2^3 = 12
    assert_eq!(
        toks("0x1.8p3f32"),
        vec![Tok::Float("12.0".into(), Some(PrimType::F32))]
    );
    assert_eq!(
        toks("x.0.1"),
        vec![
            Tok::Name("x".into()),
            Tok::Dot,
            Tok::Int(0, None),
            Tok::Dot,
            Tok::Int(1, None)
        ]
    );
    assert_eq!(toks("-5"), vec![Tok::Symbol("-".into()), Tok::Int(5, None)]);
    assert_eq!(
        toks("1..<n"),
        vec![Tok::Int(1, None), Tok::DotDotLt, Tok::Name("n".into())]
    );
}

#[test]
fn names_wildcards_constructors_and_attributes() {
    assert_eq!(
        toks("x' f'_2 _ _x _1"),
        vec![
            Tok::Name("x'".into()),
            Tok::Name("f'_2".into()),
            Tok::Underscore,
            Tok::Name("_x".into()),
            Tok::Name("_1".into())
        ]
    );
    assert_eq!(
        toks("#some #["),
        vec![Tok::Constructor("some".into()), Tok::HashLBracket]
    );
    assert_eq!(
        toks("f32.+ M.N.<+>"),
        vec![
            Tok::QualSymbol(vec!["f32".into()], "+".into()),
            Tok::QualSymbol(vec!["M".into(), "N".into()], "<+>".into())
        ]
    );
}

#[test]
fn comments_and_symbols() {
    assert_eq!(toks("a -- comment"), vec![Tok::Name("a".into())]);
    assert_eq!(
        toks("a +-- b"),
        vec![
            Tok::Name("a".into()),
            Tok::Symbol("+--".into()),
            Tok::Name("b".into())
        ]
    );
    assert_eq!(
        toks("== = -> !"),
        vec![
            Tok::Symbol("==".into()),
            Tok::Equals,
            Tok::Arrow,
            Tok::Symbol("!".into())
        ]
    );
}

#[test]
fn char_and_string_literals() {
    assert_eq!(
        toks(r"'A' '\n' '\x41' '\65'"),
        vec![Tok::Char(65), Tok::Char(10), Tok::Char(65), Tok::Char(65)]
    );
    assert_eq!(
        toks("\"hé\\t\""),
        vec![Tok::Str(vec![b'h', 0xc3, 0xa9, b'\t'])]
    );
}

#[test]
fn non_ascii_outside_strings_is_an_error() {
    assert!(error_of("def x = λ").contains("non-ASCII"));
    assert!(parse_program(FileId(0), "-- λ is fine here\ndef x = \"λ\"", 0).is_ok());
}

#[test]
fn doc_comments_are_kept() {
    let p = parse_program(
        FileId(0),
        "-- | Adds one.\n-- More.\ndef f x = x + 1\n-- plain\ndef g = 1",
        0,
    )
    .unwrap();
    let docs: Vec<_> = p
        .decs
        .iter()
        .map(|d| {
            if let Dec::Val(v) = d {
                v.doc.clone()
            } else {
                None
            }
        })
        .collect();
    assert_eq!(docs, vec![Some("Adds one.\nMore.".to_string()), None]);
}

#[test]
fn trailing_commas() {
    assert_eq!(parse("(1, 2,)"), "(tuple 1 2)");
    assert_eq!(parse("[a, b,]"), "[a b]");
}

// ----- declarations, node ids, errors -----

#[test]
fn node_ids_are_fresh_from_the_first_id() {
    let p = parse_program(FileId(0), "def f x = x + 1", 100).unwrap();
    // Nodes: pattern x, x, 1, the addition.
    assert_eq!(p.next_id, 104);
}

#[test]
fn prelude_style_types_parse() {
    for t in [
        "(a -> x) -> [n]a -> *[n]x",
        "(n: i64) -> t -> *[n]t",
        "?[n].[n]i32",
        "#a i32 | #b",
        "{x: f32, y: f32}",
    ] {
        parse_type(FileId(0), t).unwrap_or_else(|e| panic!("{t}: {e:?}"));
    }
}

/// Module declarations, module types and their specs parse (spec §4.9).
#[test]
fn modules_parse() {
    let src = "module type S = { type t 'a [n]\n val (+) : i32 -> i32 -> i32\n val f [n] : [n]i32 -> i32\n include numeric with t = f64\n module N : { type u = i32 } }\nmodule F (P: S) (Q: { val x : i32 }) : S with t 'a [n] = [n]a = { open P }\nmodule G = F M (N.O : S)\nmodule H = (\\(X: S) -> X) M\nopen import \"a/../b\"\nlocal module I = { local def y = 1 }";
    let p = parse_program(FileId(0), src, 0).unwrap();
    assert_eq!(p.decs.len(), 6);
    let Dec::Module(m) = &p.decs[1] else { panic!() };
    assert_eq!(m.params.len(), 2);
    assert!(matches!(m.sig, Some(ModTypeExp::With(..))));
    let Dec::Module(g) = &p.decs[2] else { panic!() };
    assert!(matches!(&g.body, ModExp::Apply(f, a, _)
        if matches!(**f, ModExp::Apply(..)) && matches!(**a, ModExp::Ascribe(_, _, false, _))));
    let Dec::Open(ModExp::Import(path, _), _) = &p.decs[4] else {
        panic!()
    };
    assert_eq!(path, "a/../b");
}

#[test]
fn helpful_errors() {
    assert_eq!(
        error_of("def f = if x else y"),
        "expected `then`, found `else`"
    );
    assert_eq!(
        error_of("def f = let x = 1"),
        "unexpected end of file: this `let` needs an `in`"
    );
    assert!(error_of("module M = { def }").contains("expected a name"));
    assert!(error_of("module type S = { def x : i32 }").contains("with `val name: type`"));
}

#[test]
fn several_errors_are_reported_together() {
    let msgs = error_of("def f = if x else y\ndef g = 1\ndef h = (1 +\n");
    assert_eq!(msgs.lines().count(), 2, "{msgs}");
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = format!("def x = {}1{}", "(".repeat(100_000), ")".repeat(100_000));
    assert!(error_of(&deep).contains("nested too deeply"));
    let long = format!("def x = 1{}", " + 1".repeat(100_000));
    assert!(error_of(&long).contains("nested too deeply"));
    let lets = format!("def x = {} 1", "let a = 1 in ".repeat(10_000));
    assert!(error_of(&lets).contains("nested too deeply"));
    let types = format!("def x : {}i32 = 1", "[1]".repeat(100_000));
    assert!(error_of(&types).contains("nested too deeply"));
    let negs = format!("def x = {}1", "- ".repeat(100_000));
    assert!(error_of(&negs).contains("nested too deeply"));
    let stars = format!("def x : {}i32 = 1", "* ".repeat(100_000));
    assert!(error_of(&stars).contains("nested too deeply"));
}

#[test]
fn nesting_up_to_the_limit_fits_in_a_small_stack() {
    // Test threads have 2 MiB of stack; the deepest accepted input must fit comfortably.
    let ok = format!("def x = {}1{}", "(".repeat(450), ")".repeat(450));
    assert!(parse_program(FileId(0), &ok, 0).is_ok());
    let ok = format!("def x = {}1{}", "[".repeat(450), "]".repeat(450));
    assert!(parse_program(FileId(0), &ok, 0).is_ok());
    let ok = format!("def x = {} 1", "let a = 1 in ".repeat(300));
    assert!(parse_program(FileId(0), &ok, 0).is_ok());
    let ok = format!(
        "def x = {} 1",
        "let a = 1 ".repeat(900).replacen("1 ", "1 in ", 0) + "in"
    );
    let _ = parse_program(FileId(0), &ok, 0);
    let ok = format!("def x = {} in 1", "\\x -> f (".repeat(300));
    let _ = parse_program(FileId(0), &ok, 0);
}

#[test]
fn an_indented_import_after_open_is_a_new_declaration() {
    // Found by the round-trip property test: in a module body, `open x` followed by an
    // `import` on the next line was read as `open (x (import "a"))`.
    let src = "module x = {\n  open x\n  import \"a\"\n}\n";
    let p = parse_program(FileId(0), src, 0).expect("parses");
    let Dec::Module(m) = &p.decs[0] else {
        panic!("a module: {:?}", p.decs[0]);
    };
    let ModExp::Struct(decs, _) = &m.body else {
        panic!("a module body: {:?}", m.body);
    };
    assert_eq!(decs.len(), 2, "{decs:?}");
    assert!(matches!(decs[1], Dec::Import(..)), "{decs:?}");
    // On the same line, an `import` is still a functor argument.
    let p = parse_program(FileId(0), "module y = F import \"a\"\n", 0).expect("parses");
    let Dec::Module(m) = &p.decs[0] else {
        panic!("a module: {:?}", p.decs[0]);
    };
    assert!(matches!(m.body, ModExp::Apply(..)), "{:?}", m.body);
}
