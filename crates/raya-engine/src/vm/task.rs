//! A task: one green thread's complete execution state.
//!
//! Everything the interpreter needs to resume a task lives here — the
//! register stack, the call frames with their program counters, and the
//! exception handlers — never on the Rust stack. That is what lets any
//! instruction suspend the task and lets a worker thread pick it up later
//! (on any worker) exactly where it stopped.

use super::link::RtProto;
use super::value::Value;

/// Frame flags.
pub mod flags {
    /// Constructor call: the result is `this` unless the constructor
    /// returns an object.
    pub const CONSTRUCT: u8 = 1;
    /// The result is dropped (setters, field initialisers).
    pub const DISCARD: u8 = 2;
    /// After this (parent constructor) frame returns, run the field
    /// initialiser of the class in `Frame::after` on the same `this`.
    pub const INIT_FIELDS_AFTER: u8 = 4;
    /// A user `toString()` called for `+`: the result is `String(after)`
    /// followed by the returned string.
    pub const CONCAT_AFTER_PREFIX: u8 = 8;
    /// Likewise, the returned string followed by `String(after)`.
    pub const CONCAT_BEFORE_SUFFIX: u8 = 16;
    /// A generator's body: `after` is the generator object. A `yield`
    /// moves the frame back into it; a return or throw finishes it.
    pub const GEN: u8 = 32;
    /// With `GEN`: resumed by a loop (`IterState::GenLoop`), so what it
    /// yields or returns goes to `ret` as is, not as `{ value, done }`.
    pub const GEN_RAW: u8 = 64;
    /// The executor of `new Promise(executor)`, `after` being the promise:
    /// its return gives the promise (its own result is dropped), and a
    /// throw that would leave it rejects the promise instead (unless
    /// `resolve` or `reject` was called first) and the caller continues
    /// with the promise, as the prelude's `try`/`catch` around it did.
    pub const EXECUTOR: u8 = 128;
}

pub struct Frame {
    /// The running prototype. Kept alive by `closure`.
    pub rt: *const RtProto,
    /// The closure being run (a root, and the source of upvalues).
    pub closure: Value,
    /// Index of the next instruction (saved when the frame is not on top
    /// or the task is not running).
    pub pc: u32,
    /// Index in `Task::regs` of this frame's register 0.
    pub base: u32,
    /// Absolute register that receives the result.
    pub ret: u32,
    pub flags: u8,
    /// For `INIT_FIELDS_AFTER`: the class whose fields to initialise.
    pub after: Value,
}

