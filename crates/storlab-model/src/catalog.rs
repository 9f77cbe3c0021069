//! The catalog: vendor devices, hosts and prices read from TOML files, each
//! number traceable to a `[source.*]` entry. This module owns the file schema
//! and the checks a catalog must pass before any deployment is resolved
//! against it; the arithmetic on these numbers lives in `device`, `host`,
//! `limits` and `cost`.

use crate::error::{from_toml_error, nearest, Location, ModelError, Result};
use crate::num::Num;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------- schema

#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct CatalogFile {
    #[serde(default)]
    pub source: IndexMap<String, SourceSpec>,
    #[serde(default)]
    pub device: Vec<DeviceSpec>,
    #[serde(default)]
    pub host: Vec<HostSpec>,
    #[serde(default)]
    pub price: Vec<PriceSpec>,
    #[serde(default)]
    pub latency: Vec<LatencyProfile>,
}

impl CatalogFile {
    /// The file as catalog TOML, as a person would write it: a number with
    /// no source, note or doubt of its own is bare (`value = 3000`, not a
    /// `{ value, verified }` table), and empty lists and tables are left out.
    pub fn to_toml(&self) -> std::result::Result<String, String> {
        fn tidy(v: toml::Value) -> Option<toml::Value> {
            match v {
                toml::Value::Table(t) => {
                    let mut t = t;
                    let num = t.get("value").is_some_and(|v| v.is_float() || v.is_integer()) && t.keys().all(|k| ["value", "src", "verified", "note"].contains(&k.as_str()));
                    if num && t.get("verified") == Some(&toml::Value::Boolean(true)) {
                        t.remove("verified");
                    }
                    if num && t.len() == 1 {
                        return t.remove("value").map(whole);
                    }
                    let t: toml::Table = t.into_iter().filter_map(|(k, v)| tidy(v).map(|v| (k, v))).collect();
                    (!t.is_empty()).then_some(toml::Value::Table(t))
                }
                toml::Value::Array(a) => {
                    let a: Vec<_> = a.into_iter().filter_map(tidy).collect();
                    (!a.is_empty()).then_some(toml::Value::Array(a))
                }
                other => Some(whole(other)),
            }
        }
        // 3000.0 reads back the same as 3000; the shorter is what a person writes.
        fn whole(v: toml::Value) -> toml::Value {
            match v {
                toml::Value::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => toml::Value::Integer(f as i64),
                other => other,
            }
        }
        let value = toml::Value::try_from(self).map_err(|e| e.to_string())?;
        let tidied = tidy(value).unwrap_or_else(|| toml::Value::Table(toml::Table::new()));
        let text = toml::to_string(&tidied).map_err(|e| e.to_string())?;
        // What is written must read back as the same file.
        let again: CatalogFile = toml::from_str(&text).map_err(|e| format!("the written TOML does not read back: {e}"))?;
        if toml::Value::try_from(&again).ok() != toml::Value::try_from(self).ok() {
            return Err("the written TOML reads back as another file".into());
        }
        Ok(text)
    }
}

/// A latency model shared by several devices: `devices` lists ids, or
/// prefixes ending in `*` (`azure/premium-ssd/*`). A device's own `latency`
/// wins; `azure/host-cache` is the host cache's hit latency.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LatencyProfile {
    pub devices: Vec<String>,
    #[serde(default)]
    pub src: Option<String>,
    pub read_median_us: Num,
    pub read_p99_us: Num,
    pub write_median_us: Num,
    pub write_p99_us: Num,
    /// A durable write: one write followed by a flush of the device's
    /// volatile cache (`fdatasync`), at queue depth 1. Absent where a write
    /// is durable when acknowledged (cloud block storage), so a flush adds
    /// nothing to the write.
    #[serde(default)]
    pub flush_median_us: Option<Num>,
    #[serde(default)]
    pub flush_p99_us: Option<Num>,
    /// µs each MiB of an I/O beyond its first 4 KiB adds, per direction.
    #[serde(default)]
    pub read_us_per_mib: Option<Num>,
    #[serde(default)]
    pub write_us_per_mib: Option<Num>,
    #[serde(default)]
    pub note: Option<String>,
}

