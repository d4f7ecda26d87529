//! `hetsched reproduce NAME`: the reference experiments of `docs/experiments.md`, each
//! rerun with the policy before and after its patch series and printed beside the
//! series' own numbers.
//!
//! An experiment is variants × cases × runs. Every run is one [`crate::run_request`] with
//! the noise model ([`hetsched_core::noise`]) on; the noise seed and the engine seed of
//! run `i` of case `c` are derived from (base seed, `c`, `i`) by [`run_seed`] — the same
//! seeds for every variant, so variants are compared on identical noise. Runs are
//! independent and may run on several threads ([`ReproduceOptions::jobs`]); results are
//! put back in index order, so the output is byte-identical whatever the thread count.
//!
//! # The JSON report
//!
//! ```json
//! {"experiment": "misfit", "runs": 10, "seed": 0, "noise": {…},
//!  "results": {VARIANT: {CASE: {…metrics…}}},
//!  "seed_reference": {VARIANT: {CASE: {…the series' figures, same keys…}}},
//!  "criteria": [{"name": …, "measured": …, "threshold": …, "pass": true}],
//!  "notes": […]}
//! ```
//!
//! `results` is nested variant first, then case: for `misfit` the variants are `tip` and
//! `misfit` and the cases the platforms `juno_r0` and `hikey960`, each with
//! `longest_avg_s`, `longest_max_s` and `per_run_completion_s` (a list per run of the
//! unpinned tasks' completion times); for `fairness` the variants are `v5.9` and `v5.10`
//! and the cases `9_threads`, `11_threads` (`ratio_avg_pct`, `ratio_sd_pct`,
//! `ratio_worst_pct`) and `hackbench_1grp` … `hackbench_16grp` (`time_s`); for `hmp` the
//! variants are `smp` and `hmp` and the cases the workload's threads (`exec_time_avg_s`,
//! `exec_time_sd_s`, `exec_time_p10_s`, `exec_time_p90_s`, `per_run_s`). `runs` is the
//! number of repeated runs of the main measurement (each case also says its own).

pub mod fairness;
pub mod hmp;
pub mod misfit;
pub mod overutilized;
pub mod schedfreq;

use crate::{run_request, Error, RunRequest};
use hetsched_core::noise::NoiseConfig;
use hetsched_core::RunResult;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The experiments `hetsched reproduce` knows, in `all` order.
pub const EXPERIMENTS: &[&str] = &[
    hmp::NAME,
    misfit::NAME,
    fairness::NAME,
    overutilized::NAME,
    schedfreq::NAME,
];

/// How to run an experiment.
#[derive(Debug, Clone)]
pub struct ReproduceOptions {
    /// Repeated runs per case and variant; `None` = the experiment's default.
    pub runs: Option<usize>,
    /// Base seed of the per-run seeds.
    pub seed: u64,
    /// Worker threads (at least 1).
    pub jobs: usize,
    /// Fewer runs and shorter workloads, for CI.
    pub quick: bool,
    /// The noise model.
    pub noise: NoiseConfig,
    /// Platforms read from files instead of the presets of the same name
    /// (`--platform NAME=FILE`), e.g. a `juno_r0` with `work_dmips_mhz`.
    pub platforms: BTreeMap<String, String>,
    /// Keep each run's result as a sweep's result file, `DIR/points/<hash>.json`
    /// ([`crate::sweep`]), and run only the runs without one: a reproduction that was
    /// interrupted resumes, and one rerun with the same inputs runs nothing. `None`: the
    /// runs' results stay in memory.
    pub dir: Option<std::path::PathBuf>,
    /// Runs the missing runs instead of this process's threads (the CLI's `--ray`);
    /// needs `dir`.
    pub executor: Option<crate::sweep::Executor>,
}

impl ReproduceOptions {
    /// Where the experiment's platform `name` comes from: its file if one replaces it,
    /// else the preset.
    pub fn platform_source<'a>(&'a self, name: &'a str) -> &'a str {
        self.platforms.get(name).map_or(name, String::as_str)
    }

    /// Loads the experiment's platform `name` (see [`ReproduceOptions::platform_source`]).
    pub fn load_platform(&self, name: &str) -> Result<hetsched_core::platform::Platform, Error> {
        crate::load_platform(self.platform_source(name))
    }
}

