//! Ceilings: the highest rate a deployment sustains for an I/O pattern, with
//! every bucket full (`ceilings`) and once every bucket is empty
//! (`sustained`), and the component that binds.
//!
//! Every limit in the model is a resource with a cap (`resources`), and
//! every I/O has a cost on each resource under its vendor's accounting, so
//! each limit is a linear constraint `mean cost per I/O × rate ≤ cap`. The
//! ceiling is the smallest `cap / mean cost`; the resource that gives it
//! binds. The simulator spends the same costs against the same caps, I/O by
//! I/O.

use crate::deployment::{Deployment, Pool};
use crate::device::MIB;
use crate::resources::PoolPlan;
use crate::scenario::Role;
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

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Ceiling {
    /// I/Os per second for IOPS keys, bytes per second for `_bytes_s` keys.
    pub value: f64,
    pub binding: String,
}

/// The ceiling of one pool for one pattern in one bucket state: the
/// smallest cap / mean cost per I/O over the pool's resources.
pub fn pool_ceiling(dep: &Deployment, pool: &Pool, pat: IoPattern, full: bool, a: Assumptions) -> Ceiling {
    let plan = PoolPlan::new(dep, pool, pat.size_bytes, pat.sequential);
    let hit = if plan.cached { a.read_hit_ratio } else { 0.0 };
    let weights = if pat.read { [hit, 1.0 - hit, 0.0] } else { [0.0, 0.0, 1.0] };
    let costs = plan.mean_costs(weights);
    let mut best: Option<(f64, usize)> = None;
    for (i, (r, c)) in plan.resources.iter().zip(&costs).enumerate() {
        if *c <= 0.0 {
            continue;
        }
        let rate = r.cap.at(full) / c;
        // A resource without a figure (an instance-store device's
        // throughput) limits nothing.
        if !rate.is_finite() {
            continue;
        }
        if best.map_or(true, |(b, _)| rate < b - 1e-9) {
            best = Some((rate, i));
        }
    }
    match best {
        Some((rate, i)) => Ceiling { value: rate, binding: plan.resources[i].label(full) },
        None => Ceiling { value: f64::INFINITY, binding: "nothing: no modelled limit applies".into() },
    }
}

/// The pool the config-level figures describe: data, else all, else the first.
pub fn primary_pool(dep: &Deployment) -> &Pool {
    dep.pools
        .iter()
        .find(|p| p.role == Role::Data)
        .or_else(|| dep.pools.iter().find(|p| p.role == Role::All))
        .unwrap_or(&dep.pools[0])
}
