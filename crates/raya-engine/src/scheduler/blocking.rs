//! The blocking pool: threads for host work that blocks (file I/O, a
//! blocking host function), so that it never stalls a scheduler worker.
//!
//! It runs plain jobs, `Box<dyn FnOnce() + Send>`, and knows nothing about
//! the VM: the embedding API submits a job that calls the host function and
//! then hands the result back to a worker (`embed.rs`). Modelled on the
//! pool behind Tokio's `spawn_blocking`, with a smaller default limit.
//!
//! # Shape
//!
//! One mutex guards all the state ([`State`]): the FIFO queue of jobs not
//! yet started, and the thread counts `live`, `idle` and `notified`. One
//! condvar is what idle threads wait on. Threads are started lazily by
//! [`BlockingPool::submit`] and are detached (nobody joins them):
//!
//! * **Submit** pushes the job to the back of the queue, then, in order of
//!   preference: hands it to an idle thread (moves one from `idle` to
//!   `notified` and signals the condvar); starts a new thread if fewer
//!   than `max_threads` are alive; else leaves it queued. A queued job runs
//!   when a busy thread finishes its job, since every thread takes the
//!   next queued job before it considers going idle.
//! * **A thread** runs queued jobs from the front (each with the lock
//!   released, panics caught) until the queue is empty, then goes idle:
//!   it joins `idle` and waits on the condvar. It leaves `idle` because a
//!   submitter handed it work (it consumes one `notified`), because the
//!   pool shut down, or because it waited `keep_alive` without work; in
//!   the last case it exits.
//!
//! Jobs start in submission order; they may of course finish in any order.
//!
//! # Invariants
//!
//! Each is also written beside the code that keeps it.
//!
//! 1. **Bounded threads.** `live <= max_threads`: `live` is incremented
//!    under the lock, before a thread is started, and only while it is
//!    below the maximum. Idle threads are used before a new one is started.
//! 2. **No lost wake-up** between "a thread goes idle" and "a job is
//!    queued". Both happen under the one lock: a thread checks the queue
//!    and joins `idle` in one critical section, and the condvar wait
//!    releases that lock atomically, so a submitter either runs before
//!    (the thread then finds the job in the queue) or sees the thread in
//!    `idle` (and hands it the job). The hand-off is a count, `notified`,
//!    not only a condvar signal: a signal that finds no thread in the
//!    condvar (one whose wait just timed out is still re-taking the lock)
//!    is not lost, because every thread leaving the wait checks
//!    `notified` first, so a thread whose keep-alive expires at the same
//!    moment takes the hand-off instead of exiting. Threads in the idle
//!    wait number exactly `idle + notified`, so neither count underflows.
//! 3. **No lost job.** Under the lock, `idle > 0` implies
//!    `queue.len() <= notified`: while some thread sits idle with nothing
//!    handed to it, every queued job has a hand-off on its way to a thread.
//!    When `idle == 0`, every live thread is running a job or has been
//!    handed one, and takes from the queue before going idle. Threads exit
//!    only with the queue empty, so `live == 0` implies an empty queue; if
//!    starting the first thread fails, `submit` takes its job back out and
//!    reports the error, and a job accepted by `submit` is never dropped
//!    without running. Each job is popped from the queue by exactly one
//!    thread.
//! 4. **Panics stay in their job.** A panicking job is caught and counted
//!    ([`BlockingPool::panics`]); its thread goes on with the next job.
//!
//! # Shutdown
//!
//! [`BlockingPool::shutdown`] (also run on drop) refuses new jobs from then
//! on and never waits: jobs already queued still run, on the threads that
//! are alive, and each thread exits once the queue is empty. Idle threads
//! are woken and exit at once. A job that never returns keeps its thread
//! (and only it) forever, but does not hold up `shutdown` or other jobs.
//! Jobs never run and are never dropped while the lock is held: either may
//! run arbitrary code, even code that submits to this pool or drops its
//! last handle (which shuts it down, from a pool thread).

use parking_lot::{Condvar, Mutex, MutexGuard};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A unit of blocking work.
pub type BlockingJob = Box<dyn FnOnce() + Send + 'static>;

/// The thread limit of [`BlockingPool::default`].
pub const DEFAULT_MAX_BLOCKING_THREADS: usize = 64;

/// How long an idle thread waits for work before it exits, by default.
pub const DEFAULT_BLOCKING_KEEP_ALIVE: Duration = Duration::from_secs(10);

