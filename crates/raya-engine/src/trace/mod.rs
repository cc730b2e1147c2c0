//! Execution traces (`raya run --trace FILE`, `RAYA_TRACE`,
//! `VmBuilder::trace`): what every task did, on which worker, and why it
//! stopped, written as Chrome trace-event JSON at the end of the run.
//! `design/trace.md` describes every event.
//!
//! # Cost
//!
//! Off, a run pays one branch per task run (`Runtime::trace` is `None`).
//! On, each worker appends to its own [`Recorder`], which lives in that
//! worker's `Runtime` — already locked by the worker for the whole job —
//! so recording an event takes no lock and no atomic instruction: a clock
//! read and a push. Events that happen off the workers (GC pauses, which
//! the heap logs) are collected once, at the end. Nothing is written until
//! the program ends.

pub mod stall;
pub mod summary;

use crate::sync::Site;
use std::borrow::Cow;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// A cheap timestamp for events: the CPU's time-stamp counter on x86-64
/// (constant-rate and synchronised across cores on the CPUs of the last
/// decade; a third of the cost of `clock_gettime`, which is read once per
/// task run), nanoseconds since the first call elsewhere. The writer turns
/// stamps into nanoseconds ([`Tracer`] keeps the stamp of its start).
#[inline]
pub fn stamp() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `rdtsc` has no preconditions on x86-64.
        #[allow(unused_unsafe)]
        unsafe {
            core::arch::x86_64::_rdtsc()
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        static ORIGIN: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        ORIGIN.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }
}

/// Stamps to nanoseconds since the trace began: the rate is measured over
/// the whole run, against `Instant`.
struct Clock {
    origin: u64,
    ns_per_stamp: f64,
}

impl Clock {
    fn ns(&self, stamp: u64) -> u64 {
        (stamp.saturating_sub(self.origin) as f64 * self.ns_per_stamp) as u64
    }
}

/// One trace being recorded: the shared clock origin and the output path.
pub struct Tracer {
    pub start: Instant,
    /// [`stamp`] at `start`.
    start_stamp: u64,
    pub path: PathBuf,
}

impl Tracer {
    pub fn new(path: PathBuf) -> Arc<Tracer> {
        let (start, start_stamp) = (Instant::now(), stamp());
        Arc::new(Tracer { start, start_stamp, path })
    }

    /// Nanoseconds since the trace began.
    pub fn since(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.start).as_nanos() as u64
    }

    /// Converts stamps taken so far.
    fn clock(&self) -> Clock {
        let (now, st) = (Instant::now(), stamp());
        let ns = now.saturating_duration_since(self.start).as_nanos() as f64;
        let stamps = st.saturating_sub(self.start_stamp).max(1) as f64;
        Clock { origin: self.start_stamp, ns_per_stamp: ns / stamps }
    }
}

/// Why a task run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopCode {
    Completed,
    Failed,
    Cancelled,
    Preempted,
    Exited,
    Suspended,
}

impl StopCode {
    fn name(self) -> &'static str {
        match self {
            StopCode::Completed => "completed",
            StopCode::Failed => "failed",
            StopCode::Cancelled => "cancelled",
            StopCode::Preempted => "preempted",
            StopCode::Exited => "exited",
            StopCode::Suspended => "suspended",
        }
    }
}

/// Why a task run ended, as a run event keeps it: small and plain (a
/// run is most of a trace's events, and their memory is most of what
/// recording costs). A suspension's description and kind are an index
/// into its recorder's table of waits ([`Recorder::suspended`]).
#[derive(Clone, Copy, Debug)]
pub struct Stop {
    pub code: StopCode,
    /// Index into the recorder's `waits` (suspended runs only).
    wait: u32,
    /// The id of the object waited on (0: none).
    object: u32,
    /// Where in the user's code it waited (`site_file` u32::MAX: nowhere).
    site_file: u32,
    site_offset: u32,
}

