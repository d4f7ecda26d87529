//! Capacity-aware wake-up, fork and exec placement of the fair class:
//! `select_task_rq_fair()` and everything it calls except `find_energy_efficient_cpu()`
//! (kernel/sched/fair.c, v6.11), as pure functions over a read-only view.
//!
//! The engine implements [`FairWakeView`] (per-CPU facts, computed for the task being
//! placed), supplies the domains as an [`SdTopology`], the task as a [`FairWakeTask`] and the
//! waker as a [`WakeCtx`] plus its [`WakeeState`], and applies the returned
//! [`FairPlacement`]. The v4.12–v5.6 `wake_cap()` behaviour is [`WakeupVariant::WakeCap`].
//!
//! Slow path (fork/exec, and wakeups that `wake_cap()` diverts) lives in
//! [`super::find_dst`]; this module holds the fast path.

use super::domains::{for_each_cpu_wrap, DomainInfo, SdTopology, SD_WAKE_AFFINE};
pub use super::fair_wake::{
    effective_flags, FairWakeTask, FairWakeView, WakeCtx, WF_CURRENT_CPU, WF_EXEC, WF_FORK,
    WF_MIGRATED, WF_SYNC, WF_TTWU,
};
use super::find_dst::sched_balance_find_dst_cpu;
use crate::options::{FairOptions, WakeupVariant};
use crate::sched::capacity::{asym_fits_cpu, task_fits_capacity, util_fits_cpu, CpuCapacity};
use crate::sched::topology::SchedDomains;
use crate::sched::CpuSet;

/// The waker's `wakee_flips` bookkeeping (`current->wakee_flips`, `wakee_flip_decay_ts`,
/// `last_wakee`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WakeeState {
    /// `wakee_flips`.
    pub wakee_flips: u32,
    /// `wakee_flip_decay_ts` (jiffies).
    pub wakee_flip_decay_ts: u64,
    /// `last_wakee` (task id).
    pub last_wakee: Option<usize>,
}

/// The placement-relevant `sched_feat()`s and variants, resolved from options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FairWakeParams {
    /// v6.11 (`select_idle_capacity()`) or v4.12–v5.6 (`wake_cap()`).
    pub variant: WakeupVariant,
    /// `WA_IDLE`.
    pub wa_idle: bool,
    /// `WA_WEIGHT`.
    pub wa_weight: bool,
    /// `WA_BIAS`.
    pub wa_bias: bool,
}

impl Default for FairWakeParams {
    fn default() -> Self {
        FairWakeParams {
            variant: WakeupVariant::V6_11,
            wa_idle: true,
            wa_weight: true,
            wa_bias: true,
        }
    }
}

impl FairWakeParams {
    /// From the `[fair]` options.
    pub fn from_options(o: &FairOptions) -> FairWakeParams {
        FairWakeParams {
            variant: o.wakeup,
            wa_idle: o.wa_idle,
            wa_weight: o.wa_weight,
            wa_bias: o.wa_bias,
        }
    }
}

/// Why [`select_task_rq_fair`] chose its CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum WakeReason {
    /// `WF_CURRENT_CPU`: the waking CPU.
    CurrentCpu,
    /// `find_energy_efficient_cpu()` (the caller's closure).
    EnergyEfficient,
    /// The target (prev or the `wake_affine()` choice) is idle and fits.
    TargetIdle,
    /// prev shares the target's cache, is idle and fits.
    PrevIdle,
    /// A per-CPU kthread woke p on prev: stack on it.
    PerCpuKthread,
    /// `p->recent_used_cpu` is idle, shares the cache and fits.
    RecentUsedCpu,
    /// `select_idle_capacity()`: an idle CPU that fits the task.
    IdleCapacityFit,
    /// `select_idle_capacity()`: no idle CPU fits; the best idle one (−1 over 0, then
    /// the larger capacity).
    IdleCapacityBest,
    /// `select_idle_cpu()`: an idle CPU of the target's LLC.
    IdleSibling,
    /// Nothing idle: the target itself (prev, or this CPU after `wake_affine()`).
    Target,
    /// `sched_balance_find_dst_cpu()` (fork/exec, or a `wake_cap()` wakeup).
    SlowPath,
    /// `select_fallback_rq()`: the choice was not an allowed CPU.
    Fallback,
    /// One allowed CPU: `select_task_rq()` does not ask the class
    /// (`p->nr_cpus_allowed == 1`).
    Pinned,
}

impl WakeReason {
    /// Every reason, in declaration order (`r as usize` indexes it).
    pub const ALL: [WakeReason; 13] = [
        WakeReason::CurrentCpu,
        WakeReason::EnergyEfficient,
        WakeReason::TargetIdle,
        WakeReason::PrevIdle,
        WakeReason::PerCpuKthread,
        WakeReason::RecentUsedCpu,
        WakeReason::IdleCapacityFit,
        WakeReason::IdleCapacityBest,
        WakeReason::IdleSibling,
        WakeReason::Target,
        WakeReason::SlowPath,
        WakeReason::Fallback,
        WakeReason::Pinned,
    ];

    /// snake_case name for traces and counters.
    pub fn as_str(self) -> &'static str {
        match self {
            WakeReason::CurrentCpu => "current_cpu",
            WakeReason::EnergyEfficient => "energy_efficient",
            WakeReason::TargetIdle => "target_idle",
            WakeReason::PrevIdle => "prev_idle",
            WakeReason::PerCpuKthread => "per_cpu_kthread",
            WakeReason::RecentUsedCpu => "recent_used_cpu",
            WakeReason::IdleCapacityFit => "idle_capacity_fit",
            WakeReason::IdleCapacityBest => "idle_capacity_best",
            WakeReason::IdleSibling => "idle_sibling",
            WakeReason::Target => "target",
            WakeReason::SlowPath => "slow_path",
            WakeReason::Fallback => "fallback",
            WakeReason::Pinned => "pinned",
        }
    }
}

/// The decision and the task state it changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FairPlacement {
    /// Chosen CPU.
    pub cpu: usize,
    /// Why.
    pub reason: WakeReason,
    /// `wake_affine()`'s answer when it ran (this CPU or prev).
    pub wake_affine: Option<usize>,
    /// New `p->recent_used_cpu` when `select_idle_sibling()` updated it.
    pub recent_used_cpu: Option<usize>,
}

/// `record_wakee(p)` (kernel/sched/fair.c, v6.11) on the waker's state: halve the flips once
/// when more than a second (HZ jiffies) passed since the last decay, and count a flip when the
/// wakee differs from the last one.
pub fn record_wakee(waker: &mut WakeeState, wakee: usize, jiffies: u64, hz: u64) {
    // time_after(jiffies, decay_ts + HZ)
    if (waker
        .wakee_flip_decay_ts
        .wrapping_add(hz)
        .wrapping_sub(jiffies) as i64)
        < 0
    {
        waker.wakee_flips >>= 1;
        waker.wakee_flip_decay_ts = jiffies;
    }
    if waker.last_wakee != Some(wakee) {
        waker.last_wakee = Some(wakee);
        waker.wakee_flips = waker.wakee_flips.wrapping_add(1);
    }
}

