//! The `sched` governor of the scheduler-driven frequency selection series (seed 004:
//! "sched: scheduler-driven CPU frequency selection", RFCv7, Steve Muckle and Michael
//! Turquette, posted 22 Feb 2016). The seed holds only the cover letter; the governor is
//! read in `kernel/sched/cpufreq_sched.c` of mturquette/linux@b6e0c990 (which carries every
//! RFCv7 change the cover letter lists, with the branch's tracepoints), its scheduler hooks
//! in the Kirin 950 EAS backport (OpenKirin/android_kernel_huawei_hi3650@73c2ab7b, v4.1.18)
//! where the RFCv7 hunks were not found.
//!
//! Each CPU carries capacity requests per class (`struct sched_capacity_reqs`): CFS from
//! `cpu_util()` at enqueue, dequeue, load balance and fork, RT from `rt_avg` at the tick,
//! and a total with the series' headroom, `(cfs + rt) × capacity_margin / 1024 + dl`
//! (`capacity_margin` 1280, about 20 %). A policy's frequency is the highest total of its
//! CPUs scaled to `policy->max`, the lowest OPP at or above it (RELATION_L). At the tick a
//! CPU whose current capacity is below its requests jumps its CFS request to the maximum.
//!
//! This module is the arithmetic; the engine (sim/schedfreq.rs) owns the hooks, the
//! `kschedfreq:N` kthread of slow drivers, throttling and the transition latency.

use super::freq_table::{FreqTable, Relation};
use crate::platform::SCHED_CAPACITY_SCALE;

/// `capacity_margin`: the headroom of a capacity request (1280/1024, ~20 %).
pub const CAPACITY_MARGIN: u64 = 1280;

/// Default `sysctl_sched_time_avg` (ms): `rt_avg` halves every half of it (v4.4).
pub const SYSCTL_SCHED_TIME_AVG_MS: u64 = 1000;

/// A CPU's requests (`struct sched_capacity_reqs`), each on the CPU's own 0..1024 scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SchedCapacityReqs {
    /// `cfs`.
    pub cfs: u64,
    /// `rt`.
    pub rt: u64,
    /// `dl`.
    pub dl: u64,
    /// `total`.
    pub total: u64,
}

/// Which class's request changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReqClass {
    /// `set_cfs_cpu_capacity()`.
    Cfs,
    /// `set_rt_cpu_capacity()`.
    Rt,
}

impl SchedCapacityReqs {
    /// `sum_capacity_reqs(cfs_cap, scr)`.
    pub fn sum_with_cfs(&self, cfs_cap: u64) -> u64 {
        (cfs_cap + self.rt) * CAPACITY_MARGIN / SCHED_CAPACITY_SCALE + self.dl
    }

    /// `set_{cfs,rt}_cpu_capacity()` + `update_cpu_capacity_request()`: the new request
    /// for `class`; returns `Some((old_total, new_total))` when the total changed.
    pub fn set(&mut self, class: ReqClass, capacity: u64) -> Option<(u64, u64)> {
        let slot = match class {
            ReqClass::Cfs => &mut self.cfs,
            ReqClass::Rt => &mut self.rt,
        };
        if *slot == capacity {
            return None;
        }
        *slot = capacity;
        let new = (self.cfs + self.rt) * CAPACITY_MARGIN / SCHED_CAPACITY_SCALE + self.dl;
        if new == self.total {
            return None;
        }
        let old = self.total;
        self.total = new;
        Some((old, new))
    }
}

/// `update_fdomain_capacity_request()`'s frequency: `capacity × policy->max >>
/// SCHED_CAPACITY_SHIFT`, the lowest OPP at or above it within the limits.
pub fn capacity_to_freq(table: &FreqTable, capacity: u64) -> u64 {
    let raw = (capacity * table.max) >> 10;
    table.resolve(raw, Relation::L, false)
}

/// `sched_avg_update()` and the `used` of `sched_rt_update_capacity_req()` (v4.4 rq's
/// `rt_avg`, `age_stamp`): RT run time weighted by `arch_scale_freq_capacity()`, halved
/// every `sched_avg_period()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RtAvg {
    /// `rq->rt_avg` (ns × capacity scale).
    pub rt_avg: u64,
    /// `rq->age_stamp` (ns).
    pub age_stamp: u64,
}

impl RtAvg {
    /// `sched_avg_update(rq)` at `clock` with `period` = `sched_avg_period()` (ns).
    pub fn update(&mut self, clock: u64, period: u64) {
        if period == 0 {
            return;
        }
        while clock.saturating_sub(self.age_stamp) > period {
            self.age_stamp += period;
            self.rt_avg /= 2;
        }
    }

    /// `sched_rt_avg_update(rq, delta)`: `delta` ns of RT run time at `freq_scale`.
    pub fn accrue(&mut self, delta: u64, freq_scale: u64) {
        self.rt_avg += delta * freq_scale;
    }

    /// `used` of `sched_rt_update_capacity_req()` at `clock`: the average over
    /// `period + (clock − age_stamp)`, at most 1024.
    pub fn used(&mut self, clock: u64, period: u64) -> u64 {
        self.update(clock, period);
        let delta = clock.saturating_sub(self.age_stamp);
        let total = period + delta;
        (self.rt_avg / total.max(1)).min(SCHED_CAPACITY_SCALE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_sum_with_the_margin() {
        let mut r = SchedCapacityReqs::default();
        assert_eq!(r.set(ReqClass::Cfs, 512), Some((0, 640)));
        assert_eq!(r.set(ReqClass::Cfs, 512), None);
        assert_eq!(r.set(ReqClass::Rt, 100), Some((640, 765)));
        assert_eq!(r.sum_with_cfs(1024), (1124 * 1280) / 1024);
    }

    #[test]
    fn capacity_maps_to_the_lowest_opp_at_or_above() {
        let t = super::super::dbs::tests::table(); // 500, 1000, 1500, 2000 MHz
                                                   // 640 × 2000 MHz / 1024 = 1250 MHz → 1500
        assert_eq!(capacity_to_freq(&t, 640), 1_500_000);
        assert_eq!(capacity_to_freq(&t, 1280), 2_000_000);
        assert_eq!(capacity_to_freq(&t, 0), 500_000);
    }

    #[test]
    fn rt_avg_halves_every_period() {
        let mut a = RtAvg::default();
        let period = 25_000_000; // sched_time_avg_ms = 50
        a.accrue(25_000_000, 1024); // 25 ms of RT at fmax
        assert_eq!(a.used(25_000_000, period), 25_000_000 * 1024 / 50_000_000);
        // 40 ms: one period passed, halved, over 25 + 15 ms
        assert_eq!(
            a.used(40_000_000, period),
            (25_000_000u64 * 1024 / 2) / 40_000_000
        );
        assert_eq!(a.age_stamp, 25_000_000);
    }
}
