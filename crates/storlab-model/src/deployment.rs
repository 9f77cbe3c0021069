//! A deployment: one config of a scenario resolved against the catalog — the
//! host with its limits and buckets, and each pool with its provisioned
//! devices, layout, path and host cache — and checked. Impossible
//! provisioning is an error, not a warning.

use crate::bucket::Bucket;
use crate::catalog::{Catalog, DeviceKind, DeviceSpec, HostKind, HostSpec, PathKind};
use crate::device::{provision, BucketRef, Cap, DeviceModel, Provisioning, GIB, MB};
use crate::error::{Location, ModelError, Result};
use crate::latency::LatencyModel;
use crate::scenario::{Bursting, ConfigSpec, HostCacheMode, Layout, PoolSpec, Role, ScenarioFile};
use serde::Serialize;
use indexmap::IndexMap;

/// Default stripe unit: LVM's default stripe size (64 KiB), also the
/// interleave the DESIGN.md example uses.
pub const DEFAULT_STRIPE_KIB: u32 = 64;

#[derive(Debug, Clone, Serialize)]
pub struct HostModel {
    pub id: String,
    pub title: String,
    pub kind: HostKind,
    pub vcpus: Option<f64>,
    pub memory_gib: Option<f64>,
    /// Relative CPU speed per vCPU and its basis, where published.
    pub cpu_speed: Option<f64>,
    pub cpu_speed_basis: Option<String>,
    /// The processor as the vendor names it, with its sustained all-core
    /// clock where published.
    pub cpu: Option<HostCpu>,
    pub nitro: bool,
    /// EC2/RDS: the instance's EBS limits, in counted I/Os and bytes.
    pub ebs_iops: Option<Cap>,
    pub ebs_bytes_s: Option<Cap>,
    pub ebs_iops_bucket: Option<Bucket>,
    pub ebs_bytes_bucket: Option<Bucket>,
    /// Azure: the VM's uncached (disk) limits and cached limits.
    pub uncached_iops: Option<Cap>,
    pub uncached_bytes_s: Option<Cap>,
    pub uncached_iops_bucket: Option<Bucket>,
    pub uncached_bytes_bucket: Option<Bucket>,
    pub cached_iops: Option<f64>,
    pub cached_bytes_s: Option<f64>,
    pub cache_gib: Option<f64>,
    pub network_bytes_s: Option<Cap>,
    pub flow_bytes_s: Option<f64>,
    /// A burstable instance's CPU credits, in the mode the config runs.
    pub cpu_credits: Option<CpuCredits>,
    pub unverified: Vec<String>,
}

/// A burstable instance's CPU credits as the simulator spends them, in
/// vCPU-seconds (one credit = 60): `standard` holds each vCPU to
/// `baseline` once `bucket` is empty; `unlimited` never slows and bills the
/// vCPU time above the baseline at `surplus_usd_per_vcpu_hour`.
#[derive(Debug, Clone, Serialize)]
pub struct CpuCredits {
    pub mode: CreditMode,
    /// Baseline utilisation per vCPU, 0–1.
    pub baseline: f64,
    pub earned_per_hour: f64,
    pub max_accrued: f64,
    pub surplus_usd_per_vcpu_hour: Option<f64>,
    pub src: String,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CreditMode {
    Standard,
    Unlimited,
}

impl CreditMode {
    pub fn name(self) -> &'static str {
        match self {
            CreditMode::Standard => "standard",
            CreditMode::Unlimited => "unlimited",
        }
    }
}

impl CpuCredits {
    /// The credit balance as a bucket of vCPU-seconds: it fills at the
    /// earnings, holds `max_accrued` credits, and while it holds any the
    /// vCPUs run at full speed.
    pub fn bucket(&self, vcpus: f64) -> Bucket {
        Bucket::full(self.max_accrued * 60.0, self.earned_per_hour * 60.0 / 3600.0, vcpus)
    }
}

