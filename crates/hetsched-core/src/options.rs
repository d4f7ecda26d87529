//! User-facing options (all optional, unknown keys rejected) and their resolution into
//! complete, validated [`Settings`] the engine reads.
//!
//! Every option's default reproduces a named kernel version; the defaults as a whole
//! model Linux v6.11 (EEVDF without DELAY_DEQUEUE, util_est v6.8 form, HZ=250) on the
//! baseline placement and balancing of this release. `--set key=value` addresses an option
//! by its dotted path (`fair.variant=cfs`).

use crate::cpufreq::schedutil::{SchedutilVersion, SugovCfsUtil, TransitionDelayVersion};
use crate::energy::em::EmVersion;
use crate::energy::overutilized::OverutilizedGate;
use crate::pelt::UtilEstVersion;
use crate::sched::fair::FairParams;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod dbs;
mod fair;
mod hmp;
mod interactive;
mod profile;
mod schedfreq;
pub use dbs::{ConservativeOptions, OndemandOptions, OndemandVersion};
pub use fair::{FairOptions, TunableScaling, WakeupVariant};
pub use hmp::HmpOptions;
pub use interactive::InteractiveOptions;
use profile::overlay_changes;
pub use profile::KernelProfile;
pub use schedfreq::SchedGovOptions;

/// Errors from options.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OptionsError {
    /// A `--set` argument without `=`.
    #[error("--set {}: expected key=value (for example fair.variant=cfs)", crate::text::one_line(.0))]
    NotKeyValue(String),
    /// An unknown key or a value of the wrong type.
    #[error("--set {}: {}", crate::text::one_line(.arg), crate::text::one_line(.msg))]
    Set {
        /// The argument as given.
        arg: String,
        /// What serde said.
        msg: String,
    },
    /// Options that are individually valid but impossible together or out of range.
    #[error("option {key}: {}", crate::text::one_line(.msg))]
    Invalid {
        /// Dotted key.
        key: &'static str,
        /// What would be accepted.
        msg: String,
    },
}

/// `[sched]`: core scheduler settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SchedOptions {
    /// `CONFIG_HZ`: tick frequency (100, 250, 300 or 1000). Default 250 (arm64 GKI).
    pub hz: u32,
    /// What `__schedule()` does when it picks the task that was running (`repick`).
    pub repick: RepickVersion,
    /// `sched_rt_runtime_us`: RT tasks may run this long per `rt_period_us` on each CPU
    /// before the RT class is throttled for the rest of the period (kernel/sched/rt.c,
    /// `sched_rt_runtime_exceeded()`). -1: no limit.
    pub rt_runtime_us: i64,
    /// `sched_rt_period_us`: the RT bandwidth period.
    pub rt_period_us: u64,
    /// The RT_RUNTIME_SHARE sched feature (kernel/sched/features.h): a CPU out of RT
    /// runtime borrows spare runtime from the other CPUs of its root domain, up to the
    /// whole period (`balance_runtime()` → `do_balance_runtime()`, kernel/sched/rt.c), and
    /// keeps it — so one RT hog with idle neighbours is never throttled. On by default
    /// until v5.10 (commit 2586af1ac187 turned it off); default off, as in v6.11.
    pub rt_runtime_share: bool,
    /// The scheduler knows each CPU's capacity (`arch_scale_cpu_capacity()` from the
    /// device tree's `capacity-dmips-mhz`). `false`: it sees every CPU at 1024, as a kernel
    /// whose device tree gives no capacities, while the work still runs at each CPU's
    /// speed — no asymmetric domains, no misfit, no EAS, capacity-blind wake-up and
    /// balancing (the 3.x `smp` baseline of seed 001: `kernel=v3.10`). Default on.
    pub capacity_aware: bool,
    /// How a wake-up onto a CPU that went idle updates `rq->avg_idle`, the newidle
    /// balance's estimate of the idle time to come (`avg_idle`): `v3_13` (default; v3.13+
    /// `ttwu_do_activate()`) or `v3_10`.
    pub avg_idle: AvgIdleVersion,
    /// `sched_idle_cpu()` and its uses (kernel/sched/fair.c): a CPU whose runnable tasks
    /// are all SCHED_IDLE (`sched_idle_rq()`) counts as idle for the wake-up
    /// (`select_idle_sibling()`'s target, prev and recent CPU, `select_idle_cpu()`,
    /// `select_idle_capacity()`) and for the slow path's `sched_balance_find_dst_group_cpu()`
    /// (`find_idlest_group_cpu()` before v6.10), which takes it at once; it is not busy for
    /// the balance interval (`sched_balance_domains()`, `rebalance_domains()` before v6.10:
    /// `busy = idle != CPU_IDLE && !sched_idle_cpu(cpu)`); and a dequeue that leaves it so
    /// sets `rq->next_balance = jiffies` (`dequeue_task_fair()`). Default on, as from v5.6:
    /// v5.4 brought `sched_idle_cpu()` as a fallback behind idle CPUs ("sched/fair: Fall
    /// back to sched-idle CPU if idle CPU isn't found", 3c29e651e16d), v5.6 made it equal
    /// to an idle CPU in the scans ("sched/fair: Make sched-idle CPU selection consistent
    /// throughout") and added the two balance rules ("sched/fair: Load balance
    /// aggressively for SCHED_IDLE CPUs", 323af6deaf70), and v5.7's
    /// `select_idle_capacity()` had it from the start. Off: none of it (v4.20 and
    /// earlier). Every release between v4.20 and v5.9 that changed it is between two
    /// profiles, so one switch covers them; v5.4–v5.5's fallback form is not modelled.
    pub sched_idle_cpu: bool,
    /// The CBS budget is charged scale-invariant (kernel/sched/deadline.c,
    /// `update_curr_dl_se()` v6.11, `update_curr_dl()` from v4.16): a deadline task's run
    /// time is scaled by the CPU's frequency and capacity before it leaves the runtime,
    /// `cap_scale(cap_scale(delta_exec, arch_scale_freq_capacity(cpu)),
    /// arch_scale_cpu_capacity(cpu))`, so it runs longer in wall-clock time below the top
    /// OPP and on smaller CPUs. `false`: the wall-clock charge of v4.4. Default on.
    pub dl_scale_invariant: bool,
}

