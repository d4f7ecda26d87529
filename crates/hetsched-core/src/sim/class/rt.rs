//! The RT class's hooks (kernel/sched/rt.c, v6.11): the priority queue, SCHED_RR's time
//! slice, the RT PELT signal at its hooks, and `select_task_rq_rt()` with
//! `find_lowest_rq()`, cpupri and capacity fitness, and push/pull (`push_rt_tasks()`,
//! `pull_rt_task()` with RT_PUSH_IPI) through [`crate::policy::rt`].

use crate::policy::rt::{self as prt, Cpupri, RtPull, RtPush, RtRqView, RtTask};
use crate::sim::*;

/// `move_entity()` (kernel/sched/rt.c, v6.11): whether an enqueue or dequeue with `flags`
/// takes the task out of its list or puts it in; not for DEQUEUE_SAVE (ENQUEUE_RESTORE)
/// without DEQUEUE_MOVE (ENQUEUE_MOVE), where it keeps its place.
fn move_entity(flags: u32) -> bool {
    flags & (super::DEQUEUE_SAVE | super::DEQUEUE_MOVE) != super::DEQUEUE_SAVE
}

impl<'w> Sim<'w> {
    /// `rd->cpupri` as the rqs' `cpupri_set()` calls left it (`Rq::cpupri`).
    fn rt_cpupri(&self) -> Cpupri {
        let prios: Vec<i32> = self.rqs.iter().map(|rq| rq.cpupri).collect();
        Cpupri::from_highest_prios(&prios)
    }

    /// `rt_rq->highest_prio.curr`: the best queued RT priority, `MAX_RT_PRIO − 1` without one.
    pub(in crate::sim) fn rt_highest_prio(&self, cpu: usize) -> i32 {
        self.rqs[cpu]
            .rt
            .pick()
            .map_or(prt::MAX_RT_PRIO - 1, |t| self.threads[t].eff_prio)
    }

    /// `select_task_rq_rt()` (kernel/sched/rt.c, v6.11), [`crate::policy::rt`]: stay on
    /// the previous CPU unless what runs there would keep the task waiting (an RT or DL
    /// task that is pinned or of equal or higher priority) or the task does not fit its
    /// capacity (`rt_task_fits_capacity()`: on asymmetric systems an RT task's default
    /// `uclamp_min` of 1024 fits only the biggest CPUs); then `find_lowest_rq()` over
    /// `cpupri`, with the fitness pass, from `this_cpu` (the waker's). The cpupri vectors are
    /// rebuilt from the rqs at each call (`Cpupri::from_highest_prios`).
    pub(in crate::sim) fn select_task_rq_rt(
        &mut self,
        tid: usize,
        prev: usize,
        this_cpu: usize,
        wake_flags: u32,
    ) -> usize {
        // placement reads no rq's pushable tasks
        let views = self.rt_views_pushing(None);
        let cpupri = self.rt_cpupri();
        let task = self.rt_task(tid, prev);
        let prev_mask = &mut self.rt_distribute_prev[this_cpu];
        let placed = prt::select_task_rq_rt(
            &views, &cpupri, &self.sdt, &task, wake_flags, this_cpu, prev_mask,
        );
        placed.cpu
    }

    /// `enqueue_task_rt()`: a task goes to the tail of its priority's list, or to its head
    /// with ENQUEUE_HEAD (a task whose priority fell); with ENQUEUE_RESTORE but not
    /// ENQUEUE_MOVE it stays where it was (`move_entity()` false: a priority change that
    /// keeps the priority); `enqueue_top_rt_rq()` → `add_nr_running()`,
    /// `cpufreq_update_util()`.
    pub(in crate::sim) fn enqueue_task_rt(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        flags: u32,
    ) {
        self.threads[tid].enqueue_migrated = false;
        let prio = self.threads[tid].eff_prio;
        let prev_prio = self.rt_highest_prio(cpu);
        if move_entity(flags) {
            let head = flags & super::ENQUEUE_HEAD != 0;
            self.threads[tid].rt_key = self.rqs[cpu].rt.enqueue(tid, prio, head);
        } else {
            let key = self.threads[tid].rt_key;
            debug_assert_eq!(key.0, prio, "a restore without a move keeps the priority");
            self.rqs[cpu].rt.requeue(tid, key);
        }
        self.rq_bw_changed(cpu);
        if prio < prev_prio {
            self.rqs[cpu].cpupri = prio; // inc_rt_prio_smp() → cpupri_set()
        }
        self.threads[tid].state = TState::Runnable;
        self.threads[tid].cpu = cpu;
        self.refresh_view(cpu);
        self.add_nr_running(cpu);
        self.start_rt_bandwidth(now); // inc_rt_group()
        self.enqueue_top_rt_rq_hook(out, cpu, now);
    }

