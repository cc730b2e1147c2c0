//! `raya`: run, check and disassemble Raya programs.
// The process starts at the C `main` below, not through Rust's runtime
// start (see there).
#![cfg_attr(not(test), no_main)]

use clap::{Parser, Subcommand};
use raya_engine::compiler::{compile_file, compile_source, CompileError};
use std::io::{IsTerminal, Read};

mod repl;
use std::path::PathBuf;
use std::process::ExitCode;

mod explore;

/// Raya allocates many small, short-lived objects (heap objects, task
/// states); mimalloc's size-class free lists serve them much faster than the
/// system allocator (see design/dependencies.md).
#[global_allocator]
static GLOBAL: Allocator = Allocator;

/// mimalloc, asked for word-aligned blocks with plain `mi_malloc`.
///
/// `mimalloc::MiMalloc` sends every request through `mi_malloc_aligned`,
/// whose fast path needs a free block already in the size class's page; when
/// there is none and the size is not a power of two, it over-allocates from a
/// larger class instead, so the right class's page is never made and every
/// later request of that size takes the slow path too (a third of `wc`'s
/// instructions). Every mimalloc block is a multiple of the word size at a
/// word-aligned address, so alignments up to 8 need nothing more.
struct Allocator;

const WORD: usize = std::mem::size_of::<usize>();

// SAFETY: each method forwards to mimalloc, which returns blocks of at least
// the requested size; alignments above a word go to the aligned entry points.
unsafe impl std::alloc::GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if layout.align() <= WORD {
            unsafe { libmimalloc_sys::mi_malloc(layout.size()) as *mut u8 }
        } else {
            unsafe { mimalloc::MiMalloc.alloc(layout) }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        if layout.align() <= WORD {
            unsafe { libmimalloc_sys::mi_zalloc(layout.size()) as *mut u8 }
        } else {
            unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= WORD {
            unsafe { libmimalloc_sys::mi_realloc(ptr as *mut std::ffi::c_void, new_size) as *mut u8 }
        } else {
            unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) }
        }
    }
}

/// mimalloc's `mi_option_purge_delay` (its place in `mi_option_e`,
/// `mimalloc.h`, the same in v2 and v3; the `-sys` crate names it in v2
/// only).
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// How long freed memory stays with the allocator before it goes back to
/// the system, unless `MIMALLOC_PURGE_DELAY` says otherwise. mimalloc v3
/// keeps it for a second (v2 for 10 ms). A collected heap swings between
/// the live data and the collector's goal, and with a second's delay the
/// process held the top of every swing: `map-set` peaked at 80 MB of RSS
/// with 17 MiB live. At 10 ms it peaks at 54 MB, and `binary-trees` at
/// 29 MB instead of 37, for a few percent more time where memory churns.
/// At 30 ms `binary-trees` spends half the system time faulting pages in
/// again (11% less time, 2.7 MB more at its peak) and the other programs
/// hardly change (design/memory.md, "What the allocator keeps").
const PURGE_DELAY_MS: std::ffi::c_long = 30;

fn configure_allocator() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one of mimalloc's options, which it reads whenever
        // it decides to purge.
        unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, PURGE_DELAY_MS) };
    }
}

