//! Matrix products. A map nest
//!
//! ```text
//! map (\i… -> map (\j… -> reduce (+) 0 (map (\l… -> A(i, l) * B(l, j)) …)) …) …
//! ```
//!
//! over floats, where each operand is an element of a two-dimensional array subscripted by
//! two of the three indices — through rows the maps take (`map (\row -> … row[l] …) a`),
//! iotas (`map (\j -> … a[l, j] …) (iota n)`), columns sliced out of an array
//! (`… (map2 (*) a[:, i] b[:, j]) …`, the slice's dimension the summed one), or any mix —
//! is the contraction
//! `C = A·B`. It runs as a GEMM (the `gemm` crates: packed, vectorised kernels for f32
//! and f64 with arbitrary strides, so transposed operands cost nothing; a product
//! with a side of at most 16 on `thin.rs`'s kernels), split over the rayon workers by rows
//! or columns of `C`, or by the summed index when it is much the longest (a weight
//! adjoint). A third map makes a batch of products,
//! its index outermost (`C[g][i][j]`) or in the middle (`C[i][g][j]`, per point and
//! component); a batch interleaved in memory with A's rows, or with the summed index of
//! both operands, runs by blocks of those, each block through every product while it is
//! in cache. The user's matrix products and the ones
//! reverse mode produces (`δᵀ·x` after the accumulator optimisation, `δ·W`) take this path.
//!
//! Nests are recognised once, when the executor is built, by the identity of the outer
//! map's lambda. At run time the sizes are checked; any mismatch (which the general path
//! reports as an error) falls back to the general path. The sum is blocked, so floating-
//! point results may differ from a sequential reduce in the last bits, as reductions split
//! across chunks already do. `RUNIC_GEMM=0` turns the path off.

use crate::error::R;
use crate::eval::{Ctx, Frame};
use crate::packed::Element;
use crate::value::{arr, Val};
use runic_data::{Array, Buffer};
use runic_ir::*;
use std::collections::HashMap;
use std::sync::Arc;

/// The indices of a contraction: rows of `C`, columns of `C`, the summed one, and the
/// batch.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Ix {
    I,
    J,
    L,
    /// The batch index of a batched product (`map (\g -> C_g = A_g·B_g)`).
    G,
}

/// One subscript of an operand: one of the contraction's indices, or a value fixed for the
/// whole nest (a loop counter, a constant).
#[derive(Clone, Debug)]
enum Sub {
    Ix(Ix),
    At(SubExp),
    /// A dimension a slice keeps whole (`a[:, j]`, a column): the next index that takes
    /// the slice's elements subscripts it.
    Open,
}

/// An operand: element `arr[subs…]`, where exactly two subscripts are indices.
#[derive(Clone, Debug)]
struct Operand {
    arr: VName,
    subs: Vec<Sub>,
}

impl Operand {
    fn has(&self, x: Ix) -> bool {
        self.subs.iter().any(|s| matches!(s, Sub::Ix(y) if *y == x))
    }

    /// The dimension of `arr` that is the first of this slice's (a row's length is the
    /// array's next dimension; a column's, `a[:, j]`, is the one it keeps whole).
    fn checked_dim(&self) -> usize {
        let open = self.subs.iter().position(|s| matches!(s, Sub::Open));
        open.unwrap_or(self.subs.len())
    }

    /// The operand's next dimension subscripted by `sub`: the first one a slice kept, or
    /// else the one after those subscripted so far.
    fn subscript(&mut self, sub: Sub) {
        match self.subs.iter_mut().find(|s| matches!(s, Sub::Open)) {
            Some(open) => *open = sub,
            None => self.subs.push(sub),
        }
    }
}

