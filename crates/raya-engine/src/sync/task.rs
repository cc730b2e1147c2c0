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

/// A task's pending [`Resume`]: `Option<Resume>` in three 4-byte words,
/// the variant in the low byte of the first and a select case's index in
/// its other 24 bits (the compiler refuses a `select` of more cases,
/// [`crate::bytecode::MAX_SELECT_CASES`]). With its lock this takes two
/// words of the cell where an `Option<Resume>` took three, which puts the
/// cell in its `Arc` in the allocator's 112-byte class, apart from the
/// 128-byte class of the task's execution state (design/memory.md,
/// "Memory per task").
#[derive(Clone, Copy, Default)]
pub struct ResumeSlot {
    head: u32,
    value: [u32; 2],
}

impl ResumeSlot {
    const NONE: u32 = 0;
    const VALUE: u32 = 1;
    const RETRY: u32 = 2;
    const THROW: u32 = 3;
    const CANCEL: u32 = 4;
    const CLOSED: u32 = 5;
    const CASE: u32 = 6;

    /// Stores `r`, replacing whatever was pending.
    #[inline]
    pub fn set(&mut self, r: Resume) {
        let (head, v) = match r {
            Resume::Value(v) => (Self::VALUE, v),
            Resume::Retry => (Self::RETRY, Value::UNDEFINED),
            Resume::Throw(v) => (Self::THROW, v),
            Resume::Cancel => (Self::CANCEL, Value::UNDEFINED),
            Resume::Closed => (Self::CLOSED, Value::UNDEFINED),
            Resume::Case { case, value } => {
                debug_assert!((case as usize) < crate::bytecode::MAX_SELECT_CASES);
                (Self::CASE | case << 8, value)
            }
        };
        let bits = v.bits();
        *self = ResumeSlot { head, value: [bits as u32, (bits >> 32) as u32] };
    }

    /// The pending resume, left in place.
    #[inline]
    pub fn get(&self) -> Option<Resume> {
        let v = Value::from_bits(u64::from(self.value[0]) | u64::from(self.value[1]) << 32);
        Some(match self.head & 0xff {
            Self::NONE => return None,
            Self::VALUE => Resume::Value(v),
            Self::RETRY => Resume::Retry,
            Self::THROW => Resume::Throw(v),
            Self::CANCEL => Resume::Cancel,
            Self::CLOSED => Resume::Closed,
            _ => Resume::Case { case: self.head >> 8, value: v },
        })
    }

    /// The pending resume, taken out.
    #[inline]
    pub fn take(&mut self) -> Option<Resume> {
        let r = self.get();
        self.head = Self::NONE;
        r
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
    pub resume: prim::Mutex<ResumeSlot>,
    /// The task has run at least once.
    pub started: AtomicBool,
    /// A `TaskCancelledError` was already thrown (at a preemption check or
    /// a suspension); later preemption checks let the task run (only
    /// suspensions throw again).
    pub cancel_delivered: AtomicBool,
    /// The task's current wait may have timers in [`Rare::locked`]: lets a
    /// run skip the box and its lock when the wait armed no timer (the
    /// common case). See `driver::keep_timer`.
    pub timers_armed: AtomicBool,
    /// What few tasks have, boxed on first use: an `await [..]`'s shared
    /// generation, a run's guard, timers, hooks. One word in every cell
    /// instead of six, which keeps a cell in its `Arc` in the allocator's
    /// 128-byte class (design/memory.md, "Memory per task"). Never taken
    /// out while other threads can reach the cell (only through `&mut`),
    /// so a reference to it lives as long as the borrow of the cell.
    rare: OnceBox<Rare>,
}

/// See [`TaskCell::rare`].
struct Rare {
    /// The generation `SHARED_GEN` registrations claim (see there); 0,
    /// like a cell with no box, for none.
    all_gen: AtomicU64,
    /// The limits of the run the task belongs to (`crate::limits`),
    /// charged and checked where each of its runs ends.
    guard: OnceArc<crate::limits::Guard>,
    /// Timers and hooks, under one lock. A leaf lock: every method that
    /// takes it only puts something in or takes it out, never runs, drops
    /// or locks anything else while holding it. So the two sharing it
    /// cannot deadlock (no path holds it for one while taking it for the
    /// other), and it may be taken under a wait object's lock (a
    /// registration sets its cancel hook there) while a hook, run with
    /// this lock released, locks its wait object.
    locked: Mutex<Locked>,
}

impl Default for Rare {
    fn default() -> Self {
        Rare { all_gen: AtomicU64::new(0), guard: OnceArc::default(), locked: Mutex::default() }
    }
}

#[derive(Default)]
struct Locked {
    /// Timers armed for the task's current wait (`sleep`, `select`
    /// timeouts); cancelled when it runs again.
    timers: Vec<crate::scheduler::TimerKey>,
    /// A cancel hook (a wait on the outside world), an `on_done` (an
    /// embedder's call), `on_cancel` hooks (host futures): boxed again,
    /// as a task that sleeps needs none of them.
    hooks: Option<Box<Hooks>>,
}

/// A box made at most once, then read without a lock: `OnceLock<Box<T>>`
/// in one word. Freed only through `&mut` (drop, [`OnceBox::take`]).
pub struct OnceBox<T>(std::sync::atomic::AtomicPtr<T>, std::marker::PhantomData<Box<T>>);

// SAFETY: as `OnceLock<T>`: a value set on one thread is read through `&`
// on others (`Sync`) and dropped by whichever owns the box (`Send`).
unsafe impl<T: Send + Sync> Sync for OnceBox<T> {}
unsafe impl<T: Send> Send for OnceBox<T> {}

impl<T> Default for OnceBox<T> {
    fn default() -> Self {
        OnceBox(std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()), std::marker::PhantomData)
    }
}

