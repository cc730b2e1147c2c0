//! `std:fs`: files and directories. Every operation runs on the blocking
//! pool with only the calling task suspended (`super::io`).

use super::io::block_on;
use super::{Capability, StdModule};
use crate::sync::Resume;
use crate::vm::native::{arg, NativeCtx};
use crate::vm::{ops, Value};

pub static MODULE: StdModule =
    StdModule { name: "fs", capability: Some(Capability::Fs), natives: &[("exists", exists)], source: None };

/// Argument `i` as a path: a string, else a `TypeError` naming `func`.
/// `Ok(None)`: the string holds a NUL byte, which no OS path can.
fn path_arg(ctx: &mut NativeCtx, args: &[Value], i: usize, func: &str, what: &str) -> Result<Option<String>, Value> {
    let v = arg(args, i);
    match ops::as_str(v) {
        Some(s) if s.contains('\0') => Ok(None),
        Some(s) => Ok(Some(s.to_string())),
        None => Err(ctx.type_error(format!("{func}: the {what} must be a string, got {}", ops::type_of(v)))),
    }
}

/// `exists(path)`: whether anything is there (following symbolic links).
fn exists(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let Some(path) = path_arg(ctx, args, 0, "exists", "path")? else {
        return Ok(Value::FALSE);
    };
    block_on(
        ctx,
        "in fs.exists",
        move || std::fs::metadata(path).is_ok(),
        |_, _, found| Resume::Value(Value::bool(found)),
    )
}
