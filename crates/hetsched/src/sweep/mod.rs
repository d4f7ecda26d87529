//! `hetsched sweep`: every point of an experiment file, run once, resumable.
//!
//! A sweep is three steps, each usable on its own so that other backends (Python's Ray
//! backend) drive the same machinery:
//!
//! 1. [`plan`]: the experiment's points in order ([`points`]), each a [`PointSpec`] named by
//!    the SHA-256 of a canonical JSON serialisation of what its result depends on (the
//!    platform model, the workload after the noise model, the resolved options, the seed,
//!    the duration, the hetsched version: [`point_hash`]). `DIR/experiment.json` (the
//!    manifest) lists them; stray temporary files of a killed sweep are removed; the points
//!    without a result file are returned.
//! 2. [`run_point`] runs one point and returns its result file's text;
//!    [`write_point`] writes it as `DIR/points/<hash>.json` (a complete temporary file in
//!    the same directory, renamed over its name). A killed sweep leaves only complete result
//!    files, so a rerun runs exactly the missing points; a result file that a crash of the
//!    machine left empty or cut short is found incomplete and run again.
//! 3. [`finish`] reads the manifest and the result files and writes the combined table
//!    `DIR/table.csv` (one row per point in experiment order; the same bytes whatever the
//!    job count or backend).
//!
//! [`run`] does all three on a local thread pool.

pub mod experiment;
mod loop_stats;
mod table;

pub use experiment::{parse_str, read_file, schema, Experiment, ExperimentError};
pub use loop_stats::{read_loop_stats, LoopStatsSink};
pub use table::{finish, load, mean, summary_metrics, Row, Table, METRICS};

use crate::{Error, RunRequest};
use hetsched_core::noise::{apply_noise, NoiseConfig};
use hetsched_core::options::Options;
use hetsched_core::platform::Platform;
use hetsched_core::workload::Workload;
use hetsched_core::RunSpec;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Version of the result-file and manifest format (part of every point's hash).
pub const FORMAT: u64 = 1;

/// The manifest's file name under DIR.
pub const MANIFEST: &str = "experiment.json";
/// The combined table's file name under DIR.
pub const TABLE: &str = "table.csv";
/// The result files' directory under DIR.
pub const POINTS: &str = "points";

/// One point of a sweep: what to run and its hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointSpec {
    /// Position in the experiment (0-based).
    pub index: usize,
    /// SHA-256 (hex) of the point's inputs ([`point_hash`]); its result file's name.
    pub hash: String,
    /// The swept parameters as written in the experiment: `platform`, `workload`,
    /// `kernel` (when swept), the `[grid]` and `[[zip]]` keys, `seed`.
    pub params: Map<String, Value>,
    /// Where the platform is loaded from.
    pub platform: String,
    /// Where the workload is loaded from.
    pub workload: String,
    /// `key=value` options.
    pub sets: Vec<String>,
    /// Engine seed (and noise seed with `noise`).
    pub seed: u64,
    /// Simulated duration, ns (`None`: the workload's).
    pub duration_ns: Option<u64>,
    /// The noise model, if on.
    pub noise: Option<NoiseConfig>,
    /// Keep rt-app's per-loop statistics of this task's threads in the result file
    /// (`"loop_stats"`: `[run µs, slack µs]` per loop, from the `rtapp_stats` markers, so
    /// the point's options turn on `trace.rtapp_markers`). Part of the hash when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_stats_of: Option<String>,
}

impl PointSpec {
    /// The run this point is.
    pub fn request(&self) -> RunRequest {
        RunRequest {
            platform: self.platform.clone(),
            workload: self.workload.clone(),
            sets: self.sets.clone(),
            seed: self.seed,
            duration: self.duration_ns,
            noise: self.noise,
            noise_seed: self.seed,
            ..RunRequest::default()
        }
    }

