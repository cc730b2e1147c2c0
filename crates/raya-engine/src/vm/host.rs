//! Host objects: script objects backed by Rust state (a socket, an open
//! file), for built-in modules.
//!
//! A host object is a [`Body::Host`]: a payload (`Arc<dyn Any + Send +
//! Sync>`, downcast by the natives that know its type) and a class built
//! from a static [`HostClass`] description: native methods and getters on
//! the prototype, optionally a `next` native that makes the object
//! iterable with `for`-`of`. Scripts see an ordinary object of that class
//! (`instanceof`, method calls, getters, `console.log` as `Name { .. }`).
//! It cannot be constructed with `new`; its only own properties are
//! read-only `fields` fixed when it is made (a child process's `pid` and
//! pipes), which the collector traces.
//!
//! The payload is shared with the natives working on the object, including
//! blocking-pool jobs; it must hold no `Value` (the collector does not look
//! inside it).
//!
//! The class is made once per program, on first use, and kept in
//! [`World`]'s registry (a GC root). The payload is dropped with the
//! object, so a socket nobody references is closed by the collector even
//! if the script never closed it.

use super::atom::Atom;
use super::object::{Accessor, Body, BuiltinKind, ClassData, Function, Mut, Native, NativeFn, PropMap};
use super::runtime::{Runtime, World};
use super::value::Value;
use std::any::Any;
use std::sync::Arc;

/// The static description of a host class.
pub struct HostClass {
    pub name: &'static str,
    /// Methods on the prototype.
    pub methods: &'static [(&'static str, NativeFn)],
    /// Read-only accessors on the prototype.
    pub getters: &'static [(&'static str, NativeFn)],
    /// `for (const x of obj)` calls this with the object as `this` until it
    /// returns null. It may suspend only with a wait that re-runs the call
    /// (`sync::WaitObject::reruns_call`), as the socket waits do.
    pub next: Option<NativeFn>,
    /// What `console.log` prints between the braces (`Name { .. }`).
    pub inspect: Option<fn(&HostObj) -> String>,
}

/// The body of a host object.
pub struct HostObj {
    /// The class made from `desc` (see [`host_class`]).
    pub class: Value,
    pub desc: &'static HostClass,
    pub data: Arc<dyn Any + Send + Sync>,
    /// Read-only own properties, fixed when the object is made.
    pub fields: Box<[(Atom, Value)]>,
}

impl HostObj {
    /// The payload as a `T`, if it is one.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.data.downcast_ref::<T>()
    }

    /// The own property `key`, if the object has one.
    pub fn field(&self, key: Atom) -> Option<Value> {
        self.fields.iter().find(|&&(k, _)| k == key).map(|&(_, v)| v)
    }
}

/// The payload of `v`, shared, if it is a host object of class `desc`
/// (for natives that hand it to a pool job).
pub fn payload_arc<T: Any + Send + Sync>(v: Value, desc: &'static HostClass) -> Option<Arc<T>> {
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Host(h)) if std::ptr::eq(h.desc, desc) => h.data.clone().downcast::<T>().ok(),
        _ => None,
    }
}

/// The payload of `v` if it is a host object of class `desc`.
pub fn payload<T: Any + Send + Sync>(v: Value, desc: &'static HostClass) -> Option<&'static T> {
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Host(h)) if std::ptr::eq(h.desc, desc) => h.get::<T>(),
        _ => None,
    }
}

/// Classes made so far, by the address of their description.
#[derive(Default)]
pub struct HostClasses(parking_lot::Mutex<Vec<(usize, Value)>>);

impl HostClasses {
    pub fn values(&self) -> Vec<Value> {
        self.0.lock().iter().map(|&(_, v)| v).collect()
    }
}

/// The class of `desc` in this program, made on first use.
pub fn host_class(rt: &mut Runtime, desc: &'static HostClass) -> Value {
    let key = desc as *const HostClass as usize;
    let world: Arc<World> = rt.world.clone();
    let mut classes = world.host_classes.0.lock();
    if let Some(&(_, v)) = classes.iter().find(|(k, _)| *k == key) {
        return v;
    }
    let mut proto = PropMap::new();
    for &(name, f) in desc.methods {
        let v = rt.heap.alloc(Body::Function(Function::Native(Native { name, f, data: Value::UNDEFINED })));
        proto.set(Atom::intern(name), v);
    }
    for &(name, f) in desc.getters {
        let get = rt.heap.alloc(Body::Function(Function::Native(Native { name, f, data: Value::UNDEFINED })));
        let acc = rt.heap.alloc(Body::Accessor(Mut::new(Accessor { get, set: Value::UNDEFINED })));
        proto.set(Atom::intern(name), acc);
    }
    let class = rt.heap.alloc(Body::Class(Box::new(Mut::new(ClassData {
        name: Atom::intern(desc.name),
        parent: Value::UNDEFINED,
        ctor: Value::UNDEFINED,
        field_init: Value::UNDEFINED,
        field_template: None,
        ctor_plan: None,
        proto_props: proto,
        statics: PropMap::new(),
        // Not constructible from scripts.
        kind: BuiltinKind::Namespace,
        call: Value::UNDEFINED,
    }))));
    // Registered before the lock is released: the caller is a GC mutator,
    // so no collection runs until it reaches a safepoint, and by then the
    // class is a root.
    classes.push((key, class));
    class
}

/// A new host object of class `desc` holding `data`.
pub fn new_host_object(rt: &mut Runtime, desc: &'static HostClass, data: Arc<dyn Any + Send + Sync>) -> Value {
    new_host_object_with(rt, desc, data, Box::new([]))
}

/// A new host object with read-only own properties `fields`.
pub fn new_host_object_with(
    rt: &mut Runtime,
    desc: &'static HostClass,
    data: Arc<dyn Any + Send + Sync>,
    fields: Box<[(Atom, Value)]>,
) -> Value {
    let class = host_class(rt, desc);
    rt.heap.alloc(Body::Host(HostObj { class, desc, data, fields }))
}
