//! The schedutil governor (kernel/sched/cpufreq_schedutil.c, v6.8–v6.11; the ≈v5.10 form
//! as `cpufreq.schedutil_version = "v5_x"`), as one [`SugovPolicy`] per cpufreq policy.
//!
//! # How the engine calls it
//!
//! * Build one [`SugovPolicy::new`] per performance domain when the governor is
//!   schedutil (`sugov_init()` + `sugov_start()`).
//! * At every `cpufreq_update_util(rq, flags)` hook (spec §7.1, §13: root cfs_rq PELT
//!   change on enqueue/dequeue/tick/attach/detach/blocked decay, RT/DL (de)queue, iowait
//!   wake-up with [`SCHED_CPUFREQ_IOWAIT`]) call [`SugovPolicy::update`] with one
//!   [`SugovCpuInput`] per CPU of the policy (position = index in `PerfDomain::cpus`).
//! * Apply the returned [`FreqRequest`]: `FastSwitch` (`policy->cur` changes in scheduler
//!   context; trace `cpu_frequency`), `Target` (slow path: the engine completes the
//!   transition one transition latency later, then calls [`SugovPolicy::transition_done`],
//!   which may return a further `Target`), `Queued`/`Unchanged` (nothing to do).
//! * Call [`SugovPolicy::limits_changed`] when policy limits change (`sugov_limits()`).
//!
//! Simplifications: policy `min`/`max` are the usable OPP range (nothing changes them, so
//! the limits change that matters is `ignore_dl_rate_limit()`'s); `need_freq_update`
//! follows a driver without `CPUFREQ_NEED_UPDATE_LIMITS`; the `v5_x` form keeps v6.11's
//! busy-hold rule (v5.10 reset `cached_raw_freq` to 0 and did not test
//! `need_freq_update` there); the slow path
//! holds `work_in_progress` until the transition completes (the kernel clears it when the
//! kthread starts, then serialises on `work_lock`: the observable effect, a request made
//! during a transition being applied after it, is the same); no `adjust_perf` drivers;
//! the kthread's own CPU time is not charged.

use super::{effective_cpu_util, schedutil_cpu_util, uclamp_rq_util_with, CpuUtilType, RqSignals};
use crate::energy::em::EmPerfDomain;
use crate::platform::{PerfDomain, SCHED_CAPACITY_SCALE, SCHED_CAPACITY_SHIFT};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `IOWAIT_BOOST_MIN` = `SCHED_CAPACITY_SCALE / 8` (v5.8+).
pub const IOWAIT_BOOST_MIN: u64 = SCHED_CAPACITY_SCALE / 8;
/// `SCHED_CPUFREQ_IOWAIT` (include/linux/sched/cpufreq.h).
pub const SCHED_CPUFREQ_IOWAIT: u32 = 1 << 0;
/// `LATENCY_MULTIPLIER` (include/linux/cpufreq.h, ≤ v6.9).
pub const LATENCY_MULTIPLIER: u64 = 1000;

/// Which schedutil performance estimation to model (`cpufreq.schedutil_version`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
pub enum SchedutilVersion {
    /// v6.8+ ("sched/cpufreq: Rework schedutil governor performance estimation"):
    /// `cpu_util_cfs_boost()`, `effective_cpu_util()` with min/max, iowait boost max'ed into
    /// util, headroom in `sugov_effective_cpu_perf()`.
    #[default]
    #[serde(rename = "v6_8")]
    V6_8,
    /// ≈v5.10–v6.7: `schedutil_cpu_util(FREQUENCY_UTIL)` (uclamp applied, DL bandwidth
    /// added, RT ⇒ max), headroom in `get_next_freq()`; its CFS input as
    /// [`SugovCfsUtil`] picks (`cpu_util_cfs_boost()` from v6.5).
    #[serde(rename = "v5_x")]
    V5,
}

/// Which CFS utilisation `sugov_get_util()` reads (`cpufreq.schedutil_cfs_util`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
pub enum SugovCfsUtil {
    /// v6.5+ ("sched/fair, cpufreq: Introduce 'runnable boosting'", 7d0583cf9ec7):
    /// `cpu_util_cfs_boost()`, `max(util_avg, runnable_avg, util_est)` capped at the CPU's
    /// capacity. The default (v6.11; v6.6 too).
    #[default]
    #[serde(rename = "boost")]
    Boost,
    /// ≤ v6.4: `cpu_util_cfs()`, `max(util_avg, util_est)` capped at the CPU's capacity.
    #[serde(rename = "cfs")]
    Cfs,
}

