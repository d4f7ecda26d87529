//! CPU frequency: the scheduler-side utilisation aggregation shared by schedutil and EAS
//! (`effective_cpu_util()` and its pre-v6.8 form), the governor interface
//! ([`governor`]), the schedutil governor ([`schedutil`]), and the dbs governors ondemand
//! and conservative ([`dbs`], [`ondemand`], [`conservative`]), Android's interactive
//! ([`interactive`]), the 2016 series' `sched` governor ([`schedfreq`]), with the frequency table
//! they resolve targets in ([`freq_table`]).
//!
//! Inputs are plain numbers the engine reads from its runqueues ([`RqSignals`]): this
//! module owns no scheduler state.

pub mod conservative;
pub mod dbs;
pub mod freq_table;
pub mod governor;
pub mod interactive;
pub mod ondemand;
pub mod schedfreq;
pub mod schedutil;

use crate::platform::SCHED_CAPACITY_SCALE;

/// The per-rq signals besides CFS utilisation that `effective_cpu_util()` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RqSignals {
    /// `arch_scale_cpu_capacity(cpu)`.
    pub arch_capacity: u64,
    /// `cpu_util_rt(rq)` = `rq->avg_rt.util_avg`.
    pub util_rt: u64,
    /// `cpu_util_dl(rq)` = `rq->avg_dl.util_avg`.
    pub util_dl: u64,
    /// `cpu_bw_dl(rq)` = `(rq->dl.running_bw × 1024) >> BW_SHIFT`.
    pub bw_dl: u64,
    /// `cpu_util_irq(rq)` = `rq->avg_irq.util_avg` (0 when IRQ time is not modelled).
    pub util_irq: u64,
    /// `rt_rq_is_runnable(&rq->rt)`: an RT task is queued or running.
    pub rt_runnable: bool,
    /// `uclamp_rq_get(rq, UCLAMP_MIN)`: max-aggregated over runnable tasks.
    pub uclamp_min: u64,
    /// `uclamp_rq_get(rq, UCLAMP_MAX)`.
    pub uclamp_max: u64,
    /// `uclamp_rq_is_idle(rq)`: `UCLAMP_FLAG_IDLE` (the last task left the rq).
    pub uclamp_idle: bool,
}

impl RqSignals {
    /// A rq with only CFS activity: no RT/DL/IRQ signal, default clamps.
    pub fn cfs_only(arch_capacity: u64) -> RqSignals {
        RqSignals {
            arch_capacity,
            util_rt: 0,
            util_dl: 0,
            bw_dl: 0,
            util_irq: 0,
            rt_runnable: false,
            uclamp_min: 0,
            uclamp_max: SCHED_CAPACITY_SCALE,
            uclamp_idle: false,
        }
    }
}

/// Result of [`effective_cpu_util`]: the utilisation and the performance bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EffectiveUtil {
    /// Actual utilisation (CFS + RT + DL, IRQ-scaled), at most the capacity.
    pub util: u64,
    /// `*min`: minimum performance (DL bandwidth + IRQ, uclamp_min, RT ⇒ max).
    pub min: u64,
    /// `*max`: maximum performance wished (capacity capped by uclamp_max).
    pub max: u64,
}

/// `scale_irq_capacity(util, irq, max)` = `util × (max − irq) / max` (kernel/sched/sched.h).
pub fn scale_irq_capacity(util: u64, irq: u64, max: u64) -> u64 {
    if max == 0 {
        return 0;
    }
    util * max.saturating_sub(irq) / max
}

/// `effective_cpu_util(cpu, util_cfs, &min, &max)` (kernel/sched/core.c, v6.8–v6.11).
/// `uclamp_used` is the `sched_uclamp_used` static key.
pub fn effective_cpu_util(rq: &RqSignals, util_cfs: u64, uclamp_used: bool) -> EffectiveUtil {
    let scale = rq.arch_capacity;
    let irq = rq.util_irq;
    if irq >= scale {
        return EffectiveUtil {
            util: scale,
            min: scale,
            max: scale,
        };
    }
    let mut min = (irq + rq.bw_dl).max(rq.uclamp_min);
    if !uclamp_used && rq.rt_runnable {
        min = min.max(scale);
    }
    let util = util_cfs + rq.util_rt + rq.util_dl;
    let max = scale.min(rq.uclamp_max);
    if util >= scale {
        return EffectiveUtil {
            util: scale,
            min,
            max,
        };
    }
    // scale_irq_capacity(util, 0, scale) is util (util < scale, so util * scale fits 64
    // bits when scale does 32): the division is left out without IRQ time, the engine's case
    let util = if irq == 0 && scale <= u64::from(u32::MAX) {
        debug_assert_eq!(util, scale_irq_capacity(util, irq, scale));
        util
    } else {
        scale_irq_capacity(util, irq, scale) + irq
    };
    EffectiveUtil {
        util: util.min(scale),
        min,
        max,
    }
}