/// A recognised nest: `C[i, j] = Σ_l a(i, l) · b(l, j)` for `i < m`, `j < p`, `l < k`.
#[derive(Debug)]
pub struct Contraction {
    /// The number of products of a batched nest (`C` is then `[g][m][p]`, or `[m][g][p]`
    /// when `batch_inner`, or `[m][p]`, their sum, when `batch_summed`).
    batch: Option<SubExp>,
    batch_summed: bool,
    batch_inner: bool,
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
                let iotas = runic_ir::traverse::iotas(&f.body);
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

/// What a variable of the nest stands for.
#[derive(Clone, Debug)]
enum Sym {
    Index(Ix),
    /// `arr[subs…]`: an element, or a row when `arr` has more dimensions.
    Part(Operand),
    /// A value the recogniser does not follow: reading it rejects the nest.
    Opaque,
}

/// The contraction that `map w lam arrs` (binding `pat`) computes, if it is one: a nest
/// of two maps (`C[i][j]`), or of three with the batch index outermost (`C[g][i][j]`) or
/// in the middle (`C[i][g][j]`, the products of an interchanged nest: per point `i` and
/// component `g`, a matrix-vector product with the component's matrix).
fn recognise(
    iotas: &HashMap<VName, SubExp>,
    m: &SubExp,
    l1: &Lambda,
    a1: &[VName],
    pat: &[Param],
) -> Option<Contraction> {
    let [out] = pat else { return None };
    let elem = match out.ty.elem()? {
        t @ (PrimType::F32 | PrimType::F64) => t,
        _ => return None,
    };
    let orders: &[&[Ix]] = match out.ty.rank() {
        2 => &[&[Ix::I, Ix::J]],
        3 => &[&[Ix::G, Ix::I, Ix::J], &[Ix::I, Ix::G, Ix::J]],
        _ => return None,
    };
    orders
        .iter()
        .find_map(|order| contraction(iotas, order, m, l1, a1, elem))
}

/// The contraction computed by `map m l1 a1` when its maps run over the indices `order`
/// (outermost first, `J` last), then one `reduce (+) 0` over `L`.
fn contraction(
    iotas: &HashMap<VName, SubExp>,
    order: &[Ix],
    m: &SubExp,
    l1: &Lambda,
    a1: &[VName],
    elem: PrimType,
) -> Option<Contraction> {
    let mut env: HashMap<VName, Sym> = HashMap::new();
    let mut checks = Vec::new();
    let mut widths: HashMap<Ix, SubExp> = HashMap::new();
    // The maps: each body reads rows, then one map whose result is the body's result.
    let (mut w, mut lam, mut arrs) = (m, l1, a1);
    for (depth, &ix) in order.iter().enumerate() {
        bind_params(&mut env, iotas, w, ix, lam, arrs);
        widths.insert(ix, w.clone());
        if depth + 1 == order.len() {
            break;
        }
        let (s2, w2, l2, a2) = only_soac(&lam.body, &mut env, iotas, &mut checks)?;
        if lam.body.result != [SubExp::Var(s2.pat[0].name)] {
            return None;
        }
        (w, lam, arrs) = (w2, l2, a2);
    }
    let l2 = lam;
    // The inner body: reads and shape checks, and one reduce (+) 0 with a pre-lambda.
    let mut red = None;
    for st in &l2.body.stms {
        match sum_of(st, elem) {
            Some(sum) if red.is_none() => red = Some(sum),
            _ => plain_stm(st, &mut env, iotas, &mut checks)?,
        }
    }
    let (r, (k, a3, pre)) = red?;
    if l2.body.result != [SubExp::Var(r)] {
        return None;
    }
    // A sum over a batch of products (`C = Σ_g A_g·B_g`, a two-map nest only): the
    // reduction runs over the batch, its pre-lambda reads the batch's operands and sums
    // their product over `L` in one more reduction.
    let mut summed_batch = None;
    let inner_sum = pre.body.stms.last().and_then(|st| sum_of(st, elem));
    let (k, a3, pre) = match inner_sum {
        Some((inner, (k2, a4, pre2))) if order.len() == 2 => {
            bind_params(&mut env, iotas, k, Ix::G, pre, a3);
            for st in &pre.body.stms {
                if st.pat.first().map(|p| p.name) != Some(inner) {
                    plain_stm(st, &mut env, iotas, &mut checks)?;
                }
            }
            if pre.body.result != [SubExp::Var(inner)] {
                return None;
            }
            summed_batch = Some(k.clone());
            (k2, a4, pre2)
        }
        _ => (k, a3, pre),
    };
    // The pre-lambda: element reads, then one multiplication.
    bind_params(&mut env, iotas, k, Ix::L, pre, a3);
    let mut product = None;
    for st in &pre.body.stms {
        match &st.exp {
            Exp::Basic(BasicOp::BinOp(BinOp::Mul, SubExp::Var(u), SubExp::Var(v)))
                if product.is_none() =>
            {
                let (Some(Sym::Part(a)), Some(Sym::Part(b))) = (env.get(u), env.get(v)) else {
                    return None;
                };
                product = Some((st.pat[0].name, a.clone(), b.clone()));
            }
            _ => plain_stm(st, &mut env, iotas, &mut checks)?,
        }
    }
    let (x, a, b) = product?;
    if pre.body.result != [SubExp::Var(x)] {
        return None;
    }
    let (a, b) = order_operands(a, b)?;
    Some(Contraction {
        batch: widths.get(&Ix::G).cloned().or(summed_batch.clone()),
        batch_summed: summed_batch.is_some(),
        batch_inner: order.first() == Some(&Ix::I) && order.len() == 3,
        m: widths[&Ix::I].clone(),
        p: widths[&Ix::J].clone(),
        k: k.clone(),
        a,
        b,
        checks,
        elem,
    })
}

/// A `reduce` over width `.0` of the inputs `.1` mapped by the pre-lambda `.2`.
type Reduction<'l> = (&'l SubExp, &'l [VName], &'l Lambda);

/// `st` if it is a `reduce (+) 0` with a pre-lambda, binding one variable: that variable,
/// and the reduction's width, inputs and pre-lambda.
fn sum_of(st: &Stm, elem: PrimType) -> Option<(VName, Reduction<'_>)> {
    let (
        Exp::Soac(Soac::Reduce {
            w,
            arrs,
            pre: Some(pre),
            lam,
            neutral,
            ..
        }),
        [out],
    ) = (&st.exp, st.pat.as_slice())
    else {
        return None;
    };
    let zero =
        matches!(neutral.as_slice(), [SubExp::Const(z)] if *z == runic_prim::Prim::zero(elem));
    (zero && is_add(lam)).then_some((out.name, (w, arrs.as_slice(), pre)))
}

