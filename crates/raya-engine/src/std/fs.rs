//! `std:fs`: files and directories. Every operation that touches the disk
//! runs on the blocking pool with only the calling task suspended
//! (`super::io`); errors are `IOError`s in Node's form.
//!
//! # Open files
//!
//! A `File` is a host object (`vm::host`) whose state ([`FileState`]) is shared with
//! the pool jobs working on it, under one mutex. The worker only ever
//! `try_lock`s it: when it is free and the read buffer can answer
//! (`readLine` with a whole line buffered, `read` with bytes buffered), or
//! can be refilled from what the page cache holds without blocking
//! (`io::read_nowait`), the call completes on the worker with no pool
//! round trip; otherwise a pool job (which may block on the lock, on its
//! own thread) refills the buffer and the task re-runs the call
//! (`io::block_then_rerun`, `io::ReadBuf`). A 64 KiB refill serves many
//! lines, and since only the task itself consumes from the buffer, a
//! cancelled read consumes nothing.

use super::io::{answer, block_on, block_then_rerun, line_value, read_max, IoFailure, ReadBuf, Trace};
use super::{Capability, StdModule};
use crate::builtins::bytes::{alloc_bytes, as_bytes, decode_utf8};
use crate::sync::Resume;
use crate::vm::host::{new_host_object, payload, payload_arc, HostClass};
use crate::vm::native::{arg, NativeCtx};
use crate::vm::object::Body;
use crate::vm::{ops, Runtime, Value};
use parking_lot::Mutex;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::UNIX_EPOCH;

pub static MODULE: StdModule = StdModule {
    name: "fs",
    capability: Some(Capability::Fs),
    natives: &[
        ("readTextFile", read_text_file),
        ("readFile", read_file),
        ("writeTextFile", write_text_file),
        ("writeFile", write_file),
        ("appendTextFile", append_text_file),
        ("exists", exists),
        ("stat", stat),
        ("readDir", read_dir),
        ("mkdir", mkdir),
        ("remove", remove),
        ("rename", rename),
        ("copyFile", copy_file),
        ("open", open),
    ],
    source: None,
    types: &["File"],
};

static FILE: HostClass = HostClass {
    name: "File",
    methods: &[("read", file_read), ("readLine", file_read_line), ("write", file_write), ("close", file_close)],
    getters: &[],
    next: None,
    inspect: None,
};

// ---- arguments -------------------------------------------------------------------

/// Argument `i`, a path (named `what` in messages): a string without NUL
/// bytes, else a `TypeError` naming `func`.
fn path_arg(ctx: &mut NativeCtx, args: &[Value], i: usize, func: &str, what: &str) -> Result<String, Value> {
    let v = arg(args, i);
    match ops::as_str(v) {
        Some(s) if s.contains('\0') => Err(ctx.type_error(format!("{func}: the {what} must not contain NUL bytes"))),
        Some(s) => Ok(s.to_string()),
        None => Err(ctx.type_error(format!("{func}: the {what} must be a string, got {}", ops::type_of(v)))),
    }
}

fn text_arg(ctx: &mut NativeCtx, args: &[Value], i: usize, func: &str) -> Result<String, Value> {
    let v = arg(args, i);
    match ops::as_str(v) {
        Some(s) => Ok(s.to_string()),
        None => Err(ctx.type_error(format!("{func}: the text must be a string, got {}", ops::type_of(v)))),
    }
}

/// A `string | Uint8Array` argument as bytes (strings as UTF-8).
fn data_arg(ctx: &mut NativeCtx, args: &[Value], i: usize, func: &str) -> Result<Vec<u8>, Value> {
    let v = arg(args, i);
    if let Some(s) = ops::as_str(v) {
        return Ok(s.as_bytes().to_vec());
    }
    match as_bytes(v) {
        Some(b) => Ok(b.to_vec()),
        None => {
            Err(ctx.type_error(format!("{func}: the data must be a string or a Uint8Array, got {}", ops::type_of(v))))
        }
    }
}

