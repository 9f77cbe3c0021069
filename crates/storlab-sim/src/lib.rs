//! storlab-sim: discrete-event runs of I/O workloads on modelled
//! deployments, on a virtual clock. It drives `storlab-model`'s resources
//! and cost tables — the same ones `storlab limits` reads analytically — so
//! a simulation can never exceed the ceilings the model reports, and it
//! adds what only time shows: buckets draining and refilling, queueing,
//! latency distributions, CloudWatch-style series.


pub mod bound;
pub mod database;
pub mod db;
pub mod import;
pub mod iorules;
pub mod writepath;
pub mod scenario;
pub use scenario::{run, Kind as ScenarioKind, Scenario};
/// The latency draws live in storlab-model (the emulator takes them too).
pub use storlab_model::dist;
pub mod engine;
pub use storlab_stats::rng;
pub mod queue;
pub mod series;

use engine::{run_jobs, DeploymentState, JobOutcome, JobSpec, Latencies};
use storlab_model::pacing::{PacerId, PacerSet, Secs};
use storlab_workload::Job;
use storlab_model::deployment::Deployment;
use storlab_model::resources::{Kind, PoolPlan};
use storlab_model::scenario::ScenarioFile;
use storlab_model::{Catalog, ModelError};
use storlab_workload::{Workload, WorkloadError};

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    #[error("{file}: workload job '{job}' names pool '{role}', which config '{config}' does not have — pools: {valid}")]
    NoPool { file: String, config: String, job: String, role: String, valid: String },
    #[error("{file}: configs.{config}.pools: the database profile's data pages need a pool with role = \"data\" or \"all\" — this config has {valid}; add one (docs/dbmodel.md, \"Roles\")")]
    NoDataPool { file: String, config: String, valid: String },
    #[error("{file}: configs.{config}.pools: the import needs a pool with role = \"{role}\" or \"all\" — this config has {valid}; add one or set workload.import.input_pool (docs/dbmodel.md, \"Bulk import\")")]
    NoImportPool { file: String, config: String, role: String, valid: String },
    #[error("no latency model for {device} in the catalog — add a [[latency]] entry that covers it (docs/catalog.md)")]
    NoLatency { device: String },
    #[error("{file}: --config '{config}': no such config{} — configs: {valid}", near_hint(.suggestion))]
    NoConfig { file: String, config: String, suggestion: Option<String>, valid: String },
    #[error("{file}: {what}: {message}")]
    Override { file: String, what: String, message: String },
    #[error("{file}: {what} — above the simulator's budget of {max}; {fix}")]
    Budget { file: String, what: String, max: String, fix: String },
    #[error("{file}: period {period} s over {planned_s} s of simulated time per config makes {points} points a series, above the {max} storlab keeps (CloudWatch's GetMetricData limit) — nearest valid period {nearest} s")]
    Period { file: String, period: f64, planned_s: f64, points: u64, max: u64, nearest: String },
}

fn near_hint(s: &Option<String>) -> String {
    s.as_ref().map(|s| format!(" — did you mean '{s}'?")).unwrap_or_default()
}

/// Most points a series keeps: 100,800, the data points one CloudWatch
/// GetMetricData request returns at most (Amazon CloudWatch API Reference,
/// GetMetricData). A shorter period on a long run is refused before it
/// starts, with the shortest period that fits.
pub const MAX_SERIES_POINTS: u64 = 100_800;

/// Most I/Os a simulation keeps in flight at once, over the jobs that run
/// together: 2^22 slots of about 32 bytes each (issue time, class, heap
/// entry) hold 128 MiB. fio's io_uring engine takes at most 32,768 per
/// thread (IORING_MAX_ENTRIES), so this is 128 such threads.
pub const MAX_OUTSTANDING: u64 = 1 << 22;

/// Most I/Os a job that covers its `size` (no runtime) may take: 10^10, a
/// quarter of an hour or more of this machine's time.
pub const MAX_SIZED_IOS: f64 = 1e10;

