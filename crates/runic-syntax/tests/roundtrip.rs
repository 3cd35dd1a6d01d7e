//! Property: printing a tree and parsing the text back gives the same tree (modulo spans and
//! node ids), for randomly generated expressions, patterns, types and declarations.

use proptest::prelude::*;
use runic_syntax::normalize::{normalize_exp, normalize_pat, normalize_program, normalize_type};
use runic_syntax::pretty::{print_exp, print_pat, print_program, print_type};
use runic_syntax::*;

fn sp() -> Span {
    Span::default()
}

fn mk(kind: ExpKind) -> Exp {
    Exp {
        id: NodeId(0),
        span: sp(),
        kind,
    }
}

fn mkp(kind: PatKind) -> Pat {
    Pat {
        id: NodeId(0),
        span: sp(),
        kind,
    }
}

fn name() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "x", "y", "f", "xs", "a'", "_b", "n", "foo_1", "i32", "acc",
    ])
    .prop_map(String::from)
}

fn field() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["f", "g", "pos", "0", "1", "12"]).prop_map(String::from)
}

fn qual_name() -> impl Strategy<Value = QualName> {
    (
        prop::collection::vec(prop::sample::select(vec!["M", "f32", "N"]), 0..3),
        name(),
    )
        .prop_map(|(q, n)| QualName {
            quals: q.into_iter().map(String::from).collect(),
            name: n,
        })
}

fn op() -> impl Strategy<Value = BinOpName> {
    let sym = prop::sample::select(vec![
        "+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "|>", "<|", "&&", "||", "**",
        "++", "<+>", ">>=", "%%", "//", "&", "^", "|", "<<", ">>", "=>", "!+", "+--", "+.", "<->",
    ]);
    prop_oneof![
        6 => sym.prop_map(|s| BinOpName { name: QualName::unqual(s), backtick: false, span: Span::default() }),
        1 => prop::sample::select(vec!["+", "*", "<"]).prop_map(|s| BinOpName {
            name: QualName { quals: vec!["f32".into()], name: s.into() },
            backtick: false,
            span: Span::default()
        }),
        1 => qual_name().prop_map(|q| BinOpName { name: q, backtick: true, span: Span::default() }),
    ]
}

fn prim_suffix(ints: bool) -> impl Strategy<Value = Option<PrimType>> {
    let opts: Vec<PrimType> = PrimType::ALL
        .iter()
        .copied()
        .filter(|p| if ints { p.is_int() } else { p.is_float() })
        .collect();
    prop::option::of(prop::sample::select(opts))
}

fn literal() -> impl Strategy<Value = Literal> {
    prop_oneof![
        (any::<u64>(), prim_suffix(true)).prop_map(|(v, suffix)| Literal::Int {
            value: v as u128,
            suffix
        }),
        (
            prop::sample::select(vec!["1.5", "2e3", "0.25", "1.5e-3", "10.0", "3E+2"]),
            prim_suffix(false)
        )
            .prop_map(|(t, suffix)| Literal::Float {
                text: t.into(),
                suffix
            }),
        prim_suffix(false)
            .prop_filter("needs a suffix", |s| s.is_some())
            .prop_map(|suffix| Literal::Float {
                text: "3".into(),
                suffix
            }),
        any::<bool>().prop_map(Literal::Bool),
        prop::sample::select(vec!['a', '\'', '\\', '\n', '\u{1}', 'é', '"', ' '])
            .prop_map(|c| Literal::Char(c as u32)),
        "[a-z\"\\\\\n\tλ ]{0,6}".prop_map(|s| Literal::String(s.into_bytes())),
    ]
}

fn attr() -> impl Strategy<Value = Attr> {
    let leaf = prop_oneof![
        name().prop_map(Attr::Name),
        (0i64..1000).prop_map(Attr::Int)
    ];
    leaf.prop_recursive(2, 6, 3, |inner| {
        (name(), prop::collection::vec(inner, 0..3)).prop_map(|(n, args)| Attr::Call(n, args))
    })
}

fn size_exp() -> impl Strategy<Value = SizeExp> {
    prop_oneof![
        Just(SizeExp::Anon(Span::default())),
        name().prop_map(|n| SizeExp::Exp(Box::new(mk(ExpKind::Var(QualName::unqual(n)))))),
        (0u64..100).prop_map(|v| SizeExp::Exp(Box::new(mk(ExpKind::Literal(Literal::Int {
            value: v as u128,
            suffix: None
        }))))),
    ]
}

