//! runic-exec: executes the core IR ([`runic_ir::Prog`]) in parallel on the CPU.
//!
//! - [`Executor`] prepares a program once — every variable resolved to a frame slot
//!   ([`slots`]), every straight-line scalar lambda compiled to a column program
//!   ([`vector`]) — and then runs its entry points any number of times.
//! - Top-level SOACs run in parallel with rayon over chunks of their iteration space
//!   ([`soac`], [`hist`]); SOACs nested inside a kernel run sequentially.
//! - Scalar operations use `runic_prim`'s operations (or native ones where those are
//!   bit-identical), so results match the interpreter's.
//! - Run-time errors ([`ExecError`]) carry the interpreter's messages, with IR locations
//!   ([`runic_ir::Loc`]) for the failing operation and its backtrace; rendering them against the
//!   source files is the caller's job (the CLI prints the interpreter's report).

mod error;
mod eval;
mod explain;
mod gemm;
mod hist;
mod index;
mod interleave;
mod native;
mod native_acc;
mod native_fold;
mod native_hist;
mod out;
mod packed;
mod permute;
mod profile;
mod short;
mod simd;
pub mod slots;
mod soac;
mod tasks;
mod thin;
mod value;
pub mod vector;

pub use error::ExecError;
pub use explain::SoacReport;
pub use profile::{set_profiling, take_profile, ProfileEntry};

use eval::{Ctx, Frame};
use runic_data::{Array, Value};
use runic_ir::{EntryParam, Prog, SubExp, Type, ValueLayout};
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use value::Val;

/// A program prepared for execution.
pub struct Executor {
    prog: Arc<Prog>,
    slots: slots::Slots,
    funs: HashMap<String, usize>,
    plans: vector::Plans,
    /// (Boxed, as `tasks`: an `Executor` stays small to move.)
    gemm: Box<gemm::Contractions>,
    /// The arrays the program updates in place ([`index::updated_in_place`]).
    updated: Arc<std::collections::HashSet<runic_ir::VName>>,
    jit: Box<native::Jit>,
    tasks: Box<tasks::Plans>,
    interrupt: Option<Arc<AtomicBool>>,
}

impl Executor {
    pub fn new(prog: Arc<Prog>) -> Executor {
        Executor::with_jit(prog, native::Jit::default())
    }

    /// [`Executor::new`] with native code on or off whatever `RUNIC_JIT` says (for tests
    /// that compare both in one process).
    pub fn with_native(prog: Arc<Prog>, native: bool) -> Executor {
        Executor::with_jit(prog, native::Jit::new(native))
    }

    fn with_jit(mut prog: Arc<Prog>, jit: native::Jit) -> Executor {
        if runic_ir::traverse::has_duplicate_lambda_ids(&prog) {
            runic_ir::traverse::make_lambda_ids_unique(Arc::make_mut(&mut prog));
        }
        let slots = slots::Slots::new(&prog);
        let funs = prog
            .funs
            .iter()
            .enumerate()
            .map(|(k, f)| (f.name.clone(), k))
            .collect();
        let plans = vector::Plans::new(&prog);
        let gemm = Box::new(gemm::Contractions::new(&prog));
        let updated = Arc::new(index::updated_in_place(&prog));
        let mut jit = Box::new(jit);
        jit.know_iotas(&prog);
        // Compile the kernels of the top-level SOACs now: preparing a program includes its
        // native code, so that runs (and their timings) do not compile — but for loops made
        // kernels, which compile where they first run (a warm-up run, when timing).
        explain::walk(&prog, &jit, &gemm, false);
        let tasks = Box::new(tasks::Plans::new(&prog, &slots));
        Executor {
            prog,
            slots,
            funs,
            plans,
            gemm,
            updated,
            jit,
            tasks,
            interrupt: None,
        }
    }