/// Which `cpufreq_policy_transition_delay_us()` gives the default `rate_limit_us`
/// (drivers/cpufreq/cpufreq.c), `cpufreq.rate_limit_default`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
pub enum TransitionDelayVersion {
    /// v4.14–v6.8: `min(latency_us × LATENCY_MULTIPLIER, 10 ms)`, 1 ms without latency.
    #[serde(rename = "v4_14")]
    V4_14,
    /// v6.9–v6.11 ("cpufreq: Change default transition delay to 2ms"): latency above 2 ms
    /// as is, else `min(latency_us × 1000, 2 ms)`. The default (v6.11, read in 6.11.11).
    #[default]
    #[serde(rename = "v6_9")]
    V6_9,
    /// v6.12+ ("cpufreq: Remove LATENCY_MULTIPLIER"): `latency_us × 1.5` (`l + l >> 1`).
    #[serde(rename = "v6_12", alias = "v6_10")]
    V6_12,
    /// The v6.12 form capped at 10 ms again (2025 stable fix "add the 10 ms cap on
    /// transition delay back").
    #[serde(rename = "v6_12_capped", alias = "v6_10_capped")]
    V6_12Capped,
}

/// `cpufreq_policy_transition_delay_us(policy)`: the default `rate_limit_us`.
/// `transition_delay_us` is the driver's `policy->transition_delay_us` (0 = unset).
pub fn cpufreq_policy_transition_delay_us(
    transition_latency_ns: u64,
    transition_delay_us: u64,
    version: TransitionDelayVersion,
) -> u64 {
    if transition_delay_us != 0 {
        return transition_delay_us;
    }
    let lat = transition_latency_ns / 1000;
    if lat == 0 {
        return LATENCY_MULTIPLIER; // = USEC_PER_MSEC in the newer code
    }
    match version {
        TransitionDelayVersion::V4_14 => (lat * LATENCY_MULTIPLIER).min(10_000),
        TransitionDelayVersion::V6_9 => {
            if lat > 2_000 {
                lat
            } else {
                (lat * LATENCY_MULTIPLIER).min(2_000)
            }
        }
        TransitionDelayVersion::V6_12 => lat + (lat >> 1),
        TransitionDelayVersion::V6_12Capped => (lat + (lat >> 1)).min(10_000),
    }
}

/// `map_util_perf(util)` = `util + util / 4` (include/linux/sched/cpufreq.h): 1.25 headroom.
pub fn map_util_perf(util: u64) -> u64 {
    util + (util >> 2)
}

/// `map_util_freq(util, freq, cap)` = `freq × util / cap` (v6.0+, no headroom).
pub fn map_util_freq(util: u64, freq: u64, cap: u64) -> u64 {
    if cap == 0 {
        return freq;
    }
    // the kernel's product fits 64 bits for every real frequency: no 128-bit division
    // (a library call) unless it does not
    match freq.checked_mul(util) {
        Some(x) => x / cap,
        None => ((u128::from(freq) * u128::from(util)) / u128::from(cap)) as u64,
    }
}

/// `sugov_effective_cpu_perf(cpu, actual, min, max)` (v6.8+): `max(min, min(1.25·actual,
/// max))`.
pub fn sugov_effective_cpu_perf(actual: u64, min: u64, max: u64) -> u64 {
    let actual = map_util_perf(actual);
    let max = if actual < max { actual } else { max };
    min.max(max)
}

/// Governor parameters of one policy (resolved from options and the platform).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SugovParams {
    /// Estimation form.
    pub version: SchedutilVersion,
    /// The CFS utilisation `sugov_get_util()` reads.
    pub cfs_util: SugovCfsUtil,
    /// `rate_limit_us` tunable.
    pub rate_limit_us: u64,
    /// Driver supports `fast_switch` (`policy->fast_switch_enabled`).
    pub fast_switch: bool,
    /// `TICK_NSEC` (iowait boost reset window).
    pub tick_nsec: u64,
    /// `arch_scale_freq_invariant()`.
    pub freq_invariant: bool,
}

/// What one CPU of the policy looks like at an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SugovCpuInput {
    /// RT/DL/IRQ signals and rq clamps.
    pub rq: RqSignals,
    /// `cpu_util_cfs(cpu)` (util_est included).
    pub util_cfs: u64,
    /// `cpu_util_cfs_boost(cpu)` (max with runnable, v6.5+).
    pub util_cfs_boost: u64,
    /// `uclamp_is_used()`.
    pub uclamp_used: bool,
    /// `tick_nohz_get_idle_calls_cpu(cpu)`: how many times the CPU entered idle.
    pub idle_calls: u64,
}

/// Where the governor reads its policy's CPUs, by index `j` in `PerfDomain::cpus` order:
/// read lazily, so that an update the rate limit turns away reads only the calling CPU's
/// `bw_dl`, as `sugov_update_*()` does before `sugov_should_update_freq()`.
pub trait SugovInputs {
    /// What CPU `j` of the policy looks like now.
    fn input(&self, j: usize) -> SugovCpuInput;
    /// Its `cpu_bw_dl()`, all that is read before the rate limit.
    fn bw_dl(&self, j: usize) -> u64 {
        self.input(j).rq.bw_dl
    }
    /// What a shared policy's aggregation reads of CPU `j`: its [`SugovCpuInput`], of which
    /// `idle_calls` (read by a one-CPU policy's busy hold alone) may be left 0.
    fn shared_input(&self, j: usize) -> SugovCpuInput {
        self.input(j)
    }
    /// What [`SugovPolicy`]'s `bw_min` alone reads of CPU `j`: its [`SugovCpuInput`], of
    /// which `util_cfs`, `util_cfs_boost` and `idle_calls` (not read for `bw_min`) may be
    /// left 0.
    fn bw_input(&self, j: usize) -> SugovCpuInput {
        self.input(j)
    }
    /// The CPUs of the policy in word `w` (bit `j` for the `64 w + j`-th) whose
    /// [`SugovCpuInput`] (but for `idle_calls`, which the shared policy does not read) may
    /// have changed since the previous [`SugovPolicy::update`] of this policy, or `None`
    /// when the caller does not track it (every CPU may have). A shared policy keeps the
    /// `sugov_get_util()` result of the other CPUs from an earlier aggregation instead of
    /// reading them again.
    fn changed(&self, _w: usize) -> Option<u64> {
        None
    }
}

