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
//!   the default, to compare with its history.
//! - `periodic-ondemand`, `periodic-conservative`, `periodic-interactive`, `periodic-sched`:
//!   the same under
//!   each sampling governor (their kworker or `cfinteractive` threads included), for the
//!   cost of each governor against `periodic` (schedutil) and `periodic-perf`.
//! - `periodic-trace`: the same, writing the ftrace text to a file.
//! - `--check-target`: best of three `periodic` runs against the target (exit 1 if missed).
//! - `large`: 256 CPUs (32 clusters of 8; half big, half LITTLE) and 2048 periodic tasks,
//!   10 simulated seconds, trace off.
//! - `dump NAME`: runs benchmark NAME once with the ftrace text on stdout and then the
//!   result JSON on stderr, for byte-identity checks of optimisations
//!   (`hetsched-bench dump periodic 2>r.json | sha256sum`).

use hetsched_core::options::Options;
use hetsched_core::platform::{Cluster, Cpu, Opp, PerfDomain, Platform, PowerSource};
use hetsched_core::time::NSEC_PER_SEC;
use hetsched_core::trace::TraceSink;
use hetsched_core::workload::{
    Calibration, Event, EventSpec, Phase, SchedAttrs, Span, TaskSpec, TimerMode, Workload,
};
use hetsched_core::{run, RunSpec};
use std::process::ExitCode;
use std::time::Instant;

const PERIODS_MS: [u64; 8] = [4, 8, 10, 16, 20, 40, 50, 100];

/// `n` periodic tasks whose utilisations (on the biggest CPU at fmax) add up to `total`.
/// Task i has period PERIODS_MS[i % 8] and a duty from a fixed cycle of four weights.
fn periodic_workload(n: usize, total_util: f64) -> Workload {
    let weights = [0.5, 5.0 / 6.0, 7.0 / 6.0, 1.5]; // mean 1
    let tasks = (0..n)
        .map(|i| {
            let period_us = PERIODS_MS[i % PERIODS_MS.len()] * 1000;
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
    let mut cpus = Vec::new();
    let mut clusters = Vec::new();
    let mut pds = Vec::new();
    for cl in 0..32usize {
        let big = cl % 2 == 0;
        let ids: Vec<usize> = (cl * 8..cl * 8 + 8).collect();
        for &id in &ids {
            cpus.push(Cpu {
                id,
                core: if big { "big" } else { "little" }.into(),
                capacity_dmips_mhz: if big { 1024 } else { 512 },
                capacity: if big { 1024 } else { 384 },
                work_capacity: None,
                perf_domain: cl,
                cluster: cl,
                idle_states: vec![],
            });
        }
        let fmax = if big { 2_000_000 } else { 1_500_000 };
        pds.push(PerfDomain {
            id: cl,
            cpus: ids.clone(),
            opps: vec![Opp {
                freq_khz: fmax,
                microvolt: None,
                power_uw: None,
            }],
            max_freq_khz: fmax,
            transition_latency_ns: 0,
            dynamic_power_coefficient: None,
            power_source: PowerSource::None,
        });
        clusters.push(Cluster {
            id: cl,
            name: format!("cluster{cl}"),
            cpus: ids,
        });
    }
    Platform {
        name: "bench-256".into(),
        description: "synthetic 256-CPU benchmark platform".into(),
        cpus,
        clusters,
        perf_domains: pds,
        sources: vec!["synthetic (benchmark input)".into()],
        notes: vec![],
        cpufreq_driver: Default::default(),
    }
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

/// Target of this release for `periodic`.
const PERIODIC_TARGET_XRT: f64 = 1000.0;

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

/// The pinned inputs of benchmark `name`: platform, workload, simulated seconds, trace on.
fn inputs(name: &str) -> Result<(Platform, Workload, u64, bool), String> {
    Ok(match name {
        "periodic" => (
            hetsched::load_platform("hikey960").map_err(|e| e.to_string())?,
            periodic_workload(32, 3.0),
            100,
            false,
        ),
        "periodic-perf"
        | "periodic-ondemand"
        | "periodic-conservative"
        | "periodic-interactive"
        | "periodic-sched" => (
            hetsched::load_platform("hikey960").map_err(|e| e.to_string())?,
            periodic_workload(32, 3.0),
            100,
            false,
        ),
        "periodic-trace" => (
            hetsched::load_platform("hikey960").map_err(|e| e.to_string())?,
            periodic_workload(32, 3.0),
            100,
            true,
        ),
        "large" => (large_platform(), periodic_workload(2048, 96.0), 10, false),
        other => {
            return Err(format!(
                "unknown benchmark `{other}`; expected periodic, periodic-perf, periodic-ondemand, periodic-conservative, periodic-interactive, periodic-sched, periodic-trace or large"
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

fn bench(name: &str) -> Result<f64, String> {
    let (platform, workload, secs, trace) = inputs(name)?;
    let spec = spec_of(name, platform, workload, secs);
    let trace_path =
        std::env::temp_dir().join(format!("hetsched-bench-{}.txt", std::process::id()));
    let start = Instant::now();
    let result = if trace {
        let mut sink =
            hetsched_trace::FtraceTextSink::create(&trace_path).map_err(|e| e.to_string())?;
        let r = {
            let mut sinks: [&mut dyn TraceSink; 1] = [&mut sink];
            run(&spec, &mut sinks).map_err(|e| e.to_string())?
        };
        sink.flush().map_err(|e| e.to_string())?;
        r
    } else {
        run(&spec, &mut []).map_err(|e| e.to_string())?
    };
    let wall = start.elapsed().as_secs_f64();
    let trace_bytes = if trace {
        let n = std::fs::metadata(&trace_path).map(|m| m.len()).unwrap_or(0);
        let _ = std::fs::remove_file(&trace_path);
        format!(", trace {:.1} MiB", n as f64 / 1048576.0)
    } else {
        String::new()
    };
    let events = result.engine.events;
    println!(
        "bench {name}: sim {secs} s in {wall:.3} s wall = {:.0} xRT, {events} events, {:.2} M events/s, {} context switches, peak RSS {:.1} MiB{trace_bytes}",
        secs as f64 / wall,
        events as f64 / wall / 1e6,
        result.engine.context_switches,
        peak_rss_mib(),
    );
    Ok(secs as f64 / wall)
}

/// Best of three `periodic` runs against the target; exit status 1 when it is missed.
fn check_target() -> Result<bool, String> {
    let mut best: f64 = 0.0;
    for _ in 0..3 {
        best = best.max(bench("periodic")?);
    }
    let ok = best >= PERIODIC_TARGET_XRT;
    println!(
        "target periodic >= {PERIODIC_TARGET_XRT:.0} xRT: {} (best of 3: {best:.0} xRT)",
        if ok { "PASS" } else { "FAIL" }
    );
    Ok(ok)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let names: Vec<&str> = if args.is_empty() {
        vec!["periodic", "periodic-perf", "periodic-trace", "large"]
    } else {
        args.iter().map(String::as_str).collect()
    };
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
