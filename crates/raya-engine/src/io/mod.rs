//! The socket poller: a wake source beside the scheduler's timer thread.
//! `design/io.md` ("Sockets") is the long version of this comment.
//!
//! One [`Poller`] per running program, made on the first socket. It owns a
//! `mio::Poll` but no thread: the scheduler's idle workers poll it through
//! [`PollCore`] (the scheduler's `NetPoll`), so a task made ready runs on
//! the worker that saw its event. Every socket is a [`Source`], registered
//! edge-triggered for reading and writing under a token that is never
//! reused (a stale event for a closed socket finds nothing in the map).
//!
//! # How a socket call waits
//!
//! A native loads the direction's event count ([`Source::events`]) BEFORE
//! its non-blocking syscall. On `WouldBlock` it suspends the task with an
//! [`IoWait`] carrying that count. When woken it is simply called again
//! with the same arguments ([`IoWait`] re-runs the call), and tries again.
//!
//! **No lost readiness.** [`IoWait::register`] takes the source's lock and
//! compares the count: if it moved (an event arrived after the syscall
//! began) or the source is closed, it claims the task itself and returns
//! `Ready(Retry)`; else it stores the waiter. The poller, on an event,
//! increments the count and THEN takes the lock and takes the waiters. So
//! either the registration sees the new count or the poller sees the
//! waiter. An event that came before the count was loaded is one the
//! syscall itself saw (the data was already there).
//!
//! **Holds.** Each stored waiter owns one scheduler hold
//! ([`WakeSink::hold`]): a task waiting on a socket keeps the program from
//! ending or reporting a deadlock. Ownership is "the waiter is in the
//! list": whoever takes it out (an event, `close`, the cancel hook)
//! releases the hold, after queueing the task it woke.
//!
//! **Closing.** [`Source::close`] marks the source closed under the lock,
//! takes every waiter and wakes it (the natives re-run and see the closed
//! state), deregisters, and drops the socket once no native uses it
//! ([`Source::enter`]: natives hold a guard for the duration of a
//! syscall, so an fd is never closed under a running syscall and never
//! reused by accident).

use crate::sync::{Registered, Resume, TaskCell, Timer, WaitObject, Waiter};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use parking_lot::Mutex;
use std::borrow::Cow;
use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

/// Where the poller sends the tasks it wakes: the program's scheduler.
pub trait WakeSink: Send + Sync + 'static {
    /// Queues a task that was claimed and given its resume.
    fn wake(&self, task: Arc<TaskCell>);
    /// Keeps the program from being quiescent (one per stored waiter).
    fn hold(&self);
    /// Ends one [`WakeSink::hold`].
    fn release_hold(&self);
}

/// Which readiness a wait is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Read = 0,
    Write = 1,
}

/// The socket of a [`Source`].
pub enum Sock {
    Listener(std::net::TcpListener),
    Stream(std::net::TcpStream),
}

impl Sock {
    fn raw_fd(&self) -> RawFd {
        match self {
            Sock::Listener(l) => l.as_raw_fd(),
            Sock::Stream(s) => s.as_raw_fd(),
        }
    }
}

#[derive(Default)]
struct State {
    /// Waiters per direction. Each one owns a hold (see the module docs).
    waiters: [Vec<Waiter>; 2],
    closed: bool,
    /// Tasks whose wait was ended by `close` and that have not re-run yet
    /// (so a read woken by close returns end-of-stream, while a new call
    /// on a closed socket is an error). Task ids.
    woken_by_close: Vec<u32>,
    /// The task whose write is under way and the ticket of that hold
    /// (see [`Source::lock_writer`]).
    writer: Option<(u32, u64)>,
    /// The ticket of the next hold of the write lock.
    next_ticket: u64,
}

/// What [`Source::lock_writer`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriterLock {
    /// The caller now holds the lock (it was free), under this ticket.
    Acquired(u64),
    /// The caller already held it: the re-run of its own write.
    Held(u64),
    /// Another task's write is under way.
    Busy,
}

/// `users` bit: the source is closed; no new [`Source::enter`] succeeds.
const CLOSED: usize = 1 << (usize::BITS - 1);

