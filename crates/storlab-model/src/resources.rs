//! A pool's limits as resources, and what each I/O costs them.
//!
//! Every limit in the model — a device's IOPS and throughput, a file
//! server's network, a host's EBS, cached and uncached limits, a path's
//! flows — is a `Resource`: a cap (baseline, and peak while a bucket holds
//! credits) in some unit. A `CostTable` says what one I/O of a pattern costs
//! each resource, under the vendor's accounting, for every position
//! ("phase") the I/O can take in the pool's layout and for each I/O class
//! (read served by the host cache, read from the disks, write).
//!
//! `limits` averages these costs to get ceilings analytically; the simulator
//! spends them I/O by I/O against the same caps and buckets. One model.

use crate::bucket::Bucket;
use crate::catalog::{DeviceKind, PathKind};
use crate::deployment::{Deployment, Pool};
use crate::device::{BucketRef, Cap, DeviceModel, MB, MIB};
use crate::scenario::{HostCacheMode, Layout};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Unit {
    Iops,
    MibS,
    MbS,
    Gbps,
    /// Network connections, each held to a single-flow limit.
    Flows,
}

/// Whose limit a resource is: one member device of a pool, the host (shared
/// by every pool), or the path a pool is reached by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Scope {
    /// `index`: the pool's position in the deployment; `member`: the device's
    /// position in the pool.
    Pool { index: u32, member: u32 },
    Host,
    Path { pool: u32 },
}

/// What a resource limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[non_exhaustive]
pub enum Kind {
    /// A device's IOPS and throughput, with their buckets.
    Iops,
    Bytes,
    /// A device's separate read and write limits.
    ReadIops,
    WriteIops,
    ReadBytes,
    WriteBytes,
    /// A file server's network (per member) or the host's network bandwidth.
    Network,
    /// The host's EBS limits (EC2 dedicated EBS bandwidth, instance burst).
    EbsIops,
    EbsBytes,
    /// Azure VM limits: uncached (disk traffic) and cached (host cache).
    UncachedIops,
    UncachedBytes,
    CachedIops,
    CachedBytes,
    /// The single-flow limit of a network path.
    Flows,
}

/// A resource's identity: the same limit has the same id in every plan of
/// the deployment, whatever the I/O size. Engines key their state by it;
/// labels are for people.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct ResourceId {
    pub scope: Scope,
    pub kind: Kind,
}

impl ResourceId {
    /// The pool this resource belongs to; `None` for the host's.
    pub fn pool(&self) -> Option<u32> {
        match self.scope {
            Scope::Pool { index, .. } => Some(index),
            Scope::Path { pool } => Some(pool),
            Scope::Host => None,
        }
    }

