//! Pacing real I/O with the model's resources: what the simulator does on
//! its virtual clock, done on the wall clock. Time is seconds since the
//! mount (`Secs`). An I/O arriving at `t` is admitted by
//! `storlab_model::pacing` — the host and path stage, then each member
//! device it touches, with the same caps, buckets and I/O accounting the
//! simulator uses (there is no second model here) — and completes at its
//! admission plus a latency draw from the device's distribution.

use std::collections::HashMap;
use storlab_model::deployment::{Deployment, Pool};
use storlab_model::pacing::{PacerId, PacerSet, Stages};
pub use storlab_model::pacing::Secs;
use storlab_model::resources::{IoClass, PoolPlan, Resource, Unit};
use storlab_model::scenario::HostCacheMode;
use storlab_model::Catalog;
use storlab_model::dist::ServiceTime;
use storlab_stats::rng::Rng;

use crate::EmulateError;

/// One I/O as the pacer sees it.
#[derive(Debug, Clone, Copy)]
pub struct Io {
    pub pool: usize,
    pub class: IoClass,
    pub offset: u64,
    pub len: u64,
    pub sequential: bool,
}

/// A plan and its stages on the deployment's pacers.
struct Costs {
    plan: PoolPlan,
    stages: Stages,
}

/// Service times of a pool's device and of its host cache.
pub struct PoolLatency {
    read: ServiceTime,
    write: ServiceTime,
    hit: Option<ServiceTime>,
    /// Median read and write service time, for the docs and the status line.
    pub read_median_us: f64,
    pub write_median_us: f64,
}

struct PoolState {
    index: usize,
    plans: HashMap<(u64, bool), Costs>,
    lat: PoolLatency,
    /// Pacers holding this pool's device buckets (BurstBalance).
    buckets: Vec<PacerId>,
}

/// Queueing per global pacer since the last look, for "what binds".
#[derive(Default)]
struct Waits {
    wait: HashMap<PacerId, f64>,
    resource: HashMap<PacerId, Resource>,
}

pub struct Pacer {
    dep: Deployment,
    st: PacerSet,
    pools: Vec<PoolState>,
    rng: Rng,
    waits: Waits,
    /// Caps off: no resource, no latency (the overhead baseline).
    pub unpaced: bool,
}

fn latencies(cat: &Catalog, dep: &Deployment, pool: &Pool) -> Result<PoolLatency, EmulateError> {
    let l = storlab_model::deployment::pool_latency(cat, dep, pool).map_err(|e| EmulateError::NoLatency { device: e.0 })?;
    let m = l.device;
    Ok(PoolLatency {
        read: ServiceTime::new(&m.read).with_size_term(m.read_us_per_mib),
        write: ServiceTime::new(&m.write).with_size_term(m.write_us_per_mib),
        hit: l.host_cache.map(|h| ServiceTime::new(&h.read)),
        read_median_us: m.read.mu.exp(),
        write_median_us: m.write.mu.exp(),
    })
}

/// Sizes are costed in 4 KiB steps: a plan per step, built when first seen.
const SIZE_STEP: u64 = 4096;

impl Pacer {
    /// The pacer of `pools` (indices into `dep.pools`). `initial_fraction`
    /// starts every bucket that fraction full (`--initial-credits`).
    pub fn new(cat: &Catalog, dep: Deployment, pools: &[usize], initial_fraction: Option<f64>, seed: u64) -> Result<Pacer, EmulateError> {
        let mut out = Vec::new();
        for &pi in pools {
            let lat = latencies(cat, &dep, &dep.pools[pi])?;
            out.push(PoolState { index: pi, plans: HashMap::new(), lat, buckets: Vec::new() });
        }
        let mut p = Pacer { dep, st: PacerSet::new(), pools: out, rng: Rng::new(seed), waits: Waits::default(), unpaced: false };
        // Map every pool's resources once, so buckets exist (and start at
        // the asked-for balance) before the first I/O.
        for k in 0..p.pools.len() {
            p.costs(k, SIZE_STEP, false);
            let c = &p.pools[k].plans[&(SIZE_STEP, false)];
            let index = p.pools[k].index;
            let buckets = c.plan.resources.iter().filter(|r| r.member.is_some() && r.bucket.is_some()).filter_map(|r| p.st.find(r.id.in_pool(index as u32))).collect();
            p.pools[k].buckets = buckets;
        }
        if let Some(f) = initial_fraction {
            p.st.set_balance_percent(100.0 * f, Secs(0.0));
        }
        Ok(p)
    }

    pub fn latency(&self, pool: usize) -> &PoolLatency {
        &self.pools[pool].lat
    }

    pub fn pool_name(&self, pool: usize) -> String {
        format!("pool {}", self.pool(pool).role.name())
    }

    pub fn pool(&self, pool: usize) -> &Pool {
        &self.dep.pools[self.pools[pool].index]
    }

    pub fn deployment(&self) -> &Deployment {
        &self.dep
    }

