//! The bulk import on a modelled deployment (`[workload.import]`): how long
//! loading `size_gib` of input takes, and what binds.
//!
//! Each of `streams` COPY streams loops over 1 MiB chunks of the input:
//! 1. reads the chunk, one sequential 1 MiB read on the input pool, waited for;
//! 2. parses and inserts it on one vCPU: the profile's CPU per MiB (a COPY
//!    runs on one core, so one stream never uses more than one vCPU);
//! 3. leaves the profile's WAL, table and index bytes for the writers: WAL
//!    as sequential 1 MiB writes on the log pool, table pages as sequential
//!    256 KiB writes on the data pool (the kernel merges the 8 KiB pages of a
//!    growing heap), index pages as random 8 KiB writes on the data pool,
//!    each kind with its own `WRITES_IN_FLIGHT` (WAL, heap and index pages
//!    are written by different processes and do not wait for one another). A stream waits while more than
//!    `DIRTY_LIMIT` bytes are not yet written (the OS's dirty-page limit).
//! The load ends when the last byte is written. Every I/O goes through the
//! same pacers as the database model's, so buckets drain the same way.

use crate::db::{pool_for, pool_results, DbPoolResult, Path, PoolIo};
use crate::engine::{DeploymentState, Latencies, Sink};
use crate::rng::Rng;
use crate::series;
use crate::queue::EventQueue;
use storlab_model::deployment::Deployment;
use storlab_model::pacing::Secs;
use storlab_model::resources::IoClass;
use storlab_model::scenario::Role;
use storlab_stats::{Histogram, LatencySummary};
use storlab_workload::import::Import;

pub const CHUNK: f64 = 1048576.0;
pub const WRITES_IN_FLIGHT: usize = 32;
pub const DIRTY_LIMIT: f64 = 256.0 * 1048576.0;
const UNITS: [f64; 3] = [1048576.0, 262144.0, 8192.0];

pub struct ImportResult {
    pub load_s: f64,
    pub input_bytes: f64,
    pub cpu_utilization: f64,
    /// CPU time over load time per stream: 1 when every stream is always on its vCPU.
    pub stream_cpu: f64,
    pub pools: Vec<DbPoolResult>,
    pub ios: u64,
    pub read_ios: u64,
    pub binding: String,
    /// Time per chunk: read, CPU (with its queue) and any wait for the writers.
    pub chunk_latency: LatencySummary,
    pub series: Vec<series::Series>,
    pub interrupted: bool,
    pub events: u64,
}

#[derive(Clone, Copy, PartialEq)]
enum Phase {
    Start,
    Read,
    Cpu,
    Blocked,
    Done,
}

