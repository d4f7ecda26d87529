//! CPU capacity and task fitness: `capacity_of()`, `util_fits_cpu()` and its users, and the
//! utilization clamping (uclamp) helpers they read.
//!
//! This is the single home of the fitness primitives: wake-up placement, misfit detection,
//! EAS and the RT class all call these. Everything is integer arithmetic on the kernel's
//! 1024 capacity scale, following kernel/sched/fair.c, kernel/sched/core.c and
//! kernel/sched/sched.h of v6.11 unless a doc comment names another version.

use super::fits_capacity;
use crate::platform::SCHED_CAPACITY_SCALE;

/// Which clamp (`enum uclamp_id`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum UclampId {
    /// `UCLAMP_MIN`: minimum utilization (a performance floor, "boost").
    Min = 0,
    /// `UCLAMP_MAX`: maximum utilization (a performance cap).
    Max = 1,
}

/// `UCLAMP_BUCKETS` = `CONFIG_UCLAMP_BUCKETS_COUNT` (default 5).
pub const UCLAMP_BUCKETS: usize = 5;

/// `UCLAMP_BUCKET_DELTA` = `DIV_ROUND_CLOSEST(SCHED_CAPACITY_SCALE, UCLAMP_BUCKETS)` = 205.
pub const UCLAMP_BUCKET_DELTA: u64 =
    (SCHED_CAPACITY_SCALE + UCLAMP_BUCKETS as u64 / 2) / UCLAMP_BUCKETS as u64;

/// `uclamp_bucket_id()`: `min(clamp_value / UCLAMP_BUCKET_DELTA, UCLAMP_BUCKETS - 1)`.
pub fn uclamp_bucket_id(clamp_value: u64) -> usize {
    ((clamp_value / UCLAMP_BUCKET_DELTA) as usize).min(UCLAMP_BUCKETS - 1)
}

/// `uclamp_none()`: 0 for `UCLAMP_MIN`, `SCHED_CAPACITY_SCALE` for `UCLAMP_MAX`.
pub fn uclamp_none(id: UclampId) -> u64 {
    match id {
        UclampId::Min => 0,
        UclampId::Max => SCHED_CAPACITY_SCALE,
    }
}

/// The system-wide uclamp sysctls (kernel/sched/core.c, v6.11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UclampSysctl {
    /// `sysctl_sched_uclamp_util_min` (1024): the highest `UCLAMP_MIN` any task may get.
    pub util_min: u64,
    /// `sysctl_sched_uclamp_util_max` (1024): the highest `UCLAMP_MAX` any task may get.
    pub util_max: u64,
    /// `sysctl_sched_uclamp_util_min_rt_default` (1024): the `UCLAMP_MIN` request of RT
    /// tasks that did not set one themselves.
    pub util_min_rt_default: u64,
}

impl Default for UclampSysctl {
    fn default() -> Self {
        UclampSysctl {
            util_min: SCHED_CAPACITY_SCALE,
            util_max: SCHED_CAPACITY_SCALE,
            util_min_rt_default: SCHED_CAPACITY_SCALE,
        }
    }
}

/// A task's requested clamps (`p->uclamp_req[]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UclampReq {
    /// `uclamp_req[UCLAMP_MIN].value`.
    pub min: u64,
    /// `uclamp_req[UCLAMP_MAX].value`.
    pub max: u64,
}

impl UclampReq {
    /// The requests of a task: the user's values (`sched_setattr()` with
    /// `SCHED_FLAG_UTIL_CLAMP_*`), else the defaults of `uclamp_fork()` /
    /// `__uclamp_update_util_min_rt_default()`: `[0, 1024]` for fair tasks and
    /// `[util_min_rt_default, 1024]` for RT tasks. Values are capped to 1024.
    pub fn for_task(
        is_rt: bool,
        user_min: Option<u64>,
        user_max: Option<u64>,
        sysctl: &UclampSysctl,
    ) -> UclampReq {
        let default_min = if is_rt {
            sysctl.util_min_rt_default
        } else {
            uclamp_none(UclampId::Min)
        };
        UclampReq {
            min: user_min.unwrap_or(default_min).min(SCHED_CAPACITY_SCALE),
            max: user_max
                .unwrap_or(uclamp_none(UclampId::Max))
                .min(SCHED_CAPACITY_SCALE),
        }
    }
}

