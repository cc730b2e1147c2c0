//! `console.log` formatting of values (LANGUAGE.md §5): Node's
//! `util.inspect` with its default options (depth 2, 100 array items,
//! 10 000 string characters), except that a container is always printed on
//! one line (no column grouping, no line breaking at 80 columns). The one
//! exception is an error's stack, which is multi-line by nature: a
//! container holding one is laid out over several lines exactly as Node
//! does (`{\n  e: Error: boom\n      at f (a.raya:1:1)\n}`).
//!
//! - [`inspect`]: one value as it appears inside a container (strings
//!   quoted).
//! - [`format_log_args`]: the line `console.log(...args)` prints: strings
//!   raw at top level, arguments joined by a space (no `%s` directives).
//! - [`format_with_directives`]: Node's `util.format`, with `%s %d %i %f
//!   %j %o %O %c %%` directives in a first string argument.
//! - [`namespace_object`]: `Math`/`JSON`-style objects printing as
//!   `Object [Math] {}`.
//! - [`error_stack`]: an error's stack as Node would print it today (V8
//!   formats `stack` lazily, so a `name` or `message` changed right after
//!   construction shows in it).

use crate::builtins::{json, numconv};
use crate::vm::atom::{names, Atom};
use crate::vm::object::{Body, BuiltinKind, ClassData, Function, IterState, JsStr, Mut, Obj, ObjectData};
use crate::vm::ops;
use crate::vm::strbuf::{self, StrBuf};
use crate::vm::value::Value;

/// Node's `util.inspect` defaults.
const DEFAULT_DEPTH: usize = 2;
const MAX_ARRAY_LENGTH: usize = 100;
const MAX_STRING_LENGTH: usize = 10_000;

/// `util.inspect(v)`: the value as it prints inside a container.
pub fn inspect(v: Value) -> String {
    Inspector::new(DEFAULT_DEPTH).value(v, 0, 0)
}

/// [`inspect`], or a RangeError when the text would pass the string length
/// limit (an object with very many keys).
pub fn inspect_checked(v: Value) -> ops::OpResult<String> {
    inspect_within(v, strbuf::MAX_STRING_LEN)
}

fn inspect_within(v: Value, limit: usize) -> ops::OpResult<String> {
    let mut ins = Inspector::new(DEFAULT_DEPTH);
    ins.held_limit = limit;
    let s = ins.value(v, 0, 0);
    if ins.too_long {
        return Err(strbuf::too_long());
    }
    strbuf::check_str(&s)?;
    Ok(s)
}

/// `util.inspect(v, { depth })`.
pub fn inspect_depth(v: Value, depth: usize) -> String {
    Inspector::new(depth).value(v, 0, 0)
}

/// The line `console.log(...args)` prints (without the newline): the
/// arguments joined by a space, strings raw, everything else inspected.
/// (Raya's `console.log` takes no `%s`-style directives; see
/// [`format_with_directives`] for Node's `util.format`.)
/// Past the string length limit, a RangeError (as Node's).
pub fn format_log_args(args: &[Value]) -> ops::OpResult<String> {
    let mut out = StrBuf::new();
    for (i, &v) in args.iter().enumerate() {
        if i > 0 {
            out.push(' ')?;
        }
        match ops::as_str(v) {
            Some(s) => out.push_str(s)?,
            None => out.push_str(&inspect_checked(v)?)?,
        }
    }
    Ok(out.into_string())
}

/// Node's `util.format(...args)`: like [`format_log_args`], but a first
/// string argument may hold `%s %d %i %f %j %o %O %c %%` directives.
pub fn format_with_directives(args: &[Value]) -> String {
    let mut out = String::new();
    let mut a = 0;
    let mut join = "";
    if let Some(first) = args.first().and_then(|&v| ops::as_str(v)) {
        if args.len() == 1 {
            return first.to_owned();
        }
        let b = first.as_bytes();
        let mut last = 0;
        let mut i = 0;
        while i + 1 < b.len() {
            if b[i] != b'%' {
                i += 1;
                continue;
            }
            i += 1;
            let next = b[i];
            if a + 1 != args.len() {
                let piece = match next {
                    b's' => {
                        a += 1;
                        format_s(args[a])
                    }
                    b'j' => {
                        a += 1;
                        match json::stringify(args[a], None, None) {
                            Ok(Some(s)) => s,
                            Ok(None) => "undefined".into(),
                            Err(_) => "[Circular]".into(),
                        }
                    }
                    b'd' => {
                        a += 1;
                        fmt_number(loose_to_number(args[a]))
                    }
                    b'O' => {
                        a += 1;
                        inspect(args[a])
                    }
                    b'o' => {
                        a += 1;
                        let mut ins = Inspector::new(4);
                        ins.show_length = true;
                        ins.value(args[a], 0, 0)
                    }
                    b'i' => {
                        a += 1;
                        let s = ops::to_display(args[a]);
                        fmt_number(numconv::parse_int(&s, None))
                    }
                    b'f' => {
                        a += 1;
                        let s = ops::to_display(args[a]);
                        fmt_number(numconv::parse_float(&s))
                    }
                    b'c' => {
                        a += 1;
                        String::new()
                    }
                    b'%' => {
                        out.push_str(&first[last..i]);
                        last = i + 1;
                        i += 1;
                        continue;
                    }
                    _ => {
                        i += 1;
                        continue;
                    }
                };
                if last != i - 1 {
                    out.push_str(&first[last..i - 1]);
                }
                out.push_str(&piece);
                last = i + 1;
            } else if next == b'%' {
                out.push_str(&first[last..i]);
                last = i + 1;
            }
            i += 1;
        }
        if last != 0 {
            a += 1;
            join = " ";
            if last < first.len() {
                out.push_str(&first[last..]);
            }
        }
    }
    while a < args.len() {
        out.push_str(join);
        let v = args[a];
        match ops::as_str(v) {
            Some(s) => out.push_str(s),
            None => out.push_str(&inspect(v)),
        }
        join = " ";
        a += 1;
    }
    out
}

/// `%s`: numbers as Node prints them (`-0`), other primitives as
/// `String(x)`, objects inspected to depth 0.
fn format_s(v: Value) -> String {
    if v.is_number() {
        return fmt_number(v.as_number());
    }
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Str(s)) => s.s.to_string(),
        Some(Body::Function(_)) | Some(Body::Class(_)) | None => ops::to_display(v),
        Some(_) => inspect_depth(v, 0),
    }
}

/// `Number(x)` for the `%d` directive (no user code: arrays and objects
/// convert through their default string form).
fn loose_to_number(v: Value) -> f64 {
    if v.is_number() {
        return v.as_number();
    }
    match v {
        Value::UNDEFINED => f64::NAN,
        Value::NULL | Value::FALSE => 0.0,
        Value::TRUE => 1.0,
        _ => numconv::string_to_number(&ops::to_display(v)),
    }
}

