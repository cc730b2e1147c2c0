//! Built-ins: `console` (`log`, `info`, `debug` to stdout; `error`, `warn`
//! to stderr). Each call prints one line formatted by
//! [`inspect::format_log_args`](super::inspect::format_log_args).

use super::inspect::format_log_args;
use crate::vm::native::NativeCtx;
use crate::vm::realm::{Builder, Realm};
use crate::vm::value::Value;

pub fn install(b: &mut Builder, realm: &mut Realm) {
    let console = b.object();
    b.set_native(console, "log", log);
    b.set_native(console, "info", info);
    b.set_native(console, "debug", debug);
    b.set_native(console, "error", error);
    b.set_native(console, "warn", warn);
    realm.globals[super::global_slot("console")] = console;
}

fn line(ctx: &mut NativeCtx, args: &[Value]) -> Result<String, Value> {
    let mut s = format_log_args(args).map_err(|f| ctx.fault(f))?;
    s.push('\n');
    Ok(s)
}

fn log(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let l = line(ctx, args)?;
    ctx.rt.write_stdout(&l);
    Ok(Value::UNDEFINED)
}

fn info(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    log(ctx, this, args)
}

fn debug(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    log(ctx, this, args)
}

fn error(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let l = line(ctx, args)?;
    ctx.rt.write_stderr(&l);
    Ok(Value::UNDEFINED)
}

fn warn(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    error(ctx, this, args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::testing::rt;

    use crate::vm::task::Task;

    #[test]
    fn log_and_error_write_one_line_each() {
        let mut rt = rt();
        rt.world.output.lock().capture_stdout = true;
        rt.world.output.lock().captured_stderr = Some(Vec::new());
        let task = Task::new(0);
        let mut ctx = NativeCtx { rt: &mut rt, task: &task };
        let s = ctx.str("x");
        let arr = ctx.array(vec![Value::number(1.0), s]);
        log(&mut ctx, Value::UNDEFINED, &[s, Value::number(-0.0), arr]).unwrap();
        info(&mut ctx, Value::UNDEFINED, &[]).unwrap();
        error(&mut ctx, Value::UNDEFINED, &[s]).unwrap();
        warn(&mut ctx, Value::UNDEFINED, &[Value::NULL]).unwrap();
        let out = rt.world.output.lock();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "x -0 [ 1, 'x' ]\n\n");
        assert_eq!(String::from_utf8_lossy(out.captured_stderr.as_ref().unwrap()), "x\nnull\n");
    }
}