impl LatencyProfile {
    pub fn matches(&self, id: &str) -> bool {
        self.devices.iter().any(|d| match d.strip_suffix('*') {
            Some(prefix) => id.starts_with(prefix),
            None => d == id,
        })
    }
    pub fn spec(&self) -> LatencySpec {
        LatencySpec {
            read_median_us: self.read_median_us.clone(),
            read_p99_us: self.read_p99_us.clone(),
            write_median_us: self.write_median_us.clone(),
            write_p99_us: self.write_p99_us.clone(),
            flush_median_us: self.flush_median_us.clone(),
            flush_p99_us: self.flush_p99_us.clone(),
            read_us_per_mib: self.read_us_per_mib.clone(),
            write_us_per_mib: self.write_us_per_mib.clone(),
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    /// A URL, or `owner/repo path@commit` for a vendor's documentation repo.
    pub url: String,
    /// The date the source gives for itself (`ms.date`, last change, page date).
    pub date: String,
    /// `vendor` (the vendor's own page, docs repo or API model), `secondary`
    /// (a third party reproducing vendor data), or `unverified`.
    #[serde(default = "vendor")]
    pub status: String,
    #[serde(default)]
    pub note: Option<String>,
}

fn vendor() -> String {
    "vendor".into()
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum DeviceKind {
    /// A block volume attached to a host (EBS, Azure managed disk).
    Volume,
    /// A file system reached over the network (FSx).
    FileSystem,
    /// A device inside the host (instance store, on-premises disks).
    Local,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Media {
    Ssd,
    Hdd,
}

/// How an I/O of a given size counts against an IOPS limit.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Accounting {
    /// I/Os up to this size count as one; larger ones count once per unit.
    pub unit_kib: Num,
    /// Whether physically sequential I/Os are merged up to the unit (EBS).
    #[serde(default)]
    pub merge_sequential: bool,
    /// Whether each counted I/O draws a whole unit from the throughput
    /// budget, however small it is (EBS HDD: "an I/O ≤1 MiB counts as a
    /// 1 MiB credit").
    #[serde(default)]
    pub charge_whole_unit: bool,
    /// Sequential I/Os smaller than this are not merged: each counts one
    /// (EBS merges sequential I/O "that are 32 KiB or over"; AWS knowledge
    /// center, EBS I/O size).
    #[serde(default)]
    pub merge_min_kib: Option<Num>,
}

/// A provisioning rule for one quantity (IOPS or throughput). `rule` picks
/// the vendor's arithmetic.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(tag = "rule", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Rule {
    /// A fixed figure (Azure tiers, local devices).
    Fixed { value: Num },
    /// `clamp(per_gib × size, min, max)` (gp2 IOPS, st1 baseline).
    PerGib { per_gib: Num, #[serde(default)] min: Option<Num>, #[serde(default)] max: Option<Num> },
    /// `clamp(per_iops × provisioned IOPS, min, max)` (io1, io2 throughput).
    PerIops { per_iops: Num, #[serde(default)] min: Option<Num>, max: Num },
    /// The user provisions the figure within `[min, max]` and within a ratio
    /// to size (`max_base + max_per_gib × (size − max_per_gib_after_gib)`) or
    /// to provisioned IOPS (`max_per_iops × iops`).
    Provisioned {
        min: Num,
        max: Num,
        #[serde(default)]
        default: Option<Num>,
        /// Included in the storage price (gp3's 3,000 IOPS and 125 MiB/s).
        #[serde(default)]
        included: Option<Num>,
        #[serde(default)]
        max_per_gib: Option<Num>,
        #[serde(default)]
        max_per_gib_after_gib: Option<Num>,
        #[serde(default)]
        max_base: Option<Num>,
        #[serde(default)]
        max_per_iops: Option<Num>,
    },
    /// Size bands (gp2 throughput): the last band whose `min_gib` ≤ size.
    Tiers { tiers: Vec<Tier> },
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Tier {
    pub min_gib: Num,
    pub value: Num,
    /// A higher figure reached while the device's burst bucket holds credits.
    #[serde(default)]
    pub burst: Option<Num>,
}

/// A token bucket in catalog terms. The peak is fixed or per GiB (capped);
/// the capacity is fixed, per GiB, or "enough for `duration_s` at the peak"
/// above the baseline. Tokens refill at the baseline rate and every counted
/// unit of work takes one, so the burst lasts `capacity / (peak − baseline)`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BurstRule {
    #[serde(default)]
    pub peak: Option<Num>,
    #[serde(default)]
    pub peak_per_gib: Option<Num>,
    #[serde(default)]
    pub peak_max: Option<Num>,
    #[serde(default)]
    pub capacity: Option<Num>,
    #[serde(default)]
    pub capacity_per_gib: Option<Num>,
    #[serde(default)]
    pub duration_s: Option<Num>,
    /// Bursting applies only to sizes up to this (Azure credit bursting:
    /// P20 and smaller).
    #[serde(default)]
    pub max_size_gib: Option<Num>,
}

/// Azure on-demand bursting (Premium SSD P30 and larger, opt-in, billed per
/// burst transaction): a higher cap with no bucket.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OnDemandBurst {
    pub iops: Num,
    pub mib_s: Num,
    #[serde(default)]
    pub min_size_gib: Option<Num>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SizeRule {
    #[serde(default)]
    pub fixed: Option<Num>,
    #[serde(default)]
    pub min: Option<Num>,
    #[serde(default)]
    pub max: Option<Num>,
    #[serde(default)]
    pub default: Option<Num>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HostCacheRule {
    /// The largest disk that host caching supports ("Disk caching isn't
    /// supported for disks 4 TiB and larger").
    pub max_gib: Num,
}

/// Per-direction caps of local devices, whose vendors publish read and write
/// figures separately.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DirectionalCaps {
    #[serde(default)]
    pub read_iops: Option<Num>,
    #[serde(default)]
    pub write_iops: Option<Num>,
    #[serde(default)]
    pub read_mib_s: Option<Num>,
    #[serde(default)]
    pub write_mib_s: Option<Num>,
}

/// One throughput-capacity level of a file system (FSx tables).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FsLevel {
    pub throughput_mb_s: Num,
    pub network_mb_s: Num,
    #[serde(default)]
    pub network_burst_mb_s: Option<Num>,
    #[serde(default)]
    pub memory_gb: Option<Num>,
    pub disk_mb_s: Num,
    #[serde(default)]
    pub disk_burst_mb_s: Option<Num>,
    pub disk_iops: Num,
    #[serde(default)]
    pub disk_burst_iops: Option<Num>,
    #[serde(default)]
    pub src: Option<String>,
}

/// File-system storage rules: what the SSD tier gives per GiB, and how long
/// the file server's bursts last.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FsStorage {
    pub min_gib: Num,
    pub max_gib: Num,
    pub iops_per_gib: Num,
    pub mb_s_per_gib: Num,
    /// Disk burst "30 mins a day".
    #[serde(default)]
    pub disk_burst_s: Option<Num>,
    /// Network burst "a few minutes a day".
    #[serde(default)]
    pub network_burst_s: Option<Num>,
    /// Provisioned SSD IOPS above the `iops_per_gib` default: at most this
    /// many per GiB of storage, and at most `max_iops` in all.
    #[serde(default)]
    pub max_iops_per_gib: Option<Num>,
    #[serde(default)]
    pub max_iops: Option<Num>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LatencySpec {
    pub read_median_us: Num,
    pub read_p99_us: Num,
    pub write_median_us: Num,
    pub write_p99_us: Num,
    #[serde(default)]
    pub flush_median_us: Option<Num>,
    #[serde(default)]
    pub flush_p99_us: Option<Num>,
    /// µs each MiB of an I/O beyond its first 4 KiB adds (a 1 MiB read
    /// takes longer than a 4 KiB one); absent: 0. `calibrate` fits them
    /// from a measured SEQ1M Q1T1 job beside RND4K Q1T1.
    #[serde(default)]
    pub read_us_per_mib: Option<Num>,
    #[serde(default)]
    pub write_us_per_mib: Option<Num>,
}

/// Service times a catalog may give, µs: above 0 (an I/O takes time) and at
/// most 10 s (beyond any device's timeout). A calibrated overlay outside
/// them is refused where it is read, with the nearest valid value.
pub const LATENCY_RANGE_US: (f64, f64) = (0.01, 1e7);

impl LatencySpec {
    pub fn check_range(&self, file: &str, entry: &str) -> Result<()> {
        let (lo, hi) = LATENCY_RANGE_US;
        let fields = [
            ("read_median_us", Some(&self.read_median_us)),
            ("read_p99_us", Some(&self.read_p99_us)),
            ("write_median_us", Some(&self.write_median_us)),
            ("write_p99_us", Some(&self.write_p99_us)),
            ("flush_median_us", self.flush_median_us.as_ref()),
            ("flush_p99_us", self.flush_p99_us.as_ref()),
        ];
        for (field, n) in fields {
            let Some(v) = n.map(|n| n.value) else { continue };
            if !(v.is_finite() && (lo..=hi).contains(&v)) {
                let nearest = if v > hi { hi } else { lo };
                return Err(ModelError::invalid_catalog(
                    Location::new(file, entry, field),
                    format!("{v} µs — a service time lies in [{lo}, {hi}] µs; nearest valid value {nearest}"),
                ));
            }
        }
        for (field, n) in [("read_us_per_mib", &self.read_us_per_mib), ("write_us_per_mib", &self.write_us_per_mib)] {
            let Some(v) = n.as_ref().map(|n| n.value) else { continue };
            if !(v.is_finite() && (0.0..=hi).contains(&v)) {
                let nearest = if v > hi { hi } else { 0.0 };
                return Err(ModelError::invalid_catalog(
                    Location::new(file, entry, field),
                    format!("{v} µs a MiB — the time a MiB adds lies in [0, {hi}] µs; nearest valid value {nearest}"),
                ));
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum PathKind {
    Block,
    Smb,
    Iscsi,
    Nfs,
}

impl PathKind {
    pub fn name(self) -> &'static str {
        match self {
            PathKind::Block => "block",
            PathKind::Smb => "smb",
            PathKind::Iscsi => "iscsi",
            PathKind::Nfs => "nfs",
        }
    }
    pub fn is_network(self) -> bool {
        !matches!(self, PathKind::Block)
    }
}

/// What a host must offer for a device (io2 Block Express: a BE-capable
/// instance; io1/io2 above 32,000 IOPS: Nitro).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Requires {
    #[serde(default)]
    pub block_express: bool,
    #[serde(default)]
    pub premium_storage: bool,
    /// When set, a host without Premium Storage gets a warning citing this
    /// source instead of an error (Premium SSD v2: "can be used with any
    /// premium storage-enabled virtual machine size").
    #[serde(default)]
    pub premium_storage_src: Option<String>,
    /// Above this many provisioned IOPS a host not built on Nitro delivers
    /// only this many: the volume attaches and is capped, with a note.
    #[serde(default)]
    pub nitro_above_iops: Option<Num>,
    /// The most provisioned IOPS a volume attached to a host not built on
    /// Nitro may have (io2: "other instance types can be attached to volumes
    /// provisioned with up to 64,000 IOPS").
    #[serde(default)]
    pub non_nitro_max_iops: Option<Num>,
    /// Which host families may attach it (`aws`, `azure`, `local`).
    #[serde(default)]
    pub cloud: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceSpec {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub src: Option<String>,
    pub kind: DeviceKind,
    pub media: Media,
    pub accounting: Accounting,
    pub size_gib: SizeRule,
    #[serde(default)]
    pub iops: Option<Rule>,
    #[serde(default)]
    pub throughput_mib_s: Option<Rule>,
    /// The throughput rule in decimal MB/s (10^6 bytes/s), for vendors that
    /// define their figures so (Azure Ultra Disk). Use one of the two.
    #[serde(default)]
    pub throughput_mb_s: Option<Rule>,
    #[serde(default)]
    pub directional: Option<DirectionalCaps>,
    #[serde(default)]
    pub iops_burst: Option<BurstRule>,
    #[serde(default)]
    pub throughput_burst: Option<BurstRule>,
    #[serde(default)]
    pub on_demand_burst: Option<OnDemandBurst>,
    #[serde(default)]
    pub host_cache: Option<HostCacheRule>,
    #[serde(default)]
    pub requires: Option<Requires>,
    #[serde(default)]
    pub levels: Vec<FsLevel>,
    #[serde(default)]
    pub storage: Option<FsStorage>,
    #[serde(default)]
    pub latency: Option<LatencySpec>,
    #[serde(default = "block_only")]
    pub paths: Vec<PathKind>,
    /// The hosts the vendor lists today as able to attach this device. A
    /// host outside the list gets a warning, not an error: such lists change.
    #[serde(default)]
    pub listed_hosts: Option<HostList>,
    #[serde(default)]
    pub notes: Vec<String>,
    /// The first day the catalog knows this device's rules (its launch, or
    /// the oldest dated source); a scenario dated earlier is refused.
    #[serde(default)]
    pub known_from: Option<Dated>,
    /// Rules that held before today's, oldest first (`[[device.history]]`).
    #[serde(default)]
    pub history: Vec<DevicePeriod>,
}

/// A date with its source (`known_from = { date = "2020-12-01", src = "..." }`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Dated {
    pub date: String,
    pub src: String,
}

/// The rules a device followed from `from` (inclusive) until `until`
/// (exclusive): each field given replaces today's, the others stand. Bare
/// numbers take the period's `src`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DevicePeriod {
    pub from: String,
    pub until: String,
    pub src: String,
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub size_gib: Option<SizeRule>,
    #[serde(default)]
    pub iops: Option<Rule>,
    #[serde(default)]
    pub throughput_mib_s: Option<Rule>,
    #[serde(default)]
    pub iops_burst: Option<BurstRule>,
    #[serde(default)]
    pub throughput_burst: Option<BurstRule>,
    /// The device did not burst in this period: no credit bucket and no
    /// on-demand bursting (Azure Premium SSD before credit-based bursting
    /// reached P20 and smaller, and before on-demand bursting reached P30
    /// and larger).
    #[serde(default)]
    pub no_burst: bool,
    #[serde(default)]
    pub requires: Option<Requires>,
}

/// The rules a host followed over a past period (`[[host.history]]`), as
/// [`DevicePeriod`] for devices.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HostPeriod {
    pub from: String,
    pub until: String,
    pub src: String,
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub ebs: Option<EbsLimits>,
    #[serde(default)]
    pub uncached: Option<AzureCaps>,
    #[serde(default)]
    pub uncached_burst: Option<AzureBurst>,
    #[serde(default)]
    pub cached: Option<AzureCaps>,
}

/// Which rules a dated scenario applied to one device or host: a past
/// period, or today's (`until` absent).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RulesApplied {
    pub id: String,
    pub from: Option<String>,
    pub until: Option<String>,
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Whether `s` is a calendar date written `YYYY-MM-DD`.
pub fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| s[r].parse::<u32>().ok();
    match (num(0..4), num(5..7), num(8..10)) {
        (Some(y), Some(m), Some(d)) => {
            let days = match m {
                1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
                4 | 6 | 9 | 11 => 30,
                2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
                2 => 28,
                _ => return false,
            };
            (1900..=2999).contains(&y) && (1..=days).contains(&d)
        }
        _ => false,
    }
}

/// A dated period: its bounds, for the lookup shared by devices and hosts.
pub trait Period {
    fn from(&self) -> &str;
    fn until(&self) -> &str;
}

impl Period for DevicePeriod {
    fn from(&self) -> &str {
        &self.from
    }
    fn until(&self) -> &str {
        &self.until
    }
}

impl Period for HostPeriod {
    fn from(&self) -> &str {
        &self.from
    }
    fn until(&self) -> &str {
        &self.until
    }
}

/// The period of `history` that held on `date` (`Ok(None)`: today's rules),
/// or `Err(first)` when `date` is before the first day the catalog knows
/// (`known_from`, else the first period's start). Dates are `YYYY-MM-DD`,
/// so they compare as strings; `history` is checked sorted and contiguous
/// when the catalog loads.
pub fn period_on<'a, P: Period>(known_from: Option<&str>, history: &'a [P], date: &str) -> std::result::Result<Option<&'a P>, String> {
    let first = known_from.or(history.first().map(|p| p.from()));
    if let Some(f) = first {
        if date < f {
            return Err(f.to_string());
        }
    }
    Ok(history.iter().find(|p| p.from() <= date && date < p.until()))
}

