//! The embedding API: run Raya programs from a Rust program (the crate's
//! front page is the guide).
//!
//! ```no_run
//! use raya_engine::{ExternalPromise, HostValue, Vm};
//!
//! let vm = Vm::builder().workers(4).build();
//! vm.register_fn("add", |a: f64, b: f64| Ok::<_, String>(a + b));
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
//!   those slots with natives: one `fn` for all of them, whose data (given
//!   to it as `this`) is the index of the closure in the running program's
//!   host table (reached through
//!   [`crate::driver::current_handle`]). Typed closures ([`HostFunction`])
//!   are wrapped into the one slice-taking form there.
//! * Values cross the boundary as owned [`HostValue`]s (deep copies), so no
//!   GC pointer escapes; host objects ([`UserData`]) cross as a shared
//!   `Arc` of the Rust value.
//! * [`Vm::execute`] is a whole run (`driver::run_program_hosted`);
//!   [`Vm::load`] is a `driver::LiveRun`, which stays after its main task.
//!   A call into an [`Instance`] is a host job that spawns a task for the
//!   exported function; the task's `on_done` hook (run on the worker that
//!   settles it) converts the outcome and hands it to the [`Call`].
//! * Cancellation, the interrupt callback, [`Limits`] and the whole-program
//!   limits of [`VmBuilder::step_limit`] and its siblings are one
//!   mechanism: the run's `limits::Guard`, shared by every task of the run
//!   and charged where each task's run ends (`driver::check_guard`); a
//!   call's time limit also arms a scheduler timer, so a suspended call is
//!   stopped too.
//! * An [`ExternalPromise`] settles its promise from any thread: the
//!   settlement (which allocates the value and wakes the awaiting tasks)
//!   runs as a host job on a worker, because only workers may touch the
//!   heap. While it is pending it keeps the program alive (a never-firing
//!   scheduler timer), so the program is neither finished nor deadlocked.
//!   Settled on a worker thread inside a host call, the settlement is
//!   applied on that worker right after the host closure returns. The
//!   futures of [`Vm::register_async`] settle one the same way.
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

/// Sixteen instances of a const-generic native `$t::<I>` (for `I` from
/// `$hi * 16`): `UserData` methods (whose `this` is the receiver, so it cannot carry
/// an index) are dispatched by index through tables of these, since a
/// `NativeFn` carries no closure.
macro_rules! tramps16 {
    ($t:ident, $hi:literal) => {
        [
            $t::<{ $hi * 16 }> as NativeFn,
            $t::<{ $hi * 16 + 1 }>,
            $t::<{ $hi * 16 + 2 }>,
            $t::<{ $hi * 16 + 3 }>,
            $t::<{ $hi * 16 + 4 }>,
            $t::<{ $hi * 16 + 5 }>,
            $t::<{ $hi * 16 + 6 }>,
            $t::<{ $hi * 16 + 7 }>,
            $t::<{ $hi * 16 + 8 }>,
            $t::<{ $hi * 16 + 9 }>,
            $t::<{ $hi * 16 + 10 }>,
            $t::<{ $hi * 16 + 11 }>,
            $t::<{ $hi * 16 + 12 }>,
            $t::<{ $hi * 16 + 13 }>,
            $t::<{ $hi * 16 + 14 }>,
            $t::<{ $hi * 16 + 15 }>,
        ]
    };
}

mod convert;
mod future;
mod instance;
mod userdata;

#[cfg(feature = "serde")]
pub mod serde;
#[cfg(feature = "serde")]
pub use self::serde::Serde;

pub use future::{AsyncHostFunction, BoxFuture, Spawner};
pub use userdata::{HostObject, UserData, UserMethod, UserMethods, MAX_USER_METHODS};

pub use crate::vm::runtime::{OutputSink, Stream};
pub use convert::{FromValue, HostFunction, IntoArgs, IntoValue};
pub use instance::{Call, Canceller, Function, Instance};

use crate::compiler::{self, CompileError, Program};
use crate::driver::{self, Handle, RunOptions};
use crate::scheduler::{BlockingPool, DEFAULT_BLOCKING_KEEP_ALIVE, DEFAULT_MAX_BLOCKING_THREADS};
pub use crate::std::{Capabilities, Capability};
use crate::sync::{Outcome, PromiseCell, Resume};
use crate::vm::atom::Atom;
use crate::vm::native::NativeCtx;
use crate::vm::object::{Body, Function as FunctionBody, Mut, Native, ObjectData, PropMap};
use crate::vm::task::Task;
use crate::vm::{ops, Runtime, Value};
use parking_lot::{Condvar, Mutex};
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// The most host functions one [`Vm`] can register (a bound kept so that a
/// runaway registration loop fails early).
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
    /// A host object ([`UserData`]): shared with the script, not copied.
    Host(HostObject),
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
                d.props.iter().collect()
            };
            let mut props = Vec::with_capacity(pairs.len());
            for (k, x) in pairs {
                // Private fields (`#x`) are no properties.
                if k.is_private() || matches!(x.as_obj().map(|o| &o.body), Some(Body::Accessor(_))) {
                    continue;
                }
                props.push((k.as_str().to_string(), to_host(x, stack)?));
            }
            Ok(HostValue::Object(props))
        }
        Body::Host(h) if userdata::is_user_class(h.desc) => {
            Ok(HostValue::Host(HostObject { data: h.data.clone(), class: h.desc }))
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
        HostValue::Host(o) => crate::vm::host::new_host_object(rt, o.class, o.data.clone()),
    }
}

