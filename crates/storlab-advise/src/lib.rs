//! `storlab advise`: the cheapest deployments of the catalog that meet a
//! goal. The candidates of the space (`space`) go through an analytic
//! screen (`screen`), the survivors in order of monthly cost to the
//! simulator, on every core; the first `top` that meet the goal are the
//! answer. The user's current configs get a finding as AWS Compute
//! Optimizer gives one: Optimized, Under-provisioned or Over-provisioned.

pub mod question;
pub mod screen;
pub mod space;

use indexmap::IndexMap;
use question::{AdviseFile, Goal};
use serde::{Deserialize, Serialize};
pub use space::Candidate;
use storlab_record::{RunRecord, Series};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use storlab_model::cost::monthly_cost;
use storlab_model::scenario::ConfigSpec;
use storlab_model::{Catalog, Deployment, ModelError};
use storlab_sim::SimError;
use storlab_workload::database::Database;
use storlab_workload::spec::Workload;

#[derive(Debug, thiserror::Error)]
pub enum AdviseError {
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error(transparent)]
    Workload(#[from] storlab_workload::WorkloadError),
    #[error("{file}: {field}: {message}")]
    Input {
        file: String,
        field: String,
        message: String,
    },
    /// A cluster that ran part of the search failed.
    #[error("{0}")]
    Remote(String),
}

pub const SCHEMA_VERSION: u32 = 1;

/// A finding's thresholds: a current config that meets the goal is
/// Over-provisioned when the cheapest recommendation saves at least this
/// share of its monthly cost.
pub const OVER_PROVISIONED_SAVING: f64 = 0.10;

/// A throughput goal counts as met within this share of it: the
/// simulator's figure at a cap sits a hair under the cap (11,999.9 IOPS
/// for 12,000), and no buyer would call that a miss.
pub const GOAL_TOLERANCE: f64 = 0.005;

/// A database candidate's first look at each VU count: this long a
/// window, and a step whose throughput falls short of the goal by more
/// than `QUICK_MARGIN` there is not run whole.
pub const QUICK_WINDOW_S: f64 = 60.0;
pub const QUICK_MARGIN: f64 = 0.10;

/// How a search runs.
#[derive(Debug, Clone)]
pub struct Options {
    pub top: usize,
    /// Simulations at once (each on its own thread); results are the same
    /// for any count.
    pub threads: usize,
    /// Most candidates the simulator verifies, cheapest first.
    pub max_verified: usize,
    /// A demand measured by CloudWatch, in place of the question's workload.
    pub demand: Option<question::MeasuredDemand>,
    /// Use a suspect database profile with a warning rather than refuse it
    /// (`--accept-suspect`; the question's `accept_suspect` does the same).
    pub accept_suspect: bool,
    /// Host ids or patterns with `*` (`--explain`): every candidate on
    /// them gets its fate in the record's `explained`.
    pub explain: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            top: 10,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            max_verified: 400,
            demand: None,
            accept_suspect: false,
            explain: None,
        }
    }
}

/// Counts of the search (`space` in the record).
#[derive(Debug, Clone, Serialize, Default)]
pub struct SpaceCounts {
    pub region: String,
    /// The licence prices are for (`[space] license`, `linux` by default).
    pub license: String,
    pub hosts: usize,
    pub devices: usize,
    /// Configs the model accepts.
    pub candidates: usize,
    /// Of those, the ones whose screen meets the goal and the cost cap.
    pub screened: usize,
    /// Of those, the ones the simulator ran.
    pub verified: usize,
    /// Configs left out before the screen, by reason.
    pub refused: IndexMap<String, u64>,
    /// Candidates the screen ruled out (or the cost cap), by the limit
    /// that bound them.
    pub screened_out: IndexMap<String, u64>,
}

/// One candidate's fate (`--explain`): why it was or was not picked.
#[derive(Debug, Clone, Serialize)]
pub struct Explained {
    pub name: String,
    pub host: String,
    pub config_toml: String,
    pub monthly_cost_usd: f64,
    /// `unpriced`, `screened out`, `over the cost cap`, `meets`, `misses`,
    /// `not simulated`.
    pub fate: String,
    pub why: String,
}

/// The limit a screen's reason names, without its figures: what groups
/// the candidates it ruled out ("host CPU", "data pool reads", "users in
/// sequence", a device's cap).
fn limit_kind(why: &str) -> String {
    // An I/O job's reason names its limit after "at most: ".
    let why = why.split_once("at most: ").map_or(why, |(_, limit)| limit);
    let head = why.split(':').next().unwrap_or(why).trim();
    if head.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        return "users: none faster than its CPU, reads, commit flush and round trip in sequence".into();
    }
    let mut out = String::new();
    let mut depth = 0;
    for ch in head.chars() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ if depth == 0 => out.push(ch),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What a candidate (or a current config) gives, verified by the
/// simulator or only screened.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Outcome {
    pub name: String,
    /// The config as a scenario's `[configs.NAME]` table.
    pub config: ConfigSpec,
    /// The same as TOML, ready to paste into a scenario.
    pub config_toml: String,
    pub monthly_cost_usd: f64,
    /// Per 1,000 TPM a month (databases).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usd_per_1000_tpm: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nopm: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tpm: Option<f64>,
    /// At the step reported (databases).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vus: Option<u32>,
    /// I/O workloads: the least over the jobs with a goal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iops: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bw_bytes_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_ms: Option<f64>,
    pub binding: String,
    pub meets_goal: bool,
    /// The first part of the goal it misses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub misses: Option<String>,
    /// `simulate`, or `screen` for a figure only the screen gave.
    pub verified_by: String,
    /// The screen's bound in the goal's unit (nopm, tpm, or the least IOPS).
    pub screen_bound: f64,
    /// The goal's share of what the deployment can give (its highest step
    /// for a database, its caps for I/O jobs): the performance risk's base.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    /// How the figures hold over the goal's hours from its buckets' start
    /// (verified databases): "from empty buckets …" or how long the
    /// credits last and what is left after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sustained: Option<String>,
    /// What `storlab simulate` would warn of for this config (verified
    /// ones): its warnings, and the figures no vendor source confirms.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unverified: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Recommendation {
    pub rank: usize,
    #[serde(flatten)]
    pub outcome: Outcome,
}

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub config: String,
    /// `Optimized`, `Under-provisioned` or `Over-provisioned`; `Not
    /// evaluated` when the run was interrupted before it was judged.
    pub finding: String,
    /// `VeryLow`, `Low`, `Medium`, `High` (Compute Optimizer's scale): how
    /// close the binding resource runs to its limit at the goal.
    pub risk: String,
    pub saving_usd_month: f64,
    pub why: String,
    pub current: Outcome,
    /// Up to three options, as Compute Optimizer lists them: the cheapest
    /// recommendations, each with its risk and what it saves a month
    /// against this config (negative: what meeting the goal costs more).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<FindingOption>,
    /// The days of metrics the demand was taken from (`--from-cloudwatch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lookback_days: Option<f64>,
}

/// One option of a finding (Compute Optimizer's
/// `volumeRecommendationOptions`: rank, configuration, performance risk,
/// savings opportunity).
#[derive(Debug, Clone, Serialize)]
pub struct FindingOption {
    pub rank: usize,
    pub name: String,
    pub config_toml: String,
    pub monthly_cost_usd: f64,
    pub risk: String,
    pub saving_usd_month: f64,
    /// The saving as a share of the current config's cost, percent.
    pub saving_pct: f64,
}

/// The first three recommendations as options for a config costing
/// `current` a month.
fn finding_options(q: &AdviseFile, recs: &[Outcome], current: f64) -> Vec<FindingOption> {
    recs.iter()
        .take(3)
        .enumerate()
        .map(|(i, r)| {
            let saving = ((current - r.monthly_cost_usd) * 100.0).round() / 100.0;
            FindingOption {
                rank: i + 1,
                name: r.name.clone(),
                config_toml: r.config_toml.clone(),
                monthly_cost_usd: r.monthly_cost_usd,
                risk: risk(r.load.unwrap_or_else(|| goal_share(q, r))).to_string(),
                saving_usd_month: saving,
                saving_pct: if current > 0.0 { (saving / current * 1000.0).round() / 10.0 } else { 0.0 },
            }
        })
        .collect()
}

