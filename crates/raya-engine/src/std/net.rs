//! `std:net`: TCP listeners and connections on the program's socket
//! poller (`crate::io`).
//!
//! Every socket native has one shape: try the non-blocking syscall; on
//! `WouldBlock` suspend with an [`IoWait`] (having loaded the event count
//! first); when woken it is called again with the same arguments and
//! tries again. So a cancelled wait throws `TaskCancelledError` at the
//! call and has consumed nothing: what a `readLine` or `readAll` had read
//! so far stays in the connection's buffer for the next call.
//!
//! Name resolution (`connect("localhost:80")`, `listen` on a name) and
//! connection establishment run on the blocking pool (`super::io`).
//!
//! Errors are `IOError`s built as `std:fs` builds them (`super::io::
//! IoFailure`, the address as `path`); bytes read are `Uint8Array`s, and
//! `write` takes a string (sent as UTF-8) or a `Uint8Array`.

use super::io::{block_on, IoFailure, Trace};
use super::{Capability, StdModule};
use crate::builtins::bytes::{alloc_bytes, as_bytes};
use crate::io::{Direction, IoWait, Sock, Source, WriterLock};
use crate::sync::{Registered, Resume, TaskCell, Timer, Wait, WaitObject, Waiter};
use crate::vm::host::{new_host_object, payload, HostClass, HostObj};
use crate::vm::native::{arg, NativeCtx};
use crate::vm::object::Body;
use crate::vm::{ops, Runtime, Value};
use parking_lot::Mutex;
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::io::{ErrorKind, Read};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd};
use std::sync::Arc;
use std::time::Duration;

pub static MODULE: StdModule = StdModule {
    name: "net",
    capability: Some(Capability::Net),
    natives: &[("listen", listen), ("connect", connect)],
    source: None,
    types: &["Listener", "Conn"],
};

// ---------------------------------------------------------------------
// Errors and bytes (see the module docs)

/// The `code` of an OS error, as Node names it (the table `std:fs` uses).
fn error_code(e: &std::io::Error) -> &'static str {
    super::io::error_code(e).0
}

/// Node's description of a code a socket operation fails with (the
/// codes `error_code` gives, and those the natives choose themselves).
fn code_text(code: &str) -> &'static str {
    match code {
        "ECONNREFUSED" => "connection refused",
        "ECONNRESET" => "connection reset by peer",
        "ECONNABORTED" => "software caused connection abort",
        "EPIPE" => "broken pipe",
        "ETIMEDOUT" => "connection timed out",
        "EADDRINUSE" => "address already in use",
        "EADDRNOTAVAIL" => "address not available",
        "EACCES" => "permission denied",
        "EPERM" => "operation not permitted",
        "EINVAL" => "invalid argument",
        "EBADF" => "bad file descriptor",
        "EHOSTUNREACH" => "host is unreachable",
        "ENETUNREACH" => "network is unreachable",
        "EMFILE" => "too many open files",
        "ENFILE" => "too many open files in system",
        "ENOTCONN" => "socket is not connected",
        "ENOTFOUND" => "host name not found",
        "EAGAIN" => "resource temporarily unavailable",
        _ => "i/o error",
    }
}

/// The failure of a socket operation: an `IOError` made as `std:fs` makes
/// its own (`super::io::IoFailure`), with the address as its `path`:
/// `ECONNREFUSED: connection refused, connect '127.0.0.1:1'`.
fn failure(code: &'static str, syscall: &'static str, address: Option<&str>) -> IoFailure {
    IoFailure::code(code, code_text(code), syscall, address)
}

/// The `IOError` a socket native throws on its calling task.
pub fn io_error(ctx: &mut NativeCtx, code: &'static str, syscall: &'static str, address: Option<&str>) -> Value {
    failure(code, syscall, address).throw(ctx)
}

/// [`io_error`] for code running after a blocking-pool job.
fn io_error_traced(
    rt: &mut Runtime,
    trace: &Trace,
    code: &'static str,
    syscall: &'static str,
    address: Option<&str>,
) -> Value {
    failure(code, syscall, address).to_error(rt, trace)
}

/// The bytes of `v` for `write` and message bodies: a string (UTF-8) or
/// a `Uint8Array`. None for anything else.
pub(super) fn bytes_of(v: Value) -> Option<Vec<u8>> {
    if let Some(s) = ops::as_str(v) {
        return Some(s.as_bytes().to_vec());
    }
    as_bytes(v).map(|b| b.to_vec())
}

