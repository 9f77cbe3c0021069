//! The emulator's pacer on a clock the test drives: the caps and buckets it
//! enforces are the vendor's, by hand calculation (no FUSE needed).

use storlab_fuse::pace::{Io, Pacer, Secs};
use storlab_model::deployment::resolve_all;
use storlab_model::resources::IoClass;
use storlab_model::scenario::ScenarioFile;
use storlab_model::Catalog;

fn catalog() -> Catalog {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/storlab/catalog");
    let files: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "toml"))
        .map(|e| (e.path().display().to_string(), std::fs::read_to_string(e.path()).unwrap()))
        .collect();
    Catalog::from_sources(files.iter().map(|(a, b)| (a.as_str(), b.as_str()))).unwrap()
}

const SCENARIO: &str = r#"
[configs.gp3]
host = "aws/ec2/r5b.24xlarge"
[[configs.gp3.pools]]
device = "aws/ebs/gp3"
size_gib = 100
iops = 3000
throughput_mib_s = 125
[configs.gp2]
host = "aws/ec2/r5b.24xlarge"
[[configs.gp2.pools]]
device = "aws/ebs/gp2"
size_gib = 100
"#;

fn pacer(config: &str, initial: Option<f64>) -> Pacer {
    let cat = catalog();
    let sc = ScenarioFile::from_toml("t.toml", SCENARIO).unwrap();
    let dep = resolve_all(&cat, "t.toml", &sc).unwrap().into_iter().find(|d| d.name == config).unwrap();
    Pacer::new(&cat, dep, &[0], initial, 1).unwrap()
}

fn read(offset: u64) -> Io {
    Io { pool: 0, class: IoClass::ReadMiss, offset, len: 4096, sequential: false }
}

/// 32 I/Os kept in flight: each starts when one completes.
fn closed_loop(p: &mut Pacer, until: f64) -> (u64, f64) {
    let mut heap: Vec<f64> = (0..32).map(|_| 0.0).collect();
    let mut n = 0u64;
    let mut off = 0u64;
    loop {
        heap.sort_by(|a, b| b.total_cmp(a));
        let t = heap.pop().unwrap();
        if t >= until {
            return (n, t);
        }
        off = (off + 7919 * 4096) % (1 << 30);
        let done = p.complete_at(read(off), Secs(t));
        heap.push(done.0);
        n += 1;
    }
}

#[test]
fn a_3000_iops_gp3_admits_3000_reads_a_second_at_qd32() {
    let mut p = pacer("gp3", None);
    let (n, _) = closed_loop(&mut p, 60.0);
    // 60 s at 3,000 IOPS (provisioned): 180,000, give or take the 32 in
    // flight at either end.
    assert!((n as i64 - 180_000).abs() <= 64, "{n}");
}

#[test]
fn gp2_bucket_empties_at_the_user_guide_time() {
    // gp2 100 GiB: baseline 300 IOPS, burst 3,000, 5.4 M credits. Started
    // 5 % full (270,000 credits) and driven at the burst rate, it drains at
    // 3,000 − 300 = 2,700 a second: empty after 100 s.
    let mut p = pacer("gp2", Some(0.05));
    assert_eq!(p.burst_balance(0, Secs(0.0)).map(|b| (b * 10.0).round() / 10.0), Some(5.0));
    let mut t = 0.0;
    let mut off = 0;
    let mut empty_at = None;
    while t < 130.0 {
        off = (off + 7919 * 4096) % (1 << 30);
        // A steady 3,000 IOPS, open loop.
        p.complete_at(read(off), Secs(t));
        t += 1.0 / 3000.0;
        if empty_at.is_none() && p.burst_balance(0, Secs(t)).unwrap() <= 0.0 {
            empty_at = Some(t);
        }
    }
    let e = empty_at.expect("the bucket empties");
    assert!((e - 100.0).abs() < 1.0, "empty at {e} s");
}

#[test]
fn without_caps_an_io_completes_when_it_arrives() {
    let mut p = pacer("gp3", None);
    p.unpaced = true;
    assert_eq!(p.complete_at(read(0), Secs(1.5)), Secs(1.5));
}

#[test]
fn an_io_behind_a_full_second_is_admitted_when_the_cap_frees() {
    // gp3 at 3,000 IOPS: 3,000 reads arriving together at t = 0 take the
    // whole first second of the cap; the 3,001st, arriving at 0.5 s, is
    // admitted only at 1.0 s (± one I/O's 1/3,000 s), while one arriving
    // on an idle volume is admitted when it arrives.
    let mut idle = pacer("gp3", None);
    let (admitted, done) = idle.admit_and_complete(read(0), Secs(2.0));
    assert_eq!(admitted, Secs(2.0));
    assert!(done.0 > 2.0);
    let mut p = pacer("gp3", None);
    for k in 0..3000u64 {
        p.complete_at(read(k * 4096), Secs(0.0));
    }
    let (admitted, _) = p.admit_and_complete(read(3000 * 4096), Secs(0.5));
    assert!((admitted.0 - 1.0).abs() <= 1.0 / 3000.0 + 1e-9, "admitted at {} s", admitted.0);
}