/// Refuses up front a time-based run that could take more I/Os on one
/// config than [`MAX_SIZED_IOS`]: each job's bound (its pool's caps and its
/// I/Os in flight over the device's mean service time, [`bound::io_job`])
/// over its ramp and runtime, summed over the jobs that run together. The
/// message gives the runtime that fits.
pub fn check_time_budget(cat: &Catalog, file: &str, deps: &[Deployment], wl: &Workload) -> Result<(), SimError> {
    // The run group that fits the shortest runtime, over every config.
    let mut tightest: Option<(f64, String, &Job, f64, f64, f64)> = None;
    for dep in deps {
        for run in run_groups(&wl.jobs) {
            let mut total = 0.0;
            let mut worst: Option<(&Job, f64, f64)> = None;
            for j in &wl.jobs[run] {
                let Some(runtime) = j.runtime.filter(|_| j.time_based) else { continue };
                let secs = j.ramp_time.as_secs_f64() + runtime.as_secs_f64() * f64::from(j.loops.max(1));
                let iops = bound::io_job(cat, dep, j).iops;
                if !iops.is_finite() {
                    continue;
                }
                total += iops * secs;
                if worst.map_or(true, |w| iops * secs > w.1 * w.2) {
                    worst = Some((j, iops, secs));
                }
            }
            if let Some((j, iops, secs)) = worst.filter(|_| total > MAX_SIZED_IOS) {
                let fits = (secs * MAX_SIZED_IOS / total).floor().max(1.0);
                if tightest.as_ref().map_or(true, |t| fits < t.0) {
                    tightest = Some((fits, dep.name.clone(), j, iops, secs, total));
                }
            }
        }
    }
    match tightest {
        None => Ok(()),
        Some((fits, config, j, iops, secs, total)) => Err(SimError::Budget {
            file: file.to_string(),
            what: format!(
                "config '{config}': job '{}' runs {} s at up to {} IOPS (its pool's caps and I/Os in flight): up to {total:.3e} I/Os with the jobs beside it",
                j.name,
                fmt_num(secs),
                fmt_num(iops.round())
            ),
            max: format!("{MAX_SIZED_IOS:.0e} I/Os a config"),
            fix: format!("shorten the runtime — {} s fits (--duration {})", fmt_num(fits), fmt_num(fits)),
        }),
    }
}

fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x:.3}")
    }
}

/// Refuses up front a workload the simulator could not hold in memory or
/// finish: too many I/Os in flight at once, or a size to cover in too many
/// I/Os. The message gives the numbers and the option that fixes it.
pub fn check_budget(file: &str, wl: &Workload) -> Result<(), SimError> {
    // The largest iodepth every job may take at once (`--iodepth`): the
    // budget over the most threads that run together.
    let threads = run_groups(&wl.jobs)
        .into_iter()
        .map(|r| wl.jobs[r].iter().filter(|j| j.arrival_iops.is_none()).map(|j| u64::from(j.numjobs.max(1))).sum::<u64>())
        .max()
        .unwrap_or(1)
        .max(1);
    let every = (MAX_OUTSTANDING / threads).max(1);
    for run in run_groups(&wl.jobs) {
        let jobs = &wl.jobs[run];
        let outstanding: u64 = jobs.iter().filter(|j| j.arrival_iops.is_none()).map(|j| j.outstanding()).sum();
        if outstanding > MAX_OUTSTANDING {
            let j = jobs.iter().max_by_key(|j| j.outstanding()).expect("a run has a job");
            return Err(SimError::Budget {
                file: file.to_string(),
                what: format!("{outstanding} I/Os in flight at once (job '{}': iodepth {} × numjobs {})", j.name, j.iodepth, j.numjobs),
                max: format!("{MAX_OUTSTANDING} I/Os in flight"),
                fix: format!("lower iodepth or numjobs — every job fits with iodepth {every} (--iodepth {every})"),
            });
        }
        for j in jobs {
            if j.runtime.is_some() && j.time_based {
                continue;
            }
            let ios = j.size_bytes as f64 / j.bs_bytes.max(1) as f64 * f64::from(j.numjobs.max(1)) * f64::from(j.loops.max(1));
            if ios > MAX_SIZED_IOS {
                return Err(SimError::Budget {
                    file: file.to_string(),
                    what: format!("job '{}' covers size {} bytes in {}-byte I/Os × numjobs {} × loops {}: {ios:.3e} I/Os", j.name, j.size_bytes, j.bs_bytes, j.numjobs, j.loops),
                    max: format!("{MAX_SIZED_IOS:.0e} I/Os"),
                    fix: "raise bs, lower size, or give a runtime".into(),
                });
            }
        }
    }
    Ok(())
}