    /// The workload as written in the experiment (what the hash names it by).
    fn workload_name(&self) -> &str {
        self.params
            .get("workload")
            .and_then(Value::as_str)
            .unwrap_or(&self.workload)
    }
}

/// Every point of `exp`, in order: platforms outermost, then workloads, kernels, the
/// `[grid]` keys and `[[zip]]` tables in file order, seeds innermost.
pub fn points(exp: &Experiment) -> Result<Vec<PointSpec>, Error> {
    let mut radices = vec![exp.platforms.len(), exp.workloads.len()];
    if !exp.kernels.is_empty() {
        radices.push(exp.kernels.len());
    }
    radices.extend(exp.dims.iter().map(|d| d.rows.len()));
    radices.push(exp.seeds.len());
    let total: usize = radices.iter().product();
    let mut platforms: HashMap<&str, Platform> = HashMap::new();
    let mut workloads: HashMap<&str, Workload> = HashMap::new();
    let mut prefixes: HashMap<(usize, usize, Vec<String>), Sha256> = HashMap::new();
    let mut out = Vec::with_capacity(total);
    for index in 0..total {
        let mut digits = vec![0; radices.len()];
        let mut n = index;
        for (d, r) in digits.iter_mut().zip(&radices).rev() {
            *d = n % r;
            n /= r;
        }
        let mut it = digits.into_iter();
        let (p, w) = (it.next().unwrap_or(0), it.next().unwrap_or(0));
        let mut params = Map::new();
        params.insert("platform".into(), Value::from(exp.platforms[p].as_str()));
        params.insert("workload".into(), Value::from(exp.workloads[w].as_str()));
        let mut sets = exp.set.clone();
        if !exp.kernels.is_empty() {
            let k = &exp.kernels[it.next().unwrap_or(0)];
            params.insert("kernel".into(), Value::from(k.as_str()));
            sets.push(format!("kernel={k}"));
        }
        for dim in &exp.dims {
            let row = &dim.rows[it.next().unwrap_or(0)];
            for (k, v) in dim.keys.iter().zip(row) {
                params.insert(k.clone(), v.clone());
                sets.push(format!("{k}={}", experiment::set_text(v)));
            }
        }
        let seed = exp.seeds[it.next().unwrap_or(0)];
        params.insert("seed".into(), Value::from(seed));
        let mut spec = PointSpec {
            index,
            hash: String::new(),
            params,
            platform: exp.platform_sources[p].clone(),
            workload: exp.workload_sources[w].clone(),
            sets,
            seed,
            duration_ns: exp.duration,
            noise: exp.noise,
            loop_stats_of: None,
        };
        // the seed is the last thing a point's hash reads: without a noise model, the
        // points of one platform, workload and option set share the hash up to it
        let key = (p, w, spec.sets.clone());
        if exp.noise.is_none() {
            if let Some(prefix) = prefixes.get(&key) {
                spec.hash = hash_with_seed(prefix.clone(), seed, spec.duration_ns);
                debug_assert_eq!(spec.hash, {
                    let run = run_spec(
                        &spec,
                        platforms[spec.platform.as_str()].clone(),
                        workloads[spec.workload.as_str()].clone(),
                    )
                    .expect("the same sets resolved before");
                    spec_hash(&spec, &run)
                });
                out.push(spec);
                continue;
            }
        }
        if !platforms.contains_key(spec.platform.as_str()) {
            platforms.insert(
                &exp.platform_sources[p],
                crate::load_platform(&spec.platform)?,
            );
        }
        if !workloads.contains_key(spec.workload.as_str()) {
            workloads.insert(
                &exp.workload_sources[w],
                crate::load_workload(&spec.workload, &Default::default())?,
            );
        }
        let (platform, workload) = (
            &platforms[spec.platform.as_str()],
            &workloads[spec.workload.as_str()],
        );
        let run = run_spec(&spec, platform.clone(), workload.clone())
            .map_err(|e| Error::Experiment(point_error(&spec, &e)))?;
        let prefix = hash_prefix(&run, spec.workload_name());
        spec.hash = hash_with_seed(prefix.clone(), run.seed, run.duration_ns);
        debug_assert_eq!(spec.hash, spec_hash(&spec, &run));
        if exp.noise.is_none() {
            prefixes.insert(key, prefix);
        }
        out.push(spec);
    }
    Ok(out)
}

