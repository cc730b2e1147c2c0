//! Stress tests of the task runtime (LANGUAGE.md §6): many tasks spawned and
//! awaited, a deep tree of tasks, a cancellation storm, many producers and
//! consumers on one channel (buffered and rendezvous), and many tasks
//! writing to one array, object and Map (the memory model). Each program
//! checks its own results and prints one line, compared here exactly.
//!
//! By default every program runs once per worker count in a short form.
//! `cargo test -p raya-cli --test stress -- --ignored` runs the long form:
//! bigger sizes, repeated (`RAYA_STRESS_ROUNDS`, default 10) under
//! `--workers 1`, `2` and `4`. One long test alone, e.g.:
//!
//!     RAYA_STRESS_ROUNDS=3 cargo test -p raya-cli --test stress \
//!         stress_long_channel_buffered -- --ignored --nocapture
//!
//! `RAYA_E2E_BIN` selects the binary, as for the e2e suite.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Per run, short forms: generous, as debug builds are slow.
const TIMEOUT: Duration = Duration::from_secs(60);

/// Per run, long forms.
const LONG_TIMEOUT: Duration = Duration::from_secs(300);

fn raya_bin() -> PathBuf {
    match std::env::var_os("RAYA_E2E_BIN") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_BIN_EXE_raya")),
    }
}

/// Writes `src` to a temporary `.raya` file and returns its path.
fn program(name: &str, src: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("stress");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.raya"));
    std::fs::write(&path, src).unwrap();
    path
}

struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
    timed_out: bool,
}

/// Threads that read the child's stdout and stderr to the end (so a chatty
/// child never blocks on a full pipe); join them for the text.
fn collect_output(
    child: &mut std::process::Child,
) -> (std::thread::JoinHandle<String>, std::thread::JoinHandle<String>) {
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    (out_reader, err_reader)
}

