//! Built-ins: string methods (`realm.methods.string`) and
//! `String.fromCharCode` / `String.fromCodePoint`.
//!
//! Strings are stored as UTF-8 with UTF-16 semantics: every index or length
//! argument counts UTF-16 code units, as in JS. ASCII strings (the common
//! case) take byte-indexed fast paths. A string holding a lone surrogate
//! (a slice through the middle of a pair, `String.fromCharCode(0xD800)`)
//! is WTF-8 (`crate::wtf8`); the methods that build strings keep the
//! surrogate, and `isWellFormed`/`toWellFormed` find and replace it.
//!
//! Argument conversion: string arguments are converted as `String(x)` does
//! (so `"a1".indexOf(1)` is 1, and a missing search string is
//! `"undefined"`, as in JS); numeric arguments must be numbers or
//! undefined (missing): anything else is a TypeError (no coercion).

use std::borrow::Cow;
use std::cmp::Ordering;

use super::numconv;
use crate::vm::native::{arg, NativeCtx};
use crate::vm::object::JsStr;
use crate::vm::ops;
use crate::vm::realm::{Builder, Realm};
use crate::vm::value::Value;

pub(crate) use crate::vm::strbuf::MAX_STRING_LEN;
use crate::vm::strbuf::{self, StrBuf};

pub fn install(b: &mut Builder, realm: &mut Realm) {
    let t = &mut realm.methods.string;
    b.method(t, "charAt", char_at);
    b.method(t, "charCodeAt", char_code_at);
    b.method(t, "codePointAt", code_point_at);
    b.method(t, "at", at);
    b.method(t, "indexOf", index_of);
    b.method(t, "lastIndexOf", last_index_of);
    b.method(t, "includes", includes);
    b.method(t, "startsWith", starts_with);
    b.method(t, "endsWith", ends_with);
    b.method(t, "slice", slice);
    b.method(t, "substring", substring);
    b.method(t, "substr", substr);
    b.method(t, "toUpperCase", to_upper_case);
    b.method(t, "toLowerCase", to_lower_case);
    b.method(t, "toLocaleUpperCase", to_upper_case);
    b.method(t, "toLocaleLowerCase", to_lower_case);
    b.method(t, "trim", trim);
    b.method(t, "trimStart", trim_start);
    b.method(t, "trimEnd", trim_end);
    b.method(t, "trimLeft", trim_start);
    b.method(t, "trimRight", trim_end);
    b.method(t, "padStart", pad_start);
    b.method(t, "padEnd", pad_end);
    b.method(t, "repeat", repeat);
    b.method(t, "split", split);
    // With a string replacement; the prelude's `replace`/`replaceAll`
    // handle function replacers and call these otherwise.
    b.method(t, "__replace", replace);
    b.method(t, "__replaceAll", replace_all);
    b.method(t, "concat", concat);
    b.method(t, "localeCompare", locale_compare);
    b.method(t, "isWellFormed", is_well_formed);
    b.method(t, "toWellFormed", to_well_formed);
    b.method(t, "toString", to_string);
    b.method(t, "valueOf", to_string);
    let class = realm.classes.string;
    b.static_native(class, "fromCharCode", from_char_code);
    b.static_native(class, "fromCodePoint", from_code_point);
    let uri_error = super::core::error_class(b, "URIError", realm.classes.error);
    realm.globals[super::global_slot("URIError")] = uri_error;
    for (name, f) in [
        ("encodeURIComponent", encode_uri_component as crate::vm::object::NativeFn),
        ("encodeURI", encode_uri),
        ("decodeURIComponent", decode_uri_component),
        ("decodeURI", decode_uri),
    ] {
        realm.globals[super::global_slot(name)] = b.native(name, f);
    }
}

// ---------------------------------------------------------------------------
// Shared helpers (also used by the array, object and collection built-ins)
// ---------------------------------------------------------------------------

/// ToIntegerOrInfinity of a numeric argument; undefined (a missing
/// argument) gives `default`. Other non-numbers are a TypeError.
pub(crate) fn int_arg(ctx: &mut NativeCtx, v: Value, default: f64, method: &str) -> Result<f64, Value> {
    if v.is_number() {
        let n = v.as_number();
        return Ok(if n.is_nan() { 0.0 } else { n.trunc() + 0.0 });
    }
    if v.is_undefined() {
        return Ok(default);
    }
    Err(ctx.type_error(format!("{method}: expected a number argument, got {}", ops::type_of(v))))
}

/// A relative index (`slice`, `at`-style): negative counts from `len`;
/// the result is clamped to `0..=len`.
#[inline]
pub(crate) fn relative(n: f64, len: usize) -> usize {
    if n < 0.0 {
        let r = len as f64 + n;
        if r < 0.0 {
            0
        } else {
            r as usize
        }
    } else if n > len as f64 {
        len
    } else {
        n as usize
    }
}

/// Clamps an integer (possibly infinite) to `0..=len`.
#[inline]
fn clamp(n: f64, len: usize) -> usize {
    if n <= 0.0 {
        0
    } else if n >= len as f64 {
        len
    } else {
        n as usize
    }
}

/// `String(v)` as a borrowed or owned string.
pub(crate) fn str_arg(v: Value) -> Cow<'static, str> {
    match ops::as_str(v) {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(ops::to_display(v)),
    }
}

fn js_str(v: Value) -> Option<&'static JsStr> {
    v.as_obj().and_then(|o| o.as_str())
}

fn this_str(ctx: &mut NativeCtx, this: Value, method: &str) -> Result<&'static JsStr, Value> {
    match js_str(this) {
        Some(s) => Ok(s),
        None => {
            Err(ctx.type_error(format!("String.prototype.{method} called on a non-string ({})", ops::type_of(this))))
        }
    }
}

/// Byte offset in `s` of UTF-16 position `u` (clamped to the end).
/// `Err(b)` when `u` falls inside a surrogate pair whose character starts
/// at byte `b`.
fn byte_at(js: &JsStr, u: usize) -> Result<usize, usize> {
    if js.is_ascii() {
        return Ok(u.min(js.s.len()));
    }
    let mut pos = 0usize;
    for (b, c) in js.s.char_indices() {
        if pos == u {
            return Ok(b);
        }
        let w = c.len_utf16();
        if pos + w > u {
            return Err(b);
        }
        pos += w;
    }
    Ok(js.s.len())
}

/// UTF-16 length of `s`.
#[inline]
fn len16(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().map(char::len_utf16).sum()
    }
}