impl HostModel {
    /// The short name used in binding strings (`t3.medium`, `Standard_DS4_v2`).
    pub fn short(&self) -> &str {
        self.id.rsplit('/').next().unwrap_or(&self.id)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Pool {
    pub role: Role,
    pub layout: Layout,
    pub count: u32,
    pub stripe_bytes: f64,
    pub host_cache: HostCacheMode,
    pub path: PathKind,
    /// Network flows (TCP connections) the pool's traffic rides on.
    pub flows: u32,
    pub device: DeviceModel,
    /// RDS storage striping applied by the service.
    pub rds_striped_from: Option<f64>,
    /// FSx deployment type, for prices.
    pub fs_deployment: Option<String>,
    pub on_demand_burst: bool,
}

impl Pool {
    pub fn label(&self) -> String {
        format!("pool {}", self.role.name())
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Deployment {
    pub name: String,
    pub title: Option<String>,
    pub region: Option<String>,
    pub license: String,
    pub engine: Option<String>,
    pub host: HostModel,
    pub pools: Vec<Pool>,
    /// Vendor rules that shaped the figures without refusing the config
    /// (a cap the host imposes, a host missing from a support list).
    pub warnings: Vec<String>,
    /// What was assumed where the scenario is silent.
    pub assumptions: Vec<String>,
    /// The day whose vendor rules apply (`as_of`), and which rules each
    /// device and host of the config followed that day; empty without one.
    pub as_of: Option<String>,
    /// Every bucket's balance at the start, percent of capacity
    /// (`buckets_at_start`; `None`: full).
    pub buckets_at_start_pct: Option<f64>,
    pub rules_applied: Vec<crate::catalog::RulesApplied>,
    /// Database server settings in force (lowercase names, values as
    /// strings): the managed service's rules for the engine, then the
    /// config's `settings`; each with where it came from.
    pub settings: IndexMap<String, Setting>,
}

/// A database server setting the deployment puts in force.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Setting {
    pub value: String,
    /// `config` (the scenario's `settings`), or the managed service's
    /// rule in words with its source.
    pub from: String,
}

/// A setting's value as a string: TOML strings as they are, numbers and
/// booleans as the server would print them (`true` → `ON`).
pub fn setting_text(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(if *b { "ON" } else { "OFF" }.to_string()),
        _ => None,
    }
}

/// Host licences `license` takes: they select the instance price.
pub const LICENSES: [&str; 4] = ["linux", "windows", "windows-sql-standard", "windows-sql-enterprise"];

fn vendor(id: &str) -> &str {
    id.split('/').next().unwrap_or("")
}

/// A throughput figure in bytes per second: Microsoft's size tables give
/// MBps "where MBps = 10^6 bytes/sec" (`mb_s`); `mib_s` is binary.
fn mbs(unverified: &mut Vec<String>, host: &str, what: &str, mib_s: &Option<crate::num::Num>, mb_s: &Option<crate::num::Num>) -> f64 {
    match crate::catalog::throughput_bytes_s(mib_s, mb_s) {
        Some((v, verified)) => {
            if !verified {
                unverified.push(format!("{host} {what}"));
            }
            v
        }
        None => 0.0,
    }
}

/// A host's processor for records: model, generation and the sustained
/// all-core clock (GHz) where the vendor publishes one.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct HostCpu {
    pub model: String,
    pub generation: Option<String>,
    pub all_core_ghz: Option<f64>,
}

fn host_model(h: &HostSpec) -> HostModel {
    let mut unverified_tp = Vec::new();
    let mut unverified = Vec::new();
    let mut n = |what: &str, x: &crate::num::Num| {
        if !x.verified {
            unverified.push(format!("{} {what}", h.id));
        }
        x.value
    };
    let vcpus = h.vcpus.as_ref().map(|v| n("vCPUs", v));
    let memory_gib = h.memory_gib.as_ref().map(|v| n("memory", v));
    let cpu_speed = h.cpu_speed.as_ref().map(|v| n("CPU speed", v));
    let cpu = h.cpu.as_ref().map(|c| HostCpu {
        model: c.model.clone(),
        generation: c.generation.clone(),
        all_core_ghz: c.all_core_ghz.as_ref().map(|g| n("all-core clock", g)),
    });
    let (mut ebs_iops, mut ebs_bytes_s, mut ebs_iops_bucket, mut ebs_bytes_bucket) = (None, None, None, None);
    if let Some(e) = &h.ebs {
        let (bi, mi) = (n("EBS baseline IOPS", &e.baseline_iops), n("EBS max IOPS", &e.max_iops));
        let (bb, mb) = (n("EBS baseline MB/s", &e.baseline_mb_s) * MB, n("EBS max MB/s", &e.max_mb_s) * MB);
        match (&e.burst_s, mi > bi) {
            (Some(d), true) => {
                // "maximum performance for 30 minutes at least once every 24
                // hours": a bucket that holds 30 min above the baseline.
                let d = n("EBS burst duration", d);
                ebs_iops = Some(Cap { baseline: bi, peak: mi, bucket: Some(BucketRef::Iops) });
                ebs_bytes_s = Some(Cap { baseline: bb, peak: mb, bucket: Some(BucketRef::Bytes) });
                ebs_iops_bucket = Some(Bucket::full((mi - bi) * d, bi, mi));
                ebs_bytes_bucket = Some(Bucket::full((mb - bb) * d, bb, mb));
            }
            _ => {
                ebs_iops = Some(Cap::flat(mi.max(bi)));
                ebs_bytes_s = Some(Cap::flat(mb.max(bb)));
            }
        }
    }
    let (mut uncached_iops, mut uncached_bytes_s, mut uncached_iops_bucket, mut uncached_bytes_bucket) = (None, None, None, None);
    if let Some(u) = &h.uncached {
        let i = n("uncached IOPS", &u.iops);
        let b = mbs(&mut unverified_tp, &h.id, "uncached MB/s", &u.mib_s, &u.mb_s);
        uncached_iops = Some(Cap::flat(i));
        uncached_bytes_s = Some(Cap::flat(b));
        if let Some(burst) = &h.uncached_burst {
            let (pi, d) = (n("burst IOPS", &burst.iops), n("burst duration", &burst.duration_s));
            let pb = mbs(&mut unverified_tp, &h.id, "burst MB/s", &burst.mib_s, &burst.mb_s);
            if pi > i {
                uncached_iops = Some(Cap { baseline: i, peak: pi, bucket: Some(BucketRef::Iops) });
                uncached_iops_bucket = Some(Bucket::full((pi - i) * d, i, pi));
            }
            if pb > b {
                uncached_bytes_s = Some(Cap { baseline: b, peak: pb, bucket: Some(BucketRef::Bytes) });
                uncached_bytes_bucket = Some(Bucket::full((pb - b) * d, b, pb));
            }
        }
    }
    let cached_iops = h.cached.as_ref().map(|c| n("cached IOPS", &c.iops));
    let cached_bytes_s = h.cached.as_ref().map(|c| mbs(&mut unverified_tp, &h.id, "cached MB/s", &c.mib_s, &c.mb_s));
    let cache_gib = h.cached.as_ref().and_then(|c| c.cache_gib.as_ref()).map(|g| n("cache size", g));
    let network_bytes_s = h.network.as_ref().map(|net| {
        let base = n("network baseline", &net.baseline_gbps) * 1e9 / 8.0;
        match &net.burst_gbps {
            Some(b) if b.value * 1e9 / 8.0 > base => {
                Cap { baseline: base, peak: n("network burst", b) * 1e9 / 8.0, bucket: Some(BucketRef::Network) }
            }
            _ => Cap::flat(base),
        }
    });
    let flow_bytes_s = h.network.as_ref().and_then(|net| net.flow_gbps.as_ref()).map(|f| n("single-flow limit", f) * 1e9 / 8.0);
    let cpu_credits = h.cpu_credits.as_ref().map(|c| CpuCredits {
        mode: if c.default_mode == "standard" { CreditMode::Standard } else { CreditMode::Unlimited },
        baseline: n("CPU baseline", &c.baseline_pct) / 100.0,
        earned_per_hour: n("CPU credits earned per hour", &c.earned_per_hour),
        max_accrued: n("CPU credit limit", &c.max_accrued),
        surplus_usd_per_vcpu_hour: c.surplus_usd_per_vcpu_hour.as_ref().map(|u| n("surplus credit rate", u)),
        src: c.src.clone(),
    });
    unverified.extend(unverified_tp);
    unverified.dedup();
    HostModel {
        id: h.id.clone(),
        title: h.title.clone(),
        kind: h.kind,
        vcpus,
        memory_gib,
        cpu_speed,
        cpu_speed_basis: h.cpu_speed_basis.clone(),
        cpu,
        nitro: h.nitro,
        ebs_iops,
        ebs_bytes_s,
        ebs_iops_bucket,
        ebs_bytes_bucket,
        uncached_iops,
        uncached_bytes_s,
        uncached_iops_bucket,
        uncached_bytes_bucket,
        cached_iops,
        cached_bytes_s,
        cache_gib,
        network_bytes_s,
        flow_bytes_s,
        cpu_credits,
        unverified,
    }
}

/// SMB 3 Multichannel, as Windows' client opens it by default
/// (`Get-SmbClientConfiguration`: ConnectionCountPerRssNetworkInterface 4,
/// MaximumConnectionCountPerServer 32) and as FSx documents it (the FSx for
/// Windows performance page: "Amazon FSx supports SMB Multichannel"; ONTAP's
/// SMB Multichannel page: one connection per 1G NIC, up to four per NIC of
/// 10G and more, 32 a session by default). A cloud instance has one
/// RSS-capable interface here; its speed is the host's network peak.
pub const SMB_CONNECTIONS_PER_RSS_NIC: u32 = 4;
pub const SMB_MAX_CONNECTIONS_PER_SESSION: u32 = 32;

/// Connections in one SMB session from this host to one share.
pub fn smb_connections_per_session(host: &HostSpec) -> u32 {
    let gbps = host.network.as_ref().map(|n| n.burst_gbps.as_ref().map_or(0.0, |b| b.value).max(n.baseline_gbps.value)).unwrap_or(0.0);
    let per_nic = if gbps >= 10.0 { SMB_CONNECTIONS_PER_RSS_NIC } else { 1 };
    per_nic.min(SMB_MAX_CONNECTIONS_PER_SESSION)
}

/// Resolves every config of a scenario, in file order.
pub fn resolve_all(cat: &Catalog, file: &str, sc: &ScenarioFile) -> Result<Vec<Deployment>> {
    if sc.configs.is_empty() {
        return Err(ModelError::Missing {
            at: Location::new(file, "configs", ""),
            hint: "a scenario needs at least one [configs.NAME] table with a host and [[configs.NAME.pools]]".into(),
            catalog: false,
        });
    }
    // A dated catalog (`--as-of`) wins over the scenario's `as_of`.
    let dated;
    let cat = match (&cat.as_of, &sc.as_of) {
        (None, Some(date)) => {
            dated = cat.on(date, Location::new(file, "as_of", ""))?;
            &dated
        }
        _ => cat,
    };
    let start = buckets_at_start(file, sc.buckets_at_start.as_ref())?;
    sc.configs
        .iter()
        .map(|(name, c)| {
            let mut d = resolve(cat, file, name, c, sc.region.as_deref())?;
            d.start_buckets(start);
            Ok(d)
        })
        .collect()
}

impl Deployment {
    /// The index of the pool with `role` (one of its roles' names), or of
    /// the primary pool without one; an unknown role gives the roles it has,
    /// for the caller's error.
    pub fn pool_index(&self, role: Option<&str>) -> std::result::Result<usize, String> {
        match role {
            None => Ok(self.pools.iter().position(|p| std::ptr::eq(p, crate::limits::primary_pool(self))).unwrap_or(0)),
            Some(r) => self.pools.iter().position(|p| p.role.name() == r).ok_or_else(|| self.pools.iter().map(|p| p.role.name()).collect::<Vec<_>>().join(", ")),
        }
    }

