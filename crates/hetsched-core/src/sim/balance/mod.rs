//! The kernel's load balancer ([`crate::policy::lb`]) wired to the engine: the view it
//! reads ([`Env`], an [`LbEnv`](crate::policy::lb::LbEnv) over the runqueues, in [`env`](mod@env)), and the places the kernel runs it
//! (kernel/sched/fair.c, v6.11):
//!
//! - `sched_balance_trigger()` from the tick → `sched_balance_domains()` for the busy CPU,
//!   each domain when `jiffies ≥ last_balance + get_sd_balance_interval()`;
//! - `nohz_balancer_kick()` from a busy CPU's tick → `_nohz_idle_balance()`: every tickless
//!   idle CPU whose `next_balance` is due balances its domains as `CPU_IDLE` (in
//!   [`super::nohz`]);
//! - `sched_balance_newidle()` when a CPU runs out of fair work;
//! - active balance: the busiest CPU's stopper thread (`migration/N`, class/stop.rs)
//!   preempts its running task and `active_load_balance_cpu_stop()` pushes a task, for a
//!   misfit task or after repeated failures;
//! - `update_misfit_status()` at the tick and at pick.
//!
//! Simplifications: the cost of a newidle pass over a domain is modelled from its span
//! (`balance.newidle_cost_ns` + `balance.newidle_cost_per_cpu_ns` per CPU,
//! [`NewidleCost`]) rather than measured; `capacity_of()` subtracts RT and DL pressure
//! (no IRQ time).

#[macro_use]
mod env;

use super::rq_capacity;
use super::{Class, Out, Sim};
use crate::pelt;
use crate::policy::lb::misfit::{self, NewidleCost, NohzKickInput};
use crate::policy::lb::{sd_balance_interval, CpuIdleType, RootDomainState};
use crate::policy::{Migration, MigrationReason};
use crate::time::Nanos;
pub(in crate::sim) use env::LbScratch;
use env::{Env, OuEnv};

/// The root domain as the balancer reads it: `rd->overloaded`, `rd->overutilized` and
/// `sched_energy_enabled()`.
fn rd_state(overloaded: bool, en: &super::energy::EnergyState) -> RootDomainState {
    RootDomainState {
        overloaded,
        overutilized: en.ou.is_rd_overutilized(),
        eas: en.eas,
    }
}

