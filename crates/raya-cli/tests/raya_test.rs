//! `raya test` on the fixture directories of `tests/raya_test/`: the whole
//! output compared exactly (timings replaced by `Nms`), and the exit code.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn raya_test(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_raya"))
        .arg("test")
        .args(args)
        .current_dir(workspace_root())
        .env_remove("RAYA_WORKERS")
        .output()
        .expect("run raya");
    Run {
        code: out.status.code().expect("exit code"),
        stdout: strip_timings(&String::from_utf8_lossy(&out.stdout)),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `(12ms)` as `(Nms)`: the only nondeterministic part of the output.
fn strip_timings(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('(') {
        out.push_str(&rest[..=i]);
        rest = &rest[i + 1..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 && rest[digits..].starts_with("ms)") {
            out.push('N');
            rest = &rest[digits..];
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn passing_tests_sleep_use_channels_and_exit_0() {
    let r = raya_test(&["tests/raya_test/pass"]);
    assert_eq!(
        r.stdout,
        "running 4 tests from tests/raya_test/pass/math.test.raya
add sums two numbers ... ok (Nms)
deep equality of arrays, objects and maps ... ok (Nms)
assertThrows returns the error ... ok (Nms)
a test may sleep and use channels and tasks ... ok (Nms)
4 passed, 0 failed
"
    );
    assert_eq!(r.stderr, "");
    assert_eq!(r.code, 0);
}

#[test]
fn failures_show_expected_actual_diffs_and_source_lines_and_exit_1() {
    let r = raya_test(&["tests/raya_test/fail"]);
    assert_eq!(
        r.stdout,
        "running 6 tests from tests/raya_test/fail/strings.test.raya
passes ... ok (Nms)
numbers differ ... FAILED (Nms)
long strings show a line diff ... FAILED (Nms)
nested values are diffed in their console.log form ... FAILED (Nms)
assertThrows without a throw ... FAILED (Nms)
an uncaught error ... FAILED (Nms)

 ERRORS 

numbers differ => tests/raya_test/fail/strings.test.raya:8:3
error: AssertionError: Values are not equal.
    expected: 3
    actual:   2
  assertEquals(1 + 1, 3);
  ^

long strings show a line diff => tests/raya_test/fail/strings.test.raya:14:3
error: AssertionError: Values are not equal.

    [Diff] - expected, + actual

      alpha
    - beta
    + BETA
      gamma
      delta
    + epsilon
  assertEquals(actual, expected);
  ^

nested values are diffed in their console.log form => tests/raya_test/fail/strings.test.raya:18:3
error: AssertionError: Values are not equal.

    [Diff] - expected, + actual

    - { name: 'raya', tags: [ 'fast', 'small' ], version: [ 1, 2, 3 ] }
    + { name: 'raya', tags: [ 'fast', 'safe' ], version: [ 1, 2, 3 ] }
  assertEquals({ name: \"raya\", tags: [\"fast\", \"safe\"], version: [1, 2, 3] }, { name: \"raya\", tags: [\"fast\", \"small\"], version: [1, 2, 3] });
  ^

assertThrows without a throw => tests/raya_test/fail/strings.test.raya:22:3
error: AssertionError: Expected the function to throw.
  assertThrows(() => 1);
  ^

an uncaught error => tests/raya_test/fail/strings.test.raya:27:5
error: TypeError: Cannot read properties of null (reading 'field')
  o.field;
    ^

 FAILURES 

numbers differ => tests/raya_test/fail/strings.test.raya:8:3
long strings show a line diff => tests/raya_test/fail/strings.test.raya:14:3
nested values are diffed in their console.log form => tests/raya_test/fail/strings.test.raya:18:3
assertThrows without a throw => tests/raya_test/fail/strings.test.raya:22:3
an uncaught error => tests/raya_test/fail/strings.test.raya:27:5

1 passed, 5 failed
"
    );
    assert_eq!(r.code, 1);
}

#[test]
fn a_test_past_its_time_out_fails_and_is_cancelled() {
    let r = raya_test(&["--timeout", "200", "tests/raya_test/timeout"]);
    assert_eq!(
        r.stdout,
        "running 3 tests from tests/raya_test/timeout/slow.test.raya
finishes in time ... ok (Nms)
never finishes ... FAILED (Nms)
loops forever ... FAILED (Nms)

 ERRORS 

never finishes => tests/raya_test/timeout/slow.test.raya
error: the test did not finish within 200ms (--timeout)

loops forever => tests/raya_test/timeout/slow.test.raya
error: the test did not finish within 200ms (--timeout)

 FAILURES 

never finishes => tests/raya_test/timeout/slow.test.raya
loops forever => tests/raya_test/timeout/slow.test.raya

1 passed, 2 failed
"
    );
    // Cancelled, the blocked and the looping test tasks do not outlive the
    // run (and do not keep it from ending).
    assert_eq!(r.stderr, "");
    assert_eq!(r.code, 1);
}

#[test]
fn filter_runs_only_the_tests_whose_name_contains_the_text() {
    let r = raya_test(&["--filter", "equality", "tests/raya_test/pass"]);
    assert_eq!(
        r.stdout,
        "running 1 test from tests/raya_test/pass/math.test.raya
deep equality of arrays, objects and maps ... ok (Nms)
1 passed, 0 failed
"
    );
    assert_eq!(r.code, 0);
    let none = raya_test(&["--filter", "no such test", "tests/raya_test/pass"]);
    assert_eq!(none.stdout, "0 passed, 0 failed\n");
    assert_eq!(none.code, 0);
}

#[test]
fn a_compile_error_runs_nothing_and_exits_2() {
    let r = raya_test(&["tests/raya_test/pass", "tests/raya_test/compile_error"]);
    assert_eq!(r.stdout, "");
    assert!(r.stderr.contains("error: expected expression, found `;`"), "{}", r.stderr);
    assert!(r.stderr.contains("tests/raya_test/compile_error/broken.test.raya:4:21"), "{}", r.stderr);
    assert_eq!(r.code, 2);
}

#[test]
fn a_file_whose_top_level_throws_counts_as_a_failure() {
    let r = raya_test(&["tests/raya_test/top_level_throw", "tests/raya_test/pass/math.test.raya"]);
    assert!(
        r.stdout.starts_with(
            "tests/raya_test/top_level_throw/setup.test.raya ... FAILED (the program ended with exit code 1 before its tests ran)\n\nrunning 4 tests from tests/raya_test/pass/math.test.raya\n"
        ),
        "{}",
        r.stdout
    );
    assert!(r.stdout.ends_with("\n4 passed, 1 failed\n"), "{}", r.stdout);
    assert!(r.stderr.starts_with("Uncaught Error: setup failed\n"), "{}", r.stderr);
    assert!(!r.stderr.contains("std:test"), "the generated entry module is not shown: {}", r.stderr);
    assert_eq!(r.code, 1);
}

#[test]
fn the_tests_of_several_files_are_summed_and_the_examples_pass() {
    let r = raya_test(&["tests/raya_test/pass", "examples"]);
    assert!(r.stdout.contains("running 5 tests from examples/math.test.raya\n"), "{}", r.stdout);
    assert!(r.stdout.ends_with("\n9 passed, 0 failed\n"), "{}", r.stdout);
    assert_eq!(r.code, 0);
}

#[test]
fn no_test_file_is_a_usage_error() {
    let r = raya_test(&["tests/raya_test/empty_dir_does_not_exist"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.starts_with("error: cannot read 'tests/raya_test/empty_dir_does_not_exist'"), "{}", r.stderr);
    let r = raya_test(&["crates/raya-cli/src"]);
    assert_eq!(r.stderr, "error: no *.test.raya file found under 'crates/raya-cli/src'\n");
    assert_eq!(r.code, 2);
}

#[test]
fn timings_are_stripped_only_where_they_are_timings() {
    assert_eq!(strip_timings("a (12ms) (x) (3 ms) (7ms)"), "a (Nms) (x) (3 ms) (Nms)");
}
