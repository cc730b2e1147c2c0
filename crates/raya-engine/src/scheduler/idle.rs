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

use super::NetPoll;
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{
    fence, AtomicBool, AtomicU8, AtomicUsize, Ordering::Acquire, Ordering::Relaxed, Ordering::Release, Ordering::SeqCst,
};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crossbeam::utils::CachePadded;

/// One worker's parking place.
#[derive(Default)]
pub(super) struct Parker {
    state: Mutex<ParkState>,
    cv: Condvar,
    /// `state.polling`, readable without the lock (a hint for
    /// `notify_one`'s choice of sleeper).
    polling_hint: AtomicBool,
}

#[derive(Default)]
struct ParkState {
    /// An unpark not consumed yet.
    notified: bool,
    /// The worker sleeps in the socket poller ([`NetPoll::wait`]), not on
    /// the condvar: an unpark must interrupt the poll.
    polling: bool,
}

impl Parker {
    /// Blocks until [`Parker::unpark`] has been called since the last
    /// `park` returned (returns at once if it already was), and consumes
    /// that notification. No spurious returns.
    pub fn park(&self) {
        let mut st = self.state.lock();
        while !st.notified {
            self.cv.wait(&mut st);
        }
        st.notified = false;
    }

    /// Wakes the parked worker, or makes its next `park` return at once.
    /// A worker sleeping in the poller is interrupted instead (`net`).
    pub fn unpark(&self, net: Option<&dyn NetPoll>) {
        let mut st = self.state.lock();
        st.notified = true;
        match net {
            Some(net) if st.polling => net.interrupt(),
            _ => {
                self.cv.notify_one();
            }
        }
    }

    /// About to sleep in the poller: false (and the notification consumed)
    /// if an unpark already came, else from now on unparks interrupt the
    /// poll.
    fn begin_poll(&self) -> bool {
        let mut st = self.state.lock();
        if st.notified {
            st.notified = false;
            return false;
        }
        st.polling = true;
        self.polling_hint.store(true, Release);
        true
    }

    /// Back from the poller: whether an unpark came meanwhile (consumed).
    fn end_poll(&self) -> bool {
        let mut st = self.state.lock();
        st.polling = false;
        self.polling_hint.store(false, Release);
        std::mem::take(&mut st.notified)
    }
}

/// [`Idle::poll_token`] states.
const FREE: u8 = 0;
const BRIEF: u8 = 1;
const ASLEEP: u8 = 2;

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
    /// The socket poller idle workers poll, once a program has one.
    net: OnceLock<Arc<dyn NetPoll>>,
    /// The one worker inside `net` (`wait` and `dispatch`): [`FREE`], or
    /// held by a worker polling without blocking or dispatching
    /// ([`BRIEF`]), or by one asleep in the poller ([`ASLEEP`]).
    poll_token: AtomicU8,
}

impl Idle {
    pub fn new(workers: usize) -> Idle {
        Idle {
            searching: AtomicUsize::new(0),
            num_sleepers: AtomicUsize::new(0),
            sleepers: Mutex::new(Vec::with_capacity(workers)),
            parkers: (0..workers).map(|_| CachePadded::new(Parker::default())).collect(),
            net: OnceLock::new(),
            poll_token: AtomicU8::new(FREE),
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
        // The most recent sleeper, but not the one in the poller if another
        // sleeps: that one stays where socket events reach it.
        let Some(pos) =
            list.iter().rposition(|&w| !self.parkers[w].polling_hint.load(Acquire)).or(list.len().checked_sub(1))
        else {
            return false;
        };
        let i = list.remove(pos);
        self.num_sleepers.fetch_sub(1, SeqCst);
        // The woken worker starts out searching; count it now.
        self.searching.fetch_add(1, SeqCst);
        drop(list);
        self.parkers[i].unpark(self.net());
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

    fn net(&self) -> Option<&dyn NetPoll> {
        self.net.get().map(|n| &**n)
    }

    /// Gives idle workers a socket poller (the first one given stays).
    pub fn set_net(&self, net: Arc<dyn NetPoll>) {
        let _ = self.net.set(net);
    }

    /// Polls the sockets without blocking, unless another worker is in the
    /// poller; the tasks made ready are woken on the calling worker.
    /// Returns whether it woke any.
    pub fn poll_now(&self) -> bool {
        let Some(net) = self.net() else { return false };
        if self.poll_token.compare_exchange(FREE, BRIEF, Acquire, Relaxed).is_err() {
            return false;
        }
        net.wait(Some(Duration::ZERO));
        let woken = net.dispatch();
        self.poll_token.store(FREE, Release);
        woken > 0
    }

    /// Sleeps after the re-check of `Worker::park` found nothing: in the
    /// socket poller if there is one and no other worker is in it, else on
    /// the parker. Returns counted as searching (see `Worker::park`).
    ///
    /// The poller is a third way to sleep, under the same protocol: the
    /// worker is in the sleeper list either way, and a producer that pops
    /// it unparks it. The parker's `polling` flag, set and read under its
    /// mutex, says whether that unpark signals the condvar or interrupts
    /// the poll: `begin_poll` sets it only if no unpark came yet, and an
    /// unpark that sees it calls `interrupt` (the poller's waker, an
    /// eventfd: an interrupt before the poll blocks makes it return at
    /// once, so none is lost).
    ///
    /// Back from the poll, the worker dispatches the events while still in
    /// the sleeper list: the tasks they wake go to its own next slot and
    /// queue (it will run them itself, without a hand-over), and any it
    /// pushes to its stealable queue is announced as usual (`notify_one`
    /// may even pop this worker: then it is notified). If it woke nobody
    /// and nobody unparked it (readiness nobody waited for, or a stale
    /// interrupt), it polls again without ever leaving the list. Else it
    /// leaves the sleeping state: notified (popped: the producer counted it
    /// as searching), or still in the list, and then it takes itself out
    /// (`cancel_sleep`) — or, if a producer popped it in between, waits for
    /// that producer's unpark, which is on its way.
    ///
    /// A worker that finds the poller held only briefly (another worker
    /// polling without blocking, or dispatching) waits for it rather than
    /// parking: else it could sleep on its parker while the holder goes on
    /// to run what it found, leaving no idle worker in the poller while
    /// one is idle (events would then wait for a busy worker's next poll).
    pub fn park(&self, worker: usize) {
        let p = &self.parkers[worker];
        if let Some(net) = self.net() {
            let took = loop {
                match self.poll_token.compare_exchange(FREE, ASLEEP, Acquire, Relaxed) {
                    Ok(_) => break true,
                    Err(ASLEEP) => break false,
                    Err(_) => std::thread::yield_now(),
                }
            };
            if took {
                loop {
                    if !p.begin_poll() {
                        // Popped and unparked (consumed): searching.
                        break;
                    }
                    self.poll_token.store(ASLEEP, Relaxed);
                    net.wait(None);
                    self.poll_token.store(BRIEF, Relaxed);
                    let woken = net.dispatch();
                    let notified = p.end_poll();
                    if notified {
                        break;
                    }
                    if woken > 0 {
                        if !self.cancel_sleep(worker) {
                            p.park();
                        }
                        break;
                    }
                }
                self.poll_token.store(FREE, Release);
                return;
            }
        }
        p.park();
    }

    /// Shutdown: wake everyone (each parker remembers it).
    pub fn unpark_all(&self) {
        for p in self.parkers.iter() {
            p.unpark(self.net());
        }
    }

    #[cfg(test)]
    pub fn sleeping(&self) -> usize {
        self.num_sleepers.load(SeqCst)
    }
}
