//! The garbage-collected heap: allocation and mark-sweep collection.
//!
//! # Design
//!
//! Objects are individually boxed and never move, so a `Value` (and a
//! `&Obj` held by Rust code) stays valid for as long as the object is
//! reachable. The heap remembers every object it handed out; a collection
//! marks everything reachable from the roots with an explicit worklist (no
//! recursion, so deep structures cannot overflow the Rust stack), beside
//! the running program between two short pauses ("Concurrent marking"
//! below); the unmarked objects are then freed by the concurrent sweep
//! (`vm::sweep`) while the program runs again. Cycles are collected like
//! anything else.
//!
//! # When collections happen
//!
//! Only at a *safepoint*: the interpreter's budget check at calls and loop
//! back-edges, where every live value of every task is in its registers
//! (precise roots). Natives never trigger a collection, so a native may
//! hold `Value`s in Rust locals for its whole run. Allocation only counts
//! bytes and raises [`Heap::wants_collection`]; the next safepoint collects.
//!
//! # Roots
//!
//! The caller of [`Heap::collect`] supplies them through the [`Marker`]:
//! globals, the realm's built-in objects, the program's constants, and all
//! registers of every task (running, runnable or suspended).
//!
//! # Threads
//!
//! One [`SharedHeap`] per program; every thread that allocates (each
//! worker, and the thread that starts and ends the program) has its own
//! [`Heap`] handle with its own allocation list, so allocation takes no
//! lock. The collector takes every list for the sweep (leaving each thread
//! an empty one), which is sound because it takes them only with the world
//! stopped (the pause that ends a marking cycle):
//!
//! - A worker is a *mutator* while it runs a job ([`Heap::enter`] returns
//!   a guard that ends it). Mutator state per worker: `RUNNING`, `PARKED`
//!   (stopped at a safepoint, its running task published as a root) or
//!   `IDLE`.
//! - A collection is *requested* when the bytes allocated since the last
//!   one pass the threshold. Every mutator sees the request at its next
//!   safepoint ([`Heap::wants_collection`]) and calls [`Heap::safepoint`]:
//!   the first to claim `stop` collects, the others park.
//! - Invariant (the Dekker handshake that makes stopping safe): a mutator
//!   stores `RUNNING`, fences, and then loads `stop`; the collector stores
//!   `stop`, fences, and then loads every state. So either the mutator
//!   sees `stop` and waits before touching the heap, or the collector sees
//!   it running and waits until it parks or goes idle. The fences are
//!   asymmetric (`vm::fence`): the mutator's orders its two steps for the
//!   compiler only, and the collector's makes every running thread of the
//!   process execute a full fence, which is as good as both sides having
//!   one; mutators, who enter and leave once per job and per embedder's
//!   call, then pay no atomic read-modify-write for it. The same pair
//!   orders a mutator's `IDLE` store before its load of `stop` when it
//!   leaves, so a collector that saw it running is told (or sees `IDLE`).
//! - No object lock is held at a safepoint (see `vm::object`), so a parked
//!   mutator never blocks another one that the collector waits for.
//!
//! # Concurrent marking
//!
//! By default (off with `RAYA_GC_CONCURRENT=0` or
//! [`SharedHeap::set_concurrent_marking`]) a cycle is a short pause that
//! begins it ([`SharedHeap::begin`]: roots and
//! every live task's registers shaded, `marking` and black allocation on),
//! assists at the mutators' safepoints ([`Heap::assist`]), and a short
//! pause that ends it when nothing is grey ([`SharedHeap::end_marking`]).
//! Turned off, the three run back to back in one pause.
//!
//! # The write barrier
//!
//! Snapshot-at-the-beginning (Yuasa deletion): while marking, a value is
//! shaded before it can leave a place the marker has not scanned, so
//! everything reachable when the cycle began is marked. Invariants:
//!
//! - Every change of a mutable body goes through `MutRef::deref_mut`,
//!   which, before the body's first change in a cycle, shades all it holds
//!   and records the cycle in the `Mut` (so this covers property tables,
//!   array elements and `length`, every array method, cells, Map/Set,
//!   class tables, accessors, iterators and generators, closure homes).
//! - Values held outside a `Mut`: a promise's reactions are shaded when
//!   `Completion::settle` drains them; a channel's queues when it is first
//!   locked in a cycle. A task's registers and resume value are scanned in
//!   the begin pause, so they need none; roots likewise.
//! - The thread-local `MARK_EPOCH` is the barrier epoch of the heap the
//!   thread mutates: odd while it marks, even between cycles in
//!   generational mode, 0 when no barrier is needed. It changes only in a
//!   pause, and every way back to the heap refreshes it (`enter`, leaving
//!   a park, ending a pause); a thread that is not a mutator changes
//!   objects only with the world stopped by [`Heap::stop_world`], which
//!   first finishes a cycle.
//!
//! # Generational mode
//!
//! On unless `RAYA_GC_GENERATIONAL=0` ([`SharedHeap::set_generational`]);
//! the reasoning is in `design/memory.md`, "Generational mode". Sticky
//! mark bits with two ages: an object that survives one cycle is a
//! *survivor* (`Header::SURVIVOR`, its mark cleared again, still young);
//! one that survives a second is *old* (`Header::OLD`, its mark kept). A
//! minor cycle marks from the roots, the young objects and the remembered
//! set, and sweeps only the young (the threads' lists and the last
//! sweep's survivors); a full cycle runs under the same rules over every
//! object, the old ones unmarked first, so it ages what it finds instead
//! of promoting it all. Invariants:
//!
//! - An old object that points to a young one is in the remembered set
//!   (its `Mut` body: `MutRef::deref_mut` remembers a body on its first
//!   change in a mutator epoch, or while a cycle marks, even after the
//!   marker read it: a generational marker does not stamp what it reads,
//!   see `Mut::trace_locked`), or the young value is ([`remember`], where
//!   a value is stored outside a `Mut`). Task registers have no barrier:
//!   every cycle scans every live task in its first pause, old ones too
//!   (`Marker::old_tasks`).
//! - So that aging keeps the first invariant: whatever an object that
//!   will be old at the end of the cycle reaches (an old object, a
//!   survivor marked again, a remembered body or value, or an object
//!   itself so reached) is promoted with it (`Header::TENURE`, set by the
//!   marker; an object first marked from young ones and then so reached
//!   is traced again, by whichever marker sets the flag). The sweep ages
//!   only the others (`SweepMode::Age`), so no old object points to a
//!   survivor it was not remembered for.
//! - Remembered entries stay valid until the next cycle's first pause
//!   consumes them: they were reached by a mutator after the last cycle
//!   ended (or during a cycle, while reachable), and only the sweep of a
//!   cycle that did not mark an object frees it.
//! - Before a minor cycle, marked means old; before a full one, no object
//!   is marked (the old keep `OLD`). The cycle that ends decides the next
//!   one's kind and sweeps accordingly (`end_marking`); an unforeseen full
//!   cycle clears the old marks itself (`Sweep::clear_marks`).
//! - What is made while a cycle marks is not part of it: born with that
//!   cycle's epoch (`Header::born`), skipped by the marker and the
//!   deletion barrier, left on the threads' lists (young).
//!
//! # What the trigger counts
//!
//! Every byte a script can make the heap hold: a new object's size
//! ([`body_size`]), and every later *growth* of an object's storage (an
//! array's, a property table's, a Map's or Set's, a task's registers and
//! frames), reported by whoever grows it through [`count_growth`] (or
//! [`counted`], which compares capacities around an operation). Both add to
//! a per-thread figure that joins the shared count in 256 KiB chunks, so
//! the hot path is a thread-local add. Growth is counted on the thread
//! that grows, into the heap that thread last entered, whichever thread
//! allocated the object: the count is one sum for the whole program, so
//! the trigger is right with several workers. Shrinking is not tracked as
//! it happens; the marker measures every object it traces again, so the
//! live figure after a collection ([`GcStats::live_bytes`]) reflects what
//! was freed and shrunk.

use super::atom::Atom;
use super::object::{ArrayBody, Body, Function, Header, JsStr, Mut, Obj, StrText, INLINE_STR};
use super::ops::{Fault, OpResult};
use super::sweep::{Sweep, SweepMode};
use super::task::Task;
use super::value::Value;
use parking_lot::{Condvar, Mutex};
use std::cell::{Cell, RefCell, UnsafeCell};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// The floor of the heap goal for a heap that keeps a MiB or more: a
/// collection never starts before the heap holds this much (see "Pacing"
/// in `design/memory.md`).
const MIN_THRESHOLD: usize = 4 << 20;

/// The floor of the heap goal for a heap that keeps almost nothing: a
/// cycle's allocation then still fits in a core's L2 cache when the sweep
/// reads its marks and the allocator hands its blocks out again.
const SMALL_FLOOR: usize = 1 << 20;

/// The floor is at least this many times the live heap (up to
/// [`MIN_THRESHOLD`]), so that what a cycle marks and sweeps again — the
/// survivors — stays under an eighth of what it frees.
const FLOOR_PER_LIVE: usize = 9;

/// Default growth of the heap between collections, in percent of the live
/// heap (Go's `GOGC` default).
pub const DEFAULT_GC_PERCENT: u32 = 100;

/// How a program's heap is paced and bounded (`raya run`'s
/// `RAYA_GC_PERCENT`, `--max-heap` and `RAYA_GC_STRESS`; the embedding
/// builder's `gc_percent` and `max_heap`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcConfig {
    /// The heap may grow by this percent of the live heap before the next
    /// collection; None: no collection except under `max_heap`.
    pub percent: Option<u32>,
    /// The most bytes the counted heap may hold; None: no limit.
    pub max_heap: Option<usize>,
    /// Collect at every safepoint (a testing aid that finds missed roots).
    pub stress: bool,
}

impl Default for GcConfig {
    fn default() -> Self {
        GcConfig { percent: Some(DEFAULT_GC_PERCENT), max_heap: None, stress: false }
    }
}

/// The heap goal after a collection that left `live` bytes: the counted
/// heap may reach `live × (1 + percent/100)`, never less than the floor
/// ([`heap_floor`]), and never more than the heap limit (so a collection
/// starts before the limit is reached). `usize::MAX`: never.
pub fn heap_goal(live: usize, cfg: &GcConfig) -> usize {
    let paced = match cfg.percent {
        Some(p) => {
            let grown = (live as u128 * (100 + p as u128) / 100).min(usize::MAX as u128) as usize;
            grown.max(heap_floor(live))
        }
        None => usize::MAX,
    };
    match cfg.max_heap {
        Some(limit) => paced.min(limit),
        None => paced,
    }
}

/// The smallest goal for a live heap of `live` bytes: [`FLOOR_PER_LIVE`]
/// times it, between [`SMALL_FLOOR`] and [`MIN_THRESHOLD`]. A program that
/// keeps almost nothing (its built-ins: about 0.1 MiB) collects every MiB,
/// while what it made since the last cycle is still in cache; one that
/// keeps more collects less often, so that marking and sweeping its
/// survivors again costs little beside the garbage each cycle frees.
pub fn heap_floor(live: usize) -> usize {
    live.saturating_mul(FLOOR_PER_LIVE).clamp(SMALL_FLOOR, MIN_THRESHOLD)
}

/// How many sweep chunks an allocating thread sweeps each time it has
/// allocated [`LOCAL_CHUNK`] bytes, for a sweep of `objects` objects
/// followed by `threshold` bytes of allocation before the next cycle: as
/// many as finish the sweep within the first [`SWEEP_WITHIN`] of those
/// bytes (by one thread alone; several allocating threads finish sooner).
///
/// Why early: memory the sweep has not yet freed cannot be reused, so
/// until it is done every allocation takes fresh memory. At one chunk a
/// step, a sweep whose heap held more objects than the cycle allocates (a
/// heap of small strings) was still running when the next cycle began,
/// and the process held the last cycle's garbage beside the new one:
/// `json` peaked at 26.6 MiB instead of 22.7, `binary-trees` at 31.1
/// instead of 27.0 (design/memory.md, "The sweep's pace"). The work is the
/// same, only done sooner: a step of several chunks is a longer stretch of
/// sweeping on the allocating thread, never a pause of the others.
pub(crate) fn sweep_pace(objects: usize, threshold: usize) -> usize {
    let steps = (threshold / SWEEP_WITHIN / LOCAL_CHUNK).max(1);
    objects.div_ceil(super::sweep::CHUNK).div_ceil(steps).max(1)
}

/// The sweep of a cycle is done within the first 1/`SWEEP_WITHIN` of the
/// next cycle's allocation ([`sweep_pace`]).
const SWEEP_WITHIN: usize = 4;

/// The strings of at most one byte — `""` and the 128 one-character ASCII
/// strings (a one-byte string is always ASCII) —, made once per process and
/// shared by every program: never allocated, counted, swept or freed.
/// `split` on spaces makes such words, and `s[i]`, `charAt` and
/// `split("")` of ASCII text make nothing else; each was an 80-byte object
/// for the sweep to free.
///
/// Invariants that make an object outside every heap safe:
/// - **Marked forever.** Each is born marked and is on no thread's
///   allocation list and in no sweep segment, so no sweep or
///   `Sweep::clear_marks` ever clears its mark: the marker's swap and the
///   barrier's shade see it marked and neither queue nor trace it (it
///   holds no reference, so there is nothing to trace), the live size does
///   not count it, and the end-of-marking check finds it marked. In
///   generational mode marked means old; an old object that holds no
///   reference never needs the remembered set. Its `born` is 0, which is
///   no cycle's epoch.
/// - **Immutable.** A string's body never changes, and `frozen` is an
///   array's flag, so the only writes the objects ever see are the
///   markers' swaps of an already-set mark (atomic, harmless to share).
/// - **Never freed.** They live in a static for the life of the process,
///   so a program's teardown, which frees what its lists and sweep hold,
///   never meets them, and a value naming one stays valid in any program.
static SHARED_STRS: std::sync::OnceLock<Box<[Obj]>> = std::sync::OnceLock::new();

/// The shared string of `b` if it has at most one byte (see
/// [`SHARED_STRS`]). `b` must be the bytes of a string (one byte is then
/// ASCII).
#[inline]
pub fn shared_str(b: &[u8]) -> Option<Value> {
    match *b {
        [] => Some(shared_at(128)),
        [c] => {
            debug_assert!(c.is_ascii());
            Some(shared_at(c as usize & 127))
        }
        _ => None,
    }
}

#[inline]
fn shared_at(i: usize) -> Value {
    let all = SHARED_STRS.get_or_init(|| {
        (0..=128u8)
            .map(|i| {
                let text = if i == 128 { String::new() } else { char::from(i).to_string() };
                let header = Header::new(true, 0);
                header.gen.store(Header::OLD, Ordering::Relaxed);
                Obj { header, body: Body::Str(JsStr::ascii_from(&text)) }
            })
            .collect()
    });
    Value::object(&all[i])
}

/// Whether `o` is one of the process's shared strings (see [`SHARED_STRS`]).
pub fn is_shared(o: &Obj) -> bool {
    SHARED_STRS.get().is_some_and(|all| all.as_ptr_range().contains(&(o as *const Obj)))
}

/// The text of the heap-limit RangeError's message.
pub fn heap_limit_message(limit: usize) -> String {
    format!("out of memory: heap limit {} reached", format_size(limit))
}

/// `limit` as a user wrote it: `256 MB`, `1 GB`, `512 KB` (units of 1024),
/// or bytes.
pub fn format_size(n: usize) -> String {
    if n >= 1 << 30 && n.is_multiple_of(1 << 30) {
        format!("{} GB", n >> 30)
    } else if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}

/// Parses a heap size: a number of bytes with an optional unit, `k`/`KB`/
/// `KiB`, `m`/`MB`/`MiB`, `g`/`GB`/`GiB` (any case, all powers of 1024),
/// e.g. `256MB`, `1GB`, `512k`. Zero, fractions and overflow are refused.
pub fn parse_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    if digits == 0 {
        return None;
    }
    let n: usize = s[..digits].parse().ok()?;
    let shift = match s[digits..].trim_start().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return None,
    };
    let bytes = n.checked_mul(1usize << shift)?;
    (bytes > 0).then_some(bytes)
}

/// CPU time this thread has used, in nanoseconds (0 where it cannot be
/// read).
pub(crate) fn thread_cpu_ns() -> u64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid out-pointer.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
        }
    }
    0
}

/// Bytes a thread allocates before it adds them to the shared count.
const LOCAL_CHUNK: usize = 256 << 10;

/// Below this much counted since the last collection, a collection is not
/// forced before a heap-limit error: it could free little, and the retry
/// must end.
const RETRY_SLACK: usize = 1 << 20;

thread_local! {
    /// Bytes of growth counted on this thread and not yet added to a
    /// shared count (see "What the trigger counts").
    static GROWN: Cell<usize> = const { Cell::new(0) };
    /// The program heap this thread last entered: where its growth counts.
    /// Weak, so a thread that outlives a program does not keep its heap.
    static GROWTH_HEAP: RefCell<Weak<SharedHeap>> = const { RefCell::new(Weak::new()) };
    /// That heap has a limit, so growth must be checked ([`check_growth`]).
    static LIMITED: Cell<bool> = const { Cell::new(false) };
    /// The last fault on this thread came from the heap limit at a point
    /// where nothing had been done yet and a collection could help: the
    /// interpreter may collect and run the instruction again (see
    /// [`take_limit_retry`]).
    static LIMIT_RETRY: Cell<bool> = const { Cell::new(false) };
    /// A `catch` on this thread took a throw since the last heap-limit
    /// failure: what the `try` block held may be garbage now, however
    /// little was counted since the last collection (see [`caught_throw`]).
    static CAUGHT_SINCE_FAILURE: Cell<bool> = const { Cell::new(false) };
    /// The barrier epoch of the heap this thread mutates (see "The write
    /// barrier"): odd while that heap is marking (the marking cycle), even
    /// between cycles in generational mode (the mutator epoch), 0 when no
    /// barrier is needed. Refreshed whenever the thread enters the heap,
    /// leaves a safepoint or ends a pause, which is where epochs change.
    static MARK_EPOCH: Cell<u32> = const { Cell::new(0) };
    /// That heap, while `MARK_EPOCH` is not 0 (kept alive by this thread's
    /// `Heap` handle, which clears it when dropped).
    static MARK_HEAP: Cell<*const SharedHeap> = const { Cell::new(std::ptr::null()) };
}

/// Barrier epochs are drawn from one process-wide counter, so no two
/// phases of any heap share a number (an object can never carry an epoch
/// that looks current by accident): odd for marking cycles, even and never
/// 0 for mutator epochs.
static EPOCHS: AtomicU32 = AtomicU32::new(0);

/// The kinds of barrier epoch, by their two low bits.
const MUTATOR_EPOCH: u32 = 0;
const MAJOR_EPOCH: u32 = 1;
const MINOR_EPOCH: u32 = 3;

fn next_epoch(kind: u32) -> u32 {
    loop {
        let e = EPOCHS.fetch_add(1, Ordering::Relaxed).wrapping_shl(2) | kind;
        // Never 0: a mutator epoch must not read as "no barrier".
        if e != 0 {
            return e;
        }
    }
}

/// Whether the generational barrier remembers in barrier epoch `e`:
/// between cycles (a mutator epoch) and while a minor cycle marks.
#[inline]
pub(crate) fn remembers(e: u32) -> bool {
    e & 3 != MAJOR_EPOCH
}

