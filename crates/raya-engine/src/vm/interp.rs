//! The interpreter: `TaskInterpreter::run(task, budget)`.
//!
//! One dispatch loop over [`Instr`] (see `bytecode/mod.rs` for what each
//! instruction does and for the calling convention). The loop keeps the
//! current frame's code, pc and register base in locals and reloads them
//! whenever the frame changes (call, return, throw). A Raya-to-Raya call
//! pushes a [`Frame`] onto the task and continues in the same loop — it
//! never recurses on the Rust stack — so a task can stop after any
//! instruction and resume later on any thread.
//!
//! # Safepoints
//!
//! Every call and every `Loop` (loop back-edge) decrements the budget. At
//! zero the task saves its pc and returns [`RunOutcome::Preempted`] (the
//! fairness rule). The same points are where a pending garbage collection
//! runs, because there every live value is in a register.
//!
//! # Errors
//!
//! Faults become error objects with a stack trace (the pc of the faulting
//! instruction is saved into its frame first) and unwind to the innermost
//! handler of the task, or end the task with [`RunOutcome::Failed`].

use super::atom::{names, Atom};
use super::heap;
use super::link::RtProto;
use super::native::NativeCtx;
use super::object::{
    Accessor, Body, BuiltinKind, ClassData, Closure, CtorPlan, Function, GenMode, GenResume, GenRun, GenState,
    IterState, MapPos, Mut, MutRef, ObjectData, PropMap, Upvals, USER_DONE, USER_GOT_ITER, USER_GOT_METHOD,
    USER_GOT_NEXT, USER_PENDING, USER_READY, USER_START,
};
use super::ops::{self, Fault, Got, Put};
use super::runtime::{make_closure_with, Runtime};
use super::strbuf::{self, StrBuf};
use super::task::{flags, AwaitScan, Frame, Handler, Task};
use super::value::Value;
use crate::builtins::numconv;
use crate::bytecode::{Capture, Instr, MethodKind, SelectCaseDesc, SelectDesc, NO_THIS};
use crate::sync::{Outcome, Resume, TaskCell, Wait};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

/// Constructor of a built-in class whose instances are not plain objects.
type BuiltinCtor = fn(&mut NativeCtx, &[Value]) -> Result<Value, Value>;

/// Maximum call depth before `RangeError: Maximum call stack size exceeded`.
pub const MAX_FRAMES: usize = 10_000;

/// Why a task stopped running.
#[derive(Debug)]
pub enum RunOutcome {
    /// The task's function returned this value.
    Completed(Value),
    /// The task ended with this uncaught error.
    Failed(Value),
    /// The task is waiting; the scheduler parks it on what it waits for.
    Suspended(Wait),
    /// The budget ran out; the task is runnable and should be requeued.
    Preempted,
    /// `exit(code)` was called.
    Exited(i32),
}

/// Safepoints of grace a task holding a mutex gets, each time it runs, when
/// its time slice runs out (see `safepoint!`).
const LOCK_GRACE: u32 = 1_000;

pub struct TaskInterpreter<'rt> {
    pub rt: &'rt mut Runtime,
}

/// What a `select` does on entry.
enum Selected {
    /// Jump to the case at this offset (from the instruction after the
    /// `Select`), storing a received value first.
    Case(i32, Option<Value>),
    /// Suspend.
    Wait(Wait),
}

/// Result of starting a call.
enum Invoked {
    /// A frame was pushed: reload the frame state.
    Pushed,
    /// The call finished (natives): the result is already stored.
    Done,
}

/// A `TypeError` for an operator applied to non-numbers.
fn operand_fault(op: &str, x: Value, y: Value) -> Fault {
    Fault::Type(format!("Cannot apply '{}' to {} and {}", op, describe_type(x), describe_type(y)))
}

/// Implicit conversion of a symbol to text (`"a" + s`, `${s}`) is an
/// error in JS; `String(s)` and `s.toString()` are the explicit forms.
fn symbol_to_string_fault() -> Fault {
    Fault::Type("Cannot convert a Symbol value to a string".into())
}

fn describe_type(v: Value) -> &'static str {
    if v.is_null() {
        return "null";
    }
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Array(_)) => "array",
        _ => ops::type_of(v),
    }
}

/// `x % y` as JS computes it. Integral operands (the common case) take an
/// integer path: `fmod` is an order of magnitude slower than `idiv`.
#[inline(always)]
fn js_rem(x: f64, y: f64) -> f64 {
    // Both integers of i32 range (`i % 1000003`, `i % 2`): a 32-bit
    // division, without the saturating conversions of the 64-bit path.
    // |x| < 2^31 excludes i32::MIN, so `i % j` cannot overflow.
    const LIMIT32: f64 = 2147483648.0;
    if x.abs() < LIMIT32 && y.abs() < LIMIT32 {
        // SAFETY: both are finite and within i32's range (NaN fails the
        // comparisons above).
        let (i, j) = unsafe { (x.to_int_unchecked::<i32>(), y.to_int_unchecked::<i32>()) };
        if i as f64 == x && j as f64 == y && j != 0 {
            let r = i % j;
            return if r == 0 && x.is_sign_negative() { -0.0 } else { r as f64 };
        }
    }
    const LIMIT: f64 = 9007199254740992.0; // 2^53: every integer below is exact
    if x.abs() < LIMIT && y.abs() < LIMIT && y != 0.0 {
        let (i, j) = (x as i64, y as i64);
        if i as f64 == x && j as f64 == y {
            let r = i % j;
            // The result takes the dividend's sign, including -0.
            return if r == 0 && x.is_sign_negative() { -0.0 } else { r as f64 };
        }
    }
    x % y
}

/// `n` as an index of an array's storage when it is a whole number in
/// `0..2^32 - 1` (`-0` is index 0); `None` sends anything else (fractions,
/// NaN, negatives, huge numbers) to the general property path. Cheaper
/// than the saturating `n as usize`.
#[inline(always)]
#[cfg(target_arch = "x86_64")]
fn array_index(n: f64) -> Option<usize> {
    use std::arch::x86_64::{_mm_cvttsd_si64, _mm_set_sd};
    // One truncating conversion, whose result for NaN and for anything out
    // of i64's range is i64::MIN, and one conversion back: a whole number
    // comes back equal, and its range is one unsigned compare (negatives
    // wrap above it). SAFETY: SSE2 is part of x86_64.
    let i = unsafe { _mm_cvttsd_si64(_mm_set_sd(n)) };
    (i as f64 == n && (i as u64) < 4294967295).then_some(i as usize)
}

/// As above, without the x86_64 conversion's defined out-of-range result.
#[inline(always)]
#[cfg(not(target_arch = "x86_64"))]
fn array_index(n: f64) -> Option<usize> {
    if (0.0..4294967295.0).contains(&n) {
        // SAFETY: in range of u32 (NaN fails the comparisons).
        let i = unsafe { n.to_int_unchecked::<u32>() };
        if i as f64 == n {
            return Some(i as usize);
        }
    }
    None
}

fn compare(op: &str, x: Value, y: Value) -> Result<Option<std::cmp::Ordering>, Fault> {
    if x.is_number() && y.is_number() {
        return Ok(x.as_number().partial_cmp(&y.as_number()));
    }
    match (ops::js_str(x), ops::js_str(y)) {
        (Some(a), Some(b)) => Ok(Some(ops::cmp_strings(a, b))),
        _ => Err(operand_fault(op, x, y)),
    }
}

/// The ReferenceError of a read or write of `let`/`const` `K[name]` in
/// its temporal dead zone.
#[cold]
#[inline(never)]
fn uninitialized(name: &str) -> Fault {
    Fault::Reference(format!("Cannot access '{name}' before initialization"))
}

/// `x < y`, or `x <= y` with `or_equal`, for the compare-and-jump
/// instructions when not both are numbers (the `less!` macro of the
/// dispatch loop compares those): two strings, else the TypeError.
/// `swapped`: the source said `y > x` (`y >= x`), which only the
/// TypeError reports.
#[inline(never)]
fn less_slow(x: Value, y: Value, or_equal: bool, swapped: bool) -> Result<bool, Fault> {
    if let (Some(a), Some(b)) = (ops::js_str(x), ops::js_str(y)) {
        let ord = ops::cmp_strings(a, b);
        return Ok(ord == std::cmp::Ordering::Less || (or_equal && ord == std::cmp::Ordering::Equal));
    }
    Err(match (swapped, or_equal) {
        (false, false) => operand_fault("<", x, y),
        (false, true) => operand_fault("<=", x, y),
        (true, false) => operand_fault(">", y, x),
        (true, true) => operand_fault(">=", y, x),
    })
}

fn closure_of(v: Value) -> Option<&'static Closure> {
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Function(Function::Closure(c))) => Some(c),
        _ => None,
    }
}

/// Whether `key` may be defined as an own property of `d` (a class field,
/// or a literal's key): not on an object a parent constructor froze,
/// whose keys can be neither added nor redefined. Private names are not
/// properties, and freezing does not stop them.
fn definable(d: &ObjectData, key: Atom) -> Result<(), Fault> {
    if !d.frozen || key.is_private() {
        return Ok(());
    }
    Err(Fault::Type(match d.props.find(key) {
        Some(_) => format!("Cannot redefine property: {}", key.as_str()),
        None => format!("Cannot define property {}, object is not extensible", key.as_str()),
    }))
}

/// The atom of `raw` (a tagged template's strings array's `raw`).
pub(crate) fn raw_atom() -> Atom {
    static RAW: std::sync::OnceLock<Atom> = std::sync::OnceLock::new();
    *RAW.get_or_init(|| Atom::intern("raw"))
}

fn set_home(func: Value, class: Value) {
    if let Some(c) = closure_of(func) {
        *c.home.lock() = class;
    }
}

/// Whether `v` counts as an object for a constructor's return value.
fn is_object_like(v: Value) -> bool {
    v.as_obj().is_some_and(|o| !matches!(o.body, Body::Str(_)))
}

/// Marks generator `gen` finished (its frame returned or was unwound).
fn finish_gen(gen: Value) {
    if let Some(Body::Iter(st)) = gen.as_obj().map(|o| &o.body) {
        if let IterState::Gen(g) = &mut *st.lock() {
            g.run = GenRun::Done;
            g.regs = Vec::new();
            g.handlers = Vec::new();
        }
    }
}

/// Where generator `gen` is (None: not a generator).
fn gen_run(gen: Value) -> Option<GenRun> {
    match gen.as_obj().map(|o| &o.body) {
        Some(Body::Iter(st)) => match &*st.lock() {
            IterState::Gen(g) => Some(g.run),
            _ => None,
        },
        _ => None,
    }
}

/// Whether iterating `v` runs script code (a generator, or an object with
/// a `[Symbol.iterator]` method), so that only the prelude, not a
/// built-in, can collect it.
pub fn is_script_iterable(realm: &super::realm::Realm, heap: &mut heap::Heap, v: Value) -> bool {
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Iter(st)) => matches!(&*st.lock(), IterState::Gen(_)),
        Some(Body::Object(_)) => {
            matches!(ops::get_prop(realm, heap, v, names::ITERATOR), Ok(Got::Value(f)) if ops::is_callable(f))
                || matches!(ops::get_prop(realm, heap, v, names::ITERATOR), Ok(Got::Getter(_)))
        }
        _ => false,
    }
}

impl<'rt> TaskInterpreter<'rt> {
    /// `{ value, done }`.
    fn iter_result(&mut self, value: Value, done: bool) -> Value {
        let o = self.new_instance(Value::UNDEFINED);
        if let Some(mut d) = ops::object_data(o) {
            d.props.set(names::VALUE, value);
            d.props.set(names::DONE, Value::bool(done));
        }
        o
    }

    /// `GenStart`: the top frame becomes a new, unstarted generator, which
    /// is the call's result.
    fn gen_start(&mut self, task: &mut Task) -> Option<RunOutcome> {
        let (gen, fr) = self.new_gen(task);
        if task.frames.is_empty() {
            if let Some(slot) = task.regs.get_mut(fr.ret as usize) {
                *slot = gen;
            }
            return Some(RunOutcome::Completed(gen));
        }
        if fr.flags & flags::DISCARD == 0 {
            task.regs[fr.ret as usize] = gen;
        }
        None
    }

    /// Moves the top frame into a new, unstarted generator; returns it
    /// and the popped frame.
    fn new_gen(&mut self, task: &mut Task) -> (Value, Frame) {
        let fr = task.frames.pop().expect("frame");
        let base = fr.base as usize;
        let n = fr.proto().proto.num_regs as usize;
        let regs = task.regs[base..(base + n).min(task.regs.len())].to_vec();
        // No handler can be active yet: `GenStart` comes before the body.
        let state = GenState { closure: fr.closure, regs, pc: fr.pc, handlers: Vec::new(), run: GenRun::Start };
        (self.rt.heap.alloc(Body::Iter(Mut::new(IterState::Gen(Box::new(state))))), fr)
    }

    /// `AsyncGenStart`: as `GenStart`, then the call's result is the
    /// prelude's async generator object around the new generator
    /// (`Array.__asyncGen(gen)`, called in the generator frame's place).
    fn async_gen_start(&mut self, task: &mut Task) -> Result<Invoked, Fault> {
        let (gen, fr) = self.new_gen(task);
        self.call_prelude(task, "__asyncGen", &[gen], fr.ret as usize, fr.flags & flags::DISCARD)
    }

    /// `Yield`: moves the top (generator) frame, its registers and its
    /// handlers back into its generator and delivers `v` to the resumer.
    fn gen_yield(&mut self, task: &mut Task, v: Value) -> Result<(), Fault> {
        if task.frames.last().is_none_or(|f| f.flags & flags::GEN == 0) || task.frames.len() < 2 {
            return Err(Fault::Type("internal: yield outside a generator frame".into()));
        }
        let fr = task.frames.pop().expect("frame");
        let depth = task.frames.len() as u32;
        let base = fr.base as usize;
        let n = fr.proto().proto.num_regs as usize;
        let mut hs = Vec::new();
        while task.handlers.last().is_some_and(|h| h.depth > depth) {
            let h = task.handlers.pop().expect("handler");
            hs.push((h.pc, h.exc - base as u32));
        }
        hs.reverse();
        if let Some(Body::Iter(st)) = fr.after.as_obj().map(|o| &o.body) {
            if let IterState::Gen(g) = &mut *st.lock() {
                g.regs.clear();
                heap::counted(&mut g.regs, |r| r.extend_from_slice(&task.regs[base..base + n]));
                g.pc = fr.pc;
                g.handlers = hs;
                g.run = GenRun::Yielded;
            }
        }
        if fr.flags & flags::DISCARD == 0 {
            let out = if fr.flags & flags::GEN_RAW != 0 { v } else { self.iter_result(v, false) };
            task.regs[fr.ret as usize] = out;
        }
        Ok(())
    }

    /// Resumes a generator as `next(v)`, `return(v)` or `throw(v)` asked
    /// (`r`): its frame goes on top of this task's stack, above the
    /// current frame, and returns (or yields) into `regs[ret]`.
    ///
    /// A generator may be shared by tasks on several workers. Invariant:
    /// its state is read and switched to `Running` under the generator's
    /// lock, held from the check until its registers are moved out, so of
    /// two tasks resuming it at once exactly one gets the frame and the
    /// other `TypeError: Generator is already running`; only the task
    /// whose stack holds the frame touches it until `Yield`, a return or
    /// an unwind hands it back (again under the lock).
    fn gen_resume(&mut self, task: &mut Task, r: GenResume, ret: usize, fl: u8) -> Result<Invoked, Fault> {
        let Some(Body::Iter(st)) = r.gen.as_obj().map(|o| &o.body) else {
            return Err(Fault::Type("not a generator".into()));
        };
        let mut guard = st.lock();
        let IterState::Gen(g) = &mut *guard else {
            return Err(Fault::Type("not a generator".into()));
        };
        let finished = match (g.run, r.mode) {
            (GenRun::Running, _) => return Err(Fault::Type("Generator is already running".into())),
            (GenRun::Done, _) => true,
            (GenRun::Start, GenMode::Return | GenMode::Throw) => {
                g.run = GenRun::Done;
                g.regs = Vec::new();
                true
            }
            _ => false,
        };
        if finished {
            drop(guard);
            let v = match r.mode {
                GenMode::Throw => return Err(Fault::Thrown(r.value)),
                GenMode::Return => r.value,
                GenMode::Next => Value::UNDEFINED,
            };
            if fl & flags::DISCARD == 0 {
                task.regs[ret] = if fl & flags::GEN_RAW != 0 { v } else { self.iter_result(v, true) };
            }
            return Ok(Invoked::Done);
        }
        if task.frames.len() >= MAX_FRAMES {
            return Err(Fault::Range("Maximum call stack size exceeded".into()));
        }
        let Some(c) = closure_of(g.closure) else {
            return Err(Fault::Type("not a generator".into()));
        };
        let top = match task.frames.last() {
            Some(fr) => fr.base as usize + fr.proto().proto.num_regs as usize,
            None => task.regs.len(),
        };
        let n = g.regs.len();
        let base = top + 1;
        if task.regs.len() < base + n + 1 {
            task.grow_regs(base + n + 1);
        }
        // `regs[top]` lies below the frame: it must hold a live value.
        task.regs[top] = r.gen;
        task.regs[base..base + n].copy_from_slice(&g.regs);
        g.regs.clear();
        let mut pc = g.pc;
        if g.run == GenRun::Yielded && r.mode != GenMode::Throw {
            // The `Yield` before `pc` names the register of its result.
            if let Some(Instr::Yield { dst, .. }) = pc.checked_sub(1).and_then(|i| c.proto.proto.code.get(i as usize)) {
                task.regs[base + *dst as usize] = r.value;
            }
            if r.mode == GenMode::Return {
                pc += 1; // past the `Jmp`, onto the return path
            }
        }
        let depth = task.frames.len() as u32 + 1;
        for &(hpc, exc) in &g.handlers {
            task.handlers.push(Handler { depth, pc: hpc, exc: base as u32 + exc });
        }
        g.handlers.clear();
        g.run = GenRun::Running;
        let (closure, rt) = (g.closure, Arc::as_ptr(&c.proto));
        drop(guard);
        task.reserve_frame();
        task.frames.push(Frame {
            rt,
            closure,
            pc,
            base: base as u32,
            ret: ret as u32,
            flags: flags::GEN | (fl & (flags::GEN_RAW | flags::DISCARD)),
            after: r.gen,
        });
        if r.mode == GenMode::Throw {
            return Err(Fault::Thrown(r.value));
        }
        Ok(Invoked::Pushed)
    }

    /// Calls prelude function `Array.<name>(args)` above the current
    /// frame, its result going to `regs[ret]`.
    fn call_prelude(
        &mut self,
        task: &mut Task,
        name: &str,
        args: &[Value],
        ret: usize,
        fl: u8,
    ) -> Result<Invoked, Fault> {
        let f = ops::lookup_static(self.rt.realm.classes.array, Atom::intern(name))
            .ok_or_else(|| Fault::Type(format!("internal: no prelude function {name}")))?;
        self.call_above(task, f, Value::UNDEFINED, args, ret, fl)
    }
}

impl<'rt> TaskInterpreter<'rt> {
    pub fn new(rt: &'rt mut Runtime) -> Self {
        TaskInterpreter { rt }
    }

