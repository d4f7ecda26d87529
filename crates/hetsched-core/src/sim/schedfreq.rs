//! The `sched` governor (seed 004, RFCv7; [`crate::cpufreq::schedfreq`]) in the engine:
//! the scheduler hooks that set capacity requests (read in the Kirin 950 EAS backport of
//! the series, v4.1.18: `update_capacity_of()` at a CFS wake-up or fork enqueue, at a CFS
//! sleep, after a load balance moved tasks; `sched_freq_tick()` at every tick;
//! `sched_rt_update_capacity_req()` at the RT tick and when a CPU runs out of RT work),
//! `update_fdomain_capacity_request()`, and the slow path: the policy's irq_work wakes its
//! `kschedfreq:N` kthread (SCHED_FIFO 50, bound to the policy's CPUs), which asks the
//! driver for the latest request, sleeps through the transition, and sleeps until the
//! throttle ends (`finish_last_request()`) before serving a newer one.
//!
//! Simplifications: every driver is slow (no driver of the time set the series'
//! `CPUFREQ_DRIVER_FAST`; `cpufreq.kthread=none` starts each transition at the request
//! instead); no DL requests (no DL average in the backport); the RT request when a CPU
//! runs out of RT work is made at the RT dequeue that empties it (the kernel makes it in
//! the next `pick_next_task_rt()`); `arch_scale_freq_capacity()` is the CPU's
//! `cur × 1024 / max`, whatever `pelt.frequency_invariance` says (the series needs it).

use crate::cpufreq::freq_table::FreqTable;
use crate::cpufreq::schedfreq::{capacity_to_freq, ReqClass, RtAvg, SchedCapacityReqs};
use crate::sim::kthread::{Kthread, KthreadKind, KthreadPhase};
use crate::sim::*;
use crate::trace::TraceEvent;

/// One policy's governor data (`struct gov_data`).
#[derive(Debug, Clone, Copy)]
pub(in crate::sim) struct SchedFreqPolicy {
    /// `requested_freq` (kHz; 0 before the first request).
    pub requested_freq: u64,
    /// `throttle`: no new transition before it.
    pub throttle: Nanos,
    /// The kthread's `last_request`.
    pub last_request: u64,
    /// `kschedfreq:N`.
    pub kthread: Option<Kthread>,
    /// A transition is in flight.
    pub ongoing: bool,
}

/// The governor across the policies.
#[derive(Debug, Clone)]
pub(in crate::sim) struct SchedFreqEngine {
    /// Per CPU: the capacity requests.
    pub reqs: Vec<SchedCapacityReqs>,
    /// Per CPU: `rq->rt_avg`.
    pub rt_avg: Vec<RtAvg>,
    /// Per performance domain.
    pub tables: Vec<FreqTable>,
    /// Per performance domain.
    pub pols: Vec<SchedFreqPolicy>,
    /// `sched_avg_period()` (ns).
    pub avg_period: Nanos,
    /// `throttle_nsec`.
    pub throttle_ns: Nanos,
}

impl SchedFreqEngine {
    /// `cpufreq_sched_policy_init()` + `GOV_START` for every policy: requests zeroed.
    pub(in crate::sim) fn new(
        p: &crate::platform::Platform,
        o: &crate::options::SchedGovOptions,
        em: &crate::energy::em::EnergyModel,
    ) -> Self {
        let n = p.nr_cpus();
        SchedFreqEngine {
            reqs: vec![SchedCapacityReqs::default(); n],
            rt_avg: vec![RtAvg::default(); n],
            tables: p
                .perf_domains
                .iter()
                .enumerate()
                .map(|(i, pd)| FreqTable::new(pd, em.pds.get(i).and_then(Option::as_ref)))
                .collect(),
            pols: vec![
                SchedFreqPolicy {
                    requested_freq: 0,
                    throttle: 0,
                    last_request: 0,
                    kthread: None,
                    ongoing: false,
                };
                p.perf_domains.len()
            ],
            avg_period: o.sched_time_avg_ms * 1_000_000 / 2,
            throttle_ns: o.throttle_nsec,
        }
    }
}