    /// Every credit bucket's balance at the start, a percent of its
    /// capacity (`None`: full), as `buckets_at_start` gives it.
    pub fn start_buckets(&mut self, start: Option<f64>) {
        self.buckets_at_start_pct = start;
        if let Some(p) = start {
            self.assumptions.push(format!("buckets_at_start: every credit bucket starts {p}% full"));
        }
    }
}

/// `buckets_at_start`: "full" (None), "empty" (0) or a percent 0–100.
pub fn buckets_at_start(file: &str, v: Option<&toml::Value>) -> Result<Option<f64>> {
    let bad = |got: String, near: &str| {
        ModelError::invalid(Location::new(file, "buckets_at_start", ""), format!("buckets_at_start is \"full\", \"empty\" or a percent from 0 to 100, got {got} — nearest valid value {near}"))
    };
    match v {
        None => Ok(None),
        Some(toml::Value::String(s)) if s == "full" => Ok(None),
        Some(toml::Value::String(s)) if s == "empty" => Ok(Some(0.0)),
        Some(toml::Value::String(s)) => Err(bad(format!("'{s}'"), "\"full\"")),
        Some(toml::Value::Integer(i)) if (0..=100).contains(i) => Ok(Some(*i as f64)),
        Some(toml::Value::Float(f)) if (0.0..=100.0).contains(f) => Ok(Some(*f)),
        Some(toml::Value::Integer(i)) => Err(bad(i.to_string(), if *i < 0 { "0" } else { "100" })),
        Some(toml::Value::Float(f)) => Err(bad(f.to_string(), if f.is_nan() || *f < 0.0 { "0" } else { "100" })),
        Some(other) => Err(bad(other.to_string(), "\"full\"")),
    }
}

fn cloud_name(vendor: &str) -> &str {
    match vendor {
        "aws" => "AWS",
        "azure" => "Azure",
        other => other,
    }
}

/// A region the catalog prices (a misspelt one would leave every price
/// out without a word), of the host's own cloud: an AWS host has no price
/// in an Azure region. Hosts of no cloud (`local/...`) go anywhere.
fn check_region(cat: &Catalog, file: &str, entry: &str, cfg: &ConfigSpec, region: Option<&str>) -> Result<()> {
    let (at, r) = match (&cfg.region, region) {
        (Some(r), _) => (Location::new(file, entry, "region"), r.as_str()),
        (None, Some(r)) => (Location::new(file, "region", ""), r),
        (None, None) => return Ok(()),
    };
    let regions = cat.regions();
    if !regions.iter().any(|x| x == r) {
        let near = crate::error::nearest(r, regions.iter().map(String::as_str)).or_else(|| regions.first().cloned()).unwrap_or_default();
        return Err(ModelError::invalid(at, format!("unknown region '{r}' — nearest valid value '{near}' (regions the catalog prices: {})", regions.join(", "))));
    }
    let cloud = vendor(&cfg.host);
    if matches!(cloud, "aws" | "azure") && vendor(r) != cloud {
        let own: Vec<&str> = regions.iter().map(String::as_str).filter(|x| vendor(x) == cloud).collect();
        let near = crate::error::nearest(r, own.iter().copied()).or_else(|| own.first().map(|s| s.to_string())).unwrap_or_default();
        return Err(ModelError::invalid(
            at,
            format!("region '{r}' is {}'s, and {} is an {} host — nearest valid value '{near}'", cloud_name(vendor(r)), cfg.host, cloud_name(cloud)),
        ));
    }
    Ok(())
}

pub fn resolve(cat: &Catalog, file: &str, name: &str, cfg: &ConfigSpec, region: Option<&str>) -> Result<Deployment> {
    let entry = format!("configs.{name}");
    let hspec = cat.host(&cfg.host, Location::new(file, &entry, "host"))?;
    let mut host = host_model(hspec);
    if let Some(mode) = &cfg.cpu_credits {
        let at = Location::new(file, &entry, "cpu_credits");
        let Some(cc) = host.cpu_credits.as_mut() else {
            return Err(ModelError::invalid(at, format!("'{mode}' — host {} earns no CPU credits (only burstable instances, such as EC2 T3, do); remove cpu_credits", hspec.id)));
        };
        cc.mode = match mode.to_ascii_lowercase().as_str() {
            "standard" => CreditMode::Standard,
            "unlimited" => CreditMode::Unlimited,
            other => {
                let near = crate::error::nearest(other, ["unlimited", "standard"]).unwrap_or_else(|| "unlimited".into());
                return Err(ModelError::invalid(at, format!("'{other}' — \"unlimited\" (the default) or \"standard\"; nearest valid value '{near}'")));
            }
        };
    }
    if cfg.pools.is_empty() {
        return Err(ModelError::Missing {
            at: Location::new(file, &entry, "pools"),
            hint: format!("config '{name}' needs at least one [[{entry}.pools]] entry with a device"),
            catalog: false,
        });
    }
    let engine = cfg.engine.as_ref().map(|e| e.to_ascii_lowercase());
    if let Some(e) = &engine {
        const ENGINES: [&str; 6] = ["sqlserver", "postgres", "mysql", "mariadb", "oracle", "db2"];
        if !ENGINES.contains(&e.as_str()) {
            return Err(ModelError::invalid(
                Location::new(file, &entry, "engine"),
                format!("unknown engine '{e}' — one of {}{}", ENGINES.join(", "), crate::error::nearest(e, ENGINES).map(|s| format!("; did you mean '{s}'?")).unwrap_or_default()),
            ));
        }
    }

    let license = match &cfg.license {
        None => "linux".to_string(),
        Some(l) => {
            let l = l.to_ascii_lowercase();
            if !LICENSES.contains(&l.as_str()) {
                let near = crate::error::nearest(&l, LICENSES).unwrap_or_else(|| "linux".into());
                return Err(ModelError::invalid(
                    Location::new(file, &entry, "license"),
                    format!("unknown license '{l}' — one of {}; nearest valid value '{near}'", LICENSES.join(", ")),
                ));
            }
            l
        }
    };

    check_region(cat, file, &entry, cfg, region)?;

    let mut warnings = Vec::new();
    let mut assumptions = Vec::new();
    let mut pools = Vec::new();
    let mut attached_disks = 0u32;
    for (i, p) in cfg.pools.iter().enumerate() {
        let pentry = format!("{entry}.pools[{i}]");
        let pool = resolve_pool(cat, file, &pentry, hspec, engine.as_deref(), p, &mut warnings)?;
        if pool.device.kind == DeviceKind::Volume {
            attached_disks += pool.count;
        }
        pools.push(pool);
    }
    check_attachments(cat, file, &entry, hspec, attached_disks)?;
    if hspec.kind == HostKind::Rds && engine.is_none() {
        // RDS lays storage out by engine: MySQL, MariaDB and PostgreSQL
        // stripe gp2/gp3 over 4 volumes from 400 GiB, SQL Server does not.
        let stripes = hspec.rds_striping.iter().filter(|r| r.holds_on(cat.as_of.as_deref())).any(|r| {
            pools.iter().any(|p| r.devices.contains(&p.device.id) && p.device.size_gib >= r.min_gib.value)
        });
        let what = if stripes {
            "storage laid out as one volume, as for SQL Server; with engine = \"postgres\", \"mysql\" or \"mariadb\" RDS stripes this size over 4 volumes"
        } else {
            "storage laid out as one volume, as for SQL Server (MySQL, MariaDB and PostgreSQL stripe gp2/gp3 over 4 volumes from 400 GiB)"
        };
        assumptions.push(format!("no engine given for RDS host {}: {what} — set engine = \"...\" to choose", hspec.id));
    }
    let mut roles: Vec<Role> = pools.iter().map(|p| p.role).collect();
    roles.sort_by_key(|r| r.name());
    if roles.windows(2).any(|w| w[0] == w[1]) {
        return Err(ModelError::invalid(Location::new(file, &entry, "pools"), "two pools have the same role — give each pool its own role (data, log, tempdb, all)"));
    }
    if roles.contains(&Role::All) && roles.len() > 1 {
        return Err(ModelError::invalid(Location::new(file, &entry, "pools"), "a pool with role 'all' holds everything — give the other pools data, log or tempdb, or drop them"));
    }
    let mut settings = IndexMap::new();
    if let Some(e) = &engine {
        for rule in hspec.engine_settings.iter().filter(|r| r.engines.iter().any(|x| x == e)) {
            if let (Some(since), Some(day)) = (&rule.since, &cat.as_of) {
                if day.as_str() < since.as_str() {
                    continue;
                }
            }
            for (k, v) in &rule.settings {
                if let Some(value) = setting_text(v) {
                    settings.insert(k.to_ascii_lowercase(), Setting { value, from: format!("{} ({})", rule.why, rule.src) });
                }
            }
        }
    }
    for (k, v) in &cfg.settings {
        let value = setting_text(v).ok_or_else(|| {
            ModelError::invalid(Location::new(file, &format!("{entry}.settings"), k), "a setting's value is a string, a number or true/false, as the server takes it — e.g. innodb_doublewrite = \"OFF\"")
        })?;
        settings.insert(k.to_ascii_lowercase(), Setting { value, from: "config".into() });
    }
    let mut rules_applied = Vec::new();
    if let Some(date) = &cat.as_of {
        for id in std::iter::once(&hspec.id).chain(pools.iter().map(|p| &p.device.id)) {
            if let Some(r) = cat.applied.get(id.as_str()) {
                if !rules_applied.contains(r) {
                    rules_applied.push(r.clone());
                }
            }
        }
        assumptions.push(format!("as_of {date}: device and host limits as they stood that day; prices are today's catalog prices, not those of {date}"));
    }
    Ok(Deployment {
        name: name.to_string(),
        title: cfg.title.clone(),
        region: cfg.region.clone().or(region.map(str::to_string)),
        license,
        engine,
        host,
        pools,
        warnings,
        assumptions,
        as_of: cat.as_of.clone(),
        buckets_at_start_pct: None,
        rules_applied,
        settings,
    })
}

/// Attachment limits: Azure's "max data disks" per VM size; on EC2 Nitro
/// instances either a dedicated EBS volume limit or 28 attachments shared
/// by EBS volumes, network interfaces and NVMe instance-store volumes.
fn check_attachments(cat: &Catalog, file: &str, entry: &str, h: &HostSpec, volumes: u32) -> Result<()> {
    let at = || Location::new(file, entry, "pools");
    let src = |n: &crate::num::Num| {
        cat.provenance(n, h.src.as_deref()).map(|p| format!(" ({})", p.url)).unwrap_or_default()
    };
    let n = f64::from(volumes);
    if let Some(max) = &h.max_data_disks {
        if n > max.value {
            return Err(ModelError::invalid(
                at(),
                format!("{} takes at most {} data disks{}, the pools attach {volumes} — use {} or fewer, or a larger VM", h.id, max.value, src(max), max.value),
            ));
        }
    }
    if let Some(max) = &h.max_ebs_volumes {
        // Dedicated limit: the root volume is an EBS volume too.
        let data = max.value - 1.0;
        if n > data {
            return Err(ModelError::invalid(
                at(),
                format!("{} takes at most {} EBS volumes{}: {} data volumes besides the root volume, the pools attach {volumes} — nearest valid value {}", h.id, max.value, src(max), data, data),
            ));
        }
    }
    if let Some(max) = &h.max_attachments {
        // Shared limit: at least one network interface, the EBS root
        // volume, and every NVMe instance-store volume take attachments.
        let store = h.instance_store.as_ref().map_or(0, |s| s.count);
        let data = max.value - 1.0 - 1.0 - f64::from(store);
        if n > data {
            let store_txt = if store > 0 { format!(" − {store} instance-store volumes") } else { String::new() };
            return Err(ModelError::invalid(
                at(),
                format!(
                    "{} takes at most {} attachments{} shared by EBS volumes, network interfaces and instance-store volumes: {} − 1 network interface − 1 EBS root volume{store_txt} = {data} data volumes, the pools attach {volumes} — nearest valid value {data}",
                    h.id, max.value, src(max), max.value
                ),
            ));
        }
    }
    Ok(())
}

/// Most devices one pool may hold.
pub const MAX_POOL_DEVICES: u32 = 1024;

fn resolve_pool(cat: &Catalog, file: &str, entry: &str, host: &HostSpec, engine: Option<&str>, p: &PoolSpec, warnings: &mut Vec<String>) -> Result<Pool> {
    let at = Location::new(file, entry, "");
    let spec = cat.device(&p.device, Location::new(file, entry, "device"))?;
    let inv = |field: &str, msg: String| ModelError::invalid(Location::new(file, entry, field), msg);

    let pat = PoolAt { cat, file, entry, host, spec, p };
    check_reach(pat, warnings)?;

    // Layout.
    if p.count == 0 {
        return Err(inv("count", "count must be at least 1".into()));
    }
    // Beyond any host's attachments (EBS: 128 on the largest Nitro
    // instances) and any file-share layout: refused before one device is
    // modelled, so a typo never allocates billions of them.
    if p.count > MAX_POOL_DEVICES {
        return Err(inv("count", format!("{} devices in one pool — at most {MAX_POOL_DEVICES}; nearest valid value {MAX_POOL_DEVICES}", p.count)));
    }
    let layout = match (p.layout, p.count) {
        (Some(l), _) => l,
        (None, 1) => Layout::Single,
        (None, n) => return Err(ModelError::Missing { at: Location::new(file, entry, "layout"), hint: format!("{n} devices need layout = \"stripe\", \"spread\" or \"raid6\""), catalog: false }),
    };
    match layout {
        Layout::Single if p.count != 1 => return Err(inv("layout", format!("layout 'single' takes one device, count is {} — use \"stripe\" or \"spread\"", p.count))),
        Layout::Raid6 if p.count < 4 => return Err(inv("count", format!("RAID-6 needs at least 4 devices, got {} — nearest valid value 4", p.count))),
        Layout::Raid6 if spec.kind != DeviceKind::Local => return Err(inv("layout", format!("raid6 is for on-premises disks; {} is a cloud device — use \"stripe\"", spec.id))),
        _ => {}
    }
    if p.stripe_kib.is_some() && layout != Layout::Stripe && layout != Layout::Raid6 {
        return Err(inv("stripe_kib", format!("stripe_kib applies to layout 'stripe' or 'raid6', not '{}'", layout.name())));
    }
    let stripe_kib = p.stripe_kib.unwrap_or(DEFAULT_STRIPE_KIB);
    if stripe_kib < 4 || !stripe_kib.is_power_of_two() {
        let near = stripe_kib.max(4).next_power_of_two();
        return Err(inv("stripe_kib", format!("stripe_kib must be a power of two of at least 4, got {stripe_kib} — nearest valid value {near}")));
    }

    // Path.
    let path = match p.path {
        Some(pk) if !spec.paths.contains(&pk) => {
            let valid: Vec<&str> = spec.paths.iter().map(|x| x.name()).collect();
            return Err(inv("path", format!("{} is reached by {}, not '{}'", spec.id, valid.join(" or "), pk.name())));
        }
        Some(pk) => pk,
        None => spec.paths[0],
    };
    if p.mpio_paths.is_some() && path != PathKind::Iscsi {
        return Err(inv("mpio_paths", "mpio_paths applies to path = \"iscsi\"".into()));
    }
    if p.mpio_paths == Some(0) {
        return Err(inv("mpio_paths", "mpio_paths must be at least 1".into()));
    }
    // Each SMB share is a server of its own, reached by one SMB 3 session of
    // several connections (Multichannel); iSCSI rides on its MPIO sessions.
    let flows = match path {
        // MPIO multipaths each LUN: every device (an FSx file system, a
        // LUN on its own target) has `mpio_paths` sessions of its own.
        PathKind::Iscsi => p.count * p.mpio_paths.unwrap_or(1),
        PathKind::Block => 0,
        PathKind::Smb => p.count * smb_connections_per_session(host),
        _ => p.count,
    };

    // Host cache.
    let host_cache = p.host_cache.unwrap_or(HostCacheMode::None);
    if host_cache != HostCacheMode::None {
        if spec.host_cache.is_none() {
            return Err(inv("host_cache", format!("{} does not support host caching — use host_cache = \"none\"", spec.id)));
        }
        if host.cached.is_none() {
            return Err(inv("host_cache", format!("{} publishes no cached limits, so host caching cannot be modelled on it — use host_cache = \"none\"", host.id)));
        }
    }

    // RDS lays storage out itself: above engine-specific sizes it stripes
    // over several volumes (RDS user guide, "Storage for Amazon RDS").
    let (count, layout, size, rds_striped_from) = rds_layout(pat, engine, layout, warnings)?;

    let bursting = p.bursting.unwrap_or(Bursting::Credit);
    let prov = Provisioning {
        size_gib: size,
        iops: p.iops.map(|i| if rds_striped_from.is_some() { i / f64::from(count) } else { i }),
        throughput_mib_s: p.throughput_mib_s,
        throughput_mb_s: p.throughput_mb_s,
        storage_gib: p.storage_gib,
        burst: bursting != Bursting::None,
        on_demand: bursting == Bursting::OnDemand,
    };
    let mut device = provision(spec, &prov, &at)?;
    if host_cache != HostCacheMode::None {
        if let Some(max) = device.host_cache_max_gib {
            if device.size_gib > max {
                return Err(inv(
                    "host_cache",
                    format!("host caching is not supported on disks of 4 TiB and larger ({} is {} GiB, the limit is {max} GiB) — use host_cache = \"none\" or a smaller disk", spec.id, device.size_gib),
                ));
            }
        }
    }
    nitro_limits(pat, &mut device, warnings)?;
    Ok(Pool {
        role: p.role,
        layout,
        count,
        stripe_bytes: f64::from(stripe_kib) * 1024.0,
        host_cache,
        path,
        flows,
        device,
        rds_striped_from,
        fs_deployment: p.deployment.clone(),
        on_demand_burst: bursting == Bursting::OnDemand,
    })
}

/// One pool entry being resolved: where it stands, its host, its device's
/// catalog entry and what the scenario asked.
#[derive(Clone, Copy)]
struct PoolAt<'a> {
    cat: &'a Catalog,
    file: &'a str,
    entry: &'a str,
    host: &'a HostSpec,
    spec: &'a DeviceSpec,
    p: &'a PoolSpec,
}

