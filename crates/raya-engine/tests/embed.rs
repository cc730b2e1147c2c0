//! The embedding API (`raya_engine::embed`): every path, plus the
//! `embed` example built and run through Cargo.

mod common;

use common::{register_report, run};
use raya_engine::{Capability, ExternalPromise, HostError, HostValue, Vm};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

/// A VM with `report(v)`, which collects what the script reports.
fn vm_with_report() -> (Vm, Arc<Mutex<Vec<HostValue>>>) {
    let vm = Vm::builder().workers(2).build();
    let seen = register_report(&vm);
    (vm, seen)
}

#[test]
fn sync_host_fn_and_value_conversion() {
    let (vm, seen) = vm_with_report();
    vm.register_raw_fn("add", |args: &[HostValue]| {
        let a = args.first().and_then(HostValue::as_number).ok_or("add: expected numbers")?;
        let b = args.get(1).and_then(HostValue::as_number).ok_or("add: expected numbers")?;
        Ok(HostValue::Number(a + b))
    });
    vm.register_raw_fn("echo", |args: &[HostValue]| Ok(args.first().cloned().unwrap_or_default()));
    vm.register_raw_fn("make", |_: &[HostValue]| {
        Ok(HostValue::Object(vec![
            ("name".into(), "raya".into()),
            ("list".into(), HostValue::Array(vec![1.into(), true.into(), HostValue::Null])),
        ]))
    });
    let r = run(
        &vm,
        r#"
        report(add(2, 3));
        report(echo({ a: [1, "two", null, undefined], b: { c: false } }));
        const m = make();
        report(m.name + ":" + m.list.length + ":" + m.list[1]);
        try { add("x"); } catch (e) { report("caught " + e.message); }
        function add2(x: number): number { return add(x, 2); }
        report(add2(40));
        "#,
    );
    assert_eq!(r, Ok(HostValue::Undefined));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[0], HostValue::Number(5.0));
    assert_eq!(
        seen[1],
        HostValue::Object(vec![
            ("a".into(), HostValue::Array(vec![1.into(), "two".into(), HostValue::Null, HostValue::Undefined])),
            ("b".into(), HostValue::Object(vec![("c".into(), false.into())])),
        ])
    );
    assert_eq!(seen[2], HostValue::from("raya:3:true"));
    assert_eq!(seen[3], HostValue::from("caught add: expected numbers"));
    assert_eq!(seen[4], HostValue::Number(42.0));
}

#[test]
fn cycles_and_functions_do_not_cross() {
    let (vm, seen) = vm_with_report();
    let r = run(
        &vm,
        r#"
        const o: any = { x: 1 };
        o.self = o;
        try { report(o); } catch (e) { report("cycle: " + e.message); }
        try { report(() => 1); } catch (e) { report("fn: " + e.message); }
        "#,
    );
    assert_eq!(r, Ok(HostValue::Undefined));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(seen[0].as_str().unwrap().starts_with("cycle: "), "{seen:?}");
    assert!(seen[1].as_str().unwrap().starts_with("fn: "), "{seen:?}");
}

#[test]
fn script_shadowing_a_host_name_is_fine() {
    let (vm, seen) = vm_with_report();
    vm.register_raw_fn("twice", |_: &[HostValue]| Ok(HostValue::from("host")));
    let r = run(&vm, "function twice(x: number): number { return 2 * x; }\nreport(twice(4));");
    assert_eq!(r, Ok(HostValue::Undefined));
    assert_eq!(seen.lock().unwrap()[0], HostValue::Number(8.0));
}

#[test]
fn assigning_to_a_host_fn_is_a_compile_error() {
    let vm = Vm::builder().build();
    vm.register_raw_fn("add", |_: &[HostValue]| Ok(HostValue::Undefined));
    let e = vm.compile_source("assign.raya", "add = 5;\n").unwrap_err();
    assert!(e.render().contains("assign.raya"), "{}", e.render());
    // Unregistered names are still unknown.
    let e = vm.compile_source("unknown.raya", "nothere();\n").unwrap_err();
    assert!(e.render().contains("cannot find name `nothere`"), "{}", e.render());
}

#[test]
fn compile_errors_are_values() {
    let vm = Vm::builder().build();
    let e = vm.compile_source("bad.raya", "let x = ;\nreport(1);").unwrap_err();
    let text = e.render();
    assert!(text.contains("bad.raya"), "{text}");
    assert!(!e.diagnostics.is_empty());
}

