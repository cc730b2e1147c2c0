//! WTF-8: the byte form of JavaScript strings that hold a lone UTF-16
//! surrogate (see `design/memory.md`, "Lone surrogates").
//!
//! UTF-8 extended so that a surrogate code point alone is the 3-byte
//! sequence UTF-8's scheme gives it (`ED A0 80` for U+D800). A high
//! surrogate followed by a low one is never stored as two such sequences
//! but as the 4-byte form of the character the pair makes, so each string
//! has exactly one byte form and equality, hashing and ordering of equal
//! strings stay byte operations. [`push`] is the seam check that keeps
//! that true when pieces are joined.
//!
//! A well-formed string's WTF-8 is its UTF-8. An ill-formed one has the
//! same length in bytes as its lossy text (U+FFFD is 3 bytes, like a
//! surrogate), and the same byte offsets for every character, so an
//! offset found in one is an offset in the other.
//!
//! The compiler carries string literals as Rust text; a lone surrogate
//! written as an escape (`"\uD800"`) travels in it *marked* ([`mark`]),
//! and linking turns the marked text back into WTF-8 ([`unmark`]).

/// Whether the 3 bytes at `b[i..]` encode a surrogate; its code unit.
#[inline]
pub fn surrogate_at(b: &[u8], i: usize) -> Option<u16> {
    match b.get(i..i + 3) {
        Some(&[0xED, x, y]) if x >= 0xA0 => Some(0xD000 | ((x as u16 & 0x3F) << 6) | (y as u16 & 0x3F)),
        _ => None,
    }
}

/// The 3-byte sequence of surrogate `u` (0xD800..=0xDFFF).
#[inline]
pub fn encode_surrogate(u: u16) -> [u8; 3] {
    debug_assert!((0xD800..0xE000).contains(&u));
    [0xE0 | (u >> 12) as u8, 0x80 | ((u >> 6) & 0x3F) as u8, 0x80 | (u & 0x3F) as u8]
}

fn is_high(u: u16) -> bool {
    (0xD800..0xDC00).contains(&u)
}

fn is_low(u: u16) -> bool {
    (0xDC00..0xE000).contains(&u)
}

/// Appends WTF-8 `piece` to WTF-8 `buf`, merging a high surrogate at the
/// end of `buf` and a low one at the start of `piece` into the 4-byte
/// character they make (the one check that keeps the form unique).
#[inline]
pub fn push(buf: &mut Vec<u8>, piece: &[u8]) {
    if piece.first() == Some(&0xED) && buf.len() >= 3 {
        if let (Some(hi), Some(lo)) = (surrogate_at(buf, buf.len() - 3), surrogate_at(piece, 0)) {
            if is_high(hi) && is_low(lo) {
                buf.truncate(buf.len() - 3);
                let c = 0x10000 + (((hi as u32) - 0xD800) << 10) + ((lo as u32) - 0xDC00);
                let c = char::from_u32(c).unwrap_or('\u{FFFD}');
                buf.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                buf.extend_from_slice(&piece[3..]);
                return;
            }
        }
    }
    buf.extend_from_slice(piece);
}

/// Appends one UTF-16 code unit (a surrogate is merged with a high one
/// before it, as [`push`] does).
pub fn push_unit(buf: &mut Vec<u8>, u: u16) {
    match char::from_u32(u as u32) {
        Some(c) => buf.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        None => push(buf, &encode_surrogate(u)),
    }
}

/// The WTF-8 of a sequence of UTF-16 code units: pairs become characters,
/// lone surrogates stay.
pub fn from_units(units: &[u16]) -> Vec<u8> {
    let mut out = Vec::with_capacity(units.len());
    for r in char::decode_utf16(units.iter().copied()) {
        match r {
            Ok(c) => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
            Err(e) => out.extend_from_slice(&encode_surrogate(e.unpaired_surrogate())),
        }
    }
    out
}

/// The code points of WTF-8 `b` (surrogates included), with their byte
/// offsets. `b` must be WTF-8 (every `JsStr` is).
pub fn code_points(b: &[u8]) -> impl Iterator<Item = (usize, u32)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        let &c0 = b.get(i)?;
        let at = i;
        let (n, init) = match c0 {
            0..=0x7F => (1, c0 as u32),
            0xC0..=0xDF => (2, c0 as u32 & 0x1F),
            0xE0..=0xEF => (3, c0 as u32 & 0x0F),
            _ => (4, c0 as u32 & 0x07),
        };
        let mut cp = init;
        for k in 1..n {
            cp = (cp << 6) | (b.get(i + k).copied().unwrap_or(0x80) as u32 & 0x3F);
        }
        i += n;
        Some((at, cp))
    })
}

/// The UTF-16 code units of WTF-8 `b`.
pub fn units(b: &[u8]) -> impl Iterator<Item = u16> + '_ {
    code_points(b).flat_map(|(_, cp)| {
        let (one, two) = if cp >= 0x10000 {
            let c = cp - 0x10000;
            (0xD800 | (c >> 10) as u16, Some(0xDC00 | (c & 0x3FF) as u16))
        } else {
            (cp as u16, None)
        };
        std::iter::once(one).chain(two)
    })
}

/// UTF-16 length of WTF-8 `b`: one unit per character, two for a 4-byte
/// one (a surrogate's 3 bytes are one unit, like any 3-byte character).
pub fn utf16_len(b: &[u8]) -> usize {
    if b.is_ascii() {
        return b.len();
    }
    b.iter().filter(|&&x| (x & 0xC0) != 0x80).count() + b.iter().filter(|&&x| x >= 0xF0).count()
}