impl SugovInputs for [SugovCpuInput] {
    fn input(&self, j: usize) -> SugovCpuInput {
        self[j]
    }
}

impl<const N: usize> SugovInputs for [SugovCpuInput; N] {
    fn input(&self, j: usize) -> SugovCpuInput {
        self[j]
    }
}

/// Per-CPU governor state (`struct sugov_cpu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SugovCpu {
    /// `iowait_boost` (capacity scale of 1024, not yet scaled to the CPU).
    pub iowait_boost: u64,
    /// `iowait_boost_pending`.
    pub iowait_boost_pending: bool,
    /// `last_update` (ns).
    pub last_update: u64,
    /// `util`: the last computed performance request.
    pub util: u64,
    /// `bw_min` (v6.8) / `bw_dl` (v5.x).
    pub bw_min: u64,
    /// `saved_idle_calls`.
    pub saved_idle_calls: u64,
}

pub use super::governor::FreqRequest;

/// `cpufreq_driver_test_flags(CPUFREQ_NEED_UPDATE_LIMITS)` for the modelled drivers: only
/// intel_pstate and amd-pstate set the flag in v6.11; cpufreq-dt, scpi, vexpress-spc and
/// apple-soc do not. `sugov_start()` and `sugov_update_next_freq()` set
/// `need_freq_update` to it.
const NEED_UPDATE_LIMITS: bool = false;

/// The words of a policy's CPU sets ([`SugovPolicy::stale`], [`SugovPolicy::boosted`]):
/// a policy has at most [`crate::sched::cpuset::MAX_CPUS`] CPUs.
const POLICY_WORDS: usize = crate::sched::cpuset::MAX_CPUS / 64;

/// The word and the bit of the `j`-th CPU of a policy in its CPU sets (the word taken
/// modulo [`POLICY_WORDS`], which `j` < `MAX_CPUS` leaves as it is: no bounds check).
#[inline(always)]
fn word_bit(j: usize) -> (usize, u64) {
    ((j / 64) % POLICY_WORDS, 1u64 << (j % 64))
}

/// One schedutil policy (`struct sugov_policy` + its `sugov_cpu`s).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SugovPolicy {
    cpus: Vec<usize>,
    sg_cpu: Vec<SugovCpu>,
    /// (kHz, inefficient) of the usable OPPs, ascending.
    opps: Vec<(u64, bool)>,
    /// `cpuinfo.max_freq` = `capacity_freq_ref`.
    max_freq_khz: u64,
    /// `arch_scale_cpu_capacity()` of the policy's CPUs.
    max_cap: u64,
    params: SugovParams,
    /// The CPUs (word `j / 64`, bit `j % 64` for the `j`-th) whose `sg_cpu` `util` and
    /// `bw_min` the next aggregation computes again: their inputs changed
    /// ([`SugovInputs::changed`]), an iowait boost went into them, or they were never
    /// computed. On the one-OPP path ([`SugovPolicy::update_at_one_freq`]), which computes
    /// `bw_min` alone, the CPUs whose `bw_min` inputs changed.
    stale: [u64; POLICY_WORDS],
    /// The CPUs that may hold an iowait boost (every one that does, and maybe others).
    boosted: [u64; POLICY_WORDS],
    /// The bits of the policy's CPUs (what [`SugovPolicy::stale`] and
    /// [`SugovPolicy::boosted`] can mark), constant for the policy.
    valid: [u64; POLICY_WORDS],
    /// The words of those sets that the policy's CPUs use (`⌈CPUs / 64⌉`).
    words: usize,
    /// The largest `util` of `sg_cpu`, when not [`SugovPolicy::max_stale`]: what
    /// `sugov_next_freq_shared()`'s loop finds, kept as the CPUs' `util` change.
    max_util: u64,
    /// The CPU that held [`SugovPolicy::max_util`] got a lower `util`: the largest is
    /// found again over every CPU at the next aggregation.
    max_stale: bool,
    /// The one frequency `cpufreq_driver_resolve_freq()` can return (a policy of one usable
    /// OPP; `cpuinfo.max_freq` without any): `get_next_freq()` returns it whatever the
    /// utilisation once `next_freq` is it ([`SugovPolicy::update_at`]).
    only_freq: Option<u64>,
    /// [`SugovPolicy::only_freq`] of a shared policy of at most 64 CPUs, and `u64::MAX`
    /// (which is no frequency in kHz) for the others: [`SugovPolicy::at_one_freq`] is
    /// `next_freq` equal to it, one comparison.
    one_freq: u64,
    freq_update_delay_ns: u64,
    last_freq_update_time: u64,
    next_freq: u64,
    cached_raw_freq: u64,
    /// The utilisation the last `get_next_freq()` was given, when the policy is
    /// frequency-invariant (its reference frequency, `cpuinfo.max_freq`, is then fixed) and
    /// `cached_raw_freq` has not been put back since (the single-CPU busy hold); else
    /// `u64::MAX`, which no utilisation is. `get_next_freq()` of that utilisation finds its
    /// raw frequency equal to `cached_raw_freq` ([`SugovPolicy::shared_next_freq`]).
    raw_util: u64,
    limits_changed: bool,
    need_freq_update: bool,
    work_in_progress: bool,
    in_flight: Option<u64>,
    cur: u64,
}

