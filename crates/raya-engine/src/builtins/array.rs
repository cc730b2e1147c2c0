//! Built-ins: array methods (`realm.methods.array`), the `Array` statics
//! (`isArray from of`), `Array(n)` and `new Array(...)`.
//!
//! Methods that take callbacks (`map filter forEach reduce reduceRight find
//! findIndex some every flatMap sort`) are written in Raya
//! (`stdlib/prelude.raya`); `__sortDefault` is the native fast path the
//! prelude's `sort` uses when no comparator is given. `toSorted` is the
//! prelude's too; the other copying methods (`toReversed toSpliced with`)
//! are native.
//!
//! Iterators are not modelled: `keys values entries` return arrays.
//!
//! Mutation rule (see `vm/object.rs`): a borrow of an array's vector is
//! never held while another array that may be the same object is borrowed;
//! natives copy out first (`a.concat(a)`, `a.push(...a)`).

use std::cmp::Ordering;

use super::numconv;
use super::string::{cmp_utf16, int_arg, relative};
use crate::vm::native::{arg, NativeCtx};
use crate::vm::object::{Body, IterState, MutRef};
use crate::vm::ops::{self, MAX_ARRAY_LEN};
use crate::vm::realm::{Builder, Realm};
use crate::vm::strbuf::{self, StrBuf};
use crate::vm::value::Value;

/// Largest array `new Array(n)` and `length` writes may create at once
/// (the same bound `ops::set_array_length` applies).
const MAX_DENSE_ALLOC: usize = 1 << 28;

pub fn install(b: &mut Builder, realm: &mut Realm) {
    let t = &mut realm.methods.array;
    b.method(t, "push", push);
    b.method(t, "pop", pop);
    b.method(t, "shift", shift);
    b.method(t, "unshift", unshift);
    b.method(t, "slice", slice);
    b.method(t, "splice", splice);
    b.method(t, "concat", concat);
    b.method(t, "join", join);
    b.method(t, "reverse", reverse);
    b.method(t, "indexOf", index_of);
    b.method(t, "lastIndexOf", last_index_of);
    b.method(t, "includes", includes);
    b.method(t, "fill", fill);
    b.method(t, "keys", keys);
    b.method(t, "values", values);
    b.method(t, "entries", entries);
    b.method(t, "at", at);
    b.method(t, "flat", flat);
    b.method(t, "toReversed", to_reversed);
    b.method(t, "toSpliced", to_spliced);
    b.method(t, "with", with);
    b.method(t, "copyWithin", copy_within);
    b.method(t, "toString", to_string);
    b.method(t, "__sortDefault", sort_default);
    b.method(t, "hasOwnProperty", super::object::has_own_property);
    let class = realm.classes.array;
    b.static_native(class, "isArray", is_array);
    b.static_native(class, "__fromNative", from);
    b.static_native(class, "__withCapacityOf", with_capacity_of);
    b.static_native(class, "of", of);
    let call = b.native("Array", array_call);
    Builder::class_data(class).call = call;
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn this_array(ctx: &mut NativeCtx, this: Value, method: &str) -> Result<MutRef<'static, Vec<Value>>, Value> {
    match ops::array_data(this) {
        Some(a) => Ok(a),
        None => Err(ctx.type_error(format!("Array.prototype.{method} called on a non-array ({})", ops::type_of(this)))),
    }
}

/// `this_array` for methods that change the array: a frozen array is a
/// TypeError, as in JS strict mode.
fn this_array_mut(ctx: &mut NativeCtx, this: Value, method: &str) -> Result<MutRef<'static, Vec<Value>>, Value> {
    if this.as_obj().is_some_and(|o| o.is_frozen_array()) {
        return Err(ctx.type_error(format!("Cannot modify a frozen array (Array.prototype.{method})")));
    }
    this_array(ctx, this, method)
}

fn too_long(ctx: &mut NativeCtx) -> Value {
    ctx.range_error("Invalid array length")
}

/// Storage for a new array of `n` elements: past the length limit an
/// "Invalid array length" RangeError, past the heap limit the heap-limit
/// one, both before anything is allocated (`ops::array_with_capacity`).
fn new_storage(ctx: &mut NativeCtx, n: usize) -> Result<Vec<Value>, Value> {
    ops::array_with_capacity(n).map_err(|f| ctx.fault(f))
}

/// A copy of `a[range]` in storage checked by [`new_storage`].
fn copy_of(ctx: &mut NativeCtx, this: Value, what: &str, range: std::ops::Range<usize>) -> Result<Vec<Value>, Value> {
    let mut out = new_storage(ctx, range.len())?;
    out.extend_from_slice(&this_array(ctx, this, what)?[range]);
    Ok(out)
}

