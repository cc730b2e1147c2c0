//! Typed conversions across the host boundary: [`IntoValue`] and
//! [`FromValue`] between Rust types and [`HostValue`], [`IntoArgs`] for
//! the arguments of a call into a script, and [`HostFunction`], which
//! turns a typed closure into a host function.

use super::{HostError, HostValue, Throw};
use std::collections::{BTreeMap, HashMap};

/// A Rust value that becomes a script value.
pub trait IntoValue {
    /// The value the script sees.
    fn into_value(self) -> HostValue;
}

/// A Rust value made from a script value; a mismatch is a
/// [`HostError::Conversion`] saying what was expected and what came.
pub trait FromValue: Sized {
    /// Converts `v`, or says why not.
    fn from_value(v: HostValue) -> Result<Self, HostError>;
}

/// What a conversion found: `a number`, `a string`, ...
pub(crate) fn describe(v: &HostValue) -> &'static str {
    match v {
        HostValue::Undefined => "undefined",
        HostValue::Null => "null",
        HostValue::Bool(_) => "a boolean",
        HostValue::Number(_) => "a number",
        HostValue::String(_) => "a string",
        HostValue::Array(_) => "an array",
        HostValue::Object(_) => "an object",
        HostValue::Host(o) => o.class_name(),
    }
}

fn mismatch(expected: &str, v: &HostValue) -> HostError {
    HostError::Conversion(format!("expected {expected}, got {}", describe(v)))
}

impl IntoValue for HostValue {
    fn into_value(self) -> HostValue {
        self
    }
}

impl FromValue for HostValue {
    fn from_value(v: HostValue) -> Result<Self, HostError> {
        Ok(v)
    }
}

impl IntoValue for () {
    fn into_value(self) -> HostValue {
        HostValue::Undefined
    }
}

/// Accepts anything (the value is dropped): for calls whose result is
/// not wanted.
impl FromValue for () {
    fn from_value(_: HostValue) -> Result<Self, HostError> {
        Ok(())
    }
}

impl IntoValue for bool {
    fn into_value(self) -> HostValue {
        HostValue::Bool(self)
    }
}

impl FromValue for bool {
    fn from_value(v: HostValue) -> Result<Self, HostError> {
        match v {
            HostValue::Bool(b) => Ok(b),
            other => Err(mismatch("a boolean", &other)),
        }
    }
}

impl IntoValue for f64 {
    fn into_value(self) -> HostValue {
        HostValue::Number(self)
    }
}

impl FromValue for f64 {
    fn from_value(v: HostValue) -> Result<Self, HostError> {
        match v {
            HostValue::Number(n) => Ok(n),
            other => Err(mismatch("a number", &other)),
        }
    }
}

impl IntoValue for f32 {
    fn into_value(self) -> HostValue {
        HostValue::Number(self as f64)
    }
}

impl FromValue for f32 {
    fn from_value(v: HostValue) -> Result<Self, HostError> {
        f64::from_value(v).map(|n| n as f32)
    }
}

macro_rules! integers {
    ($($t:ty),*) => {$(
        impl IntoValue for $t {
            /// Exact up to 2^53 in magnitude (Raya numbers are `f64`).
            fn into_value(self) -> HostValue {
                HostValue::Number(self as f64)
            }
        }

        impl FromValue for $t {
            /// A number that is an integer within the type's range.
            fn from_value(v: HostValue) -> Result<Self, HostError> {
                let n = f64::from_value(v)?;
                if n.fract() != 0.0 || n < <$t>::MIN as f64 || n > <$t>::MAX as f64 || n.is_nan() {
                    return Err(HostError::Conversion(format!(
                        "expected an integer that fits {}, got {}",
                        stringify!($t),
                        crate::builtins::numconv::number_to_string(n)
                    )));
                }
                Ok(n as $t)
            }
        }
    )*};
}

integers!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl IntoValue for String {
    fn into_value(self) -> HostValue {
        HostValue::String(self)
    }
}

impl IntoValue for &str {
    fn into_value(self) -> HostValue {
        HostValue::String(self.to_string())
    }
}

impl FromValue for String {
    fn from_value(v: HostValue) -> Result<Self, HostError> {
        match v {
            HostValue::String(s) => Ok(s),
            other => Err(mismatch("a string", &other)),
        }
    }
}

/// `None` is `undefined`.
impl<T: IntoValue> IntoValue for Option<T> {
    fn into_value(self) -> HostValue {
        self.map_or(HostValue::Undefined, T::into_value)
    }
}

/// `undefined` and `null` are `None` (so is a missing argument).
impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: HostValue) -> Result<Self, HostError> {
        match v {
            HostValue::Undefined | HostValue::Null => Ok(None),
            v => T::from_value(v).map(Some),
        }
    }
}

impl<T: IntoValue> IntoValue for Vec<T> {
    fn into_value(self) -> HostValue {
        HostValue::Array(self.into_iter().map(T::into_value).collect())
    }
}

impl<T: FromValue> FromValue for Vec<T> {
    fn from_value(v: HostValue) -> Result<Self, HostError> {
        match v {
            HostValue::Array(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, x)| T::from_value(x).map_err(|e| nested(e, &format!("[{i}]"))))
                .collect(),
            other => Err(mismatch("an array", &other)),
        }
    }
}