/// A new `Error` with `message` (its stack has no script frames).
fn host_error(rt: &mut Runtime, message: &str) -> Value {
    let class = rt.realm.classes.error;
    rt.make_error(&Task::new(0), class, message)
}

// ---- errors ------------------------------------------------------------------------

/// A value a script threw and did not catch, as data.
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptError {
    /// The error's class name (`TypeError`, a script's own `class
    /// HttpError extends Error`), or `""` when what was thrown is not an
    /// `Error` (`throw 42`).
    pub name: String,
    /// The error's message; for a thrown non-error, its printed form.
    pub message: String,
    /// Where it was thrown, innermost first (the frames of its `stack`).
    pub frames: Vec<StackFrame>,
    /// What was thrown, converted (an error converts as its fields:
    /// `message`, `stack`, and those a subclass adds); a value that cannot
    /// cross (a function) is its printed form as a string.
    pub value: HostValue,
    /// The report `raya run` prints after `Uncaught `: `Name: message`
    /// followed by the frames.
    pub stack: String,
}

/// One frame of a [`ScriptError`]'s stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StackFrame {
    /// The function (`handle`, `Account.deposit`, `<anonymous>`, `<main>`
    /// for a module's top level).
    pub function: String,
    /// The source file, as named when the program was compiled.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

impl ScriptError {
    /// Reads a thrown value (on a worker, or with the world stopped).
    pub(crate) fn from_value(e: Value) -> ScriptError {
        let stack = driver::uncaught_text(e);
        let message = match e.as_obj().map(|o| &o.body) {
            Some(Body::Object(d)) => {
                let d = d.lock();
                ops::error_name(&d)
                    .map(|_| d.props.get(crate::vm::atom::names::MESSAGE).map(ops::to_display).unwrap_or_default())
            }
            _ => None,
        };
        let (name, message) = match message {
            // The name as the header shows it (an own `name` the
            // constructor set included): `Name: message`, or `Name`.
            Some(message) => {
                let header = ops::to_display(e);
                let name = header.strip_suffix(&format!(": {message}")).unwrap_or(&header).to_string();
                (name, message)
            }
            None => (String::new(), stack.clone()),
        };
        let frames = stack.lines().skip(1).filter_map(parse_frame).collect();
        let value = to_host(e, &mut Vec::new()).unwrap_or_else(|_| HostValue::String(stack.clone()));
        ScriptError { name, message, frames, value, stack }
    }
}

/// `    at name (file:line:col)` (or `    at name` without a location).
fn parse_frame(line: &str) -> Option<StackFrame> {
    let rest = line.strip_prefix("    at ")?;
    let (function, loc) = match rest.strip_suffix(')').and_then(|r| r.rsplit_once(" (")) {
        Some((f, loc)) => (f, Some(loc)),
        None => (rest, None),
    };
    let (file, line, column) = loc
        .and_then(|loc| {
            let (rest, col) = loc.rsplit_once(':')?;
            let (file, line) = rest.rsplit_once(':')?;
            Some((file.to_string(), line.parse().ok()?, col.parse().ok()?))
        })
        .unwrap_or_default();
    Some(StackFrame { function: function.to_string(), file, line, column })
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.stack)
    }
}

