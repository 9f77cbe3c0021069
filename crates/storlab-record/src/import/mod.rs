//! Other tools' result files read into a storlab run record.
//!
//! A DBA already has CrystalDiskMark exports, fio JSON, HammerDB job
//! reports, sysbench and pgbench final reports and CloudWatch data. Each of
//! these formats has one owner here (one file per format); [`import`] finds
//! which one a file is and returns a [`RunRecord`] with `engine = "measure"`
//! and `tool.name` naming the origin, so `report`, `compare` and `calibrate`
//! read it beside simulated records. What the file says about how it was
//! made (profile, date, OS, test size, options) is kept in `host_info`.
//!
//! The reverse for HammerDB: [`hammerdb::write_report`] writes a
//! `hammerdb-job-report-v1` document from a database run record.

pub mod cdm;
pub mod check;
pub mod cloudwatch;
pub mod fio;
pub mod hammerdb;
pub mod hammerdb_log;
pub mod pgbench;
pub mod sysbench;

use crate::{Engine, Object, RunRecord, Tool};

/// Why a file could not be imported. Every message names the file, the
/// line or entry, and the field.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    #[error("{file}: not a format storlab imports — expected a CrystalDiskMark 6/7/8 text export, fio --output-format=json or json+, a HammerDB hammerdb-job-report-v1 JSON or hammerdb.log, a sysbench or pgbench final report, or CloudWatch get-metric-data JSON or a CloudWatch console CSV ({why})")]
    UnknownFormat { file: String, why: String },
    #[error("{file}: line {line}: {field}: {message}")]
    Line { file: String, line: usize, field: String, message: String },
    #[error("{file}: {entry}: {field}: {message}")]
    Entry { file: String, entry: String, field: String, message: String },
    #[error("{file}: no results in this {format} file — {hint}")]
    Empty { file: String, format: String, hint: String },
    #[error("{file}: not valid JSON at line {line}, column {column}: {message}")]
    Json { file: String, line: usize, column: usize, message: String },
}

/// Which format a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    CrystalDiskMark,
    Fio,
    HammerDb,
    /// HammerDB's run log or transaction counter log (text).
    HammerDbLog,
    Sysbench,
    Pgbench,
    CloudWatchJson,
    CloudWatchCsv,
    /// Already a storlab run record.
    Record,
}

/// File bytes as text: UTF-8 (with or without BOM) or UTF-16 with a BOM
/// (Windows tools save either).
pub fn decode(bytes: &[u8]) -> String {
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return String::from_utf8_lossy(rest).into_owned();
    }
    let utf16 = |le: bool, rest: &[u8]| {
        let units: Vec<u16> = rest
            .chunks_exact(2)
            .map(|c| if le { u16::from_le_bytes([c[0], c[1]]) } else { u16::from_be_bytes([c[0], c[1]]) })
            .collect();
        String::from_utf16_lossy(&units)
    };
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        return utf16(true, rest);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        return utf16(false, rest);
    }
    String::from_utf8_lossy(bytes).into_owned()
}

/// The JSON document in `text`, skipping lines a tool printed before it
/// (fio writes notes such as "note: both iodepth >= 1 and synchronous I/O
/// engine are selected" ahead of its JSON).
fn json_start(text: &str) -> Option<&str> {
    let t = text.trim_start();
    if t.starts_with('{') {
        return Some(t);
    }
    let mut off = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with('{') {
            return Some(&text[off..]);
        }
        off += line.len();
    }
    None
}

