//! The deadline class's hooks (kernel/sched/deadline.c, v6.11): the EDF queue, the CBS
//! bandwidth enforcement (`update_curr_dl()`, `dl_task_timer()`), the DL PELT signal at
//! its hooks, a task entering the class (`switched_to_dl()`), and a
//! reduced `select_task_rq_dl()` (no cpudl).

use crate::sim::*;

impl<'w> Sim<'w> {
    /// `update_curr_dl()`: charges the running deadline task's budget; throttles it when
    /// spent (`dl_runtime_exceeded()` → `start_dl_timer()`).
    pub(in crate::sim) fn update_curr_dl(&mut self, cpu: usize, tid: usize, now: Nanos) {
        let dt = now.saturating_sub(self.rqs[cpu].seg_start_dl);
        self.rqs[cpu].seg_start_dl = now;
        let t = &mut self.threads[tid];
        if t.kthread.is_some() {
            return; // update_curr_dl_se(): dl_entity_is_special() (SCHED_FLAG_SUGOV)
        }
        t.dl.runtime -= dt as i64;
        if t.dl.runtime <= 0 && !t.dl.throttled && t.state == TState::Runnable {
            t.dl.throttled = true;
            t.dl_gen = t.dl_gen.wrapping_add(1);
            let (gen, at) = (t.dl_gen, t.dl.next_period().max(now));
            let key = t.dl_key;
            self.rqs[cpu].dl.dequeue(tid, key);
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
        self.threads[tid].dl_key = self.rqs[cpu].dl.enqueue(tid, d);
        self.refresh_view(cpu);
        if self.rqs[cpu].curr != Some(tid) {
            self.wakeup_preempt(cpu, tid);
        }
    }

    /// `enqueue_task_dl()`: ENQUEUE_WAKEUP → `update_dl_entity()`; a new task, or one
    /// restored (ENQUEUE_RESTORE, entering the class) with its deadline in the past, starts
    /// a period (`setup_new_dl_entity()`); `add_running_bw()` → `cpufreq_update_util()`.
    pub(in crate::sim) fn enqueue_task_dl(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        flags: u32,
    ) {
        self.threads[tid].enqueue_migrated = false;
        let initial = flags & super::ENQUEUE_INITIAL != 0;
        let restore = flags & super::ENQUEUE_RESTORE != 0;
        let t = &mut self.threads[tid];
        if initial || t.dl.deadline == 0 || (restore && t.dl.deadline < now) {
            t.dl.new_period(now);
        } else if t.state != TState::Runnable {
            t.dl.update_at_wakeup(now);
        }
        let d = t.dl.deadline;
        // enqueue_dl_entity(): a task still throttled waits for its replenishment timer
        // (`dl_task_timer()`, Ev::DlReplenish) out of the tree (`if (dl_se->dl_throttled &&
        // start_dl_timer(dl_se)) return;`)
        if !t.dl.throttled || initial {
            t.dl_key = self.rqs[cpu].dl.enqueue(tid, d);
        }
        t.state = TState::Runnable;
        t.cpu = cpu;
        self.refresh_view(cpu);
        self.add_nr_running(cpu);
        if self.threads[tid].kthread.is_none() {
            // add_running_bw() (not for a special entity) → cpufreq_update_util()
            self.cpufreq_update_util(out, cpu, 0, now);
        }
    }

    /// `switched_to_dl()` (kernel/sched/deadline.c, v6.11): the running task starts the DL
    /// signal (its past counted as not DL); a queued one preempts curr unless an earlier
    /// deadline runs (DL push is not modelled); a sleeping one waits for its wake-up.
    pub(in crate::sim) fn switched_to_dl(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        if self.threads[tid].state != TState::Runnable {
            return;
        }
        match self.rqs[cpu].curr {
            Some(c) if c == tid => {
                self.update_dl_pelt(out, cpu, false, now);
            }
            Some(c) if self.threads[c].class == Class::Dl => self.wakeup_preempt_dl(cpu, c, tid),
            _ => self.set_resched(cpu),
        }
    }

    /// `dequeue_task_dl()`; `sub_running_bw()` → `cpufreq_update_util()`.
    pub(in crate::sim) fn dequeue_task_dl(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        let key = self.threads[tid].dl_key;
        self.rqs[cpu].dl.dequeue(tid, key);
        self.refresh_view(cpu);
        if self.threads[tid].kthread.is_none() {
            // sub_running_bw() (not for a special entity) → cpufreq_update_util()
            self.cpufreq_update_util(out, cpu, 0, now);
        }
    }

    /// `wakeup_preempt_dl()`: an earlier deadline preempts.
    pub(in crate::sim) fn wakeup_preempt_dl(&mut self, cpu: usize, curr: usize, tid: usize) {
        if self.threads[tid].dl.deadline < self.threads[curr].dl.deadline {
            self.set_resched(cpu);
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

    /// `select_task_rq_dl()` (kernel/sched/deadline.c, v6.11), reduced: stay on the
    /// previous CPU unless what runs there would keep the task waiting (an earlier
    /// deadline); then the allowed CPU running the lowest-priority work (idle first),
    /// preferring the previous CPU, then the lowest number. No cpudl, no capacity
    /// fitness, no push/pull.
    pub(in crate::sim) fn select_task_rq_dl(&self, tid: usize, prev: usize) -> usize {
        let aff = self.threads[tid].affinity;
        let p = &self.threads[tid];
        let blocked = |cpu: usize| -> bool {
            let rq = &self.rqs[cpu];
            match p.class {
                Class::Dl => rq.dl.earliest().is_some_and(|d| d <= p.dl.deadline),
                _ => {
                    rq.dl.nr_running() > 0
                        || rq.curr.is_some_and(|c| {
                            let ct = &self.threads[c];
                            ct.class != Class::Fair
                                && (ct.eff_prio <= p.eff_prio || ct.affinity.weight() < 2)
                        })
                }
            }
        };
        if aff.contains(prev) && !blocked(prev) {
            return prev;
        }
        let best = aff
            .iter()
            .filter(|&c| c < self.p.nr_cpus())
            .max_by_key(|&c| (self.running_prio(c), c == prev, std::cmp::Reverse(c)));
        match best {
            Some(c) if self.running_prio(c) > p.eff_prio || !aff.contains(prev) => c,
            _ => prev,
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

    /// `task_dead_dl()`: an exiting SCHED_DEADLINE task's bandwidth leaves the root domain.
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
/// `BW_SHIFT`: bandwidths are fractions of `1 << BW_SHIFT`.
const BW_SHIFT: u32 = 20;
/// `sysctl_sched_dl_period_min` (µs).
const DL_PERIOD_MIN_US: u64 = 100;
/// `sysctl_sched_dl_period_max` (µs): `1 << 22`.
const DL_PERIOD_MAX_US: u64 = 1 << 22;

/// `to_ratio(period, runtime)` (kernel/sched/core.c): `runtime << BW_SHIFT / period`.
fn to_ratio(period: u64, runtime: u64) -> u64 {
    if period == 0 {
        return 0;
    }
    (runtime << BW_SHIFT) / period
}
