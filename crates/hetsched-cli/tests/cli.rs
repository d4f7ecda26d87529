//! The `hetsched` binary as a user meets it: commands, outputs, and one-line errors with
//! exit status 2.

// Test helpers panic on unexpected failures by design.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn hetsched(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hetsched"))
        .args(args)
        .output()
        .expect("run hetsched")
}

fn tmp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hetsched-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn err_line(o: &Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(2),
        "exit status; stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let e = String::from_utf8_lossy(&o.stderr).to_string();
    let lines: Vec<&str> = e.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {e}");
    lines[0].to_string()
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn platforms_list_shows_eight_presets() {
    let o = hetsched(&["platforms", "list"]);
    assert!(o.status.success());
    let s = String::from_utf8_lossy(&o.stdout);
    for p in [
        "juno_r0",
        "hikey960",
        "tc2",
        "rk3399",
        "exynos5800",
        "m1pro",
        "orion_o6",
        "hikey620",
    ] {
        assert!(s.lines().any(|l| l.starts_with(p)), "{p} missing in:\n{s}");
    }
    let o = hetsched(&["platforms", "show", "hikey960"]);
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("462") && s.contains("2362000"), "{s}");
}

#[test]
fn platforms_show_domains() {
    let o = hetsched(&["platforms", "show", "juno_r0", "--domains"]);
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{s}");
    // juno_r0: LITTLE 0,3-5 (446), big 1-2 (1024): PKG groups 1784 and 2048.
    assert!(s.contains("CPU0 attaching sched-domain(s):"), "{s}");
    assert!(s.contains("domain-0: span=0,3-5 level=MC"), "{s}");
    assert!(
        s.contains("0:{ span=0,3-5 cap=1784 }, 1:{ span=1-2 cap=2048 }"),
        "{s}"
    );
    assert!(s.contains("SD_ASYM_CPUCAPACITY_FULL"), "{s}");
}