impl Default for ReproduceOptions {
    fn default() -> Self {
        ReproduceOptions {
            runs: None,
            seed: 0,
            jobs: 1,
            quick: false,
            noise: NoiseConfig::default(),
            platforms: BTreeMap::new(),
            dir: None,
            executor: None,
        }
    }
}

/// One reproduction criterion of `docs/experiments.md`, evaluated on the numbers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// What is checked.
    pub name: String,
    /// The measured value.
    pub measured: f64,
    /// What it had to be, in words (`≥ 8 points`, `4.15 … 16.6 %`).
    pub threshold: String,
    /// Whether it holds.
    pub pass: bool,
}

/// An experiment's outcome: the JSON report's parts and the printed table.
#[derive(Debug, Clone)]
pub struct Report {
    /// Experiment name.
    pub experiment: &'static str,
    /// Repeated runs of the main measurement.
    pub runs: usize,
    /// Base seed.
    pub seed: u64,
    /// The noise model used.
    pub noise: NoiseConfig,
    /// `results[VARIANT][CASE]` = metrics.
    pub results: Map<String, Value>,
    /// The series' figures, nested like `results`.
    pub seed_reference: Map<String, Value>,
    /// The criteria and their verdicts.
    pub criteria: Vec<Verdict>,
    /// Modelling notes (also printed under the table).
    pub notes: Vec<String>,
    /// The table, the criteria and the notes as printed.
    pub table: String,
}

impl Report {
    /// The JSON report (pretty, deterministic bytes, trailing newline).
    pub fn to_json(&self) -> String {
        let mut m = Map::new();
        m.insert("experiment".into(), Value::from(self.experiment));
        m.insert("runs".into(), Value::from(self.runs));
        m.insert("seed".into(), Value::from(self.seed));
        m.insert(
            "noise".into(),
            serde_json::to_value(self.noise).unwrap_or(Value::Null),
        );
        m.insert("results".into(), Value::Object(self.results.clone()));
        m.insert(
            "seed_reference".into(),
            Value::Object(self.seed_reference.clone()),
        );
        m.insert(
            "criteria".into(),
            serde_json::to_value(&self.criteria).unwrap_or(Value::Null),
        );
        m.insert("notes".into(), Value::from(self.notes.clone()));
        let mut s = serde_json::to_string_pretty(&Value::Object(m)).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Whether every criterion holds.
    pub fn all_pass(&self) -> bool {
        self.criteria.iter().all(|v| v.pass)
    }
}

/// Progress callback: `(runs done, runs in all)`.
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// Runs experiment `name` (one of [`EXPERIMENTS`]).
pub fn run(name: &str, opts: &ReproduceOptions, progress: Progress<'_>) -> Result<Report, Error> {
    let Some(platforms) = platforms_of(name) else {
        return Err(Error::Reproduce(format!(
            "unknown experiment `{name}`; expected one of: {}, all",
            EXPERIMENTS.join(", ")
        )));
    };
    let replaced: Vec<(&String, &String)> = opts
        .platforms
        .iter()
        .filter(|(k, _)| platforms.contains(&k.as_str()))
        .collect();
    let mut report = match name {
        misfit::NAME => misfit::run(opts, progress),
        fairness::NAME => fairness::run(opts, progress),
        schedfreq::NAME => schedfreq::run(opts, progress),
        hmp::NAME => hmp::run(opts, progress),
        _ => overutilized::run(opts, progress),
    }?;
    for (k, v) in replaced {
        let note = format!("Platform {k} read from {v}, not the preset.");
        report.table.push_str(&format!("  - {note}\n"));
        report.notes.push(note);
    }
    Ok(report)
}

/// The platforms experiment `name` runs on (`None`: no such experiment).
pub fn platforms_of(name: &str) -> Option<&'static [&'static str]> {
    match name {
        misfit::NAME => Some(misfit::PLATFORMS),
        fairness::NAME => Some(&[fairness::PLATFORM]),
        overutilized::NAME => Some(overutilized::PLATFORMS),
        schedfreq::NAME => Some(&[schedfreq::PLATFORM]),
        hmp::NAME => Some(&[hmp::PLATFORM]),
        _ => None,
    }
}

/// FNV-1a 64 of `s`.
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// splitmix64's finaliser.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The seed of run `run` of case `case` (noise and engine): a function of the base seed,
/// the case and the run index only — never of the variant.
pub fn run_seed(base: u64, case: &str, run: usize) -> u64 {
    mix(mix(base ^ fnv1a(case)).wrapping_add(run as u64))
}

