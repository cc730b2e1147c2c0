//! Times the embedding's start-up paths, for profiling: `create N`
//! creates a VM and runs hello world N times; `eval N` evaluates `1 + 1`
//! N times on one loaded instance.

use raya_engine::{Stream, Vm};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let what = args.get(1).map_or("create", String::as_str);
    let n: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100);
    let t = Instant::now();
    match what {
        "eval" => {
            let vm = Vm::builder().workers(1).output(|_: Stream, _: &str| {}).build();
            let inst = vm.load(&vm.compile_source("b.raya", "export const x = 1;").unwrap()).unwrap();
            let t = Instant::now();
            for _ in 0..n {
                assert_eq!(inst.eval::<f64>("1 + 1").unwrap(), 2.0);
            }
            println!("eval: {:?} per call", t.elapsed() / n);
        }
        _ => {
            for _ in 0..n {
                let vm = Vm::builder().workers(1).output(|_: Stream, _: &str| {}).build();
                let p = vm.compile_source("hello.raya", "console.log(\"hello, world\");").unwrap();
                vm.execute(&p).unwrap();
            }
            println!("create+hello: {:?} per run", t.elapsed() / n);
        }
    }
}
