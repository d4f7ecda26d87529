//! cpufreq in the engine: the policies (`struct cpufreq_policy`: one per performance
//! domain) with their governor ([`crate::cpufreq::governor`]), the scheduler's
//! `cpufreq_update_util()` hook, and the driver: a fast switch applies at once, the slow
//! path's `__cpufreq_driver_target()` completes one transition latency later (`Ev::FreqApply`),
//! and a new frequency changes the speed of every CPU of the domain.
//!
//! The slow path runs in the policy's `sugov:N` kthread (sim/kthread.rs) unless
//! `cpufreq.kthread = none`, when each transition starts at the governor's decision. The
//! dbs governors' work runs in the sampling CPU's `kworker/N:1` (`schedule_work_on()`),
//! which asks the driver and sleeps through the transition (`__cpufreq_driver_target()` is
//! synchronous there); with `cpufreq.kthread = none` it runs at the sample.
//! Simplification: every `cpufreq_update_util()` is treated as local
//! (`cpufreq_this_cpu_can_update()` is not modelled).

use super::energy::{cpu_bw_dl, cpu_util_cfs, cpu_util_cfs_boost_of, rq_signals};
use super::program::Op;
use super::{g_power, Ev, Out, Rq, Sim};
use crate::cpufreq::conservative::CsPolicy;
use crate::cpufreq::dbs::{self, DbsCpuInput, DbsData, DbsGovernor, DbsKind, PolicyDbs};
use crate::cpufreq::freq_table::FreqTable;
use crate::cpufreq::governor::{FreqRequest, GovernorState};
use crate::cpufreq::ondemand::OdPolicy;
use crate::cpufreq::schedutil::{
    cpufreq_policy_transition_delay_us, SugovCpuInput, SugovInputs, SugovParams, SugovPolicy,
};
use crate::energy::em::EnergyModel;
use crate::options::{Governor, Settings};
use crate::platform::Platform;
use crate::time::Nanos;
use crate::trace::TraceEvent;

/// One cpufreq policy: its governor and its driver's transition latency.
#[derive(Debug, Clone)]
pub(in crate::sim) struct CpufreqPolicy {
    /// The governor's state.
    pub gov: GovernorState,
    /// `cpuinfo.transition_latency` (ns): how long `__cpufreq_driver_target()` takes.
    pub transition_latency_ns: Nanos,
    /// The governor changes frequency through `__cpufreq_driver_target()` in process
    /// context (schedutil without fast switch: its `sugov:N` kthread).
    pub slow_path: bool,
    /// The `sugov:N` kthread, when `cpufreq.kthread = thread` (sim/kthread.rs).
    pub kthread: Option<super::kthread::Kthread>,
    /// A dbs governor's work is waiting for the driver's transition: in the kworker of
    /// this CPU (`Some(Some(cpu))`), or without a thread (`Some(None)`).
    pub dbs_waiter: Option<Option<usize>>,
    /// v4.4 ondemand's delayed-work state (sim/dbs_v44.rs).
    pub dbs_v44: Option<super::dbs_v44::DbsV44>,
}

/// Where a CPU is in its performance domain ([`CpufreqState::pd_bit`]).
#[derive(Debug, Clone, Copy)]
pub(in crate::sim) struct PdBit {
    /// Its performance domain.
    pub pd: usize,
    /// Its index in the domain's CPUs (`PerfDomain::cpus`).
    pub j: usize,
    /// The index in [`CpufreqState::util_changed`] of its word (the domain's first word
    /// is at `word - j / 64`).
    pub word: usize,
    /// `1 << (j % 64)`.
    pub bit: u64,
    /// Which path [`Sim::cpufreq_update_util`] takes for the CPU's policy.
    pub path: UpdatePath,
}

/// The path of [`Sim::cpufreq_update_util`] for a policy, fixed at the start (the
/// governor is chosen then and never changes, as is a schedutil policy's
/// [`SugovPolicy::may_be_at_one_freq`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::sim) enum UpdatePath {
    /// Schedutil ([`SugovPolicy::update_at`]) or another governor's `update_util()`.
    General,
    /// Ondemand or conservative (`dbs_update_util_handler()`, which reads only the time).
    Dbs,
    /// A schedutil policy that may be [`SugovPolicy::at_one_freq`]: when it is,
    /// [`SugovPolicy::update_at_one_freq`] on inputs built where each reader is inline;
    /// else the general path.
    OneFreq,
}

