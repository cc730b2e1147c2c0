//! `std:process`: child processes. `run` waits for one to finish; `spawn`
//! starts one and returns a `Child` at once. Starting, waiting, writing to
//! the child's stdin and reading its output all run on the blocking pool
//! with only the calling task suspended; reading uses the same buffered
//! reader as files (`io::ReadBuf`), so a cancelled read consumes nothing.
//!
//! No shell is involved: `cmd` is found on `PATH` and `args` are passed as
//! they are. The child's environment is this process's, with `env`'s
//! entries added or replaced.

use super::io::{answer, block_on, block_then_rerun, read_max, IoFailure, ReadBuf, Trace};
use super::{Capability, StdModule};
use crate::builtins::bytes::{alloc_bytes, as_bytes};
use crate::sync::Resume;
use crate::vm::atom::Atom;
use crate::vm::host::{new_host_object_with, payload_arc, HostClass};
use crate::vm::native::{arg, NativeCtx};
use crate::vm::object::Body;
use crate::vm::{ops, Runtime, Value};
use parking_lot::Mutex;
use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::sync::Arc;

pub static MODULE: StdModule = StdModule {
    name: "process",
    capability: Some(Capability::Process),
    natives: &[("run", run), ("spawn", spawn)],
    source: None,
    types: &["Child", "ChildStdin", "ChildOutput"],
};

static CHILD: HostClass = HostClass {
    name: "Child",
    methods: &[("wait", child_wait), ("kill", child_kill)],
    getters: &[],
    next: None,
    inspect: None,
};

static CHILD_STDIN: HostClass = HostClass {
    name: "ChildStdin",
    methods: &[("write", stdin_write), ("close", stdin_close)],
    getters: &[],
    next: None,
    inspect: None,
};

static CHILD_OUTPUT: HostClass = HostClass {
    name: "ChildOutput",
    methods: &[("readLine", output_read_line), ("read", output_read)],
    getters: &[],
    next: None,
    inspect: None,
};

// ---- arguments -------------------------------------------------------------------

/// What `run` and `spawn` take: `(cmd, args?, { input?, cwd?, env? })`.
struct Spec {
    cmd: String,
    args: Vec<String>,
    cwd: Option<String>,
    env: Vec<(String, String)>,
    input: Option<Vec<u8>>,
}

impl Spec {
    fn command(&self) -> Command {
        let mut c = Command::new(&self.cmd);
        c.args(&self.args);
        if let Some(dir) = &self.cwd {
            c.current_dir(dir);
        }
        c.envs(self.env.iter().map(|(k, v)| (k, v)));
        c
    }

    /// The failure to start the program: `spawn 'cmd'`.
    fn spawn_failure(&self, e: &std::io::Error) -> IoFailure {
        IoFailure::new(e, "spawn", Some(&self.cmd))
    }
}

fn no_nul(ctx: &mut NativeCtx, s: &str, func: &str, what: &str) -> Result<(), Value> {
    if s.contains('\0') {
        Err(ctx.type_error(format!("{func}: {what} must not contain NUL bytes")))
    } else {
        Ok(())
    }
}

