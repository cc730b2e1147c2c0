//! The embedding API: run Raya programs from a Rust program.
//!
//! ```no_run
//! use raya_engine::{ExternalPromise, HostValue, Vm};
//!
//! let vm = Vm::builder().workers(4).build();
//! vm.register_fn("add", |args: &[HostValue]| {
//!     let a = args.first().and_then(HostValue::as_number).unwrap_or(0.0);
//!     let b = args.get(1).and_then(HostValue::as_number).unwrap_or(0.0);
//!     Ok(HostValue::Number(a + b))
//! });
//! vm.register_async_fn("fetch", |_args, promise: ExternalPromise| {
//!     std::thread::spawn(move || {
//!         let _ = promise.resolve(HostValue::from("done"));
//!     });
//! });
//! let program = vm.compile_source("app.raya", "console.log(add(1, 2), await fetch());").unwrap();
//! let v = vm.execute(&program).unwrap();   // blocks until the program ends
//! let h = vm.execute_async(&program);      // returns at once
//! let again = h.wait();                    // or `.await` it
//! # let _ = (v, again);
//! ```
//!
//! # How it works
//!
//! * Host functions are globals of the script: [`Vm::compile_source`] and
//!   [`Vm::compile_file`] compile with the registered names as extra
//!   globals (slots right after the built-ins), and [`Vm::execute`] fills
//!   those slots with natives. A native is a plain `fn`, so each slot gets
//!   one of [`MAX_HOST_FNS`] trampolines that finds its closure by index in
//!   the running program's host table (reached through
//!   [`crate::driver::current_handle`]).
//! * Values cross the boundary as owned [`HostValue`]s (deep copies), so no
//!   GC pointer escapes.
//! * An [`ExternalPromise`] settles its promise from any thread: the
//!   settlement (which allocates the value and wakes the awaiting tasks)
//!   runs as a host job on a worker, because only workers may touch the
//!   heap. While it is pending it keeps the program alive (a never-firing
//!   scheduler timer), so the program is neither finished nor deadlocked.
//!   Settled on a worker thread inside a host call, the settlement is
//!   applied on that worker right after the host closure returns.
//! * A blocking host function runs on the [`Vm`]'s blocking pool
//!   ([`crate::scheduler::BlockingPool`]: at most
//!   [`VmBuilder::blocking_threads`] threads, started on demand, shared by
//!   every program the `Vm` runs; calls beyond that wait their turn in
//!   FIFO order); the calling task is suspended on a wait object that the
//!   pool thread completes the same way, so the worker goes on with other
//!   tasks.
//! * Built-in modules that reach the outside world (`std:fs`,
//!   `std:process`, `std:net`) are importable only with the capability the
//!   host granted ([`VmBuilder::allow`]; none by default). Importing one
//!   that was not granted is a compile error; a program compiled elsewhere
//!   with more capabilities is refused by [`Vm::execute`]
//!   ([`HostError::Capability`]). What was not granted is never installed.

#![warn(missing_docs)]

use crate::compiler::{self, CompileError, Program};
use crate::driver::{self, Handle, RunOptions};
use crate::scheduler::{BlockingPool, DEFAULT_BLOCKING_KEEP_ALIVE, DEFAULT_MAX_BLOCKING_THREADS};
pub use crate::std::{Capabilities, Capability};
use crate::sync::{Outcome, PromiseCell, Resume};
use crate::vm::atom::Atom;
use crate::vm::native::NativeCtx;
use crate::vm::object::{Body, Function, Mut, Native, NativeFn, ObjectData, PropMap};
use crate::vm::task::Task;
use crate::vm::{ops, Runtime, Value};
use parking_lot::{Condvar, Mutex};
use std::cell::RefCell;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// The most host functions one [`Vm`] can register.
pub const MAX_HOST_FNS: usize = 256;

// ---- values ----------------------------------------------------------------------

/// A value crossing the host boundary: an owned, deep copy of a script value.
///
/// Script → host: `undefined`, `null`, booleans, numbers, strings, arrays
/// and objects (own data properties; a class instance or an error converts
/// as its fields) convert; functions, tasks, promises, channels, maps and
/// the like, and cyclic structures, are a conversion error. Host → script
/// always succeeds; objects become plain objects with their properties in
/// order.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum HostValue {
    /// `undefined`.
    #[default]
    Undefined,
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A number (Raya numbers are all `f64`).
    Number(f64),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<HostValue>),
    /// A plain object: its properties in order.
    Object(Vec<(String, HostValue)>),
}