fn type_exp() -> impl Strategy<Value = TypeExp> {
    let leaf = qual_name().prop_map(|q| TypeExp::Var(q, sp()));
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            (
                qual_name(),
                prop::collection::vec(
                    prop_oneof![
                        size_exp().prop_map(TypeArg::Size),
                        inner.clone().prop_map(TypeArg::Type)
                    ],
                    1..3
                )
            )
                .prop_map(|(q, args)| args.into_iter().fold(
                    TypeExp::Var(q, sp()),
                    |f, a| TypeExp::Apply(Box::new(f), Box::new(a), sp())
                )),
            no_singleton(inner.clone()).prop_map(|ts| TypeExp::Tuple(ts, sp())),
            prop::collection::vec((field(), inner.clone()), 0..3)
                .prop_map(|fs| TypeExp::Record(fs, sp())),
            (size_exp(), inner.clone()).prop_map(|(d, t)| TypeExp::Array(d, Box::new(t), sp())),
            inner
                .clone()
                .prop_map(|t| TypeExp::Unique(Box::new(t), sp())),
            (prop::option::of(name()), inner.clone(), inner.clone())
                .prop_map(|(n, a, b)| TypeExp::Arrow(n, Box::new(a), Box::new(b), sp())),
            prop::collection::vec((name(), prop::collection::vec(inner.clone(), 0..3)), 1..3)
                .prop_map(|cs| TypeExp::Sum(cs, sp())),
            (prop::collection::vec(name(), 1..3), inner.clone())
                .prop_map(|(ns, t)| TypeExp::Exists(ns, Box::new(t), sp())),
        ]
    })
}

/// Tuple components: there are no one-element tuples.
fn no_singleton<T: std::fmt::Debug + Clone>(s: BoxedStrategy<T>) -> impl Strategy<Value = Vec<T>> {
    prop::collection::vec(s, 0..4).prop_filter("no one-element tuples", |v| v.len() != 1)
}

fn pattern() -> impl Strategy<Value = Pat> {
    let leaf = prop_oneof![
        name().prop_map(|n| mkp(PatKind::Var(n))),
        prop::sample::select(vec!["+", "<+>", "-"]).prop_map(|n| mkp(PatKind::Var(n.into()))),
        Just(mkp(PatKind::Wildcard)),
        (literal(), any::<bool>())
            .prop_map(|(lit, negated)| mkp(PatKind::Literal { lit, negated })),
        name().prop_map(|c| mkp(PatKind::Constr(c, vec![]))),
    ];
    leaf.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            no_singleton(inner.clone()).prop_map(|ps| mkp(PatKind::Tuple(ps))),
            prop::collection::vec((field(), inner.clone()), 0..3)
                .prop_map(|fs| mkp(PatKind::Record(fs))),
            (inner.clone(), type_exp()).prop_map(|(p, t)| mkp(PatKind::Ascribe(Box::new(p), t))),
            (name(), prop::collection::vec(inner.clone(), 1..3))
                .prop_map(|(c, ps)| mkp(PatKind::Constr(c, ps))),
            (attr(), inner.clone()).prop_map(|(a, p)| mkp(PatKind::Attr(a, Box::new(p)))),
        ]
    })
}

fn dims(e: BoxedStrategy<Exp>) -> impl Strategy<Value = Vec<DimIndex>> {
    let opt = prop::option::of(e.clone());
    prop::collection::vec(
        prop_oneof![
            e.prop_map(DimIndex::Index),
            (opt.clone(), opt.clone(), opt).prop_map(|(start, end, stride)| DimIndex::Slice {
                start,
                end,
                stride
            }),
        ],
        0..3,
    )
}

fn update_steps(e: BoxedStrategy<Exp>) -> impl Strategy<Value = Vec<UpdateStep>> {
    prop::collection::vec(
        prop_oneof![
            prop::collection::vec(e.prop_map(DimIndex::Index), 1..3)
                .prop_map(|d| UpdateStep::Index(d, sp())),
            field().prop_map(|f| UpdateStep::Field(f, sp())),
        ],
        1..3,
    )
}

fn type_params() -> impl Strategy<Value = Vec<TypeParam>> {
    // A type parameter `'a'` would lex as a character literal, so no primes here.
    let tname = name().prop_filter("no primes", |n| !n.contains('\''));
    prop::collection::vec(
        prop_oneof![
            name().prop_map(|n| TypeParam::Size(n, sp())),
            (
                tname,
                prop::sample::select(vec![
                    Liftedness::Unlifted,
                    Liftedness::SizeLifted,
                    Liftedness::Lifted
                ])
            )
                .prop_map(|(n, l)| TypeParam::Type(n, l, sp())),
        ],
        0..3,
    )
}

