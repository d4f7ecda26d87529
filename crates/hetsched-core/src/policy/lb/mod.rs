//! The kernel's CFS load balancer as pure decision logic (kernel/sched/fair.c, v6.11; the
//! v5.9 behaviour of the fairness series, and the v4.20 balancer from before the v5.5
//! `load_balance()` rework, behind [`LbVersion`]).
//!
//! v4.20 ([`LbVersion::V4_20`]) is modelled as version branches of the same functions:
//! group statistics with `avg_load`, `load_per_task` and `group_no_capacity`, the
//! `group_other`/`group_misfit_task`/`group_imbalanced`/`group_overloaded` types, the
//! v4.20 `find_busiest_group()` decision, `calculate_imbalance()` with
//! `fix_small_imbalance()`, `find_busiest_queue()` on `weighted_cpuload() / capacity`
//! (or the biggest misfit load), and `need_active_balance()`. Migration is always
//! `migrate_load` (`detach_tasks()`: skip when `load/2 > imbalance`); a misfit group is
//! remembered as `env->src_grp_type`. Not modelled: the decayed `cpu_load[]` indexes
//! (load index 0 on `load_avg` instead), `LBF_NOHZ_STATS`, v4.20's newidle entry test
//! (`avg_idle < sysctl_sched_migration_cost`), its `should_we_balance()` (newidle always
//! balances) and its `update_misfit_status()` (no pinned/`max_allowed_capacity` tests).
//!
//! The engine implements [`LbEnv`], a read-only view of what the kernel reads per CPU and
//! per queued fair task, keeps the [`SchedDomains`] (whose per-domain balance state this
//! module updates) and calls [`LoadBalancer::sched_balance_rq`] for periodic, newidle and
//! nohz idle balance. The answer is an [`LbDecision`]: tasks to move
//! ([`LoadBalancer::moves`]) or an active-balance request, plus root-domain flag updates.
//! [`LoadBalancer`] owns scratch buffers so a balance pass allocates nothing once warm.
//!
//! Module map: [`stats`] (group statistics and classification, busiest group),
//! [`imbalance`] (`calculate_imbalance`, `sched_balance_find_src_group`,
//! `sched_balance_find_src_rq`), [`detach`] (`can_migrate_task`, `detach_tasks`,
//! active balance), [`misfit`] (`update_misfit_status`, the nohz kick, newidle gating),
//! and this file (`sched_balance_rq`, `should_we_balance`, `need_active_balance`,
//! balance intervals).

pub mod detach;
pub mod imbalance;
pub mod misfit;
pub mod stats;

use std::collections::VecDeque;

use super::{Migration, MigrationReason};
use crate::sched::capacity::CpuCapacity;
use crate::sched::topology::{msecs_to_jiffies, LbVersion, SchedDomain, SchedDomains, SchedGroup};
use crate::sched::CpuSet;

/// `enum cpu_idle_type` (v6.10+ order: `__CPU_NOT_IDLE`, `CPU_IDLE`, `CPU_NEWLY_IDLE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CpuIdleType {
    /// `__CPU_NOT_IDLE`: the balancing CPU is busy.
    NotIdle,
    /// `CPU_IDLE`: periodic balance on an idle CPU or nohz idle balance on its behalf.
    Idle,
    /// `CPU_NEWLY_IDLE`: the CPU is about to go idle.
    NewlyIdle,
}

impl CpuIdleType {
    /// `env->idle` tested as a boolean (`!= __CPU_NOT_IDLE`).
    pub fn is_idle(self) -> bool {
        self != CpuIdleType::NotIdle
    }
}

/// `enum group_type`, ordered by pulling priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum GroupType {
    /// `group_has_spare`.
    #[default]
    HasSpare,
    /// `group_fully_busy`.
    FullyBusy,
    /// `group_misfit_task`.
    MisfitTask,
    /// `group_smt_balance` (never produced without SMT).
    SmtBalance,
    /// `group_asym_packing` (never produced without `SD_ASYM_PACKING`).
    AsymPacking,
    /// `group_imbalanced`.
    Imbalanced,
    /// `group_overloaded`.
    Overloaded,
}

/// `enum migration_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MigrationType {
    /// `migrate_load` (the zero value of a fresh `lb_env`).
    #[default]
    Load,
    /// `migrate_util`.
    Util,
    /// `migrate_task`.
    Task,
    /// `migrate_misfit`.
    Misfit,
}

/// `LBF_ALL_PINNED`.
pub const LBF_ALL_PINNED: u32 = 0x01;
/// `LBF_NEED_BREAK`.
pub const LBF_NEED_BREAK: u32 = 0x02;
/// `LBF_DST_PINNED`.
pub const LBF_DST_PINNED: u32 = 0x04;
/// `LBF_SOME_PINNED`.
pub const LBF_SOME_PINNED: u32 = 0x08;
/// `LBF_ACTIVE_LB`.
pub const LBF_ACTIVE_LB: u32 = 0x10;
/// `MAX_PINNED_INTERVAL` (ms).
pub const MAX_PINNED_INTERVAL: u64 = 512;
/// `SCHED_NR_MIGRATE_BREAK` = default `sysctl_sched_nr_migrate` (non-PREEMPT_RT).
pub const SCHED_NR_MIGRATE_BREAK: u32 = 32;