/// Loads the input on `dep`; `pools`: (input, data, log) pool indexes.
pub fn run_import(dep: &Deployment, im: &Import, pools: (usize, usize, usize), lats: &[Latencies], period: f64, progress: &mut dyn FnMut(f64) -> bool) -> ImportResult {
    let (input, data, log) = pools;
    let mut st = DeploymentState::for_deployment(dep);
    let mut sink = crate::series_sink(dep, &mut st, period);
    let mut labels = crate::db::IntMap::default();
    let mut rng = Rng::new(im.seed);
    let mut read_path = Path::new(&mut st, dep, input, CHUNK, true, &mut labels);
    let mut write_paths = [
        Path::new(&mut st, dep, log, UNITS[0], true, &mut labels),
        Path::new(&mut st, dep, data, UNITS[1], true, &mut labels),
        Path::new(&mut st, dep, data, UNITS[2], false, &mut labels),
    ];
    let write_pool = [log, data, data];
    let b = &im.profile.per_input_byte;
    let ratios = [b.wal_bytes, b.table_bytes, b.index_bytes];
    let vcpus = dep.host.vcpus.unwrap_or(1.0).max(1.0) as usize;
    let s = im.streams as usize;
    let chunks_total = (im.size_bytes / CHUNK).ceil() as u64;
    let last_chunk = im.size_bytes - (chunks_total.saturating_sub(1)) as f64 * CHUNK;
    let mut chunks_left = chunks_total;

    let mut heap: EventQueue<u32> = EventQueue::with_capacity(s + 3 * WRITES_IN_FLIGHT);
    let push = |heap: &mut EventQueue<u32>, t: f64, who: u32| heap.push(Secs(t), who);
    const WRITE: u32 = 1 << 30;
    let mut phase = vec![Phase::Start; s];
    let mut chunk_size = vec![CHUNK; s];
    let mut chunk_start = vec![0.0f64; s];
    let mut cpu_free = vec![0.0f64; vcpus];
    let mut cpu_busy = 0.0;
    let mut backlog = [0.0f64; 3];
    let mut slots: [Vec<u32>; 3] = std::array::from_fn(|_| (0..WRITES_IN_FLIGHT as u32).rev().collect());
    let mut pool_ios = vec![PoolIo::default(); dep.pools.len()];
    let (mut ios, mut read_ios, mut events) = (0u64, 0u64, 0u64);
    let mut hist = Histogram::default();
    let (mut t_read, mut t_cpu, mut t_blocked) = (0.0f64, 0.0f64, 0.0f64);
    let mut blocked_since = vec![0.0f64; s];
    let mut interrupted = false;
    let mut now = 0.0;
    for i in 0..s {
        push(&mut heap, 0.0, i as u32);
    }

    while let Some((Secs(t), who)) = heap.pop() {
        now = t;
        events += 1;
        if events % 4096 == 0 && !progress(t) {
            interrupted = true;
            break;
        }
        sink.advance(Secs(t), &st.pacers);
        if who >= WRITE {
            let x = (who - WRITE) as usize;
            slots[x / WRITES_IN_FLIGHT].push((x % WRITES_IN_FLIGHT) as u32);
        } else {
            let i = who as usize;
            match phase[i] {
                Phase::Start | Phase::Blocked => {}
                Phase::Read => {
                    t_read += t - chunk_start[i];
                    let (k, free) = cpu_free.iter().enumerate().min_by(|a, b| a.1.total_cmp(b.1)).map(|(k, f)| (k, *f)).unwrap();
                    let demand = im.profile.cpu_us_per_mib * 1e-6 * chunk_size[i] / CHUNK;
                    let start = t.max(free);
                    cpu_free[k] = start + demand;
                    cpu_busy += demand;
                    t_cpu += start + demand - t;
                    phase[i] = Phase::Cpu;
                    push(&mut heap, start + demand, who);
                    continue;
                }
                Phase::Cpu => {
                    for (k, r) in ratios.iter().enumerate() {
                        backlog[k] += chunk_size[i] * r;
                    }
                    hist.record(t - chunk_start[i]);
                    phase[i] = Phase::Start;
                }
                Phase::Done => continue,
            }
            if phase[i] == Phase::Start {
                if chunks_left == 0 {
                    phase[i] = Phase::Done;
                } else if backlog.iter().sum::<f64>() > DIRTY_LIMIT {
                    phase[i] = Phase::Blocked;
                    blocked_since[i] = t;
                } else {
                    chunks_left -= 1;
                    chunk_size[i] = if chunks_left == 0 { last_chunk } else { CHUNK };
                    chunk_start[i] = t;
                    let done = read_path.io(&mut st, &lats[input], IoClass::ReadMiss, t, &mut rng);
                    sink.complete(input, true, chunk_size[i], done - t);
                    pool_ios[input].count(true, chunk_size[i]);
                    ios += 1;
                    read_ios += 1;
                    phase[i] = Phase::Read;
                    push(&mut heap, done, who);
                }
            }
        }
        // The writers: whole units while the streams run, the remainders at the end.
        let reading = phase.iter().any(|p| *p != Phase::Done);
        for k in 0..3 {
            while backlog[k] >= UNITS[k] || (!reading && backlog[k] > 0.0) {
                let Some(slot) = slots[k].pop() else { break };
                let size = backlog[k].min(UNITS[k]);
                backlog[k] -= size;
                let pool = write_pool[k];
                let done = write_paths[k].io(&mut st, &lats[pool], IoClass::Write, t, &mut rng);
                sink.complete(pool, false, size, done - t);
                pool_ios[pool].count(false, size);
                ios += 1;
                push(&mut heap, done, WRITE + (k * WRITES_IN_FLIGHT) as u32 + slot);
            }
        }
        // Streams held back by the dirty limit go on once the writers catch up.
        if backlog.iter().sum::<f64>() <= DIRTY_LIMIT {
            for i in 0..s {
                if phase[i] == Phase::Blocked {
                    t_blocked += t - blocked_since[i];
                    phase[i] = Phase::Start;
                    push(&mut heap, t, i as u32);
                }
            }
        }
    }

    let w = now.max(1e-9);
    let cpu_utilization = (cpu_busy / (w * vcpus as f64)).min(1.0);
    let stream_cpu = (cpu_busy / (w * s as f64)).min(1.0);
    let (pools, top) = pool_results(dep, &st, &labels, &pool_ios, w);
    let spent = Spent { streams: s, vcpus, stream_cpu, cpu_utilization, read_s: t_read, cpu_s: t_cpu, blocked_s: t_blocked, window_s: w };
    let binding = import_binding(dep, &st, top, &spent);
    let series = sink.finish(Secs(w), &st.pacers);
    ImportResult {
        load_s: w,
        input_bytes: im.size_bytes,
        cpu_utilization,
        stream_cpu,
        pools,
        ios,
        read_ios,
        binding,
        chunk_latency: hist.summary().rounded(3),
        series,
        interrupted,
        events,
    }
}

