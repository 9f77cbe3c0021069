//! fio `--output-format=json` and `json+` (fio's stat.c `show_thread_status_json`).
//!
//! One result per job and direction that did I/O (`read`, `write`, `trim`),
//! named `<jobname>-<dir>` unless the job name already ends in that
//! direction; one `<jobname>-sync` result where the job issued fsync or
//! fdatasync (fio's `sync` block: `total_ios`, `lat_ns`). Under
//! `group_reporting` fio already writes one entry per group; clones of a
//! job without it share a name and are told apart as `<jobname>.N`. In
//! client/server mode (`--client`) entries come under `client_stats`, each
//! with its `hostname`, which becomes the config.
//!
//! Latency: the mean and maximum of `lat_ns` (submission + completion),
//! percentiles of `clat_ns` (or of `lat_ns` under `lat_percentiles=1`);
//! json+ adds `bins`, which are not needed since fio prints the percentiles.

use super::{record, source, ImportError};
use crate::{IoColumns, JobResult, LatencySummary, Object, RunRecord};
use serde_json::Value;

fn err(file: &str, entry: &str, field: &str, message: impl Into<String>) -> ImportError {
    ImportError::Entry { file: file.into(), entry: entry.into(), field: field.into(), message: message.into() }
}

fn f(v: &Value, k: &str) -> f64 {
    match v.get(k) {
        Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
        Some(Value::String(s)) => s.parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

/// Latency columns (µs) from a direction's `lat_ns` / `clat_ns`.
fn latency(dir: &Value) -> LatencySummary {
    // fio prints N (samples); a block without it still counts.
    let counted = |l: &&Value| l.get("N").is_none_or(|n| n.as_f64().unwrap_or(0.0) > 0.0);
    let lat = dir.get("lat_ns").filter(counted);
    let clat = dir.get("clat_ns").filter(counted);
    let whole = lat.or(clat);
    let pct_src = [lat, clat].into_iter().flatten().find(|l| l.get("percentile").is_some());
    let p = |key: &str| pct_src.and_then(|l| l["percentile"].get(key)).and_then(|v| v.as_f64()).map(|v| v / 1000.0).unwrap_or(0.0);
    LatencySummary {
        lat_mean_us: whole.map(|l| f(l, "mean") / 1000.0).unwrap_or(0.0),
        lat_p50_us: p("50.000000"),
        lat_p90_us: p("90.000000"),
        lat_p99_us: p("99.000000"),
        lat_p999_us: p("99.900000"),
        lat_p9999_us: p("99.990000"),
        lat_max_us: whole.map(|l| f(l, "max") / 1000.0).unwrap_or(0.0),
    }
}

fn opt_u64(opts: &Object, key: &str) -> Option<u64> {
    opts.get(key).and_then(|v| v.as_str().and_then(|s| s.parse().ok()).or(v.as_u64()))
}

/// Reads fio's JSON (or json+) output.
pub fn read(file: &str, doc: &Value) -> Result<RunRecord, ImportError> {
    let version = doc.get("fio version").and_then(|v| v.as_str()).unwrap_or("fio");
    let (list, client) = match (doc.get("jobs"), doc.get("client_stats")) {
        (Some(j), _) => (j, false),
        (None, Some(c)) => (c, true),
        _ => return Err(err(file, "document", "jobs", "no 'jobs' or 'client_stats' array")),
    };
    let jobs = list.as_array().ok_or_else(|| err(file, "document", if client { "client_stats" } else { "jobs" }, "not an array"))?;
    let global: Object = doc.get("global options").and_then(|v| v.as_object()).cloned().unwrap_or_default();
    let mut info = source("fio", file);
    for k in ["time", "timestamp"] {
        if let Some(v) = doc.get(k) {
            info.insert(k.into(), v.clone());
        }
    }
    if !global.is_empty() {
        info.insert("global_options".into(), Value::Object(global.clone()));
    }
    if let Some(d) = doc.get("disk_util") {
        info.insert("disk_util".into(), d.clone());
    }
    let mut rec = record(version, version.trim_start_matches("fio-"), "fio", info);
    let config = "fio".to_string();
    let mut seen: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    let mut job_options = Object::new();
    for (i, j) in jobs.iter().enumerate() {
        let name = j.get("jobname").and_then(|v| v.as_str()).ok_or_else(|| err(file, &format!("jobs[{i}]"), "jobname", "missing"))?;
        let entry = format!("job '{name}'");
        if f(j, "error") != 0.0 {
            rec.warnings.push(format!("{file}: {entry}: fio reports error {} for this job", f(j, "error")));
        }
        let count = seen.entry(name.to_string()).or_insert(0);
        *count += 1;
        let clone = if *count > 1 { format!(".{}", *count - 1) } else { String::new() };
        let base = format!("{name}{clone}");
        let mut opts = global.clone();
        if let Some(o) = j.get("job options").and_then(|v| v.as_object()) {
            opts.extend(o.clone());
            job_options.insert(base.clone(), Value::Object(o.clone()));
        }
        let depth = opt_u64(&opts, "iodepth").unwrap_or(1);
        // Under group_reporting fio writes one entry for a job's numjobs
        // clones (and may not list the option); without it, one entry each.
        let entries = jobs.iter().filter(|o| o.get("jobname").and_then(|v| v.as_str()) == Some(name)).count() as u64;
        let numjobs = opt_u64(&opts, "numjobs").unwrap_or(1);
        let numjobs = if entries >= numjobs && !client { 1 } else { numjobs };
        let cfg = match j.get("hostname").and_then(|v| v.as_str()) {
            Some(h) if client => h.to_string(),
            _ => config.clone(),
        };
        let mut job_runtime_s = f(j, "job_runtime") / 1000.0;
        for dir in ["read", "write", "trim"] {
            let Some(d) = j.get(dir) else { continue };
            let ios = f(d, "total_ios");
            if ios <= 0.0 && f(d, "io_bytes") <= 0.0 {
                continue;
            }
            let runtime_s = f(d, "runtime") / 1000.0;
            job_runtime_s = job_runtime_s.max(runtime_s);
            let iops = f(d, "iops");
            let job = if name.ends_with(&format!("-{dir}")) { format!("{name}{clone}") } else { format!("{name}-{dir}{clone}") };
            rec.results.push(JobResult {
                config: cfg.clone(),
                job,
                pool: "path".into(),
                binding: "measured by fio".into(),
                io: Some(IoColumns {
                    iops,
                    bw_bytes_s: f(d, "bw_bytes"),
                    read_iops: if dir == "read" { iops } else { 0.0 },
                    write_iops: if dir == "write" { iops } else { 0.0 },
                    latency: latency(d),
                    outstanding: depth * numjobs,
                    runtime_s,
                }),
                extra: None,
                phases: Vec::new(),
            });
        }
        if let Some(s) = j.get("sync") {
            let n = f(s, "total_ios");
            if n > 0.0 {
                let lat = s.get("lat_ns").map(|l| latency(&serde_json::json!({ "lat_ns": l }))).unwrap_or_default();
                let per_s = if job_runtime_s > 0.0 { n / job_runtime_s } else { 0.0 };
                rec.results.push(JobResult {
                    config: cfg.clone(),
                    job: format!("{base}-sync"),
                    pool: "path".into(),
                    binding: "measured by fio (fsync/fdatasync calls)".into(),
                    io: Some(IoColumns {
                        iops: per_s,
                        bw_bytes_s: 0.0,
                        read_iops: 0.0,
                        write_iops: 0.0,
                        latency: lat,
                        outstanding: 1,
                        runtime_s: job_runtime_s,
                    }),
                    extra: None,
                    phases: Vec::new(),
                });
            }
        }
    }
    if rec.results.is_empty() {
        return Err(ImportError::Empty { file: file.into(), format: "fio JSON".into(), hint: "no job did any I/O (total_ios is 0 everywhere)".into() });
    }
    rec.inputs = Some({
        let mut o = Object::new();
        o.insert("jobs".into(), Value::Object(job_options));
        o
    });
    Ok(rec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn directions_sync_and_clones() {
        let doc = json!({
            "fio version": "fio-3.33",
            "global options": {"iodepth": "4", "group_reporting": "1", "numjobs": "2"},
            "jobs": [
                {"jobname": "oltp", "error": 0, "job_runtime": 2000, "job options": {"rw": "randrw"},
                 "read": {"total_ios": 7000, "iops": 3500.0, "bw_bytes": 14336000, "runtime": 2000,
                          "clat_ns": {"N": 7000, "mean": 900.0, "max": 5000, "percentile": {"50.000000": 800, "99.000000": 3000}},
                          "lat_ns": {"N": 7000, "mean": 1000.0, "max": 6000}},
                 "write": {"total_ios": 3000, "iops": 1500.0, "bw_bytes": 6144000, "runtime": 2000,
                           "clat_ns": {"N": 0}, "lat_ns": {"N": 3000, "mean": 2000.0, "max": 9000}},
                 "trim": {"total_ios": 0, "io_bytes": 0},
                 "sync": {"total_ios": 100, "lat_ns": {"N": 100, "mean": 250000.0, "max": 1000000, "percentile": {"99.000000": 900000}}}},
                {"jobname": "RND4K-Q1T1-read", "read": {"total_ios": 1, "iops": 1.0, "bw_bytes": 4096, "runtime": 1000}},
                {"jobname": "RND4K-Q1T1-read", "read": {"total_ios": 1, "iops": 2.0, "bw_bytes": 8192, "runtime": 1000}}
            ]
        });
        let r = read("run.json", &doc).unwrap();
        let names: Vec<&str> = r.results.iter().map(|x| x.job.as_str()).collect();
        assert_eq!(names, ["oltp-read", "oltp-write", "oltp-sync", "RND4K-Q1T1-read", "RND4K-Q1T1-read.1"]);
        let rd = r.results[0].io.as_ref().unwrap();
        // lat_ns mean 1000 ns = 1 µs; clat p50 800 ns = 0.8 µs; 4 × 2 in flight.
        assert_eq!((rd.latency.lat_mean_us, rd.latency.lat_p50_us, rd.latency.lat_p99_us, rd.latency.lat_max_us), (1.0, 0.8, 3.0, 6.0));
        assert_eq!((rd.outstanding, rd.read_iops, rd.write_iops), (8, 3500.0, 0.0));
        let wr = r.results[1].io.as_ref().unwrap();
        assert_eq!((wr.latency.lat_mean_us, wr.write_iops), (2.0, 1500.0));
        // 100 syncs over 2 s = 50 a second; 250 µs mean, 900 µs p99.
        let s = r.results[2].io.as_ref().unwrap();
        assert_eq!((s.iops, s.latency.lat_mean_us, s.latency.lat_p99_us), (50.0, 250.0, 900.0));
        assert_eq!(r.tool.as_ref().unwrap().name, "fio-3.33");
        assert_eq!(r.results[0].config, "fio");
    }

    #[test]
    fn client_stats_use_the_host_as_config() {
        let doc = json!({"fio version": "fio-3.33", "client_stats": [
            {"jobname": "w", "hostname": "db1", "write": {"total_ios": 10, "iops": 10.0, "bw_bytes": 40960, "runtime": 1000}}]});
        let r = read("c.json", &doc).unwrap();
        assert_eq!((r.results[0].config.as_str(), r.results[0].job.as_str()), ("db1", "w-write"));
    }

    #[test]
    fn no_io_is_refused() {
        let e = read("e.json", &json!({"fio version": "fio-3.33", "jobs": [{"jobname": "a", "read": {"total_ios": 0}}]})).unwrap_err();
        assert!(e.to_string().starts_with("e.json: no results in this fio JSON file"), "{e}");
        let e = read("e.json", &json!({"fio version": "fio-3.33", "jobs": [{"read": {}}]})).unwrap_err();
        assert_eq!(e.to_string(), "e.json: jobs[0]: jobname: missing");
    }
}
