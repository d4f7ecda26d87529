//! The `hetsched` command-line interface.
//!
//! `hetsched run`, `hetsched platforms list|show`, `hetsched validate`, `hetsched gen`,
//! `hetsched schema`, `hetsched reproduce`.
//! Bad input gets one line naming the file, line and column and what was expected, and
//! exit status 2.

use clap::{Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "hetsched",
    version,
    about = "Deterministic simulator of Linux scheduling on heterogeneous CPUs",
    long_about = "hetsched runs rt-app workloads on a simulated platform with the kernel's \
scheduler mechanisms (PELT, EEVDF/CFS, load balancing, cpufreq) and writes ftrace text that \
LISA and Perfetto open, plus metrics."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a workload on a platform and print a summary.
    Run(RunArgs),
    /// List or show platform presets.
    Platforms {
        #[command(subcommand)]
        cmd: PlatformsCmd,
    },
    /// Read an rt-app workload and print what was understood.
    Validate {
        /// rt-app JSON file, a shipped workload name, or a generator spec
        /// (gen:hackbench:groups=4,loops=100; see `hetsched gen --list`).
        workload: String,
        /// How repeated keys in one JSON object are read.
        #[arg(long, value_enum, default_value_t = DupKeys::Ordered)]
        duplicate_keys: DupKeys,
    },
    /// Write a built-in workload as rt-app JSON (`hetsched gen --list` for the generators).
    Gen(GenArgs),
    /// Rerun a reference experiment (hmp, misfit, fairness, overutilized, schedfreq, all) with the policy before and
    /// after its patch series, beside the series' own numbers (docs/experiments.md).
    Reproduce(ReproduceArgs),
    /// Run every point of an experiment file (TOML; `hetsched schema experiment`),
    /// resuming from the result files already in the output directory (docs/sweeps.md).
    Sweep(SweepArgs),
    /// Write an HTML report (one self-contained file, no network requests) of run
    /// results (`run --json`), reproduction reports (`reproduce --json`) and sweep
    /// directories (`sweep -o DIR`); see docs/report.md.
    Report(ReportArgs),
    /// Print a JSON schema.
    Schema {
        /// Which schema.
        #[arg(value_enum)]
        what: SchemaKind,
    },
}

