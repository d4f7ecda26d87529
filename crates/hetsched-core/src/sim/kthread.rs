//! Kernel threads as real simulated threads: each CPU's stopper `migration/N`
//! (class/stop.rs) and schedutil's slow-path kthread `sugov:N`
//! (kernel/sched/cpufreq_schedutil.c, v6.11: `sugov_kthread_create()`,
//! `sugov_irq_work()`, `sugov_work()`), one per policy without fast switch: SCHED_DEADLINE
//! with SCHED_FLAG_SUGOV (runtime 1 ms, deadline and period 10 ms, never throttled, no
//! bandwidth, no `cpufreq_update_util()` from its own enqueue), bound to the policy's
//! CPUs (`kthread_bind_mask(related_cpus)`).
//!
//! A governor's slow-path request raises the policy's irq_work (`Ev::IrqWork`, run after
//! the current scheduler operation, as an irq_work runs once interrupts are enabled
//! again), which wakes the kthread. The kthread runs `sugov_work()` up to the driver's
//! request (`cpufreq.kthread_cpu_us` of CPU time), then sleeps while the driver's
//! transition takes the domain's transition latency (the mailbox drivers of the presets
//! wait for the firmware's completion); the completion applies the frequency
//! (`cpu_frequency`) and wakes the kthread, which ends the transition (the same CPU time
//! again) and either serves the request made meanwhile or sleeps until the next irq_work.
//! A request for the current frequency (schedutil's forced commit after a limits change)
//! ends at the driver's call: `__cpufreq_driver_target()` returns at once.
//!
//! The dbs governors (ondemand, conservative) run their work in the sampling CPU's
//! `kworker/N:1` (kernel/workqueue.c, v6.11: `schedule_work_on()` on the system
//! workqueue's per-CPU pool, whose workers are nice-0 fair threads bound to the CPU): woken
//! by the policy's irq_work, it runs `dbs_work_handler()` (`cpufreq.kthread_cpu_us`), asks
//! the driver and sleeps until the transition completes, then ends the work (the same CPU
//! time). A pool has several workers in the kernel; one is modelled, and its name's
//! worker id (`:1`) is an assumption.
//!
//! Simplifications: the kthread sleeps interruptibly in both waits (the kernel's
//! completion wait is uninterruptible, `prev_state` D); `work_in_progress` is held until
//! the transition completes (see crate::cpufreq::schedutil).

use super::*;

/// What a kernel thread is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::sim) enum KthreadKind {
    /// The stopper of this CPU (`migration/N`).
    Stopper(usize),
    /// The `sugov:N` kthread of this performance domain's policy.
    Sugov(usize),
    /// The system workqueue's worker of this CPU (`kworker/N:1`).
    Kworker(usize),
    /// The interactive governor's `cfinteractive` speed-change thread.
    Speedchange,
    /// The `sched` governor's `kschedfreq:N` of this performance domain's policy.
    SchedFreq(usize),
}

/// Where the policy's kthread is in its work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::sim) enum KthreadPhase {
    /// Asleep in `kthread_worker_fn()`, waiting for work.
    Idle,
    /// Woken by the irq_work: `sugov_work()` up to `__cpufreq_driver_target()`.
    Work,
    /// Asleep while the driver's transition takes the transition latency.
    Wait,
    /// Woken by the driver's completion: the end of the transition.
    Done,
}

/// A policy's kthread: its thread and where it is.
#[derive(Debug, Clone, Copy)]
pub(in crate::sim) struct Kthread {
    /// The thread.
    pub tid: usize,
    /// Where it is.
    pub phase: KthreadPhase,
    /// A request was made while it served another (`kthread_queue_work()` of a busy
    /// worker): it serves it before sleeping.
    pub more: bool,
}

