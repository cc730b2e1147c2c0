//! The synchronisation primitives the wait/wake core is built on: the
//! standard atomics and `parking_lot`'s mutex, or — with the `shuttle`
//! feature, for the model checks of `models.rs` only — Shuttle's, whose
//! every operation is a point where the checker may switch threads.
//!
//! Only the state the protocol turns on goes through here: a task's wait
//! token, cancel flag and resume slot, a completion's waiter list, a
//! channel's queues. A build with the feature runs nothing but the models
//! (Shuttle's primitives work only inside a Shuttle test).

#[cfg(not(feature = "shuttle"))]
pub use parking_lot::{Mutex, MutexGuard};
#[cfg(not(feature = "shuttle"))]
pub use std::sync::atomic::{AtomicBool, AtomicU64};

#[cfg(feature = "shuttle")]
pub use shuttle::sync::atomic::{AtomicBool, AtomicU64};
#[cfg(feature = "shuttle")]
pub use shuttle::sync::MutexGuard;

/// Shuttle's mutex with `parking_lot`'s interface (no poisoning).
#[cfg(feature = "shuttle")]
#[derive(Default)]
pub struct Mutex<T>(shuttle::sync::Mutex<T>);

#[cfg(feature = "shuttle")]
impl<T> Mutex<T> {
    pub fn new(v: T) -> Mutex<T> {
        Mutex(shuttle::sync::Mutex::new(v))
    }

    pub fn lock(&self) -> MutexGuard<'_, T> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}
