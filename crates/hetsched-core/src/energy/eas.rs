//! Energy-aware wake-up placement: `em_cpu_energy()` (include/linux/energy_model.h),
//! `eenv_task_busy_time()`, `eenv_pd_busy_time()`, `eenv_pd_max_util()`,
//! `compute_energy()` and `find_energy_efficient_cpu()` (kernel/sched/fair.c, v6.9–v6.11),
//! and the conditions under which the kernel runs EAS at all (`sched_is_eas_possible()`,
//! `build_perf_domains()`, kernel/sched/topology.c, ≈v6.10).
//!
//! # How the engine calls it
//!
//! The engine implements [`EasView`] over its runqueues (the `cpu_util()` family, §1.8 of
//! the spec, is the engine's: it owns PELT and util_est). In `select_task_rq_fair()` for a
//! wake-up (`WF_TTWU`, never fork/exec), when EAS is enabled ([`sched_energy_possible`]
//! succeeded at setup) and the root domain is not overutilised
//! ([`super::overutilized::RootDomainOverutilized::is_rd_overutilized`]), call
//! [`find_energy_efficient_cpu`] after syncing the task's PELT with its previous rq
//! (`sync_entity_load_avg`). `Some(cpu)` is the placement; `None` (the kernel's −1) falls
//! through to the wake-affine / `select_idle_sibling()` path.

use super::em::{EmPerfDomain, EmVersion, EnergyModel, EM_MAX_COMPLEXITY};
use super::util_fits_cpu;
use crate::cpufreq::schedutil::{
    map_util_freq, map_util_perf, sugov_effective_cpu_perf, SchedutilVersion,
};
use crate::cpufreq::{
    effective_cpu_util, scale_irq_capacity, schedutil_cpu_util, CpuUtilType, RqSignals,
};
use crate::platform::Platform;
use crate::sched::CpuSet;

/// What EAS reads of the scheduler state. Task ids and CPU numbers are the engine's.
pub trait EasView {
    /// `cpu_util(cpu, p, dst_cpu, boost)` (kernel/sched/fair.c, v6.8+): CFS utilisation of
    /// `cpu` (util_est included) if `p` were moved to `dst` (`None` = −1: `p` removed from
    /// its CPU when it is `cpu`), with the runnable boost when `boost`, capped at the
    /// CPU's original capacity.
    fn cpu_util(&self, cpu: usize, p: Option<usize>, dst: Option<usize>, boost: bool) -> u64;
    /// `capacity_of(cpu)` (`rq->cpu_capacity`).
    fn capacity_of(&self, cpu: usize) -> u64;
    /// `get_actual_cpu_capacity(cpu)`: arch capacity minus hw/cpufreq pressure.
    fn actual_cpu_capacity(&self, cpu: usize) -> u64;
    /// RT/DL/IRQ signals, arch capacity and rq clamps of `cpu`.
    fn rq(&self, cpu: usize) -> RqSignals;
    /// `uclamp_is_used()`.
    fn uclamp_is_used(&self) -> bool;
    /// `cpu_online_mask`: all online by default.
    fn cpu_online(&self, _cpu: usize) -> bool {
        true
    }
    /// `cpumask_and(cpus, perf_domain_span(pd), cpu_online_mask)` for `pd`, the `i`-th
    /// domain of the energy model, with its `cpumask_weight()`. A view whose CPUs are
    /// always online may keep them per domain; they must equal what the default builds
    /// from [`EasView::cpu_online`].
    fn pd_online_cpus(&self, _i: usize, pd: &EmPerfDomain) -> (CpuSet, u64) {
        pd_online_cpus(self, pd)
    }
    /// The CPUs of [`EasView::pd_online_cpus`]'s set for the `i`-th domain, ascending,
    /// when the view keeps them as a list (then [`find_energy_efficient_cpu`] walks it
    /// rather than the set's words); `None` (the default): the set is walked.
    fn pd_online_list(&self, _i: usize) -> Option<&[usize]> {
        None
    }
    /// The three `cpu_util()` values `find_energy_efficient_cpu()` reads of `cpu` for task
    /// `p` ([`CpuUtils`]); `boost` is [`FeecParams::runnable_boost`]. A view may compute
    /// them from one read of the CPU's signals; they must equal the three
    /// [`EasView::cpu_util`] calls, which is what the default makes.
    fn cpu_utils(&self, cpu: usize, p: usize, boost: bool) -> CpuUtils {
        CpuUtils {
            on_dst: self.cpu_util(cpu, Some(p), Some(cpu), false),
            without: self.cpu_util(cpu, Some(p), None, false),
            without_boost: self.cpu_util(cpu, Some(p), None, boost),
        }
    }
    /// What [`find_energy_efficient_cpu`]'s walk of a domain takes of `cpu` for task `p`
    /// ([`FeecCpu`]). A view may keep the terms that do not depend on `p` from one call to
    /// the next; they must equal [`feec_cpu_of`], which is what the default returns.
    fn feec_cpu(&self, cpu: usize, p: &EasTask, params: FeecParams) -> FeecCpu {
        feec_cpu_of(self, cpu, p, params)
    }
    /// `arch_scale_cpu_capacity(cpu)`: [`RqSignals::arch_capacity`] of [`EasView::rq`],
    /// which a view may read alone.
    fn arch_capacity(&self, cpu: usize) -> u64 {
        self.rq(cpu).arch_capacity
    }
}

