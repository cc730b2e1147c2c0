//! Loaded programs: [`Instance`], and calls into them ([`Call`]).
//!
//! An instance is a [`LiveRun`]: its main module ran once, and its heap,
//! globals and workers stay until the last clone of the instance (or of a
//! [`Call`] on it) is dropped. A call started with
//! [`Instance::call_async`] is a new task on the instance's workers,
//! started by a host job (only a worker may allocate): many calls, from
//! any threads, run in parallel like any tasks. The task's `on_done` hook
//! converts its outcome on the worker and hands it to the [`CallState`]
//! the host waits on (blocking, or as a `Future`). A synchronous
//! [`Instance::call`] runs on the calling thread as a plain call
//! (`LiveRun::call_here`) and gets a task and a `CallState` only if it
//! suspends.

use super::{from_host, to_host, HostError, HostTable, HostValue, Limits, ScriptError};
use super::{FromValue, IntoArgs, IntoValue};
use crate::compiler::Program;
use crate::driver::{Handle, HereEnd, LiveRun};
use crate::limits::{Guard, OnLimit};
use crate::sync::{Outcome, Resume, TaskCell};
use crate::vm::interp::TaskInterpreter;
use crate::vm::object::Body;
use crate::vm::{ops, Runtime, Value};
use parking_lot::Mutex;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

pub(crate) struct InstanceInner {
    pub(crate) live: LiveRun,
    pub(crate) program: Program,
    pub(crate) table: Arc<HostTable>,
    pub(crate) limits: Limits,
    /// Calls need a guard: the instance has limits or an interrupt
    /// callback (without, a guard would check nothing).
    guarded: bool,
    /// What the VM grants: code given to [`Instance::eval`] is compiled
    /// against it, as the program was.
    pub(crate) capabilities: crate::std::Capabilities,
    /// What code given to [`Instance::eval`] sees and extends.
    evals: Mutex<EvalScope>,
    /// Calls not finished yet, failed at once if the script calls `exit()`.
    pending: Mutex<Vec<Weak<CallState>>>,
}

/// A program loaded once and kept: its top level ran, its globals and
/// exports stay alive, and the host calls its exported functions and
/// reads and writes its exports, from any thread, as often as it likes.
/// Made by [`Vm::load`](super::Vm::load).
///
/// `Instance` is `Send + Sync` and cheap to clone (a shared handle); the
/// program's workers stop when the last clone (and the last [`Call`]) is
/// dropped.
#[derive(Clone)]
pub struct Instance {
    pub(crate) inner: Arc<InstanceInner>,
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.inner.program.exports.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Instance").field("exports", &names).finish()
    }
}

impl Instance {
    pub(crate) fn new(
        live: LiveRun,
        program: Program,
        table: Arc<HostTable>,
        limits: Limits,
        capabilities: crate::std::Capabilities,
    ) -> Instance {
        // Host functions and exports, by name, read-only (an export
        // shadows a host function of the same name, as in the program's
        // own code).
        let first = program.host_base;
        let mut bindings = std::collections::HashMap::new();
        for (i, name) in program.global_names.iter().skip(first).take(program.host_globals).enumerate() {
            bindings.insert(name.clone(), ((first + i) as u32, true));
        }
        for (name, slot) in &program.exports {
            bindings.insert(name.clone(), (*slot, true));
        }
        let scope = crate::compiler::LiveScope {
            slots: program.global_names.len(),
            bindings,
            sources: program.sources.clone(),
        };
        let evals = Mutex::new(EvalScope { scope, count: 0 });
        let guarded = limits != Limits::none() || table.interrupt.is_some();
        let inner = Arc::new(InstanceInner {
            live,
            program,
            table,
            limits,
            guarded,
            capabilities,
            evals,
            pending: Mutex::new(Vec::new()),
        });
        let weak = Arc::downgrade(&inner);
        inner.live.on_exit(Box::new(move |code| {
            if let Some(inner) = weak.upgrade() {
                for call in inner.pending.lock().drain(..).filter_map(|w| w.upgrade()) {
                    call.finish(Err(HostError::Exit(code)));
                }
            }
        }));
        Instance { inner }
    }

    fn handle(&self) -> &Handle {
        self.inner.live.handle()
    }

    /// The names the main module exports, sorted.
    pub fn exports(&self) -> impl Iterator<Item = &str> {
        self.inner.program.exports.iter().map(|(n, _)| n.as_str())
    }

