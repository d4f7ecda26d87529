//! The fair class run queue: EEVDF (v6.6–v6.11 rules) and, as an option, the CFS rules of
//! v6.5 and earlier.
//!
//! Models `kernel/sched/fair.c` of v6.11: `avg_vruntime()`, `entity_eligible()`,
//! `update_min_vruntime()`, `update_curr()`/`update_deadline()`, `pick_eevdf()`,
//! `place_entity()`, `update_entity_lag()`, `check_preempt_wakeup_fair()`, `set_next_entity()`
//! with RUN_TO_PARITY. The CFS option models v6.5's `sched_slice()` (its v5.12 BASE_SLICE
//! floor an option, off for v5.11 and earlier; its v5.16 SCHED_IDLE floor another),
//! `check_preempt_tick()`
//! (its v6.3 slice cap an option, off for v6.2 and earlier),
//! `wakeup_preempt_entity()` and `place_entity()` with START_DEBIT and GENTLE_FAIR_SLEEPERS
//! (and v5.16's smaller sleeper credit for SCHED_IDLE, with the SCHED_IDLE floor).
//!
//! Simplifications: no group scheduling (every entity is a task on the root cfs_rq);
//! no DELAY_DEQUEUE / PREEMPT_SHORT (they arrived in v6.12); the CFS option has no
//! next/last/skip buddies. The queue is a vector scanned linearly instead of an augmented
//! rbtree: same decisions, O(n) per pick, which is faster for the queue lengths seen here.
//! It is kept in enqueue order, so that among entities of equal key (deadline for EEVDF,
//! vruntime for CFS) the scans pick the one enqueued first, as the tree's in-order walk
//! does: `rb_add_cached()` puts an entity after those whose key equals its own.

use super::{calc_delta_fair, LoadWeight, NICE_0_LOAD};
use crate::pelt::{init_entity_runnable_average, RemovedLoad, SchedAvg};
use serde::{Deserialize, Serialize};

/// `sysctl_sched_idle_min_granularity` (kernel/sched/fair.c, v5.16–v6.5): 0.75 ms, the
/// floor of a SCHED_IDLE entity's CFS slice. Not scaled with the CPU count: `update_sysctl()`
/// scales `sched_min_granularity`, `sched_latency` and `sched_wakeup_granularity` only.
pub const SYSCTL_SCHED_IDLE_MIN_GRANULARITY: u64 = 750_000;

/// Which fair-class rules run.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum FairVariant {
    /// EEVDF (v6.6+), the default.
    #[default]
    Eevdf,
    /// CFS as of v6.5 (vruntime leftmost, sched_latency slices, wakeup granularity).
    Cfs,
}

/// Resolved fair-class parameters (already multiplied by the tunable scaling factor).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FairParams {
    /// Rules.
    pub variant: FairVariant,
    /// EEVDF `sysctl_sched_base_slice` (ns).
    pub base_slice: u64,
    /// RUN_TO_PARITY.
    pub run_to_parity: bool,
    /// PLACE_LAG.
    pub place_lag: bool,
    /// PLACE_DEADLINE_INITIAL.
    pub place_deadline_initial: bool,
    /// WAKEUP_PREEMPTION.
    pub wakeup_preemption: bool,
    /// CFS `sysctl_sched_latency` (ns).
    pub sched_latency: u64,
    /// CFS `sysctl_sched_min_granularity` (ns).
    pub min_granularity: u64,
    /// CFS `sysctl_sched_wakeup_granularity` (ns).
    pub wakeup_granularity: u64,
    /// CFS `sched_nr_latency`.
    pub nr_latency: u64,
    /// CFS GENTLE_FAIR_SLEEPERS.
    pub gentle_fair_sleepers: bool,
    /// CFS START_DEBIT.
    pub start_debit: bool,
    /// CFS `check_preempt_tick()` caps the ideal slice at `sysctl_sched_latency` (v6.3–v6.5).
    pub tick_slice_cap: bool,
    /// CFS BASE_SLICE: `sched_slice()` floored at `sysctl_sched_min_granularity` (v5.12–v6.5).
    pub cfs_base_slice: bool,
    /// CFS SCHED_IDLE slices (v5.16–v6.5): a SCHED_IDLE entity's BASE_SLICE floor is
    /// [`SYSCTL_SCHED_IDLE_MIN_GRANULARITY`] beside non-idle entities, and its sleeper credit
    /// in `place_entity()` is `sysctl_sched_min_granularity` instead of `sysctl_sched_latency`.
    pub idle_min_granularity: bool,
    /// `TICK_NSEC`.
    pub tick_nsec: u64,
}

