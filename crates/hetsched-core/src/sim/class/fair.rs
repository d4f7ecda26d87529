//! The fair class's hooks (kernel/sched/fair.c, v6.11): enqueue and dequeue with PELT and
//! util_est, `update_curr()` with its resched verdict, wake-up preemption, put/set of the
//! running entity, the tick, `yield_task_fair()`, the newidle balance of an empty pick,
//! and `reweight_task()`. The EEVDF/CFS queue itself is crate::sched::fair; wake-up
//! placement is class/fair_select.rs.

use crate::sim::*;

impl<'w> Sim<'w> {
    /// `update_curr()` of `cpu`'s fair queue, with its verdict: EEVDF's `update_deadline()`
    /// calls `resched_curr()` when curr has used up its request and others are queued
    /// (kernel/sched/fair.c, v6.11). Every caller outside the tick goes through here, so an
    /// expired slice is noticed at the next enqueue or dequeue on the CPU, not the next tick.
    /// Inlined at its callers with `update_curr()`'s early return; the charge is out of line.
    #[inline(always)]
    pub(in crate::sim) fn update_curr_fair_resched(&mut self, cpu: usize, now: Nanos) {
        let fair = self.s.fair;
        let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
        if rq.cfs.update_curr(ents, now, &fair).1 {
            self.set_resched(cpu);
        }
    }

