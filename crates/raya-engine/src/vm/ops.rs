//! Language semantics shared by the interpreter and the built-ins:
//! conversions, equality, `typeof`, and property access on every kind of
//! value. Nothing here allocates error objects: faults are returned as
//! [`Fault`] and turned into Raya errors (with a stack trace) by the caller.

use super::atom::{names, Atom};
use super::heap::Heap;
use super::object::{Accessor, Body, BuiltinKind, Bytes, ClassData, Function, JsStr, MutRef, Obj, ObjectData, PropMap};
use super::realm::Realm;
use super::strbuf::StrBuf;
use super::value::Value;
use crate::builtins::numconv;

/// A run-time fault raised by an operation.
#[derive(Debug, Clone)]
pub enum Fault {
    Type(String),
    Range(String),
    Reference(String),
    /// A Raya value to throw as is.
    Thrown(Value),
}

pub type OpResult<T> = Result<T, Fault>;

pub fn type_error<T>(msg: impl Into<String>) -> OpResult<T> {
    Err(Fault::Type(msg.into()))
}

pub fn type_of(v: Value) -> &'static str {
    if v.is_number() {
        return "number";
    }
    match v {
        Value::UNDEFINED => "undefined",
        Value::NULL => "object",
        Value::TRUE | Value::FALSE => "boolean",
        _ => match v.as_obj().map(|o| &o.body) {
            Some(Body::Str(_)) => "string",
            Some(Body::Function(_)) | Some(Body::Class(_)) => "function",
            _ if symbol_atom(v).is_some() => "symbol",
            _ => "object",
        },
    }
}

/// The key a symbol value stands for (symbols are frozen objects holding
/// it under a key no script can name, `names::SYMBOL_KEY`).
pub fn symbol_atom(v: Value) -> Option<Atom> {
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Object(d)) => {
            let k = d.lock().props.get(names::SYMBOL_KEY)?;
            k.is_number().then(|| Atom(k.as_number() as u32))
        }
        _ => None,
    }
}

#[inline]
pub fn as_str(v: Value) -> Option<&'static str> {
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Str(s)) => Some(&s.s),
        _ => None,
    }
}

/// The string `v` is, exactly (see `JsStr`; [`as_str`] is its text with
/// lone surrogates as U+FFFD).
#[inline]
pub fn js_str(v: Value) -> Option<&'static JsStr> {
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Str(s)) => Some(s),
        _ => None,
    }
}

/// Compares two strings by UTF-16 code units, as JS does.
pub fn cmp_strings(a: &JsStr, b: &JsStr) -> std::cmp::Ordering {
    if a.is_ascii() && b.is_ascii() {
        a.s.as_bytes().cmp(b.s.as_bytes())
    } else if a.is_well_formed() && b.is_well_formed() {
        a.s.encode_utf16().cmp(b.s.encode_utf16())
    } else {
        crate::wtf8::units(a.wtf8()).cmp(crate::wtf8::units(b.wtf8()))
    }
}

#[inline]
pub fn is_array(v: Value) -> bool {
    matches!(v.as_obj().map(|o| &o.body), Some(Body::Array(_)))
}

pub fn is_string(v: Value) -> bool {
    as_str(v).is_some()
}

/// `===`
#[inline]
pub fn strict_eq(a: Value, b: Value) -> bool {
    if a.is_number() && b.is_number() {
        return a.as_number() == b.as_number();
    }
    if a == b {
        return true;
    }
    match (js_str(a), js_str(b)) {
        (Some(x), Some(y)) => x.s == y.s,
        _ => false,
    }
}

/// `==`: strict equality, plus null == undefined.
pub fn loose_eq(a: Value, b: Value) -> bool {
    strict_eq(a, b) || (a.is_nullish() && b.is_nullish())
}

/// SameValueZero (Map keys, `includes`).
pub fn same_value_zero(a: Value, b: Value) -> bool {
    if a.is_number() && b.is_number() {
        let (x, y) = (a.as_number(), b.as_number());
        return x == y || (x.is_nan() && y.is_nan());
    }
    strict_eq(a, b)
}

pub fn class_data(v: Value) -> Option<MutRef<'static, ClassData>> {
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Class(c)) => Some(c.lock()),
        _ => None,
    }
}

pub fn object_data(v: Value) -> Option<MutRef<'static, ObjectData>> {
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Object(d)) => Some(d.lock()),
        _ => None,
    }
}

pub fn array_data(v: Value) -> Option<MutRef<'static, Vec<Value>>> {
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Array(a)) => Some(a.lock()),
        _ => None,
    }
}

