//! Host objects for embedders: a Rust value exposed to scripts as an
//! instance with methods and read-only properties ([`UserData`]), on top
//! of the engine's host objects (`vm::host`).
//!
//! Each `UserData` type gets, once per process, a leaked
//! [`HostClass`] whose natives are trampolines into a process-wide table
//! of method closures (a native is a plain `fn`, so each method takes one
//! of [`MAX_USER_METHODS`] trampolines, as host functions do). The object
//! holds the value in an `Arc`: the script's object keeps it alive, and
//! when the collector frees the object the `Arc` is dropped, so the
//! value's `Drop` runs once neither the script nor the host holds it.

use super::{from_host, to_host, FromValue, HostError, HostValue, IntoValue, Throw};
use crate::vm::host::HostClass;
use crate::vm::native::NativeCtx;
use crate::vm::object::{Body, NativeFn};
use crate::vm::Value;
use parking_lot::{Mutex, RwLock};
use std::any::{Any, TypeId};
use std::marker::PhantomData;
use std::sync::Arc;

/// The most methods and getters, over all [`UserData`] types, one process
/// can register.
pub const MAX_USER_METHODS: usize = 512;

type Payload = Arc<dyn Any + Send + Sync>;
type MethodFn = Arc<dyn Fn(&Payload, &[HostValue]) -> Result<HostValue, Throw> + Send + Sync>;

/// Every method of every registered type, by trampoline index.
static METHODS: RwLock<Vec<(&'static str, MethodFn)>> = RwLock::new(Vec::new());

/// Registered types: their classes.
static CLASSES: Mutex<Vec<(TypeId, &'static HostClass)>> = Mutex::new(Vec::new());

/// A Rust type scripts use as an object: `impl UserData for Counter`
/// names its class and lists its methods and getters; then
/// [`HostValue::user_data`] (or returning the value from a host
/// function) hands one to a script. Scripts call its methods and read
/// its getters; they cannot construct it, assign its properties, or
/// pass it anywhere but back to the host.
///
/// Methods get `&self`, as objects are shared between the tasks of all
/// workers: mutable state goes in a `Mutex` or atomics. The value is
/// freed (its `Drop` runs) once the script no longer references it (at
/// the collection after that) and the host holds no clone of it.
pub trait UserData: Send + Sync + Sized + 'static {
    /// The class name scripts see (`console.log` prints `Name {}`).
    const NAME: &'static str;

    /// Adds the methods and getters.
    fn register(methods: &mut UserMethods<Self>);
}

/// The methods and getters of a [`UserData`] type.
pub struct UserMethods<T> {
    methods: Vec<(&'static str, MethodFn)>,
    getters: Vec<(&'static str, MethodFn)>,
    _t: PhantomData<fn(&T)>,
}

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

impl<T: UserData> UserMethods<T> {
    /// A method: `|this: &T, a: f64, ..| -> Result<R, E>`, typed as host
    /// functions are ([`Vm::register_fn`](super::Vm::register_fn)).
    pub fn method<Args>(&mut self, name: &str, f: impl UserMethod<T, Args>) -> &mut Self {
        let label = format!("{}.{name}", T::NAME);
        let call: MethodFn = Arc::new(move |data: &Payload, args: &[HostValue]| {
            let this = data.downcast_ref::<T>().ok_or_else(|| Throw::Type(format!("{label}: wrong receiver")))?;
            f.call_method(this, &label, args)
        });
        self.methods.push((leak(name), call));
        self
    }

    /// A read-only property: `|this: &T| value`.
    pub fn getter<R: IntoValue>(&mut self, name: &str, f: impl Fn(&T) -> R + Send + Sync + 'static) -> &mut Self {
        let call: MethodFn = Arc::new(move |data: &Payload, _: &[HostValue]| {
            let this = data.downcast_ref::<T>().ok_or_else(|| Throw::Type("wrong receiver".into()))?;
            Ok(f(this).into_value())
        });
        self.getters.push((leak(name), call));
        self
    }
}

/// A typed method closure of a [`UserData`] type (see
/// [`UserMethods::method`]).
pub trait UserMethod<T, Args>: Send + Sync + 'static {
    /// Converts the arguments (a `TypeError` naming the method and the
    /// parameter if one does not) and calls the closure.
    fn call_method(&self, this: &T, name: &str, args: &[HostValue]) -> Result<HostValue, Throw>;
}

fn arg<A: FromValue>(name: &str, args: &[HostValue], i: usize) -> Result<A, Throw> {
    A::from_value(args.get(i).cloned().unwrap_or_default()).map_err(|e| {
        let why = match e {
            HostError::Conversion(m) => m,
            e => e.to_string(),
        };
        Throw::Type(format!("{name}: parameter {} {why}", i + 1))
    })
}

macro_rules! user_methods {
    ($(($($a:ident $i:tt),*))*) => {$(
        impl<T, Func, $($a,)* R, E> UserMethod<T, ($($a,)*)> for Func
        where
            Func: Fn(&T, $($a),*) -> Result<R, E> + Send + Sync + 'static,
            $($a: FromValue,)*
            R: IntoValue,
            E: std::fmt::Display,
        {
            #[allow(unused_variables)]
            fn call_method(&self, this: &T, name: &str, args: &[HostValue]) -> Result<HostValue, Throw> {
                self(this, $(arg::<$a>(name, args, $i)?),*)
                    .map(IntoValue::into_value)
                    .map_err(|e| Throw::Error(e.to_string()))
            }
        }
    )*};
}

user_methods! {
    ()
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
}

/// A host object crossing the boundary inside a [`HostValue`]: shared,
/// not copied (the script and the host see the same Rust value).
#[derive(Clone)]
pub struct HostObject {
    pub(crate) data: Payload,
    pub(crate) class: &'static HostClass,
}

impl HostObject {
    /// The value, if it is a `T`.
    pub fn downcast<T: UserData>(&self) -> Option<Arc<T>> {
        self.data.clone().downcast::<T>().ok()
    }

    /// Its class name.
    pub fn class_name(&self) -> &'static str {
        self.class.name
    }
}

impl std::fmt::Debug for HostObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {{ .. }}", self.class.name)
    }
}