/// Which format `text` is, and its JSON value where it is JSON.
pub fn detect(name: &str, text: &str) -> Result<(Format, Option<serde_json::Value>), ImportError> {
    if let Some(js) = json_start(text) {
        if js.trim_start().starts_with('{') && (text.trim_start().starts_with('{') || text.contains("\"fio version\"")) {
            let v: serde_json::Value = serde_json::from_str(js).map_err(|e| ImportError::Json {
                file: name.into(),
                line: e.line() + text[..text.len() - js.len()].matches('\n').count(),
                column: e.column(),
                message: e.to_string(),
            })?;
            let has = |k: &str| v.get(k).is_some();
            let f = if v.get("schema").and_then(|s| s.as_str()).is_some_and(|s| s.starts_with("hammerdb-job-report")) || (has("job") && has("result") && has("benchmark_config")) {
                Format::HammerDb
            } else if has("fio version") || has("client_stats") || v.get("jobs").and_then(|j| j.get(0)).is_some_and(|j| j.get("jobname").is_some()) {
                Format::Fio
            } else if has("MetricDataResults") {
                Format::CloudWatchJson
            } else if has("schema_version") && has("results") {
                Format::Record
            } else {
                let keys: Vec<&str> = v.as_object().map(|o| o.keys().map(|k| k.as_str()).take(6).collect()).unwrap_or_default();
                return Err(ImportError::UnknownFormat { file: name.into(), why: format!("a JSON document with keys {keys:?}") });
            };
            return Ok((f, Some(v)));
        }
    }
    if hammerdb_log::looks_like(text) {
        return Ok((Format::HammerDbLog, None));
    }
    if text.contains("CrystalDiskMark") || cdm::looks_like(text) {
        return Ok((Format::CrystalDiskMark, None));
    }
    if text.contains("SQL statistics:") || (text.contains("sysbench") && text.contains("General statistics:")) {
        return Ok((Format::Sysbench, None));
    }
    if text.contains("number of transactions actually processed") || (text.contains("pgbench") && text.contains("tps = ")) {
        return Ok((Format::Pgbench, None));
    }
    if cloudwatch::looks_like_csv(text) {
        return Ok((Format::CloudWatchCsv, None));
    }
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    let first: String = first.chars().take(60).collect();
    Err(ImportError::UnknownFormat { file: name.into(), why: format!("its first line is {first:?}") })
}

/// Reads another tool's result file (`name` is used in messages) into a run
/// record. Results take the tool's name as their config (`CrystalDiskMark`,
/// `fio`, ...), so two exports of one tool line up in `compare`.
pub fn import(name: &str, bytes: &[u8]) -> Result<RunRecord, ImportError> {
    let text = decode(bytes);
    let (format, json) = detect(name, &text)?;
    let json = json.unwrap_or(serde_json::Value::Null);
    let rec = match format {
        Format::CrystalDiskMark => cdm::read(name, &text),
        Format::Fio => fio::read(name, &json),
        Format::HammerDb => hammerdb::read(name, &json),
        Format::HammerDbLog => hammerdb_log::read(name, &text),
        Format::Sysbench => sysbench::read(name, &text),
        Format::Pgbench => pgbench::read(name, &text),
        Format::CloudWatchJson => cloudwatch::read_json(name, &json),
        Format::CloudWatchCsv => cloudwatch::read_csv(name, &text),
        Format::Record => serde_json::from_value(json).map_err(|e| ImportError::Entry {
            file: name.into(),
            entry: "record".into(),
            field: "results".into(),
            message: format!("a storlab run record that does not fit the record type: {e}"),
        }),
    }?;
    if format != Format::Record {
        check::values(name, &rec)?;
    }
    Ok(rec)
}

/// A file's name without folders or extension (`cdm8-nvme.txt` gives
/// `cdm8-nvme`): the config where several files are imported into one record.
pub fn config_name(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    match base.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem.to_string(),
        _ => base.to_string(),
    }
}

/// An empty measured record from `tool`.
pub(crate) fn record(tool: &str, version: &str, workload: impl Into<String>, source: Object) -> RunRecord {
    let mut r = RunRecord::new(Engine::Measure, workload, 0);
    r.tool = Some(Tool { name: tool.into(), version: version.into(), git_sha: String::new() });
    r.host_info = Some(source);
    r
}

