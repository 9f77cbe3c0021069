//! Running one job on the test file: `numjobs` threads, each keeping
//! `iodepth` I/Os in flight through its engine, random or sequential
//! offsets aligned to the block size, reads and writes mixed by
//! `rwmixread`; a warm-up (`ramp_time`) not counted; per-direction latency
//! histograms; the CPU time of the whole process over the run, so every
//! thread it used — io_uring's kernel workers included — is counted.

use crate::engine::{self, Completion, EngineKind, Op};
use crate::file::{fill_random, AlignedBuf, TestFile};
use crate::BenchError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use storlab_stats::Histogram;
use storlab_workload::Job;

#[derive(Debug, Clone, Default)]
pub struct DirStats {
    pub ios: u64,
    pub bytes: u64,
    pub hist: Histogram,
}

impl DirStats {
    /// Another worker's or job's I/Os in the same direction, added.
    fn add(&mut self, other: &DirStats) {
        self.ios += other.ios;
        self.bytes += other.bytes;
        self.hist.merge(&other.hist);
    }
}

#[derive(Debug, Clone, Default)]
pub struct RunResult {
    pub read: DirStats,
    pub write: DirStats,
    /// The measured window in seconds.
    pub elapsed_s: f64,
    pub usr_cpu_s: f64,
    pub sys_cpu_s: f64,
    pub interrupted: bool,
    /// When the measured window began, in seconds from the bench run's start.
    pub start_s: f64,
}

impl RunResult {
    pub fn ios(&self) -> u64 {
        self.read.ios + self.write.ios
    }
    pub fn bytes(&self) -> u64 {
        self.read.bytes + self.write.bytes
    }
    pub fn merged_hist(&self) -> Histogram {
        let mut h = self.read.hist.clone();
        h.merge(&self.write.hist);
        h
    }
}

fn cpu_times() -> (f64, f64) {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

/// A small xorshift for offsets and the read/write mix (one per thread).
struct Rng(u64);

impl Rng {
    #[inline]
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    #[inline]
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
}

/// Where the `k`-th I/O of a thread goes: random offsets uniform over the
/// file's aligned blocks, sequential ones from the start, wrapping.
#[inline]
pub fn next_offset(random: bool, rng_val: u64, cursor: &mut u64, blocks: u64, bs: u64) -> u64 {
    if random {
        ((u128::from(rng_val) * u128::from(blocks)) >> 64) as u64 * bs
    } else {
        let o = *cursor * bs;
        *cursor = (*cursor + 1) % blocks;
        o
    }
}

struct Worker<'a> {
    kind: EngineKind,
    job: &'a Job,
    fd: std::os::fd::RawFd,
    size: u64,
    seed: u64,
    stop: &'a AtomicBool,
    ramp_end: Instant,
    end: Option<Instant>,
    bytes_target: Option<u64>,
}

struct WorkerOut {
    read: DirStats,
    write: DirStats,
    last: Instant,
}

