//! `hetsched reproduce misfit`: Morten Rasmussen's misfit-task load balancing (v4.20;
//! seed 000, `docs/experiments.md` §1).
//!
//! # What runs
//!
//! On `juno_r0` and `hikey960` with the `performance` governor, the series' script: for
//! each big CPU (the CPUs of the platform's maximum capacity) one `sysbench --test=cpu`
//! pinned to it with `--max-requests=250` ("keep the bigs busy"), and for each LITTLE CPU
//! one unpinned sysbench with 1000 requests, all started together. A request is 1200 µs
//! of work at capacity 1024 and fmax (the `sysbench-cpu` generator's default). Each
//! sysbench is its own generator part (`gen:sysbench-cpu:name=big0,…+…`), so each is
//! one task and the noise model gives each its own start offset and work scale.
//!
//! Variants: both run the series' kernel, `kernel=v4.20` (docs/kernel-profiles.md: the
//! balancer before the v5.5 `load_balance()` rework — `avg_load`/`load_per_task`,
//! `group_no_capacity`, `fix_small_imbalance()`, load-only migration — the CFS rules,
//! `wake_cap()` placement, no EAS). `tip` adds `balance.misfit=false` (the
//! kernel before the series: capacity-aware wake-up, ordinary load balancing only) and
//! `misfit` keeps the series (misfit status, the `group_misfit_task` group type, the
//! misfit nohz kick and misfit active balance). With the reworked balancer (v5.5+) `tip`
//! would move only one LITTLE task to a big CPU (`migrate_task` evens idle CPUs, and
//! `local->idle_cpus <= busiest->idle_cpus + 1` stops it there), unlike the seed's board.
//!
//! # Metrics
//!
//! Per run, the completion time (first wake-up to exit) of each unpinned task, in LITTLE
//! CPU order, and the longest of them; over the runs the average and the maximum of that
//! longest time. The single-run table is run 0.
//!
//! # Criteria
//!
//! From §1: on each board misfit lowers the average longest time, by at least half and
//! at most twice the seed's improvement (Juno 8.30 %, Hikey960 28.81 %, computed from the
//! seed's averages). The single-run shape is made measurable as: under `tip`, one or two
//! tasks finish at least 15 % after the fastest (the seed: two on both boards, at
//! +26…+51 %), and under `misfit` the spread slowest/fastest is smaller than under `tip`
//! (the seed: 1.26 < 1.39 on Juno, 1.06 < 1.50 on Hikey960).
//!
//! # The seed's runs under the work model
//!
//! The table ends with [`feasibility`]: a work-conservation bound, independent of the
//! scheduler, on whether the seed's single runs can happen at all when the LITTLE CPUs do
//! `r` of a big's work per second (the platform's work capacities). Under capacity-scaled
//! work the seed's Juno runs cannot (they need the A53 at ≥ 0.636 of the A57); with
//! `--platform juno_r0=docs/platforms/juno_r0-sysbench.yaml` (`work_dmips_mhz`) they can.

use super::{
    mean, obj, render_footer, request, round, run_jobs, task_of, workload_tasks, Job, Progress,
    Report, ReproduceOptions, Verdict,
};
#[cfg(test)]
use crate::load_platform;
use crate::Error;
use hetsched_core::platform::Platform;
use serde_json::{Map, Value};
use std::fmt::Write as _;

