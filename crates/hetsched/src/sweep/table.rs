//! The combined table of a sweep: each point's result file read back into a [`Row`] of
//! [`METRICS`], in experiment order ([`finish`], [`load`]), and written as `table.csv`,
//! JSON lines for Python and the summary `hetsched sweep` prints.

use super::{experiment, io, point_path, write_atomic, ExperimentError, MANIFEST, TABLE};
use crate::Error;
use hetsched_core::noise::is_background_comm;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::Path;

/// The metric columns of the table, in order, with what each is.
pub const METRICS: &[(&str, &str)] = &[
    ("duration_s", "simulated time, s"),
    ("cpu_s", "CPU time of the workload's tasks, s (sum)"),
    (
        "wait_s",
        "runnable-but-waiting time of the workload's tasks, s (sum)",
    ),
    (
        "completion_max_s",
        "the last workload task's completion time, s (empty when none finished)",
    ),
    ("unfinished", "workload tasks still running at the end"),
    (
        "latency_mean_us",
        "wake-up latency of the workload's tasks, mean over all wake-ups, µs",
    ),
    (
        "latency_p99_max_us",
        "the highest per-task p99 wake-up latency, µs",
    ),
    ("migrations", "migrations, all reasons"),
    ("context_switches", "context switches"),
    (
        "energy",
        "energy (J, or abstract units where the platform's power is assumed)",
    ),
    (
        "overutilized_pct",
        "time the root domain was overutilized, % of the run",
    ),
];

/// The [`METRICS`] that are counts.
const COUNTS: &[&str] = &["unfinished", "migrations", "context_switches"];

/// One row of the combined table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Position in the experiment.
    pub index: usize,
    /// The point's hash.
    pub hash: String,
    /// Parameter values, in [`Table::columns`] order.
    pub params: Vec<Value>,
    /// Metric values, in [`METRICS`] order (all `None` for a failed point).
    pub metrics: Vec<Option<f64>>,
    /// The run's error, for a point whose run failed.
    pub error: Option<String>,
}

/// The combined table of a sweep: one row per point.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The experiment's name.
    pub name: String,
    /// Parameter column names.
    pub columns: Vec<String>,
    /// The rows, in experiment order.
    pub rows: Vec<Row>,
}

/// Reads `DIR/experiment.json` and every point's result file, writes `DIR/table.csv`,
/// and returns the table. A missing result file is an error naming it.
pub fn finish(dir: &Path) -> Result<Table, Error> {
    let table = load(dir)?;
    write_atomic(&dir.join(TABLE), &table.to_csv())?;
    Ok(table)
}

fn read_json(path: &Path) -> Result<Value, Error> {
    let text = std::fs::read_to_string(path).map_err(io(path))?;
    serde_json::from_str(&text).map_err(|e| {
        Error::Experiment(ExperimentError {
            at: format!("{}:{}:{}", path.display(), e.line(), e.column()),
            msg: e.to_string(),
        })
    })
}

/// Point `hash`'s result file at `path`, which must parse and carry its own hash: a file
/// a crash of the machine left incomplete (result files are not fsynced,
/// [`super::write_point`]) is an error that says to rerun the sweep, which runs the point
/// again.
fn read_point(path: &Path, text: &str, hash: &str) -> Result<Value, Error> {
    const RERUN: &str = "an incomplete result file: rerun the sweep to run its point again";
    let v: Value = serde_json::from_str(text).map_err(|e| {
        Error::Experiment(ExperimentError {
            at: format!("{}:{}:{}", path.display(), e.line(), e.column()),
            msg: format!("{e} ({RERUN})"),
        })
    })?;
    if v.get("hash").and_then(Value::as_str) != Some(hash) {
        return Err(Error::Experiment(ExperimentError {
            at: path.display().to_string(),
            msg: format!("not the result of point {hash} ({RERUN})"),
        }));
    }
    Ok(v)
}