/// Per-task fair-class state (`struct sched_entity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedEntity {
    /// Load weight.
    pub load: LoadWeight,
    /// Virtual runtime.
    pub vruntime: u64,
    /// EEVDF virtual deadline.
    pub deadline: u64,
    /// EEVDF lag saved at dequeue (virtual time).
    pub vlag: i64,
    /// Requested slice (ns).
    pub slice: u64,
    /// Total execution time (ns).
    pub sum_exec_runtime: u64,
    /// `sum_exec_runtime` when last picked.
    pub prev_sum_exec_runtime: u64,
    /// When the current execution stint was last accounted.
    pub exec_start: u64,
    /// Whether queued (or running) on a cfs_rq.
    pub on_rq: bool,
    /// PELT signals (with util_est).
    pub avg: SchedAvg,
    /// `se_is_idle(se)`: the task has SCHED_IDLE (`task_has_idle_policy()`, the
    /// `CONFIG_FAIR_GROUP_SCHED` form for a task entity), kept with its policy by the engine.
    pub idle: bool,
}

impl SchedEntity {
    /// A fresh entity (`__sched_fork()` + `init_entity_runnable_average()`).
    pub fn new(load: LoadWeight, slice: u64) -> SchedEntity {
        let avg = init_entity_runnable_average(load.weight);
        SchedEntity {
            load,
            vruntime: 0,
            deadline: 0,
            vlag: 0,
            slice,
            sum_exec_runtime: 0,
            prev_sum_exec_runtime: 0,
            exec_start: 0,
            on_rq: false,
            avg,
            idle: false,
        }
    }
}

/// A fair run queue (`struct cfs_rq`), root level only.
#[derive(Debug, Clone, Default)]
pub struct CfsRq {
    /// The running entity, if it belongs to this class.
    pub curr: Option<usize>,
    /// Queued entities, not including `curr`, in the order they were enqueued (the tree's
    /// order among equal keys).
    pub queue: Vec<usize>,
    /// `load.weight`: sum of weights of queued entities including curr.
    pub load_weight: u64,
    /// `nr_running` (queued + curr).
    pub nr_running: u32,
    /// `min_vruntime` (EEVDF's v0; CFS's floor).
    pub min_vruntime: u64,
    /// PELT signals of the root cfs_rq.
    pub avg: SchedAvg,
    /// Load of tasks that left while blocked, subtracted at the next update.
    pub removed: RemovedLoad,
    /// `cfs_rq->avg_vruntime`: Σ `key(vruntime, min_vruntime) * weight` over `queue` (not
    /// curr), kept by [`CfsRq::avg_vruntime_add`], [`CfsRq::avg_vruntime_sub`] and the
    /// moves of `min_vruntime`; exact in `i128`.
    avg_vruntime_sum: i128,
    /// `cfs_rq->avg_load`: Σ `weight` over `queue` (not curr). An `i64`, as the kernel's
    /// `unsigned long`: a product with a key is then one widening multiplication.
    avg_load: i64,
}

/// `(s64)(v - v0)`: `v`'s place relative to `v0` (`entity_key()`, `vruntime_gt()`).
#[inline]
fn vkey(v: u64, v0: u64) -> i64 {
    v.wrapping_sub(v0) as i64
}

#[inline]
fn key(v: u64, v0: u64) -> i128 {
    i128::from(vkey(v, v0))
}

/// A weight as the sums' `i64` (weights are at most 88,761).
#[inline]
fn weight(se: &SchedEntity) -> i64 {
    se.load.weight as i64
}

impl CfsRq {
    /// Takes `se` out of `queue`, the others keeping their order; whether it was there. The
    /// last entry is popped: `Vec::remove` would call `memmove` for nothing.
    fn queue_remove(&mut self, se: usize) -> bool {
        match self.queue.iter().position(|&i| i == se) {
            Some(pos) if pos + 1 == self.queue.len() => {
                self.queue.pop();
                true
            }
            Some(pos) => {
                self.queue.remove(pos);
                true
            }
            None => false,
        }
    }