/// `wake_wide(p)` (v6.11): true when the waker/wakee relation is many-to-many at the scale
/// of the LLC: `slave ≥ llc_size && master ≥ slave × llc_size`, master/slave being the larger
/// and smaller of the waker's and wakee's flips.
pub fn wake_wide(waker_flips: u32, wakee_flips: u32, llc_size: usize) -> bool {
    let (master, slave) = if waker_flips < wakee_flips {
        (u64::from(wakee_flips), u64::from(waker_flips))
    } else {
        (u64::from(waker_flips), u64::from(wakee_flips))
    };
    let factor = llc_size as u64;
    !(slave < factor || master < slave * factor)
}

/// `wake_affine_idle()` (v6.11): `Some(cpu)` for a decision, `None` for `nr_cpumask_bits`.
pub fn wake_affine_idle<V: FairWakeView + ?Sized>(
    view: &V,
    topo: &SdTopology,
    this_cpu: usize,
    prev_cpu: usize,
    sync: bool,
) -> Option<usize> {
    // An idle this_cpu means a wakeup from interrupt: only move if cache is shared.
    if view.available_idle_cpu(this_cpu) && topo.cpus_share_cache(this_cpu, prev_cpu) {
        return Some(if view.available_idle_cpu(prev_cpu) {
            prev_cpu
        } else {
            this_cpu
        });
    }
    if sync && view.nr_running(this_cpu) == 1 {
        return Some(this_cpu);
    }
    if view.available_idle_cpu(prev_cpu) {
        return Some(prev_cpu);
    }
    None
}

/// `wake_affine_weight()` (v6.11): this CPU if its capacity-scaled load with p (and, for a
/// sync wakeup, without the waker) is below prev's without p, prev's side biased by half the
/// domain's `imbalance_pct` (WA_BIAS). Signed arithmetic as the kernel's `s64`.
#[allow(clippy::too_many_arguments)] // mirrors the kernel's signature plus the inputs it reads
pub fn wake_affine_weight<V: FairWakeView + ?Sized>(
    view: &V,
    sd: &DomainInfo,
    task_load: u64,
    current_load: u64,
    this_cpu: usize,
    prev_cpu: usize,
    sync: bool,
    wa_bias: bool,
) -> Option<usize> {
    let mut this_eff_load = view.cpu_load(this_cpu) as i64;
    if sync {
        let current_load = current_load as i64;
        if current_load > this_eff_load {
            return Some(this_cpu);
        }
        this_eff_load -= current_load;
    }
    let task_load = task_load as i64;
    this_eff_load += task_load;
    if wa_bias {
        this_eff_load *= 100;
    }
    this_eff_load *= view.capacity(prev_cpu).capacity as i64;

    let mut prev_eff_load = view.cpu_load(prev_cpu) as i64;
    prev_eff_load -= task_load;
    if wa_bias {
        prev_eff_load *= 100 + (i64::from(sd.imbalance_pct) - 100) / 2;
    }
    prev_eff_load *= view.capacity(this_cpu).capacity as i64;
    // With sync, equal loads favour stacking the wakee on the waker.
    if sync {
        prev_eff_load += 1;
    }
    (this_eff_load < prev_eff_load).then_some(this_cpu)
}

/// `wake_affine()` (v6.11): WA_IDLE, then WA_WEIGHT; anything but this CPU means prev.
#[allow(clippy::too_many_arguments)] // the kernel's signature plus the inputs it reads
pub fn wake_affine<V: FairWakeView + ?Sized>(
    view: &V,
    topo: &SdTopology,
    sd: &DomainInfo,
    params: &FairWakeParams,
    task_load: u64,
    current_load: u64,
    this_cpu: usize,
    prev_cpu: usize,
    sync: bool,
) -> usize {
    let mut target = None;
    if params.wa_idle {
        target = wake_affine_idle(view, topo, this_cpu, prev_cpu, sync);
    }
    if params.wa_weight && target.is_none() {
        target = wake_affine_weight(
            view,
            sd,
            task_load,
            current_load,
            this_cpu,
            prev_cpu,
            sync,
            params.wa_bias,
        );
    }
    if target != Some(this_cpu) {
        return prev_cpu;
    }
    this_cpu
}

/// `wake_cap(p, cpu, prev_cpu)` (kernel/sched/fair.c, v5.0–v5.6; v4.12–v4.20 had the same
/// test with `capacity_margin`): on an asymmetric system whose smallest of the two CPUs is
/// more than 1/8 below the largest CPU, true when p does not fit that smaller original
/// capacity (`task_fits_capacity()`, 20 % margin) — which disables wake_affine and sends
/// the wakeup to the slow path.
pub fn wake_cap(
    task: &FairWakeTask,
    cap_this: u64,
    cap_prev: u64,
    max_cpu_capacity: u64,
    asym_active: bool,
) -> bool {
    if !asym_active {
        return false;
    }
    let min_cap = cap_prev.min(cap_this) as i64;
    let max_cap = max_cpu_capacity as i64;
    // Minimum capacity is close to max, no need to abort wake_affine.
    if max_cap - min_cap < max_cap >> 3 {
        return false;
    }
    !task_fits_capacity(
        task.util_est,
        task.uclamp_min,
        task.uclamp_max,
        min_cap as u64,
    )
}

/// `select_idle_capacity(p, sd, target)` (v6.11): scan `sd ∩ p->cpus_ptr` from `target`
/// (wrapping) for an idle (or SCHED_IDLE) CPU; the first whose `util_fits_cpu()` is 1 wins;
/// otherwise the best by fitness (−1 beats 0), then capacity (`capacity_of()`, or
/// `get_actual_cpu_capacity()` for −1). Returns `(cpu, fits)`; `None` if nothing is idle.
pub fn select_idle_capacity<V: FairWakeView + ?Sized>(
    view: &V,
    sd_span: &CpuSet,
    task: &FairWakeTask,
    target: usize,
    nr_cpus: usize,
    uclamp_used: bool,
) -> Option<(usize, i32)> {
    let cpus = sd_span.and(&task.allowed);
    let (mut best_cap, mut best_fits, mut best_cpu) = (0u64, 0i32, None);
    for cpu in for_each_cpu_wrap(&cpus, target, nr_cpus) {
        if !view.available_idle_cpu(cpu) && !view.sched_idle_cpu(cpu) {
            continue;
        }
        let c = view.capacity(cpu);
        let mut cpu_cap = c.capacity;
        let fits = util_fits_cpu(
            task.util_est,
            task.uclamp_min,
            task.uclamp_max,
            &c,
            uclamp_used,
        );
        if fits > 0 {
            return Some((cpu, fits));
        } else if fits < 0 {
            cpu_cap = c.actual();
        }
        if fits < best_fits || (fits == best_fits && cpu_cap > best_cap) {
            best_cap = cpu_cap;
            best_cpu = Some(cpu);
            best_fits = fits;
        }
    }
    best_cpu.map(|c| (c, best_fits))
}

