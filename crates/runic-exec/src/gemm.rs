//! Matrix products. A map nest
//!
//! ```text
//! map (\i… -> map (\j… -> reduce (+) 0 (map (\l… -> A(i, l) * B(l, j)) …)) …) …
//! ```
//!
//! over floats, where each operand is an element of a two-dimensional array subscripted by
//! two of the three indices — through rows the maps take (`map (\row -> … row[l] …) a`),
//! iotas (`map (\j -> … a[l, j] …) (iota n)`), or both — is the contraction
//! `C = A·B`. It runs as a GEMM (the `matrixmultiply` crate: blocked, vectorised kernels
//! for f32 and f64 with arbitrary strides, so transposed operands cost nothing), split over
//! the rayon workers by rows or columns of `C`. The user's matrix products and the ones
//! reverse mode produces (`δᵀ·x` after the accumulator optimisation, `δ·W`) take this path.
//!
//! Nests are recognised once, when the executor is built, by the identity of the outer
//! map's lambda. At run time the sizes are checked; any mismatch (which the general path
//! reports as an error) falls back to the general path. The sum is blocked, so floating-
//! point results may differ from a sequential reduce in the last bits, as reductions split
//! across chunks already do. `RUNIC_GEMM=0` turns the path off.

use crate::error::R;
use crate::eval::{Ctx, Frame};
use crate::value::{arr, Val};
use runic_data::{Array, Buffer};
use runic_ir::*;
use std::collections::HashMap;
use std::sync::Arc;

/// The three indices of a contraction: rows of `C`, columns of `C`, and the summed one.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ix {
    I,
    J,
    L,
}

/// An operand: element `[subs[0], subs[1]]` of the two-dimensional array `arr`.
#[derive(Clone, Debug)]
struct Operand {
    arr: VName,
    subs: [Ix; 2],
}

/// A recognised nest: `C[i, j] = Σ_l a(i, l) · b(l, j)` for `i < m`, `j < p`, `l < k`.
#[derive(Debug)]
pub struct Contraction {
    m: SubExp,
    p: SubExp,
    k: SubExp,
    a: Operand,
    b: Operand,
    /// The nest's shape checks: dimension `.1` of array `.0` must equal `.2`.
    checks: Vec<(VName, usize, SubExp)>,
    elem: PrimType,
}

/// The contractions of a program, by the lambda id of their outer map.
#[derive(Default)]
pub struct Contractions {
    nests: HashMap<LamId, Contraction>,
    enabled: bool,
}

impl Contractions {
    pub fn new(prog: &Prog) -> Contractions {
        let enabled = std::env::var("RUNIC_GEMM").map_or(true, |v| v != "0");
        let mut nests = HashMap::new();
        if enabled {
            for f in &prog.funs {
                let iotas = iotas(&f.body);
                find(&f.body, &iotas, &mut nests);
            }
        }
        Contractions { nests, enabled }
    }

    pub fn get(&self, lam: &Lambda) -> Option<&Contraction> {
        if self.enabled {
            self.nests.get(&lam.id)
        } else {
            None
        }
    }

    /// Whether the map with this lambda runs as a GEMM (for `--explain-exec`).
    pub fn contains(&self, lam: &Lambda) -> bool {
        self.get(lam).is_some()
    }
}

/// Records the contractions among the maps of `body`, at any depth.
fn find(body: &Body, iotas: &HashMap<VName, SubExp>, out: &mut HashMap<LamId, Contraction>) {
    use runic_ir::traverse::{walk_stm, Visitor};
    struct Find<'a>(
        &'a HashMap<VName, SubExp>,
        &'a mut HashMap<LamId, Contraction>,
    );
    impl Visitor for Find<'_> {
        fn stm(&mut self, s: &Stm) {
            if let Exp::Soac(Soac::Map { w, lam, arrs }) = &s.exp {
                if let Some(c) = recognise(self.0, w, lam, arrs, &s.pat) {
                    self.1.insert(lam.id, c);
                }
            }
            walk_stm(self, s)
        }
    }
    Find(iotas, out).body(body);
}

