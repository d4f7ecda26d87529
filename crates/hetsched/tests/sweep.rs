//! `hetsched::sweep`: the experiment file (good file, each error with its line and column),
//! the points' hashes, resume after an interruption, and independence of the job count.

// Test helpers panic on unexpected failures by design.
#![allow(clippy::unwrap_used)]

use hetsched::sweep::{self, Experiment};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The issue's example, as written.
const ISSUE_EXAMPLE: &str = r#"name = "misfit-vs-governor"
platforms = ["hikey960", "rk3399"]
workloads = ["demo", "gen:periodic:duty=30,tasks=4"]
seeds = [1, 2, 3]
noise = true

[grid]
"balance.misfit" = [true, false]
"cpufreq.governor" = ["performance", "schedutil"]
"#;

/// Small and quick: 2 × 4 = 8 points of a 0.2 s run.
const SMALL: &str = r#"platforms = ["hikey960"]
workloads = ["gen:periodic:duty=30,tasks=2"]
seeds = { from = 1, to = 4 }
noise = true
duration = "200ms"

[grid]
"balance.misfit" = [true, false]
"#;

fn parse(text: &str) -> Result<Experiment, String> {
    sweep::parse_str(text, "exp.toml", "exp", Path::new("")).map_err(|e| e.to_string())
}

/// A fresh directory under the test target's temporary directory.
fn fresh_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("sweep-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every file under `dir/points`, name → bytes.
fn point_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir.join("points"))
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_issue_example_parses_as_written() {
    let e = parse(ISSUE_EXAMPLE).unwrap();
    assert_eq!(e.name, "misfit-vs-governor");
    assert_eq!(e.platforms, ["hikey960", "rk3399"]);
    assert_eq!(e.seeds, [1, 2, 3]);
    assert!(e.noise.is_some());
    let pts = sweep::points(&e).unwrap();
    assert_eq!(pts.len(), 2 * 2 * 3 * 2 * 2);
    // platforms outermost, grid keys in file order, seeds innermost
    let cols: Vec<&String> = pts[0].params.keys().collect();
    assert_eq!(
        cols,
        [
            "platform",
            "workload",
            "balance.misfit",
            "cpufreq.governor",
            "seed"
        ]
    );
    let p = &pts[1];
    assert_eq!(p.params["platform"], "hikey960");
    assert_eq!(p.params["balance.misfit"], true);
    assert_eq!(p.params["cpufreq.governor"], "performance");
    assert_eq!(p.params["seed"], 2);
    assert_eq!(
        p.sets,
        ["balance.misfit=true", "cpufreq.governor=performance"]
    );
    assert_eq!(pts[47].params["platform"], "rk3399");
    assert_eq!(pts[47].params["cpufreq.governor"], "schedutil");
    assert_eq!(pts[3].params["cpufreq.governor"], "schedutil");
    // every point has its own hash
    let hashes: std::collections::BTreeSet<&str> = pts.iter().map(|p| p.hash.as_str()).collect();
    assert_eq!(hashes.len(), 48);
}

#[test]
fn ranges_zips_sets_and_kernels() {
    let e = parse(
        r#"platforms = ["hikey960"]
workloads = ["demo"]
kernels = ["v5.9", "v6.11"]
seeds = { from = 0, to = 4, step = 2 }
[set]
"cpufreq.userspace_khz" = [533000, 903000]
"sched.hz" = 1000
[grid]
"fair.base_slice_ns" = { from = 1000000, to = 3000000, step = 1000000 }
[[zip]]
"balance.misfit" = [true, false]
"cpufreq.governor" = ["schedutil", "performance"]
"#,
    )
    .unwrap();
    assert_eq!(e.seeds, [0, 2, 4]);
    assert_eq!(
        e.set,
        ["cpufreq.userspace_khz=[533000,903000]", "sched.hz=1000"]
    );
    let pts = sweep::points(&e).unwrap();
    assert_eq!(pts.len(), 2 * 3 * 2 * 3);
    let p = &pts[3];
    assert_eq!(p.params["kernel"], "v5.9");
    assert_eq!(p.params["fair.base_slice_ns"], 1_000_000);
    assert_eq!(p.params["balance.misfit"], false);
    assert_eq!(p.params["cpufreq.governor"], "performance");
    assert_eq!(
        p.sets,
        [
            "cpufreq.userspace_khz=[533000,903000]",
            "sched.hz=1000",
            "kernel=v5.9",
            "fair.base_slice_ns=1000000",
            "balance.misfit=false",
            "cpufreq.governor=performance"
        ]
    );
    // `noise = false` and a noise table
    assert!(
        parse("platforms=[\"tc2\"]\nworkloads=[\"demo\"]\nnoise=false\n")
            .unwrap()
            .noise
            .is_none()
    );
    let n = parse("platforms=[\"tc2\"]\nworkloads=[\"demo\"]\nnoise={work_jitter_ppm=5000}\n")
        .unwrap()
        .noise
        .unwrap();
    assert_eq!(n.work_jitter_ppm, 5000);
    assert_eq!(n.start_jitter_us, 1000);
}

