//! `raya-difftest`: differential testing of Raya against Node.
//!
//! ```sh
//! RAYA_DIFFTEST_ORACLE=path/to/js-oracle cargo run --release -p raya-difftest -- --count 200 --seed 1
//! ```
//!
//! Generates `--count` random programs (`gen.rs`) from `--seed`, runs each
//! with Raya (this binary, re-run as `raya-difftest --exec FILE`, so the
//! engine under test is the one it was built with) and with the oracle
//! (`--oracle PATH` or `RAYA_DIFFTEST_ORACLE`: a command that runs a
//! `.raya` file under Node with its types stripped), and compares exit
//! code and stdout. The first disagreeing program is minimised (chunks,
//! then statements, are dropped while the two still disagree and Node
//! still runs it cleanly) and printed with both outputs. The last line is
//! `N programs, M disagreements`; the exit code is 0 only if all agree.

mod gen;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

const USAGE: &str = "usage: raya-difftest [--count N] [--seed S] [--oracle PATH] [--keep DIR]
  --count N      programs to generate and compare (default 100)
  --seed S       the first program's seed; program i uses S + i (default 1)
  --oracle PATH  the Node oracle (default: $RAYA_DIFFTEST_ORACLE)
  --keep DIR     write every disagreeing program to DIR
raya-difftest --print S   print the program of seed S";

/// How long one run may take (the programs are small; a hang is a finding).
const RUN_LIMIT: Duration = Duration::from_secs(20);

struct Opts {
    count: u64,
    seed: u64,
    oracle: PathBuf,
    keep: Option<PathBuf>,
}

fn parse_args() -> Result<Opts, String> {
    let mut args = std::env::args().skip(1);
    let mut count = 100;
    let mut seed = 1;
    let mut oracle = std::env::var_os("RAYA_DIFFTEST_ORACLE").map(PathBuf::from);
    let mut keep = None;
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--count" => count = value("--count")?.parse().map_err(|_| "--count: expected a number")?,
            "--seed" => seed = value("--seed")?.parse().map_err(|_| "--seed: expected a number")?,
            "--oracle" => oracle = Some(PathBuf::from(value("--oracle")?)),
            "--keep" => keep = Some(PathBuf::from(value("--keep")?)),
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    let oracle = oracle.ok_or("no oracle: pass --oracle PATH or set RAYA_DIFFTEST_ORACLE")?;
    Ok(Opts { count, seed, oracle, keep })
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    if argv.len() == 3 && argv[1] == "--exec" {
        return exec(Path::new(&argv[2]));
    }
    if argv.len() == 3 && argv[1] == "--print" {
        // The program of one seed, to read or to run by hand.
        return match argv[2].parse() {
            Ok(seed) => {
                print!("{}", gen::program(seed).render());
                ExitCode::SUCCESS
            }
            Err(_) => {
                eprintln!("error: --print: expected a seed");
                ExitCode::from(2)
            }
        };
    }
    let opts = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("error: {e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let dir = std::env::temp_dir().join(format!("raya-difftest-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("error: cannot create {}: {e}", dir.display());
        return ExitCode::from(2);
    }
    let file = dir.join("program.raya");
    let mut disagreements = 0u64;
    let mut first_shown = false;
    for i in 0..opts.count {
        let seed = opts.seed + i;
        let program = gen::program(seed);
        let (raya, node) = match run_both(&program.render(), &file, &opts.oracle) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
        if raya == node {
            continue;
        }
        disagreements += 1;
        println!("seed {seed}: raya and node disagree");
        if let Some(keep) = &opts.keep {
            let _ = std::fs::create_dir_all(keep);
            let _ = std::fs::write(keep.join(format!("seed{seed}.raya")), program.render());
        }
        if !first_shown {
            first_shown = true;
            let small = minimise(program, &file, &opts.oracle);
            let text = small.render();
            let (raya, node) = run_both(&text, &file, &opts.oracle).unwrap_or_default();
            println!(
                "--- minimised program (seed {seed})\n{text}--- raya (exit {})\n{}--- node (exit {})\n{}---",
                raya.code, raya.stdout, node.code, node.stdout
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("{} programs, {disagreements} disagreements", opts.count);
    if disagreements == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `--exec FILE`: runs FILE with this build's engine, as `raya run` would
/// (one worker: the programs are sequential).
fn exec(file: &Path) -> ExitCode {
    match raya_engine::compiler::compile_file(file) {
        Ok(program) => {
            let opts = raya_engine::driver::RunOptions { workers: Some(1), ..Default::default() };
            ExitCode::from(raya_engine::driver::run_program_with(&program, opts).clamp(0, 255) as u8)
        }
        Err(e) => {
            eprint!("{}", e.render());
            ExitCode::from(2)
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
struct Outcome {
    code: i32,
    stdout: String,
}

fn run_both(text: &str, file: &Path, oracle: &Path) -> Result<(Outcome, Outcome), String> {
    std::fs::write(file, text).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    let me = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let raya = run(Command::new(me).arg("--exec").arg(file))?;
    let node = run(Command::new(oracle).arg(file)).map_err(|e| format!("the oracle {}: {e}", oracle.display()))?;
    Ok((raya, node))
}

/// Runs a command to its end (killed past [`RUN_LIMIT`], which counts as
/// exit code -1).
fn run(cmd: &mut Command) -> Result<Outcome, String> {
    let mut child =
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().map_err(|e| e.to_string())?;
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut s);
        s
    });
    let start = Instant::now();
    let code = loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(status) => break status.code().unwrap_or(-1),
            None if start.elapsed() > RUN_LIMIT => {
                let _ = child.kill();
                let _ = child.wait();
                break -1;
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    let out = reader.join().unwrap_or_default();
    Ok(Outcome { code, stdout: String::from_utf8_lossy(&out).into_owned() })
}

/// Drops chunks, then top-level statements of chunks, as long as the
/// program still makes raya and node disagree and node still runs it to a
/// clean end (so the smaller program is still valid).
fn minimise(mut p: gen::Program, file: &Path, oracle: &Path) -> gen::Program {
    let still_bad = |p: &gen::Program| match run_both(&p.render(), file, oracle) {
        Ok((raya, node)) => node.code == 0 && raya.code != 2 && raya != node,
        Err(_) => false,
    };
    let mut i = 0;
    while i < p.chunks.len() && p.chunks.len() > 1 {
        let mut q = p.clone();
        q.chunks.remove(i);
        if still_bad(&q) {
            p = q;
        } else {
            i += 1;
        }
    }
    for c in 0..p.chunks.len() {
        let mut i = 0;
        while i < p.chunks[c].stmts.len() {
            let mut q = p.clone();
            q.chunks[c].stmts.remove(i);
            if still_bad(&q) {
                p = q;
            } else {
                i += 1;
            }
        }
    }
    p
}
