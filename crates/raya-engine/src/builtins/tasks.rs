//! Built-ins: tasks and promises (LANGUAGE.md §6): `sleep`, the `Task`
//! statics and methods, `Promise`.
//!
//! `Task.all`, `Task.race`, `Task.any` and `Task.scope` are written in Raya
//! (`stdlib/prelude.raya`) on top of the primitives here.

use crate::sync::{Outcome, PromiseCell, Resume, Wait};
use crate::vm::interp::is_waitable;
use crate::vm::native::{arg, NativeCtx};
use crate::vm::object::Body;
use crate::vm::ops;
use crate::vm::realm::{Builder, Realm};
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
    b.method(p, "__resolveOrAdopt", resolve_or_adopt);
    b.method(p, "__rejectOnce", reject_once);
    b.static_native(realm.classes.promise, "resolved", resolved);
    b.static_native(realm.classes.promise, "__isWaitable", is_waitable_native);
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
    Ok(ctx.task.cell.as_ref().map(|c| c.object()).unwrap_or(Value::UNDEFINED))
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
        *t.resume.lock() = Some(Resume::Cancel);
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
    Ok(ctx.heap().alloc(Body::Promise(Arc::new(PromiseCell::default()))))
}

fn this_promise(ctx: &mut NativeCtx, this: Value) -> Result<Arc<PromiseCell>, Value> {
    match this.as_obj().map(|o| &o.body) {
        Some(Body::Promise(p)) => Ok(p.clone()),
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
    let p = this_promise(ctx, this)?;
    match p.completion.settle(o) {
        Some(waiters) => {
            if matches!(o, Outcome::Error(_)) {
                let mut g = p.completion.inner.lock();
                if waiters.iter().any(|w| w.tag == crate::sync::TAG_AWAIT) {
                    g.observed = true;
                }
                if !g.observed {
                    // Reported at the end unless someone awaits it (or
                    // attaches a handler) by then.
                    ctx.rt.world.failed_tasks.lock().push(this);
                }
            }
            crate::driver::wake_all(ctx.rt, waiters, o);
            Ok(true)
        }
        None => Ok(false),
    }
}

/// `p.__trySettle(ok, v)`: the `resolve`/`reject` of an executor: settles
/// unless already settled (a second call is ignored, as in JS); true if
/// it settled.
fn try_settle(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let o = if arg(args, 0).truthy() { Outcome::Value(arg(args, 1)) } else { Outcome::Error(arg(args, 1)) };
    settle_once(ctx, this, o).map(Value::bool)
}

/// Claims the promise for an executor's first `resolve`/`reject`; false if
/// an earlier call did.
fn claim(ctx: &mut NativeCtx, this: Value) -> Result<bool, Value> {
    let p = this_promise(ctx, this)?;
    Ok(!p.claimed.swap(true, std::sync::atomic::Ordering::AcqRel))
}

/// An executor's `resolve(v)` (all of it but adoption): ignored unless it
/// is the first call; settles with a plain value, rejects resolving with
/// the promise itself (as JS does), and returns true when `v` is a task or
/// promise to adopt (the prelude spawns the task that does it).
fn resolve_or_adopt(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    if !claim(ctx, this)? {
        return Ok(Value::FALSE);
    }
    let v = arg(args, 0);
    if v == this {
        let e = ctx.type_error("Chaining cycle detected for promise #<Promise>");
        settle_once(ctx, this, Outcome::Error(e))?;
        return Ok(Value::FALSE);
    }
    if is_waitable(v) {
        return Ok(Value::TRUE);
    }
    settle_once(ctx, this, Outcome::Value(v))?;
    Ok(Value::FALSE)
}

/// An executor's `reject(e)`: ignored unless it is the first call.
fn reject_once(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    if claim(ctx, this)? {
        settle_once(ctx, this, Outcome::Error(arg(args, 0)))?;
    }
    Ok(Value::UNDEFINED)
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
    p.completion.settle(Outcome::Value(arg(args, 0)));
    Ok(ctx.heap().alloc(Body::Promise(Arc::new(p))))
}