/// `uclamp_eff_value(p, clamp_id)` via `uclamp_eff_get()` (kernel/sched/core.c, v6.11): the
/// request, restricted by the system default (`uclamp_default[]`).
///
/// Simplified: no task groups (`uclamp_tg_restrict()` returns the task's request).
pub fn uclamp_eff_value(req: &UclampReq, id: UclampId, sysctl: &UclampSysctl) -> u64 {
    match id {
        UclampId::Min => req.min.min(sysctl.util_min),
        UclampId::Max => req.max.min(sysctl.util_max),
    }
}

/// The effective `[UCLAMP_MIN, UCLAMP_MAX]` of a task.
pub fn uclamp_eff(req: &UclampReq, sysctl: &UclampSysctl) -> [u64; 2] {
    [
        uclamp_eff_value(req, UclampId::Min, sysctl),
        uclamp_eff_value(req, UclampId::Max, sysctl),
    ]
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct UclampBucket {
    value: u64,
    tasks: u32,
}

/// The per-rq clamp state (`struct uclamp_rq rq->uclamp[UCLAMP_CNT]` plus
/// `rq->uclamp_flags`): max-aggregation of the clamps of the RUNNABLE tasks, in buckets.
///
/// Models `uclamp_rq_inc_id()`, `uclamp_rq_dec_id()`, `uclamp_rq_max_value()`,
/// `uclamp_idle_value()` and `uclamp_idle_reset()` (kernel/sched/core.c, v6.11), including
/// the kernel's imprecision: a bucket keeps the largest value seen until its last task
/// leaves, and `UCLAMP_MAX` is retained while the rq is idle (`UCLAMP_FLAG_IDLE`).
///
/// The engine calls [`UclampRq::inc`] on enqueue and [`UclampRq::dec`] on dequeue of fair and
/// RT tasks, passing the task's effective clamps (the same values at dequeue as at enqueue),
/// and only while `uclamp_is_used()` (the kernel skips both when the static key is off).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UclampRq {
    buckets: [[UclampBucket; UCLAMP_BUCKETS]; 2],
    value: [u64; 2],
    idle: bool,
}

impl Default for UclampRq {
    fn default() -> Self {
        Self::new()
    }
}

impl UclampRq {
    /// `init_uclamp_rq()`: values `uclamp_none()`, `UCLAMP_FLAG_IDLE` set.
    pub fn new() -> UclampRq {
        UclampRq {
            buckets: [[UclampBucket::default(); UCLAMP_BUCKETS]; 2],
            value: [uclamp_none(UclampId::Min), uclamp_none(UclampId::Max)],
            idle: true,
        }
    }

    /// `uclamp_rq_get(rq, clamp_id)`.
    pub fn get(&self, id: UclampId) -> u64 {
        self.value[id as usize]
    }

    /// `uclamp_rq_is_idle(rq)`: `UCLAMP_FLAG_IDLE` is set (no runnable clamped task).
    pub fn is_idle(&self) -> bool {
        self.idle
    }

    /// `uclamp_rq_inc(rq, p)`: a task with effective clamps `eff` becomes runnable.
    pub fn inc(&mut self, eff: [u64; 2]) {
        for id in [UclampId::Min, UclampId::Max] {
            let v = eff[id as usize];
            let b = &mut self.buckets[id as usize][uclamp_bucket_id(v)];
            b.tasks += 1;
            let first = b.tasks == 1;
            if first || v > b.value {
                b.value = v;
            }
            // uclamp_idle_reset(): reset the retained max-clamp only on idle exit.
            if self.idle {
                self.value[id as usize] = v;
            }
            if v > self.value[id as usize] {
                self.value[id as usize] = v;
            }
        }
        self.idle = false;
    }

    /// `uclamp_rq_dec(rq, p)`: a task with effective clamps `eff` stops being runnable.
    pub fn dec(&mut self, eff: [u64; 2]) {
        for id in [UclampId::Min, UclampId::Max] {
            let v = eff[id as usize];
            let i = id as usize;
            let bid = uclamp_bucket_id(v);
            let b = &mut self.buckets[i][bid];
            b.tasks = b.tasks.saturating_sub(1);
            if b.tasks > 0 {
                continue;
            }
            let bucket_value = b.value;
            if bucket_value >= self.value[i] {
                self.value[i] = self.max_value(id, v);
            }
        }
    }

