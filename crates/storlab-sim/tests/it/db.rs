//! The database model's mechanisms against hand calculations.

use crate::common;
use storlab_model::deployment::resolve_all;
use storlab_model::latency::LogNormal;
use storlab_model::scenario::ScenarioFile;
use storlab_model::Deployment;
use storlab_sim::db::{run_db, simulate_db, DbParams};
use storlab_sim::dist::ServiceTime;
use storlab_sim::engine::Latencies;
use storlab_workload::profile::Profile;

fn profile(cpu_us: f64, page_accesses: f64, pages_dirtied: f64) -> Profile {
    profile_with(cpu_us, page_accesses, pages_dirtied, 1.0, 0.0, 0.0)
}

fn profile_with(cpu_us: f64, page_accesses: f64, pages_dirtied: f64, commits: f64, alpha: f64, beta: f64) -> Profile {
    profile_wal(cpu_us, page_accesses, pages_dirtied, commits, alpha, beta, 1000.0)
}

fn profile_wal(cpu_us: f64, page_accesses: f64, pages_dirtied: f64, commits: f64, alpha: f64, beta: f64, wal_bytes: f64) -> Profile {
    Profile::from_toml("t.toml", &profile_text(cpu_us, page_accesses, pages_dirtied, commits, alpha, beta, wal_bytes)).unwrap()
}

/// The profile's text, its `[concurrency]` table last (to add to).
fn profile_text(cpu_us: f64, page_accesses: f64, pages_dirtied: f64, commits: f64, alpha: f64, beta: f64, wal_bytes: f64) -> String {
    format!(
        r#"
schema_version = 1
kind = "storlab-db-profile"
name = "t"
workload = "custom:t"
scale_unit = "warehouse"
metric = "tpm"
nopm_per_txn = 0.5
[data]
bytes_per_scale_unit = 1.0e8
[[transaction]]
name = "t"
share = 1.0
cpu_us = {cpu_us}
page_accesses = {page_accesses}
pages_dirtied = {pages_dirtied}
commits = {commits}
wal_bytes = {wal_bytes}
[mrc]
cache_fraction = [0.01, 0.1, 0.5, 1.0]
miss_ratio = [0.6, 0.2, 0.05, 0.0]
[concurrency]
alpha = {alpha}
beta = {beta}
"#
    )
}

/// r5b.24xlarge (96 vCPUs, so CPU never queues here) with a data and a log gp3.
fn deployment() -> Deployment {
    let cat = common::catalog();
    let text = r#"
[configs.a]
host = "aws/ec2/r5b.24xlarge"
[[configs.a.pools]]
role = "data"
device = "aws/ebs/gp3"
size_gib = 1000
[[configs.a.pools]]
role = "log"
device = "aws/ebs/gp3"
size_gib = 100
"#;
    let sc = ScenarioFile::from_toml("s.toml", text).unwrap();
    resolve_all(&cat, "s.toml", &sc).unwrap().remove(0)
}

/// A deployment from one config's text.
fn config(text: &str) -> Deployment {
    let cat = common::catalog();
    let sc = ScenarioFile::from_toml("s.toml", text).unwrap();
    resolve_all(&cat, "s.toml", &sc).unwrap().remove(0)
}

/// The r5b.24xlarge with one gp3 of `size_gib` taking every role.
fn all_gp3(size_gib: u32) -> Deployment {
    config(&format!("[configs.a]\nhost = \"aws/ec2/r5b.24xlarge\"\n[[configs.a.pools]]\nrole = \"all\"\ndevice = \"aws/ebs/gp3\"\nsize_gib = {size_gib}\n"))
}

fn params(vus: u32) -> DbParams {
    DbParams { scale: 1000.0, vus, rampup_s: 2.0, duration_s: 20.0, seed: 1, db_memory_bytes: None, period_s: 60.0, think_time_s: 0.0, usl: None, random_homes: false, writeback_delay_s: 0.0, steady: false, cold_cache: false }
}

/// Every I/O takes exactly `ms` (a log-normal with p99 = median has σ = 0).
fn constant(ms: f64) -> Latencies {
    let d = LogNormal::from_median_p99(ms * 1000.0, ms * 1000.0);
    Latencies { read: ServiceTime::new(&d), write: ServiceTime::new(&d), hit: None, flush: None }
}

// One user, 1 µs of CPU, no reads, a 4 ms flush per commit: a transaction
// takes 4.001 ms, so 1 / 4.001 ms = 249.9 commits/s = 14,996 a minute.
#[test]
fn a_4ms_log_flush_caps_one_user_near_250_commits_a_second() {
    let dep = deployment();
    let r = run_db(&dep, &profile(1.0, 0.0, 0.0), &params(1), &[constant(4.0), constant(4.0)]);
    assert!((r.tpm / 14996.0 - 1.0).abs() < 0.005, "{}", r.tpm);
    assert_eq!(r.commits_per_flush, 1.0);
    // Each flush is the write's 4 ms (the profile has no flush CPU).
    assert!((r.flush_s - 0.004).abs() < 1e-9, "{}", r.flush_s);
    // 4.001 ms each (the histogram is within 0.8 %; the mean is exact).
    assert!((r.txn[0].latency.lat_mean_us - 4001.0).abs() < 1.0, "{:?}", r.txn[0].latency);
    assert!((r.txn[0].latency.lat_p50_us / 4001.0 - 1.0).abs() < 0.008, "{:?}", r.txn[0].latency);
    // The log pool writes once per commit; the data pool never reads.
    let log = r.pools.iter().find(|p| p.role == "log").unwrap();
    assert!((log.write_iops - 249.9).abs() < 1.5, "{}", log.write_iops);
    assert_eq!(r.pools.iter().find(|p| p.role == "data").unwrap().read_iops, 0.0);
}

// A profile's flush wait lengthens every flush by its value at the users
// in transactions: recorded as 1 ms at 1 user and 3 ms at 4, it is 2 ms at 2
// (halfway in ln N). One user: 4 + 1 ms a flush and 1 µs of CPU, 5.001 ms a
// transaction, 11,998 a minute. Two users start together; the first commit
// starts a flush alone, the second waits for the next, and so on: one
// commit per flush of 4 + 2 = 6 ms, 166.7 a second = 10,000 a minute.
#[test]
fn a_flush_wait_lengthens_each_flush_by_its_value_at_the_users() {
    let dep = deployment();
    let text = format!("{}vus = [1, 4]\nflush_wait_us = [1000.0, 3000.0]\n", profile_text(1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1000.0));
    let p = Profile::from_toml("t.toml", &text).unwrap();
    let one = run_db(&dep, &p, &params(1), &[constant(4.0), constant(4.0)]);
    assert!((one.tpm / 11_997.6 - 1.0).abs() < 0.005, "{}", one.tpm);
    assert!((one.flush_s - 0.005).abs() < 1e-9, "{}", one.flush_s);
    let two = run_db(&dep, &p, &params(2), &[constant(4.0), constant(4.0)]);
    assert!((two.tpm / 10_000.0 - 1.0).abs() < 0.005, "{}", two.tpm);
    assert_eq!(two.commits_per_flush, 1.0);
    assert!((two.flush_s - 0.006).abs() < 1e-6, "{}", two.flush_s);
}

// A commit's flush is one I/O on the volume's IOPS however large: a gp2 of
// 100 GiB after its burst (3 IOPS/GiB = 300 IOPS), one user, 40 kB of WAL a
// commit (a 64 KiB write), 0.1 ms a write: 300 flushes a second = 18,000
// commits a minute. Counted as EBS counts merged sequential I/O (64/256 of
// an operation) it would run 1,200 a second.
#[test]
fn each_log_flush_counts_one_operation_on_the_volumes_iops() {
    let p = profile_wal(1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 40000.0);
    let dep = config("[configs.a]\nhost = \"aws/ec2/r5b.24xlarge\"\n[[configs.a.pools]]\nrole = \"all\"\ndevice = \"aws/ebs/gp2\"\nsize_gib = 100\nbursting = \"none\"\n");
    let r = run_db(&dep, &p, &params(1), &[constant(0.1)]);
    assert!((r.tpm / 18000.0 - 1.0).abs() < 0.02, "{} commits a minute", r.tpm);
    let all = r.pools.iter().find(|p| p.role == "all").unwrap();
    assert!((all.write_iops / 300.0 - 1.0).abs() < 0.02, "{}", all.write_iops);
}

