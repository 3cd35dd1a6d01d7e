//! Automatic differentiation at run time (language.md §11).
//!
//! Every invocation of an AD operator (`jvp2`, `jmp2`, `vjp2`, `mjp2`) opens a *level*
//! with a fresh tag (tags grow in creation order, so an inner operator's tag is larger than
//! its enclosing ones', and a closed level's tag is never reused) and makes the scalars of its argument *active* at that
//! level: an [`Act`] holds the level, the primal value (itself possibly active at lower
//! levels) and either tangents (forward mode, one per direction) or a node id on the level's
//! tape (reverse mode). An operation on active scalars works at the highest level `l` among
//! its operands: it computes the primal on the operands' level-`l` primals (recursively,
//! so lower levels see the operation too), evaluates the partial derivatives with the shared
//! rules of [`runic_prim::deriv`] in the same lifted arithmetic (so outer levels
//! differentiate the derivative computation as well), and then either combines tangents or
//! records a tape node. Values active at lower levels are constants for level `l`, which is
//! what keeps nested operators from confusing their perturbations (§11.6).
//!
//! Reverse mode follows the dual-numbers method with linear factoring: node ids are handed
//! out in evaluation order, a node stores its (argument id, partial) records, and one
//! backward sweep from the highest id down accumulates every adjoint before its node is
//! visited, so the sweep is O(nodes + edges).
//!
//! Memory kept by one `vjp`: for every scalar operation executed on values that depend on
//! the input (and every input scalar), one node — a 4-byte edge-list offset — plus one edge
//! per operand that depends on the input (a 4-byte id and the partial, a boxed scalar of a
//! few dozen bytes unless it is the constant one or minus one); the primal values of
//! intermediate arrays stay alive only as long as the program holds them, the tape keeps
//! partials, not values. The sweep allocates one adjoint slot per node. `with_vjp` keeps its
//! result value, the user's derivative function and the argument until the sweep.

use crate::error::RuntimeError;
use crate::eval::R;
use crate::prim::deriv::{self, Algebra, Partial};
use crate::prim::{self, BinOp, Prim, PrimType, UnOp};
use crate::value::{Array, Data, Value};
use std::cell::RefCell;
use std::rc::Rc;

/// A scalar that may be active: the form in which the AD machinery handles scalars.
#[derive(Clone, Debug)]
pub enum S {
    P(Prim),
    A(Rc<Act>),
}

/// An active scalar at one level.
#[derive(Debug)]
pub struct Act {
    pub level: u32,
    /// The value at lower levels.
    pub primal: S,
    pub kind: Kind,
}

#[derive(Debug)]
pub enum Kind {
    /// Forward mode: one tangent per direction.
    Dual(Vec<S>),
    /// Reverse mode: the node on the level's tape.
    Node(u32),
}

/// A reverse-mode tape: node `i`'s edges are `edges[start[i]..start[i+1]]`.
#[derive(Default)]
pub struct Tape {
    start: Vec<u32>,
    edges: Vec<(u32, Partial<S>)>,
    /// Nodes that stand for a `with_vjp` call (node id, index into `AdState::customs`).
    customs: Vec<(u32, usize)>,
}

impl Tape {
    fn push(&mut self, edges: impl IntoIterator<Item = (u32, Partial<S>)>) -> R<u32> {
        let id = self.start.len();
        if id >= u32::MAX as usize || self.edges.len() >= u32::MAX as usize - 8 {
            return Err(RuntimeError::new("out of memory: the AD tape is too large"));
        }
        self.start.push(self.edges.len() as u32);
        self.edges.extend(edges);
        Ok(id as u32)
    }
    fn len(&self) -> usize {
        self.start.len()
    }
    fn node_edges(&self, id: usize) -> &[(u32, Partial<S>)] {
        let a = self.start[id] as usize;
        let b = self
            .start
            .get(id + 1)
            .map(|&e| e as usize)
            .unwrap_or(self.edges.len());
        &self.edges[a..b]
    }
}

