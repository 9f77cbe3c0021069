//! What database runs add: per virtual-user count NOPM, TPM, per-type
//! transaction counts and latencies, the I/O profile; at the top of a
//! `bench db` record, the load, the sweep's steps and every timed run.
//! A simulated database sweep fills the same result columns, so a simulated
//! and a measured sweep line up.

use crate::LatencySummary;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One transaction type's counts and latencies (µs) in a window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TxnStats {
    #[serde(flatten)]
    pub latency: LatencySummary,
    pub commits: u64,
    /// Rollbacks the workload asked for (TPC-C's 1 % New-Orders).
    pub rollbacks: u64,
    /// Statements the server refused.
    pub errors: u64,
    /// Transactions (commits + rollbacks) per minute.
    pub per_min: f64,
    /// Rows written (insert storm, workload files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
}

/// Cumulative I/O counters of the server's processes (/proc/PID/io).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProcIo {
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub syscr: u64,
    pub syscw: u64,
}

/// Per-transaction I/O of the measured window; null where the database
/// does not say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PerTxnIo {
    pub read_bytes: Option<f64>,
    pub write_bytes: Option<f64>,
    pub read_syscalls: Option<f64>,
    pub write_syscalls: Option<f64>,
    pub fsyncs: Option<f64>,
    pub wal_bytes: Option<f64>,
}

/// The I/O a database workload costs: totals and per transaction.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IoProfile {
    pub transactions: u64,
    pub per_txn: PerTxnIo,
    pub buffer_cache_hit_ratio: Option<f64>,
    /// Mean time of one WAL sync (fdatasync or the like) as the server timed
    /// it, µs: PostgreSQL's pg_stat_wal wal_sync_time / wal_sync, counted
    /// only with track_wal_io_timing on (managed clusters have it on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wal_sync_us: Option<f64>,
    pub server_processes: Option<ProcIo>,
    /// The database's own counters over the window (pg_stat_*, SQLite VFS).
    pub totals: BTreeMap<String, f64>,
    pub notes: Vec<String>,
}

/// One pool's load in a simulated database run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PoolUse {
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_bytes_s: f64,
    pub write_bytes_s: f64,
    /// Busiest cap's share in use, 0..1.
    pub utilization: f64,
}

/// A consistency condition's outcome (TPC-C clause 3.3.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Consistency {
    pub violations: u64,
    pub ok: bool,
}

/// What a database result adds: one virtual-user count on one config, the
/// mean of its repeats (measured) or one simulated run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct DbJob {
    pub vus: u32,
    #[serde(default = "one")]
    pub repeats: u32,
    /// New-Orders per minute (TPC-C).
    pub nopm: Option<f64>,
    /// Transactions per minute as the database counts them (engine TPM).
    pub tpm: Option<f64>,
    /// A workload file's own headline (`[metric]`: TPC-E-like's tpsE), in
    /// its own unit, and its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline_stdev: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline_name: Option<String>,
    pub txn: BTreeMap<String, TxnStats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpm_client: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpu_us_per_txn: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_profile: Option<IoProfile>,
    /// Spread of the repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nopm_stdev: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nopm_min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nopm_max: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpm_stdev: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpm_client_stdev: Option<f64>,
    /// Insert storm and workload files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_per_min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_per_min_stdev: Option<f64>,
    /// A simulated insert storm with `rows_per_user`: the rows the users
    /// insert in all, and when they are all in, s from the start of the
    /// run, at each phase's rate in turn (the last held past the window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_target: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_s: Option<f64>,
    /// A simulation with `cold_cache`: when the database cache was full, s
    /// from the start of the run (absent while it still filled at the end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_full_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commits: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_commit_s: Option<f64>,
    /// HammerDB's line: `System achieved X NOPM from Y PostgreSQL TPM`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hammerdb: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistency: Option<BTreeMap<String, Consistency>>,
    /// Simulated runs: the host's CPU in use, 0..1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_utilization: Option<f64>,
    /// Simulated runs: per role (data, log, tempdb, all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pools: Option<BTreeMap<String, PoolUse>>,
    /// Simulated runs: where a transaction's time went, µs per transaction
    /// — `cpu` (on a vCPU), `cpu_queue` (waiting for one), `row_locks`
    /// (waiting for another user's hot row), `data_reads`, `commit` (its
    /// log flush), `outside` (the client's round trip), `think`. Times the
    /// transactions per second, each is the users in that state, as a
    /// sampling of pg_stat_activity counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_us: Option<BTreeMap<String, f64>>,
    /// Simulated runs: the mean time of one WAL flush, from its write to
    /// its commits' return, µs (beside PostgreSQL's `pg_stat_wal`
    /// wal_sync_time / wal_sync). Absent where nothing commits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_flush_us: Option<f64>,
    /// Simulated runs: the commits each WAL flush served (group commit;
    /// beside commits / `pg_stat_wal` wal_sync). Absent where nothing commits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commits_per_flush: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monthly_cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usd_per_1000_tpm: Option<f64>,
    /// A burstable host's CPU credits at this step: unlimited mode's
    /// surplus, in `monthly_cost_usd` (USD a month of this load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surplus_credits_usd_month: Option<f64>,
    /// The same in words, with the arithmetic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_credits: Option<String>,
}