/// The barrier epoch of the heap this thread mutates, or 0 when no
/// barrier is needed (the write barrier's fast-path test).
#[inline(always)]
pub(crate) fn barrier_epoch() -> u32 {
    MARK_EPOCH.get()
}

/// The write barrier for a value about to be overwritten or removed from
/// a place the marker has not scanned (see "The write barrier"): while the
/// heap is marking, the value is shaded (marked and queued for tracing).
/// Bodies in a [`Mut`] get this from `MutRef::deref_mut`; the few places
/// outside one (a promise's reactions, a channel's queues) call it.
#[inline]
pub fn shade(v: Value) {
    if MARK_EPOCH.get() & 1 == 1 {
        shade_slow(v);
    }
}

#[inline]
fn shade_slow(v: Value) {
    if let Some(o) = v.as_obj() {
        // An object made during this (minor) cycle is not part of it.
        if o.header.born == MARK_EPOCH.get() {
            return;
        }
        if !o.header.marked.load(Ordering::Relaxed) && !o.header.marked.swap(true, Ordering::Relaxed) {
            let h = MARK_HEAP.get();
            debug_assert!(!h.is_null());
            // SAFETY: set with a nonzero epoch only while this thread's
            // handle keeps the heap alive (see `MARK_HEAP`).
            unsafe { (*h).grey.lock().push(o as *const Obj as usize) };
        }
    }
}

/// The generational barrier for a value stored into a place outside a
/// [`Mut`] that may belong to an old object (a promise's outcome and
/// reactions, a channel's buffer and blocked senders): between cycles in
/// generational mode, a young value (unmarked) is remembered, and the next
/// minor cycle marks it (see "Generational mode"). Marking, nothing: the
/// deletion barrier and black allocation already cover the store.
#[inline]
pub fn remember(v: Value) {
    let e = MARK_EPOCH.get();
    if e != 0 && remembers(e) {
        remember_slow(v);
    }
}

#[cold]
fn remember_slow(v: Value) {
    if let Some(o) = v.as_obj() {
        // Not old, nor to be old when the last cycle's sweep reaches it
        // (a young object, a survivor, or one marked by the last minor
        // cycle that the sweep will let age).
        let g = o.header.gen.load(Ordering::Relaxed);
        if !o.header.marked.load(Ordering::Relaxed) || g & Header::PROMOTES == 0 {
            // SAFETY: as in `shade_slow`.
            unsafe { (*MARK_HEAP.get()).remembered.lock().values.push(v.bits()) };
        }
    }
}

/// Traces a remembered body: see `object::trace_remembered`.
pub(crate) type TraceBody = unsafe fn(usize, u32, &mut dyn FnMut(Value));

/// Puts a body of an old object into the remembered set (`MutRef`'s
/// barrier, before its first change in a mutator epoch).
pub(crate) fn remember_body(p: usize, f: TraceBody) {
    let h = MARK_HEAP.get();
    debug_assert!(!h.is_null());
    // SAFETY: as in `shade_slow`.
    unsafe { (*h).remembered.lock().bodies.push((p, f)) };
}

/// The remembered set (see "Generational mode"): what the next minor
/// cycle must trace besides the roots and the young objects.
#[derive(Default)]
struct Remembered {
    /// Bodies (`Mut`s) of old objects changed since the last cycle ended.
    bodies: Vec<(usize, TraceBody)>,
    /// Young values stored outside a `Mut` since the last cycle ended.
    values: Vec<u64>,
}

/// Checks that the heap may grow by `bytes` under its limit (if any): the
/// point where an allocation can fail cleanly. Cheap without a limit (a
/// thread-local load). Past the limit it is a RangeError ("out of memory:
/// heap limit … reached"); when garbage may have been allocated since the
/// last collection, the interpreter collects first and runs the operation
/// again (only a heap that is still full after a collection throws).
#[inline]
pub fn check_growth(bytes: usize) -> OpResult<()> {
    if !LIMITED.get() {
        return Ok(());
    }
    check_growth_slow(bytes)
}

#[cold]
fn check_growth_slow(bytes: usize) -> OpResult<()> {
    let Some(heap) = GROWTH_HEAP.try_with(|h| h.borrow().upgrade()).ok().flatten() else { return Ok(()) };
    let since = heap.allocated_since_gc.load(Ordering::Relaxed) + GROWN.get();
    heap.check(since, bytes)
}

/// While alive, this thread's allocations are not checked against the
/// heap limit: for text the engine makes for itself (error messages,
/// stack traces, property keys, reports), which must not fail because a
/// script filled the heap. Such text is short or bounded by the string
/// length limit.
pub struct Unlimited(bool);

impl Unlimited {
    pub fn new() -> Unlimited {
        Unlimited(LIMITED.replace(false))
    }
}

impl Default for Unlimited {
    fn default() -> Self {
        Unlimited::new()
    }
}

impl Drop for Unlimited {
    fn drop(&mut self) {
        LIMITED.set(self.0);
    }
}

/// True (once) when the last heap-limit fault on this thread may succeed
/// after a collection.
/// Notes that a `catch` took a throw on this thread. The structure that
/// filled the heap is often garbage once its `try` block is left, while the
/// live figure of the last collection still counts it: the next failure at
/// the limit is then worth one collection even right after another.
pub fn caught_throw() {
    CAUGHT_SINCE_FAILURE.set(true);
}

pub fn take_limit_retry() -> bool {
    LIMIT_RETRY.replace(false)
}

/// Forgets a heap-limit fault that is not retried (the operation did
/// something before it failed, so running it again would repeat that).
pub fn no_limit_retry() {
    LIMIT_RETRY.set(false);
}

/// Counts `bytes` by which a heap object's storage grew. Cheap: a
/// thread-local add; every 256 KiB the figure joins the shared count and
/// may request a collection.
#[inline]
pub fn count_growth(bytes: usize) {
    let n = GROWN.get() + bytes;
    if n >= LOCAL_CHUNK {
        flush_growth(n);
    } else {
        GROWN.set(n);
    }
}

#[cold]
fn flush_growth(n: usize) {
    GROWN.set(0);
    // `try_with`: nothing is counted while the thread is torn down.
    if let Some(heap) = GROWTH_HEAP.try_with(|h| h.borrow().upgrade()).ok().flatten() {
        heap.add_count(n);
    }
}

/// Runs `f` on `v` and counts any growth of its capacity.
#[inline]
pub fn counted<T, R>(v: &mut Vec<T>, f: impl FnOnce(&mut Vec<T>) -> R) -> R {
    let before = v.capacity();
    let r = f(v);
    let after = v.capacity();
    if after > before {
        count_growth((after - before) * std::mem::size_of::<T>());
    }
    r
}

const IDLE: u8 = 0;
const RUNNING: u8 = 1;
const PARKED: u8 = 2;

/// The objects one thread allocated (see "Threads" above).
struct AllocList {
    objects: UnsafeCell<Vec<*mut Obj>>,
}

// SAFETY: a list is touched by its owning thread while that thread is not
// stopped, and by the collector only while the world is stopped.
unsafe impl Send for AllocList {}
unsafe impl Sync for AllocList {}

/// One worker's mutator state (see "Threads" above).
pub struct MutatorSlot {
    state: AtomicU8,
    /// While `PARKED`: the task the worker is running (a root), or null.
    parked_task: UnsafeCell<*const Task>,
}

// SAFETY: `parked_task` is written by the owner before it publishes
// `PARKED` (under the gate lock) and read by the collector after.
unsafe impl Send for MutatorSlot {}
unsafe impl Sync for MutatorSlot {}

/// Where a thread allocates: its own list in the program's shared heap.
pub struct Heap {
    shared: Arc<SharedHeap>,
    list: Arc<AllocList>,
    /// Bytes allocated here and not yet added to the shared count.
    local_bytes: usize,
}

/// What all threads of a program share: the lists, the collection
/// trigger, and the stop-the-world handshake.
pub struct SharedHeap {
    lists: Mutex<Vec<Arc<AllocList>>>,
    slots: Mutex<Vec<Arc<MutatorSlot>>>,
    allocated_since_gc: AtomicUsize,
    threshold: AtomicUsize,
    /// A collection is wanted: mutators call `safepoint` at the next one.
    requested: AtomicBool,
    /// The world is stopping or stopped for a collection.
    stop: AtomicBool,
    /// Sleep/wake for the handshake (parked mutators, the collector).
    gate: Mutex<()>,
    changed: Condvar,
    pub stats: Mutex<GcStats>,
    /// Pacing and limit (see [`GcConfig`]); set before the program runs.
    config: Mutex<GcConfig>,
    /// Bytes measured by the last sweep (0 before the first).
    live: AtomicUsize,
    /// The heap limit in bytes (`usize::MAX`: none), copied out of
    /// `config` for the allocation paths.
    limit: AtomicUsize,
    /// Collect at every safepoint (see [`GcConfig::stress`]).
    stress: AtomicBool,
    /// The concurrent sweep of the last collection (`vm::sweep`).
    sweep: Arc<Sweep>,
    /// Sweep chunks each allocating thread sweeps per [`LOCAL_CHUNK`] it
    /// allocates ([`sweep_pace`]); set in the pause that starts a sweep.
    sweep_chunks: AtomicUsize,
    /// Collectors finishing the last sweep before they stop the world.
    finishing_sweep: AtomicUsize,
    /// A marking cycle is under way (set and cleared with the world
    /// stopped; see "Concurrent marking").
    marking: AtomicBool,
    /// The current (or last) marking cycle's number, never 0.
    epoch: AtomicU32,
    /// Grey objects: marked, not yet traced. Filled by the start of a
    /// cycle (the roots), the write barrier and markers handing back what
    /// they did not finish.
    grey: Mutex<Vec<usize>>,
    /// Bytes of the objects traced in this cycle.
    traced: AtomicUsize,
    /// Of `traced`, in a minor cycle, the bytes of the objects it promotes,
    /// and of those, the survivors of the cycle before.
    promoted: AtomicUsize,
    survivors_traced: AtomicUsize,
    /// Full cycles to run before the next minor one, because minor cycles
    /// did not pay (see `end_marking`), and the length of the last such
    /// run.
    full_left: AtomicU32,
    full_run: AtomicU32,
    /// The old generation's estimated size: what the last full cycle
    /// measured plus what minor cycles promoted since.
    old_bytes: AtomicUsize,
    /// The count of bytes since the last collection when this cycle began:
    /// what is counted after it was allocated black (or grew) during
    /// marking, and is carried into the next cycle's count at its end.
    counted_at_start: AtomicUsize,
    /// When this cycle began (for the marking time in the stats).
    mark_began: Mutex<Option<Instant>>,
    /// Mark beside the program (begin, assists, end) instead of in one
    /// pause (see "Concurrent marking" in `design/memory.md`). On unless
    /// `RAYA_GC_CONCURRENT=0` or [`SharedHeap::set_concurrent_marking`]
    /// turns it off (to compare, or to rule the barrier out).
    concurrent: AtomicBool,
    /// Minor cycles between full ones (see "Generational mode"). On
    /// unless `RAYA_GC_GENERATIONAL=0` or [`SharedHeap::set_generational`]
    /// turns it off.
    generational: AtomicBool,
    /// The cycle under way (or the last) is a full one.
    major: AtomicBool,
    /// The next cycle must be a full one: set when a cycle ends, from the
    /// growth of the old generation (see [`SharedHeap::end_marking`]).
    next_major: AtomicBool,
    /// The last sweep kept the marks of the survivors (sticky: they are the
    /// old generation). A full cycle that was not foreseen must clear them
    /// first ([`Sweep::clear_marks`]).
    sticky: AtomicBool,
    /// The live bytes measured by the last full cycle: the old
    /// generation's size it grows from.
    full_base: AtomicUsize,
    /// What the next minor cycle traces besides roots and young objects.
    remembered: Mutex<Remembered>,
    /// Remembered bodies handed to this minor cycle's markers: grey work
    /// besides `grey`.
    grey_bodies: Mutex<Vec<(usize, TraceBody)>>,
    /// Objects are allocated marked: a full cycle is marking.
    alloc_black: AtomicBool,
    /// Objects are allocated with this `born` epoch: a minor cycle is
    /// marking (0 otherwise).
    alloc_born: AtomicU32,
    /// The young objects of a minor cycle: the threads' lists taken when
    /// it began, swept when it ends (what is made meanwhile stays young).
    young: Mutex<Vec<super::sweep::Segment>>,
}

/// Upper bounds (in microseconds) of the buckets of the pause histogram;
/// the last bucket holds every longer pause.
pub const PAUSE_BUCKETS_US: [u64; 8] = [100, 250, 500, 1_000, 2_000, 5_000, 10_000, 50_000];

#[derive(Default, Clone, Debug)]
pub struct GcStats {
    pub collections: u64,
    /// Stop-the-world time: from the moment a collector claims the world
    /// (including the wait for every worker to reach a safepoint) until it
    /// restarts it.
    pub total_pause_ns: u128,
    pub max_pause_ns: u128,
    /// CPU time the collecting thread used in its pauses (total and the
    /// longest): the pause's own work, which on a loaded machine is far
    /// below its wall-clock length (the OS may deschedule the collector).
    pub total_pause_cpu_ns: u64,
    pub max_pause_cpu_ns: u64,
    /// Pauses by length: `pause_histogram[i]` counts those of at most
    /// `PAUSE_BUCKETS_US[i]` µs (and above the previous bound); the last
    /// entry, those longer than every bound.
    pub pause_histogram: [u64; PAUSE_BUCKETS_US.len() + 1],
    /// CPU time spent sweeping, on every thread, with the world running.
    pub sweep_ns: u64,
    /// Time collectors waited, before stopping the world, for a sweep
    /// still in progress (helping with it or not).
    pub sweep_wait_ns: u64,
    /// Objects freed (by sweeps finished so far).
    pub freed: u64,
    /// Bytes of the objects that survived the last collection, measured
    /// by the marker (what was allocated while it ran is not included:
    /// see "Pacing" in `design/memory.md`).
    pub live_bytes: u64,
    /// Wall-clock time during which marking ran beside the program
    /// (from the pause that starts a cycle to the one that ends it).
    pub mark_ns: u64,
    /// CPU time mutators spent marking at their safepoints (assists).
    pub assist_ns: u64,
    /// Of `collections`, the minor ones (generational mode: young objects
    /// and the remembered set only).
    pub minor_collections: u64,
    /// Every pause, when a trace is recorded (`Some` turns logging on).
    pub log: Option<Vec<crate::trace::GcPause>>,
}

/// Marks reachable objects; given to root providers during a collection.
pub struct Marker {
    stack: Vec<*const Obj>,
    /// Bytes of the objects traced so far: the live heap, with what was
    /// allocated during marking, once marking is done. Measured while
    /// tracing, under each body's lock, so the concurrent sweep never
    /// reads a body a mutator may be changing.
    live: usize,
    /// The marking cycle (see [`Mut::trace_locked`]).
    epoch: u32,
    /// Checking instead of marking (debug builds under `RAYA_GC_STRESS`):
    /// the objects seen so far; each must already be marked.
    check: Option<std::collections::HashSet<usize>>,
    /// Marking the roots of a minor cycle: a root that is an old task is
    /// kept in `old_tasks`, for its registers are scanned all the same
    /// (they have no barrier; see "Generational mode").
    minor_roots: bool,
    old_tasks: Vec<*const Obj>,
    /// A generational cycle's marker (aging applies).
    aging: bool,
    /// What is marked now is reached from an object that will be old when
    /// this minor cycle ends (a remembered body or value, a survivor, or
    /// an object itself so reached): it is promoted with it (`TENURE`).
    tenure: bool,
    /// Of `live`, the bytes of objects traced as promoted (`tenure`): what
    /// joins the old generation; and of those, the survivors' (objects
    /// that had survived a cycle before this one).
    promoted: usize,
    survivors: usize,
    /// Checking: the cycle whose objects made during it may be unmarked.
    check_epoch: u32,
    /// The object being traced (for the check's report).
    tracing: Option<*const Obj>,
}

impl Marker {
    fn new(epoch: u32) -> Marker {
        Marker {
            stack: Vec::with_capacity(256),
            live: 0,
            epoch,
            check: None,
            minor_roots: false,
            old_tasks: Vec::new(),
            aging: epoch & 3 == MINOR_EPOCH,
            tenure: false,
            promoted: 0,
            survivors: 0,
            check_epoch: 0,
            tracing: None,
        }
    }

    #[inline]
    pub fn mark(&mut self, v: Value) {
        if let Some(o) = v.as_obj() {
            if let Some(seen) = &mut self.check {
                if seen.insert(o as *const Obj as usize) {
                    if !(o.header.marked.load(Ordering::Relaxed) || o.header.born == self.check_epoch) {
                        // SAFETY: the parent is a live object this check traced.
                        let parent = self.tracing.map_or("a root", |p| body_kind(&unsafe { &*p }.body));
                        panic!(
                            "reachable object not marked at the end of marking (a missed write barrier): \
                             {} (made in cycle {}) held by {parent}, in {} cycle {}",
                            body_kind(&o.body),
                            o.header.born,
                            if self.check_epoch & 3 == MINOR_EPOCH { "generational" } else { "non-generational" },
                            self.check_epoch
                        );
                    }
                    self.stack.push(o as *const Obj);
                }
                return;
            }
            if o.header.born == self.epoch {
                // Made during this minor cycle: young at its end, not
                // traced by it (see "Generational mode").
                return;
            }
            if !o.header.marked.swap(true, Ordering::Relaxed) {
                if self.tenure {
                    o.header.gen.fetch_or(Header::TENURE, Ordering::Relaxed);
                }
                self.stack.push(o as *const Obj);
                return;
            }
            if self.tenure {
                // Marked already: old, a survivor (promoted anyway), or
                // young and reached before only from young objects. The
                // last is promoted too now, and traced again so that what
                // it reaches is as well (the first trace may have missed
                // the flag; whichever marker sets it traces again).
                let g = o.header.gen.load(Ordering::Relaxed);
                if g & Header::PROMOTES == 0
                    && o.header.gen.fetch_or(Header::TENURE, Ordering::Relaxed) & Header::TENURE == 0
                {
                    self.stack.push(o as *const Obj);
                }
            }
            if self.minor_roots && matches!(o.body, Body::Task(_)) {
                self.old_tasks.push(o as *const Obj);
            }
        }
    }

    pub fn mark_all(&mut self, vs: &[Value]) {
        for &v in vs {
            self.mark(v);
        }
    }

    fn mark_completion(&mut self, c: &crate::sync::Completion) {
        let g = c.inner.lock();
        if let Some(o) = g.outcome() {
            self.mark(o.value());
        }
        for r in g.reactions() {
            r.roots(|v| self.mark(v));
        }
    }

    /// Traces everything on the stack and whatever that reaches.
    fn drain(&mut self) {
        while let Some(p) = self.stack.pop() {
            // SAFETY: only live objects are pushed.
            let o = unsafe { &*p };
            self.tracing = Some(p);
            self.live += self.trace(o);
        }
    }

    /// Traces at most `n` objects; true when the stack is empty.
    fn drain_some(&mut self, n: usize) -> bool {
        for _ in 0..n {
            let Some(p) = self.stack.pop() else { return true };
            // SAFETY: only live objects are pushed.
            let o = unsafe { &*p };
            self.live += self.trace(o);
        }
        self.stack.is_empty()
    }

