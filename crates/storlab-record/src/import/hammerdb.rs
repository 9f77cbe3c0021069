//! HammerDB v6's result file, `hammerdb-job-report-v1` (written by
//! `jobs summaryjson`; examples in the public hammerdb-results repository,
//! `results/tproc-c/<database>/<yyyy>/<mm>/<jobid>.json`), both ways.
//!
//! Read: `result.nopm`/`tpm`/`active_virtual_users` become one database
//! result; `response_times.rows` (NEWORD, PAYMENT, DELIVERY, SLEV, OSTAT:
//! calls, min/avg/max and p25–p99 in ms) its per-type `txn`, under storlab's
//! TPC-C names; `transaction_count.series` (tpm every ~10 s) and
//! `metrics.cpu_percent`/`iops`/`mbps` become series. `job`,
//! `benchmark_config`, `system`, `analysis_hints` and the raw response-time
//! rows (p25, p75 and p95 have no record column) stay in `host_info`.
//!
//! Write: [`write_report`] turns a database run record (`bench db` or a
//! simulated sweep) into the same document, field by field. A simulated
//! record says so in `system` and in `artifact`.

use super::{record, source, ImportError};
use crate::db::{DbJob, TxnStats};
use crate::{JobExtra, JobResult, LatencySummary, RunRecord, Series, Stamp};
use serde_json::{json, Value};
use std::collections::BTreeMap;

pub const SCHEMA: &str = "hammerdb-job-report-v1";

/// HammerDB's stored-procedure names and storlab's TPC-C transaction names.
const NAMES: [(&str, &str); 5] =
    [("NEWORD", "new_order"), ("PAYMENT", "payment"), ("OSTAT", "order_status"), ("DELIVERY", "delivery"), ("SLEV", "stock_level")];

fn err(file: &str, entry: &str, field: &str, message: impl Into<String>) -> ImportError {
    ImportError::Entry { file: file.into(), entry: entry.into(), field: field.into(), message: message.into() }
}

