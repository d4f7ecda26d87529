//! The HTML report (`hetsched report`, `hetsched reproduce NAME --report`, Python's
//! `hs.report`): one self-contained file — inline CSS, inline SVG charts drawn by
//! [`svg`], a few lines of our own script for tooltips — that opens offline with no
//! network request.
//!
//! Inputs are read as they are on disk, so the report shows real data: a run's result
//! JSON (`hetsched run --json`; with `--timeline` it also holds the [`timeline`] the
//! per-CPU Gantt, frequency, utilization and overutilized plots need), a reproduction's
//! JSON report (`hetsched reproduce NAME --json`), or a sweep's directory
//! (`hetsched sweep -o DIR`). The same inputs give the same bytes: nothing depends on the
//! time, the machine or the order of a hash map, and the optional `generated` line is
//! only what the caller passes.

pub mod svg;
pub mod timeline;

use crate::sweep;
use crate::Error;
use serde_json::{Map, Value};
use std::fmt::Write;
use std::path::Path;
use svg::{colour, esc, num, Chart};

/// One section's source.
#[derive(Debug, Clone)]
pub enum Input {
    /// A run's result JSON (`hetsched run --json`), named by its file.
    Run {
        /// What the section is called (the file name).
        name: String,
        /// The result.
        result: Value,
    },
    /// A reproduction's JSON report (`hetsched reproduce NAME --json`).
    Reproduce {
        /// The report.
        report: Value,
    },
    /// A sweep's directory.
    Sweep {
        /// The directory as given.
        name: String,
        /// Its table.
        table: sweep::Table,
    },
}

/// What the report says about itself.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    /// The page's title (default: "hetsched report").
    pub title: Option<String>,
    /// A line saying when or how it was generated, shown as given (none by default, so
    /// the bytes depend only on the inputs).
    pub generated: Option<String>,
}

fn bad(path: &str, msg: impl std::fmt::Display) -> Error {
    Error::Report(format!("{path}: {msg}"))
}

/// Reads one input: a sweep directory (it holds `experiment.json`), or a JSON file that
/// is a run's result (`tasks`, `cpus`) or a reproduction's report (`experiment`,
/// `criteria`).
pub fn load_input(path: &Path) -> Result<Input, Error> {
    let name = path.display().to_string();
    if path.is_dir() {
        if !path.join(sweep::MANIFEST).exists() {
            return Err(bad(
                &name,
                "a directory without experiment.json: expected the output of `hetsched sweep`",
            ));
        }
        let table = sweep::load(path)?;
        return Ok(Input::Sweep { name, table });
    }
    let text = std::fs::read_to_string(path).map_err(|err| Error::Io {
        path: name.clone(),
        err,
    })?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| bad(&format!("{name}:{}:{}", e.line(), e.column()), e))?;
    input_from_json(&name, v)
}