    /// Every SOAC of every entry point, in program order (nested ones after their
    /// enclosing SOAC), with how it runs: the executor's own decision.
    pub fn explain(&self) -> Vec<SoacReport> {
        let soacs = explain::walk(&self.prog, &self.jit, &self.gemm, true);
        explain::with_tasks(soacs, &self.tasks)
    }

    /// Turns task parallelism across independent statements on or off (the default:
    /// on, unless the environment variable `RUNIC_TASKS` is `0`).
    pub fn set_tasks(&mut self, on: bool) {
        self.tasks.set_on(on);
    }

    /// How many SOACs have run native code to the end (on this executor, since it was
    /// made): tests check with it that native code really ran.
    pub fn native_runs(&self) -> usize {
        self.jit.runs()
    }

    /// How many map kernels have been compiled so far: those of every top-level map when
    /// the executor is made, but for loops made kernels, compiled where they first run.
    pub fn map_kernels(&self) -> usize {
        self.jit.map_kernels()
    }

    /// How many iotas left unbuilt where they are bound (only maps, reductions and scans
    /// read them) have been built since, for a reader that needs the array: tests check
    /// with it that a map over the indices builds none.
    pub fn iotas_built_late(&self) -> usize {
        self.jit.iotas_built_late()
    }

    /// A flag that, once set, makes running evaluations stop with the error "interrupted".
    pub fn set_interrupt(&mut self, flag: Arc<AtomicBool>) {
        self.interrupt = Some(flag);
    }

    pub fn prog(&self) -> &Prog {
        &self.prog
    }

    /// Call an entry point with data values; returns one value per external result.
    ///
    /// A call with small arguments runs on the calling thread (no thread per call: a small
    /// entry point costs microseconds); one with at least [`POOL_ARGUMENTS`] elements runs
    /// on a rayon worker. Evaluation grows the stack on demand as bodies
    /// nest (`eval.rs`). A panic inside the executor is a bug and comes back as an
    /// internal error.
    pub fn run_entry(&self, entry: &str, args: Vec<Value>) -> Result<Vec<Value>, ExecError> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let large = args.iter().map(elements).sum::<usize>() >= POOL_ARGUMENTS;
            let run = || tasks::as_evaluation_thread(|| self.run_entry_here(entry, args));
            if large && rayon::current_thread_index().is_none() {
                rayon::scope(|_| run())
            } else {
                run()
            }
        }))
        .unwrap_or_else(|_| Err(ExecError::new("internal error: the ir backend panicked")))
    }

    fn run_entry_here(&self, entry: &str, args: Vec<Value>) -> Result<Vec<Value>, ExecError> {
        let Some((k, fun)) = self
            .prog
            .funs
            .iter()
            .enumerate()
            .find(|(_, f)| f.entry.as_ref().is_some_and(|e| e.name == entry))
        else {
            return Err(ExecError::new(format!("no entry point named \"{entry}\"")));
        };
        let args = match &fun.entry {
            Some(info) => flatten_args(entry, &info.params, args)?,
            None => args,
        };
        if args.len() != fun.params.len() {
            return Err(ExecError::new(format!(
                "entry point \"{entry}\" takes {} arguments, but {} were given",
                fun.params.len(),
                args.len()
            )));
        }
        let cx = Ctx {
            prog: &self.prog,
            slots: &self.slots,
            funs: &self.funs,
            plans: &self.plans,
            gemm: &self.gemm,
            updated: &self.updated,
            jit: &self.jit,
            interrupt: self.interrupt.as_deref(),
            tasks: &self.tasks,
            cancel: None,
        };
        let mut frame = Frame::new(self.slots.frame_size[k]);
        for (p, a) in fun.params.iter().zip(args) {
            let v = from_data(a, &p.ty)?;
            bind_sizes(&cx, &mut frame, &p.ty, &v)?;
            cx.set(&mut frame, p.name, v);
        }
        let results = cx.body(&mut frame, &fun.body, true)?;
        // The frame's references go first, so that results can be moved out.
        drop(frame);
        let info = fun.entry.as_ref();
        let mut out = Vec::new();
        let mut it = results.into_iter();
        match info {
            Some(info) if !info.results.is_empty() => {
                for r in &info.results {
                    let vals: Vec<Val> = it.by_ref().take(r.num_values).collect();
                    if r.opaque {
                        out.push(match &r.layout {
                            Some(layout) => rebuild(layout, &mut vals.into_iter())?,
                            None => Value::Opaque(r.type_text.clone()),
                        });
                    } else if vals.len() == 1 {
                        let v = vals.into_iter().next().expect("one value");
                        out.push(to_data(v)?);
                    } else {
                        out.push(Value::Tuple(
                            vals.into_iter().map(to_data).collect::<Result<_, _>>()?,
                        ));
                    }
                }
            }
            _ => {
                for v in it {
                    out.push(to_data(v)?);
                }
            }
        }
        Ok(out)
    }
}

