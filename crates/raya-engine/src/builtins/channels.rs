//! Built-ins: `Channel`, `after`, `every`, `Mutex`, `WaitGroup`,
//! `Semaphore` (LANGUAGE.md §6). The data structures and the wait/wake
//! logic live in `sync::channel` and `sync::mutex`; these natives are the
//! fast paths plus the `rt.suspend` hand-off when the task must wait.
//! `Mutex.withLock` takes a callback, so it is written in Raya
//! (`stdlib/prelude.raya`, key `mutex:withLock`).

use crate::sync::channel::{ChannelCell, Recv, RecvWait, SendWait, Sent};
use crate::sync::mutex::{AcquireWait, GroupWait, Lock, LockWait, MutexCell, SemaphoreCell, Unlocked, WaitGroupCell};
use crate::sync::Wait;
use crate::vm::native::{arg, NativeCtx};
use crate::vm::object::Body;
use crate::vm::ops;
use crate::vm::realm::{Builder, Realm};
use crate::vm::value::Value;
use std::sync::Arc;

pub fn install(b: &mut Builder, realm: &mut Realm) {
    realm.globals[super::global_slot("after")] = b.native("after", after);
    realm.globals[super::global_slot("every")] = b.native("every", every);
    let m = &mut realm.methods.channel;
    b.method(m, "send", send);
    b.method(m, "receive", receive);
    b.method(m, "trySend", try_send);
    b.method(m, "tryReceive", try_receive);
    b.method(m, "close", close);
    b.method(m, "isClosed", is_closed);
    let m = &mut realm.methods.mutex;
    b.method(m, "lock", lock);
    b.method(m, "unlock", unlock);
    b.method(m, "tryLock", try_lock);
    b.method(m, "isLocked", is_locked);
    let m = &mut realm.methods.wait_group;
    b.method(m, "add", wg_add);
    b.method(m, "done", wg_done);
    b.method(m, "wait", wg_wait);
    let m = &mut realm.methods.semaphore;
    b.method(m, "acquire", acquire);
    b.method(m, "release", release);
    b.method(m, "tryAcquire", try_acquire);
}

/// A non-negative integer count argument (capacity, permits).
fn count_arg(ctx: &mut NativeCtx, v: Value, what: &str) -> Result<u64, Value> {
    if v.is_undefined() {
        return Ok(0);
    }
    if !v.is_number() {
        return Err(ctx.type_error(format!("{what} must be a number, got {}", ops::type_of(v))));
    }
    let n = v.as_number();
    if !(n >= 0.0 && n.fract() == 0.0 && n <= u32::MAX as f64) {
        return Err(ctx.range_error(format!("Invalid {what}: {}", ops::to_display(v))));
    }
    Ok(n as u64)
}

// ---- Channel ----------------------------------------------------------------

/// `new Channel<T>(capacity = 0)`.
pub fn construct_channel(ctx: &mut NativeCtx, args: &[Value]) -> Result<Value, Value> {
    let cap = count_arg(ctx, arg(args, 0), "channel capacity")?;
    let mut ch = ChannelCell::new(cap as usize);
    ch.site = ctx.rt.user_site(ctx.task);
    Ok(ctx.heap().alloc(Body::Channel(Arc::new(ch))))
}

fn ms_arg(ctx: &mut NativeCtx, args: &[Value], what: &str) -> Result<f64, Value> {
    let v = arg(args, 0);
    if !v.is_number() {
        return Err(ctx.type_error(format!("{what} expects a number of milliseconds, got {}", ops::type_of(v))));
    }
    let ms = v.as_number();
    Ok(if ms.is_nan() { 0.0 } else { ms })
}

/// `after(ms)`: a channel that delivers `ms` once after `ms` milliseconds,
/// then is closed.
fn after(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let ms = ms_arg(ctx, args, "after")?.max(0.0);
    let mut ch = ChannelCell::after(ms);
    ch.site = ctx.rt.user_site(ctx.task);
    Ok(ctx.heap().alloc(Body::Channel(Arc::new(ch))))
}

/// `every(ms)`: a ticker channel delivering 1, 2, 3, ...
fn every(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let ms = ms_arg(ctx, args, "every")?;
    if ms <= 0.0 || !ms.is_finite() {
        return Err(ctx.range_error(format!("every() needs a positive interval, got {ms}")));
    }
    let mut ch = ChannelCell::every(ms);
    ch.site = ctx.rt.user_site(ctx.task);
    Ok(ctx.heap().alloc(Body::Channel(Arc::new(ch))))
}

/// The receiver's channel, borrowed from the heap object (alive for the
/// whole call: the receiver is in a register).
fn this_channel(ctx: &mut NativeCtx, this: Value) -> Result<&'static Arc<ChannelCell>, Value> {
    match this.as_obj().map(|o| &o.body) {
        Some(Body::Channel(c)) => Ok(c),
        _ => Err(ctx.type_error("not a Channel")),
    }
}

