//! HMP task placement, ARM's big.LITTLE MP scheduler (Morten Rasmussen's 2012 RFC as it
//! became Linaro LSK 3.10's `CONFIG_SCHED_HMP`, kernel/sched/fair.c), as pure decisions
//! over a view of the runqueues: the `hmp_domains` (fastest first), the up- and
//! down-migration tests, the choice of a CPU in the faster or slower domain, small-task
//! packing and the wake-up/fork override of `select_task_rq_fair()`.
//!
//! Source read: the LSK 3.10 big.LITTLE MP fair.c carried unmodified by
//! tinalinux/linux-3.10 @46f73ef4 (`hmp_up_migration()`, `hmp_down_migration()`,
//! `hmp_domain_min_load()`, `hmp_select_faster_cpu()`, `hmp_select_slower_cpu()`,
//! `hmp_best_little_cpu()`, `hmp_next_up_delay()`, `hmp_next_down_delay()` and the HMP
//! part of `select_task_rq_fair()`); defaults are that tree's (older Samsung copies used a
//! down threshold of 256). Generalised: the domains are the platform's capacity classes
//! (the arch code split by DT `compatible`, A7/A53 slow, into two), so three or more work.
//! Loads are `load_avg_ratio`s, 0..1023 ([`crate::pelt::legacy`]); times are the rq clock
//! in ns, compared in 1024-ns units as the kernel's `>> 10`.

use crate::sched::CpuSet;

/// HMP's tunables (LSK 3.10 defaults; sysfs `/sys/kernel/hmp/*` where they had one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HmpTunables {
    /// `hmp_up_threshold` (0..1024): a ratio at or above it may go up. 700.
    pub up_threshold: u64,
    /// `hmp_down_threshold` (0..1024): a ratio below it may go down. 512.
    pub down_threshold: u64,
    /// `hmp_next_up_threshold`: 1024-ns units since the task's last up-migration before
    /// another. 4096 (≈ 4.2 ms).
    pub next_up_threshold: u64,
    /// `hmp_next_down_threshold`, the same for down-migrations. 4096.
    pub next_down_threshold: u64,
    /// `CONFIG_SCHED_HMP_PRIO_FILTER`: the RFC's patch 4 ("Introduce priority-based task
    /// migration filter"); Linaro's later big-LITTLE-MP.conf left it off.
    pub prio_filter: bool,
    /// `hmp_up_prio`: with the filter, a task of this `prio` or above never goes up and
    /// always may go down. `NICE_TO_PRIO(5)` = 125.
    pub up_prio: i32,
    /// `hmp_packing_enabled` (`CONFIG_SCHED_HMP_LITTLE_PACKING`, on in big-LITTLE-MP.conf).
    pub packing: bool,
    /// `hmp_full_threshold`: a slow CPU takes a packed task while its ratio plus the
    /// task's stays at or under it. 650.
    pub full_threshold: u64,
}

impl Default for HmpTunables {
    fn default() -> Self {
        HmpTunables {
            up_threshold: 700,
            down_threshold: 512,
            next_up_threshold: 4096,
            next_down_threshold: 4096,
            prio_filter: true,
            up_prio: 125,
            packing: true,
            full_threshold: 650,
        }
    }
}

/// `hmp_domains`: CPU sets from the fastest to the slowest, and each CPU's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HmpDomains {
    /// The domains, fastest first.
    pub domains: Vec<CpuSet>,
    /// `hmp_cpu_domain(cpu)`: the index of `cpu`'s domain.
    pub of_cpu: Vec<usize>,
}

