//! RT class placement as pure logic: the `cpupri` priority vectors, capacity fitness,
//! `find_lowest_rq()`, `select_task_rq_rt()`, and the push/pull choices
//! (kernel/sched/rt.c and kernel/sched/cpupri.c, v6.11).
//!
//! Priorities are the kernel's `prio`: 0..=98 for RT tasks (lower = more important;
//! `prio = MAX_RT_PRIO − 1 − rt_priority`), 100..=139 for fair tasks. An rq's
//! `rt.highest_prio.curr` is `MAX_RT_PRIO − 1` (99) when it has no RT task.
//!
//! The engine keeps one [`Cpupri`] per root domain (or rebuilds it from the rqs with
//! [`Cpupri::from_highest_prios`]), describes each rq as an [`RtRqView`], and applies the
//! returned decisions (a CPU with a deadline task is `CPUPRI_HIGHER`, set by the engine as
//! `inc_dl_deadline()` does). Simplified: no migration-disabled tasks, no `cpu_active_mask`
//! (all CPUs active), no lock-retry races in `find_lock_lowest_rq()` (one try decides).

use super::domains::{for_each_cpu_wrap, SdTopology, SD_WAKE_AFFINE};
use super::select_fair::{WF_FORK, WF_TTWU};
use crate::sched::CpuSet;

/// `MAX_RT_PRIO`.
pub const MAX_RT_PRIO: i32 = 100;
/// `MAX_PRIO` (`MAX_RT_PRIO + NICE_WIDTH`).
pub const MAX_PRIO: i32 = 140;
/// `DEFAULT_PRIO` (nice 0).
pub const DEFAULT_PRIO: i32 = 120;
/// `CPUPRI_NR_PRIORITIES` (`MAX_RT_PRIO + 1`).
pub const CPUPRI_NR_PRIORITIES: usize = 101;
/// `CPUPRI_INVALID`.
pub const CPUPRI_INVALID: i32 = -1;
/// `CPUPRI_NORMAL`: no RT task (fair or idle).
pub const CPUPRI_NORMAL: i32 = 0;
/// `CPUPRI_HIGHER`: above every RT priority (deadline).
pub const CPUPRI_HIGHER: i32 = 100;

/// The kernel `prio` of an RT task with `sched_priority` `rt_priority` (1..=99):
/// `MAX_RT_PRIO − 1 − rt_priority` (`__normal_prio()`).
pub fn rt_prio(rt_priority: u32) -> i32 {
    MAX_RT_PRIO - 1 - rt_priority.min(99) as i32
}

/// `convert_prio(prio)` (kernel/sched/cpupri.c, v5.11+): `prio` 0..=98 → cpupri 99..=1,
/// 99 (no RT task) → `CPUPRI_NORMAL`, 100 → `CPUPRI_HIGHER`, anything else invalid.
pub fn convert_prio(prio: i32) -> i32 {
    match prio {
        0..=98 => MAX_RT_PRIO - 1 - prio,
        99 => CPUPRI_NORMAL,
        100 => CPUPRI_HIGHER,
        _ => CPUPRI_INVALID,
    }
}

/// `struct cpupri` (kernel/sched/cpupri.c, v6.11): for each cpupri level, the CPUs at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cpupri {
    pri_to_cpu: Vec<CpuSet>,
    cpu_to_pri: Vec<i32>,
}

impl Cpupri {
    /// `cpupri_init()`: every CPU at `CPUPRI_INVALID` (not yet online).
    pub fn new(nr_cpus: usize) -> Cpupri {
        Cpupri {
            pri_to_cpu: vec![CpuSet::EMPTY; CPUPRI_NR_PRIORITIES],
            cpu_to_pri: vec![CPUPRI_INVALID; nr_cpus],
        }
    }

    /// The vectors for rqs whose `rt.highest_prio.curr` are `prios` (one per CPU).
    pub fn from_highest_prios(prios: &[i32]) -> Cpupri {
        let mut c = Cpupri::new(prios.len());
        for (cpu, &p) in prios.iter().enumerate() {
            c.set(cpu, p);
        }
        c
    }