/// One run to do: a request and where its result goes.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    /// Variant index.
    pub variant: usize,
    /// Case index.
    pub case: usize,
    /// Run index.
    pub run: usize,
    /// The request.
    pub req: RunRequest,
}

/// A request for run `run` of `case` with the variant's `sets`, noise on.
pub(crate) fn request(
    opts: &ReproduceOptions,
    platform: &str,
    workload: String,
    case: &str,
    run: usize,
    sets: &[&str],
    duration: Option<u64>,
) -> RunRequest {
    let seed = run_seed(opts.seed, case, run);
    RunRequest {
        platform: opts.platform_source(platform).to_string(),
        workload,
        sets: sets.iter().map(|s| s.to_string()).collect(),
        seed,
        duration,
        noise: Some(opts.noise),
        noise_seed: seed,
        ..RunRequest::default()
    }
}

/// Runs `jobs` on `opts.jobs` worker threads; results in job order. The first error (in
/// job order) is returned. With `opts.dir`, each job is a sweep point: those with a
/// result file are read back, the others run (by `opts.executor` when given) and leave
/// one.
pub(crate) fn run_jobs(
    jobs: &[Job],
    opts: &ReproduceOptions,
    progress: Progress<'_>,
) -> Result<Vec<RunResult>, Error> {
    match &opts.dir {
        Some(dir) => run_jobs_in(jobs, dir, opts, progress),
        None if opts.executor.is_some() => Err(Error::Reproduce(
            "another executor (--ray) needs a results directory (--dir)".into(),
        )),
        None => run_jobs_here(jobs, opts.jobs, progress),
    }
}

/// [`run_jobs`] through result files under `dir`.
fn run_jobs_in(
    jobs: &[Job],
    dir: &std::path::Path,
    opts: &ReproduceOptions,
    progress: Progress<'_>,
) -> Result<Vec<RunResult>, Error> {
    let points = points_in(jobs, dir, opts, None, progress)?;
    points
        .iter()
        .map(|p| {
            crate::sweep::read_result(dir, &p.hash)?
                .map_err(|e| Error::Reproduce(format!("run {} ({}): {e}", p.index, p.hash)))
        })
        .collect()
}

/// rt-app's per-loop statistics (run µs, slack µs) of task `task`'s threads in each of
/// `jobs` (whose options turn on `trace.rtapp_markers`), in job order: through result
/// files under `opts.dir` as [`run_jobs`] does, else in memory.
pub(crate) fn run_jobs_loop_stats(
    jobs: &[Job],
    opts: &ReproduceOptions,
    task: &str,
    progress: Progress<'_>,
) -> Result<Vec<Vec<(i64, i64)>>, Error> {
    match &opts.dir {
        Some(dir) => points_in(jobs, dir, opts, Some(task), progress)?
            .iter()
            .map(|p| crate::sweep::read_loop_stats(dir, &p.hash))
            .collect(),
        None if opts.executor.is_some() => Err(Error::Reproduce(
            "another executor (--ray) needs a results directory (--dir)".into(),
        )),
        None => run_each(jobs, opts.jobs, progress, |req| {
            let mut sink = crate::sweep::LoopStatsSink::new(task);
            crate::run_request_with(req, &mut [&mut sink])?;
            Ok(sink.loops)
        }),
    }
}

/// `jobs` as sweep points with result files under `dir`: the missing ones run (by
/// `opts.executor` when given, else on `opts.jobs` threads).
fn points_in(
    jobs: &[Job],
    dir: &std::path::Path,
    opts: &ReproduceOptions,
    loop_stats_of: Option<&str>,
    progress: Progress<'_>,
) -> Result<Vec<crate::sweep::PointSpec>, Error> {
    use crate::sweep;
    let points = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| {
            let mut params = Map::new();
            params.insert("variant".into(), Value::from(j.variant));
            params.insert("case".into(), Value::from(j.case));
            params.insert("run".into(), Value::from(j.run));
            sweep::point_of_request(i, params, &j.req, loop_stats_of)
        })
        .collect::<Result<Vec<_>, Error>>()?;
    sweep::prepare_dir(dir)?;
    let todo = sweep::missing(&points, dir);
    sweep::run_missing(
        &points,
        &todo,
        dir,
        opts.jobs,
        opts.executor.as_ref(),
        progress,
    )?;
    Ok(points)
}

