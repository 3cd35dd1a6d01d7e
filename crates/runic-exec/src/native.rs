//! Native kernels (`runic-jit`) for top-level `map` and `reduce` over vectors: each chunk of
//! the iteration space runs compiled code; a chunk whose kernel fails is redone on the
//! evaluator, which reports the error exactly as it would have.
//!
//! Kernels are compiled on first use and cached by lambda id for the life of the
//! [`crate::Executor`], so a program is compiled once however often it runs. `RUNIC_JIT=0`
//! turns native code off (both paths stay testable).

use crate::error::{err, R};
use crate::eval::{Ctx, Frame};
use crate::out::OutPtr;
use crate::value::*;
use runic_data::{Array, Buffer};
use runic_ir::{LamId, Lambda, PrimType, Soac, VName};
use runic_jit::{FoldKernel, HistKernel, MapKernel, ScanKernel};
use runic_prim::Prim;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

type Cache<K, T> = Mutex<HashMap<K, Result<Arc<T>, String>>>;

/// The compiled kernels of a program.
pub struct Jit {
    enabled: bool,
    maps: Cache<LamId, MapKernel>,
    folds: Cache<(Option<LamId>, LamId), FoldKernel>,
    scans: Cache<(Option<LamId>, LamId), ScanKernel>,
    hists: Cache<(LamId, Vec<PrimType>), HistKernel>,
    scatters: Cache<(Vec<PrimType>, PrimType), HistKernel>,
    /// How many SOACs ran native code to the end (for tests that check it did).
    runs: std::sync::atomic::AtomicUsize,
    /// How many iotas of `lazy` were built after all (for tests).
    built_late: std::sync::atomic::AtomicUsize,
    /// The program's variables bound to `iota n`: kernels that read one free (hoisted out
    /// of their lambda) loop over it with their counter.
    iotas: std::collections::HashSet<VName>,
    /// The iotas read only as inputs of maps, reductions and scans in the body that binds
    /// them: not built until something other than a kernel taking the index from its
    /// counter needs the array ([`Val::Iota`]).
    lazy: std::collections::HashSet<VName>,
}

impl Default for Jit {
    fn default() -> Self {
        Jit::new(std::env::var("RUNIC_JIT").map_or(true, |v| v != "0"))
    }
}

impl Jit {
    pub fn new(enabled: bool) -> Jit {
        Jit {
            enabled,
            maps: Mutex::default(),
            folds: Mutex::default(),
            scans: Mutex::default(),
            hists: Mutex::default(),
            scatters: Mutex::default(),
            runs: Default::default(),
            built_late: Default::default(),
            iotas: Default::default(),
            lazy: Default::default(),
        }
    }

    /// Learn which of `prog`'s variables are `iota n` (before any kernel is compiled): a
    /// name is bound once per function, so one that some function binds to something else
    /// is left out.
    pub(crate) fn know_iotas(&mut self, prog: &runic_ir::Prog) {
        let mut other = std::collections::HashSet::new();
        for f in &prog.funs {
            let iotas = runic_ir::traverse::iotas(&f.body);
            let params = f.params.iter().map(|p| p.name);
            for v in runic_ir::traverse::binders(&f.body)
                .into_iter()
                .chain(params)
            {
                if iotas.contains_key(&v) {
                    self.iotas.insert(v);
                } else {
                    other.insert(v);
                }
            }
        }
        self.iotas.retain(|v| !other.contains(v));
        self.lazy = only_mapped(prog);
        self.lazy.retain(|v| self.iotas.contains(v));
    }

    /// Whether `v`, an `iota`, is left unbuilt where it is bound ([`Val::Iota`]).
    pub(crate) fn builds_lazily(&self, v: VName) -> bool {
        self.enabled && self.lazy.contains(&v)
    }