/// `host_info` with the origin and the file named.
pub(crate) fn source(origin: &str, file: &str) -> Object {
    let mut o = Object::new();
    o.insert("source".into(), origin.into());
    o.insert("file".into(), file.into());
    o
}

/// Sizes in other tools' outputs (`1 GiB`, `1024 MiB`, `4KiB`, `16m`): the
/// one grammar storlab reads sizes with.
pub(crate) use crate::units::parse_size;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_and_bom_are_decoded() {
        let mut b = vec![0xFF, 0xFE];
        for u in "[Read]\r\n".encode_utf16() {
            b.extend_from_slice(&u.to_le_bytes());
        }
        assert_eq!(decode(&b), "[Read]\r\n");
        assert_eq!(decode(b"\xEF\xBB\xBFabc"), "abc");
    }

    #[test]
    fn unknown_files_are_refused_naming_the_file() {
        let e = import("notes.txt", b"hello world\n").unwrap_err().to_string();
        assert!(e.starts_with("notes.txt: not a format storlab imports"), "{e}");
        assert!(e.contains("\"hello world\""), "{e}");
        let e = import("x.json", b"{\"a\": 1}").unwrap_err().to_string();
        assert!(e.contains("keys [\"a\"]"), "{e}");
        let e = import("x.json", b"{\"jobs\": [").unwrap_err().to_string();
        assert!(e.starts_with("x.json: not valid JSON at line 1"), "{e}");
    }

    /// fio prints notes on stdout ahead of its JSON; they are skipped.
    #[test]
    fn fio_notes_before_the_json_are_skipped() {
        let text = b"note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1\n\
{\"fio version\": \"fio-3.33\", \"jobs\": [{\"jobname\": \"w\", \"write\": {\"total_ios\": 4, \"iops\": 4.0, \"bw_bytes\": 16384, \"runtime\": 1000}}]}\n";
        let r = import("fio.json", text).unwrap();
        assert_eq!(r.results[0].job, "w-write");
        let e = import("fio.json", b"note: x\n{\"fio version\": \"fio-3.33\",\n \"jobs\": [}").unwrap_err().to_string();
        assert!(e.starts_with("fio.json: not valid JSON at line 3"), "{e}");
    }

    #[test]
    fn sizes_and_config_names() {
        assert_eq!(parse_size("1 GiB"), Some(1 << 30));
        assert_eq!(parse_size("1024 MiB"), Some(1 << 30));
        assert_eq!(parse_size("16m"), Some(16 << 20));
        assert_eq!(parse_size("3 parsecs"), None);
        assert_eq!(config_name("tests/data/import/cdm8.txt"), "cdm8");
        assert_eq!(config_name("C:\\x\\run.1.json"), "run.1");
    }
}

/// The sample files under tests/data/import, in their tools' exact formats.
#[cfg(test)]
mod samples {
    use super::*;

    fn sample(name: &str) -> RunRecord {
        let path = format!("{}/../../tests/data/import/{name}", env!("CARGO_MANIFEST_DIR"));
        import(name, &std::fs::read(&path).unwrap()).unwrap()
    }