/// `select_idle_cpu(p, sd, has_idle_core = false, target)` (v6.11): the first idle (or
/// SCHED_IDLE) allowed CPU of `sd_llc(target)` after `target` (wrapping), scanning at most
/// `nr_idle_scan` CPUs when SIS_UTIL provides a bound (none when it is 0).
///
/// Simplified: no SMT (`select_idle_core()`/`select_idle_smt()`), no `SD_CLUSTER` first
/// pass, no core-scheduling cookies.
pub fn select_idle_cpu<V: FairWakeView + ?Sized>(
    view: &V,
    llc_span: &CpuSet,
    allowed: &CpuSet,
    target: usize,
    nr_cpus: usize,
) -> Option<usize> {
    let cpus = llc_span.and(allowed);
    // `!--nr` is the condition to stop the scan: nr = nr_idle_scan + 1.
    let mut nr: i64 = match view.nr_idle_scan(target) {
        Some(s) => {
            let nr = i64::from(s) + 1;
            if nr == 1 {
                return None; // an overloaded LLC is unlikely to have an idle CPU
            }
            nr
        }
        None => i64::MAX,
    };
    for cpu in for_each_cpu_wrap(&cpus, target + 1, nr_cpus) {
        nr -= 1;
        if nr <= 0 {
            return None;
        }
        if view.available_idle_cpu(cpu) || view.sched_idle_cpu(cpu) {
            return Some(cpu);
        }
    }
    None
}

/// `update_idle_cpu_scan(env, sum_util)` (v6.11, SIS_UTIL): the number of CPUs
/// `select_idle_cpu()` may scan in an LLC, from the LLC domain's summed `cpu_util_cfs()`
/// during periodic load balance of that domain (not newidle):
/// `x = sum_util / llc_weight`, `y = 1024 − min(x²·pct² / (10000·1024), 1024)`,
/// `nr = y · llc_weight / 1024`.
pub fn update_idle_cpu_scan(sum_util: u64, llc_weight: u64, imbalance_pct: u64) -> u32 {
    let scale = crate::platform::SCHED_CAPACITY_SCALE;
    if llc_weight == 0 {
        return 0;
    }
    let x = sum_util / llc_weight;
    let tmp = (x * x * imbalance_pct * imbalance_pct) / (10000 * scale);
    let tmp = tmp.min(scale);
    let y = scale - tmp;
    (y * llc_weight / scale) as u32
}

/// `update_idle_cpu_scan(env, sum_util)` (kernel/sched/fair.c, v6.11, SIS_UTIL) as
/// `update_sd_lb_stats()` calls it for `env->sd` (`this_cpu`'s domain at `level`) with its
/// summed `group_util`: when that domain is the LLC (`span_weight == sd_llc_size`), has
/// an `sd_llc_shared` (of `dst_cpu`), and the balance is not newidle, write the LLC's
/// `nr_idle_scan` ([`update_idle_cpu_scan`]). The caller checks `sched_feat(SIS_UTIL)`.
pub fn update_llc_idle_cpu_scan(
    doms: &mut SchedDomains,
    (this_cpu, level): (usize, usize),
    dst_cpu: usize,
    newidle: bool,
    sum_util: u64,
) {
    if newidle {
        return;
    }
    let (Some(sd), Some(&llc_weight), Some(&llc_id)) = (
        doms.cpus.get(this_cpu).and_then(|c| c.get(level)),
        doms.sd_llc_size.get(dst_cpu),
        doms.sd_llc_id.get(dst_cpu),
    ) else {
        return;
    };
    if sd.span_weight != llc_weight || doms.nr_idle_scan(dst_cpu).is_none() {
        return;
    }
    let nr = update_idle_cpu_scan(sum_util, u64::from(llc_weight), sd.imbalance_pct);
    doms.nr_idle_scan[llc_id] = nr;
}

/// `select_idle_sibling(p, prev, target)` (v6.11): the fast path.
///
/// With `asym` (v6.11 on an asymmetric system) every candidate must pass
/// `asym_fits_cpu()`, and the scan is `select_idle_capacity()` over `sd_asym_cpucapacity`;
/// without it (symmetric systems, and the pre-v5.7 `wake_cap` variant) it is
/// `select_idle_cpu()` over `sd_llc`. Simplified: no `sched_cluster_active` nuance
/// (`cpus_share_resources()`), so `prev_aff` never defers.
fn select_idle_sibling<V: FairWakeView + ?Sized>(
    view: &V,
    topo: &SdTopology,
    ctx: &WakeCtx,
    task: &FairWakeTask,
    asym: bool,
    target: usize,
) -> FairPlacement {
    let prev = task.prev_cpu;
    let n = topo.nr_cpus();
    let fits = |cpu: usize| {
        asym_fits_cpu(
            task.util_est,
            task.uclamp_min,
            task.uclamp_max,
            &view.capacity(cpu),
            ctx.uclamp_used,
            asym,
        )
    };
    let idle = |cpu: usize| view.available_idle_cpu(cpu) || view.sched_idle_cpu(cpu);
    let done = |cpu, reason, recent| FairPlacement {
        cpu,
        reason,
        wake_affine: None,
        recent_used_cpu: recent,
    };
    if idle(target) && fits(target) {
        return done(target, WakeReason::TargetIdle, None);
    }
    // If the previous CPU is cache affine and idle, don't be stupid.
    if prev != target && topo.cpus_share_cache(prev, target) && idle(prev) && fits(prev) {
        return done(prev, WakeReason::PrevIdle, None);
    }
    // A per-CPU kthread (e.g. an IO completion) on prev: stack the wakee on it.
    if ctx.current_per_cpu_kthread
        && prev == ctx.this_cpu
        && view.nr_running(ctx.this_cpu) <= 1
        && fits(prev)
    {
        return done(prev, WakeReason::PerCpuKthread, None);
    }
    let recent = task.recent_used_cpu;
    let new_recent = Some(prev);
    if recent != prev
        && recent != target
        && recent < n
        && topo.cpus_share_cache(recent, target)
        && idle(recent)
        && task.allowed.contains(recent)
        && fits(recent)
    {
        return done(recent, WakeReason::RecentUsedCpu, new_recent);
    }
    if asym {
        if let Some(sd) = topo.sd_asym_cpucapacity(target) {
            return match select_idle_capacity(view, &sd.span, task, target, n, ctx.uclamp_used) {
                Some((cpu, f)) if f > 0 => done(cpu, WakeReason::IdleCapacityFit, new_recent),
                Some((cpu, _)) => done(cpu, WakeReason::IdleCapacityBest, new_recent),
                None => done(target, WakeReason::Target, new_recent),
            };
        }
    }
    let Some(llc) = topo.sd_llc(target) else {
        return done(target, WakeReason::Target, new_recent);
    };
    match select_idle_cpu(view, &llc.span, &task.allowed, target, n) {
        Some(cpu) => done(cpu, WakeReason::IdleSibling, new_recent),
        None => done(target, WakeReason::Target, new_recent),
    }
}