impl SugovPolicy {
    /// `sugov_init()` + `sugov_start()` + `sugov_limits()` (as `cpufreq_start_governor()`
    /// calls them, v6.11) for `pd` whose CPUs have capacity `max_cap`, starting at
    /// `cur_khz` (within the limits, so `cpufreq_policy_apply_limits()` does nothing): the
    /// first update passes with `need_freq_update`, so it commits even a request computed
    /// from no utilization. With an EM that marks inefficient states, the cpufreq table is
    /// marked too and resolution skips them (`em_cpufreq_update_efficiencies()`).
    pub fn new(
        pd: &PerfDomain,
        max_cap: u64,
        em: Option<&EmPerfDomain>,
        params: SugovParams,
        cur_khz: u64,
    ) -> SugovPolicy {
        let ineff = |khz: u64| {
            em.filter(|e| e.skip_inefficiencies)
                .is_some_and(|e| e.table.iter().any(|s| s.frequency == khz && s.inefficient))
        };
        let mut sg = SugovPolicy {
            cpus: pd.cpus.clone(),
            sg_cpu: vec![SugovCpu::default(); pd.cpus.len()],
            opps: pd
                .usable_opps()
                .iter()
                .map(|o| (o.freq_khz, ineff(o.freq_khz)))
                .collect(),
            max_freq_khz: pd.max_freq_khz,
            max_cap: max_cap.max(1),
            params,
            stale: [u64::MAX; POLICY_WORDS],
            boosted: [0; POLICY_WORDS],
            valid: std::array::from_fn(|w| {
                let n = pd.cpus.len().saturating_sub(64 * w);
                if n >= 64 {
                    u64::MAX
                } else {
                    (1 << n) - 1
                }
            }),
            words: pd.cpus.len().div_ceil(64).clamp(1, POLICY_WORDS),
            max_util: 0,
            max_stale: false,
            only_freq: None,
            one_freq: u64::MAX,
            freq_update_delay_ns: params.rate_limit_us.saturating_mul(1000),
            last_freq_update_time: 0,
            next_freq: 0,
            cached_raw_freq: 0,
            raw_util: u64::MAX,
            // sugov_start() clears it, then cpufreq_start_governor() calls
            // governor->limits() = sugov_limits(), which sets it (cpufreq.c, v6.11)
            limits_changed: true,
            need_freq_update: NEED_UPDATE_LIMITS,
            work_in_progress: false,
            in_flight: None,
            cur: cur_khz,
        };
        if sg.opps.len() <= 1 {
            sg.only_freq = Some(sg.resolve_freq(0));
            if sg.words == 1 && sg.cpus.len() > 1 {
                sg.one_freq = sg.resolve_freq(0);
            }
        }
        sg
    }

    /// `policy->cur` (kHz).
    pub fn cur(&self) -> u64 {
        self.cur
    }

    /// `sg_policy->next_freq` (kHz, 0 before the first request).
    pub fn next_freq(&self) -> u64 {
        self.next_freq
    }

    /// Per-CPU state of the policy's `i`-th CPU.
    pub fn sg_cpu(&self, i: usize) -> Option<&SugovCpu> {
        self.sg_cpu.get(i)
    }

    /// `sugov_limits()`: force the next update past the rate limit.
    pub fn limits_changed(&mut self) {
        self.limits_changed = true;
    }

    /// `cpufreq_driver_resolve_freq()` (RELATION_L, plus E when the table has
    /// inefficiencies): clamp to the policy range, lowest efficient OPP at or above.
    pub fn resolve_freq(&self, target: u64) -> u64 {
        let (Some(&(lo, _)), Some(&(hi, _))) = (self.opps.first(), self.opps.last()) else {
            return self.max_freq_khz;
        };
        let t = target.clamp(lo, hi);
        self.opps
            .iter()
            .find(|&&(f, ineff)| f >= t && !ineff)
            .map_or(hi, |&(f, _)| f)
    }

