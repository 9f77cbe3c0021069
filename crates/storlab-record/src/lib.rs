//! storlab-record: the run record — one typed shape for every engine.
//!
//! `storlab simulate`, `storlab bench disk`, `storlab bench db` and the
//! emulator all return a [`RunRecord`]; the Python front end adds only
//! `tool`, `host_info` and `inputs`, in one place. A simulated and a
//! measured run of the same job therefore line up column by column, and a
//! report or a comparison reads one shape whatever made it.
//!
//! The common columns live in [`JobResult`] and [`IoColumns`]; what only one
//! engine knows rides along as a flattened extra ([`SimJob`], [`DiskJob`],
//! [`DbJob`]). The JSON schema in docs/record.schema.json is generated from
//! these types ([`json_schema`]) and a test keeps the two equal, so the
//! documented contract cannot drift from the code.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub mod units;
pub mod alarms;
pub mod db;
pub mod disk;
pub mod import;
pub mod volume;

pub use db::{DbJob, DbRun, DbSweep, IoProfile, PoolUse, TxnStats};
pub use disk::{DirSummary, DiskJob, DiskJobRuns, DiskRun, RunSummary};

/// Raised only by a change that removes or renames a field.
pub const SCHEMA_VERSION: u32 = 1;

/// Free-form JSON objects: the machine a measurement ran on and the
/// resolved inputs, whose keys depend on the command.
pub type Object = serde_json::Map<String, serde_json::Value>;

/// Which engine produced the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// The discrete-event simulator on a modelled deployment.
    Simulate,
    /// Real I/O or a real database on this machine.
    Measure,
    /// Real I/O or a real database on an emulated (FUSE) volume.
    Emulate,
}

/// The latency columns every I/O result carries, simulated or measured, in µs.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct LatencySummary {
    pub lat_mean_us: f64,
    pub lat_p50_us: f64,
    pub lat_p90_us: f64,
    pub lat_p99_us: f64,
    pub lat_p999_us: f64,
    pub lat_p9999_us: f64,
    pub lat_max_us: f64,
}

impl LatencySummary {
    /// Every figure rounded to `digits` decimals (for stable records).
    pub fn rounded(self, digits: i32) -> LatencySummary {
        let r = |v: f64| round(v, digits);
        LatencySummary {
            lat_mean_us: r(self.lat_mean_us),
            lat_p50_us: r(self.lat_p50_us),
            lat_p90_us: r(self.lat_p90_us),
            lat_p99_us: r(self.lat_p99_us),
            lat_p999_us: r(self.lat_p999_us),
            lat_p9999_us: r(self.lat_p9999_us),
            lat_max_us: r(self.lat_max_us),
        }
    }
}

/// `v` rounded to `digits` decimals.
pub fn round(v: f64, digits: i32) -> f64 {
    let m = 10f64.powi(digits);
    (v * m).round() / m
}

/// The program that wrote the record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Tool {
    pub name: String,
    pub version: String,
    pub git_sha: String,
}

/// The result of one or more jobs on one or more deployments by one engine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunRecord {
    pub schema_version: u32,
    /// Added by the front end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<Tool>,
    pub engine: Engine,
    /// The scenario file, where the run had one.
    pub scenario: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub seed: u64,
    /// What ran: a preset name, a job file, a database workload.
    pub workload: String,
    pub results: Vec<JobResult>,
    /// CloudWatch-style series, per config and resource.
    pub series: Vec<Series>,
    /// Figures behind these results that no vendor source confirms.
    #[serde(default)]
    pub unverified: Vec<String>,
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Stopped early (Ctrl-C, SIGTERM, SIGHUP): the results hold what ran.
    pub interrupted: bool,
    /// Virtual-user sweeps: per config, where throughput stops rising.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tipping_point: Vec<TippingPoint>,
    /// Alarm state changes, in time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alarms: Vec<AlarmChange>,
    /// Added by the front end: the machine a measurement ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_info: Option<Object>,
    /// Added by the front end: the resolved inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Object>,
    #[serde(flatten)]
    pub extra: Option<RecordExtra>,
}

impl RunRecord {
    /// An empty record of `engine` for `workload`.
    pub fn new(engine: Engine, workload: impl Into<String>, seed: u64) -> RunRecord {
        RunRecord {
            schema_version: SCHEMA_VERSION,
            tool: None,
            engine,
            scenario: None,
            title: None,
            seed,
            workload: workload.into(),
            results: Vec::new(),
            series: Vec::new(),
            unverified: Vec::new(),
            warnings: Vec::new(),
            interrupted: false,
            tipping_point: Vec::new(),
            alarms: Vec::new(),
            host_info: None,
            inputs: None,
            extra: None,
        }
    }
}

