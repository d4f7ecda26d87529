//! util_est (kernel/sched/fair.c, v5.13–v6.8 forms): the task's estimated utilisation
//! (`_task_util_est()`, `task_util_est()`), the root cfs_rq's sum kept at enqueue and
//! dequeue (`util_est_enqueue()`, `util_est_dequeue()`), and the EWMA update at a
//! sleeping dequeue (`util_est_update()`) with its per-release feature switches.

use super::*;

/// Models `kernel/sched/fair.c:_task_util_est()`: v6.8 `util_est & ~UTIL_AVG_UNCHANGED`;
/// v5.13–v6.7 `max(ewma, enqueued & ~UTIL_AVG_UNCHANGED)`.
pub fn task_util_est_raw(ue: &UtilEst, ver: UtilEstVersion) -> u64 {
    match ver {
        UtilEstVersion::V6_8 => u64::from(ue.ewma & !UTIL_AVG_UNCHANGED),
        UtilEstVersion::V5_13 => u64::from(ue.ewma.max(ue.enqueued & !UTIL_AVG_UNCHANGED)),
    }
}

/// Models `kernel/sched/fair.c:task_util_est()` (v6.8):
/// `max(task_util(p), _task_util_est(p))`.
pub fn task_util_est(avg: &SchedAvg, ver: UtilEstVersion) -> u64 {
    task_util(avg).max(task_util_est_raw(&avg.util_est, ver))
}

/// Models `kernel/sched/fair.c:util_est_enqueue()` (v6.8 and older): add the task's
/// `_task_util_est` to the root cfs_rq sum (kept in `cfs.util_est.enqueued`, `u32`).
/// Call at the start of the enqueue, before any frequency update.
pub fn util_est_enqueue(cfs: &mut SchedAvg, p: &SchedAvg, ver: UtilEstVersion) {
    let add = task_util_est_raw(&p.util_est, ver) as u32;
    cfs.util_est.enqueued = cfs.util_est.enqueued.wrapping_add(add);
}

/// Models `kernel/sched/fair.c:util_est_dequeue()` (v6.8): subtract the task's
/// `_task_util_est` from the root cfs_rq sum, flooring at 0.
pub fn util_est_dequeue(cfs: &mut SchedAvg, p: &SchedAvg, ver: UtilEstVersion) {
    let sub = task_util_est_raw(&p.util_est, ver) as u32;
    cfs.util_est.enqueued -= cfs.util_est.enqueued.min(sub);
}

/// The root cfs_rq's util_est sum (`cfs_rq->avg.util_est` in v6.8,
/// `cfs_rq->avg.util_est.enqueued` before), as read by `cpu_util()`.
pub fn cfs_rq_util_est(cfs: &SchedAvg) -> u64 {
    u64::from(cfs.util_est.enqueued)
}

/// Feature switches of `util_est_update()` that changed between kernel releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UtilEstFeatures {
    /// `UTIL_EST_FASTUP` (v5.13–v6.7 feature, default on): reset the EWMA to the new
    /// sample when it is higher. Unconditional in v6.8 (this switch is ignored there).
    pub fastup: bool,
    /// Skip the EWMA decay when `util + UTIL_EST_MARGIN < runnable` (the task did not
    /// get all the CPU it wanted). Present in v6.8; added by "sched/pelt: Avoid
    /// underestimation of task utilization" (≈v6.7, not re-verified), absent before.
    pub runnable_filter: bool,
    /// Skip (without re-arming the flag) when `util > arch_scale_cpu_capacity` (v5.x to
    /// v6.14; removed by "sched/fair: Allow decaying util_est when util_avg > CPU capa",
    /// 2025).
    pub capacity_filter: bool,
}

impl UtilEstFeatures {
    /// The defaults of the named kernel generation: V6_8 → all on; V5_13 → fast-up and
    /// capacity filter on, runnable filter off (v5.13–v6.6 behaviour).
    pub const fn kernel_default(ver: UtilEstVersion) -> Self {
        match ver {
            UtilEstVersion::V6_8 => UtilEstFeatures {
                fastup: true,
                runnable_filter: true,
                capacity_filter: true,
            },
            UtilEstVersion::V5_13 => UtilEstFeatures {
                fastup: true,
                runnable_filter: false,
                capacity_filter: true,
            },
        }
    }
}

/// `within_margin()` (kernel/sched/fair.c, v5.x–v6.7): `|value| < margin` via
/// `(unsigned int)(value + margin - 1) < (2 * margin - 1)` on `int`s.
#[inline]
fn within_margin(value: i32, margin: i32) -> bool {
    (value.wrapping_add(margin).wrapping_sub(1) as u32) < (2 * margin - 1) as u32
}

