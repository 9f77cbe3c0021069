//! The discrete-event engine. Each resource of the model (device, file
//! server, host limit, path) is a pacer of `storlab_model::pacing`, the
//! admission model every engine shares: an I/O is admitted when every
//! resource it costs can take it; it completes a service-time draw later. Closed-loop workers keep
//! `iodepth × numjobs` I/Os in flight; think time and `rate_iops` space
//! them out. Time is virtual: hours of cloud time run in seconds.

use crate::dist::ServiceTime;
use storlab_stats::Histogram;
use crate::rng::Rng;
use crate::queue::EventQueue;
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

    /// A deployment's state at the start: its buckets as the scenario's
    /// `buckets_at_start` says (full by default).
    pub fn for_deployment(dep: &storlab_model::Deployment) -> Self {
        DeploymentState { pacers: PacerSet::starting_at(dep.buckets_at_start_pct), now: Secs::ZERO }
    }
}

/// Service times of a pool's device, and of the host cache.
pub struct Latencies {
    pub read: ServiceTime,
    pub write: ServiceTime,
    pub hit: Option<ServiceTime>,
    /// A durable write (write + cache flush), where the device has one.
    pub flush: Option<ServiceTime>,
}

/// A completion's key after its time: the job and the slot, so ties resolve
/// the same way on every run.
type Event = (u32, u32);

#[inline]
fn event(job: usize, slot: usize) -> Event {
    (job as u32, slot as u32)
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
    /// I/Os issued and completed, measured or not (ramp included).
    pub issued: u64,
    pub events: u64,
    pub interrupted: bool,
    /// Open loop: arrivals turned away because a million I/Os were already
    /// waiting (the deployment could not keep up).
    pub dropped: u64,
    /// The window cut where one of the job's buckets emptied; empty where
    /// none did (`phases`).
    pub phases: Vec<PhaseOut>,
}

/// One stretch of a job's window between the moments a bucket emptied.
#[derive(Debug, Clone)]
pub struct PhaseOut {
    pub from_s: f64,
    pub to_s: f64,
    pub ios: u64,
    pub read_ios: u64,
    pub bytes: f64,
    pub hist: Histogram,
    /// The pacers whose buckets had emptied at `from_s` (none for the first).
    pub emptied: Vec<PacerId>,
}

/// The job's counters at the moment a bucket emptied.
#[derive(Debug, Clone)]
struct Snap {
    t: f64,
    ios: u64,
    read_ios: u64,
    bytes: f64,
    hist: Histogram,
    emptied: Vec<PacerId>,
}

/// The snapshots a window `[w0, w1]` is cut at, for the I/O engine's and
/// the database model's phases alike: cuts closer than `min_phase_s` to
/// the window's edges are dropped, and one closer than that to the cut
/// before joins it (`join`: what emptied adds to the earlier cut's).
pub(crate) fn keep_cuts<S>(w0: f64, w1: f64, snaps: Vec<S>, t: fn(&S) -> f64, join: fn(&mut S, S)) -> Vec<S> {
    let min = min_phase_s(w1 - w0);
    let mut cuts: Vec<S> = Vec::new();
    for sn in snaps {
        if t(&sn) < w0 + min || t(&sn) > w1 - min {
            continue;
        }
        match cuts.last_mut() {
            Some(last) if t(&sn) - t(last) < min => join(last, sn),
            _ => cuts.push(sn),
        }
    }
    cuts
}

/// The shortest stretch `phases` reports: 1 % of the window, at least 1 s.
/// A bucket refilled for a few seconds between two jobs (CrystalDiskMark's
/// interval) and emptied again at once is not a phase of its own.
pub fn min_phase_s(window_s: f64) -> f64 {
    (0.01 * window_s).max(1.0)
}

