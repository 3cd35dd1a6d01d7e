//! One test per forward rule: the shape of the generated IR (tangent code only where a
//! tangent is nonzero, SOACs over primal and tangent arrays, loops and branches carrying
//! tangents) and its values on the ir backend. Expected values are worked out by hand.

mod common;
use common::*;
use runic_data::{Prim, Value};
use runic_ir::*;
use std::sync::Arc;

fn entry_text(prog: &Prog, entry: &str) -> String {
    let f = prog.entry(entry).expect("entry");
    let one = Prog {
        funs: vec![f.clone()],
        names: prog.names.clone(),
    };
    one.to_string()
}

#[test]
fn scalar_rules_share_the_table_and_skip_zero_tangents() {
    let src = "entry main (x: f64) (c: f64) = jvp (\\x -> x * c + f64.sin c) x 1";
    let prog = differentiated(src);
    let text = entry_text(&prog, "main");
    // Tangent code: dx * c only (sin c is constant here: no cos emitted).
    assert!(!text.contains("Cos"), "{text}");
    assert_eq!(text.matches("Mul(").count(), 2, "{text}");
    let r = Runner::new(src);
    assert_eq!(floats(&r.run("main", vec![f64v(2.0), f64v(3.0)])[0]), [3.0]);
}

#[test]
fn unary_rules_match_closed_forms() {
    let src = "entry main (x: f64) = [jvp f64.sin x 1, jvp f64.exp x 1, jvp f64.log x 1,
                                      jvp f64.sqrt x 1, jvp (\\x -> x ** 3) x 1, jvp f64.abs x 1]";
    let r = Runner::new(src);
    let x: f64 = 0.7;
    let want = [x.cos(), x.exp(), 1.0 / x, 0.5 / x.sqrt(), 3.0 * x * x, 1.0];
    let got = floats(&r.run("main", vec![f64v(x)])[0]);
    assert!(close(&got, &want, 1e-12), "{got:?} vs {want:?}");
}

#[test]
fn integer_and_boolean_tangents() {
    let src = "def icube (x: i32) = x * x * x
               entry main (x: i32) (k: i32) = (jvp icube x 1, jvp (\\a -> a * k) x 2,
                                               jvp (\\b -> !b) false true, jvp (\\y -> y < 2.0) 1.0 1.0)";
    let r = Runner::new(src);
    let out = r.run(
        "main",
        vec![
            Value::Scalar(Prim::I32(5)),
            Value::Scalar(Prim::I32(1_500_000_000)),
        ],
    );
    assert_eq!(
        out,
        vec![
            Value::Scalar(Prim::I32(75)),
            Value::Scalar(Prim::I32(-1_294_967_296)),
            Value::Scalar(Prim::Bool(false)),
            Value::Scalar(Prim::Bool(false)),
        ]
    );
}

#[test]
fn map_runs_over_primal_and_tangent_arrays() {
    let src = "entry main (xs: []f64) (dxs: []f64) = jvp (map (\\x -> x * x)) xs dxs";
    let text = entry_text(&differentiated(src), "main");
    assert_eq!(text.matches("map(").count(), 1, "{text}");
    let r = Runner::new(src);
    let got = floats(&r.run("main", vec![f64s(&[1.0, -2.0]), f64s(&[1.0, 0.5])])[0]);
    assert_eq!(got, [2.0, -2.0]);
}

#[test]
fn reduce_operator_works_on_value_tangent_pairs() {
    // a ⊙ b = a + b + ab, so reduce ⊙ 0 xs = ∏(1 + xᵢ) − 1.
    let src =
        "entry main (xs: []f64) (dxs: []f64) = jvp (reduce (\\a b -> a + b + a * b) 0) xs dxs";
    let text = entry_text(&differentiated(src), "main");
    // One reduce whose neutral element is paired with a zero tangent.
    assert!(text.contains("{0f64, 0f64}"), "{text}");
    let r = Runner::new(src);
    // Along (1, 0, 2) at (2, 3, 5): 1·4·6 + 0 + 2·3·4.
    let got = floats(&r.run("main", vec![f64s(&[2.0, 3.0, 5.0]), f64s(&[1.0, 0.0, 2.0])])[0]);
    assert_eq!(got, [48.0]);
}

