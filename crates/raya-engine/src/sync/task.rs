//! The shared part of a task: what other tasks, wakers and the scheduler
//! see of it.
//!
//! A `TaskCell` lives in an `Arc`: the heap's `Task` object points to it,
//! and so do scheduler jobs, timers and waiter lists. Those outside
//! references keep only the cell alive (never the task's values), so a
//! stale job for a finished task is harmless: it fails to claim, or finds
//! no execution state, and is dropped.

use super::prim::{self, AtomicBool, AtomicU64};
use super::{Completion, WaitToken};
use crate::vm::task::Task;
use crate::vm::value::Value;
use parking_lot::Mutex;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// What a woken task does first when it runs again.
#[derive(Clone, Copy, Debug)]
pub enum Resume {
    /// Store the value in the register the blocking operation writes.
    Value(Value),
    /// Re-execute the blocking instruction (e.g. `await`, which then finds
    /// its operand settled).
    Retry,
    /// Throw this value at the suspension point.
    Throw(Value),
    /// Throw a new `TaskCancelledError` at the suspension point.
    Cancel,
    /// Throw a new `ChannelClosedError` at the suspension point (a sender
    /// woken by `close`).
    Closed,
    /// A suspended `select` was decided: case `case` fired; `value` goes
    /// to the select's value register (received values), and the frame
    /// jumps to that case's body.
    Case { case: u32, value: Value },
}

impl Resume {
    /// The heap value this resumption carries, if any (a root for the
    /// collector while the task waits to run).
    pub fn value(&self) -> Option<Value> {
        match *self {
            Resume::Value(v) | Resume::Throw(v) | Resume::Case { value: v, .. } => Some(v),
            Resume::Retry | Resume::Cancel | Resume::Closed => None,
        }
    }
}

pub struct TaskCell {
    pub id: u32,
    /// Bits of the heap `Task` object's value (valid while the task is
    /// unfinished: the runtime's registry keeps the object alive).
    pub object: AtomicU64,
    /// The execution state; `None` while a worker runs the task (the worker
    /// took it) and after the task finished.
    pub exec: Mutex<Option<Box<Task>>>,
    pub completion: Completion,
    pub token: WaitToken,
    /// `t.cancel()` was called (sticky).
    pub cancel: AtomicBool,
    /// Set by the waker that claimed the task, read when it runs again.
    pub resume: prim::Mutex<Option<Resume>>,
    /// The task has run at least once.
    pub started: AtomicBool,
    /// The generation `SHARED_GEN` registrations claim (see there).
    pub all_gen: AtomicU64,
    /// A `TaskCancelledError` was already thrown (at a preemption check or
    /// a suspension); later preemption checks let the task run (only
    /// suspensions throw again).
    pub cancel_delivered: AtomicBool,
    /// Timers armed for the task's current wait (`sleep`, `select`
    /// timeouts); cancelled when it runs again.
    pub timers: Mutex<TimerKeys>,
    /// `timers` may be non-empty: lets a run skip the lock when the wait
    /// armed no timer (the common case). See `driver::keep_timer`.
    pub timers_armed: AtomicBool,
    /// What few tasks have: a cancel hook (a wait on the outside world),
    /// an `on_done` (an embedder's call), `on_cancel` hooks (host
    /// futures). Boxed on first use, so a task with none (most of them,
    /// and a million suspended ones, design/memory.md) costs one word.
    /// Read and written through the methods below, each of which holds
    /// the lock only to put a hook in or take it out, never while one
    /// runs or is dropped: a hook may lock its wait's state, which holds
    /// this lock while registering.
    hooks: Mutex<Option<Box<Hooks>>>,
    /// The limits of the run the task belongs to (`crate::limits`),
    /// charged and checked where each of its runs ends.
    pub guard: OnceArc<crate::limits::Guard>,
}

/// The keys of [`TaskCell::timers`]. Boxed on a task's first timer (and
/// kept for the next ones): most tasks never sleep, and a list in place
/// would cost each of them two more words of its cell.
// The box is the point: one word in every cell instead of three.
#[allow(clippy::box_collection)]
#[derive(Default)]
pub struct TimerKeys(Option<Box<Vec<crate::scheduler::TimerKey>>>);

