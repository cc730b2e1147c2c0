//! `std:http`: an HTTP/1.1 server (`serve`) and client (`fetch`) over
//! `std:net` connections.
//!
//! The handler is Raya code, so the serving loop that calls it is Raya
//! source (`HTTP_SOURCE` below: one task per connection, keep-alive,
//! `server.close()` letting requests in flight finish); these natives do
//! the parsing (with `httparse`) and the writing. Reading a message head
//! and body works like every socket read (`super::net`): the bytes
//! received so far stay in the connection's buffer, the native re-runs
//! when more arrive, so a cancelled wait consumes nothing.

use super::net::{bytes_of, closed_read, fill_until, this_conn, write_all, ConnState, WRITE_HTTP};
use super::{Capability, StdModule};
use crate::vm::host::{new_host_object, payload, HostClass, HostObj};
use crate::vm::native::{arg, NativeCtx};
use crate::vm::object::Body;
use crate::vm::{ops, Value};
use std::sync::Arc;

pub static MODULE: StdModule = StdModule {
    name: "http",
    capability: Some(Capability::Net),
    natives: &[
        ("readRequest", read_request),
        ("writeResponse", write_response),
        ("writeRequest", write_request),
        ("readResponse", read_response),
        ("readBody", read_body),
        ("bodyText", body_text),
        ("bodyBytes", body_bytes),
        ("splitUrl", split_url),
    ],
    source: Some(include_str!("http.raya")),
    types: &[],
};

/// A request head may be at most this long (then 431).
const MAX_HEAD: usize = 64 * 1024;
/// Headers per message.
const MAX_HEADERS: usize = 128;

/// A message body received from the network: its bytes, read as text or
/// bytes by `text()`/`bytes()`.
static BODY: HostClass =
    HostClass { name: "Body", methods: &[], getters: &[], next: None, inspect: Some(inspect_body) };

struct BodyBytes(Vec<u8>);

fn inspect_body(h: &HostObj) -> String {
    h.get::<BodyBytes>().map(|b| format!("length: {}", b.0.len())).unwrap_or_default()
}

/// What a message in the connection's buffer is, so far.
enum Parsed {
    /// More bytes are needed.
    Partial,
    /// Answer with this status and close (400, 413, 431).
    Reject(u16),
    Done(Message),
}

struct Message {
    /// Bytes of the buffer the message took.
    len: usize,
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    keep_alive: bool,
}

/// How the body of a message is delimited.
enum Framing {
    None,
    Length(usize),
    Chunked,
    /// A response without length: until the end of the stream.
    UntilClose,
}

fn framing(headers: &[httparse::Header], is_response: bool, max_body: usize) -> Result<Framing, u16> {
    let mut length = None;
    let mut chunked = false;
    for h in headers {
        if h.name.eq_ignore_ascii_case("content-length") {
            let v = std::str::from_utf8(h.value).map_err(|_| 400u16)?.trim();
            let n: usize = v.parse().map_err(|_| 400u16)?;
            if length.is_some_and(|l| l != n) {
                return Err(400);
            }
            length = Some(n);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            let v = std::str::from_utf8(h.value).map_err(|_| 400u16)?;
            if v.split(',').next_back().is_some_and(|t| t.trim().eq_ignore_ascii_case("chunked")) {
                chunked = true;
            } else {
                return Err(400);
            }
        }
    }
    Ok(match (chunked, length) {
        (true, Some(_)) => return Err(400),
        (true, None) => Framing::Chunked,
        (false, Some(n)) if n > max_body => return Err(413),
        (false, Some(n)) => Framing::Length(n),
        (false, None) if is_response => Framing::UntilClose,
        (false, None) => Framing::None,
    })
}

