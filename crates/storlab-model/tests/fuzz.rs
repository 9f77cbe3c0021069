//! Fuzzing the formats storlab-model owns: scenario files (through
//! `limits`, as `storlab limits` reads them) and catalog overlays (a user's
//! file beside the shipped catalog, as `--catalog` and calibrate's output
//! are read). Every input is read or refused in one non-empty line, never a
//! panic; an overlay that is read has its latencies in range.

mod common;
#[path = "../../storlab-workload/tests/fuzzing/mod.rs"]
mod fuzzing;

use fuzzing::{fuzz, fuzz_n, one_line};
use storlab_model::catalog::LATENCY_RANGE_US;
use storlab_model::Catalog;

const EXAMPLES: &[&str] = &[
    include_str!("../../../examples/aws-t3-gp2-one-vs-five.toml"),
    include_str!("../../../examples/azure-ds4-p30-host-cache.toml"),
    include_str!("../../../examples/aws-io2be-vs-fsx-smb.toml"),
    include_str!("../../../examples/onprem-nvme-vs-raid6.toml"),
    include_str!("../../../examples/aws-rds-m4-gp2-vs-io1.toml"),
];

#[test]
fn fuzz_scenarios() {
    let cat = common::catalog();
    fuzz("scenario", EXAMPLES, 1500, |text| match storlab_model::limits(&cat, "s.toml", text) {
        Err(e) => one_line(e),
        Ok(r) => {
            let j = serde_json::to_value(&r).map_err(|e| e.to_string())?;
            for c in j["configs"].as_array().into_iter().flatten() {
                for (k, v) in c["ceilings"].as_object().into_iter().flatten() {
                    if v.as_f64().is_some_and(|x| x < 0.0) {
                        return Err(format!("ceiling {k} = {v} below 0"));
                    }
                }
            }
            Ok(())
        }
    });
}

const OVERLAY: &str = r#"[source.mine]
url = "measured on this machine"
date = "2026-11-28"
status = "secondary"

[[latency]]
devices = ["aws/ebs/gp2", "local/*"]
src = "mine"
note = "fio QD1"
read_median_us = 512.5
read_p99_us = 1800
write_median_us = 730
write_p99_us = 2400
flush_median_us = 900
flush_p99_us = 3000
"#;

#[test]
fn fuzz_catalog_overlays() {
    let shipped: Vec<(String, String)> = std::fs::read_dir(common::catalog_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    let local = shipped.iter().find(|(n, _)| n == "local.toml").map(|(_, t)| t.clone()).unwrap();
    let local: &'static str = Box::leak(local.into_boxed_str());
    // Each case loads the whole catalog: a fiftieth of the cases asked for.
    let n = if std::env::var_os("STORLAB_FUZZ_CASES").is_some() { fuzzing::cases(0) / 50 } else { 100 };
    fuzz_n("overlay", &[OVERLAY, local], n, |text| {
        let files = shipped.iter().filter(|(n, _)| n != "local.toml" || !text.contains("[[device]]")).map(|(n, t)| (n.as_str(), t.as_str()));
        match Catalog::from_sources(files.chain([("overlay.toml", text)])) {
            Err(e) => one_line(e),
            Ok(cat) => {
                let (lo, hi) = LATENCY_RANGE_US;
                for id in ["aws/ebs/gp2", "local/nvme"] {
                    if let Some((l, _)) = cat.latency_for(id) {
                        for v in [l.read_median_us.value, l.read_p99_us.value, l.write_median_us.value, l.write_p99_us.value] {
                            if !(lo..=hi).contains(&v) {
                                return Err(format!("read a latency of {v} µs for {id}"));
                            }
                        }
                    }
                }
                Ok(())
            }
        }
    });
}

/// What the fuzzer found, kept: a spread of 2^31 file systems made `limits`
/// allocate 23 GB before anything checked the count.
#[test]
fn found_a_pool_of_two_billion_devices_is_refused_at_once() {
    let text = EXAMPLES[2].replace("count = 4\n", "count = 2147483648\n");
    assert!(text.contains("count = 2147483648"), "the example's FSx pool");
    let e = storlab_model::limits(&common::catalog(), "s.toml", &text).unwrap_err().to_string();
    assert!(e.contains("count") && e.contains("nearest valid value 1024"), "{e}");
}
