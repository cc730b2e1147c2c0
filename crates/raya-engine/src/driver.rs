//! Running a program: the main task and every task it spawns, on the
//! scheduler, until the program ends.
//!
//! # How a task runs
//!
//! Scheduler jobs are [`Job`]s naming a task. A worker running a job takes
//! the task's execution state out of its `TaskCell`, applies the pending
//! resume (what its waker delivered), runs it for one time slice, and then
//! acts on the outcome: requeue it (preempted), settle its completion and
//! wake its awaiters (completed, failed), or park it on what it waits for
//! (suspended) following the protocol of `sync` and
//! `design/concurrency.md`: the execution state is put back *before* the
//! task is registered anywhere, so no waker can see a running task.
//!
//! # Workers
//!
//! A program runs on `--workers N` scheduler workers (default: one per
//! core). Each worker has its own [`Runtime`] (allocation list, realm copy,
//! spawned/woken lists), created on its first job; everything else is in
//! the shared [`crate::vm::runtime::World`]. Around every job a worker is
//! a GC mutator (`Heap::enter`), so a collection stops it only at a
//! safepoint or between jobs.
//!
//! Objects take real locks only once a second thread may touch them:
//! [`Shared::admit_parallel`] raises the process-wide flag of
//! `vm::object` before the first job that can run beside the main task
//! (a spawned task, a host job, a timer callback) is queued. A program
//! that never spawns pays nothing for parallelism.
//!
//! # Ending
//!
//! The main thread waits until `exit()` is called or the scheduler is
//! quiescent (nothing queued, running or sleeping). Then: main finished →
//! report unhandled task errors and never-finished tasks; main blocked →
//! deadlock report.
//!
//! # Embedding
//!
//! [`run_program_hosted`] is the same run for `crate::embed`: a setup hook
//! (host globals), embedder state reachable from natives through
//! [`current_handle`], and a hook that turns the end into a result. A
//! [`Handle`] lets host threads run code on a worker's runtime (settle,
//! wake: [`Handle::on_runtime`]), and keeps the program alive while an
//! external promise or host call is pending ([`Handle::keep_alive`]: a
//! timer that never fires, so the scheduler is not quiescent).

use crate::builtins::inspect;
use crate::compiler::Program;
use crate::scheduler::{BlockingPool, Scheduler, WorkerCx};
use crate::sync::{Outcome, Registered, Resume, TaskCell, Wait, Waiter};
use crate::vm::atom::names;
use crate::vm::interp::{is_waitable, RunOutcome, TaskInterpreter};
use crate::vm::object::Body;
use crate::vm::runtime::World;
use crate::vm::task::Task;
use crate::vm::{ops, Runtime, Value};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A unit of scheduler work.
pub enum Job {
    /// Run (or resume) this task.
    Run(Arc<TaskCell>),
    /// A timer of this task's wait generation fired: claim, then run.
    Timer(Arc<TaskCell>, u64),
    /// A timer armed by a wait object (`select` timeouts, timer channels)
    /// fired: run its callback (which claims and wakes like any waker).
    /// Boxed, as is `Park`'s wait: a job is as large as its largest
    /// variant, and every runnable task is one in a queue (a million woken
    /// at once by one settlement are a million jobs), so the rare kinds
    /// should not make the common one (`Run`) three times its size.
    Fire(Box<crate::sync::Timer>),
    /// Code from a host thread (embedding) that needs a runtime.
    Host(HostJob),
    /// Seeded runs: step 2 of a suspension, split from step 1 so that
    /// other jobs run in between (see [`park`]).
    Park(Arc<TaskCell>, Box<Wait>),
    /// Tasks woken together, already claimed (each with its resume
    /// stored), in the order they were woken: more than [`WAKE_BATCH`] of
    /// them, as when a million tasks await one promise. The job runs the
    /// first, queues the next [`WAKE_BATCH`] as `Run` jobs and itself
    /// behind them with the rest, so a run queue never holds a job per
    /// woken task (a million jobs made the run queue's buffer grow by
    /// doubling to 24 MB, on top of the list they came from: the peak of a
    /// mass wake-up, design/memory.md). The list is the one the settlement
    /// built, often in the buffer of the waiter list it came from
    /// ([`wake_waiters`]).
    ///
    /// Invariant (scheduler.md, "a job is in exactly one place"): each
    /// task of the list is claimed once, by its waker, before the list is
    /// made, and leaves it exactly once, as the job's own run or a `Run`
    /// job it queues; the job queues all of these before its run returns,
    /// so the scheduler's count of live jobs never drops to zero while
    /// one of them is left.
    Wake(Box<std::collections::VecDeque<Arc<TaskCell>>>),
}

/// Woken tasks above this number are queued as one [`Job::Wake`], and a
/// `Wake` job queues this many at a time.
pub const WAKE_BATCH: usize = 64;

/// See [`LiveRun::on_exit`].
pub type ExitHook = Box<dyn FnOnce(i32) + Send>;

/// See [`Job::Host`].
pub type HostJob = Box<dyn FnOnce(&mut Runtime) + Send>;

/// Options for running a program.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub args: Vec<String>,
    /// Requested worker count (see the module docs).
    pub workers: Option<usize>,
    /// Print scheduler and GC statistics on stderr at exit.
    pub stats: bool,
    /// Where blocking work (files, child processes, blocking host
    /// functions) runs; None: a pool of the run's own, with the default
    /// limits.
    pub blocking_pool: Option<Arc<BlockingPool>>,
    /// Collector pacing, heap limit and stress mode.
    pub gc: crate::vm::heap::GcConfig,
    /// An embedder's limits on the run (`crate::limits`): the main task's
    /// guard, which the tasks it spawns share.
    pub guard: Option<Arc<Guard>>,
    /// Record a trace of the run into this file (`crate::trace`).
    pub trace: Option<std::path::PathBuf>,
    /// Seeded scheduling (`raya run --seed N`): one worker, every
    /// scheduling choice, `select`'s choice among ready cases and
    /// `Math.random` drawn from generators seeded with this, on virtual
    /// time (`scheduler/seeded.rs`). Overrides `workers`.
    pub seed: Option<u64>,
    /// Tests only: the suspending side of the cancellation handshake
    /// skips its re-check (the lost-cancellation defect), to show that a
    /// seeded run finds that defect.
    #[cfg(test)]
    pub skip_cancel_recheck: bool,
}

pub use crate::limits::LimitHit;
use crate::limits::{Guard, Stop};

struct Shared {
    world: Arc<World>,
    /// Each worker's runtime, created on its first job. Only that worker
    /// locks its entry (uncontended).
    runtimes: Box<[Mutex<Option<Runtime>>]>,
    /// More than one worker: see [`Shared::admit_parallel`].
    parallel: bool,
    main: Arc<TaskCell>,
    /// See [`RunOptions::seed`].
    seed: Option<u64>,
    /// The limit that stopped the run, if one did.
    limit_hit: Mutex<Option<LimitHit>>,
    exit_code: AtomicI32,
    exited: AtomicBool,
    /// Embedder state of a hosted run (see [`run_program_hosted`]), read by
    /// host-function natives through [`current_handle`].
    host: Option<Arc<dyn std::any::Any + Send + Sync>>,
    /// See [`RunOptions::blocking_pool`].
    pool: Arc<BlockingPool>,
    /// The socket poller (`crate::io`), started by the first socket and
    /// stopped when the run ends.
    poller: std::sync::OnceLock<std::io::Result<crate::io::Poller>>,
    /// A [`LiveRun`]: the program stays loaded after main, so main's end
    /// (even by an uncaught error) does not end it.
    live: bool,
    /// Run when `exit()` ends the program (a live run fails its pending
    /// calls).
    on_exit: Mutex<Vec<ExitHook>>,
    /// The trace being recorded, if any.
    tracer: Option<Arc<crate::trace::Tracer>>,
    /// The stall watchdog (`crate::trace::stall`), unless turned off.
    stalls: Option<Arc<crate::trace::stall::Stalls>>,
    /// `--stats`: nanoseconds each worker spent running jobs.
    busy: Option<Box<[crossbeam::utils::CachePadded<std::sync::atomic::AtomicU64>]>>,
    /// See [`RunOptions::skip_cancel_recheck`].
    #[cfg(test)]
    skip_cancel_recheck: bool,
}

impl Shared {
    /// A guard's program-wide limit was passed: the program stops as
    /// after `exit(1)`: the flag makes every worker drop its jobs and the
    /// main thread end the run.
    fn end_by_limit(&self, hit: LimitHit) {
        self.limit_hit.lock().get_or_insert(hit);
        self.exit_code.store(1, Ordering::Release);
        self.exited.store(true, Ordering::Release);
    }

    /// Called before queueing a job that may run on another worker beside
    /// the running ones: from then on objects really lock (see the module
    /// docs). Sound because the caller holds no object guard here and the
    /// queue hands the job over with release/acquire ordering.
    fn admit_parallel(&self) {
        if self.parallel {
            crate::vm::object::enable_parallel_mutators();
        }
    }
}

/// A handle on a running program, for code outside the interpreter (host
/// functions and external promises of the embedding API): run code on a
/// worker's runtime, keep the program alive.
#[derive(Clone)]
pub struct Handle {
    shared: Arc<Shared>,
    sched: Scheduler<Job>,
}

thread_local! {
    /// The program whose worker this thread is (set on a worker's first job).
    static CURRENT: std::cell::RefCell<Option<Handle>> = const { std::cell::RefCell::new(None) };
}

/// The program the calling worker thread runs, if the caller is a worker
/// (e.g. a native called by the interpreter).
pub fn current_handle() -> Option<Handle> {
    CURRENT.with(|c| c.borrow().clone())
}

/// [`current_handle`] lent to `f` instead of cloned (a host function's
/// call: no reference counting per call). Sound while `f` runs because
/// the thread's handle is replaced only where no call of this program
/// is running on it: at the start of a worker's job, and where a host
/// thread starts or ends a call of its own (which first checks that
/// there is no handle, so code under `f` never replaces it).
pub fn with_current_handle<R>(f: impl FnOnce(Option<&Handle>) -> R) -> R {
    CURRENT.with(|c| f(c.borrow().as_ref()))
}

/// Whether the calling thread runs code of a program now: a worker (of
/// any program), or a host thread inside a call it runs itself. Such a
/// thread is a GC mutator mid-instruction, so it must not run another
/// call itself ([`LiveRun::call_here`]).
#[inline]
pub fn on_program_thread() -> bool {
    CURRENT.with(|c| c.borrow().is_some())
}

impl Handle {
    /// The embedder state passed to [`run_program_hosted`].
    pub fn host_data(&self) -> Option<&Arc<dyn std::any::Any + Send + Sync>> {
        self.shared.host.as_ref()
    }

    /// The pool the program's blocking work runs on (see `std::io`).
    pub fn blocking_pool(&self) -> &BlockingPool {
        &self.shared.pool
    }

    /// Whether both handles name the same running program.
    pub fn same_program(&self, other: &Handle) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// The program's identity, equal for the handles of one program and
    /// different between programs alive at the same time.
    pub fn program_id(&self) -> usize {
        Arc::as_ptr(&self.shared) as usize
    }

    /// Runs `f` on a worker with that worker's runtime, soon; the tasks
    /// it spawns or wakes are queued there. Allocation and waking must
    /// happen on a worker, which is a GC mutator.
    pub fn on_runtime(&self, f: HostJob) {
        self.shared.admit_parallel();
        self.sched.spawn(Job::Host(f));
    }

    /// Keeps the program alive (it is not quiescent, so neither finished
    /// nor deadlocked) until [`Handle::release`] is called with the key: a
    /// pending external promise or host call. Implemented as a timer that
    /// never fires on its own.
    pub fn keep_alive(&self) -> crate::scheduler::TimerKey {
        let far = std::time::Instant::now() + Duration::from_secs(100 * 365 * 24 * 3600);
        let noop = crate::sync::Timer { at: far, cancel_on_wake: false, fire: Box::new(|_| None) };
        self.sched.sleep_until(far, Job::Fire(Box::new(noop)))
    }

    /// Keeps the program alive as [`Handle::keep_alive`] does, for a wait
    /// whose end is certain to call [`Handle::release_hold`] exactly once:
    /// one atomic count (the scheduler's hold), no timer and so no wake-up
    /// of the timer thread.
    pub fn hold(&self) {
        self.sched.hold();
    }

    /// Ends one [`Handle::hold`]. A caller that wakes a task must queue it
    /// first.
    pub fn release_hold(&self) {
        self.sched.release_hold();
    }

    /// The program's socket poller, started on first use.
    pub fn poller(&self) -> Result<&crate::io::Poller, &std::io::Error> {
        self.shared
            .poller
            .get_or_init(|| {
                let p = crate::io::Poller::start(Arc::new(PollSink(self.sched.downgrade())))?;
                // No thread of its own: idle workers poll it.
                self.sched.set_net_poll(p.core());
                Ok(p)
            })
            .as_ref()
    }

    /// Puts a task that was claimed (its resume set) at the back of the
    /// calling worker's queue: a yield that re-runs its call (socket
    /// fairness, see `std::net`).
    pub fn requeue(&self, task: Arc<TaskCell>) {
        self.sched.spawn(Job::Run(task));
    }

    /// Runs `f` on a worker at `deadline` (unless [`Handle::release`]d
    /// first with the returned key).
    pub fn at(&self, deadline: std::time::Instant, f: HostJob) -> crate::scheduler::TimerKey {
        self.shared.admit_parallel();
        self.sched.sleep_until(deadline, Job::Host(f))
    }

    /// Ends a [`Handle::keep_alive`].
    pub fn release(&self, key: crate::scheduler::TimerKey) {
        self.sched.cancel_timer(key);
    }
}

/// The poller's way into the scheduler. Weak: the scheduler owns the
/// runner, which owns the poller.
struct PollSink(crate::scheduler::WeakScheduler<Job>);

impl crate::io::WakeSink for PollSink {
    fn wake(&self, task: Arc<TaskCell>) {
        if let Some(s) = self.0.upgrade() {
            s.wake(Job::Run(task));
        }
    }

    fn hold(&self) {
        if let Some(s) = self.0.upgrade() {
            s.hold();
        }
    }

    fn release_hold(&self) {
        if let Some(s) = self.0.upgrade() {
            s.release_hold();
        }
    }
}

struct VmRunner {
    shared: Arc<Shared>,
}

/// Runs `program` with `args` as its `args`; returns the process exit code.
pub fn run_program(program: &Program, args: Vec<String>) -> i32 {
    run_program_with(program, RunOptions { args, ..Default::default() })
}

pub fn run_program_with(program: &Program, opts: RunOptions) -> i32 {
    run_inner(program, opts, None, &mut |_| {}, false, &mut |_, end| end.code)
}

