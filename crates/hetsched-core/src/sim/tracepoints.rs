//! The tracepoints: where events go (`Out`: the metrics sink and the user's sinks, each
//! with the event groups it asked for) and the event builders the scheduler calls.
//!
//! With no trace written (no user sink) an event only feeds the metrics: the groups they
//! read are a constant ([`MetricsSink::INTEREST`]) and their `record` is inlined, so an
//! event of a group they ignore costs nothing at its emit site, and the builders of
//! optional events (the signals, fired on every PELT update) are always inlined, so that
//! what they cost when not traced is their test.

use crate::sim::*;

pub(in crate::sim) struct Out<'a, 'b> {
    pub(in crate::sim) metrics: MetricsSink,
    pub(in crate::sim) user: &'a mut [&'b mut dyn TraceSink],
    pub(in crate::sim) user_interest: Vec<Interest>,
    pub(in crate::sim) any: Interest,
    /// The first user sink's interest (`user_interest[0]`, default without one): with one
    /// sink, [`Out::emit`] tests it without walking the lists.
    pub(in crate::sim) first: Interest,
    /// An enqueue's or dequeue's `sched_util_est_cfs`, traced and not yet emitted: the
    /// PELT update that follows gives it first, with its own two events as one triple
    /// ([`Sim::trace_util_est_cfs`]). `None` whenever another event is emitted.
    pub(in crate::sim) held_ue: Option<TraceEvent<'static>>,
}

impl Out<'_, '_> {
    /// One event, to the metrics when they read its group and to each user sink that
    /// asked for it. Always inlined, as the metrics' `record`: at each emit site the
    /// group and the event's kind are known, so the metrics' part folds to the method of
    /// that event or to nothing.
    #[inline(always)]
    pub(in crate::sim) fn emit(
        &mut self,
        ctx: &Ctx<'_>,
        ev: &TraceEvent<'_>,
        group: fn(&Interest) -> bool,
    ) {
        debug_assert!(self.held_ue.is_none(), "an event emitted past a held one");
        if group(&MetricsSink::INTEREST) {
            self.metrics.record(ctx, ev);
        }
        match &mut *self.user {
            [] => {}
            // One sink (a trace file): its interest kept in `first`, no loop to set up.
            [s] => {
                debug_assert_eq!(self.user_interest, [self.first]);
                if group(&self.first) {
                    s.record(ctx, ev);
                }
            }
            sinks => {
                for (s, i) in sinks.iter_mut().zip(self.user_interest.iter()) {
                    if group(i) {
                        s.record(ctx, ev);
                    }
                }
            }
        }
    }
}

impl Out<'_, '_> {
    /// [`Out::emit`] of `first` then `second`, two events of `group` at one context: with
    /// one user sink, in one call ([`TraceSink::record_pair`]); with several, each event
    /// to each sink in turn, as two [`Out::emit`]s. Each sink gets the same calls' events
    /// in the same order as from two [`Out::emit`]s (the metrics, which read neither
    /// sink's output, take both before the user sink).
    #[inline(always)]
    pub(in crate::sim) fn emit_pair(
        &mut self,
        ctx: &Ctx<'_>,
        first: &TraceEvent<'_>,
        second: &TraceEvent<'_>,
        group: fn(&Interest) -> bool,
    ) {
        match &mut *self.user {
            [s] => {
                debug_assert_eq!(self.user_interest, [self.first]);
                if group(&MetricsSink::INTEREST) {
                    self.metrics.record(ctx, first);
                    self.metrics.record(ctx, second);
                }
                if group(&self.first) {
                    s.record_pair(ctx, first, second);
                }
            }
            _ => {
                self.emit(ctx, first, group);
                self.emit(ctx, second, group);
            }
        }
    }
}

impl Out<'_, '_> {
    /// [`Out::emit`] of `first`, then [`Out::emit_pair`] of `second` and `third`: three
    /// events of `group` at one context, with one user sink in one call
    /// ([`TraceSink::record_triple`]). Each sink gets the same events in the same order
    /// as from those two calls (the metrics take all three before the user sink).
    #[inline(always)]
    pub(in crate::sim) fn emit_triple(
        &mut self,
        ctx: &Ctx<'_>,
        first: &TraceEvent<'_>,
        second: &TraceEvent<'_>,
        third: &TraceEvent<'_>,
        group: fn(&Interest) -> bool,
    ) {
        match &mut *self.user {
            [s] => {
                debug_assert_eq!(self.user_interest, [self.first]);
                if group(&MetricsSink::INTEREST) {
                    self.metrics.record(ctx, first);
                    self.metrics.record(ctx, second);
                    self.metrics.record(ctx, third);
                }
                if group(&self.first) {
                    s.record_triple(ctx, first, second, third);
                }
            }
            _ => self.emit_triple_each(ctx, first, second, third, group),
        }
    }

