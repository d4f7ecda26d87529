//! Over-utilisation, the EAS "tipping point": `cpu_overutilized()`,
//! `is_rd_overutilized()`, `set_rd_overutilized()` and `check_update_overutilized_status()`
//! (kernel/sched/fair.c, v6.10–v6.11), with the lone-task gate of the 2025 series
//! "sched/fair: Ignore OU for lone task on max-cap CPU" (C. Loehle) as
//! `eas.overutilized_gate = "ignore_lone_task"`.
//!
//! # Where the engine must call it (the kernel's call sites)
//!
//! | Kernel site | Call |
//! |---|---|
//! | end of `enqueue_task_fair()` (after `add_nr_running()`), **only for a wake-up**: `if (!task_new)` with `task_new = !(flags & ENQUEUE_WAKEUP)`, so neither a new task's first enqueue (its inflated initial util would trip the flag) nor a balancer or affinity move, a restore or a priority change checks | [`RootDomainOverutilized::check_update_overutilized_status`] with [`cpu_overutilized`] of the enqueue CPU |
//! | `task_tick_fair()` (every tick of a CPU running a CFS task; `check_update_overutilized_status(task_rq(curr))`) | same, for the ticking CPU |
//! | `update_sd_lb_stats()` in every load balance: `sg_overutilized` = any CPU of the domain overutilised | [`RootDomainOverutilized::update_sd_lb_stats`] with `root = !sd->parent`: at the root the flag is written (set **or cleared**), below it is only set |
//! | reading: `select_task_rq_fair()` (feec only if not overutilised), `sched_balance_find_src_group()` (EAS bail-out when not overutilised) | [`RootDomainOverutilized::is_rd_overutilized`] |
//!
//! Every write goes through `set_rd_overutilized()`, which fires the bare tracepoint
//! `sched_overutilized_tp(rd, flag)`; the state here counts 0→1 transitions ("OU
//! triggers") and the time spent overutilised ("OU %") for the results.

use super::util_fits_cpu;
use crate::platform::SCHED_CAPACITY_SCALE;
use crate::sched::capacity_greater;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which CPUs may set the root domain overutilised (`eas.overutilized_gate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum OverutilizedGate {
    /// Mainline (v6.x): any CPU whose CFS utilisation does not fit its capacity.
    #[default]
    RootDomain,
    /// The series' patch: a CPU of capacity 1024 running at most one task
    /// (`rq->nr_running <= 1`) and not capacity-reduced
    /// (`!capacity_greater(1024, capacity_of(cpu))`) never counts as overutilised.
    IgnoreLoneTask,
}

/// What `cpu_overutilized()` reads of one CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OuCpu {
    /// `cpu_util_cfs(cpu)` (util_est included, capped at the original capacity).
    pub util_cfs: u64,
    /// `capacity_of(cpu)`.
    pub capacity_of: u64,
    /// `arch_scale_cpu_capacity(cpu)`.
    pub arch_capacity: u64,
    /// `get_actual_cpu_capacity(cpu)`.
    pub actual_capacity: u64,
    /// `uclamp_rq_get(rq, UCLAMP_MIN)`.
    pub uclamp_min: u64,
    /// `uclamp_rq_get(rq, UCLAMP_MAX)`.
    pub uclamp_max: u64,
    /// `rq->nr_running` (all classes).
    pub nr_running: u32,
}

/// `cpu_overutilized(cpu)` (kernel/sched/fair.c, v6.10): `!util_fits_cpu(cpu_util_cfs,
/// rq uclamp_min, rq uclamp_max, cpu)`. A `-1` from `util_fits_cpu()` (fits, uclamp_min
/// unreachable) is not overutilised. Call only when EAS is enabled (the kernel returns
/// false otherwise). With [`OverutilizedGate::IgnoreLoneTask`], the patch's early return
/// comes first.
pub fn cpu_overutilized(c: &OuCpu, uclamp_used: bool, gate: OverutilizedGate) -> bool {
    if gate == OverutilizedGate::IgnoreLoneTask
        && c.arch_capacity == SCHED_CAPACITY_SCALE
        && c.nr_running <= 1
        && !capacity_greater(SCHED_CAPACITY_SCALE, c.capacity_of)
    {
        return false;
    }
    util_fits_cpu(
        c.util_cfs,
        c.uclamp_min,
        c.uclamp_max,
        c.capacity_of,
        c.arch_capacity,
        c.actual_capacity,
        uclamp_used,
    ) == 0
}

/// `rd->overutilized` with the accounting the results need.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootDomainOverutilized {
    /// `sched_energy_enabled()`: without EAS the flag is never written and reads as set.
    eas: bool,
    flag: bool,
    since: u64,
    start: u64,
    time_ns: u64,
    triggers: u64,
}

/// Over-utilisation figures of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OuStats {
    /// Time with the flag set (ns).
    pub overutilized_ns: u64,
    /// Observed time (ns).
    pub total_ns: u64,
    /// 0→1 transitions.
    pub triggers: u64,
}

impl RootDomainOverutilized {
    /// The flag at `now` (boot: clear), for a root domain with EAS on or off.
    pub fn new(eas_enabled: bool, now: u64) -> RootDomainOverutilized {
        RootDomainOverutilized {
            eas: eas_enabled,
            flag: false,
            since: now,
            start: now,
            time_ns: 0,
            triggers: 0,
        }
    }