enum Level {
    Forward(usize),
    Reverse(Tape),
}

thread_local! {
    /// The open AD levels with their tags, innermost last.
    static LEVELS: RefCell<Vec<(u32, Level)>> = const { RefCell::new(Vec::new()) };
    /// The last tag handed out.
    static LAST_TAG: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Per-evaluation AD state that must hold program values (`with_vjp` calls).
#[derive(Default)]
pub struct AdState<'a> {
    customs: RefCell<Vec<Custom<'a>>>,
}

/// A `with_vjp f f' x` call recorded for the backward sweep.
struct Custom<'a> {
    level: u32,
    /// The result as handed to the program (scalars are fresh level nodes).
    y: Value<'a>,
    fprime: Value<'a>,
    x: Value<'a>,
}

fn push_level(l: Level) -> R<u32> {
    let tag = LAST_TAG.with(|t| {
        let n = t.get().checked_add(1)?;
        t.set(n);
        Some(n)
    });
    let tag = tag.ok_or_else(|| RuntimeError::new("too many AD operator invocations"))?;
    LEVELS.with(|lv| lv.borrow_mut().push((tag, l)));
    Ok(tag)
}

fn pop_level() -> Option<Level> {
    LEVELS.with(|lv| lv.borrow_mut().pop().map(|(_, l)| l))
}

/// `Some(Some(directions))` for an open forward level, `Some(None)` for an open reverse one,
/// `None` for a closed level (whose values are then plain constants).
fn level_kind(l: u32) -> Option<Option<usize>> {
    LEVELS.with(|lv| {
        lv.borrow()
            .iter()
            .rev()
            .find(|(t, _)| *t == l)
            .map(|(_, x)| match x {
                Level::Forward(n) => Some(*n),
                Level::Reverse(_) => None,
            })
    })
}

/// Run `f` on the tape of the open reverse level `l`.
fn with_tape<T>(l: u32, f: impl FnOnce(&mut Tape) -> R<T>) -> R<T> {
    LEVELS.with(
        |lv| match lv.borrow_mut().iter_mut().rev().find(|(t, _)| *t == l) {
            Some((_, Level::Reverse(t))) => f(t),
            _ => Err(RuntimeError::new(
                "internal error: no tape for this AD level",
            )),
        },
    )
}

fn push_node(l: u32, edges: Vec<(u32, Partial<S>)>) -> R<u32> {
    with_tape(l, |t| t.push(edges))
}

// ------------------------------------------------------------------ scalars

impl S {
    pub fn level(&self) -> u32 {
        match self {
            S::P(_) => 0,
            S::A(a) => a.level,
        }
    }
    /// The plain value, without any derivative information.
    pub fn strip(&self) -> Prim {
        let mut s = self;
        loop {
            match s {
                S::P(p) => return *p,
                S::A(a) => s = &a.primal,
            }
        }
    }
    pub fn ty(&self) -> PrimType {
        self.strip().ty()
    }
    /// The value as seen by levels below `l`.
    fn primal_at(&self, l: u32) -> S {
        match self {
            S::A(a) if a.level == l => a.primal.clone(),
            _ => self.clone(),
        }
    }
    fn tangent_at(&self, l: u32, k: usize) -> Option<&S> {
        match self {
            S::A(a) if a.level == l => match &a.kind {
                Kind::Dual(ts) => ts.get(k),
                Kind::Node(_) => None,
            },
            _ => None,
        }
    }
    fn node_at(&self, l: u32) -> Option<u32> {
        match self {
            S::A(a) if a.level == l => match a.kind {
                Kind::Node(id) => Some(id),
                Kind::Dual(_) => None,
            },
            _ => None,
        }
    }
    fn zero(t: PrimType) -> S {
        S::P(Prim::zero(t))
    }
}

pub fn to_s(v: &Value) -> Option<S> {
    match v {
        Value::Prim(p) => Some(S::P(*p)),
        Value::Active(a) => Some(S::A(a.clone())),
        _ => None,
    }
}

