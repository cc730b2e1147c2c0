//! Stall warnings: a worker that stays inside one task run longer than a
//! threshold (`RAYA_STALL_MS`, default 1000; 0 turns them off) without
//! the run ending. A run ends at the latest after one time slice of
//! safepoints, so a run this long is stuck between two safepoints: a long
//! native call (`"x".repeat(1e9)`, sorting a huge array) or a blocking
//! host function registered with `Vm::register_fn` instead of
//! `register_blocking_fn`. Every other task queued on that worker waits
//! meanwhile. A task blocked on a wait is not running, so it never
//! counts, nor does time while a collection holds every worker. See `design/trace.md`.
//!
//! # How
//!
//! Go's sysmon rule, without clocks on the hot path: each worker bumps its
//! own `epoch` when a run starts (odd: in a run) and when it ends (even),
//! with plain stores to its own cache line. A watchdog thread samples the
//! epochs every quarter of the threshold; an odd epoch unchanged since it
//! was first seen, longer ago than the threshold, is a stall, reported
//! once per run with the worker, the task, its stack and the time so far.
//!
//! # The stack
//!
//! A run can only stall inside a native call (a built-in or a host
//! function): everywhere else it reaches safepoints. Natives see their
//! task by shared reference, so while one runs its task's frames do not
//! change; the worker marks its slot with the task for the length of the
//! call ([`Probe::enter_native`], [`Probe::leave_native`]). The watchdog
//! reads a stalled task's frames only under a handshake that keeps the
//! worker inside the call meanwhile:
//!
//! - watchdog: `claim = true`; a process-wide memory barrier
//!   (`membarrier(2)`, which makes every thread of the process execute a
//!   full fence); then `native` is read: if it still names the task, the
//!   frames are read and `claim = false` (release).
//! - worker, leaving the call: `native = null`; a compiler fence; then
//!   `claim` is read: if set, it waits until it is cleared.
//!
//! This is Dekker's mutual exclusion with the worker's fence supplied by
//! the watchdog's barrier: either the watchdog sees `native` null, or the
//! worker sees `claim` set and waits; both reading the other's old value
//! is impossible. So the hot path costs two plain stores and a load per
//! native call, no atomic read-modify-write. Where `membarrier` is not
//! available (other systems, old kernels), the first line has no stack
//! and the worker prints it when the run ends (below), as it always does.

