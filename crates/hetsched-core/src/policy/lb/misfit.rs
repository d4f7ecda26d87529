//! Misfit status, the nohz idle-balance kick and newidle balance
//! (kernel/sched/fair.c, v6.11): `update_misfit_status()`, `nohz_balancer_kick()`,
//! `set_rd_overloaded()` on `add_nr_running()`, `sched_balance_newidle()`.

use super::{
    check_cpu_capacity, CpuIdleType, LbDecision, LbEnv, LbParams, LbTask, LoadBalancer,
    RootDomainState,
};
use crate::policy::MigrationReason;
use crate::sched::capacity::{task_fits_cpu, CpuCapacity};
use crate::sched::topology::{SchedDomain, SchedDomains, SD_BALANCE_NEWIDLE};

/// `update_misfit_status(p, rq)`: the new `rq->misfit_task_load` when `p` runs (or
/// `None` = the CPU went idle) on a CPU of capacity `cap`. Zero when asymmetric capacity
/// is inactive (returned as `None`: the kernel leaves the field untouched), when `p` is
/// pinned to one CPU, already on its biggest allowed capacity (`max_allowed_capacity`,
/// v6.10+), or fits; otherwise `max(task_h_load, 1)`. With `p.misfit` off (pre-misfit
/// kernels) the status is always 0.
pub fn update_misfit_status(
    task: Option<(&LbTask, u64)>,
    cap: &CpuCapacity,
    asym_cpucap_active: bool,
    p: &LbParams,
) -> Option<u64> {
    if !asym_cpucap_active {
        return None;
    }
    if !p.misfit {
        return Some(0);
    }
    let Some((t, max_allowed_capacity)) = task else {
        return Some(0);
    };
    if t.cpus_allowed.weight() == 1 || cap.orig == max_allowed_capacity {
        return Some(0);
    }
    Some(misfit_task_load(
        t.util_est,
        t.uclamp_min,
        t.uclamp_max,
        t.h_load,
        cap,
        p,
    ))
}

/// The last test of `update_misfit_status(p, rq)` (v6.11), for a task that passed its
/// cheap ones (not pinned, not on its biggest allowed capacity; `p.misfit` on): 0 when
/// `task_fits_cpu()`, otherwise `max(task_h_load, 1)`. An engine that keeps
/// `p->nr_cpus_allowed` and `p->max_allowed_capacity` tests those itself and calls this.
pub fn misfit_task_load(
    util_est: u64,
    uclamp_min: u64,
    uclamp_max: u64,
    h_load: u64,
    cap: &CpuCapacity,
    p: &LbParams,
) -> u64 {
    if task_fits_cpu(util_est, uclamp_min, uclamp_max, cap, p.uclamp_is_used) {
        return 0;
    }
    h_load.max(1)
}

/// `p->max_allowed_capacity`: the largest original capacity among the allowed CPUs
/// (`get_max_allowed_capacity()`, v6.10).
pub fn max_allowed_capacity(allowed: &crate::sched::CpuSet, capacity_orig: &[u64]) -> u64 {
    allowed
        .iter()
        .filter_map(|c| capacity_orig.get(c).copied())
        .max()
        .unwrap_or(0)
}

/// `add_nr_running()`'s overload rule: the root domain becomes overloaded when a runqueue
/// goes from fewer than 2 to 2 or more tasks.
pub fn overloaded_on_add_nr_running(prev_nr_running: u32, nr_running: u32) -> bool {
    prev_nr_running < 2 && nr_running >= 2
}

/// `NOHZ_BALANCE_KICK`.
pub const NOHZ_BALANCE_KICK: u32 = 0x1;
/// `NOHZ_STATS_KICK`.
pub const NOHZ_STATS_KICK: u32 = 0x2;
/// `NOHZ_NEXT_KICK`.
pub const NOHZ_NEXT_KICK: u32 = 0x8;

/// The inputs of [`nohz_balancer_kick`] for the CPU whose tick runs it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NohzKickInput {
    /// `rq->idle_balance`: this CPU is idle balancing (no kick from an idle tick).
    pub idle_balance: bool,
    /// `nohz.has_blocked_load && jiffies > nohz.next_blocked`.
    pub blocked_load_due: bool,
    /// `time_before(jiffies, nohz.next_balance)`.
    pub before_next_balance: bool,
    /// `nohz.idle_cpus_mask` is empty.
    pub no_idle_cpus: bool,
    /// `nohz.needs_update`.
    pub needs_update: bool,
    /// `rq->nr_running`.
    pub nr_running: u32,
    /// `rq->cfs.h_nr_running`.
    pub h_nr_running: u32,
    /// The CPU's capacities.
    pub cap: CpuCapacity,
    /// `imbalance_pct` of the CPU's base domain (`rq->sd`), if it has one.
    pub base_imbalance_pct: Option<u64>,
    /// The CPU has an `sd_asym_cpucapacity` domain.
    pub has_asym_cpucapacity: bool,
    /// `rq->misfit_task_load`.
    pub misfit_task_load: u64,
    /// `sd_llc_shared->nr_busy_cpus` when the CPU has an LLC domain.
    pub llc_nr_busy: Option<u32>,
}