    /// Prepares `task` to run `closure(this, ...args)` as its outermost
    /// frame.
    pub fn start(&mut self, task: &mut Task, closure: Value, this: Value, args: &[Value]) -> Result<(), Value> {
        task.regs.clear();
        task.regs.push(Value::UNDEFINED); // result slot
        task.regs.push(this);
        task.regs.extend_from_slice(args);
        self.start_in_place(task, closure, args.len())
    }

    /// [`TaskInterpreter::start`] with the registers written by the
    /// caller: the result slot, `this`, then `argc` arguments (an
    /// embedder's call converts its arguments straight into them).
    pub fn start_in_place(&mut self, task: &mut Task, closure: Value, argc: usize) -> Result<(), Value> {
        let r = match closure_of(closure) {
            // Directly, even for an async function: this *is* its task.
            Some(c) => self.push_frame(task, closure, c, 1, argc, 0, 0),
            None => self.invoke(task, closure, 0, argc, 0, 0).map(|_| ()),
        };
        r.map_err(|f| self.rt.fault_to_error(task, f))
    }

    /// Runs `task` until it completes, fails, suspends, or has executed
    /// `budget` safepoints; leaves in `budget` what it did not spend.
    ///
    /// Inlined: its callers read the outcome where the dispatch loop wrote
    /// it, rather than a copy (a short embedder's call spends a measurable
    /// part of its time on such copies, each a load of what was just
    /// stored in smaller pieces, which the CPU cannot forward).
    #[inline(always)]
    pub fn run(&mut self, task: &mut Task, budget: &mut u32) -> RunOutcome {
        // A seeded run explores interleavings: a mutex holder is preempted
        // like any task (as a task on another worker would interleave).
        task.lock_grace = if crate::scheduler::seeded::active() { 0 } else { LOCK_GRACE };
        // The start of a run is a safepoint too: every live value of the
        // task is in its registers (a resumed value already stored). A
        // program whose tasks are short and reach no call or back-edge —
        // an embedder evaluating `1 + 1` again and again — would
        // otherwise never collect.
        if self.rt.heap.wants_collection() {
            self.rt.collect_garbage(task);
        }
        match self.run_inner(task, budget) {
            // Made anew from its value rather than moved: the move copies
            // the outcome in wider pieces than the dispatch loop stored it.
            Ok(RunOutcome::Completed(v)) => RunOutcome::Completed(v),
            Ok(outcome) => outcome,
            Err(fault) => self.run_faulted(task, budget, fault),
        }
    }

    /// [`TaskInterpreter::run`] after the dispatch loop stopped on `fault`:
    /// the fault is thrown (or the instruction run again after a
    /// collection, at the heap limit), and the run goes on.
    #[inline(never)]
    fn run_faulted(&mut self, task: &mut Task, budget: &mut u32, fault: Fault) -> RunOutcome {
        let mut first = Some(fault);
        // Where the last heap-limit retry ran, and the budget left when it
        // failed: an instruction is run again at most once in a row. The
        // same instruction failing again is a new run of it (a loop came
        // round to it) only if the program passed another safepoint in
        // between; one attempt spends at most one (a call's), so a budget
        // at least two lower tells the two apart. Without that, a loop that
        // makes garbage failed at its second collection; with no limit at
        // all, an operation that allocates more than the slack before it
        // fails would collect and retry for ever.
        let mut retried_at: Option<(usize, u32, u32)> = None;
        loop {
            let r = match first.take() {
                Some(fault) => Err(fault),
                None => self.run_inner(task, budget),
            };
            match r {
                Ok(outcome) => return outcome,
                Err(fault) => {
                    if heap::take_limit_retry() && is_heap_limit_fault(&fault) {
                        // The instruction failed at the heap limit before it
                        // did anything (see `heap::check_growth`), and the
                        // bytes counted since the last collection may be
                        // garbage: collect, here, where every live value is
                        // in the task's registers, and run it again. If it
                        // fails again, the heap is full of live data and the
                        // RangeError is thrown.
                        let depth = task.frames.len();
                        if let Some(f) = task.frames.last_mut() {
                            let again = retried_at.is_some_and(|(d, pc, left)| {
                                (d, pc) == (depth, f.pc) && left.saturating_sub(*budget) < 2
                            });
                            if f.pc > 0 && !again && !spreads_args(f.proto().proto.code[f.pc as usize - 1]) {
                                retried_at = Some((depth, f.pc, *budget));
                                f.pc -= 1;
                                self.rt.collect_garbage_with(task, true);
                                continue;
                            }
                        }
                    }
                    let err = self.rt.fault_to_error(task, fault);
                    if let Err(uncaught) = self.unwind(task, err) {
                        return RunOutcome::Failed(uncaught);
                    }
                }
            }
        }
    }

    /// Applies what the waker delivered before the task runs again.
    /// Returns Err(error) if the task ends because of it (an uncaught
    /// throw at the suspension point).
    pub fn resume(&mut self, task: &mut Task, r: Resume) -> Result<(), Value> {
        match r {
            Resume::Value(v) => {
                let dst = task.resume_dst as usize;
                if dst < task.regs.len() {
                    task.regs[dst] = v;
                }
                Ok(())
            }
            Resume::Retry => Ok(()),
            Resume::Throw(e) => {
                task.rare.set_await_scan(None);
                self.unwind(task, e)
            }
            Resume::Cancel => {
                task.rare.set_await_scan(None);
                // Delivered: a preemption check must not throw it again
                // into the `catch`/`finally` now handling it (only the
                // next suspension does; LANGUAGE.md, cancellation).
                if let Some(c) = &task.cell {
                    c.cancel_delivered.store(true, std::sync::atomic::Ordering::Release);
                }
                let e = self.cancelled_error(task);
                self.unwind(task, e)
            }
            Resume::Closed => {
                let c = self.rt.realm.classes.channel_closed_error;
                let e = self.rt.make_error(task, c, "send on a closed channel");
                self.unwind(task, e)
            }
            Resume::Case { case, value } => {
                // The task is suspended right after its `Select`: store a
                // received value and jump to the chosen case's body.
                let Some(frame) = task.frames.last_mut() else { return Ok(()) };
                let pc = frame.pc as usize;
                let proto = &frame.proto().proto;
                let Some(Instr::Select { desc, .. }) = pc.checked_sub(1).and_then(|i| proto.code.get(i)) else {
                    return Ok(());
                };
                let d = &proto.selects[*desc as usize];
                let target = match d.cases.get(case as usize) {
                    Some(
                        SelectCaseDesc::Receive { target, .. }
                        | SelectCaseDesc::Send { target, .. }
                        | SelectCaseDesc::Timeout { target, .. }
                        | SelectCaseDesc::Default { target },
                    ) => *target,
                    None => return Ok(()),
                };
                let dst = frame.base as usize + d.value_reg as usize;
                frame.pc = (pc as i64 + target as i64) as u32;
                if dst < task.regs.len() {
                    task.regs[dst] = value;
                }
                Ok(())
            }
        }
    }

    fn cancelled_error(&mut self, task: &Task) -> Value {
        let c = self.rt.realm.classes.task_cancelled_error;
        self.rt.make_error(task, c, "task was cancelled")
    }

    /// Starts `callee(this, args)` as a new task; returns its `Task` object.
    ///
    /// A built-in callee (`async ch.send(v)`, `async m.lock()`) must run,
    /// and possibly suspend, in the new task, but `start` can only begin a
    /// task with a Raya frame: so the task starts in the prelude's
    /// `Task.__runBuiltin(fn, this, args)`, whose one call is the built-in.
    pub fn spawn(&mut self, callee: Value, this: Value, args: &[Value]) -> Result<Value, Value> {
        if closure_of(callee).is_none() && ops::is_callable(callee) {
            let run = ops::lookup_static(self.rt.realm.classes.task, Atom::intern("__runBuiltin"));
            if let Some(run) = run.filter(|r| closure_of(*r).is_some()) {
                let list = self.rt.heap.alloc_array(args.to_vec());
                return self.spawn_task(run, Value::UNDEFINED, &[callee, this, list]);
            }
        }
        self.spawn_task(callee, this, args)
    }

    fn spawn_task(&mut self, callee: Value, this: Value, args: &[Value]) -> Result<Value, Value> {
        let id = super::object::next_id();
        let mut t = Task::new(id);
        self.start(&mut t, callee, this, args)?;
        let mut exec = Box::new(t);
        let cell = Arc::new(TaskCell::without_exec(id));
        exec.cell = Some(cell.clone());
        *cell.exec.lock() = Some(exec);
        let obj = self.rt.heap.alloc(Body::Task(cell.clone()));
        cell.object.store(obj.bits(), std::sync::atomic::Ordering::Release);
        self.rt.world.live_tasks.insert(id, obj);
        self.rt.spawned.push(cell);
        Ok(obj)
    }

    /// Spawns with the arguments in `regs[f + 2..]`; the Task goes to
    /// `regs[ret]`.
    fn spawn_from_regs(
        &mut self,
        task: &mut Task,
        callee: Value,
        f: usize,
        argc: usize,
        ret: usize,
    ) -> Result<(), Fault> {
        // A run's limits (an embedder's call, `Vm::execute`'s main task)
        // cover the tasks it spawns: the child shares the parent's guard.
        let guard = task.cell.as_ref().and_then(|c| c.guard()).filter(|g| g.covers_spawned()).cloned();
        if let Some(g) = &guard {
            g.task_started().map_err(Fault::Range)?;
        }
        let this = task.regs[f + 1];
        match self.spawn(callee, this, &task.regs[f + 2..f + 2 + argc]) {
            Ok(t) => {
                if let (Some(g), Some(Body::Task(child))) = (guard, t.as_obj().map(|o| &o.body)) {
                    let _ = child.set_guard(g);
                }
                task.regs[ret] = t;
                Ok(())
            }
            Err(e) => {
                if let Some(g) = guard {
                    g.task_ended();
                }
                Err(Fault::Thrown(e))
            }
        }
    }

    /// `await v`: Ok(Some(value)) when it can complete now; Ok(None) when
    /// the task must wait (`wait` says for what).
    fn try_await(&mut self, task: &mut Task, v: Value, wait: &mut Option<Wait>) -> Result<Option<Value>, Fault> {
        match v.as_obj().map(|o| &o.body) {
            Some(Body::Task(_)) | Some(Body::Promise(_)) => match settled(v) {
                Some(o) => outcome_value(o).map(Some),
                None => {
                    *wait = Some(Wait::Settled(vec![v]));
                    Ok(None)
                }
            },
            Some(Body::Array(a)) => {
                // Scan from where the previous wake-up left off: elements
                // before `next` are known to have succeeded, so awaiting N
                // tasks costs O(N) in all, not O(N) per wake-up.
                let items = a.lock();
                let mut scan = match task.rare.await_scan() {
                    Some(s) if s.array == v => s,
                    _ => AwaitScan { array: v, next: 0, registered: false },
                };
                while scan.next < items.len() {
                    let x = items[scan.next];
                    if is_waitable(x) {
                        match peek_outcome(x) {
                            Some(Outcome::Value(_)) => {}
                            Some(_) => {
                                task.rare.set_await_scan(None);
                                let o = settled(x).expect("settled");
                                return outcome_value(o).map(Some);
                            }
                            None => break,
                        }
                    }
                    scan.next += 1;
                }
                if scan.next < items.len() {
                    task.rare.set_await_scan(Some(scan));
                    *wait = Some(Wait::All(v));
                    return Ok(None);
                }
                task.rare.set_await_scan(None);
                let items = items.clone();
                let out: Result<Vec<Value>, Fault> = items
                    .into_iter()
                    .map(|x| match settled(x) {
                        Some(o) => outcome_value(o),
                        None => Ok(x),
                    })
                    .collect();
                Ok(Some(self.rt.heap.alloc_array(out?)))
            }
            _ => Ok(Some(v)),
        }
    }

    /// Unwinds to the innermost handler; Err(value) if there is none.
    fn unwind(&mut self, task: &mut Task, value: Value) -> Result<(), Value> {
        let keep = task.handlers.last().map_or(0, |h| h.depth as usize);
        // The innermost executor frame (`new Promise(executor)`) above the
        // innermost handler catches the throw: it rejects its promise, and
        // its caller continues with the promise as the `new`'s result.
        let executor = task.frames[keep.min(task.frames.len())..]
            .iter()
            .rposition(|f| f.flags & flags::EXECUTOR != 0)
            .map(|i| keep + i);
        let keep = executor.unwrap_or(keep);
        // A generator whose frame a throw leaves is finished.
        for f in task.frames.iter().skip(keep) {
            if f.flags & flags::GEN != 0 {
                finish_gen(f.after);
            }
        }
        if let Some(i) = executor {
            let (p, ret, fl) = (task.frames[i].after, task.frames[i].ret as usize, task.frames[i].flags);
            task.frames.truncate(i);
            while task.handlers.last().is_some_and(|h| h.depth as usize > i) {
                task.handlers.pop();
            }
            crate::builtins::tasks::reject_unclaimed(self.rt, p, value);
            if fl & flags::DISCARD == 0 {
                task.regs[ret] = p;
            }
            return Ok(());
        }
        match task.handlers.pop() {
            Some(h) => {
                task.frames.truncate(h.depth as usize);
                if let Some(f) = task.frames.last_mut() {
                    f.pc = h.pc;
                    // The registers above the thrown value's belong to the
                    // `try` block's scopes and temporaries (the compiler
                    // allocates `exc` first, at the `try`), all dead now:
                    // clear them so that the collector does not keep what
                    // they held. A handler that catches a heap-limit error
                    // would otherwise still hold the structure that filled
                    // the heap, and could not allocate even its message.
                    let end = (f.base as usize + f.proto().proto.num_regs as usize).min(task.regs.len());
                    let from = (h.exc as usize + 1).min(end);
                    task.regs[from..end].fill(Value::UNDEFINED);
                }
                task.regs[h.exc as usize] = value;
                heap::caught_throw();
                Ok(())
            }
            None => {
                task.frames.clear();
                Err(value)
            }
        }
    }

