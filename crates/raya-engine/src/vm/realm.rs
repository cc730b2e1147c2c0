//! The realm: built-in classes, global values and the method tables of
//! built-in types, created once per VM by `builtins::install`.

use std::sync::atomic::{AtomicU64, Ordering};

use super::atom::Atom;
use super::heap::{Heap, Marker};
use super::object::{
    Body, BuiltinKind, ClassData, Function, LockLevel, Mut, MutRef, Native, NativeFn, ObjectData, PropMap,
};
use super::value::Value;

/// The built-in classes the runtime itself needs to name (for `instanceof`
/// on built-in values and to create errors).
#[derive(Clone, Copy)]
pub struct Classes {
    pub object: Value,
    pub function: Value,
    pub array: Value,
    pub string: Value,
    pub number: Value,
    pub boolean: Value,
    pub map: Value,
    pub set: Value,
    pub error: Value,
    pub type_error: Value,
    pub range_error: Value,
    pub syntax_error: Value,
    pub reference_error: Value,
    pub task_cancelled_error: Value,
    pub channel_closed_error: Value,
    pub deadlock_error: Value,
    pub task: Value,
    pub promise: Value,
    pub channel: Value,
    pub mutex: Value,
    pub wait_group: Value,
    pub semaphore: Value,
    pub io_error: Value,
    pub uint8array: Value,
    pub regexp: Value,
    /// The class of a match's `groups` object, which has no prototype in
    /// JS: only its name shows (`[Object: null prototype] { .. }`).
    pub match_groups: Value,
}

/// Methods of values that are not class instances, by receiver type.
#[derive(Default, Clone)]
pub struct Methods {
    pub array: PropMap,
    pub string: PropMap,
    pub number: PropMap,
    pub boolean: PropMap,
    pub function: PropMap,
    pub map: PropMap,
    pub set: PropMap,
    /// Methods shared by every object (`toString`, `hasOwnProperty`).
    pub object: PropMap,
    pub task: PropMap,
    pub promise: PropMap,
    pub channel: PropMap,
    pub mutex: PropMap,
    pub wait_group: PropMap,
    pub semaphore: PropMap,
    /// `Uint8Array`.
    pub bytes: PropMap,
    /// Iterators and generators (`next`, `return`, `throw`,
    /// `[Symbol.iterator]`).
    pub iter: PropMap,
    /// For each [`Body::tag`], the native each slot of that kind's table
    /// holds (None: a Raya-written method, or not a table kind). Derived
    /// from the tables by [`Methods::index_natives`].
    natives: [Box<[Option<NativeFn>]>; Body::TAGS],
}

impl Methods {
    /// The method table of a built-in receiver, by [`Body::tag`], for the
    /// kinds that have no properties of their own besides a few fixed
    /// names (`length`, `size`, indices...), none of which is a method
    /// name. For such a receiver, a key found in this table is exactly what
    /// `ops::get_prop` returns, which lets a call site cache what it found
    /// ([`Methods::native_method`]).
    fn of_builtin(&self, tag: u8) -> Option<&PropMap> {
        Some(match tag {
            Body::ARRAY_TAG => &self.array,
            Body::STR_TAG => &self.string,
            Body::MAP_TAG => &self.map,
            Body::SET_TAG => &self.set,
            Body::TASK_TAG => &self.task,
            Body::PROMISE_TAG => &self.promise,
            Body::CHANNEL_TAG => &self.channel,
            Body::MUTEX_TAG => &self.mutex,
            Body::WAIT_GROUP_TAG => &self.wait_group,
            Body::SEMAPHORE_TAG => &self.semaphore,
            Body::BYTES_TAG => &self.bytes,
            _ => return None,
        })
    }

    /// Rebuilds [`Methods::natives`] from the tables. Called whenever the
    /// tables change (only while the runtime starts: `builtins::install`,
    /// then the prelude).
    pub fn index_natives(&mut self) {
        for tag in 0..Body::TAGS as u8 {
            let natives = self.of_builtin(tag).map(|t| {
                t.vals()
                    .iter()
                    .map(|v| match v.as_obj().map(|o| &o.body) {
                        Some(Body::Function(Function::Native(n))) => Some(n.f),
                        _ => None,
                    })
                    .collect()
            });
            self.natives[tag as usize] = natives.unwrap_or_default();
        }
    }