pub fn from_s<'a>(s: S) -> Value<'a> {
    match s {
        S::P(p) => Value::Prim(p),
        S::A(a) => Value::Active(a),
    }
}

/// The lifted arithmetic, as an [`Algebra`] for the derivative rules.
struct Lift;

impl Algebra for Lift {
    type V = S;
    type E = RuntimeError;
    fn prim(&mut self, p: Prim) -> S {
        S::P(p)
    }
    fn binop(&mut self, op: BinOp, a: &S, b: &S) -> R<S> {
        binop(op, a, b)
    }
    fn unop(&mut self, op: UnOp, a: &S) -> R<S> {
        unop(op, a)
    }
    fn convert(&mut self, a: &S, to: PrimType) -> R<S> {
        convert(a, to)
    }
    fn select(&mut self, c: &S, a: &S, b: &S) -> R<S> {
        Ok(if c.strip().as_bool() == Some(true) {
            a.clone()
        } else {
            b.clone()
        })
    }
    fn not_differentiable(&mut self, what: &str) -> RuntimeError {
        RuntimeError::new(format!("not supported yet: the derivative of `{what}`"))
    }
}

fn prim_err(e: prim::PrimError) -> RuntimeError {
    RuntimeError::new(e.message())
}

/// Build the level-`l` result of an operation from its primal `r` and, per operand, the
/// operand (as passed), its type and its partial.
fn finish(l: u32, r: S, args: &[(&S, PrimType, Partial<S>)]) -> R<S> {
    let active = args.iter().any(|(a, _, p)| a.level() == l && !p.is_zero());
    if !active {
        return Ok(r);
    }
    match level_kind(l) {
        Some(Some(n)) => {
            let out_t = r.ty();
            let mut ts = Vec::with_capacity(n);
            for k in 0..n {
                let mut acc: Option<S> = None;
                for (a, t, p) in args {
                    if let Some(dx) = a.tangent_at(l, k) {
                        if let Some(c) = deriv::push_forward(&mut Lift, p, *t, dx)? {
                            acc = Some(match acc {
                                None => c,
                                Some(s) => Lift.tadd(out_t, &s, &c)?,
                            });
                        }
                    }
                }
                ts.push(acc.unwrap_or_else(|| S::zero(out_t)));
            }
            Ok(S::A(Rc::new(Act {
                level: l,
                primal: r,
                kind: Kind::Dual(ts),
            })))
        }
        Some(None) => {
            // Record the node straight into the tape (no per-node allocation).
            let id = with_tape(l, |t| {
                let edges = args
                    .iter()
                    .filter(|(_, _, p)| !p.is_zero())
                    .filter_map(|(a, _, p)| a.node_at(l).map(|id| (id, p.clone())));
                t.push(edges)
            })?;
            Ok(S::A(Rc::new(Act {
                level: l,
                primal: r,
                kind: Kind::Node(id),
            })))
        }
        None => Ok(r),
    }
}

/// `op a b` on possibly active scalars.
pub fn binop(op: BinOp, a: &S, b: &S) -> R<S> {
    let l = a.level().max(b.level());
    if l == 0 {
        return prim::binop(op, a.strip(), b.strip())
            .map(S::P)
            .map_err(prim_err);
    }
    let (ap, bp) = (a.primal_at(l), b.primal_at(l));
    let r = binop(op, &ap, &bp)?;
    let (ta, tb) = (ap.ty(), bp.ty());
    let [pa, pb] = deriv::binop_partials(&mut Lift, op, ta, &ap, &bp, &r)?;
    if pa.is_zero() && pb.is_zero() {
        return Ok(S::P(r.strip()));
    }
    finish(l, r, &[(a, ta, pa), (b, tb, pb)])
}

