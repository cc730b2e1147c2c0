//! Stall warnings for an embedder: a host function registered with
//! `register_fn` that blocks holds its worker, and the warning, on the
//! VM's stderr, names the task and its stack as it is inside the call.
//! (Its own test binary: the threshold is read from the environment.)

use raya_engine::{Stream, Vm};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[test]
fn a_blocking_host_function_is_reported_with_the_stack_that_called_it() {
    // The only test of this binary: no other reads the environment.
    std::env::set_var("RAYA_STALL_MS", "40");
    let err = Arc::new(Mutex::new(String::new()));
    let e = err.clone();
    let out = Arc::new(Mutex::new(String::new()));
    let o = out.clone();
    let vm = Vm::builder()
        .workers(2)
        .output(move |stream: Stream, text: &str| match stream {
            Stream::Stderr => e.lock().unwrap().push_str(text),
            Stream::Stdout => o.lock().unwrap().push_str(text),
        })
        .build();
    vm.register_fn("fetchBlocking", || {
        std::thread::sleep(Duration::from_millis(400));
        Ok::<_, String>(41.0)
    });
    let program = vm
        .compile_source(
            "host.raya",
            "function load(): number {\n  return fetchBlocking();\n}\n\
             function handle(): number {\n  return load() + 1;\n}\n\
             console.log(handle());\n",
        )
        .unwrap();
    vm.execute(&program).unwrap();
    assert_eq!(*out.lock().unwrap(), "42\n");
    let err = err.lock().unwrap().clone();
    let report = err.split("raya: stall: worker ").nth(1).unwrap_or_else(|| panic!("a stall report: {err:?}"));
    let mut lines = report.lines();
    let first = lines.next().unwrap();
    assert!(first.contains(" has been running task "), "{err}");
    assert!(first.ends_with(", inside a native call at:"), "{err}");
    assert_eq!(lines.next(), Some("    at load (host.raya:2:10)"), "{err}");
    assert_eq!(lines.next(), Some("    at handle (host.raya:5:10)"), "{err}");
    assert_eq!(lines.next(), Some("    at <main> (host.raya:7:13)"), "{err}");
}