/// The values an iterable (or array-like) yields, for `Array.from`,
/// `new Set(x)`, `new Map(x)` and `Object.fromEntries`: arrays, strings (by
/// code point), Maps (`[key, value]` pairs), Sets, built-in iterators, and,
/// when `array_like` (only `Array.from`), objects with a numeric `length`
/// (getters read as undefined). `None` for anything else.
pub(crate) fn iterable_values(ctx: &mut NativeCtx, v: Value, array_like: bool) -> Result<Option<Vec<Value>>, Value> {
    let Some(o) = v.as_obj() else {
        return Ok(None);
    };
    Ok(Some(match &o.body {
        Body::Array(a) => a.lock().clone(),
        Body::Str(s) => {
            let mut out = Vec::with_capacity(s.s.len());
            for c in s.s.chars() {
                let mut buf = [0u8; 4];
                out.push(ctx.str(&*c.encode_utf8(&mut buf)));
            }
            out
        }
        Body::Map(m) => {
            let pairs: Vec<(Value, Value)> = m.lock().iter().collect();
            pairs.into_iter().map(|(k, v)| ctx.array(vec![k, v])).collect()
        }
        Body::Set(m) => m.lock().iter().map(|(k, _)| k).collect(),
        Body::Bytes(b) => b.with(|s| s.iter().map(|&x| Value::number(x as f64)).collect()),
        Body::Iter(it) => iter_rest(ctx, &it.lock()),
        Body::Object(_) if array_like => {
            let len = ctx.get(v, "length")?;
            if !len.is_number() {
                return Ok(None);
            }
            let n = len.as_number();
            let n = if n.is_nan() || n <= 0.0 { 0.0 } else { n.trunc().min(MAX_ARRAY_LEN as f64) };
            let n = n as usize;
            if n > MAX_DENSE_ALLOC {
                return Err(too_long(ctx));
            }
            let mut out = Vec::with_capacity(n);
            for i in 0..n {
                let key = ops::number_key(i as f64);
                let x = match ops::get_prop(&ctx.rt.realm, &mut ctx.rt.heap, v, key) {
                    Ok(ops::Got::Value(x)) => x,
                    Ok(ops::Got::Getter(_)) => Value::UNDEFINED,
                    Err(f) => return Err(ctx.fault(f)),
                };
                out.push(x);
            }
            out
        }
        _ => return Ok(None),
    }))
}

/// What is left of a built-in iterator (without advancing it).
fn iter_rest(ctx: &mut NativeCtx, it: &IterState) -> Vec<Value> {
    match *it {
        IterState::Array { arr, next } => {
            if let Some(Body::Bytes(b)) = arr.as_obj().map(|o| &o.body) {
                return b.with(|s| s.get(next..).unwrap_or(&[]).iter().map(|&x| Value::number(x as f64)).collect());
            }
            ops::array_data(arr).map(|a| a.get(next..).map(|s| s.to_vec()).unwrap_or_default()).unwrap_or_default()
        }
        IterState::Indexed { arr, next, entries } => {
            let items = ops::array_data(arr).map(|a| a.get(next..).map(|s| s.to_vec()).unwrap_or_default());
            let items = items.unwrap_or_default();
            items
                .into_iter()
                .enumerate()
                .map(|(i, v)| {
                    let k = Value::number((next + i) as f64);
                    if entries {
                        ctx.array(vec![k, v])
                    } else {
                        k
                    }
                })
                .collect()
        }
        IterState::Channel { ch, .. } => {
            // What can be received without waiting (a channel iterator
            // only blocks in a `for`-`of` loop).
            let mut out = Vec::new();
            if let Some(Body::Channel(c)) = ch.as_obj().map(|o| &o.body) {
                while let crate::sync::channel::Recv::Got(v) = c.try_recv(&mut ctx.rt.woken) {
                    if v.is_null() {
                        break;
                    }
                    out.push(v);
                }
            }
            out
        }
        // A host iterator (a listener's connections) only produces values
        // in a `for`-`of` loop, where it may wait.
        IterState::Host { .. } | IterState::Gen(_) | IterState::GenLoop { .. } | IterState::User { .. } => Vec::new(),
        IterState::Str { s, next } => {
            let mut out = Vec::new();
            let mut at = next;
            while let Some((c, n)) = ops::string_char(ctx.heap(), s, at) {
                out.push(c);
                at += n;
            }
            out
        }
        IterState::Map { map, ref pos, kind } => {
            let entries: Vec<(Value, Value)> = match map.as_obj().map(|o| &o.body) {
                Some(Body::Map(m)) | Some(Body::Set(m)) => pos.rest(&m.lock()).collect(),
                _ => Vec::new(),
            };
            let is_set = matches!(map.as_obj().map(|o| &o.body), Some(Body::Set(_)));
            entries
                .into_iter()
                .map(|(k, v)| match kind {
                    0 => k,
                    1 => {
                        if is_set {
                            k
                        } else {
                            v
                        }
                    }
                    _ => {
                        let second = if is_set { k } else { v };
                        ctx.array(vec![k, second])
                    }
                })
                .collect()
        }
    }
}

/// V8's message for iterating a value that is not iterable.
pub(crate) fn not_iterable_message(v: Value) -> String {
    let what = if v.is_undefined() {
        "undefined".to_string()
    } else if v.is_null() {
        "object null".to_string()
    } else if v.is_number() || v.is_bool() {
        format!("{} {}", ops::type_of(v), ops::to_display(v))
    } else {
        ops::type_of(v).to_string()
    };
    format!("{what} is not iterable (cannot read property Symbol(Symbol.iterator))")
}

/// Appends `String(v)` as `join` does (null and undefined give "").
fn push_join_part(out: &mut StrBuf, v: Value) -> ops::OpResult<()> {
    if v.is_nullish() {
        return Ok(());
    }
    if let Some(s) = ops::js_str(v) {
        out.push_js(s)
    } else if v.is_number() {
        let n = v.as_number();
        if n.fract() == 0.0 && n.abs() < 1e15 {
            let i = n as i64;
            out.push_str(&i.to_string())
        } else {
            out.push_str(&numconv::number_to_string(n))
        }
    } else {
        ops::write_display(v, out, 0)
    }
}

// ---------------------------------------------------------------------------
// Adding and removing
// ---------------------------------------------------------------------------

fn push(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let mut a = this_array_mut(ctx, this, "push")?;
    if let Err(f) = ops::array_reserve(&mut a, args.len()) {
        // The error is made without holding the array (lock order).
        drop(a);
        return Err(ctx.fault(f));
    }
    a.extend_from_slice(args);
    Ok(Value::number(a.len() as f64))
}

fn pop(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let mut a = this_array_mut(ctx, this, "pop")?;
    Ok(a.pop().unwrap_or(Value::UNDEFINED))
}