/// `{ recursive?: boolean }` (undefined: false).
fn recursive_option(ctx: &mut NativeCtx, args: &[Value], i: usize, func: &str) -> Result<bool, Value> {
    let opts = arg(args, i);
    if opts.is_undefined() {
        return Ok(false);
    }
    if ops::object_data(opts).is_none() {
        return Err(ctx.type_error(format!("{func}: the options must be an object, got {}", ops::type_of(opts))));
    }
    let r = ctx.get(opts, "recursive")?;
    if r.is_undefined() {
        Ok(false)
    } else if r.is_bool() {
        Ok(r == Value::TRUE)
    } else {
        Err(ctx.type_error(format!("{func}: `recursive` must be a boolean, got {}", ops::type_of(r))))
    }
}

/// Runs `job` on the pool; its `Ok` becomes the call's value through
/// `make`, its `Err` is thrown as an `IOError`.
fn fs_op<T: Send + 'static>(
    ctx: &mut NativeCtx,
    what: &'static str,
    job: impl FnOnce() -> Result<T, IoFailure> + Send + 'static,
    make: impl FnOnce(&mut Runtime, T) -> Value + Send + 'static,
) -> Result<Value, Value> {
    block_on(ctx, what, job, move |rt, trace: &Trace, r| match r {
        Ok(v) => Resume::Value(make(rt, v)),
        Err(f) => Resume::Throw(f.to_error(rt, trace)),
    })
}

// ---- whole files -------------------------------------------------------------------

/// Opens `path` for reading and reads all of it (`open`, then `read`, as
/// the errors name them: a directory opens, and fails to read).
fn read_all(path: &str) -> Result<Vec<u8>, IoFailure> {
    let mut f = std::fs::File::open(path).map_err(|e| IoFailure::new(&e, "open", Some(path)))?;
    let mut out = Vec::new();
    f.read_to_end(&mut out).map_err(|e| IoFailure::new(&e, "read", Some(path)))?;
    Ok(out)
}

/// `readTextFile(path)`: the file as UTF-8 text (invalid sequences become
/// U+FFFD, as `TextDecoder` does).
fn read_text_file(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let path = path_arg(ctx, args, 0, "readTextFile", "path")?;
    fs_op(ctx, "in fs.readTextFile", move || read_all(&path), |rt, bytes| rt.heap.alloc_str(decode_utf8(&bytes)))
}

/// `readFile(path)`: the file's bytes.
fn read_file(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let path = path_arg(ctx, args, 0, "readFile", "path")?;
    fs_op(
        ctx,
        "in fs.readFile",
        move || read_all(&path),
        |rt, bytes| rt.heap.alloc(Body::Bytes(crate::vm::object::Bytes::new(bytes))),
    )
}

/// Writes `data` to `path`, created or truncated (`append`: appended).
fn write_all(path: &str, data: &[u8], append: bool) -> Result<(), IoFailure> {
    let mut o = std::fs::OpenOptions::new();
    o.create(true);
    if append {
        o.append(true);
    } else {
        o.write(true).truncate(true);
    }
    let mut f = o.open(path).map_err(|e| IoFailure::new(&e, "open", Some(path)))?;
    f.write_all(data).map_err(|e| IoFailure::new(&e, "write", Some(path)))
}

fn write_op(
    ctx: &mut NativeCtx,
    what: &'static str,
    path: String,
    data: Vec<u8>,
    append: bool,
) -> Result<Value, Value> {
    fs_op(ctx, what, move || write_all(&path, &data, append), |_, ()| Value::UNDEFINED)
}

/// `writeTextFile(path, text)`.
fn write_text_file(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let path = path_arg(ctx, args, 0, "writeTextFile", "path")?;
    let text = text_arg(ctx, args, 1, "writeTextFile")?;
    write_op(ctx, "in fs.writeTextFile", path, text.into_bytes(), false)
}

