//! The string length limit, and building strings within it.
//!
//! Every operation that builds a string a script controls the size of
//! (concatenation, template literals, `String(x)`, `join`, `repeat`,
//! `padStart`, `replace`, `JSON.stringify`, console inspection, …) checks
//! the limit here before or while it builds, and reserves memory fallibly:
//! a string past [`MAX_STRING_LEN`], or one the allocator refuses, is a
//! `RangeError: Invalid string length`, never an abort.

use super::ops::{Fault, OpResult};

/// Longest string, in UTF-16 code units (V8's limit on 64-bit targets,
/// which Node shares).
pub const MAX_STRING_LEN: usize = (1 << 29) - 24;

pub const INVALID_STRING_LENGTH: &str = "Invalid string length";

/// The fault for a string that is too long (or could not be allocated).
#[cold]
pub fn too_long() -> Fault {
    Fault::Range(INVALID_STRING_LENGTH.into())
}

/// Checks that a string of `units` UTF-16 code units may be built.
#[inline]
pub fn check_len(units: usize) -> OpResult<()> {
    if units > MAX_STRING_LEN {
        Err(too_long())
    } else {
        Ok(())
    }
}

/// UTF-16 length of `s`.
pub fn utf16_len(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.encode_utf16().count()
    }
}

/// Checks a string already built as Rust text (exact: counts code units
/// only when its UTF-8 length alone cannot settle it).
pub fn check_str(s: &str) -> OpResult<()> {
    if s.len() <= MAX_STRING_LEN {
        return Ok(());
    }
    check_len(utf16_len(s))
}

/// Watches a `String` that code builds by itself (JSON, inspection) and
/// says when it passed the limit; checking after every piece costs a
/// comparison until the UTF-8 length passes the limit, then counts only
/// the bytes added since the last check.
#[derive(Default)]
pub struct LenGuard {
    /// Bytes of the string counted into `units`.
    counted: usize,
    units: usize,
}

impl LenGuard {
    #[inline]
    pub fn check(&mut self, s: &str) -> OpResult<()> {
        if s.len() <= MAX_STRING_LEN {
            return Ok(());
        }
        self.count(s)
    }

    #[cold]
    fn count(&mut self, s: &str) -> OpResult<()> {
        // `counted` is a length the string had: always a char boundary.
        self.units += utf16_len(&s[self.counted.min(s.len())..]);
        self.counted = s.len();
        check_len(self.units)
    }
}

/// A string under construction that never passes the limit: every append
/// is checked and reserves memory fallibly.
///
/// It holds WTF-8: [`StrBuf::push_js`] appends a script string exactly,
/// lone surrogates included, merging a high surrogate at the end of the
/// text with a low one at the start of the piece (`crate::wtf8::push`).
#[derive(Default)]
pub struct StrBuf {
    /// UTF-8, or WTF-8 once `ill` is set.
    s: Vec<u8>,
    /// A piece with a lone surrogate was appended (the result may still
    /// be well-formed: two halves can meet).
    ill: bool,
    /// Exact UTF-16 length, tracked once the UTF-8 length passes the limit
    /// (below it, the UTF-16 length, never more than the UTF-8 length,
    /// cannot be over).
    units: Option<usize>,
}

impl StrBuf {
    pub fn new() -> StrBuf {
        StrBuf::default()
    }

    /// An empty buffer with room for `bytes` (a hint: a size over the limit
    /// is not reserved, the appends find out).
    pub fn with_capacity(bytes: usize) -> OpResult<StrBuf> {
        let mut b = StrBuf::new();
        b.reserve(bytes.min(MAX_STRING_LEN))?;
        Ok(b)
    }

    /// Reserves room for `bytes` more bytes.
    pub fn reserve(&mut self, bytes: usize) -> OpResult<()> {
        let (len, cap) = (self.s.len(), self.s.capacity());
        if cap - len < bytes {
            // The string becomes a heap object: its growth is checked
            // against the heap limit (at least doubling, as `try_reserve`).
            super::heap::check_growth((cap * 2).max(len + bytes) - cap)?;
        }
        self.s.try_reserve(bytes).map_err(|_| too_long())
    }

    #[inline]
    pub fn push_str(&mut self, x: &str) -> OpResult<()> {
        self.push_within(x.as_bytes(), MAX_STRING_LEN)
    }

    /// Appends script string `x` exactly (its WTF-8 when it holds a lone
    /// surrogate).
    #[inline]
    pub fn push_js(&mut self, x: &super::object::JsStr) -> OpResult<()> {
        if x.is_well_formed() {
            return self.push_str(&x.s);
        }
        self.ill = true;
        self.push_within(x.wtf8(), MAX_STRING_LEN)
    }

    /// Appends WTF-8 bytes `x` (a piece of a script string).
    pub fn push_wtf8(&mut self, x: &[u8]) -> OpResult<()> {
        match std::str::from_utf8(x) {
            Ok(t) => self.push_str(t),
            Err(_) => {
                self.ill = true;
                self.push_within(x, MAX_STRING_LEN)
            }
        }
    }

    /// Appends what `other` holds, exactly.
    pub fn push_buf(&mut self, other: &StrBuf) -> OpResult<()> {
        self.ill |= other.ill;
        self.push_within(&other.s, MAX_STRING_LEN)
    }

