//! Built-in globals, methods of built-in types, and the Raya-source
//! standard library (`stdlib/`), installed into every realm.

pub mod array;
pub mod bytes;
pub mod channels;
pub mod clone;
pub mod collections;
pub mod console;
pub mod core;
pub mod date;
pub mod inspect;
pub mod iter;
pub mod json;
pub mod math;
pub mod number;
pub mod numconv;
pub mod object;
pub mod process;
pub mod regexp;
pub mod string;
pub mod tasks;
#[cfg(test)]
pub(crate) mod testing;

use crate::vm::heap::Heap;
use crate::vm::realm::{Builder, Realm};

/// Creates the realm: built-in classes first (`core`), then every other
/// module adds its globals, statics and methods.
pub fn install(heap: &mut Heap) -> Realm {
    let mut b = Builder { heap };
    let mut realm = core::install_classes(&mut b);
    console::install(&mut b, &mut realm);
    json::install(&mut b, &mut realm);
    math::install(&mut b, &mut realm);
    number::install(&mut b, &mut realm);
    process::install(&mut b, &mut realm);
    date::install(&mut b, &mut realm);
    clone::install(&mut b, &mut realm);
    string::install(&mut b, &mut realm);
    array::install(&mut b, &mut realm);
    object::install(&mut b, &mut realm);
    collections::install(&mut b, &mut realm);
    tasks::install(&mut b, &mut realm);
    channels::install(&mut b, &mut realm);
    bytes::install(&mut b, &mut realm);
    iter::install(&mut b, &mut realm);
    regexp::install(&mut b, &mut realm);
    realm.methods.index_natives();
    realm
}

/// Slot of built-in global `name` in `GLOBAL_NAMES`.
pub fn global_slot(name: &str) -> usize {
    GLOBAL_NAMES.iter().position(|&n| n == name).unwrap_or_else(|| panic!("unknown global {name}"))
}

/// The built-in global bindings, in global-slot order. The compiler resolves
/// a free identifier against this list; user and module top-level bindings
/// get the slots after these. Order matters: `Realm` fills the slots in
/// exactly this order.
pub const GLOBAL_NAMES: &[&str] = &[
    "console",
    "Math",
    "Number",
    "String",
    "Boolean",
    "Object",
    "Array",
    "JSON",
    "Map",
    "Set",
    "Error",
    "TypeError",
    "RangeError",
    "SyntaxError",
    "ReferenceError",
    "TaskCancelledError",
    "ChannelClosedError",
    "DeadlockError",
    "parseInt",
    "parseFloat",
    "isNaN",
    "isFinite",
    "NaN",
    "Infinity",
    "Date",
    "performance",
    "structuredClone",
    "args",
    "exit",
    "env",
    "Task",
    "Promise",
    "Channel",
    "Mutex",
    "WaitGroup",
    "Semaphore",
    "sleep",
    "after",
    "every",
    "IOError",
    "Uint8Array",
    "TextEncoder",
    "TextDecoder",
    "RegExp",
    "cwd",
    "stdin",
    "stdout",
    "stderr",
    "Symbol",
    // Node's forms (LANGUAGE.md §6 "Promises"): written in the prelude,
    // which fills these slots through `__installPrelude` ("global:NAME").
    "setTimeout",
    "setInterval",
    "clearTimeout",
    "clearInterval",
    "queueMicrotask",
    "AggregateError",
    "URIError",
    "encodeURIComponent",
    "encodeURI",
    "decodeURIComponent",
    "decodeURI",
    // Hook used by stdlib/prelude.raya to hand its Raya-written methods
    // (Array.prototype.map, sort, ...) to the runtime.
    "__installPrelude",
    // `__callWith(fn, thisArg, ...args)`: calls `fn` with `this` bound to
    // `thisArg`. The compiler lowers a direct call to a plain `Call` with
    // `thisArg` in the receiver register (the prelude's `thisArg`
    // parameters); the value here is only seen if it is called indirectly.
    "__callWith",
];
