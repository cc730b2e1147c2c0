//! Serde across the boundary (feature `serde`): [`Serde<T>`] wraps any
//! `Serialize`/`Deserialize` type so that it crosses as a script value
//! (structs and maps as objects, sequences and tuples as arrays, `None`
//! and unit as `null`), and [`to_value`]/[`from_value`] convert directly.
//! The conversion goes through `serde_json::Value`, whose data model is
//! the same as a script value's (numbers are `f64` on the script side).

use super::{FromValue, HostError, HostValue, IntoValue};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// A `Serialize`/`Deserialize` value as a host-function parameter or
/// result, or a call's argument or result:
/// `vm.register_fn("save", |Serde(job): Serde<Job>| ...)`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Serde<T>(pub T);

/// Converts any `Serialize` value to a script value.
pub fn to_value<T: Serialize + ?Sized>(v: &T) -> Result<HostValue, HostError> {
    let json = serde_json::to_value(v).map_err(|e| HostError::Conversion(e.to_string()))?;
    Ok(from_json(json))
}

/// Converts a script value to any `Deserialize` type.
pub fn from_value<T: DeserializeOwned>(v: HostValue) -> Result<T, HostError> {
    let json = to_json(v)?;
    serde_json::from_value(json).map_err(|e| HostError::Conversion(e.to_string()))
}

fn from_json(v: serde_json::Value) -> HostValue {
    use serde_json::Value as J;
    match v {
        J::Null => HostValue::Null,
        J::Bool(b) => HostValue::Bool(b),
        J::Number(n) => HostValue::Number(n.as_f64().unwrap_or(f64::NAN)),
        J::String(s) => HostValue::String(s),
        J::Array(items) => HostValue::Array(items.into_iter().map(from_json).collect()),
        J::Object(map) => HostValue::Object(map.into_iter().map(|(k, v)| (k, from_json(v))).collect()),
    }
}

fn to_json(v: HostValue) -> Result<serde_json::Value, HostError> {
    use serde_json::Value as J;
    Ok(match v {
        HostValue::Undefined | HostValue::Null => J::Null,
        HostValue::Bool(b) => J::Bool(b),
        // Integral numbers as integers, so `u32` and friends deserialize.
        HostValue::Number(n) if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 => {
            J::Number(serde_json::Number::from(n as i64))
        }
        HostValue::Number(n) => serde_json::Number::from_f64(n).map_or(J::Null, J::Number),
        HostValue::String(s) => J::String(s),
        HostValue::Array(items) => J::Array(items.into_iter().map(to_json).collect::<Result<_, _>>()?),
        HostValue::Object(props) => {
            J::Object(props.into_iter().map(|(k, v)| Ok((k, to_json(v)?))).collect::<Result<_, HostError>>()?)
        }
        HostValue::Host(o) => {
            return Err(HostError::Conversion(format!("a {} cannot be deserialized", o.class_name())))
        }
    })
}

impl<T: Serialize> IntoValue for Serde<T> {
    /// A value that fails to serialize (a map with non-string keys)
    /// becomes `undefined`; use [`to_value`] to see the error.
    fn into_value(self) -> HostValue {
        to_value(&self.0).unwrap_or_default()
    }
}

impl<T: DeserializeOwned> FromValue for Serde<T> {
    fn from_value(v: HostValue) -> Result<Self, HostError> {
        from_value(v).map(Serde)
    }
}
