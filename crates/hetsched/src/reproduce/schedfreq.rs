//! `hetsched reproduce schedfreq`: the scheduler-driven CPU frequency selection series
//! (seed 004, RFCv7; `docs/experiments.md` §5).
//!
//! # What runs
//!
//! exynos5800 (Peach Pi), one rt-app periodic task pinned to CPU0 (an A15, 200 MHz –
//! 1.8 GHz) per row of the series' table — `run` ms of work at fmax every `period` ms for
//! `loops` periods (`gen:periodic:run=…,period=…,loops=…,cpus=0`) — once as SCHED_OTHER
//! and once as SCHED_FIFO (rt-app's default RT priority, 10), under six governors:
//! `performance` and `powersave` (the references), `ondemand` (`sampling_rate` 20 ms),
//! `interactive` (defaults), `sched` (`sched_time_avg_ms` 50, as the series' table), all
//! under the seed-era profile `kernel=v4.4` (whose ondemand samples from v4.4's deferrable
//! delayed work and whose RT bandwidth is shared, RT_RUNTIME_SHARE), and `schedutil` (not
//! in the series) under the default `v6.11`. Every dynamic governor starts at fmin
//! (`cpufreq.start=min`): the board sat idle under its governor before each test.
//!
//! # Metrics
//!
//! From rt-app's per-loop statistics (the `rtapp_stats` markers, read in memory): busy =
//! the loop's `run` (the wall time to complete its busy part), OR = the loops whose slack
//! at the timer is negative (the busy part overran the period), OH = (busy_gov −
//! busy_perf) / (busy_powersave − busy_perf) in %, with busy the mean over the loops.
//!
//! # Criteria
//!
//! From §5: SCHED_OTHER, sched's total OR ≤ ondemand's; SCHED_FIFO, sched's total OR <
//! 10 % of ondemand's; SCHED_OTHER rows with run ≥ 100 ms, every governor's OH < 10 %.

use super::{
    obj, render_footer, request, round, run_jobs_loop_stats, Job, Progress, Report,
    ReproduceOptions, Verdict,
};
use crate::Error;
use hetsched_core::time::Nanos;
use serde_json::{Map, Value};
use std::fmt::Write as _;

/// Experiment name.
pub const NAME: &str = "schedfreq";
/// The platform.
pub const PLATFORM: &str = "exynos5800";
/// The rows: (run ms, period ms, loops).
pub const ROWS: &[(u64, u64, u64)] = &[
    (1, 100, 100),
    (10, 1000, 10),
    (1, 10, 1000),
    (10, 100, 100),
    (100, 1000, 10),
    (6, 33, 300),
    (66, 333, 30),
    (4, 10, 1000),
    (40, 100, 100),
    (400, 1000, 10),
    (5, 9, 1000),
    (50, 90, 100),
    (500, 900, 10),
    (9, 12, 1000),
    (90, 120, 100),
    (900, 1200, 10),
];
/// The classes.
pub const CLASSES: &[&str] = &["SCHED_OTHER", "SCHED_FIFO"];
/// The governors and their option assignments.
pub const GOVERNORS: &[(&str, &[&str])] = &[
    (
        "performance",
        &["kernel=v4.4", "cpufreq.governor=performance"],
    ),
    ("powersave", &["kernel=v4.4", "cpufreq.governor=powersave"]),
    (
        "ondemand",
        &[
            "kernel=v4.4",
            "cpufreq.governor=ondemand",
            "cpufreq.ondemand.sampling_rate=20000",
            "cpufreq.start=min",
        ],
    ),
    (
        "interactive",
        &[
            "kernel=v4.4",
            "cpufreq.governor=interactive",
            "cpufreq.start=min",
        ],
    ),
    (
        "sched",
        &[
            "kernel=v4.4",
            "cpufreq.governor=sched",
            "cpufreq.sched.sched_time_avg_ms=50",
            "cpufreq.start=min",
        ],
    ),
    (
        "schedutil",
        &["cpufreq.governor=schedutil", "cpufreq.start=min"],
    ),
];