    /// `sugov_should_update_freq()`: a pending limits change (`sugov_limits()`, or a DL
    /// bandwidth increase through `ignore_dl_rate_limit()`) passes the rate limit and sets
    /// `need_freq_update`, which makes `get_next_freq()` ignore `cached_raw_freq`, the
    /// single-CPU busy hold keep off, and `sugov_update_next_freq()` commit even an
    /// unchanged frequency (v5.3+, v6.11 text).
    fn should_update_freq(&mut self, now: u64) -> bool {
        if self.limits_changed {
            self.limits_changed = false;
            self.need_freq_update = true;
            return true;
        }
        now.saturating_sub(self.last_freq_update_time) >= self.freq_update_delay_ns
    }

    /// `sugov_iowait_reset()` of `c` (`tick_nsec` is `TICK_NSEC`).
    #[inline(always)]
    fn iowait_reset(c: &mut SugovCpu, tick_nsec: u64, now: u64, set: bool) -> bool {
        if now.saturating_sub(c.last_update) <= tick_nsec {
            return false;
        }
        c.iowait_boost = if set { IOWAIT_BOOST_MIN } else { 0 };
        c.iowait_boost_pending = set;
        true
    }

    /// `sugov_iowait_boost()` of `c`: double the boost (from `IOWAIT_BOOST_MIN` up to 1024)
    /// at each iowait wake-up, once per evaluation; reset after a tick without request.
    /// (On the CPU's `sg_cpu` looked up once by the caller.)
    #[inline(always)]
    fn iowait_boost(c: &mut SugovCpu, tick_nsec: u64, now: u64, flags: u32) {
        let set = flags & SCHED_CPUFREQ_IOWAIT != 0;
        if c.iowait_boost != 0 && Self::iowait_reset(c, tick_nsec, now, set) {
            return;
        }
        if !set {
            return;
        }
        if c.iowait_boost_pending {
            return;
        }
        c.iowait_boost_pending = true;
        c.iowait_boost = if c.iowait_boost != 0 {
            (c.iowait_boost << 1).min(SCHED_CAPACITY_SCALE)
        } else {
            IOWAIT_BOOST_MIN
        };
    }

    /// `sugov_iowait_apply()`: halve the boost when no new request came, return it scaled
    /// to the CPU's capacity.
    #[inline]
    fn iowait_apply(&mut self, i: usize, now: u64) -> u64 {
        let tick_nsec = self.params.tick_nsec;
        let c = &mut self.sg_cpu[i];
        if c.iowait_boost == 0 || Self::iowait_reset(c, tick_nsec, now, false) {
            return 0;
        }
        if !c.iowait_boost_pending {
            c.iowait_boost >>= 1;
            if c.iowait_boost < IOWAIT_BOOST_MIN {
                c.iowait_boost = 0;
                return 0;
            }
        }
        c.iowait_boost_pending = false;
        (c.iowait_boost * self.max_cap) >> SCHED_CAPACITY_SHIFT
    }

    /// `sugov_get_util()` (kernel/sched/cpufreq_schedutil.c; v6.5–v6.7 and v6.8–v6.11 read
    /// `cpu_util_cfs_boost()`, v6.4 and earlier `cpu_util_cfs()`: [`SugovCfsUtil`]), with
    /// the iowait boost folded in as each version does: the CPU's `util` and `bw_min`, a
    /// function of `input` and `boost` alone.
    #[inline(always)]
    fn sugov_get_util(&self, input: &SugovCpuInput, boost: u64) -> (u64, u64) {
        let util_cfs = match self.params.cfs_util {
            SugovCfsUtil::Boost => input.util_cfs_boost,
            SugovCfsUtil::Cfs => input.util_cfs,
        };
        match self.params.version {
            SchedutilVersion::V6_8 => {
                let e = effective_cpu_util(&input.rq, util_cfs, input.uclamp_used);
                let util = e.util.max(boost);
                (sugov_effective_cpu_perf(util, e.min, e.max), e.min)
            }
            SchedutilVersion::V5 => {
                let util = schedutil_cpu_util(
                    &input.rq,
                    util_cfs,
                    CpuUtilType::Frequency,
                    None,
                    input.uclamp_used,
                );
                let boost = uclamp_rq_util_with(&input.rq, boost, None, input.uclamp_used);
                (util.max(boost), input.rq.bw_dl)
            }
        }
    }

    /// [`Self::sugov_get_util`] into the `i`-th CPU's `sg_cpu`.
    #[inline(always)]
    fn get_util(&mut self, i: usize, input: &SugovCpuInput, boost: u64) {
        let (util, bw_min) = self.sugov_get_util(input, boost);
        let c = &mut self.sg_cpu[i];
        c.util = util;
        c.bw_min = bw_min;
    }

    /// The `bw_min` of [`Self::sugov_get_util`] alone: v6.8's `effective_cpu_util()`
    /// `*min` (IRQ + DL bandwidth, `uclamp_min`, RT ⇒ max: none of it reads the CFS
    /// utilisation or the boost), v5.x's `cpu_bw_dl()`.
    #[inline(always)]
    fn sugov_bw_min(&self, input: &SugovCpuInput) -> u64 {
        match self.params.version {
            SchedutilVersion::V6_8 => effective_cpu_util(&input.rq, 0, input.uclamp_used).min,
            SchedutilVersion::V5 => input.rq.bw_dl,
        }
    }

