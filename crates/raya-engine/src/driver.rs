//! Running a compiled program to completion on the current thread.
//!
//! This is the sequential driver: the main task runs on one worker (this
//! thread) in budgeted slices, exactly as a scheduler worker would run it,
//! until it completes, fails or calls `exit`.

use crate::builtins::inspect;
use crate::compiler::Program;
use crate::vm::atom::names;
use crate::vm::interp::{RunOutcome, TaskInterpreter};
use crate::vm::object::Body;
use crate::vm::task::Task;
use crate::vm::{ops, Runtime, Value};

/// Safepoints a task runs before it yields to the run queue.
pub const TIME_SLICE: u32 = 10_000;

/// Runs `program` with `args` as its `args`; returns the process exit code.
pub fn run_program(program: &Program, args: Vec<String>) -> i32 {
    let (mut rt, entry) = Runtime::new(&program.entry, &program.sources, program.global_names.len(), args);
    crate::builtins::process::set_args(&mut rt);
    let code = run_main(&mut rt, entry);
    rt.flush_stdout();
    code
}

fn run_main(rt: &mut Runtime, entry: Value) -> i32 {
    let mut task = Task::new(crate::vm::object::next_id());
    let mut interp = TaskInterpreter::new(rt);
    if let Err(e) = interp.start(&mut task, entry, Value::UNDEFINED, &[]) {
        report_uncaught(interp.rt, e);
        return 1;
    }
    loop {
        match interp.run(&mut task, TIME_SLICE) {
            RunOutcome::Preempted => continue,
            RunOutcome::Completed(_) => return 0,
            RunOutcome::Exited(code) => return code,
            RunOutcome::Failed(e) => {
                report_uncaught(interp.rt, e);
                return 1;
            }
            RunOutcome::Suspended(_) => {
                interp.rt.write_stderr("DeadlockError: all tasks are blocked\n");
                return 1;
            }
        }
    }
}

/// `Uncaught <error stack>` on stderr.
pub fn report_uncaught(rt: &mut Runtime, e: Value) {
    let text = uncaught_text(e);
    rt.write_stderr(&format!("Uncaught {text}\n"));
}

fn uncaught_text(e: Value) -> String {
    if let Some(Body::Object(d)) = e.as_obj().map(|o| &o.body) {
        let d = d.get();
        if ops::error_name(d).is_some() {
            if let Some(s) = d.props.get(names::STACK).and_then(ops::as_str) {
                return s.to_owned();
            }
        }
    }
    inspect::inspect(e)
}
