//! `try_to_wake_up()` and `wake_up_new_task()` (kernel/sched/core.c, v6.11):
//! `select_task_rq()`, `set_task_cpu()` with the class's `migrate_task_rq()`,
//! `activate_task()`, `sched_waking`, `sched_wakeup[_new]`, `wakeup_preempt()`.

use crate::sim::*;

impl<'w> Sim<'w> {
    /// `wake_up_new_task()` (kernel/sched/core.c, v6.11): fork placement
    /// (`select_task_rq(p, task_cpu(p), WF_FORK)` from the parent's CPU, where
    /// `sched_cgroup_fork()` put the child; CPU 0 without a parent, the threads created at
    /// once with `rtapp.main_thread = false`), then [`Sim::activate_new_task`].
    pub(in crate::sim) fn wake_up_new_task(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        now: Nanos,
        parent_cpu: Option<usize>,
    ) {
        let from = parent_cpu.unwrap_or(0);
        self.threads[tid].recent_used_cpu = from;
        self.hmp_fork(tid, now);
        let wf = crate::policy::select_fair::WF_FORK;
        let class = self.threads[tid].class;
        let cpu = self.select_task_rq(out, tid, class, from, from, wf, now);
        self.activate_new_task(out, tid, cpu, now, parent_cpu.unwrap_or(cpu));
    }

    /// The rest of `wake_up_new_task()` once the new task's CPU is chosen:
    /// `post_init_entity_util_avg()` on that CPU, `activate_task()` (ENQUEUE_INITIAL only
    /// from v6.12, `fair.enqueue_initial`), `sched_wakeup_new` (traced on `ctx_cpu`, the
    /// parent's), `wakeup_preempt()`, `task_woken_rt()`.
    pub(in crate::sim) fn activate_new_task(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        cpu: usize,
        now: Nanos,
        ctx_cpu: usize,
    ) {
        self.threads[tid].cpu = cpu;
        self.update_rq_clock(cpu, now);
        self.post_init_entity_util_avg(cpu, tid);
        self.enqueue_task(out, cpu, tid, now, class::ENQUEUE_INITIAL);
        if out.any.sched {
            out.emit_with(g_sched, || {
                let ev = TraceEvent::SchedWakeupNew {
                    task: self.tref(tid),
                    target_cpu: cpu as u32,
                };
                (self.ctx(ctx_cpu, now), ev)
            });
        }
        self.wakeup_preempt(cpu, tid);
        match self.threads[tid].class {
            Class::Rt => self.task_woken_rt(out, cpu, tid, now),
            Class::Dl => self.task_woken_dl(out, cpu, tid, now),
            _ => {}
        }
    }

    /// `try_to_wake_up()` for a sleeping thread. `waker` is the CPU whose current task
    /// wakes it (a futex wake-up); a timer wake-up runs on the sleeper's CPU, where its
    /// hrtimer was armed. The events carry the contexts v6.11 gives them:
    /// `sched_waking` the waking CPU's, before the placement (`target_cpu` is the task's
    /// previous CPU, `task_cpu(p)` when `trace_sched_waking()` runs);
    /// `sched_migrate_task` the waking CPU's (`set_task_cpu()` in `try_to_wake_up()`),
    /// `sched_wakeup` the CPU that activates the task (`ttwu_do_activate()`): the target
    /// when `ttwu_queue_cond()` sends it to the target's wakelist (the target does not
    /// share the waking CPU's cache, or is another CPU with nothing running: its IPI
    /// handler activates it), else the waking CPU.
    pub(in crate::sim) fn try_to_wake_up(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        now: Nanos,
        waker: Option<usize>,
    ) {
        // p's CPU and class, read once: nothing in the wake-up changes the class (a
        // policy change is a syscall of its own), so the placement and the class's
        // task_woken hook below read this one (debug builds assert it)
        let t = &self.threads[tid];
        let (prev, class) = (t.cpu, t.class);
        // A futex wake-up runs on the waker's CPU; a timer's on the sleeper's.
        let this_cpu = waker.unwrap_or(prev);
        if out.any.sched {
            out.emit_with(g_sched, || {
                let ev = TraceEvent::SchedWaking {
                    task: self.tref(tid),
                    target_cpu: prev as u32,
                };
                (self.ctx(this_cpu, now), ev)
            });
        }
        let wf = crate::policy::select_fair::WF_TTWU;
        let cpu = self.select_task_rq(out, tid, class, prev, this_cpu, wf, now);
        if cpu != prev {
            self.migrate_sleeping(out, tid, prev, cpu, this_cpu, now);
            self.migrations[MigrationReason::WakeUp as usize] += 1;
        }
        let activator = self.ttwu_activating_cpu(this_cpu, cpu);
        if std::mem::take(&mut self.threads[tid].res_blocked) {
            self.nr_res_blocked -= 1;
        }
        self.update_rq_clock(cpu, now);
        self.enqueue_task(out, cpu, tid, now, 0);
        if out.any.sched {
            // without a user sink, the metrics read the pid, and the comm only for a task
            // they meet for the first time
            out.emit_with_metrics(
                g_sched,
                |m| m.sched_wakeup_of(self.threads[tid].pid, || self.tref(tid).comm, now),
                || {
                    let ev = TraceEvent::SchedWakeup {
                        task: self.tref(tid),
                        target_cpu: cpu as u32,
                    };
                    (self.ctx(activator, now), ev)
                },
            );
        }
        self.wakeup_preempt(cpu, tid);
        debug_assert_eq!(class, self.threads[tid].class);
        match class {
            Class::Rt => self.task_woken_rt(out, cpu, tid, now),
            Class::Dl => self.task_woken_dl(out, cpu, tid, now),
            _ => {}
        }
        self.ttwu_update_avg_idle(cpu, now);
    }

