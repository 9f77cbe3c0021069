//! The scenario file (DESIGN.md, "Scenario file"): a title, a region for
//! prices, a workload and named configs, each a host and its pools. This
//! module only reads the file; `deployment` resolves a config against the
//! catalog and checks it.

use crate::error::{from_toml_error, Result};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub region: Option<String>,
    /// Vendor rules as they stood that day (`YYYY-MM-DD`); prices stay
    /// today's. `--as-of` overrides it.
    #[serde(default)]
    pub as_of: Option<String>,
    /// Every credit bucket's balance when the run starts: `"full"` (the
    /// default, as a new EBS volume or Azure disk starts), `"empty"` (spent,
    /// as after a bulk load), or a percent of capacity (0–100).
    #[serde(default)]
    pub buckets_at_start: Option<toml::Value>,
    /// Kept as TOML here; the workload engines own its meaning.
    #[serde(default)]
    pub workload: Option<toml::Table>,
    pub configs: IndexMap<String, ConfigSpec>,
    /// CloudWatch-style alarms evaluated on the run's series (`[[alarms]]`).
    #[serde(default)]
    pub alarms: Vec<AlarmRule>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigSpec {
    pub host: String,
    #[serde(default)]
    pub title: Option<String>,
    /// Host licence for prices: `linux` (default), `windows`,
    /// `windows-sql-standard`, `windows-sql-enterprise` (licence-included
    /// SQL Server on Windows).
    #[serde(default)]
    pub license: Option<String>,
    /// The database engine on an RDS host (decides RDS storage striping):
    /// `sqlserver`, `postgres`, `mysql`, `mariadb`, `oracle`, `db2`.
    #[serde(default)]
    pub engine: Option<String>,
    /// Overrides the scenario's region for this config.
    #[serde(default)]
    pub region: Option<String>,
    /// Database server settings in force on this config, as the server
    /// spells them (`innodb_doublewrite = "OFF"`, `log_bin = "ON"`,
    /// `sync_binlog = 1`): over the profile's recorded ones and the
    /// managed service's rules. The database model reads the write path's.
    #[serde(default)]
    pub settings: IndexMap<String, toml::Value>,
    /// A burstable host's credit mode, as EC2's `CpuCredits`: `unlimited`
    /// (T3's default) or `standard`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_credits: Option<String>,
    pub pools: Vec<PoolSpec>,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    Data,
    Log,
    Tempdb,
    #[default]
    All,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Data => "data",
            Role::Log => "log",
            Role::Tempdb => "tempdb",
            Role::All => "all",
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// One device.
    Single,
    /// RAID-0 with a stripe unit (Storage Spaces simple, LVM, mdadm).
    Stripe,
    /// Files of one filegroup over several shares, proportional fill: each
    /// record on one share.
    Spread,
    /// On-premises RAID-6: two parity blocks per stripe.
    Raid6,
}