#[test]
fn each_error_names_its_line_and_column() {
    let head = "platforms = [\"hikey960\"]\nworkloads = [\"demo\"]\n";
    let cases: &[(&str, &str)] = &[
        // unknown top-level key
        (
            "plaforms = 1\n",
            "exp.toml:3:1: unknown field `plaforms`, expected one of",
        ),
        // syntax
        (
            "seeds = [1, 2\n",
            "exp.toml:3:14: unclosed array, expected `]`",
        ),
        // wrong type
        (
            "kernels = \"v5.9\"\n",
            "exp.toml:3:11: invalid type: string \"v5.9\", expected a sequence",
        ),
        // unknown option key: the key
        (
            "[grid]\n\"balance.misfitt\" = [true]\n",
            "exp.toml:4:1: grid: balance.misfitt=true: unknown field `misfitt`",
        ),
        // bad option value: the value
        (
            "[grid]\n\"balance.misfit\" = [true, 3]\n",
            "exp.toml:4:20: grid: balance.misfit=3: invalid type: integer `3`, expected a boolean",
        ),
        (
            "[set]\n\"sched.hz\" = \"fast\"\n",
            "exp.toml:4:14: set: sched.hz=fast:",
        ),
        (
            "kernels = [\"v9.9\"]\n",
            "exp.toml:3:12: kernels: kernel=v9.9:",
        ),
        // seeds
        (
            "seeds = [1, -2]\n",
            "exp.toml:3:9: seeds: `-2` is not a seed; expected integers ≥ 0",
        ),
        (
            "seeds = { from = 3, to = 1 }\n",
            "exp.toml:3:9: `seeds`: range to 1 < from 3",
        ),
        (
            "seeds = { from = 1, to = 3, step = 0 }\n",
            "exp.toml:3:9: `seeds`: range step 0: expected > 0",
        ),
        (
            "seeds = { from = 1, too = 3 }\n",
            "exp.toml:3:9: `seeds`: unknown range field `too`",
        ),
        (
            "seeds = { from = 1.5, to = 3 }\n",
            "exp.toml:3:9: `seeds`: range `from` must be an integer",
        ),
        (
            "seeds = []\n",
            "exp.toml:3:9: `seeds`: expected at least one value",
        ),
        // zip
        (
            "[[zip]]\n\"fair.variant\" = [\"cfs\", \"eevdf\"]\n\"sched.hz\" = [100]\n",
            "exp.toml:5:14: zip: `sched.hz` has 1 values but `fair.variant` has 2",
        ),
        // a key given twice
        (
            "[set]\n\"sched.hz\" = 100\n[grid]\n\"sched.hz\" = [250]\n",
            "exp.toml:6:1: `sched.hz` is given twice",
        ),
        (
            "kernels = [\"v5.9\"]\n[grid]\nkernel = [\"v6.11\"]\n",
            "exp.toml:5:1: `kernel` is given twice",
        ),
        // noise, duration, name
        (
            "noise = { work_jitter_ppm = 2000000 }\n",
            "exp.toml:3:9: noise: work_jitter_ppm: 2000000 is out of range",
        ),
        (
            "noise = { jitter = 1 }\n",
            "exp.toml:3:9: noise: unknown field `jitter`",
        ),
        (
            "noise = 1\n",
            "exp.toml:3:9: noise: expected true, false or a table",
        ),
        (
            "duration = \"fast\"\n",
            "exp.toml:3:12: duration `fast`: expected a number with a unit",
        ),
        (
            "name = \"\"\n",
            "exp.toml:3:8: name: expected a non-empty string",
        ),
        // a table where a value is expected
        (
            "[set]\n\"sched.hz\" = { a = 1 }\n",
            "exp.toml:4:14: `sched.hz`: expected a string, number, boolean or array",
        ),
    ];
    for (tail, want) in cases {
        let e = parse(&format!("{head}{tail}")).unwrap_err();
        assert!(e.starts_with(want), "{tail:?}\n got: {e}\nwant: {want}");
        assert_eq!(e.lines().count(), 1, "one line: {e}");
    }
    // platforms and workloads are loaded at parse time, the error at the element
    let e = parse("platforms = [\"hikey960\", \"hikey96\"]\nworkloads = [\"demo\"]\n").unwrap_err();
    assert!(
        e.starts_with("exp.toml:1:26: platforms: unknown platform `hikey96`"),
        "{e}"
    );
    let e =
        parse("platforms = [\"hikey960\"]\nworkloads = [\"demo\", \"gen:periodic:duty=300\"]\n")
            .unwrap_err();
    assert!(
        e.starts_with("exp.toml:2:22: workloads: gen:periodic"),
        "{e}"
    );
    let e = parse("platforms = []\nworkloads = [\"demo\"]\n").unwrap_err();
    assert_eq!(e, "exp.toml:1:13: platforms: expected at least one");
    let e = parse("workloads = [\"demo\"]\n").unwrap_err();
    assert!(e.starts_with("exp.toml"), "{e}");
    assert!(e.contains("missing field `platforms`"), "{e}");
}

