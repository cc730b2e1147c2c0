//! The virtual machine: values, heap, tasks and the interpreter.
//!
//! Codemap:
//! - [`value`]: 8-byte NaN-boxed values.
//! - [`object`]: heap object layouts; [`heap`]: allocation and the GC;
//!   [`fence`]: the asymmetric fence of its stop-the-world handshake.
//! - [`atom`]: interned property names.
//! - [`shape`]: shapes (hidden classes) and object property storage.
//! - [`link`]: compiled prototypes made runnable (constants on the heap).
//! - [`task`]: a task's registers, frames and handlers.
//! - [`interp`]: `TaskInterpreter`, the dispatch loop.
//! - [`ops`]: the semantics shared by the interpreter and built-ins
//!   (conversions, equality, property access).
//! - [`strbuf`]: the string length limit and a buffer that keeps to it.
//! - [`native`]: the context built-in functions run in.
//! - [`realm`]: built-in classes and method tables.
//! - [`runtime`]: everything one running program owns.

pub mod atom;
pub mod fence;
pub mod heap;
pub mod host;
pub mod interp;
pub mod link;
pub mod native;
pub mod object;
pub mod ops;
pub mod realm;
pub mod runtime;
pub mod shape;
pub mod strbuf;
pub mod sweep;
pub mod task;
pub mod value;

pub use runtime::Runtime;
pub use value::Value;