    /// The `cpufreq_update_util(rq, 0)` at the end of `enqueue_top_rt_rq()`
    /// (kernel/sched/rt.c, v6.11), which ends every RT enqueue and dequeue
    /// (`enqueue_rt_entity()`, `dequeue_rt_entity()`): not while the RT class is throttled
    /// (`rt_rq_throttled()` returns first).
    fn enqueue_top_rt_rq_hook(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        if !self.rqs[cpu].rt_throttled {
            self.cpufreq_update_util(out, cpu, 0, now);
        }
    }

    /// `dequeue_task_rt()`; `dequeue_rt_entity()` → `enqueue_top_rt_rq()` →
    /// `cpufreq_update_util()`.
    pub(in crate::sim) fn dequeue_task_rt(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        self.update_curr_rt(cpu, now);
        let key = self.threads[tid].rt_key;
        let prev_prio = self.rt_highest_prio(cpu);
        self.rqs[cpu].rt.dequeue(tid, key);
        self.rq_bw_changed(cpu);
        let highest = self.rt_highest_prio(cpu);
        if highest != prev_prio {
            self.rqs[cpu].cpupri = highest; // dec_rt_prio_smp() → cpupri_set()
        }
        self.refresh_view(cpu);
        self.enqueue_top_rt_rq_hook(out, cpu, now);
        if self.rqs[cpu].rt.nr_running() == 0 {
            // the sched governor (seed 004): pick_next_task_rt() of an empty RT rq
            self.sched_rt_update_capacity_req(out, cpu, now);
        }
    }

    /// `wakeup_preempt_rt()` (kernel/sched/rt.c, v6.11; v4.4 alike): a higher RT priority
    /// preempts; an equal one not yet asked to reschedule goes through
    /// [`Self::check_preempt_equal_prio`].
    pub(in crate::sim) fn wakeup_preempt_rt(&mut self, cpu: usize, curr: usize, tid: usize) {
        let (p, c) = (self.threads[tid].eff_prio, self.threads[curr].eff_prio);
        if p < c {
            self.set_resched(cpu);
            return;
        }
        if p == c && !self.rqs[cpu].need_resched {
            self.check_preempt_equal_prio(cpu, curr, tid);
        }
    }

    /// `check_preempt_equal_prio()` (kernel/sched/rt.c, v6.11): when `curr` may run
    /// elsewhere (more than one allowed CPU and `cpupri_find()` finds a lower level among
    /// them) but the woken `p` of its priority cannot (one allowed CPU, or no CPU for it in
    /// cpupri), `p` goes to the head of its list (`requeue_task_rt(rq, p, 1)`) and the CPU
    /// reschedules: `p` runs, and `set_next_task_rt()`'s push moves `curr` away.
    fn check_preempt_equal_prio(&mut self, cpu: usize, curr: usize, tid: usize) {
        let cpupri = self.rt_cpupri();
        let c = &self.threads[curr];
        if c.affinity.weight() == 1 || cpupri.find(c.eff_prio, &c.affinity).is_none() {
            return;
        }
        let p = &self.threads[tid];
        if p.affinity.weight() != 1 && cpupri.find(p.eff_prio, &p.affinity).is_some() {
            return;
        }
        let (prio, key) = (p.eff_prio, p.rt_key);
        let rt = &mut self.rqs[cpu].rt;
        rt.dequeue(tid, key);
        self.threads[tid].rt_key = rt.enqueue(tid, prio, true);
        self.set_resched(cpu);
    }

