//! The PELT signals as the scheduler updates them: `update_load_avg()` and
//! `update_blocked_averages()` (kernel/sched/fair.c, v6.11) and the RT/DL rq signals
//! (`update_rt_rq_load_avg()` / `update_dl_rq_load_avg()`, kernel/sched/pelt.c). The
//! arithmetic is crate::pelt's.

use crate::sim::*;

impl<'w> Sim<'w> {
    /// `update_rt_rq_load_avg()` / `update_dl_rq_load_avg()` (kernel/sched/pelt.c, v6.11)
    /// of `cpu`'s RT or DL signal at its PELT clock, with the `pelt_rt_tp` / `pelt_dl_tp`
    /// tracepoint (`sched_pelt_rt` / `sched_pelt_dl`) when the signal was updated, by
    /// the caller ([`Sim::update_rt_pelt`], [`Sim::update_dl_pelt`],
    /// [`Sim::update_blocked_averages`]): returns whether it was.
    ///
    /// The common case, a signal that is not running and whose sums and averages are all
    /// zero (a CPU that has not run such a task for a while), is inline: its update only
    /// moves its clock ([`pelt::SchedAvg::age_null`], what `update_rt_rq_load_avg()` does
    /// with it) and it stays zero, so nothing schedutil or the balancer reads changes. The
    /// others are [`Sim::update_class_pelt_full`], out of line.
    #[inline(always)]
    pub(in crate::sim) fn update_class_pelt(
        &mut self,
        cpu: usize,
        rt: bool,
        running: bool,
    ) -> bool {
        let rq = &mut self.rqs[cpu];
        let pnow = rq.clock.now();
        let a = if rt { &mut rq.avg_rt } else { &mut rq.avg_dl };
        if running || !a.is_null() {
            return self.update_class_pelt_full(cpu, rt, running);
        }
        a.age_null(pnow)
    }

    /// [`Sim::update_class_pelt`] of a signal that is running or not all zero.
    #[inline(never)]
    fn update_class_pelt_full(&mut self, cpu: usize, rt: bool, running: bool) -> bool {
        let rq = &mut self.rqs[cpu];
        let pnow = rq.clock.now();
        let a = if rt { &mut rq.avg_rt } else { &mut rq.avg_dl };
        let was_null = a.is_null();
        let updated = if rt {
            pelt::update_rt_rq_load_avg(a, pnow, running)
        } else {
            pelt::update_dl_rq_load_avg(a, pnow, running)
        };
        // a signal that stays all zero changes nothing schedutil or the balancer reads
        if updated && !(was_null && a.is_null()) {
            self.rq_util_changed(cpu);
        }
        updated
    }

    /// The `sched_pelt_rt` tracepoint of `cpu`'s RT signal if `rt`, then the
    /// `sched_pelt_dl` of its DL signal if `dl`, at one context: the two of
    /// `update_blocked_averages()` as a pair ([`Out::emit_pair`]). Each event reads only
    /// its own signal, so the RT one built after the DL update is the one the kernel
    /// writes before it.
    #[inline(never)]
    fn trace_class_pelt(&self, out: &mut Out<'_, '_>, cpu: usize, rt: bool, dl: bool, now: Nanos) {
        let rq = &self.rqs[cpu];
        let cpu32 = cpu as u32;
        let (a, d) = (&rq.avg_rt, &rq.avg_dl);
        let rt_ev = TraceEvent::SchedPeltRt {
            cpu: cpu32,
            load: a.load_avg,
            rbl_load: a.runnable_avg,
            util: a.util_avg,
        };
        let dl_ev = TraceEvent::SchedPeltDl {
            cpu: cpu32,
            load: d.load_avg,
            rbl_load: d.runnable_avg,
            util: d.util_avg,
        };
        let ctx = self.ctx(cpu, now);
        match (rt, dl) {
            (true, true) => out.emit_pair(&ctx, &rt_ev, &dl_ev, g_signals),
            (true, false) => out.emit(&ctx, &rt_ev, g_signals),
            _ => out.emit(&ctx, &dl_ev, g_signals),
        }
    }

    /// The RT signal of `cpu` ([`Sim::update_class_pelt`]), with its tracepoint.
    #[inline(always)]
    pub(in crate::sim) fn update_rt_pelt(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        running: bool,
        now: Nanos,
    ) -> bool {
        let updated = self.update_class_pelt(cpu, true, running);
        if updated && out.any.signals && self.s.options.trace.signals {
            self.trace_class_pelt(out, cpu, true, false, now);
        }
        updated
    }

    /// The DL signal of `cpu` ([`Sim::update_class_pelt`]), with its tracepoint.
    #[inline(always)]
    pub(in crate::sim) fn update_dl_pelt(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        running: bool,
        now: Nanos,
    ) -> bool {
        let updated = self.update_class_pelt(cpu, false, running);
        if updated && out.any.signals && self.s.options.trace.signals {
            self.trace_class_pelt(out, cpu, false, true, now);
        }
        updated
    }

    pub(in crate::sim) fn cfs_state(&self, cpu: usize) -> CfsRqState {
        let c = &self.rqs[cpu].cfs;
        CfsRqState {
            load_weight_sum: c.load_weight,
            h_nr_runnable: u64::from(c.nr_running),
            curr_running: c.curr.is_some(),
        }
    }