    /// Where `try_to_wake_up()` activates a task woken from `this_cpu` onto `cpu`
    /// (kernel/sched/core.c v6.11, `ttwu_queue()` → `ttwu_queue_cond()`, TTWU_QUEUE
    /// on): the target's wakelist (its IPI handler activates the task there) when the
    /// two CPUs do not share a cache, or when the target is another CPU with nothing
    /// running; otherwise the waking CPU itself. Called before the task is enqueued.
    fn ttwu_activating_cpu(&self, this_cpu: usize, cpu: usize) -> usize {
        if cpu == this_cpu {
            return cpu;
        }
        let rq = &self.rqs[cpu];
        let nr_running = rq.cfs.nr_running as usize
            + rq.rt.nr_running()
            + rq.dl.nr_running()
            + usize::from(rq.curr.is_some() || rq.stop.is_some());
        if !self.sdt.cpus_share_cache(this_cpu, cpu) || nr_running == 0 {
            cpu
        } else {
            this_cpu
        }
    }

    /// `set_task_cpu()` of a task that is not queued (a wake-up's migration), run on
    /// `on`, the waking CPU: `migrate_task_rq()` (`migrate_task_rq_fair()`;
    /// `migrate_task_rq_dl()` after `sched_migrate_task`, as `set_task_cpu()` traces
    /// first), `sched_migrate_task` in `on`'s context, the new CPU.
    pub(in crate::sim) fn migrate_sleeping(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        from: usize,
        to: usize,
        on: usize,
        now: Nanos,
    ) {
        // p's class, read once: neither the fair class's migration work nor the trace
        // changes it
        let class = self.threads[tid].class;
        // p->sched_class->migrate_task_rq(): the fair class's PELT and vruntime work,
        // done here for a task of any class (its fair entity's averages move with it).
        if class == Class::Fair {
            self.migrate_task_rq_fair(tid, from, now);
        }
        self.threads[tid].enqueue_migrated = true;
        self.trace_migrate(out, tid, from, to, on, now);
        debug_assert_eq!(class, self.threads[tid].class);
        if class == Class::Dl {
            self.migrate_task_rq_dl(out, tid, from, now);
        }
        self.threads[tid].cpu = to;
    }

    /// `select_task_rq()` (kernel/sched/core.c, v6.11): the class's choice (for a fair
    /// task with `hmp.enabled`, overridden by HMP as in LSK 3.10's `select_task_rq_fair()`), and
    /// `select_fallback_rq()` when it is not an allowed CPU (the first allowed CPU; one
    /// node, all CPUs active). `class` is p's (`p->sched_class`), which the caller has read.
    #[allow(clippy::too_many_arguments)] // the kernel's arguments, the engine's out, p's class
    fn select_task_rq(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        class: Class,
        prev: usize,
        this_cpu: usize,
        wake_flags: u32,
        now: Nanos,
    ) -> usize {
        debug_assert_eq!(class, self.threads[tid].class);
        let mut cpu = class.select_task_rq(self, tid, prev, this_cpu, wake_flags, now);
        if class == Class::Fair {
            if self.hmp.is_none() {
                // select_task_rq_fair() ends in select_fallback_rq()'s choice when its CPU
                // is not allowed (the first allowed CPU; prev_cpu when p has none), so
                // is_cpu_allowed() holds, or p has no allowed CPU and the fallback below
                // would keep `cpu`: its test is not made again
                debug_assert!({
                    let allowed = &self.threads[tid].affinity;
                    allowed.contains(cpu) || allowed.is_empty()
                });
                return cpu;
            }
            // the HMP part of select_task_rq_fair() (`hmp.enabled`, sim/hmp.rs)
            let fork = wake_flags & crate::policy::select_fair::WF_FORK != 0;
            cpu = self.hmp_select_task_rq(out, tid, prev, this_cpu, cpu, fork, now);
        }
        let allowed = self.threads[tid].affinity;
        if allowed.contains(cpu) {
            return cpu;
        }
        let first = allowed.iter().next();
        first.unwrap_or(cpu)
    }
}
