//! `traverse::for_each_body_mut`: every body at every depth, innermost first.

use runic_ir::traverse::*;
use runic_ir::*;

/// `\x -> if x < 0 then (map (\y -> y) [x]) else x` style nesting: a lambda whose body
/// holds a branch, one branch holding a map with its own lambda.
fn nested(names: &mut NameSource) -> Lambda {
    let t = Type::Prim(PrimType::I64);
    let mut b = Builder::new(names);
    b.lambda(vec![("x", t.clone())], vec![t.clone()], |b, ps| {
        let x = SubExp::Var(ps[0]);
        let c = b.binop(BinOp::Lt, x.clone(), SubExp::i64(0), PrimType::I64);
        let r = b.if_(
            c,
            vec![t.clone()],
            |b| {
                let id = b.lambda(vec![("y", t.clone())], vec![t.clone()], |_, ys| {
                    vec![SubExp::Var(ys[0])]
                });
                let arr = b.basic(
                    "arr",
                    BasicOp::ArrayLit(vec![x.clone()], t.clone()),
                    t.array_of(SubExp::i64(1)),
                );
                let m = b.bind(
                    Exp::Soac(Soac::Map {
                        w: SubExp::i64(1),
                        lam: id,
                        arrs: vec![arr.as_var().unwrap()],
                    }),
                    vec![t.array_of(SubExp::i64(1))],
                );
                vec![b.index1(m[0], SubExp::i64(0)).unwrap()]
            },
            |_| vec![x.clone()],
        );
        vec![SubExp::Var(r[0])]
    })
}

#[test]
fn every_body_once_innermost_first() {
    let mut names = NameSource::default();
    let mut lam = nested(&mut names);
    // Record each body's statement count, and mark it as seen by appending a constant
    // result, so a parent can tell that its children were seen before it.
    let mut seen = Vec::new();
    for_each_body_mut(&mut lam, |b| {
        let children_done = b.stms.iter().all(|s| {
            let mut ok = true;
            for_each_body_ref(s, &mut |inner| ok &= inner.result.last() == Some(&MARK));
            ok
        });
        seen.push((b.stms.len(), children_done));
        b.result.push(MARK);
    });
    // The map's lambda, the two branches, then the lambda's own body.
    assert_eq!(seen, vec![(0, true), (3, true), (0, true), (2, true)]);
}

#[test]
fn a_body_argument_is_included_and_statements_are_not_bodies() {
    let mut names = NameSource::default();
    let lam = nested(&mut names);
    let mut body = lam.body.clone();
    let mut n = 0;
    for_each_body_mut(&mut body, |_| n += 1);
    assert_eq!(n, 4);
    let mut stms = lam.body.stms.clone();
    let mut n = 0;
    for_each_body_mut(&mut stms, |_| n += 1);
    assert_eq!(
        n, 3,
        "the branches and the map's lambda, not an enclosing body"
    );
}

const MARK: SubExp = SubExp::Const(Prim::Bool(true));

/// Every body directly or indirectly inside `s` (read-only, for the checks above).
fn for_each_body_ref(s: &Stm, f: &mut dyn FnMut(&Body)) {
    struct Bodies<'f>(&'f mut dyn FnMut(&Body));
    impl Visitor for Bodies<'_> {
        fn body(&mut self, b: &Body) {
            walk_body(self, b);
            (self.0)(b)
        }
    }
    Bodies(f).stm(s)
}
