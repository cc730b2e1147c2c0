//! Waiting and waking: the protocol every blocking operation follows.
//!
//! Read `design/concurrency.md` first. In short:
//!
//! 1. A blocking operation that cannot complete at once makes the
//!    interpreter return `Suspended(Wait)` with the task's state saved.
//! 2. The worker then *arms* the task's [`WaitToken`] (a fresh generation)
//!    and registers a [`Waiter`] carrying that generation with every wait
//!    object the `Wait` names — under each object's lock, re-checking the
//!    condition; if it already holds, the worker claims the task itself.
//! 3. A waker claims a waiter with [`WaitToken::claim`]; exactly one claim
//!    per generation succeeds. The winner stores the resume value and makes
//!    the task runnable; losers (stale registrations) are dropped lazily.
//!
//! This module holds the shared pieces: the token, waiters, completions
//! (what tasks and promises finish with) and the `Wait` descriptions.

pub mod channel;
#[cfg(all(test, feature = "shuttle"))]
mod models;
pub mod mutex;
pub mod prim;
pub mod select;
pub mod task;

use crate::vm::value::Value;
use prim::{AtomicU64, Mutex};
use std::borrow::Cow;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

pub use task::{OnDone, Resume, TaskCell};

/// A task's wait token: `generation << 1 | armed`.
///
/// Invariant: at most one [`WaitToken::claim`] succeeds per `arm`. Only the
/// claimer may make the task runnable again, so a task is never woken
/// twice, and never while it is still running (it is armed only after its
/// state is saved).
#[derive(Default)]
pub struct WaitToken(AtomicU64);

impl WaitToken {
    /// Starts a new wait; returns its generation. Called only by the worker
    /// that owns the suspended task.
    pub fn arm(&self) -> u64 {
        let cur = self.0.load(Ordering::Acquire);
        let gen = (cur >> 1) + 1;
        // SeqCst: ordered against the cancel flag (see `driver::park`).
        self.0.store(gen << 1 | 1, Ordering::SeqCst);
        gen
    }

    /// Claims the wait of generation `gen`. True for exactly one caller.
    pub fn claim(&self, gen: u64) -> bool {
        // SeqCst: `driver::keep_timer` orders its flag store against it.
        self.0.compare_exchange(gen << 1 | 1, gen << 1, Ordering::SeqCst, Ordering::Acquire).is_ok()
    }

    /// The generation the next `arm` will use (only the owning worker arms,
    /// so this is exact for it).
    pub fn next_gen(&self) -> u64 {
        (self.0.load(Ordering::Acquire) >> 1) + 1
    }

    /// Claims whatever wait is armed now (used by cancellation).
    pub fn claim_current(&self) -> bool {
        // SeqCst: a canceller's flag store comes before this load (see
        // `TaskCell::request_cancel`).
        let cur = self.0.load(Ordering::SeqCst);
        cur & 1 == 1 && self.claim(cur >> 1)
    }

    pub fn is_armed(&self) -> bool {
        self.0.load(Ordering::Acquire) & 1 == 1
    }

    /// The wait of generation `gen` is still armed (its registrations are
    /// not stale). Only a hint: a claim may win or lose right after.
    pub fn is_waiting(&self, gen: u64) -> bool {
        self.0.load(Ordering::SeqCst) == (gen << 1 | 1)
    }
}

/// A registration of a suspended task with a wait object: two words, so
/// that a million tasks awaiting one promise cost 16 bytes each in its
/// waiter list (design/memory.md, "Memory per task"). A `select` case's
/// index is kept by the channel's entry ([`channel::Entry`]) and by the
/// timeout's timer, the only places that need it.
#[derive(Clone)]
pub struct Waiter {
    pub task: Arc<TaskCell>,
    /// `generation << 1 | await`: the wait's generation, and whether this
    /// is an `await [..]` registration ([`Waiter::is_await`]). Nothing is lost
    /// by the shift: the token holds a generation shifted the same way
    /// (`WaitToken`), so every generation is below 2^63, and
    /// [`SHARED_GEN`], the largest, would take a task 2^63 − 1
    /// suspensions to reach (292 years at one a nanosecond). So no
    /// generation wraps, and a stale registration can never claim a
    /// later wait.
    bits: u64,
}

