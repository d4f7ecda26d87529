//! The deadline class's hooks (kernel/sched/deadline.c, v6.11): the EDF queue, the CBS
//! bandwidth enforcement (`update_curr_dl()`, `dl_task_timer()`), the DL PELT signal at
//! its hooks, a task entering or leaving the class (`switched_to_dl()`,
//! `switched_from_dl()`, `prio_changed_dl()`), and placement through
//! [`crate::policy::dl`]: `select_task_rq_dl()` with `cpudl` and capacity fitness, push
//! (`push_dl_tasks()` after a pick and at a wake-up, `task_woken_dl()`) and pull
//! (`pull_dl_task()` from `balance_dl()` and the class changes).

use crate::policy::dl::{self as pdl, DlPush, DlRqView, DlTask};
use crate::sched::cap_scale;
use crate::sched::rt::to_ratio;
use crate::sim::*;

impl<'w> Sim<'w> {
    /// `update_curr_dl()` → `update_curr_dl_se()` (kernel/sched/deadline.c, v6.11): charges
    /// the running deadline task's budget with its run time since the last update, scaled
    /// ([`Self::dl_scaled_delta_exec`]); throttles it when spent (`dl_runtime_exceeded()` →
    /// `start_dl_timer()`), then counts the run time in the CPU's RT bandwidth
    /// ([`Self::dl_account_rt_time`]). A special entity (the `sugov:N` threads) is charged
    /// nothing, in either.
    pub(in crate::sim) fn update_curr_dl(&mut self, cpu: usize, tid: usize, now: Nanos) {
        let dt = now.saturating_sub(self.rqs[cpu].seg_start_dl);
        self.rqs[cpu].seg_start_dl = now;
        if self.threads[tid].kthread.is_some() {
            return; // update_curr_dl_se(): dl_entity_is_special() (SCHED_FLAG_SUGOV)
        }
        let scaled = self.dl_scaled_delta_exec(cpu, dt);
        let t = &mut self.threads[tid];
        t.dl.runtime -= scaled as i64;
        if t.dl.runtime <= 0 && !t.dl.throttled && t.state == TState::Runnable {
            t.dl.throttled = true;
            t.dl_gen = t.dl_gen.wrapping_add(1);
            let (gen, at) = (t.dl_gen, t.dl.next_period().max(now));
            let key = t.dl_key;
            self.rqs[cpu].dl.dequeue(tid, key);
            self.dec_dl_deadline(cpu);
            self.refresh_view(cpu);
            self.q.push(
                at,
                Ev::DlReplenish {
                    tid: tid as u32,
                    gen,
                },
            );
            self.set_resched(cpu);
        }
        self.dl_account_rt_time(cpu, dt);
    }

    /// The end of `update_curr_dl_se()` (kernel/sched/deadline.c, v6.11; the same in
    /// v4.4's, v4.20's and v5.10's `update_curr_dl()`, so in every profile with
    /// SCHED_DEADLINE):
    /// "Because -- for now -- we share the rt bandwidth", a deadline task's run time, in
    /// wall-clock time (`delta_exec`, not scaled), is added to its CPU's `rt_rq->rt_time`
    /// when RT bandwidth is enabled (`rt_bandwidth_enabled()`: `sched_rt_runtime_us` ≥ 0)
    /// and `sched_rt_bandwidth_account()` (kernel/sched/rt.c, v6.11 and v5.10 alike) holds:
    /// the period timer is armed (`hrtimer_active()`) or `rt_time` is below the
    /// bandwidth's runtime. Deadline time thus counts against `sched_rt_runtime_us`; the
    /// RT class sees the overrun at its next `update_curr_rt()` (nothing throttles here),
    /// and the period timer, when an RT task starts it, pays off what deadline tasks
    /// accrued while it was idle (`do_start_rt_bandwidth()`: "Kick the timer right away").
    fn dl_account_rt_time(&mut self, cpu: usize, delta_exec: Nanos) {
        let Some((runtime, _)) = self.rt_bandwidth() else {
            return;
        };
        if delta_exec == 0 {
            return; // update_curr_dl_se(): `if (unlikely(delta_exec <= 0)) return;`
        }
        let armed = self.rt_period_active;
        let rq = &mut self.rqs[cpu];
        if armed || rq.rt_time < runtime {
            rq.rt_time += delta_exec;
        }
    }