// ---------------------------------------------------------------------
// Addresses

/// `"host:port"` split; the host may be bracketed (`[::1]:80`).
fn split_address(addr: &str) -> Option<(&str, u16)> {
    let (host, port) = addr.rsplit_once(':')?;
    if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let port: u16 = port.parse().ok()?;
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    if host.is_empty() {
        return None;
    }
    Some((host, port))
}

fn address_arg(ctx: &mut NativeCtx, v: Value, func: &str) -> Result<String, Value> {
    match ops::as_str(v) {
        Some(s) => Ok(s.to_string()),
        None => Err(ctx.type_error(format!("{func}: the address must be a string, got {}", ops::type_of(v)))),
    }
}

fn fmt_addr(a: std::io::Result<SocketAddr>) -> String {
    a.map(|a| a.to_string()).unwrap_or_default()
}

// ---------------------------------------------------------------------
// Fairness

/// A task may make this many socket calls in a row on one worker (none of
/// them waiting) before it yields: a connection whose data is always ready
/// must not starve the other tasks, and natives spend no time slice.
const IO_STREAK: u32 = 64;

thread_local! {
    /// (task id, socket calls in a row) on this worker.
    static STREAK: Cell<(u32, u32)> = const { Cell::new((0, 0)) };
}

/// Counts a socket call of the running task; true if the task must yield
/// first (then the call has suspended and the native returns at once; it
/// re-runs when the task is next scheduled).
pub(super) fn must_yield(ctx: &mut NativeCtx) -> bool {
    let id = ctx.task.id;
    let (t, n) = STREAK.get();
    let n = if t == id { n + 1 } else { 1 };
    if n > IO_STREAK {
        STREAK.set((id, 0));
        ctx.rt.suspend = Some(Wait::Object(Box::new(YieldWait)));
        return true;
    }
    STREAK.set((id, n));
    false
}

/// The task is about to wait: its streak ends.
fn streak_ends(ctx: &NativeCtx) {
    STREAK.set((ctx.task.id, 0));
}

/// Goes to the back of the worker's queue and re-runs the call.
struct YieldWait;

impl WaitObject for YieldWait {
    fn register(&self, w: Waiter, _woken: &mut Vec<Arc<TaskCell>>, _timers: &mut Vec<Timer>) -> Registered {
        if w.claim() {
            w.task.resume.lock().set(Resume::Retry);
            match crate::driver::current_handle() {
                Some(h) => h.requeue(w.task.clone()),
                None => return Registered::Ready(Resume::Retry),
            }
        }
        Registered::Queued
    }
    fn describe(&self) -> Cow<'static, str> {
        Cow::Borrowed("yielding")
    }
    fn roots(&self) -> Vec<Value> {
        Vec::new()
    }
    fn reruns_call(&self) -> bool {
        true
    }
}

fn suspend_on(ctx: &mut NativeCtx, src: &Arc<Source>, dir: Direction, seen: u64, what: &'static str) -> Value {
    suspend_writer(ctx, src, dir, seen, what, None)
}

/// [`suspend_on`] for a task that holds the connection's write lock under
/// `writer` (its ticket), so that cancelling the wait gives the lock back.
fn suspend_writer(
    ctx: &mut NativeCtx,
    src: &Arc<Source>,
    dir: Direction,
    seen: u64,
    what: &'static str,
    writer: Option<u64>,
) -> Value {
    streak_ends(ctx);
    ctx.rt.suspend = Some(Wait::Object(Box::new(IoWait::new(src.clone(), dir, seen, what, writer))));
    Value::UNDEFINED
}

// ---------------------------------------------------------------------
// Listener

struct ListenerState {
    src: Arc<Source>,
    address: String,
    port: u16,
}

static LISTENER: HostClass = HostClass {
    name: "Listener",
    methods: &[("accept", accept), ("close", listener_close)],
    getters: &[("address", listener_address), ("port", listener_port)],
    next: Some(accept),
    inspect: Some(inspect_listener),
};

fn inspect_listener(h: &HostObj) -> String {
    match h.get::<ListenerState>() {
        Some(l) => format!("address: '{}', closed: {}", l.address, l.src.is_closed()),
        None => String::new(),
    }
}

fn this_listener(ctx: &mut NativeCtx, this: Value, what: &str) -> Result<&'static ListenerState, Value> {
    payload::<ListenerState>(this, &LISTENER)
        .ok_or_else(|| ctx.type_error(format!("Listener.{what} called on something that is not a Listener")))
}