/// `Waiter::gen` of a registration that stays valid across the task's
/// waits on the same `await [..]`: it claims whatever generation
/// `TaskCell::all_gen` names (0 = none), so an array of N tasks is
/// registered once, not once per wake-up. The largest generation a
/// [`Waiter`] holds; never one a token arms (see there).
pub const SHARED_GEN: u64 = u64::MAX >> 1;

impl Waiter {
    /// A registration of `task`'s wait of generation `gen`.
    #[inline]
    pub fn new(task: Arc<TaskCell>, gen: u64) -> Waiter {
        debug_assert!(gen <= SHARED_GEN);
        Waiter { task, bits: gen << 1 }
    }

    /// An `await [..]`'s registration: a failed outcome is thrown at once
    /// (fail-fast) instead of re-running the `await`.
    #[inline]
    pub fn awaiting(task: Arc<TaskCell>, gen: u64) -> Waiter {
        debug_assert!(gen <= SHARED_GEN);
        Waiter { task, bits: gen << 1 | 1 }
    }

    /// The generation of the wait this registers (or [`SHARED_GEN`]).
    #[inline]
    pub fn gen(&self) -> u64 {
        self.bits >> 1
    }

    /// Registers the wait of generation `gen` instead (a re-armed wait).
    #[inline]
    pub fn set_gen(&mut self, gen: u64) {
        debug_assert!(gen <= SHARED_GEN);
        self.bits = gen << 1 | (self.bits & 1);
    }

    /// Made by [`Waiter::awaiting`].
    #[inline]
    pub fn is_await(&self) -> bool {
        self.bits & 1 == 1
    }

    fn generation(&self) -> u64 {
        match self.gen() {
            SHARED_GEN => self.task.all_gen(),
            g => g,
        }
    }

    /// Claims this waiter; on success the caller must deliver a resume and
    /// make the task runnable.
    pub fn claim(&self) -> bool {
        let g = self.generation();
        g != 0 && self.task.token.claim(g)
    }

    /// Not yet claimed by anyone (see [`WaitToken::is_waiting`]).
    pub fn is_live(&self) -> bool {
        let g = self.generation();
        g != 0 && self.task.token.is_waiting(g)
    }

    /// Step 3 for a claimed waiter: store the resume and queue the task.
    pub fn deliver(&self, r: Resume, woken: &mut Vec<Arc<TaskCell>>) {
        self.task.resume.lock().set(r);
        woken.push(self.task.clone());
    }
}

/// What a timer does when it fires: wake tasks (pushing them to the woken
/// list) and optionally arm the next timer.
pub type TimerFire = Box<dyn FnOnce(&mut Vec<Arc<TaskCell>>) -> Option<Timer> + Send>;

/// A one-shot timer armed by a wait object (a `select` timeout, a timer
/// channel's next tick). The worker hands it to the scheduler's timer
/// thread; when it fires, `fire` runs on a worker with the runtime's woken
/// list (claims and delivers like any waker) and may return the next timer.
pub struct Timer {
    pub at: Instant,
    /// Belongs to this wait of the task only (a `select` timeout): the
    /// worker cancels it as soon as the task runs again, so a decided
    /// select leaves no timer keeping the program alive.
    pub cancel_on_wake: bool,
    pub fire: TimerFire,
}

/// How a task or promise finished.
#[derive(Clone, Copy, Debug)]
pub enum Outcome {
    Value(Value),
    Error(Value),
    /// Cancelled; carries the `TaskCancelledError` to throw at awaiters.
    Cancelled(Value),
}

/// The finishing state shared by tasks and promises.
#[derive(Default)]
pub struct Completion {
    pub inner: Mutex<CompletionInner>,
}

pub struct CompletionInner {
    /// The outcome as its kind (0 while pending, else 1 + the `Outcome`
    /// variant) and its value, rather than an `Option<Outcome>`: the kind
    /// then shares a word with `observed`, which keeps a task's cell in
    /// the allocator's 128-byte class (design/memory.md, "Memory per
    /// task"). Read and set through [`CompletionInner::outcome`].
    kind: u8,
    value: Value,
    /// Who waits for the outcome. Boxed on the first registration: every
    /// task has a completion, most never have a waiter or a reaction, and
    /// two empty lists in place cost a suspended task 48 bytes of its
    /// cell (design/memory.md, "Memory per task").
    lists: Option<Box<Pending>>,
    /// Someone awaited (or otherwise consumed) the outcome: a failure is
    /// then not an unhandled error.
    pub observed: bool,
}

