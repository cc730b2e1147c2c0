//! A fixed number of embedding calls, for instruction counts under
//! `valgrind --tool=callgrind` (deterministic whatever the machine's
//! load): `call_loop rust N` makes N `Instance::call("add", (1, 2))`,
//! `call_loop function N` N calls of the same through a `Function`
//! handle resolved once, `call_loop script N` one call of a script loop
//! making N typed host calls. The cost per call is the difference between two values of N,
//! divided by their difference.

use raya_engine::{Stream, Vm};

fn main() {
    let mut args = std::env::args().skip(1);
    let what = args.next().unwrap_or_else(|| "rust".into());
    let n: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let vm = Vm::builder().workers(1).output(|_: Stream, _: &str| {}).build();
    vm.register_fn("hostAdd", |a: f64, b: f64| Ok::<_, String>(a + b));
    let p = vm
        .compile_source(
            "b.raya",
            "export function add(a: number, b: number): number { return a + b; }\n\
             export function run(n: number): number { let s = 0; for (let i = 0; i < n; i++) s = hostAdd(s, i); return s; }",
        )
        .unwrap();
    let inst = vm.load(&p).unwrap();
    // One call first, so both runs pay the same one-time costs.
    assert_eq!(inst.call::<f64>("add", (1.0, 2.0)).unwrap(), 3.0);
    assert_eq!(inst.call::<f64>("run", (1.0,)).unwrap(), 0.0);
    match what.as_str() {
        "rust" => {
            for _ in 0..n {
                assert_eq!(inst.call::<f64>("add", (1.0, 2.0)).unwrap(), 3.0);
            }
        }
        "function" => {
            let add = inst.function("add").unwrap();
            for _ in 0..n {
                assert_eq!(add.call::<f64>((1.0, 2.0)).unwrap(), 3.0);
            }
        }
        _ => {
            let s = inst.call::<f64>("run", (n as f64,)).unwrap();
            assert_eq!(s, (n * n.saturating_sub(1) / 2) as f64);
        }
    }
}
