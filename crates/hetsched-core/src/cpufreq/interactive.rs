//! Android's `interactive` governor (drivers/cpufreq/cpufreq_interactive.c, AOSP
//! android-3.10 era, read in 96boards/linux@48033bd6 — the form the 2015 upstream posting
//! carried): per-CPU load in "percent × kHz" from idle time weighted by the frequency it
//! ran at, `go_hispeed_load` → `hispeed_freq`, `choose_freq()`'s search for the lowest OPP
//! whose load would be at or below its `target_loads` entry, `above_hispeed_delay` before
//! raising above `hispeed_freq`, and `min_sample_time` before lowering below the floor.
//! `boost` and `boostpulse` (PowerHAL's writes on input events) treat samples as at
//! `go_hispeed_load` while on, and `cpufreq_interactive_boost()` raises each CPU's target
//! to `hispeed_freq` at the write ([`boost`]).
//!
//! The android-4.4-era form ([`InteractiveVersion::Android4_4`], read in the MediaTek
//! alps copy NotKit/kernel-4.4-alps@ed9efc79 with its `#ifdef` blocks left out) is
//! [`CpuInfo::sample_v4_4`], [`boost_v4_4`] and [`get_policy_info`]: the load relative to
//! `policy->cur`, no jump from below `hispeed_freq` straight above it, policy-wide
//! hispeed and floor validate times set by the speed-change thread, a boost that raises
//! only `target_freq`, and a timer that is always re-armed.
//!
//! This module is the decision (`cpufreq_interactive_timer()`, `update_load()`,
//! `choose_freq()`, the window restart of `cpufreq_interactive_timer_resched()`); the
//! engine owns its deferrable per-CPU timer, the non-deferrable slack timer, the idle
//! notifier and the `cfinteractive` SCHED_FIFO kthread that changes the frequency
//! (sim/interactive.rs). Times are µs of `ktime_get()`, as the governor's.

use super::freq_table::{FreqTable, Relation};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which AOSP form of cpufreq_interactive.c (`cpufreq.interactive.version`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
pub enum InteractiveVersion {
    /// The android-3.10-era form (96boards/linux@48033bd6): `cpu_load` relative to the
    /// CPU's `target_freq`, per-CPU validate times, no re-arm at the maximum, `IDLE_START`
    /// re-arms an idle CPU above the minimum, a boost that also sets the floor.
    #[default]
    #[serde(rename = "android_3_10")]
    Android3_10,
    /// The android-4.4-era form (NotKit/kernel-4.4-alps@ed9efc79, MTK `#ifdef`s left
    /// out): `cpu_load` relative to `policy->cur`, never from below `hispeed_freq` straight
    /// above it, the policy's validate times (`pol_*_val_time`, set by the speed-change
    /// thread's `cpufreq_interactive_adjust_cpu()`), the timer always re-armed, only
    /// `IDLE_END` handled, a boost that raises only `target_freq` (once while `boosted`),
    /// and `boost=0` ending a pulse.
    #[serde(rename = "android_4_4")]
    Android4_4,
}

/// `DEFAULT_TIMER_RATE` (µs).
pub const DEFAULT_TIMER_RATE: u64 = 20_000;
/// `DEFAULT_GO_HISPEED_LOAD` (%).
pub const DEFAULT_GO_HISPEED_LOAD: u64 = 99;
/// `DEFAULT_TARGET_LOAD` (%).
pub const DEFAULT_TARGET_LOAD: u32 = 90;
/// `DEFAULT_MIN_SAMPLE_TIME` (µs).
pub const DEFAULT_MIN_SAMPLE_TIME: u64 = 80_000;
/// `DEFAULT_TIMER_SLACK` = 4 × `DEFAULT_TIMER_RATE` (µs).
pub const DEFAULT_TIMER_SLACK: i64 = 80_000;

/// The tunables (`struct cpufreq_interactive_tunables`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InteractiveTunables {
    /// `timer_rate` (µs).
    pub timer_rate: u64,
    /// `timer_slack` (µs; negative: no slack timer).
    pub timer_slack: i64,
    /// `go_hispeed_load` (%).
    pub go_hispeed_load: u64,
    /// `hispeed_freq` (kHz; 0 = the policy's maximum).
    pub hispeed_freq: u64,
    /// `target_loads`: `load [freq:load]…`.
    pub target_loads: Vec<u64>,
    /// `above_hispeed_delay`: `delay [freq:delay]…` (µs).
    pub above_hispeed_delay: Vec<u64>,
    /// `min_sample_time` (µs).
    pub min_sample_time: u64,
    /// `boost` (`boost_val`): every sample is boosted while it is set.
    pub boost: bool,
    /// `io_is_busy`.
    pub io_is_busy: bool,
    /// `boostpulse_duration` (`boostpulse_duration_val`, µs).
    pub boostpulse_duration: u64,
    /// `boostpulse_endtime` (µs of `ktime_get()`): samples before it are boosted. State set
    /// by a `boostpulse` write, not a sysfs file; 0 (`kzalloc()`) at the start.
    pub boostpulse_endtime: u64,
    /// `boosted` (android-4.4 only; state): the last sample's `boost_val || now <
    /// boostpulse_endtime`, set too by `cpufreq_interactive_boost()`; a `boost` or
    /// `boostpulse` write boosts the CPUs only while it is false.
    pub boosted: bool,
}