/// Refuses a device the host cannot reach (another vendor's, io2 Block
/// Express or Premium Storage without the host's support, an instance store
/// it does not have) and warns where the vendor's list of hosts leaves it
/// open.
fn check_reach(at: PoolAt, warnings: &mut Vec<String>) -> Result<()> {
    let PoolAt { cat, file, entry, host, spec, p } = at;
    let inv = |field: &str, msg: String| ModelError::invalid(Location::new(file, entry, field), msg);
    let (dv, hv) = (vendor(&spec.id), vendor(&host.id));
    if dv != hv {
        return Err(inv("device", format!("{} is a {dv} device and {} a {hv} host — pick a {hv} device", spec.id, host.id)));
    }
    if let Some(req) = &spec.requires {
        if req.block_express && !host.block_express {
            return Err(inv("device", format!("{} needs an instance that supports io2 Block Express (R5b, X2idn, X2iedn, ...); {} does not", spec.id, host.id)));
        }
        if req.premium_storage && !host.premium_storage {
            match &req.premium_storage_src {
                Some(k) => {
                    let src = cat.sources.get(k).map(|s| format!("{} ({})", s.url, s.date)).unwrap_or_else(|| k.clone());
                    warnings.push(format!(
                        "{entry}: {} on {}: Microsoft lists it for VM sizes that support Premium Storage, and the catalog does not record Premium Storage for {} — check its size page before you deploy (source: {src})",
                        spec.id, host.id, host.id
                    ));
                }
                None => return Err(inv("device", format!("{} needs a VM size that supports Premium Storage; {} does not", spec.id, host.id))),
            }
        }
    }
    if let Some(list) = &spec.listed_hosts {
        if !list.matches(&host.id) {
            let src = cat.sources.get(&list.src).map(|s| format!("{} ({})", s.url, s.date)).unwrap_or_else(|| list.src.clone());
            warnings.push(format!(
                "{entry}: {} on {}: {} — {} is not in that list; check the current list before you deploy (source: {src})",
                spec.id, host.id, list.rule, host.id.rsplit('/').next().unwrap_or(&host.id)
            ));
        }
    }
    if spec.kind == DeviceKind::Local && spec.id.contains("instance-store") {
        match &host.instance_store {
            Some(s) if s.device == spec.id => {
                if p.count > s.count {
                    return Err(inv("count", format!("{} has {} instance-store devices — nearest valid value {}", host.id, s.count, s.count)));
                }
            }
            _ => return Err(inv("device", format!("{} has no instance store of type {}", host.id, spec.id))),
        }
    }

    Ok(())
}

