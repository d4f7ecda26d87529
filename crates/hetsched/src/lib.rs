//! hetsched: load platforms and workloads by name or path and run them.
//!
//! The one entry point the CLI, the benchmarks and the Python module share. Platforms
//! come from `hetsched-platform` (presets or YAML files), workloads from `hetsched-rtapp`
//! (rt-app JSON files, or the shipped workloads `demo` and `browser-long`), traces go to
//! `hetsched-trace` writers, and the run itself is [`hetsched_core::run`].

use hetsched_core::noise::{apply_noise, NoiseConfig};
use hetsched_core::options::Options;
use hetsched_core::platform::Platform;
use hetsched_core::time::{Nanos, NSEC_PER_MSEC, NSEC_PER_SEC, NSEC_PER_USEC};
use hetsched_core::trace::TraceSink;
use hetsched_core::workload::Workload;
use hetsched_core::{RunError, RunResult, RunSpec};
use std::path::{Path, PathBuf};

pub mod fuzz;
pub mod output;
pub mod report;
pub mod reproduce;
pub mod summary;
pub mod sweep;

pub use hetsched_core;
pub use hetsched_platform;
pub use hetsched_rtapp;
pub use hetsched_trace;

/// Workloads shipped with hetsched: name, the file in the repository (what messages
/// name), its text.
const WORKLOAD_PRESETS: &[(&str, &str, &str)] = &[
    (
        "demo",
        "presets/workloads/demo.json",
        include_str!("../../../presets/workloads/demo.json"),
    ),
    (
        "browser-long",
        "tests/rtapp-examples/browser-long.json",
        include_str!("../../../tests/rtapp-examples/browser-long.json"),
    ),
];