impl InteractiveTunables {
    /// A sample's `boosted` at `now_us`: `boost_val || now < boostpulse_endtime`.
    pub fn boosted_at(&self, now_us: u64) -> bool {
        self.boost || now_us < self.boostpulse_endtime
    }
}

impl Default for InteractiveTunables {
    fn default() -> Self {
        InteractiveTunables {
            timer_rate: DEFAULT_TIMER_RATE,
            timer_slack: DEFAULT_TIMER_SLACK,
            go_hispeed_load: DEFAULT_GO_HISPEED_LOAD,
            hispeed_freq: 0,
            target_loads: vec![u64::from(DEFAULT_TARGET_LOAD)],
            above_hispeed_delay: vec![DEFAULT_TIMER_RATE],
            min_sample_time: DEFAULT_MIN_SAMPLE_TIME,
            boost: false,
            io_is_busy: false,
            boostpulse_duration: DEFAULT_MIN_SAMPLE_TIME,
            boostpulse_endtime: 0,
            boosted: false,
        }
    }
}

/// `freq_to_targetload()` / `freq_to_above_hispeed_delay()`: the value for `freq` in a
/// `v0 f1 v1 f2 v2 …` list.
pub fn freq_indexed(list: &[u64], freq: u64) -> u64 {
    let n = list.len();
    let mut i = 0;
    while i + 1 < n && freq >= list[i + 1] {
        i += 2;
    }
    list.get(i).copied().unwrap_or(0)
}

/// One CPU's state (`struct cpufreq_interactive_cpuinfo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuInfo {
    /// `time_in_idle` (µs).
    pub time_in_idle: u64,
    /// `time_in_idle_timestamp` (µs).
    pub time_in_idle_timestamp: u64,
    /// `cputime_speedadj`: Σ active µs × kHz in the window.
    pub cputime_speedadj: u64,
    /// `cputime_speedadj_timestamp` (µs).
    pub cputime_speedadj_timestamp: u64,
    /// `target_freq` (kHz).
    pub target_freq: u64,
    /// `floor_freq` (kHz).
    pub floor_freq: u64,
    /// `floor_validate_time` (µs).
    pub floor_validate_time: u64,
    /// `hispeed_validate_time` (µs).
    pub hispeed_validate_time: u64,
    /// `pol_floor_val_time` (android-4.4, µs): the policy's floor validate time, the
    /// latest `loc_floor_val_time` of its CPUs as the speed-change thread last served it.
    pub pol_floor_val_time: u64,
    /// `loc_floor_val_time` (android-4.4, µs): this CPU's floor validate time.
    pub loc_floor_val_time: u64,
    /// `pol_hispeed_val_time` (android-4.4, µs): the policy's hispeed validate time, set
    /// by the speed-change thread when it changed the frequency, and by a boost.
    pub pol_hispeed_val_time: u64,
    /// `loc_hispeed_val_time` (android-4.4, µs): this CPU's hispeed validate time.
    pub loc_hispeed_val_time: u64,
}