/// The variables bound to `iota w` anywhere in `body`, with `w`.
fn iotas(body: &Body) -> HashMap<VName, SubExp> {
    use runic_ir::traverse::{walk_stm, Visitor};
    struct Iotas(HashMap<VName, SubExp>);
    impl Visitor for Iotas {
        fn stm(&mut self, s: &Stm) {
            if let (
                Exp::Basic(BasicOp::Range {
                    start: SubExp::Const(s0),
                    second,
                    end,
                    kind: RangeKind::UpToExclusive,
                    elem: PrimType::I64,
                }),
                [p],
            ) = (&s.exp, s.pat.as_slice())
            {
                let step_one = second
                    .as_ref()
                    .is_none_or(|t| matches!(t, SubExp::Const(c) if c.as_int() == Some(1)));
                if s0.as_int() == Some(0) && step_one {
                    self.0.insert(p.name, end.clone());
                }
            }
            walk_stm(self, s)
        }
    }
    let mut v = Iotas(HashMap::new());
    v.body(body);
    v.0
}

/// What a variable of the nest stands for.
#[derive(Clone, Debug)]
enum Sym {
    Index(Ix),
    /// Row `[ix, :]` of a two-dimensional array.
    Row(VName, Ix),
    Elem(Operand),
}

/// The contraction that `map w lam arrs` (binding `pat`) computes, if it is one.
fn recognise(
    iotas: &HashMap<VName, SubExp>,
    m: &SubExp,
    l1: &Lambda,
    a1: &[VName],
    pat: &[Param],
) -> Option<Contraction> {
    let [out] = pat else { return None };
    let elem = match out.ty.elem()? {
        t @ (PrimType::F32 | PrimType::F64) if out.ty.rank() == 2 => t,
        _ => return None,
    };
    let mut env: HashMap<VName, Sym> = HashMap::new();
    bind_params(&mut env, iotas, m, Ix::I, l1, a1)?;
    // The outer body: one map (iotas aside), whose result is the row.
    let (s2, p, l2, a2) = only_soac(&l1.body)?;
    let Exp::Soac(Soac::Map { .. }) = &s2.exp else {
        return None;
    };
    bind_params(&mut env, iotas, p, Ix::J, l2, a2)?;
    // The inner body: shape checks of rows, and one reduce (+) 0 with a pre-lambda.
    let mut checks = Vec::new();
    let mut red = None;
    for st in &l2.body.stms {
        match &st.exp {
            Exp::Basic(BasicOp::Range { .. }) if iotas.contains_key(&st.pat[0].name) => {}
            Exp::Basic(BasicOp::ShapeCheck { arr, shape, .. }) => {
                let (Some(Sym::Row(x, _)), [d]) = (env.get(arr), shape.as_slice()) else {
                    return None;
                };
                checks.push((*x, 1, d.clone()));
            }
            Exp::Soac(Soac::Reduce {
                w,
                arrs,
                pre: Some(pre),
                lam,
                neutral,
                ..
            }) if red.is_none() && st.pat.len() == 1 => {
                let zero = matches!(neutral.as_slice(), [SubExp::Const(z)] if *z == runic_prim::Prim::zero(elem));
                if !zero || !is_add(lam) {
                    return None;
                }
                red = Some((st.pat[0].name, w, arrs, pre));
            }
            _ => return None,
        }
    }
    let (r, k, a3, pre) = red?;
    if l2.body.result != [SubExp::Var(r)] || l1.body.result != [SubExp::Var(s2.pat[0].name)] {
        return None;
    }
    // The pre-lambda: element reads, then one multiplication.
    for (q, a) in pre.params.iter().zip(a3) {
        let sym = if iotas.get(a) == Some(k) {
            Sym::Index(Ix::L)
        } else if let Some(Sym::Row(x, s)) = env.get(a) {
            Sym::Elem(Operand {
                arr: *x,
                subs: [*s, Ix::L],
            })
        } else {
            return None;
        };
        env.insert(q.name, sym);
    }
    let mut product = None;
    for st in &pre.body.stms {
        let [x] = st.pat.as_slice() else { return None };
        match &st.exp {
            Exp::Basic(BasicOp::Index(base, idx)) => {
                let sym = element_read(&env, *base, idx)?;
                env.insert(x.name, sym);
            }
            Exp::Basic(BasicOp::BinOp(BinOp::Mul, SubExp::Var(u), SubExp::Var(v))) => {
                let (Some(Sym::Elem(a)), Some(Sym::Elem(b))) = (env.get(u), env.get(v)) else {
                    return None;
                };
                product = Some((x.name, a.clone(), b.clone()));
            }
            _ => return None,
        }
    }
    let (x, a, b) = product?;
    if pre.body.result != [SubExp::Var(x)] {
        return None;
    }
    let (a, b) = order_operands(a, b)?;
    Some(Contraction {
        m: m.clone(),
        p: p.clone(),
        k: k.clone(),
        a,
        b,
        checks,
        elem,
    })
}