impl HostValue {
    /// The number, if this is a `Number`.
    pub fn as_number(&self) -> Option<f64> {
        match self {
            HostValue::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// The text, if this is a `String`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            HostValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, if this is a `Bool`.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            HostValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// Property `key` of an `Object` (the first with that name).
    pub fn get(&self, key: &str) -> Option<&HostValue> {
        match self {
            HostValue::Object(props) => props.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Whether this is `Undefined`.
    pub fn is_undefined(&self) -> bool {
        matches!(self, HostValue::Undefined)
    }
}

impl From<f64> for HostValue {
    fn from(n: f64) -> Self {
        HostValue::Number(n)
    }
}

impl From<i32> for HostValue {
    fn from(n: i32) -> Self {
        HostValue::Number(n as f64)
    }
}

impl From<bool> for HostValue {
    fn from(b: bool) -> Self {
        HostValue::Bool(b)
    }
}

impl From<&str> for HostValue {
    fn from(s: &str) -> Self {
        HostValue::String(s.to_string())
    }
}

impl From<String> for HostValue {
    fn from(s: String) -> Self {
        HostValue::String(s)
    }
}

impl From<Vec<HostValue>> for HostValue {
    fn from(v: Vec<HostValue>) -> Self {
        HostValue::Array(v)
    }
}

/// Converts a script value to a host value (see [`HostValue`]).
fn to_host(v: Value, stack: &mut Vec<usize>) -> Result<HostValue, String> {
    if v.is_undefined() {
        return Ok(HostValue::Undefined);
    }
    if v.is_null() {
        return Ok(HostValue::Null);
    }
    if v.is_bool() {
        return Ok(HostValue::Bool(v == Value::TRUE));
    }
    if v.is_number() {
        return Ok(HostValue::Number(v.as_number()));
    }
    let Some(obj) = v.as_obj() else {
        return Err(format!("cannot pass a {} to the host", ops::type_of(v)));
    };
    let id = obj as *const _ as usize;
    if stack.contains(&id) {
        return Err("cannot pass a cyclic structure to the host".into());
    }
    stack.push(id);
    let r = match &obj.body {
        Body::Str(s) => Ok(HostValue::String(s.s.to_string())),
        Body::Array(a) => {
            let items = a.lock().clone();
            items.into_iter().map(|x| to_host(x, stack)).collect::<Result<Vec<_>, _>>().map(HostValue::Array)
        }
        Body::Object(d) => {
            let pairs: Vec<(Atom, Value)> = {
                let d = d.lock();
                d.props.keys().iter().copied().zip(d.props.vals().iter().copied()).collect()
            };
            let mut props = Vec::with_capacity(pairs.len());
            for (k, x) in pairs {
                if matches!(x.as_obj().map(|o| &o.body), Some(Body::Accessor(_))) {
                    continue;
                }
                props.push((k.as_str().to_string(), to_host(x, stack)?));
            }
            Ok(HostValue::Object(props))
        }
        _ => Err(format!("cannot pass a {} to the host", kind_name(&obj.body))),
    };
    stack.pop();
    r
}

fn kind_name(b: &Body) -> &'static str {
    match b {
        Body::Function(_) | Body::Class(_) => "function",
        Body::Task(_) => "Task",
        Body::Promise(_) => "Promise",
        Body::Channel(_) => "Channel",
        Body::Map(_) => "Map",
        Body::Set(_) => "Set",
        Body::Mutex(_) => "Mutex",
        Body::WaitGroup(_) => "WaitGroup",
        Body::Semaphore(_) => "Semaphore",
        Body::Host(h) => h.desc.name,
        _ => "value of this kind",
    }
}

/// Converts a host value to a new script value (on a worker: it allocates).
fn from_host(rt: &mut Runtime, v: &HostValue) -> Value {
    match v {
        HostValue::Undefined => Value::UNDEFINED,
        HostValue::Null => Value::NULL,
        HostValue::Bool(b) => Value::bool(*b),
        HostValue::Number(n) => Value::number(*n),
        HostValue::String(s) => rt.heap.alloc_str(s.as_str()),
        HostValue::Array(items) => {
            let vals: Vec<Value> = items.iter().map(|x| from_host(rt, x)).collect();
            rt.heap.alloc_array(vals)
        }
        HostValue::Object(props) => {
            let mut map = PropMap::new();
            for (k, x) in props {
                let val = from_host(rt, x);
                map.set(Atom::intern(k), val);
            }
            rt.heap.alloc(Body::Object(Mut::new(ObjectData { class: Value::UNDEFINED, props: map, frozen: false })))
        }
    }
}

/// A new `Error` with `message` (its stack has no script frames).
fn host_error(rt: &mut Runtime, message: &str) -> Value {
    let class = rt.realm.classes.error;
    rt.make_error(&Task::new(0), class, message)
}

// ---- errors ------------------------------------------------------------------------

/// Why a host-side operation failed.
#[derive(Clone, Debug)]
pub enum HostError {
    /// The program did not compile; [`CompileError::render`] formats the
    /// diagnostics.
    Compile(CompileError),
    /// The main task threw: the error's stack (`Error: message` followed by
    /// its frames), as printed after `Uncaught` on stderr.
    Uncaught(String),
    /// The program called `exit(code)` with a non-zero code, or ended with
    /// unhandled task errors (code 1), as `raya run` would exit.
    Exit(i32),
    /// All tasks were blocked with the main task unfinished (the report is
    /// on stderr).
    Deadlock,
    /// An [`ExternalPromise`] was settled a second time (nothing happened).
    AlreadySettled,
    /// A value could not cross the boundary (see [`HostValue`]).
    Conversion(String),
    /// The program imports a built-in module this VM does not allow (it
    /// was compiled elsewhere, with more capabilities): nothing ran.
    Capability(String),
    /// The program was stopped by a limit of the VM
    /// ([`VmBuilder::step_limit`], [`VmBuilder::time_limit`]): "step limit
    /// of N reached", "time limit of N ms reached".
    Limit(String),
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostError::Compile(e) => write!(f, "{e}"),
            HostError::Uncaught(s) => write!(f, "Uncaught {s}"),
            HostError::Exit(code) => write!(f, "the program exited with code {code}"),
            HostError::Deadlock => f.write_str("DeadlockError: all tasks are blocked"),
            HostError::AlreadySettled => f.write_str("the external promise is already settled"),
            HostError::Conversion(s) => write!(f, "conversion error: {s}"),
            HostError::Capability(s) => f.write_str(s),
            HostError::Limit(s) => write!(f, "stopped: {s}"),
        }
    }
}

impl std::error::Error for HostError {}

/// Compile errors compare by their rendered text.
impl PartialEq for HostError {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (HostError::Compile(a), HostError::Compile(b)) => a.render() == b.render(),
            (HostError::Uncaught(a), HostError::Uncaught(b)) => a == b,
            (HostError::Exit(a), HostError::Exit(b)) => a == b,
            (HostError::Deadlock, HostError::Deadlock) => true,
            (HostError::AlreadySettled, HostError::AlreadySettled) => true,
            (HostError::Conversion(a), HostError::Conversion(b)) => a == b,
            (HostError::Capability(a), HostError::Capability(b)) => a == b,
            _ => false,
        }
    }
}

