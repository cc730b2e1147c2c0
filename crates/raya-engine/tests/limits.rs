//! The embedder's limits on a run (`VmBuilder::step_limit`, `time_limit`,
//! `max_tasks`): a runaway script is stopped with an error the host sees.

mod common;

use common::{register_report, run};
use raya_engine::{HostError, HostValue, Limits, Vm};
use std::time::{Duration, Instant};

#[test]
fn step_limit_stops_an_endless_loop() {
    let vm = Vm::builder().workers(1).step_limit(1_000_000).build();
    let r = run(&vm, "let n = 0; while (true) { n++; }");
    match r {
        Err(HostError::Limit(m)) => assert_eq!(m, "step limit of 1000000 reached"),
        other => panic!("expected the step limit, got {other:?}"),
    }
    // A program that catches everything cannot catch the limit.
    let r = run(&vm, "for (;;) { try { for (;;) {} } catch (e) {} }");
    assert!(matches!(r, Err(HostError::Limit(_))), "{r:?}");
}

#[test]
fn step_limit_counts_every_task_and_spares_a_program_under_it() {
    let vm = Vm::builder().workers(2).step_limit(200_000).build();
    let seen = register_report(&vm);
    let r = run(&vm, "async function spin() { for (;;) {} }\nspin(); spin(); for (;;) {}");
    assert!(matches!(r, Err(HostError::Limit(ref m)) if m == "step limit of 200000 reached"), "{r:?}");
    run(&vm, "let s = 0; for (let i = 0; i < 1000; i++) s += i; report(s);").unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![HostValue::Number(499500.0)]);
}

#[test]
fn time_limit_stops_a_spinning_and_a_sleeping_program() {
    let vm = Vm::builder().workers(1).time_limit(Duration::from_millis(200)).build();
    let seen = register_report(&vm);
    let start = Instant::now();
    let r = run(&vm, "for (;;) {}");
    assert!(matches!(r, Err(HostError::Limit(ref m)) if m == "time limit of 200 ms reached"), "{r:?}");
    // Every task waiting: the limit still holds.
    let r = run(&vm, "sleep(60000);");
    assert!(matches!(r, Err(HostError::Limit(_))), "{r:?}");
    assert!(start.elapsed() < Duration::from_secs(10), "stopped promptly: {:?}", start.elapsed());
    run(&vm, "report(1 + 1);").unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![HostValue::Number(2.0)]);
}

#[test]
fn max_tasks_is_a_catchable_range_error() {
    let vm = Vm::builder().workers(2).max_tasks(10).build();
    let seen = register_report(&vm);
    let src = r#"
        const ch = new Channel<number>();
        const tasks: Task<void>[] = [];
        let error = "";
        try {
          for (let i = 0; i < 100; i++) tasks.push((async () => { ch.receive(); })());
        } catch (e) {
          error = `${e.name}: ${e.message}`;
        }
        for (const t of tasks) ch.send(1);
        await tasks;
        // Finished tasks no longer count.
        const again = (async () => 7)();
        report(`${tasks.length} ${error} ${await again}`);
    "#;
    run(&vm, src).unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![HostValue::String("9 RangeError: too many tasks: limit of 10 live tasks reached 7".into())]
    );
}

fn load(vm: &Vm, src: &str) -> raya_engine::Instance {
    vm.load(&vm.compile_source("app.raya", src).expect("compiles")).expect("loads")
}

#[test]
fn a_calls_limits_cover_the_tasks_it_spawns() {
    let vm = Vm::builder().workers(2).build();
    let inst = load(
        &vm,
        r#"
        export let spins = 0;
        // Returns at once, leaving a spinning task behind.
        export function leaveSpinner(): number { (async () => { for (;;) { spins++; } })(); return 1; }
        // Waits for spinning tasks.
        export async function fanOut(n: number): Task<number> {
          const ts: Task<void>[] = [];
          for (let i = 0; i < n; i++) ts.push((async () => { for (;;) {} })());
          await ts;
          return 0;
        }
        // Never preempted: it suspends at every iteration.
        export async function yielder(): Task<void> { for (;;) await Task.yield(); }
        export async function many(n: number): Task<string> {
          const ts: Task<void>[] = [];
          let err = "";
          try {
            for (let i = 0; i < n; i++) ts.push((async () => { await sleep(5); })());
          } catch (e) {
            err = `${(e as Error).name}: ${(e as Error).message}`;
          }
          await ts;
          return `${ts.length} ${err}`;
        }
        "#,
    );
    // The time limit reaches a task the call left running.
    let limits = Limits::none().time(Duration::from_millis(100));
    assert_eq!(inst.call_with("leaveSpinner", (), limits).wait(), Ok(HostValue::Number(1.0)));
    std::thread::sleep(Duration::from_millis(400));
    let a: f64 = inst.get("spins").unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let b: f64 = inst.get("spins").unwrap();
    assert!(a > 0.0 && a == b, "the spinner was stopped: {a} then {b}");
    // The instruction budget is spent by the spawned tasks together.
    let start = Instant::now();
    let r = inst.call_with("fanOut", (3,), Limits::none().instructions(300_000)).wait();
    assert_eq!(r, Err(HostError::Cancelled("instruction budget exhausted".into())));
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
    // Steps are charged where every run ends, not only at preemptions.
    let r = inst.call_with("yielder", (), Limits::none().instructions(20_000)).wait();
    assert_eq!(r, Err(HostError::Cancelled("instruction budget exhausted".into())));
    // At most `tasks` alive at once, the call's own included; catchable.
    let r = inst.call_with("many", (10,), Limits::none().tasks(5)).wait();
    assert_eq!(r, Ok(HostValue::from("4 RangeError: too many tasks: limit of 5 live tasks reached")));
    // Finished tasks no longer count, and other calls are not limited.
    let r = inst.call_with("many", (4,), Limits::none().tasks(5)).wait();
    assert_eq!(r, Ok(HostValue::from("4 ")));
    assert_eq!(inst.call::<String>("many", (10,)), Ok("10 ".into()));
}
