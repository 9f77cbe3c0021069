//! The bulk import, a second kind of database workload: `[workload.import]`
//! loads `size_gib` of input into the database with `streams` parallel
//! COPY streams, reading the input from the pool of role `input_pool`
//! (default `data`). What each input byte costs — WAL, table and index
//! bytes, server CPU — comes from an import profile recorded on a real
//! server (`python -m storlab.db.import_profile`, kind
//! `storlab-import-profile`).

use crate::database::read_profile;
use crate::WorkloadError;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const FIELDS: &[&str] = &["profile", "size_gib", "streams", "input_pool"];
pub const WORKLOAD_FIELDS: &[&str] = &["import", "seed", "period_s"];
pub const ROLES: &[&str] = &["data", "log", "tempdb", "all"];

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct ImportProfile {
    pub schema_version: u32,
    pub kind: String,
    pub name: String,
    pub workload: String,
    /// Server CPU per MiB of input on the recording machine, µs.
    pub cpu_us_per_mib: f64,
    #[serde(default)]
    pub provenance: BTreeMap<String, toml::Value>,
    pub per_input_byte: PerInputByte,
}

/// What one byte of input becomes.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct PerInputByte {
    pub wal_bytes: f64,
    pub table_bytes: f64,
    pub index_bytes: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    pub profile_ref: String,
    pub profile_file: PathBuf,
    pub profile: ImportProfile,
    pub size_bytes: f64,
    pub streams: u32,
    pub input_pool: String,
    pub seed: u64,
    pub period_s: f64,
}

use crate::database::err;

pub fn is_import(t: Option<&toml::Table>) -> bool {
    t.is_some_and(|t| t.contains_key("import"))
}

impl ImportProfile {
    pub fn from_toml(file: &str, text: &str) -> Result<ImportProfile, WorkloadError> {
        let value: toml::Table = toml::from_str(text).map_err(|e| err(file, "profile", e.message().to_string()))?;
        match value.get("schema_version").and_then(|v| v.as_integer()) {
            Some(1) => {}
            Some(v) => {
                return Err(err(file, "schema_version", format!("{v} is not supported — this storlab reads schema_version 1; record the profile again with python -m storlab.db.import_profile")))
            }
            None => return Err(err(file, "schema_version", "missing — add schema_version = 1")),
        }
        let p: ImportProfile = toml::from_str(text).map_err(|e| err(file, "profile", e.message().to_string()))?;
        if p.kind != "storlab-import-profile" {
            return Err(err(file, "kind", format!("'{}' — an import profile has kind = \"storlab-import-profile\"", p.kind)));
        }
        let b = &p.per_input_byte;
        if [b.wal_bytes, b.table_bytes, b.index_bytes, p.cpu_us_per_mib].iter().any(|v| !(v.is_finite() && *v >= 0.0)) {
            return Err(err(file, "per_input_byte", "the costs must be numbers ≥ 0"));
        }
        Ok(p)
    }
}

/// Reads `[workload]` with its `[workload.import]`.
pub fn from_table(file: &str, dir: &Path, profiles_dir: &Path, t: &toml::Table) -> Result<Import, WorkloadError> {
    for k in t.keys() {
        if !WORKLOAD_FIELDS.contains(&k.as_str()) {
            return Err(err(file, &format!("workload.{k}"), "not used with [workload.import] (its own fields go in [workload.import])"));
        }
    }
    let seed = crate::database::seed(file, t)?;
    let period_s = match t.get("period_s") {
        None => 60.0,
        Some(toml::Value::Integer(i)) if *i >= 1 => *i as f64,
        Some(v) => return Err(err(file, "workload.period_s", format!("{v} — a whole number of seconds ≥ 1 — nearest valid value 60"))),
    };
    let im = t.get("import").and_then(|v| v.as_table()).ok_or_else(|| err(file, "workload.import", "expected a table: [workload.import]"))?;
    let at = |k: &str| format!("workload.import.{k}");
    for k in im.keys() {
        if !FIELDS.contains(&k.as_str()) {
            let near = crate::nearest(k, FIELDS.iter().copied()).map(|s| format!(" — did you mean '{s}'?")).unwrap_or_default();
            return Err(err(file, &at(k), format!("unknown field{near}")));
        }
    }
    let pref = im.get("profile").and_then(|v| v.as_str()).ok_or_else(|| err(file, &at("profile"), "missing — a shipped import profile such as \"import-postgresql\", or a file path"))?;
    let (path, text) = read_profile(file, &at("profile"), dir, profiles_dir, "storlab-import-profile", pref)?;
    let profile = ImportProfile::from_toml(&path.display().to_string(), &text).map_err(|e| err(file, &at("profile"), e.to_string()))?;
    let size_gib = match im.get("size_gib") {
        Some(toml::Value::Integer(i)) => *i as f64,
        Some(toml::Value::Float(f)) => *f,
        Some(v) => return Err(err(file, &at("size_gib"), format!("expected a number, got {v}"))),
        None => return Err(err(file, &at("size_gib"), "missing — the input's size in GiB, e.g. 100")),
    };
    if !(size_gib > 0.0 && size_gib.is_finite()) {
        return Err(err(file, &at("size_gib"), format!("{size_gib} GiB — must be above 0 — e.g. 1")));
    }
    let streams = match im.get("streams") {
        None => 1,
        Some(toml::Value::Integer(i)) if *i >= 1 && *i <= 1024 => *i as u32,
        Some(v) => return Err(err(file, &at("streams"), format!("{v} — a whole number from 1 to 1024 — nearest valid value 1"))),
    };
    let input_pool = match im.get("input_pool") {
        None => "data".to_string(),
        Some(toml::Value::String(s)) if ROLES.contains(&s.as_str()) => s.clone(),
        Some(v) => return Err(err(file, &at("input_pool"), format!("{v} — a pool role: data, log, tempdb or all"))),
    };
    Ok(Import { profile_ref: pref.to_string(), profile_file: path, profile, size_bytes: size_gib * (1u64 << 30) as f64, streams, input_pool, seed, period_s })
}
