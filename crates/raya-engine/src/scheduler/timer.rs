//! The timer thread: sleeping jobs, ordered by deadline.
//!
//! Pending timers are a `BTreeMap<TimerKey, T>` under one mutex, with a
//! condvar the timer thread waits on. The map is an ordered queue like a
//! min-heap (the first entry is the earliest deadline), and also lets
//! [`Timers::cancel`] remove an entry exactly, so a cancelled sleep leaves
//! nothing behind (a heap would need tombstones or generation numbers that
//! linger until their deadline).
//!
//! Invariants, each kept where marked in the code:
//! * **No busy waiting.** The timer thread waits on the condvar until the
//!   earliest deadline (or forever when nothing is pending). A new timer
//!   wakes it only if it became the earliest one. 10,000 sleeping jobs are
//!   10,000 map entries and no CPU.
//! * **Never early.** A timer fires only when `Instant::now() >= deadline`,
//!   re-checked after every wake-up (condvar waits may return early).
//! * **Exactly one of fire and cancel wins.** Both take the job out of the
//!   map under the same lock; whoever removes it owns it. Cancel returns the
//!   job to its caller; fire pushes it to the injector.
//! * **Deadline order.** Due timers are taken from the front of the map, so
//!   they reach the injector (a FIFO) in (deadline, creation) order.
//! * **Quiescence accounting.** A sleeping job stays counted in the
//!   scheduler's outstanding count (`Inner::active`) from `sleep_until`
//!   until it has run (fire moves it to the injector without changing the
//!   count) or is cancelled (cancel removes it from the count). So there is
//!   no moment at which a sleeping job is counted nowhere.

use super::stats::{add_shared, bump};
use super::Inner;
use parking_lot::{Condvar, Mutex, MutexGuard};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Identifies a pending timer; returned by [`super::Scheduler::sleep_until`]
/// and accepted by [`super::Scheduler::cancel_timer`]. Keys are unique for
/// the life of the scheduler, so a stale key cancels nothing.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TimerKey {
    deadline: Instant,
    seq: u64,
}

impl TimerKey {
    /// When the timer fires (or fired).
    pub fn deadline(&self) -> Instant {
        self.deadline
    }
}

pub(super) struct TimerState<T> {
    queue: BTreeMap<TimerKey, T>,
    next_seq: u64,
    shutdown: bool,
    /// Keys in the order the timer thread fired them (tests only).
    #[cfg(test)]
    pub fired: Vec<TimerKey>,
}

pub(super) struct Timers<T> {
    state: Mutex<TimerState<T>>,
    cv: Condvar,
    /// `queue.len()`, readable without the lock.
    pending: AtomicUsize,
}

impl<T> Timers<T> {
    pub fn new() -> Timers<T> {
        Timers {
            state: Mutex::new(TimerState {
                queue: BTreeMap::new(),
                next_seq: 0,
                shutdown: false,
                #[cfg(test)]
                fired: Vec::new(),
            }),
            cv: Condvar::new(),
            pending: AtomicUsize::new(0),
        }
    }

    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::Acquire)
    }

    /// Adds a timer. The caller has already counted the job as outstanding.
    pub fn insert(&self, deadline: Instant, job: T) -> TimerKey {
        let mut st = self.state.lock();
        let key = TimerKey { deadline, seq: st.next_seq };
        st.next_seq += 1;
        // Invariant (no busy waiting): wake the timer thread only if its
        // current wait ends too late, i.e. this timer is the new earliest.
        let earliest = st.queue.first_key_value().is_none_or(|(first, _)| key < *first);
        st.queue.insert(key, job);
        self.pending.fetch_add(1, Ordering::AcqRel);
        if earliest {
            self.cv.notify_one();
        }
        key
    }

    /// Removes a timer that has not fired. Invariant (exactly one of fire
    /// and cancel): removal from the map under the lock decides the winner.
    pub fn cancel(&self, key: TimerKey) -> Option<T> {
        let mut st = self.state.lock();
        let job = st.queue.remove(&key)?;
        self.pending.fetch_sub(1, Ordering::AcqRel);
        Some(job)
    }

    /// Virtual time (seeded scheduling): removes every timer due at the
    /// earliest deadline, if that is no later than `limit`, and returns the
    /// deadline and their jobs. They stay counted as outstanding (the caller
    /// queues them), as when the timer thread fires them.
    pub fn take_earliest(&self, limit: Instant) -> Option<(Instant, Vec<T>)> {
        let mut st = self.state.lock();
        let first = st.queue.first_key_value()?.0.deadline;
        if first > limit {
            return None;
        }
        let mut due = Vec::new();
        while let Some(entry) = st.queue.first_entry() {
            if entry.key().deadline > first {
                break;
            }
            due.push(entry.remove());
        }
        self.pending.fetch_sub(due.len(), Ordering::AcqRel);
        Some((first, due))
    }

    pub fn shutdown(&self) {
        self.state.lock().shutdown = true;
        self.cv.notify_all();
    }

    #[cfg(test)]
    pub fn lock(&self) -> MutexGuard<'_, TimerState<T>> {
        self.state.lock()
    }

    #[cfg(test)]
    pub fn map_len(&self) -> usize {
        self.state.lock().queue.len()
    }
}

/// The timer thread's body.
pub(super) fn timer_main<T: Send + 'static>(inner: Arc<Inner<T>>) {
    let timers = &inner.timers;
    let mut due: Vec<T> = Vec::new();
    let mut st: MutexGuard<'_, TimerState<T>> = timers.state.lock();
    loop {
        if st.shutdown {
            return;
        }
        // Invariant (never early): compare with the clock now, whatever
        // woke us.
        let now = Instant::now();
        while let Some(entry) = st.queue.first_entry() {
            if entry.key().deadline > now {
                break;
            }
            #[cfg(test)]
            let key = *entry.key();
            due.push(entry.remove());
            #[cfg(test)]
            st.fired.push(key);
        }
        if !due.is_empty() {
            timers.pending.fetch_sub(due.len(), Ordering::AcqRel);
            let n = due.len() as u64;
            // Push outside the lock so `sleep_until`/`cancel_timer` callers
            // are not held up. The jobs are out of the map (cancel can no
            // longer get them) and still counted as outstanding.
            MutexGuard::unlocked(&mut st, || {
                // Counted before the jobs can run: once they have, the
                // scheduler may be quiescent and its stats read.
                add_shared(&inner.stats.shared.timer_fires, n);
                for job in due.drain(..) {
                    inner.injector.push(job);
                    inner.idle.notify_one();
                }
            });
            continue;
        }
        // Invariant (no busy waiting): sleep until the earliest deadline,
        // or until `insert` signals a new earliest one, or shutdown.
        match st.queue.first_key_value().map(|(k, _)| k.deadline) {
            Some(deadline) => {
                timers.cv.wait_until(&mut st, deadline);
            }
            None => timers.cv.wait(&mut st),
        }
        // Only this thread writes the shared block's `timer_wakeups`.
        bump(&inner.stats.shared.timer_wakeups);
    }
}
