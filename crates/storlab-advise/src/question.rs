//! The question (DESIGN.md, "storlab advise"): a scenario's workload, a
//! `[goal]`, an optional `[space]` to search and the user's current
//! deployments as `[configs.*]`. This module only reads and checks the file.

use crate::AdviseError;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use storlab_model::error::from_toml_error;
use storlab_model::scenario::{ConfigSpec, HostCacheMode, Layout};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdviseFile {
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub region: Option<String>,
    #[serde(default)]
    pub as_of: Option<String>,
    /// I/O jobs or `[workload.database]`, as in a scenario.
    #[serde(default)]
    pub workload: Option<toml::Table>,
    #[serde(default)]
    pub goal: Goal,
    #[serde(default)]
    pub space: Space,
    /// The deployments the user runs today: each gets a finding.
    #[serde(default)]
    pub configs: IndexMap<String, ConfigSpec>,
}

/// What the deployment must deliver: throughput at least, latency and cost
/// at most.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Goal {
    /// New orders a minute (TPC-C profiles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nopm: Option<f64>,
    /// Transactions a minute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpm: Option<f64>,
    /// I/O workloads: every job's IOPS, MB/s (10^6 bytes/s) and p99 unless
    /// `jobs` names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mb_s: Option<f64>,
    /// The p99 latency: an I/O job's, or a database's main transaction's
    /// (New-Order for TPC-C), in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_usd_month: Option<f64>,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub jobs: IndexMap<String, JobGoal>,
    /// How long the goal must hold, hours (default `HOURS`: a working day).
    /// The advice states it under `sustain`, not in `goal`'s figures.
    #[serde(default, skip_serializing)]
    pub hours: Option<f64>,
    /// The credit buckets when the load starts: "empty" (the default: as
    /// after a bulk load or a day's work), "full" (a new volume) or a
    /// percent, as a scenario's `buckets_at_start`.
    #[serde(default, skip_serializing)]
    pub buckets_at_start: Option<toml::Value>,
}

/// The hours a goal holds when `[goal]` does not say: a working day.
pub const HOURS: f64 = 8.0;

impl Goal {
    pub fn hours(&self) -> f64 {
        self.hours.unwrap_or(HOURS)
    }
    /// The buckets' start as a scenario writes it ("empty" by default).
    pub fn buckets(&self) -> toml::Value {
        self.buckets_at_start.clone().unwrap_or_else(|| toml::Value::String("empty".into()))
    }
    /// The buckets' start in percent of capacity (0: empty, 100: full).
    pub fn start_pct(&self) -> f64 {
        storlab_model::deployment::buckets_at_start("", Some(&self.buckets())).ok().flatten().unwrap_or(100.0)
    }
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JobGoal {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mb_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ms: Option<f64>,
}

/// Where to search. Every field narrows the catalog of the region; none
/// given: every host and device of the region's cloud.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Space {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// Host ids or patterns with `*` (`aws/ec2/r5*`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<String>,
    /// Pool layouts tried for more than one device (default: stripe for
    /// volumes, spread for file shares).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layouts: Vec<Layout>,
    /// Devices per pool, at most (default 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_count: Option<u32>,
    /// Host cache modes tried where the device has one (default: none and
    /// readonly).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_cache: Vec<HostCacheMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    /// The database engine, for RDS hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// Database workloads: `shared` (log on the data pool), `separate` (a
    /// log pool of its own) or both (default).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<LogPlacement>,
    /// The data's size, GiB, where the workload does not give it (a
    /// demand measured by CloudWatch): the pools hold at least this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_gib: Option<f64>,
    /// The share of a pool's capacity kept free (growth, maintenance):
    /// data of D GiB needs D / (1 − free_space). Default 0.2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_space: Option<f64>,
}

/// The share of capacity kept free when `[space]` does not say: room for a
/// year's growth and an index rebuild, as DBAs size volumes.
pub const FREE_SPACE: f64 = 0.2;

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum LogPlacement {
    Shared,
    Separate,
}

/// Upper bound on devices per pool a space may ask for: the largest
/// attachment limit in the catalog's hosts is below it.
pub const MAX_COUNT: u32 = 64;

impl AdviseFile {
    /// The file as written; `check` before use.
    pub fn parse(file: &str, text: &str) -> Result<AdviseFile, AdviseError> {
        let de = toml::Deserializer::new(text);
        serde_path_to_error::deserialize(de).map_err(|e| AdviseError::Model(from_toml_error(file, text, e, false)))
    }

    pub fn from_toml(file: &str, text: &str) -> Result<AdviseFile, AdviseError> {
        let f = AdviseFile::parse(file, text)?;
        f.check(file)?;
        Ok(f)
    }

    /// A demand measured elsewhere (`--from-cloudwatch`) as the question's
    /// workload: one open-loop job at the measured rate, mix and I/O size
    /// over the data (`space.capacity_gib`, else 100 GiB), for ten
    /// simulated minutes; its IOPS the goal unless the file sets one.
    pub fn with_demand(&mut self, file: &str, d: &MeasuredDemand) -> Result<(), AdviseError> {
        if self.workload.is_some() {
            return Err(AdviseError::Input {
                file: file.into(),
                field: "workload".into(),
                message: format!("the question has a workload and --from-cloudwatch {} gives one — drop one of them", d.source),
            });
        }
        let bs = ((d.io_bytes / 4096.0).round().max(1.0) * 4096.0) as i64;
        let size_gib = self.space.capacity_gib.unwrap_or(100.0).max(1.0);
        let mut job = toml::Table::new();
        job.insert("name".into(), toml::Value::String("measured".into()));
        job.insert("rw".into(), toml::Value::String("randrw".into()));
        job.insert("rwmixread".into(), toml::Value::Integer((d.read_share * 100.0).round().clamp(0.0, 100.0) as i64));
        job.insert("bs".into(), toml::Value::Integer(bs));
        job.insert("size".into(), toml::Value::String(format!("{}g", size_gib.ceil() as i64)));
        job.insert("arrival_iops".into(), toml::Value::Float(d.iops));
        job.insert("runtime_s".into(), toml::Value::Integer(600));
        let mut wl = toml::Table::new();
        wl.insert("jobs".into(), toml::Value::Array(vec![toml::Value::Table(job)]));
        self.workload = Some(wl);
        if self.goal.iops.is_none() && self.goal.mb_s.is_none() && self.goal.jobs.is_empty() {
            self.goal.iops = Some(d.iops);
        }
        Ok(())
    }

