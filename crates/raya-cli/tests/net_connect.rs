//! `connect` against a listener whose accept queue is full: the connects
//! stay in flight (the kernel drops their SYNs), waiting in the poller, and
//! cancelling them must close their sockets at once. The listener is made
//! here, with the smallest queue, because a Raya listener always gets the
//! system's largest.

use std::path::{Path, PathBuf};
use std::process::Command;

fn raya_bin() -> PathBuf {
    match std::env::var_os("RAYA_E2E_BIN") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_BIN_EXE_raya")),
    }
}

/// A listening socket on 127.0.0.1 with an accept queue of one, never
/// accepted from: (fd, port).
fn full_listener() -> (libc::c_int, u16) {
    // SAFETY: plain socket calls on a socket this function owns, with a
    // properly sized and initialised address.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
        assert!(fd >= 0, "socket");
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        assert_eq!(libc::bind(fd, &addr as *const _ as *const libc::sockaddr, len), 0, "bind");
        assert_eq!(libc::listen(fd, 0), 0, "listen");
        let mut got: libc::sockaddr_in = std::mem::zeroed();
        let mut got_len = len;
        assert_eq!(libc::getsockname(fd, &mut got as *mut _ as *mut libc::sockaddr, &mut got_len), 0);
        (fd, u16::from_be(got.sin_port))
    }
}

const PROGRAM: &str = r#"import { connect, listen } from "std:net";
import { readDir } from "std:fs";

// Open descriptors, counted once the poller (its epoll and eventfd) exists.
const keep = listen("127.0.0.1:0");
const fds = () => readDir("/proc/self/fd").length;
const before = fds();

const conns: any[] = [];
const tasks: Task<void>[] = [];
for (let i = 0; i < 8; i++) {
  tasks.push((async () => { conns.push(connect(args[0])); })());
}
await sleep(300);
for (const t of tasks) t.cancel();
let cancelled = 0;
for (const t of tasks) {
  try { await t; } catch (e) { if (e instanceof TaskCancelledError) cancelled++; }
}
console.log("connects cancelled in flight:", cancelled > 0);
console.log("sockets left by them:", fds() - before - conns.length);
for (const c of conns) c.close();
keep.close();
"#;

#[test]
fn cancelled_connects_close_their_sockets() {
    let (fd, port) = full_listener();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("net_connect");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cancelled_connects.raya");
    std::fs::write(&path, PROGRAM).unwrap();
    for workers in ["1", "4"] {
        let out = Command::new(raya_bin())
            .args(["run", "--workers", workers])
            .arg(&path)
            .arg(format!("127.0.0.1:{port}"))
            .output()
            .expect("run raya");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{workers} workers: {:?}\n{stdout}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(stdout, "connects cancelled in flight: true\nsockets left by them: 0\n", "{workers} workers");
    }
    // SAFETY: the fd is ours and closed once.
    unsafe { libc::close(fd) };
}
