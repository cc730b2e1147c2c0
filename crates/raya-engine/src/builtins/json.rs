//! Built-ins: `JSON.stringify` and `JSON.parse`, byte-identical to V8
//! (Node 20), including V8's error messages.
//!
//! Both work with explicit stacks, so nesting depth is limited only by
//! memory, never by the Rust stack.
//!
//! What needs Raya code to run is the prelude's (`stdlib/prelude.raya`):
//! `JSON.parse` with a reviver, and `JSON.stringify` with a replacer
//! function or a value holding an object with its own `toJSON` method.
//! The prelude's `JSON.stringify` calls the native one first; the native
//! answers `null` (which it never returns otherwise) when it meets such a
//! `toJSON`, and the prelude then serialises in Raya. A date's `toJSON`
//! is native. An object with an accessor property is handed to the
//! prelude the same way, since reading a getter runs Raya code.

use super::numconv;
use crate::vm::atom::{names, Atom};
use crate::vm::native::{arg, NativeCtx};
use crate::vm::object::{Body, Mut, Obj, ObjectData, PropMap};
use crate::vm::ops;
use crate::vm::realm::{Builder, Realm};
use crate::vm::strbuf::{self, LenGuard};
use crate::vm::value::Value;
use std::collections::HashSet;

pub fn install(b: &mut Builder, realm: &mut Realm) {
    let json = super::inspect::namespace_object(b, "JSON");
    b.set_native(json, "stringify", json_stringify);
    b.set_native(json, "parse", json_parse);
    realm.globals[super::global_slot("JSON")] = json;
}

/// The native `JSON.stringify`, which the prelude's wraps: `null` means
/// a replacer function or a `toJSON` method must run (see the module
/// comment).
fn json_stringify(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let replacer = arg(args, 1);
    if ops::is_callable(replacer) {
        return Ok(Value::NULL);
    }
    let keys = ops::array_data(replacer).map(|items| property_list(&items));
    let gap = gap_of(arg(args, 2));
    match stringify_with(arg(args, 0), keys.as_deref(), gap.as_deref(), true) {
        Ok(Some(s)) => Ok(ctx.str(s)),
        Ok(None) => Ok(Value::UNDEFINED),
        Err(JsonError::Circular(msg)) => Err(ctx.type_error(msg)),
        Err(JsonError::TooLong) => Err(ctx.range_error(strbuf::INVALID_STRING_LENGTH)),
        Err(JsonError::NeedsToJson) => Ok(Value::NULL),
    }
}

/// Whether serialising `d` needs Raya code: a `toJSON` method of its own
/// or from its class, or an accessor property (its getter must run).
fn needs_script(d: &ObjectData) -> bool {
    static TO_JSON: std::sync::OnceLock<Atom> = std::sync::OnceLock::new();
    let key = *TO_JSON.get_or_init(|| Atom::intern("toJSON"));
    d.props.get(key).or_else(|| ops::lookup_proto(d.class, key)).is_some_and(ops::is_callable)
        || d.props.vals().iter().any(|v| matches!(v.as_obj().map(|o| &o.body), Some(Body::Accessor(_))))
}

/// The replacer array as a property list: strings and numbers, in order,
/// without duplicates.
fn property_list(items: &[Value]) -> Vec<Atom> {
    let mut out: Vec<Atom> = Vec::new();
    for &v in items {
        let k = if v.is_number() {
            ops::number_key(v.as_number())
        } else if let Some(s) = ops::as_str(v) {
            Atom::intern(s)
        } else {
            continue;
        };
        if !out.contains(&k) {
            out.push(k);
        }
    }
    out
}

/// The indentation string (`None`: compact output). As in V8, a number
/// in (0, 1) gives pretty output with an empty indent.
fn gap_of(space: Value) -> Option<String> {
    if space.is_number() {
        let n = space.as_number().min(10.0);
        if n > 0.0 {
            return Some(" ".repeat(n as usize));
        }
        return None;
    }
    let s = ops::as_str(space)?;
    if s.is_empty() {
        return None;
    }
    if s.is_ascii() {
        return Some(s[..s.len().min(10)].to_owned());
    }
    let units: Vec<u16> = s.encode_utf16().take(10).collect();
    Some(String::from_utf16_lossy(&units))
}

/// What one value serialises to.
enum Ser {
    /// Omitted in objects, `null` in arrays (undefined, functions).
    Skip,
    Text(String),
    Array(Vec<Value>),
    /// An object's properties to write, in order.
    Object(Vec<(Atom, Value)>),
}

fn classify(v: Value, keys: Option<&[Atom]>) -> Ser {
    if v.is_number() {
        let n = v.as_number();
        return Ser::Text(if n.is_finite() { numconv::number_to_string(n) } else { "null".into() });
    }
    match v {
        Value::UNDEFINED => return Ser::Skip,
        Value::NULL => return Ser::Text("null".into()),
        Value::TRUE => return Ser::Text("true".into()),
        Value::FALSE => return Ser::Text("false".into()),
        _ => {}
    }
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Str(s)) => {
            let mut out = String::with_capacity(s.s.len() + 2);
            if s.is_well_formed() {
                numconv::json_quote(&s.s, &mut out);
            } else {
                numconv::json_quote_wtf8(s.wtf8(), &mut out);
            }
            Ser::Text(out)
        }
        Some(Body::Array(a)) => Ser::Array(a.lock().clone()),
        Some(Body::Object(d)) if super::inspect::is_namespace(&d.lock()) => Ser::Object(Vec::new()),
        Some(Body::Object(d)) => Ser::Object(object_entries(&d.lock(), keys)),
        Some(Body::Map(_)) | Some(Body::Set(_)) | Some(Body::Iter(_)) => Ser::Object(Vec::new()),
        // A RegExp has no enumerable own properties.
        Some(Body::Host(h)) if h.get::<super::regexp::RegExpData>().is_some() => Ser::Object(Vec::new()),
        // A date's own `toJSON`: its ISO form, or null when invalid.
        Some(Body::Host(h)) => match super::date::host_time_value(h) {
            Some(t) if t.is_nan() => Ser::Text("null".into()),
            Some(t) => Ser::Text(format!("\"{}\"", super::date::iso_string(t))),
            None => Ser::Skip,
        },
        _ => Ser::Skip,
    }
}

