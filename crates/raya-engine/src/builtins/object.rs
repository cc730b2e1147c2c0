//! Built-ins: the `Object` statics (`keys values entries assign freeze
//! isFrozen fromEntries`) and the methods every object shares
//! (`realm.methods.object`: `hasOwnProperty toString valueOf`).
//!
//! Property order is JS's: array-index keys ascending, then the other keys
//! in insertion order. Arrays and strings have their index keys. A class's
//! own keys are its static *fields*: static methods, accessors and
//! built-in (native) statics are not enumerable, as in JS.
//!
//! Accessor properties (getters/setters defined in object literals) count
//! as keys. Natives cannot call back into Raya code, so `Object.values`,
//! `Object.entries` and `Object.assign` are the prelude's: each calls the
//! native here first, which answers `null` (never a result otherwise) when
//! a getter must be read or a setter called, and the prelude then does the
//! work in Raya. `Object.assign` may have copied some properties before it
//! meets a setter; the prelude copies them again, in the same order, which
//! changes nothing (no setter or getter ran before).
//!
//! An error's `message`, `stack` and `cause` are not enumerable (as in JS).
//!
//! Arrays cannot be frozen (they have no frozen flag): `Object.freeze`
//! returns an array unchanged and `Object.isFrozen` reports false for it.

use super::array::{iterable_values, not_iterable_message};
use crate::vm::atom::{names, Atom};
use crate::vm::native::{arg, NativeCtx};
use crate::vm::object::{Body, Function, Mut, ObjectData, PropMap};
use crate::vm::ops;
use crate::vm::realm::{Builder, Realm};
use crate::vm::value::Value;

pub fn install(b: &mut Builder, realm: &mut Realm) {
    let class = realm.classes.object;
    b.static_native(class, "keys", keys);
    b.static_native(class, "__values", values);
    b.static_native(class, "__entries", entries);
    b.static_native(class, "__assign", assign);
    b.static_native(class, "freeze", freeze);
    b.static_native(class, "isFrozen", is_frozen);
    b.static_native(class, "fromEntries", from_entries);
    b.static_native(class, "hasOwn", has_own);
    let t = &mut realm.methods.object;
    b.method(t, "hasOwnProperty", has_own_property);
    b.method(t, "toString", to_string);
    b.method(t, "valueOf", value_of);
}

/// An object's own enumerable keys.
enum Keys {
    /// "0" .. "n-1" (arrays and strings): made on demand, never interned.
    Indices(usize),
    Named(Vec<Atom>),
}

impl Keys {
    fn len(&self) -> usize {
        match self {
            Keys::Indices(n) => *n,
            Keys::Named(k) => k.len(),
        }
    }
}

fn is_accessor(v: Value) -> bool {
    matches!(v.as_obj().map(|o| &o.body), Some(Body::Accessor(_)))
}

/// Static members that JS would not enumerate: methods (closures whose
/// home is the class), natives and accessors.
fn is_hidden_static(class: Value, v: Value) -> bool {
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Accessor(_)) | Some(Body::Function(Function::Native(_))) => true,
        Some(Body::Function(Function::Closure(c))) => *c.home.lock() == class,
        _ => false,
    }
}

fn to_object_error(ctx: &mut NativeCtx) -> Value {
    ctx.type_error("Cannot convert undefined or null to object")
}

fn own_keys(ctx: &mut NativeCtx, obj: Value) -> Result<Keys, Value> {
    if obj.is_nullish() {
        return Err(to_object_error(ctx));
    }
    Ok(match obj.as_obj().map(|o| &o.body) {
        Some(Body::Object(d)) => {
            let d = d.lock();
            // The members of `Math`, `JSON` and the other namespaces are
            // not enumerable in JS.
            if super::inspect::is_namespace(&d) {
                return Ok(Keys::Named(Vec::new()));
            }
            let mut ks = d.props.ordered_keys();
            if ops::error_name(&d).is_some() {
                // An error's message, stack and cause are not enumerable.
                ks.retain(|&k| k != names::MESSAGE && k != names::STACK && k != names::CAUSE);
            }
            Keys::Named(ks)
        }
        Some(Body::Array(a)) => Keys::Indices(a.lock().len()),
        Some(Body::Str(s)) => Keys::Indices(s.utf16_len as usize),
        Some(Body::Class(c)) => {
            let st = &c.lock().statics;
            Keys::Named(
                st.ordered_keys()
                    .into_iter()
                    .filter(|&k| !st.get(k).is_some_and(|v| is_hidden_static(obj, v)))
                    .collect(),
            )
        }
        // A host object's only own properties are its fields.
        Some(Body::Host(h)) => Keys::Named(h.fields.iter().map(|&(k, _)| k).collect()),
        _ => Keys::Named(Vec::new()),
    })
}

