//! The discrete-event engine. Each resource of the model (device, file
//! server, host limit, path) is a pacer of `storlab_model::pacing`, the
//! admission model every engine shares: an I/O is admitted when every
//! resource it costs can take it; it completes a service-time draw later. Closed-loop workers keep
//! `iodepth × numjobs` I/Os in flight; think time and `rate_iops` space
//! them out. Time is virtual: hours of cloud time run in seconds.

use crate::dist::ServiceTime;
use storlab_stats::Histogram;
use crate::rng::Rng;
use std::collections::BinaryHeap;
use storlab_model::pacing::{PacerId, PacerSet, Secs, Stages};
use storlab_model::resources::{IoClass, PoolPlan};
use storlab_workload::Job;

/// Where the engine reports what happened: completions, and simulated time
/// passing (the CloudWatch-style series of `series`, or anything else that
/// counts). The engine owns this role; a sink never calls the engine.
pub trait Sink {
    /// Simulated time reached `t`; `pacers` holds the buckets' state.
    fn advance(&mut self, t: Secs, pacers: &PacerSet);
    /// An I/O of `bytes` on pool `pool` completed after `latency_s`.
    fn complete(&mut self, pool: usize, read: bool, bytes: f64, latency_s: f64);
}

/// The state of one deployment across the jobs run on it: buckets drain in
/// one job and are still drained in the next.
#[derive(Default)]
pub struct DeploymentState {
    pub pacers: PacerSet,
    pub now: Secs,
}

impl DeploymentState {
    pub fn new() -> Self {
        Self::default()
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
    /// The pacer with the most queueing, and the total queueing and
    /// latency, for "what bound it".
    pub top_wait: Option<(PacerId, f64)>,
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
    /// The plan's resources as the deployment's pacers (`PacerSet::register`).
    pub map: &'a [PacerId],
    pub lat: &'a Latencies,
    pub hit_ratio: f64,
}

/// Runs one job on the deployment's current state, feeding per-period
/// counters to `sink`. `progress` is called now and then with the simulated
/// time reached; returning false stops the job (what it measured is kept).
pub fn run_job<S: Sink>(
    st: &mut DeploymentState,
    spec: &JobSpec,
    rng: &mut Rng,
    sink: &mut S,
    progress: &mut dyn FnMut(Secs) -> bool,
) -> JobOutcome {
    let job = spec.job;
    let map = spec.map;
    let costs = Stages::new(spec.plan, map);
    st.pacers.reset_stats(map);
    let start = st.now.0;
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
        let phases = costs.phases();
        let phase = if phases <= 1 {
            0
        } else if random {
            rng.below(phases as u64) as usize
        } else {
            let p = seq_phase[thread];
            seq_phase[thread] = (p + 1) % phases;
            p
        };
        // The host and path stage, in issue order.
        let a = st.pacers.pass(costs.host(phase, class), Secs(t)).0;
        // Each member device on its own; the I/O completes when its slowest
        // piece does (fork-join).
        let mut done = a;
        if costs.no_members(phase, class) {
            done = a + spec.lat.hit.as_ref().unwrap_or(&spec.lat.read).draw(rng);
        }
        let dist = if class == IoClass::Write { &spec.lat.write } else { &spec.lat.read };
        for (_, e) in costs.members(phase, class) {
            let am = st.pacers.pass(e, Secs(a)).0;
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
        sink.advance(Secs(done), &st.pacers);
        let lat = done - issued_at[slot];
        let read = class_of[slot] != IoClass::Write as u8;
        sink.complete(spec.pool_index, read, bs, lat);
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
        if out.events & 0xF_FFFF == 0 && !progress(Secs(done)) {
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
        .map(|&g| (g, st.pacers.get(g).wait_s))
        .filter(|(_, w)| *w > 0.0)
        .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
    st.now = Secs(last_done.max(window_end.unwrap_or(last_done)));
    out.hist.merge(&out.read_hist);
    out.hist.merge(&out.write_hist);
    out
}