    /// `uclamp_rq_max_value()`: the value of the top-most non-empty bucket, else
    /// `uclamp_idle_value()` (which sets `UCLAMP_FLAG_IDLE` for `UCLAMP_MAX`).
    fn max_value(&mut self, id: UclampId, clamp_value: u64) -> u64 {
        if let Some(b) = self.buckets[id as usize].iter().rev().find(|b| b.tasks > 0) {
            return b.value;
        }
        match id {
            UclampId::Max => {
                self.idle = true;
                clamp_value
            }
            UclampId::Min => uclamp_none(UclampId::Min),
        }
    }
}

/// `uclamp_rq_util_with(rq, util, p)` (kernel/sched/sched.h, v5.9–v6.7; removed in v6.8 when
/// schedutil moved to `effective_cpu_util()`'s min/max): `util` clamped by the rq's
/// aggregated clamps, max-aggregated with p's effective clamps `p_eff` if p is given.
/// A min ≥ max inversion returns min, as the kernel does.
pub fn uclamp_rq_util_with(
    util: u64,
    rq: &UclampRq,
    p_eff: Option<[u64; 2]>,
    uclamp_used: bool,
) -> u64 {
    if !uclamp_used {
        return util;
    }
    let (mut min_util, mut max_util) = (0, 0);
    let mut skip_rq = false;
    if let Some([pmin, pmax]) = p_eff {
        min_util = pmin;
        max_util = pmax;
        // Ignore the last runnable task's max clamp: this task will reset it.
        skip_rq = rq.is_idle();
    }
    if !skip_rq {
        min_util = min_util.max(rq.get(UclampId::Min));
        max_util = max_util.max(rq.get(UclampId::Max));
    }
    if min_util >= max_util {
        return min_util;
    }
    util.max(min_util).min(max_util)
}

/// The capacity facts of one CPU that fitness decisions read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuCapacity {
    /// `arch_scale_cpu_capacity(cpu)` (`cpu_scale`, the CPU's original capacity).
    pub orig: u64,
    /// `capacity_of(cpu)` = `rq->cpu_capacity`: what is left for CFS (see [`scale_rt_capacity`]).
    pub capacity: u64,
    /// `arch_scale_hw_pressure(cpu)` (thermal pressure before v6.10); 0 without thermal capping.
    pub hw_pressure: u64,
    /// `cpufreq_get_pressure(cpu)` (v6.10+): capacity lost to a policy `max` frequency cap.
    pub cpufreq_pressure: u64,
}

impl CpuCapacity {
    /// A CPU with nothing taken from its capacity: `capacity_of == orig`, no pressure.
    pub fn full(orig: u64) -> CpuCapacity {
        CpuCapacity {
            orig,
            capacity: orig,
            hw_pressure: 0,
            cpufreq_pressure: 0,
        }
    }

    /// `get_actual_cpu_capacity(cpu)` (v6.11): `orig − max(hw pressure, cpufreq pressure)`
    /// (the v6.1 form `capacity_orig − arch_scale_thermal_pressure()` with no cpufreq pressure).
    pub fn actual(&self) -> u64 {
        self.orig
            .saturating_sub(self.hw_pressure.max(self.cpufreq_pressure))
    }
}

/// `scale_rt_capacity(cpu)` as used by `update_cpu_capacity()` (kernel/sched/fair.c, v6.11):
/// the capacity left to CFS once RT, DL and IRQ time is taken out of the actual capacity:
/// `(max − rt − dl) × (max − irq) / max`, and 1 when IRQ or RT+DL use it all (the caller's
/// `if (!capacity) capacity = 1` is included).
pub fn scale_rt_capacity(
    orig: u64,
    hw_pressure: u64,
    cpufreq_pressure: u64,
    util_rt: u64,
    util_dl: u64,
    util_irq: u64,
) -> u64 {
    let max = orig.saturating_sub(hw_pressure.max(cpufreq_pressure));
    if util_irq >= max {
        return 1;
    }
    let used = util_rt + util_dl;
    if used >= max {
        return 1;
    }
    let free = max - used;
    if util_irq == 0 {
        // scale_irq_capacity() with no IRQ time: free × max / max = free exactly (here
        // 0 < free < max ≤ 1024, no overflow); skips a division on the balancer's and the
        // wake-up path's per-CPU reads.
        return free.max(1);
    }
    // scale_irq_capacity(free, irq, max)
    (free * (max - util_irq) / max).max(1)
}

