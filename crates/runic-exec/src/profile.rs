//! Where a program spends its time: with profiling on (`runic bench --profile`), every SOAC
//! the executor runs at the top level (in parallel) adds its wall time to a table keyed by
//! its source location and kind. Off, the cost is one relaxed atomic load per SOAC.

use runic_ir::{LamId, Loc};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

static ON: AtomicBool = AtomicBool::new(false);
type Table = HashMap<(Option<Loc>, &'static str, Option<LamId>), (u64, Duration)>;
static TABLE: Mutex<Option<Table>> = Mutex::new(None);

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
}

/// Turns profiling on or off (process-wide).
pub fn set_profiling(on: bool) {
    ON.store(on, Ordering::Relaxed);
}

pub(crate) fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

pub(crate) fn record(loc: Option<Loc>, kind: &'static str, lambda: Option<LamId>, time: Duration) {
    if let Ok(mut t) = TABLE.lock() {
        let e = t
            .get_or_insert_with(HashMap::new)
            .entry((loc, kind, lambda))
            .or_default();
        e.0 += 1;
        e.1 += time;
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
        .map(|((loc, kind, lambda), (calls, time))| ProfileEntry {
            loc,
            kind,
            lambda,
            calls,
            time,
        })
        .collect();
    out.sort_by_key(|e| std::cmp::Reverse(e.time));
    out
}
