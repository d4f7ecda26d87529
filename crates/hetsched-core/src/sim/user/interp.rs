//! rt-app's thread body in user space: the program of phases and events (`run`, `runtime`,
//! `sleep`, `timer`, locks, conditions, barriers, `fork`, `yield`, …), its loop and
//! statistics markers. It reaches the kernel only through the system calls of
//! core/syscalls.rs and the futex model of user/futex.rs.

use crate::sim::*;

impl<'w> Sim<'w> {
    /// Executes the thread's program until it computes, sleeps or exits. The thread is
    /// curr on `cpu`.
    pub(in crate::sim) fn step_program(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        if !self.threads[tid].started {
            self.threads[tid].started = true;
            if self.markers.task {
                self.marker(out, tid, now, RtappMarker::Task { event: "start" });
            }
            let t_first = self.threads[tid].t_first;
            if t_first > now {
                self.block(out, cpu, tid, now, Some(t_first));
                return;
            }
        }
        if !self.do_retry(out, tid) {
            self.block(out, cpu, tid, now, None);
            return;
        }
        let w = self.w;
        loop {
            // Spin guard: a program that steps forever without time passing.
            let th = &mut self.threads[tid];
            if th.spin_at == now {
                th.spin += 1;
                if th.spin > 1_000_000 {
                    let msg = format!(
                        "thread {} executed 1000000 events at {} s without time passing (a loop with no run, sleep or blocking event)",
                        th.comm,
                        crate::time::fmt_ftrace_ts(now)
                    );
                    self.fail(msg);
                    return;
                }
            } else {
                th.spin_at = now;
                th.spin = 0;
            }
            let th = &self.threads[tid];
            if th.done_loops {
                self.exit(out, cpu, tid, now);
                return;
            }
            let task = &w.tasks[th.task];
            let pc = th.pc;
            let phase = &task.phases[pc.phase];
            if !pc.loop_started {
                self.begin_iteration(out, cpu, tid, now);
            }
            if pc.event < phase.events.len() {
                let ev = &phase.events[pc.event].event;
                self.threads[tid].pc.event += 1;
                if self.markers.event {
                    self.marker(
                        out,
                        tid,
                        now,
                        RtappMarker::Event {
                            id: pc.event as u64,
                            type_id: ev.rtapp_type_id(),
                            desc: ev.key(),
                        },
                    );
                }
                match self.do_event(out, cpu, tid, pc, ev, now) {
                    Some(Step::Compute) => {
                        self.threads[tid].op_start = now;
                        self.rqs[cpu].seg_start = now;
                        self.arm_op(cpu, now);
                        return;
                    }
                    Some(Step::SleepUntil { at, timer }) => {
                        if timer {
                            self.threads[tid].timer_wait = Some(at);
                        }
                        self.block(out, cpu, tid, now, Some(at));
                        return;
                    }
                    Some(Step::Exit) => {
                        self.exit(out, cpu, tid, now);
                        return;
                    }
                    Some(Step::Block) => {
                        self.block(out, cpu, tid, now, None);
                        return;
                    }
                    Some(Step::Yield) => {
                        self.threads[tid].yielded = true;
                        self.set_resched(cpu);
                        return;
                    }
                    None => {
                        if self.fatal.is_some() {
                            return;
                        }
                        continue;
                    }
                }
            }
            self.end_iteration(out, tid, now);
        }
    }

    pub(in crate::sim) fn begin_iteration(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        let w = self.w;
        let th = &mut self.threads[tid];
        th.pc.loop_started = true;
        th.loop_start = now;
        th.run_ns = 0;
        th.wu_lat_ns = 0;
        if !w.cumulative_slack {
            th.slack_ns = 0;
        }
        let pc = th.pc;
        let task = &w.tasks[th.task];
        if pc.phase_loop == 0 {
            // A phase applies the attributes it sets; cpus reset to the task's (or all).
            let attrs = &task.phases[pc.phase].attrs;
            let aff = self.phase_affinity[th.task][pc.phase];
            self.set_task_uclamp(tid, attrs.util_min, attrs.util_max);
            if let Some(pol) = attrs.policy {
                self.set_policy(out, tid, pol, attrs.priority);
            } else if let Some(prio) = attrs.priority {
                if self.threads[tid].policy.is_fair() {
                    self.set_user_nice(out, tid, prio);
                } else if self.threads[tid].class == Class::Rt {
                    let pol = self.threads[tid].policy;
                    self.set_policy(out, tid, pol, Some(prio));
                }
            }
            if aff != self.threads[tid].affinity {
                self.threads[tid].affinity = aff;
                if !aff.contains(cpu) {
                    // set_cpus_allowed_ptr(): the running task is moved off by the
                    // stopper; here it is re-queued at once on an allowed CPU.
                    self.set_resched(cpu);
                    self.threads[tid].pc.loop_started = true;
                }
            }
        }
        if self.markers.loop_ {
            self.marker(
                out,
                tid,
                now,
                RtappMarker::Loop {
                    event: "start",
                    thread_loop: pc.thread_loop,
                    phase: pc.phase as u64,
                    phase_loop: pc.phase_loop,
                },
            );
        }
    }