/// `writeFile(path, data: Uint8Array | string)`.
fn write_file(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let path = path_arg(ctx, args, 0, "writeFile", "path")?;
    let data = data_arg(ctx, args, 1, "writeFile")?;
    write_op(ctx, "in fs.writeFile", path, data, false)
}

/// `appendTextFile(path, text)`: creates the file if needed.
fn append_text_file(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let path = path_arg(ctx, args, 0, "appendTextFile", "path")?;
    let text = text_arg(ctx, args, 1, "appendTextFile")?;
    write_op(ctx, "in fs.appendTextFile", path, text.into_bytes(), true)
}

// ---- paths and directories ------------------------------------------------------------

/// `exists(path)`: whether anything is there (following symbolic links).
/// A path no file can have (a NUL byte) does not exist.
fn exists(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let v = arg(args, 0);
    let Some(path) = ops::as_str(v).map(str::to_owned) else {
        return Err(ctx.type_error(format!("exists: the path must be a string, got {}", ops::type_of(v))));
    };
    if path.contains('\0') {
        return Ok(Value::FALSE);
    }
    block_on(
        ctx,
        "in fs.exists",
        move || std::fs::metadata(path).is_ok(),
        |_, _, found| Resume::Value(Value::bool(found)),
    )
}

/// `stat(path)`: `{ size, isFile, isDirectory, mtimeMs }` (following
/// symbolic links).
fn stat(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let path = path_arg(ctx, args, 0, "stat", "path")?;
    fs_op(
        ctx,
        "in fs.stat",
        move || {
            let m = std::fs::metadata(&path).map_err(|e| IoFailure::new(&e, "stat", Some(&path)))?;
            let mtime = m.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok());
            Ok((m.len() as f64, m.is_file(), m.is_dir(), mtime.map_or(0.0, |d| d.as_secs_f64() * 1000.0)))
        },
        |rt, (size, is_file, is_dir, mtime)| {
            let mut ctx_props = crate::vm::object::PropMap::new();
            for (k, v) in [
                ("size", Value::number(size)),
                ("isFile", Value::bool(is_file)),
                ("isDirectory", Value::bool(is_dir)),
                ("mtimeMs", Value::number(mtime)),
            ] {
                ctx_props.set(crate::vm::atom::Atom::intern(k), v);
            }
            rt.heap.alloc(Body::Object(crate::vm::object::Mut::new(crate::vm::object::ObjectData {
                class: Value::UNDEFINED,
                props: ctx_props,
                frozen: false,
            })))
        },
    )
}

/// `readDir(path)`: the names of the entries, sorted.
fn read_dir(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let path = path_arg(ctx, args, 0, "readDir", "path")?;
    fs_op(
        ctx,
        "in fs.readDir",
        move || {
            let fail = |e: std::io::Error| IoFailure::new(&e, "scandir", Some(&path));
            let mut names = Vec::new();
            for entry in std::fs::read_dir(&path).map_err(fail)? {
                names.push(entry.map_err(fail)?.file_name().to_string_lossy().into_owned());
            }
            names.sort();
            Ok(names)
        },
        |rt, names| {
            let items = names.into_iter().map(|n| rt.heap.alloc_str(n)).collect();
            rt.heap.alloc_array(items)
        },
    )
}

/// `mkdir(path, { recursive })`: with `recursive`, missing parents are
/// made too and an existing directory is fine.
fn mkdir(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let path = path_arg(ctx, args, 0, "mkdir", "path")?;
    let recursive = recursive_option(ctx, args, 1, "mkdir")?;
    fs_op(
        ctx,
        "in fs.mkdir",
        move || {
            let r = if recursive { std::fs::create_dir_all(&path) } else { std::fs::create_dir(&path) };
            r.map_err(|e| IoFailure::new(&e, "mkdir", Some(&path)))
        },
        |_, ()| Value::UNDEFINED,
    )
}