/// How a hosted run ended (see [`run_program_hosted`]).
#[derive(Clone, Copy, Debug)]
pub struct RunEnd {
    /// The exit code `raya run` would return.
    pub code: i32,
    /// `exit(code)` was called.
    pub exited: bool,
    /// The main task's outcome (None: it never finished — deadlock, exit
    /// or a limit).
    pub main: Option<Outcome>,
    /// The embedder's limit that stopped the program, if one did.
    pub limit: Option<LimitHit>,
}

/// Runs `program` for an embedder: `setup` runs once the runtime exists,
/// before the main task starts (it fills host globals); `host` is reachable
/// from natives through [`current_handle`]; `end` runs with the runtime
/// locked after the program ended and its reports were written, and its
/// result is returned. The scheduler is shut down before returning.
pub fn run_program_hosted<R>(
    program: &Program,
    opts: RunOptions,
    host: Option<Arc<dyn std::any::Any + Send + Sync>>,
    setup: &mut dyn FnMut(&mut Runtime),
    end: &mut dyn FnMut(&mut Runtime, RunEnd) -> R,
) -> R {
    run_inner(program, opts, host, setup, true, end)
}

fn run_inner<R>(
    program: &Program,
    opts: RunOptions,
    host: Option<Arc<dyn std::any::Any + Send + Sync>>,
    setup: &mut dyn FnMut(&mut Runtime),
    shutdown: bool,
    end: &mut dyn FnMut(&mut Runtime, RunEnd) -> R,
) -> R {
    let (mut rt, entry) = Runtime::new(&program.entry, &program.sources, program.global_names.len(), opts.args.clone());
    crate::builtins::process::set_args(&mut rt);
    crate::std::install(&mut rt, &program.std_modules);
    rt.heap.shared().configure(opts.gc);
    // This thread's view of the limit (workers take theirs as they enter).
    rt.heap.count_growth_here();
    setup(&mut rt);
    // The main task.
    let id = crate::vm::object::next_id();
    let mut exec = Task::new(id);
    if let Err(e) = TaskInterpreter::new(&mut rt).start(&mut exec, entry, Value::UNDEFINED, &[]) {
        report_uncaught(&mut rt, e);
        rt.flush_stdout();
        return end(&mut rt, RunEnd { code: 1, exited: false, main: Some(Outcome::Error(e)), limit: None });
    }
    let main = Arc::new(TaskCell::without_exec(id));
    if let Some(g) = opts.guard.clone() {
        let _ = main.set_guard(g);
    }
    exec.cell = Some(main.clone());
    *main.exec.lock() = Some(Box::new(exec));
    let obj = rt.heap.alloc(Body::Task(main.clone()));
    main.object.store(obj.bits(), Ordering::Release);
    rt.world.live_tasks.insert(id, obj);

    let workers = match opts.seed {
        Some(_) => 1,
        None => opts.workers.unwrap_or_else(crate::scheduler::default_workers).max(1),
    };
    let shared = Arc::new(Shared {
        world: rt.world.clone(),
        runtimes: (0..workers).map(|_| Mutex::new(None)).collect(),
        parallel: workers > 1,
        main: main.clone(),
        seed: opts.seed,
        limit_hit: Mutex::new(None),
        exit_code: AtomicI32::new(0),
        exited: AtomicBool::new(false),
        host,
        pool: opts.blocking_pool.clone().unwrap_or_default(),
        poller: std::sync::OnceLock::new(),
        live: false,
        on_exit: Mutex::new(Vec::new()),
        tracer: opts.trace.clone().map(crate::trace::Tracer::new),
        stalls: crate::trace::stall::threshold_from_env().map(|t| {
            let (world, heap) = (rt.world.clone(), rt.world.heap.clone());
            let collecting = Box::new(move || heap.is_stopping());
            let w = rt.world.clone();
            crate::trace::stall::Stalls::start(
                workers,
                t,
                collecting,
                Box::new(move |task| w.stack_trace(task)),
                Arc::new(move |line: String| world.write_stderr(&line)),
            )
        }),
        busy: opts.stats.then(|| (0..workers).map(|_| Default::default()).collect()),
        #[cfg(test)]
        skip_cancel_recheck: opts.skip_cancel_recheck,
    });
    if opts.stats {
        rt.world.live_tasks.count_peak();
    }
    if shared.tracer.is_some() {
        rt.heap.shared().stats.lock().log = Some(Vec::new());
    }
    let runner = VmRunner { shared: shared.clone() };
    let sched = match opts.seed {
        Some(seed) => Scheduler::new_seeded(seed, runner),
        None => Scheduler::new(workers, runner),
    };
    sched.spawn(Job::Run(main.clone()));
    loop {
        if shared.exited.load(Ordering::Acquire) {
            break;
        }
        if sched.wait_quiescent_timeout(Duration::from_millis(20)) {
            break;
        }
        // A program's time limit also holds while every task waits.
        if let Some(Stop::End(hit)) = opts.guard.as_ref().and_then(|g| g.check(0)) {
            shared.end_by_limit(hit);
        }
    }
    if let Some(Ok(p)) = shared.poller.get() {
        p.stop();
    }
    if let Some(s) = &shared.stalls {
        s.stop();
    }
    let stats = sched.stats();
    // Workers may still be in a slice (after `exit()`): stop them all so
    // this thread has the heap to itself for the reports and `end`.
    let stopped = rt.heap.stop_world();
    rt.refresh_realm();
    let code = if shared.exited.load(Ordering::Acquire) {
        shared.exit_code.load(Ordering::Acquire)
    } else {
        finish(&mut rt, &main)
    };
    if let Some(tracer) = &shared.tracer {
        write_trace(&rt.world, &shared, tracer, Vec::new());
    }
    if opts.stats {
        // The last sweep's figures complete the totals.
        rt.heap.finish_sweep();
        let gc = rt.heap.stats();
        let cfg = rt.heap.shared().config();
        let pacing = match cfg.percent {
            Some(p) => format!("{p}%"),
            None => "off".into(),
        };
        let limit = cfg.max_heap.map_or("none".into(), crate::vm::heap::format_size);
        let rss = peak_rss().map_or("n/a".into(), |b| format!("{:.1} MiB", b as f64 / (1 << 20) as f64));
        let busy: Vec<u64> =
            shared.busy.as_ref().map(|b| b.iter().map(|n| n.load(Ordering::Relaxed)).collect()).unwrap_or_default();
        let mut rows = String::from("workers:\n  worker      run time   tasks run     steals      parks\n");
        for (i, w) in stats.per_worker.iter().enumerate() {
            let ms = busy.get(i).copied().unwrap_or(0) as f64 / 1e6;
            rows.push_str(&format!(
                "  {i:<6}{:>11.3} ms{:>12}{:>11}{:>11}\n",
                ms, w.context_switches, w.steals, w.parks
            ));
        }
        rt.write_stderr(&format!(
            "{stats}{rows}peak tasks alive: {}\ngc cycles: {}, total pause: {:.3} ms, max pause: {:.3} ms, live after the last: {:.1} MiB\n\
             gc pacing: {pacing}, heap limit: {limit}, peak RSS: {rss}\n{}",
            rt.world.live_tasks.peak(),
            gc.collections,
            gc.total_pause_ns as f64 / 1e6,
            gc.max_pause_ns as f64 / 1e6,
            gc.live_bytes as f64 / (1 << 20) as f64,
            gc_detail(&gc)
        ));
    }
    rt.flush_stdout();
    let exited = shared.exited.load(Ordering::Acquire);
    let limit = *shared.limit_hit.lock();
    if let Some(hit) = limit {
        rt.write_stderr(&format!("stopped: {hit}\n"));
    }
    let r = end(&mut rt, RunEnd { code, exited, main: main.completion.outcome(), limit });
    rt.flush_stdout();
    let released = release_unfinished(&rt.world);
    drop(stopped);
    if shutdown {
        sched.shutdown();
        // A worker stopped in the middle of a slice (the run ended from
        // another thread: a limit, `exit()` elsewhere) held its task's
        // state, and finished the slice once the world ran again: a task
        // that then suspended or was preempted put its state back in its
        // cell after the release above. The workers are joined now, so a
        // second release is the last word.
        for cell in &released {
            release_cell(cell);
        }
    }
    r
}

/// Global slots a [`LiveRun`] has beyond its program's: for the
/// top-level declarations of code evaluated in it later.
pub const LIVE_EXTRA_GLOBALS: usize = 4096;

/// On a mutator: links code compiled into a live program
/// (`compiler::compile_live`: a REPL input, an instance's `eval`) and
/// returns its function, to run as a task. Installs the built-in modules
/// it imports, keeps its constants alive for the program's life (late
/// roots), and makes `sources` the program's source map, so stack traces
/// name the code's file. Maps only grow (each compile extends the
/// previous scope's), so the longest is the newest: one raced by an
/// older map's job is not replaced by it.
pub fn link_live(rt: &mut Runtime, program: &Program, sources: &Arc<crate::syntax::diagnostic::SourceMap>) -> Value {
    {
        let mut current = rt.world.sources.write();
        if sources.len() > current.len() {
            *current = sources.clone();
        }
    }
    crate::std::install(rt, &program.std_modules);
    let mut linked = crate::vm::link::Linked::default();
    let proto = crate::vm::link::link(&program.entry, &mut rt.heap, &mut linked);
    rt.world.late_roots.lock().extend(linked.roots);
    rt.world.template_raw.write().extend(linked.template_raw);
    crate::vm::runtime::make_closure(&mut rt.heap, proto, Box::new([]))
}

/// A program kept loaded for an embedder (`embed::Instance`): its main
/// task runs as in [`run_program_hosted`], but the run does not end when
/// main does. Its globals stay alive, and host threads start more tasks
/// in it ([`LiveRun::handle`], [`Handle::on_runtime`]) until it is
/// dropped, which stops the workers.
pub struct LiveRun {
    handle: Handle,
    /// The starting thread's runtime: it owns the heap's first handle;
    /// used by nobody after the workers started.
    _rt: Mutex<Runtime>,
    /// Runtimes for host threads that run calls themselves
    /// ([`LiveRun::run_here`], [`LiveRun::call_here`]): one per thread
    /// calling at the same time, reused by later calls (a runtime is a
    /// heap handle with its own allocation list and mutator slot, and a
    /// copy of the realm).
    /// Boxed: a runtime is large, and moves in and out of the pool on
    /// every call.
    callers: Arc<CallerHome>,
    /// Caller runtimes made so far: under a trace, each is a track of its
    /// own (`host thread N`, N in order of creation).
    callers_made: std::sync::atomic::AtomicUsize,
}

/// The callers of a live program ([`LiveRun::callers`]).
///
/// A thread's synchronous calls ([`LiveRun::call_here`]) use a caller
/// *bound* to that thread: the thread finds it through its [`BOUND`]
/// list, so a call takes no lock and makes no atomic read-modify-write to
/// get one. Invariants:
/// - Every caller is owned here, in `free` or in `bound` (boxed: its
///   address is stable while it moves between them), and freed only with
///   the home, after the `LiveRun` (no call is running then: a call holds
///   its instance).
/// - A bound caller is used by its thread alone (which runs one call at a
///   time: a thread inside a call does not start another here), from its
///   first call until the thread exits, when [`BoundCallers`]'s drop moves
///   it back to `free` for other threads (if the home is still alive).
/// - A thread's [`BOUND`] entry holds a `Weak` of the home, so the home's
///   address is not reused while the entry exists: an entry is matched by
///   address, and its caller pointer is followed only when it matches the
///   running `LiveRun`'s home (alive: the call borrows it) or after the
///   `Weak` was upgraded.
#[allow(clippy::vec_box)]
struct CallerHome {
    /// Callers no thread is bound to (also those of [`LiveRun::run_here`],
    /// taken for one call and given back).
    free: Mutex<Vec<Box<Caller>>>,
    /// Callers bound to a thread each.
    bound: Mutex<Vec<Box<Caller>>>,
}

/// A thread's bound callers, one per live program it called (see
/// [`CallerHome`]); given back when the thread exits.
struct BoundCallers(Vec<(std::sync::Weak<CallerHome>, *mut Caller)>);

impl Drop for BoundCallers {
    fn drop(&mut self) {
        for (home, p) in self.0.drain(..) {
            let Some(home) = home.upgrade() else { continue };
            let mut bound = home.bound.lock();
            if let Some(i) = bound.iter().position(|c| std::ptr::eq(&**c, p)) {
                let c = bound.swap_remove(i);
                drop(bound);
                home.free.lock().push(c);
            }
        }
    }
}

thread_local! {
    /// See [`CallerHome`].
    static BOUND: std::cell::RefCell<BoundCallers> = const { std::cell::RefCell::new(BoundCallers(Vec::new())) };
}

/// A host thread's means to run calls of a live program: its runtime, and
/// the execution state of the calls that finish without becoming tasks
/// ([`LiveRun::call_here`]), kept from one call to the next with the
/// capacity of its registers and frames.
struct Caller {
    rt: Runtime,
    /// Idle between calls: no frames, and registers nobody reads (a call
    /// starts by clearing them) and the collector does not see. Its cell
    /// is the call's; a call that becomes a task takes the whole state
    /// with it and leaves a new one here.
    exec: Box<Task>,
    /// Task ids for plain calls, reserved from the process-wide counter a
    /// block at a time (an id per call, without an atomic update per call).
    ids: std::ops::Range<u32>,
    /// The program's handle, moved into the thread's [`CURRENT`] for a
    /// call and back after it (no reference counting per call).
    handle: Option<Handle>,
}

impl Caller {
    fn new(world: &Arc<World>, handle: &Handle) -> Box<Caller> {
        Box::new(Caller {
            rt: Runtime::for_worker(world),
            exec: Box::new(Task::new(0)),
            ids: 0..0,
            handle: Some(handle.clone()),
        })
    }

    /// A task id of its own for the next call (unique in the process, as
    /// `next_id`'s are).
    #[inline]
    fn next_id(&mut self) -> u32 {
        const BLOCK: u32 = 64;
        if let Some(id) = self.ids.next() {
            return id;
        }
        let first = crate::vm::object::NEXT_ID.fetch_add(BLOCK, Ordering::Relaxed);
        // At the counter's wrap the block is cut short (the rest of it is
        // reused only after 2^32 more ids, as every id is).
        self.ids = first.wrapping_add(1)..first.saturating_add(BLOCK);
        first
    }
}