/// `uclamp_rq_util_with(rq, util, p)` (kernel/sched/sched.h, v5.x–v6.x): clamp `util` by the
/// rq's max-aggregated clamps, and by `p`'s effective clamps when given (only `p`'s when
/// the rq is uclamp-idle). Identity when uclamp is unused.
pub fn uclamp_rq_util_with(
    rq: &RqSignals,
    util: u64,
    p: Option<(u64, u64)>,
    uclamp_used: bool,
) -> u64 {
    if !uclamp_used {
        return util;
    }
    let (mut lo, mut hi) = (0, 0);
    let mut rq_too = true;
    if let Some((pmin, pmax)) = p {
        lo = pmin;
        hi = pmax;
        rq_too = !rq.uclamp_idle;
    }
    if rq_too {
        lo = lo.max(rq.uclamp_min);
        hi = hi.max(rq.uclamp_max);
    }
    if lo >= hi {
        return lo;
    }
    util.clamp(lo, hi)
}

/// `enum cpu_util_type` of the pre-v6.8 interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuUtilType {
    /// `FREQUENCY_UTIL`: for schedutil (uclamp applied, DL bandwidth, RT ⇒ max).
    Frequency,
    /// `ENERGY_UTIL`: for EAS busy time (DL utilisation, no clamps).
    Energy,
}

/// `schedutil_cpu_util()` / `effective_cpu_util(cpu, util_cfs, type, p)` before v6.8
/// (kernel/sched/core.c, ≈v5.10–v6.7).
pub fn schedutil_cpu_util(
    rq: &RqSignals,
    util_cfs: u64,
    ty: CpuUtilType,
    p: Option<(u64, u64)>,
    uclamp_used: bool,
) -> u64 {
    let max = rq.arch_capacity;
    if !uclamp_used && ty == CpuUtilType::Frequency && rq.rt_runnable {
        return max;
    }
    let irq = rq.util_irq;
    if irq >= max {
        return max;
    }
    let mut util = util_cfs + rq.util_rt;
    if ty == CpuUtilType::Frequency {
        util = uclamp_rq_util_with(rq, util, p, uclamp_used);
    }
    let dl_util = rq.util_dl;
    if util + dl_util >= max {
        return max;
    }
    if ty == CpuUtilType::Energy {
        util += dl_util;
    }
    util = scale_irq_capacity(util, irq, max) + irq;
    if ty == CpuUtilType::Frequency {
        util += rq.bw_dl;
    }
    util.min(max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effective_util_sums_and_bounds() {
        let mut rq = RqSignals::cfs_only(1024);
        rq.util_rt = 100;
        rq.util_dl = 50;
        rq.bw_dl = 60;
        let e = effective_cpu_util(&rq, 300, false);
        // 300 + 100 + 50, no irq; min = 0 + bw_dl 60; max = 1024.
        assert_eq!((e.util, e.min, e.max), (450, 60, 1024));
        rq.rt_runnable = true;
        // RT runnable without uclamp: min = scale.
        assert_eq!(effective_cpu_util(&rq, 300, false).min, 1024);
        rq.util_irq = 256;
        // irq scaling: 450 × (1024−256)/1024 + 256 = 337.5 + 256 → 337 + 256 = 593.
        assert_eq!(effective_cpu_util(&rq, 300, false).util, 593);
    }

    #[test]
    fn legacy_frequency_util() {
        let mut rq = RqSignals::cfs_only(1024);
        rq.bw_dl = 10;
        assert_eq!(
            schedutil_cpu_util(&rq, 200, CpuUtilType::Frequency, None, false),
            210
        );
        rq.uclamp_min = 400;
        assert_eq!(
            schedutil_cpu_util(&rq, 200, CpuUtilType::Frequency, None, true),
            410
        );
        assert_eq!(
            schedutil_cpu_util(&rq, 200, CpuUtilType::Energy, None, true),
            200
        );
    }
}