fn run(file: &Path, workers: usize, limit: Duration) -> Outcome {
    let mut child = Command::new(raya_bin())
        .arg("run")
        .arg("--workers")
        .arg(workers.to_string())
        .arg(file)
        // Nothing may reach stderr, and a loaded machine can hold a
        // worker inside one run for a second: no stall warnings.
        .env("RAYA_STALL_MS", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start raya");
    let (out_reader, err_reader) = collect_output(&mut child);
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > limit {
            timed_out = true;
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let elapsed = start.elapsed();
    Outcome {
        code: status.code(),
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
        elapsed,
        timed_out,
    }
}

/// Runs `src` `rounds` times under each worker count and checks that it exits
/// with 0, prints exactly `want` and nothing on stderr.
fn check(name: &str, src: &str, want: &str, workers: &[usize], rounds: usize) {
    let file = program(name, src);
    let limit = if rounds > 1 { LONG_TIMEOUT } else { TIMEOUT };
    let mut failures = Vec::new();
    'rounds: for round in 0..rounds {
        for &w in workers {
            let o = run(&file, w, limit);
            eprintln!("{name}: round {round}, --workers {w}: {:.2}s", o.elapsed.as_secs_f64());
            let what = format!("{name} (round {round}, --workers {w})");
            if o.timed_out {
                failures.push(format!("{what}: killed after {limit:?}"));
                break 'rounds; // one failing run is enough
            }
            if o.code != Some(0) || o.stdout != want || !o.stderr.is_empty() {
                failures.push(format!(
                    "{what}: exit {:?}\n  stdout: {:?}\n  want:   {want:?}\n  stderr: {:?}",
                    o.code,
                    o.stdout,
                    truncate(&o.stderr)
                ));
                break 'rounds;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn truncate(s: &str) -> &str {
    match s.char_indices().nth(2000) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

fn long_rounds() -> usize {
    std::env::var("RAYA_STRESS_ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(10)
}

// ---------------------------------------------------------------------------
// The programs

/// `n` tasks, each yielding once, all awaited with one `await [..]`, then
/// `n` more awaited one by one.
fn many_tasks(n: u64) -> (String, String) {
    let src = format!(
        r#"async function f(i: number): Task<number> {{
  await Task.yield();
  return i;
}}
const ts: Task<number>[] = [];
for (let i = 0; i < {n}; i++) ts.push(f(i));
const vs = await ts;
let sum = 0;
let inOrder = true;
for (let i = 0; i < vs.length; i++) {{
  sum += vs[i];
  if (vs[i] !== i) inOrder = false;
}}
const us: Task<number>[] = [];
for (let i = 0; i < {n}; i++) us.push(f(i));
let sum2 = 0;
for (const u of us) sum2 += await u;
console.log(vs.length, sum, sum2, inOrder);
"#
    );
    let sum = n * (n - 1) / 2;
    (src, format!("{n} {sum} {sum} true\n"))
}

/// A binary tree of tasks of the given depth; every node sleeps 0 or yields.
fn task_tree(depth: u32) -> (String, String) {
    let src = format!(
        r#"async function node(d: number): Task<number> {{
  if (d === 0) {{
    await sleep(0);
    return 1;
  }}
  const l = node(d - 1);
  const r = node(d - 1);
  await Task.yield();
  return (await l) + (await r) + 1;
}}
console.log(await node({depth}));
"#
    );
    let nodes = (1u64 << (depth + 1)) - 1;
    (src, format!("{nodes}\n"))
}

/// A cancellation storm: `n` tasks sleeping or awaiting a promise, plus 16
/// spinning ones, all cancelled at once once all have started (every one must end cancelled, with
/// its finally block run); then `n` fresh tasks cancelled right after being
/// spawned (each must end, cancelled or, if it already ran, with its value).
fn cancel_storm(n: u64) -> (String, String) {
    let src = format!(
        r#"const p = new Promise<number>();
let stop = false;
const finals: number[] = [];
const begun: number[] = [];
async function sleeper(i: number): Task<number> {{
  begun.push(i);
  try {{ await sleep(60000); return i; }} finally {{ finals.push(i); }}
}}
async function waiter(i: number): Task<number> {{
  begun.push(i);
  try {{ await p; return i; }} finally {{ finals.push(i); }}
}}
async function spinner(i: number): Task<number> {{
  begun.push(i);
  try {{ while (!stop) {{}} return i; }} finally {{ finals.push(i); }}
}}
async function idle(i: number): Task<number> {{
  return i;
}}
const ts: Task<number>[] = [];
for (let i = 0; i < 16; i++) ts.push(spinner(i));
for (let i = 0; i < {n}; i++) {{
  ts.push(i % 2 === 0 ? sleeper(i) : waiter(i));
  if (i % 1000 === 0) await Task.yield();
}}
while (begun.length < ts.length) await sleep(1);
for (const t of ts) t.cancel();
const fresh: Task<number>[] = [];
for (let i = 0; i < {n}; i++) fresh.push(idle(i));
for (const t of fresh) t.cancel();
let cancelled = 0;
for (const t of ts) {{
  try {{ await t; }} catch (e) {{ if (e instanceof TaskCancelledError) cancelled++; }}
}}
let ended = 0;
for (const t of fresh) {{
  try {{ if ((await t) >= 0) ended++; }} catch (e) {{ if (e instanceof TaskCancelledError) ended++; }}
}}
stop = true;
p.resolve(0);
console.log(cancelled, finals.length, ended);
"#
    );
    (src, format!("{} {} {n}\n", n + 16, n + 16))
}

/// `producers` tasks send `n` distinct values (each its own range) on one
/// channel of the given capacity (0: rendezvous) while `consumers` tasks
/// receive them, half with `receive()`, half with `for … of`. Every consumer
/// checks that each producer's values reach it in the order sent; the main
/// task then counts every value over all consumers: each must arrive exactly
/// once (a per-value count catches both losses and duplicates).
fn channel_mpmc(n: u64, producers: u64, consumers: u64, capacity: u64) -> (String, String) {
    assert_eq!(n % producers, 0);
    let src = format!(
        r#"const N = {n};
const P = {producers};
const C = {consumers};
const PER = N / P;
const ch = new Channel<number>({capacity});

async function producer(p: number) {{
  for (let i = 0; i < PER; i++) ch.send(p * PER + i);
}}

// Returns the values received, then 1 if they came in per-producer order.
async function consumer(c: number): Task<number[]> {{
  const got: number[] = [];
  const last: number[] = new Array(P).fill(-1);
  let ordered = 1;
  const take = (v: number) => {{
    const p = Math.floor(v / PER);
    if (p >= 0 && p < P) {{
      if (!(v > last[p])) ordered = 0;
      last[p] = v;
    }}
    got.push(v);
  }};
  if (c % 2 === 0) {{
    while (true) {{
      const v = ch.receive();
      if (v === null) break;
      take(v);
    }}
  }} else {{
    for (const v of ch) take(v);
  }}
  got.push(ordered);
  return got;
}}

const cs: Task<number[]>[] = [];
for (let c = 0; c < C; c++) cs.push(consumer(c));
const ps: Task<void>[] = [];
for (let p = 0; p < P; p++) ps.push(producer(p));
await ps;
ch.close();
const results = await cs;

const seen: number[] = new Array(N).fill(0);
let received = 0;
let invalid = 0;
let ordered = true;
for (const got of results) {{
  if (got[got.length - 1] !== 1) ordered = false;
  for (let i = 0; i < got.length - 1; i++) {{
    const v = got[i];
    received++;
    if (Number.isInteger(v) && v >= 0 && v < N) seen[v]++;
    else invalid++;
  }}
}}
let lost = 0;
let duplicated = 0;
for (let v = 0; v < N; v++) {{
  if (seen[v] === 0) lost++;
  else if (seen[v] > 1) duplicated += seen[v] - 1;
}}
console.log("received", received, "lost", lost, "duplicated", duplicated,
  "invalid", invalid, "ordered", ordered, "left", ch.length);
"#
    );
    (src, format!("received {n} lost 0 duplicated 0 invalid 0 ordered true left 0\n"))
}

/// Memory model (LANGUAGE.md §6): `tasks` tasks each push `per` distinct
/// values to one array; push to and pop from a second array used as a
/// stack; overwrite their own fields and one shared field of one object
/// and add new properties to it; and set keys of one Map. Afterwards the
/// array holds every value exactly once and each task's values in order,
/// the popped values plus the rest of the stack are every value exactly
/// once, and the object and Map hold exactly the expected keys and values.
fn shared_memory(tasks: u64, per: u64) -> (String, String) {
    let src = format!(
        r#"const T = {tasks};
const PER = {per};
const FIELDS = 8;
const KEYS = 64;
// The last round i < PER with i % m === k.
const lastRound = (k: number, m: number) => k + m * Math.floor((PER - 1 - k) / m);
const arr: number[] = [];
const stack: number[] = [];
const obj: any = {{ shared: -1 }};
const map = new Map<number, number>();

// Returns the values this task popped from the stack.
async function worker(t: number): Task<number[]> {{
  const popped: number[] = [];
  for (let i = 0; i < PER; i++) {{
    const v = t * PER + i;
    arr.push(v);
    stack.push(v);
    if (i % 2 === 1) {{
      const p = stack.pop();
      if (p !== undefined) popped.push(p);
    }}
    obj["f" + t + "_" + (i % FIELDS)] = v;
    obj.shared = v;
    if (i % 16 === 0) obj["n" + v] = v;
    map.set(i % KEYS, v);
    if (i % 64 === 0) await Task.yield();
  }}
  return popped;
}}

const ts: Task<number[]>[] = [];
for (let t = 0; t < T; t++) ts.push(worker(t));
const pops = await ts;
const N = T * PER;

function exactlyOnce(lists: number[][]): boolean {{
  const seen: number[] = new Array(N).fill(0);
  let n = 0;
  for (const list of lists) {{
    for (const v of list) {{
      if (!Number.isInteger(v) || v < 0 || v >= N) return false;
      seen[v]++;
      n++;
    }}
  }}
  return n === N && seen.every((c) => c === 1);
}}

const last: number[] = new Array(T).fill(-1);
let ordered = true;
for (const v of arr) {{
  const t = Math.floor(v / PER);
  if (t >= 0 && t < T && v > last[t]) last[t] = v;
  else ordered = false;
}}
const arrOk = arr.length === N && exactlyOnce([arr]) && ordered;
const stackOk = exactlyOnce([stack, ...pops]);

let objOk = (obj.shared % PER) === PER - 1;
let added = 0;
for (let t = 0; t < T; t++) {{
  for (let f = 0; f < FIELDS; f++) {{
    if (obj["f" + t + "_" + f] !== t * PER + lastRound(f, FIELDS)) objOk = false;
  }}
  for (let i = 0; i < PER; i += 16) {{
    if (obj["n" + (t * PER + i)] !== t * PER + i) objOk = false;
    added++;
  }}
}}
if (Object.keys(obj).length !== 1 + T * FIELDS + added) objOk = false;

let mapOk = map.size === KEYS;
for (let k = 0; k < KEYS; k++) {{
  const v = map.get(k);
  if (v === undefined || v % PER !== lastRound(k, KEYS)) mapOk = false;
}}
console.log("array", arr.length, arrOk, "stack", stackOk, "object", objOk, "map", mapOk);
"#
    );
    let n = tasks * per;
    (src, format!("array {n} true stack true object true map true\n"))
}

// ---------------------------------------------------------------------------
// Short forms (run by default)

#[test]
fn stress_100k_tasks() {
    let (src, want) = many_tasks(100_000);
    check("many_tasks_100k", &src, &want, &[1, 4], 1);
}

#[test]
fn stress_task_tree() {
    let (src, want) = task_tree(12);
    check("task_tree_12", &src, &want, &[1, 4], 1);
}

#[test]
fn stress_cancel_storm() {
    let (src, want) = cancel_storm(10_000);
    check("cancel_storm_10k", &src, &want, &[1, 4], 1);
}

#[test]
fn stress_channel_buffered() {
    let (src, want) = channel_mpmc(100_000, 8, 8, 16);
    check("channel_buffered_100k", &src, &want, &[1, 4], 1);
}

#[test]
fn stress_channel_rendezvous() {
    let (src, want) = channel_mpmc(100_000, 8, 8, 0);
    check("channel_rendezvous_100k", &src, &want, &[1, 4], 1);
}

#[test]
fn stress_shared_memory() {
    let (src, want) = shared_memory(64, 2_000);
    check("shared_memory_128k", &src, &want, &[1, 4], 1);
}

// ---------------------------------------------------------------------------
// Long forms: `cargo test -p raya-cli --test stress -- --ignored`

#[test]
#[ignore]
fn stress_long_100k_tasks() {
    let (src, want) = many_tasks(100_000);
    check("many_tasks_100k_long", &src, &want, &[1, 2, 4], long_rounds());
}

#[test]
#[ignore]
fn stress_long_task_tree() {
    let (src, want) = task_tree(16);
    check("task_tree_16", &src, &want, &[1, 2, 4], long_rounds());
}

#[test]
#[ignore]
fn stress_long_cancel_storm() {
    let (src, want) = cancel_storm(100_000);
    check("cancel_storm_100k", &src, &want, &[1, 2, 4], long_rounds());
}

#[test]
#[ignore]
fn stress_long_channel_buffered() {
    let (src, want) = channel_mpmc(1_000_000, 8, 8, 16);
    check("channel_buffered_1m", &src, &want, &[1, 2, 4], long_rounds());
}

#[test]
#[ignore]
fn stress_long_channel_rendezvous() {
    let (src, want) = channel_mpmc(1_000_000, 8, 8, 0);
    check("channel_rendezvous_1m", &src, &want, &[1, 2, 4], long_rounds());
}

#[test]
#[ignore]
fn stress_long_shared_memory() {
    let (src, want) = shared_memory(64, 10_000);
    check("shared_memory_640k", &src, &want, &[1, 2, 4], long_rounds());
}

// ---------------------------------------------------------------------------
// Memory: the collector sees growth; allocation failures are RangeErrors

/// Peak resident set (KiB) of a running process, from `/proc` (Linux).
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs `raya run --stats --workers W file` and returns the outcome with the
/// peak RSS seen (polled; the program ends with a short sleep so the last
/// reading is its peak).
fn run_measured(file: &Path, workers: usize, limit: Duration) -> (Outcome, u64) {
    let mut child = Command::new(raya_bin())
        .args(["run", "--stats", "--workers", &workers.to_string()])
        .arg(file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start raya");
    let (out_reader, err_reader) = collect_output(&mut child);
    let start = Instant::now();
    let mut peak = 0;
    let mut timed_out = false;
    let status = loop {
        if let Some(kib) = peak_rss_kib(child.id()) {
            peak = peak.max(kib);
        }
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > limit {
            timed_out = true;
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let o = Outcome {
        code: status.code(),
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
        elapsed: start.elapsed(),
        timed_out,
    };
    (o, peak)
}

/// Builds and drops arrays in a loop, the way the prelude's `map` and
/// `filter` do and by `push` and length writes: about 1 MB of array storage
/// per round, all garbage by the next one.
fn array_churn(rounds: u64) -> (String, String) {
    let src = format!(
        r#"const small: number[] = [];
for (let i = 0; i < 2000; i++) small.push(i);
let total = 0;
for (let r = 0; r < {rounds}; r++) {{
  const a: number[] = [];
  a.length = 100000;
  a[100000] = r;
  const b: number[] = [];
  for (let i = 0; i < 2000; i++) b.push(i);
  const c = small.map((x: number) => x * 2).filter((x: number) => x % 3 === 0);
  total += a.length + b.length + c.length;
}}
await sleep(300);
console.log(total);
"#
    );
    let total = rounds * (100_001 + 2000 + 667);
    (src, format!("{total}\n"))
}

/// Peak RSS the churn may reach: without growth counted, 400 rounds reach
/// about 400 MB; with it, a few tens of MB. The bound leaves room for a
/// loaded machine and debug builds.
const CHURN_PEAK_KIB: u64 = 200 * 1024;

fn check_churn(name: &str, rounds: u64, workers: &[usize], limit: Duration) {
    let (src, want) = array_churn(rounds);
    let file = program(name, &src);
    for &w in workers {
        let (o, peak) = run_measured(&file, w, limit);
        eprintln!("{name}: --workers {w}: {:.2}s, peak {} MiB", o.elapsed.as_secs_f64(), peak / 1024);
        assert!(!o.timed_out, "{name}: killed after {limit:?}");
        assert_eq!((o.code, o.stdout.as_str()), (Some(0), want.as_str()), "{name}: stderr {}", truncate(&o.stderr));
        let cycles: u64 = o
            .stderr
            .lines()
            .find_map(|l| l.strip_prefix("gc cycles: "))
            .and_then(|rest| rest.split(',').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{name}: no gc statistics in {:?}", truncate(&o.stderr)));
        assert!(cycles > 0, "{name} (--workers {w}): no collection happened");
        assert!(peak > 0, "{name}: the peak RSS could not be read");
        assert!(peak < CHURN_PEAK_KIB, "{name} (--workers {w}): peak RSS {peak} KiB");
    }
}

#[test]
#[cfg(target_os = "linux")]
fn stress_array_churn_is_collected() {
    check_churn("array_churn_400", 400, &[1, 2], TIMEOUT);
}

#[test]
#[ignore]
#[cfg(target_os = "linux")]
fn stress_long_array_churn_is_collected() {
    check_churn("array_churn_4000", 4000, &[1, 2, 4], LONG_TIMEOUT);
}

/// A 100 MiB structure (100 arrays of 131,072 elements), built and
/// dropped a hundred times: 10 GiB allocated in all, of which at most one
/// or two structures may be alive at once. Pacing (twice the live heap)
/// and the concurrent sweep must keep the peak to a few hundred MiB.
#[test]
#[cfg(target_os = "linux")]
fn stress_dropped_100mb_structures_stay_bounded() {
    let src = r#"let total = 0;
for (let r = 0; r < 100; r++) {
  const big: number[][] = [];
  for (let i = 0; i < 100; i++) {
    const a: number[] = [];
    a.length = 131072;
    a[131071] = r;
    big.push(a);
  }
  for (const a of big) total += a.length + a[131071] - r;
}
console.log(total);
"#;
    let file = program("dropped_100mb_structures", src);
    for w in [1, 4] {
        let (o, peak) = run_measured(&file, w, LONG_TIMEOUT);
        eprintln!("100 MiB x 100: --workers {w}: {:.2}s, peak {} MiB", o.elapsed.as_secs_f64(), peak / 1024);
        assert!(!o.timed_out, "killed after {LONG_TIMEOUT:?}");
        assert_eq!((o.code, o.stdout.as_str()), (Some(0), "1310720000\n"), "stderr {}", truncate(&o.stderr));
        assert!(o.stderr.contains("gc cycles: "), "{}", truncate(&o.stderr));
        // Live: one structure (100 MiB), plus the next one being built
        // before the collection that frees the last; no leak of rounds.
        assert!(peak < 600 * 1024, "--workers {w}: peak RSS {} MiB", peak / 1024);
    }
}

/// Under an address-space limit, sizes a script chooses that the allocator
/// refuses are RangeErrors, not aborts (exit 134).
#[test]
#[cfg(target_os = "linux")]
fn allocation_failures_are_range_errors() {
    let src = r#"function attempt(what: string, f: () => number): void {
  try {
    console.log(what, f());
  } catch (e) {
    console.log(what, e instanceof RangeError, e.message);
  }
}
attempt("new Array", () => new Array(2 ** 28).length);
attempt("length", () => {
  const a: number[] = [];
  a.length = 2 ** 28;
  return a.length;
});
attempt("index", () => {
  const a: number[] = [];
  a[2 ** 28] = 1;
  return a.length;
});
let s = "x";
attempt("doubling", () => {
  for (;;) s = s + s;
});
"#;
    let file = program("allocation_failures", src);
    // 1 GB of address space: the program itself fits, a 2 GB array does not.
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1000000 && exec \"$0\" run \"$1\"")
        .arg(raya_bin())
        .arg(&file)
        .output()
        .expect("cannot start sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        (out.status.code(), stdout.as_ref()),
        (
            Some(0),
            "new Array true Invalid array length\nlength true Invalid array length\n\
             index true Invalid array length\ndoubling true Invalid string length\n"
        ),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

// ---------------------------------------------------------------------------
// Sockets

/// `n` clients at once through one echo server (a task per connection):
/// each sends its own message, half-closes, and checks every byte that
/// comes back.
fn echo_clients(n: u64) -> (String, String) {
    let src = format!(
        r#"import {{ listen, connect }} from "std:net";
const l = listen("127.0.0.1:0");
async function handle(c: any) {{
  for (;;) {{
    const b = c.read();
    if (b === null) break;
    c.write(b);
  }}
  c.close();
}}
async function server() {{
  for (const c of l) handle(c);
}}
const s = server();
async function client(i: number): Task<number> {{
  const c = connect(l.address);
  const msg = "client " + i + " " + "xyz".repeat(i % 300) + "\n";
  c.write(msg);
  c.closeWrite();
  const back = c.readAll();
  c.close();
  if (back.length !== msg.length) return 0;
  for (let k = 0; k < msg.length; k++) if (back[k] !== msg.charCodeAt(k)) return 0;
  return msg.length;
}}
const ts: Task<number>[] = [];
let want = 0;
for (let i = 0; i < {n}; i++) {{
  want += ("client " + i + " " + "xyz".repeat(i % 300) + "\n").length;
  ts.push(client(i));
}}
let ok = 0;
let bytes = 0;
for (const t of ts) {{
  const b = await t;
  if (b > 0) ok++;
  bytes += b;
}}
l.close();
await s;
console.log(ok, bytes === want);
"#
    );
    (src, format!("{n} true\n"))
}

/// Two sockets per connection (client and server side) must fit under the
/// open-file limit; the soft limit is raised to the hard one here, and the
/// `raya` child inherits it.
fn raise_open_file_limit() {
    // SAFETY: plain syscalls on a local struct.
    unsafe {
        let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

#[test]
fn stress_net_2000_echo_connections() {
    raise_open_file_limit();
    let (src, want) = echo_clients(2_000);
    check("net_echo_2000", &src, &want, &[2], 1);
}

#[test]
#[ignore]
fn stress_long_net_echo_connections() {
    raise_open_file_limit();
    let (src, want) = echo_clients(5_000);
    check("net_echo_5000_long", &src, &want, &[1, 2, 4], long_rounds());
}
