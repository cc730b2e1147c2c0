//! A worker thread: its loop, its local queue and next slot, and the
//! context ([`WorkerCx`]) handed to the runner.

use super::seeded::{self, Seeded};
use super::stats::{add_shared, bump, Counters};
use super::{Inner, Scheduler};
use crossbeam::deque::{Steal, Worker};
use crossbeam::utils::Backoff;
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::atomic::{fence, Ordering};
use std::sync::Arc;

/// A time slice, in the units the runner counts (the VM counts
/// safepoints: calls and loop back-edges). A job taken from anywhere but
/// the next slot starts a fresh slice; a job taken from the next slot
/// inherits what is left of it (Go's `inheritTime`), so jobs that keep
/// handing off to each other share one slice, and once it is spent the
/// next-slot job goes to the back of the local queue (fairness: such a
/// pair cannot starve the rest of the queue).
pub const TIME_SLICE: u32 = 10_000;

/// Every this many ticks (jobs run) a worker takes one job from the
/// injector before looking at its own next slot and queue (fairness: a
/// worker whose local queue never empties still serves the injector).
pub const INJECTOR_CHECK_INTERVAL: u32 = 61;

/// Most jobs taken by one steal from another worker (crossbeam takes half
/// of the victim's queue, up to this limit).
const STEAL_LIMIT: usize = 128;

/// Most jobs moved from the injector to the local queue in one go.
const INJECTOR_BATCH: usize = 32;

thread_local! {
    /// The context of the worker running on this thread, if any (type-erased
    /// because thread-locals cannot be generic; downcast and matched
    /// against the scheduler by pointer).
    static CURRENT: RefCell<Option<Rc<dyn Any>>> = const { RefCell::new(None) };
}

/// Calls `f` with this thread's worker context if this thread is a worker
/// of the scheduler `inner`.
pub(super) fn with_current<T: Send + 'static, R>(
    inner: &Arc<Inner<T>>,
    f: impl FnOnce(&WorkerCx<T>) -> R,
) -> Option<R> {
    CURRENT
        .try_with(|c| {
            let b = c.borrow();
            let cx = b.as_deref()?.downcast_ref::<WorkerCx<T>>()?;
            if !Arc::ptr_eq(&cx.sched.inner, inner) {
                return None;
            }
            Some(f(cx))
        })
        .ok()
        .flatten()
}

/// What the runner gets while it runs a job on a worker. It lives on the
/// worker thread and cannot leave it (it is neither `Send` nor `Sync`).
pub struct WorkerCx<T: Send + 'static> {
    index: usize,
    sched: Scheduler<T>,
    /// FIFO; other workers steal from its front.
    local: Worker<T>,
    /// The next slot: run before the local queue. Private to this worker
    /// (not stealable).
    next: Cell<Option<T>>,
    /// What is left of the current time slice ([`TIME_SLICE`]).
    slice: Cell<u32>,
    rng: Cell<u64>,
    /// Seeded scheduling (`seeded.rs`): the pool of runnable jobs that
    /// replaces the next slot and the local queue, and the generator.
    seeded: Option<Seeded<T>>,
}

