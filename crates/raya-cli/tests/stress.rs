//! Stress tests of the task runtime (LANGUAGE.md §6): many tasks spawned and
//! awaited, a deep tree of tasks, and a cancellation storm. Each program
//! checks its own results and prints one line, compared here exactly.
//!
//! By default every program runs once per worker count in a short form.
//! `cargo test -p raya-cli --test stress -- --ignored` runs the long form:
//! bigger sizes, repeated (`RAYA_STRESS_ROUNDS`, default 10) under
//! `--workers 1`, `2` and `4`.
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

fn run(file: &Path, workers: usize, limit: Duration) -> Outcome {
    let mut child = Command::new(raya_bin())
        .arg("run")
        .arg("--workers")
        .arg(workers.to_string())
        .arg(file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start raya");
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
