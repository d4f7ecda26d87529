//! The RT and deadline runqueues: what the engine needs to run SCHED_FIFO, SCHED_RR and
//! SCHED_DEADLINE tasks beside the fair class.
//!
//! - [`RtRq`] is `struct rt_rq`'s priority array (kernel/sched/rt.c, v6.11): one FIFO
//!   list per priority, the running task stays at the head of its list, `SCHED_RR`
//!   requeues to the tail when its `RR_TIMESLICE` (100 ms in jiffies) is used up and
//!   another task shares its priority (`task_tick_rt()`), `sched_yield()` requeues to the
//!   tail (`yield_task_rt()`).
//! - [`DlRq`] is `struct dl_rq`'s earliest-deadline-first order (kernel/sched/deadline.c,
//!   v6.11) with the constant-bandwidth server: `update_curr_dl()` charges the budget
//!   (scaled by frequency and capacity, sim/class/deadline.rs),
//!   a task whose budget is spent is throttled until its replenishment at the deadline
//!   (`start_dl_timer()` → `replenish_dl_entity()`), and a wake-up after the deadline or
//!   with too much budget left for the remaining time starts a new period
//!   (`update_dl_entity()` → `dl_entity_overflow()`); GRUB's per-rq bandwidth sums
//!   (`running_bw`, `this_bw`) are kept by the engine (sim/class/deadline.rs).
//!
//! RT bandwidth throttling (`sched_rt_runtime_us`) and DL admission control are the
//! engine's (sim/class/rt.rs, sim/class/deadline.rs). Simplifications (documented in
//! docs/kernel-mapping.md): no GRUB reclaiming or `dl_server`; the budget is checked at
//! the tick (HRTICK is off by default, so the kernel also notices an overrun at the tick).

use crate::time::Nanos;
use std::collections::BTreeSet;

/// `MAX_RT_PRIO`: kernel priorities below it are RT.
pub const MAX_RT_PRIO: i32 = 100;
/// `MAX_PRIO` (include/linux/sched/prio.h): the idle task's priority.
pub const MAX_PRIO: i32 = 140;
/// `RR_TIMESLICE` (include/linux/sched/rt.h, v6.11; v4.4 alike): `100 * HZ / 1000`
/// jiffies, the SCHED_RR slice `task_tick_rt()` counts down one tick at a time: 30 ticks
/// (99.99 ms) at HZ 300, 25 at HZ 250.
pub fn rr_timeslice(hz: u32) -> u32 {
    100 * hz / 1000
}

/// Kernel `prio` of an RT task with `sched_priority` `rt_priority` (1..99):
/// `MAX_RT_PRIO - 1 - rt_priority` (`__normal_prio()`).
pub fn rt_prio(rt_priority: i32) -> i32 {
    MAX_RT_PRIO - 1 - rt_priority.clamp(1, 99)
}

/// `struct rt_rq`: priority-ordered FIFO lists.
#[derive(Debug, Clone, Default)]
pub struct RtRq {
    queue: BTreeSet<(i32, i64, usize)>,
    head: i64,
    tail: i64,
}

impl RtRq {
    /// Enqueues `tid` at `prio`, at the tail (or the head, `ENQUEUE_HEAD`). Returns the key
    /// the caller keeps to dequeue it.
    pub fn enqueue(&mut self, tid: usize, prio: i32, at_head: bool) -> (i32, i64) {
        let seq = if at_head {
            self.head -= 1;
            self.head
        } else {
            self.tail += 1;
            self.tail
        };
        self.queue.insert((prio, seq, tid));
        (prio, seq)
    }

    /// Puts `tid` back where `key` had it: `__enqueue_rt_entity()` and
    /// `__dequeue_rt_entity()` without `move_entity()` (DEQUEUE_SAVE without DEQUEUE_MOVE)
    /// leave the task in its list, in its place (kernel/sched/rt.c, v6.11).
    pub fn requeue(&mut self, tid: usize, key: (i32, i64)) {
        self.queue.insert((key.0, key.1, tid));
    }

