//! rt-app's main thread and the start of the threads it creates (scheduler-tools/rt-app
//! master 55cb0c0, `src/rt-app.c`), as the kernel sees them (kernel/fork.c,
//! kernel/sched/core.c and fair.c, v6.11):
//!
//! - `main()` is a running SCHED_OTHER task (nice 0, every CPU allowed), pid
//!   1000 and comm `rt-app` (the program's name), on `rtapp.main_cpu` at the start.
//!   It creates the workload's threads one after another in file order, every instance in
//!   turn (`create_thread()`: copy the thread's data, name it, open its log, then
//!   `pthread_create()` → `clone()`), each costing it `rtapp.create_thread_us` of CPU
//!   work before the clone. The kernel places each new thread from the main thread's CPU
//!   (`wake_up_new_task()` → `select_task_rq(WF_FORK)`, `post_init_entity_util_avg()` on
//!   the CPU chosen; core/wake.rs), and the thread inherits the main thread's policy,
//!   nice, clamps and affinity (`copy_process()`, `sched_fork()`).
//! - Then `main()` sleeps for the workload's `global.duration` (`sleep(opts.duration)`;
//!   the run ends at the duration or when every thread has exited, whichever is first),
//!   or without one waits for each thread in creation order (`__shutdown()` →
//!   `pthread_join()`: a futex wait the exiting thread's `mm_release()` wakes), writes
//!   `rtapp_main: event=end` and exits.
//! - A new thread runs `thread_body()`: it names itself (`pthread_setname_np()`; on its
//!   first switch-in, user/interp.rs), spends `rtapp.thread_start_us` of CPU work (glibc's
//!   `start_thread()`, the name, rt-app's timing buffer), the thread of index 0 reads
//!   `t_zero` (`rtapp_main: event=clock_ref`, task category), and a thread created at the
//!   start waits at `threads_barrier` (`pthread_barrier_wait()` with `nthreads`
//!   participants: the last to arrive wakes the others, FIFO as the futex queues them).
//!   A forked thread (`fork` event) does not wait. Then `rtapp_task: event=start`, the
//!   `delay` (until `t_zero + delay`), and its own scheduling parameters
//!   (`set_thread_param()` of the task: policy, priority, DL parameters, clamps) before
//!   its first phase.
//!
//! `rtapp.main_thread = false` keeps the model before issue 22: every thread is created
//! at the start, from CPU 0, with its own parameters, and starts at once.

use crate::sim::*;

/// Where rt-app's `main()` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::sim) enum MainStage {
    /// Not yet run: `rtapp_main: event=start` comes first.
    Begin,
    /// About to create the `i`-th thread of the start list (`create_thread()`'s work).
    Create(usize),
    /// `create_thread()`'s work for the `i`-th thread is done: `pthread_create()`'s clone.
    Clone(usize),
    /// `sleep(opts.duration)`.
    Sleep,
    /// `pthread_join()` of the `j`-th workload thread (creation order).
    Join(usize),
    /// Exited.
    Exited,
}

/// rt-app's main thread.
#[derive(Debug, Clone)]
pub(in crate::sim) struct RtappMain {
    /// Its thread.
    pub(in crate::sim) tid: usize,
    /// Where it is.
    pub(in crate::sim) stage: MainStage,
    /// The threads `main()` creates, in file order: a task index per instance.
    pub(in crate::sim) start: Vec<usize>,
}

/// `threads_barrier`: the threads created at the start wait there for one another.
#[derive(Debug, Clone, Default)]
pub(in crate::sim) struct StartBarrier {
    /// Participants still to arrive.
    pub(in crate::sim) remaining: usize,
    /// The arrived ones, asleep (FIFO: they all have the main thread's priority).
    pub(in crate::sim) waiters: WaitQueue,
}

/// Where a created thread is in `thread_body()` before its program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(in crate::sim) enum Prologue {
    /// Not yet run: its start work is next.
    Start,
    /// Its start work is done: `t_zero`, then the barrier.
    Started,
    /// Asleep at `threads_barrier`.
    Barrier,
    /// In its program (always, with `rtapp.main_thread = false`).
    #[default]
    Done,
}