    /// Pushes a frame for closure `callee` whose `this` is at
    /// `regs[new_base]` and arguments follow it.
    // The arguments are the frame's fields; bundling them in a struct would
    // only move the list.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn push_frame(
        &mut self,
        task: &mut Task,
        callee: Value,
        c: &Closure,
        new_base: usize,
        argc: usize,
        ret: usize,
        flags: u8,
    ) -> Result<(), Fault> {
        if task.frames.len() >= MAX_FRAMES {
            return Err(Fault::Range("Maximum call stack size exceeded".into()));
        }
        let p = &c.proto.call;
        let num_regs = p.num_regs as usize;
        let need = new_base + num_regs.max(argc + 1) + 1;
        if task.regs.len() < need {
            task.grow_regs(need);
        }
        let arity = p.arity as usize;
        let first_clear = if p.has_rest {
            let extra =
                if argc > arity { task.regs[new_base + 1 + arity..new_base + 1 + argc].to_vec() } else { Vec::new() };
            for i in argc.min(arity)..arity {
                task.regs[new_base + 1 + i] = Value::UNDEFINED;
            }
            task.regs[new_base + 1 + arity] = self.rt.heap.alloc_array(extra);
            new_base + 2 + arity
        } else {
            new_base + 1 + argc.min(arity)
        };
        let end = new_base + num_regs;
        // Most frames clear a handful of registers: four at a time where
        // the register vector has room past the frame (the slots above the
        // new top frame are dead, so clearing up to three of them too is
        // harmless), one at a time where it does not (a task's first frame,
        // whose registers are sized exactly). Either costs less than the
        // vectorised `fill`, whose set-up costs more than the stores.
        // SAFETY: `end <= need <= regs.len()` (grown above), and the
        // four-at-a-time loop writes below `end + 3 <= regs.len()`.
        debug_assert!(end <= task.regs.len());
        let regs = task.regs.as_mut_ptr();
        if end + 3 <= task.regs.len() {
            let mut i = first_clear;
            while i < end {
                unsafe { regs.add(i).cast::<[Value; 4]>().write_unaligned([Value::UNDEFINED; 4]) };
                i += 4;
            }
        } else {
            for i in first_clear..end {
                unsafe { *regs.add(i) = Value::UNDEFINED };
            }
        }
        task.reserve_frame();
        let frame = Frame {
            rt: Arc::as_ptr(&c.proto),
            closure: callee,
            pc: 0,
            base: new_base as u32,
            ret: ret as u32,
            flags,
            after: Value::UNDEFINED,
        };
        // Written in place: `reserve_frame` made the room, and `push` would
        // test the capacity a second time on every call.
        let len = task.frames.len();
        debug_assert!(len < task.frames.capacity());
        // SAFETY: `len < capacity` (reserved above); the slot is written
        // before the length covers it.
        unsafe {
            task.frames.as_mut_ptr().add(len).write(frame);
            task.frames.set_len(len + 1);
        }
        Ok(())
    }

    /// Calls `callee` with `this` at `regs[f + 1]` and `argc` arguments
    /// after it; the result goes to `regs[ret]` (unless DISCARD).
    fn invoke(
        &mut self,
        task: &mut Task,
        callee: Value,
        f: usize,
        argc: usize,
        ret: usize,
        flags: u8,
    ) -> Result<Invoked, Fault> {
        let Some(obj) = callee.as_obj() else {
            return Err(Fault::Type(format!("{} is not a function", ops::to_display(callee))));
        };
        match &obj.body {
            Body::Function(Function::Closure(c)) => {
                if c.proto.proto.is_constructor {
                    let name = ops::function_name(callee).unwrap_or_default();
                    return Err(Fault::Type(format!("Class constructor {name} cannot be invoked without 'new'")));
                }
                if c.proto.proto.is_async {
                    // Calling an async function spawns a task at once.
                    self.spawn_from_regs(task, callee, f, argc, ret)?;
                    return Ok(Invoked::Done);
                }
                self.push_frame(task, callee, c, f + 1, argc, ret, flags)?;
                Ok(Invoked::Pushed)
            }
            Body::Function(Function::Native(n)) => {
                if !n.data.is_undefined() {
                    // A native made at run time (a promise's `resolve`)
                    // gets its data as `this`.
                    task.regs[f + 1] = n.data;
                }
                self.invoke_native(task, n.f, f, argc, ret, flags)
            }
            Body::Function(Function::Bound(b)) => {
                // The bound arguments go before the call's own, so the
                // window moves above the caller's frame (the registers
                // after the call's arguments may be live). Bound chains
                // (`f.bind(a).bind(b)`) unwrap one level per `invoke`.
                let mut args = Vec::with_capacity(b.args.len() + argc);
                args.extend_from_slice(&b.args);
                args.extend_from_slice(&task.regs[f + 2..f + 2 + argc]);
                self.call_above(task, b.target, b.this, &args, ret, flags)
            }
            Body::Class(cd) => {
                if callee == self.rt.realm.classes.string && argc >= 1 {
                    let x = task.regs[f + 2];
                    if let Some(m) = self.user_to_string(x) {
                        return self.call_above(task, m, x, &[], ret, flags);
                    }
                }
                let call = cd.lock().call;
                match call.as_obj().map(|o| &o.body) {
                    Some(Body::Function(Function::Native(n))) => {
                        let v = self.call_native(task, n.f, callee, f + 2, argc)?;
                        if flags & flags::DISCARD == 0 {
                            task.regs[ret] = v;
                        }
                        Ok(Invoked::Done)
                    }
                    _ => Err(Fault::Type(format!(
                        "Class constructor {} cannot be invoked without 'new'",
                        cd.lock().name.as_str()
                    ))),
                }
            }
            _ => Err(Fault::Type(format!("{} is not a function", ops::to_display(callee)))),
        }
    }

    /// `invoke` of a built-in function: R[ret] = R[f](this = R[f+1],
    /// R[f+2..]).
    #[inline(always)]
    fn invoke_native(
        &mut self,
        task: &mut Task,
        native: super::object::NativeFn,
        f: usize,
        argc: usize,
        ret: usize,
        flags: u8,
    ) -> Result<Invoked, Fault> {
        task.resume_dst = ret as u32;
        let this = task.regs[f + 1];
        let v = self.call_native(task, native, this, f + 2, argc)?;
        if let Some(r) = self.rt.resume_gen.take() {
            return self.gen_resume(task, r, ret, flags);
        }
        // A built-in that suspends delivers its result later (or is
        // re-run), so the callee register is left untouched.
        if flags & flags::DISCARD == 0 && self.rt.suspend.is_none() {
            task.regs[ret] = v;
        }
        Ok(Invoked::Done)
    }

    // Inlined as before the stall marks were added: a call per native
    // call was measurable in loops of natives.
    #[inline(always)]
    fn call_native(
        &mut self,
        task: &mut Task,
        f: super::object::NativeFn,
        this: Value,
        args_at: usize,
        argc: usize,
    ) -> Result<Value, Fault> {
        if task.regs.len() < args_at + argc {
            task.grow_regs(args_at + argc);
        }
        let task_ref: &Task = task;
        let args = &task_ref.regs[args_at..args_at + argc];
        // The stall watchdog may read the task's frames during the call.
        if let Some(p) = &self.rt.stall {
            p.enter_native(task_ref);
        }
        let mut ctx = NativeCtx { rt: self.rt, task: task_ref };
        let r = f(&mut ctx, this, args);
        if let Some(p) = &self.rt.stall {
            p.leave_native();
        }
        r.map_err(Fault::Thrown)
    }

    /// Calls `func(this, args)` in a window above the current frame (used
    /// for getters, setters, field initialisers and `toString`).
    fn call_above(
        &mut self,
        task: &mut Task,
        func: Value,
        this: Value,
        args: &[Value],
        ret: usize,
        flags: u8,
    ) -> Result<Invoked, Fault> {
        let top = match task.frames.last() {
            Some(fr) => fr.base as usize + fr.proto().proto.num_regs as usize,
            None => task.regs.len(),
        };
        let need = top + 2 + args.len();
        if task.regs.len() < need {
            task.grow_regs(need);
        }
        // Every register below the top frame's end is a GC root, and the
        // callee slot `top` lies below the new frame's: it must hold a live
        // value, not whatever an earlier, returned frame left there (a
        // collection would follow that stale pointer to a freed object).
        task.regs[top] = func;
        task.regs[top + 1] = this;
        task.regs[top + 2..top + 2 + args.len()].copy_from_slice(args);
        self.invoke(task, func, top, args.len(), ret, flags)
    }

    /// `new callee(args)` with the arguments at `regs[f + 2..]`.
    fn construct(&mut self, task: &mut Task, callee: Value, f: usize, argc: usize) -> Result<Invoked, Fault> {
        let (kind, class_name, first_ctor, plan) = match callee.as_obj().map(|o| &o.body) {
            Some(Body::Class(cd)) => {
                let cd = cd.lock();
                (cd.kind, cd.name, cd.ctor, cd.ctor_plan)
            }
            Some(Body::Function(Function::Closure(c))) if !c.proto.proto.is_arrow && !c.proto.proto.is_generator => {
                // `new f()` on a plain function: `this` is a fresh object.
                let this = self.new_instance(Value::UNDEFINED);
                task.regs[f + 1] = this;
                self.push_frame(task, callee, c, f + 1, argc, f, flags::CONSTRUCT)?;
                return Ok(Invoked::Pushed);
            }
            Some(Body::Function(Function::Bound(b))) => {
                let target = ops::function_name(b.target).unwrap_or_default();
                return Err(Fault::Type(format!(
                    "{} is not a constructor (write `new {target}(...)` with the arguments instead of binding)",
                    b.name
                )));
            }
            _ => {
                let name = ops::function_name(callee).unwrap_or_else(|| ops::to_display(callee));
                return Err(Fault::Type(format!("{name} is not a constructor")));
            }
        };
        // Built-in classes whose instances are not plain objects have their
        // own constructor function.
        use crate::builtins::{array, channels, collections, tasks};
        let builtin: Option<BuiltinCtor> = match kind {
            BuiltinKind::Ordinary => None,
            BuiltinKind::Array => Some(array::construct_array),
            BuiltinKind::Promise => Some(tasks::construct_promise),
            BuiltinKind::Map => Some(collections::construct_map),
            BuiltinKind::Set => Some(collections::construct_set),
            BuiltinKind::Channel => Some(channels::construct_channel),
            BuiltinKind::Mutex => Some(channels::construct_mutex),
            BuiltinKind::WaitGroup => Some(channels::construct_wait_group),
            BuiltinKind::Semaphore => Some(channels::construct_semaphore),
            BuiltinKind::Bytes => Some(crate::builtins::bytes::construct_bytes),
            BuiltinKind::RegExp => Some(crate::builtins::regexp::construct),
            _ => return Err(Fault::Type(format!("{} is not a constructor", class_name.as_str()))),
        };
        if kind == BuiltinKind::Promise && argc >= 1 {
            // `new Promise(executor)`: the prelude's `Promise.__exec` runs
            // the executor on this task with native resolve functions
            // bound to the promise, and returns the promise.
            let p = self.rt.heap.alloc(Body::Promise(Default::default()));
            let executor = task.regs[f + 2];
            // A script function declaring fewer than two parameters can
            // never see `reject` (there is no `arguments`): it is not made.
            let wants = match closure_of(executor) {
                Some(c) if !c.proto.proto.has_rest => c.proto.proto.arity.min(2),
                _ => 2,
            };
            let (res, rej) = tasks::resolvers(self.rt, p, wants);
            // An ordinary script function runs as the executor frame itself
            // (`flags::EXECUTOR`): no prelude frame in between.
            if closure_of(executor).is_some_and(|c| {
                let pr = &c.proto.proto;
                !pr.is_async && !pr.is_generator && !pr.is_constructor
            }) {
                let r = self.call_above(task, executor, Value::UNDEFINED, &[res, rej], f, flags::EXECUTOR)?;
                debug_assert!(matches!(r, Invoked::Pushed));
                if let Some(fr) = task.frames.last_mut() {
                    fr.after = p;
                }
                return Ok(r);
            }
            let exec = ops::lookup_static(callee, names::PROMISE_EXEC).unwrap_or(Value::UNDEFINED);
            return self.call_above(task, exec, Value::UNDEFINED, &[p, executor, res, rej], f, 0);
        }
        if let Some(ctor) = builtin {
            return self.construct_builtin(task, ctor, f, argc);
        }
        let this = self.new_instance(callee);
        if let Some(plan) = plan {
            if Self::construct_planned(callee, this, &plan, &task.regs[f + 2..f + 2 + argc]) {
                task.regs[f] = this;
                return Ok(Invoked::Done);
            }
        }
        task.regs[f + 1] = this;
        // The nearest constructor up the chain.
        let mut class = callee;
        let mut ctor = first_ctor;
        while ctor.is_undefined() {
            match ops::class_data(class).map(|c| c.parent) {
                Some(p) if !p.is_undefined() => {
                    class = p;
                    ctor = ops::class_data(p).map(|c| c.ctor).unwrap_or(Value::UNDEFINED);
                }
                _ => break,
            }
        }
        match ctor.as_obj().map(|o| &o.body) {
            Some(Body::Function(Function::Closure(c))) => {
                // A constructor that starts with `InitFields` (a base
                // class with fields) gets its class's constant fields here,
                // copied into the new object, and starts after that
                // instruction: what it would do first, without its dispatch
                // and look-ups. Fields that need their initialiser run are
                // left to `InitFields`, which finds them the same way.
                // (The home cell, a leaf of the lock order, is read and
                // let go before the object and class are locked.)
                let fields_done = c.proto.call.inits_fields && {
                    let home = *c.home.lock();
                    Self::field_init_for(home, this).is_undefined()
                };
                self.push_frame(task, ctor, c, f + 1, argc, f, flags::CONSTRUCT)?;
                if fields_done {
                    if let Some(fr) = task.frames.last_mut() {
                        fr.pc = 1;
                    }
                }
                Ok(Invoked::Pushed)
            }
            Some(Body::Function(Function::Native(n))) => {
                let v = self.call_native(task, n.f, this, f + 2, argc)?;
                task.regs[f] = if is_object_like(v) { v } else { this };
                self.init_fields_of(task, callee, this)
            }
            _ => {
                unsupported_base(callee)?;
                task.regs[f] = this;
                self.init_fields_of(task, callee, this)
            }
        }
    }

    fn construct_builtin(
        &mut self,
        task: &mut Task,
        ctor: BuiltinCtor,
        f: usize,
        argc: usize,
    ) -> Result<Invoked, Fault> {
        let task_ref: &Task = task;
        let args = &task_ref.regs[f + 2..f + 2 + argc];
        if let Some(p) = &self.rt.stall {
            p.enter_native(task_ref);
        }
        let mut ctx = NativeCtx { rt: self.rt, task: task_ref };
        let v = ctor(&mut ctx, args);
        if let Some(p) = &self.rt.stall {
            p.leave_native();
        }
        let v = v.map_err(Fault::Thrown)?;
        task.regs[f] = v;
        Ok(Invoked::Done)
    }

    /// Runs `class`'s field initialiser (if any) on `this`.
    fn init_fields_of(&mut self, task: &mut Task, class: Value, this: Value) -> Result<Invoked, Fault> {
        let fi = Self::field_init_for(class, this);
        if fi.is_undefined() {
            return Ok(Invoked::Done);
        }
        self.call_above(task, fi, this, &[], 0, flags::DISCARD)
    }

    /// The field initialiser `class`'s fields still need on `this`:
    /// undefined when it has none, or when `this` took the class's constant
    /// fields (`ClassData::field_template`) in one copy. That happens when
    /// `this` has no property yet and is not frozen: then the initialiser
    /// would do exactly that, define each constant in order, starting from
    /// the same empty map, so the object ends with the same keys, order,
    /// values and shape.
    fn field_init_for(class: Value, this: Value) -> Value {
        // The object is locked before its class: the lock order's levels
        // (see `vm::object`).
        let mut obj = ops::object_data(this);
        let Some(cd) = ops::class_data(class) else { return Value::UNDEFINED };
        if cd.field_init.is_undefined() {
            return Value::UNDEFINED;
        }
        // Copied in place: a `PropMap` built and moved through the stack
        // went through misaligned partial copies that stalled the loads
        // after them (a tenth of `binary-trees`).
        let grown = match (&cd.field_template, obj.as_mut()) {
            (Some(template), Some(d)) if !d.frozen && d.props.is_pristine() => {
                d.props.copy_template(template);
                Some(d.props.capacity_bytes())
            }
            _ => None,
        };
        let init = cd.field_init;
        drop(cd);
        drop(obj);
        match grown {
            Some(bytes) => {
                if bytes > 0 {
                    heap::count_growth(bytes);
                }
                Value::UNDEFINED
            }
            None => init,
        }
    }

    /// What the field initialiser `init` defines on an object with no
    /// properties, if it defines only constants that are not heap values
    /// and does nothing else: the code the compiler gives such fields
    /// (`compiler/class.rs`, `field_initializer`) is a `Load…` of each
    /// value and a `DefineProp` on `this`, then `ReturnUndef`. Anything
    /// else (a computed key, an initialiser that calls, reads `this` or
    /// makes an object or a string) gives None, and the initialiser runs
    /// as a call.
    fn field_template_of(init: &RtProto) -> Option<PropMap> {
        let mut loaded: Vec<(u16, Value)> = Vec::new();
        let mut props = PropMap::new();
        for ins in init.proto.code.iter() {
            let (dst, v) = match *ins {
                Instr::LoadUndef { dst } => (dst, Value::UNDEFINED),
                Instr::LoadNull { dst } => (dst, Value::NULL),
                Instr::LoadTrue { dst } => (dst, Value::TRUE),
                Instr::LoadFalse { dst } => (dst, Value::FALSE),
                Instr::LoadInt { dst, v } => (dst, Value::number(v as f64)),
                Instr::LoadK { dst, k } => match init.consts.get(k as usize) {
                    Some(&v) if v.is_number() => (dst, v),
                    _ => return None,
                },
                Instr::DefineProp { obj: 0, name, src } => {
                    let v = loaded.iter().rev().find(|&&(r, _)| r == src)?.1;
                    props.set(*init.atoms.get(name as usize)?, v);
                    continue;
                }
                Instr::ReturnUndef => {
                    // Its keys are the source's: a bounded number of
                    // shapes, so they may live for good, and every
                    // instance then copies the shape without counting.
                    props.pin_shape();
                    return Some(props);
                }
                _ => return None,
            };
            loaded.push((dst, v));
        }
        None
    }

    /// What the constructor `ctor` does to a new instance that took the
    /// field template `template`, if all it does is store parameters in
    /// fields the template has (`this.left = left`): the code the compiler
    /// gives `constructor(a, b) { this.a = a; this.b = b; }` in a base
    /// class with those fields declared, `InitFields`, a `SetProp` on
    /// `this` from a parameter's register for each, then `ReturnUndef`.
    /// Each store then writes an own writable data property, which no
    /// setter or frozen object can intercept, so `new` may make them
    /// itself ([`Self::construct_planned`]). Anything else (a store of
    /// something other than a parameter, into a field not declared, a
    /// call, a default, a rest parameter) gives None, and the constructor
    /// runs as a call.
    fn ctor_plan_of(ctor: &RtProto, template: &PropMap) -> Option<CtorPlan> {
        let p = &ctor.proto;
        if p.is_async || p.is_generator || p.has_rest {
            return None;
        }
        let mut code = p.code.iter();
        if !matches!(code.next(), Some(Instr::InitFields)) {
            return None;
        }
        let mut plan = CtorPlan::default();
        for ins in code {
            match *ins {
                Instr::SetProp { obj: 0, name, src } if src >= 1 && src as usize <= p.arity as usize => {
                    let slot = template.find(*ctor.atoms.get(name as usize)?)?;
                    plan.push(slot, src as usize - 1)?;
                }
                Instr::ReturnUndef => return Some(plan),
                _ => return None,
            }
        }
        None
    }

    /// `new` of a class with a constructor plan ([`Self::ctor_plan_of`]):
    /// gives the fresh instance `this` its class's field template and
    /// stores the arguments as the plan says, a missing one as undefined,
    /// exactly what the constructor's frame would have done. False (and
    /// `this` untouched) if the class no longer has its template.
    fn construct_planned(class: Value, this: Value, plan: &CtorPlan, args: &[Value]) -> bool {
        // The object is locked before its class (see `field_init_for`).
        let mut obj = ops::object_data(this);
        let Some(cd) = ops::class_data(class) else { return false };
        let (Some(template), Some(d)) = (&cd.field_template, obj.as_mut()) else { return false };
        debug_assert!(d.props.is_pristine() && !d.frozen);
        d.props.copy_template(template);
        let grown = d.props.capacity_bytes();
        let vals = d.props.vals_mut();
        for &(slot, param) in plan.stores() {
            let v = args.get(param as usize).copied().unwrap_or(Value::UNDEFINED);
            if let Some(place) = vals.get_mut(slot as usize) {
                *place = v;
            }
        }
        drop(cd);
        drop(obj);
        if grown > 0 {
            heap::count_growth(grown);
        }
        true
    }

    fn new_instance(&mut self, class: Value) -> Value {
        self.rt.heap.alloc_object(class)
    }

    fn current_home(task: &Task) -> Value {
        task.frames.last().and_then(|f| closure_of(f.closure)).map(|c| *c.home.lock()).unwrap_or(Value::UNDEFINED)
    }

    /// Creates an iterator object over `v`.
    fn make_iter(&mut self, v: Value) -> Result<Value, Fault> {
        let state = match v.as_obj().map(|o| &o.body) {
            Some(Body::Array(_)) | Some(Body::Bytes(_)) => IterState::Array { arr: v, next: 0 },
            Some(Body::Str(_)) => IterState::Str { s: v, next: 0 },
            Some(Body::Map(_)) => IterState::Map { map: v, pos: MapPos::Start, kind: 2 },
            Some(Body::Set(_)) => IterState::Map { map: v, pos: MapPos::Start, kind: 0 },
            Some(Body::Channel(_)) => IterState::Channel { ch: v, waiting: false },
            Some(Body::Host(h)) if h.desc.next.is_some() => IterState::Host { obj: v },
            Some(Body::Iter(st)) => {
                if !matches!(&*st.lock(), IterState::Gen(_)) {
                    return Ok(v);
                }
                IterState::GenLoop { gen: v, pending: false, send: Value::UNDEFINED }
            }
            _ if is_script_iterable(&self.rt.realm, &mut self.rt.heap, v) => IterState::User {
                src: v,
                iter: Value::UNDEFINED,
                next: Value::UNDEFINED,
                phase: USER_START,
                send: Value::UNDEFINED,
            },
            _ => return Err(Fault::Type(format!("{} is not iterable", describe_iterable(v)))),
        };
        Ok(self.rt.heap.alloc(Body::Iter(Mut::new(state))))
    }

    /// Next value of iterator `it`, or None when done.
    fn iter_next(&mut self, it: Value) -> Option<Value> {
        let Some(Body::Iter(st)) = it.as_obj().map(|o| &o.body) else {
            return None;
        };
        match &mut *st.lock() {
            // Outside `for`-`of` (spread): nothing, as it could wait.
            IterState::Host { .. } => None,
            // Run script code: `IterNext` handles them, and spreads go
            // through the prelude (`is_script_iterable`).
            IterState::Gen(_) | IterState::GenLoop { .. } | IterState::User { .. } => None,
            IterState::Channel { ch, .. } => {
                // Outside `for`-`of` (spread, `Array.from`): only what can
                // be received without waiting.
                let Some(Body::Channel(c)) = ch.as_obj().map(|o| &o.body) else { return None };
                match c.try_recv(&mut self.rt.woken) {
                    crate::sync::channel::Recv::Got(v) if !v.is_null() => Some(v),
                    _ => None,
                }
            }
            IterState::Array { arr, next } => {
                if let Some(Body::Bytes(b)) = arr.as_obj().map(|o| &o.body) {
                    let v = b.with(|s| s.get(*next).copied());
                    *next += 1;
                    return v.map(|x| Value::number(x as f64));
                }
                let a = ops::array_data(*arr)?;
                let v = a.get(*next).copied();
                *next += 1;
                v
            }
            IterState::Str { s, next } => {
                let (c, n) = ops::string_char(&mut self.rt.heap, *s, *next)?;
                *next += n;
                Some(c)
            }
            IterState::Indexed { arr, next, entries } => {
                let v = ops::array_data(*arr)?.get(*next).copied()?;
                let k = Value::number(*next as f64);
                *next += 1;
                Some(if *entries { self.rt.heap.alloc_array(vec![k, v]) } else { k })
            }
            IterState::Map { map, pos, kind } => {
                let (mut m, is_set) = match map.as_obj().map(|o| &o.body) {
                    Some(Body::Map(m)) => (m.lock(), false),
                    Some(Body::Set(m)) => (m.lock(), true),
                    _ => return None,
                };
                let (k, v) = pos.next(&mut m)?;
                drop(m);
                // A Set's entry holds its value as the key.
                let v = if is_set { k } else { v };
                Some(match kind {
                    0 => k,
                    1 => v,
                    _ => self.rt.heap.alloc_array(vec![k, v]),
                })
            }
        }
    }

    /// All values of an iterable (spread, array rest).
    fn collect_iterable(&mut self, v: Value) -> Result<Vec<Value>, Fault> {
        if let Some(a) = ops::array_data(v) {
            return Ok(a.clone());
        }
        let it = self.make_iter(v)?;
        let mut out = Vec::new();
        while let Some(x) = self.iter_next(it) {
            out.push(x);
        }
        Ok(out)
    }

    fn the_class(v: Value) -> Result<MutRef<'static, ClassData>, Fault> {
        ops::class_data(v).ok_or_else(|| Fault::Type("not a class".into()))
    }

    /// Adds a method/getter/setter to a property table.
    fn define_in(&mut self, table: &mut PropMap, key: Atom, func: Value, kind: MethodKind) {
        match kind {
            MethodKind::Method => {
                table.set(key, func);
            }
            MethodKind::Getter | MethodKind::Setter => {
                let existing = table.get(key).and_then(|v| match v.as_obj().map(|o| &o.body) {
                    Some(Body::Accessor(a)) => Some(a),
                    _ => None,
                });
                let mut acc = match existing {
                    Some(a) => a.lock(),
                    None => {
                        let v = self
                            .rt
                            .heap
                            .alloc(Body::Accessor(Mut::new(Accessor { get: Value::UNDEFINED, set: Value::UNDEFINED })));
                        table.set(key, v);
                        match &v.as_obj().unwrap().body {
                            Body::Accessor(a) => a.lock(),
                            _ => unreachable!(),
                        }
                    }
                };
                if kind == MethodKind::Getter {
                    acc.get = func;
                } else {
                    acc.set = func;
                }
            }
        }
    }

    /// The dispatch loop. Returns Ok on a stop, Err on a fault (which
    /// `run` turns into a throw).
    fn run_inner(&mut self, task: &mut Task, budget: &mut u32) -> Result<RunOutcome, Fault> {
        // The budget lives in a local (a register) while the loop runs and
        // is written back at every exit, so a task that faults and catches
        // in a loop still runs out of budget.
        // At least one safepoint: after a cancellation thrown at an
        // exhausted budget is caught, the task runs on until the next one.
        let mut left = (*budget).max(1);
        'frame: loop {
            let Some(frame) = task.frames.last() else {
                *budget = left;
                return Ok(RunOutcome::Completed(task.regs.first().copied().unwrap_or(Value::UNDEFINED)));
            };
            // SAFETY: the frame's closure keeps the prototype alive.
            // The constant tables and the code's start are read through
            // `rtp` where an instruction needs them (`konst!`, `atom!`,
            // `pc!`) rather than kept in locals: the optimiser kept such
            // locals on the stack and stored all of them at every frame
            // entry, that is at every call and every return.
            let mut rtp: &RtProto = unsafe { &*frame.rt };
            let mut base = frame.base as usize;
            // `ip` points at the next instruction; `pc!()` is its index.
            let mut ip: *const Instr = unsafe { rtp.code_start().add(frame.pc as usize) };
            // Pointer to this frame's register 0. Frames are sized when
            // pushed (`push_frame`), so every register operand the compiler
            // emits for this function is in bounds. The register vector may
            // be reallocated only by calls; `refresh!` re-derives the
            // pointer after anything that can grow it.
            let mut rp: *mut Value = unsafe { task.regs.as_mut_ptr().add(base) };

            // Enters the frame `push_frame` has just pushed for closure
            // `$c` at register `$base`, as the top of 'frame would, but
            // from what the call already holds: the callee's prototype is
            // at hand, where the top of 'frame would load it again through
            // the frame just written.
            macro_rules! enter_pushed {
                ($c:expr, $base:expr) => {{
                    // SAFETY: the closure, now the new frame's, keeps its
                    // prototype alive.
                    rtp = unsafe { &*Arc::as_ptr(&$c.proto) };
                    base = $base;
                    ip = rtp.code_start();
                    refresh!();
                }};
            }
            macro_rules! refresh {
                () => {
                    rp = unsafe { task.regs.as_mut_ptr().add(base) }
                };
            }
            macro_rules! reg {
                ($r:expr) => {
                    *unsafe { &*rp.add($r as usize) }
                };
            }
            macro_rules! set {
                ($r:expr, $v:expr) => {{
                    let v = $v;
                    *unsafe { &mut *rp.add($r as usize) } = v;
                }};
            }
            // Constant operands index this function's own constant table,
            // as the compiler emits them (like register operands): `konst!`
            // reads a constant as a value, `atom!` as a property name.
            macro_rules! konst {
                ($k:expr) => {{
                    debug_assert!(($k as usize) < rtp.consts.len());
                    *unsafe { rtp.consts.get_unchecked($k as usize) }
                }};
            }
            macro_rules! atom {
                ($k:expr) => {{
                    debug_assert!(($k as usize) < rtp.atoms.len());
                    *unsafe { rtp.atoms.get_unchecked($k as usize) }
                }};
            }
            macro_rules! pc {
                () => {
                    unsafe { ip.offset_from(rtp.code_start()) as usize }
                };
            }
            // The inline-cache entry of the instruction being executed.
            macro_rules! ic {
                () => {
                    unsafe { rtp.ic_at(ip as usize - rtp.code_start() as usize - std::mem::size_of::<Instr>()) }
                };
            }
            // The same entry as a full word: a property instruction's
            // shape-and-slot cache (see `PropMap::cached`).
            macro_rules! ic64 {
                () => {
                    unsafe { rtp.ic64_at(ip as usize - rtp.code_start() as usize - std::mem::size_of::<Instr>()) }
                };
            }
            // The running closure, read from the frame where an instruction
            // needs it (upvalues, nested closures) rather than kept in a
            // local: the optimiser derived its body pointer at every frame
            // entry (each call and return) and kept it on the stack.
            macro_rules! closure {
                () => {
                    // SAFETY: the loop runs only while a frame is on the
                    // stack (checked at the top of 'frame).
                    unsafe { task.frames.last().unwrap_unchecked().closure }
                };
            }
            // Upvalue `$i` of the running closure. Every frame is pushed
            // for a closure (`push_frame`, a generator's resumption), and
            // the compiler emits upvalue operands only below the count of
            // the function's captures, which is the count of upvalues
            // `Instr::Closure` gave it: so neither is checked here, as
            // register operands are not.
            macro_rules! upval {
                ($i:expr) => {{
                    let c = closure_of(closure!());
                    debug_assert!(c.is_some_and(|c| ($i as usize) < c.upvals.len()));
                    // SAFETY: see above.
                    unsafe { *c.unwrap_unchecked().upvals.get_unchecked($i as usize) }
                }};
            }
            macro_rules! save_pc {
                () => {
                    if let Some(f) = task.frames.last_mut() {
                        f.pc = pc!() as u32;
                    }
                };
            }
            macro_rules! fault {
                ($e:expr) => {{
                    save_pc!();
                    *budget = left;
                    return Err($e);
                }};
            }
            macro_rules! tri {
                ($e:expr) => {
                    match $e {
                        Ok(v) => v,
                        Err(f) => fault!(f),
                    }
                };
            }
            macro_rules! jump {
                ($off:expr) => {
                    ip = unsafe { ip.offset($off as isize) }
                };
            }
            // A conditional jump, taken. One that goes backward closes a
            // loop (the test at its bottom): a safepoint, like `Loop`.
            macro_rules! branch {
                ($off:expr) => {{
                    jump!($off);
                    if $off < 0 {
                        safepoint!(0);
                    }
                }};
            }
            // `Instr::StepJmpIf…`: with two numbers, the step, the test,
            // and the jump or the skip past the written-out pair; with
            // anything else, on to that pair.
            macro_rules! step_jump {
                ($r:expr, $b:expr, $imm:expr, $off:expr, $test:expr) => {{
                    let (x, y) = (reg!($r), reg!($b));
                    if x.is_number() && y.is_number() {
                        let n = x.as_number() + $imm as f64;
                        set!($r, Value::number_arith(n));
                        if $test(n, y.as_number()) {
                            branch!($off);
                        } else {
                            ip = unsafe { ip.add(2) };
                        }
                    }
                }};
            }
            // A safepoint. `$back` is how many instructions to step back
            // on preemption: 1 at a call (the call has not happened yet and
            // must run when the task resumes), 0 after a loop's jump.
            macro_rules! safepoint {
                ($back:expr) => {{
                    left = left.saturating_sub(1);
                    if left == 0 && task.lock_grace > 0 && task.holds_mutex() {
                        // A holder sent to the back of the queue would make
                        // every task that wants its mutex queue up behind
                        // it, and a queue that never empties turns every
                        // later lock into a task switch (a lock convoy). So
                        // a task holding a mutex runs on, one safepoint at
                        // a time, and is preempted at the first safepoint
                        // where it holds none, unless it uses up its grace
                        // (`run` renews it) first.
                        task.lock_grace -= 1;
                        left = 1;
                    }
                    if left == 0 {
                        ip = unsafe { ip.sub($back) };
                        save_pc!();
                        *budget = 0;
                        if task.cell.as_ref().is_some_and(|c| {
                            c.is_cancel_requested()
                                && !c.cancel_delivered.swap(true, std::sync::atomic::Ordering::AcqRel)
                        }) {
                            let e = self.cancelled_error(task);
                            return Err(Fault::Thrown(e));
                        }
                        return Ok(RunOutcome::Preempted);
                    }
                    if self.rt.heap.wants_collection() {
                        save_pc!();
                        self.rt.collect_garbage(task);
                    }
                }};
            }
            macro_rules! invoked {
                ($e:expr) => {{
                    match $e {
                        Ok(Invoked::Pushed) => continue 'frame,
                        Ok(Invoked::Done) => {
                            refresh!();
                            if let Some(w) = self.rt.suspend.take() {
                                if w.reruns_call() {
                                    // Waits on tasks (and on I/O that
                                    // fills a buffer) re-run the call when
                                    // woken (it then finds them settled);
                                    // so do socket waits (the native tries
                                    // its syscall again).
                                    ip = unsafe { ip.sub(1) };
                                    save_pc!();
                                }
                                *budget = left;
                                return Ok(RunOutcome::Suspended(w));
                            }
                            if let Some(code) = self.rt.exit_code {
                                *budget = left;
                                return Ok(RunOutcome::Exited(code));
                            }
                        }
                        Err(f) => {
                            *budget = left;
                            return Err(f);
                        }
                    }
                }};
            }
            // The common returns, done here rather than in `do_return`: to
            // a caller, from a frame whose flags are among `$flags`, with no
            // handler of the frame left to pop; `$v` is the result (given
            // the frame's flags). Anything else falls through to
            // `do_return`.
            macro_rules! fast_return {
                ($flags:expr, |$fl:ident| $v:expr) => {{
                    let depth = task.frames.len();
                    if let Some(fr) = task.frames.last() {
                        if fr.flags & !$flags == 0 && task.handlers.last().is_none_or(|h| (h.depth as usize) < depth) {
                            let ret = fr.ret as usize;
                            let $fl = fr.flags;
                            let v = $v;
                            task.frames.pop();
                            *unsafe { task.regs.get_unchecked_mut(ret) } = v;
                            if depth > 1 {
                                continue 'frame;
                            }
                            // The outermost frame (an embedder's call, a
                            // task's function): the run ends here, with
                            // the result also in its slot, as
                            // `do_return` leaves it.
                            *budget = left;
                            return Ok(RunOutcome::Completed(v));
                        }
                    }
                }};
            }
            // `+` on anything but two numbers (`Add`, and `AddI` for
            // `x + k`): concatenation, or a user `toString` called first.
            macro_rules! add_slow {
                ($dst:expr, $x:expr, $y:expr) => {{
                    let (x, y) = ($x, $y);
                    if let Some((m, obj, other, fl)) = self.add_needs_to_string(x, y) {
                        // `str + obj` with a user toString: call it; the
                        // concatenation happens when it returns.
                        save_pc!();
                        let r = self.call_above(task, m, obj, &[], base + $dst as usize, fl);
                        if let (Ok(Invoked::Pushed), Some(fr)) = (&r, task.frames.last_mut()) {
                            fr.after = other;
                        }
                        invoked!(r);
                    } else {
                        let v = tri!(self.add_slow(x, y));
                        set!($dst, v);
                    }
                }};
            }
            macro_rules! cmp_op {
                ($dst:expr, $a:expr, $b:expr, $sym:expr, $test:expr) => {{
                    let x = reg!($a);
                    let y = reg!($b);
                    let r = if x.is_number() && y.is_number() {
                        let (p, q) = (x.as_number(), y.as_number());
                        $test(p.partial_cmp(&q))
                    } else {
                        $test(tri!(compare($sym, x, y)))
                    };
                    set!($dst, Value::bool(r));
                }};
            }
            macro_rules! arith {
                ($dst:expr, $a:expr, $b:expr, $op:tt, $sym:expr) => {{
                    let x = reg!($a);
                    let y = reg!($b);
                    if x.is_number() && y.is_number() {
                        set!($dst, Value::number_arith(x.as_number() $op y.as_number()));
                    } else {
                        fault!(operand_fault($sym, x, y));
                    }
                }};
            }
            macro_rules! int_op {
                ($dst:expr, $a:expr, $b:expr, $sym:expr, |$p:ident, $q:ident| $body:expr) => {{
                    let x = reg!($a);
                    let y = reg!($b);
                    if !(x.is_number() && y.is_number()) {
                        fault!(operand_fault($sym, x, y));
                    }
                    let $p = numconv::to_int32(x.as_number());
                    let $q = numconv::to_int32(y.as_number());
                    set!($dst, Value::number($body));
                }};
            }
            // `x < y` (`$op` `<`) or `x <= y` (`<=`, `$or_equal` true) for
            // the compare-and-jump instructions: two numbers compare here
            // (false with a NaN), anything else in `less_slow`. Written out
            // rather than through a function returning a `Result`, which
            // the optimiser stored to the stack and tested again.
            macro_rules! less {
                ($x:expr, $y:expr, $op:tt, $or_equal:expr, $swapped:expr) => {{
                    let (x, y) = ($x, $y);
                    if x.is_number() && y.is_number() {
                        x.as_number() $op y.as_number()
                    } else {
                        tri!(less_slow(x, y, $or_equal, $swapped))
                    }
                }};
            }

            loop {
                let ins: &Instr = unsafe { &*ip };
                ip = unsafe { ip.add(1) };
                match *ins {
                    Instr::Move { dst, src } => set!(dst, reg!(src)),
                    Instr::Move2 { dst, src, dst2, src2 } => {
                        set!(dst, reg!(src));
                        set!(dst2, reg!(src2));
                    }
                    Instr::LoadK { dst, k } => set!(dst, konst!(k)),
                    Instr::LoadInt { dst, v } => set!(dst, Value::number(v as f64)),
                    Instr::LoadUndef { dst } => set!(dst, Value::UNDEFINED),
                    Instr::LoadHole { dst } => set!(dst, Value::HOLE),
                    Instr::CheckInit { src, name } => {
                        if reg!(src) == Value::HOLE {
                            fault!(uninitialized(atom!(name).as_str()));
                        }
                    }
                    Instr::LoadNull { dst } => set!(dst, Value::NULL),
                    Instr::LoadTrue { dst } => set!(dst, Value::TRUE),
                    Instr::LoadFalse { dst } => set!(dst, Value::FALSE),
                    Instr::GetGlobal { dst, idx } => set!(dst, self.rt.world.globals.get(idx as usize)),
                    Instr::SetGlobal { idx, src } => self.rt.world.globals.set(idx as usize, reg!(src)),

                    Instr::NewCell { dst } => {
                        let c = self.rt.heap.alloc_cell(Value::UNDEFINED);
                        set!(dst, c)
                    }
                    Instr::CellGet { dst, cell } => match reg!(cell).as_obj().map(|o| &o.body) {
                        Some(Body::Cell(c)) => set!(dst, *c.lock()),
                        _ => fault!(Fault::Type("internal: not a cell".into())),
                    },
                    Instr::CellSet { cell, src } => match reg!(cell).as_obj().map(|o| &o.body) {
                        Some(Body::Cell(c)) => *c.lock() = reg!(src),
                        _ => fault!(Fault::Type("internal: not a cell".into())),
                    },
                    Instr::GetUpval { dst, idx } => match upval!(idx).as_obj().map(|o| &o.body) {
                        Some(Body::Cell(cell)) => set!(dst, *cell.lock()),
                        _ => fault!(Fault::Type("internal: upvalue is not a cell".into())),
                    },
                    Instr::SetUpval { idx, src } => match upval!(idx).as_obj().map(|o| &o.body) {
                        Some(Body::Cell(cell)) => *cell.lock() = reg!(src),
                        _ => fault!(Fault::Type("internal: upvalue is not a cell".into())),
                    },
                    Instr::GetCapture { dst, idx } => set!(dst, upval!(idx)),
                    Instr::Closure { dst, proto } => {
                        let child = rtp.children[proto as usize].clone();
                        let parent = closure_of(closure!());
                        let capture = |cap: &Capture| match *cap {
                            Capture::Local(r) => reg!(r),
                            Capture::Upval(i) => parent.map(|p| p.upvals[i as usize]).unwrap_or(Value::UNDEFINED),
                        };
                        let upvals = match &child.proto.captures[..] {
                            [one] => Upvals::One(capture(one)),
                            caps => Upvals::Many(caps.iter().map(capture).collect()),
                        };
                        let is_arrow = child.proto.is_arrow;
                        let v = make_closure_with(&mut self.rt.heap, child, upvals);
                        if is_arrow {
                            // Arrows see `super` of the method they are in.
                            if let (Some(p), Some(c)) = (parent, closure_of(v)) {
                                let home = *p.home.lock();
                                *c.home.lock() = home;
                            }
                        }
                        set!(dst, v)
                    }

                    Instr::Add { dst, a, b } => {
                        let x = reg!(a);
                        let y = reg!(b);
                        if x.is_number() && y.is_number() {
                            set!(dst, Value::number_arith(x.as_number() + y.as_number()));
                        } else {
                            add_slow!(dst, x, y);
                        }
                    }
                    Instr::Sub { dst, a, b } => arith!(dst, a, b, -, "-"),
                    Instr::Mul { dst, a, b } => arith!(dst, a, b, *, "*"),
                    Instr::Div { dst, a, b } => arith!(dst, a, b, /, "/"),
                    Instr::Mod { dst, a, b } => {
                        let x = reg!(a);
                        let y = reg!(b);
                        if !(x.is_number() && y.is_number()) {
                            fault!(operand_fault("%", x, y));
                        }
                        set!(dst, Value::number_arith(js_rem(x.as_number(), y.as_number())));
                    }
                    Instr::Pow { dst, a, b } => {
                        let x = reg!(a);
                        let y = reg!(b);
                        if !(x.is_number() && y.is_number()) {
                            fault!(operand_fault("**", x, y));
                        }
                        set!(dst, Value::number(crate::builtins::math::js_pow(x.as_number(), y.as_number())));
                    }
                    Instr::AddI { dst, src, imm, plus } => {
                        let x = reg!(src);
                        if x.is_number() {
                            set!(dst, Value::number_arith(x.as_number() + imm as f64));
                        } else if plus {
                            add_slow!(dst, x, Value::number(imm as f64));
                        } else {
                            let sym = if imm < 0 { "-" } else { "+" };
                            fault!(operand_fault(sym, x, Value::number(imm.unsigned_abs() as f64)));
                        }
                    }
                    Instr::MulI { dst, src, imm } => {
                        let x = reg!(src);
                        if !x.is_number() {
                            fault!(operand_fault("*", x, Value::number(imm as f64)));
                        }
                        set!(dst, Value::number_arith(x.as_number() * imm as f64));
                    }
                    Instr::ModI { dst, src, imm } => {
                        let x = reg!(src);
                        if !x.is_number() {
                            fault!(operand_fault("%", x, Value::number(imm as f64)));
                        }
                        set!(dst, Value::number_arith(js_rem(x.as_number(), imm as f64)));
                    }
                    Instr::StrictEqI { dst, src, imm, ne } => {
                        let x = reg!(src);
                        let eq = x.is_number() && x.as_number() == imm as f64;
                        set!(dst, Value::bool(eq != ne));
                    }
                    Instr::BitAnd { dst, a, b } => int_op!(dst, a, b, "&", |p, q| (p & q) as f64),
                    Instr::BitOr { dst, a, b } => int_op!(dst, a, b, "|", |p, q| (p | q) as f64),
                    Instr::BitXor { dst, a, b } => int_op!(dst, a, b, "^", |p, q| (p ^ q) as f64),
                    Instr::Shl { dst, a, b } => int_op!(dst, a, b, "<<", |p, q| p.wrapping_shl(q as u32 & 31) as f64),
                    Instr::Shr { dst, a, b } => int_op!(dst, a, b, ">>", |p, q| (p >> (q as u32 & 31)) as f64),
                    Instr::UShr { dst, a, b } => {
                        int_op!(dst, a, b, ">>>", |p, q| ((p as u32) >> (q as u32 & 31)) as f64)
                    }
                    Instr::Neg { dst, src } => {
                        let x = reg!(src);
                        if !x.is_number() {
                            fault!(Fault::Type(format!("Cannot apply unary '-' to {}", describe_type(x))));
                        }
                        set!(dst, Value::number(-x.as_number()));
                    }
                    Instr::ToNumber { dst, src } => {
                        let x = reg!(src);
                        if !x.is_number() {
                            fault!(Fault::Type(format!("Cannot apply unary '+' to {}", describe_type(x))));
                        }
                        set!(dst, x);
                    }
                    Instr::BitNot { dst, src } => {
                        let x = reg!(src);
                        if !x.is_number() {
                            fault!(Fault::Type(format!("Cannot apply '~' to {}", describe_type(x))));
                        }
                        set!(dst, Value::number(!numconv::to_int32(x.as_number()) as f64));
                    }
                    Instr::Not { dst, src } => set!(dst, Value::bool(!reg!(src).truthy())),
                    Instr::TypeOf { dst, src } => {
                        let s = self.rt.heap.alloc_str(ops::type_of(reg!(src)));
                        set!(dst, s)
                    }
                    Instr::ToString { dst, src } => {
                        let x = reg!(src);
                        if ops::is_string(x) {
                            set!(dst, x);
                        } else if let Some(m) = self.user_to_string(x) {
                            save_pc!();
                            invoked!(self.call_above(task, m, x, &[], base + dst as usize, 0));
                        } else if ops::symbol_atom(x).is_some() {
                            fault!(symbol_to_string_fault());
                        } else {
                            let s = tri!(ops::try_to_display(x));
                            let s = self.rt.heap.alloc_str(s);
                            set!(dst, s);
                        }
                    }
                    Instr::Concat { dst, start, count } => {
                        // A part with a user `toString` is converted first,
                        // in place (the parts are temporaries), and the
                        // Concat then runs again.
                        if let Some((i, m)) =
                            (0..count).find_map(|i| self.user_to_string(reg!(start + i)).map(|m| (i, m)))
                        {
                            ip = unsafe { ip.sub(1) };
                            save_pc!();
                            let part = reg!(start + i);
                            invoked!(self.call_above(task, m, part, &[], base + (start + i) as usize, 0));
                            continue;
                        }
                        // Parts that are strings have known lengths: a
                        // result that is surely too long fails before
                        // anything is built.
                        if (0..count).any(|i| ops::symbol_atom(reg!(start + i)).is_some()) {
                            fault!(symbol_to_string_fault());
                        }
                        let (mut known, mut bytes) = (0usize, 0usize);
                        for i in 0..count {
                            match reg!(start + i).as_obj().and_then(|o| o.as_str()) {
                                Some(x) => {
                                    known += x.utf16_len as usize;
                                    bytes += x.s.len();
                                }
                                // A number's text, usually.
                                None => bytes += 8,
                            }
                        }
                        tri!(strbuf::check_len(known));
                        let mut s = tri!(StrBuf::with_capacity(bytes));
                        for i in 0..count {
                            let v = reg!(start + i);
                            tri!(match ops::js_str(v) {
                                Some(x) => s.push_js(x),
                                None => ops::write_display(v, &mut s, 0),
                            });
                        }
                        let v = self.rt.heap.alloc_buf(s);
                        set!(dst, v)
                    }

                    // Two numbers inline (`x % 3 === 0`, `i !== n`); the
                    // rest (strings by content) in `ops::strict_eq`.
                    Instr::StrictEq { dst, a, b } => {
                        let (x, y) = (reg!(a), reg!(b));
                        let eq = if x.is_number() && y.is_number() {
                            x.as_number() == y.as_number()
                        } else {
                            ops::strict_eq(x, y)
                        };
                        set!(dst, Value::bool(eq));
                    }
                    Instr::StrictNe { dst, a, b } => {
                        let (x, y) = (reg!(a), reg!(b));
                        let eq = if x.is_number() && y.is_number() {
                            x.as_number() == y.as_number()
                        } else {
                            ops::strict_eq(x, y)
                        };
                        set!(dst, Value::bool(!eq));
                    }
                    Instr::LooseEq { dst, a, b } => set!(dst, Value::bool(ops::loose_eq(reg!(a), reg!(b)))),
                    Instr::LooseNe { dst, a, b } => set!(dst, Value::bool(!ops::loose_eq(reg!(a), reg!(b)))),
                    Instr::Lt { dst, a, b } => {
                        cmp_op!(dst, a, b, "<", |o: Option<std::cmp::Ordering>| o == Some(std::cmp::Ordering::Less))
                    }
                    Instr::Le { dst, a, b } => cmp_op!(dst, a, b, "<=", |o: Option<std::cmp::Ordering>| matches!(
                        o,
                        Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
                    )),
                    Instr::Gt { dst, a, b } => {
                        cmp_op!(dst, a, b, ">", |o: Option<std::cmp::Ordering>| o == Some(std::cmp::Ordering::Greater))
                    }
                    Instr::Ge { dst, a, b } => cmp_op!(dst, a, b, ">=", |o: Option<std::cmp::Ordering>| matches!(
                        o,
                        Some(std::cmp::Ordering::Greater | std::cmp::Ordering::Equal)
                    )),
                    Instr::In { dst, a, b } => {
                        let r = tri!(ops::has_property(&self.rt.realm, reg!(a), reg!(b)));
                        set!(dst, Value::bool(r))
                    }
                    Instr::InstanceOf { dst, a, b } => {
                        let r = tri!(ops::instance_of(&self.rt.realm, reg!(a), reg!(b)));
                        set!(dst, Value::bool(r))
                    }

                    Instr::Jmp { off } => jump!(off),
                    Instr::Loop { off } => {
                        jump!(off);
                        safepoint!(0);
                    }
                    Instr::JmpIfTrue { cond, off } => {
                        if reg!(cond).truthy() {
                            branch!(off);
                        }
                    }
                    Instr::JmpIfFalse { cond, off } => {
                        if !reg!(cond).truthy() {
                            branch!(off);
                        }
                    }
                    Instr::JmpIfNullish { src, off } => {
                        if reg!(src).is_nullish() {
                            jump!(off)
                        }
                    }
                    Instr::JmpIfNotNullish { src, off } => {
                        if !reg!(src).is_nullish() {
                            jump!(off)
                        }
                    }
                    Instr::JmpIfNil { src, off, undef, eq } => {
                        let v = reg!(src);
                        if (if undef { v.is_undefined() } else { v.is_null() }) == eq {
                            branch!(off);
                        }
                    }
                    Instr::JmpIfNotLt { a, b, off, swapped } => {
                        if !less!(reg!(a), reg!(b), <, false, swapped) {
                            branch!(off);
                        }
                    }
                    Instr::JmpIfNotLe { a, b, off, swapped } => {
                        if !less!(reg!(a), reg!(b), <=, true, swapped) {
                            branch!(off);
                        }
                    }
                    // With a constant: `x > k` is `k < x` for the slow path
                    // (the strings-or-TypeError rule, `swapped` naming the
                    // operator as written).
                    Instr::JmpIfNotLtI { a, imm, off } => {
                        if !less!(reg!(a), Value::number(imm as f64), <, false, false) {
                            branch!(off);
                        }
                    }
                    Instr::JmpIfNotLeI { a, imm, off } => {
                        if !less!(reg!(a), Value::number(imm as f64), <=, true, false) {
                            branch!(off);
                        }
                    }
                    Instr::JmpIfNotGtI { a, imm, off } => {
                        if !less!(Value::number(imm as f64), reg!(a), <, false, true) {
                            branch!(off);
                        }
                    }
                    Instr::JmpIfNotGeI { a, imm, off } => {
                        if !less!(Value::number(imm as f64), reg!(a), <=, true, true) {
                            branch!(off);
                        }
                    }
                    Instr::JmpIfLt { a, b, off, swapped } => {
                        if less!(reg!(a), reg!(b), <, false, swapped) {
                            branch!(off);
                        }
                    }
                    Instr::JmpIfLe { a, b, off, swapped } => {
                        if less!(reg!(a), reg!(b), <=, true, swapped) {
                            branch!(off);
                        }
                    }
                    Instr::StepJmpIfLt { r, b, imm, off } => step_jump!(r, b, imm, off, |x, y| x < y),
                    Instr::StepJmpIfLe { r, b, imm, off } => step_jump!(r, b, imm, off, |x, y| x <= y),
                    Instr::StepJmpIfGt { r, b, imm, off } => step_jump!(r, b, imm, off, |x, y| x > y),
                    Instr::StepJmpIfGe { r, b, imm, off } => step_jump!(r, b, imm, off, |x, y| x >= y),

                    Instr::GetProp { dst, obj, name } => {
                        let o = reg!(obj);
                        let key = atom!(name);
                        if key == names::LENGTH {
                            match o.as_obj().map(|o| &o.body) {
                                Some(Body::Array(a)) => {
                                    set!(dst, Value::number(a.lock().len() as f64));
                                    continue;
                                }
                                Some(Body::Str(js)) => {
                                    set!(dst, Value::number(js.utf16_len as f64));
                                    continue;
                                }
                                _ => {}
                            }
                        }
                        // Inline cache: the shape and slot where this site
                        // last found its key on a plain object/instance.
                        if let Some(Body::Object(d)) = o.as_obj().map(|o| &o.body) {
                            let d = d.lock();
                            if let Some(i) = d.props.find_cached(key, ic64!()) {
                                let v = d.props.vals()[i];
                                if !matches!(v.as_obj().map(|o| &o.body), Some(Body::Accessor(_))) {
                                    set!(dst, v);
                                    continue;
                                }
                            }
                        }
                        if key == raw_atom() {
                            if let Some(r) = self.rt.world.template_raw(o) {
                                set!(dst, r);
                                continue;
                            }
                        }
                        match tri!(ops::get_prop(&self.rt.realm, &mut self.rt.heap, o, key)) {
                            Got::Value(v) => set!(dst, v),
                            Got::Getter(g) => {
                                save_pc!();
                                invoked!(self.call_above(task, g, o, &[], base + dst as usize, 0));
                            }
                        }
                    }
                    Instr::AddPropI { obj, imm, name } => {
                        // The fast case only; anything else runs the
                        // general form that follows (see `Instr::AddPropI`).
                        if let Some(Body::Object(d)) = reg!(obj).as_obj().map(|o| &o.body) {
                            let mut d = d.lock();
                            let ic = ic64!();
                            if let Some(slot) = d.props.lookup_ic(atom!(name), ic.load(Relaxed)).filter(|_| !d.frozen) {
                                let cur = &mut d.props.vals_mut()[slot];
                                if cur.is_number() {
                                    *cur = Value::number_arith(cur.as_number() + imm as f64);
                                    ip = unsafe { ip.add(3) };
                                    continue;
                                }
                            }
                            if let Some(slot) = d.props.find(atom!(name)) {
                                d.props.remember(slot, ic);
                            }
                        }
                    }
                    Instr::SetProp { obj, name, src } => {
                        let o = reg!(obj);
                        let key = atom!(name);
                        let v = reg!(src);
                        if let Some(Body::Object(d)) = o.as_obj().map(|o| &o.body) {
                            let mut d = d.lock();
                            if let Some(slot) = d.props.lookup_ic(key, ic64!().load(Relaxed)).filter(|_| !d.frozen) {
                                let cur = &mut d.props.vals_mut()[slot];
                                if !matches!(cur.as_obj().map(|o| &o.body), Some(Body::Accessor(_))) {
                                    *cur = v;
                                    continue;
                                }
                            }
                        }
                        match tri!(ops::set_prop(&self.rt.realm, o, key, v)) {
                            Put::Done => {
                                if let Some(Body::Object(d)) = o.as_obj().map(|o| &o.body) {
                                    let d = d.lock();
                                    if let Some(i) = d.props.find(key) {
                                        d.props.remember(i, ic64!());
                                    }
                                }
                            }
                            Put::Setter(s) => {
                                save_pc!();
                                invoked!(self.call_above(task, s, o, &[v], 0, flags::DISCARD));
                            }
                        }
                    }
                    Instr::GetIndex { dst, obj, key } => {
                        let o = reg!(obj);
                        let k = reg!(key);
                        if k.is_number() {
                            if let Some(Body::Array(a)) = o.as_obj().map(|o| &o.body) {
                                let a = a.lock();
                                if let Some(i) = array_index(k.as_number()) {
                                    set!(dst, a.get(i).copied().unwrap_or(Value::UNDEFINED));
                                    continue;
                                }
                            }
                        }
                        match tri!(ops::get_index(&self.rt.realm, &mut self.rt.heap, o, k)) {
                            Got::Value(v) => set!(dst, v),
                            Got::Getter(g) => {
                                save_pc!();
                                invoked!(self.call_above(task, g, o, &[], base + dst as usize, 0));
                            }
                        }
                    }
                    Instr::SetIndex { obj, key, src } => {
                        let o = reg!(obj);
                        let k = reg!(key);
                        let v = reg!(src);
                        if k.is_number() {
                            if let Some(ob @ super::object::Obj { body: Body::Array(a), .. }) = o.as_obj() {
                                let mut a = a.lock();
                                if let Some(i) = array_index(k.as_number()) {
                                    if i < a.len() && !ob.is_frozen_array() {
                                        a[i] = v;
                                        continue;
                                    }
                                    // Appending by index (`out[k++] = x`, the
                                    // prelude's `map` and `filter`) within the
                                    // capacity: no growth to count, so no
                                    // need for `array_store`.
                                    if i == a.len() && i < a.capacity() && !ob.is_frozen_array() {
                                        a.push(v);
                                        continue;
                                    }
                                }
                            }
                        }
                        match tri!(ops::set_index(&self.rt.realm, o, k, v)) {
                            Put::Done => {}
                            Put::Setter(s) => {
                                save_pc!();
                                invoked!(self.call_above(task, s, o, &[v], 0, flags::DISCARD));
                            }
                        }
                    }
                    Instr::GetSuper { dst, name } => {
                        let home = Self::current_home(task);
                        let parent = ops::class_data(home).map(|c| c.parent).unwrap_or(Value::UNDEFINED);
                        let key = atom!(name);
                        let found = ops::lookup_proto(parent, key).or_else(|| ops::lookup_static(parent, key));
                        let this = reg!(0);
                        match found.map(|v| (v, v.as_obj().map(|o| &o.body))) {
                            Some((_, Some(Body::Accessor(a)))) => {
                                let g = a.lock().get;
                                save_pc!();
                                invoked!(self.call_above(task, g, this, &[], base + dst as usize, 0));
                            }
                            Some((v, _)) => set!(dst, v),
                            None => set!(dst, Value::UNDEFINED),
                        }
                    }

                    Instr::GetSuperIndex { dst, key } => {
                        let home = Self::current_home(task);
                        let parent = ops::class_data(home).map(|c| c.parent).unwrap_or(Value::UNDEFINED);
                        let key = ops::to_key(reg!(key));
                        let found = ops::lookup_proto(parent, key).or_else(|| ops::lookup_static(parent, key));
                        let this = reg!(0);
                        match found.map(|v| (v, v.as_obj().map(|o| &o.body))) {
                            Some((_, Some(Body::Accessor(a)))) => {
                                let g = a.lock().get;
                                save_pc!();
                                invoked!(self.call_above(task, g, this, &[], base + dst as usize, 0));
                            }
                            Some((v, _)) => set!(dst, v),
                            None => set!(dst, Value::UNDEFINED),
                        }
                    }
                    Instr::HasPrivate { dst, obj, name } => {
                        let r = tri!(ops::has_private(reg!(obj), atom!(name)));
                        set!(dst, Value::bool(r))
                    }

                    Instr::Call { f, argc, callee, this } => {
                        safepoint!(1);
                        // SAFETY: the running frame is on top (see `closure!`).
                        unsafe { task.frames.last_mut().unwrap_unchecked() }.pc = pc!() as u32;
                        let fa = base + f as usize;
                        // The window as the calling convention has it. The
                        // sources are below `f` or the window itself, so a
                        // call re-run after preemption copies the same.
                        let callee = reg!(callee);
                        let this = if this == NO_THIS { Value::UNDEFINED } else { reg!(this) };
                        set!(f, callee);
                        set!(f + 1, this);
                        // Fast path: a plain closure call.
                        if let Some(c) = closure_of(callee) {
                            if c.proto.call.plain {
                                tri!(self.push_frame(task, callee, c, fa + 1, argc as usize, fa, 0));
                                enter_pushed!(c, fa + 1);
                                continue;
                            }
                        }
                        invoked!(self.invoke(task, callee, fa, argc as usize, fa, 0));
                    }
                    Instr::CallMethod { f, name, argc, recv } => {
                        let fa = base + f as usize;
                        let recv = reg!(recv);
                        let key = atom!(name);
                        // Fast path: a native method of a built-in receiver
                        // (a mutex, a channel, an array...), found through
                        // this site's inline cache and called in place. It
                        // is no safepoint: a native runs no script code of
                        // its own, so loops and calls of closures still
                        // bound the time between safepoints.
                        // Or a native held as an own property of an object
                        // (`Math.sqrt(x)`, `JSON.stringify(v)`) or as a
                        // class's own static (`String.fromCharCode(c)`).
                        use super::realm::Methods;
                        let native = match recv.as_obj().map(|o| &o.body) {
                            Some(Body::Object(d)) => Methods::own_native_method(d, |d| &d.props, key, ic64!()),
                            Some(Body::Class(c)) => Methods::own_static_native(c, key, ic64!()),
                            Some(body) => self.rt.realm.methods.native_method(body, key, ic64!()),
                            None => None,
                        };
                        if let Some(n) = native {
                            // SAFETY: the arguments are registers of this
                            // frame (see `rp`); a native cannot touch the
                            // registers.
                            debug_assert!(fa + 2 + argc as usize <= task.regs.len());
                            let args = unsafe { std::slice::from_raw_parts(rp.add(f as usize + 2), argc as usize) };
                            // Instead of the frame's pc, which is stored
                            // only if the native does not simply return.
                            task.native_ip.set(ip as usize);
                            // The stall watchdog may read the frames
                            // during the call (`trace::stall`).
                            if let Some(p) = &self.rt.stall {
                                p.enter_native(task);
                            }
                            let mut ctx = NativeCtx { rt: self.rt, task };
                            let result = n(&mut ctx, recv, args);
                            if let Some(p) = &self.rt.stall {
                                p.leave_native();
                            }
                            task.native_ip.set(0);
                            match result {
                                Ok(v) if self.rt.suspend.is_none() => {
                                    set!(f, v);
                                    if self.rt.exit_code.is_none() {
                                        continue;
                                    }
                                }
                                // Suspended: the result is delivered to
                                // R[f] on resumption.
                                Ok(_) => task.resume_dst = fa as u32,
                                Err(e) => fault!(Fault::Thrown(e)),
                            }
                            save_pc!();
                            invoked!(Ok::<_, Fault>(Invoked::Done));
                            continue;
                        }
                        set!(f + 1, recv);
                        safepoint!(1);
                        save_pc!();
                        // A class instance: this site's method cache
                        // (`MethodEntry`), keyed on the receiver's shape.
                        // Plain objects (namespaces such as `Math`,
                        // literals with methods) find methods as own
                        // properties: not cached, and not looked at twice.
                        let instance = match recv.as_obj().map(|o| &o.body) {
                            Some(Body::Object(d)) if !key.is_private() => rtp.method_entry(ic64!()).and_then(|e| {
                                let g = d.lock();
                                let (shape, class) = (g.props.shape_id(), g.class);
                                (shape != 0 && !class.is_undefined()).then_some((d, e, shape, class))
                            }),
                            _ => None,
                        };
                        let hit = instance.and_then(|(_, e, shape, class)| e.get(shape, class));
                        let m = match hit {
                            Some(m) => m,
                            None => {
                                let epoch = super::shape::method_epoch();
                                let m = match tri!(ops::get_prop(&self.rt.realm, &mut self.rt.heap, recv, key)) {
                                    Got::Value(v) => v,
                                    Got::Getter(g) => {
                                        // `o.m(args)` where `m` is an accessor:
                                        // the prelude runs the getter and calls
                                        // what it returns, into this call's
                                        // result register.
                                        let message =
                                            format!("{}.{} is not a function", receiver_name(recv), key.as_str());
                                        let message = self.rt.heap.alloc_str(message);
                                        let args = self
                                            .rt
                                            .heap
                                            .alloc_array(task.regs[fa + 2..fa + 2 + argc as usize].to_vec());
                                        invoked!(self.call_prelude(
                                            task,
                                            "__callGetter",
                                            &[g, recv, message, args],
                                            fa,
                                            0
                                        ));
                                        continue;
                                    }
                                };
                                if !ops::is_callable(m) {
                                    fault!(Fault::Type(format!(
                                        "{}.{} is not a function{}",
                                        receiver_name(recv),
                                        key.as_str(),
                                        missing_method_hint(recv, key)
                                    )));
                                }
                                if let Some((d, e, _, _)) = instance {
                                    // Cached only when found on the class
                                    // chain, not as an own property.
                                    let d = d.lock();
                                    if d.props.find(key).is_none() && ops::lookup_proto(d.class, key) == Some(m) {
                                        e.put(epoch, d.props.shape_id(), d.class, m);
                                    }
                                }
                                m
                            }
                        };
                        set!(f, m);
                        // A method that is a plain closure: its frame at
                        // once, as `Call` does.
                        if let Some(c) = closure_of(m) {
                            if c.proto.call.plain {
                                tri!(self.push_frame(task, m, c, fa + 1, argc as usize, fa, 0));
                                enter_pushed!(c, fa + 1);
                                continue;
                            }
                        }
                        invoked!(self.invoke(task, m, fa, argc as usize, fa, 0));
                    }
                    Instr::CallSpread { f } => {
                        safepoint!(1);
                        save_pc!();
                        let fa = base + f as usize;
                        let argc = tri!(self.spread_args(task, fa));
                        // Spreading may have grown (moved) the registers.
                        refresh!();
                        let callee = reg!(f);
                        invoked!(self.invoke(task, callee, fa, argc, fa, 0));
                    }
                    Instr::New { f, argc } => {
                        safepoint!(1);
                        save_pc!();
                        let fa = base + f as usize;
                        let callee = reg!(f);
                        if argc >= 1
                            && (callee == self.rt.realm.classes.map || callee == self.rt.realm.classes.set)
                            && is_script_iterable(&self.rt.realm, &mut self.rt.heap, reg!(f + 2))
                        {
                            // `new Map(gen())`: the prelude collects the
                            // iterable into the argument's register (a
                            // temporary of the call), then `New` runs again.
                            ip = unsafe { ip.sub(1) };
                            save_pc!();
                            let args = [reg!(f + 2), Value::number(0.0), Value::number(f64::INFINITY)];
                            invoked!(self.call_prelude(task, "__iterRest", &args, fa + 2, 0));
                            continue;
                        }
                        invoked!(self.construct(task, callee, fa, argc as usize));
                    }
                    Instr::NewSpread { f } => {
                        safepoint!(1);
                        save_pc!();
                        let fa = base + f as usize;
                        let argc = tri!(self.spread_args(task, fa));
                        // Spreading may have grown (moved) the registers.
                        refresh!();
                        let callee = reg!(f);
                        invoked!(self.construct(task, callee, fa, argc));
                    }
                    Instr::SuperCall { f, argc } => {
                        safepoint!(1);
                        save_pc!();
                        let fa = base + f as usize;
                        invoked!(self.super_call(task, fa, argc as usize));
                    }
                    Instr::SuperCallSpread { f } => {
                        safepoint!(1);
                        save_pc!();
                        let fa = base + f as usize;
                        let argc = tri!(self.spread_args(task, fa));
                        invoked!(self.super_call(task, fa, argc));
                    }
                    Instr::Return { src } => {
                        let v = reg!(src);
                        // Plain calls only: a constructor's explicit
                        // `return` is rare and goes the long way.
                        fast_return!(0, |_fl| v);
                        *budget = left;
                        if let Some(done) = self.do_return(task, v)? {
                            return Ok(done);
                        }
                        continue 'frame;
                    }
                    Instr::ReturnUndef => {
                        // Plain calls, and constructors (whose implicit
                        // return this is), giving `this`.
                        fast_return!(flags::CONSTRUCT, |fl| if fl == 0 { Value::UNDEFINED } else { reg!(0) });
                        *budget = left;
                        if let Some(done) = self.do_return(task, Value::UNDEFINED)? {
                            return Ok(done);
                        }
                        continue 'frame;
                    }

                    Instr::NewRegExp { dst, k } => {
                        let v = tri!(crate::builtins::regexp::literal(self.rt, task, konst!(k), ic!()));
                        set!(dst, v)
                    }
                    Instr::NewArray { dst, cap } => {
                        tri!(self.rt.heap.check_alloc(cap as usize * 8 + 64));
                        let a = self.rt.heap.alloc_array(Vec::with_capacity(cap as usize));
                        set!(dst, a)
                    }
                    Instr::ArrayPush { arr, src } => {
                        // The guard is dropped before a fault is raised.
                        let r = match ops::array_data(reg!(arr)) {
                            Some(mut a) => ops::array_reserve(&mut a, 1).map(|_| a.push(reg!(src))),
                            None => Ok(()),
                        };
                        tri!(r);
                    }
                    Instr::ArraySpread { arr, src } => {
                        if !ops::is_array(reg!(src)) && is_script_iterable(&self.rt.realm, &mut self.rt.heap, reg!(src))
                        {
                            // The prelude iterates it (`for-of`) and pushes.
                            save_pc!();
                            let args = [reg!(arr), reg!(src)];
                            invoked!(self.call_prelude(task, "__spreadInto", &args, 0, flags::DISCARD));
                            continue;
                        }
                        // Not run again after a collection: the iteration
                        // may have had effects.
                        let items = match self.collect_iterable(reg!(src)) {
                            Ok(items) => items,
                            Err(f) => {
                                heap::no_limit_retry();
                                fault!(f)
                            }
                        };
                        let r = match ops::array_data(reg!(arr)) {
                            Some(mut a) => ops::array_reserve(&mut a, items.len()).map(|_| a.extend(items)),
                            None => Ok(()),
                        };
                        if r.is_err() {
                            heap::no_limit_retry();
                        }
                        tri!(r);
                    }
                    Instr::ArrayHole { arr } => {
                        // The guard is dropped before a fault is raised.
                        let r = match ops::array_data(reg!(arr)) {
                            Some(mut a) => ops::array_reserve(&mut a, 1).map(|_| a.push(Value::UNDEFINED)),
                            None => Ok(()),
                        };
                        tri!(r);
                    }
                    Instr::NewObject { dst } => {
                        tri!(self.rt.heap.check_alloc(64));
                        let o = self.new_instance(Value::UNDEFINED);
                        set!(dst, o)
                    }
                    Instr::DefineProp { obj, name, src } => {
                        if let Some(mut d) = ops::object_data(reg!(obj)) {
                            tri!(definable(&d, atom!(name)));
                            d.props.set(atom!(name), reg!(src));
                        } else if let Some(mut c) = ops::class_data(reg!(obj)) {
                            // A static private field.
                            c.statics.set(atom!(name), reg!(src));
                        }
                    }
                    Instr::DefineIndex { obj, key, src } => {
                        let k = ops::to_key(reg!(key));
                        if let Some(mut d) = ops::object_data(reg!(obj)) {
                            tri!(definable(&d, k));
                            d.props.set(k, reg!(src));
                        }
                    }
                    Instr::ObjectSpread { obj, src } => {
                        let target = reg!(obj);
                        let from = reg!(src);
                        if let Some(keys) = self.copy_own_entries(target, from, &[]) {
                            save_pc!();
                            invoked!(self.call_prelude(
                                task,
                                "__copyGetters",
                                &[target, from, keys],
                                0,
                                flags::DISCARD
                            ));
                        }
                    }
                    Instr::DefineAccessor { obj, name, func, kind } => {
                        let key = atom!(name);
                        let f = reg!(func);
                        if let Some(mut d) = ops::object_data(reg!(obj)) {
                            self.define_in(&mut d.props, key, f, kind);
                        }
                    }
                    Instr::DefineAccessorComputed { obj, key, func, kind } => {
                        let key = ops::to_key(reg!(key));
                        let f = reg!(func);
                        if let Some(mut d) = ops::object_data(reg!(obj)) {
                            self.define_in(&mut d.props, key, f, kind);
                        }
                    }
                    Instr::ObjectRest { dst, src, excluded } => {
                        let from = reg!(src);
                        if from.is_nullish() {
                            fault!(Fault::Type(format!(
                                "Cannot destructure '{}' as it is {}.",
                                ops::to_display(from),
                                ops::to_display(from)
                            )));
                        }
                        let ex: Vec<Atom> = ops::array_data(reg!(excluded))
                            .map(|a| a.iter().map(|&k| ops::to_key(k)).collect())
                            .unwrap_or_default();
                        let o = self.new_instance(Value::UNDEFINED);
                        let getters = self.copy_own_entries(o, from, &ex);
                        set!(dst, o);
                        if let Some(keys) = getters {
                            save_pc!();
                            invoked!(self.call_prelude(task, "__copyGetters", &[o, from, keys], 0, flags::DISCARD));
                        }
                    }
                    Instr::ArrayRest { dst, src, start, take } => {
                        let take_n = if take == u16::MAX { f64::INFINITY } else { take as f64 };
                        if !ops::is_array(reg!(src)) && is_script_iterable(&self.rt.realm, &mut self.rt.heap, reg!(src))
                        {
                            // The prelude takes what the pattern needs and
                            // closes the iterator, as destructuring does.
                            save_pc!();
                            let args = [reg!(src), Value::number(start as f64), Value::number(take_n)];
                            invoked!(self.call_prelude(task, "__iterRest", &args, base + dst as usize, 0));
                            continue;
                        }
                        let mut items = tri!(self.collect_iterable(reg!(src)));
                        items.truncate(take as usize);
                        let rest = items.get(start as usize..).map(|s| s.to_vec()).unwrap_or_default();
                        let a = self.rt.heap.alloc_array(rest);
                        set!(dst, a)
                    }

                    Instr::NewClass { dst, name, parent, ctor } => {
                        let parent_v = if parent == u16::MAX { Value::UNDEFINED } else { reg!(parent) };
                        if !parent_v.is_undefined() && ops::class_data(parent_v).is_none() {
                            fault!(Fault::Type(format!(
                                "Class extends value {} is not a constructor or null",
                                ops::to_display(parent_v)
                            )));
                        }
                        let ctor_v = reg!(ctor);
                        let class = self.rt.heap.alloc(Body::Class(Box::new(Mut::new(ClassData {
                            name: atom!(name),
                            parent: parent_v,
                            ctor: ctor_v,
                            field_init: Value::UNDEFINED,
                            field_template: None,
                            ctor_plan: None,
                            proto_props: PropMap::new(),
                            statics: PropMap::new(),
                            kind: BuiltinKind::Ordinary,
                            call: Value::UNDEFINED,
                        }))));
                        set_home(ctor_v, class);
                        set!(dst, class)
                    }
                    Instr::DefineMethod { class, name, func, kind, is_static } => {
                        let c = reg!(class);
                        let fv = reg!(func);
                        set_home(fv, c);
                        let mut cd = tri!(Self::the_class(c));
                        let table = if is_static { &mut cd.statics } else { &mut cd.proto_props };
                        self.define_in(table, atom!(name), fv, kind);
                        super::shape::methods_changed();
                    }
                    Instr::DefineMethodComputed { class, key, func, kind, is_static } => {
                        let c = reg!(class);
                        let fv = reg!(func);
                        let k = ops::to_key(reg!(key));
                        let mut cd = tri!(Self::the_class(c));
                        set_home(fv, c);
                        let table = if is_static { &mut cd.statics } else { &mut cd.proto_props };
                        self.define_in(table, k, fv, kind);
                        super::shape::methods_changed();
                    }
                    Instr::SetHome { func, class } => set_home(reg!(func), reg!(class)),
                    Instr::InitFields => {
                        let home = Self::current_home(task);
                        let this = reg!(0);
                        save_pc!();
                        invoked!(self.init_fields_of(task, home, this));
                    }
                    Instr::SetFieldInit { class, func } => {
                        let c = reg!(class);
                        let fv = reg!(func);
                        set_home(fv, c);
                        let template = closure_of(fv).and_then(|f| Self::field_template_of(&f.proto));
                        let mut cd = tri!(Self::the_class(c));
                        cd.ctor_plan = match (&template, closure_of(cd.ctor)) {
                            (Some(t), Some(ctor)) if cd.parent.is_undefined() && cd.kind == BuiltinKind::Ordinary => {
                                Self::ctor_plan_of(&ctor.proto, t)
                            }
                            _ => None,
                        };
                        cd.field_init = fv;
                        cd.field_template = template;
                    }

                    Instr::GetIter { dst, src } => {
                        let it = tri!(self.make_iter(reg!(src)));
                        set!(dst, it)
                    }
                    Instr::IterNext { dst, iter, off } => {
                        let itv = reg!(iter);
                        if let Some(Body::Iter(st)) = itv.as_obj().map(|o| &o.body) {
                            // One look at the state: an array's next element
                            // is taken here; anything else goes to its own
                            // case below.
                            let kind = match &mut *st.lock() {
                                IterState::Array { arr, next } => match ops::array_data(*arr) {
                                    Some(a) => {
                                        match a.get(*next) {
                                            Some(&v) => {
                                                *next += 1;
                                                set!(dst, v);
                                            }
                                            None => jump!(off),
                                        }
                                        continue;
                                    }
                                    None => 0, // a Uint8Array
                                },
                                IterState::Channel { .. } => 1,
                                IterState::Host { .. } => 2,
                                IterState::GenLoop { .. } => 3,
                                IterState::User { .. } => 4,
                                _ => 0,
                            };
                            if kind == 0 {
                                match self.iter_next(itv) {
                                    Some(v) => set!(dst, v),
                                    None => jump!(off),
                                }
                                continue;
                            }
                            if let IterState::Channel { ch, waiting } = &mut *st.lock() {
                                // `for (const v of ch)`: receive until the
                                // channel is closed and drained. When it
                                // must wait, this instruction suspends with
                                // `waiting` set and is re-run after the
                                // receiver's value (null = closed) was
                                // delivered into `dst`.
                                let Some(Body::Channel(c)) = ch.as_obj().map(|o| &o.body) else {
                                    fault!(Fault::Type("internal: not a channel".into()));
                                };
                                let got = if *waiting {
                                    *waiting = false;
                                    Some(reg!(dst))
                                } else {
                                    match c.try_recv(&mut self.rt.woken) {
                                        crate::sync::channel::Recv::Got(v) => Some(v),
                                        crate::sync::channel::Recv::Empty => None,
                                    }
                                };
                                match got {
                                    Some(v) if v.is_nullish() => jump!(off),
                                    Some(v) => set!(dst, v),
                                    None => {
                                        *waiting = true;
                                        task.resume_dst = (base + dst as usize) as u32;
                                        ip = unsafe { ip.sub(1) };
                                        save_pc!();
                                        *budget = left;
                                        let w = crate::sync::channel::RecvWait(c.clone());
                                        return Ok(RunOutcome::Suspended(Wait::Object(Box::new(w))));
                                    }
                                }
                                continue;
                            }
                            let host = match &*st.lock() {
                                IterState::Host { obj } => Some(*obj),
                                _ => None,
                            };
                            if let Some(obj) = host {
                                // `for (const x of hostObj)`: call the
                                // class's `next` until it returns null. A
                                // suspended `next` re-runs this whole
                                // instruction when woken (its waits re-run
                                // the call, see `HostClass::next`).
                                let Some(Body::Host(h)) = obj.as_obj().map(|o| &o.body) else {
                                    fault!(Fault::Type("internal: not a host object".into()));
                                };
                                let Some(next) = h.desc.next else {
                                    fault!(Fault::Type("internal: not iterable".into()));
                                };
                                task.native_ip.set(ip as usize);
                                if let Some(p) = &self.rt.stall {
                                    p.enter_native(task);
                                }
                                let mut ctx = NativeCtx { rt: self.rt, task };
                                let result = next(&mut ctx, obj, &[]);
                                if let Some(p) = &self.rt.stall {
                                    p.leave_native();
                                }
                                task.native_ip.set(0);
                                match result {
                                    Err(e) => fault!(Fault::Thrown(e)),
                                    Ok(_) if self.rt.suspend.is_some() => {
                                        let w = self.rt.suspend.take().expect("checked");
                                        debug_assert!(
                                            w.reruns_call(),
                                            "a host iterator waits only with re-running waits"
                                        );
                                        task.resume_dst = (base + dst as usize) as u32;
                                        ip = unsafe { ip.sub(1) };
                                        save_pc!();
                                        *budget = left;
                                        return Ok(RunOutcome::Suspended(w));
                                    }
                                    Ok(v) if v.is_nullish() => jump!(off),
                                    Ok(v) => set!(dst, v),
                                }
                                continue;
                            }
                            // A generator: resume it; what it yields arrives
                            // raw in `dst`, and this instruction runs again
                            // (`pending`) to take it.
                            let genloop = match &mut *st.lock() {
                                IterState::GenLoop { gen, pending, send } => {
                                    let was = std::mem::replace(pending, false);
                                    Some((*gen, was, std::mem::replace(send, Value::UNDEFINED)))
                                }
                                _ => None,
                            };
                            if let Some((gen, was_pending, send)) = genloop {
                                if was_pending {
                                    // `dst` holds the yielded value, or
                                    // what the generator returned.
                                    if gen_run(gen) == Some(GenRun::Done) {
                                        jump!(off);
                                    }
                                    continue;
                                }
                                ip = unsafe { ip.sub(1) };
                                save_pc!();
                                let r = GenResume { gen, mode: GenMode::Next, value: send };
                                match self.gen_resume(task, r, base + dst as usize, flags::GEN_RAW) {
                                    Ok(res) => {
                                        if let IterState::GenLoop { pending, .. } = &mut *st.lock() {
                                            *pending = true;
                                        }
                                        invoked!(Ok::<_, Fault>(res));
                                        continue;
                                    }
                                    Err(f) => {
                                        ip = unsafe { ip.add(1) };
                                        fault!(f)
                                    }
                                }
                            }
                            // Any other iterable: the iterator protocol, one
                            // step per run of this instruction (see
                            // `IterState::User`).
                            let user = match &*st.lock() {
                                IterState::User { src, iter, next, phase, send } => {
                                    Some((*src, *iter, *next, *phase, *send))
                                }
                                _ => None,
                            };
                            if let Some((src, it, next, phase, send)) = user {
                                let set_phase = |p: u8, i: Value, n: Value| {
                                    if let IterState::User { phase, iter, next, send, .. } = &mut *st.lock() {
                                        *phase = p;
                                        *iter = i;
                                        *next = n;
                                        if p == USER_PENDING {
                                            *send = Value::UNDEFINED;
                                        }
                                    }
                                };
                                match phase {
                                    USER_START | USER_GOT_METHOD => {
                                        let m = if phase == USER_GOT_METHOD {
                                            reg!(dst)
                                        } else {
                                            match tri!(ops::get_prop(
                                                &self.rt.realm,
                                                &mut self.rt.heap,
                                                src,
                                                names::ITERATOR
                                            )) {
                                                Got::Value(m) => m,
                                                Got::Getter(g) => {
                                                    // `get [Symbol.iterator]()`: its
                                                    // result is the method.
                                                    set_phase(USER_GOT_METHOD, it, next);
                                                    ip = unsafe { ip.sub(1) };
                                                    save_pc!();
                                                    invoked!(self.call_above(
                                                        task,
                                                        g,
                                                        src,
                                                        &[],
                                                        base + dst as usize,
                                                        0
                                                    ));
                                                    continue;
                                                }
                                            }
                                        };
                                        set_phase(USER_GOT_ITER, it, next);
                                        ip = unsafe { ip.sub(1) };
                                        save_pc!();
                                        invoked!(self.call_above(task, m, src, &[], base + dst as usize, 0));
                                    }
                                    USER_GOT_ITER => {
                                        let it = reg!(dst);
                                        if !is_object_like(it) || ops::is_string(it) {
                                            set_phase(USER_DONE, it, next);
                                            fault!(Fault::Type(
                                                "Result of the Symbol.iterator method is not an object".into()
                                            ));
                                        }
                                        let n = match tri!(ops::get_prop(
                                            &self.rt.realm,
                                            &mut self.rt.heap,
                                            it,
                                            names::NEXT
                                        )) {
                                            Got::Value(n) => n,
                                            Got::Getter(g) => {
                                                // `get next()`: its result is the
                                                // `next` method, read once.
                                                set_phase(USER_GOT_NEXT, it, next);
                                                ip = unsafe { ip.sub(1) };
                                                save_pc!();
                                                invoked!(self.call_above(task, g, it, &[], base + dst as usize, 0));
                                                continue;
                                            }
                                        };
                                        set_phase(USER_READY, it, n);
                                        ip = unsafe { ip.sub(1) };
                                    }
                                    USER_GOT_NEXT => {
                                        set_phase(USER_READY, it, reg!(dst));
                                        ip = unsafe { ip.sub(1) };
                                    }
                                    USER_READY => {
                                        if !ops::is_callable(next) {
                                            set_phase(USER_DONE, it, next);
                                            fault!(Fault::Type(format!("{} is not a function", ops::to_display(next))));
                                        }
                                        set_phase(USER_PENDING, it, next);
                                        ip = unsafe { ip.sub(1) };
                                        save_pc!();
                                        let args: &[Value] = if send.is_undefined() { &[] } else { &[send] };
                                        invoked!(self.call_above(task, next, it, args, base + dst as usize, 0));
                                    }
                                    USER_PENDING => {
                                        let r = reg!(dst);
                                        if !is_object_like(r) || ops::is_string(r) {
                                            set_phase(USER_DONE, it, next);
                                            fault!(Fault::Type(format!(
                                                "Iterator result {} is not an object",
                                                ops::to_display(r)
                                            )));
                                        }
                                        let get =
                                            |rt: &mut Runtime, k| match ops::get_prop(&rt.realm, &mut rt.heap, r, k) {
                                                Ok(Got::Value(v)) => v,
                                                _ => Value::UNDEFINED,
                                            };
                                        let done = get(self.rt, names::DONE).truthy();
                                        let value = get(self.rt, names::VALUE);
                                        set!(dst, value);
                                        if done {
                                            set_phase(USER_DONE, it, next);
                                            jump!(off);
                                        } else {
                                            set_phase(USER_READY, it, next);
                                        }
                                    }
                                    _ => {
                                        set!(dst, Value::UNDEFINED);
                                        jump!(off);
                                    }
                                }
                                continue;
                            }
                        }
                        match self.iter_next(itv) {
                            Some(v) => set!(dst, v),
                            None => jump!(off),
                        }
                    }
                    Instr::IterClose { iter } => {
                        let itv = reg!(iter);
                        let Some(Body::Iter(st)) = itv.as_obj().map(|o| &o.body) else { continue };
                        let action = match &mut *st.lock() {
                            IterState::GenLoop { gen, .. } => Some((true, *gen)),
                            IterState::User { iter, phase, .. } if *phase == USER_READY => {
                                *phase = USER_DONE;
                                Some((false, *iter))
                            }
                            _ => None,
                        };
                        match action {
                            Some((true, gen)) => match gen_run(gen) {
                                Some(GenRun::Yielded) => {
                                    save_pc!();
                                    let r = GenResume { gen, mode: GenMode::Return, value: Value::UNDEFINED };
                                    invoked!(self.gen_resume(task, r, 0, flags::DISCARD));
                                }
                                Some(GenRun::Start) => finish_gen(gen),
                                _ => {}
                            },
                            Some((false, it)) => {
                                let m = match tri!(ops::get_prop(&self.rt.realm, &mut self.rt.heap, it, names::RETURN))
                                {
                                    Got::Value(m) => m,
                                    Got::Getter(g) => {
                                        // `get return()`: call what it gives,
                                        // if anything.
                                        save_pc!();
                                        let args = self.rt.heap.alloc_array(Vec::new());
                                        let call = [g, it, Value::UNDEFINED, args];
                                        invoked!(self.call_prelude(task, "__callGetter", &call, 0, flags::DISCARD));
                                        continue;
                                    }
                                };
                                if ops::is_callable(m) {
                                    save_pc!();
                                    invoked!(self.call_above(task, m, it, &[], 0, flags::DISCARD));
                                }
                            }
                            None => {}
                        }
                    }
                    Instr::IterThrow { iter, exc, dst, off } => {
                        // (One object locked at a time: the loop's state, then
                        // the generator.)
                        let st = match reg!(iter).as_obj().map(|o| &o.body) {
                            Some(Body::Iter(st)) => Some(st),
                            _ => None,
                        };
                        let gen = st.and_then(|st| match &*st.lock() {
                            IterState::GenLoop { gen, .. } => Some(*gen),
                            _ => None,
                        });
                        let (Some(st), Some(gen)) = (st, gen.filter(|&g| gen_run(g) == Some(GenRun::Yielded))) else {
                            ip = unsafe { ip.add(1) };
                            continue;
                        };
                        if let IterState::GenLoop { pending, .. } = &mut *st.lock() {
                            *pending = true;
                        }
                        task.handlers.push(Handler {
                            depth: task.frames.len() as u32,
                            pc: (pc!() as i64 + off as i64) as u32,
                            exc: (base + exc as usize) as u32,
                        });
                        save_pc!();
                        let r = GenResume { gen, mode: GenMode::Throw, value: reg!(exc) };
                        invoked!(self.gen_resume(task, r, base + dst as usize, flags::GEN_RAW));
                    }
                    Instr::IterSend { iter, src } => {
                        if let Some(Body::Iter(st)) = reg!(iter).as_obj().map(|o| &o.body) {
                            if let IterState::GenLoop { send, .. } | IterState::User { send, .. } = &mut *st.lock() {
                                *send = reg!(src);
                            }
                        }
                    }
                    Instr::GenStart => {
                        save_pc!();
                        *budget = left;
                        if let Some(done) = self.gen_start(task) {
                            return Ok(done);
                        }
                        continue 'frame;
                    }
                    Instr::AsyncGenStart => {
                        save_pc!();
                        invoked!(self.async_gen_start(task));
                    }
                    Instr::ForAwait { dst, src, what } => {
                        save_pc!();
                        let args = [reg!(src), reg!(what)];
                        invoked!(self.call_prelude(task, "__forAwait", &args, base + dst as usize, 0));
                    }
                    Instr::Yield { src, .. } => {
                        let v = reg!(src);
                        save_pc!();
                        tri!(self.gen_yield(task, v));
                        continue 'frame;
                    }
                    Instr::ForInKeys { dst, src } => {
                        let keys = ops::own_keys(reg!(src));
                        let vals: Vec<Value> = keys.iter().map(|&k| ops::key_value(&mut self.rt.heap, k)).collect();
                        let a = self.rt.heap.alloc_array(vals);
                        set!(dst, a)
                    }

                    Instr::TryBegin { exc, off } => task.handlers.push(Handler {
                        depth: task.frames.len() as u32,
                        pc: (pc!() as i64 + off as i64) as u32,
                        exc: (base + exc as usize) as u32,
                    }),
                    Instr::TryEnd => {
                        task.handlers.pop();
                    }
                    Instr::Throw { src } => {
                        let v = reg!(src);
                        fault!(Fault::Thrown(v));
                    }

                    Instr::Await { dst, src } => {
                        let v = reg!(src);
                        let mut wait = None;
                        match tri!(self.try_await(task, v, &mut wait)) {
                            Some(x) => set!(dst, x),
                            None => {
                                // Re-run this `await` when woken: it then
                                // finds its operand settled.
                                ip = unsafe { ip.sub(1) };
                                save_pc!();
                                *budget = left;
                                return Ok(RunOutcome::Suspended(wait.expect("wait")));
                            }
                        }
                    }
                    Instr::Spawn { f, argc } => {
                        save_pc!();
                        let fa = base + f as usize;
                        let callee = reg!(f);
                        tri!(self.spawn_from_regs(task, callee, fa, argc as usize, fa));
                        refresh!();
                    }
                    Instr::SpawnSpread { f } => {
                        save_pc!();
                        let fa = base + f as usize;
                        let argc = tri!(self.spread_args(task, fa));
                        // Spreading may have grown (moved) the registers.
                        refresh!();
                        let callee = reg!(f);
                        tri!(self.spawn_from_regs(task, callee, fa, argc, fa));
                        refresh!();
                    }
                    Instr::Select { base: sb, desc } => {
                        save_pc!();
                        let d = &rtp.proto.selects[desc as usize];
                        match tri!(self.select(task, base + sb as usize, d)) {
                            Selected::Case(target, v) => {
                                if let Some(v) = v {
                                    set!(d.value_reg, v);
                                }
                                jump!(target);
                            }
                            Selected::Wait(w) => {
                                *budget = left;
                                return Ok(RunOutcome::Suspended(w));
                            }
                        }
                    }
                }
            }
        }
    }

    /// `select` on entry (its operands are in `regs[sb..]`): runs a ready
    /// case (chosen uniformly among the ready ones), else `default`, else
    /// returns the wait that registers the task on every case.
    fn select(&mut self, task: &Task, sb: usize, d: &SelectDesc) -> Result<Selected, Fault> {
        use crate::sync::channel::{Recv, Sent};
        use crate::sync::select::{shuffle, CaseOp, SelectWait};
        let now = crate::scheduler::now();
        let mut default = None;
        let mut cases: Vec<(u32, CaseOp, i32)> = Vec::with_capacity(d.cases.len());
        let channel = |v: Value| -> Result<Option<Arc<crate::sync::channel::ChannelCell>>, Fault> {
            match v.as_obj().map(|o| &o.body) {
                _ if v.is_nullish() => Ok(None), // never ready (Go's nil channel)
                Some(Body::Channel(c)) => Ok(Some(c.clone())),
                _ => Err(Fault::Type(format!("select case expects a Channel, got {}", describe_type(v)))),
            }
        };
        for (i, c) in d.cases.iter().enumerate() {
            let i = i as u32;
            match *c {
                SelectCaseDesc::Receive { operand, target } => {
                    if let Some(ch) = channel(task.regs[sb + operand as usize])? {
                        cases.push((i, CaseOp::Recv(ch), target));
                    }
                }
                SelectCaseDesc::Send { operand, target } => {
                    if let Some(ch) = channel(task.regs[sb + operand as usize])? {
                        let v = task.regs[sb + operand as usize + 1];
                        crate::builtins::channels::check_send(&ch, v).map_err(Fault::Type)?;
                        cases.push((i, CaseOp::Send(ch, v), target));
                    }
                }
                SelectCaseDesc::Timeout { operand, target } => {
                    let v = task.regs[sb + operand as usize];
                    if !v.is_number() {
                        return Err(Fault::Type(format!("sleep expects a number, got {}", describe_type(v))));
                    }
                    let ms = v.as_number();
                    let ms = if ms.is_nan() || ms < 0.0 { 0.0 } else { ms.min(1e12) };
                    let at = now + std::time::Duration::from_secs_f64(ms / 1000.0);
                    cases.push((i, CaseOp::Timeout(at), target));
                }
                SelectCaseDesc::Default { target } => default = Some(target),
            }
        }
        // Trying the cases in a random order picks the first ready one
        // uniformly among the ready ones.
        let mut order: Vec<usize> = (0..cases.len()).collect();
        shuffle(&mut order);
        for k in order {
            let (_, op, target) = &cases[k];
            match op {
                CaseOp::Recv(ch) => {
                    if let Recv::Got(v) = ch.try_recv(&mut self.rt.woken) {
                        return Ok(Selected::Case(*target, Some(v)));
                    }
                }
                CaseOp::Send(ch, v) => match ch.try_send(*v, &mut self.rt.woken) {
                    Sent::Sent => return Ok(Selected::Case(*target, None)),
                    Sent::Closed => {
                        let c = self.rt.realm.classes.channel_closed_error;
                        return Err(Fault::Thrown(self.rt.make_error(task, c, "send on a closed channel")));
                    }
                    Sent::Full => {}
                },
                CaseOp::Timeout(at) => {
                    if *at <= now {
                        return Ok(Selected::Case(*target, None));
                    }
                }
            }
        }
        if let Some(t) = default {
            return Ok(Selected::Case(t, None));
        }
        if cases.is_empty() {
            return Ok(Selected::Wait(Wait::Forever));
        }
        let cases = cases.into_iter().map(|(i, op, _)| (i, op)).collect();
        Ok(Selected::Wait(Wait::Object(Box::new(SelectWait { cases }))))
    }

    /// Pops the current frame with result `v`. Returns Some(outcome) when
    /// the task's outermost frame returned.
    fn do_return(&mut self, task: &mut Task, v: Value) -> Result<Option<RunOutcome>, Fault> {
        let frame = task.frames.pop().expect("frame");
        let depth = task.frames.len() as u32;
        while task.handlers.last().is_some_and(|h| h.depth > depth) {
            task.handlers.pop();
        }
        if frame.flags & flags::GEN != 0 {
            finish_gen(frame.after);
            let result = if frame.flags & flags::GEN_RAW != 0 { v } else { self.iter_result(v, true) };
            if frame.flags & flags::DISCARD == 0 {
                task.regs[frame.ret as usize] = result;
            }
            return Ok(None);
        }
        let result = if frame.flags & (flags::CONSTRUCT | flags::EXECUTOR) == 0 {
            v
        } else if frame.flags & flags::EXECUTOR != 0 {
            frame.after
        } else if !is_object_like(v) {
            task.regs[frame.base as usize]
        } else {
            v
        };
        if frame.flags & flags::INIT_FIELDS_AFTER != 0 {
            let fi = Self::field_init_for(frame.after, task.regs[frame.base as usize]);
            if let Some(c) = closure_of(fi) {
                // Reuse the finished constructor's window: register 0
                // still holds `this`.
                self.push_frame(task, fi, c, frame.base as usize, 0, frame.ret as usize, flags::DISCARD)?;
                return Ok(None);
            }
        }
        let result = if frame.flags & (flags::CONCAT_AFTER_PREFIX | flags::CONCAT_BEFORE_SUFFIX) != 0 {
            let (first, second) = if frame.flags & flags::CONCAT_AFTER_PREFIX != 0 {
                (frame.after, result)
            } else {
                (result, frame.after)
            };
            let mut s = StrBuf::new();
            ops::write_display(first, &mut s, 0)?;
            ops::write_display(second, &mut s, 0)?;
            self.rt.heap.alloc_str(s.into_string())
        } else {
            result
        };
        if task.frames.is_empty() {
            // Kept in the result slot too: a task that finishes by returning
            // a pending task (flattening) re-reads it when it resumes.
            if let Some(slot) = task.regs.get_mut(frame.ret as usize) {
                *slot = result;
            }
            return Ok(Some(RunOutcome::Completed(result)));
        }
        if frame.flags & flags::DISCARD == 0 {
            task.regs[frame.ret as usize] = result;
        }
        Ok(None)
    }

    /// `super(args)`: runs the parent constructor on `this`, then the
    /// current class's field initialiser.
    fn super_call(&mut self, task: &mut Task, f: usize, argc: usize) -> Result<Invoked, Fault> {
        let home = Self::current_home(task);
        let this = task.regs[task.frames.last().map(|fr| fr.base as usize).unwrap_or(0)];
        task.regs[f] = Value::UNDEFINED;
        task.regs[f + 1] = this;
        let mut parent = ops::class_data(home).map(|c| c.parent).unwrap_or(Value::UNDEFINED);
        let mut ctor = Value::UNDEFINED;
        while let Some(pd) = ops::class_data(parent) {
            if !pd.ctor.is_undefined() {
                ctor = pd.ctor;
                break;
            }
            parent = pd.parent;
        }
        let has_fields = ops::class_data(home).is_some_and(|c| !c.field_init.is_undefined());
        match ctor.as_obj().map(|o| &o.body) {
            Some(Body::Function(Function::Closure(c))) => {
                let fl = flags::DISCARD | if has_fields { flags::INIT_FIELDS_AFTER } else { 0 };
                self.push_frame(task, ctor, c, f + 1, argc, f, fl)?;
                if let Some(fr) = task.frames.last_mut() {
                    fr.after = home;
                }
                Ok(Invoked::Pushed)
            }
            Some(Body::Function(Function::Native(n))) => {
                self.call_native(task, n.f, this, f + 2, argc)?;
                self.init_fields_of(task, home, this)
            }
            _ => {
                unsupported_base(home)?;
                self.init_fields_of(task, home, this)
            }
        }
    }

    /// Expands the spread array in `regs[f + 2]` into argument registers;
    /// returns the argument count.
    fn spread_args(&mut self, task: &mut Task, f: usize) -> Result<usize, Fault> {
        let items = self.collect_iterable(task.regs[f + 2])?;
        let need = f + 2 + items.len() + 1;
        if task.regs.len() < need {
            task.grow_regs(need);
        }
        let n = items.len();
        task.regs[f + 2..f + 2 + n].copy_from_slice(&items);
        Ok(n)
    }

    /// Own enumerable (key, value) pairs for spread and rest.
    /// Copies the own enumerable properties of `from` onto the plain
    /// object `target` (object spread and rest), leaving out `exclude`.
    /// A getter's value must be copied, not the accessor, and reading it
    /// runs Raya code: its key is placed now (so the order is JS's) and
    /// the keys are returned, as an array, for the prelude's
    /// `__copyGetters` to fill in.
    fn copy_own_entries(&mut self, target: Value, from: Value, exclude: &[Atom]) -> Option<Value> {
        let pairs = self.own_entries(from);
        let mut getters = Vec::new();
        if let Some(mut d) = ops::object_data(target) {
            for (k, v) in pairs {
                if exclude.contains(&k) {
                    continue;
                }
                if matches!(v.as_obj().map(|o| &o.body), Some(Body::Accessor(_))) {
                    d.props.set(k, Value::UNDEFINED);
                    getters.push(k);
                } else {
                    d.props.set(k, v);
                }
            }
        }
        if getters.is_empty() {
            return None;
        }
        let keys: Vec<Value> = getters.into_iter().map(|k| ops::key_value(&mut self.rt.heap, k)).collect();
        Some(self.rt.heap.alloc_array(keys))
    }

    fn own_entries(&mut self, v: Value) -> Vec<(Atom, Value)> {
        match v.as_obj().map(|o| &o.body) {
            Some(Body::Object(d)) => {
                let d = d.lock();
                d.props.ordered_keys().into_iter().map(|k| (k, d.props.get(k).unwrap_or_default())).collect()
            }
            Some(Body::Array(a)) => {
                let items = a.lock().clone();
                items.into_iter().enumerate().map(|(i, x)| (ops::number_key(i as f64), x)).collect()
            }
            Some(Body::Str(s)) => {
                // One entry per code unit, as `{...s}` has in JS.
                let units = s.units();
                units
                    .iter()
                    .enumerate()
                    .map(|(i, &u)| (ops::number_key(i as f64), self.rt.heap.alloc_units(&[u])))
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    /// String concatenation and its type errors.
    fn add_slow(&mut self, x: Value, y: Value) -> Result<Value, Fault> {
        let s = match (x.as_obj().and_then(|o| o.as_str()), y.as_obj().and_then(|o| o.as_str())) {
            (Some(a), Some(b)) => {
                // Both lengths are known: the limit is checked before
                // anything is allocated.
                strbuf::check_len(a.utf16_len as usize + b.utf16_len as usize)?;
                let appended = crate::vm::object::JsStr::append(a, b)?;
                return Ok(self.rt.heap.alloc_appended(appended));
            }
            (Some(_), None) | (None, Some(_)) if ops::symbol_atom(x).or(ops::symbol_atom(y)).is_some() => {
                return Err(symbol_to_string_fault());
            }
            (Some(a), None) => {
                let mut s = StrBuf::new();
                s.push_js(a)?;
                ops::write_display(y, &mut s, 0)?;
                s
            }
            (None, Some(b)) => {
                let mut s = StrBuf::new();
                ops::write_display(x, &mut s, 0)?;
                s.push_js(b)?;
                s
            }
            (None, None) => return Err(operand_fault("+", x, y)),
        };
        Ok(self.rt.heap.alloc_buf(s))
    }

    /// For `x + y` where one side is a string and the other an object with
    /// a user `toString`: (method, object, the string side, frame flag).
    fn add_needs_to_string(&self, x: Value, y: Value) -> Option<(Value, Value, Value, u8)> {
        if ops::is_string(x) {
            self.user_to_string(y).map(|m| (m, y, x, flags::CONCAT_AFTER_PREFIX))
        } else if ops::is_string(y) {
            self.user_to_string(x).map(|m| (m, x, y, flags::CONCAT_BEFORE_SUFFIX))
        } else {
            None
        }
    }

    /// A user-defined `toString` method of a class instance, if any.
    fn user_to_string(&self, v: Value) -> Option<Value> {
        let d = ops::object_data(v)?;
        let m = d.props.get(names::TO_STRING).or_else(|| ops::lookup_proto(d.class, names::TO_STRING))?;
        if ops::is_closure(m) {
            Some(m)
        } else {
            None
        }
    }
}

/// The outcome of a settled task or promise (None if unsettled or not a
/// waitable). Reading it marks the outcome as observed.
pub fn settled(v: Value) -> Option<Outcome> {
    let c = match v.as_obj().map(|o| &o.body) {
        Some(Body::Task(t)) => &t.completion,
        Some(Body::Promise(p)) => &p.completion,
        _ => return None,
    };
    let mut g = c.inner.lock();
    let o = g.outcome()?;
    g.observed = true;
    Some(o)
}

/// The outcome of a settled task or promise, without marking it observed.
pub fn peek_outcome(v: Value) -> Option<Outcome> {
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Task(t)) => t.completion.outcome(),
        Some(Body::Promise(p)) => p.completion.outcome(),
        _ => None,
    }
}

