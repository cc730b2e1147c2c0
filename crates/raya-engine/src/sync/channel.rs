//! Channels (LANGUAGE.md §6 "Channels", "Timers as channels").
//!
//! A [`ChannelCell`] is a FIFO buffer of `capacity` values plus two wait
//! queues: receivers, and senders *with their values* (a blocked sender's
//! value lives in its queue entry, so a sender that is cancelled — claimed
//! by the canceller — leaves the channel as if it had never come).
//!
//! Every operation runs under the cell's lock and follows
//! `design/concurrency.md`: a waker pops an entry, claims it, and moves a
//! value only after the claim succeeded; entries whose claim fails are
//! stale (cancelled tasks, `select`s decided elsewhere) and are dropped.
//!
//! The fast paths (`try_recv`, `try_send`) are for a *running* task, which
//! nobody else can claim. The registration paths (step 2, on the worker
//! that parked the task) claim the registering waiter first and then run
//! the same fast path; see [`super::WaitObject::register`].
//!
//! # Timer channels
//!
//! `after(ms)` and `every(ms)` are channels of kind [`Kind::After`] /
//! [`Kind::Every`]. They are lazy: `after`'s value appears in the buffer
//! the first time anyone looks at or past its deadline, and a timer is only
//! armed while a receiver waits (so an unused ticker never keeps the
//! program alive, and deadlocks are still detected). `every` has no buffer:
//! a tick with no waiting receiver is dropped.

use super::prim::{Mutex, MutexGuard};
use super::{Registered, Resume, TaskCell, Timer, WaitObject, Waiter};
use crate::vm::value::Value;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A registration in one of a channel's wait queues.
#[derive(Clone)]
pub struct Entry {
    pub w: Waiter,
    /// A `select`'s case of this index (resumes with [`Resume::Case`]).
    pub case: Option<u32>,
}

impl Entry {
    pub fn plain(w: Waiter) -> Entry {
        Entry { w, case: None }
    }

    pub fn case(w: Waiter, case: u32) -> Entry {
        Entry { w, case: Some(case) }
    }

    /// The resume delivering `v` to this entry's task.
    pub fn resume(&self, v: Value) -> Resume {
        match self.case {
            Some(case) => Resume::Case { case, value: v },
            None => Resume::Value(v),
        }
    }

    /// Live and not a registration of `me`'s task (a `select` may have a
    /// send and a receive case on the same channel; it must not match
    /// itself).
    fn live_other(&self, me: Option<&Waiter>) -> bool {
        self.w.is_live() && me.is_none_or(|m| !Arc::ptr_eq(&m.task, &self.w.task))
    }
}

pub enum Kind {
    Plain,
    /// `after(ms)`: one value (`ms`) at `deadline`, then closed.
    After {
        ms: f64,
        deadline: Instant,
    },
    /// `every(ms)`: ticks at `start + k * period`, k = 1, 2, ...
    Every {
        start: Instant,
        period: Duration,
    },
}

pub struct ChannelCell {
    pub capacity: usize,
    pub kind: Kind,
    inner: Mutex<Inner>,
    /// For reports and the trace (see `super::next_object_id`).
    pub id: u32,
    /// Where the script made it (None for channels made by the engine).
    pub site: Option<super::Site>,
    /// The task that last sent on it and the one that last received from
    /// it (0: none yet). A deadlock report takes them as the likely
    /// partners of a task blocked on the channel, to find cycles. Written
    /// only when they change, so a loop sending from one task costs a
    /// load.
    pub last_sender: std::sync::atomic::AtomicU32,
    pub last_receiver: std::sync::atomic::AtomicU32,
}