/// One registered socket.
pub struct Source {
    token: usize,
    fd: RawFd,
    /// Readiness events seen per direction (see the module docs).
    events: [AtomicU64; 2],
    state: Mutex<State>,
    poller: Arc<PollerShared>,
    /// Natives inside a syscall on `sock`, plus [`CLOSED`].
    users: AtomicUsize,
    /// The socket was dropped (exactly one thread does it).
    dropped: AtomicBool,
    /// Read only between a successful `enter` and its guard's drop, and
    /// taken only by the thread that brings `users` to `CLOSED | 0` and
    /// wins `dropped`: then nobody holds a guard, and none can get one.
    sock: UnsafeCell<Option<Sock>>,
}

// SAFETY: `sock` is shared only through guards (shared references to a
// `Sync` socket) and taken once when no guard exists (see `sock`).
unsafe impl Sync for Source {}

/// The socket of a source, usable until the guard drops.
pub struct SockGuard<'a> {
    src: &'a Source,
}

impl std::ops::Deref for SockGuard<'_> {
    type Target = Sock;
    fn deref(&self) -> &Sock {
        // SAFETY: a guard exists, so the socket is not taken (see `sock`).
        unsafe { (*self.src.sock.get()).as_ref().expect("socket present while guarded") }
    }
}

impl Drop for SockGuard<'_> {
    fn drop(&mut self) {
        self.src.leave();
    }
}

impl Source {
    /// Registers `sock` (already non-blocking) with `poller`.
    pub fn new(poller: &Poller, sock: Sock) -> std::io::Result<Arc<Source>> {
        let shared = &poller.shared;
        let token = shared.next_token.fetch_add(1, Ordering::Relaxed);
        let fd = sock.raw_fd();
        let src = Arc::new(Source {
            token,
            fd,
            events: [AtomicU64::new(0), AtomicU64::new(0)],
            state: Mutex::new(State::default()),
            poller: shared.clone(),
            users: AtomicUsize::new(0),
            dropped: AtomicBool::new(false),
            sock: UnsafeCell::new(Some(sock)),
        });
        // In the map before the registration, so the first event finds it.
        shared.sources.lock().insert(token, Arc::downgrade(&src));
        let interest = Interest::READABLE | Interest::WRITABLE;
        if let Err(e) = shared.registry.register(&mut SourceFd(&fd), Token(token), interest) {
            shared.sources.lock().remove(&token);
            return Err(e);
        }
        Ok(src)
    }

    /// The event count of `dir`: load it before the syscall whose
    /// `WouldBlock` the wait is for.
    pub fn events(&self, dir: Direction) -> u64 {
        self.events[dir as usize].load(Ordering::SeqCst)
    }