#[derive(Debug, Clone, Serialize)]
pub struct Advice {
    pub schema_version: u32,
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub question: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub as_of: Option<String>,
    pub workload: String,
    pub goal: Goal,
    /// How the goal was judged over time: its hours and the buckets' state
    /// at the start.
    pub sustain: Sustain,
    /// The demand `--from-cloudwatch` measured, when it gave the workload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub demand: Option<question::MeasuredDemand>,
    pub space: SpaceCounts,
    pub recommendations: Vec<Recommendation>,
    /// Cost against throughput: each point the cheapest that gives more
    /// than every cheaper one (screen bounds; verified ones say so).
    pub front: Vec<Outcome>,
    /// Candidates cheaper than the first recommendation that failed, with
    /// what they miss.
    pub cheaper_failures: Vec<Outcome>,
    pub findings: Vec<Finding>,
    pub method: String,
    pub warnings: Vec<String>,
    pub interrupted: bool,
    /// `--explain`: each candidate on the hosts asked about, cheapest
    /// first, with its fate.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub explained: Vec<Explained>,
}

/// The goal's duration and start: every verification starts its credit
/// buckets at `buckets_at_start` and a pick must hold for `hours`.
#[derive(Debug, Clone, Serialize)]
pub struct Sustain {
    pub hours: f64,
    pub buckets_at_start: toml::Value,
    /// The same in words, for the table.
    pub rule: String,
}

impl Sustain {
    fn of(g: &Goal) -> Sustain {
        let start = g.start_pct();
        let hours = g.hours();
        let rule = if start <= 0.0 {
            format!("judged from empty credit buckets (as after a bulk load or a day's work): what a config gives there spends no credit, so it holds for the goal's {hours} h")
        } else {
            format!("judged from credit buckets {start}% full; a config whose credits run out before {hours} h at the goal's load is judged by what it gives after")
        };
        Sustain { hours, buckets_at_start: g.buckets(), rule }
    }
}

/// What the screen gives one candidate: its monthly cost, its bound in
/// the goal's unit (a share of the goal for I/O jobs) and what gives it;
/// `None` when a part of it has no price.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Screen {
    pub cost: f64,
    pub bound: f64,
    pub why: String,
}

/// A candidate for the simulator, with what the screen gave it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VerifyItem {
    pub candidate: Candidate,
    pub cost: f64,
    pub bound: f64,
}

/// Somewhere else to run the screen and the simulations: a cluster's
/// workers, each running [`screen_batch`] or [`verify_batch`] on its part.
/// The search keeps its order, so the answer is the same as in-process.
pub trait Remote: Sync {
    /// Simulations it runs at once.
    fn width(&self) -> usize;
    /// Candidates a screening task takes (at least 256).
    fn screen_batch(&self) -> usize;
    /// The screen of each candidate, in order.
    fn screen(&self, candidates: &[Candidate]) -> Result<Vec<Option<Screen>>, AdviseError>;
    /// The simulator's outcome of each item, in order.
    fn verify(&self, items: &[VerifyItem]) -> Result<Vec<Outcome>, AdviseError>;
}

/// What the question asks for, parsed once.
enum Kind {
    Io(Workload),
    Db(Box<Database>),
}

fn config_toml(name: &str, c: &ConfigSpec) -> String {
    #[derive(Serialize)]
    struct One<'a> {
        configs: IndexMap<&'a str, &'a ConfigSpec>,
    }
    toml::to_string(&One {
        configs: [(name, c)].into_iter().collect(),
    })
    .unwrap_or_default()
}

/// A database step as advise reads it from the run record.
#[derive(Debug, Clone)]
struct Step {
    vus: u32,
    nopm: Option<f64>,
    tpm: Option<f64>,
    /// The main transaction and its p99, ms.
    txn: String,
    p99_ms: Option<f64>,
    binding: String,
    surplus_usd_month: Option<f64>,
    cpu_credits: Option<String>,
}

impl Step {
    /// A database result's step, with `txn`'s p99; None for other results.
    fn of(r: &storlab_record::JobResult, txn: &str) -> Option<Step> {
        let Some(storlab_record::JobExtra::Db(d)) = &r.extra else { return None };
        Some(Step {
            vus: d.vus,
            nopm: d.nopm,
            tpm: d.tpm,
            txn: txn.to_string(),
            p99_ms: d.txn.get(txn).map(|t| t.latency.lat_p99_us / 1e3),
            binding: r.binding.clone(),
            surplus_usd_month: d.surplus_credits_usd_month,
            cpu_credits: d.cpu_credits.clone(),
        })
    }

    /// The goal's metric, `nopm` or `tpm`.
    fn metric(&self, metric: &str) -> Option<f64> {
        if metric == "nopm" {
            self.nopm
        } else {
            self.tpm
        }
    }
}

/// The main transaction of a profile, whose p99 `p99_ms` bounds: TPC-C's
/// New-Order, else the largest share.
fn main_txn(db: &Database) -> String {
    let p = &db.profile;
    if p.transactions.iter().any(|t| t.name == "new_order") {
        return "new_order".into();
    }
    p.transactions
        .iter()
        .max_by(|a, b| a.share.total_cmp(&b.share))
        .map(|t| t.name.clone())
        .unwrap_or_default()
}

struct Ctx<'a> {
    cat: &'a Catalog,
    file: &'a str,
    q: &'a AdviseFile,
    region: &'a str,
    kind: &'a Kind,
    stop: &'a AtomicBool,
}

