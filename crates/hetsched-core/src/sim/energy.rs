//! Energy-aware scheduling wired to the engine: the per-run state
//! (`EnergyState`), the kernel's hook points that drive it, and the results it adds to
//! [`super::RunResult`] ([`OverutilizedStats`], [`EnergyResult`]).
//!
//! Call sites in the engine, with the kernel functions they model (v6.11 unless noted):
//!
//! | Kernel site | Engine call |
//! |---|---|
//! | `cfs_rq_util_change()` from `update_load_avg()` (decay, attach, detach: enqueue, dequeue, tick, put_prev, pick) | `Sim::update_load_avg` → `Sim::cpufreq_update_util` |
//! | `update_blocked_averages()` → `cpufreq_update_util(rq, 0)` when something decayed | `Sim::update_blocked_averages` → `Sim::cpufreq_update_util` |
//! | `enqueue_top_rt_rq()` (RT enqueue and dequeue, not while throttled; the unthrottle), `add/sub_running_bw()` (DL: enqueue and dequeue with ENQUEUE_RESTORE/DEQUEUE_SAVE or a queued migration, a wake-up after the 0-lag time, a block after it or the inactive timer at it, a wake-up's migration of a non-contending task) | `Sim::enqueue_task` / `Sim::dequeue_task` for RT, `Sim::sched_rt_period_timer`, `add_running_bw`/`sub_running_bw` in sim/class/deadline.rs → `Sim::cpufreq_update_util` |
//! | `cpufreq_driver_fast_switch()` / `sugov_work()` → `__cpufreq_driver_target()` | `Sim::apply_freq` (sim/cpufreq.rs: now, or at `Ev::FreqApply` one transition latency later) |
//! | `uclamp_rq_inc()` / `uclamp_rq_dec()` in `enqueue_task()` / `dequeue_task()` (core.c) | `Sim::uclamp_inc` / `Sim::uclamp_dec` |
//! | `check_update_overutilized_status()` at the end of `enqueue_task_fair()` for a wake-up only (`task_new = !(flags & ENQUEUE_WAKEUP)`) and in `task_tick_fair()` | `Sim::check_update_overutilized_status` |
//! | `update_sd_lb_stats()` → `set_rd_overutilized()` | `sim/balance/mod.rs` `apply_lb` → `Sim::set_rd_overutilized` |
//! | `select_task_rq_fair()`: `sched_energy_enabled() && !is_rd_overutilized()` → `find_energy_efficient_cpu()` | `Sim::eas_wakeup_gate`, `Sim::find_energy_efficient_cpu` |
//!
//! Simplifications, each also noted where it applies: every `cpufreq_update_util()` is
//! treated as local (the kernel ignores some remote updates,
//! `cpufreq_this_cpu_can_update()`); a frequency change brings the PELT clock and the work
//! of every CPU of the policy up to date at the old speed before the new one applies (the
//! kernel scales the whole next clock delta by the frequency read at that update, an error
//! bounded by one tick); no IRQ time; no task ever sleeps in I/O, so the
//! iowait boost is never requested (`SCHED_CPUFREQ_IOWAIT` is never passed).

use super::{g_overutilized, Class, Out, Rq, Sim};
use crate::cpufreq::RqSignals;
use crate::energy::accounting::{EnergyMeter, EnergyUnit};
use crate::energy::eas::{self, EasTask, EasView, FeecParams};
use crate::energy::em::EnergyModel;
use crate::energy::overutilized::{
    cpu_overutilized, OuCpu, OverutilizedGate, RootDomainOverutilized,
};
use crate::options::Settings;
use crate::pelt;
use crate::platform::Platform;
use crate::sched::capacity::{
    uclamp_eff, CpuCapacity, UclampId, UclampReq, UclampRq, UclampSysctl,
};
use crate::sched::topology::SchedDomains;
use crate::sched::CpuSet;
use crate::time::{Nanos, NSEC_PER_SEC};
use crate::trace::TraceEvent;
use crate::workload::Workload;
use serde::{Deserialize, Serialize};
use std::cell::Cell;

/// Bucket of the energy-over-time series: 100 ms, widened so that a run has at most
/// [`MAX_SERIES`] buckets.
pub const SERIES_BUCKET_NS: Nanos = 100_000_000;
/// Most buckets in the energy-over-time series.
pub const MAX_SERIES: u64 = 1000;

