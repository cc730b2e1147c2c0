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

/// A chain of operators, calls or property accesses builds a tree as deep
/// as the chain is long, which the resolver and the code generator walk
/// recursively: past the nesting limit it is a compile error (exit 2),
/// never a stack overflow, on the compiler's ordinary 8 MB thread. Long
/// lists (statements, array elements) are not nesting and compile.
#[test]
fn chains_100000_long_are_a_compile_error_and_lists_compile() {
    let chains = [
        ("plus_chain", format!("const x = 1{};\n", " + 1".repeat(N))),
        ("minus_chain", format!("const x = 1{};\n", " - 1".repeat(N))),
        ("or_chain", format!("const a = false;\nconst x = a{};\n", " || a".repeat(N))),
        ("nullish_chain", format!("const a: any = null;\nconst x = a{};\n", " ?? a".repeat(N))),
        ("member_chain", format!("const a: any = {{}};\nconst x = a{};\n", ".b".repeat(N))),
        ("index_chain", format!("const a: any = [];\nconst x = a{};\n", "[0]".repeat(N))),
        ("optional_chain", format!("const a: any = null;\nconst x = a{};\n", "?.b".repeat(N))),
        ("call_chain", format!("const f: any = () => f;\nconst x = f{};\n", "()".repeat(N))),
        ("non_null_chain", format!("const a: any = 1;\nconst x = a{};\n", "!".repeat(N))),
    ];
    for (name, src) in chains {
        let (code, err) = check(name, &src);
        assert_eq!(code, Some(2), "{name}: {err}");
        assert!(err.contains("error: code is nested too deeply"), "{name}: {err}");
        assert!(err.contains("split it with intermediate variables"), "{name}: {err}");
    }
    // 100,000 parts need more registers than a function may have: a
    // compile error too, but not a nesting one.
    let (code, err) = check("template_parts", &format!("const x = `{}`;\n", "${1}".repeat(N)));
    assert_eq!(code, Some(2), "template_parts: {err}");
    assert!(err.starts_with("error: function too large"), "template_parts: {err}");
    let lists = [
        ("statements", "let a = 0;\n".to_string() + &"a++;\n".repeat(N)),
        ("array_elements", format!("const x = [{}];\n", "1, ".repeat(N))),
    ];
    for (name, src) in lists {
        let (code, err) = check(name, &src);
        assert_eq!(code, Some(0), "{name}: {err}");
    }
}

/// Just under the limit, chains and nesting compile and run correctly on
/// the compiler's 8 MB thread (an unoptimised build uses the most stack
/// per level).
#[test]
fn chains_and_nesting_just_under_the_limit_compile_and_run() {
    let programs = [
        ("plus_990", format!("const x = 1{};\nconsole.log(x);\n", " + 1".repeat(990)), "991"),
        (
            "member_990",
            format!("const a: any = {{b: null}};\nconst x = a{};\nconsole.log(x);\n", "?.b".repeat(990)),
            "undefined",
        ),
        (
            "calls_300",
            format!(
                "function f(v: number): number {{ return v + 1; }}\nconsole.log({}0{});\n",
                "f(".repeat(300),
                ")".repeat(300)
            ),
            "300",
        ),
        (
            "else_if_490",
            format!(
                "let v = 490;\nlet r = -1;\nif (v == 0) {{ r = 0; }}{}\nconsole.log(r);\n",
                (1..490).map(|i| format!(" else if (v == {i}) {{ r = {i}; }}")).collect::<String>()
                    + " else { r = 490; }"
            ),
            "490",
        ),
        (
            "arrows_300",
            format!("const f: any = {}7;\nconsole.log(f{});\n", "() => ".repeat(300), "()".repeat(300)),
            "7",
        ),
    ];
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("deep_nesting");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, src, expected) in programs {
        let path = dir.join(format!("{name}.raya"));
        std::fs::write(&path, src).unwrap();
        let out = Command::new(raya_bin()).arg("run").arg(&path).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{name}: {stderr}");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), expected, "{name}");
    }
}
