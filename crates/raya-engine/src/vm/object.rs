//! Heap objects.
//!
//! Every heap value is an [`Obj`]: a GC header and a [`Body`]. Bodies that
//! scripts can mutate keep their state in a [`Mut`] cell.
//!
//! # Locking
//!
//! Tasks on different workers may touch the same object at the same time,
//! and LANGUAGE.md §6 promises that every single operation on a shared
//! value is atomic. So every mutable body sits in a [`Mut`], and the only
//! way in is [`Mut::lock`], which returns a guard ([`MutRef`]).
//!
//! - While a program runs on one mutator thread (one worker, or before its
//!   first task is spawned), `lock` takes no lock at all: a relaxed load of
//!   one process-wide flag, [`enable_parallel_mutators`], decides. The flag
//!   is raised before a second thread can first touch any object (see
//!   `driver`), never lowered, and the guard remembers whether it locked.
//! - Otherwise `lock` takes a spin lock in the `Mut` (owned by the calling
//!   thread's tag, so a thread that already holds it re-enters instead of
//!   deadlocking on itself). Guards live inside one runtime operation and
//!   are never held across a safepoint, so a stopped world holds no locks.
//! - **Lock order.** A thread holding guards may only lock objects of a
//!   strictly higher [`LockLevel`]: iterators, then arrays, objects, maps
//!   and sets, then classes, then cells and accessors (leaves). That order makes
//!   deadlock impossible; code that needs two objects of one level (such as
//!   `a.concat(b)`) copies out of the first before locking the second.
//!   Debug builds check the order on every `lock` and panic on a breach.
//! - The collector reads bodies under their lock, one at a time (it may
//!   mark beside running mutators); [`Mut::get_stopped`] is for bodies no
//!   other thread can see yet. `MutRef::deref_mut` is the write barrier
//!   of concurrent marking (see `vm::heap`).

use super::atom::Atom;
use super::value::Value;
use crate::bytecode::FuncProto;
use hashbrown::HashTable;
use std::cell::UnsafeCell;
use std::hash::{Hash, Hasher};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, Ordering};
use std::sync::Arc;

/// Interior-mutable state of a heap object (see "Locking" above).
pub struct Mut<T> {
    /// Tag of the thread holding the lock, or 0.
    owner: AtomicU32,
    /// The barrier epoch (`vm::heap`, "The write barrier") in which this
    /// body last passed the barrier, or was made: a change needs no
    /// barrier while the thread's epoch is this one. An odd epoch is a
    /// marking cycle (the values the body held when marking began were all
    /// shaded, by the write barrier or by the marker); an even one is a
    /// generational mutator epoch (the body was made in it, so it is young,
    /// or it is in the remembered set). Read and written only under the
    /// lock. Sits in what was padding after `owner`, so a `Mut` is no
    /// larger for it.
    scanned: AtomicU32,
    cell: UnsafeCell<T>,
}

// SAFETY: every access goes through `lock` (mutual exclusion between
// threads once a second mutator exists) or `get_stopped` (world stopped).
unsafe impl<T: Send> Sync for Mut<T> {}
unsafe impl<T: Send> Send for Mut<T> {}

/// Where a body sits in the lock order (see "Locking" above): a thread may
/// only lock levels strictly above every level it holds.
pub trait LockLevel {
    const LEVEL: u8;
    /// Every value the body references (what the collector traces, and
    /// what the write barrier shades before the body's first change in a
    /// marking cycle).
    fn values(&self, f: &mut dyn FnMut(Value));
    /// Whether the body can hold values at all (a byte buffer cannot, so
    /// the generational barrier never remembers it).
    const HOLDS_VALUES: bool = true;
}

impl LockLevel for IterState {
    const LEVEL: u8 = 0;
    fn values(&self, f: &mut dyn FnMut(Value)) {
        match self {
            IterState::Array { arr, .. } | IterState::Indexed { arr, .. } => f(*arr),
            IterState::Channel { ch, .. } => f(*ch),
            IterState::Str { s, .. } => f(*s),
            IterState::Map { map, .. } => f(*map),
            IterState::Host { obj } => f(*obj),
            IterState::Gen(g) => {
                f(g.closure);
                for &v in &g.regs {
                    f(v);
                }
            }
            IterState::GenLoop { gen, send, .. } => {
                f(*gen);
                f(*send);
            }
            IterState::User { src, iter, next, send, .. } => {
                for v in [*src, *iter, *next, *send] {
                    f(v);
                }
            }
        }
    }
}
impl LockLevel for Vec<Value> {
    const LEVEL: u8 = 1;
    fn values(&self, f: &mut dyn FnMut(Value)) {
        for &v in self.iter() {
            f(v);
        }
    }
}
impl LockLevel for ObjectData {
    const LEVEL: u8 = 1;
    fn values(&self, f: &mut dyn FnMut(Value)) {
        f(self.class);
        for &v in self.props.vals() {
            f(v);
        }
    }
}
impl LockLevel for MapData {
    const LEVEL: u8 = 1;
    fn values(&self, f: &mut dyn FnMut(Value)) {
        for (k, v) in self.iter() {
            f(k);
            f(v);
        }
    }
}
impl LockLevel for ClassData {
    const LEVEL: u8 = 2;
    fn values(&self, f: &mut dyn FnMut(Value)) {
        for v in [self.parent, self.ctor, self.field_init, self.call] {
            f(v);
        }
        for &v in self.proto_props.vals().iter().chain(self.statics.vals().iter()) {
            f(v);
        }
    }
}
impl LockLevel for Value {
    const LEVEL: u8 = 3;
    fn values(&self, f: &mut dyn FnMut(Value)) {
        f(*self);
    }
}
impl LockLevel for Accessor {
    const LEVEL: u8 = 3;
    fn values(&self, f: &mut dyn FnMut(Value)) {
        f(self.get);
        f(self.set);
    }
}
impl LockLevel for Box<[u8]> {
    const LEVEL: u8 = 3;
    const HOLDS_VALUES: bool = false;
    fn values(&self, _: &mut dyn FnMut(Value)) {}
}

static PARALLEL_MUTATORS: AtomicBool = AtomicBool::new(false);

/// From now on, every [`Mut::lock`] in this process really locks. Must be
/// called before a second thread can touch objects the caller's thread
/// touches, and while the caller holds no guard.
pub fn enable_parallel_mutators() {
    PARALLEL_MUTATORS.store(true, Ordering::SeqCst);
}

/// Whether [`enable_parallel_mutators`] was called: another worker may be
/// running right now.
#[inline]
pub fn parallel_mutators() -> bool {
    PARALLEL_MUTATORS.load(Ordering::Relaxed)
}

/// A nonzero tag per thread, for lock ownership.
fn thread_tag() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    thread_local! {
        static TAG: u32 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    TAG.with(|t| *t)
}

impl<T: LockLevel> Mut<T> {
    /// A new body, stamped with this thread's barrier epoch: made now, it
    /// is young (generational mode) or black (made while marking), so its
    /// changes in this epoch need no barrier. A body stamped with another
    /// heap's or an old epoch merely takes the barrier's slow path once.
    pub fn new(v: T) -> Mut<T> {
        Mut {
            owner: AtomicU32::new(0),
            scanned: AtomicU32::new(super::heap::barrier_epoch()),
            cell: UnsafeCell::new(v),
        }
    }

    /// The write barrier's slow path (see "The write barrier" in
    /// `vm::heap`), before the first change of this body in barrier epoch
    /// `epoch`. Marking (odd): shade every value it holds (the deletion
    /// barrier). Between cycles in generational mode (even): the body was
    /// made before the last cycle ended, so it is old, and it goes into the
    /// remembered set, which the next minor cycle traces. The caller holds
    /// the lock.
    #[cold]
    #[inline(never)]
    fn shade_before_write(&self, epoch: u32) {
        if epoch & 1 == 1 {
            // SAFETY: the caller's guard stands for exclusive access.
            let v = unsafe { &*self.cell.get() };
            v.values(&mut |x| super::heap::shade(x));
        }
        // Between cycles the body is old; while a minor cycle marks, it
        // existed when the cycle began and is written, so reachable, so it
        // will be marked (old) when the cycle ends, and what is stored now
        // may be young then (made during the cycle). Either way the next
        // minor cycle must trace it.
        if T::HOLDS_VALUES && super::heap::remembers(epoch) {
            super::heap::remember_body(self as *const Self as usize, trace_remembered::<T>);
        }
        self.scanned.store(epoch, Ordering::Relaxed);
    }

    /// The marker's read of a body it traces, with the guard held: the
    /// values it holds are passed to `f` unless the write barrier already
    /// shaded them in this cycle (`epoch`; 0: a stopped-world mark, which
    /// always reads). In a cycle of the non-generational collector no
    /// barrier is needed after this until the cycle ends.
    ///
    /// In a generational cycle (minor or full) the body is not stamped: its
    /// first change after this read must still pass the barrier, which
    /// remembers it. The body is marked now, so it may be old when the
    /// cycle ends, and what that
    /// change stores may be an object made during the cycle, which the
    /// cycle neither marks nor sweeps: young, and reachable only through
    /// this body, which the next minor cycle must therefore trace. (The
    /// deletion barrier's shading on that change is redundant here: the
    /// values were just read. It costs one pass over the body, once.)
    pub fn trace_locked(guard: &MutRef<'_, T>, epoch: u32, f: &mut dyn FnMut(Value)) {
        let m = guard.m;
        if epoch != 0 && m.scanned.load(Ordering::Relaxed) == epoch {
            return;
        }
        // SAFETY: the guard stands for exclusive access.
        unsafe { &*m.cell.get() }.values(f);
        if epoch != 0 && !super::heap::remembers(epoch) {
            m.scanned.store(epoch, Ordering::Relaxed);
        }
    }

    /// Marks the body as needing no barrier in cycle `epoch` (an object
    /// allocated during marking: it is black, and what is stored in it
    /// was reachable anyway).
    pub fn set_scanned(&self, epoch: u32) {
        self.scanned.store(epoch, Ordering::Relaxed);
    }

    /// Exclusive access for one operation (see "Locking" above).
    #[inline(always)]
    pub fn lock(&self) -> MutRef<'_, T> {
        let locked = PARALLEL_MUTATORS.load(Ordering::Relaxed) && self.acquire();
        #[cfg(debug_assertions)]
        lock_order::enter(self as *const Self as usize, T::LEVEL);
        MutRef { m: self, locked }
    }

    /// Takes the lock; false when this thread holds it already.
    fn acquire(&self) -> bool {
        let me = thread_tag();
        if self.owner.load(Ordering::Relaxed) == me {
            return false;
        }
        let mut spins = 0u32;
        // Holders keep the lock for one operation, so spinning is short;
        // yield if the holder's thread was descheduled.
        while self.owner.compare_exchange_weak(0, me, Ordering::Acquire, Ordering::Relaxed).is_err() {
            spins += 1;
            if spins < 100 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        true
    }

    /// Access without locking.
    ///
    /// # Safety
    /// No other thread may access the body meanwhile: the caller is the
    /// collector with every mutator stopped, or the object is not yet
    /// visible to any other thread.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn get_stopped(&self) -> &mut T {
        unsafe { &mut *self.cell.get() }
    }
}