/// [`Arc::get_mut`] of a reused call's cell, without its atomic
/// read-modify-write (a compare-exchange on the weak count, which would be
/// a large part of a short call's time): the cell is ours alone when no
/// other strong reference and no weak one exists. Sound because neither
/// can appear meanwhile: a new reference is made only from an existing
/// one, and this thread holds the only one. The acquire fence orders this
/// thread's use after the release decrement of whoever dropped the last
/// other reference (as `Arc::get_mut`'s acquire does).
fn unique_cell(c: &mut Arc<TaskCell>) -> Option<&mut TaskCell> {
    if Arc::strong_count(c) != 1 || Arc::weak_count(c) != 0 {
        return None;
    }
    std::sync::atomic::fence(Ordering::Acquire);
    // SAFETY: unique, as said above; the pointer comes from the `Arc`'s own
    // (writable) allocation, as in `Arc::get_mut`, and `c` stays borrowed
    // mutably for as long as the result lives.
    Some(unsafe { &mut *(Arc::as_ptr(c) as *mut TaskCell) })
}

/// Makes a thread's [`current_handle`] a caller's program for a call
/// ([`LiveRun::call_here`]) by moving the caller's handle in, and moves it
/// back out when dropped (also if the call unwinds).
struct CurrentSwap<'a>(&'a mut Option<Handle>);

impl<'a> CurrentSwap<'a> {
    #[inline]
    fn new(h: &'a mut Option<Handle>) -> CurrentSwap<'a> {
        CURRENT.with(|c| std::mem::swap(&mut *c.borrow_mut(), h));
        CurrentSwap(h)
    }
}

impl Drop for CurrentSwap<'_> {
    #[inline]
    fn drop(&mut self) {
        CURRENT.with(|c| std::mem::swap(&mut *c.borrow_mut(), self.0));
    }
}

/// How a call of [`LiveRun::call_here`] ended.
pub enum HereEnd<T> {
    /// It ran to its end on the calling thread: what `done` made of it.
    Done(T),
    /// It suspended (or ran past one time slice) and became a task, given
    /// to `promote` first: its end reaches the caller through the hook
    /// `promote` installed.
    Promoted,
}

impl LiveRun {
    /// Runs `program`'s main task on the workers and returns at once;
    /// `setup` runs first, as for [`run_program_hosted`], and `on_main`
    /// gets main's outcome, on a worker (or here, if main cannot start).
    pub fn start(
        program: &Program,
        opts: RunOptions,
        host: Option<Arc<dyn std::any::Any + Send + Sync>>,
        setup: &mut dyn FnMut(&mut Runtime),
        on_main: crate::sync::OnDone,
    ) -> LiveRun {
        let (mut rt, entry) = Runtime::new(
            &program.entry,
            &program.sources,
            program.global_names.len() + LIVE_EXTRA_GLOBALS,
            opts.args.clone(),
        );
        crate::builtins::process::set_args(&mut rt);
        crate::std::install(&mut rt, &program.std_modules);
        rt.heap.shared().configure(opts.gc);
        rt.heap.count_growth_here();
        setup(&mut rt);
        let id = crate::vm::object::next_id();
        let mut exec = Task::new(id);
        let started = TaskInterpreter::new(&mut rt).start(&mut exec, entry, Value::UNDEFINED, &[]);
        let main = Arc::new(TaskCell::without_exec(id));
        let workers = opts.workers.unwrap_or_else(crate::scheduler::default_workers).max(1);
        let shared = Arc::new(Shared {
            world: rt.world.clone(),
            runtimes: (0..workers).map(|_| Mutex::new(None)).collect(),
            parallel: workers > 1,
            main: main.clone(),
            exit_code: AtomicI32::new(0),
            exited: AtomicBool::new(false),
            host,
            pool: opts.blocking_pool.clone().unwrap_or_default(),
            poller: std::sync::OnceLock::new(),
            live: true,
            on_exit: Mutex::new(Vec::new()),
            // Written when the program is unloaded (the `LiveRun` dropped).
            tracer: opts.trace.clone().map(crate::trace::Tracer::new),
            // Stall warnings and `--stats` are for runs of `raya run` and
            // `Vm::execute`.
            stalls: None,
            busy: None,
            // An instance's calls have limits of their own (their guards).
            seed: None,
            limit_hit: Mutex::new(None),
            #[cfg(test)]
            skip_cancel_recheck: false,
        });
        if shared.tracer.is_some() {
            rt.heap.shared().stats.lock().log = Some(Vec::new());
        }
        let sched = Scheduler::new(workers, VmRunner { shared: shared.clone() });
        match started {
            Err(e) => on_main(&mut rt, Outcome::Error(e)),
            Ok(()) => {
                exec.cell = Some(main.clone());
                *main.exec.lock() = Some(Box::new(exec));
                main.set_on_done(on_main);
                let obj = rt.heap.alloc(Body::Task(main.clone()));
                main.object.store(obj.bits(), Ordering::Release);
                rt.world.live_tasks.insert(id, obj);
                sched.spawn(Job::Run(main));
            }
        }
        LiveRun {
            handle: Handle { shared, sched },
            _rt: Mutex::new(rt),
            callers: Arc::new(CallerHome { free: Mutex::new(Vec::new()), bound: Mutex::new(Vec::new()) }),
            callers_made: Default::default(),
        }
    }

    /// A free caller for one call (of [`LiveRun::run_here`]), or a new one.
    fn take_caller(&self) -> Box<Caller> {
        self.callers.free.lock().pop().unwrap_or_else(|| self.new_caller())
    }

    /// Gives a caller taken with [`LiveRun::take_caller`] back.
    fn give_back(&self, caller: Box<Caller>) {
        self.callers.free.lock().push(caller);
    }

    /// The calling thread's bound caller (see [`CallerHome`]), bound now
    /// if it has none.
    #[inline]
    fn bound_caller(&self) -> *mut Caller {
        let home = Arc::as_ptr(&self.callers);
        let hit = BOUND.with(|b| b.borrow().0.iter().find(|(h, _)| std::ptr::eq(h.as_ptr(), home)).map(|&(_, p)| p));
        hit.unwrap_or_else(|| self.bind_caller())
    }

    #[cold]
    fn bind_caller(&self) -> *mut Caller {
        let mut caller = self.take_caller();
        let p: *mut Caller = &mut *caller;
        self.callers.bound.lock().push(caller);
        BOUND.with(|b| {
            let mut b = b.borrow_mut();
            // Programs unloaded since: their callers went with them.
            b.0.retain(|(h, _)| h.strong_count() > 0);
            b.0.push((Arc::downgrade(&self.callers), p));
        });
        p
    }

    /// The handle host threads reach the program through.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// `exit()` was called: the program runs nothing more.
    #[inline]
    pub fn exited(&self) -> Option<i32> {
        self.handle.shared.exited.load(Ordering::Acquire).then(|| self.handle.shared.exit_code.load(Ordering::Acquire))
    }

    /// A runtime for one more host thread calling in; under a trace it
    /// records on a track of its own.
    fn new_caller(&self) -> Box<Caller> {
        let shared = &self.handle.shared;
        let mut caller = Caller::new(&shared.world, &self.handle);
        if let Some(t) = &shared.tracer {
            let n = self.callers_made.fetch_add(1, Ordering::Relaxed);
            caller.rt.trace = Some(Box::new(crate::trace::Recorder::new(t.clone(), shared.runtimes.len() + n)));
        }
        caller
    }

    /// Runs a task on the calling thread, which is not a worker: an
    /// embedder's synchronous call, without the round trip through a
    /// worker's queue. `start` spawns the task (with
    /// `TaskInterpreter::spawn`) and returns its cell, or None if it ran
    /// nothing. The task runs here until it completes, fails or suspends;
    /// a task that suspends is left to the workers (whoever wakes it
    /// queues it), so its end reaches the caller through its `on_done`
    /// hook either way. Tasks it spawned or woke go to the workers.
    ///
    /// Gives `start` back, running nothing, when the calling thread is a
    /// worker of any program (a host function calling back into an
    /// instance): that thread is a mutator of its own program already,
    /// mid-instruction and not at a safepoint, so it must not become a
    /// second one (a collection of this program would wait for it).
    ///
    /// Invariants:
    /// - The thread is a GC mutator exactly while it holds a caller
    ///   runtime here (`Heap::enter`), with its own slot: a collection
    ///   started by a worker waits for it to reach a safepoint or leave,
    ///   and one it starts at a safepoint waits for the workers, as
    ///   between workers (the handshake of `design/memory.md`).
    /// - Objects lock for real from the first such call on, even with one
    ///   worker: the caller's task runs beside whatever the worker runs.
    /// - The task's execution state is out of its cell only while it runs
    ///   here; a waker can claim it only after `park` armed its token,
    ///   which happens after the state was put back (as on a worker).
    pub fn run_here<F: FnOnce(&mut Runtime) -> Option<Arc<TaskCell>>>(&self, start: F) -> Result<(), F> {
        if CURRENT.with(|c| c.borrow().is_some()) {
            return Err(start);
        }
        let mut caller = self.take_caller();
        if let Some(rec) = caller.rt.trace.as_mut() {
            // A new call: its first run reads the clock.
            rec.resume_at = None;
        }
        crate::vm::object::enable_parallel_mutators();
        {
            let rt = &mut caller.rt;
            let _mutator = rt.heap.enter(rt.slot.as_ref().expect("caller runtimes have a slot"));
            rt.refresh_realm();
            // Host functions find their program through `current_handle`.
            let _current = CurrentGuard::set(self.handle.clone());
            let started = start(rt);
            trace_host_spawns(rt);
            if let Some(cell) = started {
                rt.spawned.retain(|c| !Arc::ptr_eq(c, &cell));
                let cx = Cx::Caller { sched: &self.handle.sched, again: std::cell::RefCell::new(None) };
                self.drive_here(rt, &cx, cell, true);
            }
            self.queue_left(rt);
        }
        self.give_back(caller);
        Ok(())
    }

    /// Runs the task of a call on the caller's thread (see
    /// [`LiveRun::run_here`]) from its first instruction, until it is
    /// waiting or done; a first run (`run_first`) or the run that just
    /// ended (it was promoted) in `cx` decides what comes next.
    fn drive_here(&self, rt: &mut Runtime, cx: &Cx<'_>, cell: Arc<TaskCell>, run_first: bool) {
        let shared = &self.handle.shared;
        let mut next = if run_first { Some(cell) } else { self.after_run_here(rt, cx, &cell) };
        while let Some(cell) = next.take() {
            run_task(shared, rt, cx, cell.clone());
            next = self.after_run_here(rt, cx, &cell);
        }
    }

    /// After a run of the call's task `cell` on the caller's thread:
    /// queues what it spawned and woke on the workers, and returns the
    /// task if it is to go on here (preempted, yielded, or woken at once).
    fn after_run_here(&self, rt: &mut Runtime, cx: &Cx<'_>, cell: &Arc<TaskCell>) -> Option<Arc<TaskCell>> {
        let mut next = cx_take_again(cx);
        for t in rt.woken.drain(..) {
            if next.is_none() && Arc::ptr_eq(&t, cell) {
                next = Some(t);
            } else {
                sched_wake(&self.handle.sched, Job::Run(t));
            }
        }
        for t in rt.spawned.drain(..) {
            crate::vm::object::enable_parallel_mutators();
            self.handle.sched.spawn(Job::Run(t));
        }
        forget_mass_wake(rt);
        if self.handle.shared.exited.load(Ordering::Acquire) {
            return None;
        }
        next
    }

    /// Hands what a call spawned and woke, and did not run itself, to the
    /// workers.
    #[inline]
    fn queue_left(&self, rt: &mut Runtime) {
        if !rt.spawned.is_empty() {
            for t in rt.spawned.drain(..) {
                self.handle.sched.spawn(Job::Run(t));
            }
        }
        if !rt.woken.is_empty() {
            for t in rt.woken.drain(..) {
                sched_wake(&self.handle.sched, Job::Run(t));
            }
            forget_mass_wake(rt);
        }
    }

    /// An embedder's synchronous call of a script function on the calling
    /// thread, as a call rather than a task: `start` converts the
    /// arguments, appending them to the vector it is given (the callee's
    /// registers, after its result slot and `this`), and returns the
    /// function (or the call's result at once, e.g. when the export is not
    /// a function), which then runs in the thread's reusable execution
    /// state (registers, frames, cell: no `Task` object, no entry in the
    /// live-task table, no completion hook). A call that returns or
    /// throws within one time slice ends here, and `done` makes the
    /// result of its outcome (`Err(code)`: it called `exit()`).
    ///
    /// Only a call that suspends (await, sleep, channel, mutex), or runs
    /// past its time slice, becomes a real task: it gets its `Task`
    /// object and live-task entry, `promote` installs its completion
    /// hook, and it goes on as [`LiveRun::run_here`]'s tasks do (parked,
    /// and run by whoever wakes it; preempted, and run on here). So a call
    /// is observably a task: `Task.current()` inside it makes its object
    /// on demand; limits (`guard`, shared by what it spawns) are charged
    /// where it stops, as `run_task` charges them; what it spawns or wakes
    /// goes to the workers.
    ///
    /// The calling thread must not be a worker of any program, nor inside
    /// a call (see [`LiveRun::run_here`]; [`on_program_thread`] says).
    ///
    /// Invariants (besides `run_here`'s):
    /// - The reusable state is used by one call at a time: it is taken
    ///   bound to the calling thread (see `CallerHome`).
    /// - Its cell is reused only when nothing else holds it (`Arc::get_mut`):
    ///   a call that made its `Task` object, or was promoted, leaves a new
    ///   one. Each call has a task id of its own (mutex ownership and
    ///   reports name tasks by id).
    /// - The mutator period's guard borrows the caller's heap handle and
    ///   slot (`Heap::enter_borrowed`): both live in the caller, which only
    ///   this call uses, unchanged until after the guard drops.
    ///
    /// Inlined into its one caller per result type: the result is then
    /// made where that caller keeps it, not copied out through memory
    /// (see `TaskInterpreter::run`).
    #[inline(always)]
    pub fn call_here<T>(
        &self,
        start: impl FnOnce(&mut Runtime, &mut Vec<Value>) -> Result<Value, T>,
        guard: Option<&Arc<Guard>>,
        done: impl FnOnce(&mut Runtime, Result<Outcome, i32>) -> T,
        promote: impl FnOnce(&mut Runtime, &Arc<TaskCell>),
    ) -> HereEnd<T> {
        debug_assert!(!on_program_thread(), "call_here on a thread that runs a program's code");
        // SAFETY: this thread's own caller, used by nothing else now, and
        // alive while `self` is (see `CallerHome`).
        let caller = unsafe { &mut *self.bound_caller() };
        if !crate::vm::object::parallel_mutators() {
            crate::vm::object::enable_parallel_mutators();
        }
        let end = {
            let id = caller.next_id();
            let Caller { rt, exec, handle, .. } = caller;
            // SAFETY: see the invariants above.
            let _mutator = unsafe { rt.heap.enter_borrowed(rt.slot.as_ref().expect("caller runtimes have a slot")) };
            rt.refresh_realm();
            let _current = CurrentSwap::new(handle);
            let end = self.call_in(rt, exec, id, start, guard, done, promote);
            if !rt.spawned.is_empty() || !rt.woken.is_empty() {
                self.queue_left(rt);
            }
            end
        };
        end
    }