    /// `put_prev_task_rt()`: the RT signal, running until now.
    pub(in crate::sim) fn put_prev_task_rt(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        now: Nanos,
    ) {
        self.update_curr_rt(cpu, now);
        self.update_rt_pelt(out, cpu, true, now);
    }

    /// `set_next_task_rt()`: the start of the run's accounting (`exec_start`); for a pick
    /// (`first`), the RT signal, running only if `prev` was RT (`rq->curr` was not RT
    /// until now otherwise).
    pub(in crate::sim) fn set_next_task_rt(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        prev: Option<usize>,
        first: bool,
        now: Nanos,
    ) {
        if first {
            let running = prev.is_some_and(|p| self.threads[p].class == Class::Rt);
            self.update_rt_pelt(out, cpu, running, now);
        }
        self.rqs[cpu].rt_exec_start = now;
    }

    /// `switched_to_rt()` (kernel/sched/rt.c, v6.11): the running task starts the RT
    /// signal (its past counted as not RT); a queued one asks for a push when the rq is
    /// overloaded (`rt_queue_push_tasks()`, a balance callback) and preempts a
    /// lower-priority curr.
    pub(in crate::sim) fn switched_to_rt(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        if self.rqs[cpu].curr == Some(tid) {
            self.update_rt_pelt(out, cpu, false, now);
            return;
        }
        if self.threads[tid].state == TState::Runnable {
            if self.threads[tid].affinity.weight() > 1 && self.rt_overloaded(cpu) {
                self.queue_balance_callback(BalanceCallback::PushRt(cpu));
            }
            if self.threads[tid].eff_prio < self.curr_prio(cpu) {
                self.set_resched(cpu);
            }
        }
    }

    /// `prio_changed_rt()` (v6.11): a running task whose priority fell asks for a pull
    /// (`rt_queue_pull_task()`) and reschedules when a higher priority waits on its rq; a
    /// queued one preempts a lower-priority curr.
    pub(in crate::sim) fn prio_changed_rt(&mut self, cpu: usize, tid: usize, oldprio: i32) {
        if self.threads[tid].state != TState::Runnable {
            return;
        }
        let prio = self.threads[tid].eff_prio;
        if self.rqs[cpu].curr == Some(tid) {
            if oldprio < prio {
                self.queue_balance_callback(BalanceCallback::PullRt(cpu));
            }
            if prio > self.rqs[cpu].rt.highest_prio() {
                self.set_resched(cpu);
            }
        } else if prio < self.curr_prio(cpu) {
            self.set_resched(cpu);
        }
    }

    /// `switched_from_rt()` (v6.11): a queued task that was the rq's last RT task asks for
    /// a pull (`rt_queue_pull_task()`).
    pub(in crate::sim) fn switched_from_rt(&mut self, cpu: usize, tid: usize) {
        if self.threads[tid].state != TState::Runnable || self.rqs[cpu].rt.nr_running() > 0 {
            return;
        }
        self.queue_balance_callback(BalanceCallback::PullRt(cpu));
    }

    /// `rq->curr->prio` of `cpu` (`MAX_PRIO`, 140, for the idle task).
    fn curr_prio(&self, cpu: usize) -> i32 {
        self.rqs[cpu]
            .curr
            .map_or(rtq::MAX_PRIO, |c| self.threads[c].eff_prio)
    }

    /// `rq->rt.overloaded` (v6.11): the rq has a pushable task, a queued RT task that does
    /// not run and may run elsewhere (`enqueue_pushable_task()`).
    fn rt_overloaded(&self, cpu: usize) -> bool {
        let rq = &self.rqs[cpu];
        rq.rt
            .iter()
            .any(|t| rq.curr != Some(t) && self.threads[t].affinity.weight() > 1)
    }

