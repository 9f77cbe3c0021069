//! The analytic screen: for each candidate, the most the deployment could
//! give, from the same resources and costs the simulator spends (bound
//! analysis of a closed network: no resource past its cap, no user faster
//! than its own service times in sequence). It never says less than the
//! simulator would, short of noise, so a candidate it rules out is out;
//! a candidate it lets through goes to the simulator.

pub use storlab_sim::bound::{io_job, JobBound};
use storlab_model::deployment::{pool_latency, Deployment, Pool};
use storlab_model::limits::{pool_ceiling, Assumptions, IoPattern};
use storlab_model::scenario::Role;
use storlab_workload::database::{Database, Vus};

/// What the screen says of one candidate: the throughput bound in the
/// goal's unit, and what gives it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Screened {
    /// Per job for I/O workloads (IOPS and bytes/s), or one entry for a
    /// database (transactions a second).
    pub per_job: Vec<JobBound>,
    pub binding: String,
}

fn data_pool(dep: &Deployment) -> &Pool {
    storlab_model::limits::primary_pool(dep)
}

fn pool_by_role(dep: &Deployment, role: Role) -> Option<&Pool> {
    dep.pools.iter().find(|p| p.role == role)
}

/// The per-transaction demands of a database profile on a host.
#[derive(Debug, Clone, Copy)]
pub struct TxnDemand {
    /// Data pages read (page accesses × the miss ratio at this host's cache).
    pub reads: f64,
    /// Pages dirtied: the most the write-back can write per transaction.
    pub dirtied: f64,
    pub commits: f64,
    pub wal_bytes: f64,
    pub page_bytes: f64,
}

pub fn txn_demand(db: &Database, memory_gib: f64) -> TxnDemand {
    let p = &db.profile;
    let memory = db
        .db_memory_gib
        .unwrap_or(memory_gib * storlab_sim::db::DB_MEMORY_SHARE)
        * (1u64 << 30) as f64;
    let miss = p
        .mrc
        .miss_ratio_at(memory / p.data_bytes(db.scale).max(1.0));
    let sum = |f: &dyn Fn(&storlab_workload::profile::TxnProfile) -> f64| {
        p.transactions.iter().map(|t| t.share * f(t)).sum::<f64>()
    };
    TxnDemand {
        reads: sum(&|t| t.page_accesses) * miss,
        dirtied: sum(&|t| t.pages_dirtied),
        commits: sum(&|t| t.commits),
        wal_bytes: sum(&|t| t.wal_bytes),
        page_bytes: p.data.page_bytes,
    }
}

/// How much more than its baseline a bucket that starts empty can give
/// over a measured window: it earns at the baseline through the ramp-up
/// and the window and holds nothing at the start, so the window's I/O is
/// at most baseline × (ramp-up + window) / window. The shortest window the
/// simulator measures is `duration_s`, or with `steady_state` 12 batches of
/// 10 s if that is shorter.
pub fn empty_bucket_scale(db: &Database, steady_state: bool) -> f64 {
    let min_window = if steady_state {
        db.duration_s.min(storlab_sim::db::STEADY_BATCH_S * storlab_sim::db::STEADY_MIN_BATCHES as f64)
    } else {
        db.duration_s
    };
    (db.rampup_s + min_window) / min_window.max(1e-9)
}

/// The VU counts of the workload's sweep.
pub fn vu_steps(db: &Database) -> Vec<u32> {
    match &db.vus {
        Vus::List(v) => v.clone(),
        Vus::Auto { max } => storlab_workload::database::auto_steps(*max),
    }
}

/// A database's bound, transactions a second at its best VU count: each
/// user no faster than its CPU, reads, commit flush, round trip and think
/// time in sequence (N / R₀); the vCPUs no busier than full; the data
/// pool's reads under its caps.
///
/// `from_empty`: the run starts with every credit bucket empty, and this
/// is the most its window can spend of what the buckets earned (see
/// `empty_bucket_scale`): each cap is then at most its baseline times it.
pub fn database(cat: &storlab_model::Catalog, dep: &Deployment, db: &Database, from_empty: Option<f64>) -> (f64, String) {
    let mut best = (0.0f64, String::new());
    for (_, x, why) in database_steps(cat, dep, db, from_empty) {
        if x > best.0 {
            best = (x, why);
        }
    }
    best
}