/// What a sample decided (the trace event it emits, with its fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// `cpufreq_interactive_target`: a new target; the speed-change thread is woken.
    Target,
    /// `cpufreq_interactive_already`: the target is unchanged.
    Already,
    /// `cpufreq_interactive_notyet`: held by `above_hispeed_delay` or `min_sample_time`.
    NotYet,
    /// No event (an empty window).
    None,
}

/// A sample's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// The event.
    pub verdict: Verdict,
    /// `cpu_load` (%).
    pub load: u64,
    /// `target_freq` before the sample.
    pub cur_target: u64,
    /// The new frequency considered.
    pub new_freq: u64,
    /// The timer is re-armed (`rearm`), not left off at the maximum (`rearm_if_notmax`).
    pub rearm: bool,
}

impl CpuInfo {
    /// `update_load()`: the active time since the last update, weighted by `cur` (kHz),
    /// joins the window. `idle_us`/`now_us` are `get_cpu_idle_time()`'s.
    pub fn update_load(&mut self, idle_us: u64, now_us: u64, cur: u64) {
        let delta_idle = idle_us.wrapping_sub(self.time_in_idle) as u32;
        let delta_time = now_us.wrapping_sub(self.time_in_idle_timestamp) as u32;
        let active_time = delta_time.saturating_sub(delta_idle);
        self.cputime_speedadj = self
            .cputime_speedadj
            .wrapping_add(u64::from(active_time) * cur);
        self.time_in_idle = idle_us;
        self.time_in_idle_timestamp = now_us;
    }

    /// android-4.4's `update_load()`: as [`CpuInfo::update_load`] with `u64` deltas.
    pub fn update_load_u64(&mut self, idle_us: u64, now_us: u64, cur: u64) {
        let delta_idle = idle_us.wrapping_sub(self.time_in_idle);
        let delta_time = now_us.wrapping_sub(self.time_in_idle_timestamp);
        let active_time = delta_time.saturating_sub(delta_idle);
        self.cputime_speedadj = self
            .cputime_speedadj
            .wrapping_add(active_time.wrapping_mul(cur));
        self.time_in_idle = idle_us;
        self.time_in_idle_timestamp = now_us;
    }

    /// The window restart of `cpufreq_interactive_timer_resched()` / `_timer_start()`.
    pub fn restart_window(&mut self, idle_us: u64, now_us: u64) {
        self.time_in_idle = idle_us;
        self.time_in_idle_timestamp = now_us;
        self.cputime_speedadj = 0;
        self.cputime_speedadj_timestamp = now_us;
    }