    /// The native that method `key` of a built-in receiver `body` is, if it
    /// is one, found through the call site's inline cache `site`.
    ///
    /// `site` holds `slot << 8 | tag + 1` (0: empty): the receiver kind the
    /// site last saw and the slot of `key` in that kind's table. A hit is
    /// one compare and one load, with no key compare: a site (one
    /// instruction) always asks for the same key, and a table's slots never
    /// move (tables only grow), so `key` is at `slot` of `tag`'s table in
    /// every realm the site may run with. What the slot holds is read from
    /// this realm's own `natives`; a realm older than the one that filled
    /// the cache (another thread's, before the prelude) may have no entry
    /// there, and then looks the key up.
    #[inline(always)]
    pub fn native_method(&self, body: &Body, key: Atom, site: &AtomicU64) -> Option<NativeFn> {
        let tag = body.tag();
        let cached = site.load(Ordering::Relaxed) as u32;
        if cached & 0xff == tag as u32 + 1 {
            // SAFETY: `tag` < `Body::TAGS`, the length of `natives`.
            let found = unsafe { self.natives.get_unchecked(tag as usize) }.get((cached >> 8) as usize);
            if let Some(&Some(f)) = found {
                debug_assert!(self.of_builtin(tag).is_some_and(|t| t.key_at((cached >> 8) as usize) == Some(key)));
                return Some(f);
            }
        }
        self.find_native_method(tag, key, site)
    }

    /// The native that the own property `key` of an object holds
    /// (`Math.sqrt`, `JSON.stringify`, `console.log`: the namespaces, whose
    /// functions are own properties), or the own static `key` of a class
    /// (`String.fromCharCode`, `Array.isArray`, `Object.keys`), found
    /// through the call site's inline cache `site`; None when the property
    /// is anything else or not own, and the call takes the general path.
    /// `props` is the table looked in, under `m`'s lock.
    ///
    /// `site`'s low half holds `slot << 8 | OWN_NATIVE` after a hit, or
    /// `NOT_OWN_NATIVE` when the site found no such native (an instance's
    /// method, a closure): the site stops looking, at the cost of one
    /// compare. Neither marker is a `tag + 1` of [`native_method`]
    /// (`Body::TAGS` < 0xfe), so a site that also sees built-in receivers
    /// just switches. (Classes and objects have no table of
    /// [`native_method`]'s, so a site of theirs never switches back and
    /// forth.) A hit reads the slot's key and value from the table itself,
    /// under the lock: the cache names only where to look, so a property
    /// reassigned or deleted since, or another object at the same site, is
    /// seen as it is now. An own property shadows whatever the prototype
    /// chain (a parent class's statics) has, so it is the one a lookup
    /// would find. A native made at run time (one with `data`, such as a
    /// promise's `resolve`) takes the general path, which passes its data
    /// as `this`.
    ///
    /// [`native_method`]: Self::native_method
    #[inline(always)]
    pub fn own_native_method<T: LockLevel>(
        m: &Mut<T>,
        props: fn(&T) -> &PropMap,
        key: Atom,
        site: &AtomicU64,
    ) -> Option<NativeFn> {
        let cached = site.load(Ordering::Relaxed) as u32;
        match cached & 0xff {
            NOT_OWN_NATIVE => None,
            OWN_NATIVE => {
                let g = m.lock();
                let (table, slot) = (props(&g), (cached >> 8) as usize);
                match table.key_at(slot) {
                    Some(k) if k == key => plain_native(table.vals()[slot]),
                    _ => {
                        drop(g);
                        Self::find_own_native(m, props, key, site)
                    }
                }
            }
            _ => Self::find_own_native(m, props, key, site),
        }
    }

    /// [`own_native_method`](Self::own_native_method) for a class's own
    /// statics, out of line: inlined beside the objects' case, it changed
    /// the interpreter loop's register allocation and cost `nbody` 4%.
    #[inline(never)]
    pub fn own_static_native(c: &Mut<ClassData>, key: Atom, site: &AtomicU64) -> Option<NativeFn> {
        Self::own_native_method(c, |c| &c.statics, key, site)
    }