#[derive(Default)]
struct Inner {
    buf: VecDeque<Value>,
    closed: bool,
    recvq: VecDeque<Entry>,
    sendq: VecDeque<(Entry, Value)>,
    /// Timer channels: a timer is armed.
    armed: bool,
    /// `after`: the value was produced.
    fired: bool,
    /// `every`: ticks delivered so far.
    ticks: u64,
    /// `every`: the last tick boundary handled (delivered or dropped).
    last_boundary: u64,
    /// Queue lengths at which stale entries are swept next (amortised:
    /// twice the live length after the last sweep).
    recv_sweep_at: usize,
    send_sweep_at: usize,
    /// The marking cycle in which the barrier shaded the values held here
    /// (see `lock`).
    scanned: u32,
}

/// Result of a non-suspending receive.
#[derive(Debug, PartialEq)]
pub enum Recv {
    /// A value, or null when the channel is closed and drained.
    Got(Value),
    /// Nothing available now.
    Empty,
}

/// Result of a non-suspending send.
#[derive(Debug, PartialEq)]
pub enum Sent {
    Sent,
    Full,
    Closed,
}

impl Inner {
    /// Pops senders until one is claimed (skipping `me`'s entries and
    /// stale ones); wakes it and returns its value.
    fn take_sender(&mut self, woken: &mut Vec<Arc<TaskCell>>) -> Option<Value> {
        while let Some((e, v)) = self.sendq.pop_front() {
            if e.w.claim() {
                e.w.deliver(e.resume(Value::UNDEFINED), woken);
                return Some(v);
            }
        }
        None
    }

    /// Pops receivers until one is claimed.
    fn take_receiver(&mut self) -> Option<Entry> {
        while let Some(e) = self.recvq.pop_front() {
            if e.w.claim() {
                return Some(e);
            }
        }
        None
    }

    /// Drops stale entries at the front of both queues, and every stale
    /// entry once a queue gets long (a `select` loop that keeps losing on
    /// this channel leaves one stale entry per iteration).
    fn prune(&mut self) {
        while self.recvq.front().is_some_and(|e| !e.w.is_live()) {
            self.recvq.pop_front();
        }
        while self.sendq.front().is_some_and(|(e, _)| !e.w.is_live()) {
            self.sendq.pop_front();
        }
        if self.recvq.len() >= self.recv_sweep_at.max(32) {
            self.recvq.retain(|e| e.w.is_live());
            self.recv_sweep_at = self.recvq.len() * 2;
        }
        if self.sendq.len() >= self.send_sweep_at.max(32) {
            self.sendq.retain(|(e, _)| e.w.is_live());
            self.send_sweep_at = self.sendq.len() * 2;
        }
    }

    /// Receive for a task that cannot be claimed by anyone else (running,
    /// or claimed by the registration itself).
    fn recv(&mut self, woken: &mut Vec<Arc<TaskCell>>) -> Recv {
        if let Some(v) = self.buf.pop_front() {
            // Room in the buffer: the first blocked sender's value moves in.
            if let Some(sv) = self.take_sender(woken) {
                self.buf.push_back(sv);
            }
            return Recv::Got(v);
        }
        if let Some(v) = self.take_sender(woken) {
            return Recv::Got(v);
        }
        if self.closed {
            return Recv::Got(Value::NULL);
        }
        Recv::Empty
    }

    fn send(&mut self, v: Value, capacity: usize, woken: &mut Vec<Arc<TaskCell>>) -> Sent {
        if self.closed {
            return Sent::Closed;
        }
        if let Some(e) = self.take_receiver() {
            // The buffer is empty whenever a receiver waits.
            e.w.deliver(e.resume(v), woken);
            return Sent::Sent;
        }
        if self.buf.len() < capacity {
            // The buffer fills lazily up to the channel's capacity; its
            // growth counts toward the next collection.
            let before = self.buf.capacity();
            // The channel may be old: a young value stored in it is
            // remembered for the next minor cycle (see `vm::heap`).
            crate::vm::heap::remember(v);
            self.buf.push_back(v);
            if self.buf.capacity() > before {
                crate::vm::heap::count_growth((self.buf.capacity() - before) * std::mem::size_of::<Value>());
            }
            return Sent::Sent;
        }
        Sent::Full
    }

