//! Blocking work done for a task: the calling task suspends, a thread of
//! the program's blocking pool does the work, and the task resumes with
//! the result. Files, directories and child-process waits go through
//! [`block_on`]; so do the embedding API's blocking host functions.
//!
//! # Protocol
//!
//! [`block_on`] submits the job, takes a hold on the program
//! (`Handle::hold`: a task waiting for the outside world is never part of
//! a deadlock, the world may still answer) and suspends the task on a
//! [`PoolWait`]. When the job is done its result is handed to a worker
//! (`Handle::on_runtime`, since only workers may allocate), which turns it
//! into a [`Resume`] and delivers it to the waiter, or parks it in the shared state if the task
//! has not registered yet (its worker is still between the native's
//! return and `park`).
//!
//! Cancellation: `t.cancel()` claims the task like any waker and runs the
//! task's cancel hook, which releases the hold at once; the job runs
//! to its end on its pool thread and its result is dropped (the claim
//! fails). Whichever of "job done" and "cancelled" comes first releases
//! the hold; the other finds it released.
//!
//! Reads that the kernel can answer at once (a cached file, a pipe with
//! data) need no pool at all: see [`read_nowait`] and [`ReadBuf`].

use crate::driver::{self, Handle};
use crate::sync::{Registered, Resume, TaskCell, Timer, WaitObject, Waiter};
use crate::vm::atom::{names, Atom};
use crate::vm::native::NativeCtx;
use crate::vm::object::{Body, Mut, ObjectData, PropMap};
use crate::vm::{ops, Runtime, Value};
use parking_lot::Mutex;
use std::borrow::Cow;
use std::io::Read;
use std::sync::Arc;

#[derive(Default)]
struct PoolState {
    waiter: Option<Waiter>,
    /// The job finished before the task registered. The calling worker is
    /// a GC mutator until the task registered, so no collection can free
    /// the value meanwhile (and `roots` reports it afterwards).
    result: Option<Resume>,
    /// Whether the wait still holds the program alive (`Handle::hold`)
    /// while the job is pending; cleared, and the hold released, by
    /// whichever of completion and cancellation comes first, so it is
    /// released exactly once.
    held: bool,
}

impl PoolState {
    fn release(&mut self, handle: &Handle) {
        if std::mem::take(&mut self.held) {
            handle.release_hold();
        }
    }
}

/// A task suspended until a blocking-pool job finishes.
struct PoolWait {
    state: Arc<Mutex<PoolState>>,
    handle: Handle,
    what: Cow<'static, str>,
    /// See [`block_then_rerun`].
    rerun: bool,
}

impl WaitObject for PoolWait {
    fn register(&self, w: Waiter, _woken: &mut Vec<Arc<TaskCell>>, _timers: &mut Vec<Timer>) -> Registered {
        let mut s = self.state.lock();
        if let Some(r) = s.result.take() {
            return if w.claim() { Registered::Ready(r) } else { Registered::Queued };
        }
        // Cancellation releases the program at once (see the module docs).
        let (state, handle) = (self.state.clone(), self.handle.clone());
        w.task.set_cancel_hook(Box::new(move || state.lock().release(&handle)));
        // A cancel that claimed the task before the hook was set found no
        // hook: this check (after the hook is set; `t.cancel()` claims,
        // then takes the hook) sees its claim. Only a cancel can have
        // claimed: the job's completion claims under this lock.
        if !w.is_live() {
            s.release(&self.handle);
        }
        s.waiter = Some(w);
        Registered::Queued
    }

    fn describe(&self) -> Cow<'static, str> {
        self.what.clone()
    }

    fn reruns_call(&self) -> bool {
        self.rerun
    }

    fn blocker(&self) -> crate::sync::Blocker {
        crate::sync::Blocker::Other(&"io")
    }

    fn roots(&self) -> Vec<Value> {
        match self.state.lock().result {
            Some(Resume::Value(v)) | Some(Resume::Throw(v)) => vec![v],
            _ => Vec::new(),
        }
    }
}

/// Runs `job` on the program's blocking pool with the calling task
/// suspended (described as `what` in deadlock and never-finished reports);
/// on a worker, `finish` turns the job's output into what the call returns
/// (`Resume::Value`) or throws (`Resume::Throw`). `finish` gets the
/// caller's stack as it was at the call, for errors ([`Trace::error`]).
/// The native must return the value this returns, at once.
pub fn block_on<T: Send + 'static>(
    ctx: &mut NativeCtx,
    what: impl Into<Cow<'static, str>>,
    job: impl FnOnce() -> T + Send + 'static,
    finish: impl FnOnce(&mut Runtime, &Trace, T) -> Resume + Send + 'static,
) -> Result<Value, Value> {
    submit(ctx, what.into(), false, job, finish)
}

