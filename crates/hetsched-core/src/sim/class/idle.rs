//! The idle task's class (kernel/sched/idle.c, v6.11) and what the core does when a CPU
//! enters or leaves idle: `idle_stamp` and `avg_idle` (the newidle balance's gate),
//! `nohz_balance_enter_idle()`, and `update_idle_rq_clock_pelt()`. The idle task is not a
//! thread here: `rq.curr == None` is the idle task running.

use crate::sim::*;

impl<'w> Sim<'w> {
    /// `pick_next_task_idle()` is about to run: the CPU goes idle at `now`
    /// (`rq->idle_stamp`, set by `sched_balance_newidle()`), and
    /// `nohz_balance_enter_idle()` marks its blocked load for the idle load balancer.
    /// Returns the rq, for the rest of the switch to the idle task on the same borrow
    /// ([`set_next_task_idle`]).
    pub(in crate::sim) fn enter_idle(&mut self, cpu: usize, now: Nanos) -> &mut Rq {
        let rq = &mut self.rqs[cpu];
        rq.idle_stamp = now;
        rq.has_blocked_load = true;
        self.nohz_has_blocked = true;
        // nohz_balance_enter_idle() sets nohz.needs_update, and the next kick's
        // NOHZ_NEXT_KICK pulls nohz.next_balance in to this CPU's next_balance; done
        // here at once (a simplification: the kernel waits for a busy CPU's tick).
        self.nohz_next_balance_j = self.nohz_next_balance_j.min(rq.next_balance);
        rq
    }

    /// The end of `ttwu_do_activate()` (kernel/sched/core.c, v6.11) after a wake-up onto
    /// `cpu`: if the CPU went idle since the last such update (`rq->idle_stamp` set by the
    /// newidle pass and left set by a task that arrived by fork or migration, as in the
    /// kernel), the idle period up to now goes into `rq->avg_idle`
    /// ([`crate::sched::update_rq_avg_idle`], `sched.avg_idle`).
    pub(in crate::sim) fn ttwu_update_avg_idle(&mut self, cpu: usize, now: Nanos) {
        let version = self.s.options.sched.avg_idle;
        let rq = &mut self.rqs[cpu];
        if rq.idle_stamp == 0 {
            return;
        }
        let delta = now.saturating_sub(rq.idle_stamp);
        rq.avg_idle =
            crate::sched::update_rq_avg_idle(rq.avg_idle, delta, rq.max_idle_balance_cost, version);
        rq.idle_stamp = 0;
    }
}

/// `set_next_task_idle()`: `update_idle_rq_clock_pelt()` before entering idle (the PELT
/// clock's lost idle time when the rq's util sums saturate), on the rq
/// [`Sim::enter_idle`] returned.
pub(in crate::sim) fn set_next_task_idle(rq: &mut Rq) {
    let total = u64::from(rq.cfs.avg.util_sum)
        + u64::from(rq.avg_rt.util_sum)
        + u64::from(rq.avg_dl.util_sum);
    rq.clock.update_idle(total);
}
