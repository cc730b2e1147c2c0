//! What an idle `Vm` costs: the resident memory of this process before and
//! after building VMs that run nothing (no program loaded, no script
//! evaluated). Prints the figures; nothing is asserted (a measure, not a
//! test; the numbers are recorded in `design/memory.md`).
//!
//! Run it with `cargo run --release -p raya-engine --example idle_vm [N]`
//! (N VMs, default 100).

use raya_engine::Vm;

/// Resident set size now, in KiB (Linux; 0 elsewhere).
fn rss_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    pages * 4
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100);
    let before = rss_kib();
    let first = Vm::builder().build();
    let one = rss_kib();
    let mut vms = vec![first];
    for _ in 1..n {
        vms.push(Vm::builder().build());
    }
    let all = rss_kib();
    println!("process before any VM: {before} KiB");
    println!("first VM: +{} KiB", one.saturating_sub(before));
    if n > 1 {
        println!("each further VM (mean of {}): +{} KiB", n - 1, all.saturating_sub(one) / (n as u64 - 1));
    }
    drop(vms);
}