impl DeviceSpec {
    /// This device with the rules of `date` in place of today's, and which
    /// rules those are; `Err(first day known)` before the catalog knows it.
    pub fn on(&self, date: &str, cat: &Catalog) -> std::result::Result<(DeviceSpec, RulesApplied), String> {
        let url = |k: &str| cat.sources.get(k).map(|s| s.url.clone());
        match period_on(self.known_from.as_ref().map(|k| k.date.as_str()), &self.history, date)? {
            Some(p) => {
                let mut d = self.clone();
                if let Some(t) = &p.title {
                    d.title = t.clone();
                }
                // Bare numbers of the period cite the period's source.
                let with_src = |mut v: serde_json::Value| {
                    cite(&mut v, &p.src);
                    v
                };
                macro_rules! take {
                    ($f:ident) => {
                        if let Some(x) = &p.$f {
                            d.$f = serde_json::from_value(with_src(serde_json::to_value(x).expect("rule serialises"))).expect("rule round-trips");
                        }
                    };
                }
                macro_rules! take_opt {
                    ($f:ident) => {
                        if let Some(x) = &p.$f {
                            d.$f = Some(serde_json::from_value(with_src(serde_json::to_value(x).expect("rule serialises"))).expect("rule round-trips"));
                        }
                    };
                }
                take!(size_gib);
                take_opt!(iops);
                take_opt!(throughput_mib_s);
                take_opt!(iops_burst);
                take_opt!(throughput_burst);
                take_opt!(requires);
                if p.no_burst {
                    d.iops_burst = None;
                    d.throughput_burst = None;
                    d.on_demand_burst = None;
                }
                let applied = RulesApplied { id: self.id.clone(), from: Some(p.from.clone()), until: Some(p.until.clone()), source: url(&p.src), note: p.note.clone() };
                Ok((d, applied))
            }
            None => {
                let from = self.history.last().map(|p| p.until.clone()).or_else(|| self.known_from.as_ref().map(|k| k.date.clone()));
                let source = match (self.history.last(), &self.known_from) {
                    (Some(p), _) => url(&p.src),
                    (None, Some(k)) => url(&k.src),
                    (None, None) => None,
                };
                let note = (self.history.is_empty() && self.known_from.is_none()).then(|| "no dated history in the catalog: today's rules".to_string());
                Ok((self.clone(), RulesApplied { id: self.id.clone(), from, until: None, source, note }))
            }
        }
    }
}

