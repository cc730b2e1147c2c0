//! Built-ins: console.

use crate::vm::realm::{Builder, Realm};

pub fn install(_b: &mut Builder, _realm: &mut Realm) {}
