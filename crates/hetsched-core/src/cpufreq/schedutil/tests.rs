//! Tests of [`super::SugovPolicy`] against the kernel's schedutil arithmetic
//! (kernel/sched/cpufreq_schedutil.c, v6.11).

use super::*;
use crate::energy::em::tests::juno;

const T0: u64 = 1_000_000_000;
const TICK: u64 = 4_000_000;

fn params(rate_limit_us: u64, fast: bool) -> SugovParams {
    SugovParams {
        version: SchedutilVersion::V6_8,
        cfs_util: SugovCfsUtil::Boost,
        rate_limit_us,
        fast_switch: fast,
        tick_nsec: TICK,
        freq_invariant: true,
    }
}

fn input(util: u64, idle_calls: u64) -> SugovCpuInput {
    SugovCpuInput {
        rq: RqSignals::cfs_only(1024),
        util_cfs: util,
        util_cfs_boost: util,
        uclamp_used: false,
        idle_calls,
    }
}

/// A one-CPU policy on the juno big OPPs (450, 625, 800, 950, 1100 MHz), capacity 1024.
fn big_single(p: SugovParams) -> SugovPolicy {
    let mut pd = juno().perf_domains[1].clone();
    pd.cpus = vec![1];
    SugovPolicy::new(&pd, 1024, None, p, 1_100_000)
}

#[test]
fn default_rate_limit_per_version() {
    // juno: 1 ms transition latency → 1000 µs.
    let l = 1_000_000;
    assert_eq!(
        cpufreq_policy_transition_delay_us(l, 0, TransitionDelayVersion::V4_14),
        10_000
    );
    assert_eq!(
        cpufreq_policy_transition_delay_us(l, 0, TransitionDelayVersion::V6_9),
        2_000
    );
    assert_eq!(
        cpufreq_policy_transition_delay_us(l, 0, TransitionDelayVersion::V6_12),
        1_500
    );
    // exynos5420: 140 µs → 210 µs in v6.12.
    assert_eq!(
        cpufreq_policy_transition_delay_us(140_000, 0, TransitionDelayVersion::V6_12),
        210
    );
    assert_eq!(
        cpufreq_policy_transition_delay_us(20_000_000, 0, TransitionDelayVersion::V6_12Capped),
        10_000
    );
    assert_eq!(
        cpufreq_policy_transition_delay_us(0, 0, TransitionDelayVersion::V6_12),
        1_000
    );
    assert_eq!(
        cpufreq_policy_transition_delay_us(l, 500, TransitionDelayVersion::V6_12),
        500
    );
    // v6.11's form is the default: hikey960's 300 µs latency gives 2 ms, not 450 µs.
    assert_eq!(
        TransitionDelayVersion::default(),
        TransitionDelayVersion::V6_9
    );
    assert_eq!(
        cpufreq_policy_transition_delay_us(300_000, 0, TransitionDelayVersion::default()),
        2_000
    );
    // the old names still read
    let v: TransitionDelayVersion = serde_json::from_str("\"v6_10\"").unwrap();
    assert_eq!(v, TransitionDelayVersion::V6_12);
}

#[test]
fn next_freq_is_resolved_125_percent_with_uclamp() {
    let mut sg = big_single(params(0, true));
    // perf = 500 + 125 = 625; 1100000 × 625 / 1024 = 671386 → lowest OPP ≥ is 800 MHz.
    assert_eq!(
        sg.update(T0, 1, 0, &[input(500, 0)]),
        FreqRequest::FastSwitch { freq_khz: 800_000 }
    );
    // uclamp_max 300: perf = min(625, 300) = 300 → 322265 kHz → 450 MHz.
    let mut i = input(500, 1);
    i.uclamp_used = true;
    i.rq.uclamp_max = 300;
    assert_eq!(
        sg.update(T0 + 1, 1, 0, &[i]),
        FreqRequest::FastSwitch { freq_khz: 450_000 }
    );
    // uclamp_min 900: perf = max(900, 625) = 900 → 966796 kHz → 1100 MHz.
    let mut i = input(500, 2);
    i.uclamp_used = true;
    i.rq.uclamp_min = 900;
    assert_eq!(
        sg.update(T0 + 2, 1, 0, &[i]),
        FreqRequest::FastSwitch {
            freq_khz: 1_100_000
        }
    );
    // v5.x form gives the same 1.25 headroom: 1.25 × 500 = 625 → 800 MHz.
    let mut sg = big_single(SugovParams {
        version: SchedutilVersion::V5,
        ..params(0, true)
    });
    assert_eq!(
        sg.update(T0, 1, 0, &[input(500, 0)]),
        FreqRequest::FastSwitch { freq_khz: 800_000 }
    );
}

