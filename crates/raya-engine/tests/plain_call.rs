//! A synchronous call (`Instance::call`) that does not suspend runs as a
//! plain call in its thread's reusable execution state, not as a task; it
//! becomes a task only when it suspends. These tests check that nothing a
//! script can observe changes: calls that suspend midway, throw, hold
//! mutexes, ask for their own task, spawn, hit limits, or call back
//! through the host, one after another on the same reused state and from
//! many threads at once.

use raya_engine::{HostError, HostValue, Instance, Limits, Vm};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod common;
use common::load;

#[test]
fn calls_that_suspend_midway_complete_and_the_state_is_reused_after() {
    let vm = Vm::builder().workers(1).build();
    let inst = load(
        &vm,
        r#"
        const ch = new Channel<number>(0);
        const m = new Mutex();
        export function add(a: number, b: number): number { return a + b; }
        export async function napThenAdd(a: number, b: number): Task<number> {
          const x = a * 2;
          await sleep(5);
          return x + b;
        }
        // A task returned from an async function is awaited (flattened).
        export async function viaReturnedTask(n: number): Task<number> {
          return (async () => { await Task.yield(); return n + 1; })();
        }
        // Blocks on an unbuffered channel until a background task takes it.
        export async function handOver(n: number): Task<number> {
          (async () => { await Task.yield(); const v = await ch.receive(); total += v; })();
          await ch.send(n);
          return n;
        }
        let total = 0;
        export function total_(): number { return total; }
        // Contended: the lock is held by a task that sleeps first.
        export async function underLock(n: number): Task<number> {
          (async () => { await m.lock(); try { await sleep(5); } finally { m.unlock(); } })();
          await Task.yield();
          await m.lock();
          try { return n * 3; } finally { m.unlock(); }
        }
        "#,
    );
    for round in 0..20 {
        let r = round as f64;
        assert_eq!(inst.call::<f64>("add", (r, 1)), Ok(r + 1.0));
        assert_eq!(inst.call::<f64>("napThenAdd", (r, 1)), Ok(r * 2.0 + 1.0));
        assert_eq!(inst.call::<f64>("add", (r, 2)), Ok(r + 2.0));
        assert_eq!(inst.call::<f64>("viaReturnedTask", (r,)), Ok(r + 1.0));
        assert_eq!(inst.call::<f64>("handOver", (r,)), Ok(r));
        assert_eq!(inst.call::<f64>("underLock", (r,)), Ok(r * 3.0));
    }
    // Every value sent was received.
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(inst.call::<f64>("total_", ()), Ok((0..20).sum::<i32>() as f64));
}

#[test]
fn a_call_that_throws_is_structured_and_leaves_nothing_behind() {
    let vm = Vm::builder().workers(1).build();
    let inst = load(
        &vm,
        r#"
        export let cleaned = 0;
        function deep(n: number): number {
          if (n == 0) throw new RangeError("too deep");
          try { return deep(n - 1) + 1; } finally { cleaned++; }
        }
        export function fails(n: number): number { return deep(n); }
        export function caught(n: number): string {
          try { deep(n); return "no"; } catch (e) { return (e as Error).message; }
        }
        export function ok(n: number): number { return n; }
        "#,
    );
    for i in 0..10 {
        match inst.call::<f64>("fails", (3,)) {
            Err(HostError::Uncaught(e)) => {
                assert_eq!(e.name, "RangeError");
                assert_eq!(e.message, "too deep");
                let functions: Vec<&str> = e.frames.iter().map(|f| f.function.as_str()).collect();
                assert_eq!(functions[..5], ["deep", "deep", "deep", "deep", "fails"], "{functions:?}");
                assert_eq!(e.frames[0].line, 4);
            }
            other => panic!("unexpected {other:?}"),
        }
        // The unwound state serves the next call: no frame or handler of
        // the failed one is left in it.
        assert_eq!(inst.call::<f64>("ok", (i,)), Ok(i as f64));
        assert_eq!(inst.call::<String>("caught", (2,)), Ok("too deep".into()));
    }
    assert_eq!(inst.get::<f64>("cleaned"), Ok(10.0 * 3.0 + 10.0 * 2.0));
}

#[test]
fn a_mutex_held_at_the_end_of_a_plain_call_is_released() {
    let vm = Vm::builder().workers(1).build();
    let inst = load(
        &vm,
        r#"
        const m = new Mutex();
        // Locks (uncontended: no suspension) and forgets to unlock: the
        // end of its task releases the lock, as for any task.
        export async function grab(): Task<number> { await m.lock(); return 1; }
        export async function grabAgain(): Task<number> { await m.lock(); m.unlock(); return 2; }
        "#,
    );
    assert_eq!(inst.call::<f64>("grab", ()), Ok(1.0));
    assert_eq!(inst.call::<f64>("grabAgain", ()), Ok(2.0));
    assert_eq!(inst.call::<f64>("grab", ()), Ok(1.0));
    assert_eq!(
        inst.call_async("grabAgain", ()).wait_timeout(Duration::from_secs(10)),
        Some(Ok(HostValue::Number(2.0)))
    );
}