/// What `find_energy_efficient_cpu()` (kernel/sched/fair.c, v6.11) takes of one CPU of a
/// performance domain it walks, for task `p`: `eenv_pd_busy_time()`'s term, the CPU's
/// term of `eenv_pd_max_util()` without `p` (`dst_cpu = −1`) and the candidate test's
/// `cpu_util(cpu, p, cpu, 0)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeecCpu {
    /// `effective_cpu_util(cpu, cpu_util(cpu, p, -1, 0), NULL, NULL)`: the CPU's busy time
    /// without `p`.
    pub busy: u64,
    /// The CPU's `eenv_pd_max_util()` term for `dst_cpu = −1` (`cpu_util(cpu, p, -1,
    /// boost)` through the clamps and headroom, [`FeecParams`]).
    pub perf: u64,
    /// `cpu_util(cpu, p, cpu, 0)`: with `p` moved to `cpu`.
    pub on_dst: u64,
    /// What the candidate test reads of the CPU's capacities.
    pub caps: FeecCaps,
}

/// The capacities of a CPU `find_energy_efficient_cpu()` (kernel/sched/fair.c, v6.11)
/// reads for its candidate test (`util_fits_cpu()`, the spare capacity), read with the
/// CPU's other terms ([`FeecCpu`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeecCaps {
    /// `capacity_of(cpu)` ([`EasView::capacity_of`]).
    pub capacity_of: u64,
    /// `arch_scale_cpu_capacity(cpu)` ([`EasView::arch_capacity`]).
    pub arch: u64,
    /// `get_actual_cpu_capacity(cpu)` ([`EasView::actual_cpu_capacity`]).
    pub actual: u64,
}

impl FeecCaps {
    /// The three capacities of `cpu` through the view's methods.
    #[inline(always)]
    pub fn of<V: EasView + ?Sized>(view: &V, cpu: usize) -> FeecCaps {
        FeecCaps {
            capacity_of: view.capacity_of(cpu),
            arch: view.arch_capacity(cpu),
            actual: view.actual_cpu_capacity(cpu),
        }
    }
}

impl FeecCpu {
    /// The two terms of `cpu` without `p` ([`FeecCpu::busy`], [`FeecCpu::perf`]) and its
    /// `cpu_util(cpu, p, cpu, 0)` (`on_dst`) from `cpu`'s signals `rq` and its
    /// [`CpuUtils`] `u`, with its capacities `caps`.
    #[inline(always)]
    pub fn from_utils(
        rq: &RqSignals,
        u: &CpuUtils,
        used: bool,
        cpu: usize,
        p: &EasTask,
        params: FeecParams,
        caps: FeecCaps,
    ) -> FeecCpu {
        FeecCpu {
            busy: effective_cpu_util(rq, u.without, used).util,
            perf: cpu_perf_of(rq, u.without_boost, used, cpu, p, None, params),
            on_dst: u.on_dst,
            caps,
        }
    }
}

/// [`EasView::feec_cpu`] from [`EasView::rq`], [`EasView::cpu_utils`] and the capacity
/// methods ([`FeecCaps::of`]): what every view must return.
#[inline(always)]
pub fn feec_cpu_of<V: EasView + ?Sized>(
    view: &V,
    cpu: usize,
    p: &EasTask,
    params: FeecParams,
) -> FeecCpu {
    let u = view.cpu_utils(cpu, p.id, params.runnable_boost);
    let caps = FeecCaps::of(view, cpu);
    FeecCpu::from_utils(
        &view.rq(cpu),
        &u,
        view.uclamp_is_used(),
        cpu,
        p,
        params,
        caps,
    )
}

/// `cpumask_and(cpus, perf_domain_span(pd), cpu_online_mask)` and `cpumask_weight(cpus)`
/// (kernel/sched/fair.c, v6.11, `find_energy_efficient_cpu()`): the domain's online CPUs,
/// their number counted as the set is built, one per CPU not in it yet (the build has no
/// `popcnt`: counting the set's four words costs more).
pub fn pd_online_cpus<V: EasView + ?Sized>(view: &V, pd: &EmPerfDomain) -> (CpuSet, u64) {
    let mut cpus = CpuSet::EMPTY;
    let mut weight: u64 = 0;
    for &c in pd.cpus.iter().filter(|&&c| view.cpu_online(c)) {
        weight += u64::from(!cpus.contains(c));
        cpus.set(c);
    }
    debug_assert_eq!(weight, cpus.weight() as u64);
    (cpus, weight)
}