    fn slot(&self, name: &str) -> Result<u32, HostError> {
        self.inner
            .program
            .exports
            .iter()
            .find(|(n, _)| n == name)
            .map(|&(_, g)| g)
            .ok_or_else(|| HostError::Export(format!("the program exports no `{name}`")))
    }

    /// Runs `f` on a worker and waits for its result. Not to be called
    /// from inside a host function of this instance's own program (its
    /// worker would wait for itself).
    fn on_worker<R: Send + 'static>(&self, f: impl FnOnce(&mut Runtime) -> R + Send + 'static) -> Result<R, HostError> {
        if let Some(code) = self.inner.live.exited() {
            return Err(HostError::Exit(code));
        }
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.handle().on_runtime(Box::new(move |rt| {
            let _ = tx.send(f(rt));
        }));
        // The job is dropped unrun only if the program exits meanwhile.
        rx.recv().map_err(|_| HostError::Exit(self.inner.live.exited().unwrap_or(0)))
    }

    /// The value of export `name`, converted (a live binding: what the
    /// script last assigned).
    pub fn get<T: FromValue>(&self, name: &str) -> Result<T, HostError> {
        let slot = self.slot(name)?;
        let owned = name.to_string();
        let v = self.on_worker(move |rt| {
            let v = rt.world.globals.get(slot as usize);
            if v == Value::HOLE {
                return Err(HostError::Export(format!("export `{owned}` is not initialized yet")));
            }
            to_host(v, &mut Vec::new()).map_err(HostError::Conversion)
        })??;
        T::from_value(v)
    }

    /// Assigns `value` to export `name` (the script sees the new value at
    /// once, as it sees its own assignments).
    pub fn set(&self, name: &str, value: impl IntoValue) -> Result<(), HostError> {
        let slot = self.slot(name)?;
        let value = value.into_value();
        self.on_worker(move |rt| {
            let v = from_host(rt, &value);
            rt.world.globals.set(slot as usize, v);
        })
    }

    /// Calls exported function `name` with `args` and waits for its result
    /// (an `async` function's too): `instance.call::<f64>("add", (1, 2))`.
    /// To the script the call is a task of its own; the instance's
    /// [`Limits`] apply to it.
    ///
    /// The call runs on the calling thread (which takes part in the
    /// program's collections while it does, as the workers do), so a
    /// short function costs no thread hand-off and no task creation; if
    /// it suspends (awaits, sleeps, waits on a channel) it is left to the
    /// workers and this waits for it. Calls from a host function of a
    /// running program (a worker thread, or a thread inside a call) go
    /// to this instance's workers instead.
    ///
    /// A host that calls the same function often resolves it once with
    /// [`Instance::function`] and calls the [`Function`].
    pub fn call<R: FromValue>(&self, name: &str, args: impl IntoArgs) -> Result<R, HostError> {
        self.call_slot(self.slot(name)?, name, args)
    }

    /// A handle on exported function `name`, resolved once and called as
    /// often as the host likes ([`Function::call`]) without looking the
    /// export up again: as `mlua::Function` or `rquickjs::Function` are
    /// kept. The handle names the export, a live binding: a call reads
    /// what the script last assigned to it (and fails with
    /// [`HostError::Export`] if that is not a function).
    pub fn function(&self, name: &str) -> Result<Function, HostError> {
        Ok(Function { instance: self.clone(), slot: self.slot(name)?, name: name.into() })
    }

    /// [`Instance::call`] of the export in global `slot`: as a plain call
    /// on this thread ([`LiveRun::call_here`]), which becomes a task (and
    /// a [`CallState`] to wait on) only if it suspends; from a worker
    /// thread, as a task on the workers. The arguments go straight into
    /// the callee's registers and the result is read straight from the
    /// script's value where their types allow (no [`HostValue`] between).
    fn call_slot<R: FromValue>(&self, slot: u32, name: &str, args: impl IntoArgs) -> Result<R, HostError> {
        if let Some(code) = self.inner.live.exited() {
            return Err(HostError::Exit(code));
        }
        if crate::driver::on_program_thread() {
            // A worker (or a thread inside a call): the general path.
            return R::from_value(self.begin_slot(slot, name, args.into_args(), self.inner.limits.clone()).wait()?);
        }
        let limits = &self.inner.limits;
        let interrupt = &self.inner.table.interrupt;
        // Without limits or an interrupt callback a guard would check
        // nothing: the call has none until it becomes a task.
        let guard = self.inner.guarded.then(|| Arc::new(Guard::new(limits, OnLimit::Cancel, interrupt.clone())));
        let deadline = limits.time.map(|t| (Instant::now() + t, t));
        let mut waiting = None;
        let end = self.inner.live.call_here(
            |rt, argv| {
                let f = rt.world.globals.get(slot as usize);
                if !ops::is_callable(f) {
                    return Err(Err(HostError::Export(format!("export `{name}` is not a function"))));
                }
                args.push_script(rt, argv);
                Ok(f)
            },
            guard.as_ref(),
            // Inlined: its result, a `Result` with a `HostError`, is then
            // made where the caller keeps it, not returned through memory
            // and copied (a measurable part of a short call).
            #[inline(always)]
            |_rt, end| match end {
                Ok(Outcome::Value(v)) => super::convert::from_script_value::<R>(v),
                Ok(o) => outcome_result(o, guard.as_deref()).and_then(R::from_value),
                Err(code) => Err(HostError::Exit(code)),
            },
            |_rt, cell| {
                let guard = guard.clone().unwrap_or_else(|| Arc::new(Guard::new(limits, OnLimit::Cancel, None)));
                let _ = cell.set_guard(guard.clone());
                let state = Arc::new(CallState::with_guard(guard));
                if self.track(&state) {
                    if let Some((at, t)) = deadline {
                        self.arm_time_limit(&state, at, t);
                    }
                    *state.cell.lock() = Some(cell.clone());
                    let fin = Finisher(state.clone());
                    cell.set_on_done(Box::new(move |_rt: &mut Runtime, o: Outcome| {
                        let state = fin.0.clone();
                        state.finish(outcome_result(o, Some(&state.guard)));
                        drop(fin);
                    }));
                }
                waiting = Some(state);
            },
        );
        match end {
            HereEnd::Done(r) => r,
            HereEnd::Promoted => R::from_value(waiting.expect("a promoted call has its state").wait()?),
        }
    }

    /// Starts a call of exported function `name` and returns at once: the
    /// [`Call`] is waited for, `.await`ed, or cancelled.
    pub fn call_async(&self, name: &str, args: impl IntoArgs) -> Call {
        self.begin(name, args.into_args(), self.inner.limits.clone())
    }

    /// [`Instance::call_async`] with other limits than the instance's
    /// (a per-call time-out).
    pub fn call_with(&self, name: &str, args: impl IntoArgs, limits: Limits) -> Call {
        self.begin(name, args.into_args(), limits)
    }

    /// Evaluates `src` inside the loaded program and returns its
    /// completion value (that of its last top-level expression statement,
    /// awaited if it is a promise or task):
    /// `instance.eval::<f64>("counter * 2")`. The code sees the program's exports (read-only, as a module
    /// importing them would: change them through the program's functions
    /// or [`Instance::set`]) and the host functions, and the top-level
    /// declarations of earlier `eval`s; its own
    /// declarations stay for later ones (at most
    /// [`LIVE_EXTRA_GLOBALS`](crate::driver::LIVE_EXTRA_GLOBALS) over the
    /// instance's life). It runs as a task, under the instance's
    /// [`Limits`]; it cannot import modules. A compile error is
    /// [`HostError::Compile`].
    pub fn eval<T: FromValue>(&self, src: &str) -> Result<T, HostError> {
        T::from_value(self.eval_start(src, true)?.wait()?)
    }

    /// Compiles `src` as [`Instance::eval`] does and starts it on the
    /// workers.
    pub fn eval_async(&self, src: &str) -> Result<Call, HostError> {
        self.eval_start(src, false)
    }

    /// Compiles `src` (see [`Instance::eval`]) and starts it: on this
    /// thread if `here` (as [`Instance::call`] runs a call), else on a
    /// worker.
    fn eval_start(&self, src: &str, here: bool) -> Result<Call, HostError> {
        let (program, sources) = {
            let mut evals = self.inner.evals.lock();
            evals.count += 1;
            let name = format!("<eval {}>", evals.count);
            let input = crate::compiler::LiveInput {
                capabilities: self.inner.capabilities,
                imports: false,
                returns_completion: true,
            };
            let (program, next) = crate::compiler::compile_live(&name, src, &evals.scope, input)?;
            let room = self.inner.program.global_names.len() + crate::driver::LIVE_EXTRA_GLOBALS;
            if program.global_base + program.global_names.len() > room {
                return Err(HostError::Internal(format!(
                    "eval: no room left for more top-level declarations ({} over the instance's life)",
                    crate::driver::LIVE_EXTRA_GLOBALS
                )));
            }
            let sources = Arc::new(next.sources.clone());
            evals.scope = next;
            (program, sources)
        };
        let state = Arc::new(CallState::new(&self.inner.limits, self.inner.table.interrupt.clone()));
        let call = Call { state: state.clone(), instance: self.clone() };
        if !self.track(&state) {
            return Ok(call);
        }
        let fin = Finisher(state);
        let start = move |rt: &mut Runtime| {
            let f = crate::driver::link_live(rt, &program, &sources);
            spawn_task(rt, fin, f, &[])
        };
        let start = if here {
            match self.inner.live.run_here(start) {
                Ok(()) => return Ok(call),
                Err(start) => start,
            }
        } else {
            start
        };
        self.handle().on_runtime(Box::new(move |rt| {
            start(rt);
        }));
        Ok(call)
    }

    /// Registers a call as pending (failed if the program exits); false if
    /// it has exited already (the call is failed).
    fn track(&self, state: &Arc<CallState>) -> bool {
        {
            let mut pending = self.inner.pending.lock();
            pending.retain(|w| w.strong_count() > 0);
            pending.push(Arc::downgrade(state));
        }
        if let Some(code) = self.inner.live.exited() {
            state.finish(Err(HostError::Exit(code)));
            return false;
        }
        true
    }

    /// Cancels the call at `deadline` (its time limit `t`) if it is still
    /// running then: a suspended task is woken with the cancellation.
    fn arm_time_limit(&self, state: &Arc<CallState>, deadline: Instant, t: Duration) {
        let st = Arc::downgrade(state);
        let key = self.handle().at(
            deadline,
            Box::new(move |rt| {
                if let Some(st) = st.upgrade() {
                    st.guard.cancel(format!("time limit of {t:?} reached"));
                    st.deliver_cancel(rt);
                }
            }),
        );
        *state.timer.lock() = Some((self.handle().clone(), key));
    }

    /// Starts a call as a task on the workers.
    fn begin(&self, name: &str, args: Vec<HostValue>, limits: Limits) -> Call {
        match self.slot(name) {
            Ok(slot) => self.begin_slot(slot, name, args, limits),
            Err(e) => {
                let state = Arc::new(CallState::new(&limits, self.inner.table.interrupt.clone()));
                state.finish(Err(e));
                Call { state, instance: self.clone() }
            }
        }
    }

    /// [`Instance::begin`] of the export in global `slot`.
    fn begin_slot(&self, slot: u32, name: &str, args: Vec<HostValue>, limits: Limits) -> Call {
        let state = Arc::new(CallState::new(&limits, self.inner.table.interrupt.clone()));
        let call = Call { state: state.clone(), instance: self.clone() };
        if !self.track(&state) {
            return call;
        }
        if let Some(t) = limits.time {
            self.arm_time_limit(&state, Instant::now() + t, t);
        }
        let finisher = Finisher(state.clone());
        let name = name.to_string();
        let start = move |rt: &mut Runtime| spawn_call(rt, finisher, slot, &name, &args);
        self.handle().on_runtime(Box::new(move |rt| {
            start(rt);
        }));
        call
    }
}

