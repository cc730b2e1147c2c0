//! The task scheduler: N worker threads running jobs, work stealing, a
//! timer thread. Generic over the unit of work `T` (the VM plugs in its
//! `Task`; tests use plain values), so it knows nothing about the VM.
//! `design/scheduler.md` is the long version of this comment.
//!
//! # Shape
//!
//! * [`Scheduler<T>`] is a cheap handle (an `Arc`). [`Scheduler::new`]
//!   starts `workers` worker threads; one timer thread starts with the
//!   first timer.
//! * A [`Runner<T>`] runs one job at a time on a worker: `run(cx, job)`.
//!   When it returns, the job has left the scheduler unless the runner put
//!   it (or others) back: [`WorkerCx::push_next`] (direct handoff),
//!   [`WorkerCx::push_local`], [`WorkerCx::preempted`],
//!   [`WorkerCx::hand_off`] (direct handoff the runner runs itself),
//!   [`Scheduler::spawn`], [`Scheduler::wake`], [`Scheduler::sleep_until`].
//!   A job that waits on something (a channel, a mutex, another task) is
//!   simply not requeued: whoever wakes it later calls [`Scheduler::wake`]
//!   from any thread.
//! * Each worker has a crossbeam FIFO deque (others steal from it) and a
//!   one-job **next slot** (not stealable). A global crossbeam `Injector`
//!   takes jobs from non-worker threads (host threads, the timer thread).
//! * Worker loop priority: every 61st tick one job from the injector
//!   first; the next slot (its job inherits the rest of the time slice);
//!   the local queue; a batch
//!   from the injector; then *searching*: the injector again and stealing
//!   half the queue of other workers starting at a random victim, with a
//!   bounded spin (crossbeam `Backoff`); then park.
//!
//! # Invariants
//!
//! 1. **No lost wake-up** (`idle.rs`, `Worker::park`, `Idle::notify_one`).
//!    A worker that goes to sleep first publishes "I am about to sleep"
//!    (joins the sleeper list, leaves the searching count), then runs a
//!    SeqCst fence, then re-checks the injector and every worker queue, and
//!    only then parks. Every producer, after pushing a job to a stealable
//!    queue, runs a SeqCst fence and then, if no worker is searching and
//!    some worker sleeps, unparks exactly one sleeper (no thundering herd).
//!    The fences order the two sides: either the sleeper's re-check sees
//!    the job or the producer sees the sleeper. A searcher that finds work
//!    and was the last searcher wakes one sleeper (Go's spinning rule), so
//!    skipping the wake-up while someone searches leaves no core idle for
//!    long. Parkers remember an unpark that comes before the park. One
//!    push skips the wake-up: a preempted job requeued by its worker when
//!    that worker has nothing else queued (`WorkerCx::preempted`), since
//!    the worker itself, awake, takes it next.
//! 2. **A job is in exactly one place** — the injector, one local queue,
//!    one next slot, the timer map, a runner's hands, or outside the
//!    scheduler (suspended: the VM holds it) — and is delivered exactly
//!    once. Jobs are moved by value (`T` is owned, never cloned): crossbeam
//!    deques hand each job to exactly one consumer, the next slot is a
//!    `Cell<Option<T>>` used by one thread, and a timer entry is removed
//!    from the map under its lock by exactly one of fire or cancel.
//! 3. **Fairness.** A job from the next slot inherits the rest of the
//!    time slice ([`TIME_SLICE`]) and spends at least one unit of it; once
//!    the slice is spent, the next-slot job goes to the back of the local
//!    queue. A displaced next-slot job also goes to the back. Every 61st
//!    tick ([`INJECTOR_CHECK_INTERVAL`]) the injector is served before the
//!    local queue. Idle workers steal. (Preemption of long-running jobs is
//!    the runner's part: the VM's budget returns `Preempted`, and the runner
//!    calls [`WorkerCx::preempted`].)
//! 4. **Timers** (`timer.rs`). An ordered map under a mutex plus a condvar:
//!    the timer thread sleeps until the earliest deadline, is woken only by
//!    a new earliest timer or shutdown, never busy-waits, never fires early;
//!    cancel and fire both remove the entry under the lock, so exactly one
//!    wins, and a cancelled timer leaves nothing behind.
//! 5. **Quiescence is race-free.** One counter, `active`, counts the jobs
//!    that are queued anywhere, running, or sleeping on a timer. It is
//!    incremented *before* a job is made visible and decremented only
//!    *after* the runner returned (so after any job the runner queued was
//!    counted) or when a cancel hands a timer's job back. A timer firing
//!    moves its job to the injector without touching the count. Therefore
//!    `active == 0` means: nothing queued, nothing running, no timer — and
//!    it cannot be observed transiently while work remains.
//!    [`Scheduler::wait_quiescent`] waits for it on a condvar signalled by
//!    whoever brings it to zero. Jobs suspended outside the scheduler are
//!    not counted, so the VM reads quiescence as "finished or deadlocked".
//!    A *hold* ([`Scheduler::hold`]) counts in `active` like a job without
//!    being one: a wake source outside the scheduler (the socket poller)
//!    takes one for each task it will wake later, so the program is
//!    neither finished nor deadlocked while that task waits, and releases
//!    it ([`Scheduler::release_hold`]) only *after* the woken task's job
//!    was queued (or when the wait is cancelled): the count never touches
//!    zero in between. Cheaper than a timer that never fires (one atomic
//!    add, no timer map).
//!
//! # Threads and shutdown
//!
//! [`Scheduler::shutdown`] stops the workers (each finishes the job it is
//! running) and the timer thread and joins them; jobs still queued or
//! sleeping are dropped. Without `shutdown` the threads stay parked until
//! the process exits. A runner that panics is caught and counted
//! ([`StatsSnapshot::panics`]); the worker goes on.

