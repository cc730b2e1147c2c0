//! What an idle `Vm` costs: the resident memory of this process before and
//! after building VMs that run nothing (no program loaded, no script
//! evaluated), or, with `instance`, before and after one VM with one
//! loaded instance whose workers have gone idle (the figure of
//! `benches/embed-compare`'s `idle_rss`, without building the other
//! engines). Prints the figures; nothing is asserted (a measure, not a
//! test; the numbers are recorded in `design/memory.md`).
//!
//! Run it with `cargo run --release -p raya-engine --example idle_vm [N]`
//! (N VMs, default 100) or `... --example idle_vm instance`.

use raya_engine::Vm;
use std::time::Duration;

/// Resident set size now, in KiB (Linux; 0 elsewhere).
fn rss_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    pages * 4
}

fn main() {
    let arg = std::env::args().nth(1);
    if arg.as_deref() == Some("instance") {
        return instance();
    }
    let n: usize = arg.and_then(|a| a.parse().ok()).unwrap_or(100);
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

/// One VM (one worker), one loaded instance, one call, then idle.
fn instance() {
    let before = rss_kib();
    let vm = Vm::builder().workers(1).build();
    let p =
        vm.compile_source("app.raya", "export function add(a: number, b: number): number { return a + b; }").unwrap();
    let inst = vm.load(&p).unwrap();
    assert_eq!(inst.call::<f64>("add", (1, 2)), Ok(3.0));
    std::thread::sleep(Duration::from_millis(200));
    let after = rss_kib();
    println!(
        "process before the VM: {before} KiB; with an idle VM and one instance: {after} KiB (+{} KiB)",
        after - before
    );
    drop(inst);
    drop(vm);
}