/// Where inside a value a conversion failed: `at [2]: expected ...`.
fn nested(e: HostError, at: &str) -> HostError {
    match e {
        HostError::Conversion(m) => match m.strip_prefix("at ") {
            Some(rest) => HostError::Conversion(format!("at {at}{rest}")),
            None => HostError::Conversion(format!("at {at}: {m}")),
        },
        e => e,
    }
}

macro_rules! maps {
    ($($m:ident),*) => {$(
        /// A plain object (in the map's iteration order).
        impl<T: IntoValue> IntoValue for $m<String, T> {
            fn into_value(self) -> HostValue {
                HostValue::Object(self.into_iter().map(|(k, v)| (k, v.into_value())).collect())
            }
        }

        /// From a plain object's properties.
        impl<T: FromValue> FromValue for $m<String, T> {
            fn from_value(v: HostValue) -> Result<Self, HostError> {
                match v {
                    HostValue::Object(props) => props
                        .into_iter()
                        .map(|(k, x)| {
                            let at = format!(".{k}");
                            T::from_value(x).map(|x| (k, x)).map_err(|e| nested(e, &at))
                        })
                        .collect(),
                    other => Err(mismatch("an object", &other)),
                }
            }
        }
    )*};
}

maps!(HashMap, BTreeMap);

macro_rules! tuples {
    ($(($n:literal: $($t:ident $i:tt),+))*) => {$(
        /// An array of the elements.
        impl<$($t: IntoValue),+> IntoValue for ($($t,)+) {
            fn into_value(self) -> HostValue {
                HostValue::Array(vec![$(self.$i.into_value()),+])
            }
        }

        /// From an array of exactly this many elements.
        impl<$($t: FromValue),+> FromValue for ($($t,)+) {
            fn from_value(v: HostValue) -> Result<Self, HostError> {
                match v {
                    HostValue::Array(items) if items.len() == $n => {
                        let mut it = items.into_iter();
                        Ok(($({
                            let _ = $i;
                            $t::from_value(it.next().unwrap_or_default()).map_err(|e| nested(e, &format!("[{}]", $i)))?
                        },)+))
                    }
                    HostValue::Array(items) => Err(HostError::Conversion(format!(
                        "expected an array of {} elements, got {}", $n, items.len()
                    ))),
                    other => Err(mismatch("an array", &other)),
                }
            }
        }

        impl<$($t: IntoValue),+> IntoArgs for ($($t,)+) {
            fn into_args(self) -> Vec<HostValue> {
                vec![$(self.$i.into_value()),+]
            }
        }
    )*};
}

tuples! {
    (1: A 0)
    (2: A 0, B 1)
    (3: A 0, B 1, C 2)
    (4: A 0, B 1, C 2, D 3)
    (5: A 0, B 1, C 2, D 3, E 4)
    (6: A 0, B 1, C 2, D 3, E 4, F 5)
}

/// The arguments of a call into a script: `()`, a tuple of
/// [`IntoValue`]s (`(1, "two")`), or a `Vec<HostValue>`.
pub trait IntoArgs {
    /// The arguments, in order.
    fn into_args(self) -> Vec<HostValue>;
}

impl IntoArgs for () {
    fn into_args(self) -> Vec<HostValue> {
        Vec::new()
    }
}

impl IntoArgs for Vec<HostValue> {
    fn into_args(self) -> Vec<HostValue> {
        self
    }
}

impl IntoArgs for &[HostValue] {
    fn into_args(self) -> Vec<HostValue> {
        self.to_vec()
    }
}

/// A typed closure usable as a host function (see
/// [`Vm::register_fn`](super::Vm::register_fn)): `Fn(A, B, ..) ->
/// Result<R, E>` with up to six parameters, each [`FromValue`], `R`
/// [`IntoValue`] and `E` [`Display`](std::fmt::Display). `Args` is a
/// marker the compiler infers.
pub trait HostFunction<Args>: Send + Sync + 'static {
    /// Calls the closure with the script's arguments: a missing one is
    /// `undefined`, extra ones are ignored; one that does not convert is a
    /// `TypeError` naming the function (`name`) and the parameter.
    fn call_host(&self, name: &str, args: &[HostValue]) -> Result<HostValue, Throw>;
}

/// Argument `i` of host function `name` as a `T`: a missing one is
/// `undefined`; one that does not convert is a `TypeError` naming the
/// function and the parameter (also used by async host functions).
pub(super) fn arg<T: FromValue>(name: &str, args: &[HostValue], i: usize) -> Result<T, Throw> {
    let v = args.get(i).cloned().unwrap_or_default();
    T::from_value(v).map_err(|e| {
        let why = match e {
            HostError::Conversion(m) => m,
            e => e.to_string(),
        };
        Throw::Type(format!("{name}: parameter {} {why}", i + 1))
    })
}

macro_rules! host_functions {
    ($(($($t:ident $i:tt),*))*) => {$(
        impl<Func, $($t,)* R, E> HostFunction<($($t,)*)> for Func
        where
            Func: Fn($($t),*) -> Result<R, E> + Send + Sync + 'static,
            $($t: FromValue,)*
            R: IntoValue,
            E: std::fmt::Display,
        {
            #[allow(unused_variables)]
            fn call_host(&self, name: &str, args: &[HostValue]) -> Result<HostValue, Throw> {
                self($(arg::<$t>(name, args, $i)?),*)
                    .map(IntoValue::into_value)
                    .map_err(|e| Throw::Error(e.to_string()))
            }
        }
    )*};
}

host_functions! {
    ()
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E2 4)
    (A 0, B 1, C 2, D 3, E2 4, F 5)
}