/// `util_fits_cpu(util, uclamp_min, uclamp_max, cpu)` (kernel/sched/fair.c, v6.1+; this is the
/// v6.11 text with `get_actual_cpu_capacity()`).
///
/// Returns 1 if `util` fits `capacity_of(cpu)` with the 20 % margin or p's `uclamp_max` caps
/// it below the CPU's original capacity; −1 if it fits that way but `uclamp_min` asks for more
/// than the CPU can actually deliver; 0 otherwise. Without `uclamp_is_used()` only the first
/// test applies.
pub fn util_fits_cpu(
    util: u64,
    uclamp_min: u64,
    uclamp_max: u64,
    cap: &CpuCapacity,
    uclamp_used: bool,
) -> i32 {
    // Check if the real util fits without any uclamp boost/cap applied.
    let mut fits = fits_capacity(util, cap.capacity);
    if !uclamp_used {
        return i32::from(fits);
    }
    let capacity_orig = cap.orig;
    // A task capped at (or above) the biggest CPU's capacity is not "capped" at all: only a
    // uclamp_max below the CPU's original capacity forces the task to fit.
    let mut uclamp_max_fits =
        capacity_orig == SCHED_CAPACITY_SCALE && uclamp_max == SCHED_CAPACITY_SCALE;
    uclamp_max_fits = !uclamp_max_fits && uclamp_max <= capacity_orig;
    fits = fits || uclamp_max_fits;
    let uclamp_min = uclamp_min.min(uclamp_max);
    if fits && util < uclamp_min && uclamp_min > cap.actual() {
        return -1;
    }
    i32::from(fits)
}

/// `task_fits_cpu(p, cpu)` (v6.1+): `util_fits_cpu(task_util_est(p), uclamp_min(p),
/// uclamp_max(p), cpu) > 0` — the CPU fits the utilization *and* the performance hints.
pub fn task_fits_cpu(
    task_util_est: u64,
    uclamp_min: u64,
    uclamp_max: u64,
    cap: &CpuCapacity,
    uclamp_used: bool,
) -> bool {
    util_fits_cpu(task_util_est, uclamp_min, uclamp_max, cap, uclamp_used) > 0
}

/// `asym_fits_cpu(util, util_min, util_max, cpu)` (v6.1+): [`util_fits_cpu`] `> 0` when
/// `sched_asym_cpucap_active()`, else always true.
pub fn asym_fits_cpu(
    util: u64,
    util_min: u64,
    util_max: u64,
    cap: &CpuCapacity,
    uclamp_used: bool,
    asym_active: bool,
) -> bool {
    if asym_active {
        return util_fits_cpu(util, util_min, util_max, cap, uclamp_used) > 0;
    }
    true
}

/// `uclamp_task_util(p)` (v5.3–v5.19): `clamp(task_util_est(p), uclamp_min, uclamp_max)`,
/// with the kernel `clamp()`'s order (max first, then min: a min > max inversion yields max).
pub fn uclamp_task_util(task_util_est: u64, uclamp_min: u64, uclamp_max: u64) -> u64 {
    task_util_est.max(uclamp_min).min(uclamp_max)
}

