//! Kernel timers (kernel/time/timer.c): per-CPU jiffy timers, deferrable or not, for the
//! governors that have them. A timer expires at the tick whose `jiffies` reaches its
//! `expires` and runs in that CPU's timer softirq, after `sched_tick()`
//! (`update_process_times()` → `run_local_timers()`, the softirq at irq exit). A tickless
//! idle CPU runs no tick: a deferrable timer (`TIMER_DEFERRABLE`) waits for the CPU's next
//! tick once something wakes it, while a normal timer wakes it (the clockevent is
//! programmed for the first non-deferrable expiry) and its softirq then runs every expired
//! timer of the CPU, deferrable ones included (`__run_timers()` of every base).
//!
//! Simplification: the wheel's granularity (timers beyond 63 jiffies may fire up to 12.5 %
//! late since v4.8) is not modelled; every timer fires at its exact jiffy.

use crate::sim::*;

/// What a timer calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::sim) enum TimerFn {
    /// interactive's `cpu_timer` (`cpufreq_interactive_timer()`), deferrable.
    InteractiveCpu,
    /// interactive's `cpu_slack_timer` (`cpufreq_interactive_nop_timer()`), not deferrable.
    InteractiveSlack,
    /// v4.4 ondemand's per-CPU deferrable delayed work (`dbs_timer()` queued on the CPU).
    DbsWork,
}

/// A pending timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::sim) struct KTimer {
    /// The callback.
    pub func: TimerFn,
    /// `timer->expires` (jiffies).
    pub expires: u64,
    /// `TIMER_DEFERRABLE`.
    pub deferrable: bool,
}

impl Sim<'_> {
    /// `usecs_to_jiffies()`: rounded up.
    pub(in crate::sim) fn usecs_to_jiffies(&self, us: u64) -> u64 {
        let per = self.s.tick_ns / 1000;
        us.div_ceil(per.max(1))
    }

    /// `timer_pending()`.
    pub(in crate::sim) fn timer_pending(&self, cpu: usize, func: TimerFn) -> bool {
        self.timers[cpu].iter().any(|t| t.func == func)
    }

    /// `timer->expires` of a pending timer.
    pub(in crate::sim) fn timer_expires(&self, cpu: usize, func: TimerFn) -> Option<u64> {
        self.timers[cpu]
            .iter()
            .find(|t| t.func == func)
            .map(|t| t.expires)
    }

    /// `mod_timer_pinned()` / `add_timer_on()` on `cpu`. A normal timer arms the CPU's
    /// wake-up from tickless idle at its expiry.
    pub(in crate::sim) fn mod_timer(
        &mut self,
        cpu: usize,
        func: TimerFn,
        expires: u64,
        deferrable: bool,
    ) {
        self.del_timer(cpu, func);
        self.timers[cpu].push(KTimer {
            func,
            expires,
            deferrable,
        });
        if !deferrable {
            let at = expires * self.s.tick_ns;
            self.q.push(at, Ev::TimerIrq { cpu: cpu as u32 });
        }
    }

    /// `del_timer()`.
    pub(in crate::sim) fn del_timer(&mut self, cpu: usize, func: TimerFn) {
        self.timers[cpu].retain(|t| t.func != func);
    }

    /// The timer softirq of `cpu` at `now`: every expired timer runs, earliest first (then
    /// in the order they were armed).
    pub(in crate::sim) fn run_timers(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        let j = self.jiffies(now);
        loop {
            let next = self.timers[cpu]
                .iter()
                .enumerate()
                .filter(|(_, t)| t.expires <= j)
                .min_by_key(|(i, t)| (t.expires, *i))
                .map(|(i, _)| i);
            let Some(i) = next else { break };
            let t = self.timers[cpu].remove(i);
            self.timer_fn(out, cpu, t.func, now);
        }
    }

    /// A normal timer's expiry on `cpu`: a tickless idle CPU wakes for its softirq and
    /// goes back to idle (a busy CPU's tick at the same jiffy ran it already).
    pub(in crate::sim) fn timer_irq(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        let j = self.jiffies(now);
        let due = self.timers[cpu]
            .iter()
            .any(|t| !t.deferrable && t.expires <= j);
        // a busy CPU's tick ran it; a timer re-armed since no longer wakes the CPU
        if self.rqs[cpu].curr.is_some() || !due {
            return;
        }
        // the softirq at irq exit, then the idle loop's arch_cpu_idle_exit()/_enter()
        self.run_timers(out, cpu, now);
        self.idle_notifier(out, cpu, IdleNotify::End, now);
        if self.rqs[cpu].curr.is_none() && !self.rqs[cpu].need_resched {
            self.idle_notifier(out, cpu, IdleNotify::Start, now);
        }
    }

    fn timer_fn(&mut self, out: &mut Out<'_, '_>, cpu: usize, func: TimerFn, now: Nanos) {
        match func {
            TimerFn::InteractiveCpu => self.cpufreq_interactive_timer(out, cpu, now),
            TimerFn::InteractiveSlack => {} // cpufreq_interactive_nop_timer(): it only woke the CPU
            TimerFn::DbsWork => self.dbs_v44_timer(out, cpu, now),
        }
    }
}

/// `idle_notifier_call_chain()`'s events (arch/arm/kernel/process.c, v3.10:
/// `arch_cpu_idle_enter()` / `arch_cpu_idle_exit()` around each idle entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::sim) enum IdleNotify {
    /// `IDLE_START`.
    Start,
    /// `IDLE_END`.
    End,
}