    /// [`LiveRun::call_here`] on the caller's runtime, a mutator, as call
    /// `id`. Inlined, as `call_here` is.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn call_in<T>(
        &self,
        rt: &mut Runtime,
        exec: &mut Box<Task>,
        id: u32,
        start: impl FnOnce(&mut Runtime, &mut Vec<Value>) -> Result<Value, T>,
        guard: Option<&Arc<Guard>>,
        done: impl FnOnce(&mut Runtime, Result<Outcome, i32>) -> T,
        promote: impl FnOnce(&mut Runtime, &Arc<TaskCell>),
    ) -> HereEnd<T> {
        let shared = &self.handle.shared;
        // The registers are idle (see `Caller::exec`): the result slot and
        // `this`, then the arguments `start` converts straight into them.
        exec.regs.clear();
        exec.regs.extend_from_slice(&[Value::UNDEFINED, Value::UNDEFINED]);
        let f = match crate::vm::heap::counted(&mut exec.regs, |regs| start(rt, regs)) {
            Ok(f) => f,
            Err(t) => return HereEnd::Done(t),
        };
        let argc = exec.regs.len() - 2;
        let is_closure =
            matches!(f.as_obj().map(|o| &o.body), Some(Body::Function(crate::vm::object::Function::Closure(_))));
        if !is_closure {
            // A built-in runs in a task of its own (`TaskInterpreter::spawn`
            // wraps it so that it may suspend): the general path.
            return match TaskInterpreter::new(rt).spawn(f, Value::UNDEFINED, &exec.regs[2..2 + argc]) {
                Ok(task) => {
                    let Some(Body::Task(cell)) = task.as_obj().map(|o| &o.body) else {
                        unreachable!("spawn returns a task")
                    };
                    let cell = cell.clone();
                    rt.spawned.retain(|t| !Arc::ptr_eq(t, &cell));
                    if let Some(g) = guard {
                        let _ = cell.set_guard(g.clone());
                    }
                    promote(rt, &cell);
                    let cx = Cx::Caller { sched: &self.handle.sched, again: std::cell::RefCell::new(None) };
                    self.drive_here(rt, &cx, cell, true);
                    HereEnd::Promoted
                }
                Err(e) => HereEnd::Done(done(rt, Ok(Outcome::Error(e)))),
            };
        }

        // The callee's registers, sized here rather than grown by the
        // frame's push: the vector keeps its capacity from call to call.
        // (`push_frame`'s size: the result slot, and the larger of the
        // frame and `this` with the arguments, and one more.)
        if let Some(Body::Function(crate::vm::object::Function::Closure(c))) = f.as_obj().map(|o| &o.body) {
            let len = exec.regs.len();
            let need = 2 + (c.proto.proto.num_regs as usize).max(len - 1);
            if len < need && exec.regs.capacity() >= need {
                exec.regs.extend(std::iter::repeat_n(Value::UNDEFINED, need - len));
            }
        }
        // A fresh identity in the reused state.
        match exec.cell.as_mut().filter(|c| c.object().is_undefined()).and_then(unique_cell) {
            Some(cell) => {
                // A call that was never a task (no object, never
                // suspended: then its state went with it) can have set
                // only its guard and the cancel hooks of the host futures
                // it started; everything else in the cell is as new.
                debug_assert!(cell.take_on_done().is_none() && cell.timer_keys().is_empty());
                debug_assert!(!cell.cancel.load(Ordering::Relaxed) && cell.take_cancel_hook().is_none());
                cell.reuse(id);
            }
            None => exec.cell = Some(Arc::new(TaskCell::without_exec(id))),
        }
        exec.id = id;
        exec.frames.clear();
        exec.handlers.clear();
        exec.rare.set_await_scan(None);
        exec.preempted = false;
        {
            let cell = exec.cell.as_deref().expect("set above");
            cell.started.store(true, Ordering::Release);
            if let Some(g) = guard {
                let _ = cell.set_guard(g.clone());
            }
        }
        if let Err(e) = TaskInterpreter::new(rt).start_in_place(exec, f, argc) {
            return HereEnd::Done(done(rt, Ok(Outcome::Error(e))));
        }
        // Traces: a plain call shows as a task spawned by the host and its
        // run on this thread's track, as a call that is a task does.
        let traced_from = rt.trace.as_mut().map(|rec| {
            let ts = trace_run_start(rec);
            rec.push(crate::trace::Event::Spawn { ts, parent: 0, child: id, name: crate::trace::task_name(exec) });
            ts
        });
        let given = crate::scheduler::TIME_SLICE;
        let mut budget = given;
        let outcome = TaskInterpreter::new(rt).run(exec, &mut budget);

        // The fast path: a call that returned a plain value within its
        // slice, without a guard, a `Task` object or a mutex left held —
        // nothing to charge, settle or release.
        if let RunOutcome::Completed(v) = outcome {
            let cell = exec.cell.as_deref().expect("set above");
            if traced_from.is_none()
                && !is_waitable(v)
                && cell.guard().is_none()
                && cell.object().is_undefined()
                && exec.rare.locked_is_empty()
            {
                if !rt.flush_pending() && !shared.exited.swap(true, Ordering::AcqRel) {
                    shared.exit_code.store(0, Ordering::Release); // as in `run_task`
                }
                return HereEnd::Done(done(rt, Ok(Outcome::Value(v))));
            }
        }

        let cell = exec.cell.clone().expect("set above");
        let traced = traced_from.map(|start| (start, trace_stop(rt, &cell, exec, &outcome)));
        let stop = match check_guard(&cell, given - budget) {
            Some(Stop::End(hit)) => {
                shared.end_by_limit(hit);
                None
            }
            Some(Stop::Cancel(reason)) => Some(reason),
            None => None,
        };
        let cx = Cx::Caller { sched: &self.handle.sched, again: std::cell::RefCell::new(None) };
        let end = match outcome {
            RunOutcome::Completed(v) if !is_waitable(v) => Some(self.finish_here(rt, &cell, exec, Outcome::Value(v))),
            RunOutcome::Completed(v) if crate::vm::interp::settled(v).is_some() => {
                let o = crate::vm::interp::settled(v).unwrap_or(Outcome::Value(v));
                Some(self.finish_here(rt, &cell, exec, o))
            }
            RunOutcome::Failed(e) => {
                let o = if cell.is_cancel_requested() && (e.is_undefined() || is_cancelled_error(rt, e)) {
                    Outcome::Cancelled(e)
                } else {
                    Outcome::Error(e)
                };
                Some(self.finish_here(rt, &cell, exec, o))
            }
            RunOutcome::Exited(code) => {
                end_by_exit(shared, rt, code);
                return HereEnd::Done(done(rt, Err(code)));
            }
            RunOutcome::Preempted => {
                let exec = std::mem::replace(exec, Box::new(Task::new(0)));
                promote_here(rt, &cell, promote);
                match stop {
                    Some(reason) => stop_guarded(rt, &cx, cell.clone(), exec, &reason),
                    None => {
                        let mut exec = exec;
                        exec.preempted = true;
                        *cell.exec.lock() = Some(exec);
                        cx.preempted(Job::Run(cell.clone()));
                    }
                }
                None
            }
            RunOutcome::Completed(v) => {
                // `return someTask`: awaits it (see `run_task`).
                let mut exec = std::mem::replace(exec, Box::new(Task::new(0)));
                promote_here(rt, &cell, promote);
                let w = Wait::Settled(vec![v]);
                exec.blocked_on = w.blocked_on().into();
                exec.blocker = w.blocker();
                *cell.exec.lock() = Some(exec);
                park(shared, rt, &cx, &cell, w, false);
                None
            }
            RunOutcome::Suspended(w) => {
                if stop.is_some() && !cell.cancel_delivered.load(Ordering::Acquire) {
                    cell.cancel.store(true, Ordering::SeqCst);
                    cell.run_on_cancel();
                }
                let mut exec = std::mem::replace(exec, Box::new(Task::new(0)));
                promote_here(rt, &cell, promote);
                exec.blocked_on = w.blocked_on().into();
                exec.blocker = w.blocker();
                *cell.exec.lock() = Some(exec);
                park(shared, rt, &cx, &cell, w, false);
                None
            }
        };
        if let Some((start, stop)) = traced {
            trace_run_end(rt, id, start, stop);
        }
        if !rt.flush_pending() && !shared.exited.swap(true, Ordering::AcqRel) {
            shared.exit_code.store(0, Ordering::Release); // as in `run_task`
        }
        match end {
            Some(r) => HereEnd::Done(done(rt, Ok(r))),
            None => {
                self.drive_here(rt, &cx, cell, false);
                HereEnd::Promoted
            }
        }
    }

    /// The end of a call that ran to its end in a caller's reusable state
    /// ([`LiveRun::call_here`]): what `complete` does for a task, for
    /// what a call has of one. Returns the outcome for the caller.
    fn finish_here(&self, rt: &mut Runtime, cell: &Arc<TaskCell>, exec: &Task, o: Outcome) -> Outcome {
        if cell.object().is_undefined() {
            // Nobody can await or name the call: only its mutexes and its
            // place in its run's task count are left to release.
            if !exec.rare.locked_is_empty() {
                crate::sync::mutex::release_all(cell.id, exec.rare.take_locked(), &mut rt.woken);
            }
            if let Some(g) = cell.guard() {
                g.task_ended();
            }
        } else {
            // `Task.current()` made its object: it ends as a task does,
            // settling what awaits it; the outcome is the caller's.
            cell.set_on_done(Box::new(|_: &mut Runtime, _: Outcome| {}));
            complete(rt, cell, exec, o);
        }
        o
    }
    /// Adds what runs when `exit()` ends the program (at once, if it has).
    pub fn on_exit(&self, f: ExitHook) {
        let mut hooks = self.handle.shared.on_exit.lock();
        // Checked under the lock the exiting worker takes the hooks with:
        // either it sees this hook, or this sees the exit.
        match self.exited() {
            Some(code) => {
                drop(hooks);
                f(code)
            }
            None => hooks.push(f),
        }
    }
}

impl Drop for LiveRun {
    fn drop(&mut self) {
        if let Some(Ok(p)) = self.handle.shared.poller.get() {
            p.stop();
        }
        self.handle.shared.exited.store(true, Ordering::Release);
        self.handle.sched.clone().shutdown();
        if let Some(tracer) = &self.handle.shared.tracer {
            // Every thread that ran the program's tasks is done with them:
            // the workers have stopped, and no call is running here (a
            // call holds the instance, so it would not be dropping).
            let (mut free, mut bound) = (self.callers.free.lock(), self.callers.bound.lock());
            let callers = free.iter_mut().chain(bound.iter_mut()).filter_map(|c| c.rt.trace.take()).map(|r| *r);
            let mut callers: Vec<_> = callers.collect();
            drop((free, bound));
            callers.sort_by_key(|r| r.worker);
            write_trace(&self.handle.shared.world, &self.handle.shared, tracer, callers);
        }
        // Queued jobs hold task cells whose `on_done` may hold host state.
        for r in self.handle.shared.runtimes.iter() {
            r.lock().take();
        }
        // The workers are joined: this release is the last word.
        release_unfinished(&self.handle.shared.world);
    }
}

/// `exit(code)` ran: the program ends with `code`, its output is flushed
/// and the embedder's exit hooks run.
fn end_by_exit(shared: &Shared, rt: &mut Runtime, code: i32) {
    shared.exit_code.store(code, Ordering::Release);
    shared.exited.store(true, Ordering::Release);
    rt.flush_stdout();
    for f in std::mem::take(&mut *shared.on_exit.lock()) {
        f(code);
    }
}

/// The end of a program: lets go of every task that never finished, so
/// that the run frees them.
///
/// A blocked task is the middle of reference cycles that nothing else
/// breaks: its execution state holds its own cell (`Task::cell`) and the
/// mutexes it holds (`Task::locked`), whose queues hold the cells of the
/// tasks waiting for them; its completion's waiter list holds the cells of
/// the tasks awaiting it, which may be awaiting it back (or itself). Each
/// cell's state is dropped here, which breaks every such cycle; the heap
/// then frees the cells with the task objects.
///
/// Called only once no task can be resumed by a job (the world stopped, or
/// the scheduler shut down): nothing can resume a task whose state is
/// gone. A worker stopped with the world may still be inside a task's
/// slice, holding its state, and finish that slice when the world runs
/// again; so the cells are returned, for the caller to release again once
/// the workers are joined (`run_inner`).
fn release_unfinished(world: &crate::vm::runtime::World) -> Vec<Arc<TaskCell>> {
    let mut cells = Vec::new();
    for t in world.live_tasks.take_all() {
        let Some(Body::Task(cell)) = t.as_obj().map(|o| &o.body) else { continue };
        release_cell(cell);
        cells.push(cell.clone());
    }
    cells
}

/// Drops a task's execution state, waiters and hooks (see
/// [`release_unfinished`]).
fn release_cell(cell: &TaskCell) {
    // Taken out of their locks before they are dropped: dropping a task's
    // state or a hook may drop another cell, whose locks are then taken.
    let exec = cell.exec.lock().take();
    let waiters = cell.completion.inner.lock().take_waiters();
    let hook = cell.take_cancel_hook();
    let on_done = cell.take_on_done();
    let on_cancel = cell.take_on_cancel();
    cell.take_timers();
    cell.resume.lock().take();
    drop((exec, waiters, hook, on_done, on_cancel));
}

/// The one place a task's limits are checked (`crate::limits`): where a
/// run of it ends, after running `safepoints` safepoints.
fn check_guard(cell: &TaskCell, safepoints: u32) -> Option<Stop> {
    cell.guard()?.check(safepoints)
}

/// A guarded task went past a limit. The first time, it is resumed with
/// a `TaskCancelledError` thrown where it stopped (so `finally` blocks
/// run and the error can be reported); if it is still running at the
/// next check (it caught the error and went on), it is ended.
fn stop_guarded(rt: &mut Runtime, cx: &Cx<'_>, cell: Arc<TaskCell>, exec: Box<Task>, reason: &str) {
    if !cell.cancel_delivered.swap(true, Ordering::AcqRel) {
        cell.cancel.store(true, Ordering::SeqCst);
        cell.run_on_cancel();
        cell.resume.lock().set(Resume::Cancel);
        *cell.exec.lock() = Some(exec);
        cx.preempted(Job::Run(cell));
        return;
    }
    let class = rt.realm.classes.task_cancelled_error;
    let e = rt.make_error(&exec, class, reason);
    complete(rt, &cell, &exec, Outcome::Cancelled(e));
    cx.completed();
}

