//! What `bench disk` adds: every run of every job (CrystalDiskMark's
//! repeats, fio's single run), the test file, and per-result CPU figures.

use crate::LatencySummary;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The top of a `bench disk` record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DiskRun {
    pub runs: Vec<DiskJobRuns>,
    pub file_bytes: u64,
    /// O_DIRECT was used (false when the file system refused it).
    pub direct: bool,
}

/// One direction (read or write) of one run, fio's per-direction block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DirSummary {
    pub ios: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bw_bytes_s: f64,
    pub lat_mean_us: f64,
    pub lat_min_us: f64,
    pub lat_max_us: f64,
    /// (percent, µs) pairs at fio's percentiles.
    pub percentiles_us: Vec<(f64, f64)>,
}

/// One timed run of one job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunSummary {
    pub iops: f64,
    pub bw_bytes_s: f64,
    #[serde(flatten)]
    pub latency: LatencySummary,
    pub read: DirSummary,
    pub write: DirSummary,
    pub elapsed_s: f64,
    /// When the measured window began, in seconds from the start of the
    /// `bench disk` run: jobs fio runs at once (no `stonewall` between
    /// them) have overlapping windows.
    #[serde(default)]
    pub start_s: f64,
    pub usr_cpu_s: f64,
    pub sys_cpu_s: f64,
    /// CPU µs per I/O, every thread of the process counted.
    pub cpu_us_per_io: f64,
}

/// Every run of one job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DiskJobRuns {
    pub job: String,
    pub rw: String,
    pub bs_bytes: u64,
    pub iodepth: u32,
    pub numjobs: u32,
    /// The I/O engine: io_uring, psync or null.
    pub engine: String,
    pub direct: bool,
    pub runs: Vec<RunSummary>,
    /// The run CrystalDiskMark would report: the highest throughput.
    pub best: usize,
    pub mean_iops: f64,
    pub mean_bw_bytes_s: f64,
    /// Jobs this entry reports: more than one under fio's `group_reporting`
    /// (then `numjobs` counts the threads of them all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<u32>,
}

/// What a measured I/O result adds to the common columns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DiskJob {
    /// Measured runs behind the result (the best is shown).
    pub runs: u32,
    pub mean_iops: f64,
    pub mean_bw_bytes_s: f64,
    pub usr_cpu_s: f64,
    pub sys_cpu_s: f64,
    pub cpu_us_per_io: f64,
    /// The I/O engine: io_uring, psync or null.
    pub engine: String,
}