/// What the balancer reads of one CPU (the engine fills it from its runqueue).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LbCpu {
    /// `idle_cpu(cpu)`: the idle task is current, nothing queued, no wake-up pending.
    pub idle: bool,
    /// `rq->nr_running` (all classes; includes the stopper while it runs).
    pub nr_running: u32,
    /// `rq->cfs.h_nr_running` (called `h_nr_runnable` since v6.14).
    pub h_nr_running: u32,
    /// `cpu_load(rq)`: the root cfs_rq `load_avg`.
    pub load: u64,
    /// `cpu_util_cfs(cpu)`.
    pub util_cfs: u64,
    /// `cpu_util_cfs_boost(cpu)`.
    pub util_cfs_boost: u64,
    /// `cpu_runnable(rq)`: the root cfs_rq `runnable_avg`.
    pub runnable: u64,
    /// `capacity_of`, `arch_scale_cpu_capacity` and `get_actual_cpu_capacity`.
    pub cap: CpuCapacity,
    /// `rq->misfit_task_load` (see [`misfit::update_misfit_status`]).
    pub misfit_task_load: u64,
    /// `cpu_overutilized(cpu)`.
    pub overutilized: bool,
    /// `rq->ttwu_pending`.
    pub ttwu_pending: bool,
    /// `rq_clock_task(rq)` in ns (cache-hotness reference).
    pub clock_task: u64,
    /// `rq->active_balance`: a stopper push is already pending on this CPU.
    pub active_balance: bool,
}

/// What the balancer reads of one queued fair task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LbTask {
    /// Task index (reported back in [`Migration::task`]).
    pub id: usize,
    /// `task_h_load(p)` (= `se.avg.load_avg` without task groups).
    pub h_load: u64,
    /// `task_util_est(p)`.
    pub util_est: u64,
    /// Effective `uclamp_min`.
    pub uclamp_min: u64,
    /// Effective `uclamp_max`.
    pub uclamp_max: u64,
    /// `p->cpus_ptr`.
    pub cpus_allowed: CpuSet,
    /// `task_on_cpu(rq, p)`: currently running.
    pub running: bool,
    /// `p->se.exec_start` in ns.
    pub exec_start: u64,
    /// `cfs_rq->next == &p->se` (the next buddy is cache hot).
    pub next_buddy: bool,
    /// `task_has_idle_policy(p)` (SCHED_IDLE is never cache hot).
    pub idle_policy: bool,
    /// `p->se.sched_delayed` (DELAY_DEQUEUE, v6.12+; always false on v6.11).
    pub sched_delayed: bool,
}

