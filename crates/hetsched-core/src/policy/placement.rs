//! Wake-up and fork placement: the baseline of this release.
//!
//! A symmetric-system reduction of `select_task_rq_fair()` →
//! `select_idle_sibling()` (kernel/sched/fair.c, v6.11): the previous CPU if it is idle,
//! else the first idle CPU sharing its last-level cache, else the previous CPU. No
//! wake_affine, no capacity awareness, no EAS (those come with the asymmetric-capacity
//! work); affinity is honoured with `select_fallback_rq()`'s rule (first allowed CPU).

use super::{Placement, PlacementReason, SchedView};
use crate::sched::CpuSet;

/// Baseline `select_task_rq()` for the fair class.
pub fn select_task_rq_baseline(view: &SchedView<'_>, allowed: &CpuSet, prev: usize) -> Placement {
    if !allowed.contains(prev) {
        // select_fallback_rq(): prefer an idle allowed CPU, else the first allowed one.
        let cpu = allowed
            .iter()
            .find(|&c| c < view.cpus.len() && view.cpus[c].idle)
            .or_else(|| allowed.first())
            .unwrap_or(0);
        return Placement {
            cpu,
            reason: PlacementReason::Fallback,
        };
    }
    if view.cpus[prev].idle {
        return Placement {
            cpu: prev,
            reason: PlacementReason::PrevIdle,
        };
    }
    let llc = view.cpus[prev].cluster;
    // select_idle_cpu() scans the LLC starting after `target`, wrapping around.
    let n = view.cpus.len();
    let mut c = prev;
    for _ in 1..n {
        c += 1;
        if c == n {
            c = 0;
        }
        if view.cpus[c].cluster == llc && view.cpus[c].idle && allowed.contains(c) {
            return Placement {
                cpu: c,
                reason: PlacementReason::IdleSibling,
            };
        }
    }
    Placement {
        cpu: prev,
        reason: PlacementReason::Prev,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::CpuView;

    fn view(idle: &[bool], cluster: &[usize]) -> Vec<CpuView> {
        idle.iter()
            .zip(cluster)
            .map(|(&idle, &cluster)| CpuView {
                idle,
                nr_running: u32::from(!idle),
                cluster,
                capacity: 1024,
            })
            .collect()
    }

    #[test]
    fn prefers_prev_then_sibling_then_prev() {
        let cpus = view(&[false, true, false, true], &[0, 0, 1, 1]);
        let v = SchedView { cpus: &cpus };
        let all = CpuSet::first_n(4);
        assert_eq!(select_task_rq_baseline(&v, &all, 1).cpu, 1);
        let p = select_task_rq_baseline(&v, &all, 0);
        assert_eq!((p.cpu, p.reason), (1, PlacementReason::IdleSibling));
        let p = select_task_rq_baseline(&v, &all, 2);
        assert_eq!(p.cpu, 3);
        let cpus = view(&[false, false, true, true], &[0, 0, 1, 1]);
        let v = SchedView { cpus: &cpus };
        let p = select_task_rq_baseline(&v, &all, 0);
        assert_eq!((p.cpu, p.reason), (0, PlacementReason::Prev));
        let p = select_task_rq_baseline(&v, &CpuSet::from_cpus(&[3]), 0);
        assert_eq!((p.cpu, p.reason), (3, PlacementReason::Fallback));
    }
}
