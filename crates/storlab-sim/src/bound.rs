//! Bound analysis of one I/O job on a deployment: the most it could do,
//! from the same resources and costs the simulator spends (no resource
//! past its cap at full buckets, no closed loop faster than its I/Os in
//! flight over the device's mean service time). `advise` screens
//! candidates with it; `simulate` sizes a time-based run's event budget
//! with it before the run starts.

use storlab_model::deployment::{pool_latency, Deployment};
use storlab_model::resources::PoolPlan;
use storlab_workload::job::Job;

#[derive(Debug, Clone, serde::Serialize)]
pub struct JobBound {
    pub job: String,
    /// What the pool's caps (and a closed loop's I/Os in flight) allow,
    /// whatever the job asks: its capacity.
    pub cap_iops: f64,
    pub iops: f64,
    pub bw_bytes_s: f64,
    /// A closed loop's least mean latency at that bound: its I/Os in
    /// flight over the bound, or the mean service time if longer.
    pub mean_latency_ms: Option<f64>,
    /// The least p99 the job can have: that mean, or the p99 of the
    /// device's own service time, whichever is longer.
    pub least_p99_ms: f64,
    /// What gives `cap_iops`: the cap that binds, or the I/Os in flight
    /// over the service time.
    pub binding: String,
}

/// An I/O job's bound: the pool's caps for the job's mix of reads and
/// writes (buckets full, as at the start of a run), and the job's own
/// I/Os in flight over the device's mean service time (Little's law).
pub fn io_job(cat: &storlab_model::Catalog, dep: &Deployment, job: &Job) -> JobBound {
    let pool = job
        .pool
        .as_deref()
        .and_then(|r| dep.pools.iter().find(|p| p.role.name() == r))
        .unwrap_or_else(|| storlab_model::limits::primary_pool(dep));
    let read = f64::from(job.rw.read_percent(job.rwmixread)) / 100.0;
    let plan = PoolPlan::new(dep, pool, job.bs_bytes as f64, !job.rw.is_random());
    let hit = if plan.cached {
        dep.host.cache_gib.map_or(1.0, |g| {
            (g * (1u64 << 30) as f64 / job.size_bytes.max(1) as f64).min(1.0)
        })
    } else {
        0.0
    };
    let costs = plan.mean_costs([read * hit, read * (1.0 - hit), 1.0 - read]);
    let mut iops = f64::INFINITY;
    let mut service_us = 0.0;
    let mut service_p99_us = 0.0f64;
    let outstanding = f64::from(job.iodepth.max(1) * job.numjobs.max(1));
    let mut binding = String::new();
    for (r, c) in plan.resources.iter().zip(&costs) {
        if *c > 0.0 && r.cap.at(true) / c < iops {
            iops = r.cap.at(true) / c;
            binding = r.label(true);
        }
    }
    if let Ok(lat) = pool_latency(cat, dep, pool) {
        let mean_us = read
            * (hit
                * lat
                    .host_cache
                    .map_or(lat.device.read.mean_us(), |h| h.read.mean_us())
                + (1.0 - hit) * lat.device.read.mean_us())
            + (1.0 - read) * lat.device.write.mean_us();
        service_us = mean_us;
        // Each I/O waits at least its own service time, so the job's p99
        // is at least the service time's p99 (the device's, for misses).
        let z99 = storlab_model::dist::normal_quantile(0.99);
        let p99 = |l: &storlab_model::latency::LogNormal| l.at_z(z99).as_secs_f64() * 1e6;
        // A mix of reads and writes: at least the lesser of their p99s
        // (each part has 1 % of its I/Os above its own p99).
        service_p99_us = match (read > 0.0 && hit < 1.0, read < 1.0) {
            (true, true) => p99(&lat.device.read).min(p99(&lat.device.write)),
            (true, false) => p99(&lat.device.read),
            (false, true) => p99(&lat.device.write),
            (false, false) => 0.0,
        };
        if hit > 0.0 {
            service_p99_us = 0.0;
        }
        if mean_us > 0.0 && job.arrival_iops.is_none() && outstanding / (mean_us * 1e-6) < iops {
            iops = outstanding / (mean_us * 1e-6);
            binding = format!("{outstanding:.0} I/Os in flight over a {:.0} µs mean service time", mean_us);
        }
    }
    let cap_iops = iops;
    if let Some(r) = job.rate_iops {
        iops = iops.min(r as f64 * f64::from(job.numjobs.max(1)));
    }
    if let Some(a) = job.arrival_iops {
        iops = iops.min(a * f64::from(job.numjobs.max(1)));
    }
    let closed = job.arrival_iops.is_none() && job.rate_iops.is_none() && job.thinktime.is_zero();
    let mean_latency_ms = (closed && iops.is_finite() && iops > 0.0)
        .then(|| (outstanding / iops).max(service_us * 1e-6) * 1e3);
    let least_p99_ms =
        mean_latency_ms.map_or(service_p99_us * 1e-3, |m| m.max(service_p99_us * 1e-3));
    JobBound {
        job: job.name.clone(),
        cap_iops,
        iops,
        bw_bytes_s: iops * job.bs_bytes as f64,
        mean_latency_ms,
        least_p99_ms,
        binding,
    }
}