    /// The same resource, placed in pool `index` (host resources stay shared).
    pub fn in_pool(self, index: u32) -> ResourceId {
        let scope = match self.scope {
            Scope::Pool { member, .. } => Scope::Pool { index, member },
            Scope::Path { .. } => Scope::Path { pool: index },
            Scope::Host => Scope::Host,
        };
        ResourceId { scope, kind: self.kind }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Resource {
    /// Which limit this is, independent of its text.
    pub id: ResourceId,
    /// Who owns the limit: `device aws/ebs/gp2 (20 GiB) × 5`, `host t3.medium`, `path smb`.
    pub owner: String,
    /// Words before and after the bucket state in a binding: `EBS `, `uncached ` + `limit `.
    pub pre: &'static str,
    pub post: &'static str,
    pub unit: Unit,
    /// One of several identical members: the binding says "each".
    pub each: bool,
    /// Cost units per second: counted I/Os for IOPS limits, bytes otherwise.
    pub cap: Cap,
    /// The bucket behind the peak, in cost units.
    pub bucket: Option<Bucket>,
    /// A resource whose bucket decides this one's peak (gp2 170–334 GiB
    /// throughput rides on the I/O credit bucket).
    pub linked: Option<usize>,
    pub flows: u32,
    /// Member index for device resources.
    pub member: Option<u32>,
}

fn fmt(v: f64) -> String {
    if v >= 100.0 || (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        format!("{v:.2}").trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

impl Resource {
    fn value_text(&self, v: f64) -> String {
        match self.unit {
            Unit::Iops => format!("{} IOPS", fmt(v)),
            Unit::MibS => format!("{} MiB/s", fmt(v / MIB)),
            Unit::MbS => format!("{} MB/s", fmt(v / MB)),
            Unit::Gbps | Unit::Flows => format!("{} Gbps", fmt(v * 8.0 / 1e9)),
        }
    }

    /// The binding text in a bucket state: `host t3.medium: EBS burst 11800 IOPS`.
    pub fn label(&self, full: bool) -> String {
        if self.unit == Unit::Flows {
            // `flows` connections (SMB) or MPIO sessions (iSCSI), each held
            // to the single-flow limit; a per-share resource (`each`) is one
            // share's session.
            let n = self.flows.max(1);
            let per = self.cap.baseline / f64::from(n);
            let s = if n > 1 { "s" } else { "" };
            let (word, tail) = if self.owner.ends_with("iscsi") {
                ("MPIO session", "")
            } else if self.each {
                ("connection", " a share (SMB Multichannel), each share")
            } else {
                ("connection", "")
            };
            return format!("{}: {n} {word}{s} × {}{tail}", self.owner, self.value_text(per));
        }
        let state = match (self.cap.bursts(), full) {
            (true, true) => "burst ",
            (true, false) => "baseline ",
            _ => "",
        };
        let each = if self.each { " each" } else { "" };
        format!("{}: {}{state}{}{}{each}", self.owner, self.pre, self.post, self.value_text(self.cap.at(full)))
    }
}

/// Which way an I/O goes and whether the host cache serves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum IoClass {
    ReadHit = 0,
    ReadMiss = 1,
    Write = 2,
}

/// What one I/O costs each resource, per phase and class.
#[derive(Debug, Clone, Default)]
pub struct CostTable {
    pub phases: usize,
    entries: Vec<(u32, f64)>,
    spans: Vec<(u32, u32)>,
    members: Vec<(u32, u32)>,
    member_list: Vec<u32>,
}

impl CostTable {
    #[inline]
    pub fn costs(&self, phase: usize, class: IoClass) -> &[(u32, f64)] {
        let (a, b) = self.spans[phase * 3 + class as usize];
        &self.entries[a as usize..b as usize]
    }
    /// The member devices an I/O in this phase touches (for latency draws).
    #[inline]
    pub fn members(&self, phase: usize) -> &[u32] {
        let (a, b) = self.members[phase];
        &self.member_list[a as usize..b as usize]
    }
}

/// A pool's resources and the cost table of one I/O pattern on it.
#[derive(Debug, Clone)]
pub struct PoolPlan {
    pub resources: Vec<Resource>,
    pub table: CostTable,
    pub cached: bool,
}

struct MemberRes {
    iops: usize,
    bytes: usize,
    read_iops: Option<usize>,
    write_iops: Option<usize>,
    read_bytes: Option<usize>,
    write_bytes: Option<usize>,
    net: Option<usize>,
}

struct HostRes {
    ebs: Option<(usize, usize)>,
    uncached: Option<(usize, usize)>,
    cached: Option<(usize, usize)>,
    net: Option<usize>,
    flows: Option<usize>,
    /// `spread`: one flow per share — an I/O goes to one share, so it rides
    /// one flow whatever the share count.
    member_flows: Vec<usize>,
}

fn device_owner(pool: &Pool) -> String {
    let d = &pool.device;
    let kind = if d.kind == DeviceKind::FileSystem { "file system" } else { "device" };
    let what = if d.kind == DeviceKind::FileSystem {
        format!("{} ({} MB/s, {} GiB)", d.id, fmt(d.throughput_capacity_mb_s.unwrap_or(0.0)), fmt(d.size_gib))
    } else {
        format!("{} ({} GiB)", d.id, fmt(d.size_gib))
    };
    if pool.count > 1 {
        format!("{kind} {what} × {}", pool.count)
    } else {
        format!("{kind} {what}")
    }
}

fn push(out: &mut Vec<Resource>, r: Resource) -> usize {
    out.push(r);
    out.len() - 1
}

fn build_resources(dep: &Deployment, pool: &Pool) -> (Vec<Resource>, Vec<MemberRes>, HostRes) {
    // The pool's position in the deployment: its identity.
    let pool_index = dep.pools.iter().position(|p| std::ptr::eq(p, pool)).unwrap_or(dep.pools.len()) as u32;
    let d: &DeviceModel = &pool.device;
    let owner = device_owner(pool);
    let each = pool.count > 1;
    let fs = d.kind == DeviceKind::FileSystem;
    let tp_unit = if fs || d.throughput_decimal { Unit::MbS } else { Unit::MibS };
    let mut out = Vec::new();
    let base = |kind: Kind, pre: &'static str, post: &'static str, unit: Unit, cap: Cap, bucket: Option<Bucket>, member: u32| Resource {
        id: ResourceId { scope: Scope::Pool { index: pool_index, member }, kind },
        owner: owner.clone(),
        pre,
        post,
        unit,
        each,
        cap,
        bucket,
        linked: None,
        flows: 0,
        member: Some(member),
    };
    let mut members = Vec::new();
    for m in 0..pool.count {
        let iops = push(&mut out, base(Kind::Iops, "", if fs { "disk " } else { "" }, Unit::Iops, d.iops, d.iops_bucket.clone(), m));
        let mut b = base(Kind::Bytes, "", if fs { "disk " } else { "" }, tp_unit, d.bytes_s, d.bytes_bucket.clone(), m);
        if d.bytes_s.bucket == Some(BucketRef::Iops) {
            b.linked = Some(iops);
        }
        let bytes = push(&mut out, b);
        let flat = |v: Option<f64>| v.map(Cap::flat);
        let read_iops = flat(d.read_iops).map(|c| push(&mut out, base(Kind::ReadIops, "read ", "", Unit::Iops, c, None, m)));
        let write_iops = flat(d.write_iops).map(|c| push(&mut out, base(Kind::WriteIops, "write ", "", Unit::Iops, c, None, m)));
        let read_bytes = flat(d.read_bytes_s).map(|c| push(&mut out, base(Kind::ReadBytes, "read ", "", Unit::MibS, c, None, m)));
        let write_bytes = flat(d.write_bytes_s).map(|c| push(&mut out, base(Kind::WriteBytes, "write ", "", Unit::MibS, c, None, m)));
        let net = d.network_bytes_s.map(|c| push(&mut out, base(Kind::Network, "", "network ", Unit::MbS, c, d.network_bucket.clone(), m)));
        members.push(MemberRes { iops, bytes, read_iops, write_iops, read_bytes, write_bytes, net });
    }

    let h = &dep.host;
    let host_owner = format!("host {}", h.short());
    let hres = |kind: Kind, pre: &'static str, post: &'static str, unit: Unit, cap: Cap, bucket: Option<Bucket>| Resource {
        id: ResourceId { scope: Scope::Host, kind },
        owner: host_owner.clone(),
        pre,
        post,
        unit,
        each: false,
        cap,
        bucket,
        linked: None,
        flows: 0,
        member: None,
    };
    let mut host = HostRes { ebs: None, uncached: None, cached: None, net: None, flows: None, member_flows: Vec::new() };
    let block_volume = pool.path == PathKind::Block && d.kind == DeviceKind::Volume;
    if block_volume {
        if let (Some(i), Some(b)) = (h.ebs_iops, h.ebs_bytes_s) {
            let a = push(&mut out, hres(Kind::EbsIops, "EBS ", "", Unit::Iops, i, h.ebs_iops_bucket.clone()));
            let c = push(&mut out, hres(Kind::EbsBytes, "EBS ", "", Unit::MbS, b, h.ebs_bytes_bucket.clone()));
            host.ebs = Some((a, c));
        }
        if let (Some(i), Some(b)) = (h.uncached_iops, h.uncached_bytes_s) {
            let a = push(&mut out, hres(Kind::UncachedIops, "uncached ", "limit ", Unit::Iops, i, h.uncached_iops_bucket.clone()));
            let c = push(&mut out, hres(Kind::UncachedBytes, "uncached ", "limit ", Unit::MbS, b, h.uncached_bytes_bucket.clone()));
            host.uncached = Some((a, c));
        }
        if pool.host_cache != HostCacheMode::None {
            if let (Some(i), Some(b)) = (h.cached_iops, h.cached_bytes_s) {
                let a = push(&mut out, hres(Kind::CachedIops, "cached ", "limit ", Unit::Iops, Cap::flat(i), None));
                let c = push(&mut out, hres(Kind::CachedBytes, "cached ", "limit ", Unit::MbS, Cap::flat(b), None));
                host.cached = Some((a, c));
            }
        }
    }
    if pool.path.is_network() {
        if let Some(net) = h.network_bytes_s {
            host.net = Some(push(&mut out, hres(Kind::Network, "network ", "", Unit::Gbps, net, None)));
        }
        if let (Some(flow), Layout::Spread) = (h.flow_bytes_s, pool.layout) {
            // One session a share, of its own connections (SMB Multichannel).
            let per_share = (pool.flows / pool.count.max(1)).max(1);
            for m in 0..pool.count {
                let mut r = hres(Kind::Flows, "", "", Unit::Flows, Cap::flat(flow * f64::from(per_share)), None);
                r.id.scope = Scope::Pool { index: pool_index, member: m };
                r.owner = format!("path {}", pool.path.name());
                r.flows = per_share;
                r.each = true;
                host.member_flows.push(push(&mut out, r));
            }
        } else if let Some(flow) = h.flow_bytes_s {
            let flows = pool.flows.max(1);
            let mut r = hres(Kind::Flows, "", "", Unit::Flows, Cap::flat(flow * f64::from(flows)), None);
            r.owner = format!("path {}", pool.path.name());
            r.id.scope = Scope::Path { pool: pool_index };
            r.flows = flows;
            host.flows = Some(push(&mut out, r));
        }
    }
    (out, members, host)
}

/// Counted I/Os for one contiguous extent of `len` bytes on a device.
fn counted_ops(dev: &DeviceModel, len: f64, merged: bool) -> f64 {
    if len <= 0.0 {
        0.0
    } else if merged {
        len / dev.unit_bytes
    } else {
        (len / dev.unit_bytes).ceil()
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Most phases a table holds; longer stripe periods are sampled.
pub const MAX_PHASES: u64 = 4096;

/// The extents one I/O puts on each member, for every phase: `(member,
/// bytes, drive operations per counted I/O)`.
fn placements(pool: &Pool, size: f64, read: bool, sequential: bool) -> Vec<Vec<(u32, f64, f64)>> {
    let n = pool.count as u64;
    let s = size as u64;
    let unit = pool.stripe_bytes as u64;
    let stripe = |data: u64| -> Vec<Vec<(u32, f64, f64)>> {
        let row = unit * data;
        let period = (s / gcd(s, row)).saturating_mul(row);
        let ios = (period / s).clamp(1, MAX_PHASES);
        (0..ios)
            .map(|k| {
                let (start, end) = (k * s, (k + 1) * s);
                let mut on = vec![0u64; n as usize];
                let mut off = start;
                while off < end {
                    let chunk = off / unit;
                    let next = ((chunk + 1) * unit).min(end);
                    on[(chunk % data) as usize] += next - off;
                    off = next;
                }
                on.iter().enumerate().filter(|(_, b)| **b > 0).map(|(m, b)| (m as u32, *b as f64, 1.0)).collect()
            })
            .collect()
    };
    match pool.layout {
        Layout::Single => vec![vec![(0, size, 1.0)]],
        Layout::Spread => (0..pool.count).map(|m| vec![(m, size, 1.0)]).collect(),
        Layout::Stripe => stripe(n),
        Layout::Raid6 if read && !sequential => stripe(n),
        // Sequential I/O: N − 2 data chunks a row. Parity rotates, so every
        // drive also passes over (reads) or writes two parity chunks a row:
        // each drive's data rate is (N − 2)/N of its rate, which is what
        // charging the data to N − 2 drives gives.
        Layout::Raid6 if sequential => stripe(n - 2),
        // A small random write: read and rewrite the data block and both
        // parity blocks — six drive operations on three drives.
        Layout::Raid6 => (0..n)
            .map(|k| {
                let len = size.min(pool.stripe_bytes);
                (0..3).map(|i| (((k + i) % n) as u32, len, 2.0)).collect()
            })
            .collect(),
    }
}

impl PoolPlan {
    /// The resources of `pool` and the cost table of I/Os of `size_bytes`,
    /// sequential or random; `read_and_write` builds both directions.
    pub fn new(dep: &Deployment, pool: &Pool, size_bytes: f64, sequential: bool) -> PoolPlan {
        let (resources, members, host) = build_resources(dep, pool);
        let dev = &pool.device;
        // EBS merges sequential I/O only from 32 KiB up (`merge_min_bytes`).
        let merged = sequential && dev.merge_sequential && size_bytes >= dev.merge_min_bytes;
        // Datasheet IOPS of local devices are random-access figures: a
        // sequential stream on them is bound by the transfer rate.
        let iops_apply = !(dev.kind == DeviceKind::Local && sequential);
        let cached = pool.host_cache != HostCacheMode::None;
        let read_pl = placements(pool, size_bytes, true, sequential);
        let write_pl = placements(pool, size_bytes, false, sequential);
        let phases = read_pl.len().max(write_pl.len());
        let mut t = CostTable { phases, ..Default::default() };
        for k in 0..phases {
            for class in [IoClass::ReadHit, IoClass::ReadMiss, IoClass::Write] {
                let read = class != IoClass::Write;
                let pl = if read { &read_pl[k % read_pl.len()] } else { &write_pl[k % write_pl.len()] };
                let start = t.entries.len() as u32;
                let mut total_ops = 0.0;
                for &(m, len, mult) in pl {
                    let ops = counted_ops(dev, len, merged) * mult;
                    let bytes = if dev.charge_whole_unit && !merged { ops * dev.unit_bytes } else { len * mult };
                    total_ops += ops;
                    let mr = &members[m as usize];
                    if let Some(net) = mr.net {
                        t.entries.push((net as u32, len));
                    }
                    if let Some(&f) = host.member_flows.get(m as usize) {
                        t.entries.push((f as u32, len));
                    }
                    if class == IoClass::ReadHit {
                        continue;
                    }
                    if iops_apply {
                        t.entries.push((mr.iops as u32, ops));
                    }
                    t.entries.push((mr.bytes as u32, bytes));
                    let (di, db) = if read { (mr.read_iops, mr.read_bytes) } else { (mr.write_iops, mr.write_bytes) };
                    if let (Some(r), true) = (di, iops_apply) {
                        t.entries.push((r as u32, ops));
                    }
                    if let Some(r) = db {
                        t.entries.push((r as u32, bytes));
                    }
                }
                if let Some((i, b)) = host.ebs {
                    t.entries.push((i as u32, total_ops));
                    t.entries.push((b as u32, size_bytes));
                }
                // Azure: hits count only against the cached limit; misses
                // and writes against the cached and the uncached limits.
                if let Some((i, b)) = host.uncached {
                    if class != IoClass::ReadHit {
                        t.entries.push((i as u32, total_ops));
                        t.entries.push((b as u32, size_bytes));
                    }
                }
                if let Some((i, b)) = host.cached {
                    t.entries.push((i as u32, total_ops));
                    t.entries.push((b as u32, size_bytes));
                }
                if let Some(r) = host.net {
                    t.entries.push((r as u32, size_bytes));
                }
                if let Some(r) = host.flows {
                    t.entries.push((r as u32, size_bytes));
                }
                t.spans.push((start, t.entries.len() as u32));
            }
            let ms = t.member_list.len() as u32;
            let pl = &read_pl[k % read_pl.len()];
            t.member_list.extend(pl.iter().map(|p| p.0));
            t.members.push((ms, t.member_list.len() as u32));
        }
        PoolPlan { resources, table: t, cached }
    }

    /// Mean cost per I/O on each resource, for a mix of classes given as
    /// weights (reads that hit, reads that miss, writes).
    pub fn mean_costs(&self, weights: [f64; 3]) -> Vec<f64> {
        let mut out = vec![0.0; self.resources.len()];
        let n = self.table.phases as f64;
        for k in 0..self.table.phases {
            for (ci, class) in [IoClass::ReadHit, IoClass::ReadMiss, IoClass::Write].into_iter().enumerate() {
                if weights[ci] == 0.0 {
                    continue;
                }
                for &(r, c) in self.table.costs(k, class) {
                    out[r as usize] += weights[ci] * c / n;
                }
            }
        }
        out
    }
}