/// `database`'s bound at each VU count of the sweep: (users, transactions
/// a second at most, what gives it).
pub fn database_steps(cat: &storlab_model::Catalog, dep: &Deployment, db: &Database, from_empty: Option<f64>) -> Vec<(u32, f64, String)> {
    let p = &db.profile;
    let d = txn_demand(db, dep.host.memory_gib.unwrap_or(0.0));
    let speed = storlab_sim::db::cpu_speed_ratio(dep, p).unwrap_or(1.0);
    let vcpus = dep.host.vcpus.unwrap_or(1.0).max(1.0);
    let data = data_pool(dep);
    let log = pool_by_role(dep, Role::Log).unwrap_or(data);
    // A host read cache serves its share of the misses at its hit latency
    // and against the cached limits alone, as the simulator has it.
    let memory = db.db_memory_gib.unwrap_or(dep.host.memory_gib.unwrap_or(0.0) * storlab_sim::db::DB_MEMORY_SHARE) * (1u64 << 30) as f64;
    let hit = dep.pools.iter().position(|q| std::ptr::eq(q, data)).map_or(0.0, |i| storlab_sim::db::host_cache_hit(dep, i, p, memory, p.data_bytes(db.scale).max(1.0)));
    let read_us = pool_latency(cat, dep, data).map_or(0.0, |l| {
        let miss = l.device.read.mean_us();
        hit * l.host_cache.map_or(miss, |h| h.read.mean_us()) + (1.0 - hit) * miss
    });
    let flush_us = pool_latency(cat, dep, log)
        .map_or(0.0, |l| l.device.flush.unwrap_or(l.device.write).mean_us());
    let page = IoPattern {
        size_bytes: d.page_bytes.max(512.0),
        read: true,
        sequential: false,
    };
    let cap_at = |full: bool| pool_ceiling(dep, data, page, full, Assumptions { read_hit_ratio: hit });
    let mut read_cap = cap_at(true);
    if let Some(k) = from_empty {
        // min over resources of min(burst, k × baseline) = min(the burst
        // ceiling, k × the baseline ceiling).
        let base = cap_at(false);
        if base.value * k < read_cap.value {
            read_cap = storlab_model::limits::Ceiling { value: base.value * k, binding: base.binding };
        }
    }
    let base_cpu_us: f64 = p.transactions.iter().map(|t| t.share * t.cpu_us).sum();
    let mut out = Vec::new();
    for users in vu_steps(db) {
        let n = f64::from(users.max(1));
        let cpu_s = base_cpu_us * p.penalty_factor(n) * p.core_factor(n, vcpus) / speed * 1e-6;
        let r0 = p.outside_us_at(n) * 1e-6
            + cpu_s
            + d.reads * read_us * 1e-6
            + d.commits * flush_us * 1e-6
            + db.think_time_ms * 1e-3;
        let mut x = f64::INFINITY;
        let mut why = String::new();
        let mut bound = |v: f64, w: String| {
            if v < x {
                x = v;
                why = w;
            }
        };
        if r0 > 0.0 {
            bound(
                n / r0,
                format!(
                    "{n} users, each a transaction every {:.2} ms at best",
                    r0 * 1e3
                ),
            );
        }
        if cpu_s > 0.0 {
            bound(
                vcpus / cpu_s,
                format!(
                    "host CPU: {vcpus} vCPUs at {:.0} µs a transaction",
                    cpu_s * 1e6
                ),
            );
        }
        if d.reads > 0.0 && read_cap.value.is_finite() {
            bound(
                read_cap.value / d.reads,
                format!(
                    "data pool reads ({:.2} a transaction): {}",
                    d.reads, read_cap.binding
                ),
            );
        }
        out.push((users, x, why));
    }
    out
}