/// The engine's read-only view for one balance pass.
pub trait LbEnv {
    /// The state of `cpu`.
    fn cpu(&self, cpu: usize) -> LbCpu;
    /// Number of tasks on `cpu`'s `cfs_tasks` list (running one included).
    fn nr_cfs_tasks(&self, cpu: usize) -> usize;
    /// The `i`-th task of `cpu`'s `cfs_tasks` counted from the **tail** (i = 0 is the
    /// least recently picked task, the first one `detach_tasks()` examines).
    fn cfs_task(&self, cpu: usize, i: usize) -> LbTask;
    /// Calls `f` with the state of `cpu` (what [`LbEnv::cpu`] returns), for a reader of a
    /// few fields on a hot path; an engine that memoises the state lends it uncopied.
    fn with_cpu<R>(&self, cpu: usize, f: impl FnOnce(&LbCpu) -> R) -> R {
        f(&self.cpu(cpu))
    }
    /// Calls `f` with the state of each CPU of `cpus` in ascending order, as
    /// [`LbEnv::with_cpu`] would one by one (a `for_each_cpu()` walk); an engine that
    /// memoises the states holds its memo once for the whole walk.
    fn for_each_cpu(&self, cpus: &CpuSet, mut f: impl FnMut(&LbCpu)) {
        for cpu in cpus.iter() {
            self.with_cpu(cpu, &mut f);
        }
    }
    /// [`LbEnv::for_each_cpu`] over the CPUs in both `a` and `b` (the `for_each_cpu_and()`
    /// walk of `update_sg_lb_stats()`), for an engine that walks the two masks without
    /// building their intersection.
    fn for_each_cpu_and(&self, a: &CpuSet, b: &CpuSet, f: impl FnMut(&LbCpu)) {
        self.for_each_cpu(&a.and(b), f);
    }
    /// What the per-CPU loop of `update_sg_lb_stats()` (kernel/sched/fair.c, v6.11)
    /// gathers over the CPUs of `group` in `cpus` (`env->cpus`) with the domain's
    /// `imbalance_pct` ([`stats::sum_group_cpus`]), from an engine that keeps a group's
    /// sums while none of its CPUs changes; `None` (the default): the loop runs.
    fn group_sums(
        &self,
        group: &SchedGroup,
        cpus: &CpuSet,
        imbalance_pct: u64,
    ) -> Option<stats::GroupSums> {
        let _ = (group, cpus, imbalance_pct);
        None
    }
    /// The per-CPU loop of `update_sg_lb_stats()` (v6.11) for each group of `groups` (a
    /// domain's, in order) over its CPUs in `cpus`, one entry per group into `out`
    /// (cleared first): what [`LbEnv::group_sums`], else [`stats::sum_group_cpus`], gives
    /// for each. `update_sd_lb_stats()` runs the loop group by group inside
    /// `update_sg_lb_stats()`; no group's loop reads what another writes, so the loops
    /// may all run first (see `stats::update_sd_lb_stats`). An engine that memoises the
    /// CPUs' states holds its memo once for the domain.
    fn sum_groups(
        &self,
        groups: &[SchedGroup],
        cpus: &CpuSet,
        imbalance_pct: u64,
        out: &mut Vec<stats::GroupSums>,
    ) {
        out.clear();
        out.extend(groups.iter().map(|g| {
            self.group_sums(g, cpus, imbalance_pct)
                .unwrap_or_else(|| stats::sum_group_cpus(self, &g.span, cpus, imbalance_pct))
        }));
    }
    /// `update_cpu_capacity()` (kernel/sched/fair.c, v6.11) of `cpu`, from
    /// `update_group_capacity()` of its base domain: `scale_rt_capacity(cpu)`, at least one,
    /// becomes `rq->cpu_capacity`, what [`LbEnv::cpu`]'s `cap.capacity` (`capacity_of()`)
    /// returns from then on; returns it. An engine whose `capacity_of()` is always current
    /// (a snapshot) returns that.
    fn update_cpu_capacity(&self, cpu: usize) -> u64 {
        self.cpu(cpu).cap.capacity
    }
    /// `rq->ttwu_pending` of `cpu` alone (the first test of `sched_balance_newidle()`);
    /// an engine that can answer it without building the whole [`LbCpu`] overrides it.
    fn ttwu_pending(&self, cpu: usize) -> bool {
        self.cpu(cpu).ttwu_pending
    }
    /// `cpumask_test_cpu(dst, busiest->curr->cpus_ptr)`: whether the task running on `cpu`
    /// may run on `dst`. With the idle task running the engine answers yes for every CPU,
    /// a simplification: v6.11's `init_idle()` pins each idle task to its own CPU, so
    /// there the test fails (the case needs a busiest CPU with tasks queued that has not
    /// switched to one yet when another CPU reaches this test). `sched_balance_rq()` reads it
    /// only before it kicks an active balance, so it is not a field of [`LbCpu`], which
    /// the walks copy and keep.
    fn curr_allows(&self, cpu: usize, dst: usize) -> bool;
}

/// A simple owned [`LbEnv`]: per-CPU state and per-CPU task lists (tail first).
#[derive(Debug, Clone, Default)]
pub struct LbSnapshot {
    /// Per CPU.
    pub cpus: Vec<LbCpu>,
    /// Per CPU, `cfs_tasks` from the tail.
    pub tasks: Vec<Vec<LbTask>>,
}

impl LbEnv for LbSnapshot {
    fn cpu(&self, cpu: usize) -> LbCpu {
        self.cpus.get(cpu).copied().unwrap_or_default()
    }
    fn nr_cfs_tasks(&self, cpu: usize) -> usize {
        self.tasks.get(cpu).map_or(0, Vec::len)
    }
    fn cfs_task(&self, cpu: usize, i: usize) -> LbTask {
        self.tasks
            .get(cpu)
            .and_then(|t| t.get(i))
            .copied()
            .unwrap_or_default()
    }
    /// The running task's `cpus_allowed` (the task of `tasks` marked running); none
    /// running: every CPU (the engine's simplification, see [`LbEnv::curr_allows`]).
    fn curr_allows(&self, cpu: usize, dst: usize) -> bool {
        self.tasks
            .get(cpu)
            .and_then(|t| t.iter().find(|t| t.running))
            .is_none_or(|t| t.cpus_allowed.contains(dst))
    }
}

/// Root-domain state read by the balancer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RootDomainState {
    /// `rd->overloaded` (`get_rd_overloaded()`).
    pub overloaded: bool,
    /// `rd->overutilized`.
    pub overutilized: bool,
    /// EAS is active: `rd->pd` is set (an energy model, schedutil, asymmetric capacity).
    pub eas: bool,
}

impl RootDomainState {
    /// `is_rd_overutilized(rd)` = `!sched_energy_enabled() || rd->overutilized`.
    pub fn is_overutilized(&self) -> bool {
        !self.eas || self.overutilized
    }
}

