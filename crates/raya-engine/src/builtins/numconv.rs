//! JavaScript number <-> string conversions, implemented exactly as ECMAScript
//! specifies them (and, where the specification leaves freedom to the
//! implementation, exactly as V8 / Node.js behaves).
//!
//! Everything in this module is pure Rust with no dependency on the rest of
//! the engine; the only external crates used are `ryu-js` for the shortest
//! round-trip decimal formatting of `Number::toString`, and `itoa` for the
//! integers among those numbers.
//!
//! Provided conversions:
//! - [`number_to_string`] — `Number.prototype.toString()` / `String(x)`
//! - [`number_to_string_radix`] — `Number.prototype.toString(radix)` (V8 algorithm)
//! - [`to_fixed`] — `Number.prototype.toFixed(digits)` (exact decimal arithmetic)
//! - [`string_to_number`] — `Number(string)` / `ToNumber(string)`
//! - [`parse_int`], [`parse_float`]: the global `parseInt` / `parseFloat`
//! - [`to_int32`], [`to_uint32`]: ECMAScript `ToInt32` / `ToUint32`
//! - [`json_quote`] — `JSON.stringify`'s `QuoteJSONString`

// ---------------------------------------------------------------------------
// Number -> String
// ---------------------------------------------------------------------------

/// `Number::toString(x)` with radix 10, i.e. `String(x)` / `x.toString()`.
///
/// Produces the shortest decimal string that round-trips to `x`, formatted
/// as ECMAScript specifies (fixed notation for `1e-7 < |x| < 1e21`,
/// exponential notation `de±n` otherwise). Both zeros print as `"0"`.
pub fn number_to_string(x: f64) -> String {
    format_number(x, &mut NumberText::new()).to_string()
}

/// Room for the text of one number, so that [`format_number`] needs no
/// allocation of its own (a template literal writes it straight into the
/// string it builds).
pub struct NumberText {
    digits: ryu_js::Buffer,
    int: itoa::Buffer,
}

impl NumberText {
    #[inline]
    pub fn new() -> NumberText {
        NumberText { digits: ryu_js::Buffer::new(), int: itoa::Buffer::new() }
    }
}

impl Default for NumberText {
    fn default() -> Self {
        Self::new()
    }
}

/// [`number_to_string`] into `buf`. An integer of magnitude below 2^53 is
/// exactly its digits, which is also the shortest text that reads back as
/// it; `itoa` writes them without Ryū's search for the shortest digits.
/// (Above 2^53 the two differ: `2**60` is `1152921504606847000`.)
#[inline]
pub fn format_number(x: f64, buf: &mut NumberText) -> &str {
    const SAFE: f64 = 9_007_199_254_740_992.0; // 2^53
    if x.is_nan() {
        return "NaN";
    }
    if x == 0.0 {
        return "0";
    }
    if x.abs() < SAFE && x.trunc() == x {
        return buf.int.format(x as i64);
    }
    buf.digits.format(x)
}

const RADIX_CHARS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";

/// The next representable double above a non-negative finite `v`
/// (V8's `Double::NextDouble` for non-negative values).
fn next_double_up(v: f64) -> f64 {
    if v == f64::INFINITY {
        return v;
    }
    f64::from_bits(v.to_bits() + 1)
}

/// V8's `Double::Exponent()`: the binary exponent `e` such that
/// `v = significand * 2^e` with a 53-bit integer significand (denormals: -1074).
fn v8_double_exponent(v: f64) -> i32 {
    let biased = ((v.to_bits() >> 52) & 0x7ff) as i32;
    if biased == 0 {
        -1074
    } else {
        biased - 1075
    }
}

/// `Number.prototype.toString(radix)` for `radix` in `2..=36`.
///
/// Radix 10 is [`number_to_string`]. Other radices use V8's
/// `DoubleToRadixCString` algorithm (fraction digits are generated only up
/// to the precision of the input, with round-half-even on the last digit),
/// so the output matches Node.js digit for digit.
///
/// The caller is responsible for throwing a `RangeError` for radices outside
/// `2..=36`; such radices are treated as 10 here.
pub fn number_to_string_radix(x: f64, radix: u32) -> String {
    debug_assert!((2..=36).contains(&radix), "radix out of range: {radix}");
    if radix == 10 || !(2..=36).contains(&radix) {
        return number_to_string(x);
    }
    if x.is_nan() {
        return "NaN".to_string();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-Infinity" } else { "Infinity" }.to_string();
    }
    if x == 0.0 {
        return "0".to_string();
    }

    let radix_f = radix as f64;
    let negative = x < 0.0;
    let value = x.abs();

    // Split the value into an integer part and a fractional part.
    let mut integer = value.floor();
    let mut fraction = value - integer;
    // Only compute fractional digits up to the input double's precision.
    let mut delta = 0.5 * (next_double_up(value) - value);
    delta = delta.max(next_double_up(0.0));

    let mut frac_buf: Vec<u8> = Vec::new(); // digits after the '.'
    let mut has_point = false;
    if fraction >= delta {
        has_point = true;
        loop {
            // Shift up by one digit.
            fraction *= radix_f;
            delta *= radix_f;
            // Write digit.
            let digit = fraction as usize;
            frac_buf.push(RADIX_CHARS[digit]);
            // Calculate remainder.
            fraction -= digit as f64;
            // Round to even.
            if (fraction > 0.5 || (fraction == 0.5 && (digit & 1) == 1)) && fraction + delta > 1.0 {
                // Back-trace already written digits in case of carry-over.
                loop {
                    match frac_buf.pop() {
                        None => {
                            // Carry over to the integer part; no point.
                            has_point = false;
                            integer += 1.0;
                            break;
                        }
                        Some(c) => {
                            let d = if c > b'9' { (c - b'a' + 10) as u32 } else { (c - b'0') as u32 };
                            if d + 1 < radix {
                                frac_buf.push(RADIX_CHARS[(d + 1) as usize]);
                                break;
                            }
                        }
                    }
                }
                break;
            }
            if fraction < delta {
                break;
            }
        }
    }

    // Integer digits, produced right to left. Unrepresented low digits are
    // filled with zeros.
    let mut int_rev: Vec<u8> = Vec::new();
    while v8_double_exponent(integer / radix_f) > 0 {
        integer /= radix_f;
        int_rev.push(b'0');
    }
    loop {
        let remainder = integer % radix_f;
        int_rev.push(RADIX_CHARS[remainder as usize]);
        integer = (integer - remainder) / radix_f;
        if integer <= 0.0 {
            break;
        }
    }

    let mut out = String::with_capacity(int_rev.len() + frac_buf.len() + 2);
    if negative {
        out.push('-');
    }
    out.extend(int_rev.iter().rev().map(|&b| b as char));
    if has_point {
        out.push('.');
        out.extend(frac_buf.iter().map(|&b| b as char));
    }
    out
}

// ---------------------------------------------------------------------------
// Minimal arbitrary-precision unsigned integer (for exact toFixed)
// ---------------------------------------------------------------------------

/// Little-endian base-2^32 unsigned big integer with just the operations
/// needed to expand a double into its exact decimal representation.
struct BigUint {
    limbs: Vec<u32>,
}

impl BigUint {
    fn from_u64(v: u64) -> Self {
        let mut limbs = vec![v as u32, (v >> 32) as u32];
        while limbs.len() > 1 && *limbs.last().unwrap() == 0 {
            limbs.pop();
        }
        BigUint { limbs }
    }

    fn is_zero(&self) -> bool {
        self.limbs.iter().all(|&l| l == 0)
    }

    fn mul_small(&mut self, m: u32) {
        let mut carry: u64 = 0;
        for limb in self.limbs.iter_mut() {
            let p = (*limb as u64) * (m as u64) + carry;
            *limb = p as u32;
            carry = p >> 32;
        }
        if carry != 0 {
            self.limbs.push(carry as u32);
        }
    }

