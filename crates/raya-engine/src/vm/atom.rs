//! Interned property names.
//!
//! Property keys are [`Atom`]s: small integers naming an interned string,
//! so a property lookup compares integers, not strings. The interner is
//! global to the process and shared by every worker (reads take a read
//! lock; only a name seen for the first time takes the write lock).
//! Interned names live for the life of the process.
//!
//! Array-index names ("0", "1", … below 2^31) are not stored at all: their
//! atom *is* the number with the top bit set, so `obj[i]` never touches the
//! interner and `as_index` is a bit test.

use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::OnceLock;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Atom(pub u32);

struct Interner {
    ids: HashMap<&'static str, Atom>,
    names: Vec<&'static str>,
}

fn interner() -> &'static RwLock<Interner> {
    static INTERNER: OnceLock<RwLock<Interner>> = OnceLock::new();
    INTERNER.get_or_init(|| {
        let mut i = Interner { ids: HashMap::new(), names: Vec::new() };
        for name in PREDEFINED {
            let s: &'static str = name;
            let a = Atom(i.names.len() as u32);
            i.names.push(s);
            i.ids.insert(s, a);
        }
        RwLock::new(i)
    })
}

const INDEX_BIT: u32 = 0x8000_0000;
/// Set (without `INDEX_BIT`) in the atom of a symbol: a key no string can
/// name. The rest is the symbol's index in `symbols()`.
const SYMBOL_BIT: u32 = 0x4000_0000;

/// Descriptions of the symbols made so far, by index.
fn symbols() -> &'static RwLock<Vec<&'static str>> {
    static SYMBOLS: OnceLock<RwLock<Vec<&'static str>>> = OnceLock::new();
    // The well-known ones first, at the indices `names` gives them.
    SYMBOLS.get_or_init(|| {
        RwLock::new(vec!["Symbol(Symbol.iterator)", "Symbol([[SymbolKey]])", "Symbol(Symbol.asyncIterator)"])
    })
}

/// Set (without `INDEX_BIT`) on the atoms of class private names (`#x`).
/// They come from their own table, never from a string, so no computed
/// key can name one; and they are left out of every key listing.
const PRIVATE_BIT: u32 = 0x2000_0000;

/// The private names: `key` is the name and its class's unique id
/// (`"#x\0<id>"`); the display name is the part before the NUL.
struct PrivateNames {
    ids: HashMap<String, Atom>,
    names: Vec<&'static str>,
}

fn private_names() -> &'static RwLock<PrivateNames> {
    static NAMES: OnceLock<RwLock<PrivateNames>> = OnceLock::new();
    NAMES.get_or_init(|| RwLock::new(PrivateNames { ids: HashMap::new(), names: Vec::new() }))
}

/// `s` as a canonical array index below 2^31 ("0", "17"; not "01", "-1").
fn parse_index(s: &str) -> Option<u32> {
    let b = s.as_bytes();
    if b.is_empty() || b.len() > 10 || (b.len() > 1 && b[0] == b'0') {
        return None;
    }
    let mut n: u64 = 0;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        n = n * 10 + (c - b'0') as u64;
    }
    (n < INDEX_BIT as u64).then_some(n as u32)
}

fn index_names() -> &'static RwLock<HashMap<u32, &'static str>> {
    static NAMES: OnceLock<RwLock<HashMap<u32, &'static str>>> = OnceLock::new();
    NAMES.get_or_init(|| RwLock::new(HashMap::new()))
}

impl Atom {
    /// The atom of array index `i` (must be below 2^31).
    #[inline]
    pub fn index(i: u32) -> Atom {
        debug_assert!(i < INDEX_BIT);
        Atom(INDEX_BIT | i)
    }

    pub fn intern(s: &str) -> Atom {
        if let Some(i) = parse_index(s) {
            return Atom::index(i);
        }
        if let Some(&a) = interner().read().ids.get(s) {
            return a;
        }
        let mut w = interner().write();
        if let Some(&a) = w.ids.get(s) {
            return a;
        }
        let leaked: &'static str = Box::leak(s.to_owned().into_boxed_str());
        let a = Atom(w.names.len() as u32);
        w.names.push(leaked);
        w.ids.insert(leaked, a);
        a
    }

    /// The atom of private name `key` (see [`PrivateNames`]): the same for
    /// the same key, distinct from every other atom.
    pub fn private(key: &str) -> Atom {
        if let Some(&a) = private_names().read().ids.get(key) {
            return a;
        }
        let mut w = private_names().write();
        if let Some(&a) = w.ids.get(key) {
            return a;
        }
        let display = key.split('\0').next().unwrap_or(key);
        let leaked: &'static str = Box::leak(display.to_owned().into_boxed_str());
        let a = Atom(PRIVATE_BIT | w.names.len() as u32);
        w.names.push(leaked);
        w.ids.insert(key.to_owned(), a);
        a
    }

    /// Whether this is a class private name (`#x`).
    #[inline(always)]
    pub fn is_private(self) -> bool {
        self.0 & (INDEX_BIT | SYMBOL_BIT | PRIVATE_BIT) == PRIVATE_BIT
    }

    /// The atom for `s` if it was ever interned (lookups of unknown keys
    /// need not grow the table).
    pub fn lookup(s: &str) -> Option<Atom> {
        if let Some(i) = parse_index(s) {
            return Some(Atom::index(i));
        }
        interner().read().ids.get(s).copied()
    }