fn poller_of(ctx: &mut NativeCtx) -> Result<crate::driver::Handle, Value> {
    match crate::driver::current_handle() {
        Some(h) => match h.poller() {
            Ok(_) => Ok(h),
            Err(e) => Err(ctx.plain_error(format!("cannot start the socket poller: {e}"))),
        },
        None => Err(ctx.plain_error("sockets outside a running program")),
    }
}

/// The accept queue of a listener: as Go, the system's maximum
/// (`net.core.somaxconn`), read once; 511 (Node's) if it cannot be read.
/// A burst of clients beyond the queue waits for its SYN to be retried, or
/// is reset, and connects through the poller are not throttled by
/// anything else.
fn listen_backlog() -> libc::c_int {
    static BACKLOG: std::sync::OnceLock<libc::c_int> = std::sync::OnceLock::new();
    *BACKLOG.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/net/core/somaxconn")
            .ok()
            .and_then(|s| s.trim().parse::<libc::c_int>().ok())
            .filter(|&n| n > 0)
            .map_or(511, |n| n.min(65535))
    })
}

fn make_listener(rt: &mut Runtime, l: TcpListener) -> std::io::Result<Value> {
    let Some(h) = crate::driver::current_handle() else {
        return Err(std::io::Error::other("no running program"));
    };
    let poller = h.poller().map_err(|e| std::io::Error::new(e.kind(), e.to_string()))?;
    l.set_nonblocking(true)?;
    // std's queue is 128; see `listen_backlog`.
    // SAFETY: a plain syscall on a listening socket we own.
    unsafe { libc::listen(l.as_raw_fd(), listen_backlog()) };
    let local = l.local_addr()?;
    let src = Source::new(poller, Sock::Listener(l))?;
    let state = ListenerState { src, address: local.to_string(), port: local.port() };
    Ok(new_host_object(rt, &LISTENER, Arc::new(state)))
}

/// `listen(address)`: `"host:port"`, port 0 = any free port. A malformed
/// address or a port out of range is `IOError` `EINVAL` (an address is
/// data, often read from configuration, like a path).
fn listen(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let addr = address_arg(ctx, arg(args, 0), "listen")?;
    poller_of(ctx)?;
    let Some((host, port)) = split_address(&addr) else {
        return Err(io_error(ctx, "EINVAL", "listen", Some(&addr)));
    };
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        // A literal address binds at once.
        return match TcpListener::bind(SocketAddr::new(ip, port)).and_then(|l| make_listener(ctx.rt, l)) {
            Ok(v) => Ok(v),
            Err(e) => Err(io_error(ctx, error_code(&e), "listen", Some(&addr))),
        };
    }
    let a2 = addr.clone();
    block_on(
        ctx,
        "in net.listen",
        move || {
            let addrs: Vec<SocketAddr> = match (a2.as_str()).to_socket_addrs() {
                Ok(a) => a.collect(),
                Err(_) => return Err("ENOTFOUND"),
            };
            TcpListener::bind(&addrs[..]).map_err(|e| error_code(&e))
        },
        move |rt, trace, r| match r.and_then(|l| make_listener(rt, l).map_err(|e| error_code(&e))) {
            Ok(v) => Resume::Value(v),
            Err(code) => Resume::Throw(io_error_traced(rt, trace, code, "listen", Some(&addr))),
        },
    )
}

fn listener_address(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let l = this_listener(ctx, this, "address")?;
    Ok(ctx.str(l.address.as_str()))
}

fn listener_port(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let l = this_listener(ctx, this, "port")?;
    Ok(Value::number(l.port as f64))
}