/// The own enumerable data properties of an object, in JS order (or in
/// the replacer list's order). Error objects' `message`, `stack` and
/// `cause` are not enumerable in JS, so they are left out.
fn object_entries(d: &ObjectData, keys: Option<&[Atom]>) -> Vec<(Atom, Value)> {
    let is_error = ops::error_name(d).is_some();
    let order = match keys {
        Some(k) => k.to_vec(),
        None => d.props.ordered_keys(),
    };
    order
        .into_iter()
        .filter(|&k| !(is_error && (k == names::MESSAGE || k == names::STACK || k == names::CAUSE)))
        .filter_map(|k| d.props.get(k).map(|v| (k, v)))
        .filter(|(_, v)| !matches!(v.as_obj().map(|o| &o.body), Some(Body::Accessor(_))))
        .collect()
}

/// How a container was reached, for the circular-structure message.
#[derive(Clone)]
enum Via {
    Root,
    Index(usize),
    Key(Atom),
}

struct Frame {
    obj: *const Obj,
    value: Value,
    via: Via,
    kind: FrameKind,
    next: usize,
    any: bool,
}

enum FrameKind {
    Array(Vec<Value>),
    Object(Vec<(Atom, Value)>),
}

/// Why `JSON.stringify` failed.
#[derive(Debug)]
pub enum JsonError {
    /// The message of the TypeError for a circular structure.
    Circular(String),
    /// The text would pass the string length limit.
    TooLong,
    /// An object with a `toJSON` method was met (only when asked to look).
    NeedsToJson,
}

/// `JSON.stringify(v, keys, gap)`, not calling `toJSON` methods:
/// `Ok(None)` is `undefined`.
pub fn stringify(v: Value, keys: Option<&[Atom]>, gap: Option<&str>) -> Result<Option<String>, JsonError> {
    stringify_with(v, keys, gap, false)
}

/// [`stringify`], stopping with `NeedsToJson` at an object that needs
/// Raya code (a `toJSON` method, a getter) if `find_to_json` is set.
fn stringify_with(
    v: Value,
    keys: Option<&[Atom]>,
    gap: Option<&str>,
    find_to_json: bool,
) -> Result<Option<String>, JsonError> {
    let classify = |v: Value, keys: Option<&[Atom]>| -> Result<Ser, JsonError> {
        if find_to_json {
            if let Some(Body::Object(d)) = v.as_obj().map(|o| &o.body) {
                if needs_script(&d.lock()) {
                    return Err(JsonError::NeedsToJson);
                }
            }
        }
        Ok(classify(v, keys))
    };
    let mut out = String::new();
    let mut guard = LenGuard::default();
    let mut stack: Vec<Frame> = Vec::new();
    // The containers on `stack`, for the cycle check.
    let mut active: HashSet<*const Obj> = HashSet::new();
    match classify(v, keys)? {
        Ser::Skip => return Ok(None),
        Ser::Text(s) => {
            guard.check(&s).map_err(|_| JsonError::TooLong)?;
            return Ok(Some(s));
        }
        c => {
            active.insert(v.obj_ptr());
            open(&mut out, &mut stack, v, Via::Root, c);
        }
    }
    while let Some(top) = stack.last_mut() {
        let (via, child) = match &top.kind {
            FrameKind::Array(items) => match items.get(top.next) {
                Some(&x) => (Via::Index(top.next), x),
                None => {
                    close(&mut out, &mut stack, &mut active, gap);
                    continue;
                }
            },
            FrameKind::Object(props) => match props.get(top.next) {
                Some(&(k, x)) => (Via::Key(k), x),
                None => {
                    close(&mut out, &mut stack, &mut active, gap);
                    continue;
                }
            },
        };
        top.next += 1;
        guard.check(&out).map_err(|_| JsonError::TooLong)?;
        let in_array = matches!(top.kind, FrameKind::Array(_));
        let c = classify(child, keys)?;
        if matches!(c, Ser::Skip) && !in_array {
            continue;
        }
        if top.any {
            out.push(',');
        }
        top.any = true;
        let level = stack.len();
        if let Some(g) = gap {
            out.push('\n');
            for _ in 0..level {
                out.push_str(g);
            }
        }
        if let Via::Key(k) = via {
            let t = k.as_str();
            if crate::wtf8::is_marked(t) {
                numconv::json_quote_wtf8(&crate::wtf8::unmark(t), &mut out);
            } else {
                numconv::json_quote(t, &mut out);
            }
            out.push(':');
            if gap.is_some() {
                out.push(' ');
            }
        }
        match c {
            Ser::Skip => out.push_str("null"),
            Ser::Text(s) => out.push_str(&s),
            c => {
                let p = child.obj_ptr();
                if !active.insert(p) {
                    let start = stack.iter().position(|f| f.obj == p).unwrap_or(0);
                    return Err(JsonError::Circular(circular_message(&stack, start, &via)));
                }
                open(&mut out, &mut stack, child, via, c);
            }
        }
    }
    guard.check(&out).map_err(|_| JsonError::TooLong)?;
    Ok(Some(out))
}

