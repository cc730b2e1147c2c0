//! Built-ins: bytes and text — `Uint8Array` (a byte buffer, `Body::Bytes`),
//! `TextEncoder` and `TextDecoder` (UTF-8).

use super::array::iterable_values;
use super::string::{int_arg, relative};
use crate::vm::native::{arg, NativeCtx};
use crate::vm::object::{Body, BuiltinKind, Bytes};
use crate::vm::ops;
use crate::vm::realm::{Builder, Realm};
use crate::vm::value::Value;

/// The largest `Uint8Array` a script may make (1 GiB): beyond it the
/// allocation is refused with a `RangeError`, as Node refuses one it
/// cannot make.
const MAX_BYTES: f64 = (1u64 << 30) as f64;

pub fn install(b: &mut Builder, realm: &mut Realm) {
    let class = realm.classes.uint8array;
    b.static_native(class, "from", from);
    let m = &mut realm.methods.bytes;
    b.method(m, "slice", slice);
    b.method(m, "subarray", subarray);
    b.method(m, "set", set);
    b.method(m, "indexOf", index_of);
    b.method(m, "includes", includes);
    b.method(m, "fill", fill);
    b.method(m, "join", join);
    realm.globals[super::global_slot("Uint8Array")] = class;

    let encoder = b.class("TextEncoder", Value::UNDEFINED, BuiltinKind::Ordinary, None, None);
    b.proto_native(encoder, "encode", encode);
    let utf8 = b.heap.alloc_str("utf-8");
    Builder::class_data(encoder).proto_props.set(crate::vm::atom::Atom::intern("encoding"), utf8);
    realm.globals[super::global_slot("TextEncoder")] = encoder;
    let decoder = b.class("TextDecoder", Value::UNDEFINED, BuiltinKind::Ordinary, None, None);
    b.proto_native(decoder, "decode", decode);
    Builder::class_data(decoder).proto_props.set(crate::vm::atom::Atom::intern("encoding"), utf8);
    realm.globals[super::global_slot("TextDecoder")] = decoder;
}

/// A new `Uint8Array` holding `data`.
pub fn alloc_bytes(ctx: &mut NativeCtx, data: Vec<u8>) -> Value {
    ctx.heap().alloc(Body::Bytes(Bytes::new(data)))
}

/// The `Uint8Array` behind `v`, if it is one.
pub fn as_bytes(v: Value) -> Option<&'static Bytes> {
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Bytes(b)) => Some(b),
        _ => None,
    }
}

fn this_bytes(ctx: &mut NativeCtx, this: Value, method: &str) -> Result<&'static Bytes, Value> {
    as_bytes(this).ok_or_else(|| ctx.type_error(format!("Uint8Array.prototype.{method}: this is not a Uint8Array")))
}

/// The bytes an array, iterable or `Uint8Array` holds (each element
/// converted as a store would), or None for anything else.
fn bytes_of(ctx: &mut NativeCtx, v: Value) -> Result<Option<Vec<u8>>, Value> {
    if let Some(b) = as_bytes(v) {
        return Ok(Some(b.to_vec()));
    }
    if ops::as_str(v).is_some() {
        return Ok(None);
    }
    Ok(iterable_values(ctx, v, true)?.map(|vals| vals.into_iter().map(ops::to_uint8).collect()))
}

/// `new Uint8Array(n)` (zeroed), `new Uint8Array(arrayOrIterable)`.
pub fn construct_bytes(ctx: &mut NativeCtx, args: &[Value]) -> Result<Value, Value> {
    let a = arg(args, 0);
    if a.is_undefined() {
        return Ok(alloc_bytes(ctx, Vec::new()));
    }
    if a.is_number() {
        // ToIndex: fractions truncate, NaN is 0.
        let n = if a.as_number().is_nan() { 0.0 } else { a.as_number().trunc() };
        if !(0.0..=MAX_BYTES).contains(&n) {
            return Err(ctx.range_error(format!("Invalid typed array length: {}", ops::to_display(a))));
        }
        // Checked against the heap limit and reserved fallibly: a length
        // the heap or the allocator cannot take is a RangeError, not an
        // allocation past the limit or an abort.
        let n = n as usize;
        if let Err(f) = crate::vm::heap::check_growth(n) {
            return Err(ctx.fault(f));
        }
        let mut data = Vec::new();
        if data.try_reserve_exact(n).is_err() {
            return Err(ctx.range_error(format!("Invalid typed array length: {}", ops::to_display(a))));
        }
        data.resize(n, 0);
        return Ok(alloc_bytes(ctx, data));
    }
    match bytes_of(ctx, a)? {
        Some(data) => Ok(alloc_bytes(ctx, data)),
        None => Err(ctx.type_error(format!(
            "new Uint8Array: expected a length, an array or an iterable, got {}",
            ops::type_of(a)
        ))),
    }
}

/// `Uint8Array.from(arrayOrIterable)`.
fn from(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let a = arg(args, 0);
    match bytes_of(ctx, a)? {
        Some(data) => Ok(alloc_bytes(ctx, data)),
        None => Err(ctx.type_error(format!("Uint8Array.from: {} is not iterable", ops::to_display(a)))),
    }
}