/// Runs `job` on the blocking pool with the calling task suspended, then
/// runs the suspending call again. For objects whose operations consume
/// from a buffer (a file's `readLine`): the job only fills the buffer and
/// the call, re-run by the task itself, takes what it needs, so a
/// cancelled wait consumes nothing.
pub fn block_then_rerun(
    ctx: &mut NativeCtx,
    what: impl Into<Cow<'static, str>>,
    job: impl FnOnce() + Send + 'static,
) -> Result<Value, Value> {
    submit(ctx, what.into(), true, job, |_, _, ()| Resume::Retry)
}

fn submit<T: Send + 'static>(
    ctx: &mut NativeCtx,
    what: Cow<'static, str>,
    rerun: bool,
    job: impl FnOnce() -> T + Send + 'static,
    finish: impl FnOnce(&mut Runtime, &Trace, T) -> Resume + Send + 'static,
) -> Result<Value, Value> {
    let Some(handle) = driver::current_handle() else {
        return Err(ctx.plain_error("blocking operation outside a running program"));
    };
    // Taken now: when the job ends the task's state may be on a worker
    // that is still parking it. A re-run call throws from the task itself.
    let trace = if rerun { Trace(String::new()) } else { Trace::of(ctx) };
    // A hold, not a keep-alive timer: a timer would wake the timer thread
    // at every job (each is the earliest of an otherwise empty heap).
    handle.hold();
    let state = Arc::new(Mutex::new(PoolState { held: true, ..Default::default() }));
    let (st, h) = (state.clone(), handle.clone());
    let submitted = handle.blocking_pool().submit(move || {
        let out = job();
        let h2 = h.clone();
        h.on_runtime(Box::new(move |rt| {
            let resume = finish(rt, &trace, out);
            let mut s = st.lock();
            match s.waiter.take() {
                Some(w) => {
                    if w.claim() {
                        drop(w.task.take_cancel_hook());
                        w.deliver(resume, &mut rt.woken);
                    }
                }
                None => s.result = Some(resume),
            }
            // After the wake-up is queued: the program stays non-quiescent.
            s.release(&h2);
        }));
    });
    if let Err(e) = submitted {
        state.lock().release(&handle);
        return Err(ctx.plain_error(format!("cannot start blocking work: {e}")));
    }
    ctx.rt.suspend = Some(crate::sync::Wait::Object(Box::new(PoolWait { state, handle, what, rerun })));
    Ok(Value::UNDEFINED)
}

/// The stack of a task at the call that suspended it.
pub struct Trace(String);

impl Trace {
    /// The calling task's stack now.
    pub fn of(ctx: &NativeCtx) -> Trace {
        Trace(ctx.rt.stack_trace(ctx.task))
    }

    /// A new error of `class` with `message` and this stack, with extra
    /// properties (set before the stack's header is written, which shows
    /// the error's name and message).
    pub fn error(&self, rt: &mut Runtime, class: Value, message: &str, props: &[(&str, Value)]) -> Value {
        let msg = rt.heap.alloc_str(message);
        let mut map = PropMap::new();
        map.set(names::MESSAGE, msg);
        for (k, v) in props {
            map.set(Atom::intern(k), *v);
        }
        let err = rt.heap.alloc(Body::Object(Mut::new(ObjectData { class, props: map, frozen: false })));
        let mut stack = ops::to_display(err);
        stack.push_str(&self.0);
        let s = rt.heap.alloc_str(stack);
        if let Some(mut d) = ops::object_data(err) {
            d.props.set(names::STACK, s);
        }
        err
    }
}