    fn shl(&mut self, bits: u32) {
        let words = (bits / 32) as usize;
        let rem = bits % 32;
        if rem != 0 {
            let mut carry: u32 = 0;
            for limb in self.limbs.iter_mut() {
                let next = *limb >> (32 - rem);
                *limb = (*limb << rem) | carry;
                carry = next;
            }
            if carry != 0 {
                self.limbs.push(carry);
            }
        }
        if words > 0 {
            let mut v = vec![0u32; words];
            v.extend_from_slice(&self.limbs);
            self.limbs = v;
        }
    }

    /// Divides in place by `d`, returning the remainder.
    fn div_rem_small(&mut self, d: u32) -> u32 {
        let mut rem: u64 = 0;
        for limb in self.limbs.iter_mut().rev() {
            let cur = (rem << 32) | (*limb as u64);
            *limb = (cur / d as u64) as u32;
            rem = cur % d as u64;
        }
        while self.limbs.len() > 1 && *self.limbs.last().unwrap() == 0 {
            self.limbs.pop();
        }
        rem as u32
    }

    /// Decimal digits (ASCII), without leading zeros ("0" for zero).
    fn into_decimal(mut self) -> Vec<u8> {
        if self.is_zero() {
            return vec![b'0'];
        }
        let mut chunks: Vec<u32> = Vec::new();
        while !self.is_zero() {
            chunks.push(self.div_rem_small(1_000_000_000));
        }
        let mut out = Vec::with_capacity(chunks.len() * 9);
        let top = chunks.pop().unwrap();
        out.extend_from_slice(top.to_string().as_bytes());
        for c in chunks.iter().rev() {
            out.extend_from_slice(format!("{c:09}").as_bytes());
        }
        out
    }
}

/// Exact decimal expansion of a finite, non-negative double:
/// returns (integer digits without leading zeros, or "0"; the exact fractional
/// digits, empty for integers and otherwise ending in a nonzero digit).
fn exact_decimal(v: f64) -> (Vec<u8>, Vec<u8>) {
    debug_assert!(v.is_finite() && v >= 0.0);
    let bits = v.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (mut m, mut e) = if biased == 0 { (frac, -1074i32) } else { (frac | (1u64 << 52), biased - 1075) };
    if m == 0 {
        return (vec![b'0'], Vec::new());
    }
    while e < 0 && m & 1 == 0 {
        m >>= 1;
        e += 1;
    }
    if e >= 0 {
        let mut n = BigUint::from_u64(m);
        n.shl(e as u32);
        return (n.into_decimal(), Vec::new());
    }
    // v = m / 2^k = m * 5^k / 10^k
    let k = (-e) as usize;
    let mut n = BigUint::from_u64(m);
    let mut left = k;
    while left >= 13 {
        n.mul_small(1_220_703_125); // 5^13
        left -= 13;
    }
    if left > 0 {
        n.mul_small(5u32.pow(left as u32));
    }
    let digits = n.into_decimal();
    if digits.len() > k {
        let split = digits.len() - k;
        (digits[..split].to_vec(), digits[split..].to_vec())
    } else {
        let mut f = vec![b'0'; k - digits.len()];
        f.extend_from_slice(&digits);
        (vec![b'0'], f)
    }
}

/// `Number.prototype.toFixed(digits)`.
///
/// Implements the specification exactly: for `|x| < 1e21` it picks the
/// integer `n` for which `n / 10^f - x` is as close to zero as possible
/// (computed on the exact binary value of `x`), choosing the larger `n` on
/// ties. For `|x| >= 1e21` (and NaN/Infinity) it returns `ToString(x)`.
///
/// `digits` should be in `0..=100` (the caller throws a `RangeError`
/// otherwise); larger values are still computed correctly.
pub fn to_fixed(x: f64, digits: u32) -> String {
    if !x.is_finite() {
        return number_to_string(x);
    }
    let f = digits as usize;
    let mut out = String::new();
    let mut v = x;
    if v < 0.0 {
        out.push('-');
        v = -v;
    }
    if v >= 1e21 {
        out.push_str(&number_to_string(v));
        return out;
    }
    let (int_digits, frac_digits) = exact_decimal(v);
    // n = round_half_up(v * 10^f), as a decimal digit string.
    let mut n: Vec<u8> = int_digits;
    let round_up = if f >= frac_digits.len() {
        n.extend_from_slice(&frac_digits);
        n.resize(n.len() + (f - frac_digits.len()), b'0');
        false
    } else {
        n.extend_from_slice(&frac_digits[..f]);
        // The expansion is exact, so "the next digit is >= 5" covers both the
        // "strictly above half" and the tie (pick the larger n) cases.
        frac_digits[f] >= b'5'
    };
    if round_up {
        let mut i = n.len();
        loop {
            if i == 0 {
                n.insert(0, b'1');
                break;
            }
            i -= 1;
            if n[i] == b'9' {
                n[i] = b'0';
            } else {
                n[i] += 1;
                break;
            }
        }
    }
    // Strip leading zeros: m = String(n) ("0" if n is 0).
    let first_nonzero = n.iter().position(|&c| c != b'0');
    let mut m: Vec<u8> = match first_nonzero {
        Some(p) => n[p..].to_vec(),
        None => vec![b'0'],
    };
    if f != 0 {
        let mut k = m.len();
        if k <= f {
            let mut z = vec![b'0'; f + 1 - k];
            z.extend_from_slice(&m);
            m = z;
            k = f + 1;
        }
        let (a, b) = m.split_at(k - f);
        out.push_str(std::str::from_utf8(a).unwrap());
        out.push('.');
        out.push_str(std::str::from_utf8(b).unwrap());
    } else {
        out.push_str(std::str::from_utf8(&m).unwrap());
    }
    out
}

// ---------------------------------------------------------------------------
// String -> Number
// ---------------------------------------------------------------------------

/// `x.toLocaleString()` in en-US (Intl.NumberFormat's defaults): the
/// shortest decimal that reads back as `x`, rounded half away from zero
/// to at most 3 fraction digits (trailing zeros dropped), the integer part
/// grouped by threes with commas; `∞`, `NaN`, and `-` on every negative
/// value, -0 and what rounds to 0 included (`-0`), as Node prints them.
pub fn to_locale_en_us(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x.is_infinite() {
        return format!("{sign}∞");
    }
    // Shortest round-trip digits: `d.ddd…e<exp>`.
    let sci = format!("{:e}", x.abs());
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let mut digits: Vec<u8> = mant.bytes().filter(u8::is_ascii_digit).map(|b| b - b'0').collect();
    // The value is 0.d1d2… × 10^(exp + 1): `int_len` digits before the
    // point (negative: zeros after it first).
    let mut int_len = exp + 1;
    let keep = int_len + 3;
    if (digits.len() as i64) > keep {
        let round_up = keep >= 0 && digits[keep as usize] >= 5;
        digits.truncate(keep.max(0) as usize);
        if round_up {
            let mut i = digits.len();
            loop {
                if i == 0 {
                    digits.insert(0, 1);
                    int_len += 1;
                    break;
                }
                i -= 1;
                if digits[i] == 9 {
                    digits[i] = 0;
                } else {
                    digits[i] += 1;
                    break;
                }
            }
        }
        if digits.is_empty() {
            digits.push(0);
            int_len = 1;
        }
    }
    let digit = |i: i64| if i >= 0 && (i as usize) < digits.len() { (b'0' + digits[i as usize]) as char } else { '0' };
    let mut int_part = String::new();
    let n_int = int_len.max(1);
    for k in 0..n_int {
        if k > 0 && (n_int - k) % 3 == 0 {
            int_part.push(',');
        }
        // With int_len <= 0 the only integer digit is the 0 before the point.
        int_part.push(if int_len <= 0 { '0' } else { digit(k) });
    }
    let mut frac: String = (0..3).map(|k| digit(int_len + k)).collect();
    while frac.ends_with('0') {
        frac.pop();
    }
    if frac.is_empty() {
        format!("{sign}{int_part}")
    } else {
        format!("{sign}{int_part}.{frac}")
    }
}

