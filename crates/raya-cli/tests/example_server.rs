//! `examples/file_server.raya` in its serving mode, against a client that
//! is not Raya's own `fetch`: the test starts the server on a free port of
//! 127.0.0.1, reads the address it prints, sends raw HTTP/1.1 requests and
//! stops it. (The example's self-test mode runs in the e2e suite.)

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

fn raya_bin() -> PathBuf {
    match std::env::var_os("RAYA_E2E_BIN") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_BIN_EXE_raya")),
    }
}

/// One request on a fresh connection: (status line, body).
fn get(address: &str, path: &str) -> (String, String) {
    let mut conn = TcpStream::connect(address).expect("connect");
    conn.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(conn, "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = String::new();
    conn.read_to_string(&mut response).expect("read the response");
    let status = response.lines().next().unwrap_or("").to_string();
    let body = response.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (status, body)
}

#[test]
fn file_server_serves_a_directory_to_a_raw_http_client() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut server = Command::new(raya_bin())
        .args(["run", "examples/file_server.raya", "examples/data/site", "0"])
        .current_dir(&root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the server");
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let address = line.trim().rsplit("http://").next().unwrap().trim_end_matches('/').to_string();
    let result = std::panic::catch_unwind(|| {
        assert!(address.starts_with("127.0.0.1:"), "prints where it listens: {line:?}");
        let (status, body) = get(&address, "/");
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert!(body.contains("Served by examples/file_server.raya."), "{body:?}");
        assert_eq!(get(&address, "/nothing.txt").0, "HTTP/1.1 404 Not Found");
        assert_eq!(get(&address, "/../access.log").0, "HTTP/1.1 403 Forbidden");
    });
    let _ = server.kill();
    let _ = server.wait();
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}
