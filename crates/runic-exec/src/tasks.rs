//! Task parallelism across the statements of a body (seed 000 §4.4: "independent branches
//! of the traced graph run their adjoints in parallel").
//!
//! When the `Executor` is prepared, every body the evaluation thread itself runs (function
//! bodies, and the bodies of loops, branches and `with_acc` at that level; not lambdas of
//! SOACs) gets a [`Plan`] if it has at least two *expensive* statements (ones holding a
//! SOAC, a loop, a call or a `with_acc`) neither of which depends on the other. At run time
//! such a body is scheduled by dependency counting (Kahn's algorithm as it goes): a
//! statement becomes ready when every statement of the body it uses is done; cheap ready
//! statements run at once on the evaluation thread; expensive ones run as rayon tasks when
//! another expensive statement is ready or running (alone, one runs in place). Each task
//! keeps its data parallelism (its SOACs use the same rayon pool).
//!
//! Semantics are those of sequential evaluation:
//! - results are the same (a task evaluates its statement on a frame holding the values it
//!   reads; what it consumes is moved into it, after every statement that reads it);
//! - the error reported is the one sequential evaluation reports: after a failure, only
//!   statements before it in program order are started, running ones after it are
//!   cancelled, and the first failing statement in program order wins;
//! - statements after an `assert` or shape check wait for it (they may rely on it).
//!
//! The evaluation thread is the thread a call runs on (`Executor::run_entry`: the caller's,
//! or a rayon worker for a call with large arguments), marked by [`as_evaluation_thread`];
//! tasks run on others and do not nest. On a worker, the evaluation thread waits for its
//! tasks by running pending rayon work (its tasks, their SOACs' chunks) instead of
//! sleeping, so that neither core idles and a pool of one worker does not deadlock.
//!
//! `RUNIC_TASKS=0` turns it off.

use crate::eval::{Ctx, Frame};
use crate::slots::Slots;
use crate::value::Val;
use runic_ir::traverse::{any_exp, binders, free_vars};
use runic_ir::*;
use std::cell::Cell;
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;

thread_local! {
    /// Whether this thread is a call's evaluation thread (see the module's header).
    static EVALUATING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with this thread marked as the evaluation thread (`on`) or not, as before
/// afterwards (also when `f` panics: a worker must not stay marked).
fn marked<R>(on: bool, f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            EVALUATING.set(self.0);
        }
    }
    let _restore = Restore(EVALUATING.replace(on));
    f()
}

/// Runs `f` (a call's evaluation) as the evaluation thread: the bodies it runs may
/// schedule tasks.
pub(crate) fn as_evaluation_thread<R>(f: impl FnOnce() -> R) -> R {
    marked(true, f)
}

/// The next finished task's message, or `None` when no task can send one. A rayon worker
/// runs pending work while it waits (blocking it would leave its core idle, and with one
/// worker nobody would run the tasks); another thread sleeps until a message comes.
fn receive<T>(rx: &mpsc::Receiver<T>) -> Option<T> {
    if rayon::current_thread_index().is_none() {
        return rx.recv().ok();
    }
    loop {
        match rx.try_recv() {
            Ok(m) => return Some(m),
            Err(mpsc::TryRecvError::Disconnected) => return None,
            Err(mpsc::TryRecvError::Empty) => {
                if rayon::yield_now() != Some(rayon::Yield::Executed) {
                    std::thread::yield_now();
                }
            }
        }
    }
}

/// The schedule of one body.
pub struct Plan {
    /// For each statement, the statements of the body it waits for.
    deps: Vec<Vec<u32>>,
    /// For each statement, the statements that wait for it.
    users: Vec<Vec<u32>>,
    expensive: Vec<bool>,
    /// Variables a task of the statement reads (copied into its frame) and consumes (moved).
    reads: Vec<Vec<VName>>,
    consumes: Vec<Vec<VName>>,
    /// The frame length a task of the statement needs.
    frame_len: Vec<usize>,
    /// For `--explain-exec`: the expensive statements and how many can run at once.
    pub expensive_count: usize,
    pub width: usize,
    pub loc: Option<Loc>,
}

/// The plans of a program's bodies, by the address of the body in the (immutable) program.
#[derive(Default)]
pub struct Plans {
    by_body: HashMap<usize, Plan>,
    /// For each loop statement of those bodies (by its address), which of its initial
    /// values the loop may move out of their slots instead of sharing them ([`moves`]).
    moves: HashMap<usize, Vec<bool>>,
    on: bool,
    /// (entry name, plan key) in program order, for reports.
    order: Vec<(String, usize)>,
}

