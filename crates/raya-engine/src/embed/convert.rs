//! Typed conversions across the host boundary: [`IntoValue`] and
//! [`FromValue`] between Rust types and [`HostValue`], [`IntoArgs`] for
//! the arguments of a call into a script, and [`HostFunction`], which
//! turns a typed closure into a host function.

use super::{HostError, HostValue, Throw};
use crate::vm::object::Body;
use crate::vm::{Runtime, Value};
use std::collections::{BTreeMap, HashMap};

/// A Rust value that becomes a script value.
pub trait IntoValue {
    /// The value the script sees.
    fn into_value(self) -> HostValue;

    /// The script value itself, made on the program's runtime: what a
    /// typed host function returns goes straight into the script, not
    /// through a [`HostValue`] when the type allows (numbers, booleans).
    #[doc(hidden)]
    fn into_script(self, rt: &mut Runtime) -> Value
    where
        Self: Sized,
    {
        super::from_host(rt, &self.into_value())
    }
}

/// A script value as a typed host function's parameter sees it
/// ([`FromValue::from_script`]): valid only during the call.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct ScriptValue(pub(crate) Value);

/// A Rust value made from a script value; a mismatch is a
/// [`HostError::Conversion`] saying what was expected and what came.
pub trait FromValue: Sized {
    /// Converts `v`, or says why not.
    fn from_value(v: HostValue) -> Result<Self, HostError>;

    /// Converts a script value directly, without making a [`HostValue`]
    /// first, where the type allows; None: convert through
    /// [`FromValue::from_value`] (also for every value the direct way
    /// would refuse, so that errors say the same either way).
    #[doc(hidden)]
    fn from_script(_v: ScriptValue) -> Option<Result<Self, HostError>> {
        None
    }
}

/// A script value as a `T`: straight from the value where the type
/// allows ([`FromValue::from_script`]), else through a [`HostValue`]
/// (a value no host type can take, a function or a cycle, is a
/// [`HostError::Conversion`]). On a mutator of the value's program.
///
/// Inlined, the way through a `HostValue` kept out of line: a call's
/// result (a number, say) then reaches the caller in registers, not
/// stored and read back (see `TaskInterpreter::run`).
#[inline(always)]
pub(crate) fn from_script_value<T: FromValue>(v: Value) -> Result<T, HostError> {
    match T::from_script(ScriptValue(v)) {
        Some(r) => r,
        None => from_host_value(v),
    }
}