/// See [`InstanceInner::evals`].
struct EvalScope {
    /// The program's and earlier evals' slots, the names eval'd code sees
    /// (exports and host functions read-only, earlier evals' declarations)
    /// and the files (each eval's is kept: functions it declared may
    /// outlive it, and their stack frames point into it).
    scope: crate::compiler::LiveScope,
    /// Evals so far (each names its file `<eval N>`).
    count: u64,
}

/// Fails the call if the job or the task that should finish it is
/// dropped unrun (the instance is going away).
struct Finisher(Arc<CallState>);

impl Drop for Finisher {
    fn drop(&mut self) {
        let reason = self.0.guard.cancel_reason();
        self.0.finish(Err(HostError::Cancelled(reason.unwrap_or_else(|| "the instance was shut down".into()))));
    }
}

/// On a mutator (a worker, or a caller running the call itself): starts
/// the task of a call; returns its cell.
fn spawn_call(rt: &mut Runtime, fin: Finisher, slot: u32, name: &str, args: &[HostValue]) -> Option<Arc<TaskCell>> {
    if fin.0.guard.is_stopped() {
        return None; // cancelled before it started: the finisher reports it
    }
    let f = rt.world.globals.get(slot as usize);
    if !ops::is_callable(f) {
        fin.0.finish(Err(HostError::Export(format!("export `{name}` is not a function"))));
        return None;
    }
    let argv: Vec<Value> = args.iter().map(|a| from_host(rt, a)).collect();
    spawn_task(rt, fin, f, &argv)
}

