//! The "dbs" framework ondemand and conservative share (drivers/cpufreq/cpufreq_governor.c,
//! v6.11; the form since v4.7, "cpufreq: governor: Replace timers with utilization update
//! callbacks"): no timer of its own. The scheduler's `cpufreq_update_util()` hook
//! (`dbs_update_util_handler()`) takes a sample when `sample_delay_ns` has passed since the
//! last one and no work is in progress: it raises the policy's irq_work, which queues the
//! policy's work on the CPU that took the sample (`schedule_work_on()`: that CPU's
//! `kworker`). The work (`dbs_work_handler()`) runs the governor's update, which computes
//! the load with [`PolicyDbs::dbs_update`] and calls `__cpufreq_driver_target()`
//! synchronously, and its return sets the next `sample_delay_ns`.
//!
//! Since the hook runs only where the scheduler updates a CPU's utilization (the tick of a
//! busy CPU, enqueue, dequeue…), the sampling is deferrable: a policy whose CPUs are all
//! idle takes no sample, and the first update after an idle stretch does.
//!
//! Load is `100 × (wall − idle) / wall` per CPU over the window since its last sample, in
//! µs as `get_cpu_idle_time()` reports them (NOHZ idle accounting, so iowait counts as idle
//! unless `io_is_busy`; the engine has no iowait), with the time of nice tasks counted idle
//! under `ignore_nice_load`; the policy's load is the maximum over its CPUs.

use super::freq_table::{FreqTable, Relation};

/// `CPUFREQ_DBS_MIN_SAMPLING_INTERVAL` = `2 × TICK_NSEC / NSEC_PER_USEC` (µs).
pub fn dbs_min_sampling_interval_us(tick_ns: u64) -> u64 {
    2 * tick_ns / 1000
}

/// What the framework reads of one CPU of the policy at a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DbsCpuInput {
    /// The CPU's idle time since boot (ns), the current idle period included
    /// (`get_cpu_idle_time_us()`).
    pub idle_ns: u64,
    /// `kcpustat_cpu(cpu).cpustat[CPUTIME_NICE]`: run time of tasks with nice > 0 (ns).
    pub nice_ns: u64,
}

/// `struct cpu_dbs_info`: one CPU's previous sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuDbs {
    /// `prev_cpu_idle` (µs).
    pub prev_cpu_idle: u64,
    /// `prev_update_time` (µs).
    pub prev_update_time: u64,
    /// `prev_load` (%).
    pub prev_load: u32,
    /// `prev_cpu_nice` (ns).
    pub prev_cpu_nice: u64,
}

/// The tunables every dbs governor has (`struct dbs_data`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DbsData {
    /// `sampling_rate` (µs).
    pub sampling_rate: u32,
    /// `up_threshold` (%).
    pub up_threshold: u32,
    /// `sampling_down_factor`.
    pub sampling_down_factor: u32,
    /// `ignore_nice_load`.
    pub ignore_nice_load: bool,
    /// `io_is_busy`.
    pub io_is_busy: bool,
    /// v4.4's `dbs_check_cpu()`: the previous load is reused after a window whose wall
    /// time (not idle time, as since v4.7) exceeds two sampling periods, and a CPU whose
    /// window is empty or shorter than its idle time is skipped.
    pub v4_4: bool,
}

/// `struct policy_dbs_info`: the policy's sampling state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyDbs {
    /// The tunables.
    pub data: DbsData,
    /// `last_sample_time` (ns).
    pub last_sample_time: u64,
    /// `sample_delay_ns`.
    pub sample_delay_ns: u64,
    /// `rate_mult`: ondemand's `sampling_down_factor` at the maximum.
    pub rate_mult: u32,
    /// `work_in_progress`: a sample was taken and its work has not finished.
    pub work_in_progress: bool,
    /// `idle_periods`: whole sampling periods the least idle CPU slept (`u32::MAX`: none).
    pub idle_periods: u32,
    /// Per CPU of the policy.
    pub cpus: Vec<CpuDbs>,
    /// The policy's frequency table and limits.
    pub table: FreqTable,
    /// `policy->cur` (kHz).
    pub cur: u64,
}

impl PolicyDbs {
    /// `cpufreq_dbs_governor_init()` + `cpufreq_dbs_governor_start()` at `now` (ns) with
    /// the policy's CPUs' counters: `rate_mult` 1, each CPU's previous sample read now
    /// (`prev_load` 0), and `gov_set_update_util(policy_dbs, sampling_rate)`, which sets
    /// `sample_delay_ns` and clears `last_sample_time` (so the first update samples).
    pub fn start(
        data: DbsData,
        table: FreqTable,
        cur: u64,
        now: u64,
        inputs: &[DbsCpuInput],
    ) -> Self {
        let cpus = inputs
            .iter()
            .map(|i| CpuDbs {
                prev_cpu_idle: i.idle_ns / 1000,
                prev_update_time: now / 1000,
                prev_load: 0,
                prev_cpu_nice: if data.ignore_nice_load { i.nice_ns } else { 0 },
            })
            .collect();
        PolicyDbs {
            data,
            last_sample_time: 0,
            sample_delay_ns: u64::from(data.sampling_rate) * 1000,
            rate_mult: 1,
            work_in_progress: false,
            idle_periods: u32::MAX,
            cpus,
            table,
            cur,
        }
    }