fn one() -> u32 {
    1
}

/// Transactions and rows per second of a timed run, from the first login.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PerSecond {
    pub txns: Vec<u64>,
    pub rows: Vec<u64>,
}

/// One timed run of a database workload (rampup, then the measured window).
/// Fields a run lacks read as their defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct DbRun {
    pub workload: String,
    /// `postgresql` or `sqlite`.
    pub db: String,
    /// Where it ran, credentials left out.
    pub target: String,
    pub vus: u32,
    #[serde(default = "one")]
    pub repeat: u32,
    pub rampup_s: f64,
    pub duration_s: f64,
    pub interrupted: bool,
    pub transactions: u64,
    pub tpm: f64,
    /// `engine` (the database's own count) or `client`.
    pub tpm_source: String,
    pub tpm_engine: Option<f64>,
    pub tpm_client: f64,
    pub engine_to_client_ratio: Option<f64>,
    /// Transactions that finished after the window closed.
    pub tail_txns: u64,
    pub errors: u64,
    /// The first distinct error messages, with how often each came.
    pub error_messages: BTreeMap<String, u64>,
    pub txn: BTreeMap<String, TxnStats>,
    pub client_cpu_s: f64,
    pub client_cpu_user_s: f64,
    pub client_cpu_sys_s: f64,
    pub client_cpu_us_per_txn: f64,
    pub io_profile: IoProfile,
    pub per_second: PerSecond,
    /// Why the connection was lost, when it was.
    pub lost_connection: Option<String>,
    /// Set when the server went away during the run — the monitor's own
    /// connection failed after the users had lost theirs — with what the
    /// monitor saw. The run then ends there and holds the client's side
    /// (NOPM and TPM from the client's counts; no engine counters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_lost: Option<String>,
    pub started_unix_s: f64,
    pub last_commit_s: f64,
    /// When each virtual user (in order) had run its last transaction, in
    /// seconds from the start of the window: the insert storm's users, each
    /// done with its rows. `null` for a user stopped before it was done.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vu_finish_s: Vec<Option<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nopm: Option<f64>,
    /// A workload file's headline (`[metric]`), e.g. tpsE: its counted
    /// transaction's commits over the window, a second or a minute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hammerdb: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warehouses: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_warehouses: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_and_think: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_per_min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistency: Option<BTreeMap<String, Consistency>>,
    /// PostgreSQL: the server's side of the window (what a workload profile needs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerStats>,
}