/// v6.5–v6.7's `sugov_get_util()` reads `cpu_util_cfs_boost()` in the v5.x form (the
/// `v6.6` profile), v6.4 and earlier `cpu_util_cfs()`.
#[test]
fn v5_form_reads_the_runnable_boost_from_v6_5() {
    let mut i = input(300, 0);
    i.util_cfs_boost = 600;
    let v5 = |cfs_util| SugovParams {
        version: SchedutilVersion::V5,
        cfs_util,
        ..params(0, true)
    };
    // 1.25 × 600 = 750; 1100000 × 750 / 1024 = 805664 kHz → 950 MHz.
    assert_eq!(
        big_single(v5(SugovCfsUtil::Boost)).update(T0, 1, 0, &[i]),
        FreqRequest::FastSwitch { freq_khz: 950_000 }
    );
    // 1.25 × 300 = 375 → 402832 kHz → 450 MHz.
    assert_eq!(
        big_single(v5(SugovCfsUtil::Cfs)).update(T0, 1, 0, &[i]),
        FreqRequest::FastSwitch { freq_khz: 450_000 }
    );
    // the v6.8 form reads it the same way
    assert_eq!(
        big_single(params(0, true)).update(T0, 1, 0, &[i]),
        FreqRequest::FastSwitch { freq_khz: 950_000 }
    );
}

/// The forced first commit of a slow-path policy asks for the frequency it runs at:
/// `__cpufreq_driver_target()` will return at once.
#[test]
fn forced_commit_of_the_current_frequency_is_flagged() {
    let mut pd = juno().perf_domains[1].clone();
    pd.cpus = vec![1];
    let mut sg = SugovPolicy::new(&pd, 1024, None, params(0, false), 450_000);
    assert_eq!(
        sg.update(T0, 1, 0, &[input(0, 0)]),
        FreqRequest::Target { freq_khz: 450_000 }
    );
    assert!(sg.target_is_cur());
    assert_eq!(sg.transition_done(), FreqRequest::Unchanged);
    assert!(!sg.target_is_cur());
    assert_eq!(
        sg.update(T0 + 1, 1, 0, &[input(900, 1)]),
        FreqRequest::Target {
            freq_khz: 1_100_000
        }
    );
    assert!(!sg.target_is_cur());
}

#[test]
fn rate_limit_is_respected() {
    let mut sg = big_single(params(1_500, true));
    assert_eq!(
        sg.update(T0, 1, 0, &[input(100, 0)]),
        FreqRequest::FastSwitch { freq_khz: 450_000 }
    );
    // 1 ms later a big util: still inside the 1.5 ms window.
    assert_eq!(
        sg.update(T0 + 1_000_000, 1, 0, &[input(900, 1)]),
        FreqRequest::Unchanged
    );
    // at 1.5 ms: 1.25 × 900 = 1125 → capped... 1100000 × 1125/1024 → 1100 MHz.
    assert_eq!(
        sg.update(T0 + 1_500_000, 1, 0, &[input(900, 2)]),
        FreqRequest::FastSwitch {
            freq_khz: 1_100_000
        }
    );
}