    /// Appends UTF-16 code unit `u` (a lone surrogate kept).
    pub fn push_unit(&mut self, u: u16) -> OpResult<()> {
        match char::from_u32(u as u32) {
            Some(c) => self.push(c),
            None => {
                self.ill = true;
                self.push_within(&crate::wtf8::encode_surrogate(u), MAX_STRING_LEN)
            }
        }
    }

    /// `push_str` under the limit `max` (a parameter for the unit tests).
    #[inline]
    fn push_within(&mut self, x: &[u8], max: usize) -> OpResult<()> {
        let bytes = self.s.len() + x.len();
        let units = match self.units {
            None if bytes <= max => None,
            u => {
                let units = u.unwrap_or_else(|| crate::wtf8::utf16_len(&self.s)) + crate::wtf8::utf16_len(x);
                if units > max {
                    return Err(too_long());
                }
                Some(units)
            }
        };
        self.reserve(x.len())?;
        if self.ill {
            // Merging a pair makes the text one unit shorter, never longer.
            crate::wtf8::push(&mut self.s, x);
            self.units = units.map(|_| crate::wtf8::utf16_len(&self.s));
        } else {
            self.s.extend_from_slice(x);
            self.units = units;
        }
        Ok(())
    }

    /// An empty buffer that keeps `old`'s allocation.
    pub fn new_reusing(old: StrBuf) -> StrBuf {
        let mut s = old.s;
        s.clear();
        StrBuf { s, ill: false, units: None }
    }

    pub fn push(&mut self, c: char) -> OpResult<()> {
        let mut b = [0u8; 4];
        self.push_str(c.encode_utf8(&mut b))
    }

    pub fn len(&self) -> usize {
        self.s.len()
    }

    pub fn is_empty(&self) -> bool {
        self.s.is_empty()
    }

    /// The text so far (lone surrogates as U+FFFD).
    pub fn as_str(&self) -> std::borrow::Cow<'_, str> {
        if self.ill {
            std::borrow::Cow::Owned(crate::wtf8::lossy(&self.s))
        } else {
            // SAFETY: without `ill`, only `str`s and characters were
            // appended, whole.
            std::borrow::Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(&self.s) })
        }
    }

    /// The text (lone surrogates as U+FFFD: engine text). A script's
    /// string is made with [`StrBuf::into_js`].
    pub fn into_string(self) -> String {
        if self.ill {
            crate::wtf8::lossy(&self.s)
        } else {
            // SAFETY: as in `as_str`.
            unsafe { String::from_utf8_unchecked(self.s) }
        }
    }

    /// The script string built, exactly.
    pub fn into_js(self) -> super::object::JsStr {
        if self.ill {
            super::object::JsStr::from_wtf8(self.s)
        } else {
            super::object::JsStr::new(self.into_string().into_boxed_str())
        }
    }
}

/// `std::fmt::Write` for code that formats into a buffer: a failed append
/// (too long) is a `fmt::Error`; callers map it back with [`too_long`].
impl std::fmt::Write for StrBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.push_str(s).map_err(|_| std::fmt::Error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_stop_at_the_limit() {
        let mut b = StrBuf::new();
        b.push_within(b"abcd", 10).unwrap();
        b.push_within(b"efghij", 10).unwrap();
        assert!(b.push_within(b"k", 10).is_err());
        assert_eq!(b.as_str(), "abcdefghij", "a refused append leaves the buffer as it was");
    }

    #[test]
    fn the_limit_counts_utf16_units_not_bytes() {
        // "€" is 3 UTF-8 bytes but 1 UTF-16 unit; "😀" is 4 bytes, 2 units.
        let mut b = StrBuf::new();
        for _ in 0..10 {
            b.push_within("€".as_bytes(), 10).unwrap();
        }
        assert_eq!(b.len(), 30);
        assert!(b.push_within("€".as_bytes(), 10).is_err());
        let mut b = StrBuf::new();
        for _ in 0..5 {
            b.push_within("😀".as_bytes(), 10).unwrap();
        }
        assert!(b.push_within(b"a", 10).is_err());
    }

    #[test]
    fn checks_at_the_real_limit() {
        assert!(check_len(MAX_STRING_LEN).is_ok());
        assert!(check_len(MAX_STRING_LEN + 1).is_err());
        assert!(check_str("short").is_ok());
    }

    #[test]
    fn script_strings_keep_lone_surrogates_and_halves_meet() {
        use crate::vm::object::JsStr;
        let hi = JsStr::from_units(&[0xD83D]);
        let lo = JsStr::from_units(&[0xDE00]);
        let mut b = StrBuf::new();
        b.push_str("a").unwrap();
        b.push_js(&hi).unwrap();
        assert_eq!(b.as_str(), "a\u{FFFD}");
        b.push_js(&lo).unwrap();
        let js = b.into_js();
        assert!(js.is_well_formed());
        assert_eq!(&*js.s, "a😀");
        assert_eq!(js.utf16_len, 3);
        let mut b = StrBuf::new();
        b.push_js(&lo).unwrap();
        b.push_js(&hi).unwrap();
        let js = b.into_js();
        assert!(!js.is_well_formed());
        assert_eq!(js.units(), [0xDE00, 0xD83D]);
    }
}