fn shift(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let mut a = this_array_mut(ctx, this, "shift")?;
    if a.is_empty() {
        return Ok(Value::UNDEFINED);
    }
    Ok(a.remove(0))
}

fn unshift(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let mut a = this_array_mut(ctx, this, "unshift")?;
    if let Err(f) = ops::array_reserve(&mut a, args.len()) {
        drop(a);
        return Err(ctx.fault(f));
    }
    a.splice(0..0, args.iter().copied());
    Ok(Value::number(a.len() as f64))
}

fn splice(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let len = this_array_mut(ctx, this, "splice")?.len();
    let start = int_arg(ctx, arg(args, 0), 0.0, "Array.prototype.splice")?;
    let start = relative(start, len);
    let delete = if args.is_empty() {
        0
    } else if args.len() == 1 {
        len - start
    } else {
        let d = int_arg(ctx, args[1], 0.0, "Array.prototype.splice")?;
        if d <= 0.0 {
            0
        } else {
            (d.min((len - start) as f64)) as usize
        }
    };
    let items = args.get(2..).unwrap_or(&[]);
    if len - delete + items.len() > MAX_ARRAY_LEN {
        return Err(too_long(ctx));
    }
    let mut a = this_array_mut(ctx, this, "splice")?;
    if let Err(f) = ops::array_reserve(&mut a, items.len().saturating_sub(delete)) {
        drop(a);
        return Err(ctx.fault(f));
    }
    let removed: Vec<Value> = a.splice(start..start + delete, items.iter().copied()).collect();
    Ok(ctx.array(removed))
}

// ---------------------------------------------------------------------------
// Copies
// ---------------------------------------------------------------------------

/// `a.toReversed()`: a reversed copy.
fn to_reversed(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let len = this_array(ctx, this, "toReversed")?.len();
    let mut items = copy_of(ctx, this, "toReversed", 0..len)?;
    items.reverse();
    Ok(ctx.array(items))
}

/// `a.toSpliced(start, deleteCount, ...items)`: `splice` on a copy,
/// returning the copy.
fn to_spliced(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let len = this_array(ctx, this, "toSpliced")?.len();
    let start = int_arg(ctx, arg(args, 0), 0.0, "Array.prototype.toSpliced")?;
    let start = relative(start, len);
    let skip = match args.len() {
        0 => 0,
        1 => len - start,
        _ => {
            let d = int_arg(ctx, args[1], 0.0, "Array.prototype.toSpliced")?;
            d.clamp(0.0, (len - start) as f64) as usize
        }
    };
    let items = args.get(2..).unwrap_or(&[]);
    let mut out = new_storage(ctx, len - skip + items.len())?;
    let a = this_array(ctx, this, "toSpliced")?;
    out.extend_from_slice(&a[..start]);
    out.extend_from_slice(items);
    out.extend_from_slice(&a[start + skip..]);
    Ok(ctx.array(out))
}

/// `a.with(index, value)`: a copy with one element replaced; an index
/// outside the array (after counting a negative one from the end) is a
/// RangeError.
fn with(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let len = this_array(ctx, this, "with")?.len();
    let i = int_arg(ctx, arg(args, 0), 0.0, "Array.prototype.with")?;
    let k = if i < 0.0 { len as f64 + i } else { i };
    if k < 0.0 || k >= len as f64 {
        return Err(ctx.range_error(format!("Invalid index : {}", numconv::number_to_string(i))));
    }
    let mut items = copy_of(ctx, this, "with", 0..len)?;
    items[k as usize] = arg(args, 1);
    Ok(ctx.array(items))
}

/// `a.copyWithin(target, start, end?)`: copies `start..end` over the
/// elements from `target` on, in place; the length never changes.
fn copy_within(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let len = this_array_mut(ctx, this, "copyWithin")?.len();
    let target = int_arg(ctx, arg(args, 0), 0.0, "Array.prototype.copyWithin")?;
    let start = int_arg(ctx, arg(args, 1), 0.0, "Array.prototype.copyWithin")?;
    let end = int_arg(ctx, arg(args, 2), len as f64, "Array.prototype.copyWithin")?;
    let (to, from, end) = (relative(target, len), relative(start, len), relative(end, len));
    let count = end.saturating_sub(from).min(len - to);
    if count > 0 {
        this_array_mut(ctx, this, "copyWithin")?.copy_within(from..from + count, to);
    }
    Ok(this)
}

fn slice(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let len = this_array(ctx, this, "slice")?.len();
    let s = int_arg(ctx, arg(args, 0), 0.0, "Array.prototype.slice")?;
    let e = int_arg(ctx, arg(args, 1), len as f64, "Array.prototype.slice")?;
    let (s, e) = (relative(s, len), relative(e, len));
    let items = copy_of(ctx, this, "slice", s..e.max(s))?;
    Ok(ctx.array(items))
}

fn concat(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    // The whole result is sized first, so the length and heap limits are
    // checked before anything is copied (`out` is not yet on the heap: it
    // is counted when it is allocated).
    let mut total = this_array(ctx, this, "concat")?.len();
    for &x in args {
        total = total.saturating_add(ops::array_data(x).map_or(1, |b| b.len()));
    }
    let mut out = new_storage(ctx, total)?;
    out.extend_from_slice(&this_array(ctx, this, "concat")?);
    for &x in args {
        // Within the reservation, unless an array grew meanwhile (another
        // task): then the growth is checked and counted like any other.
        let grown = match ops::array_data(x) {
            Some(b) => ops::array_reserve(&mut out, b.len()).map(|()| out.extend_from_slice(&b)),
            None => ops::array_reserve(&mut out, 1).map(|()| out.push(x)),
        };
        if let Err(f) = grown {
            return Err(ctx.fault(f));
        }
    }
    Ok(ctx.array(out))
}

