//! The Raya engine: compiler, bytecode VM, scheduler and runtime.
//!
//! See `design/ARCHITECTURE.md` at the repository root for the codemap.

pub mod builtins;
pub mod bytecode;
pub mod compiler;
pub mod driver;
pub mod embed;
pub mod io;
pub mod scheduler;
pub mod std;
pub mod sync;
pub mod syntax;
pub mod vm;

pub use compiler::{CompileError, Program};
pub use embed::{Capabilities, Capability, ExecHandle, ExternalPromise, HostError, HostValue, Vm, VmBuilder};