    /// `update_curr_dl_se()`'s `scaled_delta_exec` (kernel/sched/deadline.c, v6.11; v4.16's
    /// `update_curr_dl()`, "sched/deadline: Make bandwidth enforcement scale-invariant"),
    /// for a task without SCHED_FLAG_RECLAIM (GRUB reclaiming is not
    /// modelled): `cap_scale(cap_scale(delta_exec, arch_scale_freq_capacity(cpu)),
    /// arch_scale_cpu_capacity(cpu))`, each step rounded down — the CPU's `freq_scale`
    /// (1024 without frequency invariance) and its original capacity. Wall-clock time
    /// without `sched.dl_scale_invariant` (v4.4).
    fn dl_scaled_delta_exec(&self, cpu: usize, delta_exec: Nanos) -> Nanos {
        if !self.s.options.sched.dl_scale_invariant {
            return delta_exec;
        }
        let rq = &self.rqs[cpu];
        cap_scale(cap_scale(delta_exec, rq.freq_scale), rq.cap)
    }

    /// `inc_dl_deadline()` before a deadline task enters `cpu`'s tree: the first makes the
    /// CPU CPUPRI_HIGHER in `rd->cpupri` (RT placement then avoids it).
    fn inc_dl_deadline(&mut self, cpu: usize) {
        if self.rqs[cpu].dl.nr_running() == 0 {
            self.rqs[cpu].cpupri = crate::policy::rt::MAX_RT_PRIO;
        }
    }

    /// `dec_dl_deadline()` after a deadline task left `cpu`'s tree: with none left, the CPU
    /// takes its RT class's priority again in `rd->cpupri`.
    fn dec_dl_deadline(&mut self, cpu: usize) {
        if self.rqs[cpu].dl.nr_running() == 0 {
            self.rqs[cpu].cpupri = self.rt_highest_prio(cpu);
        }
    }

    /// `dl_task_timer()`: replenish a throttled deadline task and queue it again.
    pub(in crate::sim) fn dl_replenish(&mut self, out: &mut Out<'_, '_>, tid: usize, now: Nanos) {
        let _ = out;
        let t = &mut self.threads[tid];
        if !t.dl.throttled {
            return;
        }
        t.dl.replenish(now);
        if t.state != TState::Runnable || t.class != Class::Dl {
            return;
        }
        let cpu = t.cpu;
        let d = t.dl.deadline;
        self.inc_dl_deadline(cpu);
        self.threads[tid].dl_key = self.rqs[cpu].dl.enqueue(tid, d);
        self.refresh_view(cpu);
        if self.rqs[cpu].curr != Some(tid) {
            self.wakeup_preempt(cpu, tid);
        }
    }

    /// `enqueue_task_dl()` → `enqueue_dl_entity()` (kernel/sched/deadline.c, v6.11): a task
    /// restored (ENQUEUE_RESTORE: entering the class) or moved here queued
    /// (ENQUEUE_MIGRATING) brings its bandwidth to the rq (`add_rq_bw()`,
    /// `add_running_bw()`), as does a new task here (ENQUEUE_INITIAL: threads created
    /// SCHED_DEADLINE, which the kernel's `sched_fork()` refuses); a wake-up is
    /// `task_contending()`, throttled or not. Then ENQUEUE_WAKEUP → `update_dl_entity()`; a
    /// new task, or one restored with its deadline in the past, starts a period
    /// (`setup_new_dl_entity()`). `cpufreq_update_util()` runs only from
    /// `add_running_bw()`.
    pub(in crate::sim) fn enqueue_task_dl(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        flags: u32,
    ) {
        let migrated = std::mem::take(&mut self.threads[tid].enqueue_migrated);
        let initial = flags & super::ENQUEUE_INITIAL != 0;
        let restore = flags & super::ENQUEUE_RESTORE != 0;
        let migrating = flags & super::ENQUEUE_MIGRATING != 0;
        let wakeup = !initial && self.threads[tid].state != TState::Runnable;
        if initial || restore || migrating {
            self.add_rq_bw(cpu, tid);
            self.add_running_bw(out, cpu, tid, now);
        }
        if wakeup {
            // ENQUEUE_MIGRATED: the wake-up's set_task_cpu() moved it
            self.task_contending(out, cpu, tid, now, migrated);
        }
        let t = &mut self.threads[tid];
        if initial || t.dl.deadline == 0 || (restore && t.dl.deadline < now) {
            t.dl.new_period(now);
        } else if wakeup {
            t.dl.update_at_wakeup(now);
        }
        let d = t.dl.deadline;
        // enqueue_dl_entity(): a task still throttled waits for its replenishment timer
        // (`dl_task_timer()`, Ev::DlReplenish) out of the tree (`if (dl_se->dl_throttled &&
        // start_dl_timer(dl_se)) return;`)
        if !t.dl.throttled || initial {
            self.inc_dl_deadline(cpu);
            self.threads[tid].dl_key = self.rqs[cpu].dl.enqueue(tid, d);
        }
        let t = &mut self.threads[tid];
        t.state = TState::Runnable;
        t.cpu = cpu;
        self.refresh_view(cpu);
        self.add_nr_running(cpu);
    }