fn spec_args(ctx: &mut NativeCtx, args: &[Value], func: &str, with_input: bool) -> Result<Spec, Value> {
    let c = arg(args, 0);
    let Some(cmd) = ops::as_str(c).map(str::to_owned) else {
        return Err(ctx.type_error(format!("{func}: the command must be a string, got {}", ops::type_of(c))));
    };
    no_nul(ctx, &cmd, func, "the command")?;
    let mut spec = Spec { cmd, args: Vec::new(), cwd: None, env: Vec::new(), input: None };
    let a = arg(args, 1);
    if !a.is_undefined() {
        let Some(items) = ops::array_data(a).map(|v| v.clone()) else {
            return Err(ctx.type_error(format!("{func}: the arguments must be an array, got {}", ops::type_of(a))));
        };
        for v in items {
            let Some(s) = ops::as_str(v) else {
                return Err(ctx.type_error(format!("{func}: each argument must be a string, got {}", ops::type_of(v))));
            };
            no_nul(ctx, s, func, "an argument")?;
            spec.args.push(s.to_owned());
        }
    }
    let o = arg(args, 2);
    if o.is_undefined() {
        return Ok(spec);
    }
    if ops::object_data(o).is_none() {
        return Err(ctx.type_error(format!("{func}: the options must be an object, got {}", ops::type_of(o))));
    }
    let cwd = ctx.get(o, "cwd")?;
    if !cwd.is_undefined() {
        let Some(dir) = ops::as_str(cwd) else {
            return Err(ctx.type_error(format!("{func}: `cwd` must be a string, got {}", ops::type_of(cwd))));
        };
        no_nul(ctx, dir, func, "`cwd`")?;
        spec.cwd = Some(dir.to_owned());
    }
    let env = ctx.get(o, "env")?;
    if !env.is_undefined() {
        let Some(pairs) = ops::object_data(env).map(|d| d.props.iter().collect::<Vec<(Atom, Value)>>()) else {
            return Err(ctx.type_error(format!("{func}: `env` must be an object, got {}", ops::type_of(env))));
        };
        for (k, v) in pairs {
            let Some(val) = ops::as_str(v) else {
                return Err(ctx.type_error(format!(
                    "{func}: the value of env `{}` must be a string, got {}",
                    k.as_str(),
                    ops::type_of(v)
                )));
            };
            let key = k.as_str();
            if key.is_empty() || key.contains('=') || key.contains('\0') || val.contains('\0') {
                return Err(ctx.type_error(format!("{func}: invalid environment variable `{key}`")));
            }
            spec.env.push((key.to_owned(), val.to_owned()));
        }
    }
    let input = ctx.get(o, "input")?;
    if !input.is_undefined() {
        if !with_input {
            return Err(ctx.type_error(format!("{func}: `input` is not an option of {func}; write to child.stdin")));
        }
        spec.input = Some(match (ops::as_str(input), as_bytes(input)) {
            (Some(s), _) => s.as_bytes().to_vec(),
            (_, Some(b)) => b.to_vec(),
            _ => {
                return Err(ctx.type_error(format!(
                    "{func}: `input` must be a string or a Uint8Array, got {}",
                    ops::type_of(input)
                )))
            }
        });
    }
    Ok(spec)
}

/// The exit code Raya reports: the code, or 128 + the signal that ended
/// the process.
fn exit_code(status: std::process::ExitStatus) -> i32 {
    status.code().or_else(|| status.signal().map(|s| 128 + s)).unwrap_or(-1)
}

// ---- run -----------------------------------------------------------------------------

/// `run(cmd, args?, { input?, cwd?, env? })`: runs the program to its end
/// and returns `{ code, stdout, stderr }` (output as UTF-8 text).
fn run(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let spec = spec_args(ctx, args, "run", true)?;
    block_on(
        ctx,
        format!("running `{}`", spec.cmd),
        move || -> Result<(i32, Vec<u8>, Vec<u8>), IoFailure> {
            let mut c = spec.command();
            c.stdin(if spec.input.is_some() { Stdio::piped() } else { Stdio::null() });
            c.stdout(Stdio::piped()).stderr(Stdio::piped());
            let mut child = c.spawn().map_err(|e| spec.spawn_failure(&e))?;
            // Written from its own thread: the child may fill its output
            // pipes before it has read all its input.
            let writer = match (child.stdin.take(), spec.input) {
                (Some(mut pipe), Some(data)) => Some(std::thread::spawn(move || {
                    // A child that exits without reading all of it is not
                    // an error of `run`.
                    let _ = pipe.write_all(&data);
                })),
                _ => None,
            };
            let out = child.wait_with_output().map_err(|e| IoFailure::new(&e, "wait", Some(&spec.cmd)))?;
            if let Some(w) = writer {
                let _ = w.join();
            }
            Ok((exit_code(out.status), out.stdout, out.stderr))
        },
        |rt: &mut Runtime, trace: &Trace, r| match r {
            Ok((code, stdout, stderr)) => {
                let stdout = rt.heap.alloc_str(String::from_utf8_lossy(&stdout).into_owned());
                let stderr = rt.heap.alloc_str(String::from_utf8_lossy(&stderr).into_owned());
                let mut props = crate::vm::object::PropMap::new();
                props.set(Atom::intern("code"), Value::number(code as f64));
                props.set(Atom::intern("stdout"), stdout);
                props.set(Atom::intern("stderr"), stderr);
                Resume::Value(rt.heap.alloc(Body::Object(crate::vm::object::Mut::new(crate::vm::object::ObjectData {
                    class: Value::UNDEFINED,
                    props,
                    frozen: false,
                }))))
            }
            Err(f) => Resume::Throw(f.to_error(rt, trace)),
        },
    )
}

// ---- spawn and Child -----------------------------------------------------------------

/// A spawned child's state, shared by its `Child` object and the pool jobs.
struct ChildState {
    pid: u32,
    /// Held by a `wait` job for as long as it waits.
    child: Mutex<std::process::Child>,
    /// The exit code once a `wait` saw it; `kill` then does nothing (the
    /// pid may already name another process).
    status: Mutex<Option<i32>>,
}

