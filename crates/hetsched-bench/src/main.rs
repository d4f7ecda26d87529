//! hetsched benchmarks with pinned inputs (`make bench`).
//!
//! Each benchmark runs in its own process (`hetsched-bench NAME`) so that its peak
//! memory (`VmHWM`) is its own, and prints one line:
//! `bench NAME: sim S s in W s wall = X xRT, E events, R events/s, peak RSS M MiB`.
//!
//! - `periodic`: 32 periodic tasks, periods from {4, 8, 10, 16, 20, 40, 50, 100} ms, total
//!   utilisation about 3 CPUs (of the biggest CPU), on hikey960, 100 simulated seconds,
//!   trace off. Target: at least 1,000 xRT on one core.
//! - `periodic-perf`: the same with `cpufreq.governor=performance` (fixed frequency, no
//!   EAS, no schedutil kthread): the workload the benchmark ran before schedutil became
//!   the default, to compare with its history. Target: 1,500 xRT.
//! - `periodic-ondemand`, `periodic-conservative`, `periodic-interactive`, `periodic-sched`:
//!   the same under
//!   each sampling governor (their kworker or `cfinteractive` threads included), for the
//!   cost of each governor against `periodic` (schedutil) and `periodic-perf`.
//! - `periodic-trace`: the same, writing the ftrace text to a file. Target: 250 xRT.
//! - `periodic-pftrace`: the same, writing Perfetto protobuf (`--trace x.pftrace`) to a
//!   file. Target: 400 xRT. For both, the clock runs from creating the file (in the
//!   temporary directory, `TMPDIR`) to its last flush; removing it after is not counted.
//! - `hour`: `periodic` for 3,600 simulated seconds. Target: peak RSS within 2 MiB of
//!   `periodic`'s (statistics in constant memory).
//! - `large`: 256 CPUs (32 clusters of 8; half big, half LITTLE) and 2048 periodic tasks,
//!   10 simulated seconds, trace off. Target: 20 xRT.
//! - `large-wide`: `large`'s tasks on 256 CPUs in two frequency domains of 128 with an
//!   energy model (EAS, schedutil's shared policies and the sugov kthreads at that size).
//!   No target: it guards the paths whose cost grows with a domain's CPUs.
//! - `sweep`: the 64 points of [`SWEEP_TOML`] through `hetsched sweep`'s machinery
//!   (`hetsched::sweep::run`'s plan, runs and table, each timed) with 1 job, then with 2
//!   jobs, each into a new directory; three such rounds, the ratio of the best throughputs.
//!   Target: 2 jobs at least 1.8× the throughput of 1.
//! - `--check-target`: every target above, each benchmark in a child process (best of three
//!   for the xRT targets); one line per target, exit status 1 if any is missed.
//! - `workload NAME`: prints benchmark NAME's workload as rt-app JSON (for
//!   `tools/bench-peers.py`, which runs the same task set in SimSo).
//! - `dump NAME`: runs benchmark NAME once with the ftrace text on stdout and then the
//!   result JSON on stderr, for byte-identity checks of optimisations
//!   (`hetsched-bench dump periodic 2>r.json | sha256sum`).
//! - `train`: the training runs of the profile-guided build (`tools/pgo.sh`, `make pgo`):
//!   [`TRAINING`], inputs of the benchmarks' kinds and sizes that are none of the
//!   benchmarks' own (other task sets, periods, platforms and lengths), so that the
//!   profile-guided build is not tuned to the pinned inputs it is measured on.

use hetsched_core::options::Options;
use hetsched_core::platform::Platform;
use hetsched_core::time::NSEC_PER_SEC;
use hetsched_core::trace::TraceSink;
use hetsched_core::workload::{
    Calibration, Event, EventSpec, Phase, SchedAttrs, Span, TaskSpec, TimerMode, Workload,
};
use hetsched_core::{run, RunSpec};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

const PERIODS_MS: [u64; 8] = [4, 8, 10, 16, 20, 40, 50, 100];