/// The engine's EAS and uclamp state for one run.
pub(in crate::sim) struct EnergyState {
    /// The Energy Model (built for every run; EAS and reported energy use it).
    pub em: EnergyModel,
    /// The root domain's `rd->pd` list, as indices into `em.pds` ([`eas::rd_pd_order`]).
    pub rd_pd: Vec<usize>,
    /// `sched_energy_enabled()`.
    pub eas: bool,
    /// `eas.overutilized_gate`.
    pub gate: OverutilizedGate,
    /// `find_energy_efficient_cpu()` options.
    pub feec: FeecParams,
    /// `rd->overutilized` with its time and trigger accounting.
    pub ou: RootDomainOverutilized,
    /// `sched_uclamp_used`: some task of the workload sets `util_min` or `util_max`.
    pub uclamp_used: bool,
    /// `rq->uclamp[]` per CPU.
    pub uclamp: Vec<UclampRq>,
    /// `tick_nohz_get_idle_calls_cpu()` per CPU: times the CPU entered idle.
    pub idle_calls: Vec<u64>,
    /// The root domain's span, as 64-bit words (`sched_overutilized` `span=`).
    pub span: Vec<u64>,
    /// Per CPU: the span of `find_energy_efficient_cpu()`'s domain for that `prev_cpu`
    /// ([`Sim::feec_domain_span`]), derived once from the domains, whose spans and
    /// `sd_asym_cpucapacity` levels do not change after they are built.
    pub feec_span: Vec<Option<CpuSet>>,
    /// Some perf domain exists (`rd->pd` is not empty), from the EM, which does not change.
    pub has_pd: bool,
    /// Per domain of the EM (`em.pds`): its CPUs and their number, as
    /// `find_energy_efficient_cpu()`'s `cpumask_and(cpus, perf_domain_span(pd),
    /// cpu_online_mask)` and `cpumask_weight(cpus)` find them ([`eas::pd_online_cpus`]):
    /// every CPU stays online and the EM does not change, so they are built once.
    pub pd_online: Vec<(CpuSet, u64)>,
    /// Per domain of the EM: the CPUs of its [`EnergyState::pd_online`] set, ascending,
    /// which `find_energy_efficient_cpu()` walks ([`eas::EasView::pd_online_list`]).
    pub pd_online_list: Vec<Vec<usize>>,
    /// Energy-over-time bucket (ns).
    pub bucket_ns: Nanos,
    /// Per CPU: the two terms `find_energy_efficient_cpu()` reads of it when it is not the
    /// waking task's CPU ([`eas::FeecCpu::busy`], [`eas::FeecCpu::perf`]: its own
    /// utilisation then, whatever the task), with the CPU's generation
    /// (`LbScratch::gen_of()`, moved by every writer of what they read:
    /// [`Sim::rq_util_changed`], `update_cpu_capacity()`) they were computed at; `u64::MAX`:
    /// none. Read again only when that generation moved ([`View::feec_cpu`]); debug
    /// builds recompute every kept pair and assert it is the same.
    pub feec_kept: Vec<Cell<(u64, u64, u64)>>,
}

/// Whether a workload sets any clamp (the kernel enables `sched_uclamp_used` at the first
/// `sched_setattr()` with `SCHED_FLAG_UTIL_CLAMP`; here from the start of the run).
fn workload_uses_uclamp(w: &Workload) -> bool {
    w.tasks.iter().any(|t| {
        t.attrs.util_min.is_some()
            || t.attrs.util_max.is_some()
            || t.phases
                .iter()
                .any(|ph| ph.attrs.util_min.is_some() || ph.attrs.util_max.is_some())
    })
}

/// An rt-app clamp value: `-1` resets to the default (`None`), others are capped at 1024.
fn clamp_value(v: Option<i32>) -> Option<u64> {
    v.and_then(|x| u64::try_from(x).ok())
}

/// The effective clamps `[UCLAMP_MIN, UCLAMP_MAX]` of a task of class `rt` with the
/// user's requests (`uclamp_eff_value()` with the default sysctls but
/// `sysctl_sched_util_clamp_min_rt_default` = `rt_default`).
pub(in crate::sim) fn task_uclamp(
    rt: bool,
    min: Option<i32>,
    max: Option<i32>,
    rt_default: u64,
) -> [u64; 2] {
    let sysctl = UclampSysctl {
        util_min_rt_default: rt_default,
        ..UclampSysctl::default()
    };
    uclamp_eff(
        &UclampReq::for_task(rt, clamp_value(min), clamp_value(max), &sysctl),
        &sysctl,
    )
}

