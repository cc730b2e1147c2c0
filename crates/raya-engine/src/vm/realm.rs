//! The realm: built-in classes, global values and the method tables of
//! built-in types, created once per VM by `builtins::install`.

use super::atom::Atom;
use super::heap::{Heap, Marker};
use super::object::{Body, BuiltinKind, ClassData, Function, Mut, MutRef, Native, NativeFn, ObjectData, PropMap};
use super::value::Value;

/// The built-in classes the runtime itself needs to name (for `instanceof`
/// on built-in values and to create errors).
#[derive(Clone, Copy)]
pub struct Classes {
    pub object: Value,
    pub function: Value,
    pub array: Value,
    pub string: Value,
    pub number: Value,
    pub boolean: Value,
    pub map: Value,
    pub set: Value,
    pub error: Value,
    pub type_error: Value,
    pub range_error: Value,
    pub syntax_error: Value,
    pub reference_error: Value,
    pub task_cancelled_error: Value,
    pub channel_closed_error: Value,
    pub deadlock_error: Value,
    pub task: Value,
    pub promise: Value,
    pub channel: Value,
    pub mutex: Value,
    pub wait_group: Value,
    pub semaphore: Value,
}

/// Methods of values that are not class instances, by receiver type.
#[derive(Default, Clone)]
pub struct Methods {
    pub array: PropMap,
    pub string: PropMap,
    pub number: PropMap,
    pub boolean: PropMap,
    pub function: PropMap,
    pub map: PropMap,
    pub set: PropMap,
    /// Methods shared by every object (`toString`, `hasOwnProperty`).
    pub object: PropMap,
    pub task: PropMap,
    pub promise: PropMap,
    pub channel: PropMap,
    pub mutex: PropMap,
    pub wait_group: PropMap,
    pub semaphore: PropMap,
}

impl Methods {
    /// The method table of a built-in receiver that has no properties of
    /// its own besides a few fixed names (`length`, `size`, indices...),
    /// none of which is a method name. For such a receiver, a key found in
    /// this table is exactly what `ops::get_prop` returns, which lets a
    /// call site cache the slot (`Instr::CallMethod`).
    pub fn of_builtin(&self, body: &super::object::Body) -> Option<&PropMap> {
        use super::object::Body;
        Some(match body {
            Body::Array(_) => &self.array,
            Body::Str(_) => &self.string,
            Body::Map(_) => &self.map,
            Body::Set(_) => &self.set,
            Body::Task(_) => &self.task,
            Body::Promise(_) => &self.promise,
            Body::Channel(_) => &self.channel,
            Body::Mutex(_) => &self.mutex,
            Body::WaitGroup(_) => &self.wait_group,
            Body::Semaphore(_) => &self.semaphore,
            _ => return None,
        })
    }
}

#[derive(Clone)]
pub struct Realm {
    /// Initial values of the global slots named by `builtins::GLOBAL_NAMES`.
    pub globals: Vec<Value>,
    pub classes: Classes,
    pub methods: Methods,
}

impl Realm {
    pub fn mark_roots(&self, m: &mut Marker) {
        m.mark_all(&self.globals);
        let c = &self.classes;
        m.mark_all(&[
            c.object,
            c.function,
            c.array,
            c.string,
            c.number,
            c.boolean,
            c.map,
            c.set,
            c.error,
            c.type_error,
            c.range_error,
            c.syntax_error,
            c.reference_error,
            c.task_cancelled_error,
            c.channel_closed_error,
            c.deadlock_error,
            c.task,
            c.promise,
            c.channel,
            c.mutex,
            c.wait_group,
            c.semaphore,
        ]);
        let ms = &self.methods;
        for t in [
            &ms.array,
            &ms.string,
            &ms.number,
            &ms.boolean,
            &ms.function,
            &ms.map,
            &ms.set,
            &ms.object,
            &ms.task,
            &ms.promise,
            &ms.channel,
            &ms.mutex,
            &ms.wait_group,
            &ms.semaphore,
        ] {
            m.mark_all(t.vals());
        }
    }
}

/// Helpers for building built-in objects.
pub struct Builder<'h> {
    pub heap: &'h mut Heap,
}

impl Builder<'_> {
    pub fn native(&mut self, name: &'static str, f: NativeFn) -> Value {
        self.heap.alloc(Body::Function(Function::Native(Native { name, f, data: Value::UNDEFINED })))
    }

    /// Adds native method `name` to a method table.
    pub fn method(&mut self, table: &mut PropMap, name: &'static str, f: NativeFn) {
        let v = self.native(name, f);
        table.set(Atom::intern(name), v);
    }

    /// A plain object (namespaces like `Math`, `JSON`, `console`).
    pub fn object(&mut self) -> Value {
        self.heap.alloc(Body::Object(Mut::new(ObjectData {
            class: Value::UNDEFINED,
            props: PropMap::new(),
            frozen: false,
        })))
    }

    /// Sets a property on a plain object made by [`Builder::object`].
    pub fn set(&mut self, obj: Value, name: &str, v: Value) {
        if let Some(Body::Object(d)) = obj.as_obj().map(|o| &o.body) {
            d.lock().props.set(Atom::intern(name), v);
        }
    }

    pub fn set_native(&mut self, obj: Value, name: &'static str, f: NativeFn) {
        let v = self.native(name, f);
        self.set(obj, name, v);
    }

    /// A built-in class. `ctor` runs for `new` (with `this` = a fresh
    /// instance for `BuiltinKind::Ordinary`); `call` runs when the class is
    /// called without `new` (undefined: calling it is a TypeError).
    pub fn class(
        &mut self,
        name: &str,
        parent: Value,
        kind: BuiltinKind,
        ctor: Option<NativeFn>,
        call: Option<NativeFn>,
    ) -> Value {
        let leaked: &'static str = Atom::intern(name).as_str();
        let ctor = ctor.map(|f| self.native(leaked, f)).unwrap_or(Value::UNDEFINED);
        let call = call.map(|f| self.native(leaked, f)).unwrap_or(Value::UNDEFINED);
        self.heap.alloc(Body::Class(Mut::new(ClassData {
            name: Atom::intern(name),
            parent,
            ctor,
            field_init: Value::UNDEFINED,
            proto_props: PropMap::new(),
            statics: PropMap::new(),
            kind,
            call,
        })))
    }

    pub fn class_data(class: Value) -> MutRef<'static, ClassData> {
        match class.as_obj().map(|o| &o.body) {
            Some(Body::Class(c)) => c.lock(),
            _ => panic!("not a class"),
        }
    }

    pub fn static_native(&mut self, class: Value, name: &'static str, f: NativeFn) {
        let v = self.native(name, f);
        Self::class_data(class).statics.set(Atom::intern(name), v);
    }

    pub fn proto_native(&mut self, class: Value, name: &'static str, f: NativeFn) {
        let v = self.native(name, f);
        Self::class_data(class).proto_props.set(Atom::intern(name), v);
    }
}