/// `nohz_balancer_kick(rq)` (kernel/sched/fair.c, v6.11) as a pure decision: the
/// `NOHZ_*_KICK` flags to send to the idle load balancer (0 = no kick). No kick at all
/// while no CPU is tickless idle (`nohz.nr_cpus == 0`, tested before the blocked-load
/// stats kick). Kicks when the CPU has two or more tasks, a CFS task on reduced capacity,
/// a misfit task on an asymmetric system (which skips the LLC test), or more than one busy
/// CPU in its LLC. With `misfit` off (pre-misfit kernels) the asym-capacity block is
/// absent.
pub fn nohz_balancer_kick(i: &NohzKickInput, misfit: bool) -> u32 {
    nohz_balancer_kick_with(i, misfit, || i.llc_nr_busy)
}

/// [`nohz_balancer_kick`] with `sd_llc_shared->nr_busy_cpus` given by `llc_nr_busy`
/// (`i.llc_nr_busy` is not read), which runs only where the kernel reads that count:
/// past the earlier returns and tests, on a CPU without an asymmetric-capacity domain
/// (with `misfit`). An engine that counts the busy CPUs of the LLC counts them only then.
pub fn nohz_balancer_kick_with(
    i: &NohzKickInput,
    misfit: bool,
    llc_nr_busy: impl FnOnce() -> Option<u32>,
) -> u32 {
    if i.idle_balance {
        return 0;
    }
    // None are in tickless mode and hence no need for NOHZ idle load balancing.
    if i.no_idle_cpus {
        return 0;
    }
    let mut flags = 0;
    if i.blocked_load_due {
        flags = NOHZ_STATS_KICK;
    }
    'out: {
        if i.before_next_balance {
            break 'out;
        }
        if i.nr_running >= 2 {
            flags = NOHZ_STATS_KICK | NOHZ_BALANCE_KICK;
            break 'out;
        }
        if let Some(pct) = i.base_imbalance_pct {
            let cpu = super::LbCpu {
                cap: i.cap,
                ..Default::default()
            };
            if i.h_nr_running >= 1 && check_cpu_capacity(&cpu, pct) {
                flags = NOHZ_STATS_KICK | NOHZ_BALANCE_KICK;
                break 'out;
            }
        }
        if misfit && i.has_asym_cpucapacity {
            if i.misfit_task_load != 0 {
                flags = NOHZ_STATS_KICK | NOHZ_BALANCE_KICK;
            }
            // Asymmetric systems skip the LLC logic.
            break 'out;
        }
        if llc_nr_busy().is_some_and(|n| n > 1) {
            flags = NOHZ_STATS_KICK | NOHZ_BALANCE_KICK;
        }
    }
    if i.needs_update {
        flags |= NOHZ_NEXT_KICK;
    }
    flags
}

/// What a newidle pass over one domain costs, the time `sched_balance_newidle()` measures
/// around `sched_balance_rq()` (`balance.newidle_cost_ns`, `balance.newidle_cost_per_cpu_ns`):
/// a fixed part (locking, the blocked averages, finding the busiest group's queue, the
/// clock reads) and a part per CPU of the domain, whose statistics
/// `update_sd_lb_stats()` reads one by one, so that the cost grows with the span as the
/// kernel's measured `sd->max_newidle_lb_cost` does (newidle stops at big domains when the
/// CPU expects a short idle).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewidleCost {
    /// The fixed part (ns).
    pub base_ns: u64,
    /// The part per CPU of the domain's span (ns).
    pub per_cpu_ns: u64,
}

impl NewidleCost {
    /// The cost of a pass over a domain of `span_weight` CPUs (ns).
    pub fn of(self, span_weight: usize) -> u64 {
        self.base_ns
            .saturating_add(self.per_cpu_ns.saturating_mul(span_weight as u64))
    }
}

/// The result of [`LoadBalancer::sched_balance_newidle`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewidleOutcome {
    /// Tasks pulled (in [`LoadBalancer::moves`]).
    pub pulled: usize,
    /// The last `sched_balance_rq()` decision, if a domain was balanced.
    pub last: Option<LbDecision>,
    /// Domains attempted.
    pub domains_tried: usize,
    /// The earliest `next_balance` seen (jiffies), for `rq->next_balance`.
    pub next_balance: u64,
    /// `curr_cost`: the cost of the domains balanced (ns), which raises
    /// `rq->max_idle_balance_cost`.
    pub cost: u64,
}

