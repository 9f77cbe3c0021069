//! The discrete-event engine. Each resource of the model (device, file
//! server, host limit, path) is a pacer: it admits work at its peak rate
//! while its bucket holds tokens and at its refill (baseline) rate once it
//! is empty, like a token bucket with a peak-rate limiter (tc `tbf` with
//! `peakrate`). An I/O is admitted when every resource it costs can take
//! it; it completes a service-time draw later. Closed-loop workers keep
//! `iodepth × numjobs` I/Os in flight; think time and `rate_iops` space
//! them out. Time is virtual: hours of cloud time run in seconds.

use crate::dist::ServiceTime;
use storlab_stats::Histogram;
use crate::rng::Rng;
use crate::series::SeriesSink;
use std::collections::{BinaryHeap, HashMap};
use storlab_model::device::Cap;
use storlab_model::resources::{IoClass, PoolPlan, Resource};
use storlab_workload::Job;

#[derive(Debug, Clone)]
struct Tokens {
    capacity: f64,
    refill_per_s: f64,
    balance: f64,
    last: f64,
}

impl Tokens {
    #[inline]
    fn at(&self, t: f64) -> f64 {
        (self.balance + self.refill_per_s * (t - self.last).max(0.0)).min(self.capacity)
    }
}

/// One resource's state while a deployment runs.
#[derive(Debug, Clone)]
pub struct Pacer {
    free_at: f64,
    inv_peak: f64,
    inv_base: f64,
    tokens: Option<Tokens>,
    linked: Option<usize>,
    /// Queueing this resource imposed in the current job (for "what bound it").
    wait: f64,
    /// Time the current job ran this resource at its peak rate and at its
    /// baseline (an empty bucket, or a linked bucket empty), to say which bound.
    at_peak: f64,
    at_base: f64,
}

fn inv(rate: f64) -> f64 {
    if rate.is_finite() && rate > 0.0 {
        1.0 / rate
    } else {
        0.0
    }
}

impl Pacer {
    fn new(r: &Resource) -> Pacer {
        let Cap { baseline, peak, .. } = r.cap;
        Pacer {
            free_at: 0.0,
            inv_peak: inv(peak),
            inv_base: inv(baseline),
            tokens: r.bucket.as_ref().map(|b| Tokens { capacity: b.capacity, refill_per_s: b.refill_per_s, balance: b.balance, last: 0.0 }),
            linked: None,
            wait: 0.0,
            at_peak: 0.0,
            at_base: 0.0,
        }
    }

    /// Whether the job ran at this resource's peak more often than at its
    /// baseline: the state its binding is reported in.
    pub fn mostly_at_peak(&self) -> bool {
        self.at_peak >= self.at_base
    }

    /// Percent of the bucket left at `t` (CloudWatch BurstBalance).
    pub fn has_credit(&self, t: f64) -> bool {
        self.tokens.as_ref().map_or(true, |b| b.at(t) > 0.0)
    }

    pub fn linked(&self) -> Option<usize> {
        self.linked
    }

    pub fn balance_percent(&self, t: f64) -> Option<f64> {
        self.tokens.as_ref().map(|b| if b.capacity > 0.0 { 100.0 * b.at(t) / b.capacity } else { 100.0 })
    }
}

/// The state of one deployment across the jobs run on it: buckets drain in
/// one job and are still drained in the next.
pub struct DeploymentState {
    pub pacers: Vec<Pacer>,
    keys: HashMap<String, usize>,
    pub now: f64,
}

impl DeploymentState {
    pub fn new() -> Self {
        DeploymentState { pacers: Vec::new(), keys: HashMap::new(), now: 0.0 }
    }

    /// Global pacer indices for a plan's resources: a pool's own resources
    /// are keyed by pool, the host's are shared by every pool.
    pub fn map(&mut self, pool_index: usize, plan: &PoolPlan) -> Vec<usize> {
        let mut out = Vec::with_capacity(plan.resources.len());
        for (i, r) in plan.resources.iter().enumerate() {
            let key = if r.member.is_some() || r.owner.starts_with("path ") {
                format!("pool{pool_index}/{i}")
            } else {
                format!("{}/{}{}{:?}", r.owner, r.pre, r.post, r.unit)
            };
            let idx = match self.keys.get(&key) {
                Some(&g) => g,
                None => {
                    self.pacers.push(Pacer::new(r));
                    self.keys.insert(key, self.pacers.len() - 1);
                    self.pacers.len() - 1
                }
            };
            out.push(idx);
        }
        for (i, r) in plan.resources.iter().enumerate() {
            if let Some(l) = r.linked {
                self.pacers[out[i]].linked = Some(out[l]);
            }
        }
        out
    }

