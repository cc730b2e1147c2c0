//! Link options that keep `raya`'s start small (design/memory.md, "Idle
//! memory").
//!
//! - `--symbol-ordering-file=startup.order`: the functions a start runs are
//!   placed together, so the kernel's 64 KiB fault-around windows bring in
//!   those and little else (`startup-order.py` writes the file).
//! - `-z pack-relative-relocs`: the dynamic loader's relocation table of a
//!   position-independent executable, read in whole at every start, in its
//!   compact form (RELR, glibc 2.36 and later): 8 KiB instead of 330 KiB.
//!
//! Both are options of LLD, the linker Rust uses on x86_64 Linux since
//! 1.90; with another linker (an older toolchain, a `linker` set by the
//! user, other systems) nothing is added and the build is as before.

use std::process::Command;

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let order = std::path::Path::new(&dir).join("startup.order");
    println!("cargo::rerun-if-changed={}", order.display());
    println!("cargo::rerun-if-env-changed=RUSTFLAGS");
    if !uses_rust_lld() {
        return;
    }
    if order.exists() {
        println!("cargo::rustc-link-arg-bin=raya=-Wl,--symbol-ordering-file={}", order.display());
        // A name the binary no longer has is skipped (see startup-order.py).
        println!("cargo::rustc-link-arg-bin=raya=-Wl,--no-warn-symbol-ordering");
    }
    if glibc_has_relr() {
        println!("cargo::rustc-link-arg-bin=raya=-Wl,-z,pack-relative-relocs");
    }
}

/// The target is x86_64 Linux with glibc, the compiler 1.90 or later, and
/// no linker chosen by the user: the bundled LLD links.
fn uses_rust_lld() -> bool {
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    if var("CARGO_CFG_TARGET_ARCH") != "x86_64"
        || var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
    {
        return false;
    }
    let target = var("TARGET").to_uppercase().replace('-', "_");
    if std::env::var_os(format!("CARGO_TARGET_{target}_LINKER")).is_some() {
        return false;
    }
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    if flags.contains("linker") || flags.contains("link-self-contained") {
        return false;
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = Command::new(rustc).arg("--version").output() else { return false };
    // "rustc 1.95.0 (…)"
    let version = String::from_utf8_lossy(&out.stdout);
    let mut parts = version.split_whitespace().nth(1).unwrap_or("").split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (1, 90)
}

/// The C library the binary will load understands packed relocations
/// (glibc 2.36 and later; the build machine's, as for any native build).
fn glibc_has_relr() -> bool {
    let Ok(out) = Command::new("ldd").arg("--version").output() else { return false };
    // "ldd (Debian GLIBC 2.36-9+deb12u4) 2.36"
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(version) = text.lines().next().and_then(|l| l.split_whitespace().last()) else { return false };
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0)) >= (2, 36)
}
