//! Fuzzing the run record as `report`, `compare` and `calibrate` read it
//! back (`record_check` in the binding): a simulated record, mutated.
//! Every input is read or refused in one non-empty line, never a panic.

#[path = "../../storlab-workload/tests/fuzzing/mod.rs"]
mod fuzzing;

use fuzzing::{fuzz, one_line};
use storlab_record::RunRecord;

const SIMULATED: &str = r#"{"schema_version": 1, "tool": {"name": "storlab", "version": "0.1.0", "git_sha": "abc"},
 "engine": "simulate", "scenario": "s.toml", "seed": 1, "workload": "cdm-default",
 "results": [{"config": "a", "job": "RND4K-Q32T16-read", "pool": "all", "binding": "latency", "iops": 3000.5,
   "bw_bytes_s": 12290048, "read_iops": 3000.5, "write_iops": 0, "lat_mean_us": 170.2, "lat_p50_us": 160,
   "lat_p90_us": 200, "lat_p99_us": 400, "lat_p999_us": 800, "lat_max_us": 1200, "outstanding": 512, "runtime_s": 5}],
 "series": [{"config": "a", "resource": "pool all", "metric": "VolumeReadOps", "unit": "Count", "period_s": 60,
   "timestamps": [0, 60], "values": [180000, 180000]}],
 "interrupted": false, "period_s": 60, "simulated_s": 120, "simulated_ios": 360000}"#;

#[test]
fn fuzz_run_records() {
    fuzz("record", &[SIMULATED], 3000, |text| match serde_json::from_str::<RunRecord>(text) {
        Err(e) => one_line(format!("r.json: {e}")),
        Ok(r) => serde_json::to_string(&r).map(|_| ()).map_err(|e| format!("a record read but not written: {e}")),
    });
}

/// The project's own import samples, every format storlab imports: the
/// fuzzer's corpus.
const IMPORTS: &[(&str, &str)] = &[
    ("cdm6.txt", include_str!("../../../tests/data/import/cdm6.txt")),
    ("cdm7.txt", include_str!("../../../tests/data/import/cdm7.txt")),
    ("cdm8.txt", include_str!("../../../tests/data/import/cdm8.txt")),
    ("cdm8-gp3-default.txt", include_str!("../../../tests/data/import/cdm8-gp3-default.txt")),
    ("cdm8-peak-stopped.txt", include_str!("../../../tests/data/import/cdm8-peak-stopped.txt")),
    ("cloudwatch-console.csv", include_str!("../../../tests/data/import/cloudwatch-console.csv")),
    ("cloudwatch-get-metric-data.json", include_str!("../../../tests/data/import/cloudwatch-get-metric-data.json")),
    ("fio-client.json", include_str!("../../../tests/data/import/fio-client.json")),
    ("fio-jsonplus.json", include_str!("../../../tests/data/import/fio-jsonplus.json")),
    ("fio-randread.json", include_str!("../../../tests/data/import/fio-randread.json")),
    ("hammerdb-mysql-tprocc.json", include_str!("../../../tests/data/import/hammerdb-mysql-tprocc.json")),
    ("hammerdb-sqlserver-sequence.log", include_str!("../../../tests/data/import/hammerdb-sqlserver-sequence.log")),
    ("hdbtcount.log", include_str!("../../../tests/data/import/hdbtcount.log")),
    ("pgbench-progress.txt", include_str!("../../../tests/data/import/pgbench-progress.txt")),
    ("pgbench.txt", include_str!("../../../tests/data/import/pgbench.txt")),
    ("sysbench-oltp_insert.txt", include_str!("../../../tests/data/import/sysbench-oltp_insert.txt")),
    ("sysbench-oltp_read_write.txt", include_str!("../../../tests/data/import/sysbench-oltp_read_write.txt")),
];

/// Nonsense an accepted import must not hold, checked on the record as
/// JSON, apart from the reader's own checks: a figure that is not a
/// number (NaN and infinities serialise as null; an absent NOPM or TPM is
/// null too), a negative rate or
/// latency, an I/O latency past 10 s or a transaction's past an hour.
fn nonsense(rec: &RunRecord) -> Option<String> {
    let v = serde_json::to_value(rec).ok()?;
    let figure = |k: &str| {
        ["iops", "bw_bytes_s", "read_iops", "write_iops", "runtime_s", "nopm", "tpm", "per_min"].contains(&k) || k.starts_with("lat_")
    };
    let check = |entry: &str, obj: &serde_json::Map<String, serde_json::Value>, max_lat: f64| -> Option<String> {
        for (k, x) in obj {
            if !figure(k) {
                continue;
            }
            // A database run's NOPM or TPM may be absent (sysbench gives no
            // NOPM); every other figure is a number.
            if x.is_null() && ["nopm", "tpm"].contains(&k.as_str()) {
                continue;
            }
            let Some(n) = x.as_f64() else { return Some(format!("{entry}.{k} is {x}, not a number")) };
            if n < 0.0 || (k.starts_with("lat_") && n > max_lat) {
                return Some(format!("{entry}.{k} = {n} accepted"));
            }
        }
        None
    };
    for r in v["results"].as_array()? {
        let entry = r["job"].as_str().unwrap_or("?");
        let max = if r.get("txn").is_some() { 3.6e9 } else { 1e7 };
        if let Some(why) = check(entry, r.as_object()?, max) {
            return Some(why);
        }
        for (name, t) in r.get("txn").and_then(|t| t.as_object()).into_iter().flatten() {
            if let Some(why) = t.as_object().and_then(|o| check(&format!("{entry} {name}"), o, 3.6e9)) {
                return Some(why);
            }
        }
    }
    for s in v["series"].as_array()? {
        if let Some(bad) = s["values"].as_array()?.iter().find(|x| x.as_f64().is_none_or(|n| n < 0.0)) {
            return Some(format!("series {} value {bad} accepted", s["metric"]));
        }
    }
    None
}

#[test]
fn fuzz_imports() {
    let seeds: Vec<&str> = IMPORTS.iter().map(|(_, t)| *t).collect();
    // The file name decides nothing but messages; each seed keeps its own.
    fuzz("import", &seeds, 3000, |text| {
        let head = text.get(..20).unwrap_or("\u{0}");
        let name = IMPORTS.iter().find(|(_, t)| t.starts_with(head)).map_or("r.txt", |(n, _)| n);
        match storlab_record::import::import(name, text.as_bytes()) {
            Err(e) => one_line(e),
            Ok(rec) => match nonsense(&rec) {
                Some(why) => Err(format!("{name}: {why}")),
                None => Ok(()),
            },
        }
    });
}
