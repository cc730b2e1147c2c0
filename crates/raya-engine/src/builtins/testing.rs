//! What the built-ins' unit tests share: a runtime and task to call natives
//! with, and a compact display of results.

use crate::bytecode::FuncProto;
use crate::syntax::diagnostic::SourceMap;
use crate::vm::native::NativeCtx;
use crate::vm::object::{Body, NativeFn};
use crate::vm::ops;
use crate::vm::runtime::Runtime;
use crate::vm::task::Task;
use crate::vm::value::Value;
use std::sync::Arc;

/// A runtime with no program: the built-ins installed, nothing linked.
pub fn rt() -> Runtime {
    Runtime::new(&Arc::new(FuncProto::default()), &SourceMap::default(), 0, vec![]).0
}

pub fn n(x: f64) -> Value {
    Value::number(x)
}

/// A value like console.log's nested form, compactly: arrays `[1,'a',[2]]`,
/// strings quoted, plain objects `{k: v}`, `Map(n) {k => v}`, `Set(n) {k}`,
/// anything else as `String(x)`. Containers are copied out before their
/// elements are shown (the lock order of `vm::object`).
pub fn show(v: Value) -> String {
    if let Some(a) = ops::array_data(v).map(|a| a.clone()) {
        return format!("[{}]", a.iter().map(|x| show(*x)).collect::<Vec<_>>().join(","));
    }
    if let Some(s) = ops::as_str(v) {
        return format!("'{s}'");
    }
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Object(d)) => {
            let d = d.lock().clone();
            if !d.class.is_undefined() {
                return ops::to_display(v);
            }
            let parts: Vec<String> = d
                .props
                .ordered_keys()
                .into_iter()
                .map(|k| format!("{}: {}", k.as_str(), show(d.props.get(k).unwrap())))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        Some(Body::Map(m)) => {
            let entries: Vec<(Value, Value)> = m.lock().iter().collect();
            let parts: Vec<String> = entries.iter().map(|&(k, v)| format!("{} => {}", show(k), show(v))).collect();
            format!("Map({}) {{{}}}", entries.len(), parts.join(", "))
        }
        Some(Body::Set(m)) => {
            let keys: Vec<Value> = m.lock().iter().map(|(k, _)| k).collect();
            let parts: Vec<String> = keys.iter().map(|&k| show(k)).collect();
            format!("Set({}) {{{}}}", keys.len(), parts.join(", "))
        }
        _ => ops::to_display(v),
    }
}

/// A runtime and a task to call natives with.
pub struct T {
    pub rt: Runtime,
    pub task: Task,
}

impl T {
    pub fn new() -> T {
        T { rt: rt(), task: Task::new(0) }
    }

    pub fn ctx(&mut self) -> NativeCtx<'_> {
        NativeCtx { rt: &mut self.rt, task: &self.task }
    }

    /// `f(this, ...args)`, shown; a thrown error as `String(error)`.
    pub fn call(&mut self, f: NativeFn, this: Value, args: &[Value]) -> String {
        match f(&mut self.ctx(), this, args) {
            Ok(v) => show(v),
            Err(e) => ops::to_display(e),
        }
    }

    /// `f(this, ...args)` returns an iterator: what it produces, as an
    /// array, shown.
    pub fn drain(&mut self, f: NativeFn, this: Value, args: &[Value]) -> String {
        let it = match f(&mut self.ctx(), this, args) {
            Ok(v) => v,
            Err(e) => return ops::to_display(e),
        };
        assert!(matches!(it.as_obj().map(|o| &o.body), Some(crate::vm::object::Body::Iter(_))), "not an iterator");
        let items = crate::builtins::array::iterable_values(&mut self.ctx(), it, false).ok().flatten();
        let a = self.ctx().array(items.unwrap_or_default());
        show(a)
    }

    pub fn s(&mut self, s: &str) -> Value {
        self.ctx().str(s)
    }

    pub fn nums(&mut self, xs: &[f64]) -> Value {
        let v = xs.iter().map(|&x| n(x)).collect();
        self.ctx().array(v)
    }
}
