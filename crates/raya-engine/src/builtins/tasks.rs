//! Built-ins: tasks and promises (LANGUAGE.md §6): `sleep`, the `Task`
//! statics and methods, `Promise`.
//!
//! `Task.all`, `Task.race`, `Task.any` and `Task.scope` are written in Raya
//! (`stdlib/prelude.raya`) on top of the primitives here.

use crate::sync::{Job, Outcome, PromiseCell, PromiseState, Reaction, Resume, Settled, Wait};
use crate::vm::atom::Atom;
use crate::vm::interp::{is_waitable, TaskInterpreter};
use crate::vm::native::{arg, NativeCtx};
use crate::vm::object::{Body, Function, Native};
use crate::vm::ops;
use crate::vm::realm::{Builder, Realm};
use crate::vm::runtime::Runtime;
use crate::vm::value::Value;
use std::sync::Arc;
use std::time::Duration;

pub fn install(b: &mut Builder, realm: &mut Realm) {
    realm.globals[super::global_slot("sleep")] = b.native("sleep", sleep);
    let task = realm.classes.task;
    b.static_native(task, "yield", yield_now);
    b.static_native(task, "current", current);
    b.static_native(task, "__waitAny", wait_any);
    let m = &mut realm.methods.task;
    b.method(m, "cancel", cancel);
    b.method(m, "isDone", is_done);
    b.method(m, "isCancelled", is_cancelled);
    b.method(m, "isFailed", is_failed);
    let p = &mut realm.methods.promise;
    b.method(p, "resolve", resolve);
    b.method(p, "reject", reject);
    b.method(p, "isDone", promise_is_done);
    b.method(p, "__trySettle", try_settle);
    b.method(p, "__resolveWith", resolve_with_native);
    b.method(p, "__settleAfter", settle_after);
    b.method(p, "__rejectOnce", resolver_reject);
    for m in [&mut realm.methods.promise, &mut realm.methods.task] {
        b.method(m, "then", then);
        b.method(m, "catch", catch);
        b.method(m, "finally", finally);
    }
    b.static_native(realm.classes.promise, "resolved", resolved);
    b.static_native(realm.classes.promise, "__isWaitable", is_waitable_native);
    b.static_native(realm.classes.promise, "__nextMicrotask", next_microtask);
    b.static_native(realm.classes.promise, "__queueMicrotask", queue_microtask);
}

fn number_arg(ctx: &mut NativeCtx, args: &[Value], i: usize, what: &str) -> Result<f64, Value> {
    let v = arg(args, i);
    if v.is_number() {
        Ok(v.as_number())
    } else {
        Err(ctx.type_error(format!("{what} expects a number, got {}", ops::type_of(v))))
    }
}

/// `sleep(ms)`: suspends the task for at least `ms` milliseconds; `sleep(0)`
/// yields.
fn sleep(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let ms = number_arg(ctx, args, 0, "sleep")?;
    let ms = if ms.is_nan() || ms < 0.0 { 0.0 } else { ms.min(1e12) };
    ctx.rt.suspend = Some(Wait::Until(crate::scheduler::now() + Duration::from_secs_f64(ms / 1000.0)));
    Ok(Value::UNDEFINED)
}

fn yield_now(ctx: &mut NativeCtx, _this: Value, _args: &[Value]) -> Result<Value, Value> {
    ctx.rt.suspend = Some(Wait::Until(crate::scheduler::now()));
    Ok(Value::UNDEFINED)
}

fn current(ctx: &mut NativeCtx, _this: Value, _args: &[Value]) -> Result<Value, Value> {
    let Some(cell) = &ctx.task.cell else { return Ok(Value::UNDEFINED) };
    if cell.object().is_undefined() {
        // An embedder's call running as a plain call (`LiveRun::call_here`)
        // has no object until it is asked for: made here, it ends as a
        // task does.
        let obj = ctx.rt.heap.alloc(Body::Task(cell.clone()));
        cell.object.store(obj.bits(), std::sync::atomic::Ordering::Release);
        ctx.rt.world.live_tasks.insert(cell.id, obj);
    }
    Ok(cell.object())
}

