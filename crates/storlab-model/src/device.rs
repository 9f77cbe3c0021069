//! A device as provisioned: the catalog's rules applied to a size, IOPS and
//! throughput, giving caps (baseline and peak) and the buckets that govern
//! the peak. Provisioning the vendor does not allow is an error here, with
//! the nearest valid value.

use crate::bucket::Bucket;
use crate::catalog::{BurstRule, DeviceKind, DeviceSpec, FsLevel, Media, Rule};
use crate::error::{Location, ModelError, Result};
use crate::latency::LatencyModel;
use crate::num::Num;
use serde::Serialize;

pub const KIB: f64 = 1024.0;
pub const MIB: f64 = 1024.0 * 1024.0;
pub const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
pub const MB: f64 = 1e6;

/// Which bucket, if any, lets a cap run above its baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BucketRef {
    Iops,
    Bytes,
    Network,
    /// No bucket: the peak holds as long as it is enabled (Azure on-demand).
    Unlimited,
}

/// A limit with the figure that holds while its bucket has credits (`peak`)
/// and the one that holds once it is empty (`baseline`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Cap {
    pub baseline: f64,
    pub peak: f64,
    pub bucket: Option<BucketRef>,
}

impl Cap {
    pub fn flat(v: f64) -> Cap {
        Cap { baseline: v, peak: v, bucket: None }
    }
    pub fn at(&self, full: bool) -> f64 {
        if full {
            self.peak
        } else {
            self.baseline
        }
    }
    pub fn bursts(&self) -> bool {
        self.peak > self.baseline
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct DeviceModel {
    pub id: String,
    pub title: String,
    pub kind: DeviceKind,
    pub media: Media,
    pub size_gib: f64,
    pub provisioned_iops: Option<f64>,
    pub provisioned_mib_s: Option<f64>,
    /// The same in decimal MB/s, for devices priced and limited in MB/s.
    pub provisioned_mb_s: Option<f64>,
    /// Whether the vendor states this device's throughput in MB/s (10^6
    /// bytes/s) rather than MiB/s.
    pub throughput_decimal: bool,
    /// File systems: the SSD IOPS included with the storage (the default).
    pub iops_included: Option<f64>,
    /// File systems: the throughput-capacity level chosen.
    pub throughput_capacity_mb_s: Option<f64>,
    /// I/Os up to this size count once; larger count per unit.
    pub unit_bytes: f64,
    pub merge_sequential: bool,
    /// Sequential I/Os smaller than this count one each, unmerged.
    pub merge_min_bytes: f64,
    pub charge_whole_unit: bool,
    /// Counted I/Os per second.
    pub iops: Cap,
    pub bytes_s: Cap,
    pub read_iops: Option<f64>,
    pub write_iops: Option<f64>,
    pub read_bytes_s: Option<f64>,
    pub write_bytes_s: Option<f64>,
    /// File systems: the file server's network throughput.
    pub network_bytes_s: Option<Cap>,
    pub iops_bucket: Option<Bucket>,
    pub bytes_bucket: Option<Bucket>,
    pub network_bucket: Option<Bucket>,
    pub latency: Option<LatencyModel>,
    pub host_cache_max_gib: Option<f64>,
    /// Whether any figure behind this device lacks a vendor source.
    pub unverified: Vec<String>,
}

/// What the user asked for in a pool entry.
#[derive(Debug, Clone, Default)]
pub struct Provisioning {
    pub size_gib: Option<f64>,
    pub iops: Option<f64>,
    pub throughput_mib_s: Option<f64>,
    /// Throughput asked in decimal MB/s (either field; converted to the
    /// device's unit).
    pub throughput_mb_s: Option<f64>,
    pub storage_gib: Option<f64>,
    pub burst: bool,
    pub on_demand: bool,
}

fn fmt_num(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        format!("{v:.3}").trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

struct Ctx<'a> {
    spec: &'a DeviceSpec,
    at: &'a Location,
    unverified: Vec<String>,
}

impl Ctx<'_> {
    fn n(&mut self, what: &str, n: &Num) -> f64 {
        if !n.verified {
            self.unverified.push(format!("{} {what}", self.spec.id));
        }
        n.value
    }
    fn err(&self, field: &str, msg: String) -> ModelError {
        ModelError::invalid(Location::new(&self.at.file, &self.at.entry, field), msg)
    }
}

pub fn provision(spec: &DeviceSpec, p: &Provisioning, at: &Location) -> Result<DeviceModel> {
    let mut c = Ctx { spec, at, unverified: Vec::new() };
    let id = spec.id.as_str();

    let size_gib = size_of(&mut c, p)?;

    if spec.kind == DeviceKind::FileSystem {
        return provision_fs(c, p, size_gib);
    }

    // ---- IOPS
    let iops_rule = spec.iops.as_ref().ok_or_else(|| {
        ModelError::invalid_catalog(Location::new("", id, "iops"), "a volume or local device needs an iops rule")
    })?;
    let (iops_base, prov_iops) = apply_rule(&mut c, "iops", iops_rule, size_gib, p.iops, None, "IOPS")?;
    if p.iops.is_some() && prov_iops.is_none() {
        return Err(c.err("iops", format!("{id} does not take iops: {}", describe_rule(iops_rule, "IOPS"))));
    }

    // ---- throughput (MiB/s, or MB/s where the vendor defines it so)
    // Local devices may publish no throughput figure (instance store): no cap.
    let decimal = spec.throughput_mb_s.is_some();
    let (tp_field, tp_unit, tp_scale) = if decimal { ("throughput_mb_s", "MB/s", MB) } else { ("throughput_mib_s", "MiB/s", MIB) };
    let tp_rule = match (spec.throughput_mib_s.as_ref().or(spec.throughput_mb_s.as_ref()), spec.kind) {
        (Some(r), _) => Some(r),
        (None, DeviceKind::Local) => None,
        (None, _) => {
            return Err(ModelError::invalid_catalog(Location::new("", id, "throughput_mib_s"), "a volume needs a throughput_mib_s rule"))
        }
    };
    // Asked in either unit; converted to the device's.
    let tp_asked = match (p.throughput_mib_s, p.throughput_mb_s) {
        (Some(v), _) => Some(v * MIB / tp_scale),
        (None, Some(v)) => Some(v * MB / tp_scale),
        (None, None) => None,
    };
    let (tp_base, prov_tp) = match tp_rule {
        Some(r) => apply_rule(&mut c, tp_field, r, size_gib, tp_asked, Some(iops_base), tp_unit)?,
        None => (f64::INFINITY, None),
    };
    if tp_asked.is_some() && prov_tp.is_none() {
        let how = tp_rule.map_or("it has no published throughput".to_string(), |r| describe_rule(r, tp_unit));
        return Err(c.err(tp_field, format!("{id} does not take {tp_field}: {how}")));
    }
    let tp_tier_burst = match tp_rule {
        Some(Rule::Tiers { tiers }) => tiers
            .iter()
            .filter(|t| t.min_gib.value <= size_gib)
            .last()
            .and_then(|t| t.burst.as_ref())
            .map(|b| b.value),
        _ => None,
    };

    let unit_bytes = c.n("accounting unit", &spec.accounting.unit_kib) * KIB;
    let merge_min_bytes = spec.accounting.merge_min_kib.as_ref().map_or(0.0, |n| c.n("merge minimum", n) * KIB);
    let mut iops = Cap::flat(iops_base);
    let mut bytes_s = Cap::flat(tp_base * tp_scale);
    let mut iops_bucket = None;
    let mut bytes_bucket = None;

    if p.burst {
        if let Some(rule) = &spec.iops_burst {
            if let Some(b) = burst_bucket(&mut c, rule, size_gib, iops_base, 1.0)? {
                iops = Cap { baseline: iops_base, peak: b.peak_per_s, bucket: Some(BucketRef::Iops) };
                iops_bucket = Some(b);
            }
        }
        if let Some(rule) = &spec.throughput_burst {
            if let Some(b) = burst_bucket(&mut c, rule, size_gib, tp_base * tp_scale, tp_scale)? {
                bytes_s = Cap { baseline: tp_base * tp_scale, peak: b.peak_per_s, bucket: Some(BucketRef::Bytes) };
                bytes_bucket = Some(b);
            }
        }
        // gp2 170–334 GiB: 250 MiB/s "while burst credits last" — the I/O
        // credit bucket governs it.
        if let (Some(tb), Some(_)) = (tp_tier_burst, &iops_bucket) {
            bytes_s = Cap { baseline: tp_base * tp_scale, peak: tb * tp_scale, bucket: Some(BucketRef::Iops) };
        }
    }
    if p.on_demand {
        let od = spec.on_demand_burst.as_ref().ok_or_else(|| {
            c.err("bursting", format!("{id} has no on-demand bursting under the rules applied (Azure offers it on Premium SSD P30 and larger, in every public region from 2021-09-29) — drop bursting = \"on-demand\" or pick a later as_of"))
        })?;
        if let Some(min) = &od.min_size_gib {
            if size_gib < min.value {
                return Err(c.err("bursting", format!("on-demand bursting needs a disk of at least {} GiB", fmt_num(min.value))));
            }
        }
        let (pi, pm) = (c.n("on-demand IOPS", &od.iops), c.n("on-demand MiB/s", &od.mib_s));
        iops = Cap { baseline: iops_base, peak: pi, bucket: Some(BucketRef::Unlimited) };
        bytes_s = Cap { baseline: tp_base * tp_scale, peak: pm * MIB, bucket: Some(BucketRef::Unlimited) };
        iops_bucket = None;
        bytes_bucket = None;
    }

    let dir = spec.directional.clone().unwrap_or_default();
    let read_iops = dir.read_iops.as_ref().map(|n| c.n("read IOPS", n));
    let write_iops = dir.write_iops.as_ref().map(|n| c.n("write IOPS", n));
    let read_bytes_s = dir.read_mib_s.as_ref().map(|n| c.n("read MiB/s", n) * MIB);
    let write_bytes_s = dir.write_mib_s.as_ref().map(|n| c.n("write MiB/s", n) * MIB);
    let latency = spec.latency.as_ref().map(|l| {
        for (what, n) in [("read median", &l.read_median_us), ("read p99", &l.read_p99_us), ("write median", &l.write_median_us), ("write p99", &l.write_p99_us)] {
            c.n(&format!("latency {what}"), n);
        }
        LatencyModel::from_spec(l)
    });
    let host_cache_max_gib = spec.host_cache.as_ref().map(|h| h.max_gib.value);
    let mut unverified = c.unverified;
    unverified.dedup();

    Ok(DeviceModel {
        id: spec.id.clone(),
        title: spec.title.clone(),
        kind: spec.kind,
        media: spec.media,
        size_gib,
        provisioned_iops: prov_iops,
        provisioned_mib_s: prov_tp.map(|v| v * tp_scale / MIB),
        provisioned_mb_s: prov_tp.map(|v| v * tp_scale / MB),
        throughput_decimal: decimal,
        throughput_capacity_mb_s: None,
        iops_included: None,
        unit_bytes,
        merge_sequential: spec.accounting.merge_sequential,
        merge_min_bytes,
        charge_whole_unit: spec.accounting.charge_whole_unit,
        iops,
        bytes_s,
        read_iops,
        write_iops,
        read_bytes_s,
        write_bytes_s,
        network_bytes_s: None,
        iops_bucket,
        bytes_bucket,
        network_bucket: None,
        latency,
        host_cache_max_gib,
        unverified,
    })
}

/// The device's size in GiB: its fixed size, or the one asked (or its
/// default) within its published range; a file system's is its storage,
/// not a size (0).
fn size_of(c: &mut Ctx, p: &Provisioning) -> Result<f64> {
    let (spec, at) = (c.spec, c.at);
    let id = spec.id.as_str();
    if let Some(fixed) = &spec.size_gib.fixed {
        let fixed = c.n("size", fixed);
        if let Some(s) = p.size_gib {
            if (s - fixed).abs() > 1e-9 {
                return Err(c.err(
                    "size_gib",
                    format!("{id} is a fixed size of {} GiB — drop size_gib or set it to {}", fmt_num(fixed), fmt_num(fixed)),
                ));
            }
        }
        Ok(fixed)
    } else if spec.kind == DeviceKind::FileSystem {
        Ok(0.0)
    } else {
        let min = spec.size_gib.min.as_ref().map(|n| c.n("size min", n));
        let max = spec.size_gib.max.as_ref().map(|n| c.n("size max", n));
        let s = match (p.size_gib, &spec.size_gib.default) {
            (Some(s), _) => s,
            (None, Some(d)) => c.n("default size", d),
            (None, None) => {
                return Err(ModelError::Missing {
                    at: Location::new(&at.file, &at.entry, "size_gib"),
                    hint: format!(
                        "{id} needs size_gib (between {} and {} GiB)",
                        fmt_num(min.unwrap_or(1.0)),
                        fmt_num(max.unwrap_or(f64::INFINITY))
                    ),
                    catalog: false,
                })
            }
        };
        if !(s > 0.0) || s.fract() != 0.0 {
            return Err(c.err("size_gib", format!("size_gib must be a whole number of GiB, got {s}")));
        }
        if let Some(min) = min {
            if s < min {
                return Err(c.err("size_gib", format!("{id} is at least {} GiB, got {} — nearest valid value {}", fmt_num(min), fmt_num(s), fmt_num(min))));
            }
        }
        if let Some(max) = max {
            if s > max {
                return Err(c.err("size_gib", format!("{id} is at most {} GiB, got {} — nearest valid value {}", fmt_num(max), fmt_num(s), fmt_num(max))));
            }
        }
        Ok(s)
    }
}

/// A quantity's baseline under `rule`, and the provisioned figure when the
/// rule is `provisioned`. `iops` is the provisioned IOPS, for throughput
/// rules that follow it.
fn apply_rule(
    c: &mut Ctx,
    field: &str,
    rule: &Rule,
    size_gib: f64,
    asked: Option<f64>,
    iops: Option<f64>,
    unit: &str,
) -> Result<(f64, Option<f64>)> {
    let id = c.spec.id.clone();
    Ok(match rule {
        Rule::Fixed { value } => (c.n(field, value), None),
        Rule::PerGib { per_gib, min, max } => {
            let mut v = c.n(field, per_gib) * size_gib;
            if let Some(min) = min {
                v = v.max(c.n(field, min));
            }
            if let Some(max) = max {
                v = v.min(c.n(field, max));
            }
            (v, None)
        }
        Rule::PerIops { per_iops, min, max } => {
            let i = iops.unwrap_or(0.0);
            let mut v = c.n(field, per_iops) * i;
            if let Some(min) = min {
                v = v.max(c.n(field, min));
            }
            (v.min(c.n(field, max)), None)
        }
        Rule::Tiers { tiers } => {
            let t = tiers.iter().filter(|t| t.min_gib.value <= size_gib).last().ok_or_else(|| {
                c.err(field, format!("{id}: no {field} tier covers {} GiB", fmt_num(size_gib)))
            })?;
            (c.n(field, &t.value), None)
        }
        Rule::Provisioned { min, max, default, max_per_gib, max_per_gib_after_gib, max_base, max_per_iops, .. } => {
            let lo = c.n(field, min);
            let hi = c.n(field, max);
            let v = match (asked, default) {
                (Some(v), _) => v,
                (None, Some(d)) => c.n(field, d),
                (None, None) => {
                    return Err(ModelError::Missing {
                        at: Location::new(&c.at.file, &c.at.entry, field),
                        hint: format!("{id} needs {field} (between {} and {} {unit})", fmt_num(lo), fmt_num(hi)),
                        catalog: false,
                    })
                }
            };
            // The ratio caps: to size, and to provisioned IOPS.
            let mut allowed = hi;
            let mut why = format!("at most {} {unit}", fmt_num(hi));
            if let Some(r) = max_per_gib {
                let r = c.n(field, r);
                let after = max_per_gib_after_gib.as_ref().map_or(0.0, |n| n.value);
                let base = max_base.as_ref().map_or(0.0, |n| n.value);
                let ratio_cap = (base + r * (size_gib - after).max(0.0)).max(lo);
                if ratio_cap < allowed {
                    allowed = ratio_cap;
                    why = if base > 0.0 {
                        format!("at {} GiB at most {} {unit} ({} + {} per GiB above {} GiB)", fmt_num(size_gib), fmt_num(ratio_cap), fmt_num(base), fmt_num(r), fmt_num(after))
                    } else {
                        format!("at {} GiB at most {} {unit} ({} {unit} per GiB)", fmt_num(size_gib), fmt_num(ratio_cap), fmt_num(r))
                    };
                }
            }
            if let (Some(r), Some(i)) = (max_per_iops, iops) {
                let r = c.n(field, r);
                let ratio_cap = (r * i).max(lo);
                if ratio_cap < allowed {
                    allowed = ratio_cap;
                    why = format!("with {} IOPS at most {} {unit} ({} {unit} per IOPS)", fmt_num(i), fmt_num(ratio_cap), fmt_num(r));
                }
            }
            if v < lo {
                return Err(c.err(field, format!("{id} takes at least {} {unit}, got {} — nearest valid value {}", fmt_num(lo), fmt_num(v), fmt_num(lo))));
            }
            if v > allowed + 1e-9 {
                return Err(c.err(field, format!("{id} allows {why}, got {} — nearest valid value {}", fmt_num(v), fmt_num(allowed.floor()))));
            }
            (v, Some(v))
        }
    })
}

fn describe_rule(rule: &Rule, unit: &str) -> String {
    match rule {
        Rule::Fixed { value } => format!("it is fixed at {} {unit}", fmt_num(value.value)),
        Rule::PerGib { per_gib, .. } => format!("it follows from size ({} {unit} per GiB)", fmt_num(per_gib.value)),
        Rule::PerIops { .. } => "it follows from provisioned IOPS".into(),
        Rule::Tiers { .. } => "it follows from size".into(),
        Rule::Provisioned { .. } => "it is provisioned".into(),
    }
}

/// A device bucket from its catalog rule; `None` when it cannot raise the
/// rate (baseline at or above the peak, or size beyond `max_size_gib`).
/// `scale` converts catalog units (MiB) to the bucket's (bytes).
fn burst_bucket(c: &mut Ctx, rule: &BurstRule, size_gib: f64, baseline: f64, scale: f64) -> Result<Option<Bucket>> {
    if let Some(max) = &rule.max_size_gib {
        if size_gib > max.value {
            return Ok(None);
        }
    }
    let peak = match (&rule.peak, &rule.peak_per_gib) {
        (Some(p), _) => c.n("burst peak", p) * scale,
        (None, Some(per)) => {
            let mut v = c.n("burst peak", per) * size_gib;
            if let Some(m) = &rule.peak_max {
                v = v.min(c.n("burst peak max", m));
            }
            v * scale
        }
        (None, None) => {
            return Err(ModelError::invalid_catalog(Location::new("", &c.spec.id, "burst"), "a burst rule needs peak or peak_per_gib"))
        }
    };
    if peak <= baseline {
        return Ok(None);
    }
    let capacity = if let Some(cap) = &rule.capacity {
        c.n("burst capacity", cap) * scale
    } else if let Some(per) = &rule.capacity_per_gib {
        c.n("burst capacity", per) * size_gib * scale
    } else if let Some(d) = &rule.duration_s {
        // "A full bucket sustains the peak for duration_s" (Azure: 30 min).
        (peak - baseline) * c.n("burst duration", d)
    } else {
        return Err(ModelError::invalid_catalog(
            Location::new("", &c.spec.id, "burst"),
            "a burst rule needs capacity, capacity_per_gib or duration_s",
        ));
    };
    Ok(Some(Bucket::full(capacity, baseline, peak)))
}

fn provision_fs(mut c: Ctx, p: &Provisioning, _size: f64) -> Result<DeviceModel> {
    let spec = c.spec;
    let id = spec.id.as_str();
    let storage = spec.storage.as_ref().ok_or_else(|| {
        ModelError::invalid_catalog(Location::new("", id, "storage"), "a file system needs a [device.storage] table")
    })?;
    if spec.levels.is_empty() {
        return Err(ModelError::invalid_catalog(Location::new("", id, "levels"), "a file system needs levels"));
    }
    let levels: Vec<f64> = spec.levels.iter().map(|l| l.throughput_mb_s.value).collect();
    let list = levels.iter().map(|v| fmt_num(*v)).collect::<Vec<_>>().join(", ");
    let asked = p.throughput_mib_s.or(p.throughput_mb_s).ok_or_else(|| ModelError::Missing {
        at: Location::new(&c.at.file, &c.at.entry, "throughput_mib_s"),
        hint: format!("{id} needs throughput_mib_s, its throughput capacity: one of {list}"),
        catalog: false,
    })?;
    let level: &FsLevel = spec.levels.iter().find(|l| (l.throughput_mb_s.value - asked).abs() < 1e-9).ok_or_else(|| {
        let nearest = levels.iter().copied().min_by(|a, b| (a - asked).abs().total_cmp(&(b - asked).abs())).unwrap_or(0.0);
        c.err("throughput_mib_s", format!("{id} has no throughput capacity {} — valid: {list}; nearest {}", fmt_num(asked), fmt_num(nearest)))
    })?;
    let (smin, smax) = (c.n("storage min", &storage.min_gib), c.n("storage max", &storage.max_gib));
    let storage_gib = p.storage_gib.or(p.size_gib).ok_or_else(|| ModelError::Missing {
        at: Location::new(&c.at.file, &c.at.entry, "storage_gib"),
        hint: format!("{id} needs storage_gib (SSD storage, {} to {} GiB)", fmt_num(smin), fmt_num(smax)),
        catalog: false,
    })?;
    if storage_gib < smin || storage_gib > smax {
        let near = storage_gib.clamp(smin, smax);
        return Err(c.err("storage_gib", format!("{id} takes {} to {} GiB of storage, got {} — nearest valid value {}", fmt_num(smin), fmt_num(smax), fmt_num(storage_gib), fmt_num(near))));
    }
    // "Disk limits = min(limits set by the file server, limits set by the
    // SSD storage)" (FSx performance pages).
    let default_iops = c.n("SSD IOPS per GiB", &storage.iops_per_gib) * storage_gib;
    // Provisioned SSD IOPS: at least the default (3 IOPS per GiB), at most
    // the per-GiB ratio and the file system's maximum.
    let ssd_iops = match p.iops {
        None => default_iops,
        Some(v) => {
            let mut hi = f64::INFINITY;
            let mut why = String::new();
            if let Some(r) = &storage.max_iops_per_gib {
                let r = c.n("SSD IOPS per GiB maximum", r);
                hi = r * storage_gib;
                why = format!("{} IOPS per GiB of storage, {} at {} GiB", fmt_num(r), fmt_num(hi), fmt_num(storage_gib));
            }
            if let Some(m) = &storage.max_iops {
                let m = c.n("SSD IOPS maximum", m);
                if m < hi {
                    hi = m;
                    why = format!("{} SSD IOPS per file system", fmt_num(m));
                }
            }
            if v < default_iops.floor() {
                return Err(c.err("iops", format!("{id} includes {} SSD IOPS at {} GiB (the default); provision that or more, got {} — nearest valid value {}", fmt_num(default_iops.floor()), fmt_num(storage_gib), fmt_num(v), fmt_num(default_iops.floor()))));
            }
            if v > hi {
                return Err(c.err("iops", format!("{id} allows at most {why}, got {} — nearest valid value {}", fmt_num(v), fmt_num(hi.floor()))));
            }
            v
        }
    };
    let ssd_bytes = c.n("SSD MB/s per GiB", &storage.mb_s_per_gib) * storage_gib * MB;
    let disk_iops = c.n("disk IOPS", &level.disk_iops);
    let disk_bytes = c.n("disk MB/s", &level.disk_mb_s) * MB;
    let burst_iops = level.disk_burst_iops.as_ref().map(|n| c.n("disk burst IOPS", n));
    let burst_bytes = level.disk_burst_mb_s.as_ref().map(|n| c.n("disk burst MB/s", n) * MB);
    let disk_burst_s = storage.disk_burst_s.as_ref().map(|n| c.n("disk burst duration", n));
    let net = c.n("network MB/s", &level.network_mb_s) * MB;
    let net_burst = level.network_burst_mb_s.as_ref().map(|n| c.n("network burst MB/s", n) * MB);
    let net_burst_s = storage.network_burst_s.as_ref().map(|n| c.n("network burst duration", n));

    let mk = |base: f64, peak: Option<f64>, dur: Option<f64>, r: BucketRef| -> (Cap, Option<Bucket>) {
        match (peak, dur) {
            (Some(pk), Some(d)) if p.burst && pk > base => {
                (Cap { baseline: base, peak: pk, bucket: Some(r) }, Some(Bucket::full((pk - base) * d, base, pk)))
            }
            _ => (Cap::flat(base), None),
        }
    };
    let (iops, iops_bucket) = mk(disk_iops.min(ssd_iops), burst_iops.map(|b| b.min(ssd_iops)), disk_burst_s, BucketRef::Iops);
    let (bytes_s, bytes_bucket) = mk(disk_bytes.min(ssd_bytes), burst_bytes.map(|b| b.min(ssd_bytes)), disk_burst_s, BucketRef::Bytes);
    let (network, network_bucket) = mk(net, net_burst, net_burst_s, BucketRef::Network);
    let unit_bytes = c.n("accounting unit", &spec.accounting.unit_kib) * KIB;
    let latency = spec.latency.as_ref().map(LatencyModel::from_spec);
    let mut unverified = c.unverified;
    unverified.dedup();
    Ok(DeviceModel {
        id: spec.id.clone(),
        title: spec.title.clone(),
        kind: spec.kind,
        media: spec.media,
        size_gib: storage_gib,
        provisioned_iops: p.iops,
        provisioned_mib_s: None,
        provisioned_mb_s: None,
        throughput_decimal: true,
        throughput_capacity_mb_s: Some(asked),
        iops_included: Some(default_iops),
        unit_bytes,
        merge_sequential: spec.accounting.merge_sequential,
        merge_min_bytes: spec.accounting.merge_min_kib.as_ref().map_or(0.0, |n| n.value * KIB),
        charge_whole_unit: spec.accounting.charge_whole_unit,
        iops,
        bytes_s,
        read_iops: None,
        write_iops: None,
        read_bytes_s: None,
        write_bytes_s: None,
        network_bytes_s: Some(network),
        iops_bucket,
        bytes_bucket,
        network_bucket,
        latency,
        host_cache_max_gib: None,
        unverified,
    })
}