/// `remove(path, { recursive })`: a file, an empty directory, or with
/// `recursive` a directory and everything in it. A symbolic link is
/// removed, never followed.
fn remove(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let path = path_arg(ctx, args, 0, "remove", "path")?;
    let recursive = recursive_option(ctx, args, 1, "remove")?;
    fs_op(
        ctx,
        "in fs.remove",
        move || {
            let m = std::fs::symlink_metadata(&path).map_err(|e| IoFailure::new(&e, "lstat", Some(&path)))?;
            if m.is_dir() {
                let r = if recursive { std::fs::remove_dir_all(&path) } else { std::fs::remove_dir(&path) };
                r.map_err(|e| IoFailure::new(&e, "rmdir", Some(&path)))
            } else {
                std::fs::remove_file(&path).map_err(|e| IoFailure::new(&e, "unlink", Some(&path)))
            }
        },
        |_, ()| Value::UNDEFINED,
    )
}

/// `rename(from, to)`.
fn rename(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let from = path_arg(ctx, args, 0, "rename", "source path")?;
    let to = path_arg(ctx, args, 1, "rename", "destination path")?;
    fs_op(
        ctx,
        "in fs.rename",
        move || std::fs::rename(&from, &to).map_err(|e| IoFailure::new(&e, "rename", Some(&from)).with_dest(&to)),
        |_, ()| Value::UNDEFINED,
    )
}

/// `copyFile(from, to)`: the destination is created or truncated.
fn copy_file(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let from = path_arg(ctx, args, 0, "copyFile", "source path")?;
    let to = path_arg(ctx, args, 1, "copyFile", "destination path")?;
    fs_op(
        ctx,
        "in fs.copyFile",
        move || {
            let fail = |e: &std::io::Error| IoFailure::new(e, "copyfile", Some(&from)).with_dest(&to);
            let m = std::fs::metadata(&from).map_err(|e| fail(&e))?;
            if m.is_dir() {
                return Err(fail(&std::io::Error::from_raw_os_error(libc::EISDIR)));
            }
            if m.is_file() {
                return std::fs::copy(&from, &to).map(|_| ()).map_err(|e| fail(&e));
            }
            // A device or a pipe: copied by reading it, as Node does.
            let mut src = std::fs::File::open(&from).map_err(|e| fail(&e))?;
            let mut dst = std::fs::File::create(&to).map_err(|e| fail(&e))?;
            std::io::copy(&mut src, &mut dst).map(|_| ()).map_err(|e| fail(&e))
        },
        |_, ()| Value::UNDEFINED,
    )
}

// ---- open files ----------------------------------------------------------------------

/// An open file's state, shared by its `File` object and the pool jobs
/// working on it (see the module docs).
struct FileState {
    inner: Mutex<FileInner>,
}

struct FileInner {
    /// None once closed.
    file: Option<std::fs::File>,
    rb: ReadBuf,
}

fn closed_error(ctx: &mut NativeCtx, syscall: &'static str) -> Value {
    IoFailure::code("EBADF", "bad file descriptor", syscall, None).throw(ctx)
}

fn this_file(ctx: &mut NativeCtx, this: Value, method: &str) -> Result<Arc<FileState>, Value> {
    payload_arc::<FileState>(this, &FILE).ok_or_else(|| ctx.type_error(format!("File.{method}: this is not a File")))
}

/// `open(path, mode = "r")`: `"r"` reads, `"w"` creates or truncates,
/// `"a"` creates or appends.
fn open(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let path = path_arg(ctx, args, 0, "open", "path")?;
    let m = arg(args, 1);
    let mode = if m.is_undefined() { "r" } else { ops::as_str(m).unwrap_or("") };
    let mut o = std::fs::OpenOptions::new();
    match mode {
        "r" => o.read(true),
        "w" => o.write(true).create(true).truncate(true),
        "a" => o.append(true).create(true),
        _ => {
            return Err(ctx.type_error(format!(
                "open: the mode must be \"r\", \"w\" or \"a\", got {}",
                crate::builtins::inspect::inspect(m)
            )))
        }
    };
    fs_op(
        ctx,
        "in fs.open",
        move || o.open(&path).map_err(|e| IoFailure::new(&e, "open", Some(&path))),
        |rt, file| {
            let state = FileState { inner: Mutex::new(FileInner { file: Some(file), rb: ReadBuf::default() }) };
            new_host_object(rt, &FILE, Arc::new(state))
        },
    )
}