impl Stop {
    /// A run that did not suspend.
    pub fn plain(code: StopCode) -> Stop {
        Stop { code, wait: 0, object: 0, site_file: u32::MAX, site_offset: 0 }
    }

    fn site(&self) -> Option<Site> {
        (self.site_file != u32::MAX).then_some(Site { file: self.site_file, offset: self.site_offset })
    }
}

/// A recorded event; times are [`stamp`]s.
///
/// Wake arrows are not recorded as pairs: a run notes the first task it
/// made runnable (`woke`; others get an [`Event::Wake`]), and the writer
/// ends each arrow at the next run of the woken task. So recording a
/// wake-up touches nothing but the waker's own buffer (no store into the
/// woken task, no atomic), and a ping-pong costs one event per run.
#[derive(Debug)]
pub enum Event {
    /// A task ran on this worker from `start` to `end`; `woke`: the first
    /// task it made runnable (0: none).
    Run { start: u64, end: u64, task: u32, woke: u32, stop: Stop },
    /// The running task `parent` (0: the host) made task `child`.
    Spawn { ts: u64, parent: u32, child: u32, name: String },
    /// The running task `from` made task `to` runnable (besides the one in
    /// its run's `woke`).
    Wake { ts: u64, from: u32, to: u32 },
    /// The running task `by` cancelled `task`.
    Cancel { ts: u64, by: u32, task: u32 },
    /// A timer fired on this worker: a sleeping task's (`task` > 0) or a
    /// wait object's (a select timeout, a timer channel: `task` = 0).
    TimerFire { ts: u64, task: u32 },
}

// Most events are runs: a few words each (see `Stop`).
const _: () = assert!(std::mem::size_of::<Event>() <= 48);

/// Events per chunk of a recorder: chunks are never reallocated, so a
/// long trace costs no copying while it is recorded.
const CHUNK: usize = 1 << 14;

/// One worker's events (see the module docs: only that worker touches it).
pub struct Recorder {
    pub tracer: Arc<Tracer>,
    pub worker: usize,
    full: Vec<Vec<Event>>,
    cur: Vec<Event>,
    /// The end of the last run, while the same job goes on to the next
    /// (set by the driver; None at the start of each job).
    pub resume_at: Option<u64>,
    /// Descriptions and kinds of the waits runs suspended on, referred to
    /// by index from their [`Stop`]s.
    waits: Vec<(Cow<'static, str>, &'static str)>,
    /// The last few static descriptions interned: (text address, index
    /// into `waits`). A program suspends on a handful of kinds of wait,
    /// so a short scan finds nearly all.
    recent: [(usize, u32); 4],
    /// Where the next entry of `recent` goes.
    next_recent: usize,
    /// Per source file: 1 if it is the user's, 2 if built-in (0: not
    /// looked at yet), so finding a run's site takes no lock.
    user_files: Vec<u8>,
}

/// What a [`Recorder`] gives the writer.
#[derive(Default)]
pub struct Recorded {
    /// The events, in order, in chunks.
    pub events: Vec<Vec<Event>>,
    waits: Vec<(Cow<'static, str>, &'static str)>,
}

impl Recorder {
    pub fn new(tracer: Arc<Tracer>, worker: usize) -> Recorder {
        Recorder {
            tracer,
            worker,
            full: Vec::new(),
            cur: Vec::with_capacity(CHUNK),
            resume_at: None,
            waits: Vec::new(),
            recent: [(0, u32::MAX); 4],
            next_recent: 0,
            user_files: Vec::new(),
        }
    }

    /// Now, on the trace's clock (a [`stamp`]).
    #[inline]
    pub fn now(&self) -> u64 {
        stamp()
    }

    #[inline]
    pub fn push(&mut self, e: Event) {
        if self.cur.len() == CHUNK {
            let full = std::mem::replace(&mut self.cur, Vec::with_capacity(CHUNK));
            self.full.push(full);
        }
        self.cur.push(e);
    }

