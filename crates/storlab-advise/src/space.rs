//! The candidates: every deployment of the space that the vendors allow,
//! in the vendors' steps. A combination the model refuses (attachment
//! limits, size rules, a device a host cannot attach) is never kept: each
//! generated config goes through the same `resolve` as a scenario's, and
//! what it refused is counted by reason.

use crate::question::{AdviseFile, LogPlacement, Space};
use indexmap::IndexMap;
use storlab_model::catalog::{DeviceKind, DeviceSpec, HostKind, HostSpec, PriceUnit, Rule};
use storlab_model::scenario::{ConfigSpec, HostCacheMode, Layout, PoolSpec, Role};
use storlab_model::Catalog;

/// Devices per pool tried: 1, 2, 4, 8, … up to `max_count`, and
/// `max_count` itself.
pub fn counts(max_count: u32) -> Vec<u32> {
    let mut v: Vec<u32> = std::iter::successors(Some(1u32), |c| c.checked_mul(2))
        .take_while(|c| *c <= max_count)
        .collect();
    if v.last() != Some(&max_count) {
        v.push(max_count);
    }
    v
}

/// `*` matches any run of characters; the rest matches itself.
pub fn glob(pattern: &str, id: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == id;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !id.starts_with(first) || id.len() < first.len() + last.len() || !id.ends_with(last) {
        return false;
    }
    let mut rest = &id[first.len()..id.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

/// What the demand asks of a pool, to size the candidates: capacity,
/// IOPS and MB/s (10^6 bytes/s) over the whole pool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Demand {
    pub gib: f64,
    pub iops: f64,
    pub mb_s: f64,
}

/// One candidate: a config the model accepts.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Candidate {
    pub name: String,
    pub config: ConfigSpec,
}

/// The candidates, and what was left out and why (reason → count).
pub struct Generated {
    pub candidates: Vec<Candidate>,
    pub refused: IndexMap<String, u64>,
    pub hosts: Vec<String>,
    pub devices: Vec<String>,
}

fn cloud_of(region: &str) -> &str {
    region.split('/').next().unwrap_or("")
}

/// The hosts of the space: its patterns, else every EC2 instance or Azure
/// VM of the region's cloud (RDS classes only when a pattern names them).
pub fn hosts<'a>(cat: &'a Catalog, space: &Space, region: &str) -> Vec<&'a HostSpec> {
    let cloud = cloud_of(region);
    cat.hosts
        .values()
        .filter(|h| h.id.starts_with(&format!("{cloud}/")))
        .filter(|h| {
            if space.hosts.is_empty() {
                matches!(h.kind, HostKind::Ec2 | HostKind::AzureVm)
            } else {
                space.hosts.iter().any(|p| glob(p, &h.id))
            }
        })
        .collect()
}

/// The devices of the space: its patterns, else every volume and file
/// system of the region's cloud (instance store comes with its host).
pub fn devices<'a>(cat: &'a Catalog, space: &Space, region: &str) -> Vec<&'a DeviceSpec> {
    let cloud = cloud_of(region);
    cat.devices
        .values()
        .filter(|d| d.id.starts_with(&format!("{cloud}/")))
        .filter(|d| {
            if space.devices.is_empty() {
                d.kind != DeviceKind::Local
            } else {
                space.devices.iter().any(|p| glob(p, &d.id))
            }
        })
        .collect()
}

/// Patterns of the space that match nothing, with the nearest ids.
pub fn unmatched(cat: &Catalog, space: &Space) -> Vec<(String, String, Option<String>)> {
    let mut out = Vec::new();
    for (what, pats, ids) in [
        (
            "space.hosts",
            &space.hosts,
            cat.hosts.keys().map(String::as_str).collect::<Vec<_>>(),
        ),
        (
            "space.devices",
            &space.devices,
            cat.devices.keys().map(String::as_str).collect::<Vec<_>>(),
        ),
    ] {
        for p in pats.iter() {
            if !ids.iter().any(|id| glob(p, id)) {
                let near = storlab_model::error::nearest(&p.replace('*', ""), ids.iter().copied());
                out.push((what.to_string(), p.clone(), near));
            }
        }
    }
    out
}

