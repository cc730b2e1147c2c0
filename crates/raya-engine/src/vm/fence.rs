//! The asymmetric memory fence of the stop-the-world handshake (see
//! "Threads" in `vm::heap`).
//!
//! The handshake is a Dekker pair: a mutator stores its state and then
//! loads `stop`; the collector stores `stop` and then loads every state.
//! Each side needs a store-load fence between its two steps, or both can
//! read the other's old value (a mutator that enters while the collector
//! believes it idle). The mutators' side runs twice per job and twice per
//! embedder's call (a full fence there is an atomic exchange, a fifth of a
//! short call's time); the collector's side runs once per pause. So the
//! cost is moved to the collector: a mutator orders its two steps only
//! against the compiler ([`light`]), and the collector, between its two
//! steps, makes every thread of the process that is running on a CPU
//! execute a full fence (Linux's `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`,
//! [`heavy`]); a thread that is not running has passed one when it was
//! switched out. Whichever point of a mutator's program order that fence
//! falls on:
//!
//! - before its state store: its load of `stop`, after the fence, sees the
//!   collector's store, which came before the fence;
//! - between its two steps: both see each other (as with two full fences);
//! - after its load of `stop`: its state store is visible before the
//!   collector's `heavy` returns, so the collector's loads see it.
//!
//! So, as with full fences on both sides, at least one of the two sees the
//! other. This is the scheme of HotSpot's thread-state transitions and of
//! `FlushProcessWriteBuffers` in .NET. Where the kernel has no
//! `membarrier` (another OS, an old kernel, a sandbox that forbids the
//! call), [`light`] is a full fence and [`heavy`] is one too: the
//! symmetric handshake. The choice is made once, before the first heap
//! exists ([`init`]), so no mutator ever ran with a light fence that a
//! collector cannot complete.

use std::sync::atomic::{compiler_fence, fence, Ordering};
use std::sync::OnceLock;

/// Whether the collector's `heavy` fence is `membarrier` (then mutators
/// use the light one). Decided by [`init`], before any heap exists.
static ASYMMETRIC: OnceLock<bool> = OnceLock::new();

/// Decides, once per process, whether the handshake is asymmetric:
/// registers the process for `membarrier`'s private expedited command.
/// Called by every new program heap before any thread can be its mutator.
pub fn init() {
    ASYMMETRIC.get_or_init(register);
}

// MEMBARRIER_CMD_QUERY, _PRIVATE_EXPEDITED and its registration
// (linux/membarrier.h; not among the `libc` crate's constants).
#[cfg(target_os = "linux")]
const QUERY: libc::c_long = 0;
#[cfg(target_os = "linux")]
const PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
#[cfg(target_os = "linux")]
const REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

#[cfg(target_os = "linux")]
fn register() -> bool {
    // SAFETY: membarrier reads no memory of ours; an unknown command or a
    // refused call returns -1.
    let query = unsafe { libc::syscall(libc::SYS_membarrier, QUERY, 0 as libc::c_long) };
    if query < 0 || query & PRIVATE_EXPEDITED == 0 || query & REGISTER_PRIVATE_EXPEDITED == 0 {
        return false;
    }
    unsafe { libc::syscall(libc::SYS_membarrier, REGISTER_PRIVATE_EXPEDITED, 0 as libc::c_long) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn register() -> bool {
    false
}

/// Whether the handshake is asymmetric. [`init`] ran before any caller.
#[inline]
fn asymmetric() -> bool {
    // `init` ran before any heap existed, so the value is set and never
    // changes; `unwrap_or` keeps a stray early caller on the safe side.
    ASYMMETRIC.get().copied().unwrap_or(false)
}

/// The mutator's fence between its state store and its load of `stop`.
#[inline]
pub fn light() {
    if asymmetric() {
        compiler_fence(Ordering::SeqCst);
    } else {
        fence(Ordering::SeqCst);
    }
}

/// The collector's fence between its store of `stop` and its loads of the
/// mutators' states: every running thread of the process executes a full
/// fence before it returns.
pub fn heavy() {
    fence(Ordering::SeqCst);
    if asymmetric() {
        expedited();
    }
}

#[cfg(target_os = "linux")]
fn expedited() {
    // SAFETY: as in `register`. The process registered in `init`, and a
    // registration is kept by the process (and a fork of it) until exec.
    let r = unsafe { libc::syscall(libc::SYS_membarrier, PRIVATE_EXPEDITED, 0 as libc::c_long) };
    if r != 0 {
        // Mutators are running with light fences that only this call
        // completes: going on could let a collection free what a mutator
        // is using. The kernel accepted the registration, so this does not
        // happen; if it ever does, stopping is the only safe outcome.
        eprintln!("raya: membarrier failed after registration ({}); aborting", std::io::Error::last_os_error());
        std::process::abort();
    }
}

#[cfg(not(target_os = "linux"))]
fn expedited() {}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8};
    use std::sync::Arc;

    /// The handshake's mutual exclusion, with the fences as the heap uses
    /// them: a mutator that saw no `stop` and a collector that saw the
    /// mutator idle are never both inside. Without a store-load fence on
    /// either side a store buffer lets both in (rarely: the test runs many
    /// rounds).
    #[test]
    fn handshake_excludes() {
        init();
        struct S {
            state: AtomicU8,
            stop: AtomicBool,
            inside: AtomicU32,
            entered: AtomicU64,
            done: AtomicBool,
        }
        let s = Arc::new(S {
            state: AtomicU8::new(0),
            stop: AtomicBool::new(false),
            inside: AtomicU32::new(0),
            entered: AtomicU64::new(0),
            done: AtomicBool::new(false),
        });
        let m = {
            let s = s.clone();
            std::thread::spawn(move || {
                while !s.done.load(Ordering::Relaxed) {
                    s.state.store(1, Ordering::Relaxed);
                    light();
                    if !s.stop.load(Ordering::Acquire) {
                        assert_eq!(s.inside.fetch_add(1, Ordering::Relaxed), 0, "mutator entered a stopped world");
                        s.entered.fetch_add(1, Ordering::Relaxed);
                        s.inside.fetch_sub(1, Ordering::Relaxed);
                    }
                    s.state.store(0, Ordering::Release);
                }
            })
        };
        // Both sides many times, however loaded the machine (a thread may
        // wait long for a CPU), within a bound.
        const ROUNDS: u64 = 2_000;
        let mut stopped = 0u64;
        let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while (stopped < ROUNDS || s.entered.load(Ordering::Relaxed) < ROUNDS) && std::time::Instant::now() < until {
            s.stop.store(true, Ordering::Relaxed);
            heavy();
            if s.state.load(Ordering::Acquire) == 0 {
                assert_eq!(s.inside.fetch_add(1, Ordering::Relaxed), 0, "collector stopped a running mutator");
                stopped += 1;
                s.inside.fetch_sub(1, Ordering::Relaxed);
            }
            s.stop.store(false, Ordering::Release);
            if stopped.is_multiple_of(64) {
                // Room for the mutator on a machine with one free CPU.
                std::thread::yield_now();
            }
        }
        s.done.store(true, Ordering::Relaxed);
        m.join().expect("the mutator thread");
        let entered = s.entered.load(Ordering::Relaxed);
        assert!(entered > 0 && stopped > 0, "both sides ran: {entered} entries, {stopped} stops");
    }
}
