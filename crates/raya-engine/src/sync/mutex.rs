//! `Mutex`, `Semaphore` and `WaitGroup` (LANGUAGE.md §6).
//!
//! Each is a small state under a lock plus a FIFO of [`Waiter`]s, following
//! `design/concurrency.md`: fast paths for the running task, registration
//! (step 2) that re-checks and claims the registering waiter itself, and
//! wakers that claim before handing anything over (stale entries — cancelled
//! waiters — fail their claim and are dropped).
//!
//! A mutex is handed off on unlock: the next live waiter becomes the holder
//! before it even runs (no barging). The holder is a task id; the task's
//! `Task::locked` list lets the driver release whatever a finishing task
//! still holds.

use super::{Registered, Resume, TaskCell, Timer, WaitObject, Waiter};
use crate::vm::value::Value;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Drops stale waiters at the front, and sweeps the whole queue when it
/// has doubled since the last sweep (amortised O(1) per registration).
fn prune(q: &mut VecDeque<Waiter>, sweep_at: &mut usize) {
    while q.front().is_some_and(|w| !w.is_live()) {
        q.pop_front();
    }
    if q.len() >= (*sweep_at).max(32) {
        q.retain(|w| w.is_live());
        *sweep_at = q.len() * 2;
    }
}

fn take_live(q: &mut VecDeque<Waiter>) -> Option<Waiter> {
    while let Some(w) = q.pop_front() {
        if w.claim() {
            return Some(w);
        }
    }
    None
}

// ---- Mutex ------------------------------------------------------------------

/// `MutexCell::state`: the holder's task id + 1 (0 = free) ...
const HOLDER: u64 = (1 << 33) - 1;
/// ... whether the waiter queue may hold someone ...
const QUEUED: u64 = 1 << 40;
/// ... and whether the holder was handed the mutex by an unlock.
const HANDED: u64 = 1 << 41;

fn holder_bits(id: u32) -> u64 {
    id as u64 + 1
}

/// A mutex: one atomic word for the uncontended paths, a FIFO of waiters
/// under a lock for the rest.
///
/// Invariants:
/// - `QUEUED` is changed only under the `queue` lock, and is set whenever
///   the queue is non-empty (it may stay set over stale waiters until the
///   next slow path prunes them).
/// - The lock-free paths are a compare-and-swap from exactly `0` (lock) or
///   exactly the caller's holder bits (unlock), so neither can succeed
///   while `QUEUED` is set: with waiters queued, a new arrival never
///   barges ahead of them, and an unlock always takes the slow path that
///   hands the mutex to the first live waiter.
/// - A registering waiter sets `QUEUED` *before* it looks at the holder,
///   under the queue lock: from then on no lock-free acquire can succeed,
///   so if it saw the mutex free it can take it without a race.
pub struct MutexCell {
    state: AtomicU64,
    queue: Mutex<MutexQueue>,
    /// For reports and the trace (see `super::next_object_id`).
    pub id: u32,
    /// Where the script made it.
    pub site: Option<super::Site>,
}

impl Default for MutexCell {
    fn default() -> Self {
        MutexCell { state: AtomicU64::new(0), queue: Mutex::default(), id: super::next_object_id(), site: None }
    }
}

#[derive(Default)]
struct MutexQueue {
    waiters: VecDeque<Waiter>,
    sweep_at: usize,
}

/// What [`MutexCell::release`] did.
#[derive(Debug, PartialEq)]
pub enum Unlocked {
    /// The task did not hold the mutex.
    NotHolder,
    /// The mutex is free.
    Released,
    /// The first live waiter holds it now; `again` when this task had
    /// itself been handed the mutex (the waiters are a convoy: see the
    /// `unlock` built-in).
    HandedOn { again: bool },
}

#[derive(Debug, PartialEq)]
pub enum Lock {
    Acquired,
    Busy,
    /// The task already holds it (mutexes are not re-entrant): `lock()`
    /// throws, `tryLock()` returns false.
    Reentrant,
}

impl MutexCell {
    pub fn is_locked(&self) -> bool {
        self.state.load(Ordering::Acquire) & HOLDER != 0
    }

    /// The holder's task id, if it is held.
    pub fn holder(&self) -> Option<u32> {
        match self.state.load(Ordering::Acquire) & HOLDER {
            0 => None,
            h => Some((h - 1) as u32),
        }
    }

    /// Live waiters queued.
    pub fn waiting(&self) -> usize {
        self.queue.lock().waiters.iter().filter(|w| w.is_live()).count()
    }