/// Work of `us` µs on a CPU of capacity 1024 at its maximum frequency (capacity-ns).
fn work_of_us(us: u64) -> u128 {
    u128::from(program::us(us)) * 1024
}

impl<'w> Sim<'w> {
    /// Whether `tid` is rt-app's main thread.
    pub(in crate::sim) fn is_rtapp_main(&self, tid: usize) -> bool {
        self.rtapp_main.as_ref().is_some_and(|m| m.tid == tid)
    }

    /// Whether the main thread is still creating the threads (no deadlock is possible
    /// while it runs: the start barrier is not complete).
    pub(in crate::sim) fn rtapp_main_creating(&self) -> bool {
        self.rtapp_main.as_ref().is_some_and(|m| {
            matches!(
                m.stage,
                MainStage::Begin | MainStage::Create(_) | MainStage::Clone(_)
            )
        })
    }

    /// Whether the run may end once no workload thread is alive: no main thread, or one
    /// that has exited or sleeps out the duration.
    pub(in crate::sim) fn rtapp_main_done(&self) -> bool {
        self.rtapp_main
            .as_ref()
            .is_none_or(|m| matches!(m.stage, MainStage::Sleep | MainStage::Exited))
    }

    /// The CPU the main thread runs on at the start (`rtapp.main_cpu`; unset: the
    /// calibration CPU when rt-app calibrates, `"calibration": "CPUn"` — `main()` pins
    /// itself there to calibrate and its restored affinity leaves it there —, otherwise
    /// the first CPU of the highest capacity).
    fn rtapp_main_cpu(&self) -> usize {
        if let Some(c) = self.s.options.rtapp.main_cpu {
            return c;
        }
        match self.w.calibration {
            Calibration::Cpu(c) => c,
            Calibration::PLoadNs(_) => {
                let max = self.p.max_capacity();
                self.p
                    .cpus
                    .iter()
                    .position(|c| c.capacity == max)
                    .unwrap_or(0)
            }
        }
    }