impl Ctx<'_> {
    fn goal_metric(&self) -> &'static str {
        match self.kind {
            Kind::Db(_) if self.q.goal.nopm.is_some() => "nopm",
            Kind::Db(_) => "tpm",
            Kind::Io(_) => "iops",
        }
    }

    /// A candidate's monthly cost and screen, `None` if unpriced.
    fn screen_one(&self, c: &Candidate) -> Option<Screen> {
        let dep = storlab_model::deployment::resolve(self.cat, self.file, &c.name, &c.config, Some(self.region)).ok()?;
        let cost = monthly_cost(self.cat, &dep);
        if !cost.complete {
            return None;
        }
        let (bound, why) = self.screen(&dep);
        Some(Screen { cost: cost.monthly_cost_usd, bound, why })
    }

    /// The screen's bound for a config, in the goal's unit, and what gives it.
    fn screen(&self, dep: &Deployment) -> (f64, String) {
        match self.kind {
            Kind::Db(db) => {
                // advise's runs end at a steady window (Overrides below).
                let empty = (self.q.goal.start_pct() <= 0.0).then(|| screen::empty_bucket_scale(db, true));
                let (x, why) = screen::database(self.cat, dep, db, empty);
                let per_min = x * 60.0;
                (
                    if self.q.goal.nopm.is_some() {
                        per_min * db.profile.nopm_per_txn
                    } else {
                        per_min
                    },
                    why,
                )
            }
            Kind::Io(wl) => {
                // The least share of its goal any job reaches, as IOPS of
                // the first job with a goal.
                let mut worst = f64::INFINITY;
                let mut why = String::new();
                for j in &wl.jobs {
                    let b = screen::io_job(self.cat, dep, j);
                    let (iops, mb_s, p99) = self.job_goal(&j.name);
                    for (have, want, what) in
                        [(b.iops, iops, "IOPS"), (b.bw_bytes_s / 1e6, mb_s, "MB/s")]
                    {
                        if let Some(w) = want {
                            let share = have / w;
                            if share < worst {
                                worst = share;
                                why = format!("job {}: {have:.0} {what} at most: {}", j.name, b.binding);
                            }
                        }
                    }
                    // A closed loop keeps its I/Os in flight: at its bound
                    // each waits at least outstanding / IOPS (Little's law),
                    // and the p99 is no less than that mean.
                    if let Some(w) = p99.filter(|_| b.least_p99_ms > 0.0) {
                        let share = w / b.least_p99_ms;
                        if share < worst {
                            worst = share;
                            why = format!("job {}: p99 {:.2} ms at least", j.name, b.least_p99_ms);
                        }
                    }
                }
                (worst, why)
            }
        }
    }

    fn job_goal(&self, job: &str) -> (Option<f64>, Option<f64>, Option<f64>) {
        let g = &self.q.goal;
        match g.jobs.get(job) {
            Some(j) => (j.iops, j.mb_s, j.p99_ms),
            None if g.jobs.is_empty() => (g.iops, g.mb_s, g.p99_ms),
            None => (None, None, None),
        }
    }

    /// Does the screen's bound clear the goal? (I/O bounds are shares of
    /// the goal; database bounds are in its unit.)
    fn screen_passes(&self, bound: f64) -> bool {
        match self.kind {
            Kind::Io(_) => bound >= 1.0,
            Kind::Db(_) => bound >= self.q.goal.nopm.or(self.q.goal.tpm).unwrap_or(0.0),
        }
    }

    /// The candidate's deployment as the question runs it: its region, the
    /// rules of its date, its credit buckets from `start` % (None: full).
    fn deployment(&self, name: &str, c: &ConfigSpec, start: Option<f64>) -> Result<Deployment, AdviseError> {
        let mut d = storlab_model::deployment::resolve(self.cat, self.file, name, c, Some(self.region))?;
        d.start_buckets(start);
        Ok(d)
    }

    /// The goal's bucket state at the start, a percent (None: full).
    fn goal_start(&self) -> Result<Option<f64>, AdviseError> {
        Ok(storlab_model::deployment::buckets_at_start(self.file, Some(&self.q.goal.buckets()))?)
    }

    /// One simulator run of the database workload `db` on one config: one
    /// thread a run (the search runs several at once); each run ends once
    /// its throughput is steady (within 1 %). A suspect profile was refused
    /// or accepted once, by `advise_on`.
    fn run_db(&self, name: &str, c: &ConfigSpec, mut db: Database, start: Option<f64>) -> Result<RunRecord, AdviseError> {
        db.steady_state = true;
        let said = db.check_health(self.file, true)?;
        let sc = storlab_sim::Scenario::database(self.file, None, vec![self.deployment(name, c, start)?], db, None, said)?;
        self.run(&sc)
    }

    fn run(&self, sc: &storlab_sim::Scenario) -> Result<RunRecord, AdviseError> {
        let overrides = storlab_sim::Overrides { sim_threads: Some(1), ..Default::default() };
        let stop = self.stop;
        Ok(storlab_sim::run(self.cat, sc, &overrides, &mut |_f: f64| !stop.load(Ordering::Relaxed))?)
    }

    /// Runs the simulator on one config and reads what it gave against the goal.
    fn verify(&self, name: &str, c: &ConfigSpec, cost: f64, bound: f64, whole_sweep: bool) -> Result<Outcome, AdviseError> {
        let mut out = Outcome {
            name: name.to_string(),
            config: c.clone(),
            config_toml: config_toml(name, c),
            monthly_cost_usd: cost,
            usd_per_1000_tpm: None,
            nopm: None,
            tpm: None,
            vus: None,
            iops: None,
            bw_bytes_s: None,
            p99_ms: None,
            binding: String::new(),
            meets_goal: false,
            misses: None,
            verified_by: "simulate".into(),
            screen_bound: bound,
            load: None,
            sustained: None,
            warnings: Vec::new(),
            unverified: Vec::new(),
        };
        match self.kind {
            Kind::Db(db) => self.verify_db(db, &mut out, whole_sweep)?,
            Kind::Io(wl) => self.verify_io(wl, &mut out)?,
        }
        if let (Some(max), None) = (self.q.goal.max_usd_month, &out.misses) {
            if cost > max {
                out.misses = Some(format!("${cost:.0} a month > ${max:.0}"));
            }
        }
        out.meets_goal = out.misses.is_none() && !rec_interrupted(self.stop);
        Ok(out)
    }

    /// What a step misses of the goal, in words; None where it meets it.
    fn step_misses(&self, s: &Step) -> Option<String> {
        let g = &self.q.goal;
        if let (Some(w), Some(h)) = (g.nopm, s.nopm) {
            if h < w * (1.0 - GOAL_TOLERANCE) {
                return Some(format!("NOPM {h:.0} < {w:.0}"));
            }
        }
        if let (Some(w), Some(h)) = (g.tpm, s.tpm) {
            if h < w * (1.0 - GOAL_TOLERANCE) {
                return Some(format!("TPM {h:.0} < {w:.0}"));
            }
        }
        if let (Some(w), Some(h)) = (g.p99_ms, s.p99_ms) {
            if h > w {
                return Some(format!("{} p99 {h:.1} ms > {w} ms", s.txn));
            }
        }
        None
    }

    /// A candidate's VU counts one at a time, fewest first, up to the first
    /// that meets the goal; a current config's whole sweep (its highest
    /// step is the finding's risk). Returns the steps and the credit
    /// balances their runs left.
    fn db_steps(&self, db: &Database, name: &str, c: &ConfigSpec, whole_sweep: bool, said: &mut Said) -> Result<(Vec<Step>, Vec<Series>), AdviseError> {
        let g = &self.q.goal;
        let txn = main_txn(db);
        let start = self.goal_start()?;
        let (mut steps, mut series) = (Vec::new(), Vec::new());
        let mut take = |rec: RunRecord, steps: &mut Vec<Step>| -> Vec<Step> {
            said.absorb(&rec);
            series.extend(rec.series.into_iter().filter(is_balance));
            let got: Vec<Step> = rec.results.iter().filter_map(|r| Step::of(r, &txn)).collect();
            steps.extend(got.iter().cloned());
            got
        };
        let listed = matches!(db.vus, storlab_workload::database::Vus::List(_));
        if whole_sweep || !listed {
            let rec = self.run_db(name, c, db.clone(), start)?;
            take(rec, &mut steps);
            return Ok((steps, series));
        }
        let mut vus = screen::vu_steps(db);
        vus.sort_unstable();
        // A count whose own bound is under the goal cannot meet it: no run
        // is spent on it (the screen's bound holds at each count, as it
        // does for the best).
        let want_tps = g.nopm.map(|n| n / 60.0 / db.profile.nopm_per_txn.max(1e-9)).or(g.tpm.map(|t| t / 60.0)).unwrap_or(0.0);
        let hopeless: std::collections::HashSet<u32> = storlab_model::deployment::resolve(self.cat, self.file, name, c, Some(self.region))
            .map(|dep| {
                let empty = (g.start_pct() <= 0.0).then(|| screen::empty_bucket_scale(db, true));
                screen::database_steps(self.cat, &dep, db, empty).into_iter().filter(|(_, x, _)| *x < want_tps * (1.0 - GOAL_TOLERANCE)).map(|(n, _, _)| n).collect()
            })
            .unwrap_or_default();
        let last = vus.last().copied();
        let want = g.nopm.or(g.tpm).unwrap_or(0.0);
        for v in vus {
            // The highest count always runs: a miss then shows what the
            // simulator gives at its best.
            if hopeless.contains(&v) && Some(v) != last {
                continue;
            }
            let mut one = db.clone();
            one.vus = storlab_workload::database::Vus::List(vec![v]);
            // A first look: a short window, to drop a step that falls well
            // short before the whole run.
            if db.duration_s > QUICK_WINDOW_S * 2.0 {
                let mut quick = one.clone();
                quick.duration_s = QUICK_WINDOW_S;
                let mut first = Vec::new();
                take(self.run_db(name, c, quick, start)?, &mut first);
                let short = first.first().is_some_and(|s| s.metric(self.goal_metric()).unwrap_or(0.0) < want * (1.0 - QUICK_MARGIN));
                if short {
                    steps.extend(first);
                    continue;
                }
            }
            let got = take(self.run_db(name, c, one, start)?, &mut steps);
            let met = got.first().is_some_and(|s| self.step_misses(s).is_none());
            if met || self.stop.load(Ordering::Relaxed) {
                break;
            }
        }
        Ok((steps, series))
    }

    fn verify_db(&self, db: &Database, out: &mut Outcome, whole_sweep: bool) -> Result<(), AdviseError> {
        let g = &self.q.goal;
        let (name, c, cost) = (out.name.clone(), out.config.clone(), out.monthly_cost_usd);
        let mut said = Said::default();
        let (steps, series) = self.db_steps(db, &name, &c, whole_sweep, &mut said)?;
        // The fewest users that meet the goal; else the best step.
        let metric = self.goal_metric();
        let pick = steps.iter().find(|s| self.step_misses(s).is_none()).or_else(|| steps.iter().max_by(|a, b| a.metric(metric).unwrap_or(0.0).total_cmp(&b.metric(metric).unwrap_or(0.0))));
        let highest = steps.iter().filter_map(|s| s.metric(metric)).fold(0.0, f64::max);
        let want = g.nopm.or(g.tpm).unwrap_or(0.0);
        out.load = (highest > 0.0).then(|| want / highest);
        let Some(s) = pick else {
            out.misses = Some("the simulator returned no step".into());
            out.warnings.extend(said.warnings);
            out.unverified = said.unverified;
            return Ok(());
        };
        out.nopm = s.nopm;
        out.tpm = s.tpm;
        out.vus = Some(s.vus);
        // An unlimited burstable host bills its surplus CPU credits at this
        // load: part of what it costs.
        if let Some(extra) = s.surplus_usd_month.filter(|e| *e > 0.0) {
            out.monthly_cost_usd = ((cost + extra) * 100.0).round() / 100.0;
            out.warnings.push(format!("CPU credits {}", s.cpu_credits.as_deref().unwrap_or("unlimited: surplus billed")));
        }
        out.p99_ms = s.p99_ms;
        out.binding = s.binding.clone();
        out.usd_per_1000_tpm = out.tpm.filter(|t| *t > 0.0).map(|t| out.monthly_cost_usd / (t / 1000.0));
        out.misses = self.step_misses(s);
        let start = g.start_pct();
        let hours = g.hours();
        if start <= 0.0 {
            out.sustained = Some(format!("from empty credit buckets: the figures spend no credit, so they hold for {hours} h"));
        } else if out.misses.is_none() {
            self.sustain(db, out, s, &series, &mut said)?;
        }
        out.warnings.extend(said.warnings);
        out.unverified = said.unverified;
        Ok(())
    }

    /// How long a step that meets the goal from part-full buckets holds:
    /// the credits at its rate, from the balances the run left (a bucket
    /// that fell from `start` to `low` % in `t` s lasts start / (start −
    /// low) × t), and what the same step gives once they are spent.
    fn sustain(&self, db: &Database, out: &mut Outcome, s: &Step, series: &[Series], said: &mut Said) -> Result<(), AdviseError> {
        let g = &self.q.goal;
        let (start, hours, metric) = (g.start_pct(), g.hours(), self.goal_metric());
        let want = g.nopm.or(g.tpm).unwrap_or(0.0);
        match credits_last_s(series, s.vus, start) {
            Some((t, what)) if t < hours * 3600.0 => {
                // What is left once they are spent: the same step from
                // empty buckets.
                let mut one = db.clone();
                one.vus = storlab_workload::database::Vus::List(vec![s.vus]);
                let after = self.run_db(&out.name, &out.config.clone(), one, Some(0.0))?;
                said.absorb(&after);
                let txn = main_txn(db);
                let then = after.results.iter().find_map(|r| Step::of(r, &txn));
                let left = then.as_ref().and_then(|a| a.metric(metric)).unwrap_or(0.0);
                let unit = if metric == "nopm" { "NOPM" } else { "TPM" };
                let had = s.metric(metric).unwrap_or(0.0);
                let n = storlab_workload::health::thousands;
                if then.as_ref().is_some_and(|a| self.step_misses(a).is_none()) {
                    out.sustained = Some(format!("{what} lasts {:.0} min at this load; then it gives {} {unit}, still the goal", t / 60.0, n(left)));
                } else {
                    let miss = format!("meets {} {unit} for {:.0} min ({what} spent), then {} — not for {hours} h", n(want), t / 60.0, n(left));
                    out.sustained = Some(format!("{} {unit} for {:.0} min from {start}% buckets, then {}: {}", n(had), t / 60.0, n(left), then.as_ref().map_or("", |a| a.binding.as_str())));
                    out.misses = Some(miss);
                }
            }
            Some((t, what)) => out.sustained = Some(format!("{what} lasts {:.1} h at this load, past the goal's {hours} h", t / 3600.0)),
            None => out.sustained = Some(format!("from {start}% buckets: no credit balance fell at this load, so it holds for {hours} h")),
        }
        Ok(())
    }

    fn verify_io(&self, wl: &Workload, out: &mut Outcome) -> Result<(), AdviseError> {
        let (name, c) = (out.name.clone(), out.config.clone());
        if let Ok(dep) = storlab_model::deployment::resolve(self.cat, self.file, &name, &c, Some(self.region)) {
            let mut load: f64 = 0.0;
            for j in &wl.jobs {
                let b = screen::io_job(self.cat, &dep, j);
                let (iops, mb_s, _) = self.job_goal(&j.name);
                let cap_mb_s = b.cap_iops * j.bs_bytes as f64 / 1e6;
                for (w, cap) in [(iops, b.cap_iops), (mb_s, cap_mb_s)] {
                    if let (Some(w), true) = (w, cap > 0.0) {
                        load = load.max(w / cap);
                    }
                }
            }
            out.load = (load > 0.0).then_some(load);
        }
        let dep = self.deployment(&name, &c, self.goal_start()?)?;
        let sc = storlab_sim::Scenario::io(self.cat, self.file, None, vec![dep], wl.clone(), None)?;
        let rec = self.run(&sc)?;
        let mut said = Said::default();
        said.absorb(&rec);
        out.warnings = said.warnings;
        out.unverified = said.unverified;
        let mut worst: Option<(f64, &storlab_record::JobResult)> = None;
        for r in &rec.results {
            let job = r.job.as_str();
            let (iops, mb_s, p99) = self.job_goal(job);
            let (have_iops, have_mb_s, have_p99) = r.io.as_ref().map_or((0.0, 0.0, 0.0), |io| (io.iops, io.bw_bytes_s / 1e6, io.latency.lat_p99_us / 1e3));
            let mut share = f64::INFINITY;
            if let Some(w) = iops {
                share = share.min(have_iops / w);
                if have_iops < w * (1.0 - GOAL_TOLERANCE) && out.misses.is_none() {
                    out.misses = Some(format!("job {job}: {have_iops:.0} IOPS < {w:.0}"));
                }
            }
            if let Some(w) = mb_s {
                share = share.min(have_mb_s / w);
                if have_mb_s < w * (1.0 - GOAL_TOLERANCE) && out.misses.is_none() {
                    out.misses = Some(format!("job {job}: {have_mb_s:.1} MB/s < {w}"));
                }
            }
            if let Some(w) = p99 {
                if have_p99 > w && out.misses.is_none() {
                    out.misses = Some(format!("job {job}: p99 {have_p99:.2} ms > {w} ms"));
                }
            }
            if (iops.is_some() || mb_s.is_some() || p99.is_some()) && worst.map_or(true, |(s, _)| share < s) {
                worst = Some((share, r));
            }
        }
        if let Some((_, r)) = worst {
            let io = r.io.as_ref();
            out.iops = io.map(|i| i.iops);
            out.bw_bytes_s = io.map(|i| i.bw_bytes_s);
            out.p99_ms = io.map(|i| i.latency.lat_p99_us / 1e3);
            out.binding = r.binding.clone();
        }
        Ok(())
    }
}

