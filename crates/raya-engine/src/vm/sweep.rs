//! The concurrent sweep: freeing what a collection found unreachable
//! after the world has restarted (see "The collector" in
//! `design/memory.md`).
//!
//! A collection marks (beside the program, see `vm::heap`), then, in the
//! pause that ends the mark, hands every object that existed at that moment — each thread's allocation list, and the
//! survivors of earlier sweeps — to the program's [`Sweep`] as *segments*,
//! and restarts the world. The segments are swept (unmarked objects freed,
//! marks of the others cleared) in chunks by the allocating threads — a
//! few chunks each time a thread has allocated another 256 KiB, as many as
//! finish the sweep within the first quarter of the next cycle's
//! allocation (`heap::sweep_pace`), so the sweep is paid for by
//! allocation, as Go's proportional sweep is, and frees land
//! mostly on the thread that allocated them, where the allocator frees
//! fastest — by a background thread shared by every program of the
//! process, for a program that stopped allocating (it starts
//! [`BACKGROUND_DELAY`] after the collection), and by the next collector,
//! which helps before it stops the world and waits for whatever is still
//! in progress.
//!
//! # Invariants
//!
//! - **Garbage stays garbage.** An object not marked when marking ended
//!   was unreachable from every root (marking covers everything reachable
//!   then: the snapshot and what was allocated since); nothing can reach it again,
//!   since a reference can only be copied from somewhere reachable. Freeing
//!   it later, while mutators run, is therefore the same as freeing it
//!   during the pause.
//! - **Only what existed at the mark is swept.** Objects allocated after
//!   the world restarts go to their thread's (now empty) list, never into
//!   a segment of this cycle, so a new object — never marked — is never
//!   freed by a sweep that started before it existed (the "sweep
//!   generation" of other collectors is which list an object is on).
//! - **Marks are clear before the next mark.** The next collection calls
//!   [`Sweep::finish`] before it marks: every segment swept, no sweeper
//!   in the middle of one (`active == 0`, read under the lock, which also
//!   makes the sweepers' cleared marks visible to it).
//! - **The sweep never reads a body.** It only tests and clears the mark
//!   bit and drops the box of a dead object (which no mutator can see).
//!   The live size is measured while marking, each body under its lock.
//! - **One writer per mark bit while sweeping.** Mutators write mark bits
//!   only while marking (the write barrier, objects born marked), and
//!   marking starts after [`Sweep::finish`], as does any marker; an object
//!   is in one segment and a segment is held by one sweeper, so the
//!   sweeper holding it is the only thread touching its objects' marks: it
//!   tests and clears them with a plain load and store (an atomic only so
//!   that the marker's later writes need no other synchronisation than the
//!   sweep's lock, which hands the cleared marks over).

use super::heap::thread_cpu_ns;
use super::object::{Body, Header, JsStr, Obj, StrText};
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Once, OnceLock};
use std::time::{Duration, Instant};

/// Objects swept in one go (the unit of work shared between the background
/// sweeper and a helping collector).
pub(crate) const CHUNK: usize = 4 << 10;

/// How long after a collection the background sweeper starts on its
/// segments: allocating threads sweep faster (their own frees), so the
/// background thread is for a program that went quiet, whose garbage
/// should still be given back.
const BACKGROUND_DELAY: Duration = Duration::from_millis(50);

/// What a sweep does to the objects that survive it (see "Generational
/// mode" in `vm::heap`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum SweepMode {
    /// Marks cleared (the collector is not generational).
    #[default]
    Clear,
    /// A generational cycle's sweep, with a minor cycle next: a survivor
    /// that was old or a survivor before, or was reached from an object
    /// that will be old (`OLD`, `SURVIVOR`, `TENURE`), is old: mark kept,
    /// `OLD` set. Any other has its mark cleared and `SURVIVOR` set, and
    /// is kept apart, young, for the next minor cycle
    /// ([`Sweep::take_survivors`]).
    Age,
    /// As `Age`, with a full cycle next: every mark is cleared, the old
    /// generation's too (its objects keep `OLD`), and all stay here for
    /// the full cycle, which takes every object.
    AgeAndClear,
}

/// Objects of one program, in no particular order.
pub(crate) struct Segment(pub(crate) Vec<*mut Obj>);

// SAFETY: a segment is owned by whoever holds it: the sweep state under
// its lock, or the one sweeper that took it out. The objects themselves
// are shared between threads anyway (`Obj` is `Sync`).
unsafe impl Send for Segment {}

