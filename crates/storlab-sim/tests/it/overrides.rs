//! The command line's overrides (`simulate --config --threads --iodepth
//! --duration --profile`), the bound on series points, and fio's `size=`.

use crate::common;

use std::path::Path;
use std::time::Duration;
use storlab_sim::{nearest_period, Overrides, SimError, MAX_SERIES_POINTS};

const TWO: &str = r#"
[workload]
duration_s = 60
[[workload.jobs]]
rw = "randread"
bs = "4k"
iodepth = 1

[configs.small]
host = "aws/ec2/r5b.24xlarge"
[[configs.small.pools]]
device = "aws/ebs/gp3"
size_gib = 100

[configs.large]
host = "aws/ec2/r5b.24xlarge"
[[configs.large.pools]]
device = "aws/ebs/gp3"
size_gib = 200
"#;

fn run(text: &str, o: &Overrides, period: Option<f64>) -> Result<common::Sim, SimError> {
    common::run_in(&common::catalog(), text, Path::new("."), period, o).map(common::Sim::from)
}

#[test]
fn config_runs_only_that_config_and_an_unknown_one_lists_them() {
    let rec = run(TWO, &Overrides { config: Some("large".into()), ..Default::default() }, None).unwrap();
    assert_eq!(rec.results.iter().map(|r| r.config.as_str()).collect::<Vec<_>>(), ["large"]);
    assert!(rec.series.iter().all(|s| s.config == "large"));
    let e = run(TWO, &Overrides { config: Some("lage".into()), ..Default::default() }, None).unwrap_err().to_string();
    assert_eq!(e, "s.toml: --config 'lage': no such config — did you mean 'large'? — configs: small, large");
}

// --threads 2 --iodepth 32: 2 × 32 = 64 I/Os in flight; the job named the
// CrystalDiskMark way is renamed to match (RND4K-Q32T2-read).
// --duration 30 s: a 30 s measured window.
#[test]
fn threads_iodepth_and_duration_replace_the_scenarios() {
    let o = Overrides { config: Some("small".into()), threads: Some(2), iodepth: Some(32), duration: Some(Duration::from_secs(30)), ..Default::default() };
    let rec = run(TWO, &o, None).unwrap();
    let r = &rec.results[0];
    assert_eq!((r.job.as_str(), r.outstanding), ("RND4K-Q32T2-read", 64));
    assert_eq!(r.runtime_s, 30.0);
    // The clock stops once the I/Os in flight at 30 s complete.
    assert!((30.0..30.1).contains(&rec.simulated_s), "{}", rec.simulated_s);
    // gp3's 3,000-IOPS baseline binds 64 I/Os in flight (EBS user guide).
    assert!((r.iops / 3000.0 - 1.0).abs() < 0.02, "{}", r.iops);
}

// --profile cdm-peak replaces the inline job with CrystalDiskMark's Peak
// Performance tests: SEQ1M Q8T1 and RND4K Q32T1, read then write.
#[test]
fn profile_replaces_the_workload() {
    let o = Overrides { config: Some("small".into()), profile: Some("cdm-peak".into()), duration: Some(Duration::from_secs(5)), ..Default::default() };
    let rec = run(TWO, &o, None).unwrap();
    let jobs: Vec<&str> = rec.results.iter().map(|r| r.job.as_str()).collect();
    assert_eq!(jobs, ["SEQ1M-Q8T1-read", "RND4K-Q32T1-read", "SEQ1M-Q8T1-write", "RND4K-Q32T1-write"]);
    assert_eq!(rec.workload, "cdm-peak");
    let e = run(TWO, &Overrides { profile: Some("cdm-peek".into()), ..Default::default() }, None).unwrap_err().to_string();
    assert!(e.contains("did you mean 'cdm-peak'"), "{e}");
}

// One 3,600 s job at a 0.01 s period would make 360,000 points a series,
// over the 100,800 one GetMetricData request returns; the shortest period
// that fits is 3,600 / 100,800 = 0.0357 s, 0.036 s rounded up to two
// digits. It is refused before anything runs.
#[test]
fn a_period_too_short_for_the_run_is_refused_with_the_nearest() {
    assert_eq!(MAX_SERIES_POINTS, 100_800);
    assert_eq!(nearest_period(3600.0), 0.036);
    // 8 hour-long tests: 28,800 / 100,800 = 0.2857 → 0.29 s; 30 days: 25.7 → 26 s.
    assert_eq!(nearest_period(28_800.0), 0.29);
    assert_eq!(nearest_period(30.0 * 86_400.0), 26.0);
    let text = TWO.replace("duration_s = 60", "duration_s = 3600");
    let t0 = std::time::Instant::now();
    let e = run(&text, &Overrides::default(), Some(0.01)).unwrap_err().to_string();
    assert!(t0.elapsed() < Duration::from_secs(2), "refused up front");
    assert!(e.contains("360000 points") && e.ends_with("nearest valid period 0.036 s"), "{e}");
    assert!(run(&text, &Overrides { config: Some("small".into()), ..Default::default() }, Some(0.036)).is_ok());
}

// fio's size= without time_based: the job reads its 64 MiB once, 1 MiB at a
// time: 64 I/Os.
#[test]
fn a_job_files_size_is_honoured() {
    let dir = std::env::temp_dir().join(format!("storlab-size-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("j.fio"), "[seq]\nrw=read\nbs=1m\nsize=64m\n").unwrap();
    let text = TWO.replace("duration_s = 60\n[[workload.jobs]]\nrw = \"randread\"\nbs = \"4k\"\niodepth = 1\n", "fio = \"j.fio\"\n");
    let rec: common::Sim = common::run_in(&common::catalog(), &text, &dir, None, &Overrides { config: Some("small".into()), ..Default::default() }).unwrap().into();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(rec.results[0].ios, 64);
}
