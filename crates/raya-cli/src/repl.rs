//! `raya` with no arguments on a terminal: the interactive session.
//!
//! Lines are read with rustyline (history in the user's data directory);
//! each complete input is compiled and run by a
//! [`raya_engine::repl::Session`], which keeps one program alive for the
//! whole session, so declarations persist and tasks go on running between
//! inputs. An input the parser finds unfinished (it ends inside a block,
//! a call, a string...) is continued on the next line.
//!
//! Ctrl-C while an input runs interrupts it: the terminal is out of raw
//! mode then, so Ctrl-C is a SIGINT, which a handler turns into a flag
//! the waiting loop polls. While a line is being edited, rustyline reads
//! Ctrl-C as a key: it clears the line; on an empty line, the first
//! press says how to leave and a second one leaves, as Node's REPL does.

use raya_engine::compiler::CompileError;
use raya_engine::driver::RunOptions;
use raya_engine::repl::{Evaluated, Session};
use raya_engine::vm::runtime::{OutputSink, Stream};
use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use rustyline::ExternalPrinter;
use rustyline::{Config, Editor};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const HELP: &str = "\
Enter Raya code; the value of an expression is printed as console.log prints it.
Declarations stay for the next inputs; `await` works at the top level; tasks
started by an input go on running. An unfinished statement continues on the
next line (Ctrl-C abandons it).

  .help     this text
  .exit     leave (or Ctrl-D, or Ctrl-C twice on an empty line)
  Ctrl-C    interrupt the running input
";

/// Raised by the SIGINT handler, taken by the loop waiting for an input.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Where the history is kept: `$RAYA_REPL_HISTORY` (empty: nowhere), else
/// `$XDG_DATA_HOME/raya/history`, else `~/.local/share/raya/history`.
fn history_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("RAYA_REPL_HISTORY") {
        return (!p.is_empty()).then(|| PathBuf::from(p));
    }
    let data = match std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".local/share"),
    };
    Some(data.join("raya").join("history"))
}

/// The compile error only says that the input stopped too early: more
/// lines are needed, not a fix.
pub fn is_incomplete(e: &CompileError) -> bool {
    // A string literal cannot span lines, so an unterminated one is an
    // error; a template literal or a comment can.
    !e.diagnostics.is_empty()
        && e.diagnostics.iter().all(|d| {
            d.message.contains("found end of file")
                || d.message.starts_with("unterminated template")
                || d.message.starts_with("unterminated block comment")
        })
}

pub fn run(workers: Option<usize>) -> ExitCode {
    let config = Config::builder().auto_add_history(false).max_history_size(1000).map(|b| b.build());
    let mut editor: Editor<(), FileHistory> = match config.and_then(Editor::with_config) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: cannot start the line editor: {e}");
            return ExitCode::from(2);
        }
    };
    let history = history_path();
    if let Some(p) = &history {
        if let Some(dir) = p.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        // A missing file is a first session.
        let _ = editor.load_history(p);
    }
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_sigint as *const () as libc::sighandler_t);
    }
    // The program's output goes through the editor: printed above the
    // prompt (which is redrawn) while a line is being edited, straight to
    // the terminal otherwise.
    let output: Option<Arc<dyn OutputSink>> = match editor.create_external_printer() {
        Ok(printer) => {
            let printer = Mutex::new(printer);
            Some(Arc::new(move |_stream: Stream, text: &str| {
                let _ = printer.lock().unwrap_or_else(|e| e.into_inner()).print(text.to_string());
            }))
        }
        Err(_) => None,
    };
    let mut session = Session::start(RunOptions { workers, ..Default::default() }, output);
    println!("Raya {} — type .help for help, Ctrl-D to leave", env!("CARGO_PKG_VERSION"));
    let mut buffer = String::new();
    let mut inputs = 0usize;
    let mut warned_exit = false;
    loop {
        let prompt = if buffer.is_empty() { "> " } else { "... " };
        let line = match editor.readline(prompt) {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => {
                if !buffer.is_empty() {
                    buffer.clear();
                } else if warned_exit {
                    break;
                } else {
                    println!("(To leave, press Ctrl-C again or Ctrl-D, or type .exit)");
                    warned_exit = true;
                    continue;
                }
                warned_exit = false;
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                eprintln!("error: cannot read the terminal: {e}");
                return ExitCode::from(2);
            }
        };
        warned_exit = false;
        if buffer.is_empty() {
            match line.trim() {
                "" => continue,
                ".exit" => break,
                ".help" => {
                    print!("{HELP}");
                    continue;
                }
                _ => {}
            }
        }
        if !buffer.is_empty() {
            buffer.push('\n');
        }
        buffer.push_str(&line);
        let compiled = session.compile(&format!("REPL{}", inputs + 1), &buffer);
        if let Err(e) = &compiled {
            if is_incomplete(e) {
                continue;
            }
        }
        let src = std::mem::take(&mut buffer);
        let _ = editor.add_history_entry(src.as_str());
        if let Some(p) = &history {
            let _ = editor.save_history(p);
        }
        inputs += 1;
        let (program, scope) = match compiled {
            Ok(c) => c,
            Err(e) => {
                eprint!("{}", e.render());
                continue;
            }
        };
        INTERRUPTED.store(false, Ordering::SeqCst);
        let evaluation = session.run(program, scope);
        let mut cancelled = false;
        let outcome = loop {
            if let Some(r) = evaluation.wait_timeout(Duration::from_millis(50)) {
                break r;
            }
            if !cancelled && INTERRUPTED.swap(false, Ordering::SeqCst) {
                evaluation.cancel();
                cancelled = true;
            }
        };
        match outcome {
            Evaluated::Value(text) => println!("{text}"),
            Evaluated::Error(report) => eprintln!("{}", report.trim_end()),
            Evaluated::Cancelled => eprintln!("Interrupted"),
            Evaluated::Exited(code) => return ExitCode::from(code.clamp(0, 255) as u8),
        }
    }
    ExitCode::SUCCESS
}