/// The text of WTF-8 `b` with each lone surrogate as U+FFFD: valid UTF-8
/// of the same length, with the same byte offsets.
pub fn lossy(b: &[u8]) -> String {
    let mut out = b.to_vec();
    let mut i = 0;
    while i < out.len() {
        if surrogate_at(&out, i).is_some() {
            out[i..i + 3].copy_from_slice("\u{FFFD}".as_bytes());
            i += 3;
        } else {
            i += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The marker that starts a lone surrogate in marked text (a
/// noncharacter; a real one in the text is written twice).
const MARK: char = '\u{10FFFF}';
/// Base of the character that follows [`MARK`]: the surrogate's offset
/// from U+D800 in Supplementary Private Use Area-B.
const MARK_BASE: u32 = 0x10_0000;

/// Appends code unit `u`, a lone surrogate, to marked text `out`.
pub fn mark(out: &mut String, u: u16) {
    out.push(MARK);
    out.push(char::from_u32(MARK_BASE + (u as u32 - 0xD800)).unwrap_or('\u{FFFD}'));
}

/// Appends character `c` to marked text `out` (a real U+10FFFF doubled).
pub fn mark_char(out: &mut String, c: char) {
    if c == MARK {
        out.push(MARK);
    }
    out.push(c);
}

/// The marked text of WTF-8 `b`.
pub fn mark_wtf8(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len() + 4);
    for (_, cp) in code_points(b) {
        match char::from_u32(cp) {
            Some(c) => mark_char(&mut out, c),
            None => mark(&mut out, cp as u16),
        }
    }
    out
}

/// The text of a property key made from WTF-8 `b`: the text itself when
/// it is UTF-8 without a marker character, else its marked text (so a
/// key with a lone surrogate is a key of its own, and [`unmark`] gives
/// the string back when keys are listed).
pub fn key_text(b: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(b) {
        Ok(s) if !is_marked(s) => std::borrow::Cow::Borrowed(s),
        _ => std::borrow::Cow::Owned(mark_wtf8(b)),
    }
}

/// Whether `s` is marked text that holds a marker (then [`unmark`] it).
#[inline]
pub fn is_marked(s: &str) -> bool {
    s.contains(MARK)
}

/// The WTF-8 of marked text `s` (adjacent marked halves of a pair join).
pub fn unmark(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != MARK {
            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            continue;
        }
        match chars.next() {
            Some(MARK) | None => out.extend_from_slice(MARK.encode_utf8(&mut [0; 4]).as_bytes()),
            Some(n) => {
                let u = (n as u32).wrapping_sub(MARK_BASE);
                if u < 0x800 {
                    push_unit(&mut out, 0xD800 + u as u16);
                } else {
                    out.extend_from_slice("\u{FFFD}".as_bytes());
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surrogates_encode_as_three_bytes() {
        assert_eq!(encode_surrogate(0xD800), [0xED, 0xA0, 0x80]);
        assert_eq!(encode_surrogate(0xDFFF), [0xED, 0xBF, 0xBF]);
        assert_eq!(surrogate_at(&[b'a', 0xED, 0xB8, 0x80], 1), Some(0xDE00));
        // U+D7FF is an ordinary character, not a surrogate.
        assert_eq!(surrogate_at("\u{D7FF}".as_bytes(), 0), None);
    }

    #[test]
    fn joining_halves_makes_the_character() {
        let mut b = b"x".to_vec();
        push(&mut b, &encode_surrogate(0xD83D));
        push(&mut b, &[&encode_surrogate(0xDE00)[..], b"y"].concat());
        assert_eq!(b, "x😀y".as_bytes());
        // A low then a high surrogate stay two.
        let mut b = encode_surrogate(0xDE00).to_vec();
        push(&mut b, &encode_surrogate(0xD83D));
        assert_eq!(utf16_len(&b), 2);
        assert!(std::str::from_utf8(&b).is_err());
        let mut b = Vec::new();
        push_unit(&mut b, 0xD83D);
        push_unit(&mut b, 0xDE00);
        assert_eq!(b, "😀".as_bytes());
    }

    #[test]
    fn units_round_trip() {
        let u = [0x61, 0xD83D, 0xDE00, 0xD800, 0xE9, 0xDC00];
        let b = from_units(&u);
        assert_eq!(units(&b).collect::<Vec<_>>(), u);
        assert_eq!(utf16_len(&b), u.len());
        let l = lossy(&b);
        assert_eq!(l, "a😀\u{FFFD}é\u{FFFD}");
        assert_eq!(l.len(), b.len());
    }

    #[test]
    fn marked_text_round_trips() {
        let mut s = String::from("a");
        mark(&mut s, 0xD800);
        mark_char(&mut s, '\u{10FFFF}');
        mark(&mut s, 0xD83D);
        mark(&mut s, 0xDE00);
        assert!(is_marked(&s));
        let b = unmark(&s);
        let want = [&b"a"[..], &encode_surrogate(0xD800), "\u{10FFFF}😀".as_bytes()].concat();
        assert_eq!(b, want);
        assert!(!is_marked("plain é"));
        assert_eq!(unmark(&mark_wtf8(&b)), b);
        assert_eq!(key_text("é".as_bytes()), "é");
        assert_eq!(unmark(&key_text(&b)), b);
        assert_eq!(unmark(&key_text("\u{10FFFF}".as_bytes())), "\u{10FFFF}".as_bytes());
    }
}
