//! Ceilings: the highest rate a deployment sustains for an I/O pattern, with
//! every bucket full (`ceilings`) and once every bucket is empty
//! (`sustained`), and the component that binds.
//!
//! Every limit in the model is a linear constraint `per_io × rate ≤ cap`:
//! `per_io` is what one workload I/O costs that component (counted I/Os under
//! its vendor's accounting, bytes, cache hits) and `cap` its limit in the
//! bucket state asked for. The ceiling is the smallest `cap / per_io`; the
//! constraint that gives it binds. The simulator spends the same costs
//! against the same caps, I/O by I/O.

use crate::catalog::{DeviceKind, Media, PathKind};
use crate::deployment::{Deployment, HostModel, Pool};
use crate::device::{Cap, DeviceModel, MB, MIB};
use crate::scenario::{HostCacheMode, Layout, Role};
use serde::Serialize;

/// An I/O pattern: size, direction, and whether offsets are sequential.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IoPattern {
    pub size_bytes: f64,
    pub read: bool,
    pub sequential: bool,
}

impl IoPattern {
    pub const RAND4K_READ: IoPattern = IoPattern { size_bytes: 4096.0, read: true, sequential: false };
    pub const RAND4K_WRITE: IoPattern = IoPattern { size_bytes: 4096.0, read: false, sequential: false };
    pub const SEQ1M_READ: IoPattern = IoPattern { size_bytes: MIB, read: true, sequential: true };
    pub const SEQ1M_WRITE: IoPattern = IoPattern { size_bytes: MIB, read: false, sequential: true };
}

/// The four patterns of `storlab limits`, with their JSON keys and whether
/// the figure is reported in bytes per second.
pub const PATTERNS: [(&str, IoPattern, bool); 4] = [
    ("rand4k_read_iops", IoPattern::RAND4K_READ, false),
    ("rand4k_write_iops", IoPattern::RAND4K_WRITE, false),
    ("seq1m_read_bytes_s", IoPattern::SEQ1M_READ, true),
    ("seq1m_write_bytes_s", IoPattern::SEQ1M_WRITE, true),
];

/// What one workload I/O costs the busiest member device of a pool (counted
/// I/Os and bytes), and the counted I/Os summed over all members (what a
/// host-level IOPS limit sees).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MemberCost {
    pub ops: f64,
    pub bytes: f64,
    pub total_ops: f64,
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

/// The busiest member's cost per workload I/O, from the layout's placement.
/// Stripes are walked over one full period of aligned I/Os, so a 1 MiB I/O
/// over five 64 KiB-striped members is charged exactly as the members see
/// it; within one I/O, a member's chunks are contiguous on that member.
pub fn member_cost(pool: &Pool, pat: IoPattern) -> MemberCost {
    let dev = &pool.device;
    let n = pool.count as usize;
    let s = pat.size_bytes;
    let merged = pat.sequential && dev.merge_sequential;
    let bytes_of = |ops: f64, bytes: f64| if dev.charge_whole_unit && !merged { ops * dev.unit_bytes } else { bytes };
    match pool.layout {
        Layout::Single => {
            let ops = counted_ops(dev, s, merged);
            MemberCost { ops, bytes: bytes_of(ops, s), total_ops: ops }
        }
        Layout::Spread => {
            // Each record lives on one share; I/Os spread evenly.
            let ops = counted_ops(dev, s, merged);
            MemberCost { ops: ops / n as f64, bytes: bytes_of(ops, s) / n as f64, total_ops: ops }
        }
        Layout::Stripe => stripe_cost(dev, n, pool.stripe_bytes, s, merged),
        Layout::Raid6 => {
            if pat.read || pat.sequential {
                // Sequential I/O passes over (reads) or fills (full-stripe
                // writes) two parity chunks a row: N − 2 disks carry data.
                // Random reads are spread over all N.
                let data = if pat.sequential { n - 2 } else { n };
                stripe_cost(dev, data, pool.stripe_bytes, s, merged)
            } else {
                // A small random write reads and rewrites the data and both
                // parity blocks: six drive operations, spread over N drives.
                let len = s.min(pool.stripe_bytes);
                let ops = counted_ops(dev, len, merged);
                MemberCost { ops: 6.0 * ops / n as f64, bytes: 6.0 * bytes_of(ops, len) / n as f64, total_ops: 6.0 * ops }
            }
        }
    }
}