impl EnergyState {
    /// Builds the state: the EM and the root domain (not overutilised at boot).
    pub(in crate::sim) fn new(
        p: &Platform,
        w: &Workload,
        s: &Settings,
        doms: &SchedDomains,
        t0: Nanos,
        end: Nanos,
    ) -> EnergyState {
        let o = &s.options;
        let em = EnergyModel::build(p, o.eas.em_version);
        let n = p.nr_cpus();
        let span = CpuSet::first_n(n).words(n).to_vec();
        let dur = end.saturating_sub(t0);
        let per = SERIES_BUCKET_NS * MAX_SERIES;
        let bucket_ns = SERIES_BUCKET_NS * dur.div_ceil(per).max(1);
        EnergyState {
            rd_pd: eas::rd_pd_order(&em),
            eas: s.eas_enabled,
            gate: o.eas.overutilized_gate,
            feec: FeecParams {
                energy_margin: o.eas.feec_energy_margin,
                runnable_boost: o.eas.runnable_boost,
                perf_estimation: o.cpufreq.schedutil_version,
            },
            ou: RootDomainOverutilized::new(s.eas_enabled, t0),
            // writing a uclamp sysctl enables the key too (sysctl_sched_uclamp_handler())
            uclamp_used: workload_uses_uclamp(w)
                || o.rt.util_clamp_min_rt_default != crate::platform::SCHED_CAPACITY_SCALE,
            uclamp: vec![UclampRq::new(); n],
            idle_calls: vec![0; n],
            span,
            feec_span: (0..doms.cpus.len())
                .map(|cpu| feec_domain_span_of(doms, cpu))
                .collect(),
            has_pd: em.pds.iter().any(Option::is_some),
            pd_online: em
                .pds
                .iter()
                .map(|pd| {
                    pd.as_ref().map_or((CpuSet::EMPTY, 0), |pd| {
                        let cpus = CpuSet::from_cpus(&pd.cpus);
                        (cpus, cpus.weight() as u64)
                    })
                })
                .collect(),
            pd_online_list: em
                .pds
                .iter()
                .map(|pd| {
                    pd.as_ref().map_or(Vec::new(), |pd| {
                        CpuSet::from_cpus(&pd.cpus).iter().collect()
                    })
                })
                .collect(),
            em,
            bucket_ns,
            feec_kept: vec![Cell::new((u64::MAX, 0, 0)); n],
        }
    }

    /// The energy meter the metrics sink feeds (series from `t0`).
    pub(in crate::sim) fn meter(&self, p: &Platform, t0: Nanos) -> EnergyMeter {
        EnergyMeter::new(p, &self.em, t0, self.bucket_ns)
    }
}

/// The span of `find_energy_efficient_cpu()`'s domain for `prev_cpu` (kernel/sched/fair.c,
/// v6.11: `sd = sd_asym_cpucapacity; while (sd && !cpumask_test_cpu(prev_cpu,
/// sched_domain_span(sd))) sd = sd->parent;`), with `prev_cpu`'s own domains.
fn feec_domain_span_of(doms: &SchedDomains, prev_cpu: usize) -> Option<CpuSet> {
    let level = doms.sd_asym_cpucapacity[prev_cpu]?;
    doms.domains(prev_cpu)[level..]
        .iter()
        .find(|sd| sd.span.contains(prev_cpu))
        .map(|sd| sd.span)
}

/// `cpu_util_cfs(cpu)` of an rq: `max(util_avg, util_est)` capped at the CPU's capacity.
pub(in crate::sim) fn cpu_util_cfs(rq: &Rq, util_est: bool) -> u64 {
    let a = &rq.cfs.avg;
    let mut u = a.util_avg;
    if util_est {
        u = u.max(pelt::cfs_rq_util_est(a));
    }
    u.min(rq.cap)
}

/// `cpu_util_cfs_boost(cpu)`: [`cpu_util_cfs`] (`util_cfs`) with the runnable boost.
pub(in crate::sim) fn cpu_util_cfs_boost_of(rq: &Rq, util_cfs: u64) -> u64 {
    util_cfs.max(rq.cfs.avg.runnable_avg.min(rq.cap))
}

/// `cpu_bw_dl(rq)` (kernel/sched/sched.h, v6.11): the rq's active deadline bandwidth
/// (GRUB's `running_bw`, sim/class/deadline.rs) in capacity units,
/// `(running_bw × SCHED_CAPACITY_SCALE) >> BW_SHIFT`.
pub(in crate::sim) fn cpu_bw_dl(rq: &Rq) -> u64 {
    (rq.dl.running_bw * crate::platform::SCHED_CAPACITY_SCALE) >> crate::sched::rt::BW_SHIFT
}

/// What `effective_cpu_util()` reads of an rq besides CFS: RT and DL utilisation, the DL
/// bandwidth, RT runnable, and the rq clamps. Simplified: no IRQ time.
pub(in crate::sim) fn rq_signals(rq: &Rq, uc: &UclampRq) -> RqSignals {
    RqSignals {
        arch_capacity: rq.cap,
        util_rt: rq.avg_rt.util_avg,
        util_dl: rq.avg_dl.util_avg,
        bw_dl: cpu_bw_dl(rq),
        util_irq: 0,
        // rt_rq_is_runnable(): rt_queued, which a throttle clears (sched_rt_rq_dequeue())
        rt_runnable: rq.rt.nr_running() > 0 && !rq.rt_throttled,
        uclamp_min: uc.get(UclampId::Min),
        uclamp_max: uc.get(UclampId::Max),
        uclamp_idle: uc.is_idle(),
    }
}

