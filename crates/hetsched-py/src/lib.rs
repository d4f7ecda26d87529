//! `hetsched._core`: the private native module of the `hetsched` Python package.
//!
//! Conversions only: every function takes Python strings and numbers, calls the
//! [`hetsched`] facade, and returns strings (JSON or text); the typed Python package
//! (`python/hetsched/`) builds DataFrames from them. Errors become the exceptions of
//! `errors`. Long calls release the GIL.

use pyo3::prelude::*;

mod errors;

/// The hetsched version this module was built from.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Runs `workload` on `platform` and returns the result JSON (the bytes of
/// `hetsched run --json`, with `--timeline` when `timeline`). The GIL is released
/// during the run.
#[pyfunction]
#[pyo3(signature = (platform, workload, set = None, seed = 0, duration = None, trace = None, duplicate_keys = "ordered", trace_format = None, timeline = false))]
#[allow(
    clippy::too_many_arguments,
    reason = "mirrors the Python keyword arguments"
)]
fn run(
    py: Python<'_>,
    platform: String,
    workload: String,
    set: Option<Vec<String>>,
    seed: u64,
    duration: Option<&str>,
    trace: Option<std::path::PathBuf>,
    duplicate_keys: &str,
    trace_format: Option<&str>,
    timeline: bool,
) -> PyResult<String> {
    let duration = duration
        .map(hetsched::parse_duration)
        .transpose()
        .map_err(errors::to_py)?;
    let req = hetsched::RunRequest {
        platform,
        workload,
        sets: set.unwrap_or_default(),
        seed,
        duration,
        trace,
        trace_format: errors::trace_format(trace_format)?,
        read: errors::read_options(duplicate_keys)?,
        ..hetsched::RunRequest::default()
    };
    py.detach(|| {
        if !timeline {
            return hetsched::run_request(&req).map(|out| hetsched::result_json(&out.result));
        }
        let mut sink = hetsched::report::timeline::TimelineSink::new();
        let out = hetsched::run_request_extra(&req, Some(&mut sink))?;
        let tl = sink.finish();
        Ok(hetsched::result_json_with_timeline(&out.result, Some(&tl)))
    })
    .map_err(errors::to_py)
}

/// Forwards the stream to two sinks (the timeline and the columns of one run).
struct Tee<'a> {
    a: &'a mut dyn hetsched::hetsched_core::trace::TraceSink,
    b: &'a mut dyn hetsched::hetsched_core::trace::TraceSink,
}

impl hetsched::hetsched_core::trace::TraceSink for Tee<'_> {
    fn interest(&self) -> hetsched::hetsched_core::trace::Interest {
        self.a.interest().union(self.b.interest())
    }
    fn begin(&mut self, nr_cpus: usize, start_ns: u64) {
        self.a.begin(nr_cpus, start_ns);
        self.b.begin(nr_cpus, start_ns);
    }
    fn record(
        &mut self,
        ctx: &hetsched::hetsched_core::trace::Ctx<'_>,
        ev: &hetsched::hetsched_core::trace::TraceEvent<'_>,
    ) {
        self.a.record(ctx, ev);
        self.b.record(ctx, ev);
    }
    fn end(&mut self, end_ns: u64) {
        self.a.end(end_ns);
        self.b.end(end_ns);
    }
}

/// The event tables of [`hetsched::hetsched_trace::Columns`] for Python:
/// `{"nr_cpus": int, "end_ns": int, "strings": [str], "tables": {event: [(column,
/// is_string, bytes)]}}`, each column's bytes the native-endian `int64` values.
fn columns_to_py<'py>(
    py: Python<'py>,
    cols: &hetsched::hetsched_trace::Columns,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    use hetsched::hetsched_trace::columns::{Kind, SCHEMA};
    use pyo3::types::{PyBytes, PyDict};
    fn bytes<'py>(py: Python<'py>, v: &[i64]) -> Bound<'py, PyBytes> {
        let raw: Vec<u8> = v.iter().flat_map(|x| x.to_ne_bytes()).collect();
        PyBytes::new(py, &raw)
    }
    let tables = PyDict::new(py);
    for ((name, fields), t) in SCHEMA.iter().zip(&cols.tables) {
        let mut list = vec![
            ("__ts", false, bytes(py, &t.ts)),
            ("__cpu", false, bytes(py, &t.cpu)),
            ("__pid", false, bytes(py, &t.pid)),
            ("__seq", false, bytes(py, &t.seq)),
        ];
        for ((field, kind), v) in fields.iter().zip(&t.fields) {
            list.push((field, *kind == Kind::Str, bytes(py, v)));
        }
        tables.set_item(name, list)?;
    }
    let d = PyDict::new(py);
    d.set_item("nr_cpus", cols.nr_cpus)?;
    d.set_item("end_ns", cols.end_ns)?;
    d.set_item("strings", &cols.strings)?;
    d.set_item("tables", tables)?;
    Ok(d)
}

