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
//! once per run with the worker, the task and the time so far. The stalled
//! worker's task state cannot be read from another thread while it runs,
//! so the worker itself adds the task's stack when the run finally
//! reaches a safepoint and ends.

use crossbeam::utils::CachePadded;
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
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
}

/// The per-worker run marks and the watchdog thread.
pub struct Stalls {
    slots: Box<[CachePadded<Slot>]>,
    threshold: Duration,
    /// True while a collection holds the workers: time in it is not a
    /// stall of the task that happened to be running.
    collecting: Box<dyn Fn() -> bool + Send + Sync>,
    stop: Mutex<bool>,
    wake: Condvar,
}

impl Stalls {
    /// Starts the watchdog for `workers` workers; `report` prints a line.
    /// `collecting` tells whether a collection is stopping the world.
    pub fn start(
        workers: usize,
        threshold: Duration,
        collecting: Box<dyn Fn() -> bool + Send + Sync>,
        report: Arc<dyn Fn(String) + Send + Sync>,
    ) -> Arc<Stalls> {
        let s = Arc::new(Stalls {
            slots: (0..workers).map(|_| CachePadded::new(Slot::default())).collect(),
            threshold,
            collecting,
            stop: Mutex::new(false),
            wake: Condvar::new(),
        });
        let dog = s.clone();
        let _ = std::thread::Builder::new().name("raya-watchdog".into()).spawn(move || dog.watch(&*report));
        s
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
                    report(format!(
                        "raya: stall: worker {w} has been running task {task} for {:.1} s without reaching a safepoint \
                         (a long native call or a blocking host function; RAYA_STALL_MS sets the threshold, 0 turns this off)\n",
                        (now - *since).as_secs_f64()
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
}