/// Gathers every worker's trace events and the heap's pauses and writes
/// the trace file. Workers are idle or stopped; one stopped inside a job
/// (after `exit()`) still holds its runtime, and its events are left out.
/// `callers`: the recorders of the embedder's threads that ran calls of a
/// loaded program ([`LiveRun::run_here`]), tracks after the workers'.
fn write_trace(world: &World, shared: &Shared, tracer: &crate::trace::Tracer, callers: Vec<crate::trace::Recorder>) {
    let mut workers = Vec::new();
    for slot in shared.runtimes.iter() {
        let events = match slot.try_lock_for(Duration::from_millis(50)) {
            Some(mut g) => g.as_mut().and_then(|r| r.trace.take()).map(|r| r.into_recorded()).unwrap_or_default(),
            None => Default::default(),
        };
        workers.push(events);
    }
    let first_caller = workers.len();
    workers.extend(callers.into_iter().map(|r| r.into_recorded()));
    let gc = world.heap.stats.lock().log.take().unwrap_or_default();
    let site_text = |s: crate::sync::Site| world.site_text(s);
    let input =
        crate::trace::TraceInput { tracer, workers, first_caller, main: shared.main.id, gc, site_text: &site_text };
    let written = std::fs::File::create(&tracer.path)
        .and_then(|f| crate::trace::write(&input, &mut std::io::BufWriter::with_capacity(1 << 20, f)));
    if let Err(e) = written {
        let msg = format!("raya: cannot write the trace to '{}': {e}\n", tracer.path.display());
        world.write_stderr(&msg);
    }
}

/// Traces: the tasks the host started outside any task run (a loaded
/// program's calls, evals), as spawns by task 0.
fn trace_host_spawns(rt: &mut Runtime) {
    let Some(rec) = rt.trace.as_mut() else { return };
    let ts = rec.now();
    for t in &rt.spawned {
        let exec = t.exec.lock();
        let mut name = exec.as_deref().map(crate::trace::task_name).unwrap_or_default();
        if name == "<main>" {
            // A top level the host starts is an `Instance::eval`'s code:
            // named by its file (`<eval 3>`), not as the program's main.
            if let Some(f) = exec.as_deref().and_then(|e| e.frames.first()) {
                let sources = rt.world.sources.read();
                if let Some(file) = (f.proto().proto.file < sources.len()).then(|| sources.get(f.proto().proto.file)) {
                    name = file.name.clone();
                }
            }
        }
        rec.push(crate::trace::Event::Spawn { ts, parent: 0, child: t.id, name });
    }
}

/// The process's peak resident set size in bytes (`VmHWM` of
/// `/proc/self/status`); None where there is no such file.
/// The `--stats` lines on where collection time went: the pause
/// histogram and the time of the concurrent sweep.
fn gc_detail(gc: &crate::vm::heap::GcStats) -> String {
    use crate::vm::heap::PAUSE_BUCKETS_US;
    let label = |us: u64| if us < 1000 { format!("{us}us") } else { format!("{}ms", us / 1000) };
    let mut hist = String::from("gc pauses:");
    for (i, n) in gc.pause_histogram.iter().enumerate() {
        let bucket = match PAUSE_BUCKETS_US.get(i) {
            Some(&b) => format!("<{}", label(b)),
            None => format!(">={}", label(PAUSE_BUCKETS_US[i - 1])),
        };
        hist.push_str(&format!(" {bucket}: {n}{}", if i + 1 < gc.pause_histogram.len() { "," } else { "" }));
    }
    let pause_ms = gc.total_pause_ns as f64 / 1e6;
    let sweep_ms = gc.sweep_ns as f64 / 1e6;
    let assist_ms = gc.assist_ns as f64 / 1e6;
    format!(
        "{hist}\ngc time: {:.3} ms ({pause_ms:.3} ms paused, {assist_ms:.3} ms CPU marking concurrently, {sweep_ms:.3} ms CPU sweeping concurrently, {:.3} ms waiting for a sweep)\n\
         gc pause CPU: {:.3} ms in all, {:.3} ms the longest\n\
         gc marking: {:.3} ms beside the program; {} minor cycles, {} full\n",
        pause_ms + assist_ms + sweep_ms + gc.sweep_wait_ns as f64 / 1e6,
        gc.sweep_wait_ns as f64 / 1e6,
        gc.total_pause_cpu_ns as f64 / 1e6,
        gc.max_pause_cpu_ns as f64 / 1e6,
        gc.mark_ns as f64 / 1e6,
        gc.minor_collections,
        gc.collections - gc.minor_collections
    )
}

pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line["VmHWM:".len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kb * 1024)
}

/// The end of a program whose scheduler went quiet: the exit code and the
/// reports LANGUAGE.md §6 asks for.
fn finish(rt: &mut Runtime, main: &Arc<TaskCell>) -> i32 {
    let mut code = 0;
    match main.completion.outcome() {
        Some(Outcome::Value(_)) | Some(Outcome::Cancelled(_)) => {}
        Some(Outcome::Error(e)) => {
            report_uncaught(rt, e);
            code = 1;
        }
        None => {
            let mut text = String::from("DeadlockError: all tasks are blocked\n");
            text.push_str(&blocked_report(rt));
            rt.write_report(&text);
            // Often the cause: a task that failed can no longer send what
            // another waits for.
            report_unhandled(rt, main);
            return 1;
        }
    }
    if report_unhandled(rt, main) {
        code = 1;
    }
    let blocked: Vec<Value> = sorted_live(rt);
    if !blocked.is_empty() {
        let n = blocked.len();
        let mut text = format!("warning: {} task{} never finished\n", n, if n == 1 { "" } else { "s" });
        text.push_str(&blocked_report(rt));
        rt.write_report(&text);
    }
    code
}

/// `Unhandled error in task N: …` for every failed task whose error nobody
/// observed (but main, whose error is reported as uncaught), in task-id
/// order so the report does not depend on scheduling. True if there was
/// any.
fn report_unhandled(rt: &mut Runtime, main: &Arc<TaskCell>) -> bool {
    let reports = unhandled_reports(rt, Some(main));
    for r in &reports {
        rt.write_report(&format!("{r}\n"));
    }
    !reports.is_empty()
}

/// The reports of the failed tasks and rejected promises whose error
/// nobody observed so far (taken: each is reported once), but `main`'s.
pub fn unhandled_reports(rt: &mut Runtime, main: Option<&Arc<TaskCell>>) -> Vec<String> {
    let mut out = Vec::new();
    let mut failed = std::mem::take(&mut *rt.world.failed_tasks.lock());
    // Tasks by id, then rejected promises in the order they were rejected.
    failed.sort_by_key(|t| match t.as_obj().map(|o| &o.body) {
        Some(Body::Task(cell)) => cell.id,
        _ => u32::MAX,
    });
    for t in failed {
        if let Some(Body::Promise(p)) = t.as_obj().map(|o| &o.body) {
            let (observed, outcome) = {
                let g = p.completion.inner.lock();
                (g.observed, g.outcome())
            };
            if let (false, Some(Outcome::Error(e))) = (observed, outcome) {
                let text = uncaught_report(rt, e);
                out.push(format!("Unhandled promise rejection: {text}"));
            }
            continue;
        }
        let Some(Body::Task(cell)) = t.as_obj().map(|o| &o.body) else { continue };
        if main.is_some_and(|m| Arc::ptr_eq(cell, m)) {
            continue; // reported as the uncaught error
        }
        let (observed, outcome) = {
            let g = cell.completion.inner.lock();
            (g.observed, g.outcome())
        };
        if let (false, Some(Outcome::Error(e))) = (observed, outcome) {
            let text = uncaught_report(rt, e);
            out.push(format!("Unhandled error in task {}: {}", cell.id, text));
        }
    }
    out
}

fn sorted_live(rt: &Runtime) -> Vec<Value> {
    rt.world.live_tasks.sorted().into_iter().map(|(_, v)| v).collect()
}

/// One entry per unfinished task: its id, what it waits on (naming the
/// holder of a mutex, the creation site and queues of a channel, the state
/// of an awaited task), its stack; then every cycle of tasks waiting on
/// each other.
fn blocked_report(rt: &Runtime) -> String {
    let mut out = String::new();
    let mut edges: Vec<(u32, u32, String)> = Vec::new();
    for t in sorted_live(rt) {
        let Some(Body::Task(cell)) = t.as_obj().map(|o| &o.body) else { continue };
        let exec = cell.exec.lock();
        let what: std::borrow::Cow<'_, str> = match exec.as_ref() {
            Some(e) if *e.blocked_on == *crate::sync::AWAITING_ALL => match e.rare.await_scan() {
                Some(scan) => crate::sync::describe_all(scan.array).into(),
                None => (*e.blocked_on).into(),
            },
            Some(e) if *e.blocked_on == *crate::sync::AWAITING_TASK => match &e.blocker {
                crate::sync::Blocker::Task(t) => match t.upgrade() {
                    Some(t) => format!("awaiting task {}", t.id).into(),
                    None => "awaiting a task".into(),
                },
                _ => (*e.blocked_on).into(),
            },
            Some(e) => (*e.blocked_on).into(),
            None => "".into(),
        };
        out.push_str(&format!("  task {} blocked {}", cell.id, if what.is_empty() { "waiting" } else { &what }));
        if let Some(exec) = exec.as_ref() {
            let (detail, edge) = blocker_detail(rt, cell.id, &exec.blocker);
            out.push_str(&detail);
            if let Some(e) = edge {
                edges.push(e);
            }
            out.push_str(&rt.stack_trace(exec).replace("\n    at ", "\n      at "));
        }
        out.push('\n');
    }
    for cycle in wait_cycles(&edges) {
        let ids: Vec<String> = cycle.iter().map(|&i| format!("task {}", edges[i].0)).collect();
        out.push_str(&format!("  cycle: {} -> task {}\n", ids.join(" -> "), edges[cycle[0]].0));
        for &i in &cycle {
            out.push_str(&format!("    {}\n", edges[i].2));
        }
    }
    out
}

/// What a report adds after "task N blocked ...", and the edge of the
/// wait-for graph the wait makes: (waiting task, task it waits for, how).
fn blocker_detail(rt: &Runtime, me: u32, b: &crate::sync::Blocker) -> (String, Option<(u32, u32, String)>) {
    use crate::sync::Blocker;
    let site =
        |s: Option<crate::sync::Site>| s.map(|s| format!(" (created at {})", rt.site_text(s))).unwrap_or_default();
    let made = |s: Option<crate::sync::Site>| {
        s.map(|s| format!(" (Mutex created at {})", rt.site_text(s))).unwrap_or_default()
    };
    let alive = |id: u32| id != 0 && id != me && rt.world.live_tasks.contains(id);
    match b {
        Blocker::Mutex(m) => {
            let Some(m) = m.upgrade() else { return (String::new(), None) };
            let at = made(m.site);
            match m.holder() {
                Some(h) => {
                    let how = format!("task {me} waits for Mutex held by task {h}{at}");
                    let edge = alive(h).then_some((me, h, how));
                    let state = if rt.world.live_tasks.contains(h) { "" } else { ", which has ended" };
                    (format!(": waiting for Mutex held by task {h}{state}{at}"), edge)
                }
                None => (format!(": the Mutex is free{at}"), None),
            }
        }
        Blocker::Recv(c) | Blocker::Send(c) => {
            let Some(c) = c.upgrade() else { return (String::new(), None) };
            let (receivers, senders) = c.waiting();
            let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
            let text = format!(
                "{}: {} and {} waiting",
                site(c.site),
                plural(receivers, "receiver"),
                plural(senders, "sender")
            );
            let edge = if matches!(b, Blocker::Recv(_)) {
                let other = c.last_sender.load(Ordering::Relaxed);
                alive(other).then(|| {
                    (me, other, format!("task {me} receives on a channel{} last sent to by task {other}", site(c.site)))
                })
            } else {
                let other = c.last_receiver.load(Ordering::Relaxed);
                alive(other).then(|| {
                    (
                        me,
                        other,
                        format!("task {me} sends on a channel{} last received from by task {other}", site(c.site)),
                    )
                })
            };
            (text, edge)
        }
        Blocker::Task(t) => {
            let Some(t) = t.upgrade() else { return (String::new(), None) };
            if t.id == me {
                // (Its state is locked by the caller.)
                return (" (itself)".into(), None);
            }
            let state = match t.exec.lock().as_ref() {
                Some(e) if !t.is_done() && !e.blocked_on.is_empty() => "blocked".to_string(),
                _ => crate::sync::task::state_name(&t).to_string(),
            };
            let edge = alive(t.id).then(|| (me, t.id, format!("task {me} awaits task {}", t.id)));
            (format!(" ({state})"), edge)
        }
        _ => (String::new(), None),
    }
}

/// The cycles of a wait-for graph in which each task waits for at most one
/// other (`edges[i]` = (from, to, how)); each cycle as indices into
/// `edges`, starting at its lowest task id, in order of that id.
fn wait_cycles(edges: &[(u32, u32, String)]) -> Vec<Vec<usize>> {
    let out_edge: std::collections::HashMap<u32, usize> = edges.iter().enumerate().map(|(i, e)| (e.0, i)).collect();
    let mut done = std::collections::HashSet::new();
    let mut cycles = Vec::new();
    let mut starts: Vec<u32> = edges.iter().map(|e| e.0).collect();
    starts.sort_unstable();
    for start in starts {
        let mut path: Vec<u32> = Vec::new();
        let mut at = start;
        while !done.contains(&at) {
            if let Some(pos) = path.iter().position(|&p| p == at) {
                // Closed a loop: rotate it to begin at its lowest id.
                let ring = &path[pos..];
                let low = ring.iter().enumerate().min_by_key(|(_, &id)| id).map(|(i, _)| i).unwrap_or(0);
                let ids: Vec<u32> = ring[low..].iter().chain(&ring[..low]).copied().collect();
                cycles.push(ids.iter().map(|id| out_edge[id]).collect());
                break;
            }
            path.push(at);
            match out_edge.get(&at) {
                Some(&i) => at = edges[i].1,
                None => break,
            }
        }
        done.extend(path);
    }
    cycles.sort_by_key(|c: &Vec<usize>| edges[c[0]].0);
    cycles
}