impl HostSpec {
    /// This host with the limits of `date` in place of today's (as
    /// [`DeviceSpec::on`]).
    pub fn on(&self, date: &str, cat: &Catalog) -> std::result::Result<(HostSpec, RulesApplied), String> {
        let url = |k: &str| cat.sources.get(k).map(|s| s.url.clone());
        match period_on(self.known_from.as_ref().map(|k| k.date.as_str()), &self.history, date)? {
            Some(p) => {
                let mut h = self.clone();
                let with_src = |x: &dyn erased::Ser| {
                    let mut v = x.json();
                    cite(&mut v, &p.src);
                    v
                };
                if let Some(e) = &p.ebs {
                    h.ebs = Some(serde_json::from_value(with_src(e)).expect("limits round-trip"));
                }
                if let Some(u) = &p.uncached {
                    h.uncached = Some(serde_json::from_value(with_src(u)).expect("limits round-trip"));
                }
                if let Some(u) = &p.uncached_burst {
                    h.uncached_burst = Some(serde_json::from_value(with_src(u)).expect("limits round-trip"));
                }
                if let Some(c) = &p.cached {
                    h.cached = Some(serde_json::from_value(with_src(c)).expect("limits round-trip"));
                }
                Ok((h, RulesApplied { id: self.id.clone(), from: Some(p.from.clone()), until: Some(p.until.clone()), source: url(&p.src), note: p.note.clone() }))
            }
            None => {
                let from = self.history.last().map(|p| p.until.clone()).or_else(|| self.known_from.as_ref().map(|k| k.date.clone()));
                let source = match (self.history.last(), &self.known_from) {
                    (Some(p), _) => url(&p.src),
                    (None, Some(k)) => url(&k.src),
                    (None, None) => None,
                };
                let note = (self.history.is_empty() && self.known_from.is_none()).then(|| "no dated history in the catalog: today's limits".to_string());
                Ok((self.clone(), RulesApplied { id: self.id.clone(), from, until: None, source, note }))
            }
        }
    }
}