/// Decodes a chunked body starting at `buf[0]`: Ok(Some((consumed,
/// body))) when complete, Ok(None) when more bytes are needed.
fn dechunk(buf: &[u8], max_body: usize) -> Result<Option<(usize, Vec<u8>)>, u16> {
    let mut pos = 0;
    let mut body = Vec::new();
    loop {
        let (start, size) = match httparse::parse_chunk_size(&buf[pos..]) {
            Ok(httparse::Status::Complete(x)) => x,
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(_) => return Err(400),
        };
        pos += start;
        let size = usize::try_from(size).map_err(|_| 413u16)?;
        if size == 0 {
            // Trailers: lines up to an empty one.
            loop {
                let Some(i) = buf[pos..].windows(2).position(|w| w == b"\r\n") else { return Ok(None) };
                pos += i + 2;
                if i == 0 {
                    return Ok(Some((pos, body)));
                }
            }
        }
        if body.len() + size > max_body {
            return Err(413);
        }
        if buf.len() < pos + size + 2 {
            return Ok(None);
        }
        body.extend_from_slice(&buf[pos..pos + size]);
        if &buf[pos + size..pos + size + 2] != b"\r\n" {
            return Err(400);
        }
        pos += size + 2;
    }
}

fn header_strings(headers: &[httparse::Header]) -> Vec<(String, String)> {
    headers.iter().map(|h| (h.name.to_string(), String::from_utf8_lossy(h.value).into_owned())).collect()
}

fn connection_keep_alive(headers: &[httparse::Header], version: u8) -> bool {
    let mut keep = version >= 1;
    for h in headers {
        if h.name.eq_ignore_ascii_case("connection") {
            for t in String::from_utf8_lossy(h.value).split(',') {
                let t = t.trim();
                if t.eq_ignore_ascii_case("close") {
                    keep = false;
                } else if t.eq_ignore_ascii_case("keep-alive") {
                    keep = true;
                }
            }
        }
    }
    keep
}

fn parse_request(buf: &[u8], max_body: usize) -> Parsed {
    let mut hs = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut hs);
    let head = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => return Parsed::Reject(431),
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        Err(httparse::Error::TooManyHeaders) => return Parsed::Reject(431),
        Err(_) => return Parsed::Reject(400),
    };
    if head > MAX_HEAD {
        return Parsed::Reject(431);
    }
    let (body, len) = match framing(req.headers, false, max_body) {
        Err(s) => return Parsed::Reject(s),
        Ok(Framing::None) | Ok(Framing::UntilClose) => (Vec::new(), head),
        Ok(Framing::Length(n)) => {
            if buf.len() < head + n {
                return Parsed::Partial;
            }
            (buf[head..head + n].to_vec(), head + n)
        }
        Ok(Framing::Chunked) => match dechunk(&buf[head..], max_body) {
            Err(s) => return Parsed::Reject(s),
            Ok(None) => return Parsed::Partial,
            Ok(Some((n, body))) => (body, head + n),
        },
    };
    Parsed::Done(Message {
        len,
        method: req.method.unwrap_or("GET").to_string(),
        target: req.path.unwrap_or("/").to_string(),
        keep_alive: connection_keep_alive(req.headers, req.version.unwrap_or(1)),
        headers: header_strings(req.headers),
        body,
    })
}

/// A response; `eof`: the stream ended (a body without length ends there).
fn parse_response_head(buf: &[u8], head_only: bool) -> Result<Option<ResponseHead>, String> {
    let mut hs = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut res = httparse::Response::new(&mut hs);
    let head = match res.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => return Err("response head too large".into()),
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(format!("malformed response: {e}")),
    };
    let status = res.code.unwrap_or(0);
    let no_body = head_only || status == 204 || status == 304 || (100..200).contains(&status);
    let mut keep = connection_keep_alive(res.headers, res.version.unwrap_or(1));
    let body = match framing(res.headers, true, usize::MAX) {
        Err(_) => return Err("malformed response framing".into()),
        _ if no_body => Framing::None,
        Ok(Framing::UntilClose) => {
            keep = false;
            Framing::UntilClose
        }
        Ok(f) => f,
    };
    Ok(Some(ResponseHead {
        len: head,
        status,
        reason: res.reason.unwrap_or("").to_string(),
        keep_alive: keep,
        headers: header_strings(res.headers),
        body,
    }))
}