/// Cuts `[w0, w1]` at the snapshots: each stretch's counters are the
/// difference of the snapshots around it. Cuts closer than `min_phase_s`
/// to the window's edges or to the previous cut join it.
fn phases_of(w0: f64, w1: f64, snaps: Vec<Snap>, end: Snap) -> Vec<PhaseOut> {
    let cuts = keep_cuts(w0, w1, snaps, |s| s.t, |last, sn| last.emptied.extend(sn.emptied));
    if cuts.is_empty() {
        return Vec::new();
    }
    let start = Snap { t: w0, ios: 0, read_ios: 0, bytes: 0.0, hist: Histogram::default(), emptied: Vec::new() };
    let mut edges = vec![start];
    edges.extend(cuts);
    edges.push(Snap { t: w1, ..end });
    edges
        .windows(2)
        .map(|w| PhaseOut {
            from_s: w[0].t,
            to_s: w[1].t,
            ios: w[1].ios - w[0].ios,
            read_ios: w[1].read_ios - w[0].read_ios,
            bytes: w[1].bytes - w[0].bytes,
            hist: w[1].hist.since(&w[0].hist),
            emptied: w[0].emptied.clone(),
        })
        .collect()
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

/// One job's state while it runs.
struct Run<'a> {
    spec: &'a JobSpec<'a>,
    costs: Stages,
    window_start: f64,
    window_end: Option<f64>,
    byte_target: Option<f64>,
    iodepth: usize,
    open: bool,
    arrival_gap: Option<f64>,
    read_p: f64,
    random: bool,
    bs: f64,
    think: f64,
    rate_gap: Option<f64>,
    next_allowed: Vec<f64>,
    seq_phase: Vec<usize>,
    issued_at: Vec<f64>,
    class_of: Vec<u8>,
    free: Vec<u32>,
    bytes_issued: f64,
    last_done: f64,
    out: JobOutcome,
    /// Buckets of the job's pacers that emptied and are not yet cut at,
    /// in time order; the first one's time (infinite without one).
    pending: Vec<(f64, PacerId)>,
    next_cut: f64,
    known: Vec<PacerId>,
    snaps: Vec<Snap>,
}

impl<'a> Run<'a> {
    fn new(spec: &'a JobSpec<'a>, start: f64) -> Run<'a> {
        let job = spec.job;
        let ramp = job.ramp_time.as_secs_f64();
        let measured = job.runtime.map(|r| r.as_secs_f64() * f64::from(job.loops.max(1)));
        let window_start = start + ramp;
        let open = job.arrival_iops.is_some();
        let iodepth = job.iodepth.max(1) as usize;
        let slots = if open { 0 } else { iodepth * job.numjobs.max(1) as usize };
        let threads = job.numjobs.max(1) as usize;
        Run {
            spec,
            costs: Stages::new(spec.plan, spec.map),
            window_start,
            window_end: measured.map(|m| window_start + m),
            // Without a runtime, fio covers `size` once per job thread.
            byte_target: if measured.is_none() || !job.time_based { Some(job.size_bytes as f64 * f64::from(job.numjobs)) } else { None },
            iodepth,
            open,
            arrival_gap: job.arrival_iops.map(|r| 1.0 / r),
            read_p: f64::from(job.rw.read_percent(job.rwmixread)) / 100.0,
            random: job.rw.is_random(),
            bs: job.bs_bytes as f64,
            think: job.thinktime.as_secs_f64(),
            rate_gap: job.rate_iops.map(|r| 1.0 / r as f64),
            next_allowed: vec![start; threads],
            seq_phase: vec![0usize; threads],
            issued_at: vec![0.0f64; slots],
            class_of: vec![0u8; slots],
            free: Vec::new(),
            bytes_issued: 0.0,
            last_done: start,
            out: JobOutcome {
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
                issued: 0,
                events: 0,
                interrupted: false,
                dropped: 0,
                phases: Vec::new(),
            },
            pending: Vec::new(),
            next_cut: f64::INFINITY,
            known: Vec::new(),
            snaps: Vec::new(),
        }
    }

    /// Notes the job's pacers that emptied since it last looked.
    fn note_empties(&mut self, pacers: &PacerSet) {
        // The bucket's own pacer: those linked to it fall to their
        // baseline at the same moment and tell nothing more.
        for &g in self.spec.map {
            if let Some(t) = pacers.get(g).emptied_at.filter(|_| pacers.get(g).bucket().is_some()) {
                if !self.known.contains(&g) {
                    self.known.push(g);
                    self.pending.push((t.0, g));
                }
            }
        }
        self.pending.sort_by(|a, b| a.0.total_cmp(&b.0));
        self.next_cut = self.pending.first().map_or(f64::INFINITY, |p| p.0);
    }

    /// Takes the counters at the next cut (before any completion after it).
    fn cut(&mut self) {
        let t = self.next_cut;
        let emptied: Vec<PacerId> = self.pending.iter().take_while(|p| p.0 <= t).map(|p| p.1).collect();
        self.pending.drain(..emptied.len());
        let mut hist = self.out.read_hist.clone();
        hist.merge(&self.out.write_hist);
        self.snaps.push(Snap { t, ios: self.out.ios, read_ios: self.out.read_ios, bytes: self.out.bytes, hist, emptied });
        self.next_cut = self.pending.first().map_or(f64::INFINITY, |p| p.0);
    }

    fn slots(&self) -> usize {
        self.issued_at.len()
    }

    fn bytes_done(&self) -> bool {
        self.byte_target.is_some_and(|b| self.bytes_issued >= b)
    }

    /// Issues the next I/O of `slot` at `t0` (or later, under `rate_iops`)
    /// through the pacers; returns when it completes.
    #[inline]
    fn issue(&mut self, st: &mut DeploymentState, rng: &mut Rng, slot: usize, t0: f64) -> f64 {
        let spec = self.spec;
        let thread = if self.open { 0 } else { slot / self.iodepth };
        let mut t = t0;
        if let Some(gap) = self.rate_gap {
            t = t.max(self.next_allowed[thread]);
            self.next_allowed[thread] = t + gap;
        }
        let read_p = self.read_p;
        let read = read_p >= 1.0 || (read_p > 0.0 && rng.f64() < read_p);
        let class = if !read {
            IoClass::Write
        } else if spec.hit_ratio > 0.0 && (spec.hit_ratio >= 1.0 || rng.f64() < spec.hit_ratio) {
            IoClass::ReadHit
        } else {
            IoClass::ReadMiss
        };
        let phases = self.costs.phases();
        let phase = if phases <= 1 {
            0
        } else if self.random {
            rng.below(phases as u64) as usize
        } else {
            let p = self.seq_phase[thread];
            self.seq_phase[thread] = (p + 1) % phases;
            p
        };
        // The host and path stage, in issue order.
        let a = st.pacers.pass(self.costs.host(phase, class), Secs(t)).0;
        // Each member device on its own; the I/O completes when its slowest
        // piece does (fork-join).
        let mut done = a;
        if self.costs.no_members(phase, class) {
            done = a + spec.lat.hit.as_ref().unwrap_or(&spec.lat.read).draw(rng);
        }
        let dist = if class == IoClass::Write { &spec.lat.write } else { &spec.lat.read };
        // Each member gets its piece of the I/O.
        let piece = self.bs as f64 / self.costs.members(phase, class).count().max(1) as f64;
        for (_, e) in self.costs.members(phase, class) {
            let am = st.pacers.pass(e, Secs(a)).0;
            done = done.max(am + dist.draw_sized(rng, piece));
        }
        self.issued_at[slot] = t;
        self.class_of[slot] = class as u8;
        self.bytes_issued += self.bs;
        self.out.issued += 1;
        done
    }
}

