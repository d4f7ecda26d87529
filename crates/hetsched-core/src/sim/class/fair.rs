//! The fair class's hooks (kernel/sched/fair.c, v6.11): `enqueue_task_fair()`,
//! `dequeue_task_fair()`, `update_curr()` with its resched verdict, `reweight_task()`. The
//! EEVDF/CFS queue itself is crate::sched::fair.

use crate::sim::*;

impl<'w> Sim<'w> {
    /// `update_curr()` of `cpu`'s fair queue, with its verdict: EEVDF's `update_deadline()`
    /// calls `resched_curr()` when curr has used up its request and others are queued
    /// (kernel/sched/fair.c, v6.11). Every caller outside the tick goes through here, so an
    /// expired slice is noticed at the next enqueue or dequeue on the CPU, not the next tick.
    pub(in crate::sim) fn update_curr_fair_resched(&mut self, cpu: usize, now: Nanos) {
        let fair = self.s.fair;
        let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
        if rq.cfs.update_curr(ents, now, &fair).1 {
            self.set_resched(cpu);
        }
    }

    /// `enqueue_task_fair()`: util_est, PELT (attach), placement, queueing.
    pub(in crate::sim) fn enqueue_fair(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        initial: bool,
    ) {
        let fair = self.s.fair;
        if self.s.options.pelt.util_est {
            let a = self.ents[tid].avg;
            pelt::util_est_enqueue(&mut self.rqs[cpu].cfs.avg, &a, self.ue_ver);
            self.trace_util_est(out, cpu, None, now);
        }
        // update_curr() of the queue's current entity before placement.
        self.update_curr_fair_resched(cpu, now);
        self.update_load_avg(out, cpu, tid, UPDATE_TG | DO_ATTACH, now);
        let migrated = std::mem::take(&mut self.threads[tid].enqueue_migrated);
        // ENQUEUE_WAKEUP: a sleeping task, not a new one nor a queued one moving or
        // being re-queued (a balancer move, an affinity or priority change).
        let wakeup = !initial && self.threads[tid].state != TState::Runnable;
        let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
        if fair.variant == FairVariant::Cfs && self.threads[tid].state == TState::Runnable {
            // a migrating queued task: make its relative vruntime absolute here
            rq.cfs.cfs_migrate_in(ents, tid);
        } else {
            if fair.variant == FairVariant::Cfs && migrated {
                // v6.5 enqueue_entity(): renorm for ENQUEUE_MIGRATED, then place_entity()
                rq.cfs.cfs_migrate_in(ents, tid);
            }
            // ENQUEUE_INITIAL: wake_up_new_task() passes it from v6.12 (fair.enqueue_initial);
            // the CFS rules' `initial` is the fork-time placement (START_DEBIT).
            let enqueue_initial = initial
                && (fair.variant == FairVariant::Cfs || self.s.options.fair.enqueue_initial);
            rq.cfs.place_entity(ents, tid, enqueue_initial, &fair);
        }
        if migrated {
            // enqueue_entity(): "Entity has migrated, no longer consider this task hot"
            ents[tid].exec_start = 0;
        }
        rq.cfs.enqueue_entity(ents, tid);
        self.threads[tid].state = TState::Runnable;
        self.threads[tid].cpu = cpu;
        // account_entity_enqueue(): at the head of cfs_tasks
        self.stamp_ctr += 1;
        self.cfs_stamp[tid] = self.stamp_ctr;
        self.refresh_view(cpu);
        // enqueue_task_fair() (v6.11): `task_new = !(flags & ENQUEUE_WAKEUP)`; only a
        // wake-up checks the overutilized status.
        if wakeup {
            self.check_update_overutilized_status(out, cpu, now);
        }
    }

