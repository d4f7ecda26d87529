//! NOHZ idle balancing (kernel/sched/fair.c, v6.11): `kick_ilb()`, `_nohz_idle_balance()`
//! with `update_nohz_stats()`, and `nohz_newidle_balance()`. A busy CPU's tick decides the
//! kick (`nohz_balancer_kick()`, in `balance_tick()`); the idle load balancer then updates
//! the tickless idle CPUs' blocked averages and balances their domains as `CPU_IDLE`.

use super::{Out, Sim};
use crate::policy::lb::misfit::{NOHZ_BALANCE_KICK, NOHZ_STATS_KICK};
use crate::policy::lb::CpuIdleType;
use crate::policy::MigrationReason;
use crate::time::Nanos;

impl Sim<'_> {
    /// `kick_ilb(flags)` (kernel/sched/fair.c, v6.11): a balance kick moves
    /// `nohz.next_balance` to the next jiffy; the flags are OR-ed into the idle load
    /// balancer's pending ones (`atomic_fetch_or()`), and only a kick that finds none
    /// pending sends the IPI ([`super::Ev::NohzKick`]), whose `nohz_csd_func()` takes them
    /// all: a CPU's NOHZ_BALANCE_KICK joins the stats-only kick another CPU sent earlier in
    /// the same tick.
    pub(in crate::sim) fn kick_ilb(&mut self, flags: u32, jiffies: u64, now: Nanos) {
        if flags & NOHZ_BALANCE_KICK != 0 {
            self.nohz_next_balance_j = jiffies + 1;
        }
        // find_new_ilb(): nohz_balancer_kick() kicks only while a CPU is idle
        self.nohz_kick_flags |= flags;
        if !self.nohz_kick_pending {
            self.nohz_kick_pending = true;
            self.q.push(now, super::Ev::NohzKick);
        }
    }

    /// `_nohz_idle_balance(flags)` (v6.11): every tickless idle CPU's blocked averages
    /// (`update_nohz_stats()`, with NOHZ_STATS_KICK) and, with NOHZ_BALANCE_KICK, its
    /// balance when due; then `nohz.next_blocked` and `nohz.has_blocked`.
    pub(in crate::sim) fn nohz_idle_balance(
        &mut self,
        out: &mut Out<'_, '_>,
        flags: u32,
        now: Nanos,
    ) {
        let jiffies = self.jiffies(now);
        let mut next = jiffies + 60 * self.lbp.hz;
        let mut update_next_balance = false;
        let stats = flags & NOHZ_STATS_KICK != 0;
        let balance = flags & NOHZ_BALANCE_KICK != 0;
        if stats {
            self.nohz_has_blocked = false;
        }
        let mut has_blocked_load = false;
        // kick_ilb() → find_new_ilb(): the first idle CPU (the kicker is busy); it walks
        // the idle CPUs from the next one on and itself last (`for_each_cpu_wrap(balance_cpu,
        // nohz.idle_cpus_mask, this_cpu + 1)`), letting the others pull first.
        let n = self.rqs.len();
        let ilb = (0..n).find(|&c| self.view[c].idle).unwrap_or(0);
        for i in 1..=n {
            let cpu = (ilb + i) % n;
            if !self.view[cpu].idle {
                continue;
            }
            if stats {
                has_blocked_load |= self.update_nohz_stats(out, cpu, now);
            }
            if !balance {
                continue;
            }
            update_next_balance = true;
            self.update_rq_clock(cpu, now);
            if jiffies >= self.rqs[cpu].next_balance {
                self.sched_balance_domains(
                    out,
                    cpu,
                    CpuIdleType::Idle,
                    MigrationReason::NohzIdle,
                    now,
                );
                if !self.view[cpu].idle
                    || self.rqs[cpu].curr.is_none() && self.rqs[cpu].cfs.nr_running > 0
                {
                    self.set_resched(cpu);
                }
            }
            next = next.min(self.rqs[cpu].next_balance);
        }
        // With no idle CPU left, nohz.next_balance keeps its value.
        if update_next_balance {
            self.nohz_next_balance_j = next;
        }
        if stats {
            // the next update in LOAD_AVG_PERIOD (32 ms)
            self.nohz_next_blocked_j = jiffies + (32 * self.lbp.hz).div_ceil(1000);
            if has_blocked_load {
                self.nohz_has_blocked = true;
            }
        }
    }

    /// `update_nohz_stats(rq)` (v6.11): an idle CPU's blocked averages, at most once a
    /// jiffy; whether it still has blocked load.
    fn update_nohz_stats(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) -> bool {
        if !self.rqs[cpu].has_blocked_load {
            return false;
        }
        if self.jiffies(now) <= self.rqs[cpu].last_blocked_load_update_tick {
            return true;
        }
        self.update_rq_clock(cpu, now);
        self.update_blocked_averages(out, cpu, now);
        self.rqs[cpu].has_blocked_load
    }

    /// `nohz_newidle_balance()` → `nohz_run_idle_balance()` (v6.11): a CPU entering idle
    /// that expects to stay idle updates the blocked averages of the idle CPUs when they
    /// are due (`_nohz_idle_balance(NOHZ_STATS_KICK)` from `do_idle()`).
    pub(in crate::sim) fn nohz_newidle_balance(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        now: Nanos,
    ) {
        if self.rqs[cpu].avg_idle < crate::sched::SYSCTL_SCHED_MIGRATION_COST
            || !self.nohz_has_blocked
            || self.jiffies(now) < self.nohz_next_blocked_j
        {
            return;
        }
        self.nohz_idle_balance(out, NOHZ_STATS_KICK, now);
    }
}