    /// `cpupri_set(cp, cpu, newpri)`: `newpri` is the rq's new `rt.highest_prio.curr`.
    pub fn set(&mut self, cpu: usize, newpri: i32) {
        let Some(&oldpri) = self.cpu_to_pri.get(cpu) else {
            return;
        };
        let newpri = convert_prio(newpri);
        if newpri == oldpri {
            return;
        }
        if newpri != CPUPRI_INVALID {
            self.pri_to_cpu[newpri as usize].set(cpu);
        }
        if oldpri != CPUPRI_INVALID {
            self.pri_to_cpu[oldpri as usize].clear(cpu);
        }
        self.cpu_to_pri[cpu] = newpri;
    }

    /// The CPU's cpupri level.
    pub fn cpu_pri(&self, cpu: usize) -> i32 {
        self.cpu_to_pri.get(cpu).copied().unwrap_or(CPUPRI_INVALID)
    }

    /// `__cpupri_find()`: the allowed CPUs at level `idx`, if any.
    fn level(&self, allowed: &CpuSet, idx: usize) -> Option<CpuSet> {
        let m = self.pri_to_cpu[idx].and(allowed);
        (!m.is_empty()).then_some(m)
    }

    /// `cpupri_find(cp, p, lowest_mask)`: the allowed CPUs of the lowest cpupri level below
    /// p's, or `None`.
    pub fn find(&self, prio: i32, allowed: &CpuSet) -> Option<CpuSet> {
        self.find_fitness(prio, allowed, None::<fn(usize) -> bool>)
    }

    /// `cpupri_find_fitness(cp, p, lowest_mask, fitness_fn)` (v5.7+): levels from the lowest
    /// up to p's (exclusive); at each, drop the CPUs `fitness` rejects and return the rest if
    /// any. If no level has a fitting CPU, search again without fitness (priority beats
    /// capacity).
    pub fn find_fitness<F: Fn(usize) -> bool>(
        &self,
        prio: i32,
        allowed: &CpuSet,
        fitness: Option<F>,
    ) -> Option<CpuSet> {
        let task_pri = convert_prio(prio).clamp(0, CPUPRI_NR_PRIORITIES as i32) as usize;
        for idx in 0..task_pri {
            let Some(mut mask) = self.level(allowed, idx) else {
                continue;
            };
            let Some(fit) = fitness.as_ref() else {
                return Some(mask);
            };
            for cpu in mask.iter().collect::<Vec<_>>() {
                if !fit(cpu) {
                    mask.clear(cpu);
                }
            }
            if mask.is_empty() {
                continue;
            }
            return Some(mask);
        }
        if fitness.is_some() {
            return self.find(prio, allowed);
        }
        None
    }
}

/// An RT task as placement sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtTask {
    /// Task id.
    pub id: usize,
    /// Kernel `prio` (0..=98).
    pub prio: i32,
    /// `task_cpu(p)`.
    pub cpu: usize,
    /// `p->cpus_mask`.
    pub allowed: CpuSet,
    /// `uclamp_eff_value(p, UCLAMP_MIN)` (1024 by default for RT with CONFIG_UCLAMP_TASK;
    /// pass 0 without it).
    pub uclamp_min: u64,
    /// `uclamp_eff_value(p, UCLAMP_MAX)`.
    pub uclamp_max: u64,
}

/// One rq's RT-relevant state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtRqView<'a> {
    /// `rq->rt.highest_prio.curr`: the best prio among its RT tasks (running or queued);
    /// 99 (`MAX_RT_PRIO − 1`) when none.
    pub highest_prio_curr: i32,
    /// `rq->curr->prio` (`MAX_PRIO` for the idle task).
    pub curr_prio: i32,
    /// `rt_or_dl_task(rq->curr)`.
    pub curr_rt_or_dl: bool,
    /// `rq->curr->nr_cpus_allowed`.
    pub curr_nr_cpus_allowed: u32,
    /// `arch_scale_cpu_capacity(cpu)`.
    pub capacity_orig: u64,
    /// `rq->rt.pushable_tasks` in plist order (prio ascending, FIFO among equals): queued,
    /// not running RT tasks allowed on more than one CPU.
    pub pushable: &'a [RtTask],
}

impl RtRqView<'_> {
    /// `rq->rt.highest_prio.next` (v6.8+): the first pushable task's prio, else 99.
    pub fn highest_prio_next(&self) -> i32 {
        self.pushable.first().map_or(MAX_RT_PRIO - 1, |t| t.prio)
    }

    /// `rq->rt.overloaded` / the CPU's bit in `rd->rto_mask` (v6.8+: driven by
    /// `pushable_tasks` being non-empty).
    pub fn overloaded(&self) -> bool {
        !self.pushable.is_empty()
    }
}