/// `point N (platform=…, …): message`.
fn point_error(spec: &PointSpec, e: &Error) -> ExperimentError {
    let params: Vec<String> = spec
        .params
        .iter()
        .map(|(k, v)| format!("{k}={}", experiment::set_text(v)))
        .collect();
    ExperimentError {
        at: format!("point {} ({})", spec.index, params.join(", ")),
        msg: e.to_string(),
    }
}

/// The engine's input for a point: the noise model applied with the point's seed, the
/// options resolved.
fn run_spec(spec: &PointSpec, platform: Platform, workload: Workload) -> Result<RunSpec, Error> {
    let workload = match &spec.noise {
        Some(cfg) => {
            cfg.validate()
                .map_err(|m| Error::Reproduce(format!("noise model: {m}")))?;
            apply_noise(&workload, cfg, platform.cpus.len(), spec.seed)
        }
        None => workload,
    };
    let options = Options::default().apply_sets(&spec.sets)?;
    Ok(RunSpec {
        platform,
        workload,
        options,
        seed: spec.seed,
        duration_ns: spec.duration_ns,
    })
}

/// The point of a run planned elsewhere (one run of a reproduction), named by `params`:
/// hashed as a sweep's points are, so the same result files, resume and backends serve
/// it. The request must be one a point can express: no trace, the noise drawn with the
/// engine's seed, default reading options.
pub fn point_of_request(
    index: usize,
    params: Map<String, Value>,
    req: &RunRequest,
    loop_stats_of: Option<&str>,
) -> Result<PointSpec, Error> {
    if req.trace.is_some()
        || (req.noise.is_some() && req.noise_seed != req.seed)
        || req.read != hetsched_rtapp::ReadOptions::default()
    {
        return Err(Error::Reproduce(
            "a run with a trace, its own noise seed or reading options is not a sweep point".into(),
        ));
    }
    let mut spec = PointSpec {
        index,
        hash: String::new(),
        params,
        platform: req.platform.clone(),
        workload: req.workload.clone(),
        sets: req.sets.clone(),
        seed: req.seed,
        duration_ns: req.duration,
        noise: req.noise,
        loop_stats_of: loop_stats_of.map(str::to_string),
    };
    let platform = crate::load_platform(&spec.platform)?;
    let workload = crate::load_workload(&spec.workload, &Default::default())?;
    let run = run_spec(&spec, platform, workload)?;
    spec.hash = spec_hash(&spec, &run);
    Ok(spec)
}

/// Runs points some other way than this process's threads (the CLI's `--ray`): called
/// with the points to run and DIR, it must leave a result file per point under DIR
/// ([`write_point`]) or fail.
#[derive(Clone)]
pub struct Executor(pub std::sync::Arc<RunPoints>);

/// What an [`Executor`] calls: run these points, leaving their result files in DIR.
pub type RunPoints = dyn Fn(&[PointSpec], &Path) -> Result<(), Error> + Send + Sync;

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Executor")
    }
}

/// A point's hash: [`point_hash`], and what else its result file keeps when asked
/// (`loop_stats_of`), so that a file with more in it is another point.
fn spec_hash(spec: &PointSpec, run: &RunSpec) -> String {
    let h = point_hash(run, spec.workload_name());
    match &spec.loop_stats_of {
        None => h,
        Some(task) => sha256_hex(&format!("{h} loop_stats_of={task}")),
    }
}