    /// [`Out::emit_triple`] to no user sink or several: [`Out::emit`] of `first`, then
    /// [`Out::emit_pair`] of the others. Out of line, as [`Out::emit_cold`].
    #[inline(never)]
    fn emit_triple_each(
        &mut self,
        ctx: &Ctx<'_>,
        first: &TraceEvent<'_>,
        second: &TraceEvent<'_>,
        third: &TraceEvent<'_>,
        group: fn(&Interest) -> bool,
    ) {
        self.emit(ctx, first, group);
        self.emit_pair(ctx, second, third, group);
    }

    /// [`Out::emit`] out of line, for a rare event at a site in a hot function (whose
    /// other paths the inlined emit's code would cost registers).
    #[inline(never)]
    pub(in crate::sim) fn emit_cold(
        &mut self,
        ctx: &Ctx<'_>,
        ev: &TraceEvent<'_>,
        group: fn(&Interest) -> bool,
    ) {
        self.emit(ctx, ev, group);
    }
}

impl<'s> Out<'_, '_> {
    /// [`Out::emit`] of the event `build` makes (its context and the event), built where
    /// a consumer takes it: with no user sink, only in the metrics' branch, where the
    /// inlined `record` leaves out what the metrics do not read (all of an event they
    /// ignore, such as `sched_waking`; the context's comm and pid, the task's prio);
    /// with user sinks, once, then [`Out::emit`]. The same events reach the same sinks
    /// in the same order as with [`Out::emit`]; `build` only reads the engine's state.
    #[inline(always)]
    pub(in crate::sim) fn emit_with(
        &mut self,
        group: fn(&Interest) -> bool,
        build: impl FnOnce() -> (Ctx<'s>, TraceEvent<'s>),
    ) {
        if self.user.is_empty() {
            if group(&MetricsSink::INTEREST) {
                let (ctx, ev) = build();
                self.metrics.record(&ctx, &ev);
            }
            return;
        }
        let (ctx, ev) = build();
        self.emit(&ctx, &ev, group);
    }
}

impl<'s> Out<'_, '_> {
    /// [`Out::emit_with`] of an event the metrics take without its being built: with no
    /// user sink, `metrics` hands the metrics sink the fields it reads of the event, as
    /// its `record` of the event `build` makes would (for `sched_switch`, the pids, and
    /// the comms only for a task the sink meets for the first time), and `build` is not
    /// called; with user sinks, [`Out::emit_with`].
    #[inline(always)]
    pub(in crate::sim) fn emit_with_metrics(
        &mut self,
        group: fn(&Interest) -> bool,
        metrics: impl FnOnce(&mut MetricsSink),
        build: impl FnOnce() -> (Ctx<'s>, TraceEvent<'s>),
    ) {
        if self.user.is_empty() {
            if group(&MetricsSink::INTEREST) {
                metrics(&mut self.metrics);
            }
            return;
        }
        let (ctx, ev) = build();
        self.emit(&ctx, &ev, group);
    }
}

pub(in crate::sim) fn g_sched(i: &Interest) -> bool {
    i.sched
}
pub(in crate::sim) fn g_power(i: &Interest) -> bool {
    i.power
}
pub(in crate::sim) fn g_signals(i: &Interest) -> bool {
    i.signals
}
pub(in crate::sim) fn g_markers(i: &Interest) -> bool {
    i.markers
}
pub(in crate::sim) fn g_overutilized(i: &Interest) -> bool {
    i.overutilized
}

/// [`Sim::tref`] of the thread `t`: its comm is `comm0`, `comm` once it renamed itself
/// (kept so: no test of `renamed`).
#[inline]
pub(in crate::sim) fn task_ref(t: &Thread) -> TaskRef<'_> {
    debug_assert!(!t.renamed || t.comm0 == t.comm, "a stale comm0");
    TaskRef {
        comm: &t.comm0,
        pid: t.pid,
        prio: t.prio(),
    }
}

/// [`Sim::ctx`] of `cpu` running its idle task, for a caller that knows it does.
#[inline]
pub(in crate::sim) fn idle_ctx(cpu: usize, now: Nanos) -> Ctx<'static> {
    Ctx {
        ts: now,
        cpu: cpu as u32,
        comm: "<idle>",
        pid: 0,
    }
}

/// [`Sim::ctx`] of `cpu` running thread `t`.
#[inline(always)]
pub(in crate::sim) fn thread_ctx(t: &Thread, cpu: usize, now: Nanos) -> Ctx<'_> {
    Ctx {
        ts: now,
        cpu: cpu as u32,
        comm: &t.comm,
        pid: t.pid,
    }
}

