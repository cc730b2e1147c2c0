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
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// One trace being recorded: the shared clock origin and the output path.
pub struct Tracer {
    pub start: Instant,
    pub path: PathBuf,
    /// Flow ids (waker → woken arrows), unique in the trace.
    next_flow: AtomicU64,
}

impl Tracer {
    pub fn new(path: PathBuf) -> Arc<Tracer> {
        Arc::new(Tracer { start: Instant::now(), path, next_flow: AtomicU64::new(1) })
    }

    /// Nanoseconds since the trace began.
    pub fn since(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.start).as_nanos() as u64
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

/// A recorded event; times in nanoseconds since [`Tracer::start`].
#[derive(Clone, Debug)]
pub enum Event {
    /// A task ran on this worker from `start` to `end`.
    Run { start: u64, end: u64, task: u32, stop: Stop },
    /// The running task `parent` (0: the host) made task `child`.
    Spawn { ts: u64, parent: u32, child: u32, name: String },
    /// The running task `from` made task `to` runnable; `flow` links to
    /// the [`Event::Woken`] of `to`'s next run.
    Wake { ts: u64, flow: u64, from: u32, to: u32 },
    /// Start of a run that the wake `flow` caused.
    Woken { ts: u64, flow: u64, task: u32 },
    /// The running task `by` cancelled `task`.
    Cancel { ts: u64, by: u32, task: u32 },
    /// A timer fired on this worker: a sleeping task's (`task` > 0) or a
    /// wait object's (a select timeout, a timer channel: `task` = 0).
    TimerFire { ts: u64, task: u32 },
}

/// One worker's events (see the module docs: only that worker touches it).
pub struct Recorder {
    pub tracer: Arc<Tracer>,
    pub worker: usize,
    pub events: Vec<Event>,
}

impl Recorder {
    pub fn new(tracer: Arc<Tracer>, worker: usize) -> Recorder {
        Recorder { tracer, worker, events: Vec::with_capacity(4096) }
    }

    /// Now, on the trace's clock.
    #[inline]
    pub fn now(&self) -> u64 {
        self.tracer.since(Instant::now())
    }

    pub fn push(&mut self, e: Event) {
        self.events.push(e);
    }