impl<T: Send + 'static> WorkerCx<T> {
    /// This worker's index, `0..workers`.
    pub fn worker_index(&self) -> usize {
        self.index
    }

    /// The scheduler this worker belongs to.
    pub fn scheduler(&self) -> &Scheduler<T> {
        &self.sched
    }

    /// A seeded run (`seeded.rs`): its generator picks every job that
    /// runs, so a runner should not change which jobs there are.
    pub fn is_seeded(&self) -> bool {
        self.seeded.is_some()
    }

    /// Direct handoff: `job` runs next on this worker, right after the
    /// current job returns, in what is left of its time slice (see
    /// [`TIME_SLICE`]). A job already in the next slot is moved to the back
    /// of the local queue.
    pub fn push_next(&self, job: T) {
        self.inner().job_entered();
        self.put_next(job);
    }

    /// Direct handoff that the runner carries out itself: while the time
    /// slice lasts, spends one unit of it and gives `job` back, to be run
    /// at once in the same `run` call (no trip through the worker loop);
    /// the job never enters a queue. Once the slice is spent, queues the
    /// job at the back of the local queue and returns `None`. Counted like
    /// a job taken from the next slot.
    pub fn hand_off(&self, job: T) -> Option<T> {
        if self.seeded.is_some() {
            // Seeded: the generator picks what runs next, among all jobs.
            self.push_local(job);
            return None;
        }
        let left = self.slice.get();
        let c = self.counters();
        if left == 0 {
            bump(&c.next_slot_overflows);
            self.push_local(job);
            return None;
        }
        self.slice.set(left - 1);
        bump(&c.handoffs);
        bump(&c.context_switches);
        Some(job)
    }

    /// Puts `job` at the back of this worker's local queue.
    pub fn push_local(&self, job: T) {
        self.inner().job_entered();
        self.put_local(job);
    }

    /// What is left of the time slice the current job runs in: a fresh
    /// [`TIME_SLICE`], or what the jobs before it left if it came from the
    /// next slot. The runner spends it and reports the rest with
    /// [`WorkerCx::set_slice_left`].
    pub fn slice_left(&self) -> u32 {
        self.slice.get()
    }

    /// Records what the current job left of its time slice.
    pub fn set_slice_left(&self, left: u32) {
        self.slice.set(left);
    }

    /// Requeues a job whose time slice ran out (back of the local queue),
    /// counted as a preemption.
    pub fn preempted(&self, job: T) {
        bump(&self.counters().preemptions);
        if let Some(s) = &self.seeded {
            s.preempted();
        }
        // A preempted job that is this worker's only work runs again at
        // once: waking a sleeper for it would only have the sleeper steal
        // it (moving it to a cold core) or find nothing. No wake-up is lost
        // by skipping it: this worker is awake and takes from its own queue
        // next, and a job pushed by anyone else is followed by its own
        // `notify_one`.
        let next = self.next.take();
        let alone = next.is_none() && self.local.is_empty() && self.seeded.is_none();
        self.next.set(next);
        if alone {
            self.inner().job_entered();
            self.local.push(job);
        } else {
            self.push_local(job);
        }
    }

    /// On a seeded worker: whether the suspension under way should finish
    /// in a job of its own, so that other jobs can run between its two
    /// steps (`seeded.rs`). Always false on an ordinary worker.
    pub fn split_suspension(&self) -> bool {
        self.seeded.as_ref().is_some_and(|s| s.split_suspension())
    }

    /// Tells the statistics that the job just run has finished for good.
    pub fn completed(&self) {
        bump(&self.counters().completed);
    }

    fn inner(&self) -> &Inner<T> {
        &self.sched.inner
    }

    pub(super) fn counters(&self) -> &Counters {
        &self.sched.inner.stats.workers[self.index]
    }

    /// Next slot, without counting (the caller counted the job).
    pub(super) fn put_next(&self, job: T) {
        if let Some(s) = &self.seeded {
            s.pool.borrow_mut().push(job);
            return;
        }
        if let Some(old) = self.next.replace(Some(job)) {
            // The displaced job goes to the back of the queue (Go's runnext
            // rule), where it is visible to thieves.
            bump(&self.counters().next_slot_overflows);
            self.put_local(old);
        }
    }

    /// Local queue, without counting (the caller counted the job).
    pub(super) fn put_local(&self, job: T) {
        if let Some(s) = &self.seeded {
            // Only this worker runs jobs: no one to wake.
            s.pool.borrow_mut().push(job);
            return;
        }
        self.local.push(job);
        // Invariant (no lost wake-up): every push to a stealable queue is
        // followed by `notify_one` (fence, then wake one sleeper if no one
        // is searching).
        self.inner().idle.notify_one();
    }

    fn random(&self) -> usize {
        // xorshift64*
        let mut x = self.rng.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng.set(x);
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as usize
    }

    /// The worker loop. Priority: (every 61st tick: one job from the
    /// injector), next slot (while the slice lasts), local queue, a batch from
    /// the injector, then search (injector and random victims, spinning
    /// briefly), then park.
    fn main_loop(&self) {
        let inner = self.inner();
        let mut tick: u32 = 0;
        // Whether this worker is counted in `Idle::searching`.
        let mut searching = false;
        loop {
            if inner.shutdown.load(Ordering::Acquire) {
                return;
            }
            tick = tick.wrapping_add(1);
            // Invariant (fairness of sockets): a worker that never runs out
            // of work still polls the sockets every 61st tick, so a task
            // made ready by the network waits at most that long while
            // other workers sleep away from the poller.
            if tick.is_multiple_of(INJECTOR_CHECK_INTERVAL) {
                inner.idle.poll_now();
            }
            let mut job = self.find_local(tick);
            if job.is_none() && inner.idle.poll_now() {
                // Ready sockets' tasks run here, as the next job.
                job = self.find_local(tick);
            }
            if job.is_none() {
                if !searching {
                    inner.idle.begin_searching();
                    searching = true;
                }
                job = self.search();
            }
            match job {
                Some(job) => {
                    if searching {
                        searching = false;
                        inner.idle.end_searching();
                    }
                    self.run_job(job);
                }
                None => {
                    // Nothing found after spinning: sleep. On return this
                    // worker is counted as searching again (by the producer
                    // that woke it, or by itself if the re-check found
                    // work), or the scheduler is shutting down.
                    self.park();
                    searching = true;
                }
            }
        }
    }

    /// The worker loop of a seeded scheduler (see `seeded.rs`): drain the
    /// injector into the pool, run a random job for a drawn slice; with
    /// nothing runnable, jump the virtual clock to the next timers; with
    /// no timer either, park until another thread injects a job.
    fn seeded_loop(&self, s: &Seeded<T>) {
        let inner = self.inner();
        s.advance_to(s.base);
        let mut searching = false;
        loop {
            if inner.shutdown.load(Ordering::Acquire) {
                return;
            }
            while let Some(job) = steal_one(|| inner.injector.steal()) {
                s.pool.borrow_mut().push(job);
            }
            if s.pool.borrow().is_empty() {
                // Ready sockets before virtual time moves on.
                inner.idle.poll_now();
            }
            // Timers that came due while jobs ran join the runnable ones
            // (a task spinning until a timer's callback sets a flag).
            while let Some((_, due)) = inner.timers.take_earliest(s.now()) {
                add_shared(&inner.stats.shared.timer_fires, due.len() as u64);
                s.pool.borrow_mut().extend(due);
            }
            match s.pick().or_else(|| self.fire_virtual(s)) {
                Some(job) => {
                    if searching {
                        searching = false;
                        inner.idle.end_searching();
                    }
                    let given = s.slice(TIME_SLICE);
                    self.slice.set(given);
                    self.run_job(job);
                    // Running takes virtual time too, so a loop that
                    // waits for the clock (or for a timer) ends.
                    let spent = given.saturating_sub(self.slice.get());
                    s.advance_to(s.now() + seeded::SAFEPOINT_TIME * spent);
                }
                None => {
                    if !searching {
                        inner.idle.begin_searching();
                    }
                    // Returns counted as searching (see `main_loop`).
                    self.park();
                    searching = true;
                }
            }
        }
    }

    /// Virtual time: the timers due at the earliest deadline join the pool
    /// (they keep their outstanding count) and the clock moves there.
    fn fire_virtual(&self, s: &Seeded<T>) -> Option<T> {
        let inner = self.inner();
        let (at, due) = inner.timers.take_earliest(s.now() + seeded::HORIZON)?;
        add_shared(&inner.stats.shared.timer_fires, due.len() as u64);
        s.advance_to(at);
        s.pool.borrow_mut().extend(due);
        s.pick()
    }

    /// Work this worker can take without searching.
    fn find_local(&self, tick: u32) -> Option<T> {
        let inner = self.inner();
        // Invariant (fairness): every 61st tick the injector comes first,
        // so jobs from the timer and host threads are served even when
        // this worker's own queue never empties.
        if tick.is_multiple_of(INJECTOR_CHECK_INTERVAL) {
            if let Some(job) = steal_one(|| inner.injector.steal()) {
                bump(&self.counters().injector_fairness_pops);
                self.slice.set(TIME_SLICE);
                return Some(job);
            }
        }
        if let Some(job) = self.next.take() {
            // Invariant (fairness): a next-slot job inherits the rest of
            // the slice and spends at least one unit of it, so a chain of
            // handoffs is at most TIME_SLICE long; then its job goes to
            // the back of the local queue and the queue's front runs.
            let left = self.slice.get();
            if left > 0 {
                self.slice.set(left - 1);
                bump(&self.counters().handoffs);
                return Some(job);
            }
            bump(&self.counters().next_slot_overflows);
            self.put_local(job);
        }
        self.slice.set(TIME_SLICE);
        if let Some(job) = self.local.pop() {
            return Some(job);
        }
        let job = steal_one(|| inner.injector.steal_batch_with_limit_and_pop(&self.local, INJECTOR_BATCH))?;
        if !self.local.is_empty() {
            // More than one job came over: let a sleeper steal some.
            inner.idle.notify_one();
        }
        Some(job)
    }

    /// Searching: the injector, then every other worker starting at a
    /// random victim (stealing half its queue), spinning with a bounded
    /// backoff between rounds. `None` means: nothing found, go to sleep.
    fn search(&self) -> Option<T> {
        let inner = self.inner();
        let stealers = &inner.stealers;
        let n = stealers.len();
        let backoff = Backoff::new();
        loop {
            let mut retry = false;
            match inner.injector.steal_batch_with_limit_and_pop(&self.local, INJECTOR_BATCH) {
                Steal::Success(job) => return Some(job),
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
            if n > 1 {
                let start = self.random() % n;
                for k in 0..n {
                    let victim = (start + k) % n;
                    if victim == self.index {
                        continue;
                    }
                    match stealers[victim].steal_batch_with_limit_and_pop(&self.local, STEAL_LIMIT) {
                        Steal::Success(job) => {
                            let c = self.counters();
                            bump(&c.steals);
                            c.stolen_jobs.store(
                                c.stolen_jobs.load(Ordering::Relaxed) + 1 + self.local.len() as u64,
                                Ordering::Relaxed,
                            );
                            return Some(job);
                        }
                        Steal::Retry => retry = true,
                        Steal::Empty => {}
                    }
                }
            }
            if inner.shutdown.load(Ordering::Acquire) {
                return None;
            }
            // Retry means a race with another consumer, not emptiness:
            // spin and look again. Otherwise a bounded number of rounds.
            if retry {
                backoff.spin();
            } else if backoff.is_completed() {
                return None;
            } else {
                backoff.snooze();
            }
        }
    }

    /// Searching → sleeping; see the protocol in `idle.rs`.
    fn park(&self) {
        let inner = self.inner();
        // 1. Publish "I am about to sleep" (and stop counting as searching).
        inner.idle.announce_sleep(self.index);
        // 2. Invariant (no lost wake-up): this fence pairs with the fence
        //    in `Idle::notify_one` that every producer runs after pushing.
        fence(Ordering::SeqCst);
        // 3. Final re-check of every queue. (The next slot and the local
        //    queue of this worker are empty: we only get here after
        //    `find_local` and `search` found nothing.)
        //    If there is work, take ourselves back out of the sleeper list;
        //    if a producer popped us already, its unpark is pending and the
        //    park below returns at once.
        let work = inner.shutdown.load(Ordering::SeqCst) || inner.has_visible_work();
        if work && inner.idle.cancel_sleep(self.index) {
            return;
        }
        bump(&self.counters().parks);
        inner.idle.park(self.index);
        if !inner.shutdown.load(Ordering::Acquire) {
            bump(&self.counters().unparks);
        }
    }

    fn run_job(&self, job: T) {
        let inner = self.inner();
        bump(&self.counters().context_switches);
        // A panicking runner must not kill the worker (its queue would be
        // stranded and quiescence never reached): catch, count, go on.
        if catch_unwind(AssertUnwindSafe(|| inner.runner.run(self, job))).is_err() {
            bump(&self.counters().panics);
        }
        // Invariant (quiescence): the job leaves the outstanding count only
        // after the runner returned, i.e. after every job it queued was
        // counted, so the count cannot touch zero while work remains.
        inner.job_left();
    }
}

