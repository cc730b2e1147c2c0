//! Built-ins: `Map` and `Set` (SameValueZero keys, insertion order; see
//! `MapData`). `new Map(...)` / `new Set(...)` are [`construct_map`] /
//! [`construct_set`], called by the interpreter; `size` is read by
//! `ops::get_prop`.
//!
//! Iterators are not modelled: `keys values entries` return arrays.
//! `forEach` takes a callback, so it is written in Raya (the prelude).

use super::array::{iterable_values, not_iterable_message};
use super::object::entry_pair;
use crate::vm::native::{arg, NativeCtx};
use crate::vm::object::{Body, IterState, MapData, MapPos, Mut, MutRef};
use crate::vm::ops;
use crate::vm::realm::{Builder, Realm};
use crate::vm::value::Value;

pub fn install(b: &mut Builder, realm: &mut Realm) {
    let t = &mut realm.methods.map;
    b.method(t, "get", map_get);
    b.method(t, "set", map_set);
    b.method(t, "has", map_has);
    b.method(t, "delete", map_delete);
    b.method(t, "clear", map_clear);
    b.method(t, "keys", map_keys);
    b.method(t, "values", map_values);
    b.method(t, "entries", map_entries);
    let t = &mut realm.methods.set;
    b.method(t, "add", set_add);
    b.method(t, "has", set_has);
    b.method(t, "delete", set_delete);
    b.method(t, "clear", set_clear);
    b.method(t, "values", set_values);
    b.method(t, "keys", set_values);
    b.method(t, "entries", set_entries);
    let map_call = b.native("Map", requires_new);
    Builder::class_data(realm.classes.map).call = map_call;
    let set_call = b.native("Set", requires_new);
    Builder::class_data(realm.classes.set).call = set_call;
}

/// `Map()` / `Set()` without `new` is a TypeError, as in JS.
fn requires_new(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let name = ops::function_name(this).unwrap_or_else(|| "Map".into());
    Err(ctx.type_error(format!("Constructor {name} requires 'new'")))
}

fn not_iterable(ctx: &mut NativeCtx, v: Value) -> Value {
    ctx.type_error(not_iterable_message(v))
}

/// `new Map()`, `new Map(null | undefined)`, `new Map(iterable of
/// [key, value])` (arrays of pairs, another Map, ...).
pub fn construct_map(ctx: &mut NativeCtx, args: &[Value]) -> Result<Value, Value> {
    let src = arg(args, 0);
    let mut data = MapData::default();
    if let Some(Body::Map(m)) = src.as_obj().map(|o| &o.body) {
        for (k, v) in m.lock().iter() {
            data.set(k, v);
        }
    } else if !src.is_nullish() {
        let Some(items) = iterable_values(ctx, src, false)? else {
            return Err(not_iterable(ctx, src));
        };
        for e in items {
            let (k, v) = entry_pair(ctx, e)?;
            data.set(k, v);
        }
    }
    Ok(ctx.heap().alloc(Body::Map(Mut::new(data))))
}

/// `new Set()`, `new Set(null | undefined)`, `new Set(iterable)` (arrays,
/// strings by code point, Sets, Maps' entries, ...).
pub fn construct_set(ctx: &mut NativeCtx, args: &[Value]) -> Result<Value, Value> {
    let src = arg(args, 0);
    let mut data = MapData::default();
    if let Some(a) = ops::array_data(src) {
        for &v in a.iter() {
            data.set(v, Value::UNDEFINED);
        }
    } else if !src.is_nullish() {
        let Some(items) = iterable_values(ctx, src, false)? else {
            return Err(not_iterable(ctx, src));
        };
        for v in items {
            data.set(v, Value::UNDEFINED);
        }
    }
    Ok(ctx.heap().alloc(Body::Set(Mut::new(data))))
}

fn this_map(ctx: &mut NativeCtx, this: Value, method: &str) -> Result<MutRef<'static, MapData>, Value> {
    match this.as_obj().map(|o| &o.body) {
        Some(Body::Map(m)) => Ok(m.lock()),
        _ => Err(ctx.type_error(format!("Method Map.prototype.{method} called on incompatible receiver"))),
    }
}

fn this_set(ctx: &mut NativeCtx, this: Value, method: &str) -> Result<MutRef<'static, MapData>, Value> {
    match this.as_obj().map(|o| &o.body) {
        Some(Body::Set(m)) => Ok(m.lock()),
        _ => Err(ctx.type_error(format!("Method Set.prototype.{method} called on incompatible receiver"))),
    }
}

