//! ondemand as v4.4 samples (drivers/cpufreq/cpufreq_governor.c, v4.4.1 read in
//! zanpocc/linux-4.4.1@d4321c96; `cpufreq.ondemand.version = v4_4`, the `v4.4` profile's):
//! no scheduler hook, but a deferrable delayed work per CPU of the policy
//! (`INIT_DEFERRABLE_WORK(…, dbs_timer)` on the system workqueue). Its timer fires in the
//! CPU's timer softirq on the jiffy grid `delay_for_sampling_rate()` aligns it to (never
//! while the CPU is tickless idle); the work then runs in that CPU's kworker, a nice-0 fair
//! thread a SCHED_FIFO task keeps off the CPU until it sleeps. `dbs_timer()` evaluates the
//! whole policy only when half a sampling period has passed since the last evaluation
//! (`need_load_eval()`), re-arming every CPU's work then (`gov_queue_work(…, all_cpus)`),
//! else only its own.
//!
//! Simplification: re-arming another CPU's work whose timer already fired and whose
//! kworker has not run yet does not take the queued work back (`mod_delayed_work_on()`
//! would); that kworker runs `dbs_timer()` once more, which `need_load_eval()` turns into a
//! re-arm of its own work.

use crate::sim::kthread::KthreadPhase;
use crate::sim::timer::TimerFn;
use crate::sim::*;

/// A v4.4 ondemand policy's framework state beside the governor's.
#[derive(Debug, Clone, Copy, Default)]
pub(in crate::sim) struct DbsV44 {
    /// `shared->time_stamp` (ns): the last evaluation.
    pub time_stamp: Nanos,
    /// The re-arm a work waiting for the driver does when it returns: (delay in jiffies,
    /// all CPUs).
    pub requeue: Option<(u64, bool, usize)>,
}

/// v4.4's default `sampling_rate` (µs) for a transition latency (`od_init()` +
/// `cpufreq_governor_init()`): `max(min_sampling_rate, 1000 × latency)` with
/// `min_sampling_rate = max(MICRO_FREQUENCY_MIN_SAMPLE_RATE (10 ms, NOHZ idle accounting),
/// MIN_LATENCY_MULTIPLIER (20) × latency)`, latency in µs and at least 1.
pub(in crate::sim) fn v4_4_default_sampling_rate(transition_latency_ns: u64) -> u64 {
    let latency = (transition_latency_ns / 1000).max(1);
    let min_sampling_rate = 10_000u64.max(20 * latency);
    min_sampling_rate.max(latency * 1000)
}

