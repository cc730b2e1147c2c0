//! `raya trace summary FILE`: where the time went, from a trace, for a
//! terminal: per task its run time, its wait time by reason and its
//! number of runs; per worker its utilisation; the longest waits with
//! their source lines.
//!
//! A task's wait is the time between the end of one of its runs and the
//! start of its next, charged to the reason the first run stopped for
//! (`channel`, `mutex`, `sleep`, ... or `runnable`: preempted, or woken
//! and waiting for a worker).

use serde_json::Value as Json;
use std::collections::BTreeMap;

#[derive(Clone)]
struct Run {
    start: f64,
    end: f64,
    worker: u64,
    stop: String,
    reason: String,
    wait: String,
    at: String,
}

#[derive(Default)]
struct TaskRow {
    name: String,
    runs: u64,
    run_us: f64,
    waits: BTreeMap<String, f64>,
}

/// A wait found between two runs.
struct WaitSpan {
    task: u64,
    us: f64,
    what: String,
    at: String,
}

fn ms(us: f64) -> String {
    format!("{:.3} ms", us / 1000.0)
}

/// The summary of a trace's JSON text; `source_line(file, line)` gives a
/// source line's text for the longest waits, if the file can be read.
pub fn summarize(text: &str, source_line: &dyn Fn(&str, usize) -> Option<String>) -> Result<String, String> {
    let v: Json = serde_json::from_str(text).map_err(|e| format!("not a trace file: {e}"))?;
    let events = match &v {
        Json::Object(o) => o.get("traceEvents").and_then(|e| e.as_array()).ok_or("not a trace file: no traceEvents")?,
        Json::Array(a) => a,
        _ => return Err("not a trace file: expected a JSON object or array".into()),
    };
    let mut workers: BTreeMap<u64, String> = BTreeMap::new();
    let mut runs: BTreeMap<u64, Vec<Run>> = BTreeMap::new();
    let mut names: BTreeMap<u64, String> = BTreeMap::new();
    let mut gc_us: BTreeMap<u64, f64> = BTreeMap::new();
    let (mut first, mut last) = (f64::INFINITY, 0f64);
    for e in events {
        let tid = e["tid"].as_u64().unwrap_or(0);
        let ts = e["ts"].as_f64().unwrap_or(0.0);
        let dur = e["dur"].as_f64().unwrap_or(0.0);
        match (e["ph"].as_str().unwrap_or(""), e["name"].as_str().unwrap_or("")) {
            ("M", "thread_name") => {
                workers.insert(tid, e["args"]["name"].as_str().unwrap_or("").to_string());
            }
            ("X", "GC") => *gc_us.entry(tid).or_default() += dur,
            ("X", _) if e["cat"] == "task" => {
                let a = &e["args"];
                let task = a["task"].as_u64().unwrap_or(0);
                // The function: in `args` if the writer put it there, else
                // the slice's name after "task N ".
                names.entry(task).or_insert_with(|| match a["function"].as_str() {
                    Some(f) => f.to_string(),
                    None => {
                        let name = e["name"].as_str().unwrap_or("");
                        name.splitn(3, ' ').nth(2).unwrap_or("?").to_string()
                    }
                });
                let s = |k: &str| a[k].as_str().unwrap_or("").to_string();
                runs.entry(task).or_default().push(Run {
                    start: ts,
                    end: ts + dur,
                    worker: tid,
                    stop: s("stop"),
                    reason: s("reason"),
                    wait: s("wait"),
                    at: s("at"),
                });
            }
            _ => {}
        }
        if e["ph"] != "M" {
            first = first.min(ts);
            last = last.max(ts + dur);
        }
    }
    if runs.is_empty() {
        return Err("the trace holds no task runs".into());
    }
    let span = (last - first).max(1e-3);
    let mut rows: BTreeMap<u64, TaskRow> = BTreeMap::new();
    let mut busy: BTreeMap<u64, (f64, u64)> = BTreeMap::new();
    let mut waits: Vec<WaitSpan> = Vec::new();
    let total_runs: usize = runs.values().map(|r| r.len()).sum();
    for (task, list) in runs.iter_mut() {
        list.sort_by(|a, b| a.start.total_cmp(&b.start));
        let row = rows.entry(*task).or_default();
        row.name = names.get(task).cloned().unwrap_or_default();
        for (i, r) in list.iter().enumerate() {
            row.runs += 1;
            row.run_us += r.end - r.start;
            let b = busy.entry(r.worker).or_default();
            b.0 += r.end - r.start;
            b.1 += 1;
            if let Some(next) = list.get(i + 1) {
                let gap = (next.start - r.end).max(0.0);
                let reason = if r.stop == "suspended" { r.reason.clone() } else { "runnable".into() };
                *row.waits.entry(reason).or_default() += gap;
                if r.stop == "suspended" {
                    waits.push(WaitSpan { task: *task, us: gap, what: r.wait.clone(), at: r.at.clone() });
                }
            }
        }
    }
    let mut out = String::new();
    out.push_str(&format!(
        "trace: {} on {} worker{}, {} task{}, {} run{}\n\n",
        ms(span),
        workers.len(),
        if workers.len() == 1 { "" } else { "s" },
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        total_runs,
        if total_runs == 1 { "" } else { "s" }
    ));
    out.push_str("tasks (by run time)\n");
    out.push_str(&format!("  {:<28}{:>8}{:>14}  wait time by reason\n", "task", "runs", "run time"));
    let mut order: Vec<(&u64, &TaskRow)> = rows.iter().collect();
    order.sort_by(|a, b| b.1.run_us.total_cmp(&a.1.run_us).then(a.0.cmp(b.0)));
    for (task, row) in order.iter().take(30) {
        let mut reasons: Vec<(&String, &f64)> = row.waits.iter().collect();
        reasons.sort_by(|a, b| b.1.total_cmp(a.1).then(a.0.cmp(b.0)));
        let waits = reasons.iter().map(|(k, v)| format!("{k} {}", ms(**v))).collect::<Vec<_>>().join(", ");
        let label = format!("task {task} {}", row.name);
        out.push_str(&format!(
            "  {:<28}{:>8}{:>14}  {}\n",
            label,
            row.runs,
            ms(row.run_us),
            if waits.is_empty() { "-".into() } else { waits }
        ));
    }
    if order.len() > 30 {
        out.push_str(&format!("  ... and {} more\n", order.len() - 30));
    }
    out.push_str("\nworkers\n");
    out.push_str(&format!("  {:<12}{:>8}{:>14}{:>14}{:>14}\n", "worker", "runs", "busy", "GC", "utilisation"));
    for (tid, name) in &workers {
        let (b, n) = busy.get(tid).copied().unwrap_or_default();
        let gc = gc_us.get(tid).copied().unwrap_or_default();
        out.push_str(&format!("  {:<12}{:>8}{:>14}{:>14}{:>13.1}%\n", name, n, ms(b), ms(gc), 100.0 * b / span));
    }
    waits.sort_by(|a, b| b.us.total_cmp(&a.us).then(a.task.cmp(&b.task)));
    if !waits.is_empty() {
        out.push_str("\nlongest waits\n");
        for w in waits.iter().take(10) {
            let name = rows.get(&w.task).map(|r| r.name.as_str()).unwrap_or("");
            out.push_str(&format!("  {:>12}  task {} {}: {}", ms(w.us), w.task, name, w.what));
            if !w.at.is_empty() {
                out.push_str(&format!(" at {}", w.at));
            }
            out.push('\n');
            if let Some(line) = site_line(&w.at).and_then(|(f, l)| source_line(f, l)) {
                out.push_str(&format!("{:>16}{}\n", "", line.trim()));
            }
        }
    }
    Ok(out)
}