impl crate::scheduler::Runner<Job> for VmRunner {
    fn run(&self, cx: &WorkerCx<Job>, job: Job) {
        if self.shared.exited.load(Ordering::Acquire) {
            return;
        }
        CURRENT.with(|c| {
            let mut c = c.borrow_mut();
            if c.as_ref().is_none_or(|h| !Arc::ptr_eq(&h.shared, &self.shared)) {
                *c = Some(Handle { shared: self.shared.clone(), sched: cx.scheduler().clone() });
            }
        });
        // `--stats`: the worker's run time, per job (not per task run:
        // handed-off runs are inside the job).
        let _busy = self.shared.busy.as_ref().map(|b| BusyTimer(&b[cx.worker_index()], std::time::Instant::now()));
        let (mut slot, _mutator) = self.runtime(cx);
        let rt = slot.as_mut().expect("runtime");
        let mut next = match job {
            Job::Run(c) => Some(c),
            Job::Timer(c, gen) => {
                if !c.token.claim(gen) {
                    return; // cancelled or otherwise woken first
                }
                if let Some(rec) = rt.trace.as_mut() {
                    let ts = rec.now();
                    rec.push(crate::trace::Event::TimerFire { ts, task: c.id });
                }
                c.resume.lock().set(Resume::Value(Value::UNDEFINED));
                Some(c)
            }
            Job::Fire(t) => {
                if let Some(rec) = rt.trace.as_mut() {
                    let ts = rec.now();
                    rec.push(crate::trace::Event::TimerFire { ts, task: 0 });
                }
                if let Some(next) = (t.fire)(&mut rt.woken) {
                    cx.scheduler().sleep_until(next.at, Job::Fire(Box::new(next)));
                }
                self.queue_woken(rt, cx)
            }
            Job::Host(f) => {
                f(rt);
                trace_host_spawns(rt);
                self.queue_woken(rt, cx)
            }
            Job::Park(c, w) => {
                register_and_recheck(&self.shared, rt, &Cx::Worker(cx), &c, *w);
                self.queue_woken(rt, cx)
            }
            Job::Wake(mut woken) => {
                let first = woken.pop_front();
                let n = woken.len().min(WAKE_BATCH);
                for t in woken.drain(..n) {
                    cx.push_local(Job::Run(t));
                }
                if !woken.is_empty() {
                    cx.push_local(Job::Wake(woken));
                }
                first
            }
        };
        if let Some(rec) = rt.trace.as_mut() {
            // A new job: its first run reads the clock (see `trace_run_start`).
            rec.resume_at = None;
        }
        while let Some(cell) = next {
            run_task(&self.shared, rt, &Cx::Worker(cx), cell);
            if self.shared.exited.load(Ordering::Acquire) {
                return;
            }
            next = self.queue_woken(rt, cx);
        }
    }
}

impl VmRunner {
    /// This worker's runtime (created on first use), as a GC mutator until
    /// the returned guard drops.
    fn runtime(
        &self,
        cx: &WorkerCx<Job>,
    ) -> (parking_lot::MutexGuard<'_, Option<Runtime>>, crate::vm::heap::MutatorGuard) {
        let mut slot = self.shared.runtimes[cx.worker_index()].lock();
        let rt = slot.get_or_insert_with(|| {
            if let Some(seed) = self.shared.seed {
                // The only worker of a seeded run: its generators too.
                crate::sync::select::reseed(seed);
                crate::builtins::math::reseed_random(seed);
            }
            let mut rt = Runtime::for_worker(&self.shared.world);
            rt.trace = self
                .shared
                .tracer
                .as_ref()
                .map(|t| Box::new(crate::trace::Recorder::new(t.clone(), cx.worker_index())));
            rt.stall = self.shared.stalls.as_ref().map(|s| s.probe(cx.worker_index()));
            rt
        });
        let mutator = rt.heap.enter(rt.slot.as_ref().expect("worker runtimes have a slot"));
        rt.refresh_realm();
        (slot, mutator)
    }

    /// Queues what a slice (or a fired timer, or a host job) spawned and
    /// woke. The first woken task is handed off to run next on this worker
    /// (returned, to be run at once in the same runtime and time slice,
    /// while the slice lasts); the others go to the local queue.
    fn queue_woken(&self, rt: &mut Runtime, cx: &WorkerCx<Job>) -> Option<Arc<TaskCell>> {
        if !rt.spawned.is_empty() {
            self.shared.admit_parallel();
            for t in rt.spawned.drain(..) {
                cx.scheduler().spawn(Job::Run(t)); // this worker's local queue, counted as spawned
            }
        }
        if rt.woken.is_empty() {
            return None;
        }
        let first = if rt.woken.len() > WAKE_BATCH + 1 && !cx.is_seeded() {
            // Many at once: one job for the rest (see `Job::Wake`). The
            // list itself moves into it (no copy), and the runtime starts
            // a new one.
            let mut woken = std::collections::VecDeque::from(std::mem::take(&mut rt.woken));
            let first = woken.pop_front()?;
            cx.push_local(Job::Wake(Box::new(woken)));
            first
        } else {
            let mut woken = rt.woken.drain(..);
            let first = woken.next()?;
            for t in woken {
                cx.push_local(Job::Run(t));
            }
            first
        };
        let Job::Run(t) = cx.hand_off(Job::Run(first))? else {
            unreachable!("hand_off gives back the job it was given")
        };
        Some(t)
    }
}

/// Where a task runs: on a worker of the scheduler, or on an embedder's
/// thread that called into a live program ([`LiveRun::run_here`]).
enum Cx<'a> {
    Worker(&'a WorkerCx<Job>),
    /// The caller's thread runs one task, its call's. What would go to
    /// this worker's queue goes to the scheduler's injector instead, but
    /// the call's own task: that is kept in `again` and run on here (a
    /// preempted or yielding call goes on at once, as the caller has
    /// nothing else to do).
    Caller {
        sched: &'a Scheduler<Job>,
        again: std::cell::RefCell<Option<Arc<TaskCell>>>,
    },
}

impl Cx<'_> {
    fn scheduler(&self) -> &Scheduler<Job> {
        match self {
            Cx::Worker(cx) => cx.scheduler(),
            Cx::Caller { sched, .. } => sched,
        }
    }

    fn worker_index(&self) -> Option<usize> {
        match self {
            Cx::Worker(cx) => Some(cx.worker_index()),
            Cx::Caller { .. } => None,
        }
    }

    fn slice_left(&self) -> u32 {
        match self {
            Cx::Worker(cx) => cx.slice_left(),
            Cx::Caller { .. } => crate::scheduler::TIME_SLICE,
        }
    }

    fn set_slice_left(&self, left: u32) {
        if let Cx::Worker(cx) = self {
            cx.set_slice_left(left);
        }
    }

    fn preempted(&self, job: Job) {
        match self {
            Cx::Worker(cx) => cx.preempted(job),
            Cx::Caller { .. } => self.push_local(job),
        }
    }

    fn completed(&self) {
        if let Cx::Worker(cx) = self {
            cx.completed();
        }
    }

    /// Queues a task to run on this thread (only ever the task that is
    /// running here, requeued).
    fn push_local(&self, job: Job) {
        match self {
            Cx::Worker(cx) => cx.push_local(job),
            Cx::Caller { again, .. } => match job {
                Job::Run(cell) => *again.borrow_mut() = Some(cell),
                other => sched_wake(self.scheduler(), other),
            },
        }
    }
}

fn cx_take_again(cx: &Cx<'_>) -> Option<Arc<TaskCell>> {
    match cx {
        Cx::Caller { again, .. } => again.borrow_mut().take(),
        Cx::Worker(_) => None,
    }
}

/// A call running in a caller's reusable state becomes a task
/// ([`LiveRun::call_here`]): it gets its `Task` object (unless
/// `Task.current()` made it) and its place in the live-task table, and
/// `promote` its completion hook, before it is parked or requeued.
fn promote_here(rt: &mut Runtime, cell: &Arc<TaskCell>, promote: impl FnOnce(&mut Runtime, &Arc<TaskCell>)) {
    if cell.object().is_undefined() {
        let obj = rt.heap.alloc(Body::Task(cell.clone()));
        cell.object.store(obj.bits(), Ordering::Release);
        rt.world.live_tasks.insert(cell.id, obj);
    }
    promote(rt, cell);
}

/// Makes a thread's [`current_handle`] a program's while it runs a call
/// of that program ([`LiveRun::run_here`]), and none again after.
struct CurrentGuard;

impl CurrentGuard {
    fn set(h: Handle) -> CurrentGuard {
        CURRENT.with(|c| *c.borrow_mut() = Some(h));
        CurrentGuard
    }
}

impl Drop for CurrentGuard {
    fn drop(&mut self) {
        CURRENT.with(|c| c.borrow_mut().take());
    }
}

/// Queues a job from a thread that is not a worker (to the injector).
fn sched_wake(sched: &Scheduler<Job>, job: Job) {
    crate::vm::object::enable_parallel_mutators();
    sched.wake(job);
}

/// Runs one task until it completes, fails, suspends or is preempted.
fn run_task(shared: &Shared, rt: &mut Runtime, cx: &Cx<'_>, cell: Arc<TaskCell>) {
    // Timers of the wait that just ended (a select's timeout, the
    // sleep of a cancelled task) must not keep the program alive.
    if cell.timers_armed.load(Ordering::SeqCst) {
        cancel_timers(cx, &cell);
    }
    let Some(mut exec) = cell.exec.lock().take() else { return };
    // Traces: one branch when off.
    let traced_from = rt.trace.as_mut().map(|rec| trace_run_start(rec));
    let first_run = !cell.started.swap(true, Ordering::AcqRel);
    let mut interp = TaskInterpreter::new(rt);
    let outcome = if first_run && cell.is_cancel_requested() {
        // A task cancelled before it started never runs.
        RunOutcome::Failed(Value::UNDEFINED)
    } else {
        let resume = cell.resume.lock().take();
        match resume.map(|r| interp.resume(&mut exec, r)) {
            Some(Err(e)) => RunOutcome::Failed(e),
            _ => {
                // Safepoints count against the worker's time slice,
                // which a task woken by direct handoff inherits.
                let mut budget = cx.slice_left();
                if exec.preempted && shared.seed.is_some() {
                    // A seeded slice counts the safepoints to reach
                    // after the one this task was preempted at (where
                    // it stands again: a slice of 1 would stop it
                    // there, with no progress).
                    budget = budget.saturating_add(1);
                }
                let given = budget;
                // Stall warnings watch workers only (a live run, whose
                // calls run on their callers' threads, has none).
                let stalls = shared.stalls.as_ref().zip(cx.worker_index());
                if let Some((s, w)) = stalls {
                    s.enter(w, cell.id);
                }
                let outcome = interp.run(&mut exec, &mut budget);
                if let Some((w, true)) = stalls.map(|(s, w)| (w, s.leave(w))) {
                    let stack = interp.rt.stack_trace(&exec);
                    let id = cell.id;
                    let line = if stack.is_empty() {
                        format!("raya: stall: task {id} on worker {w} is running again (its stalled run ended with the task)\n")
                    } else {
                        format!("raya: stall: task {id} on worker {w} reached a safepoint again, at:{stack}\n")
                    };
                    interp.rt.write_stderr(&line);
                }
                cx.set_slice_left(budget);
                match check_guard(&cell, given.saturating_sub(budget)) {
                    Some(Stop::End(hit)) => shared.end_by_limit(hit),
                    Some(Stop::Cancel(reason)) => match outcome {
                        RunOutcome::Preempted => {
                            stop_guarded(rt, cx, cell, exec, &reason);
                            return;
                        }
                        // Suspending: cancelled as it parks (a run that
                        // only ever yields is stopped too).
                        RunOutcome::Suspended(_) if !cell.cancel_delivered.load(Ordering::Acquire) => {
                            cell.cancel.store(true, Ordering::SeqCst);
                            cell.run_on_cancel();
                        }
                        _ => {}
                    },
                    None => {}
                }
                outcome
            }
        }
    };

    let traced = traced_from.map(|start| (start, trace_stop(rt, &cell, &exec, &outcome)));
    let id = cell.id;
    exec.preempted = matches!(outcome, RunOutcome::Preempted);
    match outcome {
        RunOutcome::Preempted => {
            *cell.exec.lock() = Some(exec);
            cx.preempted(Job::Run(cell));
        }
        RunOutcome::Completed(v) if is_waitable(v) && crate::vm::interp::settled(v).is_none() => {
            // `return someTask` in an async function: finish with that
            // task's outcome (flattening), by awaiting it first.
            let w = Wait::Settled(vec![v]);
            exec.blocked_on = w.blocked_on().into();
            exec.blocker = w.blocker();
            *cell.exec.lock() = Some(exec);
            park(shared, rt, cx, &cell, w, false);
        }
        RunOutcome::Completed(v) => {
            let o = match crate::vm::interp::settled(v) {
                Some(o) => o,
                None => Outcome::Value(v),
            };
            complete(rt, &cell, &exec, o);
            cx.completed();
        }
        RunOutcome::Failed(e) => {
            let o = if cell.is_cancel_requested() && (e.is_undefined() || is_cancelled_error(rt, e)) {
                let e = if e.is_undefined() {
                    let c = rt.realm.classes.task_cancelled_error;
                    rt.make_error(&exec, c, "task was cancelled")
                } else {
                    e
                };
                Outcome::Cancelled(e)
            } else {
                Outcome::Error(e)
            };
            complete(rt, &cell, &exec, o);
            cx.completed();
            if let (Outcome::Error(e), true, false) = (o, Arc::ptr_eq(&cell, &shared.main), shared.live) {
                // An uncaught error in the main task ends the program at
                // once, whatever other tasks are still doing.
                report_uncaught(rt, e);
                rt.flush_stdout();
                shared.exit_code.store(1, Ordering::Release);
                shared.exited.store(true, Ordering::Release);
            }
        }
        RunOutcome::Suspended(w) => {
            exec.blocked_on = w.blocked_on().into();
            exec.blocker = w.blocker();
            *cell.exec.lock() = Some(exec);
            park(shared, rt, cx, &cell, w, true);
        }
        RunOutcome::Exited(code) => end_by_exit(shared, rt, code),
    }
    if let Some((start, stop)) = traced {
        trace_run_end(rt, id, start, stop);
    }
    // Output leaves the buffer when the task that wrote it stops
    // running, so nothing waits for the program's end (a server's log,
    // progress lines of a long computation).
    if !rt.flush_pending() && !shared.exited.swap(true, Ordering::AcqRel) {
        // stdout is a closed pipe: end quietly with code 0.
        shared.exit_code.store(0, Ordering::Release);
    }
}

/// Adds the time since it was made to a worker's `--stats` run time.
struct BusyTimer<'a>(&'a std::sync::atomic::AtomicU64, std::time::Instant);