mod blocking;
mod idle;
pub mod seeded;
mod stats;
mod timer;
mod worker;

#[cfg(test)]
mod tests;

pub use blocking::{BlockingJob, BlockingPool, SubmitError, DEFAULT_BLOCKING_KEEP_ALIVE, DEFAULT_MAX_BLOCKING_THREADS};
pub use seeded::now;
pub use stats::StatsSnapshot;
pub use timer::TimerKey;
pub use worker::{WorkerCx, INJECTOR_CHECK_INTERVAL, TIME_SLICE};

use crossbeam::deque::{Injector, Stealer, Worker};
use idle::Idle;
use parking_lot::{Condvar, Mutex};
use stats::{add_shared, bump, Stats};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use timer::Timers;

/// Runs one job on a worker thread. Implemented for closures
/// `Fn(&WorkerCx<T>, T)`.
pub trait Runner<T: Send + 'static>: Send + Sync + 'static {
    /// Runs `job`. When this returns the job has left the scheduler unless
    /// it was requeued (through `cx` or the scheduler).
    fn run(&self, cx: &WorkerCx<T>, job: T);
}

impl<T: Send + 'static, F> Runner<T> for F
where
    F: Fn(&WorkerCx<T>, T) + Send + Sync + 'static,
{
    fn run(&self, cx: &WorkerCx<T>, job: T) {
        self(cx, job)
    }
}

/// A readiness poller that idle workers poll instead of a thread of its
/// own (Go's netpoller; `crate::io::PollCore` is the one the VM uses).
/// The scheduler lets one worker at a time into `wait` and `dispatch` (its
/// poll token): a worker whose queues run dry polls without blocking; the
/// last to go to sleep blocks in `wait` instead of on its parker, and is
/// `interrupt`ed when a producer wakes it. The tasks `dispatch` wakes are
/// woken from that worker (with [`Scheduler::wake`], so into its own next
/// slot and queue) and run there, with no hand-over to another thread.
/// See `idle.rs` for the sleeping protocol with this third way to sleep.
pub trait NetPoll: Send + Sync + 'static {
    /// Waits for readiness events for at most `timeout` (`None`: until one
    /// comes or [`NetPoll::interrupt`] is called), and keeps them for
    /// `dispatch`. Wakes nobody.
    fn wait(&self, timeout: Option<Duration>);
    /// Wakes the waiters of what the last `wait` found; how many tasks it
    /// woke.
    fn dispatch(&self) -> usize;
    /// Makes a `wait` under way, or the next one, return at once. Any
    /// thread.
    fn interrupt(&self);
}

