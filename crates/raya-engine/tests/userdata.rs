//! Host objects for embedders (`UserData`): methods, getters, sharing
//! with the host, and freeing once the script drops them.

use raya_engine::{HostError, HostValue, UserData, UserMethods, Vm};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;

struct Counter {
    n: AtomicI64,
    dropped: Option<Arc<AtomicBool>>,
}

impl Drop for Counter {
    fn drop(&mut self) {
        if let Some(d) = &self.dropped {
            d.store(true, Ordering::SeqCst);
        }
    }
}

impl UserData for Counter {
    const NAME: &'static str = "Counter";

    fn register(m: &mut UserMethods<Self>) {
        m.method("inc", |c: &Counter, by: Option<i64>| {
            Ok::<_, String>(c.n.fetch_add(by.unwrap_or(1), Ordering::SeqCst) + by.unwrap_or(1))
        });
        m.method("reset", |c: &Counter| {
            c.n.store(0, Ordering::SeqCst);
            Ok::<_, String>(())
        });
        m.method("fail", |_: &Counter, why: String| Err::<(), _>(format!("counter says {why}")));
        m.getter("value", |c: &Counter| c.n.load(Ordering::SeqCst));
    }
}

fn counter(start: i64) -> Counter {
    Counter { n: AtomicI64::new(start), dropped: None }
}

#[test]
fn scripts_call_methods_and_share_the_object_with_the_host() {
    let vm = Vm::builder().workers(2).build();
    vm.register_fn("makeCounter", |start: i64| Ok::<_, String>(HostValue::user_data(counter(start))));
    vm.register_fn("peek", |c: Arc<Counter>| Ok::<_, String>(c.n.load(Ordering::SeqCst)));
    let p = vm
        .compile_source(
            "c.raya",
            r#"
            export const shared = makeCounter(10);
            export function bump(): number { return shared.inc(5); }
            export function check(): any[] {
              const c = makeCounter(1);
              c.inc();
              c.inc(3);
              let err = "";
              try { c.inc("x" as any); } catch (e) { err = (e as Error).name + ": " + (e as Error).message; }
              let failed = "";
              try { c.fail("no"); } catch (e) { failed = (e as Error).message; }
              let notObj = "";
              try { peek(42 as any); } catch (e) { notObj = (e as Error).message; }
              return [c.value, peek(c), err, failed, notObj, c instanceof Object, typeof c.inc];
            }
            "#,
        )
        .unwrap();
    let inst = vm.load(&p).unwrap();
    assert_eq!(
        inst.call::<HostValue>("check", ()),
        Ok(HostValue::Array(vec![
            5.into(),
            5.into(),
            "TypeError: Counter.inc: parameter 1 expected a number, got a string".into(),
            "counter says no".into(),
            "peek: parameter 1 expected a Counter, got a number".into(),
            true.into(),
            "function".into(),
        ]))
    );
    // The host reads the script's object: the same Rust value.
    let shared: Arc<Counter> = inst.get("shared").unwrap();
    assert_eq!(shared.n.load(Ordering::SeqCst), 10);
    assert_eq!(inst.call::<i64>("bump", ()), Ok(15));
    assert_eq!(shared.n.load(Ordering::SeqCst), 15);
    shared.n.store(100, Ordering::SeqCst);
    assert_eq!(inst.call::<i64>("bump", ()), Ok(105));
    // And can hand one in.
    inst.set("shared", HostValue::user_data(counter(-1))).unwrap();
    assert_eq!(inst.call::<i64>("bump", ()), Ok(4));
    // A method that does not exist is a script TypeError, as for any object.
    let e = vm.eval::<HostValue>("makeCounter(1).nope()").unwrap_err();
    assert!(matches!(e, HostError::Uncaught(ref s) if s.name == "TypeError"), "{e:?}");
}

#[test]
fn a_host_object_is_freed_after_the_script_drops_it() {
    let vm = Vm::builder().workers(1).build();
    let dropped = Arc::new(AtomicBool::new(false));
    let d = dropped.clone();
    vm.register_fn("makeCounter", move || {
        Ok::<_, String>(HostValue::user_data(Counter { n: AtomicI64::new(0), dropped: Some(d.clone()) }))
    });
    let d = dropped.clone();
    vm.register_fn("isDropped", move || Ok::<_, String>(d.load(Ordering::SeqCst)));
    let r = vm.eval::<HostValue>(
        r#"
        let c: any = makeCounter();
        c.inc();
        const before = isDropped();
        c = null;
        // Garbage until the collector has run (and freed the counter).
        let rounds = 0;
        while (!isDropped() && rounds < 2000) {
          const junk: number[][] = [];
          for (let i = 0; i < 1000; i++) junk.push([i, i + 1, i + 2]);
          rounds++;
        }
        [before, isDropped()];
        "#,
    );
    assert_eq!(r, Ok(HostValue::Array(vec![false.into(), true.into()])));
}