    /// The earliest admission at or after `t`, and whether the bucket (not
    /// the peak rate) made the I/O wait.
    #[inline]
    fn earliest(&self, r: usize, cost: f64, t: f64) -> (f64, bool) {
        let p = &self.pacers[r];
        let mut e = t.max(p.free_at);
        let mut empty = false;
        if let Some(b) = &p.tokens {
            let bal = b.at(e);
            if bal < cost {
                e += if b.refill_per_s > 0.0 { (cost - bal) / b.refill_per_s } else { f64::INFINITY };
                empty = true;
            }
        }
        (e, empty)
    }

    /// Passes an I/O arriving at `t` through one stage's resources in turn
    /// (each admits it when it can take it) and returns when it left.
    #[inline]
    pub fn pass(&mut self, entries: &[(u32, f64)], t: f64) -> f64 {
        let mut a = t;
        for &(r, c) in entries {
            let (e, empty) = self.earliest(r as usize, c, a);
            if e > a {
                self.pacers[r as usize].wait += e - a;
                a = e;
            }
            self.commit(r as usize, c, a, empty);
        }
        a
    }

    #[inline]
    fn commit(&mut self, r: usize, cost: f64, a: f64, empty: bool) {
        let (inv, at_base) = match self.pacers[r].linked {
            Some(l) => {
                let lp = &self.pacers[l];
                if lp.tokens.as_ref().map_or(true, |b| b.at(a) > 0.0) {
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
            p.at_base += cost * p.inv_base;
        } else {
            p.at_peak += cost * inv;
        }
        if let Some(b) = &mut p.tokens {
            b.balance = (b.at(a) - cost).max(0.0);
            b.last = b.last.max(a);
        }
        p.free_at = a + cost * inv;
    }
}

impl Default for DeploymentState {
    fn default() -> Self {
        Self::new()
    }
}

/// Costs remapped to the deployment's global pacers and ordered as the
/// I/O path meets them: the host's and the path's limits first (one FIFO
/// stage, in issue order), then each member device on its own, so an I/O
/// queued at one busy member never holds up I/O to the others.
struct Costs {
    entries: Vec<(u32, f64)>,
    /// Per (phase, class): the host entries, then the member groups.
    spans: Vec<(u32, u32, u32, u32)>,
    /// (member, first entry, end entry).
    groups: Vec<(u32, u32, u32)>,
    phases: usize,
}

impl Costs {
    fn new(plan: &PoolPlan, map: &[usize]) -> Costs {
        let mut c = Costs { entries: Vec::new(), spans: Vec::new(), groups: Vec::new(), phases: plan.table.phases };
        for k in 0..plan.table.phases {
            for class in [IoClass::ReadHit, IoClass::ReadMiss, IoClass::Write] {
                let row = plan.table.costs(k, class);
                let start = c.entries.len() as u32;
                c.entries.extend(row.iter().filter(|(r, _)| plan.resources[*r as usize].member.is_none()).map(|&(r, cost)| (map[r as usize] as u32, cost)));
                let host_end = c.entries.len() as u32;
                let g0 = c.groups.len() as u32;
                let mut members: Vec<u32> = row.iter().filter_map(|(r, _)| plan.resources[*r as usize].member).collect();
                members.sort_unstable();
                members.dedup();
                for m in members {
                    let gs = c.entries.len() as u32;
                    c.entries.extend(
                        row.iter().filter(|(r, _)| plan.resources[*r as usize].member == Some(m)).map(|&(r, cost)| (map[r as usize] as u32, cost)),
                    );
                    c.groups.push((m, gs, c.entries.len() as u32));
                }
                c.spans.push((start, host_end, g0, c.groups.len() as u32));
            }
        }
        c
    }
}

/// Service times of a pool's device, and of the host cache.
pub struct Latencies {
    pub read: ServiceTime,
    pub write: ServiceTime,
    pub hit: Option<ServiceTime>,
}

/// A completion: the time's bit pattern (for non-negative f64 it orders as
/// the number does, and integer compares are cheaper), then the slot, so
/// ties resolve the same way on every run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    t_bits: u64,
    slot: u32,
}

impl Event {
    #[inline]
    fn new(t: f64, slot: usize) -> Event {
        debug_assert!(t >= 0.0);
        Event { t_bits: t.to_bits(), slot: slot as u32 }
    }
}

/// What one job measured.
#[derive(Debug, Clone)]
pub struct JobOutcome {
    pub start_s: f64,
    pub window_s: f64,
    pub ios: u64,
    pub read_ios: u64,
    pub bytes: f64,
    pub hist: Histogram,
    pub read_hist: Histogram,
    pub write_hist: Histogram,
    /// Global pacer with the most queueing, and the total queueing and
    /// latency, for "what bound it".
    pub top_wait: Option<(usize, f64)>,
    pub total_latency_s: f64,
    pub events: u64,
    pub interrupted: bool,
    /// Open loop: arrivals turned away because a million I/Os were already
    /// waiting (the deployment could not keep up).
    pub dropped: u64,
}

/// The slot number of an arrival event (open loop).
const ARRIVAL: u32 = u32::MAX;
/// Most I/Os an open-loop job keeps waiting before it turns arrivals away.
pub const MAX_OPEN_IOS: usize = 1 << 20;

pub struct JobSpec<'a> {
    pub job: &'a Job,
    pub pool_index: usize,
    pub plan: &'a PoolPlan,
    /// The plan's resources as the deployment's pacers (`DeploymentState::map`).
    pub map: &'a [usize],
    pub lat: &'a Latencies,
    pub hit_ratio: f64,
}