/// Errors of the facade; each Display is one line naming the file (and line and column
/// where there is one).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Platform file or preset.
    #[error(transparent)]
    Platform(#[from] hetsched_platform::PlatformError),
    /// Workload file.
    #[error(transparent)]
    Workload(#[from] hetsched_rtapp::RtappError),
    /// A built-in generator's name or parameters (`gen:NAME:k=v,…`).
    #[error(transparent)]
    Generator(#[from] hetsched_rtapp::gen::GenError),
    /// Options or the run.
    #[error(transparent)]
    Run(#[from] RunError),
    /// Options.
    #[error(transparent)]
    Options(#[from] hetsched_core::options::OptionsError),
    /// A duration argument: the argument and what is wrong with it.
    #[error("--duration {0}: {1}")]
    Duration(String, &'static str),
    /// `hetsched reproduce`: an unknown experiment, or a run whose result lacks what
    /// the experiment measures.
    #[error("reproduce: {0}")]
    Reproduce(String),
    /// Another backend running sweep points (`--ray`): what failed, in one line.
    #[error("{0}")]
    Backend(String),
    /// An experiment file (`hetsched sweep`), or a sweep's point or directory:
    /// `FILE:LINE:COL: …` or `point N (…): …`.
    #[error(transparent)]
    Experiment(#[from] sweep::ExperimentError),
    /// A report's input: `FILE: what is wrong` (`hetsched report`).
    #[error("report: {0}")]
    Report(String),
    /// An input file read here (a noise configuration): `FILE:LINE:COL: …`.
    #[error("{at}: {msg}")]
    Input {
        /// `file:line:col`.
        at: String,
        /// What is wrong and what would be accepted.
        msg: String,
    },
    /// I/O on an output file.
    #[error("{path}: {err}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        err: std::io::Error,
    },
}

/// Names of the workloads shipped with hetsched.
pub fn workload_preset_names() -> Vec<&'static str> {
    WORKLOAD_PRESETS.iter().map(|(n, _, _)| *n).collect()
}

/// Loads a platform: a preset name, or a path to a YAML file.
pub fn load_platform(name_or_path: &str) -> Result<Platform, Error> {
    Ok(hetsched_platform::load(name_or_path)?)
}

/// Loads a workload: a built-in generator spec `gen:NAME[:k=v,…][+NAME…]` (see
/// [`hetsched_rtapp::gen`]), a path to an rt-app JSON file, or the name of a shipped
/// workload. The checks that need no platform ([`hetsched_core::sim::check_program`]:
/// events, locking) are applied here, so `validate` rejects what `run` rejects.
pub fn load_workload(
    name_or_path: &str,
    opts: &hetsched_rtapp::ReadOptions,
) -> Result<Workload, Error> {
    let w = read_workload(name_or_path, opts)?;
    hetsched_core::sim::check_program(&w)?;
    Ok(w)
}

fn read_workload(
    name_or_path: &str,
    opts: &hetsched_rtapp::ReadOptions,
) -> Result<Workload, Error> {
    if name_or_path.starts_with("gen:") {
        return Ok(hetsched_rtapp::gen::from_spec(name_or_path)?);
    }
    let path = Path::new(name_or_path);
    if !path.exists() {
        if let Some((name, origin, text)) =
            WORKLOAD_PRESETS.iter().find(|(n, _, _)| *n == name_or_path)
        {
            let mut w = hetsched_rtapp::parse_str(text, origin, opts)?;
            w.name = (*name).to_string();
            return Ok(w);
        }
    }
    Ok(hetsched_rtapp::read_file(path, opts)?)
}

/// Reads a noise configuration file (`reproduce --noise`; JSON, the fields of
/// [`NoiseConfig`]); see [`parse_noise_config`].
pub fn read_noise_config(path: &Path) -> Result<NoiseConfig, Error> {
    let origin = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|err| Error::Input {
        at: format!("{origin}:1:1"),
        msg: format!("cannot read the file: {err}"),
    })?;
    parse_noise_config(&bytes, &origin)
}

/// Parses and checks a noise configuration; an error is one line at `origin:LINE:COL`
/// (an out-of-range value at its key).
pub fn parse_noise_config(bytes: &[u8], origin: &str) -> Result<NoiseConfig, Error> {
    let text = hetsched_core::text::utf8(bytes).map_err(|e| Error::Input {
        at: format!("{origin}:{}:{}", e.line, e.col),
        msg: format!("expected {}", e.expected()),
    })?;
    let cfg: NoiseConfig = serde_json::from_str(text).map_err(|e| {
        let msg = e.to_string();
        let msg = msg.split(" at line ").next().unwrap_or_default();
        let hint = if msg.contains("expected") {
            ""
        } else {
            " (expected a noise configuration: start_jitter_us, work_jitter_ppm, background, kthreads)"
        };
        Error::Input {
            at: format!("{origin}:{}:{}", e.line(), e.column()),
            msg: hetsched_core::text::one_line(&format!("{msg}{hint}")),
        }
    })?;
    cfg.validate().map_err(|msg| {
        // the message starts with the key path, `background.period_us: …`
        let path = msg.split(':').next().unwrap_or_default();
        let (line, col) = locate_json_key(text, path);
        Error::Input {
            at: format!("{origin}:{line}:{col}"),
            msg,
        }
    })?;
    Ok(cfg)
}

/// The position of the last key of `a.b.c` in JSON `text`, each key searched after the
/// previous one; 1:1 when a key is absent (a default value).
fn locate_json_key(text: &str, path: &str) -> (usize, usize) {
    let mut from = 0;
    let mut found = None;
    for key in path.split('.') {
        match text[from..].find(&format!("\"{key}\"")) {
            Some(i) => {
                from += i;
                found = Some(from);
                from += key.len() + 2;
            }
            None => break,
        }
    }
    let Some(at) = found else { return (1, 1) };
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Every scheduling-policy variant hetsched models, as `--set` lists with a label:
/// each cpufreq governor, each kernel profile, and the policy choices a profile's
/// defaults do not show (CFS or EEVDF, each load-balancer version, `wake_cap()`, EAS off,
/// the overutilized gate, interactive's android-4.4 form with boosts, HMP, a
/// capacity-blind scheduler). The property test of `tests/integration.rs` runs random
/// workloads under every one; the rt-app fuzz target runs under one its input picks.
/// HMP needs two capacity classes (a platform with them).
pub fn policy_variants() -> Vec<(String, Vec<String>)> {
    use hetsched_core::options::{Governor, KernelProfile};
    let mut v: Vec<(String, Vec<String>)> = Vec::new();
    for g in Governor::ALL {
        let mut sets = vec![format!("cpufreq.governor={}", g.as_str())];
        if g == Governor::Userspace {
            // one frequency for every domain, resolved to an OPP of each
            sets.push("cpufreq.userspace_khz=[1000000]".into());
        }
        v.push((sets.join(" "), sets));
    }
    for k in KernelProfile::ALL {
        let set = format!("kernel={}", k.name());
        v.push((set.clone(), vec![set]));
    }
    let more: [&[&str]; 15] = [
        &["fair.variant=cfs"],
        &["fair.variant=eevdf", "kernel=v5.10"],
        &["balance.misfit=false"],
        &["balance.version=v4.20"],
        &["balance.version=v5.9"],
        &["balance.version=v5.10"],
        &["balance.version=v6.6"],
        &["fair.wakeup=wake_cap"],
        &["eas.mode=off"],
        &[
            "cpufreq.governor=schedutil",
            "eas.overutilized_gate=ignore_lone_task",
        ],
        &["kernel=v4.4", "cpufreq.governor=ondemand"],
        &[
            "cpufreq.governor=interactive",
            "cpufreq.interactive.version=android_4_4",
            "cpufreq.interactive.boostpulse_at_us=[50000,120000,125000]",
            "cpufreq.interactive.boost_at_us=[[80000,1],[200000,0]]",
        ],
        &["kernel=v3.10", "hmp.enabled=true"],
        &["hmp.enabled=true", "hmp.prio_filter=true"],
        &["sched.capacity_aware=false"],
    ];
    for sets in more {
        v.push((sets.join(" "), sets.iter().map(|s| s.to_string()).collect()));
    }
    v
}

/// Runs generator `name` with `key=value` parameters and returns the workload as strict
/// rt-app JSON (`hetsched gen NAME k=v…`, Python's `hetsched.generate`).
pub fn generate_json(name: &str, params: &[(String, String)]) -> Result<String, Error> {
    let w = hetsched_rtapp::gen::generate(name, params)?;
    Ok(hetsched_rtapp::to_rtapp_json(&w))
}

/// Splits `key=value` arguments; an argument without `=` is an error naming the generator.
pub fn split_params(name: &str, args: &[String]) -> Result<Vec<(String, String)>, Error> {
    args.iter()
        .map(|a| {
            a.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .filter(|(k, _)| !k.is_empty())
                .ok_or_else(|| {
                    Error::Generator(hetsched_rtapp::gen::GenError::new(
                        name,
                        format!("`{a}`: expected key=value (for example threads=4)"),
                    ))
                })
        })
        .collect()
}

/// The longest simulated duration a run takes: 2³¹ − 1 s, the longest `global.duration`
/// rt-app reads (a 32-bit int); every simulated time then fits the engine's nanosecond
/// clock with room.
pub const MAX_DURATION_S: u64 = i32::MAX as u64;

/// Parses a duration such as `10s`, `2.5s`, `500ms`, `100us`, `1000ns`: positive, at most
/// [`MAX_DURATION_S`].
pub fn parse_duration(s: &str) -> Result<Nanos, Error> {
    const SYNTAX: &str = "expected a number with a unit: ns, us, ms or s (for example 10s, 500ms)";
    let bad = |why| Error::Duration(s.to_string(), why);
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "s" | "" => NSEC_PER_SEC,
        "ms" => NSEC_PER_MSEC,
        "us" | "µs" => NSEC_PER_USEC,
        "ns" => 1,
        _ => return Err(bad(SYNTAX)),
    };
    // exact decimal parsing, no floats: integer part and up to 9 fractional digits
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty() && frac.is_empty() || frac.len() > 9 {
        return Err(bad(SYNTAX));
    }
    let int: u64 = if int.is_empty() {
        0
    } else {
        // only digits here: a failure is an overflow
        int.parse()
            .map_err(|_| bad("too long: at most 2147483647 s"))?
    };
    let mut frac_ns: u64 = 0;
    if !frac.is_empty() {
        let f: u64 = frac.parse().map_err(|_| bad(SYNTAX))?;
        frac_ns = f * scale / 10u64.pow(frac.len() as u32);
    }
    let ns = int
        .checked_mul(scale)
        .and_then(|v| v.checked_add(frac_ns))
        .filter(|&v| v <= MAX_DURATION_S * NSEC_PER_SEC)
        .ok_or_else(|| bad("too long: at most 2147483647 s"))?;
    if ns == 0 {
        return Err(bad("a run needs a positive duration"));
    }
    Ok(ns)
}

/// One run as the CLI and Python describe it.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// Platform preset name or YAML path.
    pub platform: String,
    /// Workload path, shipped workload name, or generator spec (`gen:…`).
    pub workload: String,
    /// `key=value` option assignments.
    pub sets: Vec<String>,
    /// RNG seed.
    pub seed: u64,
    /// Simulated duration (overrides the workload's).
    pub duration: Option<Nanos>,
    /// Where to write the trace, if anywhere.
    pub trace: Option<PathBuf>,
    /// The trace's format; `None` chooses by the path's extension
    /// ([`hetsched_trace::TraceFormat::from_path`]: `.pftrace` is Perfetto, else text).
    pub trace_format: Option<hetsched_trace::TraceFormat>,
    /// How repeated JSON keys are read.
    pub read: hetsched_rtapp::ReadOptions,
    /// The noise model applied to the workload before the run
    /// ([`hetsched_core::noise::apply_noise`]); `None` (the default) = no noise.
    pub noise: Option<NoiseConfig>,
    /// Seed of the noise model's draws (independent of the engine's `seed`).
    pub noise_seed: u64,
}

/// A run's result with the inputs it was made from.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The result.
    pub result: RunResult,
    /// Warnings from reading the workload.
    pub warnings: Vec<String>,
}

/// Loads everything a request names, runs it, and writes the trace if asked.
pub fn run_request(req: &RunRequest) -> Result<Outcome, Error> {
    run_request_extra(req, None)
}

/// [`run_request`] with an `extra` sink beside the trace file (the report's
/// [`report::timeline::TimelineSink`]).
pub fn run_request_extra(
    req: &RunRequest,
    extra: Option<&mut dyn TraceSink>,
) -> Result<Outcome, Error> {
    let Some(path) = &req.trace else {
        return match extra {
            Some(e) => run_request_with(req, &mut [e]),
            None => run_request_with(req, &mut []),
        };
    };
    let io_err = |err| Error::Io {
        path: path.display().to_string(),
        err,
    };
    let format = req
        .trace_format
        .unwrap_or_else(|| hetsched_trace::TraceFormat::from_path(path));
    // written under a temporary name, renamed when the run is complete (crate::output)
    let (pending, file) = output::Pending::create(path)?;
    // the file's writes on a thread of their own (hetsched_trace::BackgroundWriter), the
    // sink's buffers handed to it whole
    let file = hetsched_trace::BackgroundWriter::new(file);
    let outcome = match format {
        hetsched_trace::TraceFormat::Text => {
            let mut sink = hetsched_trace::FtraceTextSink::new(file);
            let outcome = match extra {
                Some(e) => run_request_with(req, &mut [&mut sink, e])?,
                None => run_request_with(req, &mut [&mut sink])?,
            };
            if let Some(e) = sink.take_error() {
                return Err(io_err(e));
            }
            // written, flushed and the writing thread joined before the rename below
            sink.into_inner()
                .and_then(hetsched_trace::BackgroundWriter::into_inner)
                .map_err(io_err)?;
            outcome
        }
        hetsched_trace::TraceFormat::Perfetto | hetsched_trace::TraceFormat::PerfettoLegacy => {
            let config = format.perfetto_config().unwrap_or_default();
            let mut sink = hetsched_trace::PerfettoSink::with_config(file, config);
            let outcome = match extra {
                Some(e) => run_request_with(req, &mut [&mut sink, e])?,
                None => run_request_with(req, &mut [&mut sink])?,
            };
            if let Some(e) = sink.take_error() {
                return Err(io_err(e));
            }
            // written, flushed and the writing thread joined before the rename below
            sink.into_inner()
                .and_then(hetsched_trace::BackgroundWriter::into_inner)
                .map_err(io_err)?;
            outcome
        }
    };
    pending.commit()?;
    Ok(outcome)
}

/// [`run_request`] with the trace going to `sinks` (the request's `trace` path is not
/// used): for callers that read events in memory, as `reproduce schedfreq` reads rt-app's
/// per-loop statistics.
pub fn run_request_with(
    req: &RunRequest,
    sinks: &mut [&mut dyn TraceSink],
) -> Result<Outcome, Error> {
    let platform = load_platform(&req.platform)?;
    let mut workload = load_workload(&req.workload, &req.read)?;
    if let Some(cfg) = &req.noise {
        cfg.validate()
            .map_err(|m| Error::Reproduce(format!("noise model: {m}")))?;
        workload = apply_noise(&workload, cfg, platform.cpus.len(), req.noise_seed);
    }
    let options = Options::default().apply_sets(&req.sets)?;
    let mut warnings = workload.warnings.clone();
    let spec = RunSpec {
        platform,
        workload,
        options,
        seed: req.seed,
        duration_ns: req.duration,
    };
    let result = hetsched_core::run(&spec, sinks)?;
    warnings.extend(result.warnings.iter().cloned());
    Ok(Outcome { result, warnings })
}

/// The result as pretty JSON (deterministic bytes for the same inputs and seed).
pub fn result_json(r: &RunResult) -> String {
    let mut s = serde_json::to_string_pretty(r).unwrap_or_default();
    s.push('\n');
    s
}

/// The result as JSON with its timeline (`"timeline"`, after the result's own keys):
/// what `hetsched run --timeline --json` writes and the report reads.
pub fn result_value_with_timeline(
    r: &RunResult,
    timeline: Option<&report::timeline::Timeline>,
) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap_or(serde_json::Value::Null);
    if let (Some(tl), Some(o)) = (timeline, v.as_object_mut()) {
        o.insert(
            "timeline".into(),
            serde_json::to_value(tl).unwrap_or(serde_json::Value::Null),
        );
    }
    v
}