#[test]
fn schema_is_json_and_names_every_key() {
    let v: serde_json::Value = serde_json::from_str(&sweep::schema()).unwrap();
    let props = v["properties"].as_object().unwrap();
    for k in [
        "name",
        "platforms",
        "workloads",
        "kernels",
        "seeds",
        "noise",
        "duration",
        "set",
        "grid",
        "zip",
    ] {
        assert!(props.contains_key(k), "{k}");
    }
}

#[test]
fn hashes_are_stable_and_change_with_the_inputs() {
    let base = parse(SMALL).unwrap();
    let h = |text: &str| -> Vec<String> {
        sweep::points(&parse(text).unwrap())
            .unwrap()
            .into_iter()
            .map(|p| p.hash)
            .collect()
    };
    let a = h(SMALL);
    assert_eq!(a, h(SMALL), "same file, same hashes");
    assert!(a
        .iter()
        .all(|x| x.len() == 64 && x.chars().all(|c| c.is_ascii_hexdigit())));
    // what does not change a result does not change the hash: the name, a fixed value
    // in [set] rather than a one-value grid, the options' order in the file
    let renamed = format!("name = \"other\"\n{SMALL}");
    assert_eq!(h(&renamed), a);
    let two = |x: &str, y: &str| {
        format!("platforms = [\"hikey960\"]\nworkloads = [\"demo\"]\nduration = \"100ms\"\n[grid]\n{x}\n{y}\n")
    };
    let ab = h(&two(
        "\"sched.hz\" = [1000]",
        "\"balance.misfit\" = [false]",
    ));
    let ba = h(&two(
        "\"balance.misfit\" = [false]",
        "\"sched.hz\" = [1000]",
    ));
    assert_eq!(ab, ba);
    let set = h("platforms = [\"hikey960\"]\nworkloads = [\"demo\"]\nduration = \"100ms\"\n[set]\n\"sched.hz\" = 1000\n\"balance.misfit\" = false\n");
    assert_eq!(set, ab);
    // an option at its default value is the same point as no option
    let dflt = h("platforms = [\"hikey960\"]\nworkloads = [\"demo\"]\nduration = \"100ms\"\n[set]\n\"balance.misfit\" = true\n");
    let none = h("platforms = [\"hikey960\"]\nworkloads = [\"demo\"]\nduration = \"100ms\"\n");
    assert_eq!(dflt, none);
    // what changes a result changes the hash: seed, option, duration, noise, platform,
    // workload content
    assert_ne!(a[0], a[1], "seed");
    assert_ne!(a[0], a[4], "balance.misfit");
    assert_ne!(h(&SMALL.replace("200ms", "300ms"))[0], a[0], "duration");
    assert_ne!(
        h(&SMALL.replace("noise = true", "noise = false"))[0],
        a[0],
        "noise"
    );
    assert_ne!(
        h(&SMALL.replace("noise = true", "noise = { work_jitter_ppm = 5000 }"))[0],
        a[0],
        "noise parameters"
    );
    assert_ne!(h(&SMALL.replace("hikey960", "rk3399"))[0], a[0], "platform");
    assert_ne!(h(&SMALL.replace("tasks=2", "tasks=3"))[0], a[0], "workload");
    drop(base);

    // a workload file: its content counts, not the directory the sweep is read from
    let dir = fresh_dir("hash-files");
    let wl = hetsched::generate_json(
        "periodic",
        &[
            ("duty".into(), "20".into()),
            ("duration".into(), "1s".into()),
        ],
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub/w.json"), &wl).unwrap();
    let exp = "platforms = [\"hikey960\"]\nworkloads = [\"w.json\"]\n";
    let from = |base: &Path| {
        sweep::points(&sweep::parse_str(exp, "e.toml", "e", base).unwrap()).unwrap()[0]
            .hash
            .clone()
    };
    let h1 = from(&dir.join("sub"));
    let cwd_rel = dir.join("sub/../sub");
    assert_eq!(from(&cwd_rel), h1, "same file by another path");
    std::fs::write(
        dir.join("sub/w.json"),
        wl.replace("\"run\": 3200", "\"run\": 3300"),
    )
    .unwrap();
    assert_ne!(from(&dir.join("sub")), h1, "edited content");
}

#[test]
fn resume_runs_only_what_is_missing() {
    let exp = parse(SMALL).unwrap();
    let dir = fresh_dir("resume");
    let first = sweep::run(&exp, &dir, 2, &|_, _| {}).unwrap();
    assert_eq!(first.ran, 8);
    assert_eq!(first.plan.missing.len(), 8);
    let table = std::fs::read(dir.join("table.csv")).unwrap();
    let before = point_files(&dir);
    assert_eq!(before.len(), 8);

    // an interrupted sweep: three result files gone, a half-written temporary file left
    let hashes: Vec<String> = first.plan.points.iter().map(|p| p.hash.clone()).collect();
    for h in [&hashes[0], &hashes[3], &hashes[7]] {
        std::fs::remove_file(dir.join(format!("points/{h}.json"))).unwrap();
    }
    let stray = dir.join(format!("points/.{}.json.4242.0.tmp", hashes[5]));
    std::fs::write(&stray, "{\"format\": 1, \"hash\"").unwrap();
    std::fs::remove_file(dir.join("table.csv")).unwrap();

    let ran = std::sync::Mutex::new(Vec::new());
    let second = sweep::run(&exp, &dir, 2, &|done, total| {
        ran.lock().unwrap().push((done, total));
    })
    .unwrap();
    assert_eq!(second.ran, 3, "only the three missing points run");
    assert_eq!(second.plan.missing, [0, 3, 7]);
    assert_eq!(second.plan.removed_tmp, 1);
    assert!(!stray.exists());
    assert_eq!(ran.lock().unwrap().len(), 3);
    // nothing duplicated, nothing changed: the same files, the same bytes
    assert_eq!(point_files(&dir), before);
    assert_eq!(std::fs::read(dir.join("table.csv")).unwrap(), table);

    // complete: nothing runs
    let third = sweep::run(&exp, &dir, 2, &|_, _| {}).unwrap();
    assert_eq!(third.ran, 0);

    // a changed point is a new point: one more seed runs two more points
    let more = parse(&SMALL.replace("to = 4", "to = 5")).unwrap();
    let fourth = sweep::run(&more, &dir, 2, &|_, _| {}).unwrap();
    assert_eq!(fourth.ran, 2);
    assert_eq!(point_files(&dir).len(), 10);
    assert_eq!(fourth.table.rows.len(), 10);
    // the table follows the experiment, not the directory
    let fifth = sweep::run(&exp, &dir, 2, &|_, _| {}).unwrap();
    assert_eq!(fifth.ran, 0);
    assert_eq!(std::fs::read(dir.join("table.csv")).unwrap(), table);
}

/// Result files are renamed into place without fsync: after a crash of the machine one may
/// be empty, cut short, zero-filled or another point's. The next sweep runs those points
/// again and ends with the same files and table.
#[test]
fn result_files_a_machine_crash_could_leave_are_run_again() {
    let exp = parse(SMALL).unwrap();
    let dir = fresh_dir("crash");
    let first = sweep::run(&exp, &dir, 2, &|_, _| {}).unwrap();
    let table = std::fs::read(dir.join("table.csv")).unwrap();
    let before = point_files(&dir);
    let hashes: Vec<String> = first.plan.points.iter().map(|p| p.hash.clone()).collect();
    let file = |i: usize| dir.join(format!("points/{}.json", hashes[i]));
    let whole = std::fs::read(file(1)).unwrap();
    std::fs::write(file(1), b"").unwrap();
    std::fs::write(file(2), &whole[..whole.len() / 2]).unwrap();
    std::fs::write(file(4), vec![0u8; whole.len()]).unwrap();
    std::fs::copy(file(0), file(6)).unwrap();
    // read before a rerun, a damaged file is an error saying to rerun, not wrong data
    for i in [1, 2, 4, 6] {
        let e = sweep::load(&dir).unwrap_err().to_string();
        assert!(e.contains("rerun the sweep"), "{e}");
        let e = sweep::read_result(&dir, &hashes[i])
            .unwrap_err()
            .to_string();
        assert!(e.contains("rerun the sweep"), "{e}");
    }
    let second = sweep::run(&exp, &dir, 2, &|_, _| {}).unwrap();
    assert_eq!(second.plan.missing, [1, 2, 4, 6]);
    assert_eq!(second.ran, 4);
    assert_eq!(point_files(&dir), before);
    assert_eq!(std::fs::read(dir.join("table.csv")).unwrap(), table);
}

/// The plan and the table read a result file by the fields they need, and as a JSON value
/// when that fails: the odd files a user could leave are judged as a `Value` judges them.
#[test]
fn odd_result_files_are_read_as_json_values() {
    let exp = parse(SMALL).unwrap();
    let dir = fresh_dir("odd");
    let first = sweep::run(&exp, &dir, 2, &|_, _| {}).unwrap();
    let table = std::fs::read(dir.join("table.csv")).unwrap();
    let hashes: Vec<String> = first.plan.points.iter().map(|p| p.hash.clone()).collect();
    let file = |i: usize| dir.join(format!("points/{}.json", hashes[i]));
    // a duplicate key: the last one counts, as in a `Value`; the point is complete
    let whole = std::fs::read_to_string(file(3)).unwrap();
    let dup = format!("{{\"hash\": \"{}\", {}", hashes[0], &whole[1..]);
    std::fs::write(file(3), &dup).unwrap();
    let again = sweep::run(&exp, &dir, 2, &|_, _| {}).unwrap();
    assert_eq!(again.ran, 0);
    assert_eq!(std::fs::read(dir.join("table.csv")).unwrap(), table);
    // its hash only first: not this point's file
    let dup = format!(
        "{}, \"hash\": \"{}\"}}",
        &whole[..whole.len() - 2],
        hashes[0]
    );
    std::fs::write(file(3), &dup).unwrap();
    let e = sweep::load(&dir).unwrap_err().to_string();
    assert!(e.contains("not the result of point"), "{e}");
    // a null result beside an error: the result is read, and is not one
    std::fs::write(
        file(2),
        format!(
            "{{\"hash\": \"{}\", \"result\": null, \"error\": \"x\"}}",
            hashes[2]
        ),
    )
    .unwrap();
    let e = sweep::load(&dir).unwrap_err().to_string();
    assert!(e.contains("not a hetsched result"), "{e}");
    // its hash and result as an array (serde's derive reads a struct from one): not a
    // result file
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file(1)).unwrap()).unwrap();
    let arr = [&v["hash"], &v["result"]];
    std::fs::write(file(1), serde_json::to_string(&arr).unwrap()).unwrap();
    let e = sweep::load(&dir).unwrap_err().to_string();
    assert!(
        e.contains(&format!("{}.json: not the result", hashes[1])),
        "{e}"
    );
    // its hash alone in an array: not a result file
    std::fs::write(file(5), format!("[\"{}\"]", hashes[5])).unwrap();
    let plan = sweep::plan(&exp, &dir).unwrap();
    assert_eq!(plan.missing, [1, 3, 5]);
    // the three run again; the table still stops at the null result
    let e = sweep::run(&exp, &dir, 2, &|_, _| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a hetsched result"), "{e}");
    assert!(sweep::plan(&exp, &dir).unwrap().missing.is_empty());
    std::fs::write(file(2), "").unwrap();
    assert_eq!(sweep::run(&exp, &dir, 2, &|_, _| {}).unwrap().ran, 1);
    assert_eq!(std::fs::read(dir.join("table.csv")).unwrap(), table);
}

