//! Model checks of the wait/wake core, with Shuttle (see
//! `design/concurrency.md`, "Model checks"; `design/dependencies.md` says
//! why Shuttle). Run them with
//!
//! ```sh
//! cargo test -p raya-engine --features shuttle --lib sync::models
//! ```
//!
//! Each model runs the real code — [`WaitToken`], [`TaskCell`]'s cancel
//! protocol, [`ChannelCell`]'s queues, [`SelectWait`] — on Shuttle
//! threads; with the feature, every atomic and lock operation of that
//! state (`prim.rs`) is a point where the checker may switch threads. The
//! small models are explored depth-first (up to 100,000 schedules); the channel
//! models, whose schedules are too many for that, by PCT (probabilistic
//! concurrency testing: any bug that needs `d` ordering constraints is
//! found in each run with probability at least `1/(n·k^(d-1))`), tens of
//! thousands of schedules each.
//!
//! A model's task is a thread doing what the interpreter and the worker
//! do for it: the non-suspending fast path, then, if that cannot complete,
//! [`park`] (the steps of `driver::park` and `driver::register_wait` for a
//! wait object). The checks run after every thread has finished, on what
//! each task ended with: a task that parked must be decided exactly once
//! (by its registration, by a waker's delivery, or by a cancel), and no
//! value may appear twice or vanish.

use super::channel::{ChannelCell, Recv, RecvWait, SendWait, Sent};
use super::select::{CaseOp, SelectWait};
use super::*;
use shuttle::thread;

const PCT_RUNS: usize = 20_000;
/// Bound of the depth-first searches (each schedule differs from the
/// last in one choice, deepest first).
const DFS_RUNS: usize = 100_000;
const PCT_DEPTH: usize = 3;

fn task(id: u32) -> Arc<TaskCell> {
    Arc::new(TaskCell::without_exec(id))
}

/// The suspending worker's side for a wait object (`driver::park` and
/// `register_wait`, step by step): refuse to wait once cancelled (sticky),
/// arm, register (again after `Again`), then re-check the cancel flag
/// under the armed generation. `Some(resume)`: the wait was decided here
/// and the task runs at once; `None`: it stays queued until a waker
/// delivers to it.
fn park(cell: &Arc<TaskCell>, obj: &dyn WaitObject) -> Option<Resume> {
    if cell.is_cancel_requested() {
        return Some(Resume::Cancel);
    }
    let mut gen = cell.token.arm();
    let (mut woken, mut timers) = (Vec::new(), Vec::new());
    let decided = loop {
        let w = Waiter::new(cell.clone(), gen);
        match obj.register(w, &mut woken, &mut timers) {
            Registered::Queued => break None,
            Registered::Ready(r) => break Some(r),
            Registered::Again if cell.is_cancel_requested() => break Some(Resume::Cancel),
            Registered::Again => gen = cell.token.arm(),
        }
    };
    if decided.is_none() && cell.claim_if_cancelled(gen) {
        return Some(Resume::Cancel);
    }
    decided
}

/// A thread receiving on `ch` as task `r`: the fast path, else a park.
fn spawn_receiver(ch: &Arc<ChannelCell>, r: &Arc<TaskCell>) -> thread::JoinHandle<Option<Resume>> {
    let (ch, r) = (ch.clone(), r.clone());
    thread::spawn(move || match ch.try_recv(&mut Vec::new()) {
        Recv::Got(v) => Some(Resume::Value(v)),
        Recv::Empty => park(&r, &RecvWait(ch.clone())),
    })
}

/// A thread sending `n` on `ch` as task `s` (nobody closes the channel).
fn spawn_sender(ch: &Arc<ChannelCell>, s: &Arc<TaskCell>, n: f64) -> thread::JoinHandle<Option<Resume>> {
    let (ch, s) = (ch.clone(), s.clone());
    thread::spawn(move || match ch.try_send(Value::number(n), &mut Vec::new()) {
        Sent::Sent => Some(Resume::Value(Value::UNDEFINED)),
        Sent::Full => park(&s, &SendWait(ch.clone(), Value::number(n))),
        Sent::Closed => unreachable!("nobody closes"),
    })
}

/// How a parked task's wait ended: decided by `park` itself, or by the
/// resume a waker delivered (at most one of the two: a second would be a
/// double wake-up, which the claim rule forbids).
fn ended(cell: &TaskCell, parked: Option<Resume>) -> Option<Resume> {
    let delivered = cell.resume.lock().take();
    assert!(parked.is_none() || delivered.is_none(), "task {} woken twice: {parked:?} and {delivered:?}", cell.id);
    parked.or(delivered)
}

fn number(r: Option<Resume>) -> Option<f64> {
    match r {
        Some(Resume::Value(v)) | Some(Resume::Case { value: v, .. }) if v.is_number() => Some(v.as_number()),
        _ => None,
    }
}

