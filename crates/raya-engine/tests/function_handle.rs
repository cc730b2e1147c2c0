//! `Instance::function`: an exported function resolved once and called
//! through its `Function` handle, with typed arguments written straight
//! into the callee's registers and the result read straight from the
//! script's value. Each path of that conversion, and everything a call
//! must still do (suspend, throw, run under limits, run from many threads,
//! be called back from a host function), is checked here.

use raya_engine::{HostError, HostValue, Limits, Vm};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod common;
use common::load;

#[test]
fn typed_arguments_and_results_cross_directly() {
    let vm = Vm::builder().workers(1).build();
    let inst = load(
        &vm,
        r#"
        export function add(a: number, b: number): number { return a + b; }
        export function greet(name: string, excited: boolean): string { return "hi " + name + (excited ? "!" : "."); }
        export function kind(x: any): string { return x === undefined ? "undefined" : x === null ? "null" : typeof x; }
        export function half(n: number): number | null { return n % 2 == 0 ? n / 2 : null; }
        export function pair(a: number, s: string): any { return { a: a, s: s, list: [a, a + 1] }; }
        export function isTrue(b: boolean): boolean { return b === true; }
        "#,
    );
    let add = inst.function("add").unwrap();
    assert_eq!(add.name(), "add");
    for i in 0..50 {
        assert_eq!(add.call::<f64>((i as f64, 0.5)), Ok(i as f64 + 0.5));
        // Integers go in and come back as numbers.
        assert_eq!(add.call::<i32>((i, 1u8)), Ok(i + 1));
    }
    let greet = inst.function("greet").unwrap();
    assert_eq!(greet.call::<String>(("wörld", true)), Ok("hi wörld!".into()));
    assert_eq!(greet.call::<String>((String::from("you"), false)), Ok("hi you.".into()));

    let kind = inst.function("kind").unwrap();
    assert_eq!(kind.call::<String>((None::<f64>,)), Ok("undefined".into()));
    assert_eq!(kind.call::<String>((Some(1.5),)), Ok("number".into()));
    assert_eq!(kind.call::<String>((HostValue::Null,)), Ok("null".into()));
    assert_eq!(kind.call::<String>((vec![1, 2],)), Ok("object".into()));
    let mut m = HashMap::new();
    m.insert("k".to_string(), 1.0);
    assert_eq!(kind.call::<String>((m,)), Ok("object".into()));
    assert_eq!(kind.call::<String>(vec![HostValue::from("s")]), Ok("string".into()));
    assert_eq!(kind.call::<String>(&[HostValue::Bool(true)][..]), Ok("boolean".into()));

    let half = inst.function("half").unwrap();
    assert_eq!(half.call::<Option<f64>>((4,)), Ok(Some(2.0)));
    assert_eq!(half.call::<Option<f64>>((3,)), Ok(None));
    assert_eq!(inst.function("isTrue").unwrap().call::<bool>((true,)), Ok(true));

    // Results no direct conversion takes go through `HostValue`.
    let pair = inst.function("pair").unwrap();
    let v = pair.call::<HostValue>((2, "x")).unwrap();
    assert_eq!(
        v,
        HostValue::Object(vec![
            ("a".into(), HostValue::Number(2.0)),
            ("s".into(), HostValue::String("x".into())),
            ("list".into(), HostValue::Array(vec![HostValue::Number(2.0), HostValue::Number(3.0)])),
        ])
    );
    let m: HashMap<String, HostValue> = pair.call((1, "y")).unwrap();
    assert_eq!(m["s"], HostValue::String("y".into()));
    // `()` takes any result.
    assert_eq!(pair.call::<()>((1, "y")), Ok(()));
}