impl Sim<'_> {
    /// The workload's threads so far (kernel threads excluded): rt-app's thread index.
    pub(in crate::sim) fn nr_user_threads(&self) -> usize {
        self.threads.iter().filter(|t| t.kthread.is_none()).count()
    }

    /// A kernel thread: its `task_struct`, an empty user side, no fair entity in use.
    /// Kernel threads have pids from [`KTHREAD_PID_BASE`] in creation order (below the
    /// workload's, as on a board).
    #[allow(clippy::too_many_arguments)]
    pub(in crate::sim) fn spawn_kthread(
        &mut self,
        comm: String,
        kind: KthreadKind,
        policy: SchedPolicy,
        class: Class,
        prio: i32,
        dl: DlEntity,
        affinity: CpuSet,
        cpu: usize,
    ) -> usize {
        let tid = self.threads.len();
        let pid = KTHREAD_PID_BASE + (tid - self.nr_user_threads()) as u32;
        self.threads.push(Thread {
            pid,
            comm: comm.clone(),
            comm0: comm,
            policy,
            nice: 0,
            normal_prio: prio,
            eff_prio: prio,
            class,
            rt_key: (0, 0),
            rr_slice: rtq::rr_timeslice(self.s.options.sched.hz),
            dl,
            dl_key: (0, 0),
            dl_gen: 0,
            dl_inactive_gen: 0,
            dl_inactive_active: false,
            res_blocked: false,
            affinity,
            affinity_gen: 0,
            state: TState::Sleeping,
            cpu,
            wake_gen: 0,
            renamed: true,
            wakee: Default::default(),
            recent_used_cpu: cpu,
            enqueue_migrated: false,
            cfs_fork_placed: false,
            kthread: Some(kind),
            uclamp_req: [None, None],
            uclamp: [0, 1024],
            uclamp_on: None,
        });
        self.uthreads.push(user::UserThread::kernel());
        self.cfs_stamp.push(0);
        self.ents.push(SchedEntity::new(
            LoadWeight::for_nice(0, false),
            self.s.fair.base_slice,
        ));
        tid
    }

    /// `cpu_stop_init()`: one stopper per CPU, `migration/N`, of the stop class (it shows
    /// as SCHED_FIFO priority 99: `prio` 0), bound to its CPU, asleep.
    pub(in crate::sim) fn spawn_stoppers(&mut self) {
        for cpu in 0..self.p.nr_cpus() {
            let tid = self.spawn_kthread(
                format!("migration/{cpu}"),
                KthreadKind::Stopper(cpu),
                SchedPolicy::Fifo,
                Class::Stop,
                0,
                DlEntity::default(),
                CpuSet::from_cpus(&[cpu]),
                cpu,
            );
            self.stoppers.push(tid);
        }
    }

    /// `sugov_kthread_create()` for every policy that takes the slow path: the thread
    /// exists from boot, asleep.
    pub(in crate::sim) fn spawn_sugov_kthreads(&mut self) {
        if self.s.options.cpufreq.kthread != crate::options::KthreadModel::Thread {
            return;
        }
        for pd in 0..self.cpufreq.policies.len() {
            if !self.cpufreq.policies[pd].slow_path {
                continue;
            }
            let cpus = &self.p.perf_domains[pd].cpus;
            let first = cpus.iter().copied().min().unwrap_or(0);
            let affinity = CpuSet::from_cpus(cpus);
            let tid = self.spawn_kthread(
                format!("sugov:{first}"),
                KthreadKind::Sugov(pd),
                SchedPolicy::Deadline,
                Class::Dl,
                -1,
                DlEntity::new(1_000_000, 10_000_000, 10_000_000),
                affinity,
                first,
            );
            self.cpufreq.policies[pd].kthread = Some(Kthread {
                tid,
                phase: KthreadPhase::Idle,
                more: false,
            });
        }
    }

    /// A dbs governor's workers: `kworker/N:1` per CPU, a nice-0 fair thread bound to it.
    pub(in crate::sim) fn spawn_kworkers(&mut self) {
        if !self.cpufreq.dbs
            || self.s.options.cpufreq.kthread != crate::options::KthreadModel::Thread
        {
            return;
        }
        for cpu in 0..self.p.nr_cpus() {
            let tid = self.spawn_kthread(
                format!("kworker/{cpu}:1"),
                KthreadKind::Kworker(cpu),
                SchedPolicy::Other,
                Class::Fair,
                120,
                DlEntity::default(),
                CpuSet::from_cpus(&[cpu]),
                cpu,
            );
            self.cpufreq.kworkers.push(Kthread {
                tid,
                phase: KthreadPhase::Idle,
                more: false,
            });
        }
    }

    /// The governor's irq_work of `pd` raised on `cpu`: schedutil's wakes the policy's
    /// kthread; a dbs governor's queues its work on `cpu`'s kworker (`dbs_irq_work()` →
    /// `schedule_work_on()`).
    pub(in crate::sim) fn governor_irq_work(
        &mut self,
        out: &mut Out<'_, '_>,
        pd: usize,
        cpu: usize,
        now: Nanos,
    ) {
        if self.cpufreq.schedfreq.is_some() {
            return self.schedfreq_irq_work(out, pd, cpu, now);
        }
        if !self.cpufreq.dbs {
            return self.sugov_irq_work(out, pd, cpu, now);
        }
        let Some(kw) = self.cpufreq.kworkers.get_mut(cpu) else {
            return;
        };
        // one work per policy is in progress at a time (`work_in_progress`)
        kw.phase = KthreadPhase::Work;
        let tid = kw.tid;
        self.try_to_wake_up(out, tid, now, Some(cpu));
    }

    /// The driver's transition the kworker of `cpu` waits for completed: it is woken.
    pub(in crate::sim) fn kworker_transition_complete(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        now: Nanos,
    ) {
        let Some(kw) = self.cpufreq.kworkers.get_mut(cpu) else {
            return;
        };
        kw.phase = KthreadPhase::Done;
        let tid = kw.tid;
        self.kthread_transition_wake(out, tid, now);
    }

    /// The kworker's CPU time for its phase is spent: after the governor's update it asks
    /// the driver and sleeps through the transition, or ends the work; after the
    /// transition it ends the work.
    fn kworker_op_done(&mut self, out: &mut Out<'_, '_>, cpu: usize, tid: usize, now: Nanos) {
        let pd = self.p.cpus[cpu].perf_domain;
        let phase = self.cpufreq.kworkers[cpu].phase;
        let v44 = self.cpufreq.policies[pd].dbs_v44.is_some();
        let waits = match phase {
            KthreadPhase::Work if v44 => self.dbs_v44_work(cpu, pd, now),
            KthreadPhase::Work => self.dbs_work(pd, Some(cpu), now),
            _ => {
                self.cpufreq.policies[pd].gov.dbs_work_done();
                self.dbs_v44_requeue(pd, now);
                false
            }
        };
        self.cpufreq.kworkers[cpu].phase = if waits {
            KthreadPhase::Wait
        } else {
            KthreadPhase::Idle
        };
        self.kthread_sleep(out, cpu, tid, now);
    }

    /// `sugov_irq_work()` raised on `cpu`: `kthread_queue_work()` wakes the policy's
    /// kthread, or leaves the request to it when it is busy.
    pub(in crate::sim) fn sugov_irq_work(
        &mut self,
        out: &mut Out<'_, '_>,
        pd: usize,
        cpu: usize,
        now: Nanos,
    ) {
        let Some(kt) = self.cpufreq.policies[pd].kthread.as_mut() else {
            return;
        };
        if kt.phase != KthreadPhase::Idle {
            kt.more = true;
            return;
        }
        kt.phase = KthreadPhase::Work;
        let tid = kt.tid;
        self.try_to_wake_up(out, tid, now, Some(cpu));
    }

    /// The driver's transition of `pd` completed: the kthread waiting for it is woken.
    pub(in crate::sim) fn sugov_transition_complete(
        &mut self,
        out: &mut Out<'_, '_>,
        pd: usize,
        now: Nanos,
    ) {
        let Some(kt) = self.cpufreq.policies[pd].kthread.as_mut() else {
            return;
        };
        if kt.phase != KthreadPhase::Wait {
            return;
        }
        kt.phase = KthreadPhase::Done;
        let tid = kt.tid;
        self.kthread_transition_wake(out, tid, now);
    }

    /// The driver's completion wakes kernel thread `tid`, asleep in
    /// `__cpufreq_driver_target()` (its phase set to `Done` by the caller), on its CPU.
    pub(in crate::sim) fn kthread_transition_wake(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        now: Nanos,
    ) {
        let cpu = self.threads[tid].cpu;
        self.try_to_wake_up(out, tid, now, Some(cpu));
    }

    /// A kernel thread got the CPU: a stopper runs its work; a `sugov:N` goes on with the
    /// CPU time of its current phase.
    pub(in crate::sim) fn kthread_switched_in(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        match self.threads[tid].kthread {
            Some(KthreadKind::Stopper(_)) => self.cpu_stopper_thread(out, cpu, tid, now),
            _ => self.kthread_run(cpu, tid, now),
        }
    }

    /// The `sugov:N` kthread runs the CPU time of its current phase.
    fn kthread_run(&mut self, cpu: usize, tid: usize, now: Nanos) {
        if self.uthreads[tid].op == Op::Step {
            let us = self.s.options.cpufreq.kthread_cpu_us.unwrap_or(10);
            self.uthreads[tid].op = Op::Runtime { ns: us * 1000 };
            self.start_op(cpu, now);
        } else {
            self.arm_op(cpu, now);
        }
    }

    /// The kthread's CPU time for its phase is spent: after `sugov_work()` it asks the
    /// driver and sleeps until the transition completes; after the transition's end it
    /// serves a request made meanwhile, or sleeps until the next irq_work.
    pub(in crate::sim) fn kthread_op_done(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        self.uthreads[tid].op = Op::Step;
        if let Some(KthreadKind::Kworker(c)) = self.threads[tid].kthread {
            debug_assert_eq!(c, cpu);
            return self.kworker_op_done(out, cpu, tid, now);
        }
        if let Some(KthreadKind::Speedchange) = self.threads[tid].kthread {
            return self.speedchange_op_done(out, cpu, tid, now);
        }
        if let Some(KthreadKind::SchedFreq(pd)) = self.threads[tid].kthread {
            return self.schedfreq_thread_step(out, cpu, tid, pd, now);
        }
        let Some(KthreadKind::Sugov(pd)) = self.threads[tid].kthread else {
            return;
        };
        let Some(kt) = self.cpufreq.policies[pd].kthread else {
            return;
        };
        match kt.phase {
            KthreadPhase::Work if self.cpufreq.policies[pd].gov.target_is_cur() => {
                // __cpufreq_driver_target() returns at once for policy->cur (v6.11): no
                // transition to wait for; sugov_work() ends, and a request made meanwhile
                // is served next
                let more = matches!(
                    self.cpufreq.policies[pd].gov.transition_done(),
                    crate::cpufreq::governor::FreqRequest::Target { .. }
                );
                if let Some(k) = self.cpufreq.policies[pd].kthread.as_mut() {
                    k.phase = KthreadPhase::Done;
                    k.more |= more;
                }
                self.kthread_op_done(out, cpu, tid, now);
            }
            KthreadPhase::Work => {
                self.set_kthread_phase(pd, KthreadPhase::Wait);
                let at = now + self.cpufreq.policies[pd].transition_latency_ns;
                self.q.push(at, Ev::FreqApply { pd: pd as u32 });
                self.kthread_sleep(out, cpu, tid, now);
            }
            KthreadPhase::Done if kt.more => {
                if let Some(k) = self.cpufreq.policies[pd].kthread.as_mut() {
                    k.more = false;
                    k.phase = KthreadPhase::Work;
                }
                self.kthread_run(cpu, tid, now);
            }
            _ => {
                self.set_kthread_phase(pd, KthreadPhase::Idle);
                self.kthread_sleep(out, cpu, tid, now);
            }
        }
    }

    fn set_kthread_phase(&mut self, pd: usize, phase: KthreadPhase) {
        if let Some(k) = self.cpufreq.policies[pd].kthread.as_mut() {
            k.phase = phase;
        }
    }
}