#[test]
fn uncaught_error_and_exit_codes() {
    let (vm, _) = vm_with_report();
    match run(&vm, "function f() { throw new Error(\"boom\"); }\nf();") {
        Err(HostError::Uncaught(s)) => {
            assert!(s.stack.starts_with("Error: boom"), "{s}");
            assert!(s.stack.contains("at f"), "{s}");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(run(&vm, "exit(3);"), Err(HostError::Exit(3))));
    assert_eq!(run(&vm, "exit(0);"), Ok(HostValue::Undefined));
    assert!(matches!(run(&vm, "await new Promise<number>();"), Err(HostError::Deadlock)));
}

#[test]
fn host_fn_panics_and_errors_are_script_errors() {
    let (vm, seen) = vm_with_report();
    vm.register_raw_fn("fails", |_: &[HostValue]| Err("nope".into()));
    vm.register_raw_fn("panics", |_: &[HostValue]| panic!("host bug"));
    let r = run(
        &vm,
        r#"
        try { fails(); } catch (e) { report(e.message); }
        try { panics(); } catch (e) { report(e.message); }
        "#,
    );
    assert_eq!(r, Ok(HostValue::Undefined));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[0], HostValue::from("nope"));
    assert_eq!(seen[1], HostValue::from("host function `panics` panicked"));
}

#[test]
fn blocking_host_fn_does_not_stall_the_worker() {
    let (vm, seen) = vm_with_report();
    vm.register_blocking_fn("slowRead", |name: String| {
        std::thread::sleep(Duration::from_millis(150));
        if name == "missing" {
            return Err(format!("no such file: {name}"));
        }
        Ok(format!("contents of {name}"))
    });
    let r = run(
        &vm,
        r#"
        let ticks = 0;
        const ticker = async () => { for (let i = 0; i < 5; i++) { await sleep(10); ticks++; } };
        const t = ticker();
        const text = slowRead("a.txt");
        report(text);
        report(ticks);
        try { slowRead("missing"); } catch (e) { report(e.message); }
        await t;
        "#,
    );
    assert_eq!(r, Ok(HostValue::Undefined));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[0], HostValue::from("contents of a.txt"));
    // The ticker ran while the blocking call was in progress.
    assert_eq!(seen[1], HostValue::Number(5.0));
    assert_eq!(seen[2], HostValue::from("no such file: missing"));
}

/// How long a test waits for something that must happen; reaching it is
/// a failure, never a way to synchronise.
const LIMIT: Duration = Duration::from_secs(20);

/// A gate that host functions wait at until the test opens it.
#[derive(Default)]
struct Gate {
    open: Mutex<bool>,
    cv: Condvar,
}

impl Gate {
    fn wait(&self) {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.cv.wait(open).unwrap();
        }
    }

    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.cv.notify_all();
    }
}

#[test]
fn cancelling_a_blocking_call_releases_the_task_and_the_program_at_once() {
    let (vm, seen) = vm_with_report();
    let gate = Arc::new(Gate::default());
    let g = gate.clone();
    vm.register_blocking_fn("stuck", move || {
        g.wait();
        Ok::<_, String>("too late")
    });
    let started = Instant::now();
    let h = vm.execute_async(
        &vm.compile_source(
            "cancel.raya",
            r#"
        const t = (async () => {
          try { report(stuck()); } catch (e) { report(e.name); }
          await sleep(1); // cancellation is sticky: this throws too
        })();
        await sleep(20);
        t.cancel();
        try { await t; } catch (e) { report("awaited " + e.name); }
        report(t.isCancelled());
        "#,
        )
        .unwrap(),
    );
    // The job never returns until the gate opens, yet the program ends:
    // the cancelled wait let go of its keep-alive.
    let r = h.wait_timeout(LIMIT).expect("the program ends while the job is still stuck");
    assert_eq!(r, Ok(HostValue::Undefined));
    assert!(started.elapsed() < LIMIT);
    gate.open();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            HostValue::from("TaskCancelledError"),
            HostValue::from("awaited TaskCancelledError"),
            HostValue::Bool(true)
        ]
    );
}