    #[cold]
    fn find_own_native<T: LockLevel>(
        m: &Mut<T>,
        props: fn(&T) -> &PropMap,
        key: Atom,
        site: &AtomicU64,
    ) -> Option<NativeFn> {
        let g = m.lock();
        let table = props(&g);
        let found = table.find(key).and_then(|slot| plain_native(table.vals()[slot]).map(|f| (slot, f)));
        let low = match found {
            Some((slot, _)) if slot < 1 << 24 => (slot as u64) << 8 | OWN_NATIVE as u64,
            _ => NOT_OWN_NATIVE as u64,
        };
        set_low_half(site, low);
        found.map(|(_, f)| f)
    }

    #[cold]
    fn find_native_method(&self, tag: u8, key: Atom, site: &AtomicU64) -> Option<NativeFn> {
        let slot = self.of_builtin(tag)?.find(key)?;
        let f = (*self.natives[tag as usize].get(slot)?)?;
        set_low_half(site, (slot as u64) << 8 | (tag as u64 + 1));
        Some(f)
    }
}

/// Writes the low half of a `CallMethod` site's word, which the native
/// caches own; the high half is the site's method cache index
/// (`RtProto::method_entry`), fixed when linked, and is kept.
fn set_low_half(site: &AtomicU64, low: u64) {
    debug_assert!(low >> 32 == 0);
    let high = site.load(Ordering::Relaxed) & !0xffff_ffff;
    site.store(high | low, Ordering::Relaxed);
}

/// Markers of [`Methods::own_native_method`]'s cache, in a site's low byte.
const OWN_NATIVE: u32 = 0xff;
const NOT_OWN_NATIVE: u32 = 0xfe;
const _: () = assert!(Body::TAGS < NOT_OWN_NATIVE as usize);

/// The function a property holds, if it is a native that needs no data.
#[inline(always)]
fn plain_native(v: Value) -> Option<NativeFn> {
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Function(Function::Native(n))) if n.data.is_undefined() => Some(n.f),
        _ => None,
    }
}

#[derive(Clone)]
pub struct Realm {
    /// Initial values of the global slots named by `builtins::GLOBAL_NAMES`.
    pub globals: Vec<Value>,
    pub classes: Classes,
    pub methods: Methods,
}

impl Realm {
    pub fn mark_roots(&self, m: &mut Marker) {
        m.mark_all(&self.globals);
        let c = &self.classes;
        m.mark_all(&[
            c.object,
            c.function,
            c.array,
            c.string,
            c.number,
            c.boolean,
            c.map,
            c.set,
            c.error,
            c.type_error,
            c.range_error,
            c.syntax_error,
            c.reference_error,
            c.task_cancelled_error,
            c.channel_closed_error,
            c.deadlock_error,
            c.task,
            c.promise,
            c.channel,
            c.mutex,
            c.wait_group,
            c.semaphore,
            c.io_error,
            c.uint8array,
            c.regexp,
            c.match_groups,
        ]);
        let ms = &self.methods;
        for t in [
            &ms.array,
            &ms.string,
            &ms.number,
            &ms.boolean,
            &ms.function,
            &ms.map,
            &ms.set,
            &ms.object,
            &ms.task,
            &ms.promise,
            &ms.channel,
            &ms.mutex,
            &ms.wait_group,
            &ms.semaphore,
            &ms.bytes,
            &ms.iter,
        ] {
            m.mark_all(t.vals());
        }
    }
}

/// Helpers for building built-in objects.
pub struct Builder<'h> {
    pub heap: &'h mut Heap,
}