#[test]
fn product_tangent_is_the_dot_product_with_the_zero_counting_gradient() {
    let src = "entry main (xs: []f64) (dxs: []f64) = jvp (reduce (*) 1) xs dxs";
    let text = entry_text(&differentiated(src), "main");
    // The non-zero product, the zero count and a dot product with the gradient; the rule on
    // (value, tangent) pairs only in the branch for a product that is 0 or not finite.
    assert!(text.contains("Div(") && text.contains("{nz_"), "{text}");
    // The test and the gradient come first (outside the branch), the pair rule inside it.
    let gradient = text.find("{nz_").expect("the gradient");
    let branch = text.find("LogOr(").expect("the test for 0 or not finite");
    let pairs = text.find("{1f64, 0f64}").expect("the fallback pair rule");
    assert!(gradient < pairs && branch < pairs, "{text}");
    assert_eq!(text.matches("LogOr(").count(), 1, "{text}");
    let r = Runner::new(src);
    let run = |xs: &[f64], dxs: &[f64]| floats(&r.run("main", vec![f64s(xs), f64s(dxs)])[0]);
    // d(2·3·5) along (1, 0, 2) = 15 + 0 + 2·6.
    assert_eq!(run(&[2.0, 3.0, 5.0], &[1.0, 0.0, 2.0]), [27.0]);
    // One zero: only its own tangent counts, times the other factors.
    assert_eq!(run(&[2.0, 0.0, 5.0], &[1.0, 1.0, 2.0]), [10.0]);
    // Two zeros: every partial derivative is zero.
    assert_eq!(run(&[0.0, 0.0, 5.0], &[1.0, 1.0, 2.0]), [0.0]);
    // The product underflows, its partial derivatives do not.
    assert_eq!(run(&[1e-200, 1e-200, 1e200], &[1.0, 0.0, 0.0]), [1.0]);
}

#[test]
fn second_derivative_of_a_product_at_a_zero() {
    // The derivative is differentiated again (a Hessian-vector product of a product): the
    // piecewise zero-counting rule must not be what gets differentiated, or the second
    // derivative at a zero would be lost.
    let src = "def g (xs: []f64) = jvp (reduce (*) 1) xs (map (\\_ -> 1) xs)
               entry main (xs: []f64) (dxs: []f64) = jvp g xs dxs";
    let r = Runner::new(src);
    // g = Σᵢ ∏_{j≠i} xⱼ; at (0, 2, 3) along (1, 0, 0): ∂g/∂x₀ = x₁ + x₂ = 5.
    let got = floats(&r.run("main", vec![f64s(&[0.0, 2.0, 3.0]), f64s(&[1.0, 0.0, 0.0])])[0]);
    assert_eq!(got, [5.0]);
}

#[test]
fn scan_carries_tangents() {
    let src = "entry main (xs: []f64) (dxs: []f64) = jvp (scan (+) 0) xs dxs";
    let r = Runner::new(src);
    let got = floats(&r.run("main", vec![f64s(&[2.0, 3.0, 5.0]), f64s(&[1.0, 0.0, 2.0])])[0]);
    assert_eq!(got, [1.0, 1.0, 3.0]);
}

#[test]
fn hist_and_scatter_carry_tangents() {
    let src = "entry h (is: []i64) (vs: []f64) (dvs: []f64) =
                 jvp (\\vs -> reduce_by_index (replicate 2 0) f64.max f64.lowest is vs) vs dvs
               entry s (is: []i64) (vs: []f64) (dvs: []f64) =
                 jvp (\\vs -> scatter (replicate 3 1.0) is vs) vs dvs";
    let r = Runner::new(src);
    // Bin 0 takes max(1, 4) → tangent of 4; bin 1 takes 3.
    let got = floats(
        &r.run(
            "h",
            vec![
                i64s(&[0, 0, 1]),
                f64s(&[1.0, 4.0, 3.0]),
                f64s(&[10.0, 20.0, 30.0]),
            ],
        )[0],
    );
    assert_eq!(got, [20.0, 30.0]);
    // Positions 0 and 2 receive the tangents; position 1 keeps the constant's zero.
    let got = floats(
        &r.run(
            "s",
            vec![i64s(&[2, 0]), f64s(&[1.0, 4.0]), f64s(&[10.0, 20.0])],
        )[0],
    );
    assert_eq!(got, [20.0, 0.0, 10.0]);
}