#[test]
fn zero_workers_and_zero_blocking_threads_count_as_one() {
    let vm = Vm::builder().workers(0).blocking_threads(0).build();
    let seen = register_report(&vm);
    vm.register_blocking_fn("twice", |n: f64| Ok::<_, String>(n * 2.0));
    let src = "async function f(n: number): Task<number> { return twice(n); }\nreport(await [f(1), f(2)]);";
    assert_eq!(run(&vm, src), Ok(HostValue::Undefined));
    let results = vec![HostValue::Number(2.0), HostValue::Number(4.0)];
    assert_eq!(*seen.lock().unwrap(), vec![HostValue::Array(results)]);
}

#[test]
fn blocking_calls_beyond_the_pool_size_wait_their_turn_and_get_their_own_results() {
    let vm = Vm::builder().workers(1).blocking_threads(2).build();
    let seen = register_report(&vm);
    let gate = Arc::new(Gate::default());
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (started_tx, started_rx) = mpsc::channel();
    let (g, r, p) = (gate.clone(), running.clone(), peak.clone());
    vm.register_blocking_fn("work", move |i: f64| {
        let now = r.fetch_add(1, Ordering::SeqCst) + 1;
        p.fetch_max(now, Ordering::SeqCst);
        started_tx.send(i as usize).map_err(|e| e.to_string())?;
        g.wait();
        r.fetch_sub(1, Ordering::SeqCst);
        Ok::<_, String>(format!("result {i}"))
    });
    let program = vm
        .compile_source(
            "pool.raya",
            r#"
            async function call(i: number): Task<string> { return work(i); }
            const calls: Task<string>[] = [];
            for (let i = 0; i < 6; i++) calls.push(call(i));
            report(await calls);
            "#,
        )
        .unwrap();
    let h = vm.execute_async(&program);
    // Two calls hold the pool's two threads at the gate; the other four
    // are queued, their tasks suspended.
    let mut started: Vec<usize> = (0..2).map(|_| started_rx.recv_timeout(LIMIT).unwrap()).collect();
    assert_eq!(running.load(Ordering::SeqCst), 2);
    gate.open();
    assert_eq!(h.wait_timeout(LIMIT), Some(Ok(HostValue::Undefined)));
    started.extend(started_rx.try_iter());
    started.sort_unstable();
    assert_eq!(started, vec![0, 1, 2, 3, 4, 5], "each call ran exactly once");
    assert_eq!(peak.load(Ordering::SeqCst), 2, "more calls ran at once than the pool has threads");
    let results: Vec<HostValue> = (0..6).map(|i| HostValue::String(format!("result {i}"))).collect();
    assert_eq!(*seen.lock().unwrap(), vec![HostValue::Array(results)]);
}

#[test]
fn a_stuck_blocking_call_does_not_stall_the_only_worker() {
    let vm = Vm::builder().workers(1).blocking_threads(1).build();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (other_done_tx, other_done_rx) = mpsc::channel();
    let s = seen.clone();
    vm.register_raw_fn("report", move |args: &[HostValue]| {
        let v = args.first().cloned().unwrap_or_default();
        let other_done = v.as_str().is_some_and(|t| t.starts_with("other done"));
        // Recorded before the test hears of it.
        s.lock().unwrap().push(v);
        if other_done {
            other_done_tx.send(()).map_err(|e| e.to_string())?;
        }
        Ok(HostValue::Undefined)
    });
    // Whether `waitForHost` has been entered, and the promise of a
    // `whenStuck()` call that came before that.
    let entered: Arc<Mutex<(bool, Option<ExternalPromise>)>> = Arc::default();
    let (release_tx, release_rx) = mpsc::channel::<String>();
    let release_rx = Mutex::new(release_rx);
    let e = entered.clone();
    vm.register_blocking_fn("waitForHost", move || {
        let early = {
            let mut g = e.lock().unwrap();
            g.0 = true;
            g.1.take()
        };
        if let Some(p) = early {
            p.resolve(HostValue::Undefined).map_err(|e| e.to_string())?;
        }
        // Stuck until the test sends (or gives up and drops the sender).
        release_rx.lock().unwrap().recv().map(HostValue::String).map_err(|_| "released by no one".to_string())
    });
    let e = entered.clone();
    vm.register_async_fn("whenStuck", move |_, promise| {
        let mut g = e.lock().unwrap();
        if g.0 {
            drop(g);
            promise.resolve(HostValue::Undefined).unwrap();
        } else {
            g.1 = Some(promise);
        }
    });
    let program = vm
        .compile_source(
            "stuck.raya",
            r#"
            async function stuck(): Task<void> { report("got " + waitForHost()); }
            async function other(): Task<void> {
              await whenStuck();
              let sum = 0;
              for (let i = 0; i < 1000; i++) { sum += i; }
              report("other done " + sum);
            }
            await [stuck(), other()];
            "#,
        )
        .unwrap();
    let h = vm.execute_async(&program);
    // `other` starts its work only once the blocking call is in progress,
    // and the call cannot return before the test releases it below.
    other_done_rx.recv_timeout(LIMIT).expect("the worker was stalled by the blocking call");
    assert!(!h.is_finished());
    assert_eq!(*seen.lock().unwrap(), vec![HostValue::from("other done 499500")]);
    release_tx.send("released".into()).unwrap();
    // The completion value: what `await [..]` gave (two void results).
    let both = HostValue::Array(vec![HostValue::Undefined, HostValue::Undefined]);
    assert_eq!(h.wait_timeout(LIMIT), Some(Ok(both)));
    assert_eq!(*seen.lock().unwrap(), vec![HostValue::from("other done 499500"), HostValue::from("got released")]);
}