    /// `get_next_freq(sg_policy, util, max)` of a shared policy's aggregation: the same
    /// utilisation as the last call's, on a frequency-invariant policy
    /// ([`SugovPolicy::raw_util`]), maps to the same raw frequency, which that call left
    /// in `cached_raw_freq`; without `need_freq_update`, `get_next_freq()` then returns
    /// `next_freq` and writes nothing, which is returned here without the call.
    #[inline(always)]
    fn shared_next_freq(&mut self, util: u64) -> u64 {
        if util == self.raw_util && !self.need_freq_update {
            debug_assert_eq!(self.raw_freq(util), self.cached_raw_freq);
            return self.next_freq;
        }
        self.get_next_freq(util)
    }

    /// `get_next_freq(sg_policy, util, max)`.
    fn get_next_freq(&mut self, util: u64) -> u64 {
        self.raw_util = if self.params.freq_invariant {
            util
        } else {
            u64::MAX
        };
        let freq = self.raw_freq(util);
        if freq == self.cached_raw_freq && !self.need_freq_update {
            return self.next_freq;
        }
        self.cached_raw_freq = freq;
        self.resolve_freq(freq)
    }

    /// `get_next_freq()`'s raw frequency of `util`: `map_util_freq()` against the reference
    /// frequency (`cpuinfo.max_freq` when frequency-invariant, else `policy->cur`, with
    /// v6.8's 1.25 headroom; before v6.8 the headroom on the utilisation).
    fn raw_freq(&self, util: u64) -> u64 {
        let reference = if self.params.freq_invariant {
            self.max_freq_khz
        } else {
            match self.params.version {
                SchedutilVersion::V6_8 => self.cur + (self.cur >> 2),
                SchedutilVersion::V5 => self.cur,
            }
        };
        let util = match self.params.version {
            SchedutilVersion::V6_8 => util,
            SchedutilVersion::V5 => map_util_perf(util),
        };
        map_util_freq(util, reference, self.max_cap)
    }

    /// `sugov_hold_freq()` (v6.12; `sugov_cpu_is_busy()` + `uclamp_rq_is_capped()` before):
    /// the CPU has not entered idle since the last evaluation, and is not uclamp-capped.
    fn hold_freq(&mut self, i: usize, input: &SugovCpuInput) -> bool {
        let rq = &input.rq;
        let capped = input.uclamp_used
            && rq.uclamp_max != SCHED_CAPACITY_SCALE
            && input.util_cfs + rq.util_rt >= rq.uclamp_max;
        if capped {
            return false;
        }
        let c = &mut self.sg_cpu[i];
        let ret = input.idle_calls == c.saved_idle_calls;
        c.saved_idle_calls = input.idle_calls;
        ret
    }

    /// `sugov_update_next_freq()`: after a limits change the request is committed even
    /// when unchanged, and `need_freq_update` becomes
    /// `cpufreq_driver_test_flags(CPUFREQ_NEED_UPDATE_LIMITS)` ([`NEED_UPDATE_LIMITS`]).
    fn update_next_freq(&mut self, now: u64, next_f: u64) -> bool {
        if self.need_freq_update {
            self.need_freq_update = NEED_UPDATE_LIMITS;
        } else if self.next_freq == next_f {
            return false;
        }
        self.next_freq = next_f;
        self.last_freq_update_time = now;
        true
    }

    /// `sugov_update_*()`'s commit: `cpufreq_driver_fast_switch()` now, or the slow path
    /// (`sugov_deferred_update()`: the kthread's `__cpufreq_driver_target()`, which the
    /// engine completes one transition latency later), or nothing while a transition is in
    /// flight (its end starts the next).
    fn commit(&mut self) -> FreqRequest {
        let f = self.next_freq;
        if self.params.fast_switch {
            self.cur = f;
            return FreqRequest::FastSwitch { freq_khz: f };
        }
        if self.work_in_progress {
            return FreqRequest::Queued;
        }
        self.work_in_progress = true;
        self.in_flight = Some(f);
        FreqRequest::Target { freq_khz: f }
    }

    /// Whether the slow-path request in flight is `policy->cur` (a forced commit after a
    /// limits change, `need_freq_update`): `__cpufreq_driver_target()` returns at once.
    pub fn target_is_cur(&self) -> bool {
        self.in_flight == Some(self.cur)
    }

    /// The slow-path transition started by a `Target` has completed: `policy->cur`
    /// becomes its frequency; if a different request arrived meanwhile, the next transition
    /// starts now (`sugov_work()` run again).
    pub fn transition_done(&mut self) -> FreqRequest {
        if let Some(f) = self.in_flight.take() {
            self.cur = f;
        }
        self.work_in_progress = false;
        if self.next_freq != 0 && self.next_freq != self.cur {
            return self.commit();
        }
        FreqRequest::Unchanged
    }