/// SHA-256 of `text`, hex.
fn sha256_hex(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

/// Bytes as lower-case hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// SHA-256 (hex) of the canonical JSON of what a run's result depends on: the format
/// version, the hetsched version, the platform model, the workload (after the noise
/// model; its file name replaced by `workload_name`, the name the experiment gives it, so
/// that the hash does not depend on the directory a sweep runs from), the options, the
/// seed and the duration. serde_json writes struct fields in declaration order and maps
/// in key order, so the text, and the hash, is stable.
pub fn point_hash(spec: &RunSpec, workload_name: &str) -> String {
    hash_with_seed(
        hash_prefix(spec, workload_name),
        spec.seed,
        spec.duration_ns,
    )
}

/// [`point_hash`]'s hash fed with its text up to the seed: `{"format":…,"options":{…}`,
/// the same for every seed of a platform, workload and option set when no noise model
/// draws the workload from the seed ([`points`] keeps it for those).
fn hash_prefix(spec: &RunSpec, workload_name: &str) -> Sha256 {
    let mut w = spec.workload.clone();
    w.source = Some(workload_name.to_string());
    w.warnings.clear();
    let v = serde_json::json!({
        "format": FORMAT,
        "hetsched": env!("CARGO_PKG_VERSION"),
        "platform": spec.platform,
        "workload": w,
        "options": spec.options,
    });
    let text = serde_json::to_string(&v).unwrap_or_default();
    // the object without its closing brace: the seed and the duration follow
    let open = text.strip_suffix('}').unwrap_or(&text);
    Sha256::new().chain_update(open.as_bytes())
}

/// [`point_hash`] from its [`hash_prefix`]: the text goes on with the last two keys and
/// closes the object, as serde_json writes a map (compact, in insertion order).
fn hash_with_seed(prefix: Sha256, seed: u64, duration_ns: Option<u64>) -> String {
    let duration = serde_json::to_string(&duration_ns).unwrap_or_default();
    let tail = format!(",\"seed\":{seed},\"duration_ns\":{duration}}}");
    hex(&prefix.chain_update(tail.as_bytes()).finalize())
}

/// Runs one point and returns its result file's text:
/// `{"format", "hash", "params", "result": {…}}` (the run's result JSON, as `hetsched
/// run --json` has it), or `"error": "…"` instead of `"result"` when the run itself
/// fails (a deadlock without a duration, EAS asked for where it cannot run): a point's
/// outcome, kept so that a rerun does not repeat it. Inputs that no longer give the
/// planned hash (a workload file edited during the sweep) are an error, not a result.
pub fn run_point(spec: &PointSpec) -> Result<String, Error> {
    let platform = crate::load_platform(&spec.platform)?;
    let workload = crate::load_workload(&spec.workload, &Default::default())?;
    let run = run_spec(spec, platform, workload)?;
    let hash = spec_hash(spec, &run);
    if hash != spec.hash {
        return Err(Error::Experiment(point_error(
            spec,
            &Error::Reproduce(
                "its inputs changed since the sweep was planned (a platform or workload file was edited); rerun the sweep"
                    .into(),
            ),
        )));
    }
    let mut m = Map::new();
    m.insert("format".into(), Value::from(FORMAT));
    m.insert("hash".into(), Value::from(hash));
    m.insert("params".into(), Value::Object(spec.params.clone()));
    let mut stats = spec.loop_stats_of.as_deref().map(LoopStatsSink::new);
    let outcome = match &mut stats {
        Some(sink) => hetsched_core::run(&run, &mut [sink]),
        None => hetsched_core::run(&run, &mut []),
    };
    match outcome {
        Ok(r) => {
            m.insert(
                "result".into(),
                serde_json::to_value(&r).map_err(|e| Error::Reproduce(e.to_string()))?,
            );
            if let Some(sink) = stats {
                m.insert("loop_stats".into(), serde_json::json!(sink.loops));
            }
        }
        // a stop request is not the point's outcome: nothing is recorded
        Err(e @ hetsched_core::RunError::Interrupted(_)) => return Err(e.into()),
        Err(e) => {
            m.insert("error".into(), Value::from(e.to_string()));
        }
    }
    let mut s = serde_json::to_string(&Value::Object(m)).unwrap_or_default();
    s.push('\n');
    Ok(s)
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |err| Error::Io {
        path: path.display().to_string(),
        err,
    }
}

/// Writes `text` as `path` atomically ([`crate::output::write_atomic`]).
pub fn write_atomic(path: &Path, text: &str) -> Result<(), Error> {
    crate::output::write_atomic(path, text)
}

/// The result file of point `hash` under `dir`.
pub fn point_path(dir: &Path, hash: &str) -> PathBuf {
    dir.join(POINTS).join(format!("{hash}.json"))
}

/// Writes a point's result file (`DIR/points/<hash>.json`): a complete temporary file
/// renamed over its name, with no fsync ([`crate::output::write_renamed`]). A killed sweep
/// leaves only complete result files. After a crash of the machine a result file may be
/// missing, empty or cut short; the next sweep's [`plan`] finds it incomplete (it must
/// parse as JSON and carry its own hash) and runs the point again. Two fsyncs per point
/// cost more than a short point's run (the `sweep` benchmark, docs/benchmarks-history.md).
pub fn write_point(dir: &Path, hash: &str, text: &str) -> Result<(), Error> {
    let points = dir.join(POINTS);
    std::fs::create_dir_all(&points).map_err(io(&points))?;
    crate::output::write_renamed(&point_path(dir, hash), text)
}

/// Whether `dir` has a complete result file for `hash`: JSON whose `hash` is `hash`. The
/// file is read for its `hash` alone, the rest checked against JSON's grammar but not
/// built as a `Value`; when that fails (a duplicate or missing key, not an object) it is
/// read as a `Value`. The answer is the `Value`'s but for what a `Value` refuses past the
/// grammar in the parts skipped (a number out of `f64`'s range, a lone `\u` surrogate,
/// nesting deeper than 128), which passes here.
fn has_point(dir: &Path, hash: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Head<'a> {
        #[serde(borrow)]
        hash: std::borrow::Cow<'a, str>,
    }
    let Ok(text) = std::fs::read_to_string(point_path(dir, hash)) else {
        return false;
    };
    if json_object(&text) {
        if let Ok(head) = serde_json::from_str::<Head>(&text) {
            return head.hash == hash;
        }
    }
    serde_json::from_str::<Value>(&text)
        .is_ok_and(|v| v.get("hash").and_then(Value::as_str) == Some(hash))
}