/// `n` periodic tasks whose utilisations (on the biggest CPU at fmax) add up to `total`.
/// Task i has period PERIODS_MS[i % 8] and a duty from a fixed cycle of four weights.
fn periodic_workload(n: usize, total_util: f64) -> Workload {
    periodic_workload_of(
        n,
        total_util,
        &PERIODS_MS,
        &[0.5, 5.0 / 6.0, 7.0 / 6.0, 1.5],
    )
}

/// `n` periodic tasks of utilisations adding up to `total`: task i has period
/// `periods_ms[i % len]` and the duty `total / n` times `weights[i % len]` (weights of mean
/// 1).
fn periodic_workload_of(
    n: usize,
    total_util: f64,
    periods_ms: &[u64],
    weights: &[f64],
) -> Workload {
    let tasks = (0..n)
        .map(|i| {
            let period_us = periods_ms[i % periods_ms.len()] * 1000;
            let duty = total_util / n as f64 * weights[i % weights.len()];
            let run_us = ((period_us as f64) * duty).round().max(1.0) as u64;
            let ev = |event: Event, key: &str| EventSpec {
                event,
                key: key.to_string(),
                span: Span::default(),
            };
            TaskSpec {
                name: format!("t{i}"),
                instances: 1,
                loop_count: -1,
                delay_us: 0,
                attrs: SchedAttrs::default(),
                phases: vec![Phase {
                    name: "p".into(),
                    loop_count: 1,
                    attrs: SchedAttrs::default(),
                    events: vec![
                        ev(Event::Run { us: run_us }, "run"),
                        ev(
                            Event::Timer {
                                name: "unique".into(),
                                period_us,
                                mode: TimerMode::Relative,
                            },
                            "timer",
                        ),
                    ],
                }],
                span: Span::default(),
            }
        })
        .collect();
    Workload {
        name: format!("bench-periodic-{n}"),
        calibration: Calibration::PLoadNs(100),
        tasks,
        ..Workload::default()
    }
}

/// A synthetic 256-CPU platform: 32 clusters of 8 CPUs, each cluster its own perf domain;
/// even clusters big (capacity 1024), odd clusters LITTLE (dmips 512 at 3/4 fmax → 384).
fn large_platform() -> Platform {
    Platform::synthetic_clusters("bench-256", "synthetic 256-CPU benchmark platform", 32)
}