fn expression() -> BoxedStrategy<Exp> {
    let leaf = prop_oneof![
        literal().prop_map(|l| mk(ExpKind::Literal(l))),
        qual_name().prop_map(|q| mk(ExpKind::Var(q))),
        Just(mk(ExpKind::Hole)),
        name().prop_map(|c| mk(ExpKind::Constr(c, vec![]))),
        op().prop_map(|o| mk(ExpKind::OpSection(o))),
        prop::collection::vec(field().prop_map(ProjStep::Field), 1..3)
            .prop_map(|s| mk(ExpKind::ProjSection(s))),
    ];
    leaf.prop_recursive(4, 40, 4, |inner| {
        let e = inner.clone().boxed();
        let opt = prop::option::of(inner.clone());
        let bx = |e: Exp| Box::new(e);
        prop_oneof![
            no_singleton(inner.clone()).prop_map(|es| mk(ExpKind::Tuple(es))),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|es| mk(ExpKind::ArrayLit(es))),
            prop::collection::vec(
                prop_oneof![
                    (field(), inner.clone()).prop_map(|(f, e)| RecordField::Explicit(f, e)),
                    name().prop_map(|n| RecordField::Punned(n, sp())),
                ],
                0..3
            )
            .prop_map(|fs| mk(ExpKind::Record(fs))),
            (
                inner.clone(),
                opt.clone(),
                inner.clone(),
                prop::sample::select(vec![
                    RangeEnd::UpToExclusive,
                    RangeEnd::DownToExclusive,
                    RangeEnd::Inclusive
                ])
            )
                .prop_map(move |(s, m, en, kind)| mk(ExpKind::Range {
                    start: bx(s),
                    second: m.map(Box::new),
                    end: bx(en),
                    kind
                })),
            (inner.clone(), field()).prop_map(|(e, f)| mk(ExpKind::Project(Box::new(e), f))),
            (inner.clone(), dims(e.clone())).prop_map(|(e, d)| mk(ExpKind::Index(Box::new(e), d))),
            (inner.clone(), prop::collection::vec(inner.clone(), 1..3))
                .prop_map(|(f, args)| mk(ExpKind::Apply(Box::new(f), args))),
            inner.clone().prop_map(|e| mk(ExpKind::Negate(Box::new(e)))),
            inner.clone().prop_map(|e| mk(ExpKind::Not(Box::new(e)))),
            (op(), inner.clone(), inner.clone()).prop_map(|(op, l, r)| mk(ExpKind::BinOp {
                op,
                lhs: Box::new(l),
                rhs: Box::new(r)
            })),
            (op(), inner.clone()).prop_map(|(op, l)| mk(ExpKind::LeftSection {
                op,
                lhs: Box::new(l)
            })),
            (
                op().prop_filter("(-e) is negation", |o| o.name.to_string() != "-"
                    || o.backtick),
                inner.clone()
            )
                .prop_map(|(op, r)| mk(ExpKind::RightSection {
                    op,
                    rhs: Box::new(r)
                })),
            (
                prop::collection::vec(pattern(), 1..3),
                prop::option::of(type_exp()),
                inner.clone()
            )
                .prop_map(|(params, ret, b)| mk(ExpKind::Lambda {
                    params,
                    ret,
                    body: Box::new(b)
                })),
            (inner.clone(), inner.clone(), inner.clone()).prop_map(|(c, t, f)| mk(ExpKind::If {
                cond: Box::new(c),
                then_branch: Box::new(t),
                else_branch: Box::new(f)
            })),
            (
                prop::collection::vec(name(), 0..2),
                pattern(),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(sizes, pat, rhs, body)| mk(ExpKind::LetPat {
                    sizes: sizes.into_iter().map(|n| (n, sp())).collect(),
                    pat,
                    rhs: Box::new(rhs),
                    body: Box::new(body)
                })),
            (
                prop_oneof![name(), Just("<+>".to_string())],
                type_params(),
                prop::collection::vec(pattern(), 1..3),
                prop::option::of(type_exp()),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(name, type_params, params, ret, rhs, body)| mk(
                    ExpKind::LetFun {
                        name,
                        name_span: sp(),
                        type_params,
                        params,
                        ret,
                        rhs: Box::new(rhs),
                        body: Box::new(body)
                    }
                )),
            (
                name(),
                update_steps(e.clone()),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(name, steps, rhs, body)| mk(ExpKind::LetUpdate {
                    name,
                    name_span: sp(),
                    steps,
                    rhs: Box::new(rhs),
                    body: Box::new(body)
                })),
            (inner.clone(), update_steps(e.clone()), inner.clone()).prop_map(|(t, steps, v)| mk(
                ExpKind::Update {
                    target: Box::new(t),
                    steps,
                    value: Box::new(v)
                }
            )),
            (
                pattern(),
                opt.clone(),
                prop_oneof![
                    (name(), inner.clone()).prop_map(|(var, b)| LoopForm::For {
                        var,
                        var_span: sp(),
                        bound: Box::new(b)
                    }),
                    (pattern(), inner.clone()).prop_map(|(pat, a)| LoopForm::ForIn {
                        pat,
                        array: Box::new(a)
                    }),
                    inner.clone().prop_map(|c| LoopForm::While(Box::new(c))),
                ],
                inner.clone()
            )
                .prop_map(|(pat, init, form, body)| mk(ExpKind::Loop {
                    pat,
                    init: init.map(Box::new),
                    form,
                    body: Box::new(body)
                })),
            (
                inner.clone(),
                prop::collection::vec(
                    (pattern(), inner.clone()).prop_map(|(pat, body)| MatchCase {
                        pat,
                        body,
                        span: sp()
                    }),
                    1..3
                )
            )
                .prop_map(|(s, cases)| mk(ExpKind::Match {
                    scrutinee: Box::new(s),
                    cases
                })),
            (inner.clone(), type_exp()).prop_map(|(e, t)| mk(ExpKind::Ascribe(Box::new(e), t))),
            (inner.clone(), type_exp()).prop_map(|(e, t)| mk(ExpKind::Coerce(Box::new(e), t))),
            (inner.clone(), inner.clone()).prop_map(|(c, b)| mk(ExpKind::Assert {
                cond: Box::new(c),
                body: Box::new(b)
            })),
            (attr(), inner.clone()).prop_map(|(a, e)| mk(ExpKind::Attr(a, Box::new(e)))),
            (name(), prop::collection::vec(inner.clone(), 1..3))
                .prop_map(|(c, es)| mk(ExpKind::Constr(c, es))),
            (qual_name(), inner.clone()).prop_map(|(q, e)| mk(ExpKind::LocalOpen(q, Box::new(e)))),
            (prop::collection::vec(
                prop_oneof![
                    field().prop_map(ProjStep::Field),
                    prop::collection::vec(inner.clone().prop_map(DimIndex::Index), 1..2)
                        .prop_map(ProjStep::Index),
                ],
                1..3
            ))
            .prop_map(|s| mk(ExpKind::ProjSection(s))),
        ]
    })
    .boxed()
}

