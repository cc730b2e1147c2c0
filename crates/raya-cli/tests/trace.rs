//! `raya run --trace`, `raya trace summary`, stall warnings and `--stats`,
//! run through the `raya` binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn raya_bin() -> PathBuf {
    match std::env::var_os("RAYA_E2E_BIN") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_BIN_EXE_raya")),
    }
}

fn dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("trace");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn program(name: &str, src: &str) -> PathBuf {
    let p = dir().join(name);
    std::fs::write(&p, src).unwrap();
    p
}

fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(raya_bin());
    cmd.args(args).env_remove("RAYA_TRACE").env_remove("RAYA_STALL_MS").env_remove("RAYA_STATS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run raya")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A producer, two consumers that lock a mutex and sleep while holding
/// it, and a task that is cancelled while it sleeps.
const CHANNEL_MUTEX: &str = r#"const ch = new Channel<number>(0);
const m = new Mutex();
let total = 0;
async function producer(n: number): Task<void> {
  for (let i = 0; i < n; i++) {
    ch.send(i);
  }
}
async function consumer(n: number): Task<void> {
  for (let i = 0; i < n; i++) {
    const v = ch.receive();
    m.lock();
    total += v;
    sleep(2);
    m.unlock();
  }
}
// The sleeper is asleep before main waits, so its wait is the longest.
let ready: () => void = () => {};
const sleeping = new Promise<void>((r) => { ready = r; });
async function sleeper(): Task<void> {
  ready();
  sleep(60000);
}
const s = sleeper();
await sleeping;
const p = producer(6);
const c1 = consumer(3);
const c2 = consumer(3);
await [p, c1, c2];
// The sleeper's wait outlasts main's by this much, however long its
// cancellation takes to be delivered on a loaded machine.
sleep(100);
s.cancel();
try { await s; } catch (e) {}
console.log(total);
"#;

fn events_of(path: &Path) -> Vec<serde_json::Value> {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).expect("the trace is JSON");
    v["traceEvents"].as_array().expect("traceEvents").clone()
}