/// Why a host-side operation failed.
#[derive(Clone, Debug)]
pub enum HostError {
    /// The program did not compile; [`CompileError::render`] formats the
    /// diagnostics.
    Compile(CompileError),
    /// The script threw and did not catch it (the main module, or the
    /// function the host called). Nothing is printed unless the VM was
    /// asked to ([`VmBuilder::report_errors`]).
    Uncaught(Box<ScriptError>),
    /// The run was stopped before it ended: cancelled by the host
    /// ([`Call::cancel`]), interrupted ([`VmBuilder::interrupt`]), or past
    /// one of its [`Limits`]; the text says which.
    Cancelled(String),
    /// The instance has no export of this name, or it is not a function
    /// (for a call).
    Export(String),
    /// The engine could not run the program (a thread could not start; a
    /// bug of the engine's own).
    Internal(String),
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
            HostError::Cancelled(s) => write!(f, "cancelled: {s}"),
            HostError::Export(s) | HostError::Internal(s) => f.write_str(s),
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
            (HostError::Cancelled(a), HostError::Cancelled(b)) => a == b,
            (HostError::Export(a), HostError::Export(b)) => a == b,
            (HostError::Internal(a), HostError::Internal(b)) => a == b,
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

/// What a host function throws into the script.
#[derive(Clone, Debug, PartialEq)]
pub enum Throw {
    /// An `Error` with this message.
    Error(String),
    /// A `TypeError` with this message (an argument of the wrong type).
    Type(String),
}

impl From<String> for Throw {
    fn from(m: String) -> Self {
        Throw::Error(m)
    }
}

type SyncFn = Arc<dyn Fn(&[HostValue]) -> Result<HostValue, Throw> + Send + Sync>;
type AsyncFn = Arc<dyn Fn(Vec<HostValue>, ExternalPromise) + Send + Sync>;

type FutureFn = Arc<dyn Fn(&[HostValue]) -> Result<future::ResultFuture, Throw> + Send + Sync>;
type TypedFn = Arc<dyn Fn(&mut Runtime, &[Value]) -> Result<Value, Throw> + Send + Sync>;

#[derive(Clone)]
enum HostFn {
    /// A typed closure ([`Vm::register_fn`]): converts the script's values
    /// itself ([`HostFunction::call_script`]).
    Typed(TypedFn),
    Sync(SyncFn),
    Blocking(SyncFn),
    Async(AsyncFn),
    Future(FutureFn),
}

/// The host functions of one run, by index, and the VM's
/// interrupt callback.
pub(crate) struct HostTable {
    fns: Vec<(&'static str, HostFn)>,
    interrupt: Option<Interrupt>,
    spawner: Arc<dyn Spawner>,
}

pub use crate::limits::{Interrupt, Limits};

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

/// Every host function is this one native; its index in the host table
/// is the native's data, which the interpreter passes as `this`.
fn host_native(ctx: &mut NativeCtx, index: Value, args: &[Value]) -> Result<Value, Value> {
    call_host(ctx, index.as_number() as usize, args)
}

type Deferred = Box<dyn FnOnce(&mut Runtime) + Send>;

thread_local! {
    /// The program ([`Handle::program_id`]) whose host closure runs on
    /// this thread, 0 if none.
    static HOST_CALL: Cell<usize> = const { Cell::new(0) };
    /// Settlements of `HOST_CALL`'s promises, queued while its closure
    /// runs and applied on the same runtime when it returns. Each host
    /// call applies the jobs queued after its start (a host call nested
    /// on the same thread, of another program, leaves the outer one's).
    static DEFERRED: RefCell<Vec<Deferred>> = const { RefCell::new(Vec::new()) };
}

/// Runs a host closure on a worker, catching panics; then applies the
/// settlements it made.
fn in_host_call<R>(
    handle: &Handle,
    rt: &mut Runtime,
    name: &str,
    f: impl FnOnce(&mut Runtime) -> Result<R, Throw>,
) -> Result<R, Throw> {
    let prev = HOST_CALL.replace(handle.program_id());
    let mark = DEFERRED.with(|d| d.borrow().len());
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(rt)))
        .unwrap_or_else(|_| Err(Throw::Error(format!("host function `{name}` panicked"))));
    HOST_CALL.set(prev);
    if DEFERRED.with(|d| d.borrow().len()) > mark {
        let deferred = DEFERRED.with(|d| d.borrow_mut().split_off(mark));
        for job in deferred {
            job(rt);
        }
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
    if HOST_CALL.try_with(|c| c.get()) == Ok(handle.program_id()) {
        let _ = DEFERRED.try_with(|d| d.borrow_mut().extend(job.take()));
    }
    if let Some(job) = job {
        handle.on_runtime(job);
    }
}

fn call_host(ctx: &mut NativeCtx, index: usize, args: &[Value]) -> Result<Value, Value> {
    // The handle and the table are borrowed for the call, not cloned.
    driver::with_current_handle(|handle| {
        let table = handle.and_then(|h| h.host_data()).and_then(|d| d.downcast_ref::<HostTable>());
        let (Some(handle), Some(table)) = (handle, table) else {
            return Err(ctx.plain_error("host function called outside its program"));
        };
        let Some((name, f)) = table.fns.get(index) else {
            return Err(ctx.plain_error("unknown host function"));
        };
        call_host_fn(ctx, handle, table, name, f, args)
    })
}

fn call_host_fn(
    ctx: &mut NativeCtx,
    handle: &Handle,
    table: &HostTable,
    name: &'static str,
    f: &HostFn,
    args: &[Value],
) -> Result<Value, Value> {
    if let HostFn::Typed(f) = f {
        return match in_host_call(handle, ctx.rt, name, |rt| f(rt, args)) {
            Ok(v) => Ok(v),
            Err(Throw::Error(m)) => Err(ctx.plain_error(m)),
            Err(Throw::Type(m)) => Err(ctx.type_error(m)),
        };
    }
    let mut hargs = Vec::with_capacity(args.len());
    for &a in args {
        match to_host(a, &mut Vec::new()) {
            Ok(h) => hargs.push(h),
            Err(e) => return Err(ctx.type_error(format!("{name}: {e}"))),
        }
    }
    match f {
        HostFn::Typed(_) => unreachable!("converted above"),
        HostFn::Sync(f) => match in_host_call(handle, ctx.rt, name, |_| f(&hargs)) {
            Ok(v) => Ok(from_host(ctx.rt, &v)),
            Err(Throw::Error(m)) => Err(ctx.plain_error(m)),
            Err(Throw::Type(m)) => Err(ctx.type_error(m)),
        },
        HostFn::Future(f) => {
            let fut = match in_host_call(handle, ctx.rt, name, |_| f(&hargs)) {
                Ok(fut) => fut,
                Err(Throw::Error(m)) => return Err(ctx.plain_error(m)),
                Err(Throw::Type(m)) => return Err(ctx.type_error(m)),
            };
            let (promise, ext) = new_external(ctx, handle);
            let abort = Arc::new(future::Abort::default());
            if let Some(cell) = &ctx.task.cell {
                let a = abort.clone();
                cell.push_on_cancel(Box::new(move || a.abort()));
            }
            let wrapped = future::HostFuture { inner: Some(fut), promise: Some(ext), abort };
            table.spawner.spawn(Box::pin(wrapped));
            Ok(promise)
        }
        HostFn::Async(f) => {
            let (promise, ext) = new_external(ctx, handle);
            let f = f.clone();
            if let Err(m) = in_host_call(handle, ctx.rt, name, move |_| {
                f(hargs, ext);
                Ok(())
            }) {
                // The closure panicked: `ext` was dropped (and so rejected).
                let _ = m;
            }
            Ok(promise)
        }
        HostFn::Blocking(f) => {
            let f = f.clone();
            crate::std::io::block_on(
                ctx,
                format!("in blocking host function `{name}`"),
                move || {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&hargs)))
                        .unwrap_or_else(|_| Err(Throw::Error(format!("host function `{name}` panicked"))))
                },
                |rt, _, r| match r {
                    Ok(v) => Resume::Value(from_host(rt, &v)),
                    Err(Throw::Error(m)) => Resume::Throw(host_error(rt, &m)),
                    Err(Throw::Type(m)) => {
                        let class = rt.realm.classes.type_error;
                        Resume::Throw(rt.make_error(&Task::new(0), class, &m))
                    }
                },
            )
        }
    }
}

