//! The interactive governor in the engine (drivers/cpufreq/cpufreq_interactive.c, AOSP
//! android-3.10 era): `GOV_START` (`cpufreq_interactive_timer_start()` per CPU), the
//! deferrable per-CPU `cpu_timer` whose softirq runs the sample
//! ([`crate::cpufreq::interactive::CpuInfo::sample`]), the non-deferrable `cpu_slack_timer`
//! armed while a CPU is above the minimum, the idle notifier (`IDLE_START` re-arms the
//! timer of a CPU idling above the minimum, `IDLE_END` runs an overdue sample), the
//! `CPUFREQ_POSTCHANGE` notifier (`update_load()` of every CPU of the policy at the old
//! speed), and the `cfinteractive` kthread (SCHED_FIFO 99, unbound) that takes each
//! requested policy to the highest `target_freq` of its CPUs (RELATION_H) through the
//! driver, which takes the transition latency.
//!
//! `cpufreq.interactive.version=android_4_4` runs the android-4.4-era form
//! (NotKit/kernel-4.4-alps@ed9efc79, MTK `#ifdef`s left out): its sample
//! ([`crate::cpufreq::interactive::CpuInfo::sample_v4_4`]) always re-arms the timer, the
//! idle notifier handles only `IDLE_END`, and the kthread serves each CPU of the mask with
//! `cpufreq_interactive_adjust_cpu()`, which also sets the policy's validate times.
//!
//! The sysfs writes to `boost` and `boostpulse` that Android's PowerHAL makes on input
//! events are events of the run (`Ev::InteractiveWrite`, `cpufreq.interactive.boost_at_us`
//! and `boostpulse_at_us`), each a `store_boost()` / `store_boostpulse()` at its time: no
//! writer thread is modelled, so a write takes no CPU time and is made on CPU 0.

use crate::cpufreq::freq_table::{FreqTable, Relation};
use crate::cpufreq::interactive::{
    self as ia_gov, CpuInfo, InteractiveTunables, InteractiveVersion, Verdict,
};
use crate::sim::kthread::{Kthread, KthreadKind, KthreadPhase};
use crate::sim::timer::{IdleNotify, TimerFn};
use crate::sim::*;
use crate::trace::{InteractiveEval, TraceEvent};

/// The governor's state across the policies (its tunables are the same for each).
#[derive(Debug, Clone)]
pub(in crate::sim) struct InteractiveEngine {
    /// Which AOSP form.
    pub version: InteractiveVersion,
    /// The tunables.
    pub tun: InteractiveTunables,
    /// Per CPU.
    pub cpus: Vec<CpuInfo>,
    /// Per performance domain.
    pub tables: Vec<FreqTable>,
    /// `speedchange_cpumask`.
    pub mask: CpuSet,
    /// The `cfinteractive` kthread.
    pub thread: Option<Kthread>,
    /// The CPUs of the mask it took and has yet to serve (`tmp_mask`), last first.
    pub todo: Vec<usize>,
    /// The CPU whose policy's transition is in flight.
    pub in_transition: Option<usize>,
    /// android-4.4: `cpufreq_interactive_adjust_cpu()`'s `max_freq` and `hvt` for the
    /// transition in flight, applied when `__cpufreq_driver_target()` returns.
    pub adjust: Option<(u64, u64)>,
    /// The run's sysfs writes, in the order they are queued (`Ev::InteractiveWrite`).
    pub writes: Vec<(u64, SysfsWrite)>,
}

/// A write to one of the governor's sysfs files during the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::sim) enum SysfsWrite {
    /// `boost` (`store_boost()`): on or off.
    Boost(bool),
    /// `boostpulse` (`store_boostpulse()`).
    Boostpulse,
}

impl InteractiveEngine {
    /// The governor for the platform's policies.
    pub(in crate::sim) fn new(
        p: &crate::platform::Platform,
        o: &crate::options::InteractiveOptions,
        em: &crate::energy::em::EnergyModel,
    ) -> Self {
        let tun: InteractiveTunables = o.tunables();
        // `boost` writes first, then `boostpulse` writes: the queue keeps this order at
        // equal times
        let writes = o
            .boost_at_us
            .iter()
            .map(|&[t, v]| (t, SysfsWrite::Boost(v != 0)))
            .chain(
                o.boostpulse_at_us
                    .iter()
                    .map(|&t| (t, SysfsWrite::Boostpulse)),
            )
            .collect();
        let tables = p
            .perf_domains
            .iter()
            .enumerate()
            .map(|(i, pd)| FreqTable::new(pd, em.pds.get(i).and_then(Option::as_ref)))
            .collect();
        InteractiveEngine {
            version: o.version,
            tun,
            cpus: vec![CpuInfo::default(); p.nr_cpus()],
            tables,
            mask: CpuSet::EMPTY,
            thread: None,
            todo: Vec::new(),
            in_transition: None,
            adjust: None,
            writes,
        }
    }
}

