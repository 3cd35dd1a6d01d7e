//! Sums over a batch of matrix products.
//!
//! Reverse mode over a map of `g` products that share an operand (an LSTM's gates, each
//! `U_g·h` of the same state `h`) gives the shared operand's adjoint as `Σ_g δ_g·U_g`:
//! after the accumulator optimisation, a batched product `X = map (\g -> δ_g·U_g)` of `g`
//! matrices, then a sum over the batch that reads each element once,
//!
//! ```text
//! map (\i -> map (\j -> reduce (+) 0 (map (\t -> X[t, i, j]) (iota g)))) …
//! ```
//!
//! (or, chosen at run time when the batch is the larger, a reduction over `X`'s rows). The
//! pass puts the product's element into the sum — `X[t, i, j]` becomes the dot product
//! that computes it — so that the sum is one nest summing over the batch and the inner
//! index together, which the executor runs as `g` accumulating GEMMs into one matrix:
//! the `g` products are neither stored nor read back. The product moves into the other
//! branch, where it is still read.
//!
//! Only products are inlined (a map nest of the consumer's depth around a dot product),
//! and only where each of their elements is read once, at the consumer's own indices.

use crate::accs::is_add_lambda;
use crate::contract::contraction_nest;
use crate::simplify::is_zero_const;
use runic_ir::traverse::{iota_width, uses, walk_body_mut, walk_stm_mut, VisitorMut};
use runic_ir::*;
use std::collections::HashMap;

pub fn sum_batched_products(mut prog: Prog) -> Prog {
    let mut ns = std::mem::take(&mut prog.names);
    for f in &mut prog.funs {
        let iotas = runic_ir::traverse::iotas(&f.body);
        let mut pass = Sums { ns: &mut ns, iotas };
        pass.body(&mut f.body);
    }
    prog.names = ns;
    // The copies binding the product's lambda parameters to the sum's indices.
    crate::copy_prop(prog)
}

struct Sums<'n> {
    ns: &'n mut NameSource,
    /// `iota n` variables with their widths (the program's, and those this pass copies).
    iotas: HashMap<VName, SubExp>,
}

impl VisitorMut for Sums<'_> {
    fn body(&mut self, b: &mut Body) {
        walk_body_mut(self, b);
        while self.rewrite_once(b) {}
    }
}

impl Sums<'_> {
    /// One product of `b` put into the sum that reads it; false when there is none.
    fn rewrite_once(&mut self, b: &mut Body) -> bool {
        for p in 0..b.stms.len() {
            let Some(x) = product_result(&b.stms[p]) else {
                continue;
            };
            // Hoisting leaves the product as an input of the map it came from, unread.
            for s in &mut b.stms[p + 1..] {
                drop_unread_input(s, x);
            }
            let readers: Vec<usize> = (p + 1..b.stms.len())
                .filter(|&k| uses(&b.stms[k]).contains(&x))
                .collect();
            let ([c], false) = (readers.as_slice(), uses(&b.result).contains(&x)) else {
                continue;
            };
            let c = *c;
            let dims = match &b.stms[p].pat[0].ty {
                Type::Array { shape, .. } => shape.clone(),
                _ => continue,
            };
            let Some(read) = element_read(&b.stms[c], x, &dims, &self.iotas) else {
                continue;
            };
            let product = b.stms[p].clone();
            let Some(stms) = self.element_of(&product, &read) else {
                continue;
            };
            splice(&mut b.stms[c], read.var, stms);
            // The product itself goes where it is still read (the other branch), if
            // anywhere.
            let product = b.stms.remove(p);
            let c = c - 1;
            if uses(&b.stms[c]).contains(&x) {
                if let Exp::If {
                    then_body,
                    else_body,
                    ..
                } = &mut b.stms[c].exp
                {
                    match (
                        uses(&*then_body).contains(&x),
                        uses(&*else_body).contains(&x),
                    ) {
                        (true, false) => then_body.stms.insert(0, product),
                        (false, true) => else_body.stms.insert(0, product),
                        _ => b.stms.insert(p, product),
                    }
                } else {
                    b.stms.insert(p, product);
                }
            }
            return true;
        }
        false
    }

    /// The statements computing element `read.at` of the product `s` (a map nest bound
    /// to one array), the last binding `read.var`.
    fn element_of(&mut self, s: &Stm, read: &Read) -> Option<Vec<Stm>> {
        let Exp::Soac(Soac::Map { w, lam, arrs }) = &s.exp else {
            return None;
        };
        let mut b = Builder::new(self.ns);
        let r = element(&mut b, &mut self.iotas, w, lam, arrs, &read.at)?;
        b.let_pat(vec![read.var.clone()], Exp::Basic(BasicOp::SubExp(r)));
        Some(b.take_stms())
    }
}