/// The `rq->avg_idle` update at a wake-up (`sched.avg_idle`; kernel/sched/core.c).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
pub enum AvgIdleVersion {
    /// v3.13+ (`ttwu_do_activate()`, v6.11): `update_avg(&rq->avg_idle, delta)` with the
    /// idle period just ended, then capped at `2 * rq->max_idle_balance_cost` (at least
    /// `sysctl_sched_migration_cost`, raised by the longest newidle pass).
    #[default]
    #[serde(rename = "v3_13", alias = "v3.13")]
    V3_13,
    /// v3.10 (`ttwu_do_wakeup()`): an idle period longer than
    /// `2 * sysctl_sched_migration_cost` sets `avg_idle` to that cap, a shorter one is
    /// averaged in.
    #[serde(rename = "v3_10", alias = "v3.10")]
    V3_10,
}

impl Default for SchedOptions {
    fn default() -> Self {
        SchedOptions {
            hz: 250,
            repick: RepickVersion::V6_11,
            rt_runtime_us: 950_000,
            rt_period_us: 1_000_000,
            rt_runtime_share: false,
            capacity_aware: true,
            avg_idle: AvgIdleVersion::V3_13,
            sched_idle_cpu: true,
            dl_scale_invariant: true,
        }
    }
}

/// `__schedule()` picking `prev` again (`sched.repick`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
pub enum RepickVersion {
    /// v6.11 and earlier (`pick_next_task_fair()`, `__pick_next_task()`): a fair task
    /// re-picked on an rq with only fair tasks is moved to the head of `cfs_tasks` and
    /// `update_misfit_status()` runs (the `CONFIG_FAIR_GROUP_SCHED` path skips
    /// put/set for the same task); otherwise the class's `put_prev_task()` and
    /// `set_next_task()` run for it, as for any other pick.
    #[default]
    #[serde(rename = "v6_11", alias = "v6.11")]
    V6_11,
    /// v6.12+: `put_prev_set_next_task()` returns at once for the same task, and
    /// `update_misfit_status()` is in `set_next_task_fair()`: nothing happens.
    #[serde(rename = "v6_12", alias = "v6.12")]
    V6_12,
}

/// `[pelt]`: load tracking.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PeltOptions {
    /// UTIL_EST feature.
    pub util_est: bool,
    /// util_est form: `v6_8` (single EWMA, default) or `v5_13` (enqueued + ewma, FASTUP).
    #[schemars(with = "String")]
    pub util_est_version: UtilEstVersion,
    /// Frequency invariance (`arch_scale_freq_capacity()`); off = always 1024.
    pub frequency_invariance: bool,
    /// `migrate_se_pelt_lag()` (v6.0+): a task woken off an idle CPU is decayed to the
    /// estimated wake-up time before it moves; false = the kernels before v6.0, where it
    /// carries the averages of its old CPU's last update.
    pub migrate_pelt_lag: bool,
}