#[derive(Subcommand)]
enum PlatformsCmd {
    /// One line per preset.
    List,
    /// CPUs, capacities, OPPs, idle states and sources of a preset or YAML file.
    Show {
        /// Preset name or YAML path.
        name: String,
        /// Also print the scheduling domains and groups the kernel builds (flags,
        /// capacities, balance intervals).
        #[arg(long)]
        domains: bool,
        /// Print the platform as JSON instead: `{"platform": …, "energy_model": …}`, the
        /// model the engine reads and the Energy Model it registers (default options).
        #[arg(long, conflicts_with = "domains")]
        json: bool,
    },
    /// Import a board's device tree (.dts preprocessed and compiled as the kernel build
    /// does, or .dtb) into the platform YAML, with each number's provenance.
    Import {
        /// The board's .dts or .dtb.
        tree: PathBuf,
        /// Include directories for cpp and dtc (in a kernel tree,
        /// scripts/dtc/include-prefixes and include are found on their own).
        #[arg(short = 'I', value_name = "DIR")]
        include: Vec<PathBuf>,
        /// YAML with what the tree lacks (firmware OPPs, transition latency, idle-state
        /// power, cpufreq driver), by perf-domain and idle-state name.
        #[arg(long)]
        overlay: Option<PathBuf>,
        /// Write the YAML here (default: standard output).
        #[arg(short = 'o', long)]
        output: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum SchemaKind {
    /// The platform YAML format.
    Platform,
    /// The options (`--set` keys).
    Options,
    /// What each kernel profile (`--set kernel=v5.9`) sets, as a Markdown table.
    Kernels,
    /// The experiment file of `hetsched sweep` (TOML).
    Experiment,
}

#[derive(clap::Args)]
struct ReportArgs {
    /// Inputs, each a section in order: RESULT.json (from `hetsched run --json`, with
    /// `--timeline` for the timeline plots), REPORT.json (`hetsched reproduce --json`) or a
    /// sweep's output DIR.
    #[arg(required = true, value_name = "DIR|RESULT.json")]
    inputs: Vec<PathBuf>,
    /// The HTML file to write.
    #[arg(long, short)]
    output: PathBuf,
    /// The page's title.
    #[arg(long)]
    title: Option<String>,
}

#[derive(clap::Args)]
struct SweepArgs {
    /// The experiment file (TOML).
    experiment: PathBuf,
    /// Output directory: `points/<hash>.json` per point, experiment.json, table.csv.
    #[arg(long, short)]
    output: PathBuf,
    /// Worker threads (default: every core); the results do not depend on it.
    #[arg(long)]
    jobs: Option<usize>,
    /// Do not print the summary table.
    #[arg(long, short)]
    quiet: bool,
    /// Run the missing points as Ray tasks on the cluster at ADDRESS (`auto`,
    /// `HOST:6379`, `ray://HOST:10001`), or on a local Ray of --jobs CPUs with `local`,
    /// through the Python package (`pip install 'hetsched[ray]'`; the Python is
    /// `$HETSCHED_PYTHON`, else `python3`). Same result files as without.
    #[arg(long, value_name = "ADDRESS")]
    ray: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum DupKeys {
    /// Every repeated key is its own event, in order (rt-app's workgen).
    Ordered,
    /// json-c: the last value wins, at the first position (rt-app on the raw file).
    Jsonc,
}

#[derive(Clone, Copy, ValueEnum)]
enum TraceFormatArg {
    /// ftrace text (trace-cmd report -R lines under ftrace's `# tracer: nop` header).
    Text,
    /// Perfetto protobuf (FtraceEventBundles, process tree, clock snapshot), as Perfetto
    /// v59's traced_probes records it.
    Perfetto,
    /// Perfetto protobuf with every event Perfetto has no message for as a
    /// GenericFtraceEvent (traced_probes before v53; trace processors before v52).
    PerfettoLegacy,
}

impl From<TraceFormatArg> for hetsched::hetsched_trace::TraceFormat {
    fn from(f: TraceFormatArg) -> Self {
        match f {
            TraceFormatArg::Text => Self::Text,
            TraceFormatArg::Perfetto => Self::Perfetto,
            TraceFormatArg::PerfettoLegacy => Self::PerfettoLegacy,
        }
    }
}

impl DupKeys {
    fn read_options(self) -> hetsched::hetsched_rtapp::ReadOptions {
        use hetsched::hetsched_rtapp::{DuplicateKeys, ReadOptions};
        ReadOptions {
            duplicate_keys: match self {
                DupKeys::Ordered => DuplicateKeys::Ordered,
                DupKeys::Jsonc => DuplicateKeys::JsonC,
            },
        }
    }
}

#[derive(clap::Args)]
struct GenArgs {
    /// Generator: sysbench-cpu, stress-ng-cpu, hackbench, periodic.
    #[arg(required_unless_present = "list")]
    name: Option<String>,
    /// Parameters, key=value (e.g. threads=4 requests=1000).
    #[arg(value_name = "KEY=VALUE")]
    params: Vec<String>,
    /// Write the JSON to this file instead of standard output.
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// List the generators and their parameters.
    #[arg(long, conflicts_with = "name")]
    list: bool,
}

#[derive(clap::Args)]
struct ReproduceArgs {
    /// Experiment: hmp, misfit, fairness, overutilized, schedfreq, or all.
    name: String,
    /// Repeated runs per case and variant (default: the experiment's, e.g. 10).
    #[arg(long)]
    runs: Option<usize>,
    /// Base seed of the runs' noise and engine seeds.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Write the JSON report to this file (with `all`: NAME.json is added before the
    /// extension, e.g. out.json → out.misfit.json).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write an HTML report (tables beside the seed's, PASS/FAIL, plots) to this file;
    /// with `all`, one file with a section per experiment.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Worker threads for the independent runs (the output does not depend on it).
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Fewer runs and shorter workloads, for CI.
    #[arg(long)]
    quick: bool,
    /// Exit with status 1 when a reproduction criterion is not met (by default the
    /// verdicts are only printed and written).
    #[arg(long)]
    check: bool,
    /// The noise model's configuration, a JSON file (`NoiseConfig`: `start_jitter_us`,
    /// `work_jitter_ppm`, `background`, `kthreads`; fields left out keep their defaults;
    /// see docs/experiments.md and docs/noise/).
    #[arg(long, value_name = "FILE")]
    noise: Option<PathBuf>,
    /// Replace one of the experiment's platforms by a platform file (repeatable), e.g.
    /// `juno_r0=docs/platforms/juno_r0-sysbench.yaml` (a `work_dmips_mhz` variant; see
    /// docs/experiments.md).
    #[arg(long, value_name = "NAME=FILE")]
    platform: Vec<String>,
    /// Keep each run's result as a sweep's result file, `DIR/points/<hash>.json`, and run
    /// only the runs without one: an interrupted reproduction resumes where it stopped.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Run the runs as Ray tasks on the cluster at ADDRESS (`local`: a new local Ray
    /// instance), as `hetsched sweep --ray` does; needs --dir.
    #[arg(long, value_name = "ADDRESS")]
    ray: Option<String>,
}

#[derive(clap::Args)]
struct RunArgs {
    /// PLATFORM and WORKLOAD, instead of (or to complete) --platform and --workload.
    #[arg(value_name = "PLATFORM WORKLOAD", num_args = 0..=2)]
    positional: Vec<String>,
    /// Platform preset name (see `hetsched platforms list`) or YAML file.
    #[arg(long, short)]
    platform: Option<String>,
    /// rt-app JSON workload file, a shipped workload name (`demo`), or a generator spec
    /// (gen:sysbench-cpu:threads=4,requests=1000; see `hetsched gen --list`).
    #[arg(long, short)]
    workload: Option<String>,
    /// Simulated duration (10s, 500ms); default: the workload's global.duration.
    #[arg(long, short)]
    duration: Option<String>,
    /// Seed of the run's random number generator.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Write the trace to this file: ftrace text, or Perfetto protobuf when the name ends
    /// in .pftrace or .perfetto-trace (or with --trace-format perfetto).
    #[arg(long)]
    trace: Option<PathBuf>,
    /// The trace's format; default: by the --trace file's extension.
    #[arg(long, value_enum, requires = "trace")]
    trace_format: Option<TraceFormatArg>,
    /// Write the results as JSON to this file (`-` for standard output).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Keep a downsampled timeline of the run (per-CPU tasks, frequency, idle, PELT,
    /// overutilized; at most 1024 buckets) in the JSON, for `hetsched report`.
    #[arg(long)]
    timeline: bool,
    /// Write an HTML report of the run (with its timeline) to this file.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Set an option: key=value (repeatable), e.g. fair.variant=cfs. See `hetsched schema options`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// How repeated keys in one JSON object are read.
    #[arg(long, value_enum, default_value_t = DupKeys::Ordered)]
    duplicate_keys: DupKeys,
    /// Do not print the summary.
    #[arg(long, short)]
    quiet: bool,
    /// Apply the noise model (start offsets, ±1 % work, background kthreads; see
    /// docs/experiments.md) to the workload before the run.
    #[arg(long)]
    noise: bool,
    /// Seed of the noise model (default: --seed).
    #[arg(long, requires = "noise")]
    noise_seed: Option<u64>,
}

/// Writes to standard output; a closed pipe (`hetsched … | head`) ends quietly.
fn out(text: &str) -> anyhow::Result<()> {
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        r => Ok(r?),
    }
}

/// A command-line parse failure: `--help` and `--version` print as clap writes them (exit
/// 0); any other is one line, `hetsched: error: …` with clap's message and its tip, exit 2.
fn argument_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        };
    }
    let text = e.render().to_string();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more"))
        .collect();
    let msg = lines.join("; ");
    let msg = msg.strip_prefix("error: ").unwrap_or(&msg);
    eprintln!("hetsched: error: {msg} (see `hetsched --help`)");
    ExitCode::from(2)
}

