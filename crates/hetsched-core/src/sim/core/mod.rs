//! The scheduler core, `kernel/sched/core.c` (v6.11): what all classes share.
//! `enqueue_task()`/`dequeue_task()` (uclamp, `add_nr_running()`, the class hook),
//! `wakeup_preempt()`, `resched_curr()` and the rq clock. The classes are reached only
//! through their hooks; wake-up, `__schedule()`, the tick, the stopper and the system calls
//! have a module each.

mod migrate;
mod prio;
mod schedule;
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

    /// Keeps the policy view, the root-domain counters and the balancer's generation of
    /// `cpu` ([`Sim::lb_cpu_changed`]) in step with `cpu`'s rq (its task counts or current
    /// task changed). Inlined at its callers (about 40 instructions, 1.1 M calls on
    /// `periodic`), which have just indexed the same rq.
    #[inline(always)]
    pub(in crate::sim) fn refresh_view(&mut self, cpu: usize) {
        let rq = &self.rqs[cpu];
        let idle = rq_idle(rq);
        let nr = rq.cfs.nr_running;
        let v = &mut self.view[cpu];
        self.nr_idle = self.nr_idle + usize::from(idle) - usize::from(v.idle);
        self.nr_overloaded =
            self.nr_overloaded + usize::from(nr >= 2) - usize::from(v.nr_running >= 2);
        v.idle = idle;
        v.nr_running = nr;
        self.lb_cpu_changed(cpu);
    }

    /// `rd->overloaded`: some rq has more than one runnable task
    /// (`sched_update_overloaded` / `add_nr_running`, kernel/sched/sched.h).
    #[allow(dead_code)]
    pub(in crate::sim) fn rd_overloaded(&self) -> bool {
        self.rd_overload
    }

    /// `enqueue_task(rq, p, flags)`: `uclamp_rq_inc()`, then the class's hook.
    pub(in crate::sim) fn enqueue_task(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        flags: u32,
    ) {
        self.uclamp_inc(cpu, tid);
        let class = self.threads[tid].class;
        class.enqueue_task(self, out, cpu, tid, now, flags);
    }

    /// `add_nr_running()` (kernel/sched/sched.h, v6.11), which every class's enqueue
    /// calls: a second runnable task overloads the root domain (`set_rd_overloaded()`).
    pub(in crate::sim) fn add_nr_running(&mut self, cpu: usize) {
        if nr_running_ge2(&self.rqs[cpu]) {
            self.rd_overload = true;
        }
    }

    /// `dequeue_task(rq, p, flags)`: `uclamp_rq_dec()`, then the class's hook.
    pub(in crate::sim) fn dequeue_task(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        flags: u32,
    ) {
        self.uclamp_dec(cpu, tid);
        let class = self.threads[tid].class;
        class.dequeue_task(self, out, cpu, tid, now, flags);
    }

    /// `wakeup_preempt()`: reschedule `cpu` if idle, if `tid`'s class is above curr's
    /// (`sched_class_above()`), or if curr's class says so (its `wakeup_preempt` hook).
    ///
    /// Inline at its callers up to the idle CPU's case (on `large` nearly every call),
    /// so that it does not pay the prologue the class's hook needs: the rest is
    /// [`Sim::wakeup_preempt_curr`], out of line.
    #[inline(always)]
    pub(in crate::sim) fn wakeup_preempt(&mut self, cpu: usize, tid: usize) {
        match self.rqs[cpu].curr {
            None => self.set_resched(cpu),
            Some(c) => self.wakeup_preempt_curr(cpu, c, tid),
        }
    }

    /// [`Sim::wakeup_preempt`] of `cpu` running `c` (not the idle task).
    #[inline(never)]
    fn wakeup_preempt_curr(&mut self, cpu: usize, c: usize, tid: usize) {
        let (cc, pc) = (self.threads[c].class, self.threads[tid].class);
        if pc != cc {
            if pc > cc {
                self.set_resched(cpu);
            }
            return;
        }
        pc.wakeup_preempt(self, cpu, c, tid);
    }
}

/// The rq runs and queues nothing (the idle task would run): what the policy view's
/// `idle` and the root domain's idle count follow.
#[inline(always)]
fn rq_idle(rq: &Rq) -> bool {
    rq.curr.is_none()
        && rq.stop.is_none()
        && rq.cfs.nr_running == 0
        && rq.rt.nr_running() == 0
        && rq.dl.nr_running() == 0
}

/// [`Sim::refresh_view`] without its balancer generation: `rq`'s CPU's view `v` and the
/// counts of idle and overloaded CPUs, for a caller that holds the rq and the other parts
/// of the engine it needs (the fair enqueue and dequeue, [`Sim::enqueue_fair`]). The
/// same statements as [`Sim::refresh_view`]'s, which keeps its own copy: written as a
/// call of this function it cost `periodic` 2.0 M instructions more (callgrind), in
/// `__schedule()` and the dequeue.
#[inline(always)]
pub(in crate::sim) fn refresh_view_of(
    rq: &Rq,
    v: &mut CpuView,
    nr_idle: &mut usize,
    nr_overloaded: &mut usize,
) {
    let idle = rq_idle(rq);
    let nr = rq.cfs.nr_running;
    *nr_idle = *nr_idle + usize::from(idle) - usize::from(v.idle);
    *nr_overloaded = *nr_overloaded + usize::from(nr >= 2) - usize::from(v.nr_running >= 2);
    v.idle = idle;
    v.nr_running = nr;
}

/// `add_nr_running()`'s test (kernel/sched/sched.h, v6.11): `rq->nr_running` (every class's
/// tasks, the stopper among them) is at least 2.
#[inline(always)]
pub(in crate::sim) fn nr_running_ge2(rq: &Rq) -> bool {
    let stop = usize::from(rq.stop.is_some());
    rq.cfs.nr_running as usize + rq.rt.nr_running() + rq.dl.nr_running() + stop >= 2
}