/// [`run_jobs`] in memory on `threads` threads.
fn run_jobs_here(
    jobs: &[Job],
    threads: usize,
    progress: Progress<'_>,
) -> Result<Vec<RunResult>, Error> {
    run_each(jobs, threads, progress, |req| {
        run_request(req).map(|o| o.result)
    })
}

/// `f` of each job's request on `threads` threads; results in job order, the first
/// error (in job order) returned.
fn run_each<T: Send>(
    jobs: &[Job],
    threads: usize,
    progress: Progress<'_>,
    f: impl Fn(&RunRequest) -> Result<T, Error> + Sync,
) -> Result<Vec<T>, Error> {
    let n = jobs.len();
    let slots: Vec<Mutex<Option<Result<T, Error>>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let worker = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= n {
            break;
        }
        let r = f(&jobs[i].req);
        if let Ok(mut s) = slots[i].lock() {
            *s = Some(r);
        }
        progress(done.fetch_add(1, Ordering::Relaxed) + 1, n);
    };
    std::thread::scope(|s| {
        for _ in 1..threads.clamp(1, n.max(1)) {
            s.spawn(worker);
        }
        worker();
    });
    slots
        .into_iter()
        .enumerate()
        .map(|(i, m)| {
            m.into_inner()
                .ok()
                .flatten()
                .unwrap_or_else(|| Err(Error::Reproduce(format!("run {i} did not complete"))))
        })
        .collect()
}

/// Threads of a result that belong to the workload (not the noise model's background).
pub(crate) fn workload_tasks(
    r: &RunResult,
) -> impl Iterator<Item = &hetsched_core::metrics::TaskMetrics> {
    r.tasks
        .iter()
        .filter(|t| !hetsched_core::noise::is_background_comm(&t.comm))
}

/// The task name of a thread's comm `<task>-<thread index>`.
pub(crate) fn task_of(comm: &str) -> &str {
    comm.rsplit_once('-').map_or(comm, |(t, _)| t)
}

/// Mean of `v` (0 for none).
pub(crate) fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Sample standard deviation of `v` (n − 1; 0 for fewer than two values).
pub(crate) fn sd(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let m = mean(v);
    (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
}

/// Rounds to `d` decimals for the JSON (the runs' own numbers are kept in full where
/// listed per run).
pub(crate) fn round(x: f64, d: i32) -> f64 {
    let p = 10f64.powi(d);
    (x * p).round() / p
}

/// A JSON object from pairs.
pub(crate) fn obj(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// Renders the criteria lines and the notes under a table.
pub(crate) fn render_footer(out: &mut String, criteria: &[Verdict], notes: &[String]) {
    use std::fmt::Write as _;
    let _ = writeln!(out, "\nReproduction criteria (docs/experiments.md):");
    for v in criteria {
        let _ = writeln!(
            out,
            "  [{}] {}: measured {:.2}, required {}",
            if v.pass { "PASS" } else { "FAIL" },
            v.name,
            v.measured,
            v.threshold
        );
    }
    let _ = writeln!(out, "\nNotes:");
    for n in notes {
        let _ = writeln!(out, "  - {n}");
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn seeds_depend_on_case_and_run_not_variant() {
        let a = run_seed(0, "juno_r0", 0);
        assert_eq!(a, run_seed(0, "juno_r0", 0));
        assert_ne!(a, run_seed(0, "juno_r0", 1));
        assert_ne!(a, run_seed(0, "hikey960", 0));
        assert_ne!(a, run_seed(1, "juno_r0", 0));
    }

    #[test]
    fn statistics_by_hand() {
        // mean(1, 2, 3, 4) = 2.5; sample sd = sqrt((2.25 + 0.25 + 0.25 + 2.25) / 3)
        // = sqrt(5/3) = 1.29099…
        assert_eq!(mean(&[1.0, 2.0, 3.0, 4.0]), 2.5);
        assert!((sd(&[1.0, 2.0, 3.0, 4.0]) - (5.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!(sd(&[7.0]), 0.0);
        assert_eq!(round(1.23456, 3), 1.235);
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let e = run("hmq", &ReproduceOptions::default(), &|_, _| {})
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "reproduce: unknown experiment `hmq`; expected one of: hmp, misfit, fairness, overutilized, schedfreq, all"
        );
    }
}