    /// The [`Stop`] of a run that suspended: `what` (the wait's text, as
    /// deadlock reports print it) and `kind` are interned.
    pub fn suspended(&mut self, what: Cow<'static, str>, kind: &'static str, object: u32, site: Option<Site>) -> Stop {
        let wait = match what {
            Cow::Borrowed(text) => {
                let addr = text.as_ptr() as usize;
                let same = |&(a, i): &(usize, u32)| {
                    // The address alone could be a prefix's: check the rest.
                    a == addr
                        && self
                            .waits
                            .get(i as usize)
                            .is_some_and(|(w, k)| w.len() == text.len() && std::ptr::eq(k.as_ptr(), kind.as_ptr()))
                };
                match self.recent.iter().find(|r| same(r)) {
                    Some(&(_, i)) => i,
                    None => {
                        let i = self.waits.len() as u32;
                        self.waits.push((what, kind));
                        self.recent[self.next_recent] = (addr, i);
                        self.next_recent = (self.next_recent + 1) % self.recent.len();
                        i
                    }
                }
            }
            Cow::Owned(_) => {
                self.waits.push((what, kind));
                self.waits.len() as u32 - 1
            }
        };
        let (site_file, site_offset) = site.map_or((u32::MAX, 0), |s| (s.file, s.offset));
        Stop { code: StopCode::Suspended, wait, object, site_file, site_offset }
    }

    /// Where `task` stands in the user's code (as `Runtime::user_site`),
    /// with the files' kinds cached here instead of read under the source
    /// map's lock at every run.
    pub fn user_site(&mut self, world: &crate::vm::runtime::World, task: &crate::vm::task::Task) -> Option<Site> {
        for (depth, f) in task.frames.iter().rev().enumerate() {
            let p = &f.proto().proto;
            let file = p.file;
            if self.user_files.get(file).copied().unwrap_or(0) == 0 {
                // Files are only ever added to the map, and keep their names.
                let sources = world.sources.read();
                self.user_files.resize(sources.len().max(file + 1), 0);
                for (i, k) in self.user_files.iter_mut().enumerate() {
                    if *k == 0 && i < sources.len() {
                        *k = if crate::vm::runtime::is_builtin_source(&sources.get(i).name) { 2 } else { 1 };
                    }
                }
            }
            if self.user_files.get(file).copied() != Some(1) {
                continue;
            }
            let pc = if depth == 0 { task.top_pc().unwrap_or(f.pc) } else { f.pc };
            let pc = (pc as usize).saturating_sub(1).min(p.spans.len().saturating_sub(1));
            let offset = p.spans.get(pc).copied().unwrap_or(p.span_start);
            return Some(Site { file: file as u32, offset });
        }
        None
    }

    /// Every event recorded, for the writer.
    pub fn into_recorded(mut self) -> Recorded {
        self.full.push(std::mem::take(&mut self.cur));
        Recorded { events: self.full, waits: self.waits }
    }
}

/// A GC pause as the heap logs it (see `vm::heap`): the world began
/// stopping at `stop`, the collection ran from `start` to `end`.
#[derive(Clone, Copy, Debug)]
pub struct GcPause {
    pub stop: Instant,
    pub start: Instant,
    pub end: Instant,
}

/// Everything the writer needs besides the events.
pub struct TraceInput<'a> {
    pub tracer: &'a Tracer,
    /// Each thread's events: the workers by index, then the embedder's
    /// threads that ran calls of a loaded program themselves (from
    /// `first_caller` on).
    pub workers: Vec<Recorded>,
    pub first_caller: usize,
    /// The main task's id (its slices are titled `<main>`).
    pub main: u32,
    pub gc: Vec<GcPause>,
    /// `file:line:col` of a site.
    pub site_text: &'a dyn Fn(Site) -> String,
}

/// A hasher for the writer's maps keyed by task ids and sites: they are
/// small integers, not attacker-chosen, and SipHash was a tenth of the
/// time of writing a trace of a million runs.
#[derive(Default, Clone, Copy)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type IdMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<IdHasher>>;