/// A response's head, parsed; its body is read when asked for
/// ([`read_body`]).
struct ResponseHead {
    len: usize,
    status: u16,
    reason: String,
    keep_alive: bool,
    headers: Vec<(String, String)>,
    body: Framing,
}

/// Where a response body read from `buf` ends: `Ok(Some((consumed,
/// body)))` once it is all there, `Ok(None)` while more must be read
/// (`eof`: no more will come, so it is an error instead).
fn body_in(buf: &[u8], framing: &Framing, eof: bool) -> Result<Option<(usize, Vec<u8>)>, String> {
    let cut = || Err("connection closed before the body ended".to_string());
    match *framing {
        Framing::None => Ok(Some((0, Vec::new()))),
        Framing::Length(n) if buf.len() >= n => Ok(Some((n, buf[..n].to_vec()))),
        Framing::Length(_) if eof => cut(),
        Framing::Length(_) => Ok(None),
        Framing::Chunked => match dechunk(buf, usize::MAX) {
            Err(_) => Err("malformed chunked body".into()),
            Ok(None) if eof => cut(),
            Ok(None) => Ok(None),
            Ok(Some(done)) => Ok(Some(done)),
        },
        Framing::UntilClose if eof => Ok(Some((buf.len(), buf.to_vec()))),
        Framing::UntilClose => Ok(None),
    }
}

/// `%XX` and (in queries) `+` decoded; invalid escapes are kept as they are.
fn percent_decode(s: &str, plus: bool) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                match u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16) {
                    Ok(v) => {
                        out.push(v);
                        i += 3;
                        continue;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b'+' if plus => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn headers_array(ctx: &mut NativeCtx, headers: &[(String, String)]) -> Value {
    let mut items = Vec::with_capacity(headers.len());
    for (k, v) in headers {
        let k = ctx.str(k.as_str());
        let v = ctx.str(v.as_str());
        items.push(ctx.array(vec![k, v]));
    }
    ctx.array(items)
}

fn body_value(ctx: &mut NativeCtx, body: Vec<u8>) -> Value {
    new_host_object(ctx.rt, &BODY, Arc::new(BodyBytes(body)))
}

fn conn_arg(ctx: &mut NativeCtx, args: &[Value], what: &str) -> Result<&'static ConnState, Value> {
    this_conn(ctx, arg(args, 0), what)
}

/// `readRequest(conn, maxBody)`: the next request on the connection as
/// `[method, target, path, query pairs, header pairs, body, keepAlive]`,
/// a status number to answer with before closing (400, 413, 431), or null
/// once the client closed the connection between requests.
fn read_request(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let c = conn_arg(ctx, args, "readRequest")?;
    let max_body = arg(args, 1).as_number().max(0.0) as usize;
    let complete = |b: &[u8]| !matches!(parse_request(b, max_body), Parsed::Partial);
    let parsed = {
        let buf = c.rbuf.lock();
        if buf.is_empty() {
            None
        } else {
            Some(parse_request(&buf, max_body))
        }
    };
    let parsed = match parsed {
        Some(p @ (Parsed::Done(_) | Parsed::Reject(_))) => p,
        _ => match fill_until(ctx, c, "in a server reading a request", complete)? {
            None => return Ok(Value::UNDEFINED),
            Some(true) => parse_request(&c.rbuf.lock(), max_body),
            // End of stream: between requests a normal close, else a
            // truncated request.
            Some(false) => {
                return Ok(if c.rbuf.lock().is_empty() { Value::NULL } else { Value::number(400.0) });
            }
        },
    };
    let m = match parsed {
        Parsed::Partial => return Ok(Value::number(400.0)),
        Parsed::Reject(s) => return Ok(Value::number(s as f64)),
        Parsed::Done(m) => m,
    };
    c.rbuf.lock().drain(..m.len);
    let (path, query) = match m.target.split_once('?') {
        Some((p, q)) => (p.to_string(), q.to_string()),
        None => (m.target.clone(), String::new()),
    };
    let method = ctx.str(m.method.as_str());
    let target = ctx.str(m.target.as_str());
    let path = ctx.str(percent_decode(&path, false));
    let mut pairs = Vec::new();
    for part in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        let k = ctx.str(percent_decode(k, true));
        let v = ctx.str(percent_decode(v, true));
        pairs.push(ctx.array(vec![k, v]));
    }
    let query = ctx.array(pairs);
    let headers = headers_array(ctx, &m.headers);
    let body = body_value(ctx, m.body);
    Ok(ctx.array(vec![method, target, path, query, headers, body, Value::bool(m.keep_alive)]))
}