fn open(out: &mut String, stack: &mut Vec<Frame>, v: Value, via: Via, c: Ser) {
    let kind = match c {
        Ser::Array(items) => {
            out.push('[');
            FrameKind::Array(items)
        }
        Ser::Object(props) => {
            out.push('{');
            FrameKind::Object(props)
        }
        _ => unreachable!("only containers are opened"),
    };
    stack.push(Frame { obj: v.obj_ptr(), value: v, via, kind, next: 0, any: false });
}

fn close(out: &mut String, stack: &mut Vec<Frame>, active: &mut HashSet<*const Obj>, gap: Option<&str>) {
    let f = stack.pop().expect("frame");
    active.remove(&f.obj);
    if f.any {
        if let Some(g) = gap {
            out.push('\n');
            for _ in 0..stack.len() {
                out.push_str(g);
            }
        }
    }
    out.push(match f.kind {
        FrameKind::Array(_) => ']',
        FrameKind::Object(_) => '}',
    });
}

/// V8's `CircularStructureMessageBuilder` message.
fn circular_message(stack: &[Frame], start: usize, closing: &Via) -> String {
    let mut m = String::from("Converting circular structure to JSON");
    m.push_str("\n    --> starting at object with constructor ");
    m.push_str(&constructor_name(stack[start].value));
    let mut index = start + 1;
    let prefix_end = stack.len().min(index + 2);
    let line = |m: &mut String, f: &Frame| {
        m.push_str("\n    |     ");
        m.push_str(&via_text(&f.via));
        m.push_str(" -> object with constructor ");
        m.push_str(&constructor_name(f.value));
    };
    while index < prefix_end {
        line(&mut m, &stack[index]);
        index += 1;
    }
    if stack.len() > index + 1 {
        m.push_str("\n    |     ...");
    }
    index = index.max(stack.len() - 1);
    while index < stack.len() {
        line(&mut m, &stack[index]);
        index += 1;
    }
    m.push_str("\n    --- ");
    m.push_str(&via_text(closing));
    m.push_str(" closes the circle");
    m
}

fn via_text(v: &Via) -> String {
    match v {
        Via::Index(i) => format!("index {i}"),
        Via::Key(k) if k.as_str().is_empty() => "<anonymous>".into(),
        Via::Key(k) => format!("property '{}'", k.as_str()),
        Via::Root => "<anonymous>".into(),
    }
}

fn constructor_name(v: Value) -> String {
    let name = match v.as_obj().map(|o| &o.body) {
        Some(Body::Array(_)) => "Array",
        Some(Body::Map(_)) => "Map",
        Some(Body::Set(_)) => "Set",
        Some(Body::Object(d)) => match ops::class_data(d.lock().class) {
            Some(cd) => cd.name.as_str(),
            None => "Object",
        },
        _ => "Object",
    };
    format!("'{name}'")
}

// ---------------------------------------------------------------------------
// JSON.parse

/// The native `JSON.parse`; the prelude's wraps it and runs a reviver.
fn json_parse(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let v = arg(args, 0);
    let owned;
    let text = match ops::as_str(v) {
        Some(s) => s,
        None => {
            owned = ops::to_display(v);
            owned.as_str()
        }
    };
    let heap = &mut ctx.rt.heap;
    let result = parse(text, &mut |b: NewValue| match b {
        NewValue::Str(s) => heap.alloc_str(s),
        NewValue::Wtf8(b) => heap.alloc_wtf8(b),
        NewValue::Array(items) => heap.alloc_array(items),
        NewValue::Object(props) => {
            heap.alloc(Body::Object(Mut::new(ObjectData { class: Value::UNDEFINED, props, frozen: false })))
        }
    });
    result.map_err(|msg| ctx.syntax_error(msg))
}

/// A heap value the parser asks its caller to allocate.
pub enum NewValue {
    Str(String),
    /// A string with a lone surrogate (from a `\ud800` escape), as WTF-8.
    Wtf8(Vec<u8>),
    Array(Vec<Value>),
    Object(PropMap),
}

/// V8's message templates for parse errors at a given position.
#[derive(Clone, Copy)]
enum Msg {
    /// No template: chosen from the token at the cursor.
    Token,
    PropNameOrRBrace,
    CommaOrRBrack,
    CommaOrRBrace,
    ColonAfterPropertyName,
    DoubleQuotedPropertyName,
    UnterminatedString,
    BadControlCharacter,
    BadUnicodeEscape,
    BadEscapedCharacter,
    NoNumberAfterMinusSign,
    ExponentPartMissingNumber,
    UnterminatedFractionalNumber,
    NonWhiteSpaceAfterJson,
}

enum Cont {
    Array(Vec<Value>),
    Object(PropMap, Atom),
}

struct Parser<'a> {
    src: &'a str,
    b: &'a [u8],
    pos: usize,
}

fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

