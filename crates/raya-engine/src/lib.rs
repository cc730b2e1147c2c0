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
pub mod trace;
pub mod vm;

pub use compiler::{CompileError, Program};
pub use embed::{Capabilities, Capability, ExecHandle, ExternalPromise, HostError, HostValue, Vm, VmBuilder};

/// Unit tests run under an allocator that counts, per thread, the bytes
/// allocated and not yet freed: the real figure the heap's accounting is
/// checked against (see `vm::heap`'s tests).
#[cfg(test)]
pub(crate) mod test_alloc {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    struct Counting;

    thread_local! {
        static NET: Cell<isize> = const { Cell::new(0) };
    }

    fn add(n: isize) {
        // `try_with`: nothing is counted while the thread is torn down.
        let _ = NET.try_with(|c| c.set(c.get() + n));
    }

    // SAFETY: every call is forwarded to `System` unchanged.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, l: Layout) -> *mut u8 {
            let p = unsafe { System.alloc(l) };
            if !p.is_null() {
                add(l.size() as isize);
            }
            p
        }
        unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
            unsafe { System.dealloc(p, l) };
            add(-(l.size() as isize));
        }
        unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
            let p = unsafe { System.alloc_zeroed(l) };
            if !p.is_null() {
                add(l.size() as isize);
            }
            p
        }
        unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
            let q = unsafe { System.realloc(p, l, new) };
            if !q.is_null() {
                add(new as isize - l.size() as isize);
            }
            q
        }
    }

    #[global_allocator]
    static COUNTING: Counting = Counting;

    /// Bytes this thread allocated and has not freed, since it started.
    pub fn net_bytes() -> isize {
        NET.with(|c| c.get())
    }
}
