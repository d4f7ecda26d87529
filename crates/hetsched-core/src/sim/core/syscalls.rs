//! The system calls user space (user/: rt-app's interpreter and its futex model) makes,
//! and the kernel functions behind them (kernel/sched/syscalls.c, core.c, v6.11; the
//! priority and class changes are core/prio.rs):
//!
//! | system call | here | kernel |
//! |---|---|---|
//! | `clock_nanosleep(TIMER_ABSTIME)` | [`Sim::sys_clock_nanosleep`] | hrtimer sleep → `schedule()` |
//! | `futex(FUTEX_WAIT…)` | [`Sim::sys_futex_wait`] | `futex_wait_queue()` → `schedule()` |
//! | `futex(FUTEX_WAKE…)` | [`Sim::sys_futex_wake`] | `wake_up_q()` → `try_to_wake_up()` |
//! | `futex(FUTEX_LOCK_PI…)` and friends | [`Sim::rt_mutex_setprio`] | `rt_mutex_adjust_prio_chain()` → `rt_mutex_setprio()` |
//! | `sched_setattr()` | [`Sim::sys_sched_setattr`], [`Sim::sys_sched_setattr_uclamp`] | `__sched_setscheduler()`, `set_user_nice()`, `uclamp_update_active()` |
//! | `sched_setaffinity()` | [`Sim::sys_sched_setaffinity`] | `__set_cpus_allowed_ptr()` |
//! | `sched_yield()` | [`Sim::sys_sched_yield`] | `do_sched_yield()` |
//! | `clone()` | [`Sim::sys_clone`] | `copy_process()` + `wake_up_new_task()` |
//! | `prctl(PR_SET_NAME)` | [`Sim::sys_prctl_set_name`] | `__set_task_comm()` (`task_rename`) |
//! | `exit()` | [`Sim::sys_exit`] | `do_exit()` |

use crate::sim::*;

impl<'w> Sim<'w> {
    /// A kernel thread running on `cpu` goes to sleep until something wakes it
    /// (`schedule()` in `kthread_worker_fn()` or a completion wait).
    pub(in crate::sim) fn kthread_sleep(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        self.block_as(out, cpu, tid, now, None, false);
    }

    /// A kernel thread sleeps until `at` (`usleep_range()`, `schedule_timeout()`).
    pub(in crate::sim) fn kthread_sleep_until(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        at: Nanos,
    ) {
        self.block_as(out, cpu, tid, now, Some(at), false);
    }

    /// `clock_nanosleep(TIMER_ABSTIME)`: the running thread `tid` sleeps until `at`.
    pub(in crate::sim) fn sys_clock_nanosleep(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        at: Nanos,
    ) {
        self.block(out, cpu, tid, now, Some(at));
    }

    /// `futex(FUTEX_WAIT)`: the running thread `tid` sleeps until a wake-up.
    pub(in crate::sim) fn sys_futex_wait(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        self.block(out, cpu, tid, now, None);
    }

    /// `futex(FUTEX_WAIT)` of rt-app's main thread in `pthread_join()`: it sleeps until
    /// the thread it joins exits. Not a workload thread: it does not count towards the
    /// deadlock check.
    pub(in crate::sim) fn sys_futex_wait_join(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        self.block_as(out, cpu, tid, now, None, false);
    }

    /// `futex(FUTEX_WAKE)` by the task running on `waker`: `try_to_wake_up()` of `tid`.
    pub(in crate::sim) fn sys_futex_wake(
        &mut self,
        out: &mut Out<'_, '_>,
        waker: usize,
        tid: usize,
        now: Nanos,
    ) {
        self.try_to_wake_up(out, tid, now, Some(waker));
    }

    /// `sched_setattr()` at a phase start (rt-app's `set_thread_param()`): a policy
    /// (`__sched_setscheduler()`; `dl` the SCHED_DEADLINE parameters), or a priority
    /// alone: a nice value for a fair task (`set_user_nice()`), an RT priority for an RT
    /// one.
    pub(in crate::sim) fn sys_sched_setattr(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        policy: Option<SchedPolicy>,
        priority: Option<i32>,
        dl: Option<DlEntity>,
    ) {
        if let Some(pol) = policy {
            self.set_policy(out, tid, pol, priority, dl);
        } else if let Some(prio) = priority {
            if self.threads[tid].policy.is_fair() {
                self.set_user_nice(out, tid, prio);
            } else if self.threads[tid].class == Class::Rt {
                let pol = self.threads[tid].policy;
                self.set_policy(out, tid, pol, Some(prio), None);
            }
        }
    }

    /// `sched_setattr()` with `SCHED_FLAG_UTIL_CLAMP` (crate::sim::energy).
    pub(in crate::sim) fn sys_sched_setattr_uclamp(
        &mut self,
        tid: usize,
        min: Option<i32>,
        max: Option<i32>,
    ) {
        self.set_task_uclamp(tid, min, max);
    }