impl Frame {
    pub fn proto(&self) -> &RtProto {
        // SAFETY: `closure` (a GC root while the frame exists) owns an Arc
        // of the prototype.
        unsafe { &*self.rt }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct AwaitScan {
    pub array: Value,
    pub next: usize,
    pub registered: bool,
}

/// An active `try`: where to go on a throw.
#[derive(Clone, Copy)]
pub struct Handler {
    /// `frames.len()` when the handler was pushed.
    pub depth: u32,
    /// Catch target pc in that frame.
    pub pc: u32,
    /// Absolute register for the thrown value.
    pub exc: u32,
}

pub struct Task {
    pub id: u32,
    pub regs: Vec<Value>,
    pub frames: Vec<Frame>,
    /// The active `try`s, innermost last (boxed on the first, see
    /// [`Handlers`]).
    pub handlers: Handlers,
    /// Absolute register that receives a `Resume::Value` after a blocking
    /// built-in suspended the task.
    pub resume_dst: u32,
    /// The shared side of this task (cancellation flag, completion); None
    /// only for tasks run outside a scheduler (tests).
    pub cell: Option<std::sync::Arc<crate::sync::TaskCell>>,
    /// What the task is blocked on while suspended, for deadlock and
    /// never-finished reports (set before its state is saved).
    pub blocked_on: Text,
    /// The object of that wait (set with `blocked_on`): a deadlock report
    /// names a mutex's holder, a channel's site and queues through it.
    pub blocker: crate::sync::Blocker,
    /// What few tasks use, in one box made on first use: the mutexes the
    /// task may hold and the progress of an `await [..]` (see [`Rare`]).
    pub rare: Rare,
    /// Safepoints left of the grace to unlock a mutex past the end of the
    /// time slice, in this run (renewed by `TaskInterpreter::run`; see
    /// `interp::LOCK_GRACE`).
    pub lock_grace: u32,
    /// The last run ended in a preemption (the task stands at the
    /// safepoint it was stopped at; see the seeded slices in `driver.rs`).
    pub preempted: bool,
    /// While a native called in place by `Instr::CallMethod` runs: the
    /// address of the next instruction, standing in for the top frame's
    /// `pc`, which that path does not store (a native needs it only to
    /// build a stack trace, so [`Task::top_pc`] derives it then). Zero
    /// otherwise.
    pub native_ip: std::cell::Cell<usize>,
}

/// What most tasks never use ([`Task::rare`]), boxed on first use: in
/// place, the list of held mutexes and an `await [..]`'s progress would
/// cost every task four words, and a task is in the allocator's 128-byte
/// class with one (design/memory.md, "Memory per task"). Only the running
/// task touches it (natives see the task by shared reference, hence the
/// cells).
#[derive(Default)]
pub struct Rare(std::cell::OnceCell<Box<RareParts>>);

#[derive(Default)]
pub struct RareParts {
    /// Every mutex this task locked and may still hold, released when it
    /// ends (`sync::mutex::release_all`). An unlock leaves its entry, so a
    /// lock/unlock pair on the same mutex costs no list update; entries of
    /// mutexes no longer held are pruned as the list grows.
    locked: std::cell::RefCell<Vec<std::sync::Arc<crate::sync::mutex::MutexCell>>>,
    /// Progress of the `await [..]` in progress: the array (by identity),
    /// the index of the first element not yet known to have succeeded, and
    /// whether the task is registered with the rest.
    await_scan: std::cell::Cell<Option<AwaitScan>>,
}

impl Rare {
    /// Holds no mutex it noted (see [`RareParts::locked`]).
    pub fn locked_is_empty(&self) -> bool {
        self.0.get().is_none_or(|r| r.locked.borrow().is_empty())
    }

    /// Takes the list of mutexes out (the task ends: they are released).
    pub fn take_locked(&self) -> Vec<std::sync::Arc<crate::sync::mutex::MutexCell>> {
        self.0.get().map(|r| r.locked.take()).unwrap_or_default()
    }

    /// The `await [..]` in progress (see [`RareParts::await_scan`]).
    #[inline]
    pub fn await_scan(&self) -> Option<AwaitScan> {
        self.0.get().and_then(|r| r.await_scan.get())
    }

    /// Sets the `await [..]` in progress; setting none makes no box.
    #[inline]
    pub fn set_await_scan(&self, scan: Option<AwaitScan>) {
        match (self.0.get(), scan) {
            (Some(r), s) => r.await_scan.set(s),
            (None, None) => {}
            (None, s) => self.0.get_or_init(Box::default).await_scan.set(s),
        }
    }

    fn locked(&self) -> Option<std::cell::Ref<'_, Vec<std::sync::Arc<crate::sync::mutex::MutexCell>>>> {
        self.0.get().map(|r| r.locked.borrow())
    }
}

/// A task's active `try`s ([`Task::handlers`]): a list boxed on the first
/// `try`, so a task that never runs one (a million suspended in `await`)
/// spends one word on it, not three.
// The box is the point: one word in every task instead of three.
#[allow(clippy::box_collection)]
#[derive(Default)]
pub struct Handlers(Option<Box<Vec<Handler>>>);

impl Handlers {
    #[inline]
    pub fn last(&self) -> Option<&Handler> {
        self.0.as_deref()?.last()
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Handler> {
        self.0.as_deref_mut()?.pop()
    }

    #[inline]
    pub fn push(&mut self, h: Handler) {
        self.0.get_or_insert_with(Box::default).push(h)
    }

    /// Empties the list (its box stays, for the next `try`).
    pub fn clear(&mut self) {
        if let Some(v) = self.0.as_deref_mut() {
            v.clear();
        }
    }

    pub fn capacity(&self) -> usize {
        self.0.as_deref().map_or(0, Vec::capacity)
    }
}

/// What a suspended task waits for, in words ([`Task::blocked_on`]): a
/// `Cow<'static, str>` in two words rather than three (the text's address
/// and its length, the length's top bit saying that the text is owned, a
/// `Box<str>` to free), so a task fits the 128-byte class.
pub struct Text {
    ptr: std::ptr::NonNull<u8>,
    /// The length, with [`Text::OWNED`] set if `ptr` is a `Box<str>`'s.
    len: usize,
}

// SAFETY: a `Text` is a `&'static str` or owns a `Box<str>`, both `Send`
// and `Sync`.
unsafe impl Send for Text {}
unsafe impl Sync for Text {}

impl Text {
    /// No `str` is longer than `isize::MAX` bytes, so the top bit of a
    /// length is free.
    const OWNED: usize = 1 << (usize::BITS - 1);