/// The seed's tables: (class, row index, [ondemand OR, OH %, interactive OR, OH %, sched
/// OR, OH %]).
const SEED: [(&str, [f64; 6]); 32] = [
    ("SCHED_OTHER", [0.0, 62.07, 0.0, 100.02, 0.0, 78.49]),
    ("SCHED_OTHER", [0.0, 21.80, 0.0, 22.74, 0.0, 72.56]),
    ("SCHED_OTHER", [0.0, 21.72, 0.0, 63.08, 0.0, 52.40]),
    ("SCHED_OTHER", [0.0, 8.09, 0.0, 15.53, 0.0, 17.33]),
    ("SCHED_OTHER", [0.0, 1.83, 0.0, 1.77, 0.0, 0.29]),
    ("SCHED_OTHER", [0.0, 15.32, 0.0, 8.60, 0.0, 17.34]),
    ("SCHED_OTHER", [0.0, 0.79, 0.0, 3.18, 0.0, 12.26]),
    ("SCHED_OTHER", [0.0, 5.87, 0.0, 10.21, 0.0, 6.15]),
    ("SCHED_OTHER", [0.0, 0.41, 0.0, 0.04, 0.0, 2.68]),
    ("SCHED_OTHER", [0.0, 0.42, 0.0, 0.50, 0.0, 1.22]),
    ("SCHED_OTHER", [2.0, 3.82, 1.0, 6.10, 0.0, 2.51]),
    ("SCHED_OTHER", [0.0, 0.19, 0.0, 0.05, 0.0, 1.71]),
    ("SCHED_OTHER", [0.0, 0.37, 0.0, 0.38, 0.0, 1.82]),
    ("SCHED_OTHER", [6.0, 1.79, 1.0, 0.77, 0.0, 0.26]),
    ("SCHED_OTHER", [0.0, 0.16, 1.0, 0.05, 0.0, 0.49]),
    ("SCHED_OTHER", [0.0, 0.09, 0.0, 0.26, 0.0, 0.62]),
    ("SCHED_FIFO", [0.0, 39.61, 0.0, 100.49, 0.0, 99.57]),
    ("SCHED_FIFO", [0.0, 73.51, 0.0, 21.09, 0.0, 96.66]),
    ("SCHED_FIFO", [0.0, 18.01, 0.0, 61.46, 0.0, 67.68]),
    ("SCHED_FIFO", [0.0, 31.31, 0.0, 18.62, 0.0, 77.01]),
    ("SCHED_FIFO", [0.0, 58.80, 0.0, 1.90, 0.0, 15.40]),
    ("SCHED_FIFO", [251.0, 85.99, 0.0, 9.20, 1.0, 30.09]),
    ("SCHED_FIFO", [24.0, 84.03, 0.0, 3.38, 0.0, 33.23]),
    ("SCHED_FIFO", [0.0, 6.23, 0.0, 12.21, 10.0, 11.54]),
    ("SCHED_FIFO", [100.0, 62.08, 0.0, 0.11, 1.0, 11.85]),
    ("SCHED_FIFO", [10.0, 62.09, 0.0, 0.51, 0.0, 7.00]),
    ("SCHED_FIFO", [999.0, 12.29, 1.0, 6.03, 0.0, 0.04]),
    ("SCHED_FIFO", [99.0, 61.47, 0.0, 0.05, 2.0, 6.53]),
    ("SCHED_FIFO", [10.0, 43.37, 0.0, 0.39, 0.0, 6.30]),
    ("SCHED_FIFO", [999.0, 9.83, 0.0, 0.01, 14.0, 1.69]),
    ("SCHED_FIFO", [99.0, 61.47, 0.0, 0.01, 28.0, 2.29]),
    ("SCHED_FIFO", [10.0, 43.31, 0.0, 0.22, 0.0, 2.15]),
];

/// A row's key in the JSON: `run/period/loops`.
pub fn row_key(r: (u64, u64, u64)) -> String {
    format!("{}/{}/{}", r.0, r.1, r.2)
}

/// The loops of a row with `--quick`: a tenth, at least 5.
fn quick_loops(loops: u64) -> u64 {
    (loops / 10).max(5)
}

/// One cell's numbers: mean busy (µs) and overruns.
#[derive(Debug, Clone, Copy, Default)]
struct Cell {
    busy_us: f64,
    overruns: u64,
    loops: usize,
}