/// The errno name (`ENOENT`) and Node's description of an I/O error.
pub fn error_code(e: &std::io::Error) -> (&'static str, &'static str) {
    if let Some(n) = e.raw_os_error() {
        let known = match n {
            libc::ENOENT => Some(("ENOENT", "no such file or directory")),
            libc::EEXIST => Some(("EEXIST", "file already exists")),
            libc::EACCES => Some(("EACCES", "permission denied")),
            libc::EPERM => Some(("EPERM", "operation not permitted")),
            libc::EISDIR => Some(("EISDIR", "illegal operation on a directory")),
            libc::ENOTDIR => Some(("ENOTDIR", "not a directory")),
            libc::ENOTEMPTY => Some(("ENOTEMPTY", "directory not empty")),
            libc::EADDRINUSE => Some(("EADDRINUSE", "address already in use")),
            libc::EADDRNOTAVAIL => Some(("EADDRNOTAVAIL", "address not available")),
            libc::ECONNREFUSED => Some(("ECONNREFUSED", "connection refused")),
            libc::ECONNRESET => Some(("ECONNRESET", "connection reset by peer")),
            libc::ECONNABORTED => Some(("ECONNABORTED", "software caused connection abort")),
            libc::EPIPE => Some(("EPIPE", "broken pipe")),
            libc::ETIMEDOUT => Some(("ETIMEDOUT", "connection timed out")),
            libc::EBADF => Some(("EBADF", "bad file descriptor")),
            libc::EINVAL => Some(("EINVAL", "invalid argument")),
            libc::EMFILE => Some(("EMFILE", "too many open files")),
            libc::ENFILE => Some(("ENFILE", "too many open files in system")),
            libc::ENOSPC => Some(("ENOSPC", "no space left on device")),
            libc::EROFS => Some(("EROFS", "read-only file system")),
            libc::ELOOP => Some(("ELOOP", "too many symbolic links encountered")),
            libc::ENAMETOOLONG => Some(("ENAMETOOLONG", "name too long")),
            libc::EXDEV => Some(("EXDEV", "cross-device link not permitted")),
            libc::EBUSY => Some(("EBUSY", "resource busy or locked")),
            libc::ETXTBSY => Some(("ETXTBSY", "text file is busy")),
            libc::EAGAIN => Some(("EAGAIN", "resource temporarily unavailable")),
            libc::EHOSTUNREACH => Some(("EHOSTUNREACH", "host is unreachable")),
            libc::ENETUNREACH => Some(("ENETUNREACH", "network is unreachable")),
            libc::ENOTCONN => Some(("ENOTCONN", "socket is not connected")),
            libc::EIO => Some(("EIO", "i/o error")),
            _ => None,
        };
        if let Some(k) = known {
            return k;
        }
    }
    use std::io::ErrorKind as K;
    match e.kind() {
        K::NotFound => ("ENOENT", "no such file or directory"),
        K::PermissionDenied => ("EACCES", "permission denied"),
        K::AlreadyExists => ("EEXIST", "file already exists"),
        K::BrokenPipe => ("EPIPE", "broken pipe"),
        K::ConnectionRefused => ("ECONNREFUSED", "connection refused"),
        K::ConnectionReset => ("ECONNRESET", "connection reset by peer"),
        K::TimedOut => ("ETIMEDOUT", "connection timed out"),
        K::InvalidInput | K::InvalidData => ("EINVAL", "invalid argument"),
        K::UnexpectedEof => ("EOF", "end of file"),
        _ => ("EIO", "i/o error"),
    }
}

/// What an `IOError` says: Node's `CODE: description, syscall 'path'` (and
/// ` -> 'dest'` for two-path calls).
#[derive(Clone, Debug)]
pub struct IoFailure {
    pub code: &'static str,
    pub description: &'static str,
    pub syscall: &'static str,
    pub path: Option<String>,
    pub dest: Option<String>,
}

impl IoFailure {
    /// The failure of `syscall` on `path` with OS error `e`.
    pub fn new(e: &std::io::Error, syscall: &'static str, path: Option<&str>) -> IoFailure {
        let (code, description) = error_code(e);
        IoFailure { code, description, syscall, path: path.map(str::to_owned), dest: None }
    }

    /// A failure with a known code (`EBADF` for a closed file, ...).
    pub fn code(code: &'static str, description: &'static str, syscall: &'static str, path: Option<&str>) -> Self {
        IoFailure { code, description, syscall, path: path.map(str::to_owned), dest: None }
    }

    /// With the second path of a two-path call (`rename`, `copyfile`).
    pub fn with_dest(mut self, dest: &str) -> IoFailure {
        self.dest = Some(dest.to_owned());
        self
    }

    pub fn message(&self) -> String {
        let mut m = format!("{}: {}, {}", self.code, self.description, self.syscall);
        if let Some(p) = &self.path {
            m.push_str(&format!(" '{p}'"));
        }
        if let Some(d) = &self.dest {
            m.push_str(&format!(" -> '{d}'"));
        }
        m
    }

    /// The `IOError` (with `code`, `syscall` and `path`) and `trace` as its
    /// stack.
    pub fn to_error(&self, rt: &mut Runtime, trace: &Trace) -> Value {
        let code = rt.heap.alloc_str(self.code);
        let syscall = rt.heap.alloc_str(self.syscall);
        let path = match &self.path {
            Some(p) => rt.heap.alloc_str(p.as_str()),
            None => Value::NULL,
        };
        let class = rt.realm.classes.io_error;
        let mut props = vec![("code", code), ("syscall", syscall), ("path", path)];
        if let Some(d) = &self.dest {
            let dest = rt.heap.alloc_str(d.as_str());
            props.push(("dest", dest));
        }
        trace.error(rt, class, &self.message(), &props)
    }

    /// The `IOError` thrown by a native running on the calling task.
    pub fn throw(&self, ctx: &mut NativeCtx) -> Value {
        let trace = Trace::of(ctx);
        self.to_error(ctx.rt, &trace)
    }
}

/// How much a buffer refill reads, and the default `max` of `read()`.
pub const CHUNK: usize = 64 * 1024;

/// At most this many refills in a row on a worker ([`ReadBuf::fill_line_nowait`],
/// 1 MiB): a longer line is read on the pool, so one call never holds its
/// worker for long.
const NOWAIT_REFILLS: usize = 16;

