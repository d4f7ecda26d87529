//! `hetsched reproduce overutilized`: Christian Loehle's "sched/fair: Ignore OU for lone
//! task on max-cap CPU" (seed 003, `docs/experiments.md` §4).
//!
//! # What runs
//!
//! The series' kernel, `kernel=v6.17` (it was measured on a 6.17-based kernel; see
//! docs/kernel-profiles.md), and EAS on every run: governor `schedutil` and `eas.mode=on`
//! (a run where EAS cannot run is an error, not a silent fallback).
//!
//! - (a) `stress-ng --cpu X --timeout 60s`: X always-running unpinned workers
//!   (`gen:stress-ng-cpu`), X = 1, 2, 3 on `rk3399` and X = 1, 2, 4, 6, 7 on `m1pro`; cases
//!   `rk3399_1x` … `m1pro_7x`.
//! - (b) on `m1pro`, the series' rt-app test (LISA `PeriodicWload`s, `gen:periodic`):
//!   `tskbusy` 100 % duty of a 1 s period and `tsk_a` … `tsk_d` 5 % duty of 16 ms, 10 s;
//!   case `m1pro_rtapp`. Duty cycles are of the biggest CPU at fmax, as LISA calibrates.
//!
//! Variants: `base` = `eas.overutilized_gate=root_domain` (mainline) and `patch` =
//! `eas.overutilized_gate=ignore_lone_task`.
//!
//! # Metrics
//!
//! OU % = time the root domain was overutilized / run time; OU triggers = its 0→1
//! transitions (`RunResult::overutilized`), averaged over the runs. For (b), also the
//! per-task, per-CPU residency (`residency_s[task][cpu]`, run 0), `ou_ratio` (the fraction),
//! `ou_triggers` and `energy_j` (the EM's energy; abstract units on m1pro's assumed model).
//!
//! # Criteria
//!
//! From §4: for X at most the number of max-capacity CPUs, patch OU ≤ 10 % and base
//! ≥ 90 %; for more tasks, both ≥ 90 % and within 5 points; in (b) at least 80 % of the
//! small tasks' run time on the LITTLE CPUs under patch and at most 50 % under base, and
//! patch OU ratio ≤ 0.05 against ≥ 0.8 for base.

use super::{
    mean, obj, render_footer, request, round, run_jobs, task_of, workload_tasks, Job, Progress,
    Report, ReproduceOptions, Verdict,
};
use crate::Error;
use hetsched_core::RunResult;
use serde_json::{Map, Value};
use std::fmt::Write as _;

/// Experiment name.
pub const NAME: &str = "overutilized";
/// Variants and their option assignments.
pub const VARIANTS: &[(&str, &[&str])] = &[
    (
        "base",
        &[
            "kernel=v6.17",
            "cpufreq.governor=schedutil",
            "eas.mode=on",
            "eas.overutilized_gate=root_domain",
        ],
    ),
    (
        "patch",
        &[
            "kernel=v6.17",
            "cpufreq.governor=schedutil",
            "eas.mode=on",
            "eas.overutilized_gate=ignore_lone_task",
        ],
    ),
];
/// The platforms the experiment runs on.
pub const PLATFORMS: &[&str] = &["rk3399", "m1pro"];
/// The stress-ng cases: (platform, X).
pub const STRESS: &[(&str, u32)] = &[
    ("rk3399", 1),
    ("rk3399", 2),
    ("rk3399", 3),
    ("m1pro", 1),
    ("m1pro", 2),
    ("m1pro", 4),
    ("m1pro", 6),
    ("m1pro", 7),
];
/// The rt-app case.
pub const RTAPP_CASE: &str = "m1pro_rtapp";
/// Runs by default (the series averaged 10 stress-ng iterations; the rt-app test is one run).
pub const DEFAULT_RUNS: usize = 10;
/// Runs with `--quick`.
pub const QUICK_RUNS: usize = 2;
/// stress-ng's `--timeout` in seconds (the series': 60).
pub const STRESS_S: u64 = 60;
/// With `--quick`.
pub const QUICK_STRESS_S: u64 = 10;