/// The shortest period that keeps `planned_s` within [`MAX_SERIES_POINTS`],
/// rounded up to two significant digits (whole seconds from 1 s up).
pub fn nearest_period(planned_s: f64) -> f64 {
    let min = planned_s / MAX_SERIES_POINTS as f64;
    if min >= 1.0 {
        return min.ceil();
    }
    let decimals = (1 - min.log10().floor() as i32).max(0);
    let m = 10f64.powi(decimals);
    ((min * m).ceil() / m).max(1.0 / m)
}

/// Command-line changes to a scenario (`simulate --config`, `--threads`,
/// `--iodepth`, `--duration`, `--profile`), applied to the parsed scenario
/// and workload: one typed step, whatever the workload's kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// Run only this config.
    pub config: Option<String>,
    /// Every job's `numjobs`.
    pub threads: Option<u32>,
    /// Every job's `iodepth`.
    pub iodepth: Option<u32>,
    /// Every job's measured time (as `duration_s`).
    pub duration: Option<std::time::Duration>,
    /// A CrystalDiskMark preset replacing the scenario's workload.
    pub profile: Option<String>,
    /// Database runs at once (each on its own thread); default every core.
    /// The record is the same for any count.
    pub sim_threads: Option<usize>,
    /// End database runs at steady state whatever the scenario says.
    pub steady_state: Option<bool>,
    /// Database runs: each VU count this many times, with as many seeds;
    /// the headline figures are their mean with the seeds' spread.
    pub repeats: Option<u32>,
    /// Simulate a suspect database profile with a warning rather than
    /// refuse it, whatever the scenario's `accept_suspect` says.
    pub accept_suspect: Option<bool>,
}

impl Overrides {
    /// Keeps only the config `--config` names (before any workload path runs).
    pub fn select_config(&self, file: &str, sc: &mut ScenarioFile) -> Result<(), SimError> {
        let Some(name) = &self.config else { return Ok(()) };
        if !sc.configs.contains_key(name) {
            let names: Vec<&str> = sc.configs.keys().map(|s| s.as_str()).collect();
            return Err(SimError::NoConfig {
                file: file.to_string(),
                config: name.clone(),
                suggestion: storlab_workload::nearest(name, names.iter().copied()),
                valid: names.join(", "),
            });
        }
        sc.configs.retain(|k, _| k == name);
        Ok(())
    }

    /// A database workload takes `--config` and `--duration`; the options
    /// that reshape I/O jobs have nothing to act on there.
    pub fn reject_io_only(&self, file: &str) -> Result<(), SimError> {
        let given = [("--threads", self.threads.is_some()), ("--iodepth", self.iodepth.is_some()), ("--profile", self.profile.is_some())];
        match given.iter().find(|g| g.1) {
            Some((flag, _)) => Err(SimError::Override {
                file: file.to_string(),
                what: flag.to_string(),
                message: "applies to I/O workloads; this scenario has a [workload.database] (its users are `vus`, its time `duration_s`)".into(),
            }),
            None => Ok(()),
        }
    }

