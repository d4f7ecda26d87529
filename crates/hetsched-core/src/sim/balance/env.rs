//! The balancer's view of the engine ([`Env`], an [`LbEnv`] over the runqueues), the
//! per-CPU values and group sums the engine keeps for it between passes ([`LbScratch`]),
//! and `lb_env!`, which builds the view from the engine's fields.

use crate::energy::overutilized::{cpu_overutilized, OverutilizedGate};
use crate::pelt;
use crate::policy::lb::stats::{sum_group_cpus, GroupSums};
use crate::policy::lb::{LbCpu, LbEnv, LbTask};
use crate::sched::capacity::UclampRq;
use crate::sched::fair::SchedEntity;
use crate::sched::topology::SchedGroup;
use crate::sched::CpuSet;
use crate::sim::{rq_capacity, Rq, Thread};
use crate::time::Nanos;
use std::cell::{Cell, RefCell};

/// The balancer's view of the engine.
pub(in crate::sim) struct Env<'a> {
    pub rqs: &'a [Rq],
    pub threads: &'a [Thread],
    pub ents: &'a [SchedEntity],
    pub misfit: &'a [u64],
    pub active: &'a [bool],
    pub stamp: &'a [u64],
    pub now: Nanos,
    pub util_est: bool,
    pub ue_ver: pelt::UtilEstVersion,
    /// The engine's per-CPU values and this pass's memo (see [`LbScratch`]).
    pub scratch: &'a LbScratch,
    /// This pass's stamp in `scratch`.
    pub pass: u64,
    /// `cpu_overutilized()` inputs when EAS is enabled (`None`: never overutilised).
    pub ou: Option<OuEnv<'a>>,
}

/// An [`LbScratch`] entry that no generation matches.
const NO_GEN: u64 = u64::MAX;

/// The balancer's reads kept by the engine. Each CPU's [`LbCpu`] is kept from one pass to
/// the next with the generation it was computed at: the CPU's [`LbScratch::gen`], one
/// count moved by every writer of what [`Env::fill_cpu`] reads (its task counts and
/// current task, `misfit_task_load` and `active_balance`:
/// [`Sim::lb_cpu_changed`](crate::sim::Sim::lb_cpu_changed); its PELT signals, util_est, RT tasks and clamps:
/// [`Sim::rq_util_changed`](crate::sim::Sim::rq_util_changed); `capacity_of()`, which `update_cpu_capacity()` moves) and
/// never decreasing; an entry is read again only when that count has moved.
/// `clock_task` is the pass's. The [`GroupSums`] of a group of at least
/// [`KEEP_GROUP_WEIGHT`] CPUs (the per-CPU loop of `update_sg_lb_stats()`) are kept
/// likewise, by the group's `sched_group_capacity` index, with the CPUs and
/// `imbalance_pct` they were gathered for and the sum of those CPUs' generations then: as
/// no count decreases, an equal sum over the same CPUs means that none of them moved, so
/// each CPU's [`LbCpu`] (and so the group's sums) would be read the same again. Debug
/// builds recompute every kept entry and group and assert it is the same. Each CPU's
/// `cfs_tasks` order is computed on first use in a pass. It lives in the engine so that a
/// pass allocates nothing once warm; an order belongs to the pass whose stamp it carries,
/// so starting a pass ([`LbScratch::begin`]) clears nothing.
#[derive(Debug)]
pub(in crate::sim) struct LbScratch {
    /// The last pass stamp handed out (0 = none yet; orders stamped 0 are empty).
    last: Cell<u64>,
    /// Per CPU: how many times what [`Env::fill_cpu`] reads of it may have changed (moved
    /// by [`Sim::lb_cpu_changed`](crate::sim::Sim::lb_cpu_changed), [`Sim::rq_util_changed`](crate::sim::Sim::rq_util_changed) and `update_cpu_capacity()`
    /// when `rq->cpu_capacity` changes). Apart from the entries, so that the writers, far
    /// more frequent than the passes, index a plain vector of counts.
    pub(super) gen: Vec<Cell<u64>>,
    /// Per CPU: the [`LbScratch::gen`] its kept [`LbCpu`] was computed at ([`NO_GEN`]:
    /// none), and that [`LbCpu`]; as many as [`LbScratch::gen`].
    cpus: RefCell<Vec<(u64, LbCpu)>>,
    /// By `sched_group_capacity` index: a big group's sums and what they were gathered at.
    groups: RefCell<Vec<KeptGroup>>,
    order: RefCell<Vec<(u64, Vec<usize>)>>,
    /// The number of a [`CpuSet`]'s words that hold the machine's CPUs
    /// (`CpuSet::words(nr_cpus).len()`).
    nwords: usize,
}