#[test]
fn async_host_fn_resolved_from_another_thread_is_not_a_deadlock() {
    let (vm, seen) = vm_with_report();
    vm.register_async_fn("fetch", |args, promise: ExternalPromise| {
        let url = args.first().and_then(HostValue::as_str).unwrap_or("").to_string();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            if url.starts_with("bad") {
                promise.reject(format!("cannot fetch {url}")).unwrap();
            } else {
                promise.resolve(HostValue::String(format!("body of {url}"))).unwrap();
            }
        });
    });
    let start = Instant::now();
    let r = run(
        &vm,
        r#"
        // Main is blocked on the external promise, with nothing else to run:
        // not a deadlock while the host holds the promise.
        report(await fetch("a"));
        try { await fetch("bad-url"); } catch (e) { report("caught " + e.message); }
        const both = await [fetch("x"), fetch("y")];
        report(both.join(","));
        "#,
    );
    assert_eq!(r, Ok(HostValue::Undefined));
    assert!(start.elapsed() >= Duration::from_millis(600));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![
            HostValue::from("body of a"),
            HostValue::from("caught cannot fetch bad-url"),
            HostValue::from("body of x,body of y"),
        ]
    );
}

#[test]
fn external_promise_settles_once() {
    let (vm, seen) = vm_with_report();
    let results = Arc::new(Mutex::new(Vec::new()));
    let rs = results.clone();
    vm.register_async_fn("twice", move |_, promise| {
        let rs = rs.clone();
        std::thread::spawn(move || {
            let first = promise.resolve(1);
            let second = promise.resolve(2);
            let third = promise.reject("late");
            rs.lock().unwrap().push((first.is_ok(), second, third, promise.is_settled()));
        });
    });
    // Settled synchronously, on the worker, inside the call.
    vm.register_async_fn("now", |args, promise| {
        promise.resolve(args.first().cloned().unwrap_or_default()).unwrap();
        assert!(matches!(promise.resolve(0), Err(HostError::AlreadySettled)));
    });
    // Dropped without settling: rejected.
    vm.register_async_fn("forget", |_, promise| drop(promise));
    let r = run(
        &vm,
        r#"
        report(await twice());
        report(await now("sync"));
        try { await forget(); } catch (e) { report(e.message); }
        "#,
    );
    assert_eq!(r, Ok(HostValue::Undefined));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[0], HostValue::Number(1.0));
    assert_eq!(seen[1], HostValue::from("sync"));
    assert_eq!(seen[2], HostValue::from("external promise dropped without being settled"));
    let results = results.lock().unwrap();
    let (first, second, third, settled) = &results[0];
    assert!(*first);
    assert!(matches!(second, Err(HostError::AlreadySettled)));
    assert!(matches!(third, Err(HostError::AlreadySettled)));
    assert!(*settled);
}

#[test]
fn pending_external_promise_keeps_the_program_alive_after_main() {
    let (vm, seen) = vm_with_report();
    vm.register_async_fn("later", |_, promise| {
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            promise.resolve("late").unwrap();
        });
    });
    let r = run(
        &vm,
        r#"
        const t = (async () => { report(await later()); })();
        report("main done");
        "#,
    );
    assert_eq!(r, Ok(HostValue::Undefined));
    assert_eq!(*seen.lock().unwrap(), vec![HostValue::from("main done"), HostValue::from("late")]);
}

