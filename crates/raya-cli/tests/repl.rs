//! The REPL (`raya` with no arguments on a terminal), driven through a
//! pseudo-terminal as a user would drive it.
//!
//! The terminal echoes what is typed, so every expected output is text
//! the typed line does not contain (`"ab" + "c"` prints `abc`). Every wait
//! is for an output, with a generous deadline (debug builds on a loaded
//! machine); no test sleeps for correctness.

use expectrl::{ControlCode, Eof, Expect, Regex, Session};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

fn raya_bin() -> PathBuf {
    match std::env::var_os("RAYA_E2E_BIN") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_BIN_EXE_raya")),
    }
}

/// A data directory of the test's own (the history goes there).
fn data_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("repl").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

type Repl = expectrl::session::OsSession;

fn start(data: &Path) -> Repl {
    let mut cmd = Command::new(raya_bin());
    cmd.env("XDG_DATA_HOME", data).env_remove("RAYA_REPL_HISTORY").env("RAYA_WORKERS", "2");
    let mut p = Session::spawn(cmd).expect("start raya in a pseudo-terminal");
    p.set_expect_timeout(Some(DEADLINE));
    p.expect("type .help").expect("the banner");
    p.expect("> ").expect("the first prompt");
    p
}

/// Types `line` and waits for `output` (a regular expression).
fn enter(p: &mut Repl, line: &str, output: &str) {
    p.send_line(line).unwrap();
    if let Err(e) = p.expect(Regex(output)) {
        panic!("after `{line}`: expected /{output}/: {e}");
    }
}

/// Ctrl-D on an empty line leaves, with exit code 0.
///
/// The key is sent only once the prompt is back: between two inputs the
/// terminal is in cooked mode, where a Ctrl-D (or Ctrl-C) typed early is
/// taken by the kernel, not by the line editor.
fn leave(mut p: Repl) {
    p.expect("> ").expect("the prompt before Ctrl-D");
    p.send(ControlCode::EndOfTransmission).unwrap();
    p.expect(Eof).expect("the REPL ends");
    let status = p.get_process_mut().wait().unwrap();
    assert_eq!(status, expectrl::process::unix::WaitStatus::Exited(p.get_process().pid(), 0));
}

#[test]
fn declarations_persist_between_inputs() {
    let mut p = start(&data_dir("persist"));
    enter(&mut p, "let x = 40 + 1", "undefined");
    enter(&mut p, "function twice(n: number): number { return n * 2 }", "undefined");
    enter(&mut p, "class Box { v: number; constructor(v: number) { this.v = v } }", "undefined");
    enter(&mut p, "const k = 1000 + 1", "undefined");
    enter(&mut p, "new Box(x).v + twice(x) + k", "\r\n1124\r\n");
    // Assignment to an earlier `let` is seen by later inputs.
    enter(&mut p, "x = x + 1", "\r\n42\r\n");
    enter(&mut p, "x * 10", "\r\n420\r\n");
    // An earlier `const` stays constant; a new declaration replaces it.
    enter(&mut p, "k = 5", "cannot assign to `k` because it is a constant");
    enter(&mut p, "let k = \"new\" + \"er\"", "undefined");
    enter(&mut p, "k", "\r\nnewer\r\n");
    leave(p);
}

#[test]
fn unfinished_statements_continue_on_the_next_line() {
    let mut p = start(&data_dir("multiline"));
    p.send_line("function add(a: number, b: number): number {").unwrap();
    p.expect("... ").unwrap();
    p.send_line("  return a + b").unwrap();
    p.expect("... ").unwrap();
    enter(&mut p, "}", "undefined");
    enter(&mut p, "add(20, 22)", "\r\n42\r\n");
    // A template literal spans lines too.
    p.send_line("`one").unwrap();
    p.expect("... ").unwrap();
    enter(&mut p, "two` + \"!\"", "one\r\ntwo!");
    leave(p);
}

