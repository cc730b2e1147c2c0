//! Synchronous calls (`Instance::call`) run on the caller's thread: they
//! take part in the program's collections like a worker, run beside the
//! workers and beside each other, hand a task that suspends to the
//! workers, and are stopped by the interrupt callback and limits.

use raya_engine::{HostError, HostValue, Instance, Limits, UserData, UserMethods, Vm};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

mod common;
use common::load;

/// A host function `where()` that records the thread each call of it ran on.
fn record_threads(vm: &Vm) -> Arc<Mutex<Vec<ThreadId>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    vm.register_fn("where", move || {
        s.lock().unwrap().push(std::thread::current().id());
        Ok::<_, String>(())
    });
    seen
}

#[test]
fn a_call_runs_on_the_callers_thread_until_it_suspends() {
    let vm = Vm::builder().workers(1).build();
    let seen = record_threads(&vm);
    let inst = load(
        &vm,
        r#"
        export function add(a: number, b: number): number { where(); return a + b; }
        export async function later(ms: number): Task<number> {
          where();
          await sleep(ms);
          where();
          return ms * 2;
        }
        "#,
    );
    let me = std::thread::current().id();
    assert_eq!(inst.call::<f64>("add", (1, 2)), Ok(3.0));
    assert_eq!(*seen.lock().unwrap(), vec![me]);
    seen.lock().unwrap().clear();
    // Suspended on its sleep, the call is left to the worker, which
    // resumes it; the caller waits for the result.
    assert_eq!(inst.call::<f64>("later", (20,)), Ok(40.0));
    let threads = seen.lock().unwrap().clone();
    assert_eq!(threads.len(), 2);
    assert_eq!(threads[0], me, "the call started here");
    assert_ne!(threads[1], me, "and was resumed by a worker");
    // A call started with `call_async` runs on a worker.
    seen.lock().unwrap().clear();
    assert_eq!(inst.call_async("add", (2, 3)).wait(), Ok(HostValue::Number(5.0)));
    assert_ne!(seen.lock().unwrap()[0], me);
}