/// Whether `text` starts as a JSON object (after JSON's whitespace): where a derived
/// `Deserialize` struct reads only what a `Value`'s object would give it (serde's derive
/// also accepts a struct as an array of its fields).
fn json_object(text: &str) -> bool {
    text.trim_start_matches([' ', '\n', '\t', '\r'])
        .starts_with('{')
}

/// What [`plan`] found.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Every point, in experiment order.
    pub points: Vec<PointSpec>,
    /// The points to run: one per hash without a result file, in experiment order.
    pub missing: Vec<usize>,
    /// Temporary files of an interrupted sweep that were removed.
    pub removed_tmp: usize,
}

/// Plans a sweep of `exp` into `dir`: writes the manifest `DIR/experiment.json`, removes
/// stray temporary files, and lists the points without a result file.
pub fn plan(exp: &Experiment, dir: &Path) -> Result<Plan, Error> {
    let points = points(exp)?;
    let removed_tmp = prepare_dir(dir)?;
    write_atomic(&dir.join(MANIFEST), &manifest(exp, &points))?;
    let missing = missing(&points, dir);
    Ok(Plan {
        points,
        missing,
        removed_tmp,
    })
}

/// Creates `DIR/points` and removes the temporary files an interrupted run left there;
/// returns how many.
pub fn prepare_dir(dir: &Path) -> Result<usize, Error> {
    let pdir = dir.join(POINTS);
    std::fs::create_dir_all(&pdir).map_err(io(&pdir))?;
    let mut removed_tmp = 0;
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&pdir)
        .map_err(io(&pdir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        if name.is_some_and(|n| n.starts_with('.') && n.ends_with(".tmp")) {
            std::fs::remove_file(&p).map_err(io(&p))?;
            removed_tmp += 1;
        }
    }
    Ok(removed_tmp)
}