/// `Task.__waitAny(list)`: the index of the first settled waitable in
/// `list` (list order); suspends until one settles. Plain values count as
/// settled.
fn wait_any(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let Some(items) = ops::array_data(arg(args, 0)).map(|a| a.clone()) else {
        return Err(ctx.type_error("Task.race/any expects an array"));
    };
    if items.is_empty() {
        return Err(ctx.type_error("Task.race/any needs at least one task"));
    }
    for (i, &v) in items.iter().enumerate() {
        if !is_waitable(v) || peek(v).is_some() {
            return Ok(Value::number(i as f64));
        }
    }
    ctx.rt.suspend = Some(Wait::Settled(items));
    Ok(Value::UNDEFINED)
}

/// The outcome without marking it observed.
fn peek(v: Value) -> Option<Outcome> {
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Task(t)) => t.completion.outcome(),
        Some(Body::Promise(p)) => p.completion.outcome(),
        _ => None,
    }
}

fn this_task(ctx: &mut NativeCtx, this: Value) -> Result<Arc<crate::sync::TaskCell>, Value> {
    match this.as_obj().map(|o| &o.body) {
        Some(Body::Task(t)) => Ok(t.clone()),
        _ => Err(ctx.type_error("not a Task")),
    }
}

/// `t.cancel()`: requests cancellation and returns at once.
fn cancel(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let t = this_task(ctx, this)?;
    if t.is_done() {
        return Ok(Value::UNDEFINED);
    }
    // A suspended task is woken with TaskCancelledError at its suspension
    // point: claim it like any waker (exactly one claim wins; the hook of
    // a wait on the outside world runs with the claim).
    if let Some(rec) = ctx.rt.trace.as_mut() {
        let ts = rec.now();
        rec.push(crate::trace::Event::Cancel { ts, by: ctx.task.id, task: t.id });
    }
    if t.request_cancel() {
        t.resume.lock().set(Resume::Cancel);
        ctx.rt.woken.push(t);
    }
    Ok(Value::UNDEFINED)
}

fn is_done(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    Ok(Value::bool(this_task(ctx, this)?.is_done()))
}

fn is_cancelled(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    Ok(Value::bool(matches!(this_task(ctx, this)?.completion.outcome(), Some(Outcome::Cancelled(_)))))
}

fn is_failed(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    Ok(Value::bool(matches!(this_task(ctx, this)?.completion.outcome(), Some(Outcome::Error(_)))))
}

/// `new Promise<T>()`: an unsettled promise.
pub fn construct_promise(ctx: &mut NativeCtx, _args: &[Value]) -> Result<Value, Value> {
    Ok(ctx.heap().alloc(Body::Promise(Default::default())))
}

fn this_promise(ctx: &mut NativeCtx, this: Value) -> Result<&'static PromiseCell, Value> {
    match this.as_obj().map(|o| &o.body) {
        Some(Body::Promise(p)) => Ok(p),
        _ => Err(ctx.type_error("not a Promise")),
    }
}

fn settle_promise(ctx: &mut NativeCtx, this: Value, o: Outcome) -> Result<Value, Value> {
    if settle_once(ctx, this, o)? {
        Ok(Value::UNDEFINED)
    } else {
        Err(ctx.plain_error("Promise is already settled"))
    }
}

/// Settles the promise `this` unless it already is; false if it was.
fn settle_once(ctx: &mut NativeCtx, this: Value, o: Outcome) -> Result<bool, Value> {
    this_promise(ctx, this)?;
    Ok(settle(ctx.rt, this, o))
}

/// Settles promise `p` with `o` unless it already is (false then): wakes
/// its waiters, queues its handlers and carries out the adoptions waiting
/// on it.
pub fn settle(rt: &mut Runtime, p: Value, o: Outcome) -> bool {
    match settle_one(rt, p, o) {
        Some(s) => {
            crate::driver::wake_all(rt, s, o);
            true
        }
        None => false,
    }
}