    /// `avg_vruntime_add()` (kernel/sched/fair.c, v6.11): `se` joins `queue`.
    fn avg_vruntime_add(&mut self, ents: &[SchedEntity], se: usize) {
        let w = weight(&ents[se]);
        self.avg_vruntime_sum += key(ents[se].vruntime, self.min_vruntime) * i128::from(w);
        self.avg_load += w;
    }

    /// `avg_vruntime_sub()` (kernel/sched/fair.c, v6.11): `se` leaves `queue`.
    fn avg_vruntime_sub(&mut self, ents: &[SchedEntity], se: usize) {
        self.avg_vruntime_sub_of(&ents[se]);
    }

    /// [`CfsRq::avg_vruntime_sub`] of the entity `e`.
    #[inline(always)]
    fn avg_vruntime_sub_of(&mut self, e: &SchedEntity) {
        let w = weight(e);
        self.avg_vruntime_sum -= key(e.vruntime, self.min_vruntime) * i128::from(w);
        self.avg_load -= w;
    }

    /// Sum of weights and weighted keys over queued entities plus curr when on_rq
    /// (`avg_vruntime()`'s `avg` and `load` before the division): the kept sums of the
    /// queue, plus curr's term.
    fn sums(&self, ents: &[SchedEntity]) -> (i128, i64) {
        debug_assert_eq!(
            (self.avg_vruntime_sum, self.avg_load),
            self.queue_sums(ents),
            "the kept avg_vruntime sums equal a recomputation"
        );
        let (mut avg, mut load) = (self.avg_vruntime_sum, self.avg_load);
        if let Some(c) = self.curr {
            let se = &ents[c];
            if se.on_rq {
                let w = weight(se);
                avg += key(se.vruntime, self.min_vruntime) * i128::from(w);
                load += w;
            }
        }
        (avg, load)
    }

    /// The queue's sums recomputed, which the kept ones must equal (debug builds).
    fn queue_sums(&self, ents: &[SchedEntity]) -> (i128, i64) {
        self.queue.iter().fold((0, 0), |(avg, load), &i| {
            let w = weight(&ents[i]);
            let term = key(ents[i].vruntime, self.min_vruntime) * i128::from(w);
            (avg + term, load + w)
        })
    }

    /// `avg_vruntime()`: the weighted average vruntime V, rounded toward −∞. Inline for
    /// an empty queue (most calls), where V is curr's vruntime when curr is queued (its
    /// key times its weight over its weight: exact), else `min_vruntime` (no load).
    /// `#[inline(always)]`: with `#[inline]` LLVM kept it out of line, and each of its
    /// calls (two per wake-up and sleep: `place_entity()`, `update_entity_lag()`) paid a
    /// call for a few loads; the queue's case is `CfsRq::avg_vruntime_of_sums()`, out of
    /// line.
    #[inline(always)]
    pub fn avg_vruntime(&self, ents: &[SchedEntity]) -> u64 {
        if self.queue.is_empty() {
            let v = match self.curr {
                Some(c) if ents[c].on_rq => ents[c].vruntime,
                _ => self.min_vruntime,
            };
            debug_assert_eq!(v, self.avg_vruntime_of_sums(ents));
            return v;
        }
        self.avg_vruntime_of_sums(ents)
    }

    /// `avg_vruntime()` from the kept sums and curr's term.
    #[inline(never)]
    fn avg_vruntime_of_sums(&self, ents: &[SchedEntity]) -> u64 {
        let (mut avg, load) = self.sums(ents);
        if load != 0 {
            if avg < 0 {
                avg -= i128::from(load - 1);
            }
            // i64 division when it fits (it nearly always does): same result, far cheaper.
            avg = match i64::try_from(avg) {
                Ok(a) => i128::from(a / load),
                _ => avg / i128::from(load),
            };
        }
        self.min_vruntime.wrapping_add(avg as i64 as u64)
    }

    /// `entity_eligible()`: lag ≥ 0, tested exactly in integers.
    pub fn entity_eligible(&self, ents: &[SchedEntity], se: usize) -> bool {
        let (avg, load) = self.sums(ents);
        avg >= key(ents[se].vruntime, self.min_vruntime) * i128::from(load)
    }

