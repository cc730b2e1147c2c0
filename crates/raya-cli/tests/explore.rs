//! `raya run --seed N` replays one schedule byte for byte, different seeds
//! give different schedules, and `--explore` needs a file.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn raya_bin() -> PathBuf {
    match std::env::var_os("RAYA_E2E_BIN") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_BIN_EXE_raya")),
    }
}

fn program(name: &str, src: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("explore");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.raya"));
    std::fs::write(&path, src).unwrap();
    path
}

fn raya(args: &[&str], file: &Path) -> Output {
    Command::new(raya_bin()).args(args).arg(file).stdin(Stdio::null()).output().expect("run raya")
}

fn seeded(seed: u64, file: &Path) -> String {
    let out = raya(&["run", "--seed", &seed.to_string()], file);
    assert!(out.status.success(), "seed {seed}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Tasks that interleave at calls, timers due together, a select with two
/// ready cases, and `Math.random`.
const MIXED: &str = r#"
let log = "";
function note(s: string): void { log += s; }
async function w(name: string): Task<void> {
  for (let i = 0; i < 5; i++) note(name);
}
await [w("a"), w("b"), w("c")];
console.log("interleaving", log);
const order: number[] = [];
await [1, 2, 3, 4].map(async (k) => { sleep(50); order.push(k); });
console.log("timers", order.join(""));
const x = new Channel<number>(1);
const y = new Channel<number>(1);
x.send(1);
y.send(2);
select {
  case const v = x.receive():
    console.log("select x");
  case const v = y.receive():
    console.log("select y");
}
console.log("random", Math.random());
"#;

#[test]
fn a_seed_replays_byte_for_byte() {
    let file = program("mixed", MIXED);
    for seed in [1, 2, 77] {
        let first = raya(&["run", "--seed", &seed.to_string()], &file);
        let again = raya(&["run", "--seed", &seed.to_string()], &file);
        assert_eq!(first.stdout, again.stdout, "seed {seed}");
        assert_eq!(first.stderr, again.stderr, "seed {seed}");
    }
}

#[test]
fn twenty_seeds_give_different_schedules() {
    let file = program("mixed20", MIXED);
    let runs: Vec<String> = (1..=20).map(|s| seeded(s, &file)).collect();
    let line = |prefix: &str| -> HashSet<String> {
        runs.iter().map(|r| r.lines().find(|l| l.starts_with(prefix)).unwrap().to_string()).collect()
    };
    assert!(line("interleaving").len() >= 5, "interleavings: {:?}", line("interleaving"));
    assert!(line("timers").len() >= 5, "timer orders: {:?}", line("timers"));
    assert_eq!(line("select").len(), 2, "both ready cases win for some seed");
    assert!(line("random").len() >= 19, "Math.random follows the seed");
}

#[test]
fn explore_needs_a_file_and_reports_compile_errors_once() {
    let out = Command::new(raya_bin()).args(["run", "--explore", "5", "-"]).stdin(Stdio::null()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--explore needs a program file"));
    let bad = program("bad", "let x = ;\n");
    let out = raya(&["run", "--explore", "5"], &bad);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("error:").count(), 2, "{err}"); // the error and the summary, once
}

#[test]
fn seed_overrides_the_worker_count() {
    let file = program("workers", "console.log(\"one worker\");\n");
    let out = Command::new(raya_bin())
        .args(["run", "--seed", "1", "--workers", "4"])
        .arg(&file)
        .env("RAYA_WORKERS", "2")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "one worker\n");
}