/// `listener.accept()`: the next connection, or null once the listener is
/// closed (also for a task already waiting).
fn accept(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let l = this_listener(ctx, this, "accept")?;
    if must_yield(ctx) {
        return Ok(Value::UNDEFINED);
    }
    let Some(g) = l.src.enter() else { return Ok(Value::NULL) };
    let Sock::Listener(sock) = &*g else { unreachable!("a listener's source holds a listener") };
    let seen = l.src.events(Direction::Read);
    loop {
        match sock.accept() {
            Ok((stream, _)) => {
                drop(g);
                return match make_conn(ctx.rt, stream) {
                    Ok(v) => Ok(v),
                    Err(e) => Err(io_error(ctx, error_code(&e), "accept", Some(&l.address))),
                };
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                drop(g);
                return Ok(suspend_on(ctx, &l.src, Direction::Read, seen, "in listener.accept()"));
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            // The peer gave up before we accepted: not the listener's
            // failure.
            Err(e) if e.kind() == ErrorKind::ConnectionAborted => continue,
            Err(e) => {
                drop(g);
                return Err(io_error(ctx, error_code(&e), "accept", Some(&l.address)));
            }
        }
    }
}

fn listener_close(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let l = this_listener(ctx, this, "close")?;
    l.src.close(&mut ctx.rt.woken);
    Ok(Value::UNDEFINED)
}

// ---------------------------------------------------------------------
// Conn

pub(super) struct ConnState {
    pub(super) src: Arc<Source>,
    local: String,
    pub(super) remote: String,
    /// Bytes read from the socket and not yet returned (`readLine` and
    /// `readAll` keep what they have read so far here while they wait).
    /// Only the reading task uses it, so the lock is uncontended.
    pub(super) rbuf: Mutex<Vec<u8>>,
    /// A `write` that is waiting: the rest of its bytes (see `write`).
    pending: Mutex<PendingWrite>,
}

#[derive(Default)]
struct PendingWrite {
    /// The writing task and what it writes (the bits of the value `write`
    /// was given, or a mark of another writer such as an HTTP response):
    /// its re-run passes the same.
    owner: (u32, u64, u8),
    rest: Vec<u8>,
}

/// `PendingWrite::owner` kinds.
pub(super) const WRITE_VALUE: u8 = 0;
pub(super) const WRITE_HTTP: u8 = 1;

static CONN: HostClass = HostClass {
    name: "Conn",
    methods: &[
        ("read", read),
        ("readLine", read_line),
        ("readAll", read_all),
        ("write", write),
        ("closeWrite", close_write),
        ("close", conn_close),
    ],
    getters: &[("remoteAddress", remote_address), ("localAddress", local_address)],
    next: None,
    inspect: Some(inspect_conn),
};

fn inspect_conn(h: &HostObj) -> String {
    match h.get::<ConnState>() {
        Some(c) => format!("localAddress: '{}', remoteAddress: '{}', closed: {}", c.local, c.remote, c.src.is_closed()),
        None => String::new(),
    }
}

pub(super) fn this_conn(ctx: &mut NativeCtx, this: Value, what: &str) -> Result<&'static ConnState, Value> {
    payload::<ConnState>(this, &CONN)
        .ok_or_else(|| ctx.type_error(format!("Conn.{what} called on something that is not a Conn")))
}

fn make_conn(rt: &mut Runtime, stream: TcpStream) -> std::io::Result<Value> {
    let Some(h) = crate::driver::current_handle() else {
        return Err(std::io::Error::other("no running program"));
    };
    let poller = h.poller().map_err(|e| std::io::Error::new(e.kind(), e.to_string()))?;
    stream.set_nonblocking(true)?;
    // Small writes (a request, a response) leave at once, as in Go.
    let _ = stream.set_nodelay(true);
    let local = fmt_addr(stream.local_addr());
    let remote = fmt_addr(stream.peer_addr());
    let src = Source::new(poller, Sock::Stream(stream))?;
    Ok(conn_value(rt, src, local, remote))
}

fn conn_value(rt: &mut Runtime, src: Arc<Source>, local: String, remote: String) -> Value {
    let state = ConnState { src, local, remote, rbuf: Mutex::new(Vec::new()), pending: Default::default() };
    new_host_object(rt, &CONN, Arc::new(state))
}