/// Binds the parameters of a map's lambda over index `ix`: iotas are the index, rows of
/// free two-dimensional arrays are rows at the index.
fn bind_params(
    env: &mut HashMap<VName, Sym>,
    iotas: &HashMap<VName, SubExp>,
    w: &SubExp,
    ix: Ix,
    lam: &Lambda,
    arrs: &[VName],
) -> Option<()> {
    for (q, a) in lam.params.iter().zip(arrs) {
        let sym = if iotas.get(a) == Some(w) {
            Sym::Index(ix)
        } else if q.ty.rank() == 1 && !env.contains_key(a) {
            Sym::Row(*a, ix)
        } else {
            // Anything else must go unused (reads of unknown variables fail later).
            continue;
        };
        env.insert(q.name, sym);
    }
    Some(())
}

/// The only SOAC statement of a body whose other statements are iotas, with its width,
/// lambda and inputs.
fn only_soac(body: &Body) -> Option<(&Stm, &SubExp, &Lambda, &[VName])> {
    let mut found = None;
    for st in &body.stms {
        match &st.exp {
            Exp::Basic(BasicOp::Range { .. }) => {}
            Exp::Soac(Soac::Map { w, lam, arrs }) if found.is_none() && st.pat.len() == 1 => {
                found = Some((st, w, lam, arrs.as_slice()))
            }
            _ => return None,
        }
    }
    found
}

/// `base[idx]` as an element of a contraction operand.
fn element_read(env: &HashMap<VName, Sym>, base: VName, idx: &[DimIndex]) -> Option<Sym> {
    let ix = |d: &DimIndex| match d {
        DimIndex::Fix(SubExp::Var(v)) => match env.get(v) {
            Some(Sym::Index(i)) => Some(*i),
            _ => None,
        },
        _ => None,
    };
    match (env.get(&base), idx) {
        (None, [d0, d1]) => Some(Sym::Elem(Operand {
            arr: base,
            subs: [ix(d0)?, ix(d1)?],
        })),
        (Some(Sym::Row(x, s)), [d]) => Some(Sym::Elem(Operand {
            arr: *x,
            subs: [*s, ix(d)?],
        })),
        _ => None,
    }
}

/// `(A, B)` with A subscripted by {I, L} and B by {L, J} (multiplication commutes).
fn order_operands(a: Operand, b: Operand) -> Option<(Operand, Operand)> {
    let has = |o: &Operand, x: Ix, y: Ix| o.subs.contains(&x) && o.subs.contains(&y) && x != y;
    if has(&a, Ix::I, Ix::L) && has(&b, Ix::L, Ix::J) {
        Some((a, b))
    } else if has(&b, Ix::I, Ix::L) && has(&a, Ix::L, Ix::J) {
        Some((b, a))
    } else {
        None
    }
}