    /// `__add_running_bw()` via `add_running_bw()` (kernel/sched/deadline.c, v6.11): `tid`'s
    /// `dl_bw` joins `cpu`'s `running_bw` (not for a special entity: the sugov threads),
    /// then `cpufreq_update_util(rq, 0)` ("kick cpufreq"), whose `cpu_bw_dl()` reads it.
    fn add_running_bw(&mut self, out: &mut Out<'_, '_>, cpu: usize, tid: usize, now: Nanos) {
        if self.threads[tid].kthread.is_some() {
            return; // dl_entity_is_special()
        }
        let bw = self.threads[tid].dl.dl_bw;
        let dl = &mut self.rqs[cpu].dl;
        dl.running_bw += bw;
        // SCHED_WARN_ON(dl_rq->running_bw > dl_rq->this_bw)
        debug_assert!(
            dl.running_bw <= dl.this_bw,
            "CPU {cpu}: running_bw > this_bw"
        );
        self.rq_bw_changed(cpu);
        self.cpufreq_update_util(out, cpu, 0, now);
    }

    /// `__sub_running_bw()` via `sub_running_bw()` (v6.11): `tid`'s `dl_bw` leaves `cpu`'s
    /// `running_bw` (0 on an underflow, which the kernel warns of), then
    /// `cpufreq_update_util(rq, 0)`.
    fn sub_running_bw(&mut self, out: &mut Out<'_, '_>, cpu: usize, tid: usize, now: Nanos) {
        if self.threads[tid].kthread.is_some() {
            return;
        }
        let bw = self.threads[tid].dl.dl_bw;
        let dl = &mut self.rqs[cpu].dl;
        debug_assert!(bw <= dl.running_bw, "CPU {cpu}: running_bw underflow");
        dl.running_bw = dl.running_bw.saturating_sub(bw);
        self.rq_bw_changed(cpu);
        self.cpufreq_update_util(out, cpu, 0, now);
    }

    /// `add_rq_bw()` (v6.11): `tid`'s `dl_bw` joins `cpu`'s `this_bw`.
    fn add_rq_bw(&mut self, cpu: usize, tid: usize) {
        if self.threads[tid].kthread.is_none() {
            self.rqs[cpu].dl.this_bw += self.threads[tid].dl.dl_bw;
        }
    }

    /// `sub_rq_bw()` (v6.11): `tid`'s `dl_bw` leaves `cpu`'s `this_bw` (0 on an underflow).
    fn sub_rq_bw(&mut self, cpu: usize, tid: usize) {
        if self.threads[tid].kthread.is_some() {
            return;
        }
        let bw = self.threads[tid].dl.dl_bw;
        let dl = &mut self.rqs[cpu].dl;
        debug_assert!(bw <= dl.this_bw, "CPU {cpu}: this_bw underflow");
        dl.this_bw = dl.this_bw.saturating_sub(bw);
        debug_assert!(
            dl.running_bw <= dl.this_bw,
            "CPU {cpu}: running_bw > this_bw"
        );
    }

    /// `task_non_contending()` (kernel/sched/deadline.c, v6.11) for `tid` leaving `cpu`
    /// with DEQUEUE_SLEEP (it blocks or, TASK_DEAD, exits): its bandwidth stays in
    /// `running_bw` until its 0-lag time, `deadline − runtime × dl_period / dl_runtime`,
    /// when the inactive timer (`Ev::DlInactive`) removes it; if that time has passed (or
    /// the timer is still active) `sub_running_bw()` runs now, and an exiting task also
    /// leaves `this_bw` (`sub_rq_bw()`). Nothing for a special entity. The root domain's
    /// bandwidth (`__dl_sub()`) of an exiting task is released at its exit here
    /// ([`Sim::task_dead_dl`]), not at this point.
    pub(in crate::sim) fn task_non_contending(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        let t = &self.threads[tid];
        let Some(zerolag) = t.dl.zerolag_time(now) else {
            return; // dl_runtime == 0
        };
        if t.kthread.is_some() {
            return; // dl_entity_is_special()
        }
        debug_assert!(!t.dl.dl_non_contending, "WARN_ON(dl_se->dl_non_contending)");
        let dead = t.state == TState::Dead;
        if zerolag < 0 || t.dl_inactive_active {
            self.sub_running_bw(out, cpu, tid, now);
            if dead {
                self.sub_rq_bw(cpu, tid);
            }
            return;
        }
        let t = &mut self.threads[tid];
        t.dl.dl_non_contending = true;
        t.dl_inactive_gen = t.dl_inactive_gen.wrapping_add(1);
        t.dl_inactive_active = true;
        let gen = t.dl_inactive_gen;
        // hrtimer_start(timer, ns_to_ktime(zerolag_time), HRTIMER_MODE_REL_HARD)
        self.q.push(
            now + zerolag as Nanos,
            Ev::DlInactive {
                tid: tid as u32,
                gen,
            },
        );
    }