/// `connect` to a literal address without a timeout, through the poller:
/// a non-blocking connect, then a wait for writability (as any socket
/// wait: cancellable, re-run when woken); the re-run finds its socket in
/// `Poller::connecting` and asks the kernel how the connect went. No
/// blocking-pool thread is held, so any number of connects may be in
/// flight.
fn connect_polled(ctx: &mut NativeCtx, to: SocketAddr, addr: &str) -> Result<Value, Value> {
    if must_yield(ctx) {
        return Ok(Value::UNDEFINED);
    }
    let h = poller_of(ctx)?;
    let Ok(poller) = h.poller() else { unreachable!("poller_of started it") };
    let id = ctx.task.id;
    let pending = poller.connecting().lock().remove(&id).filter(|(a, _)| a == addr).map(|(_, src)| src);
    let src = match pending {
        Some(src) => src,
        None => {
            let started = mio::net::TcpStream::connect(to).and_then(|s| {
                // SAFETY: the fd is moved out of mio's stream, owned by
                // the std stream from here on.
                let s = unsafe { TcpStream::from_raw_fd(s.into_raw_fd()) };
                let _ = s.set_nodelay(true);
                Source::new(poller, Sock::Stream(s))
            });
            match started {
                Ok(src) => src,
                Err(e) => return Err(io_error(ctx, error_code(&e), "connect", Some(addr))),
            }
        }
    };
    let seen = src.events(Direction::Write);
    let outcome = {
        let Some(g) = src.enter() else { return Err(io_error(ctx, "EBADF", "connect", Some(addr))) };
        let s = stream(&g);
        match s.take_error() {
            Ok(Some(e)) | Err(e) => Err(e),
            Ok(None) => match s.peer_addr() {
                Ok(_) => Ok(Some((fmt_addr(s.local_addr()), fmt_addr(s.peer_addr())))),
                // Still connecting.
                Err(e) if e.kind() == ErrorKind::NotConnected => Ok(None),
                Err(e) => Err(e),
            },
        }
    };
    match outcome {
        Ok(Some((local, remote))) => Ok(conn_value(ctx.rt, src, local, remote)),
        Ok(None) => {
            poller.connecting().lock().insert(id, (addr.to_string(), src.clone()));
            streak_ends(ctx);
            let wait = IoWait::new(src.clone(), Direction::Write, seen, "in net.connect", None).connecting(id);
            ctx.rt.suspend = Some(Wait::Object(Box::new(wait)));
            Ok(Value::UNDEFINED)
        }
        Err(e) => {
            src.close(&mut ctx.rt.woken);
            Err(io_error(ctx, error_code(&e), "connect", Some(addr)))
        }
    }
}

/// `connect(address, {timeout?})`: resolves the name and connects on the
/// blocking pool (the task suspends meanwhile; cancellable).
fn connect(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let addr = address_arg(ctx, arg(args, 0), "connect")?;
    let opts = arg(args, 1);
    let timeout = if opts.is_undefined() || opts.is_null() {
        None
    } else if !matches!(opts.as_obj().map(|o| &o.body), Some(Body::Object(_))) {
        return Err(ctx.type_error("connect: the options must be an object"));
    } else {
        let t = ctx.get(opts, "timeout")?;
        if t.is_undefined() {
            None
        } else if !t.is_number() || t.as_number().is_nan() || t.as_number() < 0.0 {
            return Err(ctx.type_error("connect: timeout must be a non-negative number of milliseconds"));
        } else {
            Some(Duration::from_secs_f64((t.as_number() / 1000.0).max(0.001)))
        }
    };
    poller_of(ctx)?;
    let Some((host, port)) = split_address(&addr).map(|(h, p)| (h.to_string(), p)) else {
        return Err(io_error(ctx, "EINVAL", "connect", Some(&addr)));
    };
    if timeout.is_none() {
        if let Ok(ip) = host.parse::<std::net::IpAddr>() {
            return connect_polled(ctx, SocketAddr::new(ip, port), &addr);
        }
    }
    // Names are resolved, and connections with a time-out made, on the
    // blocking pool.
    block_on(
        ctx,
        "in net.connect",
        move || {
            let addrs: Vec<SocketAddr> = match (host.as_str(), port).to_socket_addrs() {
                Ok(a) => a.collect(),
                Err(_) => return Err("ENOTFOUND"),
            };
            let mut last = "ENOTFOUND";
            for a in addrs {
                let r = match timeout {
                    Some(t) => TcpStream::connect_timeout(&a, t),
                    None => TcpStream::connect(a),
                };
                match r {
                    Ok(s) => return Ok(s),
                    Err(e) => last = error_code(&e),
                }
            }
            Err(last)
        },
        move |rt, trace, r| match r.and_then(|s| make_conn(rt, s).map_err(|e| error_code(&e))) {
            Ok(v) => Resume::Value(v),
            Err(code) => Resume::Throw(io_error_traced(rt, trace, code, "connect", Some(&addr))),
        },
    )
}

/// What a read found when the socket is closed: a read that was waiting
/// when `close()` came sees end of stream; any other call is `EBADF`.
pub(super) fn closed_read(ctx: &mut NativeCtx, c: &ConnState, what: &'static str) -> Result<Value, Value> {
    if c.src.take_woken_by_close(ctx.task.id) {
        return Ok(Value::NULL);
    }
    Err(io_error(ctx, "EBADF", what, Some(&c.remote)))
}