fn declaration() -> impl Strategy<Value = Dec> {
    let doc = prop::option::of(prop::sample::select(vec![
        "",
        "Adds things.",
        "Two\nlines",
        "ends\n",
    ]));
    let val = (
        prop::sample::select(vec![ValKind::Def, ValKind::Entry, ValKind::Let]),
        prop_oneof![
            name(),
            prop::sample::select(vec!["<+>", "+", "|>>"]).prop_map(String::from)
        ],
        type_params(),
        prop::collection::vec(pattern(), 0..3),
        prop::option::of(type_exp()),
        expression(),
        prop::collection::vec(attr(), 0..2),
        doc.clone(),
    )
        .prop_map(|(kind, name, type_params, params, ret, body, attrs, doc)| {
            Dec::Val(ValBind {
                kind,
                name,
                name_span: sp(),
                type_params,
                params,
                ret,
                body,
                attrs,
                doc: doc.map(String::from),
                span: sp(),
            })
        });
    let ty = (
        name(),
        prop::sample::select(vec![
            Liftedness::Unlifted,
            Liftedness::SizeLifted,
            Liftedness::Lifted,
        ]),
        type_params(),
        type_exp(),
        prop::collection::vec(attr(), 0..2),
        doc,
    )
        .prop_map(|(name, lifted, params, def, attrs, doc)| {
            Dec::Type(TypeBind {
                name,
                lifted,
                params,
                def,
                attrs,
                doc: doc.map(String::from),
                span: sp(),
            })
        });
    prop_oneof![
        6 => val,
        2 => ty,
        1 => qual_name().prop_map(|q| Dec::Open(ModExp::Var(q, sp()), sp())),
        1 => "[a-z/.]{1,8}".prop_map(|p| Dec::Import(p, sp())),
    ]
}