    #[inline]
    pub fn as_str(&self) -> &str {
        // SAFETY: `ptr` and the length without the flag are those of a
        // `str` that lives as long as `self` (static, or the box `self`
        // owns and frees only in `drop`).
        unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(self.ptr.as_ptr(), self.len & !Text::OWNED)) }
    }

    fn owned(&self) -> bool {
        self.len & Text::OWNED != 0
    }
}

impl From<std::borrow::Cow<'static, str>> for Text {
    #[inline]
    fn from(c: std::borrow::Cow<'static, str>) -> Text {
        match c {
            std::borrow::Cow::Borrowed(s) => Text { ptr: std::ptr::NonNull::from(s).cast(), len: s.len() },
            std::borrow::Cow::Owned(s) => {
                let b = s.into_boxed_str();
                let len = b.len() | Text::OWNED;
                // SAFETY: `Box::into_raw` never gives a null pointer.
                let ptr = unsafe { std::ptr::NonNull::new_unchecked(Box::into_raw(b).cast::<u8>()) };
                Text { ptr, len }
            }
        }
    }
}

impl From<&'static str> for Text {
    fn from(s: &'static str) -> Text {
        Text::from(std::borrow::Cow::Borrowed(s))
    }
}

impl Default for Text {
    fn default() -> Text {
        Text::from("")
    }
}

impl Clone for Text {
    fn clone(&self) -> Text {
        if self.owned() {
            Text::from(std::borrow::Cow::Owned(self.as_str().to_owned()))
        } else {
            Text { ptr: self.ptr, len: self.len }
        }
    }
}

impl Drop for Text {
    fn drop(&mut self) {
        if self.owned() {
            let len = self.len & !Text::OWNED;
            // SAFETY: made from a `Box<str>` of this address and length
            // (`From<Cow>`), freed only here.
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), len) as *mut str) });
        }
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_str().fmt(f)
    }
}

// SAFETY: a task is run by one worker at a time; the raw prototype
// pointers in its frames point to immutable, Arc-owned data.
unsafe impl Send for Task {}

impl Task {
    pub fn new(id: u32) -> Task {
        Task {
            id,
            // Sized on first use, exactly: a million suspended tasks must
            // fit in a gigabyte (design/memory.md), so no spare capacity.
            regs: Vec::new(),
            frames: Vec::with_capacity(1),
            handlers: Handlers::default(),
            resume_dst: 0,
            cell: None,
            blocked_on: Text::default(),
            blocker: crate::sync::Blocker::None,
            rare: Rare::default(),
            lock_grace: 0,
            preempted: false,
            native_ip: std::cell::Cell::new(0),
        }
    }

    /// Records that this task holds, or is about to be handed, `m`.
    #[inline]
    pub fn note_lock(&self, m: &std::sync::Arc<crate::sync::mutex::MutexCell>) {
        if !self.last_locked_is(m) {
            self.note_new_lock(m);
        }
    }

    /// `m` is the mutex this task noted last, so noting it again changes
    /// nothing: the common case, as most programs lock one mutex again and
    /// again.
    #[inline]
    pub fn last_locked_is(&self, m: &std::sync::Arc<crate::sync::mutex::MutexCell>) -> bool {
        self.rare.locked().is_some_and(|l| l.last().is_some_and(|x| std::sync::Arc::ptr_eq(x, m)))
    }