/// The smallest group whose [`GroupSums`] [`LbScratch`] keeps. Checking a kept group reads
/// three counts per CPU instead of reading and summing the CPU (about 60 instructions when
/// its [`LbCpu`] is kept); the check pays only where whole groups often stay unchanged
/// between passes: on `periodic` (groups of 1 and 4 CPUs) keeping every group found 27 %
/// unchanged and cost 0.8 % more instructions, on `large` (groups of 8) it saved.
const KEEP_GROUP_WEIGHT: u32 = 8;

/// A group's [`GroupSums`] as [`LbScratch`] keeps them.
#[derive(Debug, Clone, Copy)]
struct KeptGroup {
    gen: u64,
    cpus: CpuSet,
    imbalance_pct: u64,
    sums: GroupSums,
}

impl LbScratch {
    /// Empty, for `nr_cpus` CPUs.
    pub(in crate::sim) fn new(nr_cpus: usize) -> LbScratch {
        LbScratch {
            last: Cell::new(0),
            gen: vec![Cell::new(0); nr_cpus],
            cpus: RefCell::new(vec![(NO_GEN, LbCpu::default()); nr_cpus]),
            groups: RefCell::new(Vec::new()),
            order: RefCell::new(vec![(0, Vec::new()); nr_cpus]),
            nwords: CpuSet::EMPTY.words(nr_cpus).len(),
        }
    }

    /// [`Sim::lb_cpu_changed`](crate::sim::Sim::lb_cpu_changed) of `cpu`, for a caller that holds other parts of the engine.
    #[inline(always)]
    pub(in crate::sim) fn cpu_changed(&mut self, cpu: usize) {
        *self.gen[cpu].get_mut() += 1;
    }

    /// `cpu`'s count in [`LbScratch::gen`]: equal at two reads, nothing that
    /// [`Sim::rq_util_changed`](crate::sim::Sim::rq_util_changed) or
    /// [`Sim::lb_cpu_changed`](crate::sim::Sim::lb_cpu_changed) covers changed on `cpu`
    /// between them.
    #[inline(always)]
    pub(in crate::sim) fn gen_of(&self, cpu: usize) -> u64 {
        self.gen[cpu].get()
    }

    /// A new pass: its stamp.
    pub(in crate::sim) fn begin(&self) -> u64 {
        let pass = self.last.get() + 1;
        self.last.set(pass);
        pass
    }
}

/// What `cpu_overutilized()` needs besides the rq (EAS on only).
#[derive(Clone, Copy)]
pub(in crate::sim) struct OuEnv<'a> {
    pub gate: OverutilizedGate,
    pub uclamp_used: bool,
    pub uclamp: &'a [UclampRq],
}

/// A fair task as the balancer reads it (not running; the caller sets `running`).
fn lb_task(
    ents: &[SchedEntity],
    threads: &[Thread],
    t: usize,
    util_est: bool,
    ue_ver: pelt::UtilEstVersion,
) -> LbTask {
    let e = &ents[t];
    LbTask {
        id: t,
        h_load: e.avg.load_avg,
        util_est: if util_est {
            pelt::task_util_est(&e.avg, ue_ver)
        } else {
            e.avg.util_avg
        },
        uclamp_min: threads[t].uclamp[0],
        uclamp_max: threads[t].uclamp[1],
        cpus_allowed: threads[t].affinity,
        running: false,
        exec_start: e.exec_start,
        next_buddy: false,
        idle_policy: threads[t].policy == crate::workload::SchedPolicy::Idle,
        sched_delayed: false,
    }
}