/// What `find_energy_efficient_cpu()` reads of one CPU of a performance domain through
/// `cpu_util()` (kernel/sched/fair.c, v6.11): the candidate test's `cpu_util(cpu, p, cpu,
/// 0)`, `eenv_pd_busy_time()`'s `cpu_util(cpu, p, -1, 0)` and `eenv_pd_max_util()`'s
/// `cpu_util(cpu, p, -1, boost)` (the CPU's term when it is not `dst_cpu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuUtils {
    /// `cpu_util(cpu, p, cpu, 0)`: with p moved to `cpu`.
    pub on_dst: u64,
    /// `cpu_util(cpu, p, -1, 0)`: without p.
    pub without: u64,
    /// `cpu_util(cpu, p, -1, boost)`: without p, with the runnable boost when asked.
    pub without_boost: u64,
}

/// The waking task as feec sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EasTask {
    /// Task id passed back to [`EasView::cpu_util`].
    pub id: usize,
    /// `task_util_est(p)` after `sync_entity_load_avg()`.
    pub util_est: u64,
    /// `uclamp_eff_value(p, UCLAMP_MIN)`.
    pub uclamp_min: u64,
    /// `uclamp_eff_value(p, UCLAMP_MAX)`.
    pub uclamp_max: u64,
    /// `p->cpus_ptr`.
    pub allowed: CpuSet,
}

/// `struct energy_env` (kernel/sched/fair.c, v6.1+).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EnergyEnv {
    /// Utilisation contribution of the task (IRQ-scaled on `prev_cpu`).
    pub task_busy_time: u64,
    /// Sum of the domain's CPU utilisations without the task, at most `pd_cap`.
    pub pd_busy_time: u64,
    /// Actual capacity of one CPU of the domain.
    pub cpu_cap: u64,
    /// `cpu_cap × |cpus|`.
    pub pd_cap: u64,
}

/// Options of [`find_energy_efficient_cpu`]; the default is v6.11's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeecParams {
    /// v5.0–v5.17: leave `prev_cpu` only if the best CPU saves at least 1/16 (≈6 %) of
    /// `prev_delta + base_energy` (`eas.feec_energy_margin`; off in v6.x).
    pub energy_margin: bool,
    /// v6.5+: [`eenv_pd_max_util`] reads `cpu_util(cpu, p, dst_cpu, 1)`, with the runnable
    /// boost (commit 7d0583cf9ec7, "sched/fair, cpufreq: Introduce 'runnable boosting'");
    /// v5.x `compute_energy()` reads `cpu_util_next()`, without (`eas.runnable_boost`).
    pub runnable_boost: bool,
    /// How a CPU's frequency term and the 1.25 headroom combine
    /// (`cpufreq.schedutil_version`: the same v6.8 commit 9c0b4bb7f630, "sched/cpufreq:
    /// Rework schedutil governor performance estimation", changed schedutil and EAS).
    /// [`SchedutilVersion::V6_8`]: [`eenv_pd_max_util`] applies the headroom inside the
    /// clamps, `sugov_effective_cpu_perf()` = `max(min, min(1.25·util, max))`.
    /// [`SchedutilVersion::V5`] (v5.x–v6.7): `effective_cpu_util(cpu, util,
    /// FREQUENCY_UTIL, tsk)` clamps first (`uclamp_rq_util_with()`) and `em_cpu_energy()`
    /// adds the headroom after (`map_util_perf()`), `1.25·clamp(util, min, max)`.
    pub perf_estimation: SchedutilVersion,
}

impl Default for FeecParams {
    fn default() -> Self {
        FeecParams {
            energy_margin: false,
            runnable_boost: true,
            perf_estimation: SchedutilVersion::V6_8,
        }
    }
}

/// `em_cpu_energy(pd, max_util, sum_util, allowed_cpu_cap)`: the energy of the domain for
/// `sum_util` of busy time at the state that serves `max_util`.
///
/// * v6.9+ ([`EmVersion::V6_9`]; the v6.9-rc3 fix removed the headroom that commit
///   1b600da51073 had re-added): `max_util = min(max_util, allowed_cpu_cap)`, state =
///   [`EmPerfDomain::em_pd_get_efficient_state`], energy = `cost × sum_util`.
/// * v6.8 ([`EmVersion::V5`]): `freq = fmax × max_util / scale_cpu` (`map_util_freq`), the
///   lowest efficient state at or above it, energy = `cost × sum_util / scale_cpu`. Before
///   v6.8 the 1.25 headroom was applied here, first (`max_util = map_util_perf(max_util)`,
///   v6.6): [`compute_energy`] applies it before calling this when
///   [`FeecParams::perf_estimation`] is [`SchedutilVersion::V5`]; from v6.8 it comes with
///   `max_util` from [`eenv_pd_max_util`], so it is applied exactly once in every version
///   modelled.
pub fn em_cpu_energy(pd: &EmPerfDomain, max_util: u64, sum_util: u64, allowed_cpu_cap: u64) -> u64 {
    if sum_util == 0 || pd.table.is_empty() {
        return 0;
    }
    let max_util = max_util.min(allowed_cpu_cap);
    match pd.version {
        EmVersion::V6_9 => {
            let ps = &pd.table[pd.em_pd_get_efficient_state(max_util)];
            ps.cost.saturating_mul(sum_util)
        }
        EmVersion::V5 => {
            let fmax = pd.table.last().map_or(0, |s| s.frequency);
            let freq = map_util_freq(max_util, fmax, pd.scale_cpu);
            let ps = &pd.table[pd.em_pd_get_efficient_state_freq(freq)];
            ps.cost.saturating_mul(sum_util) / pd.scale_cpu.max(1)
        }
    }
}