#[test]
fn results_do_not_depend_on_the_job_count() {
    let exp = parse(SMALL).unwrap();
    let one = fresh_dir("jobs1");
    let three = fresh_dir("jobs3");
    sweep::run(&exp, &one, 1, &|_, _| {}).unwrap();
    sweep::run(&exp, &three, 3, &|_, _| {}).unwrap();
    assert_eq!(point_files(&one), point_files(&three));
    for f in ["table.csv", "experiment.json"] {
        assert_eq!(
            std::fs::read(one.join(f)).unwrap(),
            std::fs::read(three.join(f)).unwrap(),
            "{f}"
        );
    }
    // and a point run on its own (as another backend would) gives the same bytes
    let plan = sweep::plan(&exp, &one).unwrap();
    let p = &plan.points[2];
    assert_eq!(
        sweep::run_point(p).unwrap().into_bytes(),
        std::fs::read(one.join(format!("points/{}.json", p.hash))).unwrap()
    );
    // the table reads back: one row per point, the parameters as columns
    let t = sweep::load(&one).unwrap();
    assert_eq!(
        t.columns,
        ["platform", "workload", "balance.misfit", "seed"]
    );
    assert_eq!(t.rows.len(), 8);
    assert!(t.rows.iter().all(|r| r.error.is_none()));
    let csv = std::fs::read_to_string(one.join("table.csv")).unwrap();
    assert!(csv.starts_with("index,hash,platform,workload,balance.misfit,seed,duration_s,"));
    assert!(t.summary().contains("balance.misfit"), "{}", t.summary());
}