/// Traces a remembered body (`p`: a `Mut<T>` of an old object, see
/// `vm::heap`, "Generational mode") for a minor cycle: its values as they
/// are now, read under its lock, unless the deletion barrier already shaded
/// them in this cycle.
///
/// # Safety
/// `p` points to a live `Mut<T>`: it was remembered after the last cycle
/// ended by a mutator that reached it, so its object was reachable then and
/// no sweep frees it before this cycle ends.
pub(crate) unsafe fn trace_remembered<T: LockLevel>(p: usize, epoch: u32, f: &mut dyn FnMut(Value)) {
    let m = unsafe { &*(p as *const Mut<T>) };
    let g = m.lock();
    Mut::trace_locked(&g, epoch, f);
}

/// Guard of [`Mut::lock`]; unlocks when dropped.
pub struct MutRef<'a, T: LockLevel> {
    m: &'a Mut<T>,
    locked: bool,
}

impl<T: LockLevel> std::ops::Deref for MutRef<'_, T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        // SAFETY: the guard stands for exclusive access (see "Locking").
        unsafe { &*self.m.cell.get() }
    }
}

impl<T: LockLevel> std::ops::DerefMut for MutRef<'_, T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T {
        // The write barrier: every change of a body goes through here (see
        // `vm::heap`, "The write barrier"). Without a barrier (not marking,
        // generational mode off): one thread-local load and a branch; with
        // one, the body's epoch compared too (equal for a young body).
        let epoch = super::heap::barrier_epoch();
        if epoch != 0 && self.m.scanned.load(Ordering::Relaxed) != epoch {
            self.m.shade_before_write(epoch);
        }
        // SAFETY: as for `deref`.
        unsafe { &mut *self.m.cell.get() }
    }
}

impl<T: LockLevel> Drop for MutRef<'_, T> {
    #[inline(always)]
    fn drop(&mut self) {
        #[cfg(debug_assertions)]
        lock_order::exit(self.m as *const Mut<T> as usize);
        if self.locked {
            self.m.owner.store(0, Ordering::Release);
        }
    }
}

/// Debug-build check of the lock order, on every `lock` whether or not a
/// real lock is taken, so single-threaded test runs find breaches too.
#[cfg(debug_assertions)]
mod lock_order {
    use std::cell::RefCell;

    thread_local! {
        static HELD: RefCell<Vec<(usize, u8)>> = const { RefCell::new(Vec::new()) };
    }

    pub fn enter(addr: usize, level: u8) {
        HELD.with(|h| {
            let mut h = h.borrow_mut();
            if !h.iter().any(|&(a, _)| a == addr) {
                if let Some(&(_, held)) = h.iter().find(|&&(_, l)| l >= level) {
                    panic!("lock order breach: locking a level-{level} object while holding level {held}");
                }
            }
            h.push((addr, level));
        });
    }

    pub fn exit(addr: usize) {
        let _ = HELD.try_with(|h| {
            let mut h = h.borrow_mut();
            if let Some(i) = h.iter().rposition(|&(a, _)| a == addr) {
                h.remove(i);
            }
        });
    }
}

pub struct Header {
    /// Set by the marker during a collection; cleared by the sweeper.
    pub marked: AtomicBool,
    /// `Object.freeze` was applied to an array (plain objects keep the
    /// flag in `ObjectData`).
    pub frozen: AtomicBool,
    /// Generational state (`Header::OLD`, `SURVIVOR`, `TENURE`; see
    /// "Generational mode" in `vm::heap`); 0 outside generational mode.
    /// Written by markers (`fetch_or`) while a cycle marks and by the
    /// sweeper holding the object's segment while it sweeps, never both
    /// at once.
    pub gen: AtomicU8,
    /// The minor marking cycle (`vm::heap` epoch) during which the object
    /// was made, or 0: such an object is neither marked nor traced by that
    /// cycle, and stays young (see "Generational mode" in `vm::heap`).
    /// Written once, before the object is published.
    pub born: u32,
}

impl Header {
    /// Promoted: survived the cycles that make an object old, so minor
    /// cycles neither trace nor sweep it (its mark stays set until a full
    /// cycle's sweep clears both).
    pub const OLD: u8 = 1;
    /// Young, but survived one minor cycle (its mark was cleared again):
    /// marked by the next one, it is promoted.
    pub const SURVIVOR: u8 = 2;
    /// Reached, in the minor cycle that is marking, from an object that
    /// will be old when it ends: promoted with it, whatever its age, so
    /// that no old object points to a young one it was not remembered
    /// for.
    pub const TENURE: u8 = 4;
    /// Marked with any of these, an object is old when the cycle ends.
    pub const PROMOTES: u8 = Self::OLD | Self::SURVIVOR | Self::TENURE;

    pub fn new(marked: bool, born: u32) -> Header {
        Header { marked: marked.into(), frozen: false.into(), gen: AtomicU8::new(0), born }
    }
}

impl Obj {
    pub fn is_frozen_array(&self) -> bool {
        self.header.frozen.load(Ordering::Relaxed)
    }
}

pub struct Obj {
    pub header: Header,
    pub body: Body,
}

pub enum Body {
    Str(JsStr),
    Array(ArrayBody),
    /// Plain objects and class instances.
    Object(Mut<ObjectData>),
    Function(Function),
    /// Boxed: a class's tables are the largest body, and every other
    /// object (a string, an array) would pay for their size in its own
    /// box (see the size assertion at the end of this file).
    Class(Box<Mut<ClassData>>),
    /// A captured variable (see bytecode "Captured variables").
    Cell(Mut<Value>),
    Map(Mut<MapData>),
    /// A Set is a map whose values are unused.
    Set(Mut<MapData>),
    /// An accessor property's getter/setter pair (never visible to scripts).
    Accessor(Mut<Accessor>),
    Iter(Mut<IterState>),
    /// A task (`Task<T>`); see `sync::task`.
    Task(Arc<crate::sync::TaskCell>),
    /// A promise (`Promise<T>`).
    Promise(crate::sync::PromiseState),
    /// A channel (`Channel<T>`, `after(ms)`, `every(ms)`); see `sync::channel`.
    Channel(Arc<crate::sync::channel::ChannelCell>),
    /// `Mutex`, `WaitGroup`, `Semaphore`; see `sync::mutex`.
    Mutex(Arc<crate::sync::mutex::MutexCell>),
    WaitGroup(Arc<crate::sync::mutex::WaitGroupCell>),
    Semaphore(Arc<crate::sync::mutex::SemaphoreCell>),
    /// A `Uint8Array`.
    Bytes(Bytes),
    /// An object backed by Rust state (a socket, an open file, a child
    /// process); see `vm::host`.
    Host(super::host::HostObj),
}

impl Body {
    /// How many variants there are: [`Body::tag`] is below this.
    pub const TAGS: usize = 18;
    pub const STR_TAG: u8 = 0;
    pub const ARRAY_TAG: u8 = 1;
    pub const OBJECT_TAG: u8 = 2;
    pub const FUNCTION_TAG: u8 = 3;
    pub const CLASS_TAG: u8 = 4;
    pub const CELL_TAG: u8 = 5;
    pub const MAP_TAG: u8 = 6;
    pub const SET_TAG: u8 = 7;
    pub const ACCESSOR_TAG: u8 = 8;
    pub const ITER_TAG: u8 = 9;
    pub const TASK_TAG: u8 = 10;
    pub const PROMISE_TAG: u8 = 11;
    pub const CHANNEL_TAG: u8 = 12;
    pub const MUTEX_TAG: u8 = 13;
    pub const WAIT_GROUP_TAG: u8 = 14;
    pub const SEMAPHORE_TAG: u8 = 15;
    pub const BYTES_TAG: u8 = 16;
    pub const HOST_TAG: u8 = 17;

    /// A small number naming the variant, for caches keyed on the kind of
    /// a value (see `Methods::native_method`). The match compiles to a
    /// load of the discriminant.
    #[inline(always)]
    pub fn tag(&self) -> u8 {
        match self {
            Body::Str(_) => Self::STR_TAG,
            Body::Array(_) => Self::ARRAY_TAG,
            Body::Object(_) => Self::OBJECT_TAG,
            Body::Function(_) => Self::FUNCTION_TAG,
            Body::Class(_) => Self::CLASS_TAG,
            Body::Cell(_) => Self::CELL_TAG,
            Body::Map(_) => Self::MAP_TAG,
            Body::Set(_) => Self::SET_TAG,
            Body::Accessor(_) => Self::ACCESSOR_TAG,
            Body::Iter(_) => Self::ITER_TAG,
            Body::Task(_) => Self::TASK_TAG,
            Body::Promise(_) => Self::PROMISE_TAG,
            Body::Channel(_) => Self::CHANNEL_TAG,
            Body::Mutex(_) => Self::MUTEX_TAG,
            Body::WaitGroup(_) => Self::WAIT_GROUP_TAG,
            Body::Semaphore(_) => Self::SEMAPHORE_TAG,
            Body::Bytes(_) => Self::BYTES_TAG,
            Body::Host(_) => Self::HOST_TAG,
        }
    }
}

impl Obj {
    pub fn is_empty_string(&self) -> bool {
        matches!(&self.body, Body::Str(s) if s.s.is_empty())
    }

