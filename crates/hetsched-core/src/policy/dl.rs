//! Deadline class placement as pure logic (kernel/sched/deadline.c and
//! kernel/sched/cpudeadline.c, v6.11): the root domain's `cpudl` (free CPUs and the CPU
//! whose earliest deadline is the latest), capacity fitness (`dl_task_fits_capacity()`),
//! `find_later_rq()`, `select_task_rq_dl()`, and the push and pull choices
//! (`push_dl_task()`, `pull_dl_task()`, `task_woken_dl()`, `check_preempt_equal_dl()`).
//!
//! The engine describes each rq as a [`DlRqView`] and applies the returned decisions.
//! Simplified: `cpudl` is rebuilt from the views at each call rather than kept as the
//! kernel's max-heap, so among CPUs whose earliest deadlines are equal the lowest-numbered
//! one is "the maximum" (the heap's root depends on its insertion history); no
//! migration-disabled tasks; every CPU online and in one root domain; no lock-retry races
//! in `find_lock_later_rq()` (one try decides, as its retry "is unlikely to yield a
//! different result").

use super::domains::{for_each_cpu_wrap, SdTopology};
use super::rt::pick_near;
use super::select_fair::WF_TTWU;
use crate::sched::CpuSet;

/// `BW_SHIFT`: bandwidths and densities are fractions of `1 << BW_SHIFT`.
pub use crate::sched::rt::BW_SHIFT;
/// `SCHED_CAPACITY_SHIFT`.
const SCHED_CAPACITY_SHIFT: u32 = 10;

/// `dl_time_before(a, b)`: `(s64)(a - b) < 0`.
pub fn dl_time_before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

/// A deadline task as placement sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DlTask {
    /// Task index.
    pub id: usize,
    /// `dl_se->deadline` (absolute, ns).
    pub deadline: u64,
    /// `dl_se->dl_density`: `to_ratio(dl_deadline, dl_runtime)`.
    pub density: u64,
    /// `task_cpu(p)`.
    pub cpu: usize,
    /// `p->cpus_mask`.
    pub allowed: CpuSet,
    /// `dl_entity_is_special()`: the schedutil kthread (SCHED_FLAG_SUGOV), which preempts
    /// every deadline task.
    pub special: bool,
}

impl DlTask {
    /// `p->nr_cpus_allowed`.
    pub fn nr_cpus_allowed(&self) -> usize {
        self.allowed.weight()
    }
}

/// `dl_entity_preempt(a, b)`: a special entity, or an earlier deadline.
pub fn dl_entity_preempt(a: &DlTask, b_deadline: u64) -> bool {
    a.special || dl_time_before(a.deadline, b_deadline)
}

/// One rq's deadline state.
#[derive(Debug, Clone, Copy)]
pub struct DlRqView<'a> {
    /// `dl_rq->dl_nr_running`: queued deadline tasks, the running one included.
    pub dl_nr_running: usize,
    /// `dl_rq->earliest_dl.curr`: the earliest queued deadline (`None`: no DL task, the
    /// CPU is in `cpudl.free_cpus`).
    pub earliest: Option<u64>,
    /// `rq->curr` when it is a deadline task.
    pub curr: Option<DlTask>,
    /// `test_tsk_need_resched(rq->curr)`.
    pub need_resched: bool,
    /// `arch_scale_cpu_capacity(cpu)`.
    pub capacity_orig: u64,
    /// `dl_rq->pushable_dl_tasks_root`: queued deadline tasks that do not run and may run
    /// elsewhere, earliest deadline first (its leftmost is `earliest_dl.next`).
    pub pushable: &'a [DlTask],
}

impl DlRqView<'_> {
    /// `dl_task_is_earliest_deadline(p, rq)`: no deadline task, or `p` before the earliest.
    pub fn is_earliest_deadline(&self, p: &DlTask) -> bool {
        self.earliest.is_none_or(|e| dl_time_before(p.deadline, e))
    }
}

/// `dl_task_fits_capacity(p, cpu)` (kernel/sched/sched.h, v6.11): the CPU's capacity
/// covers the task's density (`dl_density >> (BW_SHIFT − SCHED_CAPACITY_SHIFT)`).
pub fn dl_task_fits_capacity(p: &DlTask, capacity_orig: u64) -> bool {
    capacity_orig >= p.density >> (BW_SHIFT - SCHED_CAPACITY_SHIFT)
}