#[test]
fn loops_get_tangent_parameters_only_when_active() {
    let src = "entry main (x: f64) (n: i32) =
                 jvp (\\x -> (loop (acc, k) = (x, 0i32) for _i < n do (acc * x, k + 1)).0) x 1";
    let text = entry_text(&differentiated(src), "main");
    // acc gets a tangent parameter, the counter k does not.
    assert!(text.contains("dacc"), "{text}");
    assert!(!text.contains("dk"), "{text}");
    let r = Runner::new(src);
    let out = r.run("main", vec![f64v(2.0), Value::Scalar(Prim::I32(3))]);
    assert_eq!(floats(&out[0]), [32.0]); // d(x⁴) = 4x³
}

#[test]
fn branches_return_tangents() {
    let src = "entry main (x: f64) = jvp (\\x -> if x > 0 then x * x else 1 - x) x 1";
    let r = Runner::new(src);
    assert_eq!(floats(&r.run("main", vec![f64v(3.0)])[0]), [6.0]);
    assert_eq!(floats(&r.run("main", vec![f64v(-3.0)])[0]), [-1.0]);
}

#[test]
fn nested_jvp_is_differentiated_innermost_first() {
    let src = "def cube (y: f64) = y * y * y
               entry main (x: f64) = (jvp (\\x -> jvp cube x 1) x 1,
                                      jvp (\\x -> x * jvp (\\y -> x * y) 3.0 1.0) x 1.0)";
    let r = Runner::new(src);
    // 6x and d(x·x) = 2x.
    let out = r.run("main", vec![f64v(2.0)]);
    assert_eq!((floats(&out[0]), floats(&out[1])), (vec![12.0], vec![4.0]));
}

#[test]
fn reverse_mode_inside_jvp_is_reported_not_miscompiled() {
    let src = "def cube (y: f64) = y * y * y
               entry main (x: f64) = jvp (\\x -> vjp cube x 1) x 1
               entry other (x: f64) = jvp cube x 1";
    let prog = lower(src);
    let err = runic_ad::fwd::eliminate(prog.clone()).unwrap_err();
    assert!(
        err.message
            .starts_with("not yet supported by the ir backend:"),
        "{err}"
    );
    // The lenient form keeps that jvp (reported at run time) and differentiates the rest.
    let (prog, errors) = runic_ad::fwd::eliminate_where_possible(prog);
    assert_eq!(errors.len(), 1);
    assert!(entry_text(&prog, "main").contains("jvp("));
    assert!(!entry_text(&prog, "other").contains("jvp("));
    runic_ir::verify(&prog).expect("verifies");
}