/// The class of any value, for `instanceof` and method lookup.
pub fn class_of(realm: &Realm, v: Value) -> Value {
    let c = &realm.classes;
    if v.is_number() {
        return c.number;
    }
    if v.is_bool() {
        return c.boolean;
    }
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Str(_)) => c.string,
        Some(Body::Array(_)) => c.array,
        Some(Body::Object(d)) => {
            let k = d.lock().class;
            if k.is_undefined() {
                c.object
            } else {
                k
            }
        }
        Some(Body::Function(_)) | Some(Body::Class(_)) => c.function,
        Some(Body::Map(_)) => c.map,
        Some(Body::Set(_)) => c.set,
        Some(Body::Task(_)) => c.task,
        Some(Body::Promise(_)) => c.promise,
        Some(Body::Channel(_)) => c.channel,
        Some(Body::Mutex(_)) => c.mutex,
        Some(Body::WaitGroup(_)) => c.wait_group,
        Some(Body::Semaphore(_)) => c.semaphore,
        Some(Body::Bytes(_)) => c.uint8array,
        Some(Body::Host(h)) => h.class,
        _ => Value::UNDEFINED,
    }
}

/// `v instanceof class`
pub fn instance_of(realm: &Realm, v: Value, class: Value) -> OpResult<bool> {
    if class_data(class).is_none() {
        return type_error("Right-hand side of 'instanceof' is not callable");
    }
    if v.is_number() || v.is_bool() || is_string(v) || v.is_nullish() {
        return Ok(false);
    }
    if class == realm.classes.object {
        return Ok(true);
    }
    let mut c = class_of(realm, v);
    while let Some(d) = class_data(c) {
        if c == class {
            return Ok(true);
        }
        c = d.parent;
    }
    Ok(false)
}

/// Converts a number to the property key it names.
pub fn number_key(n: f64) -> Atom {
    if (0.0..2147483648.0).contains(&n) && n.fract() == 0.0 {
        Atom::index(n as u32)
    } else {
        Atom::intern(numconv::format_number(n, &mut numconv::NumberText::new()))
    }
}

/// ToPropertyKey for computed member access.
pub fn to_key(v: Value) -> Atom {
    if v.is_number() {
        return number_key(v.as_number());
    }
    match js_str(v) {
        Some(s) => key_of(s),
        None => symbol_atom(v).unwrap_or_else(|| Atom::intern(&to_display(v))),
    }
}

/// The property key string `js` names. A key with a lone surrogate is
/// interned as its marked text (`crate::wtf8::key_text`), so it is a key
/// of its own; [`key_value`] turns it back into the string.
#[inline]
pub fn key_of(js: &JsStr) -> Atom {
    if let Some(k) = js.key.get() {
        return k;
    }
    let k = if js.is_ascii() { Atom::intern(&js.s) } else { Atom::intern(&crate::wtf8::key_text(js.wtf8())) };
    js.key.set(k);
    k
}

/// The character (code point) at byte `b` of string `s`, as a string, and
/// its length in bytes: what a string iterator yields (a lone surrogate is
/// one, kept).
pub fn string_char(heap: &mut Heap, s: Value, b: usize) -> Option<(Value, usize)> {
    let js = js_str(s)?;
    let c = js.s.get(b..)?.chars().next()?;
    let n = c.len_utf8();
    if c == '\u{FFFD}' && !js.is_well_formed() && crate::wtf8::surrogate_at(js.wtf8(), b).is_some() {
        return Some((heap.alloc_wtf8(js.wtf8()[b..b + n].to_vec()), n));
    }
    let mut buf = [0u8; 4];
    Some((heap.alloc_str(&*c.encode_utf8(&mut buf)), n))
}

/// The string a property key lists as (`Object.keys`, `for … in`).
pub fn key_value(heap: &mut Heap, k: Atom) -> Value {
    let t = k.as_str();
    if crate::wtf8::is_marked(t) {
        heap.alloc_wtf8(crate::wtf8::unmark(t))
    } else {
        heap.alloc_str(t)
    }
}

/// `String(v)` for any value, without calling user code. For messages and
/// property keys: past the string length limit the text is cut there.
/// Where the string becomes a script's value, use [`try_to_display`].
pub fn to_display(v: Value) -> String {
    // Engine text (messages, keys, reports): never refused by the heap
    // limit (see `heap::Unlimited`).
    let _unlimited = super::heap::Unlimited::new();
    let mut out = StrBuf::new();
    let _ = write_display(v, &mut out, 0);
    out.into_string()
}

/// `String(v)` for any value, without calling user code; a RangeError
/// past the string length limit.
pub fn try_to_display(v: Value) -> OpResult<String> {
    if let Some(s) = as_str(v) {
        return Ok(s.to_string());
    }
    let mut out = StrBuf::new();
    write_display(v, &mut out, 0)?;
    Ok(out.into_string())
}