    /// `cpufreq_interactive_timer()` (android-3.10 form) at `now_us` with the CPU's idle
    /// time, the policy's `cur` and table, `boosted` = `boost_val || now <
    /// boostpulse_endtime`.
    pub fn sample(
        &mut self,
        t: &InteractiveTunables,
        table: &FreqTable,
        cur: u64,
        idle_us: u64,
        now_us: u64,
        boosted: bool,
    ) -> Sample {
        self.update_load(idle_us, now_us, cur);
        let delta_time = now_us.wrapping_sub(self.cputime_speedadj_timestamp) as u32;
        let cur_target = self.target_freq;
        let mut out = Sample {
            verdict: Verdict::None,
            load: 0,
            cur_target,
            new_freq: cur_target,
            rearm: true,
        };
        if delta_time == 0 {
            return out; // WARN_ON_ONCE(!delta_time): goto rearm
        }
        let speedadj = self.cputime_speedadj / u64::from(delta_time);
        let loadadjfreq = u64::from((speedadj as u32).wrapping_mul(100));
        let cpu_load = loadadjfreq / self.target_freq.max(1);
        out.load = cpu_load;
        let hispeed = if t.hispeed_freq == 0 {
            table.max
        } else {
            t.hispeed_freq
        };
        let mut new_freq = if cpu_load >= t.go_hispeed_load || boosted {
            if self.target_freq < hispeed {
                hispeed
            } else {
                choose_freq(t, table, cur, loadadjfreq).max(hispeed)
            }
        } else {
            choose_freq(t, table, cur, loadadjfreq)
        };
        if self.target_freq >= hispeed
            && new_freq > self.target_freq
            && now_us.wrapping_sub(self.hispeed_validate_time)
                < freq_indexed(&t.above_hispeed_delay, self.target_freq)
        {
            out.verdict = Verdict::NotYet;
            out.new_freq = new_freq;
            return out;
        }
        self.hispeed_validate_time = now_us;
        new_freq = table.resolve(new_freq, Relation::L, false);
        out.new_freq = new_freq;
        if new_freq < self.floor_freq
            && now_us.wrapping_sub(self.floor_validate_time) < t.min_sample_time
        {
            out.verdict = Verdict::NotYet;
            return out;
        }
        if !boosted || new_freq > hispeed {
            self.floor_freq = new_freq;
            self.floor_validate_time = now_us;
        }
        if self.target_freq == new_freq {
            out.verdict = Verdict::Already;
        } else {
            out.verdict = Verdict::Target;
            self.target_freq = new_freq;
        }
        // rearm_if_notmax: no re-arm at the policy's maximum
        out.rearm = self.target_freq != table.max;
        out
    }
}

/// `cpufreq_interactive_boost()` (android-3.10 form, 96boards/linux@48033bd6), called by
/// `store_boost()` (a non-zero write) and `store_boostpulse()` at `now_us`: every CPU
/// whose `target_freq` is below its policy's `hispeed_freq` (`hispeed(cpu)`) is raised to
/// it, its `hispeed_validate_time` set and its bit set in `speedchange_cpumask`; every CPU
/// (raised or not) gets `floor_freq = hispeed_freq` validated now. Returns the CPUs raised,
/// in order: the caller wakes the speed-change thread if there is any (`anyboost`).
pub fn boost(cpus: &mut [CpuInfo], hispeed: impl Fn(usize) -> u64, now_us: u64) -> Vec<usize> {
    let mut raised = Vec::new();
    for (i, c) in cpus.iter_mut().enumerate() {
        let hs = hispeed(i);
        if c.target_freq < hs {
            c.target_freq = hs;
            c.hispeed_validate_time = now_us;
            raised.push(i);
        }
        // set the floor and (re)start its time from the boost
        c.floor_freq = hs;
        c.floor_validate_time = now_us;
    }
    raised
}