/// The wait-token claim: of several wakers racing for one generation,
/// exactly one wins; a claim of an older generation never wins after the
/// owner armed a newer one; `claim_current` (a canceller) competes fairly.
#[test]
fn wait_token_has_one_claim_per_generation() {
    shuttle::check_dfs(
        || {
            let t = Arc::new(WaitToken::default());
            let g1 = t.arm();
            let claims: Vec<_> = (0..2)
                .map(|_| {
                    let t = t.clone();
                    thread::spawn(move || t.claim(g1))
                })
                .collect();
            let cancel = {
                let t = t.clone();
                thread::spawn(move || t.claim_current())
            };
            let wins =
                claims.into_iter().map(|h| h.join().unwrap() as u32).sum::<u32>() + cancel.join().unwrap() as u32;
            assert_eq!(wins, 1, "exactly one claim of generation {g1}");
            let g2 = t.arm();
            let stale = {
                let t = t.clone();
                thread::spawn(move || t.claim(g1))
            };
            let fresh = t.claim(g2);
            assert!(!stale.join().unwrap(), "a stale generation never claims");
            assert!(fresh);
        },
        Some(DFS_RUNS),
    );
}

/// A cancel racing a suspension (the lost-cancellation defect): the
/// canceller raises the flag and claims whatever wait is armed; the
/// suspending worker arms, registers, and re-checks the flag. Whatever the
/// order, the task is claimed exactly once — never left blocked, never
/// woken twice.
#[test]
fn cancel_racing_a_suspension_is_never_lost() {
    shuttle::check_dfs(
        || {
            let t = task(1);
            let ch = Arc::new(ChannelCell::new(0));
            let canceller = {
                let t = t.clone();
                thread::spawn(move || {
                    if t.request_cancel() {
                        let mut woken = Vec::new();
                        Waiter::new(t.clone(), 0).deliver(Resume::Cancel, &mut woken);
                    }
                })
            };
            let parked = park(&t, &RecvWait(ch.clone()));
            canceller.join().unwrap();
            let end = ended(&t, parked);
            assert!(matches!(end, Some(Resume::Cancel)), "the cancel is delivered: {end:?}");
            assert!(!t.token.is_armed(), "the wait was claimed");
        },
        Some(DFS_RUNS),
    );
}

/// Park/unpark with no lost wake-up, on an unbuffered channel: a receiver
/// and a sender that each find nothing on their fast path and park, in
/// any order and interleaving. One must find the other registered (under
/// the channel's lock); both end decided, the value moved exactly once.
#[test]
fn unbuffered_send_and_receive_never_lose_a_wakeup() {
    shuttle::check_pct(
        || {
            let ch = Arc::new(ChannelCell::new(0));
            let (r, s) = (task(1), task(2));
            let receiver = spawn_receiver(&ch, &r);
            let sender = spawn_sender(&ch, &s, 7.0);
            let (got, sent) = (receiver.join().unwrap(), sender.join().unwrap());
            assert_eq!(number(ended(&r, got)), Some(7.0), "the receiver got the value");
            assert!(ended(&s, sent).is_some(), "the sender was released");
            assert_eq!(ch.try_recv(&mut Vec::new()), Recv::Empty, "the value moved once");
        },
        PCT_RUNS,
        PCT_DEPTH,
    );
}

/// A select losing to a close: a task selects on receiving from `c` and
/// from `d` while another task closes `c` and a third sends on `d`. The
/// select is decided by exactly one case; if the close wins, the sender's
/// value is not taken by the losing case's stale registration — it stays
/// on `d` for the next receiver.
#[test]
fn select_losing_to_a_close_keeps_the_other_value() {
    shuttle::check_pct(
        || {
            let (c, d) = (Arc::new(ChannelCell::new(0)), Arc::new(ChannelCell::new(0)));
            let (sel, snd) = (task(1), task(2));
            let selecting = {
                let (c, d, sel) = (c.clone(), d.clone(), sel.clone());
                thread::spawn(move || {
                    // The interpreter's pass over the cases first.
                    if let Recv::Got(v) = c.try_recv(&mut Vec::new()) {
                        return Some(Resume::Case { case: 0, value: v });
                    }
                    if let Recv::Got(v) = d.try_recv(&mut Vec::new()) {
                        return Some(Resume::Case { case: 1, value: v });
                    }
                    let wait = SelectWait { cases: vec![(0, CaseOp::Recv(c)), (1, CaseOp::Recv(d))] };
                    park(&sel, &wait)
                })
            };
            let closer = {
                let c = c.clone();
                thread::spawn(move || {
                    c.close(&mut Vec::new());
                })
            };
            let sending = {
                let (d, snd) = (d.clone(), snd.clone());
                thread::spawn(move || match d.try_send(Value::number(5.0), &mut Vec::new()) {
                    Sent::Sent => Some(Resume::Value(Value::UNDEFINED)),
                    Sent::Full => park(&snd, &SendWait(d.clone(), Value::number(5.0))),
                    Sent::Closed => unreachable!("d is never closed"),
                })
            };
            let chosen = selecting.join().unwrap();
            closer.join().unwrap();
            let sent = sending.join().unwrap();
            match ended(&sel, chosen) {
                Some(Resume::Case { case: 0, value }) => {
                    assert!(value.is_null(), "the closed channel yields null");
                    // The sender is still blocked, its value still on `d`.
                    assert!(ended(&snd, sent).is_none(), "the sender is not released by a select that lost");
                    assert_eq!(
                        number(Some(Resume::Value(match d.try_recv(&mut Vec::new()) {
                            Recv::Got(v) => v,
                            Recv::Empty => panic!("the value sent on d vanished"),
                        }))),
                        Some(5.0)
                    );
                }
                Some(Resume::Case { case: 1, value }) => {
                    assert_eq!(number(Some(Resume::Value(value))), Some(5.0));
                    assert!(ended(&snd, sent).is_some(), "the sender was released");
                }
                other => panic!("the select was not decided by one case: {other:?}"),
            }
        },
        PCT_RUNS,
        PCT_DEPTH,
    );
}