/// See [`CompletionInner::lists`].
#[derive(Default)]
struct Pending {
    waiters: Vec<Waiter>,
    /// `then` handlers and adoptions waiting for the outcome, in the order
    /// added (see [`Reaction`]).
    reactions: Vec<Reaction>,
}

impl Default for CompletionInner {
    fn default() -> Self {
        CompletionInner { kind: 0, value: Value::UNDEFINED, lists: None, observed: false }
    }
}

impl CompletionInner {
    #[inline]
    pub fn outcome(&self) -> Option<Outcome> {
        match self.kind {
            0 => None,
            1 => Some(Outcome::Value(self.value)),
            2 => Some(Outcome::Error(self.value)),
            _ => Some(Outcome::Cancelled(self.value)),
        }
    }

    /// Settles a completion nobody can be waiting on yet (a new promise).
    pub fn set_outcome(&mut self, o: Outcome) {
        (self.kind, self.value) = match o {
            Outcome::Value(v) => (1, v),
            Outcome::Error(v) => (2, v),
            Outcome::Cancelled(v) => (3, v),
        };
    }

    fn pending(&mut self) -> &mut Pending {
        self.lists.get_or_insert_with(Box::default)
    }

    /// Takes the registered waiters out (the caller drops or wakes them
    /// after the lock is released).
    pub fn take_waiters(&mut self) -> Vec<Waiter> {
        self.lists.as_mut().map(|l| std::mem::take(&mut l.waiters)).unwrap_or_default()
    }

    /// The reactions waiting for the outcome (GC roots).
    pub fn reactions(&self) -> &[Reaction] {
        self.lists.as_ref().map_or(&[], |l| &l.reactions)
    }
}

/// What a settlement does besides waking tasks (Node's promise reactions;
/// see design/concurrency.md "Node's forms").
#[derive(Clone, Copy)]
pub enum Reaction {
    /// A job for the microtask queue, run with the outcome by the task
    /// draining the queue.
    Job(Job),
    /// Settle the promise `target` with the same outcome (a promise that
    /// adopted this one); with `pass`, a success settles it with `pass`
    /// instead (`finally` passes its source's outcome through).
    Adopt { target: Value, pass: Option<Outcome> },
}

/// A microtask job: what the prelude's drain task runs. `kind` says what
/// the values are (the prelude's `REACT_*`: a `then` handler pair and the
/// promise it settles, a `finally` callback, a thenable to follow, a
/// `queueMicrotask` callback).
#[derive(Clone, Copy)]
pub struct Job {
    pub kind: u8,
    pub a: Value,
    pub b: Value,
    pub c: Value,
    pub d: Value,
}

impl Job {
    pub fn roots(&self, mut f: impl FnMut(Value)) {
        f(self.a);
        f(self.b);
        f(self.c);
        f(self.d);
    }
}

impl Reaction {
    pub fn roots(&self, mut f: impl FnMut(Value)) {
        match *self {
            Reaction::Job(j) => j.roots(f),
            Reaction::Adopt { target, pass } => {
                f(target);
                if let Some(o) = pass {
                    f(o.value());
                }
            }
        }
    }
}

impl Outcome {
    /// The value or error it carries.
    pub fn value(self) -> Value {
        match self {
            Outcome::Value(v) | Outcome::Error(v) | Outcome::Cancelled(v) => v,
        }
    }
}

/// The microtask queue: reaction jobs whose source has settled, with the
/// outcome, in the order they became ready (one per program, shared by
/// the workers).
///
/// Invariant: `running` is true exactly while a drain task exists that
/// will pop the queue again before it ends; whoever pushes a job onto an
/// empty queue with `running` false sets it and must start one.
#[derive(Default)]
pub struct Microtasks {
    pub queue: std::collections::VecDeque<(Job, Outcome)>,
    pub running: bool,
}

impl Microtasks {
    /// Queues a job; true when the caller must start a drain task.
    pub fn push(&mut self, job: Job, o: Outcome) -> bool {
        self.queue.push_back((job, o));
        !std::mem::replace(&mut self.running, true)
    }
}

/// What a settlement hands its caller: tasks to wake, adoptions to carry
/// out, and whether a drain task must be started for the jobs it queued.
pub struct Settled {
    pub waiters: Vec<Waiter>,
    pub adopts: Vec<Reaction>,
    pub start_drain: bool,
}