/// Experiment name.
pub const NAME: &str = "misfit";
/// Platforms (cases), in table order.
pub const PLATFORMS: &[&str] = &["juno_r0", "hikey960"];
/// Variants and their option assignments: the series' kernel, v4.20 (`kernel=v4.20`: the
/// pre-rework balancer, the CFS rules, `wake_cap()`, no EAS), without (`tip`) and with the
/// series, `performance` governor.
pub const VARIANTS: &[(&str, &[&str])] = &[
    (
        "tip",
        &[
            "kernel=v4.20",
            "cpufreq.governor=performance",
            "balance.misfit=false",
        ],
    ),
    ("misfit", &["kernel=v4.20", "cpufreq.governor=performance"]),
];
/// Runs by default (the series' 10-run summary).
pub const DEFAULT_RUNS: usize = 10;
/// Runs with `--quick`.
pub const QUICK_RUNS: usize = 3;
/// The script's REQUESTS.
pub const REQUESTS: u64 = 1000;
/// Work per sysbench request, µs at capacity 1024 and fmax (the `sysbench-cpu`
/// generator's default, which the workload uses).
pub const REQUEST_US: u64 = 1200;
/// "Far behind" in the single-run shape criterion: ≥ 15 % after the fastest task.
pub const BEHIND_FACTOR: f64 = 1.15;

/// The seed's figures: (variant, platform, longest avg, longest max, single run).
const SEED: &[(&str, &str, f64, f64, [f64; 4])] = &[
    (
        "tip",
        "juno_r0",
        1.7465,
        1.7469,
        [1.2608, 1.2995, 1.5954, 1.7463],
    ),
    (
        "tip",
        "hikey960",
        2.5997,
        2.6131,
        [1.7431, 2.2914, 2.5976, 1.7280],
    ),
    (
        "misfit",
        "juno_r0",
        1.6016,
        1.6192,
        [1.2575, 1.3004, 1.5860, 1.5871],
    ),
    (
        "misfit",
        "hikey960",
        1.8506,
        1.9666,
        [1.7866, 1.7513, 1.6918, 1.6965],
    ),
];

/// The workload spec of the series' script on a platform whose big CPUs are `bigs` and
/// LITTLE CPUs `littles`.
pub fn workload_spec(bigs: &[usize], littles: &[usize]) -> String {
    let mut parts = Vec::new();
    for (i, c) in bigs.iter().enumerate() {
        parts.push(format!(
            "sysbench-cpu:name=big{i},requests={},cpus={c}",
            REQUESTS / 4
        ));
    }
    for i in 0..littles.len() {
        parts.push(format!("sysbench-cpu:name=little{i},requests={REQUESTS}"));
    }
    format!("gen:{}", parts.join("+"))
}

/// Big and LITTLE CPUs of a platform: the CPUs of the maximum capacity, and the others.
fn split_cpus(p: &Platform) -> (Vec<usize>, Vec<usize>) {
    let max = p.max_capacity();
    let (b, l): (Vec<_>, Vec<_>) = p.cpus.iter().partition(|c| c.capacity == max);
    (
        b.iter().map(|c| c.id).collect(),
        l.iter().map(|c| c.id).collect(),
    )
}

fn seed_ref(
    variant: &str,
    platform: &str,
) -> Option<&'static (&'static str, &'static str, f64, f64, [f64; 4])> {
    SEED.iter().find(|s| s.0 == variant && s.1 == platform)
}

fn pct_improvement(before: f64, after: f64) -> f64 {
    if before > 0.0 {
        (before - after) / before * 100.0
    } else {
        0.0
    }
}

/// How many of `v` finish at least [`BEHIND_FACTOR`] after the fastest, and the spread
/// slowest / fastest.
fn shape(v: &[f64]) -> (usize, f64) {
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(0.0, f64::max);
    // no times, or a zero time (a NaN would fail the comparison too)
    if min.is_nan() || min <= 0.0 || !min.is_finite() {
        return (0, 0.0);
    }
    (
        v.iter().filter(|&&x| x >= min * BEHIND_FACTOR).count(),
        max / min,
    )
}