#[test]
fn iowait_boost_doubles_then_halves() {
    let mut sg = big_single(params(0, true));
    let mut t = T0;
    let mut seen = vec![];
    for _ in 0..5 {
        sg.update(t, 1, SCHED_CPUFREQ_IOWAIT, &[input(0, t)]);
        seen.push(sg.sg_cpu(0).unwrap().iowait_boost);
        t += 1_000_000; // within a tick: no reset
    }
    assert_eq!(seen, vec![128, 256, 512, 1024, 1024]);
    seen.clear();
    for _ in 0..4 {
        sg.update(t, 1, 0, &[input(0, t)]);
        seen.push(sg.sg_cpu(0).unwrap().iowait_boost);
        t += 1_000_000;
    }
    // 1024 → 512 → 256 → 128 → 64 < IOWAIT_BOOST_MIN → 0.
    assert_eq!(seen, vec![512, 256, 128, 0]);
    // An iowait request more than a tick after the last update restarts at the minimum.
    sg.update(t, 1, SCHED_CPUFREQ_IOWAIT, &[input(0, t)]);
    sg.update(t + 1, 1, SCHED_CPUFREQ_IOWAIT, &[input(0, t)]);
    assert_eq!(sg.sg_cpu(0).unwrap().iowait_boost, 256);
    sg.update(t + 2 * TICK, 1, SCHED_CPUFREQ_IOWAIT, &[input(0, t)]);
    assert_eq!(sg.sg_cpu(0).unwrap().iowait_boost, IOWAIT_BOOST_MIN);
    // The boost raises the request: boost 128 → util 128 → perf 160 with util 0.
    assert_eq!(sg.sg_cpu(0).unwrap().util, 160);
}

#[test]
fn busy_cpu_holds_its_frequency() {
    let mut sg = big_single(params(0, true));
    assert_eq!(
        sg.update(T0, 1, 0, &[input(800, 5)]),
        FreqRequest::FastSwitch {
            freq_khz: 1_100_000
        }
    );
    // No idle entry since (idle_calls unchanged): the lower request is ignored.
    assert_eq!(
        sg.update(T0 + 1, 1, 0, &[input(100, 5)]),
        FreqRequest::Unchanged
    );
    assert_eq!(sg.next_freq(), 1_100_000);
    // After an idle entry the frequency drops.
    assert_eq!(
        sg.update(T0 + 2, 1, 0, &[input(100, 6)]),
        FreqRequest::FastSwitch { freq_khz: 450_000 }
    );
}

/// v6.11 `sugov_limits()` → `sugov_should_update_freq()` sets `need_freq_update`: the
/// next update passes the rate limit, is not held by a busy CPU, and is committed even
/// when the frequency is unchanged (`sugov_update_next_freq()`); the flag is then
/// cleared (no `CPUFREQ_NEED_UPDATE_LIMITS`), so the update after it is held again.
#[test]
fn limits_change_forces_the_next_update() {
    let mut sg = big_single(params(10_000, true));
    assert_eq!(
        sg.update(T0, 1, 0, &[input(800, 5)]),
        FreqRequest::FastSwitch {
            freq_khz: 1_100_000
        }
    );
    // Within the rate limit, unchanged: nothing.
    assert_eq!(
        sg.update(T0 + 1, 1, 0, &[input(800, 5)]),
        FreqRequest::Unchanged
    );
    // A limits change: the same frequency is committed again.
    sg.limits_changed();
    assert_eq!(
        sg.update(T0 + 2, 1, 0, &[input(800, 5)]),
        FreqRequest::FastSwitch {
            freq_khz: 1_100_000
        }
    );
    // A limits change while busy (no idle entry): the lower request is not held.
    sg.limits_changed();
    assert_eq!(
        sg.update(T0 + 3, 1, 0, &[input(100, 5)]),
        FreqRequest::FastSwitch { freq_khz: 450_000 }
    );
    // need_freq_update was cleared: back to the rate limit.
    assert_eq!(
        sg.update(T0 + 4, 1, 0, &[input(800, 5)]),
        FreqRequest::Unchanged
    );
}