/// `eenv_task_busy_time(eenv, p, prev_cpu)`: `task_util_est(p)` scaled for `prev_cpu`'s
/// IRQ pressure, or the whole capacity when IRQ saturates it.
pub fn eenv_task_busy_time(view: &impl EasView, p: &EasTask, prev_cpu: usize) -> u64 {
    let rq = view.rq(prev_cpu);
    let max_cap = rq.arch_capacity;
    if rq.util_irq >= max_cap {
        max_cap
    } else {
        scale_irq_capacity(p.util_est, rq.util_irq, max_cap)
    }
}

/// `eenv_pd_busy_time(eenv, pd_cpus, p)`: `Σ effective_cpu_util(cpu_util(cpu, p, −1))` over
/// the domain, without the task, at most `pd_cap`.
pub fn eenv_pd_busy_time(view: &impl EasView, cpus: &CpuSet, p: &EasTask, pd_cap: u64) -> u64 {
    let used = view.uclamp_is_used();
    let busy: u64 = cpus
        .iter()
        .map(|c| {
            effective_cpu_util(&view.rq(c), view.cpu_util(c, Some(p.id), None, false), used).util
        })
        .sum();
    busy.min(pd_cap)
}

/// One CPU's term of [`eenv_pd_max_util`]: the performance schedutil would request for
/// `cpu` if `p` ran on `dst`.
fn eenv_cpu_perf(
    view: &impl EasView,
    cpu: usize,
    p: &EasTask,
    dst: Option<usize>,
    params: FeecParams,
) -> u64 {
    cpu_perf(view, &view.rq(cpu), cpu, p, dst, params)
}

/// [`eenv_cpu_perf`] with `cpu`'s [`RqSignals`] already read. v6.8+: uclamp and headroom
/// by `sugov_effective_cpu_perf()`. Before v6.8 ([`FeecParams::perf_estimation`] =
/// [`SchedutilVersion::V5`]): `effective_cpu_util(cpu, util, FREQUENCY_UTIL, tsk)`
/// (kernel/sched/core.c, v6.6; `schedutil_cpu_util()` in v5.10's `compute_energy()`),
/// the utilisation clamped by `uclamp_rq_util_with(rq, util, tsk)` (`tsk` = p on `dst`
/// only), without headroom: [`compute_energy`] adds it as `em_cpu_energy()` did.
fn cpu_perf(
    view: &impl EasView,
    rq: &RqSignals,
    cpu: usize,
    p: &EasTask,
    dst: Option<usize>,
    params: FeecParams,
) -> u64 {
    let util = view.cpu_util(cpu, Some(p.id), dst, params.runnable_boost);
    cpu_perf_of(rq, util, view.uclamp_is_used(), cpu, p, dst, params)
}

/// [`cpu_perf`] with `cpu_util(cpu, p, dst, params.runnable_boost)` (`util`) already read.
#[inline(always)]
fn cpu_perf_of(
    rq: &RqSignals,
    util: u64,
    used: bool,
    cpu: usize,
    p: &EasTask,
    dst: Option<usize>,
    params: FeecParams,
) -> u64 {
    if params.perf_estimation == SchedutilVersion::V5 {
        let tsk = (dst == Some(cpu)).then_some((p.uclamp_min, p.uclamp_max));
        return schedutil_cpu_util(rq, util, CpuUtilType::Frequency, tsk, used);
    }
    let e = effective_cpu_util(rq, util, used);
    let (mut min, mut max) = (e.min, e.max);
    if dst == Some(cpu) && used {
        min = min.max(p.uclamp_min);
        max = if rq.uclamp_idle {
            p.uclamp_max
        } else {
            max.max(p.uclamp_max)
        };
    }
    sugov_effective_cpu_perf(e.util, min, max)
}