/// How long a stop request may take before the process leaves without the main thread
/// (which polls it between simulation events; a second signal leaves at once).
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Says once, on one line, that a signal stopped the command, and returns its exit status
/// (128 + the signal's number: 130 for SIGINT, 143 for SIGTERM).
fn interrupted(signal: i32) -> u8 {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !SAID.swap(true, std::sync::atomic::Ordering::SeqCst) {
        eprintln!(
            "hetsched: error: interrupted by {}",
            hetsched::hetsched_core::interrupt::signal_name(signal)
        );
    }
    (128 + signal).clamp(0, 255) as u8
}

/// SIGINT and SIGTERM ask the command to stop ([`hetsched::hetsched_core::interrupt`]):
/// the simulation ends at its next poll, output files are never renamed into place
/// ([`hetsched::output`]), and `main` exits with 128 + the signal. If the main thread has
/// not left within [`STOP_GRACE`], or on a second signal, this thread removes the pending
/// temporary files and leaves itself.
fn handle_signals() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    std::thread::spawn(move || {
        let Some(first) = signals.forever().next() else {
            return;
        };
        hetsched::hetsched_core::interrupt::request(first);
        let deadline = std::time::Instant::now() + STOP_GRACE;
        while std::time::Instant::now() < deadline {
            if signals.pending().next().is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        hetsched::output::remove_pending();
        std::process::exit(interrupted(first).into());
    });
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return argument_error(&e),
    };
    handle_signals();
    let r = dispatch(cli);
    if let Some(signal) = hetsched::hetsched_core::interrupt::requested() {
        hetsched::output::remove_pending();
        return ExitCode::from(interrupted(signal));
    }
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line: the innermost error names the file, line and column.
            let msg = e
                .chain()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(": ");
            // Control characters from the input (a newline in a key) are escaped so
            // the error stays one line.
            let msg: String = msg
                .chars()
                .flat_map(|c| {
                    let esc: Vec<char> = if c.is_control() {
                        c.escape_debug().collect()
                    } else {
                        vec![c]
                    };
                    esc
                })
                .collect();
            eprintln!("hetsched: error: {msg}");
            ExitCode::from(2)
        }
    }
}

