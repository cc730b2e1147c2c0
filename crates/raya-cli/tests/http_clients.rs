//! `std:http`'s server against real clients: `curl` and Python's
//! `http.client` (keep-alive, chunked uploads, bodies). Each client is
//! skipped, with a note on stderr, when it is not installed.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn raya_bin() -> PathBuf {
    match std::env::var_os("RAYA_E2E_BIN") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_BIN_EXE_raya")),
    }
}

/// A server that answers `n` requests, then closes and ends.
fn server_program(name: &str, n: usize) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("http_clients");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.raya"));
    let src = format!(
        r#"import {{ serve, Response }} from "std:http";
const served = new Channel<number>(1000);
const server = serve({{}}, (req) => {{
  const body = req.text();
  served.send(1);
  if (req.path === "/json") {{
    return Response.json({{ method: req.method, length: body.length, q: req.query.get("q"), agent: req.headers.has("USER-AGENT") }});
  }}
  if (req.path === "/missing") return new Response("none here\n", {{ status: 404, headers: {{ "X-Why": "missing" }} }});
  return "hello " + req.path + " " + body + "\n";
}});
console.log(server.port);
for (let i = 0; i < {n}; i++) served.receive();
server.close();
console.log("served {n}");
"#
    );
    std::fs::write(&path, src).unwrap();
    path
}

struct Server {
    child: Child,
    port: u16,
    out: BufReader<std::process::ChildStdout>,
}

fn start(name: &str, n: usize) -> Server {
    let mut child = Command::new(raya_bin())
        .arg("run")
        .arg(server_program(name, n))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start raya");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let port = line.trim().parse().unwrap_or_else(|_| panic!("a port, got {line:?}"));
    Server { child, port, out }
}

/// Waits for the server to end by itself; returns the rest of its stdout
/// and its stderr.
fn finish(mut s: Server) -> (String, String) {
    let start = Instant::now();
    loop {
        if let Some(status) = s.child.try_wait().unwrap() {
            let mut rest = String::new();
            s.out.read_to_string(&mut rest).unwrap();
            let mut err = String::new();
            s.child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            assert!(status.success(), "server failed: {status:?}\n{err}");
            return (rest, err);
        }
        if start.elapsed() > Duration::from_secs(30) {
            let _ = s.child.kill();
            panic!("the server did not end");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn available(cmd: &str, arg: &str) -> bool {
    Command::new(cmd).arg(arg).stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

#[test]
fn http_server_with_curl() {
    if !available("curl", "--version") {
        eprintln!("note: curl is not installed; skipping");
        return;
    }
    let s = start("curl", 4);
    let base = format!("http://127.0.0.1:{}", s.port);
    // Two URLs on one command line share one keep-alive connection.
    let out = Command::new("curl")
        .args(["-s", "-S", "--max-time", "10", &format!("{base}/a"), &format!("{base}/json?q=x%20y")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "hello /a \n{\"method\":\"GET\",\"length\":0,\"q\":\"x y\",\"agent\":true}"
    );
    // A chunked upload.
    let out = Command::new("curl")
        .args(["-s", "-S", "--max-time", "10", "-H", "Transfer-Encoding: chunked", "--data-binary", "@-"])
        .arg(format!("{base}/up"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(b"streamed body")?;
            c.wait_with_output()
        })
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "hello /up streamed body\n");
    // Status and headers.
    let out = Command::new("curl").args(["-s", "-i", "--max-time", "10", &format!("{base}/missing")]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap().replace("\r\n", "\n");
    assert!(text.starts_with("HTTP/1.1 404 Not Found\n"), "{text}");
    assert!(text.to_ascii_lowercase().contains("\nx-why: missing\n"), "{text}");
    assert!(text.ends_with("\n\nnone here\n"), "{text}");
    let (rest, err) = finish(s);
    assert_eq!(rest, "served 4\n");
    assert_eq!(err, "");
}

#[test]
fn http_server_with_python_http_client() {
    if !available("python3", "--version") {
        eprintln!("note: python3 is not installed; skipping");
        return;
    }
    let s = start("python", 3);
    let script = r#"
import http.client, json, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
c.request("GET", "/json?q=py")
r = c.getresponse()
print(r.status, r.getheader("Content-Type"), json.loads(r.read()))
c.request("POST", "/post", body=b"x" * 100000)
r = c.getresponse()
body = r.read()
print(r.status, len(body), body[:12])
c.request("PUT", "/chunks", body=iter([b"ab", b"cd"]), encode_chunked=True, headers={"Transfer-Encoding": "chunked"})
r = c.getresponse()
print(r.status, r.read())
"#;
    let out = Command::new("python3").arg("-c").arg(script).arg(s.port.to_string()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "200 application/json {'method': 'GET', 'length': 0, 'q': 'py', 'agent': False}\n\
         200 100013 b'hello /post '\n\
         200 b'hello /chunks abcd\\n'\n"
    );
    let (rest, err) = finish(s);
    assert_eq!(rest, "served 3\n");
    assert_eq!(err, "");
}