fn units(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

/// The string of code units `u` (a lone surrogate kept).
fn from_units(ctx: &mut NativeCtx, u: &[u16]) -> Value {
    ctx.rt.heap.alloc_units(u)
}

/// The piece of `js` at bytes `a..b` (character boundaries of its text,
/// which are those of its WTF-8).
fn piece(ctx: &mut NativeCtx, js: &JsStr, a: usize, b: usize) -> Value {
    if js.is_well_formed() {
        ctx.rt.heap.alloc_str_copy(&js.s[a..b])
    } else {
        ctx.rt.heap.alloc_wtf8(js.wtf8()[a..b].to_vec())
    }
}

/// The substring of code units `start..end` (`start <= end <= len`).
pub(crate) fn substring16(ctx: &mut NativeCtx, this: Value, js: &JsStr, start: usize, end: usize) -> Value {
    if start >= end {
        return ctx.str("");
    }
    if start == 0 && end >= js.utf16_len as usize {
        return this;
    }
    if js.is_ascii() {
        return ctx.str(&js.s[start..end]);
    }
    match (byte_at(js, start), byte_at(js, end)) {
        (Ok(a), Ok(b)) => piece(ctx, js, a, b),
        _ => {
            // A cut through a pair: its half is a lone surrogate.
            let u = js.units();
            from_units(ctx, &u[start..end])
        }
    }
}

/// The code unit at `i` (`i < len`).
fn unit_at(js: &JsStr, i: usize) -> u16 {
    if js.is_ascii() {
        js.s.as_bytes()[i] as u16
    } else {
        js.code_unit(i).unwrap_or(0xFFFD)
    }
}

fn unit_string(ctx: &mut NativeCtx, js: &JsStr, i: usize) -> Value {
    if js.is_ascii() {
        let b = js.s.as_bytes()[i];
        let mut buf = [0u8; 4];
        return ctx.str(&*(b as char).encode_utf8(&mut buf));
    }
    let u = unit_at(js, i);
    from_units(ctx, &[u])
}

/// The RangeError of a string operation that went past the length limit
/// (or could not reserve the memory).
fn built<T>(ctx: &mut NativeCtx, r: ops::OpResult<T>) -> Result<T, Value> {
    r.map_err(|f| ctx.fault(f))
}

/// Compares two strings by UTF-16 code units (JS `<` on strings).
pub(crate) fn cmp_utf16(a: &str, b: &str) -> Ordering {
    // UTF-8 byte order equals code point order, which differs from UTF-16
    // order only between supplementary characters and U+E000..U+FFFF.
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let common = x.iter().zip(y).position(|(p, q)| p != q);
    match common {
        None => x.len().cmp(&y.len()),
        Some(i) => {
            if x[i] < 0x80 && y[i] < 0x80 {
                return x[i].cmp(&y[i]);
            }
            // Restart at the character boundary and compare in UTF-16.
            let mut s = i;
            while s > 0 && (x[s] & 0xC0) == 0x80 {
                s -= 1;
            }
            a[s..].encode_utf16().cmp(b[s..].encode_utf16())
        }
    }
}

// ---------------------------------------------------------------------------
// Character access
// ---------------------------------------------------------------------------

fn char_at(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "charAt")?;
    let i = int_arg(ctx, arg(args, 0), 0.0, "String.prototype.charAt")?;
    if i < 0.0 || i >= js.utf16_len as f64 {
        return Ok(ctx.str(""));
    }
    Ok(unit_string(ctx, js, i as usize))
}

fn char_code_at(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "charCodeAt")?;
    let i = int_arg(ctx, arg(args, 0), 0.0, "String.prototype.charCodeAt")?;
    if i < 0.0 || i >= js.utf16_len as f64 {
        return Ok(Value::number(f64::NAN));
    }
    Ok(Value::number(unit_at(js, i as usize) as f64))
}

fn code_point_at(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "codePointAt")?;
    let i = int_arg(ctx, arg(args, 0), 0.0, "String.prototype.codePointAt")?;
    if i < 0.0 || i >= js.utf16_len as f64 {
        return Ok(Value::UNDEFINED);
    }
    let i = i as usize;
    if js.is_ascii() {
        return Ok(Value::number(js.s.as_bytes()[i] as f64));
    }
    let cp = match byte_at(js, i) {
        // The code point there, a lone surrogate included.
        Ok(b) => crate::wtf8::code_points(&js.wtf8()[b..]).next().map_or(0, |(_, c)| c),
        Err(b) => {
            // Inside a pair: the low surrogate alone.
            let c = js.s[b..].chars().next().unwrap_or('\u{FFFD}');
            let mut buf = [0u16; 2];
            c.encode_utf16(&mut buf)[1] as u32
        }
    };
    Ok(Value::number(cp as f64))
}

fn at(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "at")?;
    let n = int_arg(ctx, arg(args, 0), 0.0, "String.prototype.at")?;
    let len = js.utf16_len as f64;
    let k = if n < 0.0 { len + n } else { n };
    if k < 0.0 || k >= len {
        return Ok(Value::UNDEFINED);
    }
    Ok(unit_string(ctx, js, k as usize))
}

// ---------------------------------------------------------------------------
// Searching
// ---------------------------------------------------------------------------

/// `indexOf` core: first match at or after code unit `from`.
pub(crate) fn find16(js: &JsStr, needle: &str, from: f64) -> Option<usize> {
    let len = js.utf16_len as usize;
    let start = clamp(from, len);
    if needle.is_empty() {
        return Some(start);
    }
    if js.is_ascii() {
        if !needle.is_ascii() {
            return None;
        }
        return find_bytes(&js.s[start..], needle).map(|i| i + start);
    }
    let (b, u) = match byte_at(js, start) {
        Ok(b) => (b, start),
        // Cannot match inside a pair: start after it.
        Err(b) => (b + 4, start + 1),
    };
    let rest = &js.s[b..];
    find_bytes(rest, needle).map(|i| u + len16(&rest[..i]))
}

/// `hay.find(needle)`, with a fast path for one-byte needles (the common
/// `s.indexOf("=")`).
#[inline]
fn find_bytes(hay: &str, needle: &str) -> Option<usize> {
    if let [c] = needle.as_bytes() {
        // An ASCII char: searched with memchr.
        return hay.find(*c as char);
    }
    hay.find(needle)
}

fn index_of(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "indexOf")?;
    let needle = str_arg(arg(args, 0));
    let from = int_arg(ctx, arg(args, 1), 0.0, "String.prototype.indexOf")?;
    Ok(Value::number(find16(js, &needle, from).map(|i| i as f64).unwrap_or(-1.0)))
}

fn last_index_of(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "lastIndexOf")?;
    let needle = str_arg(arg(args, 0));
    let p = arg(args, 1);
    let from = if p.is_number() && p.as_number().is_nan() {
        f64::INFINITY
    } else {
        int_arg(ctx, p, f64::INFINITY, "String.prototype.lastIndexOf")?
    };
    let start = clamp(from, js.utf16_len as usize);
    if needle.is_empty() {
        return Ok(Value::number(start as f64));
    }
    let limit = match byte_at(js, start) {
        Ok(b) | Err(b) => b,
    };
    // A match starting at or before `limit` ends at a char boundary at or
    // before `limit + needle.len()`.
    let mut end = (limit + needle.len()).min(js.s.len());
    while !js.s.is_char_boundary(end) {
        end -= 1;
    }
    let hay = &js.s[..end];
    let r = hay.rfind(&*needle).map(|i| if js.is_ascii() { i } else { len16(&js.s[..i]) });
    Ok(Value::number(r.map(|i| i as f64).unwrap_or(-1.0)))
}

fn includes(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "includes")?;
    let needle = str_arg(arg(args, 0));
    let from = int_arg(ctx, arg(args, 1), 0.0, "String.prototype.includes")?;
    Ok(Value::bool(find16(js, &needle, from).is_some()))
}

fn starts_with(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "startsWith")?;
    let needle = str_arg(arg(args, 0));
    let from = int_arg(ctx, arg(args, 1), 0.0, "String.prototype.startsWith")?;
    let start = clamp(from, js.utf16_len as usize);
    Ok(Value::bool(match byte_at(js, start) {
        Ok(b) => js.s[b..].starts_with(&*needle),
        Err(_) => needle.is_empty(),
    }))
}

fn ends_with(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "endsWith")?;
    let needle = str_arg(arg(args, 0));
    let len = js.utf16_len as usize;
    let end = int_arg(ctx, arg(args, 1), len as f64, "String.prototype.endsWith")?;
    let end = clamp(end, len);
    Ok(Value::bool(match byte_at(js, end) {
        Ok(b) => js.s[..b].ends_with(&*needle),
        Err(_) => needle.is_empty(),
    }))
}