/// `large-wide`'s platform: 256 CPUs in two frequency domains of 128 (big: capacity-dmips-mhz
/// 1024, 4 OPPs up to 2 GHz; LITTLE: 512, 3 OPPs up to 1.5 GHz), with OPP voltages and
/// dynamic-power-coefficients, so the energy model registers and EAS runs
/// (2 × (256 + 4) is within `EM_MAX_COMPLEXITY`) and schedutil's shared policies span 128
/// CPUs: the paths `large`'s synthetic clusters of 8 with one OPP and no energy model
/// leave out.
fn wide_platform() -> Result<Platform, String> {
    let cpus = |from: usize| {
        (from..from + 128)
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let opps = |table: &[(u64, u64)]| {
        table
            .iter()
            .map(|(khz, uv)| format!("      - {{khz: {khz}, uv: {uv}}}\n"))
            .collect::<String>()
    };
    let yaml = format!(
        "name: bench-256-wide\n\
         description: \"synthetic 256-CPU benchmark platform, two 128-CPU frequency domains\"\n\
         sources: [\"synthetic (benchmark input)\"]\n\
         perf_domains:\n\
         \x20 - name: big\n\
         \x20   cpus: [{}]\n\
         \x20   core: big\n\
         \x20   capacity_dmips_mhz: 1024\n\
         \x20   dynamic_power_coefficient: 550\n\
         \x20   transition_latency_ns: 100000\n\
         \x20   opps:\n{}\
         \x20 - name: little\n\
         \x20   cpus: [{}]\n\
         \x20   core: little\n\
         \x20   capacity_dmips_mhz: 512\n\
         \x20   dynamic_power_coefficient: 110\n\
         \x20   transition_latency_ns: 100000\n\
         \x20   opps:\n{}",
        cpus(0),
        opps(&[
            (900_000, 700_000),
            (1_400_000, 800_000),
            (1_800_000, 900_000),
            (2_000_000, 1_000_000),
        ]),
        cpus(128),
        opps(&[
            (500_000, 700_000),
            (1_000_000, 800_000),
            (1_500_000, 900_000)
        ]),
    );
    hetsched::hetsched_platform::parse_str(&yaml, "large-wide").map_err(|e| e.to_string())
}

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// The targets of issue 19 (`--check-target`).
const PERIODIC_TARGET_XRT: f64 = 1000.0;
const PERIODIC_PERF_TARGET_XRT: f64 = 1500.0;
const LARGE_TARGET_XRT: f64 = 20.0;
const TRACE_TARGET_XRT: f64 = 250.0;
const PFTRACE_TARGET_XRT: f64 = 400.0;
/// `hour`'s peak RSS may exceed `periodic`'s by this much, MiB.
const HOUR_RSS_MARGIN_MIB: f64 = 2.0;
/// `sweep`: throughput with 2 jobs over 1 job.
const SWEEP_TARGET_SPEEDUP: f64 = 1.8;

/// The `sweep` benchmark's experiment: 64 short runs (16 periodic tasks of 20 % at 10 ms
/// on hikey960, 4 simulated seconds, 64 seeds).
pub const SWEEP_TOML: &str = r#"name = "bench-sweep"
platforms = ["hikey960"]
workloads = ["gen:periodic:duty=20,tasks=16,period=10ms,duration=4s"]
seeds = { from = 1, to = 64 }
duration = "4s"
"#;

/// One training run of the profile-guided build: platform preset (or `synthetic:N` for
/// [`Platform::synthetic_clusters`] with N clusters), tasks, total utilisation, simulated
/// seconds, options, trace.
struct Training {
    platform: &'static str,
    tasks: usize,
    total_util: f64,
    secs: u64,
    sets: &'static [&'static str],
    trace: Trace,
}

/// The training runs (`hetsched-bench train`): the paths the benchmarks take (schedutil
/// and EAS, the performance governor, the sampling governors, both trace writers, a
/// machine of a hundred CPUs) on inputs that are not the benchmarks' own. Periods
/// [`TRAIN_PERIODS_MS`], other task counts and loads, five other platforms.
const TRAINING: &[Training] = &[
    Training {
        platform: "hikey960",
        tasks: 24,
        total_util: 2.5,
        secs: 20,
        sets: &[],
        trace: Trace::Off,
    },
    Training {
        platform: "rk3399",
        tasks: 40,
        total_util: 2.0,
        secs: 10,
        sets: &[],
        trace: Trace::Off,
    },
    Training {
        platform: "m1pro",
        tasks: 20,
        total_util: 4.0,
        secs: 10,
        sets: &[],
        trace: Trace::Off,
    },
    Training {
        platform: "juno_r0",
        tasks: 16,
        total_util: 1.8,
        secs: 10,
        sets: &["cpufreq.governor=performance"],
        trace: Trace::Off,
    },
    Training {
        platform: "hikey960",
        tasks: 28,
        total_util: 3.2,
        secs: 10,
        sets: &["cpufreq.governor=performance"],
        trace: Trace::Off,
    },
    Training {
        platform: "tc2",
        tasks: 12,
        total_util: 1.5,
        secs: 3,
        sets: &["cpufreq.governor=ondemand"],
        trace: Trace::Off,
    },
    Training {
        platform: "tc2",
        tasks: 12,
        total_util: 1.5,
        secs: 3,
        sets: &["cpufreq.governor=interactive"],
        trace: Trace::Off,
    },
    Training {
        platform: "rk3399",
        tasks: 12,
        total_util: 1.5,
        secs: 3,
        sets: &["cpufreq.governor=conservative"],
        trace: Trace::Off,
    },
    Training {
        platform: "rk3399",
        tasks: 12,
        total_util: 1.5,
        secs: 3,
        sets: &["cpufreq.governor=sched"],
        trace: Trace::Off,
    },
    Training {
        platform: "hikey960",
        tasks: 24,
        total_util: 2.5,
        secs: 8,
        sets: &[],
        trace: Trace::Text,
    },
    Training {
        platform: "hikey960",
        tasks: 24,
        total_util: 2.5,
        secs: 8,
        sets: &[],
        trace: Trace::Perfetto,
    },
    Training {
        platform: "synthetic:12",
        tasks: 800,
        total_util: 36.0,
        secs: 2,
        sets: &[],
        trace: Trace::Off,
    },
];

