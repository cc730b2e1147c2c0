//! Loaded programs (`Vm::load`): calls from Rust, exports, completion
//! values, cancellation and limits, structured errors and routed output.

use raya_engine::{HostError, HostValue, Limits, LoadOptions, Stream, Vm};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod common;
use common::load;

#[test]
fn execute_and_eval_return_the_completion_value() {
    let vm = Vm::builder().workers(1).build();
    let p = vm.compile_source("c.raya", "let x = 40;\n1 + 41;").unwrap();
    assert_eq!(vm.execute(&p), Ok(HostValue::Number(42.0)));
    // The last expression statement run; declarations after it add none.
    let p = vm.compile_source("c.raya", "\"a\" + \"b\";\nconst y = 3;").unwrap();
    assert_eq!(vm.execute(&p), Ok(HostValue::from("ab")));
    let p = vm.compile_source("c.raya", "export const result = 42;").unwrap();
    assert_eq!(vm.execute(&p), Ok(HostValue::Undefined));
    assert_eq!(vm.eval::<f64>("1 + 1"), Ok(2.0));
    assert_eq!(vm.eval::<Vec<String>>("[1, 2].map((n) => `n${n}`)"), Ok(vec!["n1".to_string(), "n2".to_string()]));
    // Async work at the top level is awaited before the value is taken.
    assert_eq!(vm.eval::<f64>("await sleep(1); 7"), Ok(7.0));
    // A value that cannot cross is undefined, not an error.
    assert_eq!(vm.eval::<HostValue>("() => 1"), Ok(HostValue::Undefined));
    assert!(matches!(vm.eval::<f64>("\"x\""), Err(HostError::Conversion(m)) if m == "expected a number, got a string"));
}

#[test]
fn state_lives_between_calls_and_exports_are_read_and_written() {
    let vm = Vm::builder().workers(2).build();
    let inst = load(
        &vm,
        r#"
        export let counter = 0;
        export const name = "app";
        export function bump(by: number): number { counter += by; return counter; }
        export async function later(x: number): Task<string> { await sleep(5); return "later " + x; }
        export function pair(a: string, b: number[]): [string, number] { return [a, b.length]; }
        const hidden = 1;
        "#,
    );
    assert_eq!(inst.exports().collect::<Vec<_>>(), vec!["bump", "counter", "later", "name", "pair"]);
    assert_eq!(inst.call::<f64>("bump", (2,)), Ok(2.0));
    assert_eq!(inst.call::<f64>("bump", (3,)), Ok(5.0));
    assert_eq!(inst.get::<f64>("counter"), Ok(5.0));
    inst.set("counter", 100).unwrap();
    assert_eq!(inst.call::<i32>("bump", (1,)), Ok(101));
    assert_eq!(inst.get::<String>("name"), Ok("app".to_string()));
    assert_eq!(inst.call::<String>("later", (4,)), Ok("later 4".to_string()));
    assert_eq!(inst.call::<(String, u32)>("pair", ("x", vec![1, 2, 3])), Ok(("x".to_string(), 3)));
    // Not exported, or not a function.
    assert_eq!(inst.get::<f64>("hidden"), Err(HostError::Export("the program exports no `hidden`".into())));
    assert_eq!(inst.call::<()>("name", ()), Err(HostError::Export("export `name` is not a function".into())));
    // A result of the wrong type is a conversion error, not a panic.
    assert!(matches!(inst.call::<bool>("bump", (0,)), Err(HostError::Conversion(_))));
}