pub fn unop(op: UnOp, a: &S) -> R<S> {
    let l = a.level();
    if l == 0 {
        return Ok(S::P(prim::unop(op, a.strip())));
    }
    let ap = a.primal_at(l);
    let r = unop(op, &ap)?;
    let t = ap.ty();
    let p = deriv::unop_partial(&mut Lift, op, t, &ap, &r)?;
    if p.is_zero() {
        return Ok(S::P(r.strip()));
    }
    finish(l, r, &[(a, t, p)])
}

pub fn convert(a: &S, to: PrimType) -> R<S> {
    let l = a.level();
    if l == 0 {
        return Ok(S::P(prim::convert(a.strip(), to)));
    }
    let ap = a.primal_at(l);
    let r = convert(&ap, to)?;
    let t = ap.ty();
    finish(l, r, &[(a, t, deriv::convert_partial(t, to))])
}

/// The partial derivatives of a ternary operation at its (level-lowered) operands.
type TernaryPartials<'f> = &'f dyn Fn([&S; 3]) -> R<[Partial<S>; 3]>;

/// A ternary operation given by its primal function and partials (fma, mad, lerp).
pub fn ternary(args: [&S; 3], primal: &dyn Fn([&S; 3]) -> R<S>, partials: TernaryPartials) -> R<S> {
    let l = args.iter().map(|a| a.level()).max().unwrap_or(0);
    if l == 0 {
        return primal(args);
    }
    let ps: Vec<S> = args.iter().map(|a| a.primal_at(l)).collect();
    let pr = [&ps[0], &ps[1], &ps[2]];
    let r = primal(pr)?;
    let [p0, p1, p2] = partials(pr)?;
    finish(
        l,
        r,
        &[
            (args[0], ps[0].ty(), p0),
            (args[1], ps[1].ty(), p1),
            (args[2], ps[2].ty(), p2),
        ],
    )
}

pub fn fma(a: &S, b: &S, c: &S) -> R<S> {
    ternary(
        [a, b, c],
        &|[a, b, c]| {
            let (x, y, z) = (a.strip(), b.strip(), c.strip());
            if a.level() + b.level() + c.level() == 0 {
                let t = x.ty();
                let f = |p: Prim| p.as_float().unwrap_or(0.0);
                return Ok(S::P(Prim::float(t, f(x).mul_add(f(y), f(z)))));
            }
            let m = binop(BinOp::Mul, a, b)?;
            binop(BinOp::Add, &m, c)
        },
        &|[a, b, _]| Ok(deriv::fma_partials::<Lift>(a, b)),
    )
}

pub fn lerp(v0: &S, v1: &S, t: &S) -> R<S> {
    ternary(
        [v0, v1, t],
        &|[v0, v1, t]| {
            let d = binop(BinOp::Sub, v1, v0)?;
            let m = binop(BinOp::Mul, &d, t)?;
            binop(BinOp::Add, v0, &m)
        },
        &|[v0, v1, t]| deriv::lerp_partials(&mut Lift, v0.ty(), v0, v1, t),
    )
}

/// A value of `src`'s type that depends on `src` with partial one in reverse mode only
/// (the elements of `iota n`, whose cotangents flow into `n`, §11.4 *Sizes*).
pub fn reverse_only_dependent(src: &S, primal: Prim) -> R<S> {
    let l = src.level();
    if l == 0 {
        return Ok(S::P(primal));
    }
    let inner = reverse_only_dependent(&src.primal_at(l), primal)?;
    match (level_kind(l), src.node_at(l)) {
        (Some(None), Some(id)) => {
            let node = push_node(l, vec![(id, Partial::One)])?;
            Ok(S::A(Rc::new(Act {
                level: l,
                primal: inner,
                kind: Kind::Node(node),
            })))
        }
        _ => Ok(inner),
    }
}

/// Whether some reverse-mode level is open.
pub fn reverse_active() -> bool {
    LEVELS.with(|lv| {
        lv.borrow()
            .iter()
            .any(|(_, l)| matches!(l, Level::Reverse(_)))
    })
}

// ------------------------------------------------------------------ values