impl Plans {
    pub fn new(prog: &Prog, slots: &Slots) -> Plans {
        let mut p = Plans {
            on: std::env::var("RUNIC_TASKS").map_or(true, |v| v != "0"),
            ..Plans::default()
        };
        for f in &prog.funs {
            let name = f.entry.as_ref().map_or(f.name.clone(), |e| e.name.clone());
            let params: Vec<VName> = f.params.iter().map(|p| p.name).collect();
            p.body(&name, &f.body, &params, slots);
        }
        p
    }

    /// Which initial values of the loop statement `stm` it may move out of their slots.
    #[inline]
    pub fn moves(&self, stm: &Stm) -> Option<&[bool]> {
        self.moves
            .get(&(stm as *const Stm as usize))
            .map(Vec::as_slice)
    }

    /// Turns task parallelism on or off (the default is `RUNIC_TASKS`, on unless `0`).
    pub fn set_on(&mut self, on: bool) {
        self.on = on;
    }

    pub fn is_on(&self) -> bool {
        self.on
    }

    /// The plan of `b`, when tasks may run it: task parallelism on, and the caller is the
    /// evaluation thread (tasks do not nest).
    #[inline]
    pub fn get(&self, b: &Body) -> Option<&Plan> {
        if !self.on || self.by_body.is_empty() || !EVALUATING.get() {
            return None;
        }
        self.by_body.get(&(b as *const Body as usize))
    }

    /// The plans in program order, with their entry point's name.
    pub fn reports(&self) -> impl Iterator<Item = (&str, &Plan)> {
        self.order
            .iter()
            .filter_map(|(e, k)| Some((e.as_str(), self.by_body.get(k)?)))
    }

    /// Plans `b` (whose own parameters are `params`) and the bodies the evaluation thread
    /// runs inside its statements.
    fn body(&mut self, entry: &str, b: &Body, params: &[VName], slots: &Slots) {
        let moves = moves(b, params);
        if let Some(plan) = plan(b, slots, &moves) {
            let key = b as *const Body as usize;
            self.by_body.insert(key, plan);
            self.order.push((entry.to_string(), key));
        }
        self.moves.extend(moves);
        let dead = dead_in_branches(b, params);
        for (k, stm) in b.stms.iter().enumerate() {
            match &stm.exp {
                Exp::Loop { body, params, form } => {
                    let mut own: Vec<VName> = params.iter().map(|(p, _)| p.name).collect();
                    if let LoopForm::For { i, .. } = form {
                        own.push(*i);
                    }
                    self.body(entry, body, &own, slots)
                }
                Exp::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    let dead = dead.get(&k).map_or(&[][..], |d| d.as_slice());
                    self.body(entry, then_body, dead, slots);
                    self.body(entry, else_body, dead, slots);
                }
                Exp::WithAcc { lam, .. } => self.body(entry, &lam.body, &[], slots),
                _ => {}
            }
        }
    }
}

/// For each loop statement of `b` (by address), which of its initial values it may move
/// out of their slots: arrays that `b` binds (or its own parameters `params`, set afresh
/// for each run of `b`), that neither the loop (its body, its bound) nor anything after
/// it in `b` reads, and that the loop takes once. Otherwise the slot keeps a reference and
/// the loop's first in-place update of that value copies it whole (a tape made by
/// `scratch` and filled by the loop, say).
fn moves(b: &Body, params: &[VName]) -> HashMap<usize, Vec<bool>> {
    let mut own: std::collections::HashSet<VName> = params.iter().copied().collect();
    own.extend(b.stms.iter().flat_map(|s| s.pat.iter().map(|p| p.name)));
    let mut later = runic_ir::traverse::uses(&b.result);
    let mut out = HashMap::new();
    for stm in b.stms.iter().rev() {
        if let Exp::Loop { params, body, form } = &stm.exp {
            let mut inside = runic_ir::traverse::uses(body);
            if let LoopForm::For { bound, .. } = form {
                runic_ir::traverse::add_uses(bound, &mut inside);
            }
            let mv: Vec<bool> = params
                .iter()
                .map(|(p, init)| match init {
                    SubExp::Var(v) => {
                        p.ty.rank() > 0
                            && own.contains(v)
                            && !later.contains(v)
                            && !inside.contains(v)
                            && params.iter().filter(|(_, x)| x == init).count() == 1
                    }
                    SubExp::Const(_) => false,
                })
                .collect();
            if mv.contains(&true) {
                out.insert(stm as *const Stm as usize, mv);
            }
        }
        runic_ir::traverse::add_uses(stm, &mut later);
    }
    out
}

