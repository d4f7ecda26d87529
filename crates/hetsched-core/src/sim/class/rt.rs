//! The RT class's placement (kernel/sched/rt.c, v6.11): `select_task_rq_rt()`, reduced, and
//! the `cpupri` ranking it reads.

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
    pub(in crate::sim) fn select_task_rq_other(&self, tid: usize, prev: usize) -> usize {
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
}