    /// `enqueue_task_fair()`: util_est, PELT (attach), placement, queueing.
    ///
    /// After `update_load_avg()` (which may call into the governor) the rest of the
    /// enqueue works on the rq, the entities, the task and the per-CPU counters it takes
    /// once, not through `self` at each step (each such look-up is a bounds check and,
    /// after a store, reloads). For that, HMP's `enqueue_entity_load_avg()` runs before
    /// the placement instead of after it, as in LSK 3.10's `enqueue_entity()`: it reads
    /// the task's `on_rq` and weight, `cfs_rq->curr` and the CPU's frequency, which the
    /// placement does not write, and the placement reads nothing HMP writes.
    pub(in crate::sim) fn enqueue_fair(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        initial: bool,
    ) {
        let util_est = self.s.options.pelt.util_est;
        let flags = UPDATE_TG | DO_ATTACH;
        if util_est {
            let (rqs, ents) = (&mut self.rqs, &self.ents);
            pelt::util_est_enqueue(&mut rqs[cpu].cfs.avg, &ents[tid].avg, self.ue_ver);
            // util_est's tracepoint, held for update_load_avg() to give first with the
            // PELT ones if it will reach them (update_curr() emits nothing, and changes
            // nothing load_avg_unchanged() reads)
            self.trace_util_est_cfs(out, cpu, tid, flags, now);
        }
        // update_curr() of the queue's current entity before placement.
        self.update_curr_fair_resched(cpu, now);
        let marked = self.update_load_avg(out, cpu, tid, flags, now);
        // The util_est change's mark (rq_util_changed()): made by update_load_avg() before
        // the governor's update when the cfs_rq's signal changed, here otherwise. Nothing
        // between the util_est change and this point reads the marks or the CPU's
        // generation (update_curr(), the tracepoint, a PELT update that changes nothing).
        if util_est && !marked {
            self.rq_util_changed(cpu);
        }
        self.hmp_enqueue(out, cpu, tid, now);
        let fair = &self.s.fair;
        let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents[..]);
        let th = &mut self.threads[tid];
        let migrated = std::mem::take(&mut th.enqueue_migrated);
        let fork_placed = std::mem::take(&mut th.cfs_fork_placed);
        let queued = th.state == TState::Runnable;
        // ENQUEUE_WAKEUP: a sleeping task, not a new one nor a queued one moving or
        // being re-queued (a balancer move, an affinity or priority change).
        let wakeup = !initial && !queued;
        // enqueue_entity(): "Entity has migrated, no longer consider this task hot". Made
        // before the placement, which does not read `exec_start`: this one look-up of the
        // entity comes before every other, which then need no bounds check of their own.
        let e = &mut ents[tid];
        if migrated {
            e.exec_start = 0;
        }
        if fair.variant == FairVariant::Cfs && queued {
            // a migrating queued task: make its relative vruntime absolute here
            rq.cfs.cfs_migrate_in(ents, tid);
        } else if fork_placed {
            // v6.5 enqueue_entity() of a new task (no ENQUEUE_WAKEUP): renorm, no
            // place_entity(); task_fork_fair() placed it on its parent's queue
            rq.cfs.cfs_migrate_in(ents, tid);
        } else {
            if fair.variant == FairVariant::Cfs && migrated {
                // v6.5 enqueue_entity(): renorm for ENQUEUE_MIGRATED, then place_entity()
                rq.cfs.cfs_migrate_in(ents, tid);
            }
            // ENQUEUE_INITIAL: wake_up_new_task() passes it from v6.12 (fair.enqueue_initial);
            // the CFS rules' `initial` is START_DEBIT's placement, here on the target queue
            // for a task created without a parent (a forked one was placed at fork).
            let enqueue_initial = initial
                && (fair.variant == FairVariant::Cfs || self.s.options.fair.enqueue_initial);
            rq.cfs.place_entity(ents, tid, enqueue_initial, fair);
        }
        rq.cfs.enqueue_entity(ents, tid);
        th.state = TState::Runnable;
        th.cpu = cpu;
        // account_entity_enqueue(): at the head of cfs_tasks
        self.stamp_ctr += 1;
        self.cfs_stamp[tid] = self.stamp_ctr;
        // refresh_view()
        crate::sim::core::refresh_view_of(
            rq,
            &mut self.view[cpu],
            &mut self.nr_idle,
            &mut self.nr_overloaded,
        );
        self.lb_scratch.cpu_changed(cpu);
        // add_nr_running()
        if crate::sim::core::nr_running_ge2(rq) {
            self.rd_overload = true;
        }
        // enqueue_task_fair() (v6.11): `task_new = !(flags & ENQUEUE_WAKEUP)`; only a
        // wake-up checks the overutilized status.
        if wakeup {
            self.check_update_overutilized_status(out, cpu, now);
        }
        if wakeup || initial {
            // the sched governor (seed 004): a waking or new task's request
            self.schedfreq_update_capacity_of(out, cpu, now);
        }
    }

    /// `dequeue_task_fair()` with `flags`: DEQUEUE_SLEEP (the task blocks: util_est's
    /// update), DEQUEUE_MIGRATING (its averages leave with it, DO_DETACH) or DEQUEUE_SAVE
    /// (a change of priority, class or weight: they stay attached; without DEQUEUE_MOVE
    /// min_vruntime is not advanced). A dequeue that leaves the rq running SCHED_IDLE
    /// tasks only sets `rq->next_balance = jiffies` (`was_sched_idle`, kernel/sched/fair.c
    /// `dequeue_task_fair()`, v5.6–v6.11): the next tick balances, at the idle interval;
    /// not without `sched.sched_idle_cpu` (v4.20 and earlier).
    pub(in crate::sim) fn dequeue_fair(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        flags: u32,
    ) {
        let sleep = flags & super::DEQUEUE_SLEEP != 0;
        let migrating = flags & super::DEQUEUE_MIGRATING != 0;
        let util_est = self.s.options.pelt.util_est;
        let pelt_flags = if migrating {
            UPDATE_TG | DO_DETACH
        } else {
            UPDATE_TG
        };
        if util_est {
            let (rqs, ents) = (&mut self.rqs, &self.ents);
            pelt::util_est_dequeue(&mut rqs[cpu].cfs.avg, &ents[tid].avg, self.ue_ver);
            // util_est's tracepoint, held for update_load_avg() as in the enqueue
            self.trace_util_est_cfs(out, cpu, tid, pelt_flags, now);
        }
        let was_sched_idle = self.sched_idle_cpu(cpu);
        self.update_curr_fair_resched(cpu, now);
        let marked = self.update_load_avg(out, cpu, tid, pelt_flags, now);
        // util_est's mark, as in the enqueue ([`Sim::enqueue_fair`])
        if util_est && !marked {
            self.rq_util_changed(cpu);
        }
        self.hmp_dequeue(out, cpu, tid, now);
        // The rest works on the rq and the entities taken once (as the enqueue does, see
        // [`Sim::enqueue_fair`]); the tracepoint of util_est_update() and the rq's next
        // balance are written after refresh_view(), which neither reads nor writes.
        let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents[..]);
        // DEQUEUE_SAVE without DEQUEUE_MOVE: min_vruntime is not advanced
        let save_only = flags & (super::DEQUEUE_SAVE | super::DEQUEUE_MOVE) == super::DEQUEUE_SAVE;
        rq.cfs
            .dequeue_entity(ents, tid, sleep, save_only, &self.s.fair);
        if migrating {
            ents[tid].avg.last_update_time = 0;
        }
        // "balance early to pull high priority tasks" (v5.6+, 323af6deaf70)
        let balance_early = self.s.options.sched.sched_idle_cpu
            && !was_sched_idle
            && super::fair_select::sched_idle_cpu_of(
                self.idle_policy_possible,
                rq,
                ents,
                &self.threads,
            );
        let ue_traced = self.s.options.pelt.util_est
            && pelt::util_est_update(&mut ents[tid].avg, sleep, self.ue_ver, rq.cap);
        // refresh_view()
        crate::sim::core::refresh_view_of(
            rq,
            &mut self.view[cpu],
            &mut self.nr_idle,
            &mut self.nr_overloaded,
        );
        self.lb_scratch.cpu_changed(cpu);
        if balance_early {
            self.rqs[cpu].next_balance = self.jiffies(now);
        }
        if ue_traced {
            self.trace_util_est_se(out, cpu, tid, now);
        }
        if sleep {
            self.schedfreq_cfs_sleep(out, cpu, now);
        }
    }

    /// `reweight_task_fair()` → `reweight_entity()` (kernel/sched/fair.c, v6.11) of a task
    /// its caller dequeued and put (`set_user_nice()`, `__sched_setscheduler()`): the lag
    /// scaled to the new weight (`reweight_eevdf()`'s `vlag`), the load average
    /// recomputed with it.
    pub(in crate::sim) fn reweight_task_fair(&mut self, cpu: usize, tid: usize, lw: LoadWeight) {
        let old_w = self.ents[tid].load.weight;
        if lw == self.ents[tid].load {
            return;
        }
        let (rq, e) = (&mut self.rqs[cpu], &mut self.ents[tid]);
        e.vlag = (i128::from(e.vlag) * i128::from(old_w) / i128::from(lw.weight)) as i64;
        pelt::reweight_entity_load_avg(&mut rq.cfs.avg, &mut e.avg, old_w, lw.weight);
        e.load = lw;
        self.rq_util_changed(cpu);
    }

    /// `prio_changed_fair()` (v6.11): a queued task beside others reschedules its CPU
    /// when it runs and its priority fell; otherwise it is checked against curr.
    pub(in crate::sim) fn prio_changed_fair(&mut self, cpu: usize, tid: usize, oldprio: i32) {
        if self.threads[tid].state != TState::Runnable || self.rqs[cpu].cfs.nr_running == 1 {
            return;
        }
        if self.rqs[cpu].curr == Some(tid) {
            if self.threads[tid].eff_prio > oldprio {
                self.set_resched(cpu);
            }
        } else {
            self.wakeup_preempt(cpu, tid);
        }
    }

    /// `switched_from_fair()` → `detach_task_cfs_rq()` (v6.11): the task's averages
    /// leave its cfs_rq (`update_load_avg()`, `detach_entity_load_avg()`); they keep
    /// their `last_update_time`, so the time out of the class ages them as sleep when the
    /// task comes back.
    pub(in crate::sim) fn switched_from_fair(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        if self.ents[tid].avg.last_update_time == 0 {
            return; // not attached (a task before its first enqueue)
        }
        self.update_load_avg(out, cpu, tid, DO_DETACH, now);
    }

    /// `switched_to_fair()` (v6.11): `attach_task_cfs_rq()` (`update_load_avg()` with
    /// ATTACH_AGE_LOAD, `attach_entity_load_avg()`), then, if queued, a resched of the
    /// running task or a preemption check against curr.
    pub(in crate::sim) fn switched_to_fair(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        if self.ents[tid].avg.last_update_time != 0 {
            self.update_load_avg(out, cpu, tid, 0, now);
            let w = self.ents[tid].load.weight;
            let (rq, e) = (&mut self.rqs[cpu], &mut self.ents[tid]);
            pelt::attach_entity_load_avg(&mut rq.cfs.avg, &mut e.avg, w);
            self.rq_util_changed(cpu);
            self.trace_pelt_cfs(out, cpu, now);
            self.cpufreq_update_util(out, cpu, 0, now); // cfs_rq_util_change()
        }
        if self.threads[tid].state == TState::Runnable {
            if self.rqs[cpu].curr == Some(tid) {
                self.set_resched(cpu);
            } else {
                self.wakeup_preempt(cpu, tid);
            }
        }
    }

    /// `update_curr()` of the fair queue as `__schedule()` reaches it for a still-queued
    /// `prev` (no verdict: the CPU is rescheduling already).
    pub(in crate::sim) fn update_curr_fair(&mut self, cpu: usize, tid: usize, now: Nanos) {
        if self.ents[tid].on_rq {
            let fair = self.s.fair;
            let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
            rq.cfs.update_curr(ents, now, &fair);
        }
    }

    /// `select_task_rq_fair()` (class/fair_select.rs), counting the placement's reason.
    pub(in crate::sim) fn select_task_rq_fair_hook(
        &mut self,
        tid: usize,
        prev: usize,
        this_cpu: usize,
        wake_flags: u32,
        now: Nanos,
    ) -> usize {
        let placed = self.select_task_rq_fair(tid, prev, this_cpu, wake_flags, now);
        self.placements[placed.reason as usize] += 1;
        placed.cpu
    }

    /// `check_preempt_wakeup_fair()`.
    pub(in crate::sim) fn check_preempt_wakeup_fair(
        &mut self,
        cpu: usize,
        curr: usize,
        tid: usize,
    ) {
        let curr_idle = self.threads[curr].policy == SchedPolicy::Idle;
        let wp = self.threads[tid].policy;
        let fair = self.s.fair;
        if self.rqs[cpu].cfs.check_preempt_wakeup(
            &self.ents,
            tid,
            curr_idle,
            wp == SchedPolicy::Idle,
            wp == SchedPolicy::Other,
            &fair,
        ) {
            self.set_resched(cpu);
        }
    }

    /// `put_prev_task_fair()` → `put_prev_entity()`: the PELT update while it ran, back
    /// into the queue. Inlined at its callers for a task no longer queued (it blocked:
    /// most calls, 254,000 of 294,127 on `periodic`), for which `put_prev_entity()` only
    /// clears `cfs_rq->curr`; a queued task's update is out of line
    /// ([`Sim::put_prev_task_fair_queued`]).
    #[inline(always)]
    pub(in crate::sim) fn put_prev_task_fair(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        prev: usize,
        now: Nanos,
    ) {
        if self.ents[prev].on_rq {
            self.put_prev_task_fair_queued(out, cpu, prev, now);
            return;
        }
        let (rq, ents) = (&mut self.rqs[cpu], &self.ents);
        rq.cfs.put_prev_entity(ents, prev);
    }

    /// [`Sim::put_prev_task_fair`] of a task still queued.
    #[inline(never)]
    fn put_prev_task_fair_queued(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        prev: usize,
        now: Nanos,
    ) {
        self.update_load_avg(out, cpu, prev, 0, now);
        self.hmp_update(out, cpu, prev, now);
        let (rq, ents) = (&mut self.rqs[cpu], &self.ents);
        rq.cfs.put_prev_entity(ents, prev);
    }

    /// `set_next_task_fair()` → `set_next_entity()`; the task moves to the head of
    /// `cfs_tasks`; for a pick (`first`), `update_misfit_status()` (from
    /// `pick_next_task_fair()`).
    ///
    /// Inlined at its callers (`__schedule()`'s class dispatch, [`Class::set_next_task`])
    /// up to the PELT update's no-op test and what follows it, the common case; the path
    /// that updates (or runs HMP) is [`Sim::set_next_task_fair_update`], out of line. Out of
    /// line, each call paid a prologue and epilogue of six saved registers and looked up
    /// the rq again (on `large`, 1,628,944 calls, 132 instructions each).
    #[inline(always)]
    pub(in crate::sim) fn set_next_task_fair(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        next: usize,
        first: bool,
        now: Nanos,
    ) {
        // the task was mostly enqueued at this time, which updated both signals: the
        // update's no-op test inline, without the call; on that path without HMP nothing
        // is called before the rest, which then works on what the test looked up
        if self.load_avg_unchanged(cpu, next, UPDATE_TG) && self.hmp.is_none() {
            self.set_next_task_fair_rest(cpu, next, first, now);
            return;
        }
        self.set_next_task_fair_update(out, cpu, next, first, now);
    }

    /// [`Sim::set_next_task_fair`] when the PELT update has work to do or HMP is on.
    #[inline(never)]
    fn set_next_task_fair_update(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        next: usize,
        first: bool,
        now: Nanos,
    ) {
        if !self.load_avg_unchanged(cpu, next, UPDATE_TG) {
            self.update_load_avg(out, cpu, next, UPDATE_TG, now);
        }
        self.hmp_update(out, cpu, next, now);
        self.set_next_task_fair_rest(cpu, next, first, now);
    }

    /// [`Sim::set_next_task_fair`] after the PELT and HMP updates.
    #[inline(always)]
    fn set_next_task_fair_rest(&mut self, cpu: usize, next: usize, first: bool, now: Nanos) {
        let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
        rq.cfs.set_next_entity(ents, next, now);
        self.stamp_ctr += 1;
        self.cfs_stamp[next] = self.stamp_ctr;
        if first {
            self.update_misfit(cpu, Some(next), now);
        }
    }

    /// `task_tick_fair()` → `entity_tick()` (`update_curr()`, PELT, the slice's end), then
    /// `update_misfit_status()` and `check_update_overutilized_status()`.
    pub(in crate::sim) fn task_tick_fair(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        curr: usize,
        now: Nanos,
    ) {
        let fair = self.s.fair;
        let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
        let (_, resched) = rq.cfs.update_curr(ents, now, &fair);
        self.update_load_avg(out, cpu, curr, UPDATE_TG, now);
        self.hmp_update(out, cpu, curr, now); // entity_tick()
        let tick_preempt = self.rqs[cpu].cfs.check_preempt_tick(&self.ents, &fair);
        if resched || tick_preempt {
            self.set_resched(cpu);
        }
        self.update_misfit(cpu, Some(curr), now);
        self.check_update_overutilized_status(out, cpu, now);
    }

    /// `yield_task_fair()` (v6.6+): push the deadline one slice out.
    pub(in crate::sim) fn yield_task_fair(&mut self, cpu: usize, tid: usize, now: Nanos) {
        if self.rqs[cpu].cfs.nr_running <= 1 {
            return;
        }
        self.update_curr_fair_resched(cpu, now);
        let e = &mut self.ents[tid];
        e.deadline = e
            .deadline
            .wrapping_add(crate::sched::calc_delta_fair(e.slice, &e.load));
    }

    /// `pick_next_task_fair()` found nothing: `update_misfit_status(NULL)`, then
    /// `sched_balance_newidle()` (v6.11): past its gate (`rd->overloaded`, `avg_idle`) the
    /// blocked averages, then the domains; nothing pulled: `nohz_newidle_balance()`.
    /// Returns whether a task was pulled.
    pub(in crate::sim) fn balance_fair(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        now: Nanos,
    ) -> bool {
        // the gate tested once, here: its inputs are the same at the test in
        // sched_balance_newidle()
        let pulled = if self.newidle_gate_open(cpu) {
            self.update_blocked_averages(out, cpu, now);
            self.newidle_balance(out, cpu, true, now)
        } else {
            self.newidle_balance(out, cpu, false, now) // updates next_balance only
        };
        // LSK 3.10 idle_balance() with HMP: nothing pulled, a faster CPU pulls the
        // heaviest eligible task of the slower domain (`hmp_idle_pull()`)
        let pulled = pulled || self.hmp_newidle_pull(out, cpu, now);
        if !pulled {
            self.nohz_newidle_balance(out, cpu, now);
        }
        pulled
    }

    /// `migrate_task_rq_fair()` (v6.11; the CFS option: v6.5) of a task leaving `from`
    /// asleep: its load is removed from the old cfs_rq (`remove_entity_load_avg()`),
    /// decayed further off an idle CPU (`migrate_se_pelt_lag()`), detached
    /// (`last_update_time = 0`), and under CFS its vruntime made relative to the old queue.
    pub(in crate::sim) fn migrate_task_rq_fair(&mut self, tid: usize, from: usize, now: Nanos) {
        let last = self.rqs[from].cfs.avg.last_update_time;
        let w = self.ents[tid].load.weight;
        pelt::remove_entity_load_avg(
            &mut self.rqs[from].cfs.removed,
            &mut self.ents[tid].avg,
            last,
            w,
        );
        // migrate_se_pelt_lag(): off an idle CPU, whose clock may be stale, the blocked
        // averages are decayed further to the estimated now.
        if self.s.options.pelt.migrate_pelt_lag
            && self.rqs[from].curr.is_none()
            && !pelt::load_avg_is_decayed(&self.ents[tid].avg)
        {
            let est = self.rqs[from].clock.migrate_lag_now(last, now);
            pelt::update_load_avg_blocked_se(&mut self.ents[tid].avg, est, w);
        }
        self.ents[tid].avg.last_update_time = 0;
        if self.s.fair.variant == FairVariant::Cfs && self.threads[tid].class == Class::Fair {
            // v6.5: a waking task's vruntime is made relative to its old queue here and
            // absolute on the new one in enqueue_entity() (ENQUEUE_MIGRATED).
            let min = self.rqs[from].cfs.min_vruntime;
            let e = &mut self.ents[tid];
            e.vruntime = e.vruntime.wrapping_sub(min);
        }
    }

    /// `post_init_entity_util_avg()` (v6.11) at `wake_up_new_task()`: only a fair task
    /// gets an initial util (half the spare capacity, scaled by its weight).
    pub(in crate::sim) fn post_init_entity_util_avg(&mut self, cpu: usize, tid: usize) {
        if self.threads[tid].class != Class::Fair {
            return;
        }
        let cfs_avg = self.rqs[cpu].cfs.avg;
        let (cap, weight) = (self.rqs[cpu].cap, self.ents[tid].load.weight);
        pelt::post_init_entity_util_avg(&mut self.ents[tid].avg, cap, &cfs_avg, weight);
    }
}