    /// `update_min_vruntime()`: v0 only moves forward. Inline for an empty queue (most
    /// calls: the running entity alone), where v0 moves to curr's vruntime if curr is
    /// queued and ahead, and `avg_vruntime_update()` leaves the kept sums, which are 0.
    #[inline]
    pub fn update_min_vruntime(&mut self, ents: &[SchedEntity]) {
        if !self.queue.is_empty() {
            self.update_min_vruntime_queued(ents);
            return;
        }
        debug_assert_eq!((self.avg_vruntime_sum, self.avg_load), (0, 0));
        if let Some(c) = self.curr {
            let v = ents[c].vruntime;
            if ents[c].on_rq && vkey(v, self.min_vruntime) > 0 {
                self.min_vruntime = v;
            }
        }
    }

    /// [`CfsRq::update_min_vruntime`] with entities queued: the leftmost's vruntime, or
    /// curr's when it is queued and before it.
    fn update_min_vruntime_queued(&mut self, ents: &[SchedEntity]) {
        let mut vruntime = self.min_vruntime;
        let mut curr = None;
        if let Some(c) = self.curr {
            if ents[c].on_rq {
                vruntime = ents[c].vruntime;
                curr = Some(c);
            }
        }
        let leftmost = self
            .queue
            .iter()
            .map(|&i| ents[i].vruntime)
            .min_by_key(|&v| vkey(v, self.min_vruntime));
        if let Some(lv) = leftmost {
            if curr.is_none() || vkey(lv, vruntime) < 0 {
                vruntime = lv;
            }
        }
        // __update_min_vruntime(): avg_vruntime_update() keeps the sum's keys relative to
        // the new v0 (exact: every key stays within i64)
        let delta = vkey(vruntime, self.min_vruntime);
        if delta > 0 {
            self.avg_vruntime_sum -= i128::from(self.avg_load) * i128::from(delta);
            self.min_vruntime = vruntime;
        }
    }

    /// `update_curr()` for the fair class: charges `now - exec_start` to curr.
    /// Returns `(delta_exec, resched)`; `resched` is EEVDF's `update_deadline()` verdict.
    /// The kernel's early return (no curr, or `delta_exec <= 0`: a second update at the
    /// same time, as in an enqueue right after a wake-up's) is tested inline at the
    /// callers (on `periodic`, 259 K of 705 K calls returned at once, after the prologue of
    /// an out-of-line call before); the charge, `CfsRq::update_curr_charge`, is inline as
    /// well (out of line, it saved and restored five registers at each call).
    #[inline(always)]
    pub fn update_curr(
        &mut self,
        ents: &mut [SchedEntity],
        now: u64,
        p: &FairParams,
    ) -> (u64, bool) {
        let Some(c) = self.curr else {
            return (0, false);
        };
        if now <= ents[c].exec_start {
            return (0, false); // now.saturating_sub(exec_start) == 0
        }
        self.update_curr_charge(ents, c, now, p)
    }

    /// The body of [`CfsRq::update_curr`] for curr `c` with `now > exec_start`.
    #[inline(always)]
    fn update_curr_charge(
        &mut self,
        ents: &mut [SchedEntity],
        c: usize,
        now: u64,
        p: &FairParams,
    ) -> (u64, bool) {
        let se = &mut ents[c];
        let delta = now - se.exec_start;
        se.exec_start = now;
        se.sum_exec_runtime += delta;
        se.vruntime = se.vruntime.wrapping_add(calc_delta_fair(delta, &se.load));
        let mut resched = false;
        if p.variant == FairVariant::Eevdf && vkey(se.vruntime, se.deadline) >= 0 {
            // update_deadline(): a new request; resched if others are queued.
            se.deadline = se
                .vruntime
                .wrapping_add(calc_delta_fair(se.slice, &se.load));
            resched = self.nr_running > 1;
        }
        self.update_min_vruntime(ents);
        (delta, resched)
    }