/// The server's side of a PostgreSQL window: its version and settings, the
/// CPU of its processes, and pg_stat_statements' counters per transaction
/// type (where the extension is installed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerStats {
    /// `PostgreSQL 15.8`.
    pub version: String,
    /// The settings that shape a profile, as `current_setting` shows them.
    pub settings: BTreeMap<String, String>,
    /// User CPU seconds of the postmaster and its children over the window
    /// (/proc/PID/stat; null when the server is not on this machine).
    pub cpu_user_s: Option<f64>,
    /// System CPU seconds, likewise.
    pub cpu_sys_s: Option<f64>,
    /// `pg_stat_statements`, or null when it is not installed.
    pub statements_source: Option<String>,
    /// Top-level statements that belong to one transaction type, by type.
    pub per_type: BTreeMap<String, StatementTotals>,
    /// BEGIN, COMMIT and ROLLBACK: shared by every type.
    pub other: StatementTotals,
    /// Each table of the schema with its indexes and TOAST
    /// (pg_total_relation_size) at the end of the window.
    pub relation_bytes: BTreeMap<String, u64>,
    /// The server's data directory, when the server runs on this machine
    /// and shows it (PostgreSQL's data_directory needs a superuser or
    /// pg_read_all_settings; MySQL's @@datadir anyone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<String>,
}

/// pg_stat_statements' counters summed over statements, over a window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StatementTotals {
    pub calls: f64,
    /// total_exec_time, ms.
    pub exec_ms: f64,
    /// shared_blks_hit.
    pub blks_hit: f64,
    /// shared_blks_read.
    pub blks_read: f64,
    /// shared_blks_dirtied.
    pub blks_dirtied: f64,
    /// shared_blks_written.
    pub blks_written: f64,
    pub wal_bytes: f64,
    pub wal_records: f64,
}

/// The load before a sweep.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Load {
    /// False when the data was already there and reused.
    pub loaded: bool,
    pub load_s: f64,
}

/// One step of a sweep: a virtual-user count and the spread of its repeats.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SweepStep {
    pub vus: u32,
    pub repeats: u32,
    /// The headline: nopm, headline (a workload file's `[metric]`), tpm,
    /// tpm_client or rows_per_min.
    pub metric: String,
    /// Per figure (nopm, headline, tpm, tpm_client, rows_per_min, client_cpu_us_per_txn):
    /// the mean under its own name and, with repeats, `_stdev`, `_min`, `_max`.
    #[serde(flatten)]
    pub figures: BTreeMap<String, f64>,
}

/// The top of a `bench db` record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DbSweep {
    pub load: Load,
    pub steps: Vec<SweepStep>,
    pub runs: Vec<DbRun>,
}

/// The figures a sweep step averages over its repeats.
const STEP_FIGURES: [&str; 6] = ["nopm", "headline", "tpm", "tpm_client", "rows_per_min", "client_cpu_us_per_txn"];

fn figure(r: &DbRun, key: &str) -> Option<f64> {
    match key {
        "nopm" => r.nopm,
        "headline" => r.headline,
        "tpm" => Some(r.tpm),
        "tpm_client" => Some(r.tpm_client),
        "rows_per_min" => r.rows_per_min,
        "client_cpu_us_per_txn" => Some(r.client_cpu_us_per_txn),
        _ => None,
    }
}

/// One sweep step: the mean of each figure over the repeats, and with more
/// than one repeat the sample standard deviation, the least and the most.
pub fn summarise_step(vus: u32, runs: &[&DbRun], metric: &str) -> SweepStep {
    let mut figures = BTreeMap::new();
    for key in STEP_FIGURES {
        let vals: Vec<f64> = runs.iter().filter_map(|r| figure(r, key)).collect();
        if vals.is_empty() {
            continue;
        }
        let n = vals.len() as f64;
        let mean = vals.iter().sum::<f64>() / n;
        figures.insert(key.to_string(), crate::round(mean, 1));
        if vals.len() > 1 {
            let var = vals.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
            figures.insert(format!("{key}_stdev"), crate::round(var.sqrt(), 1));
            figures.insert(format!("{key}_min"), vals.iter().copied().fold(f64::INFINITY, f64::min));
            figures.insert(format!("{key}_max"), vals.iter().copied().fold(f64::NEG_INFINITY, f64::max));
        }
    }
    SweepStep { vus, repeats: runs.len() as u32, metric: metric.to_string(), figures }
}

