//! The context a built-in (native) function runs in.
//!
//! A native is `fn(&mut NativeCtx, this, args) -> Result<Value, Value>`:
//! `Err(v)` throws `v`. Natives run to completion without calling back into
//! Raya code (built-ins that take callbacks are written in Raya, see
//! `stdlib/prelude.raya`), and no collection happens while one runs, so
//! `Value`s in Rust locals stay valid.

use super::atom::{names, Atom};
use super::heap::Heap;
use super::object::{Body, Mut, ObjectData, PropMap};
use super::ops::{self, Fault};
use super::realm::Realm;
use super::runtime::Runtime;
use super::task::Task;
use super::value::Value;

pub struct NativeCtx<'a> {
    pub rt: &'a mut Runtime,
    pub task: &'a Task,
}

impl NativeCtx<'_> {
    pub fn heap(&mut self) -> &mut Heap {
        &mut self.rt.heap
    }

    pub fn realm(&self) -> &Realm {
        &self.rt.realm
    }

    pub fn str(&mut self, s: impl Into<Box<str>>) -> Value {
        self.rt.heap.alloc_str(s)
    }

    pub fn array(&mut self, items: Vec<Value>) -> Value {
        self.rt.heap.alloc_array(items)
    }

    /// A new plain object with the given properties, in order.
    pub fn object(&mut self, props: &[(&str, Value)]) -> Value {
        let mut map = PropMap::new();
        for (k, v) in props {
            map.set(Atom::intern(k), *v);
        }
        self.rt.heap.alloc(Body::Object(Mut::new(ObjectData { class: Value::UNDEFINED, props: map, frozen: false })))
    }

    /// A new error of `class` with `message` and a stack trace of the
    /// current task.
    pub fn error(&mut self, class: Value, message: &str) -> Value {
        self.rt.make_error(self.task, class, message)
    }

    pub fn type_error(&mut self, message: impl AsRef<str>) -> Value {
        let c = self.rt.realm.classes.type_error;
        self.error(c, message.as_ref())
    }

    pub fn range_error(&mut self, message: impl AsRef<str>) -> Value {
        let c = self.rt.realm.classes.range_error;
        self.error(c, message.as_ref())
    }

    pub fn syntax_error(&mut self, message: impl AsRef<str>) -> Value {
        let c = self.rt.realm.classes.syntax_error;
        self.error(c, message.as_ref())
    }

    pub fn plain_error(&mut self, message: impl AsRef<str>) -> Value {
        let c = self.rt.realm.classes.error;
        self.error(c, message.as_ref())
    }

    /// Converts an operation fault into a thrown error value.
    pub fn fault(&mut self, f: Fault) -> Value {
        self.rt.fault_to_error(self.task, f)
    }

    /// `String(v)` without user code.
    pub fn to_display(&self, v: Value) -> String {
        ops::to_display(v)
    }

    /// Reads property `name` of `obj` (getters are not called: they read as
    /// undefined here).
    pub fn get(&mut self, obj: Value, name: &str) -> Result<Value, Value> {
        match ops::get_prop(&self.rt.realm, &mut self.rt.heap, obj, Atom::intern(name)) {
            Ok(ops::Got::Value(v)) => Ok(v),
            Ok(ops::Got::Getter(_)) => Ok(Value::UNDEFINED),
            Err(f) => Err(self.fault(f)),
        }
    }

    pub fn args(&self) -> &[String] {
        &self.rt.world.script_args
    }
}

/// Argument `i`, or undefined.
#[inline]
pub fn arg(args: &[Value], i: usize) -> Value {
    args.get(i).copied().unwrap_or(Value::UNDEFINED)
}

pub const MESSAGE: Atom = names::MESSAGE;
