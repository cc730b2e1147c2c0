//! Built-ins: the process globals `args`, `exit(code)`, `env(name)`,
//! `cwd()`, `stdin`, `stdout`, `stderr`, and time: `Date.now()` (a static
//! of `Date`, see `date`), `performance.now()`.
//!
//! `stdout.write` and `stderr.write` go through the program's one output
//! buffer per stream (`Runtime::write_stdout`/`write_stderr`), the same
//! as `console.log`, so output keeps its order. `stdin` reads through one
//! process-wide buffered reader (`std::io::ReadBuf`): the worker answers
//! from the buffer, a blocking-pool job refills it.

use super::bytes::alloc_bytes;
use crate::std::io::{answer, block_then_rerun, line_value, read_max, IoFailure, ReadBuf};
use crate::vm::native::{arg, NativeCtx};
use crate::vm::ops;
use crate::vm::realm::{Builder, Realm};
use crate::vm::runtime::Runtime;
use crate::vm::value::Value;
use parking_lot::Mutex;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The time origin of `performance.now()`: the first realm's creation,
/// which is at process start.
static START: OnceLock<Instant> = OnceLock::new();

/// The wall clock when a seeded run first read it (`Date.now()` there is
/// this plus virtual time).
static WALL_START: OnceLock<SystemTime> = OnceLock::new();

pub fn install(b: &mut Builder, realm: &mut Realm) {
    START.get_or_init(Instant::now);
    // `args` is filled by `set_args` once the script's arguments are known.
    realm.globals[super::global_slot("args")] = b.heap.alloc_array(Vec::new());
    realm.globals[super::global_slot("exit")] = b.native("exit", exit);
    realm.globals[super::global_slot("env")] = b.native("env", env);
    let perf = b.object();
    b.set_native(perf, "now", performance_now);
    realm.globals[super::global_slot("performance")] = perf;
    realm.globals[super::global_slot("cwd")] = b.native("cwd", cwd);
    let stdin = b.object();
    b.set_native(stdin, "readLine", stdin_read_line);
    b.set_native(stdin, "read", stdin_read);
    b.set_native(stdin, "readAll", stdin_read_all);
    realm.globals[super::global_slot("stdin")] = stdin;
    let stdout = b.object();
    b.set_native(stdout, "write", stdout_write);
    realm.globals[super::global_slot("stdout")] = stdout;
    let stderr = b.object();
    b.set_native(stderr, "write", stderr_write);
    realm.globals[super::global_slot("stderr")] = stderr;
}

/// `cwd()`: the process's working directory (relative paths start there).
fn cwd(ctx: &mut NativeCtx, _this: Value, _args: &[Value]) -> Result<Value, Value> {
    match std::env::current_dir() {
        Ok(p) => Ok(ctx.str(p.to_string_lossy().into_owned())),
        Err(e) => Err(IoFailure::new(&e, "uv_cwd", None).throw(ctx)),
    }
}

fn text_arg<'a>(ctx: &mut NativeCtx, args: &'a [Value], func: &str) -> Result<&'a str, Value> {
    let v = arg(args, 0);
    ops::as_str(v).ok_or_else(|| ctx.type_error(format!("{func}: the text must be a string, got {}", ops::type_of(v))))
}

/// `stdout.write(text)`: no newline added.
fn stdout_write(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let text = text_arg(ctx, args, "stdout.write")?;
    ctx.rt.write_stdout(text);
    Ok(Value::UNDEFINED)
}

/// `stderr.write(text)`: no newline added.
fn stderr_write(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let text = text_arg(ctx, args, "stderr.write")?;
    ctx.rt.write_stderr(text);
    Ok(Value::UNDEFINED)
}

/// Standard input's buffer: one per process, as standard input is.
fn stdin_buf() -> &'static Arc<Mutex<ReadBuf>> {
    static STDIN: OnceLock<Arc<Mutex<ReadBuf>>> = OnceLock::new();
    STDIN.get_or_init(Default::default)
}