/// Appends `String(v)` to `out`.
pub fn write_display(v: Value, out: &mut StrBuf, depth: usize) -> OpResult<()> {
    if v.is_number() {
        return out.push_str(numconv::format_number(v.as_number(), &mut numconv::NumberText::new()));
    }
    match v {
        Value::UNDEFINED => out.push_str("undefined"),
        Value::NULL => out.push_str("null"),
        Value::TRUE => out.push_str("true"),
        Value::FALSE => out.push_str("false"),
        _ => match v.as_obj().map(|o| &o.body) {
            Some(Body::Str(s)) => out.push_js(s),
            Some(Body::Array(a)) => {
                if depth > 32 {
                    return Ok(());
                }
                let items = a.lock().clone();
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',')?;
                    }
                    if !x.is_nullish() {
                        write_display(*x, out, depth + 1)?;
                    }
                }
                Ok(())
            }
            Some(Body::Object(_)) if symbol_atom(v).is_some() => out.push_str(symbol_atom(v).expect("symbol").as_str()),
            Some(Body::Object(d)) => {
                // Copied out: the message is displayed without holding
                // the error object (see the lock order in `vm::object`).
                let d = d.lock().clone();
                if let Some(name) = error_name(&d) {
                    // Error.prototype.toString: an undefined name reads as
                    // "Error", an undefined message as ""; the ": " only
                    // joins two non-empty parts.
                    let name = match d.props.get(names::NAME) {
                        Some(Value::UNDEFINED) => "Error".to_string(),
                        _ => name,
                    };
                    let mut msg = StrBuf::new();
                    if let Some(m) = d.props.get(names::MESSAGE).filter(|m| !m.is_undefined()) {
                        write_display(m, &mut msg, depth + 1)?;
                    }
                    out.push_str(&name)?;
                    if !name.is_empty() && !msg.is_empty() {
                        out.push_str(": ")?;
                    }
                    out.push_buf(&msg)?;
                    Ok(())
                } else if let Some(t) = crate::builtins::date::subclass_time_value(&d) {
                    out.push_str(&crate::builtins::date::display(t))
                } else {
                    out.push_str("[object Object]")
                }
            }
            Some(Body::Function(f)) => {
                out.push_str("function ")?;
                out.push_str(f.name())?;
                out.push_str("() { [native code] }")
            }
            Some(Body::Class(c)) => {
                let name = c.lock().name.as_str().to_string();
                out.push_str("class ")?;
                out.push_str(&name)?;
                out.push_str(" { }")
            }
            Some(Body::Host(h)) => {
                if let Some(s) = crate::builtins::regexp::display(h) {
                    out.push_str(&s)
                } else if let Some(t) = crate::builtins::date::host_time_value(h) {
                    out.push_str(&crate::builtins::date::display(t))
                } else {
                    out.push_str("[object Object]")
                }
            }
            Some(Body::Map(_)) => out.push_str("[object Map]"),
            Some(Body::Set(_)) => out.push_str("[object Set]"),
            _ => out.push_str("[object Object]"),
        },
    }
}

/// If `d` is an instance of an Error class, its `name` (own property or
/// inherited).
pub fn error_name(d: &ObjectData) -> Option<String> {
    let mut c = d.class;
    let mut is_error = false;
    let mut name = None;
    while let Some(cd) = class_data(c) {
        if name.is_none() {
            if let Some(n) = cd.proto_props.get(names::NAME) {
                name = Some(to_display(n));
            }
        }
        if cd.name.as_str() == "Error" && cd.kind == BuiltinKind::Ordinary && cd.parent.is_undefined() {
            is_error = true;
        }
        c = cd.parent;
    }
    if !is_error {
        return None;
    }
    if let Some(n) = d.props.get(names::NAME) {
        return Some(to_display(n));
    }
    name.or_else(|| Some("Error".into()))
}

/// Result of reading a property: a value, or an accessor to call.
pub enum Got {
    Value(Value),
    Getter(Value),
}

fn from_slot(v: Value) -> Got {
    if let Some(Body::Accessor(a)) = v.as_obj().map(|o| &o.body) {
        let a: Accessor = *a.lock();
        if a.get.is_undefined() {
            Got::Value(Value::UNDEFINED)
        } else {
            Got::Getter(a.get)
        }
    } else {
        Got::Value(v)
    }
}

/// Finds `key` along a class chain's prototype properties.
pub fn lookup_proto(mut class: Value, key: Atom) -> Option<Value> {
    while let Some(cd) = class_data(class) {
        if let Some(v) = cd.proto_props.get(key) {
            return Some(v);
        }
        class = cd.parent;
    }
    None
}

/// Finds a static member along a class chain.
pub fn lookup_static(mut class: Value, key: Atom) -> Option<Value> {
    while let Some(cd) = class_data(class) {
        if let Some(v) = cd.statics.get(key) {
            return Some(v);
        }
        class = cd.parent;
    }
    None
}