    pub fn as_str(&self) -> Option<&JsStr> {
        match &self.body {
            Body::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// A `Uint8Array`: the view `offset..offset + len` of a byte buffer. Views
/// made by `subarray` share the buffer; a buffer never changes size, so a
/// view's range stays valid. Each byte operation locks the buffer (a leaf
/// of the lock order) for its duration.
pub struct Bytes {
    pub buf: Arc<Mut<Box<[u8]>>>,
    pub offset: usize,
    pub len: usize,
}

impl Bytes {
    /// A view of all of a new buffer holding `data`.
    pub fn new(data: Vec<u8>) -> Bytes {
        let len = data.len();
        Bytes { buf: Arc::new(Mut::new(data.into_boxed_slice())), offset: 0, len }
    }

    /// Runs `f` on this view's bytes.
    pub fn with<R>(&self, f: impl FnOnce(&mut [u8]) -> R) -> R {
        let mut g = self.buf.lock();
        f(&mut g[self.offset..self.offset + self.len])
    }

    /// A copy of this view's bytes.
    pub fn to_vec(&self) -> Vec<u8> {
        self.with(|b| b.to_vec())
    }
}

/// Most bytes a string keeps inside its object instead of in a buffer of
/// its own. Words, keys, numbers and about half the lines of a text file
/// are short: one allocation, not two. As large as leaves a `Body` its own
/// tag word (see the assertion on `JsStr` below): 62 bytes would still fit
/// in an 80-byte object, but only by folding the body's tag into the
/// string's (a niche), and every match on a body of any kind then decodes
/// it (measured: 1.6% more instructions on a promise round trip).
pub const INLINE_STR: usize = 54;

/// The text of a [`JsStr`]: short strings inline, others boxed, and a
/// string holding a lone surrogate as WTF-8 beside its lossy text. Derefs
/// to `str` (the lossy text for an ill-formed string: what engine text,
/// messages and paths want), so it reads like the `Box<str>` it replaces;
/// [`StrText::wtf8`] is the exact value.
pub enum StrText {
    Inline {
        len: u8,
        buf: [u8; INLINE_STR],
    },
    Heap(Box<str>),
    /// The first `len` bytes of a buffer that later strings may extend: the
    /// result of appending to a long string (see [`GrowBuf`]).
    Grown(Grown),
    /// Ill-formed: holds at least one lone surrogate.
    Wtf8(Box<IllFormed>),
}

/// A string made by appending: its bytes are the first `len` of `buf`.
pub struct Grown {
    buf: Arc<GrowBuf>,
    len: usize,
}

impl Grown {
    #[inline]
    fn bytes(&self) -> &[u8] {
        self.buf.prefix(self.len)
    }
}

/// The buffer of a string built by appending to it (`s += piece` in a
/// loop), shared by the strings of the chain.
///
/// Copying the whole string at every step made such a loop quadratic: a
/// string of 200,000 characters built one at a time copied 20 GB, and every
/// step's copy was a block of a new size for the allocator (and for the
/// collector to free). Instead `s + piece`, where `s` is the longest string
/// over its buffer and the buffer has room, writes `piece` after `s`'s bytes
/// in place and makes a string of the longer prefix; without room, the
/// result gets a new buffer half as large again as itself. The strings of
/// a chain share one buffer, so building a string of n bytes copies each
/// byte about three times, as a `Vec` does.
///
/// Invariants, which make the sharing safe across threads:
/// - `claimed` only grows, and bytes below it are never written again: a
///   string over the buffer has `len <= claimed`, and reads only
///   `..len`, which were all written before that string existed.
/// - Only the thread whose compare-and-swap moved `claimed` from `len` to
///   `len + n` writes bytes `len..len + n`, once; no string reads them
///   until that thread has made the string of the longer prefix and
///   handed it on (the usual publication of a new object).
/// - Every prefix a string covers is UTF-8: each append writes a whole
///   `str`.
pub struct GrowBuf {
    claimed: std::sync::atomic::AtomicUsize,
    bytes: Box<[UnsafeCell<std::mem::MaybeUninit<u8>>]>,
}

// SAFETY: see the invariants above: writes go only to bytes no string
// reads yet, by the one thread that claimed them.
unsafe impl Sync for GrowBuf {}
unsafe impl Send for GrowBuf {}

impl GrowBuf {
    /// A buffer of `cap` bytes holding `x` then `y`, or `None` if the
    /// allocator refuses it.
    fn new(x: &[u8], y: &[u8], cap: usize) -> Option<GrowBuf> {
        let n = x.len() + y.len();
        debug_assert!(cap >= n);
        let mut v: Vec<UnsafeCell<std::mem::MaybeUninit<u8>>> = Vec::new();
        v.try_reserve_exact(cap).ok()?;
        // SAFETY: the elements are `MaybeUninit`, which need no
        // initialisation; `cap` were reserved.
        unsafe { v.set_len(cap) };
        let buf = GrowBuf { claimed: std::sync::atomic::AtomicUsize::new(n), bytes: v.into_boxed_slice() };
        // SAFETY: nothing else can see the buffer yet; both ranges are in it.
        unsafe {
            buf.write(0, x);
            buf.write(x.len(), y);
        }
        Some(buf)
    }

    /// Writes `src` at `at`.
    ///
    /// # Safety
    /// `at + src.len()` is within the buffer and this thread owns those
    /// bytes: it made the buffer, or claimed them in [`GrowBuf::append`].
    #[inline]
    unsafe fn write(&self, at: usize, src: &[u8]) {
        debug_assert!(at + src.len() <= self.bytes.len());
        // SAFETY: the caller's promise; `UnsafeCell` makes the bytes
        // writable through a shared reference.
        unsafe {
            let dst = UnsafeCell::raw_get(self.bytes.as_ptr().add(at)).cast::<u8>();
            std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len());
        }
    }

    /// Writes `src` after the string of the first `len` bytes, if that
    /// string is the longest over the buffer and `src` fits; whether it did.
    #[inline]
    fn append(&self, len: usize, src: &[u8]) -> bool {
        if self.bytes.len() - len < src.len() {
            return false;
        }
        // Relaxed: the swap only decides which thread owns the bytes; what
        // they hold reaches readers with the string made after the write.
        if self.claimed.compare_exchange(len, len + src.len(), Ordering::Relaxed, Ordering::Relaxed).is_err() {
            return false;
        }
        // SAFETY: the swap gave this thread `len..len + src.len()`, which
        // the check above put within the buffer.
        unsafe { self.write(len, src) };
        true
    }

    /// The first `len` bytes, all written (`len` is a string's length).
    #[inline]
    fn prefix(&self, len: usize) -> &[u8] {
        debug_assert!(len <= self.claimed.load(Ordering::Relaxed));
        // SAFETY: bytes below a string's length were written before the
        // string was made and are never written again (the invariants).
        unsafe { std::slice::from_raw_parts(self.bytes.as_ptr().cast::<u8>(), len) }
    }
}

/// An ill-formed string: its WTF-8 bytes and, of the same length and with
/// the same byte offsets, its text with U+FFFD for each lone surrogate.
pub struct IllFormed {
    pub bytes: Box<[u8]>,
    pub lossy: Box<str>,
}

/// Copies `src` (at most [`INLINE_STR`] bytes) to the start of an inline
/// string's buffer with a few fixed-size moves, two of them overlapping,
/// instead of a call to `memcpy` (whose call and size dispatch were the
/// larger part of copying a word of a few bytes).
#[inline(always)]
pub fn copy_short(buf: &mut [u8; INLINE_STR], src: &[u8]) {
    let n = src.len();
    assert!(n <= INLINE_STR);
    if n >= 16 {
        // Whole 16-byte blocks, then the last 16 bytes (overlapping the
        // block before unless `n` is a multiple of 16).
        let mut i = 0;
        while i + 16 < n {
            buf[i..i + 16].copy_from_slice(&src[i..i + 16]);
            i += 16;
        }
        buf[n - 16..n].copy_from_slice(&src[n - 16..]);
    } else if n >= 8 {
        buf[..8].copy_from_slice(&src[..8]);
        buf[n - 8..n].copy_from_slice(&src[n - 8..]);
    } else if n >= 4 {
        buf[..4].copy_from_slice(&src[..4]);
        buf[n - 4..n].copy_from_slice(&src[n - 4..]);
    } else if n > 0 {
        // 1, 2 or 3 bytes: the first, the middle and the last.
        buf[0] = src[0];
        buf[n / 2] = src[n / 2];
        buf[n - 1] = src[n - 1];
    }
}

impl StrText {
    #[inline]
    pub fn copy_of(s: &str) -> StrText {
        if s.len() <= INLINE_STR {
            let mut buf = [0; INLINE_STR];
            copy_short(&mut buf, s.as_bytes());
            StrText::Inline { len: s.len() as u8, buf }
        } else {
            StrText::Heap(s.into())
        }
    }

    #[inline]
    pub fn from_box(s: Box<str>) -> StrText {
        if s.len() <= INLINE_STR {
            StrText::copy_of(&s)
        } else {
            StrText::Heap(s)
        }
    }

    /// The WTF-8 bytes (the UTF-8 of a well-formed string).
    #[inline]
    pub fn wtf8(&self) -> &[u8] {
        match self {
            StrText::Inline { len, buf } => &buf[..*len as usize],
            StrText::Heap(b) => b.as_bytes(),
            StrText::Grown(g) => g.bytes(),
            StrText::Wtf8(w) => &w.bytes,
        }
    }

    /// Bytes held outside the object (for the collector's accounting). A
    /// string of a shared buffer counts its own length: the strings of a
    /// chain that stay reachable are usually its last, whose buffer is at
    /// most half as large again.
    pub fn heap_bytes(&self) -> usize {
        match self {
            StrText::Inline { .. } => 0,
            StrText::Heap(b) => b.len(),
            StrText::Grown(g) => g.len,
            StrText::Wtf8(w) => 2 * w.bytes.len() + std::mem::size_of::<IllFormed>(),
        }
    }
}

impl std::ops::Deref for StrText {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        match self {
            // SAFETY: `buf[..len]` was copied from a `str` whole.
            StrText::Inline { len, buf } => unsafe { std::str::from_utf8_unchecked(&buf[..*len as usize]) },
            StrText::Heap(b) => b,
            // SAFETY: every prefix a string covers is UTF-8 (`GrowBuf`).
            StrText::Grown(g) => unsafe { std::str::from_utf8_unchecked(g.bytes()) },
            StrText::Wtf8(w) => &w.lossy,
        }
    }
}

impl From<StrText> for Box<str> {
    fn from(t: StrText) -> Box<str> {
        match t {
            StrText::Heap(b) => b,
            StrText::Wtf8(w) => w.lossy,
            StrText::Inline { .. } | StrText::Grown(_) => (*t).into(),
        }
    }
}

/// Equality and hashing see the exact value (WTF-8 has one form per
/// string), so two different lone surrogates are different Map keys.
impl PartialEq for StrText {
    #[inline]
    fn eq(&self, other: &StrText) -> bool {
        self.wtf8() == other.wtf8()
    }
}

impl Eq for StrText {}

impl Hash for StrText {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write(self.wtf8());
        state.write_u8(0xFF);
    }
}

impl std::fmt::Display for StrText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self)
    }
}

impl std::fmt::Debug for StrText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

/// An array: its elements, and for the arrays `RegExp.prototype.exec`
/// and `String.prototype.match` return, the named properties JS gives
/// them (`index`, `input`, `groups`, `indices`), fixed when it is made.
/// Derefs to the elements so that array code never sees the difference.
pub struct ArrayBody {
    pub items: Mut<Vec<Value>>,
    /// Read-only named properties (traced by the collector).
    pub extras: Option<Box<[(super::atom::Atom, Value)]>>,
}

impl std::ops::Deref for ArrayBody {
    type Target = Mut<Vec<Value>>;
    #[inline(always)]
    fn deref(&self) -> &Mut<Vec<Value>> {
        &self.items
    }
}

impl ArrayBody {
    /// The named property `key`, if this array has one.
    pub fn extra(&self, key: super::atom::Atom) -> Option<Value> {
        self.extras.as_ref()?.iter().find(|&&(k, _)| k == key).map(|&(_, v)| v)
    }
}

/// An immutable string with JavaScript (UTF-16) length semantics: UTF-8,
/// or WTF-8 when it holds a lone surrogate (see `crate::wtf8`).
pub struct JsStr {
    pub s: StrText,
    /// Length in UTF-16 code units.
    pub utf16_len: u32,
    /// The property key the string names, once looked up.
    pub key: KeyCache,
}

/// The property key a string names (`ops::key_of`), kept in the string
/// after the first look-up so that `counts[word]` with the same string
/// interns it once, not at every access (a hash of its text and a read
/// lock each time). Sits in what was padding: a string is no larger for
/// it.
///
/// Shared by every thread that reads the string, without a lock: the
/// value is the atom's number plus one (0: not looked up yet), and is a
/// function of the string's text, which never changes, and of the
/// interner, which never forgets a name. So every thread that stores it
/// stores the same number, and a thread that reads 0 just looks the key up.
pub struct KeyCache(AtomicU32);

impl KeyCache {
    pub const fn new() -> KeyCache {
        KeyCache(AtomicU32::new(0))
    }

