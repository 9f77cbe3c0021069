//! Pacing: when a deployment's limits admit each I/O.
//!
//! Each resource of a pool plan (device, file server, host limit, path) is a
//! pacer: it admits work at its peak rate while its bucket holds tokens and
//! at its refill (baseline) rate once it is empty, like a token bucket with a
//! peak-rate limiter (tc `tbf` with `peakrate`). An I/O is admitted by a
//! stage of pacers when every one of them can take it, in turn.
//!
//! This is the one admission model for every engine: the simulator calls it
//! on a virtual clock, an emulator on the wall clock (it sleeps until the
//! admission time `pass` returns). Nothing here reads a clock; time is
//! `Secs` since the run began, given by the caller, and must not go
//! backwards by more than the work already queued.

use crate::bucket::Bucket;
use crate::device::Cap;
use crate::resources::{IoClass, PoolPlan, Resource, ResourceId};
pub use crate::time::Secs;
use std::collections::HashMap;

/// A pacer in a `PacerSet`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct PacerId(pub u32);

impl PacerId {
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One resource's admission state.
#[derive(Debug, Clone)]
pub struct Pacer {
    free_at: f64,
    inv_peak: f64,
    inv_base: f64,
    bucket: Option<Bucket>,
    linked: Option<PacerId>,
    resource: ResourceId,
    /// Queueing this pacer imposed since the last `reset_stats` (for "what
    /// bound it").
    pub wait_s: f64,
    /// Time it ran at its peak rate and at its baseline (an empty bucket,
    /// or a linked bucket empty) since the last `reset_stats`.
    pub at_peak_s: f64,
    pub at_base_s: f64,
    /// The first admission at the baseline since the last `reset_stats`
    /// (its bucket, or the bucket it is linked to, had emptied): where a
    /// result's figures split into before and after.
    pub emptied_at: Option<Secs>,
}

fn inv(rate: f64) -> f64 {
    if rate.is_finite() && rate > 0.0 {
        1.0 / rate
    } else {
        0.0
    }
}

impl Pacer {
    pub fn new(r: &Resource) -> Pacer {
        let Cap { baseline, peak, .. } = r.cap;
        Pacer { free_at: 0.0, inv_peak: inv(peak), inv_base: inv(baseline), bucket: r.bucket.clone(), linked: None, resource: r.id, wait_s: 0.0, at_peak_s: 0.0, at_base_s: 0.0, emptied_at: None }
    }

    /// Whether it ran at its peak more than at its baseline since the last
    /// `reset_stats`: the state its binding is reported in.
    pub fn mostly_at_peak(&self) -> bool {
        self.at_peak_s >= self.at_base_s
    }

    pub fn bucket(&self) -> Option<&Bucket> {
        self.bucket.as_ref()
    }

    /// The pacer whose bucket decides this one's peak.
    pub fn linked(&self) -> Option<PacerId> {
        self.linked
    }

    /// True when its bucket (if any) holds tokens at `t`.
    #[inline]
    pub fn has_credit(&self, t: Secs) -> bool {
        self.bucket.as_ref().map_or(true, |b| b.at(t) > 0.0)
    }

    /// Percent of the bucket left at `t` (CloudWatch BurstBalance); `None`
    /// without a bucket.
    pub fn balance_percent(&self, t: Secs) -> Option<f64> {
        self.bucket.as_ref().map(|b| if b.capacity > 0.0 { 100.0 * b.at(t) / b.capacity } else { 100.0 })
    }

    /// When it is next free to admit work.
    pub fn free_at(&self) -> Secs {
        Secs(self.free_at)
    }
}

/// One burst balance, readable by an emulator's metrics or a series.
#[derive(Debug, Clone, PartialEq)]
pub struct BurstBalance {
    pub pacer: PacerId,
    pub percent: f64,
    pub tokens: f64,
    pub capacity: f64,
}

/// The pacers of one deployment, shared by every pool and every job run on
/// it: buckets drained in one job are still drained in the next, and two
/// jobs at once compete for the same pacers.
#[derive(Debug, Clone, Default)]
pub struct PacerSet {
    pacers: Vec<Pacer>,
    ids: HashMap<ResourceId, PacerId>,
    /// How many pacers have set `emptied_at` so far: an engine compares it
    /// with the count it last saw instead of scanning every pacer.
    pub empties: u64,
    /// Every bucket's balance when its pacer is created, percent of
    /// capacity (`None`: full).
    pub start_percent: Option<f64>,
}

impl PacerSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Pacers whose buckets start `percent` full.
    pub fn starting_at(percent: Option<f64>) -> Self {
        PacerSet { start_percent: percent, ..Self::default() }
    }