/// What `cpu_overutilized()` reads of an rq.
pub(in crate::sim) fn ou_cpu(rq: &Rq, uc: &UclampRq, util_est: bool) -> OuCpu {
    ou_cpu_of(rq, uc, cpu_util_cfs(rq, util_est), &super::rq_capacity(rq))
}

/// [`ou_cpu`] for a reader that has `cpu_util_cfs()` and the capacities of `rq` already.
pub(in crate::sim) fn ou_cpu_of(rq: &Rq, uc: &UclampRq, util_cfs: u64, cap: &CpuCapacity) -> OuCpu {
    OuCpu {
        util_cfs,
        capacity_of: cap.capacity,
        arch_capacity: cap.orig,
        actual_capacity: cap.actual(),
        uclamp_min: uc.get(UclampId::Min),
        uclamp_max: uc.get(UclampId::Max),
        nr_running: rq.cfs.nr_running + (rq.rt.nr_running() + rq.dl.nr_running()) as u32,
    }
}

/// Over-utilisation of a run (spec §4; experiments.md §4 metrics).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OverutilizedStats {
    /// Time the root domain was overutilised, s. 0 when EAS is off: the kernel never
    /// writes `rd->overutilized` then (it reads as overutilised, `is_rd_overutilized()`).
    pub time_s: f64,
    /// `time_s` as a percentage of the run.
    pub pct: f64,
    /// 0→1 transitions of the flag ("OU triggers").
    pub triggers: u64,
}

/// Energy of one CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuEnergy {
    /// CPU.
    pub cpu: usize,
    /// Its performance domain.
    pub pd: usize,
    /// Busy time × EM power of the OPP.
    pub active: f64,
    /// Idle-state residency × idle-state power.
    pub idle: f64,
    /// `active + idle`.
    pub total: f64,
}

/// Energy of one performance domain (the sum over its CPUs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PdEnergy {
    /// Performance domain index.
    pub pd: usize,
    /// Its CPUs.
    pub cpus: Vec<usize>,
    /// Σ active.
    pub active: f64,
    /// Σ idle.
    pub idle: f64,
    /// `active + idle`.
    pub total: f64,
}

/// One bucket of the energy-over-time series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnergyPoint {
    /// Bucket start, s from the start of the run.
    pub t_s: f64,
    /// Energy in the bucket per performance domain.
    pub pd: Vec<f64>,
    /// Σ over domains.
    pub total: f64,
}

/// Energy of a run, from the EM (active) and idle-state powers: reporting, as LISA's
/// `estimate_from_trace()` does; the scheduler's EM ignores idle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnergyResult {
    /// `"J"`, or `"abstract (assumed model)"` when some power is assumed.
    pub units: String,
    /// Some performance domain's power is assumed (not published).
    pub assumed: bool,
    /// Every idle state the CPUs were in has a published power; when false, that idle time
    /// counts 0 (the engine's idle is WFI, whose power presets do not give).
    pub idle_power_known: bool,
    /// Performance domains without an EM (their active energy is 0).
    pub pds_without_em: Vec<usize>,
    /// Per CPU.
    pub cpus: Vec<CpuEnergy>,
    /// Per performance domain.
    pub pds: Vec<PdEnergy>,
    /// Σ active.
    pub active: f64,
    /// Σ idle.
    pub idle: f64,
    /// `active + idle`.
    pub total: f64,
    /// Bucket of [`EnergyResult::series`], s.
    pub bucket_s: f64,
    /// Energy over time (at most 1000 buckets).
    pub series: Vec<EnergyPoint>,
}

