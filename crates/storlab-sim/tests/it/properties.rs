//! Properties of the simulator over random deployments from the shipped
//! catalog: a job never runs above the ceiling `storlab limits` reports,
//! and every I/O issued completes exactly once.

use crate::common;
#[path = "../../../storlab-model/tests/common/gen.rs"]
mod gen;

use std::collections::HashMap;
use storlab_model::deployment::resolve_all;
use storlab_model::limits::PATTERNS;
use storlab_model::pacing::{PacerSet, Secs};
use storlab_model::resources::PoolPlan;
use storlab_model::scenario::ScenarioFile;
use storlab_sim::engine::{run_jobs, DeploymentState, JobSpec, Sink};
use storlab_sim::rng::Rng;
use storlab_workload::{Job, Pattern};

/// 24 random deployments, each running one of the four patterns of
/// `storlab limits` with plenty in flight for 3 s (every bucket still far
/// from empty): the result stays at or below the ceiling with buckets full.
#[test]
fn a_simulated_job_never_exceeds_the_analytic_ceiling() {
    let cat = common::catalog();
    let mut g = gen::Gen(11);
    let configs = gen::scenario(&cat, &mut g, 24);
    let mut checked = 0;
    for (n, config) in configs.split("\n\n").filter(|c| !c.trim().is_empty()).enumerate() {
        let (key, pattern, bytes) = PATTERNS[n % 4];
        let (rw, bs, depth) = match (pattern.read, pattern.sequential) {
            (true, false) => ("randread", "4k", 64),
            (false, false) => ("randwrite", "4k", 64),
            (true, true) => ("read", "1m", 16),
            (false, true) => ("write", "1m", 16),
        };
        let text = format!("[workload]\nduration_s = 3\n[[workload.jobs]]\nrw = \"{rw}\"\nbs = \"{bs}\"\niodepth = {depth}\nnumjobs = 4\n{config}");
        let limits = storlab_model::limits(&cat, "s.toml", &text).unwrap();
        let ceiling = limits.configs[0].ceilings[key];
        let rec = common::simulate(&cat, &text);
        let r = &rec.results[0];
        let got = if bytes { r.bw_bytes_s } else { r.iops };
        // I/Os are whole: a pacer admits the first at t = 0, so over the
        // 3 s one I/O more than the rate allows may complete (1 MiB at
        // 48 MB/s: 138 MiB where 48 MB/s × 3 s is 137.3).
        let one = if bytes { if bs == "1m" { 1048576.0 } else { 4096.0 } } else { 1.0 } / 3.0;
        assert!(got <= ceiling * 1.001 + one, "{}: {rw} {bs}: {got} above the ceiling {ceiling}\n{config}", r.config);
        assert!(got > 0.0, "{config}");
        checked += 1;
    }
    assert_eq!(checked, 24);
}

/// Counts completions per pool.
#[derive(Default)]
struct Count {
    by_pool: HashMap<usize, u64>,
    last: f64,
}

impl Sink for Count {
    fn advance(&mut self, t: Secs, _: &PacerSet) {
        // Completions come in time order.
        assert!(t.0 >= self.last, "time went back from {} to {}", self.last, t.0);
        self.last = t.0;
    }
    fn complete(&mut self, pool: usize, _: bool, _: f64, latency_s: f64) {
        assert!(latency_s >= 0.0);
        *self.by_pool.entry(pool).or_default() += 1;
    }
}

/// Three jobs at once on random deployments — a closed loop, an open loop
/// offered 300,000 IOPS (more than most deployments take: it queues), and one that stops after covering its size: every I/O
/// issued completes exactly once (completions = issues, per job and in the
/// sink), however each job ends.
#[test]
fn every_io_issued_completes_exactly_once() {
    let cat = common::catalog();
    let mut g = gen::Gen(23);
    let text = gen::scenario(&cat, &mut g, 8);
    let sc = ScenarioFile::from_toml("gen.toml", &text).unwrap();
    for dep in resolve_all(&cat, "gen.toml", &sc).unwrap() {
        let pool = &dep.pools[0];
        let mut closed = Job::new("closed", Pattern::RandRw);
        closed.iodepth = 1 + g.below(32) as u32;
        closed.numjobs = 1 + g.below(4) as u32;
        closed.runtime = Some(std::time::Duration::from_millis(500 + g.below(1500) as u64));
        closed.time_based = true;
        let mut open = Job::new("open", Pattern::RandRead);
        open.arrival_iops = Some(3e5);
        open.runtime = Some(std::time::Duration::from_millis(500));
        open.time_based = true;
        let mut sized = Job::new("sized", Pattern::Write);
        sized.bs_bytes = 65536;
        sized.size_bytes = 64 << 20;
        sized.iodepth = 8;
        let jobs = [closed, open, sized];
        let mut st = DeploymentState::new();
        let plans: Vec<PoolPlan> = jobs.iter().map(|j| PoolPlan::new(&dep, pool, j.bs_bytes as f64, !j.rw.is_random())).collect();
        let maps: Vec<_> = plans.iter().map(|p| st.pacers.register(0, p)).collect();
        let lat = storlab_sim::latencies(&cat, &dep, pool, &mut Vec::new()).unwrap();
        let specs: Vec<JobSpec> = (0..3).map(|i| JobSpec { job: &jobs[i], pool_index: 0, plan: &plans[i], map: &maps[i], lat: &lat, hit_ratio: if plans[i].cached { 0.5 } else { 0.0 } }).collect();
        let mut rngs: Vec<Rng> = (0..3).map(|i| Rng::new(i + 1)).collect();
        let mut sink = Count::default();
        let outs = run_jobs(&mut st, &specs, &mut rngs, &mut sink, &mut |_| true);
        for (j, o) in jobs.iter().zip(&outs) {
            assert_eq!(o.issued, o.events, "{} on {}: {} issued, {} completed", j.name, dep.name, o.issued, o.events);
        }
        // 64 MiB in 64 KiB writes: exactly 1,024 issued.
        assert_eq!(outs[2].issued, 1024, "{}", dep.name);
        let total: u64 = outs.iter().map(|o| o.events).sum();
        assert_eq!(sink.by_pool.get(&0).copied().unwrap_or(0), total);
    }
}