/// `rt_task_fits_capacity(p, cpu)` (kernel/sched/rt.c, v5.7+ with CONFIG_UCLAMP_TASK): true
/// on symmetric systems; else `arch_scale_cpu_capacity(cpu) ≥ min(uclamp_min, uclamp_max)`.
/// With the RT default `uclamp_min = 1024` only the biggest CPUs fit.
pub fn rt_task_fits_capacity(task: &RtTask, capacity_orig: u64, asym_active: bool) -> bool {
    if !asym_active {
        return true;
    }
    capacity_orig >= task.uclamp_min.min(task.uclamp_max)
}

/// `cpumask_any_and_distribute(src1, src2)` (lib/cpumask.c, v5.9+): the next CPU of
/// `src1 ∩ src2` after the calling CPU's `distribute_cpu_mask_prev` (wrapping), which it
/// updates. The first selection from 0 skips CPU 0, as the kernel notes.
pub fn cpumask_any_and_distribute(
    src1: &CpuSet,
    src2: &CpuSet,
    nr_cpus: usize,
    prev: &mut usize,
) -> Option<usize> {
    let m = src1.and(src2);
    let next = for_each_cpu_wrap(&m, *prev + 1, nr_cpus).next();
    if let Some(n) = next {
        *prev = n;
    }
    next
}

/// `find_lowest_rq(task)` (v6.11): the best CPU to run `task` among those running the
/// lowest-priority work (with the capacity fitness pass on asymmetric systems): the task's
/// CPU, else `this_cpu` if it is in the first `SD_WAKE_AFFINE` domain with candidates, else
/// a candidate of that domain in distributed order, else any candidate. `None` = -1.
/// `distribute_prev` is `this_cpu`'s `distribute_cpu_mask_prev`.
pub fn find_lowest_rq(
    rqs: &[RtRqView<'_>],
    cpupri: &Cpupri,
    topo: &SdTopology,
    task: &RtTask,
    this_cpu: usize,
    distribute_prev: &mut usize,
) -> Option<usize> {
    if task.allowed.weight() == 1 {
        return None; // No other targets possible.
    }
    let n = rqs.len();
    let asym = topo.asym_cpucap_active();
    let lowest_mask = if asym {
        cpupri.find_fitness(
            task.prio,
            &task.allowed,
            Some(|cpu: usize| {
                rqs.get(cpu)
                    .is_some_and(|r| rt_task_fits_capacity(task, r.capacity_orig, true))
            }),
        )
    } else {
        cpupri.find(task.prio, &task.allowed)
    }?;
    pick_near(&lowest_mask, topo, task.cpu, this_cpu, n, distribute_prev)
}

/// The choice `find_lowest_rq()` and `find_later_rq()` (deadline.c) share among their
/// candidates `mask`: the task's CPU (most likely cache-hot); else `this_cpu` if it is a
/// candidate inside the first `SD_WAKE_AFFINE` domain of the task's CPU ("cheaper to
/// preempt than a remote processor"), else a candidate of that domain in distributed
/// order; else `this_cpu`, else any candidate.
pub fn pick_near(
    mask: &CpuSet,
    topo: &SdTopology,
    task_cpu: usize,
    this_cpu: usize,
    n: usize,
    distribute_prev: &mut usize,
) -> Option<usize> {
    if mask.contains(task_cpu) {
        return Some(task_cpu);
    }
    let this_cpu = mask.contains(this_cpu).then_some(this_cpu);
    for sd in topo.domains(task_cpu) {
        if sd.flags & SD_WAKE_AFFINE == 0 {
            continue;
        }
        if let Some(t) = this_cpu {
            if sd.span.contains(t) {
                return Some(t);
            }
        }
        if let Some(best) = cpumask_any_and_distribute(mask, &sd.span, n, distribute_prev) {
            return Some(best);
        }
    }
    if this_cpu.is_some() {
        return this_cpu;
    }
    cpumask_any_and_distribute(mask, &CpuSet::first_n(n), n, distribute_prev)
}

/// Why [`select_task_rq_rt`] chose its CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RtPlaceReason {
    /// Not a wakeup or fork: the task's CPU.
    NotWakeup,
    /// No RT conflict on the CPU and the task fits it: stay.
    Stay,
    /// Moved to `find_lowest_rq()`'s CPU.
    LowestRq,
    /// The search found no CPU running lower-priority work.
    NoLowerRq,
    /// The search was only for capacity and found no fitting CPU: stay.
    NoFittingRq,
}