impl EnergyResult {
    /// The report of a meter fed by the metrics sink, for `platform`; `t0` is the start.
    pub(in crate::sim) fn from_meter(
        m: &EnergyMeter,
        p: &Platform,
        t0: Nanos,
        bucket_ns: Nanos,
    ) -> Self {
        let r = m.report();
        let cpus = p
            .cpus
            .iter()
            .enumerate()
            .map(|(i, c)| CpuEnergy {
                cpu: i,
                pd: c.perf_domain,
                active: r.cpu_active[i],
                idle: r.cpu_idle[i],
                total: r.cpu_active[i] + r.cpu_idle[i],
            })
            .collect();
        let pds = p
            .perf_domains
            .iter()
            .enumerate()
            .map(|(i, pd)| PdEnergy {
                pd: i,
                cpus: pd.cpus.clone(),
                active: r.pd_active[i],
                idle: r.pd_idle[i],
                total: r.pd_active[i] + r.pd_idle[i],
            })
            .collect();
        let s = |ns: Nanos| ns as f64 / NSEC_PER_SEC as f64;
        EnergyResult {
            units: match r.unit {
                EnergyUnit::Joules => "J",
                EnergyUnit::AbstractUnits => "abstract (assumed model)",
            }
            .to_string(),
            assumed: r.assumed,
            idle_power_known: r.idle_power_known,
            pds_without_em: r.pds_without_em.clone(),
            cpus,
            pds,
            active: r.total_active,
            idle: r.total_idle,
            total: r.total,
            bucket_s: s(bucket_ns),
            series: m
                .series()
                .into_iter()
                .map(|x| EnergyPoint {
                    t_s: s(x.start_ns.saturating_sub(t0)),
                    pd: x.pd,
                    total: x.total,
                })
                .collect(),
        }
    }
}

/// The engine's runqueues as `find_energy_efficient_cpu()` reads them, with the waking
/// task's PELT synced to its previous rq (`sync_entity_load_avg()`).
struct View<'s, 'w> {
    sim: &'s Sim<'w>,
    /// The waking task.
    tid: usize,
    /// `task_cpu(p)`.
    task_cpu: usize,
    /// `task_util(p)` after the sync.
    task_util: u64,
    /// `_task_util_est(p)`.
    task_ue: u64,
    /// `task_on_rq_queued(p) || current == p`.
    queued: bool,
    /// The runqueues (`sim.rqs`).
    rqs: &'s [Rq],
    /// [`EnergyState::feec_kept`], of `rqs`' length: one test of a CPU against that
    /// length covers both look-ups.
    kept: &'s [Cell<(u64, u64, u64)>],
    /// `pelt.util_est`.
    util_est: bool,
}

impl View<'_, '_> {
    /// `cpu_util(cpu, p, cpu, 0)` of the waking task for a CPU other than its own, of
    /// that CPU's `rq`: p's `util_avg` joins the CPU's, its `util_est` the CPU's (as
    /// [`EasView::cpu_utils`]).
    #[inline(always)]
    fn on_dst(&self, rq: &super::Rq) -> u64 {
        let a = &rq.cfs.avg;
        let mut util = a.util_avg + self.task_util;
        if self.util_est {
            util = util.max(pelt::cfs_rq_util_est(a) + self.task_ue);
        }
        util.min(rq.cap)
    }
}

impl EasView for View<'_, '_> {
    /// `cpu_util(cpu, p, dst_cpu, boost)` (kernel/sched/fair.c, v6.8+; spec §1.8).
    fn cpu_util(&self, cpu: usize, p: Option<usize>, dst: Option<usize>, boost: bool) -> u64 {
        let rq = &self.rqs[cpu];
        let a = &rq.cfs.avg;
        let p = p.filter(|&t| t == self.tid);
        let mut util = a.util_avg;
        if boost {
            util = util.max(a.runnable_avg);
        }
        if p.is_some() {
            if self.task_cpu == cpu && dst != Some(cpu) {
                util = util.saturating_sub(self.task_util);
            } else if self.task_cpu != cpu && dst == Some(cpu) {
                util += self.task_util;
            }
        }
        if self.util_est {
            let mut ue = pelt::cfs_rq_util_est(a);
            if dst == Some(cpu) {
                ue += self.task_ue;
            } else if p.is_some() && self.queued {
                ue = ue.saturating_sub(self.task_ue);
            }
            util = util.max(ue);
        }
        util.min(rq.cap)
    }

    /// The three [`EasView::cpu_util`] values of `cpu` for the waking task from one read of
    /// the CPU's `cfs_rq` averages: the same terms as `cpu_util()`'s, each variant keeping
    /// the ones its `dst_cpu` and `boost` select.
    #[inline(always)]
    fn cpu_utils(&self, cpu: usize, p: usize, boost: bool) -> eas::CpuUtils {
        let rq = &self.rqs[cpu];
        let a = &rq.cfs.avg;
        let mine = p == self.tid;
        let util = a.util_avg;
        let boosted = if boost {
            util.max(a.runnable_avg)
        } else {
            util
        };
        // dst_cpu = -1: p's util_avg leaves its own CPU
        let (mut without, mut without_boost) = (util, boosted);
        if mine && self.task_cpu == cpu {
            without = without.saturating_sub(self.task_util);
            without_boost = without_boost.saturating_sub(self.task_util);
        }
        // dst_cpu = cpu: p's util_avg joins another CPU
        let mut on_dst = util;
        if mine && self.task_cpu != cpu {
            on_dst += self.task_util;
        }
        if self.util_est {
            let ue = pelt::cfs_rq_util_est(a);
            on_dst = on_dst.max(ue + self.task_ue);
            let ue = if mine && self.queued {
                ue.saturating_sub(self.task_ue)
            } else {
                ue
            };
            without = without.max(ue);
            without_boost = without_boost.max(ue);
        }
        let u = eas::CpuUtils {
            on_dst: on_dst.min(rq.cap),
            without: without.min(rq.cap),
            without_boost: without_boost.min(rq.cap),
        };
        debug_assert_eq!(
            u,
            eas::CpuUtils {
                on_dst: self.cpu_util(cpu, Some(p), Some(cpu), false),
                without: self.cpu_util(cpu, Some(p), None, false),
                without_boost: self.cpu_util(cpu, Some(p), None, boost),
            }
        );
        u
    }