    fn can_recv(&self, me: Option<&Waiter>) -> bool {
        !self.buf.is_empty() || self.closed || self.sendq.iter().any(|(e, _)| e.live_other(me))
    }

    fn can_send(&self, capacity: usize, me: Option<&Waiter>) -> bool {
        self.closed || self.buf.len() < capacity || self.recvq.iter().any(|e| e.live_other(me))
    }
}

impl ChannelCell {
    pub fn new(capacity: usize) -> ChannelCell {
        Self::with_kind(capacity, Kind::Plain)
    }

    fn with_kind(capacity: usize, kind: Kind) -> ChannelCell {
        ChannelCell {
            capacity,
            kind,
            inner: Mutex::new(Inner::default()),
            id: super::next_object_id(),
            site: None,
            last_sender: Default::default(),
            last_receiver: Default::default(),
        }
    }

    /// `after(ms)`.
    pub fn after(ms: f64) -> ChannelCell {
        let deadline = crate::scheduler::now() + Duration::from_secs_f64(ms.clamp(0.0, 1e12) / 1000.0);
        Self::with_kind(1, Kind::After { ms, deadline })
    }

    /// `every(ms)`.
    pub fn every(ms: f64) -> ChannelCell {
        let period = Duration::from_secs_f64(ms.clamp(1.0, 1e12) / 1000.0);
        Self::with_kind(0, Kind::Every { start: crate::scheduler::now(), period })
    }

    /// Notes task `id` as the last sender (see [`ChannelCell::last_sender`]).
    #[inline]
    pub fn note_sender(&self, id: u32) {
        use std::sync::atomic::Ordering::Relaxed;
        if self.last_sender.load(Relaxed) != id {
            self.last_sender.store(id, Relaxed);
        }
    }

    /// Notes task `id` as the last receiver.
    #[inline]
    pub fn note_receiver(&self, id: u32) {
        use std::sync::atomic::Ordering::Relaxed;
        if self.last_receiver.load(Relaxed) != id {
            self.last_receiver.store(id, Relaxed);
        }
    }

    /// Live registrations: (receivers, senders) waiting on the channel.
    pub fn waiting(&self) -> (usize, usize) {
        let g = self.inner.lock();
        (g.recvq.iter().filter(|e| e.w.is_live()).count(), g.sendq.iter().filter(|(e, _)| e.w.is_live()).count())
    }

    pub fn is_timer(&self) -> bool {
        !matches!(self.kind, Kind::Plain)
    }