impl<T> OnceBox<T> {
    #[inline]
    pub fn get(&self) -> Option<&T> {
        // SAFETY: a non-null pointer is a box made by `set`, published by
        // its Release exchange (the Acquire here sees its contents) and
        // freed only through `&mut self`, so it outlives this borrow.
        unsafe { self.0.load(Ordering::Acquire).as_ref() }
    }

    /// Sets the box unless one was set first (then `v` is handed back).
    pub fn set(&self, v: Box<T>) -> Result<&T, Box<T>> {
        let p = Box::into_raw(v);
        match self.0.compare_exchange(std::ptr::null_mut(), p, Ordering::AcqRel, Ordering::Acquire) {
            // SAFETY: published just now; freed only through `&mut self`.
            Ok(_) => Ok(unsafe { &*p }),
            // SAFETY: `p` was not published; this is its only owner.
            Err(_) => Err(unsafe { Box::from_raw(p) }),
        }
    }

    /// The box, made by `f` if there is none yet (by one of racing callers;
    /// the others' are dropped).
    pub fn get_or_init(&self, f: impl FnOnce() -> T) -> &T {
        if let Some(v) = self.get() {
            return v;
        }
        match self.set(Box::new(f())) {
            Ok(v) => v,
            Err(_) => self.get().expect("set by the caller that won"),
        }
    }

    pub fn get_mut(&mut self) -> Option<&mut T> {
        // SAFETY: as in `get`; `&mut self` excludes every other borrow.
        unsafe { self.0.get_mut().as_mut() }
    }

    /// Takes the box out (`&mut`: nobody else can be reading it).
    pub fn take(&mut self) -> Option<Box<T>> {
        let p = std::mem::replace(self.0.get_mut(), std::ptr::null_mut());
        // SAFETY: made by `set`, and no longer reachable through `self`.
        (!p.is_null()).then(|| unsafe { Box::from_raw(p) })
    }
}

impl<T> Drop for OnceBox<T> {
    fn drop(&mut self) {
        drop(self.take());
    }
}

/// An `Arc` set at most once, then read without a lock: what
/// `std::sync::OnceLock<Arc<T>>` does, in one word instead of two (the
/// `Arc` is boxed; only tasks of a limited run have one).
pub struct OnceArc<T>(OnceBox<Arc<T>>);

impl<T> Default for OnceArc<T> {
    fn default() -> Self {
        OnceArc(OnceBox::default())
    }
}

impl<T> OnceArc<T> {
    #[inline]
    pub fn get(&self) -> Option<&Arc<T>> {
        self.0.get()
    }

    /// Sets the value unless one was set first (then it is handed back).
    pub fn set(&self, v: Arc<T>) -> Result<(), Arc<T>> {
        self.0.set(Box::new(v)).map(|_| ()).map_err(|b| *b)
    }

    /// Unsets it (`&mut`: nobody else can be reading it).
    pub fn clear(&mut self) {
        drop(self.0.take());
    }
}