/// One read of `fd` at its current offset that never blocks:
/// `preadv2(RWF_NOWAIT)` takes only what the kernel has at hand (a regular
/// file's page cache, a pipe's buffer) and fails with `EAGAIN` otherwise,
/// or with `EOPNOTSUPP` where the file type does not support it (Linux 4.14
/// and later; elsewhere it is never supported).
///
/// Why on the worker: a pool refill costs the task a suspension and two
/// thread wake-ups (the pool thread's, then a worker's for the result),
/// which on an otherwise idle machine take longer than copying 64 KiB
/// from the page cache; reading a cached 50 MB file paid about 800 of
/// them. A read that would wait for a disk or a writer still goes to the
/// pool, so a worker never blocks.
pub fn read_nowait(fd: std::os::fd::RawFd, buf: &mut [u8]) -> std::io::Result<usize> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
        // SAFETY: one iovec over a live, writable buffer of its length;
        // offset -1 reads at (and advances) the file's own offset, as read(2).
        let n = unsafe { libc::preadv2(fd, &iov, 1, -1, libc::RWF_NOWAIT) };
        if n < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        let _ = (fd, buf);
        Err(std::io::Error::from_raw_os_error(libc::EOPNOTSUPP))
    }
}

/// What a failed [`read_nowait`] means for the stream.
enum NoWait {
    /// The bytes are not at hand: this read goes to the pool.
    Later,
    /// Never at hand this way (the file type, the file system or the kernel
    /// does not support it): every read goes to the pool.
    Never,
}

fn no_wait(e: &std::io::Error) -> Option<NoWait> {
    if e.kind() == std::io::ErrorKind::WouldBlock {
        return Some(NoWait::Later);
    }
    matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EINVAL | libc::ENOSYS | libc::ESPIPE))
        .then_some(NoWait::Never)
}

/// The read side of a stream (an open file, standard input, a child's
/// output) as its natives share it: bytes read and not yet consumed, and
/// what the last refill found. Used under the stream's lock: the worker
/// answers from it when it can (`try_line`, `try_bytes`, `try_all`),
/// first refilling it itself when the kernel has the bytes at hand
/// (`fill_*_nowait`, `line_nowait`: no pool round trip, the task never
/// suspends); else a pool job refills it (`fill_*`) and the call runs
/// again (`block_then_rerun`). Either way only the calling task ever
/// consumes.
#[derive(Default)]
pub struct ReadBuf {
    /// `buf[pos..end]` is read and not yet consumed. Past `end` the buffer
    /// is room for the next read, zeroed once when it is first made (so a
    /// refill does not clear 64 KiB before the kernel overwrites them).
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// The stream ended after the buffered bytes.
    eof: bool,
    /// A refill failed: thrown by the next read, which consumes it.
    error: Option<IoFailure>,
    /// [`read_nowait`] is not supported for this stream: do not try it.
    blocking_only: bool,
}

impl ReadBuf {
    fn buffered(&self) -> &[u8] {
        &self.buf[self.pos..self.end]
    }

    /// Whether a refill could change anything.
    fn open(&self) -> bool {
        !self.eof && self.error.is_none()
    }

    /// Forgets everything (the stream was closed).
    pub fn clear(&mut self) {
        *self = ReadBuf::default();
    }

    /// Reads once more from `r` into the buffer (dropping what was
    /// consumed), or records end of stream or the error (`syscall` names
    /// the read in it).
    fn refill(&mut self, r: &mut dyn Read, syscall: &'static str) {
        let _ = self.refill_with(&mut |buf| r.read(buf), syscall, false);
    }