/// Retries a steal until it succeeds or finds the queue empty.
fn steal_one<T>(mut f: impl FnMut() -> Steal<T>) -> Option<T> {
    loop {
        match f() {
            Steal::Success(job) => return Some(job),
            Steal::Empty => return None,
            Steal::Retry => std::hint::spin_loop(),
        }
    }
}

/// The worker thread's body.
pub(super) fn worker_main<T: Send + 'static>(sched: Scheduler<T>, index: usize, local: Worker<T>) {
    let seed = (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let cx_seed = sched.inner.seed;
    let cx = Rc::new(WorkerCx {
        index,
        sched,
        local,
        next: Cell::new(None),
        slice: Cell::new(TIME_SLICE),
        rng: Cell::new(seed),
        seeded: cx_seed.map(Seeded::new),
    });
    CURRENT.with(|c| *c.borrow_mut() = Some(cx.clone() as Rc<dyn Any>));
    match &cx.seeded {
        Some(s) => {
            cx.seeded_loop(s);
            seeded::clear_clock();
        }
        None => cx.main_loop(),
    }
    // Drop the context outside the borrow: dropping leftover jobs may run
    // their destructors, which may call back into the scheduler.
    let old = CURRENT.with(|c| c.borrow_mut().take());
    drop(old);
    drop(cx);
}