impl Builder<'_> {
    pub fn native(&mut self, name: &'static str, f: NativeFn) -> Value {
        self.heap.alloc(Body::Function(Function::Native(Native { name, f, data: Value::UNDEFINED })))
    }

    /// Adds native method `name` to a method table.
    pub fn method(&mut self, table: &mut PropMap, name: &'static str, f: NativeFn) {
        let v = self.native(name, f);
        table.set(Atom::intern(name), v);
    }

    /// A plain object (namespaces like `Math`, `JSON`, `console`).
    pub fn object(&mut self) -> Value {
        self.heap.alloc(Body::Object(Mut::new(ObjectData {
            class: Value::UNDEFINED,
            props: PropMap::new(),
            frozen: false,
        })))
    }

    /// Sets a property on a plain object made by [`Builder::object`].
    pub fn set(&mut self, obj: Value, name: &str, v: Value) {
        if let Some(Body::Object(d)) = obj.as_obj().map(|o| &o.body) {
            d.lock().props.set(Atom::intern(name), v);
        }
    }

    pub fn set_native(&mut self, obj: Value, name: &'static str, f: NativeFn) {
        let v = self.native(name, f);
        self.set(obj, name, v);
    }

    /// A built-in class. `ctor` runs for `new` (with `this` = a fresh
    /// instance for `BuiltinKind::Ordinary`); `call` runs when the class is
    /// called without `new` (undefined: calling it is a TypeError).
    pub fn class(
        &mut self,
        name: &str,
        parent: Value,
        kind: BuiltinKind,
        ctor: Option<NativeFn>,
        call: Option<NativeFn>,
    ) -> Value {
        let leaked: &'static str = Atom::intern(name).as_str();
        let ctor = ctor.map(|f| self.native(leaked, f)).unwrap_or(Value::UNDEFINED);
        let call = call.map(|f| self.native(leaked, f)).unwrap_or(Value::UNDEFINED);
        self.heap.alloc(Body::Class(Box::new(Mut::new(ClassData {
            name: Atom::intern(name),
            parent,
            ctor,
            field_init: Value::UNDEFINED,
            field_template: None,
            ctor_plan: None,
            proto_props: PropMap::new(),
            statics: PropMap::new(),
            kind,
            call,
        }))))
    }

    pub fn class_data(class: Value) -> MutRef<'static, ClassData> {
        match class.as_obj().map(|o| &o.body) {
            Some(Body::Class(c)) => c.lock(),
            _ => panic!("not a class"),
        }
    }

    pub fn static_native(&mut self, class: Value, name: &'static str, f: NativeFn) {
        let v = self.native(name, f);
        Self::class_data(class).statics.set(Atom::intern(name), v);
    }

    pub fn proto_native(&mut self, class: Value, name: &'static str, f: NativeFn) {
        let v = self.native(name, f);
        Self::class_data(class).proto_props.set(Atom::intern(name), v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::heap::Heap;

    fn body(v: Value) -> &'static Body {
        &v.as_obj().expect("an object").body
    }

    #[test]
    fn native_method_site_cache_follows_the_receiver_kind() {
        let mut heap = Heap::new();
        let mut realm = crate::builtins::install(&mut heap);
        let (arr, s) = (heap.alloc_array(vec![]), heap.alloc_str("ab"));
        let index_of = Atom::intern("indexOf");
        let site = AtomicU64::new(0);
        let ms = &realm.methods;
        // A miss fills the cache with the receiver's kind and the slot.
        let on_array = ms.native_method(body(arr), index_of, &site).expect("a native");
        let filled = site.load(Ordering::Relaxed) as u32;
        assert_eq!(filled & 0xff, Body::ARRAY_TAG as u32 + 1);
        assert_eq!(ms.array.find(index_of), Some((filled >> 8) as usize));
        // Another kind with the same method name: its own native, and the
        // cache now names that kind.
        let on_string = ms.native_method(body(s), index_of, &site).expect("a native");
        assert_eq!((site.load(Ordering::Relaxed) as u32) & 0xff, Body::STR_TAG as u32 + 1);
        assert_ne!(on_array as usize, on_string as usize);
        assert_eq!(ms.native_method(body(arr), index_of, &site).map(|f| f as usize), Some(on_array as usize));
        // No such method, or one written in Raya: no native, and the site
        // (each asks for one key only) stays empty.
        let other = AtomicU64::new(0);
        assert!(ms.native_method(body(arr), Atom::intern("noSuchMethod"), &other).is_none());
        let not_native = heap.alloc_array(vec![]);
        realm.methods.array.set(Atom::intern("writtenInRaya"), not_native);
        realm.methods.index_natives();
        assert!(realm.methods.native_method(body(arr), Atom::intern("writtenInRaya"), &other).is_none());
        assert_eq!(other.load(Ordering::Relaxed) as u32, 0);
        // A site filled from a newer realm, seen with an older one whose
        // table is shorter, looks the key up instead.
        let newer = (realm.methods.array.vals().len() as u32 + 5) << 8 | (Body::ARRAY_TAG as u32 + 1);
        let stale = AtomicU64::new(newer as u64);
        assert_eq!(
            realm.methods.native_method(body(arr), index_of, &stale).map(|f| f as usize),
            Some(on_array as usize)
        );
        // The high half of a site's word (its method cache index) is kept.
        let shared = AtomicU64::new(7 << 32);
        ms_again(&realm, body(s), index_of, &shared);
        assert_eq!(shared.load(Ordering::Relaxed) >> 32, 7);
        assert_eq!(shared.load(Ordering::Relaxed) as u32 & 0xff, Body::STR_TAG as u32 + 1);
    }

    fn one(_: &mut crate::vm::native::NativeCtx, _: Value, _: &[Value]) -> Result<Value, Value> {
        Ok(Value::number(1.0))
    }

    fn two(_: &mut crate::vm::native::NativeCtx, _: Value, _: &[Value]) -> Result<Value, Value> {
        Ok(Value::number(2.0))
    }

    fn data(v: Value) -> &'static Mut<ObjectData> {
        match body(v) {
            Body::Object(d) => d,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn own_native_site_cache_reads_the_object_as_it_is_now() {
        let mut heap = Heap::new();
        let mut b = Builder { heap: &mut heap };
        let (f1, f2) = (b.native("one", one), b.native("two", two));
        let (o, p) = (b.heap.alloc_object(Value::UNDEFINED), b.heap.alloc_object(Value::UNDEFINED));
        let (k, other) = (Atom::intern("f"), Atom::intern("g"));
        data(o).lock().props.set(k, f1);
        // In `p`, `f` sits in another slot than in `o`.
        data(p).lock().props.set(other, Value::NULL);
        data(p).lock().props.set(k, f2);
        let site = AtomicU64::new(9 << 32);
        let call = |obj: Value, site: &AtomicU64| {
            Methods::own_native_method(data(obj), |d| &d.props, k, site).map(|f| f as usize)
        };
        assert_eq!(call(o, &site), Some(one as NativeFn as usize));
        assert_eq!(site.load(Ordering::Relaxed) as u32 & 0xff, OWN_NATIVE);
        // Another object at the same site, then the first again.
        assert_eq!(call(p, &site), Some(two as NativeFn as usize));
        assert_eq!(call(o, &site), Some(one as NativeFn as usize));
        // The property reassigned: the cache names a slot, not a function.
        data(o).lock().props.set(k, f2);
        assert_eq!(call(o, &site), Some(two as NativeFn as usize));
        // No longer a native: the general path takes the call (the site
        // still serves other objects).
        data(o).lock().props.set(k, Value::number(3.0));
        assert_eq!(call(o, &site), None);
        assert_eq!(call(p, &site), Some(two as NativeFn as usize));
        // A site that found no native (an object without the property)
        // stops looking, even at an object that has one.
        let empty = b.heap.alloc_object(Value::UNDEFINED);
        let quiet = AtomicU64::new(0);
        assert_eq!(call(empty, &quiet), None);
        assert_eq!(quiet.load(Ordering::Relaxed) as u32 & 0xff, NOT_OWN_NATIVE);
        assert_eq!(call(p, &quiet), None);
        // A native with data (made at run time) is left to the general
        // path, which passes the data as `this`.
        let with_data = b.heap.alloc(Body::Function(Function::Native(Native { name: "r", f: one, data: Value::TRUE })));
        data(p).lock().props.set(k, with_data);
        assert_eq!(call(p, &AtomicU64::new(0)), None);
        // The high half (the site's method cache index) is kept.
        assert_eq!(site.load(Ordering::Relaxed) >> 32, 9);
    }

    fn ms_again(realm: &Realm, b: &Body, key: Atom, site: &AtomicU64) {
        assert!(realm.methods.native_method(b, key, site).is_some());
    }
}