/// The writer's output buffer: formatting with `core::fmt` was most of the
/// time spent writing a trace of a million runs, so numbers and strings
/// are appended by hand and the buffer goes to the file a megabyte at a
/// time.
struct Out<'w, W: Write> {
    buf: Vec<u8>,
    w: &'w mut W,
}

/// "00" to "99", for writing numbers two digits at a time.
const DIGITS2: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

impl<W: Write> Out<'_, W> {
    fn s(&mut self, s: &str) {
        self.buf.extend_from_slice(s.as_bytes());
    }

    fn u(&mut self, mut n: u64) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        while n >= 100 {
            let d = (n % 100) as usize * 2;
            n /= 100;
            i -= 2;
            digits[i..i + 2].copy_from_slice(&DIGITS2[d..d + 2]);
        }
        if n >= 10 {
            let d = n as usize * 2;
            i -= 2;
            digits[i..i + 2].copy_from_slice(&DIGITS2[d..d + 2]);
        } else {
            i -= 1;
            digits[i] = b'0' + n as u8;
        }
        self.buf.extend_from_slice(&digits[i..]);
    }

    /// Nanoseconds as microseconds with three decimals.
    fn us(&mut self, ns: u64) {
        self.u(ns / 1000);
        let f = ns % 1000;
        self.buf.extend_from_slice(&[b'.', b'0' + (f / 100) as u8, b'0' + (f / 10 % 10) as u8, b'0' + (f % 10) as u8]);
    }

    /// `s` as a JSON string; plain text (the common case) as it is.
    fn json(&mut self, s: &str) {
        json_into(&mut self.buf, s);
    }

    /// Starts an event: `,\n{"name":NAME,"cat":CAT,"ph":PH,"pid":1,"tid":TID,"ts":TS`.
    fn head(&mut self, name: &str, cat: &str, ph: &str, tid: usize, ts: u64) {
        self.s(",\n{\"name\":");
        self.json(name);
        self.s(",\"cat\":\"");
        self.s(cat);
        self.s("\",\"ph\":\"");
        self.s(ph);
        self.s("\",\"pid\":1,\"tid\":");
        self.u(tid as u64);
        self.s(",\"ts\":");
        self.us(ts);
    }

    fn maybe_flush(&mut self) -> std::io::Result<()> {
        if self.buf.len() >= 1 << 20 {
            self.w.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }
}

/// Appends `s` as a JSON string.
fn json_into(buf: &mut Vec<u8>, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        buf.push(b'"');
        buf.extend_from_slice(s.as_bytes());
        buf.push(b'"');
    } else {
        let _ = serde_json::to_writer(&mut *buf, s);
    }
}

/// `s` as a JSON string.
fn json_string(s: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(s.len() + 2);
    json_into(&mut v, s);
    v
}

/// A run's slice title, `task N FUNCTION`, as a JSON string.
fn title(task: u32, function: &str) -> Vec<u8> {
    let mut text = String::with_capacity(function.len() + 16);
    text.push_str("task ");
    text.push_str(&task.to_string());
    text.push(' ');
    text.push_str(function);
    json_string(&text)
}