    /// The `[workload]` table with `--profile` in place of its jobs.
    pub fn workload_table(&self, t: Option<&toml::Table>) -> Result<Option<toml::Table>, SimError> {
        let Some(p) = &self.profile else { return Ok(t.cloned()) };
        storlab_workload::presets::Preset::by_name(p)?;
        let mut t = t.cloned().unwrap_or_default();
        for k in ["profile", "fio", "jobs"] {
            t.remove(k);
        }
        t.insert("profile".into(), toml::Value::String(p.clone()));
        Ok(Some(t))
    }

    /// `--threads`, `--iodepth` and `--duration` on every job. A job named
    /// the CrystalDiskMark way (`RND4K-Q32T1-read`) is renamed to match.
    pub fn apply_to_jobs(&self, file: &str, wl: &mut Workload) -> Result<(), SimError> {
        let bad = |what: &str, message: String| SimError::Override { file: file.to_string(), what: what.to_string(), message };
        if self.threads == Some(0) {
            return Err(bad("--threads", "0 — nearest valid value 1".into()));
        }
        if self.iodepth == Some(0) {
            return Err(bad("--iodepth", "0 — nearest valid value 1".into()));
        }
        if self.duration.is_some_and(|d| d.is_zero()) {
            return Err(bad("--duration", "0 — give a positive time, e.g. 30s or 10m".into()));
        }
        for j in &mut wl.jobs {
            let cdm_named = j.name == j.cdm_name();
            if let Some(n) = self.threads {
                j.numjobs = n;
            }
            if let Some(n) = self.iodepth {
                j.iodepth = n;
            }
            if let Some(d) = self.duration {
                j.runtime = Some(d);
                j.time_based = true;
                j.loops = 1;
            }
            if cdm_named {
                j.name = j.cdm_name();
            }
        }
        Ok(())
    }
}

/// The day whose vendor rules the deployments follow and, per config, which
/// rules each device and host followed; `None` without `as_of`.
pub fn rules_applied(deps: &[Deployment]) -> Option<(String, serde_json::Value)> {
    let date = deps.iter().find_map(|d| d.as_of.clone())?;
    let per: serde_json::Map<String, serde_json::Value> =
        deps.iter().map(|d| (d.name.clone(), serde_json::to_value(&d.rules_applied).expect("rules serialise"))).collect();
    Some((date, serde_json::Value::Object(per)))
}

fn round(v: f64, digits: i32) -> f64 {
    let m = 10f64.powi(digits);
    (v * m).round() / m
}

/// The service times of `pool`'s device (and of the host cache where it is on).
pub fn latencies(cat: &Catalog, dep: &Deployment, pool: &storlab_model::deployment::Pool, unverified: &mut Vec<String>) -> Result<Latencies, SimError> {
    let l = storlab_model::deployment::pool_latency(cat, dep, pool).map_err(|e| SimError::NoLatency { device: e.0 })?;
    unverified.extend(l.placeholders);
    let m = l.device;
    Ok(Latencies {
        read: dist::ServiceTime::new(&m.read).with_size_term(m.read_us_per_mib),
        write: dist::ServiceTime::new(&m.write).with_size_term(m.write_us_per_mib),
        hit: l.host_cache.map(|h| dist::ServiceTime::new(&h.read)),
        flush: m.flush.as_ref().map(dist::ServiceTime::new),
    })
}