/// Balancer parameters resolved from the options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LbParams {
    /// Before or after the v5.10 fairness series (`balance.version`).
    pub version: LbVersion,
    /// Misfit handling (`balance.misfit`): status, `group_misfit_task`, kick, active balance.
    pub misfit: bool,
    /// `HZ`.
    pub hz: u64,
    /// `max_load_balance_interval` in jiffies (`HZ × nr_online_cpus / 10`).
    pub max_load_balance_interval: u64,
    /// `sysctl_sched_nr_migrate` (32).
    pub nr_migrate: u32,
    /// `sysctl_sched_migration_cost` in ns (500 000).
    pub migration_cost: u64,
    /// `uclamp_is_used()`.
    pub uclamp_is_used: bool,
    /// `CONFIG_PREEMPTION`: newidle balance stops after the first detached task.
    pub preemption: bool,
    /// `sched_feat(LB_MIN)` (default off).
    pub lb_min: bool,
    /// `sched_feat(CACHE_HOT_BUDDY)` (default on).
    pub cache_hot_buddy: bool,
    /// `sched_feat(SIS_UTIL)` (`fair.sis_util`, default on): the LLC's stats pass writes
    /// `nr_idle_scan`.
    pub sis_util: bool,
}

impl LbParams {
    /// The defaults of `version` for a machine with `nr_cpus` CPUs at `hz`.
    pub fn new(version: LbVersion, misfit: bool, hz: u64, nr_cpus: usize) -> LbParams {
        LbParams {
            version,
            misfit,
            hz,
            max_load_balance_interval: (hz * nr_cpus as u64 / 10).max(1),
            nr_migrate: SCHED_NR_MIGRATE_BREAK,
            migration_cost: crate::sched::SYSCTL_SCHED_MIGRATION_COST,
            uclamp_is_used: false,
            preemption: true,
            lb_min: false,
            cache_hot_buddy: true,
            sis_util: true,
        }
    }
}

/// [`get_sd_balance_interval`] of `sd` with the run's parameters `p`, kept in the
/// domain's [`IntervalMemo`](crate::sched::topology::IntervalMemo) while its
/// `balance_interval` stays the same: the function's other inputs (`busy_factor`, `HZ`,
/// the version, `max_load_balance_interval`) are fixed for a run, and every caller passes
/// the run's `p`. Debug builds recompute a kept interval and assert it is the same.
#[inline(always)]
pub fn sd_balance_interval(sd: &mut SchedDomain, cpu_busy: bool, p: &LbParams) -> u64 {
    if let Some(v) = sd.interval_memo.get(cpu_busy, sd.balance_interval) {
        debug_assert_eq!(
            v,
            get_sd_balance_interval(sd.balance_interval, sd.busy_factor, cpu_busy, p),
            "kept balance interval is stale"
        );
        return v;
    }
    sd_balance_interval_miss(sd, cpu_busy, p)
}

/// [`sd_balance_interval`] when the memo does not hold the interval: computes and keeps it.
#[cold]
#[inline(never)]
fn sd_balance_interval_miss(sd: &mut SchedDomain, cpu_busy: bool, p: &LbParams) -> u64 {
    let v = get_sd_balance_interval(sd.balance_interval, sd.busy_factor, cpu_busy, p);
    sd.interval_memo.set(cpu_busy, sd.balance_interval, v);
    v
}

/// `get_sd_balance_interval(sd, cpu_busy)` (kernel/sched/fair.c, v6.11): the interval in
/// jiffies, `balance_interval × busy_factor` when busy, minus one jiffy when busy
/// (v5.10+), clamped to `[1, max_load_balance_interval]`.
pub fn get_sd_balance_interval(
    balance_interval_ms: u64,
    busy_factor: u64,
    cpu_busy: bool,
    p: &LbParams,
) -> u64 {
    let mut ms = balance_interval_ms;
    if cpu_busy {
        ms *= busy_factor;
    }
    let mut interval = msecs_to_jiffies(ms, p.hz);
    if cpu_busy && p.version >= LbVersion::V5_10 {
        interval = interval.saturating_sub(1);
    }
    interval.clamp(1, p.max_load_balance_interval.max(1))
}

/// What one `sched_balance_rq()` pass ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LbOutcome {
    /// `should_we_balance()` said another CPU balances this domain.
    NotBalancer,
    /// No busiest group (or a zero imbalance).
    NoBusyGroup,
    /// A busiest group but no busiest runqueue.
    NoBusyQueue,
    /// Tasks were detached (see [`LoadBalancer::moves`]).
    Moved,
    /// Imbalance found but nothing moved (possibly an active balance).
    Failed,
    /// Every task of every candidate runqueue was pinned.
    AllPinned,
    /// Active balance was needed but the source's current task cannot run here.
    OnePinned,
}

/// A request to push the running task of `src` to `dst` through the stopper
/// (`stop_one_cpu_nowait(active_load_balance_cpu_stop)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActiveBalance {
    /// The busiest CPU (the stopper runs there).
    pub src: usize,
    /// `push_cpu`.
    pub dst: usize,
    /// `Misfit` for `migrate_misfit`, else `Active`.
    pub reason: MigrationReason,
}

