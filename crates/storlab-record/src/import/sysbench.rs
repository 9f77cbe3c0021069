//! sysbench 1.0's final report (`SQL statistics:`, `General statistics:`,
//! `Latency (ms):`, `Threads fairness:`), as `sysbench oltp_* run` prints it,
//! and its `--report-interval` lines (`[ 1s ] thds: 2 tps: 1944.51 qps: …`),
//! which become a TPS series. sysbench does not print the test's name; a
//! file named after it (`…oltp_insert…`) gives it.

use super::{record, source, ImportError};
use crate::db::{DbJob, TxnStats};
use crate::{JobExtra, JobResult, LatencySummary, RunRecord, Series, Stamp};
use std::collections::BTreeMap;

/// `4325   (864.05 per sec.)` gives (4325, Some(864.05)); `5.0050s` gives 5.005.
/// A minus sign is kept (`-100 (-5.00 per sec.)` is -100 and -5), so the
/// import's value check refuses it rather than reading 100.
fn nums(s: &str) -> (Option<f64>, Option<f64>) {
    let mut it = s
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .map(|t| t.trim_end_matches('-'))
        .filter(|t| t.chars().any(|c| c.is_ascii_digit()))
        .map(|t| t.parse::<f64>().ok());
    (it.next().flatten(), it.next().flatten())
}

/// Reads a sysbench final report.
pub fn read(file: &str, text: &str) -> Result<RunRecord, ImportError> {
    let mut info = source("sysbench", file);
    let mut version = String::new();
    let mut section = String::new();
    let mut threads = None;
    let (mut txns, mut tps, mut errors, mut total_s) = (None, None, 0u64, None);
    let mut lat = LatencySummary::default();
    let mut p95 = None;
    let (mut series_t, mut series_v) = (Vec::new(), Vec::new());
    for (i, raw) in text.split('\n').enumerate() {
        let n = i + 1;
        let t = raw.trim_end_matches(['\r', ' ', '\t']).trim();
        if let Some(rest) = t.strip_prefix("sysbench ") {
            if version.is_empty() {
                version = rest.split_whitespace().next().unwrap_or("").to_string();
            }
            continue;
        }
        if t.starts_with('[') && t.contains("tps:") {
            // `[ 1s ] thds: 2 tps: 1944.51 qps: 1944.51 (r/w/o: …) lat (ms,95%): 4.03 …`
            let at = nums(t.split(']').next().unwrap_or("")).0;
            let v = t.split("tps:").nth(1).and_then(|s| nums(s).0);
            if let (Some(a), Some(v)) = (at, v) {
                series_t.push(a);
                series_v.push(v);
            }
            continue;
        }
        if t.ends_with(':') && !t.contains("  ") {
            section = t.trim_end_matches(':').to_string();
            continue;
        }
        let Some((key, val)) = t.split_once(':') else { continue };
        let key = key.trim();
        let need = |v: Option<f64>| {
            v.ok_or_else(|| ImportError::Line { file: file.into(), line: n, field: key.into(), message: format!("'{}' is not a number", val.trim()) })
        };
        match (section.as_str(), key) {
            (_, "Number of threads") => threads = Some(need(nums(val).0.filter(|v| *v >= 0.0))? as u32),
            ("queries performed", k @ ("read" | "write" | "other" | "total")) => {
                info.insert(format!("queries_{k}"), need(nums(val).0)?.into());
            }
            (_, "transactions") => {
                let (a, b) = nums(val);
                let a = need(a)?;
                if a < 0.0 {
                    return Err(ImportError::Line { file: file.into(), line: n, field: key.into(), message: format!("{a} — a count of transactions is at least 0; nearest valid value 0") });
                }
                txns = Some(a as u64);
                tps = b;
            }
            (_, "queries") => {
                if let (_, Some(q)) = nums(val) {
                    info.insert("queries_per_s".into(), q.into());
                }
            }
            (_, "ignored errors") => errors = need(nums(val).0)? as u64,
            (_, "reconnects") => {
                info.insert("reconnects".into(), need(nums(val).0)?.into());
            }
            (_, "total time") => total_s = Some(need(nums(val).0)?),
            ("Latency (ms)", "min") => {
                info.insert("latency_min_ms".into(), need(nums(val).0)?.into());
            }
            ("Latency (ms)", "avg") => lat.lat_mean_us = need(nums(val).0)? * 1000.0,
            ("Latency (ms)", "max") => lat.lat_max_us = need(nums(val).0)? * 1000.0,
            ("Latency (ms)", k) if k.ends_with("percentile") => {
                let pct = nums(k).0.unwrap_or(95.0);
                let v = need(nums(val).0)? * 1000.0;
                match pct as u32 {
                    50 => lat.lat_p50_us = v,
                    90 => lat.lat_p90_us = v,
                    99 => lat.lat_p99_us = v,
                    _ => p95 = Some((pct, v)),
                }
            }
            _ => {}
        }
    }
    let txns = txns.ok_or_else(|| ImportError::Empty {
        file: file.into(),
        format: "sysbench".into(),
        hint: "no 'transactions:' line under 'SQL statistics:' — the run did not finish, or this is not an OLTP test".into(),
    })?;
    let tps = tps.or_else(|| total_s.filter(|s| *s > 0.0).map(|s| txns as f64 / s)).unwrap_or(0.0);
    if let Some((pct, v)) = p95 {
        // sysbench's default is the 95th percentile, which has no column.
        info.insert(format!("latency_p{pct:.0}_us"), v.into());
    }
    if let Some(s) = total_s {
        info.insert("total_time_s".into(), s.into());
    }
    let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
    let test = ["oltp_read_write", "oltp_read_only", "oltp_write_only", "oltp_insert", "oltp_delete", "oltp_update_index", "oltp_update_non_index", "oltp_point_select", "select_random_points", "select_random_ranges", "bulk_insert"]
        .into_iter()
        .find(|t| base.contains(t));
    if let Some(t) = test {
        info.insert("test".into(), t.into());
    }
    let threads = threads.unwrap_or(1);
    let mut rec = record("sysbench", &version, test.unwrap_or("sysbench"), info);
    let mut txn = BTreeMap::new();
    let inserts = test.is_some_and(|t| t.contains("insert"));
    txn.insert(
        test.unwrap_or("transaction").to_string(),
        TxnStats { latency: lat, commits: txns, rollbacks: 0, errors, per_min: tps * 60.0, rows: inserts.then_some(txns) },
    );
    rec.results.push(JobResult {
        config: "sysbench".into(),
        job: test.unwrap_or("sysbench").into(),
        pool: String::new(),
        binding: format!("measured by sysbench {version}"),
        io: None,
        extra: Some(JobExtra::Db(DbJob {
            vus: threads,
            repeats: 1,
            tpm: Some(tps * 60.0),
            txn,
            rows: inserts.then_some(txns),
            rows_per_min: inserts.then_some(tps * 60.0),
            ..DbJob::default()
        })),
        phases: Vec::new(),
    });
    if !series_v.is_empty() {
        let period_s = if series_t.len() > 1 { series_t[1] - series_t[0] } else { series_t[0] };
        rec.series.push(Series {
            config: "sysbench".into(),
            resource: format!("db {threads} VUs"),
            metric: "TPS".into(),
            unit: "Count/Second".into(),
            period_s,
            timestamps: series_t.iter().map(|t| Stamp::Seconds(t - period_s)).collect(),
            values: series_v,
        });
    }
    Ok(rec)
}
