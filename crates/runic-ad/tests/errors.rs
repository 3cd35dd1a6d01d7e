//! AD errors keep their kind: what cannot be differentiated yet is `Unsupported`, a
//! primitive without a derivative is `NotDifferentiable`, and a broken invariant is
//! `Internal` — which fails loudly in debug builds (so tests catch it where it happens).

mod common;
use common::lower;
use runic_ad::{AdError, AdErrorKind};
use runic_ir::*;

fn errors_of(src: &str) -> Vec<AdError> {
    runic_ad::eliminate_where_possible(lower(src)).1
}

#[test]
fn a_primitive_without_derivative_is_not_differentiable() {
    let errs = errors_of("entry main (x: f64) : f64 = vjp f64.gamma x 1");
    assert!(!errs.is_empty());
    assert!(
        errs.iter()
            .all(|e| e.kind == AdErrorKind::NotDifferentiable),
        "{errs:?}"
    );
    assert!(errs[0].message.contains("gamma"), "{errs:?}");
}

#[test]
fn a_gap_of_the_ir_backend_is_unsupported() {
    // The general scan rule handles operators on scalars (and tuples of them), not on rows.
    let src = "entry main [n] (xs: [n][2]f64) : [n][2]f64 =
                 vjp (\\xs -> scan (\\a b -> if a[0] < b[0] then a else b) [0, 0] xs) xs (replicate n [1, 1])";
    let errs = errors_of(src);
    assert!(!errs.is_empty());
    assert!(
        errs.iter().all(|e| e.kind == AdErrorKind::Unsupported),
        "{errs:?}"
    );
    assert!(errs[0].message.contains("scan"), "{errs:?}");
}

#[test]
fn a_builder_type_error_is_internal() {
    let e: AdError = TypeError("no type known for v3".into()).into();
    assert!(e.is_internal());
    assert!(e.message.starts_with("internal: "), "{}", e.message);
}

/// A `vjp` whose cotangents do not match its lambda's results can only come from a bug in
/// an earlier pass: debug builds stop at once.
#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "AD pass failed")]
fn an_internal_error_panics_in_debug_builds() {
    let mut prog = Prog::default();
    let f32t = Type::Prim(PrimType::F32);
    let x = prog.names.fresh_typed("x", f32t.clone());
    let mut b = Builder::new(&mut prog.names);
    let lam = b.lambda(vec![("y", f32t.clone())], vec![f32t.clone()], |_, ps| {
        vec![SubExp::Var(ps[0])]
    });
    // Two cotangents for one result.
    let one = SubExp::Const(Prim::F32(1.0));
    let r = b.bind(
        Exp::Vjp {
            lam,
            args: vec![SubExp::Var(x)],
            cotangents: vec![one.clone(), one],
            vector: false,
        },
        vec![f32t.clone(), f32t.clone()],
    );
    let body = b.finish(vec![SubExp::Var(r[1])]);
    prog.funs.push(FunDef {
        name: "main".into(),
        params: vec![Param {
            name: x,
            ty: f32t.clone(),
        }],
        ret: vec![f32t],
        body,
        entry: None,
        src: SrcInfo::default(),
    });
    runic_ad::eliminate_where_possible(prog);
}

/// `vjp` of an accumulator that combines with `*` (reverse mode only builds `+` ones): an
/// unsupported construct, reported (not an internal error or a wrong derivative).
#[test]
fn vjp_of_an_accumulator_without_plus_is_unsupported() {
    let mut prog = Prog::default();
    let f64t = Type::Prim(PrimType::F64);
    let arr = Type::Array {
        elem: PrimType::F64,
        shape: vec![SubExp::i64(2)],
    };
    let acc_t = Type::Acc {
        shape: vec![SubExp::i64(2)],
        elems: vec![PrimType::F64],
    };
    let x = prog.names.fresh_typed("x", arr.clone());
    let mut b = Builder::new(&mut prog.names);
    let times = b.binop_lam(BinOp::Mul, PrimType::F64);
    // \ys -> with_acc (copy ys, *) (\acc -> update_acc acc [0] ys[1])
    let lam = b.lambda(vec![("ys", arr.clone())], vec![arr.clone()], |b, ys| {
        let dest = b.basic("dest", BasicOp::Copy(ys[0]), arr.clone());
        let inner = b.lambda(
            vec![("acc", acc_t.clone())],
            vec![acc_t.clone()],
            |b, acc| {
                let idx = vec![DimIndex::Fix(SubExp::i64(1))];
                let v = b.basic("v", BasicOp::Index(ys[0], idx), f64t.clone());
                let op = BasicOp::UpdateAcc {
                    acc: acc[0],
                    is: vec![SubExp::i64(0)],
                    vals: vec![v],
                };
                vec![b.basic("acc", op, acc_t.clone())]
            },
        );
        let input = AccInput {
            shape: vec![SubExp::i64(2)],
            arrays: vec![dest.as_var().unwrap()],
            op: Some((times, vec![SubExp::Const(Prim::F64(1.0))])),
        };
        let exp = Exp::WithAcc {
            inputs: vec![input],
            lam: inner,
        };
        vec![SubExp::Var(b.bind(exp, vec![arr.clone()])[0])]
    });
    let r = b.bind(
        Exp::Vjp {
            lam,
            args: vec![SubExp::Var(x)],
            cotangents: vec![SubExp::Var(x)],
            vector: false,
        },
        vec![arr.clone(), arr.clone()],
    );
    let body = b.finish(vec![SubExp::Var(r[1])]);
    prog.funs.push(FunDef {
        name: "main".into(),
        params: vec![Param {
            name: x,
            ty: arr.clone(),
        }],
        ret: vec![arr],
        body,
        entry: None,
        src: SrcInfo::default(),
    });
    let errs = runic_ad::eliminate_where_possible(prog).1;
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].kind, AdErrorKind::Unsupported);
    assert!(errs[0].message.contains("operator is not +"), "{errs:?}");
}
