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
    /// Kept as TOML here; the workload engines own its meaning.
    #[serde(default)]
    pub workload: Option<toml::Table>,
    pub configs: IndexMap<String, ConfigSpec>,
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

impl ScenarioFile {
    pub fn from_toml(file: &str, text: &str) -> Result<ScenarioFile> {
        let de = toml::Deserializer::new(text);
        serde_path_to_error::deserialize(de).map_err(|e| from_toml_error(file, text, e, false))
    }
}