impl Drop for BusyTimer<'_> {
    fn drop(&mut self) {
        // Only this worker writes its counter.
        let ns = self.1.elapsed().as_nanos() as u64;
        self.0.store(self.0.load(Ordering::Relaxed) + ns, Ordering::Relaxed);
    }
}

/// Traces: the start of a run.
fn trace_run_start(rec: &mut crate::trace::Recorder) -> u64 {
    // A run handed off by the previous one in the same job starts when
    // that one ended: one clock read per run instead of two.
    match rec.resume_at.take() {
        Some(t) => t,
        None => rec.now(),
    }
}

/// Traces: why the run that produced `outcome` stopped.
fn trace_stop(rt: &mut Runtime, cell: &TaskCell, exec: &Task, outcome: &RunOutcome) -> crate::trace::Stop {
    use crate::trace::{Stop, StopCode};
    let (Some(rec), world) = (rt.trace.as_deref_mut(), &rt.world) else { return Stop::plain(StopCode::Completed) };
    match outcome {
        RunOutcome::Preempted => Stop::plain(StopCode::Preempted),
        RunOutcome::Completed(v) if is_waitable(*v) && crate::vm::interp::settled(*v).is_none() => {
            let site = rec.user_site(world, exec);
            rec.suspended("awaiting the task it returns".into(), "task", 0, site)
        }
        RunOutcome::Completed(_) => Stop::plain(StopCode::Completed),
        RunOutcome::Failed(_) if cell.is_cancel_requested() => Stop::plain(StopCode::Cancelled),
        RunOutcome::Failed(_) => Stop::plain(StopCode::Failed),
        RunOutcome::Exited(_) => Stop::plain(StopCode::Exited),
        RunOutcome::Suspended(w) => {
            let (kind, object) = w.trace_info();
            let site = rec.user_site(world, exec);
            rec.suspended(w.describe(), kind, object, site)
        }
    }
}

/// Traces: the run's slice, the tasks it spawned, and the tasks it made
/// runnable (the first in the slice itself; see `trace::Event`).
fn trace_run_end(rt: &mut Runtime, id: u32, start: u64, stop: crate::trace::Stop) {
    use crate::trace::Event;
    let Some(rec) = rt.trace.as_mut() else { return };
    let end = rec.now();
    // Inside the slice (which ends at `end`), where viewers bind arrows.
    let at = end.saturating_sub(1).max(start);
    for t in &rt.spawned {
        let name = t.exec.lock().as_deref().map(crate::trace::task_name).unwrap_or_default();
        rec.push(Event::Spawn { ts: at, parent: id, child: t.id, name });
    }
    let mut woke = 0;
    for t in &rt.woken {
        if t.id == id {
            continue; // its own wait was decided at once
        }
        if woke == 0 {
            woke = t.id;
        } else {
            rec.push(Event::Wake { ts: at, from: id, to: t.id });
        }
    }
    rec.push(Event::Run { start, end, task: id, woke, stop });
    rec.resume_at = Some(end);
}

fn is_cancelled_error(rt: &Runtime, e: Value) -> bool {
    ops::instance_of(&rt.realm, e, rt.realm.classes.task_cancelled_error).unwrap_or(false)
}

/// Settles a finished task and wakes its awaiters.
fn complete(rt: &mut Runtime, cell: &Arc<TaskCell>, exec: &Task, o: Outcome) {
    // The task's frames are gone; drop its state so its registers are no
    // longer roots.
    cell.exec.lock().take();
    // A task that ends holding a mutex releases it to the next waiter.
    crate::sync::mutex::release_all(cell.id, exec.rare.take_locked(), &mut rt.woken);
    if let Some(s) = cell.completion.settle(o, &rt.world.microtasks) {
        if matches!(o, Outcome::Error(_) | Outcome::Cancelled(_)) && s.waiters.iter().any(|w| w.is_await()) {
            // Thrown into an awaiting task: observed.
            cell.completion.inner.lock().observed = true;
        }
        wake_all(rt, s, o);
    }
    rt.world.live_tasks.remove(cell.id);
    if let Some(g) = cell.guard() {
        g.task_ended();
    }
    let on_done = cell.take_on_done();
    match (on_done, o) {
        // An embedder's call: its error is the embedder's, not unhandled.
        (Some(f), o) => f(rt, o),
        (None, Outcome::Error(_)) => rt.world.failed_tasks.lock().push(cell.object()),
        _ => {}
    }
}

/// Drops the buffer of a drained woken list that a mass wake-up made (in
/// the waiter list's buffer, see [`wake_waiters`]), rather than keep it for
/// the life of the runtime.
fn forget_mass_wake(rt: &mut Runtime) {
    if rt.woken.is_empty() && rt.woken.capacity() > 4 * WAKE_BATCH {
        rt.woken = Vec::new();
    }
}

/// Claims each waiter of a completion that just settled with `o` and
/// queues those claimed: they re-run their wait, except that an `await`
/// registration gets a failure thrown at once (fail-fast `await [..]`).
pub fn wake_all(rt: &mut Runtime, s: crate::sync::Settled, o: Outcome) {
    wake_waiters(rt, s.waiters, o);
    if s.start_drain {
        crate::builtins::tasks::start_drain(rt);
    }
    if !s.adopts.is_empty() {
        crate::builtins::tasks::carry_out(rt, s.adopts, o);
    }
}

/// The waiters' part of [`wake_all`].
pub fn wake_waiters(rt: &mut Runtime, waiters: Vec<Waiter>, o: Outcome) {
    let claimed = |w: Waiter| {
        if !w.claim() {
            return None;
        }
        let r = match o {
            Outcome::Error(e) | Outcome::Cancelled(e) if w.is_await() => Resume::Throw(e),
            _ => Resume::Retry,
        };
        w.task.resume.lock().set(r);
        Some(w.task)
    };
    if rt.woken.is_empty() && waiters.len() > WAKE_BATCH {
        // Many (a million tasks awaiting one promise): the woken list is
        // made in the waiter list's own buffer (the standard library
        // collects a `Vec`'s `into_iter` in place when the items shrink),
        // so waking them allocates nothing; `queue_woken` moves it into
        // one `Job::Wake`.
        rt.woken = waiters.into_iter().filter_map(claimed).collect();
        return;
    }
    // Room for all at once: growing the list by doubling would hold two
    // copies at each step.
    rt.woken.reserve(waiters.len());
    rt.woken.extend(waiters.into_iter().filter_map(claimed));
}

/// `await [..]`: registers the task once with every element from the
/// first pending one on (with `SHARED_GEN` waiters, so each claims
/// whatever generation the task waits with), and on later wake-ups of the
/// same `await` only re-arms.
///
/// Invariants:
/// - The first registration registers *every* element, even after one was
///   found settled: a later wake-up relies on each element's waiter.
/// - On re-arm, the element the interpreter's scan stopped at is
///   re-checked *after* the token is armed (with `all_gen` naming the new
///   generation), so if it settles on another worker meanwhile, either
///   the re-check sees it or its waker finds the token armed.
fn park_all(rt: &mut Runtime, cell: &Arc<TaskCell>, array: Value) -> u64 {
    let next = cell.token.next_gen();
    cell.set_all_gen(next);
    let gen = cell.token.arm();
    debug_assert_eq!(gen, next);
    let mut exec_guard = cell.exec.lock();
    let Some(exec) = exec_guard.as_mut() else { return gen };
    let Some(mut scan) = exec.rare.await_scan().filter(|s| s.array == array) else { return gen };
    let from = scan.next;
    let registered = std::mem::replace(&mut scan.registered, true);
    exec.rare.set_await_scan(Some(scan));
    drop(exec_guard);
    let items = ops::array_data(array).map(|a| a.clone()).unwrap_or_default();
    if registered {
        let settled = match items.get(from).and_then(|v| v.as_obj()).map(|o| &o.body) {
            Some(Body::Task(t)) => t.completion.outcome().is_some(),
            Some(Body::Promise(p)) => p.completion.outcome().is_some(),
            _ => true,
        };
        if settled && cell.token.claim(gen) {
            cell.resume.lock().set(Resume::Retry);
            rt.woken.push(cell.clone());
        }
        return gen;
    }
    let waiter = Waiter::awaiting(cell.clone(), crate::sync::SHARED_GEN);
    let mut any_settled = false;
    for v in items.into_iter().skip(from) {
        any_settled |= !match v.as_obj().map(|o| &o.body) {
            Some(Body::Task(t)) => t.completion.register(waiter.clone()),
            Some(Body::Promise(p)) => p.completion.register(waiter.clone()),
            _ => true,
        };
    }
    if any_settled && waiter.claim() {
        cell.resume.lock().set(Resume::Retry);
        rt.woken.push(cell.clone());
    }
    gen
}

/// Step 2 of the protocol: the task's state is saved; arm its token and
/// register it with what it waits for, re-checking each condition.
///
/// Invariant (no lost cancellation): a `t.cancel()` racing this suspension
/// either claims the armed wait itself or is seen by the re-check after
/// registering. The canceller raises the flag and then reads the token
/// (`TaskCell::request_cancel`); this side arms the token and then reads
/// the flag. All four accesses are SeqCst, so at least one side sees the
/// other's write; and since both then claim the same generation, exactly
/// one of them delivers the cancellation.
///
/// A seeded run may split a suspension (`may_split`: the interpreter's,
/// whose wait names only values in the task's saved registers, which keep
/// them alive meanwhile) here (`scheduler/seeded.rs`):
/// the rest runs as a job of its own, and other tasks run first. That is
/// the window in which, with several workers, a `t.cancel()` finds no
/// armed wait to claim; one worker reaches it only by this split, which is
/// how `--explore` finds a lost cancellation (`design/explore.md`).
fn park(shared: &Shared, rt: &mut Runtime, cx: &Cx<'_>, cell: &Arc<TaskCell>, w: Wait, may_split: bool) {
    if cell.is_cancel_requested() {
        // Cancellation is sticky: every suspension of a cancelled task
        // throws at once.
        cell.resume.lock().set(Resume::Cancel);
        cx.push_local(Job::Run(cell.clone()));
        return;
    }
    if let Cx::Worker(wcx) = cx {
        if may_split && wcx.split_suspension() {
            wcx.push_local(Job::Park(cell.clone(), Box::new(w)));
            return;
        }
    }
    register_and_recheck(shared, rt, cx, cell, w);
}

/// The rest of [`park`]: registers, then re-checks the cancel flag.
fn register_and_recheck(shared: &Shared, rt: &mut Runtime, cx: &Cx<'_>, cell: &Arc<TaskCell>, w: Wait) {
    let gen = register_wait(rt, cx, cell, w);
    #[cfg(test)]
    if shared.skip_cancel_recheck {
        return;
    }
    #[cfg(not(test))]
    let _ = shared;
    if cell.claim_if_cancelled(gen) {
        // Registrations made for this generation are now stale; every
        // wait object drops those lazily, so none confuses the next wait.
        cell.resume.lock().set(Resume::Cancel);
        rt.woken.push(cell.clone());
    }
}

/// Arms the token and registers the task with what it waits for; returns
/// the generation of the wait it is left in.
fn register_wait(rt: &mut Runtime, cx: &Cx<'_>, cell: &Arc<TaskCell>, w: Wait) -> u64 {
    if let Wait::All(array) = w {
        return park_all(rt, cell, array);
    }
    // Registrations of an earlier `await [..]` must not claim this wait.
    cell.set_all_gen(0);
    let mut gen = cell.token.arm();
    let waiter = Waiter::new(cell.clone(), gen);
    match w {
        Wait::All(_) => unreachable!("handled above"),
        Wait::Settled(list) => {
            for v in list {
                let registered = match v.as_obj().map(|o| &o.body) {
                    Some(Body::Task(t)) => t.completion.register(waiter.clone()),
                    Some(Body::Promise(p)) => p.completion.register(waiter.clone()),
                    _ => false,
                };
                if !registered && waiter.claim() {
                    cell.resume.lock().set(Resume::Retry);
                    rt.woken.push(cell.clone());
                    return gen;
                }
            }
        }
        Wait::Until(deadline) if deadline <= crate::scheduler::now() => {
            // `Task.yield()` / `sleep(0)`: straight to the back of this
            // worker's queue, no timer round trip.
            if waiter.claim() {
                cell.resume.lock().set(Resume::Value(Value::UNDEFINED));
                cx.push_local(Job::Run(cell.clone()));
            }
        }
        Wait::Until(deadline) => {
            let key = cx.scheduler().sleep_until(deadline, Job::Timer(cell.clone(), gen));
            keep_timer(cx.scheduler(), cell, gen, key);
        }
        Wait::Forever => {}
        Wait::Object(obj) => {
            let mut waiter = waiter;
            loop {
                let mut timers = Vec::new();
                let r = obj.register(waiter.clone(), &mut rt.woken, &mut timers);
                // Armed even when the wait is already decided: a timer
                // channel counts on its armed timer firing.
                for t in timers {
                    let own = t.cancel_on_wake;
                    let key = cx.scheduler().sleep_until(t.at, Job::Fire(Box::new(t)));
                    if own {
                        keep_timer(cx.scheduler(), cell, waiter.gen(), key);
                    }
                }
                match r {
                    Registered::Queued => {}
                    Registered::Ready(r) => {
                        // The object claimed the task for us.
                        cell.resume.lock().set(r);
                        rt.woken.push(cell.clone());
                    }
                    Registered::Again => {
                        // Claimed, but the partner vanished: wait again.
                        if cell.is_cancel_requested() {
                            cell.resume.lock().set(Resume::Cancel);
                            rt.woken.push(cell.clone());
                        } else {
                            waiter.set_gen(cell.token.arm());
                            gen = waiter.gen();
                            continue;
                        }
                    }
                }
                break;
            }
        }
    }
    gen
}

/// Records `key` as a timer of the task's wait of generation `gen`, to be
/// cancelled when the task runs again.
///
/// Invariant (no timer outlives its wait): the task may already have been
/// woken, even have run, before the key was recorded. So the flag is
/// raised after the push, and then the wait is checked: if it is no longer
/// armed, this worker takes its key back out (if the runner has not taken
/// it already) and cancels it itself. All of the flag store, this check,
/// the waker's claim and the runner's flag load are SeqCst: either the
/// runner (whose flag load comes after the claim) sees the flag, or this
/// check sees the claim. Only this key is cancelled here, never the whole
/// list: by now the task may be in a newer wait whose timers are in the
/// list too, and cancelling those would lose its wake-up.
fn keep_timer(sched: &Scheduler<Job>, cell: &TaskCell, gen: u64, key: crate::scheduler::TimerKey) {
    cell.push_timer(key);
    cell.timers_armed.store(true, Ordering::SeqCst);
    if !cell.token.is_waiting(gen) {
        let mine = cell.remove_timer(key);
        if let Some(key) = mine {
            sched.cancel_timer(key);
        }
    }
}

