//! The scheduler's system calls and kernel entry points user space reaches: blocking
//! (`schedule()` from a futex or a timer sleep), `do_exit()`, `set_user_nice()`,
//! `sched_setscheduler()` (kernel/sched/syscalls.c, v6.11), `rt_mutex_setprio()`,
//! `sched_yield()` and `clone()` (`kernel_clone()` → `wake_up_new_task()`).

use crate::sim::*;

impl<'w> Sim<'w> {
    /// Puts the thread to sleep until `at` (it is curr on `cpu`), or until another
    /// thread wakes it when `at` is `None`.
    pub(in crate::sim) fn block(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        at: Option<Nanos>,
    ) {
        self.update_rq_clock(cpu, now);
        if self.threads[tid].class == Class::Dl {
            self.update_curr_dl(cpu, tid, now);
        }
        if !(self.threads[tid].class == Class::Dl && self.threads[tid].dl.throttled) {
            self.dequeue_task(out, cpu, tid, now, true);
        }
        let t = &mut self.threads[tid];
        t.state = TState::Sleeping;
        t.wake_gen = t.wake_gen.wrapping_add(1);
        let gen = t.wake_gen;
        if let Some(at) = at {
            self.q.push(
                at,
                Ev::Wake {
                    tid: tid as u32,
                    gen,
                },
            );
        } else {
            self.threads[tid].res_blocked = true;
            self.nr_res_blocked += 1;
        }
        self.set_resched(cpu);
    }

    pub(in crate::sim) fn exit(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        self.update_rq_clock(cpu, now);
        self.dequeue_task(out, cpu, tid, now, true);
        self.threads[tid].state = TState::Dead;
        self.alive -= 1;
        if self.markers.task {
            self.marker(out, tid, now, RtappMarker::Task { event: "end" });
        }
        if out.any.sched {
            let ev = TraceEvent::SchedProcessExit {
                task: self.tref(tid),
            };
            out.emit(&self.ctx(cpu, now), &ev, g_sched);
        }
        self.set_resched(cpu);
    }

    /// `reweight_task()` simplified: new weight; EEVDF deadline recomputed from the slice.
    /// `set_user_nice()` (kernel/sched/syscalls.c, v6.11): a new nice value; for a fair
    /// task, the weight through [`Sim::reweight_fair`].
    pub(in crate::sim) fn set_user_nice(&mut self, out: &mut Out<'_, '_>, tid: usize, nice: i32) {
        let nice = nice.clamp(-20, 19);
        if self.threads[tid].nice == nice {
            return;
        }
        self.threads[tid].nice = nice;
        if !self.threads[tid].policy.is_fair() {
            return; // p->static_prio only: it applies when the task becomes fair
        }
        let t = &mut self.threads[tid];
        let old_prio = t.eff_prio;
        let boosted = t.eff_prio != t.normal_prio;
        t.normal_prio = 120 + nice;
        if !boosted {
            t.eff_prio = t.normal_prio; // effective_prio()
        }
        self.reweight_fair(out, tid, old_prio);
    }