fn has_host_price(
    cat: &Catalog,
    host: &HostSpec,
    region: &str,
    license: &str,
    engine: Option<&str>,
) -> bool {
    cat.prices.iter().any(|p| {
        p.region == region
            && p.item == host.id
            && p.unit == PriceUnit::Hour
            && if host.kind == HostKind::Rds {
                engine.is_some_and(|e| p.engine.as_deref() == Some(e))
            } else {
                p.license.as_deref().unwrap_or("linux") == license
            }
    })
}

fn round_up(x: f64, step: f64) -> f64 {
    (x / step).ceil() * step
}

/// The sizes tried for `count` devices holding `need_gib` between them:
/// the least that holds it, then twice, four and eight times that (a
/// larger gp2 or Premium SSD is also a faster one), within the device's
/// rules. A fixed-size device (an Azure Premium SSD tier) has its one size.
fn sizes(d: &DeviceSpec, count: u32, need_gib: f64) -> Vec<f64> {
    if let Some(f) = &d.size_gib.fixed {
        return if f.value * f64::from(count) >= need_gib {
            vec![f.value]
        } else {
            Vec::new()
        };
    }
    let min = d.size_gib.min.as_ref().map_or(1.0, |n| n.value);
    let max = d.size_gib.max.as_ref().map_or(f64::INFINITY, |n| n.value);
    let base = round_up((need_gib / f64::from(count)).max(min), 1.0);
    if base > max {
        return Vec::new();
    }
    let mut v: Vec<f64> = [1.0, 2.0, 4.0, 8.0]
        .iter()
        .map(|m| (base * m).min(max))
        .collect();
    v.dedup();
    v
}

/// Provisioned IOPS tried per device: the device's included or least
/// figure, and what the demand asks of one device ×1, ×1.5 and ×2, in
/// steps of 100, within the rule's bounds.
fn provisioned(rule: Option<&Rule>, per_device_demand: f64, step: f64) -> Vec<Option<f64>> {
    let Some(Rule::Provisioned {
        min,
        max,
        default,
        included,
        ..
    }) = rule
    else {
        return vec![None];
    };
    let base = included
        .as_ref()
        .or(default.as_ref())
        .map_or(min.value, |n| n.value)
        .max(min.value);
    let mut v = vec![base];
    for f in [1.0, 1.5, 2.0] {
        let x = round_up(per_device_demand * f, step).clamp(min.value, max.value);
        if x > base {
            v.push(x);
        }
    }
    v.sort_by(f64::total_cmp);
    v.dedup();
    v.into_iter().map(Some).collect()
}

/// The smallest size that allows `iops` under a per-GiB ratio rule (io1:
/// 50 IOPS a GiB), or `size` if it already does.
fn size_for_iops(rule: Option<&Rule>, iops: f64, size: f64, max_size: f64) -> f64 {
    match rule {
        Some(Rule::Provisioned {
            max_per_gib: Some(r),
            max_per_gib_after_gib: None,
            max_base: None,
            ..
        }) if r.value > 0.0 => size.max(round_up(iops / r.value, 1.0)).min(max_size),
        _ => size,
    }
}

fn short(id: &str) -> &str {
    id.rsplit('/').next().unwrap_or(id)
}