/// Runs one job on the deployment's current state, feeding per-period
/// counters to `sink`. `progress` is called now and then with the simulated
/// time reached; returning false stops the job (what it measured is kept).
pub fn run_job(
    st: &mut DeploymentState,
    spec: &JobSpec,
    rng: &mut Rng,
    sink: &mut SeriesSink,
    progress: &mut dyn FnMut(f64) -> bool,
) -> JobOutcome {
    let job = spec.job;
    let map = spec.map;
    let costs = Costs::new(spec.plan, map);
    for &g in map {
        let p = &mut st.pacers[g];
        p.wait = 0.0;
        p.at_peak = 0.0;
        p.at_base = 0.0;
    }
    let start = st.now;
    let ramp = job.ramp_time.as_secs_f64();
    let measured = job.runtime.map(|r| r.as_secs_f64() * f64::from(job.loops.max(1)));
    let window_start = start + ramp;
    let window_end = measured.map(|m| window_start + m);
    // Without a runtime, fio covers `size` once per job thread.
    let byte_target = if measured.is_none() || !job.time_based { Some(job.size_bytes as f64 * f64::from(job.numjobs)) } else { None };

    let iodepth = job.iodepth.max(1) as usize;
    let open = job.arrival_iops.is_some();
    let slots = if open { 0 } else { iodepth * job.numjobs.max(1) as usize };
    let arrival_gap = job.arrival_iops.map(|r| 1.0 / r);
    let read_p = f64::from(job.rw.read_percent(job.rwmixread)) / 100.0;
    let random = job.rw.is_random();
    let bs = job.bs_bytes as f64;
    let think = job.thinktime.as_secs_f64();
    let rate_gap = job.rate_iops.map(|r| 1.0 / r as f64);
    let mut next_allowed = vec![start; job.numjobs.max(1) as usize];
    let mut seq_phase = vec![0usize; job.numjobs.max(1) as usize];
    let mut issued_at = vec![0.0f64; slots];
    let mut class_of = vec![0u8; slots];
    let mut free: Vec<u32> = Vec::new();
    let mut heap: BinaryHeap<std::cmp::Reverse<Event>> = BinaryHeap::with_capacity(slots + 1);
    let mut out = JobOutcome {
        start_s: start,
        window_s: 0.0,
        ios: 0,
        read_ios: 0,
        bytes: 0.0,
        hist: Histogram::default(),
        read_hist: Histogram::default(),
        write_hist: Histogram::default(),
        top_wait: None,
        total_latency_s: 0.0,
        events: 0,
        interrupted: false,
        dropped: 0,
    };
    let mut bytes_issued = 0.0;
    let mut last_done = start;
    let mut stopped = false;

    let issue = |st: &mut DeploymentState, rng: &mut Rng, slot: usize, t0: f64, issued_at: &mut [f64], class_of: &mut [u8], next_allowed: &mut [f64], seq_phase: &mut [usize]| -> f64 {
        let thread = if open { 0 } else { slot / iodepth };
        let mut t = t0;
        if let Some(gap) = rate_gap {
            t = t.max(next_allowed[thread]);
            next_allowed[thread] = t + gap;
        }
        let read = read_p >= 1.0 || (read_p > 0.0 && rng.f64() < read_p);
        let class = if !read {
            IoClass::Write
        } else if spec.hit_ratio > 0.0 && (spec.hit_ratio >= 1.0 || rng.f64() < spec.hit_ratio) {
            IoClass::ReadHit
        } else {
            IoClass::ReadMiss
        };
        let phase = if costs.phases <= 1 {
            0
        } else if random {
            rng.below(costs.phases as u64) as usize
        } else {
            let p = seq_phase[thread];
            seq_phase[thread] = (p + 1) % costs.phases;
            p
        };
        let (h0, h1, g0, g1) = costs.spans[phase * 3 + class as usize];
        // The host and path stage, in issue order.
        let a = st.pass(&costs.entries[h0 as usize..h1 as usize], t);
        // Each member device on its own; the I/O completes when its slowest
        // piece does (fork-join).
        let mut done = a;
        if g0 == g1 {
            done = a + spec.lat.hit.as_ref().unwrap_or(&spec.lat.read).draw(rng);
        }
        let dist = if class == IoClass::Write { &spec.lat.write } else { &spec.lat.read };
        for &(_, e0, e1) in &costs.groups[g0 as usize..g1 as usize] {
            let am = st.pass(&costs.entries[e0 as usize..e1 as usize], a);
            done = done.max(am + dist.draw(rng));
        }
        issued_at[slot] = t;
        class_of[slot] = class as u8;
        done
    };

    if open {
        heap.push(std::cmp::Reverse(Event::new(start, ARRIVAL as usize)));
    }
    for slot in 0..slots {
        if byte_target.is_some_and(|b| bytes_issued >= b) {
            break;
        }
        let done = issue(st, rng, slot, start, &mut issued_at, &mut class_of, &mut next_allowed, &mut seq_phase);
        bytes_issued += bs;
        heap.push(std::cmp::Reverse(Event::new(done, slot)));
    }
    sink.start_job(spec.pool_index);
    // The next completion is always the heap's top; the slot's next I/O
    // usually replaces it in place (one sift-down instead of a pop and a push).
    while let Some(&std::cmp::Reverse(Event { t_bits, slot })) = heap.peek() {
        let done = f64::from_bits(t_bits);
        if slot == ARRIVAL {
            // Open loop: this arrival's I/O, and the next arrival.
            let over = stopped || window_end.is_some_and(|e| done >= e) || byte_target.is_some_and(|b| bytes_issued >= b);
            if over {
                heap.pop();
                continue;
            }
            let next = done - rng.f64().max(f64::MIN_POSITIVE).ln() * arrival_gap.unwrap_or(0.0);
            if let Some(mut top) = heap.peek_mut() {
                *top = std::cmp::Reverse(Event::new(next, ARRIVAL as usize));
            }
            let s = match free.pop() {
                Some(s) => Some(s as usize),
                None if issued_at.len() < MAX_OPEN_IOS => {
                    issued_at.push(0.0);
                    class_of.push(0);
                    Some(issued_at.len() - 1)
                }
                None => None,
            };
            match s {
                Some(s) => {
                    let t = issue(st, rng, s, done, &mut issued_at, &mut class_of, &mut next_allowed, &mut seq_phase);
                    bytes_issued += bs;
                    heap.push(std::cmp::Reverse(Event::new(t, s)));
                }
                None => out.dropped += 1,
            }
            continue;
        }
        let slot = slot as usize;
        out.events += 1;
        sink.advance(done, st);
        let lat = done - issued_at[slot];
        let read = class_of[slot] != IoClass::Write as u8;
        sink.add(read, bs, lat);
        if done >= window_start && window_end.map_or(true, |e| done <= e) {
            out.ios += 1;
            out.bytes += bs;
            out.total_latency_s += lat;
            if read {
                out.read_ios += 1;
                out.read_hist.record(lat);
            } else {
                out.write_hist.record(lat);
            }
        }
        last_done = last_done.max(done);
        if out.events & 0xF_FFFF == 0 && !progress(done) {
            stopped = true;
            out.interrupted = true;
        }
        let next_t = done + think;
        let over_time = window_end.is_some_and(|e| next_t >= e);
        let over_bytes = byte_target.is_some_and(|b| bytes_issued >= b);
        if open || stopped || over_time || over_bytes {
            if open {
                free.push(slot as u32);
            }
            heap.pop();
            continue;
        }
        let t = issue(st, rng, slot, next_t, &mut issued_at, &mut class_of, &mut next_allowed, &mut seq_phase);
        bytes_issued += bs;
        if let Some(mut top) = heap.peek_mut() {
            *top = std::cmp::Reverse(Event::new(t, slot));
        }
    }
    out.window_s = match window_end {
        Some(e) if !out.interrupted => e - window_start,
        _ => (last_done - window_start).max(0.0),
    };
    out.top_wait = map
        .iter()
        .map(|&g| (g, st.pacers[g].wait))
        .filter(|(_, w)| *w > 0.0)
        .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
    st.now = last_done.max(window_end.unwrap_or(last_done));
    out.hist.merge(&out.read_hist);
    out.hist.merge(&out.write_hist);
    out
}