fn is_add(lam: &Lambda) -> bool {
    let ([x, y], [st]) = (lam.params.as_slice(), lam.body.stms.as_slice()) else {
        return false;
    };
    matches!(&st.exp, Exp::Basic(BasicOp::BinOp(BinOp::Add, SubExp::Var(a), SubExp::Var(b)))
        if (*a == x.name && *b == y.name) || (*a == y.name && *b == x.name))
        && lam.body.result == [SubExp::Var(st.pat[0].name)]
}

/// Raw pointers handed to the workers: each writes a disjoint block of `C`.
struct Shared<T>(*const T, *const T, *mut T);
impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Shared<T> {}
impl<T> Shared<T> {
    /// The pointers (a method, so that closures capture the whole `Send` struct).
    fn get(self) -> (*const T, *const T, *mut T) {
        (self.0, self.1, self.2)
    }
}
unsafe impl<T> Send for Shared<T> {}
unsafe impl<T> Sync for Shared<T> {}

impl Ctx<'_> {
    /// Runs a recognised contraction; `None` when the run-time sizes do not fit it (the
    /// general path then runs the nest and reports what is wrong).
    pub(crate) fn gemm(&self, f: &Frame, c: &Contraction, par: bool) -> R<Option<Vec<Val>>> {
        let size =
            |s: &SubExp| -> R<Option<usize>> { Ok(usize::try_from(self.sub(f, s)?.i64()?).ok()) };
        let (Some(m), Some(p), Some(k)) = (size(&c.m)?, size(&c.p)?, size(&c.k)?) else {
            return Ok(None);
        };
        for (x, dim, d) in &c.checks {
            let shape = self.get(f, *x)?.shape().to_vec();
            if shape.get(*dim).copied() != size(d)? {
                return Ok(None);
            }
        }
        let (Some(a), Some(b)) = (
            self.operand(f, &c.a, m, p, k)?,
            self.operand(f, &c.b, m, p, k)?,
        ) else {
            return Ok(None);
        };
        let strides = |o: &Operand, arr: &Array, x: Ix| -> isize {
            if o.subs[0] == x {
                arr.shape[1] as isize
            } else {
                1
            }
        };
        let (rsa, csa) = (strides(&c.a, &a, Ix::I), strides(&c.a, &a, Ix::L));
        let (rsb, csb) = (strides(&c.b, &b, Ix::L), strides(&c.b, &b, Ix::J));
        let threads = if par { rayon::current_num_threads() } else { 1 };
        let data = match (c.elem, &a.data, &b.data) {
            (PrimType::F32, Buffer::F32(x), Buffer::F32(y)) => {
                let mut out = vec![0f32; m * p];
                let run = |mm, kk, pp, a: *const f32, b: *const f32, c: *mut f32, rsc| unsafe {
                    matrixmultiply::sgemm(mm, kk, pp, 1.0, a, rsa, csa, b, rsb, csb, 0.0, c, rsc, 1)
                };
                blocks(m, p, k, threads, (rsa, csb), x, y, &mut out, run);
                Buffer::F32(out)
            }
            (PrimType::F64, Buffer::F64(x), Buffer::F64(y)) => {
                let mut out = vec![0f64; m * p];
                let run = |mm, kk, pp, a: *const f64, b: *const f64, c: *mut f64, rsc| unsafe {
                    matrixmultiply::dgemm(mm, kk, pp, 1.0, a, rsa, csa, b, rsb, csb, 0.0, c, rsc, 1)
                };
                blocks(m, p, k, threads, (rsa, csb), x, y, &mut out, run);
                Buffer::F64(out)
            }
            _ => return Ok(None),
        };
        Ok(Some(vec![arr(vec![m, p], data)]))
    }

    /// The array of an operand, if its shape matches the sizes of its subscripts.
    fn operand(
        &self,
        f: &Frame,
        o: &Operand,
        m: usize,
        p: usize,
        k: usize,
    ) -> R<Option<Arc<Array>>> {
        let Val::Arr(a) = self.get(f, o.arr)? else {
            return Ok(None);
        };
        let want = |x: Ix| match x {
            Ix::I => m,
            Ix::J => p,
            Ix::L => k,
        };
        let fits = a.shape.len() == 2
            && a.shape[0] == want(o.subs[0])
            && a.shape[1] == want(o.subs[1])
            && a.data.len() == a.shape[0] * a.shape[1];
        Ok(fits.then(|| a.clone()))
    }
}