pub fn closed_error(ctx: &mut NativeCtx) -> Value {
    let c = ctx.rt.realm.classes.channel_closed_error;
    ctx.error(c, "send on a closed channel")
}

/// Checks a value to send: not null/undefined, not to a timer channel.
pub fn check_send(ch: &ChannelCell, v: Value) -> Result<(), String> {
    if v.is_nullish() {
        return Err(format!("Cannot send {} on a channel", ops::to_display(v)));
    }
    if ch.is_timer() {
        return Err("Cannot send on a timer channel".into());
    }
    Ok(())
}

fn send(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let ch = this_channel(ctx, this)?;
    let v = arg(args, 0);
    if let Err(m) = check_send(ch, v) {
        return Err(ctx.type_error(m));
    }
    ch.note_sender(ctx.task.id);
    match ch.try_send(v, &mut ctx.rt.woken) {
        Sent::Sent => {}
        Sent::Closed => return Err(closed_error(ctx)),
        Sent::Full => ctx.rt.suspend = Some(Wait::Object(Box::new(SendWait(ch.clone(), v)))),
    }
    Ok(Value::UNDEFINED)
}

fn receive(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let ch = this_channel(ctx, this)?;
    ch.note_receiver(ctx.task.id);
    match ch.try_recv(&mut ctx.rt.woken) {
        Recv::Got(v) => Ok(v),
        Recv::Empty => {
            ctx.rt.suspend = Some(Wait::Object(Box::new(RecvWait(ch.clone()))));
            Ok(Value::UNDEFINED)
        }
    }
}

fn try_send(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let ch = this_channel(ctx, this)?;
    let v = arg(args, 0);
    if let Err(m) = check_send(ch, v) {
        return Err(ctx.type_error(m));
    }
    match ch.try_send(v, &mut ctx.rt.woken) {
        Sent::Sent => Ok(Value::TRUE),
        Sent::Full => Ok(Value::FALSE),
        Sent::Closed => Err(closed_error(ctx)),
    }
}

fn try_receive(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let ch = this_channel(ctx, this)?;
    match ch.try_recv(&mut ctx.rt.woken) {
        Recv::Got(v) => Ok(v),
        Recv::Empty => Ok(Value::NULL),
    }
}

fn close(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let ch = this_channel(ctx, this)?;
    if ch.close(&mut ctx.rt.woken) {
        Ok(Value::UNDEFINED)
    } else {
        Err(ctx.plain_error("Channel is already closed"))
    }
}

fn is_closed(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    Ok(Value::bool(this_channel(ctx, this)?.is_closed()))
}

// ---- Mutex ------------------------------------------------------------------

pub fn construct_mutex(ctx: &mut NativeCtx, _args: &[Value]) -> Result<Value, Value> {
    let mut m = MutexCell::default();
    m.site = ctx.rt.user_site(ctx.task);
    Ok(ctx.heap().alloc(Body::Mutex(Arc::new(m))))
}

/// The receiver's mutex, borrowed from the heap object (alive for the
/// whole call: the receiver is in a register).
fn this_mutex(ctx: &mut NativeCtx, this: Value) -> Result<&'static Arc<MutexCell>, Value> {
    match this.as_obj().map(|o| &o.body) {
        Some(Body::Mutex(m)) => Ok(m),
        _ => Err(ctx.type_error("not a Mutex")),
    }
}

// `lock` and `unlock` run once per critical section, so their common
// cases are written to need no stack frame of their own: everything that
// calls out (errors, waits, hand-offs) is in a separate function.

fn lock(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let Some(Body::Mutex(m)) = this.as_obj().map(|o| &o.body) else {
        return Err(not_a_mutex(ctx));
    };
    let r = m.try_lock(ctx.task.id);
    // The common case: a free mutex, which this task locked last time too.
    if r == Lock::Acquired && ctx.task.last_locked_is(m) {
        return Ok(Value::UNDEFINED);
    }
    lock_on(ctx, m, r)
}

/// The rest of `lock()`, after the first attempt `r`.
#[inline(never)]
fn lock_on(ctx: &mut NativeCtx, m: &'static Arc<MutexCell>, mut r: Lock) -> Result<Value, Value> {
    let id = ctx.task.id;
    if r == Lock::Busy && crate::vm::object::parallel_mutators() {
        r = m.spin_lock(id);
    }
    match r {
        Lock::Acquired => ctx.task.note_lock(m),
        Lock::Reentrant => return Err(ctx.plain_error("Mutex is already locked by this task")),
        Lock::Busy => {
            // Noted now: the mutex is handed to this task while it waits.
            ctx.task.note_lock(m);
            ctx.rt.suspend = Some(Wait::Object(Box::new(LockWait(m.clone()))));
        }
    }
    Ok(Value::UNDEFINED)
}