/// `JSON.parse(text)`: `Err` is the SyntaxError message.
pub fn parse(text: &str, alloc: &mut dyn FnMut(NewValue) -> Value) -> Result<Value, String> {
    let mut p = Parser { src: text, b: text.as_bytes(), pos: 0 };
    let mut stack: Vec<Cont> = Vec::new();
    'value: loop {
        p.skip_ws();
        let Some(c) = p.peek() else { return Err(p.error(Msg::Token)) };
        let mut value = match c {
            b'"' => {
                p.pos += 1;
                let s = p.string()?;
                alloc(match s {
                    Ok(s) => NewValue::Str(s),
                    Err(b) => NewValue::Wtf8(b),
                })
            }
            b'-' | b'0'..=b'9' => Value::number(p.number()?),
            b'{' => {
                p.pos += 1;
                p.skip_ws();
                if p.peek() == Some(b'}') {
                    p.pos += 1;
                    alloc(NewValue::Object(PropMap::new()))
                } else {
                    let key = p.property_key(Msg::PropNameOrRBrace)?;
                    stack.push(Cont::Object(PropMap::new(), key));
                    continue 'value;
                }
            }
            b'[' => {
                p.pos += 1;
                p.skip_ws();
                if p.peek() == Some(b']') {
                    p.pos += 1;
                    alloc(NewValue::Array(Vec::new()))
                } else {
                    stack.push(Cont::Array(Vec::new()));
                    continue 'value;
                }
            }
            b't' => {
                p.literal("true")?;
                Value::TRUE
            }
            b'f' => {
                p.literal("false")?;
                Value::FALSE
            }
            b'n' => {
                p.literal("null")?;
                Value::NULL
            }
            _ => return Err(p.error(Msg::Token)),
        };
        // A value is complete: hand it to the enclosing containers.
        loop {
            match stack.last_mut() {
                None => {
                    p.skip_ws();
                    if p.pos < p.b.len() {
                        return Err(p.error(Msg::NonWhiteSpaceAfterJson));
                    }
                    return Ok(value);
                }
                Some(Cont::Array(items)) => {
                    items.push(value);
                    p.skip_ws();
                    if p.peek() == Some(b',') {
                        p.pos += 1;
                        continue 'value;
                    }
                    if p.peek() != Some(b']') {
                        return Err(p.error(Msg::CommaOrRBrack));
                    }
                    p.pos += 1;
                    let Some(Cont::Array(items)) = stack.pop() else { unreachable!() };
                    value = alloc(NewValue::Array(items));
                }
                Some(Cont::Object(props, key)) => {
                    props.set(*key, value);
                    p.skip_ws();
                    if p.peek() == Some(b',') {
                        p.pos += 1;
                        *key = p.property_key(Msg::DoubleQuotedPropertyName)?;
                        continue 'value;
                    }
                    if p.peek() != Some(b'}') {
                        return Err(p.error(Msg::CommaOrRBrace));
                    }
                    p.pos += 1;
                    let Some(Cont::Object(props, _)) = stack.pop() else { unreachable!() };
                    value = alloc(NewValue::Object(props));
                }
            }
        }
    }
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while self.pos < self.b.len() && is_ws(self.b[self.pos]) {
            self.pos += 1;
        }
    }

    /// `"key"` then `:` (whitespace allowed around both).
    fn property_key(&mut self, msg: Msg) -> Result<Atom, String> {
        self.skip_ws();
        if self.peek() != Some(b'"') {
            return Err(self.error(msg));
        }
        self.pos += 1;
        // A key with a lone surrogate is marked, as `ops::key_of` makes it.
        let k = match self.string()? {
            Ok(k) if !crate::wtf8::is_marked(&k) => k,
            Ok(k) => crate::wtf8::mark_wtf8(k.as_bytes()),
            Err(b) => crate::wtf8::mark_wtf8(&b),
        };
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.error(Msg::ColonAfterPropertyName));
        }
        self.pos += 1;
        Ok(Atom::intern(&k))
    }

    fn literal(&mut self, word: &str) -> Result<(), String> {
        let w = word.as_bytes();
        self.pos += 1;
        for &expected in &w[1..] {
            match self.peek() {
                None => return Err(self.error(Msg::Token)),
                Some(c) if c != expected => return Err(self.error(Msg::Token)),
                Some(_) => self.pos += 1,
            }
        }
        Ok(())
    }

    /// The rest of a string after its opening quote.
    /// A string's value: text, or WTF-8 when an escape made a surrogate
    /// (an escaped lone surrogate is kept).
    fn string(&mut self) -> Result<Result<String, Vec<u8>>, String> {
        let mut out = Vec::new();
        // A `\u` escape of a surrogate was appended.
        let mut surrogate = false;
        let mut run = self.pos;
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error(Msg::UnterminatedString));
            };
            match c {
                b'"' => {
                    out.extend_from_slice(&self.b[run..self.pos]);
                    self.pos += 1;
                    if !surrogate {
                        // SAFETY: `out` is pieces of the source text cut at
                        // ASCII bytes (quotes, backslashes) and whole
                        // characters of escapes; only a surrogate escape
                        // appends anything else, and none was seen.
                        return Ok(Ok(unsafe { String::from_utf8_unchecked(out) }));
                    }
                    // Two escaped halves may have made a character.
                    return Ok(String::from_utf8(out).map_err(|e| e.into_bytes()));
                }
                b'\\' => {
                    out.extend_from_slice(&self.b[run..self.pos]);
                    self.pos += 1;
                    let Some(e) = self.peek() else { return Err(self.error(Msg::Token)) };
                    match e {
                        b'"' => out.push(b'"'),
                        b'\\' => out.push(b'\\'),
                        b'/' => out.push(b'/'),
                        b'b' => out.push(0x08),
                        b'f' => out.push(0x0C),
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        // A pair spelled as two escapes joins (`push_unit`
                        // merges a low surrogate with the high one before).
                        b'u' => {
                            let u = self.hex4()?;
                            surrogate |= (0xD800..0xE000).contains(&u);
                            crate::wtf8::push_unit(&mut out, u);
                        }
                        _ => return Err(self.error(Msg::BadEscapedCharacter)),
                    }
                    self.pos += 1;
                    run = self.pos;
                }
                c if c < 0x20 => return Err(self.error(Msg::BadControlCharacter)),
                _ => self.pos += 1,
            }
        }
    }

    /// Four hex digits after `\u` (cursor on the `u`); leaves the cursor on
    /// the last digit.
    fn hex4(&mut self) -> Result<u16, String> {
        let mut n: u16 = 0;
        for _ in 0..4 {
            self.pos += 1;
            let d = match self.peek() {
                Some(c) if c.is_ascii_hexdigit() => (c as char).to_digit(16).unwrap() as u16,
                _ => return Err(self.error(Msg::BadUnicodeEscape)),
            };
            n = n * 16 + d;
        }
        Ok(n)
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
    }

    /// V8's `ParseJsonNumber`.
    fn number(&mut self) -> Result<f64, String> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                if matches!(self.peek(), Some(b'0'..=b'9')) {
                    return Err(self.error(Msg::Token));
                }
            }
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error(Msg::NoNumberAfterMinusSign)),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error(Msg::UnterminatedFractionalNumber));
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error(Msg::ExponentPartMissingNumber));
            }
            self.digits();
        }
        Ok(numconv::string_to_number(&self.src[start..self.pos]))
    }

    /// The message for an error at the cursor.
    fn error(&self, msg: Msg) -> String {
        let pos16 = utf16_len(&self.src[..self.pos.min(self.src.len())]);
        let at = |text: &str| format!("{text} in JSON at position {pos16}");
        match msg {
            Msg::Token => self.token_error(pos16),
            Msg::PropNameOrRBrace => at("Expected property name or '}'"),
            Msg::CommaOrRBrack => at("Expected ',' or ']' after array element"),
            Msg::CommaOrRBrace => at("Expected ',' or '}' after property value"),
            Msg::ColonAfterPropertyName => at("Expected ':' after property name"),
            Msg::DoubleQuotedPropertyName => at("Expected double-quoted property name"),
            Msg::UnterminatedString => at("Unterminated string"),
            Msg::BadControlCharacter => at("Bad control character in string literal"),
            Msg::BadUnicodeEscape => at("Bad Unicode escape"),
            Msg::BadEscapedCharacter => at("Bad escaped character"),
            Msg::NoNumberAfterMinusSign => at("No number after minus sign"),
            Msg::ExponentPartMissingNumber => at("Exponent part is missing a number"),
            Msg::UnterminatedFractionalNumber => at("Unterminated fractional number"),
            Msg::NonWhiteSpaceAfterJson => {
                format!("Unexpected non-whitespace character after JSON at position {pos16}")
            }
        }
    }

    /// V8's `LookUpErrorMessageForJsonToken` for the character at the
    /// cursor.
    fn token_error(&self, pos: usize) -> String {
        let Some(c) = self.peek() else {
            return "Unexpected end of JSON input".into();
        };
        match c {
            b'"' => return format!("Unexpected string in JSON at position {pos}"),
            b'-' | b'0'..=b'9' => return format!("Unexpected number in JSON at position {pos}"),
            _ => {}
        }
        if matches!(self.src, "undefined" | "NaN" | "Infinity" | "[object Object]") {
            return format!("\"{}\" is not valid JSON", self.src);
        }
        let units: Vec<u16> = self.src.encode_utf16().collect();
        let token = String::from_utf16_lossy(&units[pos..pos + 1]);
        const CONTEXT: usize = 10;
        let len = units.len();
        if len <= CONTEXT * 2 + 1 {
            return format!("Unexpected token '{token}', \"{}\" is not valid JSON", self.src);
        }
        let (from, to, pre, post) = if pos < CONTEXT {
            (0, pos + CONTEXT, "", "...")
        } else if pos < len - CONTEXT {
            (pos - CONTEXT, pos + CONTEXT, "...", "...")
        } else {
            (pos - CONTEXT, len, "...", "")
        };
        let snippet = String::from_utf16_lossy(&units[from..to]);
        format!("Unexpected token '{token}', {pre}\"{snippet}\"{post} is not valid JSON")
    }
}