impl CpuInfo {
    /// `cpufreq_interactive_timer()` in its android-4.4-era form (NotKit/kernel-4.4-alps,
    /// MTK `#ifdef`s left out) at `now_us`, with the CPU's idle time and the policy's
    /// `cur` and table; it sets `t.boosted`. The differences from [`CpuInfo::sample`]:
    /// `cpu_load = loadadjfreq / policy->cur`; the hispeed jump tests `policy->cur`, and
    /// an unboosted choice above `hispeed_freq` from below it is `hispeed_freq`; the
    /// above-hispeed hold compares with `policy->cur` and the policy's
    /// `pol_hispeed_val_time`; the floor holds only while `target_freq >= policy->cur`,
    /// from the later of `pol_floor_val_time` and `loc_floor_val_time`, and
    /// `loc_floor_val_time` moves only when `target_freq` or the new frequency is at or
    /// above `policy->cur`; "already" needs `target_freq <= policy->cur` too (else the
    /// same target is asked for again); the timer is always re-armed.
    pub fn sample_v4_4(
        &mut self,
        t: &mut InteractiveTunables,
        table: &FreqTable,
        cur: u64,
        idle_us: u64,
        now_us: u64,
    ) -> Sample {
        self.update_load_u64(idle_us, now_us, cur);
        let delta_time = now_us.wrapping_sub(self.cputime_speedadj_timestamp) as u32;
        let cur_target = self.target_freq;
        let mut out = Sample {
            verdict: Verdict::None,
            load: 0,
            cur_target,
            new_freq: cur_target,
            rearm: true,
        };
        if delta_time == 0 {
            return out; // WARN_ON_ONCE(!delta_time): goto rearm
        }
        let speedadj = self.cputime_speedadj / u64::from(delta_time);
        let loadadjfreq = u64::from((speedadj as u32).wrapping_mul(100));
        let cpu_load = loadadjfreq / cur.max(1);
        out.load = cpu_load;
        t.boosted = t.boosted_at(now_us);
        let hispeed = if t.hispeed_freq == 0 {
            table.max
        } else {
            t.hispeed_freq
        };
        let mut new_freq = if cpu_load >= t.go_hispeed_load || t.boosted {
            if cur < hispeed {
                hispeed
            } else {
                choose_freq(t, table, cur, loadadjfreq).max(hispeed)
            }
        } else {
            let f = choose_freq(t, table, cur, loadadjfreq);
            if f > hispeed && cur < hispeed {
                hispeed
            } else {
                f
            }
        };
        out.new_freq = new_freq;
        if cur >= hispeed
            && new_freq > cur
            && now_us.wrapping_sub(self.pol_hispeed_val_time)
                < freq_indexed(&t.above_hispeed_delay, cur)
        {
            out.verdict = Verdict::NotYet;
            return out;
        }
        self.loc_hispeed_val_time = now_us;
        new_freq = table.resolve(new_freq, Relation::L, false);
        out.new_freq = new_freq;
        let max_fvtime = self.pol_floor_val_time.max(self.loc_floor_val_time);
        if new_freq < self.floor_freq
            && self.target_freq >= cur
            && now_us.wrapping_sub(max_fvtime) < t.min_sample_time
        {
            out.verdict = Verdict::NotYet;
            return out;
        }
        if !t.boosted || new_freq > hispeed {
            self.floor_freq = new_freq;
            if self.target_freq >= cur || new_freq >= cur {
                self.loc_floor_val_time = now_us;
            }
        }
        if self.target_freq == new_freq && self.target_freq <= cur {
            out.verdict = Verdict::Already;
            return out;
        }
        out.verdict = Verdict::Target;
        self.target_freq = new_freq;
        out
    }
}

/// android-4.4's `cpufreq_interactive_boost(tunables)`: `boosted` is set, and every CPU
/// whose `target_freq` is below its policy's `hispeed_freq` is raised to it, its policy
/// hispeed time (`pol_hispeed_val_time`) set to `now_us` and its bit set in
/// `speedchange_cpumask`; no floor changes. Returns the CPUs raised.
pub fn boost_v4_4(
    t: &mut InteractiveTunables,
    cpus: &mut [CpuInfo],
    hispeed: impl Fn(usize) -> u64,
    now_us: u64,
) -> Vec<usize> {
    t.boosted = true;
    let mut raised = Vec::new();
    for (i, c) in cpus.iter_mut().enumerate() {
        let hs = hispeed(i);
        if c.target_freq < hs {
            c.target_freq = hs;
            c.pol_hispeed_val_time = now_us;
            raised.push(i);
        }
    }
    raised
}

/// android-4.4's `cpufreq_interactive_get_policy_info()` over the policy's CPUs:
/// (`max_freq`, the highest `target_freq`; `hvt`, the earliest `loc_hispeed_val_time` of
/// the CPUs asking for it; `fvt`, the latest `loc_floor_val_time`).
pub fn get_policy_info(cpus: &[CpuInfo], policy_cpus: &[usize]) -> (u64, u64, u64) {
    let (mut max_freq, mut hvt, mut fvt) = (0u64, u64::MAX, 0u64);
    for c in policy_cpus.iter().filter_map(|&i| cpus.get(i)) {
        fvt = fvt.max(c.loc_floor_val_time);
        if c.target_freq > max_freq {
            max_freq = c.target_freq;
            hvt = c.loc_hispeed_val_time;
        } else if c.target_freq == max_freq {
            hvt = hvt.min(c.loc_hispeed_val_time);
        }
    }
    (max_freq, hvt, fvt)
}