    /// Held by task `id`.
    pub fn is_held_by(&self, id: u32) -> bool {
        self.state.load(Ordering::Acquire) & HOLDER == holder_bits(id)
    }

    /// `tryLock()` and the fast path of `lock()` for the running task: takes
    /// the mutex if it is free and nobody is queued.
    #[inline]
    pub fn try_lock(&self, id: u32) -> Lock {
        match self.state.compare_exchange(0, holder_bits(id), Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => Lock::Acquired,
            Err(cur) if cur & HOLDER == holder_bits(id) => Lock::Reentrant,
            Err(_) => Lock::Busy,
        }
    }

    /// `lock()` on several workers: a holder that is running on another
    /// worker usually unlocks within nanoseconds, far sooner than this task
    /// could suspend and be woken. So, while nobody is queued, retry the
    /// fast path for a while before giving up (never ahead of a queued
    /// waiter: the fast path fails once `QUEUED` is set).
    ///
    /// The checks are far apart ([`SPIN_PAUSES`]): each read of the state
    /// pulls its cache line away from the holder, whose next lock or unlock
    /// then waits for it. Measured on the `mutex` benchmark (2 workers),
    /// checking every pause was 2x slower than checking every 64.
    pub fn spin_lock(&self, id: u32) -> Lock {
        let start = std::time::Instant::now();
        loop {
            let cur = self.state.load(Ordering::Relaxed);
            if cur & QUEUED != 0 {
                return Lock::Busy;
            }
            if cur == 0 {
                if let Lock::Acquired = self.try_lock(id) {
                    return Lock::Acquired;
                }
            }
            for _ in 0..SPIN_PAUSES {
                std::hint::spin_loop();
            }
            if start.elapsed() > SPIN_LIMIT {
                return Lock::Busy;
            }
        }
    }

    /// `unlock()` by task `id`: false if it does not hold the mutex.
    /// Hands the mutex to the first live waiter.
    pub fn unlock(&self, id: u32, woken: &mut Vec<Arc<TaskCell>>) -> bool {
        !matches!(self.release(id, woken), Unlocked::NotHolder)
    }

    /// `unlock()`, saying what became of the mutex.
    #[inline]
    pub fn release(&self, id: u32, woken: &mut Vec<Arc<TaskCell>>) -> Unlocked {
        let mine = holder_bits(id);
        match self.state.compare_exchange(mine, 0, Ordering::Release, Ordering::Relaxed) {
            Ok(_) => Unlocked::Released,
            Err(cur) if cur & HOLDER != mine => Unlocked::NotHolder,
            Err(_) => self.hand_on(woken),
        }
    }

    /// The slow path of [`release`](Self::release) for the holder.
    #[cold]
    #[inline(never)]
    fn hand_on(&self, woken: &mut Vec<Arc<TaskCell>>) -> Unlocked {
        // Waiters may be queued, or this task was handed the mutex: only
        // this task can change the holder now (lock-free acquires need 0),
        // and `QUEUED` changes under the lock.
        let handed = self.state.load(Ordering::Relaxed) & HANDED != 0;
        let mut q = self.queue.lock();
        match take_live(&mut q.waiters) {
            Some(w) => {
                let queued = if q.waiters.is_empty() { 0 } else { QUEUED };
                self.state.store(holder_bits(w.task.id) | queued | HANDED, Ordering::Release);
                w.deliver(Resume::Value(Value::UNDEFINED), woken);
                Unlocked::HandedOn { again: handed }
            }
            None => {
                self.state.store(0, Ordering::Release);
                Unlocked::Released
            }
        }
    }

    fn register(&self, w: Waiter) -> Registered {
        let mut q = self.queue.lock();
        let q = &mut *q;
        prune(&mut q.waiters, &mut q.sweep_at);
        let cur = self.state.fetch_or(QUEUED, Ordering::AcqRel);
        if cur & HOLDER != 0 {
            q.waiters.push_back(w);
            return Registered::Queued;
        }
        // Free, and no lock-free acquire can succeed now (`QUEUED` is set).
        // The queue is empty: an unlock hands the mutex to the first live
        // waiter, or empties the queue when none is live, and waiters are
        // queued only behind a holder.
        debug_assert!(q.waiters.is_empty());
        if !w.claim() {
            self.state.store(0, Ordering::Release);
            return Registered::Queued;
        }
        self.state.store(holder_bits(w.task.id), Ordering::Release);
        Registered::Ready(Resume::Value(Value::UNDEFINED))
    }
}