    /// Removes `tid` queued with `key`.
    pub fn dequeue(&mut self, tid: usize, key: (i32, i64)) {
        self.queue.remove(&(key.0, key.1, tid));
    }

    /// `pick_next_rt_entity()`: the first task of the highest priority.
    pub fn pick(&self) -> Option<usize> {
        self.queue.first().map(|&(_, _, t)| t)
    }

    /// `rt_rq->highest_prio.curr`, or `MAX_RT_PRIO` when empty.
    pub fn highest_prio(&self) -> i32 {
        self.queue.first().map_or(MAX_RT_PRIO, |&(p, _, _)| p)
    }

    /// Whether another task than `tid` is in the list of priority `prio`: for a queued
    /// `tid`, `rt_se->run_list.prev != rt_se->run_list.next`.
    pub fn has_peer(&self, tid: usize, prio: i32) -> bool {
        self.queue
            .range((prio, i64::MIN, 0)..=(prio, i64::MAX, usize::MAX))
            .any(|&(_, _, t)| t != tid)
    }

    /// `rt_nr_running`.
    pub fn nr_running(&self) -> usize {
        self.queue.len()
    }

    /// Queued tasks in pick order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.queue.iter().map(|&(_, _, t)| t)
    }
}

/// `BW_SHIFT` (kernel/sched/sched.h): bandwidths are fractions of `1 << BW_SHIFT`.
pub const BW_SHIFT: u32 = 20;

/// `to_ratio(period, runtime)` (kernel/sched/core.c, v6.11): `runtime << BW_SHIFT / period`
/// (0 for a zero period).
pub fn to_ratio(period: u64, runtime: u64) -> u64 {
    if period == 0 {
        return 0;
    }
    (runtime << BW_SHIFT) / period
}

/// `struct dl_rq`: tasks by absolute deadline, and GRUB's two sums of the deadline
/// bandwidths (`dl_se->dl_bw`) of the rq's tasks (kernel/sched/deadline.c, v6.11).
#[derive(Debug, Clone, Default)]
pub struct DlRq {
    queue: BTreeSet<(Nanos, u64, usize)>,
    seq: u64,
    /// `running_bw`: the active utilisation, the bandwidth of the tasks that are runnable
    /// (throttled ones included) or blocked before their 0-lag time
    /// (`add_running_bw()`/`sub_running_bw()`); `cpu_bw_dl()` reads it.
    pub running_bw: u64,
    /// `this_bw`: the bandwidth of every deadline task assigned to the rq, blocked or not
    /// (`add_rq_bw()`/`sub_rq_bw()`); never less than `running_bw`.
    pub this_bw: u64,
}

impl DlRq {
    /// Enqueues `tid` with absolute `deadline`; returns the key.
    pub fn enqueue(&mut self, tid: usize, deadline: Nanos) -> (Nanos, u64) {
        self.seq += 1;
        self.queue.insert((deadline, self.seq, tid));
        (deadline, self.seq)
    }

    /// Removes `tid` queued with `key`.
    pub fn dequeue(&mut self, tid: usize, key: (Nanos, u64)) {
        self.queue.remove(&(key.0, key.1, tid));
    }

    /// `pick_next_dl_entity()`: earliest deadline.
    pub fn pick(&self) -> Option<usize> {
        self.queue.first().map(|&(_, _, t)| t)
    }

    /// `dl_nr_running`.
    pub fn nr_running(&self) -> usize {
        self.queue.len()
    }

    /// Earliest deadline queued.
    pub fn earliest(&self) -> Option<Nanos> {
        self.queue.first().map(|&(d, _, _)| d)
    }

    /// The queued tasks, earliest deadline first (equal deadlines in queue order).
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.queue.iter().map(|&(_, _, t)| t)
    }
}

