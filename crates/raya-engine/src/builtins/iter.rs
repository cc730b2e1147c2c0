//! Iterators and generators (`next`, `return`, `throw`,
//! `[Symbol.iterator]`), and `Symbol`.
//!
//! A generator's methods only ask: they set `Runtime::resume_gen` and the
//! interpreter puts the generator's frame on the calling task's stack
//! (built-ins never run Raya code themselves). A built-in iterator (over
//! an array, a string, a Map or a Set) answers `next()` here.
//!
//! A symbol is a frozen object holding the property key it stands for
//! under a key no script can name (`names::SYMBOL_KEY`); its own
//! `description` is the one visible property. `Symbol.iterator` is the
//! well-known `names::ITERATOR`, `Symbol.asyncIterator`
//! `names::ASYNC_ITERATOR`.

use crate::builtins::global_slot;
use crate::vm::atom::{names, Atom};
use crate::vm::native::{arg, NativeCtx};
use crate::vm::object::{Body, BuiltinKind, GenMode, GenResume, IterState, MapPos, Mut, ObjectData, PropMap};
use crate::vm::ops;
use crate::vm::realm::{Builder, Realm};
use crate::vm::value::Value;

pub fn install(b: &mut Builder, realm: &mut Realm) {
    let t = &mut realm.methods.iter;
    b.method(t, "next", iter_next);
    b.method(t, "return", iter_return);
    b.method(t, "throw", iter_throw);
    let me = b.native("[Symbol.iterator]", iter_self);
    t.set(names::ITERATOR, me);
    // Strings, arrays, Maps and Sets are iterable through the protocol too
    // (`s[Symbol.iterator]()`); the interpreter's loops take them directly.
    for t in [&mut realm.methods.string, &mut realm.methods.array, &mut realm.methods.map, &mut realm.methods.set] {
        let v = b.native("[Symbol.iterator]", iterator_of);
        t.set(names::ITERATOR, v);
    }
    b.static_native(realm.classes.array, "__isScriptIterable", is_script_iterable);
    b.static_native(realm.classes.array, "__isIterable", is_iterable);
    b.static_native(realm.classes.array, "__setClassName", set_class_name);
    let symbol = b.class("Symbol", Value::UNDEFINED, BuiltinKind::Namespace, None, Some(symbol_call));
    let it = new_symbol(b.heap, symbol, names::ITERATOR, "Symbol.iterator");
    Builder::class_data(symbol).statics.set(Atom::intern("iterator"), it);
    let ait = new_symbol(b.heap, symbol, names::ASYNC_ITERATOR, "Symbol.asyncIterator");
    Builder::class_data(symbol).statics.set(Atom::intern("asyncIterator"), ait);
    b.proto_native(symbol, "toString", symbol_to_string);
    realm.globals[global_slot("Symbol")] = symbol;
}

/// `Array.__isScriptIterable(x)` (prelude): whether iterating `x` runs
/// script code, so the prelude must do it.
fn is_script_iterable(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let rt = &mut *ctx.rt;
    Ok(Value::bool(crate::vm::interp::is_script_iterable(&rt.realm, &mut rt.heap, arg(args, 0))))
}

/// `Array.__isIterable(x)` (prelude, `for await`): whether `for-of` takes
/// `x` (a built-in iterable or an object with a `[Symbol.iterator]`
/// method).
fn is_iterable(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let v = arg(args, 0);
    let builtin = match v.as_obj().map(|o| &o.body) {
        Some(Body::Array(_) | Body::Bytes(_) | Body::Str(_) | Body::Map(_) | Body::Set(_) | Body::Channel(_)) => true,
        Some(Body::Iter(_)) => true,
        Some(Body::Host(h)) => h.desc.next.is_some(),
        _ => false,
    };
    let rt = &mut *ctx.rt;
    Ok(Value::bool(builtin || crate::vm::interp::is_script_iterable(&rt.realm, &mut rt.heap, v)))
}

/// `Array.__setClassName(C, name)` (prelude): the name under which
/// instances of the prelude's class `C` print, Node's for the built-in
/// iterator it stands for (`Object [RegExp String Iterator]`).
fn set_class_name(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let name = ops::as_str(arg(args, 1)).map(Atom::intern);
    match (ops::class_data(arg(args, 0)), name) {
        (Some(mut cd), Some(name)) => {
            cd.name = name;
            Ok(Value::UNDEFINED)
        }
        _ => Err(ctx.type_error("__setClassName expects a class and a name")),
    }
}

/// A symbol value standing for key `key`.
fn new_symbol(heap: &mut crate::vm::heap::Heap, class: Value, key: Atom, description: &str) -> Value {
    let mut props = PropMap::new();
    props.set(names::SYMBOL_KEY, Value::number(key.0 as f64));
    let d = heap.alloc_str(description);
    props.set(Atom::intern("description"), d);
    heap.alloc(Body::Object(Mut::new(ObjectData { class, props, frozen: true })))
}

/// `Symbol(description?)`: a new, unique key.
fn symbol_call(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let d = arg(args, 0);
    let desc = if d.is_undefined() { String::new() } else { ops::try_to_display(d).map_err(|f| ctx.fault(f))? };
    let key = Atom::new_symbol(&desc);
    Ok(new_symbol(ctx.heap(), this, key, &desc))
}

