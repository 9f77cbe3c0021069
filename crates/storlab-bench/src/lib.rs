//! storlab-bench: real I/O on this machine with the same job definitions
//! the simulator runs (crate storlab-workload), so a measured run and a
//! simulated one line up. Engines: io_uring (default), psync, null.

pub mod engine;
pub mod file;
pub mod run;

use engine::EngineKind;
use storlab_record::{DiskJob, DiskRun, Engine, IoColumns, JobExtra, JobResult, RecordExtra, RunRecord};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use storlab_workload::Job;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    #[error("{path}: {message}")]
    Path { path: String, message: String },
    #[error("engine {engine}: {message}")]
    Engine { engine: &'static str, message: String },
    #[error("job '{job}': {message}")]
    Job { job: String, message: String },
}

#[derive(Debug, Clone)]
pub struct BenchOptions {
    pub size_bytes: u64,
    pub engine: EngineKind,
    /// Measured runs per job (CrystalDiskMark semantics when `cdm`).
    pub runs: u32,
    /// CrystalDiskMark semantics: a discarded warm-up run, `runs` measured
    /// runs of `runtime` each, best-of and mean; else fio's: one run with
    /// the job's own ramp_time and runtime.
    pub cdm: bool,
    /// Overrides each job's measured time.
    pub runtime: Option<Duration>,
    /// Idle time between jobs (CrystalDiskMark's interval).
    pub interval: Duration,
    pub direct: bool,
    pub seed: u64,
    /// Side-by-side benchmarks only: measure this existing file instead of
    /// creating one (bench/disk_vs_fio.py runs fio and storlab on one file).
    pub existing_file: Option<std::path::PathBuf>,
}

impl Default for BenchOptions {
    /// A 1 GiB test file, io_uring, one fio-style run, direct I/O, seed 1.
    fn default() -> Self {
        BenchOptions {
            size_bytes: 1 << 30,
            engine: EngineKind::IoUring,
            runs: 1,
            cdm: false,
            runtime: None,
            interval: Duration::ZERO,
            direct: true,
            seed: 1,
            existing_file: None,
        }
    }
}