/// The result of one `sched_balance_rq()` pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LbDecision {
    /// How it ended.
    pub outcome: LbOutcome,
    /// `ld_moved`: number of tasks in [`LoadBalancer::moves`].
    pub moved: usize,
    /// An active balance to start (the engine sets `rq->active_balance` on `src`).
    pub active: Option<ActiveBalance>,
    /// `env.migration_type` at the end.
    pub migration_type: MigrationType,
    /// The imbalance computed by `calculate_imbalance()` (before detaching).
    pub imbalance: i64,
    /// The busiest runqueue, when one was found.
    pub busiest: Option<usize>,
    /// `*continue_balancing` (false when this CPU is not the domain's balancer).
    pub continue_balancing: bool,
    /// `set_rd_overloaded()` value when balancing at the root domain.
    pub rd_overloaded: Option<bool>,
    /// `set_rd_overutilized()` value (root: set or clear; lower levels: only set).
    pub rd_overutilized: Option<bool>,
}

/// `struct lb_env`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Env {
    /// The balancing CPU, whose domain `env->sd` is.
    pub this_cpu: usize,
    pub level: usize,
    pub src_cpu: usize,
    pub dst_cpu: usize,
    pub dst_grpmask: CpuSet,
    pub new_dst_cpu: usize,
    pub idle: CpuIdleType,
    pub imbalance: i64,
    pub cpus: CpuSet,
    pub flags: u32,
    pub loop_: u32,
    pub loop_break: u32,
    pub loop_max: u32,
    pub migration_type: MigrationType,
    /// v4.20 `env->src_grp_type`: the busiest group's type (misfit handling).
    pub src_grp_type: GroupType,
}

/// The load balancer with its reusable scratch buffers.
#[derive(Debug, Default)]
pub struct LoadBalancer {
    /// The busiest runqueue's `cfs_tasks`, tail first, as `detach_tasks()` leaves it.
    pub(crate) list: VecDeque<LbTask>,
    pub(crate) moves: Vec<Migration>,
    /// Where each `detach_tasks()` call's tasks end in `moves` (see
    /// [`LoadBalancer::batch_ends`]).
    pub(crate) batch_ends: Vec<usize>,
    pub(crate) src_list_cpu: Option<usize>,
    /// The active balances requested by the domains of the current newidle pass, bottom-up
    /// (`sched_balance_newidle()` calls `sched_balance_rq()` per domain, and each starts
    /// its stopper at once): a later domain sees these sources as `busiest->active_balance`.
    pub(crate) newidle_active: Vec<ActiveBalance>,
    /// `CpuSet::first_n(n)` for the last `n` seen (the online CPUs a pass starts from).
    all_cpus: (usize, CpuSet),
    /// The per-CPU sums of a domain's groups ([`LbEnv::sum_groups`]) for the pass's
    /// `update_sd_lb_stats()`: kept so that a pass allocates nothing once warm.
    group_sums: Vec<stats::GroupSums>,
}

impl LoadBalancer {
    /// An empty balancer.
    pub fn new() -> LoadBalancer {
        LoadBalancer::default()
    }

    /// The tasks detached by the last pass (task, src, dst, reason), in detach order.
    pub fn moves(&self) -> &[Migration] {
        &self.moves
    }

    /// The end in [`LoadBalancer::moves`] of each `detach_tasks()` call of the last pass
    /// that detached something (a `LBF_NEED_BREAK` or `LBF_DST_PINNED` round starts a new
    /// one). `sched_balance_rq()` (kernel/sched/fair.c, v6.11) runs `attach_tasks()` after
    /// each such call: `detach_tasks()` `list_add()`s every task at the head of
    /// `env->tasks` and `attach_tasks()` takes them from the head, so a batch is attached
    /// in the reverse of its detach order.
    pub fn batch_ends(&self) -> &[usize] {
        &self.batch_ends
    }

    /// The last pass's [`LoadBalancer::moves`] and [`LoadBalancer::batch_ends`], taken out
    /// for an engine that applies them while it may run another pass; it gives them back
    /// with [`LoadBalancer::restore_moves`], so that their buffers are reused.
    pub fn take_moves(&mut self) -> (Vec<Migration>, Vec<usize>) {
        (
            std::mem::take(&mut self.moves),
            std::mem::take(&mut self.batch_ends),
        )
    }

    /// Puts back what [`LoadBalancer::take_moves`] took, unless a pass ran in between
    /// (its own moves stay the last pass's).
    pub fn restore_moves(&mut self, moves: Vec<Migration>, batch_ends: Vec<usize>) {
        if self.moves.capacity() == 0 && self.batch_ends.capacity() == 0 {
            self.moves = moves;
            self.batch_ends = batch_ends;
        }
    }

    /// No task detached.
    fn clear_moves(&mut self) {
        self.moves.clear();
        self.batch_ends.clear();
    }

    /// No pass yet: no move, no busiest runqueue. Every pass starts here, and so do
    /// the library's whole newidle entry point ([`LoadBalancer::sched_balance_newidle`])
    /// on each of its exits; the engine's split form stopped at the gate
    /// ([`misfit::newidle_gate_stop`]) leaves the last pass's moves and lists in place,
    /// since the engine reads them only right after a pass.
    fn forget_last_pass(&mut self) {
        self.clear_moves();
        self.list.clear();
        self.src_list_cpu = None;
    }

