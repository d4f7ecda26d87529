//! Tests of the EAS placement (`find_energy_efficient_cpu()`, `compute_energy()`;
//! kernel/sched/fair.c, v6.11).

use super::*;
use crate::energy::em::tests::juno;

/// Utilisation per CPU *including* the sleeping task's blocked contribution on its
/// previous CPU (as `cfs_rq->avg.util_avg` does) and `runnable_avg` for the boost; no
/// util_est.
struct View {
    util: Vec<u64>,
    runnable: Vec<u64>,
    caps: Vec<u64>,
    task_cpu: usize,
    task_util: u64,
    rqs: Vec<RqSignals>,
    uclamp_used: bool,
}

impl EasView for View {
    fn cpu_util(&self, cpu: usize, p: Option<usize>, dst: Option<usize>, b: bool) -> u64 {
        let mut u = self.util[cpu];
        if b {
            u = u.max(self.runnable[cpu]);
        }
        if p.is_some() {
            if self.task_cpu == cpu && dst != Some(cpu) {
                u = u.saturating_sub(self.task_util);
            } else if self.task_cpu != cpu && dst == Some(cpu) {
                u += self.task_util;
            }
        }
        u.min(self.caps[cpu])
    }
    fn capacity_of(&self, cpu: usize) -> u64 {
        self.caps[cpu]
    }
    fn actual_cpu_capacity(&self, cpu: usize) -> u64 {
        self.caps[cpu]
    }
    fn rq(&self, cpu: usize) -> RqSignals {
        self.rqs[cpu]
    }
    fn uclamp_is_used(&self) -> bool {
        self.uclamp_used
    }
}

fn view(prev: usize, task_util: u64) -> View {
    let caps = vec![446, 1024, 1024, 446, 446, 446];
    let mut util = vec![0; 6];
    util[prev] = task_util;
    View {
        util,
        runnable: vec![0; 6],
        rqs: caps.iter().map(|&c| RqSignals::cfs_only(c)).collect(),
        caps,
        task_cpu: prev,
        task_util,
        uclamp_used: false,
    }
}

fn task(util: u64) -> EasTask {
    let allowed = CpuSet::first_n(6);
    EasTask {
        id: 7,
        util_est: util,
        uclamp_min: 0,
        uclamp_max: 1024,
        allowed,
    }
}

/// `find_energy_efficient_cpu()` of `p` last on `prev`, every CPU allowed, the
/// performance domains in the root domain's order.
fn feec_all(
    v: &View,
    em: &EnergyModel,
    p: &EasTask,
    prev: usize,
    params: FeecParams,
) -> Option<usize> {
    find_energy_efficient_cpu(v, em, &rd_pd_order(em), p, prev, Some(&all()), params)
}

fn all() -> CpuSet {
    task(0).allowed
}

#[test]
fn em_cpu_energy_on_known_utils() {
    let em = EnergyModel::build(&juno(), EmVersion::V6_9);
    let little = em.pds[0].as_ref().unwrap();
    // max_util 300 → first perf ≥ 300 is 301 (cost 1528): 1528 × 500.
    assert_eq!(em_cpu_energy(little, 300, 500, 446), 764_000);
    assert_eq!(em_cpu_energy(little, 300, 0, 446), 0);
    // max_util above the allowed capacity → top state (cost 2085).
    assert_eq!(em_cpu_energy(little, 900, 100, 446), 208_500);
    let em5 = EnergyModel::build(&juno(), EmVersion::V5);
    let little5 = em5.pds[0].as_ref().unwrap();
    // freq = 850000 × 300 / 446 = 571748 → 575 MHz (cost 68000): 68000 × 500 / 446 = 76233.
    assert_eq!(em_cpu_energy(little5, 300, 500, 446), 76_233);
}

#[test]
fn feec_small_task_goes_little() {
    let em = EnergyModel::build(&juno(), EmVersion::V6_9);
    // util 50 on big CPU 1. LITTLE candidate CPU 0: perf 62 → state 0 (cost 1398),
    // delta 1398 × 50 = 69900; prev (big, cost 4019): 4019 × 50 = 200950.
    let v = view(1, 50);
    let got = feec_all(&v, &em, &task(50), 1, FeecParams::default());
    assert_eq!(got, Some(0));
}