impl Completion {
    pub fn outcome(&self) -> Option<Outcome> {
        self.inner.lock().outcome()
    }

    /// Sets the outcome once; returns the waiters to wake (the caller
    /// claims and requeues them) and the reactions to carry out, or None
    /// if it was already settled. Jobs go onto `mq` here, under the
    /// completion's lock, so a handler added after the settlement (which
    /// queues itself under the same lock) always comes after those added
    /// before it.
    pub fn settle(&self, o: Outcome, mq: &Mutex<Microtasks>) -> Option<Settled> {
        let mut g = self.inner.lock();
        if g.outcome().is_some() {
            return None;
        }
        // The generational barrier (see `vm::heap`): the task or promise
        // may be old, and its outcome young.
        crate::vm::heap::remember(o.value());
        g.set_outcome(o);
        let mut start_drain = false;
        let mut adopts = Vec::new();
        // Settled once: the lists are never needed again.
        let Some(lists) = g.lists.take() else {
            return Some(Settled { waiters: Vec::new(), adopts, start_drain });
        };
        let Pending { waiters, reactions } = *lists;
        if !reactions.is_empty() {
            // The write barrier (see `vm::heap`): the reactions leave a
            // place the marker may not have scanned yet.
            for r in &reactions {
                r.roots(crate::vm::heap::shade);
            }
            let mut q = mq.lock();
            for r in reactions {
                match r {
                    Reaction::Job(job) => start_drain |= q.push(job, o),
                    Reaction::Adopt { .. } => adopts.push(r),
                }
            }
        }
        Some(Settled { waiters, adopts, start_drain })
    }

    /// Adds a reaction and marks the outcome observed (a handler counts as
    /// handling a rejection). If already settled, a job is queued at once
    /// (`Ok(true)`: the caller must start a drain task) and an adoption is
    /// handed back with the outcome to carry out.
    pub fn react(&self, r: Reaction, mq: &Mutex<Microtasks>) -> Result<bool, (Reaction, Outcome)> {
        let mut g = self.inner.lock();
        g.observed = true;
        match (g.outcome(), r) {
            (None, r) => {
                // The generational barrier, as in `settle`.
                r.roots(crate::vm::heap::remember);
                g.pending().reactions.push(r);
                Ok(false)
            }
            (Some(o), Reaction::Job(job)) => Ok(mq.lock().push(job, o)),
            (Some(o), r) => Err((r, o)),
        }
    }

    /// Registers `w` unless already settled (step 2: re-check under the
    /// lock). Returns false when the completion is already settled.
    pub fn register(&self, w: Waiter) -> bool {
        let mut g = self.inner.lock();
        if g.outcome().is_some() {
            return false;
        }
        // Stale registrations (their wait already ended) are dropped when
        // the list doubles, which keeps registering amortised O(1) even
        // with a million waiters on one promise.
        let waiters = &mut g.pending().waiters;
        if waiters.len() >= 64 && waiters.len().is_power_of_two() {
            waiters.retain(|x| x.is_live());
        }
        waiters.push(w);
        true
    }
}

/// A promise: a completion settled by a script (`p.resolve(v)`) or by host
/// code from any thread (an external promise).
#[derive(Default)]
pub struct PromiseCell {
    pub completion: Completion,
    /// Settled by host code; while unsettled it keeps the program alive.
    pub external: bool,
    /// An executor's `resolve` or `reject` has been called (`new
    /// Promise(executor)`): later calls are ignored, even while the promise
    /// is still pending because it adopts a task or promise. Set by one
    /// atomic swap, so racing calls from several tasks agree on the winner.
    pub claimed: std::sync::atomic::AtomicBool,
}

/// A promise object's state: in the object itself (one allocation per
/// promise, not two), or shared with host code that settles it from its
/// own thread (an external promise, `embed`).
pub enum PromiseState {
    Local(PromiseCell),
    Shared(Arc<PromiseCell>),
}

impl Default for PromiseState {
    fn default() -> Self {
        PromiseState::Local(PromiseCell::default())
    }
}

impl std::ops::Deref for PromiseState {
    type Target = PromiseCell;
    #[inline]
    fn deref(&self) -> &PromiseCell {
        match self {
            PromiseState::Local(c) => c,
            PromiseState::Shared(c) => c,
        }
    }
}