fn run_worker(w: Worker) -> Result<WorkerOut, BenchError> {
    let job = w.job;
    let bs = job.bs_bytes;
    let blocks = w.size / bs;
    if blocks == 0 {
        return Err(BenchError::Job { job: job.name.clone(), message: format!("block size {bs} is larger than the test file ({} bytes)", w.size) });
    }
    // psync is synchronous: one I/O at a time whatever iodepth says (as fio).
    let depth = if w.kind == EngineKind::Psync { 1 } else { job.iodepth.max(1) as usize };
    let mut bufs = AlignedBuf::new(bs as usize * depth);
    fill_random(bufs.as_mut_slice(), w.seed ^ 0xB0F);
    let base = bufs.as_mut_ptr();
    let mut eng = engine::open(w.kind, w.fd, depth as u32).map_err(|e| BenchError::Engine { engine: w.kind.name(), message: e.to_string() })?;
    let read_pct = u64::from(job.rw.read_percent(job.rwmixread));
    let random = job.rw.is_random();
    let mut rng = Rng(w.seed | 1);
    let mut cursor = 0u64;
    let mut issued_at = vec![Instant::now(); depth];
    let mut writes = vec![false; depth];
    let mut out = WorkerOut { read: DirStats::default(), write: DirStats::default(), last: Instant::now() };
    let mut inflight = 0usize;
    let mut bytes_issued = 0u64;
    let think = job.thinktime;
    let gap = job.rate_iops.map(|r| Duration::from_secs_f64(1.0 / r as f64));
    let mut next_allowed = Instant::now();
    let eng_err = |e: std::io::Error| BenchError::Engine { engine: w.kind.name(), message: e.to_string() };

    let mut issue = |slot: usize, eng: &mut Box<dyn engine::Engine>, rng: &mut Rng, cursor: &mut u64, issued_at: &mut [Instant], writes: &mut [bool]| -> Result<(), BenchError> {
        if let Some(g) = gap {
            let now = Instant::now();
            if next_allowed > now {
                std::thread::sleep(next_allowed - now);
            }
            next_allowed = next_allowed.max(now) + g;
        }
        let write = match read_pct {
            100 => false,
            0 => true,
            p => rng.below(100) >= p,
        };
        let r = rng.next();
        let offset = next_offset(random, r, cursor, blocks, bs);
        writes[slot] = write;
        issued_at[slot] = Instant::now();
        // SAFETY: slot < depth, so the pointer stays inside `bufs`.
        let buf = unsafe { base.add(slot * bs as usize) };
        eng.queue(Op { slot: slot as u32, write, offset, len: bs as u32, buf }).map_err(eng_err)
    };

    for slot in 0..depth {
        issue(slot, &mut eng, &mut rng, &mut cursor, &mut issued_at, &mut writes)?;
        inflight += 1;
        bytes_issued += bs;
    }
    let mut done: Vec<Completion> = Vec::with_capacity(depth);
    while inflight > 0 {
        done.clear();
        eng.reap(1, &mut done).map_err(eng_err)?;
        let now = Instant::now();
        for c in &done {
            inflight -= 1;
            let slot = c.slot as usize;
            if c.result != bs as i64 {
                let why = if c.result < 0 { std::io::Error::from_raw_os_error(-c.result as i32).to_string() } else { format!("short transfer of {} bytes", c.result) };
                return Err(BenchError::Engine { engine: w.kind.name(), message: format!("I/O failed: {why}") });
            }
            if now >= w.ramp_end && w.end.map_or(true, |e| now <= e) {
                let d = if writes[slot] { &mut out.write } else { &mut out.read };
                d.ios += 1;
                d.bytes += bs;
                d.hist.record(now.duration_since(issued_at[slot]).as_secs_f64());
                out.last = now;
            }
            let over = w.stop.load(Ordering::Relaxed) || w.end.is_some_and(|e| now >= e) || w.bytes_target.is_some_and(|b| bytes_issued >= b);
            if over {
                continue;
            }
            if !think.is_zero() {
                std::thread::sleep(think);
            }
            issue(slot, &mut eng, &mut rng, &mut cursor, &mut issued_at, &mut writes)?;
            inflight += 1;
            bytes_issued += bs;
        }
    }
    Ok(out)
}

/// Runs `job` on `file` with `kind`: warm-up, then the measured part
/// (`runtime`, or `size` once per thread without `time_based`). `stop`
/// ends it early; what was measured is kept.
pub fn run_job(kind: EngineKind, file: &TestFile, job: &Job, seed: u64, stop: &AtomicBool) -> Result<RunResult, BenchError> {
    let out = run_group(file, &[GroupJob { kind, job, seed }], Instant::now(), stop)?;
    Ok(out.into_iter().next().expect("one job"))
}

/// One job of a group that runs at once.
#[derive(Clone, Copy)]
pub struct GroupJob<'a> {
    pub kind: EngineKind,
    pub job: &'a Job,
    pub seed: u64,
}

