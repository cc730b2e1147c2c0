//! 8-byte NaN-boxed values.
//!
//! A [`Value`] is a `u64`. Every bit pattern below `TAG_BASE` is an IEEE-754
//! double (NaNs are canonicalised on the way in, so no double ever lands in
//! the tagged range). Above it, the top 16 bits are a tag:
//!
//! | top 16 bits | meaning                                   |
//! |-------------|-------------------------------------------|
//! | `0xFFF9`    | specials: undefined, null, false, true     |
//! | `0xFFFC`    | pointer to a heap [`Obj`] in the low 48 bits |
//!
//! Values are `Copy`; heap values are kept alive by the GC's tracing from
//! roots, never by Rust ownership.

use super::object::Obj;
use std::fmt;

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Value(u64);

const TAG_BASE: u64 = 0xFFF9_0000_0000_0000;
const TAG_SPECIAL: u64 = 0xFFF9_0000_0000_0000;
const TAG_OBJ: u64 = 0xFFFC_0000_0000_0000;
const TAG_MASK: u64 = 0xFFFF_0000_0000_0000;
const PTR_MASK: u64 = 0x0000_FFFF_FFFF_FFFF;
const CANONICAL_NAN: u64 = 0x7FF8_0000_0000_0000;

impl Value {
    pub const UNDEFINED: Value = Value(TAG_SPECIAL);
    pub const NULL: Value = Value(TAG_SPECIAL | 1);
    pub const FALSE: Value = Value(TAG_SPECIAL | 2);
    pub const TRUE: Value = Value(TAG_SPECIAL | 3);
    /// What a `let`/`const` binding holds before its declaration has run
    /// (the temporal dead zone), where the compiler could not prove it
    /// initialised. Only `CheckInit` looks at it; no script ever sees it:
    /// every read that could find it is checked.
    pub const HOLE: Value = Value(TAG_SPECIAL | 4);
    /// The key of a deleted Map or Set entry (a tombstone in
    /// `MapData`'s entries). No script value can have these bits: a
    /// number is below `TAG_BASE` (NaNs are canonicalised), an object
    /// carries `TAG_OBJ`, and the only specials made are the four above
    /// and `HOLE`, which is never stored in a collection (every read that
    /// could see it is checked). So no key a script passes can equal it,
    /// and it is no object: the collector, which marks only `TAG_OBJ`
    /// values, would skip it even if a walk of the entries did not.
    pub const DELETED: Value = Value(TAG_SPECIAL | 5);

    #[inline(always)]
    pub fn number(f: f64) -> Value {
        if f.is_nan() {
            Value(CANONICAL_NAN)
        } else {
            Value(f.to_bits())
        }
    }

    /// For the result of `+ - * / %` on two numbers. IEEE arithmetic on
    /// canonical inputs only produces the default NaNs (`0x7FF8…` or
    /// `0xFFF8…`), which are below the tag range, so no check is needed.
    #[inline(always)]
    pub fn number_arith(f: f64) -> Value {
        debug_assert!(f.to_bits() < TAG_BASE);
        Value(f.to_bits())
    }

    #[inline(always)]
    pub fn bool(b: bool) -> Value {
        if b {
            Value::TRUE
        } else {
            Value::FALSE
        }
    }

    #[inline(always)]
    pub fn object(p: *const Obj) -> Value {
        debug_assert!(!p.is_null(), "an object value needs a heap pointer (see `as_obj`)");
        Value(TAG_OBJ | (p as u64 & PTR_MASK))
    }

    #[inline(always)]
    pub fn bits(self) -> u64 {
        self.0
    }

    #[inline(always)]
    pub fn from_bits(bits: u64) -> Value {
        Value(bits)
    }

    #[inline(always)]
    pub fn is_number(self) -> bool {
        self.0 < TAG_BASE
    }

    #[inline(always)]
    pub fn as_number(self) -> f64 {
        f64::from_bits(self.0)
    }

    #[inline(always)]
    pub fn is_undefined(self) -> bool {
        self == Value::UNDEFINED
    }

    #[inline(always)]
    pub fn is_null(self) -> bool {
        self == Value::NULL
    }