    /// `cpufreq_update_util(rq, flags)` for `cpu` at `now`: `sugov_update_single_freq()`
    /// for one-CPU policies, `sugov_update_shared()` otherwise. `inputs` has one entry per
    /// CPU of the policy, in `PerfDomain::cpus` order.
    pub fn update<I: SugovInputs + ?Sized>(
        &mut self,
        now: u64,
        cpu: usize,
        flags: u32,
        inputs: &I,
    ) -> FreqRequest {
        let Some(i) = self.cpus.iter().position(|&c| c == cpu) else {
            return FreqRequest::Unchanged;
        };
        self.update_at(now, i, flags, inputs)
    }

    /// What `sugov_update_*()` does before the frequency: `sugov_iowait_boost()`,
    /// `last_update`, `ignore_dl_rate_limit()` (`bw_dl`: the `i`-th CPU's `cpu_bw_dl()`)
    /// and `sugov_should_update_freq()`, whose result it returns.
    #[inline(always)]
    fn update_prologue(&mut self, now: u64, i: usize, flags: u32, bw_dl: u64) -> bool {
        // sg_cpu[i] looked up once for the boost and what follows it (its last update, the
        // boosted set, ignore_dl_rate_limit())
        let tick_nsec = self.params.tick_nsec;
        let c = &mut self.sg_cpu[i];
        Self::iowait_boost(c, tick_nsec, now, flags);
        if c.iowait_boost != 0 {
            let (w, bit) = word_bit(i);
            self.boosted[w] |= bit;
        }
        c.last_update = now;
        // ignore_dl_rate_limit(): a DL bandwidth increase bypasses the rate limit
        if bw_dl > c.bw_min {
            self.limits_changed = true;
        }
        self.should_update_freq(now)
    }

    /// Whether the policy can ever be [`Self::at_one_freq`]: a shared policy of at most 64
    /// CPUs with one OPP (`SugovPolicy::one_freq` is its frequency; set at the start and
    /// never changed). For the others `at_one_freq()` is always false.
    #[inline]
    pub fn may_be_at_one_freq(&self) -> bool {
        self.one_freq != u64::MAX
    }

    /// Whether [`Self::update_at_one_freq`] may stand for [`Self::update_at`]: a shared
    /// policy of at most 64 CPUs whose next frequency cannot change, as its `next_freq`
    /// is already the one frequency `cpufreq_driver_resolve_freq()` can return
    /// (`SugovPolicy::only_freq`). Nothing in an update changes that.
    #[inline(always)]
    pub fn at_one_freq(&self) -> bool {
        let r = self.next_freq == self.one_freq;
        debug_assert_eq!(
            r,
            self.words == 1 && self.cpus.len() > 1 && self.only_freq == Some(self.next_freq)
        );
        r
    }

    /// [`Self::update_at`] of the `i`-th CPU of a shared policy of at most 64 CPUs when it
    /// can change nothing but that CPU's `last_update`, which it then sets to `now`, and
    /// true; false, with nothing done, otherwise. The caller passes the CPU's `cpu_bw_dl()`
    /// as `bw_dl` and has taken its policy's marks of changed CPUs ([`SugovInputs::changed`]),
    /// which were none.
    ///
    /// `sugov_update_shared()` (v6.11) then: `sugov_iowait_boost()` without
    /// `SCHED_CPUFREQ_IOWAIT` and without a boost does nothing; `ignore_dl_rate_limit()`
    /// finds `bw_dl` at most the CPU's kept `bw_min`, so it sets no `limits_changed`; with
    /// none pending `sugov_should_update_freq()` only compares times. If it passes,
    /// `sugov_next_freq_shared()` finds no CPU to compute again (none stale: their inputs
    /// did not change; none boosted) and returns the kept largest `util`, which the last
    /// `get_next_freq()` was given (`SugovPolicy::raw_util`): without `need_freq_update`
    /// it returns `next_freq`, and `sugov_update_next_freq()` of an unchanged frequency
    /// does nothing. Either way the request is unchanged.
    #[inline(always)]
    pub fn update_shared_unchanged(&mut self, now: u64, i: usize, flags: u32, bw_dl: u64) -> bool {
        if flags & SCHED_CPUFREQ_IOWAIT != 0
            || (self.stale[0] | self.boosted[0]) & self.valid[0] != 0
            || self.limits_changed
            || self.need_freq_update
            || self.max_stale
            || self.max_util != self.raw_util
            || self.words != 1
            || self.cpus.len() < 2
        {
            return false;
        }
        let c = &mut self.sg_cpu[i];
        if bw_dl > c.bw_min {
            return false;
        }
        debug_assert_eq!(c.iowait_boost, 0, "a boost outside the boosted CPUs");
        c.last_update = now;
        true
    }