/// [`run`] keeping the run's events in memory: returns `(result JSON, tables)`, the
/// tables as `columns_to_py` gives them (what `read_trace` gives for the run's text
/// trace). The GIL is released during the run.
#[pyfunction]
#[pyo3(signature = (platform, workload, set = None, seed = 0, duration = None, trace = None, duplicate_keys = "ordered", trace_format = None, timeline = false))]
#[allow(
    clippy::too_many_arguments,
    reason = "mirrors the Python keyword arguments"
)]
fn run_columns<'py>(
    py: Python<'py>,
    platform: String,
    workload: String,
    set: Option<Vec<String>>,
    seed: u64,
    duration: Option<&str>,
    trace: Option<std::path::PathBuf>,
    duplicate_keys: &str,
    trace_format: Option<&str>,
    timeline: bool,
) -> PyResult<(String, Bound<'py, pyo3::types::PyDict>)> {
    let duration = duration
        .map(hetsched::parse_duration)
        .transpose()
        .map_err(errors::to_py)?;
    let req = hetsched::RunRequest {
        platform,
        workload,
        sets: set.unwrap_or_default(),
        seed,
        duration,
        trace,
        trace_format: errors::trace_format(trace_format)?,
        read: errors::read_options(duplicate_keys)?,
        ..hetsched::RunRequest::default()
    };
    let (text, cols) = py
        .detach(|| {
            let mut cols = hetsched::hetsched_trace::ColumnSink::new();
            if !timeline {
                let out = hetsched::run_request_extra(&req, Some(&mut cols))?;
                return Ok((hetsched::result_json(&out.result), cols.finish()));
            }
            let mut tl = hetsched::report::timeline::TimelineSink::new();
            let out = hetsched::run_request_extra(
                &req,
                Some(&mut Tee {
                    a: &mut tl,
                    b: &mut cols,
                }),
            )?;
            let tl = tl.finish();
            Ok((
                hetsched::result_json_with_timeline(&out.result, Some(&tl)),
                cols.finish(),
            ))
        })
        .map_err(errors::to_py)?;
    Ok((text, columns_to_py(py, &cols)?))
}

/// Reads an ftrace text trace hetsched wrote into the tables `run_columns` gives.
#[pyfunction]
fn read_trace<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    let cols = py
        .detach(|| {
            let f = std::fs::File::open(&path).map_err(|err| hetsched::Error::Io {
                path: path.display().to_string(),
                err,
            })?;
            hetsched::hetsched_trace::read_text(std::io::BufReader::new(f)).map_err(|e| match e {
                hetsched::hetsched_trace::columns::ReadError::Io(err) => hetsched::Error::Io {
                    path: path.display().to_string(),
                    err,
                },
                e => hetsched::Error::Io {
                    path: path.display().to_string(),
                    err: std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
                },
            })
        })
        .map_err(errors::to_py)?;
    columns_to_py(py, &cols)
}

/// The power figures the energy accounting of a run uses (`EnergyMeter`): the Energy
/// Model registered for `platform` with the options `set` (`eas.em_version`, `kernel`), as
/// JSON: `{"assumed": bool, "cpus": [{"cpu", "pd", "active": [[kHz, µW]…], "idle": [µW or
/// null…]}]}`, `idle[0]` being WFI (no power), `idle[i]` the platform's idle state `i − 1`.
#[pyfunction]
#[pyo3(signature = (platform, set = None))]
fn energy_model(platform: &str, set: Option<Vec<String>>) -> PyResult<String> {
    let p = hetsched::load_platform(platform).map_err(errors::to_py)?;
    let options = hetsched::hetsched_core::options::Options::default()
        .apply_sets(&set.unwrap_or_default())
        .map_err(|e| errors::to_py(e.into()))?;
    let em = hetsched::hetsched_core::energy::em::EnergyModel::build(&p, options.eas.em_version);
    let cpus: Vec<serde_json::Value> = p
        .cpus
        .iter()
        .enumerate()
        .map(|(i, cpu)| {
            let active: Vec<(u64, u64)> = em
                .pds
                .get(cpu.perf_domain)
                .and_then(Option::as_ref)
                .map(|pd| pd.table.iter().map(|s| (s.frequency, s.power)).collect())
                .unwrap_or_default();
            let mut idle = vec![None];
            idle.extend(cpu.idle_states.iter().map(|s| s.power_uw));
            serde_json::json!({"cpu": i, "pd": cpu.perf_domain, "active": active, "idle": idle})
        })
        .collect();
    Ok(
        serde_json::json!({"assumed": em.assumed, "nr_pd": p.perf_domains.len(), "cpus": cpus})
            .to_string(),
    )
}

