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
#[derive(Default)]
pub struct StrBuf {
    s: String,
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
        self.push_within(x, MAX_STRING_LEN)
    }

    /// `push_str` under the limit `max` (a parameter for the unit tests).
    #[inline]
    fn push_within(&mut self, x: &str, max: usize) -> OpResult<()> {
        let bytes = self.s.len() + x.len();
        let units = match self.units {
            None if bytes <= max => None,
            u => {
                let units = u.unwrap_or_else(|| utf16_len(&self.s)) + utf16_len(x);
                if units > max {
                    return Err(too_long());
                }
                Some(units)
            }
        };
        self.reserve(x.len())?;
        self.s.push_str(x);
        self.units = units;
        Ok(())
    }

    /// An empty buffer that keeps `old`'s allocation.
    pub fn new_reusing(old: StrBuf) -> StrBuf {
        let mut s = old.s;
        s.clear();
        StrBuf { s, units: None }
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

    pub fn as_str(&self) -> &str {
        &self.s
    }

    pub fn into_string(self) -> String {
        self.s
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
        b.push_within("abcd", 10).unwrap();
        b.push_within("efghij", 10).unwrap();
        assert!(b.push_within("k", 10).is_err());
        assert_eq!(b.as_str(), "abcdefghij", "a refused append leaves the buffer as it was");
    }

    #[test]
    fn the_limit_counts_utf16_units_not_bytes() {
        // "€" is 3 UTF-8 bytes but 1 UTF-16 unit; "😀" is 4 bytes, 2 units.
        let mut b = StrBuf::new();
        for _ in 0..10 {
            b.push_within("€", 10).unwrap();
        }
        assert_eq!(b.len(), 30);
        assert!(b.push_within("€", 10).is_err());
        let mut b = StrBuf::new();
        for _ in 0..5 {
            b.push_within("😀", 10).unwrap();
        }
        assert!(b.push_within("a", 10).is_err());
    }

    #[test]
    fn checks_at_the_real_limit() {
        assert!(check_len(MAX_STRING_LEN).is_ok());
        assert!(check_len(MAX_STRING_LEN + 1).is_err());
        assert!(check_str("short").is_ok());
    }
}