/// A number as `util.inspect` prints it: like `String(n)`, but `-0`.
pub fn fmt_number(n: f64) -> String {
    if n == 0.0 && n.is_sign_negative() {
        "-0".into()
    } else {
        numconv::number_to_string(n)
    }
}

/// An error's `stack` as V8 would print it now. V8 builds the stack
/// string on first access, so a `name` or `message` assigned after
/// construction (`this.name = "ValidationError"` in a constructor) shows in
/// its first line; Raya records the stack at construction, so when the
/// recorded first line is the one construction gave and the error's
/// current `Name: message` differs, the current one is used. An error
/// without a string `stack` gives `Name: message`. None if `v` is not an
/// error.
pub fn error_stack(v: Value) -> Option<String> {
    let d = ops::object_data(v)?;
    ops::error_name(&d)?;
    Some(current_stack(&d))
}

fn current_stack(d: &ObjectData) -> String {
    let header = error_header(d);
    let Some(stack) = d.props.get(names::STACK).and_then(ops::as_str) else {
        return header;
    };
    let frames_at = stack.find("\n    at ").unwrap_or(stack.len());
    let old = &stack[..frames_at];
    if old == header {
        return stack.to_owned();
    }
    let default = chain_error_name(d);
    let constructed = old == default || old.strip_prefix(default.as_str()).is_some_and(|rest| rest.starts_with(": "));
    if constructed {
        format!("{header}{}", &stack[frames_at..])
    } else {
        stack.to_owned()
    }
}

/// `Error.prototype.toString` for an error object.
fn error_header(d: &ObjectData) -> String {
    let name = ops::error_name(d).unwrap_or_else(|| "Error".into());
    let msg = d.props.get(names::MESSAGE).map(ops::to_display).unwrap_or_default();
    if name.is_empty() {
        msg
    } else if msg.is_empty() {
        name
    } else {
        format!("{name}: {msg}")
    }
}

/// The `name` an error inherits from its class chain (ignoring an own
/// `name` property).
fn chain_error_name(d: &ObjectData) -> String {
    match ops::lookup_proto(d.class, names::NAME) {
        Some(n) => ops::to_display(n),
        None => "Error".into(),
    }
}

/// Node's `improveStack`: make the first line name the error's class when
/// `name` does not.
fn improve_stack(stack: String, constructor: &str, name: &str) -> String {
    let len = name.len();
    let regular = name.ends_with("Error")
        && stack.starts_with(name)
        && (stack.len() == len || matches!(stack.as_bytes()[len], b':' | b'\n'));
    if !regular || constructor.is_empty() || constructor == name {
        return stack;
    }
    if constructor.contains(name) {
        if len == 0 {
            format!("{constructor}: {stack}")
        } else {
            format!("{constructor}{}", &stack[len..])
        }
    } else {
        format!("{constructor} [{name}]{}", &stack[len..])
    }
}

