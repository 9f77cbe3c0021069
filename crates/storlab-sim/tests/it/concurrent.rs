//! Jobs at once, as fio runs the jobs of a file between two stonewalls:
//! their I/O competes for the same caps and buckets.

use crate::common;

const GP3: &str = r#"
[configs.gp3]
host = "aws/ec2/r5b.24xlarge"
[[configs.gp3.pools]]
device = "aws/ebs/gp3"
size_gib = 100
"#;

fn with_fio(job_file: &str) -> common::Sim {
    let dir = std::env::temp_dir().join(format!("storlab-concurrent-{}-{}", std::process::id(), job_file.len()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("jobs.fio"), job_file).unwrap();
    let text = format!("[workload]\nfio = \"jobs.fio\"\n{GP3}");
    let rec = common::run_in(&common::catalog(), &text, &dir, None, &storlab_sim::Overrides::default()).unwrap_or_else(|e| panic!("{e}")).into();
    std::fs::remove_dir_all(&dir).unwrap();
    rec
}

// gp3 at its baseline 3,000 IOPS (EBS user guide). Two identical random-read
// jobs at queue depth 32 each keep it saturated (3,000 × 0.76 ms mean
// service ≈ 2.3 I/Os needed in flight); its pacer admits in arrival order,
// and the two jobs' I/Os alternate in that order, so each gets half:
// 1,500 IOPS, 3,000 together.
#[test]
fn two_random_read_jobs_share_a_gp3() {
    let cat = common::catalog();
    let job = "[[workload.jobs]]\nname = \"{n}\"\nrw = \"randread\"\nbs = \"4k\"\niodepth = 32\n";
    let text = format!("[workload]\nduration_s = 60\n{}{}{GP3}", job.replace("{n}", "a"), job.replace("{n}", "b"));
    let rec = common::simulate(&cat, &text);
    assert_eq!(rec.results.len(), 2);
    for r in &rec.results {
        assert!((r.iops / 1500.0 - 1.0).abs() < 0.03, "{}: {}", r.job, r.iops);
        assert_eq!(r.start_s, 0.0, "{} should start with the other", r.job);
        assert!(r.binding.contains("aws/ebs/gp3"), "{}", r.binding);
    }
    let sum: f64 = rec.results.iter().map(|r| r.iops).sum();
    assert!((sum / 3000.0 - 1.0).abs() < 0.01, "{sum}");
    // The pool's series count both jobs' reads: 3,000 a second.
    let ops = rec.series.iter().find(|s| s.metric == "VolumeReadOps").unwrap();
    assert!((ops.values[0] / 60.0 / 3000.0 - 1.0).abs() < 0.01, "{}", ops.values[0]);
}

const TWO_JOBS: &str = "[global]\nrw=randread\nbs=4k\niodepth=32\nsize=1g\nruntime=20\ntime_based\n[a]\n[b]\n";

// Without stonewall both run in the same 20 s and split 3,000 IOPS; with it
// the second waits for the first and each gets the whole 3,000.
#[test]
fn stonewall_decides_between_at_once_and_one_after_another() {
    let together = with_fio(TWO_JOBS);
    assert_eq!(together.results.len(), 2);
    assert!(together.results.iter().all(|r| r.start_s == 0.0 && (r.iops / 1500.0 - 1.0).abs() < 0.03), "{:?}", together.results);
    assert!((together.simulated_s - 20.0).abs() < 0.1, "{}", together.simulated_s);

    let apart = with_fio(&TWO_JOBS.replace("[b]\n", "[b]\nstonewall\n"));
    let (a, b) = (&apart.results[0], &apart.results[1]);
    assert!((a.iops / 3000.0 - 1.0).abs() < 0.01 && (b.iops / 3000.0 - 1.0).abs() < 0.01, "{} {}", a.iops, b.iops);
    assert!(b.start_s >= 20.0 && b.start_s < 20.1, "b starts at {}", b.start_s);
}

// group_reporting: the two jobs of the group report as one, 3,000 IOPS from
// 64 I/Os in flight; `new_group` splits reporting without waiting.
#[test]
fn group_reporting_reports_the_group_as_one() {
    let rec = with_fio(&TWO_JOBS.replace("[global]\n", "[global]\ngroup_reporting\n"));
    assert_eq!(rec.results.len(), 1, "{:?}", rec.results);
    let r = &rec.results[0];
    assert_eq!((r.job.as_str(), r.jobs, r.outstanding), ("a", 2, 64));
    assert!((r.iops / 3000.0 - 1.0).abs() < 0.01, "{}", r.iops);

    let rec = with_fio(&TWO_JOBS.replace("[global]\n", "[global]\ngroup_reporting\n").replace("[b]\n", "[b]\nnew_group\n"));
    assert_eq!(rec.results.len(), 2);
    assert!(rec.results.iter().all(|r| r.start_s == 0.0 && (r.iops / 1500.0 - 1.0).abs() < 0.03));
}

// A job on the log pool and one on the data pool at once: each pool's caps
// are its own (3,000 IOPS each), so neither slows the other.
#[test]
fn jobs_on_different_pools_do_not_share_their_caps() {
    let cat = common::catalog();
    let text = r#"
[workload]
duration_s = 30
[[workload.jobs]]
rw = "randread"
iodepth = 32
pool = "data"
[[workload.jobs]]
rw = "randwrite"
iodepth = 32
pool = "log"

[configs.two]
host = "aws/ec2/r5b.24xlarge"
[[configs.two.pools]]
role = "data"
device = "aws/ebs/gp3"
size_gib = 100
[[configs.two.pools]]
role = "log"
device = "aws/ebs/gp3"
size_gib = 100
"#;
    let rec = common::simulate(&cat, text);
    assert_eq!(rec.results.len(), 2);
    for r in &rec.results {
        assert!((r.iops / 3000.0 - 1.0).abs() < 0.01, "{} on {}: {}", r.job, r.pool, r.iops);
    }
}