fn utf16_len(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.encode_utf16().count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::testing::{n, rt};

    use crate::vm::runtime::Runtime;
    use crate::vm::task::Task;

    fn obj(rt: &mut Runtime, props: &[(&str, Value)]) -> Value {
        let mut map = PropMap::new();
        for (k, v) in props {
            map.set(Atom::intern(k), *v);
        }
        rt.heap.alloc(Body::Object(Mut::new(ObjectData { class: Value::UNDEFINED, props: map, frozen: false })))
    }

    fn set(o: Value, k: &str, v: Value) {
        ops::object_data(o).unwrap().props.set(Atom::intern(k), v);
    }

    /// `JSON.stringify(v, replacer, space)` through the native.
    fn stringify_js(rt: &mut Runtime, args: &[Value]) -> Result<String, String> {
        let task = Task::new(0);
        let mut ctx = NativeCtx { rt, task: &task };
        match json_stringify(&mut ctx, Value::UNDEFINED, args) {
            Ok(v) if v.is_undefined() => Ok("undefined".into()),
            Ok(v) if v.is_null() => Ok("<needs Raya>".into()),
            Ok(v) => Ok(ops::as_str(v).unwrap().to_owned()),
            Err(e) => Err(ops::to_display(e)),
        }
    }

    fn parse_js(rt: &mut Runtime, text: &str) -> Result<Value, String> {
        let task = Task::new(0);
        let s = rt.heap.alloc_str(text);
        let mut ctx = NativeCtx { rt, task: &task };
        json_parse(&mut ctx, Value::UNDEFINED, &[s]).map_err(ops::to_display)
    }

    #[test]
    fn stringify_values() {
        let mut rt = rt();
        let s = rt.heap.alloc_str("x");
        let f = rt.realm.globals[crate::builtins::global_slot("parseInt")];
        let inner = rt.heap.alloc_array(vec![Value::TRUE, Value::NULL, Value::UNDEFINED, f]);
        let o3 = obj(&mut rt, &[("b", s), ("c", inner)]);
        let arr = rt.heap.alloc_array(vec![n(1.0), n(2.0), o3]);
        let o = obj(
            &mut rt,
            &[
                ("a", arr),
                ("u", Value::UNDEFINED),
                ("f", f),
                ("n", n(f64::NAN)),
                ("i", n(f64::NEG_INFINITY)),
                ("z", n(-0.0)),
            ],
        );
        assert_eq!(
            stringify_js(&mut rt, &[o]).unwrap(),
            r#"{"a":[1,2,{"b":"x","c":[true,null,null,null]}],"n":null,"i":null,"z":0}"#
        );
        assert_eq!(stringify_js(&mut rt, &[Value::UNDEFINED]).unwrap(), "undefined");
        assert_eq!(stringify_js(&mut rt, &[f]).unwrap(), "undefined");
        assert_eq!(stringify_js(&mut rt, &[n(1e21)]).unwrap(), "1e+21");
        let q = rt.heap.alloc_str("he said \"hi\"\n\u{1}");
        assert_eq!(stringify_js(&mut rt, &[q]).unwrap(), r#""he said \"hi\"\n\u0001""#);
        let keys = obj(&mut rt, &[("1", n(1.0)), ("b", n(2.0)), ("0", n(0.0))]);
        assert_eq!(stringify_js(&mut rt, &[keys]).unwrap(), r#"{"0":0,"1":1,"b":2}"#);
        let err = rt.make_error(&Task::new(0), rt.realm.classes.error, "x");
        assert_eq!(stringify_js(&mut rt, &[err]).unwrap(), "{}");
    }

    #[test]
    fn stringify_indent() {
        let mut rt = rt();
        let b = rt.heap.alloc_array(vec![n(1.0), n(2.0)]);
        let (c, d) = (obj(&mut rt, &[]), rt.heap.alloc_array(vec![]));
        let o = obj(&mut rt, &[("a", n(1.0)), ("b", b), ("c", c), ("d", d)]);
        assert_eq!(
            stringify_js(&mut rt, &[o, Value::NULL, n(2.0)]).unwrap(),
            "{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2\n  ],\n  \"c\": {},\n  \"d\": []\n}"
        );
        let c2 = obj(&mut rt, &[("c", n(2.0))]);
        let b2 = rt.heap.alloc_array(vec![n(1.0), c2]);
        let o2 = obj(&mut rt, &[("a", n(1.0)), ("b", b2)]);
        let dash = rt.heap.alloc_str("--");
        assert_eq!(
            stringify_js(&mut rt, &[o2, Value::NULL, dash]).unwrap(),
            "{\n--\"a\": 1,\n--\"b\": [\n----1,\n----{\n------\"c\": 2\n----}\n--]\n}"
        );
        let one = obj(&mut rt, &[("a", n(1.0))]);
        let cases: Vec<(Value, &str)> = vec![
            (n(20.0), "{\n          \"a\": 1\n}"),
            (n(0.5), "{\n\"a\": 1\n}"),
            (n(2.7), "{\n  \"a\": 1\n}"),
            (n(0.0), "{\"a\":1}"),
            (n(-3.0), "{\"a\":1}"),
            (Value::TRUE, "{\"a\":1}"),
        ];
        for (space, want) in cases {
            assert_eq!(stringify_js(&mut rt, &[one, Value::NULL, space]).unwrap(), want);
        }
        let long = rt.heap.alloc_str("abcdefghijklmnop");
        assert_eq!(stringify_js(&mut rt, &[one, Value::NULL, long]).unwrap(), "{\nabcdefghij\"a\": 1\n}");
        let empty = rt.heap.alloc_str("");
        assert_eq!(stringify_js(&mut rt, &[one, Value::NULL, empty]).unwrap(), "{\"a\":1}");
        let u = rt.heap.alloc_array(vec![Value::UNDEFINED]);
        assert_eq!(stringify_js(&mut rt, &[u, Value::NULL, n(2.0)]).unwrap(), "[\n  null\n]");
        let ou = obj(&mut rt, &[("a", Value::UNDEFINED)]);
        assert_eq!(stringify_js(&mut rt, &[ou, Value::NULL, n(2.0)]).unwrap(), "{}");
    }

    #[test]
    fn stringify_replacer_list() {
        let mut rt = rt();
        let inner = obj(&mut rt, &[("a", n(5.0)), ("d", n(6.0))]);
        let o = obj(&mut rt, &[("a", n(1.0)), ("b", n(2.0)), ("c", inner), ("1", n(7.0))]);
        let (ka, kc) = (rt.heap.alloc_str("a"), rt.heap.alloc_str("c"));
        let list = rt.heap.alloc_array(vec![ka, kc, n(1.0), ka]);
        assert_eq!(stringify_js(&mut rt, &[o, list]).unwrap(), r#"{"a":1,"c":{"a":5},"1":7}"#);
        // A replacer function is the prelude's to call.
        let f = rt.realm.globals[crate::builtins::global_slot("parseInt")];
        assert_eq!(stringify_js(&mut rt, &[o, f]).unwrap(), "<needs Raya>");
        let not_list = obj(&mut rt, &[]);
        assert_eq!(stringify_js(&mut rt, &[o, not_list]).unwrap(), r#"{"1":7,"a":1,"b":2,"c":{"a":5,"d":6}}"#);
    }

    #[test]
    fn stringify_hands_to_json_methods_to_the_prelude() {
        let mut rt = rt();
        let f = rt.realm.globals[crate::builtins::global_slot("parseInt")];
        let with_to_json = obj(&mut rt, &[("toJSON", f)]);
        let deep = rt.heap.alloc_array(vec![n(1.0), with_to_json]);
        let outer = obj(&mut rt, &[("x", deep)]);
        assert_eq!(stringify_js(&mut rt, &[outer]).unwrap(), "<needs Raya>");
        // A toJSON that is not callable is an ordinary property.
        let plain = obj(&mut rt, &[("toJSON", n(1.0))]);
        assert_eq!(stringify_js(&mut rt, &[plain]).unwrap(), r#"{"toJSON":1}"#);
        // The engine's own uses (console.log's %j) never stop.
        assert_eq!(stringify(outer, None, None).unwrap().unwrap(), r#"{"x":[1,{}]}"#);
        let date = crate::builtins::date::new_date(&mut rt, 0.0);
        assert_eq!(stringify_js(&mut rt, &[date]).unwrap(), r#""1970-01-01T00:00:00.000Z""#);
    }

    #[test]
    fn stringify_cycles_like_v8() {
        let mut rt = rt();
        let a = obj(&mut rt, &[]);
        set(a, "self", a);
        assert_eq!(
            stringify_js(&mut rt, &[a]).unwrap_err(),
            "TypeError: Converting circular structure to JSON\n    --> starting at object with constructor 'Object'\n    --- property 'self' closes the circle"
        );
        // c = {x: {y: {z: {w: {v: {}}}}}}; v.back = c.x
        let v = obj(&mut rt, &[]);
        let w = obj(&mut rt, &[("v", v)]);
        let z = obj(&mut rt, &[("w", w)]);
        let y = obj(&mut rt, &[("z", z)]);
        let x = obj(&mut rt, &[("y", y)]);
        let c = obj(&mut rt, &[("x", x)]);
        set(v, "back", x);
        assert_eq!(
            stringify_js(&mut rt, &[c]).unwrap_err(),
            "TypeError: Converting circular structure to JSON\n    --> starting at object with constructor 'Object'\n    |     property 'y' -> object with constructor 'Object'\n    |     property 'z' -> object with constructor 'Object'\n    |     ...\n    |     property 'v' -> object with constructor 'Object'\n    --- property 'back' closes the circle"
        );
        // d = [[{}]]; d[0][0].q = d
        let o = obj(&mut rt, &[]);
        let i = rt.heap.alloc_array(vec![o]);
        let d = rt.heap.alloc_array(vec![i]);
        set(o, "q", d);
        assert_eq!(
            stringify_js(&mut rt, &[d]).unwrap_err(),
            "TypeError: Converting circular structure to JSON\n    --> starting at object with constructor 'Array'\n    |     index 0 -> object with constructor 'Array'\n    |     index 0 -> object with constructor 'Object'\n    --- property 'q' closes the circle"
        );
        let e = obj(&mut rt, &[]);
        let f = obj(&mut rt, &[("", e)]);
        set(e, "r", f);
        assert_eq!(
            stringify_js(&mut rt, &[f]).unwrap_err(),
            "TypeError: Converting circular structure to JSON\n    --> starting at object with constructor 'Object'\n    |     <anonymous> -> object with constructor 'Object'\n    --- property 'r' closes the circle"
        );
        // A shared (non-circular) object is fine.
        let shared = obj(&mut rt, &[("k", n(1.0))]);
        let two = rt.heap.alloc_array(vec![shared, shared]);
        assert_eq!(stringify_js(&mut rt, &[two]).unwrap(), r#"[{"k":1},{"k":1}]"#);
    }

    #[test]
    fn stringify_and_parse_deep_nesting() {
        let mut rt = rt();
        let mut v = rt.heap.alloc_array(vec![]);
        for _ in 0..100_000 {
            v = rt.heap.alloc_array(vec![v]);
        }
        let s = stringify_js(&mut rt, &[v]).unwrap();
        assert_eq!(s.len(), 200_002);
        let back = parse_js(&mut rt, &s).unwrap();
        assert!(ops::array_data(back).is_some());
    }

    #[test]
    fn parse_values() {
        let mut rt = rt();
        let v = parse_js(&mut rt, r#" {"b": [1, -2.5e3, true, false, null, "x\u0041\n\ud83d\ude00"], "a": {}, "1": 0, "__proto__": 7, "b": 2} "#)
            .unwrap();
        assert_eq!(stringify(v, None, None).unwrap().unwrap(), r#"{"1":0,"b":2,"a":{},"__proto__":7}"#);
        let v = parse_js(&mut rt, r#"["x\u0041\n\ud83d\ude00\/", 0, -0, 1E2, 0.5]"#).unwrap();
        assert_eq!(crate::builtins::inspect::inspect(v), "[ 'xA\\n😀/', 0, -0, 100, 0.5 ]");
        let v = parse_js(&mut rt, "\"é\"").unwrap();
        assert_eq!(ops::as_str(v), Some("é"));
        let math = rt.realm.globals[crate::builtins::global_slot("Math")];
        let o = obj(&mut rt, &[("m", math)]);
        assert_eq!(stringify(o, None, None).unwrap().unwrap(), r#"{"m":{}}"#);
        let task = Task::new(0);
        let (text, f) = (rt.heap.alloc_str("[1]"), rt.realm.globals[crate::builtins::global_slot("parseInt")]);
        let mut ctx = NativeCtx { rt: &mut rt, task: &task };
        // A reviver is the prelude's to run: the native parses only.
        assert!(json_parse(&mut ctx, Value::UNDEFINED, &[text, f]).is_ok());
        assert!(json_parse(&mut ctx, Value::UNDEFINED, &[text, Value::NULL]).is_ok());
    }

    #[test]
    fn parse_errors_like_v8() {
        let mut rt = rt();
        let cases = [
            ("{", "Expected property name or '}' in JSON at position 1"),
            ("", "Unexpected end of JSON input"),
            ("  ", "Unexpected end of JSON input"),
            ("[1,]", "Unexpected token ']', \"[1,]\" is not valid JSON"),
            ("abc", "Unexpected token 'a', \"abc\" is not valid JSON"),
            ("{\"a\":1}x", "Unexpected non-whitespace character after JSON at position 7"),
            ("\"abc", "Unterminated string in JSON at position 4"),
            ("[1", "Expected ',' or ']' after array element in JSON at position 2"),
            ("{\"a\" 1}", "Expected ':' after property name in JSON at position 5"),
            ("{\"a\":1 \"b\"", "Expected ',' or '}' after property value in JSON at position 7"),
            ("\"\\x\"", "Bad escaped character in JSON at position 2"),
            ("\"\\u12G4\"", "Bad Unicode escape in JSON at position 5"),
            ("\"a\nb\"", "Bad control character in string literal in JSON at position 2"),
            ("-", "No number after minus sign in JSON at position 1"),
            ("-a", "No number after minus sign in JSON at position 1"),
            ("1.", "Unterminated fractional number in JSON at position 2"),
            ("1.e", "Unterminated fractional number in JSON at position 2"),
            ("1e", "Exponent part is missing a number in JSON at position 2"),
            ("1e+", "Exponent part is missing a number in JSON at position 3"),
            ("01", "Unexpected number in JSON at position 1"),
            ("-01", "Unexpected number in JSON at position 2"),
            ("tru", "Unexpected end of JSON input"),
            ("trux", "Unexpected token 'x', \"trux\" is not valid JSON"),
            ("tr1", "Unexpected number in JSON at position 2"),
            ("t\"", "Unexpected string in JSON at position 1"),
            ("}", "Unexpected token '}', \"}\" is not valid JSON"),
            ("undefined", "\"undefined\" is not valid JSON"),
            ("NaN", "\"NaN\" is not valid JSON"),
            ("Infinity", "\"Infinity\" is not valid JSON"),
            ("[object Object]", "\"[object Object]\" is not valid JSON"),
            ("{1:2}", "Expected property name or '}' in JSON at position 1"),
            ("{\"a\":1,}", "Expected double-quoted property name in JSON at position 7"),
            ("{\"a\"", "Expected ':' after property name in JSON at position 4"),
            ("{\"a\":", "Unexpected end of JSON input"),
            ("[", "Unexpected end of JSON input"),
            ("[,", "Unexpected token ',', \"[,\" is not valid JSON"),
            ("nulll", "Unexpected non-whitespace character after JSON at position 4"),
            ("\"\\", "Unexpected end of JSON input"),
            ("\"\\u12", "Bad Unicode escape in JSON at position 5"),
            (
                "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                "Unexpected token 'x', \"xxxxxxxxxx\"... is not valid JSON",
            ),
            (
                "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,x]",
                "Unexpected token 'x', ...\",18,19,20,x]\" is not valid JSON",
            ),
            ("[1,2,3,4,5,6,7,8,9,10,11,x]", "Unexpected token 'x', ...\"8,9,10,11,x]\" is not valid JSON"),
            ("[1,2,3,4,5,6,7,8,9,10,x]", "Unexpected token 'x', ...\",7,8,9,10,x]\" is not valid JSON"),
            ("\"é\"x", "Unexpected non-whitespace character after JSON at position 3"),
            ("é", "Unexpected token 'é', \"é\" is not valid JSON"),
            (
                "[1,2,3,4,5,6,7,8,9,é,10,11,12]",
                "Unexpected token 'é', ...\"5,6,7,8,9,é,10,11,12\"... is not valid JSON",
            ),
            ("\u{a0}", "Unexpected token '\u{a0}', \"\u{a0}\" is not valid JSON"),
            ("[1 2]", "Expected ',' or ']' after array element in JSON at position 3"),
            ("{\"a\":tru}", "Unexpected token '}', \"{\"a\":tru}\" is not valid JSON"),
            ("\"\t\"", "Bad control character in string literal in JSON at position 1"),
            ("[-]", "No number after minus sign in JSON at position 2"),
            ("{,}", "Expected property name or '}' in JSON at position 1"),
            ("[1,,2]", "Unexpected token ',', \"[1,,2]\" is not valid JSON"),
            ("\"\\u00\"", "Bad Unicode escape in JSON at position 5"),
            ("[]]", "Unexpected non-whitespace character after JSON at position 2"),
        ];
        for (text, want) in cases {
            assert_eq!(parse_js(&mut rt, text).unwrap_err(), format!("SyntaxError: {want}"), "{text:?}");
        }
    }
}