/// The series sink of a deployment: every pool's resources registered once
/// so the series see all buckets (the pools' own, the host's EBS burst).
pub fn series_sink(dep: &Deployment, st: &mut DeploymentState, period: f64) -> series::SeriesSink {
    let mut sink_pools = Vec::new();
    let mut host_buckets = (None, None);
    for (pi, pool) in dep.pools.iter().enumerate() {
        let plan0 = PoolPlan::new(dep, pool, 4096.0, false);
        let map = st.pacers.register(pi, &plan0);
        let buckets = plan0.resources.iter().enumerate().filter(|(_, r)| r.member.is_some() && r.bucket.is_some()).map(|(i, _)| map[i]).collect();
        sink_pools.push(series::SinkPool { name: format!("pool {}", pool.role.name()), buckets });
        for (i, r) in plan0.resources.iter().enumerate().filter(|(_, r)| r.bucket.is_some()) {
            match r.id.kind {
                Kind::EbsIops => host_buckets.0 = Some(map[i]),
                Kind::EbsBytes => host_buckets.1 = Some(map[i]),
                _ => {}
            }
        }
    }
    let rds = dep.host.kind == storlab_model::catalog::HostKind::Rds;
    series::SeriesSink::new(&dep.name, period, sink_pools, host_buckets, rds)
}

pub use storlab_workload::groups::{report_groups, run_groups};

fn pool_of(file: &str, dep: &Deployment, job: &Job) -> Result<usize, SimError> {
    dep.pool_index(job.pool.as_deref()).map_err(|valid| SimError::NoPool {
        file: file.to_string(),
        config: dep.name.clone(),
        job: job.name.clone(),
        role: job.pool.clone().unwrap_or_default(),
        valid,
    })
}

/// One result for one job, or for the jobs of a reporting group as one
/// (fio's `group_reporting`: I/Os summed over the longest window, latency
/// over every I/O).
fn job_result(dep: &Deployment, members: &[(&JobSpec, &JobOutcome)], pacers: &PacerSet) -> storlab_record::JobResult {
    let (first, o0) = members[0];
    let mut o = o0.clone();
    for (_, x) in &members[1..] {
        o.ios += x.ios;
        o.read_ios += x.read_ios;
        o.bytes += x.bytes;
        o.hist.merge(&x.hist);
        o.read_hist.merge(&x.read_hist);
        o.write_hist.merge(&x.write_hist);
        o.total_latency_s += x.total_latency_s;
        o.events += x.events;
        o.dropped += x.dropped;
        o.start_s = o.start_s.min(x.start_s);
        o.window_s = o.window_s.max(x.window_s);
        o.top_wait = match (o.top_wait, x.top_wait) {
            (Some(a), Some(b)) if b.1 > a.1 => Some(b),
            (None, b) => b,
            (a, _) => a,
        };
    }
    let outstanding: u64 = members.iter().map(|(s, _)| if s.job.arrival_iops.is_some() { 0 } else { s.job.outstanding() }).sum();
    let open = members.iter().any(|(s, _)| s.job.arrival_iops.is_some());
    // What bound it: the resource that imposed the most queueing, unless
    // queueing is a small part of the latency.
    let binding = match o.top_wait {
        Some((g, w)) if w > 0.05 * o.total_latency_s.max(1e-12) * (o.events as f64 / o.ios.max(1) as f64) => members
            .iter()
            .find_map(|(s, _)| s.map.iter().position(|&x| x == g).map(|i| s.plan.resources[i].label(pacers.get(g).mostly_at_peak())))
            .unwrap_or_default(),
        _ if open => "arrivals: the offered rate, no limit reached".to_string(),
        _ => match outstanding {
            1 => "latency: 1 I/O in flight, no limit reached".to_string(),
            n => format!("latency: {n} I/Os in flight, no limit reached"),
        },
    };
    let mut pools: Vec<&str> = Vec::new();
    for (s, _) in members {
        let name = dep.pools[s.pool_index].role.name();
        if !pools.contains(&name) {
            pools.push(name);
        }
    }
    let ios_total = members.iter().map(|(_, x)| x.ios as f64).sum::<f64>();
    let hit_ratio = if members.len() == 1 || ios_total == 0.0 {
        first.hit_ratio
    } else {
        members.iter().map(|(s, x)| s.hit_ratio * x.ios as f64).sum::<f64>() / ios_total
    };
    let arrivals: Vec<f64> = members.iter().filter_map(|(s, _)| s.job.arrival_iops).collect();
    let w = o.window_s.max(1e-12);
    // A reporting group's members each cut at their own moments: the
    // phases of a result of one job only.
    let label = |g: PacerId| {
        members.iter().find_map(|(s, _)| s.map.iter().position(|&x| x == g).map(|i| s.plan.resources[i].label(false))).unwrap_or_default()
    };
    let phases = if members.len() == 1 { o0.phases.iter().map(|p| io_phase(p, &label)).collect() } else { Vec::new() };
    storlab_record::JobResult {
        config: dep.name.clone(),
        job: first.job.name.clone(),
        pool: pools.join("+"),
        binding,
        io: Some(storlab_record::IoColumns {
            iops: round(o.ios as f64 / w, 3),
            bw_bytes_s: round(o.bytes / w, 0),
            read_iops: round(o.read_ios as f64 / w, 3),
            write_iops: round((o.ios - o.read_ios) as f64 / w, 3),
            latency: o.hist.summary().rounded(3),
            outstanding,
            runtime_s: round(o.window_s, 6),
        }),
        extra: Some(storlab_record::JobExtra::Sim(storlab_record::SimJob {
            read_lat_mean_us: round(o.read_hist.mean_us(), 3),
            write_lat_mean_us: round(o.write_hist.mean_us(), 3),
            read_lat_p99_us: round(o.read_hist.quantile_us(0.99), 3),
            write_lat_p99_us: round(o.write_hist.quantile_us(0.99), 3),
            ios: o.ios,
            start_s: round(o.start_s, 6),
            cache_hit_ratio: hit_ratio,
            arrival_iops: if arrivals.is_empty() { None } else { Some(arrivals.iter().sum()) },
            dropped: o.dropped,
            jobs: (members.len() != 1).then_some(members.len() as u32),
        })),
        phases,
    }
}