/// The pre-v6.0 `task_fits_capacity(p, capacity)` (kernel/sched/fair.c, v5.3–v5.19):
/// `fits_capacity(uclamp_task_util(p), capacity)`. Before v5.3 (no uclamp) pass
/// `uclamp_min = 0, uclamp_max = 1024`, which gives the v4.12–v5.2 form
/// `capacity × 1024 > task_util_est × capacity_margin (1280)`.
pub fn task_fits_capacity(
    task_util_est: u64,
    uclamp_min: u64,
    uclamp_max: u64,
    capacity: u64,
) -> bool {
    fits_capacity(
        uclamp_task_util(task_util_est, uclamp_min, uclamp_max),
        capacity,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cap(orig: u64, capacity: u64, hw: u64) -> CpuCapacity {
        CpuCapacity {
            orig,
            capacity,
            hw_pressure: hw,
            cpufreq_pressure: 0,
        }
    }

    #[test]
    fn bucket_ids() {
        // DIV_ROUND_CLOSEST(1024, 5) = (1024 + 2) / 5 = 205.
        assert_eq!(UCLAMP_BUCKET_DELTA, 205);
        assert_eq!(uclamp_bucket_id(0), 0);
        assert_eq!(uclamp_bucket_id(204), 0);
        assert_eq!(uclamp_bucket_id(205), 1);
        assert_eq!(uclamp_bucket_id(1024), 4); // 1024/205 = 4
    }

    #[test]
    fn util_fits_cpu_table() {
        let little = cap(446, 446, 0);
        let big = cap(1024, 1024, 0);
        // Without uclamp: util*1280 < cap*1024. 356*1280 = 455680 < 446*1024 = 456704 → 1;
        // 357*1280 = 456960 ≥ 456704 → 0.
        assert_eq!(util_fits_cpu(356, 0, 1024, &little, false), 1);
        assert_eq!(util_fits_cpu(357, 0, 1024, &little, false), 0);
        // uclamp not in use: clamps are ignored entirely.
        assert_eq!(util_fits_cpu(600, 0, 300, &little, false), 0);
        // uclamp_max = 300 ≤ 446 caps the task: it fits the LITTLE despite util 600.
        assert_eq!(util_fits_cpu(600, 0, 300, &little, true), 1);
        // uclamp_max = 1024 on a 1024 CPU is "no cap": util 900 (900*1280 = 1152000 ≥
        // 1048576) does not fit.
        assert_eq!(util_fits_cpu(900, 0, 1024, &big, true), 0);
        // uclamp_max = 1000 ≤ 1024 (and ≠ 1024) forces the fit.
        assert_eq!(util_fits_cpu(900, 0, 1000, &big, true), 1);
        // uclamp_min = 600 > LITTLE's actual capacity 446, util 100 < 600: fits by util
        // (100*1280 < 446*1024) but the boost is unreachable → −1.
        assert_eq!(util_fits_cpu(100, 600, 1024, &little, true), -1);
        // Same on the big CPU: 600 ≤ 1024 → 1.
        assert_eq!(util_fits_cpu(100, 600, 1024, &big, true), 1);
        // uclamp_min is first capped by uclamp_max: min(600, 400) = 400 ≤ 446 → 1.
        assert_eq!(util_fits_cpu(100, 600, 400, &little, true), 1);
        // util ≥ uclamp_min: the boost is irrelevant → 1.
        assert_eq!(util_fits_cpu(300, 200, 1024, &little, true), 1);
        // Pressure: actual capacity = 1024 − 200 = 824 < uclamp_min 900 → −1; capacity_of
        // 824 still fits util 100.
        let hot = cap(1024, 824, 200);
        assert_eq!(util_fits_cpu(100, 900, 1024, &hot, true), -1);
        // Does not fit by util (700*1280 = 896000 ≥ 824*1024 = 843776) and uclamp_max is
        // the no-cap 1024 on a 1024 CPU → 0.
        assert_eq!(util_fits_cpu(700, 900, 1024, &hot, true), 0);
        // cpufreq pressure counts when larger than hw pressure.
        let capped = CpuCapacity {
            orig: 1024,
            capacity: 1024,
            hw_pressure: 10,
            cpufreq_pressure: 300,
        };
        assert_eq!(capped.actual(), 724);
        assert_eq!(util_fits_cpu(100, 800, 1024, &capped, true), -1);
    }

    #[test]
    fn task_fits_and_asym() {
        let little = cap(462, 462, 0);
        assert!(!task_fits_cpu(100, 600, 1024, &little, true)); // −1 is not a fit
        assert!(task_fits_cpu(100, 0, 1024, &little, true));
        // Not asymmetric: anything fits.
        assert!(asym_fits_cpu(1000, 0, 1024, &little, false, false));
        assert!(!asym_fits_cpu(1000, 0, 1024, &little, false, true));
    }

    #[test]
    fn old_task_fits_capacity() {
        // 356*1280 = 455680 < 446*1024 = 456704.
        assert!(task_fits_capacity(356, 0, 1024, 446));
        assert!(!task_fits_capacity(357, 0, 1024, 446));
        // clamp(100, 500, 1024) = 500 → 640000 ≥ 456704: a boost makes it not fit.
        assert!(!task_fits_capacity(100, 500, 1024, 446));
        // clamp(900, 0, 300) = 300 → fits.
        assert!(task_fits_capacity(900, 0, 300, 446));
        // inversion min > max: kernel clamp gives max.
        assert_eq!(uclamp_task_util(100, 800, 300), 300);
    }

    #[test]
    fn rt_capacity() {
        // (1024 − 100 − 0) × (1024 − 0) / 1024 = 924.
        assert_eq!(scale_rt_capacity(1024, 0, 0, 100, 0, 0), 924);
        // max = 1024 − 24 = 1000; free = 900; 900 × (1000 − 100) / 1000 = 810.
        assert_eq!(scale_rt_capacity(1024, 24, 0, 100, 0, 100), 810);
        assert_eq!(scale_rt_capacity(446, 0, 0, 446, 0, 0), 1);
        assert_eq!(scale_rt_capacity(446, 0, 0, 0, 0, 500), 1);
        // no IRQ time: the free capacity itself, (446 − 46 − 0) = 400, as
        // (446 − 46) × 446 / 446 gives
        assert_eq!(scale_rt_capacity(446, 0, 0, 46, 0, 0), 400);
        assert_eq!(scale_rt_capacity(446, 0, 0, 445, 0, 0), 1);
    }

    #[test]
    fn uclamp_effective_values() {
        let sys = UclampSysctl::default();
        let rt = UclampReq::for_task(true, None, None, &sys);
        assert_eq!(uclamp_eff(&rt, &sys), [1024, 1024]);
        let cfs = UclampReq::for_task(false, Some(300), None, &sys);
        assert_eq!(uclamp_eff(&cfs, &sys), [300, 1024]);
        let limited = UclampSysctl {
            util_min: 200,
            util_max: 800,
            util_min_rt_default: 1024,
        };
        assert_eq!(uclamp_eff(&cfs, &limited), [200, 800]);
    }

    #[test]
    fn rq_aggregation_and_util_with() {
        let mut rq = UclampRq::new();
        assert!(rq.is_idle());
        rq.inc([300, 700]);
        rq.inc([100, 1024]);
        assert_eq!(rq.get(UclampId::Min), 300);
        assert_eq!(rq.get(UclampId::Max), 1024);
        // 300 and 250 share bucket 1 (205..409): after 300 leaves, the bucket keeps 300
        // while 250 is still in it (the kernel's bucket imprecision).
        rq.inc([250, 500]);
        rq.dec([300, 700]);
        assert_eq!(rq.get(UclampId::Min), 300);
        rq.dec([250, 500]);
        // bucket 1 empty → top non-empty min bucket is bucket 0 (value 100).
        assert_eq!(rq.get(UclampId::Min), 100);
        assert_eq!(rq.get(UclampId::Max), 1024);
        rq.dec([100, 1024]);
        // Last task gone: min → 0, max retained (UCLAMP_FLAG_IDLE).
        assert_eq!(rq.get(UclampId::Min), 0);
        assert_eq!(rq.get(UclampId::Max), 1024);
        assert!(rq.is_idle());
        // Idle rq: p's clamps alone.
        assert_eq!(uclamp_rq_util_with(50, &rq, Some([200, 400]), true), 200);
        assert_eq!(uclamp_rq_util_with(50, &rq, Some([200, 400]), false), 50);
        rq.inc([0, 300]);
        assert_eq!(rq.get(UclampId::Max), 300); // idle exit resets the retained max
                                                // max(p 0, rq 0) = 0 ≤ util; max(p 600, rq 300) = 600 → clamp(800, 0, 600) = 600.
        assert_eq!(uclamp_rq_util_with(800, &rq, Some([0, 600]), true), 600);
        // Inversion: min 700 ≥ max 600 → 700.
        assert_eq!(uclamp_rq_util_with(100, &rq, Some([700, 600]), true), 700);
    }
}