/// `cpufreq_start_governor()` calls `sugov_limits()` right after `sugov_start()`: the
/// first update of an idle policy (raw frequency 0 = `cached_raw_freq`) is still
/// resolved and committed, taking the policy from its boot frequency to the lowest OPP;
/// the second such update is not.
#[test]
fn first_update_after_start_commits_even_without_util() {
    let mut sg = big_single(params(0, true));
    assert_eq!(sg.cur(), 1_100_000);
    assert_eq!(
        sg.update(T0, 1, 0, &[input(0, 1)]),
        FreqRequest::FastSwitch { freq_khz: 450_000 }
    );
    assert_eq!(
        sg.update(T0 + 1, 1, 0, &[input(0, 2)]),
        FreqRequest::Unchanged
    );
}

/// A DL bandwidth increase (`ignore_dl_rate_limit()`) is a limits change: on a busy
/// CPU inside the rate limit it re-evaluates past `cached_raw_freq` and the hold.
#[test]
fn dl_bandwidth_increase_is_a_limits_change() {
    let mut sg = big_single(params(10_000, true));
    let dl = |util: u64, bw: u64| SugovCpuInput {
        rq: RqSignals {
            bw_dl: bw,
            ..RqSignals::cfs_only(1024)
        },
        ..input(util, 5)
    };
    assert_eq!(
        sg.update(T0, 1, 0, &[dl(800, 0)]),
        FreqRequest::FastSwitch {
            freq_khz: 1_100_000
        }
    );
    // bw_dl 50 > bw_min 0; util 100 → perf 125 (above bw_min) → 134 MHz → 450 MHz.
    assert_eq!(
        sg.update(T0 + 1, 1, 0, &[dl(100, 50)]),
        FreqRequest::FastSwitch { freq_khz: 450_000 }
    );
}

/// Inputs that say which changed since the previous update.
struct Tracked {
    ins: Vec<SugovCpuInput>,
    changed: [u64; POLICY_WORDS],
}

impl SugovInputs for Tracked {
    fn input(&self, j: usize) -> SugovCpuInput {
        self.ins[j]
    }
    fn changed(&self, w: usize) -> Option<u64> {
        Some(self.changed[w])
    }
}

/// A shared policy that keeps the `sugov_get_util()` of CPUs whose inputs did not
/// change decides exactly as one that reads every CPU at every aggregation, through
/// changing utilisations, RT and DL signals, clamps and iowait boosts that grow and
/// decay (debug builds also check each kept result against a fresh one); on a policy
/// of juno's four LITTLE CPUs and on one of 150 CPUs (three words of CPU sets).
#[test]
fn shared_policy_reads_only_changed_cpus_with_the_same_result() {
    let p = juno();
    let wide = PerfDomain {
        cpus: (0..150).collect(),
        ..p.perf_domains[0].clone()
    };
    for (pd, version) in [
        (&p.perf_domains[0], SchedutilVersion::V6_8),
        (&p.perf_domains[0], SchedutilVersion::V5),
        (&wide, SchedutilVersion::V6_8),
        (&wide, SchedutilVersion::V5),
    ] {
        let prm = SugovParams {
            version,
            ..params(0, true)
        };
        let mut cached = SugovPolicy::new(pd, 446, None, prm, 850_000);
        let mut plain = cached.clone();
        let mut t = Tracked {
            ins: vec![input(0, 0); pd.cpus.len()],
            changed: [0; POLICY_WORDS],
        };
        let (mut now, mut x) = (T0, 0x9e37_79b9_7f4a_7c15_u64);
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let mut kept = 0;
        for _ in 0..5_000 {
            let j = rnd(pd.cpus.len() as u64) as usize;
            if rnd(3) != 0 {
                let i = &mut t.ins[j];
                i.util_cfs = rnd(500);
                i.util_cfs_boost = i.util_cfs + rnd(100);
                i.rq.util_rt = if rnd(8) == 0 { rnd(300) } else { 0 };
                i.rq.rt_runnable = i.rq.util_rt > 100;
                i.rq.util_dl = if rnd(8) == 0 { rnd(200) } else { 0 };
                i.uclamp_used = true;
                i.rq.uclamp_min = if rnd(6) == 0 { rnd(1024) } else { 0 };
                i.rq.uclamp_max = if rnd(6) == 0 { rnd(1024) } else { 1024 };
                i.rq.arch_capacity = 446;
                let (w, bit) = word_bit(j);
                t.changed[w] |= bit;
            }
            now += if rnd(10) == 0 { 2 * TICK } else { rnd(TICK) };
            let flags = if rnd(4) == 0 { SCHED_CPUFREQ_IOWAIT } else { 0 };
            kept += (0..pd.cpus.len())
                .filter(|&k| {
                    let (w, bit) = word_bit(k);
                    k != j && (cached.stale[w] | cached.boosted[w] | t.changed[w]) & bit == 0
                })
                .count();
            let a = cached.update(now, pd.cpus[j], flags, &t);
            t.changed = [0; POLICY_WORDS];
            let b = plain.update(now, pd.cpus[j], flags, &t.ins[..]);
            assert_eq!(a, b);
            assert_eq!(cached.sg_cpu, plain.sg_cpu);
        }
        assert!(kept > 5_000, "{kept} results kept");
    }
}

