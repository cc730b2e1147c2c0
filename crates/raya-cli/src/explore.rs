//! `raya run --explore K FILE`: runs FILE under seeds 1..=K (each a
//! `raya run --seed N FILE` child process, several at once) and reports the
//! first seed whose run fails, with the command that replays it.

use raya_engine::compiler::compile_file;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// How a failing run ended, and what it printed.
struct Failure {
    seed: u64,
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

pub fn explore(file: &Path, args: &[String], k: u64, max_heap: Option<usize>) -> ExitCode {
    // A compile error is reported once, not once per seed.
    if let Err(e) = compile_file(file) {
        eprint!("{}", e.render());
        return ExitCode::from(2);
    }
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: cannot find the raya executable to run the seeds: {e}");
            return ExitCode::from(2);
        }
    };
    let next = AtomicU64::new(1);
    // The smallest failing seed found so far: seeds after it are not
    // started, seeds before it still finish, so the report names the
    // first failing seed whatever the parallelism.
    let first: Mutex<Option<Failure>> = Mutex::new(None);
    let spawn_error: Mutex<Option<String>> = Mutex::new(None);
    let parallel = std::thread::available_parallelism().map_or(1, |n| n.get()).min(k.max(1) as usize);
    std::thread::scope(|scope| {
        for _ in 0..parallel {
            scope.spawn(|| loop {
                let seed = next.fetch_add(1, Ordering::Relaxed);
                let stop = first.lock().unwrap().as_ref().map_or(k, |f| f.seed.min(k + 1) - 1);
                if seed > stop || spawn_error.lock().unwrap().is_some() {
                    return;
                }
                let mut cmd = Command::new(&exe);
                cmd.arg("run").arg("--seed").arg(seed.to_string());
                if let Some(bytes) = max_heap {
                    cmd.arg("--max-heap").arg(bytes.to_string());
                }
                cmd.arg(file).args(args).stdin(Stdio::null());
                let out = match cmd.output() {
                    Ok(o) => o,
                    Err(e) => {
                        *spawn_error.lock().unwrap() = Some(format!("cannot run {}: {e}", exe.display()));
                        return;
                    }
                };
                if !out.status.success() {
                    let mut f = first.lock().unwrap();
                    if f.as_ref().is_none_or(|f| seed < f.seed) {
                        *f = Some(Failure { seed, code: out.status.code(), stdout: out.stdout, stderr: out.stderr });
                    }
                }
            });
        }
    });
    if let Some(e) = spawn_error.into_inner().unwrap() {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let mut shown = replay_words(file, args);
    if let Some(bytes) = max_heap {
        shown = format!("--max-heap {bytes} {shown}");
    }
    match first.into_inner().unwrap() {
        None => {
            println!("explored seeds 1..={k}: no run failed");
            ExitCode::SUCCESS
        }
        Some(f) => {
            use std::io::Write;
            let how = match f.code {
                Some(c) => format!("exit code {c}"),
                None => "killed by a signal".into(),
            };
            println!("seed {} failed ({how}); its output:", f.seed);
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(&f.stdout);
            let _ = out.flush();
            drop(out);
            let _ = std::io::stderr().write_all(&f.stderr);
            println!("replay it with: raya run --seed {} {shown}", f.seed);
            ExitCode::from(1)
        }
    }
}

/// The file and its arguments as a shell would need them.
fn replay_words(file: &Path, args: &[String]) -> String {
    std::iter::once(file.to_string_lossy().into_owned())
        .chain(args.iter().cloned())
        .map(|w| {
            if !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@".contains(c)) {
                w
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
