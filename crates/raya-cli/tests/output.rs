//! Output reaches the operating system while the program runs, not only at
//! its end (a server's log, a long computation's progress), and output to
//! a closed pipe ends the program quietly with exit code 0.
//!
//! Each test starts `raya run` on a program that never ends by itself and
//! reads its stdout through a pipe: the line must arrive while the program
//! is still running. The deadlines are generous (debug builds on a loaded
//! machine); what is tested is *that* the line arrives before the program
//! ends, not how fast.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a line may take to arrive: far below the programs' own run
/// times (they sleep or loop for minutes), far above any flush delay.
const DEADLINE: Duration = Duration::from_secs(15);

fn raya_bin() -> PathBuf {
    match std::env::var_os("RAYA_E2E_BIN") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_BIN_EXE_raya")),
    }
}

fn program(name: &str, src: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("output");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.raya"));
    std::fs::write(&path, src).unwrap();
    path
}

fn start(file: &Path, workers: usize) -> Child {
    Command::new(raya_bin())
        .args(["run", "--workers", &workers.to_string()])
        .arg(file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start raya")
}

/// The first line of the child's stdout, if it arrives within `DEADLINE`.
/// The child is killed afterwards either way.
fn first_line(mut child: Child) -> Option<String> {
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let got = rx.recv_timeout(DEADLINE).ok();
    let still_running = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let _ = child.wait();
    assert!(still_running, "the program ended on its own; the test proves nothing");
    got
}

#[test]
fn output_reaches_the_os_while_the_task_sleeps() {
    let file = program("log_then_sleep", "console.log(\"start\");\nsleep(600000);\n");
    for workers in [1, 2] {
        let line = first_line(start(&file, workers));
        assert_eq!(line.as_deref(), Some("start\n"), "--workers {workers}");
    }
}

#[test]
fn output_reaches_the_os_while_the_task_computes() {
    let file = program("log_then_compute", "console.log(\"start\");\nlet x = 0;\nfor (;;) x = (x + 1) % 7;\n");
    for workers in [1, 2] {
        let line = first_line(start(&file, workers));
        assert_eq!(line.as_deref(), Some("start\n"), "--workers {workers}");
    }
}

#[test]
fn output_of_a_task_waiting_on_a_channel_reaches_the_os() {
    // A server's shape: a task logs, then waits for work that comes only
    // after ten minutes (so this is no deadlock).
    let src = "const work = new Channel<number>();\n\
               (async () => { console.log(\"ready\"); work.receive(); })();\n\
               sleep(600000);\n\
               work.send(1);\n";
    let file = program("log_then_receive", src);
    for workers in [1, 2] {
        let line = first_line(start(&file, workers));
        assert_eq!(line.as_deref(), Some("ready\n"), "--workers {workers}");
    }
}

#[test]
fn a_closed_stdout_pipe_ends_the_program_quietly_with_code_0() {
    // An endless printer whose reader takes one line and leaves, as
    // `raya run x.raya | head -1` does.
    let file = program("endless_printer", "for (let i = 0; ; i++) console.log(\"line\", i);\n");
    for workers in [1, 2] {
        let mut child = start(&file, workers);
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        assert_eq!(line, "line 0\n");
        drop(stdout);
        let began = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break Some(s);
            }
            if began.elapsed() > DEADLINE {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let mut stderr = String::new();
        child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
        let status = status.unwrap_or_else(|| panic!("--workers {workers}: still printing after its reader left"));
        assert_eq!(status.code(), Some(0), "--workers {workers}; stderr: {stderr}");
        assert_eq!(stderr, "", "--workers {workers}: ends quietly");
    }
}