/// Apply `f` to every scalar of `v` (in the fixed order of §11.1), keeping the structure.
pub fn map_scalars<'a>(v: &Value<'a>, f: &mut dyn FnMut(&S) -> R<S>) -> R<Value<'a>> {
    Ok(match v {
        Value::Prim(_) | Value::Active(_) => {
            let s = to_s(v).unwrap_or(S::P(Prim::Bool(false)));
            from_s(f(&s)?)
        }
        Value::Array(a) => {
            if a.data.is_empty() {
                return Ok(v.clone());
            }
            let mut out = Vec::with_capacity(a.data.len());
            for i in 0..a.data.len() {
                out.push(map_scalars(&a.data.get(i), f)?);
            }
            Value::Array(Rc::new(Array::new(a.shape.clone(), Data::from_values(out))))
        }
        Value::Tuple(items) => {
            let mut out = Vec::with_capacity(items.len());
            for x in items.iter() {
                out.push(map_scalars(x, f)?);
            }
            Value::Tuple(Rc::new(out))
        }
        Value::Record(fs) => {
            let mut out = Vec::with_capacity(fs.len());
            for (n, x) in fs.iter() {
                out.push((*n, map_scalars(x, f)?));
            }
            Value::Record(Rc::new(out))
        }
        Value::Sum(s) => {
            let mut out = Vec::with_capacity(s.1.len());
            for x in &s.1 {
                out.push(map_scalars(x, f)?);
            }
            Value::Sum(Rc::new((s.0, out)))
        }
        Value::Fun(_) => v.clone(),
    })
}

/// Visit every scalar of `v` in order.
pub fn scalars(v: &Value, out: &mut Vec<S>) {
    match v {
        Value::Prim(p) => out.push(S::P(*p)),
        Value::Active(a) => out.push(S::A(a.clone())),
        Value::Array(a) => {
            for i in 0..a.data.len() {
                scalars(&a.data.get(i), out);
            }
        }
        Value::Tuple(items) => items.iter().for_each(|x| scalars(x, out)),
        Value::Record(fs) => fs.iter().for_each(|(_, x)| scalars(x, out)),
        Value::Sum(s) => s.1.iter().for_each(|x| scalars(x, out)),
        Value::Fun(_) => {}
    }
}