    /// Changes a thread's effective priority and, with it, its class (a fair task
    /// boosted below `MAX_RT_PRIO` runs in the RT class), as `rt_mutex_setprio()` does:
    /// dequeue, put_prev, change, enqueue, set_next, then preemption checks.
    pub(in crate::sim) fn set_prio(&mut self, out: &mut Out<'_, '_>, tid: usize, prio: i32) {
        let now = self.q.now();
        let old_class = self.threads[tid].class;
        let base = if self.threads[tid].policy.is_fair() {
            Class::Fair
        } else {
            Class::Rt
        };
        let new_class = if prio < rtq::MAX_RT_PRIO {
            Class::Rt
        } else {
            base
        };
        let cpu = self.threads[tid].cpu;
        let queued = self.threads[tid].state == TState::Runnable;
        let running = self.rqs[cpu].curr == Some(tid);
        if !queued {
            self.threads[tid].eff_prio = prio;
            self.threads[tid].class = new_class;
            return;
        }
        self.update_rq_clock(cpu, now);
        self.account_op(cpu, now);
        match old_class {
            Class::Fair => {
                self.update_curr_fair_resched(cpu, now);
                if running {
                    self.update_load_avg(out, cpu, tid, 0, now);
                    let (rq, ents) = (&mut self.rqs[cpu], &self.ents);
                    rq.cfs.put_prev_entity(ents, tid);
                }
                if new_class != Class::Fair {
                    self.dequeue_fair(out, cpu, tid, now, false);
                }
            }
            _ => self.dequeue_task(out, cpu, tid, now, false),
        }
        let deboost = prio > self.threads[tid].eff_prio;
        self.threads[tid].eff_prio = prio;
        self.threads[tid].class = new_class;
        match new_class {
            Class::Fair => {
                if old_class != Class::Fair {
                    self.enqueue_fair(out, cpu, tid, now, false);
                }
                if running {
                    self.update_load_avg(out, cpu, tid, UPDATE_TG, now);
                    let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
                    rq.cfs.set_next_entity(ents, tid, now);
                }
            }
            _ => {
                // a deboosted task goes to the head of its new list (ENQUEUE_HEAD)
                self.threads[tid].rt_key = self.rqs[cpu].rt.enqueue(tid, prio, deboost);
                self.threads[tid].state = TState::Runnable;
                self.refresh_view(cpu);
            }
        }
        if running {
            self.set_resched(cpu);
        } else {
            self.wakeup_preempt(cpu, tid);
        }
    }

    /// `sched_setscheduler()` at a phase start (rt-app's `set_thread_param()`): between
    /// the fair policies by nice, into or out of SCHED_FIFO/RR by priority. A switch to
    /// or from SCHED_DEADLINE at a phase is not modelled (it keeps its class).
    pub(in crate::sim) fn set_policy(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        pol: SchedPolicy,
        prio: Option<i32>,
    ) {
        let t = &self.threads[tid];
        if t.class == Class::Dl || pol == SchedPolicy::Deadline {
            return;
        }
        if pol.is_fair() {
            // __sched_setscheduler(): the policy and static priority, then the weight
            let nice = prio.unwrap_or(t.nice).clamp(-20, 19);
            self.threads[tid].policy = pol;
            self.threads[tid].nice = nice;
            self.threads[tid].normal_prio = 120 + nice;
            self.set_prio(out, tid, 120 + nice);
            let prio = self.threads[tid].eff_prio;
            self.reweight_fair(out, tid, prio);
        } else {
            let p = rtq::rt_prio(prio.unwrap_or(10));
            self.threads[tid].policy = pol;
            self.threads[tid].normal_prio = p;
            self.set_prio(out, tid, p);
        }
    }

    /// `sched_yield()` (kernel/sched/syscalls.c, v6.11): the class's `yield_task()`.
    pub(in crate::sim) fn sched_yield(&mut self, cpu: usize, tid: usize, now: Nanos) {
        let class = self.threads[tid].class;
        class.yield_task(self, cpu, tid, now);
    }

    /// rt-app's `fork` event: a new thread of task `ti`, named
    /// `<task>-<index>-<nforks:04>`, started at once from the parent's CPU.
    pub(in crate::sim) fn fork(
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
        let ind = self.threads.len();
        let comm = format!("{}-{}-{:04}", self.w.tasks[ti].name, ind, n);
        let tid = self.spawn_thread(ti, comm);
        let parent_comm = self.threads[parent].comm.clone();
        self.threads[tid].comm0 = parent_comm.clone();
        if self.threads[tid].renamed {
            // the rename failed: it keeps the parent's comm
            self.threads[tid].comm = parent_comm;
        }
        self.alive += 1;
        self.wake_up_new_task(out, tid, now, Some(cpu));
    }

    pub(in crate::sim) fn fork_counts_of(&mut self, parent: usize, ti: usize) -> u32 {
        let c = self.fork_counts.entry((parent, ti)).or_insert(0);
        let n = *c;
        *c += 1;
        n
    }
}