/// What the work model says about a single run of the seed: can any schedule produce
/// these completion times at all?
///
/// A work-conservation bound, independent of the scheduler. Each unpinned task needs
/// `W = requests × request_us` of work at the big CPUs' speed; a LITTLE CPU does a
/// fraction `r` of a big's work per second (the model: LITTLE capacity / big capacity at
/// fmax, the `performance` governor). A task that completes at `C` with `L` s on LITTLE
/// CPUs and `B` s on big ones has `r·L + B = W` and `L + B ≤ C`, so it spent at least
/// `B ≥ (W − r·C) / (1 − r)` on the bigs; `nb` big CPUs give at most `nb · t` of big time
/// by `t`. The pinned tasks' own big-CPU work is left out, which makes the bound weaker
/// (a run that fails it fails it even if they did nothing).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Feasibility {
    /// `r` of the model (LITTLE capacity / big capacity).
    pub model_ratio: f64,
    /// The least `r` for which the run is possible at the model's request time
    /// (`None`: not even at `r` = 1, a task finished faster than `W`).
    pub min_ratio: Option<f64>,
    /// The longest request time (µs at capacity 1024 and fmax) for which the run is
    /// possible at the model's `r`.
    pub max_request_us: f64,
}

impl Feasibility {
    /// Whether the model can produce the run at all.
    pub fn feasible(&self) -> bool {
        self.min_ratio.is_some_and(|m| m <= self.model_ratio)
    }
}

/// Whether completions `c` (s, any order) are possible for tasks of `w` s of big-CPU
/// work on `nb` big CPUs with LITTLE speed ratio `r` (see [`Feasibility`]): for every
/// prefix of the completions in time order, the big time the prefix needs fits in
/// `nb × ` its last completion.
pub fn schedule_exists(c: &[f64], w: f64, r: f64, nb: usize) -> bool {
    let mut c = c.to_vec();
    c.sort_by(f64::total_cmp);
    let mut need = 0.0;
    for &ci in &c {
        if ci < w {
            return false; // faster than a big CPU alone
        }
        if r < 1.0 {
            need += ((w - r * ci) / (1.0 - r)).max(0.0);
        }
        if need > nb as f64 * ci + 1e-12 {
            return false;
        }
    }
    true
}