/// The positions in `points` of those to run: the first of each hash without a result
/// file under `dir`.
pub fn missing(points: &[PointSpec], dir: &Path) -> Vec<usize> {
    let mut seen = BTreeSet::new();
    points
        .iter()
        .enumerate()
        .filter(|(_, p)| seen.insert(p.hash.as_str()))
        .filter(|(_, p)| !has_point(dir, &p.hash))
        .map(|(i, _)| i)
        .collect()
}

/// The run result in point `hash`'s result file under `dir`: `Ok(Err(message))` for a
/// point whose run failed.
pub fn read_result(
    dir: &Path,
    hash: &str,
) -> Result<Result<hetsched_core::RunResult, String>, Error> {
    let path = point_path(dir, hash);
    let text = std::fs::read_to_string(&path).map_err(io(&path))?;
    let bad = |m: String| Error::Reproduce(format!("{}: {m}", path.display()));
    let rerun = "an incomplete result file: rerun the sweep to run its point again";
    let mut v: Value = serde_json::from_str(&text).map_err(|e| bad(format!("{e} ({rerun})")))?;
    if v.get("hash").and_then(Value::as_str) != Some(hash) {
        return Err(bad(format!("not the result of point {hash} ({rerun})")));
    }
    if let Some(e) = v.get("error").and_then(Value::as_str) {
        return Ok(Err(e.to_string()));
    }
    let r = v
        .get_mut("result")
        .map(Value::take)
        .ok_or_else(|| bad("no \"result\" in the result file".into()))?;
    serde_json::from_value(r)
        .map(Ok)
        .map_err(|e| bad(e.to_string()))
}

/// Runs `points[i]` for each `i` of `missing` (from [`missing`]): by `executor` when
/// given, which must leave every point's result file, else on `jobs` threads. Returns how
/// many ran.
pub fn run_missing(
    points: &[PointSpec],
    missing_points: &[usize],
    dir: &Path,
    jobs: usize,
    executor: Option<&Executor>,
    progress: Progress<'_>,
) -> Result<usize, Error> {
    let todo: Vec<&PointSpec> = missing_points.iter().map(|&i| &points[i]).collect();
    let Some(x) = executor else {
        return run_points(&todo, dir, jobs, progress);
    };
    let owned: Vec<PointSpec> = todo.iter().map(|&p| p.clone()).collect();
    (x.0)(&owned, dir)?;
    let left = missing(points, dir).len();
    if left > 0 {
        return Err(Error::Backend(format!(
            "{left} points have no result file after the other backend ran"
        )));
    }
    progress(owned.len(), owned.len());
    Ok(owned.len())
}

/// Runs `todo` on `jobs` threads, each result written to `dir` as it completes; stops at
/// the first error (the earliest in `todo` order among those seen). Returns how many ran.
pub fn run_points(
    todo: &[&PointSpec],
    dir: &Path,
    jobs: usize,
    progress: Progress<'_>,
) -> Result<usize, Error> {
    let n = todo.len();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let first_err: Mutex<Option<(usize, Error)>> = Mutex::new(None);
    let worker = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= n || stop.load(Ordering::Relaxed) {
            break;
        }
        let spec = todo[i];
        match run_point(spec).and_then(|text| write_point(dir, &spec.hash, &text)) {
            Ok(()) => progress(done.fetch_add(1, Ordering::Relaxed) + 1, n),
            Err(e) => {
                stop.store(true, Ordering::Relaxed);
                if let Ok(mut g) = first_err.lock() {
                    if g.as_ref().is_none_or(|(j, _)| i < *j) {
                        *g = Some((i, e));
                    }
                }
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 1..jobs.clamp(1, n.max(1)) {
            s.spawn(worker);
        }
        worker();
    });
    if let Some((_, e)) = first_err.into_inner().ok().flatten() {
        return Err(e);
    }
    Ok(done.into_inner())
}