    /// The terms without p of a CPU other than p's kept in [`EnergyState::feec_kept`]
    /// while the CPU's generation has not moved: they read only the CPU's own signals
    /// then (`cpu_util(cpu, p, -1, boost)` of a CPU p is not on, p not queued, is the
    /// CPU's utilisation); `cpu_util(cpu, p, cpu, 0)` is computed each time
    /// ([`View::on_dst`]), and the capacities ([`eas::FeecCaps`]) are read from the same
    /// look-up of the CPU's rq.
    #[inline(always)]
    fn feec_cpu(&self, cpu: usize, p: &EasTask, params: FeecParams) -> eas::FeecCpu {
        if p.id != self.tid || cpu == self.task_cpu || self.queued {
            return eas::feec_cpu_of(self, cpu, p, params);
        }
        debug_assert_eq!(params, self.sim.en.feec);
        // the rq first: `kept` has its length, so its look-up needs no second test
        let rq = &self.rqs[cpu];
        let slot = &self.kept[cpu];
        let gen = self.sim.lb_scratch.gen_of(cpu);
        let (kept, busy, perf) = slot.get();
        let t = if kept == gen {
            let c = super::rq_capacity(rq);
            eas::FeecCpu {
                busy,
                perf,
                on_dst: self.on_dst(rq),
                caps: eas::FeecCaps {
                    capacity_of: c.capacity,
                    arch: rq.cap,
                    actual: c.actual(),
                },
            }
        } else {
            let t = eas::feec_cpu_of(self, cpu, p, params);
            slot.set((gen, t.busy, t.perf));
            t
        };
        debug_assert_eq!(t, eas::feec_cpu_of(self, cpu, p, params));
        t
    }

    fn arch_capacity(&self, cpu: usize) -> u64 {
        self.rqs[cpu].cap
    }

    /// Kept per domain in [`EnergyState::pd_online`] (every CPU online).
    #[inline(always)]
    fn pd_online_cpus(&self, i: usize, pd: &crate::energy::em::EmPerfDomain) -> (CpuSet, u64) {
        let kept = self.sim.en.pd_online[i];
        debug_assert_eq!(kept, eas::pd_online_cpus(self, pd));
        kept
    }

    /// Kept per domain in [`EnergyState::pd_online_list`].
    #[inline(always)]
    fn pd_online_list(&self, i: usize) -> Option<&[usize]> {
        let list = &self.sim.en.pd_online_list[i];
        debug_assert!(list.iter().copied().eq(self.sim.en.pd_online[i].0.iter()));
        Some(list)
    }

    fn capacity_of(&self, cpu: usize) -> u64 {
        super::rq_capacity(&self.rqs[cpu]).capacity
    }

    fn actual_cpu_capacity(&self, cpu: usize) -> u64 {
        super::rq_capacity(&self.rqs[cpu]).actual()
    }

    fn rq(&self, cpu: usize) -> RqSignals {
        rq_signals(&self.rqs[cpu], &self.sim.en.uclamp[cpu])
    }

    fn uclamp_is_used(&self) -> bool {
        self.sim.en.uclamp_used
    }
}

