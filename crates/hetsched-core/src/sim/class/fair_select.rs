//! Fair-class wake-up and fork placement wired to the engine: the view
//! [`crate::policy::select_fair::select_task_rq_fair`] reads ([`WakeEnv`], a
//! [`FairWakeView`] over the runqueues for the task being placed), the task and waker
//! context, and the bookkeeping the kernel does around the call (kernel/sched/core.c
//! `select_task_rq()`, `wake_up_new_task()`; kernel/sched/fair.c `select_task_rq_fair()`,
//! `record_wakee()`, v6.11).
//!
//! - Wake-up (`WF_TTWU`): `this_cpu` is the waker's CPU for a futex wake-up, and the
//!   sleeper's previous CPU for a timer wake-up (the hrtimer fires where it was armed).
//!   `record_wakee()` updates the waker's flips; a timer wake-up in interrupt context
//!   records on whatever runs there (the idle task when idle), as in the kernel.
//! - Fork (`WF_FORK`): `prev_cpu` and `this_cpu` are the parent's CPU. Threads created at
//!   the start by rt-app's main thread are forked from CPU 0 (where hetsched runs it).
//! - The blocked task is synced to its previous cfs_rq's clock (`sync_entity_load_avg()`)
//!   on a copy, which the view and the task's utilization read; the engine keeps it only
//!   when the kernel's path syncs p ([`FairPlacement::task_synced`]: feec,
//!   `select_idle_sibling()` on asymmetric systems, the slow path of a wakeup), and
//!   `wake_affine_weight()` reads the load from before the sleep unless feec synced first.
//!
//! - SIS_UTIL: `select_idle_cpu()` reads the LLC's `nr_idle_scan` as the LLC domain's
//!   last periodic stats pass wrote it (`update_idle_cpu_scan()`).
//!
//! Simplifications: no cpuidle exit
//! latencies (`idle_get_state()` is NULL); no IRQ, thermal or cpufreq pressure in
//! `capacity_of()`.

use crate::pelt::SchedAvg;
use crate::pelt::{self, UtilEstVersion};
use crate::policy::select_fair::{
    self, FairPlacement, FairWakeParams, FairWakeTask, FairWakeView, WakeCtx, WakeeState,
};
use crate::sched::capacity::CpuCapacity;
use crate::sched::fair::SchedEntity;
use crate::sched::CpuSet;
use crate::sim::rq_capacity;
use crate::sim::{Class, Rq, Sim, Thread};
use crate::time::Nanos;
use crate::workload::SchedPolicy;

/// The fair placement's view of the engine, for task `p` (the "without p" values leave its
/// blocked contribution on its previous CPU out).
pub(super) struct WakeEnv<'a> {
    pub rqs: &'a [Rq],
    pub threads: &'a [Thread],
    /// p's average synced to `p_cpu`'s cfs_rq (the slow path reads it after its sync).
    pub p_avg: &'a SchedAvg,
    pub util_est: bool,
    pub ue_ver: UtilEstVersion,
    /// The task being placed.
    pub p: usize,
    /// `task_cpu(p)`.
    pub p_cpu: usize,
    /// `p->se.avg.last_update_time != 0` (it has a contribution on `p_cpu`).
    pub p_attached: bool,
    /// `task_on_rq_queued(p)`.
    pub p_queued: bool,
    /// Some thread may have `SCHED_IDLE` (see [`workload_may_use_idle_policy`]); when
    /// not, `cfs.idle_h_nr_running` is 0 on every CPU.
    pub idle_policy_possible: bool,
    /// `sched.sched_idle_cpu`: the kernel has `sched_idle_cpu()` (v5.4+) and the wake-up
    /// uses it as an idle CPU (v5.6+); false for v4.20 and earlier, whose scans see only
    /// `available_idle_cpu()`.
    pub sched_idle_cpu: bool,
    /// The CPUs running their idle task (`Sim::idle_curr`).
    pub idle_curr: &'a CpuSet,
    /// The domains whose `sd_llc_shared->nr_idle_scan` bounds the idle scan, when
    /// `sched_feat(SIS_UTIL)`.
    pub sis_util: Option<&'a crate::sched::topology::SchedDomains>,
}