    /// `sched_setaffinity()` by the thread running on `cpu`: the new mask; when it
    /// excludes `cpu`, `affine_move_task()` has the CPU's stopper move the thread off
    /// (`stop_one_cpu_nowait(migration_cpu_stop)`, class/stop.rs). Returns whether it
    /// must move.
    pub(in crate::sim) fn sys_sched_setaffinity(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        mask: CpuSet,
        now: Nanos,
    ) -> bool {
        if mask == self.threads[tid].affinity {
            return false;
        }
        self.threads[tid].affinity = mask;
        self.threads[tid].affinity_gen = self.threads[tid].affinity_gen.wrapping_add(1);
        // the balancer reads the current task's affinity (`rq->curr->cpus_ptr`) from the
        // rq when it needs it (`LbEnv::curr_allows`), not in its kept per-CPU values
        if mask.contains(cpu) {
            return false;
        }
        let work = class::StopWork::MigrationCpuStop { tid };
        self.stop_one_cpu_nowait(out, cpu, work, cpu, now);
        true
    }

    /// `sched_yield()` by the thread running on `cpu`: the class's `yield_task()`, then
    /// `schedule()`.
    pub(in crate::sim) fn sys_sched_yield(&mut self, cpu: usize, tid: usize, now: Nanos) {
        self.sched_yield(cpu, tid, now);
        self.set_resched(cpu);
    }

    /// `clone()` of a thread of task `ti` named `comm` by `parent`, a thread and the CPU
    /// it runs on (`None`: the threads created at once with `rtapp.main_thread = false`;
    /// their wake-ups are traced on their CPUs): `copy_process()` (the child has the
    /// parent's comm until it renames itself, and its `record_wakee()` state:
    /// `dup_task_struct()` copies `wakee_flips`, `wakee_flip_decay_ts` and `last_wakee`
    /// and nothing on fork resets them, kernel/fork.c and kernel/sched/core.c
    /// `__sched_fork()`, v6.11; with `rtapp.main_thread` its scheduling parameters and
    /// affinity too, [`Sim::sched_fork`]) and `wake_up_new_task()`.
    /// Returns the new thread.
    pub(in crate::sim) fn sys_clone(
        &mut self,
        out: &mut Out<'_, '_>,
        parent: Option<(usize, usize)>,
        ti: usize,
        comm: String,
        now: Nanos,
    ) -> usize {
        let tid = self.spawn_thread(ti, comm, self.next_user_pid());
        self.user_tids.push(tid);
        if let Some((parent, cpu)) = parent {
            // dup_task_struct(): `*dst = *src`
            self.threads[tid].wakee = self.threads[parent].wakee;
            if self.s.options.rtapp.main_thread {
                self.sched_fork(tid, parent);
            }
            let parent_comm = self.threads[parent].comm.clone();
            self.threads[tid].comm0 = parent_comm.clone();
            if self.threads[tid].renamed {
                // the rename failed: it keeps the parent's comm
                self.threads[tid].comm = parent_comm;
            }
            if self.threads[tid].class == Class::Fair {
                self.task_fork_fair(cpu, tid, now);
            }
        }
        if self.threads[tid].class == Class::Dl && !self.s.options.rtapp.main_thread {
            // the old start: the thread is created SCHED_DEADLINE (its sched_setattr())
            let dl = self.threads[tid].dl;
            if let Err(msg) = self.sched_dl_admit(tid, &dl) {
                self.fail(msg);
            }
        }
        self.alive += 1;
        self.wake_up_new_task(out, tid, now, parent.map(|(_, cpu)| cpu));
        tid
    }

    /// `task_fork_fair()` (kernel/sched/fair.c, v6.11), from `sched_cgroup_fork()` in
    /// `copy_process()` on the forking CPU: `update_curr()` of that CPU's fair queue, so a
    /// parent past its deadline gets a new one (`update_deadline()`) and its CPU is
    /// rescheduled when others are queued. Its `place_entity()` of the child is redone
    /// by the enqueue of `wake_up_new_task()`, which is where EEVDF's place of the child
    /// is set here. The CFS rules (v3.10–v6.5) place the child here, on this queue from
    /// its parent's vruntime ([`CfsRq::task_fork_fair`]), and the enqueue on its CPU only
    /// renormalises it.
    fn task_fork_fair(&mut self, cpu: usize, child: usize, now: Nanos) {
        self.update_curr_fair_resched(cpu, now);
        if self.s.fair.variant == FairVariant::Cfs {
            let fair = self.s.fair;
            self.rqs[cpu]
                .cfs
                .task_fork_fair(&mut self.ents, child, &fair);
            self.threads[child].cfs_fork_placed = true;
        }
    }

