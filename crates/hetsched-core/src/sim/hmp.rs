//! HMP (ARM big.LITTLE MP, LSK 3.10 `CONFIG_SCHED_HMP`; `hmp.enabled`) in the engine: each
//! fair task's load history as that tree tracks it ([`crate::pelt::legacy`]), kept where
//! its fair.c updates it (`enqueue_entity_load_avg()`, `dequeue_entity_load_avg()`,
//! `update_entity_load_avg()` from `set_next_entity()`, `put_prev_entity()` and
//! `entity_tick()`), the per-rq sum of the queued tasks' ratios (`rq->avg.load_avg_ratio`),
//! the HMP part of `select_task_rq_fair()` at wake-up and fork ([`crate::policy::hmp`]),
//! the forced up-migration of the rebalance softirq and the idle pull of a faster CPU,
//! with `sched_hmp_migrate` and `sched_task_runnable_ratio`.

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
    /// Nothing without `hmp.enabled`: the test is inlined at the callers (the PELT
    /// updates of every pick and tick), the update is not.
    #[inline(always)]
    pub(in crate::sim) fn hmp_update(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        if self.hmp.is_some() {
            self.hmp_update_entity(out, cpu, tid, now);
        }
    }

    /// [`Sim::hmp_update`] with `hmp.enabled`.
    #[inline(never)]
    fn hmp_update_entity(&mut self, out: &mut Out<'_, '_>, cpu: usize, tid: usize, now: Nanos) {
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

/// `HMP_MIGRATE_OFFLOAD`, the `force` field of `sched_hmp_migrate` for an offload.
const HMP_MIGRATE_OFFLOAD: u32 = 2;

/// `HMP_MIGRATE_IDLE_PULL`, the `force` field of `sched_hmp_migrate` for an idle pull.
const HMP_MIGRATE_IDLE_PULL: u32 = 3;

/// `hmp_max_tasks`: the queued entities `hmp_get_heaviest_task()` looks at beside curr.
const HMP_MAX_TASKS: usize = 5;

/// `sysctl_sched_migration_cost` (ns): LSK 3.10's `idle_balance()` gives up below this
/// `avg_idle`, HMP's pull included.
const SYSCTL_SCHED_MIGRATION_COST: u64 = 500_000;

impl<'w> Sim<'w> {
    /// The HMP view of `tid`.
    fn hmp_task(&mut self, tid: usize) -> Option<HmpTask> {
        let prio = self.threads[tid].eff_prio;
        let allowed = self.threads[tid].affinity;
        let a = *self.hmp.as_mut()?.avg_mut(tid);
        Some(HmpTask {
            ratio: a.load_avg_ratio,
            prio,
            allowed,
            last_up: a.hmp_last_up_migration,
            last_down: a.hmp_last_down_migration,
        })
    }

    /// `hmp_get_heaviest_task(curr, target_cpu)` (LSK 3.10): of `cpu`'s running fair task
    /// and the first [`HMP_MAX_TASKS`] queued in vruntime order, the one of the highest
    /// ratio that may run in the faster domain (on `target` only, when given); curr stays
    /// the answer on the fastest domain, or if nobody beats it; `None` when `target` is
    /// not in the faster domain or nothing fair runs.
    fn hmp_get_heaviest_task(&mut self, cpu: usize, target: Option<usize>) -> Option<usize> {
        let curr = self.rqs[cpu]
            .cfs
            .curr
            .filter(|&c| self.rqs[cpu].curr == Some(c))?;
        let h = self.hmp.as_ref()?;
        if h.domains.is_fastest(cpu) {
            return Some(curr);
        }
        let mut mask = *h.domains.faster(cpu);
        if let Some(t) = target {
            if !mask.contains(t) {
                return None;
            }
            mask = CpuSet::from_cpus(&[t]);
        }
        Some(self.hmp_scan(cpu, curr, &mask, |r, best| r > best))
    }

    /// `hmp_force_up_migration(this_cpu)` (LSK 3.10, the idle-pull form of commit "hmp: Use
    /// idle pull to perform forced up-migrations"), from the rebalance softirq of any CPU:
    /// the first CPU (in order) whose heaviest eligible task passes `hmp_up_migration()` —
    /// with an idle faster CPU — has that CPU woken to pull (`wake_for_idle_pull`, an IPI:
    /// [`Ev::HmpIdlePull`]); a CPU that sends nothing up offloads its lightest task to an
    /// idle slower CPU when its own domain is saturated (`hmp_offload_down()`,
    /// `sched_hmp_migrate` reason 2).
    pub(in crate::sim) fn hmp_force_up_migration(
        &mut self,
        out: &mut Out<'_, '_>,
        this_cpu: usize,
        now: Nanos,
    ) {
        let _ = this_cpu;
        if self.hmp.is_none() {
            return;
        }
        for cpu in 0..self.rqs.len() {
            if self.active_balance[cpu] {
                continue;
            }
            let Some(t) = self.hmp_get_heaviest_task(cpu, None) else {
                continue;
            };
            let Some(task) = self.hmp_task(t) else {
                return;
            };
            let h = self.hmp.as_ref().expect("checked above");
            if let Some(target) = phmp::up_migration(&h.domains, &h.tun, &task, cpu, now, &h.rq) {
                self.q.push(now, Ev::HmpIdlePull { cpu: target as u32 });
                return;
            }
            // the offload of this CPU (hmp_get_lightest_task(), hmp_offload_down())
            let Some(light) = self.hmp_get_lightest_task(cpu) else {
                continue;
            };
            if let Some(dst) = self.hmp_offload_down(cpu, light) {
                self.hmp_move(out, light, cpu, dst, false, HMP_MIGRATE_OFFLOAD, cpu, now);
            }
        }
    }

    /// The scan both task pickers share: `curr`, then the first [`HMP_MAX_TASKS`] queued
    /// fair tasks of `cpu` in vruntime order (`__pick_first_entity()` onwards), keeping a
    /// task whose ratio `better` than the best so far and that may run in `mask`.
    fn hmp_scan(
        &mut self,
        cpu: usize,
        curr: usize,
        mask: &CpuSet,
        better: impl Fn(u64, u64) -> bool,
    ) -> usize {
        let mut queued: Vec<usize> = self.rqs[cpu]
            .cfs
            .queue
            .iter()
            .copied()
            .filter(|&t| t != curr)
            .collect();
        // the tree's order: vruntime, then enqueue order (the queue's; a stable sort)
        let v0 = self.rqs[cpu].cfs.min_vruntime;
        queued.sort_by_key(|&t| self.ents[t].vruntime.wrapping_sub(v0) as i64);
        let ratio =
            |s: &mut Self, t: usize| s.hmp.as_mut().map_or(0, |h| h.avg_mut(t).load_avg_ratio);
        let (mut best, mut best_ratio) = (curr, ratio(self, curr));
        for t in queued.into_iter().take(HMP_MAX_TASKS) {
            let r = ratio(self, t);
            if better(r, best_ratio) && mask.intersects(&self.threads[t].affinity) {
                (best, best_ratio) = (t, r);
            }
        }
        best
    }

    /// `hmp_get_lightest_task(curr, 1)` (LSK 3.10): of `cpu`'s running fair task and the
    /// first [`HMP_MAX_TASKS`] queued, the one of the lowest ratio that may run in the
    /// slower domain (curr on the slowest domain, or if nobody is lighter).
    fn hmp_get_lightest_task(&mut self, cpu: usize) -> Option<usize> {
        let curr = self.rqs[cpu]
            .cfs
            .curr
            .filter(|&c| self.rqs[cpu].curr == Some(c))?;
        let h = self.hmp.as_ref()?;
        if h.domains.is_slowest(cpu) {
            return Some(curr);
        }
        let mask = *h.domains.slower(cpu);
        Some(self.hmp_scan(cpu, curr, &mask, |r, best| r < best))
    }

    /// `hmp_offload_down(cpu, se)` (LSK 3.10, "sched: Basic global balancing support for
    /// HMP"): from a CPU above the slowest domain, when its own domain has no idle CPU, it
    /// runs two or more fair tasks, and `t` gets at most 75 % of its runnable time
    /// (`usage_avg_sum · 1024 / (runnable_avg_sum + 1)` ≤ 768), `t` goes to an idle
    /// allowed CPU of the slower domain, if there is one.
    fn hmp_offload_down(&mut self, cpu: usize, t: usize) -> Option<usize> {
        let nr = self.rqs[cpu].cfs.nr_running;
        let allowed = self.threads[t].affinity;
        let h = self.hmp.as_mut()?;
        if h.domains.is_slowest(cpu) {
            return None;
        }
        let all = CpuSet::first_n(h.rq.len());
        let own = h.domains.domains[h.domains.of_cpu[cpu]];
        if phmp::domain_min_load(&own, &all, &h.rq).is_some_and(|(l, _)| l == 0) || nr < 2 {
            return None;
        }
        let a = h.avg_mut(t);
        let starvation = u64::from(a.usage_avg_sum) * 1024 / (u64::from(a.runnable_avg_sum) + 1);
        if starvation > 768 {
            return None;
        }
        match phmp::domain_min_load(h.domains.slower(cpu), &allowed, &h.rq) {
            Some((0, dest)) => Some(dest),
            _ => None,
        }
    }

    /// `hmp_idle_pull(this_cpu)` (LSK 3.10): a CPU above the slowest domain takes the
    /// heaviest task of the slower domain whose ratio reaches `up_threshold` and that may
    /// run here (each slow CPU's running task and its first queued ones; no delay, no
    /// priority filter): `sched_hmp_migrate` reason 3, `hmp_next_up_delay()`; a running
    /// task goes through its CPU's stopper (`hmp_active_task_migration_cpu_stop()`), a
    /// queued one moves at once (`hmp_migrate_runnable_task()`). Returns whether a task
    /// was moved or is on its way.
    pub(in crate::sim) fn hmp_idle_pull(
        &mut self,
        out: &mut Out<'_, '_>,
        this_cpu: usize,
        now: Nanos,
    ) -> bool {
        let Some(h) = self.hmp.as_ref() else {
            return false;
        };
        if h.domains.is_slowest(this_cpu) {
            return false;
        }
        let up = h.tun.up_threshold;
        let slower: Vec<usize> = h.domains.slower(this_cpu).iter().collect();
        let mut best: Option<(usize, usize, u64)> = None; // (task, its cpu, ratio)
        for cpu in slower {
            let Some(t) = self.hmp_get_heaviest_task(cpu, Some(this_cpu)) else {
                continue;
            };
            let Some(task) = self.hmp_task(t) else {
                return false;
            };
            if task.ratio >= up
                && task.ratio > best.map_or(0, |b| b.2)
                && task.allowed.contains(this_cpu)
            {
                best = Some((t, cpu, task.ratio));
            }
        }
        let Some((t, src, _)) = best else {
            return false;
        };
        if self.active_balance[src] || self.threads[t].cpu != src {
            return false;
        }
        self.hmp_move(
            out,
            t,
            src,
            this_cpu,
            true,
            HMP_MIGRATE_IDLE_PULL,
            this_cpu,
            now,
        );
        true
    }

    /// An HMP move decided on `on` of `t` from `src` to `dst` (up: `hmp_next_up_delay()`,
    /// else `hmp_next_down_delay()`), traced with `reason`: a running task through
    /// `src`'s stopper (`hmp_active_task_migration_cpu_stop()`), a queued one at once
    /// (`hmp_migrate_runnable_task()`).
    #[allow(clippy::too_many_arguments)]
    fn hmp_move(
        &mut self,
        out: &mut Out<'_, '_>,
        t: usize,
        src: usize,
        dst: usize,
        up: bool,
        reason: u32,
        on: usize,
        now: Nanos,
    ) {
        if let Some(h) = self.hmp.as_mut() {
            let (last_up, last_down) = if up { (now, 0) } else { (0, now) };
            let a = h.avg_mut(t);
            (a.hmp_last_up_migration, a.hmp_last_down_migration) = (last_up, last_down);
            let r = &mut h.rq[dst];
            (r.last_up, r.last_down) = (last_up, last_down);
        }
        if out.any.sched {
            let ev = TraceEvent::SchedHmpMigrate {
                task: self.tref(t),
                dest: dst as u32,
                force: reason,
            };
            out.emit(&self.ctx(on, now), &ev, g_sched);
        }
        let why = if up {
            MigrationReason::HmpIdlePull
        } else {
            MigrationReason::HmpOffload
        };
        if self.rqs[src].curr == Some(t) {
            self.set_active_balance(src, true);
            let work = crate::sim::class::StopWork::HmpMigrate { tid: t, dst, why };
            self.stop_one_cpu_nowait(out, src, work, on, now);
        } else {
            let m = Migration {
                task: t,
                src,
                dst,
                reason: why,
            };
            self.move_queued_on(out, m, on, now);
        }
    }

    /// The pull of LSK 3.10's `idle_balance()` when the domains' balance pulled nothing
    /// (`avg_idle` at least `sysctl_sched_migration_cost`).
    pub(in crate::sim) fn hmp_newidle_pull(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        now: Nanos,
    ) -> bool {
        if self.hmp.is_none() || self.rqs[cpu].avg_idle < SYSCTL_SCHED_MIGRATION_COST {
            return false;
        }
        self.hmp_idle_pull(out, cpu, now)
    }

    /// `hmp_active_task_migration_cpu_stop()` on `cpu`'s stopper: `t`, still queued here,
    /// moves to `dst` (cache hotness is not checked); `active_balance` is cleared.
    pub(in crate::sim) fn hmp_active_task_migration_cpu_stop(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        t: usize,
        dst: usize,
        why: MigrationReason,
        now: Nanos,
    ) {
        self.set_active_balance(cpu, false);
        let t_ = &self.threads[t];
        if t_.cpu != cpu || t_.state != TState::Runnable || !t_.affinity.contains(dst) {
            return;
        }
        let m = Migration {
            task: t,
            src: cpu,
            dst,
            reason: why,
        };
        self.move_queued_on(out, m, cpu, now);
    }
}