fn describe_for_error(v: Value) -> &'static str {
    if v.is_null() {
        "null"
    } else {
        "undefined"
    }
}

/// `v.constructor` for values that are not objects or class instances:
/// the built-in class that makes them.
fn builtin_constructor(realm: &Realm, v: Value) -> Option<Value> {
    let c = &realm.classes;
    if v.is_number() {
        return Some(c.number);
    }
    if v == Value::TRUE || v == Value::FALSE {
        return Some(c.boolean);
    }
    Some(match &v.as_obj()?.body {
        Body::Str(_) => c.string,
        Body::Array(_) => c.array,
        Body::Function(_) | Body::Class(_) => c.function,
        Body::Map(_) => c.map,
        Body::Set(_) => c.set,
        Body::Task(_) => c.task,
        Body::Promise(_) => c.promise,
        Body::Channel(_) => c.channel,
        Body::Mutex(_) => c.mutex,
        Body::WaitGroup(_) => c.wait_group,
        Body::Semaphore(_) => c.semaphore,
        _ => return None,
    })
}

/// Where private name `key` lives for `obj`: an instance's own fields,
/// then its class chain's private methods and accessors; a class's own
/// static private members. `None` if `obj` was not given it by a class
/// that declares `key`.
fn find_private(obj: Value, key: Atom) -> Option<Value> {
    match &obj.as_obj()?.body {
        Body::Object(d) => {
            let d = d.lock();
            d.props.get(key).or_else(|| lookup_proto(d.class, key))
        }
        Body::Class(c) => c.lock().statics.get(key),
        _ => None,
    }
}

/// `#x in obj`.
pub fn has_private(obj: Value, key: Atom) -> OpResult<bool> {
    if obj.as_obj().is_none_or(|o| matches!(o.body, Body::Str(_))) {
        return type_error(format!("Cannot use 'in' operator to search for '{}' in {}", key.as_str(), to_display(obj)));
    }
    Ok(find_private(obj, key).is_some())
}

fn get_private(obj: Value, key: Atom) -> OpResult<Got> {
    match find_private(obj, key) {
        Some(v) => match v.as_obj().map(|o| &o.body) {
            Some(Body::Accessor(a)) if a.lock().get.is_undefined() => {
                type_error(format!("'{}' was defined without a getter", key.as_str()))
            }
            _ => Ok(from_slot(v)),
        },
        None => type_error(format!(
            "Cannot read private member {} from an object whose class did not declare it",
            key.as_str()
        )),
    }
}

fn set_private(obj: Value, key: Atom, v: Value) -> OpResult<Put> {
    if let Some(o) = obj.as_obj() {
        match &o.body {
            Body::Object(d) => {
                let mut d = d.lock();
                if let Some(i) = d.props.find(key) {
                    if let Some(Body::Accessor(a)) = d.props.vals()[i].as_obj().map(|o| &o.body) {
                        return private_setter(*a.lock(), key);
                    }
                    d.props.vals_mut()[i] = v;
                    return Ok(Put::Done);
                }
                if let Some(p) = lookup_proto(d.class, key) {
                    return match p.as_obj().map(|o| &o.body) {
                        Some(Body::Accessor(a)) => private_setter(*a.lock(), key),
                        _ => type_error(format!("Private method '{}' is not writable", key.as_str())),
                    };
                }
            }
            Body::Class(c) => {
                let mut c = c.lock();
                if let Some(i) = c.statics.find(key) {
                    if let Some(Body::Accessor(a)) = c.statics.vals()[i].as_obj().map(|o| &o.body) {
                        return private_setter(*a.lock(), key);
                    }
                    c.statics.vals_mut()[i] = v;
                    return Ok(Put::Done);
                }
            }
            _ => {}
        }
    }
    type_error(format!("Cannot write private member {} to an object whose class did not declare it", key.as_str()))
}

fn private_setter(a: Accessor, key: Atom) -> OpResult<Put> {
    if a.set.is_undefined() {
        type_error(format!("'{}' was defined without a setter", key.as_str()))
    } else {
        Ok(Put::Setter(a.set))
    }
}