/// Whether an identifier-like key prints without quotes
/// (`/^[a-zA-Z_][a-zA-Z_0-9]*$/`).
fn is_plain_key(k: &str) -> bool {
    let b = k.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

fn format_key(k: &str) -> String {
    if crate::wtf8::is_marked(k) {
        return quote_wtf8(&crate::wtf8::unmark(k));
    }
    if k == "__proto__" {
        "['__proto__']".into()
    } else if is_plain_key(k) {
        k.to_owned()
    } else {
        quote_str(k)
    }
}

/// Node's `strEscape`: single quotes unless the string contains one (then
/// double quotes, or backticks if it also has a double quote), with
/// control characters, C1 controls and backslashes escaped.
pub fn quote_str(s: &str) -> String {
    quote_wtf8(s.as_bytes())
}

/// [`quote_str`] of a string's exact WTF-8: a lone surrogate is written
/// `\ud800`, as Node writes it.
fn quote_wtf8(b: &[u8]) -> String {
    let has = |x: &[u8]| b.windows(x.len()).any(|w| w == x);
    let quote = if b.contains(&b'\'') {
        if !b.contains(&b'"') {
            '"'
        } else if !b.contains(&b'`') && !has(b"${") {
            '`'
        } else {
            '\''
        }
    } else {
        '\''
    };
    let mut out = String::with_capacity(b.len() + 2);
    out.push(quote);
    for (_, cp) in crate::wtf8::code_points(b) {
        let Some(c) = char::from_u32(cp) else {
            out.push_str(&format!("\\u{cp:x}"));
            continue;
        };
        match c {
            '\'' if quote == '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || (0x7f..0xa0).contains(&(c as u32)) => {
                out.push_str(&format!("\\x{:02X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// A string inside a container: quoted, cut after 10 000 UTF-16 units.
fn format_string(js: &JsStr) -> String {
    let utf16_len = js.utf16_len as usize;
    if utf16_len <= MAX_STRING_LENGTH {
        return quote_wtf8(js.wtf8());
    }
    // A cut through a pair leaves its high half, printed as an escape.
    let units: Vec<u16> = crate::wtf8::units(js.wtf8()).take(MAX_STRING_LENGTH).collect();
    let q = quote_wtf8(&crate::wtf8::from_units(&units));
    let remaining = utf16_len - MAX_STRING_LENGTH;
    format!("{q}... {remaining} more character{}", if remaining > 1 { "s" } else { "" })
}

fn remaining_text(n: usize) -> String {
    format!("... {n} more item{}", if n > 1 { "s" } else { "" })
}

/// Whether a class is one of the runtime's (printed `[Function: Name]`
/// as Node prints native constructors) rather than a user class.
fn is_builtin_class(cd: &ClassData) -> bool {
    if cd.kind != BuiltinKind::Ordinary {
        return true;
    }
    match cd.ctor.as_obj().map(|o| &o.body) {
        Some(Body::Function(Function::Native(_))) => true,
        Some(_) => false,
        None => cd.name.as_str() == "Object" && cd.parent.is_undefined() && cd.field_init.is_undefined(),
    }
}

/// A namespace object (`Math`, `JSON`): a plain object whose class is a
/// `BuiltinKind::Namespace` class named `name`, so that it prints as Node
/// prints it (`Object [Math] {}`: its members are not enumerable in JS).
pub fn namespace_object(b: &mut crate::vm::realm::Builder, name: &str) -> Value {
    let class = b.class(name, Value::UNDEFINED, BuiltinKind::Namespace, None, None);
    let obj = b.object();
    if let Some(mut d) = ops::object_data(obj) {
        d.class = class;
    }
    obj
}

/// Whether `d` is a namespace object made by [`namespace_object`].
pub fn is_namespace(d: &ObjectData) -> bool {
    ops::class_data(d.class).is_some_and(|c| c.kind == BuiltinKind::Namespace)
}

/// The name a class instance prints with, or None for a plain object.
fn instance_class_name(d: &ObjectData) -> Option<&'static str> {
    let cd = ops::class_data(d.class)?;
    let name = cd.name.as_str();
    if name.is_empty() || (name == "Object" && is_builtin_class(&cd)) {
        None
    } else {
        Some(name)
    }
}

/// Node's `reduceToSingleString`, always on one line unless an entry (or
/// the base: an error's stack) spans several lines.
fn reduce(output: &[String], base: &str, open: &str, close: &str, indent: usize) -> String {
    let multi = base.contains('\n') || output.iter().any(|e| e.contains('\n'));
    let mut s = String::new();
    if !base.is_empty() {
        s.push_str(base);
        s.push(' ');
    }
    s.push_str(open);
    if multi {
        let ind = format!("\n{}", " ".repeat(indent));
        s.push_str(&ind);
        s.push_str("  ");
        s.push_str(&output.join(&format!(",{ind}  ")));
        s.push_str(&ind);
    } else {
        s.push(' ');
        s.push_str(&output.join(", "));
        s.push(' ');
    }
    s.push_str(close);
    s
}

struct Inspector {
    depth: usize,
    /// Objects being formatted (ancestors of the current value).
    seen: Vec<*const Obj>,
    /// Objects found to be circular, with their `*N` numbers.
    circular: Vec<(*const Obj, usize)>,
    /// `%o`: arrays also show `[length]: n`.
    show_length: bool,
    /// UTF-16 length of the property lines formatted and not yet joined
    /// into their object's text. Arrays, Maps and Sets show at most 100
    /// entries, but an object shows every key, so this is what can grow
    /// without bound.
    held: usize,
    /// `held` past this: the text, which holds all those lines, is surely
    /// too long (the string length limit; a parameter for the unit tests).
    held_limit: usize,
    /// `held` passed `held_limit`: the text is abandoned (see
    /// [`inspect_checked`]).
    too_long: bool,
}

impl Inspector {
    fn new(depth: usize) -> Inspector {
        Inspector {
            depth,
            seen: Vec::new(),
            circular: Vec::new(),
            show_length: false,
            held: 0,
            held_limit: strbuf::MAX_STRING_LEN,
            too_long: false,
        }
    }

    fn circular_index(&self, p: *const Obj) -> Option<usize> {
        self.circular.iter().find(|(q, _)| *q == p).map(|&(_, i)| i)
    }

    /// LANGUAGE.md §5 prints a cycle as a plain `[Circular]`, without
    /// Node's `<ref *N>` markers, so the base is left as it is.
    fn ref_base(&self, _p: *const Obj, base: String) -> String {
        base
    }

    /// `formatValue`: `recurse` is the nesting level, `indent` Node's
    /// `indentationLvl` (for multi-line error stacks).
    fn value(&mut self, v: Value, recurse: usize, indent: usize) -> String {
        if v.is_number() {
            return fmt_number(v.as_number());
        }
        match v {
            Value::UNDEFINED => return "undefined".into(),
            Value::NULL => return "null".into(),
            Value::TRUE => return "true".into(),
            Value::FALSE => return "false".into(),
            _ => {}
        }
        let Some(o) = v.as_obj() else { return "undefined".into() };
        if let Body::Str(s) = &o.body {
            return format_string(s);
        }
        if let Some(k) = crate::vm::ops::symbol_atom(v) {
            return k.as_str().into();
        }
        let p = o as *const Obj;
        if self.seen.contains(&p) {
            let i = match self.circular_index(p) {
                Some(i) => i,
                None => {
                    let i = self.circular.len() + 1;
                    self.circular.push((p, i));
                    i
                }
            };
            let _ = i;
            return "[Circular]".into();
        }
        match &o.body {
            Body::Array(a) => {
                // Copied out: elements are inspected without holding the
                // array (see the lock order in `vm::object`).
                let (items, len) = {
                    let all = a.lock();
                    (all[..all.len().min(MAX_ARRAY_LENGTH)].to_vec(), all.len())
                };
                let extras = a.extras.as_deref().unwrap_or(&[]);
                self.array(p, &items, len, extras, recurse, indent)
            }
            Body::Object(d) => {
                let d = d.lock().clone();
                self.object(p, &d, recurse, indent)
            }
            Body::Function(f) => self.function(f),
            Body::Class(c) => {
                let c = c.lock().clone();
                self.class(p, v, &c, recurse, indent)
            }
            Body::Map(m) => {
                let (entries, len) = {
                    let m = m.lock();
                    (m.iter().take(MAX_ARRAY_LENGTH).collect::<Vec<_>>(), m.len())
                };
                self.map(p, &entries, len, recurse, indent)
            }
            Body::Set(m) => {
                let (items, len) = {
                    let m = m.lock();
                    (m.iter().take(MAX_ARRAY_LENGTH).map(|(k, _)| k).collect::<Vec<_>>(), m.len())
                };
                self.set(p, &items, len, recurse, indent)
            }
            Body::Iter(it) => self.iterator(p, it, recurse, indent),
            Body::Task(t) => format!("Task {{ id: {}, state: '{}' }}", t.id, crate::sync::task::state_name(t)),
            Body::Promise(p) => {
                format!("Promise {{ state: '{}' }}", crate::sync::task::outcome_name(p.completion.outcome()))
            }
            Body::Channel(c) => {
                format!("Channel {{ capacity: {}, length: {}, closed: {} }}", c.capacity, c.len(), c.is_closed())
            }
            Body::Mutex(m) => format!("Mutex {{ locked: {} }}", m.is_locked()),
            Body::WaitGroup(g) => format!("WaitGroup {{ count: {} }}", g.count()),
            Body::Semaphore(s) => format!("Semaphore {{ available: {} }}", s.available()),
            Body::Bytes(b) => {
                let (items, len) = b.with(|s| (s[..s.len().min(MAX_ARRAY_LENGTH)].to_vec(), s.len()));
                if len == 0 {
                    return "Uint8Array(0) []".into();
                }
                if recurse > self.depth {
                    return "[Uint8Array]".into();
                }
                let mut out: Vec<String> = items.iter().map(|x| x.to_string()).collect();
                if len > items.len() {
                    out.push(remaining_text(len - items.len()));
                }
                reduce(&out, &format!("Uint8Array({len})"), "[", "]", indent)
            }
            Body::Host(h) => {
                if let Some(t) = super::date::host_time_value(h) {
                    return super::date::inspect(t);
                }
                if let Some(s) = super::regexp::display(h) {
                    return s;
                }
                let name = h.desc.name;
                if h.fields.is_empty() || recurse > self.depth {
                    return match h.desc.inspect {
                        Some(f) => format!("{name} {{ {} }}", f(h)),
                        None => format!("{name} {{}}"),
                    };
                }
                self.seen.push(p);
                let out: Vec<String> = h
                    .fields
                    .iter()
                    .map(|&(k, v)| format!("{}: {}", format_key(k.as_str()), self.value(v, recurse + 1, indent + 2)))
                    .collect();
                self.seen.pop();
                reduce(&out, name, "{", "}", indent)
            }
            Body::Accessor(a) => {
                let a = *a.lock();
                accessor_label(a.get, a.set).into()
            }
            Body::Cell(c) => {
                let inner = *c.lock();
                self.value(inner, recurse, indent)
            }
            Body::Str(_) => unreachable!(),
        }
    }

    /// `items`: the first (at most 100) elements of an array of `len`.
    /// `extras`: named properties (a regular expression match's `index`,
    /// `input`, `groups`), shown after the elements as Node shows them.
    fn array(
        &mut self,
        p: *const Obj,
        items: &[Value],
        len: usize,
        extras: &[(Atom, Value)],
        recurse: usize,
        indent: usize,
    ) -> String {
        if len == 0 && !self.show_length && extras.is_empty() {
            return "[]".into();
        }
        if recurse > self.depth {
            return "[Array]".into();
        }
        self.seen.push(p);
        let mut out: Vec<String> = Vec::with_capacity(items.len() + 1);
        for &x in items {
            out.push(self.value(x, recurse + 1, indent + 2));
        }
        if len > items.len() {
            out.push(remaining_text(len - items.len()));
        }
        for &(k, v) in extras {
            out.push(format!("{}: {}", format_key(k.as_str()), self.value(v, recurse + 1, indent + 2)));
        }
        if self.show_length {
            out.push(format!("[length]: {len}"));
        }
        self.seen.pop();
        let base = self.ref_base(p, String::new());
        reduce(&out, &base, "[", "]", indent)
    }

    /// Formats the own properties `keys` of `props` as `key: value`.
    fn properties(
        &mut self,
        props: &crate::vm::object::PropMap,
        keys: &[Atom],
        recurse: usize,
        indent: usize,
        out: &mut Vec<String>,
    ) {
        for &k in keys {
            if self.too_long {
                return;
            }
            let Some(val) = props.get(k) else { continue };
            let name = format_key(k.as_str());
            let shown = match val.as_obj().map(|o| &o.body) {
                Some(Body::Accessor(a)) => {
                    let a = *a.lock();
                    accessor_label(a.get, a.set).to_owned()
                }
                _ => self.value(val, recurse + 1, indent + 2),
            };
            let line = format!("{name}: {shown}");
            self.held += strbuf::utf16_len(&line);
            self.too_long |= self.held > self.held_limit;
            out.push(line);
        }
    }

    fn object(&mut self, p: *const Obj, d: &ObjectData, recurse: usize, indent: usize) -> String {
        if ops::error_name(d).is_some() {
            return self.error(p, d, recurse, indent);
        }
        if is_namespace(d) {
            let name = ops::class_data(d.class).map(|c| c.name.as_str()).unwrap_or("Object");
            return format!("Object [{name}] {{}}");
        }
        let class = instance_class_name(d);
        let keys = d.props.ordered_keys();
        // An instance of a subclass of Date: `Deadline 2024-01-01T00:00:00.000Z`.
        let date = super::date::subclass_time_value(d).map(super::date::inspect);
        let open = match (class, &date) {
            (Some(c), Some(t)) => format!("{c} {t} {{"),
            (None, Some(t)) => format!("{t} {{"),
            (Some(c), None) => format!("{c} {{"),
            (None, None) => "{".into(),
        };
        if keys.is_empty() {
            if let Some(t) = date {
                return match class {
                    Some(c) => format!("{c} {t}"),
                    None => t,
                };
            }
            return format!("{open}}}");
        }
        if recurse > self.depth {
            return format!("[{}]", class.unwrap_or("Object"));
        }
        self.seen.push(p);
        let mut out = Vec::with_capacity(keys.len());
        let props = d.props.clone();
        let held = self.held;
        self.properties(&props, &keys, recurse, indent, &mut out);
        // The lines become this object's text, which the caller counts.
        self.held = held;
        self.seen.pop();
        let base = self.ref_base(p, String::new());
        reduce(&out, &base, &open, "}", indent)
    }

    /// Node's `formatError`.
    fn error(&mut self, p: *const Obj, d: &ObjectData, recurse: usize, indent: usize) -> String {
        let name = ops::error_name(d).unwrap_or_else(|| "Error".into());
        let mut stack = current_stack(d);
        let constructor = ops::class_data(d.class).map(|c| c.name.as_str()).unwrap_or("Error");
        // Own keys to show: message and stack are never enumerable in JS;
        // `name` is hidden when the stack already says it; `cause` shows
        // last, as `[cause]`.
        let mut keys: Vec<Atom> = d
            .props
            .ordered_keys()
            .into_iter()
            .filter(|&k| k != names::MESSAGE && k != names::STACK && k != names::CAUSE)
            .collect();
        if let Some(i) = keys.iter().position(|&k| k == names::NAME) {
            let own = d.props.get(names::NAME).map(ops::to_display).unwrap_or_default();
            if stack.contains(&own) {
                keys.remove(i);
            }
        }
        let cause = d.props.get(names::CAUSE);
        stack = improve_stack(stack, constructor, &name);
        let msg = d.props.get(names::MESSAGE).map(ops::to_display).unwrap_or_default();
        let pos = if msg.is_empty() { None } else { stack.find(&msg).map(|i| i + msg.len()) };
        match stack[pos.unwrap_or(0)..].find("\n    at").map(|i| i + pos.unwrap_or(0)) {
            None => stack = format!("[{stack}]"),
            Some(start) => {
                if let Some(c) = cause {
                    stack = dedupe_cause_frames(&stack, start, c);
                }
            }
        }
        if indent != 0 {
            stack = stack.replace('\n', &format!("\n{}", " ".repeat(indent)));
        }
        if keys.is_empty() && cause.is_none() {
            return stack;
        }
        if recurse > self.depth {
            return format!("[{constructor}]");
        }
        self.seen.push(p);
        let mut out = Vec::new();
        let props = d.props.clone();
        let held = self.held;
        self.properties(&props, &keys, recurse, indent, &mut out);
        self.held = held;
        if let Some(c) = cause {
            let shown = self.value(c, recurse + 1, indent + 2);
            out.push(format!("[cause]: {shown}"));
        }
        self.seen.pop();
        let base = self.ref_base(p, stack);
        reduce(&out, &base, "{", "}", indent)
    }

    fn function(&mut self, f: &Function) -> String {
        let kind = match f {
            Function::Closure(c) if c.proto.proto.is_async => "AsyncFunction",
            _ => "Function",
        };
        let name = f.name();
        if name.is_empty() {
            format!("[{kind} (anonymous)]")
        } else {
            format!("[{kind}: {name}]")
        }
    }

    fn class(&mut self, p: *const Obj, v: Value, cd: &ClassData, recurse: usize, indent: usize) -> String {
        let name = cd.name.as_str();
        if is_builtin_class(cd) {
            return format!("[Function: {name}]");
        }
        let mut base = format!("[class {}", if name.is_empty() { "(anonymous)" } else { name });
        if let Some(parent) = ops::class_data(cd.parent) {
            let pn = parent.name.as_str();
            if !pn.is_empty() {
                base.push_str(" extends ");
                base.push_str(pn);
            }
        }
        base.push(']');
        // Static fields show as properties; static methods (closures whose
        // home is this class) and accessors are not enumerable in JS.
        let keys: Vec<Atom> = cd
            .statics
            .ordered_keys()
            .into_iter()
            .filter(|&k| match cd.statics.get(k).and_then(|s| s.as_obj()).map(|o| &o.body) {
                Some(Body::Function(Function::Closure(c))) => *c.home.lock() != v,
                Some(Body::Function(Function::Native(_))) | Some(Body::Accessor(_)) => false,
                _ => true,
            })
            .collect();
        if keys.is_empty() {
            return base;
        }
        if recurse > self.depth {
            return "[Function]".into();
        }
        self.seen.push(p);
        let mut out = Vec::new();
        let statics = cd.statics.clone();
        let held = self.held;
        self.properties(&statics, &keys, recurse, indent, &mut out);
        self.held = held;
        self.seen.pop();
        let base = self.ref_base(p, base);
        reduce(&out, &base, "{", "}", indent)
    }

    /// `entries`: the first (at most 100) entries of a map of `len`.
    fn map(&mut self, p: *const Obj, entries: &[(Value, Value)], len: usize, recurse: usize, indent: usize) -> String {
        let open = format!("Map({len}) {{");
        if len == 0 {
            return format!("{open}}}");
        }
        if recurse > self.depth {
            return "[Map]".into();
        }
        self.seen.push(p);
        let mut out = Vec::with_capacity(entries.len() + 1);
        for &(k, v) in entries {
            let ks = self.value(k, recurse + 1, indent + 2);
            let vs = self.value(v, recurse + 1, indent + 2);
            out.push(format!("{ks} => {vs}"));
        }
        if len > entries.len() {
            out.push(remaining_text(len - entries.len()));
        }
        self.seen.pop();
        let base = self.ref_base(p, String::new());
        reduce(&out, &base, &open, "}", indent)
    }

    /// `items`: the first (at most 100) members of a set of `len`.
    fn set(&mut self, p: *const Obj, items: &[Value], len: usize, recurse: usize, indent: usize) -> String {
        let open = format!("Set({len}) {{");
        if len == 0 {
            return format!("{open}}}");
        }
        if recurse > self.depth {
            return "[Set]".into();
        }
        self.seen.push(p);
        let mut out = Vec::with_capacity(items.len() + 1);
        for &x in items {
            out.push(self.value(x, recurse + 1, indent + 2));
        }
        if len > items.len() {
            out.push(remaining_text(len - items.len()));
        }
        self.seen.pop();
        let base = self.ref_base(p, String::new());
        reduce(&out, &base, &open, "}", indent)
    }

    /// Iterators: `Object [Array Iterator] {}`, `[Map Entries] { [ 1, 2 ] }`,
    /// `[Set Iterator] { 5 }`, ... (the entries not yet produced).
    fn iterator(&mut self, p: *const Obj, it: &Mut<IterState>, recurse: usize, indent: usize) -> String {
        // The entries not yet produced, read under the iterator's lock and
        // then the collection's, both released before they are formatted
        // (the lock order in `vm::object`: formatting an entry locks it).
        let (rest, is_set, kind) = {
            let st = it.lock();
            let (map, pos, kind) = match &*st {
                IterState::Array { .. } | IterState::Indexed { .. } => return "Object [Array Iterator] {}".into(),
                IterState::Str { .. } => return "Object [String Iterator] {}".into(),
                IterState::Channel { .. } => return "Object [Channel Iterator] {}".into(),
                IterState::Host { .. } | IterState::GenLoop { .. } | IterState::User { .. } => {
                    return "Object [Iterator] {}".into()
                }
                IterState::Gen(_) => return "Object [Generator] {}".into(),
                IterState::Map { map, pos, kind } => (*map, pos, *kind),
            };
            let (data, is_set) = match map.as_obj().map(|o| &o.body) {
                Some(Body::Map(m)) => (m.lock(), false),
                Some(Body::Set(m)) => (m.lock(), true),
                _ => return "Object [Iterator] {}".into(),
            };
            let rest: Vec<(Value, Value)> =
                pos.rest(&data).map(|(k, v)| if is_set { (k, k) } else { (k, v) }).collect();
            (rest, is_set, kind)
        };
        let label = match (is_set, kind) {
            (false, 2) => "[Map Entries] {",
            (false, _) => "[Map Iterator] {",
            (true, 2) => "[Set Entries] {",
            (true, _) => "[Set Iterator] {",
        };
        if rest.is_empty() {
            return format!("{label}}}");
        }
        if recurse > self.depth {
            return "[Object]".into();
        }
        self.seen.push(p);
        let shown = rest.len().min(MAX_ARRAY_LENGTH);
        let mut out = Vec::with_capacity(shown + 1);
        for &(k, v) in &rest[..shown] {
            out.push(match kind {
                0 => self.value(k, recurse + 1, indent + 2),
                1 => self.value(v, recurse + 1, indent + 2),
                _ => {
                    let pair = [self.value(k, recurse + 1, indent + 2), self.value(v, recurse + 1, indent + 2)];
                    reduce(&pair, "", "[", "]", indent + 2)
                }
            });
        }
        if rest.len() > shown {
            out.push(remaining_text(rest.len() - shown));
        }
        self.seen.pop();
        reduce(&out, "", label, "}", indent)
    }
}

/// Node's `getStackFrames`: frames shared with the cause's stack (a run of
/// more than 3) are replaced by `... N lines matching cause stack trace ...`.
fn dedupe_cause_frames(stack: &str, start: usize, cause: Value) -> String {
    let Some(cause_stack) = error_stack(cause) else { return stack.to_owned() };
    let Some(cstart) = cause_stack.find("\n    at") else { return stack.to_owned() };
    let mut frames: Vec<String> = stack[start + 1..].split('\n').map(str::to_owned).collect();
    let cframes: Vec<&str> = cause_stack[cstart + 1..].split('\n').collect();
    let (len, offset) = identical_sequence_range(&frames, &cframes);
    if len == 0 {
        return stack.to_owned();
    }
    let skipped = len - 2;
    frames
        .splice(offset + 1..offset + 1 + skipped, [format!("    ... {skipped} lines matching cause stack trace ...")]);
    format!("{}\n{}", &stack[..start], frames.join("\n"))
}

fn identical_sequence_range(a: &[String], b: &[&str]) -> (usize, usize) {
    for i in 0..a.len().saturating_sub(3) {
        if let Some(pos) = b.iter().position(|x| *x == a[i]) {
            let rest = b.len() - pos;
            if rest > 3 {
                let mut len = 1;
                let max_len = (a.len() - i).min(rest);
                while max_len > len && a[i + len] == b[pos + len] {
                    len += 1;
                }
                if len > 3 {
                    return (len, i);
                }
            }
        }
    }
    (0, 0)
}

fn accessor_label(get: Value, set: Value) -> &'static str {
    match (get.is_undefined(), set.is_undefined()) {
        (false, false) => "[Getter/Setter]",
        (false, true) => "[Getter]",
        (true, false) => "[Setter]",
        (true, true) => "undefined",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::testing::{n, rt};

    use crate::vm::object::{Accessor, MapData, Mut, PropMap};
    use crate::vm::realm::Builder;
    use crate::vm::runtime::Runtime;
    use crate::vm::task::Task;

    struct T {
        rt: Runtime,
    }

    impl T {
        fn new() -> T {
            T { rt: rt() }
        }
        fn s(&mut self, s: &str) -> Value {
            self.rt.heap.alloc_str(s)
        }
        fn arr(&mut self, items: Vec<Value>) -> Value {
            self.rt.heap.alloc_array(items)
        }
        fn inst(&mut self, class: Value, props: &[(&str, Value)]) -> Value {
            let mut map = PropMap::new();
            for (k, v) in props {
                map.set(Atom::intern(k), *v);
            }
            self.rt.heap.alloc(Body::Object(Mut::new(ObjectData { class, props: map, frozen: false })))
        }
        fn obj(&mut self, props: &[(&str, Value)]) -> Value {
            self.inst(Value::UNDEFINED, props)
        }
        fn set(&mut self, o: Value, k: &str, v: Value) {
            ops::object_data(o).unwrap().props.set(Atom::intern(k), v);
        }
        fn class(&mut self, name: &str, parent: Value) -> Value {
            let mut b = Builder { heap: &mut self.rt.heap };
            b.class(name, parent, BuiltinKind::Ordinary, None, None)
        }
        fn map(&mut self, entries: &[(Value, Value)], set: bool) -> Value {
            let mut m = MapData::default();
            for &(k, v) in entries {
                m.set(k, v);
            }
            self.rt.heap.alloc(if set { Body::Set(Mut::new(m)) } else { Body::Map(Mut::new(m)) })
        }
        fn native(&mut self, name: &'static str) -> Value {
            fn f(_: &mut crate::vm::native::NativeCtx, _: Value, _: &[Value]) -> Result<Value, Value> {
                Ok(Value::UNDEFINED)
            }
            let mut b = Builder { heap: &mut self.rt.heap };
            b.native(name, f)
        }
        fn error(&mut self, class: Value, msg: &str, stack: Option<&str>) -> Value {
            let task = Task::new(0);
            let e = self.rt.make_error(&task, class, msg);
            if let Some(st) = stack {
                let s = self.s(st);
                self.set(e, "stack", s);
            }
            e
        }
    }

    #[test]
    fn primitives() {
        let mut t = T::new();
        assert_eq!(inspect(n(-0.0)), "-0");
        assert_eq!(inspect(n(0.0)), "0");
        assert_eq!(inspect(n(1e21)), "1e+21");
        assert_eq!(inspect(n(f64::NAN)), "NaN");
        assert_eq!(inspect(n(f64::NEG_INFINITY)), "-Infinity");
        assert_eq!(inspect(Value::UNDEFINED), "undefined");
        assert_eq!(inspect(Value::NULL), "null");
        assert_eq!(inspect(Value::TRUE), "true");
        let s = t.s("x");
        assert_eq!(inspect(s), "'x'");
        assert_eq!(format_log_args(&[s, n(-0.0), Value::NULL]).unwrap(), "x -0 null");
    }

    #[test]
    fn string_quoting_like_node() {
        let mut t = T::new();
        let cases = [
            ("it's", r#""it's""#),
            (r#"say "hi""#, r#"'say "hi"'"#),
            (r#"both ' and ""#, r#"`both ' and "`"#),
            ("all ' \" `", r#"'all \' " `'"#),
            ("tab\there", r"'tab\there'"),
            ("nl\nx", r"'nl\nx'"),
            ("\x00\x7f\u{80}\u{9f}\u{a0}", "'\\x00\\x7F\\x80\\x9F\u{a0}'"),
            ("back\\slash", r"'back\\slash'"),
            ("😀", "'😀'"),
            ("\x0b\x1b\r\x08\x0c", r"'\x0B\x1B\r\b\f'"),
        ];
        for (s, want) in cases {
            let v = t.s(s);
            assert_eq!(inspect(v), want, "{s:?}");
        }
        let long = t.s(&"x".repeat(10_005));
        let a = t.arr(vec![long]);
        assert!(inspect(a).ends_with("xxx'... 5 more characters ]"));
    }

    /// An object shows every key, so its text is the one that can pass the
    /// string length limit; nested objects' lines count once, as their text.
    #[test]
    fn objects_past_the_length_limit_are_refused() {
        let mut t = T::new();
        let x = t.s("xxxxxxxx");
        let keys: Vec<String> = (0..10).map(|i| format!("k{i}")).collect();
        let props: Vec<(&str, Value)> = keys.iter().map(|k| (k.as_str(), x)).collect();
        let inner = t.obj(&props);
        // "k0: 'xxxxxxxx'" is 14 units: ten lines are 140.
        assert!(inspect_within(inner, 139).is_err());
        let shown = inspect_within(inner, 140).unwrap();
        assert_eq!(shown, inspect(inner));
        // Nested: the inner lines (140) and the outer line (~160) are not
        // added up.
        let outer = t.obj(&[("o", inner)]);
        assert_eq!(inspect_within(outer, 200).unwrap(), inspect(outer));
        assert!(inspect_within(outer, 150).is_err());
    }

    #[test]
    fn arrays_and_objects() {
        let mut t = T::new();
        let x = t.s("x");
        let a = t.arr(vec![n(1.0), n(2.0), x]);
        assert_eq!(inspect(a), "[ 1, 2, 'x' ]");
        let e = t.arr(vec![]);
        assert_eq!(inspect(e), "[]");
        let o = t.obj(&[]);
        assert_eq!(inspect(o), "{}");
        let vals = [n(1.0), n(2.0), n(3.0), n(4.0), n(5.0), n(6.0), n(7.0)];
        let o = t.obj(&[
            ("$a", vals[0]),
            ("_b", vals[1]),
            ("b-c", vals[2]),
            ("1", vals[3]),
            ("a1", vals[4]),
            ("é", vals[5]),
            ("", vals[6]),
        ]);
        assert_eq!(inspect(o), "{ '1': 4, '$a': 1, _b: 2, 'b-c': 3, a1: 5, 'é': 6, '': 7 }");
        let u = t.arr(vec![Value::UNDEFINED, Value::NULL]);
        let o = t.obj(&[("u", Value::UNDEFINED)]);
        assert_eq!(format_log_args(&[u, o]).unwrap(), "[ undefined, null ] { u: undefined }");
        let p = t.obj(&[("__proto__", n(1.0))]);
        assert_eq!(inspect(p), "{ ['__proto__']: 1 }");
    }

    #[test]
    fn depth_limit() {
        let mut t = T::new();
        let d = t.obj(&[("d", n(1.0))]);
        let c = t.obj(&[("c", d)]);
        let b = t.obj(&[("b", c)]);
        let a = t.obj(&[("a", b)]);
        assert_eq!(inspect(a), "{ a: { b: { c: [Object] } } }");
        let i = t.arr(vec![n(1.0)]);
        let i = t.arr(vec![i]);
        let i = t.arr(vec![i]);
        let i = t.arr(vec![i]);
        assert_eq!(inspect(i), "[ [ [ [Array] ] ] ]");
        let empty = t.obj(&[]);
        let c = t.obj(&[("c", empty)]);
        let b = t.obj(&[("b", c)]);
        let a = t.obj(&[("a", b)]);
        assert_eq!(inspect(a), "{ a: { b: { c: {} } } }");
        let m = t.map(&[(n(1.0), n(2.0))], false);
        let c = t.obj(&[("c", m)]);
        let b = t.obj(&[("b", c)]);
        let a = t.obj(&[("a", b)]);
        assert_eq!(inspect(a), "{ a: { b: { c: [Map] } } }");
    }

    #[test]
    fn class_instances() {
        let mut t = T::new();
        let a = t.class("A", Value::UNDEFINED);
        let b = t.class("B", Value::UNDEFINED);
        let c = t.class("C", a);
        let ia = t.inst(a, &[("f", n(1.0))]);
        let ib = t.inst(b, &[]);
        let ic = t.inst(c, &[("f", n(1.0))]);
        let arr = t.arr(vec![ia]);
        let o = t.obj(&[("x", ib)]);
        assert_eq!(
            format_log_args(&[ia, ib, ic, arr, o]).unwrap(),
            "A { f: 1 } B {} C { f: 1 } [ A { f: 1 } ] { x: B {} }"
        );
        let ia2 = t.inst(a, &[("f", n(1.0))]);
        let cc = t.obj(&[("c", ia2)]);
        let bb = t.obj(&[("b", cc)]);
        let aa = t.obj(&[("a", bb)]);
        assert_eq!(inspect(aa), "{ a: { b: { c: [A] } } }");
        assert_eq!(format_log_args(&[a, c]).unwrap(), "[class A] [class C extends A]");
        let s = t.class("S", Value::UNDEFINED);
        Builder::class_data(s).statics.set(Atom::intern("x"), n(1.0));
        assert_eq!(inspect(s), "[class S] { x: 1 }");
        let anon = t.class("", Value::UNDEFINED);
        let ia = t.inst(anon, &[("a", n(1.0))]);
        assert_eq!(inspect(ia), "{ a: 1 }");
        let plain = t.inst(t.rt.realm.classes.object, &[("a", n(1.0))]);
        assert_eq!(inspect(plain), "{ a: 1 }");
    }

    #[test]
    fn builtin_classes_and_functions() {
        let t = T::new();
        let c = t.rt.realm.classes;
        assert_eq!(inspect(c.map), "[Function: Map]");
        assert_eq!(inspect(c.error), "[Function: Error]");
        assert_eq!(inspect(c.type_error), "[Function: TypeError]");
        assert_eq!(inspect(c.object), "[Function: Object]");
        let mut t = t;
        let f = t.native("max");
        let anon = t.native("");
        assert_eq!(format_log_args(&[f, anon]).unwrap(), "[Function: max] [Function (anonymous)]");
        let g = |name: &str| t.rt.realm.globals[crate::builtins::global_slot(name)];
        let (math, json) = (g("Math"), g("JSON"));
        let arr = t.arr(vec![math]);
        assert_eq!(
            format_log_args(&[math, json, arr]).unwrap(),
            "Object [Math] {} Object [JSON] {} [ Object [Math] {} ]"
        );
    }

    #[test]
    fn maps_and_sets() {
        let mut t = T::new();
        let (a, b) = (t.s("a"), t.s("b"));
        let m = t.map(&[(a, n(1.0)), (b, n(2.0))], false);
        let s = t.map(&[(n(1.0), Value::UNDEFINED)], true);
        let em = t.map(&[], false);
        let es = t.map(&[], true);
        assert_eq!(
            format_log_args(&[m, s, em, es]).unwrap(),
            "Map(2) { 'a' => 1, 'b' => 2 } Set(1) { 1 } Map(0) {} Set(0) {}"
        );
        let o = t.obj(&[("a", n(1.0))]);
        let arr = t.arr(vec![n(1.0), n(2.0)]);
        let m = t.map(&[(o, arr)], false);
        assert_eq!(inspect(m), "Map(1) { { a: 1 } => [ 1, 2 ] }");
        let items: Vec<(Value, Value)> = (0..102).map(|i| (n(i as f64), n(i as f64))).collect();
        let big = t.map(&items, false);
        assert!(inspect(big).ends_with(", 98 => 98, 99 => 99, ... 2 more items }"));
        let big = t.map(&items, true);
        assert!(inspect(big).ends_with(", 95, 96, 97, 98, 99, ... 2 more items }"));
    }

    #[test]
    fn long_arrays() {
        let mut t = T::new();
        let a = t.arr(vec![n(0.0); 101]);
        let s = inspect(a);
        assert!(s.starts_with("[ 0, 0, "));
        assert!(s.ends_with(", 0, ... 1 more item ]"));
        assert_eq!(s.matches('0').count(), 100);
        let a = t.arr(vec![n(0.0); 102]);
        assert!(inspect(a).ends_with("0, ... 2 more items ]"));
    }

    #[test]
    fn circular_references() {
        let mut t = T::new();
        let o = t.obj(&[("a", n(1.0))]);
        t.set(o, "self", o);
        assert_eq!(inspect(o), "{ a: 1, self: [Circular] }");
        let inner = t.obj(&[]);
        t.set(inner, "me", inner);
        let x = t.obj(&[("inner", inner)]);
        assert_eq!(inspect(x), "{ inner: { me: [Circular] } }");
        let arr = t.arr(vec![]);
        let y = t.obj(&[("a", arr)]);
        ops::array_data(arr).unwrap().extend([arr, y]);
        assert_eq!(inspect(y), "{ a: [ [Circular], [Circular] ] }");
        let a = t.obj(&[]);
        t.set(a, "s", a);
        let both = t.arr(vec![a, a]);
        assert_eq!(inspect(both), "[ { s: [Circular] }, { s: [Circular] } ]");
    }

    #[test]
    fn accessors() {
        let mut t = T::new();
        let f = t.native("g");
        let mk = |t: &mut T, get: Value, set: Value| t.rt.heap.alloc(Body::Accessor(Mut::new(Accessor { get, set })));
        let a = mk(&mut t, f, Value::UNDEFINED);
        let b = mk(&mut t, Value::UNDEFINED, f);
        let c = mk(&mut t, f, f);
        let o = t.obj(&[("a", a), ("b", b), ("c", c)]);
        assert_eq!(inspect(o), "{ a: [Getter], b: [Setter], c: [Getter/Setter] }");
    }

    #[test]
    fn errors_print_their_stack() {
        let mut t = T::new();
        let c = t.rt.realm.classes;
        let e = t.error(c.type_error, "tt", Some("TypeError: tt\n    at f (x.raya:1:2)"));
        assert_eq!(format_log_args(&[e]).unwrap(), "TypeError: tt\n    at f (x.raya:1:2)");
        let arr = t.arr(vec![e]);
        assert_eq!(inspect(arr), "[\n  TypeError: tt\n      at f (x.raya:1:2)\n]");
        let o = t.obj(&[("a", e)]);
        assert_eq!(inspect(o), "{\n  a: TypeError: tt\n      at f (x.raya:1:2)\n}");
        let b = t.obj(&[("b", e)]);
        let o = t.obj(&[("a", b)]);
        assert_eq!(inspect(o), "{\n  a: {\n    b: TypeError: tt\n        at f (x.raya:1:2)\n  }\n}");
        // Errors at depth 3 still print in full.
        let cc = t.obj(&[("c", e)]);
        let bb = t.obj(&[("b", cc)]);
        let aa = t.obj(&[("a", bb)]);
        assert_eq!(
            inspect(aa),
            "{\n  a: {\n    b: {\n      c: TypeError: tt\n          at f (x.raya:1:2)\n    }\n  }\n}"
        );
        // No frames: in brackets.
        let r = t.error(c.range_error, "r", None);
        let arr = t.arr(vec![r]);
        assert_eq!(format_log_args(&[r, arr]).unwrap(), "[RangeError: r] [ [RangeError: r] ]");
        let m = t.s("e");
        let e2 = t.error(c.error, "m", Some("Error: m\n    at f (x.raya:1:2)"));
        let map = t.map(&[(m, e2)], false);
        assert_eq!(inspect(map), "Map(1) {\n  'e' => Error: m\n      at f (x.raya:1:2)\n}");
        let empty = t.error(c.error, "", None);
        assert_eq!(inspect(empty), "[Error]");
    }

    #[test]
    fn error_fields_cause_and_names() {
        let mut t = T::new();
        let c = t.rt.realm.classes;
        let e = t.error(c.error, "k", Some("Error: k\n    at f (x.raya:1:2)"));
        t.set(e, "code", n(5.0));
        assert_eq!(inspect(e), "Error: k\n    at f (x.raya:1:2) {\n  code: 5\n}");
        let arr = t.arr(vec![e]);
        assert_eq!(inspect(arr), "[\n  Error: k\n      at f (x.raya:1:2) {\n    code: 5\n  }\n]");
        let inner = t.error(c.error, "inner", Some("Error: inner\n    at f (x.raya:1:2)"));
        let outer = t.error(c.error, "c", Some("Error: c\n    at g (y.raya:2:3)"));
        t.set(outer, "cause", inner);
        assert_eq!(
            inspect(outer),
            "Error: c\n    at g (y.raya:2:3) {\n  [cause]: Error: inner\n      at f (x.raya:1:2)\n}"
        );
        let plain_cause = t.error(c.error, "with cause", None);
        t.set(plain_cause, "cause", n(5.0));
        assert_eq!(inspect(plain_cause), "[Error: with cause] { [cause]: 5 }");
        // A subclass without its own name: Node names the class.
        let my = t.class("MyError", c.error);
        let e = t.error(my, "m", None);
        assert_eq!(inspect(e), "[MyError: m]");
        let foo = t.class("Foo", c.error);
        let e = t.error(foo, "m", None);
        assert_eq!(inspect(e), "[Foo [Error]: m]");
        // `this.name = ...` after construction shows in the stack.
        let v = t.class("V", c.error);
        let e = t.error(v, "bad", Some("Error: bad\n    at f (x.raya:1:2)"));
        let name = t.s("ValidationError");
        t.set(e, "name", name);
        assert_eq!(inspect(e), "V [ValidationError]: bad\n    at f (x.raya:1:2)");
        assert_eq!(error_stack(e).unwrap(), "ValidationError: bad\n    at f (x.raya:1:2)");
        // A stack set by hand is kept.
        let e = t.error(c.error, "x", Some("custom"));
        assert_eq!(inspect(e), "[custom]");
    }

    #[test]
    fn log_args_are_joined_without_directives() {
        let mut t = T::new();
        let (f, x) = (t.s("%s and %d"), t.s("x"));
        assert_eq!(format_log_args(&[f, x, n(5.0)]).unwrap(), "%s and %d x 5");
        assert_eq!(format_log_args(&[]).unwrap(), "");
    }

    #[test]
    fn util_format_directives() {
        let mut t = T::new();
        let s = |t: &mut T, x: &str| t.s(x);
        let args = [
            s(&mut t, "%s is %d years and %i, %f, %j %O %% %c|"),
            s(&mut t, "Bob"),
            n(42.5),
            n(42.5),
            s(&mut t, "3.5"),
            t.obj(&[("a", n(1.0))]),
            t.obj(&[("b", n(2.0))]),
            s(&mut t, "css"),
            s(&mut t, "extra"),
            n(5.0),
        ];
        assert_eq!(format_with_directives(&args), "Bob is 42.5 years and 42, 3.5, {\"a\":1} { b: 2 } % | extra 5");
        let one = t.arr(vec![n(1.0)]);
        let args = [s(&mut t, "%o"), one];
        assert_eq!(format_with_directives(&args), "[ 1, [length]: 1 ]");
        let x = s(&mut t, "a");
        let arr = t.arr(vec![n(1.0), x]);
        let args = [s(&mut t, "%s %s"), n(-0.0), arr, t.obj(&[("a", n(1.0))]), Value::NULL];
        assert_eq!(format_with_directives(&args), "-0 [ 1, 'a' ] { a: 1 } null");
        let e = t.obj(&[]);
        let seven = t.arr(vec![n(7.0)]);
        let args = [s(&mut t, "%d %d %d %d %d"), s(&mut t, "42"), Value::NULL, Value::UNDEFINED, e, seven];
        assert_eq!(format_with_directives(&args), "42 0 NaN NaN 7");
        let args = [s(&mut t, "%i %f"), s(&mut t, "12.9px"), s(&mut t, "1e3x")];
        assert_eq!(format_with_directives(&args), "12 1000");
        let args = [s(&mut t, "100%"), n(5.0), s(&mut t, "%s")];
        assert_eq!(format_with_directives(&args), "100% 5 %s");
        let args = [s(&mut t, "%%")];
        assert_eq!(format_with_directives(&args), "%%");
        let args = [s(&mut t, "%% %s"), n(1.0)];
        assert_eq!(format_with_directives(&args), "% 1");
        let args = [s(&mut t, "a%"), n(1.0)];
        assert_eq!(format_with_directives(&args), "a% 1");
        let cyc = t.obj(&[]);
        t.set(cyc, "o", cyc);
        let args = [s(&mut t, "%j"), cyc];
        assert_eq!(format_with_directives(&args), "[Circular]");
        let d = t.obj(&[("c", n(1.0))]);
        let d = t.obj(&[("b", d)]);
        let d = t.obj(&[("a", d)]);
        let args = [s(&mut t, "%s"), d];
        assert_eq!(format_with_directives(&args), "{ a: [Object] }");
    }
}