#[derive(Default)]
struct State {
    /// Segments to sweep.
    pending: Vec<Segment>,
    /// Swept segments: survivors with their marks cleared.
    swept: Vec<Segment>,
    /// Survivors of mostly-dead segments, gathered so that the lists do
    /// not fragment into many tiny vectors.
    merge: Vec<*mut Obj>,
    /// Sweepers in the middle of a segment taken out of `pending`.
    active: usize,
    /// When the current sweep started (the background sweeper waits
    /// [`BACKGROUND_DELAY`] from then).
    started: Option<Instant>,
    /// What happens to the survivors.
    mode: SweepMode,
    /// Young survivors of the last minor sweep (`SweepMode::Age`): the
    /// next minor cycle's young objects, with the threads' lists.
    survivors: Vec<*mut Obj>,
    freed: u64,
    /// CPU time spent sweeping, by every thread.
    sweep_ns: u64,
}

// SAFETY: as for `Segment`.
unsafe impl Send for State {}

/// One program's sweep (see the module's invariants).
#[derive(Default)]
pub(crate) struct Sweep {
    state: Mutex<State>,
    idle: Condvar,
}

impl Sweep {
    /// Queues the segments of a collection. The world must be stopped and
    /// the previous sweep finished ([`Sweep::finish`]). With `old`, the
    /// swept survivors of earlier cycles (the old generation) join the new
    /// segments (after a full cycle, or before one); without, they are not
    /// touched (a minor sweep, proportional to the young objects). The
    /// young survivors of the last minor sweep count as old here: a minor
    /// cycle has taken them first ([`Sweep::take_survivors`]). Returns how
    /// many objects are to be swept.
    pub(crate) fn start(
        self: &Arc<Self>,
        lists: impl Iterator<Item = Vec<*mut Obj>>,
        old: bool,
        mode: SweepMode,
    ) -> usize {
        let mut st = self.state.lock();
        debug_assert!(st.pending.is_empty() && st.active == 0, "a sweep is still running");
        debug_assert!(mode != SweepMode::Age || st.survivors.is_empty(), "a minor cycle takes the survivors");
        st.mode = mode;
        let mut pending = Vec::new();
        if old {
            pending = std::mem::take(&mut st.swept);
            if !st.merge.is_empty() {
                pending.push(Segment(std::mem::take(&mut st.merge)));
            }
            if !st.survivors.is_empty() {
                pending.push(Segment(std::mem::take(&mut st.survivors)));
            }
        }
        pending.extend(lists.filter(|l| !l.is_empty()).map(Segment));
        st.pending = pending;
        let objects: usize = st.pending.iter().map(|s| s.0.len()).sum();
        let started = Instant::now();
        st.started = Some(started);
        let work = !st.pending.is_empty();
        drop(st);
        if work {
            background(self.clone(), started);
        }
        objects
    }

    /// Sweeps segments on this thread until none is left to take; true if
    /// it swept any.
    pub(crate) fn help(&self) -> bool {
        let mut any = false;
        while self.help_one() {
            any = true;
        }
        any
    }

    /// Sweeps one chunk, if any is left; true if it did. The allocation
    /// path's share of the sweep: it holds no object lock that a dead
    /// object's drop could want (a dead object's drop touches no script
    /// object, only what it owns).
    pub(crate) fn help_one(&self) -> bool {
        let Some((mut seg, mode)) = self.take() else { return false };
        let t = thread_cpu_ns();
        let mut young = Vec::new();
        let freed = sweep_segment(&mut seg.0, mode, &mut young);
        self.give_back(seg, young, freed, thread_cpu_ns() - t);
        true
    }

    /// Helps, then waits for the other sweepers: afterwards every object
    /// is on a swept segment or a thread's list, with its mark clear.
    pub(crate) fn finish(&self) {
        self.help();
        let mut st = self.state.lock();
        while st.active > 0 || !st.pending.is_empty() {
            if !st.pending.is_empty() {
                drop(st);
                self.help();
                st = self.state.lock();
                continue;
            }
            self.idle.wait(&mut st);
        }
    }

    /// Nothing waits to be swept (the background sweeper may still be
    /// finishing a segment).
    pub(crate) fn is_idle(&self) -> bool {
        let st = self.state.lock();
        st.pending.is_empty() && st.active == 0
    }

    /// Objects freed and CPU nanoseconds spent sweeping, so far.
    pub(crate) fn totals(&self) -> (u64, u64) {
        let st = self.state.lock();
        (st.freed, st.sweep_ns)
    }