/// A pending promise for the script and the [`ExternalPromise`] that
/// settles it.
fn new_external(ctx: &mut NativeCtx, handle: &Handle) -> (Value, ExternalPromise) {
    let cell = Arc::new(PromiseCell { external: true, ..Default::default() });
    let promise = ctx.heap().alloc(Body::Promise(crate::sync::PromiseState::Shared(cell.clone())));
    let key = handle.keep_alive();
    let ext = ExternalPromise {
        inner: Arc::new(ExtInner { cell, handle: handle.clone(), key, settled: AtomicBool::new(false) }),
    };
    (promise, ext)
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
                if let Some(s) = cell.completion.settle(o, &rt.world.microtasks) {
                    if matches!(o, Outcome::Error(_)) && s.waiters.iter().any(|w| w.is_await()) {
                        cell.completion.inner.lock().observed = true;
                    }
                    driver::wake_all(rt, s, o);
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
#[derive(Clone, Default)]
pub struct VmBuilder {
    workers: Option<usize>,
    blocking_threads: Option<usize>,
    args: Vec<String>,
    capabilities: Capabilities,
    gc: crate::vm::heap::GcConfig,
    output: Option<Arc<dyn OutputSink>>,
    report_errors: bool,
    interrupt: Option<Interrupt>,
    limits: Limits,
    spawner: Option<Arc<dyn Spawner>>,
    trace: Option<std::path::PathBuf>,
    /// Whole-program limits (`step_limit`, `time_limit`, `max_tasks`).
    run_limits: Limits,
}

impl std::fmt::Debug for VmBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VmBuilder")
            .field("workers", &self.workers)
            .field("blocking_threads", &self.blocking_threads)
            .field("args", &self.args)
            .field("capabilities", &self.capabilities)
            .field("gc", &self.gc)
            .field("output", &self.output.as_ref().map(|_| "routed"))
            .field("report_errors", &self.report_errors)
            .field("limits", &self.limits)
            .finish()
    }
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
    /// `Capability::Net`: `std:net`, `std:http`; `Capability::Stdio`: the
    /// globals `stdin`, `stdout`, `stderr`; `cwd()` needs `Capability::Fs`
    /// too). By default a VM grants
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
    /// doubled; never before it holds 4 MiB). `None` turns collection off
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

    /// Routes the output of the VM's programs: every `console.log` line,
    /// `stdout.write`, `console.error` line and `stderr.write` goes to
    /// `sink` (a closure `|stream: Stream, text: &str|` or an
    /// [`OutputSink`]) instead of the process's streams, one call per
    /// write, in the order the program's tasks wrote. Default: the
    /// process's stdout and stderr. [`Vm::load_with`] routes one
    /// instance's output elsewhere.
    pub fn output(mut self, sink: impl OutputSink + 'static) -> Self {
        self.output = Some(Arc::new(sink));
        self
    }

    /// Also write the engine's reports about a program (`Uncaught ...`,
    /// unhandled task errors, deadlocks, tasks that never finished) to its
    /// stderr, as `raya run` does. By default the engine prints nothing of
    /// its own: the host gets errors as [`HostError`] values.
    pub fn report_errors(mut self, yes: bool) -> Self {
        self.report_errors = yes;
        self
    }

    /// A callback polled while scripts compute (where a task is
    /// preempted: at least once per time slice, 10,000 safepoints, so
    /// even `while (true) {}` polls it): returning `true` stops that run
    /// as [`Call::cancel`] does, ending it with
    /// [`HostError::Cancelled`]`("interrupted by the host")`. QuickJS's
    /// interrupt handler, rhai's `on_progress`.
    pub fn interrupt(mut self, f: impl Fn() -> bool + Send + Sync + 'static) -> Self {
        self.interrupt = Some(Arc::new(f));
        self
    }

    /// Limits for every run: [`Vm::execute`]'s main module and each call
    /// into an [`Instance`] (unless [`Instance::call_with`] gives others).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The executor the futures of async host functions
    /// ([`Vm::register_async`]) run on: the host's, so its reactor,
    /// timers and clients work inside them. A closure `|f: BoxFuture| {
    /// tokio::spawn(f); }` will do, or (feature `tokio`)
    /// `VmBuilder::tokio`. Without one, each future runs on a thread
    /// of its own.
    pub fn spawner(mut self, s: impl Spawner + 'static) -> Self {
        self.spawner = Some(Arc::new(s));
        self
    }

    /// Runs async host functions on the Tokio runtime this is called in
    /// (see [`spawner`](Self::spawner)).
    ///
    /// # Panics
    /// Outside a Tokio runtime.
    #[cfg(feature = "tokio")]
    pub fn tokio(self) -> Self {
        self.spawner(tokio::runtime::Handle::current())
    }

    /// Records a trace of every run into `path` (as `raya run --trace`;
    /// Chrome trace-event JSON, see `design/trace.md`): of each
    /// [`execute`](Vm::execute), written when it ends, and of each
    /// loaded program ([`load`](Vm::load)) — its main module and every
    /// call and `eval` of its [`Instance`] —, written when the instance is
    /// dropped. A later trace overwrites an earlier one's.
    pub fn trace(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.trace = Some(path.into());
        self
    }

    /// Stops each program after `steps` safepoints (calls and loop
    /// iterations, counted over all its tasks): a runaway script ends
    /// with [`HostError::Limit`] instead of running forever. The count is
    /// taken per time slice, so a program may run up to one slice (10,000
    /// safepoints) past it.
    pub fn step_limit(mut self, steps: u64) -> Self {
        self.run_limits.instructions = Some(steps);
        self
    }

    /// Stops each program that runs longer than `limit` (wall-clock time,
    /// waiting included) with [`HostError::Limit`].
    pub fn time_limit(mut self, limit: std::time::Duration) -> Self {
        self.run_limits.time = Some(limit);
        self
    }

    /// At most `n` tasks alive at once in each program, the main task
    /// included: spawning one more throws a catchable `RangeError` ("too
    /// many tasks: limit of n live tasks reached").
    pub fn max_tasks(mut self, n: usize) -> Self {
        self.run_limits.tasks = Some(n);
        self
    }

    /// Makes the VM (and its blocking pool, which starts no thread yet).
    pub fn build(self) -> Vm {
        let max = self.blocking_threads.unwrap_or(DEFAULT_MAX_BLOCKING_THREADS);
        let pool = Arc::new(BlockingPool::new(max, DEFAULT_BLOCKING_KEEP_ALIVE));
        Vm { inner: Arc::new(VmInner { opts: self, fns: Mutex::new(Vec::new()), pool }) }
    }
}

