//! What the command-line tests share: running a process with a time
//! limit and collecting its output. Each test crate uses part of it.
#![allow(dead_code)]

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct Outcome {
    /// `exit: …` value: the exit code, or `signal N`.
    pub exit: String,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
    /// The time limit that applied (for messages).
    pub limit: Duration,
}

/// Runs `cmd` with `stdin`, killing it after `limit`.
pub fn run_with_input(mut cmd: Command, stdin: Stdio, limit: Duration) -> Outcome {
    cmd.stdin(stdin).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err.read_to_end(&mut buf);
        buf
    });
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            timed_out = true;
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    // A grandchild could keep the pipes open; do not wait for it forever.
    let stdout = join_reader(out_reader, timed_out);
    let stderr = join_reader(err_reader, timed_out);
    let code = status.code();
    let exit = match code {
        Some(c) => c.to_string(),
        None => {
            #[cfg(unix)]
            {
                use std::os::unix::process::ExitStatusExt;
                format!("signal {}", status.signal().unwrap_or(0))
            }
            #[cfg(not(unix))]
            {
                "unknown".to_string()
            }
        }
    };
    Outcome { exit, code, stdout, stderr, timed_out, limit }
}

fn join_reader(h: std::thread::JoinHandle<Vec<u8>>, timed_out: bool) -> String {
    if timed_out {
        let deadline = Instant::now() + Duration::from_secs(2);
        while !h.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        if !h.is_finished() {
            return String::from("<output not collected: pipe still open>");
        }
    }
    String::from_utf8_lossy(&h.join().unwrap()).into_owned()
}