// Group commit with N users and negligible CPU: the users who commit while
// a flush runs share the next one, so they settle into two cohorts that
// alternate — the first flush serves the first user alone, the second the
// other N − 1, and so on: N / 2 commits per flush on average, and N / 2
// commits every 4 ms = N × 125 a second. With one user: one per flush.
#[test]
fn commits_per_flush_grow_with_users() {
    let dep = deployment();
    let p = profile(1.0, 0.0, 0.0);
    let mut last = 0.0;
    for (vus, want) in [(1u32, 1.0), (8, 4.0), (32, 16.0)] {
        let r = run_db(&dep, &p, &params(vus), &[constant(4.0), constant(4.0)]);
        assert!((r.commits_per_flush - want).abs() < 0.05 * want, "{vus} users: {} commits per flush", r.commits_per_flush);
        assert!(r.commits_per_flush > last);
        last = r.commits_per_flush;
        let per_s = r.tpm / 60.0;
        assert!((per_s / (125.0 * f64::from(vus).max(2.0)) - 1.0).abs() < 0.02 || vus == 1, "{vus} users: {per_s}/s");
    }
}

// More memory, a larger share of the data cached: the miss ratio falls
// along the profile's curve (100 GB of data; 1, 10, 50, 100 GB of cache →
// 0.6, 0.2, 0.05, 0), and data reads per second never rise: with fewer
// reads per transaction the throughput may grow, but reads/s = N × r / (cpu
// + r × latency) grows with r, the reads per transaction.
#[test]
fn more_memory_never_raises_read_iops() {
    let cat = common::catalog();
    let dep = deployment();
    let p = profile(200.0, 100.0, 2.0);
    let mut last = f64::INFINITY;
    for (gb, miss) in [(1.0, 0.6), (10.0, 0.2), (50.0, 0.05), (100.0, 0.0)] {
        let mut params = params(16);
        params.db_memory_bytes = Some(gb * 1e9);
        let r = simulate_db(&cat, &dep, &p, &params).unwrap();
        assert!((r.miss_ratio - miss).abs() < 1e-9, "{gb} GB: miss ratio {}", r.miss_ratio);
        let data = r.pools.iter().find(|p| p.role == "data").unwrap();
        assert!(data.read_iops <= last * 1.01, "{gb} GB: {} read IOPS after {last}", data.read_iops);
        // Reads per transaction: 100 page accesses × the miss ratio.
        let per_txn = data.read_iops / (r.tpm / 60.0);
        assert!((per_txn - 100.0 * miss).abs() < 0.05 * 100.0 * miss + 0.01, "{gb} GB: {per_txn} reads per transaction");
        // Write-back: the checkpoints write 2 dirtied pages per transaction
        // (a profile without a write-back curve: each a page of its own).
        // The flusher writes every 5 s the share of the 5 s before, so a
        // 20 s window writes the pages of up to 5 s before it and leaves
        // those of its last 5 s: 2 × (20 ± 5) / 20 a transaction, 1.5 to
        // 2.5 — fewer only when the pool is saturated and the writes queue
        // past the window (no reads at 100 GB: 10,000s of transactions a
        // second dirty more pages than 3,000 IOPS can write). Where the
        // cache is short of the data, the dirty pages it evicts come on top.
        let wpt = data.write_iops / (r.tpm / 60.0);
        if miss == 0.0 {
            assert!(wpt <= 2.5, "{gb} GB: {wpt} writes per transaction");
        }
        if data.utilization < 0.9 {
            assert!(wpt >= 1.5, "{gb} GB: {wpt} writes per transaction");
        }
        last = data.read_iops;
    }
    assert_eq!(last, 0.0);
}

// The same deployment with one `all` pool: every I/O lands on it, and a
// gp3's 3,000 IOPS bind a read-heavy mix with many users.
#[test]
fn one_all_pool_takes_every_role_and_binds() {
    let cat = common::catalog();
    let dep = all_gp3(1000);
    let mut params = params(64);
    params.db_memory_bytes = Some(1e9);
    let r = simulate_db(&cat, &dep, &profile(50.0, 100.0, 1.0), &params).unwrap();
    assert_eq!(r.pools.len(), 1);
    let all = &r.pools[0];
    assert!(all.read_iops > 0.0 && all.write_iops > 0.0);
    // 3,000 IOPS of 8 KiB I/O (one counted I/O each), shared by reads,
    // background writes and log writes.
    let iops = all.read_iops + all.write_iops;
    assert!(iops <= 3000.0 * 1.01 && iops > 2900.0, "{iops}");
    assert!(all.utilization > 0.95, "{}", all.utilization);
    assert!(r.binding.contains("aws/ebs/gp3"), "{}", r.binding);
    assert!(r.series.iter().any(|s| s.metric == "VolumeReadOps" && s.resource == "pool all"));
}