/// Whether any thread of `w` can ever have `SCHED_IDLE`: the workload's default policy,
/// a task's or a phase's policy (the only places a thread's policy comes from).
pub(in crate::sim) fn workload_may_use_idle_policy(w: &crate::workload::Workload) -> bool {
    let idle = |p: Option<SchedPolicy>| p == Some(SchedPolicy::Idle);
    w.default_policy == SchedPolicy::Idle
        || w.tasks
            .iter()
            .any(|t| idle(t.attrs.policy) || t.phases.iter().any(|ph| idle(ph.attrs.policy)))
}

/// `sched_idle_rq(rq)` (kernel/sched/fair.c, v6.11): `rq->nr_running ==
/// rq->cfs.idle_h_nr_running && rq->nr_running`, the CPU runs SCHED_IDLE tasks only.
/// `curr_on_rq`: the fair curr is still enqueued (false from its own dequeue until it is
/// put, when `rq->nr_running` no longer counts it).
pub(in crate::sim) fn sched_idle_rq(rq: &Rq, threads: &[Thread], curr_on_rq: bool) -> bool {
    let nr = rq.cfs.nr_running + (rq.rt.nr_running() + rq.dl.nr_running()) as u32;
    if nr == 0 || nr != rq.cfs.nr_running {
        return false;
    }
    let idle_policy = |t: usize| threads[t].policy == SchedPolicy::Idle;
    let queued_idle = rq.cfs.queue.iter().filter(|&&t| idle_policy(t)).count();
    let curr_idle = rq
        .cfs
        .curr
        .filter(|&c| curr_on_rq && !rq.cfs.queue.contains(&c) && idle_policy(c));
    (queued_idle + usize::from(curr_idle.is_some())) as u32 == nr
}

/// [`Sim::sched_idle_cpu`] of the CPU of `rq`, for a caller that holds the rq:
/// `possible` is [`Sim`]'s `idle_policy_possible` (false: no thread can have SCHED_IDLE).
#[inline(always)]
pub(in crate::sim) fn sched_idle_cpu_of(
    possible: bool,
    rq: &Rq,
    ents: &[SchedEntity],
    threads: &[Thread],
) -> bool {
    if !possible {
        return false;
    }
    let curr_on_rq = rq.cfs.curr.is_some_and(|c| ents[c].on_rq);
    sched_idle_rq(rq, threads, curr_on_rq)
}

impl WakeEnv<'_> {
    fn nr_all(&self, cpu: usize) -> u32 {
        let rq = &self.rqs[cpu];
        rq.cfs.nr_running + (rq.rt.nr_running() + rq.dl.nr_running()) as u32
    }

    /// p has a contribution on `cpu` to subtract (`cpu == task_cpu(p)` and attached).
    fn p_here(&self, cpu: usize) -> bool {
        cpu == self.p_cpu && self.p_attached
    }
}