    /// Objects held here (swept or not). Only meaningful when finished.
    pub(crate) fn object_count(&self) -> usize {
        let st = self.state.lock();
        st.pending.iter().chain(st.swept.iter()).map(|s| s.0.len()).sum::<usize>() + st.merge.len() + st.survivors.len()
    }

    /// The young survivors of the last sweep, for the minor cycle that
    /// begins (world stopped, sweep finished).
    pub(crate) fn take_survivors(&self) -> Option<Segment> {
        let mut st = self.state.lock();
        debug_assert!(st.pending.is_empty() && st.active == 0);
        let v = std::mem::take(&mut st.survivors);
        (!v.is_empty()).then_some(Segment(v))
    }

    /// Clears the mark of every object held here (the old generation), for
    /// a full cycle that the last sweep did not prepare. The world is
    /// stopped and the sweep finished, so no one else touches these marks.
    pub(crate) fn clear_marks(&self) {
        let st = self.state.lock();
        debug_assert!(st.pending.is_empty() && st.active == 0);
        for &p in st.swept.iter().flat_map(|s| s.0.iter()).chain(st.merge.iter()) {
            // SAFETY: objects held here are live allocations.
            unsafe { &*p }.header.marked.store(false, Ordering::Relaxed);
        }
    }

    /// Takes every object held here: for the heap's teardown (the program
    /// has ended), or for a generational full cycle, which makes them all
    /// its own. The caller has called [`Sweep::finish`].
    pub(crate) fn drain_all(&self) -> Vec<Segment> {
        let mut st = self.state.lock();
        let mut all = std::mem::take(&mut st.swept);
        all.append(&mut st.pending);
        if !st.merge.is_empty() {
            all.push(Segment(std::mem::take(&mut st.merge)));
        }
        if !st.survivors.is_empty() {
            all.push(Segment(std::mem::take(&mut st.survivors)));
        }
        all
    }

    /// At most [`CHUNK`] objects out of `pending` (from the tail of a
    /// segment, so splitting a big list copies each pointer once).
    fn take(&self) -> Option<(Segment, SweepMode)> {
        let mut st = self.state.lock();
        let mut seg = st.pending.pop()?;
        if seg.0.len() > CHUNK {
            let tail = seg.0.split_off(seg.0.len() - CHUNK);
            st.pending.push(seg);
            seg = Segment(tail);
        }
        st.active += 1;
        Some((seg, st.mode))
    }

    fn give_back(&self, seg: Segment, young: Vec<*mut Obj>, freed: u64, ns: u64) {
        let mut st = self.state.lock();
        st.active -= 1;
        if st.survivors.is_empty() {
            st.survivors = young;
        } else {
            st.survivors.extend_from_slice(&young);
        }
        st.freed += freed;
        st.sweep_ns += ns;
        if seg.0.len() < CHUNK / 2 {
            st.merge.extend_from_slice(&seg.0);
            if st.merge.len() >= CHUNK {
                let full = std::mem::take(&mut st.merge);
                st.swept.push(Segment(full));
            }
        } else if !seg.0.is_empty() {
            st.swept.push(seg);
        }
        if st.active == 0 && st.pending.is_empty() {
            self.idle.notify_all();
        }
    }
}

/// Frees the unmarked objects of `seg` and treats the others as `mode`
/// says (moving the young survivors of `SweepMode::Age` to `young`);
/// returns how many were freed.
fn sweep_segment(seg: &mut Vec<*mut Obj>, mode: SweepMode, young: &mut Vec<*mut Obj>) -> u64 {
    let mut freed = 0;
    seg.retain(|&p| {
        // SAFETY: every pointer of a segment is a live allocation of the
        // heap, held by this sweeper alone; an unmarked one is unreachable
        // (the module's first invariant) and freed exactly once, here.
        let o = unsafe { &*p };
        debug_assert!(!super::heap::is_shared(o), "a shared string is on no list");
        // A load and a store, not a swap: no other thread writes this mark
        // while the segment is swept (the module's last invariant), and a
        // locked read-modify-write on every object was a measurable part
        // of the sweep.
        // The same holds for the generational state.
        if o.header.marked.load(Ordering::Relaxed) {
            if mode == SweepMode::Clear {
                o.header.marked.store(false, Ordering::Relaxed);
                return true;
            }
            let old = o.header.gen.load(Ordering::Relaxed) & Header::PROMOTES != 0;
            o.header.gen.store(if old { Header::OLD } else { Header::SURVIVOR }, Ordering::Relaxed);
            if mode == SweepMode::AgeAndClear || !old {
                o.header.marked.store(false, Ordering::Relaxed);
            }
            if mode == SweepMode::Age && !old {
                young.push(p);
                return false;
            }
            true
        } else {
            // SAFETY: as above.
            unsafe { free(p) };
            freed += 1;
            false
        }
    });
    freed
}