// ---------------------------------------------------------------------------
// Map
// ---------------------------------------------------------------------------

fn map_get(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    Ok(this_map(ctx, this, "get")?.get(arg(args, 0)).unwrap_or(Value::UNDEFINED))
}

fn map_set(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    this_map(ctx, this, "set")?.set(arg(args, 0), arg(args, 1));
    Ok(this)
}

fn map_has(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    Ok(Value::bool(this_map(ctx, this, "has")?.has(arg(args, 0))))
}

fn map_delete(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    Ok(Value::bool(this_map(ctx, this, "delete")?.delete(arg(args, 0))))
}

fn map_clear(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    this_map(ctx, this, "clear")?.clear();
    Ok(Value::UNDEFINED)
}

// Iterators over the live entries (kind 0 keys, 1 values, 2 pairs), in
// insertion order, as in JS.
fn map_keys(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    drop(this_map(ctx, this, "keys")?);
    Ok(crate::builtins::array::new_iter(ctx, IterState::Map { map: this, pos: MapPos::Start, kind: 0 }))
}

fn map_values(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    drop(this_map(ctx, this, "values")?);
    Ok(crate::builtins::array::new_iter(ctx, IterState::Map { map: this, pos: MapPos::Start, kind: 1 }))
}

fn map_entries(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    drop(this_map(ctx, this, "entries")?);
    Ok(crate::builtins::array::new_iter(ctx, IterState::Map { map: this, pos: MapPos::Start, kind: 2 }))
}

// ---------------------------------------------------------------------------
// Set
// ---------------------------------------------------------------------------

fn set_add(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    // A value already there keeps its place (its unused value is
    // rewritten with the same undefined).
    this_set(ctx, this, "add")?.set(arg(args, 0), Value::UNDEFINED);
    Ok(this)
}

fn set_has(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    Ok(Value::bool(this_set(ctx, this, "has")?.has(arg(args, 0))))
}

fn set_delete(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    Ok(Value::bool(this_set(ctx, this, "delete")?.delete(arg(args, 0))))
}

fn set_clear(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    this_set(ctx, this, "clear")?.clear();
    Ok(Value::UNDEFINED)
}

fn set_values(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    drop(this_set(ctx, this, "values")?);
    Ok(crate::builtins::array::new_iter(ctx, IterState::Map { map: this, pos: MapPos::Start, kind: 0 }))
}