pub fn get_prop(realm: &Realm, heap: &mut Heap, obj: Value, key: Atom) -> OpResult<Got> {
    if key.is_private() {
        if obj.is_nullish() {
            return type_error(format!(
                "Cannot read properties of {} (reading '{}')",
                describe_for_error(obj),
                key.as_str()
            ));
        }
        return get_private(obj, key);
    }
    if key == names::CONSTRUCTOR {
        if let Some(c) = builtin_constructor(realm, obj) {
            return Ok(Got::Value(c));
        }
    }
    if obj.is_number() {
        return Ok(from_method(&realm.methods.number, key));
    }
    match obj {
        Value::UNDEFINED | Value::NULL => {
            return type_error(format!(
                "Cannot read properties of {} (reading '{}')",
                describe_for_error(obj),
                key.as_str()
            ))
        }
        Value::TRUE | Value::FALSE => return Ok(from_method(&realm.methods.boolean, key)),
        _ => {}
    }
    let o = obj.as_obj().expect("object value");
    Ok(match &o.body {
        Body::Object(d) => {
            let d = d.lock();
            if let Some(v) = d.props.get(key) {
                return Ok(from_slot(v));
            }
            if let Some(v) = lookup_proto(d.class, key) {
                return Ok(from_slot(v));
            }
            if key == names::CONSTRUCTOR {
                // The class that made the instance; plain objects were made
                // by Object.
                let c = if d.class.is_undefined() { realm.classes.object } else { d.class };
                return Ok(Got::Value(c));
            }
            from_method(&realm.methods.object, key)
        }
        Body::Array(a) => {
            if key == names::LENGTH {
                return Ok(Got::Value(Value::number(a.lock().len() as f64)));
            }
            if let Some(i) = key.as_index() {
                return Ok(Got::Value(a.lock().get(i as usize).copied().unwrap_or(Value::UNDEFINED)));
            }
            if let Some(v) = a.extra(key) {
                return Ok(Got::Value(v));
            }
            from_method(&realm.methods.array, key)
        }
        Body::Str(s) => {
            if key == names::LENGTH {
                return Ok(Got::Value(Value::number(s.utf16_len as f64)));
            }
            if let Some(i) = key.as_index() {
                return Ok(Got::Value(string_index(heap, obj, i as usize)));
            }
            from_method(&realm.methods.string, key)
        }
        Body::Function(f) => {
            if key == names::NAME {
                let n = f.name().to_owned();
                return Ok(Got::Value(heap.alloc_str(n)));
            }
            if key == names::LENGTH {
                return Ok(Got::Value(Value::number(f.length() as f64)));
            }
            if key == names::CONSTRUCTOR {
                return Ok(Got::Value(realm.classes.function));
            }
            from_method(&realm.methods.function, key)
        }
        Body::Class(c) => {
            if key == names::NAME {
                let n = c.lock().name.as_str();
                return Ok(Got::Value(heap.alloc_str(n)));
            }
            match lookup_static(obj, key) {
                Some(v) => from_slot(v),
                None => from_method(&realm.methods.function, key),
            }
        }
        Body::Task(t) => {
            if key == names::ID {
                return Ok(Got::Value(Value::number(t.id as f64)));
            }
            from_method(&realm.methods.task, key)
        }
        Body::Promise(_) => from_method(&realm.methods.promise, key),
        Body::Channel(ch) => match key {
            names::LENGTH => return Ok(Got::Value(Value::number(ch.len() as f64))),
            names::CAPACITY => return Ok(Got::Value(Value::number(ch.capacity as f64))),
            _ => from_method(&realm.methods.channel, key),
        },
        Body::Mutex(_) => from_method(&realm.methods.mutex, key),
        Body::WaitGroup(_) => from_method(&realm.methods.wait_group, key),
        Body::Semaphore(s) => match key {
            names::AVAILABLE => return Ok(Got::Value(Value::number(s.available() as f64))),
            _ => from_method(&realm.methods.semaphore, key),
        },
        Body::Map(m) => {
            if key == names::SIZE {
                return Ok(Got::Value(Value::number(m.lock().len() as f64)));
            }
            from_method(&realm.methods.map, key)
        }
        Body::Set(m) => {
            if key == names::SIZE {
                return Ok(Got::Value(Value::number(m.lock().len() as f64)));
            }
            from_method(&realm.methods.set, key)
        }
        Body::Bytes(b) => {
            if key == names::LENGTH {
                return Ok(Got::Value(Value::number(b.len as f64)));
            }
            if let Some(i) = key.as_index() {
                return Ok(Got::Value(bytes_get(b, i as usize)));
            }
            from_method(&realm.methods.bytes, key)
        }
        Body::Host(h) if key == names::CONSTRUCTOR => Got::Value(h.class),
        Body::Iter(_) => from_method(&realm.methods.iter, key),
        Body::Host(h) => match h.field(key).or_else(|| lookup_proto(h.class, key)) {
            Some(v) => from_slot(v),
            None => from_method(&realm.methods.object, key),
        },
        _ => Got::Value(Value::UNDEFINED),
    })
}

fn from_method(table: &PropMap, key: Atom) -> Got {
    Got::Value(table.get(key).unwrap_or(Value::UNDEFINED))
}