fn stripe_cost(dev: &DeviceModel, n: usize, unit: f64, s: f64, merged: bool) -> MemberCost {
    let n = n.max(1);
    let (ui, si) = (unit as u64, s as u64);
    let row = ui * n as u64;
    // One period of aligned I/Os: lcm(size, row) bytes, capped for odd sizes.
    let period = lcm(si, row).min(si * 4096);
    let ios = (period / si).max(1);
    let mut ops = vec![0.0f64; n];
    let mut bytes = vec![0.0f64; n];
    let mut on_member = vec![0u64; n];
    for k in 0..ios {
        let (start, end) = (k * si, (k + 1) * si);
        on_member.iter_mut().for_each(|b| *b = 0);
        let mut off = start;
        while off < end {
            let chunk = off / ui;
            let next = ((chunk + 1) * ui).min(end);
            on_member[(chunk % n as u64) as usize] += next - off;
            off = next;
        }
        for m in 0..n {
            let len = on_member[m] as f64;
            let o = counted_ops(dev, len, merged);
            ops[m] += o;
            bytes[m] += if dev.charge_whole_unit && !merged { o * dev.unit_bytes } else { len };
        }
    }
    let k = ios as f64;
    let busiest = (0..n).max_by(|&a, &b| ops[a].total_cmp(&ops[b]).then(bytes[a].total_cmp(&bytes[b]))).unwrap_or(0);
    MemberCost { ops: ops[busiest] / k, bytes: bytes[busiest] / k, total_ops: ops.iter().sum::<f64>() / k }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn lcm(a: u64, b: u64) -> u64 {
    if a == 0 || b == 0 {
        return a.max(b);
    }
    a / gcd(a, b) * b
}

/// One linear constraint on the rate.
#[derive(Debug, Clone)]
struct Constraint {
    label: String,
    cap: f64,
    per_io: f64,
}

fn fmt(v: f64) -> String {
    if v >= 100.0 || (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        format!("{v:.2}").trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn mib_s(v: f64) -> String {
    format!("{} MiB/s", fmt(v / MIB))
}

fn mb_s(v: f64) -> String {
    format!("{} MB/s", fmt(v / MB))
}

fn state_word(cap: &Cap, full: bool) -> &'static str {
    match (cap.bursts(), full) {
        (true, true) => "burst ",
        (true, false) => "baseline ",
        _ => "",
    }
}

/// The fraction of reads served by the host cache; 1 unless a working set
/// larger than the cache is known.
#[derive(Debug, Clone, Copy)]
pub struct Assumptions {
    pub read_hit_ratio: f64,
}

impl Default for Assumptions {
    fn default() -> Self {
        Assumptions { read_hit_ratio: 1.0 }
    }
}

fn device_name(pool: &Pool) -> String {
    let d = &pool.device;
    let what = if d.kind == DeviceKind::FileSystem {
        format!("{} ({} MB/s, {} GiB)", d.id, fmt(d.throughput_capacity_mb_s.unwrap_or(0.0)), fmt(d.size_gib))
    } else {
        format!("{} ({} GiB)", d.id, fmt(d.size_gib))
    };
    if pool.count > 1 {
        format!("{what} × {}", pool.count)
    } else {
        what
    }
}

fn constraints(dep: &Deployment, pool: &Pool, pat: IoPattern, full: bool, a: Assumptions) -> Vec<Constraint> {
    let mut out = Vec::new();
    let dev = &pool.device;
    let each = if pool.count > 1 { " each" } else { "" };
    let name = device_name(pool);
    let cached = pool.host_cache != HostCacheMode::None;
    let miss = if pat.read && cached { 1.0 - a.read_hit_ratio } else { 1.0 };
    let m = member_cost(pool, pat);
    let kind = if dev.kind == DeviceKind::FileSystem { "file system" } else { "device" };

    // The member device's own limits. Datasheet IOPS of local devices are
    // random-access figures: a sequential stream is bound by the transfer rate.
    let iops_applies = !(dev.kind == DeviceKind::Local && pat.sequential);
    if iops_applies {
        let (cap, label) = if dev.kind == DeviceKind::FileSystem {
            (dev.iops.at(full), format!("{kind} {name}: {}disk {} IOPS{each}", state_word(&dev.iops, full), fmt(dev.iops.at(full))))
        } else {
            (dev.iops.at(full), format!("{kind} {name}: {}{} IOPS{each}", state_word(&dev.iops, full), fmt(dev.iops.at(full))))
        };
        out.push(Constraint { label, cap, per_io: m.ops * miss });
        let dir = if pat.read { dev.read_iops } else { dev.write_iops };
        if let Some(d) = dir {
            let w = if pat.read { "read" } else { "write" };
            out.push(Constraint { label: format!("{kind} {name}: {w} {} IOPS{each}", fmt(d)), cap: d, per_io: m.ops * miss });
        }
    }
    let tp_label = |v: f64| if dev.kind == DeviceKind::FileSystem { mb_s(v) } else { mib_s(v) };
    let disk = if dev.kind == DeviceKind::FileSystem { "disk " } else { "" };
    out.push(Constraint {
        label: format!("{kind} {name}: {}{disk}{}{each}", state_word(&dev.bytes_s, full), tp_label(dev.bytes_s.at(full))),
        cap: dev.bytes_s.at(full),
        per_io: m.bytes * miss,
    });
    let dir = if pat.read { dev.read_bytes_s } else { dev.write_bytes_s };
    if let Some(d) = dir {
        let w = if pat.read { "read" } else { "write" };
        out.push(Constraint { label: format!("{kind} {name}: {w} {}{each}", mib_s(d)), cap: d, per_io: m.bytes * miss });
    }
    if let Some(net) = &dev.network_bytes_s {
        // The file server's network carries every byte, cached or not.
        let per_member = pat.size_bytes / pool.count as f64;
        out.push(Constraint {
            label: format!("{kind} {name}: {}network {}{each}", state_word(net, full), mb_s(net.at(full))),
            cap: net.at(full),
            per_io: per_member,
        });
    }

    // The host.
    let h: &HostModel = &dep.host;
    let short = h.short();
    let total_ops_exact = m.total_ops;
    if pool.path == PathKind::Block && dev.kind == DeviceKind::Volume {
        if let (Some(i), Some(b)) = (&h.ebs_iops, &h.ebs_bytes_s) {
            out.push(Constraint {
                label: format!("host {short}: EBS {}{} IOPS", state_word(i, full), fmt(i.at(full))),
                cap: i.at(full),
                per_io: total_ops_exact,
            });
            out.push(Constraint {
                label: format!("host {short}: EBS {}{}", state_word(b, full), mb_s(b.at(full))),
                cap: b.at(full),
                per_io: pat.size_bytes,
            });
        }
        if let (Some(i), Some(b)) = (&h.uncached_iops, &h.uncached_bytes_s) {
            out.push(Constraint {
                label: format!("host {short}: uncached {}limit {} IOPS", state_word(i, full), fmt(i.at(full))),
                cap: i.at(full),
                per_io: total_ops_exact * miss,
            });
            out.push(Constraint {
                label: format!("host {short}: uncached {}limit {}", state_word(b, full), mib_s(b.at(full))),
                cap: b.at(full),
                per_io: pat.size_bytes * miss,
            });
        }
        if cached {
            // Azure host cache: every I/O to a cached disk counts against the
            // VM's cached limit; misses and writes also against the uncached.
            if let Some(ci) = h.cached_iops {
                out.push(Constraint { label: format!("host {short}: cached limit {} IOPS", fmt(ci)), cap: ci, per_io: total_ops_exact });
            }
            if let Some(cb) = h.cached_bytes_s {
                out.push(Constraint { label: format!("host {short}: cached limit {}", mib_s(cb)), cap: cb, per_io: pat.size_bytes });
            }
        }
    }
    if pool.path.is_network() {
        if let Some(net) = &h.network_bytes_s {
            out.push(Constraint {
                label: format!("host {short}: network {}{} Gbps", state_word(net, full), fmt(net.at(full) * 8.0 / 1e9)),
                cap: net.at(full),
                per_io: pat.size_bytes,
            });
        }
        if let Some(flow) = h.flow_bytes_s {
            let flows = pool.flows.max(1) as f64;
            out.push(Constraint {
                label: format!("path {}: {} flow{} × {} Gbps", pool.path.name(), pool.flows.max(1), if flows > 1.0 { "s" } else { "" }, fmt(flow * 8.0 / 1e9)),
                cap: flow * flows,
                per_io: pat.size_bytes,
            });
        }
    }
    out
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Ceiling {
    /// I/Os per second for IOPS keys, bytes per second for `_bytes_s` keys.
    pub value: f64,
    pub binding: String,
}

/// The ceiling of one pool for one pattern in one bucket state.
pub fn pool_ceiling(dep: &Deployment, pool: &Pool, pat: IoPattern, full: bool, a: Assumptions) -> Ceiling {
    let mut best: Option<(f64, String)> = None;
    for c in constraints(dep, pool, pat, full, a) {
        if c.per_io <= 0.0 {
            continue;
        }
        let rate = c.cap / c.per_io;
        if best.as_ref().map_or(true, |(r, _)| rate < *r - 1e-9) {
            best = Some((rate, c.label));
        }
    }
    let (rate, binding) = best.unwrap_or((f64::INFINITY, "nothing: no modelled limit applies".into()));
    Ceiling { value: rate, binding }
}

/// The pool the config-level figures describe: data, else all, else the first.
pub fn primary_pool(dep: &Deployment) -> &Pool {
    dep.pools
        .iter()
        .find(|p| p.role == Role::Data)
        .or_else(|| dep.pools.iter().find(|p| p.role == Role::All))
        .unwrap_or(&dep.pools[0])
}

pub fn is_local_hdd(p: &Pool) -> bool {
    p.device.kind == DeviceKind::Local && p.device.media == Media::Hdd
}
