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

use super::domains::{
    for_each_cpu_wrap, wrap_position, DomainInfo, SdTopology, SD_BALANCE_FORK, SD_WAKE_AFFINE,
};
pub use super::fair_wake::{
    effective_flags, effective_flags_in, FairWakeTask, FairWakeView, WakeCtx, WF_CURRENT_CPU,
    WF_EXEC, WF_FORK, WF_MIGRATED, WF_SYNC, WF_TTWU,
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
    /// The path synced p's average to prev's cfs_rq (`sync_entity_load_avg()` in
    /// `find_energy_efficient_cpu()`, v5.6's `wake_cap()`, the slow path of a wakeup, or
    /// `select_idle_sibling()` on an asymmetric system): the engine keeps the synced
    /// average, as the kernel does.
    pub task_synced: bool,
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

/// Whether `wake_cap(p, cpu, prev_cpu)` (kernel/sched/fair.c, v5.0–v5.6) gets past its early
/// returns to `sync_entity_load_avg(&p->se)` and the fitness test: an asymmetric system
/// whose smaller of the two CPUs is more than 1/8 below the largest CPU.
pub fn wake_cap_syncs(
    cap_this: u64,
    cap_prev: u64,
    max_cpu_capacity: u64,
    asym_active: bool,
) -> bool {
    let min_cap = cap_prev.min(cap_this) as i64;
    let max_cap = max_cpu_capacity as i64;
    // Minimum capacity is close to max, no need to abort wake_affine.
    asym_active && max_cap - min_cap >= max_cap >> 3
}

/// `wake_cap(p, cpu, prev_cpu)` (kernel/sched/fair.c, v5.0–v5.6; v4.12–v4.20 had the same
/// test with `capacity_margin`): when [`wake_cap_syncs`], true when p does not fit the
/// smaller original capacity (`task_fits_capacity()`, 20 % margin) — which disables
/// wake_affine and sends the wakeup to the slow path.
pub fn wake_cap(
    task: &FairWakeTask,
    cap_this: u64,
    cap_prev: u64,
    max_cpu_capacity: u64,
    asym_active: bool,
) -> bool {
    wake_cap_syncs(cap_this, cap_prev, max_cpu_capacity, asym_active)
        && !task_fits_capacity(
            task.util_est,
            task.uclamp_min,
            task.uclamp_max,
            cap_prev.min(cap_this),
        )
}

/// `select_idle_capacity(p, sd, target)` (v6.11): scan `sd ∩ p->cpus_ptr` from `target`
/// (wrapping) for an idle (or SCHED_IDLE) CPU; the first whose `util_fits_cpu()` is 1 wins;
/// otherwise the best by fitness (−1 beats 0), then capacity (`capacity_of()`, or
/// `get_actual_cpu_capacity()` for −1). Returns `(cpu, fits)`; `None` if nothing is idle.
///
/// Only the view's [`FairWakeView::idle_candidates`] are tested: the others would be
/// skipped anyway, and the survivors keep their `for_each_cpu_wrap` order.
///
/// The walk is `find_cpu_wrap`'s, word by word, in [`for_each_cpu_wrap`]'s order; debug
/// builds check the result against a walk with [`for_each_cpu_wrap`].
pub fn select_idle_capacity<V: FairWakeView + ?Sized>(
    view: &V,
    sd_span: &CpuSet,
    task: &FairWakeTask,
    target: usize,
    nr_cpus: usize,
    uclamp_used: bool,
) -> Option<(usize, i32)> {
    let cpus = sd_span.and(task.allowed).and(&view.idle_candidates());
    let mut best = IdleCapacityBest::default();
    let fit = find_cpu_wrap(&cpus, target, nr_cpus, |cpu| {
        best.visit(view, task, uclamp_used, cpu)
    });
    let r = fit.or(best.result());
    debug_assert_eq!(
        r,
        select_idle_capacity_walk(view, &cpus, task, target, nr_cpus, uclamp_used)
    );
    r
}

/// What [`select_idle_capacity`]'s loop keeps between CPUs: the best non-fitting candidate
/// so far (`best_fits`, `best_cap`, `best_cpu`).
#[derive(Default)]
struct IdleCapacityBest {
    cap: u64,
    fits: i32,
    cpu: Option<usize>,
}

impl IdleCapacityBest {
    /// The loop's body for `cpu`: `Some` when it is idle and fits (the loop returns it),
    /// else `None`, the best candidate updated.
    #[inline(always)]
    fn visit<V: FairWakeView + ?Sized>(
        &mut self,
        view: &V,
        task: &FairWakeTask,
        uclamp_used: bool,
        cpu: usize,
    ) -> Option<(usize, i32)> {
        if !view.available_idle_cpu(cpu) && !view.sched_idle_cpu(cpu) {
            return None;
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
        if fits < self.fits || (fits == self.fits && cpu_cap > self.cap) {
            self.cap = cpu_cap;
            self.cpu = Some(cpu);
            self.fits = fits;
        }
        None
    }

    /// The best non-fitting candidate, when no CPU fit.
    fn result(&self) -> Option<(usize, i32)> {
        self.cpu.map(|c| (c, self.fits))
    }
}

/// [`select_idle_capacity`] over the candidates `cpus` with [`for_each_cpu_wrap`]: what
/// the word-by-word walk is checked against (in debug builds).
fn select_idle_capacity_walk<V: FairWakeView + ?Sized>(
    view: &V,
    cpus: &CpuSet,
    task: &FairWakeTask,
    target: usize,
    nr_cpus: usize,
    uclamp_used: bool,
) -> Option<(usize, i32)> {
    let mut best = IdleCapacityBest::default();
    for cpu in for_each_cpu_wrap(cpus, target, nr_cpus) {
        if let Some(r) = best.visit(view, task, uclamp_used, cpu) {
            return Some(r);
        }
    }
    best.result()
}

/// Calls `f` on the CPUs of `mask` in [`for_each_cpu_wrap`]`(mask, start, nr_cpus)`'s
/// order (`start` is 0 when it is not below `nr_cpus`; the CPUs from `start` up, then
/// those below it), until `f` returns `Some`, which is returned. Word by word: the
/// start word's CPUs from `start` up, the words above it, the words below it, then the
/// start word's CPUs below `start`.
#[inline(always)]
fn find_cpu_wrap<T>(
    mask: &CpuSet,
    start: usize,
    nr_cpus: usize,
    mut f: impl FnMut(usize) -> Option<T>,
) -> Option<T> {
    const WORDS: usize = crate::sched::cpuset::MAX_CPUS / 64;
    let start = if start >= nr_cpus { 0 } else { start };
    let (start_word, start_bit) = ((start / 64) % WORDS, start % 64);
    let from_start = u64::MAX << start_bit;
    let mut w = start_word;
    let mut bits = mask.word(w) & from_start;
    // the start word twice (its two parts) and every other word once
    let mut left = WORDS + 1;
    loop {
        while bits != 0 {
            let cpu = 64 * w + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if let Some(r) = f(cpu) {
                return Some(r);
            }
        }
        left -= 1;
        if left == 0 {
            return None;
        }
        w = (w + 1) % WORDS;
        bits = mask.word(w);
        if left == 1 {
            bits &= !from_start;
        }
    }
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
    // `!--nr` is the condition to stop the scan: nr = nr_idle_scan + 1, so the scan
    // tests the first nr_idle_scan CPUs of its walk.
    let limit = match view.nr_idle_scan(target) {
        Some(0) => return None, // an overloaded LLC is unlikely to have an idle CPU
        Some(s) => Some(s as usize),
        None => None,
    };
    // Only the idle candidates can end the walk; a candidate counts where it stands
    // in the walk over all of `cpus`.
    let start = target + 1;
    for cpu in for_each_cpu_wrap(&cpus.and(&view.idle_candidates()), start, nr_cpus) {
        if limit.is_some_and(|l| wrap_position(&cpus, start, cpu, nr_cpus) > l) {
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
    // On an asymmetric system p is synced before its utilization is read.
    let done = |cpu, reason, recent| FairPlacement {
        cpu,
        reason,
        wake_affine: None,
        recent_used_cpu: recent,
        task_synced: asym,
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
    match select_idle_cpu(view, &llc.span, task.allowed, target, n) {
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
///
/// p's average is synced (`sync_entity_load_avg()`) only where the kernel does it: in
/// feec (`ctx.feec_syncs`), v5.6's `wake_cap()`, the slow path of a wakeup and
/// `select_idle_sibling()` on an asymmetric system. `wake_affine_weight()` reads the load
/// as it stands at that point ([`FairWakeTask::h_load`]), and the result says whether p
/// ends synced ([`FairPlacement::task_synced`]).
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
    if task.wake_flags & WF_TTWU != 0 {
        record_wakee(waker, task.id, ctx.jiffies, ctx.hz);
    }
    select_task_rq_fair_recorded(view, topo, params, ctx, task, waker.wakee_flips, feec)
}

/// [`select_task_rq_fair`] after its `record_wakee(p)` (which a wake-up, `WF_TTWU`, runs
/// first, before anything else of the function reads the waker's state): the rest of the
/// function, which reads only the waker's `wakee_flips` as `record_wakee()` left it
/// (`waker_flips`, for `wake_wide()`). For a caller that keeps the waker's state where
/// the view cannot be borrowed with it: it runs [`record_wakee`] on that state in place,
/// then this.
pub fn select_task_rq_fair_recorded<V, F>(
    view: &V,
    topo: &SdTopology,
    params: &FairWakeParams,
    ctx: &WakeCtx,
    task: &FairWakeTask,
    waker_flips: u32,
    feec: F,
) -> FairPlacement
where
    V: FairWakeView + ?Sized,
    F: FnOnce() -> Option<usize>,
{
    let p = select_task_rq_fair_inner(view, topo, params, ctx, task, waker_flips, feec);
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
    waker_flips: u32,
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
    // p's average synced to prev's cfs_rq so far.
    let mut synced = false;
    let placed = |cpu, reason, task_synced| FairPlacement {
        cpu,
        reason,
        wake_affine: None,
        recent_used_cpu: None,
        task_synced,
    };

    if wf & WF_TTWU != 0 {
        // record_wakee(p) ran first (select_task_rq_fair())
        if wf & WF_CURRENT_CPU != 0 && task.allowed.contains(cpu) {
            return placed(cpu, WakeReason::CurrentCpu, false);
        }
        if ctx.try_feec {
            synced = ctx.feec_syncs;
            if let Some(c) = feec() {
                return placed(c, WakeReason::EnergyEfficient, synced);
            }
        }
        let wide = wake_wide(waker_flips, task.wakee_flips, topo.sd_llc_size(cpu));
        want_affine = !wide && task.allowed.contains(cpu);
        // v5.6: `!wake_wide(p) && !wake_cap(p, cpu, prev_cpu) && cpumask_test_cpu(...)`.
        if wake_cap_variant && !wide {
            let max_cap = (0..topo.nr_cpus())
                .map(|c| view.capacity(c).orig)
                .max()
                .unwrap_or(0);
            let (cap_this, cap_prev) = (view.capacity(cpu).orig, view.capacity(prev_cpu).orig);
            synced |= wake_cap_syncs(cap_this, cap_prev, max_cap, asym);
            want_affine = want_affine && !wake_cap(task, cap_this, cap_prev, max_cap, asym);
        }
    }

    let mut sd: Option<usize> = None;
    let mut affine = None;
    // the CPU's domains looked up once for the walk (effective_flags() of each level)
    let domains = topo.domains(cpu);
    for (level, tmp) in domains.iter().enumerate() {
        let flags = effective_flags_in(domains, level, params.variant);
        // If both 'cpu' and 'prev_cpu' are part of this domain, cpu is a valid
        // SD_WAKE_AFFINE target.
        if want_affine && flags & SD_WAKE_AFFINE != 0 && tmp.span.contains(prev_cpu) {
            if cpu != prev_cpu {
                new_cpu = wake_affine(
                    view,
                    topo,
                    tmp,
                    params,
                    task.h_load(synced),
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
        // It syncs p unless SD_BALANCE_FORK (and unless sd has none of p's CPUs).
        let syncs =
            sd_flag & SD_BALANCE_FORK == 0 && !domains[level].span.and(task.allowed).is_empty();
        return placed(c, WakeReason::SlowPath, synced || syncs);
    }
    if wf & WF_TTWU != 0 {
        // The pre-v5.7 fast path has no capacity awareness (and no sync).
        let mut p = select_idle_sibling(view, topo, ctx, task, asym && !wake_cap_variant, new_cpu);
        p.wake_affine = affine;
        p.task_synced |= synced;
        return p;
    }
    placed(new_cpu, WakeReason::Target, synced)
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
    fn idle_candidates(&self) -> CpuSet {
        let mut s = CpuSet::EMPTY;
        for (i, c) in self.iter().enumerate() {
            if c.idle || c.sched_idle {
                s.set(i);
            }
        }
        s
    }
}

#[cfg(test)]
mod tests;