/// Point `hash`'s metrics and error, from its result file at `path`.
fn point_entry(path: &Path, hash: &str) -> Result<(Vec<Option<f64>>, Option<String>), Error> {
    let text = std::fs::read_to_string(path).map_err(io(path))?;
    if let Some(metrics) = result_metrics(&text, hash) {
        return Ok((metrics, None));
    }
    let bad = |msg: String| {
        Error::Experiment(ExperimentError {
            at: path.display().to_string(),
            msg,
        })
    };
    let v = read_point(path, &text, hash)?;
    match (v.get("result"), v.get("error")) {
        (Some(r), _) => {
            let r: ResultView = serde_json::from_value(r.clone())
                .map_err(|e| bad(format!("not a hetsched result: {e}")))?;
            Ok((r.metrics(), None))
        }
        (None, Some(e)) => Ok((
            vec![None; METRICS.len()],
            Some(e.as_str().unwrap_or_default().to_string()),
        )),
        _ => Err(bad("neither `result` nor `error`".into())),
    }
}

/// The table of the sweep in `dir` (manifest and result files), without writing it.
pub fn load(dir: &Path) -> Result<Table, Error> {
    let bad = |path: &Path, msg: &str| {
        Error::Experiment(ExperimentError {
            at: path.display().to_string(),
            msg: msg.to_string(),
        })
    };
    let mpath = dir.join(MANIFEST);
    let m = read_json(&mpath)?;
    let name = m
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let columns: Vec<String> = m
        .get("columns")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|c| c.as_str().map(String::from))
                .collect()
        })
        .ok_or_else(|| bad(&mpath, "not a sweep manifest (no `columns`)"))?;
    let pts = m
        .get("points")
        .and_then(Value::as_array)
        .ok_or_else(|| bad(&mpath, "not a sweep manifest (no `points`)"))?;
    let mut rows = Vec::with_capacity(pts.len());
    let mut cache: HashMap<String, (Vec<Option<f64>>, Option<String>)> = HashMap::new();
    for p in pts {
        let hash = p
            .get("hash")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let index = p.get("index").and_then(Value::as_u64).unwrap_or_default() as usize;
        let params = columns
            .iter()
            .map(|c| {
                p.pointer(&format!("/params/{c}"))
                    .cloned()
                    .unwrap_or(Value::Null)
            })
            .collect();
        if !cache.contains_key(&hash) {
            let path = point_path(dir, &hash);
            if !path.exists() {
                return Err(bad(
                    &path,
                    "missing: the sweep has not finished (rerun it to resume)",
                ));
            }
            let entry = point_entry(&path, &hash)?;
            cache.insert(hash.clone(), entry);
        }
        let (metrics, error) = cache[&hash].clone();
        rows.push(Row {
            index,
            hash,
            params,
            metrics,
            error,
        });
    }
    Ok(Table {
        name,
        columns,
        rows,
    })
}

/// The metrics of a result file that holds a run's result under its own `hash`, read
/// straight into [`ResultView`] (the rest of the file skipped, not built as a `Value`):
/// the common case, about a sixth of the instructions of [`read_point`]'s `Value` and the
/// result's copy. `None` for anything else (a failed run's `error`, a file cut short,
/// another point's file, a duplicate key, a JSON array), which the caller then reads
/// through [`read_point`] for its message. The fields read are parsed as the `Value`
/// parses them. The parts skipped are checked against JSON's grammar only: a number out
/// of `f64`'s range, a lone `\u` surrogate or nesting deeper than 128 there, which a
/// `Value` refuses, pass (no JSON writer hetsched uses produces them).
fn result_metrics(text: &str, hash: &str) -> Option<Vec<Option<f64>>> {
    #[derive(Deserialize)]
    struct PointFile<'a> {
        #[serde(borrow)]
        hash: std::borrow::Cow<'a, str>,
        result: ResultView,
    }
    if !super::json_object(text) {
        return None;
    }
    let p: PointFile = serde_json::from_str(text).ok()?;
    (p.hash == hash).then(|| p.result.metrics())
}

/// The part of a result JSON the table reads (a `RunResult` is only serialised).
#[derive(Deserialize)]
struct ResultView {
    duration_s: f64,
    tasks: Vec<TaskView>,
    migrations: std::collections::BTreeMap<String, u64>,
    engine: EngineView,
    energy: EnergyView,
    overutilized: OuView,
}
#[derive(Deserialize)]
struct TaskView {
    comm: String,
    cpu_time_s: f64,
    wait_time_s: f64,
    completion_s: Option<f64>,
    wakeup_latency_us: LatView,
}
#[derive(Deserialize)]
struct LatView {
    count: u64,
    mean: f64,
    p99: f64,
}
#[derive(Deserialize)]
struct EngineView {
    context_switches: u64,
}
#[derive(Deserialize)]
struct EnergyView {
    total: f64,
}
#[derive(Deserialize)]
struct OuView {
    pct: f64,
}