/// For each `if` of `b` (by position), the arrays `b` owns (binds, or its parameters
/// `params`) that the `if` reads and nothing after it does: a loop in a branch may move
/// them out of their slots as if the branch had bound them (a loop the `loops-as-kernels`
/// pass put behind a check of its widths takes its tapes over, instead of copying them at
/// its first in-place update).
fn dead_in_branches(b: &Body, params: &[VName]) -> HashMap<usize, Vec<VName>> {
    let mut own: std::collections::HashSet<VName> = params.iter().copied().collect();
    own.extend(b.stms.iter().flat_map(|s| s.pat.iter().map(|p| p.name)));
    let mut later = runic_ir::traverse::uses(&b.result);
    let mut out = HashMap::new();
    for (k, stm) in b.stms.iter().enumerate().rev() {
        if let Exp::If { .. } = &stm.exp {
            let mut dead: Vec<VName> = runic_ir::traverse::uses(stm)
                .into_iter()
                .filter(|v| own.contains(v) && !later.contains(v))
                .collect();
            dead.sort();
            if !dead.is_empty() {
                out.insert(k, dead);
            }
        }
        runic_ir::traverse::add_uses(stm, &mut later);
    }
    out
}

/// A statement worth a task of its own: it holds a SOAC, a loop, a call or a `with_acc`.
fn expensive(stm: &Stm) -> bool {
    any_exp(stm, |e| {
        matches!(
            e,
            Exp::Soac(_) | Exp::Loop { .. } | Exp::Apply { .. } | Exp::WithAcc { .. }
        )
    })
}

/// A statement later statements may rely on without using its result.
fn barrier(stm: &Stm) -> bool {
    matches!(
        stm.exp,
        Exp::Basic(BasicOp::Assert { .. } | BasicOp::ShapeCheck { .. })
    )
}

/// The variables `stm` consumes (updates in place) that it does not bind itself.
fn consumed(stm: &Stm) -> Vec<VName> {
    let found = std::cell::RefCell::new(Vec::new());
    any_exp(stm, |e| {
        found.borrow_mut().extend(crate::index::updated_by(e));
        false
    });
    let mut out = found.into_inner();
    let inner = binders(stm);
    out.retain(|v| !inner.contains(v));
    out.sort();
    out.dedup();
    out
}

/// The plan of a body, if two of its expensive statements are independent.
fn plan(b: &Body, slots: &Slots, moves: &HashMap<usize, Vec<bool>>) -> Option<Plan> {
    let n = b.stms.len();
    let exp: Vec<bool> = b.stms.iter().map(expensive).collect();
    let expensive_count = exp.iter().filter(|&&e| e).count();
    if expensive_count < 2 {
        return None;
    }
    let mut bound_at: HashMap<VName, usize> = HashMap::new();
    let mut readers: HashMap<VName, Vec<usize>> = HashMap::new();
    let mut deps = vec![BTreeSet::new(); n];
    let mut reads = Vec::with_capacity(n);
    let mut consumes = Vec::with_capacity(n);
    let mut frame_len = Vec::with_capacity(n);
    let mut last_barrier: Option<usize> = None;
    for (i, stm) in b.stms.iter().enumerate() {
        let free: Vec<VName> = free_vars(stm).into_iter().collect();
        let mut eaten = consumed(stm);
        // A loop's initial values it moves are consumed like an updated array.
        if let (Some(mv), Exp::Loop { params, .. }) =
            (moves.get(&(stm as *const Stm as usize)), &stm.exp)
        {
            for ((_, init), m) in params.iter().zip(mv) {
                if let (SubExp::Var(v), true) = (init, m) {
                    if !eaten.contains(v) {
                        eaten.push(*v);
                    }
                }
            }
        }
        for v in &free {
            if let Some(&j) = bound_at.get(v) {
                deps[i].insert(j);
            }
        }
        // A consumer runs after every earlier reader of what it consumes.
        for v in &eaten {
            for &j in readers.get(v).map(Vec::as_slice).unwrap_or(&[]) {
                deps[i].insert(j);
            }
        }
        if let Some(a) = last_barrier {
            deps[i].insert(a);
        }
        for v in &free {
            readers.entry(*v).or_default().push(i);
        }
        for p in &stm.pat {
            bound_at.insert(p.name, i);
        }
        if barrier(stm) {
            last_barrier = Some(i);
        }
        let slot_max = free
            .iter()
            .chain(binders(stm).iter())
            .map(|v| slots.of(*v))
            .filter(|&s| s != crate::slots::NO_SLOT as usize)
            .max()
            .unwrap_or(0);
        frame_len.push(slot_max + 1);
        reads.push(free.into_iter().filter(|v| !eaten.contains(v)).collect());
        consumes.push(eaten);
    }
    let deps: Vec<Vec<u32>> = deps
        .into_iter()
        .map(|d| d.into_iter().map(|j| j as u32).collect())
        .collect();
    let width = width(&deps, &exp);
    if width < 2 {
        return None;
    }
    let mut users = vec![Vec::new(); n];
    for (i, d) in deps.iter().enumerate() {
        for &j in d {
            users[j as usize].push(i as u32);
        }
    }
    let loc = b
        .stms
        .iter()
        .zip(&exp)
        .find(|(_, &e)| e)
        .and_then(|(s, _)| s.src.loc);
    Some(Plan {
        deps,
        users,
        expensive: exp,
        reads,
        consumes,
        frame_len,
        expensive_count,
        width,
        loc,
    })
}