#[derive(Parser)]
#[command(name = "raya", version, about = "The Raya language: TypeScript syntax, green threads on every core.")]
#[command(disable_help_subcommand = false)]
#[command(after_help = "Examples:
  raya run app.raya a b        run app.raya with args [\"a\", \"b\"] (`raya app.raya a b` too)
  raya --workers 1 app.raya    run on one worker thread
  raya -e 'console.log(1 + 1)' run the code given
  cat app.raya | raya run -    run the program read from standard input
  raya check app.raya          report every compile error, run nothing
  raya disasm app.raya         print the bytecode (`--all` adds the prelude)
  raya --trace t.json app.raya record what every task did; then
  raya trace summary t.json    see where the time went
  raya test --filter add src   run the tests of src/**/*.test.raya named *add*
  raya help run                the options of `run`")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a program: `raya run FILE [ARGS...]` (or just `raya FILE`);
    /// `raya run - ` reads it from standard input, `raya -e CODE` runs CODE.
    #[command(after_help = "Environment:
  RAYA_WORKERS=N        worker threads, as --workers N
  RAYA_STATS=1          statistics at exit, as --stats
  RAYA_TRACE=FILE       record a trace, as --trace FILE
  RAYA_STALL_MS=N       warn when a worker spends more than N ms in one task
                        run without reaching a safepoint (a long built-in
                        call, a blocking host function); default 1000, 0: off
  RAYA_MAX_HEAP=SIZE    heap limit, as --max-heap SIZE
  RAYA_GC_PERCENT=N     the heap grows by N% of the live heap between
                        collections (default 100, as Go's GOGC); `off`:
                        collect only under the heap limit
  RAYA_GC_STRESS=1      collect at every safepoint (a testing aid: finds
                        values freed while reachable; very slow)
  RAYA_GC_CONCURRENT=0  mark with every worker stopped instead of beside
                        the program (longer pauses; for comparison)
  RAYA_GC_GENERATIONAL=0  every collection marks and sweeps the whole heap
                        (by default most mark and sweep only the objects
                        that have not yet survived two collections)
  MIMALLOC_PURGE_DELAY=MS  how long freed memory stays with the allocator
                        before it goes back to the system (default 30)

--stats prints, on stderr at exit: scheduler counts; a row per worker (run
time, tasks run, steals, parks); the peak number of tasks alive; GC cycles,
total and longest pause, live heap after the last collection, pacing and
limit; the process's peak resident set size (Linux; n/a elsewhere).

--trace FILE writes Chrome trace-event JSON (open it in ui.perfetto.dev or
chrome://tracing; `raya trace summary FILE` summarises it).")]
    Run {
        /// Worker threads (default: number of cores; also RAYA_WORKERS).
        #[arg(long, env = "RAYA_WORKERS")]
        workers: Option<usize>,
        /// Print scheduler, GC and memory statistics on stderr at exit
        /// (also RAYA_STATS=1).
        #[arg(long)]
        stats: bool,
        /// Heap limit, e.g. 256MB, 1GB, 512k (units of 1024; also
        /// RAYA_MAX_HEAP). Past it an allocation throws a catchable
        /// RangeError ("out of memory: heap limit 256 MB reached").
        #[arg(long, env = "RAYA_MAX_HEAP", value_name = "SIZE", value_parser = parse_size)]
        max_heap: Option<usize>,
        /// Record what every task did into FILE (Chrome trace-event JSON:
        /// open it in ui.perfetto.dev or chrome://tracing, or summarise it
        /// with `raya trace summary FILE`; also RAYA_TRACE=FILE).
        #[arg(long, env = "RAYA_TRACE", value_name = "FILE")]
        trace: Option<PathBuf>,
        /// Reproducible schedule: one worker, every scheduling choice (which
        /// task runs next, where a task is preempted, which ready `select`
        /// case wins, the order of timers firing together) and
        /// `Math.random` drawn from a generator seeded with N; timers on
        /// virtual time. The same seed gives the same output. (Overrides
        /// --workers and RAYA_WORKERS.)
        #[arg(long, value_name = "N", conflicts_with = "explore")]
        seed: Option<u64>,
        /// Search for a failing schedule: run the program with seeds 1..=K
        /// (in parallel processes) and stop at the first run that throws,
        /// exits non-zero or deadlocks; print its output and the
        /// `raya run --seed N` command that replays it (exit 1), or say
        /// that none failed (exit 0).
        #[arg(long, value_name = "K", conflicts_with = "eval")]
        explore: Option<u64>,
        /// Run this code instead of a file (every following word goes to
        /// the program as `args`).
        #[arg(short = 'e', long = "eval", value_name = "CODE")]
        eval: Option<String>,
        /// The program (`-`: read it from standard input).
        #[arg(required_unless_present = "eval")]
        file: Option<PathBuf>,
        /// Arguments passed to the program as `args`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Compile only and report every error (exit code 0 or 2).
    Check { file: PathBuf },
    /// Read a trace written by `raya run --trace FILE`.
    Trace {
        #[command(subcommand)]
        command: TraceCommand,
    },
    /// Run the tests of every `*.test.raya` file under the paths (default:
    /// the current directory); exit 1 if one fails, 2 on a compile error.
    Test {
        /// Files or directories to search for `*.test.raya` files.
        paths: Vec<PathBuf>,
        /// Run only the tests whose name contains TEXT.
        #[arg(long, value_name = "TEXT", default_value = "")]
        filter: String,
        /// Fail a test that has not finished after MS milliseconds.
        #[arg(long, value_name = "MS", default_value_t = 5000)]
        timeout: u64,
        /// Worker threads (default: number of cores; also RAYA_WORKERS).
        #[arg(long, env = "RAYA_WORKERS")]
        workers: Option<usize>,
    },
    /// Print the bytecode of every function of the program, with source
    /// lines.
    Disasm {
        file: PathBuf,
        /// Also the built-in Raya code (the prelude, `std:` modules).
        #[arg(long)]
        all: bool,
    },
}

#[derive(Subcommand)]
enum TraceCommand {
    /// Where the time went: per task its run time, wait time by reason and
    /// number of runs; per worker its utilisation; the longest waits with
    /// their source lines.
    Summary { file: PathBuf },
}

const SUBCOMMANDS: &[&str] = &["run", "check", "test", "disasm", "trace", "help"];

/// The flags of `raya` itself; every other first word belongs to `run`.
const TOP_LEVEL_FLAGS: &[&str] = &["-h", "--help", "-V", "--version"];

/// `word` is no file but one or two letters away from a subcommand
/// (`raya chek x.raya`): that subcommand.
fn misspelt_subcommand(word: &str) -> Option<&'static str> {
    if word.starts_with('-') || word.contains('.') || word.contains('/') || std::path::Path::new(word).exists() {
        return None;
    }
    SUBCOMMANDS.iter().copied().find(|sub| raya_engine::syntax::diagnostic::edit_distance(word, sub) <= 2)
}

/// Where the process starts: what Rust's runtime start (`lang_start`) does
/// that `raya` needs, then [`run`].
///
/// Rust's start also looks up the main thread's stack guard for its
/// stack-overflow message, and glibc answers by reading and `sscanf`-ing
/// all of `/proc/self/maps`: about 105,000 instructions, 4% of a hello
/// world, and five 64 KiB windows of libc's code paged in for it alone
/// (design/memory.md, "Idle memory"). The interpreter never recurses on
/// the native stack for a script's calls, and the compiler's recursion is
/// bounded by the parser's nesting limit (`compile_main`), so that message
/// is all `raya` gives up: a native stack overflow, a bug, is a plain
/// `SIGSEGV`.
#[cfg_attr(not(test), no_mangle)]
extern "C" fn main(_argc: std::ffi::c_int, _argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    // What Rust's start does and `raya` relies on. A write to a closed
    // pipe or socket is an `EPIPE` error the program sees, not a kill.
    // SAFETY: changes one signal's disposition before any thread exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    // A closed standard descriptor is opened on /dev/null, so that a file
    // a script opens never becomes standard output.
    for fd in 0..=2 {
        // SAFETY: `fcntl` and `open` on plain integers and a C string.
        unsafe {
            if libc::fcntl(fd, libc::F_GETFD) == -1
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF)
            {
                let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
                if null != fd && null >= 0 {
                    libc::close(null);
                }
            }
        }
    }
    // A panic (an engine bug) ends with the code Rust's start gives it;
    // the panic hook has printed the message.
    let code = std::panic::catch_unwind(run).unwrap_or(ExitCode::from(101));
    use std::io::Write;
    let _ = std::io::stdout().flush();
    // `ExitCode` shows its value only by comparison.
    (0..=u8::MAX).find(|&n| ExitCode::from(n) == code).map_or(1, std::ffi::c_int::from)
}

fn run() -> ExitCode {
    configure_allocator();
    let mut argv: Vec<String> = std::env::args().collect();
    // `raya` alone on a terminal is the REPL; elsewhere (a pipe, a
    // script) it is the usage error it always was.
    if argv.len() == 1 && std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        return repl::run(std::env::var("RAYA_WORKERS").ok().and_then(|w| w.parse().ok()).filter(|&w| w > 0));
    }
    // `raya FILE ...`, `raya -e CODE` and `raya --workers 2 FILE` are
    // `raya run ...`.
    if let Some(first) = argv.get(1) {
        // Anything but the top level's own flags is `run`'s: its options
        // (and clap's "a similar argument exists" for a misspelt one), a
        // file, `-`.
        let top_level = TOP_LEVEL_FLAGS.contains(&first.as_str()) || SUBCOMMANDS.contains(&first.as_str());
        if !top_level {
            if let Some(sub) = misspelt_subcommand(first) {
                eprintln!("error: no such file or subcommand '{first}'\n\n  tip: did you mean `raya {sub}`?");
                return ExitCode::from(2);
            }
            argv.insert(1, "run".into());
        }
    }
    let cli = match Cli::try_parse_from(&argv) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match cli.command {
        Command::Run { workers, stats, max_heap, trace, seed, explore, eval, file, mut args } => {
            if workers == Some(0) {
                eprintln!("error: --workers must be at least 1");
                return ExitCode::from(2);
            }
            if let Some(k) = explore {
                let Some(file) = file.filter(|f| f.as_os_str() != "-") else {
                    eprintln!("error: --explore needs a program file (it runs the file once per seed)");
                    return ExitCode::from(2);
                };
                return explore::explore(&file, &args, k, max_heap);
            }
            let percent = match std::env::var("RAYA_GC_PERCENT") {
                Err(_) => Some(raya_engine::vm::heap::DEFAULT_GC_PERCENT),
                Ok(v) if v.trim().eq_ignore_ascii_case("off") => None,
                Ok(v) => match v.trim().parse::<u32>() {
                    Ok(p) => Some(p),
                    Err(_) => {
                        eprintln!("error: invalid RAYA_GC_PERCENT '{v}': expected a whole number of percent or `off`");
                        return ExitCode::from(2);
                    }
                },
            };
            let gc = raya_engine::vm::heap::GcConfig {
                percent,
                max_heap,
                stress: std::env::var("RAYA_GC_STRESS").is_ok_and(|v| v == "1"),
            };
            let stats = stats || std::env::var("RAYA_STATS").is_ok_and(|v| v == "1");
            let compiled = match (eval, file) {
                (Some(code), file) => {
                    // With -e there is no file: a word clap took for one
                    // is the program's first argument.
                    if let Some(f) = file {
                        args.insert(0, f.to_string_lossy().into_owned());
                    }
                    compile_source("<eval>", &code)
                }
                (None, Some(file)) if file.as_os_str() == "-" => {
                    let mut code = String::new();
                    if let Err(e) = std::io::stdin().read_to_string(&mut code) {
                        eprintln!("error: cannot read the program from standard input: {e}");
                        return ExitCode::from(2);
                    }
                    compile_source("<stdin>", &code)
                }
                (None, Some(file)) => compile_file(&file),
                (None, None) => unreachable!("clap requires a file unless -e is given"),
            };
            let program = match compiled {
                Ok(p) => p,
                Err(e) => return compile_failed(&e),
            };
            let opts = raya_engine::driver::RunOptions { args, workers, stats, gc, trace, seed, ..Default::default() };
            let code = raya_engine::driver::run_program_with(&program, opts);
            ExitCode::from(code.clamp(0, 255) as u8)
        }
        Command::Test { paths, filter, timeout, workers } => run_tests(paths, &filter, timeout, workers),
        Command::Trace { command: TraceCommand::Summary { file } } => trace_summary(&file),
        Command::Check { file } => match compile_file(&file) {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => compile_failed(&e),
        },
        Command::Disasm { file, all } => match compile_file(&file) {
            Ok(p) => {
                print!("{}", raya_engine::bytecode::disasm::disassemble_with(&p, all));
                ExitCode::SUCCESS
            }
            Err(e) => compile_failed(&e),
        },
    }
}

