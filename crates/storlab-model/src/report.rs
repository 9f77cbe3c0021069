//! The `storlab limits` record (DESIGN.md, "`storlab limits --json`"):
//! per config the ceilings with every bucket full, the sustained figures with
//! every bucket empty, what binds each, each pool's baseline, burst and burst
//! duration, and the monthly cost. Fields beyond DESIGN.md's are additions.

use crate::catalog::Catalog;
use crate::cost::{monthly_cost, CostItem};
use crate::deployment::{pool_gib, resolve_all, Deployment, Pool};
use crate::error::Result;
use crate::limits::{pool_ceiling, primary_pool, Assumptions, PATTERNS};
use crate::scenario::ScenarioFile;
use indexmap::IndexMap;
use serde::Serialize;

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize)]
pub struct LimitsReport {
    pub schema_version: u32,
    pub scenario: String,
    pub title: Option<String>,
    pub configs: Vec<ConfigLimits>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConfigLimits {
    pub name: String,
    pub title: Option<String>,
    pub host: String,
    /// The licence whose instance price is used.
    pub license: String,
    pub engine: Option<String>,
    /// The host's vCPUs, memory and relative CPU speed (with its basis),
    /// where the catalog has them; the database model reads these.
    pub host_vcpus: Option<f64>,
    pub host_memory_gib: Option<f64>,
    pub host_cpu_speed: Option<f64>,
    pub host_cpu_speed_basis: Option<String>,
    pub region: String,
    pub ceilings: IndexMap<String, f64>,
    pub binding: IndexMap<String, String>,
    pub sustained: IndexMap<String, f64>,
    pub sustained_binding: IndexMap<String, String>,
    pub pools: Vec<PoolLimits>,
    pub host_burst: Option<HostBurst>,
    pub monthly_cost_usd: f64,
    pub cost_complete: bool,
    pub cost_breakdown: Vec<CostItem>,
    /// What the figures assume where the scenario is silent.
    pub assumptions: Vec<String>,
    /// Vendor rules that shaped the figures without refusing the config.
    pub warnings: Vec<String>,
    /// Catalog figures behind this config that no vendor source confirms.
    pub unverified: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct HostBurst {
    pub what: String,
    pub baseline_iops: f64,
    pub burst_iops: f64,
    pub baseline_bytes_s: f64,
    pub burst_bytes_s: f64,
    pub burst_s: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PoolLimits {
    pub role: String,
    pub device: String,
    pub count: u32,
    pub layout: String,
    pub size_gib: f64,
    pub total_gib: f64,
    pub provisioned_iops: Option<f64>,
    pub provisioned_throughput_mib_s: Option<f64>,
    pub host_cache: String,
    pub path: String,
    /// Device IOPS summed over the pool: the rate with buckets empty, and
    /// with them full.
    pub baseline_iops: f64,
    pub burst_iops: f64,
    /// How long a full bucket lasts at the burst rate; `null` without burst.
    pub burst_s: Option<f64>,
    pub baseline_bytes_s: f64,
    pub burst_bytes_s: f64,
    pub throughput_burst_s: Option<f64>,
    pub rds_striped_from_gib: Option<f64>,
    pub ceilings: IndexMap<String, f64>,
    pub sustained: IndexMap<String, f64>,
}

fn round(v: f64, bytes: bool) -> f64 {
    if !v.is_finite() {
        return v;
    }
    if bytes {
        v.round()
    } else {
        (v * 100.0).round() / 100.0
    }
}

fn burst_seconds(b: Option<&crate::bucket::Bucket>) -> Option<f64> {
    b.and_then(|b| b.time_to_empty(b.peak_per_s)).map(|d| (d.as_secs_f64() * 1000.0).round() / 1000.0)
}

fn pool_limits(dep: &Deployment, p: &Pool, a: Assumptions) -> PoolLimits {
    let d = &p.device;
    let n = f64::from(p.count);
    let mut ceilings = IndexMap::new();
    let mut sustained = IndexMap::new();
    for (key, pat, bytes) in PATTERNS {
        let scale = if bytes { pat.size_bytes } else { 1.0 };
        ceilings.insert(key.to_string(), round(pool_ceiling(dep, p, pat, true, a).value * scale, bytes));
        sustained.insert(key.to_string(), round(pool_ceiling(dep, p, pat, false, a).value * scale, bytes));
    }
    // gp2 170–334 GiB: the throughput burst rides on the I/O credit bucket.
    let throughput_burst_s = burst_seconds(d.bytes_bucket.as_ref()).or_else(|| {
        if d.bytes_s.bursts() && d.bytes_s.bucket == Some(crate::device::BucketRef::Iops) {
            burst_seconds(d.iops_bucket.as_ref())
        } else {
            None
        }
    });
    PoolLimits {
        role: p.role.name().into(),
        device: d.id.clone(),
        count: p.count,
        layout: p.layout.name().into(),
        size_gib: d.size_gib,
        total_gib: pool_gib(p),
        provisioned_iops: d.provisioned_iops,
        provisioned_throughput_mib_s: d.provisioned_mib_s.or(d.throughput_capacity_mb_s),
        host_cache: p.host_cache.name().into(),
        path: p.path.name().into(),
        baseline_iops: round(d.iops.baseline * n, false),
        burst_iops: round(d.iops.peak * n, false),
        burst_s: burst_seconds(d.iops_bucket.as_ref()),
        baseline_bytes_s: round(d.bytes_s.baseline * n, true),
        burst_bytes_s: round(d.bytes_s.peak * n, true),
        throughput_burst_s,
        rds_striped_from_gib: p.rds_striped_from,
        ceilings,
        sustained,
    }
}

pub fn config_limits(cat: &Catalog, dep: &Deployment) -> ConfigLimits {
    let a = Assumptions::default();
    let primary = primary_pool(dep);
    let mut ceilings = IndexMap::new();
    let mut binding = IndexMap::new();
    let mut sustained = IndexMap::new();
    let mut sustained_binding = IndexMap::new();
    for (key, pat, bytes) in PATTERNS {
        let scale = if bytes { pat.size_bytes } else { 1.0 };
        let full = pool_ceiling(dep, primary, pat, true, a);
        let empty = pool_ceiling(dep, primary, pat, false, a);
        ceilings.insert(key.to_string(), round(full.value * scale, bytes));
        binding.insert(key.to_string(), full.binding);
        sustained.insert(key.to_string(), round(empty.value * scale, bytes));
        sustained_binding.insert(key.to_string(), empty.binding);
    }
    let mut assumptions = vec![format!(
        "config figures are for I/O to pool {} ({}); each pool's own are under pools[]",
        primary.role.name(),
        primary.device.id
    )];
    if dep.pools.iter().any(|p| p.host_cache != crate::scenario::HostCacheMode::None) {
        let cache = dep.host.cache_gib.map(|g| format!(" ({g} GiB)")).unwrap_or_default();
        assumptions.push(format!("host cache: every read hits the cache{cache}, the best case; writes go to the disks as well"));
    }
    assumptions.extend(dep.assumptions.iter().cloned());
    if dep.host.kind == crate::catalog::HostKind::Local {
        assumptions.push("on-premises hardware is not priced".into());
    }
    if dep.pools.iter().any(|p| p.layout == crate::scenario::Layout::Stripe) {
        assumptions.push("stripes: I/O aligned to its size and spread evenly over the members".into());
    }
    let h = &dep.host;
    let host_burst = match (&h.ebs_iops, &h.ebs_bytes_s, &h.uncached_iops, &h.uncached_bytes_s) {
        (Some(i), Some(b), _, _) if i.bursts() => Some(HostBurst {
            what: format!("host {}: EBS burst", h.short()),
            baseline_iops: i.baseline,
            burst_iops: i.peak,
            baseline_bytes_s: b.baseline,
            burst_bytes_s: b.peak,
            burst_s: burst_seconds(h.ebs_iops_bucket.as_ref()),
        }),
        (_, _, Some(i), Some(b)) if i.bursts() || b.bursts() => Some(HostBurst {
            what: format!("host {}: uncached burst", h.short()),
            baseline_iops: i.baseline,
            burst_iops: i.peak,
            baseline_bytes_s: b.baseline,
            burst_bytes_s: b.peak,
            burst_s: burst_seconds(h.uncached_iops_bucket.as_ref().or(h.uncached_bytes_bucket.as_ref())),
        }),
        _ => None,
    };
    let cost = monthly_cost(cat, dep);
    let mut unverified: Vec<String> = h.unverified.clone();
    // Instance-level bursts: the vendors say how long a full bucket lasts
    // (EC2: "maximum performance for 30 minutes at least once every 24
    // hours", ebs-optimized; Azure: up to 30 minutes), not how it refills.
    // The model refills at the baseline rate less the I/O in flight.
    let refill = |b: Option<&crate::bucket::Bucket>| b.map(|b| b.capacity / b.refill_per_s);
    if let Some(hb) = &host_burst {
        let full_refill = refill(h.ebs_iops_bucket.as_ref().or(h.uncached_iops_bucket.as_ref()).or(h.uncached_bytes_bucket.as_ref()));
        let idle = full_refill.map(|s| format!(" (an empty bucket refills in {} s at idle)", s.round())).unwrap_or_default();
        assumptions.push(format!(
            "{}: a full bucket lasts 30 minutes at the burst rate, as the vendor states; it refills at the baseline rate less the I/O in use{idle} — the refill rate is not published (EC2: \"at least once every 24 hours\")",
            hb.what
        ));
        unverified.push(format!("{}: burst refill rate", hb.what));
    }
    for p in &dep.pools {
        unverified.extend(p.device.unverified.iter().cloned());
    }
    // Secondary prices are marked in the breakdown itself; here only what
    // no source confirms.
    for c in &cost.breakdown {
        if c.usd.is_some() && c.source_status.as_deref() == Some("unverified") {
            unverified.push(format!("{}: price", c.item));
        }
    }
    unverified.sort();
    unverified.dedup();
    ConfigLimits {
        name: dep.name.clone(),
        title: dep.title.clone(),
        host: h.id.clone(),
        license: dep.license.clone(),
        engine: dep.engine.clone(),
        host_vcpus: h.vcpus,
        host_memory_gib: h.memory_gib,
        host_cpu_speed: h.cpu_speed,
        host_cpu_speed_basis: h.cpu_speed_basis.clone(),
        region: cost.region.clone(),
        ceilings,
        binding,
        sustained,
        sustained_binding,
        pools: dep.pools.iter().map(|p| pool_limits(dep, p, a)).collect(),
        host_burst,
        monthly_cost_usd: cost.monthly_cost_usd,
        cost_complete: cost.complete,
        cost_breakdown: cost.breakdown,
        assumptions,
        warnings: dep.warnings.clone(),
        unverified,
    }
}

/// Parses a scenario, resolves every config and computes its limits.
pub fn limits(cat: &Catalog, scenario_file: &str, scenario_text: &str) -> Result<LimitsReport> {
    let sc = ScenarioFile::from_toml(scenario_file, scenario_text)?;
    let deps = resolve_all(cat, scenario_file, &sc)?;
    Ok(LimitsReport {
        schema_version: SCHEMA_VERSION,
        scenario: scenario_file.to_string(),
        title: sc.title.clone(),
        configs: deps.iter().map(|d| config_limits(cat, d)).collect(),
    })
}