pub fn is_waitable(v: Value) -> bool {
    matches!(v.as_obj().map(|o| &o.body), Some(Body::Task(_)) | Some(Body::Promise(_)))
}

fn outcome_value(o: Outcome) -> Result<Value, Fault> {
    match o {
        Outcome::Value(v) => Ok(v),
        Outcome::Error(e) | Outcome::Cancelled(e) => Err(Fault::Thrown(e)),
    }
}

/// What to write instead, for a method a TypeScript habit expects where
/// Raya's value has none (appended to "x.m is not a function").
fn missing_method_hint(recv: Value, key: Atom) -> &'static str {
    let waitable = is_waitable(recv);
    match key.as_str() {
        "then" | "catch" | "finally" if !waitable => {
            " (only tasks and promises have it: wrap a plain value as `Promise.resolve(value)`)"
        }
        "unref" | "ref" | "refresh" | "hasRef" if waitable => {
            " (a timer is a task: clear it with `clearTimeout(timer)` when it is no longer needed)"
        }
        _ => "",
    }
}

fn receiver_name(v: Value) -> String {
    if v.is_nullish() {
        return ops::to_display(v);
    }
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Object(d)) => {
            let c = d.lock().class;
            ops::class_data(c).map(|c| c.name.as_str().to_owned()).unwrap_or_else(|| "object".into())
        }
        Some(Body::Class(c)) => c.lock().name.as_str().to_owned(),
        Some(Body::Task(_)) => "Task".into(),
        Some(Body::Promise(_)) => "Promise".into(),
        _ => ops::type_of(v).to_owned(),
    }
}