    /// The active balances a newidle pass requested at domains below the last one it
    /// balanced, bottom-up: `sched_balance_rq()` (kernel/sched/fair.c, v6.11) starts each
    /// one's stopper (`stop_one_cpu_nowait()`) before `sched_balance_newidle()` tries the
    /// next domain, so a higher domain's pass does not cancel them. The last domain's
    /// request is its [`LbDecision::active`]. Taken, so that no later pass sees them.
    pub fn take_superseded_active(&mut self) -> Vec<ActiveBalance> {
        std::mem::take(&mut self.newidle_active)
    }

    /// No superseded request is waiting (the usual case: nothing to take).
    pub fn superseded_active_is_empty(&self) -> bool {
        self.newidle_active.is_empty()
    }

    /// The busiest runqueue of the last pass and its remaining `cfs_tasks` ids in the
    /// order `detach_tasks()` left them (tail first): skipped tasks are moved to the head
    /// (`list_move()`), so an engine that keeps the kernel's list order can mirror it.
    pub fn src_cfs_order(&self) -> Option<(usize, impl Iterator<Item = usize> + '_)> {
        self.src_list_cpu
            .map(|cpu| (cpu, self.list.iter().map(|t| t.id)))
    }

    /// `sched_balance_rq(this_cpu, this_rq, sd, idle, &continue_balancing)`
    /// (kernel/sched/fair.c, v6.11; `load_balance()` before v6.10) for `this_cpu`'s domain
    /// at `level`. Updates the domain's `nr_balance_failed` and `balance_interval`, the
    /// shared `sgc->imbalance` flags and group capacities; moves are tagged `reason`
    /// (`Periodic`, `Newidle` or `NohzIdle`, as the caller ran it).
    ///
    /// Simplified: no `SD_SERIALIZE` (NUMA only), no NUMA `fbq_type`, no asym packing, no
    /// SMT; `LBF_NEED_BREAK` re-entry is modelled but its lock release is not.
    #[allow(clippy::too_many_arguments)]
    pub fn sched_balance_rq(
        &mut self,
        env: &impl LbEnv,
        doms: &mut SchedDomains,
        rd: &RootDomainState,
        p: &LbParams,
        this_cpu: usize,
        level: usize,
        idle: CpuIdleType,
        jiffies: u64,
        reason: MigrationReason,
    ) -> LbDecision {
        self.forget_last_pass();
        let mut dec = LbDecision {
            outcome: LbOutcome::NoBusyGroup,
            moved: 0,
            active: None,
            migration_type: MigrationType::Load,
            imbalance: 0,
            busiest: None,
            continue_balancing: true,
            rd_overloaded: None,
            rd_overutilized: None,
        };
        let Some(sd) = doms.domains(this_cpu).get(level) else {
            return dec;
        };
        let has_parent = level + 1 < doms.domains(this_cpu).len();
        let n = doms.nr_cpus();
        if self.all_cpus.0 != n {
            self.all_cpus = (n, CpuSet::first_n(n));
        }
        let all = self.all_cpus.1;
        let mut e = Env {
            this_cpu,
            level,
            src_cpu: this_cpu,
            dst_cpu: this_cpu,
            dst_grpmask: sd.groups[0].balance_mask,
            new_dst_cpu: this_cpu,
            idle,
            imbalance: 0,
            cpus: sd.span.and(&all),
            flags: 0,
            loop_: 0,
            loop_break: SCHED_NR_MIGRATE_BREAK,
            loop_max: 0,
            migration_type: MigrationType::Load,
            src_grp_type: GroupType::HasSpare,
        };
        let mut ld_moved = 0usize;
        let mut active_balance = false;
        let mut busiest;

        // redo:
        'redo: loop {
            if !should_we_balance(env, doms, &e) {
                dec.continue_balancing = false;
                dec.outcome = LbOutcome::NotBalancer;
                return self.out_balanced(doms, p, &e, this_cpu, level, has_parent, dec);
            }
            let found = imbalance::sched_balance_find_src_group(
                env,
                doms,
                rd,
                p,
                &mut e,
                jiffies,
                &mut dec,
                &mut self.group_sums,
            );
            let Some(group) = found else {
                dec.outcome = LbOutcome::NoBusyGroup;
                return self.out_balanced(doms, p, &e, this_cpu, level, has_parent, dec);
            };
            dec.imbalance = e.imbalance;
            let Some(b) = imbalance::sched_balance_find_src_rq(env, doms, p, &e, group) else {
                dec.outcome = LbOutcome::NoBusyQueue;
                return self.out_balanced(doms, p, &e, this_cpu, level, has_parent, dec);
            };
            busiest = b;
            dec.busiest = Some(b);
            e.src_cpu = b;
            e.flags |= LBF_ALL_PINNED;
            let b_nr_running = env.with_cpu(b, |c| c.nr_running);
            if b_nr_running > 1 {
                e.loop_max = p.nr_migrate.min(b_nr_running);
                self.load_src_list(env, b);
                let mut src_nr_running = b_nr_running;
                // more_balance:
                loop {
                    let cur = detach::detach_tasks(
                        self,
                        env,
                        doms,
                        p,
                        &mut e,
                        &mut src_nr_running,
                        reason,
                    );
                    if cur > 0 {
                        // attach_tasks()
                        self.batch_ends.push(self.moves.len());
                    }
                    ld_moved += cur;
                    if e.flags & LBF_NEED_BREAK != 0 {
                        e.flags &= !LBF_NEED_BREAK;
                        continue;
                    }
                    if e.flags & LBF_DST_PINNED != 0 && e.imbalance > 0 {
                        // Revisit affine tasks with an alternate dst_cpu of our group.
                        e.cpus.clear(e.dst_cpu);
                        e.dst_cpu = e.new_dst_cpu;
                        e.flags &= !LBF_DST_PINNED;
                        e.loop_ = 0;
                        e.loop_break = SCHED_NR_MIGRATE_BREAK;
                        continue;
                    }
                    break;
                }
                // We failed to reach balance because of affinity.
                if has_parent && e.flags & LBF_SOME_PINNED != 0 && e.imbalance > 0 {
                    let sgc = doms.cpus[this_cpu][level + 1].groups[0].sgc;
                    doms.sgc[sgc].imbalance = true;
                }
                // All tasks on this runqueue were pinned by CPU affinity.
                if e.flags & LBF_ALL_PINNED != 0 {
                    e.cpus.clear(b);
                    if !e.cpus.is_subset(&e.dst_grpmask) {
                        e.loop_ = 0;
                        e.loop_break = SCHED_NR_MIGRATE_BREAK;
                        continue 'redo;
                    }
                    dec.outcome = LbOutcome::AllPinned;
                    return self.out_all_pinned(doms, p, &e, this_cpu, level, dec);
                }
            }
            break;
        }

