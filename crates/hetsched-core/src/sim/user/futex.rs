//! The futex-level synchronisation rt-app's pthread objects use: mutexes (with priority
//! inheritance, `rt_mutex_adjust_prio_chain()`), condition variables
//! (`FUTEX_CMP_REQUEUE_PI` with PI), semaphores, and the deadlock report when nothing can
//! run again. Blocking and waking are system calls into the core.

use crate::sim::*;

impl<'w> Sim<'w> {
    /// Wakes waiter `w` of a synchronisation object from the task running on `cpu`
    /// (`futex(FUTEX_WAKE)`); it no longer waits for anything.
    pub(in crate::sim) fn wake_waiter(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        w: usize,
        now: Nanos,
    ) {
        self.uthreads[w].wait_on = WaitOn::Nothing;
        self.sys_futex_wake(out, cpu, w, now);
    }

    /// What a woken thread redoes first; false if it must block again.
    pub(in crate::sim) fn do_retry(&mut self, out: &mut Out<'_, '_>, tid: usize) -> bool {
        match std::mem::replace(&mut self.uthreads[tid].retry, Retry::None) {
            Retry::None => true,
            Retry::Lock(m) => self.mutex_lock(out, tid, m).is_none(),
            Retry::Barrier(b) => {
                self.res.barriers[b].waiting += 1;
                true
            }
            Retry::Sem(si) => self.sem_wait(tid, si),
        }
    }

    /// `sem_wait()`: take one unit, or queue `tid` (false: it must block).
    pub(in crate::sim) fn sem_wait(&mut self, tid: usize, si: usize) -> bool {
        let prio = self.threads[tid].eff_prio;
        let sem = &mut self.res.sems[si];
        if sem.value > 0 {
            sem.value -= 1;
            true
        } else {
            sem.waiters.push(tid, prio);
            self.uthreads[tid].wait_on = WaitOn::Sem(si);
            false
        }
    }

    /// `pthread_mutex_lock()`: `None` if taken, `Some(Block)` if `tid` now waits.
    pub(in crate::sim) fn mutex_lock(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        m: usize,
    ) -> Option<Step> {
        if self.res.try_lock(m, tid) {
            return None;
        }
        let prio = self.threads[tid].eff_prio;
        self.res.mutexes[m].waiters.push(tid, prio);
        self.uthreads[tid].wait_on = WaitOn::Mutex(m);
        if self.w.pi_enabled {
            // rt_mutex_adjust_prio_chain(): boost the owner, and whoever it waits for
            let mut owner = self.res.mutexes[m].owner;
            let mut depth = 0;
            while let Some(o) = owner {
                let on = self.threads[tid].cpu; // the locking thread runs there
                if !self.pi_adjust(out, o, on) || depth > 1024 {
                    break;
                }
                depth += 1;
                owner = match self.uthreads[o].wait_on {
                    WaitOn::Mutex(m2) => self.res.mutexes[m2].owner,
                    _ => None,
                };
            }
        }
        Some(Step::Block)
    }

    /// `pthread_mutex_unlock()` by `tid` on `cpu`.
    pub(in crate::sim) fn mutex_unlock(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        m: usize,
        now: Nanos,
    ) {
        if self.res.mutexes[m].owner != Some(tid) {
            return; // validated before the run; a normal mutex ignores it
        }
        let pi = self.w.pi_enabled;
        if let Some(w) = self.res.unlock(m, pi) {
            self.uthreads[w].retry = if pi { Retry::None } else { Retry::Lock(m) };
            self.uthreads[w].maybe_unsettled = true;
            self.uthreads[w].wait_on = WaitOn::Nothing;
            if pi {
                self.pi_adjust(out, w, cpu);
            }
            self.wake_waiter(out, cpu, w, now);
        }
        if pi {
            self.pi_adjust(out, tid, cpu);
        }
    }

    /// `pthread_cond_wait(cond, mutex)`: release the mutex, queue, block.
    pub(in crate::sim) fn cond_wait(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        c: usize,
        m: usize,
        now: Nanos,
    ) -> Step {
        self.mutex_unlock(out, cpu, tid, m, now);
        let prio = self.threads[tid].eff_prio;
        let cond = &mut self.res.conds[c];
        cond.waiters.push(tid, prio);
        cond.mutex_of.insert(tid, m);
        self.uthreads[tid].wait_on = WaitOn::Cond(c, m);
        Step::Block
    }