/// The HTML report of `items`, in order: `(path, None)` reads a result JSON, a
/// reproduction's JSON report or a sweep directory; `(name, Some(json))` is a result or
/// report already in memory. The same bytes as `hetsched report`.
#[pyfunction]
#[pyo3(signature = (items, title = None))]
fn report(
    py: Python<'_>,
    items: Vec<(String, Option<String>)>,
    title: Option<String>,
) -> PyResult<String> {
    py.detach(|| {
        let inputs = items
            .iter()
            .map(|(name, text)| match text {
                None => hetsched::report::load_input(std::path::Path::new(name)),
                Some(t) => serde_json::from_str(t)
                    .map_err(|e| hetsched::Error::Report(format!("{name}: {e}")))
                    .and_then(|v| hetsched::report::input_from_json(name, v)),
            })
            .collect::<Result<Vec<_>, _>>()?;
        if inputs.is_empty() {
            return Err(hetsched::Error::Report(
                "nothing to report: give result JSON files, reproduction reports or sweep directories".into(),
            ));
        }
        let opts = hetsched::report::ReportOptions {
            title,
            generated: None,
        };
        Ok(hetsched::report::render(&inputs, &opts))
    })
    .map_err(errors::to_py)
}

/// Names of the platform presets.
#[pyfunction]
fn platforms() -> Vec<&'static str> {
    hetsched::hetsched_platform::preset_names().to_vec()
}

/// One line per platform preset (`hetsched platforms list`).
#[pyfunction]
fn platform_summaries() -> PyResult<Vec<String>> {
    hetsched::hetsched_platform::preset_names()
        .iter()
        .map(|name| {
            hetsched::load_platform(name)
                .map(|p| hetsched::hetsched_platform::summary_line(&p))
                .map_err(errors::to_py)
        })
        .collect()
}

/// CPUs, capacities, OPPs, idle states and sources of a preset or YAML file
/// (`hetsched platforms show`).
#[pyfunction]
fn platform_describe(name: &str) -> PyResult<String> {
    let p = hetsched::load_platform(name).map_err(errors::to_py)?;
    Ok(hetsched::hetsched_platform::describe(&p))
}

/// Reads an rt-app workload (path or shipped name) and returns what was understood
/// (`hetsched validate`).
#[pyfunction]
#[pyo3(signature = (workload, duplicate_keys = "ordered"))]
fn validate(workload: &str, duplicate_keys: &str) -> PyResult<String> {
    let w = hetsched::load_workload(workload, &errors::read_options(duplicate_keys)?)
        .map_err(errors::to_py)?;
    Ok(hetsched::hetsched_rtapp::describe(&w))
}

/// Names of the workloads shipped with hetsched.
#[pyfunction]
fn workloads() -> Vec<&'static str> {
    hetsched::workload_preset_names()
}

/// Runs built-in generator `name` with `key=value` parameters and returns
/// `(spec, rt-app JSON)`: the `gen:NAME:k=v,…` spec that `run` and `validate` accept,
/// and the workload as rt-app JSON (`hetsched gen NAME k=v…`).
#[pyfunction]
fn generate(name: &str, params: Vec<String>) -> PyResult<(String, String)> {
    let kv = hetsched::split_params(name, &params).map_err(errors::to_py)?;
    let json = hetsched::generate_json(name, &kv).map_err(errors::to_py)?;
    let w =
        hetsched::hetsched_rtapp::gen::generate(name, &kv).map_err(|e| errors::to_py(e.into()))?;
    Ok((w.source.unwrap_or_default(), json))
}

/// Names of the built-in generators.
#[pyfunction]
fn generators() -> Vec<&'static str> {
    hetsched::hetsched_rtapp::gen::GENERATORS
        .iter()
        .map(|g| g.name)
        .collect()
}

/// The generators and their parameters (`hetsched gen --list`).
#[pyfunction]
fn generator_list() -> String {
    hetsched::hetsched_rtapp::gen::list()
}

/// JSON schema of the options (`set=` keys).
#[pyfunction]
fn options_schema() -> String {
    hetsched::hetsched_core::options::Options::schema()
}

/// JSON schema of the platform YAML format.
#[pyfunction]
fn platform_schema() -> String {
    hetsched::hetsched_platform::platform_schema()
}

/// Reads an experiment: a TOML file, or (`text`) TOML text named `<experiment>` in
/// messages, its relative paths taken from the current directory.
fn experiment(experiment: &str, text: bool) -> PyResult<hetsched::sweep::Experiment> {
    let exp = if text {
        hetsched::sweep::parse_str(
            experiment,
            "<experiment>",
            "experiment",
            std::path::Path::new(""),
        )
    } else {
        hetsched::sweep::read_file(std::path::Path::new(experiment))
    };
    exp.map_err(errors::to_py)
}