/// A step's value of `metric`, and the noise its repeats measured (twice
/// their standard deviation), where it ran more than once.
fn value_and_noise(s: &SweepStep, metric: &str) -> (f64, Option<f64>) {
    let v = s.figures.get(metric).copied().unwrap_or(0.0);
    let sd = s.figures.get(&format!("{metric}_stdev")).copied().filter(|&sd| sd > 0.0 && s.repeats > 1);
    (v, sd.map(|sd| 2.0 * sd))
}

/// Share of the sweep's highest figure that the tipping point reaches
/// (DESIGN.md, "tipping point"): the knee, not the last few percent.
pub const KNEE_SHARE: f64 = 0.95;

/// The index of the knee of `values`: the first that reaches the highest
/// less `noise` (`None`: 5 % of the highest). None for no values.
pub fn knee_index(values: &[f64], noise: Option<f64>) -> Option<usize> {
    let best = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !best.is_finite() {
        return None;
    }
    let floor = best - noise.unwrap_or((1.0 - KNEE_SHARE) * best);
    values.iter().position(|&v| v >= floor)
}

/// The tipping point: the smallest virtual-user count whose `metric`
/// reaches 95 % of the sweep's highest — or the highest less its measured
/// noise, where the highest step's repeats give one. A simulated step runs
/// once and carries no noise of its own, so the 95 % rule decides there.
/// Not reached while the knee is the last step. None for fewer than two
/// steps.
pub fn tipping_point(config: &str, steps: &[SweepStep], metric: &str) -> Option<crate::TippingPoint> {
    tipping_point_named(config, steps, metric, &metric.to_uppercase().replace('_', " "))
}

/// The same, the metric called `label` in the note (a workload file's
/// headline by its own name: tpsE).
pub fn tipping_point_named(config: &str, steps: &[SweepStep], metric: &str, label: &str) -> Option<crate::TippingPoint> {
    if steps.len() < 2 {
        return None;
    }
    let values: Vec<f64> = steps.iter().map(|s| value_and_noise(s, metric).0).collect();
    let top = values.iter().enumerate().fold(0, |b, (i, &v)| if v > values[b] { i } else { b });
    let noise = value_and_noise(&steps[top], metric).1;
    let i = knee_index(&values, noise)?;
    let s = &steps[i];
    let last = i == steps.len() - 1;
    let m = label;
    let rule = match noise {
        Some(n) => format!("the highest less its repeats' noise ({n:.0})"),
        None => "95 % of the highest".to_string(),
    };
    let note = if last {
        "still rising at the last step: try more virtual users".to_string()
    } else {
        let digits = if values[top].abs() < 100.0 { 1 } else { 0 };
        format!("the fewest virtual users reaching {rule}, {:.*} {m} at {} virtual users", digits, values[top], steps[top].vus)
    };
    Some(crate::TippingPoint {
        config: config.to_string(),
        vus: s.vus,
        metric: metric.to_string(),
        value: values[i],
        reached: !last,
        note,
        highest_vus: Some(steps[top].vus),
        highest_value: Some(values[top]),
    })
}

/// The √2 steps of an automatic sweep: round(√2^k) without repeats.
pub fn auto_steps(max: u32) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    for k in 0..64 {
        let v = 2f64.powf(f64::from(k) / 2.0).round() as u32;
        if v > max {
            break;
        }
        if out.last() != Some(&v) {
            out.push(v);
        }
    }
    out
}