impl Default for PeltOptions {
    fn default() -> Self {
        PeltOptions {
            util_est: true,
            util_est_version: UtilEstVersion::default(),
            frequency_invariance: true,
            migrate_pelt_lag: true,
        }
    }
}

/// A cpufreq governor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum Governor {
    /// Highest usable OPP (drivers/cpufreq/cpufreq_performance.c).
    Performance,
    /// Lowest OPP (cpufreq_powersave.c).
    Powersave,
    /// A fixed OPP per domain (cpufreq_userspace.c), from `cpufreq.userspace_khz`.
    Userspace,
    /// schedutil (kernel/sched/cpufreq_schedutil.c, `crate::cpufreq::schedutil`), the
    /// default: drivers/cpufreq/Kconfig makes `CPU_FREQ_DEFAULT_GOV_SCHEDUTIL` the default
    /// on ARM and ARM64 (v6.11). Policies start at their highest usable OPP
    /// (`fixed_freq_khz` holds that start frequency).
    #[default]
    Schedutil,
    /// ondemand (drivers/cpufreq/cpufreq_ondemand.c on the dbs framework,
    /// `crate::cpufreq::ondemand`): `[cpufreq.ondemand]`. Policies start at their highest
    /// usable OPP.
    Ondemand,
    /// conservative (drivers/cpufreq/cpufreq_conservative.c, `crate::cpufreq::conservative`):
    /// `[cpufreq.conservative]`. Policies start at their highest usable OPP.
    Conservative,
    /// Android's interactive (drivers/cpufreq/cpufreq_interactive.c, AOSP android-3.10 or,
    /// with `cpufreq.interactive.version=android_4_4`, android-4.4;
    /// `crate::cpufreq::interactive`): `[cpufreq.interactive]`. Policies start at their
    /// highest usable OPP.
    Interactive,
    /// The `sched` governor of the 2016 scheduler-driven frequency selection series (seed
    /// 004, RFCv7; `crate::cpufreq::schedfreq`): `[cpufreq.sched]`. Policies start at their
    /// highest usable OPP.
    Sched,
}

impl Governor {
    /// Every governor (the property test and the fuzz target run each).
    pub const ALL: [Governor; 8] = [
        Governor::Performance,
        Governor::Powersave,
        Governor::Userspace,
        Governor::Schedutil,
        Governor::Ondemand,
        Governor::Conservative,
        Governor::Interactive,
        Governor::Sched,
    ];

    /// The governor's sysfs name.
    pub fn as_str(self) -> &'static str {
        match self {
            Governor::Performance => "performance",
            Governor::Powersave => "powersave",
            Governor::Userspace => "userspace",
            Governor::Schedutil => "schedutil",
            Governor::Ondemand => "ondemand",
            Governor::Conservative => "conservative",
            Governor::Interactive => "interactive",
            Governor::Sched => "sched",
        }
    }
}