/// The seed's stress-ng figures: (variant, case, OU %, OU triggers).
const SEED_STRESS: &[(&str, &str, f64, f64)] = &[
    ("patch", "rk3399_1x", 0.01, 10.5),
    ("base", "rk3399_1x", 99.7, 4.4),
    ("patch", "rk3399_2x", 0.01, 13.8),
    ("base", "rk3399_2x", 99.7, 5.3),
    ("patch", "rk3399_3x", 99.8, 4.1),
    ("base", "rk3399_3x", 99.8, 4.6),
    ("patch", "m1pro_1x", 8.26, 432.0),
    ("base", "m1pro_1x", 99.14, 4.2),
    ("patch", "m1pro_2x", 8.79, 470.2),
    ("base", "m1pro_2x", 99.21, 3.8),
    ("patch", "m1pro_4x", 8.99, 475.2),
    ("base", "m1pro_4x", 99.17, 4.6),
    ("patch", "m1pro_6x", 8.81, 478.8),
    ("base", "m1pro_6x", 99.14, 5.0),
    ("patch", "m1pro_7x", 99.21, 4.0),
    ("base", "m1pro_7x", 99.27, 4.2),
];

/// The seed's rt-app test: (variant, OU ratio, triggers, small tasks' residency per CPU
/// 0–7 in s for tsk_a … tsk_d).
const SEED_RTAPP: &[(&str, f64, f64, [[f64; 8]; 4])] = &[
    (
        "base",
        0.909,
        7.0,
        [
            [0.124, 0.0, 0.0, 0.0, 0.035, 1.791, 0.492, 0.001],
            [0.002, 0.0, 0.5, 0.0, 0.0, 0.001, 0.004, 0.0],
            [0.0, 0.0, 0.0, 0.0, 0.001, 0.0, 1.895, 0.63],
            [0.0, 0.389, 0.001, 0.0, 0.45, 0.0, 0.0, 0.0],
        ],
    ),
    (
        "patch",
        0.007,
        57.0,
        [
            [0.055, 1.907, 0.006, 0.012, 0.002, 0.001, 0.0, 0.005],
            [1.845, 0.115, 0.014, 0.0, 0.004, 0.002, 0.0, 0.0],
            [0.914, 1.069, 0.007, 0.0, 0.004, 0.005, 0.0, 0.0],
            [1.0, 0.985, 0.004, 0.005, 0.0, 0.0, 0.0, 0.0],
        ],
    ),
];

/// The small tasks of the rt-app test.
const SMALL: &[&str] = &["tsk_a", "tsk_b", "tsk_c", "tsk_d"];

/// The rt-app test as generator parts.
pub fn rtapp_spec() -> String {
    let mut parts = vec!["periodic:name=tskbusy,duty=100,period=1s,duration=10s".to_string()];
    for t in SMALL {
        parts.push(format!("periodic:name={t},duty=5,period=16ms,duration=10s"));
    }
    format!("gen:{}", parts.join("+"))
}

fn case_name(platform: &str, x: u32) -> String {
    format!("{platform}_{x}x")
}

/// CPUs of the maximum capacity of a platform, and whether each CPU is one.
fn max_cap_cpus(opts: &ReproduceOptions, platform: &str) -> Result<Vec<bool>, Error> {
    let p = opts.load_platform(platform)?;
    let max = p.max_capacity();
    Ok(p.cpus.iter().map(|c| c.capacity == max).collect())
}

fn ou(r: &RunResult) -> (f64, f64) {
    (r.overutilized.pct, r.overutilized.triggers as f64)
}

