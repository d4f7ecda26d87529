//! rt-app's thread body in user space: the program of phases and events (`run`, `runtime`,
//! `sleep`, `timer`, locks, conditions, barriers, `fork`, `yield`, …), its loop and
//! statistics markers. It reaches the kernel only through the system calls of
//! core/syscalls.rs and the futex model of user/futex.rs.

use crate::sim::*;
use user::flat::Act;

impl<'w> Sim<'w> {
    /// Executes the thread's program until it computes, sleeps or exits. The thread is
    /// curr on `cpu`.
    ///
    /// One borrow of the thread serves the whole step, renewed only after a call that
    /// may change the threads: the iterations' starts and ends, the common events (`run`,
    /// `runtime`, `sleep`, `timer`) and their outcomes (a compute, a sleep) are done on
    /// it; the other events, a phase's attributes and affinity, the markers and the spin
    /// guard's failure are calls out of line ([`Sim::do_event`], [`Sim::apply_phase`],
    /// [`Sim::loop_marker`], …), so that the common path keeps its values in registers.
    pub(in crate::sim) fn step_program(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        // most steps have nothing to do before the program: one test for all of it
        // (the four fields of UserThread::settled() are tested only when one of them may
        // have changed since the last test found them settled)
        let mut th = &mut self.uthreads[tid];
        debug_assert!(
            th.maybe_unsettled || th.settled(),
            "unsettled without the mark"
        );
        if th.maybe_unsettled {
            if th.settled() {
                th.maybe_unsettled = false;
            } else {
                if !self.program_prologue(out, cpu, tid, now) {
                    return;
                }
                th = &mut self.uthreads[tid];
            }
        }
        let w = self.w;
        loop {
            // Spin guard: a program that steps forever without time passing.
            if th.spin_at == now {
                th.spin += 1;
                if th.spin > 1_000_000 {
                    return self.spin_failed(tid, now);
                }
            } else {
                th.spin_at = now;
                th.spin = 0;
            }
            if th.done_loops {
                return self.sys_exit(out, cpu, tid, now);
            }
            if !th.pc.loop_started {
                // An iteration starts: its statistics restart; the phase's first applies
                // the attributes it sets and its affinity (cpus reset to the task's, or
                // all); then its `rtapp_loop` marker.
                th.pc.loop_started = true;
                th.loop_start = now;
                th.run_ns = 0;
                th.wu_lat_ns = 0;
                if !w.cumulative_slack {
                    th.slack_ns = 0;
                }
                if th.pc.phase_loop == 0 {
                    let at = th.cur.phase_index();
                    // sys_sched_setaffinity() changes nothing when the affinity is the
                    // thread's: its own first test, made here, and known to hold when the
                    // thread's last phase start was one of this phase, which sets no
                    // attributes (UserThread::affinity_phase): then the phase is not read
                    debug_assert!(
                        th.affinity_phase != at || {
                            let ph = self.prog.phase(th.cur);
                            !ph.sets_attrs && ph.affinity == self.threads[tid].affinity
                        },
                        "a thread's affinity changed outside its phase starts"
                    );
                    if th.affinity_phase != at {
                        let ph = self.prog.phase(th.cur);
                        let sets_attrs = ph.sets_attrs;
                        if sets_attrs || ph.affinity != self.threads[tid].affinity {
                            self.apply_phase(out, cpu, tid, now);
                            th = &mut self.uthreads[tid];
                        }
                        th.affinity_phase = if sets_attrs { u32::MAX } else { at };
                    }
                }
                if self.markers.loop_ {
                    self.loop_marker(out, tid, now, "start");
                    th = &mut self.uthreads[tid];
                }
            }
            let fe = self.prog.event(th.cur);
            if let Act::End {
                loop_count,
                first,
                next,
                last,
            } = fe.act
            {
                // the iteration's events are done
                if self.markers.loop_ || self.markers.stats {
                    self.end_markers(out, tid, now);
                    th = &mut self.uthreads[tid];
                }
                Self::next_iteration(&self.prog, th, loop_count, first, next, last);
                continue;
            }
            let id = th.pc.event;
            th.pc.event += 1;
            th.cur.advance();
            if self.markers.event {
                self.event_marker(out, tid, now, id, *fe);
                th = &mut self.uthreads[tid];
            }
            match fe.act {
                Act::Run { us, ns } => {
                    let work = u128::from(ns) * u128::from(self.cap_ref);
                    let op = Op::Run { work, us };
                    th.op = op;
                    th.op_start = now;
                    return self.start_program_op(cpu, tid, op, now);
                }
                Act::Runtime { ns } => {
                    let op = Op::Runtime { ns };
                    th.op = op;
                    th.op_start = now;
                    return self.start_program_op(cpu, tid, op, now);
                }
                Act::Sleep { ns } => {
                    return self.sys_clock_nanosleep(out, cpu, tid, now, now + ns);
                }
                Act::Timer {
                    period_ns,
                    mode,
                    slot,
                } => {
                    let t_first = th.t_first;
                    let st = match slot {
                        TimerSlot::Unique(i) => th.unique_timers.get_mut(i as usize),
                        TimerSlot::Shared(i) => &mut self.shared_timers[i as usize],
                    };
                    let (t_next, slack) = program::timer_next(st, t_first, period_ns, mode, now);
                    if w.cumulative_slack {
                        th.slack_ns += slack;
                    } else {
                        th.slack_ns = slack;
                    }
                    if now < t_next {
                        // the wake-up latency is measured from it (return_to_user())
                        th.timer_wait = Some(t_next);
                        return self.sys_clock_nanosleep(out, cpu, tid, now, t_next);
                    }
                    // a missed timer: rt-app resets wu_latency
                    th.wu_lat_ns = 0;
                }
                Act::Other | Act::End { .. } => {
                    let fe = *fe;
                    if let Some(step) = self.do_event(out, cpu, tid, fe, now) {
                        return self.finish_step(out, cpu, tid, now, step);
                    }
                    th = &mut self.uthreads[tid];
                }
            }
            // the event is done and the program goes on
            if self.fatal.is_some() {
                return;
            }
        }
    }

