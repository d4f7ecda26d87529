//! Scheduler mechanisms shared by every class: weights, fixed-point helpers, CPU masks.
//!
//! Constants and tables are the kernel's (kernel/sched/core.c, kernel/sched/sched.h,
//! kernel/sched/fair.c, v6.11).

pub mod capacity;
pub mod cpuset;
pub mod fair;
pub mod rt;
pub mod topology;

pub use cpuset::CpuSet;

/// `NICE_0_LOAD` after `scale_load_down()` (the algorithms never see the ×1024 shift).
pub const NICE_0_LOAD: u64 = 1024;
/// Weight of a `SCHED_IDLE` task (`WEIGHT_IDLEPRIO`).
pub const WEIGHT_IDLEPRIO: u64 = 3;
/// `WMULT_IDLEPRIO`.
pub const WMULT_IDLEPRIO: u32 = 1_431_655_765;
/// `WMULT_SHIFT`.
pub const WMULT_SHIFT: u32 = 32;
/// `sysctl_sched_migration_cost` (ns).
pub const SYSCTL_SCHED_MIGRATION_COST: u64 = 500_000;

/// `sched_prio_to_weight[]` (kernel/sched/core.c): nice −20 … +19.
pub const SCHED_PRIO_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
    3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87,
    70, 56, 45, 36, 29, 23, 18, 15,
];

/// `sched_prio_to_wmult[]` (kernel/sched/core.c): 2^32 / weight.
pub const SCHED_PRIO_TO_WMULT: [u32; 40] = [
    48388, 59856, 76040, 92818, 118348, 147320, 184698, 229616, 287308, 360437, 449829, 563644,
    704093, 875809, 1099582, 1376151, 1717300, 2157191, 2708050, 3363326, 4194304, 5237765,
    6557202, 8165337, 10153587, 12820798, 15790321, 19976592, 24970740, 31350126, 39045157,
    49367440, 61356676, 76695844, 95443717, 119304647, 148102320, 186737708, 238609294, 286331153,
];

/// A load weight with its precomputed inverse (`struct load_weight`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadWeight {
    /// Weight (scaled down, NICE_0 = 1024).
    pub weight: u64,
    /// `inv_weight` = 2^32 / weight.
    pub inv_weight: u32,
}

impl LoadWeight {
    /// `set_load_weight()` for a fair task of the given nice (or SCHED_IDLE).
    pub fn for_nice(nice: i32, sched_idle: bool) -> LoadWeight {
        if sched_idle {
            return LoadWeight {
                weight: WEIGHT_IDLEPRIO,
                inv_weight: WMULT_IDLEPRIO,
            };
        }
        let idx = (nice.clamp(-20, 19) + 20) as usize;
        LoadWeight {
            weight: SCHED_PRIO_TO_WEIGHT[idx],
            inv_weight: SCHED_PRIO_TO_WMULT[idx],
        }
    }
}

/// `__calc_delta(delta_exec, weight, lw)` = `delta_exec * weight / lw->weight` in the
/// kernel's 32-bit fixed point (kernel/sched/fair.c, v6.11).
pub fn calc_delta(delta_exec: u64, weight: u64, lw: &LoadWeight) -> u64 {
    let mut shift = WMULT_SHIFT;
    let mut fact: u64 = weight;
    let mut fact_hi = fact >> 32;
    if fact_hi != 0 {
        let fs = 64 - fact_hi.leading_zeros();
        shift -= fs;
        fact >>= fs;
    }
    fact = (fact & 0xffff_ffff) * u64::from(lw.inv_weight);
    fact_hi = fact >> 32;
    if fact_hi != 0 {
        let fs = 64 - fact_hi.leading_zeros();
        shift -= fs;
        fact >>= fs;
    }
    // mul_u64_u32_shr(delta_exec, fact, shift)
    ((u128::from(delta_exec) * u128::from(fact as u32)) >> shift) as u64
}

/// `calc_delta_fair(delta, se)`: wall (exec) time to virtual time.
pub fn calc_delta_fair(delta: u64, lw: &LoadWeight) -> u64 {
    if lw.weight != NICE_0_LOAD {
        calc_delta(delta, NICE_0_LOAD, lw)
    } else {
        delta
    }
}

/// `fits_capacity(cap, max)`: `cap * 1280 < max * 1024` (kernel/sched/fair.c).
pub fn fits_capacity(cap: u64, max: u64) -> bool {
    cap * 1280 < max * 1024
}

/// `capacity_greater(cap1, cap2)`: `cap1 * 1024 > cap2 * 1078`.
pub fn capacity_greater(cap1: u64, cap2: u64) -> bool {
    cap1 * 1024 > cap2 * 1078
}

/// `cap_scale(v, s)` = `(v * s) >> SCHED_CAPACITY_SHIFT`.
pub fn cap_scale(v: u64, s: u64) -> u64 {
    (v * s) >> crate::platform::SCHED_CAPACITY_SHIFT
}