fn join(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    // Copied out: nested arrays are joined without holding this one.
    let a = this_array(ctx, this, "join")?.clone();
    let sep = arg(args, 0);
    let sep = if sep.is_undefined() { std::borrow::Cow::Borrowed(",") } else { super::string::str_arg(sep) };
    if a.is_empty() {
        return Ok(ctx.str(""));
    }
    if a.len() == 1 && ops::as_str(a[0]).is_some() {
        return Ok(a[0]);
    }
    let mut cap = sep.len().saturating_mul(a.len() - 1);
    // The string elements' lengths are known: a result that is surely too
    // long fails before anything is built.
    let mut known = strbuf::utf16_len(&sep).saturating_mul(a.len() - 1);
    for &v in a.iter() {
        let s = v.as_obj().and_then(|o| o.as_str());
        cap = cap.saturating_add(s.map_or(8, |s| s.s.len()));
        known = known.saturating_add(s.map_or(0, |s| s.utf16_len as usize));
    }
    if known > strbuf::MAX_STRING_LEN {
        return Err(ctx.range_error(strbuf::INVALID_STRING_LENGTH));
    }
    let mut visiting = vec![this];
    let r = StrBuf::with_capacity(cap).map_err(JoinError::from).and_then(|mut out| {
        join_into(&mut out, this, &sep, &mut visiting)?;
        Ok(out)
    });
    match r {
        Ok(out) => Ok(ctx.rt.heap.alloc_buf(out)),
        // The length limit, or the heap limit (whose error the interpreter
        // recognises, to collect and run the join again).
        Err(JoinError::Fault(f)) => Err(ctx.fault(f)),
        Err(JoinError::TooDeep) => Err(ctx.range_error("Maximum call stack size exceeded")),
        Err(JoinError::Symbol) => Err(ctx.type_error("Cannot convert a Symbol value to a string")),
    }
}

enum JoinError {
    Fault(ops::Fault),
    TooDeep,
    /// A symbol element: JS's `join` converts with ToString, which throws.
    Symbol,
}

impl From<ops::Fault> for JoinError {
    fn from(f: ops::Fault) -> JoinError {
        JoinError::Fault(f)
    }
}

/// Deepest array nesting `join` follows.
const MAX_JOIN_NESTING: usize = 1000;

/// Joins `arr` (on top of `visiting`) into `out`. Nested arrays join with
/// "," and an array already being joined (a cycle) gives "", as in JS.
fn join_into(out: &mut StrBuf, arr: Value, sep: &str, visiting: &mut Vec<Value>) -> Result<(), JoinError> {
    // `arr` is not borrowed anywhere else: every array on `visiting` is a
    // different object (cycles are cut below).
    let items: Vec<Value> = ops::array_data(arr).map(|a| a.clone()).unwrap_or_default();
    for (i, &v) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(sep)?;
        }
        if ops::array_data(v).is_some() {
            if visiting.contains(&v) {
                continue;
            }
            if visiting.len() >= MAX_JOIN_NESTING {
                return Err(JoinError::TooDeep);
            }
            visiting.push(v);
            let r = join_into(out, v, ",", visiting);
            visiting.pop();
            r?;
        } else if ops::symbol_atom(v).is_some() {
            return Err(JoinError::Symbol);
        } else {
            push_join_part(out, v)?;
        }
    }
    Ok(())
}

fn to_string(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    join(ctx, this, &[])
}

fn reverse(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    this_array_mut(ctx, this, "reverse")?.reverse();
    Ok(this)
}

fn fill(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let len = this_array_mut(ctx, this, "fill")?.len();
    let v = arg(args, 0);
    let s = int_arg(ctx, arg(args, 1), 0.0, "Array.prototype.fill")?;
    let e = int_arg(ctx, arg(args, 2), len as f64, "Array.prototype.fill")?;
    let (s, e) = (relative(s, len), relative(e, len));
    let mut a = this_array_mut(ctx, this, "fill")?;
    if s < e {
        a[s..e].fill(v);
    }
    Ok(this)
}

// ---------------------------------------------------------------------------
// Searching
// ---------------------------------------------------------------------------

fn index_of(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let len = this_array(ctx, this, "indexOf")?.len();
    let x = arg(args, 0);
    let from = int_arg(ctx, arg(args, 1), 0.0, "Array.prototype.indexOf")?;
    let start = relative(from, len);
    let a = this_array(ctx, this, "indexOf")?;
    let r = a[start..].iter().position(|&v| ops::strict_eq(v, x)).map(|i| (i + start) as f64);
    Ok(Value::number(r.unwrap_or(-1.0)))
}

fn last_index_of(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let len = this_array(ctx, this, "lastIndexOf")?.len();
    let x = arg(args, 0);
    let from = int_arg(ctx, arg(args, 1), len as f64 - 1.0, "Array.prototype.lastIndexOf")?;
    // Last index to look at, plus one.
    let end = if from < 0.0 {
        let k = len as f64 + from;
        if k < 0.0 {
            return Ok(Value::number(-1.0));
        }
        k as usize + 1
    } else {
        (from.min(len as f64 - 1.0) + 1.0) as usize
    };
    let a = this_array(ctx, this, "lastIndexOf")?;
    let r = a[..end].iter().rposition(|&v| ops::strict_eq(v, x)).map(|i| i as f64);
    Ok(Value::number(r.unwrap_or(-1.0)))
}

fn includes(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let len = this_array(ctx, this, "includes")?.len();
    let x = arg(args, 0);
    let from = int_arg(ctx, arg(args, 1), 0.0, "Array.prototype.includes")?;
    let start = relative(from, len);
    let a = this_array(ctx, this, "includes")?;
    Ok(Value::bool(a[start..].iter().any(|&v| ops::same_value_zero(v, x))))
}