/// `select_task_rq_fair(p, prev_cpu, wake_flags)` (kernel/sched/fair.c, v6.11), then
/// `select_task_rq()`'s `is_cpu_allowed()` check with `select_fallback_rq()` (core.c).
///
/// On a wakeup (`WF_TTWU`) it runs [`record_wakee`] on `waker`, honours `WF_CURRENT_CPU`,
/// then, if `ctx.try_feec`, calls `feec()` — the engine's `find_energy_efficient_cpu()` —
/// and returns its CPU if it gives one. Then it walks this CPU's domains: the first
/// `SD_WAKE_AFFINE` domain spanning prev takes the wake_affine fast path
/// (`select_idle_sibling()`); fork/exec (and `wake_cap()` wakeups) take the slow path
/// `sched_balance_find_dst_cpu()` from the highest domain carrying the matching
/// `SD_BALANCE_*` flag.
pub fn select_task_rq_fair<V, F>(
    view: &V,
    topo: &SdTopology,
    params: &FairWakeParams,
    ctx: &WakeCtx,
    task: &FairWakeTask,
    waker: &mut WakeeState,
    feec: F,
) -> FairPlacement
where
    V: FairWakeView + ?Sized,
    F: FnOnce() -> Option<usize>,
{
    let p = select_task_rq_fair_inner(view, topo, params, ctx, task, waker, feec);
    if task.allowed.contains(p.cpu) && p.cpu < topo.nr_cpus() {
        return p;
    }
    // select_fallback_rq(): first allowed CPU of prev's node (one node here).
    FairPlacement {
        cpu: task.allowed.first().unwrap_or(task.prev_cpu),
        reason: WakeReason::Fallback,
        ..p
    }
}

fn select_task_rq_fair_inner<V, F>(
    view: &V,
    topo: &SdTopology,
    params: &FairWakeParams,
    ctx: &WakeCtx,
    task: &FairWakeTask,
    waker: &mut WakeeState,
    feec: F,
) -> FairPlacement
where
    V: FairWakeView + ?Sized,
    F: FnOnce() -> Option<usize>,
{
    let wf = task.wake_flags;
    let sync = wf & WF_SYNC != 0 && !ctx.current_exiting;
    let cpu = ctx.this_cpu;
    let prev_cpu = task.prev_cpu;
    let mut new_cpu = prev_cpu;
    let mut want_affine = false;
    // SD_flags and WF_flags share the first nibble.
    let sd_flag = wf & 0xF;
    let wake_cap_variant = params.variant == WakeupVariant::WakeCap;
    let asym = topo.asym_cpucap_active();
    let placed = |cpu, reason| FairPlacement {
        cpu,
        reason,
        wake_affine: None,
        recent_used_cpu: None,
    };

    if wf & WF_TTWU != 0 {
        record_wakee(waker, task.id, ctx.jiffies, ctx.hz);
        if wf & WF_CURRENT_CPU != 0 && task.allowed.contains(cpu) {
            return placed(cpu, WakeReason::CurrentCpu);
        }
        if ctx.try_feec {
            if let Some(c) = feec() {
                return placed(c, WakeReason::EnergyEfficient);
            }
        }
        want_affine = !wake_wide(waker.wakee_flips, task.wakee_flips, topo.sd_llc_size(cpu))
            && task.allowed.contains(cpu);
        if wake_cap_variant {
            let max_cap = (0..topo.nr_cpus())
                .map(|c| view.capacity(c).orig)
                .max()
                .unwrap_or(0);
            want_affine = want_affine
                && !wake_cap(
                    task,
                    view.capacity(cpu).orig,
                    view.capacity(prev_cpu).orig,
                    max_cap,
                    asym,
                );
        }
    }

    let mut sd: Option<usize> = None;
    let mut affine = None;
    for (level, tmp) in topo.domains(cpu).iter().enumerate() {
        let flags = effective_flags(topo, cpu, level, params.variant);
        // If both 'cpu' and 'prev_cpu' are part of this domain, cpu is a valid
        // SD_WAKE_AFFINE target.
        if want_affine && flags & SD_WAKE_AFFINE != 0 && tmp.span.contains(prev_cpu) {
            if cpu != prev_cpu {
                new_cpu = wake_affine(
                    view,
                    topo,
                    tmp,
                    params,
                    task.load,
                    ctx.current_load,
                    cpu,
                    prev_cpu,
                    sync,
                );
                affine = Some(new_cpu);
            }
            sd = None; // Prefer wake_affine over balance flags.
            break;
        }
        if flags & sd_flag != 0 {
            sd = Some(level);
        } else if !want_affine {
            break;
        }
    }

    if let Some(level) = sd {
        let c =
            sched_balance_find_dst_cpu(view, topo, params.variant, ctx, task, cpu, level, sd_flag);
        return placed(c, WakeReason::SlowPath);
    }
    if wf & WF_TTWU != 0 {
        // The pre-v5.7 fast path has no capacity awareness.
        let mut p = select_idle_sibling(view, topo, ctx, task, asym && !wake_cap_variant, new_cpu);
        p.wake_affine = affine;
        return p;
    }
    placed(new_cpu, WakeReason::Target)
}

/// A plain per-CPU table implementing [`FairWakeView`] (tests, and engines that prefer to
/// fill a vector).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WakeCpu {
    /// [`FairWakeView::available_idle_cpu`].
    pub idle: bool,
    /// [`FairWakeView::sched_idle_cpu`].
    pub sched_idle: bool,
    /// [`FairWakeView::nr_running`].
    pub nr_running: u32,
    /// [`FairWakeView::h_nr_running`].
    pub h_nr_running: u32,
    /// [`FairWakeView::cpu_load`] (also used as `cpu_load_without`).
    pub load: u64,
    /// [`FairWakeView::cpu_util_without`].
    pub util: u64,
    /// [`FairWakeView::cpu_runnable_without`].
    pub runnable: u64,
    /// [`FairWakeView::capacity`].
    pub cap: CpuCapacity,
    /// [`FairWakeView::nr_idle_scan`].
    pub nr_idle_scan: Option<u32>,
    /// [`FairWakeView::task_running_on_cpu`].
    pub p_queued_here: bool,
    /// [`FairWakeView::idle_exit_latency`].
    pub exit_latency: Option<u32>,
    /// [`FairWakeView::idle_stamp`].
    pub idle_stamp: u64,
}

impl WakeCpu {
    /// An idle CPU of capacity `orig`.
    pub fn idle(orig: u64) -> WakeCpu {
        WakeCpu {
            idle: true,
            sched_idle: false,
            nr_running: 0,
            h_nr_running: 0,
            load: 0,
            util: 0,
            runnable: 0,
            cap: CpuCapacity::full(orig),
            nr_idle_scan: None,
            p_queued_here: false,
            exit_latency: None,
            idle_stamp: 0,
        }
    }

    /// A CPU of capacity `orig` running `nr` fair tasks with the given load and util.
    pub fn busy(orig: u64, nr: u32, load: u64, util: u64) -> WakeCpu {
        WakeCpu {
            idle: false,
            nr_running: nr,
            h_nr_running: nr,
            load,
            util,
            runnable: util,
            ..WakeCpu::idle(orig)
        }
    }
}