impl Sim<'_> {
    // ------------------------------------------------------------------ EAS wake-up

    /// `sched_energy_enabled() && !is_rd_overutilized(rd)`: whether a wake-up tries
    /// `find_energy_efficient_cpu()` (`select_task_rq_fair()`, kernel/sched/fair.c v6.11).
    pub(in crate::sim) fn eas_wakeup_gate(&self) -> bool {
        self.en.eas && !self.en.ou.is_rd_overutilized()
    }

    /// The span of `find_energy_efficient_cpu()`'s domain: the lowest `sd_asym_cpucapacity`
    /// domain (of `prev_cpu`, see below) or parent spanning `prev_cpu`
    /// ([`feec_domain_span_of`], kept per CPU in [`EnergyState::feec_span`]).
    fn feec_domain_span(&self, prev_cpu: usize) -> Option<CpuSet> {
        let span = self.en.feec_span[prev_cpu];
        debug_assert_eq!(span, feec_domain_span_of(&self.doms, prev_cpu));
        span
    }

    /// Whether `find_energy_efficient_cpu(p, prev_cpu)` (kernel/sched/fair.c, v6.11) reaches
    /// `sync_entity_load_avg(&p->se)`, whatever it then returns: EAS on, a perf domain
    /// (`rd->pd`) and a domain for [`Self::find_energy_efficient_cpu`].
    pub(in crate::sim) fn feec_syncs_task(&self, prev_cpu: usize) -> bool {
        self.en.eas && self.en.has_pd && self.feec_domain_span(prev_cpu).is_some()
    }

    /// `find_energy_efficient_cpu(p, prev_cpu)` (kernel/sched/fair.c, v6.9–v6.11, spec
    /// §3.4) for fair thread `tid`: `None` is the kernel's −1 (no EM, no
    /// `sd_asym_cpucapacity` domain spanning `prev_cpu`), else the target CPU.
    ///
    /// `avg` is the task's PELT synced to `prev_cpu`'s cfs_rq on a copy
    /// (`sync_entity_load_avg()`, done once by the caller for the whole placement, which
    /// keeps the engine's own average synced when this ran, see
    /// [`Self::feec_syncs_task`]). Simplification: the
    /// `sd_asym_cpucapacity` domain is `prev_cpu`'s rather than the waking CPU's (on the
    /// platforms modelled both are the root domain).
    pub(in crate::sim) fn find_energy_efficient_cpu(
        &self,
        tid: usize,
        prev_cpu: usize,
        avg: &pelt::SchedAvg,
    ) -> Option<usize> {
        if !self.en.eas || self.threads[tid].class != Class::Fair {
            return None;
        }
        let span = self.feec_domain_span(prev_cpu)?;
        let ent = &self.ents[tid];
        let util_est = self.s.options.pelt.util_est;
        let ue = if util_est {
            pelt::task_util_est_raw(&avg.util_est, self.ue_ver)
        } else {
            0
        };
        let t = &self.threads[tid];
        let view = View {
            sim: self,
            tid,
            task_cpu: t.cpu,
            task_util: avg.util_avg,
            task_ue: ue,
            queued: ent.on_rq || self.rqs[t.cpu].curr == Some(tid),
            rqs: &self.rqs,
            kept: &self.en.feec_kept[..self.rqs.len()],
            util_est,
        };
        let task = EasTask {
            id: tid,
            util_est: if util_est {
                avg.util_avg.max(ue)
            } else {
                avg.util_avg
            },
            uclamp_min: t.uclamp[0],
            uclamp_max: t.uclamp[1],
            allowed: t.affinity,
        };
        eas::find_energy_efficient_cpu(
            &view,
            &self.en.em,
            &self.en.rd_pd,
            &task,
            prev_cpu,
            Some(&span),
            self.en.feec,
        )
    }

    // ------------------------------------------------------------------ overutilized

    /// `cpu_overutilized(cpu)` (kernel/sched/fair.c, v6.11; with the series' gate as an
    /// option): false when EAS is off.
    pub(in crate::sim) fn cpu_overutilized(&self, cpu: usize) -> bool {
        if !self.en.eas {
            return false;
        }
        let c = ou_cpu(
            &self.rqs[cpu],
            &self.en.uclamp[cpu],
            self.s.options.pelt.util_est,
        );
        cpu_overutilized(&c, self.en.uclamp_used, self.en.gate)
    }

    /// `set_rd_overutilized(rd, flag)`: writes the flag and fires the
    /// `sched_overutilized_tp` tracepoint (every write, changed or not, as the kernel;
    /// LISA's `sched_overutilized` event). No-op without EAS. `cpu` is where it runs.
    pub(in crate::sim) fn set_rd_overutilized(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        flag: bool,
        now: Nanos,
    ) {
        if !self.en.eas {
            return;
        }
        self.en.ou.set_rd_overutilized(now, flag);
        if out.any.overutilized {
            let ev = TraceEvent::SchedOverutilized {
                overutilized: flag,
                span: &self.en.span,
            };
            out.emit(&self.ctx(cpu, now), &ev, g_overutilized);
        }
    }

    /// `check_update_overutilized_status(rq)`: set the flag when it is clear and `cpu` is
    /// overutilised. The test of the flag is inlined at the callers (every wake-up enqueue
    /// and tick), the CPU's test is not.
    #[inline(always)]
    pub(in crate::sim) fn check_update_overutilized_status(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        now: Nanos,
    ) {
        if !self.en.eas || self.en.ou.is_rd_overutilized() {
            return;
        }
        self.check_cpu_overutilized(out, cpu, now);
    }

    /// The rest of [`Sim::check_update_overutilized_status`], the flag clear.
    #[inline(never)]
    fn check_cpu_overutilized(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        if self.cpu_overutilized(cpu) {
            self.set_rd_overutilized(out, cpu, true, now);
        }
    }

    /// Over-utilisation figures up to `now`.
    pub(in crate::sim) fn overutilized_stats(&self, now: Nanos) -> OverutilizedStats {
        let st = self.en.ou.stats(now);
        let s = |ns: u64| ns as f64 / NSEC_PER_SEC as f64;
        OverutilizedStats {
            time_s: s(st.overutilized_ns),
            pct: if st.total_ns == 0 {
                0.0
            } else {
                100.0 * st.overutilized_ns as f64 / st.total_ns as f64
            },
            triggers: st.triggers,
        }
    }

    // ------------------------------------------------------------------ uclamp

    /// `uclamp_rq_inc(rq, p)` (kernel/sched/core.c, v6.11), before the class's enqueue:
    /// fair and RT tasks, only while `sched_uclamp_used`.
    /// (Its `sched_uclamp_used` test is inlined at the callers.)
    #[inline(always)]
    pub(in crate::sim) fn uclamp_inc(&mut self, cpu: usize, tid: usize) {
        if self.en.uclamp_used {
            self.uclamp_inc_used(cpu, tid);
        }
    }

    /// [`Sim::uclamp_inc`] while `sched_uclamp_used`.
    #[inline(never)]
    fn uclamp_inc_used(&mut self, cpu: usize, tid: usize) {
        if matches!(self.threads[tid].class, Class::Dl | Class::Stop)
            || self.threads[tid].uclamp_on.is_some()
        {
            return;
        }
        let v = self.threads[tid].uclamp;
        self.en.uclamp[cpu].inc(v);
        self.rq_bw_changed(cpu);
        self.threads[tid].uclamp_on = Some(v);
    }

    /// `uclamp_rq_dec(rq, p)`, before the class's dequeue: the values counted at enqueue.
    #[inline(always)]
    pub(in crate::sim) fn uclamp_dec(&mut self, cpu: usize, tid: usize) {
        if let Some(v) = self.threads[tid].uclamp_on.take() {
            self.uclamp_dec_counted(cpu, v);
        }
    }

    /// [`Sim::uclamp_dec`] of a task counted with clamps `v`.
    #[inline(never)]
    fn uclamp_dec_counted(&mut self, cpu: usize, v: [u64; 2]) {
        self.en.uclamp[cpu].dec(v);
        self.rq_bw_changed(cpu);
    }

    /// A phase sets `util_min`/`util_max` (`sched_setattr()` with SCHED_FLAG_UTIL_CLAMP →
    /// `__setscheduler_uclamp()`, kernel/sched/syscalls.c, v6.11): a value is a
    /// user-defined request, −1 resets it to the class's default; then
    /// `uclamp_update_active()` re-counts a queued task.
    pub(in crate::sim) fn set_task_uclamp(
        &mut self,
        tid: usize,
        min: Option<i32>,
        max: Option<i32>,
    ) {
        if min.is_none() && max.is_none() {
            return;
        }
        let req = &mut self.threads[tid].uclamp_req;
        for (v, r) in [min, max].into_iter().zip(req.iter_mut()) {
            match v {
                None => {}
                Some(x) if x < 0 => *r = None,
                Some(x) => *r = Some(x),
            }
        }
        self.update_task_uclamp(tid);
    }

    /// The effective clamps of `tid` from its requests and its class (a request that is
    /// not user-defined takes the class's default, as `__setscheduler_uclamp()` resets it
    /// at every policy change: `uclamp_min` 1024 for RT, 0 otherwise), re-counted in its
    /// rq's buckets when it is counted there (`uclamp_update_active()`).
    pub(in crate::sim) fn update_task_uclamp(&mut self, tid: usize) {
        let t = &self.threads[tid];
        let rt_default = self.s.options.rt.util_clamp_min_rt_default;
        let v = task_uclamp(
            t.class == Class::Rt,
            t.uclamp_req[0],
            t.uclamp_req[1],
            rt_default,
        );
        if v == t.uclamp {
            return;
        }
        self.threads[tid].uclamp = v;
        if self.threads[tid].uclamp_on.is_some() {
            let cpu = self.threads[tid].cpu;
            self.uclamp_dec(cpu, tid);
            self.uclamp_inc(cpu, tid);
        }
    }
}