impl LoadBalancer {
    /// `sched_balance_newidle(this_rq)` (kernel/sched/fair.c, v6.11) after
    /// `update_misfit_status(NULL)` (the engine clears the misfit load): skipped when a
    /// wake-up is pending, when the root domain is not overloaded or `avg_idle` is below
    /// the base domain's `max_newidle_lb_cost`; otherwise balances the domains bottom-up
    /// while `avg_idle` covers the accumulated cost, stopping at the first pull.
    ///
    /// The kernel measures each domain's pass with `sched_clock_cpu()` (the first one
    /// including `sched_balance_update_blocked_averages()`); here a pass over a domain of
    /// `n` CPUs costs `cost.of(n)` ([`NewidleCost`]), charged to `curr_cost` and fed to
    /// `update_newidle_cost()`.
    #[allow(clippy::too_many_arguments)]
    pub fn sched_balance_newidle(
        &mut self,
        env: &impl LbEnv,
        doms: &mut SchedDomains,
        rd: &RootDomainState,
        p: &LbParams,
        this_cpu: usize,
        avg_idle: u64,
        cost: NewidleCost,
        jiffies: u64,
    ) -> NewidleOutcome {
        if env.ttwu_pending(this_cpu) {
            self.forget_last_pass();
            self.newidle_active.clear();
            return NewidleOutcome::nothing(jiffies, p);
        }
        if let Some(out) = self.sched_balance_newidle_gate(doms, rd, p, this_cpu, avg_idle, jiffies)
        {
            return out;
        }
        self.sched_balance_newidle_domains(env, doms, rd, p, this_cpu, avg_idle, cost, jiffies)
    }

    /// [`LoadBalancer::sched_balance_newidle`] past its gate
    /// ([`LoadBalancer::sched_balance_newidle_gate`] returned `None`, or
    /// [`newidle_gate_stop`] did): clears the moves, the source list and the superseded
    /// active balances, then balances the domains bottom-up. An engine without pending
    /// wake-ups that ran the gate calls it at once, the gate not run again.
    #[allow(clippy::too_many_arguments)]
    pub fn sched_balance_newidle_domains(
        &mut self,
        env: &impl LbEnv,
        doms: &mut SchedDomains,
        rd: &RootDomainState,
        p: &LbParams,
        this_cpu: usize,
        avg_idle: u64,
        cost: NewidleCost,
        jiffies: u64,
    ) -> NewidleOutcome {
        debug_assert!(!env.ttwu_pending(this_cpu));
        self.forget_last_pass();
        self.newidle_active.clear();
        let mut out = NewidleOutcome::nothing(jiffies, p);
        let nlevels = doms.domains(this_cpu).len();
        let mut curr_cost = 0u64;
        for level in 0..nlevels {
            update_next_balance(doms, p, this_cpu, level, &mut out.next_balance);
            if avg_idle < curr_cost + doms.cpus[this_cpu][level].max_newidle_lb_cost {
                break;
            }
            let mut cont = true;
            let sd = &doms.cpus[this_cpu][level];
            if sd.load_balance && sd.flags & SD_BALANCE_NEWIDLE != 0 {
                let dec = self.sched_balance_rq(
                    env,
                    doms,
                    rd,
                    p,
                    this_cpu,
                    level,
                    CpuIdleType::NewlyIdle,
                    jiffies,
                    MigrationReason::Newidle,
                );
                out.domains_tried += 1;
                out.pulled = dec.moved;
                cont = dec.continue_balancing;
                self.newidle_active.extend(dec.active);
                out.last = Some(dec);
                let sd = &doms.domains(this_cpu)[level];
                debug_assert_eq!(sd.span_weight as usize, sd.span.weight());
                let domain_cost = cost.of(sd.span_weight as usize);
                doms.cpus[this_cpu][level].update_newidle_cost(domain_cost, jiffies, p.hz);
                curr_cost += domain_cost;
            }
            if out.pulled > 0 || !cont {
                break;
            }
        }
        out.cost = curr_cost;
        // the last domain's request stays its decision's; the others are superseded
        if out.last.is_some_and(|d| d.active.is_some()) {
            self.newidle_active.pop();
        }
        out
    }