impl<'w> Sim<'w> {
    /// The context of an event on `cpu`: its current task's comm and pid, or the idle
    /// task's. Built without a panicking index (`cpu` is a CPU and `rq->curr` a thread:
    /// the look-ups cannot fail, debug builds assert it), so that where the event's
    /// consumer reads no field of it (the metrics of `sched_waking`) the optimiser drops
    /// the look-ups with the context.
    pub(in crate::sim) fn ctx(&self, cpu: usize, now: Nanos) -> Ctx<'_> {
        debug_assert!(cpu < self.rqs.len());
        let curr = self.rqs.get(cpu).and_then(|rq| rq.curr);
        debug_assert!(curr.is_none_or(|t| t < self.threads.len()));
        match curr.and_then(|t| self.threads.get(t)) {
            Some(t) => thread_ctx(t, cpu, now),
            None => idle_ctx(cpu, now),
        }
    }

    /// The task as tracepoints see it: `rt-app` until the thread renamed itself.
    pub(in crate::sim) fn tref(&self, tid: usize) -> TaskRef<'_> {
        task_ref(&self.threads[tid])
    }

    pub(in crate::sim) fn marker(
        &self,
        out: &mut Out<'_, '_>,
        tid: usize,
        now: Nanos,
        m: RtappMarker<'_>,
    ) {
        if !out.any.markers || self.uthreads[tid].system {
            return;
        }
        let t = &self.threads[tid];
        let ctx = Ctx {
            ts: now,
            cpu: t.cpu as u32,
            comm: &t.comm,
            pid: t.pid,
        };
        out.emit(&ctx, &TraceEvent::Print(m), g_markers);
    }

    /// `sched_pelt_se` of `tid` if `se`, then `sched_pelt_cfs` of `cpu`'s cfs_rq if `cfs`
    /// (the signals `___update_load_avg()` updated), with one [`Ctx`] for both: `curr`
    /// does not change between the two. An enqueue's or dequeue's `sched_util_est_cfs`
    /// held in `out` ([`Sim::trace_util_est_cfs`]) goes first, at the same context, and
    /// with both PELT events as one triple (the held event's other cases, rare, go
    /// through [`Out::emit_cold`]).
    #[inline(always)]
    pub(in crate::sim) fn trace_pelt_se_cfs(
        &self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        se: bool,
        cfs: bool,
    ) {
        if !out.any.signals || !self.s.options.trace.signals {
            return;
        }
        let ue = out.held_ue.take();
        if !(se || cfs) {
            if let Some(ue) = &ue {
                out.emit_cold(&self.ctx(cpu, now), ue, g_signals);
            }
            return;
        }
        let ctx = self.ctx(cpu, now);
        let se_ev = if se {
            let a = &self.ents[tid].avg;
            Some(TraceEvent::SchedPeltSe {
                cpu: cpu as u32,
                task: self.tref(tid),
                load: a.load_avg,
                rbl_load: a.runnable_avg,
                util: a.util_avg,
                update_time: a.last_update_time,
            })
        } else {
            None
        };
        if let Some(ue) = &ue {
            if let (Some(se_ev), true) = (&se_ev, cfs) {
                let ev = self.pelt_cfs_event(cpu);
                out.emit_triple(&ctx, ue, se_ev, &ev, g_signals);
                return;
            }
            out.emit_cold(&ctx, ue, g_signals);
        }
        if cfs {
            let ev = self.pelt_cfs_event(cpu);
            match &se_ev {
                Some(se_ev) => out.emit_pair(&ctx, se_ev, &ev, g_signals),
                None => out.emit(&ctx, &ev, g_signals),
            }
        } else if let Some(se_ev) = &se_ev {
            out.emit(&ctx, se_ev, g_signals);
        }
    }

    /// `sched_pelt_cfs` of `cpu`'s cfs_rq.
    #[inline(always)]
    fn pelt_cfs_event(&self, cpu: usize) -> TraceEvent<'static> {
        let a = &self.rqs[cpu].cfs.avg;
        TraceEvent::SchedPeltCfs {
            cpu: cpu as u32,
            load: a.load_avg,
            rbl_load: a.runnable_avg,
            util: a.util_avg,
            update_time: a.last_update_time,
        }
    }

    #[inline(always)]
    pub(in crate::sim) fn trace_pelt_cfs(&self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        if !out.any.signals || !self.s.options.trace.signals {
            return;
        }
        let a = &self.rqs[cpu].cfs.avg;
        let ev = TraceEvent::SchedPeltCfs {
            cpu: cpu as u32,
            load: a.load_avg,
            rbl_load: a.runnable_avg,
            util: a.util_avg,
            update_time: a.last_update_time,
        };
        out.emit(&self.ctx(cpu, now), &ev, g_signals);
    }

    /// `sched_util_est_se_tp` of `tid` (`util_est_update()` at its `done:`).
    #[inline(always)]
    pub(in crate::sim) fn trace_util_est_se(
        &self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        if !out.any.signals || !self.s.options.trace.signals || !self.s.options.pelt.util_est {
            return;
        }
        let ctx = self.ctx(cpu, now);
        let a = &self.ents[tid].avg;
        let ue = pelt::task_util_est_raw(&a.util_est, self.ue_ver);
        let ewma = u64::from(a.util_est.ewma & !pelt::UTIL_AVG_UNCHANGED);
        let ev = TraceEvent::SchedUtilEstSe {
            cpu: cpu as u32,
            task: self.tref(tid),
            enqueued: ue,
            ewma,
            util: a.util_avg,
        };
        out.emit(&ctx, &ev, g_signals);
    }

    /// `sched_util_est_cfs_tp` of `cpu`'s cfs_rq (`util_est_enqueue()`/`util_est_dequeue()`),
    /// before the enqueue's or dequeue's [`Sim::update_load_avg`]`(cpu, tid, flags)`:
    /// emitted if that update will have nothing to do ([`Sim::load_avg_unchanged`]: it
    /// emits nothing), held in `out` (`held_ue`) otherwise, for the update's
    /// tracepoints to give first, with its PELT events as one triple
    /// ([`Sim::trace_pelt_se_cfs`]). The caller's `update_curr()` between the two emits
    /// nothing and changes nothing `load_avg_unchanged()` reads, and the context is the
    /// same (`curr` does not change).
    #[inline(always)]
    pub(in crate::sim) fn trace_util_est_cfs(
        &self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        flags: u32,
        now: Nanos,
    ) {
        if !out.any.signals || !self.s.options.trace.signals || !self.s.options.pelt.util_est {
            return;
        }
        self.trace_util_est_cfs_traced(out, cpu, tid, flags, now);
    }

    /// [`Sim::trace_util_est_cfs`] when traced.
    #[inline(always)]
    fn trace_util_est_cfs_traced(
        &self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        flags: u32,
        now: Nanos,
    ) {
        let c = &self.rqs[cpu].cfs.avg;
        let ue = pelt::cfs_rq_util_est(c);
        let ev = TraceEvent::SchedUtilEstCfs {
            cpu: cpu as u32,
            enqueued: ue,
            ewma: ue,
            util: c.util_avg,
        };
        if self.load_avg_unchanged(cpu, tid, flags) {
            out.emit(&self.ctx(cpu, now), &ev, g_signals);
        } else {
            out.held_ue = Some(ev);
        }
    }

    /// `sched_cpu_capacity_tp` after the balancer's `update_cpu_capacity()` of `cpu`, if
    /// it ran (the kernel fires it there only; the engine also writes every CPU's at the
    /// start of the trace).
    pub(in crate::sim) fn trace_cpu_capacity_update(
        &self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        now: Nanos,
    ) {
        if self.rqs[cpu].cpu_capacity_updated.replace(false) {
            self.trace_capacity(out, cpu, now);
        }
    }

    /// `sched_cpu_capacity` of `cpu`: `capacity_of()`, the original capacity and the
    /// current one (`capacity_orig × f / fmax`).
    #[inline(always)]
    pub(in crate::sim) fn trace_capacity(&self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        if !out.any.signals || !self.s.options.trace.signals {
            return;
        }
        let rq = &self.rqs[cpu];
        let ev = TraceEvent::SchedCpuCapacity {
            cpu: cpu as u32,
            capacity: rq.cpu_capacity.get(),
            capacity_orig: rq.cap,
            capacity_curr: rq.cap * rq.freq_khz / rq.max_freq_khz.max(1),
        };
        out.emit(&self.ctx(cpu, now), &ev, g_signals);
    }

    /// `trace_sched_migrate_task(p, to)` of task `tid` moving from `from` to `to`, emitted
    /// on `on`. Inline at its two callers (a wake-up's and `detach_task()`'s), where
    /// without a user sink only the metrics' count reads it (out of line it saved six
    /// registers at each call).
    #[inline(always)]
    pub(in crate::sim) fn trace_migrate(
        &self,
        out: &mut Out<'_, '_>,
        tid: usize,
        from: usize,
        to: usize,
        on: usize,
        now: Nanos,
    ) {
        if out.any.sched {
            out.emit_with(g_sched, || {
                let ev = TraceEvent::SchedMigrateTask {
                    task: self.tref(tid),
                    orig_cpu: from as u32,
                    dest_cpu: to as u32,
                };
                (self.ctx(on, now), ev)
            });
        }
    }
}