/// [`Feasibility`] of completions `c` for tasks of `requests × request_us` work, `nb` big
/// CPUs, model ratio `r` (bisection to 1e-6).
pub fn feasibility(c: &[f64], requests: u64, request_us: f64, nb: usize, r: f64) -> Feasibility {
    let w = requests as f64 * request_us * 1e-6;
    let min_ratio = if schedule_exists(c, w, 1.0, nb) {
        let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
        if schedule_exists(c, w, 0.0, nb) {
            hi = 0.0;
        }
        while hi - lo > 1e-6 {
            let mid = 0.5 * (lo + hi);
            if schedule_exists(c, w, mid, nb) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Some(hi)
    } else {
        None
    };
    // feasibility falls as the request time grows
    let (mut lo, mut hi) = (0.0_f64, 1e7_f64);
    while hi - lo > 1e-3 {
        let mid = 0.5 * (lo + hi);
        if schedule_exists(c, requests as f64 * mid * 1e-6, r, nb) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Feasibility {
        model_ratio: r,
        min_ratio,
        max_request_us: lo,
    }
}

/// The model's LITTLE/big work-speed ratio on `p` at fmax (the work capacities: the
/// capacities unless the platform gives `work_dmips_mhz`; the fastest LITTLE), and the
/// number of big CPUs.
fn model_ratio(p: &Platform) -> (f64, usize) {
    let max = p.max_capacity();
    let big = p
        .cpus
        .iter()
        .filter(|c| c.capacity == max)
        .map(|c| c.work_capacity())
        .max()
        .unwrap_or(max);
    let little = p
        .cpus
        .iter()
        .filter(|c| c.capacity < max)
        .map(|c| c.work_capacity())
        .max()
        .unwrap_or(big);
    let nb = p.cpus.iter().filter(|c| c.capacity == max).count();
    (little as f64 / big.max(1) as f64, nb)
}

/// Runs the experiment.
pub fn run(opts: &ReproduceOptions, progress: Progress<'_>) -> Result<Report, Error> {
    let runs = opts
        .runs
        .unwrap_or(if opts.quick { QUICK_RUNS } else { DEFAULT_RUNS })
        .max(1);
    let mut specs = Vec::new();
    let mut ratios = Vec::new();
    for p in PLATFORMS {
        let plat = opts.load_platform(p)?;
        let (bigs, littles) = split_cpus(&plat);
        specs.push((workload_spec(&bigs, &littles), littles.len()));
        ratios.push(model_ratio(&plat));
    }
    let mut jobs = Vec::new();
    for (vi, (_, sets)) in VARIANTS.iter().enumerate() {
        for (ci, p) in PLATFORMS.iter().enumerate() {
            for r in 0..runs {
                jobs.push(Job {
                    variant: vi,
                    case: ci,
                    run: r,
                    req: request(opts, p, specs[ci].0.clone(), p, r, sets, None),
                });
            }
        }
    }
    let results = run_jobs(&jobs, opts, progress)?;

    // completion[v][c][r] = unpinned tasks' completion times, LITTLE order.
    let mut completion = vec![vec![vec![Vec::new(); runs]; PLATFORMS.len()]; VARIANTS.len()];
    for (job, res) in jobs.iter().zip(&results) {
        let mut v = Vec::new();
        for i in 0..specs[job.case].1 {
            let comm = format!("little{i}");
            let t = workload_tasks(res)
                .find(|t| task_of(&t.comm) == comm)
                .and_then(|t| t.completion_s)
                .ok_or_else(|| {
                    Error::Reproduce(format!(
                        "misfit: {} run {}: task {comm} did not finish",
                        PLATFORMS[job.case], job.run
                    ))
                })?;
            v.push(t);
        }
        completion[job.variant][job.case][job.run] = v;
    }

    // feas[v][c]: the seed's single run against the work model (JSON and table).
    let feas: Vec<Vec<Option<Feasibility>>> = VARIANTS
        .iter()
        .map(|(vname, _)| {
            PLATFORMS
                .iter()
                .zip(&ratios)
                .map(|(p, &(r, nb))| {
                    seed_ref(vname, p)
                        .map(|s| feasibility(&s.4, REQUESTS, REQUEST_US as f64, nb, r))
                })
                .collect()
        })
        .collect();
    let mut out = Map::new();
    let mut reference = Map::new();
    // longest[v][c] = (avg, max)
    let mut longest = vec![vec![(0.0, 0.0); PLATFORMS.len()]; VARIANTS.len()];
    for (vi, (vname, _)) in VARIANTS.iter().enumerate() {
        let mut per_case = Map::new();
        let mut ref_case = Map::new();
        for (ci, p) in PLATFORMS.iter().enumerate() {
            let runs_c = &completion[vi][ci];
            let per_run_longest: Vec<f64> = runs_c
                .iter()
                .map(|v| v.iter().copied().fold(0.0, f64::max))
                .collect();
            let avg = mean(&per_run_longest);
            let max = per_run_longest.iter().copied().fold(0.0, f64::max);
            longest[vi][ci] = (avg, max);
            per_case.insert(
                (*p).to_string(),
                obj(vec![
                    ("runs", Value::from(runs)),
                    ("longest_avg_s", Value::from(round(avg, 4))),
                    ("longest_max_s", Value::from(round(max, 4))),
                    (
                        "per_run_longest_s",
                        Value::from(
                            per_run_longest
                                .iter()
                                .map(|x| round(*x, 6))
                                .collect::<Vec<_>>(),
                        ),
                    ),
                    (
                        "per_run_completion_s",
                        Value::from(
                            runs_c
                                .iter()
                                .map(|v| v.iter().map(|x| round(*x, 6)).collect::<Vec<_>>())
                                .collect::<Vec<_>>(),
                        ),
                    ),
                    ("workload", Value::from(specs[ci].0.clone())),
                ]),
            );
            if let (Some(s), Some(f)) = (seed_ref(vname, p), feas[vi][ci]) {
                let r = f.model_ratio;
                ref_case.insert(
                    (*p).to_string(),
                    obj(vec![
                        ("longest_avg_s", Value::from(s.2)),
                        ("longest_max_s", Value::from(s.3)),
                        ("single_run_completion_s", Value::from(s.4.to_vec())),
                        (
                            "single_run_feasibility",
                            obj(vec![
                                ("possible_under_the_work_model", Value::from(f.feasible())),
                                ("model_little_big_ratio", Value::from(round(r, 4))),
                                (
                                    "min_little_big_ratio",
                                    f.min_ratio
                                        .map_or(Value::Null, |m| Value::from(round(m, 4))),
                                ),
                                (
                                    "max_request_us_at_model_ratio",
                                    Value::from(round(f.max_request_us, 1)),
                                ),
                            ]),
                        ),
                    ]),
                );
            }
        }
        out.insert((*vname).to_string(), Value::Object(per_case));
        reference.insert((*vname).to_string(), Value::Object(ref_case));
    }

    // Criteria.
    let mut criteria = Vec::new();
    for (ci, p) in PLATFORMS.iter().enumerate() {
        let (Some(st), Some(sm)) = (seed_ref("tip", p), seed_ref("misfit", p)) else {
            continue;
        };
        let seed_imp = pct_improvement(st.2, sm.2);
        let imp = pct_improvement(longest[0][ci].0, longest[1][ci].0);
        criteria.push(Verdict {
            name: format!("{p}: misfit lowers the average longest completion time (%)"),
            measured: imp,
            threshold: "> 0".into(),
            pass: imp > 0.0,
        });
        let (lo, hi) = (seed_imp / 2.0, seed_imp * 2.0);
        criteria.push(Verdict {
            name: format!(
                "{p}: improvement within a factor of two of the seed's {seed_imp:.2} % (%)"
            ),
            measured: imp,
            threshold: format!("{lo:.2} … {hi:.2}"),
            pass: (lo..=hi).contains(&imp),
        });
        let (tip_behind, tip_spread) = shape(&completion[0][ci][0]);
        let (_, mis_spread) = shape(&completion[1][ci][0]);
        criteria.push(Verdict {
            name: format!("{p}: single run, tip: tasks ≥ 15 % behind the fastest"),
            measured: tip_behind as f64,
            threshold: "1 or 2".into(),
            pass: (1..=2).contains(&tip_behind),
        });
        criteria.push(Verdict {
            name: format!(
                "{p}: single run, misfit spread slowest/fastest below tip's ({tip_spread:.3})"
            ),
            measured: mis_spread,
            threshold: format!("< {tip_spread:.3}"),
            pass: mis_spread < tip_spread,
        });
    }

    let notes = vec![
        format!(
            "Workload per platform: the series' script as generator parts, e.g. {} ({REQUEST_US} µs of work per request at capacity 1024 and fmax); governor performance.",
            specs[0].0
        ),
        "Both variants run the series' kernel, kernel=v4.20 (docs/kernel-profiles.md: the pre-v5.5 balancer, the CFS rules, wake_cap(), no EAS); tip = balance.misfit=false; misfit = the series on. Each run's noise seed and engine seed depend on the platform and run index only, the same for both variants.".into(),
        "Completion = exit − first wake-up of each unpinned task; the background noise tasks are left out.".into(),
    ];

    // Table.
    let mut t = String::new();
    let _ = writeln!(
        t,
        "misfit: longest completion time of the unpinned tasks (s), {runs} runs, base seed {}",
        opts.seed
    );
    let _ = writeln!(
        t,
        "{:<8} {:>18} {:>18} | {:>18} {:>18}",
        "", "juno_r0 avg/max", "seed avg/max", "hikey960 avg/max", "seed avg/max"
    );
    for (vi, (vname, _)) in VARIANTS.iter().enumerate() {
        let mut line = format!("{vname:<8}");
        for (ci, p) in PLATFORMS.iter().enumerate() {
            let (a, m) = longest[vi][ci];
            let s = seed_ref(vname, p).map_or((0.0, 0.0), |s| (s.2, s.3));
            if ci > 0 {
                line.push_str(" |");
            }
            let _ = write!(line, " {:>8.4} {:>9.4} {:>8.4} {:>9.4}", a, m, s.0, s.1);
        }
        let _ = writeln!(t, "{line}");
    }
    let mut line = format!("{:<8}", "change");
    for (ci, p) in PLATFORMS.iter().enumerate() {
        let imp = -pct_improvement(longest[0][ci].0, longest[1][ci].0);
        let simp = match (seed_ref("tip", p), seed_ref("misfit", p)) {
            (Some(a), Some(b)) => -pct_improvement(a.2, b.2),
            _ => 0.0,
        };
        if ci > 0 {
            line.push_str(" |");
        }
        let _ = write!(line, " {:>17.1}% {:>17.1}%", imp, simp);
    }
    let _ = writeln!(t, "{line}");
    let _ = writeln!(
        t,
        "\nSingle run (run 0): completion of each unpinned task (s), beside the seed's single run"
    );
    for (ci, p) in PLATFORMS.iter().enumerate() {
        for (vi, (vname, _)) in VARIANTS.iter().enumerate() {
            let ours: Vec<String> = completion[vi][ci][0]
                .iter()
                .map(|x| format!("{x:.4}"))
                .collect();
            let seed: Vec<String> = seed_ref(vname, p)
                .map(|s| s.4.iter().map(|x| format!("{x:.4}")).collect())
                .unwrap_or_default();
            let _ = writeln!(
                t,
                "  {:<9} {:<7} {}   seed: {}",
                p,
                vname,
                ours.join(" "),
                seed.join(" ")
            );
        }
    }
    let _ = writeln!(
        t,
        "\nThe seed's single runs under the work model (work conservation, any schedule; see docs/experiments.md)"
    );
    for (ci, p) in PLATFORMS.iter().enumerate() {
        for (vi, (vname, _)) in VARIANTS.iter().enumerate() {
            let Some(f) = feas[vi][ci] else {
                continue;
            };
            let r = f.model_ratio;
            let need = f
                .min_ratio
                .map_or("none".to_string(), |m| format!("{m:.3}"));
            let _ = writeln!(
                t,
                "  {:<9} {:<7} LITTLE/big speed needed ≥ {need} (model {r:.3}); at {r:.3}, ≤ {:.0} µs per request (model {REQUEST_US}): {}",
                p,
                vname,
                f.max_request_us,
                if f.feasible() { "possible" } else { "impossible" }
            );
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
    fn script_on_juno() {
        let (b, l) = split_cpus(&load_platform("juno_r0").unwrap());
        assert_eq!((b, l.clone()), (vec![1, 2], vec![0, 3, 4, 5]));
        let w = crate::load_workload(&workload_spec(&[1, 2], &l), &Default::default()).unwrap();
        // two pinned tasks of 250 requests, four unpinned of 1000
        let loops: Vec<(String, u64, Option<Vec<usize>>)> = w
            .tasks
            .iter()
            .map(|t| (t.name.clone(), t.phases[0].loop_count, t.attrs.cpus.clone()))
            .collect();
        assert_eq!(loops[0], ("big0".into(), 250, Some(vec![1])));
        assert_eq!(loops[1], ("big1".into(), 250, Some(vec![2])));
        assert_eq!(loops[2], ("little0".into(), 1000, None));
        assert_eq!(loops.len(), 6);
    }

    #[test]
    fn request_time_is_the_generators() {
        use hetsched_rtapp::gen::sysbench::SysbenchCpu;
        assert_eq!(REQUEST_US, SysbenchCpu::default().request_us);
    }

    #[test]
    fn work_conservation_bound() {
        // One big CPU, W = 1 s. Two tasks at 1 s each need 2 s of big time by t = 1 with
        // r = 0: impossible; with r = 1 (LITTLEs as fast) possible.
        assert!(!schedule_exists(&[1.0, 1.0], 1.0, 0.0, 1));
        assert!(schedule_exists(&[1.0, 1.0], 1.0, 1.0, 1));
        // A task cannot finish faster than W on a big alone.
        assert!(!schedule_exists(&[0.9], 1.0, 0.9, 4));
        // r = 0.5, C = 1.5: B ≥ (1 − 0.75) / 0.5 = 0.5 each; two on one big need 1.0 by
        // 1.5: possible; four need 2.0 > 1.5: not.
        assert!(schedule_exists(&[1.5, 1.5], 1.0, 0.5, 1));
        assert!(!schedule_exists(&[1.5; 4], 1.0, 0.5, 1));
        // The least r for four tasks at 1.5 s on one big: 4(1 − 1.5r)/(1 − r) = 1.5
        // → r = 2.5 / 4.5 = 0.5556.
        let f = feasibility(&[1.5; 4], 1000, 1000.0, 1, 0.5);
        assert!((f.min_ratio.unwrap() - 2.5 / 4.5).abs() < 1e-5);
        assert!(!f.feasible());
        // At r = 0.5 the longest request time: 4(W − 0.75)/0.5 = 1.5 → W = 0.9375 s.
        assert!((f.max_request_us - 937.5).abs() < 0.01);
    }

    #[test]
    fn the_seeds_juno_runs_are_impossible_under_capacity_scaled_work() {
        // Juno: r = 446/1024, 2 bigs, 1.2 ms per request. Misfit's single run needs the
        // A53 at ≥ 0.59 of the A57 (see docs/experiments.md); Hikey960's runs are possible.
        let (r, nb) = model_ratio(&load_platform("juno_r0").unwrap());
        assert_eq!(nb, 2);
        assert!((r - 446.0 / 1024.0).abs() < 1e-12);
        for s in SEED.iter().filter(|s| s.1 == "juno_r0") {
            let f = feasibility(&s.4, REQUESTS, REQUEST_US as f64, nb, r);
            assert!(!f.feasible(), "{}: {f:?}", s.0);
            assert!(f.min_ratio.unwrap() > 0.5, "{}: {f:?}", s.0);
        }
        let (r, nb) = model_ratio(&load_platform("hikey960").unwrap());
        for s in SEED.iter().filter(|s| s.1 == "hikey960") {
            let f = feasibility(&s.4, REQUESTS, REQUEST_US as f64, nb, r);
            assert!(f.feasible(), "{}: {f:?}", s.0);
        }
    }

    #[test]
    fn seed_improvements_and_shape() {
        // (1.7465 − 1.6016) / 1.7465 = 8.296 %; (2.5997 − 1.8506) / 2.5997 = 28.815 %.
        assert!((pct_improvement(1.7465, 1.6016) - 8.2966).abs() < 1e-3);
        assert!((pct_improvement(2.5997, 1.8506) - 28.8149).abs() < 1e-3);
        // The seed's own single runs satisfy the shape criteria: Juno tip has 1.5954 and
        // 1.7463 ≥ 1.15 × 1.2608 = 1.4499; spread 1.7463 / 1.2608 = 1.385 > misfit's
        // 1.5871 / 1.2575 = 1.262.
        let (n, s_tip) = shape(&SEED[0].4);
        assert_eq!(n, 2);
        let (_, s_mis) = shape(&SEED[2].4);
        assert!(s_mis < s_tip && (s_tip - 1.3851).abs() < 1e-3);
        let (n, _) = shape(&SEED[1].4);
        assert_eq!(n, 2);
    }
}
