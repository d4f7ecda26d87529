//! Capacity and fitness primitives shared by wake-up placement and load balancing:
//! `util_fits_cpu()`, `task_fits_cpu()`, `scale_rt_capacity()` (kernel/sched/fair.c, v6.11).
//!
//! The kernel reads per-CPU state inside these helpers; here the caller passes the numbers
//! in a [`CpuCapacity`], so the functions stay pure.

use super::fits_capacity;
use crate::platform::SCHED_CAPACITY_SCALE;

/// The three capacities of one CPU that fitness tests read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuCapacity {
    /// `capacity_of(cpu)` = `rq->cpu_capacity`: what is left for CFS after RT, DL and IRQ
    /// pressure (see [`scale_rt_capacity`]).
    pub capacity_of: u64,
    /// `arch_scale_cpu_capacity(cpu)`: the CPU's original capacity.
    pub capacity_orig: u64,
    /// `get_actual_cpu_capacity(cpu)`: original capacity minus hardware/cpufreq pressure
    /// (equal to `capacity_orig` when pressure is not modelled).
    pub capacity_actual: u64,
}

/// `util_fits_cpu(util, uclamp_min, uclamp_max, cpu)` (kernel/sched/fair.c, v6.11).
///
/// Returns 1 when `util` fits the CPU, 0 when it does not, and −1 when it fits by
/// utilisation but the CPU's actual capacity cannot reach `uclamp_min`. Without uclamp
/// in use (`uclamp_is_used()` static key off) only the 80 % margin test remains.
pub fn util_fits_cpu(
    util: u64,
    uclamp_min: u64,
    uclamp_max: u64,
    cap: &CpuCapacity,
    uclamp_is_used: bool,
) -> i32 {
    // Check if the real util fits without any uclamp boost/cap applied.
    let mut fits = fits_capacity(util, cap.capacity_of);
    if !uclamp_is_used {
        return i32::from(fits);
    }
    let capacity_orig = cap.capacity_orig;
    let max_is_unclamped_on_biggest =
        capacity_orig == SCHED_CAPACITY_SCALE && uclamp_max == SCHED_CAPACITY_SCALE;
    let uclamp_max_fits = !max_is_unclamped_on_biggest && uclamp_max <= capacity_orig;
    fits = fits || uclamp_max_fits;
    let uclamp_min = uclamp_min.min(uclamp_max);
    if fits && util < uclamp_min && uclamp_min > cap.capacity_actual {
        return -1;
    }
    i32::from(fits)
}

/// `task_fits_cpu(p, cpu)`: `util_fits_cpu(task_util_est(p), uclamp_min, uclamp_max) > 0`
/// (kernel/sched/fair.c, v6.11).
pub fn task_fits_cpu(
    util_est: u64,
    uclamp_min: u64,
    uclamp_max: u64,
    cap: &CpuCapacity,
    uclamp_is_used: bool,
) -> bool {
    util_fits_cpu(util_est, uclamp_min, uclamp_max, cap, uclamp_is_used) > 0
}

/// `scale_rt_capacity(cpu)` followed by `update_cpu_capacity()`'s floor of 1
/// (kernel/sched/fair.c, v6.11): the capacity left to CFS,
/// `(max − rt − dl) × (max − irq) / max` with `max` the actual capacity.
pub fn scale_rt_capacity(capacity_actual: u64, util_rt: u64, util_dl: u64, util_irq: u64) -> u64 {
    let max = capacity_actual;
    if util_irq >= max {
        return 1;
    }
    let used = util_rt + util_dl;
    if used >= max {
        return 1;
    }
    let free = max - used;
    // scale_irq_capacity(free, irq, max)
    let cap = free * (max - util_irq) / max;
    cap.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cap(of: u64, orig: u64) -> CpuCapacity {
        CpuCapacity {
            capacity_of: of,
            capacity_orig: orig,
            capacity_actual: orig,
        }
    }

    #[test]
    fn fits_without_uclamp_is_the_80_percent_margin() {
        // 356 * 1280 = 455680 < 446 * 1024 = 456704 -> fits; 357 * 1280 = 456960 does not.
        assert_eq!(util_fits_cpu(356, 0, 1024, &cap(446, 446), false), 1);
        assert_eq!(util_fits_cpu(357, 0, 1024, &cap(446, 446), false), 0);
    }

    #[test]
    fn uclamp_max_makes_a_big_task_fit_a_little_cpu() {
        // uclamp_max 300 <= capacity_orig 446: fits whatever the util.
        assert_eq!(util_fits_cpu(900, 0, 300, &cap(446, 446), true), 1);
        // On the biggest CPU an unclamped max (1024) does not count as fitting.
        assert_eq!(util_fits_cpu(900, 0, 1024, &cap(1024, 1024), true), 0);
        // uclamp_min 600 above the LITTLE's actual capacity 446 with small util: -1.
        assert_eq!(util_fits_cpu(100, 600, 1024, &cap(446, 446), true), -1);
        assert!(!task_fits_cpu(100, 600, 1024, &cap(446, 446), true));
    }

    #[test]
    fn rt_pressure_reduces_capacity() {
        // (1024 - 256) * (1024 - 0) / 1024 = 768
        assert_eq!(scale_rt_capacity(1024, 256, 0, 0), 768);
        // (1024 - 0) * (1024 - 512) / 1024 = 512
        assert_eq!(scale_rt_capacity(1024, 0, 0, 512), 512);
        assert_eq!(scale_rt_capacity(446, 446, 0, 0), 1);
    }
}