/// `[v, v]` pairs.
fn set_entries(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    drop(this_set(ctx, this, "entries")?);
    Ok(crate::builtins::array::new_iter(ctx, IterState::Map { map: this, pos: MapPos::Start, kind: 2 }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::testing::{n, show, T};
    use crate::vm::object::NativeFn;

    /// The Map and Set constructors, on top of the shared fixture.
    trait Construct {
        fn map(&mut self, args: &[Value]) -> Result<Value, String>;
        fn set(&mut self, args: &[Value]) -> Result<Value, String>;
    }

    impl Construct for T {
        fn map(&mut self, args: &[Value]) -> Result<Value, String> {
            construct_map(&mut self.ctx(), args).map_err(ops::to_display)
        }
        fn set(&mut self, args: &[Value]) -> Result<Value, String> {
            construct_set(&mut self.ctx(), args).map_err(ops::to_display)
        }
    }

    #[test]
    fn map_basics() {
        let mut t = T::new();
        let m = t.map(&[]).unwrap();
        let (a, a2, b) = (t.s("a"), t.s("a"), t.s("b"));
        assert_eq!(t.call(map_set, m, &[a, n(1.0)]), "Map(1) {'a' => 1}");
        t.call(map_set, m, &[n(-0.0), b]);
        t.call(map_set, m, &[n(f64::NAN), n(3.0)]);
        t.call(map_set, m, &[a2, n(4.0)]);
        assert_eq!(show(m), "Map(3) {'a' => 4, 0 => 'b', NaN => 3}");
        assert_eq!(t.call(map_get, m, &[n(0.0)]), "'b'");
        assert_eq!(t.call(map_get, m, &[n(f64::NAN)]), "3");
        assert_eq!(t.call(map_get, m, &[b]), "undefined");
        assert_eq!(t.call(map_has, m, &[a2]), "true");
        assert_eq!(t.call(map_has, m, &[]), "false");
        assert_eq!(t.drain(map_keys, m, &[]), "['a',0,NaN]");
        assert_eq!(t.drain(map_values, m, &[]), "[4,'b',3]");
        assert_eq!(t.drain(map_entries, m, &[]), "[['a',4],[0,'b'],[NaN,3]]");
        assert_eq!(t.call(map_delete, m, &[a]), "true");
        assert_eq!(t.call(map_delete, m, &[a]), "false");
        t.call(map_set, m, &[a, n(5.0)]);
        assert_eq!(t.drain(map_keys, m, &[]), "[0,NaN,'a']");
        assert_eq!(t.call(map_clear, m, &[]), "undefined");
        assert_eq!(show(m), "Map(0) {}");
        let o1 = t.ctx().object(&[]);
        let o2 = t.ctx().object(&[]);
        t.call(map_set, m, &[o1, n(1.0)]);
        assert_eq!(t.call(map_has, m, &[o2]), "false");
        assert_eq!(t.call(map_has, m, &[o1]), "true");
        let s = t.set(&[]).unwrap();
        assert!(t.call(map_get, s, &[]).starts_with("TypeError"));
    }

    #[test]
    fn map_construction() {
        let mut t = T::new();
        let (a, b) = (t.s("a"), t.s("b"));
        let e1 = t.ctx().array(vec![a, n(1.0)]);
        let e2 = t.ctx().array(vec![b, n(2.0)]);
        let e3 = t.ctx().array(vec![a, n(3.0)]);
        let list = t.ctx().array(vec![e1, e2, e3]);
        let m = t.map(&[list]).unwrap();
        assert_eq!(show(m), "Map(2) {'a' => 3, 'b' => 2}");
        let copy = t.map(&[m]).unwrap();
        assert_eq!(show(copy), "Map(2) {'a' => 3, 'b' => 2}");
        assert_eq!(show(t.map(&[Value::NULL]).unwrap()), "Map(0) {}");
        let bad = t.ctx().array(vec![n(1.0)]);
        assert_eq!(t.map(&[bad]).unwrap_err(), "TypeError: Iterator value 1 is not an entry object");
        assert_eq!(
            t.map(&[n(1.0)]).unwrap_err(),
            "TypeError: number 1 is not iterable (cannot read property Symbol(Symbol.iterator))"
        );
    }

    #[test]
    fn set_basics_and_construction() {
        let mut t = T::new();
        let (a, a2) = (t.s("a"), t.s("a"));
        let list = t.ctx().array(vec![n(1.0), a, n(1.0), a2, n(-0.0), n(0.0)]);
        let s = t.set(&[list]).unwrap();
        assert_eq!(show(s), "Set(3) {1, 'a', 0}");
        assert_eq!(t.call(set_add, s, &[n(2.0)]), "Set(4) {1, 'a', 0, 2}");
        t.call(set_add, s, &[n(1.0)]);
        assert_eq!(t.drain(set_values, s, &[]), "[1,'a',0,2]");
        assert_eq!(t.drain(set_values, s, &[]), t.drain(set_keys_alias(), s, &[]));
        assert_eq!(t.drain(set_entries, s, &[]), "[[1,1],['a','a'],[0,0],[2,2]]");
        assert_eq!(t.call(set_has, s, &[a2]), "true");
        assert_eq!(t.call(set_delete, s, &[a2]), "true");
        assert_eq!(t.call(set_has, s, &[a]), "false");
        assert_eq!(t.call(set_clear, s, &[]), "undefined");
        assert_eq!(show(s), "Set(0) {}");
        let str = t.s("héé😀");
        assert_eq!(show(t.set(&[str]).unwrap()), "Set(3) {'h', 'é', '😀'}");
        let copy_src = t.set(&[list]).unwrap();
        assert_eq!(show(t.set(&[copy_src]).unwrap()), "Set(3) {1, 'a', 0}");
        assert_eq!(show(t.set(&[]).unwrap()), "Set(0) {}");
        let o = t.ctx().object(&[("length", n(1.0))]);
        assert!(t.set(&[o]).unwrap_err().starts_with("TypeError"));
        assert!(t.set(&[n(5.0)]).unwrap_err().starts_with("TypeError"));
        let m = t.map(&[]).unwrap();
        assert!(t.call(set_add, m, &[]).starts_with("TypeError"));
    }

    fn set_keys_alias() -> NativeFn {
        set_values
    }

    #[test]
    fn calling_without_new_is_a_type_error() {
        let mut t = T::new();
        let map_class = t.rt.realm.classes.map;
        let call = ops::class_data(map_class).unwrap().call;
        let f = match call.as_obj().map(|o| &o.body) {
            Some(Body::Function(crate::vm::object::Function::Native(n))) => n.f,
            _ => panic!("no call native"),
        };
        assert_eq!(t.call(f, map_class, &[]), "TypeError: Constructor Map requires 'new'");
    }
}