impl Layout {
    pub fn name(self) -> &'static str {
        match self {
            Layout::Single => "single",
            Layout::Stripe => "stripe",
            Layout::Spread => "spread",
            Layout::Raid6 => "raid6",
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum HostCacheMode {
    None,
    Readonly,
    Readwrite,
}

impl HostCacheMode {
    pub fn name(self) -> &'static str {
        match self {
            HostCacheMode::None => "none",
            HostCacheMode::Readonly => "readonly",
            HostCacheMode::Readwrite => "readwrite",
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Bursting {
    /// The device's free credit bursting, where it has one (default).
    Credit,
    /// Azure Premium SSD on-demand bursting (P30 and larger, billed).
    OnDemand,
    /// No bursting at all.
    None,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PoolSpec {
    #[serde(default)]
    pub role: Role,
    pub device: String,
    #[serde(default = "one")]
    pub count: u32,
    #[serde(default)]
    pub layout: Option<Layout>,
    #[serde(default)]
    pub stripe_kib: Option<u32>,
    #[serde(default)]
    pub host_cache: Option<HostCacheMode>,
    #[serde(default)]
    pub size_gib: Option<f64>,
    #[serde(default)]
    pub iops: Option<f64>,
    #[serde(default)]
    pub throughput_mib_s: Option<f64>,
    /// The same in decimal MB/s (Azure Ultra Disk's unit); give one.
    #[serde(default)]
    pub throughput_mb_s: Option<f64>,
    #[serde(default)]
    pub storage_gib: Option<f64>,
    #[serde(default)]
    pub path: Option<crate::catalog::PathKind>,
    #[serde(default)]
    pub mpio_paths: Option<u32>,
    #[serde(default)]
    pub bursting: Option<Bursting>,
    /// FSx deployment type for prices: `multi-az` (default) or `single-az`.
    #[serde(default)]
    pub deployment: Option<String>,
}

fn one() -> u32 {
    1
}

impl PoolSpec {
    /// One device of `device` in `role`, everything else as a scenario
    /// leaves it unset.
    pub fn new(role: Role, device: &str) -> PoolSpec {
        PoolSpec {
            role,
            device: device.to_string(),
            count: 1,
            layout: None,
            stripe_kib: None,
            host_cache: None,
            size_gib: None,
            iops: None,
            throughput_mib_s: None,
            throughput_mb_s: None,
            storage_gib: None,
            path: None,
            mpio_paths: None,
            bursting: None,
            deployment: None,
        }
    }
}

impl ScenarioFile {
    pub fn from_toml(file: &str, text: &str) -> Result<ScenarioFile> {
        let de = toml::Deserializer::new(text);
        let sc: ScenarioFile = serde_path_to_error::deserialize(de).map_err(|e| from_toml_error(file, text, e, false))?;
        for (i, a) in sc.alarms.iter().enumerate() {
            validate_alarm(a, file, i, &sc)?;
        }
        Ok(sc)
    }
}

/// One `[[alarms]]` entry: the record's own alarm type (crates/storlab-record
/// `alarms`), the same one its evaluation reads.
pub use storlab_record::alarms::AlarmRule;

/// CloudWatch's comparison operators for static thresholds, with the
/// symbol used in alarm reasons.
pub use storlab_record::alarms::COMPARISONS as ALARM_COMPARISONS;

/// CloudWatch statistics an alarm may use on the series.
pub const ALARM_STATISTICS: [&str; 5] = ["Average", "Sum", "Minimum", "Maximum", "SampleCount"];

/// The metrics the engines write as series (storlab-sim's `series`): EBS
/// volume, RDS instance and EC2 instance-burst metrics. Extend it when an
/// engine writes a new one.
pub const SERIES_METRICS: [&str; 17] = [
    "VolumeReadOps",
    "VolumeWriteOps",
    "VolumeReadBytes",
    "VolumeWriteBytes",
    "VolumeTotalReadTime",
    "VolumeTotalWriteTime",
    "VolumeQueueLength",
    "BurstBalance",
    "ReadIOPS",
    "WriteIOPS",
    "ReadLatency",
    "WriteLatency",
    "ReadThroughput",
    "WriteThroughput",
    "DiskQueueDepth",
    "EBSIOBalance%",
    "EBSByteBalance%",
];

/// Checks one `[[alarms]]` entry against CloudWatch's names and the
/// scenario's configs.
fn validate_alarm(this: &AlarmRule, file: &str, i: usize, sc: &ScenarioFile) -> Result<()> {
    use crate::error::{nearest, Location, ModelError};
    let entry = format!("alarms[{i}] ({})", this.name);
    let bad = |field: &str, msg: String| Err(ModelError::invalid(Location::new(file, &entry, field), msg));
    let one_of = |wanted: &str, all: &[&str]| match nearest(wanted, all.iter().copied()) {
        Some(s) => format!("unknown value '{wanted}' — did you mean '{s}'?"),
        None => format!("unknown value '{wanted}' — one of {}", all.join(", ")),
    };
    if this.name.trim().is_empty() {
        return bad("name", "an alarm needs a name — e.g. \"burst-below-half\"".into());
    }
    if !SERIES_METRICS.contains(&this.metric.as_str()) {
        return bad("metric", one_of(&this.metric, &SERIES_METRICS));
    }
    if !ALARM_STATISTICS.contains(&this.statistic.as_str()) {
        return bad("statistic", one_of(&this.statistic, &ALARM_STATISTICS));
    }
    let names: Vec<&str> = ALARM_COMPARISONS.iter().map(|c| c.0).collect();
    if !names.contains(&this.comparison.as_str()) {
        return bad("comparison", one_of(&this.comparison, &names));
    }
    if !(this.period_s.is_finite() && this.period_s > 0.0) {
        return bad("period_s", format!("{} is not a positive number of seconds — e.g. 60", this.period_s));
    }
    if !this.threshold.is_finite() {
        return bad("threshold", "the threshold must be a finite number".into());
    }
    if this.evaluation_periods == 0 {
        return bad("evaluation_periods", "0 periods — at least 1".into());
    }
    let m = this.datapoints();
    if m == 0 || m > this.evaluation_periods {
        return bad(
            "datapoints_to_alarm",
            format!("{m} out of {} periods — M must be between 1 and evaluation_periods ({})", this.evaluation_periods, this.evaluation_periods),
        );
    }
    if let Some(c) = &this.config {
        if !sc.configs.contains_key(c) {
            let s = nearest(c, sc.configs.keys().map(|k| k.as_str())).or_else(|| sc.configs.keys().next().cloned());
            return bad("config", format!("no config '{c}' in the scenario{}", s.map(|s| format!(" — did you mean '{s}'?")).unwrap_or_default()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "[configs.a]\nhost = \"aws/ec2/m5.large\"\n[[configs.a.pools]]\ndevice = \"aws/ebs/gp2\"\nsize_gib = 100\n";

    fn with_alarm(fields: &str) -> Result<ScenarioFile> {
        let text = format!("{BASE}[[alarms]]\nname = \"low\"\nmetric = \"BurstBalance\"\nthreshold = 50\n{fields}");
        ScenarioFile::from_toml("s.toml", &text)
    }

    #[test]
    fn an_alarm_parses_with_cloudwatch_defaults() {
        let sc = with_alarm("comparison = \"LessThanThreshold\"\nevaluation_periods = 3\n").unwrap();
        let a = &sc.alarms[0];
        // CloudWatch: datapoints_to_alarm omitted means M = N.
        assert_eq!((a.statistic.as_str(), a.period_s, a.datapoints()), ("Average", 60.0, 3));
        assert!(a.breaches(49.9) && !a.breaches(50.0));
    }

    #[test]
    fn bad_alarm_fields_name_the_entry_and_the_nearest_value() {
        let e = with_alarm("comparison = \"LessThan\"\n").unwrap_err().to_string();
        assert_eq!(e, "s.toml: alarms[0] (low).comparison: unknown value 'LessThan' — did you mean 'LessThanThreshold'?");
        let e = with_alarm("comparison = \"LessThanThreshold\"\nevaluation_periods = 2\ndatapoints_to_alarm = 3\n").unwrap_err().to_string();
        assert!(e.starts_with("s.toml: alarms[0] (low).datapoints_to_alarm: 3 out of 2 periods"), "{e}");
        let e = with_alarm("comparison = \"LessThanThreshold\"\nconfig = \"b\"\n").unwrap_err().to_string();
        assert!(e.contains("alarms[0] (low).config: no config 'b'"), "{e}");
        let e = with_alarm("comparison = \"LessThanThreshold\"\nstatistic = \"Averge\"\n").unwrap_err().to_string();
        assert!(e.contains(".statistic: unknown value 'Averge' — did you mean 'Average'?"), "{e}");
    }
}