impl Sim<'_> {
    /// `jiffies` at `now`: the ticks since the start, `now / TICK_NSEC`. Every caller
    /// runs within an event (or a tick) at `now`, whose jiffy the engine's loop kept
    /// ([`Sim::set_clock`]); debug builds assert it equals the division.
    #[inline(always)]
    pub(in crate::sim) fn jiffies(&self, now: Nanos) -> u64 {
        debug_assert_eq!(self.jiffy, now / self.s.tick_ns, "jiffies at {now}");
        self.jiffy
    }

    /// The engine's clock reaches `now` (an event's or a tick's time, never earlier than
    /// the last): `jiffy` follows when `now` enters a later jiffy. Events at the same
    /// jiffy cost one comparison instead of one at each [`Sim::jiffies`] read.
    #[inline(always)]
    pub(in crate::sim) fn set_clock(&mut self, now: Nanos) {
        if now >= self.jiffy_end {
            self.next_jiffy(now);
        }
    }

    #[cold]
    #[inline(never)]
    fn next_jiffy(&mut self, now: Nanos) {
        self.jiffy = now / self.s.tick_ns;
        self.jiffy_end = (self.jiffy + 1) * self.s.tick_ns;
    }

    /// Something [`Env::fill_cpu`] reads of `cpu` may have changed (a task count, the
    /// current task, `misfit_task_load`, `active_balance`; and, through
    /// [`Sim::rq_util_changed`], its signals): the balancer reads that CPU again at its
    /// next pass. Every writer of those calls it.
    pub(in crate::sim) fn lb_cpu_changed(&mut self, cpu: usize) {
        *self.lb_scratch.gen[cpu].get_mut() += 1;
    }

    /// `rq->misfit_task_load = v` on `cpu`. Always inline: at `__schedule()`'s inlined
    /// `set_next_task_fair()` LLVM otherwise kept it out of line (a call for a compare and
    /// a store).
    #[inline(always)]
    fn set_misfit(&mut self, cpu: usize, v: u64) {
        if self.misfit[cpu] != v {
            self.misfit[cpu] = v;
            self.lb_cpu_changed(cpu);
        }
    }

    /// `rq->active_balance = v` on `cpu`.
    pub(in crate::sim) fn set_active_balance(&mut self, cpu: usize, v: bool) {
        self.active_balance[cpu] = v;
        self.lb_cpu_changed(cpu);
    }

    /// Applies the moves a balance pass decided, and its active-balance request. `moves`
    /// come in detach order, cut into `detach_tasks()` calls at `batch_ends`
    /// ([`crate::policy::lb::LoadBalancer::batch_ends`]): `sched_balance_rq()`
    /// (kernel/sched/fair.c, v6.11) detaches each call's tasks from the source one by one,
    /// then `attach_tasks()` enqueues them on the destination from the head of
    /// `env->tasks`, where `detach_tasks()` `list_add()`ed each: the last detached first.
    #[allow(clippy::too_many_arguments)]
    fn apply_lb(
        &mut self,
        out: &mut Out<'_, '_>,
        moves: &[Migration],
        batch_ends: &[usize],
        active: Option<crate::policy::lb::ActiveBalance>,
        rd: (Option<bool>, Option<bool>),
        cpu: usize,
        now: Nanos,
    ) {
        let (rd_overloaded, rd_overutilized) = rd;
        // update_sd_lb_stats() -> set_rd_overutilized(), before any task moves
        if let Some(v) = rd_overutilized {
            self.set_rd_overutilized(out, cpu, v, now);
        }
        let mut start = 0;
        for &end in batch_ends {
            let batch = &moves[start..end];
            for &m in batch {
                self.detach_task(out, m, m.dst, now);
            }
            for &m in batch.iter().rev() {
                self.attach_task(out, m, now);
            }
            start = end;
        }
        debug_assert_eq!(
            start,
            moves.len(),
            "every move is in a detach_tasks() batch"
        );
        if let Some(m) = moves.first() {
            // the sched governor (seed 004): after detach_tasks() and attach_tasks()
            self.schedfreq_update_capacity_of(out, m.src, now);
            self.schedfreq_update_capacity_of(out, m.dst, now);
        }
        if let Some(v) = rd_overloaded {
            self.rd_overload = v;
        }
        if let Some(a) = active {
            self.start_active_balance(out, a, cpu, now);
        }
    }

    /// `sched_balance_rq()` (v6.11): `busiest->active_balance = 1`, then
    /// `stop_one_cpu_nowait(active_load_balance_cpu_stop)` from `cpu`.
    fn start_active_balance(
        &mut self,
        out: &mut Out<'_, '_>,
        a: crate::policy::lb::ActiveBalance,
        cpu: usize,
        now: Nanos,
    ) {
        self.set_active_balance(a.src, true);
        let work = super::class::StopWork::ActiveBalance {
            dst: a.dst,
            reason: a.reason,
        };
        self.stop_one_cpu_nowait(out, a.src, work, cpu, now);
    }

    /// `active_load_balance_cpu_stop()` run by `src`'s stopper (class/stop.rs), which
    /// preempted the task that ran there: the balancer picks a task to push to `dst`, and
    /// `sched_migrate_task` comes from the stopper on `src`.
    pub(in crate::sim) fn active_load_balance_cpu_stop(
        &mut self,
        out: &mut Out<'_, '_>,
        src: usize,
        dst: usize,
        reason: MigrationReason,
        now: Nanos,
    ) {
        let m = {
            let env = lb_env!(self, now);
            self.lb
                .active_load_balance_cpu_stop(&env, &mut self.doms, &self.lbp, src, dst, reason)
        };
        self.set_active_balance(src, false);
        if let Some(m) = m {
            self.move_queued_on(out, m, src, now);
            // the sched governor (seed 004): after detach_one_task() and attach_one_task()
            self.schedfreq_update_capacity_of(out, m.src, now);
            self.schedfreq_update_capacity_of(out, m.dst, now);
        }
    }

    /// `sched_balance_domains(rq, idle)` (kernel/sched/fair.c, v6.11): each domain of `cpu`
    /// that is due, bottom-up. The CPU is busy for `get_sd_balance_interval()` when not
    /// idle and not running SCHED_IDLE tasks only (`busy = idle != CPU_IDLE &&
    /// !sched_idle_cpu(cpu)`, again after a pass that moved tasks; v5.6+, 323af6deaf70).
    /// Without `sched.sched_idle_cpu` busy is `idle != CPU_IDLE` alone, as in v4.20's
    /// `rebalance_domains()`.
    pub(in crate::sim) fn sched_balance_domains(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        mut idle: CpuIdleType,
        reason: MigrationReason,
        now: Nanos,
    ) {
        let jiffies = self.jiffies(now);
        let hz = self.lbp.hz;
        let sched_idle_rule = self.s.options.sched.sched_idle_cpu;
        let busy_of = |s: &Self, idle| {
            idle == CpuIdleType::NotIdle && !(sched_idle_rule && s.sched_idle_cpu(cpu))
        };
        let mut busy = busy_of(self, idle);
        let mut next_balance = jiffies + 60 * hz;
        let mut cont = true;
        let (mut need_decay, mut max_cost) = (false, 0);
        let mut level = 0;
        // The kernel's loop in two parts: the walk over the levels that are not due (most
        // calls balance nothing: the tick of a CPU whose `next_balance` a newidle balance
        // lowered to an idle interval finds no level due at its busy one) borrows only the
        // CPU's domains; a due level leaves it for its `sched_balance_rq()` pass, then the
        // walk goes on at the next level. The same statements run in the same order.
        'levels: loop {
            let due = 'walk: {
                let sds = match self.doms.cpus.get_mut(cpu) {
                    Some(v) => v.as_mut_slice(),
                    None => &mut [],
                };
                while level < sds.len() {
                    // "Decay the newidle max times here because this is a regular visit to
                    // all the domains" (update_newidle_cost(sd, 0))
                    let sd = &mut sds[level];
                    need_decay = sd.update_newidle_cost(0, jiffies, hz);
                    max_cost += sd.max_newidle_lb_cost;
                    if !cont {
                        if need_decay {
                            level += 1;
                            continue;
                        }
                        break 'levels;
                    }
                    if !sd.load_balance {
                        // no SD_LOAD_BALANCE (HMP's cross-domain level). LSK's HMP domains
                        // were clusters, so a CPU always kept a balancing cluster level
                        // whose interval paced the rebalance softirq (and
                        // `hmp_force_up_migration()` in it); where HMP's capacity classes
                        // share one cluster, that level is the disabled one: it keeps
                        // pacing the softirq, balancing nothing.
                        if !sds.iter().any(|d| d.load_balance) {
                            let sd = &mut sds[level];
                            let interval = crate::policy::lb::get_sd_balance_interval(
                                sd.balance_interval,
                                sd.busy_factor,
                                busy,
                                &self.lbp,
                            );
                            if jiffies >= sd.last_balance + interval {
                                sd.last_balance = jiffies;
                            }
                            next_balance = next_balance.min(sd.last_balance + interval);
                        }
                        level += 1;
                        continue;
                    }
                    let interval = sd_balance_interval(sd, busy, &self.lbp);
                    if jiffies >= sd.last_balance + interval {
                        break 'walk level;
                    }
                    next_balance = next_balance.min(sd.last_balance + interval);
                    level += 1;
                }
                break 'levels;
            };
            let dec = {
                let env = lb_env!(self, now);
                let rd = rd_state(self.rd_overload, &self.en);
                self.lb.sched_balance_rq(
                    &env,
                    &mut self.doms,
                    &rd,
                    &self.lbp,
                    cpu,
                    due,
                    idle,
                    jiffies,
                    reason,
                )
            };
            self.trace_cpu_capacity_update(out, cpu, now);
            let (moves, ends) = self.lb.take_moves();
            self.restamp_src();
            cont = dec.continue_balancing;
            let rd = (dec.rd_overloaded, dec.rd_overutilized);
            self.apply_lb(out, &moves, &ends, dec.active, rd, cpu, now);
            let moved = !moves.is_empty();
            self.lb.restore_moves(moves, ends);
            if moved {
                // the CPU may no longer be idle
                idle = if self.view[cpu].idle {
                    CpuIdleType::Idle
                } else {
                    CpuIdleType::NotIdle
                };
                busy = busy_of(self, idle);
            }
            let sd = &mut self.doms.cpus[cpu][due];
            sd.last_balance = jiffies;
            let interval = sd_balance_interval(sd, busy, &self.lbp);
            next_balance = next_balance.min(sd.last_balance + interval);
            level = due + 1;
        }
        if need_decay {
            // "Ensure the rq-wide value also decays but keep it at a reasonable floor"
            self.rqs[cpu].max_idle_balance_cost =
                max_cost.max(crate::sched::SYSCTL_SCHED_MIGRATION_COST);
        }
        self.rqs[cpu].next_balance = next_balance;
    }

    /// Mirrors the list order `detach_tasks()` left on the busiest CPU.
    fn restamp_src(&mut self) {
        if let Some((_, order)) = self.lb.src_cfs_order() {
            for t in order {
                self.stamp_ctr += 1;
                self.cfs_stamp[t] = self.stamp_ctr;
            }
        }
    }

    /// `sched_balance_newidle()`: `cpu` has no fair task left. Returns whether it pulled.
    /// `open` is the gate's test ([`Sim::newidle_gate_open`]), which the caller
    /// (`balance_fair()`) made before the blocked averages and which nothing since
    /// changed (debug builds test it again and assert it); the gate is not tested twice.
    /// Inline at its caller up to the gate, where most calls stop; the passes out of line
    /// ([`Sim::newidle_balance_pass`]).
    #[inline(always)]
    pub(in crate::sim) fn newidle_balance(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        open: bool,
        now: Nanos,
    ) -> bool {
        debug_assert_eq!(open, self.newidle_gate_open(cpu), "the gate kept at {now}");
        self.set_misfit(cpu, 0);
        let jiffies = self.jiffies(now);
        // No wake-up is ever pending (Env::ttwu_pending): a pass that stops at the gate
        // needs no view of the runqueues. The balancer's moves and lists are not cleared
        // there: the engine reads them only right after a pass (Sim::newidle_balance_pass
        // and Sim::sched_balance_domains read those of the pass they just ran), and every
        // pass clears them first.
        let gate = misfit::newidle_gate_stop(&mut self.doms, &self.lbp, cpu, open, jiffies);
        if let Some(next_balance) = gate {
            // Stopped at the gate: no pass ran, so nothing moved, no `rq->cpu_capacity` was
            // updated (no `sched_cpu_capacity` to trace), no list is left to mirror, no
            // stopper was requested and no cost was charged. `next_balance` is at least 1
            // (`jiffies + HZ`, or a `last_balance` plus an interval of at least one jiffy).
            debug_assert!(next_balance > 0);
            debug_assert!(!self.rqs[cpu].cpu_capacity_updated.get());
            let rq = &mut self.rqs[cpu];
            rq.next_balance = rq.next_balance.min(next_balance);
            return false;
        }
        let rd = rd_state(self.rd_overload, &self.en);
        let avg_idle = self.rqs[cpu].avg_idle;
        self.newidle_balance_pass(out, cpu, rd, avg_idle, jiffies, now)
    }

    /// [`Sim::newidle_balance`] past the gate: the domains' passes, and their moves applied.
    #[inline(never)]
    fn newidle_balance_pass(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        rd: RootDomainState,
        avg_idle: u64,
        jiffies: u64,
        now: Nanos,
    ) -> bool {
        let res = {
            let env = lb_env!(self, now);
            // the gate ran at the caller (Sim::newidle_balance) and no wake-up is pending
            self.lb.sched_balance_newidle_domains(
                &env,
                &mut self.doms,
                &rd,
                &self.lbp,
                cpu,
                avg_idle,
                NewidleCost {
                    base_ns: self.s.options.balance.newidle_cost_ns,
                    per_cpu_ns: self.s.options.balance.newidle_cost_per_cpu_ns,
                },
                jiffies,
            )
        };
        self.trace_cpu_capacity_update(out, cpu, now);
        let (moves, ends) = self.lb.take_moves();
        self.restamp_src();
        // sched_balance_rq() at a lower domain started its stopper before the next domain
        // was tried (v6.11): those requests stand whatever the last domain decided.
        if !self.lb.superseded_active_is_empty() {
            for a in self.lb.take_superseded_active() {
                self.start_active_balance(out, a, cpu, now);
            }
        }
        // Without a balanced domain nothing moved and no root-domain flag changed.
        if let Some(d) = res.last {
            let rd = (d.rd_overloaded, d.rd_overutilized);
            self.apply_lb(out, &moves, &ends, d.active, rd, cpu, now);
        }
        // at least 1: `jiffies + HZ`, or a `last_balance` plus an interval of a jiffy or more
        debug_assert!(res.next_balance > 0);
        let rq = &mut self.rqs[cpu];
        rq.next_balance = rq.next_balance.min(res.next_balance);
        rq.max_idle_balance_cost = rq.max_idle_balance_cost.max(res.cost);
        let pulled = !moves.is_empty();
        self.lb.restore_moves(moves, ends);
        pulled
    }

    /// `update_misfit_status(p, rq)` for `cpu`'s current fair task (or none). Inline at
    /// its callers (each pick of a fair task, each fair tick): most calls end at the cheap
    /// tests, and only the last one, `task_fits_cpu()`, is a call ([`Self::misfit_fits`]).
    #[inline(always)]
    pub(in crate::sim) fn update_misfit(&mut self, cpu: usize, tid: Option<usize>, _now: Nanos) {
        let asym = self.doms.sched_asym_cpucap_active;
        if !asym {
            return; // the kernel returns before touching rq->misfit_task_load
        }
        // The kernel's cheap tests first, as it orders them: no (fair) task, a task
        // allowed on one CPU only, or one already on its biggest allowed capacity give 0
        // (with `balance.misfit` off too) before task_fits_cpu() reads any signal.
        let Some(t) = tid.filter(|&t| self.threads[t].class == Class::Fair) else {
            self.set_misfit(cpu, 0);
            return;
        };
        let (max_cap, pinned) = self.max_allowed_capacity(t);
        if pinned || self.rqs[cpu].cap == max_cap || !self.lbp.misfit {
            self.set_misfit(cpu, 0);
            return;
        }
        self.misfit_fits(cpu, t);
    }

    /// The last test, `task_fits_cpu()`, of update_misfit_status() (whose cheap tests
    /// are [`Self::update_misfit`]'s) for `t` running on `cpu`.
    #[inline(never)]
    fn misfit_fits(&mut self, cpu: usize, t: usize) {
        let cap = rq_capacity(&self.rqs[cpu]);
        let e = &self.ents[t];
        let util = if self.s.options.pelt.util_est {
            pelt::task_util_est(&e.avg, self.ue_ver)
        } else {
            e.avg.util_avg
        };
        let [umin, umax] = self.threads[t].uclamp;
        let v = misfit::misfit_task_load(util, umin, umax, e.avg.load_avg, &cap, &self.lbp);
        self.set_misfit(cpu, v);
    }

    /// `p->max_allowed_capacity` (`get_max_allowed_capacity()`, kernel/sched/fair.c,
    /// v6.10), the largest original capacity among `t`'s allowed CPUs, and whether
    /// `p->nr_cpus_allowed == 1`. The kernel stores both when the affinity changes; the
    /// engine memoises them per thread with the thread's `affinity_gen`, which every
    /// change of its affinity moves on, and recomputes them when that differs (the
    /// original capacities do not change during a run). Debug builds recompute them at
    /// each call and assert they equal the memo.
    #[inline(always)]
    fn max_allowed_capacity(&mut self, t: usize) -> (u64, bool) {
        let gen = self.threads[t].affinity_gen;
        if let Some(&Some((g, cap, pinned))) = self.max_cap_memo.get(t) {
            if g == gen {
                debug_assert_eq!((cap, pinned), self.allowed_capacity(t));
                return (cap, pinned);
            }
        }
        self.max_allowed_capacity_slow(t, gen)
    }

    /// [`Self::max_allowed_capacity`] when the memo is missing or stale: computes and
    /// stores it.
    #[cold]
    #[inline(never)]
    fn max_allowed_capacity_slow(&mut self, t: usize, gen: u32) -> (u64, bool) {
        let (cap, pinned) = self.allowed_capacity(t);
        if self.max_cap_memo.len() <= t {
            self.max_cap_memo.resize(t + 1, None);
        }
        self.max_cap_memo[t] = Some((gen, cap, pinned));
        (cap, pinned)
    }

    /// [`Self::max_allowed_capacity`] computed from `t`'s affinity.
    fn allowed_capacity(&self, t: usize) -> (u64, bool) {
        let allowed = &self.threads[t].affinity;
        let cap = allowed
            .iter()
            .filter(|&c| c < self.rqs.len())
            .map(|c| self.rqs[c].cap)
            .max()
            .unwrap_or(0);
        (cap, allowed.weight() == 1)
    }

    /// `sched_balance_trigger()` + `nohz_balancer_kick()` from `cpu`'s tick.
    pub(in crate::sim) fn balance_tick(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        let jiffies = self.jiffies(now);
        if jiffies >= self.rqs[cpu].next_balance {
            // sched_balance_softirq() (v6.11): the blocked averages, then the domains
            // (LSK 3.10's run_rebalance_domains() with HMP: hmp_force_up_migration() first)
            self.hmp_force_up_migration(out, cpu, now);
            self.update_blocked_averages(out, cpu, now);
            self.sched_balance_domains(
                out,
                cpu,
                CpuIdleType::NotIdle,
                MigrationReason::Periodic,
                now,
            );
        }
        let rq = &self.rqs[cpu];
        let cap = rq_capacity(rq);
        let input = NohzKickInput {
            idle_balance: false,
            // time_after(now, nohz.next_blocked)
            blocked_load_due: self.nohz_has_blocked && jiffies > self.nohz_next_blocked_j,
            before_next_balance: jiffies < self.nohz_next_balance_j,
            no_idle_cpus: self.nr_idle == 0,
            needs_update: false,
            nr_running: rq.cfs.nr_running + (rq.rt.nr_running() + rq.dl.nr_running()) as u32,
            h_nr_running: rq.cfs.nr_running,
            cap,
            base_imbalance_pct: self.doms.domains(cpu).first().map(|d| d.imbalance_pct),
            has_asym_cpucapacity: self.doms.sd_asym_cpucapacity[cpu].is_some(),
            misfit_task_load: self.misfit[cpu],
            // counted below, only if the kick reads it
            llc_nr_busy: None,
        };
        // `sd_llc_shared->nr_busy_cpus`: the LLC's CPUs that are not idle.
        let llc_nr_busy = || {
            self.doms.sd_llc[cpu].map(|lvl| {
                self.doms.domains(cpu)[lvl]
                    .span
                    .iter()
                    .filter(|&c| !self.view[c].idle)
                    .count() as u32
            })
        };
        let flags = misfit::nohz_balancer_kick_with(&input, self.lbp.misfit, llc_nr_busy);
        if flags != 0 {
            self.kick_ilb(flags, jiffies, now);
        }
    }

    /// `sched_balance_newidle()`'s gate (v6.11, [`misfit::newidle_gate_open`]): the root
    /// domain is overloaded and the CPU expects to be idle at least its base domain's
    /// `max_newidle_lb_cost`.
    #[inline(always)]
    pub(in crate::sim) fn newidle_gate_open(&self, cpu: usize) -> bool {
        let sd = self.doms.cpus[cpu].first();
        misfit::newidle_gate_open(self.rd_overload, self.rqs[cpu].avg_idle, sd)
    }
}
