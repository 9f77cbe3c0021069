//! The scenario's `[workload]` table: a CrystalDiskMark preset
//! (`profile`), a fio job file (`fio`, relative to the scenario), or inline
//! `[[workload.jobs]]` in fio's names; plus `duration_s` (simulated time per
//! job where time matters), `seed` and `period_s` (the metrics period).

use crate::job::{Job, Pattern};
use crate::presets::Preset;
use crate::WorkloadError;
use std::path::Path;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    pub jobs: Vec<Job>,
    /// Where the jobs came from: `cdm-default`, `jobs/oltp.fio`, `inline`.
    pub source: String,
    /// Idle time between jobs (CrystalDiskMark's interval; 0 for fio).
    pub interval: Duration,
    pub seed: u64,
    /// CloudWatch-style series period.
    pub period: Duration,
}

pub const FIELDS: &[&str] = &["profile", "fio", "jobs", "duration_s", "seed", "period_s"];
pub const JOB_FIELDS: &[&str] = &[
    "name", "rw", "rwmixread", "bs", "iodepth", "numjobs", "size", "runtime_s", "ramp_s", "rate_iops",
    "thinktime_us", "loops", "pool", "arrival_iops", "stonewall", "new_group", "group_reporting",
];

fn err(file: &str, field: &str, message: impl Into<String>) -> WorkloadError {
    // A value echoed in the message may hold line breaks: the message stays one line.
    let message: String = message.into().chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    WorkloadError::Field { file: file.into(), field: field.into(), message }
}

/// Reads `[workload]`. `file` is the scenario's name for errors, `dir` its
/// folder (fio paths are relative to it).
pub fn from_table(file: &str, dir: &Path, t: Option<&toml::Table>) -> Result<Workload, WorkloadError> {
    let empty = toml::Table::new();
    let t = t.unwrap_or(&empty);
    for k in t.keys() {
        if !FIELDS.contains(&k.as_str()) {
            let near = crate::nearest(k, FIELDS.iter().copied()).map(|s| format!(" — did you mean '{s}'?")).unwrap_or_default();
            return Err(err(file, &format!("workload.{k}"), format!("unknown field{near}")));
        }
    }
    let int = |k: &str| -> Result<Option<u64>, WorkloadError> {
        match t.get(k) {
            None => Ok(None),
            Some(toml::Value::Integer(i)) if *i >= 0 => Ok(Some(*i as u64)),
            Some(toml::Value::Float(f)) if *f >= 0.0 && f.fract() == 0.0 => Ok(Some(*f as u64)),
            Some(v) => Err(err(file, &format!("workload.{k}"), format!("expected a whole number ≥ 0, got {v}"))),
        }
    };
    let seed = int("seed")?.unwrap_or(1);
    let period = Duration::from_secs(int("period_s")?.unwrap_or(60));
    if period.is_zero() {
        return Err(err(file, "workload.period_s", "must be at least 1 — nearest valid value 1"));
    }
    let duration = int("duration_s")?.map(Duration::from_secs);
    let sources = ["profile", "fio", "jobs"].iter().filter(|k| t.contains_key(**k)).count();
    if sources > 1 {
        return Err(err(file, "workload", "give one of profile, fio or [[workload.jobs]], not several"));
    }
    let (mut jobs, source, interval) = if let Some(v) = t.get("profile") {
        let name = v.as_str().ok_or_else(|| err(file, "workload.profile", "expected a preset name such as \"cdm-default\""))?;
        let p = Preset::by_name(name)?;
        (p.jobs(), name.to_string(), p.interval)
    } else if let Some(v) = t.get("fio") {
        let rel = v.as_str().ok_or_else(|| err(file, "workload.fio", "expected the path of a fio job file"))?;
        let path = dir.join(rel);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| err(file, "workload.fio", format!("cannot read {}: {e}", path.display())))?;
        (crate::fio::parse(&path.display().to_string(), &text)?, rel.to_string(), Duration::ZERO)
    } else if let Some(v) = t.get("jobs") {
        let arr = v.as_array().ok_or_else(|| err(file, "workload.jobs", "expected [[workload.jobs]] tables"))?;
        let mut jobs = Vec::new();
        for (i, j) in arr.iter().enumerate() {
            let jt = j.as_table().ok_or_else(|| err(file, &format!("workload.jobs[{i}]"), "expected a table"))?;
            jobs.push(inline_job(file, i, jt)?);
        }
        if jobs.is_empty() {
            return Err(err(file, "workload.jobs", "no jobs: add at least one [[workload.jobs]]"));
        }
        (jobs, "inline".to_string(), Duration::ZERO)
    } else {
        let p = Preset::by_name("cdm-default")?;
        (p.jobs(), "cdm-default".to_string(), p.interval)
    };
    if let Some(d) = duration {
        if d.is_zero() {
            return Err(err(file, "workload.duration_s", "must be at least 1 — nearest valid value 1"));
        }
        // Simulated time per job where time matters: one measured stretch.
        for j in &mut jobs {
            j.runtime = Some(d);
            j.time_based = true;
            j.loops = 1;
        }
    }
    Ok(Workload { jobs, source, interval, seed, period })
}