    #[inline(always)]
    pub fn get(&self) -> Option<super::atom::Atom> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            n => Some(super::atom::Atom(n - 1)),
        }
    }

    #[inline]
    pub fn set(&self, key: super::atom::Atom) {
        if let Some(n) = key.0.checked_add(1) {
            self.0.store(n, Ordering::Relaxed);
        }
    }
}

impl Default for KeyCache {
    fn default() -> KeyCache {
        KeyCache::new()
    }
}

impl JsStr {
    pub fn new(s: Box<str>) -> JsStr {
        let utf16_len = if s.is_ascii() { s.len() } else { s.encode_utf16().count() } as u32;
        JsStr { s: StrText::from_box(s), utf16_len, key: KeyCache::new() }
    }

    /// The string `s`, copied: a short one into the object, so that no
    /// buffer is allocated (and freed) on the way.
    pub fn copy_of(s: &str) -> JsStr {
        let utf16_len = if s.is_ascii() { s.len() } else { s.encode_utf16().count() } as u32;
        JsStr { s: StrText::copy_of(s), utf16_len, key: KeyCache::new() }
    }

    /// A string the caller knows to be ASCII (a piece of an ASCII string,
    /// bytes checked by the caller): skips the scan `new` makes.
    pub fn ascii(s: Box<str>) -> JsStr {
        debug_assert!(s.is_ascii());
        JsStr { utf16_len: s.len() as u32, s: StrText::from_box(s), key: KeyCache::new() }
    }

    /// [`JsStr::ascii`] of a borrowed piece: a short one is copied into
    /// the object, with no buffer allocated at all.
    pub fn ascii_from(s: &str) -> JsStr {
        debug_assert!(s.is_ascii());
        JsStr { utf16_len: s.len() as u32, s: StrText::copy_of(s), key: KeyCache::new() }
    }

    /// The string of WTF-8 bytes `b` (which the caller made with
    /// `crate::wtf8`'s rules: a pair is never two 3-byte sequences).
    pub fn from_wtf8(b: Vec<u8>) -> JsStr {
        match String::from_utf8(b) {
            Ok(s) => JsStr::new(s.into_boxed_str()),
            Err(e) => {
                let bytes = e.into_bytes();
                let utf16_len = crate::wtf8::utf16_len(&bytes) as u32;
                let lossy = crate::wtf8::lossy(&bytes).into_boxed_str();
                JsStr {
                    s: StrText::Wtf8(Box::new(IllFormed { bytes: bytes.into_boxed_slice(), lossy })),
                    utf16_len,
                    key: KeyCache::new(),
                }
            }
        }
    }

    /// `a + b` (the caller checked the length limit), and the bytes it
    /// allocated outside the new string's object (for the collector's
    /// count). Both lengths are known, so nothing is scanned; a short
    /// result is built in place, a long one after `a` in `a`'s buffer
    /// (counting `b`'s bytes) or in a new one (counting all of it; see
    /// [`GrowBuf`]).
    pub fn append(a: &JsStr, b: &JsStr) -> super::ops::OpResult<(JsStr, usize)> {
        if !a.is_well_formed() || !b.is_well_formed() {
            let mut v = a.wtf8().to_vec();
            crate::wtf8::push(&mut v, b.wtf8());
            let js = JsStr::from_wtf8(v);
            let bytes = js.s.heap_bytes();
            return Ok((js, bytes));
        }
        let (x, y) = (a.s.as_bytes(), b.s.as_bytes());
        let n = x.len() + y.len();
        let utf16_len = a.utf16_len + b.utf16_len;
        if n <= INLINE_STR {
            let mut buf = [0; INLINE_STR];
            buf[..x.len()].copy_from_slice(x);
            buf[x.len()..n].copy_from_slice(y);
            return Ok((JsStr { s: StrText::Inline { len: n as u8, buf }, utf16_len, key: KeyCache::new() }, 0));
        }
        if let StrText::Grown(g) = &a.s {
            if g.buf.append(g.len, y) {
                let s = StrText::Grown(Grown { buf: g.buf.clone(), len: n });
                return Ok((JsStr { s, utf16_len, key: KeyCache::new() }, y.len()));
            }
        }
        let cap = if matches!(a.s, StrText::Inline { .. }) {
            // A long string from a short one (`"key: " + text`): most are
            // never appended to, so no room is left.
            n
        } else {
            // Appending to a long string: likely the next step of a loop.
            n.saturating_add(n / 2)
        };
        super::heap::check_growth(cap)?;
        let buf = GrowBuf::new(x, y, cap).ok_or_else(super::strbuf::too_long)?;
        Ok((JsStr { s: StrText::Grown(Grown { buf: Arc::new(buf), len: n }), utf16_len, key: KeyCache::new() }, cap))
    }

    /// The string of UTF-16 code units `u`.
    pub fn from_units(u: &[u16]) -> JsStr {
        JsStr::from_wtf8(crate::wtf8::from_units(u))
    }

    /// The exact value as WTF-8 (UTF-8 when well-formed).
    #[inline]
    pub fn wtf8(&self) -> &[u8] {
        self.s.wtf8()
    }

    /// No lone surrogate (`isWellFormed`): the bytes are UTF-8.
    #[inline]
    pub fn is_well_formed(&self) -> bool {
        !matches!(self.s, StrText::Wtf8(_))
    }

    pub fn is_ascii(&self) -> bool {
        self.s.len() == self.utf16_len as usize
    }

    /// The UTF-16 code units.
    pub fn units(&self) -> Vec<u16> {
        if self.is_well_formed() {
            self.s.encode_utf16().collect()
        } else {
            crate::wtf8::units(self.wtf8()).collect()
        }
    }

    /// The UTF-16 code unit at `i`.
    pub fn code_unit(&self, i: usize) -> Option<u16> {
        if self.is_ascii() {
            self.s.as_bytes().get(i).map(|&b| b as u16)
        } else if self.is_well_formed() {
            self.s.encode_utf16().nth(i)
        } else {
            crate::wtf8::units(self.wtf8()).nth(i)
        }
    }
}

/// Hasher for atom keys: atoms are small dense integers, so a multiply
/// spreads them well enough, at a fraction of SipHash's cost.
#[derive(Default, Clone, Copy)]
pub struct AtomHasher(u64);

impl Hasher for AtomHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

pub use super::shape::PropMap;

#[derive(Clone)]
pub struct ObjectData {
    /// The instance's class, or undefined for a plain object.
    pub class: Value,
    pub props: PropMap,
    pub frozen: bool,
}

pub type NativeFn = fn(&mut super::native::NativeCtx, Value, &[Value]) -> Result<Value, Value>;

pub enum Function {
    Closure(Closure),
    Native(Native),
    /// `f.bind(thisArg, ...args)`: calling it calls `target` with `this`
    /// and `args` before the call's own arguments. The interpreter unpacks
    /// it at the call (no built-in calls back into Raya).
    Bound(Bound),
}

pub struct Bound {
    pub target: Value,
    pub this: Value,
    pub args: Box<[Value]>,
    /// `"bound " + target.name`, fixed when bound (as in JS).
    pub name: String,
    /// `max(0, target.length - args.length)`.
    pub length: u32,
}

pub struct Closure {
    pub proto: Arc<super::link::RtProto>,
    /// Captured cells (or values, for bindings captured by value), in
    /// `FuncProto::captures` order.
    pub upvals: Upvals,
    /// The class a method belongs to (for `super`), or undefined.
    pub home: Mut<Value>,
}

/// A closure's upvalues. Most closures that capture anything capture one
/// binding (a callback's one variable, an executor's loop counter): that one
/// is held in the closure's own object, so making such a closure is one
/// allocation, not two (and one block less to sweep and free).
pub enum Upvals {
    One(Value),
    /// None (an empty box allocates nothing) or several.
    Many(Box<[Value]>),
}

impl std::ops::Deref for Upvals {
    type Target = [Value];
    #[inline(always)]
    fn deref(&self) -> &[Value] {
        match self {
            Upvals::One(v) => std::slice::from_ref(v),
            Upvals::Many(vs) => vs,
        }
    }
}

impl From<Box<[Value]>> for Upvals {
    fn from(vs: Box<[Value]>) -> Upvals {
        match *vs {
            [v] => Upvals::One(v),
            _ => Upvals::Many(vs),
        }
    }
}

pub struct Native {
    pub name: &'static str,
    pub f: NativeFn,
    /// Extra state for natives made at run time (e.g. bound receivers).
    pub data: Value,
}

impl Function {
    pub fn name(&self) -> &str {
        match self {
            Function::Closure(c) => &c.proto.proto.name,
            Function::Native(n) => n.name,
            Function::Bound(b) => &b.name,
        }
    }

    pub fn proto(&self) -> Option<&FuncProto> {
        match self {
            Function::Closure(c) => Some(&c.proto.proto),
            Function::Native(_) | Function::Bound(_) => None,
        }
    }

    /// JS `f.length`: the declared parameters (bound ones subtracted).
    pub fn length(&self) -> u32 {
        match self {
            Function::Closure(c) => c.proto.proto.length as u32,
            Function::Native(_) => 0,
            Function::Bound(b) => b.length,
        }
    }
}

/// Which built-in representation `new C()` creates for a class.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BuiltinKind {
    /// A user class, or a built-in whose instances are plain objects
    /// (Error and its subclasses).
    Ordinary,
    Array,
    Map,
    Set,
    String,
    Number,
    Boolean,
    Function,
    /// Built-ins that are not constructible (`Math`-like namespaces).
    Namespace,
    /// `new Promise()`.
    Promise,
    /// `new Channel(capacity)`, `new Mutex()`, `new WaitGroup()`,
    /// `new Semaphore(n)`.
    Channel,
    Mutex,
    WaitGroup,
    Semaphore,
    /// `new Uint8Array(n)`.
    Bytes,
    /// `new RegExp(pattern, flags)`.
    RegExp,
}

#[derive(Clone)]
pub struct ClassData {
    pub name: Atom,
    /// Parent class, or undefined.
    pub parent: Value,
    /// Constructor: a closure with `is_constructor`, a native, or undefined
    /// (then the parent's constructor runs, with the field initialiser).
    pub ctor: Value,
    /// Instance field initialiser (closure) or undefined.
    pub field_init: Value,
    /// What the field initialiser defines on an object with no properties
    /// yet, when it only defines constants (`x = 0`, `next: Node | null;`):
    /// a new instance takes a copy of it instead of a call of the
    /// initialiser (`TaskInterpreter::field_template_of`). It holds no heap
    /// value (numbers, booleans, null, undefined), so the collector has
    /// nothing to trace in it.
    pub field_template: Option<PropMap>,
    /// What the constructor does, when all it does is give the new
    /// instance its constant fields and store parameters in some of them
    /// (`this.left = left`): then `new` fills the instance in place and
    /// pushes no frame (`TaskInterpreter::ctor_plan_of`).
    pub ctor_plan: Option<CtorPlan>,
    /// Methods, accessors and shared data properties (the prototype).
    pub proto_props: PropMap,
    /// Static members.
    pub statics: PropMap,
    pub kind: BuiltinKind,
    /// For built-ins callable without `new` (`String(x)`, `Number(x)`,
    /// `Error("m")`): the native called then.
    pub call: Value,
}