/// A virtual-user sweep as the simulator and `bench db` both run it: the
/// counts it plans, and when it is done — a listed sweep after its last
/// count, an automatic one (√2 steps up to `max_vus`) once its tipping
/// point is two steps behind ([`auto_sweep_done`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    steps: Vec<u32>,
    auto: bool,
    values: Vec<f64>,
}

impl Sweep {
    /// √2 steps from 1 up to `max_vus`, stopping past the tipping point.
    pub fn auto(max_vus: u32) -> Sweep {
        Sweep { steps: auto_steps(max_vus), auto: true, values: Vec::new() }
    }

    /// The counts given, each run.
    pub fn listed(steps: Vec<u32>) -> Sweep {
        Sweep { steps, auto: false, values: Vec::new() }
    }

    /// The counts planned, in order.
    pub fn steps(&self) -> &[u32] {
        &self.steps
    }

    pub fn is_auto(&self) -> bool {
        self.auto
    }

    /// The next step's headline figure (its metric, the mean of its
    /// repeats); true when the sweep goes no further.
    pub fn record(&mut self, value: f64) -> bool {
        self.values.push(value);
        self.done()
    }

    /// Every planned step ran, or an automatic sweep passed its tipping point.
    pub fn done(&self) -> bool {
        self.values.len() >= self.steps.len() || self.passed_tipping_point()
    }

    /// An automatic sweep stopped by its tipping point (not by running out of steps).
    pub fn passed_tipping_point(&self) -> bool {
        self.auto && auto_sweep_done(&self.values)
    }
}

/// An automatic sweep (√2 steps) stops two steps past its knee (the first
/// value reaching 95 % of the highest so far).
pub fn auto_sweep_done(values: &[f64]) -> bool {
    knee_index(values, None).is_some_and(|k| k + 2 < values.len())
}

