//! `RegExp` and the string methods that take a regular expression
//! (`match`, `search`, `replace`, `replaceAll`, `split`; `matchAll` is the
//! prelude's iterator over `exec`).
//!
//! Patterns run on `regress`, an ECMAScript regular expression engine (see
//! `design/dependencies.md`). It matches on the string's UTF-8 text; every
//! position a script sees (`index`, `lastIndex`, offsets passed to replacer
//! functions) is converted to UTF-16 code units, as in JS.
//!
//! A RegExp is a host object (`vm::host`) of the realm's `RegExp` class:
//! its payload is the compiled pattern, shared by every object made from
//! the same literal site, and the object's own `lastIndex`.
//!
//! Long matches: `regress` backtracks and cannot be interrupted, so a
//! match that may take long runs on the blocking pool with the task
//! suspended (`std::io::block_on`): patterns that can backtrack
//! exponentially (a repeated group that itself repeats or alternates, a
//! backreference) on subjects past a few characters, and any pattern on a
//! very long subject. See `design/regexp.md`.
//!
//! Replacer functions call back into Raya, so `replace` with a function
//! is written in the prelude on top of `__matchList` here.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::RwLock;

use super::number::to_number;
use crate::std::io::block_on;
use crate::sync::Resume;
use crate::vm::atom::{names, Atom};
use crate::vm::host::{payload, HostClass, HostObj};
use crate::vm::native::{arg, NativeCtx};
use crate::vm::object::{Body, BuiltinKind};
use crate::vm::ops::{self, Fault, OpResult};
use crate::vm::realm::{Builder, Realm};
use crate::vm::runtime::Runtime;
use crate::vm::strbuf::StrBuf;
use crate::vm::task::Task;
use crate::vm::value::Value;

/// Subjects at least this long (bytes) run on the blocking pool when the
/// pattern can backtrack exponentially: below it even 2^n steps are quick.
const RISKY_SUBJECT: usize = 12;
/// Subjects at least this long run on the blocking pool whatever the
/// pattern (polynomial backtracking on a long text still takes long).
const HUGE_SUBJECT: usize = 1 << 20;

/// The flags of a pattern.
#[derive(Clone, Copy, Default, Debug, PartialEq)]
pub struct Flags {
    pub has_indices: bool,
    pub global: bool,
    pub ignore_case: bool,
    pub multiline: bool,
    pub dot_all: bool,
    pub unicode: bool,
    pub unicode_sets: bool,
    pub sticky: bool,
}

impl Flags {
    /// Parses `dgimsuvy` flags; None for an unknown or repeated flag, or
    /// `u` with `v`.
    pub fn parse(s: &str) -> Option<Flags> {
        crate::syntax::lexer::check_regex_flags(s).ok()?;
        let has = |c| s.contains(c);
        Some(Flags {
            has_indices: has('d'),
            global: has('g'),
            ignore_case: has('i'),
            multiline: has('m'),
            dot_all: has('s'),
            unicode: has('u'),
            unicode_sets: has('v'),
            sticky: has('y'),
        })
    }

    /// The flags in the order `RegExp.prototype.flags` lists them.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for (on, c) in [
            (self.has_indices, 'd'),
            (self.global, 'g'),
            (self.ignore_case, 'i'),
            (self.multiline, 'm'),
            (self.dot_all, 's'),
            (self.unicode, 'u'),
            (self.unicode_sets, 'v'),
            (self.sticky, 'y'),
        ] {
            if on {
                s.push(c);
            }
        }
        s
    }
}

/// A compiled pattern, shared by every RegExp object made from it.
pub struct Compiled {
    re: regress::Regex,
    /// `source` as JS shows it (`/` escaped, `(?:)` for an empty pattern).
    source: Box<str>,
    flags: Flags,
    /// Group names by group number (index 0: the whole match, unnamed).
    names: Box<[Option<Box<str>>]>,
    /// May backtrack exponentially (see the module comment).
    risky: bool,
}

impl Compiled {
    pub fn new(pattern: &str, flags: &str) -> Result<Compiled, String> {
        let Some(f) = Flags::parse(flags) else {
            return Err(format!("Invalid flags supplied to RegExp constructor '{flags}'"));
        };
        let mut rf = regress::Flags {
            icase: f.ignore_case,
            multiline: f.multiline,
            dot_all: f.dot_all,
            unicode: f.unicode,
            unicode_sets: f.unicode_sets,
            ..Default::default()
        };
        rf.no_opt = false;
        let unicode = f.unicode || f.unicode_sets;
        if let Some((m, _)) = crate::syntax::lexer::regex_syntax_gaps(pattern, unicode, f.unicode_sets) {
            return Err(format!("Invalid regular expression: /{pattern}/{}: {m}", f.text()));
        }
        // Without `u`/`v` a pattern is a sequence of UTF-16 code units
        // (an emoji in it is two, each its own atom), as JS reads it.
        let compiled = if f.unicode || f.unicode_sets {
            regress::Regex::with_flags(pattern, rf)
        } else {
            regress::Regex::from_unicode(pattern.encode_utf16().map(u32::from), rf)
        };
        let re = compiled.map_err(|e| {
            format!(
                "Invalid regular expression: /{pattern}/{}: {}",
                f.text(),
                crate::syntax::lexer::regex_message(pattern, &e.text)
            )
        })?;
        let names = group_names(pattern);
        Ok(Compiled { re, source: escape_source(pattern).into(), flags: f, names, risky: is_risky(pattern) })
    }

