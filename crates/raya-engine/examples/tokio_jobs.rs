//! A Tokio service that loads a Raya module once and calls its
//! `handle(job)` from 1,000 concurrent Tokio tasks, each with a time-out,
//! then prints the throughput.
//!
//! The script's calls are tasks on the VM's workers (in parallel with
//! each other and with Tokio's threads); each awaits an async host
//! function whose future runs on this Tokio runtime (`tokio::time::sleep`
//! needs it). A `Call` is a future, so `tokio::time::timeout` bounds it;
//! a call that times out is cancelled, which drops its host future.
//!
//! Run it with `cargo run --release -p raya-engine --example tokio_jobs`.

use raya_engine::{BoxFuture, HostError, Vm};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const SCRIPT: &str = r#"
let handled = 0;
const seen = new Map<string, number>();
// Calls run in parallel on several workers: a read-modify-write of shared
// state is two operations, so the counters are updated under a lock.
const counters = new Mutex();

// One job: "look up" its user (a host call that waits on Tokio), then
// compute a score. Every 100th job is slow and hits the host's time-out.
export async function handle(job: { id: number, user: string }): Task<{ id: number, score: number }> {
  const profile = await lookup(job.user, job.id % 100 == 99 ? 5000 : 1);
  let score = 0;
  for (let i = 0; i < 1000; i++) score = (score + i * profile.weight) % 9973;
  counters.lock();
  handled++;
  seen.set(job.user, (seen.get(job.user) ?? 0) + 1);
  counters.unlock();
  return { id: job.id, score };
}

export function stats(): number[] { return [handled, seen.size]; }
"#;

/// The outcome of a run: (completed, timed out, failed, elapsed).
pub type Summary = (usize, usize, usize, Duration);

/// Loads the module and runs `jobs` calls with a per-call `timeout`.
pub async fn run(jobs: usize, timeout: Duration) -> Result<Summary, HostError> {
    let handle = tokio::runtime::Handle::current();
    let vm = Vm::builder()
        .spawner(move |f: BoxFuture| {
            handle.spawn(f);
        })
        .build();
    // An async host function: its future runs on this Tokio runtime.
    vm.register_async("lookup", |user: String, delay_ms: u64| async move {
        tokio::time::sleep(Duration::from_millis(delay_ms)).await;
        let weight = user.len() as f64;
        Ok::<_, String>(raya_engine::HostValue::Object(vec![("weight".into(), weight.into())]))
    });
    let program = vm.compile_source("jobs.raya", SCRIPT)?;
    let instance = vm.load(&program)?;

    let ok = Arc::new(AtomicUsize::new(0));
    let timed_out = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = Vec::with_capacity(jobs);
    for id in 0..jobs {
        let (instance, ok, timed_out, failed) = (instance.clone(), ok.clone(), timed_out.clone(), failed.clone());
        tasks.push(tokio::spawn(async move {
            let job = raya_engine::HostValue::Object(vec![
                ("id".into(), (id as f64).into()),
                ("user".into(), format!("user{}", id % 37).into()),
            ]);
            let call = instance.call_async("handle", (job,));
            // Kept to cancel the call if the time-out wins.
            let canceller = call.canceller();
            match tokio::time::timeout(timeout, call).await {
                Ok(Ok(_)) => ok.fetch_add(1, Ordering::Relaxed),
                Ok(Err(_)) => failed.fetch_add(1, Ordering::Relaxed),
                Err(_) => {
                    canceller.cancel();
                    timed_out.fetch_add(1, Ordering::Relaxed)
                }
            };
        }));
    }
    for t in tasks {
        t.await.expect("job task");
    }
    let elapsed = start.elapsed();
    let (ok, timed_out, failed) =
        (ok.load(Ordering::Relaxed), timed_out.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    let stats: Vec<f64> = instance.call("stats", ())?;
    assert_eq!(stats[0] as usize, ok, "the script handled each completed job once");
    Ok((ok, timed_out, failed, elapsed))
}

#[tokio::main]
async fn main() {
    let jobs = 1000;
    match run(jobs, Duration::from_millis(500)).await {
        Ok((ok, timed_out, failed, elapsed)) => {
            println!(
                "{jobs} jobs in {:.1} ms: {ok} done, {timed_out} timed out, {failed} failed",
                elapsed.as_secs_f64() * 1e3
            );
            println!("throughput: {:.0} jobs/s", ok as f64 / elapsed.as_secs_f64());
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