/// The bytes of a body value: a string, a `Uint8Array`, a received
/// `Body`, or null/undefined (empty).
fn body_bytes_of(ctx: &mut NativeCtx, v: Value, func: &str) -> Result<Vec<u8>, Value> {
    if v.is_nullish() {
        return Ok(Vec::new());
    }
    if let Some(b) = payload::<BodyBytes>(v, &BODY) {
        return Ok(b.0.clone());
    }
    bytes_of(v).ok_or_else(|| {
        ctx.type_error(format!("{func}: the body must be a string or a Uint8Array, got {}", ops::type_of(v)))
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// Header pairs from a script: a `Headers`' Map (name to value, in
/// insertion order) or `[[name, value], ...]`.
fn header_pairs(ctx: &mut NativeCtx, v: Value) -> Result<Vec<(String, String)>, Value> {
    let pairs: Vec<(Value, Value)> = match v.as_obj().map(|o| &o.body) {
        // Copied out so that no lock is held while converting.
        Some(Body::Map(m)) => m.lock().iter().collect(),
        _ => match ops::array_data(v).map(|a| a.clone()) {
            Some(items) => items
                .into_iter()
                .filter_map(|it| {
                    let pair = ops::array_data(it)?;
                    Some((*pair.first()?, *pair.get(1)?))
                })
                .collect(),
            None => Vec::new(),
        },
    };
    let mut out = Vec::with_capacity(pairs.len());
    for (k, val) in pairs {
        let (k, val) = (ops::to_display(k), ops::to_display(val));
        if k.bytes().any(|b| b <= b' ' || b == b':' || b >= 0x7f) || val.bytes().any(|b| b == b'\r' || b == b'\n') {
            return Err(ctx.type_error(format!("invalid header: {k:?}")));
        }
        out.push((k, val));
    }
    Ok(out)
}

fn has(headers: &[(String, String)], name: &str) -> bool {
    headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name))
}

/// `writeResponse(conn, status, headerPairs, body, keepAlive, headOnly)`.
fn write_response(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let c = conn_arg(ctx, args, "writeResponse")?;
    write_all(ctx, c, (0, WRITE_HTTP), |ctx| {
        let status = arg(args, 1).as_number() as u16;
        let headers = header_pairs(ctx, arg(args, 2))?;
        let body_v = arg(args, 3);
        let body = body_bytes_of(ctx, body_v, "Response")?;
        let keep = arg(args, 4).truthy();
        let head_only = arg(args, 5).truthy();
        let mut out = Vec::with_capacity(128 + body.len());
        out.extend_from_slice(format!("HTTP/1.1 {status} {}\r\n", reason(status)).as_bytes());
        push_headers(&mut out, &headers, body_v);
        if status != 204 && status != 304 {
            out.extend_from_slice(format!("content-length: {}\r\n", body.len()).as_bytes());
        }
        if !keep {
            out.extend_from_slice(b"connection: close\r\n");
        }
        out.extend_from_slice(b"\r\n");
        if !head_only && status != 204 && status != 304 {
            out.extend_from_slice(&body);
        }
        Ok(out)
    })
}

/// The header lines both directions write: the given headers except the
/// framing ones (the writer sets `content-length` itself), and a text
/// content type for a string body that names none.
fn push_headers(out: &mut Vec<u8>, headers: &[(String, String)], body: Value) {
    for (k, v) in headers {
        if k.eq_ignore_ascii_case("content-length") || k.eq_ignore_ascii_case("transfer-encoding") {
            continue;
        }
        out.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
    }
    if !has(headers, "content-type") && ops::as_str(body).is_some() {
        out.extend_from_slice(b"content-type: text/plain; charset=utf-8\r\n");
    }
}

/// `writeRequest(conn, method, target, host, headerPairs, body)`.
fn write_request(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let c = conn_arg(ctx, args, "writeRequest")?;
    write_all(ctx, c, (0, WRITE_HTTP), |ctx| {
        let method = ops::to_display(arg(args, 1));
        if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Err(ctx.type_error(format!("fetch: invalid method {method:?}")));
        }
        let target = ops::to_display(arg(args, 2));
        let host = ops::to_display(arg(args, 3));
        let headers = header_pairs(ctx, arg(args, 4))?;
        let body_v = arg(args, 5);
        let body = body_bytes_of(ctx, body_v, "fetch")?;
        let mut out = Vec::with_capacity(128 + body.len());
        out.extend_from_slice(format!("{} {target} HTTP/1.1\r\n", method.to_ascii_uppercase()).as_bytes());
        if !has(&headers, "host") {
            out.extend_from_slice(format!("host: {host}\r\n").as_bytes());
        }
        push_headers(&mut out, &headers, body_v);
        if !body_v.is_nullish() {
            out.extend_from_slice(format!("content-length: {}\r\n", body.len()).as_bytes());
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&body);
        Ok(out)
    })
}