/// Answers from the stdin buffer if it can (`try`), else refills it on the
/// pool (`fill`) and runs the call again.
fn stdin_op<T>(
    ctx: &mut NativeCtx,
    attempt: impl FnOnce(&mut ReadBuf) -> Option<Result<T, IoFailure>>,
    make: impl FnOnce(&mut NativeCtx, T) -> Value,
    fill: fn(&mut ReadBuf, &mut dyn std::io::Read, &'static str),
) -> Result<Value, Value> {
    let buf = stdin_buf();
    if let Some(mut g) = buf.try_lock() {
        if let Some(r) = attempt(&mut g) {
            drop(g);
            return answer(ctx, r, make);
        }
    }
    block_then_rerun(ctx, "reading standard input", move || fill(&mut buf.lock(), &mut std::io::stdin(), "read"))
}

/// `stdin.readLine()`: the next line without `\n`/`\r\n`, or null at the
/// end of input.
fn stdin_read_line(ctx: &mut NativeCtx, _this: Value, _args: &[Value]) -> Result<Value, Value> {
    let buf = stdin_buf();
    if let Some(mut g) = buf.try_lock() {
        // What the pipe (or the page cache of a redirected file) holds is
        // read here, on the worker; the string is made from the buffer.
        if let Some(r) = g.line_nowait(libc::STDIN_FILENO) {
            return answer(ctx, r, |ctx, l| l.map_or(Value::NULL, |l| line_value(ctx, l)));
        }
    }
    block_then_rerun(ctx, "reading standard input", move || {
        ReadBuf::fill_line(&mut buf.lock(), &mut std::io::stdin(), "read")
    })
}

/// `stdin.read(max = 65536)`: at most `max` bytes, or null at the end.
fn stdin_read(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let max = read_max(ctx, arg(args, 0), "stdin.read")?;
    stdin_op(
        ctx,
        |b| {
            b.fill_some_nowait(libc::STDIN_FILENO);
            b.try_bytes(max)
        },
        |ctx, d| d.map_or(Value::NULL, |d| alloc_bytes(ctx, d)),
        ReadBuf::fill_some,
    )
}

/// `stdin.readAll()`: the rest of the input as text ("" at the end).
fn stdin_read_all(ctx: &mut NativeCtx, _this: Value, _args: &[Value]) -> Result<Value, Value> {
    stdin_op(ctx, ReadBuf::try_all, |ctx, d| ctx.str(String::from_utf8_lossy(&d).into_owned()), ReadBuf::fill_all)
}

/// Fills the `args` array (created empty by `install`) with
/// `rt.script_args`. Call once after `Runtime::new`.
pub fn set_args(rt: &mut Runtime) {
    let slot = super::global_slot("args");
    let items: Vec<Value> = rt.world.script_args.clone().into_iter().map(|s| rt.heap.alloc_str(s)).collect();
    for arr in [rt.realm.globals[slot], rt.world.globals.get(slot)] {
        if let Some(mut a) = ops::array_data(arr) {
            a.clone_from(&items);
        }
    }
}

/// `exit(code = 0)`: records the exit code; the interpreter ends the
/// program as soon as this native returns.
fn exit(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let v = arg(args, 0);
    let code = if v.is_undefined() {
        0
    } else if v.is_number() && v.as_number().fract() == 0.0 {
        super::numconv::to_int32(v.as_number())
    } else {
        return Err(ctx.type_error(format!("exit: the code must be an integer, got {}", ops::to_display(v))));
    };
    ctx.rt.exit_code = Some(code);
    Ok(Value::UNDEFINED)
}

/// `env(name)`: the environment variable's value, or null.
fn env(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let v = arg(args, 0);
    let Some(name) = ops::as_str(v) else {
        return Err(ctx.type_error(format!("env: expected a string argument, got {}", ops::type_of(v))));
    };
    if name.is_empty() || name.contains('=') || name.contains('\0') {
        return Ok(Value::NULL);
    }
    match std::env::var_os(name) {
        Some(val) => Ok(ctx.str(val.to_string_lossy().into_owned())),
        None => Ok(Value::NULL),
    }
}

/// `Date.now()`: whole milliseconds since the Unix epoch.
pub fn date_now(_ctx: &mut NativeCtx, _this: Value, _args: &[Value]) -> Result<Value, Value> {
    if let Some(elapsed) = crate::scheduler::seeded::virtual_elapsed() {
        // Seeded run: the wall clock at start, advanced by virtual time.
        let start = *WALL_START.get_or_init(SystemTime::now);
        return Ok(Value::number(seeded_date_ms(start, elapsed)));
    }
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as f64).unwrap_or(0.0);
    Ok(Value::number(ms))
}