/// A shared policy of one OPP, which computes only the CPUs' `bw_min` once its next
/// frequency is that OPP, asks for the same frequencies at the same updates as one
/// that runs the whole aggregation (its DL bandwidth, read by `ignore_dl_rate_limit()`,
/// still forces commits past the rate limit), and keeps the same `bw_min`s; whether it
/// is told of every CPU whose inputs changed or only of those whose `bw_min` inputs did
/// ([`SugovInputs::bw_changed`]).
#[test]
fn one_opp_shared_policy_decides_as_the_full_aggregation() {
    let mut pd = juno().perf_domains[0].clone();
    pd.opps.truncate(1);
    for version in [SchedutilVersion::V6_8, SchedutilVersion::V5] {
        for (fast, bw_tracked) in [(true, false), (false, false), (true, true), (false, true)] {
            let prm = SugovParams {
                version,
                ..params(500, fast)
            };
            let mut short = SugovPolicy::new(&pd, 446, None, prm, 850_000);
            assert!(short.only_freq.is_some());
            let mut plain = short.clone();
            plain.only_freq = None;
            let mut t = Tracked {
                ins: vec![input(0, 0); pd.cpus.len()],
                changed: [0; POLICY_WORDS],
            };
            // the CPUs whose bw_min inputs changed since the last one-OPP update (when
            // tracked apart; else every CPU whose inputs changed since the last update)
            let mut bw_changed = 0u64;
            let bw_inputs = |i: &SugovCpuInput| {
                let r = &i.rq;
                (
                    r.bw_dl,
                    r.uclamp_min,
                    r.rt_runnable,
                    r.arch_capacity,
                    i.uclamp_used,
                )
            };
            let (mut now, mut x) = (T0, 0x2545_f491_4f6c_dd1d_u64);
            let mut rnd = |n: u64| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % n
            };
            let (mut forced, mut one_path) = (0, 0);
            for _ in 0..5_000 {
                let j = rnd(pd.cpus.len() as u64) as usize;
                if rnd(3) != 0 {
                    let i = &mut t.ins[j];
                    let before = bw_inputs(i);
                    i.util_cfs = rnd(500);
                    i.util_cfs_boost = i.util_cfs + rnd(100);
                    // half the changes leave the bw_min inputs alone
                    if rnd(2) == 0 {
                        i.rq.util_rt = if rnd(8) == 0 { rnd(300) } else { 0 };
                        i.rq.rt_runnable = i.rq.util_rt > 100;
                        i.rq.bw_dl = if rnd(5) == 0 { rnd(200) } else { 0 };
                        i.uclamp_used = rnd(2) == 0;
                        i.rq.uclamp_min = if rnd(6) == 0 { rnd(1024) } else { 0 };
                        i.rq.arch_capacity = 446;
                    }
                    t.changed[0] |= 1 << j;
                    if !bw_tracked || bw_inputs(i) != before {
                        bw_changed |= 1 << j;
                    }
                }
                now += rnd(TICK / 8);
                let flags = if rnd(4) == 0 { SCHED_CPUFREQ_IOWAIT } else { 0 };
                // the engine's entry: the one-OPP path once the policy is at its OPP
                let a = if short.at_one_freq() {
                    one_path += 1;
                    // taken by the one-OPP path alone (the other path reads `changed`, of
                    // which these marks are a subset), as the engine does
                    short.update_at_one_freq(now, j, flags, std::mem::take(&mut bw_changed), &t)
                } else {
                    if !bw_tracked {
                        bw_changed = 0;
                    }
                    short.update(now, pd.cpus[j], flags, &t)
                };
                t.changed = [0; POLICY_WORDS];
                let b = plain.update(now, pd.cpus[j], flags, &t.ins[..]);
                assert_eq!(a, b);
                forced += usize::from(a != FreqRequest::Unchanged);
                if !fast && rnd(2) == 0 {
                    assert_eq!(short.transition_done(), plain.transition_done());
                }
                let bw = |sg: &SugovPolicy| sg.sg_cpu.iter().map(|c| c.bw_min).collect::<Vec<_>>();
                assert_eq!(bw(&short), bw(&plain));
                assert_eq!(short.next_freq, plain.next_freq);
            }
            assert!(forced > 50, "{forced} commits");
            assert!(one_path > 4_000, "{one_path} updates on the one-OPP path");
        }
    }
}