impl From<CompileError> for HostError {
    fn from(e: CompileError) -> Self {
        HostError::Compile(e)
    }
}

// ---- host functions ------------------------------------------------------------------

type SyncFn = Arc<dyn Fn(&[HostValue]) -> Result<HostValue, String> + Send + Sync>;
type AsyncFn = Arc<dyn Fn(Vec<HostValue>, ExternalPromise) + Send + Sync>;

#[derive(Clone)]
enum HostFn {
    Sync(SyncFn),
    Blocking(SyncFn),
    Async(AsyncFn),
}

/// The host functions of one run, by trampoline index.
struct HostTable {
    fns: Vec<(&'static str, HostFn)>,
}

/// Function names live as long as the process (a native's name is
/// `&'static str`); each distinct name is leaked once.
fn intern_name(name: &str) -> &'static str {
    static NAMES: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut g = NAMES.lock();
    if let Some(n) = g.iter().find(|n| **n == name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_string().into_boxed_str());
    g.push(n);
    n
}

fn trampoline<const I: usize>(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    call_host(ctx, I, args)
}

macro_rules! tramps16 {
    ($hi:literal) => {
        [
            trampoline::<{ $hi * 16 }> as NativeFn,
            trampoline::<{ $hi * 16 + 1 }>,
            trampoline::<{ $hi * 16 + 2 }>,
            trampoline::<{ $hi * 16 + 3 }>,
            trampoline::<{ $hi * 16 + 4 }>,
            trampoline::<{ $hi * 16 + 5 }>,
            trampoline::<{ $hi * 16 + 6 }>,
            trampoline::<{ $hi * 16 + 7 }>,
            trampoline::<{ $hi * 16 + 8 }>,
            trampoline::<{ $hi * 16 + 9 }>,
            trampoline::<{ $hi * 16 + 10 }>,
            trampoline::<{ $hi * 16 + 11 }>,
            trampoline::<{ $hi * 16 + 12 }>,
            trampoline::<{ $hi * 16 + 13 }>,
            trampoline::<{ $hi * 16 + 14 }>,
            trampoline::<{ $hi * 16 + 15 }>,
        ]
    };
}