/// A cancel racing a suspension while a sender races both: the receiving
/// task is decided exactly once, by the value or by the cancel, and when
/// the cancel wins the sender's value is not lost with the cancelled
/// registration (it stays queued on the channel).
#[test]
fn cancel_racing_a_receive_loses_no_value() {
    shuttle::check_pct(
        || {
            let ch = Arc::new(ChannelCell::new(0));
            let (r, s) = (task(1), task(2));
            let receiver = spawn_receiver(&ch, &r);
            let canceller = {
                let r = r.clone();
                thread::spawn(move || {
                    if r.request_cancel() {
                        Waiter::new(r.clone(), 0).deliver(Resume::Cancel, &mut Vec::new());
                    }
                })
            };
            let sender = spawn_sender(&ch, &s, 3.0);
            let got = receiver.join().unwrap();
            canceller.join().unwrap();
            let sent = sender.join().unwrap();
            let sender_done = ended(&s, sent).is_some();
            match ended(&r, got) {
                Some(Resume::Cancel) => {
                    assert!(!sender_done, "a cancelled receiver took no value");
                    assert_eq!(ch.try_recv(&mut Vec::new()), Recv::Got(Value::number(3.0)), "the value is still there");
                }
                Some(Resume::Value(v)) => {
                    assert_eq!(number(Some(Resume::Value(v))), Some(3.0));
                    assert!(sender_done, "the sender was released");
                }
                other => panic!("the receiver was left undecided: {other:?}"),
            }
        },
        PCT_RUNS,
        PCT_DEPTH,
    );
}

/// A decided wait leaves nothing that confuses the next one: a select
/// won by a value on `c` leaves a stale receive registration on `d`; the
/// task's next wait (a plain receive on `d`) races a sender on `d`, which
/// must skip the stale entry and deliver a plain value to the new wait.
#[test]
fn a_stale_select_registration_never_takes_the_next_waits_value() {
    shuttle::check_pct(
        || {
            let (c, d) = (Arc::new(ChannelCell::new(1)), Arc::new(ChannelCell::new(0)));
            let (t, snd) = (task(1), task(2));
            let wait = SelectWait { cases: vec![(0, CaseOp::Recv(c.clone())), (1, CaseOp::Recv(d.clone()))] };
            assert!(park(&t, &wait).is_none(), "nothing ready: the select waits");
            // `c` decides it (a waker delivers the case).
            assert_eq!(c.try_send(Value::number(1.0), &mut Vec::new()), Sent::Sent);
            assert!(matches!(ended(&t, None), Some(Resume::Case { case: 0, .. })));
            let next = {
                let (d, t) = (d.clone(), t.clone());
                thread::spawn(move || match d.try_recv(&mut Vec::new()) {
                    Recv::Got(v) => Some(Resume::Value(v)),
                    Recv::Empty => park(&t, &RecvWait(d.clone())),
                })
            };
            let sending = {
                let (d, snd) = (d.clone(), snd.clone());
                thread::spawn(move || match d.try_send(Value::number(2.0), &mut Vec::new()) {
                    Sent::Sent => Some(Resume::Value(Value::UNDEFINED)),
                    Sent::Full => park(&snd, &SendWait(d.clone(), Value::number(2.0))),
                    Sent::Closed => unreachable!("nobody closes"),
                })
            };
            let got = next.join().unwrap();
            let sent = sending.join().unwrap();
            match ended(&t, got) {
                Some(Resume::Value(v)) => assert_eq!(number(Some(Resume::Value(v))), Some(2.0)),
                other => panic!("the next wait ended with {other:?}, not the plain value"),
            }
            assert!(ended(&snd, sent).is_some(), "the sender was released");
        },
        PCT_RUNS,
        PCT_DEPTH,
    );
}