    /// A fresh flow id.
    pub fn flow(&self) -> u64 {
        self.tracer.next_flow.fetch_add(1, Ordering::Relaxed)
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
    /// Each worker's events, by worker index.
    pub workers: Vec<Vec<Event>>,
    pub gc: Vec<GcPause>,
    /// `file:line:col` of a site.
    pub site_text: &'a dyn Fn(Site) -> String,
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// Microseconds, as the format wants them (with nanosecond decimals).
fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// The trace as Chrome trace-event JSON (the "JSON object" form: one event
/// per line inside `traceEvents`). `pid` 1 is the program; `tid` N+1 is
/// worker N.
pub fn render(input: &TraceInput) -> String {
    let mut lines: Vec<String> = Vec::new();
    lines.push(r#"{"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"raya"}}"#.into());
    let n = input.workers.len();
    for w in 0..n {
        let tid = w + 1;
        lines.push(format!(r#"{{"name":"thread_name","ph":"M","pid":1,"tid":{tid},"args":{{"name":"worker {w}"}}}}"#));
        lines.push(format!(
            r#"{{"name":"thread_sort_index","ph":"M","pid":1,"tid":{tid},"args":{{"sort_index":{w}}}}}"#
        ));
    }
    // Names of tasks, from their spawns (main is task 1 and never spawned).
    let mut names: std::collections::HashMap<u32, String> = std::collections::HashMap::new();
    for evs in &input.workers {
        for e in evs {
            if let Event::Spawn { child, name, .. } = e {
                names.insert(*child, name.clone());
            }
        }
    }
    let name_of =
        |task: u32| names.get(&task).cloned().unwrap_or_else(|| if task == 1 { "<main>".into() } else { "?".into() });
    for (w, evs) in input.workers.iter().enumerate() {
        let tid = w + 1;
        for e in evs {
            let line = match e {
                Event::Run { start, end, task, stop } => {
                    let mut args =
                        format!(r#""task":{task},"function":{},"stop":"{}""#, json_str(&name_of(*task)), stop.name());
                    if let Stop::Suspended { what, kind, object, site } = stop {
                        args.push_str(&format!(r#","reason":"{kind}","wait":{}"#, json_str(what)));
                        if *object != 0 {
                            args.push_str(&format!(r#","object":{object}"#));
                        }
                        if let Some(s) = site {
                            args.push_str(&format!(r#","at":{}"#, json_str(&(input.site_text)(*s))));
                        }
                    }
                    format!(
                        r#"{{"name":{},"cat":"task","ph":"X","pid":1,"tid":{tid},"ts":{},"dur":{},"args":{{{args}}}}}"#,
                        json_str(&format!("task {task} {}", name_of(*task))),
                        us(*start),
                        us(end.saturating_sub(*start).max(1))
                    )
                }
                Event::Spawn { ts, parent, child, name } => format!(
                    r#"{{"name":"spawn","cat":"task","ph":"i","s":"t","pid":1,"tid":{tid},"ts":{},"args":{{"task":{parent},"child":{child},"function":{}}}}}"#,
                    us(*ts),
                    json_str(name)
                ),
                Event::Wake { ts, flow, from, to } => format!(
                    r#"{{"name":"wake","cat":"wake","ph":"s","id":{flow},"pid":1,"tid":{tid},"ts":{},"args":{{"task":{from},"woken":{to}}}}}"#,
                    us(*ts)
                ),
                Event::Woken { ts, flow, task } => format!(
                    r#"{{"name":"wake","cat":"wake","ph":"f","bp":"e","id":{flow},"pid":1,"tid":{tid},"ts":{},"args":{{"task":{task}}}}}"#,
                    us(*ts)
                ),
                Event::Cancel { ts, by, task } => format!(
                    r#"{{"name":"cancel","cat":"task","ph":"i","s":"t","pid":1,"tid":{tid},"ts":{},"args":{{"task":{by},"cancelled":{task}}}}}"#,
                    us(*ts)
                ),
                Event::TimerFire { ts, task } => format!(
                    r#"{{"name":"timer fired","cat":"timer","ph":"i","s":"t","pid":1,"tid":{tid},"ts":{},"args":{{"task":{task}}}}}"#,
                    us(*ts)
                ),
            };
            lines.push(line);
        }
    }
    // A collection stops every worker: the same two slices on each track.
    for p in &input.gc {
        let (stop, start, end) = (input.tracer.since(p.stop), input.tracer.since(p.start), input.tracer.since(p.end));
        for w in 0..n {
            let tid = w + 1;
            lines.push(format!(
                r#"{{"name":"GC","cat":"gc","ph":"X","pid":1,"tid":{tid},"ts":{},"dur":{},"args":{{"stop_the_world_us":{},"collect_us":{}}}}}"#,
                us(stop),
                us(end.saturating_sub(stop).max(1)),
                us(start.saturating_sub(stop)),
                us(end.saturating_sub(start))
            ));
        }
    }
    format!("{{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n{}\n]}}\n", lines.join(",\n"))
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

    /// The writer's output is valid JSON with the metadata, slices, flows
    /// and GC slices on every worker.
    #[test]
    fn render_is_valid_json_with_every_kind_of_event() {
        let tracer = Tracer::new("x".into());
        let t0 = tracer.start;
        let ms = |n: u64| t0 + std::time::Duration::from_millis(n);
        let w0 = vec![
            Event::Spawn { ts: 10, parent: 1, child: 2, name: "worker \"a\"".into() },
            Event::Wake { ts: 20, flow: 7, from: 1, to: 2 },
            Event::Run {
                start: 0,
                end: 30,
                task: 1,
                stop: Stop::Suspended { what: "locking a mutex".into(), kind: "mutex", object: 4, site: None },
            },
            Event::Cancel { ts: 5, by: 1, task: 2 },
        ];
        let w1 = vec![
            Event::Woken { ts: 40, flow: 7, task: 2 },
            Event::Run { start: 40, end: 90, task: 2, stop: Stop::Completed },
            Event::TimerFire { ts: 95, task: 0 },
        ];
        let input = TraceInput {
            tracer: &tracer,
            workers: vec![w0, w1],
            gc: vec![GcPause { stop: ms(1), start: ms(2), end: ms(3) }],
            site_text: &|_| "f:1:1".into(),
        };
        let v: serde_json::Value = serde_json::from_str(&render(&input)).expect("valid JSON");
        let evs = v["traceEvents"].as_array().unwrap();
        let count = |ph: &str, name: &str| evs.iter().filter(|e| e["ph"] == ph && e["name"] == name).count();
        assert_eq!(count("M", "thread_name"), 2);
        assert_eq!(count("X", "GC"), 2, "one GC slice per worker");
        assert_eq!(count("s", "wake"), 1);
        assert_eq!(count("f", "wake"), 1);
        let run = evs.iter().find(|e| e["ph"] == "X" && e["args"]["task"] == 2).unwrap();
        assert_eq!(run["args"]["function"], "worker \"a\"");
        assert_eq!(run["tid"], 2);
        assert_eq!(run["dur"].as_f64().unwrap(), 0.05);
    }
}