/// One native per host-function index (`TRAMPOLINES[i / 16][i % 16]`).
static TRAMPOLINES: [[NativeFn; 16]; 16] = [
    tramps16!(0),
    tramps16!(1),
    tramps16!(2),
    tramps16!(3),
    tramps16!(4),
    tramps16!(5),
    tramps16!(6),
    tramps16!(7),
    tramps16!(8),
    tramps16!(9),
    tramps16!(10),
    tramps16!(11),
    tramps16!(12),
    tramps16!(13),
    tramps16!(14),
    tramps16!(15),
];

type Deferred = Box<dyn FnOnce(&mut Runtime) + Send>;

thread_local! {
    /// Set while a host closure runs on a worker: settlements of that
    /// program's promises are queued here and applied on the same worker
    /// when the closure returns.
    static HOST_CALL: RefCell<Option<(Handle, Vec<Deferred>)>> = const { RefCell::new(None) };
}

/// Runs a host closure on a worker, catching panics; then applies the
/// settlements it made.
fn in_host_call<R>(
    handle: &Handle,
    rt: &mut Runtime,
    name: &str,
    f: impl FnOnce() -> Result<R, String>,
) -> Result<R, String> {
    let prev = HOST_CALL.with(|c| c.borrow_mut().replace((handle.clone(), Vec::new())));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err(format!("host function `{name}` panicked")));
    let deferred =
        HOST_CALL.with(|c| std::mem::replace(&mut *c.borrow_mut(), prev)).map(|(_, d)| d).unwrap_or_default();
    for job in deferred {
        job(rt);
    }
    r
}

/// Runs `job` on a runtime of the program: when the host call returns if
/// the caller is inside one of that program's host calls, else as a job
/// on a worker.
fn on_runtime(handle: &Handle, job: Deferred) {
    let mut job = Some(job);
    // `try_with`: a promise dropped while its thread's locals are being
    // destroyed settles directly.
    let _ = HOST_CALL.try_with(|c| {
        if let Some((h, list)) = c.borrow_mut().as_mut() {
            if h.same_program(handle) {
                list.extend(job.take());
            }
        }
    });
    if let Some(job) = job {
        handle.on_runtime(job);
    }
}

fn call_host(ctx: &mut NativeCtx, index: usize, args: &[Value]) -> Result<Value, Value> {
    let table = driver::current_handle()
        .and_then(|h| h.host_data().cloned().and_then(|d| d.downcast::<HostTable>().ok()).map(|t| (h, t)));
    let Some((handle, table)) = table else {
        return Err(ctx.plain_error("host function called outside its program"));
    };
    let Some((name, f)) = table.fns.get(index).cloned() else {
        return Err(ctx.plain_error("unknown host function"));
    };
    let mut hargs = Vec::with_capacity(args.len());
    for &a in args {
        match to_host(a, &mut Vec::new()) {
            Ok(h) => hargs.push(h),
            Err(e) => return Err(ctx.type_error(format!("{name}: {e}"))),
        }
    }
    match f {
        HostFn::Sync(f) => match in_host_call(&handle, ctx.rt, name, || f(&hargs)) {
            Ok(v) => Ok(from_host(ctx.rt, &v)),
            Err(m) => Err(ctx.plain_error(m)),
        },
        HostFn::Async(f) => {
            let cell = Arc::new(PromiseCell { external: true, ..Default::default() });
            let promise = ctx.heap().alloc(Body::Promise(cell.clone()));
            let key = handle.keep_alive();
            let ext = ExternalPromise {
                inner: Arc::new(ExtInner { cell, handle: handle.clone(), key, settled: AtomicBool::new(false) }),
            };
            if let Err(m) = in_host_call(&handle, ctx.rt, name, move || {
                f(hargs, ext);
                Ok(())
            }) {
                // The closure panicked: `ext` was dropped (and so rejected).
                let _ = m;
            }
            Ok(promise)
        }
        HostFn::Blocking(f) => crate::std::io::block_on(
            ctx,
            format!("in blocking host function `{name}`"),
            move || {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&hargs)))
                    .unwrap_or_else(|_| Err(format!("host function `{name}` panicked")))
            },
            |rt, _, r| match r {
                Ok(v) => Resume::Value(from_host(rt, &v)),
                Err(m) => Resume::Throw(host_error(rt, &m)),
            },
        ),
    }
}