/// `hetsched platforms import`: the YAML on stdout or in `-o`, and on stderr what the tree
/// lacks; fails (one line) when a required number is missing and no overlay gives it.
fn cmd_import(
    tree: &std::path::Path,
    include: &[PathBuf],
    overlay: Option<&std::path::Path>,
    output: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    use hetsched::hetsched_platform::devicetree;
    let ov = overlay.map(devicetree::read_overlay).transpose()?;
    let ov_name = overlay.map(|p| p.display().to_string()).unwrap_or_default();
    let imported =
        devicetree::import_path(tree, include, ov.as_ref().map(|o| (o, ov_name.as_str())))?;
    let origin = tree.display().to_string();
    for m in &imported.missing {
        eprintln!("missing: {m}");
    }
    imported.check(&origin)?;
    // The result must load as a platform before it is written.
    hetsched::hetsched_platform::load_imported(&imported, &origin)?;
    let yaml = devicetree::to_yaml(&imported)?;
    match output {
        Some(p) => Ok(hetsched::output::write_atomic(p, yaml)?),
        None => out(&yaml),
    }
}

fn dispatch(cli: Cli) -> anyhow::Result<()> {
    match cli.cmd {
        Cmd::Run(a) => cmd_run(a),
        Cmd::Platforms { cmd } => match cmd {
            PlatformsCmd::List => {
                for name in hetsched::hetsched_platform::preset_names() {
                    let p = hetsched::load_platform(name)?;
                    out(&format!(
                        "{}\n",
                        hetsched::hetsched_platform::summary_line(&p)
                    ))?;
                }
                Ok(())
            }
            PlatformsCmd::Show {
                name,
                domains,
                json,
            } => {
                let p = hetsched::load_platform(&name)?;
                if json {
                    let em_version = hetsched::hetsched_core::options::Options::default()
                        .eas
                        .em_version;
                    let em =
                        hetsched::hetsched_core::energy::em::EnergyModel::build(&p, em_version);
                    let v = serde_json::json!({ "platform": p, "energy_model": em });
                    return out(&format!("{}\n", serde_json::to_string_pretty(&v)?));
                }
                out(&hetsched::hetsched_platform::describe(&p))?;
                if domains {
                    out("\n")?;
                    out(&hetsched::hetsched_platform::describe_domains(&p))?;
                }
                Ok(())
            }
            PlatformsCmd::Import {
                tree,
                include,
                overlay,
                output,
            } => cmd_import(&tree, &include, overlay.as_deref(), output.as_deref()),
        },
        Cmd::Validate {
            workload,
            duplicate_keys,
        } => {
            let w = hetsched::load_workload(&workload, &duplicate_keys.read_options())?;
            out(&hetsched::hetsched_rtapp::describe(&w))
        }
        Cmd::Gen(a) => cmd_gen(a),
        Cmd::Reproduce(a) => cmd_reproduce(a),
        Cmd::Sweep(a) => cmd_sweep(a),
        Cmd::Report(a) => {
            let opts = hetsched::report::ReportOptions {
                title: a.title,
                generated: None,
            };
            let html = hetsched::report::render_paths(&a.inputs, &opts)?;
            hetsched::report::write(&a.output, &html)?;
            eprintln!("report: {}", a.output.display());
            Ok(())
        }
        Cmd::Schema { what } => {
            match what {
                SchemaKind::Platform => {
                    println!("{}", hetsched::hetsched_platform::platform_schema())
                }
                SchemaKind::Kernels => {
                    print!(
                        "{}",
                        hetsched::hetsched_core::options::KernelProfile::table()
                    )
                }
                SchemaKind::Experiment => println!("{}", hetsched::sweep::schema()),
                SchemaKind::Options => {
                    println!("{}", hetsched::hetsched_core::options::Options::schema())
                }
            }
            Ok(())
        }
    }
}