#[test]
fn shared_policy_takes_max_and_slow_path_waits() {
    let p = juno();
    let mut sg = SugovPolicy::new(&p.perf_domains[0], 446, None, params(0, false), 850_000);
    let ins = [input(0, 0), input(300, 0), input(0, 0), input(0, 0)];
    let ins: Vec<_> = ins
        .iter()
        .map(|i| SugovCpuInput {
            rq: RqSignals::cfs_only(446),
            ..*i
        })
        .collect();
    // CPU 3 (second of 0,3,4,5) has 300: perf 375; 850000 × 375 / 446 = 714686 → 775 MHz.
    assert_eq!(
        sg.update(T0, 0, 0, &ins[..]),
        FreqRequest::Target { freq_khz: 775_000 }
    );
    assert_eq!(sg.cur(), 850_000);
    // A new request during the transition is queued...
    let mut low = ins.clone();
    low[1].util_cfs_boost = 0;
    assert_eq!(sg.update(T0 + 10, 3, 0, &low[..]), FreqRequest::Queued);
    // ...and started when the first transition completes.
    assert_eq!(
        sg.transition_done(),
        FreqRequest::Target { freq_khz: 450_000 }
    );
    assert_eq!(sg.cur(), 775_000);
    assert_eq!(sg.transition_done(), FreqRequest::Unchanged);
    assert_eq!(sg.cur(), 450_000);
}

#[test]
fn inefficient_opps_are_skipped_by_resolution() {
    let mut p = juno();
    p.perf_domains[1].opps[1].power_uw = Some(400_000); // 625 MHz now costlier than 800
    let em = crate::energy::em::EnergyModel::build(&p, crate::energy::em::EmVersion::V6_9);
    let pd = em.pds[1].as_ref().unwrap();
    assert!(pd.table[1].inefficient);
    let sg = SugovPolicy::new(&p.perf_domains[1], 1024, Some(pd), params(0, true), 0);
    assert_eq!(sg.resolve_freq(500_000), 800_000);
    assert_eq!(sg.resolve_freq(400_000), 450_000);
}