/// Frees a dead object. One that owns nothing (a string held in its
/// object: most of the words and lines a program makes) has its block
/// given back without the drop's out-of-line match over every kind.
///
/// # Safety
/// `p` is a live allocation of the heap that nothing can reach, freed
/// once.
#[inline(always)]
unsafe fn free(p: *mut Obj) {
    // SAFETY: the caller's promise; the body is read only to see its kind.
    if matches!(unsafe { &(*p).body }, Body::Str(JsStr { s: StrText::Inline { .. }, .. })) {
        const { assert!(!std::mem::needs_drop::<Header>()) };
        // SAFETY: `p` is a box of an `Obj` (`Box<Obj>`'s layout); its header
        // and body own nothing, so skipping their drop leaks nothing.
        unsafe { std::alloc::dealloc(p.cast(), std::alloc::Layout::new::<Obj>()) };
    } else {
        drop(unsafe { Box::from_raw(p) });
    }
}

/// Programs with segments for the background sweeper.
struct Queue {
    /// Each with the start of the sweep it was queued for.
    jobs: Mutex<VecDeque<(Arc<Sweep>, Instant)>>,
    ready: Condvar,
}

static QUEUE: OnceLock<Queue> = OnceLock::new();

/// Hands `sweep` to the background sweeper, a thread shared by every
/// program of the process, started by the first collection (a program
/// that never collects never starts it). If the thread cannot be started,
/// the next collection sweeps everything itself ([`Sweep::finish`]).
fn background(sweep: Arc<Sweep>, started: Instant) {
    static STARTED: Once = Once::new();
    let q = QUEUE.get_or_init(|| Queue { jobs: Mutex::new(VecDeque::new()), ready: Condvar::new() });
    STARTED.call_once(|| {
        let _ = std::thread::Builder::new().name("raya-sweep".into()).stack_size(64 << 10).spawn(move || sweeper(q));
    });
    q.jobs.lock().push_back((sweep, started));
    q.ready.notify_one();
}