/// Whether a seed has exactly the structure of the value it goes with (§11.1).
fn same_structure(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Prim(_) | Value::Active(_), Value::Prim(_) | Value::Active(_)) => true,
        (Value::Array(x), Value::Array(y)) => {
            x.shape == y.shape
                && x.data.len() == y.data.len()
                && (0..x.data.len()).all(|i| same_structure(&x.data.get(i), &y.data.get(i)))
        }
        (Value::Tuple(x), Value::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(u, v)| same_structure(u, v))
        }
        (Value::Record(x), Value::Record(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((m, u), (n, v))| m == n && same_structure(u, v))
        }
        (Value::Sum(x), Value::Sum(y)) => {
            x.0 == y.0
                && x.1.len() == y.1.len()
                && x.1
                    .iter()
                    .zip(y.1.iter())
                    .all(|(u, v)| same_structure(u, v))
        }
        (Value::Fun(_), Value::Fun(_)) => true,
        _ => false,
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::Array(a) => crate::value::shape_string(&a.shape),
        Value::Tuple(t) => format!(
            "({})",
            t.iter().map(describe).collect::<Vec<_>>().join(", ")
        ),
        Value::Record(fs) => format!(
            "{{{}}}",
            fs.iter()
                .map(|(n, x)| format!("{n}: {}", describe(x)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => "scalar".into(),
    }
}

/// The first array component, in flattening order, whose shape in the seed differs from
/// the value's: the seed's shape and the value's type as `[2]f64`.
fn first_shape_mismatch(value: &Value, seed: &Value) -> Option<(Vec<usize>, String)> {
    match (value, seed) {
        (Value::Array(x), Value::Array(y)) if x.shape != y.shape => {
            let elem = x.elem_prim().or_else(|| {
                (!x.data.is_empty())
                    .then(|| x.data.get(0).as_prim())
                    .flatten()
                    .map(|p| p.ty())
            })?;
            Some((
                y.shape.clone(),
                format!("{}{}", crate::value::shape_string(&x.shape), elem),
            ))
        }
        (Value::Tuple(a), Value::Tuple(b)) if a.len() == b.len() => a
            .iter()
            .zip(b.iter())
            .find_map(|(u, v)| first_shape_mismatch(u, v)),
        (Value::Record(a), Value::Record(b)) if a.len() == b.len() => a
            .iter()
            .zip(b.iter())
            .find_map(|((_, u), (_, v))| first_shape_mismatch(u, v)),
        _ => None,
    }
}

/// The run-time size error for a seed whose shape differs from its value's, in the words
/// language.md §9.6 uses for every shape mismatch (both backends print exactly this).
/// `seeds` is the number of seeds when they come as the rows of one array (`jmp`).
pub(crate) fn seed_shape_error(
    value: &Value,
    seed: &Value,
    seeds: Option<usize>,
) -> Option<RuntimeError> {
    let (have, want) = first_shape_mismatch(value, seed)?;
    let outer = seeds.map(|k| format!("[{k}]")).unwrap_or_default();
    Some(RuntimeError::new(format!(
        "Value of (desugared) shape {outer}{} cannot match shape of type \"{outer}{want}\".",
        crate::value::shape_string(&have)
    )))
}

fn check_seed(what: &str, value: &Value, seed: &Value) -> R<()> {
    if same_structure(value, seed) {
        return Ok(());
    }
    if let Some(e) = seed_shape_error(value, seed, None) {
        return Err(e);
    }
    Err(RuntimeError::new(format!(
        "size error: the {what} has shape {} but the value has shape {}",
        describe(seed),
        describe(value)
    )))
}

/// Closes the level it opened when dropped, also on error paths.
struct LevelGuard {
    open: bool,
}

impl LevelGuard {
    fn take(&mut self) -> Option<Level> {
        self.open = false;
        pop_level()
    }
}

impl Drop for LevelGuard {
    fn drop(&mut self) {
        if self.open {
            pop_level();
        }
    }
}

impl<'a> crate::eval::Eval<'a> {
    /// `jvp2` (one direction) and `jmp2` (several): the primal result and one tangent per
    /// direction, from a single evaluation of `f`.
    pub fn ad_forward(
        &self,
        f: &Value<'a>,
        x: &Value<'a>,
        dxs: &[Value<'a>],
    ) -> R<(Value<'a>, Vec<Value<'a>>)> {
        self.ad_forward_with(&mut |v| self.apply1(f, v), x, dxs)
    }

    /// [`Self::ad_forward`] of a function given as a Rust closure.
    pub fn ad_forward_with(
        &self,
        apply: &mut dyn FnMut(Value<'a>) -> R<Value<'a>>,
        x: &Value<'a>,
        dxs: &[Value<'a>],
    ) -> R<(Value<'a>, Vec<Value<'a>>)> {
        let mut seeds: Vec<Vec<S>> = Vec::with_capacity(dxs.len());
        for dx in dxs {
            check_seed("tangent", x, dx)?;
            let mut s = Vec::new();
            scalars(dx, &mut s);
            seeds.push(s);
        }
        let l = push_level(Level::Forward(dxs.len()))?;
        let mut guard = LevelGuard { open: true };
        let mut i = 0;
        let xa = map_scalars(x, &mut |s| {
            let ts = seeds.iter().map(|d| d[i].clone()).collect();
            i += 1;
            Ok(S::A(Rc::new(Act {
                level: l,
                primal: s.clone(),
                kind: Kind::Dual(ts),
            })))
        })?;
        let y = apply(xa)?;
        guard.take();
        let primal = map_scalars(&y, &mut |s| Ok(s.primal_at(l)))?;
        let mut tangents = Vec::with_capacity(dxs.len());
        for k in 0..dxs.len() {
            tangents.push(map_scalars(&y, &mut |s| {
                Ok(s.tangent_at(l, k)
                    .cloned()
                    .unwrap_or_else(|| S::zero(s.ty())))
            })?);
        }
        Ok((primal, tangents))
    }

    /// `vjp2` (one cotangent) and `mjp2` (several): the primal result and one input
    /// cotangent per output cotangent, from a single evaluation of `f` and one backward
    /// sweep per cotangent.
    pub fn ad_reverse(
        &self,
        f: &Value<'a>,
        x: &Value<'a>,
        dys: &[Value<'a>],
    ) -> R<(Value<'a>, Vec<Value<'a>>)> {
        self.ad_reverse_with(&mut |v| self.apply1(f, v), x, &mut |_| Ok(dys.to_vec()))
    }

    /// [`Self::ad_reverse`] of a function given as a Rust closure, with the cotangents
    /// computed from the primal result.
    pub fn ad_reverse_with(
        &self,
        apply: &mut dyn FnMut(Value<'a>) -> R<Value<'a>>,
        x: &Value<'a>,
        seeds: &mut dyn FnMut(&Value<'a>) -> R<Vec<Value<'a>>>,
    ) -> R<(Value<'a>, Vec<Value<'a>>)> {
        let l = push_level(Level::Reverse(Tape::default()))?;
        let mut guard = LevelGuard { open: true };
        let customs_base = self.ad.customs.borrow().len();
        let r = self.ad_reverse_in(l, &mut guard, apply, x, seeds);
        self.ad.customs.borrow_mut().truncate(customs_base);
        r
    }

    fn ad_reverse_in(
        &self,
        l: u32,
        guard: &mut LevelGuard,
        apply: &mut dyn FnMut(Value<'a>) -> R<Value<'a>>,
        x: &Value<'a>,
        seeds: &mut dyn FnMut(&Value<'a>) -> R<Vec<Value<'a>>>,
    ) -> R<(Value<'a>, Vec<Value<'a>>)> {
        let mut n_inputs = 0u32;
        let xa = map_scalars(x, &mut |s| {
            let id = push_node(l, Vec::new())?;
            n_inputs += 1;
            Ok(S::A(Rc::new(Act {
                level: l,
                primal: s.clone(),
                kind: Kind::Node(id),
            })))
        })?;
        let y = apply(xa)?;
        let tape = match guard.take() {
            Some(Level::Reverse(t)) => t,
            _ => return Err(RuntimeError::new("internal error: AD levels out of order")),
        };
        let primal = map_scalars(&y, &mut |s| Ok(s.primal_at(l)))?;
        let dys = seeds(&primal)?;
        let mut outs = Vec::with_capacity(dys.len());
        for dy in &dys {
            check_seed("cotangent", &y, dy)?;
            let adj = self.sweep(l, &tape, &y, dy, n_inputs as usize)?;
            let mut k = 0;
            outs.push(map_scalars(x, &mut |s| {
                let a = adj[k].clone().unwrap_or_else(|| S::zero(s.ty()));
                k += 1;
                Ok(a)
            })?);
        }
        Ok((primal, outs))
    }

    /// The backward sweep: adjoints of all nodes, returned for the first `n_inputs`.
    fn sweep(
        &self,
        l: u32,
        tape: &Tape,
        y: &Value<'a>,
        dy: &Value<'a>,
        n_inputs: usize,
    ) -> R<Vec<Option<S>>> {
        let mut adj: Vec<Option<S>> = vec![None; tape.len()];
        let add = |adj: &mut Vec<Option<S>>, id: usize, c: S| -> R<()> {
            let slot = &mut adj[id];
            *slot = Some(match slot.take() {
                None => c,
                Some(a) => Lift.tadd(c.ty(), &a, &c)?,
            });
            Ok(())
        };
        let mut ys = Vec::new();
        let mut seeds = Vec::new();
        scalars(y, &mut ys);
        scalars(dy, &mut seeds);
        for (s, c) in ys.iter().zip(seeds) {
            if let Some(id) = s.node_at(l) {
                add(&mut adj, id as usize, c)?;
            }
        }
        let mut customs = tape.customs.iter().rev().peekable();
        for id in (n_inputs..tape.len()).rev() {
            if let Some(&&(cid, idx)) = customs.peek() {
                if cid as usize == id {
                    customs.next();
                    self.sweep_custom(l, idx, &mut adj)?;
                    continue;
                }
            }
            let edges = tape.node_edges(id);
            // Leaves keep their adjoint (results of `with_vjp` are read at its marker).
            if edges.is_empty() {
                continue;
            }
            let Some(a) = adj[id].take() else { continue };
            let out_t = a.ty();
            for (arg, p) in edges {
                if let Some(c) = deriv::pull_back(&mut Lift, p, out_t, &a)? {
                    add(&mut adj, *arg as usize, c)?;
                }
            }
        }
        adj.truncate(n_inputs);
        Ok(adj)
    }

    /// At a `with_vjp` node all uses of its result have been swept: call the user's
    /// derivative `f' y dy` and add its result into the argument's adjoints.
    fn sweep_custom(&self, l: u32, idx: usize, adj: &mut [Option<S>]) -> R<()> {
        let (y, fprime, x) = {
            let cs = self.ad.customs.borrow();
            let c = cs
                .get(idx)
                .ok_or_else(|| RuntimeError::new("internal error: lost with_vjp record"))?;
            if c.level != l {
                return Err(RuntimeError::new(
                    "internal error: with_vjp record of another level",
                ));
            }
            (c.y.clone(), c.fprime.clone(), c.x.clone())
        };
        let dy = map_scalars(&y, &mut |s| {
            Ok(s.node_at(l)
                .and_then(|id| adj[id as usize].take())
                .unwrap_or_else(|| S::zero(s.ty())))
        })?;
        let yp = map_scalars(&y, &mut |s| Ok(s.primal_at(l)))?;
        let dx = self.apply_many(fprime, vec![yp, dy])?;
        check_seed("result of the with_vjp derivative", &x, &dx)?;
        let mut xs = Vec::new();
        let mut dxs = Vec::new();
        scalars(&x, &mut xs);
        scalars(&dx, &mut dxs);
        for (s, c) in xs.iter().zip(dxs) {
            if let Some(id) = s.node_at(l) {
                let slot = &mut adj[id as usize];
                *slot = Some(match slot.take() {
                    None => c,
                    Some(a) => Lift.tadd(c.ty(), &a, &c)?,
                });
            }
        }
        Ok(())
    }

    /// `with_vjp f f' x`: `f x`, with `f'` as the reverse-mode derivative at the innermost
    /// reverse level that `x` is active at.
    pub fn ad_with_vjp(&self, f: &Value<'a>, fprime: &Value<'a>, x: &Value<'a>) -> R<Value<'a>> {
        let mut xs = Vec::new();
        scalars(x, &mut xs);
        let l = xs.iter().map(|s| s.level()).max().unwrap_or(0);
        if l == 0 || level_kind(l) != Some(None) {
            return self.apply1(f, x.clone());
        }
        let xp = map_scalars(x, &mut |s| Ok(s.primal_at(l)))?;
        let yp = self.apply1(f, xp)?;
        let marker = push_node(l, Vec::new())?;
        let y = map_scalars(&yp, &mut |s| {
            let id = push_node(l, Vec::new())?;
            Ok(S::A(Rc::new(Act {
                level: l,
                primal: s.clone(),
                kind: Kind::Node(id),
            })))
        })?;
        let idx = {
            let mut cs = self.ad.customs.borrow_mut();
            cs.push(Custom {
                level: l,
                y: y.clone(),
                fprime: fprime.clone(),
                x: x.clone(),
            });
            cs.len() - 1
        };
        with_tape(l, |t| {
            t.customs.push((marker, idx));
            Ok(())
        })?;
        Ok(y)
    }
}