impl TimerKeys {
    pub fn push(&mut self, key: crate::scheduler::TimerKey) {
        self.0.get_or_insert_with(Box::default).push(key);
    }

    /// Takes `key` out, if it is still there.
    pub fn remove(&mut self, key: crate::scheduler::TimerKey) -> Option<crate::scheduler::TimerKey> {
        let keys = self.0.as_deref_mut()?;
        keys.iter().position(|&k| k == key).map(|i| keys.swap_remove(i))
    }

    /// Takes every key out (the box stays, for the next wait's timers).
    pub fn take(&mut self) -> Vec<crate::scheduler::TimerKey> {
        self.0.as_deref_mut().map(std::mem::take).unwrap_or_default()
    }

    pub fn as_slice(&self) -> &[crate::scheduler::TimerKey] {
        self.0.as_deref().map_or(&[], |k| k.as_slice())
    }
}

/// An `Arc` set at most once, then read without a lock: what
/// `std::sync::OnceLock<Arc<T>>` does, in one word instead of two (the
/// `Arc` is boxed; only tasks of a limited run have one, and a task's cell
/// stays in the allocator's 160-byte class, design/memory.md).
///
/// The marker gives it the `Send`/`Sync` of the `Arc<T>` it owns (an
/// `AtomicPtr` alone is both whatever it points to).
pub struct OnceArc<T>(std::sync::atomic::AtomicPtr<Arc<T>>, std::marker::PhantomData<Arc<T>>);

impl<T> Default for OnceArc<T> {
    fn default() -> Self {
        OnceArc(std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()), std::marker::PhantomData)
    }
}

impl<T> OnceArc<T> {
    pub fn get(&self) -> Option<&Arc<T>> {
        // SAFETY: a non-null pointer is a box made by `set`, published by
        // its Release exchange and freed only by `&mut self` (drop,
        // `clear`), so it outlives this borrow of `self`.
        unsafe { self.0.load(Ordering::Acquire).as_ref() }
    }

    /// Sets the value unless one was set first (then it is handed back).
    pub fn set(&self, v: Arc<T>) -> Result<(), Arc<T>> {
        let p = Box::into_raw(Box::new(v));
        match self.0.compare_exchange(std::ptr::null_mut(), p, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => Ok(()),
            // SAFETY: `p` was not published; this is its only owner.
            Err(_) => Err(*unsafe { Box::from_raw(p) }),
        }
    }