fn at(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let len = this_array(ctx, this, "at")?.len() as f64;
    let n = int_arg(ctx, arg(args, 0), 0.0, "Array.prototype.at")?;
    let k = if n < 0.0 { len + n } else { n };
    if k < 0.0 || k >= len {
        return Ok(Value::UNDEFINED);
    }
    let a = this_array(ctx, this, "at")?;
    Ok(a[k as usize])
}

// ---------------------------------------------------------------------------
// keys / values / entries / flat
// ---------------------------------------------------------------------------

// Each returns an iterator that reads the array as it goes (it sees
// elements pushed meanwhile), as in JS.
fn keys(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    this_array(ctx, this, "keys")?;
    Ok(new_iter(ctx, IterState::Indexed { arr: this, next: 0, entries: false }))
}

fn values(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    this_array(ctx, this, "values")?;
    Ok(new_iter(ctx, IterState::Array { arr: this, next: 0 }))
}

fn entries(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    this_array(ctx, this, "entries")?;
    Ok(new_iter(ctx, IterState::Indexed { arr: this, next: 0, entries: true }))
}

pub(crate) fn new_iter(ctx: &mut NativeCtx, state: IterState) -> Value {
    ctx.heap().alloc(Body::Iter(crate::vm::object::Mut::new(state)))
}

/// Deepest nesting `flat` follows before reporting a stack overflow (as
/// JS does for a cyclic array flattened with depth Infinity).
const MAX_FLAT_NESTING: usize = 10_000;

fn flat(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    this_array(ctx, this, "flat")?;
    let depth = int_arg(ctx, arg(args, 0), 1.0, "Array.prototype.flat")?;
    let mut out = Vec::new();
    // Explicit stack of (array, next index, remaining depth).
    let mut stack: Vec<(Value, usize, f64)> = vec![(this, 0, depth)];
    while let Some(top) = stack.last_mut() {
        let (arr, i, d) = *top;
        // One element at a time, the array's lock held only to read it
        // (copying the whole array for each element made `flat` quadratic).
        let Some(v) = ops::array_data(arr).and_then(|a| a.get(i).copied()) else {
            stack.pop();
            continue;
        };
        top.1 += 1;
        if d >= 1.0 && ops::array_data(v).is_some() {
            if stack.len() >= MAX_FLAT_NESTING {
                return Err(ctx.range_error("Maximum call stack size exceeded"));
            }
            stack.push((v, 0, d - 1.0));
        } else {
            // Checked growth: the length limit, then the heap limit.
            if let Err(f) = ops::array_reserve(&mut out, 1) {
                return Err(ctx.fault(f));
            }
            out.push(v);
        }
    }
    Ok(ctx.array(out))
}

// ---------------------------------------------------------------------------
// Default sort
// ---------------------------------------------------------------------------