    /// `pthread_cond_signal()` / `_broadcast()` from the task running on `cpu`. A woken
    /// waiter reacquires its mutex; with PI it is requeued onto the mutex when the mutex
    /// is held (`FUTEX_CMP_REQUEUE_PI`), so it wakes only when handed the lock.
    pub(in crate::sim) fn cond_wake(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        c: usize,
        all: bool,
        now: Nanos,
    ) {
        let woken = if all {
            self.res.conds[c].waiters.drain()
        } else {
            self.res.conds[c].waiters.pop().into_iter().collect()
        };
        for w in woken {
            let m = self.res.conds[c].mutex_of.remove(&w).unwrap_or(0);
            if self.w.pi_enabled {
                if self.res.try_lock(m, w) {
                    self.uthreads[w].retry = Retry::None;
                    self.wake_waiter(out, cpu, w, now);
                } else {
                    let prio = self.threads[w].eff_prio;
                    self.res.mutexes[m].waiters.push(w, prio);
                    self.uthreads[w].wait_on = WaitOn::Mutex(m);
                    if let Some(o) = self.res.mutexes[m].owner {
                        self.pi_adjust(out, o, cpu);
                    }
                }
            } else {
                self.uthreads[w].retry = Retry::Lock(m);
                self.uthreads[w].maybe_unsettled = true;
                self.wake_waiter(out, cpu, w, now);
            }
        }
    }

    /// `rt_effective_prio(p, prio)` (kernel/sched/core.c, v6.11): `prio`, or the priority of
    /// `tid`'s top PI waiter when that is higher (a DL waiter boosts to RT priority 0).
    pub(in crate::sim) fn rt_effective_prio(&self, tid: usize, prio: i32) -> i32 {
        let threads = &self.threads;
        let top = self
            .res
            .top_pi_waiter_prio(tid, |w| threads[w].eff_prio.max(0));
        top.map_or(prio, |p| p.min(prio))
    }

    /// `rt_mutex_adjust_prio()` + `rt_mutex_setprio()`: `tid` runs at the best of its
    /// own priority and its top PI waiter's. Returns whether its priority changed.
    /// Deadline boosting is not modelled (a DL waiter boosts to RT priority 0).
    /// `on` is the CPU the futex operation runs on.
    pub(in crate::sim) fn pi_adjust(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        on: usize,
    ) -> bool {
        let t = &self.threads[tid];
        if t.class == Class::Dl {
            return false;
        }
        let new = self.rt_effective_prio(tid, t.normal_prio);
        if new == t.eff_prio {
            return false;
        }
        self.rt_mutex_setprio(out, tid, new, on);
        true
    }

    /// When no thread can run again (none runnable, none in a timed sleep, no timer
    /// pending), the blocked ones form a deadlock: name them and what they wait for.
    pub(in crate::sim) fn check_deadlock(&mut self, now: Nanos) {
        if self.fatal.is_some()
            || self.alive == 0
            || self.deadlock_reported
            || self.rtapp_main_creating()
        {
            return;
        }
        let mut blocked = Vec::new();
        let user = self
            .user_tids
            .iter()
            .map(|&t| (&self.threads[t], &self.uthreads[t]));
        for (t, u) in user {
            match t.state {
                TState::Dead => {}
                TState::Runnable => return,
                TState::Sleeping => match u.wait_on {
                    WaitOn::Nothing => return,
                    w => blocked.push((t.comm.clone(), w)),
                },
            }
        }
        if blocked.is_empty() {
            return;
        }
        let what = |w: WaitOn| -> String {
            let owner = |m: usize| {
                self.res.mutexes[m].owner.map_or_else(
                    || "free".to_string(),
                    |o| format!("held by {}", self.threads[o].comm),
                )
            };
            match w {
                WaitOn::Mutex(m) => format!("mutex `{}` ({})", self.res.mutexes[m].name, owner(m)),
                WaitOn::Cond(c, _) => format!(
                    "condition `{}` (no thread left to signal it)",
                    self.res.conds[c].name
                ),
                WaitOn::Barrier(b) => {
                    let bar = &self.res.barriers[b];
                    format!(
                        "barrier `{}` ({} of {} participants arrived)",
                        bar.name,
                        bar.waiters.len(),
                        bar.participants
                    )
                }
                WaitOn::Suspend(si) => format!("a resume \"{}\"", self.res.suspends[si].name),
                WaitOn::Sem(si) => format!("semaphore `{}` (value 0)", self.res.sems[si].name),
                WaitOn::StartBarrier => "rt-app's start barrier".to_string(),
                WaitOn::Nothing => String::new(),
            }
        };
        let list: Vec<String> = blocked
            .iter()
            .map(|(c, w)| format!("{c} waits for {}", what(*w)))
            .collect();
        let msg = format!(
            "deadlock at {} s: every remaining thread is blocked: {}",
            crate::time::fmt_ftrace_ts(now),
            list.join("; ")
        );
        self.deadlock_reported = true;
        if self.has_duration {
            // rt-app would sit blocked until the duration ends and its shutdown wakes
            // everyone: the run goes on, idle, and the report is a warning
            self.warnings.push(msg);
        } else {
            self.fail(msg);
        }
    }
}