/// ECMAScript `WhiteSpace` or `LineTerminator` (the `StrWhiteSpaceChar` set).
pub fn is_js_whitespace(c: char) -> bool {
    matches!(c, '\u{0009}'..='\u{000D}' | '\u{2000}'..='\u{200A}')
        || matches!(
            c,
            '\u{0020}'
                | '\u{00A0}'
                | '\u{1680}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
        )
}

fn digit_value(c: u8) -> u32 {
    match c {
        b'0'..=b'9' => (c - b'0') as u32,
        b'a'..=b'z' => (c - b'a') as u32 + 10,
        b'A'..=b'Z' => (c - b'A') as u32 + 10,
        _ => 99,
    }
}

/// 2^e as a double (exact), or +Infinity when e > 1023. Requires e >= 0.
fn pow2(e: i64) -> f64 {
    if e > 1023 {
        f64::INFINITY
    } else {
        f64::from_bits(((e + 1023) as u64) << 52)
    }
}

/// Correctly rounded (round-half-even) value of a string of digits in radix
/// `2^log2` (2, 4, 8, 16 or 32). All bytes must be valid digits.
fn parse_pow2_digits(digits: &[u8], log2: u32) -> f64 {
    let mut value: u64 = 0;
    let mut exponent: i64 = 0;
    let mut sticky = false;
    for &c in digits {
        let d = digit_value(c) as u64;
        if value >> 58 == 0 {
            value = (value << log2) | d;
        } else {
            exponent += log2 as i64;
            sticky |= d != 0;
        }
    }
    if value == 0 {
        return 0.0;
    }
    let nbits = 64 - value.leading_zeros();
    if nbits <= 53 {
        // Exact significand (sticky is necessarily false here).
        return value as f64 * pow2(exponent);
    }
    let shift = nbits - 53;
    let mut mant = value >> shift;
    let rem = value & ((1u64 << shift) - 1);
    let half = 1u64 << (shift - 1);
    if rem > half || (rem == half && (sticky || mant & 1 == 1)) {
        mant += 1;
    }
    let mut exp = exponent + shift as i64;
    if mant == 1u64 << 53 {
        mant >>= 1;
        exp += 1;
    }
    mant as f64 * pow2(exp)
}

/// Length of the longest prefix of `b` matching `StrUnsignedDecimalLiteral`
/// (excluding `Infinity`), or `None` if no prefix matches.
fn scan_unsigned_decimal(b: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = i;
    let mut frac_digits = 0;
    if i < b.len() && b[i] == b'.' {
        let mut j = i + 1;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        frac_digits = j - i - 1;
        if int_digits > 0 || frac_digits > 0 {
            i = j;
        }
    }
    if int_digits == 0 && frac_digits == 0 {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let start = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > start {
            i = j;
        }
    }
    Some(i)
}

/// Correctly rounded value of a validated unsigned decimal literal.
fn parse_decimal_literal(s: &str) -> f64 {
    // Rust's float parser is correctly rounded for arbitrarily long input and
    // accepts every form produced by `scan_unsigned_decimal` ("1.", ".5",
    // "1.e5", "1e+5", ...).
    s.parse::<f64>().unwrap_or(f64::NAN)
}