#[test]
fn feec_big_task_goes_big() {
    let em = EnergyModel::build(&juno(), EmVersion::V6_9);
    // util 400 does not fit a LITTLE (400 × 1280 > 446 × 1024): only big CPUs qualify,
    // the first with the most spare capacity is CPU 1.
    let v = view(0, 400);
    let got = feec_all(&v, &em, &task(400), 0, FeecParams::default());
    assert_eq!(got, Some(1));
}

#[test]
fn feec_keeps_prev_when_no_better() {
    let em = EnergyModel::build(&juno(), EmVersion::V6_9);
    // util 50 on LITTLE CPU 0: other LITTLEs have no more spare capacity than prev,
    // the big candidate costs more (200950 ≥ 69900).
    let v = view(0, 50);
    let p = task(50);
    assert_eq!(feec_all(&v, &em, &p, 0, FeecParams::default()), Some(0));
    // No asym domain spanning prev: −1.
    assert_eq!(
        find_energy_efficient_cpu(
            &v,
            &em,
            &rd_pd_order(&em),
            &p,
            0,
            None,
            FeecParams::default()
        ),
        None
    );
    // A task with no utilisation stays on prev.
    assert_eq!(
        feec_all(&v, &em, &task(0), 0, FeecParams::default()),
        Some(0)
    );
}

#[test]
fn pd_max_util_is_eenv_pd_max_util_for_every_dst_and_busy_time_eenv_pd_busy_time() {
    // prev on CPU 3 (its util left out without dst), busy and idle CPUs, ties; then
    // domains whose terms without p are all 0, or 0 before a larger one
    let mut v = view(3, 120);
    let p = task(120);
    let busy_cpus = (
        vec![300, 700, 700, 420, 0, 300],
        vec![500, 700, 900, 420, 100, 0],
    );
    let idle_cpus = (vec![0, 0, 700, 120, 0, 0], vec![0, 0, 0, 120, 0, 0]);
    let cases = [
        (busy_cpus.clone(), CpuSet::from_cpus(&[0, 3, 4, 5])),
        (busy_cpus.clone(), CpuSet::from_cpus(&[1, 2])),
        (busy_cpus, CpuSet::from_cpus(&[4])),
        (idle_cpus.clone(), CpuSet::from_cpus(&[0, 1])),
        (idle_cpus.clone(), CpuSet::from_cpus(&[0, 1, 2])),
        (idle_cpus, CpuSet::from_cpus(&[3, 4, 5])),
    ];
    for ((util, runnable), cpus) in cases {
        (v.util, v.runnable) = (util, runnable);
        let eenv = EnergyEnv {
            cpu_cap: 1024,
            ..EnergyEnv::default()
        };
        let forms = [SchedutilVersion::V6_8, SchedutilVersion::V5];
        for (runnable_boost, perf_estimation) in [true, false].into_iter().zip(forms) {
            let params = FeecParams {
                runnable_boost,
                perf_estimation,
                ..FeecParams::default()
            };
            let (busy, m) = PdMaxUtil::with_busy_time(&v, &cpus, &p, 4096, params);
            assert_eq!(busy, eenv_pd_busy_time(&v, &cpus, &p, 4096), "{cpus:?}");
            let dsts = std::iter::once(None).chain(cpus.iter().map(Some));
            for dst in dsts {
                assert_eq!(
                    m.get(&v, &eenv, &p, dst),
                    eenv_pd_max_util(&v, &eenv, &cpus, &p, dst, params),
                    "{cpus:?} {dst:?} {params:?}"
                );
            }
        }
    }
}

#[test]
fn rd_pd_list_runs_from_the_highest_first_cpu() {
    let em = EnergyModel::build(&juno(), EmVersion::V6_9);
    // juno: PD 0 = {0,3,4,5} is built first (CPU 0), PD 1 = {1,2} is pushed before it.
    let order: Vec<usize> = rd_pd_order(&em)
        .iter()
        .map(|&i| em.pds[i].as_ref().unwrap().pd)
        .collect();
    assert_eq!(order, vec![1, 0]);
}