fn key_string(ctx: &mut NativeCtx, keys: &Keys, i: usize) -> Value {
    match keys {
        Keys::Indices(_) => {
            let s = i.to_string();
            ctx.str(s)
        }
        Keys::Named(k) => ops::key_value(ctx.heap(), k[i]),
    }
}

/// The value of own key number `i` (accessors read as undefined).
fn key_value(ctx: &mut NativeCtx, obj: Value, keys: &Keys, i: usize) -> Value {
    let v = match (keys, obj.as_obj().map(|o| &o.body)) {
        (Keys::Indices(_), Some(Body::Array(a))) => a.lock().get(i).copied(),
        (Keys::Indices(_), Some(Body::Str(_))) => Some(ops::string_index(ctx.heap(), obj, i)),
        (Keys::Named(k), Some(Body::Object(d))) => d.lock().props.get(k[i]),
        (Keys::Named(k), Some(Body::Class(c))) => c.lock().statics.get(k[i]),
        (Keys::Named(k), Some(Body::Host(h))) => h.field(k[i]),
        _ => None,
    };
    match v {
        Some(v) if !is_accessor(v) => v,
        _ => Value::UNDEFINED,
    }
}

fn keys(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let obj = arg(args, 0);
    let ks = own_keys(ctx, obj)?;
    let out = (0..ks.len()).map(|i| key_string(ctx, &ks, i)).collect();
    Ok(ctx.array(out))
}

/// Whether reading the own properties `ks` of `obj` would call a getter.
fn has_accessor(obj: Value, ks: &Keys) -> bool {
    match (ks, obj.as_obj().map(|o| &o.body)) {
        (Keys::Named(k), Some(Body::Object(d))) => {
            let d = d.lock();
            k.iter().any(|&k| d.props.get(k).is_some_and(is_accessor))
        }
        _ => false,
    }
}

/// `Object.values(o)`, or `null` when a getter must be read (the prelude's
/// `Object.values` then reads them).
fn values(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let obj = arg(args, 0);
    let ks = own_keys(ctx, obj)?;
    if has_accessor(obj, &ks) {
        return Ok(Value::NULL);
    }
    if let Some(a) = ops::array_data(obj) {
        let items = a.clone();
        return Ok(ctx.array(items));
    }
    let out = (0..ks.len()).map(|i| key_value(ctx, obj, &ks, i)).collect();
    Ok(ctx.array(out))
}

/// `Object.entries(o)`, or `null` when a getter must be read.
fn entries(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let obj = arg(args, 0);
    let ks = own_keys(ctx, obj)?;
    if has_accessor(obj, &ks) {
        return Ok(Value::NULL);
    }
    let mut out = Vec::with_capacity(ks.len());
    for i in 0..ks.len() {
        let k = key_string(ctx, &ks, i);
        let v = key_value(ctx, obj, &ks, i);
        out.push(ctx.array(vec![k, v]));
    }
    Ok(ctx.array(out))
}

/// `Object.assign(target, ...sources)`: copies own enumerable properties
/// of each source (null/undefined sources are skipped) onto `target` with
/// ordinary assignment (so a frozen target is a TypeError); `null` when a
/// source's getter must be read or a setter of the target called.
fn assign(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let target = arg(args, 0);
    if target.is_nullish() {
        return Err(to_object_error(ctx));
    }
    for &src in args.iter().skip(1) {
        if src.is_nullish() {
            continue;
        }
        let ks = own_keys(ctx, src)?;
        if has_accessor(src, &ks) {
            return Ok(Value::NULL);
        }
        // Copy out first: the source may be the target.
        let mut pairs = Vec::with_capacity(ks.len());
        for i in 0..ks.len() {
            let k = match &ks {
                Keys::Indices(_) => ops::number_key(i as f64),
                Keys::Named(k) => k[i],
            };
            pairs.push((k, key_value(ctx, src, &ks, i)));
        }
        for (k, v) in pairs {
            match ops::set_prop(&ctx.rt.realm, target, k, v) {
                Ok(ops::Put::Done) => {}
                Ok(ops::Put::Setter(_)) => return Ok(Value::NULL),
                Err(f) => return Err(ctx.fault(f)),
            }
        }
    }
    Ok(target)
}