/// On a mutator: starts `f(...argv)` as the task of a call (queued when
/// the worker's job returns, or run by the caller); returns its cell.
fn spawn_task(rt: &mut Runtime, fin: Finisher, f: Value, argv: &[Value]) -> Option<Arc<TaskCell>> {
    match TaskInterpreter::new(rt).spawn(f, Value::UNDEFINED, argv) {
        Ok(task) => {
            let Some(Body::Task(cell)) = task.as_obj().map(|o| &o.body) else { unreachable!("spawn returns a task") };
            // The task is queued when this job returns, so both are in
            // place before it first runs.
            let _ = cell.set_guard(fin.0.guard.clone());
            *fin.0.cell.lock() = Some(cell.clone());
            cell.set_on_done(Box::new(move |_rt: &mut Runtime, o: Outcome| {
                let state = fin.0.clone();
                state.finish(outcome_result(o, Some(&state.guard)));
                drop(fin);
            }));
            Some(cell.clone())
        }
        Err(e) => {
            fin.0.finish(Err(HostError::Uncaught(Box::new(ScriptError::from_value(e)))));
            None
        }
    }
}

/// A finished task's outcome as the host sees it.
pub(crate) fn outcome_result(o: Outcome, guard: Option<&Guard>) -> Result<HostValue, HostError> {
    let reason = || guard.and_then(|g| g.cancel_reason());
    match o {
        Outcome::Value(v) => to_host(v, &mut Vec::new()).map_err(HostError::Conversion),
        Outcome::Error(e) => {
            let err = ScriptError::from_value(e);
            // A task of the run stopped by a limit, its cancellation
            // rethrown by an `await` of the run's own task: the run was
            // stopped, for the guard's reason.
            if err.name == "TaskCancelledError" {
                if let Some(reason) = reason() {
                    return Err(HostError::Cancelled(reason));
                }
            }
            Err(HostError::Uncaught(Box::new(err)))
        }
        Outcome::Cancelled(e) => {
            Err(HostError::Cancelled(reason().unwrap_or_else(|| ScriptError::from_value(e).message)))
        }
    }
}