// ---- external promises ---------------------------------------------------------------

struct ExtInner {
    cell: Arc<PromiseCell>,
    handle: Handle,
    key: crate::scheduler::TimerKey,
    settled: AtomicBool,
}

/// The host side of the promise an async host function returns to the
/// script (see [`Vm::register_async_fn`]).
///
/// It is `Send + Sync`: resolve or reject it from any OS thread, exactly
/// once. Until then the program stays alive (a task awaiting it is not a
/// deadlock). Dropping it unsettled rejects the promise with
/// `Error: external promise dropped without being settled`.
pub struct ExternalPromise {
    inner: Arc<ExtInner>,
}

impl std::fmt::Debug for ExternalPromise {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalPromise").field("settled", &self.is_settled()).finish()
    }
}

impl ExternalPromise {
    /// Fulfils the promise with `v`: tasks awaiting it resume with the
    /// value. Returns [`HostError::AlreadySettled`] (and does nothing) if it
    /// was already resolved or rejected.
    pub fn resolve(&self, v: impl Into<HostValue>) -> Result<(), HostError> {
        self.settle(Ok(v.into()))
    }

    /// Rejects the promise: `await` throws an `Error` with this message,
    /// which the script can catch. Returns [`HostError::AlreadySettled`]
    /// (and does nothing) if it was already settled.
    pub fn reject(&self, message: impl Into<String>) -> Result<(), HostError> {
        self.settle(Err(message.into()))
    }

    /// Whether `resolve` or `reject` was called.
    pub fn is_settled(&self) -> bool {
        self.inner.settled.load(Ordering::Acquire)
    }

    fn settle(&self, r: Result<HostValue, String>) -> Result<(), HostError> {
        if self.inner.settled.swap(true, Ordering::AcqRel) {
            return Err(HostError::AlreadySettled);
        }
        let cell = self.inner.cell.clone();
        on_runtime(
            &self.inner.handle,
            Box::new(move |rt: &mut Runtime| {
                let o = match r {
                    Ok(v) => Outcome::Value(from_host(rt, &v)),
                    Err(m) => Outcome::Error(host_error(rt, &m)),
                };
                if let Some(waiters) = cell.completion.settle(o) {
                    if matches!(o, Outcome::Error(_)) && waiters.iter().any(|w| w.tag == crate::sync::TAG_AWAIT) {
                        cell.completion.inner.lock().observed = true;
                    }
                    driver::wake_all(rt, waiters, o);
                }
            }),
        );
        // After the wake-ups are queued: the program stays non-quiescent.
        self.inner.handle.release(self.inner.key);
        Ok(())
    }
}

impl Drop for ExternalPromise {
    fn drop(&mut self) {
        if !self.is_settled() {
            let _ = self.reject("external promise dropped without being settled");
        }
    }
}

// ---- the VM --------------------------------------------------------------------------

/// Configures a [`Vm`]; made by [`Vm::builder`].
#[derive(Clone, Debug, Default)]
pub struct VmBuilder {
    workers: Option<usize>,
    blocking_threads: Option<usize>,
    args: Vec<String>,
    capabilities: Capabilities,
    gc: crate::vm::heap::GcConfig,
    limits: driver::Limits,
}

impl VmBuilder {
    /// Scheduler worker count, as `raya run --workers N` (default: one per
    /// core; 0 counts as 1).
    pub fn workers(mut self, n: usize) -> Self {
        self.workers = Some(n);
        self
    }

    /// The most threads that run blocking host functions
    /// ([`Vm::register_blocking_fn`]) at the same time (default:
    /// [`DEFAULT_MAX_BLOCKING_THREADS`], 64). The threads are started on
    /// demand, shared by every program the VM runs, and exit after
    /// [`DEFAULT_BLOCKING_KEEP_ALIVE`] (10 s) without work; calls beyond
    /// the limit wait their turn, first come first served, with their
    /// tasks suspended (the workers go on). 0 counts as 1, as for
    /// [`workers`](Self::workers).
    pub fn blocking_threads(mut self, n: usize) -> Self {
        self.blocking_threads = Some(n.max(1));
        self
    }

    /// The script's `args` global.
    pub fn args(mut self, args: Vec<String>) -> Self {
        self.args = args;
        self
    }