fn num(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `2026-06-05 20:24:42` as `2026-06-05T20:24:42` (HammerDB's local time;
/// no zone is given).
fn stamp(s: &str) -> String {
    s.trim().replacen(' ', "T", 1)
}

fn seconds_of(s: &str) -> Option<f64> {
    // hh:mm:ss of the stamp, for the period between two points.
    let t = s.trim().rsplit([' ', 'T']).next()?;
    let mut it = t.split(':').map(|x| x.parse::<f64>().ok());
    Some(it.next()?? * 3600.0 + it.next()?? * 60.0 + it.next()??)
}

fn points_series(config: &str, resource: &str, metric: &str, unit: &str, pts: &[(String, f64)]) -> Series {
    let mut diffs: Vec<f64> = pts.windows(2).filter_map(|w| Some(seconds_of(&w[1].0)? - seconds_of(&w[0].0)?)).filter(|d| *d > 0.0).collect();
    diffs.sort_by(|a, b| a.total_cmp(b));
    let period_s = diffs.get(diffs.len() / 2).copied().unwrap_or(10.0);
    Series {
        config: config.into(),
        resource: resource.into(),
        metric: metric.into(),
        unit: unit.into(),
        period_s,
        timestamps: pts.iter().map(|(t, _)| Stamp::Utc(stamp(t))).collect(),
        values: pts.iter().map(|(_, v)| *v).collect(),
    }
}

/// Reads a `hammerdb-job-report-v1` document.
pub fn read(file: &str, doc: &Value) -> Result<RunRecord, ImportError> {
    let job = doc.get("job").ok_or_else(|| err(file, "document", "job", "missing — not a HammerDB job report"))?;
    let result = doc.get("result").ok_or_else(|| err(file, "document", "result", "missing — the job report has no result"))?;
    let s = |v: &Value, k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
    let version = s(job, "hdb_version");
    let benchmark = s(job, "benchmark");
    let display = Some(s(job, "database_display")).filter(|x| !x.is_empty()).unwrap_or_else(|| s(job, "database"));
    let config = if display.is_empty() { "HammerDB".to_string() } else { display.clone() };
    let workload = match benchmark.as_str() {
        "TPROC-C" => "tpcc",
        "TPROC-H" => "tproch",
        "" => return Err(err(file, "job", "benchmark", "missing — expected TPROC-C or TPROC-H")),
        other => return Err(err(file, "job", "benchmark", format!("'{other}' — expected TPROC-C or TPROC-H"))),
    };
    let mut info = source("HammerDB", file);
    for k in ["job", "benchmark_config", "system", "analysis_hints"] {
        if let Some(v) = doc.get(k) {
            info.insert(k.into(), v.clone());
        }
    }
    if let Some(rows) = doc.pointer("/response_times/rows") {
        info.insert("response_times".into(), rows.clone());
    }
    info.insert("benchmark".into(), benchmark.clone().into());
    info.insert("database".into(), display.clone().into());
    let mut rec = record("HammerDB", &version, workload, info);
    let cfg = doc.get("benchmark_config").cloned().unwrap_or(Value::Null);
    let vus = result.get("active_virtual_users").and_then(num).or_else(|| cfg.get("virtual_users").and_then(num)).unwrap_or(0.0) as u32;
    let nopm = result.get("nopm").and_then(num);
    let tpm = result.get("tpm").and_then(num);
    if workload == "tpcc" && nopm.is_none() && tpm.is_none() {
        return Err(err(file, "result", "nopm", "missing — a TPROC-C report gives result.nopm and result.tpm"));
    }
    let mut txn = BTreeMap::new();
    if let Some(rows) = doc.pointer("/response_times/rows").and_then(|r| r.as_array()) {
        for (i, row) in rows.iter().enumerate() {
            let name = row.get("name").and_then(|v| v.as_str()).ok_or_else(|| err(file, &format!("response_times.rows[{i}]"), "name", "missing"))?;
            let ms = |k: &str| row.get(k).and_then(num).map(|v| v * 1000.0).unwrap_or(0.0);
            let calls = row.get("calls").and_then(num).unwrap_or(0.0);
            let elapsed_min = row.get("elapsed_ms").and_then(num).unwrap_or(0.0) / 60_000.0;
            let key = NAMES.iter().find(|(h, _)| *h == name).map(|(_, s)| s.to_string()).unwrap_or_else(|| name.to_ascii_lowercase());
            txn.insert(
                key,
                TxnStats {
                    latency: LatencySummary {
                        lat_mean_us: ms("avg_ms"),
                        lat_p50_us: ms("p50_ms"),
                        lat_p90_us: 0.0,
                        lat_p99_us: ms("p99_ms"),
                        lat_p999_us: 0.0,
                        lat_p9999_us: 0.0,
                        lat_max_us: ms("max_ms"),
                    },
                    commits: calls as u64,
                    rollbacks: 0,
                    errors: 0,
                    per_min: if elapsed_min > 0.0 { calls / elapsed_min } else { 0.0 },
                    rows: None,
                },
            );
        }
    }
    let fmt0 = |v: Option<f64>| v.map(|x| format!("{x:.0}")).unwrap_or_default();
    // A report storlab wrote from a simulation (`system.simulated`) stays a
    // simulation when read back: never "measured by HammerDB".
    let simulated = doc.pointer("/system/simulated").and_then(|v| v.as_bool()) == Some(true);
    if simulated {
        rec.engine = crate::Engine::Simulate;
        rec.warnings.push(format!("{file}: a simulated run (system.simulated = true, written by {version}): no database ran; the figures are the model's"));
    }
    let binding = if simulated { format!("simulated by {version} (a HammerDB job report of a simulation)") } else { format!("measured by HammerDB {version}") };
    rec.results.push(JobResult {
        config: config.clone(),
        job: workload.into(),
        pool: String::new(),
        binding,
        io: None,
        extra: Some(JobExtra::Db(DbJob {
            vus,
            repeats: 1,
            nopm,
            tpm,
            txn,
            hammerdb: Some(format!("System achieved {} NOPM from {} {display} TPM", fmt0(nopm), fmt0(tpm))),
            ..DbJob::default()
        })),
        phases: Vec::new(),
    });
    let pts = |v: &Value, key: &str| -> Vec<(String, f64)> {
        v.as_array()
            .map(|a| a.iter().filter_map(|p| Some((p.get("timestamp")?.as_str()?.to_string(), p.get(key).and_then(num)?))).collect())
            .unwrap_or_default()
    };
    let resource = format!("db {vus} VUs");
    for ser in doc.pointer("/transaction_count/series").and_then(|v| v.as_array()).into_iter().flatten() {
        let p = pts(ser.get("points").unwrap_or(&Value::Null), "value");
        if !p.is_empty() {
            let metric = ser.get("metric").and_then(|m| m.as_str()).unwrap_or("tpm").to_ascii_uppercase();
            rec.series.push(points_series(&config, &resource, &metric, "Count/Minute", &p));
        }
    }
    if let Some(m) = doc.get("metrics") {
        if let Some(cpu) = m.get("cpu_percent").and_then(|v| v.as_array()) {
            let p: Vec<(String, f64)> = cpu
                .iter()
                .filter_map(|x| {
                    let busy = ["usr_pct", "sys_pct", "irq_pct"].iter().map(|k| x.get(*k).and_then(num).unwrap_or(0.0)).sum();
                    Some((x.get("timestamp")?.as_str()?.to_string(), busy))
                })
                .collect();
            if !p.is_empty() {
                rec.series.push(points_series(&config, "host", "CPUUtilization", "Percent", &p));
            }
        }
        for (key, metric, unit) in [("iops", "IOPS", "Count/Second"), ("mbps", "Throughput", "Megabytes/Second")] {
            let p = pts(m.get(key).unwrap_or(&Value::Null), "value");
            if !p.is_empty() {
                rec.series.push(points_series(&config, "host", metric, unit, &p));
            }
        }
    }
    if rec.series.iter().any(|s| !s.timestamps.is_empty()) {
        rec.warnings.push(format!("{file}: HammerDB's timestamps are the load generator's local time, zone not given"));
    }
    Ok(rec)
}

/// The database HammerDB would name: (internal identifier, display name).
fn database_of(text: &str) -> (&'static str, &'static str) {
    let t = text.to_ascii_lowercase();
    if t.contains("mariadb") {
        ("MariaDB", "MariaDB")
    } else if t.contains("mysql") {
        ("MySQL", "MySQL")
    } else if t.contains("postgres") {
        ("PostgreSQL", "PostgreSQL")
    } else if t.contains("sql server") || t.contains("mssql") || t.contains("sqlserver") {
        ("MSSQLServer", "SQL Server")
    } else if t.contains("oracle") {
        ("Oracle", "Oracle")
    } else if t.contains("db2") {
        ("Db2", "Db2")
    } else if t.contains("sqlite") {
        ("SQLite", "SQLite")
    } else {
        ("Unknown", "Unknown")
    }
}

/// 24 upper-case hex digits, as HammerDB's job ids: a hash (FNV-1a) of
/// the record, so one record always gives one id.
fn job_id(text: &str) -> String {
    let mut h: u128 = 0x6c62272e07bb014262b821756295c58d;
    for b in text.bytes() {
        h ^= b as u128;
        h = h.wrapping_mul(0x0000000001000000000000000000013B);
    }
    format!("{:024X}", h >> 32)
}

/// A `hammerdb-job-report-v1` document for the database record `rec`
/// (`timestamp`: `YYYY-MM-DD HH:MM:SS`, when the run started). The result
/// with the highest NOPM (else TPM) is the job's; a sweep's other steps
/// are listed under `system.notes`.
pub fn write_report(rec: &Value, timestamp: &str) -> Result<Value, ImportError> {
    let file = "record";
    let results = rec.get("results").and_then(|r| r.as_array()).ok_or_else(|| err(file, "record", "results", "missing"))?;
    let dbs: Vec<&Value> = results.iter().filter(|r| r.get("vus").is_some()).collect();
    let score = |r: &Value| r.get("nopm").and_then(num).or_else(|| r.get("tpm").and_then(num)).unwrap_or(0.0);
    let best = dbs
        .iter()
        .copied()
        .max_by(|a, b| score(a).total_cmp(&score(b)))
        .ok_or_else(|| err(file, "record", "results", "no database result (vus, nopm, tpm) — write --hammerdb-json from bench db or a simulated database workload"))?;
    let workload = best.get("job").and_then(|v| v.as_str()).unwrap_or("");
    if workload != "tpcc" {
        return Err(err(file, "results", "job", format!("'{workload}' — a hammerdb-job-report-v1 describes a TPROC-C run; this record's workload is not TPC-C")));
    }
    let simulated = rec.get("engine").and_then(|v| v.as_str()) == Some("simulate");
    let text = serde_json::to_string(rec).unwrap_or_default();
    let runs = rec.get("runs").and_then(|r| r.as_array());
    let db_text = [
        runs.and_then(|r| r.first()).and_then(|r| r.get("db")).and_then(|v| v.as_str()).unwrap_or(""),
        best.get("binding").and_then(|v| v.as_str()).unwrap_or(""),
        best.get("config").and_then(|v| v.as_str()).unwrap_or(""),
    ]
    .join(" ")
        + &rec.get("inputs").map(|v| v.to_string()).unwrap_or_default();
    let (database, display) = database_of(&db_text);
    let vus = best.get("vus").and_then(num).unwrap_or(0.0);
    let nopm = best.get("nopm").and_then(num).unwrap_or(0.0).round();
    let tpm = best.get("tpm").and_then(num).unwrap_or(0.0).round();
    let inputs = rec.get("inputs").cloned().unwrap_or(Value::Null);
    let warehouses = ["/workload/warehouses", "/warehouses", "/scale", "/workload/scale"]
        .iter()
        .find_map(|p| inputs.pointer(p).and_then(num))
        .unwrap_or(0.0);
    let run = runs.and_then(|r| r.iter().find(|x| x.get("vus").and_then(num) == Some(vus)));
    // A measured run's own window, else the simulated scenario's.
    let minutes = |k: &str| run.and_then(|r| r.get(k)).or_else(|| inputs.get(k)).and_then(num).map(|s| s / 60.0).unwrap_or(0.0);
    let tool = rec.pointer("/tool/name").and_then(|v| v.as_str()).unwrap_or("storlab");
    let tool_version = rec.pointer("/tool/version").and_then(|v| v.as_str()).unwrap_or("");
    let host = rec.get("host_info").cloned().unwrap_or(Value::Null);
    let notes: Vec<String> = dbs
        .iter()
        .filter(|r| !std::ptr::eq(**r, best))
        .map(|r| format!("{} VUs: {:.0} NOPM, {:.0} TPM", r.get("vus").and_then(num).unwrap_or(0.0), r.get("nopm").and_then(num).unwrap_or(0.0), r.get("tpm").and_then(num).unwrap_or(0.0)))
        .collect();
    let system = system_of(rec, best, &host, simulated, tool, tool_version, notes);
    let rows = response_rows(best, run);
    let points = tpm_points(rec, vus, timestamp);
    let title = format!("{display} TPROC-C");
    Ok(json!({
        "schema": SCHEMA,
        "description": "HammerDB benchmark result artifact. Machine-readable data, report_hints and analysis_hints are included for reproducible reporting, summary tables and chart generation.",
        "artifact": {
            "type": "hammerdb-result-json",
            "schema": SCHEMA,
            "source": tool,
            "generated_by": if simulated { format!("{tool} simulate --hammerdb-json") } else { format!("{tool} bench db --hammerdb-json") },
            "visibility": "public",
            "redacted": true,
        },
        "disclaimer": {
            "result_type": if simulated { "Simulated result in the HammerDB result artifact format" } else { "Result in the HammerDB result artifact format" },
            "audited": false,
            "text": format!("This result was produced by {tool}, not by HammerDB{}. Its workload follows the TPC-C specification as HammerDB's TPROC-C does. This result is not audited by the TPC-Council and is not a TPC result.", if simulated { ", and simulated: no database ran" } else { "" }),
            "tpc_trademarks": "TPC-C, tpmC, TPC-H and QphH are trademarks of the Transaction Processing Performance Council. Unauthorised and unaudited use of official TPC result trademarks is not permitted.",
        },
        "report_hints": {
            "title": format!("{title} Benchmark Report"),
            "primary_result_metrics": ["NOPM", "TPM"],
        },
        "analysis_hints": {
            "active_window": {"available": !points.is_empty()},
            "shutdown_tail": {"present": false},
        },
        "job": {
            "jobid": job_id(&text),
            "hdb_version": format!("{tool} {tool_version}").trim().to_string(),
            "database": database,
            "database_display": display,
            "release": "",
            "benchmark": "TPROC-C",
            "timestamp": timestamp,
        },
        "benchmark_config": {
            "warehouses": warehouses as u64,
            "virtual_users": vus as u64,
            "rampup_minutes": minutes("rampup_s"),
            "duration_minutes": minutes("duration_s"),
        },
        "system": system,
        "result": {
            "type": "tproc_c_result",
            "database_display": display,
            "active_virtual_users": vus as u64,
            "nopm": nopm,
            "tpm": tpm,
            "chart_data": [{"metric": "NOPM", "value": nopm}, {"metric": "TPM", "value": tpm}],
        },
        "transaction_count": {
            "available": !points.is_empty(),
            "series": [{"name": format!("{display} tpm"), "database": database, "database_display": display, "metric": "tpm", "points": points}],
        },
        "response_times": {"type": "boxplot", "unit": "milliseconds", "rows": rows},
        "metrics": {"available": false},
    }))
}

/// The report's `system` section: the host the record names, or a
/// simulated one; `notes` lead it.
fn system_of(rec: &Value, best: &Value, host: &Value, simulated: bool, tool: &str, tool_version: &str, mut notes: Vec<String>) -> Value {
    let hs = |k: &str| host.get(k).map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())).unwrap_or_default();
    if simulated {
        notes.insert(0, format!("simulated by {tool} {tool_version}: no database ran; the figures are the model's"));
        json!({
            "available": true,
            "simulated": true,
            "hostname": "simulated",
            "cpumodel": "simulated",
            "cpucount": "",
            "system_vendor": tool,
            "system_type": "Simulated",
            "os_name": "",
            "memory": "",
            "nic": "",
            "storage": format!("simulated config {}", best.get("config").and_then(|v| v.as_str()).unwrap_or("")),
            "cloud_instance": "Not Detected",
            "scenario": rec.get("scenario").cloned().unwrap_or(Value::Null),
            "notes": notes,
        })
    } else {
        json!({
            "available": true,
            "hostname": hs("hostname"),
            "cpumodel": hs("cpu_model"),
            "cpucount": hs("cpus"),
            "system_vendor": "",
            "system_type": "",
            "os_name": hs("os"),
            "memory": hs("memory"),
            "nic": "",
            "storage": hs("path"),
            "cloud_instance": "Not Detected",
            "notes": notes,
        })
    }
}

