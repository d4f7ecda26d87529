//! `__schedule()` (kernel/sched/core.c, v6.11): `put_prev_task()`, `pick_next_task()` over
//! the classes in priority order, the newidle balance of an empty pick, `set_next_task()`,
//! `context_switch()` and `sched_switch`.

use crate::sim::*;

impl<'w> Sim<'w> {
    /// `pick_next_task()`: the classes in order, deadline, RT, fair.
    pub(in crate::sim) fn pick_next(&self, cpu: usize) -> Option<usize> {
        let rq = &self.rqs[cpu];
        rq.dl
            .pick()
            .or_else(|| rq.rt.pick())
            .or_else(|| rq.cfs.pick_next(&self.ents, &self.s.fair))
    }

    pub(in crate::sim) fn schedule(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        let fair = self.s.fair;
        self.update_rq_clock(cpu, now);
        self.account_op(cpu, now);
        let prev = self.rqs[cpu].curr;
        let mut prev_moved = std::mem::take(&mut self.rqs[cpu].prev_moved);
        if let Some(p) = prev.filter(|_| !prev_moved) {
            match self.threads[p].class {
                Class::Fair if self.ents[p].on_rq => {
                    let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
                    rq.cfs.update_curr(ents, now, &fair);
                    if !self.threads[p].affinity.contains(cpu) {
                        self.move_off_disallowed(out, cpu, p, now);
                        prev_moved = true;
                    }
                }
                Class::Dl => self.update_curr_dl(cpu, p, now),
                _ => {}
            }
            if !prev_moved
                && self.threads[p].class != Class::Fair
                && self.threads[p].state == TState::Runnable
                && self.queued_other(cpu, p)
                && !self.threads[p].affinity.contains(cpu)
            {
                self.move_off_disallowed(out, cpu, p, now);
                prev_moved = true;
            }
        }
        let mut next = self.pick_next(cpu);
        if !prev_moved && next.is_some() && next == prev {
            // Same task: no switch; its armed op completion still holds (same rate). A
            // task that yielded with nobody to yield to goes on with its program.
            if let Some(n) = next {
                if std::mem::take(&mut self.threads[n].yielded) {
                    self.step_program(out, cpu, n, now);
                }
            }
            return;
        }
        if let Some(p) = prev.filter(|_| !prev_moved) {
            match self.threads[p].class {
                Class::Fair => {
                    if self.ents[p].on_rq {
                        // put_prev_entity(): PELT update while it ran, back into the queue
                        self.update_load_avg(out, cpu, p, 0, now);
                    }
                    let (rq, ents) = (&mut self.rqs[cpu], &self.ents);
                    rq.cfs.put_prev_entity(ents, p);
                }
                // put_prev_task_rt() / put_prev_task_dl(): the class signal while running
                Class::Rt => {
                    self.update_rt_pelt(out, cpu, true, now);
                }
                Class::Dl => {
                    self.update_dl_pelt(out, cpu, true, now);
                }
            }
        }
        if next.is_none() && self.s.options.balance.enabled {
            // pick_next_task_fair() found nothing: update_misfit_status(NULL), then
            // sched_balance_newidle() (v6.11): past its gate (rd->overloaded, avg_idle) the
            // blocked averages, then the domains; nothing pulled: nohz_newidle_balance()
            let pulled = if self.newidle_gate_open(cpu) {
                self.update_blocked_averages(out, cpu, now);
                self.newidle_balance(out, cpu, now)
            } else {
                self.newidle_balance(out, cpu, now) // updates next_balance only
            };
            if pulled {
                next = self.pick_next(cpu);
            } else {
                self.nohz_newidle_balance(out, cpu, now);
            }
        }
        if next.is_none() {
            self.rqs[cpu].idle_stamp = now;
            // nohz_balance_enter_idle(): the CPU's blocked load is to be decayed by others
            self.rqs[cpu].has_blocked_load = true;
            self.nohz_has_blocked = true;
            // nohz_balance_enter_idle() sets nohz.needs_update, and the next kick's
            // NOHZ_NEXT_KICK pulls nohz.next_balance in to this CPU's next_balance; done
            // here at once (a simplification: the kernel waits for a busy CPU's tick).
            let nb = self.rqs[cpu].next_balance;
            self.nohz_next_balance_j = self.nohz_next_balance_j.min(nb);
        } else if self.rqs[cpu].idle_stamp != 0 && prev.is_none() {
            // ttwu_do_activate()'s avg_idle update when leaving idle
            let rq = &mut self.rqs[cpu];
            let delta = now - rq.idle_stamp;
            let max = 2 * crate::sched::SYSCTL_SCHED_MIGRATION_COST;
            if rq.avg_idle > max {
                rq.avg_idle = max;
            } else {
                let diff = delta as i64 - rq.avg_idle as i64;
                rq.avg_idle = (rq.avg_idle as i64 + diff / 8) as u64;
            }
            rq.idle_stamp = 0;
        }
        self.rqs[cpu].op_gen = self.rqs[cpu].op_gen.wrapping_add(1);
        if let Some(n) = next {
            match self.threads[n].class {
                Class::Fair => {
                    // set_next_entity(); the task moves to the head of cfs_tasks
                    self.update_load_avg(out, cpu, n, UPDATE_TG, now);
                    let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
                    rq.cfs.set_next_entity(ents, n, now);
                    self.stamp_ctr += 1;
                    self.cfs_stamp[n] = self.stamp_ctr;
                    self.update_misfit(cpu, Some(n), now);
                }
                // set_next_task_rt(): rq->curr was not RT until now
                Class::Rt => {
                    let running = prev.is_some_and(|p| self.threads[p].class == Class::Rt);
                    self.update_rt_pelt(out, cpu, running, now);
                }
                Class::Dl => {
                    let running = prev.is_some_and(|p| self.threads[p].class == Class::Dl);
                    self.update_dl_pelt(out, cpu, running, now);
                    self.rqs[cpu].seg_start_dl = now;
                }
            }
        } else {
            // update_idle_rq_clock_pelt() before entering idle
            let rq = &mut self.rqs[cpu];
            let total = u64::from(rq.cfs.avg.util_sum)
                + u64::from(rq.avg_rt.util_sum)
                + u64::from(rq.avg_dl.util_sum);
            rq.clock.update_idle(total);
        }
        self.context_switch(out, cpu, prev, next, now);
    }

