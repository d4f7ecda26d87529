//! The simulated machine: the event loop, CPUs doing a task's work at their current
//! frequency, and the periodic tick's timer (`sched_skew_tick=0`: one grid for all CPUs).
//! Not kernel code: what the hardware and the clockevents core do.

use crate::sim::*;

impl<'w> Sim<'w> {
    /// Charges the progress of curr's op since the last accounting.
    pub(in crate::sim) fn account_op(&mut self, cpu: usize, now: Nanos) {
        let rq = &mut self.rqs[cpu];
        let Some(tid) = rq.curr else {
            return;
        };
        let dt = now.saturating_sub(rq.seg_start);
        rq.seg_start = now;
        if dt == 0 {
            return;
        }
        charge_op(rq, &mut self.uthreads[tid].op, dt);
    }

    /// Curr starts a compute op at `now`: accounting starts, its completion is armed.
    pub(in crate::sim) fn start_op(&mut self, cpu: usize, now: Nanos) {
        self.rqs[cpu].seg_start = now;
        self.arm_op(cpu, now);
    }

    /// [`Sim::start_op`] of the op `op` that curr, `tid`, was just given by its program
    /// (a `run` or `runtime` event): the same accounting start and completion event,
    /// with the op's duration from `op` itself, where [`Sim::arm_op`] reads curr and its
    /// op again (debug builds check that they are these).
    #[inline(always)]
    pub(in crate::sim) fn start_program_op(&mut self, cpu: usize, tid: usize, op: Op, now: Nanos) {
        let rq = &mut self.rqs[cpu];
        debug_assert_eq!(rq.curr, Some(tid));
        debug_assert_eq!(self.uthreads[tid].op, op);
        rq.seg_start = now;
        rq.op_gen = rq.op_gen.wrapping_add(1);
        let gen = rq.op_gen;
        let at = op_done_at(rq, &op, now);
        self.q.push(
            at,
            Ev::OpDone {
                cpu: cpu as u32,
                gen,
            },
        );
    }

    /// Arms the completion event of curr's op (on one borrow of the rq).
    pub(in crate::sim) fn arm_op(&mut self, cpu: usize, now: Nanos) {
        let rq = &mut self.rqs[cpu];
        let Some(tid) = rq.curr else {
            return;
        };
        rq.op_gen = rq.op_gen.wrapping_add(1);
        let gen = rq.op_gen;
        let at = op_done_at(rq, &self.uthreads[tid].op, now);
        self.q.push(
            at,
            Ev::OpDone {
                cpu: cpu as u32,
                gen,
            },
        );
    }

    pub(in crate::sim) fn ensure_tick(&mut self, cpu: usize, now: Nanos) {
        if self.tick_pending.contains(cpu) {
            return;
        }
        let tick = self.s.tick_ns;
        let next = (now / tick + 1) * tick;
        if self.tick_pending.is_empty() {
            self.tick_at = next;
        }
        debug_assert_eq!(self.tick_at, next, "ticks share one grid point");
        self.tick_pending.set(cpu);
    }

    /// Runs every armed tick at `tick_at`, in CPU order, each followed by the
    /// reschedules it asked for.
    pub(in crate::sim) fn run_ticks(&mut self, out: &mut Out<'_, '_>) {
        let now = self.tick_at;
        self.set_clock(now);
        let due = self.tick_pending;
        self.tick_pending = CpuSet::EMPTY;
        self.tick_at = now + self.s.tick_ns;
        self.q.advance_to(now);
        self.q.count_external(due.weight() as u64);
        for cpu in due.iter() {
            self.tick(out, cpu, now);
            self.drain_resched(out, now);
        }
    }

    /// Runs `schedule()` on every CPU marked `need_resched`, the last marked first. Inline:
    /// after about a third of the events nothing is marked, and that test costs less than
    /// a call.
    #[inline(always)]
    pub(in crate::sim) fn drain_resched(&mut self, out: &mut Out<'_, '_>, now: Nanos) {
        if !self.resched.is_empty() {
            self.schedule_marked(out, now);
        }
    }

    #[inline(never)]
    fn schedule_marked(&mut self, out: &mut Out<'_, '_>, now: Nanos) {
        while let Some(cpu) = self.resched.pop() {
            self.rqs[cpu].need_resched = false;
            self.schedule(out, cpu, now);
        }
    }

