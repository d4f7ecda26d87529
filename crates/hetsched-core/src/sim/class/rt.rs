//! The RT class's hooks (kernel/sched/rt.c, v6.11): the priority queue, SCHED_RR's time
//! slice, the RT PELT signal at its hooks, and `select_task_rq_rt()`, reduced, with the
//! `cpupri` ranking it reads (the deadline class shares that placement rule).

use crate::sim::*;

impl<'w> Sim<'w> {
    /// Running priority of `cpu` for RT/DL placement: the current task's `prio` (a DL task
    /// counts as -1), 140 when idle (`cpupri` `CPUPRI_IDLE` ranks below normal).
    pub(in crate::sim) fn running_prio(&self, cpu: usize) -> i32 {
        match self.rqs[cpu].curr {
            None if self.view[cpu].idle => 140,
            None => 139,
            Some(c) => match self.threads[c].class {
                Class::Fair => 120,
                _ => self.threads[c].eff_prio,
            },
        }
    }

    /// `select_task_rq_rt()` / `select_task_rq_dl()` (kernel/sched/rt.c, deadline.c,
    /// v6.11), reduced: stay on the previous CPU unless what runs there would keep the
    /// task waiting (an RT task of higher or equal priority, an earlier deadline, or a
    /// pinned RT task); then `find_lowest_rq()`: the allowed CPU running the
    /// lowest-priority work (idle first), preferring the previous CPU, then the lowest
    /// number. Capacity fitness and the push/pull balancer are the RT work's.
    pub(in crate::sim) fn select_task_rq_rt(&self, tid: usize, prev: usize) -> usize {
        let aff = self.threads[tid].affinity;
        let p = &self.threads[tid];
        let blocked = |cpu: usize| -> bool {
            let rq = &self.rqs[cpu];
            match p.class {
                Class::Dl => rq.dl.earliest().is_some_and(|d| d <= p.dl.deadline),
                _ => {
                    rq.dl.nr_running() > 0
                        || rq.curr.is_some_and(|c| {
                            let ct = &self.threads[c];
                            ct.class != Class::Fair
                                && (ct.eff_prio <= p.eff_prio || ct.affinity.weight() < 2)
                        })
                }
            }
        };
        if aff.contains(prev) && !blocked(prev) {
            return prev;
        }
        let best = aff
            .iter()
            .filter(|&c| c < self.p.nr_cpus())
            .max_by_key(|&c| (self.running_prio(c), c == prev, std::cmp::Reverse(c)));
        match best {
            Some(c) if self.running_prio(c) > p.eff_prio || !aff.contains(prev) => c,
            _ => prev,
        }
    }

    /// `enqueue_task_rt()`: a woken task goes to the tail of its priority;
    /// `enqueue_top_rt_rq()` → `add_nr_running()`, `cpufreq_update_util()`.
    pub(in crate::sim) fn enqueue_task_rt(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        self.threads[tid].enqueue_migrated = false;
        let prio = self.threads[tid].eff_prio;
        self.threads[tid].rt_key = self.rqs[cpu].rt.enqueue(tid, prio, false);
        self.threads[tid].state = TState::Runnable;
        self.threads[tid].cpu = cpu;
        self.refresh_view(cpu);
        self.add_nr_running(cpu);
        self.cpufreq_update_util(out, cpu, 0, now);
    }

    /// `dequeue_task_rt()`; `dequeue_top_rt_rq()` → `cpufreq_update_util()`.
    pub(in crate::sim) fn dequeue_task_rt(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        let key = self.threads[tid].rt_key;
        self.rqs[cpu].rt.dequeue(tid, key);
        self.refresh_view(cpu);
        self.cpufreq_update_util(out, cpu, 0, now);
    }

    /// `wakeup_preempt_rt()`: a higher RT priority preempts.
    pub(in crate::sim) fn wakeup_preempt_rt(&mut self, cpu: usize, curr: usize, tid: usize) {
        if self.threads[tid].eff_prio < self.threads[curr].eff_prio {
            self.set_resched(cpu);
        }
    }

    /// `put_prev_task_rt()`: the RT signal, running until now.
    pub(in crate::sim) fn put_prev_task_rt(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        now: Nanos,
    ) {
        self.update_rt_pelt(out, cpu, true, now);
    }

    /// `set_next_task_rt()`: the RT signal, running only if `prev` was RT (`rq->curr`
    /// was not RT until now otherwise).
    pub(in crate::sim) fn set_next_task_rt(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        prev: Option<usize>,
        now: Nanos,
    ) {
        let running = prev.is_some_and(|p| self.threads[p].class == Class::Rt);
        self.update_rt_pelt(out, cpu, running, now);
    }

    /// `task_tick_rt()`: the RT signal (v6.11 updates it here, not at every tick); SCHED_RR
    /// uses up its time slice one jiffy at a time and goes to the tail of its list when
    /// others share its priority.
    pub(in crate::sim) fn task_tick_rt(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        curr: usize,
        now: Nanos,
    ) {
        self.update_rt_pelt(out, cpu, true, now);
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

    /// `yield_task_rt()`: to the tail of its priority's list.
    pub(in crate::sim) fn yield_task_rt(&mut self, cpu: usize, tid: usize) {
        let (prio, key) = (self.threads[tid].eff_prio, self.threads[tid].rt_key);
        let rt = &mut self.rqs[cpu].rt;
        rt.dequeue(tid, key);
        self.threads[tid].rt_key = rt.enqueue(tid, prio, false);
    }
}
