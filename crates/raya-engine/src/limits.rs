//! Limits on a run, and the one mechanism that enforces them.
//!
//! A *run* is a task and every task it spawns: `Vm::execute`'s main
//! module, one call or `eval` into an instance, one REPL input. Its
//! [`Guard`] sits in each of its tasks' `TaskCell::guard` (a spawned task
//! shares its parent's, see `TaskInterpreter::spawn_from_regs`) and is
//! charged, where a task's run on a thread ends (`driver::run_task`), with
//! the safepoints it ran. A guard past a limit stops the run in one of two
//! ways, fixed when it is made:
//!
//! - [`OnLimit::Cancel`] (an embedder's [`Limits`] on a call or `execute`,
//!   the interrupt callback, `Call::cancel`, the REPL's Ctrl-C): each task
//!   of the run gets a `TaskCancelledError` where it is next preempted or
//!   suspends, and is ended if it goes on after catching it.
//! - [`OnLimit::EndProgram`] (`VmBuilder::step_limit`, `time_limit`,
//!   `max_tasks`): the whole program stops at once, as after `exit(1)`,
//!   and the host gets `HostError::Limit` naming the limit
//!   ([`LimitHit`]); no script can catch it.
//!
//! `execute` with both kinds has two guards, the per-run one in front
//! with the program's as its parent: every check and count goes through
//! both.
//!
//! Counters are shared by the run's tasks on several threads, so every
//! update is one atomic read-modify-write; the stop flag is raised once
//! (the first reason is kept) and never lowered.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Limits on one run: the main module of `Vm::execute`, or one call into
/// an `Instance`, together with every task it spawns. A run past its time
/// or instruction limit is stopped as `Call::cancel` stops it (its tasks
/// too, where each is next preempted or suspends) and ends with
/// `HostError::Cancelled` naming the limit. The heap's limit is
/// `VmBuilder::max_heap`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time from the start of the run.
    pub time: Option<Duration>,
    /// Instructions, counted in safepoints (each loop iteration and each
    /// call is one) over the run's task and every task it spawns; checked
    /// where each of its tasks' runs ends (at the latest every time slice,
    /// 10,000 safepoints), so a run may go up to one slice per task past
    /// it.
    pub instructions: Option<u64>,
    /// Most tasks of the run alive at once, its own included: spawning
    /// one more throws a catchable `RangeError` ("too many tasks: limit
    /// of n live tasks reached").
    pub tasks: Option<usize>,
}

impl Limits {
    /// No limits.
    pub fn none() -> Limits {
        Limits::default()
    }

    /// A time limit.
    pub fn time(mut self, t: Duration) -> Limits {
        self.time = Some(t);
        self
    }

    /// An instruction budget (see [`Limits::instructions`]).
    pub fn instructions(mut self, n: u64) -> Limits {
        self.instructions = Some(n);
        self
    }

    /// A task limit (see [`Limits::tasks`]).
    pub fn tasks(mut self, n: usize) -> Limits {
        self.tasks = Some(n);
        self
    }
}

/// What a guard does to its run past a limit (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnLimit {
    Cancel,
    EndProgram,
}

/// Which limit ended a program ([`OnLimit::EndProgram`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitHit {
    Steps(u64),
    Time(Duration),
}

impl std::fmt::Display for LimitHit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LimitHit::Steps(n) => write!(f, "step limit of {n} reached"),
            LimitHit::Time(d) => write!(f, "time limit of {} ms reached", d.as_millis()),
        }
    }
}

/// Why a run must stop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Cancel its tasks, with this reason (`HostError::Cancelled`).
    Cancel(String),
    /// End the program.
    End(LimitHit),
}

/// The interrupt callback (`VmBuilder::interrupt`): polled where a run's
/// tasks are checked; true stops the run.
pub type Interrupt = Arc<dyn Fn() -> bool + Send + Sync>;

/// Enforces one run's [`Limits`] (see the module docs).
pub struct Guard {
    on_limit: OnLimit,
    /// Safepoints left (`u64::MAX`: no budget).
    steps_left: AtomicU64,
    steps: Option<u64>,
    /// Tasks of the run alive now (the run's first counts from the start).
    alive: AtomicUsize,
    max_tasks: Option<usize>,
    deadline: Option<Instant>,
    time: Option<Duration>,
    interrupt: Option<Interrupt>,
    stopped: AtomicBool,
    reason: Mutex<Option<Stop>>,
    /// Whether the tasks the run spawns share the guard (not for a REPL
    /// input: Ctrl-C stops the input, not the tasks it started).
    covers_spawned: bool,
    /// The program's guard behind a run's own (`execute`).
    parent: Option<Arc<Guard>>,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("on_limit", &self.on_limit)
            .field("stopped", &self.stopped.load(Ordering::Relaxed))
            .finish()
    }
}

impl Guard {
    /// A guard of `limits`, starting now.
    pub fn new(limits: &Limits, on_limit: OnLimit, interrupt: Option<Interrupt>) -> Guard {
        Guard {
            on_limit,
            steps_left: AtomicU64::new(limits.instructions.unwrap_or(u64::MAX)),
            steps: limits.instructions,
            alive: AtomicUsize::new(1),
            max_tasks: limits.tasks,
            deadline: limits.time.map(|t| Instant::now() + t),
            time: limits.time,
            interrupt,
            stopped: AtomicBool::new(false),
            reason: Mutex::new(None),
            covers_spawned: true,
            parent: None,
        }
    }