/// Runs `jobs` at the same time on `file`, as fio runs the jobs between two
/// `stonewall`s: every thread of every job starts together, each job keeps
/// its own ramp_time, runtime and `size`, and all share the one file. The
/// process's CPU time over the group is shared out by I/O count. `origin`
/// is the bench run's start, for each result's `start_s`.
pub fn run_group(file: &TestFile, jobs: &[GroupJob], origin: Instant, stop: &AtomicBool) -> Result<Vec<RunResult>, BenchError> {
    let start = Instant::now();
    let (u0, s0) = cpu_times();
    let fd = file.fd();
    let windows: Vec<(Instant, Option<Instant>)> = jobs
        .iter()
        .map(|g| {
            let ramp_end = start + g.job.ramp_time;
            (ramp_end, g.job.runtime.map(|r| ramp_end + r))
        })
        .collect();
    let results: Vec<Vec<Result<WorkerOut, BenchError>>> = std::thread::scope(|s| {
        let handles: Vec<Vec<_>> = jobs
            .iter()
            .zip(&windows)
            .map(|(g, &(ramp_end, end))| {
                let job = g.job;
                // fio's `size`: the region the job's I/O goes to, within the file.
                let region = job.size_bytes.min(file.size);
                let bytes_target = if job.time_based { None } else { Some(region) };
                (0..job.numjobs.max(1) as usize)
                    .map(|t| {
                        let w = Worker { kind: g.kind, job, fd, size: region, seed: g.seed ^ ((t as u64 + 1) * 0x9E37_79B9_7F4A_7C15), stop, ramp_end, end, bytes_target };
                        s.spawn(move || run_worker(w))
                    })
                    .collect()
            })
            .collect();
        handles
            .into_iter()
            .zip(jobs)
            .map(|(hs, g)| {
                hs.into_iter()
                    .map(|h| h.join().unwrap_or_else(|_| Err(BenchError::Engine { engine: g.kind.name(), message: "a worker thread panicked".into() })))
                    .collect()
            })
            .collect()
    });
    let (u1, s1) = cpu_times();
    let interrupted = stop.load(Ordering::Relaxed);
    let mut outs = Vec::with_capacity(jobs.len());
    for (res, &(ramp_end, end)) in results.into_iter().zip(&windows) {
        let mut out = RunResult { interrupted, start_s: ramp_end.saturating_duration_since(origin).as_secs_f64(), ..Default::default() };
        let mut last = ramp_end;
        for r in res {
            let w = r?;
            out.read.add(&w.read);
            out.write.add(&w.write);
            last = last.max(w.last);
        }
        out.elapsed_s = match end {
            Some(e) if !out.interrupted => e.duration_since(ramp_end).as_secs_f64(),
            _ => last.saturating_duration_since(ramp_end).as_secs_f64(),
        };
        outs.push(out);
    }
    let total: u64 = outs.iter().map(|o| o.ios()).sum();
    for o in &mut outs {
        let share = if total > 0 { o.ios() as f64 / total as f64 } else { 1.0 / jobs.len() as f64 };
        o.usr_cpu_s = (u1 - u0) * share;
        o.sys_cpu_s = (s1 - s0) * share;
    }
    Ok(outs)
}

impl RunResult {
    /// fio's `group_reporting`: the jobs of a reporting group as one — I/Os
    /// and CPU summed, latency over every I/O, over the longest window.
    pub fn fold(parts: &[RunResult]) -> RunResult {
        let mut out = parts[0].clone();
        for p in &parts[1..] {
            out.read.add(&p.read);
            out.write.add(&p.write);
            out.usr_cpu_s += p.usr_cpu_s;
            out.sys_cpu_s += p.sys_cpu_s;
            let end = (out.start_s + out.elapsed_s).max(p.start_s + p.elapsed_s);
            out.start_s = out.start_s.min(p.start_s);
            out.elapsed_s = end - out.start_s;
            out.interrupted |= p.interrupted;
        }
        out
    }
}
