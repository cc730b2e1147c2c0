//! The soak test: `tests/soak/churn.raya` (task churn, channel traffic,
//! allocation) runs on 2 workers for 10 minutes while its RSS is sampled;
//! RSS must stay flat. Long, so ignored by default:
//!
//! ```sh
//! cargo test -p raya-cli --test soak -- --ignored --nocapture
//! RAYA_SOAK_SECS=60 cargo test -p raya-cli --test soak -- --ignored --nocapture
//! ```
//!
//! The curve (seconds, RSS in KiB) goes to stderr; `design/memory.md`
//! records one run.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The resident set of process `pid`, in KiB (Linux).
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
#[ignore = "runs for 10 minutes (RAYA_SOAK_SECS sets the length)"]
fn rss_stays_flat_under_task_churn_channels_and_allocation() {
    let secs: u64 = std::env::var("RAYA_SOAK_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(600);
    assert!(secs >= 30, "RAYA_SOAK_SECS: at least 30 seconds, to leave a warm-up");
    let program = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/soak/churn.raya");
    let mut child = Command::new(env!("CARGO_BIN_EXE_raya"))
        .args(["run", "--workers", "2", program, &secs.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("raya starts");
    let every = Duration::from_secs((secs / 60).max(1));
    let start = Instant::now();
    let mut curve: Vec<(u64, u64)> = Vec::new();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if let Some(kib) = rss_kib(child.id()) {
            curve.push((start.elapsed().as_secs(), kib));
            eprintln!("{:>5} s {:>8} KiB", start.elapsed().as_secs(), kib);
        }
        if start.elapsed() > Duration::from_secs(secs * 3 + 60) {
            let _ = child.kill();
            panic!("the soak program did not end");
        }
        std::thread::sleep(every);
    };
    let mut out = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
    assert!(status.success(), "the soak program failed: {status}");
    assert!(out.ends_with(" rounds\n"), "it ran to the end: {out:?}");

    // Flat: after a warm-up of a tenth of the run, the highest RSS of the
    // last third is within 25% (and 4 MiB) of the highest of the first
    // third. A leak of a few bytes per task, message or round grows past
    // that over thousands of rounds.
    let warm = secs / 10;
    let rest = secs - warm;
    let peak = |from: u64, to: u64| curve.iter().filter(|(t, _)| (from..to).contains(t)).map(|&(_, k)| k).max();
    let early = peak(warm, warm + rest / 3).expect("samples early in the run");
    let late = peak(secs - rest / 3, u64::MAX).expect("samples late in the run");
    eprintln!("{out}peak RSS: {early} KiB early, {late} KiB late");
    assert!(late <= early + early / 4 + 4096, "RSS grew from {early} KiB to {late} KiB");
}