#[test]
fn wrong_argument_counts_and_result_types() {
    let vm = Vm::builder().workers(1).build();
    let inst = load(
        &vm,
        r#"
        export function count(a: any, b: any, ...rest: any[]): string { return `${a === undefined} ${b === undefined} ${rest.length}`; }
        export function text(): string { return "abc"; }
        export function big(): number { return 300; }
        export function frac(): number { return 1.5; }
        export function fn_(): any { return () => 1; }
        export function upper(s: string): string { return s.toUpperCase(); }
        export const notAFunction = 5;
        "#,
    );
    let count = inst.function("count").unwrap();
    // Missing arguments are `undefined`, extra ones are passed along, as
    // in a script's own calls.
    assert_eq!(count.call::<String>(()), Ok("true true 0".into()));
    assert_eq!(count.call::<String>((1,)), Ok("false true 0".into()));
    assert_eq!(count.call::<String>((1, 2, 3, "four")), Ok("false false 2".into()));

    fn conv<T>(m: &str) -> Result<T, HostError> {
        Err(HostError::Conversion(m.into()))
    }
    assert_eq!(inst.function("text").unwrap().call::<f64>(()), conv("expected a number, got a string"));
    assert_eq!(inst.function("text").unwrap().call::<bool>(()), conv("expected a boolean, got a string"));
    assert_eq!(inst.function("big").unwrap().call::<u8>(()), conv("expected an integer that fits u8, got 300"));
    assert_eq!(inst.function("frac").unwrap().call::<i64>(()), conv("expected an integer that fits i64, got 1.5"));
    assert_eq!(inst.function("big").unwrap().call::<String>(()), conv("expected a string, got a number"));
    assert_eq!(inst.function("fn_").unwrap().call::<HostValue>(()), conv("cannot pass a function to the host"));
    assert_eq!(inst.function("fn_").unwrap().call::<f64>(()), conv("cannot pass a function to the host"));

    // An argument the script cannot use is the script's own TypeError.
    match inst.function("upper").unwrap().call::<String>((5,)) {
        Err(HostError::Uncaught(e)) => assert_eq!(e.name, "TypeError", "{e:?}"),
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(inst.function("upper").unwrap().call::<String>(("ok",)), Ok("OK".into()));

    assert_eq!(inst.function("missing").unwrap_err(), HostError::Export("the program exports no `missing`".into()));
    let not_fn = inst.function("notAFunction").unwrap();
    assert_eq!(not_fn.call::<f64>(()), Err(HostError::Export("export `notAFunction` is not a function".into())));
}

#[test]
fn a_handle_follows_the_live_binding_of_its_export() {
    let vm = Vm::builder().workers(1).build();
    let inst = load(
        &vm,
        r#"
        export let op = (a: number, b: number): number => a + b;
        export function useTimes(): void { op = (a: number, b: number): number => a * b; }
        "#,
    );
    let op = inst.function("op").unwrap();
    assert_eq!(op.call::<f64>((3, 4)), Ok(7.0));
    inst.call::<()>("useTimes", ()).unwrap();
    assert_eq!(op.call::<f64>((3, 4)), Ok(12.0));
}

#[test]
fn calls_that_suspend_midway_through_a_handle() {
    let vm = Vm::builder().workers(1).build();
    let inst = load(
        &vm,
        r#"
        const ch = new Channel<string>(0);
        export function add(a: number, b: number): number { return a + b; }
        export async function napThenJoin(a: string, b: string): Task<string> {
          const x = a + "-";
          await sleep(2);
          return x + b;
        }
        export async function handOver(s: string): Task<string> {
          (async () => { await Task.yield(); await ch.receive(); })();
          await ch.send(s);
          return s.length > 3 ? s : null;
        }
        "#,
    );
    let add = inst.function("add").unwrap();
    let nap = inst.function("napThenJoin").unwrap();
    let hand = inst.function("handOver").unwrap();
    for round in 0..20 {
        let r = round as f64;
        assert_eq!(add.call::<f64>((r, 1)), Ok(r + 1.0));
        assert_eq!(nap.call::<String>((format!("a{round}"), "b")), Ok(format!("a{round}-b")));
        assert_eq!(add.call::<f64>((r, 2)), Ok(r + 2.0), "the state is reused after a promoted call");
        assert_eq!(hand.call::<Option<String>>(("long one",)), Ok(Some("long one".into())));
        assert_eq!(hand.call::<Option<String>>(("s",)), Ok(None));
    }
    // The same, started at once and waited for.
    let call = nap.call_async(("x", "y"));
    assert_eq!(call.wait(), Ok(HostValue::String("x-y".into())));
}

#[test]
fn a_throwing_call_is_structured_and_the_next_one_runs() {
    let vm = Vm::builder().workers(1).build();
    let inst = load(
        &vm,
        "export let cleaned = 0;\n\
         function inner(n: number): number {\n  \
           if (n > 2) throw new RangeError(`too big: ${n}`);\n  \
           return n;\n\
         }\n\
         export function check(n: number): number {\n  \
           try { return inner(n); } finally { cleaned++; }\n\
         }\n",
    );
    let check = inst.function("check").unwrap();
    for i in 0..10 {
        match check.call::<f64>((i + 3,)) {
            Err(HostError::Uncaught(e)) => {
                assert_eq!(e.name, "RangeError");
                assert_eq!(e.message, format!("too big: {}", i + 3));
                let names: Vec<&str> = e.frames.iter().map(|f| f.function.as_str()).collect();
                assert_eq!(names, ["inner", "check"]);
                assert_eq!((e.frames[0].file.as_str(), e.frames[0].line), ("app.raya", 3));
                assert_eq!(e.frames[1].line, 7);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(check.call::<f64>((1,)), Ok(1.0));
    }
    assert_eq!(inst.get::<f64>("cleaned"), Ok(20.0), "every `finally` ran");
}

#[test]
fn limited_calls_through_a_handle() {
    let vm = Vm::builder().workers(1).limits(Limits::none().instructions(2_000)).build();
    let inst = load(
        &vm,
        r#"
        export function small(n: number): number { let s = 0; for (let i = 0; i < n; i++) s += i; return s; }
        export function spin(): number { while (true) {} }
        export async function nap(): Task<number> { await sleep(10000); return 1; }
        "#,
    );
    let small = inst.function("small").unwrap();
    assert_eq!(small.call::<f64>((100,)), Ok(4950.0));
    assert_eq!(small.call::<f64>((1e7,)), Err(HostError::Cancelled("instruction budget exhausted".into())));
    assert_eq!(small.call::<f64>((100,)), Ok(4950.0), "each call has a budget of its own");
    let spin = inst.function("spin").unwrap();
    assert_eq!(spin.call::<f64>(()), Err(HostError::Cancelled("instruction budget exhausted".into())));

    // Other limits for one call, and a cancel from the host.
    let vm = Vm::builder().workers(1).build();
    let inst = load(
        &vm,
        "export function spin(): number { while (true) {} }\n\
         export async function nap(): Task<number> { await sleep(10000); return 1; }",
    );
    let nap = inst.function("nap").unwrap();
    let call = nap.call_with((), Limits::none().time(Duration::from_millis(30)));
    assert_eq!(call.wait(), Err(HostError::Cancelled("time limit of 30ms reached".into())));
    let call = inst.function("spin").unwrap().call_async(());
    std::thread::sleep(Duration::from_millis(20));
    call.cancel();
    assert_eq!(call.wait(), Err(HostError::Cancelled("cancelled by the host".into())));

    // The interrupt callback stops a call that runs on the caller's thread.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s = stop.clone();
    let vm = Vm::builder().workers(1).interrupt(move || s.load(std::sync::atomic::Ordering::Relaxed)).build();
    let inst =
        load(&vm, "export function spin(): number { while (true) {} }\nexport function one(): number { return 1; }");
    assert_eq!(inst.function("one").unwrap().call::<f64>(()), Ok(1.0));
    let st = stop.clone();
    let flip = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        st.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    assert!(matches!(inst.function("spin").unwrap().call::<f64>(()), Err(HostError::Cancelled(_))));
    flip.join().unwrap();
}

#[test]
fn eight_threads_call_one_handle_concurrently() {
    let vm = Vm::builder().workers(2).build();
    let inst = load(
        &vm,
        r#"
        const m = new Mutex();
        let total = 0;
        export function add(a: number, b: number): number { return a + b; }
        export function tag(t: string, i: number): string { return t + ":" + i; }
        export async function bump(n: number): Task<number> {
          await m.lock();
          try { const t = total; if (n % 5 == 0) await Task.yield(); total = t + n; return total; }
          finally { m.unlock(); }
        }
        export function fails(n: number): number { throw new Error(`no ${n}`); }
        export function total_(): number { return total; }
        "#,
    );
    let add = inst.function("add").unwrap();
    let tag = inst.function("tag").unwrap();
    let bump = inst.function("bump").unwrap();
    let fails = inst.function("fails").unwrap();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (add, tag, bump, fails) = (add.clone(), tag.clone(), bump.clone(), fails.clone());
            std::thread::spawn(move || {
                for i in 0..200 {
                    let n = (t * 1000 + i) as f64;
                    assert_eq!(add.call::<f64>((n, 1)), Ok(n + 1.0));
                    assert_eq!(tag.call::<String>((format!("t{t}"), i)), Ok(format!("t{t}:{i}")));
                    bump.call::<f64>((i as f64,)).expect("bump");
                    match fails.call::<f64>((n,)) {
                        Err(HostError::Uncaught(e)) => assert_eq!(e.message, format!("no {n}")),
                        other => panic!("unexpected {other:?}"),
                    }
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
fn a_handle_called_from_a_host_function_runs_on_the_workers() {
    // The host function runs inside a call (a worker, or this thread mid-
    // call): the handle's call goes to the workers, with the same typed
    // conversions.
    let vm = Vm::builder().workers(2).build();
    let slot: Arc<Mutex<Option<raya_engine::Function>>> = Arc::new(Mutex::new(None));
    let s = slot.clone();
    vm.register_fn("viaHost", move |n: f64| {
        let f = s.lock().unwrap().clone().expect("set");
        f.call::<String>((n, "!")).map_err(|e| e.to_string())
    });
    let inst = load(
        &vm,
        r#"
        export function mark(n: number, s: string): string { return n + s; }
        export function outer(n: number): string { return "<" + viaHost(n) + ">"; }
        "#,
    );
    *slot.lock().unwrap() = Some(inst.function("mark").unwrap());
    assert_eq!(inst.call::<String>("outer", (4,)), Ok("<4!>".into()));
    let outer = inst.function("outer").unwrap();
    assert_eq!(outer.call_async((5,)).wait(), Ok(HostValue::String("<5!>".into())));
    // The handle keeps the instance alive; dropping the last of both ends it.
    slot.lock().unwrap().take();
}

#[test]
fn exit_through_a_handle_ends_the_instance() {
    let vm = Vm::builder().workers(1).build();
    let inst =
        load(&vm, "export function quit(): number { exit(4); return 1; }\nexport function ok(): number { return 1; }");
    let ok = inst.function("ok").unwrap();
    assert_eq!(ok.call::<f64>(()), Ok(1.0));
    assert_eq!(inst.function("quit").unwrap().call::<f64>(()), Err(HostError::Exit(4)));
    assert_eq!(ok.call::<f64>(()), Err(HostError::Exit(4)));
}

#[test]
fn threads_that_come_and_go_and_instances_dropped_between_calls() {
    // Each thread's calls use a caller bound to it; one that exits gives
    // its caller back for the next thread, and a thread that called an
    // instance since dropped goes on calling others.
    let vm = Vm::builder().workers(1).build();
    let src = "let n = 0;\nexport function next(k: number): number { n += k; return n; }";
    let a = load(&vm, src);
    let next = a.function("next").unwrap();
    for round in 0..40 {
        let next = next.clone();
        std::thread::spawn(move || {
            assert_eq!(next.call::<f64>((1,)), Ok(round as f64 + 1.0));
        })
        .join()
        .unwrap();
    }
    let worker = {
        let next = next.clone();
        std::thread::spawn(move || {
            for i in 0..5 {
                // A new instance per round, called, then dropped.
                let vm = Vm::builder().workers(1).build();
                let b = load(&vm, src);
                assert_eq!(b.call::<f64>("next", (i,)), Ok(i as f64));
                drop(b);
                assert!(next.call::<f64>((0,)).is_ok());
            }
        })
    };
    worker.join().unwrap();
    assert_eq!(next.call::<f64>((0,)), Ok(40.0));
}