/// Runs the experiment.
pub fn run(opts: &ReproduceOptions, progress: Progress<'_>) -> Result<Report, Error> {
    let runs = 1;
    let mut jobs = Vec::new();
    for (ci, class) in CLASSES.iter().enumerate() {
        for (ri, &row) in ROWS.iter().enumerate() {
            let loops = if opts.quick {
                quick_loops(row.2)
            } else {
                row.2
            };
            let spec = format!(
                "gen:periodic:run={}ms,period={}ms,loops={loops},cpus=0,policy={class},name=wload",
                row.0, row.1
            );
            let case = format!("{class}_{}", row_key(row));
            // long enough for every loop at fmin (9 × the run at fmax on exynos5800's
            // A15; 11 × leaves room for RT throttling's 5 % and the noise's ±1 %), plus
            // one period for the last loop's statistics
            let duration: Nanos = (loops * row.1.max(11 * row.0) + row.1) * 1_000_000;
            for (gi, (_, sets)) in GOVERNORS.iter().enumerate() {
                let mut sets: Vec<&str> = sets.to_vec();
                sets.push("trace.rtapp_markers=all");
                let req = request(
                    opts,
                    PLATFORM,
                    spec.clone(),
                    &case,
                    0,
                    &sets,
                    Some(duration),
                );
                jobs.push(Job {
                    variant: gi,
                    case: ci * ROWS.len() + ri,
                    run: 0,
                    req,
                });
            }
        }
    }
    // the workload's task only (the noise model adds background tasks)
    let stats = run_jobs_loop_stats(&jobs, opts, "wload", progress)?;
    let mut cells = vec![vec![vec![Cell::default(); GOVERNORS.len()]; ROWS.len()]; CLASSES.len()];
    for (job, loops) in jobs.iter().zip(stats) {
        let busy: Vec<f64> = loops.iter().map(|l| l.0 as f64).collect();
        let (ci, ri) = (job.case / ROWS.len(), job.case % ROWS.len());
        cells[ci][ri][job.variant] = Cell {
            busy_us: super::mean(&busy),
            overruns: loops.iter().filter(|l| l.1 < 0).count() as u64,
            loops: loops.len(),
        };
    }
    Ok(report(opts, runs, &cells))
}

/// OH % of `gov` against the performance and powersave cells of the row.
fn overhead(row: &[Cell], gov: usize) -> f64 {
    let (perf, pwr) = (row[0].busy_us, row[1].busy_us);
    if pwr <= perf {
        return 0.0;
    }
    (row[gov].busy_us - perf) / (pwr - perf) * 100.0
}