/// `[cpufreq]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields, default)]
pub struct CpufreqOptions {
    /// The governor of every policy.
    pub governor: Governor,
    /// The OPP each policy of a dynamic governor (schedutil, ondemand, conservative,
    /// interactive, sched) runs at when the run begins (`policy->cur` when the workload
    /// starts): `max` (default), the highest usable OPP, as firmware leaves most boards and
    /// as a governor just started finds them; `min`, where each of these governors settles
    /// on an idle board (no load: ondemand's and interactive's proportional target, sched's
    /// and schedutil's zero request all resolve to the lowest OPP) — a workload started on a
    /// board that sat idle under its governor. performance, powersave and userspace set
    /// their own OPP when they start (`cpufreq_gov_performance_limits()` and the like).
    pub start: StartOpp,
    /// For `userspace`: the frequency (kHz) per performance domain, or one value for all;
    /// each is resolved to an OPP with `cpufreq_driver_resolve_freq()` (RELATION_L).
    pub userspace_khz: Vec<u64>,
    /// schedutil estimation: `v6_8` (default; `sugov_effective_cpu_perf`, runnable boost) or
    /// `v5_x` (`schedutil_cpu_util`, headroom in `get_next_freq`). EAS's energy estimate
    /// follows it (the same v6.8 commit): `v5_x` clamps a CPU's frequency term with
    /// `effective_cpu_util(FREQUENCY_UTIL, p)` first and `em_cpu_energy()` adds the 1.25
    /// headroom after (`map_util_perf()`), where `v6_8` takes `sugov_effective_cpu_perf()`.
    #[schemars(with = "String")]
    pub schedutil_version: SchedutilVersion,
    /// The CFS utilisation schedutil's `sugov_get_util()` reads: `boost` (default, v6.5+:
    /// `cpu_util_cfs_boost()`, runnable boosting) or `cfs` (v6.4 and earlier:
    /// `cpu_util_cfs()`).
    #[schemars(with = "String")]
    pub schedutil_cfs_util: SugovCfsUtil,
    /// schedutil `rate_limit_us`; unset = `cpufreq_policy_transition_delay_us()` of the
    /// policy's transition latency (see `rate_limit_default`).
    pub rate_limit_us: Option<u64>,
    /// Which kernel's default `rate_limit_us`: `v4_14` (v4.14–v6.8: min(1000 × latency,
    /// 10 ms)), `v6_9` (v6.9–v6.11, default: min(1000 × latency, 2 ms), a latency above
    /// 2 ms as is), `v6_12` (1.5 × latency), `v6_12_capped` (1.5 × latency, ≤ 10 ms).
    #[schemars(with = "String")]
    pub rate_limit_default: TransitionDelayVersion,
    /// Driver fast switch (frequency applies at once, in scheduler context); `false` = the
    /// `sugov:N` kthread path, the frequency applying one transition latency later. Unset =
    /// the platform's cpufreq driver's (`policy->fast_switch_possible`: `scmi` and
    /// `apple-soc` yes; `cpufreq-dt`, `scpi`, `vexpress-spc` no).
    pub fast_switch: Option<bool>,
    /// The slow path's kthread (`sugov:N`, one per policy without fast switch):
    /// `thread` (default) runs it as the kernel does, a SCHED_DEADLINE thread with
    /// SCHED_FLAG_SUGOV bound to the policy's CPUs, woken by the governor's irq_work; `none`
    /// starts each transition at once without a thread (hetsched 0.1). For ondemand and
    /// conservative: `thread` runs their work in the sampling CPU's `kworker/N:1` (a
    /// nice-0 fair thread bound to it), `none` runs it at the sample.
    pub kthread: KthreadModel,
    /// CPU time (µs) of each of the `sugov:N` kthread's runs: `sugov_work()` up to the
    /// driver's request, and the end of the transition after the driver's completion.
    /// Unset = 10 µs, a modelling assumption (a few thousand instructions; measure it on a
    /// board from the `sched_switch` events of `sugov:N`). Also the CPU time of each run of
    /// a dbs governor's work in its kworker.
    pub kthread_cpu_us: Option<u64>,
    /// ondemand's tunables.
    pub ondemand: OndemandOptions,
    /// conservative's tunables.
    pub conservative: ConservativeOptions,
    /// interactive's tunables.
    pub interactive: InteractiveOptions,
    /// sched's tunables.
    pub sched: SchedGovOptions,
}

/// Where dynamic governors start (`cpufreq.start`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
pub enum StartOpp {
    /// The highest usable OPP.
    #[default]
    #[serde(rename = "max")]
    Max,
    /// The lowest OPP: the board was idle under its governor before the run.
    #[serde(rename = "min")]
    Min,
}

/// How the slow path's kthread is modelled (`cpufreq.kthread`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
pub enum KthreadModel {
    /// A real simulated thread (`sugov:N`), as in the kernel.
    #[default]
    #[serde(rename = "thread")]
    Thread,
    /// No thread: the transition starts when the governor decides.
    #[serde(rename = "none")]
    None,
}

