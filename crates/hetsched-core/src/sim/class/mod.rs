//! The scheduling classes: `struct sched_class` (kernel/sched/sched.h, v6.11) as an enum
//! whose methods are the hook table. The core calls a class only through these hooks;
//! each class's code is in its module: [`stop`] (the per-CPU stopper `migration/N`),
//! [`deadline`], [`rt`], [`fair`] (EEVDF or CFS), and the idle task's ([`idle`]: entering
//! and leaving idle; the idle task is not a thread here).
//!
//! | hook (`sched_class`) | stop | deadline | rt | fair |
//! |---|---|---|---|---|
//! | `enqueue_task` | `enqueue_task_stop()` | `enqueue_task_dl()` | `enqueue_task_rt()` | `enqueue_task_fair()` |
//! | `dequeue_task` | `dequeue_task_stop()` | `dequeue_task_dl()` | `dequeue_task_rt()` | `dequeue_task_fair()` |
//! | `wakeup_preempt` | — (one per CPU) | `wakeup_preempt_dl()` | `wakeup_preempt_rt()` | `check_preempt_wakeup_fair()` |
//! | `pick_next_task` | `pick_task_stop()` | `pick_next_task_dl()` | `pick_next_task_rt()` | `pick_next_task_fair()` |
//! | `balance` | `balance_stop()` | `balance_dl()` | `balance_rt()` | `balance_fair()` → `sched_balance_newidle()` |
//! | `put_prev_task` | — | `put_prev_task_dl()` | `put_prev_task_rt()` | `put_prev_task_fair()` |
//! | `set_next_task` | — | `set_next_task_dl()` | `set_next_task_rt()` | `set_next_task_fair()` |
//! | `select_task_rq` | `select_task_rq_stop()` | `select_task_rq_dl()` | `select_task_rq_rt()` | `select_task_rq_fair()` |
//! | `task_tick` | — | `task_tick_dl()` | `task_tick_rt()` | `task_tick_fair()` |
//! | `yield_task` | — | `yield_task_dl()` | `yield_task_rt()` | `yield_task_fair()` |
//! | `update_curr` | — | `update_curr_dl()` | `update_curr_rt()` (RT bandwidth) | `update_curr_fair()` |
//! | `switched_from` | — | — (leaving SCHED_DEADLINE is not modelled) | `switched_from_rt()` | `switched_from_fair()` |
//! | `switched_to` | — | `switched_to_dl()` | `switched_to_rt()` | `switched_to_fair()` |
//! | `prio_changed` | — | — (DL parameters do not change) | `prio_changed_rt()` | `prio_changed_fair()` |
//! | `reweight_task` | — | — | — | `reweight_task_fair()` |
//!
//! The core's `rt_mutex_setprio()`, `__sched_setscheduler()` and `set_user_nice()`
//! (core/prio.rs) change a task's class or priority through these hooks, in the kernel's
//! order: `dequeue_task(DEQUEUE_SAVE)`, `put_prev_task()`, the change,
//! `enqueue_task(ENQUEUE_RESTORE)`, `set_next_task()`, `check_class_changed()`; the
//! pushes and pulls the hooks ask for run as balance callbacks after it.

mod deadline;
mod fair;
mod fair_select;
mod idle;
mod rt;
mod stop;

pub(in crate::sim) use fair_select::workload_may_use_idle_policy;
pub(in crate::sim) use idle::set_next_task_idle;
pub(in crate::sim) use stop::StopWork;

use crate::sim::*;

/// `DEQUEUE_SLEEP` (kernel/sched/sched.h, v6.11): the task blocks.
pub(in crate::sim) const DEQUEUE_SLEEP: u32 = 0x01;
/// `DEQUEUE_SAVE`: dequeued to be enqueued again at once (`ENQUEUE_RESTORE`), its
/// averages staying attached: a priority, class or weight change.
pub(in crate::sim) const DEQUEUE_SAVE: u32 = 0x02;
/// `DEQUEUE_MOVE`: with `DEQUEUE_SAVE`, the task may change its place in the queue.
pub(in crate::sim) const DEQUEUE_MOVE: u32 = 0x04;
/// `DEQUEUE_MIGRATING`: `task_on_rq_migrating()`, a queued task moving to another rq (the
/// fair class detaches its averages, `DO_DETACH`).
pub(in crate::sim) const DEQUEUE_MIGRATING: u32 = 0x100;
/// `ENQUEUE_RESTORE`: the enqueue that ends a `DEQUEUE_SAVE`.
pub(in crate::sim) const ENQUEUE_RESTORE: u32 = 0x02;
/// `ENQUEUE_MOVE`, with `ENQUEUE_RESTORE`.
pub(in crate::sim) const ENQUEUE_MOVE: u32 = 0x04;
/// `ENQUEUE_HEAD`: to the head of its priority's list (an RT task whose priority fell).
pub(in crate::sim) const ENQUEUE_HEAD: u32 = 0x10;
/// `ENQUEUE_INITIAL`: the first enqueue of a new task (`wake_up_new_task()`); the fair
/// class places with it only from v6.12 (`fair.enqueue_initial`).
pub(in crate::sim) const ENQUEUE_INITIAL: u32 = 0x80;
/// `ENQUEUE_MIGRATING`: `task_on_rq_migrating()`, a queued task arriving from another rq
/// (`activate_task()` after `deactivate_task()` with DEQUEUE_MIGRATING).
pub(in crate::sim) const ENQUEUE_MIGRATING: u32 = 0x100;