    /// This guard, checked after its own limits (see the module docs).
    pub fn with_parent(mut self, parent: Option<Arc<Guard>>) -> Guard {
        self.parent = parent;
        self
    }

    /// A guard for one task only: the tasks it spawns run unguarded.
    pub fn task_only(mut self) -> Guard {
        self.covers_spawned = false;
        self
    }

    /// Whether spawned tasks share the guard.
    pub fn covers_spawned(&self) -> bool {
        self.covers_spawned
    }

    /// Stops the run for `reason`, as a limit does (the first reason
    /// given is kept).
    pub fn stop(&self, reason: Stop) {
        let mut r = self.reason.lock();
        if r.is_none() {
            *r = Some(reason);
        }
        self.stopped.store(true, Ordering::Release);
    }

    /// [`Guard::stop`] with a cancellation reason.
    pub fn cancel(&self, reason: impl Into<String>) {
        self.stop(Stop::Cancel(reason.into()));
    }

    /// Whether the run was stopped (by a limit, or [`Guard::stop`]).
    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    /// Why the run was stopped, if it was.
    pub fn reason(&self) -> Option<Stop> {
        self.reason.lock().clone()
    }

    /// The cancellation reason, if the run was cancelled.
    pub fn cancel_reason(&self) -> Option<String> {
        match self.reason() {
            Some(Stop::Cancel(r)) => Some(r),
            _ => None,
        }
    }

    /// Charges `safepoints` that a task of the run just ran and checks
    /// every limit; `Some` once the run must stop (and from then on).
    pub fn check(&self, safepoints: u32) -> Option<Stop> {
        if !self.stopped.load(Ordering::Acquire) {
            let spend = |left: u64| (left != u64::MAX).then(|| left.saturating_sub(safepoints as u64));
            if let Ok(left) = self.steps_left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, spend) {
                if left <= safepoints as u64 {
                    self.stop(match self.on_limit {
                        OnLimit::Cancel => Stop::Cancel("instruction budget exhausted".into()),
                        OnLimit::EndProgram => Stop::End(LimitHit::Steps(self.steps.unwrap_or(0))),
                    });
                }
            }
            if let (Some(d), Some(t)) = (self.deadline, self.time) {
                if Instant::now() >= d {
                    self.stop(match self.on_limit {
                        OnLimit::Cancel => Stop::Cancel(format!("time limit of {t:?} reached")),
                        OnLimit::EndProgram => Stop::End(LimitHit::Time(t)),
                    });
                }
            }
            if self.interrupt.as_ref().is_some_and(|f| f()) {
                self.cancel("interrupted by the host");
            }
        }
        if let Some(p) = &self.parent {
            if let Some(stop @ Stop::End(_)) = p.check(safepoints) {
                return Some(stop);
            }
        }
        if self.stopped.load(Ordering::Acquire) {
            return self.reason();
        }
        None
    }

    /// A task of the run spawns another, which will share this guard;
    /// `Err(message)` refuses it (the spawn throws a catchable
    /// `RangeError` with that message).
    pub fn task_started(&self) -> Result<(), String> {
        if let Some(p) = &self.parent {
            p.task_started()?;
        }
        let more = |n: usize| match self.max_tasks {
            Some(max) if n >= max => None,
            _ => Some(n + 1),
        };
        match self.alive.fetch_update(Ordering::AcqRel, Ordering::Acquire, more) {
            Ok(_) => Ok(()),
            Err(_) => {
                if let Some(p) = &self.parent {
                    p.task_ended();
                }
                Err(format!("too many tasks: limit of {} live tasks reached", self.max_tasks.unwrap_or(0)))
            }
        }
    }

    /// A task of the run ended (each task once, the first one included).
    pub fn task_ended(&self) {
        self.alive.fetch_sub(1, Ordering::AcqRel);
        if let Some(p) = &self.parent {
            p.task_ended();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_are_shared_and_the_parent_ends_the_program() {
        let program = Arc::new(Guard::new(&Limits::none().instructions(100), OnLimit::EndProgram, None));
        let run = Guard::new(&Limits::none().instructions(1000).tasks(2), OnLimit::Cancel, None)
            .with_parent(Some(program.clone()));
        assert_eq!(run.check(60), None);
        assert_eq!(run.check(60), Some(Stop::End(LimitHit::Steps(100))));
        let run = Guard::new(&Limits::none().instructions(100), OnLimit::Cancel, None);
        assert_eq!(run.check(99), None);
        assert_eq!(run.check(1), Some(Stop::Cancel("instruction budget exhausted".into())));
        // Sticky, and the first reason is kept.
        run.cancel("later");
        assert_eq!(run.check(0), Some(Stop::Cancel("instruction budget exhausted".into())));
        // Tasks: the first counts from the start; an ended one frees room.
        let run = Guard::new(&Limits::none().tasks(2), OnLimit::Cancel, None);
        assert_eq!(run.task_started(), Ok(()));
        assert!(run.task_started().is_err());
        run.task_ended();
        assert_eq!(run.task_started(), Ok(()));
    }
}