impl ResultView {
    /// The [`METRICS`] of the serialised result (`None` = empty cell).
    fn metrics(&self) -> Vec<Option<f64>> {
        let tasks: Vec<&TaskView> = self
            .tasks
            .iter()
            .filter(|t| !is_background_comm(&t.comm))
            .collect();
        let max = |it: &mut dyn Iterator<Item = f64>| {
            it.fold(None, |m: Option<f64>, c| Some(m.map_or(c, |m| m.max(c))))
        };
        let wakeups: u64 = tasks.iter().map(|t| t.wakeup_latency_us.count).sum();
        let lat_sum: f64 = tasks
            .iter()
            .map(|t| t.wakeup_latency_us.mean * t.wakeup_latency_us.count as f64)
            .sum();
        vec![
            Some(self.duration_s),
            Some(tasks.iter().map(|t| t.cpu_time_s).sum()),
            Some(tasks.iter().map(|t| t.wait_time_s).sum()),
            max(&mut tasks.iter().filter_map(|t| t.completion_s)),
            Some(tasks.iter().filter(|t| t.completion_s.is_none()).count() as f64),
            (wakeups > 0).then(|| lat_sum / wakeups as f64),
            max(&mut tasks.iter().map(|t| t.wakeup_latency_us.p99)),
            Some(self.migrations.values().sum::<u64>() as f64),
            Some(self.engine.context_switches as f64),
            Some(self.energy.total),
            Some(self.overutilized.pct),
        ]
    }
}