/// Scheduling class a thread is in now (`p->sched_class`). Ordered as
/// `sched_class_above()` ranks them: a later variant is above an earlier one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(in crate::sim) enum Class {
    Fair,
    Rt,
    Dl,
    /// The stop class: the per-CPU stopper `migration/N` (class/stop.rs).
    Stop,
}

impl Class {
    /// `for_each_class()`: the order `pick_next_task()` asks the classes in (the idle
    /// task's class has no thread here: nothing picked is idle).
    pub(in crate::sim) const PICK_ORDER: [Class; 4] =
        [Class::Stop, Class::Dl, Class::Rt, Class::Fair];

    /// `p->sched_class->enqueue_task(rq, p, flags)`; the `ENQUEUE_*` flags above (a
    /// wake-up is a sleeping task's enqueue, as `ENQUEUE_WAKEUP` is in the kernel's callers).
    pub(in crate::sim) fn enqueue_task(
        self,
        s: &mut Sim<'_>,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        flags: u32,
    ) {
        let initial = flags & ENQUEUE_INITIAL != 0;
        match self {
            Class::Fair => s.enqueue_fair(out, cpu, tid, now, initial),
            Class::Rt => s.enqueue_task_rt(out, cpu, tid, now, flags),
            Class::Dl => s.enqueue_task_dl(out, cpu, tid, now, flags),
            Class::Stop => s.enqueue_task_stop(cpu, tid),
        }
    }

    /// `p->sched_class->dequeue_task(rq, p, flags)`: `DEQUEUE_SLEEP`, `DEQUEUE_SAVE` or
    /// `DEQUEUE_MIGRATING`.
    pub(in crate::sim) fn dequeue_task(
        self,
        s: &mut Sim<'_>,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        flags: u32,
    ) {
        match self {
            Class::Fair => s.dequeue_fair(out, cpu, tid, now, flags),
            Class::Rt => s.dequeue_task_rt(out, cpu, tid, now),
            Class::Dl => s.dequeue_task_dl(out, cpu, tid, now, flags),
            Class::Stop => s.dequeue_task_stop(cpu),
        }
    }

    /// `curr->sched_class->wakeup_preempt(rq, p)` for a woken `tid` of the same class as
    /// `curr`.
    pub(in crate::sim) fn wakeup_preempt(
        self,
        s: &mut Sim<'_>,
        cpu: usize,
        curr: usize,
        tid: usize,
    ) {
        match self {
            Class::Fair => s.check_preempt_wakeup_fair(cpu, curr, tid),
            Class::Rt => s.wakeup_preempt_rt(cpu, curr, tid),
            Class::Dl => s.wakeup_preempt_dl(cpu, curr, tid),
            Class::Stop => {} // one stopper per CPU
        }
    }

    /// `class->pick_next_task(rq)`: the task this class would run next on `cpu`.
    pub(in crate::sim) fn pick_next_task(self, s: &Sim<'_>, cpu: usize) -> Option<usize> {
        let rq = &s.rqs[cpu];
        match self {
            Class::Fair => rq.cfs.pick_next(&s.ents, &s.s.fair),
            Class::Rt if rq.rt_throttled => None, // sched_rt_rq_dequeue()
            Class::Rt => rq.rt.pick(),
            Class::Dl => rq.dl.pick(),
            Class::Stop => rq.stop,
        }
    }

    /// `class->balance(rq, prev, rf)` when nothing was picked: only the fair class's does
    /// anything here (`balance_fair()` → `sched_balance_newidle()`; the stop, DL and RT
    /// classes' run before the pick, `Sim::put_prev_task_balance`). Returns whether a
    /// task was pulled.
    pub(in crate::sim) fn balance(
        self,
        s: &mut Sim<'_>,
        out: &mut Out<'_, '_>,
        cpu: usize,
        now: Nanos,
    ) -> bool {
        match self {
            Class::Fair => s.balance_fair(out, cpu, now),
            Class::Rt | Class::Dl | Class::Stop => false,
        }
    }

    /// `prev->sched_class->put_prev_task(rq, prev)`. Inlined at its callers (`__schedule()`
    /// and the class or priority change of a running task), like [`Class::set_next_task`]:
    /// the dispatch's own prologue and epilogue cost more than its match.
    #[inline(always)]
    pub(in crate::sim) fn put_prev_task(
        self,
        s: &mut Sim<'_>,
        out: &mut Out<'_, '_>,
        cpu: usize,
        prev: usize,
        now: Nanos,
    ) {
        match self {
            Class::Fair => s.put_prev_task_fair(out, cpu, prev, now),
            Class::Rt => s.put_prev_task_rt(out, cpu, now),
            Class::Dl => s.put_prev_task_dl(out, cpu, now),
            Class::Stop => {}
        }
    }