/// The response-time rows, one per TPC-C transaction type, in HammerDB's
/// names and milliseconds.
fn response_rows(best: &Value, run: Option<&Value>) -> Vec<Value> {
    let mut rows = Vec::new();
    if let Some(txn) = best.get("txn").and_then(|t| t.as_object()) {
        let elapsed_ms = run.and_then(|r| r.get("duration_s")).and_then(num).map(|s| s * 1000.0).unwrap_or(0.0);
        let total: f64 = txn.values().map(|t| t.get("commits").and_then(num).unwrap_or(0.0) * t.get("lat_mean_us").and_then(num).unwrap_or(0.0)).sum();
        for (h, ours) in NAMES {
            let Some(t) = txn.get(ours) else { continue };
            let us = |k: &str| t.get(k).and_then(num).unwrap_or(0.0);
            let ms = |k: &str| (us(k) / 1000.0 * 1000.0).round() / 1000.0;
            let calls = us("commits") + us("rollbacks");
            let total_ms = calls * us("lat_mean_us") / 1000.0;
            rows.push(json!({
                "name": h,
                "elapsed_ms": elapsed_ms,
                "calls": calls as u64,
                "min_ms": 0.0,
                "avg_ms": ms("lat_mean_us"),
                "max_ms": ms("lat_max_us"),
                "total_ms": (total_ms * 1000.0).round() / 1000.0,
                "p99_ms": ms("lat_p99_us"),
                "p95_ms": Value::Null,
                "p75_ms": Value::Null,
                "p50_ms": ms("lat_p50_us"),
                "p25_ms": Value::Null,
                "sd": Value::Null,
                "ratio_pct": if total > 0.0 { ((us("commits") * us("lat_mean_us")) / total * 100_000.0).round() / 1000.0 } else { 0.0 },
            }));
        }
    }
    rows
}