/// What the search made of the candidates, for `--explain`.
struct Searched<'a> {
    candidates: &'a [Candidate],
    screened: &'a [Option<Screen>],
    ranked: &'a [Ranked],
    passing: &'a [&'a Ranked],
    recs: &'a [Outcome],
    failures: &'a [Outcome],
}

/// Each candidate on hosts matching `pattern`, cheapest first, with its
/// fate in the search.
fn explain(pattern: &str, searched: &Searched, ctx: &Ctx, max_cost: f64, interrupted: bool) -> Vec<Explained> {
    let Searched { candidates, screened, ranked, passing, recs, failures } = *searched;
    let (kind, q) = (ctx.kind, ctx.q);
    let wanted = |host: &str| pattern.split(',').any(|p| space::glob(p.trim(), host));
    let ran: std::collections::HashMap<&str, &Outcome> = recs.iter().chain(failures).map(|o| (o.name.as_str(), o)).collect();
    let passed: std::collections::HashSet<usize> = passing.iter().map(|r| r.0).collect();
    let mut out: Vec<Explained> = Vec::new();
    let one = |c: &Candidate, cost: f64, fate: &str, why: String| Explained {
        name: c.name.clone(),
        host: c.config.host.clone(),
        config_toml: config_toml(&c.name, &c.config),
        monthly_cost_usd: cost,
        fate: fate.into(),
        why,
    };
    for (i, cost, bound, why) in ranked {
        let c = &candidates[*i];
        if !wanted(&c.config.host) {
            continue;
        }
        let e = if let Some(o) = ran.get(c.name.as_str()) {
            match (&o.misses, o.meets_goal) {
                (None, true) => one(c, *cost, "meets", format!("verified by the simulator: {}; {}", o.binding, o.sustained.clone().unwrap_or_default())),
                (m, _) => one(c, *cost, "misses", format!("verified by the simulator: {}; binding: {}", m.clone().unwrap_or_default(), o.binding)),
            }
        } else if *cost > max_cost {
            one(c, *cost, "over the cost cap", format!("${cost:.0} a month > ${max_cost:.0}"))
        } else if !ctx.screen_passes(*bound) {
            one(c, *cost, "screened out", format!("the screen's bound, {} at most, is under the goal: {why}", fmt_bound(*bound, kind, q)))
        } else if passed.contains(i) {
            let why = if interrupted {
                "the search was interrupted before it was simulated".to_string()
            } else {
                format!("passed the screen ({} at most); cheaper candidates gave the search its {} answers first", fmt_bound(*bound, kind, q), recs.len())
            };
            one(c, *cost, "not simulated", why)
        } else {
            continue;
        };
        out.push(e);
    }
    for (i, s) in screened.iter().enumerate() {
        if s.is_none() && wanted(&candidates[i].config.host) {
            out.push(one(&candidates[i], 0.0, "unpriced", "a component has no price in the catalog for this region and licence".into()));
        }
    }
    out
}