use crate::vm::task::Task;
use crossbeam::utils::CachePadded;
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{compiler_fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The default threshold.
pub const DEFAULT_STALL_MS: u64 = 1000;

/// The threshold `RAYA_STALL_MS` asks for (None: off).
pub fn threshold_from_env() -> Option<Duration> {
    let ms = match std::env::var("RAYA_STALL_MS") {
        Ok(v) => v.trim().parse::<u64>().unwrap_or(DEFAULT_STALL_MS),
        Err(_) => DEFAULT_STALL_MS,
    };
    (ms > 0).then(|| Duration::from_millis(ms))
}

#[derive(Default)]
struct Slot {
    /// Odd while a run is in progress; written only by its worker.
    epoch: AtomicU64,
    task: AtomicU32,
    /// The watchdog reported this run; the worker reports its end.
    reported: AtomicBool,
    /// While the worker is inside a native call: the task making it (see
    /// the module docs for when another thread may read through it).
    native: AtomicPtr<Task>,
    /// The watchdog is reading `native`'s task: the worker must not leave
    /// the call until this is false again.
    claim: AtomicBool,
}

/// A worker's handle on its slot, kept in its runtime (`Runtime::stall`),
/// which the interpreter uses around every native call.
pub struct Probe {
    /// Keeps the slot alive.
    _stalls: Arc<Stalls>,
    slot: *const Slot,
}

// SAFETY: `slot` points into `_stalls`, which the probe owns; a slot is
// made of atomics.
unsafe impl Send for Probe {}

impl Probe {
    /// Marks the start of a native call made by `task` (which the call
    /// sees by shared reference only: its frames do not change until
    /// [`Probe::leave_native`]).
    #[inline]
    pub fn enter_native(&self, task: &Task) {
        // SAFETY: `slot` points into `_stalls`, which `self` owns.
        let s = unsafe { &*self.slot };
        // Release: the watchdog reads the frames written before.
        s.native.store(task as *const Task as *mut Task, Ordering::Release);
    }

    /// Marks the end of the native call: after this the task may change.
    #[inline]
    pub fn leave_native(&self) {
        // SAFETY: as in `enter_native`.
        let s = unsafe { &*self.slot };
        s.native.store(std::ptr::null_mut(), Relaxed);
        // With the watchdog's `membarrier`, a full fence (module docs).
        compiler_fence(Ordering::SeqCst);
        if s.claim.load(Relaxed) {
            wait_unclaimed(s);
        }
    }
}

#[cold]
fn wait_unclaimed(s: &Slot) {
    while s.claim.load(Ordering::Acquire) {
        std::thread::yield_now();
    }
}

/// Makes every thread of the process execute a full memory barrier
/// (`membarrier(2)`, private expedited); false where that is not
/// available.
fn heavy_barrier() -> bool {
    #[cfg(target_os = "linux")]
    {
        const PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
        const REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;
        static REGISTERED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        // SAFETY: `membarrier` takes two integers and touches no memory of
        // ours.
        let ok = *REGISTERED
            .get_or_init(|| unsafe { libc::syscall(libc::SYS_membarrier, REGISTER_PRIVATE_EXPEDITED, 0) } == 0);
        // SAFETY: as above.
        ok && unsafe { libc::syscall(libc::SYS_membarrier, PRIVATE_EXPEDITED, 0) } == 0
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// The per-worker run marks and the watchdog thread.
pub struct Stalls {
    slots: Box<[CachePadded<Slot>]>,
    /// The stack of a task, as a stack trace prints it.
    stack: Box<dyn Fn(&Task) -> String + Send + Sync>,
    threshold: Duration,
    /// True while a collection holds the workers: time in it is not a
    /// stall of the task that happened to be running.
    collecting: Box<dyn Fn() -> bool + Send + Sync>,
    stop: Mutex<bool>,
    wake: Condvar,
}

impl Stalls {
    /// Starts the watchdog for `workers` workers; `report` prints a line.
    /// `collecting` tells whether a collection is stopping the world;
    /// `stack` formats a task's stack.
    pub fn start(
        workers: usize,
        threshold: Duration,
        collecting: Box<dyn Fn() -> bool + Send + Sync>,
        stack: Box<dyn Fn(&Task) -> String + Send + Sync>,
        report: Arc<dyn Fn(String) + Send + Sync>,
    ) -> Arc<Stalls> {
        let s = Arc::new(Stalls {
            slots: (0..workers).map(|_| CachePadded::new(Slot::default())).collect(),
            stack,
            threshold,
            collecting,
            stop: Mutex::new(false),
            wake: Condvar::new(),
        });
        let dog = s.clone();
        let _ = std::thread::Builder::new().name("raya-watchdog".into()).spawn(move || dog.watch(&*report));
        s
    }

    /// The probe worker `worker` marks its native calls with.
    pub fn probe(self: &Arc<Self>, worker: usize) -> Probe {
        Probe { _stalls: self.clone(), slot: &*self.slots[worker] as *const Slot }
    }

    /// The stack of the task inside a native call on `slot`, read under
    /// the handshake of the module docs; None if there is none or the
    /// handshake is not available.
    fn native_stack(&self, slot: &Slot) -> Option<String> {
        if slot.native.load(Relaxed).is_null() {
            return None;
        }
        slot.claim.store(true, Relaxed);
        let stack = if heavy_barrier() {
            let task = slot.native.load(Ordering::Acquire);
            // SAFETY: non-null after the barrier, so the worker is inside
            // the native call and will not leave it (nor change the task,
            // which the call borrows) until `claim` is cleared below.
            (!task.is_null()).then(|| (self.stack)(unsafe { &*task }))
        } else {
            None
        };
        slot.claim.store(false, Ordering::Release);
        stack
    }

    /// A run of `task` begins on `worker`.
    #[inline]
    pub fn enter(&self, worker: usize, task: u32) {
        let s = &self.slots[worker];
        s.task.store(task, Relaxed);
        s.epoch.store(s.epoch.load(Relaxed) + 1, Relaxed);
    }

    /// The run ends; true if it was reported as a stall.
    #[inline]
    pub fn leave(&self, worker: usize) -> bool {
        let s = &self.slots[worker];
        s.epoch.store(s.epoch.load(Relaxed) + 1, Relaxed);
        s.reported.load(Relaxed) && s.reported.swap(false, Relaxed)
    }

    /// Ends the watchdog thread.
    pub fn stop(&self) {
        *self.stop.lock() = true;
        self.wake.notify_all();
    }

    fn watch(&self, report: &dyn Fn(String)) {
        let period = (self.threshold / 4).clamp(Duration::from_millis(1), Duration::from_millis(250));
        // Per worker: the epoch last seen and when it was first seen.
        let mut seen: Vec<(u64, Instant, bool)> = vec![(0, Instant::now(), false); self.slots.len()];
        let mut stop = self.stop.lock();
        while !*stop {
            self.wake.wait_for(&mut stop, period);
            let now = Instant::now();
            let collecting = (self.collecting)();
            for (w, slot) in self.slots.iter().enumerate() {
                let epoch = slot.epoch.load(Relaxed);
                let (last, since, done) = &mut seen[w];
                if epoch != *last || collecting {
                    // A new run, or a collection holding every run: count
                    // from now.
                    *last = epoch;
                    *since = now;
                    *done = false;
                    continue;
                }
                if epoch % 2 == 1 && !*done && now - *since >= self.threshold {
                    *done = true;
                    slot.reported.store(true, Relaxed);
                    let task = slot.task.load(Relaxed);
                    let at = match self.native_stack(slot) {
                        Some(stack) => format!(", inside a native call at:{stack}"),
                        None => String::new(),
                    };
                    let so_far = now - *since;
                    let so_far = if so_far < Duration::from_secs(1) {
                        format!("{} ms", so_far.as_millis())
                    } else {
                        format!("{:.1} s", so_far.as_secs_f64())
                    };
                    report(format!(
                        "raya: stall: worker {w} has been running task {task} for {so_far} without reaching a safepoint \
                         (a long native call or a blocking host function; RAYA_STALL_MS sets the threshold, 0 turns this off){at}\n"
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run longer than the threshold is reported once, with its worker
    /// and task; short runs, and time between runs (a blocked task), are
    /// not.
    #[test]
    fn long_runs_are_reported_once_and_short_ones_never() {
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let l = lines.clone();
        let gc = Arc::new(AtomicBool::new(false));
        let g = gc.clone();
        let s = Stalls::start(
            2,
            Duration::from_millis(40),
            Box::new(move || g.load(Relaxed)),
            Box::new(|t: &Task| format!("\n    at task {}", t.id)),
            Arc::new(move |t| l.lock().push(t)),
        );
        // A run held by a long collection is no stall.
        gc.store(true, Relaxed);
        s.enter(0, 3);
        std::thread::sleep(Duration::from_millis(150));
        gc.store(false, Relaxed);
        assert!(!s.leave(0));
        for _ in 0..20 {
            s.enter(0, 5);
            std::thread::sleep(Duration::from_millis(2));
            assert!(!s.leave(0));
        }
        // Between runs (idle or blocked) for long: no report.
        std::thread::sleep(Duration::from_millis(120));
        assert!(lines.lock().is_empty(), "{:?}", lines.lock());
        s.enter(1, 7);
        std::thread::sleep(Duration::from_millis(200));
        assert!(s.leave(1), "the worker learns its run was reported");
        s.stop();
        let got = lines.lock().clone();
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].starts_with("raya: stall: worker 1 has been running task 7 for "), "{got:?}");
    }

    /// A run stalled inside a native call is reported with the stack of
    /// its task, read while the worker is held inside the call; a run
    /// stalled outside one (which a real run cannot be) gets no stack.
    #[test]
    fn a_stall_inside_a_native_call_carries_the_stack() {
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let l = lines.clone();
        let s = Stalls::start(
            1,
            Duration::from_millis(30),
            Box::new(|| false),
            Box::new(|t: &Task| format!("\n    at the frames of task {}", t.id)),
            Arc::new(move |t| l.lock().push(t)),
        );
        let probe = s.probe(0);
        let task = Task::new(9);
        s.enter(0, 9);
        probe.enter_native(&task);
        std::thread::sleep(Duration::from_millis(400));
        probe.leave_native();
        assert!(s.leave(0));
        s.enter(0, 10);
        std::thread::sleep(Duration::from_millis(400));
        assert!(s.leave(0));
        s.stop();
        let got = lines.lock().clone();
        assert_eq!(got.len(), 2, "{got:?}");
        if cfg!(target_os = "linux") {
            assert!(got[0].ends_with(", inside a native call at:\n    at the frames of task 9\n"), "{got:?}");
        }
        assert!(got[1].contains("running task 10 for ") && !got[1].contains("native call at"), "{got:?}");
    }
}
