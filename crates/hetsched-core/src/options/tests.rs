//! Tests of the options: defaults, `--set` parsing, kernel profiles.

use super::*;
use crate::sched::fair::FairVariant;

#[test]
fn sets_apply_and_reject_unknown_keys() {
    let o = Options::default()
        .apply_sets(&[
            "fair.variant=cfs",
            "sched.hz=1000",
            "cpufreq.userspace_khz=[1,2]",
        ])
        .unwrap();
    assert_eq!(o.fair.variant, FairVariant::Cfs);
    assert_eq!(o.sched.hz, 1000);
    assert_eq!(o.cpufreq.userspace_khz, vec![1, 2]);
    let e = Options::default()
        .apply_sets(&["fair.bogus=1"])
        .unwrap_err();
    assert!(e.to_string().contains("unknown field `bogus`"), "{e}");
    let e = Options::default()
        .apply_sets(&["sched.hz=fast"])
        .unwrap_err();
    assert!(e.to_string().starts_with("--set sched.hz=fast:"), "{e}");
    assert!(matches!(
        Options::default().apply_sets(&["nokey"]),
        Err(OptionsError::NotKeyValue(_))
    ));
}

#[test]
fn eas_mode_on_explains_why_it_cannot_run() {
    let p = crate::energy::em::tests::juno();
    let o = Options::default()
        .apply_sets(&["eas.mode=on", "cpufreq.governor=performance"])
        .unwrap();
    let e = Settings::resolve(&o, &p).unwrap_err();
    assert_eq!(
        e.to_string(),
        "option eas.mode: EAS cannot run on platform juno-test: EAS needs the schedutil governor on every cpufreq policy: set cpufreq.governor = schedutil (it is performance)"
    );
    // auto: silently off with performance, on with schedutil (the default).
    let perf = Options::default()
        .apply_sets(&["cpufreq.governor=performance"])
        .unwrap();
    assert!(!Settings::resolve(&perf, &p).unwrap().eas_enabled);
    assert!(
        Settings::resolve(&Options::default(), &p)
            .unwrap()
            .eas_enabled
    );
    let o = Options::default()
        .apply_sets(&[
            "cpufreq.governor=schedutil",
            "eas.mode=on",
            "eas.overutilized_gate=ignore_lone_task",
            "eas.em_version=v5_x",
            "cpufreq.schedutil_version=v5_x",
            "cpufreq.rate_limit_us=500",
            "cpufreq.fast_switch=false",
        ])
        .unwrap();
    let s = Settings::resolve(&o, &p).unwrap();
    assert!(s.eas_enabled);
    assert_eq!(s.fixed_freq_khz, vec![850_000, 1_100_000]);
    assert_eq!(
        o.eas.overutilized_gate,
        crate::energy::overutilized::OverutilizedGate::IgnoreLoneTask
    );
    assert!(Options::default()
        .apply_sets(&["eas.overutilized_gate=sometimes"])
        .is_err());
}

#[test]
fn balance_options_parse() {
    use crate::sched::topology::LbVersion;
    let d = Options::default();
    assert!(d.balance.misfit);
    assert_eq!(d.balance.version, LbVersion::V6_11);
    let o = d
        .apply_sets(&["balance.misfit=false", "balance.version=v5.9"])
        .unwrap();
    assert!(!o.balance.misfit);
    assert_eq!(o.balance.version, LbVersion::V5_9);
    let e = d.apply_sets(&["balance.version=v5.8"]).unwrap_err();
    assert!(e.to_string().contains("v5.9"), "{e}");
    let o = d.apply_sets(&["balance.version=v4.20"]).unwrap();
    assert_eq!(o.balance.version, LbVersion::V4_20);
    // Ordered by kernel release, so `>= V5_10` tests keep their meaning.
    assert!(LbVersion::V4_20 < LbVersion::V5_9 && LbVersion::V5_9 < LbVersion::V5_10);
    assert!(LbVersion::V5_10 < LbVersion::V6_6 && LbVersion::V6_6 < LbVersion::V6_11);
    assert!(d.apply_sets(&["balance.version=v4.19"]).is_err());
}