/// A simulated record's warnings and unconfirmed figures, each once.
#[derive(Default)]
struct Said {
    warnings: Vec<String>,
    unverified: Vec<String>,
}

impl Said {
    fn absorb(&mut self, rec: &RunRecord) {
        for (from, into) in [(&rec.warnings, &mut self.warnings), (&rec.unverified, &mut self.unverified)] {
            for w in from {
                if !into.contains(w) {
                    into.push(w.clone());
                }
            }
        }
    }
}

/// A credit balance series of a simulated record (`BurstBalance`,
/// `EBSIOBalance%`, …, in percent).
fn is_balance(s: &Series) -> bool {
    let m = s.metric.as_str();
    m == "CPUCreditBalance" || s.unit == "Percent" && (m == "BurstBalance" || m.ends_with("Balance%") || m.ends_with("Balance"))
}

/// How long the credits last at a step of `vus` users that started at
/// `start` % (seconds, and the bucket that empties first), from the
/// balances its run left: each balance series of that step falls from
/// `start` to its lowest value `low` in `t` seconds (t: the end of the
/// period it was lowest in), so at that rate it lasts start × t / (start −
/// low). None: no balance fell.
fn credits_last_s(series: &[Series], vus: u32, start: f64) -> Option<(f64, String)> {
    let suffix = format!(" {vus} VUs");
    let mut best: Option<(f64, String)> = None;
    for s in series {
        let res = s.resource.as_str();
        if !res.ends_with(&suffix) {
            continue;
        }
        let (period, vals) = (s.period_s, &s.values);
        let Some((i, low)) = vals.iter().copied().enumerate().min_by(|a, b| a.1.total_cmp(&b.1)) else { continue };
        // A balance in credits (CPUCreditBalance): its start is the first
        // period's value plus a period of the fall to the lowest.
        let start = if s.unit == "Count" {
            let first = vals[0];
            if i == 0 || first <= low {
                continue;
            }
            first + (first - low) / i as f64
        } else {
            start
        };
        let fell = start - low;
        // Less than 0.01 % is the rounding of a balance that holds.
        if fell <= 0.01 || period <= 0.0 {
            continue;
        }
        let t = period * (i + 1) as f64;
        let lasts = if low <= 0.01 { t } else { start * t / fell };
        let what = format!("{} {}", res.trim_end_matches(&suffix), s.metric);
        if best.as_ref().is_none_or(|b| lasts < b.0) {
            best = Some((lasts, what));
        }
    }
    best
}

/// A config's shape: its host and each pool's role, device and count.
fn shape(c: &ConfigSpec) -> Vec<String> {
    std::iter::once(c.host.clone())
        .chain(
            c.pools
                .iter()
                .map(|p| format!("{}:{}x{}", p.role.name(), p.device, p.count)),
        )
        .collect()
}

fn rec_interrupted(stop: &AtomicBool) -> bool {
    stop.load(Ordering::Relaxed)
}

/// A current config's finding when the run stopped before it was judged.
pub const NOT_EVALUATED: &str = "Not evaluated";

/// Compute Optimizer's performance-risk words for how much of the verified
/// throughput the goal takes.
fn risk(goal_share: f64) -> &'static str {
    match goal_share {
        s if s >= 0.95 => "High",
        s if s >= 0.80 => "Medium",
        s if s >= 0.50 => "Low",
        _ => "VeryLow",
    }
}

/// The share of a verified outcome the goal takes (1 or more: misses).
fn goal_share(q: &AdviseFile, o: &Outcome) -> f64 {
    let g = &q.goal;
    let mut s: f64 = 0.0;
    for (want, have) in [
        (g.nopm, o.nopm),
        (g.tpm, o.tpm),
        (g.iops, o.iops),
        (g.mb_s, o.bw_bytes_s.map(|b| b / 1e6)),
    ] {
        if let (Some(w), Some(h)) = (want, have) {
            s = s.max(if h > 0.0 { w / h } else { f64::INFINITY });
        }
    }
    s
}

/// Runs `work` over `items` on up to `threads` threads, results in the
/// items' order whatever the thread count.
fn parallel<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    work: &(dyn Fn(&T) -> R + Sync),
) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().map(work).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<R>>> =
        items.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= items.len() {
                    break;
                }
                let r = work(&items[i]);
                *slots[i].lock().expect("slot") = Some(r);
            });
        }
    });
    slots
        .into_iter()
        .map(|m| m.into_inner().expect("slot").expect("every item ran"))
        .collect()
}

/// The question, read and checked once: what every part of a search (here
/// or on a cluster's worker) starts from.
struct Prepared<'a> {
    base: &'a Catalog,
    dated: Option<Catalog>,
    q: AdviseFile,
    region: String,
    kind: Kind,
}

impl Prepared<'_> {
    fn ctx<'b>(&'b self, file: &'b str, stop: &'b AtomicBool) -> Ctx<'b> {
        Ctx {
            cat: self.dated.as_ref().unwrap_or(self.base),
            file,
            q: &self.q,
            region: &self.region,
            kind: &self.kind,
            stop,
        }
    }
}