    /// Marks what `o` references and returns its size ([`body_size`]).
    /// Each mutable body is read under its lock, so this is sound with
    /// mutators running; a body the write barrier already shaded in this
    /// cycle is not read again ([`Mut::trace_locked`]).
    fn trace(&mut self, o: &Obj) -> usize {
        // In a minor cycle, an object that will be old when it ends
        // promotes what it reaches (see "Generational mode"): read before
        // its body, so a flag set after this read makes its setter trace
        // the object again.
        let g = o.header.gen.load(Ordering::Relaxed);
        self.tenure = self.aging && g & Header::PROMOTES != 0;
        let size = self.trace_body(o);
        if self.tenure {
            self.promoted += size;
            if g & Header::SURVIVOR != 0 {
                self.survivors += size;
            }
        }
        size
    }

    fn trace_body(&mut self, o: &Obj) -> usize {
        const V: usize = std::mem::size_of::<Value>();
        let e = self.epoch;
        let base = std::mem::size_of::<Obj>();
        match &o.body {
            Body::Str(s) => base + s.s.heap_bytes(),
            Body::Array(a) => {
                for &(_, v) in a.extras.iter().flatten() {
                    self.mark(v);
                }
                let g = a.lock();
                Mut::trace_locked(&g, e, &mut |v| self.mark(v));
                base + g.capacity() * V
            }
            Body::Object(d) => {
                let g = d.lock();
                Mut::trace_locked(&g, e, &mut |v| self.mark(v));
                base + g.props.capacity_bytes()
            }
            Body::Function(Function::Closure(c)) => {
                for &v in c.upvals.iter() {
                    self.mark(v);
                }
                for &v in c.proto.consts.iter() {
                    self.mark(v);
                }
                let g = c.home.lock();
                Mut::trace_locked(&g, e, &mut |v| self.mark(v));
                base + c.upvals.len() * V
            }
            Body::Function(Function::Native(n)) => {
                self.mark(n.data);
                base + 32
            }
            Body::Function(Function::Bound(b)) => {
                self.mark(b.target);
                self.mark(b.this);
                for &v in b.args.iter() {
                    self.mark(v);
                }
                base + 32
            }
            Body::Class(c) => {
                let g = c.lock();
                Mut::trace_locked(&g, e, &mut |v| self.mark(v));
                base + std::mem::size_of::<Mut<super::object::ClassData>>()
                    + g.proto_props.capacity_bytes()
                    + g.statics.capacity_bytes()
            }
            Body::Cell(c) => {
                let g = c.lock();
                Mut::trace_locked(&g, e, &mut |v| self.mark(v));
                base + 32
            }
            Body::Map(m) | Body::Set(m) => {
                let g = m.lock();
                Mut::trace_locked(&g, e, &mut |v| self.mark(v));
                base + g.capacity_bytes()
            }
            Body::Accessor(a) => {
                let g = a.lock();
                Mut::trace_locked(&g, e, &mut |v| self.mark(v));
                base + 32
            }
            Body::Task(cell) => {
                self.mark_completion(&cell.completion);
                // A live task's registers were scanned when the cycle
                // began (see "Concurrent marking"); one held elsewhere
                // is read if no one is running it.
                let exec = if e == 0 { Some(cell.exec.lock()) } else { cell.exec.try_lock() };
                let mut bytes = 0;
                if let Some(exec) = exec {
                    if let Some(t) = exec.as_ref() {
                        for v in t.roots() {
                            self.mark(v);
                        }
                        bytes = std::mem::size_of::<Task>() + t.capacity_bytes();
                    }
                }
                if let Some(v) = cell.resume.lock().get().and_then(|r| r.value()) {
                    self.mark(v);
                }
                base + std::mem::size_of::<crate::sync::TaskCell>() + bytes
            }
            Body::Promise(p) => {
                self.mark_completion(&p.completion);
                base + 32
            }
            Body::Channel(ch) => {
                // Buffered values and the values of blocked senders.
                let mut vs = Vec::new();
                ch.trace(|v| vs.push(v));
                self.mark_all(&vs);
                base + 64 + ch.buffer_bytes()
            }
            Body::Bytes(b) if Arc::strong_count(&b.buf) == 1 => base + b.len,
            Body::Mutex(_) | Body::WaitGroup(_) | Body::Semaphore(_) | Body::Bytes(_) => base + 32,
            Body::Host(h) => {
                self.mark(h.class);
                for &(_, v) in h.fields.iter() {
                    self.mark(v);
                }
                base + 32
            }
            Body::Iter(it) => {
                let g = it.lock();
                Mut::trace_locked(&g, e, &mut |v| self.mark(v));
                base + 32
            }
        }
    }

    /// At the start of a cycle: scans the registers and resume value of
    /// every task marked so far (the live tasks are roots), so that no
    /// task's registers need a barrier while marking (see "Concurrent
    /// marking"). The world is stopped: no task is running.
    fn scan_tasks(&mut self) {
        self.minor_roots = false;
        // Registers are roots of every cycle: what they hold may age.
        self.tenure = false;
        let old = std::mem::take(&mut self.old_tasks);
        let mut i = 0;
        while i < self.stack.len() + old.len() {
            let p = if i < old.len() { old[i] } else { self.stack[i - old.len()] };
            // SAFETY: only live objects are pushed.
            let o = unsafe { &*p };
            i += 1;
            if let Body::Task(cell) = &o.body {
                if let Some(t) = cell.exec.lock().as_ref() {
                    for v in t.roots() {
                        self.mark(v);
                    }
                }
                if let Some(v) = cell.resume.lock().get().and_then(|r| r.value()) {
                    self.mark(v);
                }
            }
        }
    }
}

/// A body's kind, for the verification's report.
fn body_kind(b: &Body) -> &'static str {
    match b {
        Body::Str(_) => "string",
        Body::Array(_) => "array",
        Body::Object(_) => "object",
        Body::Function(_) => "function",
        Body::Class(_) => "class",
        Body::Cell(_) => "cell",
        Body::Map(_) => "Map",
        Body::Set(_) => "Set",
        Body::Accessor(_) => "accessor",
        Body::Task(_) => "task",
        Body::Promise(_) => "promise",
        Body::Channel(_) => "channel",
        Body::Iter(_) => "iterator",
        _ => "other",
    }
}

/// Approximate bytes of an object and everything it owns, for the
/// collection trigger and the live figure: the `Obj` box plus the capacity
/// of its storage.
///
/// # Safety
/// No other thread may touch the object: it is being allocated (no other
/// thread can see it yet) or the world is stopped.
unsafe fn body_size(b: &Body) -> usize {
    const V: usize = std::mem::size_of::<Value>();
    std::mem::size_of::<Obj>()
        + match b {
            Body::Str(s) => s.s.heap_bytes(),
            Body::Array(a) => unsafe { a.get_stopped() }.capacity() * V,
            Body::Object(o) => unsafe { o.get_stopped() }.props.capacity_bytes(),
            Body::Function(Function::Closure(c)) => c.upvals.len() * V,
            // A new buffer counts once, not again for each view of it.
            Body::Bytes(b) if Arc::strong_count(&b.buf) == 1 => b.len,
            Body::Class(c) => {
                let c = unsafe { c.get_stopped() };
                std::mem::size_of::<Mut<super::object::ClassData>>()
                    + c.proto_props.capacity_bytes()
                    + c.statics.capacity_bytes()
            }
            Body::Map(m) | Body::Set(m) => unsafe { m.get_stopped() }.capacity_bytes(),
            Body::Task(cell) => std::mem::size_of::<crate::sync::TaskCell>() + task_bytes(cell),
            Body::Channel(ch) => 64 + ch.buffer_bytes(),
            _ => 32,
        }
}

/// Bytes of a task's execution state (registers, frames, handlers), while
/// it is not running.
/// Writes the body of the string of ASCII bytes `b` (at most
/// [`INLINE_STR`]) held in its object to `slot`: a zeroed buffer, then the
/// bytes copied straight into it. Filling a buffer on the stack and moving
/// the body in made the CPU reload bytes a `memcpy` had just stored at
/// other widths (a store-forwarding stall on every word `split` cuts and
/// every line `readLine` returns).
///
/// # Safety
/// `slot` is valid for writes and this thread's alone (the marker never
/// reads a string's bytes); `b` is ASCII, which keeps the buffer UTF-8.
#[inline(always)]
unsafe fn write_inline_ascii(slot: *mut Body, b: &[u8]) {
    debug_assert!(b.len() <= INLINE_STR && b.is_ascii());
    // SAFETY: the caller's promise; the body is written whole before the
    // bytes go in.
    unsafe {
        slot.write(Body::Str(JsStr {
            s: StrText::Inline { len: b.len() as u8, buf: [0; INLINE_STR] },
            utf16_len: b.len() as u32,
            key: super::object::KeyCache::new(),
        }));
        if let Body::Str(JsStr { s: StrText::Inline { buf, .. }, .. }) = &mut *slot {
            super::object::copy_short(buf, b);
        }
    }
}

fn task_bytes(cell: &crate::sync::TaskCell) -> usize {
    match cell.exec.try_lock().as_deref() {
        Some(Some(t)) => std::mem::size_of::<Task>() + t.capacity_bytes(),
        _ => 0,
    }
}

impl Default for Heap {
    fn default() -> Self {
        Heap::new()
    }
}

impl Drop for Heap {
    fn drop(&mut self) {
        // `MARK_HEAP` must not outlive the handle that keeps it alive.
        if std::ptr::eq(MARK_HEAP.get(), Arc::as_ptr(&self.shared)) {
            MARK_EPOCH.set(0);
            MARK_HEAP.set(std::ptr::null());
        }
    }
}

/// Ends a worker's mutator period when dropped (see [`Heap::enter`]).
pub struct MutatorGuard {
    shared: Arc<SharedHeap>,
    slot: Arc<MutatorSlot>,
}

impl Drop for MutatorGuard {
    fn drop(&mut self) {
        leave(&self.shared, &self.slot);
    }
}

/// The end of a mutator period: the slot is idle, and a collection that
/// waits for it is told.
#[inline]
fn leave(shared: &SharedHeap, slot: &MutatorSlot) {
    // Release: what this mutator did to the heap happens before a
    // collector's (acquiring) load that sees it idle.
    slot.state.store(IDLE, Ordering::Release);
    // The handshake's store-load fence (see "Threads"): a collector that
    // stored `stop` and then saw this slot running is told, or the store
    // above was visible to it.
    super::fence::light();
    if shared.stop.load(Ordering::Relaxed) {
        let _g = shared.gate.lock();
        shared.changed.notify_all();
    }
}

/// [`MutatorGuard`] without references counted: see
/// [`Heap::enter_borrowed`].
pub struct BorrowedMutatorGuard {
    shared: *const SharedHeap,
    slot: *const MutatorSlot,
}

impl Drop for BorrowedMutatorGuard {
    fn drop(&mut self) {
        // SAFETY: `enter_borrowed`'s caller keeps both alive until now.
        unsafe { leave(&*self.shared, &*self.slot) }
    }
}

/// The world stopped by a thread that is not a worker (see
/// [`Heap::stop_world`]); resumes it when dropped.
pub struct StoppedWorld {
    shared: Arc<SharedHeap>,
}

impl Drop for StoppedWorld {
    fn drop(&mut self) {
        let _g = self.shared.gate.lock();
        self.shared.stop.store(false, Ordering::SeqCst);
        self.shared.changed.notify_all();
    }
}

impl Heap {
    /// A new program heap, with this thread's handle on it.
    pub fn new() -> Heap {
        // Before the first heap, and so before any mutator's fence.
        super::fence::init();
        let shared = Arc::new(SharedHeap {
            lists: Mutex::new(Vec::new()),
            slots: Mutex::new(Vec::new()),
            allocated_since_gc: AtomicUsize::new(0),
            threshold: AtomicUsize::new(SMALL_FLOOR),
            requested: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            gate: Mutex::new(()),
            changed: Condvar::new(),
            stats: Mutex::new(GcStats::default()),
            config: Mutex::new(GcConfig::default()),
            live: AtomicUsize::new(0),
            limit: AtomicUsize::new(usize::MAX),
            stress: AtomicBool::new(false),
            sweep: Arc::new(Sweep::default()),
            sweep_chunks: AtomicUsize::new(1),
            finishing_sweep: AtomicUsize::new(0),
            marking: AtomicBool::new(false),
            epoch: AtomicU32::new(0),
            grey: Mutex::new(Vec::new()),
            traced: AtomicUsize::new(0),
            promoted: AtomicUsize::new(0),
            survivors_traced: AtomicUsize::new(0),
            old_bytes: AtomicUsize::new(0),
            full_left: AtomicU32::new(0),
            full_run: AtomicU32::new(0),
            counted_at_start: AtomicUsize::new(0),
            mark_began: Mutex::new(None),
            concurrent: AtomicBool::new(std::env::var_os("RAYA_GC_CONCURRENT").is_none_or(|v| v != "0")),
            generational: AtomicBool::new(std::env::var_os("RAYA_GC_GENERATIONAL").is_none_or(|v| v != "0")),
            major: AtomicBool::new(true),
            next_major: AtomicBool::new(true),
            sticky: AtomicBool::new(false),
            full_base: AtomicUsize::new(0),
            remembered: Mutex::new(Remembered::default()),
            grey_bodies: Mutex::new(Vec::new()),
            alloc_black: AtomicBool::new(false),
            alloc_born: AtomicU32::new(0),
            young: Mutex::new(Vec::new()),
        });
        shared.epoch.store(next_epoch(MUTATOR_EPOCH), Ordering::Relaxed);
        Heap::on(shared)
    }

    /// The program heap this handle allocates in.
    pub fn shared(&self) -> &Arc<SharedHeap> {
        &self.shared
    }

    /// Another thread's handle on the program heap `shared`.
    pub fn attach_to(shared: &Arc<SharedHeap>) -> Heap {
        Heap::on(shared.clone())
    }

    fn on(shared: Arc<SharedHeap>) -> Heap {
        let list = Arc::new(AllocList { objects: UnsafeCell::new(Vec::new()) });
        shared.lists.lock().push(list.clone());
        let heap = Heap { shared, list, local_bytes: 0 };
        heap.count_growth_here();
        heap.refresh_marking();
        heap
    }

    /// Makes this thread's growth ([`count_growth`]) count toward this
    /// program heap. Cheap when it already does.
    #[inline]
    pub fn count_growth_here(&self) {
        GROWTH_HEAP.with(|h| {
            if !std::ptr::eq(h.borrow().as_ptr(), Arc::as_ptr(&self.shared)) {
                *h.borrow_mut() = Arc::downgrade(&self.shared);
            }
        });
        LIMITED.set(self.shared.limit.load(Ordering::Relaxed) != usize::MAX);
    }

    /// Checks that a new object of `bytes` fits under the heap limit (see
    /// [`check_growth`]): for the interpreter's allocations (objects,
    /// arrays, strings), before it makes them.
    #[inline]
    pub fn check_alloc(&self, bytes: usize) -> OpResult<()> {
        if self.shared.limit.load(Ordering::Relaxed) == usize::MAX {
            return Ok(());
        }
        let since = self.shared.allocated_since_gc.load(Ordering::Relaxed) + self.local_bytes + GROWN.get();
        self.shared.check(since, bytes)
    }

    /// Bytes counted toward the next collection so far: the shared count
    /// plus what this thread has not yet added to it.
    pub fn counted_bytes(&self) -> usize {
        self.shared.allocated_since_gc.load(Ordering::Relaxed) + self.local_bytes + GROWN.get()
    }

    /// A mutator slot for a worker thread (see "Threads" above).
    pub fn new_slot(&self) -> Arc<MutatorSlot> {
        let slot = Arc::new(MutatorSlot { state: AtomicU8::new(IDLE), parked_task: UnsafeCell::new(std::ptr::null()) });
        self.shared.slots.lock().push(slot.clone());
        slot
    }

    /// Starts a mutator period of the worker owning `slot`: waits while a
    /// collection is in progress, then counts as running until the guard
    /// is dropped.
    pub fn enter(&self, slot: &Arc<MutatorSlot>) -> MutatorGuard {
        self.wait_and_enter(slot);
        MutatorGuard { shared: self.shared.clone(), slot: slot.clone() }
    }

    /// [`Heap::enter`] whose guard borrows the heap and the slot instead
    /// of holding references to them: no atomic read-modify-write beyond
    /// the handshake's own (an embedder's call on its own thread enters
    /// once per call).
    ///
    /// # Safety
    /// The heap's shared state (this handle) and `slot` must outlive the
    /// guard: the caller holds both, unchanged, until it drops it.
    pub unsafe fn enter_borrowed(&self, slot: &Arc<MutatorSlot>) -> BorrowedMutatorGuard {
        self.wait_and_enter(slot);
        BorrowedMutatorGuard { shared: Arc::as_ptr(&self.shared), slot: Arc::as_ptr(slot) }
    }

    /// The handshake of [`Heap::enter`]: waits while a collection is in
    /// progress, then marks `slot` running.
    fn wait_and_enter(&self, slot: &MutatorSlot) {
        self.count_growth_here();
        loop {
            slot.state.store(RUNNING, Ordering::Relaxed);
            // The handshake's store-load fence (see "Threads"): a
            // collector's `stop` is seen here, or this slot's `RUNNING`
            // there. Acquire: what the last pause did to the heap (it
            // cleared `stop` after) happens before this mutator's use.
            super::fence::light();
            if !self.shared.stop.load(Ordering::Acquire) {
                self.refresh_marking();
                return;
            }
            slot.state.store(IDLE, Ordering::SeqCst);
            let mut g = self.shared.gate.lock();
            self.shared.changed.notify_all();
            while self.shared.stop.load(Ordering::SeqCst) {
                self.shared.changed.wait_for(&mut g, Duration::from_millis(10));
            }
        }
    }

    #[inline]
    pub fn alloc(&mut self, body: Body) -> Value {
        // SAFETY: no other thread can see `body` yet.
        let size = unsafe { body_size(&body) };
        self.alloc_sized(body, size)
    }

    /// [`Heap::alloc`] of a body whose [`body_size`] the caller knows
    /// (the string paths: they skip the match over every kind).
    #[inline]
    fn alloc_sized(&mut self, body: Body, size: usize) -> Value {
        Value::object(self.alloc_ptr(body, size))
    }

    /// [`Heap::alloc_sized`], returning the new object itself.
    #[inline]
    fn alloc_ptr(&mut self, body: Body, size: usize) -> *mut Obj {
        // SAFETY: the body is written whole.
        unsafe { self.alloc_with(size, |slot| slot.write(body)) }
    }

    /// A new object whose body `init` writes into its box, after the
    /// allocation: a body built before it lives on the stack across the
    /// allocator's call and is copied over, and a field stored narrower
    /// than it is copied (a string's `u32` length) stalls the copy's load.
    ///
    /// # Safety
    /// `init` must initialise the body it is given.
    #[inline(always)]
    unsafe fn alloc_with(&mut self, size: usize, init: impl FnOnce(*mut Body)) -> *mut Obj {
        let mut b = Box::<Obj>::new_uninit();
        let p = b.as_mut_ptr();
        // SAFETY: both fields of the uninitialised box are written once
        // (the body by `init`, as the caller promises), then it is
        // initialised.
        let p = unsafe {
            // Allocated black while marking: a new object is live at the
            // end of the cycle, and what is stored in it was reachable
            // anyway (see "Concurrent marking").
            let black = self.shared.alloc_black.load(Ordering::Relaxed);
            // A minor cycle's epoch while it marks (else 0).
            let born = self.shared.alloc_born.load(Ordering::Relaxed);
            std::ptr::addr_of_mut!((*p).header).write(Header::new(black, born));
            init(std::ptr::addr_of_mut!((*p).body));
            Box::into_raw(b.assume_init())
        };
        // SAFETY: this thread owns the list and is not stopped.
        unsafe { (*self.list.objects.get()).push(p) };
        self.local_bytes += size;
        if self.local_bytes >= LOCAL_CHUNK {
            self.flush_count();
        }
        p
    }