/// On equal energy deltas the first domain of `rd->pd` keeps the best CPU
/// (`cur_delta >= best_delta` skips the later ones): with two identical domains and
/// prev not allowed, the CPU of the domain with the higher first CPU wins.
#[test]
fn feec_ties_go_to_the_first_pd_of_the_rd_list() {
    let mut em = EnergyModel::build(&juno(), EmVersion::V6_9);
    let mut twin = em.pds[0].clone().unwrap();
    twin.pd = 1;
    twin.cpus = vec![1, 2];
    em.pds[1] = Some(twin);
    let mut v = view(0, 50);
    v.caps = vec![446; 6];
    let mut p = task(50);
    p.allowed = CpuSet::from_cpus(&[1, 2, 3, 4, 5]);
    // CPU 3 (PD 0) and CPU 1 (PD 1) give the same delta; PD 1 is walked first.
    let got = feec_all(&v, &em, &p, 0, FeecParams::default());
    assert_eq!(got, Some(1));
    // The other way round: the twin domain holds the lower CPUs.
    let (a, b) = (em.pds[0].clone(), em.pds[1].clone());
    em.pds[0] = b;
    em.pds[1] = a;
    assert_eq!(feec_all(&v, &em, &p, 0, FeecParams::default()), Some(1));
}

#[test]
fn feec_margin_keeps_prev_for_small_savings() {
    // LITTLE 775 MHz state made only ~2 % costlier than 700 MHz: P = 69000 µW,
    // cost = 690000 / 406 = 1699 (700 MHz: 1662).
    let mut plat = juno();
    plat.perf_domains[0].opps[3].power_uw = Some(69_000);
    let em = EnergyModel::build(&plat, EmVersion::V6_9);
    // CPU 0 (prev) carries 250 besides the task's 50; the other CPUs are idle.
    let mut v = view(0, 50);
    v.util[0] = 300;
    let p = task(50);
    // base (pd busy 250, max perf 1.25 × 250 = 312 → perf 367, cost 1662) = 415500;
    // prev: max perf 375 → perf 406, cost 1699 × 300 = 509700 → delta 94200;
    // CPU 3: max perf 312 → cost 1662 × 300 = 498600 → delta 83100 (saves 11100).
    let no_margin = feec_all(&v, &em, &p, 0, FeecParams::default());
    assert_eq!(no_margin, Some(3));
    // v5.x margin: (94200 + 415500 + 0 for the idle big domain) >> 4 = 31856 > 11100.
    let m = feec_all(
        &v,
        &em,
        &p,
        0,
        FeecParams {
            energy_margin: true,
            ..FeecParams::default()
        },
    );
    assert_eq!(m, Some(0));
}

/// `eenv_pd_max_util()` takes the runnable boost from v6.5 (`cpu_util(cpu, p, dst_cpu,
/// 1)`), v5.x's `compute_energy()` does not (`cpu_util_next()`). juno: p (util 120)
/// slept on the big CPU 1; every LITTLE runs util 180 with tasks waiting (runnable
/// 400). Unboosted, the LITTLEs sit in state 0 (1.25 × 180 = 225 ≤ 236: cost 1398,
/// base 1398 × 720) and p on CPU 0 lifts the domain to perf 406 (1.25 × 300 = 375:
/// cost 1871 × 840), a delta of 565080 against 4019 × 120 = 482280 on the big prev, which
/// stays. Boosted, the LITTLEs already run at their top state (cost 2085): the delta is
/// 2085 × 120 = 250200 and p goes to CPU 0.
#[test]
fn pd_max_util_takes_the_runnable_boost_from_v6_5() {
    let em = EnergyModel::build(&juno(), EmVersion::V6_9);
    let mut v = view(1, 120);
    for cpu in [0, 3, 4, 5] {
        v.util[cpu] = 180;
        v.runnable[cpu] = 400;
    }
    let p = task(120);
    let feec = |runnable_boost| {
        feec_all(
            &v,
            &em,
            &p,
            1,
            FeecParams {
                runnable_boost,
                ..FeecParams::default()
            },
        )
    };
    assert_eq!(feec(true), Some(0));
    assert_eq!(feec(false), Some(1));
}