    /// `task_contending()` (v6.11) for `tid` woken onto `cpu`: one moved by the wake-up
    /// (ENQUEUE_MIGRATED) brings its bandwidth to `this_bw`; one still non-contending
    /// (woken before its 0-lag time) only cancels its inactive timer, its bandwidth never
    /// left `running_bw`; otherwise `add_running_bw()`.
    fn task_contending(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        migrated: bool,
    ) {
        if self.threads[tid].dl.dl_runtime == 0 {
            return;
        }
        if migrated {
            self.add_rq_bw(cpu, tid);
        }
        let t = &mut self.threads[tid];
        if t.dl.dl_non_contending {
            t.dl.dl_non_contending = false;
            self.cancel_inactive_timer(tid);
        } else {
            self.add_running_bw(out, cpu, tid, now);
        }
    }

    /// `hrtimer_try_to_cancel(&p->dl.inactive_timer)`: always cancelled here (the handler
    /// never runs concurrently).
    fn cancel_inactive_timer(&mut self, tid: usize) {
        let t = &mut self.threads[tid];
        if t.dl_inactive_active {
            t.dl_inactive_active = false;
            t.dl_inactive_gen = t.dl_inactive_gen.wrapping_add(1);
        }
    }

    /// `inactive_task_timer()` (kernel/sched/deadline.c, v6.11): at `tid`'s 0-lag time, a
    /// task still non-contending leaves its rq's `running_bw` (`sub_running_bw()`, whose
    /// `cpufreq_update_util()` is this CPU's frequency update); an exited one leaves its
    /// `this_bw` too. The timer's interrupt does not wake an idle CPU here (as for
    /// `dl_task_timer()`).
    pub(in crate::sim) fn inactive_task_timer(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        now: Nanos,
    ) {
        self.threads[tid].dl_inactive_active = false;
        let cpu = self.threads[tid].cpu;
        self.update_rq_clock(cpu, now);
        let t = &self.threads[tid];
        if !t.dl.dl_non_contending {
            return;
        }
        let dead = t.state == TState::Dead;
        self.sub_running_bw(out, cpu, tid, now);
        if dead {
            self.sub_rq_bw(cpu, tid);
        }
        self.threads[tid].dl.dl_non_contending = false;
    }

    /// `migrate_task_rq_dl()` (kernel/sched/deadline.c, v6.11) for `tid` woken away from
    /// `from` (TASK_WAKING, `set_task_cpu()` in `try_to_wake_up()`): a task still
    /// non-contending takes its bandwidth out of `from`'s `running_bw` now
    /// (`sub_running_bw()`, a frequency update of `from`) and its inactive timer is
    /// cancelled; its bandwidth leaves `from`'s `this_bw`. `task_contending()` adds both on
    /// the new CPU.
    pub(in crate::sim) fn migrate_task_rq_dl(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        from: usize,
        now: Nanos,
    ) {
        if self.threads[tid].dl.dl_non_contending {
            self.update_rq_clock(from, now);
            self.sub_running_bw(out, from, tid, now);
            self.threads[tid].dl.dl_non_contending = false;
            self.cancel_inactive_timer(tid);
        }
        self.sub_rq_bw(from, tid);
    }

    /// `switched_to_dl()` (kernel/sched/deadline.c, v6.11): the inactive timer is
    /// cancelled; the running task starts the DL signal (its past counted as not DL); a
    /// queued one asks for a push when the rq is overloaded (`deadline_queue_push_tasks()`)
    /// and preempts curr unless an earlier deadline runs; a sleeping one brings its
    /// bandwidth to the rq's `this_bw` (`add_rq_bw()`) and waits for its wake-up.
    pub(in crate::sim) fn switched_to_dl(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        self.cancel_inactive_timer(tid);
        if self.threads[tid].state != TState::Runnable {
            self.add_rq_bw(cpu, tid);
            return;
        }
        if self.rqs[cpu].curr == Some(tid) {
            self.update_dl_pelt(out, cpu, false, now);
            return;
        }
        if self.threads[tid].affinity.weight() > 1 && self.dl_overloaded_rq(cpu) {
            self.queue_balance_callback(BalanceCallback::PushDl(cpu));
        }
        match self.rqs[cpu].curr {
            Some(c) if self.threads[c].class == Class::Dl => self.wakeup_preempt_dl(cpu, c, tid),
            _ => self.set_resched(cpu),
        }
    }