/// Binds the parameters of a map's lambda over index `ix`: iotas are the index, other
/// parameters rows (or elements) of their arrays at the index.
fn bind_params(
    env: &mut HashMap<VName, Sym>,
    iotas: &HashMap<VName, SubExp>,
    w: &SubExp,
    ix: Ix,
    lam: &Lambda,
    arrs: &[VName],
) {
    for (q, a) in lam.params.iter().zip(arrs) {
        let sym = if iotas.get(a) == Some(w) {
            Sym::Index(ix)
        } else {
            match env.get(a) {
                None => Sym::Part(Operand {
                    arr: *a,
                    subs: vec![Sub::Ix(ix)],
                }),
                Some(Sym::Part(o)) => {
                    let mut o = o.clone();
                    o.subscript(Sub::Ix(ix));
                    Sym::Part(o)
                }
                Some(_) => Sym::Opaque,
            }
        };
        env.insert(q.name, sym);
    }
}

/// A statement of the nest other than its maps and reduce: an iota, a read (`x[…]` with
/// the indices or fixed values), or a shape check of a row.
fn plain_stm(
    st: &Stm,
    env: &mut HashMap<VName, Sym>,
    iotas: &HashMap<VName, SubExp>,
    checks: &mut Vec<(VName, usize, SubExp)>,
) -> Option<()> {
    match &st.exp {
        Exp::Basic(BasicOp::Range { .. }) if iotas.contains_key(&st.pat[0].name) => {
            env.insert(st.pat[0].name, Sym::Opaque);
        }
        Exp::Basic(BasicOp::ShapeCheck { arr, shape, .. }) => {
            let (Some(Sym::Part(o)), [d]) = (env.get(arr), shape.as_slice()) else {
                return None;
            };
            checks.push((o.arr, o.checked_dim(), d.clone()));
        }
        Exp::Basic(BasicOp::Index(base, idx)) => {
            let (mut o, whole_array) = match env.get(base) {
                None => (
                    Operand {
                        arr: *base,
                        subs: Vec::new(),
                    },
                    true,
                ),
                Some(Sym::Part(o)) => (o.clone(), false),
                Some(_) => return None,
            };
            for d in idx {
                let s = match d {
                    // A whole dimension of an array from outside the nest (`a[:, j]`, `0:`,
                    // `0:n`); a shorter slice fails the run-time shape check, and the nest
                    // then runs as written.
                    DimIndex::Slice { .. } if whole_array && d.is_prefix_slice(None) => {
                        o.subs.push(Sub::Open);
                        continue;
                    }
                    DimIndex::Fix(s) => s,
                    DimIndex::Slice { .. } => return None,
                };
                let sub = match s {
                    SubExp::Var(v) => match env.get(v) {
                        Some(Sym::Index(i)) => Sub::Ix(*i),
                        None => Sub::At(s.clone()),
                        Some(_) => return None,
                    },
                    c => Sub::At(c.clone()),
                };
                // An array's subscripts are its dimensions in order; a row's go first to
                // the dimensions its slice kept.
                if whole_array {
                    o.subs.push(sub);
                } else {
                    o.subscript(sub);
                }
            }
            env.insert(st.pat[0].name, Sym::Part(o));
        }
        _ => return None,
    }
    Some(())
}

/// The only map of the outer body, after its plain statements, with its width, lambda
/// and inputs.
fn only_soac<'b>(
    body: &'b Body,
    env: &mut HashMap<VName, Sym>,
    iotas: &HashMap<VName, SubExp>,
    checks: &mut Vec<(VName, usize, SubExp)>,
) -> Option<(&'b Stm, &'b SubExp, &'b Lambda, &'b [VName])> {
    let mut found = None;
    for st in &body.stms {
        match &st.exp {
            Exp::Soac(Soac::Map { w, lam, arrs }) if found.is_none() && st.pat.len() == 1 => {
                found = Some((st, w, lam, arrs.as_slice()))
            }
            _ if found.is_none() => plain_stm(st, env, iotas, checks)?,
            _ => return None,
        }
    }
    found
}