/// The pool's devices as laid out: on RDS, above engine-specific sizes,
/// RDS stripes the allocation over several volumes: (count, layout, each
/// volume's size, the allocation it was striped from).
fn rds_layout(at: PoolAt, engine: Option<&str>, layout: Layout, warnings: &mut Vec<String>) -> Result<(u32, Layout, Option<f64>, Option<f64>)> {
    let PoolAt { cat, file, entry, host, spec, p } = at;
    let inv = |field: &str, msg: String| ModelError::invalid(Location::new(file, entry, field), msg);
    let mut count = p.count;
    let mut layout = layout;
    let mut size = p.size_gib;
    let mut rds_striped_from = None;
    if host.kind == HostKind::Rds {
        if p.count != 1 {
            return Err(inv("count", "RDS storage is one allocation; set size_gib and let RDS lay it out (count = 1)".into()));
        }
        if let (Some(e), Some(s)) = (engine, p.size_gib) {
            let applies = |r: &&crate::catalog::RdsStriping| r.engines.iter().any(|x| x == e) && r.devices.contains(&spec.id) && s >= r.min_gib.value;
            if let Some(rule) = host.rds_striping.iter().filter(applies).find(|r| !r.holds_on(cat.as_of.as_deref())) {
                if let (Some(since), Some(day)) = (&rule.since, &cat.as_of) {
                    warnings.push(format!(
                        "{entry}: RDS striping of {} GiB and more over {} volumes is documented from {} ({}); as_of {day} is earlier, so the {s} GiB are one volume",
                        rule.min_gib.value, rule.volumes, since.date, since.src
                    ));
                }
            }
            if let Some(rule) = host.rds_striping.iter().filter(applies).find(|r| r.holds_on(cat.as_of.as_deref())) {
                count = rule.volumes;
                layout = Layout::Stripe;
                size = Some(s / f64::from(rule.volumes));
                rds_striped_from = Some(s);
            }
        }
    }

    Ok((count, layout, size, rds_striped_from))
}

