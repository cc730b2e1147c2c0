//! Built-ins: `structuredClone(value)`, the HTML structured clone as Node
//! has it: arrays, plain objects (class instances become plain objects, as
//! in JS), `Map`, `Set`, `Date`, `Uint8Array` and errors are copied deeply,
//! keeping shared references and cycles; strings, numbers, booleans, null
//! and undefined are themselves. Functions, classes, tasks, channels and
//! the other runtime objects cannot be cloned (a `DataCloneError`).
//!
//! The copy is breadth-first with an explicit work list, so nesting depth
//! is limited by memory only, never by the Rust stack.

use crate::vm::atom::{names, Atom};
use crate::vm::native::{arg, NativeCtx};
use crate::vm::object::{Body, Bytes, MapData, Mut, PropMap};
use crate::vm::ops;
use crate::vm::realm::{Builder, Realm};
use crate::vm::value::Value;
use std::collections::HashMap;

pub fn install(b: &mut Builder, realm: &mut Realm) {
    realm.globals[super::global_slot("structuredClone")] = b.native("structuredClone", structured_clone);
}

/// A source object and its (still empty) copy, waiting to be filled.
struct Pending {
    src: Value,
    dst: Value,
}

struct Cloner {
    /// Copies made so far, by source object address: a value reached twice
    /// is copied once, which also ends cycles.
    copies: HashMap<usize, Value>,
    pending: Vec<Pending>,
}

fn structured_clone(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    if args.is_empty() {
        return Err(ctx.type_error("The value argument must be specified"));
    }
    let mut c = Cloner { copies: HashMap::new(), pending: Vec::new() };
    let root = c.copy(ctx, arg(args, 0))?;
    while let Some(Pending { src, dst }) = c.pending.pop() {
        c.fill(ctx, src, dst)?;
    }
    Ok(root)
}

fn data_clone_error(ctx: &mut NativeCtx, v: Value) -> Value {
    let what = match v.as_obj().map(|o| &o.body) {
        Some(Body::Function(_)) | Some(Body::Class(_)) => ops::to_display(v),
        _ => {
            let class = ops::class_of(ctx.realm(), v);
            let name = ops::class_data(class).map(|c| c.name.as_str().to_string()).unwrap_or_default();
            format!("#<{}>", if name.is_empty() { "Object" } else { &name })
        }
    };
    let err = ctx.plain_error(format!("{what} could not be cloned."));
    if let Some(mut d) = ops::object_data(err) {
        let name = ctx.rt.heap.alloc_str("DataCloneError");
        d.props.set(names::NAME, name);
    }
    err
}

impl Cloner {
    /// The copy of `v`: primitives and strings as they are; for an object,
    /// its copy if one was made, else a new empty one of the same kind
    /// (queued to be filled).
    fn copy(&mut self, ctx: &mut NativeCtx, v: Value) -> Result<Value, Value> {
        let Some(obj) = v.as_obj() else { return Ok(v) };
        let key = obj as *const _ as usize;
        if let Some(&done) = self.copies.get(&key) {
            return Ok(done);
        }
        let dst = match &obj.body {
            Body::Str(_) => return Ok(v),
            Body::Array(_) => ctx.array(Vec::new()),
            Body::Object(d) => {
                let d = d.lock();
                // Errors keep their built-in class; any other object
                // becomes a plain one.
                let class = if ops::error_name(&d).is_some() { error_class(ctx, d.class) } else { Value::UNDEFINED };
                drop(d);
                ctx.heap().alloc_object(class)
            }
            Body::Map(_) => ctx.heap().alloc(Body::Map(Mut::new(MapData::default()))),
            Body::Set(_) => ctx.heap().alloc(Body::Set(Mut::new(MapData::default()))),
            Body::Bytes(b) => {
                let data = b.with(|s| s.to_vec());
                ctx.heap().alloc(Body::Bytes(Bytes::new(data)))
            }
            Body::Host(h) => match super::date::host_time_value(h) {
                Some(t) => super::date::new_date(ctx.rt, t),
                None => return Err(data_clone_error(ctx, v)),
            },
            _ => return Err(data_clone_error(ctx, v)),
        };
        self.copies.insert(key, dst);
        if matches!(obj.body, Body::Array(_) | Body::Object(_) | Body::Map(_) | Body::Set(_)) {
            self.pending.push(Pending { src: v, dst });
        }
        Ok(dst)
    }

    /// Copies the contents of `src` into its copy `dst`. The source is read
    /// out before anything is copied, so no object is locked while another
    /// (possibly the same one) is.
    fn fill(&mut self, ctx: &mut NativeCtx, src: Value, dst: Value) -> Result<(), Value> {
        let Some(obj) = src.as_obj() else { return Ok(()) };
        match &obj.body {
            Body::Array(a) => {
                let items = a.lock().clone();
                let mut out = Vec::with_capacity(items.len());
                for x in items {
                    out.push(self.copy(ctx, x)?);
                }
                if let Some(mut d) = ops::array_data(dst) {
                    *d = out;
                }
            }
            Body::Object(d) => {
                let entries: Vec<(Atom, Value)> = {
                    let d = d.lock();
                    if super::inspect::is_namespace(&d) {
                        Vec::new()
                    } else {
                        d.props.ordered_keys().into_iter().filter_map(|k| d.props.get(k).map(|v| (k, v))).collect()
                    }
                };
                let mut props = PropMap::new();
                for (k, v) in entries {
                    // Accessors (getters) are not data; they are left out.
                    if matches!(v.as_obj().map(|o| &o.body), Some(Body::Accessor(_))) {
                        continue;
                    }
                    props.set(k, self.copy(ctx, v)?);
                }
                if let Some(mut d) = ops::object_data(dst) {
                    d.props = props;
                }
            }
            Body::Map(m) | Body::Set(m) => {
                let entries: Vec<(Value, Value)> = m.lock().iter().collect();
                let mut data = MapData::default();
                for (k, v) in entries {
                    let k = self.copy(ctx, k)?;
                    let v = self.copy(ctx, v)?;
                    data.set(k, v);
                }
                if let Some(Body::Map(out) | Body::Set(out)) = dst.as_obj().map(|o| &o.body) {
                    *out.lock() = data;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// The class an error's copy gets: its own if it is one of the built-in
/// error classes, else `Error` (a user subclass does not travel).
fn error_class(ctx: &NativeCtx, class: Value) -> Value {
    let c = &ctx.realm().classes;
    let builtin = [
        c.error,
        c.type_error,
        c.range_error,
        c.syntax_error,
        c.reference_error,
        c.task_cancelled_error,
        c.channel_closed_error,
        c.deadlock_error,
        c.io_error,
    ];
    if builtin.contains(&class) {
        class
    } else {
        c.error
    }
}