    fn job<'a>(r: &'a RunRecord, name: &str) -> &'a crate::IoColumns {
        r.results.iter().find(|x| x.job == name).unwrap_or_else(|| panic!("no {name}")).io.as_ref().unwrap()
    }

    #[test]
    fn crystaldiskmark_8_crlf_with_mix() {
        let r = sample("cdm8.txt");
        assert_eq!(r.tool.as_ref().unwrap().name, "CrystalDiskMark 8.0.4");
        assert_eq!(r.results.len(), 12);
        // `  RND    4KiB (Q= 32, T=16):  4094.649 MB/s [ 999670.2 IOPS] <   494.56 us>`
        let a = job(&r, "RND4K-Q32T16-read");
        assert_eq!((a.bw_bytes_s, a.iops, a.latency.lat_mean_us, a.outstanding), (4094.649e6, 999670.2, 494.56, 512));
        assert_eq!(job(&r, "SEQ128K-Q32T1-write").bw_bytes_s, 6520.628e6);
        assert_eq!(job(&r, "RND4K-Q1T1-mix70").iops, 17202.4);
        let h = r.host_info.as_ref().unwrap();
        assert_eq!((h["profile"].as_str(), h["date"].as_str(), h["mix"].as_str()), (Some("Default"), Some("2024/01/06 5:41:48"), Some("Read 70%/Write 30%")));
        assert_eq!(h["os"], "Windows 11  [10.0 Build 22631] (x64)");
        assert_eq!(h["test_size_bytes"], 1u64 << 30);
        assert_eq!(h["measure_s"], 5.0);
        assert!(r.warnings.is_empty() && !r.interrupted);
    }

    #[test]
    fn crystaldiskmark_7_lf_trailing_blanks() {
        let r = sample("cdm7.txt");
        assert_eq!(r.tool.as_ref().unwrap().name, "CrystalDiskMark 7.0.0");
        assert_eq!(r.results.len(), 8);
        let a = job(&r, "RND4K-Q1T1-write");
        assert_eq!((a.bw_bytes_s, a.iops, a.latency.lat_mean_us), (0.664e6, 162.1, 6152.49));
        assert_eq!(job(&r, "SEQ1M-Q1T1-read").latency.lat_mean_us, 10822.04);
    }

    #[test]
    fn crystaldiskmark_6_and_a_stopped_peak_run() {
        let r = sample("cdm6.txt");
        assert_eq!(r.results.len(), 8);
        assert_eq!(r.warnings.len(), 1);
        assert_eq!(job(&r, "RND4K-Q8T8-write").iops, 78607.2);
        let p = sample("cdm8-peak-stopped.txt");
        assert_eq!(p.workload, "CrystalDiskMark Peak");
        assert!(p.interrupted);
        assert_eq!(p.results.len(), 3);
        assert!(p.results.iter().all(|x| x.job != "RND4K-Q32T16-write"));
    }

    #[test]
    fn fio_json_and_json_plus() {
        let r = sample("fio-randread.json");
        assert_eq!(r.tool.as_ref().unwrap().name, "fio-3.33");
        // "iops" : 14535.464535, "bw_bytes" : 59537262, clat mean 67889.233952 ns.
        let a = job(&r, "RND4K-Q1T1-read");
        assert_eq!((a.iops, a.bw_bytes_s), (14535.464535, 59537262.0));
        assert!((a.latency.lat_mean_us - 67.889233952).abs() < 0.2, "{}", a.latency.lat_mean_us);
        assert_eq!(a.latency.lat_p50_us, 55.552);
        let p = sample("fio-jsonplus.json");
        let names: Vec<&str> = p.results.iter().map(|x| x.job.as_str()).collect();
        assert_eq!(names, ["SEQ1M-Q1T1-write", "SEQ1M-Q1T1-write-sync", "mixed-read", "mixed-write"]);
        // numjobs=2 under group_reporting: 2 in flight.
        assert_eq!(job(&p, "mixed-read").outstanding, 2);
        // `fio --client=ip:127.0.0.1,…`: the server's host is the config.
        let c = sample("fio-client.json");
        assert_eq!((c.results[0].config.as_str(), c.results[0].job.as_str()), ("127.0.0.1", "RND4K-Q1T1-read"));
        assert_eq!(job(&c, "RND4K-Q1T1-read").iops, 10926.073926);
    }

    fn db(r: &RunRecord) -> &crate::DbJob {
        match &r.results[0].extra {
            Some(crate::JobExtra::Db(d)) => d,
            other => panic!("not a database result: {other:?}"),
        }
    }

    #[test]
    fn hammerdb_job_report() {
        let r = sample("hammerdb-mysql-tprocc.json");
        assert_eq!((r.tool.as_ref().unwrap().name.as_str(), r.workload.as_str()), ("HammerDB", "tpcc"));
        let d = db(&r);
        // "nopm": 328858, "tpm": 763485, "active_virtual_users": 24
        assert_eq!((d.vus, d.nopm, d.tpm), (24, Some(328858.0), Some(763485.0)));
        // DELIVERY: avg 6.466 ms, p99 16.48 ms, 234059 calls.
        let del = &d.txn["delivery"];
        assert_eq!((del.latency.lat_mean_us, del.latency.lat_p99_us, del.commits), (6466.0, 16480.0, 234059));
        assert_eq!(d.txn.len(), 5);
        let tpm = r.series.iter().find(|s| s.metric == "TPM").unwrap();
        assert_eq!((tpm.values.len(), tpm.values[1]), (8, 519378.0));
        let iops = r.series.iter().find(|s| s.metric == "IOPS").unwrap();
        assert_eq!(iops.values, [1253.0, 1357.0, 2511.0]);
        assert_eq!(r.host_info.as_ref().unwrap()["benchmark_config"]["warehouses"], 192);
    }

    #[test]
    fn sysbench_reports() {
        let r = sample("sysbench-oltp_read_write.txt");
        assert_eq!(r.tool.as_ref().unwrap().version, "1.0.20");
        let d = db(&r);
        // `transactions: 4325 (864.05 per sec.)`, 4 threads, avg 4.63 ms, max 19.83 ms.
        assert_eq!((d.vus, d.tpm), (4, Some(864.05 * 60.0)));
        let t = &d.txn["oltp_read_write"];
        assert_eq!((t.commits, t.errors, t.latency.lat_mean_us, t.latency.lat_max_us), (4325, 1, 4630.0, 19830.0));
        assert_eq!(r.host_info.as_ref().unwrap()["latency_p95_us"], 7430.0);
        let i = sample("sysbench-oltp_insert.txt");
        let d = db(&i);
        assert_eq!((d.vus, d.rows), (2, Some(6479)));
        // `[ 1s ] … tps: 1944.51`, `[ 2s ] … tps: 2142.33`, `[ 3s ] … tps: 2388.87`
        assert_eq!(i.series[0].values, [1944.51, 2142.33, 2388.87]);
        assert_eq!(i.series[0].period_s, 1.0);
    }

    #[test]
    fn pgbench_reports() {
        let r = sample("pgbench.txt");
        assert_eq!(r.tool.as_ref().unwrap().version, "15.18");
        let d = db(&r);
        // `tps = 819.813056`, 4 clients, 4096 transactions, latency average 4.879 ms.
        assert_eq!((d.vus, d.tpm), (4, Some(819.813056 * 60.0)));
        assert_eq!((d.txn["transaction"].commits, d.txn["transaction"].latency.lat_mean_us), (4096, 4879.0));
        assert_eq!(r.host_info.as_ref().unwrap()["scaling_factor"], 2.0);
        let p = sample("pgbench-progress.txt");
        assert_eq!(p.series[0].values[..2], [429.0, 371.0]);
        let h = p.host_info.as_ref().unwrap();
        assert_eq!(h["latency_stddev_ms"], 4.496);
        assert_eq!(h["statement_latencies"].as_array().unwrap().len(), 11);
    }

    #[test]
    fn cloudwatch_get_metric_data() {
        let r = sample("cloudwatch-get-metric-data.json");
        assert_eq!(r.tool.as_ref().unwrap().name, "CloudWatch");
        let ops = &r.series[0];
        assert_eq!((ops.metric.as_str(), ops.unit.as_str(), ops.period_s), ("VolumeReadOps", "Count", 300.0));
        assert_eq!(ops.values, [450000.0, 899700.0, 900600.0, 903000.0]);
        assert_eq!(r.series[1].unit, "Percent");
    }
}
