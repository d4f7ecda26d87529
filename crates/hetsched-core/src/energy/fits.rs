//! `util_fits_cpu()` for the energy modules, which pass capacities as numbers: an adapter
//! over the shared implementation in `src/sched/capacity.rs`.

use crate::sched::capacity::{self, CpuCapacity};

/// `util_fits_cpu()` with the capacities as plain numbers: an adapter over the single
/// implementation in [`crate::sched::capacity::util_fits_cpu`].
pub fn util_fits_cpu(
    util: u64,
    uclamp_min: u64,
    uclamp_max: u64,
    capacity_of: u64,
    arch_capacity: u64,
    actual_capacity: u64,
    uclamp_used: bool,
) -> i32 {
    let cap = CpuCapacity {
        orig: arch_capacity,
        capacity: capacity_of,
        hw_pressure: arch_capacity.saturating_sub(actual_capacity),
        cpufreq_pressure: 0,
    };
    capacity::util_fits_cpu(util, uclamp_min, uclamp_max, &cap, uclamp_used)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn margin_and_uclamp_cases() {
        // 80 % of 446 is 356.8: 356*1280 = 455680 < 446*1024 = 456704 fits, 357 does not.
        assert_eq!(util_fits_cpu(356, 0, 1024, 446, 446, 446, false), 1);
        assert_eq!(util_fits_cpu(357, 0, 1024, 446, 446, 446, false), 0);
        // uclamp_max 300 <= 446: capped task fits a LITTLE whatever its util.
        assert_eq!(util_fits_cpu(600, 0, 300, 446, 446, 446, true), 1);
        // uclamp_max 1024 on a 1024 CPU is the default: no help.
        assert_eq!(util_fits_cpu(900, 0, 1024, 1024, 1024, 1024, true), 0);
        // uclamp_min 800 cannot be reached on a 446 LITTLE: -1.
        assert_eq!(util_fits_cpu(100, 800, 1024, 446, 446, 446, true), -1);
        // ...but it can on the big CPU.
        assert_eq!(util_fits_cpu(100, 800, 1024, 1024, 1024, 1024, true), 1);
    }
}
