//! Changing a task's priority, class or weight (kernel/sched/core.c and syscalls.c, v6.11):
//! `rt_mutex_setprio()` (priority inheritance), `__sched_setscheduler()` (`sched_setattr()`)
//! and `set_user_nice()`. Each is the kernel's save/restore sequence around the change —
//! `dequeue_task(DEQUEUE_SAVE | DEQUEUE_MOVE)` (DEQUEUE_SAVE alone for `set_user_nice()`
//! and for a `__sched_setscheduler()` that keeps the effective priority), `put_prev_task()`,
//! the change, `enqueue_task(ENQUEUE_RESTORE | ENQUEUE_MOVE)` (the same bits),
//! `set_next_task()` — followed by the
//! class hooks (`check_class_changed()`: `switched_from`/`switched_to`, or `prio_changed`)
//! and the balance callbacks they queued (RT push and pull).

use super::super::class::{
    DEQUEUE_MOVE, DEQUEUE_SAVE, ENQUEUE_HEAD, ENQUEUE_MOVE, ENQUEUE_RESTORE,
};
use crate::sim::*;

/// What a change found before it changed anything: `prev_class`, `oldprio`, the CPU.
struct Saved {
    class: Class,
    oldprio: i32,
    cpu: usize,
}

/// `__setscheduler_prio()`: the class a priority runs in (DL below 0, RT below
/// `MAX_RT_PRIO`, fair otherwise).
fn class_of_prio(prio: i32) -> Class {
    if prio < 0 {
        Class::Dl
    } else if prio < rtq::MAX_RT_PRIO {
        Class::Rt
    } else {
        Class::Fair
    }
}

impl<'w> Sim<'w> {
    /// The save/restore sequence the three callers share: `tid` is dequeued with
    /// `queue_flags` (DEQUEUE_SAVE, with or without DEQUEUE_MOVE) and put if queued and
    /// running, `change` runs, and it is enqueued with the same bits (ENQUEUE_RESTORE,
    /// ENQUEUE_MOVE; at the head of its RT list when `head_if_lowered` and its priority
    /// fell, ENQUEUE_HEAD) and set again.
    fn sched_change(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        queue_flags: u32,
        head_if_lowered: bool,
        change: impl FnOnce(&mut Self, usize),
    ) -> Saved {
        let now = self.q.now();
        let cpu = self.threads[tid].cpu;
        let saved = Saved {
            class: self.threads[tid].class,
            oldprio: self.threads[tid].eff_prio,
            cpu,
        };
        let queued = self.threads[tid].state == TState::Runnable;
        let running = self.rqs[cpu].curr == Some(tid);
        self.update_rq_clock(cpu, now);
        self.account_op(cpu, now);
        if queued {
            self.dequeue_task(out, cpu, tid, now, queue_flags);
        }
        if running {
            saved.class.put_prev_task(self, out, cpu, tid, now);
        }
        change(self, cpu);
        let class = self.threads[tid].class;
        if queued {
            let mut flags = ENQUEUE_RESTORE;
            if queue_flags & DEQUEUE_MOVE != 0 {
                flags |= ENQUEUE_MOVE;
            }
            if head_if_lowered && saved.oldprio < self.threads[tid].eff_prio {
                flags |= ENQUEUE_HEAD;
            }
            self.enqueue_task(out, cpu, tid, now, flags);
        }
        if running {
            class.set_next_task(self, out, cpu, tid, Some(tid), false, now);
        }
        saved
    }

    /// `check_class_changed()` (kernel/sched/core.c, v6.11): `switched_from()` of the old
    /// class and `switched_to()` of the new, or `prio_changed()` within one class; then
    /// the balance callbacks the hooks queued.
    fn check_class_changed(&mut self, out: &mut Out<'_, '_>, tid: usize, saved: &Saved) {
        let now = self.q.now();
        let class = self.threads[tid].class;
        let cpu = saved.cpu;
        if class != saved.class {
            saved.class.switched_from(self, out, cpu, tid, now);
            class.switched_to(self, out, cpu, tid, now);
        } else if saved.oldprio != self.threads[tid].eff_prio || class == Class::Dl {
            class.prio_changed(self, cpu, tid, saved.oldprio);
        }
        self.balance_callbacks(out, now);
    }