impl HmpDomains {
    /// One domain per capacity class of `capacities` (`capacity_orig` by CPU), the
    /// largest first (`arch_get_hmp_domains()`).
    pub fn from_capacities(capacities: &[u64]) -> HmpDomains {
        let mut classes: Vec<u64> = capacities.to_vec();
        classes.sort_unstable_by(|a, b| b.cmp(a));
        classes.dedup();
        let of_cpu: Vec<usize> = capacities
            .iter()
            .map(|c| classes.iter().position(|x| x == c).unwrap_or(0))
            .collect();
        let domains = (0..classes.len())
            .map(|d| {
                let cpus: Vec<usize> = (0..capacities.len()).filter(|&c| of_cpu[c] == d).collect();
                CpuSet::from_cpus(&cpus)
            })
            .collect();
        HmpDomains { domains, of_cpu }
    }

    /// `hmp_cpu_is_fastest(cpu)`.
    pub fn is_fastest(&self, cpu: usize) -> bool {
        self.of_cpu[cpu] == 0
    }

    /// `hmp_cpu_is_slowest(cpu)`.
    pub fn is_slowest(&self, cpu: usize) -> bool {
        self.of_cpu[cpu] + 1 == self.domains.len()
    }

    /// `hmp_faster_domain(cpu)`, or `cpu`'s own at the top.
    pub fn faster(&self, cpu: usize) -> &CpuSet {
        &self.domains[self.of_cpu[cpu].saturating_sub(1)]
    }

    /// `hmp_slower_domain(cpu)`, or `cpu`'s own at the bottom.
    pub fn slower(&self, cpu: usize) -> &CpuSet {
        let d = (self.of_cpu[cpu] + 1).min(self.domains.len() - 1);
        &self.domains[d]
    }
}

/// What HMP reads of a runqueue (`rq->avg`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HmpRq {
    /// `rq->avg.load_avg_ratio`: the sum of its queued fair tasks' ratios.
    pub load_avg_ratio: u64,
    /// `rq->avg.hmp_last_up_migration` (ns; 0: never a target).
    pub last_up: u64,
    /// `rq->avg.hmp_last_down_migration`.
    pub last_down: u64,
}

/// What HMP reads of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HmpTask {
    /// `se->avg.load_avg_ratio`.
    pub ratio: u64,
    /// `p->prio`.
    pub prio: i32,
    /// `tsk_cpus_allowed(p)`.
    pub allowed: CpuSet,
    /// `se->avg.hmp_last_up_migration` (ns).
    pub last_up: u64,
    /// `se->avg.hmp_last_down_migration` (ns).
    pub last_down: u64,
}

/// `hmp_domain_min_load(hmpd, &min_cpu, affinity)`: every CPU with any load counts as
/// fully loaded (1023), an empty one as 0; ties go to the CPU least recently targeted by
/// an HMP migration, then to the lowest number. `None` when no CPU of the domain is
/// allowed.
pub fn domain_min_load(dom: &CpuSet, allowed: &CpuSet, rqs: &[HmpRq]) -> Option<(u64, usize)> {
    let mut best: Option<(u64, u64, usize)> = None;
    for cpu in dom.and(allowed).iter() {
        let r = &rqs[cpu];
        let last = if r.last_up != 0 {
            r.last_up
        } else {
            r.last_down
        };
        let load = if r.load_avg_ratio != 0 { 1023 } else { 0 };
        if best.is_none_or(|(l, t, _)| load < l || (load == l && last < t)) {
            best = Some((load, last, cpu));
        }
    }
    best.map(|(l, _, c)| (l, c))
}

/// `hmp_select_faster_cpu(tsk, cpu)`: the least loaded allowed CPU of the faster domain
/// (of `cpu`'s own at the top).
pub fn select_faster_cpu(d: &HmpDomains, t: &HmpTask, cpu: usize, rqs: &[HmpRq]) -> Option<usize> {
    domain_min_load(d.faster(cpu), &t.allowed, rqs).map(|(_, c)| c)
}

/// `hmp_select_slower_cpu(tsk, cpu)`.
pub fn select_slower_cpu(d: &HmpDomains, t: &HmpTask, cpu: usize, rqs: &[HmpRq]) -> Option<usize> {
    domain_min_load(d.slower(cpu), &t.allowed, rqs).map(|(_, c)| c)
}