/// `C (m×p, row-major) = A·B`, split into blocks of rows (or of columns, when `C` has
/// fewer rows than workers) run in parallel. `run(m, k, p, a, b, c, rsc)` multiplies one
/// block; `(rsa, csb)` step `A` to a row and `B` to a column.
#[allow(clippy::too_many_arguments)]
fn blocks<T: Send + Sync>(
    m: usize,
    p: usize,
    k: usize,
    threads: usize,
    (rsa, csb): (isize, isize),
    a: &[T],
    b: &[T],
    c: &mut [T],
    run: impl Fn(usize, usize, usize, *const T, *const T, *mut T, isize) + Sync,
) {
    if m == 0 || p == 0 {
        return;
    }
    let by_rows = m >= p || m >= 4 * threads;
    let n = if by_rows { m } else { p };
    // A block of at least 16 rows or columns, a few blocks per worker.
    let parts = if threads > 1 && m * p * k >= 1 << 15 {
        (threads * 2).min(n.div_ceil(16)).max(1)
    } else {
        1
    };
    let step = n.div_ceil(parts);
    let ptrs = Shared(a.as_ptr(), b.as_ptr(), c.as_mut_ptr());
    let one = |lo: usize| {
        let (pa, pb, pc) = ptrs.get();
        let hi = (lo + step).min(n);
        if lo >= hi {
            return;
        }
        // SAFETY: the blocks of C are disjoint; A and B are only read; every offset stays
        // inside the arrays, whose shapes were checked against m, p and k.
        unsafe {
            if by_rows {
                run(
                    hi - lo,
                    k,
                    p,
                    pa.offset(lo as isize * rsa),
                    pb,
                    pc.add(lo * p),
                    p as isize,
                )
            } else {
                run(
                    m,
                    k,
                    hi - lo,
                    pa,
                    pb.offset(lo as isize * csb),
                    pc.add(lo),
                    p as isize,
                )
            }
        }
    };
    if parts == 1 {
        one(0);
    } else {
        use rayon::prelude::*;
        (0..parts).into_par_iter().for_each(|t| one(t * step));
    }
}

#[cfg(test)]
mod tests {
    use super::blocks;

    /// `blocks` against a naive product, splitting by rows and by columns, with `A`
    /// transposed (column-major) and `B` row-major.
    #[test]
    fn blocks_match_a_naive_product() {
        for &(m, p, k) in &[(37, 5, 100), (3, 200, 64), (1, 1, 1), (64, 64, 9)] {
            // A(i, l) stored transposed: at l*m + i.
            let a: Vec<f64> = (0..m * k).map(|x| ((x * 7) % 11) as f64 - 5.0).collect();
            let b: Vec<f64> = (0..k * p).map(|x| ((x * 5) % 13) as f64 * 0.5).collect();
            let (rsa, csa, rsb, csb) = (1isize, m as isize, p as isize, 1isize);
            for threads in [1, 2, 4] {
                let mut c = vec![0f64; m * p];
                let run = |mm, kk, pp, a: *const f64, b: *const f64, c: *mut f64, rsc| unsafe {
                    matrixmultiply::dgemm(mm, kk, pp, 1.0, a, rsa, csa, b, rsb, csb, 0.0, c, rsc, 1)
                };
                blocks(m, p, k, threads, (rsa, csb), &a, &b, &mut c, run);
                for i in 0..m {
                    for j in 0..p {
                        let want: f64 = (0..k).map(|l| a[l * m + i] * b[l * p + j]).sum();
                        assert_eq!(c[i * p + j], want, "({m}, {p}, {k}) [{i}, {j}], {threads}");
                    }
                }
            }
        }
    }
}
