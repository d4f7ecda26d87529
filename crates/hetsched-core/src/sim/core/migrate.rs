//! Moving a queued task between runqueues: `detach_task()` + `attach_task()` of the load
//! balancer and `move_queued_task()` (kernel/sched/fair.c, core.c, v6.11), with
//! `sched_migrate_task` and the destination's preemption check.

use crate::sim::*;

impl<'w> Sim<'w> {
    /// [`Sim::detach_task`] then [`Sim::attach_task`]: moves a queued task, done by code
    /// running on `on` (the CPU whose context `sched_migrate_task` carries: the puller's,
    /// or the source's stopper).
    pub(in crate::sim) fn move_queued_on(
        &mut self,
        out: &mut Out<'_, '_>,
        m: Migration,
        on: usize,
        now: Nanos,
    ) {
        self.detach_task(out, m, on, now);
        self.attach_task(out, m, now);
    }

    /// `detach_task()` (kernel/sched/fair.c, v6.11): the task leaves the source
    /// (`deactivate_task(DEQUEUE_NOCLOCK)`, then `set_task_cpu()`, which traces
    /// `sched_migrate_task` on `on`).
    pub(in crate::sim) fn detach_task(
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
        self.migrations[m.reason as usize] += 1;
    }

    /// `attach_task()` (kernel/sched/fair.c, v6.11): `activate_task()` on the destination
    /// (ENQUEUE_MIGRATING: `p->on_rq` is still TASK_ON_RQ_MIGRATING), then
    /// `wakeup_preempt()`.
    pub(in crate::sim) fn attach_task(&mut self, out: &mut Out<'_, '_>, m: Migration, now: Nanos) {
        self.update_rq_clock(m.dst, now);
        self.enqueue_task(out, m.dst, m.task, now, class::ENQUEUE_MIGRATING);
        self.wakeup_preempt(m.dst, m.task);
    }
}