/// `sort()` without a comparator: stable; undefined last; everything else
/// by `String(x)` in UTF-16 code unit order.
fn sort_default(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    // A copy of the items, and the array's lock released before any key
    // is made: converting an element (an inner array, an object) to its
    // text takes that element's lock, which may not be taken while this
    // array's is held (the lock order of `vm::object`).
    let items: Vec<Value> = this_array(ctx, this, "sort")?.to_vec();
    let undefs = items.iter().filter(|v| v.is_undefined()).count();
    // Sort keys: strings borrow, others are converted once.
    enum Key {
        Str(&'static str),
        Owned(String),
    }
    let mut keyed: Vec<(Key, Value)> = Vec::with_capacity(items.len() - undefs);
    let mut all_ascii = true;
    for &v in items.iter() {
        if v.is_undefined() {
            continue;
        }
        let k = match ops::as_str(v) {
            Some(s) => Key::Str(s),
            None => Key::Owned(ops::to_display(v)),
        };
        let s = match &k {
            Key::Str(s) => s,
            Key::Owned(s) => s.as_str(),
        };
        all_ascii &= s.is_ascii();
        keyed.push((k, v));
    }
    fn text(k: &Key) -> &str {
        match k {
            Key::Str(s) => s,
            Key::Owned(s) => s.as_str(),
        }
    }
    if all_ascii {
        keyed.sort_by(|x, y| text(&x.0).as_bytes().cmp(text(&y.0).as_bytes()));
    } else {
        // Two strings compare exactly (a lone surrogate by its unit).
        keyed.sort_by(|x, y| -> Ordering {
            match (ops::js_str(x.1), ops::js_str(y.1)) {
                (Some(a), Some(b)) => ops::cmp_strings(a, b),
                _ => cmp_utf16(text(&x.0), text(&y.0)),
            }
        });
    }
    let mut a = this_array(ctx, this, "sort")?;
    a.clear();
    a.extend(keyed.into_iter().map(|(_, v)| v));
    let n = a.len() + undefs;
    a.resize(n, Value::UNDEFINED);
    Ok(this)
}

// ---------------------------------------------------------------------------
// Statics and construction
// ---------------------------------------------------------------------------

fn is_array(_ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    Ok(Value::bool(ops::array_data(arg(args, 0)).is_some()))
}

/// `Array.from(iterable or array-like)`. A mapping function (second
/// argument) is not supported: natives cannot call back into Raya, so it is
/// a TypeError; use `Array.from(x).map(fn)`.
/// `Array.__fromNative(src, mapFn?)`: the copy behind `Array.from` (the
/// prelude runs `mapFn`). A `mapFn` that is neither undefined nor a
/// function is a TypeError before `src` is read, as in JS.
fn from(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let map_fn = arg(args, 1);
    if !map_fn.is_undefined() && !ops::is_callable(map_fn) {
        let msg = format!("{} is not a function", describe_non_function(ctx.realm(), map_fn));
        return Err(ctx.type_error(msg));
    }
    let src = arg(args, 0);
    if src.is_nullish() {
        return Err(ctx.type_error(not_iterable_message(src)));
    }
    let items = iterable_values(ctx, src, true)?.unwrap_or_default();
    Ok(ctx.array(items))
}

/// A value as V8 names it in a built-in's "is not a function" message:
/// arrays as `[object Array]`, other objects by their class (`#<Foo>`),
/// primitives as `String(v)` does.
pub(crate) fn describe_non_function(realm: &Realm, v: Value) -> String {
    let Some(obj) = v.as_obj() else { return ops::to_display(v) };
    match &obj.body {
        Body::Str(_) => ops::to_display(v),
        Body::Array(_) => "[object Array]".to_string(),
        _ => {
            let name = ops::class_data(ops::class_of(realm, v)).map(|c| c.name.as_str().to_string());
            format!("#<{}>", name.filter(|n| !n.is_empty()).unwrap_or_else(|| "Object".to_string()))
        }
    }
}

fn of(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    Ok(ctx.array(args.to_vec()))
}

/// `Array(...)` called without `new`: the same as `new Array(...)`.
/// `Array.__withCapacityOf(a)`: an empty array with room for as many
/// elements as the array `a` has (none when `a` is not an array). The
/// prelude's `map` fills its result by index up to `a`'s length, so the
/// storage is allocated once instead of grown by doubling (each growth a
/// copy of everything so far). Only an array's own length is trusted: an
/// array-like's `length` is any number a script chose.
fn with_capacity_of(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let n = ops::array_data(arg(args, 0)).map_or(0, |a| a.len());
    match ops::array_with_capacity(n) {
        Ok(items) => Ok(ctx.array(items)),
        Err(f) => Err(ctx.fault(f)),
    }
}

fn array_call(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    construct_array(ctx, args)
}

/// `new Array(...)`: one number argument is a length (RangeError "Invalid
/// array length" unless it is an integer in 0..2^32-1); anything else is
/// the list of elements.
pub fn construct_array(ctx: &mut NativeCtx, args: &[Value]) -> Result<Value, Value> {
    if let [n] = args {
        if n.is_number() {
            let n = n.as_number();
            if !(n >= 0.0 && n.fract() == 0.0 && n <= MAX_ARRAY_LEN as f64) {
                return Err(too_long(ctx));
            }
            if n as usize > MAX_DENSE_ALLOC {
                return Err(too_long(ctx));
            }
            let mut items = match ops::array_with_capacity(n as usize) {
                Ok(v) => v,
                Err(f) => return Err(ctx.fault(f)),
            };
            items.resize(n as usize, Value::UNDEFINED);
            return Ok(ctx.array(items));
        }
    }
    Ok(ctx.array(args.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::testing::{n, show, T};

    /// Growth by the natives counts toward the next collection (see
    /// `vm::heap`), by exactly the capacity added.
    #[test]
    fn growth_by_push_unshift_splice_is_counted() {
        let mut t = T::new();
        let a = t.nums(&[]);
        let ten = t.nums(&[1.0; 10]);
        let before = t.rt.heap.counted_bytes();
        for i in 0..5000 {
            push(&mut t.ctx(), a, &[n(i as f64)]).unwrap();
        }
        unshift(&mut t.ctx(), a, &[n(1.0); 3000]).unwrap();
        splice(&mut t.ctx(), a, &[n(0.0), n(0.0), ten]).unwrap();
        let items = vec![n(2.0); 20_000];
        splice(&mut t.ctx(), a, &[n(0.0), n(0.0)].iter().copied().chain(items).collect::<Vec<_>>()).unwrap();
        let cap = ops::array_data(a).unwrap().capacity();
        // Besides the growth: the two (empty) arrays `splice` returned.
        let removed = 2 * std::mem::size_of::<crate::vm::object::Obj>();
        assert_eq!(t.rt.heap.counted_bytes() - before, cap * 8 + removed);
    }

    /// `map`'s result starts empty with room for the source's elements, so
    /// filling it by index never grows it; an array-like source (whose
    /// `length` a script chose) gets no room.
    #[test]
    fn with_capacity_of_reserves_the_source_arrays_length() {
        let mut t = T::new();
        let src = t.nums(&[1.0; 1000]);
        let out = with_capacity_of(&mut t.ctx(), Value::UNDEFINED, &[src]).unwrap();
        let a = ops::array_data(out).unwrap();
        assert_eq!((a.len(), a.capacity()), (0, 1000));
        drop(a);
        for v in [n(1e9), Value::UNDEFINED] {
            let out = with_capacity_of(&mut t.ctx(), Value::UNDEFINED, &[v]).unwrap();
            assert_eq!(ops::array_data(out).unwrap().capacity(), 0);
        }
    }

    #[test]
    fn push_pop_shift_unshift() {
        let mut t = T::new();
        let a = t.nums(&[1.0, 2.0]);
        assert_eq!(t.call(push, a, &[n(3.0), n(4.0)]), "4");
        assert_eq!(show(a), "[1,2,3,4]");
        assert_eq!(t.call(pop, a, &[]), "4");
        assert_eq!(t.call(shift, a, &[]), "1");
        assert_eq!(t.call(unshift, a, &[n(7.0), n(8.0)]), "4");
        assert_eq!(show(a), "[7,8,2,3]");
        let e = t.nums(&[]);
        assert_eq!(t.call(pop, e, &[]), "undefined");
        assert_eq!(t.call(shift, e, &[]), "undefined");
        // a.push(a) stores the array itself.
        assert_eq!(t.call(push, e, &[e]), "1");
        assert!(ops::array_data(e).unwrap()[0] == e);
    }

    #[test]
    fn slice_and_splice() {
        let mut t = T::new();
        let a = t.nums(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(t.call(slice, a, &[n(1.0), n(3.0)]), "[2,3]");
        assert_eq!(t.call(slice, a, &[n(-2.0)]), "[4,5]");
        assert_eq!(t.call(slice, a, &[]), "[1,2,3,4,5]");
        assert_eq!(t.call(slice, a, &[n(3.0), n(1.0)]), "[]");
        assert_eq!(t.call(slice, a, &[n(f64::NAN), n(-4.0)]), "[1]");
        assert_eq!(t.call(splice, a, &[n(1.0), n(2.0), n(9.0)]), "[2,3]");
        assert_eq!(show(a), "[1,9,4,5]");
        assert_eq!(t.call(splice, a, &[n(-1.0)]), "[5]");
        assert_eq!(show(a), "[1,9,4]");
        assert_eq!(t.call(splice, a, &[]), "[]");
        assert_eq!(t.call(splice, a, &[n(1.0), n(0.0), n(7.0), n(8.0)]), "[]");
        assert_eq!(show(a), "[1,7,8,9,4]");
        assert_eq!(t.call(splice, a, &[n(3.0), n(100.0)]), "[9,4]");
        assert_eq!(t.call(splice, a, &[n(0.0), n(-1.0)]), "[]");
        assert_eq!(t.call(splice, a, &[n(10.0), Value::UNDEFINED, n(5.0)]), "[]");
        assert_eq!(show(a), "[1,7,8,5]");
        assert_eq!(t.call(splice, a, &[n(1.0), Value::UNDEFINED]), "[]");
    }

    #[test]
    fn concat_join_reverse() {
        let mut t = T::new();
        let a = t.nums(&[1.0, 2.0]);
        assert_eq!(t.call(concat, a, &[a, n(3.0)]), "[1,2,1,2,3]");
        assert_eq!(show(a), "[1,2]");
        let inner = t.nums(&[4.0, 5.0]);
        let nested = t.ctx().array(vec![inner]);
        assert_eq!(t.call(concat, a, &[nested]), "[1,2,[4,5]]");
        let x = t.s("x");
        let mixed = t.ctx().array(vec![n(1.0), Value::NULL, x, Value::UNDEFINED, inner, n(1.5), n(-0.0), Value::TRUE]);
        assert_eq!(t.call(join, mixed, &[]), "'1,,x,,4,5,1.5,0,true'");
        let dash = t.s("-");
        assert_eq!(t.call(join, a, &[dash]), "'1-2'");
        let empty = t.s("");
        assert_eq!(t.call(join, a, &[empty]), "'12'");
        assert_eq!(t.call(to_string, a, &[]), "'1,2'");
        let big = t.nums(&[1e21, 123456789012345680000.0, -5.0]);
        assert_eq!(t.call(join, big, &[]), "'1e+21,123456789012345680000,-5'");
        let e = t.nums(&[]);
        assert_eq!(t.call(join, e, &[]), "''");
        let cyc = t.nums(&[1.0]);
        ops::array_data(cyc).unwrap().push(cyc);
        assert_eq!(t.call(join, cyc, &[]), "'1,'");
        // c = [1, d], d = [2, c]: c.join() is "1,2," in JS.
        let c = t.nums(&[1.0]);
        let d = t.ctx().array(vec![n(2.0), c]);
        ops::array_data(c).unwrap().push(d);
        assert_eq!(t.call(join, c, &[]), "'1,2,'");
        assert_eq!(t.call(reverse, a, &[]), "[2,1]");
    }

    #[test]
    fn searching() {
        let mut t = T::new();
        let s = t.s("a");
        let s2 = t.s("a");
        let a = t.ctx().array(vec![n(1.0), n(f64::NAN), s, n(1.0), n(-0.0)]);
        assert_eq!(t.call(index_of, a, &[n(1.0)]), "0");
        assert_eq!(t.call(index_of, a, &[n(1.0), n(1.0)]), "3");
        assert_eq!(t.call(index_of, a, &[n(1.0), n(-2.0)]), "3");
        assert_eq!(t.call(index_of, a, &[n(f64::NAN)]), "-1");
        assert_eq!(t.call(index_of, a, &[s2]), "2");
        assert_eq!(t.call(index_of, a, &[n(0.0)]), "4");
        assert_eq!(t.call(index_of, a, &[n(1.0), n(100.0)]), "-1");
        assert_eq!(t.call(last_index_of, a, &[n(1.0)]), "3");
        assert_eq!(t.call(last_index_of, a, &[n(1.0), n(2.0)]), "0");
        assert_eq!(t.call(last_index_of, a, &[n(1.0), n(-3.0)]), "0");
        assert_eq!(t.call(last_index_of, a, &[n(1.0), n(-6.0)]), "-1");
        assert_eq!(t.call(last_index_of, a, &[n(1.0), n(100.0)]), "3");
        assert_eq!(t.call(includes, a, &[n(f64::NAN)]), "true");
        assert_eq!(t.call(includes, a, &[n(0.0)]), "true");
        assert_eq!(t.call(includes, a, &[n(1.0), n(4.0)]), "false");
        assert_eq!(t.call(includes, a, &[]), "false");
        assert_eq!(t.call(at, a, &[n(-1.0)]), "0");
        assert_eq!(t.call(at, a, &[n(-6.0)]), "undefined");
        assert_eq!(t.call(at, a, &[]), "1");
        let e = t.nums(&[]);
        assert_eq!(t.call(last_index_of, e, &[n(1.0)]), "-1");
    }

    #[test]
    fn fill_keys_values_entries_flat() {
        let mut t = T::new();
        let a = t.nums(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(t.call(fill, a, &[n(0.0), n(1.0), n(-1.0)]), "[1,0,0,4]");
        assert_eq!(t.call(fill, a, &[n(9.0)]), "[9,9,9,9]");
        let b = t.nums(&[5.0, 6.0]);
        assert_eq!(t.drain(keys, b, &[]), "[0,1]");
        assert_eq!(t.drain(values, b, &[]), "[5,6]");
        assert_eq!(t.drain(entries, b, &[]), "[[0,5],[1,6]]");
        let deep = t.nums(&[3.0]);
        let mid = t.ctx().array(vec![n(2.0), deep]);
        let top = t.ctx().array(vec![n(1.0), mid, n(4.0)]);
        assert_eq!(t.call(flat, top, &[]), "[1,2,[3],4]");
        assert_eq!(t.call(flat, top, &[n(f64::INFINITY)]), "[1,2,3,4]");
        assert_eq!(t.call(flat, top, &[n(0.0)]), "[1,[2,[3]],4]");
        let cyc = t.nums(&[1.0]);
        ops::array_data(cyc).unwrap().push(cyc);
        assert_eq!(t.call(flat, cyc, &[n(f64::INFINITY)]), "RangeError: Maximum call stack size exceeded");
    }

    #[test]
    fn default_sort() {
        let mut t = T::new();
        let a = t.nums(&[10.0, 9.0, 1.0, -1.0, 100.0]);
        assert_eq!(t.call(sort_default, a, &[]), "[-1,1,10,100,9]");
        let (x, y, z) = (t.s("b"), t.s("a"), t.s("B"));
        let em = t.s("😀");
        let hw = t.s("\u{FF61}");
        let m = t.ctx().array(vec![Value::UNDEFINED, x, Value::NULL, y, z, em, hw, Value::TRUE]);
        assert_eq!(t.call(sort_default, m, &[]), "['B','a','b',null,true,'😀','\u{FF61}',undefined]");
        // Stability: equal keys keep their order.
        let one = t.s("1");
        let s = t.ctx().array(vec![n(2.0), one, n(1.0)]);
        t.call(sort_default, s, &[]);
        assert!(ops::as_str(ops::array_data(s).unwrap()[0]).is_some());
        assert_eq!(show(s), "['1',1,2]");
    }

    #[test]
    fn statics_and_construction() {
        let mut t = T::new();
        let a = t.nums(&[1.0]);
        assert_eq!(t.call(is_array, Value::UNDEFINED, &[a]), "true");
        let o = t.ctx().object(&[]);
        assert_eq!(t.call(is_array, Value::UNDEFINED, &[o]), "false");
        assert_eq!(t.call(is_array, Value::UNDEFINED, &[]), "false");
        let s = t.s("a😀");
        assert_eq!(t.call(from, Value::UNDEFINED, &[s]), "['a','😀']");
        let c = t.call(from, Value::UNDEFINED, &[a]);
        assert_eq!(c, "[1]");
        let like = t.ctx().object(&[("length", n(3.0)), ("0", n(7.0))]);
        assert_eq!(t.call(from, Value::UNDEFINED, &[like]), "[7,undefined,undefined]");
        let plain = t.ctx().object(&[("x", n(1.0))]);
        assert_eq!(t.call(from, Value::UNDEFINED, &[plain]), "[]");
        assert_eq!(
            t.call(from, Value::UNDEFINED, &[Value::NULL]),
            "TypeError: object null is not iterable (cannot read property Symbol(Symbol.iterator))"
        );
        assert!(t.call(from, Value::UNDEFINED, &[a, a]).starts_with("TypeError"));
        assert_eq!(t.call(of, Value::UNDEFINED, &[n(3.0)]), "[3]");
        let mut ctx = t.ctx();
        let r = construct_array(&mut ctx, &[n(3.0)]).unwrap();
        assert_eq!(show(r), "[undefined,undefined,undefined]");
        let r = construct_array(&mut ctx, &[n(1.0), n(2.0)]).unwrap();
        assert_eq!(show(r), "[1,2]");
        let x = ctx.str("x");
        let r = construct_array(&mut ctx, &[x]).unwrap();
        assert_eq!(show(r), "['x']");
        let r = construct_array(&mut ctx, &[]).unwrap();
        assert_eq!(show(r), "[]");
        for bad in [-1.0, 1.5, f64::NAN, 4294967296.0] {
            let e = construct_array(&mut ctx, &[n(bad)]).unwrap_err();
            assert_eq!(ops::to_display(e), "RangeError: Invalid array length");
        }
        let r = array_call(&mut ctx, Value::UNDEFINED, &[n(2.0)]).unwrap();
        assert_eq!(show(r), "[undefined,undefined]");
    }

    #[test]
    fn from_maps_sets_and_iterators() {
        let mut t = T::new();
        let mut ctx = t.ctx();
        let k = ctx.str("k");
        let m = ctx.heap().alloc(Body::Map(crate::vm::object::Mut::new(Default::default())));
        if let Some(Body::Map(d)) = m.as_obj().map(|o| &o.body) {
            d.lock().set(k, n(1.0));
        }
        let st = ctx.heap().alloc(Body::Set(crate::vm::object::Mut::new(Default::default())));
        if let Some(Body::Set(d)) = st.as_obj().map(|o| &o.body) {
            d.lock().set(n(5.0), Value::UNDEFINED);
        }
        let r = from(&mut ctx, Value::UNDEFINED, &[m]).unwrap();
        assert_eq!(show(r), "[['k',1]]");
        let r = from(&mut ctx, Value::UNDEFINED, &[st]).unwrap();
        assert_eq!(show(r), "[5]");
        let arr = ctx.array(vec![n(1.0), n(2.0), n(3.0)]);
        let it = ctx.heap().alloc(Body::Iter(crate::vm::object::Mut::new(IterState::Array { arr, next: 1 })));
        let r = from(&mut ctx, Value::UNDEFINED, &[it]).unwrap();
        assert_eq!(show(r), "[2,3]");
    }
}