#[test]
fn trace_of_a_channel_and_mutex_program_has_every_kind_of_event() {
    for workers in ["1", "2"] {
        let src = program("chan_mutex.raya", CHANNEL_MUTEX);
        let out_file = dir().join(format!("chan_mutex_{workers}.json"));
        let out =
            run(&["run", "--workers", workers, "--trace", out_file.to_str().unwrap(), src.to_str().unwrap()], &[]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "15\n");
        let evs = events_of(&out_file);
        let n = workers.parse::<u64>().unwrap();
        let with = |ph: &str, name: &str| -> Vec<&serde_json::Value> {
            evs.iter().filter(|e| e["ph"] == ph && e["name"] == name).collect()
        };
        // One named track per worker.
        let names: Vec<&str> = with("M", "thread_name").iter().map(|e| e["args"]["name"].as_str().unwrap()).collect();
        assert_eq!(names.len() as u64, n, "{names:?}");
        assert!(names.contains(&"worker 0"));
        let runs: Vec<&serde_json::Value> = evs.iter().filter(|e| e["ph"] == "X" && e["cat"] == "task").collect();
        let stops = |task_fn: &str, stop: &str, reason: &str| {
            runs.iter()
                .filter(|e| {
                    let a = &e["args"];
                    let name = e["name"].as_str().unwrap();
                    name == format!("task {} {task_fn}", a["task"])
                        && a["stop"] == stop
                        && (reason.is_empty() || a["reason"] == reason)
                })
                .count()
        };
        // Every task ran, and each run says why it stopped.
        assert!(stops("producer", "suspended", "channel") >= 1, "producer blocked sending");
        assert_eq!(stops("producer", "completed", ""), 1);
        assert_eq!(stops("consumer", "completed", ""), 2);
        assert!(stops("consumer", "suspended", "sleep") >= 6, "consumers sleep holding the mutex");
        assert!(stops("consumer", "suspended", "mutex") >= 1, "one consumer waits for the mutex");
        assert!(stops("sleeper", "cancelled", "") == 1, "the sleeper ends cancelled");
        assert_eq!(stops("<main>", "completed", ""), 1);
        let mutex_wait = runs.iter().find(|e| e["args"]["reason"] == "mutex").unwrap();
        assert_eq!(mutex_wait["args"]["wait"], "locking a mutex");
        assert!(mutex_wait["args"]["at"].as_str().unwrap().ends_with("chan_mutex.raya:12:7"), "{mutex_wait}");
        assert!(mutex_wait["args"]["object"].as_u64().unwrap() > 0);
        for r in &runs {
            let tid = r["tid"].as_u64().unwrap();
            assert!((1..=n).contains(&tid), "runs are on worker tracks: {r}");
            assert!(r["dur"].as_f64().unwrap() > 0.0);
        }
        // Spawns, the cancellation, the sleeps' timers.
        let spawned: Vec<&str> = with("i", "spawn").iter().map(|e| e["args"]["function"].as_str().unwrap()).collect();
        assert_eq!(spawned.len(), 4, "{spawned:?}");
        for f in ["sleeper", "producer", "consumer"] {
            assert!(spawned.contains(&f), "{spawned:?}");
        }
        let cancels = with("i", "cancel");
        assert_eq!(cancels.len(), 1);
        assert_eq!(cancels[0]["args"]["task"], 1, "main cancelled it");
        assert!(with("i", "timer fired").len() >= 6, "each sleep(2) fires a timer");
        // Every arrow that ends starts somewhere, with the same id.
        let starts: std::collections::HashSet<u64> =
            with("s", "wake").iter().map(|e| e["id"].as_u64().unwrap()).collect();
        let ends = with("f", "wake");
        assert!(ends.len() >= 6, "spawns and wake-ups draw arrows");
        for e in ends {
            assert!(starts.contains(&e["id"].as_u64().unwrap()), "{e}");
            // It lands on a run of the woken task, where that run starts.
            let lands = runs
                .iter()
                .any(|r| r["tid"] == e["tid"] && r["ts"] == e["ts"] && r["args"]["task"] == e["args"]["task"]);
            assert!(lands, "{e}");
        }
    }
}