    #[cold]
    fn flush_count(&mut self) {
        // This thread's pending growth goes along.
        let n = self.local_bytes + GROWN.replace(0);
        self.local_bytes = 0;
        self.shared.add_count(n);
        // Allocation pays for the sweep (see `vm::sweep`).
        for _ in 0..self.shared.sweep_chunks.load(Ordering::Relaxed) {
            if !self.shared.sweep.help_one() {
                break;
            }
        }
    }

    /// A plain object or class instance with no property yet (the object
    /// of `new`): written straight into its box, with its size known, so
    /// that neither [`body_size`]'s match nor a copy of the body from the
    /// stack is paid on every construction.
    pub fn alloc_object(&mut self, class: Value) -> Value {
        use super::object::ObjectData;
        // SAFETY: the body is written whole.
        let p = unsafe {
            self.alloc_with(std::mem::size_of::<Obj>(), |slot| {
                slot.write(Body::Object(Mut::new(ObjectData {
                    class,
                    props: super::shape::PropMap::new(),
                    frozen: false,
                })))
            })
        };
        Value::object(p)
    }

    pub fn alloc_str(&mut self, s: impl Into<Box<str>>) -> Value {
        let s = s.into();
        if let Some(v) = shared_str(s.as_bytes()) {
            return v;
        }
        self.alloc(Body::Str(JsStr::new(s)))
    }

    /// A string of WTF-8 bytes (see `crate::wtf8`): a lone surrogate kept.
    pub fn alloc_wtf8(&mut self, b: Vec<u8>) -> Value {
        self.alloc(Body::Str(JsStr::from_wtf8(b)))
    }

    /// The string `JsStr::append` made, with the bytes it allocated
    /// outside the object (which for a string written into a shared buffer
    /// are fewer than its length).
    pub fn alloc_appended(&mut self, (js, outside): (JsStr, usize)) -> Value {
        self.alloc_sized(Body::Str(js), std::mem::size_of::<Obj>() + outside)
    }

    /// The string a buffer built (exactly: lone surrogates kept).
    pub fn alloc_buf(&mut self, b: super::strbuf::StrBuf) -> Value {
        self.alloc(Body::Str(b.into_js()))
    }

    /// The string of UTF-16 code units `u`.
    pub fn alloc_units(&mut self, u: &[u16]) -> Value {
        self.alloc(Body::Str(JsStr::from_units(u)))
    }

    /// `alloc_str` of a borrowed string: a short one is copied straight
    /// into its object.
    pub fn alloc_str_copy(&mut self, s: &str) -> Value {
        if let Some(v) = shared_str(s.as_bytes()) {
            return v;
        }
        self.alloc(Body::Str(JsStr::copy_of(s)))
    }

    /// `alloc_str` of a string the caller knows to be ASCII.
    #[inline]
    pub fn alloc_ascii_str(&mut self, s: &str) -> Value {
        debug_assert!(s.is_ascii());
        let n = s.len();
        if let Some(v) = shared_str(s.as_bytes()) {
            return v;
        }
        if n > INLINE_STR {
            let text = StrText::Heap(s.into());
            // SAFETY: the body is written whole.
            let p = unsafe {
                self.alloc_with(std::mem::size_of::<Obj>() + n, |slot| {
                    slot.write(Body::Str(JsStr { s: text, utf16_len: n as u32, key: super::object::KeyCache::new() }))
                })
            };
            return Value::object(p);
        }
        // SAFETY: the body is written whole by `write_inline_ascii`.
        let p = unsafe { self.alloc_with(std::mem::size_of::<Obj>(), |slot| write_inline_ascii(slot, s.as_bytes())) };
        Value::object(p)
    }

    /// The pieces of the ASCII text `s` between the one-byte separators at
    /// the byte offsets `seps` (ascending), pushed to `out` in order: the
    /// first piece starts at 0, each next one after a separator, the last
    /// one runs to the end of `s`. `alloc_ascii_str` of every piece, with
    /// what does not change between pieces (the cycle's colour and epoch,
    /// the list's room, the byte count) done once.
    pub fn alloc_ascii_fields(&mut self, s: &str, seps: &[u32], out: &mut Vec<Value>) {
        debug_assert!(s.is_ascii() && seps.windows(2).all(|w| w[0] < w[1]));
        let bytes = s.as_bytes();
        out.reserve(seps.len() + 1);
        // SAFETY: this thread owns the list and is not stopped.
        unsafe { (*self.list.objects.get()).reserve(seps.len() + 1) };
        let black = self.shared.alloc_black.load(Ordering::Relaxed);
        let born = self.shared.alloc_born.load(Ordering::Relaxed);
        let mut start = 0;
        let mut counted = 0;
        for end in seps.iter().map(|&e| e as usize).chain(std::iter::once(bytes.len())) {
            let part = &bytes[start..end];
            start = end + 1;
            if let Some(v) = shared_str(part) {
                out.push(v);
                continue;
            }
            if part.len() > INLINE_STR {
                // SAFETY: `s` is ASCII, so every piece is.
                out.push(self.alloc_ascii_str(unsafe { std::str::from_utf8_unchecked(part) }));
                continue;
            }
            // `alloc_with`'s steps with the colour, the epoch, the list's
            // room and the count taken once for every piece (through
            // `alloc_ascii_str`, `wc` ran 7% more instructions).
            let mut b = Box::<Obj>::new_uninit();
            let p = b.as_mut_ptr();
            // SAFETY: both fields are written once, then the box is
            // initialised.
            let p = unsafe {
                std::ptr::addr_of_mut!((*p).header).write(Header::new(black, born));
                write_inline_ascii(std::ptr::addr_of_mut!((*p).body), part);
                Box::into_raw(b.assume_init())
            };
            // SAFETY: as above; the room was reserved.
            unsafe { (*self.list.objects.get()).push(p) };
            counted += std::mem::size_of::<Obj>();
            out.push(Value::object(p));
        }
        self.local_bytes += counted;
        if self.local_bytes >= LOCAL_CHUNK {
            self.flush_count();
        }
    }

    pub fn alloc_array(&mut self, items: Vec<Value>) -> Value {
        self.alloc(Body::Array(ArrayBody { items: Mut::new(items), extras: None }))
    }

    /// An array with read-only named properties besides its elements (a
    /// regular expression match: `index`, `input`, `groups`).
    pub fn alloc_array_with(&mut self, items: Vec<Value>, extras: Vec<(Atom, Value)>) -> Value {
        self.alloc(Body::Array(ArrayBody { items: Mut::new(items), extras: Some(extras.into_boxed_slice()) }))
    }

    pub fn alloc_cell(&mut self, v: Value) -> Value {
        self.alloc(Body::Cell(Mut::new(v)))
    }

    /// Number of objects on the program's heap, once the sweep of the
    /// last collection is finished (this waits for it). Only meaningful
    /// while no other thread allocates.
    pub fn object_count(&self) -> usize {
        self.shared.sweep.finish();
        // SAFETY: the caller guarantees no concurrent allocation.
        let listed: usize = self.shared.lists.lock().iter().map(|l| unsafe { (*l.objects.get()).len() }).sum();
        listed + self.shared.sweep.object_count()
    }

    /// Waits until the sweep of the last collection is done (helping with
    /// it), so that `stats().freed` and memory figures are final.
    pub fn finish_sweep(&self) {
        self.shared.sweep.finish();
    }

    /// True when a collection is wanted: the caller, at a safepoint,
    /// should call [`Heap::safepoint`] (or [`Heap::collect`] when it is
    /// the only thread).
    #[inline(always)]
    pub fn wants_collection(&self) -> bool {
        // Stress mode and marking keep `requested` set (see `begin` and
        // `end_marking`), so this stays one load.
        self.shared.requested.load(Ordering::Relaxed)
    }

    /// The collector's figures; `freed` and `sweep_ns` cover the sweeps
    /// done so far (see [`Heap::finish_sweep`]).
    pub fn stats(&self) -> GcStats {
        let mut st = self.shared.stats.lock().clone();
        (st.freed, st.sweep_ns) = self.shared.sweep.totals();
        st
    }

    /// Stops every worker (at its next safepoint, or between jobs) until
    /// the returned guard is dropped, so this thread, which is not a
    /// worker, has the heap to itself: the end of a program that called
    /// `exit()` while other tasks still ran. A marking cycle in progress
    /// is finished first, so this thread (which has no barrier) may change
    /// objects.
    pub fn stop_world(&self) -> StoppedWorld {
        let s = &self.shared;
        let mut g = s.gate.lock();
        // Running workers look at `requested` at their safepoints.
        s.requested.store(true, Ordering::SeqCst);
        while s.stop.compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst).is_err() {
            s.changed.wait_for(&mut g, Duration::from_millis(1));
        }
        // The handshake's collector-side fence (see "Threads"): after it,
        // every mutator that did not see `stop` shows as running below.
        super::fence::heavy();
        // Workers parked at a safepoint wait for `stop` to clear; the
        // collection request (if any) is served by the next one to run.
        while s.slots.lock().iter().any(|o| o.state.load(Ordering::SeqCst) == RUNNING) {
            s.changed.wait_for(&mut g, Duration::from_millis(1));
        }
        drop(g);
        if s.marking.load(Ordering::SeqCst) {
            s.drain_all();
            s.end_marking();
        }
        // This thread may have been away from the heap for many cycles:
        // its barrier must follow the current epoch before it changes
        // anything (an old object's change must be remembered).
        self.refresh_marking();
        StoppedWorld { shared: s.clone() }
    }

    /// Minor cycles between full ones, for this program (see
    /// [`SharedHeap::set_generational`]); this thread's barrier follows.
    pub fn set_generational(&self, on: bool) {
        self.shared.set_generational(on);
        self.refresh_marking();
    }

    /// Whether a marking cycle is under way (the safepoint then assists).
    #[inline]
    pub fn is_marking(&self) -> bool {
        self.shared.marking.load(Ordering::Relaxed)
    }

    /// Points this thread's write barrier at this heap's marking state
    /// (see `MARK_EPOCH`). Called where marking may have started or ended
    /// since the thread last touched the heap.
    fn refresh_marking(&self) {
        // The epoch changes only in a pause, with `marking` (SeqCst) or
        // before `stop` is cleared, so this load sees the current one.
        if self.shared.marking.load(Ordering::SeqCst) || self.shared.generational.load(Ordering::Relaxed) {
            MARK_HEAP.set(Arc::as_ptr(&self.shared));
            MARK_EPOCH.set(self.shared.epoch.load(Ordering::Relaxed));
        } else {
            MARK_EPOCH.set(0);
            MARK_HEAP.set(std::ptr::null());
        }
    }

    /// A worker at a safepoint with a collection wanted. Not marking: the
    /// world is stopped for a moment to begin a cycle (roots and task
    /// registers shaded) and restarted. Marking: the worker traces a slice
    /// of the grey objects (an assist); when none is left it stops the
    /// world to end the cycle, which hands the heap to the concurrent
    /// sweep. A worker that finds the world stopping parks until it
    /// restarts. `task` is the worker's running task; `roots` marks the
    /// program's own roots (globals, realm, task table).
    pub fn safepoint(&mut self, slot: &MutatorSlot, task: &Task, roots: impl FnOnce(&mut Marker)) {
        self.safepoint_with(slot, task, false, roots)
    }

    /// [`Heap::safepoint`], or with `full` a whole collection in one pause
    /// (a cycle under way finished, and a new one run to its end): for a
    /// heap at its limit, which needs the memory now.
    pub fn safepoint_with(&mut self, slot: &MutatorSlot, task: &Task, full: bool, roots: impl FnOnce(&mut Marker)) {
        let s = self.shared.clone();
        // `full` (the heap limit) wants every dead object back: a full
        // cycle; one pause by configuration follows the generational rule.
        let major = full.then_some(true);
        let full = full || !s.concurrent.load(Ordering::Relaxed);
        if !full && s.marking.load(Ordering::SeqCst) && !s.stop.load(Ordering::SeqCst) && !self.assist() {
            return;
        }
        // The last cycle's sweep must be over before the next mark (see
        // `vm::sweep`); finishing it here, with the world running, keeps
        // it out of the pause. Whatever a collector that wins the race
        // below queues in the meantime, `begin` finishes.
        if !s.stop.load(Ordering::SeqCst) && !s.marking.load(Ordering::SeqCst) {
            self.wait_for_sweep();
        }
        if s.stop.compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
            let restart = Restart(&s);
            let stopping = Instant::now();
            let cpu = thread_cpu_ns();
            // The collector. Wait until every other mutator parked or idles;
            // after the handshake's collector-side fence (see "Threads"),
            // every mutator that did not see `stop` shows as running.
            super::fence::heavy();
            {
                let mut g = s.gate.lock();
                loop {
                    let busy = s
                        .slots
                        .lock()
                        .iter()
                        .any(|o| !std::ptr::eq(&**o, slot) && o.state.load(Ordering::SeqCst) == RUNNING);
                    if !busy {
                        break;
                    }
                    s.changed.wait_for(&mut g, Duration::from_millis(1));
                }
            }
            let all_roots = |m: &mut Marker| {
                roots(m);
                for v in task.roots() {
                    m.mark(v);
                }
                for o in s.slots.lock().iter() {
                    if o.state.load(Ordering::SeqCst) == PARKED {
                        // SAFETY: a parked mutator published its task and
                        // does not touch it until `stop` is cleared.
                        let t = unsafe { *o.parked_task.get() };
                        if !t.is_null() {
                            for v in unsafe { &*t }.roots() {
                                m.mark(v);
                            }
                        }
                    }
                }
            };
            if full {
                if s.marking.load(Ordering::SeqCst) {
                    s.drain_all();
                    s.end_marking();
                }
                self.collect_stopped(stopping, major, all_roots);
            } else if s.marking.load(Ordering::SeqCst) {
                self.try_end_marking(stopping, all_roots);
            } else {
                self.begin_marking(stopping, all_roots);
            }
            drop(restart);
            self.refresh_marking();
            s.record_pause(stopping, Instant::now(), thread_cpu_ns() - cpu);
        } else {
            // Park: publish the running task, wait for the collector.
            let mut g = s.gate.lock();
            // SAFETY: only this thread writes its slot's task.
            unsafe { *slot.parked_task.get() = task as *const Task };
            slot.state.store(PARKED, Ordering::SeqCst);
            s.changed.notify_all();
            while s.stop.load(Ordering::SeqCst) {
                s.changed.wait_for(&mut g, Duration::from_millis(10));
            }
            unsafe { *slot.parked_task.get() = std::ptr::null() };
            slot.state.store(RUNNING, Ordering::SeqCst);
            drop(g);
            // Marking may have begun or ended meanwhile.
            self.refresh_marking();
        }
    }

    /// Grey objects an assist traces at one safepoint: small enough that
    /// a slice takes well under a millisecond; under `RAYA_GC_STRESS`
    /// a few dozen, so that the program runs between many small slices and
    /// every barrier is exercised.
    fn assist_slice(&self) -> usize {
        if self.shared.stress.load(Ordering::Relaxed) {
            64
        } else {
            512
        }
    }

    /// An assist: traces a slice of the grey objects at a safepoint, with
    /// the world running. True when no grey object is left (the caller
    /// then tries to end the cycle).
    pub fn assist(&mut self) -> bool {
        let s = &self.shared;
        let n = self.assist_slice();
        let cpu = thread_cpu_ns();
        let mut m = Marker::new(s.epoch.load(Ordering::Relaxed));
        let n = n.saturating_sub(s.trace_bodies(&mut m, n));
        {
            let mut g = s.grey.lock();
            let k = g.len().saturating_sub(n);
            m.stack.extend(g.drain(k..).map(|p| p as *const Obj));
        }
        let done = m.drain_some(n);
        let empty = if done {
            s.grey.lock().is_empty() && s.grey_bodies.lock().is_empty()
        } else {
            s.grey.lock().extend(m.stack.iter().map(|&p| p as usize));
            false
        };
        s.add_traced(&m);
        s.stats.lock().assist_ns += thread_cpu_ns().saturating_sub(cpu);
        empty
    }

    /// Runs a full collection (every dead object freed, old or young).
    /// `roots` marks every root. The caller must have stopped the world, or
    /// be the only thread of the program. A cycle under way is finished
    /// first (its roots were taken when it began), then a whole new one
    /// runs.
    pub fn collect(&mut self, roots: impl FnOnce(&mut Marker)) {
        self.collect_cycle(Some(true), roots)
    }

    /// [`Heap::collect`] of the kind `major` (None: as the generational
    /// rule says, a minor cycle unless the old generation has grown enough).
    pub fn collect_cycle(&mut self, major: Option<bool>, roots: impl FnOnce(&mut Marker)) {
        if !self.shared.marking.load(Ordering::SeqCst) {
            self.wait_for_sweep();
        }
        let start = Instant::now();
        let cpu = thread_cpu_ns();
        if self.shared.marking.load(Ordering::SeqCst) {
            self.shared.drain_all();
            self.shared.end_marking();
        }
        self.collect_stopped(start, major, roots);
        self.refresh_marking();
        self.shared.record_pause(start, Instant::now(), thread_cpu_ns() - cpu);
    }

    /// Finishes the last cycle's sweep (helping the background sweeper),
    /// counting the time as the collector's wait.
    fn wait_for_sweep(&self) {
        let sw = &self.shared.sweep;
        if sw.is_idle() {
            return;
        }
        let t = Instant::now();
        self.shared.finishing_sweep.fetch_add(1, Ordering::Relaxed);
        sw.finish();
        self.shared.finishing_sweep.fetch_sub(1, Ordering::Relaxed);
        self.shared.stats.lock().sweep_wait_ns += t.elapsed().as_nanos() as u64;
    }

    /// A whole collection in one pause: marks from `roots`, then hands
    /// everything that existed before to the concurrent sweep. The world
    /// is stopped (`stopping`: since when) and no cycle is under way.
    fn collect_stopped(&mut self, stopping: Instant, major: Option<bool>, roots: impl FnOnce(&mut Marker)) {
        let major = major.unwrap_or_else(|| self.shared.next_major.load(Ordering::Relaxed));
        self.shared.begin(major, roots);
        self.shared.drain_all();
        self.local_bytes = 0;
        GROWN.set(0);
        let start = Instant::now();
        // All of this mark ran in the pause: none of it beside the program.
        self.shared.mark_began.lock().take();
        self.shared.end_marking();
        self.shared.log_pause(stopping, start);
    }

    /// The pause that begins a cycle (world stopped).
    fn begin_marking(&mut self, stopping: Instant, roots: impl FnOnce(&mut Marker)) {
        let start = Instant::now();
        self.shared.begin(self.shared.next_major.load(Ordering::Relaxed), roots);
        // Every safepoint assists until the cycle ends.
        self.shared.requested.store(true, Ordering::SeqCst);
        self.shared.log_pause(stopping, start);
    }

    /// The pause that tries to end a cycle (world stopped): what the
    /// barrier and the assists left grey is traced here, within a budget;
    /// past it, the world restarts and marking goes on.
    fn try_end_marking(&mut self, stopping: Instant, roots: impl FnOnce(&mut Marker)) {
        let s = &self.shared;
        let start = Instant::now();
        let mut m = Marker::new(s.epoch.load(Ordering::Relaxed));
        loop {
            s.trace_bodies(&mut m, usize::MAX);
            {
                let mut g = s.grey.lock();
                if g.is_empty() && m.stack.is_empty() && s.grey_bodies.lock().is_empty() {
                    break;
                }
                m.stack.extend(g.drain(..).map(|p| p as *const Obj));
            }
            m.drain_some(1024);
            if !m.stack.is_empty() && start.elapsed() > END_BUDGET {
                s.grey.lock().extend(m.stack.iter().map(|&p| p as usize));
                s.add_traced(&m);
                return;
            }
        }
        s.add_traced(&m);
        if cfg!(debug_assertions) && s.stress.load(Ordering::Relaxed) {
            // Everything reachable now must be marked: with every store
            // barriered, what is reachable at the end was reachable at the
            // start (so marked from the snapshot) or allocated black.
            let mut check = Marker::new(0);
            check.check = Some(Default::default());
            check.check_epoch = s.epoch.load(Ordering::Relaxed);
            roots(&mut check);
            check.drain();
        }
        self.local_bytes = 0;
        GROWN.set(0);
        s.end_marking();
        s.log_pause(stopping, start);
    }
}

