//! Interactive sessions (the `raya` REPL): one live program to which each
//! input is added as it is entered.
//!
//! Each input is compiled on its own ([`compile_live`], as an instance's
//! `eval` is) as an entry module that sees the earlier inputs' top-level
//! bindings as an outer scope: their global slots. Its own declarations
//! get slots after every slot used so far, so the session's program only
//! ever grows. The input then runs as a new task of the session's
//! program: a host job links its code ([`crate::driver::link_live`]:
//! constants, the `std:` modules it imports, the session's grown source
//! map) and spawns its body. Tasks an input started go on running after
//! it ends.
//!
//! The session's global table cannot grow while workers read it, so it is
//! made [`GLOBAL_CAPACITY`] slots large at the start; an input that would
//! go past it is refused.

use crate::compiler::{compile_live, CompileError, LiveInput, LiveScope, Program};
use crate::driver::{LiveRun, RunOptions};
use crate::limits::{Guard, Limits, OnLimit};
use crate::sync::Outcome;
use crate::vm::interp::TaskInterpreter;
use crate::vm::object::Body;
use crate::vm::{Runtime, Value};
use parking_lot::{Condvar, Mutex};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Global slots of a session's program (each input uses a few, plus
/// hidden ones; the built-ins and the prelude use the first thousand or
/// so).
pub const GLOBAL_CAPACITY: usize = 1 << 18;

/// How an input is compiled: it may import modules, and its value is
/// read from its completion slot (a task it ends with is shown, not
/// awaited).
fn input() -> LiveInput {
    LiveInput { capabilities: crate::std::Capabilities::all(), imports: true, returns_completion: false }
}

/// How an input ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Evaluated {
    /// It ran to its end: the value of its last expression statement as
    /// `console.log` prints it (`undefined` when it had none).
    Value(String),
    /// It threw: the report (`Uncaught X: message`, the code frame and the
    /// stack), as `raya run` prints it.
    Error(String),
    /// It was interrupted ([`Evaluation::cancel`]).
    Cancelled,
    /// The program called `exit(code)`: the session is over.
    Exited(i32),
}

/// A running input: wait for it or cancel it.
pub struct Evaluation {
    state: Arc<EvalState>,
    handle: crate::driver::Handle,
}

struct EvalState {
    result: Mutex<Option<Evaluated>>,
    cv: Condvar,
    /// The input's task, once started.
    cell: Mutex<Option<Arc<crate::sync::TaskCell>>>,
    /// Stops the input's task where it is next preempted or suspends
    /// (so a `while (true) {}` stops too); a suspended task is woken with
    /// `TaskCancelledError` by [`Evaluation::cancel`] itself. Not shared
    /// by the tasks the input starts.
    guard: Arc<Guard>,
}

impl Default for EvalState {
    fn default() -> Self {
        EvalState {
            result: Mutex::new(None),
            cv: Condvar::new(),
            cell: Mutex::new(None),
            guard: Arc::new(Guard::new(&Limits::none(), OnLimit::Cancel, None).task_only()),
        }
    }
}

impl EvalState {
    /// Records the outcome (only the first counts) and wakes the waiter.
    fn finish(&self, r: Evaluated) {
        let mut g = self.result.lock();
        if g.is_none() {
            *g = Some(r);
            self.cv.notify_all();
        }
    }
}

impl Evaluation {
    /// Waits at most `timeout`; `None` while the input is still running.
    pub fn wait_timeout(&self, timeout: Duration) -> Option<Evaluated> {
        let deadline = Instant::now() + timeout;
        let mut g = self.state.result.lock();
        while g.is_none() {
            if self.state.cv.wait_until(&mut g, deadline).timed_out() {
                break;
            }
        }
        g.clone()
    }

    /// Interrupts the input: its task gets a `TaskCancelledError` at its
    /// next suspension, or where it is next preempted if it is computing;
    /// the evaluation ends as [`Evaluated::Cancelled`]. Tasks it started
    /// are not cancelled.
    pub fn cancel(&self) {
        self.state.guard.cancel("interrupted");
        let st = self.state.clone();
        self.handle.on_runtime(Box::new(move |rt| {
            if let Some(cell) = st.cell.lock().clone() {
                if cell.request_cancel() {
                    cell.resume.lock().set(crate::sync::Resume::Cancel);
                    rt.woken.push(cell);
                }
            }
        }));
    }
}

