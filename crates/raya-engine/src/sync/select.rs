//! `select` (LANGUAGE.md §6 "select"): the wait object of a suspended
//! select, and the cheap RNG that picks among ready cases.
//!
//! The interpreter's `Select` instruction tries the cases itself first (in
//! a random order, so the first ready one is uniform among the ready ones).
//! If none is ready and there is no `default`, it suspends with a
//! [`SelectWait`]; the worker registers the task on every case with one
//! generation (the channel's entry, or the timeout's timer, keeps the case
//! index) and arms a timer for each `sleep(ms)`
//! case. The first claim decides the case; every other registration is
//! stale and is dropped lazily by the channel that finds it.

use super::channel::{ChannelCell, Entry};
use super::{Registered, Resume, TaskCell, Timer, WaitObject, Waiter};
use crate::vm::value::Value;
use std::cell::Cell;
use std::sync::Arc;
use std::time::Instant;

pub enum CaseOp {
    Recv(Arc<ChannelCell>),
    Send(Arc<ChannelCell>, Value),
    Timeout(Instant),
}

pub struct SelectWait {
    /// (case index in the `SelectDesc`, what it waits for). Cases on a
    /// `null` channel and `default` are left out.
    pub cases: Vec<(u32, CaseOp)>,
}

impl WaitObject for SelectWait {
    fn register(&self, w: Waiter, woken: &mut Vec<Arc<TaskCell>>, timers: &mut Vec<Timer>) -> Registered {
        for (i, op) in &self.cases {
            if !w.is_live() {
                // Decided already (a case registered earlier fired, or the
                // task was cancelled): the rest would only be stale.
                return Registered::Queued;
            }
            let wi = w.clone();
            let r = match op {
                CaseOp::Recv(ch) => ch.register_recv(Entry::case(wi, *i), woken, timers),
                CaseOp::Send(ch, v) => ch.register_send(Entry::case(wi, *i), *v, woken),
                CaseOp::Timeout(at) => {
                    if *at <= crate::scheduler::now() {
                        if wi.claim() {
                            Registered::Ready(Resume::Case { case: *i, value: Value::UNDEFINED })
                        } else {
                            Registered::Queued
                        }
                    } else {
                        let case = *i;
                        timers.push(Timer {
                            at: *at,
                            cancel_on_wake: true,
                            fire: Box::new(move |woken| {
                                if wi.claim() {
                                    wi.deliver(Resume::Case { case, value: Value::UNDEFINED }, woken);
                                }
                                None
                            }),
                        });
                        Registered::Queued
                    }
                }
            };
            if !matches!(r, Registered::Queued) {
                return r;
            }
        }
        Registered::Queued
    }

    fn describe(&self) -> std::borrow::Cow<'static, str> {
        let (mut r, mut s, mut t) = (0, 0, 0);
        for (_, op) in &self.cases {
            match op {
                CaseOp::Recv(_) => r += 1,
                CaseOp::Send(..) => s += 1,
                CaseOp::Timeout(_) => t += 1,
            }
        }
        let mut parts = Vec::new();
        if r > 0 {
            parts.push(format!("receiving on {r} channel{}", if r == 1 { "" } else { "s" }));
        }
        if s > 0 {
            parts.push(format!("sending on {s} channel{}", if s == 1 { "" } else { "s" }));
        }
        if t > 0 {
            parts.push("with a timeout".to_string());
        }
        if parts.is_empty() {
            "in a select with no usable case".into()
        } else {
            format!("in a select ({})", parts.join(", ")).into()
        }
    }

    fn blocker(&self) -> super::Blocker {
        super::Blocker::Other(&"select")
    }

    fn roots(&self) -> Vec<Value> {
        self.cases
            .iter()
            .filter_map(|(_, op)| match op {
                CaseOp::Send(_, v) => Some(*v),
                _ => None,
            })
            .collect()
    }
}

thread_local! {
    static RNG: Cell<u64> = Cell::new({
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9E37_79B9_7F4A_7C15);
        (t ^ (&t as *const u64 as u64)) | 1
    });
}

/// Seeds this thread's generator (seeded scheduling: which ready case
/// wins is then a function of the seed).
pub fn reseed(seed: u64) {
    RNG.with(|c| c.set(crate::scheduler::seeded::mix(seed) | 1));
}

/// A uniform-enough number in `0..n` (xorshift64*), n > 0.
pub fn random_below(n: usize) -> usize {
    RNG.with(|c| {
        let mut x = c.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        c.set(x);
        ((x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) % n as u64) as usize
    })
}

/// Shuffles `v` in place (Fisher–Yates).
pub fn shuffle<T>(v: &mut [T]) {
    for i in (1..v.len()).rev() {
        let j = random_below(i + 1);
        v.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::task::Task;

    #[test]
    fn random_choice_covers_all() {
        let mut seen = [0usize; 4];
        for _ in 0..4000 {
            seen[random_below(4)] += 1;
        }
        assert!(seen.iter().all(|&n| n > 800), "{seen:?}");
    }

    #[test]
    fn first_claim_decides_and_other_registrations_are_stale() {
        let a = Arc::new(ChannelCell::new(0));
        let b = Arc::new(ChannelCell::new(0));
        let t = Arc::new(TaskCell::new(1, Box::new(Task::new(1))));
        let gen = t.token.arm();
        let sel = SelectWait { cases: vec![(0, CaseOp::Recv(a.clone())), (1, CaseOp::Recv(b.clone()))] };
        let (mut woken, mut timers) = (Vec::new(), Vec::new());
        assert!(matches!(sel.register(Waiter::new(t.clone(), gen), &mut woken, &mut timers), Registered::Queued));
        // b's sender wins; a's registration is now stale.
        assert_eq!(b.try_send(Value::number(2.0), &mut woken), super::super::channel::Sent::Sent);
        assert!(matches!(t.resume.lock().get(), Some(Resume::Case { case: 1, .. })));
        assert_eq!(a.try_send(Value::number(1.0), &mut woken), super::super::channel::Sent::Full);
        assert_eq!(a.len(), 0, "no value went into the losing case's channel");
    }
}