/// The report of the files and directories `paths` (each read by [`load_input`]).
pub fn render_paths(paths: &[impl AsRef<Path>], opts: &ReportOptions) -> Result<String, Error> {
    if paths.is_empty() {
        return Err(Error::Report(
            "nothing to report: give result JSON files, reproduction reports or sweep directories"
                .into(),
        ));
    }
    let inputs = paths
        .iter()
        .map(|p| load_input(p.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(render(&inputs, opts))
}

/// Writes `html` to `path` (atomically: a temporary file renamed over it).
pub fn write(path: &Path, html: &str) -> Result<(), Error> {
    sweep::write_atomic(path, html)
}

/// An input from JSON already read (a run's result or a reproduction's report).
pub fn input_from_json(name: &str, v: Value) -> Result<Input, Error> {
    if v.get("experiment").is_some() && v.get("criteria").is_some() {
        Ok(Input::Reproduce { report: v })
    } else if v.get("tasks").is_some() && v.get("cpus").is_some() {
        Ok(Input::Run {
            name: name.to_string(),
            result: v,
        })
    } else {
        Err(bad(
            name,
            "not a run's result (`hetsched run --json`) nor a reproduction's report (`hetsched reproduce --json`)",
        ))
    }
}

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1000px;padding:0 16px 40px;color:#222}
h1{font-size:24px}h2{font-size:20px;border-bottom:2px solid #ddd;margin-top:40px}h3{font-size:16px;margin-top:24px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}th,td{border:1px solid #ccc;padding:2px 8px;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left}.pass{color:#1a7f37;font-weight:600}.fail{color:#c62828;font-weight:600}
.note{color:#555;font-size:13px;overflow-wrap:anywhere}nav a{margin-right:12px}
svg.plot{display:block;margin:8px 0;max-width:100%;height:auto}
svg .t{font-weight:600;font-size:13px}svg text{font-size:11px;fill:#333}svg .xt,svg .xl{text-anchor:middle}svg .yt{text-anchor:end}
svg .yl{text-anchor:middle}svg .frame{fill:none;stroke:#999}svg .grid{stroke:#eee}svg .ln{fill:none;stroke-width:1.5}
svg .mean{stroke-width:2.5}svg .cell{text-anchor:middle;font-size:10px}
#tip{position:fixed;pointer-events:none;background:#222;color:#fff;padding:3px 6px;border-radius:3px;font-size:12px;display:none}";

/// Our own tooltip: the `<title>` of the mark under the pointer, beside it.
const SCRIPT: &str = "(function(){var t=document.getElementById('tip');
document.addEventListener('mousemove',function(e){var n=e.target,s=n&&n.querySelector&&n.querySelector(':scope>title');
if(s){t.textContent=s.textContent;t.style.left=(e.clientX+12)+'px';t.style.top=(e.clientY+12)+'px';t.style.display='block';}
else{t.style.display='none';}});})();";

/// The report of `inputs`, in order, as one HTML document.
pub fn render(inputs: &[Input], opts: &ReportOptions) -> String {
    let title = opts.title.as_deref().unwrap_or("hetsched report");
    let mut body = String::new();
    let mut nav = String::new();
    for (i, input) in inputs.iter().enumerate() {
        let id = format!("s{i}");
        let (heading, section) = match input {
            Input::Run { name, result } => (format!("Run: {name}"), run_section(result)),
            Input::Reproduce { report } => (
                format!(
                    "Reproduction: {}",
                    report
                        .get("experiment")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                ),
                reproduce_section(report),
            ),
            Input::Sweep { name, table } => (
                format!("Sweep: {} ({name})", table.name),
                sweep_section(table),
            ),
        };
        let _ = write!(nav, "<a href=\"#{id}\">{}</a>", esc(&heading));
        let _ = write!(
            body,
            "<section id=\"{id}\"><h2>{}</h2>\n{section}</section>\n",
            esc(&heading)
        );
    }
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title>\
<meta name=\"generator\" content=\"hetsched {v}\"><style>{STYLE}</style></head><body>\n\
<h1>{t}</h1><p class=\"note\">hetsched {v}{g}. Hover a mark for its value.</p><nav>{nav}</nav>\n{body}\
<div id=\"tip\"></div><script>{SCRIPT}</script></body></html>\n",
        t = esc(title),
        v = env!("CARGO_PKG_VERSION"),
        g = opts
            .generated
            .as_deref()
            .map(|g| format!(" · {}", esc(g)))
            .unwrap_or_default(),
    );
    out
}

/// A table: header cells, rows; the first `left` columns are left-aligned.
fn table(head: &[String], rows: &[Vec<String>], left: usize) -> String {
    let mut s = String::from("<table><thead><tr>");
    for (i, h) in head.iter().enumerate() {
        let _ = write!(
            s,
            "<th{}>{}</th>",
            if i < left { " class=\"l\"" } else { "" },
            esc(h)
        );
    }
    s.push_str("</tr></thead><tbody>");
    for r in rows {
        s.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            // cells are escaped text, except a PASS/FAIL verdict
            let cell = match c.as_str() {
                "PASS" => "<span class=\"pass\">PASS</span>".to_string(),
                "FAIL" => "<span class=\"fail\">FAIL</span>".to_string(),
                _ => esc(c),
            };
            let _ = write!(
                s,
                "<td{}>{cell}</td>",
                if i < left { " class=\"l\"" } else { "" }
            );
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>\n");
    s
}

fn heads(h: &[&str]) -> Vec<String> {
    h.iter().map(|s| s.to_string()).collect()
}

fn f64_at(v: &Value, path: &[&str]) -> Option<f64> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    cur.as_f64()
}

fn cell(v: Option<f64>) -> String {
    v.map(num).unwrap_or_else(|| "–".into())
}

fn arr(v: &Value, key: &str) -> Vec<Value> {
    v.get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

// ---------------------------------------------------------------- a run

fn run_section(r: &Value) -> String {
    let mut s = String::new();
    let text = |k: &str| {
        r.get(k)
            .map(|v| v.as_str().map_or(v.to_string(), String::from))
            .unwrap_or_default()
    };
    let kernel = r
        .pointer("/settings/options/kernel")
        .map(|v| v.as_str().map_or(v.to_string(), String::from))
        .unwrap_or_default();
    s.push_str(&table(
        &heads(&[
            "platform",
            "workload",
            "kernel",
            "seed",
            "duration s",
            "energy",
            "overutilized %",
            "OU triggers",
            "context switches",
        ]),
        &[vec![
            text("platform"),
            text("workload"),
            kernel,
            text("seed"),
            cell(f64_at(r, &["duration_s"])),
            format!(
                "{} {}",
                cell(f64_at(r, &["energy", "total"])),
                text_at(r, "/energy/units")
            ),
            cell(f64_at(r, &["overutilized", "pct"])),
            cell(f64_at(r, &["overutilized", "triggers"])),
            cell(f64_at(r, &["engine", "context_switches"])),
        ]],
        3,
    ));
    let tasks = arr(r, "tasks");
    s.push_str("<h3>Tasks</h3>");
    let rows: Vec<Vec<String>> = tasks
        .iter()
        .map(|t| {
            vec![
                text_at(t, "/comm"),
                text_at(t, "/pid"),
                cell(f64_at(t, &["cpu_time_s"])),
                cell(f64_at(t, &["wait_time_s"])),
                cell(f64_at(t, &["wakeup_latency_us", "mean"])),
                cell(f64_at(t, &["wakeup_latency_us", "p99"])),
                cell(f64_at(t, &["completion_s"])),
                cell(f64_at(t, &["migrations"])),
            ]
        })
        .collect();
    s.push_str(&table(
        &heads(&[
            "task",
            "pid",
            "CPU s",
            "wait s",
            "latency mean µs",
            "latency p99 µs",
            "completion s",
            "migrations",
        ]),
        &rows,
        1,
    ));
    let cpus = arr(r, "cpus");
    let rows: Vec<Vec<String>> = cpus
        .iter()
        .map(|c| {
            vec![
                text_at(c, "/cpu"),
                cell(f64_at(c, &["busy_s"])),
                cell(f64_at(c, &["idle_s"])),
                c.get("freq_residency_s")
                    .and_then(Value::as_object)
                    .map(|m| {
                        m.iter()
                            .filter(|(_, v)| v.as_f64().unwrap_or(0.0) > 0.0)
                            .map(|(k, v)| {
                                format!(
                                    "{} MHz {} s",
                                    num(k.parse::<f64>().unwrap_or(0.0) / 1000.0),
                                    num(v.as_f64().unwrap_or(0.0))
                                )
                            })
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_default(),
            ]
        })
        .collect();
    s.push_str("<h3>CPUs</h3>");
    s.push_str(&table(
        &heads(&["CPU", "busy s", "idle s", "time per frequency"]),
        &rows,
        0,
    ));

    let pd_of: Vec<usize> = arr(&r["energy"], "cpus")
        .iter()
        .map(|c| c.get("pd").and_then(Value::as_u64).unwrap_or(0) as usize)
        .collect();
    let comm_of = |pid: u64| {
        tasks
            .iter()
            .find(|t| t.get("pid").and_then(Value::as_u64) == Some(pid))
            .map(|t| text_at(t, "/comm"))
    };
    match r.get("timeline").and_then(|t| serde_json::from_value::<TimelineView>(t.clone()).ok()) {
        Some(tl) => {
            s.push_str("<h3>Timeline</h3>");
            s.push_str(&gantt(&tl));
            s.push_str(&freq_plot(&tl, &pd_of));
            s.push_str(&util_plot(&tl, &tasks));
            s.push_str(&ou_plot(&tl));
            let _ = write!(
                s,
                "<p class=\"note\">Downsampled to {} buckets of {} ms (at most {}; docs/report.md): per bucket the task that ran longest (its opacity the busy fraction), the mean frequency, the highest util.</p>",
                tl.buckets,
                num(tl.bucket_s * 1e3),
                timeline::MAX_BUCKETS
            );
        }
        None => s.push_str(
            "<p class=\"note\">This result has no timeline: run with <code>hetsched run --timeline --json …</code> (or <code>--report</code>) for the per-CPU Gantt, frequency, utilization and overutilized plots.</p>",
        ),
    }
    // residency heatmap from the result's per-task residency
    let ncpu = cpus.len();
    let rows: Vec<String> = tasks.iter().map(|t| text_at(t, "/comm")).collect();
    let vals: Vec<Vec<f64>> = tasks
        .iter()
        .map(|t| {
            let v: Vec<f64> = arr(t, "residency_s")
                .iter()
                .map(|x| x.as_f64().unwrap_or(0.0))
                .collect();
            (0..ncpu)
                .map(|c| v.get(c).copied().unwrap_or(0.0))
                .collect()
        })
        .collect();
    let cols: Vec<String> = (0..ncpu).map(|c| format!("CPU{c}")).collect();
    if !rows.is_empty() {
        s.push_str(&svg::heatmap(
            "Residency: running time per task and CPU (s)",
            &rows,
            &cols,
            &vals,
            "s",
        ));
    }
    s.push_str(&energy_plot(r));
    let _ = comm_of;
    s
}

fn text_at(v: &Value, ptr: &str) -> String {
    v.pointer(ptr)
        .map(|x| x.as_str().map_or(x.to_string(), String::from))
        .unwrap_or_default()
}

/// The timeline as the report reads it back from JSON.
#[derive(Debug, serde::Deserialize)]
struct TimelineView {
    bucket_s: f64,
    buckets: usize,
    comms: std::collections::BTreeMap<u32, String>,
    cpus: Vec<CpuView>,
    tasks: Vec<TaskView>,
    overutilized: Vec<f64>,
}

#[derive(Debug, serde::Deserialize)]
struct CpuView {
    cpu: usize,
    task: Vec<u32>,
    busy: Vec<f64>,
    freq_khz: Vec<u64>,
    idle_deep: Vec<f64>,
    util: Vec<u64>,
}

#[derive(Debug, serde::Deserialize)]
struct TaskView {
    pid: u32,
    comm: String,
    util: Vec<u64>,
    util_est: Vec<u64>,
}

fn gantt(tl: &TimelineView) -> String {
    let n = tl.cpus.len().max(1);
    let t1 = tl.buckets as f64 * tl.bucket_s;
    let mut c = Chart::new(
        "Per-CPU timeline: tasks (colour), frequency (grey strip: darker is faster), deep idle (hatched)",
        "time, s",
        "",
        (0.0, t1),
        (0.0, n as f64),
        (n as f64 * 28.0).max(60.0),
    );
    c.x_ticks();
    // colours by pid, in pid order
    let pids: Vec<u32> = tl.comms.keys().copied().collect();
    let col = |pid: u32| colour(pids.iter().position(|p| *p == pid).unwrap_or(0));
    let fmax = tl
        .cpus
        .iter()
        .flat_map(|c| c.freq_khz.iter())
        .copied()
        .max()
        .unwrap_or(1)
        .max(1);
    let mut used = std::collections::BTreeSet::new();
    for cpu in &tl.cpus {
        let y = (n - 1 - cpu.cpu) as f64;
        c.raw(&format!(
            "<text class=\"yt\" x=\"66\" y=\"{:.1}\">CPU{}</text>",
            c.py(y + 0.5) + 4.0,
            cpu.cpu
        ));
        // merge equal neighbouring buckets into one mark
        let mut i = 0;
        while i < cpu.task.len() {
            let (pid, busy) = (cpu.task[i], (cpu.busy[i] * 10.0).round());
            let mut j = i + 1;
            while j < cpu.task.len() && cpu.task[j] == pid && (cpu.busy[j] * 10.0).round() == busy {
                j += 1;
            }
            let (a, b) = (i as f64 * tl.bucket_s, j as f64 * tl.bucket_s);
            if pid != 0 {
                used.insert(pid);
                let name = tl.comms.get(&pid).map_or("?", |s| s.as_str());
                c.rect(
                    (a, b),
                    (y + 0.3, y + 0.95),
                    col(pid),
                    (busy / 10.0).max(0.15),
                    &format!(
                        "CPU{} {}–{} s: {name} ({pid}), busy {}%",
                        cpu.cpu,
                        num(a),
                        num(b),
                        num(busy * 10.0)
                    ),
                );
            }
            i = j;
        }
        let mut i = 0;
        while i < cpu.freq_khz.len() {
            let f = cpu.freq_khz[i];
            let mut j = i + 1;
            while j < cpu.freq_khz.len() && cpu.freq_khz[j] == f {
                j += 1;
            }
            if f > 0 {
                let (a, b) = (i as f64 * tl.bucket_s, j as f64 * tl.bucket_s);
                c.rect(
                    (a, b),
                    (y + 0.08, y + 0.25),
                    "#555",
                    0.1 + 0.8 * f as f64 / fmax as f64,
                    &format!(
                        "CPU{} {}–{} s: {} MHz",
                        cpu.cpu,
                        num(a),
                        num(b),
                        num(f as f64 / 1000.0)
                    ),
                );
            }
            i = j;
        }
        let mut i = 0;
        while i < cpu.idle_deep.len() {
            if cpu.idle_deep[i] < 0.5 {
                i += 1;
                continue;
            }
            let mut j = i + 1;
            while j < cpu.idle_deep.len() && cpu.idle_deep[j] >= 0.5 {
                j += 1;
            }
            let (a, b) = (i as f64 * tl.bucket_s, j as f64 * tl.bucket_s);
            c.rect(
                (a, b),
                (y + 0.3, y + 0.95),
                "url(#hatch)",
                1.0,
                &format!(
                    "CPU{} {}–{} s: mostly in a deep idle state",
                    cpu.cpu,
                    num(a),
                    num(b)
                ),
            );
            i = j;
        }
    }
    c.raw("<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\"><path d=\"M0 6L6 0\" stroke=\"#bbb\"/></pattern></defs>");
    for pid in &used {
        c.legend(tl.comms.get(pid).map_or("?", |s| s.as_str()), col(*pid));
    }
    c.finish()
}

fn freq_plot(tl: &TimelineView, pd_of: &[usize]) -> String {
    let t1 = tl.buckets as f64 * tl.bucket_s;
    let mut pds: Vec<(usize, usize)> = Vec::new(); // (pd, first cpu)
    for cpu in &tl.cpus {
        let pd = pd_of.get(cpu.cpu).copied().unwrap_or(cpu.cpu);
        if !pds.iter().any(|p| p.0 == pd) {
            pds.push((pd, cpu.cpu));
        }
    }
    let y = svg::range(
        tl.cpus
            .iter()
            .flat_map(|c| c.freq_khz.iter().map(|f| *f as f64 / 1000.0)),
        true,
    );
    let mut c = Chart::new(
        "Frequency per performance domain (mean per bucket)",
        "time, s",
        "MHz",
        (0.0, t1),
        y,
        180.0,
    );
    c.x_ticks();
    for (k, (pd, cpu)) in pds.iter().enumerate() {
        let Some(s) = tl.cpus.iter().find(|c| c.cpu == *cpu) else {
            continue;
        };
        let pts: Vec<(f64, f64)> = s
            .freq_khz
            .iter()
            .enumerate()
            .filter(|(_, f)| **f > 0)
            .map(|(i, f)| (i as f64 * tl.bucket_s, *f as f64 / 1000.0))
            .collect();
        let name = format!("pd{pd} (CPU{cpu})");
        c.line(&pts, colour(k), true, &name);
        c.legend(&name, colour(k));
    }
    c.finish()
}

fn util_plot(tl: &TimelineView, tasks: &[Value]) -> String {
    let t1 = tl.buckets as f64 * tl.bucket_s;
    // the six workload tasks with the most CPU time, then every CPU
    let mut ranked: Vec<(f64, u32)> = tasks
        .iter()
        .filter_map(|t| {
            Some((
                t.get("cpu_time_s")?.as_f64()?,
                t.get("pid")?.as_u64()? as u32,
            ))
        })
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let chosen: Vec<&TaskView> = ranked
        .iter()
        .filter_map(|(_, pid)| tl.tasks.iter().find(|t| t.pid == *pid))
        .filter(|t| t.util.iter().any(|u| *u > 0))
        .take(6)
        .collect();
    let mut out = String::new();
    let mut c = Chart::new(
        "util_avg (solid) and util_est (dotted) of the busiest tasks (max per bucket)",
        "time, s",
        "util (of 1024)",
        (0.0, t1),
        (0.0, 1100.0),
        200.0,
    );
    c.x_ticks();
    for (k, t) in chosen.iter().enumerate() {
        let pts = |v: &[u64]| -> Vec<(f64, f64)> {
            v.iter()
                .enumerate()
                .map(|(i, u)| (i as f64 * tl.bucket_s, *u as f64))
                .collect()
        };
        c.line(
            &pts(&t.util),
            colour(k),
            true,
            &format!("{} util_avg", t.comm),
        );
        c.raw("<g stroke-dasharray=\"2 2\">");
        c.line(
            &pts(&t.util_est),
            colour(k),
            true,
            &format!("{} util_est", t.comm),
        );
        c.raw("</g>");
        c.legend(&t.comm, colour(k));
    }
    out.push_str(&c.finish());
    let mut c = Chart::new(
        "util_avg of each CPU's cfs_rq (max per bucket)",
        "time, s",
        "util (of 1024)",
        (0.0, t1),
        (0.0, 1100.0),
        200.0,
    );
    c.x_ticks();
    for (k, cpu) in tl.cpus.iter().enumerate() {
        let pts: Vec<(f64, f64)> = cpu
            .util
            .iter()
            .enumerate()
            .map(|(i, u)| (i as f64 * tl.bucket_s, *u as f64))
            .collect();
        let name = format!("CPU{}", cpu.cpu);
        c.line(&pts, colour(k), true, &name);
        c.legend(&name, colour(k));
    }
    out.push_str(&c.finish());
    out
}

fn ou_plot(tl: &TimelineView) -> String {
    let t1 = tl.buckets as f64 * tl.bucket_s;
    let mut c = Chart::new(
        "Overutilized: fraction of each bucket the root domain was overutilized",
        "time, s",
        "fraction",
        (0.0, t1),
        (0.0, 1.05),
        80.0,
    );
    c.x_ticks();
    let mut i = 0;
    let v = &tl.overutilized;
    while i < v.len() {
        if v[i] <= 0.0 {
            i += 1;
            continue;
        }
        let q = (v[i] * 20.0).round();
        let mut j = i + 1;
        while j < v.len() && v[j] > 0.0 && (v[j] * 20.0).round() == q {
            j += 1;
        }
        let (a, b) = (i as f64 * tl.bucket_s, j as f64 * tl.bucket_s);
        c.rect(
            (a, b),
            (0.0, v[i]),
            "#c62828",
            0.8,
            &format!(
                "{}–{} s: overutilized {}%",
                num(a),
                num(b),
                num(v[i] * 100.0)
            ),
        );
        i = j;
    }
    c.legend("overutilized", "#c62828");
    c.finish()
}

fn energy_plot(r: &Value) -> String {
    let series = arr(&r["energy"], "series");
    if series.is_empty() {
        return String::new();
    }
    let bucket = f64_at(r, &["energy", "bucket_s"]).unwrap_or(1.0).max(1e-9);
    let npd = series.iter().map(|p| arr(p, "pd").len()).max().unwrap_or(0);
    let units = text_at(r, "/energy/units");
    let t1 = series
        .iter()
        .filter_map(|p| f64_at(p, &["t_s"]))
        .fold(0.0, f64::max)
        + bucket;
    let y = svg::range(
        series
            .iter()
            .flat_map(|p| arr(p, "pd").into_iter().filter_map(|v| v.as_f64()))
            .map(|e| e / bucket),
        true,
    );
    let mut c = Chart::new(
        &format!(
            "Power per performance domain (energy per {} s bucket ÷ bucket; {units})",
            num(bucket)
        ),
        "time, s",
        "power",
        (0.0, t1),
        y,
        180.0,
    );
    c.x_ticks();
    for pd in 0..npd {
        let pts: Vec<(f64, f64)> = series
            .iter()
            .filter_map(|p| {
                Some((
                    f64_at(p, &["t_s"])?,
                    arr(p, "pd").get(pd)?.as_f64()? / bucket,
                ))
            })
            .collect();
        let name = format!("pd{pd}");
        c.line(&pts, colour(pd), true, &name);
        c.legend(&name, colour(pd));
    }
    c.finish()
}

// ---------------------------------------------------------------- a reproduction

fn scalar_keys(cases: &Map<String, Value>) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for m in cases.values() {
        if let Some(o) = m.as_object() {
            for (k, v) in o {
                if v.is_number() && !keys.contains(k) {
                    keys.push(k.clone());
                }
            }
        }
    }
    keys
}

/// The leaves `results[variant]...[case]` whose values are metric objects, flattened as
/// `(variant, case path, metrics)`: schedfreq nests class/governor/row.
fn leaves<'a>(
    v: &'a Value,
    path: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, &'a Map<String, Value>)>,
) {
    let Some(o) = v.as_object() else { return };
    if o.values().any(Value::is_number) || o.is_empty() {
        out.push((path.clone(), o));
        return;
    }
    for (k, c) in o {
        path.push(k.clone());
        leaves(c, path, out);
        path.pop();
    }
}

fn reproduce_section(rep: &Value) -> String {
    let mut s = String::new();
    let exp = rep.get("experiment").and_then(Value::as_str).unwrap_or("?");
    let _ = write!(
        s,
        "<p>{} runs per case, base seed {}. Measured beside the series' own figures (seed).</p>",
        text_at(rep, "/runs"),
        text_at(rep, "/seed")
    );
    // criteria
    let rows: Vec<Vec<String>> = arr(rep, "criteria")
        .iter()
        .map(|c| {
            vec![
                text_at(c, "/name"),
                cell(f64_at(c, &["measured"])),
                text_at(c, "/threshold"),
                if c.get("pass").and_then(Value::as_bool) == Some(true) {
                    "PASS".into()
                } else {
                    "FAIL".into()
                },
            ]
        })
        .collect();
    s.push_str("<h3>Criteria</h3>");
    s.push_str(&table(
        &heads(&["criterion", "measured", "threshold", "verdict"]),
        &rows,
        1,
    ));
    // results beside the seed
    let empty = Value::Object(Map::new());
    let results = rep.get("results").unwrap_or(&empty);
    let seed = rep.get("seed_reference").unwrap_or(&empty);
    let mut ls = Vec::new();
    leaves(results, &mut Vec::new(), &mut ls);
    let variants: Vec<String> = results
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    // rows: (case path without the variant, metric)
    let mut cases: Vec<Vec<String>> = Vec::new();
    for (p, _) in &ls {
        let c = p[1..].to_vec();
        if !cases.contains(&c) {
            cases.push(c);
        }
    }
    let mut head = heads(&["case", "metric"]);
    for v in &variants {
        head.push(v.clone());
        head.push(format!("{v} (seed)"));
    }
    let mut rows = Vec::new();
    for case in &cases {
        let mut ms = Map::new();
        for v in &variants {
            let mut ptr = format!("/{}", esc_ptr(v));
            for c in case {
                ptr.push('/');
                ptr.push_str(&esc_ptr(c));
            }
            if let Some(m) = results.pointer(&ptr) {
                ms.insert(v.clone(), m.clone());
            }
        }
        for key in scalar_keys(&ms) {
            let mut row = vec![case.join(" / "), key.clone()];
            for v in &variants {
                let mut ptr = format!("/{}", esc_ptr(v));
                for c in case {
                    ptr.push('/');
                    ptr.push_str(&esc_ptr(c));
                }
                ptr.push('/');
                ptr.push_str(&esc_ptr(&key));
                row.push(cell(results.pointer(&ptr).and_then(Value::as_f64)));
                row.push(cell(seed.pointer(&ptr).and_then(Value::as_f64)));
            }
            rows.push(row);
        }
    }
    s.push_str("<h3>Results beside the seed</h3>");
    s.push_str(&table(&head, &rows, 2));
    s.push_str("<h3>Plots</h3>");
    s.push_str(&match exp {
        "misfit" => misfit_plots(results, &variants),
        "fairness" => fairness_plots(results, &variants),
        "overutilized" => overutilized_plots(results, &variants),
        "schedfreq" => schedfreq_plots(results),
        "hmp" => hmp_plots(results, &variants),
        _ => String::new(),
    });
    let notes = arr(rep, "notes");
    if !notes.is_empty() {
        s.push_str("<h3>Notes</h3><ul class=\"note\">");
        for n in notes {
            let _ = write!(s, "<li>{}</li>", esc(n.as_str().unwrap_or_default()));
        }
        s.push_str("</ul>");
    }
    s
}

fn esc_ptr(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

fn case_names(results: &Value, variants: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in variants {
        if let Some(o) = results.get(v).and_then(Value::as_object) {
            for k in o.keys() {
                if !out.contains(k) {
                    out.push(k.clone());
                }
            }
        }
    }
    out
}

/// misfit: every unpinned task's completion time in every run, per platform and variant.
fn misfit_plots(results: &Value, variants: &[String]) -> String {
    let cases = case_names(results, variants);
    let series: Vec<(String, Vec<Vec<f64>>)> = variants
        .iter()
        .map(|v| {
            let per_case = cases
                .iter()
                .map(|c| {
                    arr(&results[v][c], "per_run_completion_s")
                        .iter()
                        .flat_map(|run| run.as_array().cloned().unwrap_or_default())
                        .filter_map(|x| x.as_f64())
                        .collect()
                })
                .collect();
            (v.clone(), per_case)
        })
        .collect();
    svg::strips(
        "Completion time of each task in each run (the bar: the mean)",
        "completion, s",
        &cases,
        &series,
    )
}

/// fairness: the ratio's mean with ±sd and the worst run, per case and variant.
fn fairness_plots(results: &Value, variants: &[String]) -> String {
    let cases: Vec<String> = case_names(results, variants)
        .into_iter()
        .filter(|c| c.ends_with("threads"))
        .collect();
    let mut series = Vec::new();
    for v in variants {
        let avg: Vec<f64> = cases
            .iter()
            .map(|c| f64_at(results, &[v, c, "ratio_avg_pct"]).unwrap_or(f64::NAN))
            .collect();
        let wh: Vec<(f64, f64)> = cases
            .iter()
            .map(|c| {
                let a = f64_at(results, &[v, c, "ratio_avg_pct"]).unwrap_or(f64::NAN);
                let sd = f64_at(results, &[v, c, "ratio_sd_pct"]).unwrap_or(0.0);
                let worst = f64_at(results, &[v, c, "ratio_worst_pct"]).unwrap_or(a - sd);
                (worst.min(a - sd), a + sd)
            })
            .collect();
        series.push((v.clone(), avg, Some(wh)));
    }
    let mut s = svg::bars(
        "Fairness ratio: mean (bar), whisker from the worst run (or −sd) to +sd",
        "ratio %",
        &cases,
        &series,
    );
    let hb: Vec<String> = case_names(results, variants)
        .into_iter()
        .filter(|c| c.starts_with("hackbench"))
        .collect();
    if !hb.is_empty() {
        let series: Vec<svg::BarSeries> = variants
            .iter()
            .map(|v| {
                (
                    v.clone(),
                    hb.iter()
                        .map(|c| f64_at(results, &[v, c, "time_s"]).unwrap_or(f64::NAN))
                        .collect(),
                    None,
                )
            })
            .collect();
        s.push_str(&svg::bars("hackbench time", "s", &hb, &series));
    }
    s
}

/// overutilized: OU % per case and variant, and the rt-app test's residency heatmaps.
fn overutilized_plots(results: &Value, variants: &[String]) -> String {
    let cases: Vec<String> = case_names(results, variants)
        .into_iter()
        .filter(|c| !c.ends_with("rtapp"))
        .collect();
    let series: Vec<svg::BarSeries> = variants
        .iter()
        .map(|v| {
            (
                v.clone(),
                cases
                    .iter()
                    .map(|c| f64_at(results, &[v, c, "ou_pct"]).unwrap_or(f64::NAN))
                    .collect(),
                None,
            )
        })
        .collect();
    let mut s = svg::bars("Time overutilized per case", "OU %", &cases, &series);
    for v in variants {
        for c in case_names(results, variants)
            .iter()
            .filter(|c| c.ends_with("rtapp"))
        {
            let Some(res) = results[v][c].get("residency_s").and_then(Value::as_object) else {
                continue;
            };
            let tasks: Vec<String> = res.keys().cloned().collect();
            let ncpu = res
                .values()
                .map(|x| x.as_array().map_or(0, Vec::len))
                .max()
                .unwrap_or(0);
            let vals: Vec<Vec<f64>> = res
                .values()
                .map(|x| {
                    let a = x.as_array().cloned().unwrap_or_default();
                    (0..ncpu)
                        .map(|i| a.get(i).and_then(Value::as_f64).unwrap_or(0.0))
                        .collect()
                })
                .collect();
            let cols: Vec<String> = (0..ncpu).map(|i| format!("CPU{i}")).collect();
            s.push_str(&svg::heatmap(
                &format!("{c}, {v}: residency per task and CPU (s)"),
                &tasks,
                &cols,
                &vals,
                "s",
            ));
        }
    }
    s
}

/// schedfreq: per scheduling class, overruns (summed over the rows) and the mean
/// overhead per governor.
fn schedfreq_plots(results: &Value) -> String {
    let mut s = String::new();
    let Some(classes) = results.as_object() else {
        return s;
    };
    for (class, govs) in classes {
        let Some(govs) = govs.as_object() else {
            continue;
        };
        let names: Vec<String> = govs.keys().cloned().collect();
        let or: Vec<f64> = govs
            .values()
            .map(|rows| {
                rows.as_object().map_or(0.0, |r| {
                    r.values().filter_map(|m| f64_at(m, &["overruns"])).sum()
                })
            })
            .collect();
        let oh: Vec<f64> = govs
            .values()
            .map(|rows| {
                let v: Vec<f64> = rows.as_object().map_or(Vec::new(), |r| {
                    r.values()
                        .filter_map(|m| f64_at(m, &["overhead_pct"]))
                        .collect()
                });
                if v.is_empty() {
                    f64::NAN
                } else {
                    v.iter().sum::<f64>() / v.len() as f64
                }
            })
            .collect();
        s.push_str(&svg::bars(
            &format!("{class}: overruns (OR), all rows"),
            "overruns",
            &names,
            &[("OR".into(), or, None)],
        ));
        s.push_str(&svg::bars(
            &format!("{class}: overhead (OH), mean over rows"),
            "overhead %",
            &names,
            &[("OH".into(), oh, None)],
        ));
    }
    s
}

/// hmp: the distribution of each thread's execution time per run, smp against hmp.
fn hmp_plots(results: &Value, variants: &[String]) -> String {
    let threads: Vec<String> = case_names(results, variants);
    let shown: Vec<String> = if threads.iter().any(|t| t == "Display") {
        vec!["Display".into()]
    } else {
        threads.into_iter().take(1).collect()
    };
    let series: Vec<(String, Vec<Vec<f64>>)> = variants
        .iter()
        .map(|v| {
            (
                v.clone(),
                shown
                    .iter()
                    .map(|t| {
                        arr(&results[v][t], "per_run_s")
                            .iter()
                            .filter_map(Value::as_f64)
                            .collect()
                    })
                    .collect(),
            )
        })
        .collect();
    svg::strips(
        "Execution time per run (each dot a run; the bar: the mean)",
        "CPU time, s",
        &shown,
        &series,
    )
}

// ---------------------------------------------------------------- a sweep

/// The rows grouped by the swept parameters (the seed left out): each group's size and
/// its metrics' means over the seeds, as `hetsched sweep` prints them; failed points
/// listed under it.
fn sweep_table(t: &sweep::Table, swept: &[usize]) -> String {
    const SHOWN: &[&str] = &[
        "completion_max_s",
        "latency_p99_max_us",
        "migrations",
        "energy",
        "overutilized_pct",
    ];
    let mut groups: Vec<(Vec<String>, Vec<&sweep::Row>)> = Vec::new();
    for r in &t.rows {
        let key: Vec<String> = swept
            .iter()
            .map(|&c| sweep::experiment::set_text(&r.params[c]))
            .collect();
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    let idx: Vec<usize> = SHOWN
        .iter()
        .filter_map(|m| sweep::METRICS.iter().position(|(n, _)| n == m))
        .collect();
    let mut head: Vec<String> = swept.iter().map(|&c| t.columns[c].clone()).collect();
    head.push("points".into());
    head.extend(
        idx.iter()
            .map(|&i| format!("{} (mean)", sweep::METRICS[i].0)),
    );
    let rows: Vec<Vec<String>> = groups
        .iter()
        .map(|(k, rs)| {
            let mut row = k.clone();
            row.push(rs.len().to_string());
            for &i in &idx {
                let v: Vec<f64> = rs.iter().filter_map(|r| r.metrics[i]).collect();
                row.push(if v.is_empty() {
                    "–".into()
                } else {
                    num(v.iter().sum::<f64>() / v.len() as f64)
                });
            }
            row
        })
        .collect();
    let mut s = table(&head, &rows, swept.len());
    let failed: Vec<Vec<String>> = t
        .rows
        .iter()
        .filter_map(|r| {
            r.error
                .as_ref()
                .map(|e| vec![r.index.to_string(), r.hash.clone(), e.clone()])
        })
        .collect();
    if !failed.is_empty() {
        s.push_str("<h3>Failed points</h3>");
        s.push_str(&table(&heads(&["index", "hash", "error"]), &failed, 3));
    }
    s
}

fn sweep_section(t: &sweep::Table) -> String {
    let mut s = String::new();
    let failed = t.rows.iter().filter(|r| r.error.is_some()).count();
    let _ = write!(
        s,
        "<p>{} points, {} failed. Means over seeds; plots show each seed and the spread.</p>",
        t.rows.len(),
        failed
    );
    let swept: Vec<usize> = (0..t.columns.len())
        .filter(|&c| t.columns[c] != "seed")
        .filter(|&c| {
            let d: std::collections::BTreeSet<String> =
                t.rows.iter().map(|r| r.params[c].to_string()).collect();
            d.len() > 1
        })
        .collect();
    s.push_str(&sweep_table(t, &swept));
    const SHOWN: &[&str] = &[
        "completion_max_s",
        "latency_p99_max_us",
        "energy",
        "overutilized_pct",
        "migrations",
    ];
    for &pc in &swept {
        let xs: Vec<String> = {
            let mut v: Vec<String> = Vec::new();
            for r in &t.rows {
                let x = sweep::experiment::set_text(&r.params[pc]);
                if !v.contains(&x) {
                    v.push(x);
                }
            }
            v
        };
        for m in SHOWN {
            let Some(mi) = sweep::METRICS.iter().position(|(n, _)| n == m) else {
                continue;
            };
            // series: the other swept parameters' values
            let mut series: Vec<(String, Vec<Vec<f64>>)> = Vec::new();
            for r in &t.rows {
                let Some(val) = r.metrics[mi] else { continue };
                let key: Vec<String> = swept
                    .iter()
                    .filter(|&&c| c != pc)
                    .map(|&c| {
                        format!(
                            "{}={}",
                            t.columns[c],
                            sweep::experiment::set_text(&r.params[c])
                        )
                    })
                    .collect();
                let key = if key.is_empty() {
                    "all".to_string()
                } else {
                    key.join(", ")
                };
                let xi = xs
                    .iter()
                    .position(|x| *x == sweep::experiment::set_text(&r.params[pc]))
                    .unwrap_or(0);
                let e = match series.iter().position(|s| s.0 == key) {
                    Some(i) => i,
                    None => {
                        series.push((key, vec![Vec::new(); xs.len()]));
                        series.len() - 1
                    }
                };
                series[e].1[xi].push(val);
            }
            if series.iter().all(|s| s.1.iter().all(Vec::is_empty)) {
                continue;
            }
            s.push_str(&svg::strips(
                &format!(
                    "{m} against {} (each dot a seed; the bar: the mean)",
                    t.columns[pc]
                ),
                m,
                &xs,
                &series,
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests;