thread_local! {
    /// Each worker's read buffer: a read copies out only what arrived.
    static SCRATCH: RefCell<Vec<u8>> = RefCell::new(vec![0; 65536]);
}

/// One non-blocking read of at most `max` bytes, appended to `out`.
fn read_some(sock: &TcpStream, max: usize, out: &mut Vec<u8>) -> std::io::Result<usize> {
    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        let n = max.min(s.len());
        loop {
            match (&*sock).read(&mut s[..n]) {
                Ok(k) => {
                    out.extend_from_slice(&s[..k]);
                    return Ok(k);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    })
}

fn stream(g: &Sock) -> &TcpStream {
    match g {
        Sock::Stream(s) => s,
        Sock::Listener(_) => unreachable!("a connection's source holds a stream"),
    }
}

/// `conn.read(max = 65536)`: at least one byte (waiting for it), at most
/// `max`; null at end of stream.
fn read(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let c = this_conn(ctx, this, "read")?;
    let m = arg(args, 0);
    let max = if m.is_undefined() {
        65536
    } else if m.is_number() && m.as_number() >= 1.0 {
        m.as_number().min(1e9) as usize
    } else {
        return Err(ctx.type_error("conn.read: max must be a positive number"));
    };
    {
        let mut buf = c.rbuf.lock();
        if !buf.is_empty() {
            let n = max.min(buf.len());
            let out: Vec<u8> = buf.drain(..n).collect();
            drop(buf);
            return Ok(alloc_bytes(ctx, out));
        }
    }
    if must_yield(ctx) {
        return Ok(Value::UNDEFINED);
    }
    let Some(g) = c.src.enter() else { return closed_read(ctx, c, "read") };
    let seen = c.src.events(Direction::Read);
    let mut out = Vec::new();
    match read_some(stream(&g), max.min(65536), &mut out) {
        Ok(0) => Ok(Value::NULL),
        Ok(_) => Ok(alloc_bytes(ctx, out)),
        Err(e) if e.kind() == ErrorKind::WouldBlock => {
            drop(g);
            Ok(suspend_on(ctx, &c.src, Direction::Read, seen, "in conn.read()"))
        }
        Err(e) => Err(io_error(ctx, error_code(&e), "read", Some(&c.remote))),
    }
}

/// Reads into the connection's buffer until `done(buf)` or end of stream
/// (`Ok(true)`); `Ok(false)`: suspended (the native returns at once).
pub(super) fn fill_until(
    ctx: &mut NativeCtx,
    c: &ConnState,
    what: &'static str,
    done: impl Fn(&[u8]) -> bool,
) -> Result<Option<bool>, Value> {
    if must_yield(ctx) {
        return Ok(None);
    }
    let Some(g) = c.src.enter() else { return closed_read(ctx, c, what).map(|_| Some(false)) };
    let mut buf = c.rbuf.lock();
    loop {
        if done(&buf) {
            return Ok(Some(true));
        }
        let seen = c.src.events(Direction::Read);
        match read_some(stream(&g), 65536, &mut buf) {
            Ok(0) => return Ok(Some(false)),
            Ok(_) => continue,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                drop(buf);
                drop(g);
                suspend_on(ctx, &c.src, Direction::Read, seen, what);
                return Ok(None);
            }
            Err(e) => {
                drop(buf);
                return Err(io_error(ctx, error_code(&e), "read", Some(&c.remote)));
            }
        }
    }
}

/// The longest line `conn.readLine()` returns, in bytes without its line
/// end: a peer that sends an endless line must not make the connection
/// buffer grow without bound. Longer lines are read with `read()`.
pub const MAX_LINE: usize = 1 << 20;

/// Where the first line of `buf` ends (its `\n`), if it is there.
fn line_end(buf: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', buf)
}

/// The first line of `buf` (without its `\n` or `\r\n`), if complete.
fn take_line(buf: &mut Vec<u8>) -> Option<Vec<u8>> {
    let i = line_end(buf)?;
    let mut l: Vec<u8> = buf.drain(..=i).collect();
    l.pop();
    if l.last() == Some(&b'\r') {
        l.pop();
    }
    Some(l)
}

/// True if the line at the front of `buf` is already too long for
/// `readLine` (complete or not; a `\r` before the `\n` is not counted).
fn line_too_long(buf: &[u8]) -> bool {
    match line_end(buf) {
        Some(i) => i > MAX_LINE && !(i == MAX_LINE + 1 && buf[i - 1] == b'\r'),
        None => buf.len() > MAX_LINE + 1,
    }
}