/// Arguments of at least this many elements in all (as many as a SOAC needs to be split
/// across the workers, `SPLIT_MIN` in soac.rs) make a call run on a rayon worker
/// (`rayon::scope` runs its body on one). A parallel SOAC started from outside the pool
/// hands its chunks to the workers and sleeps on a latch until the last one wakes it, a
/// round trip of ~30 µs on a 2-vCPU VM *per SOAC*, while one started on a worker pushes
/// them on that worker's own deque and works on them itself as the other workers steal
/// (100 maps of 65 536 `f32`s in a loop: 4.0 ms from the calling thread, 1.6–2.1 ms on a
/// worker). The move itself costs one such round trip per call, ~100 µs when the workers
/// have gone to sleep, so a call none of whose SOACs could be split stays where it is
/// (rows sums of a `[1024][10]` array: 8 µs in place, 105 µs moved).
pub const POOL_ARGUMENTS: usize = soac::SPLIT_MIN;

/// The number of scalars in a value (arrays by their elements).
fn elements(v: &Value) -> usize {
    match v {
        Value::Array(a) => a.len(),
        Value::Tuple(vs) | Value::Sum(_, vs) => vs.iter().map(elements).sum(),
        Value::Record(fs) => fs.iter().map(|(_, v)| elements(v)).sum(),
        Value::Scalar(_) | Value::Opaque(_) => 1,
    }
}

/// Prepare `prog` and call `entry` once.
pub fn run_entry(prog: &Prog, entry: &str, args: Vec<Value>) -> Result<Vec<Value>, ExecError> {
    Executor::new(Arc::new(prog.clone())).run_entry(entry, args)
}

/// The IR arguments of a call: each external argument split into its data values by its
/// parameter's layout (record fields matched by name, in any order).
fn flatten_args(
    entry: &str,
    params: &[EntryParam],
    args: Vec<Value>,
) -> Result<Vec<Value>, ExecError> {
    if args.len() != params.len() {
        return Err(ExecError::new(format!(
            "entry point \"{entry}\" takes {} arguments, but {} were given",
            params.len(),
            args.len()
        )));
    }
    let mut out = Vec::new();
    for (p, a) in params.iter().zip(args) {
        flatten(&p.layout, a, &mut out)?;
    }
    Ok(out)
}

fn flatten(layout: &ValueLayout, v: Value, out: &mut Vec<Value>) -> Result<(), ExecError> {
    let bad = || ExecError::new("entry point arguments have invalid types.");
    match (layout, v) {
        (ValueLayout::Value, v) => out.push(v),
        (ValueLayout::Tuple(parts), Value::Tuple(items)) if parts.len() == items.len() => {
            for (l, v) in parts.iter().zip(items) {
                flatten(l, v, out)?;
            }
        }
        (ValueLayout::Record(fields), Value::Record(mut given)) if fields.len() == given.len() => {
            for (name, l) in fields {
                let k = given.iter().position(|(n, _)| n == name).ok_or_else(bad)?;
                flatten(l, given.swap_remove(k).1, out)?;
            }
        }
        _ => return Err(bad()),
    }
    Ok(())
}

