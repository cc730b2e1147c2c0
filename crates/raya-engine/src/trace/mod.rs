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
#[derive(Clone, Debug)]
pub enum Stop {
    Completed,
    Failed,
    Cancelled,
    Preempted,
    Exited,
    /// Suspended: the wait's description, its kind (`Blocker::kind`), the
    /// id of the object waited on (0: none), and where in the user's code.
    Suspended {
        what: Cow<'static, str>,
        kind: &'static str,
        object: u32,
        site: Option<Site>,
    },
}

impl Stop {
    fn name(&self) -> &'static str {
        match self {
            Stop::Completed => "completed",
            Stop::Failed => "failed",
            Stop::Cancelled => "cancelled",
            Stop::Preempted => "preempted",
            Stop::Exited => "exited",
            Stop::Suspended { .. } => "suspended",
        }
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
}

impl Recorder {
    pub fn new(tracer: Arc<Tracer>, worker: usize) -> Recorder {
        Recorder { tracer, worker, full: Vec::new(), cur: Vec::with_capacity(CHUNK), resume_at: None }
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

    /// Every event recorded, in order, in chunks.
    pub fn into_events(mut self) -> Vec<Vec<Event>> {
        self.full.push(std::mem::take(&mut self.cur));
        self.full
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
    /// Each thread's events, in chunks: the workers by index, then the
    /// embedder's threads that ran calls of a loaded program themselves
    /// (from `first_caller` on).
    pub workers: Vec<Vec<Vec<Event>>>,
    pub first_caller: usize,
    /// The main task's id (its slices are titled `<main>`).
    pub main: u32,
    pub gc: Vec<GcPause>,
    /// `file:line:col` of a site.
    pub site_text: &'a dyn Fn(Site) -> String,
}

/// The writer's output buffer: formatting with `core::fmt` was most of the
/// time spent writing a trace of a million runs, so numbers and strings
/// are appended by hand and the buffer goes to the file a megabyte at a
/// time.
struct Out<'w, W: Write> {
    buf: Vec<u8>,
    w: &'w mut W,
}

impl<W: Write> Out<'_, W> {
    fn s(&mut self, s: &str) {
        self.buf.extend_from_slice(s.as_bytes());
    }

    fn u(&mut self, mut n: u64) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
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
        if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
            self.buf.push(b'"');
            self.s(s);
            self.buf.push(b'"');
        } else {
            let _ = serde_json::to_writer(&mut self.buf, s);
        }
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

/// Writes the trace as Chrome trace-event JSON (the "JSON object" form:
/// one event per line inside `traceEvents`). `pid` 1 is the program;
/// `tid` N+1 is worker N. Streams: nothing but the names of tasks and the
/// text of source sites is held besides the events.
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
    // Slice titles of tasks, from their spawns (main is never spawned).
    let mut titles: std::collections::HashMap<u32, String> = std::collections::HashMap::new();
    for e in input.workers.iter().flatten().flatten() {
        if let Event::Spawn { child, name, .. } = e {
            titles.insert(*child, format!("task {child} {name}"));
        }
    }
    // Every run's start by task, in order, to end each wake arrow at the
    // woken task's next run.
    let mut starts: std::collections::HashMap<u32, Vec<(u64, usize)>> = std::collections::HashMap::new();
    for (wi, chunks) in input.workers.iter().enumerate() {
        for e in chunks.iter().flatten() {
            if let Event::Run { start, task, .. } = e {
                starts.entry(*task).or_default().push((*start, wi + 1));
            }
        }
    }
    for v in starts.values_mut() {
        v.sort_unstable();
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
    let mut sites: std::collections::HashMap<Site, String> = std::collections::HashMap::new();
    for (wi, chunks) in input.workers.iter().enumerate() {
        let tid = wi + 1;
        for e in chunks.iter().flatten() {
            match e {
                Event::Run { start, end, task, woke, stop } => {
                    if *woke != 0 {
                        // Inside the waker's slice, where viewers bind it.
                        arrow(&mut o, tid, end.saturating_sub(1).max(*start), *task, *woke);
                    }
                    let title = titles
                        .entry(*task)
                        .or_insert_with(|| format!("task {task} {}", if *task == input.main { "<main>" } else { "?" }));
                    o.s(",\n{\"name\":");
                    o.json(title);
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
                    o.s(stop.name());
                    o.s("\"");
                    if let Stop::Suspended { what, kind, object, site } = stop {
                        o.s(",\"reason\":\"");
                        o.s(kind);
                        o.s("\",\"wait\":");
                        o.json(what);
                        if *object != 0 {
                            o.s(",\"object\":");
                            o.u(*object as u64);
                        }
                        if let Some(s) = site {
                            let text = sites.entry(*s).or_insert_with(|| (input.site_text)(*s));
                            o.s(",\"at\":");
                            o.json(text);
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
        for n in [0, 7, 10, 999, 1000, u64::MAX] {
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
            "0 7 10 999 1000 18446744073709551615 0.000 0.005 0.999 1.000 1234.567 \"plain\"\"q\\\"uo\\\\te\\n\""
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
        let w0 = vec![
            Event::Spawn { ts: st(10), parent: 1, child: 2, name: "worker \"a\"".into() },
            Event::Wake { ts: st(20), from: 1, to: 2 },
            Event::Run {
                start: st(0),
                end: st(30),
                task: 1,
                woke: 0,
                stop: Stop::Suspended { what: "locking a mutex".into(), kind: "mutex", object: 4, site: None },
            },
            Event::Cancel { ts: st(5), by: 1, task: 2 },
        ];
        let w1 = vec![
            Event::Run { start: st(40), end: st(90), task: 2, woke: 0, stop: Stop::Completed },
            Event::TimerFire { ts: st(95), task: 0 },
        ];
        let input = TraceInput {
            tracer: &tracer,
            workers: vec![vec![w0], vec![w1]],
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
        assert_eq!(count("M", "thread_name"), 2);
        assert_eq!(count("X", "GC"), 2, "one GC slice per worker");
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