/// Runs the missing points of an experiment into `out` on `jobs` threads (default: every
/// core) and writes the table; returns `(points run now, summary text)`. A progress bar
/// with an ETA is drawn on stderr when it is a terminal and `progress` is true. The GIL
/// is released during the sweep.
#[pyfunction]
#[pyo3(signature = (experiment, out, jobs = None, text = false, progress = true))]
fn sweep(
    py: Python<'_>,
    experiment: &str,
    out: std::path::PathBuf,
    jobs: Option<usize>,
    text: bool,
    progress: bool,
) -> PyResult<(usize, String)> {
    let exp = self::experiment(experiment, text)?;
    let jobs = jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let target = if progress {
        indicatif::ProgressDrawTarget::stderr()
    } else {
        indicatif::ProgressDrawTarget::hidden()
    };
    let bar = indicatif::ProgressBar::with_draw_target(None, target);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{bar:40} {pos}/{len} points  {elapsed_precise} elapsed  ETA {eta}",
    ) {
        bar.set_style(style);
    }
    let outcome = py
        .detach(|| {
            hetsched::sweep::run(&exp, &out, jobs, &|done, total| {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            })
        })
        .map_err(errors::to_py)?;
    bar.finish_and_clear();
    Ok((outcome.ran, outcome.table.summary()))
}

/// Plans a sweep into `out` (writes the manifest, removes stray temporary files) and
/// returns `{"points": [PointSpec…], "missing": [index…]}` as JSON: what another backend
/// (Ray) runs with `sweep_run_point` and writes with `sweep_write_point`.
#[pyfunction]
#[pyo3(signature = (experiment, out, text = false))]
fn sweep_plan(experiment: &str, out: std::path::PathBuf, text: bool) -> PyResult<String> {
    let exp = self::experiment(experiment, text)?;
    let plan = hetsched::sweep::plan(&exp, &out).map_err(errors::to_py)?;
    let v = serde_json::json!({"points": plan.points, "missing": plan.missing});
    Ok(v.to_string())
}

/// Runs one point (a `PointSpec` as JSON, from `sweep_plan`) and returns its result
/// file's text. The GIL is released during the run.
#[pyfunction]
fn sweep_run_point(py: Python<'_>, spec: &str) -> PyResult<String> {
    let spec: hetsched::sweep::PointSpec = serde_json::from_str(spec).map_err(|e| {
        errors::to_py(hetsched::Error::Reproduce(format!(
            "not a sweep point: {e}"
        )))
    })?;
    py.detach(|| hetsched::sweep::run_point(&spec))
        .map_err(errors::to_py)
}

/// Writes a point's result file `out/points/<hash>.json` atomically.
#[pyfunction]
fn sweep_write_point(out: std::path::PathBuf, hash: &str, text: &str) -> PyResult<()> {
    hetsched::sweep::write_point(&out, hash, text).map_err(errors::to_py)
}

/// Writes `out/table.csv` from the manifest and the result files; returns the summary.
#[pyfunction]
fn sweep_finish(out: std::path::PathBuf) -> PyResult<String> {
    let t = hetsched::sweep::finish(&out).map_err(errors::to_py)?;
    Ok(t.summary())
}

/// The table of the sweep in `out`, one JSON object per line and point.
#[pyfunction]
fn sweep_table(out: std::path::PathBuf) -> PyResult<String> {
    let t = hetsched::sweep::load(&out).map_err(errors::to_py)?;
    Ok(t.to_json_lines())
}

/// JSON schema of the experiment file (`hetsched schema experiment`).
#[pyfunction]
fn experiment_schema() -> String {
    hetsched::sweep::schema()
}

/// The module `hetsched._core`.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_columns, m)?)?;
    m.add_function(wrap_pyfunction!(read_trace, m)?)?;
    m.add_function(wrap_pyfunction!(energy_model, m)?)?;
    m.add_function(wrap_pyfunction!(report, m)?)?;
    m.add_function(wrap_pyfunction!(platforms, m)?)?;
    m.add_function(wrap_pyfunction!(platform_summaries, m)?)?;
    m.add_function(wrap_pyfunction!(platform_describe, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(workloads, m)?)?;
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    m.add_function(wrap_pyfunction!(generators, m)?)?;
    m.add_function(wrap_pyfunction!(generator_list, m)?)?;
    m.add_function(wrap_pyfunction!(options_schema, m)?)?;
    m.add_function(wrap_pyfunction!(platform_schema, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_plan, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_run_point, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_write_point, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_finish, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_table, m)?)?;
    m.add_function(wrap_pyfunction!(experiment_schema, m)?)?;
    Ok(())
}