fn cmd_gen(a: GenArgs) -> anyhow::Result<()> {
    if a.list {
        return out(&hetsched::hetsched_rtapp::gen::list());
    }
    let name = a.name.unwrap_or_default();
    let params = hetsched::split_params(&name, &a.params)?;
    let json = hetsched::generate_json(&name, &params)?;
    match &a.output {
        Some(path) => Ok(hetsched::output::write_atomic(path, json)?),
        None => out(&json),
    }
}

fn cmd_run(a: RunArgs) -> anyhow::Result<()> {
    let mut pos = a.positional.into_iter();
    let platform = a.platform.or_else(|| pos.next());
    let workload = a.workload.or_else(|| pos.next());
    let (Some(platform), Some(workload), None) = (platform, workload, pos.next()) else {
        anyhow::bail!(
            "run: expected one platform and one workload: hetsched run PLATFORM WORKLOAD, or --platform P --workload W"
        );
    };
    let duration = a
        .duration
        .as_deref()
        .map(hetsched::parse_duration)
        .transpose()?;
    let req = hetsched::RunRequest {
        platform,
        workload,
        sets: a.sets,
        seed: a.seed,
        duration,
        trace: a.trace.clone(),
        trace_format: a.trace_format.map(Into::into),
        read: a.duplicate_keys.read_options(),
        noise: a
            .noise
            .then(hetsched::hetsched_core::noise::NoiseConfig::default),
        noise_seed: a.noise_seed.unwrap_or(a.seed),
    };
    let keep = a.timeline || a.report.is_some();
    let mut sink = hetsched::report::timeline::TimelineSink::new();
    let result = hetsched::run_request_extra(
        &req,
        keep.then_some(&mut sink as &mut dyn hetsched::hetsched_core::trace::TraceSink),
    )?;
    let timeline = keep.then(|| sink.finish());
    for w in &result.warnings {
        eprintln!("hetsched: warning: {w}");
    }
    if let Some(path) = &a.report {
        let v = hetsched::result_value_with_timeline(&result.result, timeline.as_ref());
        let name = format!("{} on {}", result.result.workload, result.result.platform);
        let input = hetsched::report::input_from_json(&name, v)?;
        let html = hetsched::report::render(&[input], &Default::default());
        hetsched::report::write(path, &html)?;
    }
    if let Some(path) = &a.json {
        let text = if a.timeline {
            hetsched::result_json_with_timeline(&result.result, timeline.as_ref())
        } else {
            hetsched::result_json(&result.result)
        };
        if path.as_os_str() == "-" {
            out(&text)?;
        } else {
            hetsched::output::write_atomic(path, text)?;
        }
    }
    let json_to_stdout = a.json.as_ref().is_some_and(|p| p.as_os_str() == "-");
    if !a.quiet && !json_to_stdout {
        out(&hetsched::summary::render(&result.result))?;
        if let Some(t) = &a.trace {
            out(&format!("trace: {}\n", t.display()))?;
        }
    }
    Ok(())
}