/// The stores a constructor makes on its new instance (see
/// [`ClassData::ctor_plan`]): `(slot, parameter)` pairs, in the
/// constructor's order, the slot indexing the class's field template and
/// the parameter counted from 0.
#[derive(Clone, Copy, Default, Debug, PartialEq)]
pub struct CtorPlan {
    len: u8,
    stores: [(u8, u8); CtorPlan::MAX],
}

impl CtorPlan {
    /// Constructors that store more parameters than this keep their frame.
    pub const MAX: usize = 8;

    /// Adds a store; None when the plan is full or an index does not fit.
    pub fn push(&mut self, slot: usize, param: usize) -> Option<()> {
        let (s, p) = (u8::try_from(slot).ok()?, u8::try_from(param).ok()?);
        *self.stores.get_mut(self.len as usize)? = (s, p);
        self.len += 1;
        Some(())
    }

    pub fn stores(&self) -> &[(u8, u8)] {
        &self.stores[..self.len as usize]
    }
}

#[derive(Clone, Copy)]
pub struct Accessor {
    pub get: Value,
    pub set: Value,
}

pub enum IterState {
    /// Arrays (and for-in key lists): next index.
    Array { arr: Value, next: usize },
    /// An array's `keys()` (the indices) or, with `entries`, `entries()`
    /// (`[index, value]` pairs).
    Indexed { arr: Value, next: usize, entries: bool },
    /// Strings: next byte offset (iterates code points).
    Str { s: Value, next: usize },
    /// Maps and Sets: where in the entries (see [`MapPos`]); `kind` 0 =
    /// keys, 1 = values, 2 = [k, v] entries.
    Map { map: Value, pos: MapPos, kind: u8 },
    /// A host object whose class has a `next` native (`vm::host`).
    Host { obj: Value },
    /// Channels (`for (const v of ch)`): receives until closed and
    /// drained. `waiting`: the `IterNext` suspended and its value (null =
    /// closed) was delivered into its destination register.
    Channel { ch: Value, waiting: bool },
    /// A generator object: its paused frame (design/interpreter.md
    /// "Generators").
    Gen(Box<GenState>),
    /// A loop (`for-of`, `yield*`, spread) over generator `gen`: each
    /// `IterNext` resumes it, and the yielded value arrives raw in the
    /// `IterNext`'s register (no `{ value, done }` object), which then runs
    /// again with `pending` set to take it. `send`: the value the next
    /// resumption passes in (`yield*`).
    GenLoop { gen: Value, pending: bool, send: Value },
    /// Any other iterable, through the iterator protocol: `src`'s
    /// `[Symbol.iterator]()` gives `iter`, whose `next` is called until a
    /// result says `done`. Like `GenLoop`, each call delivers into the
    /// `IterNext`'s register and the instruction runs again to take the
    /// result; `phase` says what it waits for (`USER_*`).
    User { src: Value, iter: Value, next: Value, phase: u8, send: Value },
}

/// [`IterState::User`] phases: `[Symbol.iterator]()` not called yet; its
/// result is due; ready for `next()`; `next()`'s result is due; done. And
/// for accessors: the `Symbol.iterator` getter's result (the method) is
/// due; the `next` getter's result is due.
pub const USER_START: u8 = 0;
pub const USER_GOT_ITER: u8 = 1;
pub const USER_READY: u8 = 2;
pub const USER_PENDING: u8 = 3;
pub const USER_DONE: u8 = 4;
pub const USER_GOT_METHOD: u8 = 5;
pub const USER_GOT_NEXT: u8 = 6;

/// How a generator is resumed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum GenMode {
    Next,
    Return,
    Throw,
}

/// A request to resume generator `gen` (see `Runtime::resume_gen`).
#[derive(Clone, Copy, Debug)]
pub struct GenResume {
    pub gen: Value,
    pub mode: GenMode,
    pub value: Value,
}

/// Where a generator is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum GenRun {
    /// Created, body not entered.
    Start,
    /// Paused at a `yield` (the instruction before `pc`).
    Yielded,
    /// Its frame is on some task's frame stack.
    Running,
    /// Returned or threw: `next()` gives `{ value: undefined, done: true }`.
    Done,
}

/// A paused generator: everything its frame needs to run again, on any
/// task. While it runs, the frame is on the resuming task's stack and
/// `regs` is empty.
#[derive(Clone)]
pub struct GenState {
    pub closure: Value,
    /// The frame's registers (`this`, parameters, locals, temporaries).
    pub regs: Vec<Value>,
    pub pc: u32,
    /// The frame's active `try` handlers, innermost last: (catch pc,
    /// register of the caught value).
    pub handlers: Vec<(u32, u32)>,
    pub run: GenRun,
}

/// Key of a Map/Set entry: SameValueZero equality (strings by content,
/// numbers by value with -0 == 0 and NaN == NaN, everything else by
/// identity).
#[derive(Clone, Copy)]
pub struct MapKey(pub Value);

impl MapKey {
    pub fn normalize(v: Value) -> MapKey {
        if v.is_number() && v.as_number() == 0.0 {
            MapKey(Value::number(0.0))
        } else {
            MapKey(v)
        }
    }
}

impl PartialEq for MapKey {
    fn eq(&self, other: &MapKey) -> bool {
        if self.0 == other.0 {
            return true;
        }
        match (self.0.as_obj(), other.0.as_obj()) {
            (Some(a), Some(b)) => match (a.as_str(), b.as_str()) {
                (Some(x), Some(y)) => x.s == y.s,
                _ => false,
            },
            _ => false,
        }
    }
}

impl Eq for MapKey {}

impl Hash for MapKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self.0.as_obj().and_then(|o| o.as_str()) {
            Some(s) => s.s.hash(state),
            None => self.0.bits().hash(state),
        }
    }
}

/// Insertion-ordered hash map: the body of a Map, and of a Set (whose
/// values are unused).
///
/// # Layout
///
/// `entries` holds every entry added since the last compaction, in
/// insertion order, as a (key, value) pair of 16 bytes; a deleted entry
/// stays in place as a tombstone, keyed [`Value::DELETED`] (its value
/// cleared, so that it keeps nothing alive). `index` is a SwissTable of
/// 32-bit positions into `entries` (4 bytes and a control byte a slot),
/// of the live entries only: it is hashed with [`ProcessKeys`]' SipHash of
/// the [`MapKey`] at that position and compares by reading the key there,
/// so no key is stored twice; when it grows, each hash is computed again
/// from the entry.
///
/// Tombstones are dropped (compaction) only when an entry is added to a
/// full `entries`, and only when at least half of it is tombstones (then
/// compaction instead of growth; otherwise growth): a deletion moves
/// nothing, and each compaction's cost is paid for by the deletions that
/// made its tombstones. `clear` frees both tables.
///
/// # Iterators and compaction
///
/// An iterator stands at a position in `entries` ([`MapPos`]). Appending
/// and deleting never move an entry, so that position stays right: the
/// entries after it are exactly those not reached yet, including the ones
/// added since, as JS requires. Compaction moves entries, so an iterator
/// that has left the start holds its position in a cursor shared with the
/// map (an `Arc` that the map keeps too): compaction moves every cursor
/// that an iterator holds from position `p` to the number of live entries
/// before `p`, which is where the first entry at or after `p` goes; entries
/// before `p` (already visited) stay before it, and those at or after it
/// keep their order after it. So every entry live at the start of an
/// iteration and not deleted before it is reached is visited once, and
/// every entry added during it is visited, however many compactions happen
/// meanwhile and whichever iterator steps in between. `clear` moves every
/// cursor to 0. An iterator still at the start needs no cursor (position 0
/// never moves), and a finished one gives its cursor up. A cursor is read
/// and written only under the map's lock (an iterator's step locks its
/// map), so the atomic is for `Sync` alone.
///
/// A cursor that only the map holds (its iterator finished, or was
/// collected) is free: no one else can take it, as an iterator never
/// copies its cursor, only drops it. The next iterator to step takes the
/// last cursor of the list again if it is free, so a loop over a map
/// after another allocates nothing; otherwise a new one is pushed, and
/// the free ones are dropped when the list would grow. So the list is as
/// long as the most iterators that were live at once (not yet collected),
/// give or take a doubling.
pub struct MapData {
    entries: Entries,
    index: HashTable<u32>,
    /// Made at an iterator's first step, boxed: most maps have none.
    cursors: Option<Box<Cursors>>,
}

/// The map's side of its iterators' cursors (see "Iterators and
/// compaction").
#[derive(Default)]
struct Cursors {
    list: Vec<Arc<AtomicU32>>,
}

impl Cursors {
    /// Held by the map alone.
    fn free(c: &Arc<AtomicU32>) -> bool {
        Arc::strong_count(c) == 1
    }
}

/// The bytes of one cursor's allocation (an `Arc<AtomicU32>`: two counts
/// and the position, rounded to the counts' alignment).
const CURSOR_BYTES: usize = (2 * std::mem::size_of::<usize>() + std::mem::size_of::<AtomicU32>()).next_multiple_of(8);

impl Default for MapData {
    fn default() -> MapData {
        MapData { entries: Entries::new(), index: HashTable::new(), cursors: None }
    }
}

impl std::fmt::Debug for MapData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// SipHash keyed once per process, at random: the hashing of
/// `std::collections::hash_map::RandomState` (so keys chosen by an
/// attacker still cannot be made to collide), without the 16 bytes of
/// keys that `RandomState` stores in every map, which would make a Map's
/// body the largest of all and every object's box larger.
#[derive(Clone, Copy, Default)]
pub struct ProcessKeys;

impl std::hash::BuildHasher for ProcessKeys {
    type Hasher = std::collections::hash_map::DefaultHasher;
    #[inline]
    fn build_hasher(&self) -> Self::Hasher {
        static KEYS: std::sync::OnceLock<std::collections::hash_map::RandomState> = std::sync::OnceLock::new();
        KEYS.get_or_init(std::collections::hash_map::RandomState::new).build_hasher()
    }
}

#[inline]
fn key_hash(key: MapKey) -> u64 {
    use std::hash::BuildHasher;
    ProcessKeys.hash_one(key)
}

impl MapData {
    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Position of the live entry with this (normalised) key.
    #[inline]
    fn find(&self, key: MapKey, hash: u64) -> Option<usize> {
        let e = self.entries.as_slice();
        self.index.find(hash, |&i| MapKey(e[i as usize].0) == key).map(|&i| i as usize)
    }

    pub fn get(&self, k: Value) -> Option<Value> {
        let key = MapKey::normalize(k);
        self.find(key, key_hash(key)).map(|i| self.entries.as_slice()[i].1)
    }

    pub fn has(&self, k: Value) -> bool {
        let key = MapKey::normalize(k);
        self.find(key, key_hash(key)).is_some()
    }

    pub fn set(&mut self, k: Value, v: Value) {
        debug_assert!(k != Value::DELETED, "a tombstone is no key");
        let key = MapKey::normalize(k);
        let hash = key_hash(key);
        if let Some(i) = self.find(key, hash) {
            self.entries.as_mut_slice()[i].1 = v;
            return;
        }
        if self.entries.len() < self.entries.capacity() && self.index.len() < self.index.capacity() {
            self.append(key.0, v, hash);
        } else {
            self.append_growing(key.0, v, hash);
        }
    }