#[test]
fn concurrent_calls_from_eight_threads_share_state_under_a_script_mutex() {
    let vm = Vm::builder().workers(4).build();
    let inst = load(
        &vm,
        r#"
        const m = new Mutex();
        let total = 0;
        let inside = 0;
        let maxInside = 0;
        export async function add(n: number): Task<number> {
          await m.lock();
          try {
            inside++;
            if (inside > maxInside) maxInside = inside;
            const t = total;
            await Task.yield();
            total = t + n;
            inside--;
            return total;
          } finally {
            m.unlock();
          }
        }
        export function stats(): number[] { return [total, maxInside]; }
        "#,
    );
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let inst = inst.clone();
            std::thread::spawn(move || {
                for _ in 0..50 {
                    inst.call::<f64>("add", (1,)).expect("call");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // No lost update despite the yield inside the critical section, and
    // never two tasks inside it.
    assert_eq!(inst.call::<Vec<f64>>("stats", ()), Ok(vec![400.0, 1.0]));
}

#[test]
fn calls_run_in_parallel_on_the_workers() {
    let vm = Vm::builder().workers(2).build();
    let inst = load(&vm, "export async function nap(ms: number): Task<number> { await sleep(ms); return ms; }");
    let start = Instant::now();
    let calls: Vec<_> = (0..20).map(|_| inst.call_async("nap", (200,))).collect();
    for c in calls {
        assert_eq!(c.wait(), Ok(HostValue::Number(200.0)));
    }
    // Twenty 200 ms sleeps overlapped.
    assert!(start.elapsed() < Duration::from_millis(2000), "{:?}", start.elapsed());
}

#[test]
fn cancelling_a_busy_loop_stops_it() {
    let vm = Vm::builder().workers(1).build();
    let inst = load(
        &vm,
        r#"
        export function spin(): number { let i = 0; while (true) { i++; } return i; }
        export function stubborn(): number {
          let caught = 0;
          while (true) { try { while (true) {} } catch (e) { caught++; } }
          return caught;
        }
        export function ping(): string { return "pong"; }
        "#,
    );
    let call = inst.call_async("spin", ());
    assert!(call.wait_timeout(Duration::from_millis(100)).is_none(), "still spinning");
    let at = Instant::now();
    call.cancel();
    let r = call.wait_timeout(Duration::from_secs(10)).expect("stopped");
    let delay = at.elapsed();
    assert_eq!(r, Err(HostError::Cancelled("cancelled by the host".into())));
    eprintln!("cancelling a busy loop took {delay:?}");
    assert!(delay < Duration::from_secs(1), "{delay:?}");
    // A loop that catches the TaskCancelledError is ended anyway.
    let call = inst.call_async("stubborn", ());
    std::thread::sleep(Duration::from_millis(50));
    call.cancel();
    assert_eq!(
        call.wait_timeout(Duration::from_secs(10)),
        Some(Err(HostError::Cancelled("cancelled by the host".into())))
    );
    // The instance goes on serving.
    assert_eq!(inst.call::<String>("ping", ()), Ok("pong".into()));
}

#[test]
fn cancelling_a_suspended_call_wakes_it_with_task_cancelled_error() {
    let vm = Vm::builder().workers(1).build();
    let inst = load(
        &vm,
        r#"
        export let cleanedUp = false;
        export async function wait(): Task<void> {
          try { await sleep(60000); } finally { cleanedUp = true; }
        }
        "#,
    );
    let call = inst.call_async("wait", ());
    std::thread::sleep(Duration::from_millis(50));
    call.cancel();
    assert_eq!(
        call.wait_timeout(Duration::from_secs(10)),
        Some(Err(HostError::Cancelled("cancelled by the host".into())))
    );
    assert_eq!(inst.get::<bool>("cleanedUp"), Ok(true));
}

#[test]
fn limits_stop_runaway_calls_and_programs() {
    let vm = Vm::builder().workers(1).build();
    let inst = load(
        &vm,
        r#"
        export function spin(): void { while (true) {} }
        export async function nap(): Task<void> { await sleep(60000); }
        export function quick(n: number): number { let s = 0; for (let i = 0; i < n; i++) s += i; return s; }
        "#,
    );
    let start = Instant::now();
    let r = inst.call_with("spin", (), Limits::none().time(Duration::from_millis(100))).wait();
    assert_eq!(r, Err(HostError::Cancelled("time limit of 100ms reached".into())));
    assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
    // A suspended call is stopped by its time limit too.
    let r = inst.call_with("nap", (), Limits::none().time(Duration::from_millis(50))).wait();
    assert_eq!(r, Err(HostError::Cancelled("time limit of 50ms reached".into())));
    let r = inst.call_with("spin", (), Limits::none().instructions(100_000)).wait();
    assert_eq!(r, Err(HostError::Cancelled("instruction budget exhausted".into())));
    // Under the budget: unaffected.
    assert_eq!(inst.call_with("quick", (100,), Limits::none().instructions(100_000)).wait(), Ok(4950.0.into()));

    // The VM's limits apply to `execute`.
    let limited = Vm::builder().workers(1).limits(Limits::none().time(Duration::from_millis(100))).build();
    let p = limited.compile_source("spin.raya", "while (true) {}").unwrap();
    assert_eq!(limited.execute(&p), Err(HostError::Cancelled("time limit of 100ms reached".into())));
}

#[test]
fn the_interrupt_callback_stops_computing_scripts() {
    let stop = Arc::new(AtomicBool::new(false));
    let polls = Arc::new(AtomicUsize::new(0));
    let (s, p) = (stop.clone(), polls.clone());
    let vm = Vm::builder()
        .workers(1)
        .interrupt(move || {
            p.fetch_add(1, Ordering::Relaxed);
            s.load(Ordering::Relaxed)
        })
        .build();
    let inst = load(&vm, "export function spin(): void { while (true) {} }");
    let call = inst.call_async("spin", ());
    std::thread::sleep(Duration::from_millis(100));
    assert!(!call.is_finished());
    stop.store(true, Ordering::Relaxed);
    assert_eq!(
        call.wait_timeout(Duration::from_secs(10)),
        Some(Err(HostError::Cancelled("interrupted by the host".into())))
    );
    assert!(polls.load(Ordering::Relaxed) > 1);
}

#[test]
fn a_thrown_error_reaches_the_host_as_data() {
    let vm = Vm::builder().workers(1).build();
    let inst = load(
        &vm,
        "class HttpError extends Error {\n\
         \x20 status: number;\n\
         \x20 constructor(status: number) { super(\"status \" + status); this.name = \"HttpError\"; this.status = status; }\n\
         }\n\
         function check(n: number): void {\n\
         \x20 if (n > 1) throw new HttpError(404);\n\
         }\n\
         export function handle(n: number): void {\n\
         \x20 check(n);\n\
         }\n\
         export function raw(): void { throw 42; }\n",
    );
    let Err(HostError::Uncaught(e)) = inst.call::<()>("handle", (2,)) else { panic!("expected an error") };
    assert_eq!(e.name, "HttpError");
    assert_eq!(e.message, "status 404");
    let frames: Vec<(String, String, u32, u32)> =
        e.frames.iter().map(|f| (f.function.clone(), f.file.clone(), f.line, f.column)).collect();
    assert_eq!(
        frames,
        vec![
            ("new HttpError".to_string(), "app.raya".to_string(), 3, 33),
            ("check".to_string(), "app.raya".to_string(), 6, 20),
            ("handle".to_string(), "app.raya".to_string(), 9, 3)
        ]
    );
    assert_eq!(e.value.get("status"), Some(&HostValue::Number(404.0)));
    assert_eq!(e.value.get("message"), Some(&HostValue::from("status 404")));
    assert!(e.stack.starts_with("HttpError: status 404\n    at new HttpError (app.raya:3:33)"), "{}", e.stack);
    let Err(HostError::Uncaught(e)) = inst.call::<()>("raw", ()) else { panic!("expected an error") };
    assert_eq!((e.name.as_str(), e.message.as_str(), &e.value), ("", "42", &HostValue::Number(42.0)));
    // A main module that throws: `load` fails with the error.
    let p = vm.compile_source("bad.raya", "throw new TypeError(\"bad start\");").unwrap();
    match vm.load(&p) {
        Err(HostError::Uncaught(e)) => {
            assert_eq!((e.name.as_str(), e.message.as_str()), ("TypeError", "bad start"));
            assert_eq!(e.frames[0].file, "bad.raya");
        }
        other => panic!("{other:?}"),
    }
}

/// Output as written: each write with its stream.
type Lines = Arc<Mutex<Vec<(Stream, String)>>>;

/// Collects an instance's output, tagged by stream.
fn collector() -> (Lines, impl Fn(Stream, &str) + Send + Sync + 'static) {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let l = lines.clone();
    (lines, move |s: Stream, text: &str| l.lock().unwrap().push((s, text.to_string())))
}

#[test]
fn output_is_captured_per_instance_while_two_run_at_once() {
    // `stdout`/`stderr` are named, so the VM grants the standard streams.
    let vm = Vm::builder().workers(2).allow(raya_engine::Capability::Stdio).build();
    let src = r#"
        export async function work(tag: string): Task<void> {
          for (let i = 0; i < 50; i++) {
            console.log(tag, i);
            if (i % 10 == 0) await Task.yield();
          }
          console.error(tag + " done");
          stderr.write("raw " + tag);
          stdout.write("!");
        }
        "#;
    let p = vm.compile_source("out.raya", src).unwrap();
    let (a_lines, a_sink) = collector();
    let (b_lines, b_sink) = collector();
    let a = vm.load_with(&p, LoadOptions::default().output(a_sink)).unwrap();
    let b = vm.load_with(&p, LoadOptions::default().output(b_sink)).unwrap();
    let (ca, cb) = (a.call_async("work", ("a",)), b.call_async("work", ("b",)));
    assert_eq!(ca.wait(), Ok(HostValue::Undefined));
    assert_eq!(cb.wait(), Ok(HostValue::Undefined));
    for (tag, lines) in [("a", a_lines), ("b", b_lines)] {
        let lines = lines.lock().unwrap().clone();
        let mut expected: Vec<(Stream, String)> = (0..50).map(|i| (Stream::Stdout, format!("{tag} {i}\n"))).collect();
        expected.push((Stream::Stderr, format!("{tag} done\n")));
        expected.push((Stream::Stderr, format!("raw {tag}")));
        expected.push((Stream::Stdout, "!".into()));
        assert_eq!(lines, expected);
    }
}

#[test]
fn the_vm_wide_sink_gets_execute_output_and_reports_only_when_asked() {
    let (lines, sink) = collector();
    let vm = Vm::builder().workers(1).output(sink).build();
    let p = vm.compile_source("r.raya", "console.log(\"hi\");\nthrow new Error(\"boom\");").unwrap();
    assert!(matches!(vm.execute(&p), Err(HostError::Uncaught(_))));
    assert_eq!(*lines.lock().unwrap(), vec![(Stream::Stdout, "hi\n".to_string())]);

    let (lines, sink) = collector();
    let vm = Vm::builder().workers(1).output(sink).report_errors(true).build();
    assert!(matches!(vm.execute(&p), Err(HostError::Uncaught(_))));
    let lines = lines.lock().unwrap().clone();
    assert_eq!(lines[0], (Stream::Stdout, "hi\n".to_string()));
    assert_eq!(lines[1].0, Stream::Stderr);
    assert!(lines[1].1.starts_with("Uncaught Error: boom\n"), "{:?}", lines[1]);
}

/// Run as a child process by the test below, with stderr captured.
#[test]
fn child_quiet_errors() {
    if std::env::var_os("RAYA_QUIET_CHILD").is_none() {
        return;
    }
    let vm = Vm::builder().workers(1).build();
    let run = |src: &str| vm.execute(&vm.compile_source("q.raya", src).unwrap());
    assert!(run("throw new Error(\"boom\");").is_err());
    assert!(run("const t = (async () => { throw new Error(\"lost\"); })();\nawait sleep(1);").is_err());
    assert!(matches!(run("await new Promise<number>();"), Err(HostError::Deadlock)));
    let inst = vm.load(&vm.compile_source("q.raya", "export function f(): void { throw new Error(\"x\"); }").unwrap());
    assert!(inst.unwrap().call::<()>("f", ()).is_err());
}

#[test]
fn the_engine_prints_nothing_on_stderr_unless_asked() {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args(["--exact", "child_quiet_errors", "--nocapture", "--test-threads=1"])
        .env("RAYA_QUIET_CHILD", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("boom") && !stderr.contains("lost") && !stderr.contains("Deadlock"), "{stderr}");
    assert!(!stderr.contains("Uncaught") && !stderr.contains("Unhandled"), "{stderr}");
}

#[test]
fn typed_host_functions_convert_and_name_bad_arguments() {
    let vm = Vm::builder().workers(1).build();
    vm.register_fn("add", |a: f64, b: f64| Ok::<_, String>(a + b));
    vm.register_fn("greet", |name: String, times: Option<u32>| {
        Ok::<_, String>(vec![format!("hi {name}"); times.unwrap_or(1) as usize])
    });
    vm.register_fn("tally", |m: HashMap<String, f64>| Ok::<_, String>(m.values().sum::<f64>()));
    vm.register_fn("sorted", |m: BTreeMap<String, bool>| Ok::<_, String>(m.into_keys().collect::<Vec<_>>()));
    vm.register_fn("checked", |n: i32| if n < 0 { Err(format!("negative: {n}")) } else { Ok(n * 2) });
    vm.register_fn("noop", || Ok::<_, String>(()));
    let inst = load(
        &vm,
        r#"
        export function good(): any[] {
          return [add(1, 2), greet("ann"), greet("bo", 2), tally({ a: 1, b: 2.5 }), sorted({ z: true, a: false }), checked(4), noop()];
        }
        export function bad(which: number): string {
          try {
            if (which == 0) add(1, "2" as any);
            if (which == 1) greet(3 as any);
            if (which == 2) checked(1.5);
            if (which == 3) checked(-1);
            if (which == 4) tally({ a: "x" } as any);
            return "no error";
          } catch (e) {
            return (e as Error).name + ": " + (e as Error).message;
          }
        }
        "#,
    );
    assert_eq!(
        inst.call::<HostValue>("good", ()),
        Ok(HostValue::Array(vec![
            3.0.into(),
            HostValue::Array(vec!["hi ann".into()]),
            HostValue::Array(vec!["hi bo".into(), "hi bo".into()]),
            3.5.into(),
            HostValue::Array(vec!["a".into(), "z".into()]),
            8.into(),
            HostValue::Undefined,
        ]))
    );
    let bad = |i: i32| inst.call::<String>("bad", (i,)).unwrap();
    assert_eq!(bad(0), "TypeError: add: parameter 2 expected a number, got a string");
    assert_eq!(bad(1), "TypeError: greet: parameter 1 expected a string, got a number");
    assert_eq!(bad(2), "TypeError: checked: parameter 1 expected an integer that fits i32, got 1.5");
    assert_eq!(bad(3), "Error: negative: -1");
    assert_eq!(bad(4), "TypeError: tally: parameter 1 at .a: expected a number, got a string");
}

#[test]
fn exit_in_a_call_ends_the_instance() {
    let vm = Vm::builder().workers(1).build();
    let inst = load(&vm, "export function quit(): void { exit(3); }\nexport function ok(): number { return 1; }");
    assert_eq!(inst.call::<()>("quit", ()), Err(HostError::Exit(3)));
    assert_eq!(inst.call::<f64>("ok", ()), Err(HostError::Exit(3)));
    let p = vm.compile_source("e.raya", "exit(0);").unwrap();
    assert_eq!(vm.load(&p).map(|_| ()), Err(HostError::Exit(0)));
}

#[test]
fn eval_runs_inside_a_loaded_program() {
    let vm = Vm::builder().workers(2).build();
    vm.register_fn("twice", |n: f64| Ok::<_, String>(n * 2.0));
    let inst =
        load(&vm, "export let counter = 20;\nexport function bump(): number { return ++counter; }\nconst secret = 1;");
    assert_eq!(inst.eval::<f64>("1 + 1"), Ok(2.0));
    // Exports (read-only, as for an importing module: live bindings) and
    // host functions are in scope.
    assert_eq!(inst.eval::<f64>("bump(); twice(bump())"), Ok(44.0));
    assert_eq!(inst.eval::<f64>("counter"), Ok(22.0));
    assert!(matches!(inst.eval::<f64>("counter = 1"), Err(HostError::Compile(_))));
    // Declarations stay for later evals.
    assert_eq!(
        inst.eval::<HostValue>("const base = 100;\nfunction plus(n: number): number { return base + n; }"),
        Ok(HostValue::Undefined)
    );
    assert_eq!(inst.eval::<f64>("plus(counter)"), Ok(122.0));
    // A promise is awaited.
    assert_eq!(inst.eval::<String>("(async () => { await sleep(1); return \"done\"; })()"), Ok("done".into()));
    // Module-private names are not visible; errors are values.
    match inst.eval::<f64>("secret") {
        Err(HostError::Compile(e)) => assert!(e.render().contains("cannot find name `secret`"), "{}", e.render()),
        other => panic!("{other:?}"),
    }
    match inst.eval::<f64>("import { x } from \"./x.raya\";\nx") {
        Err(HostError::Compile(e)) => assert!(e.render().contains("cannot import modules"), "{}", e.render()),
        other => panic!("{other:?}"),
    }
    match inst.eval::<f64>("throw new RangeError(\"nope\")") {
        Err(HostError::Uncaught(e)) => assert_eq!((e.name.as_str(), e.message.as_str()), ("RangeError", "nope")),
        other => panic!("{other:?}"),
    }
    // Many evals in a row: the warm path.
    for i in 0..200 {
        assert_eq!(inst.eval::<f64>(&format!("{i} + 1")), Ok(i as f64 + 1.0));
    }
}

#[test]
fn frames_of_evaluated_code_name_its_file_line_and_column() {
    let vm = Vm::builder().workers(1).build();
    let inst = load(&vm, "export function call(f: () => number): number { return f(); }");
    // A function one eval declares and a later eval calls: both files
    // stay named.
    inst.eval::<HostValue>("function boom(): number {\n  throw new RangeError(\"deep\");\n}").unwrap();
    match inst.eval::<f64>("const x = 1;\nboom()") {
        Err(HostError::Uncaught(e)) => {
            let at: Vec<(&str, &str, u32, u32)> =
                e.frames.iter().map(|f| (f.function.as_str(), f.file.as_str(), f.line, f.column)).collect();
            assert_eq!(at, vec![("boom", "<eval 1>", 2, 9), ("<main>", "<eval 2>", 2, 1)], "{}", e.stack);
        }
        other => panic!("{other:?}"),
    }
    // Through the program's own function, called inline.
    inst.eval::<HostValue>("let n = 0;").unwrap();
    match inst.eval::<f64>("n = 5;\ncall(() => { throw new Error(\"cb\"); })") {
        Err(HostError::Uncaught(e)) => {
            assert_eq!(e.frames[0].file, "<eval 4>", "{}", e.stack);
            assert_eq!((e.frames[0].line, e.frames[0].column), (2, 20), "{}", e.stack);
            assert_eq!(e.frames[1].file, "app.raya", "{}", e.stack);
        }
        other => panic!("{other:?}"),
    }
    // An earlier eval's `let` is assignable by later ones.
    assert_eq!(inst.eval::<f64>("n + 1"), Ok(6.0));
}