/// `readResponse(conn, headOnly)`: `[status, reason, header pairs,
/// bodyKind, bodyLength, keepAlive]` once the head has arrived (the body
/// stays on the connection for `readBody`); throws an `Error` for a
/// malformed or cut-off response.
fn read_response(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let c = conn_arg(ctx, args, "readResponse")?;
    let head_only = arg(args, 1).truthy();
    let complete = |b: &[u8]| !matches!(parse_response_head(b, head_only), Ok(None));
    let eof = match fill_until(ctx, c, "in fetch() reading a response", complete)? {
        None => return Ok(Value::UNDEFINED),
        Some(done) => !done,
    };
    if eof && c.src.is_closed() {
        return closed_read(ctx, c, "readResponse");
    }
    let parsed = parse_response_head(&c.rbuf.lock(), head_only);
    let m = match parsed {
        Ok(Some(m)) => m,
        Ok(None) if c.rbuf.lock().is_empty() => {
            return Err(super::net::io_error(ctx, "ECONNRESET", "fetch", Some(&c.remote)));
        }
        Ok(None) => return Err(ctx.plain_error("fetch: connection closed before the response ended")),
        Err(e) => return Err(ctx.plain_error(format!("fetch: {e}"))),
    };
    c.rbuf.lock().drain(..m.len);
    let reason = ctx.str(m.reason.as_str());
    let headers = headers_array(ctx, &m.headers);
    let (kind, length) = match m.body {
        Framing::None => (0, 0),
        Framing::Length(n) => (1, n),
        Framing::Chunked => (2, 0),
        Framing::UntilClose => (3, 0),
    };
    Ok(ctx.array(vec![
        Value::number(m.status as f64),
        reason,
        headers,
        Value::number(kind as f64),
        Value::number(length as f64),
        Value::bool(m.keep_alive),
    ]))
}

/// `readBody(conn, bodyKind, bodyLength)`: the body of the response whose
/// head `readResponse` returned (a `Body`), read from the connection as
/// the caller asks for it; waits like any socket read.
fn read_body(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let c = conn_arg(ctx, args, "readBody")?;
    let framing = match arg(args, 1).as_number() as u32 {
        1 => Framing::Length(arg(args, 2).as_number() as usize),
        2 => Framing::Chunked,
        3 => Framing::UntilClose,
        _ => Framing::None,
    };
    let complete = |b: &[u8]| !matches!(body_in(b, &framing, false), Ok(None));
    let eof = match fill_until(ctx, c, "in reading a response body", complete)? {
        None => return Ok(Value::UNDEFINED),
        Some(done) => !done,
    };
    if eof && c.src.is_closed() {
        return closed_read(ctx, c, "readBody");
    }
    let r = body_in(&c.rbuf.lock(), &framing, eof);
    match r {
        Ok(Some((n, body))) => {
            c.rbuf.lock().drain(..n);
            Ok(body_value(ctx, body))
        }
        Ok(None) => Err(ctx.plain_error("fetch: connection closed before the body ended")),
        Err(e) => Err(ctx.plain_error(format!("fetch: {e}"))),
    }
}