/// `(A, B)` with A subscripted by I and L and B by L and J (multiplication commutes),
/// each by exactly two indices.
fn order_operands(a: Operand, b: Operand) -> Option<(Operand, Operand)> {
    let two = |o: &Operand| {
        let open = o.subs.iter().any(|s| matches!(s, Sub::Open));
        let indices = (o.subs.iter())
            .filter(|s| matches!(s, Sub::Ix(x) if *x != Ix::G))
            .count();
        !open && indices == 2
    };
    if !two(&a) || !two(&b) {
        return None;
    }
    let is = |o: &Operand, x: Ix, y: Ix| o.has(x) && o.has(y);
    if is(&a, Ix::I, Ix::L) && is(&b, Ix::L, Ix::J) {
        Some((a, b))
    } else if is(&b, Ix::I, Ix::L) && is(&a, Ix::L, Ix::J) {
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
        let g = match &c.batch {
            None => 1,
            Some(b) => match size(b)? {
                Some(g) => g,
                None => return Ok(None),
            },
        };
        for (x, dim, d) in &c.checks {
            let shape = self.get(f, *x)?.shape().to_vec();
            if shape.get(*dim).copied() != size(d)? {
                return Ok(None);
            }
        }
        let sizes = [m, p, k, g];
        // Only a product run as a SOAC of its own (in parallel) has a profile line.
        crate::profile::note(par, || match &c.batch {
            None => format!("{m}×{k} · {k}×{p}"),
            Some(_) if c.batch_summed => format!("{m}×{k} · {k}×{p}, a sum of {g}"),
            Some(_) => format!("{m}×{k} · {k}×{p}, a batch of {g}"),
        });
        let (Some(a), Some(b)) = (self.operand(f, &c.a, sizes)?, self.operand(f, &c.b, sizes)?)
        else {
            return Ok(None);
        };
        let (rsa, csa) = (a.stride(Ix::I), a.stride(Ix::L));
        let (rsb, csb) = (b.stride(Ix::L), b.stride(Ix::J));
        let (ga, gb) = (a.stride(Ix::G) as usize, b.stride(Ix::G) as usize);
        let threads = if par { rayon::current_num_threads() } else { 1 };
        // Where product t's row r starts in C: `t·batch_step + r·rsc`.
        let (shape, rsc, batch_step) = match (&c.batch, c.batch_inner) {
            _ if c.batch_summed => (vec![m, p], p, 0),
            (Some(_), false) => (vec![g, m, p], p, m * p),
            (Some(_), true) => (vec![m, g, p], g * p, p),
            (None, _) => (vec![m, p], p, 0),
        };
        let layout = Layout {
            summed: c.batch_summed,
            sizes: [m, p, k, g],
            strides: [rsa, csa, rsb, csb],
            offsets: [a.offset, b.offset],
            batch_steps: [ga, gb],
            out_steps: [rsc, batch_step],
            threads,
        };
        let data = match (c.elem, &a.arr.data, &b.arr.data) {
            (PrimType::F32, Buffer::F32(x), Buffer::F32(y)) => {
                Buffer::F32(product(x, y, &layout).into())
            }
            (PrimType::F64, Buffer::F64(x), Buffer::F64(y)) => {
                Buffer::F64(product(x, y, &layout).into())
            }
            _ => return Ok(None),
        };
        Ok(Some(vec![arr(shape, data)]))
    }

    /// An operand's array, where its element `(0, 0)` is and how far its indices step,
    /// if its shape fits the sizes `[m, p, k, g]` and its fixed subscripts are in bounds.
    fn operand(&self, f: &Frame, o: &Operand, sizes: [usize; 4]) -> R<Option<Placed>> {
        let Val::Arr(a) = self.get(f, o.arr)? else {
            return Ok(None);
        };
        if a.shape.len() != o.subs.len() || a.data.len() != a.shape.iter().product::<usize>() {
            return Ok(None);
        }
        let mut offset = 0;
        let mut strides = [0isize; 4];
        let mut step = 1usize;
        for (d, s) in o.subs.iter().enumerate().rev() {
            let n = a.shape[d];
            match s {
                Sub::Ix(x) => {
                    if n != sizes[*x as usize] {
                        return Ok(None);
                    }
                    strides[*x as usize] = step as isize;
                }
                Sub::At(v) => match usize::try_from(self.sub(f, v)?.i64()?) {
                    Ok(i) if i < n => offset += i * step,
                    _ => return Ok(None),
                },
                // `order_operands` accepts no operand with a dimension left open.
                Sub::Open => return Ok(None),
            }
            step *= n;
        }
        Ok(Some(Placed {
            arr: a.clone(),
            offset,
            strides,
        }))
    }
}

/// An operand at run time.
struct Placed {
    arr: Arc<Array>,
    offset: usize,
    /// The step of each index (`Ix as usize`) in elements; 0 for an index the operand
    /// does not have (the same matrix for every product of a batch).
    strides: [isize; 4],
}

impl Placed {
    fn stride(&self, x: Ix) -> isize {
        self.strides[x as usize]
    }
}

/// Where the operands of a (batched) product are and how to step through them.
struct Layout {
    /// The products of the batch are added into one `C`.
    summed: bool,
    /// `[m, p, k, g]`.
    sizes: [usize; 4],
    /// `[rsa, csa, rsb, csb]`: the steps of A's rows and columns and B's.
    strides: [isize; 4],
    /// Where A's and B's element (0, 0) of the first product is.
    offsets: [usize; 2],
    /// How far A and B move from one product of the batch to the next (0: shared).
    batch_steps: [usize; 2],
    /// `[rsc, step]`: the step of C's rows, and how far C moves from one product to the
    /// next.
    out_steps: [usize; 2],
    threads: usize,
}