/// What a suspended task waits for (the interpreter's `Suspended` reason).
pub enum Wait {
    /// One or more tasks/promises (`await x`, `Task.__waitAny`); the task
    /// wakes when any of them settles and re-runs its `await`.
    Settled(Vec<Value>),
    /// `await [..]` on this array: the task's `await_scan` says how far it
    /// has got; it is woken by the next settlement (a failure is thrown at
    /// once).
    All(Value),
    /// `sleep(ms)` / `Task.yield()` (a deadline of now).
    Until(Instant),
    /// Never woken except by cancellation (`select {}`).
    Forever,
    /// A wait object implemented elsewhere (channels, mutexes, ...): the
    /// worker calls `register` with the armed generation.
    Object(Box<dyn WaitObject>),
}

/// What [`WaitObject::register`] did.
pub enum Registered {
    /// Registered (or the task was already claimed by another waker).
    Queued,
    /// The condition held: the object claimed the task; resume it so.
    Ready(Resume),
    /// Claimed, but the condition vanished: arm again and re-register.
    Again,
}

/// A wait object's side of step 2.
pub trait WaitObject: Send {
    /// Registers the waiter under the object's lock, re-checking the
    /// condition. If the condition already holds, the object claims the
    /// waiter itself *before* moving any value (so a concurrent canceller
    /// can never make a value disappear), completes the operation as the
    /// running task would, and returns `Ready(resume)`: the worker then
    /// delivers it and makes the task runnable. If that claim fails (someone
    /// else woke the task) it returns `Queued` and registers nothing more.
    /// `Again` means the object claimed the task but the condition vanished
    /// meanwhile (a partner was claimed elsewhere): the worker arms a fresh
    /// generation and registers again.
    /// Other tasks the registration wakes (a blocked sender whose value
    /// moved into the buffer) go to `woken`; timers it needs (timeouts,
    /// timer channels) go to `timers`.
    fn register(&self, w: Waiter, woken: &mut Vec<Arc<TaskCell>>, timers: &mut Vec<Timer>) -> Registered;
    /// For deadlock reports: what is being waited on. Called at every
    /// suspension, so it should not allocate in the common case.
    fn describe(&self) -> Cow<'static, str>;
    /// GC: values the registration keeps alive.
    fn roots(&self) -> Vec<Value>;
    /// Woken with `Resume::Retry`, the task runs the suspending call again
    /// (which then finds what it waited for), as for `Wait::Settled`.
    fn reruns_call(&self) -> bool {
        false
    }
    /// For deadlock reports and the trace: the object waited on. Called
    /// at every suspension, so it should not allocate.
    fn blocker(&self) -> Blocker {
        Blocker::Other(&"other")
    }
    /// For the trace: [`Blocker::kind`] and [`Blocker::object_id`], without
    /// the weak reference's atomic traffic (the wait object is alive here).
    fn trace_info(&self) -> (&'static str, u32) {
        (self.blocker().kind(), 0)
    }
}

/// What a suspended task waits for, as a structure (the deadlock report
/// names a mutex's holder, a channel's creation site and queue lengths, an
/// awaited task's state; the trace names the object of every wait).
///
/// Weak references: a blocked task must keep neither its wait object nor
/// another task alive. (A waiter queue holds its task's cell, and a
/// blocked task's state lives in that cell: a strong reference back would
/// be a cycle that outlives the program.)
#[derive(Clone, Default)]
pub enum Blocker {
    #[default]
    None,
    Mutex(std::sync::Weak<mutex::MutexCell>),
    Recv(std::sync::Weak<channel::ChannelCell>),
    Send(std::sync::Weak<channel::ChannelCell>),
    /// One task (`await t`).
    Task(std::sync::Weak<TaskCell>),
    Promise,
    /// Several tasks or promises (`await [..]`, `Promise.race`).
    Tasks,
    Sleep,
    /// Anything else, by kind: `"select"`, `"semaphore"`, `"waitgroup"`,
    /// `"io"`, `"forever"`, `"other"`. A reference to the name rather than
    /// the name: one word, not two, so a blocker (in every task) is two
    /// words (design/memory.md, "Memory per task").
    Other(&'static &'static str),
}