fn line_error(ctx: &mut NativeCtx) -> Value {
    ctx.range_error(format!("conn.readLine: line longer than {MAX_LINE} bytes (read it with conn.read())"))
}

/// `conn.readLine()`: the next line without its `\n` or `\r\n`, or null at
/// end of stream (the last line may lack its newline). A line longer than
/// [`MAX_LINE`] is a `RangeError`, and its bytes stay buffered for `read`.
fn read_line(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let c = this_conn(ctx, this, "readLine")?;
    if line_too_long(&c.rbuf.lock()) {
        return Err(line_error(ctx));
    }
    let line = take_line(&mut c.rbuf.lock());
    let line = match line {
        Some(l) => l,
        None => match fill_until(ctx, c, "in conn.readLine()", |b| line_end(b).is_some() || line_too_long(b))? {
            None => return Ok(Value::UNDEFINED),
            Some(true) if line_too_long(&c.rbuf.lock()) => return Err(line_error(ctx)),
            Some(true) => take_line(&mut c.rbuf.lock()).expect("a complete line"),
            Some(false) => {
                let mut buf = c.rbuf.lock();
                if buf.len() > MAX_LINE {
                    drop(buf);
                    return Err(line_error(ctx));
                }
                let rest = std::mem::take(&mut *buf);
                if rest.is_empty() {
                    return Ok(Value::NULL);
                }
                rest
            }
        },
    };
    Ok(ctx.str(String::from_utf8_lossy(&line).into_owned()))
}

/// `conn.readAll()`: every byte until the peer ends the stream.
fn read_all(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let c = this_conn(ctx, this, "readAll")?;
    match fill_until(ctx, c, "in conn.readAll()", |_| false)? {
        None => Ok(Value::UNDEFINED),
        Some(_) => {
            let out = std::mem::take(&mut *c.rbuf.lock());
            Ok(alloc_bytes(ctx, out))
        }
    }
}