    /// Whether [`Sim::update_load_avg`]`(cpu, tid, flags)` has nothing to do, exactly: less
    /// than one PELT unit (1024 ns) elapsed for both the entity and the cfs_rq, no removed
    /// load and nothing to attach or detach, so `___update_load_sum()` would return at once
    /// for both and nothing changes. Inlined where a caller tests it first.
    #[inline(always)]
    pub(in crate::sim) fn load_avg_unchanged(&self, cpu: usize, tid: usize, flags: u32) -> bool {
        let c = &self.rqs[cpu].cfs;
        let pnow = self.rqs[cpu].clock.now();
        let e = &self.ents[tid].avg;
        let attach = flags & DO_ATTACH != 0 && e.last_update_time == 0;
        !attach
            && flags & DO_DETACH == 0
            && c.removed.nr == 0
            && e.last_update_time != 0
            && pnow.wrapping_sub(e.last_update_time) < 1024
            && pnow.wrapping_sub(c.avg.last_update_time) < 1024
    }

    /// `update_load_avg(cfs_rq, se, flags)` for task `tid` on `cpu`, tracing what changed.
    /// Returns whether the cfs_rq's signal changed (decayed, attached or detached): then
    /// `cpu` was marked changed ([`Sim::rq_util_changed`]) before the governor's update
    /// (`cfs_rq_util_change()`), so a caller that changed the rq's util_est just before
    /// need not mark it again (the enqueue and dequeue, [`Sim::enqueue_fair`]).
    pub(in crate::sim) fn update_load_avg(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        flags: u32,
        now: Nanos,
    ) -> bool {
        if self.load_avg_unchanged(cpu, tid, flags) {
            // A util_est event is held only for an update that reaches its tracepoints.
            debug_assert!(out.held_ue.is_none(), "a held util_est event");
            return false;
        }
        let pnow = self.rqs[cpu].clock.now();
        let cfs_state = self.cfs_state(cpu);
        let e = &self.ents[tid];
        let se_state = SeState {
            on_rq: e.on_rq,
            runnable: e.on_rq,
            running: self.rqs[cpu].cfs.curr == Some(tid),
            weight: e.load.weight,
        };
        let before_se = self.ents[tid].avg.last_update_time;
        let before_cfs = self.rqs[cpu].cfs.avg.last_update_time;
        let rq = &mut self.rqs[cpu];
        let e = &mut self.ents[tid];
        let util_change = pelt::update_load_avg(
            pnow,
            &mut rq.cfs.avg,
            &mut rq.cfs.removed,
            cfs_state,
            &mut e.avg,
            se_state,
            flags,
        );
        // the PELT tracepoints' test first: without a signals sink (the common case) the
        // two clocks are not compared
        if out.any.signals && self.s.options.trace.signals {
            let se = self.ents[tid].avg.last_update_time != before_se;
            let cfs = self.rqs[cpu].cfs.avg.last_update_time != before_cfs;
            self.trace_pelt_se_cfs(out, cpu, tid, now, se, cfs);
        }
        if util_change {
            // the averages change only when they decayed, or at attach or detach
            self.rq_util_changed(cpu);
            // cfs_rq_util_change() -> cpufreq_update_util(rq, 0), after the PELT
            // tracepoints fired in ___update_load_avg()
            self.cpufreq_update_util(out, cpu, 0, now);
        }
        util_change
    }

    /// `update_other_load_avgs()` + the blocked cfs_rq decay of an rq.
    pub(in crate::sim) fn update_blocked_averages(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        now: Nanos,
    ) {
        let st = self.cfs_state(cpu);
        // update_other_load_avgs(): the running class's signal counts as running
        let class = self.rqs[cpu].curr.map(|c| self.threads[c].class);
        // the two signals' tracepoints as a pair, after both updates (nothing between
        // them writes an event)
        let rt = self.update_class_pelt(cpu, true, class == Some(Class::Rt));
        let dl = self.update_class_pelt(cpu, false, class == Some(Class::Dl));
        if (rt || dl) && out.any.signals && self.s.options.trace.signals {
            self.trace_class_pelt(out, cpu, rt, dl, now);
        }
        let mut decayed = rt | dl;
        let rq = &mut self.rqs[cpu];
        let pnow = rq.clock.now();
        let before = rq.cfs.avg.last_update_time;
        let cfs_decayed = pelt::update_cfs_rq_load_avg(
            &mut rq.cfs.avg,
            &mut rq.cfs.removed,
            pnow,
            st.load_weight_sum,
            st.h_nr_runnable,
            st.curr_running,
        );
        if cfs_decayed {
            self.rq_util_changed(cpu);
        }
        decayed |= cfs_decayed;
        if self.rqs[cpu].cfs.avg.last_update_time != before {
            self.trace_pelt_cfs(out, cpu, now);
        }
        // update_blocked_load_tick(), update_blocked_load_status(): nothing left to decay
        // once the cfs_rq (cfs_rq_has_blocked()) and the other classes'
        // (others_have_blocked()) averages are zero
        let jiffies = self.jiffies(now);
        let rq = &mut self.rqs[cpu];
        rq.last_blocked_load_update_tick = jiffies;
        let blocked = rq.cfs.avg.load_avg != 0
            || rq.cfs.avg.util_avg != 0
            || rq.avg_rt.util_avg != 0
            || rq.avg_dl.util_avg != 0;
        if !blocked {
            rq.has_blocked_load = false;
        }
        if decayed {
            self.cpufreq_update_util(out, cpu, 0, now);
        }
    }
}