/// Seconds since 1970 as an ISO-8601 UTC time, whole seconds
/// (civil-from-days, H. Hinnant's algorithm).
pub fn utc_text(unix_s: f64) -> String {
    let secs = unix_s.floor() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Period of the measured throughput series.
pub const SERIES_PERIOD_S: usize = 10;

/// A run's throughput over time, CloudWatch-shaped: transactions (and for
/// the insert storm, rows) per 10-second period from the first login,
/// rampup included, stamped with UTC times.
fn run_series(run: &DbRun, config: &str) -> Vec<crate::Series> {
    let mut out = Vec::new();
    for (per_s, metric) in [(&run.per_second.txns, "Transactions"), (&run.per_second.rows, "RowsInserted")] {
        if metric == "RowsInserted" && run.workload != "insert" {
            continue;
        }
        let values: Vec<f64> = per_s.chunks(SERIES_PERIOD_S).map(|c| c.iter().sum::<u64>() as f64).collect();
        let timestamps = (0..values.len()).map(|i| crate::Stamp::Utc(utc_text(run.started_unix_s + (i * SERIES_PERIOD_S) as f64))).collect();
        out.push(crate::Series {
            config: config.to_string(),
            resource: format!("db {} VUs run {}", run.vus, run.repeat),
            metric: metric.to_string(),
            unit: "Count".into(),
            period_s: SERIES_PERIOD_S as f64,
            timestamps,
            values,
        });
    }
    out
}

/// The `bench db` record of a sweep: one result per virtual-user count (in
/// the order first run), each the mean of its repeats with their spread,
/// the tipping point, the series and every run.
pub fn sweep_record(config: &str, workload: &str, metric: &str, load: Load, runs: Vec<DbRun>, seed: u64) -> crate::RunRecord {
    let mut order: Vec<u32> = Vec::new();
    for r in &runs {
        if !order.contains(&r.vus) {
            order.push(r.vus);
        }
    }
    let mut rec = crate::RunRecord::new(crate::Engine::Measure, workload, seed);
    let mut steps = Vec::new();
    for &vus in &order {
        let group: Vec<&DbRun> = runs.iter().filter(|r| r.vus == vus).collect();
        let step = summarise_step(vus, &group, metric);
        let last = group[group.len() - 1];
        let f = |k: &str| step.figures.get(k).copied();
        rec.results.push(crate::JobResult {
            config: config.to_string(),
            job: last.workload.clone(),
            pool: String::new(),
            binding: format!("measured: {}", last.db),
            io: None,
            extra: Some(crate::JobExtra::Db(DbJob {
                vus,
                repeats: step.repeats,
                nopm: f("nopm"),
                tpm: f("tpm"),
                headline: f("headline"),
                headline_stdev: f("headline_stdev"),
                headline_name: last.headline_name.clone(),
                txn: last.txn.clone(),
                tpm_client: f("tpm_client"),
                client_cpu_us_per_txn: f("client_cpu_us_per_txn"),
                io_profile: Some(last.io_profile.clone()),
                nopm_stdev: f("nopm_stdev"),
                nopm_min: f("nopm_min"),
                nopm_max: f("nopm_max"),
                tpm_stdev: f("tpm_stdev"),
                tpm_client_stdev: f("tpm_client_stdev"),
                rows: last.rows,
                rows_per_min: f("rows_per_min"),
                rows_per_min_stdev: f("rows_per_min_stdev"),
                commits: (last.workload == "insert").then(|| last.txn.get("insert").map_or(0, |t| t.commits)),
                last_commit_s: (last.workload == "insert").then_some(last.last_commit_s),
                hammerdb: last.hammerdb.clone(),
                consistency: last.consistency.clone(),
                ..DbJob::default()
            })),
            phases: Vec::new(),
        });
        steps.push(step);
    }
    let label = runs.iter().find_map(|r| r.headline_name.clone()).filter(|_| metric == "headline").unwrap_or_else(|| metric.to_uppercase().replace('_', " "));
    rec.tipping_point.extend(tipping_point_named(config, &steps, metric, &label));
    rec.series = runs.iter().flat_map(|r| run_series(r, config)).collect();
    rec.interrupted = runs.iter().any(|r| r.interrupted);
    rec.extra = Some(crate::RecordExtra::Db(DbSweep { load, steps, runs }));
    rec
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_sweep_stops_two_steps_past_its_knee_or_after_its_last_count() {
        // 100, 200, 400, 410, 405: the highest is 410, 95 % of it 389.5,
        // first reached at the third step; two steps later it is done.
        let mut auto = Sweep::auto(64);
        assert_eq!(auto.steps(), [1, 2, 3, 4, 6, 8, 11, 16, 23, 32, 45, 64]);
        let done: Vec<bool> = [100.0, 200.0, 400.0, 410.0, 405.0].iter().map(|&v| auto.record(v)).collect();
        assert_eq!(done, [false, false, false, false, true]);
        assert!(auto.passed_tipping_point());
        // Still rising at its last count: done, but not past a tipping point.
        let mut short = Sweep::auto(2);
        assert_eq!((short.record(10.0), short.record(20.0)), (false, true));
        assert!(!short.passed_tipping_point());
        let mut listed = Sweep::listed(vec![8, 16]);
        assert_eq!((listed.record(5.0), listed.record(5.0)), (false, true));
    }

    use super::*;

    fn step(vus: u32, v: f64, repeats: u32, sd: f64) -> SweepStep {
        let mut figures = BTreeMap::from([("nopm".to_string(), v)]);
        if repeats > 1 {
            figures.insert("nopm_stdev".into(), sd);
        }
        SweepStep { vus, repeats, metric: "nopm".into(), figures }
    }

    #[test]
    fn tipping_point_is_the_fewest_users_reaching_95_percent_of_the_highest() {
        // 1000 → 1900 → 2000 → 1950, one run each: 95 % of 2000 is 1900,
        // which 2 VUs reach.
        let s = [step(1, 1000.0, 1, 0.0), step(2, 1900.0, 1, 0.0), step(4, 2000.0, 1, 0.0), step(8, 1950.0, 1, 0.0)];
        let t = tipping_point("c", &s, "nopm").unwrap();
        assert_eq!((t.vus, t.reached, t.value), (2, true, 1900.0));
        assert_eq!((t.highest_vus, t.highest_value), (Some(4), Some(2000.0)));
        // The io2 Block Express sweep: NOPM still rises 50 % from 32
        // to 64 users, where the host's EBS cap binds: 64 is the knee
        // (0.95 × 30,000 = 28,500; 32 users' 20,000 fall short).
        let s = [step(16, 12000.0, 1, 0.0), step(32, 20000.0, 1, 0.0), step(64, 30000.0, 1, 0.0), step(128, 29500.0, 1, 0.0), step(256, 29000.0, 1, 0.0)];
        assert_eq!(tipping_point("c", &s, "nopm").unwrap().vus, 64);
        // Still rising by more than 5 % at the last step: not reached.
        let s = [step(1, 1000.0, 1, 0.0), step(2, 1200.0, 1, 0.0)];
        let t = tipping_point("c", &s, "nopm").unwrap();
        assert_eq!((t.vus, t.reached), (2, false));
        // Measured repeats give their own noise: the highest (1300, sd 100)
        // less 2 × 100 = 1100, which 1 VU's 1150 reaches.
        let s = [step(1, 1150.0, 3, 20.0), step(2, 1300.0, 3, 100.0)];
        assert_eq!(tipping_point("c", &s, "nopm").unwrap().vus, 1);
        // A stdev on a step that ran once is not a measured noise: 95 %.
        let mut one = step(2, 1300.0, 1, 0.0);
        one.figures.insert("nopm_stdev".into(), 100.0);
        assert_eq!(tipping_point("c", &[step(1, 1150.0, 1, 0.0), one], "nopm").unwrap().vus, 2);
    }

    #[test]
    fn sample_stdev_of_the_repeats() {
        let runs: Vec<DbRun> = [10.0, 20.0, 30.0].iter().map(|&n| DbRun { nopm: Some(n), vus: 4, ..DbRun::default() }).collect();
        let refs: Vec<&DbRun> = runs.iter().collect();
        let s = summarise_step(4, &refs, "nopm");
        // mean 20, sample variance (100 + 0 + 100) / 2 = 100.
        assert_eq!(s.figures["nopm"], 20.0);
        assert_eq!(s.figures["nopm_stdev"], 10.0);
        assert_eq!((s.figures["nopm_min"], s.figures["nopm_max"]), (10.0, 30.0));
    }

    #[test]
    fn auto_sweep_stops_two_steps_past_the_knee() {
        assert!(!auto_sweep_done(&[100.0, 200.0, 300.0]));
        // Knee at 200 (≥ 0.95 × 205): one step past it.
        assert!(!auto_sweep_done(&[100.0, 200.0, 205.0]));
        assert!(auto_sweep_done(&[100.0, 200.0, 205.0, 190.0]));
        assert!(!auto_sweep_done(&[100.0, 200.0, 205.0, 300.0]));
        // Rising 6 % a step keeps the knee at the last step: go on.
        assert!(!auto_sweep_done(&[100.0, 106.0, 112.36, 119.1]));
        // A knee two steps back even though the last step is the highest
        // (within 5 %): stop.
        assert!(auto_sweep_done(&[100.0, 196.0, 199.0, 200.0]));
    }

    #[test]
    fn utc_text_of_known_instants() {
        assert_eq!(utc_text(0.0), "1970-01-01T00:00:00Z");
        // 2000-02-29 12:34:56 UTC = 951827696 (a leap day).
        assert_eq!(utc_text(951_827_696.4), "2000-02-29T12:34:56Z");
    }
}