    /// The socket for one syscall, or None once closed.
    pub fn enter(&self) -> Option<SockGuard<'_>> {
        let n = self.users.fetch_add(1, Ordering::Acquire);
        if n & CLOSED != 0 {
            self.leave();
            return None;
        }
        Some(SockGuard { src: self })
    }

    fn leave(&self) {
        let prev = self.users.fetch_sub(1, Ordering::AcqRel);
        if prev == CLOSED | 1 {
            self.drop_sock();
        }
    }

    /// Called when `users` reached `CLOSED | 0`; a failed `enter` may
    /// bring it there again, so `dropped` picks one thread.
    fn drop_sock(&self) {
        if !self.dropped.swap(true, Ordering::AcqRel) {
            // SAFETY: see `sock`: closed, no guard, and this thread won.
            let sock = unsafe { (*self.sock.get()).take() };
            drop(sock);
        }
    }

    pub fn is_closed(&self) -> bool {
        self.users.load(Ordering::Acquire) & CLOSED != 0
    }

    /// If task `id` was waiting when the source was closed, forgets that
    /// and returns true (its re-run reports end-of-stream, not an error).
    pub fn take_woken_by_close(&self, id: u32) -> bool {
        let mut st = self.state.lock();
        match st.woken_by_close.iter().position(|&t| t == id) {
            Some(i) => {
                st.woken_by_close.swap_remove(i);
                true
            }
            None => false,
        }
    }

    /// The per-connection write lock: one task's write goes out whole
    /// before another's starts, so two tasks writing one connection never
    /// interleave partial writes.
    ///
    /// Invariant: the holder is always either running its write call or
    /// waiting for `Write` with an [`IoWait`] that carries its ticket
    /// (`IoWait::writer`). It gives the lock back with
    /// [`Source::unlock_writer`] when its write ends (done, failed, closed);
    /// a cancel of that wait gives it back by ticket (`release_ticket`), in
    /// the cancel hook or, for a cancel that claimed the task before the
    /// hook was set, in `IoWait::register` (or, for a task cancelled before
    /// it suspended, whose wait is never registered, when the wait is
    /// dropped). By ticket, not by task: the
    /// cancelled task may already run again and hold the lock for a new
    /// write when a late release comes. A task that finds the lock busy waits for `Write` like a
    /// writer whose socket is full, with the event count loaded BEFORE it
    /// looked at the lock: every release bumps that count before it wakes
    /// the write waiters, so a release racing the registration is seen by
    /// one side or the other (the same argument as for readiness).
    pub fn lock_writer(&self, task: u32) -> WriterLock {
        let mut st = self.state.lock();
        match st.writer {
            None => {
                st.next_ticket += 1;
                let ticket = st.next_ticket;
                st.writer = Some((task, ticket));
                WriterLock::Acquired(ticket)
            }
            Some((t, ticket)) if t == task => WriterLock::Held(ticket),
            Some(_) => WriterLock::Busy,
        }
    }

    /// Ends `task`'s hold of the write lock, if it has it, and wakes the
    /// write waiters (they re-run: a writer waiting for the lock takes it,
    /// one waiting for the socket tries again).
    pub fn unlock_writer(&self, task: u32) {
        self.release_writer(|(t, _)| t == task);
    }

    /// Ends the hold `ticket` of the write lock, if it is still the
    /// current one (a cancelled write's; see [`Source::lock_writer`]).
    fn release_ticket(&self, ticket: u64) {
        self.release_writer(|(_, k)| k == ticket);
    }

    fn release_writer(&self, is_it: impl Fn((u32, u64)) -> bool) {
        {
            let mut st = self.state.lock();
            if !st.writer.is_some_and(&is_it) {
                return;
            }
            st.writer = None;
            if st.waiters[Direction::Write as usize].is_empty() {
                // Nobody to wake; the count still moves (a registration
                // that loaded it before the release re-runs).
                self.events[Direction::Write as usize].fetch_add(1, Ordering::SeqCst);
                return;
            }
        }
        self.fire(Direction::Write, &mut Vec::new());
    }

    /// Closes the source: wakes every waiter (claimed tasks go to `woken`,
    /// to be queued by the calling worker), deregisters, and drops the
    /// socket once no syscall uses it. False if it was already closed.
    ///
    /// The holds of the woken waiters are released here, before the
    /// caller's worker queues `woken`: sound because the caller is itself
    /// a running job (counted as active until after its woken tasks are
    /// queued, scheduler invariant 5).
    pub fn close(&self, woken: &mut Vec<Arc<TaskCell>>) -> bool {
        let guard = self.enter();
        let taken = {
            let mut st = self.state.lock();
            if st.closed {
                return false;
            }
            st.closed = true;
            let mut taken = std::mem::take(&mut st.waiters[0]);
            taken.append(&mut st.waiters[1]);
            for w in &taken {
                st.woken_by_close.push(w.task.id);
            }
            taken
        };
        if guard.is_some() {
            // While the guard keeps the fd open.
            let _ = self.poller.registry.deregister(&mut SourceFd(&self.fd));
        }
        self.poller.sources.lock().remove(&self.token);
        let prev = self.users.fetch_or(CLOSED, Ordering::AcqRel);
        if prev & !CLOSED == 0 {
            self.drop_sock();
        }
        drop(guard);
        for w in &taken {
            if w.claim() {
                drop(w.task.take_cancel_hook());
                w.deliver(Resume::Retry, woken);
            }
        }
        for _ in &taken {
            self.poller.sink.release_hold();
        }
        true
    }

    /// The poller's side: an event for `dir` arrived. Returns how many
    /// tasks it woke.
    fn fire(&self, dir: Direction, scratch: &mut Vec<Waiter>) -> usize {
        // Count first, then look for waiters (see the module docs).
        self.events[dir as usize].fetch_add(1, Ordering::SeqCst);
        {
            let mut st = self.state.lock();
            if st.waiters[dir as usize].is_empty() {
                return 0;
            }
            // Swapped, not taken: both vectors keep their capacity, so
            // steady-state waits allocate nothing here.
            std::mem::swap(&mut st.waiters[dir as usize], scratch);
        }
        let sink = &self.poller.sink;
        let mut woken = 0;
        for w in scratch.iter() {
            if w.claim() {
                drop(w.task.take_cancel_hook());
                w.task.resume.lock().set(Resume::Retry);
                sink.wake(w.task.clone());
                woken += 1;
            }
        }
        // After the wake-ups are queued (the program never looks
        // quiescent in between).
        for _ in scratch.iter() {
            sink.release_hold();
        }
        scratch.clear();
        woken
    }

    /// The cancel hook of a stored waiter: takes it out if it is still
    /// there (an event or `close` may have taken it first) and releases
    /// its hold.
    fn cancel_waiter(&self, dir: Direction, task: &Arc<TaskCell>, gen: u64, writer: Option<u64>, connect: Option<u32>) {
        let removed = {
            let mut st = self.state.lock();
            let list = &mut st.waiters[dir as usize];
            match list.iter().position(|w| Arc::ptr_eq(&w.task, task) && w.gen() == gen) {
                Some(i) => {
                    list.swap_remove(i);
                    true
                }
                None => false,
            }
        };
        if removed {
            self.poller.sink.release_hold();
        }
        // A cancelled write will not re-run: its lock goes to the next
        // writer (the rest of its bytes are never sent); a cancelled
        // connect's socket is closed. Whether or not the waiter was still
        // listed: an event may have taken it out and then lost the claim
        // to this cancel.
        IoWait::abandon(self, writer, connect);
    }

    /// A connect in flight of task `task` was cancelled: forget its entry
    /// in [`Poller::connecting`] (if it is still this source's: the task
    /// may have started another connect since) and close the socket.
    fn abandon_connect(&self, task: u32) {
        {
            let mut pending = self.poller.connecting.lock();
            if pending.get(&task).is_some_and(|(_, s)| std::ptr::eq(Arc::as_ptr(s), self)) {
                pending.remove(&task);
            }
        }
        // Invariant: no other task waits on a connect in flight (no script
        // object references its socket yet), so closing wakes nobody.
        let mut woken = Vec::new();
        self.close(&mut woken);
        debug_assert!(woken.is_empty(), "a connect in flight has one waiter");
        for t in woken {
            self.poller.sink.wake(t);
        }
    }

    /// Waiters stored now (tests).
    #[cfg(test)]
    fn waiting(&self, dir: Direction) -> usize {
        self.state.lock().waiters[dir as usize].len()
    }
}