fn sweeper(q: &'static Queue) {
    loop {
        let (job, started) = {
            let mut jobs = q.jobs.lock();
            loop {
                if let Some(j) = jobs.pop_front() {
                    break j;
                }
                q.ready.wait(&mut jobs);
            }
        };
        // Only a sweep that has waited its whole delay is helped: when a
        // newer collection started meanwhile, the program is still
        // allocating (a collection finishes the last sweep before it
        // starts), so its threads sweep that one as they allocate, and the
        // newer collection queued a job of its own. Freeing their objects
        // here would take the allocator's slower cross-thread path, on
        // both threads.
        let current = || job.state.lock().started;
        if current() != Some(started) {
            continue;
        }
        let now = Instant::now();
        if started + BACKGROUND_DELAY > now {
            std::thread::sleep(started + BACKGROUND_DELAY - now);
        }
        if current() != Some(started) {
            continue;
        }
        job.help();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::object::Header;

    /// A heap object for the sweep: a string (in its object when short,
    /// boxed when long), marked or not.
    fn obj(s: &str, marked: bool) -> *mut Obj {
        let header = Header::new(marked, 0);
        Box::into_raw(Box::new(Obj { header, body: Body::Str(JsStr::copy_of(s)) }))
    }

    fn text(p: *mut Obj) -> String {
        // SAFETY: a live object of the test.
        match unsafe { &(*p).body } {
            Body::Str(js) => js.s.to_string(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_segment_frees_the_unmarked_and_keeps_the_rest_in_order() {
        let long = "x".repeat(200);
        // Dead and live interleaved, strings in their object and boxed.
        let mut seg: Vec<*mut Obj> = (0..100)
            .map(|i| {
                let s = if i % 3 == 0 { format!("{i}{long}") } else { i.to_string() };
                obj(&s, i % 4 == 0)
            })
            .collect();
        assert_eq!(sweep_segment(&mut seg, SweepMode::Clear, &mut Vec::new()), 75);
        let kept: Vec<String> = seg.iter().map(|&p| text(p)).collect();
        let want: Vec<String> = (0..100)
            .filter(|i| i % 4 == 0)
            .map(|i| if i % 3 == 0 { format!("{i}{long}") } else { i.to_string() })
            .collect();
        assert_eq!(kept, want);
        // Marks cleared (not sticky): the next sweep frees them all.
        for &p in &seg {
            // SAFETY: live objects of the test.
            assert!(!unsafe { &*p }.header.marked.load(Ordering::Relaxed));
        }
        assert_eq!(sweep_segment(&mut seg, SweepMode::Clear, &mut Vec::new()), 25);
        assert!(seg.is_empty());
    }

    /// The generational sweep: a first survival ages (mark cleared, kept
    /// apart as young), a second one or a promotion makes old (mark kept);
    /// with a full cycle next, every mark is cleared and all stay.
    #[test]
    fn an_aging_sweep_keeps_the_young_survivors_apart() {
        let gen = |p: *mut Obj| unsafe { &*p }.header.gen.load(Ordering::Relaxed);
        let mark = |p: *mut Obj| unsafe { &*p }.header.marked.load(Ordering::Relaxed);
        let fresh = obj("fresh", true);
        let second = obj("second", true);
        set_gen(second, Header::SURVIVOR);
        let reached = obj("reached from an old one", true);
        set_gen(reached, Header::TENURE);
        let dead = obj("dead", false);
        let mut seg = vec![fresh, second, reached, dead];
        let mut young = Vec::new();
        assert_eq!(sweep_segment(&mut seg, SweepMode::Age, &mut young), 1);
        assert_eq!(young, vec![fresh]);
        assert_eq!((gen(fresh), mark(fresh)), (Header::SURVIVOR, false));
        assert_eq!(seg, vec![second, reached]);
        for p in [second, reached] {
            assert_eq!((gen(p), mark(p)), (Header::OLD, true));
        }
        // Before a full cycle: ages kept, marks cleared, nothing set apart.
        unsafe { &*fresh }.header.marked.store(true, Ordering::Relaxed);
        let mut seg = vec![fresh, second, reached];
        let mut young = Vec::new();
        assert_eq!(sweep_segment(&mut seg, SweepMode::AgeAndClear, &mut young), 0);
        assert!(young.is_empty());
        assert_eq!(seg.iter().map(|&p| (gen(p), mark(p))).collect::<Vec<_>>(), vec![(Header::OLD, false); 3]);
        for p in seg {
            // SAFETY: boxes of the test, freed once.
            drop(unsafe { Box::from_raw(p) });
        }
    }

    fn set_gen(p: *mut Obj, g: u8) {
        // SAFETY: a live object of the test.
        unsafe { &*p }.header.gen.store(g, Ordering::Relaxed);
    }

    #[test]
    fn a_quiet_programs_garbage_is_freed_by_the_background_sweeper() {
        let sw = Arc::new(Sweep::default());
        let list: Vec<*mut Obj> = (0..CHUNK + 10).map(|i| obj(&i.to_string(), false)).collect();
        sw.start(std::iter::once(list), false, SweepMode::Clear);
        // Nobody helps: the background thread sweeps it after its delay.
        let t = Instant::now();
        while !sw.is_idle() {
            assert!(t.elapsed() < Duration::from_secs(20), "not swept");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(t.elapsed() >= BACKGROUND_DELAY / 2);
        assert_eq!(sw.totals().0, (CHUNK + 10) as u64);
        assert_eq!(sw.object_count(), 0);
    }

    #[test]
    fn big_segments_are_split_into_chunks_from_the_tail() {
        let sw = Sweep::default();
        let v: Vec<*mut Obj> = (1..=CHUNK * 2 + 5).map(|i| i as *mut Obj).collect();
        sw.state.lock().pending.push(Segment(v));
        let a = sw.take().unwrap().0;
        assert_eq!(a.0.len(), CHUNK);
        assert_eq!(a.0[0] as usize, CHUNK + 6);
        let b = sw.take().unwrap().0;
        let c = sw.take().unwrap().0;
        assert_eq!((b.0.len(), c.0.len()), (CHUNK, 5));
        assert!(sw.take().is_none());
        assert_eq!(sw.state.lock().active, 3);
        // Nothing to free in these fake segments: give them back as swept.
        for s in [a, b, c] {
            sw.give_back(s, Vec::new(), 0, 0);
        }
        assert!(sw.is_idle());
        assert_eq!(sw.object_count(), CHUNK * 2 + 5);
    }
}
