//! `Mutex`, `Semaphore` and `WaitGroup` (LANGUAGE.md §6).
//!
//! Each is a small state under a lock plus a FIFO of [`Waiter`]s, following
//! `design/concurrency.md`: fast paths for the running task, registration
//! (step 2) that re-checks and claims the registering waiter itself, and
//! wakers that claim before handing anything over (stale entries — cancelled
//! waiters — fail their claim and are dropped).
//!
//! A mutex is handed off on unlock: the next live waiter becomes the holder
//! before it even runs (no barging). The holder is a task id; the tasks's
//! [`TaskCell::held`] list lets the driver release whatever a finishing task
//! still holds.

use super::{Registered, Resume, TaskCell, Timer, WaitObject, Waiter};
use crate::vm::value::Value;
use parking_lot::Mutex;
use std::collections::VecDeque;
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

#[derive(Default)]
pub struct MutexCell {
    inner: Mutex<MutexInner>,
}

#[derive(Default)]
struct MutexInner {
    /// Id of the holding task.
    holder: Option<u32>,
    waiters: VecDeque<Waiter>,
    sweep_at: usize,
}

#[derive(Debug, PartialEq)]
pub enum Lock {
    Acquired,
    Busy,
    /// The task already holds it (mutexes are not re-entrant).
    Reentrant,
}

impl MutexCell {
    pub fn is_locked(&self) -> bool {
        self.inner.lock().holder.is_some()
    }

    fn acquire_for(self: &Arc<Self>, g: &mut MutexInner, id: u32, cell: Option<&Arc<TaskCell>>) {
        g.holder = Some(id);
        if let Some(c) = cell {
            c.held.lock().push(self.clone());
        }
    }

    /// `tryLock()` and the fast path of `lock()` for the running task.
    pub fn try_lock(self: &Arc<Self>, id: u32, cell: Option<&Arc<TaskCell>>) -> Lock {
        let mut g = self.inner.lock();
        match g.holder {
            Some(h) if h == id => Lock::Reentrant,
            Some(_) => Lock::Busy,
            None => {
                let g = &mut *g;
                prune(&mut g.waiters, &mut g.sweep_at);
                self.acquire_for(g, id, cell);
                Lock::Acquired
            }
        }
    }

    /// `unlock()` by task `id`: false if it does not hold the mutex.
    /// Hands the mutex to the first live waiter.
    pub fn unlock(self: &Arc<Self>, id: u32, cell: Option<&Arc<TaskCell>>, woken: &mut Vec<Arc<TaskCell>>) -> bool {
        let mut g = self.inner.lock();
        if g.holder != Some(id) {
            return false;
        }
        if let Some(c) = cell {
            let mut held = c.held.lock();
            if let Some(i) = held.iter().position(|m| Arc::ptr_eq(m, self)) {
                held.remove(i);
            }
        }
        g.holder = None;
        if let Some(w) = take_live(&mut g.waiters) {
            self.acquire_for(&mut g, w.task.id, Some(&w.task));
            w.deliver(Resume::Value(Value::UNDEFINED), woken);
        }
        true
    }

    fn register(self: &Arc<Self>, w: Waiter) -> Registered {
        let mut g = self.inner.lock();
        let g = &mut *g;
        prune(&mut g.waiters, &mut g.sweep_at);
        if g.holder.is_none() {
            if !w.claim() {
                return Registered::Queued;
            }
            self.acquire_for(g, w.task.id, Some(&w.task));
            return Registered::Ready(Resume::Value(Value::UNDEFINED));
        }
        g.waiters.push_back(w);
        Registered::Queued
    }
}

/// Releases every mutex a finished task still holds (the next waiter of
/// each gets it).
pub fn release_all(task: &Arc<TaskCell>, woken: &mut Vec<Arc<TaskCell>>) {
    let held: Vec<Arc<MutexCell>> = std::mem::take(&mut *task.held.lock());
    for m in held {
        m.unlock(task.id, None, woken);
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
        Waiter { task: t.clone(), gen, tag: 0 }
    }

    #[test]
    fn mutex_handoff_is_fifo_and_skips_cancelled() {
        let m = Arc::new(MutexCell::default());
        let (a, b, c) = (cell(1), cell(2), cell(3));
        assert_eq!(m.try_lock(1, Some(&a)), Lock::Acquired);
        assert_eq!(m.try_lock(1, Some(&a)), Lock::Reentrant);
        assert_eq!(m.try_lock(2, Some(&b)), Lock::Busy);
        assert!(matches!(m.register(waiter(&b)), Registered::Queued));
        assert!(matches!(m.register(waiter(&c)), Registered::Queued));
        assert!(b.token.claim_current(), "b is cancelled");
        let mut woken = Vec::new();
        assert!(!m.unlock(2, Some(&b), &mut woken), "b does not hold it");
        assert!(m.unlock(1, Some(&a), &mut woken));
        assert_eq!(woken.len(), 1);
        assert_eq!(woken[0].id, 3, "handed to c, skipping cancelled b");
        assert!(m.is_locked());
        assert_eq!(c.held.lock().len(), 1);
        // c ends holding it: released.
        release_all(&c, &mut woken);
        assert!(!m.is_locked());
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
                    for _ in 0..2000 {
                        match m.try_lock(me.id, Some(&me)) {
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
                        assert!(m.unlock(me.id, Some(&me), &mut woken));
                    }
                });
            }
        });
        assert_eq!(total.load(std::sync::atomic::Ordering::SeqCst), 8000);
    }
}
