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

mod reproduction;
mod run;
pub mod svg;
mod sweeps;
pub mod timeline;

use crate::sweep;
use crate::Error;
use reproduction::reproduce_section;
use run::run_section;
use serde_json::Value;
use std::fmt::Write;
use std::path::Path;
use svg::{esc, num};
use sweeps::sweep_section;

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

fn text_at(v: &Value, ptr: &str) -> String {
    v.pointer(ptr)
        .map(|x| x.as_str().map_or(x.to_string(), String::from))
        .unwrap_or_default()
}

fn arr(v: &Value, key: &str) -> Vec<Value> {
    v.get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