/// An interactive session: a live program and what its inputs declared.
pub struct Session {
    live: LiveRun,
    scope: LiveScope,
    /// The running input, which `exit()` ends.
    current: Arc<Mutex<std::sync::Weak<EvalState>>>,
}

impl Session {
    /// Starts the session's program (the prelude runs once, here) on
    /// `opts.workers` workers; its output goes to `output` if given (a
    /// line editor redraws its prompt after a task's output), else to the
    /// process's streams.
    pub fn start(opts: RunOptions, output: Option<Arc<dyn crate::vm::runtime::OutputSink>>) -> Session {
        let (mut first, scope) =
            compile_live("<repl>", "", &LiveScope::default(), input()).expect("the prelude compiles");
        first.global_names.resize(GLOBAL_CAPACITY.max(first.global_names.len()), String::new());
        let state = Arc::new(EvalState::default());
        let st = state.clone();
        let on_main: crate::sync::OnDone = Box::new(move |_rt: &mut Runtime, o: Outcome| {
            st.finish(match o {
                Outcome::Value(_) => Evaluated::Value(String::new()),
                _ => Evaluated::Error("the prelude failed".into()),
            })
        });
        let mut setup = move |rt: &mut Runtime| rt.world.output.lock().sink = output.clone();
        let live = LiveRun::start(&first, opts, None, &mut setup, on_main);
        let ev = Evaluation { state, handle: live.handle().clone() };
        // The prelude installs the methods of the built-in classes: every
        // input runs after it.
        while ev.wait_timeout(Duration::from_secs(60)).is_none() {}
        let current: Arc<Mutex<std::sync::Weak<EvalState>>> = Default::default();
        let c = current.clone();
        live.on_exit(Box::new(move |code| {
            if let Some(st) = c.lock().upgrade() {
                st.finish(Evaluated::Exited(code));
            }
        }));
        Session { live, scope, current }
    }

    /// Compiles `src` as the next input (named `name` in stack traces)
    /// without running it; a compile error leaves the session unchanged.
    pub fn compile(&self, name: &str, src: &str) -> Result<(Program, LiveScope), CompileError> {
        compile_live(name, src, &self.scope, input())
    }

    /// Runs an input [`Session::compile`] returned; its declarations are
    /// visible to the inputs compiled after this call.
    pub fn run(&mut self, program: Program, scope: LiveScope) -> Evaluation {
        let state = Arc::new(EvalState::default());
        let ev = Evaluation { state: state.clone(), handle: self.live.handle().clone() };
        if let Some(code) = self.live.exited() {
            state.finish(Evaluated::Exited(code));
            return ev;
        }
        if program.global_base + program.global_names.len() > GLOBAL_CAPACITY {
            state.finish(Evaluated::Error(
                "Uncaught RangeError: this session has declared too many names; start a new one".into(),
            ));
            return ev;
        }
        self.scope = scope;
        *self.current.lock() = Arc::downgrade(&state);
        // `exit()` may have come between the check above and the line
        // above: then the hook found no input to end.
        if let Some(code) = self.live.exited() {
            state.finish(Evaluated::Exited(code));
            return ev;
        }
        let st = state.clone();
        let sources = Arc::new(self.scope.sources.clone());
        self.live.handle().on_runtime(Box::new(move |rt| start_input(rt, &program, sources, st)));
        ev
    }
}