    /// Picks the next entity: `pick_eevdf()` for EEVDF, the leftmost vruntime for CFS.
    /// Inlined at its callers with `pick_eevdf()`'s return for one entity or none (most
    /// picks: on `periodic` the running task alone, or an empty queue), so such a pick
    /// does not pay two calls' prologues; the scan of a longer queue and CFS's pick are
    /// out of line.
    #[inline(always)]
    pub fn pick_next(&self, ents: &[SchedEntity], p: &FairParams) -> Option<usize> {
        match p.variant {
            FairVariant::Eevdf => self.pick_eevdf(ents, p, true),
            FairVariant::Cfs => self.pick_next_cfs(ents),
        }
    }

    /// `pick_next_entity()` of CFS (v6.5): the leftmost, the first enqueued of equal
    /// vruntime; curr only if strictly before it (`entity_before()`).
    #[inline(never)]
    fn pick_next_cfs(&self, ents: &[SchedEntity]) -> Option<usize> {
        let mut left: Option<usize> = None;
        for &i in &self.queue {
            if left.is_none_or(|b| vkey(ents[i].vruntime, ents[b].vruntime) < 0) {
                left = Some(i);
            }
        }
        match (left, self.curr.filter(|&c| ents[c].on_rq)) {
            (None, c) => c,
            (Some(l), Some(c)) if vkey(ents[c].vruntime, ents[l].vruntime) < 0 => Some(c),
            (l, _) => l,
        }
    }

    /// `pick_eevdf()` (v6.11): earliest eligible virtual deadline, with RUN_TO_PARITY. Of
    /// equal deadlines the first enqueued wins (the tree's in-order walk), and curr only
    /// when strictly earlier (`entity_before()`). Its first return, `nr_running == 1`
    /// ("we can safely skip eligibility check if there is only one entity"; here also
    /// for none, where the scan would find nothing), is inlined at the callers; the rest
    /// is `CfsRq::pick_eevdf_scan`, out of line.
    #[inline(always)]
    pub fn pick_eevdf(&self, ents: &[SchedEntity], p: &FairParams, protect: bool) -> Option<usize> {
        if self.nr_running <= 1 {
            // the one entity, or none (an empty queue: the scan finds nothing)
            let curr = self.curr.filter(|&c| ents[c].on_rq);
            return curr.or_else(|| self.queue.first().copied());
        }
        self.pick_eevdf_scan(ents, p, protect)
    }

    /// [`CfsRq::pick_eevdf`] with two entities or more queued (curr included).
    #[inline(never)]
    fn pick_eevdf_scan(
        &self,
        ents: &[SchedEntity],
        p: &FairParams,
        protect: bool,
    ) -> Option<usize> {
        let mut curr = self.curr.filter(|&c| ents[c].on_rq);
        if let Some(c) = curr {
            if !self.entity_eligible(ents, c) {
                curr = None;
            }
        }
        if protect && p.run_to_parity {
            if let Some(c) = curr {
                if ents[c].vlag == ents[c].deadline as i64 {
                    return Some(c);
                }
            }
        }
        let (avg, load) = self.sums(ents);
        let load = i128::from(load);
        let mut best: Option<usize> = None;
        for &i in &self.queue {
            let se = &ents[i];
            if avg < key(se.vruntime, self.min_vruntime) * load {
                continue;
            }
            match best {
                None => best = Some(i),
                Some(b) if vkey(se.deadline, ents[b].deadline) < 0 => best = Some(i),
                _ => {}
            }
        }
        match (best, curr) {
            (None, c) => c,
            (Some(b), Some(c)) if vkey(ents[c].deadline, ents[b].deadline) < 0 => Some(c),
            (b, _) => b,
        }
    }

    /// `sched_idle_cfs_rq()` (kernel/sched/fair.c, v5.16–v6.5): the queue has entities and
    /// all are SCHED_IDLE (`cfs_rq->nr_running == cfs_rq->idle_nr_running`, curr included
    /// while on_rq).
    pub fn sched_idle_cfs_rq(&self, ents: &[SchedEntity]) -> bool {
        let curr = self
            .curr
            .filter(|&c| ents[c].on_rq && !self.queue.contains(&c));
        let idle = self
            .queue
            .iter()
            .chain(curr.iter())
            .filter(|&&i| ents[i].idle);
        self.nr_running > 0 && idle.count() == self.nr_running as usize
    }

