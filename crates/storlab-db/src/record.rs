//! What a timed run returns: the run record's own types (storlab-record),
//! so the record maps them without a copy. `DbRun` per run, with per-type
//! `TxnStats`, the window's `IoProfile` and, on PostgreSQL, the server's
//! side (`ServerStats`) that workload profiles are made of. The JSON keys
//! are the ones python/storlab/db/runner.py has always read.

pub use storlab_record::db::{Consistency, DbRun, IoProfile, Load as Prepared, PerSecond, PerTxnIo, ProcIo, ServerStats, StatementTotals, TxnStats};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_the_run_records_and_round_trip() {
        let mut run = DbRun { workload: "insert".into(), rows: Some(460), ..Default::default() };
        let latency = storlab_record::LatencySummary { lat_p99_us: 1.5, ..Default::default() };
        run.txn.insert("insert".into(), TxnStats { latency, commits: 10, rollbacks: 0, errors: 0, per_min: 1.0, rows: Some(460) });
        let v = serde_json::to_value(&run).unwrap();
        // The keys python/storlab/db/runner.py and the CLI table read.
        for k in ["workload", "db", "target", "vus", "duration_s", "tpm", "tpm_client", "txn", "io_profile", "per_second", "started_unix_s", "last_commit_s", "rows", "client_cpu_us_per_txn", "interrupted"] {
            assert!(v.get(k).is_some(), "{k} missing");
        }
        for k in ["commits", "rollbacks", "errors", "per_min", "lat_p50_us", "lat_p99_us", "lat_max_us", "rows"] {
            assert!(v["txn"]["insert"].get(k).is_some(), "txn.{k} missing");
        }
        for k in ["read_bytes", "write_bytes", "read_syscalls", "write_syscalls", "fsyncs", "wal_bytes"] {
            assert!(v["io_profile"]["per_txn"].get(k).is_some(), "per_txn.{k} missing");
        }
        // Absent for this workload, so absent from the JSON (not null), as before.
        for k in ["nopm", "hammerdb", "warehouses", "consistency", "server"] {
            assert!(v.get(k).is_none(), "{k} present");
        }
        // tpm_engine is null where the engine has no counter (SQLite).
        assert!(v["tpm_engine"].is_null());
        let back: DbRun = serde_json::from_value(v).unwrap();
        assert_eq!(back, run);
    }
}