// ---------------------------------------------------------------------------
// Substrings
// ---------------------------------------------------------------------------

fn slice(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "slice")?;
    let len = js.utf16_len as usize;
    let s = int_arg(ctx, arg(args, 0), 0.0, "String.prototype.slice")?;
    let e = int_arg(ctx, arg(args, 1), len as f64, "String.prototype.slice")?;
    let (s, e) = (relative(s, len), relative(e, len));
    Ok(substring16(ctx, this, js, s, e))
}

fn substring(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "substring")?;
    let len = js.utf16_len as usize;
    let s = int_arg(ctx, arg(args, 0), 0.0, "String.prototype.substring")?;
    let e = int_arg(ctx, arg(args, 1), len as f64, "String.prototype.substring")?;
    let (s, e) = (clamp(s, len), clamp(e, len));
    Ok(substring16(ctx, this, js, s.min(e), s.max(e)))
}

fn substr(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "substr")?;
    let len = js.utf16_len as usize;
    let s = int_arg(ctx, arg(args, 0), 0.0, "String.prototype.substr")?;
    let s = relative(s, len);
    let n = int_arg(ctx, arg(args, 1), f64::INFINITY, "String.prototype.substr")?;
    let e = clamp(s as f64 + n.max(0.0), len);
    Ok(substring16(ctx, this, js, s, e))
}

// ---------------------------------------------------------------------------
// Case and whitespace
// ---------------------------------------------------------------------------

fn to_upper_case(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "toUpperCase")?;
    if js.is_ascii() {
        if !js.s.bytes().any(|b| b.is_ascii_lowercase()) {
            return Ok(this);
        }
        return Ok(ctx.str(js.s.to_ascii_uppercase()));
    }
    if !js.is_well_formed() {
        return Ok(map_well_formed(ctx, js, str::to_uppercase));
    }
    // Some characters grow (ß → SS): the result is checked.
    let up = js.s.to_uppercase();
    built(ctx, strbuf::check_str(&up))?;
    Ok(ctx.str(up))
}

fn to_lower_case(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "toLowerCase")?;
    if js.is_ascii() {
        if !js.s.bytes().any(|b| b.is_ascii_uppercase()) {
            return Ok(this);
        }
        return Ok(ctx.str(js.s.to_ascii_lowercase()));
    }
    if !js.is_well_formed() {
        return Ok(map_well_formed(ctx, js, str::to_lowercase));
    }
    let low = js.s.to_lowercase();
    built(ctx, strbuf::check_str(&low))?;
    Ok(ctx.str(low))
}

/// `f` applied to the runs of an ill-formed string between its lone
/// surrogates, which stay as they are (case mapping).
fn map_well_formed(ctx: &mut NativeCtx, js: &JsStr, f: fn(&str) -> String) -> Value {
    let b = js.wtf8();
    let mut out = Vec::with_capacity(b.len());
    let (mut i, mut run) = (0, 0);
    while i < b.len() {
        if crate::wtf8::surrogate_at(b, i).is_some() {
            out.extend_from_slice(f(&js.s[run..i]).as_bytes());
            out.extend_from_slice(&b[i..i + 3]);
            i += 3;
            run = i;
        } else {
            i += 1;
        }
    }
    out.extend_from_slice(f(&js.s[run..]).as_bytes());
    ctx.rt.heap.alloc_wtf8(out)
}

/// `s.isWellFormed()`: no lone surrogate.
fn is_well_formed(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "isWellFormed")?;
    Ok(Value::bool(js.is_well_formed()))
}

/// `s.toWellFormed()`: each lone surrogate replaced by U+FFFD.
fn to_well_formed(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "toWellFormed")?;
    if js.is_well_formed() {
        return Ok(this);
    }
    Ok(ctx.str(&*js.s))
}

fn trimmed(ctx: &mut NativeCtx, this: Value, js: &JsStr, t: &str) -> Value {
    if t.len() == js.s.len() {
        this
    } else {
        // `t` is a piece of `js.s`: the same bytes of the WTF-8.
        let a = t.as_ptr() as usize - js.s.as_ptr() as usize;
        piece(ctx, js, a, a + t.len())
    }
}

fn trim(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "trim")?;
    Ok(trimmed(ctx, this, js, js.s.trim_matches(numconv::is_js_whitespace)))
}

fn trim_start(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "trimStart")?;
    Ok(trimmed(ctx, this, js, js.s.trim_start_matches(numconv::is_js_whitespace)))
}

fn trim_end(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "trimEnd")?;
    Ok(trimmed(ctx, this, js, js.s.trim_end_matches(numconv::is_js_whitespace)))
}

// ---------------------------------------------------------------------------
// Padding and repetition
// ---------------------------------------------------------------------------

/// The filler for `padStart`/`padEnd`: `fill` repeated and cut to `n`
/// code units.
fn make_fill(out: &mut StrBuf, fill: &JsStr, n: usize) -> ops::OpResult<()> {
    let flen = fill.utf16_len as usize;
    let whole = n / flen;
    let part = n % flen;
    out.reserve(fill.s.len() * (whole + 1))?;
    for _ in 0..whole {
        out.push_js(fill)?;
    }
    if part > 0 {
        if fill.is_ascii() {
            out.push_str(&fill.s[..part])?;
        } else {
            // A cut through a pair leaves its high half.
            let u = fill.units();
            out.push_wtf8(&crate::wtf8::from_units(&u[..part]))?;
        }
    }
    Ok(())
}

fn pad(ctx: &mut NativeCtx, this: Value, args: &[Value], at_start: bool) -> Result<Value, Value> {
    let name = if at_start { "padStart" } else { "padEnd" };
    let js = this_str(ctx, this, name)?;
    let max = int_arg(ctx, arg(args, 0), 0.0, name)?;
    let len = js.utf16_len as usize;
    if max <= len as f64 {
        return Ok(this);
    }
    let f = arg(args, 1);
    let fill = if f.is_undefined() {
        ctx.str(" ")
    } else if js_str(f).is_some() {
        f
    } else {
        let t = str_arg(f);
        ctx.str(&*t)
    };
    let fill = js_str(fill).expect("a string");
    if fill.s.is_empty() {
        return Ok(this);
    }
    if max > MAX_STRING_LEN as f64 {
        return Err(ctx.range_error(strbuf::INVALID_STRING_LENGTH));
    }
    let r = (|| {
        let mut out = StrBuf::new();
        if at_start {
            make_fill(&mut out, fill, max as usize - len)?;
            out.push_js(js)?;
        } else {
            out.push_js(js)?;
            make_fill(&mut out, fill, max as usize - len)?;
        }
        Ok(out)
    })();
    let out = built(ctx, r)?;
    Ok(ctx.rt.heap.alloc_buf(out))
}

fn pad_start(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    pad(ctx, this, args, true)
}

fn pad_end(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    pad(ctx, this, args, false)
}

