//! The simulator against the analytic model, over every example: never
//! above the ceilings `storlab limits` reports, at least 95 % of them when
//! the job keeps enough I/O in flight, and Little's law in every closed-loop
//! result (IOPS × mean latency = I/Os in flight, within 2 %).

use crate::common;
use std::collections::HashMap;

fn key(job: &str) -> Option<(&'static str, bool)> {
    Some(match job {
        j if j.starts_with("RND4K-") && j.ends_with("-read") => ("rand4k_read_iops", false),
        j if j.starts_with("RND4K-") && j.ends_with("-write") => ("rand4k_write_iops", false),
        j if j.starts_with("SEQ1M-") && j.ends_with("-read") => ("seq1m_read_bytes_s", true),
        j if j.starts_with("SEQ1M-") && j.ends_with("-write") => ("seq1m_write_bytes_s", true),
        _ => return None,
    })
}

#[test]
fn simulation_agrees_with_the_limits_over_every_example() {
    let cat = common::catalog();
    let mut checked = 0;
    let mut dir: Vec<_> = std::fs::read_dir(common::root().join("examples")).unwrap().map(|e| e.unwrap().path()).collect();
    dir.sort();
    // advise-*.toml are questions for `storlab advise`, not scenarios.
    let scenario = |p: &std::path::Path| p.extension().is_some_and(|x| x == "toml") && !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("advise-"));
    for path in dir.into_iter().filter(|p| scenario(p)) {
        let text = common::with_profile(&std::fs::read_to_string(&path).unwrap(), "cdm-nvme");
        let limits = storlab_model::limits(&cat, "s.toml", &text).unwrap();
        let ceilings: HashMap<&str, &storlab_model::report::ConfigLimits> = limits.configs.iter().map(|c| (c.name.as_str(), c)).collect();
        let rec = common::simulate(&cat, &text);
        for r in &rec.results {
            let name = format!("{} {} {}", path.file_name().unwrap().to_string_lossy(), r.config, r.job);
            // Little's law, closed loop without think time.
            let little = r.iops * r.latency.lat_mean_us * 1e-6;
            assert!((little / r.outstanding as f64 - 1.0).abs() < 0.02, "{name}: IOPS × latency = {little}, in flight {}", r.outstanding);
            let Some((k, bytes)) = key(&r.job) else { continue };
            let c = ceilings[r.config.as_str()];
            let Some(ceiling) = c.ceilings.get(k).copied().filter(|v| v.is_finite()) else { continue };
            let got = if bytes { r.bw_bytes_s } else { r.iops };
            assert!(got <= ceiling * 1.001, "{name}: {got} above the ceiling {ceiling}");
            // Enough in flight: twice what the ceiling needs at the
            // unloaded median service time (Little's law), and at least 8
            // per member so random placement keeps every member busy.
            let pool = c.pools.iter().find(|p| p.role == "all" || p.role == "data").unwrap();
            let (lat, _) = cat.latency_for(&pool.device).unwrap();
            let service_us = lat.read_median_us.value.max(lat.write_median_us.value);
            let per_io = if bytes { 1048576.0 } else { 1.0 };
            let needed = 2.0 * (ceiling / per_io) * service_us * 1e-6;
            let members = pool.count;
            if r.outstanding as f64 >= needed.max(8.0 * f64::from(members)) {
                assert!(got >= 0.95 * ceiling, "{name}: {got} below 95 % of the ceiling {ceiling} ({})", r.binding);
                checked += 1;
            }
        }
    }
    assert!(checked >= 8, "only {checked} results had enough I/O in flight to check");
}

#[test]
fn same_scenario_and_seed_give_identical_records() {
    let cat = common::catalog();
    let text = std::fs::read_to_string(common::root().join("examples/aws-t3-gp2-one-vs-five.toml")).unwrap();
    let text = common::with_profile(&text, "cdm-default");
    let a = serde_json::to_string(&common::simulate(&cat, &text).record).unwrap();
    let b = serde_json::to_string(&common::simulate(&cat, &text).record).unwrap();
    assert_eq!(a, b);
    let c = serde_json::to_string(&common::simulate(&cat, &text.replace("profile = \"cdm-default\"", "profile = \"cdm-default\"\nseed = 2")).record).unwrap();
    assert_ne!(a, c, "a different seed should change the latency draws");
}