/// Options of one [`Instance`] ([`Vm::load_with`]).
#[derive(Clone, Default)]
pub struct LoadOptions {
    output: Option<Arc<dyn OutputSink>>,
}

impl std::fmt::Debug for LoadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadOptions").field("output", &self.output.as_ref().map(|_| "routed")).finish()
    }
}

impl LoadOptions {
    /// Routes this instance's output to `sink` (see
    /// [`VmBuilder::output`]), so a server can tell each script's lines
    /// apart.
    pub fn output(mut self, sink: impl OutputSink + 'static) -> Self {
        self.output = Some(Arc::new(sink));
        self
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
    /// compiled afterwards: a typed closure `|a: f64, b: String| ->
    /// Result<R, E>` (up to six parameters of [`FromValue`] types, `R`
    /// [`IntoValue`], `E` [`Display`](std::fmt::Display)). An argument
    /// that does not convert is a `TypeError` in the script naming the
    /// function and the parameter (`add: parameter 2 expected a string,
    /// got a number`); a missing one is `undefined` (an `Option` takes
    /// it). `Err(e)` (or a panic) is thrown as an `Error` with `e`'s text.
    ///
    /// It runs on the scheduler worker that calls it, so it must be quick
    /// (see [`Vm::register_blocking_fn`]). Registering a name again
    /// replaces the function.
    ///
    /// # Panics
    /// If `name` is not an identifier, is a built-in global, or the VM
    /// already has [`MAX_HOST_FNS`] functions.
    pub fn register_fn<Args>(&self, name: &str, f: impl HostFunction<Args>) -> &Self {
        let owned = name.to_string();
        self.register(
            name,
            HostFn::Typed(Arc::new(move |rt: &mut Runtime, args: &[Value]| f.call_script(&owned, rt, args))),
        )
    }

    /// Registers a synchronous host function that takes its arguments as
    /// they come, any number of them (see [`Vm::register_fn`]).
    /// `Err(message)` is thrown as an `Error`.
    ///
    /// # Panics
    /// As [`Vm::register_fn`].
    pub fn register_raw_fn(
        &self,
        name: &str,
        f: impl Fn(&[HostValue]) -> Result<HostValue, String> + Send + Sync + 'static,
    ) -> &Self {
        self.register(name, HostFn::Sync(Arc::new(move |args: &[HostValue]| f(args).map_err(Throw::Error))))
    }

    /// Registers a synchronous host function that may block (I/O, long
    /// computations): each call runs on a thread of the VM's blocking pool
    /// (see [`VmBuilder::blocking_threads`]) while the calling task is
    /// suspended, so other tasks keep running. To the script it looks like
    /// [`Vm::register_fn`]: the call returns the value (or throws).
    ///
    /// # Panics
    /// As [`Vm::register_fn`].
    pub fn register_blocking_fn<Args>(&self, name: &str, f: impl HostFunction<Args>) -> &Self {
        let owned = name.to_string();
        self.register(name, HostFn::Blocking(Arc::new(move |args: &[HostValue]| f.call_host(&owned, args))))
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

    /// Registers an async host function: a closure returning a future,
    /// `|url: String| async move { Ok::<_, MyError>(body) }`, typed as for
    /// [`Vm::register_fn`]. A call returns a `Promise` to the script at
    /// once; the future runs on the VM's [`Spawner`] (the host's executor,
    /// see [`VmBuilder::spawner`]) and settles the promise with its
    /// result (`Err(e)` rejects it with an `Error` of `e`'s text). If the
    /// task that called it is cancelled, the future is dropped.
    ///
    /// # Panics
    /// As [`Vm::register_fn`].
    pub fn register_async<Args>(&self, name: &str, f: impl AsyncHostFunction<Args>) -> &Self {
        let owned = name.to_string();
        self.register(name, HostFn::Future(Arc::new(move |args: &[HostValue]| f.make_future(&owned, args))))
    }

    fn table(&self) -> Arc<HostTable> {
        Arc::new(HostTable {
            fns: self.inner.fns.lock().clone(),
            interrupt: self.inner.opts.interrupt.clone(),
            spawner: self.inner.opts.spawner.clone().unwrap_or_else(|| Arc::new(future::ThreadSpawner)),
        })
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
    /// sleeping or awaiting a pending external promise). Output goes where
    /// [`VmBuilder::output`] says (by default the process's stdout and
    /// stderr); the engine's own reports only if
    /// [`VmBuilder::report_errors`] asked for them.
    ///
    /// Returns the main module's completion value: that of the last
    /// top-level expression statement it ran (`undefined` if none; a
    /// value that cannot cross the boundary, such as a function or a
    /// cyclic structure, comes back as `undefined` too), or: [`HostError::Uncaught`] when main threw, [`HostError::Exit`] for
    /// `exit(code)` with `code != 0` or unhandled task errors,
    /// [`HostError::Deadlock`], [`HostError::Capability`] (nothing ran: the
    /// program imports a built-in module this VM does not allow).
    pub fn execute(&self, program: &Program) -> Result<HostValue, HostError> {
        self.check_capabilities(program)?;
        let table = self.table();
        let mut setup = self.setup(program, &table, self.inner.opts.output.clone());
        // The VM's per-run limits cancel; the whole-program ones (behind
        // them) end the program.
        let run_limits = &self.inner.opts.run_limits;
        let program_guard = (*run_limits != Limits::none())
            .then(|| Arc::new(crate::limits::Guard::new(run_limits, crate::limits::OnLimit::EndProgram, None)));
        let guard = Arc::new(
            crate::limits::Guard::new(&self.inner.opts.limits, crate::limits::OnLimit::Cancel, table.interrupt.clone())
                .with_parent(program_guard),
        );
        let g = guard.clone();
        let completion = program.completion_slot as usize;
        let mut end = |rt: &mut Runtime, end: driver::RunEnd| -> Result<HostValue, HostError> {
            if let Some(hit) = end.limit {
                return Err(HostError::Limit(hit.to_string()));
            }
            match end.main {
                Some(Outcome::Error(e)) => Err(HostError::Uncaught(Box::new(ScriptError::from_value(e)))),
                _ if end.exited => {
                    if end.code == 0 {
                        Ok(HostValue::Undefined)
                    } else {
                        Err(HostError::Exit(end.code))
                    }
                }
                None => Err(HostError::Deadlock),
                Some(o @ Outcome::Cancelled(_)) => instance::outcome_result(o, Some(&g)),
                Some(Outcome::Value(_)) if end.code != 0 => Err(HostError::Exit(end.code)),
                // Run for its effects, a program's last expression may be
                // anything: one that cannot cross is no error.
                Some(Outcome::Value(_)) => {
                    let v = rt.world.globals.get(completion);
                    Ok(to_host(v, &mut Vec::new()).unwrap_or_default())
                }
            }
        };
        let opts = RunOptions {
            args: self.inner.opts.args.clone(),
            workers: self.inner.opts.workers,
            stats: false,
            blocking_pool: Some(self.inner.pool.clone()),
            gc: self.inner.opts.gc,
            guard: Some(guard),
            trace: self.inner.opts.trace.clone(),
            ..Default::default()
        };
        let host: Arc<dyn std::any::Any + Send + Sync> = table;
        driver::run_program_hosted(program, opts, Some(host), &mut setup, &mut end)
    }

    /// The hook that prepares a run's runtime: host functions into their
    /// global slots, output routing, quiet reports.
    fn setup(
        &self,
        program: &Program,
        table: &Arc<HostTable>,
        output: Option<Arc<dyn OutputSink>>,
    ) -> impl FnMut(&mut Runtime) {
        let first = program.host_base;
        let names: Vec<String> = program.global_names.iter().skip(first).take(program.host_globals).cloned().collect();
        let t = table.clone();
        let quiet = !self.inner.opts.report_errors;
        move |rt: &mut Runtime| {
            {
                let mut out = rt.world.output.lock();
                out.sink = output.clone();
                out.quiet_reports = quiet;
            }
            for (i, name) in names.iter().enumerate() {
                if let Some(pos) = t.fns.iter().position(|(n, _)| n == name) {
                    let native = Native { name: t.fns[pos].0, f: host_native, data: Value::number(pos as f64) };
                    let f = rt.heap.alloc(Body::Function(FunctionBody::Native(native)));
                    rt.world.globals.set(first + i, f);
                }
            }
        }
    }

    fn check_capabilities(&self, program: &Program) -> Result<(), HostError> {
        match program.std_modules.iter().find(|l| {
            crate::std::find(l.name).and_then(|m| m.capability).is_some_and(|c| !self.inner.opts.capabilities.has(c))
        }) {
            Some(link) => Err(HostError::Capability(format!(
                "the program imports `std:{}`, which this VM does not allow",
                link.name
            ))),
            None => match program.needs.missing_from(self.inner.opts.capabilities).next() {
                Some(c) => Err(HostError::Capability(format!(
                    "the program needs the `{}` capability, which this VM does not allow",
                    c.name()
                ))),
                None => Ok(()),
            },
        }
    }

    /// Compiles and runs `src` (named `<eval>` in stack traces) as a
    /// program of its own; returns its completion value, as JavaScript's
    /// `eval` does: `vm.eval("1 + 41")` is `42`. To evaluate in a loaded
    /// program's scope, use [`Instance::eval`].
    pub fn eval<T: FromValue>(&self, src: &str) -> Result<T, HostError> {
        let program = self.compile_source("<eval>", src)?;
        T::from_value(self.execute(&program)?)
    }

    /// Loads `program`: its main module runs (this waits for it, including
    /// top-level `await`s), and then the program stays loaded, its
    /// globals and exports alive, for the host to call
    /// ([`Instance::call`]), read and write ([`Instance::get`],
    /// [`Instance::set`]). Tasks the top level started go on running.
    ///
    /// Errors: the main module threw ([`HostError::Uncaught`]), called
    /// `exit()` ([`HostError::Exit`], even with code 0: nothing is left
    /// to call), or imports a module the VM does not allow.
    pub fn load(&self, program: &Program) -> Result<Instance, HostError> {
        self.load_with(program, LoadOptions::default())
    }

    /// [`Vm::load`] with options for this instance (its own output).
    pub fn load_with(&self, program: &Program, options: LoadOptions) -> Result<Instance, HostError> {
        self.check_capabilities(program)?;
        let table = self.table();
        let output = options.output.or_else(|| self.inner.opts.output.clone());
        let mut setup = self.setup(program, &table, output);
        let main = Arc::new(instance::CallState::new(&self.inner.opts.limits, table.interrupt.clone()));
        let m = main.clone();
        let on_main: crate::sync::OnDone = Box::new(move |_rt: &mut Runtime, o: Outcome| {
            let r = instance::outcome_result(o, Some(&m.guard));
            m.finish(r);
        });
        let opts = RunOptions {
            args: self.inner.opts.args.clone(),
            workers: self.inner.opts.workers,
            stats: false,
            blocking_pool: Some(self.inner.pool.clone()),
            gc: self.inner.opts.gc,
            guard: None,
            trace: self.inner.opts.trace.clone(),
            ..Default::default()
        };
        let host: Arc<dyn std::any::Any + Send + Sync> = table.clone();
        let live = driver::LiveRun::start(program, opts, Some(host), &mut setup, on_main);
        let m = main.clone();
        live.on_exit(Box::new(move |code| m.finish(Err(HostError::Exit(code)))));
        let inst =
            Instance::new(live, program.clone(), table, self.inner.opts.limits.clone(), self.inner.opts.capabilities);
        main.wait()?;
        Ok(inst)
    }

    /// Starts running `program` on a new thread and returns at once; the
    /// [`ExecHandle`] gives the result of [`Vm::execute`].
    pub fn execute_async(&self, program: &Program) -> ExecHandle {
        let state = Arc::new(ResultCell::default());
        let (vm, program, st) = (self.clone(), program.clone(), state.clone());
        let spawned = std::thread::Builder::new().name("raya-exec".into()).spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| vm.execute(&program)))
                .unwrap_or_else(|_| Err(HostError::Internal("the engine panicked".into())));
            st.set(r);
        });
        if let Err(e) = spawned {
            state.set(Err(HostError::Internal(format!("cannot start a thread: {e}"))));
        }
        ExecHandle { state }
    }
}