pub(crate) struct CallState {
    result: super::ResultCell,
    pub(crate) guard: Arc<Guard>,
    /// The call's task, once started.
    cell: Mutex<Option<Arc<TaskCell>>>,
    /// The time-limit timer, released when the call ends.
    timer: Mutex<Option<(Handle, crate::scheduler::TimerKey)>>,
}

impl CallState {
    pub(crate) fn new(limits: &Limits, interrupt: Option<super::Interrupt>) -> CallState {
        CallState::with_guard(Arc::new(Guard::new(limits, OnLimit::Cancel, interrupt)))
    }

    fn with_guard(guard: Arc<Guard>) -> CallState {
        CallState { result: super::ResultCell::default(), guard, cell: Mutex::new(None), timer: Mutex::new(None) }
    }

    /// Records the result (only the first one counts) and wakes waiters.
    pub(crate) fn finish(&self, r: Result<HostValue, HostError>) {
        if !self.result.set(r) {
            return;
        }
        if let Some((h, key)) = self.timer.lock().take() {
            h.release(key);
        }
    }

    /// On a worker: wakes the call's task with `TaskCancelledError` if it
    /// is suspended; a running one sees it where it is next preempted
    /// (its guard is stopped).
    fn deliver_cancel(&self, rt: &mut Runtime) {
        if let Some(cell) = self.cell.lock().clone() {
            if cell.request_cancel() {
                cell.resume.lock().set(Resume::Cancel);
                rt.woken.push(cell);
            }
        }
    }

    /// Blocks until the result is in.
    pub(crate) fn wait(&self) -> Result<HostValue, HostError> {
        self.result.wait()
    }