/// `choose_freq()`: the lowest OPP `f` with `loadadjfreq / f` at or below
/// `target_load(f)`, searched from `cur` between the bounds the iteration narrows.
pub fn choose_freq(t: &InteractiveTunables, table: &FreqTable, cur: u64, loadadjfreq: u64) -> u64 {
    let mut freq = cur;
    let mut freqmin = 0u64;
    let mut freqmax = u64::from(u32::MAX);
    loop {
        let prevfreq = freq;
        let tl = freq_indexed(&t.target_loads, freq).max(1);
        freq = table.resolve(loadadjfreq / tl, Relation::L, false);
        if freq > prevfreq {
            // the previous frequency is too low
            freqmin = prevfreq;
            if freq >= freqmax {
                freq = table.resolve(freqmax - 1, Relation::H, false);
                if freq == freqmin {
                    freq = freqmax;
                    break;
                }
            }
        } else if freq < prevfreq {
            // the previous frequency is high enough
            freqmax = prevfreq;
            if freq <= freqmin {
                freq = table.resolve(freqmin + 1, Relation::L, false);
                if freq == freqmax {
                    break;
                }
            }
        }
        if freq == prevfreq {
            break;
        }
    }
    freq
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> FreqTable {
        super::super::dbs::tests::table() // 500, 1000, 1500, 2000 MHz
    }

    #[test]
    fn freq_indexed_lists() {
        let l = [85, 1_000_000, 90, 1_500_000, 99];
        assert_eq!(freq_indexed(&l, 500_000), 85);
        assert_eq!(freq_indexed(&l, 1_000_000), 90);
        assert_eq!(freq_indexed(&l, 1_400_000), 90);
        assert_eq!(freq_indexed(&l, 2_000_000), 99);
        assert_eq!(freq_indexed(&[90], 2_000_000), 90);
    }

    #[test]
    fn choose_freq_finds_the_lowest_opp_under_the_target_load() {
        let t = InteractiveTunables::default();
        // busy 100 % at 1000 MHz: loadadjfreq = 100 000 000; at 90 %: needs 1111 MHz → 1500
        assert_eq!(choose_freq(&t, &table(), 1_000_000, 100_000_000), 1_500_000);
        // 40 % at 1000 MHz → 444 MHz → 500
        assert_eq!(choose_freq(&t, &table(), 1_000_000, 40_000_000), 500_000);
        // from above: 60 % at 2000 MHz → 1333 → 1500
        assert_eq!(choose_freq(&t, &table(), 2_000_000, 120_000_000), 1_500_000);
    }

    #[test]
    fn a_busy_cpu_goes_to_hispeed_then_waits_above_hispeed_delay() {
        let t = InteractiveTunables {
            hispeed_freq: 1_500_000,
            ..InteractiveTunables::default()
        };
        let mut c = CpuInfo {
            target_freq: 500_000,
            floor_freq: 500_000,
            ..CpuInfo::default()
        };
        c.restart_window(0, 0);
        // 20 ms fully busy at 500 MHz: load 100 % ≥ 99 → hispeed
        let s = c.sample(&t, &table(), 500_000, 0, 20_000, false);
        assert_eq!(
            (s.verdict, s.load, s.new_freq),
            (Verdict::Target, 100, 1_500_000)
        );
        c.restart_window(0, 20_000);
        // still fully busy at 1500 MHz, 20 ms later: above_hispeed_delay (20 ms) passed
        let s = c.sample(&t, &table(), 1_500_000, 0, 39_999, false);
        assert_eq!(s.verdict, Verdict::NotYet);
        c.restart_window(0, 39_999);
        let s = c.sample(&t, &table(), 1_500_000, 0, 60_000, false);
        assert_eq!(
            (s.verdict, s.new_freq, s.rearm),
            (Verdict::Target, 2_000_000, false)
        );
    }

    #[test]
    fn boost_raises_targets_below_hispeed_and_sets_every_floor() {
        let mut cpus = [
            CpuInfo {
                target_freq: 500_000,
                floor_freq: 500_000,
                ..CpuInfo::default()
            },
            CpuInfo {
                target_freq: 2_000_000,
                floor_freq: 2_000_000,
                hispeed_validate_time: 7,
                ..CpuInfo::default()
            },
        ];
        let raised = boost(&mut cpus, |_| 1_500_000, 1_000);
        assert_eq!(raised, [0]);
        assert_eq!(
            (cpus[0].target_freq, cpus[0].hispeed_validate_time),
            (1_500_000, 1_000)
        );
        assert_eq!(
            (cpus[1].target_freq, cpus[1].hispeed_validate_time),
            (2_000_000, 7)
        );
        for c in &cpus {
            assert_eq!((c.floor_freq, c.floor_validate_time), (1_500_000, 1_000));
        }
        let t = InteractiveTunables {
            boostpulse_endtime: 81_000,
            ..InteractiveTunables::default()
        };
        assert!(t.boosted_at(80_999) && !t.boosted_at(81_000));
    }

    #[test]
    fn a_boosted_sample_holds_hispeed_without_moving_the_floor() {
        let t = InteractiveTunables {
            hispeed_freq: 1_500_000,
            ..InteractiveTunables::default()
        };
        let mut c = CpuInfo {
            target_freq: 500_000,
            floor_freq: 500_000,
            ..CpuInfo::default()
        };
        let mut cpus = [c];
        boost(&mut cpus, |_| 1_500_000, 0);
        c = cpus[0];
        c.restart_window(0, 0);
        // idle 20 ms, boosted: hispeed, already; the floor stays the boost's
        let s = c.sample(&t, &table(), 1_500_000, 20_000, 20_000, true);
        assert_eq!((s.verdict, s.new_freq), (Verdict::Already, 1_500_000));
        assert_eq!((c.floor_freq, c.floor_validate_time), (1_500_000, 0));
        // unboosted before min_sample_time since the boost: held
        c.restart_window(20_000, 20_000);
        let s = c.sample(&t, &table(), 1_500_000, 79_999, 79_999, false);
        assert_eq!((s.verdict, s.new_freq), (Verdict::NotYet, 500_000));
        c.restart_window(79_999, 79_999);
        let s = c.sample(&t, &table(), 1_500_000, 80_000, 80_000, false);
        assert_eq!((s.verdict, s.new_freq), (Verdict::Target, 500_000));
    }

    #[test]
    fn v4_4_goes_no_higher_than_hispeed_from_below_it_and_rearms_at_the_maximum() {
        let mut t = InteractiveTunables {
            hispeed_freq: 1_000_000,
            target_loads: vec![40],
            ..InteractiveTunables::default()
        };
        let c0 = CpuInfo {
            target_freq: 500_000,
            floor_freq: 500_000,
            ..CpuInfo::default()
        };
        // 95 % busy for 20 ms at 500 MHz: loadadjfreq 47.5 G, which needs 1188 MHz at
        // 40 % → 1500; android-3.10 goes there at once
        let mut c = c0;
        c.restart_window(0, 0);
        let s = c.sample(&t, &table(), 500_000, 1_000, 20_000, false);
        assert_eq!(
            (s.verdict, s.load, s.new_freq),
            (Verdict::Target, 95, 1_500_000)
        );
        // android-4.4 stops at hispeed_freq
        let mut c = c0;
        c.restart_window(0, 0);
        let s = c.sample_v4_4(&mut t, &table(), 500_000, 1_000, 20_000);
        assert_eq!(
            (s.verdict, s.load, s.new_freq),
            (Verdict::Target, 95, 1_000_000)
        );
        assert_eq!(
            (c.loc_hispeed_val_time, c.loc_floor_val_time),
            (20_000, 20_000)
        );
        // at hispeed (the thread set the policy's hispeed time at 20 ms): no raise for
        // above_hispeed_delay (20 ms) after it
        c.pol_hispeed_val_time = 20_000;
        c.restart_window(1_000, 20_000);
        let s = c.sample_v4_4(&mut t, &table(), 1_000_000, 2_000, 39_999);
        assert_eq!(
            (s.verdict, s.load, s.new_freq, s.rearm),
            (Verdict::NotYet, 94, 2_000_000, true)
        );
        c.restart_window(2_000, 39_999);
        let s = c.sample_v4_4(&mut t, &table(), 1_000_000, 3_000, 60_000);
        // at the maximum the timer is re-armed all the same
        assert_eq!(
            (s.verdict, s.new_freq, s.rearm),
            (Verdict::Target, 2_000_000, true)
        );
        assert!(!t.boosted);
    }

    #[test]
    fn v4_4_floor_holds_only_while_the_target_is_at_or_above_cur() {
        let mut t = InteractiveTunables::default();
        let mut c = CpuInfo {
            target_freq: 1_000_000,
            floor_freq: 1_000_000,
            loc_floor_val_time: 0,
            ..CpuInfo::default()
        };
        // idle, 20 ms after the floor was validated, target at cur: held
        c.restart_window(0, 0);
        let s = c.sample_v4_4(&mut t, &table(), 1_000_000, 20_000, 20_000);
        assert_eq!((s.verdict, s.new_freq), (Verdict::NotYet, 500_000));
        // the policy runs faster than this CPU asks (another CPU holds it): not held
        c.restart_window(20_000, 20_000);
        let s = c.sample_v4_4(&mut t, &table(), 1_500_000, 40_000, 40_000);
        assert_eq!((s.verdict, s.new_freq), (Verdict::Target, 500_000));
        // neither the old target nor the new one reached cur: the floor time stays
        assert_eq!((c.floor_freq, c.loc_floor_val_time), (500_000, 0));
    }

    #[test]
    fn v4_4_boost_raises_only_the_target_and_policy_hispeed_time() {
        let mut t = InteractiveTunables::default();
        let mut cpus = [
            CpuInfo {
                target_freq: 500_000,
                floor_freq: 500_000,
                floor_validate_time: 3,
                loc_floor_val_time: 3,
                ..CpuInfo::default()
            },
            CpuInfo {
                target_freq: 2_000_000,
                pol_hispeed_val_time: 7,
                ..CpuInfo::default()
            },
        ];
        let raised = boost_v4_4(&mut t, &mut cpus, |_| 1_500_000, 1_000);
        assert!(t.boosted);
        assert_eq!(raised, [0]);
        assert_eq!(
            (cpus[0].target_freq, cpus[0].pol_hispeed_val_time),
            (1_500_000, 1_000)
        );
        assert_eq!(
            (cpus[0].floor_freq, cpus[0].loc_floor_val_time),
            (500_000, 3)
        );
        assert_eq!(cpus[0].hispeed_validate_time, 0);
        assert_eq!(cpus[1].pol_hispeed_val_time, 7);
    }

    #[test]
    fn v4_4_policy_info_takes_the_earliest_hispeed_time_of_the_highest_target() {
        let c = |target_freq, loc_hispeed_val_time, loc_floor_val_time| CpuInfo {
            target_freq,
            loc_hispeed_val_time,
            loc_floor_val_time,
            ..CpuInfo::default()
        };
        let cpus = [c(1_000_000, 5, 3), c(1_500_000, 9, 1), c(1_500_000, 7, 2)];
        assert_eq!(get_policy_info(&cpus, &[0, 1, 2]), (1_500_000, 7, 3));
        assert_eq!(get_policy_info(&cpus, &[0]), (1_000_000, 5, 3));
    }

    #[test]
    fn lowering_waits_for_min_sample_time() {
        let t = InteractiveTunables::default();
        let mut c = CpuInfo {
            target_freq: 2_000_000,
            floor_freq: 2_000_000,
            floor_validate_time: 0,
            ..CpuInfo::default()
        };
        c.restart_window(0, 0);
        // idle 20 ms: load 0 → 500 MHz, but the floor (2000) was validated 20 ms ago
        let s = c.sample(&t, &table(), 2_000_000, 20_000, 20_000, false);
        assert_eq!((s.verdict, s.new_freq), (Verdict::NotYet, 500_000));
        c.restart_window(20_000, 20_000);
        let s = c.sample(&t, &table(), 2_000_000, 80_000, 80_000, false);
        assert_eq!((s.verdict, s.new_freq), (Verdict::Target, 500_000));
    }
}