    /// The part of [`LoadBalancer::sched_balance_newidle`] after its `rq->ttwu_pending`
    /// test that reads no runqueue: the outcome when the pass stops there (no domain, the
    /// root domain not overloaded, or `avg_idle` below the base domain's
    /// `max_newidle_lb_cost`: `update_next_balance()` of the base domain only), `None`
    /// when the domains are to be balanced. Clears [`LoadBalancer::moves`] when it stops
    /// (past it, [`LoadBalancer::sched_balance_newidle_domains`] does). An engine without
    /// pending wake-ups calls it before building its [`LbEnv`]; one that has already
    /// tested the gate ([`newidle_gate_open`]) calls
    /// [`LoadBalancer::sched_balance_newidle_gate_tested`] with the result, or
    /// [`newidle_gate_stop`] when it reads nothing of the balancer between passes.
    pub fn sched_balance_newidle_gate(
        &mut self,
        doms: &mut SchedDomains,
        rd: &RootDomainState,
        p: &LbParams,
        this_cpu: usize,
        avg_idle: u64,
        jiffies: u64,
    ) -> Option<NewidleOutcome> {
        let open = newidle_gate_open(rd.overloaded, avg_idle, doms.domains(this_cpu).first());
        self.sched_balance_newidle_gate_tested(doms, p, this_cpu, open, jiffies)
    }

    /// [`LoadBalancer::sched_balance_newidle_gate`] with the gate's test already made
    /// (`open`, [`newidle_gate_open`] of the same inputs): the outcome when the pass
    /// stops (no domain, or the gate closed: `update_next_balance()` of the base domain
    /// only; the moves, the source list and the superseded active balances cleared),
    /// `None` when the domains are to be balanced
    /// ([`LoadBalancer::sched_balance_newidle_domains`] clears them then).
    #[inline(always)]
    pub fn sched_balance_newidle_gate_tested(
        &mut self,
        doms: &mut SchedDomains,
        p: &LbParams,
        this_cpu: usize,
        open: bool,
        jiffies: u64,
    ) -> Option<NewidleOutcome> {
        let next_balance = newidle_gate_stop(doms, p, this_cpu, open, jiffies)?;
        self.forget_last_pass();
        self.newidle_active.clear();
        Some(NewidleOutcome {
            next_balance,
            ..NewidleOutcome::nothing(jiffies, p)
        })
    }
}

/// `sched_balance_newidle()`'s stop at its gate (kernel/sched/fair.c, v6.11), for a gate
/// already tested (`open`, [`newidle_gate_open`]): when the pass stops there (no domain,
/// or the gate closed), the `next_balance` it leaves for `rq->next_balance` (`jiffies +
/// HZ`, lowered by `update_next_balance()` of the base domain when there is one); `None`
/// when the domains are to be balanced. Touches no [`LoadBalancer`]: an engine that reads
/// the balancer's moves and lists only right after a pass (each pass starts by clearing
/// them) has nothing to clear when no pass runs.
#[inline(always)]
pub fn newidle_gate_stop(
    doms: &mut SchedDomains,
    p: &LbParams,
    this_cpu: usize,
    open: bool,
    jiffies: u64,
) -> Option<u64> {
    let mut next_balance = jiffies + p.hz;
    if doms.domains(this_cpu).is_empty() {
        // no `sd`: the kernel's loop over the domains has nothing to balance
        return Some(next_balance);
    }
    if !open {
        update_next_balance(doms, p, this_cpu, 0, &mut next_balance);
        return Some(next_balance);
    }
    None
}

/// The test of `sched_balance_newidle()`'s gate (kernel/sched/fair.c, v6.11),
/// `!READ_ONCE(this_rq->rd->overloaded) || (sd && this_rq->avg_idle <
/// sd->max_newidle_lb_cost)`, negated: whether a newly idle CPU whose base domain is `sd`
/// goes on to balance (the root domain is overloaded and the CPU expects to stay idle at
/// least the base domain's `max_newidle_lb_cost`).
#[inline(always)]
pub fn newidle_gate_open(overloaded: bool, avg_idle: u64, sd: Option<&SchedDomain>) -> bool {
    overloaded && sd.is_none_or(|sd| avg_idle >= sd.max_newidle_lb_cost)
}

impl NewidleOutcome {
    /// Nothing pulled, no domain balanced, `next_balance` = `jiffies + HZ`.
    fn nothing(jiffies: u64, p: &LbParams) -> NewidleOutcome {
        NewidleOutcome {
            pulled: 0,
            last: None,
            domains_tried: 0,
            next_balance: jiffies + p.hz,
            cost: 0,
        }
    }
}

/// `update_next_balance(sd, &next_balance)` (kernel/sched/fair.c, v6.11) for `this_cpu`'s
/// domain at `level`, as newidle balance (an idle CPU) computes it; the interval as the
/// domain keeps it ([`super::sd_balance_interval`]).
#[inline(always)]
fn update_next_balance(
    doms: &mut SchedDomains,
    p: &LbParams,
    this_cpu: usize,
    level: usize,
    next: &mut u64,
) {
    let sd = &mut doms.cpus[this_cpu][level];
    let interval = super::sd_balance_interval(sd, false, p);
    *next = (*next).min(sd.last_balance + interval);
}
