//! Async host functions as Rust futures (`Vm::register_async`), on the
//! host's executor.

use raya_engine::{BoxFuture, HostError, HostValue, Vm};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Sets its flag when dropped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn tokio_vm(rt: &tokio::runtime::Runtime) -> Vm {
    let handle = rt.handle().clone();
    Vm::builder()
        .workers(2)
        .spawner(move |f: BoxFuture| {
            handle.spawn(f);
        })
        .build()
}

#[test]
fn futures_run_on_the_hosts_tokio_runtime() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let vm = tokio_vm(&rt);
    // Tokio's timer needs Tokio's runtime: it works because the future runs
    // there.
    vm.register_async("delayed", |ms: u64, v: String| async move {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok::<_, String>(format!("{v} after {ms}"))
    });
    vm.register_async("failing", |why: String| async move { Err::<(), _>(format!("failed: {why}")) });
    vm.register_async("spawns", || async {
        // `tokio::spawn` inside: there is a runtime.
        let inner = tokio::spawn(async { 7 }).await.map_err(|e| e.to_string())?;
        Ok::<_, String>(inner * 6)
    });
    let start = Instant::now();
    let r = vm.eval::<HostValue>(
        r#"
        const both = await [delayed(100, "a"), delayed(100, "b")];
        let caught = "";
        try { await failing("x"); } catch (e) { caught = (e as Error).message; }
        let typeErr = "";
        try { delayed("soon" as any, "c"); } catch (e) { typeErr = (e as Error).name + ": " + (e as Error).message; }
        [both, caught, await spawns(), typeErr];
        "#,
    );
    assert_eq!(
        r,
        Ok(HostValue::Array(vec![
            HostValue::Array(vec!["a after 100".into(), "b after 100".into()]),
            "failed: x".into(),
            42.into(),
            "TypeError: delayed: parameter 1 expected a number, got a string".into(),
        ]))
    );
    // The two delays overlapped.
    assert!(start.elapsed() < Duration::from_millis(1000), "{:?}", start.elapsed());
}

#[test]
fn cancelling_the_calling_task_drops_the_future() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let vm = tokio_vm(&rt);
    let dropped = Arc::new(AtomicBool::new(false));
    let d = dropped.clone();
    vm.register_async("hang", move || {
        let flag = DropFlag(d.clone());
        async move {
            let _flag = flag;
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok::<_, String>(())
        }
    });
    let start = Instant::now();
    let r = vm.eval::<String>(
        r#"
        const t = (async () => { await hang(); })();
        await sleep(50);
        t.cancel();
        let state = "";
        try { await t; } catch (e) { state = (e as Error).name; }
        state;
        "#,
    );
    assert_eq!(r, Ok("TaskCancelledError".to_string()));
    // Dropped by the executor, not after an hour.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !dropped.load(Ordering::SeqCst) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(dropped.load(Ordering::SeqCst), "the future was not dropped");
    assert!(start.elapsed() < Duration::from_secs(5));

    // The same through an instance call cancelled by the host.
    dropped.store(false, Ordering::SeqCst);
    let p = vm.compile_source("h.raya", "export async function wait(): Task<void> { await hang(); }").unwrap();
    let inst = vm.load(&p).unwrap();
    let call = inst.call_async("wait", ());
    std::thread::sleep(Duration::from_millis(50));
    call.cancel();
    assert_eq!(call.wait(), Err(HostError::Cancelled("cancelled by the host".into())));
    let deadline = Instant::now() + Duration::from_secs(5);
    while !dropped.load(Ordering::SeqCst) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(dropped.load(Ordering::SeqCst), "the future was not dropped");
}

#[test]
fn without_a_spawner_futures_run_on_threads_of_their_own() {
    let vm = Vm::builder().workers(1).build();
    vm.register_async("later", |x: f64| async move {
        // A future that needs no reactor: a thread wakes it.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            tx.send(x * 2.0).unwrap();
        });
        let v = std::future::poll_fn(move |cx| match rx.try_recv() {
            Ok(v) => std::task::Poll::Ready(v),
            Err(_) => {
                let w = cx.waker().clone();
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(5));
                    w.wake();
                });
                std::task::Poll::Pending
            }
        })
        .await;
        Ok::<_, String>(v)
    });
    assert_eq!(vm.eval::<f64>("await later(21)"), Ok(42.0));
}

#[cfg(feature = "tokio")]
#[test]
fn the_tokio_feature_uses_the_current_runtime() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let vm = rt.block_on(async { Vm::builder().workers(1).tokio().build() });
    vm.register_async("tick", || async {
        tokio::time::sleep(Duration::from_millis(10)).await;
        Ok::<_, String>("tock")
    });
    assert_eq!(vm.eval::<String>("await tick()"), Ok("tock".to_string()));
}

/// The Tokio example's code, compiled into this test too.
#[allow(dead_code)]
#[path = "../examples/tokio_jobs.rs"]
mod tokio_jobs;

#[test]
fn the_tokio_example_handles_a_thousand_concurrent_calls() {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let (ok, timed_out, failed, _) = rt.block_on(tokio_jobs::run(1000, Duration::from_millis(2000))).unwrap();
    // Every 100th job waits 5 s on the host: those time out, the rest finish.
    assert_eq!((ok, timed_out, failed), (990, 10, 0));
}