    /// [`Self::update_at_one_freq`] of the `i`-th CPU when it can change nothing but that
    /// CPU's `last_update`, which it then sets to `now`, and true; false, with nothing done,
    /// otherwise. `bw_changed` is as [`Self::update_at_one_freq`] takes it, `bw_dl` the CPU's
    /// `cpu_bw_dl()`.
    ///
    /// `sugov_update_shared()` (v6.11) then: `sugov_iowait_boost()` without
    /// `SCHED_CPUFREQ_IOWAIT` and without a boost on the CPU does nothing;
    /// `ignore_dl_rate_limit()` finds `bw_dl` at most its kept `bw_min`, so it sets no
    /// `limits_changed`; with none pending `sugov_should_update_freq()` only compares
    /// times. If it passes, the aggregation computes the `bw_min` of no CPU (none stale,
    /// none marked in `bw_changed`), and without `need_freq_update`
    /// `sugov_update_next_freq()` of the one frequency does nothing.
    #[inline(always)]
    pub fn update_at_one_freq_unchanged(
        &mut self,
        now: u64,
        i: usize,
        flags: u32,
        bw_changed: u64,
        bw_dl: u64,
    ) -> bool {
        debug_assert!(self.at_one_freq());
        if flags & SCHED_CPUFREQ_IOWAIT != 0
            || (self.stale[0] | bw_changed) & self.valid[0] != 0
            || self.limits_changed
            || self.need_freq_update
        {
            return false;
        }
        let c = &mut self.sg_cpu[i];
        if c.iowait_boost != 0 || bw_dl > c.bw_min {
            return false;
        }
        c.last_update = now;
        true
    }

    /// [`Self::update_at`] of a policy that is [`Self::at_one_freq`]: the same steps
    /// (`sugov_update_shared()`: the boost, the rate limit, the aggregation's `bw_min` of
    /// the changed CPUs, the commit after a limits change) without the branches that
    /// cannot be taken, so that the engine can call it without building what the others
    /// read. `bw_changed` has the bit `j` of each CPU `j` of the policy whose `bw_min`
    /// inputs (what `sugov_bw_min()` reads of its [`SugovCpuInput`]: the DL bandwidth, the
    /// rq's `uclamp_min`, an RT task queued, the capacity and `uclamp_used`) may have
    /// changed since the previous call (`u64::MAX` when the caller does not know; the
    /// marks of [`SugovInputs::changed`], a superset, will do). The aggregation computes
    /// `bw_min` again for those CPUs alone: `sugov_bw_min()` is a function of those inputs,
    /// so every other CPU's kept `bw_min` is what the kernel's `sugov_get_util()` would
    /// compute now (debug builds recompute each one and assert it).
    #[inline(always)]
    pub fn update_at_one_freq<I: SugovInputs + ?Sized>(
        &mut self,
        now: u64,
        i: usize,
        flags: u32,
        bw_changed: u64,
        inputs: &I,
    ) -> FreqRequest {
        debug_assert!(self.at_one_freq());
        self.stale[0] |= bw_changed;
        if !self.update_prologue(now, i, flags, inputs.bw_dl(i)) {
            return FreqRequest::Unchanged;
        }
        // get_next_freq() returns next_freq from its cache or the one OPP from
        // cpufreq_driver_resolve_freq(): the same frequency either way. Its aggregation:
        // Self::shared_bw_min() of the one word
        self.shared_bw_min_word(0, inputs);
        self.debug_check_bw_min(inputs);
        if !self.update_next_freq(now, self.next_freq) {
            return FreqRequest::Unchanged;
        }
        self.commit()
    }

    /// [`Self::update`] for the policy's `i`-th CPU (`i` < its number of CPUs).
    #[inline(always)]
    pub fn update_at<I: SugovInputs + ?Sized>(
        &mut self,
        now: u64,
        i: usize,
        flags: u32,
        inputs: &I,
    ) -> FreqRequest {
        self.stale[0] |= inputs.changed(0).unwrap_or(u64::MAX);
        if self.words > 1 {
            self.mark_changed_past_64(inputs);
        }
        if !self.update_prologue(now, i, flags, inputs.bw_dl(i)) {
            return FreqRequest::Unchanged;
        }
        let next_f = if self.cpus.len() == 1 {
            let input = inputs.input(i);
            let boost = self.iowait_apply(i, now);
            self.get_util(i, &input, boost);
            let cached = self.cached_raw_freq;
            let mut next_f = self.get_next_freq(self.sg_cpu[i].util);
            if self.hold_freq(i, &input) && next_f < self.next_freq && !self.need_freq_update {
                next_f = self.next_freq;
                self.cached_raw_freq = cached;
                self.raw_util = u64::MAX;
            }
            next_f
        } else if self.only_freq.is_some_and(|f| f == self.next_freq) {
            // get_next_freq() returns next_freq from its cache or the one OPP from
            // cpufreq_driver_resolve_freq(): the same frequency either way
            self.shared_bw_min(inputs);
            self.next_freq
        } else {
            let util = self.shared_util(now, inputs);
            self.shared_next_freq(util)
        };
        if !self.update_next_freq(now, next_f) {
            return FreqRequest::Unchanged;
        }
        self.commit()
    }
}

mod shared;

#[cfg(test)]
mod tests;