    /// One read into the buffer with `read`. With `nowait`, a read that
    /// would block (see [`read_nowait`]) records nothing and gives `Err`.
    fn refill_with(
        &mut self,
        read: &mut dyn FnMut(&mut [u8]) -> std::io::Result<usize>,
        syscall: &'static str,
        nowait: bool,
    ) -> Result<(), NoWait> {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        let len = self.end;
        if self.buf.len() < len + CHUNK {
            self.buf.resize(len + CHUNK, 0);
        }
        let got = loop {
            match read(&mut self.buf[len..len + CHUNK]) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                got => break got,
            }
        };
        match got {
            Ok(n) => {
                self.end = len + n;
                self.eof = n == 0;
            }
            Err(e) => {
                if nowait {
                    if let Some(why) = no_wait(&e) {
                        return Err(why);
                    }
                }
                self.error = Some(IoFailure::new(&e, syscall, None));
            }
        }
        Ok(())
    }

    /// [`ReadBuf::fill_line`] on the calling thread, reading only what the
    /// kernel has at hand ([`read_nowait`]: the page cache of a regular
    /// file, a pipe's buffer). Whether a whole line (or the end, or an
    /// error) is now buffered; false means the next read would block (or
    /// the line is longer than a worker should read at once), and it must
    /// go to the blocking pool, which finds the bytes read so far kept.
    pub fn fill_line_nowait(&mut self, fd: std::os::fd::RawFd) -> bool {
        let mut scanned = 0;
        for _ in 0..NOWAIT_REFILLS {
            if !self.open() || self.newline_from(scanned).is_some() {
                return true;
            }
            scanned = self.buffered().len();
            if !self.refill_nowait(fd) {
                return false;
            }
        }
        !self.open() || self.newline_from(scanned).is_some()
    }

    /// [`ReadBuf::fill_some`] without blocking, as [`ReadBuf::fill_line_nowait`].
    pub fn fill_some_nowait(&mut self, fd: std::os::fd::RawFd) -> bool {
        if self.open() && self.buffered().is_empty() {
            return self.refill_nowait(fd);
        }
        true
    }

    /// One [`read_nowait`] refill; false if it would block.
    fn refill_nowait(&mut self, fd: std::os::fd::RawFd) -> bool {
        if self.blocking_only {
            return false;
        }
        match self.refill_with(&mut |buf| read_nowait(fd, buf), "read", true) {
            Ok(()) => true,
            Err(NoWait::Later) => false,
            Err(NoWait::Never) => {
                self.blocking_only = true;
                false
            }
        }
    }

    /// Position of the next `\n` in the buffered bytes, from `from`.
    fn newline_from(&self, from: usize) -> Option<usize> {
        memchr::memchr(b'\n', &self.buffered()[from..]).map(|i| i + from)
    }

    /// Refills until a whole line (or the end, or an error) is buffered.
    pub fn fill_line(&mut self, r: &mut dyn Read, syscall: &'static str) {
        // How much of the buffered text (from `pos`, which a refill moves
        // to 0 without changing what is buffered) holds no newline.
        let mut scanned = 0;
        while self.open() && self.newline_from(scanned).is_none() {
            scanned = self.buffered().len();
            self.refill(r, syscall);
        }
    }

    /// Refills once if nothing is buffered.
    pub fn fill_some(&mut self, r: &mut dyn Read, syscall: &'static str) {
        if self.open() && self.buffered().is_empty() {
            self.refill(r, syscall);
        }
    }

    /// Refills until the end of the stream (or an error).
    pub fn fill_all(&mut self, r: &mut dyn Read, syscall: &'static str) {
        while self.open() {
            self.refill(r, syscall);
        }
    }

    /// The next line (without `\n` or `\r\n`; a last line without `\n` is a
    /// line), `Ok(None)` at the end, or None when a refill is needed.
    pub fn try_line(&mut self) -> Option<Result<Option<String>, IoFailure>> {
        self.try_line_ref().map(|r| r.map(|l| l.map(|l| l.text.into_owned())))
    }

    /// [`ReadBuf::try_line`] borrowing the line from the buffer when it is
    /// valid UTF-8 (so the caller can make its string without a copy in
    /// between).
    pub fn try_line_ref(&mut self) -> Option<Result<Option<Line<'_>>, IoFailure>> {
        let nl = self.newline_from(0);
        self.line_at(nl)
    }

    /// [`ReadBuf::try_line_ref`], first refilling on the calling thread
    /// from `fd` if the kernel has the bytes at hand
    /// ([`ReadBuf::fill_line_nowait`]); None when the pool must refill.
    pub fn line_nowait(&mut self, fd: std::os::fd::RawFd) -> Option<Result<Option<Line<'_>>, IoFailure>> {
        let mut nl = self.newline_from(0);
        if nl.is_none() && self.open() && self.fill_line_nowait(fd) {
            nl = self.newline_from(0);
        }
        self.line_at(nl)
    }

    /// The line ending at the buffered newline `nl` (or the last one, or
    /// the end or an error when there is none).
    fn line_at(&mut self, nl: Option<usize>) -> Option<Result<Option<Line<'_>>, IoFailure>> {
        let line = match nl {
            Some(i) => {
                let start = self.pos;
                self.pos += i + 1;
                &self.buf[start..start + i]
            }
            None => {
                if let Some(e) = self.error.take() {
                    return Some(Err(e));
                }
                if !self.eof {
                    return None;
                }
                if self.buffered().is_empty() {
                    return Some(Ok(None));
                }
                let start = self.pos;
                self.pos = self.end;
                &self.buf[start..self.end]
            }
        };
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        // One pass for the common ASCII line (the string it becomes needs
        // to know, and it is valid UTF-8); `from_utf8` for the rest, the
        // lossy decoder only for what is not valid UTF-8.
        if line.is_ascii() {
            // SAFETY: ASCII is valid UTF-8.
            let text = Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(line) });
            return Some(Ok(Some(Line { text, ascii: true })));
        }
        let text = match std::str::from_utf8(line) {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => String::from_utf8_lossy(line),
        };
        Some(Ok(Some(Line { text, ascii: false })))
    }

    /// At most `max` buffered bytes (at least one), `Ok(None)` at the end,
    /// or None when a refill is needed.
    pub fn try_bytes(&mut self, max: usize) -> Option<Result<Option<Vec<u8>>, IoFailure>> {
        if !self.buffered().is_empty() {
            let n = self.buffered().len().min(max);
            let data = self.buffered()[..n].to_vec();
            self.pos += n;
            return Some(Ok(Some(data)));
        }
        if let Some(e) = self.error.take() {
            return Some(Err(e));
        }
        self.eof.then_some(Ok(None))
    }

    /// Everything up to the end of the stream, or None when a refill is
    /// needed.
    pub fn try_all(&mut self) -> Option<Result<Vec<u8>, IoFailure>> {
        if let Some(e) = self.error.take() {
            return Some(Err(e));
        }
        if !self.eof {
            return None;
        }
        let data = self.buffered().to_vec();
        self.pos = self.end;
        Some(Ok(data))
    }
}