/// One stretch of an I/O job as the record carries it: rates over the
/// stretch alone, and the limits that had fallen to their baseline.
fn io_phase(p: &engine::PhaseOut, label: &dyn Fn(PacerId) -> String) -> storlab_record::Phase {
    let w = (p.to_s - p.from_s).max(1e-12);
    let mut emptied: Vec<String> = p.emptied.iter().map(|&g| label(g)).filter(|l| !l.is_empty()).collect();
    emptied.dedup();
    storlab_record::Phase {
        from_s: round(p.from_s, 3),
        to_s: round(p.to_s, 3),
        emptied,
        iops: Some(round(p.ios as f64 / w, 3)),
        bw_bytes_s: Some(round(p.bytes / w, 0)),
        read_iops: Some(round(p.read_ios as f64 / w, 3)),
        write_iops: Some(round((p.ios - p.read_ios) as f64 / w, 3)),
        lat_mean_us: Some(round(p.hist.mean_us(), 3)),
        lat_p99_us: Some(round(p.hist.quantile_us(0.99), 3)),
        ..Default::default()
    }
}

/// Simulated time a config's jobs take, s: each run group's longest job
/// (ramp and runtime) and CrystalDiskMark's interval after it.
pub(crate) fn planned_per_config(wl: &Workload) -> f64 {
    run_groups(&wl.jobs)
        .into_iter()
        .map(|g| {
            wl.jobs[g].iter().map(|j| j.ramp_time.as_secs_f64() + j.runtime.map_or(0.0, |r| r.as_secs_f64() * f64::from(j.loops.max(1)))).fold(0.0, f64::max)
                + wl.interval.as_secs_f64()
        })
        .sum()
}