// ---- execution handles -------------------------------------------------------------

/// A run's result, once in, and the waker of a pending `poll`.
type ResultSlot = (Option<Result<HostValue, HostError>>, Option<Waker>);

/// Where a run's result arrives for the host: blocking waits (with or
/// without a deadline) and one pending `poll` are woken when it is set.
/// The first result set is the one kept. Shared by [`ExecHandle`] and
/// [`Call`].
#[derive(Default)]
pub(crate) struct ResultCell {
    slot: Mutex<ResultSlot>,
    cv: Condvar,
}

impl ResultCell {
    /// Sets the result unless one is there; false if it was.
    pub(crate) fn set(&self, r: Result<HostValue, HostError>) -> bool {
        let waker = {
            let mut g = self.slot.lock();
            if g.0.is_some() {
                return false;
            }
            g.0 = Some(r);
            g.1.take()
        };
        self.cv.notify_all();
        if let Some(w) = waker {
            w.wake();
        }
        true
    }

    pub(crate) fn get(&self) -> Option<Result<HostValue, HostError>> {
        self.slot.lock().0.clone()
    }

    /// Blocks until the result is in.
    pub(crate) fn wait(&self) -> Result<HostValue, HostError> {
        let mut g = self.slot.lock();
        loop {
            if let Some(r) = &g.0 {
                return r.clone();
            }
            self.cv.wait(&mut g);
        }
    }

