//! Scheduler statistics.
//!
//! Counters live per worker (each on its own cache line, written only by
//! that worker's thread, so a bump is a plain load + store, no locked
//! instruction) plus one shared block for events that happen off the
//! workers (spawns from host threads, the timer thread). A snapshot sums
//! them; it is approximate while the scheduler runs and exact once it is
//! quiescent.

use crossbeam::utils::CachePadded;
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

/// One block of counters.
#[derive(Default)]
pub(super) struct Counters {
    pub spawned: AtomicU64,
    pub woken: AtomicU64,
    pub completed: AtomicU64,
    pub context_switches: AtomicU64,
    pub handoffs: AtomicU64,
    pub next_slot_overflows: AtomicU64,
    pub steals: AtomicU64,
    pub stolen_jobs: AtomicU64,
    pub injector_fairness_pops: AtomicU64,
    pub preemptions: AtomicU64,
    pub parks: AtomicU64,
    pub unparks: AtomicU64,
    pub panics: AtomicU64,
    pub timers_set: AtomicU64,
    pub timer_fires: AtomicU64,
    pub timers_cancelled: AtomicU64,
    pub timer_wakeups: AtomicU64,
}

/// Increments a counter that only the current thread writes (a worker's
/// own block): no read-modify-write instruction needed.
#[inline]
pub(super) fn bump(c: &AtomicU64) {
    c.store(c.load(Relaxed) + 1, Relaxed);
}

/// Adds to a counter written by several threads (the shared block).
#[inline]
pub(super) fn add_shared(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Relaxed);
}

pub(super) struct Stats {
    pub workers: Box<[CachePadded<Counters>]>,
    pub shared: CachePadded<Counters>,
    /// Highest value the outstanding-job count ever reached.
    pub peak_live: AtomicUsize,
}

impl Stats {
    pub fn new(workers: usize) -> Stats {
        Stats {
            workers: (0..workers).map(|_| CachePadded::new(Counters::default())).collect(),
            shared: CachePadded::new(Counters::default()),
            peak_live: AtomicUsize::new(0),
        }
    }

    pub fn snapshot(&self, live: usize, pending_timers: usize) -> StatsSnapshot {
        let blocks = self.workers.iter().map(|c| &**c).chain(std::iter::once(&*self.shared));
        let mut s = StatsSnapshot {
            workers: self.workers.len(),
            peak_live: self.peak_live.load(Relaxed),
            live,
            pending_timers,
            per_worker: self
                .workers
                .iter()
                .map(|c| WorkerStats {
                    context_switches: c.context_switches.load(Relaxed),
                    steals: c.steals.load(Relaxed),
                    parks: c.parks.load(Relaxed),
                })
                .collect(),
            ..StatsSnapshot::default()
        };
        for c in blocks {
            s.spawned += c.spawned.load(Relaxed);
            s.woken += c.woken.load(Relaxed);
            s.completed += c.completed.load(Relaxed);
            s.context_switches += c.context_switches.load(Relaxed);
            s.handoffs += c.handoffs.load(Relaxed);
            s.next_slot_overflows += c.next_slot_overflows.load(Relaxed);
            s.steals += c.steals.load(Relaxed);
            s.stolen_jobs += c.stolen_jobs.load(Relaxed);
            s.injector_fairness_pops += c.injector_fairness_pops.load(Relaxed);
            s.preemptions += c.preemptions.load(Relaxed);
            s.parks += c.parks.load(Relaxed);
            s.unparks += c.unparks.load(Relaxed);
            s.panics += c.panics.load(Relaxed);
            s.timers_set += c.timers_set.load(Relaxed);
            s.timer_fires += c.timer_fires.load(Relaxed);
            s.timers_cancelled += c.timers_cancelled.load(Relaxed);
            s.timer_wakeups += c.timer_wakeups.load(Relaxed);
        }
        s
    }
}

/// A copy of every scheduler counter (see [`super::Scheduler::stats`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatsSnapshot {
    /// Number of worker threads.
    pub workers: usize,
    /// Jobs that entered through [`super::Scheduler::spawn`].
    pub spawned: u64,
    /// Jobs that re-entered through [`super::Scheduler::wake`].
    pub woken: u64,
    /// Jobs the runner reported finished ([`super::WorkerCx::completed`]).
    pub completed: u64,
    /// Runner invocations: each is one switch of a worker onto a job.
    pub context_switches: u64,
    /// Jobs run from a worker's next slot (direct handoff).
    pub handoffs: u64,
    /// Next-slot jobs sent to the back of the local queue, because the
    /// slot was used 3 times in a row or its occupant was displaced.
    pub next_slot_overflows: u64,
    /// Successful steals from another worker's queue (batches).
    pub steals: u64,
    /// Jobs taken by those steals.
    pub stolen_jobs: u64,
    /// Jobs taken from the injector by the every-61st-tick fairness check.
    pub injector_fairness_pops: u64,
    /// Jobs requeued by [`super::WorkerCx::preempted`].
    pub preemptions: u64,
    /// Times a worker went to sleep.
    pub parks: u64,
    /// Times a sleeping worker was woken for work.
    pub unparks: u64,
    /// Runner invocations that panicked (caught; the worker goes on).
    pub panics: u64,
    /// Timers set with [`super::Scheduler::sleep_until`].
    pub timers_set: u64,
    /// Timers that fired (job pushed to the injector).
    pub timer_fires: u64,
    /// Timers removed by [`super::Scheduler::cancel_timer`] before firing.
    pub timers_cancelled: u64,
    /// Times the timer thread woke up (deadline reached or earlier timer set).
    pub timer_wakeups: u64,
    /// Highest number of outstanding jobs (queued, running or sleeping on a timer).
    pub peak_live: usize,
    /// Outstanding jobs now (queued, running or sleeping on a timer).
    pub live: usize,
    /// Timers pending now.
    pub pending_timers: usize,
    /// Each worker's own counts, by worker index.
    pub per_worker: Vec<WorkerStats>,
}

/// One worker's counts (see [`StatsSnapshot`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerStats {
    /// Jobs (task runs) it ran.
    pub context_switches: u64,
    /// Successful steals from other workers' queues.
    pub steals: u64,
    /// Times it went to sleep.
    pub parks: u64,
}

impl fmt::Display for StatsSnapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "scheduler statistics ({} workers):", self.workers)?;
        let rows: [(&str, u64); 19] = [
            ("tasks spawned", self.spawned),
            ("tasks woken", self.woken),
            ("tasks completed", self.completed),
            ("context switches", self.context_switches),
            ("next-slot handoffs", self.handoffs),
            ("next-slot overflows", self.next_slot_overflows),
            ("steals", self.steals),
            ("stolen tasks", self.stolen_jobs),
            ("injector fairness pops", self.injector_fairness_pops),
            ("preemptions", self.preemptions),
            ("parks", self.parks),
            ("unparks", self.unparks),
            ("runner panics", self.panics),
            ("timers set", self.timers_set),
            ("timer fires", self.timer_fires),
            ("timers cancelled", self.timers_cancelled),
            ("timer thread wake-ups", self.timer_wakeups),
            ("peak live tasks", self.peak_live as u64),
            ("pending timers", self.pending_timers as u64),
        ];
        for (name, v) in rows {
            writeln!(f, "  {name:<24}{v}")?;
        }
        Ok(())
    }
}