    /// `queue_balance_callback()`: once per callback and CPU until they run.
    pub(in crate::sim) fn queue_balance_callback(&mut self, cb: BalanceCallback) {
        if !self.balance_callbacks.contains(&cb) {
            self.balance_callbacks.push(cb);
        }
    }

    /// `balance_callbacks()`: the queued pushes and pulls, in queue order.
    fn balance_callbacks(&mut self, out: &mut Out<'_, '_>, now: Nanos) {
        for cb in std::mem::take(&mut self.balance_callbacks) {
            match cb {
                BalanceCallback::PushRt(cpu) => self.rt_balance_callback(out, cpu, now),
                BalanceCallback::PullRt(cpu) => self.pull_rt_task(out, cpu, now),
                BalanceCallback::PushDl(cpu) => self.push_dl_tasks(out, cpu, now),
                BalanceCallback::PullDl(cpu) => self.pull_dl_task(out, cpu, now),
            }
        }
    }

    /// `set_load_weight(p, true)`: the weight of the policy and nice value, through the
    /// fair class's `reweight_task()` while `tid` is fair (dequeued by the caller). The
    /// entity's `se_is_idle()` follows the policy (the kernel reads `p->policy`).
    fn set_load_weight(&mut self, tid: usize, cpu: usize) {
        let t = &self.threads[tid];
        let idle = t.policy == SchedPolicy::Idle;
        self.ents[tid].idle = idle;
        let lw = LoadWeight::for_nice(t.nice, idle);
        if t.class == Class::Fair {
            self.reweight_task_fair(cpu, tid, lw);
        } else {
            self.ents[tid].load = lw;
        }
    }

    /// `rt_mutex_setprio()` (kernel/sched/core.c, v6.11), as the PI futex operations reach
    /// it (on CPU `on`): `tid` runs at `prio`, the best of its own and its top waiter's,
    /// traced as `sched_pi_setprio`. Boosted below
    /// `MAX_RT_PRIO`, a fair task runs in the RT class; a deboosted RT task goes to the
    /// head of its list.
    pub(in crate::sim) fn rt_mutex_setprio(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        prio: i32,
        on: usize,
    ) {
        if prio == self.threads[tid].eff_prio {
            return;
        }
        if out.any.sched {
            // trace_sched_pi_setprio(p, pi_task), on the CPU of the futex operation
            let now = self.q.now();
            let ev = TraceEvent::SchedPiSetprio {
                task: self.tref(tid),
                oldprio: self.threads[tid].eff_prio,
                newprio: prio,
            };
            out.emit(&self.ctx(on, now), &ev, g_sched);
        }
        let rt = prio < rtq::MAX_RT_PRIO;
        let saved = self.sched_change(out, tid, DEQUEUE_SAVE | DEQUEUE_MOVE, rt, |s, _| {
            let t = &mut s.threads[tid];
            t.eff_prio = prio;
            t.class = class_of_prio(prio);
        });
        self.check_class_changed(out, tid, &saved);
    }

    /// `set_user_nice()` (kernel/sched/syscalls.c, v6.11): a new nice value; an RT or DL
    /// task only keeps it for later (`static_prio`); a fair one takes its weight
    /// (`set_load_weight()` → `reweight_task_fair()`) and, unless boosted, its priority,
    /// then `prio_changed()`.
    pub(in crate::sim) fn set_user_nice(&mut self, out: &mut Out<'_, '_>, tid: usize, nice: i32) {
        let nice = nice.clamp(-20, 19);
        if self.threads[tid].nice == nice {
            return;
        }
        if !self.threads[tid].policy.is_fair() {
            self.threads[tid].nice = nice; // p->static_prio only
            return;
        }
        // dequeue_task(rq, p, DEQUEUE_SAVE | DEQUEUE_NOCLOCK): no DEQUEUE_MOVE
        let saved = self.sched_change(out, tid, DEQUEUE_SAVE, false, |s, cpu| {
            s.threads[tid].nice = nice;
            s.set_load_weight(tid, cpu);
            let t = &mut s.threads[tid];
            t.normal_prio = 120 + nice;
            if t.eff_prio >= rtq::MAX_RT_PRIO {
                t.eff_prio = t.normal_prio; // effective_prio() of a task not boosted
            }
        });
        let class = self.threads[tid].class;
        class.prio_changed(self, saved.cpu, tid, saved.oldprio);
        let now = self.q.now();
        self.balance_callbacks(out, now);
    }