/// Runs one job on the deployment's current state (`run_jobs` with one).
pub fn run_job<S: Sink>(st: &mut DeploymentState, spec: &JobSpec, rng: &mut Rng, sink: &mut S, progress: &mut dyn FnMut(Secs) -> bool) -> JobOutcome {
    run_jobs(st, std::slice::from_ref(spec), std::slice::from_mut(rng), sink, progress).pop().expect("one job")
}

/// Runs several jobs at once on the deployment's current state, as fio runs
/// the jobs of a file between two `stonewall`s: all start now, their I/O
/// competes for the same pacers (caps and buckets), each stops on its own
/// terms; `rngs[i]` draws for `specs[i]`. Feeds completions to `sink`.
/// `progress` is called now and then with the simulated time reached;
/// returning false stops every job (what they measured is kept).
pub fn run_jobs<S: Sink>(
    st: &mut DeploymentState,
    specs: &[JobSpec],
    rngs: &mut [Rng],
    sink: &mut S,
    progress: &mut dyn FnMut(Secs) -> bool,
) -> Vec<JobOutcome> {
    assert_eq!(specs.len(), rngs.len());
    for spec in specs {
        st.pacers.reset_stats(spec.map);
    }
    let start = st.now.0;
    let mut runs: Vec<Run> = specs.iter().map(|s| Run::new(s, start)).collect();
    let mut heap: EventQueue<Event> = EventQueue::with_capacity(runs.iter().map(|r| r.slots() + 1).sum());
    let mut stopped = false;
    let mut events: u64 = 0;
    let mut empties = st.pacers.empties;

    for (j, r) in runs.iter_mut().enumerate() {
        if r.open {
            heap.push(Secs(start), event(j, ARRIVAL as usize));
        }
        for slot in 0..r.slots() {
            if r.bytes_done() {
                break;
            }
            let done = r.issue(st, &mut rngs[j], slot, start);
            heap.push(Secs(done), event(j, slot));
        }
    }
    // The next completion is always the heap's top; the slot's next I/O
    // usually replaces it in place (one sift-down instead of a pop and a push).
    while let Some((Secs(done), (job, slot))) = heap.peek() {
        // A bucket emptied at an admission made since the last event (no
        // earlier than that event): every job that draws on it is cut there.
        if st.pacers.empties != empties {
            empties = st.pacers.empties;
            for r in runs.iter_mut() {
                r.note_empties(&st.pacers);
            }
        }
        let j = job as usize;
        let r = &mut runs[j];
        let rng = &mut rngs[j];
        if slot == ARRIVAL {
            // Open loop: this arrival's I/O, and the next arrival.
            let over = stopped || r.window_end.is_some_and(|e| done >= e) || r.bytes_done();
            if over {
                heap.pop();
                continue;
            }
            let next = done - rng.f64().max(f64::MIN_POSITIVE).ln() * r.arrival_gap.unwrap_or(0.0);
            heap.replace_top(Secs(next), event(j, ARRIVAL as usize));
            let s = match r.free.pop() {
                Some(s) => Some(s as usize),
                None if r.issued_at.len() < MAX_OPEN_IOS => {
                    r.issued_at.push(0.0);
                    r.class_of.push(0);
                    Some(r.issued_at.len() - 1)
                }
                None => None,
            };
            match s {
                Some(s) => {
                    let t = r.issue(st, rng, s, done);
                    heap.push(Secs(t), event(j, s));
                }
                None => r.out.dropped += 1,
            }
            continue;
        }
        let slot = slot as usize;
        while done >= r.next_cut {
            r.cut();
        }
        r.out.events += 1;
        events += 1;
        sink.advance(Secs(done), &st.pacers);
        let lat = done - r.issued_at[slot];
        let read = r.class_of[slot] != IoClass::Write as u8;
        sink.complete(r.spec.pool_index, read, r.bs, lat);
        if done >= r.window_start && r.window_end.map_or(true, |e| done <= e) {
            let out = &mut r.out;
            out.ios += 1;
            out.bytes += r.bs;
            out.total_latency_s += lat;
            if read {
                out.read_ios += 1;
                out.read_hist.record(lat);
            } else {
                out.write_hist.record(lat);
            }
        }
        r.last_done = r.last_done.max(done);
        // Polled every 2^16 events (a few milliseconds), so a stop is seen
        // well within a second.
        if events & 0xFFFF == 0 && !progress(Secs(done)) {
            stopped = true;
            for r in runs.iter_mut() {
                r.out.interrupted = true;
            }
        }
        let r = &mut runs[j];
        let next_t = done + r.think;
        let over_time = r.window_end.is_some_and(|e| next_t >= e);
        if r.open || stopped || over_time || r.bytes_done() {
            if r.open {
                r.free.push(slot as u32);
            }
            heap.pop();
            continue;
        }
        let t = r.issue(st, rng, slot, next_t);
        heap.replace_top(Secs(t), event(j, slot));
    }
    let mut end = start;
    let outs = runs
        .into_iter()
        .map(|r| {
            let mut out = r.out;
            out.window_s = match r.window_end {
                Some(e) if !out.interrupted => e - r.window_start,
                _ => (r.last_done - r.window_start).max(0.0),
            };
            out.top_wait = r
                .spec
                .map
                .iter()
                .map(|&g| (g, st.pacers.get(g).wait_s))
                .filter(|(_, w)| *w > 0.0)
                .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
            end = end.max(r.last_done.max(r.window_end.unwrap_or(r.last_done)));
            out.hist.merge(&out.read_hist);
            out.hist.merge(&out.write_hist);
            let w0 = r.window_start;
            let end = Snap { t: 0.0, ios: out.ios, read_ios: out.read_ios, bytes: out.bytes, hist: out.hist.clone(), emptied: Vec::new() };
            out.phases = phases_of(w0, w0 + out.window_s, r.snaps, end);
            out
        })
        .collect();
    st.now = Secs(end);
    outs
}
