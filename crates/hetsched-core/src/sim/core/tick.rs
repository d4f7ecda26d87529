//! `sched_tick()` (kernel/sched/core.c, v6.11) on a busy CPU: the class's `task_tick()`,
//! then `sched_balance_trigger()`. Idle CPUs are tickless.

use crate::sim::*;

impl<'w> Sim<'w> {
    /// `sched_tick()` on a busy CPU; idle CPUs have stopped their tick.
    pub(in crate::sim) fn tick(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        let Some(curr) = self.rqs[cpu].curr else {
            return; // tick stopped when the CPU went idle (tickless idle)
        };
        self.ensure_tick(cpu, now);
        self.update_rq_clock(cpu, now);
        let class = self.threads[curr].class;
        class.task_tick(self, out, cpu, curr, now);
        // the sched governor's sched_freq_tick() (seed 004), inside the rq lock
        self.sched_freq_tick(out, cpu, now);
        // sched_balance_trigger() and nohz_balancer_kick()
        if self.s.options.balance.enabled {
            self.balance_tick(out, cpu, now);
        }
        // run_local_timers(): the timer softirq at the tick's irq exit
        if !self.timers[cpu].is_empty() {
            self.run_timers(out, cpu, now);
        }
    }
}