/// `[balance]`: load balancing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct BalanceOptions {
    /// Periodic, newidle and idle balancing on/off.
    pub enabled: bool,
    /// Misfit-task handling (Morten Rasmussen's series, v4.20): `rq->misfit_task_load`,
    /// the `group_misfit_task` group type, the misfit nohz kick and misfit active balance.
    /// Default true; false reproduces the kernels before it ("tip" of the misfit
    /// experiment).
    pub misfit: bool,
    /// Load-balancer version: `"v6.11"` (default: v6.8+), `"v6.6"` (v5.12–v6.7:
    /// `migrate_util` without `shr_bound`), `"v5.10"` (v5.10–v5.11: also active balance for
    /// any migration type after `cache_nice_tries + 2` failures), `"v5.9"` (v5.5–v5.9,
    /// before Vincent Guittot's fairness series: detach test `load/2 > imbalance`, waived
    /// once `nr_balance_failed > cache_nice_tries`, `imbalance_pct` 125 instead of 117 at
    /// non-LLC levels, no busy-interval −1 jiffy, `busy_factor` 32 instead of 16) or
    /// `"v4.20"`: the balancer before the v5.5 rework (`avg_load`/`load_per_task`,
    /// `group_no_capacity`, `fix_small_imbalance()`, load-only migration, the v4.20 misfit
    /// rules), with the v5.9 values above.
    pub version: crate::sched::topology::LbVersion,
    /// The fixed part of what one newidle pass over a domain costs (ns): the time
    /// `sched_balance_newidle()` measures around `sched_balance_rq()` with
    /// `sched_clock_cpu()` and keeps as `sd->max_newidle_lb_cost`. Default 2,000 (an
    /// assumption: a few µs on the boards of the seeds).
    pub newidle_cost_ns: u64,
    /// The part of that cost per CPU of the domain's span (ns): `update_sd_lb_stats()`
    /// reads every CPU's runqueue, so big domains cost more and newidle balancing stops
    /// below them when the CPU expects a short idle. Default 400 (an assumption: a
    /// domain of 4 CPUs 3.6 µs, of 8 CPUs 5.2 µs, of 256 CPUs 104 µs).
    pub newidle_cost_per_cpu_ns: u64,
}

impl Default for BalanceOptions {
    fn default() -> Self {
        BalanceOptions {
            enabled: true,
            misfit: true,
            version: crate::sched::topology::LbVersion::V6_11,
            newidle_cost_ns: 2_000,
            newidle_cost_per_cpu_ns: 400,
        }
    }
}

/// Whether EAS runs (`sysctl_sched_energy_aware` and the user's intent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum EasMode {
    /// The kernel's behaviour: on when every condition holds (asymmetric capacities,
    /// schedutil everywhere, an EM for every CPU, frequency invariance), else off.
    #[default]
    Auto,
    /// Required: resolving fails with the precise reason when EAS cannot run.
    On,
    /// `sysctl_sched_energy_aware = 0`.
    Off,
}

/// `[eas]`: energy-aware scheduling (kernel/sched/fair.c, topology.c, energy_model.c).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct EasOptions {
    /// `auto` (default), `on` or `off`.
    pub mode: EasMode,
    /// EM cost form: `v6_9` (default: `10 × P / perf`, energy `cost × Σutil`) or `v5_x`
    /// (`fmax × P / f`, energy `cost × Σutil / scale_cpu`).
    #[schemars(with = "String")]
    pub em_version: EmVersion,
    /// `root_domain` (default, mainline) or `ignore_lone_task` (a lone task on a
    /// non-reduced 1024-capacity CPU does not set overutilized; the 2025 series).
    #[schemars(with = "String")]
    pub overutilized_gate: OverutilizedGate,
    /// v5.0–v5.17 feec rule: leave prev_cpu only for a saving of at least 1/16 (≈6 %).
    pub feec_energy_margin: bool,
    /// Apply `EM_MAX_COMPLEXITY` (2048) as older kernels did.
    pub em_max_complexity: bool,
    /// The runnable boost in the frequency term of feec's energy estimate:
    /// `eenv_pd_max_util()` reads `cpu_util(cpu, p, dst_cpu, 1)`, `max(util_avg,
    /// runnable_avg)` (commit 7d0583cf9ec7 "sched/fair, cpufreq: Introduce 'runnable
    /// boosting'", v6.5). Default on (v6.11); v5.x `compute_energy()` reads
    /// `cpu_util_next()`, without it (off in the `v5.9`/`v5.10` profiles).
    pub runnable_boost: bool,
}

impl Default for EasOptions {
    fn default() -> Self {
        EasOptions {
            mode: EasMode::default(),
            em_version: EmVersion::default(),
            overutilized_gate: OverutilizedGate::default(),
            feec_energy_margin: false,
            em_max_complexity: false,
            runnable_boost: true,
        }
    }
}

/// `[rt]`: the RT class (kernel/sched/rt.c, features.h).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RtOptions {
    /// RT_PUSH_IPI (kernel/sched/features.h, on since v4.6): a CPU lowering its RT
    /// priority asks the overloaded CPUs to push their tasks (IPI) instead of pulling from
    /// them itself. Default on (v6.11).
    pub push_ipi: bool,
    /// `sysctl_sched_util_clamp_min_rt_default` (0–1024): the `UCLAMP_MIN` request of RT
    /// tasks that set none (`uclamp_sync_util_min_rt_default()`). Default 1024, which
    /// makes RT tasks fit only the biggest CPUs and run their policy at the maximum
    /// frequency; a value other than 1024 enables `sched_uclamp_used`, as writing the
    /// sysctl does.
    pub util_clamp_min_rt_default: u64,
}