    /// Lets programs import the built-in modules that need `c`
    /// (`Capability::Fs`: `std:fs`; `Capability::Process`: `std:process`;
    /// `Capability::Net`: `std:net`, `std:http`). By default a VM grants
    /// none: a script reaches only what the host allowed. Importing a
    /// module that was not allowed is a compile error naming the
    /// capability. (`raya run` allows all.)
    pub fn allow(mut self, c: Capability) -> Self {
        self.capabilities = self.capabilities.with(c);
        self
    }

    /// Grants every capability (see [`allow`](Self::allow)).
    pub fn allow_all(mut self) -> Self {
        self.capabilities = Capabilities::all();
        self
    }

    /// Collector pacing, as Go's `GOGC` (`raya run`'s `RAYA_GC_PERCENT`):
    /// the heap may grow by `percent` of the live heap after a collection
    /// before the next one starts (default 100: collect when the heap has
    /// doubled; never before it holds 8 MiB). `None` turns collection off
    /// except under [`max_heap`](Self::max_heap).
    pub fn gc_percent(mut self, percent: Option<u32>) -> Self {
        self.gc.percent = percent;
        self
    }

    /// A limit on the heap of each program the VM runs (`raya run
    /// --max-heap`): an allocation that would pass it forces a collection,
    /// and if the live heap is still too large it throws a catchable
    /// `RangeError` ("out of memory: heap limit 256 MB reached"); an
    /// uncaught one ends the program as [`HostError::Uncaught`]. What is
    /// measured is the heap's counted size (see `design/memory.md`).
    pub fn max_heap(mut self, bytes: usize) -> Self {
        self.gc.max_heap = Some(bytes);
        self
    }

    /// Stops each program after `steps` safepoints (calls and loop
    /// iterations, counted over all its tasks): a runaway script ends
    /// with [`HostError::Limit`] instead of running forever. The count is
    /// taken per time slice, so a program may run up to one slice (10,000
    /// safepoints) past it.
    pub fn step_limit(mut self, steps: u64) -> Self {
        self.limits.steps = Some(steps);
        self
    }

    /// Stops each program that runs longer than `limit` (wall-clock time,
    /// waiting included) with [`HostError::Limit`].
    pub fn time_limit(mut self, limit: std::time::Duration) -> Self {
        self.limits.time = Some(limit);
        self
    }

    /// At most `n` tasks alive at once in each program, the main task
    /// included: spawning one more throws a catchable `RangeError` ("too
    /// many tasks: limit of n live tasks reached").
    pub fn max_tasks(mut self, n: usize) -> Self {
        self.limits.tasks = Some(n);
        self
    }

    /// Makes the VM (and its blocking pool, which starts no thread yet).
    pub fn build(self) -> Vm {
        let max = self.blocking_threads.unwrap_or(DEFAULT_MAX_BLOCKING_THREADS);
        let pool = Arc::new(BlockingPool::new(max, DEFAULT_BLOCKING_KEEP_ALIVE));
        Vm { inner: Arc::new(VmInner { opts: self, fns: Mutex::new(Vec::new()), pool }) }
    }
}

struct VmInner {
    opts: VmBuilder,
    fns: Mutex<Vec<(&'static str, HostFn)>>,
    /// Shared by every run (each run's [`HostTable`] holds a clone), so it
    /// shuts down once the `Vm` and all its runs are gone.
    pool: Arc<BlockingPool>,
}

/// An embedded Raya engine: host functions plus a configuration; runs any
/// number of programs, one after another or at the same time (each run
/// has its own heap and scheduler; all share the VM's blocking pool).
/// Cloning is cheap (a shared handle).
#[derive(Clone)]
pub struct Vm {
    inner: Arc<VmInner>,
}

impl std::fmt::Debug for Vm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.inner.fns.lock().iter().map(|(n, _)| *n).collect();
        f.debug_struct("Vm").field("options", &self.inner.opts).field("host_fns", &names).finish()
    }
}

impl Default for Vm {
    fn default() -> Self {
        Vm::builder().build()
    }
}

impl Vm {
    /// A builder with default options.
    pub fn builder() -> VmBuilder {
        VmBuilder::default()
    }

    fn register(&self, name: &str, f: HostFn) -> &Self {
        let ok = name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
            && name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$');
        assert!(ok, "host function name `{name}` is not an identifier");
        assert!(!crate::builtins::GLOBAL_NAMES.contains(&name), "`{name}` is a built-in global");
        let mut fns = self.inner.fns.lock();
        if let Some(slot) = fns.iter_mut().find(|(n, _)| *n == name) {
            slot.1 = f;
        } else {
            assert!(fns.len() < MAX_HOST_FNS, "more than {MAX_HOST_FNS} host functions");
            fns.push((intern_name(name), f));
        }
        self
    }