/// Where a load's time went: its streams' reading, CPU and waiting for the
/// writers (summed over the streams, s), and how busy its CPUs were.
struct Spent {
    streams: usize,
    vcpus: usize,
    stream_cpu: f64,
    cpu_utilization: f64,
    read_s: f64,
    cpu_s: f64,
    blocked_s: f64,
    window_s: f64,
}

/// What bound a load, in words: the CPU, a limit at least 90 % busy, the
/// writers, or the input's read latency.
fn import_binding(dep: &Deployment, st: &DeploymentState, top: Option<(f64, storlab_model::pacing::PacerId, &storlab_model::resources::Resource)>, x: &Spent) -> String {
    let (s, vcpus) = (x.streams, x.vcpus);
    let pl = |n: usize| if n == 1 { "" } else { "s" };
    match top {
        _ if x.stream_cpu >= 0.9 => format!("CPU: {s} COPY stream{}, each on one vCPU at {:.0} % (a COPY runs on one core; {vcpus} vCPUs)", pl(s), 100.0 * x.stream_cpu),
        _ if x.cpu_utilization >= 0.9 => format!("host CPU {vcpus} vCPUs at {:.0} %", 100.0 * x.cpu_utilization),
        Some((u, id, res)) if u >= 0.9 => crate::db::limit_words(dep, st, u, id, res),
        // The writers held the streams back: by the busiest limit where one
        // was at least half busy, else by the pools' write latency itself.
        _ if x.blocked_s > x.read_s.max(x.cpu_s) => {
            let waited = 100.0 * x.blocked_s / (x.window_s * s as f64);
            match top {
                Some((u, id, res)) if u >= 0.5 => {
                    format!("the streams waited for the writers {waited:.0} % of the time, the writers held by {}", crate::db::limit_words(dep, st, u, id, res))
                }
                _ => format!("write latency: the streams waited for the writers {waited:.0} % of the time"),
            }
        }
        _ if x.read_s > x.cpu_s => format!("input read latency: {s} stream{} reading 1 MiB at a time", pl(s)),
        _ => format!("CPU: {s} COPY stream{} at {:.0} % of a vCPU each", pl(s), 100.0 * x.stream_cpu),
    }
}

/// The (input, data, log) pools of a config, or the role it lacks.
pub fn pools_of(dep: &Deployment, input_role: &str) -> Result<(usize, usize, usize), String> {
    let input = dep.pools.iter().position(|p| p.role.name() == input_role).or_else(|| dep.pools.iter().position(|p| p.role == Role::All));
    let has_data = dep.pools.iter().any(|p| p.role == Role::Data || p.role == Role::All);
    match (input, has_data) {
        (Some(i), true) => {
            let data = pool_for(dep, Role::Data, 0);
            Ok((i, data, pool_for(dep, Role::Log, data)))
        }
        (None, _) => Err(input_role.to_string()),
        (_, false) => Err("data".to_string()),
    }
}
