//! `__schedule()` (kernel/sched/core.c, v6.11): `put_prev_task()`, `pick_next_task()` over
//! the classes in priority order, the newidle balance of an empty pick, `set_next_task()`,
//! `context_switch()` and `sched_switch`.

use crate::sim::*;

impl<'w> Sim<'w> {
    /// `pick_next_task()`: the classes in order ([`Class::PICK_ORDER`]), deadline, RT,
    /// fair; `None`: the idle task. With no stopper, deadline or (unthrottled) RT task
    /// queued, the classes above the fair one pick nothing, and the fair class is asked
    /// at once (`__pick_next_task()`'s "all tasks are fair" shortcut, here without the
    /// walk that would find the same), on the rq already borrowed (the fair class's
    /// `pick_next_task()`, [`Class::pick_next_task`]).
    ///
    /// Its only calls are the fair queue's scans and the walk over the classes
    /// ([`Sim::pick_next_walk`]), out of line. The common pick (one fair entity or none)
    /// is inlined at `__schedule()`'s two picks ([`Sim::schedule`]): out of line, each of
    /// its 558,316 calls on `periodic` paid a call, a return and the moves of its
    /// arguments and result (callgrind: 4.7 M instructions).
    #[inline(always)]
    pub(in crate::sim) fn pick_next(&self, cpu: usize) -> Option<usize> {
        let rq = &self.rqs[cpu];
        if rq.stop.is_none()
            && rq.dl.nr_running() == 0
            && (rq.rt_throttled || rq.rt.nr_running() == 0)
        {
            let next = rq.cfs.pick_next(&self.ents, &self.s.fair);
            // The shortcut's premise: the walk over every class finds the same task.
            debug_assert_eq!(next, self.pick_next_walk(cpu));
            return next;
        }
        self.pick_next_walk(cpu)
    }

    /// `__pick_next_task()`'s walk: `for_each_class()` in order ([`Class::PICK_ORDER`]),
    /// the first class's pick.
    #[inline(never)]
    fn pick_next_walk(&self, cpu: usize) -> Option<usize> {
        Class::PICK_ORDER
            .iter()
            .find_map(|class| class.pick_next_task(self, cpu))
    }