/// The manifest: `{"format", "name", "columns": [parameter names], "points": [{"index",
/// "hash", "params"}]}`.
fn manifest(exp: &Experiment, points: &[PointSpec]) -> String {
    let columns: Vec<String> = points
        .first()
        .map(|p| p.params.keys().cloned().collect())
        .unwrap_or_default();
    let pts: Vec<Value> = points
        .iter()
        .map(|p| serde_json::json!({"index": p.index, "hash": p.hash, "params": p.params}))
        .collect();
    let v = serde_json::json!({
        "format": FORMAT,
        "name": exp.name,
        "columns": columns,
        "points": pts,
    });
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

/// Progress callback: `(points run, points to run)`.
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// What a sweep did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The plan it followed.
    pub plan: Plan,
    /// Points run now (the rest had result files).
    pub ran: usize,
    /// The combined table.
    pub table: Table,
}

/// Runs the missing points of `exp` into `dir` on `jobs` threads, then writes the
/// combined table ([`finish`]).
pub fn run(
    exp: &Experiment,
    dir: &Path,
    jobs: usize,
    progress: Progress<'_>,
) -> Result<Outcome, Error> {
    run_with(exp, dir, jobs, None, progress)
}

/// [`run`], the missing points run by `executor` when given (else on `jobs` threads).
pub fn run_with(
    exp: &Experiment,
    dir: &Path,
    jobs: usize,
    executor: Option<&Executor>,
    progress: Progress<'_>,
) -> Result<Outcome, Error> {
    let plan = plan(exp, dir)?;
    let ran = run_missing(&plan.points, &plan.missing, dir, jobs, executor, progress)?;
    let table = finish(dir)?;
    Ok(Outcome { ran, plan, table })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`point_hash`] from its kept prefix is the SHA-256 of the whole canonical object,
    /// for a duration and without one, with noise applied and without.
    #[test]
    fn the_hash_from_a_prefix_is_the_hash_of_the_whole_text() {
        let workload = crate::load_workload(
            "gen:periodic:duty=20,tasks=4,period=10ms,duration=1s",
            &Default::default(),
        )
        .unwrap();
        for (seed, duration_ns, noise) in [
            (1, Some(4_000_000_000), false),
            (u64::MAX, None, false),
            (7, Some(1), true),
        ] {
            let platform = crate::load_platform("hikey960").unwrap();
            let workload = if noise {
                apply_noise(
                    &workload,
                    &NoiseConfig::default(),
                    platform.cpus.len(),
                    seed,
                )
            } else {
                workload.clone()
            };
            let spec = RunSpec {
                platform,
                workload,
                options: Options::default().apply_sets(&["kernel=v5.10"]).unwrap(),
                seed,
                duration_ns,
            };
            let mut w = spec.workload.clone();
            w.source = Some("name".into());
            w.warnings.clear();
            let whole = serde_json::json!({
                "format": FORMAT,
                "hetsched": env!("CARGO_PKG_VERSION"),
                "platform": spec.platform,
                "workload": w,
                "options": spec.options,
                "seed": spec.seed,
                "duration_ns": spec.duration_ns,
            });
            assert_eq!(
                point_hash(&spec, "name"),
                sha256_hex(&serde_json::to_string(&whole).unwrap())
            );
        }
    }
}