/// The training runs' periods, ms (the benchmarks use [`PERIODS_MS`]).
const TRAIN_PERIODS_MS: [u64; 7] = [3, 6, 12, 25, 30, 60, 80];

/// `train [PLATFORM...]`: every run of [`TRAINING`] (or those on the platforms named),
/// one line each (the profile-guided build's profile is what the instrumented binary
/// records while it runs these).
fn train(only: &[&str]) -> Result<(), String> {
    if let Some(p) = only
        .iter()
        .find(|p| !TRAINING.iter().any(|t| t.platform == **p))
    {
        let mut known: Vec<&str> = Vec::new();
        for t in TRAINING {
            if !known.contains(&t.platform) {
                known.push(t.platform);
            }
        }
        return Err(format!(
            "no training run on `{p}`; expected one of {}",
            known.join(", ")
        ));
    }
    for t in TRAINING
        .iter()
        .filter(|t| only.is_empty() || only.contains(&t.platform))
    {
        let platform = match t.platform.strip_prefix("synthetic:") {
            Some(n) => Platform::synthetic_clusters(
                "train",
                "synthetic training platform",
                n.parse()
                    .map_err(|_| format!("bad training platform {}", t.platform))?,
            ),
            None => hetsched::load_platform(t.platform).map_err(|e| e.to_string())?,
        };
        let workload =
            periodic_workload_of(t.tasks, t.total_util, &TRAIN_PERIODS_MS, &[0.7, 1.3, 1.0]);
        let spec = RunSpec {
            platform,
            workload,
            options: Options::default()
                .apply_sets(t.sets)
                .expect("the training runs' options are valid"),
            seed: 3,
            duration_ns: Some(t.secs * NSEC_PER_SEC),
        };
        let r = run_with_trace(&spec, t.trace)?;
        println!(
            "train {} {} tasks {:?} {:?}: sim {} s in {:.3} s wall, {} events",
            t.platform, t.tasks, t.sets, t.trace, t.secs, r.wall, r.result.engine.events,
        );
    }
    Ok(())
}

/// The options of benchmark `name` beyond the defaults.
fn sets_of(name: &str) -> &'static [&'static str] {
    match name {
        "periodic-perf" => &["cpufreq.governor=performance"],
        "periodic-ondemand" => &["cpufreq.governor=ondemand"],
        "periodic-conservative" => &["cpufreq.governor=conservative"],
        "periodic-interactive" => &["cpufreq.governor=interactive"],
        "periodic-sched" => &["cpufreq.governor=sched"],
        _ => &[],
    }
}

/// Where a benchmark's trace goes.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Trace {
    Off,
    /// ftrace text.
    Text,
    /// Perfetto protobuf.
    Perfetto,
}