    pub(in crate::sim) fn run(&mut self, out: &mut Out<'_, '_>) {
        let n = self.p.nr_cpus();
        self.set_clock(self.t0);
        for s in out.user.iter_mut() {
            s.begin(n, self.t0);
        }
        out.metrics.begin(n, self.t0);
        // Frequencies are set by the governor before the workload starts.
        for cpu in 0..n {
            let f = self.rqs[cpu].freq_khz;
            let fmax = self.rqs[cpu].max_freq_khz.max(1);
            self.rqs[cpu].freq_scale = if self.s.options.pelt.frequency_invariance {
                (f << 10) / fmax
            } else {
                1024
            };
            if out.any.power {
                let ev = TraceEvent::CpuFrequency {
                    cpu_id: cpu as u32,
                    state: f,
                };
                out.emit(&self.ctx(cpu, self.t0), &ev, g_power);
                let ev = TraceEvent::CpuIdle {
                    cpu_id: cpu as u32,
                    state: 0,
                };
                out.emit(&self.ctx(cpu, self.t0), &ev, g_power);
            }
            self.trace_capacity(out, cpu, self.t0);
        }
        // rt-app's main thread writes its own markers (user/main.rs); without it they are
        // written at the start from CPU 0
        if self.markers.main && !self.s.options.rtapp.main_thread {
            let ctx = Ctx {
                ts: self.t0,
                cpu: 0,
                comm: "rt-app",
                pid: PID_BASE,
            };
            out.emit(
                &ctx,
                &TraceEvent::Print(RtappMarker::Main {
                    event: "start",
                    data: 0,
                }),
                g_markers,
            );
            out.emit(
                &ctx,
                &TraceEvent::Print(RtappMarker::Main {
                    event: "clock_ref",
                    data: (self.t0 / 1000) as i64,
                }),
                g_markers,
            );
        }
        self.interactive_start(self.t0);
        self.dbs_v44_start(self.t0);
        self.q.push(self.t0, Ev::Start);
        self.q.push(self.end, Ev::End);
        self.interactive_schedule_writes(self.t0);
        let mut polled = 0u64;
        loop {
            // the armed ticks run before an event at or after `tick_at`
            let next = if self.tick_pending.is_empty() {
                self.q.pop()
            } else {
                let next = self.q.pop_before(self.tick_at);
                if next.is_none() {
                    self.run_ticks(out);
                    continue;
                }
                next
            };
            let Some((now, ev)) = next else { break };
            self.set_clock(now);
            // a stop request (SIGINT/SIGTERM in the CLI): `run()` turns it into an error
            polled = polled.wrapping_add(1);
            if polled & (crate::interrupt::POLL_EVERY - 1) == 0
                && crate::interrupt::requested().is_some()
            {
                return;
            }
            match ev {
                Ev::Start => self.rtapp_start(out, now),
                Ev::Wake { tid, gen } => {
                    let tid = tid as usize;
                    if self.threads[tid].wake_gen == gen
                        && self.threads[tid].state == TState::Sleeping
                    {
                        self.try_to_wake_up(out, tid, now, None);
                    }
                }
                Ev::OpDone { cpu, gen } => {
                    let cpu = cpu as usize;
                    if self.rqs[cpu].op_gen == gen {
                        self.op_done(out, cpu, now);
                    }
                }
                Ev::NohzKick => {
                    self.nohz_kick_pending = false;
                    let flags = std::mem::take(&mut self.nohz_kick_flags);
                    if self.s.options.balance.enabled {
                        self.nohz_idle_balance(out, flags, now);
                    }
                }
                Ev::DlReplenish { tid, gen } => {
                    if self.threads[tid as usize].dl_gen == gen {
                        self.dl_replenish(out, tid as usize, now);
                    }
                }
                Ev::DlInactive { tid, gen } => {
                    let t = &self.threads[tid as usize];
                    if t.dl_inactive_active && t.dl_inactive_gen == gen {
                        self.inactive_task_timer(out, tid as usize, now);
                    }
                }
                Ev::FreqApply { pd } => self.freq_apply_event(out, pd as usize, now),
                Ev::IrqWork { pd, cpu } => {
                    self.governor_irq_work(out, pd as usize, cpu as usize, now)
                }
                Ev::RtPushIpi { cpu } => self.push_rt_tasks(out, cpu as usize, now),
                Ev::HmpIdlePull { cpu } => {
                    self.hmp_idle_pull(out, cpu as usize, now);
                }
                Ev::RtPeriod => self.sched_rt_period_timer(out, now),
                Ev::TimerIrq { cpu } => self.timer_irq(out, cpu as usize, now),
                Ev::InteractiveWrite { i } => self.interactive_write(out, i as usize, now),
                Ev::End => {
                    self.finish(out, now);
                    return;
                }
            }
            self.drain_resched(out, now);
            // the three end tests; with threads alive and not all blocked on resources
            // (nearly every event), only the error's can hold
            if self.nr_res_blocked != self.alive && self.alive != 0 {
                if self.fatal.is_some() {
                    self.finish(out, now);
                    return;
                }
                continue;
            }
            if self.alive > 0 && self.nr_res_blocked == self.alive {
                self.check_deadlock(now);
            }
            if self.fatal.is_some() {
                self.finish(out, now);
                return;
            }
            if self.alive == 0 && self.rtapp_main_done() {
                self.finish(out, now);
                return;
            }
        }
    }