/// The settlement itself, without its consequences.
fn settle_one(rt: &mut Runtime, p: Value, o: Outcome) -> Option<Settled> {
    let Some(Body::Promise(cell)) = p.as_obj().map(|o| &o.body) else { return None };
    let s = cell.completion.settle(o, &rt.world.microtasks)?;
    if matches!(o, Outcome::Error(_)) {
        let mut g = cell.completion.inner.lock();
        if s.waiters.iter().any(|w| w.is_await()) {
            g.observed = true;
        }
        if !g.observed {
            // Reported at the end unless someone awaits it (or attaches a
            // handler) by then.
            rt.world.failed_tasks.lock().push(p);
        }
    }
    Some(s)
}

/// Carries out adoptions of a source that settled with `o`: each target
/// settles the same way, and the adoptions waiting on it in turn — in a
/// loop, so a long chain of promises adopting one another does not
/// recurse.
pub fn carry_out(rt: &mut Runtime, adopts: Vec<Reaction>, o: Outcome) {
    let mut work: Vec<(Reaction, Outcome)> = adopts.into_iter().map(|r| (r, o)).collect();
    while let Some((r, o)) = work.pop() {
        let Reaction::Adopt { target, pass } = r else { continue };
        let o = match (o, pass) {
            (Outcome::Value(_), Some(p)) => p,
            // A promise adopting a cancelled task rejects with the
            // cancellation error.
            (Outcome::Cancelled(e), _) => Outcome::Error(e),
            (o, _) => o,
        };
        if let Some(s) = settle_one(rt, target, o) {
            crate::driver::wake_waiters(rt, s.waiters, o);
            if s.start_drain {
                start_drain(rt);
            }
            // Reversed so that the first added is carried out first.
            work.extend(s.adopts.into_iter().rev().map(|r| (r, o)));
        }
    }
}

/// Starts the task that drains the microtask queue (the prelude's
/// `Promise.__drain`); called by whoever set `Microtasks::running`.
pub fn start_drain(rt: &mut Runtime) {
    let drain = ops::lookup_static(rt.realm.classes.promise, Atom::intern("__drain"));
    let started = match drain {
        Some(f) => TaskInterpreter::new(rt).spawn(f, Value::UNDEFINED, &[]).is_ok(),
        None => false,
    };
    if !started {
        // Before the prelude is installed there is nothing to run the
        // jobs with; they stay queued for the next start.
        rt.world.microtasks.lock().running = false;
    }
}

/// `Promise.__nextMicrotask(slots)`: takes the next job of the microtask
/// queue into the drain task's array `slots` (`[kind, a, b, c, ok, value,
/// d]`, `ok` and `value` being the outcome of the job's source) and
/// returns true; false when the queue is empty, which also ends the drain
/// task's turn (`Microtasks::running`).
fn next_microtask(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let next = {
        let mut q = ctx.rt.world.microtasks.lock();
        let next = q.queue.pop_front();
        if next.is_none() {
            q.running = false;
        }
        next
    };
    let Some((job, o)) = next else { return Ok(Value::FALSE) };
    let Some(mut slots) = ops::array_data(arg(args, 0)) else {
        return Err(ctx.type_error("Promise.__nextMicrotask expects an array"));
    };
    slots.clear();
    slots.extend_from_slice(&[
        Value::number(job.kind as f64),
        job.a,
        job.b,
        job.c,
        Value::bool(matches!(o, Outcome::Value(_))),
        o.value(),
        job.d,
    ]);
    Ok(Value::TRUE)
}

/// Job kinds, as the prelude's `REACT_*` constants.
const REACT_THEN: u8 = 0;
const REACT_FINALLY: u8 = 1;
const REACT_THENABLE: u8 = 2;
const REACT_MICROTASK: u8 = 3;

fn job(kind: u8, a: Value, b: Value, c: Value, d: Value) -> Job {
    Job { kind, a, b, c, d }
}

/// `Promise.__queueMicrotask(fn)`: queues `fn` as a job of its own.
fn queue_microtask(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let u = Value::UNDEFINED;
    if ctx.rt.world.microtasks.lock().push(job(REACT_MICROTASK, arg(args, 0), u, u, u), Outcome::Value(u)) {
        start_drain(ctx.rt);
    }
    Ok(Value::UNDEFINED)
}