/// `x` as an input of the map `s` whose lambda does not read it: dropped (unless it is the
/// map's only input, which gives the map its width).
fn drop_unread_input(s: &mut Stm, x: VName) {
    let Exp::Soac(Soac::Map { lam, arrs, .. }) = &mut s.exp else {
        return;
    };
    if arrs.len() != lam.params.len() || arrs.len() < 2 {
        return;
    }
    let read = runic_ir::traverse::free_vars(&lam.body);
    let unread = |k: usize| arrs[k] == x && !read.contains(&lam.params[k].name);
    if let Some(k) = (0..arrs.len()).find(|&k| unread(k)) {
        arrs.remove(k);
        lam.params.remove(k);
    }
}

/// The array a statement binds if it is a product: a map nest around a dot product,
/// bound to one array of floats of rank 3 (a batch of matrices).
fn product_result(s: &Stm) -> Option<VName> {
    let (Exp::Soac(Soac::Map { lam, .. }), [x]) = (&s.exp, s.pat.as_slice()) else {
        return None;
    };
    let float = matches!(x.ty.elem(), Some(PrimType::F32 | PrimType::F64));
    (float && x.ty.rank() == 3 && contraction_nest(lam)).then_some(x.name)
}

/// A read of one element of the product inside its consumer.
struct Read {
    /// The variable the element is bound to.
    var: Param,
    /// Its indices.
    at: Vec<SubExp>,
}

/// The only read of `x` (of shape `dims`) inside statement `c` that is a whole element
/// (`e = x[t, i, j]`) read once per application of a sum over the batch: the `pre` lambda
/// of a `reduce (+) 0` over `iota dims[0]` reads it at its index `t`, and `i` and `j` are
/// indices of enclosing maps over `iota dims[1]` and `iota dims[2]` (so the element
/// exists: computing it cannot fail where reading it would not).
fn element_read(
    c: &Stm,
    x: VName,
    dims: &[SubExp],
    iotas: &HashMap<VName, SubExp>,
) -> Option<Read> {
    let mut find = FindReads {
        x,
        dims,
        iotas,
        widths: HashMap::new(),
        found: Vec::new(),
    };
    runic_ir::traverse::Visitor::stm(&mut find, c);
    let [read] = find.found.as_slice() else {
        return None;
    };
    Some(Read {
        var: read.0.clone(),
        at: read.1.clone(),
    })
}

struct FindReads<'a> {
    x: VName,
    dims: &'a [SubExp],
    iotas: &'a HashMap<VName, SubExp>,
    /// Parameters of the lambdas around the visited statement that run over an iota, with
    /// its width.
    widths: HashMap<VName, SubExp>,
    found: Vec<(Param, Vec<SubExp>)>,
}