    /// Appends a new entry; `entries` has room.
    #[inline]
    fn append(&mut self, k: Value, v: Value, hash: u64) {
        let MapData { entries, index, .. } = self;
        let e = entries.as_slice();
        index.insert_unique(hash, e.len() as u32, |&i| key_hash(MapKey(e[i as usize].0)));
        entries.push((k, v));
    }

    /// Appends a new entry when `entries` or `index` is full: compacts
    /// `entries` if at least half of it is tombstones, grows it otherwise,
    /// and counts what either table grew by.
    #[inline(never)]
    fn append_growing(&mut self, k: Value, v: Value, hash: u64) {
        let before = self.capacity_bytes();
        let len = self.entries.len();
        if len == self.entries.capacity() {
            if self.index.len() < len && self.index.len() * 2 <= len {
                self.compact();
            } else {
                self.entries.grow();
            }
        }
        self.append(k, v, hash);
        let after = self.capacity_bytes();
        if after > before {
            super::heap::count_growth(after - before);
        }
    }

    /// Bytes reserved for the entries, the index and the iterators'
    /// cursors (for the collector's accounting).
    pub fn capacity_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<(Value, Value)>()
            + self.index.allocation_size()
            + self.cursors.as_ref().map_or(0, |c| {
                std::mem::size_of::<Cursors>()
                    + c.list.capacity() * std::mem::size_of::<Arc<AtomicU32>>()
                    + c.list.len() * CURSOR_BYTES
            })
    }

    /// Leaves a tombstone where the entry was (see "Layout"): nothing moves.
    pub fn delete(&mut self, k: Value) -> bool {
        let key = MapKey::normalize(k);
        let MapData { entries, index, .. } = self;
        let e = entries.as_slice();
        match index.find_entry(key_hash(key), |&i| MapKey(e[i as usize].0) == key) {
            Ok(found) => {
                let (i, _) = found.remove();
                entries.as_mut_slice()[i as usize] = (Value::DELETED, Value::UNDEFINED);
                true
            }
            Err(_) => false,
        }
    }

    /// Empties the map and frees its tables; live iterators move to the
    /// start, where the entries added from now on begin.
    pub fn clear(&mut self) {
        self.entries = Entries::new();
        self.index = HashTable::new();
        if let Some(cs) = &mut self.cursors {
            cs.list.retain(|c| !Cursors::free(c));
            for c in &cs.list {
                c.store(0, Ordering::Relaxed);
            }
            if cs.list.is_empty() {
                self.cursors = None;
            }
        }
    }

    /// Drops the tombstones, keeping the live entries' order, and moves
    /// every position that refers to `entries` (the index's, the
    /// iterators' cursors) to the same entry's new place, or for a cursor
    /// at a tombstone or at the end, to the next live entry's (see
    /// "Iterators and compaction"). Capacities stay as they are.
    fn compact(&mut self) {
        // Which entries are live, 64 to a block, with the number of live
        // entries before each block: a position's new place is the number
        // of live entries before it.
        let e = self.entries.as_slice();
        let mut blocks: Vec<(u64, u32)> = Vec::with_capacity(e.len().div_ceil(64));
        let mut live = 0u32;
        for chunk in e.chunks(64) {
            let mut bits = 0u64;
            for (j, &(k, _)) in chunk.iter().enumerate() {
                bits |= u64::from(k != Value::DELETED) << j;
            }
            blocks.push((bits, live));
            live += bits.count_ones();
        }
        let moved = |p: u32| -> u32 {
            let p = p as usize;
            match blocks.get(p / 64) {
                Some(&(bits, before)) => before + (bits & ((1u64 << (p % 64)) - 1)).count_ones(),
                None => live,
            }
        };
        for i in self.index.iter_mut() {
            *i = moved(*i);
        }
        if let Some(cs) = &mut self.cursors {
            // A free cursor's position is set again when it is taken.
            for c in cs.list.iter().filter(|c| !Cursors::free(c)) {
                c.store(moved(c.load(Ordering::Relaxed)), Ordering::Relaxed);
            }
        }
        let s = self.entries.as_mut_slice();
        let mut w = 0;
        for r in 0..s.len() {
            if s[r].0 != Value::DELETED {
                s[w] = s[r];
                w += 1;
            }
        }
        debug_assert_eq!(w, live as usize);
        self.entries.truncate(w);
    }

    /// A cursor at position `at`, which compaction moves (see "Iterators
    /// and compaction"): the last one of the list if it is free (nothing
    /// grows), or a new one, whose bytes count as the map's.
    fn cursor(&mut self, at: usize) -> Arc<AtomicU32> {
        let c = match self.cursors.as_ref().and_then(|cs| cs.list.last()) {
            Some(c) if Cursors::free(c) => c.clone(),
            _ => self.new_cursor(),
        };
        c.store(at as u32, Ordering::Relaxed);
        c
    }

    #[inline(never)]
    fn new_cursor(&mut self) -> Arc<AtomicU32> {
        let before = self.capacity_bytes();
        let cs = &mut self.cursors.get_or_insert_with(Default::default).list;
        if cs.len() == cs.capacity() {
            cs.retain(|c| !Cursors::free(c));
        }
        let c = Arc::new(AtomicU32::new(0));
        cs.push(c.clone());
        let after = self.capacity_bytes();
        if after > before {
            super::heap::count_growth(after - before);
        }
        c
    }

    /// Live entries in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (Value, Value)> + '_ {
        live(self.entries.as_slice())
    }
}

fn live(e: &[(Value, Value)]) -> impl Iterator<Item = (Value, Value)> + '_ {
    e.iter().copied().filter(|&(k, _)| k != Value::DELETED)
}

/// Where an iterator over a Map's or Set's entries stands
/// ([`IterState::Map`]; see "Iterators and compaction" on [`MapData`]).
pub enum MapPos {
    /// Before the first entry, which compaction never moves.
    Start,
    /// Before the entry at this position of the map's `entries`: a cursor
    /// the map moves when it compacts.
    At(Arc<AtomicU32>),
    /// Finished: a Map or Set iterator that has said it is done stays done,
    /// as in JS, whatever is added later.
    Done,
}

impl MapPos {
    fn at(&self) -> usize {
        match self {
            MapPos::Start => 0,
            MapPos::At(c) => c.load(Ordering::Relaxed) as usize,
            MapPos::Done => usize::MAX,
        }
    }

    /// The next live entry of `m`, the map this iterator is over, and steps
    /// past it; None at the end, and from then on.
    #[inline(always)]
    pub fn next(&mut self, m: &mut MutRef<'_, MapData>) -> Option<(Value, Value)> {
        let e = m.entries.as_slice();
        let mut at = self.at();
        while let Some(&entry) = e.get(at) {
            at += 1;
            if entry.0 != Value::DELETED {
                match self {
                    MapPos::At(c) => c.store(at as u32, Ordering::Relaxed),
                    _ => self.first_step(m, at),
                }
                return Some(entry);
            }
        }
        self.finish();
        None
    }

    /// The first step: the map now keeps track of this position (a change
    /// of its body, so through `deref_mut`, the barrier).
    #[inline(never)]
    fn first_step(&mut self, m: &mut MutRef<'_, MapData>, at: usize) {
        *self = MapPos::At(m.cursor(at));
    }

    /// Giving the cursor up frees it for the map's next iterator.
    #[inline(never)]
    fn finish(&mut self) {
        *self = MapPos::Done;
    }

    /// The live entries of `m` not reached yet, without stepping.
    pub fn rest<'a>(&self, m: &'a MapData) -> impl Iterator<Item = (Value, Value)> + 'a {
        live(m.entries.as_slice().get(self.at()..).unwrap_or(&[]))
    }
}

/// `MapData`'s entries: a `Vec<(Value, Value)>` with a 32-bit length and
/// capacity, 16 bytes instead of a `Vec`'s 24. That leaves room in a
/// `MapData`, whose size bounds every object's box (the assertion at the
/// end of this file), for the cursors of [`MapPos`]. Positions in the index
/// are 32-bit anyway; 2^32 entries would take 64 GiB.
struct Entries {
    ptr: NonNull<(Value, Value)>,
    len: u32,
    cap: u32,
}

// SAFETY: `Entries` owns its buffer as a `Vec` of `Copy` values does.
unsafe impl Send for Entries {}
unsafe impl Sync for Entries {}

impl Entries {
    const fn new() -> Entries {
        Entries { ptr: NonNull::dangling(), len: 0, cap: 0 }
    }

    #[inline]
    fn len(&self) -> usize {
        self.len as usize
    }

    #[inline]
    fn capacity(&self) -> usize {
        self.cap as usize
    }

    #[inline]
    fn as_slice(&self) -> &[(Value, Value)] {
        // SAFETY: `ptr`, `len` and `cap` are a `Vec`'s (`put_vec`), and
        // only `push` has written past that `Vec`'s length, within its
        // capacity; dangling with length 0 is an empty slice.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len as usize) }
    }

    #[inline]
    fn as_mut_slice(&mut self) -> &mut [(Value, Value)] {
        // SAFETY: as in `as_slice`, and `&mut self` is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len as usize) }
    }

    /// Appends within the capacity.
    #[inline]
    fn push(&mut self, e: (Value, Value)) {
        assert!(self.len < self.cap);
        // SAFETY: slot `len` is inside the buffer (`len < cap`).
        unsafe { self.ptr.as_ptr().add(self.len as usize).write(e) };
        self.len += 1;
    }

    /// Forgets every entry from `n` on (they own nothing).
    fn truncate(&mut self, n: usize) {
        if n < self.len() {
            self.len = n as u32;
        }
    }

    /// Doubles the capacity (4 at first), as a `Vec` does.
    fn grow(&mut self) {
        let mut v = self.take_vec();
        let want = (v.capacity() * 2).clamp(4, u32::MAX as usize);
        assert!(want > v.len(), "a Map or Set holds fewer than 2^32 entries");
        v.reserve_exact(want - v.len());
        self.put_vec(v);
    }

    /// The buffer as the `Vec` it came from, leaving `self` empty.
    fn take_vec(&mut self) -> Vec<(Value, Value)> {
        let (ptr, len, cap) = (self.ptr, self.len as usize, self.cap as usize);
        (self.ptr, self.len, self.cap) = (NonNull::dangling(), 0, 0);
        // SAFETY: see `as_slice`: the parts of a `Vec` (a dangling pointer
        // with capacity 0 is `Vec::new`'s), now owned by the result alone.
        unsafe { Vec::from_raw_parts(ptr.as_ptr(), len, cap) }
    }

    fn put_vec(&mut self, v: Vec<(Value, Value)>) {
        debug_assert_eq!(self.cap, 0, "the old buffer was taken");
        assert!(v.capacity() <= u32::MAX as usize);
        let mut v = std::mem::ManuallyDrop::new(v);
        // A `Vec`'s pointer is never null (dangling when nothing is allocated).
        self.ptr = NonNull::new(v.as_mut_ptr()).expect("a Vec's pointer");
        (self.len, self.cap) = (v.len() as u32, v.capacity() as u32);
    }
}

impl Drop for Entries {
    fn drop(&mut self) {
        drop(self.take_vec());
    }
}

/// Counter for `Task`-like ids and other process-wide sequences.
pub static NEXT_ID: AtomicU32 = AtomicU32::new(1);