    #[inline(always)]
    pub fn is_nullish(self) -> bool {
        self == Value::NULL || self == Value::UNDEFINED
    }

    #[inline(always)]
    pub fn is_bool(self) -> bool {
        self == Value::TRUE || self == Value::FALSE
    }

    #[inline(always)]
    pub fn is_object(self) -> bool {
        self.0 & TAG_MASK == TAG_OBJ
    }

    /// The heap object, if this is a pointer.
    #[inline(always)]
    pub fn as_obj(self) -> Option<&'static Obj> {
        if self.is_object() {
            // SAFETY: object values are only made from live heap pointers,
            // and the GC frees an object only when no root reaches it (so no
            // `Value` that a mutator can still see points to freed memory).
            // Telling the optimiser the pointer is non-null lets it test
            // `is_some()` on the tag alone.
            let p = (self.0 & PTR_MASK) as *const Obj;
            unsafe {
                std::hint::assert_unchecked(!p.is_null());
                Some(&*p)
            }
        } else {
            None
        }
    }

    #[inline(always)]
    pub fn obj_ptr(self) -> *const Obj {
        (self.0 & PTR_MASK) as *const Obj
    }

    /// JavaScript truthiness.
    #[inline]
    pub fn truthy(self) -> bool {
        if self.is_number() {
            let f = self.as_number();
            return !(f == 0.0 || f.is_nan());
        }
        match self {
            Value::TRUE => true,
            Value::FALSE | Value::NULL | Value::UNDEFINED => false,
            _ => match self.as_obj() {
                Some(o) => !o.is_empty_string(),
                None => false,
            },
        }
    }
}

impl Default for Value {
    fn default() -> Value {
        Value::UNDEFINED
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_number() {
            write!(f, "{}", self.as_number())
        } else {
            match *self {
                Value::UNDEFINED => write!(f, "undefined"),
                Value::NULL => write!(f, "null"),
                Value::TRUE => write!(f, "true"),
                Value::FALSE => write!(f, "false"),
                Value::HOLE => write!(f, "<hole>"),
                Value::DELETED => write!(f, "<deleted>"),
                _ => write!(f, "<obj {:#x}>", self.0 & PTR_MASK),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip() {
        for f in [0.0, -0.0, 1.5, -1e300, f64::INFINITY, f64::NEG_INFINITY, f64::MIN_POSITIVE] {
            let v = Value::number(f);
            assert!(v.is_number());
            assert_eq!(v.as_number().to_bits(), f.to_bits());
        }
    }

    #[test]
    fn every_nan_is_a_number_not_a_tag() {
        let nans = [f64::NAN, -f64::NAN, f64::from_bits(0xFFFF_FFFF_FFFF_FFFF), std::hint::black_box(0.0) / 0.0];
        for n in nans {
            let v = Value::number(n);
            assert!(v.is_number());
            assert!(v.as_number().is_nan());
            assert!(!v.is_object());
        }
    }

    #[test]
    fn specials_are_distinct_and_not_numbers() {
        let s = [Value::UNDEFINED, Value::NULL, Value::TRUE, Value::FALSE, Value::HOLE, Value::DELETED];
        for (i, a) in s.iter().enumerate() {
            assert!(!a.is_number());
            assert!(!a.is_object());
            for (j, b) in s.iter().enumerate() {
                assert_eq!(i == j, a == b);
            }
        }
        assert!(Value::NULL.is_nullish() && Value::UNDEFINED.is_nullish());
        assert!(!Value::FALSE.is_nullish());
        assert!(!Value::HOLE.is_nullish() && !Value::DELETED.is_nullish() && !Value::DELETED.is_bool());
        assert_eq!(format!("{:?} {:?}", Value::HOLE, Value::DELETED), "<hole> <deleted>");
    }

    #[test]
    fn truthiness_of_primitives() {
        assert!(!Value::number(0.0).truthy());
        assert!(!Value::number(-0.0).truthy());
        assert!(!Value::number(f64::NAN).truthy());
        assert!(Value::number(2.0).truthy());
        assert!(!Value::NULL.truthy() && !Value::UNDEFINED.truthy() && !Value::FALSE.truthy());
        assert!(Value::TRUE.truthy());
    }
}