    /// Count a SOAC that ran native code to the end.
    pub(crate) fn ran(&self) {
        self.runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Count an iota of `lazy` built after all.
    pub(crate) fn built_late(&self) {
        self.built_late
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// How many iotas of `lazy` have been built after all.
    pub fn iotas_built_late(&self) -> usize {
        self.built_late.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many SOACs have run native code to the end.
    pub fn runs(&self) -> usize {
        self.runs.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many map kernels have been compiled (or found not compilable) so far.
    pub fn map_kernels(&self) -> usize {
        self.maps.lock().map_or(0, |m| m.len())
    }

    /// `index[k]`: the map's input `k` is an `iota` (its kernel may bind the parameter to
    /// its counter; a lambda is always mapped over the same inputs).
    fn map_kernel(
        &self,
        lam: &Lambda,
        index: &[bool],
        free_type: &dyn Fn(VName) -> Option<runic_jit::VarType>,
    ) -> Result<Arc<MapKernel>, String> {
        let mut m = self.maps.lock().map_err(|_| "a poisoned kernel cache")?;
        m.entry(lam.id)
            .or_insert_with(|| runic_jit::compile_map_indexed(lam, index, free_type).map(Arc::new))
            .clone()
    }

    /// `in_order`: for a scan's carries, which must not be reassociated; `index` as for
    /// [`Jit::map_kernel`].
    fn fold_kernel(
        &self,
        pre: Option<&Lambda>,
        lam: &Lambda,
        index: &[bool],
        free_type: &dyn Fn(VName) -> Option<runic_jit::VarType>,
        in_order: bool,
    ) -> Result<Arc<FoldKernel>, String> {
        let mut m = self.folds.lock().map_err(|_| "a poisoned kernel cache")?;
        m.entry((pre.map(|p| p.id), lam.id))
            .or_insert_with(|| {
                runic_jit::compile_fold_indexed(pre, lam, index, free_type, in_order).map(Arc::new)
            })
            .clone()
    }

    fn scan_kernel(
        &self,
        pre: Option<&Lambda>,
        lam: &Lambda,
        index: &[bool],
        free_type: &dyn Fn(VName) -> Option<runic_jit::VarType>,
    ) -> Result<Arc<ScanKernel>, String> {
        let mut m = self.scans.lock().map_err(|_| "a poisoned kernel cache")?;
        m.entry((pre.map(|p| p.id), lam.id))
            .or_insert_with(|| {
                runic_jit::compile_scan_indexed(pre, lam, index, free_type).map(Arc::new)
            })
            .clone()
    }

    fn hist_kernel(
        &self,
        lam: &Lambda,
        index_types: Vec<PrimType>,
        free_type: &dyn Fn(VName) -> Option<runic_jit::VarType>,
    ) -> Result<Arc<HistKernel>, String> {
        let mut m = self.hists.lock().map_err(|_| "a poisoned kernel cache")?;
        m.entry((lam.id, index_types.clone()))
            .or_insert_with(|| runic_jit::compile_hist(lam, &index_types, free_type).map(Arc::new))
            .clone()
    }

    fn scatter_kernel(
        &self,
        index_types: Vec<PrimType>,
        elem: PrimType,
    ) -> Result<Arc<HistKernel>, String> {
        let mut m = self
            .scatters
            .lock()
            .map_err(|_| "a poisoned kernel cache")?;
        m.entry((index_types.clone(), elem))
            .or_insert_with(|| runic_jit::compile_scatter(&index_types, elem).map(Arc::new))
            .clone()
    }

    /// How a SOAC runs when it is at the top level (split across the workers). The one
    /// decision the executor follows and `explain` reports; `ty` gives the type of a
    /// variable in scope (from run-time values, or from the IR's binder types).
    pub(crate) fn route(&self, s: &Soac, ty: &dyn Fn(VName) -> Option<VarTy>) -> Route {
        let jt = |v: VName| match ty(v) {
            Some(VarTy::Arr(PrimType::I64, 1)) if self.iotas.contains(&v) => {
                Some(runic_jit::VarType::Iota)
            }
            Some(VarTy::Prim(t)) => Some(runic_jit::VarType::Scalar(t)),
            Some(VarTy::Arr(t, r)) => Some(runic_jit::VarType::Array(t, r)),
            Some(VarTy::Acc(t, r, op)) => Some(runic_jit::VarType::Acc(t, r, op)),
            None => None,
        };
        // Rows of arrays are fine: the kernels index them in place.
        let arrays = |arrs: &[VName]| -> Result<(), String> {
            if arrs.iter().any(|a| ty(*a).is_none_or(|t| t.rank() == 0)) {
                return Err("an input that is not an array".into());
            }
            Ok(())
        };
        let off = || Route::Evaluator("native code is off (RUNIC_JIT=0)".into());
        // Which inputs are iotas, whose elements a kernel may take from its counter.
        let index = |arrs: &[VName]| -> Vec<bool> {
            (arrs.iter())
                .map(|a| jt(*a) == Some(runic_jit::VarType::Iota))
                .collect()
        };
        match s {
            Soac::Map { lam, arrs, .. } => {
                if !self.enabled {
                    return off();
                }
                if let Err(why) = arrays(arrs) {
                    return Route::Evaluator(why);
                }
                match self.map_kernel(lam, &index(arrs), &jt) {
                    Ok(k) => Route::Map(k),
                    Err(why) => Route::Evaluator(why),
                }
            }
            Soac::Reduce { pre, lam, arrs, .. } => {
                if crate::soac::plain_op(pre.as_ref(), lam).is_some() {
                    return Route::Builtin("a single operator, folded by the executor's loop");
                }
                if !self.enabled {
                    return off();
                }
                if let Err(why) = arrays(arrs) {
                    return Route::Evaluator(why);
                }
                match self.fold_kernel(pre.as_ref(), lam, &index(arrs), &jt, false) {
                    Ok(k) => Route::Fold(k),
                    Err(why) => Route::Evaluator(why),
                }
            }
            Soac::Scan { pre, lam, arrs, .. } => {
                match (crate::soac::plain_op(pre.as_ref(), lam), arrs.as_slice()) {
                    (Some(_), [a]) if ty(*a).is_some_and(|t| t.rank() == 1) => Route::Builtin(
                        "a single operator over a vector, scanned by the executor's loop",
                    ),
                    _ if !self.enabled => off(),
                    _ => {
                        if let Err(why) = arrays(arrs) {
                            return Route::Evaluator(why);
                        }
                        // The scan kernel for the second pass, a fold kernel for the first.
                        let pre = pre.as_ref();
                        let ix = index(arrs);
                        match self.scan_kernel(pre, lam, &ix, &jt) {
                            Ok(sk) => match self.fold_kernel(pre, lam, &ix, &jt, true) {
                                Ok(fk) => Route::Scan(fk, sk),
                                Err(why) => Route::Evaluator(why),
                            },
                            Err(why) => Route::Evaluator(why),
                        }
                    }
                }
            }
            Soac::Hist {
                lam,
                dests,
                is,
                vals,
                ..
            } => {
                let scalar_rows =
                    matches!(dests.as_slice(), [d] if ty(*d).is_some_and(|t| t.rank() == is.len()));
                let builtin = crate::soac::simple_op_of(lam).is_some() && scalar_rows;
                if !self.enabled {
                    return match builtin {
                        true => Route::Builtin("a single operator, the executor's histogram loop"),
                        false => off(),
                    };
                }
                // Destinations of scalars or of rows, and values of the same rows.
                let fits = dests.iter().zip(vals).all(|(d, v)| match (ty(*d), ty(*v)) {
                    (Some(d), Some(v)) => {
                        d.rank() >= is.len() && d.rank() - is.len() + 1 == v.rank()
                    }
                    _ => false,
                });
                if !fits {
                    return Route::Evaluator("a reduce_by_index of other shapes".into());
                }
                let mut index_types = Vec::new();
                for i in is {
                    match ty(*i) {
                        Some(VarTy::Arr(t, 1)) => index_types.push(t),
                        _ => return Route::Evaluator("an index array that is not a vector".into()),
                    }
                }
                match self.hist_kernel(lam, index_types, &jt) {
                    Ok(k) => Route::Hist(k),
                    Err(why) => Route::Evaluator(why),
                }
            }
            Soac::Scatter {
                dests, is, vals, ..
            } => {
                let builtin = Route::Builtin("the executor's scatter loop");
                if !self.enabled {
                    return builtin;
                }
                let mut index_types = Vec::new();
                for i in is {
                    match ty(*i) {
                        Some(VarTy::Arr(t, 1)) => index_types.push(t),
                        _ => return builtin,
                    }
                }
                // One kernel per destination of scalars; rows keep the built-in loop.
                let mut ks = Vec::new();
                for (d, v) in dests.iter().zip(vals) {
                    match (ty(*d), ty(*v)) {
                        (Some(VarTy::Arr(t, r)), Some(VarTy::Arr(u, 1)))
                            if r == is.len() && t == u =>
                        {
                            match self.scatter_kernel(index_types.clone(), t) {
                                Ok(k) => ks.push(k),
                                Err(why) => return Route::Evaluator(why),
                            }
                        }
                        _ => return builtin,
                    }
                }
                Route::Scatter(ks)
            }
        }
    }
}

/// The variables every read of which is as an input of a `map`, `reduce` or `scan` in the
/// body that binds them (a use anywhere else, nested lambdas included, makes the count
/// differ).
fn only_mapped(prog: &runic_ir::Prog) -> std::collections::HashSet<VName> {
    use runic_ir::traverse::{walk_body, Visitor};
    use runic_ir::{Body, Exp};
    #[derive(Default)]
    struct Count {
        reads: HashMap<VName, usize>,
        mapped: HashMap<VName, usize>,
    }
    impl Visitor for Count {
        fn use_var(&mut self, v: VName) {
            *self.reads.entry(v).or_default() += 1;
        }
        fn body(&mut self, b: &Body) {
            let bound: std::collections::HashSet<VName> = b
                .stms
                .iter()
                .flat_map(|s| s.pat.iter().map(|p| p.name))
                .collect();
            for s in &b.stms {
                if let Exp::Soac(
                    Soac::Map { arrs, .. } | Soac::Reduce { arrs, .. } | Soac::Scan { arrs, .. },
                ) = &s.exp
                {
                    for a in arrs.iter().filter(|a| bound.contains(a)) {
                        *self.mapped.entry(*a).or_default() += 1;
                    }
                }
            }
            walk_body(self, b)
        }
    }
    let mut c = Count::default();
    for f in &prog.funs {
        c.body(&f.body);
    }
    c.mapped
        .into_iter()
        .filter(|(v, n)| c.reads.get(v) == Some(n))
        .map(|(v, _)| v)
        .collect()
}

/// What [`Jit::route`] needs to know of a variable.
#[derive(Clone, Debug, PartialEq)]
pub enum VarTy {
    Prim(PrimType),
    /// Element type and rank.
    Arr(PrimType, usize),
    /// An accumulator of one array: element type, rank, operator (`None`: writes).
    Acc(PrimType, usize, Option<Lambda>),
}

impl VarTy {
    pub fn rank(&self) -> usize {
        match self {
            VarTy::Prim(_) | VarTy::Acc(..) => 0,
            VarTy::Arr(_, r) => *r,
        }
    }
    pub fn of_val(v: &Val) -> Option<VarTy> {
        match v {
            Val::Prim(p) => Some(VarTy::Prim(p.ty())),
            Val::Arr(a) => Some(VarTy::Arr(a.data.elem_type(), a.shape.len())),
            Val::Acc(c) => {
                let arrays = c.arrays.lock().ok()?;
                match arrays.as_slice() {
                    [a] if a.shape.len() == c.shape.len() => Some(VarTy::Acc(
                        a.data.elem_type(),
                        c.shape.len(),
                        c.op.as_ref().map(|(l, _)| l.clone()),
                    )),
                    _ => None,
                }
            }
            Val::Iota(_) => Some(VarTy::Arr(PrimType::I64, 1)),
            Val::Unset => None,
        }
    }
    pub fn of_type(t: &runic_ir::Type) -> Option<VarTy> {
        match t {
            runic_ir::Type::Prim(p) => Some(VarTy::Prim(*p)),
            runic_ir::Type::Array { elem, shape } => Some(VarTy::Arr(*elem, shape.len())),
            _ => None,
        }
    }
}

/// See [`Jit::route`].
pub(crate) enum Route {
    /// A runic-jit map kernel.
    Map(Arc<MapKernel>),
    /// A runic-jit fold kernel.
    Fold(Arc<FoldKernel>),
    /// A runic-jit histogram kernel.
    Hist(Arc<HistKernel>),
    /// A runic-jit scatter kernel per destination.
    Scatter(Vec<Arc<HistKernel>>),
    /// A runic-jit scan: a fold kernel for the chunks' totals, a scan kernel for the rest.
    Scan(Arc<FoldKernel>, Arc<ScanKernel>),
    /// A loop of the executor's own (native Rust, not generated code).
    Builtin(&'static str),
    /// The evaluator (column programs or element by element), and why.
    Evaluator(String),
}

impl Route {
    /// The line `explain` prints.
    pub fn describe(&self) -> String {
        match self {
            Route::Map(k) if k.column_lanes => {
                "native (runic-jit map kernel: a column reduction, its loops swapped, in SIMD \
                 lanes)"
                    .into()
            }
            Route::Map(k) if k.row_lanes => {
                "native (runic-jit map kernel, a row per SIMD lane when the rows are at most 32 long)"
                    .into()
            }
            Route::Map(k) if k.column_reduction => {
                "native (runic-jit map kernel: a column reduction, its loops swapped)".into()
            }
            Route::Map(k) if k.index_params.contains(&true) => {
                "native (runic-jit map kernel, the index from its counter)".into()
            }
            Route::Map(_) => "native (runic-jit map kernel)".into(),
            Route::Fold(k) if k.index_params.contains(&true) => {
                "native (runic-jit fold kernel, the index from its counter)".into()
            }
            Route::Fold(_) => "native (runic-jit fold kernel)".into(),
            Route::Scan(_, k) if k.index_params.contains(&true) => {
                "native (runic-jit scan kernels, the index from their counter)".into()
            }
            Route::Scan(..) => "native (runic-jit scan kernels)".into(),
            Route::Hist(_) => "native (runic-jit histogram kernel)".into(),
            Route::Scatter(_) => "native (runic-jit scatter kernels)".into(),
            Route::Builtin(d) => format!("built-in ({d})"),
            Route::Evaluator(why) => format!("not native: {why}"),
        }
    }
}

/// Address of the first element of a buffer.
pub(crate) fn data_ptr(b: &Buffer) -> usize {
    runic_data::with_buffer!(b, v => v.as_ptr() as usize)
}

/// The raw words of the free variables a kernel reads, if they are the scalars it expects.
fn free_words(cx: &Ctx, f: &Frame, frees: &[(VName, PrimType)]) -> Option<Vec<u64>> {
    frees
        .iter()
        .map(|(v, t)| match cx.get(f, *v) {
            Ok(Val::Prim(p)) if p.ty() == *t => Some(runic_jit::to_raw(*p)),
            _ => None,
        })
        .collect()
}

/// What a kernel call reads, with the pointers to it in the order of `MapKernel::run`
/// (inputs, free scalars, free arrays, dimensions); the pointers stay valid while this
/// lives (they point into its heap buffers and the inputs it holds).
pub(crate) struct KernelIns {
    _words: Vec<u64>,
    _arrays: Vec<Arc<Array>>,
    _dims: Vec<i64>,
    ptrs: Vec<usize>,
}

impl KernelIns {
    /// The pointers as the kernels take them.
    pub(crate) fn ptrs(&self) -> Vec<*const u8> {
        self.ptrs.iter().map(|&a| a as *const u8).collect()
    }
}

/// The description of a kernel's inputs: element types and ranks of the inputs, free
/// scalars, free arrays.
pub(crate) struct InputSpec<'a> {
    pub elems: &'a [PrimType],
    pub ranks: &'a [usize],
    pub frees: &'a [(VName, PrimType)],
    pub free_arrays: &'a [(VName, PrimType, usize)],
}

/// An array of exactly this element type and rank, with its elements.
fn valid(a: &Array, t: PrimType, r: usize) -> bool {
    a.shape.len() == r && a.data.elem_type() == t && a.data.len() == a.shape.iter().product()
}

impl Ctx<'_> {
    /// The inputs of a kernel over `w` elements of `arrs`, or `None` when the values in
    /// scope are not what it was compiled for (the route was chosen from their types, so
    /// a mismatch is a bug, caught here rather than by unsafe code). `accs`: the address
    /// and shape of the array of every accumulator; `out_shapes`: shapes appended to the
    /// dimensions.
    pub(crate) fn kernel_ins(
        &self,
        f: &Frame,
        w: usize,
        arrs: &[Arc<Array>],
        spec: &InputSpec,
        accs: &[(usize, Vec<usize>)],
        out_shapes: &[Vec<usize>],
    ) -> Option<KernelIns> {
        if arrs.len() != spec.elems.len()
            || arrs
                .iter()
                .zip(spec.elems.iter().zip(spec.ranks))
                .any(|(a, (t, r))| !valid(a, *t, *r) || a.shape[0] < w)
        {
            return None;
        }
        let words = free_words(self, f, spec.frees)?;
        let mut free_arrs = Vec::with_capacity(spec.free_arrays.len());
        for (v, t, r) in spec.free_arrays {
            match self.get(f, *v) {
                Ok(Val::Arr(a)) if valid(a, *t, *r) => free_arrs.push(a.clone()),
                _ => return None,
            }
        }
        let dims: Vec<i64> = arrs
            .iter()
            .map(|a| &a.shape)
            .chain(free_arrs.iter().map(|a| &a.shape))
            .chain(accs.iter().map(|(_, s)| s))
            .chain(out_shapes)
            .flat_map(|s| s.iter().map(|&d| d as i64))
            .collect();
        let mut ptrs: Vec<usize> = arrs.iter().map(|a| data_ptr(&a.data)).collect();
        ptrs.extend(words.iter().map(|w| w as *const u64 as usize));
        ptrs.extend(free_arrs.iter().map(|a| data_ptr(&a.data)));
        ptrs.extend(accs.iter().map(|(p, _)| *p));
        ptrs.push(dims.as_ptr() as usize);
        Some(KernelIns {
            _words: words,
            _arrays: free_arrs,
            _dims: dims,
            ptrs,
        })
    }

    /// [`Jit::route`] of a SOAC about to run at the top level, from the values in scope.
    pub(crate) fn route(&self, f: &Frame, s: &Soac) -> Route {
        self.jit
            .route(s, &|v| self.get(f, v).ok().and_then(VarTy::of_val))
    }

    /// The shape of each output of a map kernel over `w` elements: `w`, then the declared
    /// shape of an array result.
    pub(crate) fn out_shapes(
        &self,
        f: &Frame,
        w: usize,
        lam: &Lambda,
        k: &MapKernel,
    ) -> Option<Vec<Vec<usize>>> {
        let mut out_shapes = Vec::with_capacity(k.results.len());
        for (t, r) in lam.ret.iter().zip(&k.result_ranks) {
            let mut shape = vec![w];
            if let runic_ir::Type::Array { shape: s, .. } = t {
                for d in s {
                    match self.sub(f, d) {
                        Ok(Val::Prim(Prim::I64(n))) if n >= 0 => shape.push(n as usize),
                        _ => return None,
                    }
                }
            }
            if shape.len() != *r {
                return None;
            }
            out_shapes.push(shape);
        }
        Some(out_shapes)
    }

    /// `map lam arrs` over vectors with a native kernel, or `None` when there is none;
    /// `arrs` are the inputs of the parameters other than `k`'s index parameters.
    pub(crate) fn map_native(
        &self,
        f: &Frame,
        w: usize,
        lam: &Lambda,
        k: &MapKernel,
        arrs: &[Arc<Array>],
        cs: &[(usize, usize)],
    ) -> R<Option<Vec<Val>>> {
        if !k.accs.is_empty() {
            return self.map_native_acc(f, w, lam, k, arrs, cs.len() > 1);
        }
        let Some(out_shapes) = self.out_shapes(f, w, lam, k) else {
            return Ok(None);
        };
        let spec = InputSpec {
            elems: &k.params,
            ranks: &k.ranks,
            frees: &k.frees,
            free_arrays: &k.free_arrays,
        };
        let Some(kins) = self.kernel_ins(f, w, arrs, &spec, &[], &out_shapes) else {
            return Ok(None);
        };
        // Not zero-filled: every element is written, by the kernel or (for a chunk where it
        // fails) by the evaluator, before the buffers get their lengths.
        if cs.iter().map(|(lo, hi)| hi - lo).sum::<usize>() != w {
            return err("internal error: the chunks of a map do not cover it");
        }
        let mut outs = empty_out_buffers(&k.results, &out_shapes)?;
        let lens: Vec<usize> = out_shapes.iter().map(|s| s.iter().product()).collect();
        // Array results: a failing chunk makes the evaluator redo the whole map (it reports
        // the failure, or builds the rows its own way).
        let rows_out = k.result_ranks.iter().any(|&r| r > 1);
        let ptrs: Vec<OutPtr> = outs
            .iter_mut()
            .zip(&lens)
            .map(|(b, &n)| OutPtr::spare(b, n))
            .collect::<R<_>>()?;
        let out_addrs: Vec<usize> = ptrs.iter().map(|p| p.base() as usize).collect();
        let done = crate::soac::run_chunks_lazily(f, cs, |fr, lo, hi| {
            self.check_interrupt()?;
            let ins = kins.ptrs();
            let outs: Vec<*mut u8> = out_addrs.iter().map(|&a| a as *mut u8).collect();
            // SAFETY: every input holds at least `w` elements of the kernel's parameter
            // type (checked above), the free words hold values of their types, the
            // outputs hold `w` elements of the result types, and chunks are disjoint.
            let code = unsafe { k.run(lo, hi, &ins, &outs) };
            if code != 0 && rows_out {
                return Ok(false);
            }
            if code != 0 {
                // Element by element on the evaluator, which reports the failure.
                for i in lo..hi {
                    let args = element_args(arrs, &k.index_params, i);
                    let r = self.apply(fr.get(), lam, args)?;
                    for (p, v) in ptrs.iter().zip(&r) {
                        p.set(i, v.prim()?)?;
                    }
                }
            }
            Ok(true)
        })?;
        drop(ptrs);
        if done.contains(&false) {
            return Ok(None);
        }
        for (b, n) in outs.iter_mut().zip(lens) {
            // SAFETY: every chunk finished (the kernel or the evaluator wrote each of its
            // elements; a failure returned above), and the chunks cover `0..w`, so each of
            // the `n` elements of every result was written.
            unsafe { crate::out::set_filled(b, n) };
        }
        Ok(Some(self.native_results(outs, out_shapes)))
    }

    /// The results of a native kernel that ran to the end, counted as native code run.
    pub(crate) fn native_results(&self, outs: Vec<Buffer>, shapes: Vec<Vec<usize>>) -> Vec<Val> {
        self.jit.ran();
        outs.into_iter()
            .zip(shapes)
            .map(|(b, s)| arr(s, b))
            .collect()
    }
}

/// The arguments of element `i` of a map whose kernel binds the parameters in `index` to
/// the element's index and takes `arrs` for the others, in order.
pub(crate) fn element_args(arrs: &[Arc<Array>], index: &[bool], i: usize) -> Vec<Val> {
    let mut arrs = arrs.iter();
    index
        .iter()
        .map(|&ix| match ix {
            true => Val::Prim(Prim::I64(i as i64)),
            // (`Unset`, which the evaluator reports, only if the caller broke the contract.)
            false => arrs.next().map_or(Val::Unset, |a| row(a, i)),
        })
        .collect()
}

/// Empty output buffers with room for a kernel's results, allocated fallibly.
fn empty_out_buffers(types: &[PrimType], shapes: &[Vec<usize>]) -> R<Vec<Buffer>> {
    types
        .iter()
        .zip(shapes)
        .map(|(t, s)| Buffer::try_with_capacity(*t, s.iter().product()))
        .collect::<Result<_, _>>()
        .or_else(err)
}

/// Zeroed output buffers of a kernel's result types and shapes, allocated fallibly (the
/// zeroed pages come from the allocator: no extra pass).
pub(crate) fn out_buffers(types: &[PrimType], shapes: &[Vec<usize>]) -> R<Vec<Buffer>> {
    types
        .iter()
        .zip(shapes)
        .map(|(t, s)| Buffer::try_filled(*t, s.iter().product(), Prim::I32(0)))
        .collect::<Result<_, _>>()
        .or_else(err)
}

#[cfg(test)]
mod tests {
    use super::Jit;
    use runic_ir::*;

    fn vector(k: u32) -> Param {
        Param {
            name: VName(k),
            ty: Type::Array {
                elem: PrimType::I64,
                shape: vec![SubExp::Const(Prim::I64(4))],
            },
        }
    }

    fn fun(name: &str, stms: Vec<(u32, BasicOp)>) -> FunDef {
        FunDef {
            name: name.into(),
            params: vec![],
            ret: vec![],
            body: Body {
                stms: stms
                    .into_iter()
                    .map(|(k, op)| Stm {
                        pat: vec![vector(k)],
                        exp: Exp::Basic(op),
                        src: SrcInfo::default(),
                    })
                    .collect(),
                result: vec![],
            },
            entry: None,
            src: SrcInfo::default(),
        }
    }

    /// The names bound to `iota n` are the kernels' counters, unless another function
    /// binds the same name to something else (a name is unique within a function only).
    #[test]
    fn iotas_are_names_no_function_binds_otherwise() {
        let four = SubExp::Const(Prim::I64(4));
        // `start ..< 4`: an iota from 0 only.
        let range = |start: i64| BasicOp::Range {
            start: SubExp::Const(Prim::I64(start)),
            second: None,
            end: four.clone(),
            kind: RangeKind::UpToExclusive,
            elem: PrimType::I64,
        };
        let zeros = BasicOp::Replicate(vec![four.clone()], SubExp::Const(Prim::I64(0)));
        let prog = Prog {
            funs: vec![
                fun("f", vec![(1, range(0)), (2, range(0)), (3, range(1))]),
                fun("g", vec![(2, zeros), (4, range(0))]),
            ],
            names: Default::default(),
        };
        let mut jit = Jit::new(true);
        jit.know_iotas(&prog);
        let mut got: Vec<u32> = jit.iotas.iter().map(|v| v.0).collect();
        got.sort();
        assert_eq!(got, vec![1, 4]);
    }
}