    /// Locks and brings a timer channel up to date.
    fn lock(&self) -> MutexGuard<'_, Inner> {
        let mut g = self.inner.lock();
        // The write barrier (see `vm::heap`): before the channel's first
        // change in a marking cycle, shade the values it holds (buffered
        // and offered by blocked senders), which a receive may take out of
        // the marker's sight. (The timer paths lock `inner` directly: a
        // timer channel holds only numbers.)
        // (An odd barrier epoch is a marking cycle; the generational
        // barrier is `remember`, where a value comes in.)
        let epoch = crate::vm::heap::barrier_epoch();
        if epoch & 1 == 1 && g.scanned != epoch {
            g.scanned = epoch;
            for &v in g.buf.iter().chain(g.sendq.iter().map(|(_, v)| v)) {
                crate::vm::heap::shade(v);
            }
        }
        if let Kind::After { ms, deadline } = self.kind {
            if !g.fired && !g.closed && crate::scheduler::now() >= deadline {
                Self::fire_after(&mut g, ms);
            }
        }
        g
    }

    fn fire_after(g: &mut Inner, ms: f64) {
        g.fired = true;
        g.buf.push_back(Value::number(ms));
        g.closed = true;
    }

    pub fn len(&self) -> usize {
        self.lock().buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Bytes the channel's queues reserve (for the collector's accounting).
    pub fn buffer_bytes(&self) -> usize {
        let g = self.inner.lock();
        g.buf.capacity() * std::mem::size_of::<Value>()
            + g.recvq.capacity() * std::mem::size_of::<Entry>()
            + g.sendq.capacity() * std::mem::size_of::<(Entry, Value)>()
    }

    /// Values the channel keeps alive (GC): the buffer and pending sends.
    pub fn trace(&self, mut f: impl FnMut(Value)) {
        let g = self.inner.lock();
        g.buf.iter().for_each(|&v| f(v));
        g.sendq.iter().for_each(|&(_, v)| f(v));
    }

    /// A non-suspending receive by a running task (`tryReceive`, the fast
    /// path of `receive`, a `select` case).
    pub fn try_recv(&self, woken: &mut Vec<Arc<TaskCell>>) -> Recv {
        self.lock().recv(woken)
    }

    /// A non-suspending send by a running task.
    pub fn try_send(&self, v: Value, woken: &mut Vec<Arc<TaskCell>>) -> Sent {
        self.lock().send(v, self.capacity, woken)
    }

    /// `close()`: false if already closed. Wakes every waiting receiver
    /// (null) and sender (ChannelClosedError); buffered values stay for
    /// receivers to drain.
    pub fn close(&self, woken: &mut Vec<Arc<TaskCell>>) -> bool {
        let mut g = self.lock();
        if g.closed {
            return false;
        }
        g.closed = true;
        g.fired = true;
        Self::wake_closed(&mut g, woken);
        true
    }

    fn wake_closed(g: &mut Inner, woken: &mut Vec<Arc<TaskCell>>) {
        // Receivers only wait on an empty buffer.
        while let Some(e) = g.take_receiver() {
            e.w.deliver(e.resume(Value::NULL), woken);
        }
        while let Some((e, _)) = g.sendq.pop_front() {
            if e.w.claim() {
                e.w.deliver(Resume::Closed, woken);
            }
        }
    }

    /// Step 2 for a receiver (a `receive()` or a `select` receive case).
    pub fn register_recv(
        self: &Arc<Self>,
        e: Entry,
        woken: &mut Vec<Arc<TaskCell>>,
        timers: &mut Vec<Timer>,
    ) -> Registered {
        let mut g = self.lock();
        g.prune();
        if g.can_recv(Some(&e.w)) {
            if !e.w.claim() {
                return Registered::Queued;
            }
            return match g.recv(woken) {
                Recv::Got(v) => Registered::Ready(e.resume(v)),
                Recv::Empty => Registered::Again,
            };
        }
        g.recvq.push_back(e);
        if !g.armed {
            match self.kind {
                Kind::Plain => {}
                Kind::After { deadline, .. } => {
                    g.armed = true;
                    let ch = self.clone();
                    timers.push(Timer {
                        at: deadline,
                        cancel_on_wake: false,
                        fire: Box::new(move |w| ch.after_fired(w)),
                    });
                }
                Kind::Every { start, period } => {
                    // A tick nobody waited for is dropped: the receiver
                    // waits for the next boundary.
                    let k = boundaries(start, period, crate::scheduler::now());
                    g.last_boundary = g.last_boundary.max(k);
                    g.armed = true;
                    let ch = self.clone();
                    let at = start + period * (g.last_boundary as u32 + 1);
                    timers.push(Timer { at, cancel_on_wake: false, fire: Box::new(move |w| ch.tick(w)) });
                }
            }
        }
        Registered::Queued
    }

    /// Step 2 for a sender with value `v`.
    pub fn register_send(&self, e: Entry, v: Value, woken: &mut Vec<Arc<TaskCell>>) -> Registered {
        let mut g = self.lock();
        g.prune();
        if g.can_send(self.capacity, Some(&e.w)) {
            if !e.w.claim() {
                return Registered::Queued;
            }
            return match g.send(v, self.capacity, woken) {
                Sent::Sent => Registered::Ready(e.resume(Value::UNDEFINED)),
                Sent::Closed => Registered::Ready(Resume::Closed),
                Sent::Full => Registered::Again,
            };
        }
        crate::vm::heap::remember(v);
        g.sendq.push_back((e, v));
        Registered::Queued
    }

    /// `after`'s timer: produce the value and hand it (then null, the
    /// channel being closed) to the waiting receivers.
    fn after_fired(&self, woken: &mut Vec<Arc<TaskCell>>) -> Option<Timer> {
        let mut g = self.inner.lock();
        g.armed = false;
        if let Kind::After { ms, .. } = self.kind {
            if !g.fired && !g.closed {
                Self::fire_after(&mut g, ms);
            }
        }
        while let Some(e) = g.take_receiver() {
            let v = g.buf.pop_front().unwrap_or(Value::NULL);
            e.w.deliver(e.resume(v), woken);
        }
        None
    }

    /// `every`'s timer: deliver the tick to one waiting receiver (or drop
    /// it); keep ticking while receivers wait.
    fn tick(self: Arc<Self>, woken: &mut Vec<Arc<TaskCell>>) -> Option<Timer> {
        let Kind::Every { start, period } = self.kind else { return None };
        let mut g = self.inner.lock();
        g.armed = false;
        if g.closed {
            return None;
        }
        let k = boundaries(start, period, crate::scheduler::now());
        if k > g.last_boundary {
            g.last_boundary = k;
            if let Some(e) = g.take_receiver() {
                g.ticks += 1;
                let n = g.ticks as f64;
                e.w.deliver(e.resume(Value::number(n)), woken);
            }
        }
        g.prune();
        if g.recvq.iter().any(|e| e.w.is_live()) {
            g.armed = true;
            let at = start + period * (g.last_boundary as u32 + 1);
            drop(g);
            return Some(Timer { at, cancel_on_wake: false, fire: Box::new(move |w| self.tick(w)) });
        }
        None
    }
}

