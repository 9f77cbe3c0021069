//! The database model: a recorded profile (docs/profile.md) as N
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

mod run;
pub use run::host_cache_hit;

use crate::engine::{DeploymentState, Latencies, Sink};
use crate::iorules::Rules;
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
    pub(crate) fn new(profile: &Profile, rules: &Rules, memory: f64, homes: &[u64], data_bytes: f64) -> WritebackModel {
        let mix = |f: &dyn Fn(&storlab_workload::profile::TxnProfile) -> f64| profile.transactions.iter().map(|t| t.share * f(t)).sum::<f64>();
        let curve = profile.writeback.clone();
        let units = if profile.scale_unit == "warehouse" {
            homes.iter().collect::<std::collections::HashSet<_>>().len().max(1) as f64
        } else {
            1.0
        };
        let page = rules.page_bytes;
        WritebackModel {
            pages_per_txn: mix(&|t| t.pages_dirtied).max(0.0),
            wal_per_txn: mix(&|t| t.wal_bytes).max(0.0),
            units,
            timeout_s: rules.checkpoint_s,
            wal_trigger_bytes: rules.checkpoint_log_bytes,
            max_io_bytes: rules.max_writeback_io.max(page),
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
    /// The caches start empty (`cold_cache`).
    pub cold_cache: bool,
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
    /// With `cold_cache`: when the database cache was full, s from the
    /// start (None: still filling at the end).
    pub cache_full_s: Option<f64>,
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
    pub(crate) fn new(st: &mut DeploymentState, dep: &Deployment, pool: usize, size: f64, sequential: bool, labels: &mut IntMap<PacerId, Resource>) -> Path {
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
type RowLocks = IntMap<u64, (u32, VecDeque<u32>)>;

/// A hasher for the model's own integer keys (row ids, I/O sizes, pacer
/// ids): FxHash's one rotate, xor and multiply per word in place of
/// SipHash, which guards a map against keys chosen by an attacker — these
/// are the model's, and SipHash was a tenth of a sweep's time.
#[derive(Default, Clone, Copy)]
pub(crate) struct IntHasher(u64);

impl IntHasher {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(Self::K);
    }
}

impl std::hash::Hasher for IntHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.add(u64::from(b));
        }
    }
    fn write_u32(&mut self, x: u32) {
        self.add(u64::from(x));
    }
    fn write_u64(&mut self, x: u64) {
        self.add(x);
    }
    fn write_usize(&mut self, x: usize) {
        self.add(x as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A map keyed by the model's integers (`IntHasher`).
pub(crate) type IntMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<IntHasher>>;

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
            // A member's label names its count already ("… × 4: … each").
            let named = label.contains(&format!(" × {}", pool.count));
            let count = if pool.count > 1 && res.member.is_some() && !named { format!("{} × ", pool.count) } else { String::new() };
            format!("{} pool: {count}{label}, {:.0} % busy", pool.role.name(), 100.0 * busy)
        }
        None => format!("{label}, {:.0} % busy", 100.0 * busy),
    }
}

/// Each pool's I/O over a window of `w` seconds with its busiest limit's
/// share of the window, and the busiest limit of all (busy share, pacer,
/// what it is).
pub(crate) fn pool_results<'r>(
    dep: &Deployment,
    st: &DeploymentState,
    labels: &'r IntMap<PacerId, Resource>,
    pool_ios: &[PoolIo],
    w: f64,
) -> (Vec<DbPoolResult>, Option<(f64, PacerId, &'r Resource)>) {
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
    (pools, top)
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
    run::DbRun::new(dep, profile, p, lats).run(progress)
}

/// Runs the profile on `dep` with the catalog's service times.
pub fn simulate_db(cat: &storlab_model::Catalog, dep: &Deployment, profile: &Profile, p: &DbParams) -> Result<DbResult, crate::SimError> {
    let mut unverified = Vec::new();
    let lats = dep.pools.iter().map(|pool| crate::latencies(cat, dep, pool, &mut unverified)).collect::<Result<Vec<_>, _>>()?;
    Ok(run_db(dep, profile, p, &lats))
}