/// `sym.toString()`: `Symbol(description)`.
fn symbol_to_string(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    match ops::symbol_atom(this) {
        Some(k) => Ok(ctx.str(k.as_str())),
        None => Err(ctx.type_error("Symbol.prototype.toString requires that 'this' be a Symbol")),
    }
}

/// `it[Symbol.iterator]()` is the iterator itself.
fn iter_self(_ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    Ok(this)
}

/// `xs[Symbol.iterator]()` of a string, array, Map or Set: a new iterator
/// over its values (a Map's entries).
fn iterator_of(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let state = match this.as_obj().map(|o| &o.body) {
        Some(Body::Array(_)) => IterState::Array { arr: this, next: 0 },
        Some(Body::Str(_)) => IterState::Str { s: this, next: 0 },
        Some(Body::Map(_)) => IterState::Map { map: this, pos: MapPos::Start, kind: 2 },
        Some(Body::Set(_)) => IterState::Map { map: this, pos: MapPos::Start, kind: 0 },
        _ => return Err(ctx.type_error("not iterable")),
    };
    Ok(ctx.heap().alloc(Body::Iter(Mut::new(state))))
}

fn gen_request(ctx: &mut NativeCtx, this: Value, mode: GenMode, value: Value) -> bool {
    let is_gen =
        matches!(this.as_obj().map(|o| &o.body), Some(Body::Iter(st)) if matches!(&*st.lock(), IterState::Gen(_)));
    if is_gen {
        ctx.rt.resume_gen = Some(GenResume { gen: this, mode, value });
    }
    is_gen
}

/// `{ value, done }`.
fn result(ctx: &mut NativeCtx, value: Value, done: bool) -> Value {
    ctx.object(&[("value", value), ("done", Value::bool(done))])
}

fn iter_next(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    if gen_request(ctx, this, GenMode::Next, arg(args, 0)) {
        return Ok(Value::UNDEFINED);
    }
    let Some(Body::Iter(st)) = this.as_obj().map(|o| &o.body) else {
        return Err(ctx.type_error("next method called on an incompatible receiver"));
    };
    let step = step(ctx, &mut st.lock());
    match step {
        Step::Value(v) => Ok(result(ctx, v, false)),
        Step::Pair(k, v) => {
            let pair = ctx.array(vec![k, v]);
            Ok(result(ctx, pair, false))
        }
        Step::Char(s, at) => {
            let v = ops::string_char(ctx.heap(), s, at).map_or(Value::UNDEFINED, |(c, _)| c);
            Ok(result(ctx, v, false))
        }
        Step::Done => Ok(result(ctx, Value::UNDEFINED, true)),
        Step::Unsupported => Err(ctx.type_error("next method called on an incompatible receiver")),
    }
}

/// One step of a built-in iterator, computed under its lock; what needs
/// allocating is allocated after it is released.
enum Step {
    Value(Value),
    Pair(Value, Value),
    /// The character at a byte offset of a string.
    Char(Value, usize),
    Done,
    Unsupported,
}

fn step(_ctx: &mut NativeCtx, st: &mut IterState) -> Step {
    match st {
        IterState::Array { arr, next } => {
            let v = match arr.as_obj().map(|o| &o.body) {
                Some(Body::Array(a)) => a.lock().get(*next).copied(),
                Some(Body::Bytes(b)) => b.with(|s| s.get(*next).map(|&x| Value::number(x as f64))),
                _ => None,
            };
            match v {
                Some(v) => {
                    *next += 1;
                    Step::Value(v)
                }
                None => {
                    // Finished for good, as in JS: later pushes are not seen.
                    *next = usize::MAX;
                    Step::Done
                }
            }
        }
        IterState::Indexed { arr, next, entries } => {
            let v = ops::array_data(*arr).and_then(|a| a.get(*next).copied());
            match v {
                Some(v) => {
                    let k = Value::number(*next as f64);
                    *next += 1;
                    if *entries {
                        Step::Pair(k, v)
                    } else {
                        Step::Value(k)
                    }
                }
                None => {
                    *next = usize::MAX;
                    Step::Done
                }
            }
        }
        IterState::Str { s, next } => {
            match ops::as_str(*s).and_then(|t| t.get(*next..)).and_then(|r| r.chars().next()) {
                Some(c) => {
                    let at = *next;
                    *next += c.len_utf8();
                    Step::Char(*s, at)
                }
                None => Step::Done,
            }
        }
        IterState::Map { map, pos, kind } => {
            let (mut m, is_set) = match map.as_obj().map(|o| &o.body) {
                Some(Body::Map(m)) => (m.lock(), false),
                Some(Body::Set(m)) => (m.lock(), true),
                _ => return Step::Unsupported,
            };
            let Some((k, v)) = pos.next(&mut m) else { return Step::Done };
            let v = if is_set { k } else { v };
            match kind {
                0 => Step::Value(k),
                1 => Step::Value(v),
                _ => Step::Pair(k, v),
            }
        }
        _ => Step::Unsupported,
    }
}

fn iter_return(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    if gen_request(ctx, this, GenMode::Return, arg(args, 0)) {
        return Ok(Value::UNDEFINED);
    }
    Ok(result(ctx, arg(args, 0), true))
}

fn iter_throw(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    if gen_request(ctx, this, GenMode::Throw, arg(args, 0)) {
        return Ok(Value::UNDEFINED);
    }
    Err(arg(args, 0))
}