/// `file.readLine()`: the next line without its `\n` or `\r\n`, or null at
/// end of file (a last line without `\n` is still a line).
fn file_read_line(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    // Borrowed while the call runs on the worker (`this` keeps the file
    // alive); the pool job gets its own reference below.
    let Some(state) = payload::<FileState>(this, &FILE) else {
        return Err(ctx.type_error("File.readLine: this is not a File"));
    };
    if let Some(mut g) = state.inner.try_lock() {
        let Some(fd) = g.file.as_ref().map(|f| f.as_raw_fd()) else {
            drop(g);
            return Err(closed_error(ctx, "read"));
        };
        // What the page cache holds is read here, on the worker: a cached
        // file read line by line never waits for the pool. The string is
        // made from the buffer itself (no copy in between), while the
        // state is still locked.
        if let Some(r) = g.rb.line_nowait(fd) {
            return answer(ctx, r, |ctx, line| line.map_or(Value::NULL, |l| line_value(ctx, l)));
        }
    }
    let state = this_file(ctx, this, "readLine")?;
    block_then_rerun(ctx, "reading a file", move || {
        let g = &mut *state.inner.lock();
        if let Some(f) = g.file.as_mut() {
            g.rb.fill_line(f, "read");
        }
    })
}

/// `file.read(max = 65536)`: at most `max` bytes (at least one), or null at
/// end of file.
fn file_read(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let state = this_file(ctx, this, "read")?;
    let max = read_max(ctx, arg(args, 0), "File.read")?;
    if let Some(mut g) = state.inner.try_lock() {
        let Some(fd) = g.file.as_ref().map(|f| f.as_raw_fd()) else {
            drop(g);
            return Err(closed_error(ctx, "read"));
        };
        g.rb.fill_some_nowait(fd);
        if let Some(r) = g.rb.try_bytes(max) {
            drop(g);
            return answer(ctx, r, |ctx, data| data.map_or(Value::NULL, |d| alloc_bytes(ctx, d)));
        }
    }
    block_then_rerun(ctx, "reading a file", move || {
        let g = &mut *state.inner.lock();
        if let Some(f) = g.file.as_mut() {
            g.rb.fill_some(f, "read");
        }
    })
}

/// `file.write(data: string | Uint8Array)`: returns once every byte is
/// written.
fn file_write(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let state = this_file(ctx, this, "write")?;
    let data = data_arg(ctx, args, 0, "File.write")?;
    if state.inner.try_lock().is_some_and(|g| g.file.is_none()) {
        return Err(closed_error(ctx, "write"));
    }
    fs_op(
        ctx,
        "writing a file",
        move || {
            let mut g = state.inner.lock();
            match g.file.as_mut() {
                Some(f) => f.write_all(&data).map_err(|e| IoFailure::new(&e, "write", None)),
                None => Err(IoFailure::code("EBADF", "bad file descriptor", "write", None)),
            }
        },
        |_, ()| Value::UNDEFINED,
    )
}

/// `file.close()`: closing again does nothing.
fn file_close(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let state = this_file(ctx, this, "close")?;
    if let Some(mut g) = state.inner.try_lock() {
        close_inner(&mut g);
        return Ok(Value::UNDEFINED);
    }
    // Another task's operation holds the file: close after it, there.
    block_on(
        ctx,
        "closing a file",
        move || close_inner(&mut state.inner.lock()),
        |_, _, ()| Resume::Value(Value::UNDEFINED),
    )
}

fn close_inner(g: &mut FileInner) {
    g.file = None;
    g.rb.clear();
}