    /// Blocks at most `timeout`: `None` if the result is not in yet.
    pub(crate) fn wait_timeout(&self, timeout: Duration) -> Option<Result<HostValue, HostError>> {
        let deadline = Instant::now() + timeout;
        let mut g = self.slot.lock();
        loop {
            if let Some(r) = &g.0 {
                return Some(r.clone());
            }
            if self.cv.wait_until(&mut g, deadline).timed_out() {
                return g.0.clone();
            }
        }
    }

    pub(crate) fn poll(&self, cx: &mut Context<'_>) -> Poll<Result<HostValue, HostError>> {
        let mut g = self.slot.lock();
        match &g.0 {
            Some(r) => Poll::Ready(r.clone()),
            None => {
                g.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// A program started by [`Vm::execute_async`]. Wait for it with
/// [`ExecHandle::wait`] or [`ExecHandle::wait_timeout`], or `.await` it
/// (it is a [`Future`], usable from any executor, e.g. Tokio).
pub struct ExecHandle {
    state: Arc<ResultCell>,
}

impl std::fmt::Debug for ExecHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecHandle").field("finished", &self.is_finished()).finish()
    }
}

impl ExecHandle {
    /// Blocks until the program ends; its result as [`Vm::execute`] gives it.
    pub fn wait(self) -> Result<HostValue, HostError> {
        self.state.wait()
    }

    /// Waits at most `timeout`: `None` if the program is still running
    /// (the handle stays valid), else a copy of its result.
    pub fn wait_timeout(&self, timeout: Duration) -> Option<Result<HostValue, HostError>> {
        self.state.wait_timeout(timeout)
    }

    /// Whether the program has ended.
    pub fn is_finished(&self) -> bool {
        self.state.get().is_some()
    }
}

impl Future for ExecHandle {
    type Output = Result<HostValue, HostError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.state.poll(cx)
    }
}