fn freeze(_ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let obj = arg(args, 0);
    if let Some(mut d) = ops::object_data(obj) {
        d.frozen = true;
    } else if let Some(o @ crate::vm::object::Obj { body: Body::Array(_), .. }) = obj.as_obj() {
        o.header.frozen.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    Ok(obj)
}

fn is_frozen(_ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let obj = arg(args, 0);
    let frozen = match obj.as_obj().map(|o| &o.body) {
        None | Some(Body::Str(_)) => true,
        Some(Body::Object(d)) => d.lock().frozen,
        Some(o @ Body::Array(_)) => {
            let _ = o;
            obj.as_obj().is_some_and(|o| o.is_frozen_array())
        }
        Some(_) => false,
    };
    Ok(Value::bool(frozen))
}

/// `Object.fromEntries(iterable of [key, value])`: arrays, Maps, Sets of
/// pairs (see `iterable_values`).
fn from_entries(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let src = arg(args, 0);
    let Some(items) = iterable_values(ctx, src, false)? else {
        return Err(ctx.type_error(not_iterable_message(src)));
    };
    let mut props = PropMap::new();
    for e in items {
        let (k, v) = entry_pair(ctx, e)?;
        props.set(ops::to_key(k), v);
    }
    Ok(ctx.heap().alloc(Body::Object(Mut::new(ObjectData { class: Value::UNDEFINED, props, frozen: false }))))
}

/// `[key, value]` of an entry object (`Object.fromEntries`, `new Map`).
pub(crate) fn entry_pair(ctx: &mut NativeCtx, e: Value) -> Result<(Value, Value), Value> {
    if let Some(a) = ops::array_data(e) {
        let k = a.first().copied().unwrap_or(Value::UNDEFINED);
        let v = a.get(1).copied().unwrap_or(Value::UNDEFINED);
        return Ok((k, v));
    }
    let is_object = matches!(
        e.as_obj().map(|o| &o.body),
        Some(Body::Object(_))
            | Some(Body::Map(_))
            | Some(Body::Set(_))
            | Some(Body::Function(_))
            | Some(Body::Class(_))
    );
    if !is_object {
        let shown = ops::to_display(e);
        return Err(ctx.type_error(format!("Iterator value {shown} is not an entry object")));
    }
    let k = ctx.get(e, "0")?;
    let v = ctx.get(e, "1")?;
    Ok((k, v))
}

/// `obj.hasOwnProperty(key)` (also installed on arrays).
pub(crate) fn has_own_property(_ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let key = ops::to_key(arg(args, 0));
    let has = match this.as_obj().map(|o| &o.body) {
        Some(Body::Object(d)) => d.lock().props.find(key).is_some(),
        Some(Body::Array(a)) => key == names::LENGTH || key.as_index().is_some_and(|i| (i as usize) < a.lock().len()),
        Some(Body::Str(s)) => key == names::LENGTH || key.as_index().is_some_and(|i| i < s.utf16_len),
        Some(Body::Class(c)) => c.lock().statics.find(key).is_some(),
        _ => false,
    };
    Ok(Value::bool(has))
}

/// `Object.hasOwn(obj, key)`: `hasOwnProperty` as a static; null and
/// undefined are a TypeError, as in JS.
fn has_own(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let obj = arg(args, 0);
    if obj.is_nullish() {
        return Err(ctx.type_error("Cannot convert undefined or null to object"));
    }
    has_own_property(ctx, obj, args.get(1..).unwrap_or(&[]))
}

fn to_string(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let tag = match this.as_obj().map(|o| &o.body) {
        _ if this.is_undefined() => "Undefined",
        _ if this.is_null() => "Null",
        Some(Body::Array(_)) => "Array",
        Some(Body::Str(_)) => "String",
        Some(Body::Function(_)) | Some(Body::Class(_)) => "Function",
        Some(Body::Map(_)) => "Map",
        Some(Body::Set(_)) => "Set",
        Some(Body::Host(h)) if super::date::host_time_value(h).is_some() => "Date",
        _ if this.is_number() => "Number",
        _ if this.is_bool() => "Boolean",
        _ => "Object",
    };
    Ok(ctx.str(format!("[object {tag}]")))
}

fn value_of(_ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    Ok(this)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::testing::{n, T};

    const U: Value = Value::UNDEFINED;

    #[test]
    fn keys_values_entries_in_js_order() {
        let mut t = T::new();
        let x = t.s("x");
        let o = t.ctx().object(&[("b", n(1.0)), ("2", n(2.0)), ("a", x), ("1", n(3.0)), ("01", n(4.0))]);
        assert_eq!(t.call(keys, U, &[o]), "['1','2','b','a','01']");
        assert_eq!(t.call(values, U, &[o]), "[3,2,1,'x',4]");
        assert_eq!(t.call(entries, U, &[o]), "[['1',3],['2',2],['b',1],['a','x'],['01',4]]");
        let a = t.ctx().array(vec![n(5.0), n(6.0)]);
        assert_eq!(t.call(keys, U, &[a]), "['0','1']");
        assert_eq!(t.call(values, U, &[a]), "[5,6]");
        assert_eq!(t.call(entries, U, &[a]), "[['0',5],['1',6]]");
        let s = t.s("hé");
        assert_eq!(t.call(keys, U, &[s]), "['0','1']");
        assert_eq!(t.call(values, U, &[s]), "['h','é']");
        assert_eq!(t.call(keys, U, &[n(5.0)]), "[]");
        assert_eq!(t.call(keys, U, &[Value::NULL]), "TypeError: Cannot convert undefined or null to object");
        assert_eq!(t.call(values, U, &[]), "TypeError: Cannot convert undefined or null to object");
    }

    #[test]
    fn accessors_are_keys_and_handed_to_the_prelude() {
        let mut t = T::new();
        let acc = t.ctx().heap().alloc(Body::Accessor(Mut::new(crate::vm::object::Accessor { get: U, set: U })));
        let o = t.ctx().object(&[("a", n(1.0)), ("g", acc)]);
        assert_eq!(t.call(keys, U, &[o]), "['a','g']");
        assert_eq!(t.call(values, U, &[o]), "null");
        assert_eq!(t.call(entries, U, &[o]), "null");
        let target = t.ctx().object(&[]);
        assert_eq!(t.call(assign, U, &[target, o]), "null");
        // An accessor without a setter on the target: a TypeError, as in
        // JS's strict mode (a setter is the prelude's to call: e2e tests).
        let getter_only = t.ctx().object(&[("g", acc)]);
        let src = t.ctx().object(&[("g", n(2.0))]);
        assert_eq!(t.call(assign, U, &[getter_only, src]), "TypeError: Cannot set property g which has only a getter");
    }

    #[test]
    fn error_message_and_stack_are_not_enumerable() {
        let mut t = T::new();
        let e = t.ctx().type_error("boom");
        assert_eq!(t.call(keys, U, &[e]), "[]");
        ops::object_data(e).unwrap().props.set(Atom::intern("code"), n(1.0));
        assert_eq!(t.call(keys, U, &[e]), "['code']");
    }

    #[test]
    fn class_statics_enumerate_fields_only() {
        let mut t = T::new();
        let array_class = t.rt.realm.classes.array;
        // Array's statics are natives: not enumerable.
        assert_eq!(t.call(keys, U, &[array_class]), "[]");
        crate::vm::ops::class_data(array_class).unwrap().statics.set(Atom::intern("field"), n(1.0));
        assert_eq!(t.call(keys, U, &[array_class]), "['field']");
        crate::vm::ops::class_data(array_class).unwrap().statics.remove(Atom::intern("field"));
    }

    #[test]
    fn assign_copies_in_order() {
        let mut t = T::new();
        let target = t.ctx().object(&[("a", n(1.0))]);
        let s1 = t.ctx().object(&[("b", n(2.0)), ("a", n(3.0))]);
        let arr = t.ctx().array(vec![n(9.0)]);
        let r = t.call(assign, U, &[target, s1, Value::NULL, arr]);
        assert_eq!(r, "{0: 9, a: 3, b: 2}");
        let ta = t.ctx().array(vec![n(1.0), n(2.0)]);
        let src = t.ctx().array(vec![n(7.0)]);
        assert_eq!(t.call(assign, U, &[ta, src]), "[7,2]");
        assert_eq!(t.call(assign, U, &[U]), "TypeError: Cannot convert undefined or null to object");
        let frozen = t.ctx().object(&[("a", n(1.0))]);
        t.call(freeze, U, &[frozen]);
        let r = t.call(assign, U, &[frozen, s1]);
        assert!(r.starts_with("TypeError"), "{r}");
        // Self-assign is harmless.
        assert_eq!(t.call(assign, U, &[s1, s1]), "{b: 2, a: 3}");
    }

    #[test]
    fn freeze_and_is_frozen() {
        let mut t = T::new();
        let o = t.ctx().object(&[("a", n(1.0))]);
        assert_eq!(t.call(is_frozen, U, &[o]), "false");
        assert_eq!(t.call(freeze, U, &[o]), "{a: 1}");
        assert_eq!(t.call(is_frozen, U, &[o]), "true");
        assert!(ops::set_prop(&t.rt.realm, o, Atom::intern("a"), n(2.0)).is_err());
        assert_eq!(t.call(is_frozen, U, &[n(1.0)]), "true");
        let a = t.ctx().array(vec![]);
        assert_eq!(t.call(freeze, U, &[a]), "[]");
        assert_eq!(t.call(is_frozen, U, &[a]), "true");
    }

    #[test]
    fn from_entries_builds_objects() {
        let mut t = T::new();
        let (ka, kb) = (t.s("a"), t.s("b"));
        let e1 = t.ctx().array(vec![ka, n(1.0)]);
        let e2 = t.ctx().array(vec![kb]);
        let e3 = t.ctx().array(vec![n(1.0), n(3.0)]);
        let e4 = t.ctx().array(vec![ka, n(4.0)]);
        let list = t.ctx().array(vec![e1, e2, e3, e4]);
        assert_eq!(t.call(from_entries, U, &[list]), "{1: 3, a: 4, b: undefined}");
        let bad = t.ctx().array(vec![n(1.0)]);
        assert_eq!(t.call(from_entries, U, &[bad]), "TypeError: Iterator value 1 is not an entry object");
        assert_eq!(
            t.call(from_entries, U, &[n(1.0)]),
            "TypeError: number 1 is not iterable (cannot read property Symbol(Symbol.iterator))"
        );
        let m = t.ctx().heap().alloc(Body::Map(Mut::new(Default::default())));
        if let Some(Body::Map(d)) = m.as_obj().map(|o| &o.body) {
            d.lock().set(ka, n(1.0));
        }
        assert_eq!(t.call(from_entries, U, &[m]), "{a: 1}");
    }

    #[test]
    fn shared_methods() {
        let mut t = T::new();
        let o = t.ctx().object(&[("a", n(1.0)), ("0", n(1.0))]);
        let (ka, kb) = (t.s("a"), t.s("b"));
        assert_eq!(t.call(has_own_property, o, &[ka]), "true");
        assert_eq!(t.call(has_own_property, o, &[kb]), "false");
        assert_eq!(t.call(has_own_property, o, &[n(0.0)]), "true");
        let ts = t.s("toString");
        assert_eq!(t.call(has_own_property, o, &[ts]), "false");
        let a = t.ctx().array(vec![n(1.0)]);
        assert_eq!(t.call(has_own_property, a, &[n(0.0)]), "true");
        assert_eq!(t.call(has_own_property, a, &[n(1.0)]), "false");
        assert_eq!(t.call(to_string, o, &[]), "'[object Object]'");
        assert_eq!(t.call(to_string, a, &[]), "'[object Array]'");
    }
}
