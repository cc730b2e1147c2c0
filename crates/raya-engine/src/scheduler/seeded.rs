//! Seeded (reproducible) scheduling: one worker whose every choice comes
//! from a generator seeded by the user (`raya run --seed N`), and virtual
//! time. `design/explore.md` is the long version of this comment.
//!
//! # Strategy: random walk with probabilistic, bounded preemption
//!
//! * **Which job runs next**: uniformly at random among every runnable job
//!   (there is no next slot and no queue order: woken, spawned, preempted
//!   and timer jobs all go to one pool).
//! * **Where a job is preempted**: each seed draws a mean slice length `M`
//!   (a power of two, 1..=256 safepoints) and a preemption bound `B`. While
//!   fewer than `B` random preemptions have happened, a job is preempted
//!   at the k-th safepoint it reaches, k drawn uniformly from `1..=2M-1` (calls and loop
//!   back-edges), so a read-modify-write split by a call can be
//!   interleaved; after that, for the ordinary [`super::TIME_SLICE`]. Small
//!   `M` interleaves finely; the bound keeps a long program from being
//!   preempted everywhere (most concurrency bugs need few preemptions:
//!   Musuvathi and Qadeer's preemption bounding, PLDI 2007), and varying
//!   both per seed covers both kinds of schedule.
//! * **Timers**: virtual time. Running costs [`SAFEPOINT_TIME`] per
//!   safepoint spent (so a loop that waits for the clock, or spins until a
//!   timer's callback sets a flag, ends); before every choice the timers
//!   due by then join the pool. When no job is runnable, the clock jumps to
//!   the earliest deadline and every timer due then joins the pool at once,
//!   so timers that fire together are delivered in a random order. A
//!   `sleep(1000)` takes no real time and no result depends on the
//!   machine's speed. Deadlines further than [`HORIZON`] ahead are never
//!   jumped to (they mark waits that end by an outside event, like a
//!   pending host call; their real wait would be years).
//! * **Inside a suspension**: a task that cannot proceed has saved its
//!   state (step 1 of `design/concurrency.md`) but is not yet registered
//!   with what it waits for (step 2). With several workers another task
//!   can act in that window (a `t.cancel()`, a send, a settle), which one
//!   worker never shows. So a seed also draws a chance (0, 1/4, 1/2 or 1)
//!   of *splitting* a suspension: step 2 becomes a job of its own in the
//!   pool ([`Seeded::split_suspension`]), and any runnable job may run
//!   between the two steps. The draws come from a second generator, so a
//!   seed that never splits schedules exactly as before splitting existed.
//! * `select`'s choice among ready cases and `Math.random` draw from
//!   generators the VM seeds from the same seed (see `driver.rs`).
//!
//! What is not under the seed's control: events from other threads (the
//! socket poller, blocking work on the pool, host threads). A program that
//! does I/O is reproducible only as far as its I/O is.
//!
//! # Invariants
//!
//! * A job in the pool counts in `Inner::active` like one in any queue:
//!   it was counted when it entered (spawn, wake, push, timer), and fired
//!   timers keep their count. So quiescence still means "nothing runnable,
//!   nothing sleeping".
//! * Only the one worker thread touches the pool and the virtual clock's
//!   thread-local copy; other threads only push to the injector, which the
//!   worker drains into the pool before every choice.

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

/// Virtual time one safepoint takes (see the module docs).
pub const SAFEPOINT_TIME: Duration = Duration::from_micros(1);

/// Timers further ahead than this are never jumped to (see the module
/// docs).
pub const HORIZON: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

thread_local! {
    /// The virtual clock of the seeded worker running on this thread:
    /// (the instant the run started at, virtual time elapsed since).
    static CLOCK: Cell<Option<(Instant, Duration)>> = const { Cell::new(None) };
}

/// The time for deadlines and timeouts: the virtual clock on a seeded
/// worker, else the real one.
pub fn now() -> Instant {
    match CLOCK.with(|c| c.get()) {
        Some((base, elapsed)) => base + elapsed,
        None => Instant::now(),
    }
}

/// Whether the calling thread is a seeded worker.
pub fn active() -> bool {
    CLOCK.with(|c| c.get()).is_some()
}

/// Virtual time elapsed since the program started, on a seeded worker
/// (`performance.now()` and `Date.now()` follow it there).
pub fn virtual_elapsed() -> Option<Duration> {
    CLOCK.with(|c| c.get()).map(|(_, e)| e)
}

pub(super) fn set_clock(base: Instant, elapsed: Duration) {
    CLOCK.with(|c| c.set(Some((base, elapsed))));
}

pub(super) fn clear_clock() {
    CLOCK.with(|c| c.set(None));
}

/// splitmix64: turns a user's seed (often 1, 2, 3, …) into well-mixed
/// generator state.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The preemption bounds a seed chooses from.
const BOUNDS: [u32; 6] = [1, 3, 10, 30, 100, 1000];

/// The chances of splitting a suspension a seed chooses from, in quarters.
const SPLIT_CHANCES: [u32; 4] = [0, 1, 2, 4];

/// Seeds the generator of suspension splits apart from the scheduling one.
const SPLIT_STREAM: u64 = 0x5350_4c49_5453_5553;

/// The seeded worker's state (lives in its `WorkerCx`).
pub(super) struct Seeded<T> {
    /// Every runnable job.
    pub pool: RefCell<Vec<T>>,
    rng: Cell<u64>,
    /// Mean random slice, in safepoints.
    mean_slice: u32,
    /// Random preemptions still allowed.
    preemptions_left: Cell<u32>,
    /// The running job got a random slice (so its preemption counts
    /// against the bound).
    random_slice: Cell<bool>,
    /// Chance of splitting a suspension, in quarters (0..=4).
    split_quarters: u32,
    /// The generator of those draws, apart from `rng`.
    split_rng: Cell<u64>,
    /// Where virtual time starts, and how far it has gone.
    pub base: Instant,
    pub elapsed: Cell<Duration>,
}