fn cancel_timers(cx: &Cx<'_>, cell: &TaskCell) {
    cell.timers_armed.store(false, Ordering::SeqCst);
    for key in cell.take_timers() {
        cx.scheduler().cancel_timer(key);
    }
}

/// `Uncaught <error stack>` on stderr.
pub fn report_uncaught(rt: &mut Runtime, e: Value) {
    let text = uncaught_report(rt, e);
    rt.write_report(&format!("Uncaught {text}\n"));
}

/// [`uncaught_text`] with the source line of the innermost frame and a
/// caret under the failing expression after the header line (as Deno
/// shows an uncaught error), for reports on stderr.
pub fn uncaught_report(rt: &Runtime, e: Value) -> String {
    let text = uncaught_text(e);
    let Some(frames_at) = text.find("\n    at ") else { return text };
    match crate::vm::runtime::code_frame(&rt.world.sources.read(), &text[frames_at..]) {
        Some(frame) => format!("{}\n{}{}", &text[..frames_at], frame, &text[frames_at..]),
        None => text,
    }
}

/// The text `Uncaught` is followed by: the error's stack, or its inspection.
pub fn uncaught_text(e: Value) -> String {
    if let Some(Body::Object(d)) = e.as_obj().map(|o| &o.body) {
        let d = d.lock();
        if ops::error_name(&d).is_some() {
            if let Some(s) = d.props.get(names::STACK).and_then(ops::as_str) {
                // The header reflects the error's name and message now (a
                // constructor may set `this.name` after `super()`), as V8
                // formats `stack` lazily; the frames are as captured.
                let frames = s.find("\n    at ").map(|i| &s[i..]).unwrap_or("");
                return format!("{}{}", ops::to_display(e), frames);
            }
        }
    }
    inspect::inspect(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::task::Task;
    use std::time::{Duration, Instant};

    /// A job is as large as its largest variant and every runnable task
    /// is one in a queue: the rare kinds are boxed so that a job stays
    /// three words (a million tasks woken at once by one settlement were
    /// 48 MiB of queue at 48 bytes a job; design/memory.md).
    #[test]
    fn a_job_is_three_words() {
        assert!(std::mem::size_of::<Job>() <= 24, "Job is {} bytes", std::mem::size_of::<Job>());
    }

    /// Evals that reach no safepoint inside (no call, no loop) still let
    /// the heap collect, at the start of their runs: 4,000 of them, each
    /// leaving a 100 KB string behind, run 400 MB through a heap that
    /// stays far smaller.
    #[test]
    fn runs_without_a_safepoint_inside_still_collect() {
        let vm = crate::Vm::builder().workers(1).build();
        let inst = vm.load(&vm.compile_source("app.raya", "export const x = 1;").unwrap()).unwrap();
        for _ in 0..4000 {
            assert_eq!(inst.eval::<f64>("\"x\".repeat(100000).length"), Ok(100000.0));
        }
        let heap = &inst.inner.live.handle().shared.world.heap;
        let collections = heap.stats.lock().collections;
        assert!(collections > 0, "no collection");
    }

    /// Each cycle of the wait-for graph is found once, from its lowest
    /// task id, with tasks that only lead into a cycle left out.
    #[test]
    fn wait_cycles_are_found_once_from_their_lowest_task() {
        let e = |from: u32, to: u32| (from, to, format!("{from}->{to}"));
        // 1 -> 5 -> 3 -> 5 (a tail into the ring 5 <-> 3), 7 -> 4 -> 2 -> 7,
        // 9 -> 8 (no ring), 6 -> 6 is never an edge (the report skips it).
        let edges = vec![e(1, 5), e(5, 3), e(3, 5), e(7, 4), e(4, 2), e(2, 7), e(9, 8)];
        let cycles = wait_cycles(&edges);
        let named: Vec<Vec<&str>> = cycles.iter().map(|c| c.iter().map(|&i| edges[i].2.as_str()).collect()).collect();
        assert_eq!(named, vec![vec!["2->7", "7->4", "4->2"], vec!["3->5", "5->3"]]);
        assert!(wait_cycles(&[]).is_empty());
    }

    /// Task cells still alive when the run ended (taken by `end`), as weak
    /// references: after the run returns, none may be alive.
    fn cells_left_by(src: &str, workers: usize) -> Vec<std::sync::Weak<TaskCell>> {
        cells_left_with(src, RunOptions { workers: Some(workers), ..Default::default() }, 1)
    }

    /// [`cells_left_by`] with options, for a run expected to end with `code`.
    fn cells_left_with(src: &str, opts: RunOptions, code: i32) -> Vec<std::sync::Weak<TaskCell>> {
        let program = crate::compiler::compile_source("leak.raya", src).expect("compiles");
        let (mut cells, mut world) = (Vec::new(), None);
        run_program_hosted(
            &program,
            opts,
            None,
            &mut |rt| rt.world.output.lock().captured_stderr = Some(Vec::new()),
            &mut |rt, end| {
                assert_eq!(end.code, code, "the program's exit code");
                world = Some(Arc::downgrade(&rt.world));
                for t in sorted_live(rt) {
                    if let Some(Body::Task(cell)) = t.as_obj().map(|o| &o.body) {
                        cells.push(Arc::downgrade(cell));
                    }
                }
            },
        );
        assert!(!cells.is_empty(), "blocked tasks were alive at the end");
        let world = world.expect("the run ended");
        // The last worker may drop its runtime a moment after the run
        // returned.
        let t0 = Instant::now();
        while world.strong_count() > 0 && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(world.strong_count(), 0, "the run's world is freed");
        // So may a worker the last reference to the task it ran, on a
        // loaded machine: a cell still alive after this wait is a leak.
        while cells.iter().any(|c| c.strong_count() > 0) && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(1));
        }
        cells
    }

    /// A deadlocked run frees its blocked tasks: their cells, execution
    /// states and waiter registrations form reference cycles (a task
    /// awaiting itself; two tasks awaiting each other; tasks holding the
    /// mutex another waits on) that the end of the run breaks.
    #[test]
    fn a_deadlocked_run_frees_its_blocked_tasks() {
        let programs = [
            "await Task.current();",
            "let b: Task<void> | null = null;\n\
             const a = (async () => { Task.yield(); await b!; })();\n\
             b = (async () => { await a; })();\n\
             await a;",
            "const m1 = new Mutex(); const m2 = new Mutex();\n\
             const a = (async () => { m1.lock(); sleep(20); m2.lock(); })();\n\
             const b = (async () => { m2.lock(); sleep(20); m1.lock(); })();\n\
             await a; await b;",
            "const c = new Channel<number>(); const d = new Channel<number>();\n\
             const t = (async () => { c.receive(); })();\n\
             d.receive();",
        ];
        let mut leaks = Vec::new();
        for src in programs {
            for workers in [1, 2] {
                let left: Vec<u32> =
                    cells_left_by(src, workers).iter().filter_map(|w| w.upgrade()).map(|c| c.id).collect();
                if !left.is_empty() {
                    leaks.push(format!("{workers} workers: cells of tasks {left:?} outlive the run of:\n{src}"));
                }
            }
        }
        assert!(leaks.is_empty(), "{}", leaks.join("\n"));
    }

    /// A run ended from outside a task's run — its time limit, seen by
    /// the thread waiting for the program, or `exit()` on another worker —
    /// stops the world while the main task is in the middle of a slice, its
    /// execution state on that worker's stack rather than in its cell. The
    /// worker finishes the slice once the world runs again and, when the
    /// task then suspends, puts the state back in the cell: after the end
    /// of the run had released every unfinished task, so the state (which
    /// holds its own cell) was never freed. The fuzz target that runs
    /// programs under a time limit found this as a leak of a main task's
    /// cell. Each program here spends its first slice in a few slow native
    /// calls, so the end comes while main is inside that slice, and then
    /// sleeps.
    #[test]
    fn a_run_ended_during_a_slice_frees_the_running_task() {
        let slow = "let s = \"x\".repeat(4_000_000);\n\
                    for (let k = 0; k < 12; k++) s = s.toUpperCase().toLowerCase();\n\
                    sleep(1);\n\
                    console.log(s.length);";
        let limited = || {
            let limits = crate::limits::Limits { time: Some(Duration::from_millis(5)), ..Default::default() };
            let g = crate::limits::Guard::new(&limits, crate::limits::OnLimit::EndProgram, None);
            RunOptions { workers: Some(1), guard: Some(Arc::new(g)), ..Default::default() }
        };
        let exiting = format!("const t = (async () => {{ sleep(2); exit(0); }})();\n{slow}");
        let steps = || {
            let limits = crate::limits::Limits { instructions: Some(5), ..Default::default() };
            let g = crate::limits::Guard::new(&limits, crate::limits::OnLimit::EndProgram, None);
            RunOptions { workers: Some(1), guard: Some(Arc::new(g)), ..Default::default() }
        };
        let one = |workers| RunOptions { workers: Some(workers), ..Default::default() };
        let runs = [
            ("a time limit, one worker", slow.to_string(), limited(), 1),
            ("exit() on another worker", exiting, one(2), 0),
            // The neighbouring paths, which must not leak either.
            ("the step limit inside a slice", slow.to_string(), steps(), 1),
            (
                "exit() by a task while main is suspended",
                "const t = (async () => { sleep(1); exit(3); })();\nawait t;".to_string(),
                one(1),
                3,
            ),
        ];
        let mut leaks = Vec::new();
        for (what, src, opts, code) in runs {
            let left: Vec<u32> =
                cells_left_with(&src, opts, code).iter().filter_map(|w| w.upgrade()).map(|c| c.id).collect();
            if !left.is_empty() {
                leaks.push(format!("{what}: cells of tasks {left:?} outlive the run"));
            }
        }
        assert!(leaks.is_empty(), "{}", leaks.join("\n"));
    }

    /// The lost-cancellation defect (a cancel landing between a task's
    /// "cannot proceed" and its registration, found no wait to claim, and
    /// nothing re-checked the flag afterwards) needs another task to act
    /// inside a suspension. Seeded runs split suspensions, so exploring
    /// seeds on one worker finds it when the re-check is left out, and
    /// never with it.
    #[test]
    fn seeded_runs_find_a_lost_cancellation_without_the_recheck() {
        let src = "const a = new Channel<number>();\n\
                   const m = new Mutex(); m.lock();\n\
                   const p = new Promise<number>(() => {});\n\
                   for (let round = 0; round < 60; round++) {\n\
                     const s = (async () => {\n\
                       if (round % 3 === 0) a.send(round);\n\
                       else if (round % 3 === 1) m.lock();\n\
                       else await p;\n\
                     })();\n\
                     Task.yield();\n\
                     s.cancel();\n\
                     try { await s; } catch (e) {}\n\
                   }\n\
                   console.log(\"done\");";
        let program = crate::compiler::compile_source("cancel.raya", src).expect("compiles");
        let failing = |skip_cancel_recheck: bool| -> Vec<u64> {
            (1..=24)
                .filter(|&seed| {
                    let opts = RunOptions { seed: Some(seed), skip_cancel_recheck, ..Default::default() };
                    let code = run_program_hosted(
                        &program,
                        opts,
                        None,
                        &mut |rt| rt.world.output.lock().captured_stderr = Some(Vec::new()),
                        &mut |_, end| end.code,
                    );
                    code != 0
                })
                .collect()
        };
        let found = failing(true);
        assert!(!found.is_empty(), "no seed of 1..=24 loses a cancellation without the re-check");
        assert_eq!(failing(false), Vec::<u64>::new(), "with the re-check every seed passes");
    }

    /// A loaded program (an embedder's instance) dropped while its tasks
    /// are blocked frees them too.
    #[test]
    fn a_dropped_live_run_frees_its_blocked_tasks() {
        let src = "const c = new Channel<number>();\n\
                   const t = (async () => { c.receive(); })();\n\
                   await t;";
        let program = crate::compiler::compile_source("live.raya", src).expect("compiles");
        let opts = RunOptions { workers: Some(2), ..Default::default() };
        let live = LiveRun::start(&program, opts, None, &mut |_| {}, Box::new(|_, _| {}));
        let world = Arc::downgrade(&live.handle().shared.world);
        let t0 = Instant::now();
        let cells = loop {
            let (tx, rx) = std::sync::mpsc::channel();
            live.handle().on_runtime(Box::new(move |rt| {
                let blocked: Vec<_> = sorted_live(rt)
                    .iter()
                    .filter_map(|t| match t.as_obj().map(|o| &o.body) {
                        Some(Body::Task(cell)) if cell.token.is_armed() => Some(Arc::downgrade(cell)),
                        _ => None,
                    })
                    .collect();
                let _ = tx.send(blocked);
            }));
            let blocked = rx.recv().expect("the job ran");
            if blocked.len() == 2 {
                break blocked;
            }
            assert!(t0.elapsed() < Duration::from_secs(10), "both tasks block");
            std::thread::sleep(Duration::from_millis(5));
        };
        drop(live);
        while world.strong_count() > 0 && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(world.strong_count(), 0, "the run's world is freed");
        let left: Vec<u32> = cells.iter().filter_map(|w| w.upgrade()).map(|c| c.id).collect();
        assert!(left.is_empty(), "cells of tasks {left:?} outlive the program");
    }

    /// A worker records a timer key late, after the task was woken, ran,
    /// and went to sleep again: it cancels its own stale key, and never
    /// the timer of the task's newer sleep (which would lose its wake-up).
    #[test]
    fn late_timer_key_cancels_only_itself() {
        let sched: Scheduler<Job> = Scheduler::new(1, |_cx: &WorkerCx<Job>, _job: Job| {});
        let cell = Arc::new(TaskCell::new(1, Box::new(Task::new(1))));
        let later = Instant::now() + Duration::from_secs(3600);
        // First sleep: armed, timer set, then woken (claimed) before its
        // key was recorded.
        let old_gen = cell.token.arm();
        let old_key = sched.sleep_until(later, Job::Run(cell.clone()));
        assert!(cell.token.claim(old_gen));
        // The task ran and sleeps again; that sleep's key is recorded.
        let new_gen = cell.token.arm();
        let new_key = sched.sleep_until(later, Job::Run(cell.clone()));
        keep_timer(&sched, &cell, new_gen, new_key);
        assert_eq!(sched.pending_timers(), 2);
        // Now the first park gets round to recording its key.
        keep_timer(&sched, &cell, old_gen, old_key);
        assert_eq!(sched.pending_timers(), 1, "the stale timer is cancelled");
        assert_eq!(cell.timer_keys(), [new_key], "the new sleep's timer is kept");
        assert!(cell.token.is_waiting(new_gen));
        sched.shutdown();
    }
}