#[test]
fn calls_from_eight_threads_run_at_once_beside_the_workers() {
    let vm = Vm::builder().workers(2).build();
    let inst = load(
        &vm,
        r#"
        const log: number[] = [];
        // A task of the program's own, busy on the workers throughout.
        export let ticks = 0;
        export let running = true;
        (async () => { while (running) { ticks++; await Task.yield(); } })();
        function fib(n: number): number { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
        export function work(i: number): number { log.push(i); return fib(15) + i; }
        export async function viaTask(i: number): Task<number> {
          const t = (async () => { await Task.yield(); return i * 2; })();
          return (await t) + 1;
        }
        export function logged(): number { return log.length; }
        export function stop(): void { running = false; }
        "#,
    );
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let inst = inst.clone();
            std::thread::spawn(move || {
                for i in 0..100 {
                    let n = (t * 1000 + i) as f64;
                    assert_eq!(inst.call::<f64>("work", (n,)), Ok(610.0 + n));
                    // A call that spawns a task and awaits it.
                    assert_eq!(inst.call::<f64>("viaTask", (n,)), Ok(n * 2.0 + 1.0));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // Every push landed: each array operation is atomic.
    assert_eq!(inst.call::<f64>("logged", ()), Ok(800.0));
    inst.call::<()>("stop", ()).unwrap();
    assert!(inst.get::<f64>("ticks").unwrap() > 0.0);
}

/// A host object whose drops are counted: the collector ran.
struct Token(Arc<AtomicUsize>);

impl Drop for Token {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl UserData for Token {
    const NAME: &'static str = "Token";

    fn register(_: &mut UserMethods<Self>) {}
}

#[test]
fn collections_during_calls_keep_every_live_value() {
    for round in 0..3 {
        let dropped = Arc::new(AtomicUsize::new(0));
        let vm = Vm::builder().workers(2).build();
        let d = dropped.clone();
        vm.register_fn("token", move || Ok::<_, String>(HostValue::user_data(Token(d.clone()))));
        let inst = load(
            &vm,
            r#"
            export let running = true;
            export let churned = 0;
            // Background tasks on the workers allocate all along, so
            // collections start while calls run on their callers' threads.
            async function churn(): Task<void> {
              while (running) {
                let junk: any[] = [];
                for (let i = 0; i < 2000; i++) junk.push({ i, s: `x${i}` });
                churned++;
                await Task.yield();
              }
            }
            churn(); churn();
            export function build(seed: number): number {
              token();
              // Live across many safepoints (and collections): a list whose
              // sum is checked at the end.
              const keep: { v: number; next: any }[] = [];
              let head: any = null;
              for (let i = 0; i < 3000; i++) {
                head = { v: seed + i, next: head, pad: [i, i + 1, `s${i}`] };
                if (i % 100 == 0) keep.push(head);
              }
              let sum = 0;
              for (let n = head; n != null; n = n.next) sum += n.v;
              for (const k of keep) sum -= k.v;
              return sum;
            }
            export function stop(): void { running = false; }
            "#,
        );
        let expect = |seed: f64| {
            let all: f64 = (0..3000).map(|i| seed + i as f64).sum();
            let kept: f64 = (0..3000).filter(|i| i % 100 == 0).map(|i| seed + i as f64).sum();
            all - kept
        };
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let inst = inst.clone();
                std::thread::spawn(move || {
                    for i in 0..40 {
                        let seed = (t * 100 + i) as f64;
                        assert_eq!(inst.call::<f64>("build", (seed,)), Ok(expect(seed)), "round {round}");
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        inst.call::<()>("stop", ()).unwrap();
        assert!(inst.get::<f64>("churned").unwrap() > 0.0);
        // The tokens of finished calls were collected: collections ran
        // while (and between) the calls.
        let deadline = Instant::now() + Duration::from_secs(10);
        while dropped.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
            inst.call::<f64>("build", (0,)).unwrap();
        }
        assert!(dropped.load(Ordering::SeqCst) > 0, "no collection ran");
    }
}

#[test]
fn an_inline_call_is_stopped_by_the_interrupt_callback_and_its_limits() {
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let vm = Vm::builder().workers(1).interrupt(move || s.load(Ordering::Relaxed)).build();
    let seen = record_threads(&vm);
    let inst = load(
        &vm,
        r#"
        export let cleanedUp = false;
        export function spin(): void { where(); try { while (true) {} } finally { cleanedUp = true; } }
        export function ping(): string { return "pong"; }
        "#,
    );
    // The host cancels a computing call from another thread.
    let flip = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            stop.store(true, Ordering::Relaxed);
        })
    };
    let start = Instant::now();
    assert_eq!(inst.call::<()>("spin", ()), Err(HostError::Cancelled("interrupted by the host".into())));
    assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
    flip.join().unwrap();
    assert_eq!(seen.lock().unwrap()[0], std::thread::current().id(), "it ran here");
    assert_eq!(inst.get::<bool>("cleanedUp"), Ok(true));
    stop.store(false, Ordering::Relaxed);
    assert_eq!(inst.call::<String>("ping", ()), Ok("pong".into()));

    // The instance's limits stop its inline calls.
    let vm = Vm::builder().workers(1).limits(Limits::none().time(Duration::from_millis(100))).build();
    let inst = load(&vm, "export function spin(): void { while (true) {} }");
    assert_eq!(inst.call::<()>("spin", ()), Err(HostError::Cancelled("time limit of 100ms reached".into())));
    let vm = Vm::builder().workers(1).limits(Limits::none().instructions(50_000)).build();
    let inst = load(&vm, "export function spin(): void { while (true) {} }");
    assert_eq!(inst.call::<()>("spin", ()), Err(HostError::Cancelled("instruction budget exhausted".into())));
}

#[test]
fn a_host_function_calling_back_into_its_instance_uses_the_workers() {
    // The host function runs on the caller's thread inside an inline call,
    // or on a worker inside a task; a call from there goes to the workers.
    let vm = Vm::builder().workers(2).build();
    let slot: Arc<Mutex<Option<Instance>>> = Arc::new(Mutex::new(None));
    let s = slot.clone();
    vm.register_fn("viaHost", move |n: f64| {
        let inst = s.lock().unwrap().clone().expect("loaded");
        inst.call::<f64>("double", (n,)).map_err(|e| e.to_string())
    });
    let inst = load(
        &vm,
        r#"
        export function double(n: number): number { return n * 2; }
        export function outer(n: number): number { return viaHost(n) + 1; }
        "#,
    );
    *slot.lock().unwrap() = Some(inst.clone());
    assert_eq!(inst.call::<f64>("outer", (20,)), Ok(41.0));
    assert_eq!(inst.call_async("outer", (1,)).wait(), Ok(HostValue::Number(3.0)));
    slot.lock().unwrap().take();
}