/// `jmp` over a hand-built lambda (lowering produces it once `jmp2` is lowered): entry
/// `main (x: f64) (seeds: [k]f64)` returning the primal and the tangent for every seed.
fn jmp_prog(body: impl FnOnce(&mut Builder, VName) -> SubExp) -> Prog {
    let mut names = NameSource::default();
    let x = names.fresh("x");
    let seeds = names.fresh("seeds");
    let k = names.fresh("k");
    let f64t = Type::Prim(PrimType::F64);
    let arr = Type::Array {
        elem: PrimType::F64,
        shape: vec![SubExp::Var(k)],
    };
    let mut b = Builder::new(&mut names);
    b.bind_named(
        &["k"],
        Exp::Basic(BasicOp::ArraySize(seeds, 0)),
        vec![Type::Prim(PrimType::I64)],
    );
    let lam = b.lambda(vec![("a", f64t.clone())], vec![f64t.clone()], |b, ps| {
        vec![body(b, ps[0])]
    });
    let outs = b.bind(
        Exp::Jvp {
            lam,
            args: vec![SubExp::Var(x)],
            tangents: vec![SubExp::Var(seeds)],
            vector: true,
        },
        vec![f64t.clone(), arr.clone()],
    );
    let mut stms = b.take_stms();
    // The size variable must be `k` itself: rename the ArraySize binding.
    stms[0].pat[0].name = k;
    let body = Body {
        stms,
        result: outs.iter().map(|v| SubExp::Var(*v)).collect(),
    };
    let result = |t: &str| EntryResult {
        type_text: t.into(),
        num_values: 1,
        opaque: false,
        layout: None,
    };
    Prog {
        funs: vec![FunDef {
            name: "main".into(),
            params: vec![
                Param {
                    name: x,
                    ty: f64t.clone(),
                },
                Param {
                    name: seeds,
                    ty: arr.clone(),
                },
            ],
            ret: vec![f64t, arr],
            body,
            entry: Some(EntryInfo {
                name: "main".into(),
                params: vec![EntryParam::data("f64"), EntryParam::data("[]f64")],
                results: vec![result("f64"), result("[]f64")],
            }),
            src: SrcInfo::default(),
        }],
        names,
    }
}

fn run_jmp(prog: Prog, x: f64, seeds: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let prog = runic_ad::fwd::eliminate(prog).expect("differentiates");
    runic_ir::verify::verify_no_ad(&prog).unwrap_or_else(|e| panic!("{e:#?}\n{prog}"));
    let exec = runic_exec::Executor::new(Arc::new(prog));
    let out = exec
        .run_entry("main", vec![f64v(x), f64s(seeds)])
        .expect("runs");
    (floats(&out[0]), floats(&out[1]))
}

#[test]
fn jmp_computes_the_primal_once() {
    // a ↦ a³ + sin a.
    let prog = jmp_prog(|b, a| {
        let a = SubExp::Var(a);
        let t = PrimType::F64;
        let sq = b.binop(BinOp::Mul, a.clone(), a.clone(), t);
        let cu = b.binop(BinOp::Mul, sq, a.clone(), t);
        let s = b.unop(UnOp::Sin, a, t);
        b.binop(BinOp::Add, cu, s, t)
    });
    let out = runic_ad::fwd::eliminate(prog.clone()).expect("differentiates");
    let text = out.to_string();
    // The primal (the cube and the sine) is computed once, outside every map over the seeds;
    // the cosine of the derivative too.
    assert_eq!(text.matches("Sin(").count(), 1, "{text}");
    assert_eq!(text.matches("Cos(").count(), 1, "{text}");
    for map in text.split("= map(").skip(1) {
        let lambda = &map[..map.find("\n  }").expect("the map's end")];
        assert!(
            !lambda.contains("Sin(") && !lambda.contains("Cos("),
            "{text}"
        );
    }
    let x: f64 = 0.5;
    let d = 3.0 * x * x + x.cos();
    let (y, dys) = run_jmp(prog, x, &[1.0, 2.0, -1.0]);
    assert!(close(&y, &[x.powi(3) + x.sin()], 1e-12));
    assert!(close(&dys, &[d, 2.0 * d, -d], 1e-12), "{dys:?}");
    // No seeds: an empty Jacobian, and still the primal.
    let (y, dys) = run_jmp(jmp_prog(|_, a| SubExp::Var(a)), 4.0, &[]);
    assert_eq!((y, dys), (vec![4.0], vec![]));
}

