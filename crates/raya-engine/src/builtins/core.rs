//! Built-ins: the built-in classes (Object, Function, Array, String,
//! Number, Boolean, Map, Set, Error and its subclasses) and the hook that
//! installs the Raya-written prelude.

use super::{global_slot, GLOBAL_NAMES};
use crate::vm::atom::{names, Atom};
use crate::vm::native::{arg, NativeCtx};
use crate::vm::object::BuiltinKind;
use crate::vm::ops;
use crate::vm::realm::{Builder, Classes, Methods, Realm};
use crate::vm::value::Value;

pub fn install_classes(b: &mut Builder) -> Realm {
    let u = Value::UNDEFINED;
    let object = b.class("Object", u, BuiltinKind::Ordinary, None, None);
    let function = b.class("Function", u, BuiltinKind::Function, None, None);
    let array = b.class("Array", u, BuiltinKind::Array, None, None);
    let string = b.class("String", u, BuiltinKind::String, None, None);
    let number = b.class("Number", u, BuiltinKind::Number, None, None);
    let boolean = b.class("Boolean", u, BuiltinKind::Boolean, None, None);
    let map = b.class("Map", u, BuiltinKind::Map, None, None);
    let set = b.class("Set", u, BuiltinKind::Set, None, None);
    let error = error_class(b, "Error", u);
    let sub = |b: &mut Builder, name: &str| error_class(b, name, error);
    let aggregate_error = b.class("AggregateError", error, BuiltinKind::Ordinary, Some(aggregate_error_ctor), None);
    {
        let name_v = b.heap.alloc_str("AggregateError");
        Builder::class_data(aggregate_error).proto_props.set(names::NAME, name_v);
    }
    let classes = Classes {
        object,
        function,
        array,
        string,
        number,
        boolean,
        map,
        set,
        error,
        type_error: sub(b, "TypeError"),
        range_error: sub(b, "RangeError"),
        syntax_error: sub(b, "SyntaxError"),
        reference_error: sub(b, "ReferenceError"),
        task_cancelled_error: sub(b, "TaskCancelledError"),
        channel_closed_error: sub(b, "ChannelClosedError"),
        deadlock_error: sub(b, "DeadlockError"),
        task: b.class("Task", u, BuiltinKind::Namespace, None, None),
        promise: b.class("Promise", u, BuiltinKind::Promise, None, None),
        channel: b.class("Channel", u, BuiltinKind::Channel, None, None),
        mutex: b.class("Mutex", u, BuiltinKind::Mutex, None, None),
        wait_group: b.class("WaitGroup", u, BuiltinKind::WaitGroup, None, None),
        semaphore: b.class("Semaphore", u, BuiltinKind::Semaphore, None, None),
        io_error: sub(b, "IOError"),
        uint8array: b.class("Uint8Array", u, BuiltinKind::Bytes, None, None),
        regexp: super::regexp::make_class(b),
        match_groups: b.class("[Object: null prototype]", u, BuiltinKind::Ordinary, None, None),
    };
    let mut realm = Realm { globals: vec![Value::UNDEFINED; GLOBAL_NAMES.len()], classes, methods: Methods::default() };
    let c = realm.classes;
    for (name, v) in [
        ("Object", c.object),
        ("Array", c.array),
        ("String", c.string),
        ("Number", c.number),
        ("Boolean", c.boolean),
        ("Map", c.map),
        ("Set", c.set),
        ("Error", c.error),
        ("TypeError", c.type_error),
        ("RangeError", c.range_error),
        ("SyntaxError", c.syntax_error),
        ("ReferenceError", c.reference_error),
        ("TaskCancelledError", c.task_cancelled_error),
        ("ChannelClosedError", c.channel_closed_error),
        ("DeadlockError", c.deadlock_error),
        ("Task", c.task),
        ("Promise", c.promise),
        ("Channel", c.channel),
        ("Mutex", c.mutex),
        ("WaitGroup", c.wait_group),
        ("Semaphore", c.semaphore),
        ("IOError", c.io_error),
        ("AggregateError", aggregate_error),
    ] {
        realm.globals[global_slot(name)] = v;
    }
    realm.globals[global_slot("NaN")] = Value::number(f64::NAN);
    realm.globals[global_slot("Infinity")] = Value::number(f64::INFINITY);
    realm.globals[global_slot("__installPrelude")] = b.native("__installPrelude", install_prelude);
    realm.globals[global_slot("__callWith")] = b.native("__callWith", call_with_indirect);
    let mut fm = std::mem::take(&mut realm.methods.function);
    b.method(&mut fm, "bind", bind);
    realm.methods.function = fm;
    realm
}

/// `f.bind(thisArg, ...args)`: a bound function (see `Function::Bound`);
/// the call itself is the interpreter's.
fn bind(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    use crate::vm::object::{Body, Bound, Function};
    let (name, length) = match this.as_obj().map(|o| &o.body) {
        Some(Body::Function(f)) => (f.name().to_owned(), f.length()),
        Some(Body::Class(c)) => (c.lock().name.as_str().to_owned(), 0),
        _ => return Err(ctx.type_error("Bind must be called on a function")),
    };
    let bound = args.get(1..).unwrap_or(&[]);
    let b = Bound {
        target: this,
        this: arg(args, 0),
        args: bound.into(),
        name: format!("bound {name}"),
        length: length.saturating_sub(bound.len() as u32),
    };
    Ok(ctx.heap().alloc(Body::Function(Function::Bound(b))))
}