/// `eenv_pd_max_util(eenv, pd_cpus, p, dst_cpu)` (v6.8+): the performance schedutil would
/// request for the busiest CPU of the domain if `p` ran on `dst` (uclamp of the rq and, on
/// `dst`, of the task, 1.25 headroom via `sugov_effective_cpu_perf()`), capped at
/// `eenv.cpu_cap`; before v6.8 ([`FeecParams::perf_estimation`]) the utilisation clamped
/// by `effective_cpu_util(cpu, util, FREQUENCY_UTIL, tsk)`, without headroom.
/// [`FeecParams::runnable_boost`] is the `boost` it passes to `cpu_util()`: 1 from v6.5
/// (`max(util_avg, runnable_avg)`, so CPUs where tasks wait raise the domain's state);
/// v5.x's `compute_energy()` takes the max of `cpu_util_next()`, the same utilisation
/// without it (kernel/sched/fair.c, v5.10).
pub fn eenv_pd_max_util(
    view: &impl EasView,
    eenv: &EnergyEnv,
    cpus: &CpuSet,
    p: &EasTask,
    dst: Option<usize>,
    params: FeecParams,
) -> u64 {
    let max_util = cpus
        .iter()
        .map(|cpu| eenv_cpu_perf(view, cpu, p, dst, params))
        .max()
        .unwrap_or(0);
    max_util.min(eenv.cpu_cap)
}

/// [`eenv_pd_max_util`] of one domain for any `dst_cpu`, from one pass over its CPUs:
/// a CPU other than `dst_cpu` brings the same term whatever `dst_cpu` is (`cpu_util()`
/// moves `p` only to or from `dst_cpu`), so the two largest terms without `p` and the
/// CPU of the largest, plus `dst_cpu`'s own term, give the maximum. What
/// `find_energy_efficient_cpu()`'s base, `prev_cpu` and candidate evaluations of a
/// domain read, each CPU once: [`find_energy_efficient_cpu`] takes the terms in its
/// candidate walk, which reads every CPU of the domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PdMaxUtil {
    top: u64,
    /// The first CPU with the largest term; `None` while every term is 0.
    top_cpu: Option<usize>,
    second: u64,
    /// The `params` of [`eenv_pd_max_util`].
    params: FeecParams,
}

impl PdMaxUtil {
    /// [`eenv_pd_busy_time`] and the terms of `cpus` without `p` (`dst_cpu = −1`) from one
    /// walk of the domain's CPUs, each CPU's signals read once: what
    /// `find_energy_efficient_cpu()` computes for a domain it evaluates (the engine's
    /// [`find_energy_efficient_cpu`] takes them in its candidate walk, and debug builds
    /// assert they equal this). `params` as for [`eenv_pd_max_util`] (the busy time never
    /// takes the boost).
    pub fn with_busy_time(
        view: &impl EasView,
        cpus: &CpuSet,
        p: &EasTask,
        pd_cap: u64,
        params: FeecParams,
    ) -> (u64, PdMaxUtil) {
        let used = view.uclamp_is_used();
        let mut m = PdMaxUtil::new(params);
        let mut busy = 0;
        for cpu in cpus.iter() {
            let rq = view.rq(cpu);
            busy += effective_cpu_util(&rq, view.cpu_util(cpu, Some(p.id), None, false), used).util;
            m.add(cpu, cpu_perf(view, &rq, cpu, p, None, params));
        }
        (busy.min(pd_cap), m)
    }

    /// No CPU yet.
    fn new(params: FeecParams) -> PdMaxUtil {
        PdMaxUtil {
            top: 0,
            top_cpu: None,
            second: 0,
            params,
        }
    }

    /// Takes `cpu`'s term (the CPUs ascending: the first of equal terms stays on top).
    /// While every term is 0, `top_cpu` stays `None`: `top` and `second` are then both 0,
    /// so [`PdMaxUtil::get`] reads 0 for the other CPUs whichever CPU has the top.
    #[inline(always)]
    fn add(&mut self, cpu: usize, perf: u64) {
        if perf > self.top {
            self.second = self.top;
            self.top = perf;
            self.top_cpu = Some(cpu);
        } else {
            self.second = self.second.max(perf);
        }
    }

    /// `eenv_pd_max_util(eenv, pd_cpus, p, dst)` for a `dst` among the CPUs given to
    /// [`PdMaxUtil::with_busy_time`] (or `None`).
    pub fn get(
        &self,
        view: &impl EasView,
        eenv: &EnergyEnv,
        p: &EasTask,
        dst: Option<usize>,
    ) -> u64 {
        // no top CPU only while every term is 0 (see [`PdMaxUtil::add`])
        debug_assert!(self.top_cpu.is_some() || (self.top, self.second) == (0, 0));
        let max_util = match dst {
            None => self.top,
            Some(d) => {
                let others = if self.top_cpu == Some(d) {
                    self.second
                } else {
                    self.top
                };
                others.max(eenv_cpu_perf(view, d, p, dst, self.params))
            }
        };
        max_util.min(eenv.cpu_cap)
    }
}