impl FairWakeView for WakeEnv<'_> {
    fn available_idle_cpu(&self, cpu: usize) -> bool {
        self.rqs[cpu].curr.is_none() && self.nr_all(cpu) == 0
    }

    /// `sched_idle_cpu(cpu)` where the wake-up reads it (kernel/sched/fair.c, v5.6+:
    /// `select_idle_sibling()`'s target, prev and recent CPU, `select_idle_cpu()`, v5.7+
    /// `select_idle_capacity()`, and `sched_balance_find_dst_group_cpu()`, which was
    /// `find_idlest_group_cpu()`); false without `sched.sched_idle_cpu` (v4.20 and earlier
    /// have no such test: those scans see `available_idle_cpu()` alone).
    fn sched_idle_cpu(&self, cpu: usize) -> bool {
        // without any SCHED_IDLE thread idle_h_nr_running is 0 and the test is false
        self.sched_idle_cpu
            && self.idle_policy_possible
            && sched_idle_rq(&self.rqs[cpu], self.threads, true)
    }

    fn nr_running(&self, cpu: usize) -> u32 {
        self.nr_all(cpu)
    }

    fn h_nr_running(&self, cpu: usize) -> u32 {
        self.rqs[cpu].cfs.nr_running
    }

    fn cpu_load(&self, cpu: usize) -> u64 {
        self.rqs[cpu].cfs.avg.load_avg
    }

    fn capacity(&self, cpu: usize) -> CpuCapacity {
        rq_capacity(&self.rqs[cpu])
    }

    fn nr_idle_scan(&self, cpu: usize) -> Option<u32> {
        self.sis_util?.nr_idle_scan(cpu)
    }

    /// `cpu_load_without()` (kernel/sched/fair.c, v6.11).
    fn cpu_load_without(&self, cpu: usize) -> u64 {
        let load = self.rqs[cpu].cfs.avg.load_avg;
        if !self.p_here(cpu) {
            return load;
        }
        load.saturating_sub(self.p_avg.load_avg)
    }

    /// `cpu_util(cpu, p, -1, 0)` after `cpu_util_without()`'s filter (v6.11): subtract p's
    /// `util_avg` where it is attached, and its `util_est` where it is queued.
    fn cpu_util_without(&self, cpu: usize) -> u64 {
        let rq = &self.rqs[cpu];
        let a = &rq.cfs.avg;
        let pa = self.p_avg;
        let here = self.p_here(cpu);
        let mut util = a.util_avg;
        if here {
            util = util.saturating_sub(pelt::task_util(pa));
        }
        if self.util_est {
            let mut ue = pelt::cfs_rq_util_est(a);
            if here && self.p_queued {
                ue = ue.saturating_sub(pelt::task_util_est_raw(&pa.util_est, self.ue_ver));
            }
            util = util.max(ue);
        }
        util.min(rq.cap)
    }

    /// `cpu_runnable_without()` (v6.11).
    fn cpu_runnable_without(&self, cpu: usize) -> u64 {
        let r = self.rqs[cpu].cfs.avg.runnable_avg;
        if !self.p_here(cpu) {
            return r;
        }
        r.saturating_sub(self.p_avg.runnable_avg)
    }

    /// `task_running_on_cpu()` (v6.11): p is queued here and has PELT history.
    fn task_running_on_cpu(&self, cpu: usize) -> bool {
        self.p_here(cpu) && self.p_queued
    }

    /// `idle_cpu_without()` (v6.11): curr is the idle task or p, and nothing else is queued.
    fn idle_cpu_without(&self, cpu: usize) -> bool {
        let rq = &self.rqs[cpu];
        if rq.curr.is_some_and(|c| c != self.p) {
            return false;
        }
        let nr = self.nr_all(cpu);
        nr == 0 || (nr == 1 && self.p_here(cpu) && self.p_queued)
    }

    fn idle_exit_latency(&self, _cpu: usize) -> Option<u32> {
        None
    }

    fn idle_stamp(&self, cpu: usize) -> u64 {
        self.rqs[cpu].idle_stamp
    }

    /// The CPUs running their idle task: `available_idle_cpu()` needs it, and
    /// `sched_idle_cpu()` (a SCHED_IDLE task running) is possible only when the
    /// workload has such tasks, then every CPU is a candidate.
    fn idle_candidates(&self) -> CpuSet {
        if self.sched_idle_cpu && self.idle_policy_possible {
            return CpuSet::first_n(crate::sched::cpuset::MAX_CPUS);
        }
        *self.idle_curr
    }
}

