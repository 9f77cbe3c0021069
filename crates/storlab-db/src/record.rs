//! What a timed run returns, typed: one `DbRun` per run, with per-type
//! `TxnStats` and the window's `IoProfile`. The JSON keys are the run
//! record's (docs/db.md; python/storlab/db/runner.py reads them): a field
//! that is absent for some workloads is skipped rather than null, as before.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One timed run: rampup, then the measured window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DbRun {
    pub workload: String,
    /// `sqlite` or `postgres`.
    pub db: String,
    /// Where it ran, never with a password.
    pub target: String,
    pub vus: u32,
    pub rampup_s: f64,
    /// The measured window as it was, in seconds.
    pub duration_s: f64,
    pub interrupted: bool,
    /// Transactions completed in the window (commits, rollbacks, errors).
    pub transactions: u64,
    /// The engine's TPM where there is one, else the client's.
    pub tpm: f64,
    /// `engine` or `client`.
    pub tpm_source: String,
    pub tpm_engine: Option<f64>,
    pub tpm_client: f64,
    pub engine_to_client_ratio: Option<f64>,
    /// Workers' transactions that ended after the window closed.
    pub tail_txns: u64,
    pub errors: u64,
    pub error_messages: BTreeMap<String, u64>,
    /// Per transaction type.
    pub txn: BTreeMap<String, TxnStats>,
    pub client_cpu_s: f64,
    pub client_cpu_user_s: f64,
    pub client_cpu_sys_s: f64,
    pub client_cpu_us_per_txn: f64,
    pub io_profile: IoProfile,
    pub per_second: PerSecond,
    pub lost_connection: Option<String>,
    pub started_unix_s: f64,
    /// When the last commit of the window landed, from the window's start.
    pub last_commit_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nopm: Option<f64>,
    /// HammerDB's line: `System achieved X NOPM from Y PostgreSQL TPM`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hammerdb: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warehouses: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_warehouses: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_and_think: Option<bool>,
    /// Insert storm and workload files: rows written (committed transactions
    /// for workload files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_per_min: Option<f64>,
    /// TPC-C with `--check`: conditions 1–4 of clause 3.3.2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistency: Option<BTreeMap<String, Check>>,
    /// PostgreSQL: the server's side of the window (what a profile needs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerStats>,
}

/// The server's side of a PostgreSQL window: its version and settings, the
/// CPU of its processes, and pg_stat_statements' counters per transaction
/// type (where the extension is installed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerStats {
    /// `PostgreSQL 15.8`.
    pub version: String,
    /// The settings that shape a profile, as `current_setting` shows them.
    pub settings: BTreeMap<String, String>,
    /// User and system CPU of the postmaster and its children over the
    /// window (/proc/PID/stat; `None` when the server is not on this machine).
    pub cpu_user_s: Option<f64>,
    pub cpu_sys_s: Option<f64>,
    /// `pg_stat_statements`, or `None` when it is not installed.
    pub statements_source: Option<String>,
    /// Top-level statements that belong to one transaction type.
    pub per_type: BTreeMap<String, StatementTotals>,
    /// BEGIN, COMMIT and ROLLBACK: shared by every type.
    pub other: StatementTotals,
    /// Each table of the schema with its indexes and TOAST
    /// (pg_total_relation_size) at the end of the window.
    pub relation_bytes: BTreeMap<String, u64>,
}

/// pg_stat_statements' counters summed over statements, over the window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct StatementTotals {
    pub calls: f64,
    pub exec_ms: f64,
    pub blks_hit: f64,
    pub blks_read: f64,
    pub blks_dirtied: f64,
    pub blks_written: f64,
    pub wal_bytes: f64,
    pub wal_records: f64,
}

impl StatementTotals {
    pub fn add(&mut self, v: &[f64; 8]) {
        self.calls += v[0];
        self.exec_ms += v[1];
        self.blks_hit += v[2];
        self.blks_read += v[3];
        self.blks_dirtied += v[4];
        self.blks_written += v[5];
        self.wal_bytes += v[6];
        self.wal_records += v[7];
    }
}

/// One transaction type's counts and client-side latency (µs, round trip
/// included) in the window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TxnStats {
    pub commits: u64,
    /// Intended rollbacks.
    pub rollbacks: u64,
    pub errors: u64,
    /// Commits and rollbacks per minute.
    pub per_min: f64,
    pub lat_mean_us: f64,
    pub lat_p50_us: f64,
    pub lat_p90_us: f64,
    pub lat_p99_us: f64,
    pub lat_p999_us: f64,
    pub lat_p9999_us: f64,
    pub lat_max_us: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
}

impl TxnStats {
    pub fn with_latency(mut self, l: storlab_stats::LatencySummary) -> TxnStats {
        self.lat_mean_us = l.lat_mean_us;
        self.lat_p50_us = l.lat_p50_us;
        self.lat_p90_us = l.lat_p90_us;
        self.lat_p99_us = l.lat_p99_us;
        self.lat_p999_us = l.lat_p999_us;
        self.lat_p9999_us = l.lat_p9999_us;
        self.lat_max_us = l.lat_max_us;
        self
    }
}

/// A consistency condition: the warehouses or districts violating it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub violations: i64,
    pub ok: bool,
}

/// Transactions and rows completed in each second from the first login.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PerSecond {
    pub txns: Vec<u64>,
    pub rows: Vec<u64>,
}

/// What the window asked of storage (docs/db.md, "The I/O profile").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IoProfile {
    pub transactions: u64,
    pub per_txn: PerTxnIo,
    pub buffer_cache_hit_ratio: Option<f64>,
    /// /proc/PID/io of a local PostgreSQL server's processes.
    pub server_processes: Option<crate::monitor::ProcIo>,
    /// Every counter's change over the window, by its name.
    pub totals: BTreeMap<String, f64>,
    pub notes: Vec<String>,
}

/// Per transaction; `None` where the engine does not expose the counter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PerTxnIo {
    pub read_bytes: Option<f64>,
    pub write_bytes: Option<f64>,
    pub read_syscalls: Option<f64>,
    pub write_syscalls: Option<f64>,
    pub fsyncs: Option<f64>,
    pub wal_bytes: Option<f64>,
}

/// What `prepare` did: whether it loaded, and how long it took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Prepared {
    pub loaded: bool,
    pub load_s: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_the_run_records_and_round_trip() {
        let mut run = DbRun { workload: "insert".into(), rows: Some(460), ..Default::default() };
        run.txn.insert("insert".into(), TxnStats { commits: 10, rows: Some(460), lat_p99_us: 1.5, ..Default::default() });
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
        for k in ["nopm", "hammerdb", "warehouses", "consistency"] {
            assert!(v.get(k).is_none(), "{k} present");
        }
        // tpm_engine is null where the engine has no counter (SQLite).
        assert!(v["tpm_engine"].is_null());
        let back: DbRun = serde_json::from_value(v).unwrap();
        assert_eq!(back, run);
    }
}