    /// The iteration of `th` is over: the next iteration of its phase, else the next
    /// phase, else the next loop of the program (after its last, the thread is done).
    /// The phase's `Act::End` gives its iteration count, its first event, the next
    /// phase's start and whether it is the program's last (debug builds check them
    /// against the phase and the task).
    #[inline(always)]
    fn next_iteration(
        prog: &user::flat::FlatProgram<'w>,
        th: &mut user::UserThread,
        loop_count: u64,
        first: u32,
        next: user::flat::Cursor,
        last: bool,
    ) {
        debug_assert_eq!(loop_count, prog.phase(th.cur).loop_count);
        debug_assert_eq!(
            Some((next, last)),
            Some(prog.task(th.task)).map(|task| (
                th.cur.next_phase(prog, task),
                th.pc.phase + 1 >= task.nr_phases as usize
            ))
        );
        debug_assert_eq!(th.loop_limit, prog.task(th.task).loop_limit());
        let pc = &mut th.pc;
        pc.event = 0;
        pc.loop_started = false;
        pc.phase_loop += 1;
        if pc.phase_loop >= loop_count {
            pc.phase_loop = 0;
            th.cur = next;
            if last {
                pc.phase = 0;
                pc.thread_loop += 1;
                if pc.thread_loop >= th.loop_limit {
                    th.done_loops = true;
                }
            } else {
                pc.phase += 1;
            }
        } else {
            th.cur.rewind(first);
        }
    }

    /// The first iteration of a phase: `sched_setattr()` of the attributes it sets, then
    /// `sched_setaffinity()` to its affinity.
    #[inline(never)]
    fn apply_phase(&mut self, out: &mut Out<'_, '_>, cpu: usize, tid: usize, now: Nanos) {
        let ph = self.prog.phase(self.uthreads[tid].cur);
        let affinity = ph.affinity;
        if ph.sets_attrs {
            let (min, max, policy, priority) = (ph.util_min, ph.util_max, ph.policy, ph.priority);
            let dl = (policy == Some(SchedPolicy::Deadline)).then(|| dl_entity_of(ph.attrs));
            self.sys_sched_setattr_uclamp(tid, min, max);
            self.sys_sched_setattr(out, tid, policy, priority, dl);
        }
        if self.sys_sched_setaffinity(out, cpu, tid, affinity, now) {
            // the stopper moves it off this CPU; it goes on where it is placed
            self.uthreads[tid].pc.loop_started = true;
        }
    }