/// `compute_energy(eenv, pd, pd_cpus, p, dst_cpu)`: energy of the domain with `p` on `dst`
/// (`None`: without `p`, the "base" energy); `max_util` is the domain's
/// [`PdMaxUtil`]. Before v6.8 ([`SchedutilVersion::V5`]) `em_cpu_energy()` began with
/// `max_util = map_util_perf(max_util)`, the 1.25 headroom, before its
/// `min(max_util, allowed_cpu_cap)` (include/linux/energy_model.h, v6.6; v5.10's
/// `map_util_freq()` put the same factor on the frequency).
pub fn compute_energy(
    view: &impl EasView,
    eenv: &EnergyEnv,
    pd: &EmPerfDomain,
    max_util: &PdMaxUtil,
    p: &EasTask,
    dst: Option<usize>,
) -> u64 {
    let headroom = max_util.params.perf_estimation == SchedutilVersion::V5;
    let mut max_util = max_util.get(view, eenv, p, dst);
    if headroom {
        max_util = map_util_perf(max_util);
    }
    let mut busy = eenv.pd_busy_time;
    if dst.is_some() {
        busy = eenv.pd_cap.min(busy + eenv.task_busy_time);
    }
    em_cpu_energy(pd, max_util, busy, eenv.cpu_cap)
}

/// The root domain's `rd->pd` list in the order `build_perf_domains()` (kernel/sched/
/// topology.c, v6.11) links it: the CPUs are walked in ascending order and each new
/// domain is pushed at the head (`tmp->next = pd; pd = tmp;`), so the list runs from the
/// domain with the highest first CPU down. `find_energy_efficient_cpu()` walks it in this
/// order, which decides its ties (the first domain evaluated keeps an equal energy delta).
/// Returns indices into `em.pds` (the domains with an EM), built once per root domain, as
/// the kernel builds its list; [`find_energy_efficient_cpu`] walks it.
pub fn rd_pd_order(em: &EnergyModel) -> Vec<usize> {
    let mut pds: Vec<usize> = (0..em.pds.len()).filter(|&i| em.pds[i].is_some()).collect();
    pds.sort_by_key(|&i| {
        let cpus = em.pds[i].as_ref().map(|pd| &pd.cpus);
        std::cmp::Reverse(cpus.and_then(|c| c.iter().min().copied()))
    });
    pds
}

