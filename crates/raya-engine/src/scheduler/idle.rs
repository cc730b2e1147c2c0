//! Idle workers: the searching count, the sleeper list and the parkers.
//!
//! # The protocol (no lost wake-up, no thundering herd)
//!
//! A worker is in one of three states: *running* (it has work), *searching*
//! (it has no local work and is looking in the injector and in the other
//! workers' queues, spinning briefly), or *sleeping* (in the sleeper list,
//! parked or about to park). `searching` counts searching workers;
//! `num_sleepers` mirrors the length of `sleepers` so producers can read
//! it without the lock.
//!
//! * **Producer** (after pushing a job to the injector or to a local
//!   queue): `fence(SeqCst)`, then if no worker is searching and some
//!   worker sleeps, pop exactly **one** sleeper, count it as searching on
//!   its behalf (so the next producers do not wake another one for the same
//!   burst), and unpark it. See [`Idle::notify_one`].
//! * **Worker going to sleep**: under the sleeper lock, add itself to the
//!   list and leave the searching count (this is "I am about to sleep",
//!   published with SeqCst read-modify-writes); then `fence(SeqCst)`; then
//!   **re-check** the injector and every worker queue. If it sees work it
//!   takes itself back out of the list (or, if a producer already popped
//!   it, consumes that producer's unpark, which is already on its way), and
//!   searches again. Otherwise it parks.
//!
//! Why no wake-up is lost: the producer's push is sequenced before its
//! fence and its read of `searching`/`num_sleepers`; the sleeper's
//! announcement is sequenced before its fence and its re-check of the
//! queues. The two SeqCst fences are ordered one way or the other: if the
//! producer's fence is first, the sleeper's re-check sees the job; if the
//! sleeper's fence is first, the producer sees the sleeper (or a searcher
//! counted after it, which is then responsible for the job: it either finds
//! it or goes through this same announce / fence / re-check).
//!
//! A producer that sees a searcher does not wake anyone; to keep that from
//! leaving work behind while cores sleep, a searcher that finds work and
//! was the **last** searcher wakes one sleeper itself ([`Idle::end_searching`]),
//! which is Go's spinning-thread rule.
//!
//! Parkers are a mutex-protected `notified` flag and a condvar: an unpark
//! that arrives before the park is remembered, so the last step (park after
//! the re-check) cannot miss it either.

use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{fence, AtomicUsize, Ordering::SeqCst};

use crossbeam::utils::CachePadded;

/// One worker's parking place.
#[derive(Default)]
pub(super) struct Parker {
    notified: Mutex<bool>,
    cv: Condvar,
}

impl Parker {
    /// Blocks until [`Parker::unpark`] has been called since the last
    /// `park` returned (returns at once if it already was), and consumes
    /// that notification. No spurious returns.
    pub fn park(&self) {
        let mut n = self.notified.lock();
        while !*n {
            self.cv.wait(&mut n);
        }
        *n = false;
    }

    /// Wakes the parked worker, or makes its next `park` return at once.
    pub fn unpark(&self) {
        let mut n = self.notified.lock();
        *n = true;
        self.cv.notify_one();
    }
}

pub(super) struct Idle {
    /// Workers in the searching state (including sleepers popped by a
    /// producer and not yet running: they were counted on their behalf).
    searching: AtomicUsize,
    /// `sleepers.len()`, readable without the lock.
    num_sleepers: AtomicUsize,
    /// Indices of workers that announced sleep, most recent last (woken
    /// first: its cache is the warmest).
    sleepers: Mutex<Vec<usize>>,
    parkers: Box<[CachePadded<Parker>]>,
}

impl Idle {
    pub fn new(workers: usize) -> Idle {
        Idle {
            searching: AtomicUsize::new(0),
            num_sleepers: AtomicUsize::new(0),
            sleepers: Mutex::new(Vec::with_capacity(workers)),
            parkers: (0..workers).map(|_| CachePadded::new(Parker::default())).collect(),
        }
    }

    /// Running → searching.
    pub fn begin_searching(&self) {
        self.searching.fetch_add(1, SeqCst);
    }

    /// Searching → running (the worker found work). The last searcher to
    /// stop wakes a sleeper, because producers skipped waking anyone while
    /// it searched, and there may be more work than it took.
    pub fn end_searching(&self) {
        if self.searching.fetch_sub(1, SeqCst) == 1 {
            self.notify_one();
        }
    }

    /// Called by every producer right after it made a job visible in the
    /// injector or a local queue. Wakes at most one sleeper; returns whether
    /// it did.
    pub fn notify_one(&self) -> bool {
        // Invariant (no lost wake-up): this fence pairs with the one in
        // `Worker::park` between announcing sleep and re-checking queues.
        fence(SeqCst);
        if self.searching.load(SeqCst) != 0 || self.num_sleepers.load(SeqCst) == 0 {
            return false;
        }
        let mut list = self.sleepers.lock();
        // Re-read under the lock so that concurrent producers wake one
        // worker, not one each (no thundering herd).
        if self.searching.load(SeqCst) != 0 {
            return false;
        }
        let Some(i) = list.pop() else { return false };
        self.num_sleepers.fetch_sub(1, SeqCst);
        // The woken worker starts out searching; count it now.
        self.searching.fetch_add(1, SeqCst);
        drop(list);
        self.parkers[i].unpark();
        true
    }

    /// Searching → sleeping, step 1: "I am about to sleep". The caller
    /// must then `fence(SeqCst)` and re-check every queue.
    pub fn announce_sleep(&self, worker: usize) {
        let mut list = self.sleepers.lock();
        list.push(worker);
        self.num_sleepers.fetch_add(1, SeqCst);
        self.searching.fetch_sub(1, SeqCst);
    }

    /// The re-check found work: take `worker` back out of the sleeper list
    /// and count it as searching again. Returns false if a producer had
    /// already popped it; then that producer's unpark is pending (and the
    /// producer already counted it as searching), so the caller parks and
    /// returns at once.
    pub fn cancel_sleep(&self, worker: usize) -> bool {
        let mut list = self.sleepers.lock();
        match list.iter().position(|&w| w == worker) {
            Some(pos) => {
                list.remove(pos);
                self.num_sleepers.fetch_sub(1, SeqCst);
                self.searching.fetch_add(1, SeqCst);
                true
            }
            None => false,
        }
    }

    pub fn park(&self, worker: usize) {
        self.parkers[worker].park();
    }

    /// Shutdown: wake everyone (each parker remembers it).
    pub fn unpark_all(&self) {
        for p in self.parkers.iter() {
            p.unpark();
        }
    }

    #[cfg(test)]
    pub fn sleeping(&self) -> usize {
        self.num_sleepers.load(SeqCst)
    }
}