/// An RT placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtPlacement {
    /// Chosen CPU.
    pub cpu: usize,
    /// Why.
    pub reason: RtPlaceReason,
}

/// `select_task_rq_rt(p, cpu, flags)` (kernel/sched/rt.c, v6.11). `cpu` is `task_cpu(p)`.
/// If the CPU's current task is RT/DL and would not yield to p (pinned, or of equal or
/// higher priority), or p does not fit the CPU's capacity, look for the lowest rq; move
/// there only if it fits (when fitness was the only reason) and runs lower-priority work.
///
/// Simplified: no Android `cpu_busy_with_softirqs()` test.
pub fn select_task_rq_rt(
    rqs: &[RtRqView<'_>],
    cpupri: &Cpupri,
    topo: &SdTopology,
    task: &RtTask,
    wake_flags: u32,
    this_cpu: usize,
    distribute_prev: &mut usize,
) -> RtPlacement {
    let cpu = task.cpu;
    let keep = |reason| RtPlacement { cpu, reason };
    if wake_flags & (WF_TTWU | WF_FORK) == 0 {
        return keep(RtPlaceReason::NotWakeup);
    }
    let Some(rq) = rqs.get(cpu) else {
        return keep(RtPlaceReason::NotWakeup);
    };
    let asym = topo.asym_cpucap_active();
    let test = rq.curr_rt_or_dl && (rq.curr_nr_cpus_allowed < 2 || rq.curr_prio <= task.prio);
    let fits = rt_task_fits_capacity(task, rq.capacity_orig, asym);
    if !test && fits {
        return keep(RtPlaceReason::Stay);
    }
    let target = find_lowest_rq(rqs, cpupri, topo, task, this_cpu, distribute_prev);
    // Bail out if we were forcing a migration to find a better fitting CPU but failed.
    if let Some(t) = target {
        if !test && !rt_task_fits_capacity(task, rqs[t].capacity_orig, asym) {
            return keep(RtPlaceReason::NoFittingRq);
        }
        // Don't bother moving it if the destination is not running a lower priority task.
        if task.prio < rqs[t].highest_prio_curr {
            return RtPlacement {
                cpu: t,
                reason: RtPlaceReason::LowestRq,
            };
        }
    }
    keep(RtPlaceReason::NoLowerRq)
}

/// What [`push_rt_task`] decided for one rq.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RtPush {
    /// Not overloaded: nothing to push.
    Nothing,
    /// The highest pushable task outranks the running one: reschedule the rq instead.
    Resched,
    /// No CPU runs lower-priority work that the task may use.
    NoTarget,
    /// Move `task` from `from` to `to` and reschedule `to`.
    Push {
        /// Task id.
        task: usize,
        /// Source CPU.
        from: usize,
        /// Destination CPU.
        to: usize,
    },
}

/// `push_rt_task(rq, pull = false)` (kernel/sched/rt.c, v6.11) for the rq of `cpu`, run on
/// that CPU: take the highest pushable task (`pick_next_pushable_task()`), and push it to
/// `find_lock_lowest_rq()`'s CPU if that runs strictly lower-priority work.
/// `push_rt_tasks()` repeats this (the engine applies each push, then asks again) until it
/// returns anything but [`RtPush::Push`].
pub fn push_rt_task(
    rqs: &[RtRqView<'_>],
    cpupri: &Cpupri,
    topo: &SdTopology,
    cpu: usize,
    distribute_prev: &mut usize,
) -> RtPush {
    let Some(rq) = rqs.get(cpu) else {
        return RtPush::Nothing;
    };
    let Some(next) = rq.pushable.first() else {
        return RtPush::Nothing;
    };
    // The next task slipped in with a higher priority than current: just reschedule.
    if next.prio < rq.curr_prio {
        return RtPush::Resched;
    }
    // find_lock_lowest_rq(): one try (no lock races in the model).
    let task = RtTask { cpu, ..*next };
    match find_lowest_rq(rqs, cpupri, topo, &task, cpu, distribute_prev) {
        Some(t) if t != cpu && rqs[t].highest_prio_curr > task.prio => RtPush::Push {
            task: task.id,
            from: cpu,
            to: t,
        },
        _ => RtPush::NoTarget,
    }
}

/// One pull.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtMove {
    /// Task id.
    pub task: usize,
    /// Source CPU.
    pub from: usize,
    /// Destination CPU.
    pub to: usize,
}

