//! pgbench's final report (PostgreSQL 9.6 to 17), as pgbench prints it:
//! `number of clients: 4`, `number of transactions actually processed: N`,
//! `number of failed transactions: 0 (0.000%)`, `latency average = 4.879 ms`,
//! `latency stddev = …`, `tps = 819.813056 (without initial connection time)`
//! (before PostgreSQL 14: `(excluding connections establishing)`), and with
//! `-P`, `progress: 1.0 s, 429.0 tps, lat 4.594 ms stddev 4.794, 0 failed`
//! lines (stderr), which become a TPS series. `-r`'s per-statement
//! latencies stay in `host_info`.

use super::{record, source, ImportError};
use crate::db::{DbJob, TxnStats};
use crate::{JobExtra, JobResult, LatencySummary, RunRecord, Series, Stamp};
use serde_json::Value;
use std::collections::BTreeMap;

fn bad(file: &str, line: usize, field: &str, text: &str) -> ImportError {
    ImportError::Line { file: file.into(), line, field: field.into(), message: format!("'{}' is not a number", text.trim()) }
}

/// The first number in `s` (`819.813056 (without …)` gives 819.813056).
fn first_num(s: &str) -> Option<f64> {
    s.split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-')).find(|t| !t.is_empty() && t != &"-").and_then(|t| t.parse().ok())
}

/// Reads a pgbench final report.
pub fn read(file: &str, text: &str) -> Result<RunRecord, ImportError> {
    let mut info = source("pgbench", file);
    let mut version = String::new();
    let (mut clients, mut processed, mut failed) = (None, None, 0u64);
    let (mut lat_ms, mut stddev_ms, mut tps, mut tps_incl) = (None, None, None, None);
    let mut statements: Vec<Value> = Vec::new();
    let mut in_statements = false;
    let (mut prog_t, mut prog_v) = (Vec::new(), Vec::new());
    for (i, raw) in text.split('\n').enumerate() {
        let n = i + 1;
        let l = raw.trim_end_matches(['\r', ' ', '\t']);
        let t = l.trim();
        if let Some(rest) = t.strip_prefix("pgbench (") {
            version = rest.split_whitespace().next().unwrap_or("").trim_end_matches(')').to_string();
            continue;
        }
        if let Some(rest) = t.strip_prefix("progress:") {
            // `progress: 1.0 s, 429.0 tps, lat 4.594 ms stddev 4.794, 0 failed`
            let parts: Vec<&str> = rest.split(',').collect();
            let at = parts.first().and_then(|p| first_num(p));
            let v = parts.iter().find(|p| p.trim_end().ends_with("tps")).and_then(|p| first_num(p));
            if let (Some(a), Some(v)) = (at, v) {
                prog_t.push(a);
                prog_v.push(v);
            }
            continue;
        }
        if t.starts_with("statement latencies in milliseconds") {
            in_statements = true;
            continue;
        }
        if in_statements {
            let mut it = t.split_whitespace();
            if let Some(ms) = it.next().and_then(|x| x.parse::<f64>().ok()) {
                let rest: Vec<&str> = it.collect();
                // PostgreSQL 15+: `latency failures statement`.
                let (fails, stmt) = match rest.first().and_then(|x| x.parse::<u64>().ok()) {
                    Some(f) => (Some(f), rest[1..].join(" ")),
                    None => (None, rest.join(" ")),
                };
                statements.push(serde_json::json!({"latency_ms": ms, "failures": fails, "statement": stmt}));
                continue;
            }
            in_statements = false;
        }
        let (key, val) = match t.split_once(" = ").or_else(|| t.split_once(": ")) {
            Some(kv) => kv,
            None => continue,
        };
        let key = key.trim();
        match key {
            "transaction type" | "query mode" | "duration" | "number of transactions per client" | "maximum number of tries" => {
                info.insert(key.replace(' ', "_"), val.trim().into());
            }
            "scaling factor" | "number of threads" => {
                let v = first_num(val).ok_or_else(|| bad(file, n, key, val))?;
                info.insert(key.replace(' ', "_"), v.into());
            }
            "number of clients" => clients = Some(first_num(val).ok_or_else(|| bad(file, n, key, val))? as u32),
            "number of transactions actually processed" => processed = Some(first_num(val).ok_or_else(|| bad(file, n, key, val))? as u64),
            "number of failed transactions" => failed = first_num(val).ok_or_else(|| bad(file, n, key, val))? as u64,
            "latency average" => lat_ms = Some(ms(file, n, key, val)?),
            "latency stddev" => stddev_ms = Some(ms(file, n, key, val)?),
            "initial connection time" => {
                info.insert("initial_connection_ms".into(), ms(file, n, key, val)?.into());
            }
            "tps" => {
                let v = first_num(val).ok_or_else(|| bad(file, n, key, val))?;
                if val.contains("including connections") {
                    tps_incl = Some(v);
                } else {
                    tps = Some(v);
                }
            }
            _ => {}
        }
    }
    let tps = tps.or(tps_incl).ok_or_else(|| ImportError::Empty {
        file: file.into(),
        format: "pgbench".into(),
        hint: "no 'tps = …' line: the run did not finish (pgbench prints its report at the end)".into(),
    })?;
    let clients = clients.unwrap_or(1);
    if let Some(sd) = stddev_ms {
        info.insert("latency_stddev_ms".into(), sd.into());
    }
    if !statements.is_empty() {
        info.insert("statement_latencies".into(), Value::Array(statements));
    }
    let workload = info.get("transaction_type").and_then(|v| v.as_str()).unwrap_or("pgbench").to_string();
    let tool = if version.is_empty() { "pgbench".to_string() } else { format!("pgbench {version}") };
    let mut rec = record("pgbench", &version, "pgbench", info);
    if let Some(t) = rec.tool.as_mut() {
        t.name = "pgbench".into();
    }
    let mut txn = BTreeMap::new();
    txn.insert(
        "transaction".to_string(),
        TxnStats {
            latency: LatencySummary { lat_mean_us: lat_ms.unwrap_or(0.0) * 1000.0, ..LatencySummary::default() },
            commits: processed.unwrap_or(0),
            rollbacks: 0,
            errors: failed,
            per_min: tps * 60.0,
            rows: None,
        },
    );
    rec.results.push(JobResult {
        config: "pgbench".into(),
        job: "pgbench".into(),
        pool: String::new(),
        binding: format!("measured by {tool}: {workload}"),
        io: None,
        extra: Some(JobExtra::Db(DbJob { vus: clients, repeats: 1, tpm: Some(tps * 60.0), txn, ..DbJob::default() })),
        phases: Vec::new(),
    });
    if !prog_v.is_empty() {
        let period_s = if prog_t.len() > 1 { prog_t[1] - prog_t[0] } else { prog_t[0] };
        rec.series.push(Series {
            config: "pgbench".into(),
            resource: format!("db {clients} VUs"),
            metric: "TPS".into(),
            unit: "Count/Second".into(),
            period_s,
            // pgbench stamps a progress line at the end of its period.
            timestamps: prog_t.iter().map(|t| Stamp::Seconds(t - period_s)).collect(),
            values: prog_v,
        });
    }
    Ok(rec)
}