/// Percentiles fio reports for completion latency (`clat_ns.percentile`).
pub const FIO_PERCENTILES: [f64; 17] = [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

pub use storlab_record::{DirSummary, DiskJobRuns, RunSummary};

/// What a `bench disk` run measured, before it becomes a run record.
#[derive(Debug, Clone)]
pub struct BenchReport {
    pub jobs: Vec<DiskJobRuns>,
    pub file_bytes: u64,
    pub direct: bool,
    pub interrupted: bool,
    pub warnings: Vec<String>,
}

impl BenchReport {
    /// The run record: one result per job, the best run in the common
    /// columns (CrystalDiskMark's rule), every run under `runs`.
    pub fn into_record(self, workload: &str, seed: u64) -> RunRecord {
        let mut rec = RunRecord::new(Engine::Measure, workload, seed);
        for j in &self.jobs {
            let best = &j.runs[j.best];
            let psync = j.engine == EngineKind::Psync.name();
            rec.results.push(JobResult {
                config: "local".into(),
                job: j.job.clone(),
                pool: "path".into(),
                binding: format!("measured: {}, {} I/O", j.engine, if j.direct { "direct" } else { "buffered" }),
                io: Some(IoColumns {
                    iops: best.iops,
                    bw_bytes_s: best.bw_bytes_s,
                    read_iops: best.read.iops,
                    write_iops: best.write.iops,
                    latency: best.latency,
                    outstanding: u64::from(if psync { 1 } else { j.iodepth }) * u64::from(j.numjobs),
                    runtime_s: best.elapsed_s,
                }),
                extra: Some(JobExtra::Disk(DiskJob {
                    runs: j.runs.len() as u32,
                    mean_iops: j.mean_iops,
                    mean_bw_bytes_s: j.mean_bw_bytes_s,
                    usr_cpu_s: best.usr_cpu_s,
                    sys_cpu_s: best.sys_cpu_s,
                    cpu_us_per_io: best.cpu_us_per_io,
                    engine: j.engine.clone(),
                })),
            });
        }
        rec.warnings = self.warnings;
        rec.interrupted = self.interrupted;
        rec.extra = Some(RecordExtra::Disk(DiskRun { runs: self.jobs, file_bytes: self.file_bytes, direct: self.direct }));
        rec
    }
}

fn dir_summary(d: &run::DirStats, elapsed: f64) -> DirSummary {
    let h = &d.hist;
    DirSummary {
        ios: d.ios,
        bytes: d.bytes,
        iops: if elapsed > 0.0 { d.ios as f64 / elapsed } else { 0.0 },
        bw_bytes_s: if elapsed > 0.0 { d.bytes as f64 / elapsed } else { 0.0 },
        lat_mean_us: h.mean_us(),
        lat_min_us: h.quantile_us(0.0),
        lat_max_us: h.max_ns as f64 / 1e3,
        percentiles_us: FIO_PERCENTILES.iter().map(|p| (*p, h.quantile_us(p / 100.0))).collect(),
    }
}

pub fn summarise(r: &run::RunResult) -> RunSummary {
    let h = r.merged_hist();
    let e = r.elapsed_s;
    let ios = r.ios();
    RunSummary {
        iops: if e > 0.0 { ios as f64 / e } else { 0.0 },
        bw_bytes_s: if e > 0.0 { r.bytes() as f64 / e } else { 0.0 },
        latency: h.summary(),
        read: dir_summary(&r.read, e),
        write: dir_summary(&r.write, e),
        elapsed_s: e,
        usr_cpu_s: r.usr_cpu_s,
        sys_cpu_s: r.sys_cpu_s,
        cpu_us_per_io: if ios > 0 { (r.usr_cpu_s + r.sys_cpu_s) * 1e6 / ios as f64 } else { 0.0 },
    }
}

fn engine_for(job: &Job, default: EngineKind) -> Result<EngineKind, BenchError> {
    match &job.ioengine {
        None => Ok(default),
        Some(name) => EngineKind::parse(name).ok_or_else(|| BenchError::Job {
            job: job.name.clone(),
            message: format!("ioengine '{name}' is not one of storlab's engines — use io_uring, psync or null"),
        }),
    }
}

/// Measures `jobs` on a test file storlab creates in `dir` and removes at
/// the end, on error and when `stop` is set. `progress(done_jobs, total)`
/// is called between runs.
pub fn bench_disk(dir: &Path, jobs: &[Job], o: &BenchOptions, stop: &AtomicBool, progress: &mut dyn FnMut(usize, usize)) -> Result<BenchReport, BenchError> {
    for j in jobs {
        if j.filename.is_some() || j.directory.is_some() {
            return Err(BenchError::Job {
                job: j.name.clone(),
                message: "filename and directory are not honoured: storlab writes only its own test file, inside --path — remove them".into(),
            });
        }
        engine_for(j, o.engine)?;
        if j.bs_bytes % file::ALIGN as u64 != 0 && o.direct {
            return Err(BenchError::Job { job: j.name.clone(), message: format!("bs {} is not a multiple of 4096, which direct I/O needs — use a multiple of 4k", j.bs_bytes) });
        }
    }
    let file = match &o.existing_file {
        Some(p) => file::TestFile::open_existing(p, o.direct)?,
        None => file::TestFile::create(dir, o.size_bytes, o.direct)?,
    };
    let mut warnings = Vec::new();
    if o.direct && !file.direct {
        warnings.push(format!("{}: the file system refused O_DIRECT (tmpfs?) — buffered I/O measures the page cache, not the disk", dir.display()));
    }
    let mut report = BenchReport { jobs: Vec::new(), file_bytes: file.size, direct: file.direct, interrupted: false, warnings };
    let total = jobs.len();
    for (ji, job) in jobs.iter().enumerate() {
        let kind = engine_for(job, o.engine)?;
        let mut j = job.clone();
        if let Some(rt) = o.runtime {
            j.runtime = Some(rt);
            j.time_based = true;
        }
        let mut runs = Vec::new();
        if o.cdm {
            // CrystalDiskMark: a discarded warm-up run, then N measured runs.
            let mut one = j.clone();
            one.ramp_time = Duration::ZERO;
            let _ = run::run_job(kind, &file, &one, o.seed, stop)?;
            for k in 0..o.runs.max(1) {
                if stop.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                let r = run::run_job(kind, &file, &one, o.seed ^ (u64::from(k) + 1), stop)?;
                if !r.interrupted {
                    runs.push(summarise(&r));
                }
            }
        } else {
            for k in 0..j.loops.max(1) {
                let r = run::run_job(kind, &file, &j, o.seed ^ u64::from(k), stop)?;
                if !r.interrupted || r.ios() > 0 {
                    runs.push(summarise(&r));
                }
                if r.interrupted {
                    break;
                }
            }
        }
        let interrupted = stop.load(std::sync::atomic::Ordering::Relaxed);
        if !runs.is_empty() {
            let best = (0..runs.len()).max_by(|&a, &b| runs[a].bw_bytes_s.total_cmp(&runs[b].bw_bytes_s)).unwrap_or(0);
            let n = runs.len() as f64;
            report.jobs.push(DiskJobRuns {
                job: job.name.clone(),
                rw: job.rw.name().to_string(),
                bs_bytes: job.bs_bytes,
                iodepth: job.iodepth,
                numjobs: job.numjobs,
                engine: kind.name().to_string(),
                direct: file.direct,
                mean_iops: runs.iter().map(|r| r.iops).sum::<f64>() / n,
                mean_bw_bytes_s: runs.iter().map(|r| r.bw_bytes_s).sum::<f64>() / n,
                best,
                runs,
            });
        }
        progress(ji + 1, total);
        if interrupted {
            report.interrupted = true;
            break;
        }
        if ji + 1 < total && !o.interval.is_zero() {
            sleep_unless_stopped(o.interval, stop);
        }
    }
    Ok(report)
}

fn sleep_unless_stopped(d: Duration, stop: &AtomicBool) {
    let end = std::time::Instant::now() + d;
    while std::time::Instant::now() < end && !stop.load(std::sync::atomic::Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20).min(end - std::time::Instant::now()));
    }
}