    /// `is_rd_overutilized(rd)` = `!sched_energy_enabled() || rd->overutilized`.
    pub fn is_rd_overutilized(&self) -> bool {
        !self.eas || self.flag
    }

    /// `set_rd_overutilized(rd, flag)`: writes the flag (the kernel traces every write).
    /// Returns whether the value changed. No-op without EAS.
    pub fn set_rd_overutilized(&mut self, now: u64, flag: bool) -> bool {
        if !self.eas || flag == self.flag {
            return false;
        }
        if flag {
            self.triggers += 1;
            self.since = now;
        } else {
            self.time_ns += now.saturating_sub(self.since);
        }
        self.flag = flag;
        true
    }

    /// `check_update_overutilized_status(rq)`: set the flag if not set and this CPU is
    /// overutilised ([`cpu_overutilized`]). Returns whether it changed.
    pub fn check_update_overutilized_status(&mut self, now: u64, cpu_overutilized: bool) -> bool {
        if !self.is_rd_overutilized() && cpu_overutilized {
            return self.set_rd_overutilized(now, true);
        }
        false
    }

    /// The `update_sd_lb_stats()` write: at the root domain the flag takes the value of
    /// `sg_overutilized` (it can clear); below the root it is only set.
    pub fn update_sd_lb_stats(&mut self, now: u64, root: bool, sg_overutilized: bool) -> bool {
        if root || sg_overutilized {
            return self.set_rd_overutilized(now, sg_overutilized);
        }
        false
    }

    /// Figures up to `now`.
    pub fn stats(&self, now: u64) -> OuStats {
        let open = if self.eas && self.flag {
            now.saturating_sub(self.since)
        } else {
            0
        };
        OuStats {
            overutilized_ns: self.time_ns + open,
            total_ns: now.saturating_sub(self.start),
            triggers: self.triggers,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(util: u64, cap_of: u64, arch: u64, nr: u32) -> OuCpu {
        OuCpu {
            util_cfs: util,
            capacity_of: cap_of,
            arch_capacity: arch,
            actual_capacity: arch,
            uclamp_min: 0,
            uclamp_max: 1024,
            nr_running: nr,
        }
    }

    #[test]
    fn lone_task_on_max_cap_cpu() {
        // An always-running task saturates its CPU: util 1024 ≥ 80 % of 1024.
        let c = cpu(1024, 1024, 1024, 1);
        assert!(cpu_overutilized(&c, false, OverutilizedGate::RootDomain));
        assert!(!cpu_overutilized(
            &c,
            false,
            OverutilizedGate::IgnoreLoneTask
        ));
    }

    #[test]
    fn two_tasks_or_reduced_capacity_still_count() {
        let two = cpu(1024, 1024, 1024, 2);
        assert!(cpu_overutilized(&two, false, OverutilizedGate::RootDomain));
        assert!(cpu_overutilized(
            &two,
            false,
            OverutilizedGate::IgnoreLoneTask
        ));
        // capacity_of 950 (RT/IRQ pressure): 1024 × 1024 > 950 × 1078 → capacity-reduced.
        let reduced = cpu(1024, 950, 1024, 1);
        assert!(cpu_overutilized(
            &reduced,
            false,
            OverutilizedGate::IgnoreLoneTask
        ));
        // 1000 is within the 5 % margin: 1024 × 1024 = 1048576 ≤ 1000 × 1078 = 1078000.
        let slight = cpu(1024, 1000, 1024, 1);
        assert!(!cpu_overutilized(
            &slight,
            false,
            OverutilizedGate::IgnoreLoneTask
        ));
        // A lone task on a LITTLE CPU is never exempt.
        let little = cpu(384, 384, 384, 1);
        assert!(cpu_overutilized(
            &little,
            false,
            OverutilizedGate::IgnoreLoneTask
        ));
        // A small task does not overutilise anything.
        assert!(!cpu_overutilized(
            &cpu(100, 384, 384, 1),
            false,
            OverutilizedGate::RootDomain
        ));
    }

    #[test]
    fn flag_bookkeeping_counts_triggers_and_time() {
        let mut rd = RootDomainOverutilized::new(true, 0);
        assert!(!rd.is_rd_overutilized());
        assert!(rd.check_update_overutilized_status(10, true));
        assert!(!rd.check_update_overutilized_status(12, true)); // already set
                                                                 // Below the root a clear balance does not clear it.
        assert!(!rd.update_sd_lb_stats(20, false, false));
        assert!(rd.is_rd_overutilized());
        // At the root it does.
        assert!(rd.update_sd_lb_stats(30, true, false));
        assert!(!rd.is_rd_overutilized());
        assert!(rd.update_sd_lb_stats(40, false, true));
        let s = rd.stats(100);
        // set 10..30 and 40..100: 20 + 60 ns, two 0→1 transitions.
        assert_eq!(
            s,
            OuStats {
                overutilized_ns: 80,
                total_ns: 100,
                triggers: 2
            }
        );
        // Without EAS: always reads overutilised, never written.
        let mut off = RootDomainOverutilized::new(false, 0);
        assert!(off.is_rd_overutilized());
        assert!(!off.check_update_overutilized_status(5, true));
        assert_eq!(off.stats(10).triggers, 0);
    }
}
