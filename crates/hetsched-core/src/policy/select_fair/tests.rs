use super::*;
use crate::policy::domains::SD_ASYM_CPUCAPACITY;
use crate::policy::find_dst::{update_sg_wakeup_stats, GroupType, SgWakeupStats};
use std::cell::Cell;

const HIKEY_CAPS: [u64; 8] = [462, 462, 462, 462, 1024, 1024, 1024, 1024];

/// CPUs 0..8, the affinity [`task`] borrows.
static ALL8: std::sync::LazyLock<CpuSet> = std::sync::LazyLock::new(|| CpuSet::first_n(8));

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

fn task(prev: usize, util: u64, flags: u32) -> FairWakeTask<'static> {
    FairWakeTask {
        id: 42,
        prev_cpu: prev,
        allowed: &ALL8,
        util_est: util,
        uclamp_min: 0,
        uclamp_max: 1024,
        load: 512,
        synced_load: 512,
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
        feec_syncs: false,
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
    let only6 = CpuSet::from_cpus(&[6]);
    let pinned = FairWakeTask {
        allowed: &only6,
        ..task(1, 100, WF_TTWU)
    };
    let pl = select(&v, &topo, &p, &ctx(2), &pinned);
    assert_eq!((pl.cpu, pl.reason), (6, WakeReason::Fallback));
}

/// A view that tests every CPU (the default [`FairWakeView::idle_candidates`]): the scans
/// as the kernel writes them, to compare with the masked ones.
struct EveryCpu<'a>(&'a [WakeCpu]);

impl FairWakeView for EveryCpu<'_> {
    fn available_idle_cpu(&self, cpu: usize) -> bool {
        self.0.available_idle_cpu(cpu)
    }
    fn sched_idle_cpu(&self, cpu: usize) -> bool {
        self.0.sched_idle_cpu(cpu)
    }
    fn nr_running(&self, cpu: usize) -> u32 {
        self.0.nr_running(cpu)
    }
    fn h_nr_running(&self, cpu: usize) -> u32 {
        self.0.h_nr_running(cpu)
    }
    fn cpu_load(&self, cpu: usize) -> u64 {
        self.0.cpu_load(cpu)
    }
    fn capacity(&self, cpu: usize) -> CpuCapacity {
        self.0.capacity(cpu)
    }
    fn nr_idle_scan(&self, cpu: usize) -> Option<u32> {
        self.0.nr_idle_scan(cpu)
    }
    fn cpu_load_without(&self, cpu: usize) -> u64 {
        self.0.cpu_load_without(cpu)
    }
    fn cpu_util_without(&self, cpu: usize) -> u64 {
        self.0.cpu_util_without(cpu)
    }
    fn cpu_runnable_without(&self, cpu: usize) -> u64 {
        self.0.cpu_runnable_without(cpu)
    }
    fn task_running_on_cpu(&self, cpu: usize) -> bool {
        self.0.task_running_on_cpu(cpu)
    }
    fn idle_cpu_without(&self, cpu: usize) -> bool {
        self.0.idle_cpu_without(cpu)
    }
    fn idle_exit_latency(&self, cpu: usize) -> Option<u32> {
        self.0.idle_exit_latency(cpu)
    }
    fn idle_stamp(&self, cpu: usize) -> u64 {
        self.0.idle_stamp(cpu)
    }
}

#[test]
fn idle_scans_over_the_idle_candidates_choose_as_the_full_scans() {
    // Every idle subset of 8 CPUs (hikey960 capacities, one CPU's capacity_of cut so
    // that capacities tie and differ), every start, a big and a small task, an allowed
    // mask with a hole, and every SIS_UTIL bound: the same CPU as the full walk.
    let mut caps = HIKEY_CAPS;
    caps[6] = 700;
    let mut allowed = CpuSet::first_n(8);
    allowed.clear(5);
    let span = CpuSet::first_n(8);
    for idle in 0u32..256 {
        let on: Vec<usize> = (0..8).filter(|&c| idle & (1 << c) != 0).collect();
        let mut v = cpus(&caps, &on);
        v[2].sched_idle = !on.contains(&2) && idle & 0x80 != 0;
        for target in 0..8 {
            for util in [100, 600] {
                let mut t = task(target, util, WF_TTWU);
                t.allowed = &allowed;
                assert_eq!(
                    select_idle_capacity(&v[..], &span, &t, target, 8, false),
                    select_idle_capacity(&EveryCpu(&v), &span, &t, target, 8, false),
                    "idle {idle:#x} target {target} util {util}"
                );
            }
            for bound in [None, Some(0), Some(1), Some(3), Some(7), Some(9)] {
                v[target].nr_idle_scan = bound;
                assert_eq!(
                    select_idle_cpu(&v[..], &span, &allowed, target, 8),
                    select_idle_cpu(&EveryCpu(&v), &span, &allowed, target, 8),
                    "idle {idle:#x} target {target} bound {bound:?}"
                );
            }
        }
    }
}