    fn has_names(&self) -> bool {
        self.names.iter().any(Option::is_some)
    }

    /// Whether matching `subject` should leave the worker.
    fn long(&self, subject: &str) -> bool {
        subject.len() >= HUGE_SUBJECT || (self.risky && subject.len() >= RISKY_SUBJECT)
    }

    /// The first match at byte `start` or after (exactly at `start` when
    /// sticky). `ascii`: `s` is known to be ASCII.
    fn find_at(&self, s: &str, start: usize, ascii: bool) -> Option<regress::Match> {
        if start > s.len() {
            return None;
        }
        // ASCII text needs no UTF-8 decoding; its case folding is the
        // same unless `u`/`v` fold a non-ASCII pattern character to ASCII
        // (`/\u017F/iu` matches "s").
        let m = if ascii && !(self.flags.ignore_case && (self.flags.unicode || self.flags.unicode_sets)) {
            self.re.find_from_ascii(s, start).next()?
        } else {
            self.re.find_from(s, start).next()?
        };
        if self.flags.sticky && m.start() != start {
            return None;
        }
        Some(m)
    }

    /// Every match from byte `start`, as a global replace or match finds
    /// them: after an empty match the search moves one character on.
    fn find_all(&self, s: &str, start: usize, ascii: bool) -> Vec<regress::Match> {
        let mut out = Vec::new();
        let mut at = start;
        while let Some(m) = self.find_at(s, at, ascii) {
            at = if m.end() == m.start() { next_char(s, m.end()) } else { m.end() };
            out.push(m);
            if at > s.len() {
                break;
            }
        }
        out
    }
}

/// `source` of a pattern: `/` and line terminators escaped so that
/// `/${source}/` reads back as the same pattern; `(?:)` when empty.
fn escape_source(p: &str) -> String {
    if p.is_empty() {
        return "(?:)".into();
    }
    let mut out = String::with_capacity(p.len());
    let mut escaped = false;
    let mut in_class = false;
    for c in p.chars() {
        match c {
            _ if escaped => {
                escaped = false;
                match c {
                    '\n' => out.push('n'),
                    '\r' => out.push('r'),
                    '\u{2028}' => out.push_str("u2028"),
                    '\u{2029}' => out.push_str("u2029"),
                    c => out.push(c),
                }
                continue;
            }
            '\\' => escaped = true,
            '[' => in_class = true,
            ']' => in_class = false,
            '/' if !in_class => {
                out.push_str("\\/");
                continue;
            }
            '\n' => {
                out.push_str("\\n");
                continue;
            }
            '\r' => {
                out.push_str("\\r");
                continue;
            }
            '\u{2028}' => {
                out.push_str("\\u2028");
                continue;
            }
            '\u{2029}' => {
                out.push_str("\\u2029");
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

/// Calls `f` for each character of `p` outside escapes and classes, with
/// its byte offset; escapes are reported as `\\` followed by the escaped
/// character (both skipped for `f` except the backslash).
fn scan(p: &str, mut f: impl FnMut(usize, char, &str)) {
    let mut chars = p.char_indices().peekable();
    let mut in_class = false;
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                f(i, '\\', &p[i..]);
                chars.next();
            }
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            _ if in_class => {}
            c => f(i, c, &p[i..]),
        }
    }
}

/// Names of the capture groups by number (index 0 for the whole match).
fn group_names(p: &str) -> Box<[Option<Box<str>>]> {
    let mut names = vec![None];
    scan(p, |_, c, rest| {
        if c != '(' {
            return;
        }
        if let Some(r) = rest.strip_prefix("(?<") {
            if !r.starts_with('=') && !r.starts_with('!') {
                names.push(r.find('>').map(|e| r[..e].into()));
            }
        } else if !rest.starts_with("(?") {
            names.push(None);
        }
    });
    names.into_boxed_slice()
}

/// Whether `p` can backtrack exponentially: a group that repeats (`*`,
/// `+`, `{n,}`, `{n,m}`) and itself contains a quantifier or an
/// alternative, or a backreference. Conservative: some safe patterns are
/// called risky (they only cost a trip to the blocking pool), and the
/// polynomial cases are left to the subject length limit.
fn is_risky(p: &str) -> bool {
    // Per open group: whether it contains a quantifier or `|`.
    let mut stack: Vec<bool> = vec![false];
    let mut risky = false;
    let mut last_group: Option<bool> = None;
    scan(p, |i, c, rest| {
        let after = &p[i + c.len_utf8()..];
        let repeats = matches!(c, '*' | '+') || (c == '{' && rest[1..].starts_with(|d: char| d.is_ascii_digit()));
        match c {
            '\\' => {
                if after.starts_with(|d: char| ('1'..='9').contains(&d)) || after.starts_with('k') {
                    risky = true;
                }
                last_group = None;
            }
            '(' => {
                stack.push(false);
                last_group = None;
            }
            ')' => {
                let inner = stack.pop().unwrap_or(false);
                if let Some(top) = stack.last_mut() {
                    *top |= inner;
                }
                last_group = Some(inner);
                return;
            }
            '|' => {
                if let Some(top) = stack.last_mut() {
                    *top = true;
                }
            }
            _ => {}
        }
        if repeats || c == '?' {
            if repeats && last_group == Some(true) {
                risky = true;
            }
            if let Some(top) = stack.last_mut() {
                *top = true;
            }
        }
        if c != ')' {
            last_group = None;
        }
    });
    risky
}

/// The byte offset of the character after the one at `b` (or `b + 1` at
/// the end, past the text).
fn next_char(s: &str, b: usize) -> usize {
    s[b..].chars().next().map_or(b + 1, |c| b + c.len_utf8())
}

/// UTF-16 positions of byte offsets, for offsets asked in increasing
/// order (restarts from the beginning otherwise). Identity on ASCII text.
struct Units<'a> {
    s: &'a str,
    ascii: bool,
    byte: usize,
    unit: usize,
}