/// `start` and `end` arguments as a range of `len` (negative counts from
/// the end, as `Array.prototype.slice`).
fn range(ctx: &mut NativeCtx, args: &[Value], len: usize, method: &str) -> Result<(usize, usize), Value> {
    let s = relative(int_arg(ctx, arg(args, 0), 0.0, method)?, len);
    let e = relative(int_arg(ctx, arg(args, 1), len as f64, method)?, len);
    Ok((s, e.max(s)))
}

/// `b.slice(start?, end?)`: a copy.
fn slice(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let b = this_bytes(ctx, this, "slice")?;
    let (s, e) = range(ctx, args, b.len, "Uint8Array.prototype.slice")?;
    let data = b.with(|x| x[s..e].to_vec());
    Ok(alloc_bytes(ctx, data))
}

/// `b.subarray(start?, end?)`: a view of the same memory.
fn subarray(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let b = this_bytes(ctx, this, "subarray")?;
    let (s, e) = range(ctx, args, b.len, "Uint8Array.prototype.subarray")?;
    let view = Bytes { buf: b.buf.clone(), offset: b.offset + s, len: e - s };
    Ok(ctx.heap().alloc(Body::Bytes(view)))
}

/// `b.set(source, offset = 0)`: copies an array or `Uint8Array` in.
fn set(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let b = this_bytes(ctx, this, "set")?;
    let src = arg(args, 0);
    // Copied out first: the source may be a view of the same buffer.
    let Some(data) = bytes_of(ctx, src)? else {
        return Err(ctx.type_error(format!(
            "Uint8Array.prototype.set: the source must be an array or a Uint8Array, got {}",
            ops::type_of(src)
        )));
    };
    let offset = int_arg(ctx, arg(args, 1), 0.0, "Uint8Array.prototype.set")?;
    if offset < 0.0 || offset + data.len() as f64 > b.len as f64 {
        return Err(ctx.range_error("offset is out of bounds"));
    }
    let offset = offset as usize;
    b.with(|x| x[offset..offset + data.len()].copy_from_slice(&data));
    Ok(Value::UNDEFINED)
}

/// The byte a search looks for, or None when `v` can equal no byte.
fn search_byte(v: Value) -> Option<u8> {
    let n = if v.is_number() { v.as_number() } else { return None };
    (n.fract() == 0.0 && (0.0..256.0).contains(&n)).then_some(n as u8)
}

/// `b.indexOf(value, fromIndex?)`.
fn index_of(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let b = this_bytes(ctx, this, "indexOf")?;
    let from = relative(int_arg(ctx, arg(args, 1), 0.0, "Uint8Array.prototype.indexOf")?, b.len);
    let found = search_byte(arg(args, 0)).and_then(|x| b.with(|s| s[from..].iter().position(|&y| y == x)));
    Ok(Value::number(found.map_or(-1.0, |i| (i + from) as f64)))
}

/// `b.includes(value, fromIndex?)`.
fn includes(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let i = index_of(ctx, this, args)?;
    Ok(Value::bool(i.as_number() >= 0.0))
}

/// `b.fill(value, start?, end?)`: returns `b`.
fn fill(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let b = this_bytes(ctx, this, "fill")?;
    let x = ops::to_uint8(arg(args, 0));
    let (s, e) = range(ctx, &args[args.len().min(1)..], b.len, "Uint8Array.prototype.fill")?;
    b.with(|v| v[s..e].fill(x));
    Ok(this)
}

/// `b.join(separator = ",")`.
fn join(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let b = this_bytes(ctx, this, "join")?;
    let sep = match arg(args, 0) {
        v if v.is_undefined() => ",".to_string(),
        v => ops::to_display(v),
    };
    let text = b.with(|s| s.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(&sep));
    Ok(ctx.str(text))
}

/// `new TextEncoder().encode(text = "")`: UTF-8 bytes.
fn encode(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let v = arg(args, 0);
    let text = if v.is_undefined() { String::new() } else { ops::to_display(v) };
    Ok(alloc_bytes(ctx, text.into_bytes()))
}

/// `new TextDecoder().decode(bytes?)`: UTF-8 text; each invalid sequence
/// becomes U+FFFD (WHATWG's "maximal subpart" rule, which `from_utf8_lossy`
/// follows) and a leading byte order mark is dropped, as the default
/// decoder does.
fn decode(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let v = arg(args, 0);
    if v.is_undefined() {
        return Ok(ctx.str(""));
    }
    let Some(b) = as_bytes(v) else {
        return Err(ctx.type_error(format!("TextDecoder.decode: expected a Uint8Array, got {}", ops::type_of(v))));
    };
    let text = b.with(|s| decode_utf8(s));
    Ok(ctx.str(text))
}

/// UTF-8 to text as `TextDecoder` does (see [`decode`]).
pub fn decode_utf8(bytes: &[u8]) -> String {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    String::from_utf8_lossy(bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding_replaces_each_maximal_invalid_subpart() {
        assert_eq!(decode_utf8(b"a\xFFb"), "a\u{FFFD}b");
        // A truncated three-byte sequence is one replacement, as in WHATWG.
        assert_eq!(decode_utf8(b"\xE2\x82z"), "\u{FFFD}z");
        assert_eq!(decode_utf8(b"\xEF\xBB\xBFhi"), "hi");
        assert_eq!(decode_utf8("héllo".as_bytes()), "héllo");
    }
}