fn prepare<'a>(base: &'a Catalog, question: Question, demand: Option<&question::MeasuredDemand>) -> Result<Prepared<'a>, AdviseError> {
    let Question { file, text, dir, profiles_dir } = question;
    let mut q = AdviseFile::parse(file, text)?;
    if let Some(d) = demand {
        q.with_demand(file, d)?;
    }
    q.check(file)?;
    // A dated catalog (`--as-of`) wins over the question's `as_of`.
    let dated = match (&base.as_of, &q.as_of) {
        (None, Some(d)) => Some(base.on(d, storlab_model::error::Location::new(file, "as_of", "as_of"))?),
        _ => None,
    };
    let cat = dated.as_ref().unwrap_or(base);
    let region = q.region().ok_or_else(|| AdviseError::Input {
        file: file.to_string(),
        field: "region".into(),
        message: format!(
            "no region to search — give region = \"...\" (one of {})",
            cat.regions().join(", ")
        ),
    })?;
    if !cat.regions().iter().any(|r| r == region) {
        let regions = cat.regions();
        let near = storlab_model::error::nearest(region, regions.iter().map(String::as_str))
            .unwrap_or_else(|| regions.first().cloned().unwrap_or_default());
        return Err(AdviseError::Input { file: file.into(), field: "region".into(), message: format!("'{region}' has no prices in the catalog — nearest valid value '{near}' (regions: {})", regions.join(", ")) });
    }
    let region = region.to_string();
    for (field, pat, near) in space::unmatched(cat, &q.space) {
        return Err(AdviseError::Input {
            file: file.into(),
            field,
            message: format!(
                "'{pat}' matches nothing in the catalog{}",
                near.map(|n| format!(" — nearest valid value '{n}'"))
                    .unwrap_or_default()
            ),
        });
    }
    let wt = q.workload.clone().unwrap_or_default();
    let kind = if storlab_workload::database::is_database(Some(&wt)) {
        Kind::Db(Box::new(storlab_workload::database::from_table(
            file,
            dir,
            profiles_dir,
            &wt,
        )?))
    } else {
        let wl = storlab_workload::spec::from_table(file, dir, Some(&wt))?;
        storlab_sim::check_budget(file, &wl)?;
        for name in q.goal.jobs.keys() {
            if !wl.jobs.iter().any(|j| &j.name == name) {
                let names: Vec<&str> = wl.jobs.iter().map(|j| j.name.as_str()).collect();
                let near = storlab_model::error::nearest(name, names.iter().copied())
                    .unwrap_or_else(|| names.first().map(|s| s.to_string()).unwrap_or_default());
                return Err(AdviseError::Input {
                    file: file.into(),
                    field: format!("goal.jobs.{name}"),
                    message: format!(
                        "no job '{name}' in the workload — nearest valid value '{near}' (jobs: {})",
                        names.join(", ")
                    ),
                });
            }
        }
        Kind::Io(wl)
    };
    Ok(Prepared { base, dated, q, region, kind })
}

/// A question as the user wrote it: its file's name (for messages), its
/// text, its folder (for the files it names) and the folder of the shipped
/// database profiles.
#[derive(Debug, Clone, Copy)]
pub struct Question<'a> {
    pub file: &'a str,
    pub text: &'a str,
    pub dir: &'a Path,
    pub profiles_dir: &'a Path,
}

/// Answers the question. `progress` gets (done, total) simulations; `stop`
/// set ends the search with what it has, marked interrupted.
pub fn advise(cat: &Catalog, question: Question, opts: &Options, stop: &AtomicBool, progress: &(dyn Fn(u64, u64) + Sync)) -> Result<Advice, AdviseError> {
    advise_on(cat, question, opts, stop, progress, None)
}

/// [`advise`], with the screen and the simulations run by `remote` (a
/// cluster) when given: the same answer, the search's order kept.
pub fn advise_on(cat: &Catalog, question: Question, opts: &Options, stop: &AtomicBool, progress: &(dyn Fn(u64, u64) + Sync), remote: Option<&dyn Remote>) -> Result<Advice, AdviseError> {
    let file = question.file;
    let prepared = prepare(cat, question, opts.demand.as_ref())?;
    // A suspect profile is refused here, once; the simulations that follow
    // (here or on a cluster's workers) take the answer as given.
    let suspect = match &prepared.kind {
        Kind::Db(db) => db.check_health(file, opts.accept_suspect || db.accept_suspect)?,
        Kind::Io(_) => Vec::new(),
    };
    let ctx = prepared.ctx(file, stop);
    let (q, kind) = (ctx.q, ctx.kind);
    let region = prepared.region.clone();
    let generated = space::generate(ctx.cat, file, q, &region, matches!(kind, Kind::Db(_)), &|h| ctx.demand(h));
    let candidates = &generated.candidates;
    let mut counts = SpaceCounts {
        region: region.clone(),
        license: q.space.license.clone().unwrap_or_else(|| "linux".into()),
        hosts: generated.hosts.len(),
        devices: generated.devices.len(),
        candidates: candidates.len(),
        refused: generated.refused.clone(),
        ..Default::default()
    };
    let screened = ctx.screen_all(candidates, opts, remote, &mut counts)?;
    let ranked = rank(&screened, candidates);
    let max_cost = q.goal.max_usd_month.unwrap_or(f64::INFINITY);
    let passes = |r: &Ranked| ctx.screen_passes(r.2) && r.1 <= max_cost;
    let passing: Vec<&Ranked> = ranked.iter().filter(|r| passes(r)).collect();
    counts.screened = passing.len();
    for r in ranked.iter().filter(|r| !passes(r)) {
        let key = if r.1 > max_cost { "over the goal's max_usd_month".to_string() } else { format!("screen: {}", limit_kind(&r.3)) };
        *counts.screened_out.entry(key).or_default() += 1;
    }
    let front = ctx.front(&ranked, candidates);
    let (recs, failures, done) = ctx.search(&passing, candidates, opts, remote, progress)?;
    counts.verified = done;
    let interrupted = stop.load(Ordering::Relaxed);
    let explained = match &opts.explain {
        None => Vec::new(),
        Some(pattern) => explain(pattern, &Searched { candidates, screened: &screened, ranked: &ranked, passing: &passing, recs: &recs, failures: &failures }, &ctx, max_cost, interrupted),
    };
    let cheapest = recs.first().map(|r| r.monthly_cost_usd);
    let failed: Vec<&Ranked> = ranked.iter().filter(|r| !passes(r)).collect();
    let cheaper = ctx.cheaper_failures(failures, &failed, candidates, cheapest, max_cost);
    let mut warnings = suspect;
    warnings.extend(said_once(&recs));
    if recs.is_empty() && !interrupted {
        warnings.push(ctx.no_answer(passing.len(), &counts, &front, &cheaper, opts));
    }
    let findings = ctx.findings(&recs, cheapest, opts)?;
    // What simulate would warn of for these configs, said once here too: a
    // profile recorded on another engine than the configs name.
    if let Kind::Db(db) = kind {
        let mut said = std::collections::BTreeSet::new();
        for o in recs.iter().chain(findings.iter().map(|f| &f.current)) {
            if let Ok(dep) = storlab_model::deployment::resolve(ctx.cat, file, &o.name, &o.config, Some(&region)) {
                if let Some(w) = storlab_sim::database::engine_mismatch(&dep, &db.profile) {
                    said.insert(w);
                }
            }
        }
        warnings.extend(said);
    }
    let workload = match kind {
        Kind::Db(db) => format!("{} at scale {} {}", db.profile.name, db.scale, db.profile.scale_unit),
        Kind::Io(wl) => wl.source.clone(),
    };
    Ok(Advice {
        schema_version: SCHEMA_VERSION,
        kind: "storlab-advice",
        title: q.title.clone(),
        question: file.to_string(),
        as_of: q.as_of.clone(),
        workload,
        goal: q.goal.clone(),
        sustain: Sustain::of(&q.goal),
        demand: opts.demand.clone(),
        space: counts,
        recommendations: recs.into_iter().enumerate().map(|(i, o)| Recommendation { rank: i + 1, outcome: o }).collect(),
        front,
        cheaper_failures: cheaper,
        findings,
        method: METHOD.to_string(),
        warnings,
        interrupted,
        explained,
    })
}

/// A screened candidate: its index, monthly cost, the screen's bound and
/// what gives it.
type Ranked = (usize, f64, f64, String);

/// The priced candidates, cheapest first; of the same price, the higher
/// bound, then the name.
fn rank(screened: &[Option<Screen>], candidates: &[Candidate]) -> Vec<Ranked> {
    let mut ranked: Vec<Ranked> = screened.iter().enumerate().filter_map(|(i, s)| s.as_ref().map(|s| (i, s.cost, s.bound, s.why.clone()))).collect();
    ranked.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| b.2.total_cmp(&a.2)).then_with(|| candidates[a.0].name.cmp(&candidates[b.0].name)));
    ranked
}