/// The `g` products `C_t = A_t·B_t` into one buffer of `g·m·p` elements, laid out by
/// `l.out_steps` (nothing to multiply when a size is 0: `C` is then empty or zeros). A
/// batch of at least two products per worker runs its products in parallel, each on one
/// worker (a product as small as a 16×16 adjoint would not be split); a smaller batch
/// splits each product.
fn product<T: Element + std::ops::AddAssign>(x: &[T], y: &[T], l: &Layout) -> Vec<T> {
    let [m, p, k, g] = l.sizes;
    let [rsa, csa, rsb, csb] = l.strides;
    let [rsc, cstep] = l.out_steps;
    if m * p * k * g == 0 {
        // Nothing to multiply: C is empty, or zeros (a sum of no products, or of products
        // over an empty index, is zero too).
        let len = if l.summed { m * p } else { g * m * p };
        return vec![T::default(); len];
    }
    if g == 1 && !l.summed {
        if let Some(out) = split_over_k(x, y, l) {
            return out;
        }
    }
    // Not zeroed first: with β = 0 the kernel writes every element of C without reading
    // it, and the products cover all of C (zeroing 32 MB costs a few ms per call).
    let mut out: Vec<T> = Vec::with_capacity(g * m * p);
    let run = |mm, kk, pp, a: *const T, b: *const T, c: *mut T, rsc| unsafe {
        T::gemm(mm, kk, pp, a, (rsa, csa), b, (rsb, csb), c, rsc, false)
    };
    if l.summed {
        return batch_sum(x, y, l);
    }
    if let Some(out) = summed_by_blocks(x, y, l) {
        return out;
    }
    let ptrs = Shared(x.as_ptr(), y.as_ptr(), out.as_mut_ptr());
    let one = |t: usize, threads: usize| {
        let (px, py, pc) = ptrs.get();
        // SAFETY: product t reads A and B inside their arrays (shapes checked against the
        // sizes) and writes its own elements of C, disjoint from every other product's.
        unsafe {
            let a = px.add(l.offsets[0] + t * l.batch_steps[0]);
            let b = py.add(l.offsets[1] + t * l.batch_steps[1]);
            let c = pc.add(t * cstep);
            blocks(m, p, k, threads, (rsa, csb), a, b, c, rsc, run);
        }
    };
    // The batch inside A's rows (`A_t[i]` at `i·rsa + t·step`, the GMM's `x_i − μ_t`): a
    // product at a time would stream the whole of A once per product, reading a few
    // cache lines of each row; blocks of rows, each multiplied by every product while in
    // cache, read it once.
    let interleaved = g > 1 && rsa.unsigned_abs() > l.batch_steps[0] && l.batch_steps[0] > 0;
    if interleaved && m >= 64 && m * p * k * g >= 1 << 15 {
        let rows = (32768 / rsa.unsigned_abs()).clamp(16, m);
        let tile = |lo: usize| {
            let (px, py, pc) = ptrs.get();
            let hi = (lo + rows).min(m);
            for t in 0..g {
                // SAFETY: rows lo..hi of product t, inside A (shape checked) and its own
                // block of C; the row blocks of C are disjoint.
                unsafe {
                    let a = px
                        .add(l.offsets[0] + t * l.batch_steps[0])
                        .offset(lo as isize * rsa);
                    let b = py.add(l.offsets[1] + t * l.batch_steps[1]);
                    let c = pc.add(t * cstep + lo * rsc);
                    run(hi - lo, k, p, a, b, c, rsc as isize);
                }
            }
        };
        let starts: Vec<usize> = (0..m).step_by(rows).collect();
        if l.threads > 1 {
            use rayon::prelude::*;
            starts.into_par_iter().for_each(tile);
        } else {
            starts.into_iter().for_each(tile);
        }
    } else if g >= 2 * l.threads && l.threads > 1 && m * p * k * g >= 1 << 15 {
        use rayon::prelude::*;
        (0..g).into_par_iter().for_each(|t| one(t, 1));
    } else {
        (0..g).for_each(|t| one(t, l.threads));
    }
    // SAFETY: the g products wrote all g·m·p elements (each product's m×p block, the
    // blocks tiling the buffer by `out_steps`).
    unsafe { out.set_len(g * m * p) };
    out
}

/// `C = Σ_t A_t·B_t` (`m×p`), split over the workers by blocks of `C` as one product is;
/// each block takes the `g` products in turn, the first writing it and the others adding
/// to it (β = 1) while it is in cache.
fn batch_sum<T: Element>(x: &[T], y: &[T], l: &Layout) -> Vec<T> {
    let [m, p, k, g] = l.sizes;
    let [rsa, csa, rsb, csb] = l.strides;
    let [rsc, _] = l.out_steps;
    let mut out: Vec<T> = Vec::with_capacity(m * p);
    let [ga, gb] = l.batch_steps;
    let run = |mm, kk, pp, a: *const T, b: *const T, c: *mut T, rsc| {
        for t in 0..g {
            // SAFETY: product t's block: A and B offset by whole products inside their
            // arrays (shapes checked against the sizes), this block of C.
            unsafe {
                let (a, b) = (a.add(t * ga), b.add(t * gb));
                T::gemm(mm, kk, pp, a, (rsa, csa), b, (rsb, csb), c, rsc, t > 0);
            }
        }
    };
    // SAFETY: the blocks tile C; A and B are read at the first product's offsets, stepped
    // by `run` within their arrays.
    unsafe {
        let (a, b) = (x.as_ptr().add(l.offsets[0]), y.as_ptr().add(l.offsets[1]));
        blocks(
            m,
            p,
            k,
            l.threads,
            (rsa, csb),
            a,
            b,
            out.as_mut_ptr(),
            rsc,
            run,
        );
        // Every block was written by its first product (β = 0): all m·p elements.
        out.set_len(m * p);
    }
    out
}

