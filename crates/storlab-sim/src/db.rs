//! The database model: a recorded profile (contracts/PROFILE.md) as N
//! closed-loop virtual users on a modelled deployment.
//!
//! Each transaction, of a type drawn by the profile's shares:
//! 0. spends the profile's time outside the server (the client's round
//!    trip, measured at one user on the recording machine) — a delay, no CPU;
//! 1. takes CPU on the host's vCPUs — a multi-server station, first come
//!    first served — for `cpu_us` ÷ the host's CPU speed over the recording
//!    machine's (`cpu_speed_ratio`; 1 where either has no figure) × the USL
//!    factor at N users (the profile's contention and coherency), so
//!    throughput falls past the profile's peak; as it starts on a vCPU it
//!    locks the type's hot rows (`row_locks`: TPC-C's warehouse and district
//!    rows of its home warehouse) or, where another user holds one, waits
//!    off the vCPU until that user's commit is durable;
//! 2. reads `page_accesses` × miss ratio data pages, one random read of a page (`data.page_bytes`: 8 KiB PostgreSQL, 16 KiB InnoDB)
//!    at a time, on the `data` pool; the miss ratio comes from the profile's
//!    miss-ratio curve at cache = memory left to the database / data size;
//! 3. commits: its WAL bytes join the log writer's next flush, a write on
//!    the `log` pool (a durable write: write + cache flush where the device
//!    has a volatile cache); one flush serves every commit waiting when it starts
//!    (group commit), and commits arriving during a flush wait for the next.
//!    When the write is durable the log writer, woken by the device, takes
//!    the profile's `flush_cpu_us` on a vCPU before the commits return,
//!    queueing with the transactions (the system call's return, the lock's
//!    hand-over and the waiters' wake-ups run on the same vCPUs): on a busy
//!    host a flush waits for a vCPU, as a traced PostgreSQL backend waits in
//!    its `fdatasync` (docs/dbmodel.md); a profile's `flush_wait_us` (none
//!    recorded) adds its wait at N users to each flush after the write;
//! 4. releases its rows to the next user waiting for each, and counts
//!    toward the data write-back (`WritebackModel`): each checkpoint writes
//!    the distinct pages dirtied since the one before, in runs of
//!    contiguous pages, as the profile's write-back curve has them at the
//!    checkpoint interval's transactions (`pages_dirtied` each, a page of
//!    its own, where a profile has no curve); where the cache is short of
//!    the data, each data read also evicts a page, dirty with the chance a
//!    cached page is. The kernel's flusher (InnoDB: its page cleaner,
//!    `writepath`), waking every `FLUSHER_PERIOD_S`
//!    (Linux's `dirty_writeback_centisecs`, 5 s), queues the last 5 s's
//!    share of them in one go on the `data` pool from `writeback_delay_s`
//!    on (0 by default, a sweep's steady state; 30 s for a freshly started
//!    server, whose kernel writes back a dirty page once it is 30 s old), so
//!    a commit's log write behind them on the same pool waits for them.
//! Every I/O goes through the same pacers (caps and buckets), cost tables
//! and latency draws as I/O jobs, so the CloudWatch-style series come out
//! the same way. `all` pools take every role; a config without a `log`
//! pool logs on its data pool.

use crate::engine::{DeploymentState, Latencies, Sink};
use crate::writepath::{WritePath, DOUBLEWRITE_BLOCK_BYTES, PAGE_CLEANER_PERIOD_S};
use crate::rng::Rng;
use crate::series;
use serde::Serialize;
use crate::queue::EventQueue;
use std::collections::{HashMap, VecDeque};
use storlab_model::deployment::Deployment;
use storlab_model::pacing::{PacerId, Secs, Stages};
use storlab_model::resources::{IoClass, PoolPlan, Resource};
use storlab_model::scenario::Role;
use storlab_stats::{Histogram, LatencySummary};
use storlab_workload::profile::Profile;

/// How often the kernel's flusher wakes to write back the dirty pages
/// that are old enough: Linux's `vm.dirty_writeback_centisecs` default,
/// 500 (Documentation/admin-guide/sysctl/vm.rst). It queues all of them at
/// once, as the emulator's page cache does (storlab-fuse `DIRTY_WRITEBACK`).
pub const FLUSHER_PERIOD_S: f64 = 5.0;
/// Share of host memory left to the database's cache when none is given
/// (the rest: the OS, connections, work memory).
pub const DB_MEMORY_SHARE: f64 = 0.75;
/// The host's per-core CPU speed over the recording machine's: the host's
/// `cpu_speed` (catalog) over the profile's `provenance.machine.cpu_speed`,
/// where both are given on the same `cpu_speed_basis`. None otherwise: the
/// caller flags the host and runs the recorded CPU unscaled.
pub fn cpu_speed_ratio(dep: &Deployment, profile: &Profile) -> Option<f64> {
    let machine = profile.provenance.get("machine")?.as_table()?;
    let own = machine.get("cpu_speed").and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))?;
    let basis = machine.get("cpu_speed_basis")?.as_str()?;
    let host = dep.host.cpu_speed?;
    (dep.host.cpu_speed_basis.as_deref() == Some(basis) && own > 0.0 && host > 0.0).then_some(host / own)
}
const MAX_LOG_WRITE: f64 = 1048576.0;
/// When the data write-back starts, when a scenario does not say: 0, a
/// sweep's steady state. A VU count of a sweep runs right after the one
/// before it (HammerDB's autopilot, `bench db`), so the write-back of the
/// pages dirtied before its window is already running at their rate. A freshly started or checkpointed
/// server writes none for its first 30 s: Linux writes back a dirty page
/// once it is 30 s old (`vm.dirty_expire_centisecs` = 3000,
/// Documentation/admin-guide/sysctl/vm.rst), which `writeback_delay_s = 30`
/// models.
pub const WRITEBACK_DELAY_S: f64 = 0.0;