/// See [`Locked::hooks`].
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

/// A hook of [`Locked::hooks`].
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
            resume: prim::Mutex::new(ResumeSlot::default()),
            started: AtomicBool::new(false),
            cancel_delivered: AtomicBool::new(false),
            timers_armed: AtomicBool::new(false),
            rare: OnceBox::default(),
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

    fn rare(&self) -> &Rare {
        self.rare.get_or_init(Rare::default)
    }

    fn with_hooks<R>(&self, f: impl FnOnce(&mut Hooks) -> R) -> R {
        f(self.rare().locked.lock().hooks.get_or_insert_with(Box::default))
    }

    /// Takes something out of the hooks, if the task has any (no box is
    /// made for that).
    fn take_hook<R: Default>(&self, f: impl FnOnce(&mut Hooks) -> R) -> R {
        let Some(rare) = self.rare.get() else { return R::default() };
        rare.locked.lock().hooks.as_deref_mut().map(f).unwrap_or_default()
    }

    /// Makes a cell nobody else holds (`&mut`) that of a new call with
    /// `id` (the driver's reused state for plain calls): no guard, no
    /// hooks. No lock is taken: `&mut` says no other thread can reach it.
    #[inline]
    pub fn reuse(&mut self, id: u32) {
        self.id = id;
        if let Some(rare) = self.rare.get_mut() {
            rare.guard.clear();
            // Only the cancel hooks of host futures the last call started
            // can be left (see `driver::LiveRun::call_here`); dropped
            // here, outside any lock.
            drop(rare.locked.get_mut().hooks.take());
        }
    }

    /// The limits of the run the task belongs to, if it has any
    /// (`crate::limits`): checked where each of its runs ends.
    #[inline]
    pub fn guard(&self) -> Option<&Arc<crate::limits::Guard>> {
        self.rare.get()?.guard.get()
    }

    /// Sets the task's guard unless it has one (then `g` is handed back).
    pub fn set_guard(&self, g: Arc<crate::limits::Guard>) -> Result<(), Arc<crate::limits::Guard>> {
        self.rare().guard.set(g)
    }

    /// The generation `SHARED_GEN` registrations claim (0: none).
    ///
    /// Boxing it keeps `driver::park_all`'s invariant: the box is
    /// published (Release) before the generation is stored in it, and
    /// that store comes before the token is armed, as the store in the
    /// cell did. A waker that finds no box reads 0, a value the generation
    /// held before that store, so it sees exactly what it could see
    /// before: the new generation, or an older one and a failed claim
    /// that the parking worker's re-check after arming covers.
    #[inline]
    pub fn all_gen(&self) -> u64 {
        self.rare.get().map_or(0, |r| r.all_gen.load(Ordering::Acquire))
    }

    /// Names the generation `SHARED_GEN` registrations claim (0: none;
    /// a cell without its box already names none).
    #[inline]
    pub fn set_all_gen(&self, gen: u64) {
        match self.rare.get() {
            Some(r) => r.all_gen.store(gen, Ordering::Release),
            None if gen == 0 => {}
            None => self.rare().all_gen.store(gen, Ordering::Release),
        }
    }

    /// Records a timer of the task's current wait (see `driver::keep_timer`).
    pub fn push_timer(&self, key: crate::scheduler::TimerKey) {
        self.rare().locked.lock().timers.push(key);
    }

    /// Takes `key` out of the task's timers, if it is still there.
    pub fn remove_timer(&self, key: crate::scheduler::TimerKey) -> Option<crate::scheduler::TimerKey> {
        let mut l = self.rare.get()?.locked.lock();
        l.timers.iter().position(|&k| k == key).map(|i| l.timers.swap_remove(i))
    }

    /// Takes every timer key out.
    pub fn take_timers(&self) -> Vec<crate::scheduler::TimerKey> {
        self.rare.get().map(|r| std::mem::take(&mut r.locked.lock().timers)).unwrap_or_default()
    }

    /// The timer keys recorded now (tests and debug checks).
    pub fn timer_keys(&self) -> Vec<crate::scheduler::TimerKey> {
        self.rare.get().map(|r| r.locked.lock().timers.clone()).unwrap_or_default()
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

    /// Every resume comes back out of the compact slot as it went in: each
    /// variant, values of every kind (a heap pointer, a negative number,
    /// NaN), case indices up to the last the compiler allows; `take`
    /// empties it and `set` replaces what was pending.
    #[test]
    fn a_resume_slot_keeps_every_resume() {
        let obj = Value::from_bits(0x0007_ffff_1234_5678);
        let values = [Value::UNDEFINED, Value::number(-2.5), Value::number(f64::NAN), obj];
        let last = (crate::bytecode::MAX_SELECT_CASES - 1) as u32;
        let mut slot = ResumeSlot::default();
        assert!(slot.get().is_none() && slot.take().is_none());
        for &v in &values {
            for r in [
                Resume::Value(v),
                Resume::Retry,
                Resume::Throw(v),
                Resume::Cancel,
                Resume::Closed,
                Resume::Case { case: 0, value: v },
                Resume::Case { case: 1, value: v },
                Resume::Case { case: last, value: v },
            ] {
                slot.set(Resume::Retry);
                slot.set(r);
                assert_eq!(format!("{:?}", slot.get()), format!("{:?}", Some(r)));
                assert_eq!(format!("{:?}", slot.take()), format!("{:?}", Some(r)));
                assert!(slot.get().is_none() && slot.take().is_none());
            }
        }
    }

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

    /// A task's timer keys: no box made until the first (nor by taking
    /// or removing them before it), and the box kept when they are taken
    /// out.
    #[test]
    fn timer_keys_are_boxed_on_first_use() {
        use crate::scheduler::{Scheduler, WorkerCx};
        let sched: Scheduler<u32> = Scheduler::new(1, |_cx: &WorkerCx<u32>, _job: u32| {});
        let far = std::time::Instant::now() + std::time::Duration::from_secs(3600);
        let (a, b) = (sched.sleep_until(far, 1), sched.sleep_until(far, 2));
        let cell = TaskCell::without_exec(1);
        assert!(cell.take_timers().is_empty() && cell.remove_timer(a).is_none() && cell.timer_keys().is_empty());
        assert!(cell.rare.get().is_none());
        cell.push_timer(a);
        cell.push_timer(b);
        assert_eq!(cell.remove_timer(a), Some(a));
        assert_eq!(cell.timer_keys(), [b]);
        assert_eq!(cell.take_timers(), vec![b]);
        assert!(cell.rare.get().is_some() && cell.timer_keys().is_empty());
        sched.shutdown();
    }

    /// What lives in a cell's rare box: none is made by reading it, or by
    /// naming no `await [..]` generation; each of its parts reads back, and
    /// `reuse` clears the guard and the hooks.
    #[test]
    fn a_cells_rare_parts_are_boxed_on_first_use() {
        // What a task that sleeps pays for its box (its timer list was a
        // 24-byte box of its own before).
        assert!(std::mem::size_of::<Rare>() <= 56, "the box is {} bytes", std::mem::size_of::<Rare>());
        let mut cell = TaskCell::without_exec(1);
        assert!(cell.guard().is_none() && cell.all_gen() == 0 && cell.take_on_done().is_none());
        assert!(cell.take_cancel_hook().is_none() && cell.take_on_cancel().is_empty());
        cell.set_all_gen(0);
        cell.reuse(2);
        assert!(cell.rare.get().is_none(), "nothing made a box");
        cell.set_all_gen(7);
        assert_eq!(cell.all_gen(), 7);
        cell.set_all_gen(0);
        assert_eq!(cell.all_gen(), 0);
        let g = Arc::new(crate::limits::Guard::new(
            &crate::limits::Limits::default(),
            crate::limits::OnLimit::Cancel,
            None,
        ));
        assert!(cell.set_guard(g.clone()).is_ok());
        assert!(cell.set_guard(g.clone()).is_err(), "set once");
        assert!(Arc::ptr_eq(cell.guard().unwrap(), &g));
        let ran = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let r = ran.clone();
        cell.push_on_cancel(Box::new(move || {
            r.fetch_add(1, Ordering::Relaxed);
        }));
        cell.set_cancel_hook(Box::new(|| {}));
        cell.run_on_cancel();
        cell.run_on_cancel();
        assert_eq!(ran.load(Ordering::Relaxed), 1, "an on-cancel hook runs once");
        cell.reuse(3);
        assert!(cell.guard().is_none() && cell.take_cancel_hook().is_none());
        assert_eq!(Arc::strong_count(&g), 1, "the guard was let go");
        assert_eq!(cell.id, 3);
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
