//! The stop class (kernel/sched/stop_task.c, v6.11) and the stopper's work: moving a
//! running task. `migration_cpu_stop()` after `set_cpus_allowed_ptr()` (an affinity that
//! excludes the CPU) and `active_load_balance_cpu_stop()` (the balancer's active
//! migration). The stopper is not a thread here: its work happens at once, and the CPU
//! reschedules from the moved task.

use crate::sim::*;

impl<'w> Sim<'w> {
    /// `set_cpus_allowed_ptr()` → `migration_cpu_stop()`: the running task left its
    /// allowed CPUs; it is moved to the CPU `select_fallback_rq()` would choose. Called
    /// from `__schedule()`, which then switches away from it.
    pub(in crate::sim) fn move_off_disallowed(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        // __set_cpus_allowed_ptr_locked(): dest_cpu = cpumask_any_and_distribute(), the
        // next allowed CPU after the one it returned last (lib/cpumask.c, v6.11).
        let aff = self.threads[tid].affinity;
        let n = self.p.nr_cpus();
        let start = (self.distribute_prev + 1) % n.max(1);
        let dst = (0..n)
            .map(|i| (start + i) % n)
            .find(|&c| aff.contains(c))
            .unwrap_or(cpu);
        self.distribute_prev = dst;
        let m = Migration {
            task: tid,
            src: cpu,
            dst,
            reason: MigrationReason::Affinity,
        };
        self.detach_running(out, m, now);
    }

    /// A stopper moves `cpu`'s running task (`migration_cpu_stop()` /
    /// `active_load_balance_cpu_stop()`); the CPU reschedules from it.
    pub(in crate::sim) fn move_running(&mut self, out: &mut Out<'_, '_>, m: Migration, now: Nanos) {
        self.update_rq_clock(m.src, now);
        if self.threads[m.task].class == Class::Fair {
            let fair = self.s.fair;
            let (rq, ents) = (&mut self.rqs[m.src], &mut self.ents);
            rq.cfs.update_curr(ents, now, &fair);
        }
        self.detach_running(out, m, now);
        self.rqs[m.src].prev_moved = true;
        self.set_resched(m.src);
    }

    pub(in crate::sim) fn detach_running(
        &mut self,
        out: &mut Out<'_, '_>,
        m: Migration,
        now: Nanos,
    ) {
        let (cpu, tid) = (m.src, m.task);
        self.account_op(cpu, now);
        if self.threads[tid].class == Class::Fair {
            self.update_load_avg(out, cpu, tid, 0, now);
            let (rq, ents) = (&mut self.rqs[cpu], &self.ents);
            rq.cfs.put_prev_entity(ents, tid);
        }
        self.rqs[cpu].curr = None;
        self.move_queued(out, m, now);
        // the CPU switches away from the moved task
        self.rqs[cpu].curr = Some(tid);
    }
}