/// Pause instructions between two looks at the state in
/// [`MutexCell::spin_lock`] (a pause is 10-140 cycles, depending on the CPU).
const SPIN_PAUSES: u32 = 64;
/// How long [`MutexCell::spin_lock`] spins before the task queues.
const SPIN_LIMIT: std::time::Duration = std::time::Duration::from_micros(50);

/// Releases every mutex a finished task still holds (the next waiter of
/// each gets it). `held` lists every mutex the task ever locked (see
/// `Task::note_lock`); unlocking one it no longer holds does nothing.
pub fn release_all(id: u32, held: Vec<Arc<MutexCell>>, woken: &mut Vec<Arc<TaskCell>>) {
    for m in held {
        m.unlock(id, woken);
    }
}

pub struct LockWait(pub Arc<MutexCell>);

impl WaitObject for LockWait {
    fn register(&self, w: Waiter, _woken: &mut Vec<Arc<TaskCell>>, _timers: &mut Vec<Timer>) -> Registered {
        self.0.register(w)
    }
    fn describe(&self) -> std::borrow::Cow<'static, str> {
        "locking a mutex".into()
    }
    fn blocker(&self) -> super::Blocker {
        super::Blocker::Mutex(Arc::downgrade(&self.0))
    }
    fn trace_info(&self) -> (&'static str, u32) {
        ("mutex", self.0.id)
    }
    fn roots(&self) -> Vec<Value> {
        Vec::new()
    }
}

// ---- Semaphore --------------------------------------------------------------

pub struct SemaphoreCell {
    inner: Mutex<SemInner>,
}

struct SemInner {
    permits: u64,
    waiters: VecDeque<Waiter>,
    sweep_at: usize,
}

impl SemaphoreCell {
    pub fn new(permits: u64) -> SemaphoreCell {
        SemaphoreCell { inner: Mutex::new(SemInner { permits, waiters: VecDeque::new(), sweep_at: 0 }) }
    }

    pub fn available(&self) -> u64 {
        self.inner.lock().permits
    }

    /// `tryAcquire()` / the fast path of `acquire()`. FIFO: a free permit
    /// is never taken past a live waiter.
    pub fn try_acquire(&self) -> bool {
        let mut g = self.inner.lock();
        let g = &mut *g;
        prune(&mut g.waiters, &mut g.sweep_at);
        if g.permits > 0 && g.waiters.is_empty() {
            g.permits -= 1;
            true
        } else {
            false
        }
    }

    /// `release()`: hands the permit to the first live waiter, or frees it.
    pub fn release(&self, woken: &mut Vec<Arc<TaskCell>>) {
        let mut g = self.inner.lock();
        match take_live(&mut g.waiters) {
            Some(w) => w.deliver(Resume::Value(Value::UNDEFINED), woken),
            None => g.permits += 1,
        }
    }

    fn register(&self, w: Waiter) -> Registered {
        let mut g = self.inner.lock();
        let g = &mut *g;
        prune(&mut g.waiters, &mut g.sweep_at);
        if g.permits > 0 && g.waiters.is_empty() {
            if !w.claim() {
                return Registered::Queued;
            }
            g.permits -= 1;
            return Registered::Ready(Resume::Value(Value::UNDEFINED));
        }
        g.waiters.push_back(w);
        Registered::Queued
    }
}

pub struct AcquireWait(pub Arc<SemaphoreCell>);

impl WaitObject for AcquireWait {
    fn register(&self, w: Waiter, _woken: &mut Vec<Arc<TaskCell>>, _timers: &mut Vec<Timer>) -> Registered {
        self.0.register(w)
    }
    fn describe(&self) -> std::borrow::Cow<'static, str> {
        "acquiring a semaphore".into()
    }
    fn blocker(&self) -> super::Blocker {
        super::Blocker::Other(&"semaphore")
    }
    fn roots(&self) -> Vec<Value> {
        Vec::new()
    }
}

// ---- WaitGroup --------------------------------------------------------------

#[derive(Default)]
pub struct WaitGroupCell {
    inner: Mutex<WgInner>,
}

#[derive(Default)]
struct WgInner {
    count: i64,
    waiters: Vec<Waiter>,
}

/// A WaitGroup's count would have gone below zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NegativeCount;

impl WaitGroupCell {
    pub fn count(&self) -> i64 {
        self.inner.lock().count
    }