    /// Registers a synchronous host function, a global `name` of programs
    /// compiled afterwards. It runs on the scheduler worker that calls it,
    /// so it must be quick; `Err(message)` (or a panic) is
    /// thrown into the script as an `Error`. Registering a name again
    /// replaces the function.
    ///
    /// # Panics
    /// If `name` is not an identifier, is a built-in global, or the VM
    /// already has [`MAX_HOST_FNS`] functions.
    pub fn register_fn(
        &self,
        name: &str,
        f: impl Fn(&[HostValue]) -> Result<HostValue, String> + Send + Sync + 'static,
    ) -> &Self {
        self.register(name, HostFn::Sync(Arc::new(f)))
    }

    /// Registers a synchronous host function that may block (I/O, long
    /// computations): each call runs on a thread of the VM's blocking pool
    /// (see [`VmBuilder::blocking_threads`]) while the calling task is
    /// suspended, so other tasks keep running. To the script it looks like
    /// [`Vm::register_fn`]: the call returns the value (or throws).
    ///
    /// # Panics
    /// As [`Vm::register_fn`].
    pub fn register_blocking_fn(
        &self,
        name: &str,
        f: impl Fn(&[HostValue]) -> Result<HostValue, String> + Send + Sync + 'static,
    ) -> &Self {
        self.register(name, HostFn::Blocking(Arc::new(f)))
    }

    /// Registers an asynchronous host function: a call returns a `Promise`
    /// to the script at once, and `f` gets the arguments and the
    /// [`ExternalPromise`] that settles it, from any thread, later. `f`
    /// itself runs on the worker and must return quickly (hand the promise
    /// to another thread).
    ///
    /// # Panics
    /// As [`Vm::register_fn`].
    pub fn register_async_fn(
        &self,
        name: &str,
        f: impl Fn(Vec<HostValue>, ExternalPromise) + Send + Sync + 'static,
    ) -> &Self {
        self.register(name, HostFn::Async(Arc::new(f)))
    }

    fn compile_options(&self) -> compiler::CompileOptions {
        compiler::CompileOptions {
            host_globals: self.inner.fns.lock().iter().map(|(n, _)| n.to_string()).collect(),
            capabilities: self.inner.opts.capabilities,
        }
    }

    /// Compiles the program whose entry module is `src` (named `name` in
    /// diagnostics; imports resolve from the current directory). The host
    /// functions registered so far are its globals. Errors are returned as
    /// a value: every diagnostic of every file.
    pub fn compile_source(&self, name: &str, src: &str) -> Result<Program, CompileError> {
        compiler::compile_source_with(name, src, &self.compile_options())
    }

    /// Compiles the program whose entry module is the file at `path` (see
    /// [`Vm::compile_source`]).
    pub fn compile_file(&self, path: impl AsRef<Path>) -> Result<Program, CompileError> {
        compiler::compile_file_with(path.as_ref(), &self.compile_options())
    }

    /// Runs `program`: its main module runs as the main task, and this
    /// blocks until the program ends (main finished and no task runnable,
    /// sleeping or awaiting a pending external promise). Output goes to
    /// the process's stdout and stderr, as with `raya run`.
    ///
    /// Returns the main module's completion value (usually `undefined`),
    /// or: [`HostError::Uncaught`] when main threw, [`HostError::Exit`] for
    /// `exit(code)` with `code != 0` or unhandled task errors,
    /// [`HostError::Deadlock`], [`HostError::Capability`] (nothing ran: the
    /// program imports a built-in module this VM does not allow).
    pub fn execute(&self, program: &Program) -> Result<HostValue, HostError> {
        if let Some(link) = program.std_modules.iter().find(|l| {
            crate::std::find(l.name).and_then(|m| m.capability).is_some_and(|c| !self.inner.opts.capabilities.has(c))
        }) {
            return Err(HostError::Capability(format!(
                "the program imports `std:{}`, which this VM does not allow",
                link.name
            )));
        }
        let table = Arc::new(HostTable { fns: self.inner.fns.lock().clone() });
        let first = crate::builtins::GLOBAL_NAMES.len();
        let names: Vec<String> = program.global_names.iter().skip(first).take(program.host_globals).cloned().collect();
        let t = table.clone();
        let mut setup = move |rt: &mut Runtime| {
            for (i, name) in names.iter().enumerate() {
                if let Some(pos) = t.fns.iter().position(|(n, _)| n == name) {
                    let native =
                        Native { name: t.fns[pos].0, f: TRAMPOLINES[pos / 16][pos % 16], data: Value::UNDEFINED };
                    let f = rt.heap.alloc(Body::Function(Function::Native(native)));
                    rt.world.globals.set(first + i, f);
                }
            }
        };
        let mut end = |_rt: &mut Runtime, end: driver::RunEnd| -> Result<HostValue, HostError> {
            if let Some(hit) = end.limit {
                return Err(HostError::Limit(hit.to_string()));
            }
            match end.main {
                Some(Outcome::Error(e)) => Err(HostError::Uncaught(driver::uncaught_text(e))),
                _ if end.exited => {
                    if end.code == 0 {
                        Ok(HostValue::Undefined)
                    } else {
                        Err(HostError::Exit(end.code))
                    }
                }
                None => Err(HostError::Deadlock),
                Some(Outcome::Cancelled(e)) => Err(HostError::Uncaught(driver::uncaught_text(e))),
                Some(Outcome::Value(_)) if end.code != 0 => Err(HostError::Exit(end.code)),
                Some(Outcome::Value(v)) => to_host(v, &mut Vec::new()).map_err(HostError::Conversion),
            }
        };
        let opts = RunOptions {
            args: self.inner.opts.args.clone(),
            workers: self.inner.opts.workers,
            stats: false,
            blocking_pool: Some(self.inner.pool.clone()),
            gc: self.inner.opts.gc,
            limits: self.inner.opts.limits,
            ..Default::default()
        };
        let host: Arc<dyn std::any::Any + Send + Sync> = table;
        driver::run_program_hosted(program, opts, Some(host), &mut setup, &mut end)
    }