#[test]
fn eas_conditions_give_precise_errors() {
    let p = juno();
    let em = EnergyModel::build(&p, EmVersion::V6_9);
    let ok = EasConditions {
        sysctl_sched_energy_aware: true,
        schedutil: true,
        governor: "schedutil",
        frequency_invariant: true,
        smt: false,
        em_max_complexity: true,
    };
    assert_eq!(sched_energy_possible(&p, &em, &ok), Ok(()));
    let perf = EasConditions {
        schedutil: false,
        governor: "performance",
        ..ok
    };
    assert_eq!(
        sched_energy_possible(&p, &em, &perf).unwrap_err().to_string(),
        "EAS needs the schedutil governor on every cpufreq policy: set cpufreq.governor = schedutil (it is performance)"
    );
    let mut sym = p.clone();
    for c in &mut sym.cpus {
        c.capacity = 1024;
    }
    assert_eq!(
        sched_energy_possible(&sym, &em, &ok).unwrap_err().to_string(),
        "EAS needs CPUs of different capacities (SD_ASYM_CPUCAPACITY): every CPU of juno-test has capacity 1024"
    );
    let mut nop = p.clone();
    nop.perf_domains[1].power_source = crate::platform::PowerSource::None;
    let em2 = EnergyModel::build(&nop, EmVersion::V6_9);
    assert!(matches!(
        sched_energy_possible(&nop, &em2, &ok),
        Err(EasUnavailable::NoEnergyModel(_))
    ));
}

/// `util_min`/`util_max` are set once per perf domain (v6.11): a uclamp-idle CPU is
/// tested with the clamps max-aggregated on the domain's last non-idle CPU before it.
/// juno, uclamp in use: CPU 0 runs a task clamped to [512, 1024] (util 100); CPUs 3–5
/// are uclamp-idle; p (util 100, clamps [0, 300]) slept on the big CPU 1. With CPU 0's
/// clamps every LITTLE gives −1 (util < 512 > 446), so the big domain's fitting prev
/// stays; with p's own clamps CPU 3 would fit and win on energy.
#[test]
fn feec_uclamp_values_carry_over_within_a_perf_domain() {
    let em = EnergyModel::build(&juno(), EmVersion::V6_9);
    let mut v = view(1, 100);
    v.util[0] = 100;
    v.uclamp_used = true;
    for (cpu, rq) in v.rqs.iter_mut().enumerate() {
        rq.uclamp_idle = cpu != 0;
    }
    v.rqs[0].uclamp_min = 512;
    let p = EasTask {
        uclamp_max: 300,
        ..task(100)
    };
    let got = feec_all(&v, &em, &p, 1, FeecParams::default());
    assert_eq!(got, Some(1));
}

/// juno with uclamp in use, p (util 100) slept on the big CPU 1; the LITTLE domain
/// {0, 3, 4, 5}: CPU 0 runs a task (util 100), CPU 3 another (util 50), CPUs 4 and 5
/// are uclamp-idle.
fn two_busy_littles(p_util: u64) -> View {
    let mut v = view(1, p_util);
    v.util[0] = 100;
    v.util[3] = 50;
    v.uclamp_used = true;
    for (cpu, rq) in v.rqs.iter_mut().enumerate() {
        rq.uclamp_idle = ![0, 3].contains(&cpu);
    }
    v
}