/// `struct sched_dl_entity`: parameters and CBS state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DlEntity {
    /// `dl_runtime` (ns).
    pub dl_runtime: Nanos,
    /// `dl_deadline` (relative, ns).
    pub dl_deadline: Nanos,
    /// `dl_period` (ns).
    pub dl_period: Nanos,
    /// Remaining budget (may go negative on overrun).
    pub runtime: i64,
    /// Absolute deadline.
    pub deadline: Nanos,
    /// Throttled until replenishment.
    pub throttled: bool,
    /// `dl_bw`: `to_ratio(dl_period, dl_runtime)` (`__setparam_dl()`; the period is the
    /// deadline when none is given).
    pub dl_bw: u64,
    /// `dl_non_contending`: blocked before its 0-lag time, its bandwidth still in its rq's
    /// `running_bw` until the inactive timer fires (`task_non_contending()`).
    pub dl_non_contending: bool,
}

impl DlEntity {
    /// A DL entity from rt-app's `dl-runtime`/`dl-period`/`dl-deadline` in ns.
    pub fn new(runtime: Nanos, deadline: Nanos, period: Nanos) -> DlEntity {
        let bw_period = if period == 0 { deadline } else { period };
        DlEntity {
            dl_runtime: runtime,
            dl_deadline: deadline,
            dl_period: period,
            dl_bw: to_ratio(bw_period, runtime),
            ..DlEntity::default()
        }
    }

    /// The 0-lag time relative to `now` (`task_non_contending()`, kernel/sched/deadline.c,
    /// v6.11): `deadline − runtime × dl_period / dl_runtime − now`, when the remaining
    /// budget would be used up at the task's bandwidth; negative once passed. In the
    /// kernel's signed 64-bit arithmetic (`div64_long()`). `None` for a zero `dl_runtime`
    /// (the kernel returns first).
    pub fn zerolag_time(&self, now: Nanos) -> Option<i64> {
        if self.dl_runtime == 0 {
            return None;
        }
        let lag = self.runtime.wrapping_mul(self.dl_period as i64) / self.dl_runtime as i64;
        Some(
            (self.deadline as i64)
                .wrapping_sub(lag)
                .wrapping_sub(now as i64),
        )
    }

    /// `setup_new_dl_entity()` / `replenish_dl_new_period()`: a fresh period at `now`.
    pub fn new_period(&mut self, now: Nanos) {
        self.deadline = now + self.dl_deadline;
        self.runtime = self.dl_runtime as i64;
    }

    /// `update_dl_entity()` at wake-up: a new period if the deadline passed or if
    /// `dl_entity_overflow()` (runtime / (deadline - now) > dl_runtime / dl_period).
    pub fn update_at_wakeup(&mut self, now: Nanos) {
        if self.deadline <= now || self.overflow(now) {
            self.new_period(now);
        }
    }

    /// `dl_entity_overflow()`: `runtime * dl_period > (deadline - now) * dl_runtime`,
    /// computed with both sides shifted by `DL_SCALE` (10) as the kernel does.
    pub fn overflow(&self, now: Nanos) -> bool {
        let left = (self.dl_period >> 10) as u128 * (self.runtime.max(0) as u64 >> 10) as u128;
        let right =
            (self.deadline.saturating_sub(now) >> 10) as u128 * (self.dl_runtime >> 10) as u128;
        left > right
    }

    /// `replenish_dl_entity()`: add budget one period at a time until it is positive.
    pub fn replenish(&mut self, now: Nanos) {
        if self.deadline == 0 {
            self.new_period(now);
            return;
        }
        while self.runtime <= 0 {
            self.deadline += self.dl_period;
            self.runtime += self.dl_runtime as i64;
        }
        if self.deadline < now {
            // dl_time_before(dl_se->deadline, rq_clock(rq)): lagging too far, restart
            self.new_period(now);
        }
        self.throttled = false;
    }