/// `file:line:col` → (file, line).
fn site_line(at: &str) -> Option<(&str, usize)> {
    let mut parts = at.rsplitn(3, ':');
    let _col = parts.next()?;
    let line = parts.next()?.parse().ok()?;
    Some((parts.next()?, line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_adds_up_runs_waits_and_utilisation() {
        let trace = r#"{"traceEvents":[
{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"worker 0"}},
{"name":"task 1 <main>","cat":"task","ph":"X","pid":1,"tid":1,"ts":0,"dur":100,"args":{"task":1,"function":"<main>","stop":"suspended","reason":"channel","wait":"receiving on a channel","at":"a.raya:3:5"}},
{"name":"task 2 f","cat":"task","ph":"X","pid":1,"tid":1,"ts":100,"dur":400,"args":{"task":2,"stop":"completed"}},
{"name":"task 1 <main>","cat":"task","ph":"X","pid":1,"tid":1,"ts":600,"dur":400,"args":{"task":1,"function":"<main>","stop":"completed"}}
]}"#;
        let out = summarize(trace, &|f, l| (f == "a.raya" && l == 3).then(|| "  ch.receive();".into())).unwrap();
        let expected = "trace: 1.000 ms on 1 worker, 2 tasks, 3 runs

tasks (by run time)
  task                            runs      run time  wait time by reason
  task 1 <main>                      2      0.500 ms  channel 0.500 ms
  task 2 f                           1      0.400 ms  -

workers
  worker          runs          busy            GC   utilisation
  worker 0           3      0.900 ms      0.000 ms         90.0%

longest waits
      0.500 ms  task 1 <main>: receiving on a channel at a.raya:3:5
                ch.receive();
";
        assert_eq!(out, expected);
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        assert!(summarize("nope", &|_, _| None).is_err());
        assert!(summarize("{}", &|_, _| None).is_err());
        assert!(summarize(r#"{"traceEvents":[]}"#, &|_, _| None).is_err());
        assert!(summarize(r#"[{"ph":"X","cat":"task","ts":"x"}]"#, &|_, _| None).is_ok());
    }
}