/// The run's cpufreq policies, by performance domain.
#[derive(Debug, Clone)]
pub(in crate::sim) struct CpufreqState {
    /// One per performance domain.
    pub policies: Vec<CpufreqPolicy>,
    /// Some governor installed the update-util hook (`cpufreq_add_update_util_hook()`).
    pub hooked: bool,
    /// The governor is ondemand or conservative.
    pub dbs: bool,
    /// A governor reads the CPU time accounting ([`Sim::cpustat_read`]): `dbs`, or
    /// `interactive` is set; both fixed at the start.
    pub cpustat_read: bool,
    /// Each CPU's `kworker/N:1`, when a dbs governor runs its work in threads.
    pub kworkers: Vec<super::kthread::Kthread>,
    /// The interactive governor.
    pub interactive: Option<Box<super::interactive::InteractiveEngine>>,
    /// The `sched` governor.
    pub schedfreq: Option<Box<super::schedfreq::SchedFreqEngine>>,
    /// Per performance domain, `⌈CPUs / 64⌉` words one after the other: its CPUs (word
    /// `j / 64`, bit `j % 64` for the `j`-th) whose `sugov_get_util()` inputs changed
    /// since its policy's last `cpufreq_update_util()` ([`SugovInputs::changed`]).
    pub util_changed: Vec<u64>,
    /// Per CPU: its performance domain, its index there, and its word and bit in
    /// [`CpufreqState::util_changed`] and [`CpufreqState::bw_changed`].
    pub pd_bit: Vec<PdBit>,
    /// Laid out as [`CpufreqState::util_changed`]: the CPUs whose `bw_min` inputs changed
    /// ([`Sim::rq_bw_changed`], which marks `util_changed` too; this word is cleared only on
    /// the one-OPP path, so it may keep marks `util_changed` no longer has) since their policy's
    /// last update on the one-OPP path ([`SugovPolicy::update_at_one_freq`]). The other
    /// policies never read it.
    pub bw_changed: Vec<u64>,
}

