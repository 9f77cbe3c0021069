//! Buckets over simulated time, against the EBS user guide's arithmetic.

use crate::common;

// gp2 400 GiB: baseline 3 × 400 = 1,200 IOPS, burst 3,000 from 5.4 M
// credits refilled at 1,200/s: a full bucket lasts 5.4 M / (3,000 − 1,200)
// = 3,000 s. 16 KiB random writes at queue depth 64 keep it saturated.
#[test]
fn gp2_400gib_bursts_3000s_then_runs_at_baseline() {
    let cat = common::catalog();
    let text = include_str!("../../../../tests/data/scenarios/gp2-400-randwrite.toml");
    let rec = common::simulate(&cat, text);
    let s = |m: &str| rec.series.iter().find(|s| s.metric == m && s.resource == "pool all").unwrap_or_else(|| panic!("{m}"));
    let ops = s("VolumeWriteOps");
    let bal = s("BurstBalance");
    assert_eq!(ops.period_s, 60.0);
    // Minutes 0–49 (0–2,940 s) burst at 3,000 IOPS; from minute 51
    // (3,060 s) it runs at 1,200.
    for (i, v) in ops.values.iter().enumerate() {
        let iops = v / 60.0;
        if i < 49 {
            assert!((iops - 3000.0).abs() < 3000.0 * 0.01, "minute {i}: {iops}");
        } else if (51..100).contains(&i) {
            assert!((iops - 1200.0).abs() < 1200.0 * 0.01, "minute {i}: {iops}");
        }
    }
    // BurstBalance falls linearly from 100 to 0 over those 3,000 s.
    for (i, v) in bal.values.iter().enumerate().take(99) {
        let t = (i + 1) as f64 * 60.0;
        let want = (100.0 * (1.0 - t / 3000.0)).max(0.0);
        assert!((v - want).abs() < 1.0, "minute {i}: balance {v}, want {want}");
    }
    assert!(bal.values[48] > 0.0 && bal.values[50] < 0.5);
    let r = &rec.results[0];
    // Over 6,000 s: 3,000 s at 3,000 and 3,000 s at 1,200 → 2,100 on average.
    assert!((r.iops - 2100.0).abs() < 2100.0 * 0.01, "{}", r.iops);
    assert!(r.binding.contains("aws/ebs/gp2"), "{}", r.binding);
}

// t3.medium: five 20 GiB gp2 striped give 15,000 burst IOPS, but the
// instance bursts to 11,800 for 30 minutes, then 2,000 — while the volumes'
// own buckets (5.4 M each at 100/s refill, so 1,862 s at 3,000) outlast it:
// at 11,800 / 5 = 2,360 IOPS each they last 5.4 M / 2,260 = 2,389 s.
#[test]
fn t3_medium_instance_burst_ends_after_30_minutes() {
    let cat = common::catalog();
    let text = r#"
[workload]
duration_s = 2400
[[workload.jobs]]
rw = "randread"
bs = "4k"
iodepth = 64

[configs.five]
host = "aws/ec2/t3.medium"
[[configs.five.pools]]
device = "aws/ebs/gp2"
size_gib = 20
count = 5
layout = "stripe"
"#;
    let rec = common::simulate(&cat, text);
    let ops = rec.series.iter().find(|s| s.metric == "VolumeReadOps").unwrap();
    let io_balance = rec.series.iter().find(|s| s.metric == "EBSIOBalance%").unwrap();
    assert!((ops.values[10] / 60.0 - 11800.0).abs() < 118.0, "{}", ops.values[10] / 60.0);
    // After 1,800 s: the instance's baseline, 2,000 IOPS.
    assert!((ops.values[32] / 60.0 - 2000.0).abs() < 20.0, "{}", ops.values[32] / 60.0);
    assert!(io_balance.values[28] > 0.0 && io_balance.values[30] < 0.5);
}

// The same gp2 400 GiB: its result splits where the bucket empties, at
// 5.4 M / (3,000 − 1,200) = 3,000 s — 0–3,000 s at 3,000 IOPS, 3,000–6,000 s
// at the 1,200 IOPS baseline; the two stretches average to the whole
// (3,000 × 3,000 + 3,000 × 1,200) / 6,000 = 2,100. A second job, right
// after it on the empty bucket, runs at the baseline throughout: one
// stretch, no phases.
#[test]
fn a_job_whose_bucket_empties_has_two_phases() {
    let cat = common::catalog();
    let text = r#"
[workload]
duration_s = 6000
[[workload.jobs]]
rw = "randwrite"
bs = "16k"
iodepth = 64
[[workload.jobs]]
name = "after"
rw = "randwrite"
bs = "16k"
iodepth = 64
stonewall = true

[configs.gp2]
host = "aws/ec2/r5b.24xlarge"
[[configs.gp2.pools]]
device = "aws/ebs/gp2"
size_gib = 400
"#;
    let rec = common::simulate(&cat, text);
    let r = &rec.results[0];
    assert_eq!(r.phases.len(), 2, "{:?}", r.phases);
    let (a, b) = (&r.phases[0], &r.phases[1]);
    assert_eq!(a.from_s, 0.0);
    assert!((a.to_s - 3000.0).abs() < 3000.0 * 0.005, "{}", a.to_s);
    assert_eq!(a.to_s, b.from_s);
    assert_eq!(b.to_s, 6000.0);
    assert!(a.emptied.is_empty());
    assert_eq!(b.emptied, vec!["device aws/ebs/gp2 (400 GiB): baseline 1200 IOPS".to_string()]);
    let (ia, ib) = (a.iops.unwrap(), b.iops.unwrap());
    assert!((ia - 3000.0).abs() < 30.0, "{ia}");
    assert!((ib - 1200.0).abs() < 12.0, "{ib}");
    let whole = (ia * (a.to_s - a.from_s) + ib * (b.to_s - b.from_s)) / 6000.0;
    assert!((whole - r.iops).abs() < 0.01 * r.iops, "{whole} vs {}", r.iops);
    // 16 KiB each: 3,000 IOPS × 16,384 B = 49.2 MB/s before.
    assert!((a.bw_bytes_s.unwrap() / (ia * 16384.0) - 1.0).abs() < 1e-6);
    // Queueing behind the baseline: 64 in flight at 1,200 IOPS ≈ 53 ms.
    assert!((b.lat_mean_us.unwrap() / 53_333.0 - 1.0).abs() < 0.02, "{:?}", b.lat_mean_us);
    assert!(rec.results[1].phases.is_empty(), "{:?}", rec.results[1].phases);
}