/// `cpudl_find(cp, p, later_mask)` (kernel/sched/cpudeadline.c, v6.11). With a mask
/// wanted (`want_mask`) and free CPUs (no deadline task) the task may use: those, keeping
/// on asymmetric systems only the CPUs it fits — or, if it fits none, the biggest (the
/// task's own CPU among equals). Otherwise the CPU whose earliest deadline is the latest
/// (`cpudl_maximum()`), if the task may use it and its deadline is earlier. `None` when no
/// CPU qualifies; `Some(empty)` never happens.
pub fn cpudl_find(rqs: &[DlRqView<'_>], p: &DlTask, want_mask: bool, asym: bool) -> Option<CpuSet> {
    let mut free = CpuSet::EMPTY;
    for (cpu, r) in rqs.iter().enumerate() {
        if r.earliest.is_none() {
            free.set(cpu);
        }
    }
    let mut later = free.and(&p.allowed);
    if want_mask && !later.is_empty() {
        if !asym {
            return Some(later);
        }
        let (mut max_cap, mut max_cpu) = (0u64, None);
        for cpu in later.iter().collect::<Vec<_>>() {
            let cap = rqs[cpu].capacity_orig;
            if !dl_task_fits_capacity(p, cap) {
                later.clear(cpu);
                if cap > max_cap || (cpu == p.cpu && cap == max_cap) {
                    max_cap = cap;
                    max_cpu = Some(cpu);
                }
            }
        }
        if later.is_empty() {
            if let Some(c) = max_cpu {
                later.set(c);
            }
        }
        return Some(later);
    }
    // cpudl_maximum(): the latest earliest deadline of the CPUs running deadline work
    let best = rqs
        .iter()
        .enumerate()
        .filter_map(|(cpu, r)| r.earliest.map(|d| (cpu, d)))
        .fold(None::<(usize, u64)>, |acc, (cpu, d)| match acc {
            Some((_, bd)) if !dl_time_before(bd, d) => acc,
            _ => Some((cpu, d)),
        })?;
    if p.allowed.contains(best.0) && dl_time_before(p.deadline, best.1) {
        let mut m = CpuSet::EMPTY;
        m.set(best.0);
        return Some(m);
    }
    None
}

/// `find_later_rq(task)` (v6.11) from `this_cpu` (`smp_processor_id()`): among
/// `cpudl_find()`'s CPUs, the task's own; else `this_cpu` if it is a candidate inside the
/// first `SD_WAKE_AFFINE` domain of the task's CPU, else a candidate of that domain in
/// distributed order (`cpumask_any_and_distribute()`, `this_cpu`'s `distribute_prev`);
/// else `this_cpu`, else any candidate. `None` = -1.
pub fn find_later_rq(
    rqs: &[DlRqView<'_>],
    topo: &SdTopology,
    task: &DlTask,
    this_cpu: usize,
    distribute_prev: &mut usize,
) -> Option<usize> {
    if task.nr_cpus_allowed() == 1 {
        return None;
    }
    let later = cpudl_find(rqs, task, true, topo.asym_cpucap_active())?;
    pick_near(&later, topo, task.cpu, this_cpu, rqs.len(), distribute_prev)
}

/// `select_task_rq_dl(p, cpu, flags)` (v6.11): only at a wake-up (WF_TTWU); the task
/// looks elsewhere (`find_later_rq()`) when a deadline task that cannot move or that it
/// does not preempt runs on its CPU, or — on asymmetric systems — when it does not fit
/// that CPU, and goes there if it would be the earliest deadline of that rq.
pub fn select_task_rq_dl(
    rqs: &[DlRqView<'_>],
    topo: &SdTopology,
    p: &DlTask,
    wake_flags: u32,
    this_cpu: usize,
    distribute_prev: &mut usize,
) -> usize {
    let cpu = p.cpu;
    if select_task_rq_dl_looks_later(&rqs[cpu], topo, p, wake_flags) {
        if let Some(target) = find_later_rq(rqs, topo, p, this_cpu, distribute_prev) {
            if rqs[target].is_earliest_deadline(p) {
                return target;
            }
        }
    }
    cpu
}

/// `select_task_rq_dl()`'s `select_rq` (v6.11), which reads only the task's own rq
/// (`rq`, of `p.cpu`): at a wake-up, a running deadline task that cannot move or that `p`
/// does not preempt, or — on asymmetric systems — a CPU `p` does not fit. Only then does
/// [`select_task_rq_dl`] look at the other rqs.
pub fn select_task_rq_dl_looks_later(
    rq: &DlRqView<'_>,
    topo: &SdTopology,
    p: &DlTask,
    wake_flags: u32,
) -> bool {
    if wake_flags & WF_TTWU == 0 {
        return false;
    }
    let mut select_rq = rq.curr.is_some_and(|c| {
        (c.nr_cpus_allowed() < 2 || !dl_entity_preempt(p, c.deadline)) && p.nr_cpus_allowed() > 1
    });
    if topo.asym_cpucap_active() {
        select_rq |= !dl_task_fits_capacity(p, rq.capacity_orig);
    }
    select_rq
}

/// `task_woken_dl(rq, p)`: a woken deadline task that neither runs nor preempts its rq's
/// running deadline task (or that task cannot move), and may run elsewhere, is pushed.
pub fn task_woken_dl_should_push(rq: &DlRqView<'_>, p: &DlTask, running: bool) -> bool {
    !running
        && !rq.need_resched
        && p.nr_cpus_allowed() > 1
        && rq
            .curr
            .is_some_and(|c| c.nr_cpus_allowed() < 2 || !dl_entity_preempt(p, c.deadline))
}

/// What `push_dl_task(rq)` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DlPush {
    /// No pushable task.
    Nothing,
    /// The earliest pushable task preempts the rq's running deadline task, which can move:
    /// reschedule instead.
    Resched,
    /// No CPU would run it at once: leave it (another CPU will pull it).
    NoTarget,
    /// Move `task` from the rq to `to` and reschedule there.
    Push {
        /// Task index.
        task: usize,
        /// Its CPU.
        from: usize,
        /// The later rq's CPU.
        to: usize,
    },
}

/// `push_dl_task(rq)` of `cpu` (v6.11), run on `cpu`: its earliest pushable task goes to
/// `find_lock_later_rq()`'s CPU if it would be that rq's earliest deadline.
pub fn push_dl_task(
    rqs: &[DlRqView<'_>],
    topo: &SdTopology,
    cpu: usize,
    distribute_prev: &mut usize,
) -> DlPush {
    let rq = &rqs[cpu];
    let Some(next) = rq.pushable.first() else {
        return DlPush::Nothing;
    };
    if let Some(c) = rq.curr {
        if dl_time_before(next.deadline, c.deadline) && c.nr_cpus_allowed() > 1 {
            return DlPush::Resched;
        }
    }
    match find_later_rq(rqs, topo, next, cpu, distribute_prev) {
        Some(to) if to != cpu && rqs[to].is_earliest_deadline(next) => DlPush::Push {
            task: next.id,
            from: cpu,
            to,
        },
        _ => DlPush::NoTarget,
    }
}

/// One step of `pull_dl_task(this_rq)` (v6.11) for the overloaded `src`, `dmin` being the
/// deadline of what this pull moved so far: the earliest pushable task of `src` that may
/// run on `this_cpu` is pulled when `src` has more than one deadline task, it is earlier
/// than `dmin` and than `this_cpu`'s earliest deadline, and it would not preempt `src`'s
/// running task (`src_curr_deadline`; then `src` runs it itself). `None`: skip `src`.
/// It reads the two rqs only (`this`: `this_cpu`'s, `s`: `src`'s), as the kernel's step
/// locks only those two.
pub fn pull_dl_candidate(
    this: &DlRqView<'_>,
    this_cpu: usize,
    s: &DlRqView<'_>,
    src_curr_deadline: u64,
    dmin: Option<u64>,
) -> Option<DlTask> {
    // skip when this rq's earliest is before the source's next (earliest pushable)
    if this.dl_nr_running > 0 {
        if let (Some(cur), Some(next)) = (this.earliest, s.pushable.first()) {
            if dl_time_before(cur, next.deadline) {
                return None;
            }
        }
    }
    if s.dl_nr_running <= 1 {
        return None;
    }
    // pick_earliest_pushable_dl_task(src_rq, this_cpu)
    let p = *s.pushable.iter().find(|t| t.allowed.contains(this_cpu))?;
    let before_dmin = dmin.is_none_or(|d| dl_time_before(p.deadline, d));
    if !(before_dmin && this.is_earliest_deadline(&p)) {
        return None;
    }
    if dl_time_before(p.deadline, src_curr_deadline) {
        return None;
    }
    Some(p)
}

/// The CPUs of `rd->dlo_mask` (`overloaded`: the rq has a pushable deadline task) other
/// than `this_cpu`, among `nr_cpus`, in CPU order.
pub fn dl_overloaded_cpus(
    nr_cpus: usize,
    this_cpu: usize,
    overloaded: impl Fn(usize) -> bool,
) -> Vec<usize> {
    let all = CpuSet::first_n(nr_cpus);
    for_each_cpu_wrap(&all, 0, nr_cpus)
        .filter(|&c| c != this_cpu && overloaded(c))
        .collect()
}

/// `check_preempt_equal_dl(rq, p)` for a woken `p` whose deadline equals the running
/// `curr`'s: reschedule only when `curr` could run elsewhere (`cpudl_find()` without a
/// mask finds a CPU) and `p` could not.
pub fn check_preempt_equal_dl(rqs: &[DlRqView<'_>], curr: &DlTask, p: &DlTask, asym: bool) -> bool {
    if curr.nr_cpus_allowed() == 1 || cpudl_find(rqs, curr, false, asym).is_none() {
        return false;
    }
    if p.nr_cpus_allowed() != 1 && cpudl_find(rqs, p, false, asym).is_some() {
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: usize, deadline: u64, cpu: usize, n: usize) -> DlTask {
        DlTask {
            id,
            deadline,
            density: 1 << 18, // a quarter of a CPU: fits 256 and above
            cpu,
            allowed: CpuSet::first_n(n),
            special: false,
        }
    }

    fn view(earliest: Option<u64>, cap: u64) -> DlRqView<'static> {
        DlRqView {
            dl_nr_running: usize::from(earliest.is_some()),
            earliest,
            curr: None,
            need_resched: false,
            capacity_orig: cap,
            pushable: &[],
        }
    }

    #[test]
    fn free_cpus_come_first_and_fitness_keeps_the_big_ones() {
        let rqs = [
            view(Some(10), 1024),
            view(None, 160),
            view(None, 1024),
            view(None, 160),
        ];
        let p = task(0, 5, 0, 4);
        let m = cpudl_find(&rqs, &p, true, false).unwrap();
        assert_eq!(m.iter().collect::<Vec<_>>(), vec![1, 2, 3]);
        let m = cpudl_find(&rqs, &p, true, true).unwrap();
        assert_eq!(m.iter().collect::<Vec<_>>(), vec![2]);
        // fits none of the free CPUs: the biggest of them
        let mut heavy = p;
        heavy.density = 1 << 20;
        let rqs = [
            view(Some(10), 1024),
            view(None, 160),
            view(None, 512),
            view(None, 512),
        ];
        let m = cpudl_find(&rqs, &heavy, true, true).unwrap();
        assert_eq!(m.iter().collect::<Vec<_>>(), vec![2]);
    }

    #[test]
    fn without_free_cpus_the_latest_earliest_deadline_if_ours_is_earlier() {
        let rqs = [
            view(Some(10), 1024),
            view(Some(30), 1024),
            view(Some(20), 1024),
        ];
        assert_eq!(
            cpudl_find(&rqs, &task(0, 25, 0, 3), true, false).map(|m| m.first()),
            Some(Some(1))
        );
        assert!(cpudl_find(&rqs, &task(0, 31, 0, 3), true, false).is_none());
        // the wrap-around of dl_time_before()
        assert!(dl_time_before(u64::MAX - 5, 3));
    }

    #[test]
    fn pull_takes_the_earliest_pushable_that_would_not_preempt_its_source() {
        let pushable = [task(7, 40, 1, 2)];
        let mut src = view(Some(20), 1024);
        src.dl_nr_running = 2;
        src.pushable = &pushable;
        let rqs = [view(None, 1024), src];
        assert_eq!(
            pull_dl_candidate(&rqs[0], 0, &rqs[1], 20, None).map(|t| t.id),
            Some(7)
        );
        // it would preempt the source's running task: the source runs it
        assert!(pull_dl_candidate(&rqs[0], 0, &rqs[1], 50, None).is_none());
        // not earlier than what this pull already moved
        assert!(pull_dl_candidate(&rqs[0], 0, &rqs[1], 20, Some(30)).is_none());
        assert_eq!(
            dl_overloaded_cpus(rqs.len(), 0, |c| !rqs[c].pushable.is_empty()),
            vec![1]
        );
    }
}