    /// `dequeue_task_dl()` → `dequeue_dl_entity()` (kernel/sched/deadline.c, v6.11): out of
    /// the tree; DEQUEUE_SAVE or DEQUEUE_MIGRATING takes the task's bandwidth from the rq
    /// (`sub_running_bw()`, `sub_rq_bw()`); DEQUEUE_SLEEP is `task_non_contending()`.
    /// `cpufreq_update_util()` runs only from `sub_running_bw()`.
    pub(in crate::sim) fn dequeue_task_dl(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        flags: u32,
    ) {
        let key = self.threads[tid].dl_key;
        self.rqs[cpu].dl.dequeue(tid, key);
        self.dec_dl_deadline(cpu);
        self.refresh_view(cpu);
        if flags & (super::DEQUEUE_SAVE | super::DEQUEUE_MIGRATING) != 0 {
            self.sub_running_bw(out, cpu, tid, now);
            self.sub_rq_bw(cpu, tid);
        }
        if flags & super::DEQUEUE_SLEEP != 0 {
            self.task_non_contending(out, cpu, tid, now);
        }
    }

    /// `wakeup_preempt_dl()` (v6.11): an earlier deadline (or the sugov thread) preempts; an
    /// equal one preempts only if the running task could run elsewhere and `tid` could not
    /// (`check_preempt_equal_dl()`).
    pub(in crate::sim) fn wakeup_preempt_dl(&mut self, cpu: usize, curr: usize, tid: usize) {
        let p = self.dl_task(tid, cpu);
        let c = self.dl_task(curr, cpu);
        if pdl::dl_entity_preempt(&p, c.deadline) {
            self.set_resched(cpu);
            return;
        }
        if p.deadline == c.deadline && !self.rqs[cpu].need_resched {
            let views = self.dl_placement_views();
            let asym = self.sdt.asym_cpucap_active();
            if pdl::check_preempt_equal_dl(&views, &c, &p, asym) {
                self.set_resched(cpu);
            }
        }
    }

    /// `put_prev_task_dl()`: the DL signal, running until now.
    pub(in crate::sim) fn put_prev_task_dl(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        now: Nanos,
    ) {
        self.update_dl_pelt(out, cpu, true, now);
    }

    /// `set_next_task_dl()`: the start of the budget's accounting; for a pick (`first`),
    /// the DL signal (running only if `prev` was DL).
    pub(in crate::sim) fn set_next_task_dl(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        prev: Option<usize>,
        first: bool,
        now: Nanos,
    ) {
        if first {
            let running = prev.is_some_and(|p| self.threads[p].class == Class::Dl);
            self.update_dl_pelt(out, cpu, running, now);
        }
        self.rqs[cpu].seg_start_dl = now;
    }

    /// `task_tick_dl()`: the DL signal, then `update_curr_dl()`; with HRTICK off the
    /// overrun is seen here; an earlier queued deadline preempts.
    pub(in crate::sim) fn task_tick_dl(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        curr: usize,
        now: Nanos,
    ) {
        self.update_dl_pelt(out, cpu, true, now);
        self.update_curr_dl(cpu, curr, now);
        if let Some(e) = self.rqs[cpu].dl.earliest() {
            if e < self.threads[curr].dl.deadline {
                self.set_resched(cpu);
            }
        }
    }

    /// `yield_task_dl()`: give up the rest of the budget until the next period.
    pub(in crate::sim) fn yield_task_dl(&mut self, cpu: usize, tid: usize, now: Nanos) {
        self.update_curr_dl(cpu, tid, now);
        let t = &mut self.threads[tid];
        if !t.dl.throttled {
            t.dl.runtime = 0;
            self.update_curr_dl(cpu, tid, now);
        }
    }

    /// `tid` as deadline placement sees it, on `cpu`.
    fn dl_task(&self, tid: usize, cpu: usize) -> DlTask {
        let t = &self.threads[tid];
        DlTask {
            id: tid,
            deadline: t.dl.deadline,
            density: to_ratio(t.dl.dl_deadline, t.dl.dl_runtime),
            cpu,
            allowed: t.affinity,
            special: t.kthread.is_some(), // the sugov:N threads (SCHED_FLAG_SUGOV)
        }
    }