/// Transactions per 10-second period become tpm points, as HammerDB's
/// (a simulated series counts seconds from the start: stamped from
/// `timestamp`).
fn tpm_points(rec: &Value, vus: f64, timestamp: &str) -> Vec<Value> {
    let mut points = Vec::new();
    for s in rec.get("series").and_then(|v| v.as_array()).into_iter().flatten() {
        if s.get("metric").and_then(|m| m.as_str()) != Some("Transactions") {
            continue;
        }
        if !s.get("resource").and_then(|r| r.as_str()).unwrap_or("").starts_with(&format!("db {vus} VUs")) {
            continue;
        }
        let period = s.get("period_s").and_then(num).unwrap_or(10.0).max(1.0);
        let ts = s.get("timestamps").and_then(|v| v.as_array()).cloned().unwrap_or_default();
        let vs = s.get("values").and_then(|v| v.as_array()).cloned().unwrap_or_default();
        for (t, v) in ts.iter().zip(vs.iter()) {
            // Simulated series count seconds from the start: stamped from `timestamp`.
            let when = match t {
                Value::String(x) => x.trim_end_matches('Z').replacen('T', " ", 1),
                other => {
                    let base = super::cloudwatch::epoch(&Value::String(timestamp.replacen(' ', "T", 1) + "Z")).unwrap_or(0.0);
                    crate::db::utc_text(base + other.as_f64().unwrap_or(0.0)).trim_end_matches('Z').replacen('T', " ", 1)
                }
            };
            points.push(json!({"timestamp": when, "value": (num(v).unwrap_or(0.0) * 60.0 / period).round()}));
        }
        break;
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> Value {
        json!({
            "schema": "hammerdb-job-report-v1",
            "job": {"jobid": "6A23227A9CD903E233531303", "hdb_version": "v6.0", "database": "MySQL", "database_display": "MySQL",
                    "release": "9.7.0", "benchmark": "TPROC-C", "timestamp": "2026-06-05 20:24:42"},
            "benchmark_config": {"warehouses": 192, "virtual_users": 24, "rampup_minutes": 2, "duration_minutes": 5},
            "result": {"type": "tproc_c_result", "active_virtual_users": 24, "nopm": 328858, "tpm": 763485},
            "transaction_count": {"series": [{"metric": "tpm", "points": [
                {"timestamp": "2026-06-05 20:24:42", "value": 0}, {"timestamp": "2026-06-05 20:24:52", "value": 519378},
                {"timestamp": "2026-06-05 20:25:02", "value": 802632}]}]},
            "response_times": {"rows": [{"name": "NEWORD", "elapsed_ms": 414143.5, "calls": 2348637, "min_ms": 0.32, "avg_ms": 1.998,
                "max_ms": 42.604, "p99_ms": 5.79, "p95_ms": 4.112, "p50_ms": 1.818}]},
            "metrics": {"cpu_percent": [{"timestamp": "2026-06-05 20:24:53", "usr_pct": 29.45, "sys_pct": 3.1, "irq_pct": 0, "idle_pct": 55.32}]}
        })
    }

    #[test]
    fn reads_the_result_and_the_rows() {
        let r = read("h.json", &report()).unwrap();
        assert_eq!(r.tool.as_ref().unwrap().name, "HammerDB");
        let Some(JobExtra::Db(d)) = &r.results[0].extra else { panic!() };
        assert_eq!((d.vus, d.nopm, d.tpm), (24, Some(328858.0), Some(763485.0)));
        let no = &d.txn["new_order"];
        // 1.998 ms = 1998 µs; 2,348,637 calls over 414,143.5 ms = 340,267.4 a minute.
        assert_eq!((no.latency.lat_mean_us, no.latency.lat_p99_us, no.commits), (1998.0, 5790.0, 2348637));
        assert!((no.per_min - 2348637.0 / (414143.5 / 60000.0)).abs() < 1e-6);
        let tpm = &r.series[0];
        assert_eq!((tpm.metric.as_str(), tpm.period_s, tpm.values[2]), ("TPM", 10.0, 802632.0));
        assert_eq!(r.series[1].values[0], 29.45 + 3.1);
        assert_eq!(r.results[0].config, "MySQL");
    }

    #[test]
    fn a_report_without_a_benchmark_is_refused() {
        let mut doc = report();
        doc["job"]["benchmark"] = json!("TPROC-X");
        assert_eq!(read("h.json", &doc).unwrap_err().to_string(), "h.json: job: benchmark: 'TPROC-X' — expected TPROC-C or TPROC-H");
    }

    #[test]
    fn writes_what_the_validator_requires_and_reads_back() {
        let rec = json!({
            "engine": "simulate", "tool": {"name": "storlab", "version": "0.1.0"},
            "inputs": {"profile": "tpcc-postgresql", "workload": {"warehouses": 10}, "rampup_s": 60.0, "duration_s": "300.0"},
            "results": [
                {"config": "gp3", "job": "tpcc", "vus": 4, "nopm": 1000.0, "tpm": 2300.0, "binding": "x",
                 "txn": {"new_order": {"commits": 990, "rollbacks": 10, "lat_mean_us": 2000.0, "lat_p50_us": 1800.0, "lat_p99_us": 5000.0, "lat_max_us": 9000.0}}},
                {"config": "gp3", "job": "tpcc", "vus": 8, "nopm": 1500.0, "tpm": 3450.0, "binding": "x", "txn": {}}],
            "series": []});
        let doc = write_report(&rec, "2026-11-28 02:00:00").unwrap();
        assert_eq!(doc["schema"], SCHEMA);
        assert_eq!(doc["disclaimer"]["audited"], false);
        for k in ["jobid", "hdb_version", "database", "database_display", "benchmark", "timestamp"] {
            assert!(doc["job"][k].as_str().is_some_and(|s| !s.is_empty()), "job.{k}");
        }
        assert_eq!(doc["job"]["jobid"].as_str().unwrap().len(), 24);
        assert_eq!(doc["job"]["database"], "PostgreSQL");
        // The 8-VU step has the higher NOPM: it is the job's.
        assert_eq!((doc["result"]["nopm"].as_f64(), doc["benchmark_config"]["virtual_users"].as_u64()), (Some(1500.0), Some(8)));
        assert_eq!(doc["benchmark_config"]["warehouses"], 10);
        // rampup 60 s and duration 300 s of the simulated scenario: 1 and 5 minutes.
        assert_eq!((doc["benchmark_config"]["rampup_minutes"].as_f64(), doc["benchmark_config"]["duration_minutes"].as_f64()), (Some(1.0), Some(5.0)));
        assert_eq!(doc["system"]["simulated"], true);
        assert!(doc["system"]["notes"][0].as_str().unwrap().starts_with("simulated by storlab 0.1.0"));
        let back = read("w.json", &doc).unwrap();
        let Some(JobExtra::Db(d)) = &back.results[0].extra else { panic!() };
        assert_eq!((d.vus, d.nopm), (8, Some(1500.0)));
        // A simulation read back stays one.
        assert_eq!(back.engine, crate::Engine::Simulate);
        assert!(back.results[0].binding.starts_with("simulated by"), "{}", back.results[0].binding);
        assert!(!back.results[0].binding.contains("measured"));
    }
}