impl<T> Seeded<T> {
    pub fn new(seed: u64) -> Seeded<T> {
        let mut state = mix(seed) | 1;
        let mut draw = || {
            state = mix(state);
            state
        };
        let mean_slice = 1u32 << (draw() % 9);
        let bound = BOUNDS[(draw() % BOUNDS.len() as u64) as usize];
        let split_state = mix(seed ^ SPLIT_STREAM) | 1;
        let split_quarters = SPLIT_CHANCES[(mix(split_state) % SPLIT_CHANCES.len() as u64) as usize];
        Seeded {
            split_quarters,
            split_rng: Cell::new(split_state),
            pool: RefCell::new(Vec::new()),
            rng: Cell::new(draw() | 1),
            mean_slice,
            preemptions_left: Cell::new(bound),
            random_slice: Cell::new(false),
            base: Instant::now(),
            elapsed: Cell::new(Duration::ZERO),
        }
    }

    /// A number in `0..n`, n > 0 (xorshift64*; only this thread uses it).
    pub fn below(&self, n: usize) -> usize {
        let mut x = self.rng.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng.set(x);
        ((x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) % n as u64) as usize
    }

    /// Whether the suspension under way is split in two (see the module
    /// docs): drawn only when another job could run in between.
    pub fn split_suspension(&self) -> bool {
        if self.split_quarters == 0 || self.pool.borrow().is_empty() {
            return false;
        }
        let mut x = self.split_rng.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.split_rng.set(x);
        ((x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) % 4) < self.split_quarters as u64
    }

    /// Takes a random job out of the pool.
    pub fn pick(&self) -> Option<T> {
        let mut pool = self.pool.borrow_mut();
        if pool.is_empty() {
            return None;
        }
        let i = self.below(pool.len());
        Some(pool.swap_remove(i))
    }

    /// The slice for the job about to run.
    pub fn slice(&self, full: u32) -> u32 {
        let random = self.preemptions_left.get() > 0;
        self.random_slice.set(random);
        if random {
            // Preempted at the k-th safepoint reached, k in 1..=2M-1 (M on
            // average; the runner adds one for a task that stands at the
            // safepoint it was preempted at).
            1 + self.below((2 * self.mean_slice - 1) as usize) as u32
        } else {
            full
        }
    }

    /// The running job was preempted. Only a preemption that let another
    /// job run counts against the bound (a lone task's, at the start of
    /// the program, changes nothing).
    pub fn preempted(&self) {
        if self.random_slice.get() && !self.pool.borrow().is_empty() {
            self.preemptions_left.set(self.preemptions_left.get().saturating_sub(1));
        }
    }

    pub fn now(&self) -> Instant {
        self.base + self.elapsed.get()
    }

    /// Moves the clock forward to `to` (never backward).
    pub fn advance_to(&self, to: Instant) {
        if to > self.now() {
            self.elapsed.set(to - self.base);
        }
        set_clock(self.base, self.elapsed.get());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_choices_and_seeds_differ() {
        let run = |seed| {
            let s: Seeded<u32> = Seeded::new(seed);
            s.pool.borrow_mut().extend(0..10);
            let picks: Vec<u32> = std::iter::from_fn(|| s.pick()).collect();
            let slices: Vec<u32> = (0..20).map(|_| s.slice(10_000)).collect();
            (picks, slices)
        };
        assert_eq!(run(7), run(7));
        let distinct: std::collections::HashSet<_> = (1..20).map(|s| run(s).0).collect();
        assert!(distinct.len() > 10, "seeds give different orders: {}", distinct.len());
    }

    /// Seeds split suspensions with different chances, the same way for
    /// the same seed, never with nothing else runnable, and without
    /// touching the scheduling draws.
    #[test]
    fn suspension_splits_are_seeded_and_apart_from_the_schedule() {
        let splits = |seed| {
            let s: Seeded<u32> = Seeded::new(seed);
            assert!(!s.split_suspension(), "nothing else runnable: no split");
            s.pool.borrow_mut().push(0);
            let before = s.rng.get();
            let v: Vec<bool> = (0..64).map(|_| s.split_suspension()).collect();
            assert_eq!(s.rng.get(), before, "the scheduling generator is untouched");
            v
        };
        assert_eq!(splits(11), splits(11));
        let counts: std::collections::HashSet<usize> =
            (1..40).map(|seed| splits(seed).iter().filter(|&&b| b).count()).collect();
        assert!(counts.contains(&0), "some seeds never split");
        assert!(counts.contains(&64), "some seeds always split");
        assert!(counts.iter().any(|&n| n > 0 && n < 64), "some seeds split some suspensions");
    }

    #[test]
    fn slices_are_random_until_the_bound_then_full() {
        let s: Seeded<u32> = Seeded::new(3);
        // A preemption with no other job runnable changes nothing and
        // does not count.
        let bound = s.preemptions_left.get();
        s.slice(10_000);
        s.preempted();
        assert_eq!(s.preemptions_left.get(), bound);
        s.pool.borrow_mut().push(1);
        for _ in 0..bound {
            let k = s.slice(10_000);
            assert!(k >= 1 && k < 2 * s.mean_slice, "{k}");
            s.preempted();
        }
        assert_eq!(s.slice(10_000), 10_000);
        s.preempted();
        assert_eq!(s.slice(10_000), 10_000);
    }
}