fn repeat(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "repeat")?;
    let n = int_arg(ctx, arg(args, 0), 0.0, "String.prototype.repeat")?;
    if n < 0.0 || n.is_infinite() {
        let shown = numconv::number_to_string(n);
        return Err(ctx.range_error(format!("Invalid count value: {shown}")));
    }
    if n == 0.0 || js.s.is_empty() {
        return Ok(ctx.str(""));
    }
    if n == 1.0 {
        return Ok(this);
    }
    if n * js.utf16_len as f64 > MAX_STRING_LEN as f64 {
        return Err(ctx.range_error(strbuf::INVALID_STRING_LENGTH));
    }
    if !js.is_well_formed() {
        // Copies meet at seams: a low surrogate at the start and a high
        // one at the end join into a character.
        let r = (|| {
            let mut out = StrBuf::new();
            for _ in 0..n as usize {
                out.push_js(js)?;
            }
            Ok(out)
        })();
        let out = built(ctx, r)?;
        return Ok(ctx.rt.heap.alloc_buf(out));
    }
    // The length is checked; the memory is checked against the heap limit
    // (the result is `n` times the input, so it is not bounded by anything
    // already counted) and reserved fallibly, then filled by doubling.
    let total = js.s.len() * n as usize;
    built(ctx, crate::vm::heap::check_growth(total))?;
    let mut out: Vec<u8> = Vec::new();
    if out.try_reserve_exact(total).is_err() {
        return Err(ctx.range_error(strbuf::INVALID_STRING_LENGTH));
    }
    out.extend_from_slice(js.s.as_bytes());
    while out.len() < total {
        let take = (total - out.len()).min(out.len());
        out.extend_from_within(..take);
    }
    // SAFETY: `out` is whole copies of a `str` (`take` is a multiple of
    // its length, as `total` and every length reached are).
    Ok(ctx.str(unsafe { String::from_utf8_unchecked(out) }))
}

// ---------------------------------------------------------------------------
// split, replace, concat
// ---------------------------------------------------------------------------

/// Longest subject `split` scans eight bytes at a time itself rather than
/// with `memchr`: a line or a record is shorter than `memchr`'s set-up per
/// call (made once per piece) is worth.
const SHORT_SCAN: usize = 256;

/// Finding one byte value in a short string, eight bytes at a time in a
/// `u64` (no vector set-up, no call per match).
mod swar {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;

    /// The high bit of each byte of `word` that equals `c`, and no other
    /// bit (exact: no carry crosses from one byte into the next).
    #[inline(always)]
    fn hits(word: u64, c: u8) -> u64 {
        let y = word ^ u64::from_ne_bytes([c; 8]);
        !(((y & LOW7) + LOW7) | y | LOW7)
    }

    #[inline(always)]
    fn word(chunk: &[u8]) -> u64 {
        u64::from_le_bytes(chunk.try_into().expect("eight bytes"))
    }

    /// How many bytes of `bytes` are `c`.
    pub fn count(bytes: &[u8], c: u8) -> usize {
        let chunks = bytes.chunks_exact(8);
        let tail = chunks.remainder().iter().filter(|&&b| b == c).count();
        chunks.map(|ch| hits(word(ch), c).count_ones() as usize).sum::<usize>() + tail
    }

    /// Calls `f` with the index of each `c` in `bytes`, in order, while it
    /// returns true; true if it never returned false.
    #[inline(always)]
    pub fn each(bytes: &[u8], c: u8, f: &mut impl FnMut(usize) -> bool) -> bool {
        let mut chunks = bytes.chunks_exact(8);
        let mut base = 0;
        for ch in &mut chunks {
            // Little-endian: the lowest set bit is the first byte.
            let mut m = hits(word(ch), c);
            while m != 0 {
                if !f(base + (m.trailing_zeros() / 8) as usize) {
                    return false;
                }
                m &= m - 1;
            }
            base += 8;
        }
        for (k, &b) in chunks.remainder().iter().enumerate() {
            if b == c && !f(base + k) {
                return false;
            }
        }
        true
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn finds_every_byte_and_only_those() {
            // Neighbours that differ by one bit or by the high bit, runs,
            // and a tail past the last whole word.
            let s = b" a\x7f\xa0 \x80!  x\x00  \xff  y !";
            for c in [b' ', b'!', 0x7f, 0x80, 0x00, 0xff, b'z'] {
                let want: Vec<usize> = (0..s.len()).filter(|&i| s[i] == c).collect();
                let mut got = Vec::new();
                assert!(super::each(s, c, &mut |i| {
                    got.push(i);
                    true
                }));
                assert_eq!(got, want, "byte {c:#x}");
                assert_eq!(super::count(s, c), want.len());
            }
            let mut first = None;
            assert!(!super::each(s, b' ', &mut |i| {
                first = Some(i);
                false
            }));
            assert_eq!(first, Some(0));
        }
    }
}

fn split(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "split")?;
    let sep = arg(args, 0);
    let l = arg(args, 1);
    let lim = if l.is_undefined() {
        u32::MAX as usize
    } else if l.is_number() {
        numconv::to_uint32(l.as_number()) as usize
    } else {
        return Err(ctx.type_error(format!("String.prototype.split: expected a number limit, got {}", ops::type_of(l))));
    };
    if lim == 0 {
        return Ok(ctx.array(Vec::new()));
    }
    if sep.is_undefined() {
        return Ok(ctx.array(vec![this]));
    }
    if super::regexp::is_regexp(sep) {
        return super::regexp::split(ctx, this, sep, lim);
    }
    let sep = str_arg(sep);
    let mut out = Vec::new();
    if sep.is_empty() {
        let n = (js.utf16_len as usize).min(lim);
        out.reserve(n);
        if js.is_ascii() {
            for i in 0..n {
                out.push(unit_string(ctx, js, i));
            }
        } else {
            for &u in js.units().iter().take(n) {
                out.push(from_units(ctx, &[u]));
            }
        }
        return Ok(ctx.array(out));
    }
    if let [c] = sep.as_bytes() {
        let (c, bytes) = (*c, js.s.as_bytes());
        if js.is_ascii() && bytes.len() <= SHORT_SCAN {
            // A short ASCII string (a line, a record): one scan keeps the
            // separators' offsets on the stack, then the pieces are made
            // together at the array's exact size.
            // (Left uninitialised: zeroing it was a `memset` per call.)
            let mut at = [const { std::mem::MaybeUninit::<u32>::uninit() }; SHORT_SCAN];
            let mut k = 0;
            swar::each(bytes, c, &mut |i| {
                at[k].write(i as u32);
                k += 1;
                true
            });
            // SAFETY: the first `k` entries were written above.
            let found: &[u32] = unsafe { std::slice::from_raw_parts(at.as_ptr().cast(), k) };
            // With a limit, the pieces after the `lim`-th are dropped: the
            // text ends at the separator that ends that piece.
            let (seps, end) = if k < lim { (found, bytes.len()) } else { (&found[..lim - 1], found[lim - 1] as usize) };
            out.reserve_exact(seps.len() + 1);
            ctx.heap().alloc_ascii_fields(&js.s[..end], seps, &mut out);
            return Ok(ctx.array(out));
        }
        // One ASCII byte: a byte scan. Every piece of an ASCII string is
        // ASCII, so its UTF-16 length is its byte length (no second scan).
        // The separators are counted first, so that the array is made at
        // its exact size.
        let ascii = js.is_ascii();
        let long = bytes.len() > SHORT_SCAN;
        let seps = if long { memchr::memchr_iter(c, bytes).count() } else { swar::count(bytes, c) };
        let n = (seps + 1).min(lim);
        out.reserve_exact(n);
        let mut start = 0;
        // Cuts the piece ending at `end`; false once the array is full.
        let mut cut = |end: usize| {
            // `c` is ASCII, so `start..end` falls on char boundaries.
            let part = &js.s[start..end];
            out.push(if ascii { ctx.heap().alloc_ascii_str(part) } else { piece(ctx, js, start, end) });
            start = end + 1;
            out.len() < n
        };
        let more = if long { memchr::memchr_iter(c, bytes).all(&mut cut) } else { swar::each(bytes, c, &mut cut) };
        // The last piece runs to the end, unless the limit came first.
        if more {
            cut(bytes.len());
        }
    } else {
        for part in js.s.split(&*sep).take(lim) {
            let a = part.as_ptr() as usize - js.s.as_ptr() as usize;
            let v = piece(ctx, js, a, a + part.len());
            out.push(v);
        }
    }
    Ok(ctx.array(out))
}