#[test]
fn jmp_loop_carries_an_array_of_tangents() {
    // a ↦ a·a·a by a loop: one loop, whose tangent parameter holds one tangent per seed.
    let prog = jmp_prog(|b, a| {
        let t = Type::Prim(PrimType::F64);
        let acc = b.param("acc", t.clone());
        let i = b.fresh("i");
        let body = b.body(|b| {
            vec![b.binop(
                BinOp::Mul,
                SubExp::Var(acc.name),
                SubExp::Var(a),
                PrimType::F64,
            )]
        });
        let r = b.bind(
            Exp::Loop {
                params: vec![(acc, SubExp::Var(a))],
                form: LoopForm::For {
                    i,
                    bound: SubExp::i64(2),
                },
                body,
            },
            vec![t],
        );
        SubExp::Var(r[0])
    });
    let text = runic_ad::fwd::eliminate(prog.clone())
        .expect("differentiates")
        .to_string();
    assert_eq!(text.matches("loop {").count(), 1, "{text}");
    assert!(text.contains("dacc_") && text.contains(": [k_"), "{text}");
    let (y, dys) = run_jmp(prog, 2.0, &[1.0, 0.5]);
    assert_eq!((y, dys), (vec![8.0], vec![12.0, 6.0]));
}

#[test]
fn linear_operators_reduce_tangents_separately() {
    let src = "entry main (xs: []f64) (dxs: []f64) =
                 let ((s, c), (ds, dc)) = jvp2 (\\xs -> (f64.sum xs, scan (+) 0 xs)) xs dxs
                 in (s, c, ds, dc)";
    let text = entry_text(&differentiated(src), "main");
    // Two simple two-parameter reduces and scans (primal, tangent), no pair operator.
    assert_eq!(text.matches("reduce").count(), 2, "{text}");
    assert_eq!(text.matches("scan(").count(), 2, "{text}");
    assert!(!text.contains("} : {f64, f64} ->"), "{text}");
    let r = Runner::new(src);
    let out = r.run("main", vec![f64s(&[1.0, 2.0, 4.0]), f64s(&[0.5, 1.0, 2.0])]);
    let got: Vec<Vec<f64>> = out.iter().map(floats).collect();
    assert_eq!(
        got,
        vec![
            vec![7.0],
            vec![1.0, 3.0, 7.0],
            vec![3.5],
            vec![0.5, 1.5, 3.5]
        ]
    );
}

#[test]
fn jmp_updates_arrays_in_place_correctly() {
    // a ↦ (loop acc = [a] for i < 2 do acc with [0] = acc[0]·a)[0] = a³: the primal array
    // and its tangents (one row of seeds per element) are both updated in place.
    let prog = jmp_prog(|b, a| {
        let f64t = PrimType::F64;
        let arr = Type::Array {
            elem: f64t,
            shape: vec![SubExp::i64(1)],
        };
        let init = b.bind1(
            "init",
            Exp::Basic(BasicOp::Replicate(vec![SubExp::i64(1)], SubExp::Var(a))),
            arr.clone(),
        );
        let acc = b.param("acc", arr.clone());
        let i = b.fresh("i");
        let body = b.body(|b| {
            let at0 = vec![DimIndex::Fix(SubExp::i64(0))];
            let x = b.basic("x", BasicOp::Index(acc.name, at0.clone()), Type::Prim(f64t));
            let y = b.binop(BinOp::Mul, x, SubExp::Var(a), f64t);
            vec![b.basic("upd", BasicOp::Update(acc.name, at0, y), arr.clone())]
        });
        let r = b.bind(
            Exp::Loop {
                params: vec![(acc, SubExp::Var(init))],
                form: LoopForm::For {
                    i,
                    bound: SubExp::i64(2),
                },
                body,
            },
            vec![arr],
        );
        b.basic(
            "r",
            BasicOp::Index(r[0], vec![DimIndex::Fix(SubExp::i64(0))]),
            Type::Prim(f64t),
        )
    });
    let (y, dys) = run_jmp(prog, 2.0, &[1.0, 2.0, 1.0]);
    assert_eq!((y, dys), (vec![8.0], vec![12.0, 24.0, 12.0]));
}