impl Sim<'_> {
    /// `sched_idle_cpu(cpu)` (kernel/sched/fair.c, v6.11): [`sched_idle_rq`] of `cpu`'s rq;
    /// false at once when no thread can have SCHED_IDLE.
    pub(in crate::sim) fn sched_idle_cpu(&self, cpu: usize) -> bool {
        if !self.idle_policy_possible {
            return false;
        }
        let rq = &self.rqs[cpu];
        let curr_on_rq = rq.cfs.curr.is_some_and(|c| self.ents[c].on_rq);
        sched_idle_rq(rq, &self.threads, curr_on_rq)
    }

    /// `select_task_rq()` → `select_task_rq_fair(p, prev_cpu, wake_flags)` for fair thread
    /// `tid` (kernel/sched/core.c and fair.c, v6.11), with `this_cpu` the CPU doing the
    /// wake-up or fork. Applies `record_wakee()` and `p->recent_used_cpu`; returns the
    /// decision.
    pub(in crate::sim) fn select_task_rq_fair(
        &mut self,
        tid: usize,
        prev_cpu: usize,
        this_cpu: usize,
        wake_flags: u32,
        now: Nanos,
    ) -> FairPlacement {
        let th = &self.threads[tid];
        if th.affinity.at_most_one() {
            // select_task_rq(): `cpumask_any(p->cpus_ptr)` without the class.
            return FairPlacement {
                cpu: th.affinity.first().unwrap_or(prev_cpu),
                reason: select_fair::WakeReason::Pinned,
                wake_affine: None,
                recent_used_cpu: None,
                task_synced: false,
            };
        }
        // p's own scalars, read here (before record_wakee() changes `current`'s state, as
        // when the task was built first); the task is built after it, so that it borrows
        // p's affinity from `threads` instead of copying it
        let (uclamp, wakee_flips, recent_used_cpu) =
            (th.uclamp, th.wakee.wakee_flips, th.recent_used_cpu);
        let ttwu = wake_flags & select_fair::WF_TTWU != 0;
        // `current`'s load, read before p's average is synced in place (below): the
        // unsynced value, as when the sync was made on a copy. Only wake_affine_weight()
        // of a sync wake-up (WF_SYNC) reads it, so it is 0 for the other placements
        let curr = self.rqs[this_cpu].curr;
        let current_load = if wake_flags & select_fair::WF_SYNC != 0 {
            curr.filter(|&c| self.threads[c].class == Class::Fair)
                .map_or(0, |c| self.ents[c].avg.load_avg)
        } else {
            0
        };
        // sync_entity_load_avg(): age the blocked task to its old cfs_rq's clock. The engine
        // syncs p's own average and keeps the unsynced one beside it, which it puts back
        // when the kernel's path would not have synced p (`!placed.task_synced`): most
        // placements keep the sync, which then costs no copy back. Until then only the
        // placement reads p's average (the view, the task's utilization and feec, which
        // read nothing else of p's PELT), and `load` below is the unsynced one.
        let last = self.rqs[prev_cpu].cfs.avg.last_update_time;
        let e = &mut self.ents[tid];
        let attached = e.avg.last_update_time != 0;
        let load = e.avg.load_avg;
        let unsynced = attached.then(|| {
            let before = e.avg;
            pelt::sync_entity_load_avg(&mut e.avg, last, e.load.weight);
            before
        });
        let try_feec = self.eas_wakeup_gate();
        let ctx = WakeCtx {
            this_cpu,
            current_load,
            current_exiting: false,
            current_per_cpu_kthread: false,
            jiffies: self.jiffies(now),
            hz: u64::from(self.s.options.sched.hz),
            uclamp_used: self.en.uclamp_used,
            try_feec,
            // read only when feec is tried
            feec_syncs: try_feec && self.feec_syncs_task(prev_cpu),
        };
        // `current`'s wakee bookkeeping (the running thread's, or the CPU's idle task's):
        // select_task_rq_fair() begins a wake-up with record_wakee(p), run here in place,
        // and the placement reads the waker's flips it leaves
        let waker: &mut WakeeState = match curr {
            Some(c) => &mut self.threads[c].wakee,
            None => &mut self.idle_wakee[this_cpu],
        };
        #[cfg(debug_assertions)]
        let waker_before = *waker;
        if ttwu {
            select_fair::record_wakee(waker, tid, ctx.jiffies, ctx.hz);
        }
        let waker_flips = waker.wakee_flips;
        let synced = &self.ents[tid].avg;
        let task = FairWakeTask {
            id: tid,
            prev_cpu,
            allowed: &self.threads[tid].affinity,
            util_est: if self.s.options.pelt.util_est {
                pelt::task_util_est(synced, self.ue_ver)
            } else {
                pelt::task_util(synced)
            },
            uclamp_min: uclamp[0],
            uclamp_max: uclamp[1],
            load,
            synced_load: synced.load_avg,
            wakee_flips,
            recent_used_cpu,
            wake_flags,
        };
        // FairWakeParams::from_options(&self.s.options.fair), kept (the options do not change)
        let params = &self.wake_params;
        debug_assert_eq!(*params, FairWakeParams::from_options(&self.s.options.fair));
        let env = WakeEnv {
            rqs: &self.rqs,
            threads: &self.threads,
            p_avg: synced,
            util_est: self.s.options.pelt.util_est,
            ue_ver: self.ue_ver,
            p: tid,
            p_cpu: prev_cpu,
            p_attached: attached && ttwu,
            p_queued: false,
            idle_policy_possible: self.idle_policy_possible,
            sched_idle_cpu: self.s.options.sched.sched_idle_cpu,
            idle_curr: &self.idle_curr,
            sis_util: self.s.options.fair.sis_util.then_some(&self.doms),
        };
        let placed = select_fair::select_task_rq_fair_recorded(
            &env,
            &self.sdt,
            params,
            &ctx,
            &task,
            waker_flips,
            || self.find_energy_efficient_cpu(tid, prev_cpu, synced),
        );
        // the same placement and waker state as select_task_rq_fair() on the state before
        #[cfg(debug_assertions)]
        {
            let mut w = waker_before;
            let again = select_fair::select_task_rq_fair(
                &env,
                &self.sdt,
                params,
                &ctx,
                &task,
                &mut w,
                || self.find_energy_efficient_cpu(tid, prev_cpu, synced),
            );
            let kept = match curr {
                Some(c) => self.threads[c].wakee,
                None => self.idle_wakee[this_cpu],
            };
            debug_assert_eq!((again, w), (placed, kept));
        }
        if let Some(r) = placed.recent_used_cpu {
            self.threads[tid].recent_used_cpu = r;
        }
        if let Some(before) = unsynced.filter(|_| !placed.task_synced) {
            self.ents[tid].avg = before;
        }
        placed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Phase, SchedAttrs, Span, TaskSpec, Workload};

    fn task(task_policy: Option<SchedPolicy>, phase_policy: Option<SchedPolicy>) -> TaskSpec {
        let attrs = |policy| SchedAttrs {
            policy,
            ..SchedAttrs::default()
        };
        TaskSpec {
            name: "t".into(),
            instances: 1,
            loop_count: 1,
            delay_us: 0,
            attrs: attrs(task_policy),
            phases: vec![Phase {
                name: "p".into(),
                loop_count: 1,
                attrs: attrs(phase_policy),
                events: vec![],
            }],
            span: Span::default(),
        }
    }

    #[test]
    fn idle_policy_is_possible_only_where_the_workload_names_it() {
        let w = |tasks, default_policy| Workload {
            tasks,
            default_policy,
            ..Workload::default()
        };
        let (other, idle, batch) = (SchedPolicy::Other, SchedPolicy::Idle, SchedPolicy::Batch);
        assert!(!workload_may_use_idle_policy(&w(
            vec![task(None, None)],
            other
        )));
        assert!(!workload_may_use_idle_policy(&w(
            vec![task(Some(batch), Some(other))],
            other
        )));
        // the workload default, a task's policy, or one phase's policy is enough
        assert!(workload_may_use_idle_policy(&w(
            vec![task(None, None)],
            idle
        )));
        assert!(workload_may_use_idle_policy(&w(
            vec![task(None, None), task(Some(idle), None)],
            other
        )));
        assert!(workload_may_use_idle_policy(&w(
            vec![task(Some(other), Some(idle))],
            other
        )));
    }
}