impl Env<'_> {
    /// Writes the [`LbCpu`] of `cpu` from the rq into `out` (in place: the kept entry; out
    /// of line: [`LbEnv::cpu`] mostly returns a kept entry, and that path stays small).
    #[inline(never)]
    fn fill_cpu(&self, cpu: usize, out: &mut LbCpu) {
        let rq = &self.rqs[cpu];
        // the stopper counts in nr_running while it is queued or running
        let stop = usize::from(rq.stop.is_some());
        let nr = rq.cfs.nr_running as usize + rq.rt.nr_running() + rq.dl.nr_running() + stop;
        let cap = rq_capacity(rq);
        let a = &rq.cfs.avg;
        let util_cfs = self.rq_util_cfs(rq);
        *out = LbCpu {
            idle: rq.curr.is_none() && nr == 0,
            nr_running: nr as u32,
            h_nr_running: rq.cfs.nr_running,
            load: a.load_avg,
            util_cfs,
            util_cfs_boost: util_cfs.max(a.runnable_avg).min(rq.cap),
            runnable: a.runnable_avg,
            cap,
            misfit_task_load: self.misfit[cpu],
            overutilized: self.ou.is_some_and(|o| {
                let c = crate::sim::energy::ou_cpu_of(rq, &o.uclamp[cpu], util_cfs, &cap);
                cpu_overutilized(&c, o.uclamp_used, o.gate)
            }),
            ttwu_pending: false,
            clock_task: self.now,
            active_balance: self.active[cpu],
        };
    }

    /// [`Env::current`] out of line, for [`LbEnv::with_cpu`]: its callers stay small (the
    /// walks inline [`Env::current`] instead).
    #[inline(never)]
    fn current_of<'s>(&self, cpu: usize, slot: &'s mut (u64, LbCpu)) -> &'s LbCpu {
        self.current(cpu, self.scratch.gen[cpu].get(), slot)
    }

    /// `slot`, the kept [`LbCpu`] of `cpu`, made current: filled again when `cpu` changed
    /// since (its generation `gen`, [`LbScratch::gen`]), and stamped with the pass's clock.
    #[inline(always)]
    fn current<'s>(&self, cpu: usize, gen: u64, slot: &'s mut (u64, LbCpu)) -> &'s LbCpu {
        let (kept, c) = slot;
        if *kept != gen {
            *kept = gen;
            self.fill_cpu(cpu, c);
        } else {
            c.clock_task = self.now;
            if cfg!(debug_assertions) {
                let mut fresh = LbCpu::default();
                self.fill_cpu(cpu, &mut fresh);
                debug_assert_eq!(*c, fresh, "kept LbCpu of CPU {cpu} is stale");
            }
        }
        c
    }

    /// `cpu_util_cfs()` of the CPU whose rq is `rq`: max(util_avg, util_est) capped at the
    /// CPU's capacity.
    #[inline(always)]
    fn rq_util_cfs(&self, rq: &Rq) -> u64 {
        let a = &rq.cfs.avg;
        let mut u = a.util_avg;
        if self.util_est {
            u = u.max(pelt::cfs_rq_util_est(a));
        }
        u.min(rq.cap)
    }

    /// `f` with the current [`LbCpu`] of each CPU in both `a` and `b`, in ascending order,
    /// over the words of the two masks that hold this machine's CPUs, from the borrowed
    /// entries `kept` and the counts `gens` (two slices of one length).
    #[inline(always)]
    fn walk(
        &self,
        kept: &mut [(u64, LbCpu)],
        gens: &[Cell<u64>],
        a: &CpuSet,
        b: &CpuSet,
        mut f: impl FnMut(&LbCpu),
    ) {
        debug_assert!(
            a.and(b).iter().all(|c| c < self.rqs.len()),
            "a CPU beyond the machine's"
        );
        for i in 0..self.scratch.nwords {
            let mut w = a.word(i) & b.word(i);
            while w != 0 {
                let cpu = i * 64 + w.trailing_zeros() as usize;
                w &= w - 1;
                f(self.current(cpu, gens[cpu].get(), &mut kept[cpu]));
            }
        }
    }

    /// The per-CPU loop of `update_sg_lb_stats()` over `set` ([`GroupSums::add_cpu`]),
    /// out of line: a big group's sums are mostly kept.
    #[inline(never)]
    fn walk_sums(
        &self,
        kept: &mut [(u64, LbCpu)],
        gens: &[Cell<u64>],
        set: &CpuSet,
        imbalance_pct: u64,
    ) -> GroupSums {
        let mut sums = GroupSums::default();
        self.walk(kept, gens, set, set, |rq| sums.add_cpu(rq, imbalance_pct));
        sums
    }

    /// A big group's sums over its CPUs in `cpus` (see [`LbEnv::sum_groups`]): the kept
    /// ones when the same CPUs' generations sum to what they did when they were gathered
    /// (no count decreases, so none of them moved), else walked and kept.
    #[inline(always)]
    fn kept_group_sums(
        &self,
        kept: &mut [(u64, LbCpu)],
        gens: &[Cell<u64>],
        group: &SchedGroup,
        cpus: &CpuSet,
        imbalance_pct: u64,
    ) -> GroupSums {
        let set = group.span.and(cpus);
        let n = self.rqs.len();
        let mut gen = 0u64;
        for (i, &w0) in set.words(n).iter().enumerate() {
            let mut w = w0;
            while w != 0 {
                gen = gen.wrapping_add(gens[i * 64 + w.trailing_zeros() as usize].get());
                w &= w - 1;
            }
        }
        let sgc = group.sgc;
        let mut groups = self.scratch.groups.borrow_mut();
        if let Some(k) = groups.get(sgc) {
            if k.gen == gen && k.imbalance_pct == imbalance_pct && k.cpus == set {
                if cfg!(debug_assertions) {
                    // each CPU computed apart: the entries are borrowed
                    let fresh = sum_group_cpus(self, &set, &set, imbalance_pct);
                    debug_assert_eq!(k.sums, fresh, "kept sums of group {sgc} are stale");
                }
                return k.sums;
            }
        }
        let sums = self.walk_sums(kept, gens, &set, imbalance_pct);
        if groups.len() <= sgc {
            let none = KeptGroup {
                gen: NO_GEN,
                cpus: CpuSet::EMPTY,
                imbalance_pct: 0,
                sums: GroupSums::default(),
            };
            groups.resize(sgc + 1, none);
        }
        groups[sgc] = KeptGroup {
            gen,
            cpus: set,
            imbalance_pct,
            sums,
        };
        sums
    }

    /// [`LbEnv::group_sums`] of a big group, out of line.
    #[inline(never)]
    fn big_group_sums(
        &self,
        group: &SchedGroup,
        cpus: &CpuSet,
        imbalance_pct: u64,
    ) -> Option<GroupSums> {
        let mut guard = self.scratch.cpus.try_borrow_mut().ok()?;
        let kept = &mut guard[..];
        let gens = &self.scratch.gen[..kept.len()];
        Some(self.kept_group_sums(kept, gens, group, cpus, imbalance_pct))
    }

    /// `cpu`'s `cfs_tasks` from the tail into `v` (the least recently enqueued or
    /// picked first).
    fn tasks_of(&self, cpu: usize, v: &mut Vec<usize>) {
        let rq = &self.rqs[cpu];
        v.clear();
        v.extend_from_slice(&rq.cfs.queue);
        if let Some(c) = rq.cfs.curr {
            if self.ents[c].on_rq && !v.contains(&c) {
                v.push(c);
            }
        }
        v.sort_by_key(|&t| (self.stamp[t], t));
    }
}