    /// `dbs_update_util_handler()` at `time` (ns): whether to take a sample now (raise the
    /// irq_work that queues the work). `cpufreq_this_cpu_can_update()` is taken as true.
    pub fn update_util(&mut self, time: u64) -> bool {
        if self.work_in_progress {
            return false;
        }
        let delta = time.wrapping_sub(self.last_sample_time) as i64;
        if delta < self.sample_delay_ns as i64 {
            return false;
        }
        self.last_sample_time = time;
        self.work_in_progress = true;
        true
    }

    /// The end of `dbs_work_handler()`: `gov_update_sample_delay()` with the governor's
    /// delay (µs), then `work_in_progress` cleared.
    pub fn work_done(&mut self, delay_us: u64) {
        self.sample_delay_ns = delay_us.saturating_mul(1000);
        self.work_in_progress = false;
    }

    /// `dbs_update(policy)` at `now` (ns): the policy's load (%), the maximum over its
    /// CPUs, and `idle_periods`.
    pub fn dbs_update(&mut self, now: u64, inputs: &[DbsCpuInput]) -> u32 {
        let d = self.data;
        let sampling_rate = d.sampling_rate.wrapping_mul(self.rate_mult);
        let mut max_load = 0;
        let mut idle_periods = u32::MAX;
        for (j, input) in self.cpus.iter_mut().zip(inputs) {
            // get_cpu_idle_time(): µs of the ns counters
            let update_time = now / 1000;
            let cur_idle_time = input.idle_ns / 1000;
            let time_elapsed = update_time.wrapping_sub(j.prev_update_time) as u32;
            j.prev_update_time = update_time;
            let mut idle_time: u32 = if cur_idle_time > j.prev_cpu_idle {
                (cur_idle_time - j.prev_cpu_idle) as u32
            } else {
                0
            };
            j.prev_cpu_idle = cur_idle_time;
            if d.ignore_nice_load {
                let nice = input.nice_ns.wrapping_sub(j.prev_cpu_nice) / 1000;
                idle_time = idle_time.wrapping_add(nice as u32);
                j.prev_cpu_nice = input.nice_ns;
            }
            if d.v4_4 && (time_elapsed == 0 || time_elapsed < idle_time) {
                continue; // v4.4: `if (!wall_time || wall_time < idle_time) continue;`
            }
            let long = if d.v4_4 { time_elapsed } else { idle_time };
            let load = if time_elapsed == 0 {
                j.prev_load
            } else if (long as i32) > 2 * sampling_rate as i32 && j.prev_load != 0 {
                // woken after a long idle: the previous window's load, once
                let l = j.prev_load;
                j.prev_load = 0;
                l
            } else {
                let l = if time_elapsed >= idle_time {
                    100 * (time_elapsed - idle_time) / time_elapsed
                } else if (idle_time as i32) < 0 {
                    100
                } else {
                    0
                };
                j.prev_load = l;
                l
            };
            if (idle_time as i32) > 2 * sampling_rate as i32 {
                let periods = idle_time / sampling_rate.max(1);
                idle_periods = idle_periods.min(periods);
            }
            max_load = max_load.max(load);
        }
        self.idle_periods = idle_periods;
        max_load
    }

    /// `__cpufreq_driver_target(policy, target, relation)`: the OPP to set, or `None`
    /// when it is `policy->cur` already.
    pub fn driver_target(&self, target: u64, relation: Relation, efficient: bool) -> Option<u64> {
        let f = self.table.resolve(target, relation, efficient);
        (f != self.cur).then_some(f)
    }
}

/// Which dbs governor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DbsKind {
    /// ondemand.
    Ondemand(super::ondemand::OdPolicy),
    /// conservative.
    Conservative(super::conservative::CsPolicy),
}

/// A dbs governor's policy as the engine drives it: the sample decision in the update-util
/// hook, the work in a kworker, the driver's transition, the end of the work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbsGovernor {
    /// The governor.
    pub kind: DbsKind,
    /// The delay (µs) `gov_dbs_update()` returned, set when the work ends.
    pending_delay_us: u64,
    /// The frequency of a transition in flight.
    in_flight: Option<u64>,
}