impl Blocker {
    /// The kind of wait, one word (the trace's `reason`; `raya trace
    /// summary` adds wait time up by it).
    pub fn kind(&self) -> &'static str {
        match self {
            Blocker::None => "none",
            Blocker::Mutex(_) => "mutex",
            Blocker::Recv(_) | Blocker::Send(_) => "channel",
            Blocker::Task(_) | Blocker::Tasks => "task",
            Blocker::Promise => "promise",
            Blocker::Sleep => "sleep",
            Blocker::Other(k) => k,
        }
    }

    /// A number naming the object waited on (a channel's or mutex's id, a
    /// task's id), 0 when there is none.
    pub fn object_id(&self) -> u32 {
        match self {
            Blocker::Mutex(m) => m.upgrade().map_or(0, |m| m.id),
            Blocker::Recv(c) | Blocker::Send(c) => c.upgrade().map_or(0, |c| c.id),
            Blocker::Task(t) => t.upgrade().map_or(0, |t| t.id),
            _ => 0,
        }
    }
}

/// Ids of channels and mutexes (for reports and the trace), from 1.
pub fn next_object_id() -> u32 {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Where a channel or mutex was made: a source file and byte offset (the
/// line and column are worked out only when a report prints it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Site {
    pub file: u32,
    pub offset: u32,
}

impl Wait {
    /// Whether the suspending call is run again when the task is woken
    /// with `Resume::Retry` (else the task goes on after it).
    pub fn reruns_call(&self) -> bool {
        match self {
            Wait::Settled(_) => true,
            Wait::Object(o) => o.reruns_call(),
            _ => false,
        }
    }

    pub fn describe(&self) -> Cow<'static, str> {
        match self {
            Wait::Settled(v) if v.len() == 1 => match v[0].as_obj().map(|o| &o.body) {
                Some(crate::vm::object::Body::Promise(_)) => "awaiting a promise".into(),
                Some(crate::vm::object::Body::Task(t)) => format!("awaiting task {}", t.id).into(),
                _ => "awaiting a task".into(),
            },
            Wait::Settled(v) => format!("awaiting {} tasks", v.len()).into(),
            // Counted when a report is printed (see `describe_all`): this is
            // called at every suspension and must stay O(1).
            Wait::All(_) => AWAITING_ALL.into(),
            Wait::Until(_) => "sleeping".into(),
            Wait::Forever => "in an empty select".into(),
            Wait::Object(o) => o.describe(),
        }
    }
}

/// Placeholder description of a wait on one task in a task's
/// `blocked_on` ([`Wait::blocked_on`]), completed with the task's id from
/// the task's [`Blocker::Task`] when a report is printed.
pub const AWAITING_TASK: &str = "awaiting task";

/// Placeholder description of `Wait::All`, replaced by `describe_all`.
pub const AWAITING_ALL: &str = "awaiting all of an array";

/// "awaiting N tasks" for an `await [..]` on `array`.
pub fn describe_all(array: Value) -> String {
    let pending = crate::vm::ops::array_data(array)
        .map(|a| {
            a.iter()
                .filter(|&&x| crate::vm::interp::is_waitable(x) && crate::vm::interp::peek_outcome(x).is_none())
                .count()
        })
        .unwrap_or(0);
    format!("awaiting {} task{}", pending, if pending == 1 { "" } else { "s" })
}

impl Wait {
    /// [`Wait::describe`] for a task's `blocked_on`, stored at every
    /// suspension: a wait on one task is described by [`AWAITING_TASK`]
    /// (the report adds the id), not by a string made each time.
    #[inline]
    pub fn blocked_on(&self) -> Cow<'static, str> {
        match self {
            Wait::Settled(v)
                if v.len() == 1 && matches!(v[0].as_obj().map(|o| &o.body), Some(crate::vm::object::Body::Task(_))) =>
            {
                AWAITING_TASK.into()
            }
            _ => self.describe(),
        }
    }

    /// See [`WaitObject::trace_info`].
    pub fn trace_info(&self) -> (&'static str, u32) {
        match self {
            Wait::Settled(v) if v.len() == 1 => match v[0].as_obj().map(|o| &o.body) {
                Some(crate::vm::object::Body::Task(t)) => ("task", t.id),
                Some(crate::vm::object::Body::Promise(_)) => ("promise", 0),
                _ => ("task", 0),
            },
            Wait::Object(o) => o.trace_info(),
            _ => (self.blocker().kind(), 0),
        }
    }

    /// See [`Blocker`].
    pub fn blocker(&self) -> Blocker {
        match self {
            Wait::Settled(v) if v.len() == 1 => match v[0].as_obj().map(|o| &o.body) {
                Some(crate::vm::object::Body::Task(t)) => Blocker::Task(Arc::downgrade(t)),
                Some(crate::vm::object::Body::Promise(_)) => Blocker::Promise,
                _ => Blocker::Tasks,
            },
            Wait::Settled(_) | Wait::All(_) => Blocker::Tasks,
            Wait::Until(_) => Blocker::Sleep,
            Wait::Forever => Blocker::Other(&"forever"),
            Wait::Object(o) => o.blocker(),
        }
    }
}