/// Models `kernel/sched/fair.c:util_est_update()` with the kernel defaults of `ver`
/// (see [`UtilEstFeatures::kernel_default`] and [`util_est_update_with`]).
///
/// Call at the end of `dequeue_task_fair()`, after the PELT update, with `task_sleep`
/// = `DEQUEUE_SLEEP` (nothing happens otherwise); `capacity_orig` is
/// `arch_scale_cpu_capacity()` of the task's CPU. Returns whether it reached `done:`,
/// where the kernel fires `sched_util_est_se_tp` (not for the early returns).
pub fn util_est_update(
    avg: &mut SchedAvg,
    task_sleep: bool,
    ver: UtilEstVersion,
    capacity_orig: u64,
) -> bool {
    util_est_update_with(
        avg,
        task_sleep,
        ver,
        UtilEstFeatures::kernel_default(ver),
        capacity_orig,
    )
}

/// Models `kernel/sched/fair.c:util_est_update()` with explicit feature switches.
///
/// v6.8 (commit "sched/fair: Simplify util_est"): return if flag set; `dequeued =
/// task_util`; if `ewma <= dequeued` → `ewma = dequeued`; else if `ewma - dequeued <
/// UTIL_EST_MARGIN` keep; else if `dequeued > capacity` **return** (flag not set);
/// else if `dequeued + MARGIN < runnable` keep; else `ewma = ((ewma << 2) - diff) >> 2`;
/// finally set the flag.
///
/// v5.13–v6.7: `enqueued = task_util`; fast-up as above (strict `<`); if
/// `within_margin(enqueued - ewma)`: set the flag (`goto done`) only if the new
/// `enqueued` moved by ≥ 1 % from the last one, else return unchanged; capacity filter
/// returns; runnable filter keeps; else `ewma = ((ewma << 2) + (enqueued - ewma)) >> 2`;
/// `done`: `enqueued |= UTIL_AVG_UNCHANGED`.
///
/// Returns whether it reached `done:` (where `sched_util_est_se_tp` fires).
pub fn util_est_update_with(
    avg: &mut SchedAvg,
    task_sleep: bool,
    ver: UtilEstVersion,
    feat: UtilEstFeatures,
    capacity_orig: u64,
) -> bool {
    if !task_sleep {
        return false;
    }
    let margin = UTIL_EST_MARGIN as u32;
    match ver {
        UtilEstVersion::V6_8 => {
            let mut ewma = avg.util_est.ewma;
            if ewma & UTIL_AVG_UNCHANGED != 0 {
                return false;
            }
            let dequeued = task_util(avg) as u32;
            if ewma <= dequeued {
                ewma = dequeued;
            } else {
                let last_ewma_diff = ewma - dequeued;
                if last_ewma_diff < margin {
                    // within 1 %: keep
                } else if feat.capacity_filter && u64::from(dequeued) > capacity_orig {
                    return false;
                } else if feat.runnable_filter
                    && u64::from(dequeued) + UTIL_EST_MARGIN < task_runnable(avg)
                {
                    // did not get all the CPU it wanted: keep
                } else {
                    ewma = (ewma << UTIL_EST_WEIGHT_SHIFT).wrapping_sub(last_ewma_diff)
                        >> UTIL_EST_WEIGHT_SHIFT;
                }
            }
            avg.util_est.ewma = ewma | UTIL_AVG_UNCHANGED;
            true
        }
        UtilEstVersion::V5_13 => {
            let mut ue = avg.util_est;
            if ue.enqueued & UTIL_AVG_UNCHANGED != 0 {
                return false;
            }
            let last_enqueued = i64::from(ue.enqueued);
            ue.enqueued = task_util(avg) as u32;
            let done = if feat.fastup && ue.ewma < ue.enqueued {
                ue.ewma = ue.enqueued;
                true
            } else {
                false
            };
            if !done {
                // unsigned int arithmetic, as in the kernel
                let last_ewma_diff = ue.enqueued.wrapping_sub(ue.ewma);
                let last_enqueued_diff = last_enqueued - i64::from(ue.enqueued);
                let m = margin as i32;
                let skip_ewma = if within_margin(last_ewma_diff as i32, m) {
                    if within_margin(last_enqueued_diff as i32, m) {
                        return false;
                    }
                    true
                } else if feat.capacity_filter && task_util(avg) > capacity_orig {
                    return false;
                } else {
                    feat.runnable_filter
                        && u64::from(ue.enqueued) + UTIL_EST_MARGIN < task_runnable(avg)
                };
                if !skip_ewma {
                    ue.ewma = (ue.ewma << UTIL_EST_WEIGHT_SHIFT).wrapping_add(last_ewma_diff)
                        >> UTIL_EST_WEIGHT_SHIFT;
                }
            }
            ue.enqueued |= UTIL_AVG_UNCHANGED;
            avg.util_est = ue;
            true
        }
    }
}