pub fn next_id() -> u32 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// Every object's box is as large as the largest body: keep the bodies
/// that are not boxed small (a string or an array pays for this size in
/// each of its objects, in allocation, copying and collection pacing).
/// 80 bytes is one of the allocator's size classes; the next is 96.
/// (A build for the Shuttle models swaps the locks inside some bodies for
/// the model checker's larger ones; the size is a goal of the real build.)
#[cfg(not(feature = "shuttle"))]
const _: () = assert!(std::mem::size_of::<Obj>() <= 80);
// A string leaves 8 bytes of the 72 a body has, for the body's own tag.
const _: () = assert!(std::mem::size_of::<JsStr>() <= 64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_keeps_the_key_it_names() {
        use crate::vm::atom::Atom;
        let fresh = |t: &str| JsStr::copy_of(t);
        let s = fresh("key_cache_word");
        assert!(s.key.get().is_none(), "not looked up yet");
        let k = crate::vm::ops::key_of(&s);
        assert_eq!(k, Atom::intern("key_cache_word"));
        assert_eq!(s.key.get(), Some(k));
        // The cache is what a look-up would give: same text, same key.
        assert_eq!(crate::vm::ops::key_of(&s), k);
        assert_eq!(crate::vm::ops::key_of(&fresh("key_cache_word")), k);
        // Index keys and a lone surrogate's marked key are kept as well.
        let idx = fresh("42");
        assert_eq!(crate::vm::ops::key_of(&idx), Atom::index(42));
        assert_eq!(idx.key.get(), Some(Atom::index(42)));
        let lone = JsStr::from_units(&[0x78, 0xD800]);
        let lk = crate::vm::ops::key_of(&lone);
        assert_eq!(lone.key.get(), Some(lk));
        assert_ne!(lk, Atom::intern("x\u{FFFD}"));
        // The one number that cannot be stored is left uncached.
        let c = KeyCache::new();
        c.set(Atom(u32::MAX));
        assert!(c.get().is_none());
        c.set(Atom(0));
        assert_eq!(c.get(), Some(Atom(0)));
    }

    #[test]
    fn short_copies_write_exactly_their_bytes() {
        let src: Vec<u8> = (1..=INLINE_STR as u8).collect();
        for n in 0..=INLINE_STR {
            let mut buf = [0xee; INLINE_STR];
            copy_short(&mut buf, &src[..n]);
            assert_eq!(&buf[..n], &src[..n], "{n} bytes");
            assert!(buf[n..].iter().all(|&b| b == 0xee), "{n} bytes: nothing past the end");
        }
    }

    fn grown(js: &JsStr) -> &Grown {
        match &js.s {
            StrText::Grown(g) => g,
            _ => panic!("not a string of a shared buffer"),
        }
    }

    #[test]
    fn appending_to_the_longest_string_of_a_buffer_writes_in_place() {
        let long = JsStr::new("x".repeat(INLINE_STR + 10).into());
        let piece = JsStr::new("é!".into());
        // From a boxed string: a new buffer with room, all of it counted.
        let (a, counted) = JsStr::append(&long, &piece).unwrap();
        let cap = grown(&a).buf.bytes.len();
        assert_eq!(counted, cap);
        assert!(cap > a.s.len());
        // The next step writes after it: the same buffer, only the piece counted.
        let (b, counted) = JsStr::append(&a, &piece).unwrap();
        assert!(Arc::ptr_eq(&grown(&a).buf, &grown(&b).buf));
        assert_eq!(counted, piece.s.len());
        assert_eq!(&*b.s, format!("{}é!é!", "x".repeat(INLINE_STR + 10)));
        assert_eq!(b.utf16_len as usize, INLINE_STR + 14);
        // `a` is no longer the longest: appending to it copies, and both
        // strings keep their text.
        let (c, _) = JsStr::append(&a, &JsStr::new("?".into())).unwrap();
        assert!(!Arc::ptr_eq(&grown(&a).buf, &grown(&c).buf));
        assert_eq!(&*a.s, format!("{}é!", "x".repeat(INLINE_STR + 10)));
        assert_eq!(&*b.s, format!("{}é!é!", "x".repeat(INLINE_STR + 10)));
        assert_eq!(&*c.s, format!("{}é!?", "x".repeat(INLINE_STR + 10)));
        // The accounting sees each string's own length.
        assert_eq!(b.s.heap_bytes(), b.s.len());
        let boxed: Box<str> = b.s.into();
        assert_eq!(&*boxed, format!("{}é!é!", "x".repeat(INLINE_STR + 10)));
    }

    #[test]
    fn a_string_built_by_appending_grows_its_buffer_geometrically() {
        let mut s = JsStr::new("".into());
        let (mut buffers, mut copied) = (0, 0);
        let c = JsStr::new("ab".into());
        let steps = if cfg!(miri) { 2_000 } else { 20_000 };
        for _ in 0..steps {
            let (next, counted) = JsStr::append(&s, &c).unwrap();
            if let StrText::Grown(g) = &next.s {
                if counted == g.buf.bytes.len() {
                    buffers += 1;
                    copied += s.s.len();
                }
            }
            s = next;
        }
        assert_eq!(s.s.len(), 2 * steps);
        assert!(s.s.bytes().all(|b| b == b'a' || b == b'b'));
        // Half as large again each time: a few dozen buffers, and the bytes
        // copied from old buffers a small multiple of the result.
        assert!(buffers < 30, "{buffers} buffers");
        assert!(copied < 3 * 2 * steps, "{copied} bytes copied");
    }

    #[test]
    fn threads_appending_to_one_string_each_get_their_own_result() {
        for _ in 0..if cfg!(miri) { 2 } else { 20 } {
            let base = JsStr::new("b".repeat(100).into());
            let (base, _) = JsStr::append(&base, &JsStr::new("-".into())).unwrap();
            let base = Arc::new(base);
            let results: Vec<(usize, JsStr)> = std::thread::scope(|scope| {
                let hs: Vec<_> = (0..8)
                    .map(|t| {
                        let base = base.clone();
                        scope.spawn(move || {
                            let piece = JsStr::new(format!("{t}").repeat(t + 1).into());
                            (t, JsStr::append(&base, &piece).unwrap().0)
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let mut in_place = 0;
            for (t, r) in &results {
                assert_eq!(&*r.s, format!("{}-{}", "b".repeat(100), format!("{t}").repeat(t + 1)));
                in_place += Arc::ptr_eq(&grown(&base).buf, &grown(r).buf) as usize;
            }
            assert_eq!(&*base.s, format!("{}-", "b".repeat(100)));
            // At most one thread wrote after the shared string.
            assert!(in_place <= 1, "{in_place} appended in place");
        }
    }

    #[test]
    fn short_strings_live_in_their_object_long_ones_in_a_box() {
        let exact = "a".repeat(INLINE_STR);
        for s in ["", "a", "héllo wörld", exact.as_str()] {
            let t = StrText::copy_of(s);
            assert!(matches!(t, StrText::Inline { .. }), "{s:?} inline");
            assert_eq!(&*t, s);
            assert_eq!(t.heap_bytes(), 0);
            assert_eq!(&*StrText::from_box(s.into()), s);
        }
        // One byte over, and a multi-byte character straddling the limit:
        // boxed whole, never cut inside a character.
        let over = "b".repeat(INLINE_STR + 1);
        let straddle = format!("{}é", "c".repeat(INLINE_STR - 1));
        for s in [over.as_str(), straddle.as_str()] {
            let t = StrText::copy_of(s);
            assert!(matches!(t, StrText::Heap(_)), "{s:?} boxed");
            assert_eq!(&*t, s);
            assert_eq!(t.heap_bytes(), s.len());
        }
        // A concatenation past the limit from a short string is built in
        // a buffer of its own, of the exact size.
        let (a, b) = (JsStr::new("naïve ".into()), JsStr::new("x".repeat(INLINE_STR).into()));
        let ab = JsStr::append(&a, &b).unwrap().0;
        assert!(matches!(&ab.s, StrText::Grown(g) if g.buf.bytes.len() == ab.s.len()));
        assert_eq!((&*ab.s, ab.utf16_len as usize), (&*format!("naïve {}", "x".repeat(INLINE_STR)), 6 + INLINE_STR));
        let short = JsStr::append(&a, &a).unwrap().0;
        assert!(matches!(short.s, StrText::Inline { .. }) && &*short.s == "naïve naïve ");
        let js = JsStr::new("naïve".into());
        assert_eq!((js.utf16_len, js.is_ascii(), js.code_unit(2)), (5, false, Some('ï' as u16)));
        assert_eq!(StrText::copy_of("x"), StrText::from_box("x".into()));
        let back: Box<str> = StrText::copy_of("round trip").into();
        assert_eq!(&*back, "round trip");
    }

    #[test]
    #[cfg(not(feature = "shuttle"))]
    fn objects_stay_small() {
        // Every object is as large as the largest body: a variant larger
        // than a plain object's data belongs in a Box (see `memory.md`).
        assert!(std::mem::size_of::<Obj>() <= 80, "Obj is {} bytes", std::mem::size_of::<Obj>());
    }

    #[test]
    fn lock_is_reentrant_on_one_thread() {
        enable_parallel_mutators();
        let m = Mut::new(vec![Value::number(1.0)]);
        let a = m.lock();
        let b = m.lock();
        assert_eq!(a.len() + b.len(), 2);
    }

    #[test]
    fn locks_exclude_other_threads() {
        enable_parallel_mutators();
        // Miri runs the same contention, shorter (it is thousands of times
        // slower than native code).
        const N: usize = if cfg!(miri) { 200 } else { 10_000 };
        let m = Arc::new(Mut::new(Vec::<Value>::new()));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let m = m.clone();
                std::thread::spawn(move || {
                    for i in 0..N {
                        m.lock().push(Value::number((t * N + i) as f64));
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let mut all: Vec<f64> = m.lock().iter().map(|v| v.as_number()).collect();
        all.sort_by(f64::total_cmp);
        assert_eq!(all, (0..4 * N).map(|i| i as f64).collect::<Vec<_>>(), "no push lost or doubled");
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "lock order breach")]
    fn two_objects_of_one_level_breach_the_order() {
        let a = Mut::new(Vec::<Value>::new());
        let b = Mut::new(Vec::<Value>::new());
        let _ga = a.lock();
        let _gb = b.lock();
    }

    #[test]
    fn higher_levels_may_nest() {
        let arr = Mut::new(Vec::<Value>::new());
        let cell = Mut::new(Value::UNDEFINED);
        let _ga = arr.lock();
        *cell.lock() = Value::number(1.0);
    }

    /// Map and Set bodies: tombstones, compaction, iterator positions.
    mod maps {
        use super::*;

        fn n(i: u32) -> Value {
            Value::number(f64::from(i))
        }

        fn keys(m: &MapData) -> Vec<u32> {
            m.iter().map(|(k, _)| k.as_number() as u32).collect()
        }

        #[test]
        fn deletion_leaves_a_tombstone_that_nothing_sees() {
            let mut m = MapData::default();
            for i in 0..10 {
                m.set(n(i), n(i + 100));
            }
            let cap = m.entries.capacity();
            for i in [0, 3, 9] {
                assert!(m.delete(n(i)));
                assert!(!m.delete(n(i)), "deleted once");
            }
            // Nothing moved: the positions of the other entries stand.
            assert_eq!((m.entries.len(), m.entries.capacity(), m.len()), (10, cap, 7));
            assert_eq!(m.entries.as_slice()[3], (Value::DELETED, Value::UNDEFINED));
            assert_eq!(m.entries.as_slice()[4], (n(4), n(104)));
            assert_eq!(keys(&m), [1, 2, 4, 5, 6, 7, 8]);
            assert_eq!((m.get(n(3)), m.has(n(3)), m.get(n(4))), (None, false, Some(n(104))));
            let mut traced = Vec::new();
            m.values(&mut |v| traced.push(v));
            assert_eq!(traced.len(), 14);
            assert!(!traced.contains(&Value::DELETED) && !traced.contains(&Value::UNDEFINED));
            assert_eq!(format!("{m:?}"), "{1: 101, 2: 102, 4: 104, 5: 105, 6: 106, 7: 107, 8: 108}");
            // A key added again goes to the end, as in JS; -0 is 0.
            m.set(n(3), n(3));
            m.set(Value::number(-0.0), n(0));
            assert_eq!(keys(&m), [1, 2, 4, 5, 6, 7, 8, 3, 0]);
            assert_eq!(m.get(n(0)), Some(n(0)));
        }

        #[test]
        fn a_full_table_compacts_when_half_is_tombstones_and_grows_otherwise() {
            let mut m = MapData::default();
            for i in 0..16 {
                m.set(n(i), n(i));
            }
            assert_eq!((m.entries.len(), m.entries.capacity()), (16, 16));
            // 7 tombstones of 16: fewer than half, so the next add grows.
            for i in 0..7 {
                m.delete(n(i * 2));
            }
            m.set(n(100), n(100));
            assert_eq!((m.entries.len(), m.entries.capacity()), (17, 32));
            // Fill it, then make half of it tombstones: the next add
            // compacts instead of growing, and keeps the order.
            for i in 101..116 {
                m.set(n(i), n(i));
            }
            assert_eq!((m.entries.len(), m.entries.capacity(), m.len()), (32, 32, 25));
            let mut gone = 0;
            for i in 101..116 {
                if gone < 9 {
                    m.delete(n(i));
                    gone += 1;
                }
            }
            assert_eq!(m.len(), 16);
            let before = keys(&m);
            m.set(n(200), n(200));
            assert_eq!((m.entries.len(), m.entries.capacity()), (17, 32), "compacted in place");
            assert!(m.entries.as_slice().iter().all(|&(k, _)| k != Value::DELETED));
            let mut want = before.clone();
            want.push(200);
            assert_eq!(keys(&m), want);
            // The index follows the entries to their new places.
            for &k in &want {
                assert_eq!(m.get(n(k)), Some(n(k)), "key {k}");
            }
            assert_eq!(m.get(n(0)), None);
            assert!(m.delete(n(200)) && m.delete(n(1)) && !m.has(n(1)));
        }

        #[test]
        fn clear_frees_both_tables() {
            let mut m = MapData::default();
            for i in 0..1000 {
                m.set(n(i), n(i));
            }
            assert!(m.capacity_bytes() > 1000 * 16);
            m.clear();
            assert_eq!((m.len(), m.capacity_bytes()), (0, 0));
            m.set(n(5), n(6));
            assert_eq!((keys(&m), m.get(n(5))), (vec![5], Some(n(6))));
        }

        #[test]
        fn entries_that_strings_key_are_found_by_content() {
            let k1 =
                Box::leak(Box::new(Obj { header: Header::new(false, 0), body: Body::Str(JsStr::new("a key".into())) }));
            let k2 =
                Box::leak(Box::new(Obj { header: Header::new(false, 0), body: Body::Str(JsStr::new("a key".into())) }));
            let (a, b) = (Value::object(k1), Value::object(k2));
            let mut m = MapData::default();
            for i in 0..100 {
                m.set(n(i), n(i));
            }
            m.set(a, n(1));
            assert_eq!(m.get(b), Some(n(1)));
            for i in 0..100 {
                m.delete(n(i));
            }
            // Compaction and the index's growth both hash again from the
            // entries.
            for i in 0..300 {
                m.set(n(i + 1000), n(i));
            }
            assert_eq!(m.get(b), Some(n(1)));
            assert!(m.delete(b) && !m.has(a));
        }

        /// Steps the iterator at `pos` over `m`.
        fn step(m: &Mut<MapData>, pos: &mut MapPos) -> Option<u32> {
            pos.next(&mut m.lock()).map(|(k, _)| k.as_number() as u32)
        }

        #[test]
        fn deleting_what_an_iterator_reached_visits_everything() {
            let m = Mut::new(MapData::default());
            for i in 0..1000 {
                m.lock().set(n(i), n(i));
            }
            let mut pos = MapPos::Start;
            let mut seen = Vec::new();
            while let Some(k) = step(&m, &mut pos) {
                seen.push(k);
                m.lock().delete(n(k));
            }
            assert_eq!(seen, (0..1000).collect::<Vec<_>>());
            assert!(m.lock().is_empty());
            assert!(matches!(pos, MapPos::Done));
            // Done stays done, whatever is added.
            m.lock().set(n(1), n(1));
            assert_eq!(step(&m, &mut pos), None);
        }

        #[test]
        fn compaction_moves_live_cursors_with_their_entries() {
            let m = Mut::new(MapData::default());
            for i in 0..64 {
                m.lock().set(n(i), n(i));
            }
            let (mut a, mut b, mut idle) = (MapPos::Start, MapPos::Start, MapPos::Start);
            for _ in 0..10 {
                step(&m, &mut a);
            }
            for _ in 0..40 {
                step(&m, &mut b);
            }
            assert_eq!(step(&m, &mut idle), Some(0));
            // Delete one and add one, each step of `a`, for several
            // compactions; `b` and `idle` stand still meanwhile.
            let mut from_a = Vec::new();
            for new_key in 1000..1200 {
                let Some(k) = step(&m, &mut a) else { break };
                from_a.push(k);
                let mut g = m.lock();
                g.delete(n(k));
                g.set(n(new_key), n(0));
            }
            let compacted = m.lock().entries.len() < 64 + 200;
            assert!(compacted);
            // `a` saw 10..64, then every key added, in order.
            let want: Vec<u32> = (10..64).chain(1000..1146).collect();
            assert_eq!(from_a, want);
            // `b` resumes at 40, `idle` at 1 (of the keys still there:
            // 0..10 were never deleted, 10..64 were).
            let rest = |pos: &MapPos| pos.rest(&m.lock()).map(|(k, _)| k.as_number() as u32).collect::<Vec<_>>();
            let left: Vec<u32> = m.lock().iter().map(|(k, _)| k.as_number() as u32).collect();
            assert_eq!(rest(&b), left[10..]);
            assert_eq!(rest(&idle), left[1..]);
            assert_eq!(step(&m, &mut idle), Some(1));
        }

        #[test]
        fn clear_moves_iterators_to_what_is_added_next() {
            let m = Mut::new(MapData::default());
            for i in 0..10 {
                m.lock().set(n(i), n(i));
            }
            let mut pos = MapPos::Start;
            assert_eq!((step(&m, &mut pos), step(&m, &mut pos)), (Some(0), Some(1)));
            m.lock().clear();
            m.lock().set(n(50), n(50));
            assert_eq!((step(&m, &mut pos), step(&m, &mut pos)), (Some(50), None));
        }

        #[test]
        fn cursors_of_finished_and_dropped_iterators_are_taken_again() {
            let m = Mut::new(MapData::default());
            for i in 0..4 {
                m.lock().set(n(i), n(i));
            }
            let cursors = |m: &Mut<MapData>| m.lock().cursors.as_ref().map_or(0, |c| c.list.len());
            // Iterators dropped after a step, one after another: one cursor.
            for _ in 0..1000 {
                let mut pos = MapPos::Start;
                step(&m, &mut pos);
            }
            assert_eq!(cursors(&m), 1);
            // Live at once: one each. A finished iterator gives its cursor
            // up, and the next one takes it.
            let mut live: Vec<MapPos> = (0..3).map(|_| MapPos::Start).collect();
            for pos in &mut live {
                step(&m, pos);
            }
            assert_eq!(cursors(&m), 3);
            while step(&m, &mut live[2]).is_some() {}
            let mut next = MapPos::Start;
            assert_eq!((step(&m, &mut next), step(&m, &mut next)), (Some(0), Some(1)));
            assert_eq!(cursors(&m), 3);
            // The others kept their places.
            assert_eq!((step(&m, &mut live[0]), step(&m, &mut live[1])), (Some(1), Some(1)));
            // Free cursors are dropped when the list would grow.
            drop(live);
            let mut more: Vec<MapPos> = (0..4).map(|_| MapPos::Start).collect();
            for pos in &mut more {
                step(&m, pos);
            }
            assert!(cursors(&m) <= 5, "{} cursors", cursors(&m));
            m.lock().clear();
            drop(more);
            drop(next);
            m.lock().clear();
            assert!(m.lock().cursors.is_none());
        }

        /// A few thousand random operations on a map and three iterators,
        /// against a model of JS's semantics (entries never move; a
        /// deleted one is skipped; `clear` empties all of them).
        #[test]
        fn iterators_agree_with_a_model_that_never_compacts() {
            let m = Mut::new(MapData::default());
            let mut model: Vec<Option<u32>> = Vec::new();
            let mut its: Vec<(MapPos, usize, bool)> = (0..3).map(|_| (MapPos::Start, 0, false)).collect();
            let mut seed = 0x2545_f491_4f6c_dd1du64;
            let mut rand = |n: u64| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed % n
            };
            let mut compactions = 0;
            for _ in 0..if cfg!(miri) { 2_000 } else { 50_000 } {
                let len_before = m.lock().entries.len();
                match rand(100) {
                    0..=34 => {
                        let k = rand(64) as u32;
                        m.lock().set(n(k), n(0));
                        if !model.contains(&Some(k)) {
                            model.push(Some(k));
                        }
                    }
                    35..=69 => {
                        let k = rand(64) as u32;
                        let had = model.iter().position(|&e| e == Some(k));
                        assert_eq!(m.lock().delete(n(k)), had.is_some());
                        if let Some(i) = had {
                            model[i] = None;
                        }
                    }
                    70 => {
                        m.lock().clear();
                        model.iter_mut().for_each(|e| *e = None);
                    }
                    _ => {
                        let i = rand(3) as usize;
                        let (pos, at, done) = &mut its[i];
                        let want = if *done {
                            None
                        } else {
                            match model[*at..].iter().position(|e| e.is_some()) {
                                Some(j) => {
                                    *at += j + 1;
                                    model[*at - 1]
                                }
                                None => {
                                    *done = true;
                                    None
                                }
                            }
                        };
                        assert_eq!(step(&m, pos), want);
                        // Now and then a finished iterator, or one left
                        // half-way (a loop that breaks), is dropped and a
                        // new one takes its place.
                        if rand(if *done { 2 } else { 50 }) == 0 {
                            its[i] = (MapPos::Start, 0, false);
                        }
                    }
                }
                if m.lock().entries.len() < len_before {
                    compactions += 1;
                }
                let live: Vec<u32> = model.iter().flatten().copied().collect();
                assert_eq!(keys(&m.lock()), live);
            }
            assert!(compactions > 10, "{compactions} compactions");
        }
    }
}