    #[cold]
    #[inline(never)]
    fn note_new_lock(&self, m: &std::sync::Arc<crate::sync::mutex::MutexCell>) {
        let mut locked = self.rare.0.get_or_init(Box::default).locked.borrow_mut();
        if locked.iter().any(|x| std::sync::Arc::ptr_eq(x, m)) {
            return;
        }
        if locked.len() >= 8 && locked.len().is_power_of_two() {
            locked.retain(|x| x.is_held_by(self.id));
        }
        locked.push(m.clone());
    }

    /// The top frame's `pc`, also while a native runs (see `native_ip`).
    pub fn top_pc(&self) -> Option<u32> {
        let f = self.frames.last()?;
        Some(match self.native_ip.get() {
            0 => f.pc,
            ip => {
                ((ip - f.proto().proto.code.as_ptr() as usize) / std::mem::size_of::<crate::bytecode::Instr>()) as u32
            }
        })
    }

    /// Holds some mutex now.
    pub fn holds_mutex(&self) -> bool {
        self.rare.locked().is_some_and(|l| l.iter().any(|m| m.is_held_by(self.id)))
    }

    /// Grows the registers to `need` (filled with undefined), counting the
    /// growth toward the next collection.
    #[cold]
    pub fn grow_regs(&mut self, need: usize) {
        // The first frame's registers exactly: a task that suspends there
        // (a million awaiting one promise) keeps them for as long as it
        // waits, and the doubling of a growing stack would give most of
        // them spare room. Deeper calls grow by doubling, as a stack must.
        let first = self.frames.is_empty();
        super::heap::counted(&mut self.regs, |r| {
            if first {
                r.reserve_exact(need.saturating_sub(r.len()));
            }
            r.resize(need, Value::UNDEFINED)
        });
    }

    /// Room for one more frame; the growth counts toward the next
    /// collection.
    #[inline]
    pub fn reserve_frame(&mut self) {
        if self.frames.len() == self.frames.capacity() {
            super::heap::counted(&mut self.frames, |f| f.reserve(1));
        }
    }

    /// Bytes the task's stacks reserve (for the collector's accounting).
    pub fn capacity_bytes(&self) -> usize {
        self.regs.capacity() * std::mem::size_of::<Value>()
            + self.frames.capacity() * std::mem::size_of::<Frame>()
            + self.handlers.capacity() * std::mem::size_of::<Handler>()
    }