/// `s[i]` as a one-code-unit string (undefined out of range).
pub fn string_index(heap: &mut Heap, s: Value, i: usize) -> Value {
    let js = s.as_obj().and_then(|o| o.as_str()).expect("string");
    if i >= js.utf16_len as usize {
        return Value::UNDEFINED;
    }
    if js.is_ascii() {
        let b = js.s.as_bytes()[i];
        return heap.alloc_ascii_str(std::str::from_utf8(&[b]).unwrap_or("?"));
    }
    // Half of a pair is a lone surrogate, kept.
    let unit = js.code_unit(i).unwrap_or(0xFFFD);
    heap.alloc_units(&[unit])
}

/// Outcome of a property write: done, or a setter to call.
pub enum Put {
    Done,
    Setter(Value),
}

pub fn set_prop(realm: &Realm, obj: Value, key: Atom, v: Value) -> OpResult<Put> {
    if key.is_private() && !obj.is_nullish() {
        return set_private(obj, key, v);
    }
    let o = match obj.as_obj() {
        Some(o) => o,
        None => {
            if obj.is_nullish() {
                return type_error(format!(
                    "Cannot set properties of {} (setting '{}')",
                    describe_for_error(obj),
                    key.as_str()
                ));
            }
            return type_error(format!(
                "Cannot create property '{}' on {} '{}'",
                key.as_str(),
                type_of(obj),
                to_display(obj)
            ));
        }
    };
    let _ = realm;
    match &o.body {
        Body::Object(d) => {
            let mut d = d.lock();
            if let Some(i) = d.props.find(key) {
                if let Some(Body::Accessor(a)) = d.props.vals()[i].as_obj().map(|o| &o.body) {
                    return setter_of(*a.lock(), key);
                }
                if d.frozen {
                    return frozen_error(key);
                }
                d.props.vals_mut()[i] = v;
                return Ok(Put::Done);
            }
            if let Some(p) = lookup_proto(d.class, key) {
                if let Some(Body::Accessor(a)) = p.as_obj().map(|o| &o.body) {
                    return setter_of(*a.lock(), key);
                }
            }
            if d.frozen {
                return type_error(format!("Cannot add property {}, object is not extensible", key.as_str()));
            }
            d.props.set(key, v);
            Ok(Put::Done)
        }
        Body::Array(a) => {
            if o.is_frozen_array() {
                return frozen_error(key);
            }
            if key == names::LENGTH {
                return set_array_length(&mut a.lock(), v).map(|_| Put::Done);
            }
            if let Some(i) = key.as_index() {
                return array_store(&mut a.lock(), i as usize, v).map(|_| Put::Done);
            }
            type_error(format!("Cannot create property '{}' on an array", key.as_str()))
        }
        Body::Class(c) => {
            let mut c = c.lock();
            if let Some(Body::Accessor(a)) = c.statics.get(key).and_then(|s| s.as_obj()).map(|o| &o.body) {
                return setter_of(*a.lock(), key);
            }
            c.statics.set(key, v);
            Ok(Put::Done)
        }
        Body::Bytes(b) => {
            // Typed arrays ignore writes outside their indices.
            if let Some(i) = key.as_index() {
                bytes_set(b, i as usize, v);
            }
            Ok(Put::Done)
        }
        // Host objects have no writable properties of their own; an
        // accessor of their class may have a setter (`lastIndex`).
        Body::Host(h) => match lookup_proto(h.class, key).and_then(|v| v.as_obj()).map(|o| &o.body) {
            Some(Body::Accessor(a)) => setter_of(*a.lock(), key),
            _ => type_error(format!("Cannot set property '{}' on this value", key.as_str())),
        },
        Body::Str(_) => type_error(format!(
            "Cannot assign to read only property '{}' of string '{}'",
            key.as_str(),
            to_display(obj)
        )),
        _ => type_error(format!("Cannot set property '{}' on this value", key.as_str())),
    }
}

fn frozen_error<T>(key: Atom) -> OpResult<T> {
    type_error(format!("Cannot assign to read only property '{}' of object", key.as_str()))
}

fn setter_of(a: Accessor, key: Atom) -> OpResult<Put> {
    if a.set.is_undefined() {
        type_error(format!("Cannot set property {} which has only a getter", key.as_str()))
    } else {
        Ok(Put::Setter(a.set))
    }
}

/// `bytes[i]`: the byte as a number, or undefined out of range.
fn bytes_get(b: &Bytes, i: usize) -> Value {
    b.with(|s| s.get(i).map_or(Value::UNDEFINED, |&x| Value::number(x as f64)))
}

/// `bytes[i] = v`: ToUint8 (modulo 256, as JS); ignored out of range.
pub fn bytes_set(b: &Bytes, i: usize, v: Value) {
    if i < b.len {
        let x = to_uint8(v);
        b.with(|s| s[i] = x);
    }
}

