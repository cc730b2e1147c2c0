//! What `raya` costs at rest: the peak resident memory of hello world.
//!
//! Ignored by default: it measures the release binary, built as users
//! build it (a test build of the binary enables the engine's optional
//! features, which renames every function and so defeats the start-up
//! layout of `startup.order`). Run it with
//!
//! ```sh
//! cargo build --release -p raya-cli
//! cargo test -p raya-cli --test idle_memory -- --ignored --nocapture
//! ```
//!
//! (`RAYA_BIN` names another binary to measure.)
//!
//! The figure is the median of several runs' peak RSS (`wait4`'s
//! `ru_maxrss`): one run varies by a few hundred KiB with which worker
//! thread runs what. Where the memory goes, and what to do when this
//! fails, is in design/memory.md ("Idle memory").

use std::path::PathBuf;
use std::process::{Command, Stdio};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// The binary to measure: `RAYA_BIN`, or the release build.
fn binary() -> PathBuf {
    let bin =
        std::env::var_os("RAYA_BIN").map_or_else(|| PathBuf::from(ROOT).join("target/release/raya"), PathBuf::from);
    assert!(bin.exists(), "no {}: build it first with `cargo build --release -p raya-cli`", bin.display());
    bin
}

/// The peak RSS, in KiB, of one `raya ARGS` run to its end.
// The child is reaped by `wait4`, which also gives its resource usage.
#[allow(clippy::zombie_processes)]
fn peak_rss_kib(args: &[&str]) -> u64 {
    let child = Command::new(binary()).args(args).current_dir(ROOT).stdout(Stdio::null()).spawn().expect("raya starts");
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pid is our own child, not yet waited for; both pointers
    // are to live locals.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t, "wait4 failed");
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "raya {args:?} failed: {status}");
    usage.ru_maxrss as u64
}

fn median_peak_rss_kib(args: &[&str]) -> u64 {
    let mut runs: Vec<u64> = (0..11).map(|_| peak_rss_kib(args)).collect();
    runs.sort_unstable();
    eprintln!("raya {}: peak RSS of 11 runs, KiB: {runs:?}", args.join(" "));
    runs[runs.len() / 2]
}

/// `raya run` of hello world stays under 5 MiB (the memory issue's
/// target; 9 MiB before the prelude was compiled ahead of time and the
/// start-up code laid out together).
#[test]
#[ignore = "measures target/release/raya: cargo build --release -p raya-cli first, then run this test without --release"]
fn hello_world_runs_in_under_5_mib() {
    let kib = median_peak_rss_kib(&["run", "examples/hello.raya"]);
    assert!(
        kib < 5 * 1024,
        "hello world's peak RSS is {kib} KiB; if the start-up code moved, regenerate crates/raya-cli/startup.order \
         (crates/raya-cli/startup-order.py)"
    );
}