/// Why [`BlockingPool::submit`] did not take a job (the job is dropped
/// without running).
#[derive(Debug)]
pub enum SubmitError {
    /// The pool was shut down.
    ShutDown,
    /// No thread was alive and the operating system refused to start one.
    Spawn(std::io::Error),
}

impl std::fmt::Display for SubmitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SubmitError::ShutDown => f.write_str("the blocking pool is shut down"),
            SubmitError::Spawn(e) => write!(f, "cannot start a blocking-pool thread: {e}"),
        }
    }
}

impl std::error::Error for SubmitError {}

/// Everything behind the lock. See the module documentation.
struct State {
    /// Jobs not yet started, oldest first.
    queue: VecDeque<BlockingJob>,
    /// Threads started and not yet exited (invariant 1: `<= max_threads`).
    live: usize,
    /// Threads waiting for work that nobody has handed work to yet.
    idle: usize,
    /// Hand-offs to idle threads not yet taken (invariant 2).
    notified: usize,
    shutdown: bool,
    /// Threads ever started.
    started: u64,
}

struct Shared {
    state: Mutex<State>,
    /// Idle threads wait here.
    cv: Condvar,
    max_threads: usize,
    keep_alive: Duration,
    panics: AtomicU64,
}

/// A pool of threads for blocking jobs. See the module documentation.
///
/// Dropping it shuts it down ([`BlockingPool::shutdown`]); share it with an
/// `Arc` to submit from several places.
pub struct BlockingPool {
    shared: Arc<Shared>,
}

impl Default for BlockingPool {
    /// At most [`DEFAULT_MAX_BLOCKING_THREADS`] threads, idle ones exit
    /// after [`DEFAULT_BLOCKING_KEEP_ALIVE`].
    fn default() -> Self {
        BlockingPool::new(DEFAULT_MAX_BLOCKING_THREADS, DEFAULT_BLOCKING_KEEP_ALIVE)
    }
}

impl std::fmt::Debug for BlockingPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.shared.state.lock();
        f.debug_struct("BlockingPool")
            .field("max_threads", &self.shared.max_threads)
            .field("keep_alive", &self.shared.keep_alive)
            .field("live", &st.live)
            .field("idle", &st.idle)
            .field("queued", &st.queue.len())
            .field("shutdown", &st.shutdown)
            .finish()
    }
}

impl BlockingPool {
    /// A pool of at most `max_threads` threads (at least 1) whose idle
    /// threads exit after `keep_alive` without work. No thread is started
    /// until the first job comes.
    pub fn new(max_threads: usize, keep_alive: Duration) -> Self {
        BlockingPool {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    queue: VecDeque::new(),
                    live: 0,
                    idle: 0,
                    notified: 0,
                    shutdown: false,
                    started: 0,
                }),
                cv: Condvar::new(),
                max_threads: max_threads.max(1),
                keep_alive,
                panics: AtomicU64::new(0),
            }),
        }
    }

    /// Runs `job` on a pool thread: an idle one, else a new one if there
    /// are fewer than the maximum, else the first to become free (jobs
    /// start in submission order). Returns at once. On error the job is
    /// dropped without running.
    pub fn submit(&self, job: impl FnOnce() + Send + 'static) -> Result<(), SubmitError> {
        let job: BlockingJob = Box::new(job);
        let shared = &self.shared;
        let mut st = shared.state.lock();
        if st.shutdown {
            drop(st);
            drop(job);
            return Err(SubmitError::ShutDown);
        }
        st.queue.push_back(job);
        if st.idle > 0 {
            // Invariant 3: this job gets its own hand-off, so
            // `queue.len() <= notified` still holds while others are idle.
            st.idle -= 1;
            st.notified += 1;
            shared.cv.notify_one();
            return Ok(());
        }
        // Invariant 1: counted under the lock, only below the maximum.
        if st.live < shared.max_threads {
            st.live += 1;
            // Started while holding the lock, so a failure can be undone
            // before anyone else sees the count or the queue.
            let for_thread = shared.clone();
            let spawned =
                std::thread::Builder::new().name("raya-blocking".into()).spawn(move || thread_main(for_thread));
            match spawned {
                Ok(_detached) => st.started += 1,
                Err(e) => {
                    st.live -= 1;
                    if st.live == 0 {
                        // Invariant 3: with no thread alive the queue was
                        // empty before this push, so the job at the back is
                        // this one, and nobody would ever run it.
                        let job = st.queue.pop_back();
                        drop(st);
                        drop(job);
                        return Err(SubmitError::Spawn(e));
                    }
                    // Every live thread is busy or handed work (`idle` was
                    // 0), and takes from the queue before going idle.
                }
            }
        }
        Ok(())
    }

    /// Refuses new jobs from now on and wakes idle threads so they exit.
    /// Does not wait: queued jobs still run, and threads exit when the
    /// queue is empty. Calling it again does nothing.
    pub fn shutdown(&self) {
        let mut st = self.shared.state.lock();
        st.shutdown = true;
        // Under the lock: an idle thread checked `shutdown` in the same
        // critical section it started waiting in, so it is waiting now.
        self.shared.cv.notify_all();
    }

    /// The thread limit.
    pub fn max_threads(&self) -> usize {
        self.shared.max_threads
    }

    /// Threads alive now (running a job, idle, or about to exit).
    pub fn threads(&self) -> usize {
        self.shared.state.lock().live
    }

    /// Threads waiting for work now.
    pub fn idle_threads(&self) -> usize {
        self.shared.state.lock().idle
    }

    /// Jobs submitted and not yet started.
    pub fn queued(&self) -> usize {
        self.shared.state.lock().queue.len()
    }

    /// Threads started since the pool was made (exited ones included).
    pub fn threads_started(&self) -> u64 {
        self.shared.state.lock().started
    }

    /// Jobs that panicked.
    pub fn panics(&self) -> u64 {
        self.shared.panics.load(Ordering::Relaxed)
    }
}

