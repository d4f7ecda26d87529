//! The scheduler core, `kernel/sched/core.c` (v6.11): what all classes share.
//! `enqueue_task()`/`dequeue_task()` (uclamp, `add_nr_running()`, the class hook),
//! `wakeup_preempt()`, `resched_curr()` and the rq clock. The classes are reached only
//! through their hooks; wake-up, `__schedule()`, the tick, the stopper and the system calls
//! have a module each.

mod schedule;
mod stop;
mod syscalls;
mod tick;
mod wake;

use crate::sim::*;

impl<'w> Sim<'w> {
    /// `update_rq_clock()`: advances the task clock and the PELT clock of `cpu`.
    pub(in crate::sim) fn update_rq_clock(&mut self, cpu: usize, now: Nanos) {
        let rq = &mut self.rqs[cpu];
        rq.clock
            .update(now, rq.curr.is_none(), rq.cap, rq.freq_scale);
    }

    pub(in crate::sim) fn set_resched(&mut self, cpu: usize) {
        if !self.rqs[cpu].need_resched {
            self.rqs[cpu].need_resched = true;
            self.resched.push(cpu);
        }
    }

    /// Keeps the policy view and the root-domain counters in step with `cpu`'s rq.
    pub(in crate::sim) fn refresh_view(&mut self, cpu: usize) {
        let rq = &self.rqs[cpu];
        let idle = rq.curr.is_none()
            && rq.cfs.nr_running == 0
            && rq.rt.nr_running() == 0
            && rq.dl.nr_running() == 0;
        let nr = rq.cfs.nr_running;
        let v = &mut self.view[cpu];
        self.nr_idle = self.nr_idle + usize::from(idle) - usize::from(v.idle);
        self.nr_overloaded =
            self.nr_overloaded + usize::from(nr >= 2) - usize::from(v.nr_running >= 2);
        v.idle = idle;
        v.nr_running = nr;
    }

    /// `rd->overloaded`: some rq has more than one runnable task
    /// (`sched_update_overloaded` / `add_nr_running`, kernel/sched/sched.h).
    #[allow(dead_code)]
    pub(in crate::sim) fn rd_overloaded(&self) -> bool {
        self.rd_overload
    }

    /// `enqueue_task()`: the class's enqueue.
    pub(in crate::sim) fn enqueue_task(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        initial: bool,
    ) {
        self.uclamp_inc(cpu, tid);
        match self.threads[tid].class {
            Class::Fair => self.enqueue_fair(out, cpu, tid, now, initial),
            Class::Rt => {
                self.threads[tid].enqueue_migrated = false;
                // enqueue_task_rt(): a woken task goes to the tail of its priority
                let prio = self.threads[tid].eff_prio;
                self.threads[tid].rt_key = self.rqs[cpu].rt.enqueue(tid, prio, false);
                self.threads[tid].state = TState::Runnable;
                self.threads[tid].cpu = cpu;
                self.refresh_view(cpu);
            }
            Class::Dl => {
                self.threads[tid].enqueue_migrated = false;
                // enqueue_task_dl(): ENQUEUE_WAKEUP → update_dl_entity(); a new task
                // starts its first period (setup_new_dl_entity()).
                let t = &mut self.threads[tid];
                if initial || t.dl.deadline == 0 {
                    t.dl.new_period(now);
                } else if t.state != TState::Runnable {
                    t.dl.update_at_wakeup(now);
                }
                let d = t.dl.deadline;
                t.dl_key = self.rqs[cpu].dl.enqueue(tid, d);
                t.state = TState::Runnable;
                t.cpu = cpu;
                self.refresh_view(cpu);
            }
        }
        // add_nr_running() (kernel/sched/sched.h, v6.11), for every class: a second
        // runnable task overloads the root domain (set_rd_overloaded()).
        let rq = &self.rqs[cpu];
        if rq.cfs.nr_running as usize + rq.rt.nr_running() + rq.dl.nr_running() >= 2 {
            self.rd_overload = true;
        }
        if self.threads[tid].class != Class::Fair {
            // enqueue_top_rt_rq() / add_running_bw() -> cpufreq_update_util(rq, 0)
            self.cpufreq_update_util(out, cpu, 0, now);
        }
    }

    /// `dequeue_task()`: the class's dequeue.
    pub(in crate::sim) fn dequeue_task(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        sleep: bool,
    ) {
        self.uclamp_dec(cpu, tid);
        match self.threads[tid].class {
            Class::Fair => self.dequeue_fair(out, cpu, tid, now, sleep),
            Class::Rt => {
                let key = self.threads[tid].rt_key;
                self.rqs[cpu].rt.dequeue(tid, key);
                self.refresh_view(cpu);
            }
            Class::Dl => {
                let key = self.threads[tid].dl_key;
                self.rqs[cpu].dl.dequeue(tid, key);
                self.refresh_view(cpu);
            }
        }
        if self.threads[tid].class != Class::Fair {
            // dequeue_top_rt_rq() / sub_running_bw() -> cpufreq_update_util(rq, 0)
            self.cpufreq_update_util(out, cpu, 0, now);
        }
    }

    /// `wakeup_preempt()`: reschedule `cpu` if idle, if `tid`'s class is above curr's
    /// (`sched_class_above()`), or if curr's class says so: a higher RT priority
    /// (`wakeup_preempt_rt()`), an earlier deadline (`wakeup_preempt_dl()`), or the fair
    /// class's rule (`check_preempt_wakeup_fair()`).
    pub(in crate::sim) fn wakeup_preempt(&mut self, cpu: usize, tid: usize) {
        match self.rqs[cpu].curr {
            None => self.set_resched(cpu),
            Some(c) => {
                let (cc, pc) = (self.threads[c].class, self.threads[tid].class);
                if pc != cc {
                    if pc > cc {
                        self.set_resched(cpu);
                    }
                    return;
                }
                match pc {
                    Class::Rt => {
                        if self.threads[tid].eff_prio < self.threads[c].eff_prio {
                            self.set_resched(cpu);
                        }
                    }
                    Class::Dl => {
                        if self.threads[tid].dl.deadline < self.threads[c].dl.deadline {
                            self.set_resched(cpu);
                        }
                    }
                    Class::Fair => {
                        let curr_idle = self.threads[c].policy == SchedPolicy::Idle;
                        let wp = self.threads[tid].policy;
                        let fair = self.s.fair;
                        if self.rqs[cpu].cfs.check_preempt_wakeup(
                            &self.ents,
                            tid,
                            curr_idle,
                            wp == SchedPolicy::Idle,
                            wp == SchedPolicy::Other,
                            &fair,
                        ) {
                            self.set_resched(cpu);
                        }
                    }
                }
            }
        }
    }
}