#[test]
fn exit_with_a_pending_external_promise_ends_the_program() {
    let (vm, _) = vm_with_report();
    let settled = Arc::new(Mutex::new(None));
    let s = settled.clone();
    vm.register_async_fn("never", move |_, promise| {
        let s = s.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            // The program is gone: settling is harmless.
            *s.lock().unwrap() = Some(promise.resolve(1));
        });
    });
    let start = Instant::now();
    assert_eq!(run(&vm, "const p = never();\nexit(0);"), Ok(HostValue::Undefined));
    assert!(start.elapsed() < Duration::from_millis(300));
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(*settled.lock().unwrap(), Some(Ok(())));
}

#[test]
fn execute_async_wait_and_wait_timeout() {
    let (vm, seen) = vm_with_report();
    let program = vm.compile_source("t.raya", "await sleep(200);\nreport(\"done\");").unwrap();
    let h = vm.execute_async(&program);
    assert!(h.wait_timeout(Duration::from_millis(10)).is_none());
    assert!(!h.is_finished());
    assert_eq!(h.wait_timeout(Duration::from_secs(20)), Some(Ok(HostValue::Undefined)));
    assert!(h.is_finished());
    assert_eq!(h.wait(), Ok(HostValue::Undefined));
    assert_eq!(*seen.lock().unwrap(), vec![HostValue::from("done")]);

    // Two programs of one VM at the same time.
    let p2 = vm.compile_source("u.raya", "throw new Error(\"bad\");").unwrap();
    let a = vm.execute_async(&program);
    let b = vm.execute_async(&p2);
    assert!(matches!(b.wait(), Err(HostError::Uncaught(s)) if s.stack.starts_with("Error: bad")));
    assert_eq!(a.wait(), Ok(HostValue::Undefined));
}

/// A minimal executor: polls on every wake-up, parking in between.
fn block_on<F: Future>(fut: F) -> (F::Output, usize) {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut fut = Box::pin(fut);
    let mut polls = 0;
    loop {
        polls += 1;
        if let Poll::Ready(v) = Pin::as_mut(&mut fut).poll(&mut cx) {
            return (v, polls);
        }
        std::thread::park_timeout(Duration::from_secs(5));
    }
}

#[test]
fn exec_handle_is_a_future() {
    let (vm, seen) = vm_with_report();
    vm.register_async_fn("tick", |_, p| {
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            p.resolve(7).unwrap();
        });
    });
    let program = vm.compile_source("f.raya", "report(await tick());").unwrap();
    let (r, polls) = block_on(vm.execute_async(&program));
    assert_eq!(r, Ok(HostValue::Undefined));
    assert!(polls >= 2, "first poll is pending");
    assert_eq!(*seen.lock().unwrap(), vec![HostValue::Number(7.0)]);
    let (r, _) = block_on(async { vm.execute_async(&program).await });
    assert_eq!(r, Ok(HostValue::Undefined));
}