/// The pinned inputs of benchmark `name`: platform, workload, simulated seconds, trace.
fn inputs(name: &str) -> Result<(Platform, Workload, u64, Trace), String> {
    let hikey = || hetsched::load_platform("hikey960").map_err(|e| e.to_string());
    Ok(match name {
        "periodic"
        | "periodic-perf"
        | "periodic-ondemand"
        | "periodic-conservative"
        | "periodic-interactive"
        | "periodic-sched" => (hikey()?, periodic_workload(32, 3.0), 100, Trace::Off),
        "periodic-trace" => (hikey()?, periodic_workload(32, 3.0), 100, Trace::Text),
        "periodic-pftrace" => (hikey()?, periodic_workload(32, 3.0), 100, Trace::Perfetto),
        "hour" => (hikey()?, periodic_workload(32, 3.0), 3600, Trace::Off),
        "large" => (large_platform(), periodic_workload(2048, 96.0), 10, Trace::Off),
        "large-wide" => (wide_platform()?, periodic_workload(2048, 96.0), 10, Trace::Off),
        other => {
            return Err(format!(
                "unknown benchmark `{other}`; expected periodic, periodic-perf, periodic-ondemand, periodic-conservative, periodic-interactive, periodic-sched, periodic-trace, periodic-pftrace, hour, large, large-wide or sweep"
            ))
        }
    })
}

fn spec_of(name: &str, platform: Platform, workload: Workload, secs: u64) -> RunSpec {
    RunSpec {
        platform,
        workload,
        options: Options::default()
            .apply_sets(sets_of(name))
            .expect("the benchmarks' options are valid"),
        seed: 1,
        duration_ns: Some(secs * NSEC_PER_SEC),
    }
}

/// `dump NAME`: the full ftrace text on stdout, the result JSON on stderr.
fn dump(name: &str) -> Result<(), String> {
    let (platform, workload, secs, _) = inputs(name)?;
    let spec = spec_of(name, platform, workload, secs);
    let stdout = std::io::stdout();
    let mut sink = hetsched_trace::FtraceTextSink::new(std::io::BufWriter::new(stdout.lock()));
    let r = {
        let mut sinks: [&mut dyn TraceSink; 1] = [&mut sink];
        run(&spec, &mut sinks).map_err(|e| e.to_string())?
    };
    sink.flush().map_err(|e| e.to_string())?;
    eprintln!("{}", hetsched::result_json(&r));
    Ok(())
}

/// What one benchmark run measured.
struct Measured {
    xrt: f64,
    rss_mib: f64,
}

fn bench(name: &str) -> Result<Measured, String> {
    if name == "sweep" {
        return bench_sweep().map(|speedup| Measured {
            xrt: speedup,
            rss_mib: peak_rss_mib(),
        });
    }
    let (platform, workload, secs, trace) = inputs(name)?;
    let spec = spec_of(name, platform, workload, secs);
    let Traced {
        result,
        wall,
        trace_bytes,
    } = run_with_trace(&spec, trace)?;
    let trace_bytes = match trace_bytes {
        Some(n) => format!(", trace {:.1} MiB", n as f64 / 1048576.0),
        None => String::new(),
    };
    let events = result.engine.events;
    let rss = peak_rss_mib();
    println!(
        "bench {name}: sim {secs} s in {wall:.3} s wall = {:.0} xRT, {events} events, {:.2} M events/s, {} context switches, peak RSS {rss:.1} MiB{trace_bytes}",
        secs as f64 / wall,
        events as f64 / wall / 1e6,
        result.engine.context_switches,
    );
    Ok(Measured {
        xrt: secs as f64 / wall,
        rss_mib: rss,
    })
}

/// What [`run_with_trace`] gives.
struct Traced {
    result: hetsched_core::RunResult,
    /// Wall seconds from creating the trace file to its last flush (the run and its
    /// trace; removing the file after is not counted).
    wall: f64,
    /// The trace's size in bytes, if one was written.
    trace_bytes: Option<u64>,
}