    /// The workload starts (`Ev::Start`): rt-app's main thread begins running on its CPU
    /// (it appears as a new task there: `sched_wakeup_new`, then `sched_switch`), or,
    /// with `rtapp.main_thread = false`, every thread is created at once.
    pub(in crate::sim) fn rtapp_start(&mut self, out: &mut Out<'_, '_>, now: Nanos) {
        if !self.s.options.rtapp.main_thread {
            self.start_threads(out, now);
            return;
        }
        self.start_system_tasks();
        let own = self.w.first_system_task();
        let start: Vec<usize> = self.w.tasks[..own]
            .iter()
            .enumerate()
            .flat_map(|(ti, t)| std::iter::repeat_n(ti, t.instances as usize))
            .collect();
        let cpu = self.rtapp_main_cpu();
        let tid = self.threads.len();
        self.threads.push(Thread {
            pid: PID_BASE,
            comm: "rt-app".into(),
            comm0: "rt-app".into(),
            policy: SchedPolicy::Other,
            nice: 0,
            normal_prio: 120,
            eff_prio: 120,
            class: Class::Fair,
            rt_key: (0, 0),
            rr_slice: rtq::rr_timeslice(self.s.options.sched.hz),
            dl: DlEntity::default(),
            dl_key: (0, 0),
            dl_gen: 0,
            dl_inactive_gen: 0,
            dl_inactive_active: false,
            res_blocked: false,
            affinity: CpuSet::first_n(self.p.nr_cpus()),
            affinity_gen: 0,
            state: TState::Sleeping,
            cpu,
            wake_gen: 0,
            renamed: true,
            wakee: Default::default(),
            recent_used_cpu: cpu,
            enqueue_migrated: false,
            cfs_fork_placed: false,
            kthread: None,
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
        self.start_barrier = StartBarrier {
            remaining: start.len(),
            waiters: WaitQueue::default(),
        };
        self.rtapp_main = Some(RtappMain {
            tid,
            stage: MainStage::Begin,
            start,
        });
        self.activate_new_task(out, tid, cpu, now, cpu);
    }

    /// The pid of rt-app's next thread: rt-app's threads in creation order from
    /// `PID_BASE + 1`, the system's background tasks numbered after the threads created
    /// at the start (the pids they had when rt-app created them), and threads a `fork`
    /// event creates after those.
    pub(in crate::sim) fn next_user_pid(&self) -> u32 {
        let n = self.user_tids.len();
        let skip = if self.system_apart() && n >= self.nr_start_threads {
            self.nr_system
        } else {
            0
        };
        PID_BASE + 1 + (n + skip) as u32
    }

    /// Whether the system's background tasks exist apart from rt-app (with its main
    /// thread; `rtapp.main_thread = false` creates every task at once, as before).
    fn system_apart(&self) -> bool {
        self.s.options.rtapp.main_thread && self.nr_system > 0
    }

    /// The system's background tasks (`Workload::system_tasks`: the noise model's
    /// daemons and per-CPU kthreads) exist before rt-app starts: each is asleep at the
    /// start, last run on its CPU (a pinned one's own; the `k`-th unbound one on CPU
    /// `k mod nr_cpus`, the CPU it is named after), and its first activation is a timed
    /// wake-up at its `delay` (`try_to_wake_up()` from that CPU, like any sleeper's). They
    /// are not rt-app's: not created, counted, synchronised or joined by its main thread,
    /// named as their task (no rt-app thread index) and writing no rt-app markers.
    ///
    /// Each CPU that one of them last ran on went idle when the latest of them ended
    /// there ([`last_run_end_before_start_us`]), through a newidle pass that stamped
    /// `rq->idle_stamp` (`sched_balance_newidle()`, v6.11): the CPUs of a board have been
    /// idle for different times when rt-app starts, and
    /// `sched_balance_find_dst_group_cpu()` prefers the most recently idled of equal idle
    /// states. A CPU without a system task keeps the stamp of the 1 ms before the start.
    fn start_system_tasks(&mut self) {
        if !self.system_apart() {
            return;
        }
        let n = self.p.nr_cpus();
        let first = self.w.first_system_task();
        let mut k = 0usize;
        let mut idle_since: Vec<Option<Nanos>> = vec![None; n];
        for ti in first..self.w.tasks.len() {
            let t = &self.w.tasks[ti];
            let (name, delay_us) = (t.name.clone(), t.delay_us);
            let ended = last_run_end_before_start_us(t)
                .map(|us| self.t0.saturating_sub(program::us(us)).max(1));
            for _ in 0..t.instances {
                let pid = PID_BASE + 1 + (self.nr_start_threads + k) as u32;
                let tid = self.spawn_thread(ti, name.clone(), pid);
                let th = &mut self.threads[tid];
                let cpu = if th.affinity.contains(k % n) {
                    k % n
                } else {
                    th.affinity.first().unwrap_or(0)
                };
                th.cpu = cpu;
                th.recent_used_cpu = cpu;
                if let Some(e) = ended {
                    idle_since[cpu] = idle_since[cpu].max(Some(e));
                }
                th.renamed = true;
                th.comm0 = th.comm.clone();
                let at = self.t0 + program::us(delay_us);
                let u = &mut self.uthreads[tid];
                u.system = true;
                u.t_first = at;
                self.alive += 1;
                self.q.push(
                    at,
                    Ev::Wake {
                        tid: tid as u32,
                        gen: 0,
                    },
                );
                k += 1;
            }
        }
        for (rq, since) in self.rqs.iter_mut().zip(idle_since) {
            if let Some(t) = since {
                rq.idle_stamp = t;
            }
        }
    }

    fn set_main_stage(&mut self, stage: MainStage) {
        if let Some(m) = self.rtapp_main.as_mut() {
            m.stage = stage;
        }
    }

    /// `main()` goes on: the main thread `tid` runs on `cpu` with nothing left of its
    /// current work.
    pub(in crate::sim) fn rtapp_main_step(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        loop {
            let Some(m) = self.rtapp_main.as_ref() else {
                return;
            };
            match m.stage {
                MainStage::Begin => {
                    if self.markers.main {
                        let ev = RtappMarker::Main {
                            event: "start",
                            data: 0,
                        };
                        self.marker(out, tid, now, ev);
                    }
                    self.set_main_stage(MainStage::Create(0));
                }
                MainStage::Create(i) if i < m.start.len() => {
                    self.set_main_stage(MainStage::Clone(i));
                    let us = self.s.options.rtapp.create_thread_us;
                    if us > 0 {
                        self.uthreads[tid].op = Op::Run {
                            work: work_of_us(us),
                            us: 0,
                        };
                        self.start_op(cpu, now);
                        return;
                    }
                }
                MainStage::Create(_) => {
                    // every thread created (`running_threads = nthreads`)
                    if let Some(d) = self.w.duration_s.filter(|&d| d > 0) {
                        self.set_main_stage(MainStage::Sleep);
                        let at = now.saturating_add(d.saturating_mul(NSEC_PER_SEC));
                        self.sys_clock_nanosleep(out, cpu, tid, now, at);
                        return;
                    }
                    self.set_main_stage(MainStage::Join(0));
                }
                MainStage::Clone(i) => {
                    let ti = m.start[i];
                    let comm = thread_comm(&self.w.tasks[ti].name, i as u32);
                    let child = self.sys_clone(out, Some((tid, cpu)), ti, comm, now);
                    let u = &mut self.uthreads[child];
                    u.prologue = Prologue::Start;
                    u.ind = i as u32;
                    u.forked = false;
                    u.attrs_pending = true;
                    u.maybe_unsettled = true;
                    self.set_main_stage(MainStage::Create(i + 1));
                }
                MainStage::Join(j) => match self.user_tids.get(j) {
                    None => {
                        if self.markers.main {
                            let ev = RtappMarker::Main {
                                event: "end",
                                data: 0,
                            };
                            self.marker(out, tid, now, ev);
                        }
                        self.set_main_stage(MainStage::Exited);
                        self.sys_exit(out, cpu, tid, now);
                        return;
                    }
                    Some(&t) if self.threads[t].state == TState::Dead => {
                        self.set_main_stage(MainStage::Join(j + 1));
                    }
                    Some(_) => {
                        self.sys_futex_wait_join(out, cpu, tid, now);
                        return;
                    }
                },
                MainStage::Sleep | MainStage::Exited => return,
            }
        }
    }

    /// Workload thread `tid` exits on `cpu`: `mm_release()` clears its tid and wakes the
    /// main thread when it is the one `pthread_join()` waits for.
    pub(in crate::sim) fn rtapp_join_wake(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        let Some(m) = self.rtapp_main.as_ref() else {
            return;
        };
        let MainStage::Join(j) = m.stage else {
            return;
        };
        let main = m.tid;
        if self.user_tids.get(j) == Some(&tid) && self.threads[main].state == TState::Sleeping {
            self.sys_futex_wake(out, cpu, main, now);
        }
    }

    /// `thread_body()` up to the thread's program (see the module's doc): false when the
    /// thread is now computing or asleep.
    pub(in crate::sim) fn thread_prologue(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) -> bool {
        match self.uthreads[tid].prologue {
            Prologue::Done => true,
            Prologue::Start => {
                self.uthreads[tid].prologue = Prologue::Started;
                self.uthreads[tid].maybe_unsettled = true;
                let us = self.s.options.rtapp.thread_start_us;
                if us > 0 {
                    self.uthreads[tid].op = Op::Run {
                        work: work_of_us(us),
                        us: 0,
                    };
                    self.start_op(cpu, now);
                    return false;
                }
                self.thread_body_start(out, cpu, tid, now)
            }
            Prologue::Started => self.thread_body_start(out, cpu, tid, now),
            Prologue::Barrier => {
                self.prologue_done(tid);
                true
            }
        }
    }

    /// `thread_body()` after its start work: `t_zero` for the thread of index 0, then the
    /// start barrier for a thread created at the start.
    fn thread_body_start(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) -> bool {
        if self.uthreads[tid].ind == 0 && !self.uthreads[tid].forked {
            self.t_zero = Some(now);
            if self.markers.task {
                let ev = RtappMarker::Main {
                    event: "clock_ref",
                    data: (now / 1000) as i64,
                };
                self.marker(out, tid, now, ev);
            }
        }
        if !self.uthreads[tid].forked {
            let b = &mut self.start_barrier;
            b.remaining = b.remaining.saturating_sub(1);
            if b.remaining > 0 {
                let prio = self.threads[tid].eff_prio;
                self.start_barrier.waiters.push(tid, prio);
                self.uthreads[tid].wait_on = WaitOn::StartBarrier;
                self.uthreads[tid].prologue = Prologue::Barrier;
                self.uthreads[tid].maybe_unsettled = true;
                self.sys_futex_wait(out, cpu, tid, now);
                return false;
            }
            // the last to arrive: futex_wake(INT_MAX) of the others
            let woken = self.start_barrier.waiters.drain();
            for w in woken {
                self.wake_waiter(out, cpu, w, now);
            }
        }
        self.prologue_done(tid);
        true
    }

    /// The thread leaves the start: its timers count from `t_zero + delay`.
    fn prologue_done(&mut self, tid: usize) {
        let delay = self.w.tasks[self.uthreads[tid].task].delay_us;
        let t_zero = self.t_zero.unwrap_or(self.t0);
        let u = &mut self.uthreads[tid];
        u.prologue = Prologue::Done;
        u.t_first = t_zero + program::us(delay);
    }

    /// `set_thread_param()` of the task's own scheduling parameters, after its delay:
    /// `sched_setattr()` of its policy (the workload's `default_policy` when it names
    /// none) and priority (nice 0, RT priority 10 by default) or DL parameters, the v6.12
    /// custom slice of a fair task, then its clamps (`_set_thread_uclamp()`; not for
    /// SCHED_DEADLINE).
    pub(in crate::sim) fn set_thread_param(&mut self, out: &mut Out<'_, '_>, tid: usize) {
        let w = self.w;
        let t = &w.tasks[self.uthreads[tid].task];
        let policy = t.attrs.policy.unwrap_or(w.default_policy);
        let prio = match policy {
            SchedPolicy::Fifo | SchedPolicy::Rr => Some(t.attrs.priority.unwrap_or(10)),
            SchedPolicy::Deadline => None,
            _ => Some(t.attrs.priority.unwrap_or(0)),
        };
        let dl = (policy == SchedPolicy::Deadline).then(|| dl_entity_of(&t.attrs));
        if policy.is_fair() && self.s.options.fair.custom_slice {
            if let Some(us) = t.attrs.dl_runtime_us {
                self.ents[tid].slice = (us * 1000).clamp(100_000, 100_000_000);
            }
        }
        self.sys_sched_setattr(out, tid, Some(policy), prio, dl);
        if policy != SchedPolicy::Deadline {
            self.sys_sched_setattr_uclamp(tid, t.attrs.util_min, t.attrs.util_max);
        }
    }
}

/// When a periodic system task's activation before the start ended, in µs before the
/// start: its program is one phase of `run` then a timer of period `P` (the noise model's
/// background, crate::noise), and its first activation at its `delay` `d < P` follows
/// one at `d - P`, whose `run` of `R` µs ended `P - d - R` µs before the start (at
/// capacity 1024 and fmax; when that run would reach into the start, its beginning,
/// `P - d`). `None` for any other program.
pub(in crate::sim) fn last_run_end_before_start_us(t: &crate::workload::TaskSpec) -> Option<u64> {
    use crate::workload::Event;
    let [phase] = t.phases.as_slice() else {
        return None;
    };
    let [run, timer] = phase.events.as_slice() else {
        return None;
    };
    let (Event::Run { us: r }, Event::Timer { period_us: p, .. }) = (&run.event, &timer.event)
    else {
        return None;
    };
    let before = p.checked_sub(t.delay_us).filter(|&b| b > 0)?;
    Some(if before > *r { before - r } else { before })
}