    /// Every value the task can still reach (GC roots): registers of live
    /// frames and the closures they run.
    pub fn roots(&self) -> impl Iterator<Item = Value> + '_ {
        // The end of the highest frame, not of the last one: a callee's
        // window can end below its caller's (a call from a low register of
        // a function with many), and the caller's registers above it are
        // still its own. Leaving them out would free what they hold, and a
        // later collection, scanning them again, would follow the pointer.
        let top = self
            .frames
            .iter()
            .map(|f| f.base as usize + f.proto().proto.num_regs as usize)
            .max()
            .unwrap_or(0)
            .min(self.regs.len());
        self.regs[..top].iter().copied().chain(self.frames.iter().flat_map(|f| [f.closure, f.after]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a task suspended in its first call costs, allocation by
    /// allocation, against the allocator's size classes (mimalloc: exact
    /// words up to 64 bytes, then 80, 96, 112, 128, 160, ...): its
    /// execution state (`Task`, 128), its shared side in its `Arc`
    /// (`TaskCell` and two counts, 112), its heap object (`Obj`, 80), one
    /// frame (40) and the registers of that call (a few words). With the
    /// live-table entry and the waiter on what it awaits (two words),
    /// about 455 bytes (design/memory.md, "Memory per task"); the next
    /// class up for either of the two large ones would add 16 or 32 bytes
    /// to every suspended task. Rarely used state is boxed to stay within
    /// them: `try` handlers, mutexes held, an `await [..]`'s progress; in
    /// the cell, in one box, an `await [..]`'s shared generation, a run's
    /// guard, timers and hooks; a completion's waiter and reaction lists.
    ///
    /// The two must also stay in *different* classes. A task's execution
    /// state is freed when it ends, its cell only with its `Task` object.
    /// Sharing a class, each new cell took the place of an ended task's
    /// state, so the cells of tasks made in a row lay scattered over the
    /// class's pages: awaiting a million finished tasks in order, and
    /// marking them, missed the cache on every cell (`spawn` 25% slower,
    /// design/performance.md, "The spawn regression").
    #[test]
    fn a_suspended_task_fits_its_size_classes() {
        use std::mem::size_of;
        assert!(size_of::<Task>() <= 128, "Task is {} bytes", size_of::<Task>());
        assert!(size_of::<Task>() > 112, "Task is {} bytes: check the cell's class below", size_of::<Task>());
        let cell = size_of::<crate::sync::TaskCell>() + 16;
        assert!(cell <= 112, "TaskCell in its Arc is {cell} bytes, in the class of Task");
        assert_eq!(size_of::<crate::sync::prim::Mutex<crate::sync::task::ResumeSlot>>(), 16, "a pending resume");
        // What it waits with: one in the list of what it awaits, one for
        // each channel it waits on (the entry of a queue).
        assert_eq!(size_of::<crate::sync::Waiter>(), 16);
        assert!(
            size_of::<crate::sync::channel::Entry>() <= 24,
            "a channel's queue entry is {} bytes",
            size_of::<crate::sync::channel::Entry>()
        );
        assert!(size_of::<Frame>() <= 40, "Frame is {} bytes", size_of::<Frame>());
        // The parts that took the two into these classes.
        assert!(
            size_of::<crate::sync::Completion>() <= 32,
            "Completion is {} bytes",
            size_of::<crate::sync::Completion>()
        );
        assert!(size_of::<crate::sync::Blocker>() <= 16, "Blocker is {} bytes", size_of::<crate::sync::Blocker>());
        assert_eq!(size_of::<Rare>(), 8);
        assert_eq!(size_of::<crate::sync::task::OnceBox<u64>>(), 8, "the cell's rare parts, one word");
        assert_eq!(size_of::<Handlers>(), 8);
        assert_eq!(size_of::<Text>(), 16);
    }

    /// A `Text` gives back the static or owned text it was made from,
    /// clones an owned one into its own box, and frees it (Miri checks the
    /// box is freed once).
    #[test]
    fn a_text_holds_static_and_owned_text() {
        let s = Text::from("awaiting a promise");
        assert_eq!(&*s, "awaiting a promise");
        assert!(!s.owned());
        let o = Text::from(std::borrow::Cow::Owned(format!("awaiting task {}", 7)));
        assert!(o.owned());
        let c = o.clone();
        drop(o);
        assert_eq!(&*c, "awaiting task 7");
        assert!(*s.clone() == *"awaiting a promise");
        assert!(Text::default().is_empty());
        assert!(Text::from(std::borrow::Cow::Owned(String::new())).is_empty());
    }

    /// The rare parts are boxed only when used: clearing an `await [..]`'s
    /// progress that was never set makes no box.
    #[test]
    fn rare_parts_are_boxed_on_first_use() {
        let t = Task::new(1);
        t.rare.set_await_scan(None);
        assert!(t.rare.0.get().is_none() && t.rare.locked_is_empty() && t.rare.await_scan().is_none());
        let scan = AwaitScan { array: Value::UNDEFINED, next: 3, registered: true };
        t.rare.set_await_scan(Some(scan));
        assert_eq!(t.rare.await_scan().map(|s| s.next), Some(3));
        t.rare.set_await_scan(None);
        assert!(t.rare.0.get().is_some() && t.rare.await_scan().is_none());
    }

    /// The first frame's registers are allocated exactly: a task
    /// suspended there keeps them (doubling gave `wait() { return await
    /// p }`, which needs 5, room for 8).
    #[test]
    fn a_first_frame_gets_exactly_its_registers() {
        let mut t = Task::new(1);
        t.regs.push(Value::UNDEFINED);
        t.regs.push(Value::UNDEFINED);
        t.grow_regs(5);
        assert_eq!((t.regs.len(), t.regs.capacity()), (5, 5));
        // A deeper call grows the stack by doubling (amortised pushes).
        t.frames.push(Frame {
            rt: std::ptr::null(),
            closure: Value::UNDEFINED,
            pc: 0,
            base: 1,
            ret: 0,
            flags: 0,
            after: Value::UNDEFINED,
        });
        t.grow_regs(6);
        assert_eq!(t.regs.len(), 6);
        assert!(t.regs.capacity() >= 10, "capacity {}", t.regs.capacity());
        t.frames.clear();
    }
}