impl LbEnv for Env<'_> {
    fn cpu(&self, cpu: usize) -> LbCpu {
        self.with_cpu(cpu, |c| *c)
    }

    /// The kept [`LbCpu`] of `cpu`, read again when stale. A reader already holding the
    /// entries (a `with_cpu()` inside `f`) gets the value computed apart (the same value).
    fn with_cpu<R>(&self, cpu: usize, f: impl FnOnce(&LbCpu) -> R) -> R {
        if let Ok(mut cpus) = self.scratch.cpus.try_borrow_mut() {
            return f(self.current_of(cpu, &mut cpus[cpu]));
        }
        let mut c = LbCpu::default();
        self.fill_cpu(cpu, &mut c);
        f(&c)
    }

    /// The walk of [`LbEnv::with_cpu`] under one borrow of the entries.
    fn for_each_cpu(&self, cpus: &CpuSet, f: impl FnMut(&LbCpu)) {
        self.for_each_cpu_and(cpus, cpus, f);
    }

    /// The walk of [`LbEnv::with_cpu`] under one borrow of the entries, over the words of
    /// the two masks that hold this machine's CPUs (a set never holds a CPU beyond them:
    /// its entry would not exist).
    #[inline(always)]
    fn for_each_cpu_and(&self, a: &CpuSet, b: &CpuSet, f: impl FnMut(&LbCpu)) {
        let Ok(mut guard) = self.scratch.cpus.try_borrow_mut() else {
            let mut f = f;
            for cpu in a.and(b).iter() {
                self.with_cpu(cpu, &mut f);
            }
            return;
        };
        // the entries and the counts as two slices of one length, held in locals: one
        // bounds check serves both look-ups
        let kept = &mut guard[..];
        let gens = &self.scratch.gen[..kept.len()];
        self.walk(kept, gens, a, b, f);
    }

    /// A big group's kept [`GroupSums`] when none of its CPUs in `cpus` changed since they
    /// were gathered, else gathered again and kept ([`Env::kept_group_sums`]); a small
    /// group's are not kept (`None`), nor are any while the entries are borrowed.
    #[inline(always)]
    fn group_sums(
        &self,
        group: &SchedGroup,
        cpus: &CpuSet,
        imbalance_pct: u64,
    ) -> Option<GroupSums> {
        if group.group_weight < KEEP_GROUP_WEIGHT {
            return None;
        }
        self.big_group_sums(group, cpus, imbalance_pct)
    }

    /// The per-CPU loops of every group under one borrow of the entries: a small group's
    /// CPUs walked ([`Env::walk`]); a big group's sums kept while none of its CPUs in
    /// `cpus` changed since they were gathered (the same CPUs, `imbalance_pct` and
    /// generation sum; see [`LbScratch`]), else gathered again and kept.
    fn sum_groups(
        &self,
        groups: &[SchedGroup],
        cpus: &CpuSet,
        imbalance_pct: u64,
        out: &mut Vec<GroupSums>,
    ) {
        out.clear();
        let Ok(mut guard) = self.scratch.cpus.try_borrow_mut() else {
            // a reader holding the entries: each CPU computed apart (the same values)
            out.extend(
                groups
                    .iter()
                    .map(|g| sum_group_cpus(self, &g.span, cpus, imbalance_pct)),
            );
            return;
        };
        let kept = &mut guard[..];
        let gens = &self.scratch.gen[..kept.len()];
        for g in groups {
            let sums = if g.group_weight < KEEP_GROUP_WEIGHT {
                let mut s = GroupSums::default();
                self.walk(kept, gens, &g.span, cpus, |rq| s.add_cpu(rq, imbalance_pct));
                s
            } else {
                self.kept_group_sums(kept, gens, g, cpus, imbalance_pct)
            };
            out.push(sums);
        }
    }

    fn nr_cfs_tasks(&self, cpu: usize) -> usize {
        let mut o = self.scratch.order.borrow_mut();
        let (stamp, v) = &mut o[cpu];
        if *stamp != self.pass {
            *stamp = self.pass;
            self.tasks_of(cpu, v);
        }
        v.len()
    }

    fn cfs_task(&self, cpu: usize, i: usize) -> LbTask {
        self.nr_cfs_tasks(cpu);
        let o = self.scratch.order.borrow();
        let Some(&t) = o[cpu].1.get(i) else {
            return LbTask::default();
        };
        drop(o);
        // `task_on_cpu()` (`p->on_cpu`)
        let running = self.rqs[cpu].curr == Some(t) && self.ents[t].on_rq;
        LbTask {
            running,
            ..lb_task(self.ents, self.threads, t, self.util_est, self.ue_ver)
        }
    }

    /// `update_cpu_capacity()`: caches `scale_rt_capacity()` in the rq (read by every
    /// `capacity_of()` until the next update); a new value moves the CPU's
    /// [`LbScratch::gen`], so that its kept [`LbCpu`] is read again.
    fn update_cpu_capacity(&self, cpu: usize) -> u64 {
        let rq = &self.rqs[cpu];
        let c = crate::sim::rq_scale_rt_capacity(rq);
        if rq.cpu_capacity.get() != c {
            let g = &self.scratch.gen[cpu];
            g.set(g.get() + 1);
        }
        rq.cpu_capacity.set(c);
        rq.cpu_capacity_updated.set(true);
        c
    }

    /// The engine delivers wake-ups at once: no `rq->ttwu_pending` (as in
    /// [`Env::fill_cpu`]).
    fn ttwu_pending(&self, _cpu: usize) -> bool {
        false
    }

    /// Read from the rq's current task when asked; the idle task's taken as allowed on
    /// every CPU, as [`LbScratch`]'s set of all CPUs was before (a simplification: v6.11
    /// pins each idle task to its CPU, see [`LbEnv::curr_allows`]).
    fn curr_allows(&self, cpu: usize, dst: usize) -> bool {
        self.rqs[cpu]
            .curr
            .is_none_or(|c| self.threads[c].affinity.contains(dst))
    }
}

/// Builds an [`Env`] from the engine's fields (field by field, so that the balancer's own
/// state can be borrowed mutably beside it).
macro_rules! lb_env {
    ($s:expr, $now:expr) => {
        Env {
            rqs: &$s.rqs,
            threads: &$s.threads,
            ents: &$s.ents,
            misfit: &$s.misfit,
            active: &$s.active_balance,
            stamp: &$s.cfs_stamp,
            now: $now,
            util_est: $s.s.options.pelt.util_est,
            ue_ver: $s.ue_ver,
            scratch: &$s.lb_scratch,
            pass: $s.lb_scratch.begin(),
            ou: $s.en.eas.then_some(OuEnv {
                gate: $s.en.gate,
                uclamp_used: $s.en.uclamp_used,
                uclamp: &$s.en.uclamp,
            }),
        }
    };
}