    /// `sched_slice()` of CFS (kernel/sched/fair.c, v6.5) for `se` once enqueued: its
    /// weight's share of `__sched_period()`, with BASE_SLICE (`cfs_base_slice`, v5.12–v6.5)
    /// at least `sysctl_sched_min_granularity`; v5.11 and earlier have no floor (v4.20,
    /// v5.10: `return slice` after the `__calc_delta()` walk). With `idle_min_granularity`
    /// (v5.16–v6.5) the floor of a SCHED_IDLE `se` is `sysctl_sched_idle_min_granularity`
    /// unless the queue (as it is, without `se` if not yet enqueued) is all SCHED_IDLE:
    /// `se_is_idle(init_se) && !sched_idle_cfs_rq(cfs_rq)`.
    pub fn sched_slice(&self, ents: &[SchedEntity], se: usize, p: &FairParams) -> u64 {
        let mut nr = u64::from(self.nr_running);
        let mut load = self.load_weight;
        if !ents[se].on_rq {
            nr += 1;
            load += ents[se].load.weight;
        }
        let period = if nr > p.nr_latency {
            nr * p.min_granularity
        } else {
            p.sched_latency
        };
        let lw = LoadWeight {
            weight: load.max(1),
            inv_weight: (u64::from(u32::MAX) / load.max(1)).min(u64::from(u32::MAX)) as u32,
        };
        let slice = super::calc_delta(period, ents[se].load.weight, &lw);
        if !p.cfs_base_slice {
            return slice;
        }
        // BASE_SLICE: never less than the minimum granularity (the SCHED_IDLE one for a
        // SCHED_IDLE entity among others, v5.16+).
        let min_gran = if p.idle_min_granularity && ents[se].idle && !self.sched_idle_cfs_rq(ents) {
            SYSCTL_SCHED_IDLE_MIN_GRANULARITY
        } else {
            p.min_granularity
        };
        slice.max(min_gran)
    }

    /// `place_entity()`: EEVDF lag-preserving placement, or CFS's min_vruntime rules, where
    /// a waking entity is credited `sysctl_sched_latency` (halved by GENTLE_FAIR_SLEEPERS),
    /// or `sysctl_sched_min_granularity` for a SCHED_IDLE one with `idle_min_granularity`
    /// (v5.16–v6.5: `if (se_is_idle(se)) thresh = sysctl_sched_min_granularity`).
    /// `initial` is ENQUEUE_INITIAL (a new task). Inlined at its callers (the enqueue, CFS's
    /// fork) for EEVDF, whose placement on an empty queue (most wake-ups) is a few loads
    /// and stores; CFS's rules are `CfsRq::place_entity_cfs()`, out of line.
    #[inline(always)]
    pub fn place_entity(
        &mut self,
        ents: &mut [SchedEntity],
        se: usize,
        initial: bool,
        p: &FairParams,
    ) {
        match p.variant {
            FairVariant::Eevdf => {
                let v = self.avg_vruntime(ents);
                let mut lag: i64 = 0;
                let queued_or_curr = self.nr_running > 0;
                if p.place_lag && queued_or_curr {
                    let e = &ents[se];
                    let (_, load) = self.sums(ents);
                    let l = i128::from(e.vlag) * i128::from(load + weight(e));
                    let load = if load == 0 { 1 } else { load };
                    // i64 division when it fits: the same quotient (both truncate)
                    lag = match i64::try_from(l) {
                        Ok(l) => l / load,
                        Err(_) => (l / i128::from(load)) as i64,
                    };
                }
                let e = &mut ents[se];
                e.vruntime = v.wrapping_sub(lag as u64);
                let mut vslice = calc_delta_fair(e.slice, &e.load);
                if p.place_deadline_initial && initial {
                    vslice /= 2;
                }
                e.deadline = e.vruntime.wrapping_add(vslice);
            }
            FairVariant::Cfs => self.place_entity_cfs(ents, se, initial, p),
        }
    }

