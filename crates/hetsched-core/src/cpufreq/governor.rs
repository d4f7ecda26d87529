//! The governor interface (`struct cpufreq_governor`, drivers/cpufreq/cpufreq.c, v6.11):
//! a governor owns only its policy's decision. The engine (`sim/cpufreq.rs`) owns the
//! cpufreq policies and everything a governor asks of the system: the scheduler's
//! `cpufreq_update_util()` hook it is called from, the driver (fast switch in scheduler
//! context, or `__cpufreq_driver_target()` taking the domain's transition latency), and
//! the policy's `cur`.
//!
//! Governors: `performance`, `powersave` and `userspace` set one frequency when they start
//! (`cpufreq_gov_performance_limits()` and friends: [`GovernorState::Fixed`]);
//! `schedutil` ([`super::schedutil`]) decides at every utilisation update; `ondemand` and
//! `conservative` ([`super::dbs`]) take a sample from the same hook once their sampling
//! period has passed and decide in their work, which the engine runs in a kworker.

use super::dbs::DbsGovernor;
use super::schedutil::{SugovInputs, SugovPolicy};

/// What the engine must do after a governor decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FreqRequest {
    /// No new frequency.
    Unchanged,
    /// `cpufreq_driver_fast_switch()`: the frequency (kHz) is `policy->cur` now.
    FastSwitch {
        /// New `policy->cur`.
        freq_khz: u64,
    },
    /// The slow path: `__cpufreq_driver_target()` from the governor's kthread; the engine
    /// completes the transition one transition latency later and then calls
    /// [`GovernorState::transition_done`].
    Target {
        /// The frequency being set.
        freq_khz: u64,
    },
    /// A transition is in flight: the new request is made when it completes (returned by
    /// [`GovernorState::transition_done`]).
    Queued,
    /// A dbs governor took a sample: its work is to run on this CPU (the irq_work queues
    /// it on the CPU's kworker), where the engine calls [`GovernorState::dbs_work`].
    Work,
}

/// One cpufreq policy's governor (its `policy->governor_data`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GovernorState {
    /// `performance`, `powersave`, `userspace`: the frequency set at start; nothing else.
    Fixed {
        /// The frequency (kHz).
        freq_khz: u64,
    },
    /// `schedutil` (`struct sugov_policy`).
    Schedutil(Box<SugovPolicy>),
    /// `ondemand` or `conservative` (`struct policy_dbs_info`).
    Dbs(Box<DbsGovernor>),
    /// A governor the engine drives from its own timers and kthread (interactive): the
    /// policy's `cur` and a transition in flight.
    Timed {
        /// `policy->cur` (kHz).
        cur: u64,
        /// The frequency of a transition in flight.
        in_flight: Option<u64>,
    },
}

impl GovernorState {
    /// Whether the governor is called from the scheduler's `cpufreq_update_util()` hook
    /// (`cpufreq_add_update_util_hook()` at its start).
    pub fn uses_update_util(&self) -> bool {
        match self {
            GovernorState::Schedutil(_) => true,
            // v4.4's ondemand samples from its own delayed work
            GovernorState::Dbs(d) => !d.dbs().data.v4_4,
            _ => false,
        }
    }

    /// `policy->cur` as the governor last set it.
    pub fn cur(&self) -> u64 {
        match self {
            GovernorState::Fixed { freq_khz } => *freq_khz,
            GovernorState::Schedutil(sg) => sg.cur(),
            GovernorState::Dbs(d) => d.dbs().cur,
            GovernorState::Timed { cur, .. } => *cur,
        }
    }

    /// The `cpufreq_update_util()` hook for the `j`-th CPU of the policy at `now`
    /// (`inputs`: one per CPU of the policy, in `PerfDomain::cpus` order).
    #[inline(always)]
    pub fn update_util<I: SugovInputs + ?Sized>(
        &mut self,
        now: u64,
        j: usize,
        flags: u32,
        inputs: &I,
    ) -> FreqRequest {
        match self {
            GovernorState::Fixed { .. } | GovernorState::Timed { .. } => FreqRequest::Unchanged,
            GovernorState::Schedutil(sg) => sg.update_at(now, j, flags, inputs),
            GovernorState::Dbs(d) => {
                if d.update_util(now) {
                    FreqRequest::Work
                } else {
                    FreqRequest::Unchanged
                }
            }
        }
    }

    /// Whether the slow-path transition in flight asks for `policy->cur`: then
    /// `__cpufreq_driver_target()` (drivers/cpufreq/cpufreq.c, v6.11) returns at once,
    /// without a transition (the modelled drivers do not set `CPUFREQ_NEED_UPDATE_LIMITS`).
    pub fn target_is_cur(&self) -> bool {
        match self {
            GovernorState::Schedutil(sg) => sg.target_is_cur(),
            GovernorState::Timed { cur, in_flight } => *in_flight == Some(*cur),
            GovernorState::Fixed { .. } | GovernorState::Dbs(_) => false,
        }
    }

    /// A slow-path transition completed: `policy->cur` is its frequency; a request made
    /// meanwhile may start the next.
    pub fn transition_done(&mut self) -> FreqRequest {
        match self {
            GovernorState::Fixed { .. } => FreqRequest::Unchanged,
            GovernorState::Timed { cur, in_flight } => {
                if let Some(f) = in_flight.take() {
                    *cur = f;
                }
                FreqRequest::Unchanged
            }
            GovernorState::Schedutil(sg) => sg.transition_done(),
            GovernorState::Dbs(d) => {
                d.transition_done();
                FreqRequest::Unchanged
            }
        }
    }

    /// The dbs governor's work at `now`: the driver's target (`None`: no transition).
    pub fn dbs_work(&mut self, now: u64, inputs: &[super::dbs::DbsCpuInput]) -> Option<u64> {
        match self {
            GovernorState::Dbs(d) => d.work(now, inputs),
            _ => None,
        }
    }

    /// The dbs governor's work ended (`dbs_work_handler()` returns).
    pub fn dbs_work_done(&mut self) {
        if let GovernorState::Dbs(d) = self {
            d.work_done();
        }
    }
}
