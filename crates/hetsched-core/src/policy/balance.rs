//! Load balancing: the baseline of this release.
//!
//! A reduction of `sched_balance_rq()` (kernel/sched/fair.c, v6.11) to one flat domain:
//! pull one queued (not running) task from the runqueue with the most runnable fair tasks,
//! when it has at least two and at least two more than the puller (so a move never just
//! swaps the imbalance). Run from the tick every `balance_interval` (periodic), when a CPU
//! is about to go idle (newidle), and on behalf of idle CPUs when a busy CPU's tick sees
//! an overloaded queue (the nohz idle-balance kick). The kernel's domains, group
//! classification and migration types are the asymmetric-capacity work's.

use super::{Migration, MigrationReason, SchedView};

/// Picks the busiest runqueue for `this_cpu` to pull from, if pulling helps.
/// `movable(src)` returns a queued task on `src` that may run on `this_cpu`.
pub fn find_pull(
    view: &SchedView<'_>,
    this_cpu: usize,
    reason: MigrationReason,
    mut movable: impl FnMut(usize) -> Option<usize>,
) -> Option<Migration> {
    let this_nr = view.cpus[this_cpu].nr_running;
    let mut best: Option<(u32, usize)> = None;
    for (cpu, c) in view.cpus.iter().enumerate() {
        if cpu == this_cpu || c.nr_running < 2 || c.nr_running < this_nr + 2 {
            continue;
        }
        if best.is_none_or(|(n, _)| c.nr_running > n) {
            best = Some((c.nr_running, cpu));
        }
    }
    let (_, src) = best?;
    let task = movable(src)?;
    Some(Migration {
        task,
        src,
        dst: this_cpu,
        reason,
    })
}