/// What [`pull_rt_task`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RtPull {
    /// No other CPU is overloaded.
    Nothing,
    /// RT_PUSH_IPI: ask these overloaded CPUs, in order, to run `push_rt_tasks()`
    /// (`tell_cpu_to_push()`; the kernel chains the IPI through `rto_next_cpu()`, here in
    /// ascending CPU order starting from the first).
    PushIpi(Vec<usize>),
    /// Pull these tasks to this CPU (possibly none), then reschedule it if any.
    Pull(Vec<RtMove>),
}

/// `pull_rt_task(this_rq)` (kernel/sched/rt.c, v6.11) for `this_cpu`, which is about to run
/// lower-priority work: with RT_PUSH_IPI, the overloaded CPUs are asked to push; otherwise,
/// from every other overloaded CPU whose next-highest task beats this CPU's highest, pull
/// the highest pushable task allowed here if it beats this CPU's highest and does not
/// outrank the task running on its own CPU (it would preempt it there).
pub fn pull_rt_task(rqs: &[RtRqView<'_>], this_cpu: usize, push_ipi: bool) -> RtPull {
    let rto: Vec<usize> = (0..rqs.len()).filter(|&c| rqs[c].overloaded()).collect();
    if let Some(r) = pull_rt_task_rto(&rto, this_cpu, push_ipi) {
        return r;
    }
    let Some(this) = rqs.get(this_cpu) else {
        return RtPull::Nothing;
    };
    let mut this_highest = this.highest_prio_curr;
    let mut moves = Vec::new();
    for &cpu in &rto {
        if cpu == this_cpu {
            continue;
        }
        let src = &rqs[cpu];
        // The next highest task is known to be lower-priority than ours.
        if src.highest_prio_next() >= this_highest {
            continue;
        }
        // pick_highest_pushable_task(src_rq, this_cpu)
        let Some(p) = src.pushable.iter().find(|t| t.allowed.contains(this_cpu)) else {
            continue;
        };
        if p.prio < this_highest {
            // p is waking and outranks src's current task: it will run there.
            if p.prio < src.curr_prio {
                continue;
            }
            moves.push(RtMove {
                task: p.id,
                from: cpu,
                to: this_cpu,
            });
            this_highest = p.prio;
        }
    }
    RtPull::Pull(moves)
}

/// What [`pull_rt_task`] decides from `rto` alone (`rd->rto_mask`: the overloaded CPUs,
/// in order): nothing when no CPU but this one is overloaded, and with RT_PUSH_IPI the
/// CPUs asked to push. `None`: the pull proper, which reads the rqs.
pub fn pull_rt_task_rto(rto: &[usize], this_cpu: usize, push_ipi: bool) -> Option<RtPull> {
    if rto.is_empty() {
        return Some(RtPull::Nothing);
    }
    // If we are the only overloaded CPU do nothing.
    if rto.len() == 1 && rto[0] == this_cpu {
        return Some(RtPull::Nothing);
    }
    if push_ipi {
        return Some(RtPull::PushIpi(
            rto.iter().copied().filter(|&c| c != this_cpu).collect(),
        ));
    }
    None
}

/// `need_pull_rt_task(rq, prev)` (v6.11): the rq's best RT prio is now worse than the task
/// that just stopped running, so it should try to pull.
pub fn need_pull_rt_task(highest_prio_curr: i32, prev_prio: i32) -> bool {
    highest_prio_curr > prev_prio
}

/// `task_woken_rt(rq, p)`'s condition (v6.11) for calling `push_rt_tasks(rq)`: p woke on
/// this rq without running or preempting, may run elsewhere, and the current RT/DL task
/// will not yield to it.
pub fn task_woken_rt_should_push(
    rq: &RtRqView<'_>,
    p_prio: i32,
    p_nr_cpus_allowed: u32,
    p_running: bool,
    curr_need_resched: bool,
) -> bool {
    !p_running
        && !curr_need_resched
        && p_nr_cpus_allowed > 1
        && rq.curr_rt_or_dl
        && (rq.curr_nr_cpus_allowed < 2 || rq.curr_prio <= p_prio)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: i32 = MAX_RT_PRIO - 1;

    fn topo() -> SdTopology {
        // hikey960-like: 0-3 A53 (462), 4-7 A73 (1024).
        SdTopology::from_clusters(
            &[0, 0, 0, 0, 1, 1, 1, 1],
            &[462, 462, 462, 462, 1024, 1024, 1024, 1024],
        )
    }

    fn rq<'a>(cap: u64) -> RtRqView<'a> {
        RtRqView {
            highest_prio_curr: NONE,
            curr_prio: DEFAULT_PRIO,
            curr_rt_or_dl: false,
            curr_nr_cpus_allowed: 8,
            capacity_orig: cap,
            pushable: &[],
        }
    }

    fn rqs<'a>() -> Vec<RtRqView<'a>> {
        [462, 462, 462, 462, 1024, 1024, 1024, 1024]
            .iter()
            .map(|&c| rq(c))
            .collect()
    }

    fn running_rt(r: &mut RtRqView<'_>, prio: i32) {
        r.highest_prio_curr = prio;
        r.curr_prio = prio;
        r.curr_rt_or_dl = true;
    }

    fn task(prio: i32, cpu: usize) -> RtTask {
        RtTask {
            id: 99,
            prio,
            cpu,
            allowed: CpuSet::first_n(8),
            uclamp_min: 1024,
            uclamp_max: 1024,
        }
    }

    fn cpupri(rqs: &[RtRqView<'_>]) -> Cpupri {
        Cpupri::from_highest_prios(&rqs.iter().map(|r| r.highest_prio_curr).collect::<Vec<_>>())
    }

    #[test]
    fn prio_conversion() {
        assert_eq!(rt_prio(1), 98);
        assert_eq!(rt_prio(99), 0);
        assert_eq!(convert_prio(0), 99);
        assert_eq!(convert_prio(98), 1);
        assert_eq!(convert_prio(99), CPUPRI_NORMAL);
        assert_eq!(convert_prio(100), CPUPRI_HIGHER);
        assert_eq!(convert_prio(120), CPUPRI_INVALID);
    }

    #[test]
    fn cpupri_levels_lowest_first() {
        // CPU 0 runs RT prio 10 (cpupri 89), CPU 1 prio 60 (cpupri 39), CPU 2 nothing.
        let mut c = Cpupri::from_highest_prios(&[10, 60, NONE]);
        assert_eq!(c.cpu_pri(0), 89);
        // A prio-50 task (cpupri 49) sees levels 0..49: CPU 2 (level 0) first.
        assert_eq!(
            c.find(50, &CpuSet::first_n(3)),
            Some(CpuSet::from_cpus(&[2]))
        );
        // Without CPU 2, level 39 (CPU 1) is below 49.
        assert_eq!(
            c.find(50, &CpuSet::from_cpus(&[0, 1])),
            Some(CpuSet::from_cpus(&[1]))
        );
        // A prio-70 task (cpupri 29) can't preempt CPU 1 (39) or CPU 0 (89).
        assert_eq!(c.find(70, &CpuSet::from_cpus(&[0, 1])), None);
        c.set(2, 5);
        assert_eq!(c.cpu_pri(2), 94);
        assert_eq!(
            c.find(50, &CpuSet::first_n(3)),
            Some(CpuSet::from_cpus(&[1]))
        );
    }

    #[test]
    fn fits_capacity_rt() {
        let t = task(50, 0);
        assert!(!rt_task_fits_capacity(&t, 462, true));
        assert!(rt_task_fits_capacity(&t, 1024, true));
        assert!(rt_task_fits_capacity(&t, 462, false));
        // uclamp_max caps the requirement: min(1024, 400) = 400 ≤ 462.
        let capped = RtTask {
            uclamp_max: 400,
            ..t
        };
        assert!(rt_task_fits_capacity(&capped, 462, true));
    }

    #[test]
    fn rt_task_goes_to_a_free_big_cpu() {
        let t = topo();
        let rqs = rqs();
        let cp = cpupri(&rqs);
        let p = task(50, 1);
        let mut dist = 0;
        // Level 0 holds all 8 CPUs; fitness keeps 4-7. CPU 1 (task's and this) is not in
        // the mask; the MC domain {0-3} has no candidate; PKG: next after 0 in {4-7} = 4.
        assert_eq!(find_lowest_rq(&rqs, &cp, &t, &p, 1, &mut dist), Some(4));
        assert_eq!(dist, 4);
        // Distributed: the next search continues after 4.
        assert_eq!(find_lowest_rq(&rqs, &cp, &t, &p, 1, &mut dist), Some(5));
        let mut dist = 0;
        let pl = select_task_rq_rt(&rqs, &cp, &t, &p, WF_TTWU, 1, &mut dist);
        assert_eq!(
            pl,
            RtPlacement {
                cpu: 4,
                reason: RtPlaceReason::LowestRq
            }
        );
        // Already on a big CPU with nothing RT there: stay.
        let p5 = task(50, 5);
        let pl = select_task_rq_rt(&rqs, &cp, &t, &p5, WF_TTWU, 5, &mut dist);
        assert_eq!(
            pl,
            RtPlacement {
                cpu: 5,
                reason: RtPlaceReason::Stay
            }
        );
        // Not a wakeup.
        let pl = select_task_rq_rt(&rqs, &cp, &t, &p, 0, 1, &mut dist);
        assert_eq!(pl.reason, RtPlaceReason::NotWakeup);
    }

    #[test]
    fn rt_task_falls_back_when_bigs_are_busier() {
        let t = topo();
        let mut rqs = rqs();
        for r in &mut rqs[4..] {
            running_rt(r, 10); // cpupri 89 > the task's 49: not candidates
        }
        let cp = cpupri(&rqs);
        let p = task(50, 1);
        let mut dist = 0;
        // Fitness finds nothing at levels 0..49 → non-fitness search: level 0 = {0-3},
        // which holds the task's CPU 1.
        assert_eq!(find_lowest_rq(&rqs, &cp, &t, &p, 1, &mut dist), Some(1));
        // select_task_rq_rt searched only for fitness and the target doesn't fit: stay.
        let pl = select_task_rq_rt(&rqs, &cp, &t, &p, WF_TTWU, 1, &mut dist);
        assert_eq!(
            pl,
            RtPlacement {
                cpu: 1,
                reason: RtPlaceReason::NoFittingRq
            }
        );
        // CPU 1 itself runs a higher RT task (prio 20 ≤ 50 → test): the search lands on
        // another LITTLE (fallback search; task CPU 1 no longer at level 0).
        running_rt(&mut rqs[1], 20);
        let cp = cpupri(&rqs);
        let mut dist = 0;
        let pl = select_task_rq_rt(&rqs, &cp, &t, &p, WF_TTWU, 1, &mut dist);
        // mask {0,2,3}; this_cpu 1 not in it; MC {0-3}: next after 0 → 2.
        assert_eq!(
            pl,
            RtPlacement {
                cpu: 2,
                reason: RtPlaceReason::LowestRq
            }
        );
        // Everything runs higher-priority RT: no lower rq.
        for r in &mut rqs {
            running_rt(r, 5);
        }
        let cp = cpupri(&rqs);
        let pl = select_task_rq_rt(&rqs, &cp, &t, &p, WF_TTWU, 1, &mut dist);
        assert_eq!(
            pl,
            RtPlacement {
                cpu: 1,
                reason: RtPlaceReason::NoLowerRq
            }
        );
        // Pinned tasks have no other target.
        let pinned = RtTask {
            allowed: CpuSet::from_cpus(&[1]),
            ..p
        };
        assert_eq!(find_lowest_rq(&rqs, &cp, &t, &pinned, 1, &mut dist), None);
    }

    #[test]
    fn symmetric_rt_prefers_this_cpu() {
        let t = SdTopology::from_clusters(&[0, 0, 0, 0], &[1024; 4]);
        let mut rqs: Vec<_> = (0..4).map(|_| rq(1024)).collect();
        running_rt(&mut rqs[0], 10);
        let cp = cpupri(&rqs);
        let p = task(50, 0);
        let mut dist = 0;
        // mask {1,2,3}; this_cpu 3 is in it and in the first WAKE_AFFINE domain.
        assert_eq!(find_lowest_rq(&rqs, &cp, &t, &p, 3, &mut dist), Some(3));
        assert_eq!(dist, 0);
    }

    #[test]
    fn push_highest_pushable_to_free_big() {
        let t = topo();
        let pushable = [
            RtTask {
                id: 7,
                ..task(20, 4)
            },
            RtTask {
                id: 8,
                ..task(30, 4)
            },
        ];
        let urgent = [RtTask {
            id: 9,
            ..task(5, 4)
        }];
        let mut rqs = rqs();
        running_rt(&mut rqs[4], 10);
        rqs[4].pushable = &pushable;
        let cp = cpupri(&rqs);
        let mut dist = 0;
        // next = prio 20 (not above curr 10). Fitting level-0 CPUs: 5, 6, 7; task CPU 4
        // is not among them; MC {4-7}: next after 0 → 5; CPU 5's 99 > 20 → push.
        assert_eq!(
            push_rt_task(&rqs, &cp, &t, 4, &mut dist),
            RtPush::Push {
                task: 7,
                from: 4,
                to: 5
            }
        );
        // A pushable task of higher priority than curr: reschedule instead.
        rqs[4].pushable = &urgent;
        assert_eq!(push_rt_task(&rqs, &cp, &t, 4, &mut dist), RtPush::Resched);
        // Nothing pushable.
        rqs[4].pushable = &[];
        assert_eq!(push_rt_task(&rqs, &cp, &t, 4, &mut dist), RtPush::Nothing);
        // Every other CPU runs higher-priority RT: no target.
        rqs[4].pushable = &pushable;
        for (i, r) in rqs.iter_mut().enumerate() {
            if i != 4 {
                running_rt(r, 1);
            }
        }
        let cp = cpupri(&rqs);
        assert_eq!(push_rt_task(&rqs, &cp, &t, 4, &mut dist), RtPush::NoTarget);
    }

    #[test]
    fn pull_choices() {
        let on4 = [
            RtTask {
                id: 1,
                allowed: CpuSet::from_cpus(&[4]),
                ..task(15, 4)
            },
            RtTask {
                id: 2,
                ..task(20, 4)
            },
        ];
        let on6 = [RtTask {
            id: 3,
            ..task(12, 6)
        }];
        let mut rqs = rqs();
        running_rt(&mut rqs[4], 10);
        rqs[4].pushable = &on4;
        running_rt(&mut rqs[6], 30);
        rqs[6].pushable = &on6;
        // RT_PUSH_IPI: ask CPUs 4 and 6 to push.
        assert_eq!(pull_rt_task(&rqs, 5, true), RtPull::PushIpi(vec![4, 6]));
        // Without it: from CPU 4 the highest pushable allowed on 5 is id 2 (id 1 is
        // pinned), prio 20 < 99 and not above CPU 4's curr (10) → pull. From CPU 6: next
        // 12 < 20; id 3 prio 12 < 20, but it outranks CPU 6's curr (30): it is about to
        // run there → skip.
        assert_eq!(
            pull_rt_task(&rqs, 5, false),
            RtPull::Pull(vec![RtMove {
                task: 2,
                from: 4,
                to: 5
            }])
        );
        // If CPU 6 ran prio 8, id 3 (12) would be pulled too, after id 2.
        running_rt(&mut rqs[6], 8);
        assert_eq!(
            pull_rt_task(&rqs, 5, false),
            RtPull::Pull(vec![
                RtMove {
                    task: 2,
                    from: 4,
                    to: 5
                },
                RtMove {
                    task: 3,
                    from: 6,
                    to: 5
                }
            ])
        );
        // This CPU runs prio 15: CPU 4's next (15) ≥ 15 → skip; CPU 6's 12 < 15 → pull.
        running_rt(&mut rqs[5], 15);
        assert_eq!(
            pull_rt_task(&rqs, 5, false),
            RtPull::Pull(vec![RtMove {
                task: 3,
                from: 6,
                to: 5
            }])
        );
        // Only this CPU is overloaded: nothing.
        let mut alone = self::rqs();
        alone[4].pushable = &on4;
        assert_eq!(pull_rt_task(&alone, 4, false), RtPull::Nothing);
        assert!(need_pull_rt_task(NONE, 10));
        assert!(!need_pull_rt_task(10, 10));
    }

    #[test]
    fn woken_push_condition() {
        let mut r = rq(1024);
        running_rt(&mut r, 10);
        assert!(task_woken_rt_should_push(&r, 50, 8, false, false));
        assert!(!task_woken_rt_should_push(&r, 5, 8, false, false)); // p outranks curr
        assert!(!task_woken_rt_should_push(&r, 50, 1, false, false)); // p pinned
        r.curr_nr_cpus_allowed = 1;
        assert!(task_woken_rt_should_push(&r, 5, 8, false, false)); // curr pinned
    }
}