    /// Replenishment instant of a throttled entity: its deadline, minus the period plus
    /// the period, i.e. `dl_next_period()` = deadline - dl_deadline + dl_period.
    pub fn next_period(&self) -> Nanos {
        self.deadline - self.dl_deadline + self.dl_period
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rt_fifo_within_prio_and_head_insertion() {
        let mut rq = RtRq::default();
        let a = rq.enqueue(1, 50, false);
        let _b = rq.enqueue(2, 50, false);
        let _c = rq.enqueue(3, 60, false);
        assert_eq!(rq.pick(), Some(1));
        rq.dequeue(1, a);
        rq.enqueue(1, 50, false); // RR requeue to the tail
        assert_eq!(rq.iter().collect::<Vec<_>>(), vec![2, 1, 3]);
        rq.enqueue(4, 50, true);
        assert_eq!(rq.pick(), Some(4));
        assert_eq!(rq.highest_prio(), 50);
        assert_eq!(rt_prio(10), 89);
    }

    /// `__enqueue_dl_entity()` inserts with `rb_add_cached(…, __dl_less)`: an entity
    /// whose deadline equals queued ones goes after them (FIFO among equals), the running
    /// entity keeps its place in the tree, and one requeued after a replenishment goes
    /// behind the entities already queued with its new deadline (v6.11).
    #[test]
    fn dl_equal_deadlines_queue_like_the_rbtree() {
        let mut rq = DlRq::default();
        let a = rq.enqueue(1, 100);
        let _b = rq.enqueue(2, 100);
        let _c = rq.enqueue(3, 50);
        assert_eq!(rq.pick(), Some(3));
        assert_eq!(rq.earliest(), Some(50));
        rq.enqueue(4, 100);
        // 3 leaves: 1 (first of the equals) is leftmost, then 2, then 4.
        let mut rq2 = rq.clone();
        rq2.queue.retain(|&(_, _, t)| t != 3);
        assert_eq!(rq2.pick(), Some(1));
        // 1 throttled (dequeued) and replenished to the same deadline: behind 2 and 4.
        rq2.dequeue(1, a);
        rq2.enqueue(1, 100);
        let order: Vec<usize> = rq2.queue.iter().map(|&(_, _, t)| t).collect();
        assert_eq!(order, vec![2, 4, 1]);
    }

    #[test]
    fn cbs_replenish_and_overflow() {
        let ms = 1_000_000;
        let mut dl = DlEntity::new(10 * ms, 100 * ms, 100 * ms);
        dl.new_period(0);
        assert_eq!((dl.deadline, dl.runtime), (100 * ms, 10 * ms as i64));
        // 10 ms left with 50 ms to the deadline: 10/50 > 10/100 → overflow
        assert!(dl.overflow(50 * ms));
        assert!(!dl.overflow(0));
        dl.runtime = -(ms as i64);
        dl.replenish(20 * ms);
        assert_eq!(dl.deadline, 200 * ms);
        assert_eq!(dl.runtime, 9 * ms as i64);
        assert_eq!(dl.next_period(), 200 * ms);
    }

    /// `__setparam_dl()`'s `dl_bw` = `to_ratio(period, runtime)` in `BW_SHIFT` units, and
    /// `task_non_contending()`'s 0-lag time: the remaining budget spent at the task's
    /// bandwidth ends `runtime × dl_period / dl_runtime` before the deadline.
    #[test]
    fn dl_bw_and_zerolag_time() {
        let (us, ms) = (1_000, 1_000_000);
        let mut dl = DlEntity::new(50 * ms, 100 * ms, 100 * ms);
        assert_eq!(dl.dl_bw, 1 << (BW_SHIFT - 1));
        assert_eq!(DlEntity::new(3 * ms, 10 * ms, 10 * ms).dl_bw, 314_572);
        // no period: the deadline's
        assert_eq!(DlEntity::new(3 * ms, 10 * ms, 0).dl_bw, 314_572);
        dl.new_period(0);
        // 1.5 ms run: 48.5 ms left → 97 ms before the deadline → 1.5 ms after now
        dl.runtime -= 1500 * us as i64;
        assert_eq!(dl.zerolag_time(1500 * us), Some(1500 * us as i64));
        assert_eq!(dl.zerolag_time(4 * ms), Some(-(1000 * us as i64)));
        // an overrun: the 0-lag time is past the deadline
        dl.runtime = -(ms as i64);
        assert_eq!(dl.zerolag_time(50 * ms), Some(52 * ms as i64));
        assert_eq!(DlEntity::default().zerolag_time(0), None);
    }
}