/// JS ToUint8 of a value (non-numbers convert as `Number(v)` would for
/// primitives; anything else is NaN, so 0).
pub fn to_uint8(v: Value) -> u8 {
    let n = if v.is_number() {
        v.as_number()
    } else if v == Value::TRUE {
        1.0
    } else if let Some(s) = as_str(v) {
        numconv::string_to_number(s)
    } else {
        f64::NAN
    };
    if !n.is_finite() {
        return 0;
    }
    (n.trunc().rem_euclid(256.0)) as u8
}

/// Largest valid array length (2^32 - 1).
pub const MAX_ARRAY_LEN: usize = u32::MAX as usize;

#[cold]
fn invalid_array_length() -> Fault {
    Fault::Range("Invalid array length".into())
}

/// Room for `extra` more elements in an array's storage. The growth is
/// reserved fallibly (a size the allocator refuses is a RangeError, not an
/// abort) and counted toward the next collection.
#[inline]
pub fn array_reserve(a: &mut Vec<Value>, extra: usize) -> OpResult<()> {
    if a.capacity() - a.len() >= extra {
        return Ok(());
    }
    array_grow(a, extra)
}

#[cold]
fn array_grow(a: &mut Vec<Value>, extra: usize) -> OpResult<()> {
    if a.len() + extra > MAX_ARRAY_LEN {
        return Err(invalid_array_length());
    }
    let before = a.capacity();
    // What `try_reserve` will add (it at least doubles), checked against
    // the heap limit before anything is allocated.
    let grown = (before * 2).max(a.len() + extra).max(4) - before;
    super::heap::check_growth(grown * std::mem::size_of::<Value>())?;
    a.try_reserve(extra).map_err(|_| invalid_array_length())?;
    super::heap::count_growth((a.capacity() - before) * std::mem::size_of::<Value>());
    Ok(())
}

/// A new array's storage with room for `n` elements, reserved fallibly
/// (the allocation itself is counted when the array is allocated).
pub fn array_with_capacity(n: usize) -> OpResult<Vec<Value>> {
    if n > MAX_ARRAY_LEN {
        return Err(invalid_array_length());
    }
    super::heap::check_growth(n * std::mem::size_of::<Value>())?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| invalid_array_length())?;
    Ok(v)
}

pub fn set_array_length(a: &mut Vec<Value>, v: Value) -> OpResult<()> {
    let n = if v.is_number() { v.as_number() } else { f64::NAN };
    if !(n >= 0.0 && n.fract() == 0.0 && n <= MAX_ARRAY_LEN as f64) {
        return Err(invalid_array_length());
    }
    let n = n as usize;
    if n > a.len() && n - a.len() > (1 << 28) {
        return Err(invalid_array_length());
    }
    if n > a.len() {
        array_reserve(a, n - a.len())?;
    }
    a.resize(n, Value::UNDEFINED);
    Ok(())
}

/// `a[i] = v`, filling any gap with undefined.
#[inline]
pub fn array_store(a: &mut Vec<Value>, i: usize, v: Value) -> OpResult<()> {
    if i < a.len() {
        a[i] = v;
        return Ok(());
    }
    if i >= MAX_ARRAY_LEN {
        return Err(invalid_array_length());
    }
    if i - a.len() > (1 << 28) {
        return Err(invalid_array_length());
    }
    array_reserve(a, i + 1 - a.len())?;
    a.resize(i, Value::UNDEFINED);
    a.push(v);
    Ok(())
}

/// `obj[key]` where key is any value.
#[inline]
pub fn get_index(realm: &Realm, heap: &mut Heap, obj: Value, key: Value) -> OpResult<Got> {
    if key.is_number() {
        let n = key.as_number();
        if let Some(o) = obj.as_obj() {
            match &o.body {
                Body::Array(a) => {
                    let a = a.lock();
                    let i = n as usize;
                    if i as f64 == n {
                        return Ok(Got::Value(a.get(i).copied().unwrap_or(Value::UNDEFINED)));
                    }
                }
                Body::Str(_) => {
                    let i = n as usize;
                    if i as f64 == n {
                        return Ok(Got::Value(string_index(heap, obj, i)));
                    }
                    return Ok(Got::Value(Value::UNDEFINED));
                }
                Body::Bytes(b) => {
                    let i = n as usize;
                    if i as f64 == n {
                        return Ok(Got::Value(bytes_get(b, i)));
                    }
                }
                _ => {}
            }
        }
    }
    if obj.is_nullish() {
        return type_error(format!(
            "Cannot read properties of {} (reading '{}')",
            describe_for_error(obj),
            to_display(key)
        ));
    }
    get_prop(realm, heap, obj, to_key(key))
}

