//! The scenario's `[workload.database]` table (DESIGN.md, "Database
//! workloads on a modelled deployment"): a recorded profile (`profile`, a
//! shipped name or a file relative to the scenario), its `scale` in the
//! profile's unit, the virtual-user counts (`vus`, a list or `"auto"`:
//! steps of √2 from 1, HammerDB's autopilot, until the tipping point is
//! passed), `rampup_s`, `duration_s`, and optionally the memory left to the
//! database's cache (`db_memory_gib`), a mean think time between a
//! user's transactions (`think_time_ms`) and how users get their home
//! warehouses (`home_warehouses`: `round-robin`, as storlab's driver, or
//! `random`, as HammerDB) and the age at which a dirtied data page is
//! written (`writeback_delay_s`).
//!
//! Shipped profiles are looked up in one place: the folder the caller
//! passes (the Python package's `profiles/`), so a profile recorded with
//! `bench db --profile-out` into that folder is used without a rebuild.

use crate::profile::Profile;
use crate::WorkloadError;
use std::path::{Path, PathBuf};

/// Fields of `[workload.database]`.
pub const FIELDS: &[&str] =
    &["profile", "scale", "vus", "rampup_s", "duration_s", "db_memory_gib", "think_time_ms", "max_vus", "usl_alpha", "usl_beta", "home_warehouses", "writeback_delay_s", "steady_state", "accept_suspect", "rows_per_user", "cold_cache"];
/// Fields of `[workload]` beside a database workload.
pub const WORKLOAD_FIELDS: &[&str] = &["database", "seed", "period_s"];

/// An automatic sweep stops here at the latest.
pub const AUTO_MAX_VUS: u32 = 4096;

