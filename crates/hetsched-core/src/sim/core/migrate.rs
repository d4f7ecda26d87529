//! Moving a queued task between runqueues: `detach_task()` + `attach_task()` of the load
//! balancer and `move_queued_task()` (kernel/sched/fair.c, core.c, v6.11), with
//! `sched_migrate_task` and the destination's preemption check.

use crate::sim::*;

impl<'w> Sim<'w> {
    /// `detach_task()` + `attach_task()`: moves a queued task.
    pub(in crate::sim) fn move_queued(&mut self, out: &mut Out<'_, '_>, m: Migration, now: Nanos) {
        self.move_queued_on(out, m, m.dst, now);
    }

    /// [`Sim::move_queued`] done by code running on `on` (the CPU whose context
    /// `sched_migrate_task` carries: the puller's, or the source's stopper).
    pub(in crate::sim) fn move_queued_on(
        &mut self,
        out: &mut Out<'_, '_>,
        m: Migration,
        on: usize,
        now: Nanos,
    ) {
        self.update_rq_clock(m.src, now);
        self.dequeue_task(out, m.src, m.task, now, class::DEQUEUE_MIGRATING);
        self.trace_migrate(out, m.task, m.src, m.dst, on, now);
        self.threads[m.task].enqueue_migrated = true;
        self.update_rq_clock(m.dst, now);
        self.enqueue_task(out, m.dst, m.task, now, 0);
        self.migrations[m.reason as usize] += 1;
        self.wakeup_preempt(m.dst, m.task);
    }
}