/// A tuple or record result from its IR results, in order.
fn rebuild(layout: &ValueLayout, vals: &mut impl Iterator<Item = Val>) -> Result<Value, ExecError> {
    let missing =
        || ExecError::new("internal error: an entry result has fewer values than its type");
    Ok(match layout {
        ValueLayout::Value => to_data(vals.next().ok_or_else(missing)?)?,
        ValueLayout::Tuple(parts) => Value::Tuple(
            parts
                .iter()
                .map(|l| rebuild(l, vals))
                .collect::<Result<_, _>>()?,
        ),
        ValueLayout::Record(fields) => Value::Record(
            fields
                .iter()
                .map(|(n, l)| Ok((n.clone(), rebuild(l, vals)?)))
                .collect::<Result<_, ExecError>>()?,
        ),
    })
}

fn invalid_sizes() -> ExecError {
    ExecError::new("entry point arguments have invalid sizes.")
}

/// Check an argument's shape against its parameter type, binding size variables.
fn bind_sizes(cx: &Ctx, frame: &mut Frame, ty: &Type, v: &Val) -> Result<(), ExecError> {
    if let Type::Array { shape, .. } = ty {
        let have = v.shape();
        if have.len() != shape.len() {
            return Err(invalid_sizes());
        }
        for (d, &h) in shape.iter().zip(have) {
            match d {
                SubExp::Const(c) => {
                    if c.to_i64() != Some(h as i64) {
                        return Err(invalid_sizes());
                    }
                }
                SubExp::Var(n) => match cx.get(frame, *n) {
                    Ok(x) => {
                        if x.i64()? != h as i64 {
                            return Err(invalid_sizes());
                        }
                    }
                    Err(_) => cx.set(frame, *n, Val::Prim(runic_prim::Prim::I64(h as i64))),
                },
            }
        }
    }
    Ok(())
}

fn from_data(v: Value, ty: &Type) -> Result<Val, ExecError> {
    let bad = || ExecError::new("entry point arguments have invalid types.");
    match (v, ty) {
        (Value::Scalar(s), Type::Prim(t)) if *t == s.ty() => Ok(Val::Prim(s)),
        (Value::Array(a), Type::Array { elem, shape }) if *elem == a.data.elem_type() => {
            if a.shape.len() != shape.len() || !a.is_valid() {
                return Err(bad());
            }
            Ok(Val::Arr(Arc::new(a)))
        }
        _ => Err(bad()),
    }
}

/// A result for the host; an array no one else holds is moved, not copied.
fn to_data(v: Val) -> Result<Value, ExecError> {
    match v {
        Val::Prim(p) => Ok(Value::Scalar(p)),
        Val::Arr(a) => Ok(Value::Array(
            Arc::try_unwrap(a).unwrap_or_else(|a| Array::clone(&a)),
        )),
        _ => Err(ExecError::new(
            "internal error: a non-data entry point result",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use runic_prim::Prim;

    /// Arguments count by their scalars, through tuples and records.
    #[test]
    fn arguments_count_their_scalars() {
        let arr = |n: usize| Value::Array(Array::from_f32(vec![n], vec![0.0; n]).unwrap());
        assert_eq!(elements(&Value::Scalar(Prim::I64(3))), 1);
        assert_eq!(elements(&arr(10)), 10);
        let nested = Value::Tuple(vec![
            arr(4),
            Value::Record(vec![
                ("a".into(), arr(5)),
                ("b".into(), Value::Scalar(Prim::F32(1.0))),
            ]),
        ]);
        assert_eq!(elements(&nested), 10);
        let big = [arr(POOL_ARGUMENTS - 1), Value::Scalar(Prim::I64(0))];
        assert_eq!(big.iter().map(elements).sum::<usize>(), POOL_ARGUMENTS);
    }
}
