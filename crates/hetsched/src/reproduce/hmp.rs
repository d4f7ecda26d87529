//! `hetsched reproduce hmp`: Morten Rasmussen's HMP task placement for big.LITTLE (seed
//! 001, the 2012 RFC as Linaro LSK 3.10's big.LITTLE MP; `docs/experiments.md` §2).
//!
//! # What runs
//!
//! On `tc2` (2 × Cortex-A15 at capacity 1024, 3 × Cortex-A7), the workload
//! `browser-long` (rt-app's example of a browser: `Display` plays the compositor,
//! SurfaceFlinger in the series' BBench runs) for its own 600 s, 50 runs with the noise
//! model (10 with `--quick`, which also stops each run at 60 s). Governor `performance`:
//! the series does not say which governor ran, and a fixed frequency keeps the two
//! schedulers' placements as the only difference.
//!
//! # Variants
//!
//! `smp` = `kernel=v3.10` (docs/kernel-profiles.md: the scheduler sees every CPU at
//! capacity 1024, CFS, no util_est, misfit or EAS), `hmp` = the same with `hmp.enabled`
//! (LSK 3.10's defaults: up 700, down 512, 4096 × 1024 ns delays, packing on, priority
//! filter on (nice ≥ 5 stays slow), fork boost and frequency invariance on).
//!
//! # Metric and criteria
//!
//! Per run, each thread's total execution time (CPU time); over the runs its average,
//! sample standard deviation (n − 1), 10th and 90th percentile (linear interpolation
//! between order statistics). Reproduced when `hmp` lowers `Display`'s average by at least
//! 10 % and its standard deviation by at least a factor of 2 (seed: −24.7 %, 5.1×).

use super::{
    mean, obj, render_footer, request, round, run_jobs, sd, workload_tasks, Job, Progress, Report,
    ReproduceOptions, Verdict,
};
use crate::Error;
use hetsched_core::time::NSEC_PER_SEC;
use serde_json::{Map, Value};
use std::fmt::Write as _;

/// Experiment name.
pub const NAME: &str = "hmp";
/// The platform.
pub const PLATFORM: &str = "tc2";
/// The workload (a shipped workload name).
pub const WORKLOAD: &str = "browser-long";
/// The compositor thread whose execution time the criteria read.
pub const COMPOSITOR: &str = "Display";
/// Variants and their option assignments.
pub const VARIANTS: &[(&str, &[&str])] = &[
    ("smp", &["kernel=v3.10", "cpufreq.governor=performance"]),
    (
        "hmp",
        &[
            "kernel=v3.10",
            "cpufreq.governor=performance",
            "hmp.enabled=true",
        ],
    ),
];
/// Runs by default (the seed's 50).
pub const DEFAULT_RUNS: usize = 50;
/// Runs with `--quick`.
pub const QUICK_RUNS: usize = 10;
/// Length of a `--quick` run, s (the workload's own is 600 s).
pub const QUICK_SECONDS: u64 = 60;

/// The seed's figures for the compositor, s: (variant, avg, sd, p10, p90).
const SEED: &[(&str, [f64; 4])] = &[
    ("smp", [14.617, 4.577, 9.343, 18.743]),
    ("hmp", [11.012, 0.902, 10.783, 11.695]),
];

/// The `q`-quantile of `v` (0..1) by linear interpolation between order statistics.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let pos = q.clamp(0.0, 1.0) * (s.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    s[lo] + (s[hi] - s[lo]) * (pos - lo as f64)
}

