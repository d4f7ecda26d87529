//! HMP (ARM big.LITTLE MP, LSK 3.10 `CONFIG_SCHED_HMP`; `hmp.enabled`) in the engine: each
//! fair task's load history as that tree tracks it ([`crate::pelt::legacy`]), kept where
//! its fair.c updates it (`enqueue_entity_load_avg()`, `dequeue_entity_load_avg()`,
//! `update_entity_load_avg()` from `set_next_entity()`, `put_prev_entity()` and
//! `entity_tick()`), the per-rq sum of the queued tasks' ratios (`rq->avg.load_avg_ratio`),
//! and the HMP part of `select_task_rq_fair()` at wake-up and fork
//! ([`crate::policy::hmp`]), with `sched_hmp_migrate` and `sched_task_runnable_ratio`.

use crate::options::Governor;
use crate::pelt::legacy::{cpufreq_calc_scale, LegacyAvg, FREQSCALE_ONE};
use crate::policy::hmp::{self as phmp, HmpDomains, HmpPlacement, HmpRq, HmpTask, HmpTunables};
use crate::sim::*;

/// `HMP_MIGRATE_WAKEUP`, the `force` field of `sched_hmp_migrate` for a wake-up or fork
/// placement.
const HMP_MIGRATE_WAKEUP: u32 = 0;

/// HMP's state: the domains, the tunables, each thread's history and each rq's sums.
#[derive(Debug, Clone)]
pub(in crate::sim) struct HmpState {
    domains: HmpDomains,
    tun: HmpTunables,
    freq_invariant: bool,
    fork_boost: bool,
    /// `se->avg` of each thread (by thread id).
    avg: Vec<LegacyAvg>,
    /// `rq->avg` of each CPU.
    rq: Vec<HmpRq>,
}

impl HmpState {
    /// HMP for `platform`'s capacity classes, or `None` when `hmp.enabled` is off.
    pub(in crate::sim) fn new(options: &crate::options::HmpOptions, caps: &[u64]) -> Option<Self> {
        options.enabled.then(|| HmpState {
            domains: HmpDomains::from_capacities(caps),
            tun: options.tunables(),
            freq_invariant: options.freq_invariant,
            fork_boost: options.fork_boost,
            avg: Vec::new(),
            rq: vec![HmpRq::default(); caps.len()],
        })
    }

    /// `CONFIG_DISABLE_CPU_SCHED_DOMAIN_BALANCE` (LSK 3.10 arm/arm64 `SD_CPU_INIT` with
    /// `0*SD_LOAD_BALANCE`): no load balancing at the levels that span more than one HMP
    /// domain, so that only HMP moves tasks between them.
    pub(in crate::sim) fn keep_domains_apart(
        &self,
        doms: &mut crate::sched::topology::SchedDomains,
    ) {
        for (cpu, levels) in doms.cpus.iter_mut().enumerate() {
            let own = &self.domains.domains[self.domains.of_cpu[cpu]];
            for sd in levels.iter_mut() {
                if !sd.span.is_subset(own) {
                    sd.load_balance = false;
                }
            }
        }
    }

    fn avg_mut(&mut self, tid: usize) -> &mut LegacyAvg {
        if self.avg.len() <= tid {
            self.avg.resize(tid + 1, LegacyAvg::default());
        }
        &mut self.avg[tid]
    }
}

impl<'w> Sim<'w> {
    /// `freq_scale[cpu].curr_scale` (LSK 3.10 `cpufreq_callback()`): the CPU's `cur/max`
    /// with frequency invariance on, 1024 under performance and powersave
    /// (`SCHED_LOAD_FREQINVAR_SINGLEFREQ`) or with it off.
    fn hmp_curr_scale(&self, cpu: usize, freq_invariant: bool) -> u64 {
        let single = matches!(
            self.s.options.cpufreq.governor,
            Governor::Performance | Governor::Powersave
        );
        if !freq_invariant || single {
            return FREQSCALE_ONE;
        }
        let rq = &self.rqs[cpu];
        cpufreq_calc_scale(0, rq.max_freq_khz, rq.freq_khz)
    }

    /// `update_entity_load_avg(se, 1)` of fair `tid` on `cpu` (queued: `runnable`;
    /// `cfs_rq->curr`: `running`); a recomputed ratio moves the rq's sum while queued.
    pub(in crate::sim) fn hmp_update(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        let Some(h) = self.hmp.as_ref() else {
            return;
        };
        let scale = self.hmp_curr_scale(cpu, h.freq_invariant);
        let on_rq = self.ents[tid].on_rq;
        let running = self.rqs[cpu].cfs.curr == Some(tid);
        let weight = self.ents[tid].load.weight;
        let h = self.hmp.as_mut().expect("checked above");
        let a = h.avg_mut(tid);
        let old = a.load_avg_ratio;
        if !a.update_runnable_avg(now, on_rq, running, scale) {
            return;
        }
        a.update_task_entity_contrib(weight);
        let new = a.load_avg_ratio;
        if on_rq {
            let r = &mut h.rq[cpu].load_avg_ratio;
            *r = (*r + new).saturating_sub(old);
        }
        if out.any.signals && self.s.options.trace.signals {
            let ev = TraceEvent::SchedTaskRunnableRatio {
                task: self.tref(tid),
                ratio: new,
            };
            out.emit(&self.ctx(cpu, now), &ev, g_signals);
        }
    }