impl std::fmt::Debug for Wait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_one_claim_per_generation() {
        let t = WaitToken::default();
        let g = t.arm();
        assert!(t.claim(g));
        assert!(!t.claim(g));
        assert!(!t.claim_current());
        let g2 = t.arm();
        assert!(g2 > g);
        assert!(!t.claim(g), "a stale generation never claims");
        assert!(t.claim_current());
    }

    /// A waiter's one word keeps both its generation (up to
    /// `SHARED_GEN`) and its `await [..]` flag, through a re-arm; a stale
    /// one never claims the task's next wait, and a shared one claims
    /// the generation the task names.
    #[test]
    fn a_waiter_keeps_its_generation_and_flag_in_one_word() {
        let t = Arc::new(TaskCell::without_exec(1));
        let g = t.token.arm();
        let mut w = Waiter::awaiting(t.clone(), g);
        assert!(w.is_await() && w.gen() == g);
        w.set_gen(SHARED_GEN);
        assert!(w.is_await() && w.gen() == SHARED_GEN);
        let plain = Waiter::new(t.clone(), g);
        assert!(!plain.is_await() && plain.gen() == g);
        let g2 = t.token.arm();
        assert!(!plain.is_live() && !plain.claim(), "stale");
        assert!(!w.claim(), "no shared generation named");
        t.set_all_gen(g2);
        assert!(w.is_live() && w.claim());
        assert!(!Waiter::new(t.clone(), g2).claim(), "claimed once");
    }

    fn job(n: u8) -> Reaction {
        let u = Value::UNDEFINED;
        Reaction::Job(Job { kind: n, a: u, b: u, c: u, d: u })
    }

    #[test]
    fn reactions_queue_in_the_order_added_around_the_settlement() {
        let c = Completion::default();
        let mq = Mutex::new(Microtasks::default());
        assert!(matches!(c.react(job(1), &mq), Ok(false)), "pending: kept, nothing queued");
        assert!(matches!(c.react(job(2), &mq), Ok(false)));
        let s = c.settle(Outcome::Value(Value::UNDEFINED), &mq).expect("first settlement");
        assert!(s.start_drain, "the first job queued starts a drain task");
        assert!(c.settle(Outcome::Value(Value::UNDEFINED), &mq).is_none(), "settles once");
        assert!(matches!(c.react(job(3), &mq), Ok(false)), "a drain task is already running");
        let kinds: Vec<u8> = mq.lock().queue.iter().map(|(j, _)| j.kind).collect();
        assert_eq!(kinds, [1, 2, 3]);
        assert!(c.inner.lock().observed, "a handler counts as observing the outcome");
        // The drain task ends its turn; the next job starts another.
        let mut q = mq.lock();
        q.queue.clear();
        q.running = false;
        drop(q);
        assert!(matches!(c.react(job(4), &mq), Ok(true)));
    }

    #[test]
    fn adoption_of_a_settled_source_is_handed_back() {
        let c = Completion::default();
        let mq = Mutex::new(Microtasks::default());
        c.settle(Outcome::Error(Value::UNDEFINED), &mq).expect("settles");
        let r = Reaction::Adopt { target: Value::UNDEFINED, pass: None };
        assert!(matches!(c.react(r, &mq), Err((Reaction::Adopt { .. }, Outcome::Error(_)))));
        assert!(mq.lock().queue.is_empty());
    }

    #[test]
    fn racing_claims_have_one_winner() {
        for _ in 0..200 {
            let t = Arc::new(WaitToken::default());
            let g = t.arm();
            let wins: usize = std::thread::scope(|s| {
                let hs: Vec<_> = (0..4).map(|_| s.spawn(|| t.claim(g) as usize)).collect();
                hs.into_iter().map(|h| h.join().unwrap()).sum()
            });
            assert_eq!(wins, 1);
        }
    }
}