/// Expands `$$ $& $\` $'` in a replacement for a match of `matched` at byte
/// `pos` of `subject`. (`$n` and `$<name>` stay literal: string patterns
/// have no groups.)
fn expand_replacement(out: &mut StrBuf, repl: &str, subject: &str, pos: usize, matched: &str) -> ops::OpResult<()> {
    if !repl.contains('$') {
        return out.push_str(repl);
    }
    let b = repl.as_bytes();
    let mut i = 0;
    let mut lit = 0;
    while i < b.len() {
        if b[i] == b'$' && i + 1 < b.len() {
            let piece = match b[i + 1] {
                b'$' => Some("$"),
                b'&' => Some(matched),
                b'`' => Some(&subject[..pos]),
                b'\'' => Some(&subject[(pos + matched.len()).min(subject.len())..]),
                _ => None,
            };
            if let Some(p) = piece {
                out.push_str(&repl[lit..i])?;
                out.push_str(p)?;
                i += 2;
                lit = i;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&repl[lit..])
}

fn replacement_arg(ctx: &mut NativeCtx, v: Value) -> Result<Cow<'static, str>, Value> {
    if ops::is_callable(v) {
        return Err(ctx.type_error("replacement functions are not supported"));
    }
    Ok(str_arg(v))
}

fn replace(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "replace")?;
    if super::regexp::is_regexp(arg(args, 0)) {
        return super::regexp::replace(ctx, this, arg(args, 0), arg(args, 1), false);
    }
    let pat = str_arg(arg(args, 0));
    let repl = replacement_arg(ctx, arg(args, 1))?;
    let s: &str = &js.s;
    let Some(pos) = s.find(&*pat) else {
        return Ok(this);
    };
    let w = js.wtf8();
    let r = (|| {
        let mut out = StrBuf::with_capacity(s.len() + repl.len())?;
        out.push_wtf8(&w[..pos])?;
        expand_replacement(&mut out, &repl, s, pos, &pat)?;
        out.push_wtf8(&w[pos + pat.len()..])?;
        Ok(out)
    })();
    let out = built(ctx, r)?;
    Ok(ctx.rt.heap.alloc_buf(out))
}

fn replace_all(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "replaceAll")?;
    if super::regexp::is_regexp(arg(args, 0)) {
        return super::regexp::replace(ctx, this, arg(args, 0), arg(args, 1), true);
    }
    let pat = str_arg(arg(args, 0));
    let repl = replacement_arg(ctx, arg(args, 1))?;
    let s: &str = &js.s;
    if !pat.is_empty() && !s.contains(&*pat) {
        return Ok(this);
    }
    if !repl.contains('$') {
        // Every match becomes `repl` as it is, so the result's length is
        // known before any of it is built: one past the limit fails here,
        // not after writing up to the limit's size first.
        let (n, r) = (js.utf16_len as usize, strbuf::utf16_len(&repl));
        let total = if pat.is_empty() {
            (n + 1).checked_mul(r).and_then(|x| x.checked_add(n))
        } else {
            let count = s.match_indices(&*pat).count();
            count.checked_mul(r).and_then(|x| (n - count * strbuf::utf16_len(&pat)).checked_add(x))
        };
        built(ctx, strbuf::check_len(total.unwrap_or(usize::MAX)))?;
    }
    let r = (|| {
        let mut out = StrBuf::with_capacity(s.len())?;
        if pat.is_empty() {
            // A match before every code unit and at the end.
            if js.is_ascii() {
                for i in 0..s.len() {
                    expand_replacement(&mut out, &repl, s, i, "")?;
                    out.push_str(&s[i..i + 1])?;
                }
            } else {
                // Work in code units; halves of a pair split by a
                // replacement become U+FFFD (see the module comment).
                let u = units(s);
                let mut o16: Vec<u16> = Vec::new();
                let mut piece = StrBuf::new();
                for i in 0..u.len() {
                    piece = StrBuf::new_reusing(piece);
                    if repl.contains('$') {
                        let before = String::from_utf16_lossy(&u[..i]);
                        let subject = before.clone() + &String::from_utf16_lossy(&u[i..]);
                        expand_replacement(&mut piece, &repl, &subject, before.len(), "")?;
                    } else {
                        piece.push_str(&repl)?;
                    }
                    let extra = strbuf::utf16_len(&piece.as_str()) + 1;
                    strbuf::check_len(o16.len() + extra)?;
                    o16.try_reserve(extra).map_err(|_| strbuf::too_long())?;
                    o16.extend(piece.as_str().encode_utf16());
                    o16.push(u[i]);
                }
                out.push_str(&String::from_utf16_lossy(&o16))?;
            }
            expand_replacement(&mut out, &repl, s, s.len(), "")?;
            return Ok(out);
        }
        let w = js.wtf8();
        let mut last = 0;
        for (pos, m) in s.match_indices(&*pat) {
            out.push_wtf8(&w[last..pos])?;
            expand_replacement(&mut out, &repl, s, pos, m)?;
            last = pos + m.len();
        }
        out.push_wtf8(&w[last..])?;
        Ok(out)
    })();
    let out = built(ctx, r)?;
    Ok(ctx.rt.heap.alloc_buf(out))
}

fn concat(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "concat")?;
    if args.is_empty() {
        return Ok(this);
    }
    let known: usize = args.iter().filter_map(|&a| js_str(a)).map(|x| x.utf16_len as usize).sum();
    built(ctx, strbuf::check_len(js.utf16_len as usize + known))?;
    let r = (|| {
        let mut out = StrBuf::new();
        out.push_js(js)?;
        for &a in args {
            match ops::js_str(a) {
                Some(x) => out.push_js(x)?,
                None => ops::write_display(a, &mut out, 0)?,
            }
        }
        Ok(out)
    })();
    let out = built(ctx, r)?;
    Ok(ctx.rt.heap.alloc_buf(out))
}

fn locale_compare(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let js = this_str(ctx, this, "localeCompare")?;
    let that = str_arg(arg(args, 0));
    let r = match cmp_utf16(&js.s, &that) {
        Ordering::Less => -1.0,
        Ordering::Equal => 0.0,
        Ordering::Greater => 1.0,
    };
    Ok(Value::number(r))
}

fn to_string(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    this_str(ctx, this, "toString")?;
    Ok(this)
}

// ---------------------------------------------------------------------------
// Statics
// ---------------------------------------------------------------------------

/// `String.fromCharCode(...codes)`: ToUint16 of each (numbers only).
fn from_char_code(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    if args.len() == 1 && args[0].is_number() {
        let n = args[0].as_number();
        if (0.0..128.0).contains(&n) {
            let mut buf = [0u8; 4];
            return Ok(ctx.str(&*(n as u8 as char).encode_utf8(&mut buf)));
        }
    }
    let mut u = Vec::with_capacity(args.len());
    for &a in args {
        if !a.is_number() {
            return Err(ctx.type_error(format!("String.fromCharCode: expected a number, got {}", ops::type_of(a))));
        }
        u.push(numconv::to_uint32(a.as_number()) as u16);
    }
    Ok(from_units(ctx, &u))
}