/// Runs `spec` with its trace (if any) written to a temporary file, removed after the
/// clock stops.
fn run_with_trace(spec: &RunSpec, trace: Trace) -> Result<Traced, String> {
    let ext = if trace == Trace::Perfetto {
        "pftrace"
    } else {
        "txt"
    };
    let trace_path =
        std::env::temp_dir().join(format!("hetsched-bench-{}.{ext}", std::process::id()));
    let start = Instant::now();
    let result = match trace {
        // as the CLI writes a trace file: through a BackgroundWriter
        Trace::Text => background(&trace_path).and_then(|w| {
            run_into(
                spec,
                hetsched_trace::FtraceTextSink::new(w),
                hetsched_trace::FtraceTextSink::flush,
            )
        }),
        Trace::Perfetto => background(&trace_path).and_then(|w| {
            run_into(
                spec,
                hetsched_trace::PerfettoSink::new(w),
                hetsched_trace::PerfettoSink::flush,
            )
        }),
        Trace::Off => run(spec, &mut []).map_err(|e| e.to_string()),
    };
    let wall = start.elapsed().as_secs_f64();
    let trace_bytes = (trace != Trace::Off).then(|| {
        let n = std::fs::metadata(&trace_path).map(|m| m.len()).unwrap_or(0);
        // removed on failure too
        let _ = std::fs::remove_file(&trace_path);
        n
    });
    let result = result?;
    Ok(Traced {
        result,
        wall,
        trace_bytes,
    })
}

/// The file at `path`, created, behind a [`hetsched_trace::BackgroundWriter`].
fn background(
    path: &std::path::Path,
) -> Result<hetsched_trace::BackgroundWriter<std::fs::File>, String> {
    let file = std::fs::File::create(path).map_err(|e| e.to_string())?;
    Ok(hetsched_trace::BackgroundWriter::new(file))
}

/// Runs `spec` into `sink`, then flushes it with `flush`.
fn run_into<S: TraceSink>(
    spec: &RunSpec,
    mut sink: S,
    flush: fn(&mut S) -> std::io::Result<()>,
) -> Result<hetsched_core::RunResult, String> {
    let r = {
        let mut sinks: [&mut dyn TraceSink; 1] = [&mut sink];
        run(spec, &mut sinks).map_err(|e| e.to_string())?
    };
    flush(&mut sink).map_err(|e| e.to_string())?;
    Ok(r)
}

