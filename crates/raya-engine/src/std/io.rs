//! Blocking work done for a task: the calling task suspends, a thread of
//! the program's blocking pool does the work, and the task resumes with
//! the result. Files, directories and child-process waits go through
//! [`block_on`]; so do the embedding API's blocking host functions.
//!
//! # Protocol
//!
//! [`block_on`] submits the job, takes a keep-alive on the program (a task
//! waiting for the outside world is never part of a deadlock: the world
//! may still answer) and suspends the task on a [`PoolWait`]. When the job
//! is done its result is handed to a worker (`Handle::on_runtime`, since
//! only workers may allocate), which turns it into a [`Resume`] and
//! delivers it to the waiter, or parks it in the shared state if the task
//! has not registered yet (its worker is still between the native's
//! return and `park`).
//!
//! Cancellation: `t.cancel()` claims the task like any waker and runs the
//! task's cancel hook, which releases the keep-alive at once; the job runs
//! to its end on its pool thread and its result is dropped (the claim
//! fails). Whichever of "job done" and "cancelled" comes first releases
//! the keep-alive; the other finds it taken.

use crate::driver::{self, Handle};
use crate::scheduler::TimerKey;
use crate::sync::{Registered, Resume, TaskCell, Timer, WaitObject, Waiter};
use crate::vm::atom::{names, Atom};
use crate::vm::native::NativeCtx;
use crate::vm::object::{Body, Mut, ObjectData, PropMap};
use crate::vm::{ops, Runtime, Value};
use parking_lot::Mutex;
use std::borrow::Cow;
use std::sync::Arc;

#[derive(Default)]
struct PoolState {
    waiter: Option<Waiter>,
    /// The job finished before the task registered. The calling worker is
    /// a GC mutator until the task registered, so no collection can free
    /// the value meanwhile (and `roots` reports it afterwards).
    result: Option<Resume>,
    /// The program's keep-alive while the job is pending; taken by
    /// whichever of completion and cancellation comes first.
    keep_alive: Option<TimerKey>,
}

impl PoolState {
    fn release(&mut self, handle: &Handle) {
        if let Some(key) = self.keep_alive.take() {
            handle.release(key);
        }
    }
}

/// A task suspended until a blocking-pool job finishes.
struct PoolWait {
    state: Arc<Mutex<PoolState>>,
    handle: Handle,
    what: Cow<'static, str>,
}

impl WaitObject for PoolWait {
    fn register(&self, w: Waiter, _woken: &mut Vec<Arc<TaskCell>>, _timers: &mut Vec<Timer>) -> Registered {
        let mut s = self.state.lock();
        if let Some(r) = s.result.take() {
            return if w.claim() { Registered::Ready(r) } else { Registered::Queued };
        }
        // Cancellation releases the program at once (see the module docs).
        let (state, handle) = (self.state.clone(), self.handle.clone());
        *w.task.cancel_hook.lock() = Some(Box::new(move || state.lock().release(&handle)));
        s.waiter = Some(w);
        Registered::Queued
    }

    fn describe(&self) -> Cow<'static, str> {
        self.what.clone()
    }

    fn roots(&self) -> Vec<Value> {
        match self.state.lock().result {
            Some(Resume::Value(v)) | Some(Resume::Throw(v)) => vec![v],
            _ => Vec::new(),
        }
    }
}

/// Runs `job` on the program's blocking pool with the calling task
/// suspended (described as `what` in deadlock and never-finished reports);
/// on a worker, `finish` turns the job's output into what the call returns
/// (`Resume::Value`) or throws (`Resume::Throw`). `finish` gets the
/// caller's stack as it was at the call, for errors ([`Trace::error`]).
/// The native must return the value this returns, at once.
pub fn block_on<T: Send + 'static>(
    ctx: &mut NativeCtx,
    what: impl Into<Cow<'static, str>>,
    job: impl FnOnce() -> T + Send + 'static,
    finish: impl FnOnce(&mut Runtime, &Trace, T) -> Resume + Send + 'static,
) -> Result<Value, Value> {
    let Some(handle) = driver::current_handle() else {
        return Err(ctx.plain_error("blocking operation outside a running program"));
    };
    // Taken now: when the job ends the task's state may be on a worker
    // that is still parking it.
    let trace = Trace(ctx.rt.stack_trace(ctx.task));
    let state = Arc::new(Mutex::new(PoolState { keep_alive: Some(handle.keep_alive()), ..Default::default() }));
    let (st, h) = (state.clone(), handle.clone());
    let submitted = handle.blocking_pool().submit(move || {
        let out = job();
        let h2 = h.clone();
        h.on_runtime(Box::new(move |rt| {
            let resume = finish(rt, &trace, out);
            let mut s = st.lock();
            match s.waiter.take() {
                Some(w) => {
                    if w.claim() {
                        w.task.cancel_hook.lock().take();
                        w.deliver(resume, &mut rt.woken);
                    }
                }
                None => s.result = Some(resume),
            }
            // After the wake-up is queued: the program stays non-quiescent.
            s.release(&h2);
        }));
    });
    if let Err(e) = submitted {
        state.lock().release(&handle);
        return Err(ctx.plain_error(format!("cannot start blocking work: {e}")));
    }
    ctx.rt.suspend = Some(crate::sync::Wait::Object(Box::new(PoolWait { state, handle, what: what.into() })));
    Ok(Value::UNDEFINED)
}

/// The stack of a task at the call that suspended it.
pub struct Trace(String);

impl Trace {
    /// A new error of `class` with `message` and this stack, with extra
    /// properties (set before the stack's header is written, which shows
    /// the error's name and message).
    pub fn error(&self, rt: &mut Runtime, class: Value, message: &str, props: &[(&str, Value)]) -> Value {
        let msg = rt.heap.alloc_str(message);
        let mut map = PropMap::new();
        map.set(names::MESSAGE, msg);
        for (k, v) in props {
            map.set(Atom::intern(k), *v);
        }
        let err = rt.heap.alloc(Body::Object(Mut::new(ObjectData { class, props: map, frozen: false })));
        let mut stack = ops::to_display(err);
        stack.push_str(&self.0);
        let s = rt.heap.alloc_str(stack);
        if let Some(mut d) = ops::object_data(err) {
            d.props.set(names::STACK, s);
        }
        err
    }
}
