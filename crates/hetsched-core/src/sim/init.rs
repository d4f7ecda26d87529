//! sched_init() and the threads' creation: the runqueues, the workload's threads and
//! resources, and `copy_process()`/`sched_fork()` of one thread (`spawn_thread`).

use crate::sim::*;

/// The SCHED_DEADLINE parameters rt-app's `parse_sched_data()` reads from a task or a
/// phase: `dl-runtime`, `dl-period` (default the runtime), `dl-deadline` (default the
/// period).
pub(in crate::sim) fn dl_entity_of(a: &crate::workload::SchedAttrs) -> DlEntity {
    let rt = a.dl_runtime_us.unwrap_or(0);
    let period = a.dl_period_us.unwrap_or(rt);
    let dl = a.dl_deadline_us.unwrap_or(period);
    DlEntity::new(program::us(rt), program::us(dl), program::us(period))
}

impl<'w> Sim<'w> {
    pub(in crate::sim) fn new(spec: &'w RunSpec, s: Settings, end: Nanos) -> Sim<'w> {
        let p = &spec.platform;
        let w = &spec.workload;
        let n = p.nr_cpus();
        let rqs = (0..n)
            .map(|c| {
                let pd = p.pd_of(c);
                Rq {
                    cfs: CfsRq::default(),
                    rt: RtRq::default(),
                    dl: DlRq::default(),
                    curr: None,
                    clock: pelt::PeltClock::default(),
                    avg_rt: pelt::SchedAvg::default(),
                    avg_dl: pelt::SchedAvg::default(),
                    cap: p.cpus[c].capacity,
                    work_cap: p.cpus[c].work_capacity(),
                    freq_khz: s.fixed_freq_khz[p.cpus[c].perf_domain],
                    max_freq_khz: pd.max_freq_khz,
                    freq_scale: 1024,
                    seg_start: 0,
                    op_gen: 0,
                    next_balance: 0,
                    need_resched: false,
                    seg_start_dl: 0,
                    // idle since boot: nohz_balance_enter_idle() marked its blocked load
                    has_blocked_load: true,
                    last_blocked_load_update_tick: 0,
                    avg_idle: 2 * crate::sched::SYSCTL_SCHED_MIGRATION_COST,
                    // Every CPU went idle (through a newidle pass) 1 ms before the workload
                    // starts, as on a booted board: `sched_balance_find_dst_group_cpu()`
                    // only picks idle CPUs with a non-zero `idle_stamp`.
                    idle_stamp: BOOT_OFFSET - IDLE_BEFORE_START_NS,
                    // sched_init()
                    max_idle_balance_cost: crate::sched::SYSCTL_SCHED_MIGRATION_COST,
                    stop: None,
                    rt_time: 0,
                    // init_rt_rq(): the bandwidth's runtime, RUNTIME_INF without a limit
                    rt_runtime: u64::try_from(s.options.sched.rt_runtime_us)
                        .map_or(RUNTIME_INF, |us| us * 1000),
                    cpupri: crate::policy::rt::MAX_RT_PRIO - 1, // rq_online_rt(): CPUPRI_NORMAL
                    rt_throttled: false,
                    rt_exec_start: 0,
                    // build_sched_domains() → init_sched_groups_capacity(): no pressure yet
                    cpu_capacity: std::cell::Cell::new(p.cpus[c].capacity),
                    cpu_capacity_updated: std::cell::Cell::new(false),
                }
            })
            .collect();
        // The reference's work speed (its capacity unless the platform gives
        // `work_dmips_mhz`): rt-app calibrates on the loop it runs.
        let cap_ref = match w.calibration {
            Calibration::Cpu(c) => p.cpus[c].work_capacity(),
            Calibration::PLoadNs(_) => {
                let max = p.max_capacity();
                p.cpus
                    .iter()
                    .find(|c| c.capacity == max)
                    .map_or(max, |c| c.work_capacity())
            }
        };
        let markers = match s.options.trace.rtapp_markers {
            MarkerChoice::Workload => w.ftrace,
            MarkerChoice::All => FtraceCategories::ALL,
            MarkerChoice::None => FtraceCategories::default(),
        };
        // The programs, flat; their synchronisation resources resolved into `res`.
        let mut res = Resources::default();
        let prog = user::flat::FlatProgram::new(w, n, &mut res);
        let shared_timers = vec![TimerState::default(); prog.nr_shared_timers];
        for b in &mut res.barriers {
            b.waiting = b.participants - 1;
        }
        let view = (0..n)
            .map(|c| CpuView {
                idle: true,
                nr_running: 0,
                cluster: p.cpus[c].cluster,
                capacity: p.cpus[c].capacity,
            })
            .collect();
        let (s_version, s_misfit, s_hz, s_tick) = (
            s.options.balance.version,
            s.options.balance.misfit,
            s.options.sched.hz,
            s.tick_ns,
        );
        let s_sis_util = s.options.fair.sis_util;
        let wake_params = crate::policy::select_fair::FairWakeParams::from_options(&s.options.fair);
        let doms = crate::sched::topology::SchedDomains::build(p, s_version, BOOT_OFFSET / s_tick);
        let sdt = crate::policy::domains::SdTopology::from_sched_domains(&doms);
        let en = energy::EnergyState::new(p, w, &s, &doms, BOOT_OFFSET, end);
        let cpufreq = cpufreq::CpufreqState::new(p, &s, &en.em, BOOT_OFFSET);
        // HMP's domains are the CPU types (LSK 3.10 split them by DT `compatible`): by
        // their speed, which a capacity-blind scheduler still runs the work at
        let caps: Vec<u64> = p.cpus.iter().map(|c| c.work_capacity()).collect();
        let hmp = hmp::HmpState::new(&s.options.hmp, &caps);
        let mut doms = doms;
        if let Some(h) = hmp.as_ref() {
            h.keep_domains_apart(&mut doms);
        }
        let mut sim = Sim {
            en,
            timers: vec![Vec::new(); n],
            cpustat: vec![
                CpuStat {
                    idle_entry: Some(BOOT_OFFSET),
                    ..CpuStat::default()
                };
                n
            ],
            cpufreq,
            stoppers: Vec::new(),
            stop_work: vec![Vec::new(); n],
            p,
            w,
            ue_ver: s.options.pelt.util_est_version,
            s,
            // slots of about the mean time between events, some 1 ms over the number of
            // CPUs (`periodic`, 8 CPUs: 2^17 ns; `large`, 256: 2^12 ns): the pops are the
            // same whatever the slot, only their cost differs
            q: EventQueue::with_slot_bits(20 - n.max(1).ilog2().min(20)),
            rng: Rng::new(spec.seed),
            threads: Vec::new(),
            uthreads: Vec::new(),
            ents: Vec::new(),
            rqs,
            res,
            prog,
            fork_counts: BTreeMap::new(),
            nr_res_blocked: 0,
            doms,
            sdt,
            idle_wakee: vec![Default::default(); n],
            placements: [0; crate::policy::select_fair::WakeReason::ALL.len()],
            distribute_prev: n - 1,
            rt_distribute_prev: vec![0; n],
            rt_period_active: false,
            rt_period_expires: 0,
            lb: crate::policy::lb::LoadBalancer::new(),
            lb_scratch: balance::LbScratch::new(n),
            max_cap_memo: Vec::new(),
            jiffy: 0,
            jiffy_end: 0,
            idle_policy_possible: class::workload_may_use_idle_policy(w),
            wake_params,
            lbp: crate::policy::lb::LbParams {
                sis_util: s_sis_util,
                ..crate::policy::lb::LbParams::new(s_version, s_misfit, u64::from(s_hz), n)
            },
            misfit: vec![0; n],
            active_balance: vec![false; n],
            cfs_stamp: Vec::new(),
            stamp_ctr: 0,
            rd_overload: false,
            nohz_next_balance_j: 0,
            fatal: None,
            dl_total_bw: 0,
            warnings: Vec::new(),
            has_duration: false,
            deadlock_reported: false,
            resched: Vec::new(),
            balance_callbacks: Vec::new(),
            hmp,
            shared_timers,
            cap_ref,
            markers,
            end,
            t0: BOOT_OFFSET,
            idle_names: (0..n).map(|c| format!("swapper/{c}")).collect(),
            migrations: [0; MigrationReason::ALL.len()],
            switches: 0,
            view,
            nohz_kick_pending: false,
            nohz_kick_flags: 0,
            nohz_has_blocked: true,
            nohz_next_blocked_j: 0,
            alive: 0,
            nr_idle: n,
            idle_curr: CpuSet::first_n(n),
            nr_overloaded: 0,
            tick_pending: CpuSet::EMPTY,
            tick_at: 0,
            rtapp_main: None,
            start_barrier: Default::default(),
            t_zero: None,
            user_tids: Vec::new(),
            nr_system: threads_of(&w.tasks[w.first_system_task()..]),
            nr_start_threads: threads_of(&w.tasks[..w.first_system_task()]),
        };
        sim.spawn_stoppers();
        sim.spawn_sugov_kthreads();
        sim.spawn_kworkers();
        sim.spawn_speedchange_kthread();
        sim.spawn_schedfreq_kthreads();
        sim
    }

    /// `create_thread()` of rt-app: a thread of task `ti` named `comm`, not started.
    pub(in crate::sim) fn spawn_thread(&mut self, ti: usize, comm: String, pid: u32) -> usize {
        let (w, s) = (self.w, &self.s);
        let t = &w.tasks[ti];
        let n = self.p.nr_cpus();
        let policy = t.attrs.policy.unwrap_or(w.default_policy);
        let prio_attr = t.attrs.priority;
        let nice = if policy.is_fair() {
            prio_attr.unwrap_or(0).clamp(-20, 19)
        } else {
            0
        };
        let (class, normal_prio) = class_of(policy, nice, prio_attr.unwrap_or(10));
        let affinity = t
            .attrs
            .cpus
            .as_ref()
            .map_or(CpuSet::first_n(n), |c| CpuSet::from_cpus(c));
        let tid = self.threads.len();
        let dl = dl_entity_of(&t.attrs);
        // pthread_setname_np() fails for names over 15 characters: keep the old comm
        let (comm, renamed) = if comm.len() > COMM_MAX {
            ("rt-app".to_string(), true)
        } else {
            (comm, false)
        };
        self.threads.push(Thread {
            pid,
            comm,
            comm0: "rt-app".into(),
            policy,
            nice,
            normal_prio,
            eff_prio: normal_prio,
            class,
            rt_key: (0, 0),
            rr_slice: rtq::rr_timeslice(self.s.options.sched.hz),
            dl,
            dl_key: (0, 0),
            dl_gen: 0,
            dl_inactive_gen: 0,
            dl_inactive_active: false,
            res_blocked: false,
            affinity,
            affinity_gen: 0,
            state: TState::Sleeping,
            cpu: 0,
            wake_gen: 0,
            renamed,
            wakee: Default::default(),
            recent_used_cpu: 0,
            enqueue_migrated: false,
            cfs_fork_placed: false,
            kthread: None,
            uclamp_req: [
                t.attrs.util_min.filter(|v| *v >= 0),
                t.attrs.util_max.filter(|v| *v >= 0),
            ],
            uclamp: energy::task_uclamp(
                class == Class::Rt,
                t.attrs.util_min,
                t.attrs.util_max,
                s.options.rt.util_clamp_min_rt_default,
            ),
            uclamp_on: None,
        });
        let task = self.prog.task(ti);
        self.uthreads.push(user::UserThread::new(
            ti,
            task.unique_timers as usize,
            self.prog.start(ti),
            task.loop_limit(),
        ));
        // v6.12+ custom slices (`fair.custom_slice`); v6.11 keeps sysctl_sched_base_slice
        let slice = t
            .attrs
            .dl_runtime_us
            .filter(|_| policy.is_fair() && s.options.fair.custom_slice)
            .map(|us| (us * 1000).clamp(100_000, 100_000_000))
            .unwrap_or(s.fair.base_slice);
        self.cfs_stamp.push(0);
        let idle = policy == SchedPolicy::Idle;
        self.ents.push(SchedEntity {
            idle,
            ..SchedEntity::new(LoadWeight::for_nice(nice, idle), slice)
        });
        tid
    }
}

/// The threads of `tasks`: their instances.
fn threads_of(tasks: &[crate::workload::TaskSpec]) -> usize {
    tasks.iter().map(|t| t.instances as usize).sum()
}