#[test]
fn a_failed_run_is_a_result_and_is_not_repeated() {
    // EAS required on a platform without an Energy Model fails at the run
    let exp = parse(
        "platforms = [\"hikey960\"]\nworkloads = [\"demo\"]\nduration = \"100ms\"\n[grid]\n\"cpufreq.governor\" = [\"schedutil\", \"performance\"]\n\"eas.mode\" = [\"on\"]\n",
    )
    .unwrap();
    let dir = fresh_dir("failed");
    let o = sweep::run(&exp, &dir, 2, &|_, _| {}).unwrap();
    assert_eq!(o.ran, 2);
    let errs: Vec<&str> = o
        .table
        .rows
        .iter()
        .filter_map(|r| r.error.as_deref())
        .collect();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].contains("eas.mode"), "{errs:?}");
    assert!(o.table.summary().contains("1 points failed"));
    assert_eq!(sweep::run(&exp, &dir, 2, &|_, _| {}).unwrap().ran, 0);
}

#[test]
fn the_shipped_example_is_the_issue_example() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../presets/experiments/misfit-vs-governor.toml");
    let shipped = sweep::read_file(&path).unwrap();
    let issue = parse(ISSUE_EXAMPLE).unwrap();
    assert_eq!(shipped, issue);
    let h = |e: &Experiment| -> Vec<String> {
        sweep::points(e)
            .unwrap()
            .into_iter()
            .map(|p| p.hash)
            .collect()
    };
    assert_eq!(h(&shipped), h(&issue));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Whatever the text, reading it returns (a value or a one-line error), never panics:
    /// the issue's example with a piece replaced by arbitrary TOML-ish text.
    #[test]
    fn any_text_is_an_experiment_or_one_line_error(
        at in 0usize..ISSUE_EXAMPLE.len(),
        len in 0usize..40,
        junk in "[a-z0-9\\[\\]{}=\",.\\- \n]{0,40}",
    ) {
        let mut text = ISSUE_EXAMPLE.to_string();
        let start = (0..=at).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
        let end = (start + len).min(text.len());
        let end = (end..=text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(text.len());
        text.replace_range(start..end, &junk);
        if let Err(e) = parse(&text) {
            proptest::prop_assert!(e.starts_with("exp.toml"), "{}", e);
            proptest::prop_assert_eq!(e.lines().count(), 1, "{}", e);
        }
    }
}