    pub fn check(&self, file: &str) -> Result<(), AdviseError> {
        let bad = |field: &str, message: String| AdviseError::Input {
            file: file.to_string(),
            field: field.to_string(),
            message,
        };
        let g = &self.goal;
        let positive = |field: &str, v: Option<f64>| -> Result<(), AdviseError> {
            match v {
                Some(x) if !(x.is_finite() && x > 0.0) => Err(bad(
                    field,
                    format!("{x} — give a positive number, e.g. 1000"),
                )),
                _ => Ok(()),
            }
        };
        for (name, v) in [
            ("nopm", g.nopm),
            ("tpm", g.tpm),
            ("iops", g.iops),
            ("mb_s", g.mb_s),
            ("p99_ms", g.p99_ms),
            ("max_usd_month", g.max_usd_month),
        ] {
            positive(&format!("goal.{name}"), v)?;
        }
        if let Some(h) = g.hours {
            if !(h.is_finite() && h > 0.0 && h <= 8760.0) {
                let near = if h.is_finite() && h > 8760.0 { 8760.0 } else { HOURS };
                return Err(bad("goal.hours", format!("{h} — the hours the goal must hold, more than 0 and at most a year (8760); nearest valid value {near}")));
            }
        }
        if let Some(v) = &g.buckets_at_start {
            if storlab_model::deployment::buckets_at_start(file, Some(v)).is_err() {
                let near = match v {
                    toml::Value::Integer(i) if *i > 100 => "100".to_string(),
                    toml::Value::Float(f) if *f > 100.0 => "100".to_string(),
                    toml::Value::Integer(_) | toml::Value::Float(_) => "0".to_string(),
                    _ => "\"empty\"".to_string(),
                };
                return Err(bad("goal.buckets_at_start", format!("{v} — \"empty\" (after a bulk load), \"full\" or a percent from 0 to 100; nearest valid value {near}")));
            }
        }
        for (job, jg) in &g.jobs {
            for (name, v) in [("iops", jg.iops), ("mb_s", jg.mb_s), ("p99_ms", jg.p99_ms)] {
                positive(&format!("goal.jobs.{job}.{name}"), v)?;
            }
        }
        let database = storlab_workload::database::is_database(self.workload.as_ref());
        let throughput = [g.nopm, g.tpm, g.iops, g.mb_s].iter().any(Option::is_some)
            || g.jobs
                .values()
                .any(|j| j.iops.is_some() || j.mb_s.is_some());
        if !throughput {
            let hint = if database {
                "nopm = 20000 or tpm = 50000"
            } else {
                "iops = 3000 or mb_s = 200"
            };
            return Err(bad("goal", format!("no throughput to meet — give at least one of nopm, tpm, iops or mb_s, e.g. {hint}")));
        }
        if database && (g.iops.is_some() || g.mb_s.is_some() || !g.jobs.is_empty()) {
            return Err(bad("goal", "iops, mb_s and jobs are goals for I/O workloads — a [workload.database] takes nopm or tpm".into()));
        }
        if !database && (g.nopm.is_some() || g.tpm.is_some()) {
            return Err(bad("goal", "nopm and tpm are goals for a [workload.database] — I/O jobs take iops, mb_s or jobs.NAME".into()));
        }
        if let Some(n) = self.space.max_count {
            if n == 0 || n > MAX_COUNT {
                return Err(bad(
                    "space.max_count",
                    format!(
                        "{n} — give 1 to {MAX_COUNT}; nearest valid value {}",
                        n.clamp(1, MAX_COUNT)
                    ),
                ));
            }
        }
        if let Some(f) = self.space.free_space {
            if !(0.0..0.95).contains(&f) {
                return Err(bad(
                    "space.free_space",
                    format!(
                        "{f} — give a share from 0 to 0.95, e.g. 0.2; nearest valid value {}",
                        f.clamp(0.0, 0.95)
                    ),
                ));
            }
        }
        if self.workload.is_none() {
            return Err(bad("workload", "no workload — give [workload] I/O jobs or a [workload.database] profile, or --from-cloudwatch FILE".into()));
        }
        Ok(())
    }

    /// The region searched: `[space]`'s, else the file's.
    pub fn region(&self) -> Option<&str> {
        self.space.region.as_deref().or(self.region.as_deref())
    }
}

/// A volume's or instance's demand as CloudWatch measured it
/// (`--from-cloudwatch`): the rate at the stated statistic over the
/// lookback, its read share and mean I/O size.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MeasuredDemand {
    pub source: String,
    pub iops: f64,
    pub mb_s: f64,
    pub read_share: f64,
    pub io_bytes: f64,
    /// How the figure was taken, e.g. "Maximum of 288 periods of 300 s".
    pub statistic: String,
    pub period_s: f64,
    pub lookback_s: f64,
    pub metrics: Vec<String>,
}