impl FairWakeView for [WakeCpu] {
    fn available_idle_cpu(&self, cpu: usize) -> bool {
        self[cpu].idle
    }
    fn sched_idle_cpu(&self, cpu: usize) -> bool {
        self[cpu].sched_idle
    }
    fn nr_running(&self, cpu: usize) -> u32 {
        self[cpu].nr_running
    }
    fn h_nr_running(&self, cpu: usize) -> u32 {
        self[cpu].h_nr_running
    }
    fn cpu_load(&self, cpu: usize) -> u64 {
        self[cpu].load
    }
    fn capacity(&self, cpu: usize) -> CpuCapacity {
        self[cpu].cap
    }
    fn nr_idle_scan(&self, cpu: usize) -> Option<u32> {
        self[cpu].nr_idle_scan
    }
    fn cpu_load_without(&self, cpu: usize) -> u64 {
        self[cpu].load
    }
    fn cpu_util_without(&self, cpu: usize) -> u64 {
        self[cpu].util
    }
    fn cpu_runnable_without(&self, cpu: usize) -> u64 {
        self[cpu].runnable
    }
    fn task_running_on_cpu(&self, cpu: usize) -> bool {
        self[cpu].p_queued_here
    }
    fn idle_cpu_without(&self, cpu: usize) -> bool {
        self[cpu].idle || (self[cpu].p_queued_here && self[cpu].nr_running == 1)
    }
    fn idle_exit_latency(&self, cpu: usize) -> Option<u32> {
        self[cpu].exit_latency
    }
    fn idle_stamp(&self, cpu: usize) -> u64 {
        self[cpu].idle_stamp
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::domains::SD_ASYM_CPUCAPACITY;
    use crate::policy::find_dst::{update_sg_wakeup_stats, GroupType, SgWakeupStats};
    use std::cell::Cell;

    const HIKEY_CAPS: [u64; 8] = [462, 462, 462, 462, 1024, 1024, 1024, 1024];

    fn hikey_topo() -> SdTopology {
        SdTopology::from_clusters(&[0, 0, 0, 0, 1, 1, 1, 1], &HIKEY_CAPS)
    }

    fn sym_topo() -> SdTopology {
        SdTopology::from_clusters(&[0, 0, 0, 0, 1, 1, 1, 1], &[1024; 8])
    }

    /// CPUs of the given capacities; those in `idle` are idle, the others run one task of
    /// load 1024 and util 300.
    fn cpus(caps: &[u64], idle: &[usize]) -> Vec<WakeCpu> {
        caps.iter()
            .enumerate()
            .map(|(i, &c)| {
                if idle.contains(&i) {
                    WakeCpu::idle(c)
                } else {
                    WakeCpu::busy(c, 1, 1024, 300)
                }
            })
            .collect()
    }

    fn task(prev: usize, util: u64, flags: u32) -> FairWakeTask {
        FairWakeTask {
            id: 42,
            prev_cpu: prev,
            allowed: CpuSet::first_n(8),
            util_est: util,
            uclamp_min: 0,
            uclamp_max: 1024,
            load: 512,
            wakee_flips: 0,
            recent_used_cpu: prev,
            wake_flags: flags,
        }
    }

    fn ctx(this_cpu: usize) -> WakeCtx {
        WakeCtx {
            this_cpu,
            current_load: 1024,
            current_exiting: false,
            current_per_cpu_kthread: false,
            jiffies: 1000,
            hz: 250,
            uclamp_used: false,
            try_feec: false,
        }
    }

    fn select(
        view: &[WakeCpu],
        topo: &SdTopology,
        params: &FairWakeParams,
        ctx: &WakeCtx,
        task: &FairWakeTask,
    ) -> FairPlacement {
        let mut waker = WakeeState::default();
        select_task_rq_fair(view, topo, params, ctx, task, &mut waker, || None)
    }

    #[test]
    fn wake_reason_all_is_indexed_by_discriminant() {
        // the engine counts placements in an array indexed by `r as usize`
        for (i, r) in WakeReason::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i);
        }
        let mut names: Vec<&str> = WakeReason::ALL.iter().map(|r| r.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), WakeReason::ALL.len());
    }

    #[test]
    fn record_wakee_and_wake_wide() {
        let mut w = WakeeState {
            wakee_flips: 0,
            wakee_flip_decay_ts: 1000,
            last_wakee: None,
        };
        record_wakee(&mut w, 1, 1000, 250);
        assert_eq!((w.wakee_flips, w.last_wakee), (1, Some(1)));
        record_wakee(&mut w, 1, 1100, 250); // same wakee: no flip
        assert_eq!(w.wakee_flips, 1);
        record_wakee(&mut w, 2, 1250, 250); // 1250 is not after 1000 + 250: no decay
        record_wakee(&mut w, 3, 1250, 250);
        assert_eq!(w.wakee_flips, 3);
        // 1251 > 1250: halve (3 >> 1 = 1) then count the flip → 2.
        record_wakee(&mut w, 4, 1251, 250);
        assert_eq!((w.wakee_flips, w.wakee_flip_decay_ts), (2, 1251));
        // llc_size 4: slave 4 ≥ 4 but master 8 < 4 × 4 → not wide; 16 ≥ 16 → wide.
        assert!(!wake_wide(8, 4, 4));
        assert!(wake_wide(16, 4, 4));
        assert!(wake_wide(4, 16, 4)); // symmetric in waker/wakee
        assert!(!wake_wide(100, 3, 4)); // slave below the LLC size
    }

    #[test]
    fn wake_affine_idle_and_sync() {
        let topo = sym_topo();
        let sd = &topo.domains(0)[1]; // PKG, imbalance_pct 117
        let p = FairWakeParams::default();
        // this (1) idle and cache-affine with prev (2): prev if idle, else this.
        let v = cpus(&[1024; 8], &[1, 2]);
        assert_eq!(wake_affine(&v[..], &topo, sd, &p, 512, 0, 1, 2, false), 2);
        let v = cpus(&[1024; 8], &[1]);
        assert_eq!(wake_affine(&v[..], &topo, sd, &p, 512, 0, 1, 2, false), 1);
        // Sync wakeup from a CPU running only the waker → this.
        let v = cpus(&[1024; 8], &[]);
        assert_eq!(wake_affine(&v[..], &topo, sd, &p, 512, 1024, 0, 5, true), 0);
        // prev idle (no shared cache with this) → prev.
        let v = cpus(&[1024; 8], &[5]);
        assert_eq!(
            wake_affine(&v[..], &topo, sd, &p, 512, 1024, 0, 5, false),
            5
        );
    }

    #[test]
    fn wake_affine_weight_arithmetic() {
        let topo = sym_topo();
        let sd = &topo.domains(0)[1];
        let p = FairWakeParams::default();
        let mut v = cpus(&[1024; 8], &[]);
        v[0].load = 1024;
        v[5].load = 2048;
        // this = (1024 + 512) × 100 × 1024 = 157286400;
        // prev = (2048 − 512) × (100 + 17/2 = 108) × 1024 = 169869312 → this wins.
        assert_eq!(
            wake_affine_weight(&v[..], sd, 512, 0, 0, 5, false, true),
            Some(0)
        );
        assert_eq!(wake_affine(&v[..], &topo, sd, &p, 512, 0, 0, 5, false), 0);
        // prev load 1500: (1500 − 512) × 108 × 1024 = 109264896 < 157286400 → prev.
        v[5].load = 1500;
        assert_eq!(
            wake_affine_weight(&v[..], sd, 512, 0, 0, 5, false, true),
            None
        );
        assert_eq!(wake_affine(&v[..], &topo, sd, &p, 512, 0, 0, 5, false), 5);
        // Sync: the waker's load is taken out of this: (1024 − 1024 + 512) × 100 ×
        // 1024 = 52428800 < 109264896 + 1 → this. (nr_running 2 keeps WA_IDLE's sync
        // shortcut out of the way.)
        v[0].nr_running = 2;
        assert_eq!(wake_affine(&v[..], &topo, sd, &p, 512, 1024, 0, 5, true), 0);
        // Sync with the waker heavier than the whole rq: this at once.
        v[0].load = 800;
        assert_eq!(
            wake_affine_weight(&v[..], sd, 512, 1024, 0, 5, true, true),
            Some(0)
        );
        // Tie-break without WA_BIAS: this = (1024 − 0 + 0) × 1024 = prev = 1024 × 1024.
        // A sync wakeup adds 1 to prev, so equal loads stack on the waker; without sync
        // the tie keeps prev.
        v[0].load = 1024;
        v[5].load = 1024;
        assert_eq!(
            wake_affine_weight(&v[..], sd, 0, 0, 0, 5, true, false),
            Some(0)
        );
        assert_eq!(
            wake_affine_weight(&v[..], sd, 0, 0, 0, 5, false, false),
            None
        );
    }

    #[test]
    fn affine_wakeup_through_select() {
        // Symmetric 2×4: waker on CPU 0 (sync, only task), p last ran on CPU 5; every CPU
        // busy → wake_affine picks 0, select_idle_sibling finds nothing idle in CPU 0's
        // LLC → target 0.
        let topo = sym_topo();
        let v = cpus(&[1024; 8], &[]);
        let t = task(5, 100, WF_TTWU | WF_SYNC);
        let pl = select(&v, &topo, &FairWakeParams::default(), &ctx(0), &t);
        assert_eq!(
            (pl.cpu, pl.reason, pl.wake_affine),
            (0, WakeReason::Target, Some(0))
        );
        assert_eq!(pl.recent_used_cpu, Some(5));
        // CPU 2 idle: the LLC scan from 1 finds it.
        let v = cpus(&[1024; 8], &[2]);
        let pl = select(&v, &topo, &FairWakeParams::default(), &ctx(0), &t);
        assert_eq!((pl.cpu, pl.reason), (2, WakeReason::IdleSibling));
        // Wide wakeups skip wake_affine: target stays prev (5), busy → scan 6, 7, 4.
        let v = cpus(&[1024; 8], &[2, 7]);
        let mut waker = WakeeState {
            wakee_flips: 64,
            wakee_flip_decay_ts: 1000,
            last_wakee: Some(42),
        };
        let wide = FairWakeTask {
            wakee_flips: 8,
            ..t
        };
        let pl = select_task_rq_fair(
            &v[..],
            &topo,
            &FairWakeParams::default(),
            &ctx(0),
            &wide,
            &mut waker,
            || None,
        );
        assert_eq!(
            (pl.cpu, pl.reason, pl.wake_affine),
            (7, WakeReason::IdleSibling, None)
        );
    }

    #[test]
    fn recent_used_and_prev_idle() {
        let topo = sym_topo();
        // this == prev == 1 busy; recent_used_cpu 3 idle in the same LLC.
        let v = cpus(&[1024; 8], &[3]);
        let t = FairWakeTask {
            recent_used_cpu: 3,
            ..task(1, 100, WF_TTWU)
        };
        let pl = select(&v, &topo, &FairWakeParams::default(), &ctx(1), &t);
        assert_eq!((pl.cpu, pl.reason), (3, WakeReason::RecentUsedCpu));
        assert_eq!(pl.recent_used_cpu, Some(1));
        // this = 0 busy with 2 tasks, prev = 1 idle: WA_IDLE → prev; target idle.
        let mut v = cpus(&[1024; 8], &[1]);
        v[0].nr_running = 2;
        let pl = select(&v, &topo, &FairWakeParams::default(), &ctx(0), &t);
        assert_eq!(
            (pl.cpu, pl.reason, pl.wake_affine),
            (1, WakeReason::TargetIdle, Some(1))
        );
    }

    #[test]
    fn select_idle_capacity_on_hikey960() {
        let topo = hikey_topo();
        let p = FairWakeParams::default();
        let c = ctx(1); // waker on prev: no wake_affine
                        // Small task (100 × 1280 < 462 × 1024): first idle CPU after target 1 → LITTLE 2.
        let v = cpus(&HIKEY_CAPS, &[2, 3, 6]);
        let pl = select(&v, &topo, &p, &c, &task(1, 100, WF_TTWU));
        assert_eq!((pl.cpu, pl.reason), (2, WakeReason::IdleCapacityFit));
        // Big task (600 × 1280 = 768000 ≥ 473088, < 1048576): the idle big 6.
        let pl = select(&v, &topo, &p, &c, &task(1, 600, WF_TTWU));
        assert_eq!((pl.cpu, pl.reason), (6, WakeReason::IdleCapacityFit));
        // Too big for any CPU (900 × 1280 ≥ 1048576): biggest idle CPU, 6.
        let pl = select(&v, &topo, &p, &c, &task(1, 900, WF_TTWU));
        assert_eq!((pl.cpu, pl.reason), (6, WakeReason::IdleCapacityBest));
        // Big task, no idle big: the best idle LITTLE (first of equal capacity: 2).
        let v = cpus(&HIKEY_CAPS, &[2, 3]);
        let pl = select(&v, &topo, &p, &c, &task(1, 600, WF_TTWU));
        assert_eq!((pl.cpu, pl.reason), (2, WakeReason::IdleCapacityBest));
        // Nothing idle: the target (prev 1).
        let v = cpus(&HIKEY_CAPS, &[]);
        let pl = select(&v, &topo, &p, &c, &task(1, 600, WF_TTWU));
        assert_eq!((pl.cpu, pl.reason), (1, WakeReason::Target));
        // Idle prev that the big task does not fit is skipped for an idle big.
        let v = cpus(&HIKEY_CAPS, &[1, 5]);
        let pl = select(&v, &topo, &p, &c, &task(1, 600, WF_TTWU));
        assert_eq!((pl.cpu, pl.reason), (5, WakeReason::IdleCapacityFit));
        // uclamp_min 800 with uclamp in use: LITTLEs give −1, a big gives 1.
        let boosted = FairWakeTask {
            uclamp_min: 800,
            ..task(1, 100, WF_TTWU)
        };
        let cu = WakeCtx {
            uclamp_used: true,
            ..c
        };
        let v = cpus(&HIKEY_CAPS, &[2, 7]);
        let pl = select(&v, &topo, &p, &cu, &boosted);
        assert_eq!((pl.cpu, pl.reason), (7, WakeReason::IdleCapacityFit));
        // No idle big: −1 candidates compared by actual capacity; a hotter LITTLE loses.
        let mut v = cpus(&HIKEY_CAPS, &[2, 3]);
        v[2].cap.hw_pressure = 50;
        let pl = select(&v, &topo, &p, &cu, &boosted);
        assert_eq!((pl.cpu, pl.reason), (3, WakeReason::IdleCapacityBest));
        // Direct call: the fitness value comes back.
        let v = cpus(&HIKEY_CAPS, &[2, 3]);
        assert_eq!(
            select_idle_capacity(&v[..], &CpuSet::first_n(8), &boosted, 1, 8, true),
            Some((2, -1))
        );
    }

    #[test]
    fn wake_cap_versus_v6_11() {
        // hikey960: big task (util 600) last ran on LITTLE 1 (idle); the waker runs on
        // LITTLE 2; bigs 4 (idle since t=100) and 7 (idle since t=500) are free.
        let topo = hikey_topo();
        let mut v = cpus(&HIKEY_CAPS, &[1, 4, 7]);
        v[4].idle_stamp = 100;
        v[7].idle_stamp = 500;
        let t = task(1, 600, WF_TTWU);
        // v6.11: wake_affine (WA_IDLE: prev idle → 1), then select_idle_capacity from 1:
        // 1 does not fit, 4 is the first idle fitting CPU.
        let pl = select(&v, &topo, &FairWakeParams::default(), &ctx(2), &t);
        assert_eq!(
            (pl.cpu, pl.reason, pl.wake_affine),
            (4, WakeReason::IdleCapacityFit, Some(1))
        );
        // wake_cap: min(462, 462) is > 1/8 below 1024 and 600 doesn't fit 462 → no
        // wake_affine; SD_BALANCE_WAKE up to the asymmetric PKG domain → slow path.
        // PKG: local {0-3} is misfit (no CPU fits), {4-7} has spare → idlest; its CPUs 4
        // and 7 are idle with no cpuidle state: the most recently idled, 7. MC of 7: the
        // local group {7} has as many idle CPUs as any other → stay.
        let wc = FairWakeParams {
            variant: WakeupVariant::WakeCap,
            ..FairWakeParams::default()
        };
        let pl = select(&v, &topo, &wc, &ctx(2), &t);
        assert_eq!((pl.cpu, pl.reason), (7, WakeReason::SlowPath));
        // A small task fits min_cap: wake_cap is false and the (capacity-blind) fast path
        // keeps the idle prev.
        let pl = select(&v, &topo, &wc, &ctx(2), &task(1, 100, WF_TTWU));
        assert_eq!((pl.cpu, pl.reason), (1, WakeReason::TargetIdle));
        assert!(wake_cap(&t, 462, 462, 1024, true));
        assert!(!wake_cap(&t, 1024, 462, 1024, false));
        // Capacities within 1/8 of the max: never.
        assert!(!wake_cap(&t, 900, 1024, 1024, true));
    }

    #[test]
    fn fork_slow_path_symmetric() {
        let topo = sym_topo();
        let p = FairWakeParams::default();
        // Cluster 0 all busy; cluster 1 has 6, 7 idle (7 idled last).
        let mut v = cpus(&[1024; 8], &[6, 7]);
        v[6].idle_stamp = 100;
        v[7].idle_stamp = 200;
        let t = task(0, 0, WF_FORK);
        // PKG: {0-3} has spare with 0 idle; {4-7} has spare with 2 idle → idlest.
        // Group CPU: most recently idled 7. MC of 7: {7} has 1 idle, like {6} → stay.
        let pl = select(&v, &topo, &p, &ctx(0), &t);
        assert_eq!((pl.cpu, pl.reason), (7, WakeReason::SlowPath));
        // Shallowest idle state beats recency.
        v[6].exit_latency = Some(10);
        v[7].exit_latency = Some(100);
        let pl = select(&v, &topo, &p, &ctx(0), &t);
        assert_eq!(pl.cpu, 6);
        // Local cluster as idle as the remote one: stay local, then MC picks the idle
        // CPU 2 over busy 0 ({2} before {3} on equal idle count and util).
        let v = cpus(&[1024; 8], &[2, 3, 6, 7]);
        let pl = select(&v, &topo, &p, &ctx(0), &t);
        assert_eq!((pl.cpu, pl.reason), (2, WakeReason::SlowPath));
        // Exec uses SD_BALANCE_EXEC the same way.
        let pl = select(&v, &topo, &p, &ctx(0), &task(0, 0, WF_EXEC));
        assert_eq!(pl.cpu, 2);
    }

    #[test]
    fn fork_slow_path_overloaded() {
        let topo = sym_topo();
        // Every CPU runs 2 tasks with util 1000: groups are overloaded
        // (4 × 1000 × 117 > 4096 × 100). Loads: cluster 0 2048 per CPU, cluster 1 1500
        // (CPU 6: 1400).
        let mut v: Vec<WakeCpu> = (0..8)
            .map(|i| WakeCpu::busy(1024, 2, if i < 4 { 2048 } else { 1500 }, 1000))
            .collect();
        v[6].load = 1400;
        // PKG: local avg_load 8192 × 1024 / 4096 = 2048; remote (4 × 1500 − 100) ×
        // 1024 / 4096 = 1475; imbalance = 1024 × 17 / 100 = 174: 1475 < 2048 + 174 and
        // 100 × 2048 > 117 × 1475 → go remote; least loaded CPU there: 6. MC of 6: local
        // avg 1400 vs 1500: 1500 ≥ 1400 + 174 fails, but 100 × 1400 ≤ 117 × 1500 → stay.
        let pl = select(
            &v,
            &topo,
            &FairWakeParams::default(),
            &ctx(0),
            &task(0, 0, WF_FORK),
        );
        assert_eq!((pl.cpu, pl.reason), (6, WakeReason::SlowPath));
        // Remote only slightly lighter (2000): 100 × 2048 ≤ 117 × 2000 → stay local; MC
        // of 0: all equal → stay on 0.
        for c in &mut v[4..] {
            c.load = 2000;
        }
        let pl = select(
            &v,
            &topo,
            &FairWakeParams::default(),
            &ctx(0),
            &task(0, 0, WF_FORK),
        );
        assert_eq!(pl.cpu, 0);
    }

    #[test]
    fn group_classification() {
        let v = cpus(&[1024; 4], &[3]);
        let t = task(0, 0, WF_FORK);
        let s = update_sg_wakeup_stats_for_test(&v, &t);
        // nr 3 < weight 4 → has spare; 1 idle CPU.
        assert_eq!(
            (s.group_type, s.idle_cpus, s.group_util),
            (GroupType::HasSpare, 1, 900)
        );
        // Two tasks on CPU 0 (util 900), one on each other: nr 5 > 4, util = runnable =
        // 1800. Overloaded needs 4096 × 100 < 1800 × 117 = 210600 (no) or 4096 × 117 <
        // 1800 × 100 (no) → not overloaded; 409600 > 210600 → has spare.
        let mut v = cpus(&[1024; 4], &[]);
        v[0] = WakeCpu::busy(1024, 2, 2048, 900);
        let s = update_sg_wakeup_stats_for_test(&v, &t);
        assert_eq!((s.sum_nr_running, s.group_util), (5, 1800));
        assert_eq!(s.group_type, GroupType::HasSpare);
        // util 1000 per CPU: 4000 × 117 = 468000 > 409600 → overloaded, avg_load
        // = (2048 + 3 × 1024) × 1024 / 4096 = 1280.
        for c in &mut v {
            c.util = 1000;
        }
        let s = update_sg_wakeup_stats_for_test(&v, &t);
        assert_eq!((s.group_type, s.avg_load), (GroupType::Overloaded, 1280));
        // An asymmetric domain marks the group misfit when no CPU fits p (util 400 on
        // 300-capacity CPUs: 512000 ≥ 307200).
        let v = cpus(&[300; 4], &[3]);
        let big = task(0, 400, WF_FORK);
        let s = update_sg_wakeup_stats(
            &v[..],
            &CpuSet::first_n(4),
            SD_ASYM_CPUCAPACITY,
            117,
            &big,
            false,
        );
        assert_eq!(s.group_type, GroupType::MisfitTask);
    }

    fn update_sg_wakeup_stats_for_test(v: &[WakeCpu], t: &FairWakeTask) -> SgWakeupStats {
        update_sg_wakeup_stats(v, &CpuSet::first_n(4), 0, 117, t, false)
    }

    /// `update_idle_cpu_scan()` writes the LLC's shared bound only from a non-newidle
    /// stats pass of the LLC domain itself.
    #[test]
    fn llc_idle_cpu_scan_written_by_the_llc_level_only() {
        let plat = crate::energy::em::tests::juno();
        let mut d = SchedDomains::build(&plat, crate::sched::topology::LbVersion::V5_10, 0);
        // juno LLCs: {0,3,4,5} (weight 4) and {1,2} (weight 2); idle at start.
        assert_eq!((d.nr_idle_scan(3), d.nr_idle_scan(1)), (Some(4), Some(2)));
        // Newidle passes and the PKG level (weight 6) leave it alone.
        update_llc_idle_cpu_scan(&mut d, (0, 0), 0, true, 3 * 1024);
        update_llc_idle_cpu_scan(&mut d, (0, 1), 0, false, 3 * 1024);
        assert_eq!(d.nr_idle_scan(4), Some(4));
        // CPU 3's MC pass with three busy CPUs: x = 768 → y = 238 → 0; shared by the LLC.
        update_llc_idle_cpu_scan(&mut d, (3, 0), 3, false, 3 * 1024);
        assert_eq!((d.nr_idle_scan(0), d.nr_idle_scan(5)), (Some(0), Some(0)));
        assert_eq!(d.nr_idle_scan(2), Some(2));
        // x = 256 → 256² × 117² / 10240000 = 87 → y = 937 → 937 × 4 / 1024 = 3.
        update_llc_idle_cpu_scan(&mut d, (0, 0), 0, false, 1024);
        assert_eq!(d.nr_idle_scan(4), Some(3));
    }

    #[test]
    fn sis_util_scan_bound() {
        // x = 0 → y = 1024 → nr = 4.
        assert_eq!(update_idle_cpu_scan(0, 4, 117), 4);
        // x = 512: 512² × 117² / (10000 × 1024) = 350; y = 674; 674 × 4 / 1024 = 2.
        assert_eq!(update_idle_cpu_scan(2048, 4, 117), 2);
        // x = 900: 1082 → capped at 1024 → y = 0.
        assert_eq!(update_idle_cpu_scan(3600, 4, 117), 0);
        let topo = SdTopology::from_clusters(&[0, 0, 0, 0], &[1024; 4]);
        let llc = topo.sd_llc(0).map(|d| d.span).unwrap_or_default();
        let mut v = cpus(&[1024; 4], &[3]);
        let all = CpuSet::first_n(4);
        // Scan 1, 2, 3 (from target + 1): unbounded finds 3.
        assert_eq!(select_idle_cpu(&v[..], &llc, &all, 0, 4), Some(3));
        // Bound 2: only 1 and 2 are looked at.
        v[0].nr_idle_scan = Some(2);
        assert_eq!(select_idle_cpu(&v[..], &llc, &all, 0, 4), None);
        v[0].nr_idle_scan = Some(3);
        assert_eq!(select_idle_cpu(&v[..], &llc, &all, 0, 4), Some(3));
        v[0].nr_idle_scan = Some(0);
        assert_eq!(select_idle_cpu(&v[..], &llc, &all, 0, 4), None);
    }

    #[test]
    fn feec_hook_current_cpu_and_fallback() {
        let topo = hikey_topo();
        let v = cpus(&HIKEY_CAPS, &[2]);
        let p = FairWakeParams::default();
        let called = Cell::new(false);
        let mut w = WakeeState::default();
        let t = task(1, 100, WF_TTWU);
        // EAS gate closed: feec is not called.
        let pl = select_task_rq_fair(&v[..], &topo, &p, &ctx(1), &t, &mut w, || {
            called.set(true);
            Some(5)
        });
        assert!(!called.get());
        assert_eq!(pl.cpu, 2);
        assert_eq!(w.last_wakee, Some(42)); // record_wakee ran
        let eas = WakeCtx {
            try_feec: true,
            ..ctx(1)
        };
        let pl = select_task_rq_fair(&v[..], &topo, &p, &eas, &t, &mut w, || Some(5));
        assert_eq!((pl.cpu, pl.reason), (5, WakeReason::EnergyEfficient));
        // feec gives up: the usual path.
        let pl = select_task_rq_fair(&v[..], &topo, &p, &eas, &t, &mut w, || None);
        assert_eq!((pl.cpu, pl.reason), (2, WakeReason::IdleCapacityFit));
        // WF_CURRENT_CPU.
        let cur = task(1, 100, WF_TTWU | WF_CURRENT_CPU);
        let pl = select(&v, &topo, &p, &ctx(6), &cur);
        assert_eq!((pl.cpu, pl.reason), (6, WakeReason::CurrentCpu));
        // Affinity allows only CPU 6 (busy): the fast path ends on the disallowed prev →
        // select_fallback_rq() → 6.
        let v = cpus(&HIKEY_CAPS, &[]);
        let pinned = FairWakeTask {
            allowed: CpuSet::from_cpus(&[6]),
            ..task(1, 100, WF_TTWU)
        };
        let pl = select(&v, &topo, &p, &ctx(2), &pinned);
        assert_eq!((pl.cpu, pl.reason), (6, WakeReason::Fallback));
    }
}