/// The worker count to use when none is given: `RAYA_WORKERS` if it is a
/// positive integer, else the number of cores.
pub fn default_workers() -> usize {
    std::env::var("RAYA_WORKERS")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// State shared by the handles, the workers and the timer thread.
pub(crate) struct Inner<T: Send + 'static> {
    injector: Injector<T>,
    stealers: Box<[Stealer<T>]>,
    idle: Idle,
    runner: Box<dyn Runner<T>>,
    /// Outstanding jobs: queued anywhere, running, or sleeping on a timer.
    /// See invariant 5.
    active: AtomicUsize,
    quiet_lock: Mutex<()>,
    quiet_cv: Condvar,
    timers: Timers<T>,
    shutdown: AtomicBool,
    stats: Stats,
    threads: Mutex<Vec<JoinHandle<()>>>,
    /// The timer thread was started (on the first timer).
    timer_started: AtomicBool,
    /// Seeded scheduling (`seeded.rs`): one worker, every choice drawn
    /// from a generator seeded with this, virtual time, no timer thread.
    seed: Option<u64>,
}

impl<T: Send + 'static> Inner<T> {
    /// A job enters (before it is made visible anywhere).
    fn job_entered(&self) {
        let n = self.active.fetch_add(1, Ordering::AcqRel) + 1;
        if n > self.stats.peak_live.load(Ordering::Relaxed) {
            self.stats.peak_live.fetch_max(n, Ordering::Relaxed);
        }
    }

    /// A job leaves (after its runner returned, or a cancel took it back).
    fn job_left(&self) {
        if self.active.fetch_sub(1, Ordering::AcqRel) == 1 {
            // Signal under the lock: a waiter checks `active` under the same
            // lock before waiting, so it cannot miss this.
            let _g = self.quiet_lock.lock();
            self.quiet_cv.notify_all();
        }
    }

    fn push_injector(&self, job: T) {
        self.injector.push(job);
        // Invariant (no lost wake-up): fence + wake one sleeper if needed.
        self.idle.notify_one();
    }

    /// Whether any stealable queue holds a job (used by the final re-check
    /// before parking).
    fn has_visible_work(&self) -> bool {
        !self.injector.is_empty() || self.stealers.iter().any(|s| !s.is_empty())
    }
}

/// See [`Scheduler::downgrade`].
pub struct WeakScheduler<T: Send + 'static> {
    inner: std::sync::Weak<Inner<T>>,
}

impl<T: Send + 'static> Clone for WeakScheduler<T> {
    fn clone(&self) -> Self {
        WeakScheduler { inner: self.inner.clone() }
    }
}

impl<T: Send + 'static> WeakScheduler<T> {
    /// The scheduler, unless it was dropped.
    pub fn upgrade(&self) -> Option<Scheduler<T>> {
        self.inner.upgrade().map(|inner| Scheduler { inner })
    }
}

/// The scheduler handle. Cloning is cheap; all clones drive the same
/// workers. See the module documentation.
pub struct Scheduler<T: Send + 'static> {
    inner: Arc<Inner<T>>,
}

impl<T: Send + 'static> Clone for Scheduler<T> {
    fn clone(&self) -> Self {
        Scheduler { inner: self.inner.clone() }
    }
}