    /// Unsets it (`&mut`: nobody else can be reading it).
    pub fn clear(&mut self) {
        let p = std::mem::replace(self.0.get_mut(), std::ptr::null_mut());
        if !p.is_null() {
            // SAFETY: made by `set`, and no longer reachable through `self`.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

impl<T> Drop for OnceArc<T> {
    fn drop(&mut self) {
        self.clear();
    }
}

/// See [`TaskCell::hooks`].
#[derive(Default)]
struct Hooks {
    /// Run by `t.cancel()` after it claims the task: a wait on the outside
    /// world lets go of what it holds for the program (`std::io`). Set by
    /// the wait object at registration; may be stale (then it finds
    /// nothing left to release).
    cancel_hook: Option<Hook>,
    /// Run once with the task's outcome, on the worker that settles it:
    /// how the embedding API learns that a call it started has ended.
    on_done: Option<OnDone>,
    /// Run when the task is cancelled (`t.cancel()`, or an embedder
    /// stopping it), whatever it waits on: host futures it started are
    /// dropped (`embed`).
    on_cancel: Vec<Hook>,
}

/// A hook of [`TaskCell::hooks`].
pub type Hook = Box<dyn FnOnce() + Send>;

/// See [`TaskCell::set_on_done`].
pub type OnDone = Box<dyn FnOnce(&mut crate::vm::Runtime, super::Outcome) + Send>;

impl TaskCell {
    pub fn new(id: u32, exec: Box<Task>) -> TaskCell {
        let cell = TaskCell::without_exec(id);
        *cell.exec.lock() = Some(exec);
        cell
    }

    /// A cell whose execution state is installed afterwards (the state
    /// needs the cell's `Arc` first).
    pub fn without_exec(id: u32) -> TaskCell {
        TaskCell {
            id,
            object: AtomicU64::new(Value::UNDEFINED.bits()),
            exec: Mutex::new(None),
            completion: Completion::default(),
            token: WaitToken::default(),
            cancel: AtomicBool::new(false),
            resume: prim::Mutex::new(None),
            started: AtomicBool::new(false),
            all_gen: AtomicU64::new(0),
            cancel_delivered: AtomicBool::new(false),
            timers: Mutex::new(TimerKeys::default()),
            timers_armed: AtomicBool::new(false),
            hooks: Mutex::new(None),
            guard: OnceArc::default(),
        }
    }

    #[inline]
    pub fn object(&self) -> Value {
        Value::from_bits(self.object.load(Ordering::Acquire))
    }

    /// `t.cancel()`: raises the sticky flag, then claims the task's wait
    /// if one is armed. True when this call claimed it: the caller then
    /// delivers `Resume::Cancel` and makes the task runnable. When no wait
    /// is armed yet, the worker that is suspending the task sees the flag
    /// after arming (`driver::park`): flag store before token load here,
    /// token store before flag load there, all SeqCst.
    pub fn request_cancel(&self) -> bool {
        self.cancel.store(true, Ordering::SeqCst);
        self.run_on_cancel();
        self.token.claim_current() && self.run_cancel_hook()
    }

    /// Runs (once) what was registered with [`TaskCell::push_on_cancel`].
    pub fn run_on_cancel(&self) {
        for h in self.take_on_cancel() {
            h();
        }
    }

    fn with_hooks<R>(&self, f: impl FnOnce(&mut Hooks) -> R) -> R {
        f(self.hooks.lock().get_or_insert_with(Box::default))
    }

    /// Takes something out of the hooks, if the task has any (no box is
    /// made for that).
    /// Makes a cell nobody else holds (`&mut`) that of a new call with
    /// `id` (the driver's reused state for plain calls): no guard, no
    /// hooks. No lock is taken: `&mut` says no other thread can reach it.
    #[inline]
    pub fn reuse(&mut self, id: u32) {
        self.id = id;
        self.guard.clear();
        // Only the cancel hooks of host futures the last call started can
        // be left (see `driver::LiveRun::call_here`); dropped here, outside
        // any lock.
        drop(self.hooks.get_mut().take());
    }

    fn take_hook<R: Default>(&self, f: impl FnOnce(&mut Hooks) -> R) -> R {
        self.hooks.lock().as_deref_mut().map(f).unwrap_or_default()
    }

    /// Sets the cancel hook of the wait being registered.
    pub fn set_cancel_hook(&self, hook: Hook) {
        let old = self.with_hooks(|h| h.cancel_hook.replace(hook));
        drop(old);
    }

    /// Takes the cancel hook out (the wait ended); the caller drops it
    /// after the lock is released.
    pub fn take_cancel_hook(&self) -> Option<Hook> {
        self.take_hook(|h| h.cancel_hook.take())
    }

    /// Sets what runs with the task's outcome (see [`Hooks::on_done`]).
    pub fn set_on_done(&self, f: OnDone) {
        let old = self.with_hooks(|h| h.on_done.replace(f));
        drop(old);
    }

    pub fn take_on_done(&self) -> Option<OnDone> {
        self.take_hook(|h| h.on_done.take())
    }

    /// Adds a hook run when the task is cancelled (see [`Hooks::on_cancel`]).
    pub fn push_on_cancel(&self, hook: Hook) {
        self.with_hooks(|h| h.on_cancel.push(hook));
    }

    pub fn take_on_cancel(&self) -> Vec<Hook> {
        self.take_hook(|h| std::mem::take(&mut h.on_cancel))
    }

    /// The suspending worker's side of [`TaskCell::request_cancel`]: after
    /// arming generation `gen` and registering, claims that wait if a
    /// cancel was requested meanwhile. True when this call claimed it.
    pub fn claim_if_cancelled(&self, gen: u64) -> bool {
        self.cancel.load(Ordering::SeqCst) && self.token.claim(gen) && self.run_cancel_hook()
    }

    /// Runs the cancel hook of the wait just claimed for cancellation, if
    /// its wait object left one; returns true.
    fn run_cancel_hook(&self) -> bool {
        // Taken out first: the hook locks its wait's state, which holds
        // `cancel_hook`'s lock while registering.
        let hook = self.take_cancel_hook();
        if let Some(hook) = hook {
            hook();
        }
        true
    }

    pub fn is_cancel_requested(&self) -> bool {
        self.cancel.load(Ordering::Acquire)
    }

    pub fn is_done(&self) -> bool {
        self.completion.outcome().is_some()
    }
}

/// `'running'`, `'done'`, `'failed'` or `'cancelled'` (for printing).
pub fn state_name(t: &TaskCell) -> &'static str {
    match t.completion.outcome() {
        None => "running",
        o => outcome_name(o),
    }
}

/// `'pending'`, `'done'`, `'failed'` or `'cancelled'`.
pub fn outcome_name(o: Option<super::Outcome>) -> &'static str {
    match o {
        None => "pending",
        Some(super::Outcome::Value(_)) => "done",
        Some(super::Outcome::Error(_)) => "failed",
        Some(super::Outcome::Cancelled(_)) => "cancelled",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Set once (a second value is handed back), read without a lock,
    /// and its `Arc` released by `clear` and by drop.
    #[test]
    fn a_once_arc_is_set_once_and_releases_its_value() {
        let v = Arc::new(5);
        let mut slot = OnceArc::default();
        assert!(slot.get().is_none());
        assert!(slot.set(v.clone()).is_ok());
        let other = Arc::new(6);
        assert!(Arc::ptr_eq(&slot.set(other.clone()).unwrap_err(), &other), "the second value comes back");
        assert_eq!(slot.get().map(|a| **a), Some(5));
        assert_eq!(Arc::strong_count(&v), 2);
        slot.clear();
        assert!(slot.get().is_none());
        assert_eq!(Arc::strong_count(&v), 1);
        slot.set(v.clone()).unwrap();
        drop(slot);
        assert_eq!(Arc::strong_count(&v), 1, "dropped with the slot");
    }

    /// A task's timer keys: none boxed until the first, and the box kept
    /// (empty) when they are taken out.
    #[test]
    fn timer_keys_are_boxed_on_first_use() {
        use crate::scheduler::{Scheduler, WorkerCx};
        let sched: Scheduler<u32> = Scheduler::new(1, |_cx: &WorkerCx<u32>, _job: u32| {});
        let far = std::time::Instant::now() + std::time::Duration::from_secs(3600);
        let (a, b) = (sched.sleep_until(far, 1), sched.sleep_until(far, 2));
        let mut keys = TimerKeys::default();
        assert!(keys.0.is_none() && keys.take().is_empty() && keys.remove(a).is_none());
        keys.push(a);
        keys.push(b);
        assert_eq!(keys.remove(a), Some(a));
        assert_eq!(keys.as_slice(), [b]);
        assert_eq!(keys.take(), vec![b]);
        assert!(keys.0.is_some() && keys.as_slice().is_empty());
        sched.shutdown();
    }

    /// A cancel racing a suspension is delivered exactly once: either the
    /// canceller claims the armed wait, or the suspending worker's re-check
    /// after arming sees the flag — never neither (a lost cancel, the task
    /// blocked forever) and never both (a double wake-up).
    #[test]
    fn cancel_racing_a_suspension_is_claimed_exactly_once() {
        for _ in 0..20_000 {
            let cell = Arc::new(TaskCell::without_exec(1));
            let (parker, canceller) = std::thread::scope(|s| {
                let c = cell.clone();
                let cancel = s.spawn(move || c.request_cancel());
                let gen = cell.token.arm();
                let parked = cell.claim_if_cancelled(gen);
                (parked, cancel.join().unwrap())
            });
            assert!(parker ^ canceller, "claimed by parker: {parker}, by canceller: {canceller}");
        }
    }
}