fn unlock(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let Some(Body::Mutex(m)) = this.as_obj().map(|o| &o.body) else {
        return Err(not_a_mutex(ctx));
    };
    match m.release(ctx.task.id, &mut ctx.rt.woken) {
        Unlocked::Released | Unlocked::HandedOn { again: false } => Ok(Value::UNDEFINED),
        Unlocked::NotHolder => Err(not_holder(ctx)),
        Unlocked::HandedOn { again: true } => {
            // A lock convoy: this task was handed the mutex and hands it
            // on. Were it to go straight back for the mutex, it would queue
            // behind the waiters again, and every lock from then on would
            // cost a task switch. Yielding instead (as Go's starvation-mode
            // unlock does) lets the new holder run at once and the queue
            // drain, after which locks are uncontended again.
            yield_now(ctx);
            Ok(Value::UNDEFINED)
        }
    }
}

#[cold]
#[inline(never)]
fn not_a_mutex(ctx: &mut NativeCtx) -> Value {
    ctx.type_error("not a Mutex")
}

#[cold]
#[inline(never)]
fn not_holder(ctx: &mut NativeCtx) -> Value {
    ctx.plain_error("Mutex is not locked by this task")
}

#[inline(never)]
fn yield_now(ctx: &mut NativeCtx) {
    ctx.rt.suspend = Some(Wait::Until(crate::scheduler::now()));
}

fn try_lock(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let m = this_mutex(ctx, this)?;
    match m.try_lock(ctx.task.id) {
        Lock::Acquired => {
            ctx.task.note_lock(m);
            Ok(Value::TRUE)
        }
        // Never throws (LANGUAGE.md §6): held by this task is as busy as
        // held by any other.
        Lock::Busy | Lock::Reentrant => Ok(Value::FALSE),
    }
}

fn is_locked(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    Ok(Value::bool(this_mutex(ctx, this)?.is_locked()))
}

// ---- WaitGroup --------------------------------------------------------------

pub fn construct_wait_group(ctx: &mut NativeCtx, _args: &[Value]) -> Result<Value, Value> {
    Ok(ctx.heap().alloc(Body::WaitGroup(Arc::new(WaitGroupCell::default()))))
}

fn this_wg(ctx: &mut NativeCtx, this: Value) -> Result<Arc<WaitGroupCell>, Value> {
    match this.as_obj().map(|o| &o.body) {
        Some(Body::WaitGroup(g)) => Ok(g.clone()),
        _ => Err(ctx.type_error("not a WaitGroup")),
    }
}

fn wg_change(ctx: &mut NativeCtx, this: Value, n: i64) -> Result<Value, Value> {
    let g = this_wg(ctx, this)?;
    match g.add(n, &mut ctx.rt.woken) {
        Ok(()) => Ok(Value::UNDEFINED),
        Err(crate::sync::mutex::NegativeCount) => Err(ctx.plain_error("WaitGroup counter cannot be negative")),
    }
}

fn wg_add(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let v = arg(args, 0);
    let n = if v.is_undefined() {
        1.0
    } else if v.is_number() && v.as_number().fract() == 0.0 {
        v.as_number()
    } else {
        return Err(ctx.type_error(format!("WaitGroup.add expects an integer, got {}", ops::to_display(v))));
    };
    wg_change(ctx, this, n.clamp(-1e15, 1e15) as i64)
}

fn wg_done(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    wg_change(ctx, this, -1)
}

fn wg_wait(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let g = this_wg(ctx, this)?;
    if g.count() != 0 {
        ctx.rt.suspend = Some(Wait::Object(Box::new(GroupWait(g))));
    }
    Ok(Value::UNDEFINED)
}

// ---- Semaphore --------------------------------------------------------------

pub fn construct_semaphore(ctx: &mut NativeCtx, args: &[Value]) -> Result<Value, Value> {
    let n = count_arg(ctx, arg(args, 0), "semaphore permit count")?;
    Ok(ctx.heap().alloc(Body::Semaphore(Arc::new(SemaphoreCell::new(n)))))
}

fn this_sem(ctx: &mut NativeCtx, this: Value) -> Result<Arc<SemaphoreCell>, Value> {
    match this.as_obj().map(|o| &o.body) {
        Some(Body::Semaphore(s)) => Ok(s.clone()),
        _ => Err(ctx.type_error("not a Semaphore")),
    }
}

fn acquire(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let s = this_sem(ctx, this)?;
    if !s.try_acquire() {
        ctx.rt.suspend = Some(Wait::Object(Box::new(AcquireWait(s))));
    }
    Ok(Value::UNDEFINED)
}

fn release(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let s = this_sem(ctx, this)?;
    s.release(&mut ctx.rt.woken);
    Ok(Value::UNDEFINED)
}

fn try_acquire(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    Ok(Value::bool(this_sem(ctx, this)?.try_acquire()))
}