/// `send` without `SIGPIPE`: writing to a connection the peer closed is an
/// `EPIPE` error, never the death of the process.
fn send(sock: &TcpStream, data: &[u8]) -> std::io::Result<usize> {
    loop {
        // SAFETY: `data` is a valid slice; the fd is kept open by the
        // caller's guard.
        let n = unsafe {
            libc::send(sock.as_raw_fd(), data.as_ptr() as *const libc::c_void, data.len(), libc::MSG_NOSIGNAL)
        };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// `conn.write(data)`: returns once every byte is handed to the OS.
fn write(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let c = this_conn(ctx, this, "write")?;
    let data = arg(args, 0);
    write_all(ctx, c, (data.bits(), WRITE_VALUE), |ctx| match bytes_of(data) {
        Some(b) => Ok(b),
        None => Err(ctx
            .type_error(format!("conn.write: the data must be a string or a Uint8Array, got {}", ops::type_of(data)))),
    })
}

/// Hands `make()`'s bytes to the OS, suspending while the peer is slow.
///
/// One write at a time per connection: the task holds the source's write
/// lock (`Source::lock_writer`) from its first byte to its last, so a
/// message written by one task is never cut by another's; a second writer
/// waits for the first to finish. While a write waits, the rest of its
/// bytes stays in the connection (`pending`), owned by the writing task
/// and `what` (for `write`, the value it writes): the re-run of the same
/// call finds it and continues, without calling `make` again. A write
/// cancelled while it waits gives the lock up; the rest of its bytes is
/// never sent (the peer has seen a prefix of it, as after a cancelled
/// write in Go).
pub(super) fn write_all(
    ctx: &mut NativeCtx,
    c: &ConnState,
    what: (u64, u8),
    make: impl FnOnce(&mut NativeCtx) -> Result<Vec<u8>, Value>,
) -> Result<Value, Value> {
    let id = ctx.task.id;
    let owner = (id, what.0, what.1);
    if c.src.is_closed() {
        c.src.unlock_writer(id);
        return Err(io_error(ctx, "EBADF", "write", Some(&c.remote)));
    }
    // Loaded before the lock is looked at (see `Source::lock_writer`) and
    // before the syscall (see `crate::io`).
    let seen = c.src.events(Direction::Write);
    let (resuming, ticket) = match c.src.lock_writer(id) {
        WriterLock::Busy => {
            return Ok(suspend_on(ctx, &c.src, Direction::Write, seen, "in conn.write() (another task is writing)"));
        }
        WriterLock::Held(ticket) => {
            let p = c.pending.lock();
            (!p.rest.is_empty() && p.owner == owner, ticket)
        }
        WriterLock::Acquired(ticket) => {
            if must_yield(ctx) {
                // Not across the yield: a task cancelled there never
                // re-runs, and the lock would stay taken. (A resumed write
                // does not yield: it has just waited.)
                c.src.unlock_writer(id);
                return Ok(Value::UNDEFINED);
            }
            // What a cancelled write left is not ours to send.
            c.pending.lock().rest.clear();
            (false, ticket)
        }
    };
    let mut fresh = None;
    if !resuming {
        let bytes = match make(ctx) {
            Ok(b) => b,
            Err(e) => {
                c.src.unlock_writer(id);
                return Err(e);
            }
        };
        if bytes.is_empty() {
            c.src.unlock_writer(id);
            return Ok(Value::UNDEFINED);
        }
        fresh = Some(bytes);
    }
    let Some(g) = c.src.enter() else {
        c.pending.lock().rest.clear();
        c.src.unlock_writer(id);
        return Err(io_error(ctx, "EBADF", "write", Some(&c.remote)));
    };
    let send_all = |data: &[u8]| -> (usize, std::io::Result<()>) {
        let mut off = 0;
        while off < data.len() {
            match send(stream(&g), &data[off..]) {
                Ok(n) => off += n,
                Err(e) => return (off, Err(e)),
            }
        }
        (off, Ok(()))
    };
    // The common case, a fresh write the socket takes whole, never
    // touches `pending` (and copies nothing more).
    let r = match fresh {
        Some(bytes) => {
            let (off, r) = send_all(&bytes);
            if r.is_err() {
                let mut p = c.pending.lock();
                p.rest.clear();
                p.rest.extend_from_slice(&bytes[off..]);
                p.owner = owner;
            }
            r
        }
        None => {
            let mut p = c.pending.lock();
            let (off, r) = send_all(&p.rest);
            p.rest.drain(..off);
            r
        }
    };
    drop(g);
    match r {
        Ok(()) => {
            c.src.unlock_writer(id);
            Ok(Value::UNDEFINED)
        }
        Err(e) if e.kind() == ErrorKind::WouldBlock => {
            Ok(suspend_writer(ctx, &c.src, Direction::Write, seen, "in conn.write()", Some(ticket)))
        }
        Err(e) => {
            c.pending.lock().rest.clear();
            c.src.unlock_writer(id);
            Err(io_error(ctx, error_code(&e), "write", Some(&c.remote)))
        }
    }
}

/// `conn.closeWrite()`: half-close (the peer reads end of stream).
fn close_write(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let c = this_conn(ctx, this, "closeWrite")?;
    let Some(g) = c.src.enter() else { return Err(io_error(ctx, "EBADF", "closeWrite", Some(&c.remote))) };
    match stream(&g).shutdown(Shutdown::Write) {
        Ok(()) => Ok(Value::UNDEFINED),
        // The peer is already gone: nothing left to half-close.
        Err(e) if e.raw_os_error() == Some(libc::ENOTCONN) => Ok(Value::UNDEFINED),
        Err(e) => Err(io_error(ctx, error_code(&e), "closeWrite", Some(&c.remote))),
    }
}

/// `conn.close()`: closing twice does nothing.
fn conn_close(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let c = this_conn(ctx, this, "close")?;
    c.src.close(&mut ctx.rt.woken);
    Ok(Value::UNDEFINED)
}

fn remote_address(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let c = this_conn(ctx, this, "remoteAddress")?;
    Ok(ctx.str(c.remote.as_str()))
}

fn local_address(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let c = this_conn(ctx, this, "localAddress")?;
    Ok(ctx.str(c.local.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_split() {
        assert_eq!(split_address("127.0.0.1:80"), Some(("127.0.0.1", 80)));
        assert_eq!(split_address("[::1]:0"), Some(("::1", 0)));
        assert_eq!(split_address("localhost:8080"), Some(("localhost", 8080)));
        assert_eq!(split_address("127.0.0.1:70000"), None);
        assert_eq!(split_address("127.0.0.1"), None);
        assert_eq!(split_address(":80"), None);
        assert_eq!(split_address("h:-1"), None);
        assert_eq!(split_address("h:"), None);
    }
}