/// `select_task_rq_fair()` (v6.11) syncs p only in feec, `select_idle_sibling()` and the
/// slow path, so with the EAS gate closed `wake_affine_weight()` reads p's load from before
/// the sleep. hikey960, this 0 (LITTLE, load 100), prev 4 (big, load 1500 with p's
/// blocked load), nothing idle; p's load 600 at its dequeue, 300 after the sync.
#[test]
fn wake_affine_weight_reads_the_load_from_before_the_sleep() {
    let topo = hikey_topo();
    let p = FairWakeParams::default();
    let mut v = cpus(&HIKEY_CAPS, &[]);
    v[0].load = 100;
    v[4].load = 1500;
    let t = FairWakeTask {
        load: 600,
        synced_load: 300,
        ..task(4, 100, WF_TTWU)
    };
    // Unsynced: this = 700 × 100 × 1024 = 71680000 > prev = 900 × 108 × 462 = 44906400.
    let pl = select(&v, &topo, &p, &ctx(0), &t);
    assert_eq!(
        (pl.cpu, pl.reason, pl.wake_affine),
        (4, WakeReason::Target, Some(4))
    );
    // select_idle_sibling() synced p on the asymmetric system.
    assert!(pl.task_synced);
    // feec ran, synced p and gave up: this = 400 × 102400 = 40960000 < prev = 1200 ×
    // 49896 = 59875200 → this CPU.
    let eas = WakeCtx {
        try_feec: true,
        feec_syncs: true,
        ..ctx(0)
    };
    let pl = select(&v, &topo, &p, &eas, &t);
    assert_eq!((pl.cpu, pl.wake_affine), (0, Some(0)));
    // wake_cap (v5.6) syncs p when the two capacities differ by more than 1/8 (0 and 4),
    // not between two big CPUs (this 5): there the unsynced load keeps prev.
    let wc = FairWakeParams {
        variant: WakeupVariant::WakeCap,
        ..p
    };
    let pl = select(&v, &topo, &wc, &ctx(0), &t);
    assert_eq!((pl.cpu, pl.wake_affine, pl.task_synced), (0, Some(0), true));
    v[5].load = 700;
    let pl = select(&v, &topo, &wc, &ctx(5), &t);
    // this = 1300 × 100 × 1024 = 133120000 > prev = 900 × 108 × 1024 = 99532800 (with
    // the synced 300: 102400000 < 132710400, this).
    assert_eq!(
        (pl.cpu, pl.wake_affine, pl.task_synced),
        (4, Some(4), false)
    );
    assert!(wake_cap_syncs(462, 1024, 1024, true));
    assert!(!wake_cap_syncs(1024, 1024, 1024, true));
    // WF_CURRENT_CPU returns before any sync.
    let cur = FairWakeTask {
        wake_flags: WF_TTWU | WF_CURRENT_CPU,
        ..t
    };
    assert!(!select(&v, &topo, &p, &ctx(0), &cur).task_synced);
}

/// `find_cpu_wrap()` visits a mask's CPUs in `for_each_cpu_wrap()`'s order, for masks over
/// every word and every start, and stops at the first `Some`.
#[test]
fn find_cpu_wrap_is_for_each_cpu_wrap() {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for round in 0..200usize {
        let mut mask = CpuSet::EMPTY;
        let density = (round % 8) as u64;
        for cpu in 0..256 {
            if next() % 8 <= density {
                mask.set(cpu);
            }
        }
        let nr_cpus = [8, 64, 65, 130, 256][round % 5];
        for start in [0, 1, 5, 63, 64, 65, 127, 128, 200, 255, 256, 300] {
            let want: Vec<usize> =
                super::super::domains::for_each_cpu_wrap(&mask, start, nr_cpus).collect();
            let mut got = Vec::new();
            let none: Option<()> = find_cpu_wrap(&mask, start, nr_cpus, |c| {
                got.push(c);
                None
            });
            assert_eq!(none, None);
            assert_eq!(got, want, "start {start}, nr_cpus {nr_cpus}");
            if let Some(&stop) = want.get(want.len() / 2) {
                let mut seen = 0;
                let hit = find_cpu_wrap(&mask, start, nr_cpus, |c| {
                    seen += 1;
                    (c == stop).then_some(c)
                });
                assert_eq!(hit, Some(stop));
                assert_eq!(seen, want.len() / 2 + 1);
            }
        }
    }
}