/// The data write-back: the checkpoints' writes and the dirty pages the
/// cache evicts. A checkpoint writes every page dirtied since the one
/// before, once, sorted by file and block (PostgreSQL's `BufferSync`), so
/// contiguous dirty pages of one relation go as one I/O of up to
/// `checkpoint_flush_after`; the profile's write-back curve says how many
/// distinct pages, in how many runs, n transactions leave dirty. A
/// checkpoint comes every `checkpoint_timeout`, or sooner once the WAL
/// since the last one reaches `max_wal_size / (1 + checkpoint_completion_target)`
/// (PostgreSQL's `CalculateCheckpointSegments`), and its writes are spread
/// over the interval; the model takes their mean rate at the current
/// transaction rate. A profile without the curve (older ones) counts every
/// dirtied page as a new page in a run of its own, so its write-back is its
/// `pages_dirtied` a transaction, as before. Where the cache does not hold
/// the data, each data read evicts a page, dirty with the chance that a
/// cached page is dirty over the checkpoint's cycle: one page's write.
/// Pages are the profile's `data.page_bytes` (PostgreSQL 8 KiB, InnoDB
/// 16 KiB).
pub(crate) struct WritebackModel {
    curve: Option<storlab_workload::profile::Writeback>,
    /// Pages dirtied per transaction, the mix's mean (the curve's stand-in).
    pages_per_txn: f64,
    wal_per_txn: f64,
    /// The home units in use (TPC-C: distinct home warehouses).
    units: f64,
    timeout_s: f64,
    wal_trigger_bytes: f64,
    /// The longest write-back I/O, bytes.
    pub max_io_bytes: f64,
    /// A data page, bytes.
    pub page: f64,
    cache_pages: f64,
    cache_short: bool,
}

/// One flusher slice's share of the write-back.
pub(crate) struct WritebackSlice {
    pub ops: f64,
    pub pages: f64,
    pub evictions: f64,
}

impl WritebackModel {
    pub(crate) fn new(profile: &Profile, memory: f64, homes: &[u64], data_bytes: f64) -> WritebackModel {
        let mix = |f: &dyn Fn(&storlab_workload::profile::TxnProfile) -> f64| profile.transactions.iter().map(|t| t.share * f(t)).sum::<f64>();
        let curve = profile.writeback.clone();
        let units = if profile.scale_unit == "warehouse" {
            homes.iter().collect::<std::collections::HashSet<_>>().len().max(1) as f64
        } else {
            1.0
        };
        let d = storlab_workload::profile::Writeback::default();
        let w = curve.as_ref().unwrap_or(&d);
        let page = profile.data.page_bytes;
        WritebackModel {
            pages_per_txn: mix(&|t| t.pages_dirtied).max(0.0),
            wal_per_txn: mix(&|t| t.wal_bytes).max(0.0),
            units,
            timeout_s: w.checkpoint_timeout_s,
            wal_trigger_bytes: w.max_wal_bytes / (1.0 + w.completion_target),
            max_io_bytes: w.flush_after_bytes.max(page),
            page,
            cache_pages: (memory / page).max(1.0),
            cache_short: memory < data_bytes,
            curve,
        }
    }

    /// Distinct dirty pages and their runs after `n` transactions.
    fn dirty_after(&self, n: f64) -> (f64, f64) {
        match &self.curve {
            Some(c) => {
                let x = n / self.units;
                (self.units * c.pages_at(x), self.units * c.runs_at(x))
            }
            None => (self.pages_per_txn * n, self.pages_per_txn * n),
        }
    }

    /// Pages dirtied for each byte of WAL (redo), the mix's means.
    pub(crate) fn pages_per_redo_byte(&self) -> f64 {
        if self.wal_per_txn > 0.0 {
            self.pages_per_txn / self.wal_per_txn
        } else {
            f64::INFINITY
        }
    }

    /// The checkpoint interval at `rate` transactions a second, s.
    pub(crate) fn interval_s(&self, rate: f64) -> f64 {
        let wal = rate * self.wal_per_txn;
        if wal > 0.0 {
            self.timeout_s.min(self.wal_trigger_bytes / wal)
        } else {
            self.timeout_s
        }
    }

    /// The write-back of a slice of `dt` s at `rate` transactions a second
    /// with `reads` data reads in it.
    pub(crate) fn slice(&self, rate: f64, dt: f64, reads: f64) -> WritebackSlice {
        let interval = self.interval_s(rate).max(dt);
        let n = rate * interval;
        let (pages, runs) = self.dirty_after(n);
        let per_io = self.max_io_bytes / self.page;
        let ops = runs.max(pages / per_io).min(pages);
        let share = dt / interval;
        // Evictions: the cached pages that are dirty, on average over the
        // checkpoint's cycle (the midpoints of eight steps).
        let evictions = if self.cache_short && reads > 0.0 {
            let mean_dirty = (0..8).map(|i| self.dirty_after(n * (i as f64 + 0.5) / 8.0).0).sum::<f64>() / 8.0;
            reads * (mean_dirty / self.cache_pages).min(1.0)
        } else {
            0.0
        };
        WritebackSlice { ops: ops * share, pages: pages * share, evictions }
    }
}

/// One run of the database model.
#[derive(Debug, Clone)]
pub struct DbParams {
    /// Scale in the profile's unit (warehouses for TPC-C).
    pub scale: f64,
    pub vus: u32,
    pub rampup_s: f64,
    pub duration_s: f64,
    pub seed: u64,
    /// Memory for the database's cache; default `DB_MEMORY_SHARE` of the host's.
    pub db_memory_bytes: Option<f64>,
    pub period_s: f64,
    /// Mean think time between a user's transactions, s (negative
    /// exponential, as TPC-C's think times); 0 for none.
    pub think_time_s: f64,
    /// The USL's (α, β) in place of the profile's: a what-if for a server
    /// unlike the recording machine.
    pub usl: Option<(f64, f64)>,
    /// Each user's home unit drawn at random (HammerDB), not round-robin
    /// (storlab's driver).
    pub random_homes: bool,
    /// When the data write-back starts, s (`WRITEBACK_DELAY_S` by default:
    /// 0, from the flusher's first wake-up).
    pub writeback_delay_s: f64,
    /// End the window early once the throughput is steady (`steady_state`).
    pub steady: bool,
}

/// Steady state, as fio's `steadystate` ends a job: the window is cut into
/// batches of this many seconds, and ends at a batch's edge once the
/// batches' mean throughput is known to within `STEADY_HALF_WIDTH` of itself
/// (the half-width of its 95 % confidence interval, batch means), after at
/// least `STEADY_MIN_BATCHES` batches and one whole checkpoint interval,
/// with every burst bucket full or empty (none still draining or filling).
pub const STEADY_BATCH_S: f64 = 10.0;
pub const STEADY_MIN_BATCHES: usize = 12;
pub const STEADY_HALF_WIDTH: f64 = 0.01;

/// Whether batch throughputs give their mean to within `STEADY_HALF_WIDTH`
/// (Student's t by its Cornish-Fisher expansion, exact enough from 12
/// batches).
pub fn steady(batches: &[f64]) -> bool {
    let n = batches.len();
    if n < STEADY_MIN_BATCHES {
        return false;
    }
    let nf = n as f64;
    let mean = batches.iter().sum::<f64>() / nf;
    if mean <= 0.0 {
        return false;
    }
    let var = batches.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (nf - 1.0);
    let z: f64 = 1.959_963_985;
    let t = z + (z.powi(3) + z) / (4.0 * (nf - 1.0));
    t * (var / nf).sqrt() <= STEADY_HALF_WIDTH * mean
}