        let legacy = p.version == LbVersion::V4_20;
        let sd = &mut doms.cpus[this_cpu][level];
        if ld_moved == 0 {
            dec.outcome = LbOutcome::Failed;
            if idle != CpuIdleType::NewlyIdle && e.migration_type != MigrationType::Misfit {
                sd.nr_balance_failed += 1;
            }
            if need_active_balance(env, doms, p, &e) {
                if !env.curr_allows(busiest, this_cpu) {
                    dec.outcome = LbOutcome::OnePinned;
                    if legacy {
                        // v4.20 reports the pinned current task as all pinned.
                        e.flags |= LBF_ALL_PINNED;
                    }
                    return self.out_one_pinned(doms, p, &e, this_cpu, level, dec);
                }
                e.flags &= !LBF_ALL_PINNED;
                // a lower domain of this newidle pass may have set busiest->active_balance
                let pending = self.newidle_active.iter().any(|a| a.src == busiest);
                if !env.with_cpu(busiest, |c| c.active_balance) && !pending {
                    active_balance = true;
                    let misfit = e.migration_type == MigrationType::Misfit
                        || (legacy && e.src_grp_type == GroupType::MisfitTask);
                    dec.active = Some(ActiveBalance {
                        src: busiest,
                        dst: this_cpu,
                        reason: if misfit {
                            MigrationReason::Misfit
                        } else {
                            MigrationReason::Active
                        },
                    });
                }
                if legacy {
                    // We've kicked active balancing, force task migration.
                    let sd = &mut doms.cpus[this_cpu][level];
                    sd.nr_balance_failed = sd.cache_nice_tries + 1;
                }
            }
        } else {
            dec.outcome = LbOutcome::Moved;
            sd.nr_balance_failed = 0;
        }
        if legacy {
            // v4.20: reset the interval unless an active balance began, which backs off.
            let sd = &mut doms.cpus[this_cpu][level];
            if !active_balance {
                sd.balance_interval = sd.min_interval;
            } else if sd.balance_interval < sd.max_interval {
                sd.balance_interval *= 2;
            }
        } else if !active_balance || need_active_balance(env, doms, p, &e) {
            // We were unbalanced, so reset the balancing interval.
            let sd = &mut doms.cpus[this_cpu][level];
            sd.balance_interval = sd.min_interval;
        }
        dec.moved = ld_moved;
        dec.migration_type = e.migration_type;
        dec
    }

    fn load_src_list(&mut self, env: &impl LbEnv, cpu: usize) {
        self.list.clear();
        for i in 0..env.nr_cfs_tasks(cpu) {
            self.list.push_back(env.cfs_task(cpu, i));
        }
        self.src_list_cpu = Some(cpu);
    }

    #[allow(clippy::too_many_arguments)]
    fn out_balanced(
        &mut self,
        doms: &mut SchedDomains,
        p: &LbParams,
        e: &Env,
        this_cpu: usize,
        level: usize,
        has_parent: bool,
        dec: LbDecision,
    ) -> LbDecision {
        // We reach balance although we may have faced some affinity constraints. Clear
        // the imbalance flag only if other tasks got a chance to move (v4.20: always).
        if has_parent && (e.flags & LBF_ALL_PINNED == 0 || p.version == LbVersion::V4_20) {
            let sgc = doms.cpus[this_cpu][level + 1].groups[0].sgc;
            doms.sgc[sgc].imbalance = false;
        }
        // inline here: most passes end balanced, and `out_all_pinned` is then not a call
        self.out_all_pinned_inline(doms, p, e, this_cpu, level, dec)
    }

    fn out_all_pinned(
        &mut self,
        doms: &mut SchedDomains,
        p: &LbParams,
        e: &Env,
        this_cpu: usize,
        level: usize,
        dec: LbDecision,
    ) -> LbDecision {
        self.out_all_pinned_inline(doms, p, e, this_cpu, level, dec)
    }

    /// `out_all_pinned:` of `sched_balance_rq()`, inline at `out_balanced:`
    /// ([`LoadBalancer::out_all_pinned`] out of line for the all-pinned exit).
    #[inline(always)]
    fn out_all_pinned_inline(
        &mut self,
        doms: &mut SchedDomains,
        p: &LbParams,
        e: &Env,
        this_cpu: usize,
        level: usize,
        dec: LbDecision,
    ) -> LbDecision {
        doms.cpus[this_cpu][level].nr_balance_failed = 0;
        self.out_one_pinned(doms, p, e, this_cpu, level, dec)
    }

    fn out_one_pinned(
        &mut self,
        doms: &mut SchedDomains,
        p: &LbParams,
        e: &Env,
        this_cpu: usize,
        level: usize,
        mut dec: LbDecision,
    ) -> LbDecision {
        dec.moved = 0;
        dec.migration_type = e.migration_type;
        self.clear_moves();
        // Newidle disregards intervals and misfit needs no back-off: no interval change
        // (v5.1+; v4.20 backs off on newidle too).
        if (e.idle == CpuIdleType::NewlyIdle && p.version > LbVersion::V4_20)
            || e.migration_type == MigrationType::Misfit
        {
            return dec;
        }
        let sd = &mut doms.cpus[this_cpu][level];
        if (e.flags & LBF_ALL_PINNED != 0 && sd.balance_interval < MAX_PINNED_INTERVAL)
            || sd.balance_interval < sd.max_interval
        {
            sd.balance_interval *= 2;
        }
        dec
    }
}