/// `hmp_best_little_cpu(tsk, cpu)`: with packing, the first allowed CPU of the slower
/// domain whose ratio plus the task's stays within `full_threshold` (`cpu` itself when
/// none does); a task above 90 % of NICE_0_LOAD, or without packing, as
/// [`select_slower_cpu`].
pub fn best_little_cpu(
    d: &HmpDomains,
    tun: &HmpTunables,
    t: &HmpTask,
    cpu: usize,
    rqs: &[HmpRq],
) -> Option<usize> {
    if !tun.packing || t.ratio > 1024 * 90 / 100 {
        return select_slower_cpu(d, t, cpu, rqs);
    }
    let fit = d
        .slower(cpu)
        .and(&t.allowed)
        .iter()
        .find(|&c| rqs[c].load_avg_ratio + t.ratio <= tun.full_threshold);
    Some(fit.unwrap_or(cpu))
}

/// `hmp_up_migration(cpu, &target_cpu, se)`: a task on a CPU below the fastest, passing
/// the priority filter, with a ratio at or above `up_threshold`, whose last up-migration
/// is `next_up_threshold` old, goes to an idle allowed CPU of the faster domain, if there
/// is one. `now` is the clock of the first online CPU (the kernel's "hack").
pub fn up_migration(
    d: &HmpDomains,
    tun: &HmpTunables,
    t: &HmpTask,
    cpu: usize,
    now: u64,
    rqs: &[HmpRq],
) -> Option<usize> {
    if d.is_fastest(cpu) || (tun.prio_filter && t.prio >= tun.up_prio) {
        return None;
    }
    if t.ratio < tun.up_threshold {
        return None;
    }
    if (now.saturating_sub(t.last_up) >> 10) < tun.next_up_threshold {
        return None;
    }
    match domain_min_load(d.faster(cpu), &t.allowed, rqs) {
        Some((0, target)) => Some(target),
        _ => None,
    }
}

/// `hmp_down_migration(cpu, se)`: on the slowest domain only with packing (to pack);
/// with the priority filter a filtered task always may go down; otherwise after
/// `next_down_threshold` since its last down-migration, a ratio under `down_threshold`
/// with an allowed slower CPU.
pub fn down_migration(
    d: &HmpDomains,
    tun: &HmpTunables,
    t: &HmpTask,
    cpu: usize,
    now: u64,
) -> bool {
    if d.is_slowest(cpu) {
        return tun.packing;
    }
    let slower_allowed = d.slower(cpu).intersects(&t.allowed);
    if tun.prio_filter && t.prio >= tun.up_prio && slower_allowed {
        return true;
    }
    if (now.saturating_sub(t.last_down) >> 10) < tun.next_down_threshold {
        return false;
    }
    slower_allowed && t.ratio < tun.down_threshold
}

/// What the HMP part of `select_task_rq_fair()` decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HmpPlacement {
    /// A fork-boosted new task to the faster domain (`hmp_next_up_delay()`, no event).
    ForkBoost(usize),
    /// Up-migration (`hmp_next_up_delay()`, `sched_hmp_migrate` reason wakeup).
    Up(usize),
    /// Down-migration (`hmp_next_down_delay()`, `sched_hmp_migrate` reason wakeup).
    Down(usize),
    /// The baseline's choice, kept inside `prev`'s domain: the CPU to use.
    Keep(usize),
}