/// A line read from a stream as a string: ASCII (the common case) straight
/// from the buffer, without a `Box<str>` of its own for a short one.
pub fn line_value(ctx: &mut NativeCtx, line: Line<'_>) -> Value {
    if line.ascii {
        ctx.rt.heap.alloc_ascii_str(&line.text)
    } else {
        ctx.str(line.text)
    }
}

/// A line taken from a [`ReadBuf`]: borrowed from the buffer when it is
/// valid UTF-8, with whether it is ASCII (found while checking that).
pub struct Line<'a> {
    pub text: Cow<'a, str>,
    pub ascii: bool,
}

/// The `max` argument of `read(max?)`: a positive integer, default
/// [`CHUNK`].
pub fn read_max(ctx: &mut NativeCtx, v: Value, method: &str) -> Result<usize, Value> {
    if v.is_undefined() {
        return Ok(CHUNK);
    }
    if v.is_number() && v.as_number() >= 1.0 && v.as_number().fract() == 0.0 {
        return Ok(v.as_number().min((1u64 << 30) as f64) as usize);
    }
    Err(ctx.range_error(format!("{method}: max must be a positive integer, got {}", ops::to_display(v))))
}

/// What a `try_*` answer becomes for the calling task.
pub fn answer<T>(
    ctx: &mut NativeCtx,
    r: Result<T, IoFailure>,
    make: impl FnOnce(&mut NativeCtx, T) -> Value,
) -> Result<Value, Value> {
    match r {
        Ok(v) => Ok(make(ctx, v)),
        Err(f) => Err(f.throw(ctx)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::testing;

    /// A reader that hands out its data a few bytes per read, then fails
    /// or ends.
    struct Trickle {
        data: Vec<u8>,
        at: usize,
        step: usize,
        fail_at_end: bool,
    }

    impl Read for Trickle {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            if self.at == self.data.len() && self.fail_at_end {
                return Err(std::io::Error::from_raw_os_error(libc::EIO));
            }
            let n = self.step.min(out.len()).min(self.data.len() - self.at);
            out[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    fn trickle(data: &str, step: usize, fail_at_end: bool) -> Trickle {
        Trickle { data: data.as_bytes().to_vec(), at: 0, step, fail_at_end }
    }

    /// Every line `try_line` gives, refilling with `fill_line` whenever it
    /// asks, as the natives do.
    fn lines(rb: &mut ReadBuf, r: &mut dyn Read) -> Vec<Result<Option<String>, String>> {
        let mut out = Vec::new();
        loop {
            match rb.try_line() {
                Some(Ok(None)) => {
                    out.push(Ok(None));
                    return out;
                }
                Some(Ok(Some(l))) => out.push(Ok(Some(l))),
                Some(Err(e)) => {
                    out.push(Err(e.message()));
                    return out;
                }
                None => rb.fill_line(r, "read"),
            }
        }
    }

    #[test]
    fn lines_split_across_reads_come_back_whole() {
        for step in [1, 2, 3, 7, 64] {
            let mut rb = ReadBuf::default();
            let got = lines(&mut rb, &mut trickle("ab\r\ncd\n\nlast", step, false));
            let want: Vec<Result<Option<String>, String>> = vec![
                Ok(Some("ab".into())),
                Ok(Some("cd".into())),
                Ok(Some("".into())),
                Ok(Some("last".into())),
                Ok(None),
            ];
            assert_eq!(got, want, "step {step}");
            assert!(rb.try_line().is_some_and(|r| r.is_ok_and(|l| l.is_none())), "the end stays the end");
        }
    }

    #[test]
    fn the_buffer_is_reused_across_refills_and_grows_only_for_a_long_line() {
        // Lines that straddle every refill: what is left of one read moves
        // to the front, and the room after it is not made again.
        let text: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
        let mut rb = ReadBuf::default();
        let got = lines(&mut rb, &mut trickle(&text, CHUNK, false));
        assert_eq!(got.len(), 20_001);
        assert!(got[..20_000].iter().enumerate().all(|(i, l)| *l == Ok(Some(format!("line {i}")))));
        let room = rb.buf.len();
        assert!((CHUNK..=CHUNK + "line 19999".len()).contains(&room), "one read's room beside a partial line: {room}");
        // A line longer than a read grows the buffer to hold it whole.
        let long = format!("a\n{}\nb", "x".repeat(3 * CHUNK));
        let mut rb = ReadBuf::default();
        let got = lines(&mut rb, &mut trickle(&long, CHUNK, false));
        assert_eq!(got[1], Ok(Some("x".repeat(3 * CHUNK))));
        assert_eq!(got[2], Ok(Some("b".into())));
        assert!(rb.buf.len() >= 3 * CHUNK && rb.buf.len() <= 5 * CHUNK, "{}", rb.buf.len());
    }

    #[test]
    fn invalid_utf8_in_a_line_becomes_replacement_characters() {
        let mut rb = ReadBuf::default();
        let mut r = Trickle { data: b"ok\n\xffa\xc3\n\xc3\xa9".to_vec(), at: 0, step: 64, fail_at_end: false };
        let got = lines(&mut rb, &mut r);
        assert_eq!(
            got,
            vec![Ok(Some("ok".into())), Ok(Some("\u{FFFD}a\u{FFFD}".into())), Ok(Some("é".into())), Ok(None)]
        );
    }

    #[test]
    fn a_read_error_is_thrown_once_after_the_buffered_lines() {
        let mut rb = ReadBuf::default();
        let got = lines(&mut rb, &mut trickle("one\ntwo", 3, true));
        assert_eq!(got[0], Ok(Some("one".into())));
        assert_eq!(got[1], Err("EIO: i/o error, read".into()));
        // The error was consumed; the unterminated rest is still there.
        assert!(rb.try_line().is_none(), "needs a refill again");
    }

    /// A pipe, both ends; closed with [`close_fd`].
    fn pipe() -> [std::os::fd::RawFd; 2] {
        let mut fds = [0; 2];
        // SAFETY: a plain pipe(2) into a two-element array.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        fds
    }

    fn close_fd(fd: std::os::fd::RawFd) {
        // SAFETY: an fd this test opened, closed once.
        unsafe { libc::close(fd) };
    }

    fn write_fd(fd: std::os::fd::RawFd, data: &[u8]) {
        // SAFETY: writes from a live buffer of its length.
        assert_eq!(unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) }, data.len() as isize);
    }

    fn nowait_line(rb: &mut ReadBuf, fd: std::os::fd::RawFd) -> Option<Result<Option<String>, String>> {
        rb.line_nowait(fd).map(|r| r.map(|l| l.map(|l| l.text.into_owned())).map_err(|e| e.message()))
    }

    /// A cached file is read on the caller's thread, line by line, lines
    /// across refills included, to the end.
    #[test]
    fn nowait_reads_a_cached_file_without_the_pool() {
        use std::os::fd::AsRawFd;
        let path = std::env::temp_dir().join(format!("raya-nowait-{}.txt", std::process::id()));
        // Lines that straddle the 64 KiB refills.
        let long = "x".repeat(CHUNK - 3);
        std::fs::write(&path, format!("one\r\n{long}\n{long}\nlast")).unwrap();
        let f = std::fs::File::open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let mut rb = ReadBuf::default();
        let mut got = Vec::new();
        loop {
            match nowait_line(&mut rb, f.as_raw_fd()).expect("a cached file never needs the pool") {
                Ok(Some(l)) => got.push(l),
                Ok(None) => break,
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(got, ["one".to_string(), long.clone(), long, "last".to_string()]);
    }

    /// A pipe gives what it holds; with nothing (or only part of a line)
    /// in it, the read would block: nothing is lost or recorded, and the
    /// blocking refill then completes the line.
    #[test]
    fn nowait_on_a_pipe_takes_what_is_there_and_never_blocks() {
        let [r, w] = pipe();
        let mut rb = ReadBuf::default();
        assert!(nowait_line(&mut rb, r).is_none(), "an empty pipe would block");
        assert!(!rb.fill_some_nowait(r));
        write_fd(w, b"ab\ncd");
        assert_eq!(nowait_line(&mut rb, r), Some(Ok(Some("ab".into()))));
        assert!(nowait_line(&mut rb, r).is_none(), "half a line: the pool must wait for the rest");
        write_fd(w, b"e\n");
        close_fd(w);
        // SAFETY: `r` stays open for the life of the `File`, which owns it.
        let mut file = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(r) };
        rb.fill_line(&mut file, "read");
        assert_eq!(nowait_line(&mut rb, r), Some(Ok(Some("cde".into()))));
        assert_eq!(nowait_line(&mut rb, r), Some(Ok(None)), "the writer closed: the end, read without blocking");
    }

    /// A line longer than a worker should read at once is left to the
    /// pool, with the bytes read so far kept.
    #[test]
    fn nowait_hands_a_very_long_line_to_the_pool() {
        use std::os::fd::AsRawFd;
        let path = std::env::temp_dir().join(format!("raya-nowait-long-{}.txt", std::process::id()));
        let long = "y".repeat(NOWAIT_REFILLS * CHUNK + 10);
        std::fs::write(&path, format!("{long}\nz")).unwrap();
        let mut f = std::fs::File::open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let mut rb = ReadBuf::default();
        assert!(nowait_line(&mut rb, f.as_raw_fd()).is_none());
        assert_eq!(rb.buffered().len(), NOWAIT_REFILLS * CHUNK, "what was read stays buffered");
        rb.fill_line(&mut f, "read");
        assert_eq!(nowait_line(&mut rb, f.as_raw_fd()), Some(Ok(Some(long))));
        assert_eq!(nowait_line(&mut rb, f.as_raw_fd()), Some(Ok(Some("z".into()))));
        assert_eq!(nowait_line(&mut rb, f.as_raw_fd()), Some(Ok(None)));
    }

    /// Where the kernel cannot read without blocking (a `/proc` file
    /// here), the stream stops trying and every refill goes to the pool.
    #[test]
    fn nowait_gives_up_where_it_is_not_supported() {
        use std::os::fd::AsRawFd;
        let mut f = std::fs::File::open("/proc/self/stat").unwrap();
        let mut rb = ReadBuf::default();
        assert!(nowait_line(&mut rb, f.as_raw_fd()).is_none());
        assert!(rb.blocking_only, "not tried again");
        assert!(rb.try_bytes(4).is_none(), "nothing recorded, no error");
        rb.fill_line(&mut f, "read");
        let line = nowait_line(&mut rb, f.as_raw_fd()).unwrap().unwrap().unwrap();
        assert!(line.starts_with(&format!("{} (", std::process::id())), "{line}");
    }

    /// A directory read as a file: the kernel refuses the read without
    /// blocking, and the pool's read then finds the real error, which the
    /// next line throws.
    #[test]
    fn nowait_leaves_real_errors_to_the_blocking_read() {
        use std::os::fd::AsRawFd;
        let mut d = std::fs::File::open("/").unwrap();
        let mut rb = ReadBuf::default();
        assert_eq!(nowait_line(&mut rb, d.as_raw_fd()), None);
        rb.fill_line(&mut d, "read");
        assert_eq!(
            nowait_line(&mut rb, d.as_raw_fd()),
            Some(Err("EISDIR: illegal operation on a directory, read".into()))
        );
    }

    #[test]
    fn bytes_and_all() {
        let mut rb = ReadBuf::default();
        let mut r = trickle("abcdef", 4, false);
        assert!(rb.try_bytes(2).is_none());
        rb.fill_some(&mut r, "read");
        assert_eq!(rb.try_bytes(2).unwrap().unwrap(), Some(b"ab".to_vec()));
        assert_eq!(rb.try_bytes(10).unwrap().unwrap(), Some(b"cd".to_vec()));
        assert!(rb.try_all().is_none());
        rb.fill_all(&mut r, "read");
        assert_eq!(rb.try_all().unwrap().unwrap(), b"ef".to_vec());
        assert_eq!(rb.try_bytes(1).unwrap().unwrap(), None);
        assert_eq!(rb.try_all().unwrap().unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn os_errors_get_node_codes_and_messages() {
        let e = std::io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(
            IoFailure::new(&e, "open", Some("x.txt")).message(),
            "ENOENT: no such file or directory, open 'x.txt'"
        );
        let e = std::io::Error::from_raw_os_error(libc::ENOTEMPTY);
        assert_eq!(
            IoFailure::new(&e, "rename", Some("a")).with_dest("b").message(),
            "ENOTEMPTY: directory not empty, rename 'a' -> 'b'"
        );
        let e = std::io::Error::from_raw_os_error(libc::EISDIR);
        assert_eq!(error_code(&e), ("EISDIR", "illegal operation on a directory"));
        // Errors without an OS code map by kind.
        let e = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        assert_eq!(error_code(&e).0, "ENOENT");
        assert_eq!(
            IoFailure::code("EBADF", "bad file descriptor", "read", None).message(),
            "EBADF: bad file descriptor, read"
        );
    }

    #[test]
    fn the_io_error_value_has_code_syscall_and_path() {
        let mut rt = testing::rt();
        let e = std::io::Error::from_raw_os_error(libc::EACCES);
        let err = IoFailure::new(&e, "open", Some("/root/x")).to_error(&mut rt, &Trace(String::new()));
        assert!(ops::instance_of(&rt.realm, err, rt.realm.classes.io_error).unwrap());
        assert!(ops::instance_of(&rt.realm, err, rt.realm.classes.error).unwrap());
        let d = ops::object_data(err).unwrap().clone();
        let get = |k: &str| d.props.get(Atom::intern(k)).map(ops::to_display);
        assert_eq!(get("code").as_deref(), Some("EACCES"));
        assert_eq!(get("syscall").as_deref(), Some("open"));
        assert_eq!(get("path").as_deref(), Some("/root/x"));
        assert_eq!(get("message").as_deref(), Some("EACCES: permission denied, open '/root/x'"));
        assert_eq!(get("stack").as_deref(), Some("IOError: EACCES: permission denied, open '/root/x'"));
        let none =
            IoFailure::code("EBADF", "bad file descriptor", "write", None).to_error(&mut rt, &Trace(String::new()));
        assert!(ops::object_data(none).unwrap().props.get(Atom::intern("path")).unwrap().is_null());
    }
}