    /// `enqueue_entity_load_avg()`: the time since the last update (its sleep, or
    /// nothing for a task just moved) folded in as not runnable, then the task's ratio
    /// added to the rq's. Before the entity is queued.
    pub(in crate::sim) fn hmp_enqueue(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        if self.hmp.is_none() {
            return;
        }
        self.hmp_update(out, cpu, tid, now);
        if let Some(h) = self.hmp.as_mut() {
            let ratio = h.avg_mut(tid).load_avg_ratio;
            h.rq[cpu].load_avg_ratio += ratio;
        }
    }

    /// `dequeue_entity_load_avg()`: the task brought to now while queued, its ratio taken
    /// off the rq's. Before the entity leaves the queue.
    pub(in crate::sim) fn hmp_dequeue(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        if self.hmp.is_none() {
            return;
        }
        self.hmp_update(out, cpu, tid, now);
        if let Some(h) = self.hmp.as_mut() {
            let ratio = h.avg_mut(tid).load_avg_ratio;
            let r = &mut h.rq[cpu].load_avg_ratio;
            *r = r.saturating_sub(ratio);
        }
    }

    /// `__sched_fork()`: a new task's history, saturated for a user task with
    /// `hmp.fork_boost` (`hmp_task_should_forkboost()`: its parent is not init or
    /// kthreadd), and its clock started.
    pub(in crate::sim) fn hmp_fork(&mut self, tid: usize, now: Nanos) {
        let boost = self.threads[tid].kthread.is_none();
        let weight = self.ents[tid].load.weight;
        if let Some(h) = self.hmp.as_mut() {
            let b = boost && h.fork_boost;
            *h.avg_mut(tid) = LegacyAvg::new_task(b, weight, now);
        }
    }

    /// The HMP part of `select_task_rq_fair()` for fair `tid` last on `prev`, after the
    /// baseline placement chose `baseline` (`fork`: `SD_BALANCE_FORK`): the fork boost,
    /// the up and down tests from `prev`, or the baseline kept inside `prev`'s domain.
    /// Records the migration times (`hmp_next_up_delay()`/`hmp_next_down_delay()` on the
    /// task and the target rq) and traces `sched_hmp_migrate` for an up or down move, on
    /// `this_cpu` (where the wake-up runs).
    #[allow(clippy::too_many_arguments)]
    pub(in crate::sim) fn hmp_select_task_rq(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        prev: usize,
        this_cpu: usize,
        baseline: usize,
        fork: bool,
        now: Nanos,
    ) -> usize {
        let Some(h) = self.hmp.as_mut() else {
            return baseline;
        };
        if self.threads[tid].affinity.weight() == 1 {
            return baseline; // `p->nr_cpus_allowed == 1`: prev_cpu, before HMP
        }
        let a = *h.avg_mut(tid);
        let t = HmpTask {
            ratio: a.load_avg_ratio,
            prio: self.threads[tid].eff_prio,
            allowed: self.threads[tid].affinity,
            last_up: a.hmp_last_up_migration,
            last_down: a.hmp_last_down_migration,
        };
        let boost = fork && h.fork_boost && self.threads[tid].kthread.is_none();
        let placed =
            phmp::select_task_rq_hmp(&h.domains, &h.tun, &t, prev, baseline, boost, now, &h.rq);
        let (cpu, up, traced) = match placed {
            HmpPlacement::ForkBoost(c) => (c, Some(true), false),
            HmpPlacement::Up(c) => (c, Some(true), true),
            HmpPlacement::Down(c) => (c, Some(false), true),
            HmpPlacement::Keep(c) => (c, None, false),
        };
        if let Some(up) = up {
            let (last_up, last_down) = if up { (now, 0) } else { (0, now) };
            let a = h.avg_mut(tid);
            (a.hmp_last_up_migration, a.hmp_last_down_migration) = (last_up, last_down);
            let r = &mut h.rq[cpu];
            (r.last_up, r.last_down) = (last_up, last_down);
        }
        if traced && out.any.sched {
            let ev = TraceEvent::SchedHmpMigrate {
                task: self.tref(tid),
                dest: cpu as u32,
                force: HMP_MIGRATE_WAKEUP,
            };
            out.emit(&self.ctx(this_cpu, now), &ev, g_sched);
        }
        cpu
    }
}
