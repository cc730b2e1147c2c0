//! `std:test`: the test API `raya test` runs (`test`, `assert`,
//! `assertEquals`, `assertThrows`).
//!
//! The Raya part (`test.raya`) records the tests a file registers and, when
//! the host calls its runner after the file's top level, runs each as its
//! own task with a time-out and prints one line per test. These natives
//! give it what Raya code cannot compute: a value's `console.log` form, the
//! source line of a stack frame, and a way to hand the file's counts to the
//! host without printing them.

use super::StdModule;
use crate::builtins::inspect;
use crate::vm::native::{arg, NativeCtx};
use crate::vm::{ops, Value};
use std::sync::Mutex;

pub static MODULE: StdModule = StdModule {
    name: "test",
    capability: None,
    natives: &[("inspect", inspect_value), ("codeFrame", code_frame), ("report", report)],
    source: Some(include_str!("test.raya")),
    types: &[],
};

/// Passed and failed tests reported by the runs since the last
/// [`take_counts`]. Process-wide because a `raya test` process runs its
/// files one after another and reads the counts between runs; a host
/// running test programs concurrently would have to serialise them.
static COUNTS: Mutex<Option<(u64, u64)>> = Mutex::new(None);

/// The counts the last test run reported (`None`: its runner never
/// finished, e.g. the file's top level threw), and forgets them.
pub fn take_counts() -> Option<(u64, u64)> {
    COUNTS.lock().unwrap_or_else(|e| e.into_inner()).take()
}

fn inspect_value(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let v = arg(args, 0);
    let text = inspect::inspect_depth(v, 6);
    Ok(ctx.str(text))
}

/// `codeFrame(stack)`: the source line of the stack's innermost frame with a
/// caret under its column, or "" when it names no known file.
fn code_frame(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let stack = ops::as_str(arg(args, 0)).map(|s| s.to_string()).unwrap_or_default();
    let frame = crate::vm::runtime::code_frame(&ctx.rt.world.sources.read(), &stack).unwrap_or_default();
    Ok(ctx.str(frame))
}

fn report(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let count = |v: Value| (v.is_number() && v.as_number() >= 0.0).then(|| v.as_number() as u64);
    let (Some(passed), Some(failed)) = (count(arg(args, 0)), count(arg(args, 1))) else {
        return Err(ctx.type_error("report: expected two counts"));
    };
    *COUNTS.lock().unwrap_or_else(|e| e.into_inner()) = Some((passed, failed));
    Ok(Value::UNDEFINED)
}