/// How many expensive statements can run at once, estimated by levels: an expensive
/// statement's level is one more than the deepest expensive statement it depends on
/// (transitively); the width is the largest number of expensive statements on one level.
fn width(deps: &[Vec<u32>], exp: &[bool]) -> usize {
    let mut level = vec![0usize; deps.len()];
    let mut count: HashMap<usize, usize> = HashMap::new();
    for i in 0..deps.len() {
        let below = deps[i]
            .iter()
            .map(|&j| level[j as usize])
            .max()
            .unwrap_or(0);
        level[i] = below + usize::from(exp[i]);
        if exp[i] {
            *count.entry(level[i]).or_default() += 1;
        }
    }
    count.values().copied().max().unwrap_or(0)
}

/// The state of one scheduled body.
struct Run<'a> {
    plan: &'a Plan,
    waiting: Vec<u32>,
    ready: BTreeSet<usize>,
    running: BTreeSet<usize>,
    /// The first failure in program order so far.
    failed: Option<(usize, crate::ExecError)>,
}

impl Run<'_> {
    fn done(&mut self, i: usize) {
        for &u in &self.plan.users[i] {
            let w = &mut self.waiting[u as usize];
            *w -= 1;
            if *w == 0 {
                self.ready.insert(u as usize);
            }
        }
    }

    fn fail(&mut self, i: usize, e: crate::ExecError, cancel: &[AtomicBool]) {
        if self.failed.as_ref().is_none_or(|(k, _)| i < *k) {
            self.failed = Some((i, e));
            for &r in self.running.range(i + 1..) {
                cancel[r].store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
    }

    /// Statements after the first failure are not started.
    fn limit(&self) -> usize {
        self.failed.as_ref().map_or(usize::MAX, |(k, _)| *k)
    }

    /// The first ready statement before the limit that `pick` accepts.
    fn take(&mut self, pick: impl Fn(usize) -> bool) -> Option<usize> {
        let limit = self.limit();
        let i = self
            .ready
            .iter()
            .copied()
            .take_while(|&i| i < limit)
            .find(|&i| pick(i))?;
        self.ready.remove(&i);
        Some(i)
    }
}

impl Ctx<'_> {
    /// Runs the statements of `b` by `plan` (see the module's header); the caller evaluates
    /// the body's results.
    pub(crate) fn stms_as_tasks(
        &self,
        f: &mut Frame,
        b: &Body,
        plan: &Plan,
    ) -> crate::error::R<()> {
        let n = b.stms.len();
        let mut run = Run {
            plan,
            waiting: plan.deps.iter().map(|d| d.len() as u32).collect(),
            ready: (0..n).filter(|&i| plan.deps[i].is_empty()).collect(),
            running: BTreeSet::new(),
            failed: None,
        };
        let cancel: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(false)).collect();
        let (tx, rx) = mpsc::channel::<(usize, crate::error::R<Vec<Val>>)>();
        rayon::in_place_scope(|scope| loop {
            // Cheap statements first: they may make more expensive ones ready.
            while let Some(i) = run.take(|i| !plan.expensive[i]) {
                match self.stm(f, &b.stms[i], true) {
                    Ok(()) => run.done(i),
                    Err(e) => run.fail(i, e, &cancel),
                }
            }
            let ready: Vec<usize> = std::iter::from_fn(|| run.take(|_| true)).collect();
            if let ([i], true) = (ready.as_slice(), run.running.is_empty()) {
                // Nothing to overlap with: run it here, as sequential evaluation would.
                match self.stm(f, &b.stms[*i], true) {
                    Ok(()) => run.done(*i),
                    Err(e) => run.fail(*i, e, &cancel),
                }
                continue;
            }
            for i in ready {
                let mut tf = Frame::new(plan.frame_len[i]);
                for &v in &plan.reads[i] {
                    if let Ok(x) = self.get(f, v) {
                        let x = x.clone();
                        self.set(&mut tf, v, x);
                    }
                }
                for &v in &plan.consumes[i] {
                    if let Ok(x) = self.take(f, v) {
                        self.set(&mut tf, v, x);
                    }
                }
                let (tx, stm, stop) = (tx.clone(), &b.stms[i], &cancel[i]);
                let cx = Ctx {
                    cancel: Some(stop),
                    ..*self
                };
                run.running.insert(i);
                scope.spawn(move |_| {
                    // Not the evaluation thread, even when the evaluation thread runs it
                    // while it waits.
                    let r = marked(false, || {
                        cx.stm(&mut tf, stm, true).and_then(|()| {
                            stm.pat
                                .iter()
                                .map(|p| cx.take(&mut tf, p.name))
                                .collect::<crate::error::R<Vec<Val>>>()
                        })
                    });
                    // The receiver outlives the scope.
                    let _ = tx.send((i, r));
                });
            }
            if run.running.is_empty() {
                break;
            }
            let Some((i, r)) = receive(&rx) else { break };
            run.running.remove(&i);
            match r {
                Ok(vals) => {
                    for (p, v) in b.stms[i].pat.iter().zip(vals) {
                        self.set(f, p.name, v);
                    }
                    run.done(i);
                }
                Err(e) => run.fail(i, e, &cancel),
            }
        });
        match run.failed {
            Some((_, e)) => Err(e),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lowered(src: &str) -> Prog {
        let mut sources = runic_syntax::SourceMap::new();
        let file = sources.add("t.fut", src.to_string());
        let program = runic_syntax::parse_program(file, src, 0).expect("parses");
        let checked = runic_types::check_program(program, &sources).expect("checks");
        runic_lower::lower_with_sources(&checked, Some(&sources)).expect("lowers")
    }

    /// An `if` may hand its branches the arrays nothing after it reads: `a` (read only by
    /// the `if`), not `b` (returned after it) nor `c` (read by a later statement).
    #[test]
    fn branches_own_the_arrays_only_the_if_reads() {
        let prog = lowered(
            "entry main (n: i64) (k: bool) =
               let a = replicate n 0i64
               let b = replicate n 1i64
               let c = replicate n 2i64
               let x = if k then loop a for i < n do a with [i] = i + b[i] + c[0] else b
               in (x, b, c[1])",
        );
        let body = &prog.funs[0].body;
        let dead = dead_in_branches(body, &[]);
        let (k, _) = body
            .stms
            .iter()
            .enumerate()
            .find(|(_, s)| matches!(s.exp, Exp::If { .. }))
            .expect("the if");
        // `a`, `b` and `c`, in order of their `replicate`s.
        let reps: Vec<VName> = body
            .stms
            .iter()
            .filter(|s| matches!(s.exp, Exp::Basic(BasicOp::Replicate(..))))
            .map(|s| s.pat[0].name)
            .collect();
        assert_eq!(reps.len(), 3);
        assert_eq!(dead[&k], vec![reps[0]]);
    }

    /// The mark is the call's alone: off again after it, after a task inside it, and after
    /// a panic (the executor turns panics into errors; the thread lives on).
    #[test]
    fn the_evaluation_thread_mark_is_restored() {
        assert!(!EVALUATING.get());
        as_evaluation_thread(|| {
            assert!(EVALUATING.get());
            marked(false, || assert!(!EVALUATING.get()));
            assert!(EVALUATING.get());
        });
        assert!(!EVALUATING.get());
        let r = std::panic::catch_unwind(|| as_evaluation_thread(|| panic!("a bug")));
        assert!(r.is_err());
        assert!(!EVALUATING.get());
    }

    /// A worker waiting for messages runs the jobs that send them, even as the only worker.
    #[test]
    fn a_lone_worker_runs_the_tasks_it_waits_for() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let got = pool.install(|| {
            let (tx, rx) = mpsc::channel();
            rayon::in_place_scope(|scope| {
                for i in 0..3 {
                    let tx = tx.clone();
                    scope.spawn(move |_| tx.send(i).unwrap());
                }
                let mut got: Vec<i32> = (0..3).filter_map(|_| receive(&rx)).collect();
                got.sort();
                got
            })
        });
        assert_eq!(got, vec![0, 1, 2]);
    }
}