#[test]
fn top_level_await_and_tasks_that_outlive_their_input() {
    let mut p = start(&data_dir("await"));
    enter(&mut p, "await sleep(20); 6 * 7", "\r\n42\r\n");
    enter(&mut p, "const v = await Promise.resolve(\"resol\" + \"ved\")", "undefined");
    enter(&mut p, "v", "\r\nresolved\r\n");
    // A task started by one input prints after it ended.
    enter(&mut p, "async function later() { await sleep(50); console.log(\"la\" + \"ter\") }", "undefined");
    enter(&mut p, "later(); \"sta\" + \"rted\"", "started");
    p.expect("later").expect("the task's output");
    leave(p);
}

#[test]
fn errors_are_reported_and_the_session_goes_on() {
    let mut p = start(&data_dir("errors"));
    enter(&mut p, "let n = 1", "undefined");
    enter(&mut p, "throw new TypeError(\"bo\" + \"om\")", "Uncaught TypeError: boom");
    enter(&mut p, "n + 1", "\r\n2\r\n");
    enter(&mut p, "nope(1)", "cannot find name `nope`");
    enter(&mut p, "let s = \"abc", "unterminated string literal");
    enter(&mut p, "n + 2", "\r\n3\r\n");
    // A task that failed with nobody awaiting it is reported after the
    // next input.
    enter(&mut p, "async function fails() { throw new RangeError(\"ta\" + \"sk\") }", "undefined");
    enter(&mut p, "fails(); await sleep(20)", "Unhandled error in task \\d+: RangeError: task");
    leave(p);
}

#[test]
fn ctrl_c_interrupts_the_running_input() {
    let mut p = start(&data_dir("interrupt"));
    enter(&mut p, "let before = 5", "undefined");
    // The output proves the loop runs (and the terminal is out of raw
    // mode) before Ctrl-C is pressed.
    enter(&mut p, "console.log(\"spin\" + \"ning\"); while (true) {}", "spinning");
    p.send(ControlCode::EndOfText).unwrap();
    p.expect("Interrupted").expect("the input is interrupted");
    enter(&mut p, "before * 2", "\r\n10\r\n");
    leave(p);
}

#[test]
fn ctrl_c_twice_on_an_empty_line_leaves() {
    let mut p = start(&data_dir("ctrlc"));
    p.send(ControlCode::EndOfText).unwrap();
    p.expect("press Ctrl-C again").unwrap();
    p.expect("> ").expect("the prompt again (see `leave`)");
    p.send(ControlCode::EndOfText).unwrap();
    p.expect(Eof).expect("the REPL ends");
}

#[test]
fn exit_and_dot_commands() {
    let mut p = start(&data_dir("exit"));
    enter(&mut p, ".help", "interrupt the running input");
    enter(&mut p, "exit(3)", "");
    p.expect(Eof).expect("the REPL ends");
    let status = p.get_process_mut().wait().unwrap();
    assert_eq!(status, expectrl::process::unix::WaitStatus::Exited(p.get_process().pid(), 3));
}

#[test]
fn history_is_written_to_the_data_directory() {
    let data = data_dir("history");
    let mut p = start(&data);
    enter(&mut p, "let remembered = 1 + 1", "undefined");
    p.send_line("if (remembered) {").unwrap();
    p.expect("... ").unwrap();
    enter(&mut p, "}", "undefined");
    enter(&mut p, "21 * 2", "\r\n42\r\n");
    leave(p);
    let history = std::fs::read_to_string(data.join("raya").join("history")).expect("the history file");
    assert!(history.contains("let remembered = 1 + 1"), "{history}");
    assert!(history.contains("if (remembered) {"), "{history}");
    // The next session starts with it: Up recalls the last input.
    let mut p = start(&data);
    p.send("\x1b[A\r").unwrap();
    p.expect(Regex("\r\n42\r\n")).expect("the recalled input ran");
    leave(p);
}