    /// Starts running `program` on a new thread and returns at once; the
    /// [`ExecHandle`] gives the result of [`Vm::execute`].
    pub fn execute_async(&self, program: &Program) -> ExecHandle {
        let state = Arc::new(ExecState::default());
        let (vm, program, st) = (self.clone(), program.clone(), state.clone());
        let spawned = std::thread::Builder::new().name("raya-exec".into()).spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| vm.execute(&program)))
                .unwrap_or_else(|_| Err(HostError::Uncaught("the engine panicked".into())));
            st.finish(r);
        });
        if let Err(e) = spawned {
            state.finish(Err(HostError::Uncaught(format!("cannot start a thread: {e}"))));
        }
        ExecHandle { state }
    }
}

// ---- execution handles -------------------------------------------------------------

/// A finished run's result, and the waker of a pending `poll`.
type ExecSlot = (Option<Result<HostValue, HostError>>, Option<Waker>);

#[derive(Default)]
struct ExecState {
    slot: Mutex<ExecSlot>,
    cv: Condvar,
}

impl ExecState {
    fn finish(&self, r: Result<HostValue, HostError>) {
        let waker = {
            let mut g = self.slot.lock();
            g.0 = Some(r);
            g.1.take()
        };
        self.cv.notify_all();
        if let Some(w) = waker {
            w.wake();
        }
    }
}

/// A program started by [`Vm::execute_async`]. Wait for it with
/// [`ExecHandle::wait`] or [`ExecHandle::wait_timeout`], or `.await` it
/// (it is a [`Future`], usable from any executor, e.g. Tokio).
pub struct ExecHandle {
    state: Arc<ExecState>,
}

impl std::fmt::Debug for ExecHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecHandle").field("finished", &self.is_finished()).finish()
    }
}

impl ExecHandle {
    /// Blocks until the program ends; its result as [`Vm::execute`] gives it.
    pub fn wait(self) -> Result<HostValue, HostError> {
        let mut g = self.state.slot.lock();
        loop {
            if let Some(r) = &g.0 {
                return r.clone();
            }
            self.state.cv.wait(&mut g);
        }
    }

    /// Waits at most `timeout`: `None` if the program is still running
    /// (the handle stays valid), else a copy of its result.
    pub fn wait_timeout(&self, timeout: Duration) -> Option<Result<HostValue, HostError>> {
        let deadline = Instant::now() + timeout;
        let mut g = self.state.slot.lock();
        loop {
            if let Some(r) = &g.0 {
                return Some(r.clone());
            }
            if self.state.cv.wait_until(&mut g, deadline).timed_out() {
                return g.0.clone();
            }
        }
    }

    /// Whether the program has ended.
    pub fn is_finished(&self) -> bool {
        self.state.slot.lock().0.is_some()
    }
}

impl Future for ExecHandle {
    type Output = Result<HostValue, HostError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut g = self.state.slot.lock();
        match &g.0 {
            Some(r) => Poll::Ready(r.clone()),
            None => {
                g.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}
