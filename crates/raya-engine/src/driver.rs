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
//! The heap is not yet safe for several mutator threads (see
//! `design/memory.md`), so programs run on one scheduler worker; blocking
//! operations still suspend only the task, timers run on the scheduler's
//! timer thread, and `--workers` is accepted for forward compatibility.
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
//! [`Handle`] lets host threads lock the runtime, settle, and queue the
//! woken tasks ([`Handle::with_runtime`]), and keeps the program alive while
//! an external promise or host call is pending ([`Handle::keep_alive`]: a
//! timer that never fires, so the scheduler is not quiescent).

use crate::builtins::inspect;
use crate::compiler::Program;
use crate::scheduler::{Scheduler, WorkerCx};
use crate::sync::{Outcome, Registered, Resume, TaskCell, Wait, Waiter};
use crate::vm::atom::names;
use crate::vm::interp::{is_waitable, RunOutcome, TaskInterpreter};
use crate::vm::object::Body;
use crate::vm::task::Task;
use crate::vm::{ops, Runtime, Value};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Safepoints a task runs before it yields its worker.
pub const TIME_SLICE: u32 = 10_000;

/// A unit of scheduler work.
pub enum Job {
    /// Run (or resume) this task.
    Run(Arc<TaskCell>),
    /// A timer of this task's wait generation fired: claim, then run.
    Timer(Arc<TaskCell>, u64),
    /// A timer armed by a wait object (`select` timeouts, timer channels)
    /// fired: run its callback (which claims and wakes like any waker).
    Fire(crate::sync::Timer),
}

/// Options for running a program.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub args: Vec<String>,
    /// Requested worker count (see the module docs).
    pub workers: Option<usize>,
    /// Print scheduler and GC statistics on stderr at exit.
    pub stats: bool,
}

struct Shared {
    rt: Mutex<Runtime>,
    main: Arc<TaskCell>,
    exit_code: AtomicI32,
    exited: AtomicBool,
    /// Embedder state of a hosted run (see [`run_program_hosted`]), read by
    /// host-function natives through [`current_handle`].
    host: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

/// A handle on a running program, for code outside the interpreter (host
/// functions and external promises of the embedding API): lock its runtime
/// and queue the tasks that woke, keep the program alive.
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

impl Handle {
    /// The embedder state passed to [`run_program_hosted`].
    pub fn host_data(&self) -> Option<&Arc<dyn std::any::Any + Send + Sync>> {
        self.shared.host.as_ref()
    }