#[test]
fn jmp_histogram_pairs_scalar_and_seed_rows() {
    // a ↦ (reduce_by_index [1] (*) 1 [0, 0] [a, a])[0] = a²: the paired histogram has a
    // scalar destination and a destination of seed rows.
    let prog = jmp_prog(|b, a| {
        let f64t = PrimType::F64;
        let arr = |n: i64, t: PrimType| Type::Array {
            elem: t,
            shape: vec![SubExp::i64(n)],
        };
        let dest = b.bind1(
            "dest",
            Exp::Basic(BasicOp::Replicate(
                vec![SubExp::i64(1)],
                SubExp::Const(Prim::F64(1.0)),
            )),
            arr(1, f64t),
        );
        let is = b.bind1(
            "is",
            Exp::Basic(BasicOp::ArrayLit(
                vec![SubExp::i64(0), SubExp::i64(0)],
                Type::Prim(PrimType::I64),
            )),
            arr(2, PrimType::I64),
        );
        let vs = b.bind1(
            "vs",
            Exp::Basic(BasicOp::ArrayLit(
                vec![SubExp::Var(a), SubExp::Var(a)],
                Type::Prim(f64t),
            )),
            arr(2, f64t),
        );
        let lam = runic_ir::builder::binop_lambda(b.names, BinOp::Mul, f64t);
        let h = b.bind1(
            "h",
            Exp::Soac(Soac::Hist {
                w: SubExp::i64(2),
                dests: vec![dest],
                lam,
                neutral: vec![SubExp::Const(Prim::F64(1.0))],
                is: vec![is],
                vals: vec![vs],
            }),
            arr(1, f64t),
        );
        b.basic(
            "r",
            BasicOp::Index(h, vec![DimIndex::Fix(SubExp::i64(0))]),
            Type::Prim(f64t),
        )
    });
    let (y, dys) = run_jmp(prog, 3.0, &[1.0, 2.0, 1.0]);
    assert_eq!((y, dys), (vec![9.0], vec![6.0, 12.0, 6.0]));
}

#[test]
fn seeds_of_the_wrong_shape_are_size_errors() {
    let src = "entry main (m: [][]f64) (dm: [][]f64) = jvp (map (map (* 2))) m dm";
    let exec = runic_exec::Executor::new(Arc::new(optimised(src)));
    let m = |rows: usize, cols: usize| {
        Value::Array(
            runic_data::Array::from_f64(vec![rows, cols], vec![1.0; rows * cols]).expect("shape"),
        )
    };
    let err = exec.run_entry("main", vec![m(1, 2), m(1, 3)]).unwrap_err();
    assert_eq!(
        err.message,
        "Value of (desugared) shape [1][3] cannot match shape of type \"[1][2]f64\"."
    );
    let ok = exec
        .run_entry("main", vec![m(1, 2), m(1, 2)])
        .expect("runs");
    assert_eq!(floats(&ok[0]), [2.0, 2.0]);
}

#[test]
fn jmp_of_a_map_runs_its_primal_once() {
    // The map is linearised: one map computes the primal and the residuals (sin x, cos x),
    // and the map over the seeds only multiplies tangents by them.
    let src = "entry main [k][n] (xs: [n]f64) (seeds: [k][n]f64) =
                 let (ys, dys) = jmp2 (map (\\x -> f64.sin x * x - 2)) xs seeds in (ys, dys)";
    let text = entry_text(&optimised(src), "main");
    assert_eq!(text.matches("Sin(").count(), 1, "{text}");
    assert_eq!(text.matches("Cos(").count(), 1, "{text}");
    let r = Runner::new(src);
    let xs = [0.5, -1.0];
    let seeds = runic_data::Array::from_f64(vec![2, 2], vec![1.0, 0.0, 2.0, 1.0]).unwrap();
    let out = r.run("main", vec![f64s(&xs), Value::Array(seeds)]);
    let f = |x: f64| x.sin() * x - 2.0;
    let df = |x: f64| x.cos() * x + x.sin();
    assert!(close(&floats(&out[0]), &[f(0.5), f(-1.0)], 1e-12));
    let want = [df(0.5), 0.0, 2.0 * df(0.5), df(-1.0)];
    assert!(
        close(&floats(&out[1]), &want, 1e-12),
        "{:?}",
        floats(&out[1])
    );
}