/// The recommendations' warnings, the same of several (their names aside)
/// said once with the others' ranks, and the figures no vendor confirms.
fn said_once(recs: &[Outcome]) -> Vec<String> {
    let mut unconfirmed: Vec<String> = Vec::new();
    let mut said: IndexMap<String, (String, Vec<usize>)> = IndexMap::new();
    for (i, r) in recs.iter().enumerate() {
        for w in &r.warnings {
            let e = said.entry(w.replace(&r.name, "\u{0}")).or_insert_with(|| (format!("#{} {}: {w}", i + 1, r.name), Vec::new()));
            if !e.0.starts_with(&format!("#{} ", i + 1)) {
                e.1.push(i + 1);
            }
        }
        for u in &r.unverified {
            if !unconfirmed.contains(u) {
                unconfirmed.push(u.clone());
            }
        }
    }
    let mut out: Vec<String> = said
        .into_values()
        .map(|(line, also)| {
            let ranks: Vec<String> = also.iter().map(|r| format!("#{r}")).collect();
            if ranks.is_empty() {
                line
            } else {
                format!("{line} (the same of {})", ranks.join(", "))
            }
        })
        .collect();
    if !unconfirmed.is_empty() {
        out.push(format!("not confirmed by a vendor source, in the recommendations' figures: {}", unconfirmed.join("; ")));
    }
    out
}

impl Ctx<'_> {
    /// What the goal asks of a pool on host `h`, to size the candidates.
    fn demand(&self, h: &storlab_model::catalog::HostSpec) -> space::Demand {
        let q = self.q;
        match self.kind {
            Kind::Db(db) => {
                let d = screen::txn_demand(db, h.memory_gib.as_ref().map_or(0.0, |m| m.value));
                let per_min = q.goal.nopm.map(|n| n / db.profile.nopm_per_txn.max(1e-9)).or(q.goal.tpm).unwrap_or(0.0);
                let tps = per_min / 60.0;
                let iops = tps * (d.reads + d.dirtied);
                space::Demand { gib: db.profile.data_bytes(db.scale) / (1u64 << 30) as f64, iops, mb_s: iops * d.page_bytes / 1e6 + tps * d.wal_bytes / 1e6 }
            }
            Kind::Io(wl) => {
                let job_gib = wl.jobs.iter().map(|j| j.size_bytes as f64).fold(0.0, f64::max) / (1u64 << 30) as f64;
                let mut d = space::Demand { gib: q.space.capacity_gib.unwrap_or(job_gib), ..Default::default() };
                for j in &wl.jobs {
                    let (iops, mb_s, _) = self.job_goal(&j.name);
                    let iops = iops.unwrap_or(0.0).max(mb_s.unwrap_or(0.0) * 1e6 / j.bs_bytes.max(1) as f64);
                    d.iops = d.iops.max(iops);
                    d.mb_s = d.mb_s.max(iops * j.bs_bytes as f64 / 1e6);
                }
                d
            }
        }
    }

    /// The screen, on every core (or a cluster's): bound and monthly cost
    /// of each candidate; `counts` learns the unpriced and unscreened.
    fn screen_all(&self, candidates: &[Candidate], opts: &Options, remote: Option<&dyn Remote>, counts: &mut SpaceCounts) -> Result<Vec<Option<Screen>>, AdviseError> {
        let mut unscreened = 0;
        let screened: Vec<Option<Screen>> = match remote {
            None => parallel(candidates, opts.threads, &|c: &Candidate| self.screen_one(c)),
            Some(r) => {
                let mut out = Vec::with_capacity(candidates.len());
                for part in candidates.chunks(r.screen_batch().max(256) * r.width().max(1)) {
                    if self.stop.load(Ordering::Relaxed) {
                        break;
                    }
                    out.extend(r.screen(part)?);
                }
                unscreened = candidates.len() - out.len();
                out.resize(candidates.len(), None);
                out
            }
        };
        if unscreened > 0 {
            counts.refused.insert("not screened: the search was interrupted".into(), unscreened as u64);
            counts.candidates -= unscreened;
        }
        let unpriced = screened.iter().filter(|s| s.is_none()).count() - unscreened;
        if unpriced > 0 {
            *counts.refused.entry("a component has no price in the catalog".into()).or_default() += unpriced as u64;
            counts.candidates -= unpriced;
        }
        Ok(screened)
    }

    /// The front: cost against the screen's bound, each point the cheapest
    /// with more than every cheaper one.
    fn front(&self, ranked: &[Ranked], candidates: &[Candidate]) -> Vec<Outcome> {
        let metric = self.goal_metric();
        let mut front: Vec<Outcome> = Vec::new();
        let mut best = f64::NEG_INFINITY;
        for (i, cost, bound, why) in ranked {
            if *bound > best * 1.0001 {
                best = *bound;
                front.push(screen_outcome(&candidates[*i], *cost, *bound, why, metric, self.kind, self.q));
            }
        }
        front
    }

    /// Verification: the survivors, cheapest first, in batches of one a
    /// thread, until `top` meet the goal. Returns the answers, the
    /// outcomes that missed, and the candidates verified.
    fn search(&self, passing: &[&Ranked], candidates: &[Candidate], opts: &Options, remote: Option<&dyn Remote>, progress: &(dyn Fn(u64, u64) + Sync)) -> Result<(Vec<Outcome>, Vec<Outcome>, usize), AdviseError> {
        let stop = self.stop;
        let max_cost = self.q.goal.max_usd_month.unwrap_or(f64::INFINITY);
        let mut recs: Vec<Outcome> = Vec::new();
        let mut failures: Vec<Outcome> = Vec::new();
        let total = passing.len().min(opts.max_verified) as u64;
        let mut done = 0u64;
        let batch = remote.map_or(opts.threads, |r| r.width()).max(1) * 2;
        let mut cursor = 0;
        // Enough answers: `top` of them, none dearer than the next
        // candidate's price. A burstable host's answer can cost more than
        // its screen said (its surplus CPU credits at the goal's load), so a
        // candidate the screen priced below it is still verified.
        let enough = |recs: &[Outcome], next_cost: f64| {
            recs.len() >= opts.top && {
                let mut costs: Vec<f64> = recs.iter().map(|r| r.monthly_cost_usd).collect();
                costs.sort_by(f64::total_cmp);
                costs[opts.top - 1] <= next_cost
            }
        };
        while !enough(&recs, passing.get(cursor).map_or(f64::INFINITY, |r| r.1)) && cursor < passing.len() && (done as usize) < opts.max_verified && !stop.load(Ordering::Relaxed) {
            let chunk: Vec<&Ranked> = passing[cursor..(cursor + batch).min(passing.len())].to_vec();
            cursor += chunk.len();
            let outs = match remote {
                None => parallel(&chunk, opts.threads, &|r: &&Ranked| {
                    let c = &candidates[r.0];
                    self.verify(&c.name, &c.config, r.1, r.2, false)
                }),
                Some(rm) => {
                    let items: Vec<VerifyItem> = chunk.iter().map(|r| VerifyItem { candidate: candidates[r.0].clone(), cost: r.1, bound: r.2 }).collect();
                    rm.verify(&items)?.into_iter().map(Ok).collect()
                }
            };
            for (o, r) in outs.into_iter().zip(&chunk) {
                // Past the last answer needed, a batch's other outcomes are
                // dropped: the advice is the same on any number of threads.
                if enough(&recs, r.1) {
                    break;
                }
                let mut o = o?;
                done += 1;
                if o.meets_goal && o.monthly_cost_usd > max_cost {
                    o.meets_goal = false;
                    o.misses = Some(format!("${:.2} a month with its surplus CPU credits at this load, over the goal's max_usd_month", o.monthly_cost_usd));
                }
                if o.meets_goal {
                    // One a host, device kind and count: the cheapest; a
                    // larger size of the same is no new answer.
                    let key = shape(&o.config);
                    match recs.iter().position(|r| shape(&r.config) == key) {
                        None => recs.push(o),
                        Some(i) if o.monthly_cost_usd < recs[i].monthly_cost_usd => recs[i] = o,
                        Some(_) => {}
                    }
                    recs.sort_by(|a, b| a.monthly_cost_usd.total_cmp(&b.monthly_cost_usd));
                    recs.truncate(opts.top);
                } else if !stop.load(Ordering::Relaxed) {
                    failures.push(o);
                }
            }
            progress(done, total);
        }
        Ok((recs, failures, done as usize))
    }

    /// Cheaper candidates that failed: those the simulator ran, then the
    /// cheapest the screen ruled out (`failed`, cheapest first); ten at most.
    fn cheaper_failures(&self, failures: Vec<Outcome>, failed: &[&Ranked], candidates: &[Candidate], cheapest: Option<f64>, max_cost: f64) -> Vec<Outcome> {
        let (kind, q) = (self.kind, self.q);
        let mut cheaper: Vec<Outcome> = failures.into_iter().filter(|f| cheapest.map_or(true, |c| f.monthly_cost_usd < c)).collect();
        for (i, cost, bound, why) in failed.iter().copied() {
            if cheaper.len() >= 10 || cheapest.is_some_and(|c| *cost >= c) {
                break;
            }
            let mut o = screen_outcome(&candidates[*i], *cost, *bound, why, self.goal_metric(), kind, q);
            o.misses = Some(if *cost > max_cost {
                format!("${cost:.0} a month > ${max_cost:.0}")
            } else {
                match kind {
                    Kind::Io(_) => format!("screen: {why} ({} of the goal)", fmt_bound(*bound, kind, q)),
                    Kind::Db(_) => format!("screen: {} at most ({why})", fmt_bound(*bound, kind, q)),
                }
            });
            cheaper.push(o);
        }
        cheaper.sort_by(|a, b| a.monthly_cost_usd.total_cmp(&b.monthly_cost_usd));
        cheaper.truncate(10);
        cheaper
    }

    /// Why no answer: nothing in the space, nothing past the screen, the
    /// verification budget spent, or every verified candidate missed.
    fn no_answer(&self, passing: usize, counts: &SpaceCounts, front: &[Outcome], cheaper: &[Outcome], opts: &Options) -> String {
        let (kind, q) = (self.kind, self.q);
        match (passing, counts.candidates) {
            (_, 0) => "no candidate left in the space: every combination was refused (space.refused says why) — widen [space]".to_string(),
            (0, _) => format!("no candidate's screen meets the goal: the nearest give {}{} — lower the goal or widen [space]", front.last().map(|o| fmt_bound(o.screen_bound, kind, q)).unwrap_or_default(), if matches!(kind, Kind::Io(_)) { " of it" } else { "" }),
            (n, _) if counts.verified >= opts.max_verified && n > counts.verified => {
                let best = cheaper.iter().filter(|o| o.verified_by == "simulate").max_by(|a, b| a.screen_bound.total_cmp(&b.screen_bound).then(b.monthly_cost_usd.total_cmp(&a.monthly_cost_usd)));
                format!(
                    "the simulator ran the {} cheapest of the {n} candidates that pass the screen and none meets the goal{} — the rest were not simulated; widen the sweep (vus) if users bind, or narrow [space] to the hosts that can",
                    counts.verified,
                    best.map(|o| format!(" (cheaper_failures: e.g. {}, {})", o.misses.clone().unwrap_or_default(), o.binding)).unwrap_or_default()
                )
            }
            _ => "no candidate the simulator ran meets the goal; cheaper_failures lists the nearest and what each misses".to_string(),
        }
    }

    /// Findings for the user's current configs, each simulated whole.
    fn findings(&self, recs: &[Outcome], cheapest: Option<f64>, opts: &Options) -> Result<Vec<Finding>, AdviseError> {
        let q = self.q;
        let mut findings = Vec::new();
        for (name, c) in &q.configs {
            let dep = storlab_model::deployment::resolve(self.cat, self.file, name, c, Some(self.region))?;
            let cost = monthly_cost(self.cat, &dep);
            let (bound, _) = self.screen(&dep);
            let current = self.verify(name, c, cost.monthly_cost_usd, bound, true)?;
            if rec_interrupted(self.stop) {
                // Stopped before or while this config ran: its figures are
                // not the simulator's verdict, and no finding is made of them.
                findings.push(Finding {
                    config: name.clone(),
                    finding: NOT_EVALUATED.to_string(),
                    risk: "unknown".to_string(),
                    saving_usd_month: 0.0,
                    why: "the run was interrupted before this config's simulation finished — rerun advise to judge it".to_string(),
                    current,
                    options: Vec::new(),
                    lookback_days: None,
                });
                continue;
            }
            let share = current.load.unwrap_or_else(|| goal_share(q, &current));
            let (finding, saving, why) = if !current.meets_goal {
                ("Under-provisioned", cheapest.map_or(0.0, |c| current.monthly_cost_usd - c), format!("misses the goal: {}", current.misses.clone().unwrap_or_default()))
            } else {
                match cheapest {
                    Some(c) if current.monthly_cost_usd - c >= OVER_PROVISIONED_SAVING * current.monthly_cost_usd => (
                        "Over-provisioned",
                        current.monthly_cost_usd - c,
                        format!("meets the goal; the cheapest recommendation meets it too for ${c:.0} a month instead of ${:.0}", current.monthly_cost_usd),
                    ),
                    _ => ("Optimized", 0.0, "meets the goal, and no recommendation saves 10 % or more".to_string()),
                }
            };
            findings.push(Finding {
                config: name.clone(),
                finding: finding.to_string(),
                risk: if current.meets_goal { risk(share).to_string() } else { "High".to_string() },
                saving_usd_month: (saving.max(0.0) * 100.0).round() / 100.0,
                why,
                options: finding_options(q, recs, current.monthly_cost_usd),
                lookback_days: opts.demand.as_ref().map(|d| (d.lookback_s / 86400.0 * 1000.0).round() / 1000.0),
                current,
            });
        }
        Ok(findings)
    }
}