/// Runs the experiment.
pub fn run(opts: &ReproduceOptions, progress: Progress<'_>) -> Result<Report, Error> {
    let runs = opts
        .runs
        .unwrap_or(if opts.quick { QUICK_RUNS } else { DEFAULT_RUNS })
        .max(1);
    let secs = if opts.quick { QUICK_STRESS_S } else { STRESS_S };
    // Cases: the stress-ng ones, then the rt-app test (one run, as the series').
    // Each run lasts as long as its workload (the noise model's background tasks would
    // otherwise outlive it and dilute the OU fraction).
    let ns = 1_000_000_000u64;
    let mut cases: Vec<(String, &str, String, usize, u64)> = STRESS
        .iter()
        .map(|&(p, x)| {
            (
                case_name(p, x),
                p,
                format!("gen:stress-ng-cpu:workers={x},timeout={secs}s"),
                runs,
                secs * ns,
            )
        })
        .collect();
    cases.push((RTAPP_CASE.to_string(), "m1pro", rtapp_spec(), 1, 10 * ns));
    let mut jobs = Vec::new();
    for (vi, (_, sets)) in VARIANTS.iter().enumerate() {
        for (ci, (case, platform, spec, n, dur)) in cases.iter().enumerate() {
            for r in 0..*n {
                jobs.push(Job {
                    variant: vi,
                    case: ci,
                    run: r,
                    req: request(opts, platform, spec.clone(), case, r, sets, Some(*dur)),
                });
            }
        }
    }
    let results = run_jobs(&jobs, opts, progress)?;

    // per[v][c] = the runs' results
    let mut per: Vec<Vec<Vec<&RunResult>>> = vec![vec![Vec::new(); cases.len()]; VARIANTS.len()];
    for (job, res) in jobs.iter().zip(&results) {
        per[job.variant][job.case].push(res);
    }

    let mut out = Map::new();
    let mut reference = Map::new();
    // stress[v][c] = (OU % avg, triggers avg)
    let mut stress = vec![vec![(0.0, 0.0); STRESS.len()]; VARIANTS.len()];
    // rtapp[v] = (ratio, triggers, energy, share of the small tasks' time on LITTLEs)
    let mut rtapp = vec![(0.0, 0.0, 0.0, 0.0); VARIANTS.len()];
    let m1_big = max_cap_cpus(opts, "m1pro")?;
    let mut energy_units = String::new();
    for (vi, (vname, _)) in VARIANTS.iter().enumerate() {
        let mut per_case = Map::new();
        let mut ref_case = Map::new();
        for (ci, (case, _, spec, _, _)) in cases.iter().enumerate() {
            let rs = &per[vi][ci];
            if ci < STRESS.len() {
                let pcts: Vec<f64> = rs.iter().map(|r| ou(r).0).collect();
                let trig: Vec<f64> = rs.iter().map(|r| ou(r).1).collect();
                stress[vi][ci] = (mean(&pcts), mean(&trig));
                per_case.insert(
                    case.clone(),
                    obj(vec![
                        ("runs", Value::from(rs.len())),
                        ("ou_pct", Value::from(round(mean(&pcts), 3))),
                        ("ou_triggers", Value::from(round(mean(&trig), 2))),
                        (
                            "per_run_ou_pct",
                            Value::from(pcts.iter().map(|x| round(*x, 4)).collect::<Vec<_>>()),
                        ),
                        ("per_run_ou_triggers", Value::from(trig)),
                        ("workload", Value::from(spec.clone())),
                    ]),
                );
                if let Some(s) = SEED_STRESS.iter().find(|s| s.0 == *vname && s.1 == case) {
                    ref_case.insert(
                        case.clone(),
                        obj(vec![
                            ("ou_pct", Value::from(s.2)),
                            ("ou_triggers", Value::from(s.3)),
                        ]),
                    );
                }
                continue;
            }
            let Some(r) = rs.first() else { continue };
            let mut residency = Map::new();
            let (mut little, mut total) = (0.0, 0.0);
            for t in workload_tasks(r) {
                let name = task_of(&t.comm);
                residency.insert(
                    name.to_string(),
                    Value::from(
                        t.residency_s
                            .iter()
                            .map(|x| round(*x, 4))
                            .collect::<Vec<_>>(),
                    ),
                );
                if SMALL.contains(&name) {
                    for (cpu, s) in t.residency_s.iter().enumerate() {
                        total += s;
                        if !m1_big.get(cpu).copied().unwrap_or(true) {
                            little += s;
                        }
                    }
                }
            }
            let share = if total > 0.0 { little / total } else { 0.0 };
            let ratio = r.overutilized.pct / 100.0;
            let trig = r.overutilized.triggers as f64;
            energy_units = r.energy.units.clone();
            rtapp[vi] = (ratio, trig, r.energy.total, share);
            per_case.insert(
                case.clone(),
                obj(vec![
                    ("residency_s", Value::Object(residency)),
                    ("small_tasks_on_little_share", Value::from(round(share, 4))),
                    ("ou_ratio", Value::from(round(ratio, 4))),
                    ("ou_triggers", Value::from(trig)),
                    ("energy_j", Value::from(round(r.energy.total, 4))),
                    ("energy_units", Value::from(r.energy.units.as_str())),
                    ("workload", Value::from(spec.clone())),
                ]),
            );
            if let Some(s) = SEED_RTAPP.iter().find(|s| s.0 == *vname) {
                let mut res = Map::new();
                for (i, t) in SMALL.iter().enumerate() {
                    res.insert((*t).to_string(), Value::from(s.3[i].to_vec()));
                }
                ref_case.insert(
                    case.clone(),
                    obj(vec![
                        ("residency_s", Value::Object(res)),
                        ("ou_ratio", Value::from(s.1)),
                        ("ou_triggers", Value::from(s.2)),
                    ]),
                );
            }
        }
        out.insert((*vname).to_string(), Value::Object(per_case));
        reference.insert((*vname).to_string(), Value::Object(ref_case));
    }

    // Criteria.
    let mut criteria = Vec::new();
    for (ci, &(p, x)) in STRESS.iter().enumerate() {
        let nr_max = max_cap_cpus(opts, p)?.iter().filter(|b| **b).count() as u32;
        let case = case_name(p, x);
        let (base, patch) = (stress[0][ci].0, stress[1][ci].0);
        if x <= nr_max {
            criteria.push(Verdict {
                name: format!("{case}: patch OU % (X ≤ {nr_max} max-capacity CPUs)"),
                measured: patch,
                threshold: "≤ 10".into(),
                pass: patch <= 10.0,
            });
            criteria.push(Verdict {
                name: format!("{case}: base OU %"),
                measured: base,
                threshold: "≥ 90".into(),
                pass: base >= 90.0,
            });
        } else {
            criteria.push(Verdict {
                name: format!("{case}: lower of base and patch OU % (X > {nr_max})"),
                measured: base.min(patch),
                threshold: "≥ 90".into(),
                pass: base.min(patch) >= 90.0,
            });
            criteria.push(Verdict {
                name: format!("{case}: |base − patch| OU points"),
                measured: (base - patch).abs(),
                threshold: "≤ 5".into(),
                pass: (base - patch).abs() <= 5.0,
            });
        }
    }
    criteria.push(Verdict {
        name: "m1pro_rtapp: patch, small tasks' run time on LITTLE CPUs (%)".into(),
        measured: rtapp[1].3 * 100.0,
        threshold: "≥ 80".into(),
        pass: rtapp[1].3 >= 0.8,
    });
    criteria.push(Verdict {
        name: "m1pro_rtapp: base, small tasks' run time on LITTLE CPUs (%)".into(),
        measured: rtapp[0].3 * 100.0,
        threshold: "≤ 50".into(),
        pass: rtapp[0].3 <= 0.5,
    });
    criteria.push(Verdict {
        name: "m1pro_rtapp: patch OU ratio".into(),
        measured: rtapp[1].0,
        threshold: "≤ 0.05".into(),
        pass: rtapp[1].0 <= 0.05,
    });
    criteria.push(Verdict {
        name: "m1pro_rtapp: base OU ratio".into(),
        measured: rtapp[0].0,
        threshold: "≥ 0.8".into(),
        pass: rtapp[0].0 >= 0.8,
    });

    let notes = vec![
        format!(
            "The series' kernel: kernel=v6.17 (docs/kernel-profiles.md). EAS on every run: cpufreq.governor=schedutil, eas.mode=on; base = eas.overutilized_gate=root_domain, patch = ignore_lone_task. stress-ng runs {secs} s (the series: 60 s), {runs} runs per case; the rt-app test is one 10 s run ({})",
            rtapp_spec()
        ),
        "OU % = time with the root domain overutilized / run time; triggers = 0→1 transitions; both include what the noise model's background tasks cause (a second task on a max-capacity CPU still sets overutilized under patch, as on the board).".into(),
        format!(
            "Energy of the rt-app test in {energy_units}: m1pro's energy model is assumed (no power data published), so only the ratio between variants means anything."
        ),
    ];

    // Table.
    let mut t = String::new();
    let _ = writeln!(
        t,
        "overutilized: root-domain overutilized time and 0→1 triggers, {runs} runs, base seed {}",
        opts.seed
    );
    let _ = writeln!(
        t,
        "{:<12} {:>9} {:>8} {:>9} {:>8} | {:>9} {:>8} {:>9} {:>8}",
        "stress-ng",
        "base OU%",
        "trig",
        "seed OU%",
        "trig",
        "patch OU%",
        "trig",
        "seed OU%",
        "trig"
    );
    for (ci, &(p, x)) in STRESS.iter().enumerate() {
        let case = case_name(p, x);
        let mut line = format!("{case:<12}");
        for (vi, (vname, _)) in VARIANTS.iter().enumerate() {
            let s = SEED_STRESS
                .iter()
                .find(|s| s.0 == *vname && s.1 == case)
                .map_or((0.0, 0.0), |s| (s.2, s.3));
            if vi > 0 {
                line.push_str(" |");
            }
            let _ = write!(
                line,
                " {:>9.2} {:>8.1} {:>9.2} {:>8.1}",
                stress[vi][ci].0, stress[vi][ci].1, s.0, s.1
            );
        }
        let _ = writeln!(t, "{line}");
    }
    let _ = writeln!(
        t,
        "\nrt-app test on m1pro (10 s): OU ratio, triggers, small tasks' share on LITTLEs, energy"
    );
    for (vi, (vname, _)) in VARIANTS.iter().enumerate() {
        let s = SEED_RTAPP.iter().find(|s| s.0 == *vname);
        let seed_share = s.map_or(0.0, |s| {
            let little: f64 = s.3.iter().map(|r| r[0] + r[1]).sum();
            let all: f64 = s.3.iter().map(|r| r.iter().sum::<f64>()).sum();
            little / all
        });
        let _ = writeln!(
            t,
            "  {:<6} ratio {:.3} ({} triggers)  LITTLE share {:>5.1} %  energy {:.3} {}   seed: ratio {:.3} ({} triggers), LITTLE share {:.1} %",
            vname,
            rtapp[vi].0,
            rtapp[vi].1,
            rtapp[vi].3 * 100.0,
            rtapp[vi].2,
            energy_units,
            s.map_or(0.0, |s| s.1),
            s.map_or(0.0, |s| s.2),
            seed_share * 100.0
        );
    }
    let _ = writeln!(t, "\n  residency (s) per CPU, run 0:");
    for (vi, (vname, _)) in VARIANTS.iter().enumerate() {
        if let Some(r) = per[vi].last().and_then(|v| v.first()) {
            for tm in workload_tasks(r) {
                let cells: Vec<String> = tm.residency_s.iter().map(|x| format!("{x:.3}")).collect();
                let _ = writeln!(
                    t,
                    "  {:<6} {:<8} {}",
                    vname,
                    task_of(&tm.comm),
                    cells.join(" ")
                );
            }
        }
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
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn max_capacity_cpus() {
        let b = max_cap_cpus(&ReproduceOptions::default(), "rk3399").unwrap();
        assert_eq!(b.iter().filter(|x| **x).count(), 2);
        let m = max_cap_cpus(&ReproduceOptions::default(), "m1pro").unwrap();
        assert_eq!(m, vec![false, false, true, true, true, true, true, true]);
    }

    #[test]
    fn rtapp_test_is_the_series_profile() {
        let w = crate::load_workload(&rtapp_spec(), &Default::default()).unwrap();
        let names: Vec<&str> = w.tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, vec!["tskbusy", "tsk_a", "tsk_b", "tsk_c", "tsk_d"]);
        // 10 s of 16 ms periods: floor(10 / 0.016) = 625 loops
        assert_eq!(w.tasks[1].phases[0].loop_count, 625);
    }
}