fn fmt(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// The pools tried for one device on one host for the demand: counts ×
/// sizes × provisioned IOPS and throughput × layouts × host cache.
fn pools_for(
    d: &DeviceSpec,
    space: &Space,
    demand: Demand,
    role: Role,
    cached_ok: bool,
) -> Vec<(String, PoolSpec)> {
    let mut out = Vec::new();
    let max_count = space.max_count.unwrap_or(8);
    let share = d.kind == DeviceKind::FileSystem;
    let layouts: Vec<Layout> = if space.layouts.is_empty() {
        vec![if share {
            Layout::Spread
        } else {
            Layout::Stripe
        }]
    } else {
        space
            .layouts
            .iter()
            .copied()
            .filter(|l| *l != Layout::Single)
            .collect()
    };
    let caches: Vec<HostCacheMode> = if d.host_cache.is_none() || !cached_ok {
        vec![HostCacheMode::None]
    } else if space.host_cache.is_empty() {
        vec![HostCacheMode::None, HostCacheMode::Readonly]
    } else {
        space.host_cache.clone()
    };
    let max_size = d.size_gib.max.as_ref().map_or(f64::INFINITY, |n| n.value);
    for count in counts(max_count) {
        let lays: Vec<Option<Layout>> = if count == 1 {
            vec![None]
        } else {
            layouts.iter().map(|l| Some(*l)).collect()
        };
        let per_iops = demand.iops / f64::from(count);
        let per_mb_s = demand.mb_s / f64::from(count);
        if share {
            // A file system: its throughput-capacity levels from the least
            // that carries the demand, and storage for the data.
            let storage_min = d.storage.as_ref().map_or(32.0, |s| s.min_gib.value);
            let storage = round_up((demand.gib / f64::from(count)).max(storage_min), 1.0);
            let mut levels: Vec<f64> = d.levels.iter().map(|l| l.throughput_mb_s.value).collect();
            levels.sort_by(f64::total_cmp);
            let first = levels
                .iter()
                .position(|l| *l >= per_mb_s)
                .unwrap_or(levels.len().saturating_sub(1));
            for level in levels.iter().skip(first).take(3) {
                for lay in &lays {
                    let name = format!(
                        "{}x{count}-{}g-{}mbs",
                        short(&d.id),
                        fmt(storage),
                        fmt(*level)
                    );
                    out.push((
                        name,
                        PoolSpec {
                            count,
                            layout: *lay,
                            throughput_mb_s: Some(*level),
                            storage_gib: Some(storage),
                            path: d.paths.first().copied(),
                            ..PoolSpec::new(role, &d.id)
                        },
                    ));
                }
            }
            continue;
        }
        for size in sizes(d, count, demand.gib) {
            for iops in provisioned(d.iops.as_ref(), per_iops, 100.0) {
                let size = iops.map_or(size, |i| size_for_iops(d.iops.as_ref(), i, size, max_size));
                let tput_rule = d.throughput_mib_s.as_ref().or(d.throughput_mb_s.as_ref());
                let decimal = d.throughput_mb_s.is_some();
                let per_tput = if decimal {
                    per_mb_s
                } else {
                    per_mb_s * 1e6 / 1_048_576.0
                };
                for tput in provisioned(tput_rule, per_tput, 25.0) {
                    for lay in &lays {
                        for cache in &caches {
                            if *cache != HostCacheMode::None
                                && d.host_cache
                                    .as_ref()
                                    .is_some_and(|h| size > h.max_gib.value)
                            {
                                continue;
                            }
                            let mut name = format!("{}x{count}-{}g", short(&d.id), fmt(size));
                            if let Some(i) = iops {
                                name.push_str(&format!("-{}iops", fmt(i)));
                            }
                            if let Some(t) = tput {
                                name.push_str(&format!(
                                    "-{}{}",
                                    fmt(t),
                                    if decimal { "mbs" } else { "mibs" }
                                ));
                            }
                            if *cache != HostCacheMode::None {
                                name.push_str(&format!("-{}", cache.name()));
                            }
                            out.push((
                                name,
                                volume(d, role, count, (*lay, *cache), (size, iops, tput)),
                            ));
                        }
                    }
                }
            }
        }
    }
    out
}

/// A pool of block volumes: striped 64 KiB when more than one, the host
/// cache where the device has one, the size unless the tier fixes it,
/// provisioned throughput in the unit the device's rule uses. Its shape is
/// (layout, host cache); its provisioning (GiB, IOPS, throughput).
fn volume(d: &DeviceSpec, role: Role, count: u32, (layout, cache): (Option<Layout>, HostCacheMode), (size, iops, tput): (f64, Option<f64>, Option<f64>)) -> PoolSpec {
    let decimal = d.throughput_mb_s.is_some();
    PoolSpec {
        count,
        layout,
        stripe_kib: layout.map(|_| 64),
        host_cache: d.host_cache.is_some().then_some(cache),
        size_gib: d.size_gib.fixed.is_none().then_some(size),
        iops,
        throughput_mib_s: if decimal { None } else { tput },
        throughput_mb_s: if decimal { tput } else { None },
        ..PoolSpec::new(role, &d.id)
    }
}

/// The least pool that holds a database's log: one device of the data
/// pool's kind at its least size and included figures (the log is small
/// and written in sequence).
fn log_pool(d: &DeviceSpec) -> Option<(String, PoolSpec)> {
    if d.kind != DeviceKind::Volume {
        return None;
    }
    let size = d
        .size_gib
        .fixed
        .as_ref()
        .map(|f| f.value)
        .unwrap_or_else(|| d.size_gib.min.as_ref().map_or(32.0, |n| n.value).max(32.0));
    let iops = provisioned(d.iops.as_ref(), 0.0, 100.0)[0];
    let size = iops.map_or(size, |i| {
        size_for_iops(d.iops.as_ref(), i, size, f64::INFINITY)
    });
    let tput_rule = d.throughput_mib_s.as_ref().or(d.throughput_mb_s.as_ref());
    let tput = provisioned(tput_rule, 0.0, 25.0)[0];
    Some((
        format!("log-{}-{}g", short(&d.id), fmt(size)),
        volume(d, Role::Log, 1, (None, HostCacheMode::None), (size, iops, tput)),
    ))
}

/// Every candidate of the space for the demand (`demand_for(host)`: a
/// database's reads depend on the host's memory). `file` names the
/// question in the model's messages.
pub fn generate(
    cat: &Catalog,
    file: &str,
    q: &AdviseFile,
    region: &str,
    database: bool,
    demand_for: &dyn Fn(&HostSpec) -> Demand,
) -> Generated {
    let space = &q.space;
    let license = space.license.clone().unwrap_or_else(|| "linux".into());
    let hs = hosts(cat, space, region);
    let ds = devices(cat, space, region);
    let mut refused: IndexMap<String, u64> = IndexMap::new();
    let mut candidates = Vec::new();
    let placements: Vec<LogPlacement> = if !database {
        vec![LogPlacement::Shared]
    } else if space.log.is_empty() {
        vec![LogPlacement::Shared, LogPlacement::Separate]
    } else {
        space.log.clone()
    };
    for h in &hs {
        if !has_host_price(cat, h, region, &license, space.engine.as_deref()) {
            *refused
                .entry(format!("no price in {region} for the host ({license})"))
                .or_default() += 1;
            continue;
        }
        let mut demand = demand_for(h);
        demand.gib /= 1.0 - space.free_space.unwrap_or(crate::question::FREE_SPACE);
        for d in &ds {
            for placement in &placements {
                let (role, log) = match placement {
                    LogPlacement::Shared => (Role::All, None),
                    LogPlacement::Separate => match log_pool(d) {
                        Some(l) => (Role::Data, Some(l)),
                        None => continue,
                    },
                };
                let cached_ok = true;
                for (pname, pool) in pools_for(d, space, demand, role, cached_ok) {
                    let mut pools = vec![pool];
                    let mut name = format!("{}-{pname}", short(&h.id));
                    if let Some((lname, lp)) = &log {
                        pools.push(lp.clone());
                        name.push_str(&format!("+{lname}"));
                    }
                    let config = ConfigSpec {
                        host: h.id.clone(),
                        title: None,
                        license: space.license.clone(),
                        engine: space.engine.clone(),
                        region: None,
                        settings: Default::default(),
                        cpu_credits: None,
                        pools,
                    };
                    match storlab_model::deployment::resolve(
                        cat,
                        file,
                        &name,
                        &config,
                        Some(region),
                    ) {
                        Ok(_) => candidates.push(Candidate { name, config }),
                        Err(e) => *refused.entry(reason(&e.to_string())).or_default() += 1,
                    }
                }
            }
        }
    }
    Generated {
        candidates,
        refused,
        hosts: hs.iter().map(|h| h.id.clone()).collect(),
        devices: ds.iter().map(|d| d.id.clone()).collect(),
    }
}

/// A refusal's reason without the candidate's own name and figures, so
/// that like refusals count together.
fn reason(message: &str) -> String {
    let m = message.split_once(": ").map_or(message, |(_, r)| r);
    let m = m.split_once(" — ").map_or(m, |(a, _)| a);
    let m = m.split_once(": ").map_or(m, |(a, b)| if a.starts_with("configs.") { b } else { m });
    // Figures (a number standing on its own) become N; ids keep theirs, and
    // dates (YYYY-MM-DD: the day a rule or a device begins) stay whole.
    let is_date = |t: &str| {
        let b = t.as_bytes();
        b.len() >= 10 && b[4] == b'-' && b[7] == b'-' && [0, 1, 2, 3, 5, 6, 8, 9].iter().all(|&i| b[i].is_ascii_digit())
    };
    let mut out = String::with_capacity(m.len());
    let mut prev = ' ';
    let mut chars = m.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c.is_ascii_digit() && is_date(&m[i..]) && !prev.is_ascii_alphanumeric() {
            out.push_str(&m[i..i + 10]);
            for _ in 0..9 {
                chars.next();
            }
            prev = '0';
            continue;
        }
        if c.is_ascii_digit() && !(prev.is_ascii_alphanumeric() || prev == '/' || prev == '.' || prev == '-' || prev == '_') {
            while chars.peek().is_some_and(|(_, d)| d.is_ascii_digit() || *d == ',' || *d == '.') {
                chars.next();
            }
            out.push('N');
            prev = 'N';
            continue;
        }
        out.push(c);
        prev = c;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_as_shells_do() {
        assert!(glob("aws/ec2/r5*", "aws/ec2/r5.large"));
        assert!(glob("aws/ec2/r5*", "aws/ec2/r5b.24xlarge"));
        assert!(!glob("aws/ec2/r5*", "aws/ec2/m5.xlarge"));
        assert!(glob("*xlarge", "aws/ec2/m5.xlarge"));
        assert!(glob("aws/*/gp*", "aws/ebs/gp3"));
        assert!(!glob("aws/ebs/gp3", "aws/ebs/gp3x"));
        assert!(glob("aws/ebs/gp3", "aws/ebs/gp3"));
    }

    #[test]
    fn counts_double_up_to_the_most() {
        assert_eq!(counts(8), vec![1, 2, 4, 8]);
        assert_eq!(counts(5), vec![1, 2, 4, 5]);
        assert_eq!(counts(1), vec![1]);
    }

    #[test]
    fn provisioned_steps_start_at_what_is_included() {
        // gp3: 3,000 IOPS included, 16,000 at most; a demand of 4,040 per
        // device gives 4,100 (×1, in 100s), 6,100 (×1.5: 6,060 up to the
        // next 100) and 8,100 (×2: 8,080).
        let rule = Rule::Provisioned {
            min: 3000.0.into(),
            max: 16000.0.into(),
            default: Some(3000.0.into()),
            included: Some(3000.0.into()),
            max_per_gib: Some(500.0.into()),
            max_per_gib_after_gib: None,
            max_base: None,
            max_per_iops: None,
        };
        assert_eq!(
            provisioned(Some(&rule), 4040.0, 100.0),
            vec![Some(3000.0), Some(4100.0), Some(6100.0), Some(8100.0)]
        );
        // A demand under what is included adds nothing; above the most, the most.
        assert_eq!(provisioned(Some(&rule), 1000.0, 100.0), vec![Some(3000.0)]);
        assert_eq!(
            provisioned(Some(&rule), 20000.0, 100.0),
            vec![Some(3000.0), Some(16000.0)]
        );
        assert_eq!(provisioned(None, 5000.0, 100.0), vec![None]);
        // io1's 50 IOPS a GiB: 6,100 IOPS need 122 GiB.
        let io1 = Rule::Provisioned {
            min: 100.0.into(),
            max: 64000.0.into(),
            default: None,
            included: None,
            max_per_gib: Some(50.0.into()),
            max_per_gib_after_gib: None,
            max_base: None,
            max_per_iops: None,
        };
        assert_eq!(size_for_iops(Some(&io1), 6100.0, 100.0, 16384.0), 122.0);
        assert_eq!(size_for_iops(Some(&io1), 6100.0, 500.0, 16384.0), 500.0);
    }

    #[test]
    fn refusals_keep_their_ids_and_lose_their_figures() {
        assert_eq!(
            reason("q.toml: configs.a: aws/ebs/io1 attached to aws/ec2/m4.2xlarge (not built on Nitro) may be provisioned with at most 32,000 IOPS, got 40000"),
            "aws/ebs/io1 attached to aws/ec2/m4.2xlarge (not built on Nitro) may be provisioned with at most N IOPS, got N"
        );
    }

    // A date says when a rule or a device begins: it is kept whole (it read
    // "from N-12-01").
    #[test]
    fn refusals_keep_their_dates() {
        assert_eq!(
            reason("q.toml: configs.a: the catalog knows device aws/ebs/gp3 from 2020-12-01, not on 2018-06-01 (as_of) — pick gp2"),
            "the catalog knows device aws/ebs/gp3 from 2020-12-01, not on 2018-06-01 (as_of)"
        );
    }

    #[test]
    fn like_refusals_count_together() {
        assert_eq!(
            reason("q.toml: configs.a-x: device aws/ebs/io2-block-express needs a Block Express host — pick r5b"),
            reason("q.toml: configs.b-y: device aws/ebs/io2-block-express needs a Block Express host — pick r5b")
        );
    }
}