/// `should_we_balance(env)` (kernel/sched/fair.c, v6.11): newidle balance always runs
/// (unless something got queued); otherwise only the first idle CPU of the local group
/// (or the group's first CPU when none is idle) balances the domain. Without SMT every
/// core is idle when its CPU is.
pub(crate) fn should_we_balance(env: &impl LbEnv, doms: &SchedDomains, e: &Env) -> bool {
    if !e.cpus.contains(e.dst_cpu) {
        return false;
    }
    if e.idle == CpuIdleType::NewlyIdle {
        let d = env.cpu(e.dst_cpu);
        return !(d.nr_running > 0 || d.ttwu_pending);
    }
    let sg = &doms.cpus[e.this_cpu][e.level].groups[0];
    for cpu in sg.balance_mask.and(&e.cpus).iter() {
        if !env.cpu(cpu).idle {
            continue;
        }
        return cpu == e.dst_cpu;
    }
    sg.balance_mask.first() == Some(e.dst_cpu)
}

/// `check_cpu_capacity(rq, sd)`: the CFS capacity is noticeably reduced by other classes
/// or IRQ (`capacity_of × imbalance_pct < capacity_orig × 100`).
pub fn check_cpu_capacity(cpu: &LbCpu, imbalance_pct: u64) -> bool {
    cpu.cap.capacity * imbalance_pct < cpu.cap.orig * 100
}

/// `need_active_balance(env)` (kernel/sched/fair.c, v6.11) without asym packing:
/// `migrate_task` after more than `cache_nice_tries + 2` failures; an idle dst pulling the
/// single CFS task of a CPU with reduced capacity to a clearly bigger one; `migrate_misfit`.
///
/// v4.20: the reduced-capacity rule, then `src_grp_type == group_misfit_task`, then more
/// than `cache_nice_tries + 2` failures whatever the (always load) migration.
pub(crate) fn need_active_balance(
    env: &impl LbEnv,
    doms: &SchedDomains,
    p: &LbParams,
    e: &Env,
) -> bool {
    let sd = &doms.cpus[e.this_cpu][e.level];
    let legacy = p.version == LbVersion::V4_20;
    // imbalanced_active_balance() (v5.12+): after cache_nice_tries + 2 failures, for
    // migrate_task only; v5.5–v5.11 need_active_balance() ends with the same test for any
    // migration type.
    if !legacy
        && (e.migration_type == MigrationType::Task || p.version < LbVersion::V6_6)
        && sd.nr_balance_failed > sd.cache_nice_tries + 2
    {
        return true;
    }
    let src = env.cpu(e.src_cpu);
    if e.idle.is_idle()
        && src.h_nr_running == 1
        && check_cpu_capacity(&src, sd.imbalance_pct)
        && src.cap.capacity * sd.imbalance_pct < env.cpu(e.dst_cpu).cap.capacity * 100
    {
        return true;
    }
    if legacy {
        return e.src_grp_type == GroupType::MisfitTask
            || sd.nr_balance_failed > sd.cache_nice_tries + 2;
    }
    e.migration_type == MigrationType::Misfit
}

#[cfg(test)]
pub(crate) mod tests;