/// What one engine adds at the top of its record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RecordExtra {
    /// `bench db`: the load, the sweep's steps and every timed run.
    Db(DbSweep),
    /// `bench disk`: every run of every job, and the test file.
    Disk(DiskRun),
    /// `simulate`: how much simulated time and how many I/Os it took.
    Sim(SimRun),
    /// `emulate`: the emulated volume's session.
    Emulate(EmulateRun),
}

/// An emulated volume's session, from mount to unmount.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EmulateRun {
    /// The scenario's config whose pools were emulated.
    pub config: String,
    pub elapsed_s: f64,
    /// The round trip taken off each modelled completion (µs): given, or
    /// the calibrated value at the end.
    pub floor_us: f64,
    /// Whether `floor_us` was calibrated from probe reads.
    pub floor_calibrated: bool,
    /// What fsyncs gave back of the round trips their files' buffered
    /// writes took (`--ram`, volume idle), in seconds, and how many fsyncs.
    pub fsync_given_back_s: f64,
    pub fsyncs_given_back: u64,
    /// Operations refused because a backing folder was full (ENOSPC,
    /// EDQUOT), over every pool.
    pub refused_full: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SimRun {
    /// The series' period.
    pub period_s: f64,
    pub simulated_s: f64,
    pub simulated_ios: u64,
}

/// One row of results: one job (or one virtual-user count) on one config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct JobResult {
    pub config: String,
    /// CrystalDiskMark-style for I/O jobs (`RND4K-Q32T1-read`); the workload for databases.
    pub job: String,
    /// The pool the job ran on (`all`, `data`, `log`, ...); `path` for a measured folder.
    #[serde(default)]
    pub pool: String,
    /// What bound the result, in words.
    pub binding: String,
    /// I/O jobs: rates and latencies.
    #[serde(flatten)]
    pub io: Option<IoColumns>,
    #[serde(flatten)]
    pub extra: Option<JobExtra>,
    /// Simulated runs: the result before and after each moment a bucket
    /// emptied inside its window (absent where none did).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<Phase>,
}

/// One stretch of a result's window, between the moments a bucket emptied:
/// the first runs at the burst, the next from the time a limit fell to its
/// baseline. Rates are over the stretch alone.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Phase {
    /// Seconds since the run began (the clock of `start_s` and the series).
    pub from_s: f64,
    pub to_s: f64,
    /// The limits whose buckets had emptied at `from_s`, at their baseline
    /// from then on ("device aws/ebs/gp2 (100 GiB): baseline 300 IOPS");
    /// empty for the first stretch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub emptied: Vec<String>,
    /// I/O jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bw_bytes_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_iops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_iops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_mean_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_p99_us: Option<f64>,
    /// Database runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nopm: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpm: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_per_min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub txn: Option<std::collections::BTreeMap<String, TxnStats>>,
    /// Database runs: each pool's I/O over the stretch, per role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pools: Option<std::collections::BTreeMap<String, PhaseIo>>,
}

/// One pool's I/O rates over a stretch of a database run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct PhaseIo {
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_bytes_s: f64,
    pub write_bytes_s: f64,
}

/// The columns every I/O result has, whichever engine made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IoColumns {
    pub iops: f64,
    pub bw_bytes_s: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    #[serde(flatten)]
    pub latency: LatencySummary,
    /// I/Os kept in flight (iodepth × numjobs); 0 for an open loop.
    pub outstanding: u64,
    /// The measured window.
    pub runtime_s: f64,
}

/// What one engine adds to each result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum JobExtra {
    Db(DbJob),
    Disk(DiskJob),
    Sim(SimJob),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SimJob {
    pub read_lat_mean_us: f64,
    pub write_lat_mean_us: f64,
    /// Each direction's p99, µs (0 where the job has none of it).
    #[serde(default)]
    pub read_lat_p99_us: f64,
    #[serde(default)]
    pub write_lat_p99_us: f64,
    /// I/Os completed in the window.
    pub ios: u64,
    pub start_s: f64,
    /// Share of reads the host cache serves (cache size over working set).
    pub cache_hit_ratio: f64,
    /// Open loop: the arrival rate asked for.
    pub arrival_iops: Option<f64>,
    /// Open loop: arrivals turned away because the queue was full.
    pub dropped: u64,
    /// Jobs this result reports: more than one under fio's `group_reporting`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<u32>,
}