/// A new empty directory under the temporary directory.
fn fresh_dir(tag: &str) -> Result<PathBuf, String> {
    let d = std::env::temp_dir().join(format!("hetsched-bench-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
    Ok(d)
}

/// Events of every point of a finished sweep in `dir` (`result.engine.events`).
fn sweep_events(dir: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir.join(hetsched::sweep::POINTS)) else {
        return 0;
    };
    rd.filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .filter_map(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .filter_map(|v| v.pointer("/result/engine/events").and_then(|e| e.as_u64()))
        .sum()
}

/// `sweep`'s rounds: each runs the 64 points with 1 job, then with 2 jobs; the ratio is of
/// the best throughput of each over the rounds, as the xRT targets take the best of three
/// runs, so that a build or a test started beside the benchmark for a second does not
/// decide it.
const SWEEP_ROUNDS: usize = 3;

/// `sweep`: [`SWEEP_ROUNDS`] rounds of the 64 points of [`SWEEP_TOML`] with 1 job, then
/// with 2 jobs (each into a new directory, so that nothing is resumed); returns the ratio
/// of the best throughput with 2 jobs to the best with 1.
fn bench_sweep() -> Result<f64, String> {
    let exp = hetsched::sweep::parse_str(SWEEP_TOML, "bench-sweep", "bench-sweep", Path::new("."))
        .map_err(|e| e.to_string())?;
    let mut best_points_per_s = [0.0f64; 2];
    for _ in 0..SWEEP_ROUNDS {
        for (k, jobs) in [1usize, 2].into_iter().enumerate() {
            let dir = fresh_dir(&format!("sweep{jobs}"))?;
            // hetsched::sweep::run's three phases, each timed: the plan (every point's
            // hash), the points' runs (on `jobs` threads) and the table (result files read
            // back); the first and last run on one thread whatever `jobs` is
            let start = Instant::now();
            let plan = hetsched::sweep::plan(&exp, &dir).map_err(|e| e.to_string())?;
            let planned = start.elapsed().as_secs_f64();
            let n = hetsched::sweep::run_missing(
                &plan.points,
                &plan.missing,
                &dir,
                jobs,
                None,
                &|_, _| {},
            )
            .map_err(|e| e.to_string())?;
            let ran = start.elapsed().as_secs_f64();
            let table = hetsched::sweep::finish(&dir).map_err(|e| e.to_string())?;
            let wall = start.elapsed().as_secs_f64();
            let sim: f64 = table
                .rows
                .iter()
                .filter_map(|r| r.metrics.first().copied().flatten())
                .sum();
            let events = sweep_events(&dir);
            let _ = std::fs::remove_dir_all(&dir);
            let points_per_s = n as f64 / wall;
            best_points_per_s[k] = best_points_per_s[k].max(points_per_s);
            println!(
                "bench sweep --jobs {jobs}: {n} points, sim {sim:.0} s in {wall:.3} s wall (plan {:.1} ms, runs {:.1} ms, table {:.1} ms) = {:.0} xRT, {events} events, {:.2} M events/s, {points_per_s:.1} points/s, peak RSS {:.1} MiB",
                planned * 1e3,
                (ran - planned) * 1e3,
                (wall - ran) * 1e3,
                sim / wall,
                events as f64 / wall / 1e6,
                peak_rss_mib(),
            );
        }
    }
    let [one, two] = best_points_per_s;
    let speedup = two / one;
    println!(
        "bench sweep: --jobs 2 has {speedup:.2}x the throughput of --jobs 1 (best of {SWEEP_ROUNDS}: {two:.1} against {one:.1} points/s)"
    );
    Ok(speedup)
}

/// Runs `hetsched-bench NAME` in a child process (its peak RSS is its own), echoes its
/// output, and reads back the last `bench` line's xRT and peak RSS (for `sweep`, the
/// speed-up as `xrt`).
fn child(name: &str) -> Result<Measured, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = std::process::Command::new(exe)
        .arg(name)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    print!("{text}");
    if !out.status.success() {
        return Err(format!("benchmark {name} failed ({})", out.status));
    }
    let between = |line: &str, a: &str, b: &str| -> Option<f64> {
        let rest = &line[line.find(a)? + a.len()..];
        rest[..rest.find(b)?].trim().parse().ok()
    };
    let line = text
        .lines()
        .rfind(|l| l.starts_with("bench "))
        .ok_or_else(|| format!("benchmark {name}: no result line"))?;
    if name == "sweep" {
        let x = between(line, "has ", "x the").ok_or("sweep: no speed-up")?;
        return Ok(Measured {
            xrt: x,
            rss_mib: f64::NAN,
        });
    }
    Ok(Measured {
        xrt: between(line, " = ", " xRT").ok_or_else(|| format!("{name}: no xRT"))?,
        rss_mib: between(line, "peak RSS ", " MiB").ok_or_else(|| format!("{name}: no RSS"))?,
    })
}

/// Every target of issue 19, one line each; `Ok(false)` when any is missed.
fn check_target() -> Result<bool, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    println!("check-target: {}", exe.display());
    let mut all = true;
    let mut verdict = |ok: bool, what: String| {
        all &= ok;
        println!(
            "target {what}",
            what = what.replace("{}", if ok { "PASS" } else { "FAIL" })
        );
    };
    let mut periodic_rss = f64::NAN;
    for (name, target) in [
        ("periodic", PERIODIC_TARGET_XRT),
        ("periodic-perf", PERIODIC_PERF_TARGET_XRT),
        ("large", LARGE_TARGET_XRT),
        ("periodic-trace", TRACE_TARGET_XRT),
        ("periodic-pftrace", PFTRACE_TARGET_XRT),
    ] {
        let runs = if name == "large" { 1 } else { 3 };
        let mut best: f64 = 0.0;
        for _ in 0..runs {
            let m = child(name)?;
            best = best.max(m.xrt);
            if name == "periodic" {
                periodic_rss = periodic_rss.min(m.rss_mib);
            }
        }
        verdict(
            best >= target,
            format!("{name} >= {target:.0} xRT: {{}} (best of {runs}: {best:.0} xRT)"),
        );
    }
    let hour = child("hour")?;
    verdict(
        hour.rss_mib <= periodic_rss + HOUR_RSS_MARGIN_MIB,
        format!(
            "hour peak RSS <= periodic's + {HOUR_RSS_MARGIN_MIB:.0} MiB: {{}} (hour {:.1} MiB, periodic {periodic_rss:.1} MiB)",
            hour.rss_mib
        ),
    );
    let sweep = child("sweep")?;
    verdict(
        sweep.xrt >= SWEEP_TARGET_SPEEDUP,
        format!(
            "sweep --jobs 2 >= {SWEEP_TARGET_SPEEDUP}x --jobs 1: {{}} ({:.2}x)",
            sweep.xrt
        ),
    );
    Ok(all)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let names: Vec<&str> = if args.is_empty() {
        vec!["periodic", "periodic-perf", "periodic-trace", "large"]
    } else {
        args.iter().map(String::as_str).collect()
    };
    if names.first() == Some(&"workload") {
        return match names.get(1).map(|n| inputs(n)) {
            Some(Ok((_, w, _, _))) => {
                print!("{}", hetsched::hetsched_rtapp::to_rtapp_json(&w));
                ExitCode::SUCCESS
            }
            Some(Err(e)) => {
                eprintln!("hetsched-bench: error: {e}");
                ExitCode::from(2)
            }
            None => {
                eprintln!("hetsched-bench: usage: hetsched-bench workload NAME");
                ExitCode::from(2)
            }
        };
    }
    if names.first() == Some(&"train") {
        return match train(&names[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("hetsched-bench: error: {e}");
                ExitCode::from(2)
            }
        };
    }
    if names.first() == Some(&"dump") {
        return match names.get(1).map(|n| dump(n)) {
            Some(Ok(())) => ExitCode::SUCCESS,
            Some(Err(e)) => {
                eprintln!("hetsched-bench: error: {e}");
                ExitCode::from(2)
            }
            None => {
                eprintln!("hetsched-bench: usage: hetsched-bench dump NAME");
                ExitCode::from(2)
            }
        };
    }
    for n in names {
        let r = if n == "--check-target" {
            check_target().map(|ok| if ok { 0 } else { 1 })
        } else {
            bench(n).map(|_| 0)
        };
        match r {
            Ok(0) => {}
            Ok(code) => return ExitCode::from(code),
            Err(e) => {
                eprintln!("hetsched-bench: error: {e}");
                return ExitCode::from(2);
            }
        }
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every training run's platform loads and its options apply (`make pgo` runs them
    /// only in its instrumented build).
    #[test]
    fn training_inputs_are_valid() {
        for t in TRAINING {
            if let Some(n) = t.platform.strip_prefix("synthetic:") {
                assert!(n.parse::<usize>().is_ok_and(|n| n > 0), "{}", t.platform);
            } else {
                hetsched::load_platform(t.platform).unwrap_or_else(|e| panic!("{e}"));
            }
            Options::default()
                .apply_sets(t.sets)
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }

    /// The training runs are none of the benchmarks' inputs: no period in common, and no
    /// task set of a benchmark's size on its platform.
    #[test]
    fn training_inputs_are_not_the_benchmarks() {
        assert!(TRAIN_PERIODS_MS.iter().all(|p| !PERIODS_MS.contains(p)));
        for t in TRAINING {
            assert!(
                !(t.platform == "hikey960" && t.tasks == 32),
                "{}",
                t.platform
            );
            assert!(t.tasks != 2048 && t.platform != "synthetic:32");
        }
    }
}