    /// Whether both handles name the same running program.
    pub fn same_program(&self, other: &Handle) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Runs `f` with the runtime locked (the invariant of `sync`: settle
    /// completions only under this lock), then queues on the scheduler the
    /// tasks `f` spawned or woke. Must not be called on a thread that holds
    /// the runtime lock already (a worker inside a native).
    pub fn with_runtime<R>(&self, f: impl FnOnce(&mut Runtime) -> R) -> R {
        let mut rt = self.shared.rt.lock();
        let r = f(&mut rt);
        let spawned = std::mem::take(&mut rt.spawned);
        let woken = std::mem::take(&mut rt.woken);
        drop(rt);
        for t in spawned {
            self.sched.spawn(Job::Run(t));
        }
        for t in woken {
            self.sched.wake(Job::Run(t));
        }
        r
    }

    /// Keeps the program alive (it is not quiescent, so neither finished
    /// nor deadlocked) until [`Handle::release`] is called with the key: a
    /// pending external promise or host call. Implemented as a timer that
    /// never fires on its own.
    pub fn keep_alive(&self) -> crate::scheduler::TimerKey {
        let far = std::time::Instant::now() + Duration::from_secs(100 * 365 * 24 * 3600);
        let noop = crate::sync::Timer { at: far, cancel_on_wake: false, fire: Box::new(|_| None) };
        self.sched.sleep_until(far, Job::Fire(noop))
    }

    /// Ends a [`Handle::keep_alive`].
    pub fn release(&self, key: crate::scheduler::TimerKey) {
        self.sched.cancel_timer(key);
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
    /// The main task's outcome (None: it never finished — deadlock or exit).
    pub main: Option<Outcome>,
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
    setup(&mut rt);
    // The main task.
    let id = crate::vm::object::next_id();
    let mut exec = Task::new(id);
    if let Err(e) = TaskInterpreter::new(&mut rt).start(&mut exec, entry, Value::UNDEFINED, &[]) {
        report_uncaught(&mut rt, e);
        rt.flush_stdout();
        return end(&mut rt, RunEnd { code: 1, exited: false, main: Some(Outcome::Error(e)) });
    }
    let main = Arc::new(TaskCell::without_exec(id));
    exec.cell = Some(main.clone());
    *main.exec.lock() = Some(Box::new(exec));
    let obj = rt.heap.alloc(Body::Task(main.clone()));
    main.object.store(obj.bits(), Ordering::Release);
    rt.live_tasks.insert(id, obj);

    let shared = Arc::new(Shared {
        rt: Mutex::new(rt),
        main: main.clone(),
        exit_code: AtomicI32::new(0),
        exited: AtomicBool::new(false),
        host,
    });
    // `opts.workers` is accepted but one worker runs (see the module docs).
    let sched = Scheduler::new(1, VmRunner { shared: shared.clone() });
    sched.spawn(Job::Run(main.clone()));
    loop {
        if shared.exited.load(Ordering::Acquire) {
            break;
        }
        if sched.wait_quiescent_timeout(Duration::from_millis(20)) {
            break;
        }
    }
    let stats = sched.stats();
    let mut rt = shared.rt.lock();
    let code = if shared.exited.load(Ordering::Acquire) {
        shared.exit_code.load(Ordering::Acquire)
    } else {
        finish(&mut rt, &main)
    };
    if opts.stats {
        let gc = rt.heap.stats.clone();
        rt.write_stderr(&format!(
            "{stats}\ngc cycles: {}, total pause: {:.3} ms, max pause: {:.3} ms\n",
            gc.collections,
            gc.total_pause_ns as f64 / 1e6,
            gc.max_pause_ns as f64 / 1e6
        ));
    }
    rt.flush_stdout();
    let exited = shared.exited.load(Ordering::Acquire);
    let r = end(&mut rt, RunEnd { code, exited, main: main.completion.outcome() });
    rt.flush_stdout();
    drop(rt);
    if shutdown {
        sched.shutdown();
    }
    r
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
            rt.write_stderr(&text);
            return 1;
        }
    }
    // In task-id order, so the report does not depend on scheduling.
    let mut failed = std::mem::take(&mut rt.failed_tasks);
    failed.sort_by_key(|t| match t.as_obj().map(|o| &o.body) {
        Some(Body::Task(cell)) => cell.id,
        _ => 0,
    });
    for t in failed {
        let Some(Body::Task(cell)) = t.as_obj().map(|o| &o.body) else { continue };
        if Arc::ptr_eq(cell, main) {
            continue; // reported above as the uncaught error
        }
        let (observed, outcome) = {
            let g = cell.completion.inner.lock();
            (g.observed, g.outcome)
        };
        if let (false, Some(Outcome::Error(e))) = (observed, outcome) {
            rt.write_stderr(&format!("Unhandled error in task {}: {}\n", cell.id, uncaught_text(e)));
            code = 1;
        }
    }
    let blocked: Vec<Value> = sorted_live(rt);
    if !blocked.is_empty() {
        let n = blocked.len();
        let mut text = format!("warning: {} task{} never finished\n", n, if n == 1 { "" } else { "s" });
        text.push_str(&blocked_report(rt));
        rt.write_stderr(&text);
    }
    code
}

fn sorted_live(rt: &Runtime) -> Vec<Value> {
    let mut ids: Vec<(u32, Value)> = rt.live_tasks.iter().map(|(&k, &v)| (k, v)).collect();
    ids.sort_by_key(|&(k, _)| k);
    ids.into_iter().map(|(_, v)| v).collect()
}

/// One entry per unfinished task: its id, what it waits on, its stack.
fn blocked_report(rt: &Runtime) -> String {
    let mut out = String::new();
    for t in sorted_live(rt) {
        let Some(Body::Task(cell)) = t.as_obj().map(|o| &o.body) else { continue };
        let mut what = cell.blocked_on.lock().clone();
        if what == crate::sync::AWAITING_ALL {
            if let Some(scan) = cell.exec.lock().as_ref().and_then(|e| e.await_scan) {
                what = crate::sync::describe_all(scan.array);
            }
        }
        out.push_str(&format!("  task {} blocked {}", cell.id, if what.is_empty() { "waiting" } else { &what }));
        if let Some(exec) = cell.exec.lock().as_ref() {
            out.push_str(&rt.stack_trace(exec).replace("\n    at ", "\n      at "));
        }
        out.push('\n');
    }
    out
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
        let cell = match job {
            Job::Run(c) => c,
            Job::Timer(c, gen) => {
                if !c.token.claim(gen) {
                    return; // cancelled or otherwise woken first
                }
                *c.resume.lock() = Some(Resume::Value(Value::UNDEFINED));
                c
            }
            Job::Fire(t) => {
                let mut rt = self.shared.rt.lock();
                if let Some(next) = (t.fire)(&mut rt.woken) {
                    cx.scheduler().sleep_until(next.at, Job::Fire(next));
                }
                queue_woken(&mut rt, cx);
                return;
            }
        };
        // Timers of the wait that just ended (a select's timeout, the
        // sleep of a cancelled task) must not keep the program alive.
        for key in std::mem::take(&mut *cell.timers.lock()) {
            cx.scheduler().cancel_timer(key);
        }
        let mut rt = self.shared.rt.lock();
        let Some(mut exec) = cell.exec.lock().take() else { return };
        let first_run = !cell.started.swap(true, Ordering::AcqRel);
        let mut interp = TaskInterpreter::new(&mut rt);
        let outcome = if first_run && cell.is_cancel_requested() {
            // A task cancelled before it started never runs.
            RunOutcome::Failed(Value::UNDEFINED)
        } else {
            let resume = cell.resume.lock().take();
            match resume.map(|r| interp.resume(&mut exec, r)) {
                Some(Err(e)) => RunOutcome::Failed(e),
                _ => interp.run(&mut exec, TIME_SLICE),
            }
        };

        match outcome {
            RunOutcome::Preempted => {
                *cell.exec.lock() = Some(exec);
                cx.preempted(Job::Run(cell));
            }
            RunOutcome::Completed(v) if is_waitable(v) && crate::vm::interp::settled(v).is_none() => {
                // `return someTask` in an async function: finish with that
                // task's outcome (flattening), by awaiting it first.
                *cell.exec.lock() = Some(exec);
                park(&mut rt, cx, &cell, Wait::Settled(vec![v]));
            }
            RunOutcome::Completed(v) => {
                let o = match crate::vm::interp::settled(v) {
                    Some(o) => o,
                    None => Outcome::Value(v),
                };
                complete(&mut rt, &cell, o);
                cx.completed();
            }
            RunOutcome::Failed(e) => {
                let o = if cell.is_cancel_requested() && (e.is_undefined() || is_cancelled_error(&rt, e)) {
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
                complete(&mut rt, &cell, o);
                cx.completed();
                if let (Outcome::Error(e), true) = (o, Arc::ptr_eq(&cell, &self.shared.main)) {
                    // An uncaught error in the main task ends the program at
                    // once, whatever other tasks are still doing.
                    report_uncaught(&mut rt, e);
                    rt.flush_stdout();
                    self.shared.exit_code.store(1, Ordering::Release);
                    self.shared.exited.store(true, Ordering::Release);
                    return;
                }
            }
            RunOutcome::Suspended(w) => {
                *cell.exec.lock() = Some(exec);
                park(&mut rt, cx, &cell, w);
            }
            RunOutcome::Exited(code) => {
                self.shared.exit_code.store(code, Ordering::Release);
                self.shared.exited.store(true, Ordering::Release);
                rt.flush_stdout();
            }
        }
        // Queue what this slice spawned and woke: a woken task runs next on
        // this worker (direct handoff), the others go to the local queue.
        queue_woken(&mut rt, cx);
        let _ = &self.shared.main;
    }
}

/// Queues what a slice (or a fired timer) spawned and woke: the first woken
/// task runs next on this worker (direct handoff), the others go to the
/// local queue.
fn queue_woken(rt: &mut Runtime, cx: &WorkerCx<Job>) {
    for t in std::mem::take(&mut rt.spawned) {
        cx.scheduler().spawn(Job::Run(t)); // this worker's local queue, counted as spawned
    }
    let mut woken = std::mem::take(&mut rt.woken).into_iter();
    if let Some(first) = woken.next() {
        for t in woken {
            cx.push_local(Job::Run(t));
        }
        cx.push_next(Job::Run(first));
    }
}

fn is_cancelled_error(rt: &Runtime, e: Value) -> bool {
    ops::instance_of(&rt.realm, e, rt.realm.classes.task_cancelled_error).unwrap_or(false)
}

/// Settles a finished task and wakes its awaiters.
fn complete(rt: &mut Runtime, cell: &Arc<TaskCell>, o: Outcome) {
    // The task's frames are gone; drop its state so its registers are no
    // longer roots.
    cell.exec.lock().take();
    cell.blocked_on.lock().clear();
    // A task that ends holding a mutex releases it to the next waiter.
    crate::sync::mutex::release_all(cell, &mut rt.woken);
    if let Some(waiters) = cell.completion.settle(o) {
        if matches!(o, Outcome::Error(_) | Outcome::Cancelled(_))
            && waiters.iter().any(|w| w.tag == crate::sync::TAG_AWAIT)
        {
            // Thrown into an awaiting task: observed.
            cell.completion.inner.lock().observed = true;
        }
        wake_all(rt, waiters, o);
    }
    rt.live_tasks.remove(&cell.id);
    if let Outcome::Error(_) = o {
        rt.failed_tasks.push(cell.object());
    }
}

/// Claims each waiter of a completion that just settled with `o` and
/// queues those claimed: they re-run their wait, except that an `await`
/// registration gets a failure thrown at once (fail-fast `await [..]`).
pub fn wake_all(rt: &mut Runtime, waiters: Vec<Waiter>, o: Outcome) {
    for w in waiters {
        if w.claim() {
            let r = match o {
                Outcome::Error(e) | Outcome::Cancelled(e) if w.tag == crate::sync::TAG_AWAIT => Resume::Throw(e),
                _ => Resume::Retry,
            };
            *w.task.resume.lock() = Some(r);
            rt.woken.push(w.task);
        }
    }
}

/// `await [..]`: registers the task once with every element still pending
/// (with `SHARED_GEN` waiters), and on later wake-ups of the same `await`
/// only re-arms. Invariant that makes the re-arm path safe without a
/// re-check: completions settle only while the runtime lock is held, which
/// the worker holds from the interpreter's scan through this function, so
/// nothing can settle between the scan and the arm.
fn park_all(rt: &mut Runtime, cell: &Arc<TaskCell>, array: Value) {
    let next = cell.token.next_gen();
    cell.all_gen.store(next, Ordering::Release);
    let gen = cell.token.arm();
    debug_assert_eq!(gen, next);
    let mut exec_guard = cell.exec.lock();
    let Some(exec) = exec_guard.as_mut() else { return };
    let Some(scan) = exec.await_scan.as_mut().filter(|s| s.array == array) else { return };
    if scan.registered {
        return;
    }
    scan.registered = true;
    let from = scan.next;
    drop(exec_guard);
    let items = ops::array_data(array).map(|a| a.clone()).unwrap_or_default();
    let waiter = Waiter { task: cell.clone(), gen: crate::sync::SHARED_GEN, tag: crate::sync::TAG_AWAIT };
    for v in items.into_iter().skip(from) {
        let registered = match v.as_obj().map(|o| &o.body) {
            Some(Body::Task(t)) => t.completion.register(waiter.clone()),
            Some(Body::Promise(p)) => p.completion.register(waiter.clone()),
            _ => true,
        };
        if !registered && waiter.claim() {
            *cell.resume.lock() = Some(Resume::Retry);
            rt.woken.push(cell.clone());
            return;
        }
    }
}

/// Step 2 of the protocol: the task's state is saved; arm its token and
/// register it with what it waits for, re-checking each condition.
fn park(rt: &mut Runtime, cx: &WorkerCx<Job>, cell: &Arc<TaskCell>, w: Wait) {
    *cell.blocked_on.lock() = w.describe();
    if cell.is_cancel_requested() {
        // Cancellation is sticky: every suspension of a cancelled task
        // throws at once.
        *cell.resume.lock() = Some(Resume::Cancel);
        cx.push_local(Job::Run(cell.clone()));
        return;
    }
    if let Wait::All(array) = w {
        park_all(rt, cell, array);
        return;
    }
    // Registrations of an earlier `await [..]` must not claim this wait.
    cell.all_gen.store(0, Ordering::Release);
    let gen = cell.token.arm();
    let waiter = Waiter { task: cell.clone(), gen, tag: 0 };
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
                    *cell.resume.lock() = Some(Resume::Retry);
                    rt.woken.push(cell.clone());
                    return;
                }
            }
        }
        Wait::Until(deadline) if deadline <= std::time::Instant::now() => {
            // `Task.yield()` / `sleep(0)`: straight to the back of this
            // worker's queue, no timer round trip.
            if waiter.claim() {
                *cell.resume.lock() = Some(Resume::Value(Value::UNDEFINED));
                cx.push_local(Job::Run(cell.clone()));
            }
        }
        Wait::Until(deadline) => {
            let key = cx.scheduler().sleep_until(deadline, Job::Timer(cell.clone(), gen));
            cell.timers.lock().push(key);
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
                    let key = cx.scheduler().sleep_until(t.at, Job::Fire(t));
                    if own {
                        cell.timers.lock().push(key);
                    }
                }
                match r {
                    Registered::Queued => {}
                    Registered::Ready(r) => {
                        // The object claimed the task for us.
                        *cell.resume.lock() = Some(r);
                        rt.woken.push(cell.clone());
                    }
                    Registered::Again => {
                        // Claimed, but the partner vanished: wait again.
                        if cell.is_cancel_requested() {
                            *cell.resume.lock() = Some(Resume::Cancel);
                            rt.woken.push(cell.clone());
                        } else {
                            waiter.gen = cell.token.arm();
                            continue;
                        }
                    }
                }
                break;
            }
        }
    }
}

/// `Uncaught <error stack>` on stderr.
pub fn report_uncaught(rt: &mut Runtime, e: Value) {
    let text = uncaught_text(e);
    rt.write_stderr(&format!("Uncaught {text}\n"));
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