    /// rt-app's `rtapp_loop` marker (`event` `start` or `end`) of the thread's iteration.
    #[inline(never)]
    fn loop_marker(&self, out: &mut Out<'_, '_>, tid: usize, now: Nanos, event: &'static str) {
        let pc = self.uthreads[tid].pc;
        self.marker(
            out,
            tid,
            now,
            RtappMarker::Loop {
                event,
                thread_loop: pc.thread_loop,
                phase: pc.phase as u64,
                phase_loop: pc.phase_loop,
            },
        );
    }

    /// The markers of the thread's iteration, which ends at `now`: `rtapp_loop
    /// event=end`, then `rtapp_stats`.
    #[inline(never)]
    fn end_markers(&self, out: &mut Out<'_, '_>, tid: usize, now: Nanos) {
        if self.markers.loop_ {
            self.loop_marker(out, tid, now, "end");
        }
        if !self.markers.stats {
            return;
        }
        let th = &self.uthreads[tid];
        let (c_run, c_period) = program::configured_run_period(&self.w.tasks[th.task], th.pc.phase);
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

    /// What [`Sim::do_event`] asked the thread to do: compute, sleep, exit, block or yield.
    #[inline(never)]
    fn finish_step(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        step: Step,
    ) {
        match step {
            Step::Compute => {
                self.uthreads[tid].op_start = now;
                self.start_op(cpu, now);
            }
            Step::SleepUntil { at, timer } => {
                if timer {
                    self.uthreads[tid].timer_wait = Some(at);
                }
                self.sys_clock_nanosleep(out, cpu, tid, now, at);
            }
            Step::Exit => self.sys_exit(out, cpu, tid, now),
            Step::Block => self.sys_futex_wait(out, cpu, tid, now),
            Step::Yield => {
                self.uthreads[tid].yielded = true;
                self.sys_sched_yield(cpu, tid, now);
            }
        }
    }

    /// The spin guard of [`Sim::step_program`] tripped: the run ends with a diagnostic.
    #[cold]
    #[inline(never)]
    fn spin_failed(&mut self, tid: usize, now: Nanos) {
        let msg = format!(
            "thread {} executed 1000000 events at {} s without time passing (a loop with no run, sleep or blocking event)",
            self.threads[tid].comm,
            crate::time::fmt_ftrace_ts(now)
        );
        self.fail(msg);
    }

    /// rt-app's `rtapp_event` marker of the event of `fe` (not a sentinel), number `id`
    /// of its iteration.
    #[inline(never)]
    fn event_marker(
        &self,
        out: &mut Out<'_, '_>,
        tid: usize,
        now: Nanos,
        id: usize,
        fe: user::flat::FlatEvent<'w>,
    ) {
        let ev = fe.ev.expect("an event, not a sentinel");
        self.marker(
            out,
            tid,
            now,
            RtappMarker::Event {
                id: id as u64,
                type_id: ev.rtapp_type_id(),
                desc: ev.key(),
            },
        );
    }

    /// What runs before the next event of the program: the rest of `thread_body()`'s
    /// start, the first run's `rtapp_task event=start` and delay, the task's parameters
    /// still to set, and what a wake-up left to redo. False when the thread is now
    /// computing, asleep or blocked.
    fn program_prologue(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) -> bool {
        if !self.thread_prologue(out, cpu, tid, now) {
            return false;
        }
        if !self.uthreads[tid].started {
            self.uthreads[tid].started = true;
            if self.markers.task {
                self.marker(out, tid, now, RtappMarker::Task { event: "start" });
            }
            let t_first = self.uthreads[tid].t_first;
            if t_first > now {
                self.sys_clock_nanosleep(out, cpu, tid, now, t_first);
                return false;
            }
        }
        if std::mem::take(&mut self.uthreads[tid].attrs_pending) {
            self.set_thread_param(out, tid);
        }
        if !self.do_retry(out, tid) {
            self.sys_futex_wait(out, cpu, tid, now);
            return false;
        }
        true
    }

    /// An event other than `run`, `runtime`, `sleep` and `timer` (which
    /// [`Sim::step_program`] does on its borrow of the thread): what the thread does next,
    /// or `None` when its program goes on. Out of line: the common path of
    /// [`Sim::step_program`] keeps its values in registers.
    #[inline(never)]
    fn do_event(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        fe: user::flat::FlatEvent<'w>,
        now: Nanos,
    ) -> Option<Step> {
        let (ra, rb) = (fe.ra, fe.rb);
        let ev = fe.ev.expect("an event, not a sentinel");
        debug_assert_eq!(fe.act, user::flat::Act::Other);
        match *ev {
            Event::Run { .. }
            | Event::Runtime { .. }
            | Event::Sleep { .. }
            | Event::Timer { .. } => {
                unreachable!("step_program() does the run, runtime, sleep and timer events")
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
                        self.uthreads[w].retry = Retry::Barrier(ra);
                        self.uthreads[w].maybe_unsettled = true;
                        self.wake_waiter(out, cpu, w, now);
                    }
                    None
                } else {
                    b.waiting -= 1;
                    b.waiters.push(tid, prio);
                    self.uthreads[tid].wait_on = WaitOn::Barrier(ra);
                    Some(Step::Block)
                }
            }
            Event::Suspend { .. } => {
                let prio = self.threads[tid].eff_prio;
                self.res.suspends[ra].waiters.push(tid, prio);
                self.uthreads[tid].wait_on = WaitOn::Suspend(ra);
                Some(Step::Block)
            }
            Event::Resume { .. } => {
                let woken = self.res.suspends[ra].waiters.drain();
                for w in woken {
                    self.wake_waiter(out, cpu, w, now);
                }
                None
            }
            Event::SemPost { .. } => {
                let sem = &mut self.res.sems[ra];
                sem.value += 1;
                if let Some(w) = sem.waiters.pop() {
                    self.uthreads[w].retry = Retry::Sem(ra);
                    self.uthreads[w].maybe_unsettled = true;
                    self.wake_waiter(out, cpu, w, now);
                }
                None
            }
            Event::SemWait { .. } => (!self.sem_wait(tid, ra)).then_some(Step::Block),
            Event::Yield => Some(Step::Yield),
            Event::Fork { .. } => {
                let us = self.s.options.rtapp.create_thread_us;
                if self.s.options.rtapp.main_thread && us > 0 {
                    // create_thread()'s work, then the clone (op_completed())
                    self.uthreads[tid].pending_fork = Some(ra);
                    self.uthreads[tid].op = Op::Run {
                        work: u128::from(program::us(us)) * 1024,
                        us: 0,
                    };
                    return Some(Step::Compute);
                }
                self.rtapp_fork(out, cpu, tid, ra, now);
                None
            }
            Event::Mem { .. } | Event::Iorun { .. } | Event::Memrun { .. } => {
                let ns = program::cpu_work_ns(ev).unwrap_or(0);
                if ns == 0 {
                    return None;
                }
                let work = u128::from(ns) * u128::from(self.cap_ref);
                self.uthreads[tid].op = Op::Run { work, us: 0 };
                Some(Step::Compute)
            }
        }
    }

    /// rt-app's main thread at start: every thread of the workload is created
    /// (`pthread_create()`, the threads share t_zero: their first event is at `now` plus
    /// their delay).
    pub(in crate::sim) fn start_threads(&mut self, out: &mut Out<'_, '_>, now: Nanos) {
        let w = self.w;
        let mut ind = 0u32;
        for (ti, t) in w.tasks.iter().enumerate() {
            for _ in 0..t.instances {
                let tid = self.sys_clone(out, None, ti, thread_comm(&t.name, ind), now);
                self.uthreads[tid].t_first = now + program::us(t.delay_us);
                ind += 1;
            }
        }
    }

    /// A thread got the CPU and returns to user space: on its first run it names itself
    /// (`prctl(PR_SET_NAME)`), a timer sleep's wake-up latency is measured, then it goes
    /// on with its compute or its program.
    pub(in crate::sim) fn return_to_user(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        if !self.threads[tid].renamed {
            self.sys_prctl_set_name(out, cpu, tid, now);
        }
        if let Some(t_next) = self.uthreads[tid].timer_wait.take() {
            self.uthreads[tid].wu_lat_ns += now as i64 - t_next as i64;
        }
        match self.uthreads[tid].op {
            Op::Step if self.is_rtapp_main(tid) => self.rtapp_main_step(out, cpu, tid, now),
            Op::Step => self.step_program(out, cpu, tid, now),
            _ => self.arm_op(cpu, now),
        }
    }

    /// `sched_yield()` returned without a switch (nobody to yield to): the program goes
    /// on.
    pub(in crate::sim) fn return_from_yield(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        if std::mem::take(&mut self.uthreads[tid].yielded) {
            self.step_program(out, cpu, tid, now);
        }
    }

    /// The thread's compute op finished on `cpu`: its run time is counted and the
    /// program goes on (a `fork` event's `create_thread()` work ends in the clone;
    /// rt-app's main thread goes on with `main()`).
    pub(in crate::sim) fn op_completed(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        self.uthreads[tid].op = Op::Step;
        if self.is_rtapp_main(tid) {
            self.rtapp_main_step(out, cpu, tid, now);
            return;
        }
        let t = &mut self.uthreads[tid];
        if let Some(ti) = t.pending_fork.take() {
            self.rtapp_fork(out, cpu, tid, ti, now);
            if self.fatal.is_some() {
                return;
            }
        } else if t.prologue == super::main::Prologue::Done {
            t.run_ns += now - t.op_start;
        }
        self.step_program(out, cpu, tid, now);
    }
    /// rt-app's `fork` event: a new thread of task `ti`, named
    /// `<task>-<index>-<nforks:04>`, started at once from the parent's CPU. With
    /// `rtapp.main_thread` it inherits the parent's scheduling parameters and runs
    /// `thread_body()`'s start without the barrier (user/main.rs); a SCHED_DEADLINE parent
    /// cannot fork (`sched_fork()` returns -EAGAIN and rt-app exits).
    pub(in crate::sim) fn rtapp_fork(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        parent: usize,
        ti: usize,
        now: Nanos,
    ) {
        let n = self.fork_counts_of(parent, ti);
        if n >= program::FORKS_LIMIT {
            let name = self.threads[parent].comm.clone();
            self.fail(format!(
                "thread {name} reached rt-app's fork limit ({}) forking task `{}`",
                program::FORKS_LIMIT,
                self.w.tasks[ti].name
            ));
            return;
        }
        let main_thread = self.s.options.rtapp.main_thread;
        if main_thread && self.threads[parent].policy == SchedPolicy::Deadline {
            let name = self.threads[parent].comm.clone();
            self.fail(format!(
                "thread {name} is SCHED_DEADLINE and forks task `{}`: the kernel refuses (sched_fork() returns EAGAIN) and rt-app exits",
                self.w.tasks[ti].name
            ));
            return;
        }
        let ind = self.user_tids.len();
        let comm = format!("{}-{}-{:04}", self.w.tasks[ti].name, ind, n);
        let tid = self.sys_clone(out, Some((parent, cpu)), ti, comm, now);
        // a forked thread also starts from t_zero (rt-app's thread_body(): t_first =
        // t_zero), plus its delay
        let t_zero = self.t_zero.unwrap_or(self.t0);
        self.uthreads[tid].t_first = t_zero + program::us(self.w.tasks[ti].delay_us);
        if main_thread {
            let u = &mut self.uthreads[tid];
            u.prologue = super::main::Prologue::Start;
            u.ind = ind as u32;
            u.forked = true;
            u.attrs_pending = true;
            u.maybe_unsettled = true;
        }
    }

    pub(in crate::sim) fn fork_counts_of(&mut self, parent: usize, ti: usize) -> u32 {
        let c = self.fork_counts.entry((parent, ti)).or_insert(0);
        let n = *c;
        *c += 1;
        n
    }
}
