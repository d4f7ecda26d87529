//! The stop class (kernel/sched/stop_task.c, v6.11) and the per-CPU stopper
//! (kernel/stop_machine.c): each CPU has a `migration/N` thread of the stop class, above
//! every other class, that runs the work queued with `stop_one_cpu_nowait()` and sleeps.
//! Two kinds of work use it here: the balancer's active migration
//! (`active_load_balance_cpu_stop()`: misfit and other active balancing) and moving a
//! running task off a CPU its new affinity excludes (`migration_cpu_stop()`). The
//! stopper preempts the running task, which is then queued, not running, when the work
//! moves it: `sched_migrate_task` comes from `migration/N` on the source CPU, as on a
//! board. The stopper's own run time is not modelled (its work happens as it is switched
//! in; it sleeps again at once).

use crate::sim::*;

/// Work for a CPU's stopper (`struct cpu_stop_work`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::sim) enum StopWork {
    /// `active_load_balance_cpu_stop()`: push one task to `dst`.
    ActiveBalance {
        /// `busiest->push_cpu`.
        dst: usize,
        /// Why the balancer asked (misfit or active).
        reason: MigrationReason,
    },
    /// `migration_cpu_stop()`: move `tid` off this CPU, which its affinity excludes.
    MigrationCpuStop {
        /// The task.
        tid: usize,
    },
    /// HMP's `hmp_active_task_migration_cpu_stop()`: move `tid` to `dst`.
    HmpMigrate {
        /// The task (`rq->migrate_task`).
        tid: usize,
        /// `rq->push_cpu`.
        dst: usize,
        /// An idle pull or an offload.
        why: MigrationReason,
    },
}

impl<'w> Sim<'w> {
    /// `enqueue_task_stop()`.
    pub(in crate::sim) fn enqueue_task_stop(&mut self, cpu: usize, tid: usize) {
        self.threads[tid].enqueue_migrated = false;
        self.rqs[cpu].stop = Some(tid);
        self.threads[tid].state = TState::Runnable;
        self.threads[tid].cpu = cpu;
        self.refresh_view(cpu);
        self.add_nr_running(cpu);
    }

    /// `dequeue_task_stop()`.
    pub(in crate::sim) fn dequeue_task_stop(&mut self, cpu: usize) {
        self.rqs[cpu].stop = None;
        self.refresh_view(cpu);
    }

    /// `stop_one_cpu_nowait(cpu, work)` from the task or balancer running on `from`: the
    /// work is queued on `cpu`'s stopper, which is woken (it preempts whatever runs there).
    pub(in crate::sim) fn stop_one_cpu_nowait(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        work: StopWork,
        from: usize,
        now: Nanos,
    ) {
        self.stop_work[cpu].push(work);
        let tid = self.stoppers[cpu];
        if self.threads[tid].state != TState::Runnable {
            self.try_to_wake_up(out, tid, now, Some(from));
        }
    }

    /// `cpu_stopper_thread()` of `cpu`, switched in: it runs the queued work, then sleeps.
    pub(in crate::sim) fn cpu_stopper_thread(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        let works = std::mem::take(&mut self.stop_work[cpu]);
        for w in works {
            match w {
                StopWork::ActiveBalance { dst, reason } => {
                    self.active_load_balance_cpu_stop(out, cpu, dst, reason, now)
                }
                StopWork::MigrationCpuStop { tid: t } => self.migration_cpu_stop(out, cpu, t, now),
                StopWork::HmpMigrate { tid: t, dst, why } => {
                    self.hmp_active_task_migration_cpu_stop(out, cpu, t, dst, why, now)
                }
            }
        }
        self.kthread_sleep(out, cpu, tid, now);
    }

    /// `migration_cpu_stop()` (kernel/sched/core.c, v6.11) on `cpu`: `t`, still queued
    /// here and no longer allowed here, moves to the CPU `__set_cpus_allowed_ptr_locked()`
    /// chose: `cpumask_any_and_distribute()`, the next allowed CPU after the one it
    /// returned last (lib/cpumask.c).
    fn migration_cpu_stop(&mut self, out: &mut Out<'_, '_>, cpu: usize, t: usize, now: Nanos) {
        let aff = self.threads[t].affinity;
        if self.threads[t].cpu != cpu
            || self.threads[t].state != TState::Runnable
            || aff.contains(cpu)
        {
            return;
        }
        let n = self.p.nr_cpus();
        let start = (self.distribute_prev + 1) % n.max(1);
        let Some(dst) = (0..n).map(|i| (start + i) % n).find(|&c| aff.contains(c)) else {
            return;
        };
        self.distribute_prev = dst;
        let m = Migration {
            task: t,
            src: cpu,
            dst,
            reason: MigrationReason::Affinity,
        };
        self.move_queued_on(out, m, cpu, now);
    }
}