/// `bodyText(body)`: UTF-8 text of a body value (invalid bytes become
/// U+FFFD).
fn body_text(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let v = arg(args, 0);
    if ops::as_str(v).is_some() {
        return Ok(v);
    }
    let b = body_bytes_of(ctx, v, "text")?;
    Ok(ctx.str(String::from_utf8_lossy(&b).into_owned()))
}

/// `bodyBytes(body)`: the bytes of a body value.
fn body_bytes(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let b = body_bytes_of(ctx, arg(args, 0), "bytes")?;
    Ok(crate::builtins::bytes::alloc_bytes(ctx, b))
}

/// `splitUrl(url)`: `[host:port, target]` of an `http://` URL, or a
/// `TypeError`.
fn split_url(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let v = arg(args, 0);
    let Some(url) = ops::as_str(v) else {
        return Err(ctx.type_error(format!("fetch: the URL must be a string, got {}", ops::type_of(v))));
    };
    let Some(rest) = url.strip_prefix("http://") else {
        return Err(ctx.type_error(format!("fetch: only http:// URLs are supported: {url}")));
    };
    let (authority, target) = match rest.find(['/', '?']) {
        Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_string()),
        Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
        None => (rest, "/".to_string()),
    };
    let authority = authority.rsplit_once('@').map(|(_, h)| h).unwrap_or(authority);
    if authority.is_empty() {
        return Err(ctx.type_error(format!("fetch: invalid URL: {url}")));
    }
    let has_port = authority.rsplit_once(':').is_some_and(|(_, p)| !p.contains(']'));
    let addr = if has_port { authority.to_string() } else { format!("{authority}:80") };
    let a = ctx.str(addr);
    let host = ctx.str(authority);
    let t = ctx.str(target);
    Ok(ctx.array(vec![a, t, host]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done(p: Parsed) -> Message {
        match p {
            Parsed::Done(m) => m,
            Parsed::Partial => panic!("partial"),
            Parsed::Reject(s) => panic!("rejected {s}"),
        }
    }

    #[test]
    fn requests_parse_with_every_framing() {
        let m = done(parse_request(b"GET /a?b=1 HTTP/1.1\r\nHost: x\r\n\r\nGET", 100));
        assert_eq!((m.method.as_str(), m.target.as_str(), m.keep_alive, m.len), ("GET", "/a?b=1", true, 32));
        let m = done(parse_request(b"POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcd", 100));
        assert_eq!(m.body, b"abc");
        let m = done(parse_request(
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nT: 1\r\n\r\n",
            100,
        ));
        assert_eq!(m.body, b"abcde");
        let m = done(parse_request(b"GET / HTTP/1.0\r\n\r\n", 100));
        assert!(!m.keep_alive);
        assert!(matches!(parse_request(b"POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nab", 100), Parsed::Partial));
        assert!(matches!(
            parse_request(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nab", 100),
            Parsed::Partial
        ));
        assert!(matches!(parse_request(b"POST / HTTP/1.1\r\nContent-Length: 300\r\n\r\n", 100), Parsed::Reject(413)));
        assert!(matches!(parse_request(b"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n", 100), Parsed::Reject(400)));
        assert!(matches!(parse_request(b"GET / HT\x01TP/1.1\r\n\r\n", 100), Parsed::Reject(400)));
        let big = format!("GET / HTTP/1.1\r\nX: {}\r\n", "a".repeat(70_000));
        assert!(matches!(parse_request(big.as_bytes(), 100), Parsed::Reject(431)));
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%20b+c", true), "a b c");
        assert_eq!(percent_decode("a+b%zz%4", false), "a+b%zz%4");
        assert_eq!(percent_decode("%C3%A9", false), "é");
    }
}