impl<'a> Units<'a> {
    fn new(s: &'a str) -> Units<'a> {
        Units { s, ascii: s.is_ascii(), byte: 0, unit: 0 }
    }

    /// For a subject whose ASCII-ness its string already knows.
    fn known(s: &'a str, ascii: bool) -> Units<'a> {
        Units { s, ascii, byte: 0, unit: 0 }
    }

    fn at(&mut self, b: usize) -> usize {
        if self.ascii {
            return b;
        }
        if b < self.byte {
            self.byte = 0;
            self.unit = 0;
        }
        self.unit += self.s[self.byte..b].chars().map(char::len_utf16).sum::<usize>();
        self.byte = b;
        self.unit
    }
}

/// The byte offset of UTF-16 position `u` of `s` (a position inside a
/// surrogate pair moves to the pair's end); None past the end.
fn byte_of_unit(s: &str, u: usize) -> Option<usize> {
    if s.is_ascii() {
        return (u <= s.len()).then_some(u);
    }
    let mut units = 0;
    for (b, c) in s.char_indices() {
        if units >= u {
            return Some(b);
        }
        units += c.len_utf16();
    }
    (units >= u).then_some(s.len())
}

// ---------------------------------------------------------------------------
// RegExp objects
// ---------------------------------------------------------------------------

/// The payload of a RegExp object.
pub struct RegExpData {
    pub compiled: Arc<Compiled>,
    /// `lastIndex`, as the bits of an f64 (the object holds no `Value`s:
    /// see `vm::host`).
    last_index: AtomicU64,
}

impl RegExpData {
    fn last_index(&self) -> f64 {
        f64::from_bits(self.last_index.load(Ordering::Relaxed))
    }

    fn set_last_index(&self, n: f64) {
        self.last_index.store(n.to_bits(), Ordering::Relaxed);
    }
}

/// The host description of RegExp objects. Its methods are on the realm's
/// `RegExp` class instead (which scripts can name, for `instanceof`).
pub static REGEXP: HostClass = HostClass { name: "RegExp", methods: &[], getters: &[], next: None, inspect: None };

/// `/source/flags`, how a RegExp prints and converts to a string.
pub fn display(h: &HostObj) -> Option<String> {
    let d = h.get::<RegExpData>()?;
    Some(format!("/{}/{}", d.compiled.source, d.compiled.flags.text()))
}

fn new_object(rt: &mut Runtime, compiled: Arc<Compiled>) -> Value {
    let class = rt.realm.classes.regexp;
    let data = Arc::new(RegExpData { compiled, last_index: AtomicU64::new(0f64.to_bits()) });
    rt.heap.alloc(Body::Host(HostObj { class, desc: &REGEXP, data, fields: Box::new([]) }))
}

fn data(v: Value) -> Option<&'static RegExpData> {
    payload::<RegExpData>(v, &REGEXP)
}

pub fn is_regexp(v: Value) -> bool {
    data(v).is_some()
}

/// Patterns of regular expression literals, compiled once each: a
/// literal's `NewRegExp` instruction keeps its index here (plus one) in
/// its inline cache. Shared by every program of the process; a pattern
/// is stored once however many sites or programs use it.
struct Literals {
    list: Vec<Arc<Compiled>>,
    by_source: HashMap<Box<str>, u32>,
}

fn literals() -> &'static RwLock<Literals> {
    static L: OnceLock<RwLock<Literals>> = OnceLock::new();
    L.get_or_init(|| RwLock::new(Literals { list: Vec::new(), by_source: HashMap::new() }))
}

/// `NewRegExp`: a new RegExp object for the literal `/pattern/flags`
/// (`src`), its pattern compiled on the site's first run.
pub fn literal(rt: &mut Runtime, task: &Task, src: Value, ic: &AtomicU32) -> OpResult<Value> {
    let cached = ic.load(Ordering::Relaxed);
    if cached != 0 {
        let c = literals().read().list[cached as usize - 1].clone();
        return Ok(new_object(rt, c));
    }
    let text = ops::as_str(src).unwrap_or("//");
    let known = literals().read().by_source.get(text).copied();
    let idx = match known {
        Some(i) => i,
        None => {
            let cut = text.rfind('/').unwrap_or(0);
            let pattern = text.get(1..cut).unwrap_or("");
            let compiled = Compiled::new(pattern, &text[cut + 1..]).map_err(|m| {
                let class = rt.realm.classes.syntax_error;
                Fault::Thrown(rt.make_error(task, class, &m))
            })?;
            let mut l = literals().write();
            let i = l.list.len() as u32;
            l.list.push(Arc::new(compiled));
            l.by_source.insert(text.into(), i);
            i
        }
    };
    ic.store(idx + 1, Ordering::Relaxed);
    let c = literals().read().list[idx as usize].clone();
    Ok(new_object(rt, c))
}