impl Sim<'_> {
    fn ia(&self) -> Option<&InteractiveEngine> {
        self.cpufreq.interactive.as_deref()
    }

    fn ia_mut(&mut self) -> Option<&mut InteractiveEngine> {
        self.cpufreq.interactive.as_deref_mut()
    }

    /// `get_cpu_idle_time()` of `cpu` at `now`: (idle µs, now µs).
    fn idle_us(&self, cpu: usize, now: Nanos) -> (u64, u64) {
        debug_assert!(self.cpustat_read(), "cpustat kept for its readers only");
        let st = &self.cpustat[cpu];
        let open = st.idle_entry.map_or(0, |t| now.saturating_sub(t));
        ((st.idle_sleeptime + open) / 1000, now / 1000)
    }

    /// The `cfinteractive` kthread: SCHED_FIFO `MAX_RT_PRIO - 1`, any CPU, asleep.
    pub(in crate::sim) fn spawn_speedchange_kthread(&mut self) {
        if self.ia().is_none()
            || self.s.options.cpufreq.kthread != crate::options::KthreadModel::Thread
        {
            return;
        }
        let all = CpuSet::from_cpus(&(0..self.p.nr_cpus()).collect::<Vec<_>>());
        let tid = self.spawn_kthread(
            "cfinteractive".to_string(),
            KthreadKind::Speedchange,
            SchedPolicy::Fifo,
            Class::Rt,
            0,
            DlEntity::default(),
            all,
            0,
        );
        if let Some(ia) = self.ia_mut() {
            ia.thread = Some(Kthread {
                tid,
                phase: KthreadPhase::Idle,
                more: false,
            });
        }
    }

    /// `GOV_START` at `now`: each CPU's `target_freq` and floor at `policy->cur`, its
    /// validate times now, its timers started (`cpufreq_interactive_timer_start()`).
    pub(in crate::sim) fn interactive_start(&mut self, now: Nanos) {
        if self.ia().is_none() {
            return;
        }
        for cpu in 0..self.p.nr_cpus() {
            let pd = self.p.cpus[cpu].perf_domain;
            let cur = self.cpufreq.policies[pd].gov.cur();
            let ia = self
                .cpufreq
                .interactive
                .as_deref_mut()
                .unwrap_or_else(|| unreachable!());
            let c = &mut ia.cpus[cpu];
            c.target_freq = cur;
            c.floor_freq = cur;
            c.floor_validate_time = now / 1000;
            c.hispeed_validate_time = now / 1000;
            // android-4.4's names for them, the policy's and the CPU's
            c.pol_floor_val_time = now / 1000;
            c.loc_floor_val_time = now / 1000;
            c.pol_hispeed_val_time = now / 1000;
            c.loc_hispeed_val_time = now / 1000;
            self.interactive_timer_resched(cpu, now);
        }
    }

    /// `cpufreq_interactive_timer_resched()` on `cpu`: a new window; `cpu_timer` in
    /// `timer_rate`; the slack timer `timer_slack` later while above the minimum.
    fn interactive_timer_resched(&mut self, cpu: usize, now: Nanos) {
        let (idle, now_us) = self.idle_us(cpu, now);
        let pd = self.p.cpus[cpu].perf_domain;
        let Some(ia) = self.ia_mut() else { return };
        ia.cpus[cpu].restart_window(idle, now_us);
        let (rate, slack) = (ia.tun.timer_rate, ia.tun.timer_slack);
        let above_min = ia.cpus[cpu].target_freq > ia.tables[pd].min;
        let mut expires = self.jiffies(now) + self.usecs_to_jiffies(rate);
        self.mod_timer(cpu, TimerFn::InteractiveCpu, expires, true);
        if slack >= 0 && above_min {
            expires += self.usecs_to_jiffies(slack as u64);
            self.mod_timer(cpu, TimerFn::InteractiveSlack, expires, false);
        }
    }

    /// `cpufreq_interactive_timer(cpu)` in `cpu`'s softirq at `now`.
    pub(in crate::sim) fn cpufreq_interactive_timer(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        now: Nanos,
    ) {
        let (idle, now_us) = self.idle_us(cpu, now);
        let pd = self.p.cpus[cpu].perf_domain;
        let cur = self.cpufreq.policies[pd].gov.cur();
        let Some(ia) = self.cpufreq.interactive.as_deref_mut() else {
            return;
        };
        let s = match ia.version {
            InteractiveVersion::Android3_10 => {
                let boosted = ia.tun.boosted_at(now_us);
                ia.cpus[cpu].sample(&ia.tun, &ia.tables[pd], cur, idle, now_us, boosted)
            }
            InteractiveVersion::Android4_4 => {
                ia.cpus[cpu].sample_v4_4(&mut ia.tun, &ia.tables[pd], cur, idle, now_us)
            }
        };
        let kind = match s.verdict {
            Verdict::Target => Some(InteractiveEval::Target),
            Verdict::Already => Some(InteractiveEval::Already),
            Verdict::NotYet => Some(InteractiveEval::NotYet),
            Verdict::None => None,
        };
        if s.verdict == Verdict::Target {
            ia.mask.set(cpu);
        }
        if let (Some(kind), true) = (kind, out.any.power) {
            let ev = TraceEvent::CpufreqInteractiveLoadeval {
                kind,
                cpu_id: cpu as u32,
                load: s.load,
                curtarg: s.cur_target,
                curactual: cur,
                newtarg: s.new_freq,
            };
            out.emit(&self.ctx(cpu, now), &ev, g_power);
        }
        if s.verdict == Verdict::Target {
            self.speedchange_wake(out, cpu, now);
        }
        if s.rearm && !self.timer_pending(cpu, TimerFn::InteractiveCpu) {
            self.interactive_timer_resched(cpu, now);
        }
    }

    /// Queues the run's sysfs writes at their times after the workload's start `t0`.
    pub(in crate::sim) fn interactive_schedule_writes(&mut self, t0: Nanos) {
        let Some(ia) = self.ia() else { return };
        let at: Vec<Nanos> = ia
            .writes
            .iter()
            .map(|w| t0.saturating_add(w.0.saturating_mul(1000)))
            .collect();
        for (i, at) in at.into_iter().enumerate() {
            self.q.push(at, Ev::InteractiveWrite { i: i as u32 });
        }
    }

    /// The `i`-th sysfs write, at `now`, from CPU 0: `store_boost()` or
    /// `store_boostpulse()`. android-4.4: a write of 1 or a pulse boosts the CPUs only if
    /// `boosted` is false, and a write of 0 ends a pulse (`boostpulse_endtime = now`).
    pub(in crate::sim) fn interactive_write(
        &mut self,
        out: &mut Out<'_, '_>,
        i: usize,
        now: Nanos,
    ) {
        const CPU: usize = 0;
        let now_us = now / 1000;
        let Some(ia) = self.ia_mut() else { return };
        let Some(&(_, w)) = ia.writes.get(i) else {
            return;
        };
        let v4_4 = ia.version == InteractiveVersion::Android4_4;
        let ev = match w {
            SysfsWrite::Boostpulse => {
                ia.tun.boostpulse_endtime = now_us.saturating_add(ia.tun.boostpulse_duration);
                TraceEvent::CpufreqInteractiveBoost { s: "pulse" }
            }
            SysfsWrite::Boost(true) => {
                ia.tun.boost = true;
                TraceEvent::CpufreqInteractiveBoost { s: "on" }
            }
            SysfsWrite::Boost(false) => {
                ia.tun.boost = false;
                if v4_4 {
                    ia.tun.boostpulse_endtime = now_us;
                }
                TraceEvent::CpufreqInteractiveUnboost { s: "off" }
            }
        };
        let boost = w != SysfsWrite::Boost(false) && !(v4_4 && ia.tun.boosted);
        if out.any.power {
            out.emit(&self.ctx(CPU, now), &ev, g_power);
        }
        if boost {
            self.cpufreq_interactive_boost(out, CPU, now);
        }
    }

    /// `cpufreq_interactive_boost()` from `cpu` at `now` ([`ia_gov::boost`], android-4.4
    /// [`ia_gov::boost_v4_4`]): the raised CPUs join `speedchange_cpumask` and the
    /// speed-change thread is woken if any was.
    fn cpufreq_interactive_boost(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        let p = self.p;
        let Some(ia) = self.ia_mut() else { return };
        let hs = ia.tun.hispeed_freq;
        let tables = &ia.tables;
        let hispeed = |c: usize| {
            if hs == 0 {
                tables[p.cpus[c].perf_domain].max
            } else {
                hs
            }
        };
        let raised = match ia.version {
            InteractiveVersion::Android3_10 => ia_gov::boost(&mut ia.cpus, hispeed, now / 1000),
            InteractiveVersion::Android4_4 => {
                ia_gov::boost_v4_4(&mut ia.tun, &mut ia.cpus, hispeed, now / 1000)
            }
        };
        for &c in &raised {
            ia.mask.set(c);
        }
        if !raised.is_empty() {
            self.speedchange_wake(out, cpu, now);
        }
    }

    /// `wake_up_process(speedchange_task)` from `cpu`; without the kthread the requests
    /// are served at once.
    fn speedchange_wake(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        let Some(ia) = self.ia_mut() else { return };
        match ia.thread {
            Some(kt) if kt.phase == KthreadPhase::Idle => {
                if let Some(t) = ia.thread.as_mut() {
                    t.phase = KthreadPhase::Work;
                }
                self.try_to_wake_up(out, kt.tid, now, Some(cpu));
            }
            Some(_) => {} // busy: it takes the mask again before sleeping
            None => {
                self.speedchange_serve(out, now);
            }
        }
    }

    /// The idle notifier on `cpu` (arch_cpu_idle_enter()/_exit()).
    pub(in crate::sim) fn idle_notifier(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        ev: IdleNotify,
        now: Nanos,
    ) {
        let pd = self.p.cpus[cpu].perf_domain;
        let Some(ia) = self.ia() else { return };
        let pending = self.timer_pending(cpu, TimerFn::InteractiveCpu);
        match ev {
            // android-4.4 registers cpufreq_interactive_idle_end() only
            IdleNotify::Start if ia.version == InteractiveVersion::Android4_4 => {}
            IdleNotify::Start => {
                if ia.cpus[cpu].target_freq != ia.tables[pd].min && !pending {
                    self.interactive_timer_resched(cpu, now);
                }
            }
            IdleNotify::End => {
                if !pending {
                    self.interactive_timer_resched(cpu, now);
                } else if self
                    .timer_expires(cpu, TimerFn::InteractiveCpu)
                    .is_some_and(|e| self.jiffies(now) >= e)
                {
                    self.del_timer(cpu, TimerFn::InteractiveCpu);
                    self.del_timer(cpu, TimerFn::InteractiveSlack);
                    self.cpufreq_interactive_timer(out, cpu, now);
                }
            }
        }
    }

    /// `CPUFREQ_POSTCHANGE` of `pd`, called before the CPUs' speed changes (the notifier
    /// runs before `policy->cur` is updated): every CPU of the policy accounts its active
    /// time so far at the old speed.
    pub(in crate::sim) fn interactive_postchange(&mut self, pd: usize, now: Nanos) {
        if self.ia().is_none() {
            return;
        }
        let first = self.p.perf_domains[pd].cpus[0];
        let cur = self.rqs[first].freq_khz;
        for i in 0..self.p.perf_domains[pd].cpus.len() {
            let cpu = self.p.perf_domains[pd].cpus[i];
            let (idle, now_us) = self.idle_us(cpu, now);
            if let Some(ia) = self.ia_mut() {
                match ia.version {
                    InteractiveVersion::Android3_10 => ia.cpus[cpu].update_load(idle, now_us, cur),
                    InteractiveVersion::Android4_4 => {
                        ia.cpus[cpu].update_load_u64(idle, now_us, cur)
                    }
                }
            }
        }
    }

    /// The speed-change work: takes the mask (when nothing is left of the last) and asks
    /// the driver for the next policy whose CPUs' highest target differs from `cur`.
    /// Returns whether a transition started (the kthread then sleeps until it completes).
    pub(in crate::sim) fn speedchange_serve(&mut self, out: &mut Out<'_, '_>, now: Nanos) -> bool {
        loop {
            let Some(ia) = self.ia_mut() else {
                return false;
            };
            if ia.todo.is_empty() {
                ia.todo = ia.mask.iter().collect();
                ia.todo.reverse();
                ia.mask = CpuSet::EMPTY;
            }
            let Some(cpu) = ia.todo.pop() else {
                return false;
            };
            let p = self.p;
            let pd = p.cpus[cpu].perf_domain;
            let pcpus = &p.perf_domains[pd].cpus;
            let cur = self.cpufreq.policies[pd].gov.cur();
            let ia = self
                .cpufreq
                .interactive
                .as_deref_mut()
                .unwrap_or_else(|| unreachable!());
            let v4_4 = ia.version == InteractiveVersion::Android4_4;
            // android-4.4: cpufreq_interactive_adjust_cpu() → _get_policy_info()
            let (max_freq, hvt, fvt) = ia_gov::get_policy_info(&ia.cpus, pcpus);
            if v4_4 {
                for &c in pcpus {
                    ia.cpus[c].pol_floor_val_time = fvt;
                }
            }
            let target = ia.tables[pd].resolve(max_freq, Relation::H, false);
            if target != cur {
                ia.in_transition = Some(cpu);
                if v4_4 {
                    ia.adjust = Some((max_freq, hvt));
                }
                if let crate::cpufreq::governor::GovernorState::Timed { in_flight, .. } =
                    &mut self.cpufreq.policies[pd].gov
                {
                    *in_flight = Some(target);
                }
                let at = now + self.cpufreq.policies[pd].transition_latency_ns;
                self.q.push(at, Ev::FreqApply { pd: pd as u32 });
                return true;
            }
            // no transition: __cpufreq_driver_target() returns at once when the OPP of
            // max_freq is cur
            let targ = if v4_4 {
                if max_freq != cur {
                    for &c in pcpus {
                        ia.cpus[c].pol_hispeed_val_time = hvt;
                    }
                }
                max_freq
            } else {
                ia.cpus[cpu].target_freq
            };
            self.trace_setspeed(out, cpu, pd, targ, now);
        }
    }

    /// `__cpufreq_driver_target()` returned to the speed-change work serving `cpu`: the
    /// setspeed trace; android-4.4 also gives every CPU of the policy the `hvt` of the
    /// served request as `pol_hispeed_val_time`, and traces its `max_freq`.
    fn speedchange_driver_returned(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        let p = self.p;
        let pd = p.cpus[cpu].perf_domain;
        let Some(ia) = self.ia_mut() else { return };
        let targ = match ia.adjust.take() {
            Some((max_freq, hvt)) => {
                for &c in &p.perf_domains[pd].cpus {
                    ia.cpus[c].pol_hispeed_val_time = hvt;
                }
                max_freq
            }
            None => ia.cpus[cpu].target_freq,
        };
        self.trace_setspeed(out, cpu, pd, targ, now);
    }

    /// The driver's transition of `pd` completed (`policy->cur` is new): the kthread
    /// waiting in `__cpufreq_driver_target()` is woken; without it the next request is
    /// served now. Returns whether the transition was the governor's.
    pub(in crate::sim) fn interactive_transition_done(
        &mut self,
        out: &mut Out<'_, '_>,
        pd: usize,
        now: Nanos,
    ) -> bool {
        let Some(ia) = self.ia_mut() else {
            return false;
        };
        let Some(cpu) = ia.in_transition else {
            return false;
        };
        if self.p.cpus[cpu].perf_domain != pd {
            return false;
        }
        let Some(ia) = self.ia_mut() else {
            return false;
        };
        match ia.thread.as_mut() {
            Some(kt) => {
                kt.phase = KthreadPhase::Done;
                let tid = kt.tid;
                self.kthread_transition_wake(out, tid, now);
            }
            None => {
                ia.in_transition = None;
                self.speedchange_driver_returned(out, cpu, now);
                self.speedchange_serve(out, now);
            }
        }
        true
    }

    /// The `cfinteractive` kthread's CPU time is spent: after a completed transition it
    /// traces it; then it serves the next request or sleeps.
    pub(in crate::sim) fn speedchange_op_done(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
    ) {
        let Some(ia) = self.ia_mut() else { return };
        if let Some(c) = ia.in_transition.take() {
            self.speedchange_driver_returned(out, c, now);
        }
        let waits = self.speedchange_serve(out, now);
        if let Some(kt) = self.ia_mut().and_then(|ia| ia.thread.as_mut()) {
            kt.phase = if waits {
                KthreadPhase::Wait
            } else {
                KthreadPhase::Idle
            };
        }
        self.kthread_sleep(out, cpu, tid, now);
    }

    /// `trace_cpufreq_interactive_setspeed(cpu, targfreq, policy->cur)`: `targfreq` is the
    /// CPU's `target_freq` (android-3.10) or the policy's `max_freq` (android-4.4).
    pub(in crate::sim) fn trace_setspeed(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        pd: usize,
        targfreq: u64,
        now: Nanos,
    ) {
        if !out.any.power {
            return;
        }
        let Some(ia) = self.ia() else { return };
        let ev = TraceEvent::CpufreqInteractiveSetspeed {
            cpu_id: cpu as u32,
            targfreq,
            actualfreq: self.cpufreq.policies[pd].gov.cur(),
        };
        let at = match ia.thread {
            Some(kt) => self.threads[kt.tid].cpu,
            None => cpu,
        };
        out.emit(&self.ctx(at, now), &ev, g_power);
    }
}