/// Simulates every job of `wl` on every config of `sc`; `progress` gets
/// the fraction of planned simulated time done and returns false to stop.
pub(crate) fn run_io(cat: &Catalog, sc: &Scenario, wl: &Workload, progress: &mut dyn FnMut(f64) -> bool) -> Result<storlab_record::RunRecord, SimError> {
    let (file, deps, period) = (sc.file.as_str(), &sc.deps, sc.period_s);
    let planned_per_config = planned_per_config(wl);
    let planned = (planned_per_config * deps.len() as f64).max(1e-9);
    let mut results = Vec::new();
    let mut all_series = Vec::new();
    let mut unverified = Vec::new();
    let mut simulated_s = 0.0;
    let mut simulated_ios = 0;
    let mut interrupted = false;

    for (ci, dep) in deps.iter().enumerate() {
        let mut st = DeploymentState::for_deployment(dep);
        let mut sink = series_sink(dep, &mut st, period);
        unverified.extend(dep.host.unverified.iter().cloned());
        for p in &dep.pools {
            unverified.extend(p.device.unverified.iter().cloned());
        }
        let done_before = ci as f64 * planned_per_config;

        for run in run_groups(&wl.jobs) {
            // The jobs between two stonewalls run at once.
            let mut prepared = Vec::with_capacity(run.len());
            for ji in run.clone() {
                let job = &wl.jobs[ji];
                let pool_index = pool_of(file, dep, job)?;
                let pool = &dep.pools[pool_index];
                let plan = PoolPlan::new(dep, pool, job.bs_bytes as f64, !job.rw.is_random());
                let map = st.pacers.register(pool_index, &plan);
                let lat = latencies(cat, dep, pool, &mut unverified)?;
                let hit_ratio = if plan.cached {
                    dep.host.cache_gib.map_or(1.0, |g| (g * (1u64 << 30) as f64 / job.size_bytes as f64).min(1.0))
                } else {
                    0.0
                };
                prepared.push((pool_index, plan, map, lat, hit_ratio));
            }
            let specs: Vec<JobSpec> = run
                .clone()
                .zip(&prepared)
                .map(|(ji, (pool_index, plan, map, lat, hit_ratio))| JobSpec { job: &wl.jobs[ji], pool_index: *pool_index, plan, map, lat, hit_ratio: *hit_ratio })
                .collect();
            let mut rngs: Vec<rng::Rng> = run.clone().map(|ji| rng::Rng::new(wl.seed ^ ((ci as u64) << 32) ^ (ji as u64).wrapping_mul(0x9E37_79B9))).collect();
            let mut prog = |t: Secs| progress(((done_before + t.0) / planned).min(1.0));
            let outs = run_jobs(&mut st, &specs, &mut rngs, &mut sink, &mut prog);
            for group in report_groups(&wl.jobs, run.clone()) {
                let members: Vec<(&JobSpec, &engine::JobOutcome)> = group.map(|ji| (&specs[ji - run.start], &outs[ji - run.start])).collect();
                results.push(job_result(dep, &members, &st.pacers));
            }
            for o in &outs {
                simulated_ios += o.events;
                interrupted |= o.interrupted;
            }
            if interrupted {
                break;
            }
            // CrystalDiskMark's interval: the deployment idles, buckets refill.
            st.now = st.now.plus(wl.interval.as_secs_f64());
        }
        simulated_s += st.now.0;
        all_series.extend(sink.finish(st.now, &st.pacers));
        if interrupted {
            break;
        }
    }
    unverified.sort();
    unverified.dedup();
    let mut rec = sc.record(&wl.source, wl.seed);
    rec.results = results;
    rec.series = all_series;
    rec.unverified = unverified;
    if let Some((date, rules)) = rules_applied(deps) {
        let mut inputs = storlab_record::Object::new();
        inputs.insert("as_of".into(), serde_json::json!(date));
        inputs.insert("rules_applied".into(), rules);
        inputs.insert("prices".into(), serde_json::json!("today's catalog prices, not those of the as_of date"));
        rec.inputs = Some(inputs);
    }
    rec.interrupted = interrupted;
    rec.extra = Some(storlab_record::RecordExtra::Sim(storlab_record::SimRun { period_s: period, simulated_s: round(simulated_s, 6), simulated_ios }));
    Ok(rec)
}