#[inline]
pub fn set_index(realm: &Realm, obj: Value, key: Value, v: Value) -> OpResult<Put> {
    if key.is_number() {
        if let Some(o @ Obj { body: Body::Array(a), .. }) = obj.as_obj() {
            let n = key.as_number();
            let i = n as usize;
            if i as f64 == n {
                if o.is_frozen_array() {
                    return frozen_error(number_key(n));
                }
                return array_store(&mut a.lock(), i, v).map(|_| Put::Done);
            }
        }
        if let Some(Obj { body: Body::Bytes(b), .. }) = obj.as_obj() {
            let n = key.as_number();
            let i = n as usize;
            if i as f64 == n {
                bytes_set(b, i, v);
            }
            // Other numeric keys (negative, fractional) name no element: a
            // typed array ignores the write.
            return Ok(Put::Done);
        }
    }
    if obj.is_nullish() {
        return type_error(format!(
            "Cannot set properties of {} (setting '{}')",
            describe_for_error(obj),
            to_display(key)
        ));
    }
    set_prop(realm, obj, to_key(key), v)
}

/// `key in obj`
pub fn has_property(realm: &Realm, key: Value, obj: Value) -> OpResult<bool> {
    let o = match obj.as_obj() {
        Some(o) if !matches!(o.body, Body::Str(_)) => o,
        _ => {
            return type_error(format!(
                "Cannot use 'in' operator to search for '{}' in {}",
                to_display(key),
                to_display(obj)
            ))
        }
    };
    let k = to_key(key);
    Ok(match &o.body {
        Body::Object(d) => {
            let d = d.lock();
            d.props.find(k).is_some() || lookup_proto(d.class, k).is_some()
        }
        Body::Array(a) => {
            k == names::LENGTH
                || k.as_index().is_some_and(|i| (i as usize) < a.lock().len())
                || realm.methods.array.find(k).is_some()
        }
        Body::Class(_) => lookup_static(obj, k).is_some(),
        Body::Map(_) => realm.methods.map.find(k).is_some() || k == names::SIZE,
        Body::Set(_) => realm.methods.set.find(k).is_some() || k == names::SIZE,
        _ => false,
    })
}

/// Own enumerable string keys in JS order (`Object.keys`, `for-in`).
pub fn own_keys(obj: Value) -> Vec<Atom> {
    match obj.as_obj().map(|o| &o.body) {
        Some(Body::Object(d)) => {
            let d = d.lock();
            d.props.ordered_keys()
        }
        Some(Body::Array(a)) => (0..a.lock().len()).map(|i| number_key(i as f64)).collect(),
        Some(Body::Str(s)) => (0..s.utf16_len).map(|i| number_key(i as f64)).collect(),
        Some(Body::Class(c)) => c.lock().statics.ordered_keys(),
        _ => Vec::new(),
    }
}

/// Function display name for `[Function: name]` and stack traces.
pub fn function_name(v: Value) -> Option<String> {
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Function(f)) => Some(f.name().to_owned()),
        Some(Body::Class(c)) => Some(c.lock().name.as_str().to_owned()),
        _ => None,
    }
}

pub fn is_callable(v: Value) -> bool {
    matches!(v.as_obj().map(|o| &o.body), Some(Body::Function(_)) | Some(Body::Class(_)))
}

pub fn is_closure(v: Value) -> bool {
    matches!(v.as_obj().map(|o| &o.body), Some(Body::Function(Function::Closure(_))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_keys_are_canonical() {
        assert_eq!(number_key(0.0).as_str(), "0");
        assert_eq!(number_key(17.0).as_str(), "17");
        assert_eq!(number_key(1.5).as_str(), "1.5");
        assert_eq!(number_key(-1.0).as_str(), "-1");
        assert_eq!(number_key(4294967295.0).as_str(), "4294967295");
    }

    #[test]
    fn strict_equality_of_numbers_and_strings() {
        let mut heap = Heap::new();
        let a = heap.alloc_str("x");
        let b = heap.alloc_str("x");
        assert!(strict_eq(a, b));
        assert!(strict_eq(Value::number(0.0), Value::number(-0.0)));
        assert!(!strict_eq(Value::number(f64::NAN), Value::number(f64::NAN)));
        assert!(same_value_zero(Value::number(f64::NAN), Value::number(f64::NAN)));
        assert!(loose_eq(Value::NULL, Value::UNDEFINED));
        assert!(!loose_eq(Value::NULL, Value::number(0.0)));
    }

    #[test]
    fn array_store_fills_gaps() {
        let mut a = vec![];
        array_store(&mut a, 3, Value::TRUE).unwrap();
        assert_eq!(a.len(), 4);
        assert!(a[0].is_undefined());
        assert!(array_store(&mut a, MAX_ARRAY_LEN, Value::TRUE).is_err());
    }
}