    /// `dequeue_task_fair()`. `sleep` is DEQUEUE_SLEEP; otherwise a migration (DO_DETACH).
    pub(in crate::sim) fn dequeue_fair(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        sleep: bool,
    ) {
        let fair = self.s.fair;
        if self.s.options.pelt.util_est {
            let a = self.ents[tid].avg;
            pelt::util_est_dequeue(&mut self.rqs[cpu].cfs.avg, &a, self.ue_ver);
        }
        self.update_curr_fair_resched(cpu, now);
        let flags = if sleep {
            UPDATE_TG
        } else {
            UPDATE_TG | DO_DETACH
        };
        self.update_load_avg(out, cpu, tid, flags, now);
        let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
        rq.cfs.dequeue_entity(ents, tid, sleep, &fair);
        if !sleep {
            self.ents[tid].avg.last_update_time = 0;
        }
        if self.s.options.pelt.util_est {
            pelt::util_est_update(
                &mut self.ents[tid].avg,
                sleep,
                self.ue_ver,
                self.rqs[cpu].cap,
            );
            self.trace_util_est(out, cpu, Some(tid), now);
        }
        self.refresh_view(cpu);
    }

    /// The weight of fair `tid` follows its policy and nice, as `set_user_nice()` and
    /// `__sched_setscheduler()` change it (v6.11): `dequeue_task(DEQUEUE_SAVE)` (util_est,
    /// `update_curr()`, PELT, the lag), `put_prev_task()`, `set_load_weight()` →
    /// `reweight_task()` → `reweight_entity()` (the lag scaled to the new weight, the
    /// load average recomputed), `enqueue_task(ENQUEUE_RESTORE)` (`place_entity()` keeps
    /// the lag and takes a new deadline), `set_next_task()`, `prio_changed_fair()`.
    pub(in crate::sim) fn reweight_fair(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        old_prio: i32,
    ) {
        let t = &self.threads[tid];
        let lw = LoadWeight::for_nice(t.nice, t.policy == SchedPolicy::Idle);
        let old_w = self.ents[tid].load.weight;
        if t.class != Class::Fair || lw == self.ents[tid].load {
            self.ents[tid].load = lw;
            return;
        }
        let now = self.q.now();
        let cpu = t.cpu;
        let fair = self.s.fair;
        let queued = self.ents[tid].on_rq;
        let running = self.rqs[cpu].curr == Some(tid);
        self.update_rq_clock(cpu, now);
        if queued {
            if self.s.options.pelt.util_est {
                let a = self.ents[tid].avg;
                pelt::util_est_dequeue(&mut self.rqs[cpu].cfs.avg, &a, self.ue_ver);
            }
            self.update_curr_fair_resched(cpu, now);
            self.update_load_avg(out, cpu, tid, UPDATE_TG, now);
            let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
            rq.cfs.dequeue_entity(ents, tid, false, &fair);
        }
        if running {
            let (rq, ents) = (&mut self.rqs[cpu], &self.ents);
            rq.cfs.put_prev_entity(ents, tid);
        }
        {
            let (rq, e) = (&mut self.rqs[cpu], &mut self.ents[tid]);
            e.vlag = (i128::from(e.vlag) * i128::from(old_w) / i128::from(lw.weight)) as i64;
            pelt::reweight_entity_load_avg(&mut rq.cfs.avg, &mut e.avg, old_w, lw.weight);
            e.load = lw;
        }
        if queued {
            if self.s.options.pelt.util_est {
                let a = self.ents[tid].avg;
                pelt::util_est_enqueue(&mut self.rqs[cpu].cfs.avg, &a, self.ue_ver);
            }
            self.update_curr_fair_resched(cpu, now);
            self.update_load_avg(out, cpu, tid, UPDATE_TG | DO_ATTACH, now);
            let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
            if fair.variant == FairVariant::Cfs {
                rq.cfs.cfs_migrate_in(ents, tid); // v6.5: renorm without ENQUEUE_WAKEUP
            } else {
                rq.cfs.place_entity(ents, tid, false, &fair);
            }
            rq.cfs.enqueue_entity(ents, tid);
        }
        if running {
            let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
            rq.cfs.set_next_entity(ents, tid, now);
        }
        self.refresh_view(cpu);
        // prio_changed_fair(): the running task reschedules when its priority dropped; a
        // queued one is checked against curr.
        if queued && self.rqs[cpu].cfs.nr_running > 1 {
            if running {
                if self.threads[tid].eff_prio > old_prio {
                    self.set_resched(cpu);
                }
            } else {
                self.wakeup_preempt(cpu, tid);
            }
        }
    }
}