/// The products of a batch whose summed index lies outside the batch in both operands
/// (`A_t[i, l]` at `l·csa + t·step`, as in the GMM's `Σ_points δ ⊗ (x − μ)`), by blocks of
/// that index, each multiplied into every product while in cache: a few contiguous
/// ranges of blocks in parallel, each into a private `C` (small: at most 2¹⁶ elements),
/// then added up in order. `None` when the batch does not have that shape.
fn summed_by_blocks<T: Element + std::ops::AddAssign>(
    x: &[T],
    y: &[T],
    l: &Layout,
) -> Option<Vec<T>> {
    let [m, p, k, g] = l.sizes;
    let [rsa, csa, rsb, csb] = l.strides;
    let [rsc, cstep] = l.out_steps;
    let inside = |step: isize, batch: usize| step.unsigned_abs() > batch && batch > 0;
    if g < 2
        || k < 512
        || g * m * p > 1 << 16
        || !inside(csa, l.batch_steps[0])
        || !inside(rsb, l.batch_steps[1])
    {
        return None;
    }
    let block = (32768 / csa.unsigned_abs().max(rsb.unsigned_abs())).clamp(16, k);
    let parts = if l.threads > 1 {
        (l.threads * 2).min(k / block).max(1)
    } else {
        1
    };
    let per_part = k.div_ceil(parts);
    let ptrs = Shared(x.as_ptr(), y.as_ptr(), std::ptr::null_mut::<T>());
    let part = |j: usize| -> Vec<T> {
        let (px, py, _) = ptrs.get();
        let mut c = vec![T::default(); g * m * p];
        let (lo, hi) = (j * per_part, ((j + 1) * per_part).min(k));
        for b0 in (lo..hi).step_by(block) {
            let b1 = (b0 + block).min(hi);
            for t in 0..g {
                // SAFETY: columns b0..b1 of A_t and rows b0..b1 of B_t, inside the arrays
                // (shapes checked); C is this part's own buffer.
                unsafe {
                    let a = px
                        .add(l.offsets[0] + t * l.batch_steps[0])
                        .offset(b0 as isize * csa);
                    let b = py
                        .add(l.offsets[1] + t * l.batch_steps[1])
                        .offset(b0 as isize * rsb);
                    let cp = c.as_mut_ptr().add(t * cstep);
                    T::gemm(
                        m,
                        b1 - b0,
                        p,
                        a,
                        (rsa, csa),
                        b,
                        (rsb, csb),
                        cp,
                        rsc as isize,
                        true,
                    );
                }
            }
        }
        c
    };
    let sums: Vec<Vec<T>> = if parts > 1 {
        use rayon::prelude::*;
        (0..parts).into_par_iter().map(part).collect()
    } else {
        vec![part(0)]
    };
    let mut sums = sums.into_iter();
    let mut out = sums.next()?;
    for s in sums {
        for (o, v) in out.iter_mut().zip(s) {
            *o += v;
        }
    }
    Some(out)
}

/// One product `C = A·B` whose summed index is long beside the side of `C` that
/// [`blocks`] would split (`δᵀ·x`, the MLP's weight adjoint, 256×1024 · 1024×784), split
/// over the workers by ranges of that index instead, each part into its own `C`, then
/// added up. Split by rows of `C`, every worker packs all of `B` (k·p elements; by
/// columns, all of `A`), where a part of the sum costs about three passes over `C`: this
/// split packs less when `k` is over three times the split side (the MLP's adjoint: 5 %
/// faster). `None` for other products.
fn split_over_k<T: Element + std::ops::AddAssign>(x: &[T], y: &[T], l: &Layout) -> Option<Vec<T>> {
    let [m, p, k, _] = l.sizes;
    let [rsa, csa, rsb, csb] = l.strides;
    let side = if split_by_rows(m, p, l.threads) { m } else { p };
    let parts = l.threads.min(k / MIN_SUMMED_PART);
    if parts < 2 || k <= 3 * side || m * p * k < 1 << 15 || l.out_steps[0] != p {
        return None;
    }
    let ptrs = Shared(x.as_ptr(), y.as_ptr(), std::ptr::null_mut::<T>());
    let part = |t: usize| -> Vec<T> {
        let (px, py, _) = ptrs.get();
        let (lo, hi) = (t * k / parts, (t + 1) * k / parts);
        let mut c: Vec<T> = Vec::with_capacity(m * p);
        // SAFETY: columns lo..hi of A and rows lo..hi of B, inside the arrays (shapes
        // checked against the sizes); with β = 0 the kernel writes all m·p elements of
        // this part's own C (lo < hi: every part has at least MIN_SUMMED_PART steps).
        unsafe {
            let a = px.add(l.offsets[0]).offset(lo as isize * csa);
            let b = py.add(l.offsets[1]).offset(lo as isize * rsb);
            T::gemm(
                m,
                hi - lo,
                p,
                a,
                (rsa, csa),
                b,
                (rsb, csb),
                c.as_mut_ptr(),
                p as isize,
                false,
            );
            c.set_len(m * p);
        }
        c
    };
    use rayon::prelude::*;
    let mut sums: Vec<Vec<T>> = (0..parts).into_par_iter().map(part).collect();
    let rest = sums.split_off(1);
    let mut out = sums.pop()?;
    // The parts added in order, by chunks of C in parallel.
    const CHUNK: usize = 1 << 14;
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(i, o)| {
        for r in &rest {
            for (a, b) in o.iter_mut().zip(&r[i * CHUNK..]) {
                *a += *b;
            }
        }
    });
    Some(out)
}