    /// `next->sched_class->set_next_task(rq, next, first)`; `prev` is the task switched
    /// from (`None`: the idle task). `first` is the pick of `__schedule()`; a class or
    /// priority change of the running task sets it again with `first` false.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(in crate::sim) fn set_next_task(
        self,
        s: &mut Sim<'_>,
        out: &mut Out<'_, '_>,
        cpu: usize,
        next: usize,
        prev: Option<usize>,
        first: bool,
        now: Nanos,
    ) {
        match self {
            Class::Fair => s.set_next_task_fair(out, cpu, next, first, now),
            Class::Rt => s.set_next_task_rt(out, cpu, prev, first, now),
            Class::Dl => s.set_next_task_dl(out, cpu, prev, first, now),
            Class::Stop => {}
        }
    }

    /// `prev_class->switched_from(rq, p)`: `tid` left this class.
    pub(in crate::sim) fn switched_from(
        self,
        s: &mut Sim<'_>,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        match self {
            Class::Fair => s.switched_from_fair(out, cpu, tid, now),
            Class::Rt => s.switched_from_rt(cpu, tid),
            Class::Dl => s.switched_from_dl(cpu, tid),
            Class::Stop => {}
        }
    }

    /// `p->sched_class->switched_to(rq, p)`: `tid` entered this class.
    pub(in crate::sim) fn switched_to(
        self,
        s: &mut Sim<'_>,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        match self {
            Class::Fair => s.switched_to_fair(out, cpu, tid, now),
            Class::Rt => s.switched_to_rt(out, cpu, tid, now),
            Class::Dl => s.switched_to_dl(out, cpu, tid, now),
            Class::Stop => {}
        }
    }

    /// `p->sched_class->prio_changed(rq, p, oldprio)`: `tid`'s priority changed within
    /// this class.
    pub(in crate::sim) fn prio_changed(
        self,
        s: &mut Sim<'_>,
        cpu: usize,
        tid: usize,
        oldprio: i32,
    ) {
        match self {
            Class::Fair => s.prio_changed_fair(cpu, tid, oldprio),
            Class::Rt => s.prio_changed_rt(cpu, tid, oldprio),
            Class::Dl => s.prio_changed_dl(cpu, tid),
            Class::Stop => {}
        }
    }

    /// `p->sched_class->select_task_rq(p, prev, wake_flags)`; `this_cpu` is the CPU the
    /// wake-up runs on.
    pub(in crate::sim) fn select_task_rq(
        self,
        s: &mut Sim<'_>,
        tid: usize,
        prev: usize,
        this_cpu: usize,
        wake_flags: u32,
        now: Nanos,
    ) -> usize {
        match self {
            Class::Fair => s.select_task_rq_fair_hook(tid, prev, this_cpu, wake_flags, now),
            Class::Rt => s.select_task_rq_rt(tid, prev, this_cpu, wake_flags),
            Class::Dl => s.select_task_rq_dl(tid, prev, this_cpu, wake_flags),
            Class::Stop => prev, // select_task_rq_stop(): a stopper stays on its CPU
        }
    }

    /// `curr->sched_class->task_tick(rq, curr, 0)`.
    pub(in crate::sim) fn task_tick(
        self,
        s: &mut Sim<'_>,
        out: &mut Out<'_, '_>,
        cpu: usize,
        curr: usize,
        now: Nanos,
    ) {
        match self {
            Class::Fair => s.task_tick_fair(out, cpu, curr, now),
            Class::Rt => s.task_tick_rt(out, cpu, curr, now),
            Class::Dl => s.task_tick_dl(out, cpu, curr, now),
            Class::Stop => {}
        }
    }

    /// `curr->sched_class->yield_task(rq)`.
    pub(in crate::sim) fn yield_task(self, s: &mut Sim<'_>, cpu: usize, tid: usize, now: Nanos) {
        match self {
            Class::Fair => s.yield_task_fair(cpu, tid, now),
            Class::Rt => s.yield_task_rt(cpu, tid),
            Class::Dl => s.yield_task_dl(cpu, tid, now),
            Class::Stop => {}
        }
    }

    /// `curr->sched_class->update_curr(rq)` as `__schedule()` reaches it for `prev`.
    pub(in crate::sim) fn update_curr(self, s: &mut Sim<'_>, cpu: usize, tid: usize, now: Nanos) {
        match self {
            Class::Fair => s.update_curr_fair(cpu, tid, now),
            Class::Rt => s.update_curr_rt(cpu, now),
            Class::Stop => {}
            Class::Dl => s.update_curr_dl(cpu, tid, now),
        }
    }
}