fn ms(file: &str, line: usize, field: &str, val: &str) -> Result<f64, ImportError> {
    let v = first_num(val).ok_or_else(|| bad(file, line, field, val))?;
    let unit = val.split_whitespace().nth(1).unwrap_or("ms");
    match unit {
        "ms" => Ok(v),
        "s" => Ok(v * 1000.0),
        "us" => Ok(v / 1000.0),
        other => Err(ImportError::Line { file: file.into(), line, field: field.into(), message: format!("unknown unit '{other}' — expected ms") }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_reports_prefer_the_tps_without_connections() {
        let text = "transaction type: <builtin: TPC-B (sort of)>\nscaling factor: 1\nnumber of clients: 10\n\
number of transactions actually processed: 10000/10000\nlatency average = 12.5 ms\n\
tps = 790.123 (including connections establishing)\ntps = 800.000000 (excluding connections establishing)\n";
        let r = read("old.txt", text).unwrap();
        let Some(JobExtra::Db(d)) = &r.results[0].extra else { panic!() };
        // 800 tps = 48,000 a minute; 12.5 ms = 12,500 µs.
        assert_eq!((d.vus, d.tpm), (10, Some(48000.0)));
        assert_eq!((d.txn["transaction"].commits, d.txn["transaction"].latency.lat_mean_us), (10000, 12500.0));
    }

    #[test]
    fn an_unfinished_run_is_refused() {
        let e = read("p.txt", "pgbench (15.18)\nprogress: 1.0 s, 429.0 tps, lat 4.594 ms stddev 4.794, 0 failed\n").unwrap_err();
        assert!(e.to_string().starts_with("p.txt: no results in this pgbench file"), "{e}");
    }
}