/// The fewest steps of the summed index a part of [`split_over_k`] takes.
const MIN_SUMMED_PART: usize = 128;

/// Whether [`blocks`] splits `C` (`m×p`) by rows rather than by columns: by columns when
/// `C` is wider than tall, unless there are rows enough for every worker; a thin `C` (a
/// 10-row adjoint) always by columns, so that each worker reads and packs its own columns
/// of `B` (by rows, each would stream all of `B` for a few rows of `C`).
fn split_by_rows(m: usize, p: usize, threads: usize) -> bool {
    m >= p || (m >= 4 * threads && m > crate::thin::THIN)
}

/// `C (m×p, rows `rsc` apart) = A·B`, split into blocks of rows (or of columns, when `C`
/// has fewer rows than workers) run in parallel, one per worker. `run(m, k, p, a, b, c, rsc)` multiplies
/// one block; `(rsa, csb)` step `A` to a row and `B` to a column.
///
/// # Safety
/// `a`, `b` and `c` must address `m×k`, `k×p` and `m×p` elements with the given steps,
/// and no other thread may write the elements of `C` meanwhile.
#[allow(clippy::too_many_arguments)]
unsafe fn blocks<T: Send + Sync>(
    m: usize,
    p: usize,
    k: usize,
    threads: usize,
    (rsa, csb): (isize, isize),
    a: *const T,
    b: *const T,
    c: *mut T,
    rsc: usize,
    run: impl Fn(usize, usize, usize, *const T, *const T, *mut T, isize) + Sync,
) {
    if m == 0 || p == 0 {
        return;
    }
    let by_rows = split_by_rows(m, p, threads);
    let n = if by_rows { m } else { p };
    // One block (of at least 16 rows or columns) per worker: every block packs the
    // operand it shares with the others again, so more blocks than workers cost packing
    // (the MLP's gradient: 7 % slower with two blocks per worker).
    let parts = if threads > 1 && m * p * k >= 1 << 15 {
        threads.min(n.div_ceil(16)).max(1)
    } else {
        1
    };
    let step = n.div_ceil(parts);
    let ptrs = Shared(a, b, c);
    let one = |lo: usize| {
        let (pa, pb, pc) = ptrs.get();
        let hi = (lo + step).min(n);
        if lo >= hi {
            return;
        }
        // SAFETY: the blocks of C are disjoint; A and B are only read; every offset stays
        // inside the arrays (the caller's contract).
        unsafe {
            if by_rows {
                run(
                    hi - lo,
                    k,
                    p,
                    pa.offset(lo as isize * rsa),
                    pb,
                    pc.add(lo * rsc),
                    rsc as isize,
                )
            } else {
                run(
                    m,
                    k,
                    hi - lo,
                    pa,
                    pb.offset(lo as isize * csb),
                    pc.add(lo),
                    rsc as isize,
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
    use crate::packed::Element;

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
                    f64::gemm(mm, kk, pp, a, (rsa, csa), b, (rsb, csb), c, rsc, false)
                };
                // SAFETY: the vectors hold m×k, k×p and m×p elements at these steps.
                unsafe {
                    blocks(
                        m,
                        p,
                        k,
                        threads,
                        (rsa, csb),
                        a.as_ptr(),
                        b.as_ptr(),
                        c.as_mut_ptr(),
                        p,
                        run,
                    )
                };
                for i in 0..m {
                    for j in 0..p {
                        let want: f64 = (0..k).map(|l| a[l * m + i] * b[l * p + j]).sum();
                        assert_eq!(c[i * p + j], want, "({m}, {p}, {k}) [{i}, {j}], {threads}");
                    }
                }
            }
        }
    }

    /// A product whose summed index is long beside the side of C a split by rows would
    /// take (`δᵀ·x`: A stored transposed) is split by ranges of that index on two and three
    /// workers, the parts added up; a product without that shape is not. Integer values:
    /// every order of the sum is exact.
    #[test]
    fn products_split_by_the_summed_index_match_a_naive_product() {
        use super::{product, split_over_k, Layout};
        for &(m, p, k, threads, split) in &[
            (40, 70, 600, 2, true),
            (40, 70, 601, 3, true),
            (70, 40, 1000, 2, true),
            (40, 70, 100, 2, false),
            (40, 70, 600, 1, false),
        ] {
            let a: Vec<f64> = (0..m * k).map(|x| ((x * 7) % 11) as f64 - 5.0).collect();
            let b: Vec<f64> = (0..k * p).map(|x| ((x * 5) % 13) as f64 - 6.0).collect();
            let l = Layout {
                summed: false,
                sizes: [m, p, k, 1],
                strides: [1, m as isize, p as isize, 1],
                offsets: [0, 0],
                batch_steps: [0, 0],
                out_steps: [p, 0],
                threads,
            };
            assert_eq!(split_over_k(&a, &b, &l).is_some(), split, "({m}, {p}, {k})");
            let c = product(&a, &b, &l);
            for i in 0..m {
                for j in 0..p {
                    let want: f64 = (0..k).map(|x| a[x * m + i] * b[x * p + j]).sum();
                    assert_eq!(c[i * p + j], want, "({m}, {p}, {k}) [{i}, {j}], {threads}");
                }
            }
        }
    }

    /// A batch of products into `C[i][g][j]` (the batch index in the middle) and into
    /// `C[g][i][j]`, on one and on two workers (in parallel over the batch), against a
    /// naive product.
    #[test]
    fn batched_products_match_a_naive_product() {
        use super::{product, Layout};
        let (m, p, k, g) = (3000, 16, 16, 7);
        // A(t, i, l) at [i][t][l] (rows of points, components inside); B(t, l, j) at
        // [t][j][l] (each component's matrix, transposed).
        let a: Vec<f64> = (0..m * g * k)
            .map(|x| ((x * 7) % 11) as f64 - 5.0)
            .collect();
        let b: Vec<f64> = (0..g * p * k)
            .map(|x| ((x * 5) % 13) as f64 * 0.5)
            .collect();
        for inner in [true, false] {
            for threads in [1, 2] {
                let (rsc, step) = if inner { (g * p, p) } else { (p, m * p) };
                let l = Layout {
                    summed: false,
                    sizes: [m, p, k, g],
                    strides: [(g * k) as isize, 1, 1, k as isize],
                    offsets: [0, 0],
                    batch_steps: [k, p * k],
                    out_steps: [rsc, step],
                    threads,
                };
                let c = product(&a, &b, &l);
                for t in 0..g {
                    for i in 0..m {
                        for j in 0..p {
                            let want: f64 = (0..k)
                                .map(|x| a[i * g * k + t * k + x] * b[t * p * k + j * k + x])
                                .sum();
                            assert_eq!(c[t * step + i * rsc + j], want, "{inner} {threads}");
                        }
                    }
                }
            }
        }
    }

    /// The sum of a batch of products (`Σ_t δ_t·U_t`, an LSTM's gates), each block of C
    /// taking the products in turn, on one and on two workers, against a naive sum
    /// (integer values: every order of the sum is exact).
    #[test]
    fn summed_batches_match_a_naive_sum() {
        use super::{product, Layout};
        let (m, p, k, g) = (300, 40, 24, 4);
        // A(t, i, l) at [t][i][l]; B(t, l, j) at [t][l][j].
        let a: Vec<f64> = (0..g * m * k)
            .map(|x| ((x * 7) % 11) as f64 - 5.0)
            .collect();
        let b: Vec<f64> = (0..g * k * p)
            .map(|x| ((x * 5) % 13) as f64 - 6.0)
            .collect();
        for threads in [1, 2] {
            let l = Layout {
                summed: true,
                sizes: [m, p, k, g],
                strides: [k as isize, 1, p as isize, 1],
                offsets: [0, 0],
                batch_steps: [m * k, k * p],
                out_steps: [p, 0],
                threads,
            };
            let c = product(&a, &b, &l);
            assert_eq!(c.len(), m * p);
            // No products, or products over an empty index: zeros.
            for (g0, k0) in [(0, k), (g, 0)] {
                let empty = Layout {
                    sizes: [m, p, k0, g0],
                    ..l
                };
                assert_eq!(product(&a, &b, &empty), vec![0.0; m * p]);
            }
            for i in 0..m {
                for j in 0..p {
                    let want: f64 = (0..g)
                        .flat_map(|t| (0..k).map(move |x| (t, x)))
                        .map(|(t, x)| a[t * m * k + i * k + x] * b[t * k * p + x * p + j])
                        .sum();
                    assert_eq!(c[i * p + j], want, "{threads}");
                }
            }
        }
    }

    /// A batch summed over an index that lies outside the batch in both operands (the
    /// GMM's adjoint of Q: `Σ_points δ[l][t][i] · d[l][t][j]`), by blocks of the summed
    /// index, against a naive product (integer values: every order of the sum is exact).
    #[test]
    fn products_summed_by_blocks_match_a_naive_product() {
        use super::{product, Layout};
        let (m, p, k, g) = (16, 8, 3000, 5);
        let a: Vec<f64> = (0..k * g * m)
            .map(|x| ((x * 7) % 11) as f64 - 5.0)
            .collect();
        let b: Vec<f64> = (0..k * g * p)
            .map(|x| ((x * 5) % 13) as f64 - 6.0)
            .collect();
        for threads in [1, 2] {
            let l = Layout {
                summed: false,
                sizes: [m, p, k, g],
                strides: [1, (g * m) as isize, (g * p) as isize, 1],
                offsets: [0, 0],
                batch_steps: [m, p],
                out_steps: [p, m * p],
                threads,
            };
            let c = product(&a, &b, &l);
            for t in 0..g {
                for i in 0..m {
                    for j in 0..p {
                        let want: f64 = (0..k)
                            .map(|x| a[x * g * m + t * m + i] * b[x * g * p + t * p + j])
                            .sum();
                        assert_eq!(c[t * m * p + i * p + j], want, "{threads}");
                    }
                }
            }
        }
    }
}