/// `raya trace summary FILE`.
fn trace_summary(file: &std::path::Path) -> ExitCode {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read '{}': {e}", file.display());
            return ExitCode::from(2);
        }
    };
    let source_line = |f: &str, line: usize| {
        let src = std::fs::read_to_string(f).ok()?;
        src.lines().nth(line.checked_sub(1)?).map(str::to_string)
    };
    match raya_engine::trace::summary::summarize(&text, &source_line) {
        Ok(s) => {
            print!("{s}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: '{}': {e}", file.display());
            ExitCode::from(2)
        }
    }
}

/// `raya test`: each file is compiled and run as its own program, one after
/// another, under a generated entry module that imports it (its top level
/// registers the tests) and then calls the runner of `std:test`, which
/// hands back its counts through `std::test::take_counts`.
fn run_tests(paths: Vec<PathBuf>, filter: &str, timeout: u64, workers: Option<usize>) -> ExitCode {
    if workers == Some(0) {
        eprintln!("error: --workers must be at least 1");
        return ExitCode::from(2);
    }
    let paths = if paths.is_empty() { vec![PathBuf::from(".")] } else { paths };
    let mut files = Vec::new();
    for p in &paths {
        if let Err(e) = find_test_files(p, &mut files) {
            eprintln!("error: cannot read '{}': {e}", p.display());
            return ExitCode::from(2);
        }
    }
    if files.is_empty() {
        eprintln!(
            "error: no *.test.raya file found under {}",
            paths.iter().map(|p| format!("'{}'", p.display())).collect::<Vec<_>>().join(", ")
        );
        return ExitCode::from(2);
    }
    // Compile every file first: a compile error runs nothing (exit 2).
    let mut programs = Vec::new();
    let mut broken = false;
    for file in &files {
        let shown = file.to_string_lossy().into_owned();
        // A relative path is relative to the current directory, as the
        // generated module's imports are.
        let import = if file.is_absolute() || shown.starts_with("./") || shown.starts_with("../") {
            shown.clone()
        } else {
            format!("./{shown}")
        };
        let src = format!(
            "import {import:?};\nimport {{ __runTests }} from \"std:test\";\nawait __runTests({shown:?}, {filter:?}, {timeout});\n"
        );
        match compile_source("std:test-runner", &src) {
            Ok(p) => programs.push((shown, p)),
            Err(e) => {
                eprint!("{}", e.render());
                broken = true;
            }
        }
    }
    if broken {
        return ExitCode::from(2);
    }
    let (mut passed, mut failed) = (0u64, 0u64);
    for (shown, program) in programs {
        let opts = raya_engine::driver::RunOptions { workers, ..Default::default() };
        let code = raya_engine::driver::run_program_with(&program, opts);
        match raya_engine::std::test::take_counts() {
            Some((p, f)) => {
                passed += p;
                failed += f;
            }
            // The file's top level threw (the driver printed the error):
            // the file counts as one failure.
            None => {
                println!("{shown} ... FAILED (the program ended with exit code {code} before its tests ran)\n");
                failed += 1;
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `path` if it is a file, else every `*.test.raya` under it, in name
/// order (hidden directories and `target` are skipped).
fn find_test_files(path: &std::path::Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if !path.is_dir() {
        std::fs::metadata(path)?;
        out.push(path.to_path_buf());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>()?;
    entries.sort();
    for entry in entries {
        let name = entry.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if entry.is_dir() {
            if !name.starts_with('.') && name != "target" && name != "node_modules" {
                find_test_files(&entry, out)?;
            }
        } else if name.ends_with(".test.raya") {
            out.push(strip_dot(&entry));
        }
    }
    Ok(())
}

/// `./a/b.test.raya` as `a/b.test.raya` (how it is shown).
fn strip_dot(p: &std::path::Path) -> PathBuf {
    p.strip_prefix(".").map(|p| p.to_path_buf()).unwrap_or_else(|_| p.to_path_buf())
}

/// `--max-heap`'s value (see `raya_engine::vm::heap::parse_size`).
fn parse_size(s: &str) -> Result<usize, String> {
    raya_engine::vm::heap::parse_size(s)
        .ok_or_else(|| format!("'{s}' is not a size: expected bytes with an optional unit, e.g. 256MB, 1GB, 512k"))
}

fn compile_failed(e: &CompileError) -> ExitCode {
    eprint!("{}", e.render());
    ExitCode::from(2)
}

#[cfg(test)]
mod allocator_tests {
    use super::Allocator;
    use std::alloc::{GlobalAlloc, Layout};

    /// The option set is the purge delay: unset, it has v3's default of a
    /// second (no other option starts at 1000), and `configure_allocator`
    /// makes it 10 ms.
    #[test]
    fn the_purge_delay_is_set_to_ten_milliseconds() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return;
        }
        use libmimalloc_sys::mi_option_get;
        assert_eq!(unsafe { mi_option_get(super::PURGE_DELAY) }, 1000, "not the purge delay, or not mimalloc v3");
        super::configure_allocator();
        assert_eq!(unsafe { mi_option_get(super::PURGE_DELAY) }, super::PURGE_DELAY_MS);
    }

    /// Every block is aligned as asked, holds what was written, keeps it
    /// across a realloc, and comes zeroed from alloc_zeroed: both the plain
    /// path (alignments up to a word) and the aligned one.
    #[test]
    fn blocks_are_aligned_and_keep_their_contents() {
        for align in [1, 2, 4, 8, 16, 64, 4096] {
            for size in [1, 3, 8, 24, 56, 100, 1000, 70_000] {
                let layout = Layout::from_size_align(size, align).unwrap();
                unsafe {
                    let p = Allocator.alloc(layout);
                    assert!(!p.is_null() && (p as usize).is_multiple_of(align), "alloc {size}/{align}");
                    for i in 0..size {
                        *p.add(i) = i as u8;
                    }
                    let q = Allocator.realloc(p, layout, size * 3);
                    assert!(!q.is_null() && (q as usize).is_multiple_of(align), "realloc {size}/{align}");
                    assert!((0..size).all(|i| *q.add(i) == i as u8), "realloc kept {size}/{align}");
                    Allocator.dealloc(q, Layout::from_size_align(size * 3, align).unwrap());
                    let z = Allocator.alloc_zeroed(layout);
                    assert!(!z.is_null() && (z as usize).is_multiple_of(align), "alloc_zeroed {size}/{align}");
                    assert!((0..size).all(|i| *z.add(i) == 0), "zeroed {size}/{align}");
                    Allocator.dealloc(z, layout);
                }
            }
        }
    }
}