pub fn install(b: &mut Builder, realm: &mut Realm) {
    let class = realm.classes.regexp;
    realm.globals[super::global_slot("RegExp")] = class;
    for (name, f) in [
        ("exec", exec as crate::vm::object::NativeFn),
        ("test", test),
        ("toString", to_string),
        ("__matchList", match_list),
    ] {
        b.proto_native(class, name, f);
    }
    let getters: [(&'static str, crate::vm::object::NativeFn); 10] = [
        ("source", get_source),
        ("flags", get_flags),
        ("global", |c, t, _| flag(c, t, |f| f.global)),
        ("ignoreCase", |c, t, _| flag(c, t, |f| f.ignore_case)),
        ("multiline", |c, t, _| flag(c, t, |f| f.multiline)),
        ("dotAll", |c, t, _| flag(c, t, |f| f.dot_all)),
        ("unicode", |c, t, _| flag(c, t, |f| f.unicode)),
        ("unicodeSets", |c, t, _| flag(c, t, |f| f.unicode_sets)),
        ("sticky", |c, t, _| flag(c, t, |f| f.sticky)),
        ("hasIndices", |c, t, _| flag(c, t, |f| f.has_indices)),
    ];
    for (name, f) in getters {
        accessor(b, class, name, f, None);
    }
    accessor(b, class, "lastIndex", get_last_index, Some(set_last_index));
    let t = &mut realm.methods.string;
    b.method(t, "match", string_match);
    b.method(t, "search", string_search);
}

fn accessor(
    b: &mut Builder,
    class: Value,
    name: &'static str,
    get: crate::vm::object::NativeFn,
    set: Option<crate::vm::object::NativeFn>,
) {
    use crate::vm::object::{Accessor, Mut};
    let get = b.native(name, get);
    let set = set.map_or(Value::UNDEFINED, |f| b.native(name, f));
    let acc = b.heap.alloc(Body::Accessor(Mut::new(Accessor { get, set })));
    Builder::class_data(class).proto_props.set(Atom::intern(name), acc);
}

/// The class `RegExp` (constructed as `BuiltinKind::RegExp`).
pub fn make_class(b: &mut Builder) -> Value {
    b.class("RegExp", Value::UNDEFINED, BuiltinKind::RegExp, None, Some(call))
}

fn this_data(ctx: &mut NativeCtx, this: Value, method: &str) -> Result<&'static RegExpData, Value> {
    data(this).ok_or_else(|| {
        ctx.type_error(format!(
            "RegExp.prototype.{method} requires that 'this' be a RegExp object (got {})",
            ops::type_of(this)
        ))
    })
}

/// `new RegExp(pattern, flags)`.
pub fn construct(ctx: &mut NativeCtx, args: &[Value]) -> Result<Value, Value> {
    let (p, f) = (arg(args, 0), arg(args, 1));
    let (pattern, flags) = match data(p) {
        Some(d) => {
            let flags = if f.is_undefined() { d.compiled.flags.text() } else { ops::to_display(f) };
            if flags == d.compiled.flags.text() {
                // Same pattern and flags: share the compiled form.
                return Ok(new_object(ctx.rt, d.compiled.clone()));
            }
            (unescape_source(&d.compiled.source), flags)
        }
        None => {
            let pattern = if p.is_undefined() { String::new() } else { ops::to_display(p) };
            (pattern, if f.is_undefined() { String::new() } else { ops::to_display(f) })
        }
    };
    match Compiled::new(&pattern, &flags) {
        Ok(c) => Ok(new_object(ctx.rt, Arc::new(c))),
        Err(m) => Err(ctx.syntax_error(m)),
    }
}

/// `source` back to a pattern (`(?:)` is the empty pattern's source; an
/// escaped `/` means the same as `/`).
fn unescape_source(s: &str) -> String {
    if s == "(?:)" {
        String::new()
    } else {
        s.to_string()
    }
}

/// `RegExp(pattern, flags)` without `new`: the same RegExp when given one
/// and no flags, a new one otherwise.
fn call(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    if is_regexp(arg(args, 0)) && arg(args, 1).is_undefined() {
        return Ok(arg(args, 0));
    }
    construct(ctx, args)
}

fn get_source(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let d = this_data(ctx, this, "source")?;
    Ok(ctx.str(&*d.compiled.source))
}

fn get_flags(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let d = this_data(ctx, this, "flags")?;
    Ok(ctx.str(d.compiled.flags.text()))
}

fn flag(ctx: &mut NativeCtx, this: Value, f: fn(&Flags) -> bool) -> Result<Value, Value> {
    let d = this_data(ctx, this, "flags")?;
    Ok(Value::bool(f(&d.compiled.flags)))
}

fn get_last_index(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let d = this_data(ctx, this, "lastIndex")?;
    Ok(Value::number(d.last_index()))
}

fn set_last_index(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let d = this_data(ctx, this, "lastIndex")?;
    d.set_last_index(to_number(arg(args, 0)));
    Ok(Value::UNDEFINED)
}

fn to_string(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let d = this_data(ctx, this, "toString")?;
    let s = format!("/{}/{}", d.compiled.source, d.compiled.flags.text());
    Ok(ctx.str(s))
}

/// ToString of a subject, as the methods taking one convert it.
fn subject(ctx: &mut NativeCtx, v: Value) -> Result<Value, Value> {
    if ops::as_str(v).is_some() {
        return Ok(v);
    }
    match ops::try_to_display(v) {
        Ok(s) => Ok(ctx.str(s)),
        Err(f) => Err(ctx.fault(f)),
    }
}

