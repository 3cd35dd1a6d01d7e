//! Where a program spends its time: with profiling on (`runic bench --profile`), every SOAC
//! the executor runs at the top level (in parallel) adds its wall time to a table keyed by
//! its source location and kind. Off, the cost is one relaxed atomic load per SOAC. A SOAC
//! run by a built-in may leave a detail of its last run (a matrix product: its shape),
//! which tells apart the products of one source location.

use runic_ir::{LamId, Loc};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

static ON: AtomicBool = AtomicBool::new(false);
type Table = HashMap<(Option<Loc>, &'static str, Option<LamId>), (u64, Duration, Option<String>)>;
static TABLE: Mutex<Option<Table>> = Mutex::new(None);

thread_local! {
    /// What the SOAC running on this thread noted of itself ([`note`]), until it is recorded.
    static DETAIL: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// One line of the profile: a SOAC, how often it ran and for how long in total.
#[derive(Clone, Debug)]
pub struct ProfileEntry {
    pub loc: Option<Loc>,
    pub kind: &'static str,
    /// The SOAC's (first) lambda: tells apart the SOACs of one source location (a
    /// primal and its derivatives).
    pub lambda: Option<LamId>,
    pub calls: u64,
    pub time: Duration,
    /// What the last run noted of itself, if anything (a product's shape).
    pub detail: Option<String>,
}

/// Turns profiling on or off (process-wide).
pub fn set_profiling(on: bool) {
    ON.store(on, Ordering::Relaxed);
}

pub(crate) fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Notes a detail of the SOAC this thread is running, for its profile line: only while
/// profiling, and only for a SOAC that gets a line (`top`, run in parallel; one nested in
/// another's lambda would otherwise lend its detail to the enclosing one).
pub(crate) fn note(top: bool, detail: impl FnOnce() -> String) {
    if top && on() {
        DETAIL.with(|d| *d.borrow_mut() = Some(detail()));
    }
}

/// Drops a detail noted before the SOAC about to run (by a product that did not get a
/// line of its own).
pub(crate) fn forget_detail() {
    DETAIL.with(|d| d.borrow_mut().take());
}

pub(crate) fn record(loc: Option<Loc>, kind: &'static str, lambda: Option<LamId>, time: Duration) {
    let detail = DETAIL.with(|d| d.borrow_mut().take());
    if let Ok(mut t) = TABLE.lock() {
        let e = t
            .get_or_insert_with(HashMap::new)
            .entry((loc, kind, lambda))
            .or_default();
        e.0 += 1;
        e.1 += time;
        if detail.is_some() {
            e.2 = detail;
        }
    }
}

/// The table so far, most expensive first, and a fresh one started.
pub fn take_profile() -> Vec<ProfileEntry> {
    let table = TABLE
        .lock()
        .ok()
        .and_then(|mut t| t.take())
        .unwrap_or_default();
    let mut out: Vec<ProfileEntry> = table
        .into_iter()
        .map(
            |((loc, kind, lambda), (calls, time, detail))| ProfileEntry {
                loc,
                kind,
                lambda,
                calls,
                time,
                detail,
            },
        )
        .collect();
    out.sort_by_key(|e| std::cmp::Reverse(e.time));
    out
}