/// A class that no constructor up its chain can build: one extending a
/// built-in whose instances are not plain objects (an array, a Map, a
/// promise...), which an instance made as a plain object cannot become.
/// Rather than an object without the built-in's state, a TypeError.
/// (`Error` builds plain objects; `Date` keeps its date in the instance.)
fn unsupported_base(class: Value) -> Result<(), Fault> {
    let name = ops::class_data(class).map(|c| c.name).unwrap_or(Atom::intern("?"));
    let mut c = class;
    while let Some(cd) = ops::class_data(c) {
        if !matches!(cd.kind, BuiltinKind::Ordinary | BuiltinKind::Namespace) {
            let base = cd.name.as_str();
            return Err(Fault::Type(format!(
                "class {} cannot extend {base}: subclasses of {base} are not supported yet",
                name.as_str()
            )));
        }
        c = cd.parent;
    }
    Ok(())
}

fn describe_iterable(v: Value) -> String {
    if v.is_nullish() || v.is_number() || v.is_bool() {
        ops::to_display(v)
    } else {
        "object".into()
    }
}

/// A call with spread arguments: it spreads them over the array's own
/// register before it calls, so it cannot run again after a call that
/// failed at the heap limit (it would spread the first argument instead:
/// `a.concat(...arrays)` concatenated the elements of `arrays[0]`). Such a
/// failure is thrown without the collect-and-retry.
fn spreads_args(i: Instr) -> bool {
    matches!(
        i,
        Instr::CallSpread { .. } | Instr::NewSpread { .. } | Instr::SuperCallSpread { .. } | Instr::SpawnSpread { .. }
    )
}

