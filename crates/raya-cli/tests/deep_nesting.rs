//! Source nested 100,000 deep compiles or is a compile error (exit code 2):
//! never a stack overflow of the parser, the resolver or the code
//! generator. One program per shape.

use std::path::{Path, PathBuf};
use std::process::Command;

const N: usize = 100_000;

fn raya_bin() -> PathBuf {
    match std::env::var_os("RAYA_E2E_BIN") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_BIN_EXE_raya")),
    }
}

/// Runs `raya check` on `src`; returns the exit code and stderr.
fn check(name: &str, src: &str) -> (Option<i32>, String) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("deep_nesting");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.raya"));
    std::fs::write(&path, src).unwrap();
    let out = Command::new(raya_bin()).arg("check").arg(&path).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn nested(open: &str, inner: &str, close: &str) -> String {
    format!("const x: any = {}{inner}{};\n", open.repeat(N), close.repeat(N))
}

#[test]
fn nesting_100000_deep_is_a_compile_error_not_a_crash() {
    let shapes = [
        ("brackets", nested("[", "", "]")),
        ("parens", nested("(", "1", ")")),
        ("objects", nested("{a: ", "1", "}")),
        ("templates", nested("`${", "1", "}`")),
        ("unary_minus", nested("-", "1", "")),
        ("unary_not", nested("!", "true", "")),
        ("typeof", nested("typeof ", "1", "")),
        ("calls", format!("function f(v: any): any {{ return v; }}\n{}", nested("f(", "1", ")"))),
        ("arrows", nested("() => ", "1", "")),
        ("ternaries", nested("true ? 1 : ", "0", "")),
        ("power", nested("2 ** ", "1", "")),
        ("assignments", format!("let a: any = 0;\n{}1;\n", "a = ".repeat(N))),
        ("blocks", format!("{}{}\n", "{".repeat(N), "}".repeat(N))),
        ("ifs", format!("{}console.log(1);\n", "if (true) ".repeat(N))),
        ("else_ifs", format!("let v = 0;\nif (v == 1) {{}}{}\n", " else if (v == 1) {}".repeat(N))),
        ("functions", format!("{}{}\n", "function f() {".repeat(N), "}".repeat(N))),
        ("types", format!("let t: {}number{} = [];\n", "Array<".repeat(N), ">".repeat(N))),
        ("patterns", format!("const {}t{} = [];\n", "[".repeat(N), "]".repeat(N))),
    ];
    for (name, src) in shapes {
        let (code, err) = check(name, &src);
        assert_eq!(code, Some(2), "{name}: {err}");
        assert!(err.contains("error: code is nested too deeply"), "{name}: {err}");
    }
}

#[test]
fn chains_100000_long_compile_or_are_a_compile_error() {
    let shapes = [
        ("plus_chain", format!("const x = 1{};\n", " + 1".repeat(N))),
        ("minus_chain", format!("const x = 1{};\n", " - 1".repeat(N))),
        ("or_chain", format!("const a = false;\nconst x = a{};\n", " || a".repeat(N))),
        ("nullish_chain", format!("const a: any = null;\nconst x = a{};\n", " ?? a".repeat(N))),
        ("member_chain", format!("const a: any = {{}};\nconst x = a{};\n", ".b".repeat(N))),
        ("index_chain", format!("const a: any = [];\nconst x = a{};\n", "[0]".repeat(N))),
        ("optional_chain", format!("const a: any = null;\nconst x = a{};\n", "?.b".repeat(N))),
        ("call_chain", format!("const f: any = () => f;\nconst x = f{};\n", "()".repeat(N))),
        ("template_parts", format!("const x = `{}`;\n", "${1}".repeat(N))),
        ("statements", "let a = 0;\n".to_string() + &"a++;\n".repeat(N)),
    ];
    for (name, src) in shapes {
        let (code, err) = check(name, &src);
        assert!(code == Some(0) || code == Some(2), "{name}: exit {code:?}: {err}");
        if code == Some(2) {
            assert!(err.starts_with("error: "), "{name}: {err}");
        }
    }
}