#[test]
fn a_plain_call_is_still_a_task_to_the_script() {
    let vm = Vm::builder().workers(1).build();
    let inst = load(
        &vm,
        r#"
        let seen: any[] = [];
        export function me(): boolean {
          const t = Task.current();
          seen.push(t);
          return t !== undefined && t === Task.current();
        }
        // Another task awaits the call's own task, which then ends.
        export function awaitedByOther(): number {
          const me = Task.current();
          waiter = (async () => { await me; return 7; })();
          return 1;
        }
        let waiter: any = null;
        export async function waiterResult(): Task<number> { return await waiter; }
        export function distinct(): boolean { return seen.length == 2 && seen[0] !== seen[1]; }
        "#,
    );
    assert_eq!(inst.call::<bool>("me", ()), Ok(true));
    assert_eq!(inst.call::<bool>("me", ()), Ok(true));
    assert_eq!(inst.call::<bool>("distinct", ()), Ok(true), "each call is a task of its own");
    assert_eq!(inst.call::<f64>("awaitedByOther", ()), Ok(1.0));
    assert_eq!(inst.call::<f64>("waiterResult", ()), Ok(7.0));
}

#[test]
fn plain_calls_from_eight_threads_keep_their_own_state() {
    let vm = Vm::builder().workers(2).build();
    let inst = load(
        &vm,
        r#"
        const m = new Mutex();
        let total = 0;
        export function add(a: number, b: number): number { return a + b; }
        export function fails(n: number): number { throw new Error(`no ${n}`); }
        export async function bump(n: number): Task<number> {
          await m.lock();
          try { const t = total; if (n % 7 == 0) await Task.yield(); total = t + n; return total; }
          finally { m.unlock(); }
        }
        export function total_(): number { return total; }
        "#,
    );
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let inst = inst.clone();
            std::thread::spawn(move || {
                for i in 0..200 {
                    let n = (t * 1000 + i) as f64;
                    assert_eq!(inst.call::<f64>("add", (n, 1)), Ok(n + 1.0));
                    match inst.call::<f64>("fails", (n,)) {
                        Err(HostError::Uncaught(e)) => assert_eq!(e.message, format!("no {n}")),
                        other => panic!("unexpected {other:?}"),
                    }
                    inst.call::<f64>("bump", (i as f64,)).expect("bump");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let expected: f64 = 8.0 * (0..200).sum::<i32>() as f64;
    assert_eq!(inst.call::<f64>("total_", ()), Ok(expected));
}

#[test]
fn limits_apply_to_plain_calls_and_what_they_spawn() {
    // An instruction budget is charged by a call that ends within its
    // first time slice, and shared by the tasks it spawns.
    let vm = Vm::builder().workers(1).limits(Limits::none().instructions(2_000)).build();
    let inst = load(
        &vm,
        r#"
        export function small(): number { let s = 0; for (let i = 0; i < 100; i++) s += i; return s; }
        export function big(): number { let s = 0; for (let i = 0; i < 1e7; i++) s += i; return s; }
        export async function spawnsSpinner(): Task<number> {
          const t = (async () => { while (true) { await Task.yield(); } })();
          await t;
          return 0;
        }
        "#,
    );
    assert_eq!(inst.call::<f64>("small", ()), Ok(4950.0));
    assert_eq!(inst.call::<f64>("big", ()), Err(HostError::Cancelled("instruction budget exhausted".into())));
    assert_eq!(inst.call::<f64>("spawnsSpinner", ()), Err(HostError::Cancelled("instruction budget exhausted".into())));
    assert_eq!(inst.call::<f64>("small", ()), Ok(4950.0), "each call has a budget of its own");

    // A task limit counts the call itself.
    let vm = Vm::builder().workers(1).limits(Limits::none().tasks(2)).build();
    let inst = load(
        &vm,
        r#"
        export function spawnTwo(): string {
          try { (async () => 1)(); (async () => 2)(); return "both"; }
          catch (e) { return (e as Error).name; }
        }
        "#,
    );
    assert_eq!(inst.call::<String>("spawnTwo", ()), Ok("RangeError".into()));

    // A time limit covers a call that suspends after starting here.
    let vm = Vm::builder().workers(1).limits(Limits::none().time(Duration::from_millis(50))).build();
    let inst = load(&vm, "export async function nap(): Task<number> { await sleep(10000); return 1; }");
    assert_eq!(inst.call::<f64>("nap", ()), Err(HostError::Cancelled("time limit of 50ms reached".into())));
}

#[test]
fn exit_in_a_plain_call_ends_the_instance() {
    let vm = Vm::builder().workers(1).build();
    let inst =
        load(&vm, "export function quit(): number { exit(3); return 1; }\nexport function ok(): number { return 1; }");
    assert_eq!(inst.call::<f64>("quit", ()), Err(HostError::Exit(3)));
    assert_eq!(inst.call::<f64>("ok", ()), Err(HostError::Exit(3)));
}

#[test]
fn nested_host_and_script_calls() {
    // script → host → script → host → script, from a plain call: the
    // inner calls go to the workers (this thread is mid-call), and each
    // level gets its result. Each level below the first holds a worker
    // while its host function waits, so the depth is bounded by the
    // workers.
    let vm = Vm::builder().workers(2).build();
    let slot: Arc<Mutex<Option<Instance>>> = Arc::new(Mutex::new(None));
    let s = slot.clone();
    vm.register_fn("down", move |name: String, n: f64| {
        let inst = s.lock().unwrap().clone().expect("loaded");
        inst.call::<f64>(&name, (n - 1.0,)).map_err(|e| e.to_string())
    });
    let inst = load(
        &vm,
        r#"
        export function level(n: number): number { return n <= 0 ? 100 : down("level", n) + n; }
        export function boom(n: number): number { return n <= 0 ? (null as any).x : down("boom", n); }
        "#,
    );
    *slot.lock().unwrap() = Some(inst.clone());
    assert_eq!(inst.call::<f64>("level", (2,)), Ok(103.0));
    // An error thrown at the bottom reaches the host function as a
    // `HostError`, which it rethrows as its own error.
    match inst.call::<f64>("boom", (1,)) {
        Err(HostError::Uncaught(e)) => {
            assert_eq!(e.name, "Error");
            assert!(e.message.contains("TypeError"), "{}", e.message);
            assert_eq!(e.frames[0].function, "boom");
        }
        other => panic!("unexpected {other:?}"),
    }
    slot.lock().unwrap().take();
}

#[test]
fn typed_host_functions_take_script_values_directly() {
    // Parameters of number, boolean and string types (and options of
    // them) are read from the script's values without a `HostValue`;
    // anything else, and every refused value, goes the general way, with
    // the same errors.
    let vm = Vm::builder().workers(1).build();
    vm.register_fn("flip", |b: bool| Ok::<_, String>(!b));
    vm.register_fn("half", |x: f32| Ok::<_, String>(x / 2.0));
    vm.register_fn("byte", |x: u8| Ok::<_, String>(x));
    vm.register_fn("orZero", |x: Option<f64>| Ok::<_, String>(x.unwrap_or(0.0)));
    vm.register_fn("shout", |s: String| Ok::<_, String>(s.to_uppercase()));
    vm.register_fn("kind", |v: HostValue| {
        Ok::<_, String>(match v {
            HostValue::Array(a) => format!("array of {}", a.len()),
            other => format!("{other:?}"),
        })
    });
    vm.register_fn("boom", |_n: f64| -> Result<f64, String> { panic!("host bug") });
    let inst = load(
        &vm,
        r#"
        export function good(): any[] {
          return [flip(true), half(3), byte(255), orZero(null), orZero(undefined), orZero(2.5), orZero(),
                  shout("héllo"), kind([1, [2]]), flip(false, "extra", () => 1)];
        }
        export function bad(which: number): string {
          try {
            if (which == 0) byte(256);
            if (which == 1) flip(1 as any);
            if (which == 2) shout((() => 1) as any);
            if (which == 3) orZero("x" as any);
            if (which == 4) boom(1);
            if (which == 5) half(undefined as any);
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
            false.into(),
            1.5.into(),
            255.into(),
            0.0.into(),
            0.0.into(),
            2.5.into(),
            0.0.into(),
            "HÉLLO".into(),
            "array of 2".into(),
            true.into(),
        ]))
    );
    let bad = |i: i32| inst.call::<String>("bad", (i,)).unwrap();
    assert_eq!(bad(0), "TypeError: byte: parameter 1 expected an integer that fits u8, got 256");
    assert_eq!(bad(1), "TypeError: flip: parameter 1 expected a boolean, got a number");
    assert_eq!(bad(2), "TypeError: shout: cannot pass a function to the host");
    assert_eq!(bad(3), "TypeError: orZero: parameter 1 expected a number, got a string");
    assert_eq!(bad(4), "Error: host function `boom` panicked");
    assert_eq!(bad(5), "TypeError: half: parameter 1 expected a number, got undefined");
}

#[test]
fn an_exported_built_in_is_called_as_a_task() {
    // A built-in function has no frame of its own to run in a plain call:
    // it runs in a task, as before.
    let vm = Vm::builder().workers(1).build();
    let inst = load(&vm, "export const biggest = Math.max;\nexport const notAFunction = 3;");
    assert_eq!(inst.call::<f64>("biggest", (1, 5, 3)), Ok(5.0));
    assert_eq!(
        inst.call::<f64>("notAFunction", ()),
        Err(HostError::Export("export `notAFunction` is not a function".into()))
    );
    assert!(matches!(inst.call::<f64>("missing", ()), Err(HostError::Export(_))));
}