/// [`result_value_with_timeline`] as pretty JSON with a trailing newline.
pub fn result_json_with_timeline(
    r: &RunResult,
    timeline: Option<&report::timeline::Timeline>,
) -> String {
    let mut s =
        serde_json::to_string_pretty(&result_value_with_timeline(r, timeline)).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_policy_variant_resolves_on_a_two_class_platform() {
        let p = crate::load_platform("tc2").unwrap_or_else(|e| panic!("{e}"));
        let v = crate::policy_variants();
        assert_eq!(v.len(), 8 + 9 + 15);
        for (label, sets) in &v {
            let o = hetsched_core::options::Options::default()
                .apply_sets(sets)
                .unwrap_or_else(|e| panic!("{label}: {e}"));
            hetsched_core::options::Settings::resolve(&o, &p)
                .unwrap_or_else(|e| panic!("{label}: {e}"));
        }
    }

    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s").unwrap(), 10 * NSEC_PER_SEC);
        assert_eq!(parse_duration("2.5s").unwrap(), 2_500_000_000);
        assert_eq!(parse_duration("500ms").unwrap(), 500 * NSEC_PER_MSEC);
        assert_eq!(parse_duration("100us").unwrap(), 100_000);
        assert_eq!(parse_duration("7").unwrap(), 7 * NSEC_PER_SEC);
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("1h").is_err());
        assert!(parse_duration("0s").is_err());
        let msg = |d: &str| parse_duration(d).unwrap_err().to_string();
        assert_eq!(msg("0"), "--duration 0: a run needs a positive duration");
        assert!(msg("fast").contains("expected a number with a unit"));
        // 18446744073 s fits u64 ns but not the engine's clock with its offsets
        for d in ["18446744073s", "2147483648s", "99999999999999999999999s"] {
            assert_eq!(
                msg(d),
                format!("--duration {d}: too long: at most 2147483647 s")
            );
        }
        assert!(parse_duration("2147483647s").is_ok());
    }

    #[test]
    fn generator_specs_load_and_write_json() {
        let w = load_workload("gen:hackbench:groups=2,loops=3", &Default::default()).unwrap();
        assert_eq!(w.tasks.len(), 80);
        assert_eq!(w.source.as_deref(), Some("gen:hackbench:groups=2,loops=3"));
        let e = load_workload("gen:hackbench:groups=0", &Default::default())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("gen:hackbench: groups=0"), "{e}");
        let p = split_params("periodic", &["duty=5".into(), "period=16ms".into()]).unwrap();
        let json = generate_json("periodic", &p).unwrap();
        assert!(json.contains("\"run\": 800"), "{json}");
        assert!(split_params("periodic", &["duty".into()]).is_err());
    }

    #[test]
    fn demo_workload_loads() {
        let w = load_workload("demo", &Default::default()).unwrap();
        assert_eq!(w.name, "demo");
        assert_eq!(w.tasks.len(), 3);
    }
}