/// The same object.
impl PartialEq for HostObject {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.data, &other.data)
    }
}

/// The class of `T`, made on first use.
fn class_of<T: UserData>() -> &'static HostClass {
    let mut classes = CLASSES.lock();
    if let Some(&(_, c)) = classes.iter().find(|(t, _)| *t == TypeId::of::<T>()) {
        return c;
    }
    let mut m = UserMethods::<T> { methods: Vec::new(), getters: Vec::new(), _t: PhantomData };
    T::register(&mut m);
    let mut table = METHODS.write();
    let mut natives = |list: Vec<(&'static str, MethodFn)>| -> &'static [(&'static str, NativeFn)] {
        let out: Vec<(&'static str, NativeFn)> = list
            .into_iter()
            .map(|(name, f)| {
                let i = table.len();
                assert!(i < MAX_USER_METHODS, "more than {MAX_USER_METHODS} UserData methods");
                table.push((name, f));
                (name, TRAMPOLINES[i / 16][i % 16])
            })
            .collect();
        Box::leak(out.into_boxed_slice())
    };
    let methods = natives(m.methods);
    let getters = natives(m.getters);
    let class: &'static HostClass =
        Box::leak(Box::new(HostClass { name: T::NAME, methods, getters, next: None, inspect: None }));
    classes.push((TypeId::of::<T>(), class));
    class
}

/// Whether `class` is a [`UserData`] type's (not a built-in host object).
pub(crate) fn is_user_class(class: &'static HostClass) -> bool {
    CLASSES.lock().iter().any(|&(_, c)| std::ptr::eq(c, class))
}

impl HostValue {
    /// A host object holding `value` (see [`UserData`]).
    pub fn user_data<T: UserData>(value: T) -> HostValue {
        HostValue::Host(HostObject { data: Arc::new(value), class: class_of::<T>() })
    }

    /// The host object's value, if this is a host object of type `T`.
    pub fn downcast<T: UserData>(&self) -> Option<Arc<T>> {
        match self {
            HostValue::Host(o) => o.downcast::<T>(),
            _ => None,
        }
    }
}

/// A host object of type `T`, shared with the script.
impl<T: UserData> FromValue for Arc<T> {
    fn from_value(v: HostValue) -> Result<Self, HostError> {
        match &v {
            HostValue::Host(o) => o
                .downcast::<T>()
                .ok_or_else(|| HostError::Conversion(format!("expected a {}, got a {}", T::NAME, o.class.name))),
            other => {
                Err(HostError::Conversion(format!("expected a {}, got {}", T::NAME, super::convert::describe(other))))
            }
        }
    }
}

fn call_method(ctx: &mut NativeCtx, index: usize, this: Value, args: &[Value]) -> Result<Value, Value> {
    let Some((name, f)) = METHODS.read().get(index).cloned() else {
        return Err(ctx.plain_error("unknown host method"));
    };
    let data = match this.as_obj().map(|o| &o.body) {
        Some(Body::Host(h)) => h.data.clone(),
        _ => return Err(ctx.type_error(format!("{name}: `this` is not a host object"))),
    };
    let mut hargs = Vec::with_capacity(args.len());
    for &a in args {
        match to_host(a, &mut Vec::new()) {
            Ok(h) => hargs.push(h),
            Err(e) => return Err(ctx.type_error(format!("{name}: {e}"))),
        }
    }
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&data, &hargs)))
        .unwrap_or_else(|_| Err(Throw::Error(format!("host method `{name}` panicked"))));
    match r {
        Ok(v) => Ok(from_host(ctx.rt, &v)),
        Err(Throw::Error(m)) => Err(ctx.plain_error(m)),
        Err(Throw::Type(m)) => Err(ctx.type_error(m)),
    }
}

fn trampoline<const I: usize>(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    call_method(ctx, I, this, args)
}

/// One native per method index (`TRAMPOLINES[i / 16][i % 16]`).
static TRAMPOLINES: [[NativeFn; 16]; MAX_USER_METHODS / 16] = [
    tramps16!(trampoline, 0),
    tramps16!(trampoline, 1),
    tramps16!(trampoline, 2),
    tramps16!(trampoline, 3),
    tramps16!(trampoline, 4),
    tramps16!(trampoline, 5),
    tramps16!(trampoline, 6),
    tramps16!(trampoline, 7),
    tramps16!(trampoline, 8),
    tramps16!(trampoline, 9),
    tramps16!(trampoline, 10),
    tramps16!(trampoline, 11),
    tramps16!(trampoline, 12),
    tramps16!(trampoline, 13),
    tramps16!(trampoline, 14),
    tramps16!(trampoline, 15),
    tramps16!(trampoline, 16),
    tramps16!(trampoline, 17),
    tramps16!(trampoline, 18),
    tramps16!(trampoline, 19),
    tramps16!(trampoline, 20),
    tramps16!(trampoline, 21),
    tramps16!(trampoline, 22),
    tramps16!(trampoline, 23),
    tramps16!(trampoline, 24),
    tramps16!(trampoline, 25),
    tramps16!(trampoline, 26),
    tramps16!(trampoline, 27),
    tramps16!(trampoline, 28),
    tramps16!(trampoline, 29),
    tramps16!(trampoline, 30),
    tramps16!(trampoline, 31),
];