/// `String.fromCodePoint(...points)`: RangeError for non-integers and
/// values outside 0..=0x10FFFF.
fn from_code_point(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let mut u: Vec<u16> = Vec::with_capacity(args.len());
    for &a in args {
        if !a.is_number() {
            return Err(ctx.type_error(format!("String.fromCodePoint: expected a number, got {}", ops::type_of(a))));
        }
        let n = a.as_number();
        if !(0.0..=1_114_111.0).contains(&n) || n.fract() != 0.0 {
            let shown = numconv::number_to_string(n);
            return Err(ctx.range_error(format!("Invalid code point {shown}")));
        }
        let cp = n as u32;
        if cp >= 0x10000 {
            let c = cp - 0x10000;
            u.push(0xD800 + (c >> 10) as u16);
            u.push(0xDC00 + (c & 0x3FF) as u16);
        } else {
            u.push(cp as u16);
        }
    }
    Ok(from_units(ctx, &u))
}

// ---------------------------------------------------------------------------
// URI encoding
// ---------------------------------------------------------------------------

/// What `encodeURIComponent` leaves as it is (besides ASCII letters and
/// digits); `encodeURI` also leaves [`URI_RESERVED`] and `#`.
const URI_MARKS: &[u8] = b"-_.!~*'()";
const URI_RESERVED: &[u8] = b";/?:@&=+$,";

/// The exact string of argument `v` (`String(v)` for a non-string).
fn exact_arg(ctx: &mut NativeCtx, v: Value) -> Result<&'static JsStr, Value> {
    if let Some(js) = js_str(v) {
        return Ok(js);
    }
    let t = ops::try_to_display(v).map_err(|f| ctx.fault(f))?;
    let v = ctx.str(t);
    Ok(js_str(v).expect("a string"))
}

fn uri_error(ctx: &mut NativeCtx) -> Value {
    let class = ctx.rt.realm.globals[super::global_slot("URIError")];
    ctx.error(class, "URI malformed")
}

/// Encode (ECMA-262 19.2.6.5): each character outside the kept set as the
/// `%XX` escapes of its UTF-8; a lone surrogate is a URIError.
fn encode(ctx: &mut NativeCtx, args: &[Value], keep_reserved: bool) -> Result<Value, Value> {
    let js = exact_arg(ctx, arg(args, 0))?;
    if !js.is_well_formed() {
        return Err(uri_error(ctx));
    }
    let b = js.s.as_bytes();
    let keep = |c: u8| {
        c.is_ascii_alphanumeric()
            || URI_MARKS.contains(&c)
            || (keep_reserved && (URI_RESERVED.contains(&c) || c == b'#'))
    };
    if b.iter().all(|&c| keep(c)) {
        return Ok(ctx.str(&*js.s));
    }
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(b.len() * 3);
    for &c in b {
        if keep(c) {
            out.push(c as char);
        } else {
            out.push('%');
            out.push(HEX[(c >> 4) as usize] as char);
            out.push(HEX[(c & 15) as usize] as char);
        }
    }
    built(ctx, strbuf::check_str(&out))?;
    Ok(ctx.str(out))
}

/// The byte of escape `%XX` at `b[i..]`.
fn escape_at(b: &[u8], i: usize) -> Option<u8> {
    match b.get(i..i + 3) {
        Some(&[b'%', h, l]) => {
            let d = |x: u8| (x as char).to_digit(16);
            Some((d(h)? * 16 + d(l)?) as u8)
        }
        _ => None,
    }
}

/// Decode (ECMA-262 19.2.6.6): `%XX` escapes read as UTF-8; an escape
/// that is not valid UTF-8 (a surrogate's encoding included) is a
/// URIError. `decodeURI` keeps escapes of reserved characters and `#`.
fn decode(ctx: &mut NativeCtx, args: &[Value], keep_reserved: bool) -> Result<Value, Value> {
    let js = exact_arg(ctx, arg(args, 0))?;
    let b = js.wtf8();
    if !b.contains(&b'%') {
        return Ok(ctx.rt.heap.alloc_wtf8(b.to_vec()));
    }
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let Some(first) = escape_at(b, i) else { return Err(uri_error(ctx)) };
        if first < 0x80 {
            if keep_reserved && (URI_RESERVED.contains(&first) || first == b'#') {
                out.extend_from_slice(&b[i..i + 3]);
            } else {
                out.push(first);
            }
            i += 3;
            continue;
        }
        let n = match first {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => return Err(uri_error(ctx)),
        };
        let mut seq = [first, 0, 0, 0];
        for (k, slot) in seq.iter_mut().enumerate().take(n).skip(1) {
            match escape_at(b, i + 3 * k) {
                Some(c) if c & 0xC0 == 0x80 => *slot = c,
                _ => return Err(uri_error(ctx)),
            }
        }
        // Rejects overlong forms and surrogates, as the spec does.
        if std::str::from_utf8(&seq[..n]).is_err() {
            return Err(uri_error(ctx));
        }
        out.extend_from_slice(&seq[..n]);
        i += 3 * n;
    }
    Ok(ctx.rt.heap.alloc_wtf8(out))
}

fn encode_uri_component(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    encode(ctx, args, false)
}

fn encode_uri(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    encode(ctx, args, true)
}

fn decode_uri_component(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    decode(ctx, args, false)
}