    /// [`CfsRq::place_entity`] under the CFS rules.
    #[inline(never)]
    fn place_entity_cfs(
        &mut self,
        ents: &mut [SchedEntity],
        se: usize,
        initial: bool,
        p: &FairParams,
    ) {
        let mut vruntime = self.min_vruntime;
        if initial && p.start_debit {
            // sched_vslice(): calc_delta_fair(sched_slice(), se)
            let slice = self.sched_slice(ents, se, p);
            vruntime = vruntime.wrapping_add(calc_delta_fair(slice, &ents[se].load));
        }
        if !initial {
            let mut thresh = if p.idle_min_granularity && ents[se].idle {
                p.min_granularity
            } else {
                p.sched_latency
            };
            if p.gentle_fair_sleepers {
                thresh >>= 1;
            }
            vruntime = vruntime.wrapping_sub(thresh);
        }
        let e = &mut ents[se];
        // ensure we never gain time by being placed backwards (a new entity:
        // `__sched_fork()`'s 0, or its parent's vruntime at fork)
        if vkey(vruntime, e.vruntime) > 0 {
            e.vruntime = vruntime;
        }
    }

    /// Adds `se` to the queue (`enqueue_entity()` bookkeeping, after placement).
    pub fn enqueue_entity(&mut self, ents: &mut [SchedEntity], se: usize) {
        let e = &mut ents[se];
        debug_assert!(!e.on_rq);
        e.on_rq = true;
        self.load_weight += e.load.weight;
        self.nr_running += 1;
        if self.curr != Some(se) {
            self.queue.push(se);
            self.avg_vruntime_add(ents, se);
        }
    }

    /// `update_entity_lag()`: saves the clamped lag at dequeue (EEVDF).
    pub fn update_entity_lag(&self, ents: &mut [SchedEntity], se: usize, p: &FairParams) {
        let v = self.avg_vruntime(ents);
        let e = &mut ents[se];
        let lag = v.wrapping_sub(e.vruntime) as i64;
        let limit = calc_delta_fair((2 * e.slice).max(p.tick_nsec), &e.load) as i64;
        e.vlag = lag.clamp(-limit, limit);
    }

    /// Removes `se` (`dequeue_entity()` bookkeeping). `sleep` is DEQUEUE_SLEEP. For CFS a
    /// migrating entity's vruntime is made relative to this queue's min_vruntime.
    /// `save_only` is DEQUEUE_SAVE without DEQUEUE_MOVE (`set_user_nice()`, a
    /// `__sched_setscheduler()` that keeps the priority): the entity is put back at once,
    /// so min_vruntime is not advanced past it (kernel/sched/fair.c, `dequeue_entity()`,
    /// v6.11, and the CFS of earlier profiles alike: "we'll be penalized").
    pub fn dequeue_entity(
        &mut self,
        ents: &mut [SchedEntity],
        se: usize,
        sleep: bool,
        save_only: bool,
        p: &FairParams,
    ) {
        if p.variant == FairVariant::Eevdf {
            self.update_entity_lag(ents, se, p);
        }
        let e = &mut ents[se];
        debug_assert!(e.on_rq);
        e.on_rq = false;
        self.load_weight -= e.load.weight;
        self.nr_running -= 1;
        if self.queue_remove(se) {
            self.avg_vruntime_sub(ents, se);
        }
        let e = &mut ents[se];
        if p.variant == FairVariant::Cfs && !sleep {
            e.vruntime = e.vruntime.wrapping_sub(self.min_vruntime);
        }
        if !save_only {
            self.update_min_vruntime(ents);
        }
    }

    /// CFS `task_fork_fair()` (kernel/sched/fair.c, v3.10–v6.5) on the forking CPU's queue,
    /// after its `update_curr()`: the child `se` starts at curr's vruntime (the parent's,
    /// when it is a fair task), `place_entity(cfs_rq, se, 1)` puts it at least at
    /// `min_vruntime` plus START_DEBIT's `sched_vslice()` of this queue with the child
    /// added, and it is left relative to this queue's `min_vruntime`: `wake_up_new_task()`
    /// enqueues it without ENQUEUE_WAKEUP, so `enqueue_entity()` adds the target queue's
    /// ([`CfsRq::cfs_migrate_in`]) and does not place it again. `sysctl_sched_child_runs_first`
    /// is 0, its default: no swap with the parent.
    pub fn task_fork_fair(&mut self, ents: &mut [SchedEntity], se: usize, p: &FairParams) {
        if let Some(c) = self.curr {
            ents[se].vruntime = ents[c].vruntime;
        }
        self.place_entity(ents, se, true, p);
        ents[se].vruntime = ents[se].vruntime.wrapping_sub(self.min_vruntime);
    }

