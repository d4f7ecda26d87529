//! `util_fits_cpu()`: a local copy for the energy modules.
//!
//! The shared capacity primitives (`src/sched/capacity.rs`) are being written in parallel;
//! this copy exists so that EAS and the over-utilisation check can be built and tested
//! now. When the shared module lands, this one should be replaced by a re-export.

use crate::platform::SCHED_CAPACITY_SCALE;
use crate::sched::fits_capacity;

/// `util_fits_cpu(util, uclamp_min, uclamp_max, cpu)` (kernel/sched/fair.c, v6.2–v6.11):
/// `1` if `util` fits `capacity_of(cpu)` with the 20 % margin (or uclamp_max makes it fit),
/// `0` if it does not, `-1` if it fits by util but `uclamp_min` cannot be reached on this
/// CPU's actual capacity.
///
/// * `capacity_of` is `rq->cpu_capacity` (capacity left for CFS);
/// * `arch_capacity` is `arch_scale_cpu_capacity()`;
/// * `actual_capacity` is `get_actual_cpu_capacity()` (arch capacity minus hw/cpufreq
///   pressure; equal to `arch_capacity` when pressure is not modelled);
/// * `uclamp_used` is the `sched_uclamp_used` static key.
///
/// Simplification: none for the function itself; thermal pressure is whatever the caller
/// passes in `actual_capacity`.
pub fn util_fits_cpu(
    util: u64,
    uclamp_min: u64,
    uclamp_max: u64,
    capacity_of: u64,
    arch_capacity: u64,
    actual_capacity: u64,
    uclamp_used: bool,
) -> i32 {
    let mut fits = fits_capacity(util, capacity_of);
    if !uclamp_used {
        return i32::from(fits);
    }
    // A 1024-capacity CPU with uclamp_max = 1024 is the default: not a hint.
    let default_max = arch_capacity == SCHED_CAPACITY_SCALE && uclamp_max == SCHED_CAPACITY_SCALE;
    let uclamp_max_fits = !default_max && uclamp_max <= arch_capacity;
    fits = fits || uclamp_max_fits;
    let uclamp_min = uclamp_min.min(uclamp_max);
    if fits && util < uclamp_min && uclamp_min > actual_capacity {
        return -1;
    }
    i32::from(fits)
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