/// A fault raised by the heap limit (`heap::check_growth`): the RangeError
/// as a fault, or as the error a native made of it.
fn is_heap_limit_fault(f: &Fault) -> bool {
    const PREFIX: &str = "out of memory: heap limit";
    match f {
        Fault::Range(m) => m.starts_with(PREFIX),
        Fault::Thrown(v) => ops::object_data(*v)
            .and_then(|d| d.props.get(crate::vm::atom::names::MESSAGE))
            .and_then(ops::as_str)
            .is_some_and(|m| m.starts_with(PREFIX)),
        Fault::Type(_) | Fault::Reference(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::runtime::Runtime;

    #[test]
    fn array_index_takes_whole_numbers_below_2_pow_32_minus_1() {
        assert_eq!(array_index(0.0), Some(0));
        assert_eq!(array_index(-0.0), Some(0));
        assert_eq!(array_index(7.0), Some(7));
        assert_eq!(array_index(4294967294.0), Some(4294967294));
        for n in [4294967295.0, 4294967296.0, 1e300, f64::INFINITY, -1.0, -0.5, 0.5, 2.5, f64::NAN, f64::NEG_INFINITY] {
            assert_eq!(array_index(n), None, "{n}");
        }
    }

    /// Compiles `src`, starts its main function as a task, and returns the
    /// runtime, the task and a reader of the script's globals.
    fn start(src: &str) -> (Runtime, Task, impl Fn(&Runtime, &str) -> Value) {
        let program = crate::compiler::compile_source("grace.raya", src).expect("compiles");
        let (mut rt, entry) = Runtime::new(&program.entry, &program.sources, program.global_names.len(), Vec::new());
        let mut task = Task::new(1);
        TaskInterpreter::new(&mut rt).start(&mut task, entry, Value::UNDEFINED, &[]).expect("starts");
        let names = program.global_names.clone();
        let global =
            move |rt: &Runtime, name: &str| rt.world.globals.get(names.iter().position(|n| n == name).expect("global"));
        (rt, task, global)
    }

    /// A class whose fields are all constants gets a template of them, in
    /// declaration order; a field computed, read from `this`, or holding a
    /// heap value (a string, an array) leaves the initialiser to run as a
    /// call. Instances made either way end with the same shape.
    #[test]
    fn constant_fields_make_a_template() {
        let (mut rt, mut task, global) = start(
            "class K { a = 1; b: number | null = null; c = true; d; e = 2.5; }
             class S { a = 1; s = 'text'; }
             class A { a = 1; xs = []; }
             class T { a = 1; b = this.a; }
             class N {}
             const k1 = new K(); const k2 = new K(); k1.a = 9;",
        );
        let mut budget = 1_000_000;
        let o = TaskInterpreter::new(&mut rt).run(&mut task, &mut budget);
        assert!(matches!(o, RunOutcome::Completed(_)));
        let template = |name: &str| ops::class_data(global(&rt, name)).unwrap().field_template.clone();
        let k = template("K").expect("constant fields give a template");
        let keys: Vec<&str> = k.iter().map(|(key, _)| key.as_str()).collect();
        assert_eq!(keys, ["a", "b", "c", "d", "e"]);
        let vals: Vec<Value> = k.iter().map(|(_, v)| v).collect();
        assert_eq!(vals[..4], [Value::number(1.0), Value::NULL, Value::TRUE, Value::UNDEFINED]);
        assert_eq!(vals[4].as_number(), 2.5);
        for name in ["S", "A", "T", "N"] {
            assert!(template(name).is_none(), "{name} has no template");
        }
        // One object's lock at a time (the lock order forbids two).
        let shape_and_a = |name: &str| {
            let d = ops::object_data(global(&rt, name)).unwrap();
            (d.props.shape_id(), d.props.get(Atom::intern("a")).map(|v| v.as_number()))
        };
        assert_eq!(shape_and_a("k1"), (k.shape_id(), Some(9.0)), "the instance has the template's shape");
        assert_eq!(shape_and_a("k2"), (k.shape_id(), Some(1.0)), "a copy, not shared");
    }

    /// A base class whose constructor only stores parameters in declared
    /// fields gets a plan of those stores (slot, parameter), in the
    /// constructor's order; the constructor the compiler writes for a
    /// class with fields and no constructor gets an empty one. Any other
    /// constructor gets none, and `new` then runs it as a call. Instances
    /// made by a plan have the shape and the values the constructor would
    /// have given them.
    #[test]
    fn storing_constructors_get_a_plan() {
        let (mut rt, mut task, global) = start(
            "class P { a: number; b: number; c = 0; constructor(a: number, b: number) { this.b = b; this.a = a; } }
             class Q { a: number; constructor(x: number, y: number) { this.a = y; } }
             class NoFields { constructor(a: number) { (this as any).a = a; } }
             class Undeclared { a: number; constructor(a: number, b: number) { this.a = a; (this as any).b = b; } }
             class Computed { a: number; constructor(a: number) { this.a = a + 1; } }
             class Defaulted { a: number; constructor(a: number = 1) { this.a = a; } }
             class Rest { a: number; constructor(...a: number[]) { this.a = a[0]; } }
             class Derived extends P { d: number; constructor(d: number) { super(1, 2); this.d = d; } }
             class Implicit { a = 1; }
             const p = new P(1, 2); const p1 = new P(3);",
        );
        let mut budget = 1_000_000;
        let o = TaskInterpreter::new(&mut rt).run(&mut task, &mut budget);
        assert!(matches!(o, RunOutcome::Completed(_)));
        let plan = |name: &str| ops::class_data(global(&rt, name)).unwrap().ctor_plan;
        assert_eq!(plan("P").expect("P stores parameters").stores(), [(1, 1), (0, 0)]);
        assert_eq!(plan("Q").expect("Q stores a parameter").stores(), [(0, 1)]);
        assert_eq!(plan("Implicit").expect("the constructor the compiler gives").stores(), []);
        for name in ["NoFields", "Undeclared", "Computed", "Defaulted", "Rest", "Derived"] {
            assert!(plan(name).is_none(), "{name} has no plan");
        }
        let shape = ops::class_data(global(&rt, "P")).unwrap().field_template.as_ref().unwrap().shape_id();
        let fields = |name: &str| {
            let d = ops::object_data(global(&rt, name)).unwrap();
            let vals: Vec<Value> = d.props.iter().map(|(_, v)| v).collect();
            (d.props.shape_id(), vals)
        };
        let n = Value::number;
        assert_eq!(fields("p"), (shape, vec![n(1.0), n(2.0), n(0.0)]));
        assert_eq!(fields("p1"), (shape, vec![n(3.0), Value::UNDEFINED, n(0.0)]), "a missing argument");
    }

    /// Runs `task` a safepoint at a time until `done` holds (a budget of 1
    /// would stop at the first safepoint every time, before a call).
    fn run_until(rt: &mut Runtime, task: &mut Task, done: impl Fn(&Runtime, &Task) -> bool) {
        for _ in 0..1_000 {
            let mut budget = 2;
            assert!(matches!(TaskInterpreter::new(rt).run(task, &mut budget), RunOutcome::Preempted));
            if done(rt, task) {
                return;
            }
        }
        panic!("never got there");
    }

    /// A task whose slice ends while it holds a mutex runs on until it
    /// unlocks, and is preempted at the very next safepoint.
    #[test]
    fn a_holder_is_preempted_right_after_it_unlocks() {
        let (mut rt, mut task, global) = start(
            "const m = new Mutex(); let inside = 0; let later = 0;
             m.lock();
             for (let i = 0; i < 50; i++) inside++;
             m.unlock();
             while (true) later++;",
        );
        // The slice (2 safepoints) runs out inside the critical section,
        // yet no run stops there.
        run_until(&mut rt, &mut task, |rt, t| {
            assert!(!t.holds_mutex(), "preempted holding the mutex");
            global(rt, "inside").as_number() == 50.0
        });
        assert!(
            global(&rt, "later").as_number() <= 1.0,
            "ran on after unlocking: {}",
            global(&rt, "later").as_number()
        );
    }

    /// A bound call moves its arguments above the caller's frame: the
    /// caller's registers after the call's own (here the array elements
    /// around each call) are untouched, through two levels of binding.
    #[test]
    fn a_bound_call_keeps_the_callers_registers() {
        let (mut rt, mut task, global) = start(
            "function f(this: any, a, b, c) { return this.k + a * 100 + b * 10 + c; }
             const g = f.bind({ k: 1000 }, 1).bind(null, 2);
             const xs = [7, g(3), 8, g(4, 99), 9];
             const out = xs.join(',');",
        );
        let mut budget = 1_000_000;
        let o = TaskInterpreter::new(&mut rt).run(&mut task, &mut budget);
        assert!(matches!(o, RunOutcome::Completed(_)));
        assert_eq!(ops::to_display(global(&rt, "out")), "7,1123,8,1124,9");
    }

    /// The grace is bounded: a task that never unlocks is still preempted.
    #[test]
    fn a_holder_that_never_unlocks_is_preempted_after_its_grace() {
        let (mut rt, mut task, global) = start(
            "const m = new Mutex(); let inside = 0;
             m.lock();
             while (true) inside++;",
        );
        run_until(&mut rt, &mut task, |_, t| t.holds_mutex());
        let before = global(&rt, "inside").as_number();
        let mut budget = 1;
        assert!(matches!(TaskInterpreter::new(&mut rt).run(&mut task, &mut budget), RunOutcome::Preempted));
        assert!(task.holds_mutex());
        let ran = global(&rt, "inside").as_number() - before;
        assert!((1.0..=(LOCK_GRACE + 1) as f64).contains(&ran), "ran {ran} iterations");
    }
}
