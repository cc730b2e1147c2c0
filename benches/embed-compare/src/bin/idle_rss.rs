//! Resident memory of an idle VM with one loaded instance: the process's
//! RSS before making the VM and after loading (workers parked).

use raya_engine::Vm;
use std::time::Duration;

fn rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn main() {
    let before = rss_kb();
    let vm = Vm::builder().workers(1).build();
    let p =
        vm.compile_source("app.raya", "export function add(a: number, b: number): number { return a + b; }").unwrap();
    let inst = vm.load(&p).unwrap();
    assert_eq!(inst.call::<f64>("add", (1, 2)), Ok(3.0));
    std::thread::sleep(Duration::from_millis(200));
    let after = rss_kb();
    println!("process RSS: {before} kB before, {after} kB with an idle VM and one instance (+{} kB)", after - before);
}