/// `find_energy_efficient_cpu(p, prev_cpu)` (kernel/sched/fair.c, v6.9–v6.11, spec §3.4).
///
/// `sd_span` is the span of `this_cpu`'s `sd_asym_cpucapacity` domain, walked up until it
/// spans `prev_cpu` (`None` when there is none: the kernel returns −1). Per performance
/// domain only the CPU with the most spare capacity and `prev_cpu` are evaluated; a CPU
/// is a candidate if `util_fits_cpu()` is not 0, with its rq clamps max-aggregated with
/// p's (`util_min = max(rq_util_min, p_util_min)`, the same for max) when the rq is not
/// uclamp-idle; a uclamp-idle CPU keeps the values of the domain's last non-idle CPU
/// before it (p's own if none: the variables are per domain). The winner
/// must fit better, or fit as well with less energy, than `prev_cpu`. The domains are
/// walked in `rd->pd` order (`rd_pd`, from [`rd_pd_order`]); within a domain the CPUs
/// ascend and the first CPU with the most spare capacity is the candidate.
///
/// Returns `None` for the kernel's −1 (no EM / no asym domain), else the target CPU.
/// Simplifications: the energy-margin option applies the v5.x 1/16 rule to the v6.x
/// candidate selection; the `CPU utilization has changed` bail-outs return `prev_cpu`.
pub fn find_energy_efficient_cpu(
    view: &impl EasView,
    em: &EnergyModel,
    rd_pd: &[usize],
    p: &EasTask,
    prev_cpu: usize,
    sd_span: Option<&CpuSet>,
    params: FeecParams,
) -> Option<usize> {
    if em.pds.iter().all(Option::is_none) {
        return None;
    }
    let sd = sd_span?;
    let target = prev_cpu;
    let used = view.uclamp_is_used();
    let (p_util_min, p_util_max) = if used {
        (p.uclamp_min, p.uclamp_max)
    } else {
        (0, crate::platform::SCHED_CAPACITY_SCALE)
    };
    if p.util_est == 0 && p_util_min == 0 {
        return Some(target);
    }
    let mut eenv = EnergyEnv {
        task_busy_time: eenv_task_busy_time(view, p, prev_cpu),
        ..EnergyEnv::default()
    };
    let mut prev_delta = u64::MAX;
    let mut best_delta = u64::MAX;
    let mut best_fits: i32 = -1;
    let mut prev_fits: i32 = -1;
    let mut best_actual_cap = 0;
    let mut prev_actual_cap = 0;
    let mut best_cpu: Option<usize> = None;
    let mut base_sum: u64 = 0;
    // for_each_cpu_and(cpu, cpus, sched_domain_span(sd)) skipping CPUs not in
    // p->cpus_ptr: a CPU of the domain's online set is a candidate when it is in `sd ∩
    // p->cpus_ptr`, the same for every domain, so intersected once
    let sd_allowed = sd.and(&p.allowed);

    for (i, pd) in rd_pd
        .iter()
        .filter_map(|&i| em.pds[i].as_ref().map(|pd| (i, pd)))
    {
        // cpumask_and(cpus, perf_domain_span(pd), cpu_online_mask): walked ascending.
        let (cpus, weight) = view.pd_online_cpus(i, pd);
        let Some(first) = cpus.first() else {
            continue;
        };
        let cpu_actual_cap = view.actual_cpu_capacity(first);
        eenv.cpu_cap = cpu_actual_cap;
        eenv.pd_cap = cpu_actual_cap * weight;
        let mut prev_spare: i64 = -1;
        let mut max_spare: i64 = -1;
        let mut max_spare_cpu: Option<usize> = None;
        let mut max_fits: i32 = -1;
        // Declared once per domain; reassigned for each non-uclamp-idle CPU only, so a
        // uclamp-idle CPU keeps the last non-idle CPU's values (p's before any).
        let (mut util_min, mut util_max) = (p_util_min, p_util_max);
        // One walk of the domain's CPUs, each CPU read once ([`EasView::feec_cpu`]; the
        // engine keeps the terms without p of the CPUs that did not change), serves the
        // candidate loop (the CPUs in `sd ∩ p->cpus_ptr`, in the same order) and, computed
        // before they are needed, eenv_pd_busy_time() and the eenv_pd_max_util() terms
        // ([`PdMaxUtil`]), which read the same CPUs without p: pure functions of state
        // that nothing in this call changes, used only when the domain is evaluated.
        let mut max_util = PdMaxUtil::new(params);
        let mut busy: u64 = 0;
        let mut visit = |cpu: usize| {
            let t = view.feec_cpu(cpu, p, params);
            busy += t.busy;
            max_util.add(cpu, t.perf);
            // the candidates: `cpus ∩ sd ∩ p->cpus_ptr`, ascending
            if !sd_allowed.contains(cpu) {
                return;
            }
            let util = t.on_dst;
            let cap = t.caps.capacity_of;
            if used {
                let rq = view.rq(cpu);
                if !rq.uclamp_idle {
                    // util_min = max(rq_util_min, p_util_min): this CPU's own rq clamps,
                    // not a running maximum over the domain.
                    util_min = rq.uclamp_min.max(p_util_min);
                    util_max = rq.uclamp_max.max(p_util_max);
                }
            }
            let fits = util_fits_cpu(
                util,
                util_min,
                util_max,
                cap,
                t.caps.arch,
                t.caps.actual,
                used,
            );
            if fits == 0 {
                return;
            }
            let spare = cap.saturating_sub(util) as i64;
            if cpu == prev_cpu {
                prev_spare = spare;
                prev_fits = fits;
            } else if fits > max_fits || (fits == max_fits && spare > max_spare) {
                max_spare = spare;
                max_spare_cpu = Some(cpu);
                max_fits = fits;
            }
        };
        // the domain's online CPUs ascending: the view's list, or the set's walk
        match view.pd_online_list(i) {
            Some(list) => {
                debug_assert!(list.iter().copied().eq(cpus.iter()));
                list.iter().for_each(|&cpu| visit(cpu));
            }
            None => cpus.iter().for_each(visit),
        }
        if max_spare_cpu.is_none() && prev_spare < 0 {
            continue;
        }
        let busy = busy.min(eenv.pd_cap);
        debug_assert_eq!(
            (busy, max_util),
            PdMaxUtil::with_busy_time(view, &cpus, p, eenv.pd_cap, params)
        );
        eenv.pd_busy_time = busy;
        let base = compute_energy(view, &eenv, pd, &max_util, p, None);
        base_sum = base_sum.saturating_add(base);
        if prev_spare > -1 {
            let e = compute_energy(view, &eenv, pd, &max_util, p, Some(prev_cpu));
            if e < base {
                return Some(target);
            }
            prev_delta = e - base;
            prev_actual_cap = cpu_actual_cap;
            best_delta = best_delta.min(prev_delta);
        }
        if let Some(cand) = max_spare_cpu {
            if max_spare > prev_spare {
                if max_fits < best_fits {
                    continue;
                }
                if max_fits < 0 && cpu_actual_cap <= best_actual_cap {
                    continue;
                }
                let e = compute_energy(view, &eenv, pd, &max_util, p, Some(cand));
                if e < base {
                    return Some(target);
                }
                let cur_delta = e - base;
                if max_fits > 0 && best_fits > 0 && cur_delta >= best_delta {
                    continue;
                }
                best_delta = cur_delta;
                best_cpu = Some(cand);
                best_fits = max_fits;
                best_actual_cap = cpu_actual_cap;
            }
        }
    }

    if params.energy_margin {
        let best = best_cpu.unwrap_or(target);
        if prev_delta == u64::MAX {
            return Some(best);
        }
        let margin = prev_delta.saturating_add(base_sum) >> 4;
        return Some(if prev_delta.saturating_sub(best_delta) > margin {
            best
        } else {
            target
        });
    }
    let take_best = best_fits > prev_fits
        || (best_fits > 0 && best_delta < prev_delta)
        || (best_fits < 0 && best_actual_cap > prev_actual_cap);
    match best_cpu {
        Some(b) if take_best => Some(b),
        _ => Some(target),
    }
}