/// Where a virtual-user sweep stops gaining.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TippingPoint {
    pub config: String,
    pub vus: u32,
    /// `nopm`, `tpm`, `tpm_client` or `rows_per_min`.
    pub metric: String,
    pub value: f64,
    /// False when throughput still rose at the last step.
    pub reached: bool,
    pub note: String,
    /// The sweep's highest step, for $ per 1,000 TPM there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub highest_vus: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub highest_value: Option<f64>,
}

/// One alarm changing state (CloudWatch's OK / ALARM / INSUFFICIENT_DATA).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AlarmChange {
    pub alarm: String,
    pub config: String,
    /// Seconds since the run began.
    pub time_s: f64,
    pub from: String,
    pub to: String,
    pub reason: String,
}

/// A CloudWatch-style series of one metric of one resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Series {
    pub config: String,
    pub resource: String,
    pub metric: String,
    pub unit: String,
    pub period_s: f64,
    /// Period starts: seconds since the run began, or UTC times for measured series.
    pub timestamps: Vec<Stamp>,
    pub values: Vec<f64>,
}

/// A period start: seconds since the run began, or an ISO-8601 UTC time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Stamp {
    Seconds(f64),
    Utc(String),
}

/// The JSON schema of a run record, as documented in docs/record.schema.json.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(RunRecord);
    serde_json::to_string_pretty(&schema).expect("the schema serialises") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io() -> IoColumns {
        IoColumns { iops: 3000.0, bw_bytes_s: 12_288_000.0, read_iops: 3000.0, write_iops: 0.0, latency: LatencySummary::default(), outstanding: 32, runtime_s: 5.0 }
    }

    fn result(extra: JobExtra, io: Option<IoColumns>) -> JobResult {
        JobResult { config: "gp3".into(), job: "RND4K-Q32T1-read".into(), pool: "all".into(), binding: "x".into(), io, extra: Some(extra), phases: Vec::new() }
    }

    /// Each engine's record reads back as itself: the untagged extras never
    /// mistake one engine's fields for another's.
    #[test]
    fn every_engine_round_trips() {
        let sim = SimJob { read_lat_mean_us: 1.0, write_lat_mean_us: 0.0, read_lat_p99_us: 2.0, write_lat_p99_us: 0.0, ios: 15_000, start_s: 0.0, cache_hit_ratio: 0.0, arrival_iops: None, dropped: 0, jobs: Some(2) };
        let disk = DiskJob { runs: 5, mean_iops: 2900.0, mean_bw_bytes_s: 1.0, usr_cpu_s: 0.1, sys_cpu_s: 0.2, cpu_us_per_io: 2.0, engine: "io_uring".into() };
        let db = DbJob { vus: 4, nopm: Some(1000.0), tpm: Some(2300.0), ..DbJob::default() };
        let mut records = Vec::new();
        let mut r = RunRecord::new(Engine::Simulate, "cdm-default", 1);
        r.results.push(result(JobExtra::Sim(sim), Some(io())));
        r.extra = Some(RecordExtra::Sim(SimRun { period_s: 60.0, simulated_s: 10.0, simulated_ios: 15_000 }));
        records.push(r);
        let mut r = RunRecord::new(Engine::Measure, "cdm-default", 1);
        r.results.push(result(JobExtra::Disk(disk), Some(io())));
        r.extra = Some(RecordExtra::Disk(DiskRun { runs: vec![], file_bytes: 1 << 30, direct: true }));
        records.push(r);
        let mut r = RunRecord::new(Engine::Measure, "tpcc", 1);
        r.results.push(result(JobExtra::Db(db), None));
        r.extra = Some(RecordExtra::Db(DbSweep { load: db::Load::default(), steps: vec![], runs: vec![DbRun::default()] }));
        records.push(r);
        for r in records {
            let text = serde_json::to_string(&r).unwrap();
            let back: RunRecord = serde_json::from_str(&text).unwrap();
            assert_eq!(back, r, "{text}");
        }
    }

    #[test]
    fn a_record_without_extras_reads_back() {
        let r = RunRecord::new(Engine::Emulate, "w", 7);
        let back: RunRecord = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back.extra, None);
        assert_eq!(back.engine, Engine::Emulate);
    }
}