/// `child.stdin`.
struct InputState {
    pipe: Mutex<Option<std::process::ChildStdin>>,
}

/// `child.stdout` or `child.stderr`.
struct OutputState {
    inner: Mutex<OutputInner>,
}

struct OutputInner {
    pipe: Box<dyn Read + Send>,
    rb: ReadBuf,
}

fn host(
    rt: &mut Runtime,
    class: &'static HostClass,
    data: Arc<dyn std::any::Any + Send + Sync>,
    fields: Vec<(Atom, Value)>,
) -> Value {
    new_host_object_with(rt, class, data, fields.into_boxed_slice())
}

/// `spawn(cmd, args?, { cwd?, env? })`: starts the program with piped
/// stdin, stdout and stderr, and returns its `Child` at once.
fn spawn(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let spec = spec_args(ctx, args, "spawn", false)?;
    block_on(
        ctx,
        format!("starting `{}`", spec.cmd),
        move || {
            let mut c = spec.command();
            c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
            c.spawn().map_err(|e| spec.spawn_failure(&e))
        },
        |rt: &mut Runtime, trace: &Trace, r| match r {
            Ok(mut child) => {
                let pid = child.id();
                let input = Arc::new(InputState { pipe: Mutex::new(child.stdin.take()) });
                let output = |pipe: Option<Box<dyn Read + Send>>| {
                    let pipe = pipe.unwrap_or_else(|| Box::new(std::io::empty()));
                    Arc::new(OutputState { inner: Mutex::new(OutputInner { pipe, rb: ReadBuf::default() }) })
                };
                let stdout = output(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
                let stderr = output(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
                let state = Arc::new(ChildState { pid, child: Mutex::new(child), status: Mutex::new(None) });
                let stdin_v = host(rt, &CHILD_STDIN, input, Vec::new());
                let stdout_v = host(rt, &CHILD_OUTPUT, stdout, Vec::new());
                let stderr_v = host(rt, &CHILD_OUTPUT, stderr, Vec::new());
                let fields = vec![
                    (Atom::intern("pid"), Value::number(pid as f64)),
                    (Atom::intern("stdin"), stdin_v),
                    (Atom::intern("stdout"), stdout_v),
                    (Atom::intern("stderr"), stderr_v),
                ];
                Resume::Value(host(rt, &CHILD, state, fields))
            }
            Err(f) => Resume::Throw(f.to_error(rt, trace)),
        },
    )
}

fn this_data<T: Send + Sync + 'static>(
    ctx: &mut NativeCtx,
    this: Value,
    class: &'static HostClass,
    what: &str,
) -> Result<Arc<T>, Value> {
    payload_arc::<T>(this, class).ok_or_else(|| ctx.type_error(format!("{what}: this is not a {}", class.name)))
}

/// `child.wait()`: the exit code (128 + the signal number if a signal
/// ended it). Waiting again gives the same code.
fn child_wait(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let state = this_data::<ChildState>(ctx, this, &CHILD, "Child.wait")?;
    if let Some(code) = *state.status.lock() {
        return Ok(Value::number(code as f64));
    }
    block_on(
        ctx,
        format!("waiting for process {}", state.pid),
        move || {
            let mut child = state.child.lock();
            if let Some(code) = *state.status.lock() {
                return Ok(code);
            }
            let status = child.wait().map_err(|e| IoFailure::new(&e, "wait", None))?;
            let code = exit_code(status);
            *state.status.lock() = Some(code);
            Ok(code)
        },
        |rt: &mut Runtime, trace: &Trace, r: Result<i32, IoFailure>| match r {
            Ok(code) => Resume::Value(Value::number(code as f64)),
            Err(f) => Resume::Throw(f.to_error(rt, trace)),
        },
    )
}

/// The signals `kill` knows, by name.
const SIGNALS: &[(&str, i32)] = &[
    ("SIGTERM", libc::SIGTERM),
    ("SIGKILL", libc::SIGKILL),
    ("SIGINT", libc::SIGINT),
    ("SIGHUP", libc::SIGHUP),
    ("SIGQUIT", libc::SIGQUIT),
    ("SIGUSR1", libc::SIGUSR1),
    ("SIGUSR2", libc::SIGUSR2),
    ("SIGSTOP", libc::SIGSTOP),
    ("SIGCONT", libc::SIGCONT),
    ("SIGPIPE", libc::SIGPIPE),
    ("SIGALRM", libc::SIGALRM),
];

/// `child.kill(signal = "SIGTERM")`: sends the signal (nothing once the
/// child was waited for).
fn child_kill(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let state = this_data::<ChildState>(ctx, this, &CHILD, "Child.kill")?;
    let s = arg(args, 0);
    let name = if s.is_undefined() { "SIGTERM" } else { ops::as_str(s).unwrap_or("") };
    let Some(&(_, sig)) = SIGNALS.iter().find(|(n, _)| *n == name) else {
        return Err(ctx.type_error(format!("kill: unknown signal {}", crate::builtins::inspect::inspect(s))));
    };
    // A `wait` records the status right after it reaps the child; only in
    // the few instructions between the two could a signal reach a pid the
    // system has freed (and reuses only after cycling through all others).
    let status = state.status.lock();
    if status.is_some() {
        return Ok(Value::UNDEFINED);
    }
    // SAFETY: plain system call; the pid is our unreaped child.
    let r = unsafe { libc::kill(state.pid as libc::pid_t, sig) };
    drop(status);
    if r != 0 {
        let e = std::io::Error::last_os_error();
        // Exited but not yet waited for: a zombie takes signals silently;
        // anything else is reported.
        if e.raw_os_error() != Some(libc::ESRCH) {
            return Err(IoFailure::new(&e, "kill", None).throw(ctx));
        }
    }
    Ok(Value::UNDEFINED)
}

/// `child.stdin.write(data: string | Uint8Array)`: returns once the child
/// has taken every byte into its pipe. `EPIPE` if it no longer reads;
/// `EBADF` after `close()`.
fn stdin_write(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let state = this_data::<InputState>(ctx, this, &CHILD_STDIN, "ChildStdin.write")?;
    let v = arg(args, 0);
    let data = match (ops::as_str(v), as_bytes(v)) {
        (Some(s), _) => s.as_bytes().to_vec(),
        (_, Some(b)) => b.to_vec(),
        _ => {
            return Err(ctx.type_error(format!(
                "ChildStdin.write: the data must be a string or a Uint8Array, got {}",
                ops::type_of(v)
            )))
        }
    };
    block_on(
        ctx,
        "writing to a child process",
        move || {
            let mut g = state.pipe.lock();
            match g.as_mut() {
                Some(p) => p.write_all(&data).map_err(|e| IoFailure::new(&e, "write", None)),
                None => Err(IoFailure::code("EBADF", "bad file descriptor", "write", None)),
            }
        },
        |rt: &mut Runtime, trace: &Trace, r: Result<(), IoFailure>| match r {
            Ok(()) => Resume::Value(Value::UNDEFINED),
            Err(f) => Resume::Throw(f.to_error(rt, trace)),
        },
    )
}

/// `child.stdin.close()`: the child sees end of input. Closing again does
/// nothing.
fn stdin_close(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let state = this_data::<InputState>(ctx, this, &CHILD_STDIN, "ChildStdin.close")?;
    if let Some(mut g) = state.pipe.try_lock() {
        g.take();
        return Ok(Value::UNDEFINED);
    }
    // A write is in progress: close after it, on the pool.
    block_on(
        ctx,
        "closing a child's stdin",
        move || drop(state.pipe.lock().take()),
        |_, _, ()| Resume::Value(Value::UNDEFINED),
    )
}

/// `child.stdout.readLine()` / `child.stderr.readLine()`.
fn output_read_line(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let state = this_data::<OutputState>(ctx, this, &CHILD_OUTPUT, "ChildOutput.readLine")?;
    if let Some(mut g) = state.inner.try_lock() {
        if let Some(r) = g.rb.try_line() {
            drop(g);
            return answer(ctx, r, |ctx, line| line.map_or(Value::NULL, |l| ctx.str(l)));
        }
    }
    block_then_rerun(ctx, "reading a child's output", move || {
        let g = &mut *state.inner.lock();
        g.rb.fill_line(&mut g.pipe, "read");
    })
}

/// `child.stdout.read(max?)` / `child.stderr.read(max?)`.
fn output_read(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let state = this_data::<OutputState>(ctx, this, &CHILD_OUTPUT, "ChildOutput.read")?;
    let max = read_max(ctx, arg(args, 0), "ChildOutput.read")?;
    if let Some(mut g) = state.inner.try_lock() {
        if let Some(r) = g.rb.try_bytes(max) {
            drop(g);
            return answer(ctx, r, |ctx, data| data.map_or(Value::NULL, |d| alloc_bytes(ctx, d)));
        }
    }
    block_then_rerun(ctx, "reading a child's output", move || {
        let g = &mut *state.inner.lock();
        g.rb.fill_some(&mut g.pipe, "read");
    })
}