/// A cluster worker's part of a search: the screen of `candidates` for the
/// question in `text`, in order, on up to `threads` threads.
pub fn screen_batch(cat: &Catalog, question: Question, demand: Option<&question::MeasuredDemand>, candidates: &[Candidate], threads: usize) -> Result<Vec<Option<Screen>>, AdviseError> {
    let p = prepare(cat, question, demand)?;
    let stop = AtomicBool::new(false);
    let ctx = p.ctx(question.file, &stop);
    Ok(parallel(candidates, threads, &|c: &Candidate| ctx.screen_one(c)))
}

/// A cluster worker's part of a search: the simulator's outcome of each
/// item, in order, on up to `threads` threads; `stop` ends the runs early.
pub fn verify_batch(cat: &Catalog, question: Question, demand: Option<&question::MeasuredDemand>, items: &[VerifyItem], threads: usize, stop: &AtomicBool) -> Result<Vec<Outcome>, AdviseError> {
    let p = prepare(cat, question, demand)?;
    let ctx = p.ctx(question.file, stop);
    parallel(items, threads, &|it: &VerifyItem| ctx.verify(&it.candidate.name, &it.candidate.config, it.cost, it.bound, false))
        .into_iter()
        .collect()
}

pub const METHOD: &str = "every config of the space the catalog's rules allow; an analytic screen (for I/O jobs: the pool's caps for the job's mix and its I/Os in flight over the mean service time; for databases: users no faster than CPU + reads + commit flush + round trip in sequence, vCPUs and data-pool reads under their caps) rules out those that cannot meet the goal; the rest go to the simulator cheapest first, and the first that meet the goal are the answer";

fn fmt_bound(b: f64, kind: &Kind, q: &AdviseFile) -> String {
    match kind {
        Kind::Io(_) => format!("{:.0} %", b * 100.0),
        Kind::Db(_) => format!(
            "{b:.0}{}",
            if q.goal.nopm.is_some() {
                " NOPM"
            } else {
                " TPM"
            }
        ),
    }
}

fn screen_outcome(
    c: &space::Candidate,
    cost: f64,
    bound: f64,
    why: &str,
    metric: &str,
    kind: &Kind,
    q: &AdviseFile,
) -> Outcome {
    let (nopm, tpm) = match kind {
        Kind::Db(db) if metric == "nopm" => {
            (Some(bound), Some(bound / db.profile.nopm_per_txn.max(1e-9)))
        }
        Kind::Db(_) => (None, Some(bound)),
        Kind::Io(_) => (None, None),
    };
    let _ = q;
    Outcome {
        name: c.name.clone(),
        config: c.config.clone(),
        config_toml: config_toml(&c.name, &c.config),
        monthly_cost_usd: cost,
        usd_per_1000_tpm: tpm.filter(|t| *t > 0.0).map(|t| cost / (t / 1000.0)),
        nopm,
        tpm,
        vus: None,
        iops: None,
        bw_bytes_s: None,
        p99_ms: None,
        binding: why.to_string(),
        meets_goal: false,
        misses: None,
        verified_by: "screen".into(),
        screen_bound: bound,
        load: None,
        sustained: None,
        warnings: Vec::new(),
        unverified: Vec::new(),
    }
}