/// The tunable scaling factor `1 + ilog2(min(ncpus, 8))`
/// (`get_update_sysctl_factor()`, SCHED_TUNABLESCALING_LOG, kernel/sched/fair.c).
pub fn sysctl_factor(ncpus: usize) -> u64 {
    let n = ncpus.clamp(1, 8) as u64;
    1 + u64::from(63 - n.leading_zeros())
}

/// `update_avg()` (kernel/sched/sched.h, v6.11): `*avg += (sample - *avg) / 8`, in the
/// kernel's unsigned-then-signed arithmetic.
pub fn update_avg(avg: u64, sample: u64) -> u64 {
    let diff = sample.wrapping_sub(avg) as i64;
    avg.wrapping_add((diff / 8) as u64)
}

/// `rq->avg_idle` after a wake-up ends an idle period of `delta` ns (the end of
/// `ttwu_do_activate()`, kernel/sched/core.c, v6.11): averaged in, then capped at
/// `2 * max_idle_balance_cost`. With [`crate::options::AvgIdleVersion::V3_10`], v3.10's
/// `ttwu_do_wakeup()`: a period above `2 * sysctl_sched_migration_cost` sets the cap, a
/// shorter one is averaged in.
pub fn update_rq_avg_idle(
    avg_idle: u64,
    delta: u64,
    max_idle_balance_cost: u64,
    version: crate::options::AvgIdleVersion,
) -> u64 {
    match version {
        crate::options::AvgIdleVersion::V3_13 => {
            update_avg(avg_idle, delta).min(2 * max_idle_balance_cost)
        }
        crate::options::AvgIdleVersion::V3_10 => {
            let max = 2 * SYSCTL_SCHED_MIGRATION_COST;
            if delta > max {
                max
            } else {
                update_avg(avg_idle, delta)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wmult_is_inverse_of_weight() {
        for i in 0..40 {
            let w = SCHED_PRIO_TO_WEIGHT[i];
            let inv = SCHED_PRIO_TO_WMULT[i] as u64;
            // 2^32 / w, as the kernel's table rounds it (within one unit)
            assert!(
                inv.abs_diff((1u64 << 32) / w) <= 1,
                "nice {}",
                i as i32 - 20
            );
        }
    }

    #[test]
    fn calc_delta_fair_matches_division() {
        for nice in -20..20 {
            let lw = LoadWeight::for_nice(nice, false);
            let d = 4_000_000u64;
            let exact = d * 1024 / lw.weight;
            let got = calc_delta_fair(d, &lw);
            assert!(
                got.abs_diff(exact) <= exact / 10_000 + 1,
                "nice {nice}: {got} vs {exact}"
            );
        }
        assert_eq!(calc_delta_fair(1000, &LoadWeight::for_nice(0, false)), 1000);
    }

    #[test]
    fn factor() {
        assert_eq!(sysctl_factor(1), 1);
        assert_eq!(sysctl_factor(2), 2);
        assert_eq!(sysctl_factor(4), 3);
        assert_eq!(sysctl_factor(6), 3);
        assert_eq!(sysctl_factor(8), 4);
        assert_eq!(sysctl_factor(256), 4);
    }

    #[test]
    fn fits() {
        assert!(fits_capacity(818, 1024));
        assert!(!fits_capacity(820, 1024));
        assert!(capacity_greater(1024, 446));
        assert!(!capacity_greater(1024, 1000));
    }

    /// v3.13+: the sample is averaged in first and the result capped, so one long idle
    /// period gives the cap (never more) and the next short one is averaged with it; v3.10
    /// sets the cap for a long period and averages only short ones.
    #[test]
    fn avg_idle_is_capped_after_the_update() {
        use crate::options::AvgIdleVersion::{V3_10, V3_13};
        let cap = 2 * SYSCTL_SCHED_MIGRATION_COST;
        // 100 ms idle from the boot value (1 ms): capped at 1 ms, not 1 + 99/8 ms
        let a = update_rq_avg_idle(cap, 100_000_000, SYSCTL_SCHED_MIGRATION_COST, V3_13);
        assert_eq!(a, cap);
        // then 10 µs: 1 ms + (10 µs − 1 ms) / 8
        let b = update_rq_avg_idle(a, 10_000, SYSCTL_SCHED_MIGRATION_COST, V3_13);
        assert_eq!(b, 1_000_000 - 990_000 / 8);
        // a longer newidle pass raises the cap
        assert_eq!(
            update_rq_avg_idle(cap, 100_000_000, 800_000, V3_13),
            1_600_000
        );
        assert_eq!(update_rq_avg_idle(cap, 100_000_000, 800_000, V3_10), cap);
        assert_eq!(update_rq_avg_idle(400_000, 800_000, 0, V3_10), 450_000);
        // update_avg()'s signed step toward a smaller sample truncates toward zero
        assert_eq!(update_avg(100, 93), 100);
        assert_eq!(update_avg(100, 91), 99);
    }
}