impl Sim<'_> {
    /// `arch_scale_freq_capacity(NULL, cpu)`: `cur × 1024 / max` of the CPU.
    fn sf_freq_scale(&self, cpu: usize) -> u64 {
        let rq = &self.rqs[cpu];
        (rq.freq_khz << 10) / rq.max_freq_khz.max(1)
    }

    /// The `kschedfreq:N` kthreads: SCHED_FIFO 50, bound to the policy's CPUs, asleep.
    pub(in crate::sim) fn spawn_schedfreq_kthreads(&mut self) {
        if self.cpufreq.schedfreq.is_none()
            || self.s.options.cpufreq.kthread != crate::options::KthreadModel::Thread
        {
            return;
        }
        for pd in 0..self.p.perf_domains.len() {
            let cpus = self.p.perf_domains[pd].cpus.clone();
            let first = cpus.iter().copied().min().unwrap_or(0);
            let tid = self.spawn_kthread(
                format!("kschedfreq:{first}"),
                KthreadKind::SchedFreq(pd),
                SchedPolicy::Fifo,
                Class::Rt,
                rtq::rt_prio(50),
                DlEntity::default(),
                CpuSet::from_cpus(&cpus),
                first,
            );
            if let Some(sf) = self.cpufreq.schedfreq.as_deref_mut() {
                sf.pols[pd].kthread = Some(Kthread {
                    tid,
                    phase: KthreadPhase::Idle,
                    more: false,
                });
            }
        }
    }

    /// `update_capacity_of(cpu)`: the CFS request from `cpu_util()` on the CPU's scale.
    pub(in crate::sim) fn schedfreq_update_capacity_of(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        now: Nanos,
    ) {
        if self.cpufreq.schedfreq.is_none() {
            return;
        }
        let cap = self.rqs[cpu].cap.max(1);
        let util = self.rqs[cpu].cfs.avg.util_avg.min(cap);
        self.schedfreq_set_capacity(out, cpu, ReqClass::Cfs, true, util * 1024 / cap, now);
    }

    /// A CFS task slept on `cpu`: a new request while CFS tasks remain; else the CFS
    /// request drops to 0 with no frequency request.
    pub(in crate::sim) fn schedfreq_cfs_sleep(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        now: Nanos,
    ) {
        if self.cpufreq.schedfreq.is_none() {
            return;
        }
        if self.rqs[cpu].cfs.nr_running > 0 {
            self.schedfreq_update_capacity_of(out, cpu, now);
        } else {
            self.schedfreq_set_capacity(out, cpu, ReqClass::Cfs, false, 0, now);
        }
    }

    /// `set_{cfs,rt}_cpu_capacity()` → `update_cpu_capacity_request()`.
    fn schedfreq_set_capacity(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        class: ReqClass,
        request: bool,
        capacity: u64,
        now: Nanos,
    ) {
        let Some(sf) = self.cpufreq.schedfreq.as_deref_mut() else {
            return;
        };
        let Some((old, new)) = sf.reqs[cpu].set(class, capacity) else {
            return;
        };
        let r = sf.reqs[cpu];
        if out.any.power {
            let ev = TraceEvent::CpufreqSchedUpdateCapacity {
                cpu: cpu as u32,
                request,
                cfs: r.cfs,
                rt: r.rt,
                dl: r.dl,
                total: old,
                new_total: new,
            };
            out.emit(&self.ctx(cpu, now), &ev, g_power);
        }
        if request {
            self.update_fdomain_capacity_request(out, cpu, now);
        }
    }

    /// `update_fdomain_capacity_request(cpu)`: the policy's highest total to an OPP; a new
    /// one raises the policy's irq_work for its kthread.
    fn update_fdomain_capacity_request(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        let pd = self.p.cpus[cpu].perf_domain;
        let Some(sf) = self.cpufreq.schedfreq.as_deref_mut() else {
            return;
        };
        let capacity = self.p.perf_domains[pd]
            .cpus
            .iter()
            .map(|&c| sf.reqs[c].total)
            .max()
            .unwrap_or(0);
        let freq_new = capacity_to_freq(&sf.tables[pd], capacity);
        let prev = sf.pols[pd].requested_freq;
        if out.any.power {
            let ev = TraceEvent::CpufreqSchedRequestOpp {
                cpu: cpu as u32,
                capacity,
                freq_new,
                requested_freq: prev,
            };
            out.emit(&self.ctx(cpu, now), &ev, g_power);
        }
        let Some(sf) = self.cpufreq.schedfreq.as_deref_mut() else {
            return;
        };
        if freq_new == prev {
            return;
        }
        sf.pols[pd].requested_freq = freq_new;
        if sf.pols[pd].kthread.is_some() {
            // irq_work_queue_on(&gd->irq_work, cpu): after this operation
            self.q.push(
                now,
                Ev::IrqWork {
                    pd: pd as u32,
                    cpu: cpu as u32,
                },
            );
        } else if !sf.pols[pd].ongoing {
            self.schedfreq_driver_target(pd, freq_new, now);
        }
    }

    /// `cpufreq_sched_irq_work()`: `wake_up_process(gd->task)`.
    pub(in crate::sim) fn schedfreq_irq_work(
        &mut self,
        out: &mut Out<'_, '_>,
        pd: usize,
        cpu: usize,
        now: Nanos,
    ) {
        let Some(kt) = self
            .cpufreq
            .schedfreq
            .as_deref_mut()
            .and_then(|sf| sf.pols[pd].kthread.as_mut())
        else {
            return;
        };
        if kt.phase != KthreadPhase::Idle {
            return; // running or asleep in the driver: it reads the request when it loops
        }
        kt.phase = KthreadPhase::Work;
        let tid = kt.tid;
        self.try_to_wake_up(out, tid, now, Some(cpu));
    }

    /// `cpufreq_sched_try_driver_target()`: the transition starts.
    fn schedfreq_driver_target(&mut self, pd: usize, freq: u64, now: Nanos) {
        let cur = self.cpufreq.policies[pd].gov.cur();
        if let crate::cpufreq::governor::GovernorState::Timed { in_flight, .. } =
            &mut self.cpufreq.policies[pd].gov
        {
            *in_flight = Some(freq);
        }
        if let Some(sf) = self.cpufreq.schedfreq.as_deref_mut() {
            sf.pols[pd].ongoing = true;
        }
        // __cpufreq_driver_target() returns at once for the current frequency
        let lat = if freq == cur {
            0
        } else {
            self.cpufreq.policies[pd].transition_latency_ns
        };
        self.q.push(now + lat, Ev::FreqApply { pd: pd as u32 });
    }

    /// A transition of `pd` completed: the throttle starts; the kthread waiting in the
    /// driver is woken (without one, a newer request starts now). Returns whether the
    /// transition was this governor's.
    pub(in crate::sim) fn schedfreq_transition_done(
        &mut self,
        out: &mut Out<'_, '_>,
        pd: usize,
        now: Nanos,
    ) -> bool {
        let Some(sf) = self.cpufreq.schedfreq.as_deref_mut() else {
            return false;
        };
        let pol = &mut sf.pols[pd];
        pol.ongoing = false;
        pol.throttle = now + sf.throttle_ns;
        match pol.kthread.as_mut() {
            Some(kt) => {
                kt.phase = KthreadPhase::Done;
                let tid = kt.tid;
                self.kthread_transition_wake(out, tid, now);
            }
            None => {
                let (req, cur) = (pol.requested_freq, self.cpufreq.policies[pd].gov.cur());
                if req != cur {
                    self.schedfreq_driver_target(pd, req, now);
                }
            }
        }
        true
    }

    /// `cpufreq_sched_thread()`'s loop once its CPU time is spent: an unchanged request
    /// sleeps; a throttled one sleeps until the throttle ends (`finish_last_request()`);
    /// else the driver is asked and the thread sleeps through the transition.
    pub(in crate::sim) fn schedfreq_thread_step(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        pd: usize,
        now: Nanos,
    ) {
        let Some(sf) = self.cpufreq.schedfreq.as_deref_mut() else {
            return;
        };
        let pol = &mut sf.pols[pd];
        let new_request = pol.requested_freq;
        let set = |pol: &mut SchedFreqPolicy, ph| {
            if let Some(kt) = pol.kthread.as_mut() {
                kt.phase = ph;
            }
        };
        if new_request == pol.last_request {
            set(pol, KthreadPhase::Idle);
            return self.kthread_sleep(out, cpu, tid, now);
        }
        if now < pol.throttle {
            let until = pol.throttle;
            set(pol, KthreadPhase::Work);
            if out.any.power {
                let rem = ((until - now) / 1000) as i64;
                let ev = TraceEvent::CpufreqSchedThrottled { rem };
                out.emit(&self.ctx(cpu, now), &ev, g_power);
            }
            return self.kthread_sleep_until(out, cpu, tid, now, until);
        }
        pol.last_request = new_request;
        set(pol, KthreadPhase::Wait);
        self.schedfreq_driver_target(pd, new_request, now);
        self.kthread_sleep(out, cpu, tid, now);
    }

    /// `sched_freq_tick(cpu)`: a CPU below its maximum whose current capacity is under its
    /// requests (with `cpu_util()` for CFS) asks for the maximum.
    pub(in crate::sim) fn sched_freq_tick(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        now: Nanos,
    ) {
        let Some(sf) = self.cpufreq.schedfreq.as_deref() else {
            return;
        };
        let cap_orig = self.rqs[cpu].cap;
        let cap_curr = (cap_orig * self.sf_freq_scale(cpu)) >> 10;
        if cap_curr == cap_orig {
            return;
        }
        let util = self.rqs[cpu].cfs.avg.util_avg.min(cap_orig);
        if cap_curr < sf.reqs[cpu].sum_with_cfs(util) {
            self.schedfreq_set_capacity(out, cpu, ReqClass::Cfs, true, 1024, now);
        }
    }

    /// `sched_rt_avg_update(rq, delta)` from `update_curr_rt()`.
    pub(in crate::sim) fn schedfreq_rt_accrue(&mut self, cpu: usize, delta: Nanos) {
        let scale = self.sf_freq_scale(cpu);
        if let Some(sf) = self.cpufreq.schedfreq.as_deref_mut() {
            sf.rt_avg[cpu].accrue(delta, scale);
        }
    }

    /// `sched_rt_update_capacity_req(rq)`: the RT request from `rt_avg`.
    pub(in crate::sim) fn sched_rt_update_capacity_req(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        now: Nanos,
    ) {
        let Some(sf) = self.cpufreq.schedfreq.as_deref_mut() else {
            return;
        };
        let period = sf.avg_period;
        let used = sf.rt_avg[cpu].used(now, period);
        self.schedfreq_set_capacity(out, cpu, ReqClass::Rt, true, used, now);
    }
}
