//! Decides whether the prelude's compiled image can be used.
//!
//! `src/compiler/prelude_image.rs` holds the prelude (`stdlib/prelude.raya`)
//! already compiled to bytecode, so that a program starts without running
//! the compiler over 1,300 lines of Raya (design/memory.md, "Idle memory").
//! It is written by a test (`compiler::image::tests`), not by this script,
//! since compiling it needs the crate itself. Its first line records a
//! fingerprint of every source that shapes the compiled prelude; this
//! script computes the same fingerprint from the sources being built. Only
//! when the two agree is the image compiled in (`--cfg prelude_image`);
//! otherwise the prelude is compiled at start-up as before, so an image
//! left stale by a change to the compiler or the prelude can never run
//! code that no longer matches them (and never breaks the build, even if
//! the instruction set changed under it).

use std::fs;
use std::path::{Path, PathBuf};

/// Where the fingerprinted sources live, relative to this crate. Files
/// named `tests.rs` and the image itself do not shape the output.
const INPUTS: &[&str] = &[
    "../../stdlib/prelude.raya",
    "src/compiler",
    "src/syntax",
    "src/bytecode/mod.rs",
    "src/builtins/mod.rs",
    "src/builtins/numconv.rs",
    "src/std/mod.rs",
    "src/wtf8.rs",
];

fn main() {
    println!("cargo::rustc-check-cfg=cfg(prelude_image)");
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for input in INPUTS {
        let path = root.join(input);
        println!("cargo::rerun-if-changed={}", path.display());
        collect(&path, &mut files);
    }
    files.sort();
    // FNV-1a over each file's path (relative to the crate) and bytes: the
    // same on every machine and toolchain, unlike std's hasher.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap_or(f).to_string_lossy().replace('\\', "/");
        eat(rel.as_bytes());
        eat(&[0]);
        eat(&fs::read(f).unwrap_or_default());
        eat(&[0]);
    }
    let fingerprint = format!("{hash:016x}");
    println!("cargo::rustc-env=RAYA_PRELUDE_FINGERPRINT={fingerprint}");

    let image = root.join("src/compiler/prelude_image.rs");
    println!("cargo::rerun-if-changed={}", image.display());
    let first_line = fs::read_to_string(&image).ok().and_then(|t| t.lines().next().map(str::to_string));
    if first_line.is_some_and(|l| l.trim() == format!("// prelude image {fingerprint}")) {
        println!("cargo::rustc-cfg=prelude_image");
    }
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let Ok(entries) = fs::read_dir(path) else { return };
        for e in entries.flatten() {
            collect(&e.path(), out);
        }
    } else {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name != "tests.rs"
            && name != "prelude_image.rs"
            && path.extension().is_some_and(|e| e == "rs" || e == "raya")
        {
            out.push(path.to_path_buf());
        }
    }
}