/// Restarts the world when dropped: at the end of a pause, and on the way
/// out of one that panicked (the end-of-marking check of a debug build
/// under `RAYA_GC_STRESS`), so that the other mutators do not wait for
/// `stop` forever but run on and fail the same check (a failed check ends
/// a test instead of hanging it).
struct Restart<'a>(&'a SharedHeap);

impl Drop for Restart<'_> {
    fn drop(&mut self) {
        let _g = self.0.gate.lock();
        self.0.stop.store(false, Ordering::SeqCst);
        self.0.changed.notify_all();
    }
}

/// The longest run of full cycles that minor cycles not paying off cause
/// (see `end_marking`).
const MAX_FULL_RUN: u32 = 16;

/// The longest the pause that ends a cycle traces grey objects before it
/// gives up and lets marking go on beside the program.
const END_BUDGET: Duration = Duration::from_millis(2);

impl SharedHeap {
    /// Marks beside the program (see the `concurrent` field).
    pub fn set_concurrent_marking(&self, on: bool) {
        self.concurrent.store(on, Ordering::Relaxed);
    }

    /// Minor cycles between full ones (see the `generational` field). Set
    /// before the program runs, or between cycles by the only thread; the
    /// next cycle is a full one either way.
    pub fn set_generational(&self, on: bool) {
        self.generational.store(on, Ordering::Relaxed);
        self.next_major.store(true, Ordering::Relaxed);
    }

    /// Begins a marking cycle, world stopped: the last sweep is finished
    /// (marks are clear), the barrier and black allocation turn on, and
    /// the roots and every live task's registers are shaded.
    fn begin(&self, major: bool, roots: impl FnOnce(&mut Marker)) {
        self.sweep.finish();
        let generational = self.generational.load(Ordering::Relaxed);
        let major = major || !generational;
        if major && self.sticky.swap(false, Ordering::Relaxed) {
            // A full cycle the last sweep did not foresee (a heap at its
            // limit, an explicit collection): the old generation's marks
            // are cleared here, in the pause.
            self.sweep.clear_marks();
        }
        // Every cycle of the generational collector ages what it finds, a
        // full one too (see "Generational mode"): all run with the minor
        // cycle's rules for the barrier and for what is made meanwhile.
        let e = next_epoch(if generational { MINOR_EPOCH } else { MAJOR_EPOCH });
        self.epoch.store(e, Ordering::Relaxed);
        self.major.store(major, Ordering::Relaxed);
        self.traced.store(0, Ordering::Relaxed);
        self.promoted.store(0, Ordering::Relaxed);
        self.survivors_traced.store(0, Ordering::Relaxed);
        self.counted_at_start.store(self.allocated_since_gc.load(Ordering::Relaxed), Ordering::Relaxed);
        *self.mark_began.lock() = Some(Instant::now());
        // A method cache filled before now may name an object that is
        // already unreachable (unmarked): a mutator reading it while
        // marking would make it reachable behind the marker's back. Caches
        // filled from here on name objects reachable during marking, which
        // the snapshot marks.
        super::shape::methods_changed();
        let mut m = Marker::new(e);
        m.minor_roots = !major;
        roots(&mut m);
        let remembered = std::mem::take(&mut *self.remembered.lock());
        if !major {
            // Generational invariant: an old object that points to a young
            // one was changed since the last cycle ended, so it is in the
            // remembered set (a `Mut` body, traced by the markers) or the
            // young value is (stored outside a `Mut`). A full cycle traces
            // everything from the roots and needs neither.
            // Held by old objects outside a `Mut`: promoted, as for a
            // remembered body.
            m.tenure = true;
            for &v in &remembered.values {
                m.mark(Value::from_bits(v));
            }
            m.tenure = false;
            *self.grey_bodies.lock() = remembered.bodies;
        }
        m.scan_tasks();
        self.grey.lock().extend(m.stack.iter().map(|&p| p as usize));
        if !generational {
            // Allocate black: a new object is live at the end of the cycle.
            self.alloc_black.store(true, Ordering::Relaxed);
        } else {
            // The objects of this cycle are those that exist now; what is
            // made while it marks is not part of it (not marked, not
            // traced, not swept: young for the next one), so a cycle
            // promotes only what survived it, not whatever happened to be
            // made while it ran. A minor cycle takes the young ones: the
            // threads' lists and the survivors of the last minor cycle. A
            // full one takes every object (the old ones unmarked, with
            // their age kept).
            //
            // The sweep takes its segments from the end: the threads'
            // lists go last, so that what was made since the last cycle,
            // where most garbage is, is freed first.
            let mut y = self.young.lock();
            if major {
                y.extend(self.sweep.drain_all());
            } else {
                y.extend(self.sweep.take_survivors());
            }
            let lists = self.lists.lock();
            // SAFETY: the world is stopped, so no owner touches its list.
            let young = lists.iter().map(|l| std::mem::take(unsafe { &mut *l.objects.get() }));
            y.extend(young.filter(|l| !l.is_empty()).map(super::sweep::Segment));
            self.alloc_born.store(e, Ordering::Relaxed);
        }
        self.marking.store(true, Ordering::SeqCst);
    }

    /// Traces up to `n` remembered bodies handed to this cycle (see
    /// `begin`); returns how many.
    fn trace_bodies(&self, m: &mut Marker, n: usize) -> usize {
        let batch: Vec<(usize, TraceBody)> = {
            let mut g = self.grey_bodies.lock();
            if g.is_empty() {
                return 0;
            }
            let k = g.len().saturating_sub(n);
            g.drain(k..).collect()
        };
        let e = m.epoch;
        // A remembered body is old (or a survivor): what it holds is
        // promoted, since the next cycle will not trace it again unless
        // it changes.
        m.tenure = true;
        for &(p, f) in &batch {
            // SAFETY: remembered since the last cycle ended, so live until
            // this one ends (see `object::trace_remembered`).
            unsafe { f(p, e, &mut |v| m.mark(v)) };
        }
        m.tenure = false;
        batch.len()
    }

    /// Adds what a marker traced to the cycle's totals.
    fn add_traced(&self, m: &Marker) {
        self.traced.fetch_add(m.live, Ordering::Relaxed);
        self.promoted.fetch_add(m.promoted, Ordering::Relaxed);
        self.survivors_traced.fetch_add(m.survivors, Ordering::Relaxed);
    }

    /// Traces every grey object (world stopped, or the only thread).
    fn drain_all(&self) {
        let mut m = Marker::new(self.epoch.load(Ordering::Relaxed));
        loop {
            self.trace_bodies(&mut m, usize::MAX);
            m.stack.extend(self.grey.lock().drain(..).map(|p| p as *const Obj));
            if m.stack.is_empty() {
                break;
            }
            m.drain();
        }
        self.add_traced(&m);
    }

    /// Ends the cycle, world stopped and nothing grey: the barrier and
    /// black allocation turn off, and every object allocated so far goes
    /// to the concurrent sweep; each thread starts a fresh list, so what
    /// it allocates from now on is not swept (see `vm::sweep`).
    fn end_marking(&self) {
        debug_assert!(self.grey.lock().is_empty() && self.grey_bodies.lock().is_empty());
        let major = self.major.load(Ordering::Relaxed);
        let generational = self.generational.load(Ordering::Relaxed);
        // This cycle ages what it found (see `begin`).
        let aging = self.epoch.load(Ordering::Relaxed) & 3 == MINOR_EPOCH;
        // Pacing (see "Pacing" in `design/memory.md`). What was allocated
        // (black, or young in a minor cycle) or grew while marking ran is
        // carried into the next cycle's count: it survives this sweep, but
        // whether it is live is only known at the next mark. Counting it as
        // live made the goal depend on how much a cycle happened to overlap
        // (a `JSON.parse` between the two pauses doubled it). Live is what
        // the marker traced, the bytes that survived from the snapshot;
        // after a minor cycle, plus the old generation, which it did not
        // trace (an estimate: old objects that died since are counted until
        // the next full cycle).
        let carried = self
            .allocated_since_gc
            .load(Ordering::Relaxed)
            .saturating_sub(self.counted_at_start.load(Ordering::Relaxed));
        // A minor cycle traced the young objects that survived it (those
        // it promotes and those left to age, which the next minor cycle
        // traces again) and none of the old.
        let traced = self.traced.load(Ordering::Relaxed);
        let (live, old) = if major {
            (traced, self.promoted.load(Ordering::Relaxed))
        } else {
            let old = self.old_bytes.load(Ordering::Relaxed);
            (old + traced, old + self.promoted.load(Ordering::Relaxed))
        };
        self.old_bytes.store(old, Ordering::Relaxed);
        if major {
            self.full_base.store(live, Ordering::Relaxed);
        }
        let collections = self.stats.lock().collections + 1;
        // Generational, the goal is the one the last full cycle measured
        // (Go's rule on its live heap): minor cycles come whenever the
        // young objects fill what the old generation leaves of it.
        let (goal, floor) = if generational {
            let base = self.full_base.load(Ordering::Relaxed);
            let goal = heap_goal(base, &self.config.lock());
            (goal, goal.saturating_sub(base) / 2)
        } else {
            (heap_goal(live, &self.config.lock()), 0)
        };
        // The next cycle is a full one when the old generation has used up
        // all but half of the last full cycle's budget (`floor`): minor
        // cycles would come ever more often, each promoting a little more,
        // and the old garbage only a full cycle frees would hold the heap
        // above the goal. The full cycle then starts when the heap reaches
        // the goal, as a non-generational one would. Under stress, every
        // fourth, so that both kinds run often.
        //
        // And when minor cycles do not pay: one after which more than a
        // quarter of what was made since the last cycle is still alive
        // found a program whose objects outlive a cycle (a round of work
        // larger than the young budget), and minor cycles would only trace
        // them again and promote them to die old. (The survivors of the
        // cycle before, traced again to be promoted, are the price of
        // aging, not a sign.) The next cycles are full ones: four after the
        // first such minor cycle, twice as many after each further one (at
        // most `MAX_FULL_RUN`); a minor cycle that pays even with those
        // survivors counted starts over.
        let left = self.full_left.load(Ordering::Relaxed);
        let young = self.counted_at_start.load(Ordering::Relaxed);
        let full_left = if major {
            left.saturating_sub(1)
        } else if young < SMALL_FLOOR {
            // Begun with less made than the smallest budget (an explicit
            // collection, or the heap limit's): it says nothing either way.
            left
        } else {
            let run = self.full_run.load(Ordering::Relaxed);
            let new = traced - self.survivors_traced.load(Ordering::Relaxed).min(traced);
            if traced <= young / 4 {
                self.full_run.store(0, Ordering::Relaxed);
                0
            } else if new <= young / 4 {
                // Paid, but only not counting the survivors: not enough
                // to start over.
                0
            } else {
                let run = (run * 2).clamp(4, MAX_FULL_RUN);
                self.full_run.store(run, Ordering::Relaxed);
                run
            }
        };
        self.full_left.store(full_left, Ordering::Relaxed);
        let next_major = !generational
            || if self.stress.load(Ordering::Relaxed) {
                collections.is_multiple_of(4)
            } else {
                goal.saturating_sub(live) < floor || full_left > 0
            };
        self.next_major.store(next_major, Ordering::Relaxed);
        self.sticky.store(!next_major, Ordering::Relaxed);
        self.marking.store(false, Ordering::SeqCst);
        // A new mutator epoch: every body from before it is old now (used
        // by the barrier in generational mode only).
        self.epoch.store(next_epoch(MUTATOR_EPOCH), Ordering::Relaxed);
        // Method caches may name objects this collection frees.
        super::shape::methods_changed();
        self.alloc_black.store(false, Ordering::Relaxed);
        self.alloc_born.store(0, Ordering::Relaxed);
        // What is swept: after a full cycle every object (the threads'
        // lists hold them all); after a minor one its young objects, plus
        // the old generation if the next cycle is a full one, whose marks
        // must all be clear. Survivors keep their marks (they are old)
        // unless the next cycle is full. Objects made while a minor cycle
        // marked stay on their threads' lists, unmarked: young.
        let swept = if !aging {
            let lists = self.lists.lock();
            // SAFETY: the world is stopped, so no owner touches its list.
            // Each fresh list starts as large as the one it replaces: a
            // thread allocates about as much per cycle as in the last one,
            // and growing from empty copied the list over and over (2–3%
            // of a run that makes short-lived strings or promises).
            let segments = lists.iter().map(|l| {
                let list = unsafe { &mut *l.objects.get() };
                std::mem::replace(list, Vec::with_capacity(list.len()))
            });
            self.sweep.start(segments, true, SweepMode::Clear)
        } else {
            let young = std::mem::take(&mut *self.young.lock());
            self.sweep.start(
                young.into_iter().map(|s| s.0),
                next_major,
                if next_major { SweepMode::AgeAndClear } else { SweepMode::Age },
            )
        };
        self.allocated_since_gc.store(carried, Ordering::Relaxed);
        let threshold = goal.saturating_sub(live);
        self.sweep_chunks.store(sweep_pace(swept, threshold), Ordering::Relaxed);
        self.live.store(live, Ordering::Relaxed);
        self.threshold.store(threshold, Ordering::Relaxed);
        // More allocated while marking than the next cycle may count: ask
        // for it at once.
        self.requested.store(self.stress.load(Ordering::Relaxed) || carried >= threshold, Ordering::SeqCst);
        let began = self.mark_began.lock().take();
        let mut st = self.stats.lock();
        if let Some(t) = began {
            st.mark_ns += t.elapsed().as_nanos() as u64;
        }
        st.collections += 1;
        if !major {
            st.minor_collections += 1;
        }
        st.live_bytes = live as u64;
    }

    /// Logs a pause for the trace (when one is recorded).
    fn log_pause(&self, stopping: Instant, start: Instant) {
        let end = Instant::now();
        if let Some(log) = self.stats.lock().log.as_mut() {
            log.push(crate::trace::GcPause { stop: stopping, start, end });
        }
    }

    /// Adds a stop-the-world pause to the totals and the histogram.
    fn record_pause(&self, stopped: Instant, restarted: Instant, cpu_ns: u64) {
        let ns = (restarted - stopped).as_nanos();
        let us = (ns / 1000) as u64;
        let bucket = PAUSE_BUCKETS_US.iter().position(|&b| us < b).unwrap_or(PAUSE_BUCKETS_US.len());
        let mut st = self.stats.lock();
        st.total_pause_ns += ns;
        st.max_pause_ns = st.max_pause_ns.max(ns);
        st.pause_histogram[bucket] += 1;
        st.total_pause_cpu_ns += cpu_ns;
        st.max_pause_cpu_ns = st.max_pause_cpu_ns.max(cpu_ns);
    }

    /// A collection is under way: stopping (or having stopped) the world,
    /// or finishing the last sweep first. A worker in one has not reached
    /// its next safepoint for that reason, not because a task stalls.
    pub fn is_stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.finishing_sweep.load(Ordering::Relaxed) > 0
    }

    /// Sets pacing and limit; the first goal is computed from the heap the
    /// program holds so far (its built-ins).
    pub fn configure(&self, cfg: GcConfig) {
        *self.config.lock() = cfg;
        self.limit.store(cfg.max_heap.unwrap_or(usize::MAX), Ordering::Relaxed);
        self.stress.store(cfg.stress, Ordering::Relaxed);
        let live = self.live.load(Ordering::Relaxed);
        self.threshold.store(heap_goal(live, &cfg).saturating_sub(live), Ordering::Relaxed);
        if cfg.stress {
            self.requested.store(true, Ordering::Relaxed);
        }
    }

    pub fn config(&self) -> GcConfig {
        *self.config.lock()
    }

    /// The limit check (see [`check_growth`]): `since` bytes counted since
    /// the last collection, `bytes` more wanted.
    fn check(&self, since: usize, bytes: usize) -> OpResult<()> {
        let limit = self.limit.load(Ordering::Relaxed);
        let live = self.live.load(Ordering::Relaxed);
        if live.saturating_add(since).saturating_add(bytes) <= limit {
            return Ok(());
        }
        // A collection may free what was counted since the last one; then
        // the operation is worth running again. Right after a collection
        // (little counted since) it would fail the same way.
        LIMIT_RETRY.set(since > RETRY_SLACK || CAUGHT_SINCE_FAILURE.replace(false));
        self.requested.store(true, Ordering::Relaxed);
        Err(Fault::Range(heap_limit_message(limit)))
    }

    /// Adds `n` counted bytes; requests a collection past the threshold.
    fn add_count(&self, n: usize) {
        let total = self.allocated_since_gc.fetch_add(n, Ordering::Relaxed) + n;
        if total >= self.threshold.load(Ordering::Relaxed) {
            self.requested.store(true, Ordering::Relaxed);
        }
    }
}

