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
        // task_tick_rt() / task_tick_dl() update their class's signal (v6.11); the tick of
        // a fair task leaves them to the class hooks and update_other_load_avgs().
        match class {
            Class::Rt => self.update_rt_pelt(out, cpu, true, now),
            Class::Dl => self.update_dl_pelt(out, cpu, true, now),
            Class::Fair => false,
        };
        match class {
            Class::Fair => {
                // task_tick_fair() -> entity_tick()
                let fair = self.s.fair;
                let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
                let (_, resched) = rq.cfs.update_curr(ents, now, &fair);
                self.update_load_avg(out, cpu, curr, UPDATE_TG, now);
                let tick_preempt = self.rqs[cpu].cfs.check_preempt_tick(&self.ents, &fair);
                if resched || tick_preempt {
                    self.set_resched(cpu);
                }
            }
            Class::Rt => {
                // task_tick_rt(): SCHED_RR uses up its time slice one jiffy at a time and
                // goes to the tail of its list when others share its priority.
                if self.threads[curr].policy == SchedPolicy::Rr {
                    let tick = self.s.tick_ns;
                    let t = &mut self.threads[curr];
                    t.rr_slice = t.rr_slice.saturating_sub(tick);
                    if t.rr_slice == 0 {
                        t.rr_slice = rtq::RR_TIMESLICE_NS;
                        let (prio, key) = (t.eff_prio, t.rt_key);
                        let rt = &mut self.rqs[cpu].rt;
                        if rt.iter().filter(|&x| x != curr).count() > 0 {
                            rt.dequeue(curr, key);
                            self.threads[curr].rt_key = rt.enqueue(curr, prio, false);
                            self.set_resched(cpu);
                        }
                    }
                }
            }
            Class::Dl => {
                // task_tick_dl() -> update_curr_dl(); with HRTICK off the overrun is seen here
                self.update_curr_dl(cpu, curr, now);
                if let Some(e) = self.rqs[cpu].dl.earliest() {
                    if e < self.threads[curr].dl.deadline {
                        self.set_resched(cpu);
                    }
                }
            }
        }
        // task_tick_fair(): update_misfit_status(curr, rq)
        if class == Class::Fair {
            self.update_misfit(cpu, Some(curr), now);
            self.check_update_overutilized_status(out, cpu, now);
        }
        // sched_balance_trigger() and nohz_balancer_kick()
        if self.s.options.balance.enabled {
            self.balance_tick(out, cpu, now);
        }
    }
}