fn spec() -> impl Strategy<Value = Spec> {
    prop_oneof![
        (name(), type_params(), type_exp()).prop_map(|(name, type_params, ty)| Spec::Val {
            name,
            name_span: sp(),
            type_params,
            ty,
            span: sp()
        }),
        (name(), type_params(), prop::option::of(type_exp())).prop_map(|(name, params, def)| {
            Spec::Type {
                name,
                lifted: Liftedness::Unlifted,
                params,
                def,
                span: sp(),
            }
        }),
        qual_name().prop_map(|q| Spec::Include(ModTypeExp::Var(q, sp()), sp())),
    ]
}

fn mod_type() -> impl Strategy<Value = ModTypeExp> {
    prop_oneof![
        qual_name().prop_map(|q| ModTypeExp::Var(q, sp())),
        prop::collection::vec(spec(), 0..3).prop_map(|ss| ModTypeExp::Sig(ss, sp())),
        (qual_name(), name(), type_exp()).prop_map(|(q, t, te)| ModTypeExp::With(
            Box::new(ModTypeExp::Var(q, sp())),
            QualName::unqual(t),
            vec![],
            te,
            sp()
        )),
    ]
}

fn mod_exp() -> impl Strategy<Value = ModExp> {
    prop_oneof![
        qual_name().prop_map(|q| ModExp::Var(q, sp())),
        prop::collection::vec(declaration(), 0..3).prop_map(|ds| ModExp::Struct(ds, sp())),
        (qual_name(), qual_name()).prop_map(|(f, a)| ModExp::Apply(
            Box::new(ModExp::Var(f, sp())),
            Box::new(ModExp::Var(a, sp())),
            sp()
        )),
        (qual_name(), mod_type(), any::<bool>()).prop_map(|(m, mt, tr)| ModExp::Ascribe(
            Box::new(ModExp::Var(m, sp())),
            mt,
            tr,
            sp()
        )),
        "[a-z/]{1,8}".prop_map(|p| ModExp::Import(p, sp())),
    ]
}

/// Module and module type declarations (spec §4.9).
fn module_declaration() -> impl Strategy<Value = Dec> {
    let param = (name(), mod_type()).prop_map(|(name, sig)| ModParam {
        name,
        name_span: sp(),
        sig,
        span: sp(),
    });
    prop_oneof![
        (
            name(),
            prop::collection::vec(param, 0..2),
            prop::option::of(mod_type()),
            mod_exp()
        )
            .prop_map(|(name, params, sig, body)| Dec::Module(ModBind {
                name,
                name_span: sp(),
                params,
                sig,
                body,
                span: sp(),
            })),
        (name(), mod_type()).prop_map(|(name, def)| Dec::ModType(ModTypeBind {
            name,
            name_span: sp(),
            def,
            span: sp(),
        })),
    ]
}

fn program() -> impl Strategy<Value = Program> {
    prop::collection::vec(
        prop_oneof![
            5 => declaration(),
            1 => declaration().prop_map(|d| Dec::Local(Box::new(d), sp())),
            2 => module_declaration(),
        ],
        0..4,
    )
    .prop_map(|decs| Program { decs, next_id: 0 })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn expressions_round_trip(e in expression()) {
        let text = print_exp(&e);
        let (mut back, _) = parse_exp(FileId(0), &text, 0)
            .map_err(|d| TestCaseError::fail(format!("{text}\n{d:?}")))?;
        normalize_exp(&mut back);
        let mut want = e.clone();
        normalize_exp(&mut want);
        prop_assert_eq!(back, want, "printed as:\n{}", text);
    }

    #[test]
    fn patterns_round_trip(p in pattern()) {
        let text = print_pat(&p);
        let (mut back, _) = parse_pat(FileId(0), &text, 0)
            .map_err(|d| TestCaseError::fail(format!("{text}\n{d:?}")))?;
        normalize_pat(&mut back);
        let mut want = p.clone();
        normalize_pat(&mut want);
        prop_assert_eq!(back, want, "printed as:\n{}", text);
    }

    #[test]
    fn types_round_trip(t in type_exp()) {
        let text = print_type(&t);
        let mut back = parse_type(FileId(0), &text)
            .map_err(|d| TestCaseError::fail(format!("{text}\n{d:?}")))?;
        normalize_type(&mut back);
        let mut want = t.clone();
        normalize_type(&mut want);
        prop_assert_eq!(back, want, "printed as:\n{}", text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn programs_round_trip(p in program()) {
        let text = print_program(&p);
        let mut back = parse_program(FileId(0), &text, 0)
            .map_err(|d| TestCaseError::fail(format!("{text}\n{d:?}")))?;
        normalize_program(&mut back);
        let mut want = p.clone();
        normalize_program(&mut want);
        prop_assert_eq!(back, want, "printed as:\n{}", text);
    }
}