    pub fn len(&self) -> usize {
        self.pacers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pacers.is_empty()
    }

    #[inline]
    pub fn get(&self, id: PacerId) -> &Pacer {
        &self.pacers[id.index()]
    }

    pub fn ids(&self) -> impl Iterator<Item = PacerId> {
        (0..self.pacers.len() as u32).map(PacerId)
    }

    /// The pacer of a resource, once a plan holding it is registered.
    pub fn find(&self, id: ResourceId) -> Option<PacerId> {
        self.ids.get(&id).copied()
    }

    /// The resource a pacer stands for.
    pub fn resource(&self, id: PacerId) -> ResourceId {
        self.pacers[id.index()].resource
    }

    /// The pacers of a plan's resources, in the plan's order, created on
    /// first sight and keyed by `ResourceId`: a pool's own resources (its
    /// members, its path) belong to pool `pool_index`, the host's are shared
    /// by every pool. Registering the same pool again (another I/O size)
    /// returns the same pacers.
    pub fn register(&mut self, pool_index: usize, plan: &PoolPlan) -> Vec<PacerId> {
        let mut out = Vec::with_capacity(plan.resources.len());
        for r in &plan.resources {
            let key = r.id.in_pool(pool_index as u32);
            let id = match self.ids.get(&key) {
                Some(&g) => g,
                None => {
                    let mut p = Pacer::new(r);
                    if let (Some(pct), Some(b)) = (self.start_percent, &mut p.bucket) {
                        b.set_balance_percent(pct, Secs::ZERO);
                    }
                    self.pacers.push(p);
                    let id = PacerId(self.pacers.len() as u32 - 1);
                    self.ids.insert(key, id);
                    id
                }
            };
            out.push(id);
        }
        for (i, r) in plan.resources.iter().enumerate() {
            if let Some(l) = r.linked {
                self.pacers[out[i].index()].linked = Some(out[l]);
            }
        }
        out
    }

    /// The earliest admission of `cost` at or after `t`, and whether the
    /// bucket (not the peak rate) made it wait.
    #[inline]
    fn earliest(&self, id: PacerId, cost: f64, t: f64) -> (f64, bool) {
        let p = &self.pacers[id.index()];
        let mut e = t.max(p.free_at);
        let mut empty = false;
        if let Some(b) = &p.bucket {
            let bal = b.at(Secs(e));
            if bal < cost {
                e += if b.refill_per_s > 0.0 { (cost - bal) / b.refill_per_s } else { f64::INFINITY };
                empty = true;
            }
        }
        (e, empty)
    }

    /// Passes work arriving at `at` through one stage of pacers in turn
    /// (each admits it when it can take it, `cost` in its unit) and returns
    /// when the last one admitted it.
    #[inline]
    pub fn pass(&mut self, entries: &[(PacerId, f64)], at: Secs) -> Secs {
        let mut a = at.0;
        for &(id, c) in entries {
            let (e, empty) = self.earliest(id, c, a);
            if e > a {
                self.pacers[id.index()].wait_s += e - a;
                a = e;
            }
            self.commit(id, c, a, empty);
        }
        Secs(a)
    }

    #[inline]
    fn commit(&mut self, id: PacerId, cost: f64, a: f64, empty: bool) {
        let r = id.index();
        let (inv, at_base) = match self.pacers[r].linked {
            Some(l) => {
                if self.pacers[l.index()].has_credit(Secs(a)) {
                    (self.pacers[r].inv_peak, false)
                } else {
                    (self.pacers[r].inv_base, true)
                }
            }
            None => (self.pacers[r].inv_peak, empty),
        };
        let p = &mut self.pacers[r];
        // Time spent at each rate, so a long stretch at the baseline
        // outweighs the many fast I/Os of a short burst.
        if at_base {
            // Only where the baseline is slower than the peak: an inert
            // bucket (gp2 from 1,000 GiB) changes nothing when it empties.
            if p.emptied_at.is_none() && p.inv_base > p.inv_peak {
                p.emptied_at = Some(Secs(a));
                self.empties += 1;
            }
            p.at_base_s += cost * p.inv_base;
        } else {
            p.at_peak_s += cost * inv;
        }
        if let Some(b) = &mut p.bucket {
            b.take(cost, Secs(a));
        }
        p.free_at = a + cost * inv;
    }

    /// Clears the binding statistics of these pacers (at a job's start).
    pub fn reset_stats(&mut self, ids: &[PacerId]) {
        for &id in ids {
            let p = &mut self.pacers[id.index()];
            p.wait_s = 0.0;
            p.at_peak_s = 0.0;
            p.at_base_s = 0.0;
            p.emptied_at = None;
        }
    }

