//! storlab-bench: real I/O on this machine with the same job definitions
//! the simulator runs (crate storlab-workload), so a measured run and a
//! simulated one line up. Engines: io_uring (default), psync, null.

pub mod engine;
pub mod file;
pub mod run;

use engine::EngineKind;
use storlab_record::{DiskJob, DiskRun, Engine, IoColumns, JobExtra, JobResult, RecordExtra, RunRecord};
use std::path::{Component, Path, PathBuf};
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
    /// The test file's size, and every job's region (`--size`); `None`: the
    /// largest of the jobs' own `size` (fio's), each job keeping its own.
    pub size_bytes: Option<u64>,
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
            size_bytes: Some(1 << 30),
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
    /// I/Os each entry of `jobs` kept in flight (iodepth × numjobs, summed
    /// over a reporting group; psync counts one per thread).
    pub outstanding: Vec<u64>,
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
        for (j, &outstanding) in self.jobs.iter().zip(&self.outstanding) {
            let best = &j.runs[j.best];
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
                    outstanding,
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
                phases: Vec::new(),
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
        start_s: r.start_s,
        usr_cpu_s: r.usr_cpu_s,
        sys_cpu_s: r.sys_cpu_s,
        cpu_us_per_io: if ios > 0 { (r.usr_cpu_s + r.sys_cpu_s) * 1e6 / ios as f64 } else { 0.0 },
    }
}

/// The engine a job runs with, and why when it is not the one it names.
/// fio's asynchronous engines (`libaio`, `posixaio`) run with io_uring —
/// the same `iodepth` I/Os in flight — and its synchronous ones (`sync`,
/// `vsync`, `pvsync`, `pvsync2`) with psync; where the kernel refuses
/// io_uring, psync. Engines with other semantics (mmap, splice, sg, net...)
/// are refused.
pub fn engine_for(job: &Job, default: EngineKind, uring_ok: bool) -> Result<(EngineKind, Option<String>), BenchError> {
    let (kind, named) = match job.ioengine.as_deref() {
        None => (default, None),
        Some(name) => match name {
            "io_uring" => (EngineKind::IoUring, None),
            "psync" => (EngineKind::Psync, None),
            "null" => (EngineKind::Null, None),
            "libaio" | "posixaio" => (EngineKind::IoUring, Some(name)),
            "sync" | "vsync" | "pvsync" | "pvsync2" => (EngineKind::Psync, Some(name)),
            _ => {
                return Err(BenchError::Job {
                    job: job.name.clone(),
                    message: format!("ioengine '{name}' has no counterpart in storlab's engines — use io_uring, libaio, psync or null"),
                })
            }
        },
    };
    if kind == EngineKind::IoUring && !uring_ok {
        let asked = named.unwrap_or("io_uring");
        return Ok((EngineKind::Psync, Some(format!("job '{}': ioengine={asked} runs with psync: io_uring is not available here (the kernel or its seccomp policy refused it), so one I/O per thread is in flight", job.name))));
    }
    let why = named.map(|n| {
        let how = if kind == EngineKind::IoUring { "iodepth I/Os in flight, as with libaio" } else { "one I/O at a time per thread, as with psync" };
        format!("job '{}': ioengine={n} runs with {} ({how})", job.name, kind.name())
    });
    Ok((kind, why))
}

/// Where a job file puts the test file, inside `--path`: fio's
/// `directory=` (a folder under it) and `filename=` (a file name in that
/// folder). storlab measures one test file a run, so the jobs that name
/// them must name the same ones.
#[derive(Debug, Default, PartialEq)]
pub struct FileTarget {
    pub directory: Option<PathBuf>,
    pub filename: Option<String>,
}