fn decode_uri(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    decode(ctx, args, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::testing::{n, rt};

    use crate::vm::native::NativeCtx;
    use crate::vm::object::NativeFn;

    use crate::vm::task::Task;

    /// Calls `f` on string `this` and returns the result displayed
    /// (`Ok(String(v))` / `Err("Name: message")`).
    fn call(f: NativeFn, this: &str, args: &[Arg]) -> Result<String, String> {
        let mut rt = rt();
        let task = Task::new(0);
        let mut ctx = NativeCtx { rt: &mut rt, task: &task };
        let this = ctx.str(this);
        let args: Vec<Value> = args
            .iter()
            .map(|a| match a {
                Arg::S(s) => ctx.str(*s),
                Arg::V(v) => *v,
            })
            .collect();
        match f(&mut ctx, this, &args) {
            Ok(v) => Ok(show(v)),
            Err(e) => Err(ops::to_display(e)),
        }
    }

    /// Like `String(v)`, but arrays as `[a|b|c]` so pieces are visible.
    fn show(v: Value) -> String {
        match ops::array_data(v) {
            Some(a) => format!("[{}]", a.iter().map(|x| ops::to_display(*x)).collect::<Vec<_>>().join("|")),
            None => ops::to_display(v),
        }
    }

    enum Arg {
        S(&'static str),
        V(Value),
    }
    use Arg::{S, V};

    fn ok(r: Result<String, String>) -> String {
        r.unwrap()
    }

    const U: Arg = V(Value::UNDEFINED);

    #[test]
    fn char_access() {
        assert_eq!(ok(call(char_at, "abc", &[V(n(1.0))])), "b");
        assert_eq!(ok(call(char_at, "abc", &[])), "a");
        assert_eq!(ok(call(char_at, "abc", &[V(n(-1.0))])), "");
        assert_eq!(ok(call(char_at, "abc", &[V(n(f64::NAN))])), "a");
        assert_eq!(ok(call(char_at, "abc", &[V(n(1.7))])), "b");
        assert_eq!(ok(call(char_code_at, "abc", &[V(n(2.0))])), "99");
        assert_eq!(ok(call(char_code_at, "abc", &[V(n(3.0))])), "NaN");
        assert_eq!(ok(call(char_code_at, "a😀b", &[V(n(1.0))])), "55357");
        assert_eq!(ok(call(char_code_at, "a😀b", &[V(n(2.0))])), "56832");
        assert_eq!(ok(call(char_code_at, "a😀b", &[V(n(3.0))])), "98");
        assert_eq!(ok(call(code_point_at, "a😀b", &[V(n(1.0))])), "128512");
        assert_eq!(ok(call(code_point_at, "a😀b", &[V(n(2.0))])), "56832");
        assert_eq!(ok(call(code_point_at, "a😀b", &[V(n(4.0))])), "undefined");
        assert_eq!(ok(call(at, "abc", &[V(n(-1.0))])), "c");
        assert_eq!(ok(call(at, "abc", &[V(n(-4.0))])), "undefined");
        assert_eq!(ok(call(at, "abc", &[V(n(3.0))])), "undefined");
        assert_eq!(ok(call(at, "héllo", &[V(n(1.0))])), "é");
        assert_eq!(ok(call(char_at, "😀", &[V(n(0.0))])), "\u{FFFD}");
        assert!(call(char_at, "abc", &[S("1")]).unwrap_err().starts_with("TypeError"));
    }

    #[test]
    fn searching() {
        assert_eq!(ok(call(index_of, "hello world", &[S("o")])), "4");
        assert_eq!(ok(call(index_of, "hello world", &[S("o"), V(n(5.0))])), "7");
        assert_eq!(ok(call(index_of, "hello", &[S("")])), "0");
        assert_eq!(ok(call(index_of, "hello", &[S(""), V(n(10.0))])), "5");
        assert_eq!(ok(call(index_of, "hello", &[S("z")])), "-1");
        assert_eq!(ok(call(index_of, "a undefined", &[])), "2");
        assert_eq!(ok(call(index_of, "a1", &[V(n(1.0))])), "1");
        assert_eq!(ok(call(index_of, "😀a😀a", &[S("a")])), "2");
        assert_eq!(ok(call(index_of, "😀a😀a", &[S("a"), V(n(3.0))])), "5");
        assert_eq!(ok(call(index_of, "😀a😀a", &[S(""), V(n(1.0))])), "1");
        assert_eq!(ok(call(index_of, "ab", &[S("é")])), "-1");
        assert_eq!(ok(call(last_index_of, "canal", &[S("a")])), "3");
        assert_eq!(ok(call(last_index_of, "canal", &[S("a"), V(n(2.0))])), "1");
        assert_eq!(ok(call(last_index_of, "canal", &[S("a"), V(n(0.0))])), "-1");
        assert_eq!(ok(call(last_index_of, "canal", &[S("x")])), "-1");
        assert_eq!(ok(call(last_index_of, "canal", &[S("c"), V(n(-5.0))])), "0");
        assert_eq!(ok(call(last_index_of, "canal", &[S(""), V(n(2.0))])), "2");
        assert_eq!(ok(call(last_index_of, "canal", &[S("")])), "5");
        assert_eq!(ok(call(last_index_of, "canal", &[S("a"), V(n(f64::NAN))])), "3");
        assert_eq!(ok(call(last_index_of, "😀a😀a", &[S("a")])), "5");
        assert_eq!(ok(call(last_index_of, "😀a😀a", &[S("😀"), V(n(4.0))])), "3");
        assert_eq!(ok(call(last_index_of, "😀a😀a", &[S("😀"), V(n(2.0))])), "0");
        assert_eq!(ok(call(last_index_of, "xaé", &[S("aé"), V(n(0.0))])), "-1");
        assert_eq!(ok(call(last_index_of, "xaé", &[S("aé"), V(n(1.0))])), "1");
        assert_eq!(ok(call(includes, "hello", &[S("ell")])), "true");
        assert_eq!(ok(call(includes, "hello", &[S("ell"), V(n(2.0))])), "false");
        assert_eq!(ok(call(starts_with, "hello", &[S("he")])), "true");
        assert_eq!(ok(call(starts_with, "hello", &[S("ll"), V(n(2.0))])), "true");
        assert_eq!(ok(call(starts_with, "hello", &[S(""), V(n(99.0))])), "true");
        assert_eq!(ok(call(ends_with, "hello", &[S("lo")])), "true");
        assert_eq!(ok(call(ends_with, "hello", &[S("ll"), V(n(4.0))])), "true");
        assert_eq!(ok(call(ends_with, "hello", &[S("he"), V(n(-1.0))])), "false");
        assert_eq!(ok(call(ends_with, "a😀", &[S("a"), V(n(1.0))])), "true");
        assert_eq!(ok(call(ends_with, "a😀", &[S("a"), V(n(2.0))])), "false");
    }

    #[test]
    fn substrings() {
        assert_eq!(ok(call(slice, "hello", &[V(n(1.0)), V(n(3.0))])), "el");
        assert_eq!(ok(call(slice, "hello", &[V(n(-3.0))])), "llo");
        assert_eq!(ok(call(slice, "hello", &[V(n(3.0)), V(n(1.0))])), "");
        assert_eq!(ok(call(slice, "hello", &[V(n(-100.0)), V(n(-2.0))])), "hel");
        assert_eq!(ok(call(slice, "hello", &[U, V(n(2.0))])), "he");
        assert_eq!(ok(call(slice, "hello", &[V(n(f64::NEG_INFINITY)), V(n(f64::INFINITY))])), "hello");
        assert_eq!(ok(call(slice, "héllo", &[V(n(1.0)), V(n(3.0))])), "él");
        assert_eq!(ok(call(slice, "a😀b", &[V(n(1.0)), V(n(3.0))])), "😀");
        assert_eq!(ok(call(slice, "a😀b", &[V(n(2.0))])), "\u{FFFD}b");
        assert_eq!(ok(call(substring, "hello", &[V(n(3.0)), V(n(1.0))])), "el");
        assert_eq!(ok(call(substring, "hello", &[V(n(-3.0))])), "hello");
        assert_eq!(ok(call(substring, "hello", &[V(n(f64::NAN)), V(n(2.0))])), "he");
        assert_eq!(ok(call(substring, "hello", &[V(n(2.0)), V(n(100.0))])), "llo");
        assert_eq!(ok(call(substr, "hello", &[V(n(1.0)), V(n(3.0))])), "ell");
        assert_eq!(ok(call(substr, "hello", &[V(n(-3.0)), V(n(2.0))])), "ll");
        assert_eq!(ok(call(substr, "hello", &[V(n(2.0))])), "llo");
        assert_eq!(ok(call(substr, "hello", &[V(n(2.0)), V(n(-1.0))])), "");
    }

    #[test]
    fn case_and_trim() {
        assert_eq!(ok(call(to_upper_case, "abc xyz", &[])), "ABC XYZ");
        assert_eq!(ok(call(to_upper_case, "straße", &[])), "STRASSE");
        assert_eq!(ok(call(to_lower_case, "ÀB", &[])), "àb");
        assert_eq!(ok(call(to_lower_case, "ΑΣ", &[])), "ας");
        assert_eq!(ok(call(trim, " \t\n a b \u{FEFF}\u{3000}", &[])), "a b");
        assert_eq!(ok(call(trim_start, "  a  ", &[])), "a  ");
        assert_eq!(ok(call(trim_end, "  a  ", &[])), "  a");
        assert_eq!(ok(call(trim, "\u{85}a", &[])), "\u{85}a");
    }

    #[test]
    fn padding_and_repeat() {
        assert_eq!(ok(call(pad_start, "5", &[V(n(3.0)), S("0")])), "005");
        assert_eq!(ok(call(pad_start, "abc", &[V(n(10.0)), S("123")])), "1231231abc");
        assert_eq!(ok(call(pad_end, "abc", &[V(n(6.0))])), "abc   ");
        assert_eq!(ok(call(pad_end, "abc", &[V(n(6.0)), S("")])), "abc");
        assert_eq!(ok(call(pad_end, "abc", &[V(n(2.0)), S("x")])), "abc");
        assert_eq!(ok(call(pad_start, "a", &[V(n(3.0)), S("😀")])), "😀a");
        assert_eq!(ok(call(pad_start, "a", &[V(n(2.0)), S("😀")])), "\u{FFFD}a");
        assert_eq!(ok(call(repeat, "ab", &[V(n(3.0))])), "ababab");
        assert_eq!(ok(call(repeat, "ab", &[V(n(0.0))])), "");
        assert_eq!(ok(call(repeat, "ab", &[])), "");
        assert_eq!(call(repeat, "ab", &[V(n(-1.0))]).unwrap_err(), "RangeError: Invalid count value: -1");
        assert_eq!(
            call(repeat, "ab", &[V(n(f64::INFINITY))]).unwrap_err(),
            "RangeError: Invalid count value: Infinity"
        );
        assert_eq!(call(repeat, "ab", &[V(n(1e10))]).unwrap_err(), "RangeError: Invalid string length");
        assert_eq!(ok(call(repeat, "", &[V(n(1e10))])), "");
    }

    #[test]
    fn splitting() {
        assert_eq!(ok(call(split, "a,b,,c", &[S(",")])), "[a|b||c]");
        assert_eq!(ok(call(split, "a,b,,c", &[S(","), V(n(2.0))])), "[a|b]");
        assert_eq!(ok(call(split, "a,b", &[S(","), V(n(0.0))])), "[]");
        assert_eq!(ok(call(split, "abc", &[S("")])), "[a|b|c]");
        assert_eq!(ok(call(split, "abc", &[S(""), V(n(2.0))])), "[a|b]");
        assert_eq!(ok(call(split, "abc", &[])), "[abc]");
        assert_eq!(ok(call(split, "", &[S("")])), "[]");
        assert_eq!(ok(call(split, "a::b::", &[S("::")])), "[a|b|]");
        assert_eq!(ok(call(split, "é,ü", &[S(",")])), "[é|ü]");
        assert_eq!(ok(call(split, "a,b", &[S(","), V(n(-1.0))])), "[a|b]");
        assert_eq!(ok(call(split, "é😀", &[S("")])), "[é|\u{FFFD}|\u{FFFD}]");
    }

    #[test]
    fn split_of_empty_string_has_one_empty_part() {
        let mut rt = rt();
        let task = Task::new(0);
        let mut ctx = NativeCtx { rt: &mut rt, task: &task };
        let e = ctx.str("");
        let c = ctx.str(",");
        let r = split(&mut ctx, e, &[c]).unwrap();
        assert_eq!(ops::array_data(r).unwrap().len(), 1);
    }

    #[test]
    fn split_pieces_know_their_utf16_length() {
        let mut rt = rt();
        let task = Task::new(0);
        let mut ctx = NativeCtx { rt: &mut rt, task: &task };
        for (subject, want) in [("ab cde ", vec![2, 3, 0]), ("é😀 a", vec![3, 1]), (" ", vec![0, 0])] {
            let subject = ctx.str(subject);
            let sep = ctx.str(" ");
            let r = split(&mut ctx, subject, &[sep]).unwrap();
            let lens: Vec<u32> = ops::array_data(r).unwrap().iter().map(|p| js_str(*p).unwrap().utf16_len).collect();
            assert_eq!(lens, want);
        }
    }

    #[test]
    fn replacing() {
        assert_eq!(ok(call(replace, "aXbXc", &[S("X"), S("-")])), "a-bXc");
        assert_eq!(ok(call(replace, "abc", &[S("z"), S("-")])), "abc");
        assert_eq!(ok(call(replace, "abc", &[S("b"), S("[$&]")])), "a[b]c");
        assert_eq!(ok(call(replace, "abc", &[S("b"), S("$$")])), "a$c");
        assert_eq!(ok(call(replace, "abc", &[S("b"), S("$`|$'")])), "aa|cc");
        assert_eq!(ok(call(replace, "abc", &[S("b"), S("$1$")])), "a$1$c");
        assert_eq!(ok(call(replace, "abc", &[S(""), S("-")])), "-abc");
        assert_eq!(ok(call(replace_all, "aXbXc", &[S("X"), S("-")])), "a-b-c");
        assert_eq!(ok(call(replace_all, "aaa", &[S("aa"), S("b")])), "ba");
        assert_eq!(ok(call(replace_all, "abc", &[S(""), S("-")])), "-a-b-c-");
        assert_eq!(ok(call(replace_all, "xbxb", &[S("b"), S("[$`]")])), "x[x]x[xbx]");
        assert_eq!(ok(call(replace_all, "é😀", &[S(""), S("-")])), "-é-\u{FFFD}-\u{FFFD}-");
        assert_eq!(ok(call(replace_all, "éa", &[S(""), S("<$'>")])), "<éa>é<a>a<>");
        assert_eq!(ok(call(replace_all, "null", &[V(Value::NULL), S("x")])), "x");
    }

    #[test]
    fn replacement_function_is_a_type_error() {
        let mut rt = rt();
        let task = Task::new(0);
        let mut ctx = NativeCtx { rt: &mut rt, task: &task };
        let s = ctx.str("abc");
        let p = ctx.str("b");
        let f = ctx.realm().methods.string.get(crate::vm::atom::Atom::intern("trim")).unwrap();
        let e = replace(&mut ctx, s, &[p, f]).unwrap_err();
        assert_eq!(ops::to_display(e), "TypeError: replacement functions are not supported");
    }

    #[test]
    fn concat_compare_and_statics() {
        assert_eq!(ok(call(concat, "a", &[S("b"), V(n(1.0)), V(Value::NULL)])), "ab1null");
        assert_eq!(ok(call(locale_compare, "a", &[S("b")])), "-1");
        assert_eq!(ok(call(locale_compare, "b", &[S("a")])), "1");
        assert_eq!(ok(call(locale_compare, "a", &[S("a")])), "0");
        assert_eq!(ok(call(locale_compare, "\u{FF61}", &[S("😀")])), "1");
        assert_eq!(ok(call(to_string, "x", &[])), "x");
        assert_eq!(ok(call(from_char_code, "", &[V(n(72.0)), V(n(105.0))])), "Hi");
        assert_eq!(ok(call(from_char_code, "", &[V(n(0xD83D as f64)), V(n(0xDE00 as f64))])), "😀");
        assert_eq!(ok(call(from_char_code, "", &[V(n(65536.0 + 65.0))])), "A");
        assert_eq!(ok(call(from_char_code, "", &[])), "");
        assert_eq!(ok(call(from_code_point, "", &[V(n(128512.0)), V(n(97.0))])), "😀a");
        assert!(call(from_code_point, "", &[V(n(-1.0))]).unwrap_err().starts_with("RangeError"));
    }

    #[test]
    fn utf16_compare() {
        assert_eq!(cmp_utf16("abc", "abd"), Ordering::Less);
        assert_eq!(cmp_utf16("ab", "abc"), Ordering::Less);
        assert_eq!(cmp_utf16("é", "z"), Ordering::Greater);
        // U+FF61 > U+1F600's high surrogate (0xD83D) in UTF-16 order.
        assert_eq!(cmp_utf16("x\u{FF61}", "x😀"), Ordering::Greater);
    }
}