#[test]
fn placement_options_parse_with_v6_11_defaults() {
    let d = Options::default();
    assert_eq!(d.fair.wakeup, WakeupVariant::V6_11);
    assert!(d.fair.sis_util && d.fair.wa_idle && d.fair.wa_weight && d.fair.wa_bias);
    assert!(d.rt.push_ipi);
    let o = d
        .apply_sets(&[
            "fair.wakeup=wake_cap",
            "rt.push_ipi=false",
            "fair.sis_util=false",
        ])
        .unwrap();
    assert_eq!(o.fair.wakeup, WakeupVariant::WakeCap);
    assert!(!o.rt.push_ipi && !o.fair.sis_util);
    let o = d.apply_sets(&["fair.wakeup=v6.11"]).unwrap();
    assert_eq!(o.fair.wakeup, WakeupVariant::V6_11);
    assert!(d.apply_sets(&["fair.wakeup=v5_4"]).is_err());
}

#[test]
fn every_profile_sets_what_its_table_says() {
    assert_eq!(KernelProfile::V6_11.options(), Options::default());
    for k in KernelProfile::ALL {
        let o = k.options();
        assert_eq!(o.kernel, k);
        let tree = serde_json::to_value(&o).unwrap();
        for (key, value, _) in k.switches() {
            let mut node = &tree;
            for part in key.split('.') {
                node = &node[part];
            }
            assert_eq!(*node, value, "{} {key}", k.name());
        }
    }
    let v59 = KernelProfile::V5_9.options();
    assert_eq!(v59.fair.variant, FairVariant::Cfs);
    assert_eq!(v59.balance.version, crate::sched::topology::LbVersion::V5_9);
    assert!(!v59.fair.sis_util && !v59.pelt.migrate_pelt_lag);
    assert!(!v59.fair.tick_slice_cap && KernelProfile::V6_6.options().fair.tick_slice_cap);
    let v612 = KernelProfile::V6_12.options();
    assert!(v612.fair.custom_slice && v612.fair.enqueue_initial);
    assert_eq!(KernelProfile::V4_20.options().eas.mode, EasMode::Off);
}

#[test]
fn the_profiles_page_shows_the_table_the_code_sets() {
    let page = include_str!("../../../../docs/kernel-profiles.md");
    assert!(
        page.contains(&KernelProfile::table()),
        "docs/kernel-profiles.md is out of date: paste `hetsched schema kernels` into it"
    );
}

#[test]
fn options_set_beside_a_profile_override_it_in_any_order() {
    let d = Options::default();
    let a = d
        .apply_sets(&["kernel=v5.9", "fair.variant=eevdf"])
        .unwrap();
    let b = d
        .apply_sets(&["fair.variant=eevdf", "kernel=v5.9"])
        .unwrap();
    assert_eq!(a, b);
    assert_eq!(a.kernel, KernelProfile::V5_9);
    assert_eq!(a.fair.variant, FairVariant::Eevdf);
    assert_eq!(a.balance.version, crate::sched::topology::LbVersion::V5_9);
    // moving on keeps what was set and takes the new profile's other values
    let c = a.apply_sets(&["kernel=v6.12"]).unwrap();
    assert_eq!(c.fair.variant, FairVariant::Eevdf);
    assert!(c.fair.custom_slice);
    assert_eq!(c.balance.version, crate::sched::topology::LbVersion::V6_11);
    // an option set to a profile's own value stays a plain profile value
    assert_eq!(
        d.apply_sets(&["kernel=v6.6"]).unwrap(),
        KernelProfile::V6_6.options()
    );
    let e = d.apply_sets(&["kernel=v3.18"]).unwrap_err();
    assert!(e.to_string().contains("v6.11"), "{e}");
    // the documented spellings of util_est_version read
    for v in ["v5_13", "V5_13", "v5.13"] {
        let o = d
            .apply_sets(&[format!("pelt.util_est_version={v}")])
            .unwrap();
        assert_eq!(o.pelt.util_est_version, UtilEstVersion::V5_13);
    }
}

#[test]
fn hash_is_stable_for_equal_settings() {
    assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
}
