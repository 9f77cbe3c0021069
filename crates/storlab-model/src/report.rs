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
    /// The host's processor (model, generation, sustained all-core GHz).
    pub host_cpu: Option<crate::deployment::HostCpu>,
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
    /// `storlab limits --at-iops N` / `--at-mb-s N`: how long each bucket
    /// lasts at that load; absent without a load.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub at_load: Vec<BucketAtLoad>,
    /// `as_of`: the day whose vendor rules apply, and which rules each
    /// device and host followed (absent without a date).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub as_of: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rules_applied: Vec<crate::catalog::RulesApplied>,
}

/// A steady load offered to every pool of a config (`--at-iops`, `--at-mb-s`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Load {
    /// 4 KiB random reads per second.
    Iops(f64),
    /// 1 MiB sequential reads, in bytes per second.
    BytesS(f64),
}

/// One bucket under a steady load: the rate while it lasts, how long a full
/// bucket lasts (`null`: never, the load is at or below the baseline), and
/// the rate once every bucket is empty.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BucketAtLoad {
    /// `pool data`, `host`.
    pub resource: String,
    /// `aws/ebs/gp2 I/O credits`, `host r5b.large: EBS burst throughput`.
    pub bucket: String,
    /// `iops` or `bytes_s`: the unit of the three rates.
    pub unit: String,
    pub load: f64,
    /// What the config delivers of the load with every bucket full.
    pub rate_while_full: f64,
    pub lasts_s: Option<f64>,
    /// What it delivers of the load with every bucket empty.
    pub rate_after: f64,
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
        host_cpu: h.cpu.clone(),
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
        at_load: Vec::new(),
        as_of: dep.as_of.clone(),
        rules_applied: dep.rules_applied.clone(),
    }
}

/// Every bucket of a config under a steady `load` to each pool. The pool's
/// rate is the load capped by the pool's ceiling (`limits`); a stripe or
/// spread shares it evenly over its members, so each member's bucket drains
/// at `rate / count − refill` (Bucket::time_to_empty: gp2 100 GiB at 3,000
/// IOPS, 5.4 M / 2,700 = 2,000 s). Host buckets see the sum over pools.
/// Throughput loads use the byte buckets only (st1, sc1, host bursts).
pub fn at_load(dep: &Deployment, load: Load) -> Vec<BucketAtLoad> {
    let a = Assumptions::default();
    let (pat, unit, want, scale) = match load {
        Load::Iops(v) => (crate::limits::IoPattern::RAND4K_READ, "iops", v, 1.0),
        Load::BytesS(v) => (crate::limits::IoPattern::SEQ1M_READ, "bytes_s", v, crate::device::MIB),
    };
    let mut out = Vec::new();
    let (mut host_full, mut host_empty) = (0.0, 0.0);
    let r = |v: f64| round(v, unit == "bytes_s");
    let secs = |d: Option<std::time::Duration>| d.map(|d| (d.as_secs_f64() * 1000.0).round() / 1000.0);
    for p in &dep.pools {
        let full = want.min(pool_ceiling(dep, p, pat, true, a).value * scale);
        let empty = want.min(pool_ceiling(dep, p, pat, false, a).value * scale);
        host_full += full;
        host_empty += empty;
        let d = &p.device;
        let (bucket, what) = match load {
            Load::Iops(_) => (d.iops_bucket.as_ref(), "I/O credits"),
            Load::BytesS(_) => (d.bytes_bucket.as_ref(), "throughput credits"),
        };
        if let Some(b) = bucket.filter(|b| !b.is_inert()) {
            out.push(BucketAtLoad {
                resource: format!("pool {}", p.role.name()),
                bucket: format!("{} {what}", d.id),
                unit: unit.into(),
                load: r(want),
                rate_while_full: r(full),
                lasts_s: secs(b.time_to_empty(full / f64::from(p.count.max(1)))),
                rate_after: r(empty),
            });
        }
    }
    let h = &dep.host;
    let host = match load {
        Load::Iops(_) => h.ebs_iops_bucket.as_ref().or(h.uncached_iops_bucket.as_ref()),
        Load::BytesS(_) => h.ebs_bytes_bucket.as_ref().or(h.uncached_bytes_bucket.as_ref()),
    };
    if let Some(b) = host.filter(|b| !b.is_inert()) {
        out.push(BucketAtLoad {
            resource: "host".into(),
            bucket: format!("host {}: {}", h.short(), if h.ebs_iops_bucket.is_some() { "EBS burst" } else { "uncached burst" }),
            unit: unit.into(),
            load: r(want * dep.pools.len() as f64),
            rate_while_full: r(host_full),
            lasts_s: secs(b.time_to_empty(host_full)),
            rate_after: r(host_empty),
        });
    }
    out
}

/// [`limits`] with each config's buckets under a steady `load`.
pub fn limits_at(cat: &Catalog, scenario_file: &str, scenario_text: &str, load: Load) -> Result<LimitsReport> {
    let mut rep = limits(cat, scenario_file, scenario_text)?;
    let sc = ScenarioFile::from_toml(scenario_file, scenario_text)?;
    for (c, dep) in rep.configs.iter_mut().zip(resolve_all(cat, scenario_file, &sc)?) {
        c.at_load = at_load(&dep, load);
    }
    Ok(rep)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/storlab/catalog");
        let mut files = Vec::new();
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                files.push((p.display().to_string(), std::fs::read_to_string(&p).unwrap()));
            }
        }
        Catalog::from_sources(files.iter().map(|(n, t)| (n.as_str(), t.as_str()))).unwrap()
    }

    const GP2_100: &str = "[configs.gp2]\nhost = \"aws/ec2/r5b.24xlarge\"\n[[configs.gp2.pools]]\ndevice = \"aws/ebs/gp2\"\nsize_gib = 100\n";

    /// EBS user guide, gp2: 100 GiB has a 300 IOPS baseline (3 IOPS/GiB),
    /// bursts to 3,000 from 5.4 M credits. At 3,000 IOPS a full bucket lasts
    /// 5.4e6 / (3,000 − 300) = 2,000 s, then 300 IOPS; at 2,000 IOPS
    /// 5.4e6 / (2,000 − 300) = 3,176.47 s; at 300 it never empties.
    #[test]
    fn gp2_100gib_at_load() {
        let cat = catalog();
        let at = |iops: f64| limits_at(&cat, "s.toml", GP2_100, Load::Iops(iops)).unwrap().configs[0].at_load[0].clone();
        let b = at(3000.0);
        assert_eq!((b.rate_while_full, b.lasts_s, b.rate_after), (3000.0, Some(2000.0), 300.0));
        assert_eq!(b.resource, "pool all");
        let b = at(2000.0);
        assert_eq!((b.lasts_s, b.rate_after), (Some(3176.471), 300.0));
        let b = at(300.0);
        assert_eq!((b.lasts_s, b.rate_after), (None, 300.0));
        // Above the burst the bucket still drains at 3,000: 2,000 s.
        assert_eq!(at(10_000.0).lasts_s, Some(2000.0));
    }
}
