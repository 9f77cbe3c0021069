//! Open-loop arrivals against queueing theory.

use crate::common;

fn gp3(arrival: f64, seconds: u32) -> String {
    format!(
        r#"
[workload]
duration_s = {seconds}
[[workload.jobs]]
rw = "randread"
bs = "4k"
arrival_iops = {arrival}

[configs.gp3]
host = "aws/ec2/r5b.24xlarge"
[[configs.gp3.pools]]
device = "aws/ebs/gp3"
size_gib = 100
"#
    )
}

// Poisson arrivals at 1,500/s into gp3's 3,000-IOPS pacer (one admission
// every 1/3,000 s, first come first served) is an M/D/1 queue at ρ = 0.5:
// mean wait ρ / (2μ(1 − ρ)) = 0.5 / (2 × 3,000 × 0.5) = 166.7 µs. The service
// time is the catalog's gp3 read log-normal: median 709 µs, p99 1,090 µs
// (a measured QD1 fio run, latency.toml), σ = ln(1,090 / 709) / 2.3263 =
// 0.18488, mean 709 × e^(σ²/2) = 709 × 1.017237 = 721.2 µs.
#[test]
fn poisson_arrivals_wait_as_in_an_md1_queue() {
    let cat = common::catalog();
    let rec = common::simulate(&cat, &gp3(1500.0, 2000));
    let r = &rec.results[0];
    assert!((r.iops / 1500.0 - 1.0).abs() < 0.01, "{}", r.iops);
    let want = 166.7 + 721.2;
    assert!((r.latency.lat_mean_us / want - 1.0).abs() < 0.02, "mean latency {} µs, want {want}", r.latency.lat_mean_us);
    assert_eq!(r.dropped, 0);
}

// Offered 6,000/s to a 3,000-IOPS volume: it completes 3,000/s and the
// backlog grows by 3,000 a second, so the mean wait over 60 s is about
// half the final backlog's drain time: 30 s.
#[test]
fn overload_runs_at_the_cap_and_the_queue_grows() {
    let cat = common::catalog();
    let rec = common::simulate(&cat, &gp3(6000.0, 60));
    let r = &rec.results[0];
    assert!((r.iops / 3000.0 - 1.0).abs() < 0.02, "{}", r.iops);
    assert!(r.latency.lat_mean_us > 5e6, "{}", r.latency.lat_mean_us);
    assert!(r.binding.contains("aws/ebs/gp3"), "{}", r.binding);
}