fn report(opts: &ReproduceOptions, runs: usize, cells: &[Vec<Vec<Cell>>]) -> Report {
    let mut results = Map::new();
    let mut seed_reference = Map::new();
    for (ci, class) in CLASSES.iter().enumerate() {
        let mut by_gov = Map::new();
        for (gi, (gov, _)) in GOVERNORS.iter().enumerate() {
            let mut by_row = Map::new();
            for (ri, &row) in ROWS.iter().enumerate() {
                let c = cells[ci][ri][gi];
                by_row.insert(
                    row_key(row),
                    obj(vec![
                        ("overruns", Value::from(c.overruns)),
                        (
                            "overhead_pct",
                            Value::from(round(overhead(&cells[ci][ri], gi), 2)),
                        ),
                        ("busy_ms", Value::from(round(c.busy_us / 1000.0, 3))),
                        ("loops", Value::from(c.loops)),
                    ]),
                );
            }
            by_gov.insert((*gov).to_string(), Value::Object(by_row));
        }
        results.insert((*class).to_string(), Value::Object(by_gov));
        let mut seed_gov = Map::new();
        for (k, gov) in ["ondemand", "interactive", "sched"].iter().enumerate() {
            let mut by_row = Map::new();
            for (ri, &row) in ROWS.iter().enumerate() {
                let s = SEED[ci * ROWS.len() + ri].1;
                by_row.insert(
                    row_key(row),
                    obj(vec![
                        ("overruns", Value::from(s[2 * k] as u64)),
                        ("overhead_pct", Value::from(s[2 * k + 1])),
                    ]),
                );
            }
            seed_gov.insert((*gov).to_string(), Value::Object(by_row));
        }
        seed_reference.insert((*class).to_string(), Value::Object(seed_gov));
    }
    let gi = |name: &str| GOVERNORS.iter().position(|g| g.0 == name).unwrap_or(0);
    let total_or =
        |ci: usize, g: usize| -> u64 { (0..ROWS.len()).map(|ri| cells[ci][ri][g].overruns).sum() };
    let (od, sf) = (gi("ondemand"), gi("sched"));
    let mut criteria = Vec::new();
    let (o_od, o_sf) = (total_or(0, od), total_or(0, sf));
    criteria.push(Verdict {
        name: format!("SCHED_OTHER: sched's total overruns ({o_sf}) ≤ ondemand's ({o_od})"),
        measured: o_sf as f64,
        threshold: format!("≤ {o_od}"),
        pass: o_sf <= o_od,
    });
    let (f_od, f_sf) = (total_or(1, od), total_or(1, sf));
    criteria.push(Verdict {
        name: format!("SCHED_FIFO: sched's total overruns ({f_sf}) < 10 % of ondemand's ({f_od})"),
        measured: f_sf as f64,
        threshold: format!("< {:.1}", f_od as f64 * 0.1),
        pass: (f_sf as f64) < f_od as f64 * 0.1,
    });
    let mut worst: f64 = 0.0;
    for (ri, row) in ROWS.iter().enumerate() {
        if row.0 < 100 {
            continue;
        }
        for g in 2..GOVERNORS.len() {
            worst = worst.max(overhead(&cells[0][ri], g));
        }
    }
    criteria.push(Verdict {
        name: "SCHED_OTHER rows with run ≥ 100 ms: every governor's OH below 10 %".into(),
        measured: worst,
        threshold: "< 10 %".into(),
        pass: worst < 10.0,
    });
    let notes = vec![
        "One run per cell (the series measured each once), with the noise model on.".into(),
        "kernel=v4.4 approximates the series' v4.4-era kernel (see docs/kernel-profiles.md); its ondemand is v4.4's: a deferrable delayed work per CPU on the jiffy grid, run by the CPU's kworker.".into(),
        "Every dynamic governor starts at fmin (cpufreq.start=min): the board sat idle under its governor before each test; under SCHED_FIFO, v4.4's RT_RUNTIME_SHARE keeps CPU 0 from being throttled, so ondemand's kworker never runs while the task overruns.".into(),
        "The sched governor's hooks follow a v4.1 EAS backport of the series (the RFCv7 patch bodies are not public); its interactive column is AOSP android-3.10's governor.".into(),
        "schedutil (not in the series) runs under the default v6.11 profile.".into(),
    ];
    let mut table = String::new();
    let _ = writeln!(
        table,
        "schedfreq — scheduler-driven CPU frequency selection (seed 004), exynos5800 CPU0{}",
        if opts.quick {
            ", quick (a tenth of the loops)"
        } else {
            ""
        }
    );
    for (ci, class) in CLASSES.iter().enumerate() {
        let _ = writeln!(table, "\n{class} workload: OR (OH %), hetsched | seed");
        let _ = write!(table, "{:>15}", "run/period/loops");
        for (g, _) in GOVERNORS.iter().skip(2) {
            let _ = write!(table, " {g:>15}");
        }
        let _ = writeln!(
            table,
            " | {:>13} {:>13} {:>13}",
            "ondemand", "interactive", "sched"
        );
        for (ri, &row) in ROWS.iter().enumerate() {
            let _ = write!(table, "{:>15}", row_key(row));
            for g in 2..GOVERNORS.len() {
                let c = cells[ci][ri][g];
                let cell = format!("{} ({:.2})", c.overruns, overhead(&cells[ci][ri], g));
                let _ = write!(table, " {cell:>15}");
            }
            let s = SEED[ci * ROWS.len() + ri].1;
            let _ = write!(table, " |");
            for k in 0..3 {
                let cell = format!("{} ({:.2})", s[2 * k] as u64, s[2 * k + 1]);
                let _ = write!(table, " {cell:>13}");
            }
            let _ = writeln!(table);
        }
    }
    render_footer(&mut table, &criteria, &notes);
    Report {
        experiment: NAME,
        runs,
        seed: opts.seed,
        noise: opts.noise,
        results,
        seed_reference,
        criteria,
        notes,
        table,
    }
}