impl Sim<'_> {
    /// `delay_for_sampling_rate(rate_us)`: jiffies, aligned to a multiple of the delay
    /// (`delay -= jiffies % delay`, every platform here having more than one CPU).
    fn delay_for_sampling_rate(&self, rate_us: u64, now: Nanos) -> u64 {
        let delay = self.usecs_to_jiffies(rate_us).max(1);
        delay - self.jiffies(now) % delay
    }

    fn v44(&self, pd: usize) -> Option<DbsV44> {
        self.cpufreq.policies[pd].dbs_v44
    }

    /// `gov_queue_work(policy, delay, all_cpus)` from `cpu`: `mod_delayed_work_on()` of the
    /// policy's CPUs' works, or of `cpu`'s.
    fn gov_queue_work(&mut self, pd: usize, cpu: usize, delay: u64, all: bool, now: Nanos) {
        let expires = self.jiffies(now) + delay;
        let cpus: Vec<usize> = if all {
            self.p.perf_domains[pd].cpus.clone()
        } else {
            vec![cpu]
        };
        for c in cpus {
            self.mod_timer(c, TimerFn::DbsWork, expires, true);
        }
    }

    /// `GOV_START` of every v4.4 ondemand policy at `now`: the time stamp, and every CPU's
    /// work queued one (aligned) sampling period ahead.
    pub(in crate::sim) fn dbs_v44_start(&mut self, now: Nanos) {
        for pd in 0..self.cpufreq.policies.len() {
            if self.v44(pd).is_none() {
                continue;
            }
            if let Some(v) = self.cpufreq.policies[pd].dbs_v44.as_mut() {
                v.time_stamp = now;
            }
            let rate = self.dbs_sampling_rate(pd);
            let delay = self.delay_for_sampling_rate(rate, now);
            let first = self.p.perf_domains[pd].cpus[0];
            self.gov_queue_work(pd, first, delay, true, now);
        }
    }

    fn dbs_sampling_rate(&self, pd: usize) -> u64 {
        match &self.cpufreq.policies[pd].gov {
            crate::cpufreq::governor::GovernorState::Dbs(d) => {
                u64::from(d.dbs().data.sampling_rate)
            }
            _ => 0,
        }
    }

    fn dbs_rate_mult(&self, pd: usize) -> u64 {
        match &self.cpufreq.policies[pd].gov {
            crate::cpufreq::governor::GovernorState::Dbs(d) => u64::from(d.dbs().rate_mult),
            _ => 1,
        }
    }

    /// The delayed work's timer fired on `cpu`: the work is queued on its kworker.
    pub(in crate::sim) fn dbs_v44_timer(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        let Some(kw) = self.cpufreq.kworkers.get_mut(cpu) else {
            let pd = self.p.cpus[cpu].perf_domain;
            self.dbs_v44_work(cpu, pd, now); // cpufreq.kthread = none: at once
            return;
        };
        if kw.phase != KthreadPhase::Idle {
            kw.more = true;
            return;
        }
        kw.phase = KthreadPhase::Work;
        let tid = kw.tid;
        self.try_to_wake_up(out, tid, now, Some(cpu));
    }

    /// `dbs_timer()` in `cpu`'s kworker (or at once without kworkers): returns whether it
    /// waits for the driver.
    pub(in crate::sim) fn dbs_v44_work(&mut self, cpu: usize, pd: usize, now: Nanos) -> bool {
        let rate = self.dbs_sampling_rate(pd);
        let shared = self.p.perf_domains[pd].cpus.len() > 1;
        let Some(v) = self.v44(pd) else { return false };
        // need_load_eval()
        let modify_all = if shared && now.saturating_sub(v.time_stamp) / 1000 < rate / 2 {
            false
        } else {
            if let Some(v) = self.cpufreq.policies[pd].dbs_v44.as_mut() {
                v.time_stamp = now;
            }
            true
        };
        let mut waits = false;
        let delay = if modify_all {
            waits = self.dbs_work(pd, None, now);
            let d_us = match &self.cpufreq.policies[pd].gov {
                crate::cpufreq::governor::GovernorState::Dbs(d) => d.pending_delay_us(),
                _ => rate,
            };
            if d_us == rate * self.dbs_rate_mult(pd) {
                self.delay_for_sampling_rate(d_us, now)
            } else {
                self.usecs_to_jiffies(d_us).max(1) // the powersave-bias half periods
            }
        } else {
            self.delay_for_sampling_rate(rate * self.dbs_rate_mult(pd), now)
        };
        if waits {
            let p = &mut self.cpufreq.policies[pd];
            p.dbs_waiter = Some(self.cpufreq.kworkers.get(cpu).map(|_| cpu));
            if let Some(v) = p.dbs_v44.as_mut() {
                v.requeue = Some((delay, modify_all, cpu));
            }
        } else {
            self.gov_queue_work(pd, cpu, delay, modify_all, now);
        }
        waits
    }

    /// The driver returned to the v4.4 work of `pd`: its re-arm.
    pub(in crate::sim) fn dbs_v44_requeue(&mut self, pd: usize, now: Nanos) {
        let r = self.cpufreq.policies[pd]
            .dbs_v44
            .as_mut()
            .and_then(|v| v.requeue.take());
        if let Some((delay, all, cpu)) = r {
            // the delay was computed before the transition; the jiffies moved on
            self.gov_queue_work(pd, cpu, delay, all, now);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn v4_4_default_sampling_rate_is_1000_times_the_latency() {
        // exynos5800's 140 µs: 140 ms; a 1 µs latency: the 10 ms NOHZ floor; 0: 1 µs → 10 ms
        assert_eq!(super::v4_4_default_sampling_rate(140_000), 140_000);
        assert_eq!(super::v4_4_default_sampling_rate(1_000), 10_000);
        assert_eq!(super::v4_4_default_sampling_rate(0), 10_000);
    }
}