/// io1/io2 on an instance not built on Nitro: AWS attaches the volume
/// (io2: provisioned up to 64,000 IOPS) but it delivers at most 32,000.
fn nitro_limits(at: PoolAt, device: &mut DeviceModel, warnings: &mut Vec<String>) -> Result<()> {
    let PoolAt { file, entry, host, spec, .. } = at;
    let inv = |field: &str, msg: String| ModelError::invalid(Location::new(file, entry, field), msg);
    if let (Some(req), Some(iops), false) = (&spec.requires, device.provisioned_iops, host.nitro) {
        if let Some(max) = &req.non_nitro_max_iops {
            if iops > max.value {
                return Err(inv("iops", format!("{} attached to {} (not built on Nitro) may be provisioned with at most {} IOPS, got {} — nearest valid value {}", spec.id, host.id, max.value, iops, max.value)));
            }
        }
        if let Some(limit) = &req.nitro_above_iops {
            if iops > limit.value {
                let cap = limit.value;
                device.iops.baseline = device.iops.baseline.min(cap);
                device.iops.peak = device.iops.peak.min(cap);
                warnings.push(format!(
                    "{entry}: {} provisioned with {iops} IOPS on {} delivers at most {cap} IOPS: only instances built on Nitro reach more (the volume is billed as provisioned)",
                    spec.id, host.id
                ));
            }
        }
    }
    Ok(())
}