    pub(in crate::sim) fn end_iteration(&mut self, out: &mut Out<'_, '_>, tid: usize, now: Nanos) {
        let w = self.w;
        let th = &self.threads[tid];
        let pc = th.pc;
        let task = &w.tasks[th.task];
        if self.markers.loop_ {
            self.marker(
                out,
                tid,
                now,
                RtappMarker::Loop {
                    event: "end",
                    thread_loop: pc.thread_loop,
                    phase: pc.phase as u64,
                    phase_loop: pc.phase_loop,
                },
            );
        }
        if self.markers.stats {
            let (c_run, c_period) = program::configured_run_period(task, pc.phase);
            let th = &self.threads[tid];
            self.marker(
                out,
                tid,
                now,
                RtappMarker::Stats {
                    period: ((now - th.loop_start) / 1000) as i64,
                    run: (th.run_ns / 1000) as i64,
                    wu_lat: th.wu_lat_ns / 1000,
                    slack: th.slack_ns / 1000,
                    c_period,
                    c_run,
                },
            );
        }
        let th = &mut self.threads[tid];
        let mut pc = th.pc;
        pc.event = 0;
        pc.loop_started = false;
        pc.phase_loop += 1;
        if pc.phase_loop >= task.phases[pc.phase].loop_count {
            pc.phase_loop = 0;
            pc.phase += 1;
            if pc.phase >= task.phases.len() {
                pc.phase = 0;
                pc.thread_loop += 1;
                if task.loop_count >= 0 && pc.thread_loop >= task.loop_count as u64 {
                    th.done_loops = true;
                }
            }
        }
        th.pc = pc;
    }

    pub(in crate::sim) fn do_event(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        pc: Pc,
        ev: &Event,
        now: Nanos,
    ) -> Option<Step> {
        let task = self.threads[tid].task;
        let (ra, rb) = self.ev_slots[task][pc.phase][pc.event];
        match *ev {
            Event::Run { us } => {
                let work = u128::from(program::us(us)) * u128::from(self.cap_ref);
                self.threads[tid].op = Op::Run { work, us };
                Some(Step::Compute)
            }
            Event::Runtime { us } => {
                self.threads[tid].op = Op::Runtime {
                    ns: program::us(us),
                };
                Some(Step::Compute)
            }
            Event::Sleep { us } => Some(Step::SleepUntil {
                at: now + program::us(us),
                timer: false,
            }),
            Event::Timer {
                period_us, mode, ..
            } => {
                let slot = self.timer_slots[task][pc.phase][pc.event];
                let t_first = self.threads[tid].t_first;
                let st = match slot {
                    Some(TimerSlot::Unique(i)) => &mut self.threads[tid].unique_timers[i],
                    Some(TimerSlot::Shared(i)) => &mut self.shared_timers[i],
                    None => return None,
                };
                let (t_next, slack) =
                    program::timer_next(st, t_first, program::us(period_us), mode, now);
                if self.w.cumulative_slack {
                    self.threads[tid].slack_ns += slack;
                } else {
                    self.threads[tid].slack_ns = slack;
                }
                if now < t_next {
                    Some(Step::SleepUntil {
                        at: t_next,
                        timer: true,
                    })
                } else {
                    // a missed timer: rt-app resets wu_latency
                    self.threads[tid].wu_lat_ns = 0;
                    None
                }
            }
            Event::Lock { .. } => self.mutex_lock(out, tid, ra),
            Event::Unlock { .. } => {
                self.mutex_unlock(out, cpu, tid, ra, now);
                None
            }
            Event::Wait { .. } => Some(self.cond_wait(out, cpu, tid, ra, rb, now)),
            Event::Signal { .. } => {
                self.cond_wake(out, cpu, ra, false, now);
                None
            }
            Event::Broad { .. } => {
                self.cond_wake(out, cpu, ra, true, now);
                None
            }
            Event::Sync { .. } => {
                self.cond_wake(out, cpu, ra, false, now);
                Some(self.cond_wait(out, cpu, tid, ra, rb, now))
            }
            Event::Barrier { .. } => {
                let prio = self.threads[tid].eff_prio;
                let b = &mut self.res.barriers[ra];
                if b.waiting <= 0 {
                    // everyone else is waiting: pthread_cond_broadcast()
                    let woken = b.waiters.drain();
                    for w in woken {
                        self.threads[w].retry = Retry::Barrier(ra);
                        self.try_to_wake_up(out, w, now, Some(cpu));
                    }
                    None
                } else {
                    b.waiting -= 1;
                    b.waiters.push(tid, prio);
                    self.threads[tid].wait_on = WaitOn::Barrier(ra);
                    Some(Step::Block)
                }
            }
            Event::Suspend { .. } => {
                let prio = self.threads[tid].eff_prio;
                self.res.suspends[ra].waiters.push(tid, prio);
                self.threads[tid].wait_on = WaitOn::Suspend(ra);
                Some(Step::Block)
            }
            Event::Resume { .. } => {
                let woken = self.res.suspends[ra].waiters.drain();
                for w in woken {
                    self.try_to_wake_up(out, w, now, Some(cpu));
                }
                None
            }
            Event::SemPost { .. } => {
                let sem = &mut self.res.sems[ra];
                sem.value += 1;
                if let Some(w) = sem.waiters.pop() {
                    self.threads[w].retry = Retry::Sem(ra);
                    self.try_to_wake_up(out, w, now, Some(cpu));
                }
                None
            }
            Event::SemWait { .. } => (!self.sem_wait(tid, ra)).then_some(Step::Block),
            Event::Yield => {
                self.sched_yield(cpu, tid, now);
                Some(Step::Yield)
            }
            Event::Fork { .. } => {
                self.fork(out, cpu, tid, ra, now);
                None
            }
            Event::Mem { .. } | Event::Iorun { .. } | Event::Memrun { .. } => {
                let ns = program::cpu_work_ns(ev).unwrap_or(0);
                if ns == 0 {
                    return None;
                }
                let work = u128::from(ns) * u128::from(self.cap_ref);
                self.threads[tid].op = Op::Run { work, us: 0 };
                Some(Step::Compute)
            }
        }
    }
}