    /// `copy_process()` → `dup_task_struct()` and `sched_fork()` (kernel/fork.c,
    /// kernel/sched/core.c, v6.11): the child has its parent's policy, nice, RT priority
    /// (`p->prio = current->normal_prio`: no PI boost), clamp requests (`uclamp_fork()`),
    /// affinity and DL parameters; its class follows its priority; a fresh fair entity of
    /// its weight (`__sched_fork()`, `init_entity_runnable_average()`). No
    /// `sched_reset_on_fork` (rt-app never sets it).
    pub(in crate::sim) fn sched_fork(&mut self, child: usize, parent: usize) {
        let p = &self.threads[parent];
        let (policy, nice, prio, affinity, req) =
            (p.policy, p.nice, p.normal_prio, p.affinity, p.uclamp_req);
        let dl = DlEntity::new(p.dl.dl_runtime, p.dl.dl_deadline, p.dl.dl_period);
        let class = match policy {
            SchedPolicy::Deadline => Class::Dl,
            SchedPolicy::Fifo | SchedPolicy::Rr => Class::Rt,
            _ => Class::Fair,
        };
        let rt_default = self.s.options.rt.util_clamp_min_rt_default;
        let c = &mut self.threads[child];
        c.policy = policy;
        c.nice = nice;
        c.normal_prio = prio;
        c.eff_prio = prio;
        c.class = class;
        c.affinity = affinity;
        c.affinity_gen = c.affinity_gen.wrapping_add(1);
        c.dl = dl;
        c.uclamp_req = req;
        c.uclamp = energy::task_uclamp(class == Class::Rt, req[0], req[1], rt_default);
        let idle = policy == SchedPolicy::Idle;
        self.ents[child] = SchedEntity {
            idle,
            ..SchedEntity::new(LoadWeight::for_nice(nice, idle), self.s.fair.base_slice)
        };
    }

    /// `prctl(PR_SET_NAME)`: the thread takes its own name (`task_rename`).
    pub(in crate::sim) fn sys_prctl_set_name(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        self.threads[tid].renamed = true;
        if out.any.sched {
            let t = &self.threads[tid];
            let ev = TraceEvent::TaskRename {
                pid: t.pid,
                oldcomm: &t.comm0,
                newcomm: &t.comm,
            };
            out.emit(&self.ctx(cpu, now), &ev, g_sched);
        }
        // From now on the tracepoints show the new comm (`comm0`'s doc).
        let t = &mut self.threads[tid];
        t.comm0.clone_from(&t.comm);
    }

    /// Puts the thread to sleep until `at` (it is curr on `cpu`), or until another
    /// thread wakes it when `at` is `None`.
    fn block(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        at: Option<Nanos>,
    ) {
        self.block_as(out, cpu, tid, now, at, true);
    }

    /// [`Sim::block`]; `user`: a workload thread, whose untimed sleeps count towards the
    /// deadlock check.
    fn block_as(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        at: Option<Nanos>,
        user: bool,
    ) {
        self.update_rq_clock(cpu, now);
        // the class read once: update_curr_dl() may throttle the task, not change its class
        let dl = self.threads[tid].class == Class::Dl;
        if dl {
            self.update_curr_dl(cpu, tid, now);
        }
        if !(dl && self.threads[tid].dl.throttled) {
            self.dequeue_task(out, cpu, tid, now, class::DEQUEUE_SLEEP);
        } else {
            // dequeue_task_dl() of a throttled task, out of the tree: dequeue_dl_entity()'s
            // DEQUEUE_SLEEP still makes it non-contending
            self.task_non_contending(out, cpu, tid, now);
        }
        let t = &mut self.threads[tid];
        t.state = TState::Sleeping;
        t.wake_gen = t.wake_gen.wrapping_add(1);
        let gen = t.wake_gen;
        if let Some(at) = at {
            self.q.push(
                at,
                Ev::Wake {
                    tid: tid as u32,
                    gen,
                },
            );
        } else if user {
            self.threads[tid].res_blocked = true;
            self.nr_res_blocked += 1;
        }
        self.set_resched(cpu);
    }

    /// `exit()` of the thread running on `cpu`: `do_exit()` dequeues it for good. A
    /// workload thread writes rt-app's `task end` marker on the way out, and its
    /// `exit_mm()` → `mm_release()` wakes rt-app's main thread if that joins it.
    pub(in crate::sim) fn sys_exit(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        self.update_rq_clock(cpu, now);
        if self.threads[tid].class == Class::Dl {
            self.update_curr_dl(cpu, tid, now); // dequeue_task_dl() → update_curr_dl()
        }
        // do_task_dead(): TASK_DEAD before __schedule() dequeues it (task_non_contending()
        // reads it)
        self.threads[tid].state = TState::Dead;
        self.dequeue_task(out, cpu, tid, now, class::DEQUEUE_SLEEP);
        self.task_dead_dl(tid);
        if !self.is_rtapp_main(tid) {
            self.alive -= 1;
            if self.markers.task {
                self.marker(out, tid, now, RtappMarker::Task { event: "end" });
            }
            self.rtapp_join_wake(out, cpu, tid, now);
        }
        if out.any.sched {
            let ev = TraceEvent::SchedProcessExit {
                task: self.tref(tid),
            };
            out.emit(&self.ctx(cpu, now), &ev, g_sched);
        }
        self.set_resched(cpu);
    }

    /// `sched_yield()` (kernel/sched/syscalls.c, v6.11): the class's `yield_task()`.
    pub(in crate::sim) fn sched_yield(&mut self, cpu: usize, tid: usize, now: Nanos) {
        let class = self.threads[tid].class;
        class.yield_task(self, cpu, tid, now);
    }
}