impl CpufreqState {
    /// `cpufreq_online()` + the governor's start for every performance domain of `p` at
    /// `now` (schedutil: `sugov_init()` + `sugov_start()`; ondemand and conservative:
    /// `cpufreq_dbs_governor_init()` + `_start()`, every CPU idle so far), starting at
    /// `fixed_freq_khz`.
    pub(in crate::sim) fn new(
        p: &Platform,
        s: &Settings,
        em: &EnergyModel,
        now: Nanos,
    ) -> CpufreqState {
        let o = &s.options;
        let dbs = matches!(
            o.cpufreq.governor,
            Governor::Ondemand | Governor::Conservative
        );
        let policies: Vec<CpufreqPolicy> = if dbs {
            p.perf_domains
                .iter()
                .enumerate()
                .map(|(i, pd)| {
                    let em_pd = em.pds.get(i).and_then(Option::as_ref);
                    let gov = dbs_start(pd, s, em_pd, s.fixed_freq_khz[i], now);
                    let v44 = gov.dbs().data.v4_4;
                    CpufreqPolicy {
                        gov: GovernorState::Dbs(Box::new(gov)),
                        transition_latency_ns: pd.transition_latency_ns,
                        slow_path: true,
                        kthread: None,
                        dbs_waiter: None,
                        dbs_v44: v44.then(super::dbs_v44::DbsV44::default),
                    }
                })
                .collect()
        } else if matches!(o.cpufreq.governor, Governor::Interactive | Governor::Sched) {
            p.perf_domains
                .iter()
                .enumerate()
                .map(|(i, pd)| CpufreqPolicy {
                    gov: GovernorState::Timed {
                        cur: s.fixed_freq_khz[i],
                        in_flight: None,
                    },
                    transition_latency_ns: pd.transition_latency_ns,
                    slow_path: true,
                    kthread: None,
                    dbs_waiter: None,
                    dbs_v44: None,
                })
                .collect()
        } else if o.cpufreq.governor == Governor::Schedutil {
            p.perf_domains
                .iter()
                .enumerate()
                .map(|(i, pd)| {
                    let rate_limit_us = o.cpufreq.rate_limit_us.unwrap_or_else(|| {
                        cpufreq_policy_transition_delay_us(
                            pd.transition_latency_ns,
                            0,
                            o.cpufreq.rate_limit_default,
                        )
                    });
                    let params = SugovParams {
                        version: o.cpufreq.schedutil_version,
                        cfs_util: o.cpufreq.schedutil_cfs_util,
                        rate_limit_us,
                        fast_switch: o
                            .cpufreq
                            .fast_switch
                            .unwrap_or(p.cpufreq_driver.fast_switch()),
                        tick_nsec: s.tick_ns,
                        freq_invariant: o.pelt.frequency_invariance,
                    };
                    let max_cap = pd.cpus.first().map_or(1024, |&c| p.cpus[c].capacity);
                    let em_pd = em.pds.get(i).and_then(Option::as_ref);
                    let slow_path = !params.fast_switch;
                    let sg = SugovPolicy::new(pd, max_cap, em_pd, params, s.fixed_freq_khz[i]);
                    CpufreqPolicy {
                        gov: GovernorState::Schedutil(Box::new(sg)),
                        transition_latency_ns: pd.transition_latency_ns,
                        slow_path,
                        kthread: None,
                        dbs_waiter: None,
                        dbs_v44: None,
                    }
                })
                .collect()
        } else {
            p.perf_domains
                .iter()
                .enumerate()
                .map(|(i, pd)| CpufreqPolicy {
                    gov: GovernorState::Fixed {
                        freq_khz: s.fixed_freq_khz[i],
                    },
                    transition_latency_ns: pd.transition_latency_ns,
                    slow_path: false,
                    kthread: None,
                    dbs_waiter: None,
                    dbs_v44: None,
                })
                .collect()
        };
        let hooked = policies.iter().any(|pol| pol.gov.uses_update_util());
        let interactive = (o.cpufreq.governor == Governor::Interactive).then(|| {
            Box::new(super::interactive::InteractiveEngine::new(
                p,
                &o.cpufreq.interactive,
                em,
            ))
        });
        let schedfreq = (o.cpufreq.governor == Governor::Sched).then(|| {
            Box::new(super::schedfreq::SchedFreqEngine::new(
                p,
                &o.cpufreq.sched,
                em,
            ))
        });
        // each domain's first word in util_changed, and the end of the last one's
        let first_words: Vec<usize> = std::iter::once(0)
            .chain(p.perf_domains.iter().scan(0, |end, d| {
                *end += d.cpus.len().div_ceil(64).max(1);
                Some(*end)
            }))
            .collect();
        let pd_bit: Vec<PdBit> = p
            .cpus
            .iter()
            .enumerate()
            .map(|(c, cpu)| {
                let pd = &p.perf_domains[cpu.perf_domain].cpus;
                let j = pd.iter().position(|&x| x == c).unwrap_or(0);
                let first = first_words[cpu.perf_domain];
                let path = match &policies[cpu.perf_domain].gov {
                    _ if dbs => UpdatePath::Dbs,
                    GovernorState::Schedutil(sg) if sg.may_be_at_one_freq() => UpdatePath::OneFreq,
                    _ => UpdatePath::General,
                };
                PdBit {
                    pd: cpu.perf_domain,
                    j,
                    word: first + j / 64,
                    bit: 1 << (j % 64),
                    path,
                }
            })
            .collect();
        CpufreqState {
            cpustat_read: dbs || interactive.is_some(),
            policies,
            hooked,
            dbs,
            kworkers: Vec::new(),
            interactive,
            schedfreq,
            util_changed: vec![0; first_words.last().copied().unwrap_or(0)],
            bw_changed: vec![0; first_words.last().copied().unwrap_or(0)],
            pd_bit,
        }
    }
}