#[derive(Debug, Clone, PartialEq)]
pub enum Vus {
    List(Vec<u32>),
    /// Steps of √2 from 1 (1, 2, 3, 4, 6, 8, 11, 16, ...) until the
    /// tipping point is passed or `max` is reached.
    Auto { max: u32 },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Database {
    /// The profile as the scenario names it.
    pub profile_ref: String,
    /// Where it was read from.
    pub profile_file: PathBuf,
    pub profile: Profile,
    pub scale: f64,
    pub vus: Vus,
    pub rampup_s: f64,
    pub duration_s: f64,
    pub db_memory_gib: Option<f64>,
    pub think_time_ms: f64,
    /// The USL's α and β in place of the profile's (both or neither).
    pub usl: Option<(f64, f64)>,
    /// Home warehouses (scale units) drawn at random per user, as HammerDB
    /// does, rather than round-robin, as storlab's driver does.
    pub random_homes: bool,
    /// Age at which a dirtied data page reaches the data pool, s; `None`
    /// for the model's default (the kernel's write-back age).
    pub writeback_delay_s: Option<f64>,
    /// End each VU count's window once its throughput is steady (the
    /// simulator's `STEADY_*` rule) rather than at `duration_s`.
    pub steady_state: bool,
    /// Simulate a suspect profile (`Profile::health`) with a warning
    /// rather than refuse it (`accept_suspect`, `--accept-suspect`).
    pub accept_suspect: bool,
    /// The insert storm's rows per user: each result then says when all
    /// the users' rows are in (`finish_s`).
    pub rows_per_user: Option<f64>,
    /// The database's cache (and a host read cache) start empty and fill
    /// one page a miss, as after a restart; `false`: warm, as HammerDB and
    /// sysbench measure after their ramp-up.
    pub cold_cache: bool,
    pub seed: u64,
    pub period_s: f64,
}

pub use storlab_record::db::auto_steps;

pub(crate) fn err(file: &str, field: &str, message: impl Into<String>) -> WorkloadError {
    WorkloadError::Field { file: file.into(), field: field.into(), message: message.into() }
}

/// `[workload] seed`: a whole number ≥ 0, 1 when not given.
pub(crate) fn seed(file: &str, t: &toml::Table) -> Result<u64, WorkloadError> {
    match t.get("seed") {
        None => Ok(1),
        Some(toml::Value::Integer(i)) if *i >= 0 => Ok(*i as u64),
        Some(v) => Err(err(file, "workload.seed", format!("expected a whole number ≥ 0, got {v}"))),
    }
}

/// The shipped profiles of one `kind` in `dir` (file stems of `*.toml`
/// whose `kind` line names it), sorted.
pub fn shipped_profiles(dir: &Path, kind: &str) -> Vec<String> {
    let line = format!("kind = \"{kind}\"");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().and_then(|x| x.to_str()) == Some("toml"))
                .filter(|p| std::fs::read_to_string(p).is_ok_and(|t| t.lines().any(|l| l.trim() == line)))
                .filter_map(|p| p.file_stem()?.to_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// A profile named in a scenario: a shipped name of `kind` or a path
/// relative to the scenario. Returns where it is and its text.
pub fn read_profile(file: &str, field: &str, dir: &Path, profiles_dir: &Path, kind: &str, pref: &str) -> Result<(PathBuf, String), WorkloadError> {
    let shipped = shipped_profiles(profiles_dir, kind);
    let list = if shipped.is_empty() { "none found".to_string() } else { shipped.join(", ") };
    let is_path = pref.ends_with(".toml") || pref.contains('/') || pref.contains('\\');
    let path = if is_path { dir.join(pref) } else { profiles_dir.join(format!("{pref}.toml")) };
    if !is_path && !shipped.iter().any(|s| s == pref) {
        let near = crate::nearest(pref, shipped.iter().map(|s| s.as_str())).map(|s| format!(" — did you mean '{s}'?")).unwrap_or_default();
        return Err(err(file, field, format!("unknown profile '{pref}'{near} — shipped profiles: {list}; or give a file path ending in .toml")));
    }
    let text = std::fs::read_to_string(&path).map_err(|e| err(file, field, format!("cannot read {}: {e}", path.display())))?;
    Ok((path, text))
}

/// True when the scenario's `[workload]` table holds a database workload.
pub fn is_database(t: Option<&toml::Table>) -> bool {
    t.is_some_and(|t| t.contains_key("database"))
}

fn number(file: &str, field: &str, v: &toml::Value) -> Result<f64, WorkloadError> {
    match v {
        toml::Value::Integer(i) => Ok(*i as f64),
        toml::Value::Float(f) if f.is_finite() => Ok(*f),
        other => Err(err(file, field, format!("expected a number, got {other}"))),
    }
}

/// Reads `[workload]` with its `[workload.database]`. `file` names the
/// scenario in errors, `dir` is its folder (profile paths are relative to
/// it), `profiles_dir` the folder of the shipped profiles.
pub fn from_table(file: &str, dir: &Path, profiles_dir: &Path, t: &toml::Table) -> Result<Database, WorkloadError> {
    for k in t.keys() {
        if !WORKLOAD_FIELDS.contains(&k.as_str()) {
            let near = crate::nearest(k, WORKLOAD_FIELDS.iter().copied()).map(|s| format!(" — did you mean '{s}'?")).unwrap_or_default();
            return Err(err(file, &format!("workload.{k}"), format!("not used with [workload.database]{near} (the database's own fields go in [workload.database])")));
        }
    }
    let seed = seed(file, t)?;
    let period_s = match t.get("period_s") {
        None => 60.0,
        Some(v) => number(file, "workload.period_s", v)?,
    };
    if !(period_s >= 1.0) {
        return Err(err(file, "workload.period_s", format!("{period_s} — must be at least 1 — nearest valid value 1")));
    }
    let db = t.get("database").and_then(|v| v.as_table()).ok_or_else(|| err(file, "workload.database", "expected a table: [workload.database]"))?;
    let at = |k: &str| format!("workload.database.{k}");
    for k in db.keys() {
        if !FIELDS.contains(&k.as_str()) {
            let near = crate::nearest(k, FIELDS.iter().copied()).map(|s| format!(" — did you mean '{s}'?")).unwrap_or_default();
            return Err(err(file, &at(k), format!("unknown field{near}")));
        }
    }

    // The profile: a shipped name, or a file relative to the scenario.
    let shipped = shipped_profiles(profiles_dir, "storlab-db-profile");
    let list = if shipped.is_empty() { "none found".to_string() } else { shipped.join(", ") };
    let pref = db
        .get("profile")
        .ok_or_else(|| err(file, &at("profile"), format!("missing — a shipped profile ({list}) or a file from `storlab bench db --profile-out`")))?;
    let pref = pref.as_str().ok_or_else(|| err(file, &at("profile"), format!("expected a profile name ({list}) or a file path")))?;
    let (path, text) = read_profile(file, &at("profile"), dir, profiles_dir, "storlab-db-profile", pref)?;
    let profile = Profile::from_toml(&path.display().to_string(), &text).map_err(|e| err(file, &at("profile"), e.to_string()))?;

    let scale = match db.get("scale") {
        None => return Err(err(file, &at("scale"), format!("missing — the database's size in {}s (the profile was recorded at {})", profile.scale_unit, recorded_scale(&profile)))),
        Some(v) => number(file, &at("scale"), v)?,
    };
    if !(scale > 0.0 && scale <= 1e9) {
        return Err(err(file, &at("scale"), match scale > 1e9 {
            true => format!("{scale} {}s — the scale must be at most 1e9 — nearest valid value 1000000000", profile.scale_unit),
            false => format!("{scale} {}s — the scale must be above 0 — nearest valid value 1", profile.scale_unit),
        }));
    }

    let vus = vus_field(file, db)?;

    let secs = |k: &str, default: f64, min: f64| -> Result<f64, WorkloadError> {
        let v = match db.get(k) {
            None => default,
            Some(v) => number(file, &at(k), v)?,
        };
        if !(v >= min) {
            return Err(err(file, &at(k), format!("{v} — must be at least {min} — nearest valid value {min}")));
        }
        // A year: longer than any run, short of an endless one.
        if !(v <= crate::fio::MAX_TIME_S) {
            return Err(err(file, &at(k), format!("{v} — must be at most a year — nearest valid value {}", crate::fio::MAX_TIME_S)));
        }
        Ok(v)
    };
    let rampup_s = secs("rampup_s", 60.0, 0.0)?;
    let duration_s = secs("duration_s", 600.0, 1.0)?;
    let think_time_ms = secs("think_time_ms", 0.0, 0.0)?;
    let db_memory_gib = match db.get("db_memory_gib") {
        None => None,
        Some(v) => {
            let g = number(file, &at("db_memory_gib"), v)?;
            if !(g > 0.0 && g <= 1e6) {
                return Err(err(file, &at("db_memory_gib"), format!("{g} GiB — must be above 0 and at most 1e6 — e.g. 1")));
            }
            Some(g)
        }
    };
    let usl = usl_field(file, db, &profile)?;
    let random_homes = match db.get("home_warehouses") {
        None => false,
        Some(v) => match v.as_str() {
            Some("round-robin") => false,
            Some("random") => true,
            _ => {
                let got = v.as_str().map_or_else(|| v.to_string(), |s| format!("'{s}'"));
                return Err(err(file, &at("home_warehouses"), format!("{got} — one of \"round-robin\" (storlab's driver) or \"random\" (HammerDB)")));
            }
        },
    };
    let writeback_delay_s = match db.get("writeback_delay_s") {
        None => None,
        Some(_) => Some(secs("writeback_delay_s", 0.0, 0.0)?),
    };
    let steady_state = match db.get("steady_state") {
        None => false,
        Some(toml::Value::Boolean(b)) => *b,
        Some(v) => return Err(err(file, &at("steady_state"), format!("{v} — give true (end each window once its throughput is steady) or false (run duration_s whole)"))),
    };
    let accept_suspect = match db.get("accept_suspect") {
        None => false,
        Some(toml::Value::Boolean(b)) => *b,
        Some(v) => return Err(err(file, &at("accept_suspect"), format!("{v} — give true (simulate a suspect profile with a warning) or false (refuse it)"))),
    };
    let cold_cache = match db.get("cold_cache") {
        None => false,
        Some(toml::Value::Boolean(b)) => *b,
        Some(v) => return Err(err(file, &at("cold_cache"), format!("{v} — give true (the caches start empty, as after a restart) or false (warm, as after a ramp-up)"))),
    };
    let rows_per_user = match db.get("rows_per_user") {
        None => None,
        Some(v) => {
            let n = number(file, &at("rows_per_user"), v)?;
            if !profile.transactions.iter().any(|t| t.rows_per_txn.is_some()) {
                return Err(err(file, &at("rows_per_user"), format!("the profile {} is not an insert storm's (no rows_per_txn) — drop rows_per_user, or use insert-postgresql or insert-mariadb", profile.name)));
            }
            if !(n >= 1.0 && n <= 1e12) {
                return Err(err(file, &at("rows_per_user"), format!("{n} — must be a row count from 1 to 1e12 — e.g. 100000")));
            }
            Some(n)
        }
    };
    Ok(Database { profile_ref: pref.to_string(), profile_file: path, profile, scale, vus, rampup_s, duration_s, db_memory_gib, think_time_ms, usl, random_homes, writeback_delay_s, steady_state, accept_suspect, rows_per_user, cold_cache, seed, period_s })
}

/// `vus`: a list of counts, or "auto" with its `max_vus`.
fn vus_field(file: &str, db: &toml::Table) -> Result<Vus, WorkloadError> {
    let at = |k: &str| format!("workload.database.{k}");
    Ok(match db.get("vus") {
        None => return Err(err(file, &at("vus"), "missing — a list of virtual-user counts such as [8, 16, 32], or \"auto\"")),
        Some(toml::Value::String(s)) if s == "auto" => {
            let max = match db.get("max_vus") {
                None => AUTO_MAX_VUS,
                Some(toml::Value::Integer(i)) if *i >= 1 && *i <= i64::from(AUTO_MAX_VUS) => *i as u32,
                Some(v) => return Err(err(file, &at("max_vus"), format!("{v} — a whole number from 1 to {AUTO_MAX_VUS} — nearest valid value {}", nearest_int(v, 1, i64::from(AUTO_MAX_VUS))))),
            };
            Vus::Auto { max }
        }
        Some(toml::Value::String(s)) => return Err(err(file, &at("vus"), format!("'{s}' — give a list such as [8, 16, 32] or \"auto\""))),
        Some(toml::Value::Array(a)) => {
            if a.is_empty() {
                return Err(err(file, &at("vus"), "empty — give at least one virtual-user count, e.g. [1], or \"auto\""));
            }
            let mut out = Vec::new();
            for (i, v) in a.iter().enumerate() {
                match v {
                    toml::Value::Integer(n) if *n >= 1 && *n <= 1_000_000 => out.push(*n as u32),
                    other => {
                        return Err(err(file, &format!("workload.database.vus[{i}]"), format!("{other} — a virtual-user count is a whole number from 1 to 1000000 — nearest valid value {}", nearest_int(other, 1, 1_000_000))))
                    }
                }
            }
            if db.contains_key("max_vus") {
                return Err(err(file, &at("max_vus"), "only with vus = \"auto\""));
            }
            Vus::List(out)
        }
        Some(other) => return Err(err(file, &at("vus"), format!("{other} — give a list such as [8, 16, 32] or \"auto\""))),
    })
}

/// `usl_alpha` and `usl_beta`: both, in [0, 1], or neither.
fn usl_field(file: &str, db: &toml::Table, profile: &Profile) -> Result<Option<(f64, f64)>, WorkloadError> {
    let at = |k: &str| format!("workload.database.{k}");
    Ok(match (db.get("usl_alpha"), db.get("usl_beta")) {
        (None, None) => None,
        (Some(a), Some(b)) => {
            let (a, b) = (number(file, &at("usl_alpha"), a)?, number(file, &at("usl_beta"), b)?);
            for (k, v) in [("usl_alpha", a), ("usl_beta", b)] {
                if !(0.0..=1.0).contains(&v) {
                    return Err(err(file, &at(k), format!("{v} — the USL's coefficients lie in [0, 1] — nearest valid value {}", v.clamp(0.0, 1.0))));
                }
            }
            Some((a, b))
        }
        (Some(_), None) => return Err(err(file, &at("usl_beta"), format!("missing beside usl_alpha — give both (the profile has usl_beta = {})", profile.concurrency.beta))),
        (None, Some(_)) => return Err(err(file, &at("usl_alpha"), format!("missing beside usl_beta — give both (the profile has usl_alpha = {})", profile.concurrency.alpha))),
    })
}

impl Database {
    /// The profile's health as the scenario takes it: with `accept` (the
    /// scenario's `accept_suspect` or `--accept-suspect`) one warning per
    /// suspect, else an error with one line per suspect and how to fix it.
    pub fn check_health(&self, file: &str, accept: bool) -> Result<Vec<String>, WorkloadError> {
        let suspects = self.profile.health();
        if suspects.is_empty() {
            return Ok(Vec::new());
        }
        let name = self.profile_file.display().to_string();
        if accept {
            return Ok(suspects.iter().map(|s| format!("profile {name} is suspect, simulated as accepted: {}: {}", s.field, s.reason)).collect());
        }
        Err(WorkloadError::Suspect { file: file.into(), profile: name, suspects: suspects.iter().map(|s| s.to_string()).collect() })
    }
}

fn recorded_scale(p: &Profile) -> String {
    p.provenance.get("scale").map_or_else(|| "an unrecorded scale".to_string(), |v| v.to_string())
}

fn nearest_int(v: &toml::Value, lo: i64, hi: i64) -> i64 {
    match v {
        toml::Value::Integer(i) => (*i).clamp(lo, hi),
        toml::Value::Float(f) if f.is_finite() => (f.round() as i64).clamp(lo, hi),
        _ => lo,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profiles() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/storlab/profiles")
    }

    fn read(body: &str) -> Result<Database, WorkloadError> {
        let t: toml::Table = toml::from_str(&format!("[workload]\n{body}")).unwrap();
        from_table("s.toml", Path::new("/nonexistent"), &profiles(), t["workload"].as_table().unwrap())
    }

    // HammerDB's autopilot steps: 1, 2, 3, 4, 6, 8, 11, 16, 23, 32, ...,
    // round(√2^k); the design's example continues 256, 362, 512, 724, 1024.
    #[test]
    fn auto_steps_are_powers_of_root_two() {
        assert_eq!(auto_steps(32), vec![1, 2, 3, 4, 6, 8, 11, 16, 23, 32]);
        assert!(auto_steps(1024).ends_with(&[256, 362, 512, 724, 1024]));
    }

    #[test]
    fn reads_a_shipped_profile_with_defaults() {
        let d = read("[workload.database]\nprofile = \"tpcc-postgresql\"\nscale = 100\nvus = [1, 2]\n").unwrap();
        assert_eq!((d.profile.name.as_str(), d.scale, d.rampup_s, d.duration_s, d.seed), ("tpcc-postgresql", 100.0, 60.0, 600.0, 1));
        assert_eq!(d.vus, Vus::List(vec![1, 2]));
        let d = read("[workload.database]\nprofile = \"tpcc-postgresql\"\nscale = 1\nvus = \"auto\"\nmax_vus = 64\n").unwrap();
        assert_eq!(d.vus, Vus::Auto { max: 64 });
    }

    #[test]
    fn bad_fields_are_one_line_with_file_entry_and_field() {
        for (body, needle) in [
            ("profile = \"tpcc-postgres\"\nscale = 1\nvus = [1]", "s.toml: workload.database.profile: unknown profile 'tpcc-postgres' — did you mean 'tpcc-postgresql'? — shipped profiles: insert-mariadb, insert-postgresql, sysbench-read-only-postgresql, sysbench-read-write-postgresql, tpcb-postgresql, tpcc-mariadb, tpcc-postgresql, tpce-postgresql"),
            ("profile = \"tpcc-postgresql\"\nscale = 0\nvus = [1]", "s.toml: workload.database.scale: 0 warehouses — the scale must be above 0 — nearest valid value 1"),
            ("profile = \"tpcc-postgresql\"\nscale = 2e9\nvus = [1]", "s.toml: workload.database.scale: 2000000000 warehouses — the scale must be at most 1e9 — nearest valid value 1000000000"),
            ("profile = \"tpcc-postgresql\"\nscale = 1\nvus = [1]\nduration_s = 1e9", "s.toml: workload.database.duration_s: 1000000000 — must be at most a year — nearest valid value 31536000"),
            ("profile = \"tpcc-postgresql\"\nscale = 1\nvus = [4, 0]", "s.toml: workload.database.vus[1]: 0 — a virtual-user count is a whole number from 1 to 1000000 — nearest valid value 1"),
            ("profile = \"tpcc-postgresql\"\nscale = 1\nvus = []", "s.toml: workload.database.vus: empty"),
            ("profile = \"tpcc-postgresql\"\nscale = 1\nvus = [1]\nsclae = 2", "s.toml: workload.database.sclae: unknown field — did you mean 'scale'?"),
            ("profile = \"p.toml\"\nscale = 1\nvus = [1]", "s.toml: workload.database.profile: cannot read /nonexistent/p.toml"),
        ] {
            let e = read(&format!("[workload.database]\n{body}\n")).unwrap_err().to_string();
            assert!(e.starts_with(needle), "{body}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