/// `ToNumber(string)` / `Number(string)` (StringToNumber).
///
/// Trims JS whitespace and line terminators; the empty string is `0`;
/// accepts `0x`/`0o`/`0b` (unsigned) integer literals, `Infinity` with an
/// optional sign, and decimal literals with optional sign, fraction and
/// exponent. Anything else (including numeric separators and trailing
/// garbage) is `NaN`.
pub fn string_to_number(s: &str) -> f64 {
    let t = s.trim_matches(is_js_whitespace);
    if t.is_empty() {
        return 0.0;
    }
    let b = t.as_bytes();
    if b.len() > 2 && b[0] == b'0' {
        let log2 = match b[1] {
            b'x' | b'X' => Some(4),
            b'o' | b'O' => Some(3),
            b'b' | b'B' => Some(1),
            _ => None,
        };
        if let Some(log2) = log2 {
            let digits = &b[2..];
            let radix = 1u32 << log2;
            if digits.iter().all(|&c| digit_value(c) < radix) {
                return parse_pow2_digits(digits, log2);
            }
            return f64::NAN;
        }
    }
    let (negative, rest) = match b[0] {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let magnitude = if rest == "Infinity" {
        f64::INFINITY
    } else {
        match scan_unsigned_decimal(rest.as_bytes()) {
            Some(n) if n == rest.len() => parse_decimal_literal(rest),
            _ => return f64::NAN,
        }
    };
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// The global `parseFloat(string)`.
///
/// Skips leading JS whitespace, then parses the longest prefix that is a
/// `StrDecimalLiteral` (sign, `Infinity`, digits, fraction, exponent).
/// Returns `NaN` when no such prefix exists. Hex literals are not
/// recognised (`parseFloat("0x10")` is `0`).
pub fn parse_float(s: &str) -> f64 {
    let t = s.trim_start_matches(is_js_whitespace);
    let b = t.as_bytes();
    let (negative, rest) = match b.first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let magnitude = if rest.starts_with("Infinity") {
        f64::INFINITY
    } else {
        match scan_unsigned_decimal(rest.as_bytes()) {
            Some(n) => parse_decimal_literal(&rest[..n]),
            None => return f64::NAN,
        }
    };
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// The global `parseInt(string, radix)`.
///
/// `radix` is the raw radix argument as a Number (`None` for `undefined`);
/// it is converted with `ToInt32`. Radix 0/absent means 10 (or 16 with a
/// `0x`/`0X` prefix); a radix outside `2..=36` gives `NaN`.
///
/// Values are computed like V8: radix 10 and power-of-two radices are
/// correctly rounded; other radices accumulate in 32-bit chunks (the spec
/// permits an approximation there), reproducing V8's results exactly.
pub fn parse_int(s: &str, radix: Option<f64>) -> f64 {
    let t = s.trim_start_matches(is_js_whitespace);
    let mut b = t.as_bytes();
    let mut negative = false;
    if let Some(&c) = b.first() {
        if c == b'-' || c == b'+' {
            negative = c == b'-';
            b = &b[1..];
        }
    }
    let mut r = to_int32(radix.unwrap_or(f64::NAN));
    let mut strip_prefix = true;
    if r != 0 {
        if !(2..=36).contains(&r) {
            return f64::NAN;
        }
        if r != 16 {
            strip_prefix = false;
        }
    } else {
        r = 10;
    }
    if strip_prefix && b.len() >= 2 && b[0] == b'0' && (b[1] == b'x' || b[1] == b'X') {
        b = &b[2..];
        r = 16;
    }
    let radix = r as u32;
    let end = b.iter().position(|&c| digit_value(c) >= radix).unwrap_or(b.len());
    let z = &b[..end];
    if z.is_empty() {
        return f64::NAN;
    }
    // Leading zeros never affect the value.
    let first = z.iter().position(|&c| c != b'0').unwrap_or(z.len());
    let z = &z[first..];
    let magnitude = if z.is_empty() {
        0.0
    } else if radix == 10 {
        // Correctly rounded, like V8's Strtod on the digit string.
        parse_decimal_literal(std::str::from_utf8(z).unwrap())
    } else if radix.is_power_of_two() {
        parse_pow2_digits(z, radix.trailing_zeros())
    } else {
        parse_int_generic(z, radix)
    };
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// V8's `NumberParseIntHelper` loop for radices that are neither 10 nor a
/// power of two: digits are grouped into 32-bit parts and accumulated in
/// double arithmetic (`result = result * multiplier + part`).
fn parse_int_generic(digits: &[u8], radix: u32) -> f64 {
    const MAXIMUM_MULTIPLIER: u32 = 0xFFFF_FFFF / 36;
    let mut result = 0.0f64;
    let mut i = 0;
    let mut done = false;
    while !done {
        let mut part: u32 = 0;
        let mut multiplier: u32 = 1;
        loop {
            if i >= digits.len() {
                done = true;
                break;
            }
            let d = digit_value(digits[i]);
            let m = multiplier * radix;
            if m > MAXIMUM_MULTIPLIER {
                break;
            }
            part = part * radix + d;
            multiplier = m;
            i += 1;
        }
        result = result * multiplier as f64 + part as f64;
    }
    result
}

// ---------------------------------------------------------------------------
// ToInt32 / ToUint32
// ---------------------------------------------------------------------------

/// ECMAScript `ToUint32`: truncate, then reduce modulo 2^32. NaN and
/// infinities map to 0.
pub fn to_uint32(x: f64) -> u32 {
    if !x.is_finite() {
        return 0;
    }
    // Fast path: already in range.
    if (0.0..4294967296.0).contains(&x) {
        return x as u32;
    }
    // fmod is exact, and |m| < 2^32, so m + 2^32 is exact as well.
    let mut m = x.trunc() % 4294967296.0;
    if m < 0.0 {
        m += 4294967296.0;
    }
    m as u32
}

/// ECMAScript `ToInt32`: `ToUint32` reinterpreted as a signed 32-bit value.
pub fn to_int32(x: f64) -> i32 {
    to_uint32(x) as i32
}

// ---------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------

/// `QuoteJSONString` as used by `JSON.stringify`: appends `s` to `out`
/// wrapped in double quotes, escaping `"`, `\`, `\b`, `\f`, `\n`, `\r`,
/// `\t` with their short forms and other code units below U+0020 as
/// `\u00xx` (lowercase hex). Everything else is copied verbatim (a Rust
/// `&str` holds no lone surrogate; see [`json_quote_wtf8`]).
pub fn json_quote(s: &str, out: &mut String) {
    out.reserve(s.len() + 2);
    out.push('"');
    json_quote_body(s, out);
    out.push('"');
}

/// [`json_quote`] of a string's exact WTF-8: each lone surrogate is
/// written as a `\udxxx` escape (well-formed `JSON.stringify`).
pub fn json_quote_wtf8(b: &[u8], out: &mut String) {
    out.reserve(b.len() + 2);
    out.push('"');
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        if let Some(u) = crate::wtf8::surrogate_at(b, i) {
            json_quote_body(&String::from_utf8_lossy(&b[start..i]), out);
            out.push_str(&format!("\\u{u:x}"));
            i += 3;
            start = i;
        } else {
            i += 1;
        }
    }
    json_quote_body(&String::from_utf8_lossy(&b[start..]), out);
    out.push('"');
}

fn json_quote_body(s: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    let mut start = 0;
    loop {
        let i = next_json_escape(bytes, start);
        // Bytes < 0x80 are always whole chars, so slicing here is safe.
        out.push_str(&s[start..i]);
        let Some(&b) = bytes.get(i) else { return };
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x08 => out.push_str("\\b"),
            0x0C => out.push_str("\\f"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            _ => {
                out.push_str("\\u00");
                out.push(HEX[(b >> 4) as usize] as char);
                out.push(HEX[(b & 0xF) as usize] as char);
            }
        }
        start = i + 1;
    }
}

/// The offset of the first byte at or after `i` that a JSON string must
/// escape (`"`, `\`, a control character), or `b.len()`. Eight bytes at a
/// time: a long string is mostly text to copy as it is. Written with plain
/// operators and built-in indexing only, because a debug build (the test
/// suite's) calls every helper: it runs this over whole megabytes.
fn next_json_escape(b: &[u8], i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const QUOTE: u64 = ONES * b'"' as u64;
    const BACKSLASH: u64 = ONES * b'\\' as u64;
    let escaped = |c: u8| matches!(c, b'"' | b'\\' | 0x00..=0x1F);
    let rest = &b[i..];
    if rest.len() < 16 {
        // A key or a word: fewer bytes than the words' set-up is worth.
        let mut at = i;
        while at < b.len() && !escaped(b[at]) {
            at += 1;
        }
        return at;
    }
    // SAFETY: every bit pattern is a valid `u64`.
    let (head, words, _) = unsafe { rest.align_to::<u64>() };
    let mut at = 0;
    while at < head.len() {
        if escaped(head[at]) {
            return i + at;
        }
        at += 1;
    }
    let mut k = 0;
    while k < words.len() {
        let w = words[k];
        let (q, s) = (w ^ QUOTE, w ^ BACKSLASH);
        // The high bit of each byte below 0x20, then of each zero byte of
        // `q` and `s` (a `"` or `\` in `w`): the low seven bits plus
        // `0x80 - n` carry into the high bit exactly when they reach `n`,
        // and no sum carries out of its byte.
        let hits = !(((w & LOW7) + ONES * 0x60) | w) | !(((q & LOW7) + LOW7) | q) | !(((s & LOW7) + LOW7) | s);
        if hits & HIGH != 0 {
            break;
        }
        k += 1;
    }
    let mut at = i + head.len() + 8 * k;
    while at < b.len() && !escaped(b[at]) {
        at += 1;
    }
    at
}

#[cfg(test)]
#[allow(clippy::approx_constant, clippy::excessive_precision)]
mod tests {
    use super::*;

    /// Every byte JSON escapes, at every offset of a string longer than a
    /// few eight-byte words, among text (ASCII, multi-byte, bytes just
    /// above the control range) that it copies as it is.
    #[test]
    fn json_quote_escapes_at_every_offset() {
        fn naive(s: &str) -> String {
            let mut out = String::from("\"");
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\u{8}' => out.push_str("\\b"),
                    '\u{c}' => out.push_str("\\f"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                    c => out.push(c),
                }
            }
            out.push('"');
            out
        }
        let filler: Vec<char> = "ab !#[]~\u{7f}é😀".chars().collect();
        for special in ['"', '\\', '\u{0}', '\u{8}', '\u{c}', '\n', '\r', '\t', '\u{1f}', ' '] {
            for at in 0..40 {
                let text: String = (0..40).map(|i| if i == at { special } else { filler[i % filler.len()] }).collect();
                // Every alignment of the text's start (the scan reads
                // aligned words after a head of single bytes).
                let padded = format!("01234567{text}");
                for skip in 0..8 {
                    let s = &padded[skip..];
                    let mut got = String::new();
                    json_quote(s, &mut got);
                    assert_eq!(got, naive(s), "{special:?} at {at}, from {skip}");
                }
            }
        }
    }

    #[test]
    fn locale_en_us_rounds_the_shortest_decimal_and_groups() {
        let cases = [
            (1234567.891, "1,234,567.891"),
            (1.0005, "1.001"),
            (2.0015, "2.002"),
            (0.0005, "0.001"),
            (1.2345e-7, "0"),
            (-0.0001, "-0"),
            (-0.0, "-0"),
            (999.9995, "1,000"),
            (0.9999, "1"),
            (12.0, "12"),
            (-1234.5, "-1,234.5"),
            (1e21, "1,000,000,000,000,000,000,000"),
            (123456789012345680000.0, "123,456,789,012,345,680,000"),
            (5e-324, "0"),
            (f64::INFINITY, "∞"),
            (f64::NEG_INFINITY, "-∞"),
            (f64::NAN, "NaN"),
        ];
        for (x, want) in cases {
            assert_eq!(to_locale_en_us(x), want, "for {x:e}");
        }
    }

    /// Asserts two doubles are the same value (NaN equals NaN, +0 != -0).
    #[track_caller]
    fn assert_num(actual: f64, expected: f64) {
        if expected.is_nan() {
            assert!(actual.is_nan(), "expected NaN, got {actual:?}");
        } else {
            assert_eq!(actual.to_bits(), expected.to_bits(), "expected {expected:?}, got {actual:?}");
        }
    }

    fn jq(s: &str) -> String {
        let mut out = String::new();
        json_quote(s, &mut out);
        out
    }

    // Every expectation below was produced by Node.js (V8) for the same input.

    #[test]
    fn number_to_string_matches_node() {
        assert_eq!(number_to_string(0.0), "0");
        assert_eq!(number_to_string(-0.0), "0");
        assert_eq!(number_to_string(f64::NAN), "NaN");
        assert_eq!(number_to_string(f64::INFINITY), "Infinity");
        assert_eq!(number_to_string(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(number_to_string(1.0), "1");
        assert_eq!(number_to_string(-1.0), "-1");
        assert_eq!(number_to_string(0.1), "0.1");
        assert_eq!(number_to_string(0.30000000000000004), "0.30000000000000004");
        assert_eq!(number_to_string(0.3333333333333333), "0.3333333333333333");
        assert_eq!(number_to_string(-1.5), "-1.5");
        assert_eq!(number_to_string(100.0), "100");
        assert_eq!(number_to_string(1e+21), "1e+21");
        assert_eq!(number_to_string(1e-7), "1e-7");
        assert_eq!(number_to_string(1.5e-7), "1.5e-7");
        assert_eq!(number_to_string(0.000001), "0.000001");
        assert_eq!(number_to_string(0.0000012345), "0.0000012345");
        assert_eq!(number_to_string(123456789012345680000.0), "123456789012345680000");
        assert_eq!(number_to_string(999999999999999900000.0), "999999999999999900000");
        assert_eq!(number_to_string(100000000000000000000.0), "100000000000000000000");
        assert_eq!(number_to_string(9007199254740992.0), "9007199254740992");
        assert_eq!(number_to_string(9007199254740992.0), "9007199254740992");
        assert_eq!(number_to_string(9007199254740994.0), "9007199254740994");
        assert_eq!(number_to_string(18446744073709552000.0), "18446744073709552000");
        assert_eq!(number_to_string(2147483648.0), "2147483648");
        assert_eq!(number_to_string(-2147483648.0), "-2147483648");
        assert_eq!(number_to_string(4294967295.0), "4294967295");
        assert_eq!(number_to_string(5e-324), "5e-324");
        assert_eq!(number_to_string(-5e-324), "-5e-324");
        assert_eq!(number_to_string(2.2250738585072014e-308), "2.2250738585072014e-308");
        assert_eq!(number_to_string(2.225073858507201e-308), "2.225073858507201e-308");
        assert_eq!(number_to_string(1.7976931348623157e+308), "1.7976931348623157e+308");
        assert_eq!(number_to_string(-1.7976931348623157e+308), "-1.7976931348623157e+308");
        assert_eq!(number_to_string(2.220446049250313e-16), "2.220446049250313e-16");
        assert_eq!(number_to_string(1.7976931348623157e+308), "1.7976931348623157e+308");
        assert_eq!(number_to_string(123.456), "123.456");
        assert_eq!(number_to_string(-0.0001), "-0.0001");
        assert_eq!(number_to_string(1e+100), "1e+100");
        assert_eq!(number_to_string(1.2345e-300), "1.2345e-300");
        assert_eq!(number_to_string(3.141592653589793), "3.141592653589793");
        assert_eq!(number_to_string(2.718281828459045), "2.718281828459045");
        assert_eq!(number_to_string(0.5), "0.5");
        assert_eq!(number_to_string(25.0), "25");
        assert_eq!(number_to_string(10000000000000000.0), "10000000000000000");
        assert_eq!(number_to_string(12345678901234568.0), "12345678901234568");
        assert_eq!(number_to_string(9007199254740992.0), "9007199254740992");
        assert_eq!(number_to_string(4.35), "4.35");
        assert_eq!(number_to_string(0.000001234), "0.000001234");
        assert_eq!(number_to_string(0.000001), "0.000001");
        assert_eq!(number_to_string(9.5367431640625e-7), "9.5367431640625e-7");
        assert_eq!(number_to_string(1e+301), "1e+301");
    }

    /// The integer path writes what the shortest-digits path writes, at
    /// every power of ten and on both sides of each, on both sides of
    /// 2^53 (where it stops) and on a spread of values between.
    #[test]
    fn integers_are_formatted_as_ryu_would() {
        let ryu = |x: f64| ryu_js::Buffer::new().format(x).to_string();
        let mut checked = 0;
        let mut check = |x: f64| {
            for v in [x, -x] {
                assert_eq!(format_number(v, &mut NumberText::new()), ryu(v), "{v}");
                checked += 1;
            }
        };
        let mut p = 1.0f64;
        for _ in 0..17 {
            for d in [-1.0, 0.0, 1.0] {
                check(p + d);
            }
            p *= 10.0;
        }
        let top = 9_007_199_254_740_992.0f64;
        for x in [top - 2.0, top - 1.0, top, top + 2.0, top * 2.0, top * 1024.0] {
            check(x);
        }
        // Values spread over every magnitude below 2^53.
        let mut x = 1u64;
        for i in 0..1000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            check(((x >> 11) >> (i % 53)) as f64);
        }
        assert!(checked > 100);
    }

    #[test]
    fn number_to_string_radix_matches_node() {
        assert_eq!(number_to_string_radix(0.5, 2), "0.1");
        assert_eq!(number_to_string_radix(255.0, 16), "ff");
        assert_eq!(number_to_string_radix(-255.0, 36), "-73");
        assert_eq!(number_to_string_radix(3.14159, 8), "3.11037476006703156");
        assert_eq!(number_to_string_radix(-255.0, 16), "-ff");
        assert_eq!(number_to_string_radix(0.0, 2), "0");
        assert_eq!(number_to_string_radix(-0.0, 16), "0");
        assert_eq!(number_to_string_radix(f64::NAN, 2), "NaN");
        assert_eq!(number_to_string_radix(f64::INFINITY, 16), "Infinity");
        assert_eq!(number_to_string_radix(f64::NEG_INFINITY, 36), "-Infinity");
        assert_eq!(number_to_string_radix(3.141592653589793, 36), "3.53i5ab8p5f");
        assert_eq!(number_to_string_radix(0.1, 3), "0.0022002200220022002200220022002201");
        assert_eq!(number_to_string_radix(0.1, 2), "0.0001100110011001100110011001100110011001100110011001101");
        assert_eq!(number_to_string_radix(1e+300, 7), "6562255533065302131000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000");
        assert_eq!(number_to_string_radix(1e+21, 36), "5v1j4f4ds7c000");
        assert_eq!(
            number_to_string_radix(9007199254740994.0, 2),
            "100000000000000000000000000000000000000000000000000010"
        );
        assert_eq!(number_to_string_radix(9007199254740992.0, 3), "1121202011211211122211100012101112");
        assert_eq!(number_to_string_radix(5e-324, 2), "0.000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001");
        assert_eq!(number_to_string_radix(5e-324, 36), "0.0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000003");
        assert_eq!(number_to_string_radix(-0.0001, 16), "-0.00068db8bac710cb4");
        assert_eq!(number_to_string_radix(123.456, 36), "3f.gez4w97ry");
        assert_eq!(number_to_string_radix(0.3, 5), "0.122222222222222222222222");
        assert_eq!(number_to_string_radix(0.3333333333333333, 3), "0.1");
        assert_eq!(number_to_string_radix(2147483648.0, 36), "zik0zk");
        assert_eq!(number_to_string_radix(-2147483648.0, 2), "-10000000000000000000000000000000");
        assert_eq!(number_to_string_radix(4294967295.0, 16), "ffffffff");
        assert_eq!(number_to_string_radix(1.7976931348623157e+308, 36), "1a1e4vngaiqo0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000");
        assert_eq!(number_to_string_radix(1.7976931348623157e+308, 2), "1111111111111111111111111111111111111111111111111111100000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000");
        assert_eq!(number_to_string_radix(1.5, 2), "1.1");
        assert_eq!(number_to_string_radix(1e-7, 16), "0.000001ad7f29abcaf48");
        assert_eq!(number_to_string_radix(0.999999, 32), "0.vvvuue88bt4");
        assert_eq!(number_to_string_radix(12345.6789, 30), "dlf.kb09");
        assert_eq!(number_to_string_radix(35.0, 36), "z");
        assert_eq!(number_to_string_radix(36.0, 36), "10");
        assert_eq!(number_to_string_radix(100.0, 10), "100");
        assert_eq!(number_to_string_radix(0.30000000000000004, 10), "0.30000000000000004");
        assert_eq!(
            number_to_string_radix(2.220446049250313e-16, 2),
            "0.0000000000000000000000000000000000000000000000000001"
        );
    }

    #[test]
    fn to_fixed_matches_node() {
        assert_eq!(to_fixed(0.5, 0), "1");
        assert_eq!(to_fixed(2.5, 0), "3");
        assert_eq!(to_fixed(1.5, 0), "2");
        assert_eq!(to_fixed(-1.5, 0), "-2");
        assert_eq!(to_fixed(-2.5, 0), "-3");
        assert_eq!(to_fixed(1.45, 1), "1.4");
        assert_eq!(to_fixed(1.005, 2), "1.00");
        assert_eq!(to_fixed(1e+21, 2), "1e+21");
        assert_eq!(to_fixed(-1e+21, 2), "-1e+21");
        assert_eq!(to_fixed(999999999999999900000.0, 2), "999999999999999868928.00");
        assert_eq!(to_fixed(f64::NAN, 2), "NaN");
        assert_eq!(to_fixed(f64::INFINITY, 0), "Infinity");
        assert_eq!(to_fixed(f64::NEG_INFINITY, 3), "-Infinity");
        assert_eq!(to_fixed(0.0, 2), "0.00");
        assert_eq!(to_fixed(-0.0, 2), "0.00");
        assert_eq!(to_fixed(-0.0, 0), "0");
        assert_eq!(to_fixed(-0.4, 0), "-0");
        assert_eq!(to_fixed(-1e-7, 2), "-0.00");
        assert_eq!(to_fixed(0.000001, 7), "0.0000010");
        assert_eq!(to_fixed(1e-7, 10), "0.0000001000");
        assert_eq!(to_fixed(123.456, 0), "123");
        assert_eq!(to_fixed(123.456, 2), "123.46");
        assert_eq!(to_fixed(123.456, 10), "123.4560000000");
        assert_eq!(to_fixed(0.1, 20), "0.10000000000000000555");
        assert_eq!(
            to_fixed(0.1, 100),
            "0.1000000000000000055511151231257827021181583404541015625000000000000000000000000000000000000000000000"
        );
        assert_eq!(
            to_fixed(0.3333333333333333, 100),
            "0.3333333333333333148296162562473909929394721984863281250000000000000000000000000000000000000000000000"
        );
        assert_eq!(
            to_fixed(5e-324, 100),
            "0.0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
        );
        assert_eq!(to_fixed(-5e-324, 3), "-0.000");
        assert_eq!(to_fixed(1.7976931348623157e+308, 2), "1.7976931348623157e+308");
        assert_eq!(to_fixed(9007199254740992.0, 1), "9007199254740992.0");
        assert_eq!(to_fixed(9007199254740992.0, 0), "9007199254740992");
        assert_eq!(to_fixed(1.25, 1), "1.3");
        assert_eq!(to_fixed(1.35, 1), "1.4");
        assert_eq!(to_fixed(10.235, 2), "10.23");
        assert_eq!(to_fixed(8.345, 2), "8.35");
        assert_eq!(to_fixed(0.05, 1), "0.1");
        assert_eq!(to_fixed(0.15, 1), "0.1");
        assert_eq!(to_fixed(99.995, 2), "100.00");
        assert_eq!(to_fixed(9.995, 2), "9.99");
        assert_eq!(to_fixed(100000000000000000000.0, 5), "100000000000000000000.00000");
        assert_eq!(to_fixed(123456789012345680000.0, 0), "123456789012345683968");
        assert_eq!(to_fixed(4294967295.5, 0), "4294967296");
        assert_eq!(to_fixed(0.00001, 3), "0.000");
        assert_eq!(to_fixed(-0.00001, 3), "-0.000");
        assert_eq!(to_fixed(1.1, 0), "1");
    }

    #[test]
    fn string_to_number_matches_node() {
        assert_num(string_to_number(""), 0.0);
        assert_num(string_to_number("   "), 0.0);
        assert_num(string_to_number("\t\n\r\u{000b}\u{C}"), 0.0);
        assert_num(string_to_number("\u{A0}\u{FEFF} 42 \u{2028}\u{2029}\u{3000}"), 42.0);
        assert_num(string_to_number("\u{180E}1"), f64::NAN);
        assert_num(string_to_number("\u{85}1"), f64::NAN);
        assert_num(string_to_number("0"), 0.0);
        assert_num(string_to_number("-0"), -0.0);
        assert_num(string_to_number("+0"), 0.0);
        assert_num(string_to_number("42"), 42.0);
        assert_num(string_to_number("-42"), -42.0);
        assert_num(string_to_number("+42"), 42.0);
        assert_num(string_to_number("  12.5  "), 12.5);
        assert_num(string_to_number(".5"), 0.5);
        assert_num(string_to_number("5."), 5.0);
        assert_num(string_to_number("-.5"), -0.5);
        assert_num(string_to_number("."), f64::NAN);
        assert_num(string_to_number("+"), f64::NAN);
        assert_num(string_to_number("-"), f64::NAN);
        assert_num(string_to_number("1e3"), 1000.0);
        assert_num(string_to_number("1E3"), 1000.0);
        assert_num(string_to_number("1e+3"), 1000.0);
        assert_num(string_to_number("1e-3"), 0.001);
        assert_num(string_to_number("1.e3"), 1000.0);
        assert_num(string_to_number(".e3"), f64::NAN);
        assert_num(string_to_number("1e"), f64::NAN);
        assert_num(string_to_number("1e+"), f64::NAN);
        assert_num(string_to_number("e3"), f64::NAN);
        assert_num(string_to_number("0x10"), 16.0);
        assert_num(string_to_number("0X1f"), 31.0);
        assert_num(string_to_number("0xFF"), 255.0);
        assert_num(string_to_number("-0x10"), f64::NAN);
        assert_num(string_to_number("+0x10"), f64::NAN);
        assert_num(string_to_number("0x"), f64::NAN);
        assert_num(string_to_number("0xg"), f64::NAN);
        assert_num(string_to_number("0o17"), 15.0);
        assert_num(string_to_number("0O17"), 15.0);
        assert_num(string_to_number("0o8"), f64::NAN);
        assert_num(string_to_number("0b101"), 5.0);
        assert_num(string_to_number("0B11"), 3.0);
        assert_num(string_to_number("0b2"), f64::NAN);
        assert_num(string_to_number("0b"), f64::NAN);
        assert_num(string_to_number("Infinity"), f64::INFINITY);
        assert_num(string_to_number("+Infinity"), f64::INFINITY);
        assert_num(string_to_number("-Infinity"), f64::NEG_INFINITY);
        assert_num(string_to_number("infinity"), f64::NAN);
        assert_num(string_to_number("INFINITY"), f64::NAN);
        assert_num(string_to_number("Infinityx"), f64::NAN);
        assert_num(string_to_number("NaN"), f64::NAN);
        assert_num(string_to_number("1_000"), f64::NAN);
        assert_num(string_to_number("1,000"), f64::NAN);
        assert_num(string_to_number("12abc"), f64::NAN);
        assert_num(string_to_number("abc"), f64::NAN);
        assert_num(string_to_number("00012"), 12.0);
        assert_num(string_to_number("0.0000001"), 1e-7);
        assert_num(string_to_number("1e400"), f64::INFINITY);
        assert_num(string_to_number("-1e400"), f64::NEG_INFINITY);
        assert_num(string_to_number("1e-400"), 0.0);
        assert_num(string_to_number("9007199254740993"), 9007199254740992.0);
        assert_num(string_to_number("9007199254740993.0000000001"), 9007199254740994.0);
        assert_num(string_to_number("0x20000000000001"), 9007199254740992.0);
        assert_num(string_to_number("0x20000000000003"), 9007199254740996.0);
        assert_num(string_to_number("0x1fffffffffffff8"), 144115188075855870.0);
        assert_num(string_to_number("0x1fffffffffffff7"), 144115188075855860.0);
        assert_num(string_to_number("1.7976931348623157e308"), 1.7976931348623157e+308);
        assert_num(string_to_number("1.7976931348623159e308"), f64::INFINITY);
        assert_num(string_to_number("2.4703282292062327e-324"), 0.0);
        assert_num(string_to_number("2.4703282292062328e-324"), 5e-324);
        assert_num(string_to_number("123456789012345678901234567890"), 1.2345678901234568e+29);
        assert_num(string_to_number(" 1 2 "), f64::NAN);
        assert_num(string_to_number("1e1000000000000"), f64::INFINITY);
        assert_num(string_to_number("\u{661}"), f64::NAN);
    }

    #[test]
    fn parse_float_matches_node() {
        assert_num(parse_float("3.14"), 3.14);
        assert_num(parse_float("  3.14abc"), 3.14);
        assert_num(parse_float("-3.14"), -3.14);
        assert_num(parse_float("+3.14"), 3.14);
        assert_num(parse_float(".5"), 0.5);
        assert_num(parse_float("-.5"), -0.5);
        assert_num(parse_float("5."), 5.0);
        assert_num(parse_float("."), f64::NAN);
        assert_num(parse_float("-"), f64::NAN);
        assert_num(parse_float(""), f64::NAN);
        assert_num(parse_float("   "), f64::NAN);
        assert_num(parse_float("abc"), f64::NAN);
        assert_num(parse_float("1e3"), 1000.0);
        assert_num(parse_float("1e"), 1.0);
        assert_num(parse_float("1e+"), 1.0);
        assert_num(parse_float("1e-"), 1.0);
        assert_num(parse_float("1.5e3.2"), 1500.0);
        assert_num(parse_float("1.5.3"), 1.5);
        assert_num(parse_float("0x10"), 0.0);
        assert_num(parse_float("-0"), -0.0);
        assert_num(parse_float("-0.0"), -0.0);
        assert_num(parse_float("Infinity"), f64::INFINITY);
        assert_num(parse_float("-Infinityx"), f64::NEG_INFINITY);
        assert_num(parse_float("+Infinity"), f64::INFINITY);
        assert_num(parse_float("infinity"), f64::NAN);
        assert_num(parse_float("\u{A0}\u{FEFF}\u{2028} 7.5"), 7.5);
        assert_num(parse_float("\u{85} 7"), f64::NAN);
        assert_num(parse_float("1_000"), 1.0);
        assert_num(parse_float("00012.50"), 12.5);
        assert_num(parse_float("1e400"), f64::INFINITY);
        assert_num(parse_float("-1e-400"), -0.0);
        assert_num(parse_float("9007199254740993"), 9007199254740992.0);
        assert_num(parse_float("123456789012345678901234567890e-10"), 12345678901234567000.0);
        assert_num(parse_float("e5"), f64::NAN);
        assert_num(parse_float("1E+2xyz"), 100.0);
        assert_num(parse_float("2.4703282292062328e-324"), 5e-324);
    }

    #[test]
    fn parse_int_matches_node() {
        assert_num(parse_int("123", None), 123.0);
        assert_num(parse_int("  -123abc", None), -123.0);
        assert_num(parse_int("+42", None), 42.0);
        assert_num(parse_int("0x1F", None), 31.0);
        assert_num(parse_int("0X1f", None), 31.0);
        assert_num(parse_int("-0x1F", None), -31.0);
        assert_num(parse_int("0x", None), f64::NAN);
        assert_num(parse_int("0xg", None), f64::NAN);
        assert_num(parse_int("", None), f64::NAN);
        assert_num(parse_int("   ", None), f64::NAN);
        assert_num(parse_int("abc", None), f64::NAN);
        assert_num(parse_int("-0", None), -0.0);
        assert_num(parse_int("0", None), 0.0);
        assert_num(parse_int("00012", None), 12.0);
        assert_num(parse_int("12.9", None), 12.0);
        assert_num(parse_int("1e3", None), 1.0);
        assert_num(parse_int("Infinity", None), f64::NAN);
        assert_num(parse_int("\u{A0}\u{FEFF} 77", None), 77.0);
        assert_num(parse_int("0x1F", Some(16.0)), 31.0);
        assert_num(parse_int("0x1F", Some(10.0)), 0.0);
        assert_num(parse_int("1F", Some(16.0)), 31.0);
        assert_num(parse_int("ff", Some(16.0)), 255.0);
        assert_num(parse_int("FF", Some(16.0)), 255.0);
        assert_num(parse_int("z", Some(36.0)), 35.0);
        assert_num(parse_int("Z", Some(36.0)), 35.0);
        assert_num(parse_int("zz", Some(35.0)), f64::NAN);
        assert_num(parse_int("101", Some(2.0)), 5.0);
        assert_num(parse_int("102", Some(2.0)), 2.0);
        assert_num(parse_int("2", Some(2.0)), f64::NAN);
        assert_num(parse_int("777", Some(8.0)), 511.0);
        assert_num(parse_int("10", Some(1.0)), f64::NAN);
        assert_num(parse_int("10", Some(37.0)), f64::NAN);
        assert_num(parse_int("10", Some(0.0)), 10.0);
        assert_num(parse_int("10", Some(-1.0)), f64::NAN);
        assert_num(parse_int("10", Some(f64::NAN)), 10.0);
        assert_num(parse_int("10", Some(16.9)), 16.0);
        assert_num(parse_int("10", Some(4294967312.0)), 16.0);
        assert_num(parse_int("10", Some(4294967298.0)), 2.0);
        assert_num(parse_int("0x10", Some(0.0)), 16.0);
        assert_num(parse_int("123456789012345678901234567890", None), 1.2345678901234568e+29);
        assert_num(parse_int("9007199254740993", None), 9007199254740992.0);
        assert_num(parse_int("900719925474099267", None), 900719925474099300.0);
        assert_num(parse_int("ffffffffffffffffff", Some(16.0)), 4.722366482869645e+21);
        assert_num(parse_int("20000000000001", Some(16.0)), 9007199254740992.0);
        assert_num(parse_int("20000000000003", Some(16.0)), 9007199254740996.0);
        assert_num(
            parse_int("111111111111111111111111111111111111111111111111111111111111", Some(2.0)),
            1152921504606847000.0,
        );
        assert_num(parse_int("zzzzzzzzzzzzzzzzzzzz", Some(36.0)), 1.3367494538843734e+31);
        assert_num(parse_int("123456789abcdefghij", Some(20.0)), 2.9046426592797785e+23);
        assert_num(parse_int("1234567890123456789", Some(7.0)), 22875.0);
        assert_num(parse_int("1234567890123456789012", Some(11.0)), 8.954302398029663e+21);
        assert_num(parse_int("-zz", Some(36.0)), -1295.0);
        assert_num(parse_int("0b11", None), 0.0);
        assert_num(parse_int("0o11", None), 0.0);
        assert_num(parse_int("  +0x", Some(16.0)), f64::NAN);
        assert_num(parse_int("-", Some(10.0)), f64::NAN);
        assert_num(parse_int("12_34", None), 12.0);
    }

    #[test]
    fn to_int32_matches_node() {
        assert_eq!(to_int32(0.0), 0);
        assert_eq!(to_int32(-0.0), 0);
        assert_eq!(to_int32(f64::NAN), 0);
        assert_eq!(to_int32(f64::INFINITY), 0);
        assert_eq!(to_int32(f64::NEG_INFINITY), 0);
        assert_eq!(to_int32(1.9), 1);
        assert_eq!(to_int32(-1.9), -1);
        assert_eq!(to_int32(2147483647.0), 2147483647);
        assert_eq!(to_int32(2147483648.0), -2147483648);
        assert_eq!(to_int32(-2147483648.0), -2147483648);
        assert_eq!(to_int32(-2147483649.0), 2147483647);
        assert_eq!(to_int32(4294967295.0), -1);
        assert_eq!(to_int32(4294967296.0), 0);
        assert_eq!(to_int32(4294967297.0), 1);
        assert_eq!(to_int32(4294967296.5), 0);
        assert_eq!(to_int32(-4294967297.0), -1);
        assert_eq!(to_int32(9007199254740992.0), 0);
        assert_eq!(to_int32(9007199254740994.0), 2);
        assert_eq!(to_int32(18446744073709552000.0), 0);
        assert_eq!(to_int32(-18446744073709560000.0), -8192);
        assert_eq!(to_int32(1e+21), -559939584);
        assert_eq!(to_int32(-1e+21), 559939584);
        assert_eq!(to_int32(1e+300), 0);
        assert_eq!(to_int32(5e-324), 0);
        assert_eq!(to_int32(-0.5), 0);
        assert_eq!(to_int32(1.7976931348623157e+308), 0);
        assert_eq!(to_int32(3000000000.7), -1294967296);
        assert_eq!(to_int32(-3000000000.7), 1294967296);
        assert_eq!(to_int32(9223372036854778000.0), 2048);
    }

    #[test]
    fn to_uint32_matches_node() {
        assert_eq!(to_uint32(0.0), 0);
        assert_eq!(to_uint32(-0.0), 0);
        assert_eq!(to_uint32(f64::NAN), 0);
        assert_eq!(to_uint32(f64::INFINITY), 0);
        assert_eq!(to_uint32(f64::NEG_INFINITY), 0);
        assert_eq!(to_uint32(1.9), 1);
        assert_eq!(to_uint32(-1.9), 4294967295);
        assert_eq!(to_uint32(2147483647.0), 2147483647);
        assert_eq!(to_uint32(2147483648.0), 2147483648);
        assert_eq!(to_uint32(-2147483648.0), 2147483648);
        assert_eq!(to_uint32(-2147483649.0), 2147483647);
        assert_eq!(to_uint32(4294967295.0), 4294967295);
        assert_eq!(to_uint32(4294967296.0), 0);
        assert_eq!(to_uint32(4294967297.0), 1);
        assert_eq!(to_uint32(4294967296.5), 0);
        assert_eq!(to_uint32(-4294967297.0), 4294967295);
        assert_eq!(to_uint32(9007199254740992.0), 0);
        assert_eq!(to_uint32(9007199254740994.0), 2);
        assert_eq!(to_uint32(18446744073709552000.0), 0);
        assert_eq!(to_uint32(-18446744073709560000.0), 4294959104);
        assert_eq!(to_uint32(1e+21), 3735027712);
        assert_eq!(to_uint32(-1e+21), 559939584);
        assert_eq!(to_uint32(1e+300), 0);
        assert_eq!(to_uint32(5e-324), 0);
        assert_eq!(to_uint32(-0.5), 0);
        assert_eq!(to_uint32(1.7976931348623157e+308), 0);
        assert_eq!(to_uint32(3000000000.7), 3000000000);
        assert_eq!(to_uint32(-3000000000.7), 1294967296);
        assert_eq!(to_uint32(9223372036854778000.0), 2048);
    }

    #[test]
    fn json_quote_matches_node() {
        assert_eq!(jq(""), "\"\"");
        assert_eq!(jq("abc"), "\"abc\"");
        assert_eq!(jq("\""), "\"\\\"\"");
        assert_eq!(jq("\\"), "\"\\\\\"");
        assert_eq!(jq("\"\\\""), "\"\\\"\\\\\\\"\"");
        assert_eq!(jq("\u{8}\u{C}\n\r\t"), "\"\\b\\f\\n\\r\\t\"");
        assert_eq!(jq("\u{0000}"), "\"\\u0000\"");
        assert_eq!(jq("\u{0001}\u{0007}\u{000b}\u{000e}\u{001f}"), "\"\\u0001\\u0007\\u000b\\u000e\\u001f\"");
        assert_eq!(jq("\u{001f}"), "\"\\u001f\"");
        assert_eq!(jq(" "), "\" \"");
        assert_eq!(jq("\u{7F}"), "\"\u{7F}\"");
        assert_eq!(jq("\u{80}"), "\"\u{80}\"");
        assert_eq!(jq("\u{E9}"), "\"\u{E9}\"");
        assert_eq!(jq("\u{2028}\u{2029}"), "\"\u{2028}\u{2029}\"");
        assert_eq!(jq("\u{1F600}"), "\"\u{1F600}\"");
        assert_eq!(jq("/"), "\"/\"");
        assert_eq!(jq("<script>"), "\"<script>\"");
        assert_eq!(jq("it's"), "\"it's\"");
        assert_eq!(jq("a\nb\tc\"d\\e"), "\"a\\nb\\tc\\\"d\\\\e\"");
        assert_eq!(jq("\u{A0}\u{FEFF}"), "\"\u{A0}\u{FEFF}\"");
    }

    #[test]
    fn long_inputs_match_node() {
        let ones_then_zeros = format!("1{}", "0".repeat(400));
        assert_num(string_to_number(&ones_then_zeros), f64::INFINITY);
        assert_num(parse_int(&ones_then_zeros, None), f64::INFINITY);
        assert_num(parse_float(&ones_then_zeros), f64::INFINITY);
        assert_num(string_to_number(&format!("0.{}1", "0".repeat(400))), 0.0);
        assert_num(string_to_number(&format!("0.{}1", "0".repeat(320))), 1e-321);
        assert_num(string_to_number(&format!("0x{}", "f".repeat(300))), f64::INFINITY);
        assert_num(string_to_number(&format!("0x{}", "f".repeat(255))), 1.1235582092889474e+307);
        assert_num(parse_int(&format!("0x{}", "f".repeat(300)), None), f64::INFINITY);
        assert_num(parse_int(&format!("1{}", "0".repeat(308)), None), 1e308);
        assert_num(parse_float(&format!("1{}x", "0".repeat(308))), 1e308);
        assert_num(parse_int(&"z".repeat(100), Some(36.0)), 4.268252238120275e+155);
        assert_num(string_to_number(&format!("0b1{}", "0".repeat(1023))), 8.98846567431158e+307);
        assert_num(string_to_number(&format!("0b1{}", "0".repeat(1024))), f64::INFINITY);
    }

    #[test]
    fn to_fixed_agrees_with_exact_rounding_on_grid() {
        // k/8 values are exact in binary, so ties must round away from zero.
        assert_eq!(to_fixed(0.125, 2), "0.13");
        assert_eq!(to_fixed(0.375, 2), "0.38");
        assert_eq!(to_fixed(-0.125, 2), "-0.13");
        assert_eq!(to_fixed(1e-10, 100).len(), 102);
    }

    #[test]
    fn int32_roundtrip_small_ints() {
        for i in -1000i32..1000 {
            assert_eq!(to_int32(i as f64), i);
            assert_eq!(to_uint32(i as f64), i as u32);
            assert_num(string_to_number(&i.to_string()), i as f64);
            assert_num(parse_int(&i.to_string(), None), i as f64);
            assert_eq!(number_to_string(i as f64), i.to_string());
            assert_num(parse_int(&number_to_string_radix(i as f64, 7), Some(7.0)), i as f64);
        }
    }
}