    fn result(&self) -> Option<Result<HostValue, HostError>> {
        self.result.get()
    }
}

/// A call into an [`Instance`] ([`Instance::call_async`]): wait for it,
/// `.await` it (it is a [`Future`], usable from any executor), or cancel
/// it. Dropping it does not cancel the call.
pub struct Call {
    state: Arc<CallState>,
    instance: Instance,
}

impl std::fmt::Debug for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Call").field("finished", &self.is_finished()).finish()
    }
}

impl Call {
    /// Blocks until the call ends; its result.
    pub fn wait(self) -> Result<HostValue, HostError> {
        self.state.wait()
    }

    /// Waits at most `timeout`: `None` if the call is still running.
    pub fn wait_timeout(&self, timeout: Duration) -> Option<Result<HostValue, HostError>> {
        self.state.result.wait_timeout(timeout)
    }

    /// A handle that cancels this call (see [`Call::cancel`]) after the
    /// `Call` itself was given away, e.g. to `tokio::time::timeout`.
    pub fn canceller(&self) -> Canceller {
        Canceller { state: self.state.clone(), instance: self.instance.clone() }
    }

    /// Whether the call has ended.
    pub fn is_finished(&self) -> bool {
        self.state.result().is_some()
    }

    /// Cancels the call: its task gets a `TaskCancelledError` at its
    /// next suspension, or where it is next preempted if it is computing
    /// (within one time slice, so `while (true) {}` stops too); if it
    /// catches that and goes on, it is ended at the next preemption. The
    /// call ends with [`HostError::Cancelled`]. Nothing happens if it has
    /// already ended.
    pub fn cancel(&self) {
        cancel(&self.state, &self.instance);
    }
}

fn cancel(state: &Arc<CallState>, instance: &Instance) {
    if state.result().is_some() {
        return;
    }
    state.guard.cancel("cancelled by the host");
    let st = state.clone();
    instance.handle().on_runtime(Box::new(move |rt| st.deliver_cancel(rt)));
}

/// Cancels a [`Call`] from elsewhere ([`Call::canceller`]).
#[derive(Clone)]
pub struct Canceller {
    state: Arc<CallState>,
    instance: Instance,
}

impl std::fmt::Debug for Canceller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Canceller").finish()
    }
}

impl Canceller {
    /// As [`Call::cancel`].
    pub fn cancel(&self) {
        cancel(&self.state, &self.instance);
    }
}

impl Future for Call {
    type Output = Result<HostValue, HostError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.state.result.poll(cx)
    }
}

/// An exported function of an [`Instance`], resolved once
/// ([`Instance::function`]) and called from Rust as often as the host
/// likes, from any thread: `let add = instance.function("add")?;
/// add.call::<f64>((1, 2))?`. Calls are those of [`Instance::call`] and
/// its siblings without the look-up of the export by name.
///
/// `Send + Sync` and cheap to clone; it keeps the instance alive.
#[derive(Clone)]
pub struct Function {
    instance: Instance,
    slot: u32,
    name: Arc<str>,
}

impl std::fmt::Debug for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Function").field("name", &self.name).finish()
    }
}

impl Function {
    /// The export's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The instance the function belongs to.
    pub fn instance(&self) -> &Instance {
        &self.instance
    }

    /// Calls the function with `args` and waits for its result, as
    /// [`Instance::call`] does: on the calling thread, a task of its own
    /// to the script only if it suspends, under the instance's
    /// [`Limits`]. The arguments are written straight into the callee's
    /// registers, and the result read straight from its value, where
    /// their types allow (numbers, booleans, strings, options of them).
    pub fn call<R: FromValue>(&self, args: impl IntoArgs) -> Result<R, HostError> {
        self.instance.call_slot(self.slot, &self.name, args)
    }

    /// Starts a call and returns at once, as [`Instance::call_async`].
    pub fn call_async(&self, args: impl IntoArgs) -> Call {
        self.instance.begin_slot(self.slot, &self.name, args.into_args(), self.instance.inner.limits.clone())
    }

    /// [`Function::call_async`] with other limits than the instance's,
    /// as [`Instance::call_with`].
    pub fn call_with(&self, args: impl IntoArgs, limits: Limits) -> Call {
        self.instance.begin_slot(self.slot, &self.name, args.into_args(), limits)
    }
}