    /// `sched_setscheduler()`/`sched_setattr()` (rt-app's `set_thread_param()`), as
    /// `__sched_setscheduler()` does it (kernel/sched/syscalls.c, v6.11): nothing when the
    /// policy and its parameters are unchanged (the early return); otherwise the policy,
    /// nice or RT priority, or SCHED_DEADLINE's parameters `dl` after admission control
    /// (`sched_dl_overflow()`: rt-app exits on the error), and the weight
    /// (`__setscheduler_params()`); the class of the priority, kept at a PI boost
    /// (`rt_effective_prio()`, `__setscheduler_prio()`); the clamps that are not
    /// user-defined reset to the new class's defaults (`__setscheduler_uclamp()`).
    /// Leaving SCHED_DEADLINE is not modelled (the task keeps its class).
    pub(in crate::sim) fn set_policy(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        pol: SchedPolicy,
        prio: Option<i32>,
        dl: Option<DlEntity>,
    ) {
        let t = &self.threads[tid];
        if t.class == Class::Dl {
            return;
        }
        // `if (unlikely(policy == p->policy))`: the same nice, RT priority or DL parameters
        let unchanged = pol == t.policy
            && match pol {
                SchedPolicy::Fifo | SchedPolicy::Rr => {
                    rtq::rt_prio(prio.unwrap_or(10)) == t.normal_prio
                }
                SchedPolicy::Deadline => true,
                _ => prio.unwrap_or(t.nice).clamp(-20, 19) == t.nice,
            };
        if unchanged {
            return;
        }
        let nice = prio.unwrap_or(t.nice).clamp(-20, 19);
        let dl = if pol == SchedPolicy::Deadline {
            let dl = dl.unwrap_or(t.dl);
            // __checkparam_dl() and sched_dl_overflow(): rt-app exits on the error
            if let Err(msg) = self.sched_dl_admit(tid, &dl) {
                return self.fail(msg);
            }
            Some(dl)
        } else {
            None
        };
        // __normal_prio(); with `pi`, an effective priority that does not change
        // (rt_effective_prio() keeps a boost) drops DEQUEUE_MOVE
        let normal_prio = match pol {
            SchedPolicy::Deadline => -1,
            SchedPolicy::Fifo | SchedPolicy::Rr => rtq::rt_prio(prio.unwrap_or(10)),
            _ => 120 + nice,
        };
        let mut queue_flags = DEQUEUE_SAVE | DEQUEUE_MOVE;
        if self.rt_effective_prio(tid, normal_prio) == self.threads[tid].eff_prio {
            queue_flags &= !DEQUEUE_MOVE;
        }
        let saved = self.sched_change(out, tid, queue_flags, true, |s, cpu| {
            // __setscheduler_params()
            let t = &mut s.threads[tid];
            t.policy = pol;
            t.normal_prio = normal_prio;
            if !matches!(
                pol,
                SchedPolicy::Deadline | SchedPolicy::Fifo | SchedPolicy::Rr
            ) {
                t.nice = nice;
            }
            if let Some(dl) = dl {
                t.dl = dl; // __setscheduler_dl_params()
            }
            s.set_load_weight(tid, cpu);
            // __setscheduler_prio(p, rt_effective_prio(p, newprio))
            let newprio = s.rt_effective_prio(tid, s.threads[tid].normal_prio);
            let t = &mut s.threads[tid];
            t.eff_prio = newprio;
            t.class = class_of_prio(newprio);
            // __setscheduler_uclamp()
            s.update_task_uclamp(tid);
        });
        self.check_class_changed(out, tid, &saved);
    }
}