fn inline_job(file: &str, i: usize, t: &toml::Table) -> Result<Job, WorkloadError> {
    let at = |k: &str| format!("workload.jobs[{i}].{k}");
    for k in t.keys() {
        if !JOB_FIELDS.contains(&k.as_str()) {
            let near = crate::nearest(k, JOB_FIELDS.iter().copied()).map(|s| format!(" — did you mean '{s}'?")).unwrap_or_default();
            return Err(err(file, &at(k), format!("unknown field{near}")));
        }
    }
    let s = |k: &str| t.get(k).map(|v| match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    let size = |k: &str, v: &str| parse_size(v).ok_or_else(|| err(file, &at(k), format!("'{v}' is not a size (e.g. 4k, 64KiB, 1m, 1g, 500MB)")));
    let rw_s = s("rw").ok_or_else(|| err(file, &at("rw"), "missing: read, write, randread, randwrite, rw or randrw"))?;
    let rw = Pattern::parse(&rw_s).ok_or_else(|| err(file, &at("rw"), format!("'{rw_s}' — use read, write, randread, randwrite, rw or randrw")))?;
    let mut j = Job::new("", rw);
    let num = |k: &str| -> Result<Option<u64>, WorkloadError> {
        match t.get(k) {
            None => Ok(None),
            Some(toml::Value::Integer(v)) if *v >= 0 => Ok(Some(*v as u64)),
            Some(v) => Err(err(file, &at(k), format!("expected a whole number ≥ 0, got {v}"))),
        }
    };
    let pos = |k: &str, v: u64| -> Result<u32, WorkloadError> {
        if v == 0 || v > u64::from(u32::MAX) {
            Err(err(file, &at(k), format!("{v} is out of range — nearest valid value 1")))
        } else {
            Ok(v as u32)
        }
    };
    if let Some(v) = num("rwmixread")? {
        if v > 100 {
            return Err(err(file, &at("rwmixread"), format!("{v} is not a percentage — nearest valid value 100")));
        }
        j.rwmixread = v as u8;
    }
    if let Some(v) = s("bs") {
        j.bs_bytes = size("bs", &v)?;
    }
    if let Some(v) = s("size") {
        j.size_bytes = size("size", &v)?;
    }
    if j.bs_bytes == 0 || j.bs_bytes > j.size_bytes {
        return Err(err(file, &at("bs"), format!("block size {} must be between 1 byte and size {}", j.bs_bytes, j.size_bytes)));
    }
    if let Some(v) = num("iodepth")? {
        j.iodepth = pos("iodepth", v)?;
    }
    if let Some(v) = num("numjobs")? {
        j.numjobs = pos("numjobs", v)?;
    }
    if let Some(v) = num("loops")? {
        j.loops = pos("loops", v)?;
    }
    if let Some(v) = num("rate_iops")? {
        j.rate_iops = Some(u64::from(pos("rate_iops", v)?));
    }
    if let Some(v) = t.get("arrival_iops") {
        let rate = match v {
            toml::Value::Integer(i) => *i as f64,
            toml::Value::Float(f) => *f,
            other => return Err(err(file, &at("arrival_iops"), format!("expected a number, got {other}"))),
        };
        if !(rate > 0.0 && rate.is_finite()) {
            return Err(err(file, &at("arrival_iops"), format!("{rate} must be a positive rate — e.g. 1000")));
        }
        j.arrival_iops = Some(rate);
    }
    if let Some(v) = num("runtime_s")? {
        j.runtime = Some(Duration::from_secs(v));
        j.time_based = true;
    }
    if let Some(v) = num("ramp_s")? {
        j.ramp_time = Duration::from_secs(v);
    }
    if let Some(v) = num("thinktime_us")? {
        j.thinktime = Duration::from_micros(v);
    }
    for (k, flag) in [("stonewall", &mut j.stonewall), ("new_group", &mut j.new_group), ("group_reporting", &mut j.group_reporting)] {
        if let Some(v) = t.get(k) {
            *flag = v.as_bool().ok_or_else(|| err(file, &at(k), format!("expected true or false, got {v}")))?;
        }
    }
    if let Some(v) = t.get("pool") {
        j.pool = Some(v.as_str().ok_or_else(|| err(file, &at("pool"), "expected a pool role: data, log, tempdb or all"))?.to_string());
    }
    j.direct = true;
    j.name = s("name").unwrap_or_else(|| j.cdm_name());
    Ok(j)
}

pub use crate::units::parse_size;

#[cfg(test)]
mod tests {
    use super::*;

    fn table(s: &str) -> toml::Table {
        let v: toml::Table = toml::from_str(s).unwrap();
        v["workload"].as_table().unwrap().clone()
    }

    // A value with a line break (found by the workload fuzz target) is
    // echoed on the message's one line.
    #[test]
    fn a_value_with_a_line_break_gives_one_line() {
        let t = table("[workload]\n[[workload.jobs]]\nrw = \"randread\"\nbs = \"\\nbs = \"\n");
        let e = from_table("s.toml", Path::new("."), Some(&t)).unwrap_err().to_string();
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains("is not a size"), "{e}");
    }

    #[test]
    fn inline_job_in_fio_terms() {
        let t = table("[workload]\nduration_s = 4000\n[[workload.jobs]]\nrw = \"randwrite\"\nbs = \"16k\"\niodepth = 64\n");
        let w = from_table("s.toml", Path::new("."), Some(&t)).unwrap();
        let j = &w.jobs[0];
        assert_eq!((j.name.as_str(), j.bs_bytes, j.iodepth), ("RND16K-Q64T1-write", 16384, 64));
        assert_eq!(j.runtime, Some(Duration::from_secs(4000)));
        assert_eq!(w.period, Duration::from_secs(60));
    }

    // 64MB = 64 × 10^6 bytes, 64MiB = 64 × 2^20 = 67,108,864, 4k = 4,096.
    #[test]
    fn scenario_sizes_say_what_they_mean() {
        assert_eq!(parse_size("64MB"), Some(64_000_000));
        assert_eq!(parse_size("64MiB"), Some(67_108_864));
        assert_eq!(parse_size("4k"), Some(4096));
        assert_eq!(parse_size("4KiB"), Some(4096));
        assert_eq!(parse_size("1g"), Some(1 << 30));
        assert_eq!(parse_size("lots"), None);
        let t = table("[workload]\n[[workload.jobs]]\nrw = \"read\"\nbs = \"1MB\"\nsize = \"100MB\"\n");
        let j = &from_table("s.toml", Path::new("."), Some(&t)).unwrap().jobs[0];
        assert_eq!((j.bs_bytes, j.size_bytes), (1_000_000, 100_000_000));
    }

    #[test]
    fn default_is_cdm_default() {
        let w = from_table("s.toml", Path::new("."), None).unwrap();
        assert_eq!(w.source, "cdm-default");
        assert_eq!(w.jobs.len(), 8);
    }

    #[test]
    fn bad_workloads_name_the_field() {
        for (text, needle) in [
            ("[workload]\nprofile = \"cdm-defualt\"\n", "did you mean 'cdm-default'"),
            ("[workload]\nprofle = \"cdm-default\"\n", "workload.profle: unknown field — did you mean 'profile'"),
            ("[workload]\n[[workload.jobs]]\nbs = \"4k\"\n", "workload.jobs[0].rw"),
            ("[workload]\n[[workload.jobs]]\nrw = \"randread\"\niodepth = 0\n", "workload.jobs[0].iodepth"),
            ("[workload]\nfio = \"nope.fio\"\n", "cannot read"),
        ] {
            let e = from_table("s.toml", Path::new("/nonexistent"), Some(&table(text))).unwrap_err().to_string();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }
}