#[derive(Debug, Clone, Serialize)]
pub struct TxnResult {
    pub name: String,
    pub count: u64,
    #[serde(flatten)]
    pub latency: LatencySummary,
}

/// A pool's I/O so far: read and write I/Os, read and write bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PoolIo {
    pub reads: f64,
    pub writes: f64,
    pub read_bytes: f64,
    pub write_bytes: f64,
}

impl PoolIo {
    pub fn count(&mut self, read: bool, bytes: f64) {
        if read {
            self.reads += 1.0;
            self.read_bytes += bytes;
        } else {
            self.writes += 1.0;
            self.write_bytes += bytes;
        }
    }

    /// What was done after `earlier`.
    pub fn since(&self, earlier: &PoolIo) -> PoolIo {
        PoolIo { reads: self.reads - earlier.reads, writes: self.writes - earlier.writes, read_bytes: self.read_bytes - earlier.read_bytes, write_bytes: self.write_bytes - earlier.write_bytes }
    }

    /// The pool's result over a window of `w` seconds.
    pub fn result(&self, role: &str, w: f64, utilization: f64) -> DbPoolResult {
        DbPoolResult { role: role.to_string(), read_iops: self.reads / w, write_iops: self.writes / w, read_bytes_s: self.read_bytes / w, write_bytes_s: self.write_bytes / w, utilization }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct DbPoolResult {
    pub role: String,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_bytes_s: f64,
    pub write_bytes_s: f64,
    /// The busiest of the pool's own limits: busy time over the window.
    pub utilization: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct DbResult {
    pub config: String,
    pub vus: u32,
    pub nopm: f64,
    pub tpm: f64,
    pub txn: Vec<TxnResult>,
    pub cpu_utilization: f64,
    pub pools: Vec<DbPoolResult>,
    pub binding: String,
    /// Miss ratio of page accesses at this memory and scale.
    pub miss_ratio: f64,
    pub commits_per_flush: f64,
    pub flushes: u64,
    /// Mean time of one log flush in the window, s.
    pub flush_s: f64,
    /// Where a transaction's time went, s per transaction: waiting for a
    /// vCPU, on a vCPU, reading data pages, waiting for its commit's flush,
    /// thinking.
    pub time_cpu_queue_s: f64,
    /// Waiting for another user's hot row (`row_locks`).
    pub time_locks_s: f64,
    pub time_cpu_s: f64,
    pub time_reads_s: f64,
    pub time_commit_s: f64,
    pub time_think_s: f64,
    /// Outside the server: the client's round trip.
    pub time_outside_s: f64,
    /// The USL's service-demand factor at these users.
    pub usl_factor: f64,
    /// Ended early at steady state (`steady`): the window's length, s.
    pub steady_at_s: Option<f64>,
    /// Stopped early: the window ends at `window_s`.
    pub interrupted: bool,
    pub window_s: f64,
    /// Events simulated (transaction steps and I/Os).
    pub events: u64,
    pub series: Vec<series::Series>,
    /// The window cut where a bucket emptied; empty where none did.
    #[serde(skip)]
    pub phases: Vec<DbPhase>,
}

/// One stretch of a database run's window between the moments a bucket
/// emptied: per type the transactions and their latencies, per pool the
/// I/Os (counted when issued, so an I/O in flight at a cut falls on the
/// side it started), and the limits that had fallen to their baseline.
#[derive(Debug, Clone)]
pub struct DbPhase {
    pub from_s: f64,
    pub to_s: f64,
    pub counts: Vec<u64>,
    pub hists: Vec<Histogram>,
    pub pool_ios: Vec<PoolIo>,
    pub emptied: Vec<String>,
}

/// The run's counters at the moment a bucket emptied.
struct DbSnap {
    t: f64,
    counts: Vec<u64>,
    hists: Vec<Histogram>,
    pool_ios: Vec<PoolIo>,
    emptied: Vec<String>,
}

/// Cuts `[w0, w1]` at the snapshots (as the I/O engine's phases do: cuts
/// closer than `min_phase_s` to an edge or to the previous cut join it).
fn db_phases(w0: f64, w1: f64, snaps: Vec<DbSnap>, end: DbSnap) -> Vec<DbPhase> {
    let cuts = crate::engine::keep_cuts(w0, w1, snaps, |s| s.t, |last, sn| last.emptied.extend(sn.emptied));
    if cuts.is_empty() {
        return Vec::new();
    }
    let n = end.counts.len();
    let start = DbSnap { t: w0, counts: vec![0; n], hists: vec![Histogram::default(); n], pool_ios: vec![PoolIo::default(); end.pool_ios.len()], emptied: Vec::new() };
    let mut edges = vec![start];
    edges.extend(cuts);
    edges.push(DbSnap { t: w1, ..end });
    edges
        .windows(2)
        .map(|w| DbPhase {
            from_s: w[0].t,
            to_s: w[1].t,
            counts: w[1].counts.iter().zip(&w[0].counts).map(|(a, b)| a - b).collect(),
            hists: w[1].hists.iter().zip(&w[0].hists).map(|(a, b)| a.since(b)).collect(),
            pool_ios: w[1].pool_ios.iter().zip(&w[0].pool_ios).map(|(a, b)| a.since(b)).collect(),
            emptied: w[0].emptied.clone(),
        })
        .collect()
}

/// An I/O path: a pool's plan for one size and direction, as pacer stages.
pub(crate) struct Path {
    stages: Stages,
    sequential: bool,
    next_phase: usize,
    /// The I/O's size, bytes.
    size: f64,
}

impl Path {
    pub(crate) fn new(st: &mut DeploymentState, dep: &Deployment, pool: usize, size: f64, sequential: bool, labels: &mut HashMap<PacerId, Resource>) -> Path {
        let plan = PoolPlan::new(dep, &dep.pools[pool], size, sequential);
        let map = st.pacers.register(pool, &plan);
        for (r, &id) in plan.resources.iter().zip(&map) {
            labels.entry(id).or_insert_with(|| r.clone());
        }
        Path { stages: Stages::new(&plan, &map), sequential, next_phase: 0, size }
    }

    /// One I/O issued at `t`: when it completes.
    pub(crate) fn io(&mut self, st: &mut DeploymentState, lat: &Latencies, class: IoClass, t: f64, rng: &mut Rng) -> f64 {
        let phases = self.stages.phases();
        let phase = if phases <= 1 {
            0
        } else if self.sequential {
            self.next_phase = (self.next_phase + 1) % phases;
            self.next_phase
        } else {
            rng.below(phases as u64) as usize
        };
        let a = st.pacers.pass(self.stages.host(phase, class), Secs(t)).0;
        let mut done = a;
        if self.stages.no_members(phase, class) {
            done = a + lat.hit.as_ref().unwrap_or(&lat.read).draw(rng);
        }
        let dist = if class == IoClass::Write { &lat.write } else { &lat.read };
        // Each member gets its piece of the I/O.
        let piece = self.size / self.stages.members(phase, class).count().max(1) as f64;
        for (_, e) in self.stages.members(phase, class) {
            let am = st.pacers.pass(e, Secs(a)).0;
            done = done.max(am + dist.draw_sized(rng, piece));
        }
        done
    }
}

const FLUSH: u32 = u32::MAX;
/// The log writer's CPU for a flush is done: the write goes to the device.
const FLUSH_CPU: u32 = u32::MAX - 1;
/// The log writer in the vCPUs' queue.
const FLUSHER: usize = usize::MAX;
/// The kernel's flusher wakes.
const WRITEBACK: u32 = u32::MAX - 2;
/// The redo log's write is durable: the binary log's write goes next.
const BINLOG: u32 = u32::MAX - 3;

#[derive(Clone, Copy)]
struct Vu {
    txn: usize,
    started: f64,
    reads_left: u32,
    commits: u32,
    /// Back from the round trip, the CPU still to take.
    cpu_pending: bool,
    /// On a vCPU: its next event frees it.
    on_cpu: bool,
}

/// Hot rows held: the holder and the users waiting, first come first served.
type RowLocks = HashMap<u64, (u32, VecDeque<u32>)>;

/// Takes `want[*held..]` in order for user `v`; false where one is held by
/// another user (`v` then waits in its queue and is handed the row on release).
fn acquire(locks: &mut RowLocks, want: &[u64], held: &mut usize, v: u32) -> bool {
    while *held < want.len() {
        match locks.entry(want[*held]) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert((v, VecDeque::new()));
            }
            std::collections::hash_map::Entry::Occupied(mut e) => {
                if e.get().0 != v {
                    e.get_mut().1.push_back(v);
                    return false;
                }
            }
        }
        *held += 1;
    }
    true
}

/// The pool a role's I/O goes to: that role's pool, else `all`, else `fallback`.
pub(crate) fn pool_for(dep: &Deployment, role: Role, fallback: usize) -> usize {
    dep.pools.iter().position(|p| p.role == role).or_else(|| dep.pools.iter().position(|p| p.role == Role::All)).unwrap_or(fallback)
}

/// A limit that binds, in words: "data pool: 4 × device aws/ebs/gp3
/// (200 GiB): 3000 IOPS, 95 % busy" (`N × ` where a limit of each of a
/// pool's N devices binds), or a host or path limit with its busy share.
pub(crate) fn limit_words(dep: &Deployment, st: &DeploymentState, busy: f64, id: PacerId, res: &Resource) -> String {
    let label = res.label(st.pacers.get(id).mostly_at_peak());
    match res.id.pool() {
        Some(i) => {
            let pool = &dep.pools[i as usize];
            let count = if pool.count > 1 && res.member.is_some() { format!("{} × ", pool.count) } else { String::new() };
            format!("{} pool: {count}{label}, {:.0} % busy", pool.role.name(), 100.0 * busy)
        }
        None => format!("{label}, {:.0} % busy", 100.0 * busy),
    }
}

/// Whole count of a fractional mean: floor, plus one with the remainder's probability.
fn draw_count(mean: f64, rng: &mut Rng) -> u32 {
    let f = mean.floor();
    f as u32 + u32::from(rng.f64() < mean - f)
}

/// Runs the profile on `dep` with the service times `lats` (one per pool).
pub fn run_db(dep: &Deployment, profile: &Profile, p: &DbParams, lats: &[Latencies]) -> DbResult {
    run_db_with(dep, profile, p, lats, &mut |_| true)
}

/// `run_db` with `progress(simulated seconds)` called now and then; it
/// returns false to stop, and the result then covers the window so far.
pub fn run_db_with(dep: &Deployment, profile: &Profile, p: &DbParams, lats: &[Latencies], progress: &mut dyn FnMut(f64) -> bool) -> DbResult {
    let mut st = DeploymentState::new();
    let mut sink = crate::series_sink(dep, &mut st, p.period_s);
    let mut labels = HashMap::new();
    let data = pool_for(dep, Role::Data, 0);
    let log = pool_for(dep, Role::Log, data);
    // A commit's WAL write must be durable before it returns: where the
    // log's device has a volatile write cache, a write plus its flush.
    let log_lat = Latencies { read: lats[log].read.clone(), write: lats[log].flush.clone().unwrap_or_else(|| lats[log].write.clone()), hit: None, flush: None };
    let outside = profile.outside_us_at(f64::from(p.vus)) * 1e-6;
    // A flush's own CPU, taken out of the writing transactions' CPU.
    let flush_cpu_us = profile.concurrency.flush_cpu_us.max(0.0);
    // A faster core takes less time for the same transaction.
    let speed = cpu_speed_ratio(dep, profile).unwrap_or(1.0);
    let flush_cpu = flush_cpu_us * 1e-6 / speed;
    // A data page (the profile's: PostgreSQL 8 KiB, InnoDB 16 KiB).
    let page = profile.data.page_bytes;
    let mut reads = Path::new(&mut st, dep, data, page, false, &mut labels);
    let mut bg = Path::new(&mut st, dep, data, page, false, &mut labels);
    let mut log_paths: HashMap<u64, Path> = HashMap::new();
    let mut rng = Rng::new(p.seed);

    let memory = p.db_memory_bytes.unwrap_or(dep.host.memory_gib.unwrap_or(0.0) * (1u64 << 30) as f64 * DB_MEMORY_SHARE);
    let data_bytes = profile.data_bytes(p.scale).max(1.0);
    let miss = profile.mrc.miss_ratio_at(memory / data_bytes);
    let vcpus = dep.host.vcpus.unwrap_or(1.0).max(1.0) as usize;
    let n = p.vus.max(1) as usize;
    // The USL's N is the concurrency: the users inside a transaction, not
    // thinking (a closed network's delay station is outside the system).
    // A scenario's α and β override the profile's penalty; otherwise the
    // profile's recorded penalty (or its USL where it has none).
    let usl_at = |a: f64| match p.usl {
        Some((alpha, beta)) => 1.0 + alpha * (a - 1.0).max(0.0) + beta * a * (a - 1.0).max(0.0),
        None => profile.penalty_factor(a),
    };
    let mut active = n;
    let mut thinking = vec![false; n];
    let (mut usl_sum, mut usl_n) = (0.0f64, 0u64);
    let cum: Vec<f64> = profile.transactions.iter().scan(0.0, |s, t| {
        *s += t.share;
        Some(*s)
    }).collect();

    let w0 = p.rampup_s;
    // The window's end: its planned end, or a batch's edge at steady state.
    let w1c = std::cell::Cell::new(p.rampup_s + p.duration_s);
    // The vCPUs: idle ones, and the users waiting for one (user, since, demand).
    let mut cpu_idle = vcpus;
    let mut cpu_queue: VecDeque<(usize, f64, f64)> = VecDeque::new();
    let mut cpu_demand = vec![0.0f64; n];
    let mut cpu_busy = 0.0;
    // Hot rows: each type's kinds of rows (index, rows per unit), in one
    // order for every type so that two users never wait for each other.
    let mut row_kinds: Vec<&str> = Vec::new();
    let mut max_rows = 1u64;
    let type_rows: Vec<Vec<(u64, u64)>> = profile
        .transactions
        .iter()
        .map(|tp| {
            let mut v: Vec<(u64, u64)> = tp
                .row_locks
                .iter()
                .map(|l| {
                    let k = row_kinds.iter().position(|&r| r == l.rows).unwrap_or_else(|| {
                        row_kinds.push(&l.rows);
                        row_kinds.len() - 1
                    });
                    max_rows = max_rows.max(u64::from(l.per_unit));
                    (k as u64, u64::from(l.per_unit.max(1)))
                })
                .collect();
            v.sort_unstable();
            v
        })
        .collect();
    // Home units go round-robin, as storlab's TPC-C driver gives home
    // warehouses (users 1..W each their own, user W+1 shares the first), or
    // are drawn at random per user, as HammerDB draws them (two users may
    // share one below W users). Their own stream, so that the draws do not
    // move the rest of the run.
    let units = (p.scale.floor() as u64).max(1);
    let homes: Vec<u64> = if p.random_homes {
        let mut r = Rng::new(p.seed ^ 0x686f_6d65);
        (0..n).map(|_| r.below(units)).collect()
    } else {
        (0..n as u64).map(|v| v % units).collect()
    };
    let mut row_locks: RowLocks = HashMap::new();
    let mut wanted: Vec<Vec<u64>> = vec![Vec::new(); n];
    let mut held = vec![0usize; n];
    let mut lock_since = vec![0.0f64; n];
    let mut hists: Vec<Histogram> = profile.transactions.iter().map(|_| Histogram::default()).collect();
    let mut counts = vec![0u64; profile.transactions.len()];
    let mut pool_ios = vec![PoolIo::default(); dep.pools.len()];
    let mut vus = vec![Vu { txn: 0, started: 0.0, reads_left: 0, commits: 0, cpu_pending: false, on_cpu: false }; n];
    // Events are the user (its index), or FLUSH, FLUSH_CPU, WRITEBACK.
    let mut heap: EventQueue<u32> = EventQueue::with_capacity(p.vus as usize + 4);
    let push = |heap: &mut EventQueue<u32>, t: f64, who: u32| heap.push(Secs(t), who);
    // Group commit: the commits waiting for the next flush, and those the
    // flush in progress serves (VU, WAL bytes).
    let mut waiting: Vec<(usize, f64)> = Vec::new();
    let mut flushing: Vec<usize> = Vec::new();
    let mut flush_busy = false;
    let (mut flushes, mut flushed_commits) = (0u64, 0u64);
    // Write-back: the transactions and data reads since the flusher last
    // woke, and the writes owed but not yet whole (checkpoint writes, their
    // pages, dirty evictions).
    let wb = WritebackModel::new(profile, memory, &homes, data_bytes);
    let delay = p.writeback_delay_s.max(0.0);
    let mut flusher_awake = false;
    let (mut slice_txns, mut slice_reads, mut last_wake) = (0.0f64, 0.0f64, 0.0f64);
    let (mut owed_ops, mut owed_pages, mut owed_evictions) = (0.0f64, 0.0f64, 0.0f64);
    let mut ckpt_paths: HashMap<u64, Path> = HashMap::new();
    let mut window_open = false;
    // Where the time went (in the window), and the log's flush times.
    let (mut t_cpu_q, mut t_cpu, mut t_reads, mut t_commit, mut t_think, mut t_out) = (0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let mut t_locks = 0.0f64;
    let mut commit_start = vec![0.0f64; n];
    let mut flush_started = 0.0f64;
    let mut flush_time = 0.0f64;
    let mut txn_periods: Vec<f64> = Vec::new();
    let mut events = 0u64;
    let mut stopped_at: Option<f64> = None;

    // The kernel's flusher, or InnoDB's page cleaner where the profile is
    // InnoDB's (it writes with O_DIRECT).
    let wp = WritePath::resolve(dep, profile);
    let flusher_period = if wp.is_some() { PAGE_CLEANER_PERIOD_S } else { FLUSHER_PERIOD_S };
    let pages_per_redo_byte = wb.pages_per_redo_byte();
    push(&mut heap, flusher_period, WRITEBACK);
    for v in 0..n {
        push(&mut heap, 0.0, v as u32);
        vus[v].reads_left = u32::MAX; // not started
    }
    let in_window = |t: f64| t >= w0 && t <= w1c.get();
    let count_io = |pool_ios: &mut Vec<PoolIo>, pool: usize, read: bool, bytes: f64, t: f64| {
        if t >= w0 && t <= w1c.get() {
            pool_ios[pool].count(read, bytes);
        }
    };

    // A durable write of `bytes` on the log pool from `t`, in pieces of at
    // most MAX_LOG_WRITE: when the last piece is durable.
    let log_write = |st: &mut DeploymentState, paths: &mut HashMap<u64, Path>, labels: &mut HashMap<PacerId, Resource>, rng: &mut Rng, sink: &mut series::SeriesSink, pool_ios: &mut Vec<PoolIo>, bytes: f64, t: f64| -> f64 {
        let mut done = t;
        let mut left = bytes;
        while left > 0.0 {
            let size = left.min(MAX_LOG_WRITE);
            let class = (size.max(4096.0) as u64).next_power_of_two();
            // Each flush is an I/O of its own on the volume's IOPS, never
            // merged with the one before: PostgreSQL rewrites the last,
            // partly filled WAL page from its start at the next flush
            // (XLogWrite), so consecutive flushes overlap rather than
            // follow each other, and each ends in a cache flush. EBS
            // merges only physically sequential I/O.
            let path = paths.entry(class).or_insert_with(|| Path::new(st, dep, log, class as f64, false, labels));
            let d = path.io(st, &log_lat, IoClass::Write, t, rng);
            sink.complete(log, false, size, d - t);
            count_io(pool_ios, log, false, size, d);
            done = done.max(d);
            left -= size;
        }
        done
    };
    // InnoDB's doublewrite copies and binary log (none for PostgreSQL).
    let doublewrite = wp.as_ref().is_some_and(|w| w.doublewrite);
    let binlog_every = wp.as_ref().map_or(0, |w| w.binlog_sync_every);
    let binlog_per_txn = wp.as_ref().and_then(|w| w.binlog_bytes_per_txn);
    let (mut binlog_groups, mut binlog_bytes) = (0u64, 0.0f64);
    let mut dblwr_owed = 0.0f64;
    let dblwr_block_pages = (DOUBLEWRITE_BLOCK_BYTES / page).floor().max(1.0);
    let data_durable = Latencies { read: lats[data].read.clone(), write: lats[data].flush.clone().unwrap_or_else(|| lats[data].write.clone()), hit: None, flush: None };
    let mut dblwr_paths: HashMap<u64, Path> = HashMap::new();

    let (mut batches, mut batch_txns, mut batch_end) = (Vec::<f64>::new(), 0u64, w0 + STEADY_BATCH_S);
    // Buckets that emptied in the window, not yet cut at, in time order.
    let mut empties = st.pacers.empties;
    let (mut pending, mut known, mut snaps): (Vec<(f64, PacerId)>, Vec<PacerId>, Vec<DbSnap>) = (Vec::new(), Vec::new(), Vec::new());
    let mut next_cut = f64::INFINITY;
    let mut steady_at: Option<f64> = None;
    while let Some((Secs(t), who)) = heap.pop() {
        if t > w1c.get() {
            break;
        }
        if p.steady && t >= batch_end {
            batches.push(batch_txns as f64 / STEADY_BATCH_S);
            batch_txns = 0;
            let window = batch_end - w0;
            let rate = batches.iter().sum::<f64>() / batches.len() as f64;
            let settled = st.pacers.balances(Secs(batch_end)).iter().all(|b| b.percent <= 0.1 || b.percent >= 99.9);
            if window < p.duration_s && window >= wb.interval_s(rate) && settled && steady(&batches) {
                steady_at = Some(window);
                w1c.set(batch_end);
                break;
            }
            batch_end += STEADY_BATCH_S;
        }
        events += 1;
        if events % 4096 == 0 && !progress(t) {
            stopped_at = Some(t);
            break;
        }
        if !window_open && t >= w0 {
            window_open = true;
            let ids: Vec<PacerId> = st.pacers.ids().collect();
            st.pacers.reset_stats(&ids);
            empties = st.pacers.empties;
        }
        // A bucket emptied at an admission made since the last event (no
        // earlier than it): cut the window there, before counting what
        // comes after.
        if window_open && st.pacers.empties != empties {
            empties = st.pacers.empties;
            for id in st.pacers.ids() {
                // The bucket's own pacer (those linked to it follow it).
                if let Some(e) = st.pacers.get(id).emptied_at.filter(|_| st.pacers.get(id).bucket().is_some()) {
                    if !known.contains(&id) {
                        known.push(id);
                        pending.push((e.0, id));
                    }
                }
            }
            pending.sort_by(|a, b| a.0.total_cmp(&b.0));
            next_cut = pending.first().map_or(f64::INFINITY, |p| p.0);
        }
        while t >= next_cut {
            let at = next_cut;
            let n = pending.iter().take_while(|p| p.0 <= at).count();
            let emptied = pending.drain(..n).filter_map(|(_, id)| labels.get(&id).map(|r| r.label(false))).collect();
            snaps.push(DbSnap { t: at, counts: counts.clone(), hists: hists.clone(), pool_ios: pool_ios.clone(), emptied });
            next_cut = pending.first().map_or(f64::INFINITY, |p| p.0);
        }
        sink.advance(Secs(t), &st.pacers);
        // A flush's write done: with a flush CPU, the log writer, woken by
        // the device, queues for a vCPU before the commits it carries return.
        let mut flush_done = false;
        if who == FLUSH {
            if flush_cpu > 0.0 {
                cpu_queue.push_back((FLUSHER, t, flush_cpu));
            } else {
                flush_done = true;
            }
        } else if who == FLUSH_CPU {
            cpu_idle += 1;
            flush_done = true;
        } else if who == WRITEBACK {
            // The flusher: the pages of age are taken below.
            flusher_awake = true;
            push(&mut heap, t + flusher_period, WRITEBACK);
        } else if who == BINLOG {
            // The redo log is durable (prepare): the binary log's write,
            // then the commits.
            let done = log_write(&mut st, &mut log_paths, &mut labels, &mut rng, &mut sink, &mut pool_ios, binlog_bytes.max(512.0), t);
            push(&mut heap, done, FLUSH);
        } else {
            let v = who as usize;
            let vu = &mut vus[v];
            if vu.on_cpu {
                vu.on_cpu = false;
                cpu_idle += 1;
            }
            let mut take_cpu = false;
            if vu.reads_left == u32::MAX {
                // A new transaction: its type, its round trip, then its CPU.
                let x = rng.f64();
                vu.txn = cum.iter().position(|&c| x < c).unwrap_or(cum.len() - 1);
                let tp = &profile.transactions[vu.txn];
                vu.started = t;
                vu.reads_left = draw_count(tp.page_accesses * miss, &mut rng);
                vu.commits = draw_count(tp.commits, &mut rng);
                let home = homes[v];
                wanted[v].clear();
                for &(kind, per) in &type_rows[vu.txn] {
                    let row = if per > 1 { rng.below(per) } else { 0 };
                    wanted[v].push((kind * units + home) * max_rows + row);
                }
                if thinking[v] {
                    thinking[v] = false;
                    active += 1;
                }
                if outside > 0.0 {
                    vu.cpu_pending = true;
                    if in_window(t) {
                        t_out += outside;
                    }
                    push(&mut heap, t + outside, who);
                } else {
                    take_cpu = true;
                }
            } else if vu.cpu_pending {
                vu.cpu_pending = false;
                take_cpu = true;
            }
            if take_cpu {
                let tp = &profile.transactions[vu.txn];
                let usl = usl_at(active as f64);
                if in_window(t) {
                    usl_sum += usl;
                    usl_n += 1;
                }
                let demand = (tp.cpu_us - flush_cpu_us * tp.commits).max(0.0) * 1e-6 / speed * usl;
                cpu_demand[v] = demand;
                cpu_queue.push_back((v, t, demand));
            } else if vu.cpu_pending {
                // On its round trip: the event that brings it back is queued.
            } else if vu.reads_left > 0 {
                vu.reads_left -= 1;
                slice_reads += 1.0;
                let done = reads.io(&mut st, &lats[data], IoClass::ReadMiss, t, &mut rng);
                sink.complete(data, true, page, done - t);
                count_io(&mut pool_ios, data, true, page, done);
                if in_window(t) {
                    t_reads += done - t;
                }
                push(&mut heap, done, who);
            } else if vu.commits > 0 {
                commit_start[v] = t;
                waiting.push((v, profile.transactions[vu.txn].wal_bytes));
            } else {
                // Done: its latency, the next transaction.
                if in_window(t) {
                    counts[vu.txn] += 1;
                    batch_txns += 1;
                    hists[vu.txn].record(t - vu.started);
                }
                let k = (t / p.period_s) as usize;
                if txn_periods.len() <= k {
                    txn_periods.resize(k + 1, 0.0);
                }
                txn_periods[k] += 1.0;
                slice_txns += 1.0;
                vu.reads_left = u32::MAX;
                // Think time: negative exponential with the given mean.
                let think = if p.think_time_s > 0.0 { -p.think_time_s * (1.0 - rng.f64()).ln() } else { 0.0 };
                if in_window(t) {
                    t_think += think;
                }
                if think > 0.0 {
                    thinking[v] = true;
                    active -= 1;
                }
                push(&mut heap, t + think, who);
                // Its rows, durable now, go to the next user waiting for each.
                for i in 0..held[v] {
                    let key = wanted[v][i];
                    let Some(e) = row_locks.get_mut(&key) else { continue };
                    match e.1.pop_front() {
                        Some(u) => {
                            e.0 = u;
                            let u = u as usize;
                            held[u] += 1;
                            if in_window(t) {
                                t_locks += t - lock_since[u];
                            }
                            cpu_queue.push_back((u, t, cpu_demand[u]));
                        }
                        None => {
                            row_locks.remove(&key);
                        }
                    }
                }
                held[v] = 0;
            }
        }
        if flush_done {
            flushes += u64::from(in_window(t));
            if in_window(t) {
                flush_time += t - flush_started;
            }
            for v in std::mem::take(&mut flushing) {
                flushed_commits += u64::from(in_window(t));
                if in_window(t) {
                    t_commit += t - commit_start[v];
                }
                vus[v].commits -= 1;
                push(&mut heap, t, v as u32);
            }
            flush_busy = false;
        }
        // The vCPUs, first come first served; a user takes its hot rows as it
        // starts, and where one is held waits for it off the vCPU.
        while cpu_idle > 0 {
            let Some((u, since, demand)) = cpu_queue.pop_front() else { break };
            if u == FLUSHER {
                cpu_idle -= 1;
                cpu_busy += (t + demand).min(w1c.get()).max(w0) - t.min(w1c.get()).max(w0);
                push(&mut heap, t + demand, FLUSH_CPU);
                continue;
            }
            if !acquire(&mut row_locks, &wanted[u], &mut held[u], u as u32) {
                lock_since[u] = t;
                continue;
            }
            cpu_idle -= 1;
            vus[u].on_cpu = true;
            if in_window(since) {
                t_cpu_q += t - since;
                t_cpu += demand;
            }
            cpu_busy += (t + demand).min(w1c.get()).max(w0) - t.min(w1c.get()).max(w0);
            push(&mut heap, t + demand, u as u32);
        }
        // The log writer: one flush at a time, serving every commit waiting:
        // its write now, its CPU when the device wakes it (above).
        if !flush_busy && !waiting.is_empty() {
            let flush_bytes = waiting.iter().map(|w| w.1).sum::<f64>().max(512.0);
            flushing = waiting.drain(..).map(|w| w.0).collect();
            flush_busy = true;
            flush_started = t;
            let done = log_write(&mut st, &mut log_paths, &mut labels, &mut rng, &mut sink, &mut pool_ios, flush_bytes, t);
            // The binary log's sync, once every `sync_binlog` groups.
            let binlog_now = binlog_every > 0 && {
                binlog_groups += 1;
                binlog_groups % u64::from(binlog_every) == 0
            };
            binlog_bytes = binlog_per_txn.map_or(flush_bytes, |b| b * flushing.len() as f64);
            // The profile's wait on each flush at this many users
            // (`flush_wait_us`; none unless given): its device write, then it.
            push(&mut heap, done + profile.flush_wait_us_at(active as f64) * 1e-6, if binlog_now { BINLOG } else { FLUSH });
        }
        // The flusher, awake: the slice's share of the checkpoint's writes
        // and its dirty evictions, queued at once (nobody waits for them;
        // what comes after on the pool queues behind them).
        if flusher_awake {
            flusher_awake = false;
            let dt = t - last_wake;
            if t >= delay && dt > 0.0 {
                let s = wb.slice(slice_txns / dt, dt, slice_reads);
                owed_ops += s.ops;
                owed_pages += s.pages;
                owed_evictions += s.evictions;
            }
            // The writes due now: all that are owed, or the page cleaner's
            // share of them (`WritePath::pages_to_flush`).
            let due_ops = match &wp {
                Some(w) if owed_pages > 0.0 => owed_ops * w.pages_to_flush(owed_pages, pages_per_redo_byte, dt, delay == 0.0) / owed_pages,
                _ => owed_ops,
            };
            // One size for the slice's writes: its pages over its I/Os.
            let ops_now = due_ops.floor();
            let size = if owed_ops > 0.0 { (owed_pages / owed_ops).max(1.0) * page } else { page };
            let class = (size as u64).next_power_of_two().clamp(page as u64, wb.max_io_bytes as u64);
            if doublewrite {
                dblwr_owed += ops_now * size / page + owed_evictions.floor();
            }
            // The doublewrite buffer first: the pages' copies in blocks,
            // each one sequential durable write.
            while dblwr_owed >= 1.0 {
                let pages = dblwr_owed.min(dblwr_block_pages).floor();
                dblwr_owed -= pages;
                let class = ((pages * page) as u64).next_power_of_two();
                let path = dblwr_paths.entry(class).or_insert_with(|| Path::new(&mut st, dep, data, class as f64, true, &mut labels));
                let done = path.io(&mut st, &data_durable, IoClass::Write, t, &mut rng);
                sink.complete(data, false, pages * page, done - t);
                count_io(&mut pool_ios, data, false, pages * page, done);
            }
            (slice_txns, slice_reads, last_wake) = (0.0, 0.0, t);
            if ops_now >= 1.0 {
                let path = ckpt_paths.entry(class).or_insert_with(|| Path::new(&mut st, dep, data, class as f64, false, &mut labels));
                for _ in 0..ops_now as u64 {
                    owed_ops -= 1.0;
                    owed_pages = (owed_pages - size / page).max(0.0);
                    let done = path.io(&mut st, &lats[data], IoClass::Write, t, &mut rng);
                    sink.complete(data, false, size, done - t);
                    count_io(&mut pool_ios, data, false, size, done);
                }
            }
            while owed_evictions >= 1.0 {
                owed_evictions -= 1.0;
                let done = bg.io(&mut st, &lats[data], IoClass::Write, t, &mut rng);
                sink.complete(data, false, page, done - t);
                count_io(&mut pool_ios, data, false, page, done);
            }
        }
    }

    let w1 = w1c.get();
    let end = stopped_at.unwrap_or(w1).min(w1);
    let w = (end - w0).max(1e-9);
    let total: u64 = counts.iter().sum();
    let tpm = total as f64 * 60.0 / w;
    let cpu_utilization = cpu_busy / (w * vcpus as f64);
    let busy = |id: PacerId| {
        let pc = st.pacers.get(id);
        ((pc.at_peak_s + pc.at_base_s) / w).min(1.0)
    };
    let pools = dep
        .pools
        .iter()
        .enumerate()
        .map(|(i, pool)| {
            let utilization = labels.iter().filter(|(_, r)| r.id.pool() == Some(i as u32)).map(|(&id, _)| busy(id)).fold(0.0, f64::max);
            pool_ios[i].result(pool.role.name(), w, utilization)
        })
        .collect();
    let top = labels.iter().map(|(&id, r)| (busy(id), id, r)).max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
    let commits_per_flush = if flushes > 0 { flushed_commits as f64 / flushes as f64 } else { 0.0 };
    let flush_s = if flushes > 0 { flush_time / flushes as f64 } else { 0.0 };
    let per = |x: f64| if total > 0 { x / total as f64 } else { 0.0 };
    let (q, c, r, cm, th, out) = (per(t_cpu_q), per(t_cpu), per(t_reads), per(t_commit), per(t_think), per(t_out));
    let lk = per(t_locks);
    let all = q + c + r + cm + th + out + lk;
    let pct = |x: f64| 100.0 * x / all.max(1e-12);
    let ms = |s: f64| if s >= 1e-3 { format!("{:.2} ms", s * 1e3) } else { format!("{:.0} µs", s * 1e6) };
    let usl = if usl_n > 0 { usl_sum / usl_n as f64 } else { usl_at(n as f64) };
    let usl_note = if usl > 1.05 { format!(", concurrency penalty ×{usl:.2} at {n} users") } else { String::new() };
    let binding = match top {
        _ if cpu_utilization >= 0.9 => format!("host CPU {vcpus} vCPUs at {:.0} %{usl_note}", 100.0 * cpu_utilization),
        Some((u, id, res)) if u >= 0.9 => limit_words(dep, &st, u, id, res),
        _ if lk > 0.0 && lk >= (c + q).max(r).max(cm).max(out) => format!(
            "row locks: {} of {} per transaction waiting for another user's {} row until its commit is durable ({:.0} %), {n} users on {units} home {}{}",
            ms(lk),
            ms(all),
            row_kinds.join(" or "),
            pct(lk),
            profile.scale_unit,
            if units == 1 { "" } else { "s" }
        ),
        _ if th > 0.5 * all => format!("think time: {} of {} per transaction, no limit reached", ms(th), ms(all)),
        _ if out >= (c + q).max(r).max(cm) => format!("round trip outside the server: {} of {} per transaction ({:.0} %), no limit reached", ms(out), ms(all), pct(out)),
        _ if cm >= r.max(c + q) && flushes > 0 => {
            format!("log flush latency: {} a flush, {commits_per_flush:.1} commits per flush, {:.0} % of a transaction's time", ms(flush_s), pct(cm))
        }
        _ if r >= c + q && r > 0.0 => {
            let reads = if total > 0 { pool_ios[data].reads / total as f64 } else { 0.0 };
            format!("data read latency: {reads:.1} reads per transaction, {} of reads, {:.0} % of a transaction's time", ms(r), pct(r))
        }
        _ => format!("CPU time: {} per transaction on {vcpus} vCPUs at {:.0} %{usl_note}", ms(c + q), 100.0 * cpu_utilization),
    };
    let mut series = sink.finish(Secs(end), &st.pacers);
    let phases = db_phases(w0, end, snaps, DbSnap { t: end, counts: counts.clone(), hists: hists.clone(), pool_ios: pool_ios.clone(), emptied: Vec::new() });
    txn_periods.truncate(((end / p.period_s).ceil() as usize).max(1));
    series.push(series::Series {
        config: dep.name.clone(),
        resource: "db".into(),
        metric: "Transactions".into(),
        unit: "Count".into(),
        period_s: p.period_s,
        timestamps: (0..txn_periods.len()).map(|i| storlab_record::Stamp::Seconds(i as f64 * p.period_s)).collect(),
        values: txn_periods,
    });
    DbResult {
        config: dep.name.clone(),
        vus: p.vus,
        nopm: tpm * profile.nopm_per_txn,
        tpm,
        txn: profile
            .transactions
            .iter()
            .zip(&hists)
            .zip(&counts)
            .map(|((tp, h), &count)| TxnResult { name: tp.name.clone(), count, latency: h.summary().rounded(3) })
            .collect(),
        cpu_utilization,
        pools,
        binding,
        miss_ratio: miss,
        commits_per_flush,
        flushes,
        flush_s,
        time_cpu_queue_s: q,
        time_locks_s: lk,
        time_cpu_s: c,
        time_reads_s: r,
        time_commit_s: cm,
        time_think_s: th,
        time_outside_s: out,
        usl_factor: usl,
        steady_at_s: steady_at,
        interrupted: stopped_at.is_some(),
        window_s: w,
        events,
        series,
        phases,
    }
}

/// Runs the profile on `dep` with the catalog's service times.
pub fn simulate_db(cat: &storlab_model::Catalog, dep: &Deployment, profile: &Profile, p: &DbParams) -> Result<DbResult, crate::SimError> {
    let mut unverified = Vec::new();
    let lats = dep.pools.iter().map(|pool| crate::latencies(cat, dep, pool, &mut unverified)).collect::<Result<Vec<_>, _>>()?;
    Ok(run_db(dep, profile, p, &lats))
}