/// The one test file the jobs name, checked: a `directory=` must stay
/// inside `--path` (relative, never above it with `..`), a `filename=` must
/// be a plain file name; jobs that name different ones are refused, and so
/// is either with a benchmark's own existing file.
pub fn test_file_target(jobs: &[Job], existing: bool) -> Result<FileTarget, BenchError> {
    let bad = |j: &Job, message: String| BenchError::Job { job: j.name.clone(), message };
    let mut out: Option<(String, FileTarget)> = None;
    for j in jobs.iter().filter(|j| j.directory.is_some() || j.filename.is_some()) {
        if existing {
            return Err(bad(j, "directory and filename do not apply when measuring an existing file — remove them".into()));
        }
        let mut t = FileTarget::default();
        if let Some(d) = &j.directory {
            if d.contains(':') {
                return Err(bad(j, format!("directory '{d}': several directories (':') are not supported — storlab measures one test file; name one folder under --path")));
            }
            let p = Path::new(d);
            if p.is_absolute() {
                let near = p.file_name().map(|n| format!(" — nearest valid value '{}'", n.to_string_lossy())).unwrap_or_default();
                return Err(bad(j, format!("directory '{d}' is absolute; it must be a folder under --path{near}")));
            }
            let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
            for c in p.components() {
                match c {
                    Component::Normal(n) => parts.push(n),
                    Component::CurDir => {}
                    Component::ParentDir => {
                        if parts.pop().is_none() {
                            return Err(bad(j, format!("directory '{d}' leads out of --path with '..'; it must be a folder under --path — nearest valid value '.'")));
                        }
                    }
                    _ => return Err(bad(j, format!("directory '{d}' is not a folder under --path"))),
                }
            }
            t.directory = (!parts.is_empty()).then(|| parts.iter().collect());
        }
        if let Some(f) = &j.filename {
            let plain = !f.is_empty() && f != "." && f != ".." && !f.contains('/') && !f.contains(':');
            if !plain {
                let near = Path::new(f).file_name().map(|n| format!(" — nearest valid value '{}'", n.to_string_lossy())).unwrap_or_default();
                return Err(bad(j, format!("filename '{f}' is not a file name; storlab writes its test file inside --path (and directory=), so give a name without '/' or ':'{near}")));
            }
            t.filename = Some(f.clone());
        }
        match &out {
            None => out = Some((j.name.clone(), t)),
            Some((first, o)) if *o != t => {
                return Err(bad(j, format!("names another test file than job '{first}' — storlab measures one test file a run; give every job the same directory= and filename=")));
            }
            Some(_) => {}
        }
    }
    Ok(out.map(|o| o.1).unwrap_or_default())
}