/// `Date.now()` on a seeded run. The start is cut to a whole millisecond
/// so that the difference of two readings is the virtual time between
/// them, whatever fraction of a millisecond the real clock showed at start.
fn seeded_date_ms(start: SystemTime, elapsed: Duration) -> f64 {
    let start_ms = start.duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    (start_ms + elapsed.as_millis()) as f64
}

/// `performance.now()`: fractional milliseconds since process start,
/// monotonic.
fn performance_now(_ctx: &mut NativeCtx, _this: Value, _args: &[Value]) -> Result<Value, Value> {
    if let Some(elapsed) = crate::scheduler::seeded::virtual_elapsed() {
        return Ok(Value::number(elapsed.as_nanos() as f64 / 1e6));
    }
    let start = *START.get_or_init(Instant::now);
    Ok(Value::number(start.elapsed().as_nanos() as f64 / 1e6))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytecode::FuncProto;
    use crate::syntax::diagnostic::SourceMap;
    use crate::vm::task::Task;
    use std::sync::Arc;

    fn rt(args: Vec<String>) -> Runtime {
        Runtime::new(&Arc::new(FuncProto::default()), &SourceMap::default(), 0, args).0
    }

    #[test]
    fn seeded_date_now_advances_by_exactly_the_virtual_time() {
        let start = UNIX_EPOCH + Duration::from_micros(1_000_999);
        let before = seeded_date_ms(start, Duration::from_micros(3));
        let after = seeded_date_ms(start, Duration::from_micros(3) + Duration::from_millis(60_000));
        assert_eq!(after - before, 60_000.0);
    }

    #[test]
    fn args_are_filled_by_set_args() {
        let mut rt = rt(vec!["a".into(), "b c".into()]);
        let slot = crate::builtins::global_slot("args");
        assert_eq!(ops::array_data(rt.world.globals.get(slot)).unwrap().len(), 0);
        set_args(&mut rt);
        let a = ops::array_data(rt.world.globals.get(slot)).unwrap();
        let strs: Vec<&str> = a.iter().map(|&v| ops::as_str(v).unwrap()).collect();
        assert_eq!(strs, ["a", "b c"]);
    }

    #[test]
    fn exit_records_the_code() {
        let mut rt = rt(vec![]);
        let task = Task::new(0);
        let mut ctx = NativeCtx { rt: &mut rt, task: &task };
        exit(&mut ctx, Value::UNDEFINED, &[Value::number(3.0)]).unwrap();
        assert_eq!(ctx.rt.exit_code, Some(3));
        exit(&mut ctx, Value::UNDEFINED, &[]).unwrap();
        assert_eq!(ctx.rt.exit_code, Some(0));
        assert!(exit(&mut ctx, Value::UNDEFINED, &[Value::number(1.5)]).is_err());
    }

    #[test]
    fn env_and_time() {
        let mut rt = rt(vec![]);
        let task = Task::new(0);
        let mut ctx = NativeCtx { rt: &mut rt, task: &task };
        let path = ctx.str("PATH");
        let v = env(&mut ctx, Value::UNDEFINED, &[path]).unwrap();
        assert_eq!(ops::as_str(v).map(str::to_owned), std::env::var("PATH").ok());
        let missing = ctx.str("RAYA_SURELY_NOT_SET_XYZ");
        assert!(env(&mut ctx, Value::UNDEFINED, &[missing]).unwrap().is_null());
        assert!(env(&mut ctx, Value::UNDEFINED, &[Value::number(1.0)]).is_err());
        let now = date_now(&mut ctx, Value::UNDEFINED, &[]).unwrap().as_number();
        assert!(now > 1.6e12 && now.fract() == 0.0);
        let a = performance_now(&mut ctx, Value::UNDEFINED, &[]).unwrap().as_number();
        let b = performance_now(&mut ctx, Value::UNDEFINED, &[]).unwrap().as_number();
        assert!(a >= 0.0 && b >= a);
    }
}