impl DbsGovernor {
    /// A started governor.
    pub fn new(kind: DbsKind) -> DbsGovernor {
        DbsGovernor {
            kind,
            pending_delay_us: 0,
            in_flight: None,
        }
    }

    /// The framework's state.
    pub fn dbs(&self) -> &PolicyDbs {
        match &self.kind {
            DbsKind::Ondemand(p) => &p.dbs,
            DbsKind::Conservative(p) => &p.dbs,
        }
    }

    fn dbs_mut(&mut self) -> &mut PolicyDbs {
        match &mut self.kind {
            DbsKind::Ondemand(p) => &mut p.dbs,
            DbsKind::Conservative(p) => &mut p.dbs,
        }
    }

    /// `dbs_update_util_handler()`: whether to queue the work now.
    pub fn update_util(&mut self, time: u64) -> bool {
        self.dbs_mut().update_util(time)
    }

    /// `dbs_work_handler()` up to the driver: `gov_dbs_update()` at `now`; the frequency
    /// the driver is asked for, if any. Without one the work can end at once.
    pub fn work(&mut self, now: u64, inputs: &[DbsCpuInput]) -> Option<u64> {
        let (f, delay) = match &mut self.kind {
            DbsKind::Ondemand(p) => p.dbs_update(now, inputs),
            DbsKind::Conservative(p) => p.dbs_update(now, inputs),
        };
        self.pending_delay_us = delay;
        self.in_flight = f;
        f
    }

    /// The delay (µs) the last `gov_dbs_update()` returned.
    pub fn pending_delay_us(&self) -> u64 {
        self.pending_delay_us
    }

    /// The driver's transition completed: `policy->cur` is its frequency.
    pub fn transition_done(&mut self) {
        if let Some(f) = self.in_flight.take() {
            self.dbs_mut().cur = f;
        }
    }

    /// The end of `dbs_work_handler()`: the next sample delay, `work_in_progress` cleared.
    pub fn work_done(&mut self) {
        let d = self.pending_delay_us;
        self.dbs_mut().work_done(d);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn table() -> FreqTable {
        let pd = crate::platform::PerfDomain {
            id: 0,
            cpus: vec![0, 1],
            opps: [500_000, 1_000_000, 1_500_000, 2_000_000]
                .iter()
                .map(|&f| crate::platform::Opp {
                    freq_khz: f,
                    microvolt: None,
                    power_uw: None,
                })
                .collect(),
            max_freq_khz: 2_000_000,
            transition_latency_ns: 0,
            dynamic_power_coefficient: None,
            power_source: crate::platform::PowerSource::None,
        };
        FreqTable::new(&pd, None)
    }

    fn data() -> DbsData {
        DbsData {
            sampling_rate: 20_000,
            up_threshold: 95,
            sampling_down_factor: 1,
            ignore_nice_load: false,
            io_is_busy: false,
            v4_4: false,
        }
    }

    fn inp(idle_us: u64) -> DbsCpuInput {
        DbsCpuInput {
            idle_ns: idle_us * 1000,
            nice_ns: 0,
        }
    }

    #[test]
    fn samples_are_taken_after_the_delay_one_at_a_time() {
        let mut p = PolicyDbs::start(data(), table(), 2_000_000, 0, &[inp(0), inp(0)]);
        // last_sample_time = 0: the first update past one delay since boot samples
        assert!(!p.update_util(19_999_999));
        assert!(p.update_util(30_000_000));
        assert!(!p.update_util(80_000_000), "work in progress");
        p.work_done(20_000);
        assert!(!p.update_util(49_999_999));
        assert!(p.update_util(50_000_000));
    }

    #[test]
    fn load_is_the_busiest_cpus_share_of_the_window() {
        let mut p = PolicyDbs::start(data(), table(), 2_000_000, 0, &[inp(0), inp(0)]);
        // 20 ms: CPU 0 idle 15 ms (25 % busy), CPU 1 idle 5 ms (75 % busy)
        assert_eq!(p.dbs_update(20_000_000, &[inp(15_000), inp(5_000)]), 75);
        assert_eq!(p.idle_periods, u32::MAX);
        // the next window all busy on CPU 1
        assert_eq!(p.dbs_update(40_000_000, &[inp(35_000), inp(5_000)]), 100);
        // 60 ms: CPU 0 idle throughout (load 0, 3 idle periods); CPU 1 idle 55 ms after a
        // fully busy window (> 2 × 20 ms): its previous load, once, and 2 idle periods
        assert_eq!(p.dbs_update(100_000_000, &[inp(95_000), inp(60_000)]), 100);
        assert_eq!(p.idle_periods, 2);
        assert_eq!(p.cpus[1].prev_load, 0);
        // the next window is computed again
        assert_eq!(p.dbs_update(120_000_000, &[inp(115_000), inp(70_000)]), 50);
    }
}