/// `then(onOk, onErr)` on a promise or task: a new promise, settled by the
/// handler's job once `this` settles.
fn then(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    handler(ctx, this, REACT_THEN, arg(args, 0), arg(args, 1))
}

/// `catch(onErr)`: `then(undefined, onErr)`.
fn catch(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    handler(ctx, this, REACT_THEN, Value::UNDEFINED, arg(args, 0))
}

/// `finally(fn)`: `fn` runs whatever the outcome, which passes through.
fn finally(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    handler(ctx, this, REACT_FINALLY, arg(args, 0), Value::UNDEFINED)
}

fn handler(ctx: &mut NativeCtx, src: Value, kind: u8, a: Value, b: Value) -> Result<Value, Value> {
    let out = ctx.heap().alloc(Body::Promise(Default::default()));
    let r = Reaction::Job(job(kind, a, b, out, Value::UNDEFINED));
    add_reaction(ctx.rt, src, r).map_err(|m| ctx.type_error(m))?;
    Ok(out)
}

fn add_reaction(rt: &mut Runtime, src: Value, r: Reaction) -> Result<(), &'static str> {
    let c = match src.as_obj().map(|o| &o.body) {
        Some(Body::Task(t)) => &t.completion,
        Some(Body::Promise(p)) => &p.completion,
        _ => return Err("not a Task or Promise"),
    };
    match c.react(r, &rt.world.microtasks) {
        Ok(true) => start_drain(rt),
        Ok(false) => {}
        Err((r, o)) => carry_out(rt, vec![r], o),
    }
    Ok(())
}

/// A thenable: an object (not a task or promise) whose `then` is a
/// function; returns that function.
fn thenable_then(ctx: &mut NativeCtx, v: Value) -> Result<Option<Value>, Value> {
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Object(_)) => {}
        _ => return Ok(None),
    }
    let then = ctx.get(v, "then")?;
    Ok(ops::is_callable(then).then_some(then))
}

/// Resolves promise `p` with `v` as JS's promise resolve functions do:
/// `p` itself is a TypeError, a task or promise is adopted, a thenable's
/// `then` is called from a microtask with fresh resolve functions, and
/// anything else fulfils `p`.
pub fn resolve_with(ctx: &mut NativeCtx, p: Value, v: Value) -> Result<(), Value> {
    if v == p {
        let e = ctx.type_error("Chaining cycle detected for promise #<Promise>");
        settle(ctx.rt, p, Outcome::Error(e));
        return Ok(());
    }
    if is_waitable(v) {
        let r = Reaction::Adopt { target: p, pass: None };
        add_reaction(ctx.rt, v, r).map_err(|m| ctx.type_error(m))?;
        return Ok(());
    }
    let then = match thenable_then(ctx, v) {
        Ok(t) => t,
        Err(e) => {
            settle(ctx.rt, p, Outcome::Error(e));
            return Ok(());
        }
    };
    match then {
        Some(then) => {
            // The thenable settles a fresh promise (its resolve functions
            // have their own "first call wins"), which `p` adopts.
            let q = ctx.heap().alloc(Body::Promise(Default::default()));
            add_reaction(ctx.rt, q, Reaction::Adopt { target: p, pass: None }).map_err(|m| ctx.type_error(m))?;
            let (res, rej) = resolvers(ctx.rt, q, 2);
            let j = job(REACT_THENABLE, v, then, res, rej);
            if ctx.rt.world.microtasks.lock().push(j, Outcome::Value(Value::UNDEFINED)) {
                start_drain(ctx.rt);
            }
        }
        None => {
            settle(ctx.rt, p, Outcome::Value(v));
        }
    }
    Ok(())
}