/// Runs the experiment.
pub fn run(opts: &ReproduceOptions, progress: Progress<'_>) -> Result<Report, Error> {
    let runs = opts
        .runs
        .unwrap_or(if opts.quick { QUICK_RUNS } else { DEFAULT_RUNS })
        .max(1);
    let duration = opts.quick.then_some(QUICK_SECONDS * NSEC_PER_SEC);
    // The workload's threads in creation order: pid 1001 + index (rt-app's main thread
    // is 1000; the noise model's background threads come after).
    let w = crate::load_workload(WORKLOAD, &Default::default())?;
    let mut names: Vec<String> = Vec::new();
    for t in &w.tasks {
        for _ in 0..t.instances {
            names.push(t.name.clone());
        }
    }
    let mut jobs = Vec::new();
    for (vi, (_, sets)) in VARIANTS.iter().enumerate() {
        for r in 0..runs {
            jobs.push(Job {
                variant: vi,
                case: 0,
                run: r,
                req: request(opts, PLATFORM, WORKLOAD.into(), PLATFORM, r, sets, duration),
            });
        }
    }
    let results = run_jobs(&jobs, opts, progress)?;
    // exec[v][thread] = per-run CPU time
    let mut exec = vec![vec![Vec::new(); names.len()]; VARIANTS.len()];
    for (job, res) in jobs.iter().zip(&results) {
        let mut row = vec![0.0; names.len()];
        for t in workload_tasks(res) {
            if let Some(i) = (t.pid as usize)
                .checked_sub(1001)
                .filter(|&i| i < names.len())
            {
                row[i] = t.cpu_time_s;
            }
        }
        for (i, x) in row.into_iter().enumerate() {
            exec[job.variant][i].push(x);
        }
    }

    let stats = |v: &[f64]| [mean(v), sd(v), quantile(v, 0.1), quantile(v, 0.9)];
    let mut out = Map::new();
    let mut reference = Map::new();
    for (vi, (vname, _)) in VARIANTS.iter().enumerate() {
        let mut per_thread = Map::new();
        for (i, name) in names.iter().enumerate() {
            let v = &exec[vi][i];
            let s = stats(v);
            per_thread.insert(
                name.clone(),
                obj(vec![
                    ("exec_time_avg_s", Value::from(round(s[0], 4))),
                    ("exec_time_sd_s", Value::from(round(s[1], 4))),
                    ("exec_time_p10_s", Value::from(round(s[2], 4))),
                    ("exec_time_p90_s", Value::from(round(s[3], 4))),
                    (
                        "per_run_s",
                        Value::from(v.iter().map(|x| round(*x, 4)).collect::<Vec<_>>()),
                    ),
                ]),
            );
        }
        out.insert((*vname).to_string(), Value::Object(per_thread));
        if let Some((_, f)) = SEED.iter().find(|s| s.0 == *vname) {
            let mut m = Map::new();
            m.insert(
                COMPOSITOR.into(),
                obj(vec![
                    ("exec_time_avg_s", Value::from(f[0])),
                    ("exec_time_sd_s", Value::from(f[1])),
                    ("exec_time_p10_s", Value::from(f[2])),
                    ("exec_time_p90_s", Value::from(f[3])),
                ]),
            );
            reference.insert((*vname).to_string(), Value::Object(m));
        }
    }

    let ci = names
        .iter()
        .position(|n| n == COMPOSITOR)
        .ok_or_else(|| Error::Reproduce(format!("hmp: no `{COMPOSITOR}` thread in {WORKLOAD}")))?;
    let (smp, hmp) = (stats(&exec[0][ci]), stats(&exec[1][ci]));
    let change = if smp[0] > 0.0 {
        (hmp[0] - smp[0]) / smp[0] * 100.0
    } else {
        0.0
    };
    let sd_factor = if hmp[1] > 0.0 {
        smp[1] / hmp[1]
    } else {
        f64::INFINITY
    };
    let criteria = vec![
        Verdict {
            name: format!("{COMPOSITOR}: hmp changes the average execution time (%)"),
            measured: change,
            threshold: "≤ −10".into(),
            pass: change <= -10.0,
        },
        Verdict {
            name: format!("{COMPOSITOR}: smp sd / hmp sd"),
            measured: sd_factor,
            threshold: "≥ 2".into(),
            pass: sd_factor >= 2.0,
        },
    ];
    let notes = vec![
        format!(
            "{runs} runs of {WORKLOAD} on {PLATFORM}{}, the noise model on; execution time = the thread's CPU time; sd is the sample deviation (n − 1); percentiles by linear interpolation.",
            if opts.quick { format!(", {QUICK_SECONDS} s each (--quick)") } else { ", 600 s each".into() }
        ),
        "Variants: smp = kernel=v3.10 (the scheduler sees every CPU at capacity 1024; v4.20's wake-up and balancer code on equal capacities), hmp = the same with hmp.enabled (LSK 3.10 big.LITTLE MP: load ratio per task, up/down at wake-up and fork, forced up-migration, idle pull and the offload of a saturated A15 domain); governor performance (the series does not name one).".into(),
        "The seed's figures are SurfaceFlinger's over a BBench run on Android; the workload here is rt-app's browser model, so absolute times differ, and the criteria compare the variants' relative change.".into(),
    ];

    let mut t = String::new();
    let _ = writeln!(
        t,
        "hmp on {PLATFORM}: {WORKLOAD}, {runs} runs, total execution time per thread (s); base seed {}",
        opts.seed
    );
    let _ = writeln!(
        t,
        "{:<16} {:>9} {:>8} {:>8} {:>8} | {:>9} {:>8} {:>8} {:>8}",
        "thread", "smp avg", "sd", "p10", "p90", "hmp avg", "sd", "p10", "p90"
    );
    for (i, name) in names.iter().enumerate() {
        let (a, b) = (stats(&exec[0][i]), stats(&exec[1][i]));
        let _ = writeln!(
            t,
            "{:<16} {:>9.3} {:>8.3} {:>8.3} {:>8.3} | {:>9.3} {:>8.3} {:>8.3} {:>8.3}",
            name, a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]
        );
    }
    for (v, f) in SEED {
        let _ = writeln!(
            t,
            "{:<16} {:>9.3} {:>8.3} {:>8.3} {:>8.3}   (seed, {v})",
            format!("{COMPOSITOR} seed"),
            f[0],
            f[1],
            f[2],
            f[3]
        );
    }
    render_footer(&mut t, &criteria, &notes);

    Ok(Report {
        experiment: NAME,
        runs,
        seed: opts.seed,
        noise: opts.noise,
        results: out,
        seed_reference: reference,
        criteria,
        notes,
        table: t,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate() {
        let v = [4.0, 1.0, 3.0, 2.0, 5.0];
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 0.5), 3.0);
        assert!((quantile(&v, 0.1) - 1.4).abs() < 1e-12);
        assert!((quantile(&v, 0.9) - 4.6).abs() < 1e-12);
        assert_eq!(quantile(&[], 0.5), 0.0);
    }
}