impl Drop for SharedHeap {
    fn drop(&mut self) {
        // The background sweeper may be in the middle of a segment.
        self.sweep.finish();
        for seg in self.young.get_mut().drain(..) {
            for p in seg.0 {
                // SAFETY: as below.
                drop(unsafe { Box::from_raw(p) });
            }
        }
        for seg in self.sweep.drain_all() {
            for p in seg.0 {
                // SAFETY: the last handle is gone and the sweep finished;
                // nothing else holds these objects.
                drop(unsafe { Box::from_raw(p) });
            }
        }
        for list in self.lists.get_mut().iter() {
            // SAFETY: the last handle is gone; nothing runs any more.
            for &p in unsafe { &*list.objects.get() } {
                drop(unsafe { Box::from_raw(p) });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::object::{ObjectData, PropMap};
    use crate::vm::ops;

    fn obj(heap: &mut Heap) -> Value {
        heap.alloc(Body::Object(Mut::new(ObjectData { class: Value::UNDEFINED, props: PropMap::new(), frozen: false })))
    }

    fn set(o: Value, key: &str, v: Value) {
        match &o.as_obj().unwrap().body {
            Body::Object(d) => {
                d.lock().props.set(crate::vm::atom::Atom::intern(key), v);
            }
            _ => unreachable!(),
        }
    }

    /// Miri interprets every instruction, thousands of times slower than
    /// native code: the loops of these tests shrink under it to a size it
    /// finishes in seconds, which still takes every path they check.
    fn sized(native: usize, miri: usize) -> usize {
        if cfg!(miri) {
            miri
        } else {
            native
        }
    }

    fn pct(p: Option<u32>) -> GcConfig {
        GcConfig { percent: p, ..GcConfig::default() }
    }

    #[test]
    fn the_goal_is_the_live_heap_grown_by_the_percent_never_below_the_minimum() {
        const MB: usize = 1 << 20;
        // GOGC=100: twice the live heap.
        assert_eq!(heap_goal(100 * MB, &pct(Some(100))), 200 * MB);
        assert_eq!(heap_goal(100 * MB, &pct(Some(50))), 150 * MB);
        assert_eq!(heap_goal(100 * MB, &pct(Some(300))), 400 * MB);
        // 0: collect as soon as anything was allocated past the live heap.
        assert_eq!(heap_goal(100 * MB, &pct(Some(0))), 100 * MB);
        // A small live heap: the floor, so that small programs do not
        // collect all the time: nine times the live heap, at least 1 MiB
        // (a cycle's allocation stays in cache), at most 4 MiB (Go's).
        assert_eq!(heap_goal(MB, &pct(Some(100))), MIN_THRESHOLD);
        assert_eq!(MIN_THRESHOLD, 4 * MB);
        assert_eq!(heap_goal(MB / 4, &pct(Some(100))), 9 * MB / 4);
        assert_eq!(heap_goal(MB / 10, &pct(Some(100))), SMALL_FLOOR);
        assert_eq!(heap_goal(0, &pct(Some(100))), SMALL_FLOOR);
        // A high percent still grows a small heap by that percent.
        assert_eq!(heap_goal(MB / 2, &pct(Some(1000))), 11 * MB / 2);
        // Off: no goal.
        assert_eq!(heap_goal(100 * MB, &pct(None)), usize::MAX);
        // A limit caps the goal, so a collection starts before the limit.
        let limited = GcConfig { percent: Some(100), max_heap: Some(64 * MB), stress: false };
        assert_eq!(heap_goal(40 * MB, &limited), 64 * MB);
        assert_eq!(heap_goal(10 * MB, &limited), 20 * MB);
        let off_limited = GcConfig { percent: None, max_heap: Some(64 * MB), stress: false };
        assert_eq!(heap_goal(10 * MB, &off_limited), 64 * MB);
    }

    /// The pacing rule applied by a real collection: the next one is
    /// requested when the counted heap reaches the goal.
    #[test]
    fn a_collection_sets_the_next_trigger_from_the_live_heap() {
        let mut heap = Heap::new();
        heap.shared().configure(pct(Some(50)));
        // 16 MiB live (a kept array's storage).
        let keep = heap.alloc_array(Vec::with_capacity(2 << 20));
        heap.collect(|m| m.mark(keep));
        let live = heap.stats().live_bytes as usize;
        assert!(live >= 16 << 20);
        assert_eq!(heap.shared().threshold.load(Ordering::Relaxed), live / 2);
        // Allocating just under the budget does not ask; past it does.
        heap.shared().add_count(live / 2 - 1);
        assert!(!heap.wants_collection());
        heap.shared().add_count(1);
        assert!(heap.wants_collection());
        // Off: nothing allocated ever asks.
        heap.shared().configure(pct(None));
        heap.collect(|m| m.mark(keep));
        heap.shared().add_count(1 << 40);
        assert!(!heap.wants_collection());
    }

    /// The pacing rule after a cycle that ran beside the program: the next
    /// trigger is the bytes that survived (what the marker traced) grown
    /// by the percent, and what was allocated while marking ran counts
    /// toward it, not toward the live heap (which would let a cycle that
    /// overlaps a burst of allocation double the goal).
    #[test]
    fn a_cycle_paces_from_the_bytes_that_survived_and_counts_what_it_overlapped() {
        const MB: usize = 1 << 20;
        let mut heap = Heap::new();
        heap.shared().configure(pct(Some(100)));
        // 16 MiB kept (an array's storage).
        let keep = heap.alloc_array(Vec::with_capacity(2 * MB));
        begin_cycle(&mut heap, &[keep]);
        // 6 MiB allocated while the cycle runs, garbage by its end.
        for _ in 0..6 {
            heap.alloc_array(Vec::with_capacity(MB / 8));
        }
        heap.flush_count();
        end_cycle(&mut heap);
        let live = heap.stats().live_bytes as usize;
        assert!((16 * MB..17 * MB).contains(&live), "live {live}");
        // Goal 2 × live: the heap may grow by `live` in all, of which the
        // 6 MiB allocated during marking are already spent.
        assert_eq!(heap.shared().threshold.load(Ordering::Relaxed), live);
        let counted = heap.counted_bytes();
        assert!((6 * MB..7 * MB).contains(&counted), "counted {counted}");
        assert!(!heap.wants_collection());
        heap.shared().add_count(live - counted - 1);
        assert!(!heap.wants_collection());
        heap.shared().add_count(1);
        assert!(heap.wants_collection());
        // The next cycle finds the garbage dead: the same live heap.
        heap.collect(|m| m.mark(keep));
        assert_eq!(heap.stats().live_bytes as usize, live);
        // More allocated during a cycle than its goal allows: the next
        // one is asked for at once.
        begin_cycle(&mut heap, &[keep]);
        for _ in 0..20 {
            heap.alloc_array(Vec::with_capacity(MB / 8));
        }
        heap.flush_count();
        end_cycle(&mut heap);
        assert!(heap.wants_collection());
    }

    #[test]
    fn stress_mode_asks_for_a_collection_at_every_safepoint() {
        let mut heap = Heap::new();
        heap.shared().configure(GcConfig { stress: true, ..GcConfig::default() });
        assert!(heap.wants_collection());
        heap.collect(|_| {});
        assert!(heap.wants_collection(), "still asked after a collection");
    }

    #[test]
    fn the_limit_refuses_growth_past_it_and_says_when_a_collection_may_help() {
        let mut heap = Heap::new();
        heap.shared().configure(GcConfig { max_heap: Some(32 << 20), ..GcConfig::default() });
        heap.count_growth_here();
        take_limit_retry();
        assert!(check_growth(1 << 20).is_ok());
        // Nothing counted since the last collection: a collection cannot
        // help, so no retry.
        let err = check_growth(40 << 20).unwrap_err();
        assert!(matches!(&err, Fault::Range(m) if m == "out of memory: heap limit 32 MB reached"));
        assert!(!take_limit_retry());
        // 20 MiB counted since (maybe garbage): worth a collection first.
        heap.shared().add_count(20 << 20);
        assert!(check_growth(16 << 20).is_err());
        assert!(take_limit_retry());
        assert!(heap.wants_collection(), "a refusal asks for a collection");
        // After it, the live heap is what counts.
        heap.collect(|_| {});
        assert!(check_growth(16 << 20).is_ok());
        assert!(heap.check_alloc(40 << 20).is_err());
        // Engine text is never refused.
        {
            let _u = Unlimited::new();
            assert!(check_growth(40 << 20).is_ok());
        }
        assert!(check_growth(40 << 20).is_err());
    }

    #[test]
    fn sizes_parse_with_units_of_1024_and_bad_ones_are_refused() {
        assert_eq!(parse_size("256MB"), Some(256 << 20));
        assert_eq!(parse_size("1GB"), Some(1 << 30));
        assert_eq!(parse_size("512k"), Some(512 << 10));
        assert_eq!(parse_size("2 GiB"), Some(2 << 30));
        assert_eq!(parse_size("64m"), Some(64 << 20));
        assert_eq!(parse_size("4096"), Some(4096));
        for bad in ["", "MB", "0", "0MB", "1.5GB", "-1MB", "12XB", "1TB", "99999999999999999999G"] {
            assert_eq!(parse_size(bad), None, "{bad:?}");
        }
        assert_eq!(format_size(256 << 20), "256 MB");
        assert_eq!(format_size(1 << 30), "1 GB");
        assert_eq!(format_size(512 << 10), "512 KB");
        assert_eq!(format_size(1000), "1000 bytes");
    }

    #[test]
    fn unreachable_objects_are_freed_and_reachable_kept() {
        let mut heap = Heap::new();
        let keep = obj(&mut heap);
        let child = heap.alloc_str("child");
        set(keep, "c", child);
        for _ in 0..100 {
            obj(&mut heap);
        }
        assert_eq!(heap.object_count(), 102);
        heap.collect(|m| m.mark(keep));
        assert_eq!(heap.object_count(), 2);
        assert_eq!(heap.stats().freed, 100);
    }

    #[test]
    fn cycles_are_collected() {
        let mut heap = Heap::new();
        let a = obj(&mut heap);
        let b = obj(&mut heap);
        set(a, "b", b);
        set(b, "a", a);
        heap.collect(|m| m.mark(a));
        assert_eq!(heap.object_count(), 2);
        heap.collect(|_| {});
        assert_eq!(heap.object_count(), 0);
    }

    #[test]
    fn deep_chains_do_not_overflow_the_stack() {
        let mut heap = Heap::new();
        let head = heap.alloc_array(vec![]);
        let mut cur = head;
        let n = sized(200_000, 2_000);
        for _ in 0..n {
            let next = heap.alloc_array(vec![]);
            if let Body::Array(a) = &cur.as_obj().unwrap().body {
                a.lock().push(next);
            }
            cur = next;
        }
        heap.collect(|m| m.mark(head));
        assert_eq!(heap.object_count(), n + 1);
    }

    #[test]
    fn byte_buffers_count_toward_the_next_collection_once() {
        use crate::vm::object::Bytes;
        let mut heap = Heap::new();
        let big = heap.alloc(Body::Bytes(Bytes::new(vec![0; 4 << 20])));
        assert!(heap.local_bytes + heap.shared.allocated_since_gc.load(Ordering::Relaxed) >= 4 << 20);
        // A view of the same buffer does not count its bytes again.
        let before = heap.local_bytes + heap.shared.allocated_since_gc.load(Ordering::Relaxed);
        let Some(Body::Bytes(b)) = big.as_obj().map(|o| &o.body) else { panic!() };
        heap.alloc(Body::Bytes(Bytes { buf: b.buf.clone(), offset: 1, len: 10 }));
        let after = heap.local_bytes + heap.shared.allocated_since_gc.load(Ordering::Relaxed);
        assert!(after - before < 1024);
    }

    #[test]
    fn marks_are_cleared_after_collection() {
        let mut heap = Heap::new();
        // The non-generational sweep (a generational one keeps the marks
        // of the old: see `generational::survivors_are_old_until_a_full_cycle`).
        heap.set_generational(false);
        let a = obj(&mut heap);
        heap.collect(|m| m.mark(a));
        heap.collect(|m| m.mark(a));
        heap.finish_sweep();
        assert_eq!(heap.object_count(), 1);
        assert!(!a.as_obj().unwrap().header.marked.load(Ordering::Relaxed));
    }

    /// The sweep's pace: each step (a thread's 256 KiB of allocation)
    /// sweeps enough chunks that the sweep is done within the first
    /// quarter of the next cycle's allocation.
    #[test]
    fn the_sweep_is_done_within_a_quarter_of_the_next_cycle() {
        use super::super::sweep::CHUNK;
        let eight_steps = 4 * 8 * LOCAL_CHUNK;
        assert_eq!(sweep_pace(0, eight_steps), 1);
        assert_eq!(sweep_pace(8 * CHUNK, eight_steps), 1);
        assert_eq!(sweep_pace(8 * CHUNK + 1, eight_steps), 2);
        assert_eq!(sweep_pace(80 * CHUNK, eight_steps), 10);
        // A threshold under four steps still sweeps it all in one.
        assert_eq!(sweep_pace(80 * CHUNK, LOCAL_CHUNK), 80);

        // In a heap: many more dead objects than the next cycle's first
        // quarter allocates (at one chunk a step, 2 of the 25 chunks).
        let mut heap = Heap::new();
        heap.set_generational(false);
        let dead = sized(100_000, 10_000);
        for _ in 0..dead {
            heap.alloc_str("dead");
        }
        heap.collect(|_| {});
        let threshold = heap.shared.threshold.load(Ordering::Relaxed);
        let quarter = threshold / SWEEP_WITHIN + LOCAL_CHUNK;
        let live = heap.alloc_array(vec![]);
        for _ in 0..quarter / std::mem::size_of::<Obj>() + 1 {
            heap.alloc_str("new");
        }
        assert!(heap.shared.sweep.is_idle(), "swept within {quarter} bytes of {threshold}");
        assert_eq!(heap.shared.sweep.totals().0 as usize, dead);
        heap.collect(|m| m.mark(live));
        heap.finish_sweep();
        assert_eq!(heap.object_count(), 1);
    }

    /// An object allocated after the mark, while the sweep of that cycle
    /// may still run, is never freed by it, though it was never marked;
    /// the next collection judges it.
    #[test]
    fn objects_allocated_during_the_sweep_are_not_swept_by_it() {
        let mut heap = Heap::new();
        let root = heap.alloc_array(vec![]);
        let rounds = sized(20, 3);
        for round in 0..rounds {
            for _ in 0..sized(50_000, 300) {
                heap.alloc_str("garbage that keeps the sweeper busy");
            }
            heap.collect(|m| m.mark(root));
            // Unmarked, allocated after the mark; reachable from here on.
            let fresh = heap.alloc_str(format!("fresh {round}"));
            ops::array_data(root).unwrap().push(fresh);
            heap.finish_sweep();
            let d = ops::array_data(root).unwrap();
            for (i, v) in d.iter().enumerate() {
                assert_eq!(ops::to_display(*v), format!("fresh {i}"));
            }
        }
        assert_eq!(heap.object_count(), rounds + 1);
        heap.collect(|_| {});
        assert_eq!(heap.object_count(), 0);
    }

    /// Workers allocate, link new objects into old ones and drop old ones
    /// while collections (hundreds of them) mark with
    /// the world stopped and sweep with it running. Every object reachable
    /// from a worker's table must keep its content; repeated with 1, 2
    /// and 4 threads, so the sweeper and the markers race with mutators in
    /// many interleavings.
    #[test]
    fn nothing_reachable_is_freed_while_mutators_run_during_the_sweep() {
        const SLOTS: usize = 64;
        let steps = sized(6_000, 100);
        let counts: &[usize] = if cfg!(miri) { &[2] } else { &[1, 2, 4] };
        for (threads, generational) in counts.iter().flat_map(|&t| [(t, false), (t, true)]) {
            let heap = Heap::new();
            heap.set_generational(generational);
            // A collection wanted at every safepoint; one every 25 steps.
            heap.shared().configure(GcConfig { stress: true, ..GcConfig::default() });
            // Marking beside the mutators: each safepoint begins a cycle,
            // assists one (other threads storing meanwhile) or ends it.
            heap.shared().set_concurrent_marking(true);
            let shared = heap.shared().clone();
            let roots: Arc<Mutex<Vec<u64>>> = Arc::new(Mutex::new(vec![Value::UNDEFINED.bits(); threads]));
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let shared = shared.clone();
                    let roots = roots.clone();
                    std::thread::spawn(move || {
                        let mut h = Heap::attach_to(&shared);
                        let slot = h.new_slot();
                        let task = Task::new(0);
                        let table = {
                            let _m = h.enter(&slot);
                            let table = h.alloc_array(vec![Value::UNDEFINED; SLOTS]);
                            roots.lock()[t] = table.bits();
                            table
                        };
                        for step in 0..steps {
                            let _m = h.enter(&slot);
                            // A new string inside a new array, stored into an
                            // old table: the previous occupant becomes garbage.
                            let s = h.alloc_str(format!("w{t} s{step}"));
                            let node = h.alloc_array(vec![s, Value::number(step as f64)]);
                            ops::array_data(table).unwrap()[step % SLOTS] = node;
                            // The lost-object race: an old node taken out of
                            // its slot (which the marker may not have read
                            // yet) and put back, while other threads mark.
                            let j = (step * 7) % SLOTS;
                            let moved = std::mem::replace(&mut ops::array_data(table).unwrap()[j], Value::UNDEFINED);
                            h.alloc_array(vec![Value::number(0.0); 4]);
                            ops::array_data(table).unwrap()[j] = moved;
                            for _ in 0..8 {
                                h.alloc_array(vec![Value::number(1.0); 16]);
                            }
                            if step % 97 == 0 {
                                // Every live node intact.
                                let d = ops::array_data(table).unwrap().to_vec();
                                for v in d.iter().filter(|v| !v.is_undefined()) {
                                    let n = ops::array_data(*v).unwrap();
                                    let k = n[1].as_number() as usize;
                                    assert_eq!(ops::to_display(n[0]), format!("w{t} s{k}"));
                                }
                            }
                            if step % 5 == 0 && h.wants_collection() {
                                let roots = roots.clone();
                                h.safepoint(&slot, &task, move |m| {
                                    for &b in roots.lock().iter() {
                                        m.mark(Value::from_bits(b));
                                    }
                                });
                            }
                        }
                    })
                })
                .collect();
            for t in handles {
                t.join().unwrap();
            }
            let st = heap.stats();
            assert!(st.collections > sized(20, 0) as u64, "the test must exercise collections ({})", st.collections);
            if !cfg!(miri) && generational {
                // Stress mode: every fourth cycle is a full one.
                assert!(st.minor_collections > 0, "minor cycles ran");
                assert!(st.collections > st.minor_collections, "full cycles ran");
            }
            if !generational {
                assert_eq!(st.minor_collections, 0, "every cycle is full");
            }
            heap.finish_sweep();
            assert!(heap.stats().freed > 0);
            // Each table holds its last SLOTS nodes.
            for (t, &b) in roots.lock().iter().enumerate() {
                let d = ops::array_data(Value::from_bits(b)).unwrap().to_vec();
                for (i, v) in d.iter().enumerate() {
                    let n = ops::array_data(*v).unwrap();
                    let k = n[1].as_number() as usize;
                    assert_eq!(k % SLOTS, i);
                    assert!(k >= steps - SLOTS);
                    assert_eq!(ops::to_display(n[0]), format!("w{t} s{k}"));
                }
            }
        }
    }

    /// Begins a concurrent cycle on a one-thread heap, with `roots`.
    fn begin_cycle(heap: &mut Heap, roots: &[Value]) {
        heap.shared().set_concurrent_marking(true);
        heap.wait_for_sweep();
        heap.begin_marking(Instant::now(), |m| m.mark_all(roots));
        heap.refresh_marking();
    }

    fn end_cycle(heap: &mut Heap) {
        heap.shared().drain_all();
        heap.shared().end_marking();
        heap.refresh_marking();
        heap.finish_sweep();
    }

    fn marked(v: Value) -> bool {
        v.as_obj().unwrap().header.marked.load(Ordering::Relaxed)
    }

    #[test]
    fn the_barrier_shades_the_overwritten_value() {
        let mut heap = Heap::new();
        let x = heap.alloc_str("x".repeat(40));
        let arr = heap.alloc_array(vec![x]);
        begin_cycle(&mut heap, &[arr]);
        assert!(!marked(x), "not traced yet");
        ops::array_data(arr).unwrap()[0] = Value::NULL;
        assert!(marked(x), "shaded by the store that removed it");
        assert!(heap.shared().grey.lock().contains(&(x.as_obj().unwrap() as *const Obj as usize)));
        // Not marking: stores shade nothing.
        end_cycle(&mut heap);
        let y = heap.alloc_str("y".repeat(40));
        ops::array_data(arr).unwrap()[0] = y;
        ops::array_data(arr).unwrap()[0] = Value::NULL;
        assert!(!marked(y));
    }

    /// The strings of at most one byte are the process's shared objects
    /// (`SHARED_STRS`): every way of making one gives the same object, and
    /// none is on the heap. Collections of each kind — full, concurrent
    /// with the barrier shading one, minor — leave them marked (never
    /// queued, traced or counted) and whole, and free the garbage around
    /// them as before.
    #[test]
    fn strings_of_one_byte_are_shared_marked_and_never_swept() {
        let mut heap = Heap::new();
        // Full cycles first; generational below.
        heap.set_generational(false);
        let a = heap.alloc_ascii_str("a");
        assert_eq!(a, heap.alloc_str("a"));
        assert_eq!(a, heap.alloc_str_copy("a"));
        assert_eq!(a, shared_str(b"a").unwrap());
        assert_ne!(a, heap.alloc_ascii_str("b"));
        let empty = heap.alloc_str(String::new());
        assert_eq!(empty, heap.alloc_ascii_str(""));
        assert!(is_shared(a.as_obj().unwrap()) && is_shared(empty.as_obj().unwrap()));
        assert_eq!((ops::to_display(a), ops::to_display(empty)), ("a".to_string(), String::new()));
        assert_eq!(heap.object_count(), 0, "on no list");
        assert_eq!(heap.counted_bytes(), 0, "not counted");
        let two = heap.alloc_ascii_str("ab");
        assert!(!is_shared(two.as_obj().unwrap()));
        let arr = heap.alloc_array(vec![a, empty, two]);
        for _ in 0..100 {
            heap.alloc_ascii_str("garbage");
        }
        heap.collect(|m| m.mark(arr));
        assert_eq!(heap.object_count(), 2, "the array and \"ab\"");
        assert_eq!(heap.stats().freed, 100);
        assert!(marked(a) && marked(empty), "a sweep never clears a shared mark");
        // Concurrent: the store that drops `a` shades nothing (already
        // marked), and the cycle's end traces nothing of it.
        begin_cycle(&mut heap, &[arr]);
        ops::array_data(arr).unwrap()[0] = Value::NULL;
        assert!(!heap.shared().grey.lock().contains(&(a.as_obj().unwrap() as *const Obj as usize)));
        end_cycle(&mut heap);
        assert!(marked(a));
        // Generational: marked means old, and an old string holds nothing,
        // so a minor cycle neither remembers nor frees it.
        heap.set_generational(true);
        ops::array_data(arr).unwrap()[0] = a;
        assert!(heap.shared().remembered.lock().bodies.len() <= 1);
        heap.collect_cycle(Some(false), |m| m.mark(arr));
        heap.finish_sweep();
        heap.collect(|m| m.mark(arr));
        assert!(marked(a) && marked(empty));
        assert_eq!(ops::to_display(ops::array_data(arr).unwrap()[0]), "a");
        assert_eq!(heap.object_count(), 2);
    }

    /// The classic lost object: `x` moves from a place the marker has not
    /// scanned (`a`) into one it has (`b`) while marking runs; without the
    /// barrier on `a`'s store it would be freed while `b` holds it.
    #[test]
    fn an_object_moved_behind_the_marker_survives() {
        let mut heap = Heap::new();
        let x = heap.alloc_str("moved ".repeat(10));
        let a = heap.alloc_array(vec![x]);
        let b = heap.alloc_array(vec![]);
        let root = heap.alloc_array(vec![a, b]);
        heap.shared().set_concurrent_marking(true);
        heap.wait_for_sweep();
        heap.begin_marking(Instant::now(), |m| m.mark(root));
        heap.refresh_marking();
        // The marker traces the root and `b`, not `a`.
        {
            let s = heap.shared().clone();
            let mut m = Marker::new(s.epoch.load(Ordering::Relaxed));
            s.grey.lock().clear();
            m.stack.push(root.as_obj().unwrap() as *const Obj);
            m.drain_some(1);
            m.stack.retain(|&p| !std::ptr::eq(p, a.as_obj().unwrap()));
            m.drain();
            s.grey.lock().push(a.as_obj().unwrap() as *const Obj as usize);
        }
        assert!(marked(b) && !marked(x));
        ops::array_data(b).unwrap().push(x);
        ops::array_data(a).unwrap().clear();
        end_cycle(&mut heap);
        assert_eq!(ops::to_display(ops::array_data(b).unwrap()[0]), "moved ".repeat(10));
        assert_eq!(heap.object_count(), 4);
        heap.collect(|m| m.mark(root));
        assert_eq!(ops::to_display(ops::array_data(b).unwrap()[0]), "moved ".repeat(10));
    }

    /// Objects made while marking are born marked and survive the cycle
    /// without being traced; the next cycle judges them.
    #[test]
    fn objects_allocated_while_marking_are_black() {
        let mut heap = Heap::new();
        // Marks cleared after the cycle: the non-generational sweep.
        heap.set_generational(false);
        let root = heap.alloc_array(vec![]);
        begin_cycle(&mut heap, &[root]);
        let young = heap.alloc_str("young".repeat(10));
        let garbage = heap.alloc_array(vec![]);
        assert!(marked(young) && marked(garbage));
        ops::array_data(root).unwrap().push(young);
        end_cycle(&mut heap);
        // Both survived this cycle (black); marks cleared by the sweep.
        assert_eq!(heap.object_count(), 3);
        assert!(!marked(young));
        heap.collect(|m| m.mark(root));
        assert_eq!(heap.object_count(), 2);
        assert_eq!(ops::to_display(young), "young".repeat(10));
    }

    /// The pieces made together are what `alloc_ascii_str` makes of each:
    /// the same texts, shared one-byte strings, long pieces outside the
    /// object, black while marking, each counted and swept like the rest.
    #[test]
    fn fields_are_made_like_single_strings() {
        let mut heap = Heap::new();
        heap.set_generational(false);
        let long = "l".repeat(INLINE_STR + 1);
        let text = format!(",a,{long},word,");
        let seps: Vec<u32> = text.match_indices(',').map(|(i, _)| i as u32).collect();
        let root = heap.alloc_array(vec![]);
        begin_cycle(&mut heap, &[root]);
        let before = heap.object_count();
        let mut out = Vec::new();
        heap.alloc_ascii_fields(&text, &seps, &mut out);
        let texts: Vec<String> = out.iter().map(|&v| ops::to_display(v)).collect();
        assert_eq!(texts, ["", "a", long.as_str(), "word", ""]);
        assert!(out.iter().all(|&v| marked(v)), "born black while marking");
        assert!(is_shared(out[0].as_obj().unwrap()) && is_shared(out[1].as_obj().unwrap()));
        assert_eq!(heap.object_count(), before + 2, "the long piece and `word` are new objects");
        ops::array_data(root).unwrap().push(out[3]);
        end_cycle(&mut heap);
        heap.collect(|m| m.mark(root));
        assert_eq!(heap.object_count(), before + 1, "the dropped piece was swept, the kept one not");
        assert_eq!(ops::to_display(ops::array_data(root).unwrap()[0]), "word");
    }

    /// A value only in the registers of a task that is not running (the
    /// live-task table holds its object) is shaded in the pause that
    /// begins the cycle, so the task may move it into the heap later
    /// without a barrier on its registers.
    #[test]
    fn a_suspended_task_is_scanned_when_marking_begins() {
        use crate::bytecode::FuncProto;
        let mut heap = Heap::new();
        let fp = Arc::new(FuncProto { num_regs: 4, ..FuncProto::default() });
        let rt = crate::vm::link::link(&fp, &mut heap, &mut Default::default());
        let closure = crate::vm::runtime::make_closure(&mut heap, rt.clone(), Box::new([]));
        let held = heap.alloc_str("held by a register".repeat(3));
        let mut t = Task::new(1);
        t.grow_regs(4);
        t.regs[2] = held;
        t.frames.push(crate::vm::task::Frame {
            rt: Arc::as_ptr(&rt),
            closure,
            pc: 0,
            base: 0,
            ret: 0,
            flags: 0,
            after: Value::UNDEFINED,
        });
        let cell = Arc::new(crate::sync::TaskCell::new(1, Box::new(t)));
        let task = heap.alloc(Body::Task(cell.clone()));
        begin_cycle(&mut heap, &[task]);
        assert!(marked(held) && marked(closure), "the task's registers were scanned in the pause");
        // Not traced by it: shaded, waiting in the grey queue.
        assert!(heap.shared().grey.lock().contains(&(held.as_obj().unwrap() as *const Obj as usize)));
        end_cycle(&mut heap);
        heap.collect(|m| m.mark(task));
        assert_eq!(ops::to_display(held), "held by a register".repeat(3));
    }

    #[test]
    fn pauses_fill_the_histogram() {
        let mut heap = Heap::new();
        for _ in 0..3 {
            heap.collect(|_| {});
        }
        let st = heap.stats();
        assert_eq!(st.pause_histogram.iter().sum::<u64>(), 3);
        assert!(st.max_pause_ns > 0 && st.total_pause_ns >= st.max_pause_ns);
        heap.shared().record_pause(Instant::now() - Duration::from_millis(3), Instant::now(), 1000);
        let st = heap.stats();
        // 2 ms < 3 ms <= 5 ms: the sixth bucket.
        assert_eq!(st.pause_histogram[5], 1);
        assert!(st.max_pause_ns >= 3_000_000);
    }

    /// Several threads allocate at once, each keeping a chain alive through
    /// a shared root table and dropping garbage; whoever sees the request
    /// at its "safepoint" collects while the others park. Every chain must
    /// survive intact, and garbage must go.
    #[test]
    fn stop_the_world_with_parallel_mutators() {
        const THREADS: usize = 4;
        let steps = sized(20_000, 400);
        let heap = Heap::new();
        if cfg!(miri) {
            // Too few steps to reach the threshold: ask at every safepoint
            // instead (`safepoint_every` keeps the collections few).
            heap.shared().configure(GcConfig { stress: true, ..GcConfig::default() });
        }
        let safepoint_every = sized(1, 50);
        let shared = heap.shared().clone();
        let roots: Arc<Mutex<Vec<u64>>> = Arc::new(Mutex::new(vec![Value::UNDEFINED.bits(); THREADS]));
        let threads: Vec<_> = (0..THREADS)
            .map(|t| {
                let shared = shared.clone();
                let roots = roots.clone();
                std::thread::spawn(move || {
                    let mut h = Heap::attach_to(&shared);
                    let slot = h.new_slot();
                    let task = Task::new(0);
                    for step in 0..steps {
                        let _m = h.enter(&slot);
                        let head = Value::from_bits(roots.lock()[t]);
                        // Garbage, big enough to trigger collections.
                        h.alloc_array(vec![Value::number(step as f64); 64]);
                        let node = h.alloc_array(vec![head, Value::number(step as f64)]);
                        roots.lock()[t] = node.bits();
                        if step % safepoint_every == 0 && h.wants_collection() {
                            let roots = roots.clone();
                            h.safepoint(&slot, &task, move |m| {
                                for &b in roots.lock().iter() {
                                    m.mark(Value::from_bits(b));
                                }
                            });
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(heap.stats().collections > 0, "the test must exercise collections");
        for &b in roots.lock().iter() {
            let mut v = Value::from_bits(b);
            let mut expect = steps;
            while let Some(Body::Array(a)) = v.as_obj().map(|o| &o.body) {
                let a = unsafe { a.get_stopped() };
                expect -= 1;
                assert_eq!(a[1].as_number(), expect as f64, "chain intact");
                v = a[0];
            }
            assert_eq!(expect, 0, "whole chain reachable");
        }
        // Live: the chains; everything else was garbage.
        assert!(heap.object_count() < THREADS * steps * 2);
    }

    /// Generational mode (the default): minor cycles mark from the roots,
    /// the young objects and the remembered set, and sweep the young only.
    mod generational {
        use super::*;
        use crate::sync::channel::{ChannelCell, Recv};

        /// A heap in generational mode (off by default).
        fn generational_heap() -> Heap {
            let heap = Heap::new();
            heap.set_generational(true);
            heap
        }

        fn minor(heap: &mut Heap, roots: &[Value]) {
            heap.collect_cycle(Some(false), |m| m.mark_all(roots));
            heap.finish_sweep();
        }

        /// An old array given a young child after it was promoted: the
        /// barrier puts the array's body into the remembered set, and the
        /// minor cycle traces it, so the child survives; garbage beside it
        /// is freed, and the old array is neither swept nor traced again.
        #[test]
        fn an_old_object_given_a_young_child_survives_a_minor_cycle() {
            let mut heap = generational_heap();
            let old = heap.alloc_array(vec![]);
            heap.collect(|m| m.mark(old));
            assert!(marked(old), "a survivor is old: its mark stays");
            let young = heap.alloc_str("a young child".repeat(4));
            for _ in 0..100 {
                heap.alloc_array(vec![Value::number(1.0); 8]);
            }
            assert!(heap.shared().remembered.lock().bodies.is_empty());
            ops::array_data(old).unwrap().push(young);
            assert_eq!(heap.shared().remembered.lock().bodies.len(), 1, "the first change remembers the body");
            ops::array_data(old).unwrap().push(young);
            assert_eq!(heap.shared().remembered.lock().bodies.len(), 1, "once per mutator epoch");
            minor(&mut heap, &[old]);
            assert_eq!(heap.stats().minor_collections, 1);
            assert_eq!(heap.object_count(), 2);
            assert_eq!(ops::to_display(ops::array_data(old).unwrap()[0]), "a young child".repeat(4));
            assert!(heap.shared().remembered.lock().bodies.is_empty(), "consumed by the cycle");
        }

        /// A young chain hanging off an old object only (not from a root):
        /// every link survives the minor cycle and is promoted; a young
        /// object made on a new object's creation needs no barrier at all.
        #[test]
        fn a_young_object_reachable_only_through_an_old_one_survives() {
            let mut heap = generational_heap();
            let root = heap.alloc_array(vec![]);
            let holder = obj(&mut heap);
            ops::array_data(root).unwrap().push(holder);
            heap.collect(|m| m.mark(root));
            // Young: a string inside a new array (made with its element,
            // no barrier), stored into the old object's property.
            let leaf = heap.alloc_str("leaf".repeat(10));
            let inner = heap.alloc_array(vec![leaf]);
            let n = heap.shared().remembered.lock().bodies.len();
            assert_eq!(n, 0, "making a new object remembers nothing");
            set(holder, "inner", inner);
            for _ in 0..50 {
                obj(&mut heap);
            }
            minor(&mut heap, &[root]);
            assert_eq!(heap.object_count(), 4, "root, holder, inner, leaf");
            assert!(marked(inner) && marked(leaf), "promoted");
            let Body::Object(d) = &holder.as_obj().unwrap().body else { unreachable!() };
            let got = d.lock().props.get(crate::vm::atom::Atom::intern("inner")).unwrap();
            assert_eq!(ops::to_display(ops::array_data(got).unwrap()[0]), "leaf".repeat(10));
            // Unchanged since, the old objects keep their children through
            // a second minor cycle without being remembered again.
            minor(&mut heap, &[root]);
            assert_eq!(heap.object_count(), 4);
            assert_eq!(ops::to_display(leaf), "leaf".repeat(10));
        }

        /// Survivors of two cycles are old: a minor cycle neither frees
        /// them when they die nor traces them; a full cycle does both.
        #[test]
        fn survivors_are_old_until_a_full_cycle() {
            let mut heap = generational_heap();
            let root = heap.alloc_array(vec![]);
            // Old objects within half the first cycle's budget (the floor
            // of an empty heap, `SMALL_FLOOR`), so that the next cycle is
            // a minor one.
            let n = sized(4_000, 200);
            for i in 0..n {
                let s = heap.alloc_str(format!("old string {i}"));
                ops::array_data(root).unwrap().push(s);
            }
            minor(&mut heap, &[root]);
            // Survived once: young still, traced again by the next cycle,
            // which promotes them.
            assert!(!marked(root));
            minor(&mut heap, &[root]);
            assert!(marked(root));
            let young = heap.alloc_str("young".repeat(8));
            ops::array_data(root).unwrap().push(young);
            let traced_before = heap.shared().traced.load(Ordering::Relaxed);
            assert!(traced_before > n * std::mem::size_of::<Obj>(), "the second cycle traced everything");
            minor(&mut heap, &[root]);
            let traced = heap.shared().traced.load(Ordering::Relaxed);
            assert!(traced < 1024, "a minor cycle traces no old object: {traced} bytes");
            assert!(marked(young));
            // The old strings die: a minor cycle keeps them (old objects
            // are not swept) ...
            ops::set_array_length(&mut ops::array_data(root).unwrap(), Value::number(0.0)).unwrap();
            minor(&mut heap, &[root]);
            assert_eq!(heap.object_count(), n + 2);
            // ... a full cycle frees them, and after it the marks of the
            // survivors are still those of old objects.
            heap.collect(|m| m.mark(root));
            assert_eq!(heap.object_count(), 1);
            assert!(marked(root));
        }

        /// A young value sent into an old channel's buffer: the store is
        /// outside a `Mut`, so the value itself is remembered.
        #[test]
        fn a_young_value_in_an_old_channel_survives() {
            let mut heap = generational_heap();
            let cell = Arc::new(ChannelCell::new(4));
            let ch = heap.alloc(Body::Channel(cell.clone()));
            heap.collect(|m| m.mark(ch));
            let v = heap.alloc_str("sent while old".repeat(3));
            heap.alloc_str("garbage".repeat(10));
            cell.try_send(v, &mut Vec::new());
            assert_eq!(heap.shared().remembered.lock().values, vec![v.bits()]);
            minor(&mut heap, &[ch]);
            assert_eq!(heap.object_count(), 2);
            let Recv::Got(got) = cell.try_recv(&mut Vec::new()) else { panic!("nothing buffered") };
            assert_eq!(ops::to_display(got), "sent while old".repeat(3));
        }

        /// An old task's registers have no barrier: a minor cycle scans
        /// them in its first pause, as a full one does.
        #[test]
        fn an_old_tasks_registers_are_scanned_by_a_minor_cycle() {
            use crate::bytecode::FuncProto;
            let mut heap = generational_heap();
            let fp = Arc::new(FuncProto { num_regs: 4, ..FuncProto::default() });
            let rt = crate::vm::link::link(&fp, &mut heap, &mut Default::default());
            let closure = crate::vm::runtime::make_closure(&mut heap, rt.clone(), Box::new([]));
            let mut t = Task::new(1);
            t.grow_regs(4);
            t.frames.push(crate::vm::task::Frame {
                rt: Arc::as_ptr(&rt),
                closure,
                pc: 0,
                base: 0,
                ret: 0,
                flags: 0,
                after: Value::UNDEFINED,
            });
            let cell = Arc::new(crate::sync::TaskCell::new(1, Box::new(t)));
            let task = heap.alloc(Body::Task(cell.clone()));
            heap.collect(|m| m.mark(task));
            assert!(marked(task));
            let count = heap.object_count();
            let held = heap.alloc_str("only in a register".repeat(2));
            cell.exec.lock().as_mut().unwrap().regs[3] = held;
            heap.alloc_str("garbage".repeat(10));
            minor(&mut heap, &[task]);
            assert_eq!(heap.object_count(), count + 1);
            assert_eq!(ops::to_display(held), "only in a register".repeat(2));
        }

        /// Concurrent marking in a minor cycle: an old object first changed
        /// while marking (its young child moved out of a young array the
        /// marker has not read) keeps the child through the deletion
        /// barrier; one changed before the cycle is traced from the
        /// remembered set.
        #[test]
        fn minor_cycles_compose_with_concurrent_marking() {
            let mut heap = generational_heap();
            let a = heap.alloc_array(vec![]);
            let b = heap.alloc_array(vec![]);
            heap.collect(|m| m.mark_all(&[a, b]));
            let x = heap.alloc_str("moved".repeat(10));
            let y = heap.alloc_str("remembered".repeat(5));
            let holder = heap.alloc_array(vec![x]);
            ops::array_data(a).unwrap().push(holder);
            ops::array_data(b).unwrap().push(y);
            begin_cycle(&mut heap, &[a, b]);
            assert!(!heap.shared().major.load(Ordering::Relaxed), "a minor cycle");
            // Move x from the young holder (not traced yet) into old b,
            // then cut it from the holder.
            ops::array_data(b).unwrap().push(x);
            ops::array_data(holder).unwrap().clear();
            end_cycle(&mut heap);
            assert_eq!(heap.object_count(), 5);
            assert_eq!(ops::to_display(ops::array_data(b).unwrap()[0]), "remembered".repeat(5));
            assert_eq!(ops::to_display(ops::array_data(b).unwrap()[1]), "moved".repeat(10));
        }

        fn gen_of(v: Value) -> u8 {
            v.as_obj().unwrap().header.gen.load(Ordering::Relaxed)
        }

        /// Aging: an object that survives one cycle is young still (its
        /// mark cleared, a survivor), so a minor cycle after it dies frees
        /// it without a full cycle; one that survives two is old.
        #[test]
        fn a_survivor_of_one_cycle_is_young_and_freed_by_a_minor_cycle() {
            let mut heap = generational_heap();
            let keep = heap.alloc_str("kept for two cycles".repeat(3));
            let brief = heap.alloc_str("kept for one cycle".repeat(3));
            minor(&mut heap, &[keep, brief]);
            for v in [keep, brief] {
                assert!(!marked(v), "a survivor's mark is cleared");
                assert_eq!(gen_of(v), Header::SURVIVOR);
            }
            assert_eq!(heap.object_count(), 2);
            minor(&mut heap, &[keep]);
            assert_eq!(heap.object_count(), 1, "the survivor that died is freed by a minor cycle");
            assert!(marked(keep), "survived twice: old");
            assert_eq!(gen_of(keep), Header::OLD);
            assert_eq!(ops::to_display(keep), "kept for two cycles".repeat(3));
        }

        /// A full cycle ages what it finds too: an object made since the
        /// last cycle comes out of it a survivor, not old, and an old one
        /// stays old.
        #[test]
        fn a_full_cycle_ages_instead_of_promoting() {
            let mut heap = generational_heap();
            let old = heap.alloc_array(vec![]);
            minor(&mut heap, &[old]);
            minor(&mut heap, &[old]);
            assert_eq!(gen_of(old), Header::OLD);
            let young = heap.alloc_str("young".repeat(10));
            heap.collect(|m| m.mark_all(&[old, young]));
            heap.finish_sweep();
            assert_eq!(heap.stats().minor_collections, 2);
            assert_eq!((gen_of(old), gen_of(young)), (Header::OLD, Header::SURVIVOR));
            assert!(marked(old) && !marked(young));
            // Dead, it is freed by the next minor cycle.
            minor(&mut heap, &[old]);
            assert_eq!(heap.object_count(), 1);
        }

        /// An object first marked from young objects, then reached from
        /// one that will be old, is promoted after all, and traced again so
        /// that what it reaches is promoted too (else an old object would
        /// point to a survivor it was never remembered for).
        #[test]
        fn an_object_reached_from_an_old_one_after_a_young_one_is_traced_again() {
            let mut heap = generational_heap();
            let leaf = heap.alloc_str("leaf".repeat(10));
            let mid = heap.alloc_array(vec![leaf]);
            let mut m = Marker::new(next_epoch(MINOR_EPOCH));
            m.mark(mid);
            m.drain();
            assert!(marked(mid) && marked(leaf));
            assert_eq!((gen_of(mid), gen_of(leaf)), (0, 0), "marked from a root: they would age");
            // Now reached from an old object (a remembered body's trace).
            m.tenure = true;
            m.mark(mid);
            m.tenure = false;
            assert_eq!(m.stack.len(), 1, "queued again");
            m.drain();
            assert_eq!(gen_of(mid) & Header::TENURE, Header::TENURE);
            assert_eq!(gen_of(leaf) & Header::TENURE, Header::TENURE, "what it reaches is promoted too");
            assert!(m.promoted > 0);
            // Once flagged, reaching it again queues nothing.
            m.tenure = true;
            m.mark(mid);
            assert!(m.stack.is_empty());
        }

        /// A minor cycle that finds more than a quarter of what was made
        /// since the last cycle still alive gives way to four full cycles;
        /// then minor cycles come back.
        #[test]
        fn minor_cycles_that_find_the_young_alive_give_way_to_full_ones() {
            let mut heap = generational_heap();
            let root = heap.alloc_array(vec![]);
            heap.collect(|m| m.mark(root));
            // 2 MiB made and all of it kept.
            for _ in 0..4 {
                let a = heap.alloc_array(Vec::with_capacity(1 << 16));
                ops::array_data(root).unwrap().push(a);
            }
            heap.collect_cycle(Some(false), |m| m.mark(root));
            assert_eq!(heap.shared().full_left.load(Ordering::Relaxed), 4);
            assert!(heap.shared().next_major.load(Ordering::Relaxed));
            let minors = heap.stats().minor_collections;
            for _ in 0..4 {
                heap.collect_cycle(None, |m| m.mark(root));
            }
            assert_eq!(heap.stats().minor_collections, minors, "four full cycles");
            assert!(!heap.shared().next_major.load(Ordering::Relaxed), "then a minor one");
        }

        /// What a minor cycle's mutators make while it marks is not part
        /// of it: neither marked (promoted) nor swept by it, but young for
        /// the next one; an old object given such an object meanwhile is
        /// remembered for that next cycle, which keeps the object.
        #[test]
        fn objects_made_while_a_minor_cycle_marks_stay_young() {
            let mut heap = generational_heap();
            let a = heap.alloc_array(vec![]);
            heap.collect(|m| m.mark(a));
            let count = heap.object_count();
            begin_cycle(&mut heap, &[a]);
            assert!(!heap.shared().major.load(Ordering::Relaxed), "a minor cycle");
            let fresh = heap.alloc_str("made while marking".repeat(3));
            let garbage = heap.alloc_array(vec![fresh]);
            assert!(!marked(fresh) && !marked(garbage), "not allocated black");
            ops::array_data(a).unwrap().push(fresh);
            end_cycle(&mut heap);
            assert!(!marked(fresh), "young after the cycle");
            assert_eq!(heap.object_count(), count + 2, "not swept by it");
            assert_eq!(heap.shared().remembered.lock().bodies.len(), 1, "the old array, for the next cycle");
            minor(&mut heap, &[a]);
            assert_eq!(heap.object_count(), count + 1, "the next one frees the garbage");
            assert!(marked(fresh), "and promotes the survivor");
            assert_eq!(ops::to_display(ops::array_data(a).unwrap()[0]), "made while marking".repeat(3));
        }

        /// A body the marker of a minor cycle has read (a young array it
        /// traced, an old one from the remembered set) and that changes
        /// later in the same cycle: what is stored may be made meanwhile,
        /// which the cycle leaves young, in a body that is old when the
        /// cycle ends. The change must remember the body for the next
        /// cycle; the marker's read does not stand for the barrier there,
        /// as it does in a full cycle (the stress test's lost `array`).
        #[test]
        fn a_body_the_minor_marker_read_is_remembered_when_changed_after() {
            let mut heap = generational_heap();
            let old = heap.alloc_array(vec![]);
            heap.collect(|m| m.mark(old));
            let young = heap.alloc_array(vec![]);
            ops::array_data(old).unwrap().push(young);
            let count = heap.object_count();
            begin_cycle(&mut heap, &[old]);
            assert!(!heap.shared().major.load(Ordering::Relaxed), "a minor cycle");
            // The marker reads both bodies: `old` from the remembered set,
            // `young` reached through it.
            heap.shared().drain_all();
            assert!(marked(young), "promoted by this cycle");
            let a = heap.alloc_str("into the young array".repeat(2));
            let b = heap.alloc_str("into the old array".repeat(2));
            ops::array_data(young).unwrap().push(a);
            ops::array_data(old).unwrap().push(b);
            assert_eq!(heap.shared().remembered.lock().bodies.len(), 2, "both bodies, for the next cycle");
            end_cycle(&mut heap);
            assert!(!marked(a) && !marked(b), "made during the cycle: young");
            assert_eq!(heap.object_count(), count + 2);
            minor(&mut heap, &[old]);
            assert_eq!(heap.object_count(), count + 2, "the next minor cycle keeps both");
            assert!(marked(a) && marked(b));
            assert_eq!(ops::to_display(ops::array_data(young).unwrap()[0]), "into the young array".repeat(2));
            assert_eq!(ops::to_display(ops::array_data(old).unwrap()[1]), "into the old array".repeat(2));
        }

        /// The fallback: with generational mode off, every cycle is full.
        #[test]
        fn off_every_cycle_is_full() {
            let mut heap = generational_heap();
            heap.set_generational(false);
            let root = heap.alloc_array(vec![]);
            for _ in 0..3 {
                heap.collect_cycle(None, |m| m.mark(root));
            }
            heap.finish_sweep();
            assert_eq!(heap.stats().minor_collections, 0);
            assert!(!marked(root));
            assert_eq!(barrier_epoch(), 0, "no barrier between cycles");
        }

        /// The rule: a full cycle once the old generation has used all but
        /// half of the last full cycle's budget (the GC percent of what it
        /// left), and it starts when the heap reaches that cycle's goal.
        /// Each round keeps 1 MiB and drops 8, so the minor cycles pay.
        #[test]
        fn a_full_cycle_comes_when_the_old_generation_doubled() {
            let mut heap = generational_heap();
            let root = heap.alloc_array(vec![]);
            // 16 MiB kept by the first (full) cycle, old after the second.
            ops::array_data(root).unwrap().push(heap.alloc_array(Vec::with_capacity(2 << 20)));
            heap.collect(|m| m.mark(root));
            let base = heap.stats().live_bytes as usize;
            let mut minors = 0;
            while !heap.shared().next_major.load(Ordering::Relaxed) {
                for _ in 0..8 {
                    heap.alloc_array(Vec::with_capacity(1 << 17));
                }
                let a = heap.alloc_array(Vec::with_capacity(1 << 17));
                ops::array_data(root).unwrap().push(a);
                heap.collect_cycle(None, |m| m.mark(root));
                minors += 1;
                assert!(minors < 100);
            }
            assert_eq!(heap.shared().full_run.load(Ordering::Relaxed), 0, "every minor cycle paid");
            let live = heap.stats().live_bytes as usize;
            assert!(live >= base * 3 / 2 && live < base * 3 / 2 + (3 << 20), "{live} vs {base}");
            // What is left of the goal (twice the base) before it starts.
            assert_eq!(heap.shared().threshold.load(Ordering::Relaxed), base * 2 - live);
            assert_eq!(heap.stats().minor_collections, minors);
            heap.collect_cycle(None, |m| m.mark(root));
            assert_eq!(heap.stats().minor_collections, minors, "the next one was full");
        }
    }

    /// Growth of every kind of storage reaches the count, exactly by the
    /// capacity it added.
    mod accounting {
        use super::*;
        use crate::sync::channel::ChannelCell;
        use crate::vm::object::{MapData, PropMap};
        use crate::vm::ops;

        fn grown_by(heap: &Heap, f: impl FnOnce()) -> usize {
            let before = heap.counted_bytes();
            f();
            heap.counted_bytes() - before
        }

        #[test]
        fn array_appends_and_length_writes_are_counted() {
            let mut heap = Heap::new();
            let a = heap.alloc_array(vec![]);
            let grown = grown_by(&heap, || {
                let mut d = ops::array_data(a).unwrap();
                for i in 0..sized(10_000, 1_000) {
                    ops::array_store(&mut d, i, Value::number(i as f64)).unwrap();
                }
            });
            let cap = ops::array_data(a).unwrap().capacity();
            assert_eq!(grown, cap * 8);
            let grown = grown_by(&heap, || {
                let n = sized(100_000, 10_000) as f64;
                ops::set_array_length(&mut ops::array_data(a).unwrap(), Value::number(n)).unwrap();
            });
            assert_eq!(grown, (ops::array_data(a).unwrap().capacity() - cap) * 8);
            let cap = ops::array_data(a).unwrap().capacity();
            let grown = grown_by(&heap, || {
                let mut d = ops::array_data(a).unwrap();
                ops::array_reserve(&mut d, cap).unwrap();
            });
            assert_eq!(grown, (ops::array_data(a).unwrap().capacity() - cap) * 8);
        }

        #[test]
        fn property_tables_are_counted() {
            let heap = Heap::new();
            let keys: Vec<_> = (0..sized(1000, 100)).map(|i| crate::vm::atom::Atom::intern(&format!("k{i}"))).collect();
            let mut props = PropMap::new();
            let grown = grown_by(&heap, || {
                for &k in &keys {
                    props.set(k, Value::TRUE);
                }
            });
            // The object's own storage, and each shape on the way to
            // dictionary mode once (if no other test made it first), with
            // what a parent's table of transitions grew by (a few entries
            // at most here).
            let shapes: usize =
                (1..=crate::vm::shape::MAX_SHAPE_KEYS).map(crate::vm::shape::shape_bytes).sum::<usize>() + 4096;
            assert!(props.is_dictionary());
            assert!(
                (props.capacity_bytes()..=props.capacity_bytes() + shapes).contains(&grown),
                "{grown} {} {shapes}",
                props.capacity_bytes()
            );
        }

        #[test]
        fn map_and_set_tables_are_counted() {
            let heap = Heap::new();
            let mut m = MapData::default();
            let grown = grown_by(&heap, || {
                for i in 0..sized(5000, 500) {
                    m.set(Value::number(i as f64), Value::TRUE);
                }
            });
            assert_eq!(grown, m.capacity_bytes());
        }

        #[test]
        fn task_stacks_are_counted() {
            let heap = Heap::new();
            let mut t = Task::new(0);
            let initial = t.regs.capacity() * 8 + t.frames.capacity() * std::mem::size_of::<crate::vm::task::Frame>();
            let grown = grown_by(&heap, || {
                t.grow_regs(sized(50_000, 5_000));
                for _ in 0..100 {
                    t.reserve_frame();
                    t.frames.push(crate::vm::task::Frame {
                        rt: std::ptr::null(),
                        closure: Value::UNDEFINED,
                        pc: 0,
                        base: 0,
                        ret: 0,
                        flags: 0,
                        after: Value::UNDEFINED,
                    });
                }
            });
            let frames = t.frames.capacity() * std::mem::size_of::<crate::vm::task::Frame>();
            // The frames point at no prototype: gone before anything reads them.
            t.frames.clear();
            assert_eq!(grown, t.regs.capacity() * 8 + frames - initial);
        }

        #[test]
        fn channel_buffers_are_counted() {
            let heap = Heap::new();
            let n = sized(10_000, 1_000);
            let ch = ChannelCell::new(n);
            let grown = grown_by(&heap, || {
                let mut woken = Vec::new();
                for i in 0..n {
                    ch.try_send(Value::number(i as f64), &mut woken);
                }
            });
            assert!(grown > 0);
            assert_eq!(grown, ch.buffer_bytes());
        }

        /// A worker growing an array another thread allocated counts into
        /// the same program heap, and past the threshold requests a
        /// collection there.
        #[test]
        fn growth_on_another_thread_counts_in_the_program_heap() {
            let mut heap = Heap::new();
            let bits = heap.alloc_array(vec![]).bits();
            let shared = heap.shared().clone();
            assert!(!heap.wants_collection());
            std::thread::spawn(move || {
                let h = Heap::attach_to(&shared);
                let slot = h.new_slot();
                let _m = h.enter(&slot);
                let mut d = ops::array_data(Value::from_bits(bits)).unwrap();
                ops::array_reserve(&mut d, MIN_THRESHOLD / 8).unwrap();
            })
            .join()
            .unwrap();
            assert!(heap.shared().allocated_since_gc.load(Ordering::Relaxed) >= MIN_THRESHOLD);
            assert!(heap.wants_collection());
        }

        /// Against the allocator's own figure (the counting allocator of
        /// the unit tests): a heap of arrays grown by appends, objects,
        /// Maps and strings is counted within a factor of two, before and
        /// after a collection, and the live figure drops when it dies.
        #[test]
        fn counted_total_is_close_to_what_the_allocator_saw() {
            use crate::test_alloc::net_bytes;
            let keys: Vec<_> = (0..20).map(|i| crate::vm::atom::Atom::intern(&format!("p{i}"))).collect();
            let mut heap = Heap::new();
            let root = heap.alloc_array(vec![]);
            let real0 = net_bytes();
            let counted0 = heap.counted_bytes();
            for i in 0..sized(2000, 100) {
                let a = heap.alloc_array(vec![]);
                for j in 0..100 {
                    ops::array_store(&mut ops::array_data(a).unwrap(), j, Value::number(j as f64)).unwrap();
                }
                let o = obj(&mut heap);
                for &k in &keys {
                    ops::object_data(o).unwrap().props.set(k, Value::TRUE);
                }
                let m = heap.alloc(Body::Map(Mut::new(MapData::default())));
                if let Body::Map(md) = &m.as_obj().unwrap().body {
                    let mut md = md.lock();
                    for j in 0..20 {
                        md.set(Value::number(j as f64), Value::TRUE);
                    }
                }
                let s = heap.alloc_str(format!("string number {i} of the accounting test"));
                let mut r = ops::array_data(root).unwrap();
                for v in [a, o, m, s] {
                    let n = r.len();
                    ops::array_store(&mut r, n, v).unwrap();
                }
            }
            let real = (net_bytes() - real0) as usize;
            let counted = heap.counted_bytes() - counted0;
            assert!(counted * 2 >= real && counted <= real * 2, "counted {counted} bytes, allocated {real}");
            heap.collect(|m| m.mark(root));
            let live = heap.stats().live_bytes as usize;
            let real = (net_bytes() - real0) as usize;
            assert!(live * 2 >= real && live <= real * 2, "live {live} bytes, allocated {real}");
            // Everything but the root dies.
            ops::set_array_length(&mut ops::array_data(root).unwrap(), Value::number(0.0)).unwrap();
            heap.collect(|m| m.mark(root));
            let live_after = heap.stats().live_bytes as usize;
            assert!(live_after * 20 < live, "live {live_after} bytes after the structure died, {live} before");
        }
    }
}
