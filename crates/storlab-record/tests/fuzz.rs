//! Fuzzing the run record as `report`, `compare` and `calibrate` read it
//! back (`record_check_json` in the binding): a simulated record, mutated.
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