impl Default for RtOptions {
    fn default() -> Self {
        RtOptions {
            push_ipi: true,
            util_clamp_min_rt_default: crate::platform::SCHED_CAPACITY_SCALE,
        }
    }
}

/// `[rtapp]`: how rt-app starts the workload (scheduler-tools/rt-app, `src/rt-app.c`:
/// `main()`, `create_thread()`, `thread_body()`). Not kernel behaviour: no profile moves
/// these.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RtappOptions {
    /// rt-app's main thread is a task of the run (pid 1000, comm `rt-app`): it runs from
    /// the start, creates the threads one after another in file order (each placed by
    /// the kernel's fork placement from its CPU, with the main thread's parameters), then
    /// sleeps out the duration or joins them; the threads wait for one another at
    /// rt-app's start barrier and set their own parameters. `false`: every thread is
    /// created at once from CPU 0 with its own parameters and starts at once (hetsched
    /// before issue 22).
    pub main_thread: bool,
    /// The CPU the main thread runs on at the start. Unset: the calibration CPU when the
    /// workload calibrates (`"calibration": "CPUn"` or none: rt-app pins its main thread
    /// there to calibrate and restoring its affinity does not move it), otherwise (an
    /// integer pLoad) the first CPU of the highest capacity (an assumption: the main
    /// thread has just loaded and parsed the workload; see docs/kernel-mapping.md).
    pub main_cpu: Option<usize>,
    /// CPU work of one `create_thread()` (copying and naming the thread's data, opening
    /// its log, `pthread_create()`: stack `mmap()`, `clone()`), µs on a CPU of capacity
    /// 1024 at its maximum frequency; it scales with the CPU and its frequency like `run`.
    /// Default 50 µs, an assumption (a few tens of µs on a big core); also the cost of a
    /// `fork` event to its thread.
    pub create_thread_us: u64,
    /// CPU work of a new thread before its start barrier (glibc's `start_thread()`,
    /// `pthread_setname_np()`, rt-app's timing buffer), µs on a CPU of capacity 1024 at
    /// its maximum frequency. Default 10 µs, an assumption.
    pub thread_start_us: u64,
}

impl Default for RtappOptions {
    fn default() -> Self {
        RtappOptions {
            main_thread: true,
            main_cpu: None,
            create_thread_us: 50,
            thread_start_us: 10,
        }
    }
}

/// Which rt-app markers to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum MarkerChoice {
    /// The categories the workload's `global.ftrace` asks for (rt-app's behaviour).
    #[default]
    Workload,
    /// All categories.
    All,
    /// None.
    None,
}

/// `[trace]`: what the trace contains.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TraceOptions {
    /// PELT, util_est and capacity events (sched_pelt_se/cfs, sched_util_est_se/cfs,
    /// sched_cpu_capacity).
    pub signals: bool,
    /// rt-app trace_marker lines.
    pub rtapp_markers: MarkerChoice,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions {
            signals: true,
            rtapp_markers: MarkerChoice::Workload,
        }
    }
}

/// All options. Every field is optional in input; unknown keys are rejected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// The kernel release whose behaviour every version-dependent option defaults to
    /// (`v4.4`, `v4.20`, `v5.9`, `v5.10`, `v6.6`, `v6.11`, `v6.12`, `v6.17`; default `v6.11`).
    /// Options set alongside override it, whatever the order (see [`KernelProfile`]).
    pub kernel: KernelProfile,
    /// Core scheduler.
    pub sched: SchedOptions,
    /// Fair class.
    pub fair: FairOptions,
    /// PELT and util_est.
    pub pelt: PeltOptions,
    /// Frequency governors.
    pub cpufreq: CpufreqOptions,
    /// Load balancing.
    pub balance: BalanceOptions,
    /// Energy-aware scheduling.
    pub eas: EasOptions,
    /// RT class.
    pub rt: RtOptions,
    /// HMP task placement (big.LITTLE MP, seed 001).
    pub hmp: HmpOptions,
    /// How rt-app starts the workload.
    pub rtapp: RtappOptions,
    /// Trace contents.
    pub trace: TraceOptions,
}

impl Options {
    /// Every option at its own default: the v6.11 profile (`KernelProfile::V6_11.options()`
    /// equals it; a test keeps them together).
    fn v6_11() -> Options {
        Options::default()
    }