    /// `task_tick_rt()` (kernel/sched/rt.c, v6.11): the RT signal (v6.11 updates it here,
    /// not at every tick); SCHED_RR uses up its time slice one jiffy at a time
    /// (`--p->rt.time_slice`, from [`rtq::rr_timeslice`]) and, refilled, goes to the tail of
    /// its list and reschedules only when another task shares its priority
    /// (`rt_se->run_list.prev != rt_se->run_list.next`; queued RT tasks of other
    /// priorities do not count).
    pub(in crate::sim) fn task_tick_rt(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        curr: usize,
        now: Nanos,
    ) {
        self.update_curr_rt(cpu, now);
        self.update_rt_pelt(out, cpu, true, now);
        // the sched governor (seed 004): the RT request at the tick
        self.sched_rt_update_capacity_req(out, cpu, now);
        if self.threads[curr].policy == SchedPolicy::Rr {
            let slice = rtq::rr_timeslice(self.s.options.sched.hz);
            let t = &mut self.threads[curr];
            t.rr_slice = t.rr_slice.saturating_sub(1);
            if t.rr_slice == 0 {
                t.rr_slice = slice;
                let (prio, key) = (t.eff_prio, t.rt_key);
                let rt = &mut self.rqs[cpu].rt;
                if rt.has_peer(curr, prio) {
                    rt.dequeue(curr, key);
                    self.threads[curr].rt_key = rt.enqueue(curr, prio, false);
                    self.set_resched(cpu);
                }
            }
        }
    }

    /// `yield_task_rt()`: to the tail of its priority's list.
    pub(in crate::sim) fn yield_task_rt(&mut self, cpu: usize, tid: usize) {
        let (prio, key) = (self.threads[tid].eff_prio, self.threads[tid].rt_key);
        let rt = &mut self.rqs[cpu].rt;
        rt.dequeue(tid, key);
        self.threads[tid].rt_key = rt.enqueue(tid, prio, false);
    }

    /// `tid` as RT placement sees it, on `cpu`.
    fn rt_task(&self, tid: usize, cpu: usize) -> RtTask {
        let t = &self.threads[tid];
        RtTask {
            id: tid,
            prio: t.eff_prio,
            cpu,
            allowed: t.affinity,
            uclamp_min: t.uclamp[0],
            uclamp_max: t.uclamp[1],
        }
    }

    /// Each rq's `rt.pushable_tasks`: its queued RT tasks that are not running and may run
    /// elsewhere, in plist order (priority, then FIFO).
    fn rt_pushables(&self) -> Vec<Vec<RtTask>> {
        (0..self.p.nr_cpus())
            .map(|cpu| self.rt_pushable(cpu))
            .collect()
    }

    /// `cpu`'s `rt.pushable_tasks` ([`Self::rt_pushables`] of one rq).
    fn rt_pushable(&self, cpu: usize) -> Vec<RtTask> {
        let rq = &self.rqs[cpu];
        rq.rt
            .iter()
            .filter(|&t| rq.curr != Some(t) && self.threads[t].affinity.weight() > 1)
            .map(|t| self.rt_task(t, cpu))
            .collect()
    }