impl<T: Send + 'static> Scheduler<T> {
    /// Starts `workers` worker threads (at least 1); the timer thread
    /// starts with the first timer.
    pub fn new(workers: usize, runner: impl Runner<T>) -> Self {
        Self::start(workers, None, runner)
    }

    /// Starts one worker that makes every scheduling choice from a
    /// generator seeded with `seed`, on virtual time (see `seeded.rs`):
    /// the same jobs in the same order give the same schedule.
    pub fn new_seeded(seed: u64, runner: impl Runner<T>) -> Self {
        Self::start(1, Some(seed), runner)
    }

    /// Whether this scheduler is seeded ([`Scheduler::new_seeded`]).
    pub fn is_seeded(&self) -> bool {
        self.inner.seed.is_some()
    }

    fn start(workers: usize, seed: Option<u64>, runner: impl Runner<T>) -> Self {
        let workers = workers.max(1);
        let locals: Vec<Worker<T>> = (0..workers).map(|_| Worker::new_fifo()).collect();
        let inner = Arc::new(Inner {
            injector: Injector::new(),
            stealers: locals.iter().map(|w| w.stealer()).collect(),
            idle: Idle::new(workers),
            runner: Box::new(runner),
            active: AtomicUsize::new(0),
            quiet_lock: Mutex::new(()),
            quiet_cv: Condvar::new(),
            timers: Timers::new(),
            shutdown: AtomicBool::new(false),
            stats: Stats::new(workers),
            threads: Mutex::new(Vec::with_capacity(workers + 1)),
            timer_started: AtomicBool::new(false),
            seed,
        });
        let mut handles = Vec::with_capacity(workers + 1);
        for (index, local) in locals.into_iter().enumerate() {
            let sched = Scheduler { inner: inner.clone() };
            let h = std::thread::Builder::new()
                .name(format!("raya-worker-{index}"))
                .spawn(move || worker::worker_main(sched, index, local))
                .expect("cannot start a scheduler worker thread");
            handles.push(h);
        }
        // The timer thread starts with the first timer (`sleep_until`): a
        // program that never sleeps (most short ones, most embedded calls)
        // does not pay for a thread.
        *inner.threads.lock() = handles;
        Scheduler { inner }
    }

    /// Starts the timer thread if it is not running yet. Invariant: once
    /// a timer is in the map, a timer thread runs or shutdown has begun.
    /// The check is under `threads`, the lock `shutdown` takes to collect
    /// the handles after setting its flag: a thread started here before
    /// that is joined by it; after it, none is started (a timer can no
    /// longer fire anyway).
    fn ensure_timer_thread(&self) {
        let inner = &self.inner;
        if inner.seed.is_some() || inner.timer_started.load(Ordering::Acquire) {
            // (A seeded worker fires timers itself, on virtual time.)
            return;
        }
        let mut threads = inner.threads.lock();
        if inner.timer_started.load(Ordering::Acquire) || inner.shutdown.load(Ordering::SeqCst) {
            return;
        }
        let timer_inner = inner.clone();
        let h = std::thread::Builder::new()
            .name("raya-timer".into())
            .spawn(move || timer::timer_main(timer_inner))
            .expect("cannot start the scheduler timer thread");
        threads.push(h);
        inner.timer_started.store(true, Ordering::Release);
    }

    /// Number of worker threads.
    pub fn workers(&self) -> usize {
        self.inner.stealers.len()
    }

    /// The index of the worker of this scheduler running on the calling
    /// thread, if any.
    pub fn current_worker(&self) -> Option<usize> {
        worker::with_current(&self.inner, |cx| cx.worker_index())
    }

    /// Queues a new job. From a worker thread of this scheduler it goes to
    /// the back of that worker's local queue; from any other thread, to the
    /// injector.
    pub fn spawn(&self, job: T) {
        let inner = &*self.inner;
        inner.job_entered();
        let mut job = Some(job);
        worker::with_current(&self.inner, |cx| {
            bump(&cx.counters().spawned);
            cx.put_local(job.take().expect("job"));
        });
        if let Some(job) = job {
            add_shared(&inner.stats.shared.spawned, 1);
            inner.push_injector(job);
        }
    }

    /// Makes a suspended job runnable again. Called on a worker thread of
    /// this scheduler (a running job woke it: the receiver of a send, the
    /// waiter of a finished task), the job goes to that worker's next slot
    /// and runs right after the current job (direct handoff); from any
    /// other thread, to the injector.
    pub fn wake(&self, job: T) {
        let inner = &*self.inner;
        inner.job_entered();
        let mut job = Some(job);
        worker::with_current(&self.inner, |cx| {
            bump(&cx.counters().woken);
            cx.put_next(job.take().expect("job"));
        });
        if let Some(job) = job {
            add_shared(&inner.stats.shared.woken, 1);
            inner.push_injector(job);
        }
    }

    /// Puts `job` to sleep until `deadline`; then the timer thread pushes it
    /// to the injector. The job counts as outstanding while it sleeps.
    pub fn sleep_until(&self, deadline: Instant, job: T) -> TimerKey {
        let inner = &*self.inner;
        // Counted before it is in the map (invariant 5).
        inner.job_entered();
        if worker::with_current(&self.inner, |cx| bump(&cx.counters().timers_set)).is_none() {
            add_shared(&inner.stats.shared.timers_set, 1);
        }
        let key = inner.timers.insert(deadline, job);
        self.ensure_timer_thread();
        key
    }

    /// `sleep_until(now + duration, job)` (virtual time on a seeded
    /// worker, see [`now`]).
    pub fn sleep_for(&self, duration: Duration, job: T) -> TimerKey {
        self.sleep_until(now() + duration, job)
    }

    /// Cancels a pending timer and returns its job, or `None` if it already
    /// fired (or was cancelled). Exactly one of fire and cancel gets the job.
    pub fn cancel_timer(&self, key: TimerKey) -> Option<T> {
        let inner = &*self.inner;
        let job = inner.timers.cancel(key)?;
        add_shared(&inner.stats.shared.timers_cancelled, 1);
        // The job leaves the scheduler (handed back to the caller).
        inner.job_left();
        Some(job)
    }

    /// Gives the workers a socket poller to poll when idle ([`NetPoll`]).
    /// The first one given stays for the scheduler's life.
    pub fn set_net_poll(&self, net: Arc<dyn NetPoll>) {
        self.inner.idle.set_net(net);
    }

    /// Keeps the scheduler from being quiescent until the matching
    /// [`Scheduler::release_hold`] (invariant 5).
    pub fn hold(&self) {
        self.inner.job_entered();
    }

    /// Ends one [`Scheduler::hold`]. Whoever releases a hold for a task it
    /// wakes must queue that task first.
    pub fn release_hold(&self) {
        self.inner.job_left();
    }

    /// A handle that does not keep the scheduler's threads and runner
    /// alive (for wake sources owned by what the runner owns).
    pub fn downgrade(&self) -> WeakScheduler<T> {
        WeakScheduler { inner: Arc::downgrade(&self.inner) }
    }

    /// Timers set and neither fired nor cancelled.
    pub fn pending_timers(&self) -> usize {
        self.inner.timers.pending()
    }

    /// Jobs queued or running (not counting sleeping ones). Approximate
    /// while jobs move; use [`Scheduler::is_quiescent`] for decisions.
    pub fn live_jobs(&self) -> usize {
        let active = self.inner.active.load(Ordering::Acquire);
        active.saturating_sub(self.pending_timers())
    }

    /// Jobs queued, running or sleeping on a timer (the exact count that
    /// quiescence waits on).
    pub fn outstanding(&self) -> usize {
        self.inner.active.load(Ordering::Acquire)
    }

    /// No job queued or running and no timer pending, right now.
    pub fn is_quiescent(&self) -> bool {
        self.outstanding() == 0
    }

    /// Blocks until no job is queued or running and no timer is pending.
    /// Jobs suspended outside the scheduler do not count: for the VM this
    /// means the program is finished or deadlocked. Returns at once after
    /// `shutdown`. Must not be called from a job of this scheduler (that
    /// job is itself outstanding, so it would wait forever).
    pub fn wait_quiescent(&self) {
        let inner = &*self.inner;
        debug_assert!(self.current_worker().is_none(), "wait_quiescent called from a worker");
        let mut g = inner.quiet_lock.lock();
        while inner.active.load(Ordering::Acquire) != 0 && !inner.shutdown.load(Ordering::Acquire) {
            inner.quiet_cv.wait(&mut g);
        }
    }

    /// [`Scheduler::wait_quiescent`] with a time limit; returns whether the
    /// scheduler was quiescent.
    pub fn wait_quiescent_timeout(&self, timeout: Duration) -> bool {
        let inner = &*self.inner;
        let deadline = Instant::now() + timeout;
        let mut g = inner.quiet_lock.lock();
        while inner.active.load(Ordering::Acquire) != 0 && !inner.shutdown.load(Ordering::Acquire) {
            if inner.quiet_cv.wait_until(&mut g, deadline).timed_out() {
                return inner.active.load(Ordering::Acquire) == 0;
            }
        }
        inner.active.load(Ordering::Acquire) == 0
    }

    /// A copy of every counter.
    pub fn stats(&self) -> StatsSnapshot {
        self.inner.stats.snapshot(self.outstanding(), self.pending_timers())
    }

    /// Stops the workers (each finishes its current job) and the timer
    /// thread, and joins them; queued and sleeping jobs are dropped. Other
    /// clones of this handle stay valid but nothing runs any more. Called
    /// from a worker (inside a runner) it does not join that worker.
    pub fn shutdown(self) {
        let inner = &*self.inner;
        inner.shutdown.store(true, Ordering::SeqCst);
        inner.timers.shutdown();
        inner.idle.unpark_all();
        {
            let _g = inner.quiet_lock.lock();
            inner.quiet_cv.notify_all();
        }
        let handles = std::mem::take(&mut *inner.threads.lock());
        let me = std::thread::current().id();
        for h in handles {
            if h.thread().id() == me {
                continue;
            }
            if let Err(e) = h.join() {
                std::panic::resume_unwind(e);
            }
        }
    }
}