impl FindReads<'_> {
    /// The element read of `s`, a sum over the batch, if it is one.
    fn read(&self, s: &Stm) -> Option<(Param, Vec<SubExp>)> {
        let Exp::Soac(Soac::Reduce {
            w,
            arrs,
            pre: Some(pre),
            lam,
            neutral,
            ..
        }) = &s.exp
        else {
            return None;
        };
        let sum = matches!(neutral.as_slice(), [z] if is_zero_const(z)) && is_add_lambda(lam);
        let over_batch = matches!(arrs.as_slice(), [a] if self.iotas.get(a) == Some(w))
            && Some(w) == self.dims.first();
        let ([t], [st], [SubExp::Var(r)], true) = (
            pre.params.as_slice(),
            pre.body.stms.as_slice(),
            pre.body.result.as_slice(),
            sum && over_batch,
        ) else {
            return None;
        };
        let (Exp::Basic(BasicOp::Index(a, idx)), [v]) = (&st.exp, st.pat.as_slice()) else {
            return None;
        };
        let [DimIndex::Fix(SubExp::Var(i0)), DimIndex::Fix(i), DimIndex::Fix(j)] = idx.as_slice()
        else {
            return None;
        };
        let index_of = |s: &SubExp, d: usize| matches!(s, SubExp::Var(v) if self.widths.get(v) == self.dims.get(d));
        let ok = *a == self.x && v.name == *r && *i0 == t.name && index_of(i, 1) && index_of(j, 2);
        ok.then(|| (v.clone(), vec![SubExp::Var(*i0), i.clone(), j.clone()]))
    }
}

impl runic_ir::traverse::Visitor for FindReads<'_> {
    fn stm(&mut self, s: &Stm) {
        if let Some(read) = self.read(s) {
            self.found.push(read);
            return;
        }
        if let Exp::Soac(Soac::Map { w, lam, arrs }) = &s.exp {
            for (p, a) in lam.params.iter().zip(arrs) {
                if self.iotas.get(a) == Some(w) {
                    self.widths.insert(p.name, w.clone());
                }
            }
        }
        runic_ir::traverse::walk_stm(self, s)
    }
}

/// Element `idx` of `map w lam arrs` (a nest of maps, one per index, each body its plain
/// statements and the next map): the nest's statements copied with fresh names, each
/// lambda's parameters bound to its inputs' rows at its index (or to the index, for an
/// iota); returns the element.
fn element(
    b: &mut Builder,
    iotas: &mut HashMap<VName, SubExp>,
    w: &SubExp,
    lam: &Lambda,
    arrs: &[VName],
    idx: &[SubExp],
) -> Option<SubExp> {
    let (i, rest) = idx.split_first()?;
    let l = b.renamed(lam);
    for (p, a) in l.params.iter().zip(arrs) {
        let op = if iotas.get(a) == Some(w) {
            BasicOp::SubExp(i.clone())
        } else {
            BasicOp::Index(*a, vec![DimIndex::Fix(i.clone())])
        };
        b.let_pat(vec![p.clone()], Exp::Basic(op));
    }
    if rest.is_empty() {
        let [r] = l.body.result.as_slice() else {
            return None;
        };
        for s in l.body.stms {
            b.add(s);
        }
        return Some(r.clone());
    }
    let (last, before) = l.body.stms.split_last()?;
    let (
        Exp::Soac(Soac::Map {
            w: w2,
            lam: l2,
            arrs: a2,
        }),
        [out],
    ) = (&last.exp, last.pat.as_slice())
    else {
        return None;
    };
    if l.body.result != [SubExp::Var(out.name)] {
        return None;
    }
    for s in before {
        if let (Some(n), [p]) = (iota_width(&s.exp), s.pat.as_slice()) {
            iotas.insert(p.name, n);
        }
        b.add(s.clone());
    }
    element(b, iotas, w2, l2, a2, rest)
}

/// Replaces the statement binding `var` (at any depth in `c`) by `stms`.
fn splice(c: &mut Stm, var: Param, stms: Vec<Stm>) {
    struct Splice {
        var: VName,
        stms: Option<Vec<Stm>>,
    }
    impl VisitorMut for Splice {
        fn body(&mut self, b: &mut Body) {
            if let Some(k) = b
                .stms
                .iter()
                .position(|s| s.pat.iter().any(|p| p.name == self.var))
            {
                if let Some(stms) = self.stms.take() {
                    b.stms.splice(k..=k, stms);
                }
                return;
            }
            walk_body_mut(self, b)
        }
    }
    let mut s = Splice {
        var: var.name,
        stms: Some(stms),
    };
    walk_stm_mut(&mut s, c);
}