fn text(v: Value) -> &'static str {
    ops::as_str(v).unwrap_or("")
}

/// Whether string `v` is ASCII (known from its length, no scan).
fn is_ascii(v: Value) -> bool {
    ops::js_str(v).is_some_and(|js| js.is_ascii())
}

/// The exact WTF-8 of string `v` when it holds a lone surrogate.
fn ill_formed(v: Value) -> Option<&'static [u8]> {
    ops::js_str(v).filter(|js| !js.is_well_formed()).map(|js| js.wtf8())
}

/// The piece at bytes `r` of string `subj` (text `s`), exactly: ASCII
/// without a scan, a lone surrogate kept.
fn piece(rt: &mut Runtime, subj: Value, s: &str, r: Range<usize>) -> Value {
    match ops::js_str(subj) {
        Some(js) if js.is_ascii() => rt.heap.alloc_ascii_str(&s[r]),
        Some(js) if !js.is_well_formed() => rt.heap.alloc_wtf8(js.wtf8()[r].to_vec()),
        _ => rt.heap.alloc_str(&s[r]),
    }
}

/// Which matches an operation needs.
#[derive(Clone, Copy)]
enum Want {
    /// The first at byte offset `.0` or after.
    First(usize),
    /// All of them from byte offset `.0`.
    All(usize),
}

/// `ascii`: `s` is known to be ASCII (then it holds no astral character).
/// `ill`: the exact WTF-8 of a subject with a lone surrogate (`s` is its
/// lossy text, with the same byte offsets).
fn search(c: &Compiled, s: &str, ill: Option<&[u8]>, want: Want, ascii: bool) -> Vec<regress::Match> {
    if !ascii && !c.flags.unicode && !c.flags.unicode_sets && (ill.is_some() || s.bytes().any(|b| b >= 0xF0)) {
        return search_units(c, s, ill, want);
    }
    // With `u`/`v`, a lone surrogate is one code point, which only `.`, a
    // negated class or `\p`-less escapes can match: the lossy text's
    // U+FFFD stands in for it.
    match want {
        Want::First(at) => c.find_at(s, at, ascii).into_iter().collect(),
        Want::All(at) => c.find_all(s, at, ascii),
    }
}

/// Without `u` or `v`, JS matches UTF-16 code units: a character outside
/// the Basic Multilingual Plane is two units, which `.` and classes see
/// one by one. A subject holding such a character is matched as UTF-16
/// (`regress`'s UCS-2 input) and the positions are mapped back to bytes; a
/// position between the halves of a pair maps to the pair's start
/// (a lone surrogate of the string is one unit and three bytes, as its
/// U+FFFD in `s`).
fn search_units(c: &Compiled, s: &str, ill: Option<&[u8]>, want: Want) -> Vec<regress::Match> {
    let units: Vec<u16> = match ill {
        Some(w) => crate::wtf8::units(w).collect(),
        None => s.encode_utf16().collect(),
    };
    let mut byte: Vec<usize> = Vec::with_capacity(units.len() + 1);
    for (b, ch) in s.char_indices() {
        byte.push(b);
        if ch.len_utf16() == 2 {
            byte.push(b);
        }
    }
    byte.push(s.len());
    let (from, all) = match want {
        Want::First(b) => (b, false),
        Want::All(b) => (b, true),
    };
    let mut at = Units::new(s).at(from);
    let mut out = Vec::new();
    while at <= units.len() {
        let Some(mut m) = c.re.find_from_ucs2(&units, at).next() else { break };
        if c.flags.sticky && m.range.start != at {
            break;
        }
        at = if m.range.is_empty() { m.range.end + 1 } else { m.range.end };
        let to_bytes = |r: &Range<usize>| byte[r.start]..byte[r.end];
        m.range = to_bytes(&m.range);
        for r in m.captures.iter_mut().flatten() {
            *r = to_bytes(r);
        }
        out.push(m);
        if !all {
            break;
        }
    }
    out
}