    /// Applies `key=value` assignments in order. Values are read as JSON (numbers, booleans,
    /// arrays, quoted strings) and otherwise taken as plain strings. A `kernel=` assignment
    /// is applied first: every option still at the old profile's value takes the new
    /// profile's, and every option set away from it keeps its value; the other assignments
    /// then apply in order, so `kernel=v5.9 fair.variant=eevdf` and `fair.variant=eevdf
    /// kernel=v5.9` mean the same.
    pub fn apply_sets<S: AsRef<str>>(&self, sets: &[S]) -> Result<Options, OptionsError> {
        let mut opts = self.clone();
        let (kernel, rest): (Vec<&str>, Vec<&str>) = sets
            .iter()
            .map(|s| s.as_ref())
            .partition(|a| a.split_once('=').is_some_and(|(k, _)| k.trim() == "kernel"));
        for arg in kernel {
            let with = opts.apply_one(arg)?;
            opts = opts.rebase(with.kernel);
        }
        for arg in rest {
            opts = opts.apply_one(arg)?;
        }
        Ok(opts)
    }

    /// These options moved to profile `k`: the options left at the current profile's values
    /// take `k`'s; the ones set away from them stay.
    pub fn rebase(&self, k: KernelProfile) -> Options {
        let mut base = serde_json::to_value(self.kernel.options()).unwrap_or_default();
        let mine = serde_json::to_value(self).unwrap_or_default();
        let mut target = serde_json::to_value(k.options()).unwrap_or_default();
        overlay_changes(&mut base, &mine, &mut target);
        serde_json::from_value(target).unwrap_or_else(|_| k.options())
    }

    fn apply_one(&self, arg: &str) -> Result<Options, OptionsError> {
        let (k, v) = arg
            .split_once('=')
            .ok_or_else(|| OptionsError::NotKeyValue(arg.to_string()))?;
        let value: Value = serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.to_string()));
        let mut tree = serde_json::to_value(self).map_err(|e| OptionsError::Set {
            arg: arg.to_string(),
            msg: e.to_string(),
        })?;
        let mut node = &mut tree;
        let parts: Vec<&str> = k.trim().split('.').collect();
        for (i, part) in parts.iter().enumerate() {
            let Value::Object(map) = node else {
                return Err(OptionsError::Set {
                    arg: arg.to_string(),
                    msg: format!("`{}` is not a section", parts[..i].join(".")),
                });
            };
            if i + 1 == parts.len() {
                map.insert((*part).to_string(), value.clone());
                break;
            }
            node = map
                .entry((*part).to_string())
                .or_insert_with(|| Value::Object(Default::default()));
        }
        serde_json::from_value(tree).map_err(|e| OptionsError::Set {
            arg: arg.to_string(),
            msg: e.to_string(),
        })
    }

    /// JSON schema of the options (`hetsched schema options`).
    pub fn schema() -> String {
        let schema = schemars::schema_for!(Options);
        serde_json::to_string_pretty(&schema).unwrap_or_default()
    }
}

/// Complete, validated settings: the options plus every derived number the engine uses.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Settings {
    /// The options as resolved.
    pub options: Options,
    /// `TICK_NSEC`.
    pub tick_ns: u64,
    /// Fair-class parameters after tunable scaling.
    pub fair: FairParams,
    /// The fixed frequency per performance domain for performance/powersave/userspace
    /// (for schedutil: the start frequency, the highest usable OPP).
    pub fixed_freq_khz: Vec<u64>,
    /// Whether EAS runs (`sched_energy_enabled()`), from `eas.mode` and the platform.
    pub eas_enabled: bool,
}

/// `eas.mode` against the platform: whether `sched_energy_enabled()` holds, or the precise
/// reason it cannot when the user asked for `on`.
fn resolve_eas(
    options: &Options,
    platform: &crate::platform::Platform,
) -> Result<bool, OptionsError> {
    use crate::energy::eas::{sched_energy_possible, EasConditions};
    use crate::energy::em::EnergyModel;
    let e = &options.eas;
    let em = EnergyModel::build(platform, e.em_version);
    let cond = EasConditions {
        sysctl_sched_energy_aware: e.mode != EasMode::Off,
        schedutil: options.cpufreq.governor == Governor::Schedutil,
        governor: options.cpufreq.governor.as_str(),
        frequency_invariant: options.pelt.frequency_invariance,
        smt: false,
        em_max_complexity: e.em_max_complexity,
    };
    match (sched_energy_possible(platform, &em, &cond), e.mode) {
        (Ok(()), _) => Ok(true),
        (Err(err), EasMode::On) => Err(OptionsError::Invalid {
            key: "eas.mode",
            msg: format!("EAS cannot run on platform {}: {err}", platform.name),
        }),
        (Err(_), _) => Ok(false),
    }
}

