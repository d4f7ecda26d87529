use super::timeline::{TimelineSink, MAX_BUCKETS};
use super::*;
use crate::reproduce::{self, ReproduceOptions, EXPERIMENTS};
use crate::{run_request_extra, RunRequest};

fn run_with_timeline(platform: &str, workload: &str, duration: &str) -> Value {
    let req = RunRequest {
        platform: platform.into(),
        workload: workload.into(),
        seed: 1,
        duration: Some(crate::parse_duration(duration).unwrap()),
        ..Default::default()
    };
    let mut tl = TimelineSink::new();
    let out = run_request_extra(&req, Some(&mut tl)).unwrap();
    let tl = tl.finish();
    crate::result_value_with_timeline(&out.result, Some(&tl))
}

/// No request can leave the page: no URL scheme, no `src=`, no `href` but to anchors.
fn assert_self_contained(html: &str) {
    for needle in [
        "http://", "https://", "src=", "url(http", "@import", "//cdn",
    ] {
        assert!(!html.contains(needle), "report contains {needle}");
    }
    for (i, _) in html.match_indices("href=\"") {
        assert!(html[i + 6..].starts_with('#'), "external href at {i}");
    }
}

fn svg_count(html: &str) -> usize {
    html.matches("<svg class=\"plot\"").count()
}

#[test]
fn run_report_is_deterministic_and_self_contained() {
    let a = run_with_timeline("hikey960", "demo", "1s");
    let b = run_with_timeline("hikey960", "demo", "1s");
    let inputs = |v: &Value| vec![input_from_json("demo.json", v.clone()).unwrap()];
    let ha = render(&inputs(&a), &ReportOptions::default());
    let hb = render(&inputs(&b), &ReportOptions::default());
    assert_eq!(ha, hb);
    assert_self_contained(&ha);
    // Gantt, frequency, two util plots, overutilized, residency, energy
    assert_eq!(svg_count(&ha), 7, "{ha}");
    assert!(ha.contains("Per-CPU timeline"));
    // every task of the result is in the tasks table
    for t in a["tasks"].as_array().unwrap() {
        assert!(ha.contains(&format!(
            "<td class=\"l\">{}</td>",
            t["comm"].as_str().unwrap()
        )));
    }
    // without a timeline: the plots the result holds, and a note saying how to get the rest
    let mut plain = a.clone();
    plain.as_object_mut().unwrap().remove("timeline");
    let h = render(&inputs(&plain), &ReportOptions::default());
    assert_eq!(svg_count(&h), 2);
    assert!(h.contains("has no timeline"));
}

#[test]
fn the_timeline_is_bounded_and_keeps_all_the_busy_time() {
    // 60 s of four periodic tasks: 60,000 one-millisecond buckets before downsampling
    let v = run_with_timeline(
        "hikey960",
        "gen:periodic:duty=30,tasks=4,duration=60s",
        "60s",
    );
    let tl = &v["timeline"];
    let n = tl["buckets"].as_u64().unwrap() as usize;
    assert!((MAX_BUCKETS / 2..=MAX_BUCKETS).contains(&n), "{n} buckets");
    let w = tl["bucket_s"].as_f64().unwrap();
    for (c, cpu) in tl["cpus"].as_array().unwrap().iter().enumerate() {
        for key in ["task", "busy", "freq_khz", "idle_deep", "util"] {
            assert_eq!(cpu[key].as_array().unwrap().len(), n);
        }
        let busy: f64 = cpu["busy"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b.as_f64().unwrap())
            .sum::<f64>()
            * w;
        let want = v["cpus"][c]["busy_s"].as_f64().unwrap();
        assert!(
            (busy - want).abs() < 1e-6 * want.max(1.0),
            "CPU{c}: {busy} s in the timeline, {want} s in the result"
        );
    }
    let html = render(
        &[input_from_json("long.json", v.clone()).unwrap()],
        &ReportOptions::default(),
    );
    // the marks are bounded by the buckets, not the events
    assert!(html.len() < 4_000_000, "{} bytes", html.len());
}

#[test]
fn every_reproduction_gets_its_section() {
    let opts = ReproduceOptions {
        runs: Some(1),
        quick: true,
        jobs: 2,
        ..Default::default()
    };
    for name in EXPERIMENTS {
        let rep = reproduce::run(name, &opts, &|_, _| {}).unwrap();
        let v: Value = serde_json::from_str(&rep.to_json()).unwrap();
        let html = render(
            &[input_from_json(name, v).unwrap()],
            &ReportOptions::default(),
        );
        assert_self_contained(&html);
        assert!(html.contains(&format!("Reproduction: {name}")));
        // a row per criterion with its verdict
        let verdicts = html.matches("class=\"pass\">PASS").count()
            + html.matches("class=\"fail\">FAIL").count();
        assert_eq!(verdicts, rep.criteria.len(), "{name}");
        assert!(html.contains("Results beside the seed"));
        assert!(svg_count(&html) >= 1, "{name}: no plot");
        // every plot has marks
        for svg in html.split("<svg class=\"plot\"").skip(1) {
            let svg = &svg[..svg.find("</svg>").unwrap()];
            assert!(
                svg.contains("<rect x=")
                    || svg.contains("<circle")
                    || svg.contains("<path class=\"ln\""),
                "{name}: an empty plot"
            );
        }
    }
}

#[test]
fn sweep_report_plots_metrics_against_parameters() {
    let dir = std::env::temp_dir().join(format!("hetsched-report-sweep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let exp = crate::sweep::experiment::parse_str(
        "name = \"t\"\nplatforms = [\"hikey960\"]\nworkloads = [\"demo\"]\nseeds = [1, 2]\nduration = \"300ms\"\n[grid]\n\"balance.misfit\" = [true, false]\n",
        "t.toml",
        "t",
        Path::new("."),
    )
    .unwrap();
    crate::sweep::run(&exp, &dir, 2, &|_, _| {}).unwrap();
    let input = load_input(&dir).unwrap();
    let a = render(std::slice::from_ref(&input), &ReportOptions::default());
    let b = render(&[load_input(&dir).unwrap()], &ReportOptions::default());
    assert_eq!(a, b);
    assert_self_contained(&a);
    assert!(a.contains("against balance.misfit"));
    assert!(svg_count(&a) >= 4);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_inputs_are_named() {
    let e = input_from_json("x.json", serde_json::json!({"a": 1}))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("report: x.json: not a run's result"), "{e}");
    let e = load_input(Path::new("/nonexistent/r.json"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("/nonexistent/r.json"), "{e}");
}