#[test]
fn summary_reports_tasks_workers_and_the_longest_waits() {
    let src = program("summary.raya", CHANNEL_MUTEX);
    let out_file = dir().join("summary.json");
    let out = run(&["run", "--workers", "2", src.to_str().unwrap()], &[("RAYA_TRACE", out_file.to_str().unwrap())]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = run(&["trace", "summary", out_file.to_str().unwrap()], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.starts_with("trace: "), "{s}");
    assert!(s.contains("on 2 workers, 5 tasks, "), "{s}");
    for needle in ["tasks (by run time)", "task 2 sleeper", "task 3 producer", "workers", "worker 0", "longest waits"] {
        assert!(s.contains(needle), "{needle:?} in {s}");
    }
    // The sleeper waited longest (until cancelled), on its sleep, shown
    // with its source line.
    let longest = s.split("longest waits\n").nth(1).unwrap();
    assert!(longest.lines().next().unwrap().contains("task 2 sleeper: sleeping at "), "{longest}");
    assert_eq!(longest.lines().nth(1).unwrap().trim(), "sleep(60000);");

    let bad = dir().join("not_a_trace.json");
    std::fs::write(&bad, "hello").unwrap();
    let out = run(&["trace", "summary", bad.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("not a trace file"), "{}", text(&out.stderr));
}

#[test]
fn a_long_native_call_is_reported_as_a_stall() {
    let src = program(
        "stall.raya",
        "function big(): number {\n  return \"x\".repeat(400000000).length;\n}\nconsole.log(big());\n",
    );
    let out = run(&["run", "--workers", "2", src.to_str().unwrap()], &[("RAYA_STALL_MS", "20")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "400000000\n");
    let err = text(&out.stderr);
    let first: Vec<&str> = err.lines().filter(|l| l.contains("without reaching a safepoint")).collect();
    assert_eq!(first.len(), 1, "one report per stalled run: {err}");
    assert!(
        first[0].starts_with("raya: stall: worker ") && first[0].contains(" has been running task 1 for "),
        "{err}"
    );
    // The report carries the stack of the task, as it is inside the call.
    let report = err.split("without reaching a safepoint").nth(1).unwrap();
    let report = report.split("raya: stall: task 1 on worker ").next().unwrap();
    let mut lines = report.lines();
    assert!(lines.next().unwrap().ends_with(", inside a native call at:"), "{err}");
    assert!(lines.next().unwrap().starts_with("    at big (") && report.contains("stall.raya:2:"), "{err}");
    assert!(lines.next().unwrap().starts_with("    at <main> ("), "{err}");
    assert!(err.contains("raya: stall: task 1 on worker "), "the end of the stall is reported: {err}");

    // Off with 0; and a task blocked for long is no stall.
    let out = run(&["run", src.to_str().unwrap()], &[("RAYA_STALL_MS", "0")]);
    assert_eq!(text(&out.stderr), "");
    let blocked = program(
        "blocked.raya",
        "sleep(300);\nconst ch = new Channel<number>(1);\nch.send(1);\nconsole.log(ch.receive());\n",
    );
    let out = run(&["run", blocked.to_str().unwrap()], &[("RAYA_STALL_MS", "20")]);
    assert_eq!(text(&out.stderr), "");
    assert_eq!(text(&out.stdout), "1\n");
}

#[test]
fn stats_have_a_row_per_worker_and_the_peak_of_tasks_alive() {
    let src = program("stats.raya", CHANNEL_MUTEX);
    let out = run(&["run", "--workers", "2", "--stats", src.to_str().unwrap()], &[]);
    assert!(out.status.success());
    let err = text(&out.stderr);
    let rows = err.split("workers:\n").nth(1).expect("a workers table");
    let mut lines = rows.lines();
    assert_eq!(
        lines.next().unwrap().split_whitespace().collect::<Vec<_>>(),
        ["worker", "run", "time", "tasks", "run", "steals", "parks"]
    );
    for w in 0..2 {
        let cols: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
        assert_eq!(cols[0], w.to_string(), "{err}");
        assert_eq!(cols[2], "ms");
        assert!(cols[1].parse::<f64>().unwrap() >= 0.0);
    }
    assert!(err.contains("peak tasks alive: 5\n"), "{err}");
    assert!(err.contains("gc cycles: "), "{err}");
}

/// A collection stops every worker: each worker's track gets the same GC
/// slice, with its stop-the-world and collection parts.
#[test]
fn gc_pauses_appear_on_every_worker() {
    let src = program(
        "gc.raya",
        "async function f(n: number): Task<number> {\n  let a: number[] = [];\n  for (let i = 0; i < n; i++) a.push(i);\n  return a.length;\n}\nconsole.log(await f(50) + await f(60));\n",
    );
    let out_file = dir().join("gc.json");
    let out = run(
        &["run", "--workers", "2", "--trace", out_file.to_str().unwrap(), src.to_str().unwrap()],
        &[("RAYA_GC_STRESS", "1")],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "110\n");
    let evs = events_of(&out_file);
    let gc: Vec<&serde_json::Value> = evs.iter().filter(|e| e["ph"] == "X" && e["name"] == "GC").collect();
    assert!(!gc.is_empty());
    let on = |tid: u64| gc.iter().filter(|e| e["tid"] == tid).count();
    assert_eq!(on(1), on(2), "every pause on both workers");
    assert!(on(1) >= 1);
    for e in &gc {
        let a = &e["args"];
        let parts = a["stop_the_world_us"].as_f64().unwrap() + a["collect_us"].as_f64().unwrap();
        assert!(parts <= e["dur"].as_f64().unwrap() + 0.002, "{e}");
    }
}