impl Drop for Source {
    fn drop(&mut self) {
        // Unreachable (a script object collected without `close()`): the
        // socket closes as `sock` drops, which also takes the fd out of
        // the epoll set. No waiter can be left (each holds the source).
        self.poller.sources.lock().remove(&self.token);
    }
}

/// A task suspended until `source` is ready for `dir`.
pub struct IoWait {
    pub source: Arc<Source>,
    pub dir: Direction,
    /// The event count loaded before the syscall that would block.
    pub seen: u64,
    pub what: &'static str,
    /// The ticket of the connection's write lock, when the waiting task
    /// holds it (a write waiting for the socket); see
    /// [`Source::lock_writer`].
    pub writer: Option<u64>,
    /// The waiting task's id, when `source` is a connect in flight that
    /// this wait owns (see [`IoWait::connecting`]).
    pub connect: Option<u32>,
    /// `register` ran (see the `Drop` below).
    registered: AtomicBool,
}

impl IoWait {
    pub fn new(source: Arc<Source>, dir: Direction, seen: u64, what: &'static str, writer: Option<u64>) -> IoWait {
        IoWait { source, dir, seen, what, writer, connect: None, registered: AtomicBool::new(false) }
    }

    /// The wait of task `task`'s connect in flight, whose socket nobody
    /// else references (it is in [`Poller::connecting`] until the call
    /// re-runs). Every way the wait ends without a re-run closes the
    /// socket and forgets the entry, exactly where a cancelled write gives
    /// its lock back: so a cancelled connect keeps no socket.
    pub fn connecting(mut self, task: u32) -> IoWait {
        self.connect = Some(task);
        self
    }