// CPU alone: 1 ms of CPU per transaction, no reads, no commits, on an
// r5.large's 2 vCPUs. From 2 users on both vCPUs are always busy, so
// X = 2 / (1 ms × USL(N)). Without a concurrency penalty that is 2,000/s =
// 120,000 TPM at 2, 4 and 8 users alike: flat past saturation.
// With α = 0.05, β = 0.001: USL(4) = 1 + 0.05 × 3 + 0.001 × 4 × 3 = 1.162,
// USL(8) = 1 + 0.05 × 7 + 0.001 × 8 × 7 = 1.406, so X(4) = 1,721.2/s,
// X(8) = 1,422.5/s, and X(8) / X(4) = 1.162 / 1.406 = 0.8265.
#[test]
fn throughput_is_flat_past_cpu_saturation_and_falls_by_the_usl_factor() {
    let cat = common::catalog();
    let dep = config("[configs.a]\nhost = \"aws/ec2/r5.large\"\n[[configs.a.pools]]\nrole = \"all\"\ndevice = \"aws/ebs/gp3\"\nsize_gib = 100\n");
    let flat = profile_with(1000.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for vus in [2, 4, 8] {
        let r = simulate_db(&cat, &dep, &flat, &params(vus)).unwrap();
        assert!((r.tpm / 120_000.0 - 1.0).abs() < 0.01, "{vus} users: {} TPM", r.tpm);
        assert!(r.cpu_utilization > 0.99, "{}", r.cpu_utilization);
        assert!(r.binding.starts_with("host CPU 2 vCPUs at 100 %"), "{}", r.binding);
    }
    let usl = profile_with(1000.0, 0.0, 0.0, 0.0, 0.05, 0.001);
    let x4 = simulate_db(&cat, &dep, &usl, &params(4)).unwrap().tpm / 60.0;
    let x8 = simulate_db(&cat, &dep, &usl, &params(8)).unwrap().tpm / 60.0;
    assert!((x4 / 1721.2 - 1.0).abs() < 0.01, "{x4}");
    assert!((x8 / 1422.5 - 1.0).abs() < 0.01, "{x8}");
    assert!((x8 / x4 / 0.8265 - 1.0).abs() < 0.01, "{}", x8 / x4);
    // A scenario's (α, β) replaces the profile's: with (0, 0) it is flat again.
    let mut p = params(8);
    p.usl = Some((0.0, 0.0));
    assert!((simulate_db(&cat, &dep, &usl, &p).unwrap().tpm / 120_000.0 - 1.0).abs() < 0.01);
}

// The host's cores: 1 ms of CPU per transaction recorded on 2 vCPUs, with
// σ₁ = 0 and σ₂ = 0.1 past 2 backends at once. On an r5.2xlarge's 8 vCPUs
// 8 users run 8 at once: f(8) / f(2) = (1 + 0.1 × 6) / 1 = 1.6, so X = 8 /
// 1.6 ms = 5,000/s = 300,000 TPM (480,000 without the term); 16 users
// still run 8, the same. On an r5.large's 2 vCPUs 8 users run 2, as on the
// recording machine: 2 / 1 ms = 120,000 TPM. A scenario's (α, β) are the
// host's own: no factor.
#[test]
fn cpu_per_transaction_grows_with_the_backends_the_host_runs_at_once() {
    let cat = common::catalog();
    let text = profile_text(1000.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1000.0)
        .replace("[concurrency]", "[provenance.machine]\ncpus = 2\n[concurrency]")
        + "core_contention_beyond = 0.1\n";
    let p = Profile::from_toml("t.toml", &text).unwrap();
    let big = config("[configs.a]\nhost = \"aws/ec2/r5.2xlarge\"\n[[configs.a.pools]]\nrole = \"all\"\ndevice = \"aws/ebs/gp3\"\nsize_gib = 100\n");
    for vus in [8, 16] {
        let r = simulate_db(&cat, &big, &p, &params(vus)).unwrap();
        assert!((r.tpm / 300_000.0 - 1.0).abs() < 0.02, "{vus} users: {} TPM", r.tpm);
        assert!(r.binding.contains("(×1.60 of it from the host's cores)"), "{}", r.binding);
    }
    let small = config("[configs.a]\nhost = \"aws/ec2/r5.large\"\n[[configs.a.pools]]\nrole = \"all\"\ndevice = \"aws/ebs/gp3\"\nsize_gib = 100\n");
    assert!((simulate_db(&cat, &small, &p, &params(8)).unwrap().tpm / 120_000.0 - 1.0).abs() < 0.01);
    let mut own = params(8);
    own.usl = Some((0.0, 0.0));
    assert!((simulate_db(&cat, &big, &p, &own).unwrap().tpm / 480_000.0 - 1.0).abs() < 0.02);
}

// Storage alone: 100 page accesses at a miss ratio of 0.6 (1 GB of cache
// for 100 GB of data) = 60 reads of 8 KiB per transaction, no commits, no
// dirtied pages, on one gp3 at 3,000 IOPS: X = 3,000 / 60 = 50/s =
// 3,000 TPM, NOPM = 0.5 × 3,000 = 1,500, once enough users keep the
// volume busy — the same at 32 and 64 users. (100 s windows: the
// transactions in flight at the window's edges, at most one per user,
// are under 64 / 5,000 = 1.3 % of the count.)
#[test]
fn throughput_is_flat_past_storage_saturation() {
    let cat = common::catalog();
    let dep = config("[configs.a]\nhost = \"aws/ec2/r5b.24xlarge\"\n[[configs.a.pools]]\nrole = \"data\"\ndevice = \"aws/ebs/gp3\"\nsize_gib = 1000\n");
    let p = profile_with(50.0, 100.0, 0.0, 0.0, 0.0, 0.0);
    for vus in [32, 64] {
        let mut params = params(vus);
        params.db_memory_bytes = Some(1e9);
        params.duration_s = 100.0;
        let r = simulate_db(&cat, &dep, &p, &params).unwrap();
        assert!((r.tpm / 3000.0 - 1.0).abs() < 0.02, "{vus} users: {} TPM", r.tpm);
        assert!((r.nopm / 1500.0 - 1.0).abs() < 0.02, "{vus} users: {} NOPM", r.nopm);
        assert!(r.binding.starts_with("data pool: device aws/ebs/gp3 (1000 GiB): 3000 IOPS"), "{}", r.binding);
    }
}

// A gp2 data volume of 200 GiB: baseline 3 IOPS/GiB = 600, burst 3,000,
// 5.4 M credits (EBS user guide, "gp2 volumes"). 60 reads per transaction
// (as above) at 3,000 IOPS: 50 transactions/s = 3,000 a minute, spending
// credits at 3,000 − 600 = 2,400/s, so the bucket empties at 5.4 M / 2,400 =
// 2,250 s; then 600 IOPS carry 10/s = 600 a minute. BurstBalance at the
// end of minute 19 (1,140 s): 100 × (1 − 1,140 × 2,400 / 5.4 M) = 49.33 %.
/// 32 users, 100 page reads each, on a 200 GiB gp2 (3,000 IOPS burst, 600
/// baseline) for 2,700 s: the run both tests below read.
fn gp2_burst_run() -> storlab_sim::db::DbResult {
    let cat = common::catalog();
    let dep = config(
        "[configs.a]\nhost = \"aws/ec2/r5b.24xlarge\"\n[[configs.a.pools]]\nrole = \"data\"\ndevice = \"aws/ebs/gp2\"\nsize_gib = 200\n[[configs.a.pools]]\nrole = \"log\"\ndevice = \"aws/ebs/gp3\"\nsize_gib = 100\n",
    );
    let p = profile_with(50.0, 100.0, 0.0, 0.0, 0.0, 0.0);
    let mut params = params(32);
    params.db_memory_bytes = Some(1e9);
    params.rampup_s = 0.0;
    params.duration_s = 2700.0;
    let r = simulate_db(&cat, &dep, &p, &params).unwrap();
    r
}

#[test]
fn gp2_nopm_drops_when_burst_balance_reaches_zero() {
    let r = gp2_burst_run();
    let series = |resource: &str, metric: &str| r.series.iter().find(|s| s.resource == resource && s.metric == metric).unwrap().values.clone();
    let balance = series("pool data", "BurstBalance");
    let txns = series("db", "Transactions");
    assert!((balance[18] - 49.33).abs() < 0.5, "{}", balance[18]);
    // Minute 37 ends at 2,220 s: 100 × (1 − 2,220 × 2,400 / 5.4 M) = 1.33 %;
    // by the end of minute 38 (2,280 s) the bucket is empty.
    assert!((balance[36] - 1.33).abs() < 0.5, "{}", balance[36]);
    assert!(balance[38] < 0.1, "{}", balance[38]);
    // Transactions a minute: 3,000 before, 600 after.
    for (i, want) in [(5, 3000.0), (20, 3000.0), (39, 600.0), (44, 600.0)] {
        assert!((txns[i] / want - 1.0).abs() < 0.03, "minute {}: {} transactions, want {want}", i + 1, txns[i]);
    }
    let reads = series("pool data", "VolumeReadOps");
    assert!((reads[10] / 60.0 / 3000.0 - 1.0).abs() < 0.02 && (reads[42] / 60.0 / 600.0 - 1.0).abs() < 0.03, "{} {}", reads[10], reads[42]);
}

// The same run in phases: cut where the bucket empties, 5.4 M / 2,400 =
// 2,250 s — 3,000 transactions and reads a minute before, 600 after.
#[test]
fn gp2_run_splits_where_the_bucket_empties() {
    let r = gp2_burst_run();
    assert_eq!(r.phases.len(), 2, "{:?}", r.phases.iter().map(|p| (p.from_s, p.to_s)).collect::<Vec<_>>());
    let (a, b) = (&r.phases[0], &r.phases[1]);
    assert_eq!((a.from_s, b.to_s), (0.0, 2700.0));
    assert!((a.to_s / 2250.0 - 1.0).abs() < 0.01, "{}", a.to_s);
    assert_eq!(b.emptied, vec!["device aws/ebs/gp2 (200 GiB): baseline 600 IOPS".to_string()]);
    let per_min = |ph: &storlab_sim::db::DbPhase| ph.counts.iter().sum::<u64>() as f64 * 60.0 / (ph.to_s - ph.from_s);
    assert!((per_min(a) / 3000.0 - 1.0).abs() < 0.02, "{}", per_min(a));
    assert!((per_min(b) / 600.0 - 1.0).abs() < 0.03, "{}", per_min(b));
    let reads = |ph: &storlab_sim::db::DbPhase| ph.pool_ios[0].reads / (ph.to_s - ph.from_s);
    assert!((reads(a) / 3000.0 - 1.0).abs() < 0.02 && (reads(b) / 600.0 - 1.0).abs() < 0.03, "{} {}", reads(a), reads(b));
}

// The round trip outside the server: one user, 1 ms of CPU, no I/O, and
// `outside_us = 500` — a transaction takes 1.5 ms, so 1 / 1.5 ms = 666.7/s
// = 40,000 TPM, and the round trip uses no vCPU (CPU busy 1 / 1.5 of one
// vCPU's time = 2/3, over an r5.large's 2 vCPUs = 1/3). With 4 users the
// round trips overlap the 2 vCPUs' work: CPU-bound at 2 / 1 ms = 2,000/s.
#[test]
fn the_round_trip_outside_the_server_is_a_delay_without_cpu() {
    let cat = common::catalog();
    let dep = config("[configs.a]\nhost = \"aws/ec2/r5.large\"\n[[configs.a.pools]]\nrole = \"all\"\ndevice = \"aws/ebs/gp3\"\nsize_gib = 100\n");
    let mut p = profile_with(1000.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    p.concurrency.outside_us = 500.0;
    let r = simulate_db(&cat, &dep, &p, &params(1)).unwrap();
    assert!((r.tpm / 40_000.0 - 1.0).abs() < 0.005, "{}", r.tpm);
    assert!((r.cpu_utilization - 1.0 / 3.0).abs() < 0.005, "{}", r.cpu_utilization);
    assert!((r.time_outside_s - 0.0005).abs() < 1e-6 && (r.txn[0].latency.lat_mean_us - 1500.0).abs() < 1.0, "{:?}", r.txn[0].latency);
    let r = simulate_db(&cat, &dep, &p, &params(4)).unwrap();
    assert!((r.tpm / 120_000.0 - 1.0).abs() < 0.01, "{}", r.tpm);
}

// A log device with a volatile write cache: its catalog `flush` latency (a
// write + fdatasync) is what a commit waits for, not its plain write. One
// user, 1 µs of CPU, writes of 0.1 ms but durable writes of 2 ms: 1 / 2.001 ms
// = 499.75 commits/s = 29,985 a minute; without the flush it would be
// 1 / 0.101 ms.
#[test]
fn a_commit_waits_for_a_durable_write_where_the_device_has_a_flush_latency() {
    let dep = deployment();
    let mut log = constant(0.1);
    log.flush = Some(ServiceTime::new(&LogNormal::from_median_p99(2000.0, 2000.0)));
    let r = run_db(&dep, &profile(1.0, 0.0, 0.0), &params(1), &[constant(0.1), log]);
    assert!((r.tpm / 29_985.0 - 1.0).abs() < 0.005, "{}", r.tpm);
    assert!((r.flush_s - 0.002).abs() < 1e-6, "{}", r.flush_s);
}

/// `profile(cpu_us, 0, 0)` whose transaction locks one of `per_unit` rows of
/// its user's home warehouse from its start on a vCPU to its durable commit.
fn locking_profile(cpu_us: f64, per_unit: u32) -> Profile {
    let mut p = profile(cpu_us, 0.0, 0.0);
    p.transactions[0].row_locks = vec![storlab_workload::profile::RowLock { rows: "warehouse".into(), per_unit }];
    p
}

// Four users, 1 ms of CPU each, a 4 ms flush, 96 vCPUs. On one warehouse
// whose row every transaction updates, only one transaction at a time is
// between its update and its durable commit: 1 ms + 4 ms, alone in its
// flush — 200 a second, 12,000 a minute, however many users; each waits
// for the other three (15 ms) of its 20 ms. On four warehouses, one each,
// nobody waits, and group commit works as without the row: the first to
// commit flushes alone, the other three share the next flush, during which
// the first commits again — two cohorts alternating, 4 commits every 8 ms
// (30,000 a minute), 2 commits per flush.
#[test]
fn users_sharing_a_hot_row_take_turns_until_each_commit_is_durable() {
    let dep = deployment();
    let p = locking_profile(1000.0, 1);
    let one = run_db(&dep, &p, &DbParams { scale: 1.0, ..params(4) }, &[constant(4.0), constant(4.0)]);
    assert!((one.tpm / 12_000.0 - 1.0).abs() < 0.01, "{}", one.tpm);
    assert_eq!(one.commits_per_flush, 1.0);
    assert!((one.time_locks_s - 0.015).abs() < 0.0002, "{}", one.time_locks_s);
    assert!(one.binding.starts_with("row locks: 15.00 ms of 20.00 ms per transaction waiting for another user's warehouse row"), "{}", one.binding);
    assert!(one.binding.ends_with("4 users on 1 home warehouse"), "{}", one.binding);
    let own = run_db(&dep, &p, &DbParams { scale: 4.0, ..params(4) }, &[constant(4.0), constant(4.0)]);
    assert!((own.tpm / 30_000.0 - 1.0).abs() < 0.01, "{}", own.tpm);
    assert!((own.commits_per_flush - 2.0).abs() < 0.01, "{}", own.commits_per_flush);
    assert_eq!(own.time_locks_s, 0.0);
    // Without the row, one warehouse is as four: the same 30,000.
    let free = run_db(&dep, &profile(1000.0, 0.0, 0.0), &DbParams { scale: 1.0, ..params(4) }, &[constant(4.0), constant(4.0)]);
    assert!((free.tpm / 30_000.0 - 1.0).abs() < 0.01, "{}", free.tpm);
}

// As many users as warehouses: round-robin gives each its own (nobody waits
// for a row); HammerDB's random draw gives 64 users on 64 warehouses
// distinct homes with probability 64! / 64^64 ≈ 1e-26, so some share one and
// wait for each other's rows.
#[test]
fn random_home_warehouses_share_some_where_round_robin_shares_none() {
    let dep = deployment();
    let p = locking_profile(1000.0, 1);
    let rr = run_db(&dep, &p, &DbParams { scale: 64.0, ..params(64) }, &[constant(4.0), constant(4.0)]);
    assert_eq!(rr.time_locks_s, 0.0);
    let random = run_db(&dep, &p, &DbParams { scale: 64.0, random_homes: true, ..params(64) }, &[constant(4.0), constant(4.0)]);
    assert!(random.time_locks_s > 0.0 && random.tpm < rr.tpm, "{} s waiting, {} against {} TPM", random.time_locks_s, random.tpm, rr.tpm);
}

// A flush's own CPU moves out of the transaction into the log writer. One
// user, 1 ms of CPU of which 0.2 ms is the flush's, a 4 ms flush: still
// 0.8 + 0.2 + 4 = 5 ms a transaction, 12,000 a minute, as with all of it
// in the transaction. With 8 users on 2 vCPUs the flush's CPU, taken when
// the device wakes the log writer, queues behind the transactions' (0.9 ms
// each, first come first served): a flush takes the device's time, then a
// wait for a vCPU and its 0.1 ms of CPU — longer than the device's time
// alone (which the gp3's 3,000 IOPS stretch past 0.1 ms here) — more
// than 0.3 ms beyond it.
#[test]
fn a_flush_takes_its_cpu_on_the_vcpus_the_transactions_use() {
    let dep = deployment();
    let mut p = profile(1000.0, 0.0, 0.0);
    p.concurrency.flush_cpu_us = 200.0;
    let one = run_db(&dep, &p, &params(1), &[constant(4.0), constant(4.0)]);
    assert!((one.tpm / 12_000.0 - 1.0).abs() < 0.002, "{}", one.tpm);
    assert!((one.flush_s - 0.0042).abs() < 1e-6, "{}", one.flush_s);
    let small = config("[configs.a]\nhost = \"aws/ec2/r5.large\"\n[[configs.a.pools]]\nrole = \"all\"\ndevice = \"aws/ebs/gp3\"\nsize_gib = 100\n");
    p.concurrency.flush_cpu_us = 100.0;
    let busy = run_db(&small, &p, &params(8), &[constant(0.1)]);
    p.concurrency.flush_cpu_us = 0.0;
    let none = run_db(&small, &p, &params(8), &[constant(0.1)]);
    assert!(busy.cpu_utilization > 0.95 && busy.flush_s > none.flush_s + 0.0003, "{} CPU, {} s a flush", busy.cpu_utilization, busy.flush_s);
}

// A recorded penalty table (vus [1, 4], penalty [1, 2]) in place of the
// USL, on 2 vCPUs with 1 ms of CPU a transaction and no I/O: at 4 users
// each transaction takes 2 ms, X = 2 / 2 ms = 1,000/s = 60,000 TPM; at 2
// users the factor is 1 + ln 2 / ln 4 = 1.5 (linear in ln N), one user a
// vCPU, X = 2 / 1.5 ms = 1,333.3/s = 80,000 TPM; at 8 users, past the last
// count, it holds at 2: 60,000 TPM again. A scenario's (α, β) replaces it.
#[test]
fn a_recorded_penalty_multiplies_cpu_by_users_in_ln_n_and_holds_past_its_last_count() {
    let cat = common::catalog();
    let dep = config("[configs.a]\nhost = \"aws/ec2/r5.large\"\n[[configs.a.pools]]\nrole = \"all\"\ndevice = \"aws/ebs/gp3\"\nsize_gib = 100\n");
    let mut p = profile_with(1000.0, 0.0, 0.0, 0.0, 0.5, 0.0);
    p.concurrency.vus = vec![1.0, 4.0];
    p.concurrency.penalty = vec![1.0, 2.0];
    assert!((p.penalty_factor(2.0) - 1.5).abs() < 1e-12);
    for (vus, tpm) in [(2, 80_000.0), (4, 60_000.0), (8, 60_000.0)] {
        let r = simulate_db(&cat, &dep, &p, &params(vus)).unwrap();
        assert!((r.tpm / tpm - 1.0).abs() < 0.01, "{vus} users: {} TPM, expected {tpm}", r.tpm);
    }
    let mut o = params(8);
    o.usl = Some((0.0, 0.0));
    assert!((simulate_db(&cat, &dep, &p, &o).unwrap().tpm / 120_000.0 - 1.0).abs() < 0.01);
}

// Write-back: one user, 1 ms of CPU a transaction, no reads, no commits,
// one dirtied page each (no write-back curve: each a page of its own):
// 1,000 transactions and 1,000 page writes a second. The kernel's flusher
// wakes every 5 s (dirty_writeback_centisecs = 500) and writes the share
// of the 5 s before at once, so the data pool's writes come in bursts of
// 5,000 in the seconds 5, 10, 15, ... and none between. From the start
// (delay 0), the wake-ups at 5..55 s write 55,000 in minute 1 and those at
// 60..115 s 60,000 in minute 2. For a server started 30 s before the
// window (the kernel's dirty_expire_centisecs = 3000), the first write-back
// is at 30 s: the wake-ups at 30..55 s write 30,000 in minute 1, then
// 60,000. A window of 2-22 s writes none at 30 s; one of 40-60 s takes the
// wake-ups at 40, 45, 50 and 55 s (the one at 60 s completes after it):
// 20,000 pages, 1,000 a second. The throughput is the same throughout:
// nobody waits for a write-back here.
#[test]
fn dirtied_pages_reach_the_data_pool_in_the_flushers_bursts_once_of_age() {
    let dep = deployment();
    let p = profile_with(1000.0, 0.0, 1.0, 0.0, 0.0, 0.0);
    let lats = [constant(1.0), constant(1.0)];
    let writes = |r: &storlab_sim::db::DbResult| r.series.iter().find(|s| s.resource == "pool data" && s.metric == "VolumeWriteOps").unwrap().values.clone();
    let run = |delay: f64, rampup_s: f64, duration_s: f64, period_s: f64| run_db(&dep, &p, &DbParams { rampup_s, duration_s, writeback_delay_s: delay, period_s, ..params(1) }, &lats);
    let now = run(0.0, 0.0, 120.0, 60.0);
    let aged = run(30.0, 0.0, 120.0, 60.0);
    for (r, want) in [(&now, [55_000.0, 60_000.0]), (&aged, [30_000.0, 60_000.0])] {
        let w = writes(r);
        assert!((w[0] / want[0] - 1.0).abs() < 0.01 && (w[1] / want[1] - 1.0).abs() < 0.01, "{w:?}, want {want:?}");
        assert!((r.tpm / 60_000.0 - 1.0).abs() < 0.01, "{}", r.tpm);
    }
    let per_second = writes(&run(0.0, 0.0, 30.0, 1.0));
    for (s, &w) in per_second.iter().enumerate().take(30) {
        let want = if s > 0 && s % 5 == 0 { 5000.0 } else { 0.0 };
        assert!((w - want).abs() <= 0.01 * want + 1.0, "second {s}: {w} writes, want {want}: {per_second:?}");
    }
    let data = |r: &storlab_sim::db::DbResult| r.pools.iter().find(|p| p.role == "data").unwrap().write_iops;
    assert_eq!(data(&run(30.0, 2.0, 20.0, 60.0)), 0.0);
    assert!((data(&run(30.0, 40.0, 20.0, 60.0)) / 1000.0 - 1.0).abs() < 0.01);
}

// The flusher's burst queues ahead of a commit's log write on a shared
// pool. One user on one gp3 (3,000 IOPS) taking every role: 1 ms of CPU,
// then a commit whose write takes 1 ms, one dirtied page a transaction.
// Without the write-back a transaction takes 2 ms: 500 a second. Every
// 5 s the flusher queues the r × 5 pages dirtied since its last wake-up,
// and the log write behind them waits r × 5 / 3,000 s, so a 5 s cycle
// runs 500 × (5 − r × 5 / 3,000) transactions: r = 500 / (1 + 500 / 3,000)
// = 428.6 a second, 25,714 a minute, and the longest transaction waits
// about 428.6 × 5 / 3,000 = 0.71 s. With no dirtied pages: 30,000 a minute.
#[test]
fn a_commit_waits_behind_the_flushers_burst_on_a_shared_pool() {
    let dep = all_gp3(100);
    let lats = [constant(1.0)];
    let run = |dirtied: f64| run_db(&dep, &profile_with(1000.0, 0.0, dirtied, 1.0, 0.0, 0.0), &DbParams { rampup_s: 10.0, duration_s: 60.0, ..params(1) }, &lats);
    let clean = run(0.0);
    assert!((clean.tpm / 30_000.0 - 1.0).abs() < 0.01, "{}", clean.tpm);
    let r = run(1.0);
    assert!((r.tpm / 25_714.0 - 1.0).abs() < 0.02, "{}", r.tpm);
    let max_s = r.txn[0].latency.lat_max_us * 1e-6;
    assert!((max_s / 0.714 - 1.0).abs() < 0.05, "longest transaction {max_s} s");
}

fn with_writeback(mut p: Profile, txns: &[f64], pages: &[f64], runs: &[f64]) -> Profile {
    p.writeback = Some(storlab_workload::profile::Writeback { txns_per_unit: txns.to_vec(), pages_per_unit: pages.to_vec(), runs_per_unit: runs.to_vec(), ..Default::default() });
    p
}

// Checkpoints from a write-back curve: one user, 1 ms of CPU, no reads, no
// commits: 1,000 transactions a second on one home warehouse. The curve:
// 10,000 distinct pages in 1,000 runs dirty after 10,000 transactions,
// none more after (the hot set, all dirty). With 10,000 WAL bytes a
// transaction (10 MB/s) a checkpoint comes once the WAL reaches
// 1 GiB / (1 + 0.9) = 565,117,600 bytes: every 56.51 s, 56,512
// transactions, 10,000 pages in 1,000 I/Os of 10 pages (80 KiB; 10,000 /
// 32 pages of checkpoint_flush_after = 312.5 is fewer) — 17.70 I/Os and
// 176.96 pages a second. With 1,000 WAL bytes (1 MB/s, 565 s) the timeout
// binds: every 300 s, 3.33 I/Os and 33.33 pages a second. With 10 runs,
// the 256 KiB batches bind: 10,000 / 32 = 312.5 I/Os an interval, 5.53 a
// second at 10 MB/s. Window 60-120 s: the wake-ups at 60..115 s.
#[test]
fn checkpoints_write_the_curves_distinct_pages_in_runs_each_interval() {
    let dep = deployment();
    let lats = [constant(1.0), constant(1.0)];
    let pool = |r: &storlab_sim::db::DbResult| r.pools.iter().find(|p| p.role == "data").unwrap().clone();
    let run = |wal: f64, runs: f64| {
        let p = with_writeback(profile_wal(1000.0, 0.0, 0.0, 0.0, 0.0, 0.0, wal), &[10_000.0, 20_000.0], &[10_000.0, 10_000.0], &[runs, runs]);
        run_db(&dep, &p, &DbParams { rampup_s: 60.0, duration_s: 60.0, ..params(1) }, &lats)
    };
    let interval = 1073741824.0 / 1.9 / 10_000_000.0;
    for (wal, runs, ops, pages) in [(10_000.0, 1000.0, 1000.0 / interval, 10_000.0 / interval), (1000.0, 1000.0, 1000.0 / 300.0, 10_000.0 / 300.0), (10_000.0, 10.0, 312.5 / interval, 10_000.0 / interval)] {
        let r = run(wal, runs);
        assert!((r.tpm / 60_000.0 - 1.0).abs() < 0.01, "{}", r.tpm);
        let d = pool(&r);
        assert!((d.write_iops / ops - 1.0).abs() < 0.03, "WAL {wal}, runs {runs}: {} writes a second, want {ops:.2}", d.write_iops);
        assert!((d.write_bytes_s / (pages * 8192.0) - 1.0).abs() < 0.03, "WAL {wal}, runs {runs}: {} B/s, want {:.0}", d.write_bytes_s, pages * 8192.0);
    }
}

// A cache far short of the data: every data read evicts a page, and once
// more pages are dirty over the checkpoint's cycle than the cache holds,
// every evicted page is dirty — one 8 KiB write a read. One user, 10 ms of
// CPU (under 100 transactions a second: some 1,300 I/Os a second, well
// inside the gp3's 3,000), 10 page accesses a transaction at a miss ratio
// of 0.6 (1 MB of cache, 122 pages, for 100 GB of data at scale 1,000:
// below the curve's first point), one page dirtied a transaction (no
// curve: some 28,000 dirty pages over a 300 s cycle, 14,000 on average,
// far more than 122): each transaction reads 6 pages and writes 6 evicted
// ones, plus its 1 page at the checkpoint: 7 writes. With 200 GB of cache,
// no reads and no evictions: the checkpoint's 1 write a transaction.
#[test]
fn a_short_cache_writes_a_dirty_page_for_each_read_once_its_pages_are_mostly_dirty() {
    let dep = deployment();
    let lats = [constant(0.1), constant(0.1)];
    let p = profile_with(10_000.0, 10.0, 1.0, 0.0, 0.0, 0.0);
    let r = run_db(&dep, &p, &DbParams { rampup_s: 60.0, duration_s: 60.0, db_memory_bytes: Some(1e6), ..params(1) }, &lats);
    let d = r.pools.iter().find(|p| p.role == "data").unwrap();
    let tps = r.tpm / 60.0;
    assert!((d.read_iops / tps / 6.0 - 1.0).abs() < 0.03, "{} reads a transaction", d.read_iops / tps);
    assert!((d.write_iops / tps / 7.0 - 1.0).abs() < 0.03, "{} writes a transaction", d.write_iops / tps);
    // With the whole data cached, no evictions: the checkpoint's 1 a transaction.
    let r = run_db(&dep, &p, &DbParams { rampup_s: 60.0, duration_s: 60.0, db_memory_bytes: Some(2e11), ..params(1) }, &lats);
    let d = r.pools.iter().find(|p| p.role == "data").unwrap();
    assert!((d.write_iops / (r.tpm / 60.0) - 1.0).abs() < 0.03, "{} writes a transaction", d.write_iops / (r.tpm / 60.0));
}

#[test]
fn a_sweep_gives_the_same_record_on_one_thread_or_three() {
    // Two configs × three VU counts: six runs, each with its own seed, so
    // how they are spread over threads cannot change a figure.
    let root = common::root();
    let text = std::fs::read_to_string(root.join("examples/db-tpcc-gp2-burst.toml")).unwrap().replace("vus = [4]", "vus = [1, 4, 8]").replace("duration_s = 3000", "duration_s = 60");
    let cat = common::catalog();
    let run = |threads: usize| {
        let o = storlab_sim::Overrides { sim_threads: Some(threads), ..Default::default() };
        let rec = common::run_in(&cat, &text, &root, None, &o).unwrap();
        serde_json::to_string(&rec).unwrap()
    };
    let one = run(1);
    assert!(one.contains("\"vus\":8"), "{one:.300}");
    assert_eq!(one, run(3));
}

#[test]
fn a_steady_run_ends_early_within_two_percent_of_the_whole() {
    // gp3 data and log (no bucket): 4, 8 and 16 users for 900 s; with
    // steady_state each ends at a 10 s batch edge once its mean is known
    // within 1 %, after at least one checkpoint interval (300 s here).
    let root = common::root();
    let text = std::fs::read_to_string(root.join("examples/db-tpcc-gp2-burst.toml")).unwrap().replace("vus = [4]", "vus = [4, 8, 16]").replace("duration_s = 3000", "duration_s = 900");
    let cat = common::catalog();
    let run = |steady: bool| {
        let o = storlab_sim::Overrides { config: Some("gp3".into()), steady_state: Some(steady), ..Default::default() };
        let rec = common::run_in(&cat, &text, &root, None, &o).unwrap();
        serde_json::to_value(&rec).unwrap()
    };
    let (full, steady) = (run(false), run(true));
    let nopm = |v: &serde_json::Value| v["results"].as_array().unwrap().iter().map(|r| r["nopm"].as_f64().unwrap()).collect::<Vec<_>>();
    for (a, b) in nopm(&full).iter().zip(nopm(&steady)) {
        assert!((b / a - 1.0).abs() <= 0.02, "{a} vs {b}");
    }
    let notes: Vec<&str> = steady["warnings"].as_array().unwrap().iter().filter_map(|w| w.as_str()).filter(|w| w.contains("throughput steady")).collect();
    assert!(!notes.is_empty(), "{:?}", steady["warnings"]);
    assert!(steady["simulated_s"].as_f64().unwrap() < full["simulated_s"].as_f64().unwrap());
}

#[test]
fn steadiness_needs_twelve_batches_and_a_narrow_interval() {
    use storlab_sim::db::steady;
    // Twelve equal batches: no spread, steady.
    assert!(steady(&[100.0; 12]));
    assert!(!steady(&[100.0; 11]));
    // 100 ± 5 alternating over 12 batches: s = 5.22, s/√12 = 1.51, t(11)
    // ≈ 2.19 (this expansion; 2.20 in tables): half-width 3.3 > 1 % of 100.
    let alt: Vec<f64> = (0..12).map(|i| if i % 2 == 0 { 95.0 } else { 105.0 }).collect();
    assert!(!steady(&alt));
    // ± 1: half-width 0.66 < 1.
    let alt: Vec<f64> = (0..12).map(|i| if i % 2 == 0 { 99.0 } else { 101.0 }).collect();
    assert!(steady(&alt));
}

// The same checkpoint with InnoDB's 16 KiB pages (`data.page_bytes`): the
// 10,000 pages an interval in 10 runs are 10,000 × 16 KiB, and a
// checkpoint_flush_after batch of 256 KiB holds 16 of them: 10,000 / 16 =
// 625 I/Os an interval, twice the 8 KiB pages' 312.5.
#[test]
fn a_sixteen_kib_page_doubles_the_checkpoints_bytes_and_halves_its_pages_an_io() {
    let dep = deployment();
    let lats = [constant(1.0), constant(1.0)];
    let mut p = with_writeback(profile_wal(1000.0, 0.0, 0.0, 0.0, 0.0, 0.0, 10_000.0), &[10_000.0, 20_000.0], &[10_000.0, 10_000.0], &[10.0, 10.0]);
    p.data.page_bytes = 16384.0;
    let r = run_db(&dep, &p, &DbParams { rampup_s: 60.0, duration_s: 60.0, ..params(1) }, &lats);
    let d = r.pools.iter().find(|p| p.role == "data").unwrap().clone();
    let interval = 1073741824.0 / 1.9 / 10_000_000.0;
    assert!((d.write_iops / (625.0 / interval) - 1.0).abs() < 0.03, "{} writes a second, want {:.2}", d.write_iops, 625.0 / interval);
    assert!((d.write_bytes_s / (10_000.0 * 16384.0 / interval) - 1.0).abs() < 0.03, "{} B/s", d.write_bytes_s);
}

/// The test profile recorded on MariaDB with these settings, its pages
/// InnoDB's 16 KiB.
fn innodb(cpu_us: f64, pages_dirtied: f64, settings: &str) -> Profile {
    let text = profile_text(cpu_us, 0.0, pages_dirtied, 1.0, 0.0, 0.0, 1000.0)
        .replace("[data]\n", &format!("[provenance]\nengine = \"mariadb\"\nsettings = {{ {settings} }}\n[data]\npage_bytes = 16384\n"));
    Profile::from_toml("t.toml", &text).unwrap()
}

// One user, no reads, every I/O 4 ms. Without the binary log a commit is
// one durable redo write: 1 / 4.001 ms = 14,996 a minute. With log_bin and
// sync_binlog = 1 the binary log's write follows the redo's before the
// commit returns: 8.001 ms, 60 / 0.008001 = 7,499 a minute, and the log
// pool writes twice per commit.
#[test]
fn a_synced_binary_log_is_a_second_durable_write_per_commit_group() {
    let dep = deployment();
    let lats = [constant(4.0), constant(4.0)];
    let off = run_db(&dep, &innodb(1.0, 0.0, r#"log_bin = "OFF", sync_binlog = "1""#), &params(1), &lats);
    let on = run_db(&dep, &innodb(1.0, 0.0, r#"log_bin = "ON", sync_binlog = "1""#), &params(1), &lats);
    assert!((off.tpm / 14996.0 - 1.0).abs() < 0.005, "{}", off.tpm);
    assert!((on.tpm / 7499.0 - 1.0).abs() < 0.005, "{}", on.tpm);
    let per_commit = |r: &storlab_sim::db::DbResult| r.pools[1].write_iops / (r.tpm / 60.0);
    assert!((per_commit(&off) - 1.0).abs() < 0.01, "{}", per_commit(&off));
    assert!((per_commit(&on) - 2.0).abs() < 0.02, "{}", per_commit(&on));
    // sync_binlog = 0: the kernel writes it back, no durable write at commit.
    let lazy = run_db(&dep, &innodb(1.0, 0.0, r#"log_bin = "ON", sync_binlog = "0""#), &params(1), &lats);
    assert!((lazy.tpm / 14996.0 - 1.0).abs() < 0.005, "{}", lazy.tpm);
}

// Two pages dirtied a transaction, no write-back curve: each is written
// back as a page of its own, 2 × 16 KiB a transaction. With the doublewrite
// buffer every page is written a second time first, in sequential writes of
// up to 64 pages (1 MiB): twice the bytes, and 1 + 1/64 the writes.
#[test]
fn the_doublewrite_buffer_writes_each_page_twice_in_blocks_of_a_mebibyte() {
    let dep = deployment();
    let lats = [constant(1.0), constant(1.0)];
    // One user, 5 ms of CPU and a 1 ms commit: about 166 transactions and
    // 333 pages a second, well inside the data gp3's 3,000 IOPS.
    let mut p = params(1);
    p.duration_s = 60.0;
    let off = run_db(&dep, &innodb(5000.0, 2.0, r#"innodb_doublewrite = "OFF""#), &p, &lats);
    let on = run_db(&dep, &innodb(5000.0, 2.0, r#"innodb_doublewrite = "ON""#), &p, &lats);
    let per_txn = |r: &storlab_sim::db::DbResult| (r.pools[0].write_bytes_s / (r.tpm / 60.0), r.pools[0].write_iops / (r.tpm / 60.0));
    let (b_off, n_off) = per_txn(&off);
    let (b_on, n_on) = per_txn(&on);
    // The flusher's slices end at 5 s steps: a slice's pages may fall just
    // outside the window, hence 5 %.
    assert!((b_off / 32768.0 - 1.0).abs() < 0.05, "{b_off}");
    assert!((b_on / 65536.0 - 1.0).abs() < 0.05, "{b_on}");
    assert!((n_on / n_off - (1.0 + 1.0 / 64.0)).abs() < 0.01, "{n_on} {n_off}");
}

// The page cleaner at innodb_io_capacity_max = 100: the transactions of
// the test above dirty 2 pages each, about 333 a second, and it writes 100
// a second (100 × 16 KiB = 1,638,400 bytes a second), the rest held while
// their redo (1,000 bytes a transaction: 0.76 × 96 MiB = 76 MiB is
// 152,000 pages) is far from the sync limit. With a redo log of 1 MiB the
// limit is 0.76 MiB of redo, 1,592 pages, passed within 7 s: from then on
// every page beyond it goes at once, so the pages written over the minute
// are those dirtied less the 1,592 held: 333 − 1,592 / 60 ≈ 307 a second.
#[test]
fn the_page_cleaner_writes_io_capacity_max_pages_a_second_until_the_redo_log_is_full() {
    let dep = deployment();
    let lats = [constant(1.0), constant(1.0)];
    let mut p = params(1);
    p.duration_s = 60.0;
    let capped = run_db(&dep, &innodb(5000.0, 2.0, r#"innodb_doublewrite = "OFF", innodb_io_capacity_max = "100""#), &p, &lats);
    let pages_s = |r: &storlab_sim::db::DbResult| r.pools[0].write_bytes_s / 16384.0;
    assert!((pages_s(&capped) / 100.0 - 1.0).abs() < 0.03, "{}", pages_s(&capped));
    let small_redo = run_db(&dep, &innodb(5000.0, 2.0, r#"innodb_doublewrite = "OFF", innodb_io_capacity_max = "100", innodb_log_file_size = "1M""#), &p, &lats);
    let dirtied = 2.0 * small_redo.tpm / 60.0;
    let expect = dirtied - (0.9 * 0.9 * 15.0 / 16.0 * 1048576.0 * 2.0 / 1000.0) / 60.0;
    assert!((pages_s(&small_redo) / expect - 1.0).abs() < 0.05, "{} {expect}", pages_s(&small_redo));
    // The CPU-bound transactions do not wait for either.
    assert!((capped.tpm / small_redo.tpm - 1.0).abs() < 0.01);
}

// RDS for MySQL turns the binary log on with backups and syncs it at every
// group (MySQL 8.0's default); Optimized Writes turns the doublewrite
// buffer off on db.r6i from its announcement (re:Invent 2022), not on
// db.r5, and not before; a config's own settings come last.
#[test]
fn rds_puts_the_binary_log_on_and_optimized_writes_the_doublewrite_off() {
    use storlab_sim::writepath::WritePath;
    let prof = innodb(1.0, 1.0, r#"innodb_doublewrite = "ON", log_bin = "OFF", sync_binlog = "0""#);
    let rds = |class: &str, as_of: Option<&str>, settings: &str| {
        let cat = common::catalog();
        let as_of = as_of.map(|d| format!("as_of = \"{d}\"\n")).unwrap_or_default();
        let text = format!("{as_of}[configs.a]\nhost = \"aws/rds/{class}\"\nengine = \"mysql\"\n{settings}\n[[configs.a.pools]]\ndevice = \"aws/ebs/gp3\"\nsize_gib = 200\n");
        let sc = ScenarioFile::from_toml("s.toml", &text).unwrap();
        let cat = match &sc.as_of {
            Some(d) => cat.on(d, storlab_model::error::Location::new("s.toml", "as_of", "")).unwrap(),
            None => cat,
        };
        let dep = resolve_all(&cat, "s.toml", &sc).unwrap().remove(0);
        WritePath::resolve(&dep, &prof).unwrap()
    };
    let r6i = rds("db.r6i.2xlarge", None, "");
    assert!(!r6i.doublewrite && r6i.binlog_sync_every == 1, "{r6i:?}");
    assert!(r6i.words.contains("Optimized Writes"), "{}", r6i.words);
    let r5 = rds("db.r5.2xlarge", None, "");
    assert!(r5.doublewrite && r5.binlog_sync_every == 1, "{r5:?}");
    let before = rds("db.r6i.2xlarge", Some("2022-06-01"), "");
    assert!(before.doublewrite, "{before:?}");
    let own = rds("db.r6i.2xlarge", None, "settings = { log_bin = \"OFF\", innodb_doublewrite = true }");
    assert!(own.doublewrite && own.binlog_sync_every == 0, "{own:?}");
    // A PostgreSQL profile has no InnoDB write path.
    assert!(WritePath::resolve(&deployment(), &profile(1.0, 0.0, 0.0)).is_none());
}

// 1,000 rows: 5 a second for the first 100 s is 500, the other 500 at
// 1 a second take 500 s more — in at 600 s. Within the first stretch:
// 300 rows at 5 a second, 60 s. A last rate of 0 never finishes.
#[test]
fn the_rows_are_in_when_the_stretches_rates_add_up_to_them() {
    use storlab_sim::database::finish_time;
    assert_eq!(finish_time(1000.0, &[(100.0, 5.0), (f64::INFINITY, 1.0)]), Some(600.0));
    assert_eq!(finish_time(300.0, &[(100.0, 5.0), (f64::INFINITY, 1.0)]), Some(60.0));
    assert_eq!(finish_time(1000.0, &[(100.0, 5.0), (200.0, 0.0)]), None);
    assert_eq!(finish_time(1000.0, &[(f64::INFINITY, 2.0)]), Some(500.0));
}

/// The recorder's penalty fit, run backwards: the shipped TPC-C profile
/// with every count's CPU multiplier at 1.7 makes X(N) on a 2-vCPU
/// r5.large; fitted to those X(N), it finds 1.7 again, within 5 %. The
/// bisection stops once the model's throughput is within ±0.5 % of X(N);
/// the multiplier scales only the transactions' own CPU (not the flush's,
/// not the round trip outside the server), and each multiplier tried
/// reorders the run's events, so the stop can come a few percent from 1.7.
#[test]
fn the_penalty_fit_recovers_the_multiplier_that_made_the_throughput() {
    let cat = common::catalog();
    let root = common::root();
    let shipped = std::fs::read_to_string(root.join("python/storlab/profiles/tpcc-postgresql.toml")).unwrap();
    let text: String = shipped.lines().map(|l| if l.starts_with("penalty = ") { "penalty = [1.7, 1.7, 1.7, 1.7, 1.7]".to_string() } else { l.to_string() }).collect::<Vec<_>>().join("\n");
    let dir = std::env::temp_dir().join(format!("storlab-penalty-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("p.toml"), text).unwrap();
    let scenario = r#"
[workload.database]
profile = "p.toml"
scale = 2
vus = [1, 2, 4, 8, 16]
rampup_s = 3
duration_s = 20
[configs.r5]
host = "aws/ec2/r5.large"
[[configs.r5.pools]]
role = "all"
device = "aws/ebs/gp3"
size_gib = 100
"#;
    let rec = common::run_in(&cat, scenario, &dir, None, &storlab_sim::Overrides::default()).unwrap();
    let x: Vec<f64> = rec
        .results
        .iter()
        .map(|r| match &r.extra {
            Some(storlab_record::JobExtra::Db(d)) => d.tpm.unwrap() / 60.0,
            other => panic!("{other:?}"),
        })
        .collect();
    let fit = storlab_sim::database::fit_penalty(&cat, "s.toml", scenario, &dir, &common::root().join("python/storlab/profiles"), &x).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(fit.vus, vec![1, 2, 4, 8, 16]);
    assert!(fit.clipped.is_empty(), "{fit:?}");
    for (&n, &m) in fit.vus.iter().zip(&fit.penalty) {
        assert!((m / 1.7 - 1.0).abs() <= 0.05, "{n} users: {m}");
    }
}

// A cold cache fills one page a miss. One user, 1 µs of CPU, 10 page
// accesses, no commits, every read exactly 1 ms; the data 1,000 × 1e8 =
// 1e11 bytes and the cache 1e9 = 0.01 of it, where the curve misses 0.6.
// Filling from empty it misses 1 − 40 f at a share f below 0.01 (from 1
// at empty to the first point), and every read adds one 8 KiB page: the
// cache is full after 1e9 / 8,192 = 122,070 reads, at 122.07 s. Over those
// 122.07 s it runs ∫ 1000 / (10 (1 − 0.4 u)) du over u = t / T, i.e.
// (1000 T / 10) × ln(1 / 0.6) / 0.4 transactions, where a warm cache runs
// (1000 T / 10) / 0.6: the cold run's share is 0.6 ln(1 / 0.6) / 0.4 =
// 0.7662. Past the fill both run alike.
#[test]
fn a_cold_cache_fills_one_page_a_miss() {
    let dep = deployment();
    let lats = [constant(1.0), constant(1.0)];
    let p = profile_with(1.0, 10.0, 0.0, 0.0, 0.0, 0.0);
    let fill_s = 1e9 / 8192.0 * 1e-3;
    let at = |cold_cache: bool, rampup_s: f64, duration_s: f64| {
        run_db(&dep, &p, &DbParams { rampup_s, duration_s, db_memory_bytes: Some(1e9), cold_cache, ..params(1) }, &lats)
    };
    let (cold, warm) = (at(true, 0.0, fill_s), at(false, 0.0, fill_s));
    assert!(warm.cache_full_s.is_none());
    let full = at(true, 0.0, 1.2 * fill_s).cache_full_s.expect("the cache filled");
    assert!((full / fill_s - 1.0).abs() < 0.01, "full at {full} s, expected {fill_s}");
    assert!((cold.tpm / warm.tpm / 0.7662 - 1.0).abs() < 0.02, "cold / warm {}", cold.tpm / warm.tpm);
    let (cold, warm) = (at(true, fill_s + 5.0, 30.0), at(false, fill_s + 5.0, 30.0));
    assert!((cold.tpm / warm.tpm - 1.0).abs() < 0.02, "after the fill: cold / warm {}", cold.tpm / warm.tpm);
    // Warm: 10 × 0.6 = 6 reads a transaction, 1 ms each.
    assert!((warm.tpm / 60.0 / (1000.0 / 6.0) - 1.0).abs() < 0.02, "{} a second", warm.tpm / 60.0);
}