/// Writes the trace as Chrome trace-event JSON (the "JSON object" form:
/// one event per line inside `traceEvents`). `pid` 1 is the program;
/// `tid` N+1 is worker N. Streams: besides the events, it holds the
/// start times of every task's runs (to end wake arrows), the titles of
/// tasks and the text of source sites.
pub fn write(input: &TraceInput, w: &mut impl Write) -> std::io::Result<()> {
    let mut o = Out { buf: Vec::with_capacity(1 << 21), w };
    let clock = input.tracer.clock();
    o.s("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    o.s(r#"{"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"raya"}}"#);
    let n = input.workers.len();
    for wi in 0..n {
        let tid = (wi + 1) as u64;
        o.s(",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":");
        o.u(tid);
        if wi < input.first_caller {
            o.s(",\"args\":{\"name\":\"worker ");
            o.u(wi as u64);
        } else {
            o.s(",\"args\":{\"name\":\"host thread ");
            o.u((wi - input.first_caller) as u64);
        }
        o.s("\"}}");
        o.s(",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":");
        o.u(tid);
        o.s(",\"args\":{\"sort_index\":");
        o.u(wi as u64);
        o.s("}}");
    }
    let events = |wi: usize| input.workers[wi].events.iter().flatten();
    // Slice titles of tasks (JSON strings), from their spawns (main is
    // never spawned).
    let mut titles: IdMap<u32, Vec<u8>> = IdMap::default();
    for wi in 0..n {
        for e in events(wi) {
            if let Event::Spawn { child, name, .. } = e {
                titles.insert(*child, title(*child, name));
            }
        }
    }
    // Every run's start by task, in order, to end each wake arrow at the
    // woken task's next run.
    let mut starts: IdMap<u32, Vec<(u64, usize)>> = IdMap::default();
    for wi in 0..n {
        for e in events(wi) {
            if let Event::Run { start, task, .. } = e {
                starts.entry(*task).or_default().push((*start, wi + 1));
            }
        }
    }
    for v in starts.values_mut() {
        // Each worker's runs are in order already: only merging is left.
        if !v.is_sorted() {
            v.sort_unstable();
        }
    }
    let mut flows = 0u64;
    // An arrow from (`tid`, `ts`) to the first run of `to` from `ts` on.
    let mut arrow = |o: &mut Out<_>, tid: usize, ts: u64, from: u32, to: u32| {
        let Some(runs) = starts.get(&to) else { return };
        let i = runs.partition_point(|&(s, _)| s < ts);
        let Some(&(start, to_tid)) = runs.get(i) else { return };
        flows += 1;
        o.head("wake", "wake", "s", tid, clock.ns(ts));
        o.s(",\"id\":");
        o.u(flows);
        o.s(",\"args\":{\"task\":");
        o.u(from as u64);
        o.s(",\"woken\":");
        o.u(to as u64);
        o.s("}}");
        o.head("wake", "wake", "f", to_tid, clock.ns(start));
        o.s(",\"bp\":\"e\",\"id\":");
        o.u(flows);
        o.s(",\"args\":{\"task\":");
        o.u(to as u64);
        o.s("}}");
    };
    let mut sites: IdMap<Site, Vec<u8>> = IdMap::default();
    for wi in 0..n {
        let tid = wi + 1;
        // This thread's waits, as the JSON of their `reason` and `wait`.
        let waits: Vec<Vec<u8>> = input.workers[wi]
            .waits
            .iter()
            .map(|(what, kind)| {
                let mut v = b",\"reason\":".to_vec();
                json_into(&mut v, kind);
                v.extend_from_slice(b",\"wait\":");
                json_into(&mut v, what);
                v
            })
            .collect();
        for e in events(wi) {
            match e {
                Event::Run { start, end, task, woke, stop } => {
                    if *woke != 0 {
                        // Inside the waker's slice, where viewers bind it.
                        arrow(&mut o, tid, end.saturating_sub(1).max(*start), *task, *woke);
                    }
                    let title = titles
                        .entry(*task)
                        .or_insert_with(|| title(*task, if *task == input.main { "<main>" } else { "?" }));
                    o.s(",\n{\"name\":");
                    o.buf.extend_from_slice(title);
                    o.s(",\"cat\":\"task\",\"ph\":\"X\",\"pid\":1,\"tid\":");
                    o.u(tid as u64);
                    let (start, end) = (clock.ns(*start), clock.ns(*end));
                    o.s(",\"ts\":");
                    o.us(start);
                    o.s(",\"dur\":");
                    o.us(end.saturating_sub(start).max(1));
                    o.s(",\"args\":{\"task\":");
                    o.u(*task as u64);
                    o.s(",\"stop\":\"");
                    o.s(stop.code.name());
                    o.s("\"");
                    if stop.code == StopCode::Suspended {
                        if let Some(w) = waits.get(stop.wait as usize) {
                            o.buf.extend_from_slice(w);
                        }
                        if stop.object != 0 {
                            o.s(",\"object\":");
                            o.u(stop.object as u64);
                        }
                        if let Some(s) = stop.site() {
                            let text = sites.entry(s).or_insert_with(|| json_string(&(input.site_text)(s)));
                            o.s(",\"at\":");
                            o.buf.extend_from_slice(text);
                        }
                    }
                    o.s("}}");
                }
                Event::Spawn { ts, parent, child, name } => {
                    o.head("spawn", "task", "i", tid, clock.ns(*ts));
                    o.s(",\"s\":\"t\",\"args\":{\"task\":");
                    o.u(*parent as u64);
                    o.s(",\"child\":");
                    o.u(*child as u64);
                    o.s(",\"function\":");
                    o.json(name);
                    o.s("}}");
                    arrow(&mut o, tid, *ts, *parent, *child);
                }
                Event::Wake { ts, from, to } => arrow(&mut o, tid, *ts, *from, *to),
                Event::Cancel { ts, by, task } => {
                    o.head("cancel", "task", "i", tid, clock.ns(*ts));
                    o.s(",\"s\":\"t\",\"args\":{\"task\":");
                    o.u(*by as u64);
                    o.s(",\"cancelled\":");
                    o.u(*task as u64);
                    o.s("}}");
                }
                Event::TimerFire { ts, task } => {
                    o.head("timer fired", "timer", "i", tid, clock.ns(*ts));
                    o.s(",\"s\":\"t\",\"args\":{\"task\":");
                    o.u(*task as u64);
                    o.s("}}");
                }
            }
            o.maybe_flush()?;
        }
    }
    // A collection stops every worker: the same slice on each track.
    for p in &input.gc {
        let (stop, start, end) = (input.tracer.since(p.stop), input.tracer.since(p.start), input.tracer.since(p.end));
        for wi in 0..n {
            o.head("GC", "gc", "X", wi + 1, stop);
            o.s(",\"dur\":");
            o.us(end.saturating_sub(stop).max(1));
            o.s(",\"args\":{\"stop_the_world_us\":");
            o.us(start.saturating_sub(stop));
            o.s(",\"collect_us\":");
            o.us(end.saturating_sub(start));
            o.s("}}");
        }
    }
    o.s("\n]}\n");
    o.w.write_all(&o.buf)?;
    o.w.flush()
}

/// The name a trace shows for a task that has not run yet: its function.
pub fn task_name(exec: &crate::vm::task::Task) -> String {
    match exec.frames.first() {
        Some(f) => {
            let p = &f.proto().proto;
            if p.name.is_empty() {
                if p.is_arrow {
                    "<anonymous>".into()
                } else {
                    "<main>".into()
                }
            } else {
                p.name.clone()
            }
        }
        None => "?".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_strings_are_written_as_json_wants_them() {
        let mut sink = Vec::new();
        let mut o = Out { buf: Vec::new(), w: &mut sink };
        for n in [0, 7, 10, 99, 100, 999, 1000, 12345, u64::MAX] {
            o.u(n);
            o.s(" ");
        }
        for ns in [0, 5, 999, 1000, 1_234_567] {
            o.us(ns);
            o.s(" ");
        }
        o.json("plain");
        o.json("q\"uo\\te\n");
        assert_eq!(
            String::from_utf8(o.buf).unwrap(),
            "0 7 10 99 100 999 1000 12345 18446744073709551615 0.000 0.005 0.999 1.000 1234.567 \"plain\"\"q\\\"uo\\\\te\\n\""
        );
    }

    /// The writer's output is valid JSON with the metadata, slices, flows
    /// and GC slices on every worker.
    #[test]
    fn render_is_valid_json_with_every_kind_of_event() {
        let tracer = Tracer::new("x".into());
        let t0 = tracer.start;
        let ms = |n: u64| t0 + std::time::Duration::from_millis(n);
        let st = |n: u64| tracer.start_stamp + n;
        let mut r0 = Recorder::new(tracer.clone(), 0);
        r0.push(Event::Spawn { ts: st(10), parent: 1, child: 2, name: "worker \"a\"".into() });
        r0.push(Event::Wake { ts: st(20), from: 1, to: 2 });
        let locking = r0.suspended("locking a mutex".into(), "mutex", 4, None);
        r0.push(Event::Run { start: st(0), end: st(30), task: 1, woke: 0, stop: locking });
        r0.push(Event::Cancel { ts: st(5), by: 1, task: 2 });
        // The same static wait again is the same entry; a made-up text is
        // one of its own.
        let again = r0.suspended("locking a mutex".into(), "mutex", 5, Some(Site { file: 0, offset: 3 }));
        assert_eq!(again.wait, locking.wait);
        let awaiting = r0.suspended(format!("awaiting task {}", 2).into(), "task", 2, None);
        assert_ne!(awaiting.wait, locking.wait);
        r0.push(Event::Run { start: st(31), end: st(32), task: 1, woke: 0, stop: again });
        r0.push(Event::Run { start: st(33), end: st(34), task: 1, woke: 0, stop: awaiting });
        let mut r1 = Recorder::new(tracer.clone(), 1);
        r1.push(Event::Run { start: st(40), end: st(90), task: 2, woke: 0, stop: Stop::plain(StopCode::Completed) });
        r1.push(Event::TimerFire { ts: st(95), task: 0 });
        let r2 = Recorder::new(tracer.clone(), 2);
        let input = TraceInput {
            tracer: &tracer,
            workers: vec![r0.into_recorded(), r1.into_recorded(), r2.into_recorded()],
            first_caller: 2,
            main: 1,
            gc: vec![GcPause { stop: ms(1), start: ms(2), end: ms(3) }],
            site_text: &|_| "f:1:1".into(),
        };
        let mut out = Vec::new();
        write(&input, &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).expect("valid JSON");
        let evs = v["traceEvents"].as_array().unwrap();
        let count = |ph: &str, name: &str| evs.iter().filter(|e| e["ph"] == ph && e["name"] == name).count();
        assert_eq!(count("M", "thread_name"), 3);
        let track = |tid: u64| evs.iter().find(|e| e["name"] == "thread_name" && e["tid"] == tid).unwrap();
        assert_eq!(track(2)["args"]["name"], "worker 1");
        assert_eq!(track(3)["args"]["name"], "host thread 0");
        assert_eq!(count("X", "GC"), 3, "one GC slice per track");
        let main_runs: Vec<_> = evs.iter().filter(|e| e["ph"] == "X" && e["args"]["task"] == 1).collect();
        assert_eq!(main_runs.len(), 3);
        assert!(main_runs.iter().all(|e| e["name"] == "task 1 <main>"));
        assert_eq!(main_runs[0]["args"]["wait"], "locking a mutex");
        assert_eq!(main_runs[0]["args"]["reason"], "mutex");
        assert_eq!(main_runs[0]["args"]["object"], 4);
        assert!(main_runs[0]["args"].get("at").is_none());
        assert_eq!(main_runs[1]["args"]["object"], 5);
        assert_eq!(main_runs[1]["args"]["at"], "f:1:1");
        assert_eq!(main_runs[2]["args"]["wait"], "awaiting task 2");
        assert_eq!(main_runs[2]["args"]["reason"], "task");
        // The spawn and the wake each end at task 2's run.
        assert_eq!(count("s", "wake"), 2);
        assert_eq!(count("f", "wake"), 2);
        let run = evs.iter().find(|e| e["ph"] == "X" && e["args"]["task"] == 2).unwrap();
        assert_eq!(run["name"], "task 2 worker \"a\"");
        assert_eq!(run["tid"], 2);
        assert!(run["dur"].as_f64().unwrap() > 0.0);
        let ts = |e: &serde_json::Value| e["ts"].as_f64().unwrap();
        let woken = evs.iter().find(|e| e["ph"] == "f").unwrap();
        assert_eq!(ts(woken), ts(run), "times convert alike: the arrow ends where the run starts");
    }
}