/// Tick boundaries passed at `now`.
fn boundaries(start: Instant, period: Duration, now: Instant) -> u64 {
    (now.saturating_duration_since(start).as_nanos() / period.as_nanos().max(1)) as u64
}

/// `ch.receive()` waiting.
pub struct RecvWait(pub Arc<ChannelCell>);

impl WaitObject for RecvWait {
    fn register(&self, w: Waiter, woken: &mut Vec<Arc<TaskCell>>, timers: &mut Vec<Timer>) -> Registered {
        self.0.register_recv(Entry::plain(w), woken, timers)
    }
    fn describe(&self) -> std::borrow::Cow<'static, str> {
        "receiving on a channel".into()
    }
    fn blocker(&self) -> super::Blocker {
        super::Blocker::Recv(Arc::downgrade(&self.0))
    }
    fn trace_info(&self) -> (&'static str, u32) {
        ("channel", self.0.id)
    }
    fn roots(&self) -> Vec<Value> {
        Vec::new()
    }
}

/// `ch.send(v)` waiting.
pub struct SendWait(pub Arc<ChannelCell>, pub Value);

impl WaitObject for SendWait {
    fn register(&self, w: Waiter, woken: &mut Vec<Arc<TaskCell>>, _timers: &mut Vec<Timer>) -> Registered {
        self.0.register_send(Entry::plain(w), self.1, woken)
    }
    fn describe(&self) -> std::borrow::Cow<'static, str> {
        "sending on a channel".into()
    }
    fn blocker(&self) -> super::Blocker {
        super::Blocker::Send(Arc::downgrade(&self.0))
    }
    fn trace_info(&self) -> (&'static str, u32) {
        ("channel", self.0.id)
    }
    fn roots(&self) -> Vec<Value> {
        vec![self.1]
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

    fn resume_of(t: &Arc<TaskCell>) -> Option<Resume> {
        t.resume.lock().take()
    }

    fn num(r: Option<Resume>) -> f64 {
        match r {
            Some(Resume::Value(v)) | Some(Resume::Case { value: v, .. }) => v.as_number(),
            other => panic!("not a value resume: {other:?}"),
        }
    }

    #[test]
    fn buffered_fifo_and_close_drains() {
        let ch = ChannelCell::new(2);
        let mut woken = Vec::new();
        assert_eq!(ch.try_send(Value::number(1.0), &mut woken), Sent::Sent);
        assert_eq!(ch.try_send(Value::number(2.0), &mut woken), Sent::Sent);
        assert_eq!(ch.try_send(Value::number(3.0), &mut woken), Sent::Full);
        assert!(ch.close(&mut woken));
        assert!(!ch.close(&mut woken));
        assert_eq!(ch.try_send(Value::number(4.0), &mut woken), Sent::Closed);
        assert_eq!(ch.try_recv(&mut woken), Recv::Got(Value::number(1.0)));
        assert_eq!(ch.try_recv(&mut woken), Recv::Got(Value::number(2.0)));
        assert_eq!(ch.try_recv(&mut woken), Recv::Got(Value::NULL));
        assert!(woken.is_empty());
    }

    #[test]
    fn rendezvous_hands_value_to_waiting_receiver() {
        let ch = Arc::new(ChannelCell::new(0));
        let r = cell(1);
        let (mut woken, mut timers) = (Vec::new(), Vec::new());
        assert_eq!(ch.try_send(Value::number(5.0), &mut woken), Sent::Full);
        assert!(matches!(ch.register_recv(Entry::plain(waiter(&r)), &mut woken, &mut timers), Registered::Queued));
        assert_eq!(ch.try_send(Value::number(5.0), &mut woken), Sent::Sent);
        assert_eq!(woken.len(), 1);
        assert_eq!(num(resume_of(&r)), 5.0);
    }

    #[test]
    fn cancelled_sender_leaves_no_value() {
        let ch = Arc::new(ChannelCell::new(0));
        let s = cell(1);
        let mut woken = Vec::new();
        let w = waiter(&s);
        assert!(matches!(ch.register_send(Entry::plain(w), Value::number(9.0), &mut woken), Registered::Queued));
        // The canceller wins the claim.
        assert!(s.token.claim_current());
        assert_eq!(ch.try_recv(&mut woken), Recv::Empty);
        assert!(woken.is_empty());
    }

    #[test]
    fn blocked_sender_refills_buffer_in_order() {
        let ch = Arc::new(ChannelCell::new(1));
        let mut woken = Vec::new();
        assert_eq!(ch.try_send(Value::number(1.0), &mut woken), Sent::Sent);
        let s = cell(1);
        assert!(matches!(
            ch.register_send(Entry::plain(waiter(&s)), Value::number(2.0), &mut woken),
            Registered::Queued
        ));
        assert_eq!(ch.try_recv(&mut woken), Recv::Got(Value::number(1.0)));
        assert_eq!(woken.len(), 1, "the sender was woken");
        assert_eq!(ch.len(), 1);
        assert_eq!(ch.try_recv(&mut woken), Recv::Got(Value::number(2.0)));
    }

    #[test]
    fn close_wakes_receivers_with_null_and_senders_with_closed() {
        let a = Arc::new(ChannelCell::new(0));
        let (mut woken, mut timers) = (Vec::new(), Vec::new());
        let r = cell(1);
        let s = cell(2);
        a.register_recv(Entry::plain(waiter(&r)), &mut woken, &mut timers);
        let b = Arc::new(ChannelCell::new(0));
        b.register_send(Entry::plain(waiter(&s)), Value::number(1.0), &mut woken);
        a.close(&mut woken);
        b.close(&mut woken);
        assert!(matches!(resume_of(&r), Some(Resume::Value(v)) if v.is_null()));
        assert!(matches!(resume_of(&s), Some(Resume::Closed)));
        assert_eq!(woken.len(), 2);
    }

    #[test]
    fn select_does_not_match_itself() {
        let ch = Arc::new(ChannelCell::new(0));
        let t = cell(1);
        let (mut woken, mut timers) = (Vec::new(), Vec::new());
        let w = waiter(&t);
        let w1 = w.clone();
        assert!(matches!(ch.register_recv(Entry::case(w, 0), &mut woken, &mut timers), Registered::Queued));
        assert!(matches!(ch.register_send(Entry::case(w1, 1), Value::number(1.0), &mut woken), Registered::Queued));
        // A partner receives: it gets the select's send case.
        assert_eq!(ch.try_recv(&mut woken), Recv::Got(Value::number(1.0)));
        assert!(matches!(resume_of(&t), Some(Resume::Case { case: 1, .. })));
    }

    /// Many threads send and receive through a small channel, registering
    /// as blocked tasks and racing wakers and cancellers: every value
    /// arrives exactly once.
    #[test]
    fn hammer_no_value_lost_or_duplicated() {
        const PER: usize = 2000;
        const SENDERS: usize = 3;
        let ch = Arc::new(ChannelCell::new(1));
        let received = Arc::new(Mutex::new(Vec::<f64>::new()));
        std::thread::scope(|s| {
            for k in 0..SENDERS {
                let ch = ch.clone();
                s.spawn(move || {
                    let me = cell(100 + k as u32);
                    for i in 0..PER {
                        let v = Value::number((k * PER + i) as f64);
                        loop {
                            let mut woken = Vec::new();
                            match ch.try_send(v, &mut woken) {
                                Sent::Sent => break,
                                Sent::Closed => unreachable!(),
                                Sent::Full => {}
                            }
                            // Block: register and wait to be claimed, or
                            // cancel ourselves (then the value is ours
                            // again and we retry).
                            let w = waiter(&me);
                            match ch.register_send(Entry::plain(w), v, &mut woken) {
                                Registered::Ready(_) => break,
                                Registered::Again => continue,
                                Registered::Queued => {}
                            }
                            let mut spins = 0;
                            let sent = loop {
                                if me.resume.lock().take().is_some() {
                                    break true;
                                }
                                spins += 1;
                                if spins > 50 && me.token.claim_current() {
                                    break false; // cancelled: retry the send
                                }
                                std::thread::yield_now();
                            };
                            if sent {
                                break;
                            }
                        }
                    }
                });
            }
            for k in 0..2 {
                let ch = ch.clone();
                let received = received.clone();
                s.spawn(move || {
                    let me = cell(200 + k);
                    let mut timers = Vec::new();
                    loop {
                        let mut woken = Vec::new();
                        let got = match ch.try_recv(&mut woken) {
                            Recv::Got(v) => Some(v),
                            Recv::Empty => {
                                let w = waiter(&me);
                                match ch.register_recv(Entry::plain(w), &mut woken, &mut timers) {
                                    Registered::Ready(r) => Some(match r {
                                        Resume::Value(v) => v,
                                        _ => unreachable!(),
                                    }),
                                    Registered::Again => None,
                                    Registered::Queued => loop {
                                        if let Some(r) = me.resume.lock().take() {
                                            match r {
                                                Resume::Value(v) => break Some(v),
                                                _ => unreachable!(),
                                            }
                                        }
                                        std::thread::yield_now();
                                    },
                                }
                            }
                        };
                        match got {
                            Some(v) if v.is_null() => break,
                            Some(v) => received.lock().push(v.as_number()),
                            None => {}
                        }
                    }
                });
            }
            // Close once every sender is done.
            s.spawn(|| {
                loop {
                    std::thread::sleep(Duration::from_millis(5));
                    if received.lock().len() + ch.len() >= SENDERS * PER {
                        break;
                    }
                }
                ch.close(&mut Vec::new());
            });
        });
        let mut got = received.lock().clone();
        got.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let want: Vec<f64> = (0..SENDERS * PER).map(|i| i as f64).collect();
        assert_eq!(got, want);
    }
}