/// A CSV cell: quoted when it holds a comma, a quote or a line break.
fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl Table {
    /// The rows as JSON objects (`index`, `hash`, the parameters, the metrics, `error`),
    /// one per line: what Python's `hetsched.load` reads.
    pub fn to_json_lines(&self) -> String {
        let mut s = String::new();
        for r in &self.rows {
            let mut m = Map::new();
            m.insert("index".into(), Value::from(r.index));
            m.insert("hash".into(), Value::from(r.hash.as_str()));
            for (c, v) in self.columns.iter().zip(&r.params) {
                m.insert(c.clone(), v.clone());
            }
            for ((name, _), v) in METRICS.iter().zip(&r.metrics) {
                // counts as integers
                let v = match v {
                    Some(x) if COUNTS.contains(name) && x.fract() == 0.0 && *x >= 0.0 => {
                        Value::from(*x as u64)
                    }
                    Some(x) => Value::from(*x),
                    None => Value::Null,
                };
                m.insert((*name).into(), v);
            }
            m.insert(
                "error".into(),
                r.error.as_deref().map_or(Value::Null, Value::from),
            );
            s.push_str(&serde_json::to_string(&Value::Object(m)).unwrap_or_default());
            s.push('\n');
        }
        s
    }

    /// The table as CSV: `index,hash,<parameters>,<metrics>,error` (RFC 4180 quoting;
    /// numbers in Rust's shortest round-trip form; empty cells for none).
    pub fn to_csv(&self) -> String {
        let mut s = String::new();
        let header: Vec<String> = ["index", "hash"]
            .into_iter()
            .map(String::from)
            .chain(self.columns.iter().cloned())
            .chain(METRICS.iter().map(|(m, _)| m.to_string()))
            .chain(std::iter::once("error".to_string()))
            .map(|h| csv_cell(&h))
            .collect();
        s.push_str(&header.join(","));
        s.push('\n');
        for r in &self.rows {
            let mut cells = vec![r.index.to_string(), r.hash.clone()];
            cells.extend(r.params.iter().map(|v| csv_cell(&experiment::set_text(v))));
            cells.extend(
                r.metrics
                    .iter()
                    .map(|m| m.map(|x| x.to_string()).unwrap_or_default()),
            );
            cells.push(csv_cell(r.error.as_deref().unwrap_or_default()));
            s.push_str(&cells.join(","));
            s.push('\n');
        }
        s
    }

    /// The swept columns: the parameters with more than one value over the rows, the
    /// seed left out.
    pub fn swept(&self) -> Vec<usize> {
        (0..self.columns.len())
            .filter(|&c| self.columns[c] != "seed")
            .filter(|&c| {
                let distinct: BTreeSet<String> =
                    self.rows.iter().map(|r| r.params[c].to_string()).collect();
                distinct.len() > 1
            })
            .collect()
    }

    /// The rows grouped by their values in columns `swept` (as `--set` text), the groups
    /// in the order of their first row: each group's values and rows.
    pub fn groups(&self, swept: &[usize]) -> Vec<(Vec<String>, Vec<&Row>)> {
        let mut groups: Vec<(Vec<String>, Vec<&Row>)> = Vec::new();
        for r in &self.rows {
            let key: Vec<String> = swept
                .iter()
                .map(|&c| experiment::set_text(&r.params[c]))
                .collect();
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push(r),
                None => groups.push((key, vec![r])),
            }
        }
        groups
    }

    /// The summary `hetsched sweep` prints: rows grouped by the swept parameters (those
    /// with more than one value, the seed left out), each metric's mean over the group
    /// (its seeds), and the failed points.
    pub fn summary(&self) -> String {
        let swept = self.swept();
        let groups = self.groups(&swept);
        let metric_idx = summary_metrics();
        let mut header: Vec<String> = swept.iter().map(|&c| self.columns[c].clone()).collect();
        header.push("n".into());
        header.extend(metric_idx.iter().map(|&i| METRICS[i].0.to_string()));
        let mut cells: Vec<Vec<String>> = Vec::new();
        for (key, rows) in &groups {
            let mut line = key.clone();
            line.push(rows.len().to_string());
            for &i in &metric_idx {
                line.push(match mean(rows, i) {
                    None => "-".into(),
                    Some(mean) => format!("{mean:.3}"),
                });
            }
            cells.push(line);
        }
        let widths: Vec<usize> = (0..header.len())
            .map(|c| {
                cells
                    .iter()
                    .map(|l| l[c].chars().count())
                    .chain(std::iter::once(header[c].chars().count()))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let nkeys = swept.len();
        let fmt_line = |l: &[String]| {
            l.iter()
                .enumerate()
                .map(|(c, x)| {
                    if c < nkeys {
                        format!("{x:<w$}", w = widths[c])
                    } else {
                        format!("{x:>w$}", w = widths[c])
                    }
                })
                .collect::<Vec<_>>()
                .join("  ")
        };
        let mut s = String::new();
        let _ = writeln!(
            s,
            "sweep {}: {} points; means over each group's seeds (every column in {TABLE})",
            self.name,
            self.rows.len()
        );
        let _ = writeln!(s, "{}", fmt_line(&header));
        for l in &cells {
            let _ = writeln!(s, "{}", fmt_line(l));
        }
        let failed: Vec<&Row> = self.rows.iter().filter(|r| r.error.is_some()).collect();
        if !failed.is_empty() {
            let _ = writeln!(s, "{} points failed:", failed.len());
            for r in failed {
                let _ = writeln!(
                    s,
                    "  point {} ({}): {}",
                    r.index,
                    r.hash.get(..12).unwrap_or_default(),
                    r.error.as_deref().unwrap_or_default()
                );
            }
        }
        s
    }
}

/// The metrics the grouped summaries show, in their order: `hetsched sweep`'s printed
/// table and the report's sweep table.
const SUMMARY_METRICS: &[&str] = &[
    "completion_max_s",
    "latency_p99_max_us",
    "migrations",
    "energy",
    "overutilized_pct",
];

/// The indices in [`METRICS`] of `SUMMARY_METRICS`.
pub fn summary_metrics() -> Vec<usize> {
    SUMMARY_METRICS
        .iter()
        .filter_map(|m| METRICS.iter().position(|(n, _)| n == m))
        .collect()
}

/// The mean of metric `i` over the `rows` that have it; `None` when none has.
pub fn mean(rows: &[&Row], i: usize) -> Option<f64> {
    let v: Vec<f64> = rows.iter().filter_map(|r| r.metrics[i]).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}
