//! The time limit of calls: one thread per [`crate::engine::Executor`], started by its first call
//! with a limit, that raises the running call's interrupt flag once the call's deadline
//! passes. A thread spawned and joined per call cost 100–200 µs of every call on a 2-vCPU
//! VM (`runic bench --timeout`: the MLP's 2.2 ms primal 2.3–2.4 ms), as much as some
//! of the kernels it timed; arming this one is a store and a wake-up the caller does not
//! wait for.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// What the watchdog thread is asked to do.
enum State {
    /// No call is running: wait.
    Idle,
    /// A call is running: raise `flag` at `deadline`.
    Armed {
        deadline: Instant,
        flag: Arc<AtomicBool>,
    },
    /// The executor is gone: stop.
    Exit,
}

type Shared = Arc<(Mutex<State>, Condvar)>;

/// The watchdog thread and what it watches.
pub(crate) struct Watchdog {
    shared: Shared,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watchdog {
    /// The watchdog and its thread; `None` when the thread cannot be started.
    pub(crate) fn start() -> Option<Watchdog> {
        let shared: Shared = Arc::new((Mutex::new(State::Idle), Condvar::new()));
        let watched = shared.clone();
        let thread = std::thread::Builder::new()
            .name("runic-watchdog".into())
            .spawn(move || watch(&watched))
            .ok()?;
        Some(Watchdog {
            shared,
            thread: Some(thread),
        })
    }

    /// Raise `flag` once `limit` has passed, unless the returned guard is dropped first
    /// (when the call returns, or unwinds).
    pub(crate) fn arm(&self, limit: Duration, flag: Arc<AtomicBool>) -> Armed<'_> {
        // A limit too far to represent is no limit.
        if let Some(deadline) = Instant::now().checked_add(limit) {
            self.set(State::Armed { deadline, flag });
        }
        Armed(self)
    }

    fn set(&self, new: State) {
        let (state, wake) = &*self.shared;
        *lock(state) = new;
        wake.notify_one();
    }
}

/// A running call's deadline: dropping it disarms the watchdog.
pub(crate) struct Armed<'w>(&'w Watchdog);

impl Drop for Armed<'_> {
    fn drop(&mut self) {
        let (state, _) = &*self.0.shared;
        *lock(state) = State::Idle;
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.set(State::Exit);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The lock, also after a panic elsewhere (the state is always whole).
fn lock(m: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The watchdog thread: sleeps until armed, then until the deadline or a change, and
/// raises the flag of the call armed when the deadline passes.
fn watch(shared: &Shared) {
    let (state, wake) = &**shared;
    let mut s = lock(state);
    loop {
        let timeout = match &*s {
            State::Exit => return,
            State::Idle => None,
            State::Armed { deadline, flag } => {
                let now = Instant::now();
                if now >= *deadline {
                    flag.store(true, Ordering::SeqCst);
                    *s = State::Idle;
                    continue;
                }
                Some(*deadline - now)
            }
        };
        s = match timeout {
            None => wake.wait(s).unwrap_or_else(|e| e.into_inner()),
            Some(t) => wake.wait_timeout(s, t).unwrap_or_else(|e| e.into_inner()).0,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::Watchdog;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    /// Waits up to a few seconds for the flag.
    fn raised_within(flag: &AtomicBool, secs: u64) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(secs) {
            if flag.load(Ordering::SeqCst) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        false
    }

    /// A call that outlives its limit gets its flag raised; one that finishes first (is
    /// disarmed) does not, even after its deadline; the next call's flag is its own.
    #[test]
    fn the_flag_of_the_armed_call_is_raised_at_its_deadline() {
        let w = Watchdog::start().expect("a thread");
        let slow = Arc::new(AtomicBool::new(false));
        {
            let _armed = w.arm(Duration::from_millis(30), slow.clone());
            assert!(raised_within(&slow, 5));
        }

        let quick = Arc::new(AtomicBool::new(false));
        drop(w.arm(Duration::from_millis(300), quick.clone()));
        let next = Arc::new(AtomicBool::new(false));
        let armed = w.arm(Duration::from_secs(3600), next.clone());
        std::thread::sleep(Duration::from_millis(400));
        assert!(!quick.load(Ordering::SeqCst));
        assert!(!next.load(Ordering::SeqCst));
        drop(armed);

        // A later, shorter limit replaces a longer one the thread is waiting on.
        let long = w.arm(Duration::from_secs(3600), Arc::new(AtomicBool::new(false)));
        std::thread::sleep(Duration::from_millis(20));
        drop(long);
        let short = Arc::new(AtomicBool::new(false));
        let armed = w.arm(Duration::from_millis(20), short.clone());
        assert!(raised_within(&short, 5));
        drop(armed);
        // An unrepresentable limit is no limit.
        drop(w.arm(Duration::MAX, Arc::new(AtomicBool::new(false))));
        drop(w);
    }

    /// A call that unwinds disarms the watchdog on its way out.
    #[test]
    fn a_panicking_call_disarms_it() {
        let w = Watchdog::start().expect("a thread");
        let flag = Arc::new(AtomicBool::new(false));
        // Long enough for the panic hook to print (and maybe symbolise a backtrace).
        let limit = Duration::from_secs(1);
        let start = Instant::now();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _armed = w.arm(limit, flag.clone());
            panic!("a bug in a call");
        }));
        assert!(r.is_err());
        if start.elapsed() < limit {
            std::thread::sleep(limit + Duration::from_millis(200) - start.elapsed());
            assert!(!flag.load(Ordering::SeqCst));
        }
    }
}