/// Finds the matches `want` asks for in string `subj` and gives them to
/// `build`, on this worker or, for a match that may take long, on the
/// blocking pool with the task suspended (`build` then runs on a worker
/// when the match is done). `subj` and every value `build` captures must
/// be held by the caller's registers (arguments and receiver are), so
/// they live while the task waits.
fn with_matches(
    ctx: &mut NativeCtx,
    c: &Arc<Compiled>,
    subj: Value,
    want: Want,
    build: impl FnOnce(&mut Runtime, &'static str, Vec<regress::Match>) -> OpResult<Value> + Send + 'static,
) -> Result<Value, Value> {
    let s = text(subj);
    let ascii = is_ascii(subj);
    let ill = ill_formed(subj);
    if !c.long(s) {
        let ms = search(c, s, ill, want, ascii);
        return build(ctx.rt, s, ms).map_err(|f| ctx.fault(f));
    }
    let (job_c, owned, owned_ill) = (c.clone(), Box::<str>::from(s), ill.map(Box::<[u8]>::from));
    block_on(
        ctx,
        "a regular expression match",
        move || search(&job_c, &owned, owned_ill.as_deref(), want, ascii),
        move |rt, trace, ms| match build(rt, text(subj), ms) {
            Ok(v) => Resume::Value(v),
            Err(f) => Resume::Throw(fault_value(rt, trace, f)),
        },
    )
}

/// A fault raised after a match on the blocking pool, as an error with
/// the caller's stack.
fn fault_value(rt: &mut Runtime, trace: &crate::std::io::Trace, f: Fault) -> Value {
    let c = rt.realm.classes;
    let (class, msg) = match f {
        Fault::Type(m) => (c.type_error, m),
        Fault::Range(m) => (c.range_error, m),
        Fault::Reference(m) => (c.reference_error, m),
        Fault::Thrown(v) => return v,
    };
    trace.error(rt, class, &msg, &[])
}

/// The array `exec` returns for match `m` of `s` (the string value
/// `subj`): the match and its groups, with `index`, `input`, `groups`
/// and, for the `d` flag, `indices`.
fn match_array(rt: &mut Runtime, c: &Compiled, subj: Value, s: &str, m: &regress::Match) -> OpResult<Value> {
    let mut units = Units::known(s, is_ascii(subj));
    // Every piece of an ASCII subject is ASCII: no scan for its UTF-16
    // length.
    let mut items: Vec<Value> = Vec::with_capacity(m.captures.len() + 1);
    for g in m.groups() {
        items.push(match g {
            Some(r) => piece(rt, subj, s, r),
            None => Value::UNDEFINED,
        });
    }
    let index = Value::number(units.at(m.start()) as f64);
    let groups = named_groups(rt, c, &items);
    let [input, groups_key, indices_key] = extra_names();
    let mut extras = vec![(names::INDEX, index), (input, subj), (groups_key, groups)];
    if c.flags.has_indices {
        let pairs: Vec<Value> = m
            .groups()
            .map(|g| match g {
                Some(r) => {
                    let (a, b) = (units.at(r.start), units.at(r.end));
                    rt.heap.alloc_array(vec![Value::number(a as f64), Value::number(b as f64)])
                }
                None => Value::UNDEFINED,
            })
            .collect();
        let igroups = named_groups(rt, c, &pairs);
        let indices = rt.heap.alloc_array_with(pairs, vec![(groups_key, igroups)]);
        extras.push((indices_key, indices));
    }
    Ok(rt.heap.alloc_array_with(items, extras))
}

/// `input`, `groups`, `indices`: interned once (`index` is predefined).
fn extra_names() -> [Atom; 3] {
    static NAMES: OnceLock<[Atom; 3]> = OnceLock::new();
    *NAMES.get_or_init(|| [Atom::intern("input"), Atom::intern("groups"), Atom::intern("indices")])
}

/// The `groups` object for group values `vals` (by number), or undefined
/// when the pattern has no named groups.
fn named_groups(rt: &mut Runtime, c: &Compiled, vals: &[Value]) -> Value {
    if !c.has_names() {
        return Value::UNDEFINED;
    }
    let mut map = crate::vm::object::PropMap::new();
    for (i, name) in c.names.iter().enumerate() {
        if let Some(n) = name {
            map.set(Atom::intern(n), vals.get(i).copied().unwrap_or(Value::UNDEFINED));
        }
    }
    use crate::vm::object::{Mut, ObjectData};
    let class = rt.realm.classes.match_groups;
    rt.heap.alloc(Body::Object(Mut::new(ObjectData { class, props: map, frozen: false })))
}

/// Where a search of `re` starts, from `lastIndex` (global or sticky), or
/// None when `lastIndex` is past the end (which resets it to 0).
fn start_of(d: &RegExpData, s: &str) -> Option<usize> {
    let f = d.compiled.flags;
    if !f.global && !f.sticky {
        return Some(0);
    }
    let li = d.last_index();
    let li = if li.is_nan() || li <= 0.0 { 0.0 } else { li.floor() };
    let at = if li > u32::MAX as f64 { None } else { byte_of_unit(s, li as usize) };
    if at.is_none() {
        d.set_last_index(0.0);
    }
    at
}

/// `re.exec(s)` and `re.test(s)` (`full`: build the result array).
fn exec_like(ctx: &mut NativeCtx, this: Value, args: &[Value], full: bool) -> Result<Value, Value> {
    let d = this_data(ctx, this, if full { "exec" } else { "test" })?;
    let subj = subject(ctx, arg(args, 0))?;
    let s = text(subj);
    let Some(at) = start_of(d, s) else {
        return Ok(if full { Value::NULL } else { Value::FALSE });
    };
    let c = d.compiled.clone();
    let re = this;
    with_matches(ctx, &c, subj, Want::First(at), move |rt, s, ms| {
        let d = data(re).expect("a RegExp");
        let f = d.compiled.flags;
        let Some(m) = ms.first() else {
            if f.global || f.sticky {
                d.set_last_index(0.0);
            }
            return Ok(if full { Value::NULL } else { Value::FALSE });
        };
        if f.global || f.sticky {
            d.set_last_index(Units::known(s, is_ascii(subj)).at(m.end()) as f64);
        }
        if full {
            match_array(rt, &d.compiled, subj, s, m)
        } else {
            Ok(Value::TRUE)
        }
    })
}

fn exec(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    exec_like(ctx, this, args, true)
}

fn test(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    exec_like(ctx, this, args, false)
}

/// `re.__matchList(s)`: the match arrays a replace with a replacer
/// function visits (all of them for a global pattern, from the start,
/// resetting `lastIndex`; else the first, from `lastIndex` if sticky).
fn match_list(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let d = this_data(ctx, this, "replace")?;
    let subj = subject(ctx, arg(args, 0))?;
    let s = text(subj);
    let f = d.compiled.flags;
    let want = if f.global {
        d.set_last_index(0.0);
        Want::All(0)
    } else {
        match start_of(d, s) {
            Some(at) => Want::First(at),
            None => return Ok(ctx.array(Vec::new())),
        }
    };
    let c = d.compiled.clone();
    let re = this;
    with_matches(ctx, &c, subj, want, move |rt, s, ms| {
        let d = data(re).expect("a RegExp");
        if f.sticky && !f.global {
            let li = ms.first().map_or(0, |m| Units::new(s).at(m.end()));
            d.set_last_index(li as f64);
        }
        let mut out = Vec::with_capacity(ms.len());
        for m in &ms {
            out.push(match_array(rt, &d.compiled, subj, s, m)?);
        }
        Ok(rt.heap.alloc_array(out))
    })
}

// ---------------------------------------------------------------------------
// String methods
// ---------------------------------------------------------------------------

fn this_string(ctx: &mut NativeCtx, this: Value, method: &str) -> Result<Value, Value> {
    if ops::as_str(this).is_some() {
        return Ok(this);
    }
    Err(ctx.type_error(format!("String.prototype.{method} called on a non-string ({})", ops::type_of(this))))
}

/// The RegExp a string method's pattern argument stands for: the RegExp
/// itself, or a new one from a string (`flags` added).
fn as_regexp(ctx: &mut NativeCtx, v: Value, flags: &str) -> Result<Value, Value> {
    if is_regexp(v) {
        return Ok(v);
    }
    let p = if v.is_undefined() { Value::UNDEFINED } else { subject(ctx, v)? };
    let f = ctx.str(flags);
    construct(ctx, &[p, f])
}

/// `s.match(re)`: like `re.exec(s)`; with `g`, every matched text (null
/// when there is none).
fn string_match(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let subj = this_string(ctx, this, "match")?;
    let re = as_regexp(ctx, arg(args, 0), "")?;
    let d = data(re).expect("a RegExp");
    if !d.compiled.flags.global {
        return exec_like(ctx, re, &[subj], true);
    }
    d.set_last_index(0.0);
    let c = d.compiled.clone();
    with_matches(ctx, &c, subj, Want::All(0), move |rt, s, ms| {
        if ms.is_empty() {
            return Ok(Value::NULL);
        }
        let items = ms.iter().map(|m| piece(rt, subj, s, m.range())).collect();
        Ok(rt.heap.alloc_array(items))
    })
}

/// `s.search(re)`: the UTF-16 index of the first match, or -1
/// (`lastIndex` and `g` play no part).
fn string_search(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let subj = this_string(ctx, this, "search")?;
    let re = as_regexp(ctx, arg(args, 0), "")?;
    let c = data(re).expect("a RegExp").compiled.clone();
    let sticky = c.flags.sticky;
    with_matches(ctx, &c, subj, Want::First(0), move |_, s, ms| {
        Ok(Value::number(match ms.first() {
            Some(m) if !sticky || m.start() == 0 => Units::new(s).at(m.start()) as f64,
            _ => -1.0,
        }))
    })
}

/// Appends replacement `repl` for match `m` of `s`, expanding `$$ $& $\`
/// $' $n $nn $<name>` (GetSubstitution).
fn substitute(out: &mut StrBuf, repl: &str, s: &str, m: &regress::Match, c: &Compiled) -> OpResult<()> {
    if !repl.contains('$') {
        return out.push_str(repl);
    }
    let caps: Vec<Option<Range<usize>>> = m.groups().collect();
    let ngroups = caps.len() - 1;
    let b = repl.as_bytes();
    let (mut i, mut lit) = (0, 0);
    let group = |n: usize| caps.get(n).cloned().flatten().map_or("", |r| &s[r]);
    while i + 1 < b.len() {
        if b[i] != b'$' {
            i += 1;
            continue;
        }
        let (piece, len): (Option<&str>, usize) = match b[i + 1] {
            b'$' => (Some("$"), 2),
            b'&' => (Some(&s[m.range()]), 2),
            b'`' => (Some(&s[..m.start()]), 2),
            b'\'' => (Some(&s[m.end()..]), 2),
            d @ b'0'..=b'9' => {
                let one = (d - b'0') as usize;
                let two = b.get(i + 2).filter(|x| x.is_ascii_digit()).map(|&x| one * 10 + (x - b'0') as usize);
                match two {
                    Some(n) if (1..=ngroups).contains(&n) => (Some(group(n)), 3),
                    _ if (1..=ngroups).contains(&one) => (Some(group(one)), 2),
                    _ => (None, 0),
                }
            }
            b'<' if c.has_names() => match repl[i + 2..].find('>') {
                Some(e) => {
                    let name = &repl[i + 2..i + 2 + e];
                    let v = c.names.iter().position(|n| n.as_deref() == Some(name)).map_or("", group);
                    (Some(v), e + 3)
                }
                None => (None, 0),
            },
            _ => (None, 0),
        };
        match piece {
            Some(p) => {
                out.push_str(&repl[lit..i])?;
                out.push_str(p)?;
                i += len;
                lit = i;
            }
            None => i += 1,
        }
    }
    out.push_str(&repl[lit..])
}

/// `s.replace(re, str)` and `s.replaceAll(re, str)` with a RegExp (the
/// string natives call this; `all` is replaceAll, which requires `g`).
pub fn replace(ctx: &mut NativeCtx, this: Value, re: Value, repl: Value, all: bool) -> Result<Value, Value> {
    let d = data(re).expect("a RegExp");
    let f = d.compiled.flags;
    if all && !f.global {
        return Err(ctx.type_error("replaceAll must be called with a global RegExp"));
    }
    let repl = subject(ctx, repl)?;
    let want = if f.global {
        d.set_last_index(0.0);
        Want::All(0)
    } else {
        match start_of(d, text(this)) {
            Some(at) => Want::First(at),
            None => return Ok(this),
        }
    };
    let c = d.compiled.clone();
    with_matches(ctx, &c, this, want, move |rt, s, ms| {
        let d = data(re).expect("a RegExp");
        if f.sticky && !f.global {
            let li = ms.first().map_or(0, |m| Units::new(s).at(m.end()));
            d.set_last_index(li as f64);
        }
        if ms.is_empty() {
            return Ok(this);
        }
        let r = text(repl);
        // The text between matches is copied exactly (a lone surrogate
        // kept); `s` has the same byte offsets.
        let w = ops::js_str(this).map_or(s.as_bytes(), |js| js.wtf8());
        let mut out = StrBuf::with_capacity(s.len())?;
        let mut last = 0;
        for m in &ms {
            out.push_wtf8(&w[last..m.start()])?;
            substitute(&mut out, r, s, m, &d.compiled)?;
            last = m.end();
        }
        out.push_wtf8(&w[last..])?;
        Ok(rt.heap.alloc_buf(out))
    })
}

/// `s.split(re, limit)`: the pieces between matches, with each match's
/// groups spliced in (SplitMatcher semantics: an empty match at the end of
/// the previous piece does not split).
pub fn split(ctx: &mut NativeCtx, this: Value, re: Value, lim: usize) -> Result<Value, Value> {
    let c = data(re).expect("a RegExp").compiled.clone();
    if lim == 0 {
        return Ok(ctx.array(Vec::new()));
    }
    let s = text(this);
    if s.is_empty() {
        // Split of "": [] if the pattern matches the empty string.
        let hit = c.re.find(s).is_some();
        return Ok(if hit { ctx.array(Vec::new()) } else { ctx.array(vec![this]) });
    }
    // Split ignores `g` and `y`. Its matcher (SplitMatcher: at each
    // position, a match that ends where the last piece ended does not
    // split) visits exactly the matches a global search finds, minus the
    // empty ones at the end of the last piece and those at the very end.
    let flags = Flags { global: false, sticky: false, ..c.flags };
    let plain = Arc::new(Compiled {
        re: c.re.clone(),
        source: c.source.clone(),
        flags,
        names: c.names.clone(),
        risky: c.risky,
    });
    with_matches(ctx, &plain, this, Want::All(0), move |rt, s, ms| {
        let mut out = Vec::new();
        let mut p = 0usize;
        for m in &ms {
            if m.start() >= s.len() {
                break;
            }
            if m.end() == p {
                continue;
            }
            out.push(piece(rt, this, s, p..m.start()));
            if out.len() == lim {
                return Ok(rt.heap.alloc_array(out));
            }
            for g in m.groups().skip(1) {
                out.push(match g {
                    Some(r) => piece(rt, this, s, r),
                    None => Value::UNDEFINED,
                });
                if out.len() == lim {
                    return Ok(rt.heap.alloc_array(out));
                }
            }
            p = m.end();
        }
        out.push(piece(rt, this, s, p..s.len()));
        Ok(rt.heap.alloc_array(out))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn risky_patterns_are_the_ones_that_can_backtrack_exponentially() {
        for p in [r"(a+)+$", r"(a|aa)*b", r"(\w+\s?)*$", r"(.*a){3,}", r"(a)\1", r"(?<x>a)\k<x>", r"((ab)*c)+"] {
            assert!(is_risky(p), "{p}");
        }
        for p in [r"a+b*", r"(ab)+", r"(a|b)c", r"[(a+)+]", r"\(a+\)+", r"^(\S+) (\d+)$", r"(a+)?"] {
            assert!(!is_risky(p), "{p}");
        }
    }

    #[test]
    fn group_names_follow_group_numbers() {
        let n = group_names(r"(a)(?:b)(?<year>\d+)[(](?=x)(?<m>c)\((d)");
        let got: Vec<Option<&str>> = n.iter().map(|x| x.as_deref()).collect();
        assert_eq!(got, vec![None, None, Some("year"), Some("m"), None]);
    }

    #[test]
    fn source_escapes_slashes_and_line_terminators() {
        assert_eq!(escape_source("a/b"), r"a\/b");
        assert_eq!(escape_source(r"a\/b"), r"a\/b");
        assert_eq!(escape_source("[/]"), "[/]");
        assert_eq!(escape_source("a\nb"), r"a\nb");
        assert_eq!(escape_source(""), "(?:)");
    }

    #[test]
    fn utf16_positions() {
        let s = "é😀x";
        let mut u = Units::new(s);
        assert_eq!(u.at(0), 0);
        assert_eq!(u.at(2), 1);
        assert_eq!(u.at(6), 3);
        assert_eq!(u.at(2), 1);
        assert_eq!(byte_of_unit(s, 3), Some(6));
        assert_eq!(byte_of_unit(s, 2), Some(6));
        assert_eq!(byte_of_unit(s, 4), Some(7));
        assert_eq!(byte_of_unit(s, 5), None);
    }
}
