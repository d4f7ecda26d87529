//! `try_to_wake_up()` and `wake_up_new_task()` (kernel/sched/core.c, v6.11):
//! `select_task_rq()`, `set_task_cpu()` with the class's `migrate_task_rq()`,
//! `activate_task()`, `sched_wakeup[_new]`, `wakeup_preempt()`.

use crate::sim::*;

impl<'w> Sim<'w> {
    pub(in crate::sim) fn start_threads(&mut self, out: &mut Out<'_, '_>, now: Nanos) {
        self.alive = self.threads.len();
        for tid in 0..self.threads.len() {
            self.wake_up_new_task(out, tid, now, None);
        }
    }

    /// `wake_up_new_task()`: fork placement, `post_init_entity_util_avg()`, enqueue with
    /// ENQUEUE_INITIAL, `sched_wakeup_new`, preemption check.
    pub(in crate::sim) fn wake_up_new_task(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        now: Nanos,
        parent_cpu: Option<usize>,
    ) {
        // select_task_rq(p, task_cpu(p), WF_FORK): the parent's CPU (CPU 0 for the
        // threads rt-app's main thread creates at start).
        let from = parent_cpu.unwrap_or(0);
        self.threads[tid].recent_used_cpu = from;
        let cpu = if self.threads[tid].class == Class::Fair {
            let placed =
                self.select_task_rq_fair(tid, from, from, crate::policy::select_fair::WF_FORK, now);
            self.placements[placed.reason as usize] += 1;
            placed.cpu
        } else {
            self.select_task_rq_other(tid, from)
        };
        self.threads[tid].cpu = cpu;
        // Threads created at start share t_zero; a forked thread also starts from t_zero
        // (rt-app's thread_body(): t_first = t_zero), plus its delay.
        let start = if parent_cpu.is_some() { self.t0 } else { now };
        self.threads[tid].t_first =
            start + program::us(self.w.tasks[self.threads[tid].task].delay_us);
        self.update_rq_clock(cpu, now);
        if self.threads[tid].class == Class::Fair {
            // post_init_entity_util_avg() (v6.11): only a fair task gets an initial util
            let cfs_avg = self.rqs[cpu].cfs.avg;
            let (cap, weight) = (self.rqs[cpu].cap, self.ents[tid].load.weight);
            pelt::post_init_entity_util_avg(&mut self.ents[tid].avg, cap, &cfs_avg, weight);
        }
        self.enqueue_task(out, cpu, tid, now, true);
        if out.any.sched {
            let ev = TraceEvent::SchedWakeupNew {
                task: self.tref(tid),
                target_cpu: cpu as u32,
            };
            out.emit(&self.ctx(parent_cpu.unwrap_or(cpu), now), &ev, g_sched);
        }
        self.wakeup_preempt(cpu, tid);
    }

    /// `try_to_wake_up()` for a sleeping thread. `waker` is the CPU whose current task
    /// wakes it (a futex wake-up), whose context the `sched_wakeup` event carries; a timer
    /// wake-up is traced on the target CPU.
    pub(in crate::sim) fn try_to_wake_up(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        now: Nanos,
        waker: Option<usize>,
    ) {
        let prev = self.threads[tid].cpu;
        let cpu = match self.threads[tid].class {
            Class::Fair => {
                // A futex wake-up runs on the waker's CPU; a timer's on the sleeper's.
                let this_cpu = waker.unwrap_or(prev);
                let wf = crate::policy::select_fair::WF_TTWU;
                let placed = self.select_task_rq_fair(tid, prev, this_cpu, wf, now);
                self.placements[placed.reason as usize] += 1;
                placed.cpu
            }
            _ => self.select_task_rq_other(tid, prev),
        };
        if cpu != prev {
            self.migrate_sleeping(out, tid, prev, cpu, now);
            self.migrations[MigrationReason::WakeUp as usize] += 1;
        }
        self.threads[tid].wait_on = WaitOn::Nothing;
        if std::mem::take(&mut self.threads[tid].res_blocked) {
            self.nr_res_blocked -= 1;
        }
        self.update_rq_clock(cpu, now);
        self.enqueue_task(out, cpu, tid, now, false);
        if out.any.sched {
            let ev = TraceEvent::SchedWakeup {
                task: self.tref(tid),
                target_cpu: cpu as u32,
            };
            out.emit(&self.ctx(waker.unwrap_or(cpu), now), &ev, g_sched);
        }
        self.wakeup_preempt(cpu, tid);
    }

    /// `migrate_task_rq_fair()` for a task that is not on a runqueue.
    pub(in crate::sim) fn migrate_sleeping(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        from: usize,
        to: usize,
        now: Nanos,
    ) {
        // migrate_task_rq_fair() (v6.11; the CFS option: v6.5)
        let last = self.rqs[from].cfs.avg.last_update_time;
        let w = self.ents[tid].load.weight;
        pelt::remove_entity_load_avg(
            &mut self.rqs[from].cfs.removed,
            &mut self.ents[tid].avg,
            last,
            w,
        );
        // migrate_se_pelt_lag(): off an idle CPU, whose clock may be stale, the blocked
        // averages are decayed further to the estimated now.
        if self.s.options.pelt.migrate_pelt_lag
            && self.rqs[from].curr.is_none()
            && !pelt::load_avg_is_decayed(&self.ents[tid].avg)
        {
            let est = self.rqs[from].clock.migrate_lag_now(last, now);
            pelt::update_load_avg_blocked_se(&mut self.ents[tid].avg, est, w);
        }
        self.ents[tid].avg.last_update_time = 0;
        if self.s.fair.variant == FairVariant::Cfs && self.threads[tid].class == Class::Fair {
            // v6.5: a waking task's vruntime is made relative to its old queue here and
            // absolute on the new one in enqueue_entity() (ENQUEUE_MIGRATED).
            let min = self.rqs[from].cfs.min_vruntime;
            let e = &mut self.ents[tid];
            e.vruntime = e.vruntime.wrapping_sub(min);
        }
        self.threads[tid].enqueue_migrated = true;
        self.trace_migrate(out, tid, from, to, to, now);
        self.threads[tid].cpu = to;
    }
}