#[test]
fn compile_file_sees_host_fns_in_every_module() {
    let dir = std::env::temp_dir().join(format!("raya-embed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("lib.raya"), "export function double(x: number): number { return twice(x); }\n").unwrap();
    std::fs::write(dir.join("main.raya"), "import { double } from \"./lib.raya\";\nreport(double(21));\n").unwrap();
    let (vm, seen) = vm_with_report();
    vm.register_raw_fn("twice", |a: &[HostValue]| Ok(HostValue::Number(a[0].as_number().unwrap() * 2.0)));
    let program = vm.compile_file(dir.join("main.raya")).unwrap();
    assert_eq!(vm.execute(&program), Ok(HostValue::Undefined));
    assert_eq!(*seen.lock().unwrap(), vec![HostValue::Number(42.0)]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn built_in_modules_need_their_capability() {
    let src = r#"import { exists } from "std:fs"; report(exists("."));"#;
    // Not granted (the default): a compile error naming the capability, at
    // the import's source string.
    let (vm, _) = vm_with_report();
    let err = vm.compile_source("caps.raya", src).expect_err("std:fs is not granted");
    let text = err.render();
    assert!(text.contains("module `std:fs` is not available: the host did not grant the `fs` capability"), "{text}");
    assert!(text.contains("caps.raya:1:24"), "{text}");
    // Granting one capability grants only that one.
    let fs_only = Vm::builder().workers(1).allow(Capability::Fs).build();
    let err = fs_only.compile_source("p.raya", r#"import { run } from "std:process";"#).expect_err("not granted");
    assert!(
        err.render().contains("module `std:process` is not available: the host did not grant the `process` capability"),
        "{}",
        err.render()
    );
    // Granted: the import works.
    let vm = Vm::builder().workers(1).allow(Capability::Fs).build();
    let seen = register_report(&vm);
    run(&vm, src).expect("runs");
    assert_eq!(*seen.lock().unwrap(), vec![HostValue::Bool(true)]);
    // A program compiled with more capabilities than the VM that runs it
    // allows does not run at all.
    let program = raya_engine::compiler::compile_source("caps.raya", "import { exists } from 'std:fs'; exists('.');")
        .expect("the compiler alone grants everything");
    let strict = Vm::builder().workers(1).build();
    assert_eq!(
        strict.execute(&program),
        Err(HostError::Capability("the program imports `std:fs`, which this VM does not allow".into()))
    );
    assert!(Vm::builder().allow_all().build().execute(&program).is_ok());
}

/// The example's code, compiled into this test too.
#[allow(dead_code)]
#[path = "../examples/embed.rs"]
mod example;

#[test]
fn the_embed_example_runs() {
    let lines = example::run().expect("the example's script runs");
    assert_eq!(
        lines,
        vec![
            "weather in Lisbon: sunny, 21",
            "weather in Oslo: snow, -3",
            "error: unknown city Atlantis",
            "working directory exists: true"
        ]
    );
    // `cargo test` builds the examples next to the test binaries: run the
    // real one when it is there (a `cargo test --test embed` run skips it).
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(|d| d.parent()).unwrap().join("examples");
    let bin = dir.join(format!("embed{}", std::env::consts::EXE_SUFFIX));
    if !bin.exists() {
        eprintln!("note: {} not built; skipped running it", bin.display());
        return;
    }
    let out = std::process::Command::new(&bin).output().expect("run the embed example");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("[host] weather in Lisbon: sunny, 21"), "{stdout}");
    assert!(stdout.contains("average: 9"), "{stdout}");
    assert!(stdout.contains("script finished (4 host log lines)"), "{stdout}");
}

#[test]
fn max_heap_makes_a_runaway_script_a_range_error() {
    let vm = Vm::builder().workers(2).max_heap(32 << 20).build();
    let seen = register_report(&vm);
    // Caught: the script reports the message and goes on.
    let caught = "let a: number[] = [];\n\
                  try { while (true) a.push(1); } catch (e) { report((e as Error).message); }\n\
                  a = [];\n\
                  report(\"after\");";
    assert_eq!(run(&vm, caught), Ok(HostValue::Undefined));
    assert_eq!(
        *seen.lock().unwrap(),
        vec![HostValue::from("out of memory: heap limit 32 MB reached"), HostValue::from("after")]
    );
    // Uncaught: the run ends with the RangeError, the host goes on.
    match run(&vm, "const a: string[] = [];\nwhile (true) a.push(\"x\" + a.length);") {
        Err(HostError::Uncaught(s)) => {
            assert!(s.stack.starts_with("RangeError: out of memory: heap limit 32 MB reached"), "{s}")
        }
        other => panic!("{other:?}"),
    }
    // The same VM without a limit would run the first script forever; a
    // script under the limit is unaffected.
    let fine = "let n = 0;\nfor (let i = 0; i < 100; i++) { const b: number[] = []; for (let j = 0; j < 10000; j++) b.push(j); n += b.length; }\nreport(n);";
    assert_eq!(run(&vm, fine), Ok(HostValue::Undefined));
    assert_eq!(seen.lock().unwrap().last(), Some(&HostValue::Number(1e6)));
}

#[test]
fn gc_percent_off_still_runs_garbage_heavy_scripts_under_a_limit() {
    let vm = Vm::builder().workers(1).gc_percent(None).max_heap(24 << 20).build();
    let seen = register_report(&vm);
    let src = "let n = 0;\nfor (let i = 0; i < 300; i++) { const b: number[] = []; for (let j = 0; j < 20000; j++) b.push(j); n += b.length; }\nreport(n);";
    assert_eq!(run(&vm, src), Ok(HostValue::Undefined));
    assert_eq!(seen.lock().unwrap()[0], HostValue::Number(6e6));
}