/// Measures `jobs` on a test file storlab creates in `dir` and removes at
/// the end, on error and when `stop` is set. Jobs run as fio runs them: the
/// jobs between two `stonewall`s at the same time on the one file, reported
/// per job or, under `group_reporting`, per reporting group. CrystalDiskMark
/// presets (`o.cdm`) run each test alone: a discarded warm-up, then `runs`
/// runs. `progress(done_jobs, total)` is called between runs.
pub fn bench_disk(dir: &Path, jobs: &[Job], o: &BenchOptions, stop: &AtomicBool, progress: &mut dyn FnMut(usize, usize)) -> Result<BenchReport, BenchError> {
    use storlab_workload::groups::{report_groups, run_groups};
    let uring_ok = engine::uring_available();
    let mut warnings = Vec::new();
    let target = test_file_target(jobs, o.existing_file.is_some())?;
    for j in jobs {
        if let (_, Some(w)) = engine_for(j, o.engine, uring_ok)? {
            warnings.push(w);
        }
        if j.bs_bytes % file::ALIGN as u64 != 0 && o.direct {
            return Err(BenchError::Job { job: j.name.clone(), message: format!("bs {} is not a multiple of 4096, which direct I/O needs — use a multiple of 4k", j.bs_bytes) });
        }
    }
    // `--size` sets the file and every job's region; else each job keeps
    // its own `size` and the file holds the largest.
    let mut jobs: Vec<Job> = jobs.to_vec();
    let size = match o.size_bytes {
        Some(n) => {
            for j in &mut jobs {
                j.size_bytes = n;
            }
            n
        }
        None => jobs.iter().map(|j| j.size_bytes).max().unwrap_or(1 << 30),
    };
    for j in &jobs {
        if j.bs_bytes > j.size_bytes {
            return Err(BenchError::Job { job: j.name.clone(), message: format!("bs {} is larger than its size {} — use a size of at least one block", j.bs_bytes, j.size_bytes) });
        }
    }
    // Declared before the file, so dropped after it: the folders storlab
    // made go once the test file in them has.
    let mut _made = file::CreatedDirs::default();
    let file = match &o.existing_file {
        Some(p) => file::TestFile::open_existing(p, o.direct)?,
        None => {
            let at = match &target.directory {
                Some(rel) => {
                    _made = file::CreatedDirs::make(dir, rel)?;
                    dir.join(rel)
                }
                None => dir.to_path_buf(),
            };
            file::TestFile::create_named(&at, target.filename.as_deref(), size, o.direct)?
        }
    };
    if o.direct && !file.direct {
        warnings.push(format!("{}: the file system refused O_DIRECT (tmpfs?) — buffered I/O measures the page cache, not the disk (--buffered says so up front)", dir.display()));
    }
    let mut report = BenchReport { jobs: Vec::new(), outstanding: Vec::new(), file_bytes: file.size, direct: file.direct, interrupted: false, warnings };
    let origin = std::time::Instant::now();
    let total = jobs.len();
    let mut done_jobs = 0;
    let groups = run_groups(&jobs);
    for (gi, run) in groups.iter().enumerate() {
        let mut members: Vec<Job> = jobs[run.clone()].to_vec();
        let mut kinds = Vec::with_capacity(members.len());
        for j in &mut members {
            kinds.push(engine_for(j, o.engine, uring_ok)?.0);
            if let Some(rt) = o.runtime {
                j.runtime = Some(rt);
                j.time_based = true;
            }
        }
        let go = |ms: &[Job], seed: u64| -> Result<Vec<run::RunResult>, BenchError> {
            let g: Vec<run::GroupJob> = ms.iter().zip(&kinds).enumerate().map(|(i, (job, &kind))| run::GroupJob { kind, job, seed: seed ^ ((i as u64) << 40) }).collect();
            run::run_group(&file, &g, origin, stop)
        };
        // Per job of the run, its measured runs.
        let mut per_job: Vec<Vec<run::RunResult>> = vec![Vec::new(); members.len()];
        if o.cdm {
            // CrystalDiskMark: a discarded warm-up run, then N measured runs.
            for j in &mut members {
                j.ramp_time = Duration::ZERO;
            }
            let _ = go(&members, o.seed)?;
            for k in 0..o.runs.max(1) {
                if stop.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                for (i, r) in go(&members, o.seed ^ (u64::from(k) + 1))?.into_iter().enumerate() {
                    if !r.interrupted {
                        per_job[i].push(r);
                    }
                }
            }
        } else {
            let loops = members.iter().map(|j| j.loops.max(1)).max().unwrap_or(1);
            for k in 0..loops {
                let rs = go(&members, o.seed ^ u64::from(k))?;
                let stopped = rs.iter().any(|r| r.interrupted);
                for (i, r) in rs.into_iter().enumerate() {
                    if k < members[i].loops.max(1) && (!r.interrupted || r.ios() > 0) {
                        per_job[i].push(r);
                    }
                }
                if stopped {
                    break;
                }
            }
        }
        let interrupted = stop.load(std::sync::atomic::Ordering::Relaxed);
        for rg in report_groups(&jobs, run.clone()) {
            let idx: Vec<usize> = rg.clone().map(|ji| ji - run.start).collect();
            let n_runs = idx.iter().map(|&i| per_job[i].len()).min().unwrap_or(0);
            if n_runs == 0 {
                continue;
            }
            let runs: Vec<RunSummary> =
                (0..n_runs).map(|k| summarise(&run::RunResult::fold(&idx.iter().map(|&i| per_job[i][k].clone()).collect::<Vec<_>>()))).collect();
            let best = (0..runs.len()).max_by(|&a, &b| runs[a].bw_bytes_s.total_cmp(&runs[b].bw_bytes_s)).unwrap_or(0);
            let n = runs.len() as f64;
            let first = &members[idx[0]];
            let kind = kinds[idx[0]];
            let engines: Vec<&str> = idx.iter().map(|&i| kinds[i].name()).collect();
            report.outstanding.push(
                idx.iter().map(|&i| u64::from(if kinds[i] == EngineKind::Psync { 1 } else { members[i].iodepth }) * u64::from(members[i].numjobs)).sum(),
            );
            report.jobs.push(DiskJobRuns {
                job: first.name.clone(),
                rw: first.rw.name().to_string(),
                bs_bytes: first.bs_bytes,
                iodepth: first.iodepth,
                numjobs: idx.iter().map(|&i| members[i].numjobs).sum(),
                engine: if engines.iter().all(|e| *e == kind.name()) { kind.name().to_string() } else { engines.join("+") },
                direct: file.direct,
                mean_iops: runs.iter().map(|r| r.iops).sum::<f64>() / n,
                mean_bw_bytes_s: runs.iter().map(|r| r.bw_bytes_s).sum::<f64>() / n,
                best,
                runs,
                jobs: (idx.len() > 1).then_some(idx.len() as u32),
            });
        }
        done_jobs += run.len();
        progress(done_jobs, total);
        if interrupted {
            report.interrupted = true;
            break;
        }
        if gi + 1 < groups.len() && !o.interval.is_zero() {
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