pub(crate) fn error_class(b: &mut Builder, name: &str, parent: Value) -> Value {
    let class = b.class(name, parent, BuiltinKind::Ordinary, Some(error_ctor), Some(error_call));
    let name_v = b.heap.alloc_str(name);
    let mut cd = Builder::class_data(class);
    cd.proto_props.set(names::NAME, name_v);
    let to_string = b.native("toString", error_to_string);
    cd.proto_props.set(names::TO_STRING, to_string);
    class
}

/// `new Error(message?, { cause }?)`: `this` is the fresh instance.
fn error_ctor(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let m = arg(args, 0);
    let message = ctx.str(if m.is_undefined() { String::new() } else { ops::to_display(m) });
    let cause = ops::object_data(arg(args, 1)).and_then(|opts| opts.props.get(names::CAUSE));
    if let Some(mut d) = ops::object_data(this) {
        d.props.set(names::MESSAGE, message);
        if let Some(cause) = cause {
            d.props.set(names::CAUSE, cause);
        }
    }
    let task = ctx.task;
    ctx.rt.attach_stack(task, this);
    Ok(this)
}

/// `new AggregateError(errors, message?)` (what `Promise.any` throws when
/// every input failed): `errors` is a copy of the array.
fn aggregate_error_ctor(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let Some(errors) = ops::array_data(arg(args, 0)).map(|a| a.clone()) else {
        return Err(ctx.type_error("AggregateError expects an array of errors"));
    };
    error_ctor(ctx, this, args.get(1..).unwrap_or(&[]))?;
    let list = ctx.heap().alloc_array(errors);
    if let Some(mut d) = ops::object_data(this) {
        d.props.set(Atom::intern("errors"), list);
    }
    Ok(this)
}

/// `Error(message)` without `new` behaves like `new Error(message)`.
/// (Calling a class without `new` passes the class as `this`.)
fn error_call(ctx: &mut NativeCtx, class: Value, args: &[Value]) -> Result<Value, Value> {
    let task = ctx.task;
    let err = ctx.rt.make_error(task, class, "");
    error_ctor(ctx, err, args)
}

fn error_to_string(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let s = ops::try_to_display(this).map_err(|f| ctx.fault(f))?;
    Ok(ctx.str(s))
}

/// `__callWith` reached as a value (`const f = __callWith; f(...)`): only a
/// direct call can bind `this`, because built-ins never call into Raya.
fn call_with_indirect(ctx: &mut NativeCtx, _this: Value, _args: &[Value]) -> Result<Value, Value> {
    Err(ctx.type_error("__callWith can only be called directly"))
}

/// `__installPrelude({ name: fn, ... })`: installs Raya-written methods of
/// built-in types. Keys `name` go to arrays; `string:name` to strings.
fn install_prelude(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let Some(d) = ops::object_data(arg(args, 0)) else {
        return Err(ctx.type_error("__installPrelude expects an object"));
    };
    let entries: Vec<(Atom, Value)> = d.props.iter().collect();
    drop(d);
    let mut statics = Vec::new();
    let mut globals: Vec<(String, Value)> = Vec::new();
    ctx.rt.update_realm(|realm| {
        let methods = &mut realm.methods;
        for (k, v) in entries {
            let name = k.as_str();
            if let Some(rest) = name.strip_prefix("string:") {
                methods.string.set(Atom::intern(rest), v);
            } else if let Some(rest) = name.strip_prefix("map:") {
                methods.map.set(Atom::intern(rest), v);
            } else if let Some(rest) = name.strip_prefix("set:") {
                methods.set.set(Atom::intern(rest), v);
            } else if let Some(rest) = name.strip_prefix("mutex:") {
                methods.mutex.set(Atom::intern(rest), v);
            } else if let Some(rest) = name.strip_prefix("global:") {
                globals.push((rest.to_owned(), v));
            } else if let Some(rest) = name.strip_prefix("function:") {
                methods.function.set(Atom::intern(rest), v);
            } else if let Some(rest) = name.strip_prefix("promise:") {
                methods.promise.set(Atom::intern(rest), v);
            } else if let Some(rest) = name.strip_prefix("task:") {
                methods.task.set(Atom::intern(rest), v);
            } else if let Some(rest) = name.strip_prefix("static:") {
                // `static:Class:name` adds a static member to a built-in class.
                let (class, member) = rest.split_once(':').unwrap_or((rest, ""));
                let c = &realm.classes;
                let target = match class {
                    "Task" => c.task,
                    "Array" => c.array,
                    "Promise" => c.promise,
                    "Object" => c.object,
                    "Map" => c.map,
                    "String" => c.string,
                    _ => Value::UNDEFINED,
                };
                statics.push((target, Atom::intern(member), v));
            } else {
                methods.array.set(k, v);
            }
        }
    });
    for (name, v) in globals {
        match GLOBAL_NAMES.iter().position(|&n| n == name) {
            Some(slot) => ctx.rt.world.globals.set(slot, v),
            None => return Err(ctx.type_error(format!("__installPrelude: unknown global {name}"))),
        }
    }
    for (class, member, v) in statics {
        if let Some(mut cd) = ops::class_data(class) {
            cd.statics.set(member, v);
        }
    }
    Ok(Value::UNDEFINED)
}