    /// Each rq's RT state as [`crate::policy::rt`] reads it.
    fn rt_views<'a>(&self, pushables: &'a [Vec<RtTask>]) -> Vec<RtRqView<'a>> {
        (0..self.p.nr_cpus())
            .map(|cpu| self.rt_view(cpu, &pushables[cpu]))
            .collect()
    }

    /// Each rq's RT state with the pushable tasks of `pushing` only (`(cpu, its
    /// pushable tasks)`; none without): what `push_rt_task()` and the placement read,
    /// which look at no other rq's pushable tasks.
    fn rt_views_pushing<'a>(&self, pushing: Option<(usize, &'a [RtTask])>) -> Vec<RtRqView<'a>> {
        (0..self.p.nr_cpus())
            .map(|cpu| match pushing {
                Some((c, pushable)) if c == cpu => self.rt_view(cpu, pushable),
                _ => self.rt_view(cpu, &[]),
            })
            .collect()
    }

    /// `cpu`'s RT state as [`crate::policy::rt`] reads it, with `pushable` as its
    /// pushable tasks.
    fn rt_view<'a>(&self, cpu: usize, pushable: &'a [RtTask]) -> RtRqView<'a> {
        let rq = &self.rqs[cpu];
        let curr = rq.curr.map(|c| &self.threads[c]);
        RtRqView {
            highest_prio_curr: self.rt_highest_prio(cpu),
            curr_prio: curr.map_or(prt::MAX_PRIO, |c| c.eff_prio),
            curr_rt_or_dl: curr.is_some_and(|c| c.eff_prio < prt::MAX_RT_PRIO),
            curr_nr_cpus_allowed: curr.map_or(0, |c| c.affinity.weight() as u32),
            capacity_orig: rq.cap,
            pushable,
        }
    }

    /// `push_rt_tasks(rq)` on `cpu` (kernel/sched/rt.c, v6.11): push its highest pushable
    /// task to a CPU running lower-priority work, again while it finds one; `sched_migrate_task`
    /// comes from `cpu`.
    pub(in crate::sim) fn push_rt_tasks(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        // each push moves a task to a CPU running strictly lower-priority work: bounded
        for _ in 0..self.threads.len() + 1 {
            let pushable = self.rt_pushable(cpu);
            let views = self.rt_views_pushing(Some((cpu, &pushable)));
            let cpupri = self.rt_cpupri();
            let mut prev = self.rt_distribute_prev[cpu];
            let d = prt::push_rt_task(&views, &cpupri, &self.sdt, cpu, &mut prev);
            self.rt_distribute_prev[cpu] = prev;
            match d {
                RtPush::Push { task, from, to } => {
                    let m = Migration {
                        task,
                        src: from,
                        dst: to,
                        reason: MigrationReason::RtPush,
                    };
                    self.move_queued_on(out, m, cpu, now);
                }
                RtPush::Resched => {
                    self.set_resched(cpu);
                    return;
                }
                RtPush::Nothing | RtPush::NoTarget => return,
            }
        }
    }

    /// `task_woken_rt(rq, p)`: a woken RT task that neither runs nor preempts here, but
    /// may run elsewhere, is pushed (`push_rt_tasks()`).
    pub(in crate::sim) fn task_woken_rt(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        let pushable = self.rt_pushable(cpu);
        let p = &self.threads[tid];
        let push = prt::task_woken_rt_should_push(
            &self.rt_view(cpu, &pushable),
            p.eff_prio,
            p.affinity.weight() as u32,
            self.rqs[cpu].curr == Some(tid),
            self.rqs[cpu].need_resched,
        );
        if push {
            self.push_rt_tasks(out, cpu, now);
        }
    }

    /// `balance_rt(rq, prev)` (kernel/sched/rt.c, v6.11) before the pick
    /// (`put_prev_task_balance()`, which reaches it for an RT, deadline or stopper `prev`
    /// when no stopper or deadline task is queued): a `prev` not on the RT rq
    /// (`on_rt_rq()`), whose priority the rq no longer reaches (`need_pull_rt_task()`:
    /// always for a deadline `prev`, prio −1; for the stopper, prio 0, unless a FIFO 99
    /// task is queued), makes the CPU pull (`pull_rt_task()`): with RT_PUSH_IPI
    /// (`rt.push_ipi`, the default) the overloaded CPUs are asked to push (their irq_work,
    /// after this operation); without it, the higher RT tasks queued elsewhere are pulled
    /// here now.
    pub(in crate::sim) fn balance_rt(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        prev: usize,
        now: Nanos,
    ) {
        if self.rqs[cpu].rt.iter().any(|t| t == prev) {
            return;
        }
        if !prt::need_pull_rt_task(self.rt_highest_prio(cpu), self.threads[prev].eff_prio) {
            return;
        }
        self.pull_rt_task(out, cpu, now);
    }

    /// `pull_rt_task(this_rq)` (kernel/sched/rt.c, v6.11): with RT_PUSH_IPI (`rt.push_ipi`,
    /// the default) the overloaded CPUs are asked to push (their irq_work, after this
    /// operation); without it, the higher RT tasks queued elsewhere are pulled here now.
    pub(in crate::sim) fn pull_rt_task(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        // `rd->rto_mask` (no allocation when it is empty). It decides alone when no CPU is
        // RT-overloaded (`if (likely(!rt_overload_count)) return;`) and with RT_PUSH_IPI
        // (`tell_cpu_to_push()`): the rqs' views are built only for the pull proper (they
        // would mark the same CPUs overloaded: `RtRqView::overloaded()` is a pushable
        // task, as `rt_overloaded()`)
        let push_ipi = self.s.options.rt.push_ipi;
        let rto: Vec<usize> = (0..self.p.nr_cpus())
            .filter(|&c| self.rt_overloaded(c))
            .collect();
        if rto.is_empty() {
            return;
        }
        let decided = prt::pull_rt_task_rto(&rto, cpu, push_ipi).unwrap_or_else(|| {
            let pushables = self.rt_pushables();
            let views = self.rt_views(&pushables);
            debug_assert_eq!(
                rto,
                (0..views.len())
                    .filter(|&c| views[c].overloaded())
                    .collect::<Vec<_>>()
            );
            prt::pull_rt_task(&views, cpu, push_ipi)
        });
        match decided {
            RtPull::Nothing => {}
            RtPull::PushIpi(cpus) => {
                for c in cpus {
                    self.q.push(now, Ev::RtPushIpi { cpu: c as u32 });
                }
            }
            RtPull::Pull(moves) => {
                for mv in moves {
                    let m = Migration {
                        task: mv.task,
                        src: mv.from,
                        dst: mv.to,
                        reason: MigrationReason::RtPull,
                    };
                    self.move_queued_on(out, m, cpu, now);
                }
            }
        }
    }

    /// The balance callback queued by `set_next_task_rt()` (`rt_queue_push_tasks()`): after
    /// the switch, an rq with pushable tasks pushes them.
    pub(in crate::sim) fn rt_balance_callback(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        now: Nanos,
    ) {
        if self.rt_overloaded(cpu) {
            self.push_rt_tasks(out, cpu, now);
        }
    }

    /// `(runtime, period)` of the RT bandwidth in ns, `None` without a limit
    /// (`sched_rt_runtime_us = -1`).
    pub(in crate::sim) fn rt_bandwidth(&self) -> Option<(u64, u64)> {
        let o = &self.s.options.sched;
        let runtime = u64::try_from(o.rt_runtime_us).ok()?;
        Some((runtime * 1000, o.rt_period_us * 1000))
    }

    /// `update_curr_rt()` (kernel/sched/rt.c, v6.11): the running RT task's time since its
    /// last update counts in `rt_time`; past the runtime the RT class of the CPU is
    /// throttled (`sched_rt_runtime_exceeded()`: `sched_rt_rq_dequeue()`, resched).
    pub(in crate::sim) fn update_curr_rt(&mut self, cpu: usize, now: Nanos) {
        let Some(curr) = self.rqs[cpu].curr else {
            return;
        };
        if self.threads[curr].class != Class::Rt {
            return;
        }
        let delta = now.saturating_sub(self.rqs[cpu].rt_exec_start);
        self.rqs[cpu].rt_exec_start = now;
        if self.cpufreq.schedfreq.is_some() {
            self.schedfreq_rt_accrue(cpu, delta); // sched_rt_avg_update()
        }
        if self.rt_bandwidth().is_none() || delta == 0 {
            return;
        }
        if self.rqs[cpu].rt_runtime == RUNTIME_INF {
            return;
        }
        self.rqs[cpu].rt_time += delta;
        if self.sched_rt_runtime_exceeded(cpu) {
            self.set_resched(cpu);
            self.start_rt_bandwidth(now);
        }
    }

    /// `sched_rt_runtime_exceeded()` (kernel/sched/rt.c, v6.11): past its runtime — after
    /// borrowing what it can under RT_RUNTIME_SHARE — the CPU's RT class is throttled. A
    /// bandwidth of no runtime (`sched_rt_runtime_us = 0`) never throttles: its time is
    /// dropped ("groups that have no runtime assigned").
    fn sched_rt_runtime_exceeded(&mut self, cpu: usize) -> bool {
        let Some((bw_runtime, period)) = self.rt_bandwidth() else {
            return false;
        };
        if self.rqs[cpu].rt_throttled {
            return true; // rt_rq_throttled(): no RT group scheduling, no boosted groups
        }
        if self.rqs[cpu].rt_runtime >= period {
            return false;
        }
        self.balance_runtime(cpu);
        let rq = &mut self.rqs[cpu];
        if rq.rt_runtime == RUNTIME_INF || rq.rt_time <= rq.rt_runtime {
            return false;
        }
        if bw_runtime != 0 {
            // sched_rt_rq_dequeue() → dequeue_top_rt_rq(): rt_rq_is_runnable() is false
            // now (no cpufreq_update_util() here without RT group scheduling)
            rq.rt_throttled = true;
            self.rq_bw_changed(cpu);
            true
        } else {
            rq.rt_time = 0;
            false
        }
    }

    /// `balance_runtime()` → `do_balance_runtime()` (kernel/sched/rt.c, v6.11), under the
    /// RT_RUNTIME_SHARE feature (`sched.rt_runtime_share`): a CPU past its runtime takes
    /// from every other CPU of its root domain (here: every CPU; hetsched has no exclusive
    /// cpusets) a 1/weight part of that CPU's spare runtime, up to the whole period, in CPU
    /// order. What it borrows is not given back (only CPU hot-unplug's
    /// `__disable_runtime()` reclaims it; the period timer keeps each CPU's `rt_runtime`).
    fn balance_runtime(&mut self, cpu: usize) {
        if !self.s.options.sched.rt_runtime_share {
            return;
        }
        if self.rqs[cpu].rt_time <= self.rqs[cpu].rt_runtime {
            return;
        }
        let Some((_, period)) = self.rt_bandwidth() else {
            return;
        };
        let weight = self.p.nr_cpus() as u64;
        for i in 0..self.p.nr_cpus() {
            if i == cpu || self.rqs[i].rt_runtime == RUNTIME_INF {
                continue;
            }
            let (iter_runtime, iter_time) = (self.rqs[i].rt_runtime, self.rqs[i].rt_time);
            if iter_runtime <= iter_time {
                continue;
            }
            let mut diff = (iter_runtime - iter_time) / weight;
            let own = self.rqs[cpu].rt_runtime;
            if own + diff > period {
                diff = period - own;
            }
            self.rqs[i].rt_runtime -= diff;
            self.rqs[cpu].rt_runtime += diff;
            if self.rqs[cpu].rt_runtime == period {
                break;
            }
        }
    }

    /// `start_rt_bandwidth()` → `do_start_rt_bandwidth()` (kernel/sched/rt.c, v6.11): the
    /// period timer, if not armed, is started at `hrtimer_forward_now(timer, 0)`'s expiry
    /// (kernel/time/hrtimer.c `hrtimer_forward()`): an expiry still ahead (the timer went
    /// idle less than a period ago; its last firing had moved it one period on) is kept,
    /// so the timer fires there, in its old phase; an expiry passed becomes now (now + 1 ns
    /// in the kernel, the interval raised to `hrtimer_resolution`): it fires at once and
    /// then every period from now.
    pub(in crate::sim) fn start_rt_bandwidth(&mut self, now: Nanos) {
        let Some((_, period)) = self.rt_bandwidth() else {
            return;
        };
        if self.rt_period_active || period == 0 {
            return;
        }
        self.rt_period_active = true;
        if now < self.rt_period_expires {
            self.q.push(self.rt_period_expires, Ev::RtPeriod);
            return;
        }
        // an idle timer leaves no CPU throttled: nothing to unthrottle, no hook to call;
        // the CPU whose RT enqueue starts it is rescheduled (`sched_rt_rq_enqueue()`), as
        // by the kernel's timer firing right after the enqueue
        self.do_sched_rt_period_timer(None, now);
        self.rt_period_expires = now + period;
        self.q.push(self.rt_period_expires, Ev::RtPeriod);
    }

    /// `sched_rt_period_timer()` (kernel/sched/rt.c, v6.11): `hrtimer_forward_now()` moves
    /// the expiry one period on, then one period's replenishment; the timer stops
    /// (HRTIMER_NORESTART, that expiry kept) when every CPU is idle of RT work.
    pub(in crate::sim) fn sched_rt_period_timer(&mut self, out: &mut Out<'_, '_>, now: Nanos) {
        let idle = self.do_sched_rt_period_timer(Some(out), now);
        match self.rt_bandwidth() {
            Some((_, period)) => {
                self.rt_period_expires = now + period;
                if idle {
                    self.rt_period_active = false;
                } else {
                    self.q.push(self.rt_period_expires, Ev::RtPeriod);
                }
            }
            None => self.rt_period_active = false,
        }
    }

    /// `do_sched_rt_period_timer(rt_b, 1)` (kernel/sched/rt.c, v6.11; v3.10, v5.10, v6.6 alike):
    /// without RT_RUNTIME_SHARE each CPU's `rt_runtime` is reset to the bandwidth's; each
    /// CPU's `rt_time` loses one runtime (a throttled CPU first borrows under
    /// RT_RUNTIME_SHARE), and a throttled RT class back under its runtime is unthrottled;
    /// a CPU with no `rt_time` but queued RT tasks (none of their run time accounted since
    /// the last period: `sched_rt_runtime_us = 0`, a period shorter than the tick) is
    /// "enqueued" too. Either goes through [`Self::sched_rt_rq_enqueue`]. Returns `idle`.
    fn do_sched_rt_period_timer(&mut self, mut out: Option<&mut Out<'_, '_>>, now: Nanos) -> bool {
        let Some((bw_runtime, _)) = self.rt_bandwidth() else {
            return true;
        };
        let share = self.s.options.sched.rt_runtime_share;
        let mut idle = true;
        for cpu in 0..self.p.nr_cpus() {
            let nr = self.rqs[cpu].rt.nr_running();
            let rq = &mut self.rqs[cpu];
            if !share && rq.rt_runtime != RUNTIME_INF {
                rq.rt_runtime = bw_runtime;
            }
            if rq.rt_time == 0 && nr == 0 {
                continue;
            }
            let mut enqueue = false;
            let mut unthrottled = false;
            if self.rqs[cpu].rt_time > 0 {
                if self.rqs[cpu].rt_throttled {
                    self.balance_runtime(cpu);
                }
                let rq = &mut self.rqs[cpu];
                let runtime = rq.rt_runtime;
                rq.rt_time -= rq.rt_time.min(runtime);
                if rq.rt_throttled && rq.rt_time < runtime {
                    rq.rt_throttled = false;
                    unthrottled = true;
                    enqueue = true;
                }
                if rq.rt_time > 0 || nr > 0 {
                    idle = false;
                }
            } else if nr > 0 {
                idle = false;
                enqueue = !self.rqs[cpu].rt_throttled;
            }
            if unthrottled {
                self.rq_bw_changed(cpu);
            }
            if enqueue {
                self.sched_rt_rq_enqueue(out.as_deref_mut(), cpu, unthrottled, now);
            }
        }
        idle
    }

    /// `sched_rt_rq_enqueue()` without RT group scheduling (kernel/sched/rt.c, v6.11; the
    /// same in v5.10 and v6.6; v3.10's, before `enqueue_top_rt_rq()`, only reschedules): nothing for an empty RT rq, else
    /// `enqueue_top_rt_rq()` — which returns at once unless the class was throttled
    /// (`rt_queued` is clear only then), and otherwise ends with `cpufreq_update_util()` —
    /// and `resched_curr()` whatever runs: the CPU schedules even when its current task
    /// stays (an RT task re-picked, whose run time `put_prev_task_rt()` accounts now). The
    /// RT group scheduling form reschedules only for a priority above `curr`'s.
    fn sched_rt_rq_enqueue(
        &mut self,
        out: Option<&mut Out<'_, '_>>,
        cpu: usize,
        unthrottled: bool,
        now: Nanos,
    ) {
        if self.rqs[cpu].rt.nr_running() == 0 {
            return;
        }
        if unthrottled {
            debug_assert!(out.is_some(), "unthrottled by the timer's first run");
            if let Some(out) = out {
                self.cpufreq_update_util(out, cpu, 0, now);
            }
        }
        self.set_resched(cpu);
    }
}