    pub fn host_cache(&self, pool: usize) -> HostCacheMode {
        self.pool(pool).host_cache
    }

    /// The host cache size in bytes (Azure's cache size per VM), when the
    /// pool uses it.
    pub fn host_cache_bytes(&self, pool: usize) -> Option<u64> {
        if self.pool(pool).host_cache == HostCacheMode::None {
            return None;
        }
        Some(self.dep.host.cache_gib.map_or(u64::MAX, |g| (g * (1u64 << 30) as f64) as u64))
    }

    fn costs(&mut self, k: usize, size: u64, seq: bool) -> &Costs {
        let key = (size, seq);
        if !self.pools[k].plans.contains_key(&key) {
            let index = self.pools[k].index;
            let plan = PoolPlan::new(&self.dep, &self.dep.pools[index], size as f64, seq);
            let ids = self.st.register(index, &plan);
            for (i, r) in plan.resources.iter().enumerate() {
                self.waits.resource.entry(ids[i]).or_insert_with(|| r.clone());
            }
            let stages = Stages::new(&plan, &ids);
            self.pools[k].plans.insert(key, Costs { plan, stages });
        }
        &self.pools[k].plans[&key]
    }

    /// When an I/O arriving at `t` completes on the modelled deployment.
    pub fn complete_at(&mut self, io: Io, t: Secs) -> Secs {
        self.admit_and_complete(io, t).1
    }

    /// When the deployment's limits admit an I/O arriving at `t` (later
    /// than `t` when it queued behind others or waited for tokens), and
    /// when it completes.
    pub fn admit_and_complete(&mut self, io: Io, t: Secs) -> (Secs, Secs) {
        if self.unpaced {
            return (t, t);
        }
        let size = io.len.max(1).div_ceil(SIZE_STEP) * SIZE_STEP;
        let k = io.pool;
        let c = self.costs(k, size, io.sequential);
        let phases = c.stages.phases() as u64;
        // The I/O's place in the layout: its offset in I/Os of its size.
        let phase = if phases <= 1 { 0 } else { ((io.offset / size) % phases) as usize };
        let host: Vec<(PacerId, f64)> = c.stages.host(phase, io.class).to_vec();
        let members: Vec<Vec<(PacerId, f64)>> = c.stages.members(phase, io.class).map(|(_, e)| e.to_vec()).collect();
        let a = self.pass(&host, t.0);
        let ps = &self.pools[k];
        let mut done = a;
        let mut admitted = a;
        if members.is_empty() {
            let d = ps.lat.hit.as_ref().unwrap_or(&ps.lat.read);
            done = a + d.draw(&mut self.rng);
        }
        // Each member gets its piece of the I/O.
        let piece = io.len as f64 / members.len().max(1) as f64;
        for m in &members {
            let am = self.pass(m, a);
            admitted = admitted.max(am);
            let ps = &self.pools[k];
            let d = if io.class == IoClass::Write { &ps.lat.write } else { &ps.lat.read };
            done = done.max(am + d.draw_sized(&mut self.rng, piece));
        }
        (Secs(admitted), Secs(done))
    }

    /// One stage, entry by entry (as `PacerSet::pass` does over them all),
    /// noting which resource made the I/O wait.
    fn pass(&mut self, entries: &[(PacerId, f64)], t: f64) -> f64 {
        let mut a = t;
        for e in entries {
            let b = self.st.pass(std::slice::from_ref(e), Secs(a)).0;
            if b > a {
                *self.waits.wait.entry(e.0).or_insert(0.0) += b - a;
            }
            a = b;
        }
        a
    }

    /// BurstBalance of a pool at `t`: the lowest of its devices' buckets,
    /// `None` without a bucket.
    pub fn burst_balance(&self, pool: usize, t: Secs) -> Option<f64> {
        self.pools[pool].buckets.iter().filter_map(|&b| self.st.get(b).balance_percent(t)).reduce(f64::min)
    }

    /// The resource that imposed the most queueing since the last call, in
    /// the words `storlab limits` uses, and the queueing in seconds.
    pub fn take_binding(&mut self, t: Secs) -> Option<(String, f64)> {
        let top = self.waits.wait.iter().max_by(|a, b| a.1.total_cmp(b.1)).map(|(&g, &w)| (g, w));
        self.waits.wait.clear();
        let (g, w) = top?;
        let p = self.st.get(g);
        // A linked resource (gp2 throughput) bursts while its link's bucket holds credits.
        let full = p.has_credit(t) && p.linked().map_or(true, |l| self.st.get(l).has_credit(t));
        let label = self.waits.resource.get(&g).map(|r| r.label(full)).unwrap_or_default();
        Some((label, w))
    }

    /// Whether any of the pools' plans carries a limit in IOPS (for tests).
    pub fn has_iops_limit(&self) -> bool {
        self.pools.iter().any(|p| p.plans.values().any(|c| c.plan.resources.iter().any(|r| r.unit == Unit::Iops)))
    }
}