    /// A new symbol key, distinct from every other atom. Its name (for
    /// messages) is `Symbol(description)`.
    pub fn new_symbol(description: &str) -> Atom {
        let name: &'static str = Box::leak(format!("Symbol({description})").into_boxed_str());
        let mut w = symbols().write();
        w.push(name);
        Atom(SYMBOL_BIT | (w.len() as u32 - 1))
    }

    /// A key made by [`Atom::new_symbol`]: never listed among an object's
    /// keys.
    #[inline]
    pub fn is_symbol(self) -> bool {
        self.0 & (INDEX_BIT | SYMBOL_BIT) == SYMBOL_BIT
    }

    pub fn as_str(self) -> &'static str {
        if self.is_symbol() {
            return symbols().read()[(self.0 & !SYMBOL_BIT) as usize];
        }
        if let Some(i) = self.as_index() {
            if let Some(&s) = index_names().read().get(&i) {
                return s;
            }
            let s: &'static str = Box::leak(i.to_string().into_boxed_str());
            index_names().write().insert(i, s);
            return s;
        }
        if self.is_private() {
            return private_names().read().names[(self.0 & !PRIVATE_BIT) as usize];
        }
        interner().read().names[self.0 as usize]
    }

    /// If this name is a canonical array index below 2^31, its value.
    /// Used for element access and JS property order (integer keys first).
    #[inline]
    pub fn as_index(self) -> Option<u32> {
        (self.0 & INDEX_BIT != 0).then_some(self.0 & !INDEX_BIT)
    }
}

/// Names the runtime refers to by constant.
const PREDEFINED: &[&str] = &[
    "length",
    "constructor",
    "prototype",
    "message",
    "name",
    "stack",
    "toString",
    "value",
    "done",
    "index",
    "rest",
    "cause",
    "id",
    "size",
    "capacity",
    "available",
    "__exec",
    "next",
    "return",
];

pub mod names {
    use super::Atom;
    pub const LENGTH: Atom = Atom(0);
    pub const CONSTRUCTOR: Atom = Atom(1);
    pub const PROTOTYPE: Atom = Atom(2);
    pub const MESSAGE: Atom = Atom(3);
    pub const NAME: Atom = Atom(4);
    pub const STACK: Atom = Atom(5);
    pub const TO_STRING: Atom = Atom(6);
    pub const VALUE: Atom = Atom(7);
    pub const DONE: Atom = Atom(8);
    pub const INDEX: Atom = Atom(9);
    pub const REST: Atom = Atom(10);
    pub const CAUSE: Atom = Atom(11);
    pub const ID: Atom = Atom(12);
    pub const SIZE: Atom = Atom(13);
    pub const CAPACITY: Atom = Atom(14);
    pub const AVAILABLE: Atom = Atom(15);
    /// `Promise.__exec`, the prelude's executor runner (`new Promise(fn)`).
    pub const PROMISE_EXEC: Atom = Atom(16);
    pub const NEXT: Atom = Atom(17);
    pub const RETURN: Atom = Atom(18);
    /// `Symbol.iterator` as a key.
    pub const ITERATOR: Atom = Atom(super::SYMBOL_BIT);
    /// Where a symbol value (an object, see `builtins::symbol`) keeps the
    /// key it stands for: a symbol itself, so no script can see it.
    pub const SYMBOL_KEY: Atom = Atom(super::SYMBOL_BIT | 1);
    /// `Symbol.asyncIterator` as a key.
    pub const ASYNC_ITERATOR: Atom = Atom(super::SYMBOL_BIT | 2);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predefined_names_match_constants() {
        assert_eq!(Atom::intern("length"), names::LENGTH);
        assert_eq!(Atom::intern("cause"), names::CAUSE);
        assert_eq!(Atom::intern("available"), names::AVAILABLE);
        assert_eq!(Atom::intern("__exec"), names::PROMISE_EXEC);
        assert_eq!(Atom::intern("return"), names::RETURN);
        assert_eq!(names::STACK.as_str(), "stack");
    }

    #[test]
    fn interning_is_stable() {
        let a = Atom::intern("some_property");
        assert_eq!(Atom::intern("some_property"), a);
        assert_eq!(a.as_str(), "some_property");
        assert_eq!(Atom::lookup("never-interned-xyz"), None);
    }

    #[test]
    fn private_names_are_distinct_from_strings() {
        let a = Atom::private("#x\0test-1");
        let b = Atom::private("#x\0test-2");
        assert_ne!(a, b);
        assert_eq!(Atom::private("#x\0test-1"), a);
        assert!(a.is_private() && !Atom::intern("#x").is_private());
        assert_ne!(Atom::intern("#x"), a);
        assert_eq!(a.as_str(), "#x");
        assert_eq!(a.as_index(), None);
        assert!(!Atom::index(5).is_private());
    }

    #[test]
    fn index_keys() {
        assert_eq!(Atom::intern("0").as_index(), Some(0));
        assert_eq!(Atom::intern("42").as_index(), Some(42));
        assert_eq!(Atom::intern("042").as_index(), None);
        assert_eq!(Atom::intern("-1").as_index(), None);
        assert_eq!(Atom::intern("4294967295").as_index(), None);
        assert_eq!(Atom::intern("7").as_str(), "7");
        assert_eq!(Atom::index(7), Atom::intern("7"));
    }
}