    /// Whether non-fair `tid` is queued on `cpu`'s RT or DL queue.
    pub(in crate::sim) fn queued_other(&self, cpu: usize, tid: usize) -> bool {
        match self.threads[tid].class {
            Class::Rt => self.rqs[cpu].rt.iter().any(|t| t == tid),
            Class::Dl => !self.threads[tid].dl.throttled,
            Class::Fair => false,
        }
    }

    pub(in crate::sim) fn context_switch(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        prev: Option<usize>,
        next: Option<usize>,
        now: Nanos,
    ) {
        self.switches += 1;
        if prev.is_none() && out.any.power {
            // leaving idle
            let ev = TraceEvent::CpuIdle {
                cpu_id: cpu as u32,
                state: -1,
            };
            out.emit(&self.ctx(cpu, now), &ev, g_power);
        }
        if out.any.sched {
            let idle = |c: usize| TaskRef {
                comm: &self.idle_names[c],
                pid: 0,
                prio: 120,
            };
            let name_of = |t: usize| self.tref(t);
            let prev_state = match prev {
                None => TASK_RUNNING,
                Some(p) => match self.threads[p].state {
                    TState::Runnable => TASK_RUNNING,
                    TState::Sleeping => TASK_INTERRUPTIBLE,
                    TState::Dead => EXIT_DEAD,
                },
            };
            let ev = TraceEvent::SchedSwitch {
                prev: prev.map_or_else(|| idle(cpu), name_of),
                prev_state,
                next: next.map_or_else(|| idle(cpu), name_of),
            };
            out.emit(&self.ctx(cpu, now), &ev, g_sched);
        }
        self.rqs[cpu].curr = next;
        self.rqs[cpu].seg_start = now;
        self.refresh_view(cpu);
        match next {
            Some(n) => {
                self.ensure_tick(cpu, now);
                self.resume_thread(out, cpu, n, now);
            }
            None => {
                self.en.idle_calls[cpu] += 1;
                if out.any.power {
                    let ev = TraceEvent::CpuIdle {
                        cpu_id: cpu as u32,
                        state: 0,
                    };
                    out.emit(&self.ctx(cpu, now), &ev, g_power);
                }
            }
        }
    }

    /// A thread got the CPU: finish the rename, measure timer wake-up latency, then
    /// continue its op or its program.
    pub(in crate::sim) fn resume_thread(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        if !self.threads[tid].renamed {
            self.threads[tid].renamed = true;
            if out.any.sched {
                let t = &self.threads[tid];
                let ev = TraceEvent::TaskRename {
                    pid: t.pid,
                    oldcomm: &t.comm0,
                    newcomm: &t.comm,
                };
                out.emit(&self.ctx(cpu, now), &ev, g_sched);
            }
        }
        if let Some(t_next) = self.threads[tid].timer_wait.take() {
            self.threads[tid].wu_lat_ns += now as i64 - t_next as i64;
        }
        match self.threads[tid].op {
            Op::Step => self.step_program(out, cpu, tid, now),
            _ => self.arm_op(cpu, now),
        }
    }
}