fn cmd_sweep(a: SweepArgs) -> anyhow::Result<()> {
    use hetsched::sweep;
    let exp = sweep::read_file(&a.experiment)?;
    let jobs = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if jobs == 0 {
        anyhow::bail!("--jobs 0: expected at least 1");
    }
    // A bar with an ETA on a terminal; indicatif draws nothing when stderr is not one.
    let bar =
        indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    bar.set_style(indicatif::ProgressStyle::with_template(
        "{bar:40} {pos}/{len} points  {elapsed_precise} elapsed  ETA {eta}",
    )?);
    let progress = |done: usize, total: usize| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    };
    let executor = a.ray.map(|address| ray_executor(address, jobs));
    let outcome = sweep::run_with(&exp, &a.output, jobs, executor.as_ref(), &progress)?;
    bar.finish_and_clear();
    let total = outcome.plan.points.len();
    let unique = outcome
        .plan
        .points
        .iter()
        .map(|p| &p.hash)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    eprintln!(
        "hetsched: sweep {}: {total} points ({unique} distinct), {} run now, {} already done; {}",
        exp.name,
        outcome.ran,
        unique - outcome.ran,
        a.output.join(sweep::TABLE).display()
    );
    if !a.quiet {
        out(&outcome.table.summary())?;
    }
    if outcome.table.rows.iter().any(|r| r.error.is_some()) {
        std::process::exit(1);
    }
    Ok(())
}

/// The `--ray ADDRESS` backend: the points to run are written to `DIR/.ray-points.json`
/// and `$HETSCHED_PYTHON -m hetsched._sweep` (python3 by default) runs them as Ray tasks
/// (`local`: on a local Ray of `jobs` CPUs), writing each result file. A Python that
/// cannot import the package with Ray is one line saying what to install; a failure of
/// the run is its last line on stderr.
fn ray_executor(address: String, jobs: usize) -> hetsched::sweep::Executor {
    hetsched::sweep::Executor(std::sync::Arc::new(
        move |points: &[hetsched::sweep::PointSpec], dir: &std::path::Path| {
            use hetsched::Error;
            use std::process::{Command, Stdio};
            if points.is_empty() {
                return Ok(());
            }
            let python = std::env::var_os("HETSCHED_PYTHON").unwrap_or_else(|| "python3".into());
            let shown = std::path::Path::new(&python).display().to_string();
            let probe = Command::new(&python)
                .args(["-c", "import hetsched, ray"])
                .stdin(Stdio::null())
                .output()
                .map_err(|e| {
                    Error::Backend(format!(
                        "--ray: cannot run {shown} ({e}): --ray needs the hetsched Python package \
                         with Ray (pip install 'hetsched[ray]'); set HETSCHED_PYTHON to its Python"
                    ))
                })?;
            if !probe.status.success() {
                let why = String::from_utf8_lossy(&probe.stderr);
                let why = why.lines().last().unwrap_or("").trim().to_string();
                return Err(Error::Backend(format!(
                    "--ray: {shown} cannot import the hetsched Python package with Ray ({why}): \
                     pip install 'hetsched[ray]', or set HETSCHED_PYTHON to a Python that has it"
                )));
            }
            let list = dir.join(".ray-points.json");
            let text = serde_json::to_string(points).map_err(|e| Error::Backend(e.to_string()))?;
            hetsched::sweep::write_atomic(&list, &text)?;
            let output = Command::new(&python)
                .args(["-m", "hetsched._sweep"])
                .arg(&list)
                .arg(dir)
                .arg(&address)
                .arg(jobs.to_string())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .output();
            let _ = std::fs::remove_file(&list);
            let output =
                output.map_err(|e| Error::Backend(format!("--ray: cannot run {shown}: {e}")))?;
            if output.status.success() {
                return Ok(());
            }
            let err = String::from_utf8_lossy(&output.stderr);
            let last = err
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            let last = last.strip_prefix("hetsched: error: ").unwrap_or(last);
            Err(Error::Backend(if last.trim().is_empty() {
                format!(
                    "--ray: the Ray run stopped ({}); rerun to resume",
                    output.status
                )
            } else if last.starts_with("--ray") {
                format!("{last}; rerun to resume")
            } else {
                format!("--ray: {last}; rerun to resume")
            }))
        },
    ))
}