    /// `__schedule()`: `update_curr()` of prev, `pick_next_task()`, `put_prev_task()`, the fair
    /// class's newidle `balance()` when nothing is runnable, `set_next_task()` (or the
    /// idle task's), then `context_switch()`.
    ///
    /// `update_rq_clock()`, the charge of curr's op ([`Sim::account_op`]) and, for a fair
    /// `prev`, `update_curr()` ([`Sim::update_curr_fair`]) run on one borrow of the rq and
    /// the entities, the same statements in the same order as those functions; prev's
    /// class is read once (nothing before `put_prev_task()` changes a class: only
    /// `__sched_setscheduler()` and `rt_mutex_setprio()` do).
    pub(in crate::sim) fn schedule(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        if self.cpufreq.interactive.is_some() && self.rqs[cpu].curr.is_none() {
            // the idle loop leaves arch_cpu_idle() before schedule(): IDLE_END
            self.idle_notifier(out, cpu, crate::sim::timer::IdleNotify::End, now);
        }
        let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents[..]);
        let prev = rq.curr;
        // update_rq_clock()
        rq.clock.update(now, prev.is_none(), rq.cap, rq.freq_scale);
        let prev_class = match prev {
            None => None,
            Some(p) => {
                // account_op()
                let dt = now.saturating_sub(rq.seg_start);
                rq.seg_start = now;
                if dt != 0 {
                    crate::sim::machine::charge_op(rq, &mut self.uthreads[p].op, dt);
                }
                let class = self.threads[p].class;
                // update_curr_fair()
                if class == Class::Fair && ents[p].on_rq {
                    rq.cfs.update_curr(ents, now, &self.s.fair);
                }
                Some(class)
            }
        };
        if let (Some(p), Some(class)) = (prev, prev_class) {
            if class != Class::Fair {
                class.update_curr(self, cpu, p, now);
            }
            self.put_prev_task_balance(out, cpu, p, class, now);
        }
        let mut next = self.pick_next(cpu);
        if next.is_some() && next == prev {
            // Same task: no switch; its armed op completion still holds (same rate). A
            // task that yielded with nobody to yield to goes on with its program.
            if let Some(n) = next {
                self.repick(out, cpu, n, now);
                self.return_from_yield(out, cpu, n, now);
            }
            return;
        }
        if let (Some(p), Some(class)) = (prev, prev_class) {
            debug_assert_eq!(class, self.threads[p].class);
            class.put_prev_task(self, out, cpu, p, now);
        }
        if next.is_none()
            && self.s.options.balance.enabled
            && Class::Fair.balance(self, out, cpu, now)
        {
            next = self.pick_next(cpu);
        }
        match next {
            Some(n) => {
                self.rqs[cpu].op_gen = self.rqs[cpu].op_gen.wrapping_add(1);
                let class = self.threads[n].class;
                class.set_next_task(self, out, cpu, n, prev, true, now);
            }
            // The CPU goes idle (`rq->idle_stamp`, the nohz marks), the op generation
            // moves on, then `set_next_task_idle()`: on one borrow of the rq.
            None => {
                let rq = self.enter_idle(cpu, now);
                rq.op_gen = rq.op_gen.wrapping_add(1);
                crate::sim::class::set_next_task_idle(rq);
            }
        }
        self.context_switch(out, cpu, prev, next, now);
    }

    /// `put_prev_task_balance()` (kernel/sched/core.c, v6.11): `for_class_range(class,
    /// prev->sched_class, &idle_sched_class)` calls each class's `balance()` from prev's
    /// class down, and stops at the first that knows a task of its class or above is
    /// runnable: `balance_stop()` (the stopper queued), `balance_dl()` (a deadline `prev`
    /// that left pulls; then the stopper or a deadline task queued), `balance_rt()` (an RT
    /// pull when `rq->rt.highest_prio.curr > prev->prio`, also for a deadline or stopper
    /// `prev`; then any of the three queued). So a CPU whose `sugov:N`, deadline task or
    /// `migration/N` leaves pulls RT work. Before v5.4 the same pulls were made in
    /// `pick_next_task_dl()`/`pick_next_task_rt()`, which the pick reached only when the
    /// classes above had nothing (`need_pull_rt_task(rq, prev)` for any `prev`, v4.4). The
    /// fair class's `balance()` (newidle) is the one [`Self::schedule`] runs after an empty
    /// pick.
    ///
    /// prev's `class` is given by the caller, which read it.
    fn put_prev_task_balance(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        prev: usize,
        class: Class,
        now: Nanos,
    ) {
        debug_assert_eq!(class, self.threads[prev].class);
        if class >= Class::Stop && self.rqs[cpu].stop.is_some() {
            return; // balance_stop(): sched_stop_runnable()
        }
        if class >= Class::Dl && self.balance_dl(out, cpu, prev, now) {
            return;
        }
        if class >= Class::Rt {
            self.balance_rt(out, cpu, prev, now);
        }
    }

    /// `pick_next_task()` chose `prev` again (`sched.repick`): v6.11's
    /// `pick_next_task_fair()` on an rq with only fair tasks skips put/set for the same
    /// task (`CONFIG_FAIR_GROUP_SCHED`) but moves it to the head of `cfs_tasks` and runs
    /// `update_misfit_status()`; otherwise `put_prev_task()` (`put_prev_task_balance()`)
    /// and `set_next_task()` run as for another task, and `__schedule()`'s `prev == next`
    /// branch runs the balance callbacks (`__balance_callbacks()`): the push
    /// `set_next_task_rt()` (`rt_queue_push_tasks()`) or `set_next_task_dl()`
    /// (`deadline_queue_push_tasks()`) queued, as after a switch. v6.12's
    /// `put_prev_set_next_task()` does nothing for the same task.
    fn repick(&mut self, out: &mut Out<'_, '_>, cpu: usize, n: usize, now: Nanos) {
        if self.s.options.sched.repick != crate::options::RepickVersion::V6_11 {
            return;
        }
        let class = self.threads[n].class;
        let rq = &self.rqs[cpu];
        if class == Class::Fair && rq.rt.nr_running() == 0 && rq.dl.nr_running() == 0 {
            self.stamp_ctr += 1;
            self.cfs_stamp[n] = self.stamp_ctr;
            self.update_misfit(cpu, Some(n), now);
        } else {
            class.put_prev_task(self, out, cpu, n, now);
            class.set_next_task(self, out, cpu, n, Some(n), true, now);
            self.set_next_balance_callback(out, cpu, class, now);
        }
    }

    /// The balance callback a pick's `set_next_task()` queued, run after the switch or the
    /// re-pick (`__balance_callbacks()`): `rt_queue_push_tasks()` for an RT task,
    /// `deadline_queue_push_tasks()` for a deadline one.
    fn set_next_balance_callback(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        class: Class,
        now: Nanos,
    ) {
        match class {
            Class::Rt => self.rt_balance_callback(out, cpu, now),
            Class::Dl => self.dl_balance_callback(out, cpu, now),
            _ => {}
        }
    }

    /// `context_switch()` and its tracepoints; `rq->curr` is still `prev`. The tracepoints'
    /// context and task names are read from prev's and next's [`Thread`] once (the
    /// context is prev's: [`Sim::ctx`] of the rq's curr, which debug builds check), and
    /// the rq's new curr, its segment start and the policy view ([`Sim::refresh_view`]'s
    /// statements) are written on one borrow of the rq.
    ///
    /// `sched_switch` is built where a consumer takes it ([`Out::emit_with_metrics`], the
    /// builders always inlined): with no user sink it is not built, and the inlined
    /// `MetricsSink::sched_switch_of` reads the pids and prev's state from registers, and a
    /// task's comm only when the metrics meet the task for the first time (the names of
    /// prev and next are not loaded); with user sinks, once, as before.
    pub(in crate::sim) fn context_switch(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        prev: Option<usize>,
        next: Option<usize>,
        now: Nanos,
    ) {
        debug_assert_eq!(self.rqs[cpu].curr, prev);
        self.switches += 1;
        if prev.is_none() && out.any.power {
            // leaving idle: the context is the idle task's (`rq->curr` is still prev)
            out.emit_with(g_power, || {
                let ev = TraceEvent::CpuIdle {
                    cpu_id: cpu as u32,
                    state: -1,
                };
                (idle_ctx(cpu, now), ev)
            });
        }
        if out.any.sched {
            let prev_t = prev.map(|p| &self.threads[p]);
            let next_t = next.map(|n| &self.threads[n]);
            let idle = || TaskRef {
                comm: &self.idle_names[cpu],
                pid: 0,
                prio: 120,
            };
            let prev_ref = || prev_t.map_or_else(idle, task_ref);
            let next_ref = || next_t.map_or_else(idle, task_ref);
            let prev_state = match prev_t {
                None => TASK_RUNNING,
                Some(t) => match t.state {
                    TState::Runnable => TASK_RUNNING,
                    TState::Sleeping => TASK_INTERRUPTIBLE,
                    TState::Dead => EXIT_DEAD,
                },
            };
            out.emit_with_metrics(
                g_sched,
                // the pids as `prev_ref()`'s and `next_ref()`'s (the idle task's is 0)
                #[inline(always)]
                |m| {
                    m.sched_switch_of(
                        cpu,
                        now,
                        (prev_t.map_or(0, |t| t.pid), || prev_ref().comm),
                        prev_state,
                        (next_t.map_or(0, |t| t.pid), || next_ref().comm),
                    );
                },
                #[inline(always)]
                || {
                    let ev = TraceEvent::SchedSwitch {
                        prev: prev_ref(),
                        prev_state,
                        next: next_ref(),
                    };
                    let ctx = match prev_t {
                        Some(t) => thread_ctx(t, cpu, now),
                        None => idle_ctx(cpu, now),
                    };
                    debug_assert!({
                        let c = self.ctx(cpu, now);
                        (c.ts, c.cpu, c.comm, c.pid) == (ctx.ts, ctx.cpu, ctx.comm, ctx.pid)
                    });
                    (ctx, ev)
                },
            );
        }
        if self.cpustat_read() {
            self.cpustat_switch(cpu, next, now);
        }
        let rq = &mut self.rqs[cpu];
        rq.curr = next;
        match next {
            Some(_) => self.idle_curr.clear(cpu),
            None => self.idle_curr.set(cpu),
        }
        rq.seg_start = now;
        // refresh_view()
        crate::sim::core::refresh_view_of(
            rq,
            &mut self.view[cpu],
            &mut self.nr_idle,
            &mut self.nr_overloaded,
        );
        self.lb_scratch.cpu_changed(cpu);
        match next {
            Some(n) => {
                self.ensure_tick(cpu, now);
                // next's class and kind read on one borrow (a thread's kind never changes)
                let t = &self.threads[n];
                let (class, kthread) = (t.class, t.kthread.is_some());
                self.set_next_balance_callback(out, cpu, class, now);
                debug_assert_eq!(kthread, self.threads[n].kthread.is_some());
                if kthread {
                    self.kthread_switched_in(out, cpu, n, now);
                } else {
                    self.return_to_user(out, cpu, n, now);
                }
            }
            None => {
                self.en.idle_calls[cpu] += 1;
                if self.cpufreq.interactive.is_some() {
                    self.idle_notifier(out, cpu, crate::sim::timer::IdleNotify::Start, now);
                }
                if out.any.power {
                    // the idle task's context: `rq->curr` is the idle task now
                    debug_assert!(self.rqs[cpu].curr.is_none());
                    out.emit_with(g_power, || {
                        let ev = TraceEvent::CpuIdle {
                            cpu_id: cpu as u32,
                            state: 0,
                        };
                        (idle_ctx(cpu, now), ev)
                    });
                }
            }
        }
    }

    /// Whether a governor reads the CPU time accounting ([`Sim::cpustat_switch`]): the dbs
    /// governors (ondemand and conservative, `dbs_input()`) and interactive
    /// (`idle_us()`), chosen at the start and never changed. With any other governor
    /// nothing reads it, and the switch leaves it alone (the idle and nice times of the
    /// kernel's `kcpustat` are kept by the kernel whatever the governor; here only what
    /// some reader needs is kept, and what is read is the same).
    #[inline(always)]
    pub(in crate::sim) fn cpustat_read(&self) -> bool {
        // kept with the policies (CpufreqState::cpustat_read), one test at each switch
        let r = self.cpufreq.cpustat_read;
        debug_assert_eq!(r, self.cpufreq.dbs || self.cpufreq.interactive.is_some());
        r
    }

    /// The CPU time accounting of a switch: idle periods (`tick_nohz_start_idle()` /
    /// `tick_nohz_stop_idle()`) and the run time of nice tasks (`account_user_time()`'s
    /// CPUTIME_NICE for `task_nice(p) > 0`). Only when a governor reads it
    /// ([`Sim::cpustat_read`]).
    fn cpustat_switch(&mut self, cpu: usize, next: Option<usize>, now: Nanos) {
        let st = &mut self.cpustat[cpu];
        if let Some(t) = st.idle_entry.take() {
            st.idle_sleeptime += now.saturating_sub(t);
        }
        if let Some(t) = st.nice_entry.take() {
            st.nice_time += now.saturating_sub(t);
        }
        match next {
            None => st.idle_entry = Some(now),
            Some(n) => {
                let t = &self.threads[n];
                if t.class == Class::Fair && t.nice > 0 {
                    st.nice_entry = Some(now);
                }
            }
        }
    }
}