    pub(in crate::sim) fn finish(&mut self, out: &mut Out<'_, '_>, now: Nanos) {
        // a main thread that has exited wrote it; one still asleep is cut off by the end
        // of the run, and the marker is written from its CPU
        let main = self.rtapp_main.as_ref().map(|m| (m.tid, m.stage));
        let exited = matches!(main, Some((_, user::main::MainStage::Exited)));
        if self.markers.main && !exited {
            let cpu = main.map_or(0, |(t, _)| self.threads[t].cpu as u32);
            let ctx = Ctx {
                ts: now,
                cpu,
                comm: "rt-app",
                pid: PID_BASE,
            };
            out.emit(
                &ctx,
                &TraceEvent::Print(RtappMarker::Main {
                    event: "end",
                    data: 0,
                }),
                g_markers,
            );
        }
        out.metrics.end(now);
        for s in out.user.iter_mut() {
            s.end(now);
        }
    }

    /// The current op of `cpu`'s task has completed.
    ///
    /// [`Sim::account_op`]'s statements on one borrow of the rq and of curr's op, with the
    /// charge inline ([`charge_op_inline`]): the op's test reads the op just charged.
    pub(in crate::sim) fn op_done(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        self.update_rq_clock(cpu, now);
        let rq = &mut self.rqs[cpu];
        let Some(tid) = rq.curr else {
            return;
        };
        let dt = now.saturating_sub(rq.seg_start);
        rq.seg_start = now;
        let op = &mut self.uthreads[tid].op;
        if dt != 0 {
            charge_op_inline(rq, op, dt);
        }
        let finished = match *op {
            Op::Run { work, .. } => work == 0,
            Op::Runtime { ns } => ns == 0,
            Op::Step => true,
        };
        if !finished {
            self.arm_op(cpu, now);
            return;
        }
        if self.threads[tid].kthread.is_some() {
            self.kthread_op_done(out, cpu, tid, now);
        } else {
            self.op_completed(out, cpu, tid, now);
        }
    }

    /// Ends the run with a diagnostic.
    pub(in crate::sim) fn fail(&mut self, msg: String) {
        if self.fatal.is_none() {
            self.fatal = Some(msg);
        }
    }
}

/// Work done in `dt` ns on the CPU whose rq is `rq`: `dt × capacity × f / fmax`
/// (capacity-ns), with the CPU's work speed ([`crate::platform::Cpu::work_capacity`], the
/// capacity unless the platform gives `work_dmips_mhz`) as the capacity.
#[inline]
fn work_in(rq: &Rq, dt: Nanos) -> u128 {
    let fmax = rq.max_freq_khz.max(1);
    // u64 when the product fits (always, for realistic spans): a u128 division is slow
    match dt
        .checked_mul(rq.work_cap)
        .and_then(|v| v.checked_mul(rq.freq_khz))
    {
        Some(v) => u128::from(v / fmax),
        None => {
            u128::from(dt) * u128::from(rq.work_cap) * u128::from(rq.freq_khz) / u128::from(fmax)
        }
    }
}

/// When `op`, started at `now` on the CPU whose rq is `rq`, completes: its work at the
/// CPU's speed, or its run time.
#[inline(always)]
fn op_done_at(rq: &Rq, op: &Op, now: Nanos) -> Nanos {
    let dt = match *op {
        Op::Run { work, .. } => time_for(rq, work),
        Op::Runtime { ns } => ns,
        Op::Step => 0,
    };
    now.saturating_add(dt)
}

/// Wall time to do `work` on the CPU whose rq is `rq` (rounded up).
#[inline]
fn time_for(rq: &Rq, work: u128) -> Nanos {
    let den = rq.work_cap * rq.freq_khz;
    if den == 0 {
        return u64::MAX / 4;
    }
    let fmax = rq.max_freq_khz.max(1);
    if let Some(num) = u64::try_from(work).ok().and_then(|w| w.checked_mul(fmax)) {
        return num.div_ceil(den).min(u64::MAX / 4);
    }
    let num = work * u128::from(fmax);
    num.div_ceil(u128::from(den)).min(u128::from(u64::MAX / 4)) as u64
}

/// The charge of [`Sim::account_op`]: `dt` ns (not 0) of curr's `op` done on the CPU
/// whose rq is `rq`. Out of line: `__schedule()` makes the cheap tests before it on its
/// own borrow of the rq.
#[inline(never)]
pub(in crate::sim) fn charge_op(rq: &Rq, op: &mut Op, dt: Nanos) {
    charge_op_inline(rq, op, dt);
}

/// [`charge_op`] inline, for the completion of an op ([`Sim::op_done`], once per op).
#[inline(always)]
fn charge_op_inline(rq: &Rq, op: &mut Op, dt: Nanos) {
    let done = work_in(rq, dt);
    match op {
        Op::Run { work, .. } => *work = work.saturating_sub(done),
        Op::Runtime { ns } => *ns = ns.saturating_sub(dt),
        Op::Step => {}
    }
}