    /// CFS: a migrated entity's relative vruntime made absolute on this queue.
    pub fn cfs_migrate_in(&self, ents: &mut [SchedEntity], se: usize) {
        let e = &mut ents[se];
        e.vruntime = e.vruntime.wrapping_add(self.min_vruntime);
    }

    /// `set_next_entity()`: `se` becomes curr (taken out of the queue); RUN_TO_PARITY marks
    /// the slice as protected by storing the deadline in `vlag`.
    /// The entity is looked up once, before `queue_remove()` (which reads only the queue),
    /// and `avg_vruntime_sub()`'s term taken from it.
    pub fn set_next_entity(&mut self, ents: &mut [SchedEntity], se: usize, now: u64) {
        let e = &mut ents[se];
        if self.queue_remove(se) {
            self.avg_vruntime_sub_of(e);
        }
        self.curr = Some(se);
        e.exec_start = now;
        e.prev_sum_exec_runtime = e.sum_exec_runtime;
        e.vlag = e.deadline as i64;
    }

    /// `put_prev_entity()`: curr goes back into the queue if still on_rq.
    pub fn put_prev_entity(&mut self, ents: &[SchedEntity], se: usize) {
        if self.curr == Some(se) {
            self.curr = None;
            if ents[se].on_rq {
                self.queue.push(se);
                self.avg_vruntime_add(ents, se);
            }
        }
    }

    /// Whether a tick should reschedule curr: CFS `check_preempt_tick()` (kernel/sched/fair.c;
    /// EEVDF decides in `update_curr()`). With `tick_slice_cap` the ideal runtime is
    /// `min(sched_slice(), sysctl_sched_latency)`, as from v6.3 ("sched/fair: Limit sched
    /// slice duration") to v6.5; v6.2 and earlier use `sched_slice()` alone.
    pub fn check_preempt_tick(&self, ents: &[SchedEntity], p: &FairParams) -> bool {
        if p.variant != FairVariant::Cfs || self.nr_running <= 1 {
            return false;
        }
        let Some(c) = self.curr else { return false };
        let curr = &ents[c];
        let mut ideal = self.sched_slice(ents, c, p);
        if p.tick_slice_cap {
            ideal = ideal.min(p.sched_latency);
        }
        let ran = curr.sum_exec_runtime - curr.prev_sum_exec_runtime;
        if ran > ideal {
            return true;
        }
        if ran < p.min_granularity {
            return false;
        }
        let Some(left) = self
            .queue
            .iter()
            .copied()
            .min_by_key(|&i| vkey(ents[i].vruntime, self.min_vruntime))
        else {
            return false;
        };
        let delta = key(curr.vruntime, ents[left].vruntime);
        delta > i128::from(ideal)
    }

    /// `check_preempt_wakeup_fair()`: whether waking `wakee` should preempt curr.
    /// `curr_is_idle_policy`/`wakee_is_idle_policy`: SCHED_IDLE; `wakee_normal`: SCHED_NORMAL.
    pub fn check_preempt_wakeup(
        &self,
        ents: &[SchedEntity],
        wakee: usize,
        curr_idle_policy: bool,
        wakee_idle_policy: bool,
        wakee_normal: bool,
        p: &FairParams,
    ) -> bool {
        let Some(c) = self.curr else { return true };
        if c == wakee || !p.wakeup_preemption {
            // sched_feat(WAKEUP_PREEMPTION) is tested before the SCHED_IDLE rule (v6.11)
            return false;
        }
        if curr_idle_policy && !wakee_idle_policy {
            return true;
        }
        if !wakee_normal {
            return false;
        }
        match p.variant {
            FairVariant::Eevdf => self.pick_eevdf(ents, p, true) == Some(wakee),
            FairVariant::Cfs => {
                // wakeup_preempt_entity(): vdiff > wakeup_gran(se) where gran is scaled by
                // the wakee's weight.
                let vdiff = key(ents[c].vruntime, ents[wakee].vruntime);
                if vdiff <= 0 {
                    return false;
                }
                let gran = calc_delta_fair(p.wakeup_granularity, &ents[wakee].load);
                vdiff > i128::from(gran)
            }
        }
    }

    /// Total weight check for tests: NICE_0 equivalents queued.
    pub fn nr_nice0(&self) -> u64 {
        self.load_weight / NICE_0_LOAD
    }
}

#[cfg(test)]
mod tests;