    /// The wait ends without its call running again (cancelled): give
    /// back what it owns.
    fn abandon(source: &Source, writer: Option<u64>, connect: Option<u32>) {
        if let Some(ticket) = writer {
            source.release_ticket(ticket);
        }
        if let Some(task) = connect {
            source.abandon_connect(task);
        }
    }
}

impl Drop for IoWait {
    fn drop(&mut self) {
        // A wait dropped unregistered is one the task will not re-run:
        // `driver::park` throws at once at every suspension of a task
        // already cancelled, without registering. Its write lock goes
        // (by ticket: the task may be running a new write by now).
        if !self.registered.load(Ordering::Acquire) {
            IoWait::abandon(&self.source, self.writer, self.connect);
        }
    }
}

impl WaitObject for IoWait {
    fn register(&self, w: Waiter, _woken: &mut Vec<Arc<TaskCell>>, _timers: &mut Vec<Timer>) -> Registered {
        self.registered.store(true, Ordering::Release);
        let src = &self.source;
        let d = self.dir as usize;
        let mut st = src.state.lock();
        if st.closed || src.events[d].load(Ordering::SeqCst) != self.seen {
            // Readiness (or a close) came after the syscall began: re-run.
            if w.claim() {
                return Registered::Ready(Resume::Retry);
            }
            // A canceller claimed the task first: the call never re-runs.
            drop(st);
            IoWait::abandon(src, self.writer, self.connect);
            return Registered::Queued;
        }
        st.waiters[d].push(w.clone());
        src.poller.sink.hold();
        let (s2, task, gen, dir, writer, connect) =
            (src.clone(), w.task.clone(), w.gen(), self.dir, self.writer, self.connect);
        w.task.set_cancel_hook(Box::new(move || s2.cancel_waiter(dir, &task, gen, writer, connect)));
        // A canceller that claimed the task before the hook was set did not
        // run it: then the waiter is ours to take back. (Its claim and this
        // check are SeqCst; a later claim finds the hook.)
        if !w.is_live() {
            // (Under this lock nobody else took the waiter out: the claim
            // was a canceller's.)
            let found = st.waiters[d].iter().position(|x| Arc::ptr_eq(&x.task, &w.task) && x.gen() == w.gen());
            if let Some(i) = found {
                st.waiters[d].swap_remove(i);
            }
            drop(st);
            if found.is_some() {
                src.poller.sink.release_hold();
            }
            IoWait::abandon(src, self.writer, self.connect);
        }
        Registered::Queued
    }

    fn describe(&self) -> Cow<'static, str> {
        Cow::Borrowed(self.what)
    }

    fn blocker(&self) -> crate::sync::Blocker {
        crate::sync::Blocker::Other(&"io")
    }

    fn roots(&self) -> Vec<crate::vm::Value> {
        Vec::new()
    }

    fn reruns_call(&self) -> bool {
        true
    }
}

struct PollerShared {
    registry: mio::Registry,
    /// Weak: a source lives as long as a script object (or a waiter's
    /// cancel hook) references it; the map only finds it for events.
    sources: Mutex<HashMap<usize, Weak<Source>>>,
    next_token: AtomicUsize,
    sink: Arc<dyn WakeSink>,
    waker: mio::Waker,
    /// See [`Poller::connecting`].
    connecting: Mutex<HashMap<u32, (String, Arc<Source>)>>,
}

/// The token of the poller's own waker ([`NetPoll::interrupt`]).
const WAKER: Token = Token(0);

/// A program's socket poller (see the module docs). It has no thread:
/// the scheduler's idle workers poll it ([`NetPoll`](crate::scheduler::NetPoll), given to the
/// scheduler with `Scheduler::set_net_poll`), and a task made ready runs
/// on the worker that saw its event.
pub struct Poller {
    shared: Arc<PollerShared>,
    core: Arc<PollCore>,
}