fn cmd_reproduce(a: ReproduceArgs) -> anyhow::Result<()> {
    use hetsched::reproduce::{self, ReproduceOptions, EXPERIMENTS};
    let names: Vec<&str> = if a.name == "all" {
        EXPERIMENTS.to_vec()
    } else {
        vec![a.name.as_str()]
    };
    if a.runs == Some(0) {
        anyhow::bail!("--runs 0: expected at least 1 run");
    }
    let mut opts = ReproduceOptions {
        runs: a.runs,
        seed: a.seed,
        jobs: a.jobs.max(1),
        quick: a.quick,
        dir: a.dir.clone(),
        executor: a
            .ray
            .clone()
            .map(|address| ray_executor(address, a.jobs.max(1))),
        ..ReproduceOptions::default()
    };
    if a.ray.is_some() && a.dir.is_none() {
        anyhow::bail!("--ray: the Ray tasks' results go to a directory; give one with --dir DIR");
    }
    if let Some(path) = &a.noise {
        opts.noise = hetsched::read_noise_config(path)?;
    }
    // (an unknown experiment is reported by the run itself)
    let known = names.iter().all(|n| reproduce::platforms_of(n).is_some());
    let used: Vec<&str> = names
        .iter()
        .filter_map(|n| reproduce::platforms_of(n))
        .flatten()
        .copied()
        .collect();
    for arg in a.platform.iter().filter(|_| known) {
        let Some((name, file)) = arg.split_once('=') else {
            anyhow::bail!("--platform {arg}: expected NAME=FILE (e.g. juno_r0=my_juno.yaml)");
        };
        if !used.contains(&name) {
            anyhow::bail!(
                "--platform {arg}: {} does not run on `{name}`; its platforms: {}",
                a.name,
                used.join(", ")
            );
        }
        // read it now: a bad file is an error before any run
        hetsched::load_platform(file)?;
        opts.platforms.insert(name.to_string(), file.to_string());
    }
    let mut failed = Vec::new();
    let mut sections = Vec::new();
    for name in names {
        let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
        let progress = |done: usize, total: usize| {
            if !tty {
                return;
            }
            eprint!("\r[{name}] {done}/{total} runs");
            if done == total {
                eprintln!();
            }
        };
        let report = reproduce::run(name, &opts, &progress)?;
        out(&report.table)?;
        out("\n")?;
        if let Some(path) = &a.json {
            let path = if a.name == "all" {
                let stem = path.file_stem().unwrap_or_default().to_string_lossy();
                let ext = path
                    .extension()
                    .map(|e| format!(".{}", e.to_string_lossy()))
                    .unwrap_or_default();
                path.with_file_name(format!("{stem}.{name}{ext}"))
            } else {
                path.clone()
            };
            hetsched::output::write_atomic(&path, report.to_json())?;
        }
        if !report.all_pass() {
            failed.push(name);
        }
        if a.report.is_some() {
            let v: serde_json::Value = serde_json::from_str(&report.to_json())?;
            sections.push(hetsched::report::input_from_json(name, v)?);
        }
    }
    if let Some(path) = &a.report {
        let opts = hetsched::report::ReportOptions {
            title: Some(format!("hetsched reproduce {}", a.name)),
            generated: None,
        };
        hetsched::report::write(path, &hetsched::report::render(&sections, &opts))?;
        eprintln!("report: {}", path.display());
    }
    if !failed.is_empty() {
        eprintln!(
            "hetsched: reproduce: criteria not all met for: {}",
            failed.join(", ")
        );
        if a.check {
            std::process::exit(1);
        }
    }
    Ok(())
}