    /// `cpu`'s `pushable_dl_tasks_root`: its queued deadline tasks that do not run and may
    /// run elsewhere, earliest deadline first.
    fn dl_pushable(&self, cpu: usize) -> Vec<DlTask> {
        let rq = &self.rqs[cpu];
        rq.dl
            .iter()
            .filter(|&t| rq.curr != Some(t) && self.threads[t].affinity.weight() > 1)
            .map(|t| self.dl_task(t, cpu))
            .collect()
    }

    /// `cpu`'s deadline state as [`crate::policy::dl`] reads it, with `pushable` as its
    /// pushable tasks.
    fn dl_view<'a>(&self, cpu: usize, pushable: &'a [DlTask]) -> DlRqView<'a> {
        let rq = &self.rqs[cpu];
        let curr = rq
            .curr
            .filter(|&c| self.threads[c].class == Class::Dl)
            .map(|c| self.dl_task(c, cpu));
        DlRqView {
            dl_nr_running: rq.dl.nr_running(),
            earliest: rq.dl.earliest(),
            curr,
            need_resched: rq.need_resched,
            capacity_orig: rq.cap,
            pushable,
        }
    }

    /// Each rq's deadline state without its pushable tasks, for the placement functions
    /// that read only `cpudl` (`cpudl_find()`: earliest deadlines and capacities) and the
    /// rqs' running tasks: `find_later_rq()`, `check_preempt_equal_dl()`.
    fn dl_placement_views(&self) -> Vec<DlRqView<'static>> {
        (0..self.p.nr_cpus())
            .map(|cpu| self.dl_view(cpu, &[]))
            .collect()
    }

    /// `select_task_rq_dl()` (kernel/sched/deadline.c, v6.11), [`pdl::select_task_rq_dl`]:
    /// at a wake-up, a task that would wait behind its CPU's running deadline task (or that
    /// does not fit that CPU's capacity, on asymmetric systems) goes to `find_later_rq()`'s
    /// CPU if it would be that rq's earliest deadline, searching from `this_cpu` (the
    /// waker's). The other rqs are read only when it looks there
    /// ([`pdl::select_task_rq_dl_looks_later`]).
    pub(in crate::sim) fn select_task_rq_dl(
        &mut self,
        tid: usize,
        prev: usize,
        this_cpu: usize,
        wake_flags: u32,
    ) -> usize {
        let p = self.dl_task(tid, prev);
        if !pdl::select_task_rq_dl_looks_later(&self.dl_view(prev, &[]), &self.sdt, &p, wake_flags)
        {
            return prev;
        }
        let views = self.dl_placement_views();
        let prev_mask = &mut self.rt_distribute_prev[this_cpu];
        pdl::select_task_rq_dl(&views, &self.sdt, &p, wake_flags, this_cpu, prev_mask)
    }

    /// `push_dl_tasks(rq)` on `cpu` (v6.11): push its earliest pushable task to a CPU where
    /// it would be the earliest deadline, again while one moves; `sched_migrate_task` comes
    /// from `cpu`.
    pub(in crate::sim) fn push_dl_tasks(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        // each push moves a task to an rq where it is the earliest deadline: bounded
        for _ in 0..self.threads.len() + 1 {
            // push_dl_task() reads this rq's pushable tasks only (find_later_rq() reads
            // cpudl: the rqs' earliest deadlines and capacities)
            let pushable = self.dl_pushable(cpu);
            let views: Vec<DlRqView<'_>> = (0..self.p.nr_cpus())
                .map(|c| self.dl_view(c, if c == cpu { &pushable } else { &[] }))
                .collect();
            let mut prev = self.rt_distribute_prev[cpu];
            let d = pdl::push_dl_task(&views, &self.sdt, cpu, &mut prev);
            self.rt_distribute_prev[cpu] = prev;
            match d {
                DlPush::Push { task, from, to } => {
                    let m = Migration {
                        task,
                        src: from,
                        dst: to,
                        reason: MigrationReason::DlPush,
                    };
                    // activate_task() on the later rq, then resched_curr(later_rq)
                    self.move_queued_on(out, m, cpu, now);
                    self.set_resched(to);
                }
                DlPush::Resched => {
                    self.set_resched(cpu);
                    return;
                }
                DlPush::Nothing | DlPush::NoTarget => return,
            }
        }
    }

    /// `pull_dl_task(this_rq)` (v6.11): from each CPU with pushable deadline tasks, in CPU
    /// order, the earliest that may run here, would be this rq's earliest deadline, is
    /// earlier than what this pull moved so far and would not preempt its own rq's running
    /// task; a pull reschedules this CPU.
    pub(in crate::sim) fn pull_dl_task(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        let overloaded =
            pdl::dl_overloaded_cpus(self.p.nr_cpus(), cpu, |c| self.dl_overloaded_rq(c));
        let mut dmin = None;
        let mut resched = false;
        for src in overloaded {
            // the two rqs this step reads, as they are after the steps before it (this
            // rq's pushable tasks are not read)
            let this = self.dl_view(cpu, &[]);
            let src_pushable = self.dl_pushable(src);
            let s = self.dl_view(src, &src_pushable);
            // src_rq->curr->dl.deadline (0 for a task of another class)
            let src_curr = self.rqs[src]
                .curr
                .map_or(0, |c| self.threads[c].dl.deadline);
            let Some(p) = pdl::pull_dl_candidate(&this, cpu, &s, src_curr, dmin) else {
                continue;
            };
            let m = Migration {
                task: p.id,
                src,
                dst: cpu,
                reason: MigrationReason::DlPull,
            };
            self.move_queued_on(out, m, cpu, now);
            dmin = Some(p.deadline);
            resched = true;
        }
        if resched {
            self.set_resched(cpu);
        }
    }

    /// `task_woken_dl(rq, p)`: a woken deadline task that neither runs nor preempts here,
    /// but may run elsewhere, is pushed (`push_dl_tasks()`).
    pub(in crate::sim) fn task_woken_dl(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        let p = self.dl_task(tid, cpu);
        let rq = self.dl_view(cpu, &[]);
        if pdl::task_woken_dl_should_push(&rq, &p, self.rqs[cpu].curr == Some(tid)) {
            self.push_dl_tasks(out, cpu, now);
        }
    }

    /// `balance_dl(rq, prev)` (kernel/sched/deadline.c, v6.11) before the pick
    /// (`put_prev_task_balance()`): a deadline `prev` that left the rq (it blocked or was
    /// throttled) makes the CPU pull (`pull_dl_task()`); a stopper `prev` does not
    /// (`need_pull_dl_task()` is `dl_task(prev)`). Returns whether the class walk stops
    /// here: `sched_stop_runnable(rq) || sched_dl_runnable(rq)`.
    pub(in crate::sim) fn balance_dl(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        prev: usize,
        now: Nanos,
    ) -> bool {
        // need_pull_dl_task(): dl_task(prev), not the stopper (prio 0)
        if self.threads[prev].class == Class::Dl && !self.rqs[cpu].dl.iter().any(|t| t == prev) {
            self.pull_dl_task(out, cpu, now);
        }
        self.rqs[cpu].stop.is_some() || self.rqs[cpu].dl.nr_running() > 0
    }

    /// The balance callback `set_next_task_dl()` queued at a pick
    /// (`deadline_queue_push_tasks()`): after the switch, an rq with pushable deadline tasks
    /// pushes them.
    pub(in crate::sim) fn dl_balance_callback(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        now: Nanos,
    ) {
        if self.dl_overloaded_rq(cpu) {
            self.push_dl_tasks(out, cpu, now);
        }
    }

    /// `rq->dl.overloaded`: the rq has a pushable deadline task.
    fn dl_overloaded_rq(&self, cpu: usize) -> bool {
        let rq = &self.rqs[cpu];
        rq.dl
            .iter()
            .any(|t| rq.curr != Some(t) && self.threads[t].affinity.weight() > 1)
    }

    /// `switched_from_dl()` (v6.11): a queued task that was the rq's last deadline task
    /// asks for a pull (`deadline_queue_pull_task()`).
    pub(in crate::sim) fn switched_from_dl(&mut self, cpu: usize, tid: usize) {
        if self.threads[tid].state != TState::Runnable || self.rqs[cpu].dl.nr_running() > 0 {
            return;
        }
        self.queue_balance_callback(BalanceCallback::PullDl(cpu));
    }

    /// `prio_changed_dl()` (v6.11) for a queued task whose parameters changed: a pull when
    /// the rq is not overloaded ("we don't have the old deadline value"); the running task
    /// reschedules when an earlier deadline waits, a queued one when it is earlier than the
    /// running deadline task (or the running task is not one).
    pub(in crate::sim) fn prio_changed_dl(&mut self, cpu: usize, tid: usize) {
        if self.threads[tid].state != TState::Runnable {
            return;
        }
        if !self.dl_overloaded_rq(cpu) {
            self.queue_balance_callback(BalanceCallback::PullDl(cpu));
        }
        let d = self.threads[tid].dl.deadline;
        if self.rqs[cpu].curr == Some(tid) {
            if self.rqs[cpu]
                .dl
                .earliest()
                .is_some_and(|e| pdl::dl_time_before(e, d))
            {
                self.set_resched(cpu);
            }
        } else {
            let resched = match self.rqs[cpu].curr {
                Some(c) if self.threads[c].class == Class::Dl => {
                    pdl::dl_time_before(d, self.threads[c].dl.deadline)
                }
                _ => true,
            };
            if resched {
                self.set_resched(cpu);
            }
        }
    }

    /// `__checkparam_dl()` and `sched_dl_overflow()` for `tid` entering SCHED_DEADLINE
    /// with `dl` (kernel/sched/deadline.c, v6.11): EINVAL for parameters the kernel
    /// refuses (a zero deadline, a runtime under `1 << DL_SCALE` ns, runtime > deadline >
    /// period, a period outside `sched_dl_period_min_us`..`max_us`), EBUSY when the root
    /// domain's DL bandwidth — `to_ratio(sched_rt_period, sched_rt_runtime)` of its
    /// capacity (`dl_bw_capacity()`: the sum of the CPUs' capacities on asymmetric
    /// systems) — cannot take the task's `to_ratio(period, runtime)`; else the bandwidth
    /// is added (`__dl_add()`). The message is the one-line reason.
    pub(in crate::sim) fn sched_dl_admit(
        &mut self,
        tid: usize,
        dl: &DlEntity,
    ) -> Result<(), String> {
        let name = &self.threads[tid].comm;
        let (runtime, deadline) = (dl.dl_runtime, dl.dl_deadline);
        let period = if dl.dl_period == 0 {
            deadline
        } else {
            dl.dl_period
        };
        let einval = |why: &str| {
            format!(
                "thread {name}: sched_setattr(SCHED_DEADLINE, runtime {runtime} ns, deadline {deadline} ns, period {period} ns) returns EINVAL ({why}) and rt-app exits"
            )
        };
        if deadline == 0 {
            return Err(einval("a zero deadline"));
        }
        if runtime < 1 << DL_SCALE {
            return Err(einval("a runtime under 1024 ns"));
        }
        if period < deadline || deadline < runtime {
            return Err(einval("runtime ≤ deadline ≤ period is required"));
        }
        if !(DL_PERIOD_MIN_US * 1000..=DL_PERIOD_MAX_US * 1000).contains(&period) {
            return Err(einval(
                "the period is outside sched_dl_period_min_us..max_us, 100 µs..4.19 s",
            ));
        }
        let new_bw = to_ratio(period, runtime);
        let Some((rt_runtime, rt_period)) = self.rt_bandwidth() else {
            self.dl_total_bw += new_bw; // dl_b->bw = -1: no limit
            return Ok(());
        };
        let caps: Vec<u64> = self.p.cpus.iter().map(|c| c.capacity).collect();
        let asym = caps.iter().any(|&c| c != caps[0]);
        let cap = if asym {
            caps.iter().sum::<u64>()
        } else {
            (caps.len() as u64) << 10
        };
        let limit = (to_ratio(rt_period, rt_runtime) * cap) >> 10;
        if limit < self.dl_total_bw + new_bw {
            return Err(format!(
                "thread {}: sched_setattr(SCHED_DEADLINE, runtime {runtime} ns, period {period} ns) returns EBUSY (the root domain's deadline bandwidth is full: {} + {new_bw} > {limit}, in units of 1/1048576 of a CPU of capacity 1024) and rt-app exits",
                self.threads[tid].comm, self.dl_total_bw
            ));
        }
        self.dl_total_bw += new_bw;
        Ok(())
    }

    /// An exiting SCHED_DEADLINE task's bandwidth leaves the root domain at its exit, as
    /// `task_dead_dl()` did to v4.12 ("XXX we should retain the bw until 0-lag"); from v4.13
    /// `task_non_contending()` / `inactive_task_timer()` release it (`__dl_sub()`) at the
    /// task's 0-lag time, which is not modelled for the root domain (only for the rq's
    /// `running_bw` and `this_bw`).
    pub(in crate::sim) fn task_dead_dl(&mut self, tid: usize) {
        let t = &self.threads[tid];
        if t.class != Class::Dl || t.kthread.is_some() {
            return;
        }
        let period = if t.dl.dl_period == 0 {
            t.dl.dl_deadline
        } else {
            t.dl.dl_period
        };
        let bw = to_ratio(period, t.dl.dl_runtime);
        self.dl_total_bw = self.dl_total_bw.saturating_sub(bw);
    }
}

/// `DL_SCALE`: the runtime granularity (a runtime under `1 << DL_SCALE` ns is refused).
const DL_SCALE: u32 = 10;
/// `sysctl_sched_dl_period_min` (µs).
const DL_PERIOD_MIN_US: u64 = 100;
/// `sysctl_sched_dl_period_max` (µs): `1 << 22`.
const DL_PERIOD_MAX_US: u64 = 1 << 22;