    /// `add(n)` (and `done()` = `add(-1)`): Err if the count would go
    /// negative (then it is unchanged). At zero every waiter wakes.
    pub fn add(&self, n: i64, woken: &mut Vec<Arc<TaskCell>>) -> Result<(), NegativeCount> {
        let mut g = self.inner.lock();
        let c = g.count + n;
        if c < 0 {
            return Err(NegativeCount);
        }
        g.count = c;
        if c == 0 {
            for w in std::mem::take(&mut g.waiters) {
                if w.claim() {
                    w.deliver(Resume::Value(Value::UNDEFINED), woken);
                }
            }
        }
        Ok(())
    }

    fn register(&self, w: Waiter) -> Registered {
        let mut g = self.inner.lock();
        if g.count == 0 {
            return if w.claim() { Registered::Ready(Resume::Value(Value::UNDEFINED)) } else { Registered::Queued };
        }
        let n = g.waiters.len();
        if n >= 32 && n.is_power_of_two() {
            g.waiters.retain(|x| x.is_live());
        }
        g.waiters.push(w);
        Registered::Queued
    }
}

pub struct GroupWait(pub Arc<WaitGroupCell>);

impl WaitObject for GroupWait {
    fn register(&self, w: Waiter, _woken: &mut Vec<Arc<TaskCell>>, _timers: &mut Vec<Timer>) -> Registered {
        self.0.register(w)
    }
    fn describe(&self) -> std::borrow::Cow<'static, str> {
        "waiting on a WaitGroup".into()
    }
    fn blocker(&self) -> super::Blocker {
        super::Blocker::Other(&"waitgroup")
    }
    fn roots(&self) -> Vec<Value> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::task::Task;

    fn cell(id: u32) -> Arc<TaskCell> {
        Arc::new(TaskCell::new(id, Box::new(Task::new(id))))
    }

    fn waiter(t: &Arc<TaskCell>) -> Waiter {
        let gen = t.token.arm();
        Waiter::new(t.clone(), gen)
    }

    #[test]
    fn mutex_handoff_is_fifo_and_skips_cancelled() {
        let m = Arc::new(MutexCell::default());
        let (b, c) = (cell(2), cell(3));
        assert_eq!(m.try_lock(1), Lock::Acquired);
        assert_eq!(m.try_lock(1), Lock::Reentrant);
        assert_eq!(m.try_lock(2), Lock::Busy);
        assert!(matches!(m.register(waiter(&b)), Registered::Queued));
        assert!(matches!(m.register(waiter(&c)), Registered::Queued));
        assert!(b.token.claim_current(), "b is cancelled");
        let mut woken = Vec::new();
        assert!(!m.unlock(2, &mut woken), "b does not hold it");
        assert!(m.unlock(1, &mut woken));
        assert_eq!(woken.len(), 1);
        assert_eq!(woken[0].id, 3, "handed to c, skipping cancelled b");
        assert!(m.is_held_by(3));
        // b ends: it never got the mutex, so nothing is released for it.
        release_all(2, vec![m.clone()], &mut woken);
        assert!(m.is_held_by(3));
        // c ends holding it: released.
        release_all(3, vec![m.clone()], &mut woken);
        assert!(!m.is_locked());
        assert_eq!(m.try_lock(4), Lock::Acquired, "free, nobody queued: the fast path works again");
    }

    /// With a waiter queued, the lock-free paths must not barge: a free
    /// mutex is taken by the queued waiter, never by a new arrival.
    #[test]
    fn mutex_no_barging_while_queued() {
        let m = Arc::new(MutexCell::default());
        let (b, c) = (cell(2), cell(3));
        assert_eq!(m.try_lock(1), Lock::Acquired);
        assert!(matches!(m.register(waiter(&b)), Registered::Queued));
        assert!(matches!(m.register(waiter(&c)), Registered::Queued));
        let mut woken = Vec::new();
        assert!(m.unlock(1, &mut woken));
        assert!(m.is_held_by(2));
        assert_eq!(m.try_lock(1), Lock::Busy, "c is still queued");
        assert_eq!(m.spin_lock(1), Lock::Busy, "spinning never passes a queued waiter");
        assert!(m.unlock(2, &mut woken));
        assert!(m.is_held_by(3));
        assert!(m.unlock(3, &mut woken));
        assert!(!m.is_locked());
        assert_eq!(woken.iter().map(|t| t.id).collect::<Vec<_>>(), vec![2, 3]);
    }

    /// `release` tells a first handoff from a handoff by a task that was
    /// itself handed the mutex (a convoy, which the unlocker breaks by
    /// yielding).
    #[test]
    fn mutex_release_reports_convoys() {
        let m = Arc::new(MutexCell::default());
        let (b, c) = (cell(2), cell(3));
        let mut woken = Vec::new();
        assert_eq!(m.try_lock(1), Lock::Acquired);
        assert!(matches!(m.register(waiter(&b)), Registered::Queued));
        assert!(matches!(m.register(waiter(&c)), Registered::Queued));
        assert_eq!(m.release(3, &mut woken), Unlocked::NotHolder);
        assert_eq!(m.release(1, &mut woken), Unlocked::HandedOn { again: false });
        assert_eq!(m.release(2, &mut woken), Unlocked::HandedOn { again: true });
        assert_eq!(m.release(3, &mut woken), Unlocked::Released);
        assert_eq!(m.try_lock(1), Lock::Acquired, "free again after the queue drained");
        assert_eq!(m.release(1, &mut woken), Unlocked::Released);
    }

    /// A waiter that registers just after the holder unlocked (fast path)
    /// takes the mutex itself instead of queueing behind nobody.
    #[test]
    fn mutex_register_on_free_mutex_acquires() {
        let m = Arc::new(MutexCell::default());
        let b = cell(2);
        assert_eq!(m.try_lock(1), Lock::Acquired);
        let mut woken = Vec::new();
        assert!(m.unlock(1, &mut woken));
        assert!(matches!(m.register(waiter(&b)), Registered::Ready(_)));
        assert!(m.is_held_by(2));
        assert!(m.unlock(2, &mut woken));
        assert!(!m.is_locked());
        assert!(woken.is_empty());
    }

    #[test]
    fn semaphore_fifo() {
        let s = SemaphoreCell::new(1);
        assert!(s.try_acquire());
        assert!(!s.try_acquire());
        let t = cell(1);
        assert!(matches!(s.register(waiter(&t)), Registered::Queued));
        let mut woken = Vec::new();
        s.release(&mut woken);
        assert_eq!(woken.len(), 1);
        assert_eq!(s.available(), 0, "the permit went to the waiter");
        s.release(&mut woken);
        assert_eq!(s.available(), 1);
    }

    #[test]
    fn waitgroup_wakes_at_zero_and_rejects_negative() {
        let g = WaitGroupCell::default();
        let mut woken = Vec::new();
        g.add(2, &mut woken).unwrap();
        let t = cell(1);
        assert!(matches!(g.register(waiter(&t)), Registered::Queued));
        g.add(-1, &mut woken).unwrap();
        assert!(woken.is_empty());
        assert!(g.add(-2, &mut woken).is_err());
        g.add(-1, &mut woken).unwrap();
        assert_eq!(woken.len(), 1);
        assert!(matches!(g.register(waiter(&t)), Registered::Ready(_)));
    }

    /// Threads contend for a mutex through the waiter protocol; the
    /// protected counter never races.
    #[test]
    fn hammer_mutex_exclusion() {
        let m = Arc::new(MutexCell::default());
        let inside = Arc::new(std::sync::atomic::AtomicU32::new(0));
        let total = Arc::new(std::sync::atomic::AtomicU32::new(0));
        std::thread::scope(|s| {
            for k in 0..4u32 {
                let (m, inside, total) = (m.clone(), inside.clone(), total.clone());
                s.spawn(move || {
                    let me = cell(10 + k);
                    for i in 0..2000 {
                        let r = if i % 2 == 0 { m.try_lock(me.id) } else { m.spin_lock(me.id) };
                        match r {
                            Lock::Acquired => {}
                            Lock::Reentrant => unreachable!(),
                            Lock::Busy => match m.register(waiter(&me)) {
                                Registered::Ready(_) => {}
                                Registered::Again => unreachable!(),
                                Registered::Queued => {
                                    while me.resume.lock().take().is_none() {
                                        std::thread::yield_now();
                                    }
                                }
                            },
                        }
                        use std::sync::atomic::Ordering::SeqCst;
                        assert_eq!(inside.fetch_add(1, SeqCst), 0);
                        total.fetch_add(1, SeqCst);
                        inside.fetch_sub(1, SeqCst);
                        let mut woken = Vec::new();
                        assert!(m.unlock(me.id, &mut woken));
                    }
                });
            }
        });
        assert_eq!(total.load(std::sync::atomic::Ordering::SeqCst), 8000);
    }
}