    /// Every bucket's balance at `t`.
    pub fn balances(&self, t: Secs) -> Vec<BurstBalance> {
        self.ids()
            .filter_map(|id| {
                let b = self.get(id).bucket()?;
                Some(BurstBalance { pacer: id, percent: self.get(id).balance_percent(t).unwrap_or(100.0), tokens: b.at(t), capacity: b.capacity })
            })
            .collect()
    }

    /// Sets every bucket's balance to `percent` of its capacity at `t`.
    pub fn set_balance_percent(&mut self, percent: f64, t: Secs) {
        for p in &mut self.pacers {
            if let Some(b) = &mut p.bucket {
                b.set_balance_percent(percent, t);
            }
        }
    }
}

/// A plan's costs remapped to a `PacerSet` and ordered as the I/O path
/// meets them: the host's and the path's limits first (one FIFO stage, in
/// issue order), then each member device on its own, so an I/O queued at
/// one busy member never holds up I/O to the others.
#[derive(Debug, Clone)]
pub struct Stages {
    entries: Vec<(PacerId, f64)>,
    /// Per (phase, class): the host entries, then the member groups.
    spans: Vec<(u32, u32, u32, u32)>,
    /// (member, first entry, end entry).
    groups: Vec<(u32, u32, u32)>,
    phases: usize,
}

impl Stages {
    /// `ids`: the plan's resources as pacers (`PacerSet::register`).
    pub fn new(plan: &PoolPlan, ids: &[PacerId]) -> Stages {
        let mut c = Stages { entries: Vec::new(), spans: Vec::new(), groups: Vec::new(), phases: plan.table.phases };
        for k in 0..plan.table.phases {
            for class in [IoClass::ReadHit, IoClass::ReadMiss, IoClass::Write] {
                let row = plan.table.costs(k, class);
                let start = c.entries.len() as u32;
                c.entries.extend(row.iter().filter(|(r, _)| plan.resources[*r as usize].member.is_none()).map(|&(r, cost)| (ids[r as usize], cost)));
                let host_end = c.entries.len() as u32;
                let g0 = c.groups.len() as u32;
                let mut members: Vec<u32> = row.iter().filter_map(|(r, _)| plan.resources[*r as usize].member).collect();
                members.sort_unstable();
                members.dedup();
                for m in members {
                    let gs = c.entries.len() as u32;
                    c.entries.extend(row.iter().filter(|(r, _)| plan.resources[*r as usize].member == Some(m)).map(|&(r, cost)| (ids[r as usize], cost)));
                    c.groups.push((m, gs, c.entries.len() as u32));
                }
                c.spans.push((start, host_end, g0, c.groups.len() as u32));
            }
        }
        c
    }

    /// Positions an I/O can take in the pool's layout.
    #[inline]
    pub fn phases(&self) -> usize {
        self.phases
    }

    /// The host and path stage of an I/O in `phase` of `class`.
    #[inline]
    pub fn host(&self, phase: usize, class: IoClass) -> &[(PacerId, f64)] {
        let (h0, h1, _, _) = self.spans[phase * 3 + class as usize];
        &self.entries[h0 as usize..h1 as usize]
    }

    /// The member stages of an I/O in `phase` of `class`: `(member, costs)`;
    /// empty when the host cache serves it.
    #[inline]
    pub fn members(&self, phase: usize, class: IoClass) -> impl Iterator<Item = (u32, &[(PacerId, f64)])> + '_ {
        let (_, _, g0, g1) = self.spans[phase * 3 + class as usize];
        self.groups[g0 as usize..g1 as usize].iter().map(move |&(m, e0, e1)| (m, &self.entries[e0 as usize..e1 as usize]))
    }

    /// Whether an I/O in `phase` of `class` reaches no member device.
    #[inline]
    pub fn no_members(&self, phase: usize, class: IoClass) -> bool {
        let (_, _, g0, g1) = self.spans[phase * 3 + class as usize];
        g0 == g1
    }
}

impl PacerSet {
    /// Admits one whole I/O: the host stage at `at`, then every member stage
    /// from there; returns the host admission and each member's admission
    /// (an emulator that does not split I/Os waits for the latest).
    pub fn admit(&mut self, stages: &Stages, phase: usize, class: IoClass, at: Secs, members: &mut Vec<(u32, Secs)>) -> Secs {
        members.clear();
        let a = self.pass(stages.host(phase, class), at);
        for (m, e) in stages.members(phase, class) {
            members.push((m, self.pass(e, a)));
        }
        a
    }
}