/// The `resolve` and `reject` functions `new Promise(executor)` passes to
/// its executor: natives bound to the promise (its `data`, which the
/// interpreter passes as `this`). The first call of either wins. Only the
/// first `wants` are made (the others are undefined).
pub fn resolvers(rt: &mut Runtime, p: Value, wants: u16) -> (Value, Value) {
    let mut make = |f: crate::vm::object::NativeFn| {
        rt.heap.alloc(Body::Function(Function::Native(Native { name: "", f, data: p })))
    };
    let res = if wants >= 1 { make(resolver_resolve) } else { Value::UNDEFINED };
    let rej = if wants >= 2 { make(resolver_reject) } else { Value::UNDEFINED };
    (res, rej)
}

/// Claims the promise for an executor's first `resolve`/`reject`; false if
/// an earlier call did.
fn claim(ctx: &mut NativeCtx, this: Value) -> Result<bool, Value> {
    let p = this_promise(ctx, this)?;
    Ok(!p.claimed.swap(true, std::sync::atomic::Ordering::AcqRel))
}

/// The executor of `new Promise(executor)` threw `e`: rejects `p` with it,
/// unless `resolve` or `reject` was called first (then the throw is
/// ignored, as in JS).
pub fn reject_unclaimed(rt: &mut Runtime, p: Value, e: Value) {
    if let Some(Body::Promise(cell)) = p.as_obj().map(|o| &o.body) {
        if !cell.claimed.swap(true, std::sync::atomic::Ordering::AcqRel) {
            settle(rt, p, Outcome::Error(e));
        }
    }
}

fn resolver_resolve(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    if claim(ctx, this)? {
        resolve_with(ctx, this, arg(args, 0))?;
    }
    Ok(Value::UNDEFINED)
}

fn resolver_reject(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    if claim(ctx, this)? {
        settle(ctx.rt, this, Outcome::Error(arg(args, 0)));
    }
    Ok(Value::UNDEFINED)
}

/// `out.__resolveWith(v)`: settles the promise a `then` returned with its
/// handler's result (see [`resolve_with`]).
fn resolve_with_native(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    this_promise(ctx, this)?;
    resolve_with(ctx, this, arg(args, 0))?;
    Ok(Value::UNDEFINED)
}

/// `out.__settleAfter(r, ok, v)`: the end of a `finally` handler that
/// returned `r`: once `r` settles (at once if it is not a task, promise
/// or thenable), `out` settles with the source's outcome (`ok`, `v`), or
/// with `r`'s error if it failed.
fn settle_after(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    this_promise(ctx, this)?;
    let r = arg(args, 0);
    let pass = if arg(args, 1).truthy() { Outcome::Value(arg(args, 2)) } else { Outcome::Error(arg(args, 2)) };
    let src = if is_waitable(r) {
        r
    } else if thenable_then(ctx, r)?.is_some() {
        let q = ctx.heap().alloc(Body::Promise(Default::default()));
        resolve_with(ctx, q, r)?;
        q
    } else {
        settle(ctx.rt, this, pass);
        return Ok(Value::UNDEFINED);
    };
    add_reaction(ctx.rt, src, Reaction::Adopt { target: this, pass: Some(pass) }).map_err(|m| ctx.type_error(m))?;
    Ok(Value::UNDEFINED)
}

/// `p.__trySettle(ok, v)`: settles unless already settled; true if it
/// settled.
fn try_settle(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let o = if arg(args, 0).truthy() { Outcome::Value(arg(args, 1)) } else { Outcome::Error(arg(args, 1)) };
    settle_once(ctx, this, o).map(Value::bool)
}

/// `Promise.__isWaitable(v)`: a task or a promise (what resolving adopts).
fn is_waitable_native(_ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    Ok(Value::bool(is_waitable(arg(args, 0))))
}

fn resolve(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    settle_promise(ctx, this, Outcome::Value(arg(args, 0)))
}

fn reject(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    settle_promise(ctx, this, Outcome::Error(arg(args, 0)))
}

fn promise_is_done(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    Ok(Value::bool(this_promise(ctx, this)?.completion.outcome().is_some()))
}

/// `Promise.resolved(v)`: an already settled promise.
fn resolved(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let p = PromiseCell::default();
    p.completion.inner.lock().set_outcome(Outcome::Value(arg(args, 0)));
    Ok(ctx.heap().alloc(Body::Promise(PromiseState::Local(p))))
}