/// On a worker: links the input's code and starts its task.
fn start_input(
    rt: &mut Runtime,
    program: &Program,
    sources: Arc<crate::syntax::diagnostic::SourceMap>,
    st: Arc<EvalState>,
) {
    let body = crate::driver::link_live(rt, program, &sources);
    let completion = program.completion_slot as usize;
    let declared: Vec<usize> = program.declared.iter().map(|&(_, g, _)| g as usize).collect();
    match TaskInterpreter::new(rt).spawn(body, Value::UNDEFINED, &[]) {
        Ok(task) => {
            let Some(Body::Task(cell)) = task.as_obj().map(|o| &o.body) else { unreachable!("spawn returns a task") };
            // Set before this job returns, so before the task first runs.
            let _ = cell.set_guard(st.guard.clone());
            *st.cell.lock() = Some(cell.clone());
            let st2 = st.clone();
            cell.set_on_done(Box::new(move |rt: &mut Runtime, o: Outcome| {
                // A declaration an error skipped would stay in its
                // temporal dead zone for the rest of the session: it is
                // `undefined` instead.
                for &g in &declared {
                    if rt.world.globals.get(g) == Value::HOLE {
                        rt.world.globals.set(g, Value::UNDEFINED);
                    }
                }
                let r = match o {
                    _ if st2.guard.is_stopped() => Evaluated::Cancelled,
                    Outcome::Value(_) => {
                        let v = rt.world.globals.get(completion);
                        match crate::builtins::inspect::format_log_args(&[v]) {
                            Ok(text) => Evaluated::Value(text),
                            Err(_) => Evaluated::Value(crate::builtins::inspect::inspect(v)),
                        }
                    }
                    Outcome::Error(e) => {
                        Evaluated::Error(format!("Uncaught {}", crate::driver::uncaught_report(rt, e)))
                    }
                    Outcome::Cancelled(_) => Evaluated::Cancelled,
                };
                // Tasks that failed unobserved since the last input (this
                // one's or earlier ones') are reported now, as a program's
                // are at its end.
                for report in crate::driver::unhandled_reports(rt, None) {
                    rt.write_report(&format!("{report}\n"));
                }
                // Output the input wrote comes before its value.
                rt.flush_pending();
                st2.finish(r);
            }));
        }
        Err(e) => st.finish(Evaluated::Error(format!("Uncaught {}", crate::driver::uncaught_report(rt, e)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(s: &mut Session, src: &str) -> Evaluated {
        let (program, scope) = s.compile("REPL", src).unwrap_or_else(|e| panic!("{src}: {}", e.render()));
        let ev = s.run(program, scope);
        loop {
            if let Some(r) = ev.wait_timeout(Duration::from_secs(60)) {
                return r;
            }
        }
    }

    fn session() -> Session {
        Session::start(RunOptions { workers: Some(2), ..Default::default() }, None)
    }

    #[test]
    fn later_inputs_see_earlier_declarations() {
        let mut s = session();
        assert_eq!(
            eval(&mut s, "let a = 20; function f(x: number) { return x + a }"),
            Evaluated::Value("undefined".into())
        );
        assert_eq!(eval(&mut s, "a = a + 1; f(a)"), Evaluated::Value("42".into()));
        // Closures of an earlier input see later assignments.
        assert_eq!(eval(&mut s, "a = 0; f(1)"), Evaluated::Value("1".into()));
        // A new declaration replaces the old binding for later inputs.
        assert_eq!(eval(&mut s, "const a = \"s\"; a"), Evaluated::Value("s".into()));
        assert_eq!(eval(&mut s, "[a, f(1)]"), Evaluated::Value("[ 's', 1 ]".into()));
    }

    #[test]
    fn constants_of_earlier_inputs_stay_constant() {
        let mut s = session();
        eval(&mut s, "const c = 1");
        let e = s.compile("REPL", "c = 2").expect_err("a compile error");
        assert!(e.render().contains("cannot assign to `c` because it is a constant"), "{}", e.render());
        assert_eq!(eval(&mut s, "c"), Evaluated::Value("1".into()));
    }

    #[test]
    fn an_error_before_a_declaration_leaves_it_undefined() {
        let mut s = session();
        match eval(&mut s, "throw new Error(\"early\"); let late = 1") {
            Evaluated::Error(text) => assert!(text.starts_with("Uncaught Error: early"), "{text}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(eval(&mut s, "late"), Evaluated::Value("undefined".into()));
    }

    #[test]
    fn cancel_stops_a_busy_input() {
        let mut s = session();
        let (program, scope) = s.compile("REPL", "while (true) {}").unwrap();
        let ev = s.run(program, scope);
        assert_eq!(ev.wait_timeout(Duration::from_millis(20)), None);
        ev.cancel();
        let r = loop {
            if let Some(r) = ev.wait_timeout(Duration::from_secs(60)) {
                break r;
            }
        };
        assert_eq!(r, Evaluated::Cancelled);
        assert_eq!(eval(&mut s, "1 + 1"), Evaluated::Value("2".into()));
    }
}