/// [`from_script_value`] through a [`HostValue`].
#[inline(never)]
fn from_host_value<T: FromValue>(v: Value) -> Result<T, HostError> {
    T::from_value(super::to_host(v, &mut Vec::new()).map_err(HostError::Conversion)?)
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

    fn into_script(self, _rt: &mut Runtime) -> Value {
        Value::UNDEFINED
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

    fn into_script(self, _rt: &mut Runtime) -> Value {
        Value::bool(self)
    }
}

impl FromValue for bool {
    fn from_value(v: HostValue) -> Result<Self, HostError> {
        match v {
            HostValue::Bool(b) => Ok(b),
            other => Err(mismatch("a boolean", &other)),
        }
    }

    fn from_script(v: ScriptValue) -> Option<Result<Self, HostError>> {
        v.0.is_bool().then_some(Ok(v.0 == Value::TRUE))
    }
}

impl IntoValue for f64 {
    fn into_value(self) -> HostValue {
        HostValue::Number(self)
    }

    fn into_script(self, _rt: &mut Runtime) -> Value {
        Value::number(self)
    }
}

impl FromValue for f64 {
    fn from_value(v: HostValue) -> Result<Self, HostError> {
        match v {
            HostValue::Number(n) => Ok(n),
            other => Err(mismatch("a number", &other)),
        }
    }

    fn from_script(v: ScriptValue) -> Option<Result<Self, HostError>> {
        v.0.is_number().then(|| Ok(v.0.as_number()))
    }
}

impl IntoValue for f32 {
    fn into_value(self) -> HostValue {
        HostValue::Number(self as f64)
    }

    fn into_script(self, _rt: &mut Runtime) -> Value {
        Value::number(self as f64)
    }
}

impl FromValue for f32 {
    fn from_value(v: HostValue) -> Result<Self, HostError> {
        f64::from_value(v).map(|n| n as f32)
    }

    fn from_script(v: ScriptValue) -> Option<Result<Self, HostError>> {
        v.0.is_number().then(|| Ok(v.0.as_number() as f32))
    }
}

macro_rules! integers {
    ($($t:ty),*) => {$(
        impl IntoValue for $t {
            /// Exact up to 2^53 in magnitude (Raya numbers are `f64`).
            fn into_value(self) -> HostValue {
                HostValue::Number(self as f64)
            }

            fn into_script(self, _rt: &mut Runtime) -> Value {
                Value::number(self as f64)
            }
        }

        impl FromValue for $t {
            /// A number that is an integer within the type's range.
            fn from_script(v: ScriptValue) -> Option<Result<Self, HostError>> {
                v.0.is_number().then(|| Self::from_value(HostValue::Number(v.0.as_number())))
            }

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

    fn into_script(self, rt: &mut Runtime) -> Value {
        rt.heap.alloc_str(self)
    }
}

impl IntoValue for &str {
    fn into_value(self) -> HostValue {
        HostValue::String(self.to_string())
    }

    fn into_script(self, rt: &mut Runtime) -> Value {
        rt.heap.alloc_str(self)
    }
}

impl FromValue for String {
    fn from_value(v: HostValue) -> Result<Self, HostError> {
        match v {
            HostValue::String(s) => Ok(s),
            other => Err(mismatch("a string", &other)),
        }
    }

    fn from_script(v: ScriptValue) -> Option<Result<Self, HostError>> {
        match v.0.as_obj().map(|o| &o.body) {
            Some(Body::Str(s)) => Some(Ok(s.s.to_string())),
            _ => None,
        }
    }
}

/// `None` is `undefined`.
impl<T: IntoValue> IntoValue for Option<T> {
    fn into_value(self) -> HostValue {
        self.map_or(HostValue::Undefined, T::into_value)
    }

    fn into_script(self, rt: &mut Runtime) -> Value {
        match self {
            Some(v) => v.into_script(rt),
            None => Value::UNDEFINED,
        }
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

    fn from_script(v: ScriptValue) -> Option<Result<Self, HostError>> {
        if v.0.is_nullish() {
            return Some(Ok(None));
        }
        T::from_script(v).map(|r| r.map(Some))
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

            fn push_script(self, rt: &mut Runtime, out: &mut Vec<Value>) {
                $(out.push(self.$i.into_script(rt));)+
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

    /// The arguments made straight into script values (on the program's
    /// runtime), appended to `out`: a call's arguments go into the
    /// callee's registers without a [`HostValue`] in between where each
    /// element's type allows ([`IntoValue::into_script`]).
    #[doc(hidden)]
    fn push_script(self, rt: &mut Runtime, out: &mut Vec<Value>)
    where
        Self: Sized,
    {
        for a in self.into_args() {
            out.push(super::from_host(rt, &a));
        }
    }
}

impl IntoArgs for () {
    fn into_args(self) -> Vec<HostValue> {
        Vec::new()
    }

    fn push_script(self, _rt: &mut Runtime, _out: &mut Vec<Value>) {}
}

impl IntoArgs for Vec<HostValue> {
    fn into_args(self) -> Vec<HostValue> {
        self
    }

    fn push_script(self, rt: &mut Runtime, out: &mut Vec<Value>) {
        self.as_slice().push_script(rt, out)
    }
}

impl IntoArgs for &[HostValue] {
    fn into_args(self) -> Vec<HostValue> {
        self.to_vec()
    }

    fn push_script(self, rt: &mut Runtime, out: &mut Vec<Value>) {
        for a in self {
            out.push(super::from_host(rt, a));
        }
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

    /// [`HostFunction::call_host`] with the script's values as they are,
    /// on the calling worker's runtime: parameters whose types allow it
    /// are read straight from the values, and the result made straight
    /// into one.
    #[doc(hidden)]
    fn call_script(&self, name: &str, rt: &mut Runtime, args: &[Value]) -> Result<Value, Throw> {
        let mut hargs = Vec::with_capacity(args.len());
        for &a in args {
            hargs.push(super::to_host(a, &mut Vec::new()).map_err(|e| Throw::Type(format!("{name}: {e}")))?);
        }
        self.call_host(name, &hargs).map(|v| super::from_host(rt, &v))
    }
}

/// Argument `i` of host function `name` as a `T`: a missing one is
/// `undefined`; one that does not convert is a `TypeError` naming the
/// function and the parameter (also used by async host functions).
pub(super) fn arg<T: FromValue>(name: &str, args: &[HostValue], i: usize) -> Result<T, Throw> {
    let v = args.get(i).cloned().unwrap_or_default();
    T::from_value(v).map_err(|e| param_error(name, i, e))
}

/// [`arg`] from the script's value itself (see
/// [`FromValue::from_script`]); a value no host type can take (a
/// function, a cycle) is a `TypeError` naming the function.
fn script_arg<T: FromValue>(name: &str, args: &[Value], i: usize) -> Result<T, Throw> {
    let v = args.get(i).copied().unwrap_or(Value::UNDEFINED);
    let r = match T::from_script(ScriptValue(v)) {
        Some(r) => r,
        None => {
            let h = super::to_host(v, &mut Vec::new()).map_err(|e| Throw::Type(format!("{name}: {e}")))?;
            T::from_value(h)
        }
    };
    r.map_err(|e| param_error(name, i, e))
}

/// The `TypeError` of parameter `i` of host function `name`.
fn param_error(name: &str, i: usize, e: HostError) -> Throw {
    let why = match e {
        HostError::Conversion(m) => m,
        e => e.to_string(),
    };
    Throw::Type(format!("{name}: parameter {} {why}", i + 1))
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

            #[allow(unused_variables)]
            fn call_script(&self, name: &str, rt: &mut Runtime, args: &[Value]) -> Result<Value, Throw> {
                self($(script_arg::<$t>(name, args, $i)?),*)
                    .map(|r| r.into_script(rt))
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