/// v6.11 `find_energy_efficient_cpu()` tests each non-uclamp-idle CPU with
/// `util_min = max(rq_util_min, p_util_min)`, `util_max = max(rq_util_max,
/// p_util_max)`: its own rq clamps, not a maximum over the domain's CPUs walked so far.
/// * util_min: CPU 0's rq min is 512 (> 446: −1 there), CPU 3's is 0. CPU 3 and the
///   idle CPUs 4 and 5 after it fit (1), CPU 4 has the most spare capacity and is
///   cheaper than the big prev. A running maximum gave 512 to CPUs 3–5 (all −1), so
///   the LITTLE candidate lost to the fitting big domain and p stayed on CPU 1.
/// * util_max: CPU 0 runs a default task (rq max 1024), CPU 3 one capped at 300; p
///   (util 500, max 300) fits CPUs 3–5 through `uclamp_max_fits` (300 ≤ 446); each
///   is full with p (spare 0), so the first, CPU 3, is the candidate and wins. A
///   running maximum kept 1024 there: no fit, p stayed on CPU 1.
#[test]
fn feec_rq_clamps_are_taken_per_cpu_not_accumulated_over_the_domain() {
    let em = EnergyModel::build(&juno(), EmVersion::V6_9);
    let feec = |v: &View, p: &EasTask| feec_all(v, &em, p, 1, FeecParams::default());
    let mut v = two_busy_littles(100);
    v.rqs[0].uclamp_min = 512;
    assert_eq!(feec(&v, &task(100)), Some(4));

    let mut v = two_busy_littles(500);
    v.rqs[3].uclamp_max = 300;
    let p = EasTask {
        uclamp_max: 300,
        ..task(500)
    };
    assert_eq!(feec(&v, &p), Some(3));
}

/// Before v6.8 (`cpufreq.schedutil_version = v5_x`, the `v5.9`–`v6.6` profiles) a CPU's
/// frequency term is clamped first and the 1.25 headroom comes after:
/// `effective_cpu_util(cpu, util, FREQUENCY_UTIL, p)` → `uclamp_rq_util_with()` =
/// `clamp(util, min, max)`, then `em_cpu_energy()`'s `map_util_perf()` (v6.6); v6.8+
/// takes `sugov_effective_cpu_perf()` = `max(min, min(1.25·util, max))`.
/// juno with the v5.x EM (`cost = fmax × P / f`) and the LITTLE 775 MHz and 850 MHz
/// states made costly (200 mW: cost 850000 × 200000 / 775000 = 219354; 250 mW: 250000);
/// uclamp in use, every rq uclamp-idle. p (util 300, util_max 300) slept on the big
/// CPU 1. The big domain runs p at 450 MHz either way (300 or 375 → 322265 or
/// 402832 kHz; cost 1100000 × 168000 / 450000 = 410666): delta 410666 × 300 / 1024 =
/// 120312. On the idle LITTLE CPU 0 the v6.8 form asks min(375, 300) = 300 → 571748
/// kHz → 575 MHz (cost 68000): delta 68000 × 300 / 446 = 45739, so p moves there; the
/// pre-v6.8 form asks 1.25 × 300 = 375 → 714686 kHz → 775 MHz: delta 219354 × 300 /
/// 446 = 147547, more than the big prev's, so p stays on CPU 1.
#[test]
fn pre_v6_8_energy_estimate_clamps_before_the_headroom() {
    let mut plat = juno();
    plat.perf_domains[0].opps[3].power_uw = Some(200_000);
    plat.perf_domains[0].opps[4].power_uw = Some(250_000);
    let em = EnergyModel::build(&plat, EmVersion::V5);
    let little = em.pds[0].as_ref().unwrap();
    assert_eq!(
        col_cost(little),
        vec![62_333, 68_000, 74_071, 219_354, 250_000]
    );
    let mut v = view(1, 300);
    v.uclamp_used = true;
    for rq in v.rqs.iter_mut() {
        rq.uclamp_idle = true;
    }
    let p = EasTask {
        uclamp_max: 300,
        ..task(300)
    };
    let feec = |perf_estimation| {
        feec_all(
            &v,
            &em,
            &p,
            1,
            FeecParams {
                perf_estimation,
                ..FeecParams::default()
            },
        )
    };
    assert_eq!(feec(SchedutilVersion::V6_8), Some(0));
    assert_eq!(feec(SchedutilVersion::V5), Some(1));
}

fn col_cost(pd: &EmPerfDomain) -> Vec<u64> {
    pd.table.iter().map(|s| s.cost).collect()
}