/// What the workers poll: the `mio::Poll` and the buffers of one round.
/// The scheduler lets one worker at a time in (its poll token), so the
/// mutex is never contended; it is there to make that argument local.
pub struct PollCore {
    shared: Arc<PollerShared>,
    round: Mutex<Round>,
}

struct Round {
    poll: Poll,
    events: Events,
    /// The sources of the events of the last `wait`, and which sides
    /// fired; emptied by `dispatch`.
    fired: Vec<(Arc<Source>, bool, bool)>,
    scratch: Vec<Waiter>,
}

impl Poller {
    /// Makes the poller (no thread: see [`PollCore`]).
    pub fn start(sink: Arc<dyn WakeSink>) -> std::io::Result<Poller> {
        let poll = Poll::new()?;
        let registry = poll.registry().try_clone()?;
        let waker = mio::Waker::new(poll.registry(), WAKER)?;
        let shared = Arc::new(PollerShared {
            registry,
            sources: Mutex::new(HashMap::new()),
            next_token: AtomicUsize::new(1),
            sink,
            waker,
            connecting: Mutex::new(HashMap::new()),
        });
        let round =
            Round { poll, events: Events::with_capacity(1024), fired: Vec::with_capacity(1024), scratch: Vec::new() };
        let core = Arc::new(PollCore { shared: shared.clone(), round: Mutex::new(round) });
        Ok(Poller { shared, core })
    }

    /// What the scheduler's workers poll.
    pub fn core(&self) -> Arc<PollCore> {
        self.core.clone()
    }

    /// Connections being established (`std:net`'s `connect`), by task id:
    /// the address and the connecting socket, found again when the call
    /// re-runs on writability. A cancelled connect removes its entry and
    /// closes its socket ([`IoWait::connecting`]).
    pub fn connecting(&self) -> &Mutex<HashMap<u32, (String, Arc<Source>)>> {
        &self.shared.connecting
    }

    /// The run is over: forgets every source (their sockets close when the
    /// last reference, a script object's, is dropped) and every connect in
    /// flight. A worker polling meanwhile finds nothing to wake.
    pub fn stop(&self) {
        self.shared.connecting.lock().clear();
        self.shared.sources.lock().clear();
        let _ = self.shared.waker.wake();
    }
}

impl Drop for Poller {
    fn drop(&mut self) {
        self.stop();
    }
}

impl crate::scheduler::NetPoll for PollCore {
    fn wait(&self, timeout: Option<std::time::Duration>) {
        let mut round = self.round.lock();
        let Round { poll, events, fired, .. } = &mut *round;
        if let Err(e) = poll.poll(events, timeout) {
            // EINTR: the caller polls again when it next goes idle.
            if e.kind() != std::io::ErrorKind::Interrupted {
                eprintln!("raya: socket poller failed: {e}");
            }
            events.clear();
            return;
        }
        if events.is_empty() {
            return;
        }
        let map = self.shared.sources.lock();
        for ev in events.iter() {
            if ev.token() == WAKER {
                continue;
            }
            if let Some(src) = map.get(&ev.token().0).and_then(Weak::upgrade) {
                // Errors and hang-ups wake both sides: the re-run
                // syscall reports them.
                let bad = ev.is_error() || ev.is_read_closed() && ev.is_write_closed();
                let r = ev.is_readable() || ev.is_read_closed() || bad;
                let w = ev.is_writable() || ev.is_write_closed() || bad;
                fired.push((src, r, w));
            }
        }
    }

    fn dispatch(&self) -> usize {
        let mut round = self.round.lock();
        let Round { fired, scratch, .. } = &mut *round;
        let mut woken = 0;
        for (src, r, w) in fired.drain(..) {
            if r {
                woken += src.fire(Direction::Read, scratch);
            }
            if w {
                woken += src.fire(Direction::Write, scratch);
            }
        }
        woken
    }

    fn interrupt(&self) {
        let _ = self.shared.waker.wake();
    }
}

#[cfg(test)]
mod tests;