/// FNV-1a 64 over bytes: a stable hash of the resolved settings, recorded in every output.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl Settings {
    /// Resolves options against a platform.
    pub fn resolve(
        options: &Options,
        platform: &crate::platform::Platform,
    ) -> Result<Settings, OptionsError> {
        let hz = options.sched.hz;
        if !(1..=10_000).contains(&hz) {
            return Err(OptionsError::Invalid {
                key: "sched.hz",
                msg: format!("{hz} is out of range; expected 100, 250, 300 or 1000"),
            });
        }
        let tick_ns = 1_000_000_000 / u64::from(hz);
        let (rt_runtime, rt_period) = (options.sched.rt_runtime_us, options.sched.rt_period_us);
        if !(1..=i32::MAX as u64).contains(&rt_period) {
            return Err(OptionsError::Invalid {
                key: "sched.rt_period_us",
                msg: format!("{rt_period} is out of range; expected 1 to 2147483647 µs"),
            });
        }
        if rt_runtime != -1 && !(0..=rt_period as i64).contains(&rt_runtime) {
            return Err(OptionsError::Invalid {
                key: "sched.rt_runtime_us",
                msg: format!(
                    "{rt_runtime} is out of range; expected -1 (no limit) or 0 to sched.rt_period_us ({rt_period})"
                ),
            });
        }
        let f = &options.fair;
        let ncpus = platform.nr_cpus();
        if let Some(c) = options.rtapp.main_cpu.filter(|&c| c >= ncpus) {
            return Err(OptionsError::Invalid {
                key: "rtapp.main_cpu",
                msg: format!(
                    "CPU {c} is not a CPU of platform {} (CPUs 0-{})",
                    platform.name,
                    ncpus.saturating_sub(1)
                ),
            });
        }
        f.validate()?;
        let fair = f.params(ncpus, tick_ns);
        let c = &options.cpufreq;
        c.ondemand.validate(tick_ns)?;
        c.conservative.validate(tick_ns)?;
        c.interactive.validate()?;
        c.sched.validate()?;
        let mut classes: Vec<u64> = platform.cpus.iter().map(|c| c.capacity).collect();
        classes.sort_unstable();
        classes.dedup();
        options.hmp.validate(classes.len())?;
        if options.rt.util_clamp_min_rt_default > crate::platform::SCHED_CAPACITY_SCALE {
            return Err(OptionsError::Invalid {
                key: "rt.util_clamp_min_rt_default",
                msg: format!(
                    "{} is out of range; expected 0 to 1024",
                    options.rt.util_clamp_min_rt_default
                ),
            });
        }
        let fixed_freq_khz = platform
            .perf_domains
            .iter()
            .enumerate()
            .map(|(i, pd)| match c.governor {
                Governor::Performance => Ok(pd.resolve_freq(pd.max_freq_khz)),
                Governor::Schedutil
                | Governor::Ondemand
                | Governor::Conservative
                | Governor::Interactive
                | Governor::Sched => Ok(match c.start {
                    StartOpp::Max => pd.resolve_freq(pd.max_freq_khz),
                    StartOpp::Min => pd.min_freq_khz(),
                }),
                Governor::Powersave => Ok(pd.min_freq_khz()),
                Governor::Userspace => {
                    let want = match c.userspace_khz.len() {
                        0 => {
                            return Err(OptionsError::Invalid {
                                key: "cpufreq.userspace_khz",
                                msg: "the userspace governor needs a frequency: one kHz value, or one per performance domain".into(),
                            })
                        }
                        1 => c.userspace_khz[0],
                        n if n == platform.perf_domains.len() => c.userspace_khz[i],
                        n => {
                            return Err(OptionsError::Invalid {
                                key: "cpufreq.userspace_khz",
                                msg: format!(
                                    "{n} values given; expected 1 or {} (one per performance domain)",
                                    platform.perf_domains.len()
                                ),
                            })
                        }
                    };
                    Ok(pd.resolve_freq(want))
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let eas_enabled = resolve_eas(options, platform)?;
        Ok(Settings {
            options: options.clone(),
            tick_ns,
            fair,
            fixed_freq_khz,
            eas_enabled,
        })
    }

    /// Stable hash of the resolved settings.
    pub fn hash(&self) -> u64 {
        fnv1a64(serde_json::to_string(self).unwrap_or_default().as_bytes())
    }
}

#[cfg(test)]
mod tests;