impl Drop for BlockingPool {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// A pool thread's body.
fn thread_main(shared: Arc<Shared>) {
    let mut st = shared.state.lock();
    'work: loop {
        // Invariant 3: take queued jobs before going idle.
        while let Some(job) = st.queue.pop_front() {
            // The job runs and is dropped with the lock released.
            MutexGuard::unlocked(&mut st, || {
                if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)) {
                    // Invariant 4: the thread goes on. Even dropping the
                    // payload may panic; that second payload is leaked
                    // rather than let it end the thread with `live`
                    // still counting it.
                    shared.panics.fetch_add(1, Ordering::Relaxed);
                    if let Err(again) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(payload))) {
                        std::mem::forget(again);
                    }
                }
            });
        }
        if st.shutdown {
            break 'work;
        }
        // Invariant 2: the queue was seen empty and the thread becomes idle
        // in one critical section; the wait below releases the lock
        // atomically.
        st.idle += 1;
        let deadline = Instant::now() + shared.keep_alive;
        loop {
            let timed_out = shared.cv.wait_until(&mut st, deadline).timed_out();
            // A hand-off wins over the keep-alive expiring at the same time:
            // the submitter already took this thread out of `idle`.
            if st.notified > 0 {
                st.notified -= 1;
                continue 'work;
            }
            if st.shutdown {
                st.idle -= 1;
                continue 'work;
            }
            if timed_out {
                st.idle -= 1;
                // Invariant 3: this thread was idle with no hand-off left,
                // so nothing is queued.
                debug_assert!(st.queue.is_empty());
                break 'work;
            }
            // A spurious wake-up, or a signal another idle thread's
            // expiry already answered: keep waiting until the same deadline.
        }
    }
    // Invariant 3: leaves only with the queue empty.
    st.live -= 1;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::atomic::AtomicUsize;
    use std::sync::mpsc;

    /// Long enough for any of these tests on a loaded machine; reaching it
    /// is a failure, never a way to synchronise.
    const LIMIT: Duration = Duration::from_secs(20);

    /// A gate that jobs wait at until the test opens it.
    #[derive(Default)]
    struct Gate {
        open: Mutex<bool>,
        cv: Condvar,
    }

    impl Gate {
        fn wait(&self) {
            let mut open = self.open.lock();
            while !*open {
                self.cv.wait(&mut open);
            }
        }

        fn open(&self) {
            *self.open.lock() = true;
            self.cv.notify_all();
        }
    }

    /// Polls `cond` until it holds; fails the test after [`LIMIT`].
    /// Submits `n` jobs that each wait at one gate, and waits until all
    /// of them have started (so `n` threads are busy).
    fn start_gated(pool: &BlockingPool, n: usize) -> Arc<Gate> {
        let gate = Arc::new(Gate::default());
        let (started_tx, started_rx) = mpsc::channel();
        for _ in 0..n {
            let (gate, started_tx) = (gate.clone(), started_tx.clone());
            pool.submit(move || {
                started_tx.send(()).unwrap();
                gate.wait();
            })
            .unwrap();
        }
        for _ in 0..n {
            started_rx.recv_timeout(LIMIT).unwrap();
        }
        gate
    }

    fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
        let deadline = Instant::now() + LIMIT;
        while !cond() {
            assert!(Instant::now() < deadline, "timed out waiting until {what}");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    #[test]
    fn blocking_pool_runs_every_job_exactly_once() {
        const JOBS: usize = 10_000;
        let pool = BlockingPool::new(8, DEFAULT_BLOCKING_KEEP_ALIVE);
        let runs: Arc<Vec<AtomicUsize>> = Arc::new((0..JOBS).map(|_| AtomicUsize::new(0)).collect());
        let (done_tx, done_rx) = mpsc::channel();
        for i in 0..JOBS {
            let (runs, done_tx) = (runs.clone(), done_tx.clone());
            pool.submit(move || {
                runs[i].fetch_add(1, Ordering::SeqCst);
                done_tx.send(i).unwrap();
            })
            .unwrap();
        }
        let mut seen = HashSet::new();
        for _ in 0..JOBS {
            seen.insert(done_rx.recv_timeout(LIMIT).expect("a job never ran"));
        }
        assert_eq!(seen.len(), JOBS);
        assert!(runs.iter().all(|r| r.load(Ordering::SeqCst) == 1), "a job ran more than once");
        assert!(pool.threads_started() <= 8, "started {} threads", pool.threads_started());
        assert!(pool.threads() <= 8);
    }

    #[test]
    fn blocking_pool_never_runs_more_than_max_threads_at_once() {
        const MAX: usize = 4;
        const JOBS: usize = 16;
        let pool = BlockingPool::new(MAX, DEFAULT_BLOCKING_KEEP_ALIVE);
        let gate = Arc::new(Gate::default());
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let (started_tx, started_rx) = mpsc::channel();
        let (done_tx, done_rx) = mpsc::channel();
        for i in 0..JOBS {
            let (gate, running, peak) = (gate.clone(), running.clone(), peak.clone());
            let (started_tx, done_tx) = (started_tx.clone(), done_tx.clone());
            pool.submit(move || {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                started_tx.send(i).unwrap();
                gate.wait();
                running.fetch_sub(1, Ordering::SeqCst);
                done_tx.send(i).unwrap();
            })
            .unwrap();
        }
        // The first MAX jobs start and hold their threads at the gate. No
        // other thread may exist, so the rest must be queued; they start
        // in submission order.
        let mut first: Vec<usize> = (0..MAX).map(|_| started_rx.recv_timeout(LIMIT).unwrap()).collect();
        first.sort_unstable();
        assert_eq!(first, (0..MAX).collect::<Vec<_>>());
        assert_eq!(pool.threads(), MAX);
        assert_eq!(pool.queued(), JOBS - MAX);
        assert_eq!(running.load(Ordering::SeqCst), MAX);
        gate.open();
        let mut done: Vec<usize> = (0..JOBS).map(|_| done_rx.recv_timeout(LIMIT).unwrap()).collect();
        done.sort_unstable();
        assert_eq!(done, (0..JOBS).collect::<Vec<_>>());
        assert_eq!(peak.load(Ordering::SeqCst), MAX);
        assert_eq!(pool.threads_started(), MAX as u64);
    }

    #[test]
    fn blocking_pool_queued_jobs_start_in_submission_order() {
        let pool = BlockingPool::new(1, DEFAULT_BLOCKING_KEEP_ALIVE);
        let gate = start_gated(&pool, 1);
        let order = Arc::new(Mutex::new(Vec::new()));
        let (done_tx, done_rx) = mpsc::channel();
        for i in 0..100 {
            let (order, done_tx) = (order.clone(), done_tx.clone());
            pool.submit(move || {
                order.lock().push(i);
                done_tx.send(()).unwrap();
            })
            .unwrap();
        }
        assert_eq!(pool.queued(), 100);
        gate.open();
        for _ in 0..100 {
            done_rx.recv_timeout(LIMIT).unwrap();
        }
        assert_eq!(*order.lock(), (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn blocking_pool_reuses_an_idle_thread() {
        let pool = BlockingPool::new(4, DEFAULT_BLOCKING_KEEP_ALIVE);
        let (tx, rx) = mpsc::channel();
        for _ in 0..3 {
            let tx = tx.clone();
            pool.submit(move || tx.send(std::thread::current().id()).unwrap()).unwrap();
            rx.recv_timeout(LIMIT).unwrap();
            // Wait until the thread is back in `idle` (not merely done with
            // the job), so the next submit finds it there.
            eventually("the thread is idle", || pool.idle_threads() == 1);
        }
        assert_eq!(pool.threads_started(), 1);
        assert_eq!(pool.threads(), 1);
    }

    #[test]
    fn blocking_pool_thread_is_named() {
        let pool = BlockingPool::new(1, DEFAULT_BLOCKING_KEEP_ALIVE);
        let (tx, rx) = mpsc::channel();
        pool.submit(move || tx.send(std::thread::current().name().map(str::to_string)).unwrap()).unwrap();
        assert_eq!(rx.recv_timeout(LIMIT).unwrap().as_deref(), Some("raya-blocking"));
    }

    #[test]
    fn blocking_pool_survives_a_panicking_job() {
        let pool = BlockingPool::new(1, DEFAULT_BLOCKING_KEEP_ALIVE);
        let gate = Arc::new(Gate::default());
        let (id_tx, id_rx) = mpsc::channel();
        let (tx, rx) = mpsc::channel();
        // Everything queues behind the gate, so the panic happens on the
        // one thread with later jobs still waiting for it.
        let (g, before) = (gate.clone(), id_tx.clone());
        pool.submit(move || {
            before.send(std::thread::current().id()).unwrap();
            g.wait();
        })
        .unwrap();
        pool.submit(|| panic!("a job panics")).unwrap();
        for i in 0..10 {
            let tx = tx.clone();
            pool.submit(move || tx.send(i).unwrap()).unwrap();
        }
        pool.submit(move || id_tx.send(std::thread::current().id()).unwrap()).unwrap();
        gate.open();
        let got: Vec<i32> = (0..10).map(|_| rx.recv_timeout(LIMIT).unwrap()).collect();
        assert_eq!(got, (0..10).collect::<Vec<_>>());
        let before = id_rx.recv_timeout(LIMIT).unwrap();
        let after = id_rx.recv_timeout(LIMIT).unwrap();
        assert_eq!(before, after, "the panic ended the thread");
        assert_eq!(pool.panics(), 1);
    }

    #[test]
    fn blocking_pool_idle_threads_exit_after_keep_alive() {
        let pool = BlockingPool::new(4, Duration::from_millis(50));
        let gate = start_gated(&pool, 4);
        assert_eq!(pool.threads(), 4);
        gate.open();
        eventually("every idle thread exited", || pool.threads() == 0);
        assert_eq!(pool.idle_threads(), 0);
        // Threads start again on demand.
        let (tx, rx) = mpsc::channel();
        pool.submit(move || tx.send(()).unwrap()).unwrap();
        rx.recv_timeout(LIMIT).unwrap();
        assert_eq!(pool.threads_started(), 5);
    }

    #[test]
    fn blocking_pool_shutdown_does_not_hang_and_queued_jobs_still_run() {
        let pool = Arc::new(BlockingPool::new(1, DEFAULT_BLOCKING_KEEP_ALIVE));
        let gate = start_gated(&pool, 1);
        let (tx, rx) = mpsc::channel();
        for i in 0..10 {
            let tx = tx.clone();
            pool.submit(move || tx.send(i).unwrap()).unwrap();
        }
        assert_eq!(pool.queued(), 10);
        // The only thread is stuck in a job: shutdown must return anyway.
        // It runs on another thread so that a hang fails the test.
        let (shut_tx, shut_rx) = mpsc::channel();
        let p = pool.clone();
        std::thread::spawn(move || {
            p.shutdown();
            shut_tx.send(()).unwrap();
        });
        shut_rx.recv_timeout(LIMIT).expect("shutdown hung");
        assert!(matches!(pool.submit(|| {}), Err(SubmitError::ShutDown)));
        gate.open();
        let got: Vec<i32> = (0..10).map(|_| rx.recv_timeout(LIMIT).unwrap()).collect();
        assert_eq!(got, (0..10).collect::<Vec<_>>());
        eventually("the thread exited", || pool.threads() == 0);
    }

    #[test]
    fn blocking_pool_drop_wakes_idle_threads_so_they_exit() {
        // A keep-alive far beyond the test's limit: only shutdown can end
        // these threads in time.
        let pool = BlockingPool::new(3, Duration::from_secs(3600));
        let gate = start_gated(&pool, 3);
        gate.open();
        eventually("all threads are idle", || pool.idle_threads() == 3);
        let shared = pool.shared.clone();
        drop(pool);
        eventually("all threads exited", || shared.state.lock().live == 0);
        assert_eq!(shared.state.lock().idle, 0);
    }
}
