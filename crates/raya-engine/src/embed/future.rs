//! Async host functions as Rust futures ([`Vm::register_async`]).
//!
//! A call converts the arguments on the worker, makes the closure's
//! future, and hands it to the VM's [`Spawner`] (the host's executor)
//! wrapped in a [`HostFuture`]; the script gets the promise of an
//! [`ExternalPromise`], which the wrapper settles with the future's
//! result. The calling task's `on_cancel` hook aborts the wrapper, which
//! then completes at once: the executor drops it, and with it the
//! closure's future (its `Drop`s run, its I/O is abandoned), and the
//! promise is rejected.
//!
//! [`Vm::register_async`]: super::Vm::register_async

use super::convert::arg;
use super::{ExternalPromise, FromValue, HostValue, IntoValue, Throw};
use parking_lot::Mutex;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

/// A boxed future as executors take them.
pub type BoxFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// The host's executor for async host functions
/// ([`VmBuilder::spawner`](super::VmBuilder::spawner)): Tokio's
/// `Handle` is one (feature `tokio`), and so is any `Fn(BoxFuture)`
/// closure (`|f| { tokio::spawn(f); }`).
pub trait Spawner: Send + Sync {
    /// Runs `future` to completion, or drops it early when it is
    /// cancelled (it then completes at its next poll).
    fn spawn(&self, future: BoxFuture);
}

impl<F: Fn(BoxFuture) + Send + Sync> Spawner for F {
    fn spawn(&self, future: BoxFuture) {
        self(future)
    }
}

#[cfg(feature = "tokio")]
impl Spawner for tokio::runtime::Handle {
    fn spawn(&self, future: BoxFuture) {
        drop(tokio::runtime::Handle::spawn(self, future));
    }
}

/// The spawner of a VM that was given none: each future on a thread of
/// its own that polls it when woken (for hosts without an executor; a
/// future that needs a reactor, such as Tokio's, needs the host's).
pub(crate) struct ThreadSpawner;

struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

impl Spawner for ThreadSpawner {
    fn spawn(&self, mut future: BoxFuture) {
        let spawned = std::thread::Builder::new().name("raya-host-future".into()).spawn(move || {
            let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
            let mut cx = Context::from_waker(&waker);
            while future.as_mut().poll(&mut cx).is_pending() {
                std::thread::park();
            }
        });
        // Without a thread the future is dropped, which rejects its
        // promise: the script sees an error, not a hang.
        drop(spawned);
    }
}

/// Aborts a [`HostFuture`] from the cancelled task's side.
#[derive(Default)]
pub(crate) struct Abort {
    aborted: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Abort {
    pub(crate) fn abort(&self) {
        self.aborted.store(true, Ordering::Release);
        if let Some(w) = self.waker.lock().take() {
            w.wake();
        }
    }
}

/// A host function's future, boxed.
pub type ResultFuture = Pin<Box<dyn Future<Output = Result<HostValue, Throw>> + Send>>;

/// The future given to the spawner: the host function's future, the
/// promise it settles, and its abort flag.
pub(crate) struct HostFuture {
    pub(crate) inner: Option<ResultFuture>,
    pub(crate) promise: Option<ExternalPromise>,
    pub(crate) abort: Arc<Abort>,
}

impl Future for HostFuture {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // The waker first, then the flag: an abort after the check wakes
        // the new waker.
        *self.abort.waker.lock() = Some(cx.waker().clone());
        if self.abort.aborted.load(Ordering::Acquire) {
            self.inner = None; // dropped now, not when the executor gets round to it
            if let Some(p) = self.promise.take() {
                let _ = p.reject("the task that called the host function was cancelled");
            }
            return Poll::Ready(());
        }
        let Some(fut) = self.inner.as_mut() else { return Poll::Ready(()) };
        let r = match fut.as_mut().poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(r) => r,
        };
        self.inner = None;
        if let Some(p) = self.promise.take() {
            let _ = match r {
                Ok(v) => p.resolve(v),
                Err(Throw::Error(m) | Throw::Type(m)) => p.reject(m),
            };
        }
        Poll::Ready(())
    }
}

/// A typed async closure usable as an async host function
/// ([`Vm::register_async`](super::Vm::register_async)): `Fn(A, B, ..) ->
/// Fut` with up to six [`FromValue`] parameters, `Fut` a `Send` future of
/// `Result<R, E>`, `R` [`IntoValue`], `E` [`Display`](std::fmt::Display).
pub trait AsyncHostFunction<Args>: Send + Sync + 'static {
    /// Converts the arguments (a `TypeError` naming the function and the
    /// parameter if one does not) and makes the future.
    fn make_future(&self, name: &str, args: &[HostValue]) -> Result<ResultFuture, Throw>;
}

macro_rules! async_host_functions {
    ($(($($t:ident $i:tt),*))*) => {$(
        impl<Func, Fut, $($t,)* R, E> AsyncHostFunction<($($t,)*)> for Func
        where
            Func: Fn($($t),*) -> Fut + Send + Sync + 'static,
            Fut: Future<Output = Result<R, E>> + Send + 'static,
            $($t: FromValue,)*
            R: IntoValue,
            E: std::fmt::Display,
        {
            #[allow(unused_variables)]
            fn make_future(&self, name: &str, args: &[HostValue]) -> Result<ResultFuture, Throw> {
                let fut = self($(arg::<$t>(name, args, $i)?),*);
                Ok(Box::pin(async move {
                    fut.await.map(IntoValue::into_value).map_err(|e| Throw::Error(e.to_string()))
                }))
            }
        }
    )*};
}

async_host_functions! {
    ()
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E2 4)
    (A 0, B 1, C 2, D 3, E2 4, F 5)
}