/// The HMP override of `select_task_rq_fair(p, sd_flag, wake_flags)`: a fork-boosted new
/// task goes to the faster domain (`fork_boost`: `hmp_task_should_forkboost()`); then
/// the up test, then the down test (with packing through [`best_little_cpu`]) from
/// `prev`; otherwise `baseline` — the v3.10 placement's choice — if it is in `prev`'s
/// domain, else `prev` (HMP never leaves a domain by the baseline's choice).
#[allow(clippy::too_many_arguments)]
pub fn select_task_rq_hmp(
    d: &HmpDomains,
    tun: &HmpTunables,
    t: &HmpTask,
    prev: usize,
    baseline: usize,
    fork_boost: bool,
    now: u64,
    rqs: &[HmpRq],
) -> HmpPlacement {
    if fork_boost {
        if let Some(c) = select_faster_cpu(d, t, prev, rqs) {
            return HmpPlacement::ForkBoost(c);
        }
    }
    if let Some(c) = up_migration(d, tun, t, prev, now, rqs) {
        return HmpPlacement::Up(c);
    }
    if down_migration(d, tun, t, prev, now) {
        let c = if tun.packing {
            best_little_cpu(d, tun, t, prev, rqs)
        } else {
            select_slower_cpu(d, t, prev, rqs)
        };
        if let Some(c) = c.filter(|&c| c != prev) {
            return HmpPlacement::Down(c);
        }
    }
    if d.of_cpu[baseline] != d.of_cpu[prev] {
        return HmpPlacement::Keep(prev);
    }
    HmpPlacement::Keep(baseline)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tc2: CPUs 0–1 Cortex-A15 (1024), 2–4 Cortex-A7.
    fn tc2() -> HmpDomains {
        HmpDomains::from_capacities(&[1024, 1024, 430, 430, 430])
    }

    fn task(ratio: u64) -> HmpTask {
        HmpTask {
            ratio,
            prio: 120,
            allowed: CpuSet::first_n(5),
            last_up: 0,
            last_down: 0,
        }
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn domains_are_capacity_classes_fastest_first() {
        let d = tc2();
        assert_eq!(
            d.domains,
            vec![CpuSet::from_cpus(&[0, 1]), CpuSet::from_cpus(&[2, 3, 4])]
        );
        assert!(d.is_fastest(1) && d.is_slowest(3) && !d.is_slowest(0));
        let three = HmpDomains::from_capacities(&[400, 1024, 700, 400]);
        assert_eq!(three.of_cpu, vec![2, 0, 1, 2]);
        assert_eq!(three.faster(0), &CpuSet::from_cpus(&[2]));
        assert_eq!(three.slower(2), &CpuSet::from_cpus(&[0, 3]));
        assert_eq!(three.faster(1), &CpuSet::from_cpus(&[1]));
    }

    #[test]
    fn min_load_sees_any_load_as_full_and_breaks_ties_by_last_target() {
        let d = tc2();
        let mut rqs = [HmpRq::default(); 5];
        rqs[2].load_avg_ratio = 5;
        rqs[3].last_up = 7 * MS;
        rqs[4].last_down = 3 * MS;
        let all = CpuSet::first_n(5);
        // CPU 2 busy; 3 and 4 idle, 4 targeted longer ago
        assert_eq!(domain_min_load(&d.domains[1], &all, &rqs), Some((0, 4)));
        rqs[3].load_avg_ratio = 1;
        rqs[4].load_avg_ratio = 1;
        assert_eq!(domain_min_load(&d.domains[1], &all, &rqs), Some((1023, 2)));
        assert_eq!(
            domain_min_load(&d.domains[0], &CpuSet::from_cpus(&[3]), &rqs),
            None
        );
    }

    #[test]
    fn up_needs_the_threshold_the_delay_and_an_idle_faster_cpu() {
        let (d, tun) = (tc2(), HmpTunables::default());
        let mut rqs = [HmpRq::default(); 5];
        let now = 100 * MS;
        assert_eq!(up_migration(&d, &tun, &task(699), 2, now, &rqs), None);
        assert_eq!(up_migration(&d, &tun, &task(700), 2, now, &rqs), Some(0));
        assert_eq!(
            up_migration(&d, &tun, &task(900), 0, now, &rqs),
            None,
            "on the fastest"
        );
        let mut recent = task(900);
        recent.last_up = now - 4 * MS; // 4 ms < 4096 × 1024 ns
        assert_eq!(up_migration(&d, &tun, &recent, 2, now, &rqs), None);
        recent.last_up = now - 5 * MS;
        assert_eq!(up_migration(&d, &tun, &recent, 2, now, &rqs), Some(0));
        rqs[0].load_avg_ratio = 300;
        rqs[1].load_avg_ratio = 10;
        assert_eq!(
            up_migration(&d, &tun, &task(900), 2, now, &rqs),
            None,
            "no idle big CPU"
        );
        let mut nice = task(900);
        nice.prio = 125;
        rqs[1].load_avg_ratio = 0;
        assert_eq!(
            up_migration(&d, &tun, &nice, 2, now, &rqs),
            None,
            "filtered"
        );
        let unfiltered = HmpTunables {
            prio_filter: false,
            ..tun
        };
        assert_eq!(up_migration(&d, &unfiltered, &nice, 2, now, &rqs), Some(1));
    }

    #[test]
    fn down_below_the_threshold_after_the_delay_and_packing_first_fit() {
        let (d, tun) = (tc2(), HmpTunables::default());
        let now = 100 * MS;
        assert!(down_migration(&d, &tun, &task(511), 0, now));
        assert!(!down_migration(&d, &tun, &task(512), 0, now));
        let mut recent = task(100);
        recent.last_down = now - MS;
        assert!(!down_migration(&d, &tun, &recent, 0, now));
        // on the slowest domain only to pack
        assert!(down_migration(&d, &tun, &task(100), 3, now));
        let nopack = HmpTunables {
            packing: false,
            ..tun
        };
        assert!(!down_migration(&d, &nopack, &task(100), 3, now));
        // packing: the first slow CPU with room (ratio + task ≤ 650)
        let mut rqs = [HmpRq::default(); 5];
        rqs[2].load_avg_ratio = 600;
        rqs[3].load_avg_ratio = 500;
        assert_eq!(best_little_cpu(&d, &tun, &task(100), 0, &rqs), Some(3));
        rqs[3].load_avg_ratio = 600;
        rqs[4].load_avg_ratio = 600;
        assert_eq!(
            best_little_cpu(&d, &tun, &task(100), 0, &rqs),
            Some(0),
            "no fit: stay"
        );
        // a heavy task is spread instead (idle first)
        rqs[4].load_avg_ratio = 0;
        assert_eq!(best_little_cpu(&d, &tun, &task(950), 0, &rqs), Some(4));
    }

    #[test]
    fn the_override_keeps_the_baseline_inside_prev_domain() {
        let (d, tun) = (tc2(), HmpTunables::default());
        let mut rqs = [HmpRq::default(); 5];
        let now = 100 * MS;
        // a fork-boosted new task goes to an idle big CPU
        assert_eq!(
            select_task_rq_hmp(&d, &tun, &task(1023), 3, 3, true, now, &rqs),
            HmpPlacement::ForkBoost(0)
        );
        // a heavy task on a LITTLE goes up; a light one on a big goes down (packed on 2)
        assert_eq!(
            select_task_rq_hmp(&d, &tun, &task(800), 3, 4, false, now, &rqs),
            HmpPlacement::Up(0)
        );
        assert_eq!(
            select_task_rq_hmp(&d, &tun, &task(100), 1, 0, false, now, &rqs),
            HmpPlacement::Down(2)
        );
        // a middling task: the baseline's choice if in prev's domain, else prev
        rqs[2].load_avg_ratio = 600;
        rqs[3].load_avg_ratio = 600;
        rqs[4].load_avg_ratio = 600;
        let mid = task(600);
        assert_eq!(
            select_task_rq_hmp(&d, &tun, &mid, 0, 1, false, now, &rqs),
            HmpPlacement::Keep(1)
        );
        assert_eq!(
            select_task_rq_hmp(&d, &tun, &mid, 0, 3, false, now, &rqs),
            HmpPlacement::Keep(0)
        );
    }
}