/// `cpufreq_dbs_governor_init()` + the governor's `init()` and `start()` for `pd` at `now`,
/// at `cur` kHz: `sampling_rate` unset is `max(CPUFREQ_DBS_MIN_SAMPLING_INTERVAL,
/// cpufreq_policy_transition_delay_us(policy))`.
fn dbs_start(
    pd: &crate::platform::PerfDomain,
    s: &Settings,
    em: Option<&crate::energy::em::EmPerfDomain>,
    cur: u64,
    now: Nanos,
) -> DbsGovernor {
    let c = &s.options.cpufreq;
    let table = FreqTable::new(pd, em);
    let default_rate = || {
        let delay =
            cpufreq_policy_transition_delay_us(pd.transition_latency_ns, 0, c.rate_limit_default);
        delay.max(dbs::dbs_min_sampling_interval_us(s.tick_ns))
    };
    let inputs = vec![DbsCpuInput::default(); pd.cpus.len()];
    let as_u32 = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    let kind = if c.governor == Governor::Ondemand {
        let t = &c.ondemand;
        let v4_4 = t.version == crate::options::OndemandVersion::V4_4;
        let rate = t.sampling_rate.unwrap_or_else(|| {
            if v4_4 {
                super::dbs_v44::v4_4_default_sampling_rate(pd.transition_latency_ns)
            } else {
                default_rate()
            }
        });
        let data = DbsData {
            sampling_rate: as_u32(rate),
            up_threshold: as_u32(t.up_threshold),
            sampling_down_factor: as_u32(t.sampling_down_factor),
            ignore_nice_load: t.ignore_nice_load,
            io_is_busy: t.io_is_busy,
            v4_4: t.version == crate::options::OndemandVersion::V4_4,
        };
        let dbs = PolicyDbs::start(data, table, cur, now, &inputs);
        DbsKind::Ondemand(OdPolicy::new(dbs, as_u32(t.powersave_bias)))
    } else {
        let t = &c.conservative;
        let data = DbsData {
            sampling_rate: as_u32(t.sampling_rate.unwrap_or_else(default_rate)),
            up_threshold: as_u32(t.up_threshold),
            sampling_down_factor: as_u32(t.sampling_down_factor),
            ignore_nice_load: t.ignore_nice_load,
            io_is_busy: false,
            v4_4: false,
        };
        let dbs = PolicyDbs::start(data, table, cur, now, &inputs);
        DbsKind::Conservative(CsPolicy::new(
            dbs,
            as_u32(t.down_threshold),
            as_u32(t.freq_step),
        ))
    };
    DbsGovernor::new(kind)
}

/// What schedutil reads of the CPUs of one policy (`sugov_get_util()` inputs), computed
/// when the governor asks for them, at an update made on `cpu`.
struct SimSugovInputs<'a> {
    cpus: &'a [usize],
    /// The CPU whose update this is: the one whose `cpu_bw_dl()` the governor reads
    /// before its rate limit.
    cpu: usize,
    rqs: &'a [Rq],
    en: &'a super::energy::EnergyState,
    /// The first word of [`SugovInputs::changed`].
    changed: u64,
    /// Its other words (a policy of more than 64 CPUs; empty for the others), which the
    /// caller clears after the update.
    changed_hi: &'a [u64],
    util_est: bool,
}

impl SimSugovInputs<'_> {
    /// CPU `j`'s inputs, its idle count given by `idle_calls` (of the CPU's number).
    #[inline(always)]
    fn input_with(&self, j: usize, idle_calls: impl FnOnce(usize) -> u64) -> SugovCpuInput {
        let cpu = self.cpus[j];
        let rq = &self.rqs[cpu];
        let util_cfs = cpu_util_cfs(rq, self.util_est);
        SugovCpuInput {
            rq: rq_signals(rq, &self.en.uclamp[cpu]),
            util_cfs,
            util_cfs_boost: cpu_util_cfs_boost_of(rq, util_cfs),
            uclamp_used: self.en.uclamp_used,
            idle_calls: idle_calls(cpu),
        }
    }
}

impl SugovInputs for SimSugovInputs<'_> {
    #[inline(always)]
    fn input(&self, j: usize) -> SugovCpuInput {
        self.input_with(j, |cpu| self.en.idle_calls[cpu])
    }

    /// Without the idle count, which a shared policy does not read.
    #[inline(always)]
    fn shared_input(&self, j: usize) -> SugovCpuInput {
        self.input_with(j, |_| 0)
    }

    /// Without the CFS utilisation and the idle count, which `bw_min` does not read.
    #[inline(always)]
    fn bw_input(&self, j: usize) -> SugovCpuInput {
        let cpu = self.cpus[j];
        SugovCpuInput {
            rq: rq_signals(&self.rqs[cpu], &self.en.uclamp[cpu]),
            util_cfs: 0,
            util_cfs_boost: 0,
            uclamp_used: self.en.uclamp_used,
            idle_calls: 0,
        }
    }

    /// The governor reads it of the updating CPU alone (`sugov_update_*()`'s
    /// `ignore_dl_rate_limit(sg_cpu)`), so `j` is that CPU's index: its rq is read without
    /// going through the policy's CPU list.
    #[inline]
    fn bw_dl(&self, j: usize) -> u64 {
        debug_assert_eq!(
            self.cpus[j], self.cpu,
            "bw_dl of another CPU than the caller"
        );
        cpu_bw_dl(&self.rqs[self.cpu])
    }

    #[inline(always)]
    fn changed(&self, w: usize) -> Option<u64> {
        Some(match w {
            0 => self.changed,
            w => self.changed_hi[w - 1],
        })
    }
}