mod erased {
    /// Serialises a value to JSON behind a trait object.
    pub trait Ser {
        fn json(&self) -> serde_json::Value;
    }
    impl<T: serde::Serialize> Ser for T {
        fn json(&self) -> serde_json::Value {
            serde_json::to_value(self).expect("catalog value serialises")
        }
    }
}

/// Gives every sourceless number (`{value, verified}` without `src`) in a
/// serialised rule the source `src`.
fn cite(v: &mut serde_json::Value, src: &str) {
    match v {
        serde_json::Value::Object(m) => {
            if m.contains_key("value") && m.contains_key("verified") {
                m.entry("src").or_insert_with(|| serde_json::Value::String(src.to_string()));
            } else {
                for c in m.values_mut() {
                    cite(c, src);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(|c| cite(c, src)),
        _ => {}
    }
}

/// A vendor's list of hosts that support a device: ids or prefixes ending in
/// `*`, the rule in words, and its source.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HostList {
    pub hosts: Vec<String>,
    pub rule: String,
    pub src: String,
}

impl HostList {
    pub fn matches(&self, host_id: &str) -> bool {
        self.hosts.iter().any(|d| match d.strip_suffix('*') {
            Some(prefix) => host_id.starts_with(prefix),
            None => d == host_id,
        })
    }
}

fn block_only() -> Vec<PathKind> {
    vec![PathKind::Block]
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum HostKind {
    Ec2,
    Rds,
    AzureVm,
    Local,
}

/// EC2 EBS-optimized limits (measured with 16 KiB I/O for IOPS and 128 KiB
/// streaming reads for throughput), with the "30 minutes at least once every
/// 24 hours" burst of the smaller sizes.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EbsLimits {
    pub baseline_iops: Num,
    pub max_iops: Num,
    pub baseline_mb_s: Num,
    pub max_mb_s: Num,
    #[serde(default)]
    pub burst_s: Option<Num>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkLimits {
    pub baseline_gbps: Num,
    #[serde(default)]
    pub burst_gbps: Option<Num>,
    #[serde(default)]
    pub burst_s: Option<Num>,
    /// One flow (TCP connection) outside a cluster placement group.
    #[serde(default)]
    pub flow_gbps: Option<Num>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AzureCaps {
    pub iops: Num,
    /// Throughput in MiB/s; Microsoft's size tables use `mb_s` (MBps =
    /// 10^6 bytes/s, "Size table definitions"). Give one of the two.
    #[serde(default)]
    pub mib_s: Option<Num>,
    #[serde(default)]
    pub mb_s: Option<Num>,
    #[serde(default)]
    pub cache_gib: Option<Num>,
}

/// Bytes per second from a `mib_s` / `mb_s` pair (whichever is given).
pub fn throughput_bytes_s(mib_s: &Option<Num>, mb_s: &Option<Num>) -> Option<(f64, bool)> {
    match (mb_s, mib_s) {
        (Some(m), _) => Some((m.value * 1e6, m.verified)),
        (None, Some(m)) => Some((m.value * 1024.0 * 1024.0, m.verified)),
        (None, None) => None,
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AzureBurst {
    pub iops: Num,
    #[serde(default)]
    pub mib_s: Option<Num>,
    #[serde(default)]
    pub mb_s: Option<Num>,
    pub duration_s: Num,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct InstanceStore {
    pub device: String,
    pub count: u32,
}

/// RDS puts storage on several volumes above engine-specific sizes.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RdsStriping {
    pub engines: Vec<String>,
    pub devices: Vec<String>,
    pub min_gib: Num,
    pub volumes: u32,
    /// The first day the rule is documented (`YYYY-MM-DD`); before it an
    /// allocation is one volume.
    #[serde(default)]
    pub since: Option<Dated>,
}

impl RdsStriping {
    /// Whether the rule held on `as_of` (today's rules when `None`).
    pub fn holds_on(&self, as_of: Option<&str>) -> bool {
        match (&self.since, as_of) {
            (Some(s), Some(day)) => day >= s.date.as_str(),
            _ => true,
        }
    }
}

/// Settings a managed service applies for some engines on a host, from
/// `since` (the day the catalog's source dates the rule) on.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EngineSettings {
    pub engines: Vec<String>,
    pub settings: IndexMap<String, toml::Value>,
    #[serde(default)]
    pub since: Option<String>,
    /// The rule in words.
    pub why: String,
    pub src: String,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub src: Option<String>,
    pub kind: HostKind,
    #[serde(default)]
    pub vcpus: Option<Num>,
    #[serde(default)]
    pub memory_gib: Option<Num>,
    #[serde(default)]
    pub nitro: bool,
    #[serde(default)]
    pub block_express: bool,
    #[serde(default)]
    pub premium_storage: bool,
    #[serde(default)]
    pub ebs: Option<EbsLimits>,
    #[serde(default)]
    pub network: Option<NetworkLimits>,
    #[serde(default)]
    pub uncached: Option<AzureCaps>,
    #[serde(default)]
    pub uncached_burst: Option<AzureBurst>,
    #[serde(default)]
    pub cached: Option<AzureCaps>,
    #[serde(default)]
    pub max_data_disks: Option<Num>,
    /// Nitro instances with a shared limit: attachments shared by EBS
    /// volumes, network interfaces and NVMe instance-store volumes.
    #[serde(default)]
    pub max_attachments: Option<Num>,
    /// Nitro instances with a dedicated EBS volume limit.
    #[serde(default)]
    pub max_ebs_volumes: Option<Num>,
    /// Relative CPU speed per vCPU where a vendor or benchmark publishes
    /// one; `cpu_speed_basis` says relative to what (Azure ACU: Standard_A1
    /// = 100, entered ÷ 100).
    #[serde(default)]
    pub cpu_speed: Option<Num>,
    #[serde(default)]
    pub cpu_speed_basis: Option<String>,
    /// A burstable instance's CPU credits (EC2 T3/T3a/T4g).
    #[serde(default)]
    pub cpu_credits: Option<CpuCreditsSpec>,
    /// The processor behind the vCPUs, as the vendor names it.
    #[serde(default)]
    pub cpu: Option<CpuSpec>,
    #[serde(default)]
    pub instance_store: Option<InstanceStore>,
    #[serde(default)]
    pub rds_striping: Vec<RdsStriping>,
    /// Server settings a managed service puts in force for an engine on
    /// this host (RDS: the binary log with automated backups, Optimized
    /// Writes' doublewrite off where the class supports it).
    #[serde(default)]
    pub engine_settings: Vec<EngineSettings>,
    #[serde(default)]
    pub notes: Vec<String>,
    /// As for devices: the first day the catalog knows this host's limits,
    /// and the limits that held before today's.
    #[serde(default)]
    pub known_from: Option<Dated>,
    #[serde(default)]
    pub history: Vec<HostPeriod>,
}

/// A burstable instance's CPU credits, as the EC2 user guide's credit table
/// gives them: one credit is one vCPU at 100 % for one minute; the instance
/// earns `earned_per_hour` and holds at most `max_accrued` (a day's
/// earnings); its baseline is the utilisation per vCPU the earnings pay for.
/// Above it, `standard` spends the balance and then holds each vCPU to the
/// baseline; `unlimited` (T3's default) never slows and bills the surplus
/// at `surplus_usd_per_vcpu_hour`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CpuCreditsSpec {
    pub earned_per_hour: Num,
    pub max_accrued: Num,
    pub baseline_pct: Num,
    /// The flat rate of surplus credits, Linux, per vCPU-hour.
    #[serde(default)]
    pub surplus_usd_per_vcpu_hour: Option<Num>,
    /// `unlimited` or `standard`: the mode an instance launches in.
    pub default_mode: String,
    pub src: String,
}

/// A host's processor: the vendor's model name and generation, with the
/// sustained all-core clock where the vendor publishes one.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CpuSpec {
    pub model: String,
    #[serde(default)]
    pub generation: Option<String>,
    #[serde(default)]
    pub all_core_ghz: Option<Num>,
    pub src: String,
}

/// One priced component: `usd` per `unit` of `item` in `region`, for the
/// quantity above `above` (free allowance) and up to `upto` (tier end).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PriceSpec {
    pub region: String,
    pub item: String,
    pub unit: PriceUnit,
    pub usd: Num,
    #[serde(default)]
    pub above: Option<f64>,
    #[serde(default)]
    pub upto: Option<f64>,
    /// For hosts: `linux`, `windows`, `windows-sql-standard`, ...
    #[serde(default)]
    pub license: Option<String>,
    /// For file systems and RDS: `single-az` or `multi-az`.
    #[serde(default)]
    pub deployment: Option<String>,
    /// For RDS instance classes: the engine (`postgres`, `mysql`,
    /// `sqlserver-se`, ...) the hourly price is for.
    #[serde(default)]
    pub engine: Option<String>,
    #[serde(default)]
    pub src: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum PriceUnit {
    GibMonth,
    IopsMonth,
    MibSMonth,
    MbSMonth,
    DiskMonth,
    Hour,
}

impl PriceUnit {
    pub fn name(self) -> &'static str {
        match self {
            PriceUnit::GibMonth => "GiB-month",
            PriceUnit::IopsMonth => "IOPS-month",
            PriceUnit::MibSMonth => "MiB/s-month",
            PriceUnit::MbSMonth => "MB/s-month",
            PriceUnit::DiskMonth => "disk-month",
            PriceUnit::Hour => "hour",
        }
    }
}

// ---------------------------------------------------------------- catalog

/// A source as resolved for one number, for printing and JSON.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Provenance {
    pub key: String,
    pub url: String,
    pub date: String,
    pub status: String,
    pub verified: bool,
}

#[derive(Debug, Clone, Default)]
pub struct Catalog {
    pub sources: IndexMap<String, SourceSpec>,
    pub devices: IndexMap<String, DeviceSpec>,
    pub hosts: IndexMap<String, HostSpec>,
    pub prices: Vec<PriceSpec>,
    pub latency: Vec<(String, LatencyProfile)>,
    /// Which file each id came from, for messages.
    pub origin: IndexMap<String, String>,
    /// Set by [`Catalog::on`]: the day whose rules the devices and hosts
    /// carry, which rules each follows, and the ids the catalog does not
    /// know yet on that day with the first day it does.
    pub as_of: Option<String>,
    pub applied: IndexMap<String, RulesApplied>,
    pub unknown_before: IndexMap<String, String>,
}

impl Catalog {
    /// Builds a catalog from `(file name, TOML text)` pairs. Later files may
    /// not redefine an id of an earlier one (that would hide a vendor figure
    /// silently); users add ids of their own.
    pub fn from_sources<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Catalog> {
        let mut cat = Catalog::default();
        for (name, text) in files {
            let de = toml::Deserializer::new(text);
            let file: CatalogFile =
                serde_path_to_error::deserialize(de).map_err(|e| from_toml_error(name, text, e, true))?;
            cat.add_file(name, file)?;
        }
        cat.check()?;
        Ok(cat)
    }

    fn add_file(&mut self, name: &str, file: CatalogFile) -> Result<()> {
        for (k, s) in file.source {
            if let Some(prev) = self.sources.get(&k) {
                if prev.url != s.url {
                    return Err(ModelError::invalid_catalog(
                        Location::new(name, &format!("source.{k}"), ""),
                        "source key defined twice with different urls — rename one",
                    ));
                }
            }
            self.sources.insert(k, s);
        }
        for (i, d) in file.device.into_iter().enumerate() {
            let at = Location::new(name, &format!("device[{i}]"), "id");
            self.claim_id(&d.id, name, at)?;
            self.devices.insert(d.id.clone(), d);
        }
        for (i, h) in file.host.into_iter().enumerate() {
            let at = Location::new(name, &format!("host[{i}]"), "id");
            self.claim_id(&h.id, name, at)?;
            self.hosts.insert(h.id.clone(), h);
        }
        for l in file.latency {
            self.latency.push((name.to_string(), l));
        }
        for p in file.price {
            self.origin.entry(format!("price:{}:{}", p.region, p.item)).or_insert_with(|| name.to_string());
            self.prices.push(p);
        }
        Ok(())
    }

    fn claim_id(&mut self, id: &str, file: &str, at: Location) -> Result<()> {
        if let Some(prev) = self.origin.get(id) {
            return Err(ModelError::invalid_catalog(
                at,
                format!("id '{id}' is already defined in {prev} — give your entry an id of its own"),
            ));
        }
        if id.split('/').count() < 2 || id.contains(' ') {
            return Err(ModelError::invalid_catalog(at, format!("id '{id}' must look like 'vendor/family/name'")));
        }
        self.origin.insert(id.to_string(), file.to_string());
        Ok(())
    }

    /// Every number's source key must exist; every entry with bare numbers
    /// must name a default `src`; instance-store devices must exist.
    fn check(&self) -> Result<()> {
        for (id, d) in &self.devices {
            let file = self.origin.get(id).cloned().unwrap_or_default();
            let json = serde_json::to_value(d).expect("device spec serialises");
            self.check_sources(&file, id, d.src.as_deref(), &json)?;
            if d.throughput_mib_s.is_some() && d.throughput_mb_s.is_some() {
                return Err(ModelError::invalid_catalog(
                    Location::new(&file, id, "throughput_mb_s"),
                    "give one throughput rule: throughput_mib_s or throughput_mb_s",
                ));
            }
            if let Some(l) = &d.listed_hosts {
                if !self.sources.contains_key(&l.src) {
                    return Err(self.unknown_source(&file, id, &l.src));
                }
            }
            self.check_history(&file, id, d.known_from.as_ref(), &d.history)?;
        }
        for (id, h) in &self.hosts {
            let file = self.origin.get(id).cloned().unwrap_or_default();
            let json = serde_json::to_value(h).expect("host spec serialises");
            self.check_sources(&file, id, h.src.as_deref(), &json)?;
            for (what, caps) in [("uncached", &h.uncached), ("cached", &h.cached)] {
                if let Some(c) = caps {
                    if c.mib_s.is_some() == c.mb_s.is_some() {
                        return Err(ModelError::invalid_catalog(
                            Location::new(&file, id, &format!("{what}.mb_s")),
                            "give the throughput once: mb_s (10^6 bytes/s, Microsoft's MBps) or mib_s",
                        ));
                    }
                }
            }
            if let Some(b) = &h.uncached_burst {
                if b.mib_s.is_some() == b.mb_s.is_some() {
                    return Err(ModelError::invalid_catalog(
                        Location::new(&file, id, "uncached_burst.mb_s"),
                        "give the throughput once: mb_s (10^6 bytes/s, Microsoft's MBps) or mib_s",
                    ));
                }
            }
            self.check_history(&file, id, h.known_from.as_ref(), &h.history)?;
            if let Some(c) = &h.cpu {
                if !self.sources.contains_key(&c.src) {
                    return Err(self.unknown_source(&file, id, &c.src));
                }
            }
            if let Some(store) = &h.instance_store {
                if !self.devices.contains_key(&store.device) {
                    return Err(ModelError::UnknownId {
                        at: Location::new(&file, id, "instance_store.device"),
                        what: "device",
                        id: store.device.clone(),
                        suggestion: nearest(&store.device, self.devices.keys().map(|s| s.as_str())),
                        catalog: true,
                    });
                }
            }
        }
        for (file, l) in &self.latency {
            let json = serde_json::to_value(l).expect("latency profile serialises");
            let entry = format!("latency {}", l.devices.join(","));
            self.check_sources(file, &entry, l.src.as_deref(), &json)?;
            l.spec().check_range(file, &entry)?;
        }
        for (id, d) in &self.devices {
            if let Some(l) = &d.latency {
                l.check_range(self.origin.get(id).map_or("", |f| f.as_str()), id)?;
            }
        }
        for p in &self.prices {
            let file = self.origin.get(&format!("price:{}:{}", p.region, p.item)).cloned().unwrap_or_default();
            let key = p.usd.src.as_deref().or(p.src.as_deref());
            let entry = format!("price {} {}", p.region, p.item);
            match key {
                None if p.usd.verified => {
                    return Err(ModelError::Missing {
                        at: Location::new(&file, &entry, "src"),
                        hint: "every price needs a source key, or verified = false".into(),
                        catalog: true,
                    })
                }
                Some(k) if !self.sources.contains_key(k) => return Err(self.unknown_source(&file, &entry, k)),
                _ => {}
            }
        }
        Ok(())
    }

    /// A history's dates are `YYYY-MM-DD`, its periods oldest first, each
    /// ending where the next begins, none before `known_from`; each cites a
    /// source.
    fn check_history<P: Period + Serialize>(&self, file: &str, id: &str, known: Option<&Dated>, history: &[P]) -> Result<()> {
        let bad = |field: String, msg: String| Err(ModelError::invalid_catalog(Location::new(file, id, &field), msg));
        if let Some(k) = known {
            if !is_date(&k.date) {
                return bad("known_from.date".into(), format!("'{}' is not a date — write it YYYY-MM-DD, e.g. 2020-12-01", k.date));
            }
            if !self.sources.contains_key(&k.src) {
                return Err(self.unknown_source(file, id, &k.src));
            }
        }
        for (i, p) in history.iter().enumerate() {
            for (what, d) in [("from", p.from()), ("until", p.until())] {
                if !is_date(d) {
                    return bad(format!("history[{i}].{what}"), format!("'{d}' is not a date — write it YYYY-MM-DD, e.g. 2018-11-26"));
                }
            }
            if p.from() >= p.until() {
                return bad(format!("history[{i}].until"), format!("period ends ({}) on or before it begins ({}) — give an until after from", p.until(), p.from()));
            }
            if let Some(prev) = i.checked_sub(1).map(|j| &history[j]) {
                if prev.until() != p.from() {
                    return bad(format!("history[{i}].from"), format!("periods must follow each other: the one before ends {}, this one begins {} — nearest valid value {}", prev.until(), p.from(), prev.until()));
                }
            }
            if let Some(k) = known {
                if p.from() < k.date.as_str() {
                    return bad(format!("history[{i}].from"), format!("{} is before known_from {} — nearest valid value {}", p.from(), k.date, k.date));
                }
            }
            let src = serde_json::to_value(p).expect("period serialises");
            if let Some(k) = src.get("src").and_then(|s| s.as_str()) {
                if !self.sources.contains_key(k) {
                    return Err(self.unknown_source(file, id, k));
                }
            }
        }
        Ok(())
    }

    fn unknown_source(&self, file: &str, entry: &str, key: &str) -> ModelError {
        ModelError::UnknownId {
            at: Location::new(file, entry, "src"),
            what: "source",
            id: key.to_string(),
            suggestion: nearest(key, self.sources.keys().map(|s| s.as_str())),
            catalog: true,
        }
    }

    /// Walks a serialised entry: every `{value, src, verified}` table (a
    /// `Num`) needs a source of its own or the entry's.
    fn check_sources(&self, file: &str, id: &str, default: Option<&str>, v: &serde_json::Value) -> Result<()> {
        if let Some(k) = default {
            if !self.sources.contains_key(k) {
                return Err(self.unknown_source(file, id, k));
            }
        }
        fn walk(cat: &Catalog, file: &str, id: &str, path: &str, default: Option<&str>, v: &serde_json::Value) -> Result<()> {
            match v {
                serde_json::Value::Object(m) => {
                    let is_num = m.contains_key("value") && m.contains_key("verified");
                    if is_num {
                        let src = m.get("src").and_then(|s| s.as_str());
                        let verified = m.get("verified").and_then(|b| b.as_bool()).unwrap_or(true);
                        match src.or(default) {
                            Some(k) if !cat.sources.contains_key(k) => return Err(cat.unknown_source(file, id, k)),
                            None if verified => {
                                return Err(ModelError::Missing {
                                    at: Location::new(file, id, path),
                                    hint: "a number needs a source: give the entry `src = \"...\"` or the number `{ value = ..., src = \"...\" }`, or mark it verified = false".into(),
                                    catalog: true,
                                })
                            }
                            _ => {}
                        }
                        return Ok(());
                    }
                    // A level or tier may carry its own default source.
                    let local = m.get("src").and_then(|s| s.as_str()).or(default);
                    for (k, child) in m {
                        let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                        walk(cat, file, id, &p, local, child)?;
                    }
                }
                serde_json::Value::Array(a) => {
                    for (i, child) in a.iter().enumerate() {
                        walk(cat, file, id, &format!("{path}[{i}]"), default, child)?;
                    }
                }
                _ => {}
            }
            Ok(())
        }
        walk(self, file, id, "", default, v)
    }

    /// The catalog as it stood on `date` (`YYYY-MM-DD`): every device and
    /// host with the rules of that day. Prices stay today's. `at` locates
    /// the date for the message when it is malformed.
    pub fn on(&self, date: &str, at: Location) -> Result<Catalog> {
        if !is_date(date) {
            return Err(ModelError::invalid(at, format!("as_of '{date}' is not a date — write it YYYY-MM-DD, e.g. 2018-08-29")));
        }
        let mut cat = self.clone();
        cat.as_of = Some(date.to_string());
        cat.applied.clear();
        cat.unknown_before.clear();
        for (id, d) in &self.devices {
            match d.on(date, self) {
                Ok((spec, applied)) => {
                    cat.devices.insert(id.clone(), spec);
                    cat.applied.insert(id.clone(), applied);
                }
                Err(first) => {
                    cat.unknown_before.insert(id.clone(), first);
                }
            }
        }
        for (id, h) in &self.hosts {
            match h.on(date, self) {
                Ok((spec, applied)) => {
                    cat.hosts.insert(id.clone(), spec);
                    cat.applied.insert(id.clone(), applied);
                }
                Err(first) => {
                    cat.unknown_before.insert(id.clone(), first);
                }
            }
        }
        Ok(cat)
    }

    fn not_yet(&self, what: &str, id: &str, at: &Location) -> Option<ModelError> {
        let first = self.unknown_before.get(id)?;
        let date = self.as_of.as_deref().unwrap_or("");
        Some(ModelError::invalid(
            at.clone(),
            format!("the catalog knows {what} {id} from {first}, and as_of is {date} — set as_of to {first} or later, or pick a {what} of that day"),
        ))
    }

    pub fn device(&self, id: &str, at: Location) -> Result<&DeviceSpec> {
        if let Some(e) = self.not_yet("device", id, &at) {
            return Err(e);
        }
        self.devices.get(id).ok_or_else(|| ModelError::UnknownId {
            at,
            what: "device",
            suggestion: nearest(id, self.devices.keys().map(|s| s.as_str())),
            id: id.to_string(),
            catalog: false,
        })
    }

    pub fn host(&self, id: &str, at: Location) -> Result<&HostSpec> {
        if let Some(e) = self.not_yet("host", id, &at) {
            return Err(e);
        }
        self.hosts.get(id).ok_or_else(|| ModelError::UnknownId {
            at,
            what: "host",
            suggestion: nearest(id, self.hosts.keys().map(|s| s.as_str())),
            id: id.to_string(),
            catalog: false,
        })
    }

    /// The provenance of a number: its own source, else its entry's.
    pub fn provenance(&self, n: &Num, entry_src: Option<&str>) -> Option<Provenance> {
        let key = n.src.as_deref().or(entry_src)?;
        let s = self.sources.get(key)?;
        Some(Provenance {
            key: key.to_string(),
            url: s.url.clone(),
            date: s.date.clone(),
            status: s.status.clone(),
            verified: n.verified && s.status != "unverified",
        })
    }

    /// The latency model of a device (or of `azure/host-cache`): its own,
    /// else the last matching profile (later files override earlier ones),
    /// with whether every figure is verified.
    pub fn latency_for(&self, id: &str) -> Option<(LatencySpec, bool)> {
        let verified = |l: &LatencySpec, src: Option<&str>| {
            [&l.read_median_us, &l.read_p99_us, &l.write_median_us, &l.write_p99_us]
                .into_iter()
                .chain(l.flush_median_us.iter())
                .chain(l.flush_p99_us.iter())
                .all(|n| self.provenance(n, src).is_some_and(|p| p.verified))
        };
        if let Some(d) = self.devices.get(id) {
            if let Some(l) = &d.latency {
                return Some((l.clone(), verified(l, d.src.as_deref())));
            }
        }
        self.latency.iter().rev().find(|(_, p)| p.matches(id)).map(|(_, p)| {
            let spec = p.spec();
            let v = verified(&spec, p.src.as_deref());
            (spec, v)
        })
    }

    /// Regions that have at least one price.
    pub fn regions(&self) -> Vec<String> {
        let mut r: Vec<String> = self.prices.iter().map(|p| p.region.clone()).collect();
        r.sort();
        r.dedup();
        r
    }
}