/// The conditions `build_perf_domains()` checks before enabling EAS on a root domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EasConditions {
    /// `sysctl_sched_energy_aware` (1 by default).
    pub sysctl_sched_energy_aware: bool,
    /// Every policy is governed by schedutil.
    pub schedutil: bool,
    /// The current governor's name, for the error message.
    pub governor: &'static str,
    /// `arch_scale_freq_invariant()` (`pelt.frequency_invariance`).
    pub frequency_invariant: bool,
    /// `sched_smt_active()` (no SMT modelled: false).
    pub smt: bool,
    /// Apply the `EM_MAX_COMPLEXITY` bound of older kernels.
    pub em_max_complexity: bool,
}

/// Why EAS cannot run on a platform/settings combination (the kernel's
/// `pr_info("rd %*pbl: Checking EAS, ...")` / `Disabling EAS` reasons).
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum EasUnavailable {
    /// `sysctl_sched_energy_aware = 0`.
    #[error("EAS is disabled (sysctl_sched_energy_aware = 0, eas.mode = off)")]
    Disabled,
    /// No `SD_ASYM_CPUCAPACITY` domain.
    #[error("EAS needs CPUs of different capacities (SD_ASYM_CPUCAPACITY): every CPU of {platform} has capacity {capacity}")]
    NotAsymmetric {
        /// Platform name.
        platform: String,
        /// The one capacity.
        capacity: u64,
    },
    /// SMT active.
    #[error("EAS is not supported with SMT")]
    Smt,
    /// No frequency invariance.
    #[error("EAS needs frequency-invariant load tracking: set pelt.frequency_invariance = true")]
    NotFrequencyInvariant,
    /// A policy is not governed by schedutil.
    #[error("EAS needs the schedutil governor on every cpufreq policy: set cpufreq.governor = schedutil (it is {governor})")]
    NotSchedutil {
        /// Current governor.
        governor: &'static str,
    },
    /// A CPU has no EM.
    #[error("EAS needs an energy model for every CPU: {0}")]
    NoEnergyModel(super::em::EmError),
    /// `nr_pd × (nr_cpus + nr_ps) > EM_MAX_COMPLEXITY` (older kernels).
    #[error("EM complexity {complexity} = {nr_pd} perf domains × ({nr_cpus} CPUs + {nr_ps} perf states) exceeds EM_MAX_COMPLEXITY ({EM_MAX_COMPLEXITY}); set eas.em_max_complexity = false (the bound was removed in later kernels)")]
    TooComplex {
        /// Product.
        complexity: u64,
        /// Domains.
        nr_pd: u64,
        /// CPUs.
        nr_cpus: u64,
        /// Perf states over all domains.
        nr_ps: u64,
    },
}

/// `sched_is_eas_possible()` + `build_perf_domains()` (kernel/sched/topology.c, ≈v6.10):
/// `Ok` when the kernel would enable EAS (`sched_energy_enabled()` true), else the first
/// failing condition in the kernel's order.
pub fn sched_energy_possible(
    platform: &Platform,
    em: &EnergyModel,
    cond: &EasConditions,
) -> Result<(), EasUnavailable> {
    if !cond.sysctl_sched_energy_aware {
        return Err(EasUnavailable::Disabled);
    }
    if !platform.is_asymmetric() {
        return Err(EasUnavailable::NotAsymmetric {
            platform: platform.name.clone(),
            capacity: platform.max_capacity(),
        });
    }
    if cond.smt {
        return Err(EasUnavailable::Smt);
    }
    if !cond.frequency_invariant {
        return Err(EasUnavailable::NotFrequencyInvariant);
    }
    if !cond.schedutil {
        return Err(EasUnavailable::NotSchedutil {
            governor: cond.governor,
        });
    }
    if let Some(e) = em.missing.first() {
        return Err(EasUnavailable::NoEnergyModel(e.clone()));
    }
    if cond.em_max_complexity {
        let nr_pd = em.pds.iter().flatten().count() as u64;
        let nr_ps: u64 = em
            .pds
            .iter()
            .flatten()
            .map(|pd| pd.table.len() as u64)
            .sum();
        let nr_cpus = platform.nr_cpus() as u64;
        let complexity = nr_pd * (nr_ps + nr_cpus);
        if complexity > EM_MAX_COMPLEXITY {
            return Err(EasUnavailable::TooComplex {
                complexity,
                nr_pd,
                nr_cpus,
                nr_ps,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