impl Sim<'_> {
    /// Something `sugov_get_util()` reads of `cpu`'s rq may have changed (its CFS, RT or
    /// DL PELT signals, util_est, RT tasks or clamps): schedutil reads that CPU again at
    /// its policy's next aggregation, and the load balancer at its next pass (its
    /// generation, [`Sim::lb_cpu_changed`], under every governor). Every writer of those
    /// calls it.
    #[inline]
    pub(in crate::sim) fn rq_util_changed(&mut self, cpu: usize) {
        self.lb_cpu_changed(cpu);
        let cf = &mut self.cpufreq;
        let b = &cf.pd_bit[cpu];
        cf.util_changed[b.word] |= b.bit;
    }

    /// Something schedutil's `bw_min` reads of `cpu`'s rq may have changed (the DL
    /// bandwidth `running_bw`, an RT task queued or the RT class throttled, the rq's
    /// clamps): [`Sim::rq_util_changed`], and the CPU is marked in
    /// [`CpufreqState::bw_changed`] for the one-OPP path. Every writer of those calls it.
    /// (Out of line: those writers, the RT and deadline classes' and the clamps', are rare
    /// beside the fair paths they are inlined into.)
    #[inline(never)]
    pub(in crate::sim) fn rq_bw_changed(&mut self, cpu: usize) {
        self.rq_util_changed(cpu);
        let cf = &mut self.cpufreq;
        let b = &cf.pd_bit[cpu];
        cf.bw_changed[b.word] |= b.bit;
    }

    /// `cpufreq_update_util(rq, flags)` (kernel/sched/sched.h): the update-util hook of
    /// `cpu`'s policy (schedutil: `sugov_update_single_freq()` / `sugov_update_shared()`).
    /// Returns at once when the governor installs no hook.
    pub(in crate::sim) fn cpufreq_update_util(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        flags: u32,
        now: Nanos,
    ) {
        if !self.cpufreq.hooked {
            return;
        }
        let p = self.p;
        let PdBit {
            pd, j, word, path, ..
        } = self.cpufreq.pd_bit[cpu];
        debug_assert_eq!(path == UpdatePath::Dbs, self.cpufreq.dbs);
        match path {
            UpdatePath::General => {}
            UpdatePath::Dbs => {
                // dbs_update_util_handler() reads only the time
                let r = self.cpufreq.policies[pd].gov.update_util(
                    now,
                    j,
                    flags,
                    &[] as &[SugovCpuInput],
                );
                self.freq_request(out, pd, r, cpu, now);
                return;
            }
            UpdatePath::OneFreq => {
                if self.sugov_update_one_freq(out, cpu, pd, j, word, flags, now) {
                    return;
                }
            }
        }
        let cpus = &p.perf_domains[pd].cpus;
        if cpus.len() > 64 {
            self.sugov_update_past_64(out, cpu, pd, j, word, flags, now);
            return;
        }
        // j < 64: `word` is the domain's first word, and the only one
        self.sugov_update(out, cpus, cpu, pd, j, word, 0..0, flags, now);
    }

    /// [`Self::sugov_update`] for a domain of more than 64 CPUs (`word` is `cpu`'s word):
    /// out of line, so that the other domains' path stays as short.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn sugov_update_past_64(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        pd: usize,
        j: usize,
        word: usize,
        flags: u32,
        now: Nanos,
    ) {
        let first = word - j / 64;
        let cpus = &self.p.perf_domains[pd].cpus;
        let hi = first + 1..first + cpus.len().div_ceil(64);
        self.sugov_update(out, cpus, cpu, pd, j, first, hi, flags, now);
    }

    /// The update-util hook of schedutil for the `j`-th CPU (`cpu`) of domain `pd` (whose
    /// CPUs are `cpus`), whose changed CPUs are in [`CpufreqState::util_changed`] at
    /// `first` and, past its 64th CPU, at `hi`: the policy takes the changes it has not
    /// seen yet, and they are cleared. Schedutil's policies take
    /// [`SugovPolicy::update_at`] (one [`SugovPolicy::at_one_freq`] took
    /// [`Sim::sugov_update_one_freq`] instead), the other governors their `update_util()`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn sugov_update(
        &mut self,
        out: &mut Out<'_, '_>,
        cpus: &[usize],
        cpu: usize,
        pd: usize,
        j: usize,
        first: usize,
        hi: std::ops::Range<usize>,
        flags: u32,
        now: Nanos,
    ) {
        let changed = std::mem::take(&mut self.cpufreq.util_changed[first]);
        if changed == 0
            && hi.is_empty()
            && self.sugov_update_unchanged(cpus, cpu, pd, j, flags, now)
        {
            return;
        }
        let cf = &mut self.cpufreq;
        let inputs = SimSugovInputs {
            cpus,
            cpu,
            rqs: &self.rqs,
            en: &self.en,
            changed,
            changed_hi: &cf.util_changed[hi.clone()],
            util_est: self.s.options.pelt.util_est,
        };
        let r = match &mut cf.policies[pd].gov {
            // a policy at its one frequency took the one-OPP path (sugov_update_one_freq())
            GovernorState::Schedutil(sg) => {
                debug_assert!(!sg.at_one_freq());
                sg.update_at(now, j, flags, &inputs)
            }
            gov => gov.update_util(now, j, flags, &inputs),
        };
        if !hi.is_empty() {
            self.cpufreq.util_changed[hi].fill(0);
        }
        // most updates change nothing: no call for them
        if r != FreqRequest::Unchanged {
            self.freq_request(out, pd, r, cpu, now);
        }
    }

    /// [`SugovPolicy::update_shared_unchanged`] of the `j`-th CPU (`cpu`) of domain `pd`
    /// (whose CPUs are `cpus`, at most 64) when its policy is schedutil's and no CPU of it
    /// was marked changed since its last update (the caller took the marks): true when the
    /// update changed nothing but the CPU's `last_update`, and the caller need not build
    /// the inputs [`SugovPolicy::update_at`] reads. Debug builds run that update on a copy
    /// of the policy and assert the same state and an unchanged request.
    #[inline(always)]
    fn sugov_update_unchanged(
        &mut self,
        cpus: &[usize],
        cpu: usize,
        pd: usize,
        j: usize,
        flags: u32,
        now: Nanos,
    ) -> bool {
        let GovernorState::Schedutil(sg) = &mut self.cpufreq.policies[pd].gov else {
            return false;
        };
        #[cfg(debug_assertions)]
        let before = SugovPolicy::clone(sg);
        if !sg.update_shared_unchanged(now, j, flags, cpu_bw_dl(&self.rqs[cpu])) {
            return false;
        }
        #[cfg(debug_assertions)]
        {
            let mut full = before;
            let inputs = SimSugovInputs {
                cpus,
                cpu,
                rqs: &self.rqs,
                en: &self.en,
                changed: 0,
                changed_hi: &[],
                util_est: self.s.options.pelt.util_est,
            };
            assert_eq!(
                full.update_at(now, j, flags, &inputs),
                FreqRequest::Unchanged
            );
            assert_eq!(&full, &**sg, "the shared update that changes nothing");
        }
        #[cfg(not(debug_assertions))]
        let _ = cpus;
        true
    }

    /// The update-util hook of schedutil for the `j`-th CPU (`cpu`) of domain `pd`, whose
    /// word in [`CpufreqState::util_changed`] is `word`, when its policy is
    /// [`SugovPolicy::at_one_freq`] ([`UpdatePath::OneFreq`]): the policy's
    /// [`SugovPolicy::update_at_one_freq`], as [`Sim::sugov_update`] makes it, and true;
    /// false, with nothing done, when the policy is not at its one frequency (yet).
    ///
    /// The inputs, of which that path reads the calling CPU's `cpu_bw_dl()` and the
    /// `bw_min` inputs of the CPUs whose marks it takes, are built here, where every
    /// reader is inline: they need not be written to memory, as the other paths' are
    /// (they pass them to out-of-line code).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn sugov_update_one_freq(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        pd: usize,
        j: usize,
        word: usize,
        flags: u32,
        now: Nanos,
    ) -> bool {
        let cf = &mut self.cpufreq;
        let GovernorState::Schedutil(sg) = &mut cf.policies[pd].gov else {
            debug_assert!(false, "the one-OPP path of a governor other than schedutil");
            return false;
        };
        if !sg.at_one_freq() {
            return false;
        }
        // at most 64 CPUs (SugovPolicy::at_one_freq()): `word` is the domain's only word
        let changed = std::mem::take(&mut cf.util_changed[word]);
        let bw_changed = std::mem::take(&mut cf.bw_changed[word]);
        #[cfg(debug_assertions)]
        let before = SugovPolicy::clone(sg);
        if sg.update_at_one_freq_unchanged(now, j, flags, bw_changed, cpu_bw_dl(&self.rqs[cpu])) {
            #[cfg(debug_assertions)]
            {
                let mut full = before;
                let inputs = SimSugovInputs {
                    cpus: &self.p.perf_domains[pd].cpus,
                    cpu,
                    rqs: &self.rqs,
                    en: &self.en,
                    changed,
                    changed_hi: &[],
                    util_est: self.s.options.pelt.util_est,
                };
                let r = full.update_at_one_freq(now, j, flags, bw_changed, &inputs);
                assert_eq!(r, FreqRequest::Unchanged);
                assert_eq!(&full, &**sg, "the one-OPP update that changes nothing");
            }
            return true;
        }
        let inputs = SimSugovInputs {
            cpus: &self.p.perf_domains[pd].cpus,
            cpu,
            rqs: &self.rqs,
            en: &self.en,
            changed,
            changed_hi: &[],
            util_est: self.s.options.pelt.util_est,
        };
        let r = sg.update_at_one_freq(now, j, flags, bw_changed, &inputs);
        // most updates change nothing: no call for them
        if r != FreqRequest::Unchanged {
            self.freq_request(out, pd, r, cpu, now);
        }
        true
    }

    /// Carries out a governor's request made on `cpu`: a fast switch now; the slow path
    /// through the policy's kthread (its irq_work raised on `cpu`), or, without one, a
    /// transition that starts now and takes the domain's transition latency.
    fn freq_request(
        &mut self,
        out: &mut Out<'_, '_>,
        pd: usize,
        r: FreqRequest,
        cpu: usize,
        now: Nanos,
    ) {
        match r {
            FreqRequest::FastSwitch { freq_khz } => {
                self.cpufreq_driver_fast_switch(out, pd, freq_khz, now)
            }
            FreqRequest::Target { .. } if self.cpufreq.policies[pd].kthread.is_some() => {
                // sugov_deferred_update() → irq_work_queue(): after this operation
                let (pd, cpu) = (pd as u32, cpu as u32);
                self.q.push(now, Ev::IrqWork { pd, cpu });
            }
            FreqRequest::Target { .. } => {
                // the driver takes the domain's transition latency, unless
                // __cpufreq_driver_target() returns at once for the same frequency
                let pol = &self.cpufreq.policies[pd];
                let at = if pol.gov.target_is_cur() {
                    now
                } else {
                    now + pol.transition_latency_ns
                };
                self.q.push(at, Ev::FreqApply { pd: pd as u32 })
            }
            FreqRequest::Work if !self.cpufreq.kworkers.is_empty() => {
                // dbs_irq_work() → schedule_work_on(cpu): after this operation
                let (pd, cpu) = (pd as u32, cpu as u32);
                self.q.push(now, Ev::IrqWork { pd, cpu });
            }
            FreqRequest::Work => {
                self.dbs_work(pd, None, now);
            }
            FreqRequest::Queued | FreqRequest::Unchanged => {}
        }
    }

    /// What the dbs framework reads of `cpu` at `now`: its idle time so far (the current
    /// idle period included) and the run time of its nice tasks.
    fn dbs_input(&self, cpu: usize, now: Nanos) -> DbsCpuInput {
        debug_assert!(self.cpustat_read(), "cpustat kept for its readers only");
        let st = &self.cpustat[cpu];
        let open = |since: Option<Nanos>| since.map_or(0, |t| now.saturating_sub(t));
        DbsCpuInput {
            idle_ns: st.idle_sleeptime + open(st.idle_entry),
            nice_ns: st.nice_time + open(st.nice_entry),
        }
    }

    /// The dbs governor's work for `pd` (`dbs_work_handler()`), in the kworker of `worker`
    /// or, without threads, at the sample: the governor decides; a new frequency takes the
    /// driver's transition latency, after which the work ends; else it ends now.
    pub(in crate::sim) fn dbs_work(
        &mut self,
        pd: usize,
        worker: Option<usize>,
        now: Nanos,
    ) -> bool {
        let inputs: Vec<DbsCpuInput> = self.p.perf_domains[pd]
            .cpus
            .iter()
            .map(|&c| self.dbs_input(c, now))
            .collect();
        let pol = &mut self.cpufreq.policies[pd];
        match pol.gov.dbs_work(now, &inputs) {
            Some(_) => {
                pol.dbs_waiter = Some(worker);
                let at = now + pol.transition_latency_ns;
                self.q.push(at, Ev::FreqApply { pd: pd as u32 });
                true
            }
            None => {
                pol.gov.dbs_work_done();
                false
            }
        }
    }

    /// The slow path's transition completed (`sugov_work()` → `__cpufreq_driver_target()`
    /// returned): the policy's frequency applies; a request made meanwhile starts the next.
    pub(in crate::sim) fn freq_apply_event(
        &mut self,
        out: &mut Out<'_, '_>,
        pd: usize,
        now: Nanos,
    ) {
        let Some(pol) = self.cpufreq.policies.get_mut(pd) else {
            return;
        };
        let r = pol.gov.transition_done();
        let f = pol.gov.cur();
        self.apply_freq(out, pd, f, now);
        // whoever asked the driver goes on: the governor's thread waiting in it, or the
        // request made meanwhile without one
        match self.s.options.cpufreq.governor {
            Governor::Interactive => {
                self.interactive_transition_done(out, pd, now);
            }
            Governor::Sched => {
                self.schedfreq_transition_done(out, pd, now);
            }
            Governor::Ondemand | Governor::Conservative => {
                match self.cpufreq.policies[pd].dbs_waiter.take() {
                    Some(Some(cpu)) => self.kworker_transition_complete(out, cpu, now),
                    Some(None) => {
                        self.cpufreq.policies[pd].gov.dbs_work_done();
                        self.dbs_v44_requeue(pd, now);
                    }
                    None => {}
                }
            }
            _ => {
                if let Some(kt) = self.cpufreq.policies[pd].kthread.as_mut() {
                    // the kthread, woken by the completion, serves the request made
                    // meanwhile
                    kt.more |= matches!(r, FreqRequest::Target { .. });
                    self.sugov_transition_complete(out, pd, now);
                } else {
                    let cpu = self.p.perf_domains[pd].cpus.first().copied().unwrap_or(0);
                    self.freq_request(out, pd, r, cpu, now);
                }
            }
        }
    }

    /// `cpufreq_driver_fast_switch()` (drivers/cpufreq/cpufreq.c, v6.11): `khz` is
    /// `policy->cur` of `pd` now, and `cpu_frequency` is traced for every CPU of the policy
    /// even when the frequency is unchanged (schedutil's forced commit after a limits
    /// change, `need_freq_update`).
    fn cpufreq_driver_fast_switch(
        &mut self,
        out: &mut Out<'_, '_>,
        pd: usize,
        khz: u64,
        now: Nanos,
    ) {
        if !self.apply_freq(out, pd, khz, now) {
            self.trace_cpu_frequency(out, pd, khz, now);
        }
    }

    /// `trace_cpu_frequency(khz, cpu)` for every CPU of performance domain `pd`.
    fn trace_cpu_frequency(&self, out: &mut Out<'_, '_>, pd: usize, khz: u64, now: Nanos) {
        if !out.any.power {
            return;
        }
        for &c in &self.p.perf_domains[pd].cpus {
            let ev = TraceEvent::CpuFrequency {
                cpu_id: c as u32,
                state: khz,
            };
            out.emit(&self.ctx(c, now), &ev, g_power);
        }
    }

    /// A new frequency for every CPU of performance domain `pd` (`policy->cur`): each CPU's
    /// PELT clock and running op are brought up to `now` at the old speed, then
    /// `freq_scale` (`topology_set_freq_scale()`: `(cur << 10) / max`, 1024 without
    /// frequency invariance) changes, ops are re-armed at the new speed and `cpu_frequency`
    /// is traced per CPU. Nothing happens, and it returns false, when the frequency is
    /// unchanged (`__cpufreq_driver_target()` returns early).
    pub(in crate::sim) fn apply_freq(
        &mut self,
        out: &mut Out<'_, '_>,
        pd: usize,
        khz: u64,
        now: Nanos,
    ) -> bool {
        let p = self.p;
        let cpus = &p.perf_domains[pd].cpus;
        if cpus.iter().all(|&c| self.rqs[c].freq_khz == khz) {
            return false;
        }
        self.interactive_postchange(pd, now);
        for &c in cpus {
            self.update_rq_clock(c, now);
            self.account_op(c, now);
        }
        let fi = self.s.options.pelt.frequency_invariance;
        for &c in cpus {
            let rq = &mut self.rqs[c];
            rq.freq_khz = khz;
            rq.freq_scale = if fi {
                (khz << 10) / rq.max_freq_khz.max(1)
            } else {
                1024
            };
        }
        for &c in cpus {
            let running = self.rqs[c]
                .curr
                .is_some_and(|t| matches!(self.uthreads[t].op, Op::Run { .. }));
            if running {
                self.arm_op(c, now);
            }
        }
        self.trace_cpu_frequency(out, pd, khz, now);
        true
    }
}