/// GiB of a pool as provisioned (for prices and reports).
pub fn pool_gib(p: &Pool) -> f64 {
    p.device.size_gib * f64::from(p.count)
}

pub fn gib_to_bytes(g: f64) -> f64 {
    g * GIB
}

/// The latency models of one pool, as every engine uses them: the device's,
/// the host cache's where the pool reads through one, and which of them are
/// placeholders rather than published figures.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolLatency {
    pub device: LatencyModel,
    /// A read served by the host cache (Azure `readonly`/`readwrite`).
    pub host_cache: Option<LatencyModel>,
    /// "aws/ebs/gp2 latency (placeholder)" for each figure not yet verified.
    pub placeholders: Vec<String>,
}

/// The catalog id that has no latency model: the device's own, or its
/// cloud's `<cloud>/host-cache`.
#[derive(Debug, Clone, PartialEq)]
pub struct NoLatency(pub String);

/// The one lookup of a pool's latency models, for the simulator and the
/// emulator alike.
pub fn pool_latency(cat: &Catalog, dep: &Deployment, pool: &Pool) -> std::result::Result<PoolLatency, NoLatency> {
    let mut placeholders = Vec::new();
    let mut model = |id: &str| -> std::result::Result<LatencyModel, NoLatency> {
        let (spec, verified) = cat.latency_for(id).ok_or_else(|| NoLatency(id.to_string()))?;
        if !verified {
            placeholders.push(format!("{id} latency (placeholder)"));
        }
        Ok(LatencyModel::from_spec(&spec))
    };
    let device = model(&pool.device.id)?;
    let host_cache = if pool.host_cache != HostCacheMode::None {
        Some(model(&format!("{}/host-cache", dep.host.id.split('/').next().unwrap_or("")))?)
    } else {
        None
    };
    Ok(PoolLatency { device, host_cache, placeholders })
}