#[test]
fn platforms_show_json() {
    let o = hetsched(&["platforms", "show", "juno_r0", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let cpus = v["platform"]["cpus"].as_array().unwrap();
    assert_eq!(cpus.len(), 6);
    assert_eq!(cpus[1]["capacity"], 1024);
    // the Energy Model the engine registers: one table per performance domain
    let pds = v["energy_model"]["pds"].as_array().unwrap();
    assert_eq!(pds.len(), 2);
    assert_eq!(pds[1]["cpus"], serde_json::json!([1, 2]));
    let top = pds[1]["table"].as_array().unwrap().last().unwrap();
    assert_eq!(top["frequency"], 1_100_000);
    assert!(top["power"].as_u64().unwrap() > 0);
}

#[test]
fn unknown_platform_is_one_line_error() {
    let l = err_line(&hetsched(&["run", "-p", "nosuchboard", "-w", "demo"]));
    assert!(l.contains("nosuchboard") && l.contains("hikey960"), "{l}");
}

#[test]
fn malformed_json_names_file_line_column() {
    let p = tmp(
        "bad.json",
        "{\n  \"tasks\": {\n    \"t\" {\"run\": 1}\n  }\n}\n",
    );
    let l = err_line(&hetsched(&[
        "run",
        "-p",
        "hikey960",
        "-w",
        p.to_str().unwrap(),
        "-d",
        "1s",
    ]));
    assert!(l.contains("bad.json:3:9"), "{l}");
    assert!(l.contains("expected ':'"), "{l}");
}

#[test]
fn control_characters_in_input_keep_the_error_on_one_line() {
    let l = err_line(&hetsched(&[
        "run",
        "-p",
        "hikey960",
        "-w",
        "demo",
        "--set",
        "fair.a\nb=1",
    ]));
    assert!(l.contains(r"fair.a\nb=1"), "{l}");
}

#[test]
fn unknown_option_key_is_rejected() {
    let l = err_line(&hetsched(&[
        "run",
        "-p",
        "hikey960",
        "-w",
        "demo",
        "--set",
        "fair.nosuch=1",
    ]));
    assert!(
        l.contains("fair.nosuch=1") && l.contains("unknown field `nosuch`"),
        "{l}"
    );
}

#[test]
fn impossible_affinity_names_the_cpus_key() {
    let p = tmp(
        "aff.json",
        "{\n  \"tasks\": {\n    \"t\": {\n      \"cpus\": [0, 9],\n      \"run\": 1000\n    }\n  }\n}\n",
    );
    let l = err_line(&hetsched(&[
        "run",
        "-p",
        "hikey960",
        "-w",
        p.to_str().unwrap(),
        "-d",
        "1s",
    ]));
    assert!(l.contains("aff.json:4:"), "{l}");
    assert!(l.contains("CPU 9"), "{l}");
}

#[test]
fn bad_duration_and_missing_duration() {
    let l = err_line(&hetsched(&[
        "run", "-p", "hikey960", "-w", "demo", "-d", "soon",
    ]));
    assert!(l.contains("--duration soon"), "{l}");
    let p = tmp(
        "forever.json",
        r#"{"tasks": {"t": {"loop": -1, "run": 1000, "sleep": 1000}}}"#,
    );
    let l = err_line(&hetsched(&[
        "run",
        "-p",
        "hikey960",
        "-w",
        p.to_str().unwrap(),
    ]));
    assert!(l.contains("give a duration"), "{l}");
}

#[test]
fn rejected_rtapp_file_fails_where_json_c_fails() {
    let p = repo().join("tests/rtapp-examples/video-long.json");
    let l = err_line(&hetsched(&["validate", p.to_str().unwrap()]));
    assert!(l.contains("video-long.json:6:13"), "{l}");
}

#[test]
fn run_writes_json_and_trace() {
    let dir = std::env::temp_dir().join(format!("hetsched-cli-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("r.json");
    let trace = dir.join("t.txt");
    let o = hetsched(&[
        "run",
        "-p",
        "rk3399",
        "-w",
        "demo",
        "-d",
        "500ms",
        "--seed",
        "3",
        "--json",
        json.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary = String::from_utf8_lossy(&o.stdout);
    assert!(
        summary.contains("light-0") && summary.contains("migrations:"),
        "{summary}"
    );
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(r["seed"], 3);
    assert_eq!(r["platform"], "rk3399");
    assert_eq!(r["tasks"].as_array().unwrap().len(), 11);
    let t = std::fs::read_to_string(&trace).unwrap();
    assert!(
        t.starts_with("# tracer: nop\n#\n# cpus=6\n"),
        "{}",
        &t[..80]
    );
    assert!(t.contains("sched_switch:") && t.contains("rtapp_stats:"));
}

/// `--trace x.pftrace` writes Perfetto protobuf, the same bytes for the same run;
/// `--trace-format` overrides the extension and needs `--trace`.
#[test]
fn run_writes_perfetto_by_extension_or_format() {
    let dir = std::env::temp_dir().join(format!("hetsched-cli-pf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |trace: &Path, extra: &[&str]| {
        let mut args = vec![
            "run", "rk3399", "demo", "-d", "300ms", "--seed", "3", "--quiet",
        ];
        args.extend_from_slice(&["--trace", trace.to_str().unwrap()]);
        args.extend_from_slice(extra);
        let o = hetsched(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read(trace).unwrap()
    };
    let a = run(&dir.join("a.pftrace"), &[]);
    let b = run(&dir.join("b.pftrace"), &[]);
    assert_eq!(a, b, "same run, same bytes");
    // Trace.packet (field 1, length-delimited), then the clock snapshot packet.
    assert_eq!(a[0], 0x0a);
    assert!(a.len() > 10_000, "{} bytes", a.len());
    let forced = run(&dir.join("c.txt"), &["--trace-format", "perfetto"]);
    assert_eq!(forced, a);
    // The legacy layout: the same packets, the generic events as GenericFtraceEvent
    // (field 327: key 0xba 0x14), longer than the default layout.
    let legacy = run(
        &dir.join("e.pftrace"),
        &["--trace-format", "perfetto-legacy"],
    );
    assert_eq!(legacy[0], 0x0a);
    let generic = |t: &[u8]| t.windows(2).filter(|w| w == &[0xba, 0x14]).count();
    assert!(generic(&legacy) > 100, "{}", generic(&legacy));
    assert!(legacy.len() > a.len());
    let text = run(&dir.join("d.pftrace"), &["--trace-format", "text"]);
    assert!(text.starts_with(b"# tracer: nop\n"));
    let o = hetsched(&["run", "rk3399", "demo", "--trace-format", "perfetto"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--trace"));
}

/// Corpus files whose events this release simulates run on several presets.
#[test]
fn rtapp_corpus_runs_on_presets() {
    let corpus = repo().join("tests/rtapp-examples");
    let files = [
        "tutorial/example1.json",
        "tutorial/example2.json",
        "tutorial/example3.json",
        "tutorial/example8.json",
        "template.json",
        "spreading-tasks.json",
    ];
    for f in files {
        for p in ["hikey960", "juno_r0", "tc2"] {
            let path = corpus.join(f);
            let o = hetsched(&[
                "run",
                "-q",
                "-p",
                p,
                "-w",
                path.to_str().unwrap(),
                "-d",
                "1s",
            ]);
            assert!(
                o.status.success(),
                "{f} on {p}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
}

#[test]
fn gen_writes_rtapp_json_that_validate_reads_back() {
    let o = hetsched(&[
        "gen",
        "periodic",
        "duty=5",
        "period=16ms",
        "duration=10s",
        "name=tsk_a",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // LISA's PeriodicWload: run = 5 % × 16 ms = 800 µs, loop = 10 s / 16 ms = 625.
    let p = &j["tasks"]["tsk_a"]["phases"]["periodic"];
    assert_eq!(p["loop"], 625);
    assert_eq!(p["run"], 800);
    assert_eq!(p["timer"]["ref"], "unique");
    assert_eq!(p["timer"]["period"], 16000);

    // -o FILE, then validate the file.
    let dir = std::env::temp_dir().join(format!("hetsched-cli-gen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("hb.json");
    let o = hetsched(&[
        "gen",
        "hackbench",
        "groups=2",
        "loops=10",
        "-o",
        f.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout.is_empty());
    let o = hetsched(&["validate", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = String::from_utf8_lossy(&o.stdout);
    // 2 groups × 40 tasks; each receiver reads 20 senders × 10 loops = 200 messages.
    assert!(s.contains("tasks: 80 (80 threads at start)"), "{s}");
    assert!(
        s.contains("phase recv: loop 200, 2 events (run 1, sem_wait 1)"),
        "{s}"
    );
    assert!(s.contains("warnings: 0"), "{s}");
}

#[test]
fn gen_list_names_generators_and_parameters() {
    let o = hetsched(&["gen", "--list"]);
    assert!(o.status.success());
    let s = String::from_utf8_lossy(&o.stdout);
    for g in ["sysbench-cpu:", "stress-ng-cpu:", "hackbench:", "periodic:"] {
        assert!(s.lines().any(|l| l.starts_with(g)), "{g} in {s}");
    }
    for p in ["  request_us", "  timeout", "  write_us", "  duty"] {
        assert!(s.contains(p), "{p} in {s}");
    }
}

#[test]
fn validate_gen_spec_describes_the_model() {
    let o = hetsched(&["validate", "gen:hackbench:groups=4,loops=100"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(
        s.starts_with("workload hackbench (gen:hackbench:groups=4,loops=100)"),
        "{s}"
    );
    // Per group 20 receivers × (sem_wait, run) and 20 senders × 20 × (run, sem_post).
    assert!(
        s.contains("events: run 1680, sem_post 1600, sem_wait 80"),
        "{s}"
    );
    // A sender: 100 loops × 20 writes × 5 µs.
    assert!(s.contains("per thread: run 10000 µs"), "{s}");
}

#[test]
fn bad_generator_parameters_are_one_line_errors() {
    let l = err_line(&hetsched(&["validate", "gen:hackbench:groups=0"]));
    assert_eq!(
        l,
        "hetsched: error: gen:hackbench: groups=0: expected an integer from 1 to 100000"
    );
    let l = err_line(&hetsched(&["gen", "sysbench-cpu", "thread=4"]));
    assert!(
        l.contains("gen:sysbench-cpu: unknown parameter `thread`") && l.contains("threads"),
        "{l}"
    );
    let l = err_line(&hetsched(&["gen", "nosuch"]));
    assert!(
        l.contains("unknown generator") && l.contains("hackbench"),
        "{l}"
    );
    // The platform check points at the `cpus=` parameter: column 21 of the spec.
    let l = err_line(&hetsched(&["run", "rk3399", "gen:periodic:duty=5,cpus=9"]));
    assert!(
        l.contains("gen:periodic:duty=5,cpus=9:1:21: cpus names CPU 9"),
        "{l}"
    );
}

#[test]
fn run_takes_a_generator_spec_positionally() {
    // One sysbench thread on CPU 4 of hikey960 (an A73, capacity 1024) at fmax: 100
    // requests × 1200 µs of reference work = 0.12 s, after its start work: rt-app's main
    // thread runs on CPU 4 (the generator's integer calibration), so the fork puts the
    // thread on the LITTLE CPU 0, where its 10 µs (`rtapp.thread_start_us`, at capacity
    // 1024) take 10 × 1024 / 462 µs before it pins itself to CPU 4.
    let o = hetsched(&[
        "run",
        "hikey960",
        "gen:sysbench-cpu:requests=100,cpus=4",
        "--set",
        "cpufreq.governor=performance",
        "--json",
        "-",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let t = &r["tasks"][0];
    assert_eq!(t["comm"], "sysbench-0");
    let start_work = 10e-6 * 1024.0 / 462.0;
    let done = t["completion_s"].as_f64().unwrap();
    assert!((done - (0.12 + start_work)).abs() < 1e-9, "{done}");
    assert_eq!(r["workload"], "sysbench-cpu");
}

/// Values that were clamped or silently ignored are refused with one line: `--runs 0`
/// (ran once), a noise file's zero background period (turned the background off) or work
/// jitter over ±100 % (clamped), and the fair tunables outside the kernel's sysctl range.
#[test]
fn silent_clamps_are_refused() {
    let o = hetsched(&["reproduce", "misfit", "--quick", "--runs", "0"]);
    assert_eq!(
        err_line(&o),
        "hetsched: error: --runs 0: expected at least 1 run"
    );
    let f = tmp("noise0.json", r#"{"background": {"period_us": 0}}"#);
    let o = hetsched(&[
        "reproduce",
        "misfit",
        "--quick",
        "--noise",
        f.to_str().unwrap(),
    ]);
    let e = err_line(&o);
    assert!(e.ends_with("noise0.json:1:17: background.period_us: 0 is out of range; expected at least 1000 µs (or \"enabled\": false)"), "{e}");
    let f = tmp("noise1.json", r#"{"work_jitter_ppm": 2000000}"#);
    let o = hetsched(&[
        "reproduce",
        "misfit",
        "--quick",
        "--noise",
        f.to_str().unwrap(),
    ]);
    let e = err_line(&o);
    assert!(
        e.contains("noise1.json:1:2: work_jitter_ppm: 2000000 is out of range"),
        "{e}"
    );
    for (key, v) in [
        ("fair.sched_latency_ns", "0"),
        ("fair.min_granularity_ns", "18446744073709551615"),
        ("fair.wakeup_granularity_ns", "1000000001"),
    ] {
        let set = format!("{key}={v}");
        let o = hetsched(&[
            "run",
            "--platform",
            "hikey960",
            "--workload",
            "demo",
            "--duration",
            "10ms",
            "--set",
            &set,
        ]);
        assert_eq!(
            err_line(&o),
            format!(
                "hetsched: error: option {key}: {v} is out of range; expected {}..=1000000000 ns",
                if key == "fair.wakeup_granularity_ns" {
                    0
                } else {
                    100000
                }
            )
        );
    }
}

#[test]
fn reproduce_unknown_name_lists_the_known_ones() {
    let o = hetsched(&["reproduce", "hmq"]);
    assert_eq!(
        err_line(&o),
        "hetsched: error: reproduce: unknown experiment `hmq`; expected one of: hmp, misfit, fairness, overutilized, schedfreq, all"
    );
}

#[test]
fn reproduce_misfit_writes_json_and_run_noise_is_seeded() {
    let dir = std::env::temp_dir().join(format!("hetsched-cli-repro-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("misfit.json");
    let o = hetsched(&[
        "reproduce",
        "misfit",
        "--quick",
        "--runs",
        "1",
        "--json",
        path.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("juno_r0 avg/max"), "{table}");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(j["results"]["tip"]["juno_r0"]["longest_avg_s"].is_f64());
    // `run --noise`: same noise seed, same bytes; another noise seed, other bytes.
    let w = "gen:sysbench-cpu:requests=50";
    let run = |seed: &str| {
        let o = hetsched(&[
            "run",
            "hikey960",
            w,
            "--noise",
            "--noise-seed",
            seed,
            "--json",
            "-",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    assert_eq!(run("1"), run("1"));
    assert_ne!(run("1"), run("2"));
    let plain = hetsched(&["run", "hikey960", w, "--json", "-"]);
    assert!(!String::from_utf8_lossy(&plain.stdout).contains("bgnoise"));
    assert!(run("1").contains("bgnoise"));
}

#[test]
fn reproduce_noise_file_is_used_and_its_errors_name_the_place() {
    // A shipped configuration: recorded in the JSON report, kthreads off as written.
    let cfg = repo().join("docs/noise/unbound-1hz.json");
    let dir = std::env::temp_dir().join(format!("hetsched-cli-noise-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("misfit.json");
    let o = hetsched(&[
        "reproduce",
        "misfit",
        "--quick",
        "--runs",
        "1",
        "--noise",
        cfg.to_str().unwrap(),
        "--json",
        path.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(j["noise"]["kthreads"]["enabled"], false);
    assert_eq!(j["noise"]["background"]["period_us"], 1_000_000);
    // Fields left out keep their defaults.
    assert_eq!(j["noise"]["start_jitter_us"], 1000);
    // Bad input: one line naming file, line and column.
    let bad = tmp(
        "noise-bad.json",
        "{\n  \"background\": {\"run_us\": \"x\"}\n}\n",
    );
    let e = err_line(&hetsched(&[
        "reproduce",
        "misfit",
        "--noise",
        bad.to_str().unwrap(),
    ]));
    assert!(e.contains("noise-bad.json:2:"), "{e}");
    assert!(e.contains("expected u64"), "{e}");
    let typo = tmp("noise-typo.json", "{\"kthread\": {}}");
    let e = err_line(&hetsched(&[
        "reproduce",
        "misfit",
        "--noise",
        typo.to_str().unwrap(),
    ]));
    assert!(
        e.contains("noise-typo.json:1:") && e.contains("unknown field `kthread`"),
        "{e}"
    );
}

#[test]
fn reproduce_platform_replaces_a_preset_and_bad_uses_are_one_line_errors() {
    let file = repo().join("docs/platforms/juno_r0-sysbench.yaml");
    let arg = format!("juno_r0={}", file.display());
    let o = hetsched(&[
        "reproduce",
        "misfit",
        "--quick",
        "--runs",
        "1",
        "--platform",
        &arg,
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    // the table says where the platform came from and that the seed's run is possible
    assert!(out.contains("Platform juno_r0 read from"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.contains("juno_r0   misfit  LITTLE/big") && l.ends_with("possible")),
        "{out}"
    );
    // the `platforms show` of that file shows the work speed beside the capacities
    let o = hetsched(&["platforms", "show", file.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("work speed (work_dmips_mhz"));
    // not NAME=FILE; a platform the experiment does not use; a bad file
    let e = err_line(&hetsched(&["reproduce", "misfit", "--platform", "juno_r0"]));
    assert!(e.contains("expected NAME=FILE"), "{e}");
    let e = err_line(&hetsched(&[
        "reproduce",
        "misfit",
        "--platform",
        "rk3399=x.yaml",
    ]));
    assert!(
        e.contains("misfit does not run on `rk3399`") && e.contains("juno_r0, hikey960"),
        "{e}"
    );
    let bad = tmp("juno-bad.yaml", "name: juno\nperf_domains: 3\n");
    let e = err_line(&hetsched(&[
        "reproduce",
        "misfit",
        "--platform",
        &format!("juno_r0={}", bad.display()),
    ]));
    assert!(e.contains("juno-bad.yaml:"), "{e}");
}

/// Issue 20's unclear messages and the deep-YAML hang: each is one positioned line.
#[test]
fn hostile_inputs_of_issue_20_get_one_positioned_line() {
    // 100,000 nested flow brackets (serde_yaml did not return): refused at the 65th
    let deep = format!(
        "name: x\ncpus: {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let p = tmp("deep.yaml", &deep);
    let e = err_line(&hetsched(&["platforms", "show", p.to_str().unwrap()]));
    assert!(
        e.ends_with(":2:71: flow collections nested deeper than 64 levels"),
        "{e}"
    );
    // invalid UTF-8 in a task name: refused at the byte, not replaced
    let dir = std::env::temp_dir().join(format!("hetsched-cli-{}", std::process::id()));
    let utf = dir.join("utf.json");
    std::fs::write(
        &utf,
        b"{\"global\":{\"duration\":1},\"tasks\":{\"t\xff\":{\"loop\":1,\"run\":10}}}",
    )
    .unwrap();
    let e = err_line(&hetsched(&["validate", utf.to_str().unwrap()]));
    assert!(
        e.contains("utf.json:1:37: expected UTF-8 text (byte 0xff"),
        "{e}"
    );
    // 2^64 is an integer beyond range, not "a float"
    let big = tmp(
        "big.json",
        r#"{"global":{"duration":1},"tasks":{"t":{"loop":1,"run":18446744073709551616}}}"#,
    );
    let e = err_line(&hetsched(&["validate", big.to_str().unwrap()]));
    assert!(
        e.ends_with("found an integer beyond the 64-bit range"),
        "{e}"
    );
    // argument errors: one line starting as every other error does
    let e = err_line(&hetsched(&["run", "--bogus"]));
    assert!(
        e.starts_with("hetsched: error: unexpected argument '--bogus'"),
        "{e}"
    );
}

/// `sweep --ray` without a Python that has the package (and Ray): one line saying what to
/// install, exit status 2, nothing run.
#[test]
fn sweep_ray_without_the_python_package_is_one_line() {
    let exp = tmp(
        "ray-exp.toml",
        "name = \"r\"\nplatforms = [\"hikey960\"]\nworkloads = [\"demo\"]\nduration = \"10ms\"\n",
    );
    let dir = std::env::temp_dir().join(format!("hetsched-cli-ray-{}", std::process::id()));
    let out = dir.join("out");
    let run = |python: &Path| {
        Command::new(env!("CARGO_BIN_EXE_hetsched"))
            .args(["sweep", exp.to_str().unwrap(), "-o", out.to_str().unwrap()])
            .args(["--ray", "local"])
            .env("HETSCHED_PYTHON", python)
            .output()
            .expect("run hetsched")
    };
    let e = err_line(&run(&dir.join("no-such-python")));
    assert!(e.contains("--ray: cannot run"), "{e}");
    assert!(e.contains("pip install 'hetsched[ray]'"), "{e}");
    // a Python that cannot import it: python3 without its site-packages (-I -S)
    std::fs::create_dir_all(&dir).unwrap();
    let py = dir.join("python-bare");
    std::fs::write(&py, "#!/bin/sh\nexec python3 -I -S \"$@\"\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
        if Command::new(&py)
            .args(["-c", "1"])
            .status()
            .is_ok_and(|s| s.success())
        {
            let e = err_line(&run(&py));
            assert!(
                e.contains("cannot import the hetsched Python package"),
                "{e}"
            );
            assert!(e.contains("No module named 'hetsched'"), "{e}");
        }
    }
    let ran = std::fs::read_dir(out.join("points")).map_or(0, |d| d.count());
    assert_eq!(ran, 0, "nothing ran");
}

/// A calibration CPU the platform lacks: one line at the value of `calibration`.
#[test]
fn calibration_cpu_out_of_range_names_line_and_column() {
    let p = tmp(
        "calib.json",
        "{\n  \"global\": {\n    \"duration\": 1,\n    \"calibration\": \"CPU9\"\n  },\n  \"tasks\": { \"t\": { \"loop\": 1, \"run\": 100 } }\n}\n",
    );
    let l = err_line(&hetsched(&[
        "run",
        "-p",
        "hikey960",
        "-w",
        p.to_str().unwrap(),
    ]));
    assert!(
        l.starts_with("hetsched: error: ")
            && l.contains("calib.json:4:20: global.calibration \"CPU9\" names a CPU"),
        "{l}"
    );
    assert!(l.contains("(CPUs 0-7)"), "{l}");
}

/// `validate` rejects the locking `run` rejects, with the same line at the event's key.
#[test]
fn validate_rejects_the_locking_run_rejects() {
    let cases = [
        (
            "relock.json",
            r#"{"global": {"duration": 1}, "tasks": {"t": {"loop": 1,
  "lock": "m", "run": 10,
  "lock1": "m", "unlock": "m", "unlock1": "m"}}}"#,
            ":3:3: task `t` locks mutex `m` it already holds",
        ),
        (
            "unheld.json",
            r#"{"global": {"duration": 1}, "tasks": {"t": {"loop": 1,
  "run": 10,
    "unlock": "m"}}}"#,
            ":3:5: task `t` unlocks mutex `m` it does not hold",
        ),
        (
            "condwait.json",
            r#"{"global": {"duration": 1}, "tasks": {"t": {"loop": 1,
  "run": 10, "wait": {"ref": "c", "mutex": "m"}}}}"#,
            ":2:14: task `t` waits with mutex `m` it does not hold",
        ),
    ];
    for (name, text, want) in cases {
        let p = tmp(name, text);
        let path = p.to_str().unwrap();
        let v = err_line(&hetsched(&["validate", path]));
        assert!(v.contains(&format!("{name}{want}")), "{v}");
        let r = err_line(&hetsched(&["run", "-p", "hikey960", "-w", path]));
        assert_eq!(v, r, "validate and run give the same line");
    }
    // the same events in a right order validate
    let ok = tmp(
        "lockok.json",
        r#"{"global": {"duration": 1}, "tasks": {"t": {"loop": 1,
  "lock": "m", "wait": {"ref": "c", "mutex": "m"}, "unlock": "m"}}}"#,
    );
    let o = hetsched(&["validate", ok.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A run stopped by SIGINT or SIGTERM: exit status 128 + the signal, one line saying so,
/// and neither the trace nor the JSON at their names (nor a temporary file left behind).
#[test]
fn interrupted_run_exits_nonzero_and_leaves_no_output() {
    use std::time::{Duration, Instant};
    for (signal, code, trace) in [("INT", 130, "t.txt"), ("TERM", 143, "t.pftrace")] {
        let dir =
            std::env::temp_dir().join(format!("hetsched-cli-sig{signal}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_hetsched"))
            .current_dir(&dir)
            .args(["run", "-p", "hikey960", "-w", "demo", "-d", "100000s"])
            .args(["--trace", trace, "--json", "r.json", "--report", "r.html"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // the run is under way once its temporary trace exists
        let t0 = Instant::now();
        let listing = || -> Vec<String> {
            std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        };
        while !listing().iter().any(|n| n.ends_with(".tmp")) {
            assert!(t0.elapsed() < Duration::from_secs(60), "no temporary trace");
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(300));
        let st = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
        let t1 = Instant::now();
        let o = child.wait_with_output().unwrap();
        assert!(
            t1.elapsed() < Duration::from_secs(4),
            "stopped at the next poll"
        );
        assert_eq!(o.status.code(), Some(code), "SIG{signal}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(e, format!("hetsched: error: interrupted by SIG{signal}\n"));
        assert_eq!(listing(), Vec::<String>::new(), "SIG{signal}: files left");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// An output that cannot be created is named as the user wrote it (not its temporary
/// name), and nothing is left behind.
#[test]
fn unwritable_output_names_the_file_asked_for() {
    let dir = std::env::temp_dir().join(format!("hetsched-cli-nodir-{}", std::process::id()));
    let missing = dir.join("no/such/dir/t.txt");
    let e = err_line(&hetsched(&[
        "run",
        "-p",
        "hikey960",
        "-w",
        "demo",
        "-d",
        "10ms",
        "--trace",
        missing.to_str().unwrap(),
    ]));
    assert!(
        e.starts_with(&format!("hetsched: error: {}: ", missing.display())),
        "{e}"
    );
    assert!(!e.contains(".tmp"), "{e}");
}
