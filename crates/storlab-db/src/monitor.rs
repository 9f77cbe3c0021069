//! The monitor connection: the snapshots a timed run takes at the edges of
//! its window — NOPM's Σd_next_o_id, the engine's commit and rollback
//! counter, and the I/O counters behind `io_profile`. It is a separate
//! connection, as HammerDB's monitor virtual user is, and its own queries
//! are counted so they can be taken out of the engine's count.

use crate::error::{DbError, Result};
use crate::pg::{pg_message, Target};
use crate::session::Db;
use crate::sqlite_io;
use serde::Serialize;
use std::collections::BTreeMap;
use tokio_postgres::Client;

/// Counters read from the kernel for a set of processes (/proc/PID/io):
/// bytes that reached the block layer, and read/write system calls.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct ProcIo {
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub syscr: u64,
    pub syscw: u64,
}

fn proc_io(pid: u32) -> Option<ProcIo> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    let mut io = ProcIo::default();
    for line in text.lines() {
        let (k, v) = line.split_once(':')?;
        let v: u64 = v.trim().parse().ok()?;
        match k {
            "read_bytes" => io.read_bytes = v,
            "write_bytes" => io.write_bytes = v,
            "syscr" => io.syscr = v,
            "syscw" => io.syscw = v,
            _ => {}
        }
    }
    Some(io)
}

fn ppid(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Field 4, after the parenthesised command name (which may hold spaces).
    stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

/// The postmaster of a local server and all its children, with their I/O.
fn server_io(postmaster: u32) -> BTreeMap<u32, ProcIo> {
    let mut out = BTreeMap::new();
    if let Some(io) = proc_io(postmaster) {
        out.insert(postmaster, io);
    }
    if let Ok(rd) = std::fs::read_dir("/proc") {
        for e in rd.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
            if ppid(pid) == Some(postmaster) {
                if let Some(io) = proc_io(pid) {
                    out.insert(pid, io);
                }
            }
        }
    }
    out
}

/// Sums end − start over the processes alive at the end (a process born in
/// the window counts from zero). Processes that ended inside the window take
/// their counters with them; the record says so.
fn delta(start: &BTreeMap<u32, ProcIo>, end: &BTreeMap<u32, ProcIo>) -> ProcIo {
    let mut d = ProcIo::default();
    for (pid, e) in end {
        let s = start.get(pid).copied().unwrap_or_default();
        d.read_bytes += e.read_bytes.saturating_sub(s.read_bytes);
        d.write_bytes += e.write_bytes.saturating_sub(s.write_bytes);
        d.syscr += e.syscr.saturating_sub(s.syscr);
        d.syscw += e.syscw.saturating_sub(s.syscw);
    }
    d
}

/// One snapshot of everything the monitor reads.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub at: Option<std::time::Instant>,
    pub d_next_o_id: Option<i64>,
    pub xact: Option<i64>,
    pub stats: BTreeMap<&'static str, f64>,
    pub procs: BTreeMap<u32, ProcIo>,
}

pub struct PgMonitor {
    c: Client,
    postmaster: Option<u32>,
    server_version: i32,
    /// Top-level transactions this monitor ran (each autocommit statement).
    pub own_xacts: i64,
}

const PG_STATS: &str = "SELECT \
  (SELECT blks_read FROM pg_stat_database WHERE datname = current_database())::float8, \
  (SELECT blks_hit FROM pg_stat_database WHERE datname = current_database())::float8, \
  (SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database())::float8, \
  w.wal_records::float8, w.wal_fpi::float8, w.wal_bytes::float8, w.wal_write::float8, w.wal_sync::float8, \
  b.buffers_checkpoint::float8, b.buffers_clean::float8, b.buffers_backend::float8, b.buffers_backend_fsync::float8, \
  (b.checkpoints_timed + b.checkpoints_req)::float8 \
  FROM pg_stat_wal w, pg_stat_bgwriter b";

const PG_STAT_NAMES: [&str; 13] = [
    "blks_read",
    "blks_hit",
    "xact",
    "wal_records",
    "wal_fpi",
    "wal_bytes",
    "wal_write",
    "wal_sync",
    "buffers_checkpoint",
    "buffers_clean",
    "buffers_backend",
    "buffers_backend_fsync",
    "checkpoints",
];

impl PgMonitor {
    pub async fn open(target: &Target) -> Result<PgMonitor> {
        let c = target.connect().await?;
        let row = c
            .query_one("SELECT pg_backend_pid(), current_setting('server_version_num')::int", &[])
            .await
            .map_err(|e| DbError::sql("monitor", pg_message(&e)))?;
        let backend: i32 = row.get(0);
        // A local server's backend is a process here; its parent is the postmaster.
        let postmaster = ppid(backend as u32).filter(|p| proc_io(*p).is_some());
        Ok(PgMonitor { c, postmaster, server_version: row.get(1), own_xacts: 1 })
    }

    pub fn server_version(&self) -> i32 {
        self.server_version
    }

    async fn scalar(&mut self, sql: &str) -> Result<Option<i64>> {
        self.own_xacts += 1;
        let row = self.c.query_one(sql, &[]).await.map_err(|e| DbError::sql("monitor snapshot", pg_message(&e)))?;
        Ok(row.get::<_, Option<i64>>(0))
    }

    /// A `count(*)` query (the consistency conditions).
    pub async fn count(&mut self, sql: &str) -> Result<i64> {
        Ok(self.scalar(&format!("SELECT ({sql})::bigint")).await?.unwrap_or(0))
    }

    /// Σd_next_o_id (TPC-C only): committed New-Orders since the load.
    pub async fn d_next_o_id(&mut self) -> Result<Option<i64>> {
        self.scalar("SELECT sum(d_next_o_id)::bigint FROM district").await
    }

    /// The database's commit + rollback counter. Each autocommit statement
    /// is its own transaction, so PostgreSQL's per-transaction statistics
    /// cache never serves a stale value here.
    pub async fn xact(&mut self) -> Result<Option<i64>> {
        self.scalar("SELECT (xact_commit + xact_rollback)::bigint FROM pg_stat_database WHERE datname = current_database()").await
    }

    pub async fn snapshot(&mut self, tpcc: bool) -> Result<Snapshot> {
        let mut s = Snapshot { at: Some(std::time::Instant::now()), ..Default::default() };
        if tpcc {
            s.d_next_o_id = self.d_next_o_id().await?;
        }
        self.own_xacts += 1;
        if let Ok(row) = self.c.query_one(PG_STATS, &[]).await {
            for (i, name) in PG_STAT_NAMES.iter().enumerate() {
                if let Ok(Some(v)) = row.try_get::<_, Option<f64>>(i) {
                    s.stats.insert(name, v);
                }
            }
        }
        if self.server_version >= 160_000 {
            self.own_xacts += 1;
            let q = "SELECT sum(reads * op_bytes)::float8, sum(writes * op_bytes)::float8, sum(fsyncs)::float8, sum(extends * op_bytes)::float8 FROM pg_stat_io";
            if let Ok(row) = self.c.query_one(q, &[]).await {
                for (i, name) in ["io_read_bytes", "io_write_bytes", "io_fsyncs", "io_extend_bytes"].iter().enumerate() {
                    if let Ok(Some(v)) = row.try_get::<_, Option<f64>>(i) {
                        s.stats.insert(name, v);
                    }
                }
            }
        }
        if let Some(pm) = self.postmaster {
            s.procs = server_io(pm);
        }
        Ok(s)
    }

    /// Waits until no other session is connected to this database (at most
    /// `limit`), so that exiting backends have flushed their counters.
    pub async fn wait_for_disconnects(&mut self, limit: std::time::Duration) {
        let t0 = std::time::Instant::now();
        while t0.elapsed() < limit {
            match self
                .scalar("SELECT count(*)::bigint FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'")
                .await
            {
                Ok(Some(0)) => break,
                Ok(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
                Err(_) => break,
            }
        }
    }
}

/// The monitor of a run: PostgreSQL's statistics views on a connection of
/// its own, or SQLite's counting VFS and a connection for the TPC-C queries.
pub enum Monitor {
    Pg(PgMonitor),
    Sqlite(rusqlite::Connection),
}

impl Monitor {
    pub async fn open(db: &Db) -> Result<Monitor> {
        Ok(match db {
            Db::Postgres(t) => Monitor::Pg(PgMonitor::open(t).await?),
            Db::Sqlite { path } => Monitor::Sqlite(sqlite_io::open(path)?),
        })
    }

    pub async fn snapshot(&mut self, tpcc: bool) -> Result<Snapshot> {
        match self {
            Monitor::Pg(m) => m.snapshot(tpcc).await,
            Monitor::Sqlite(c) => {
                let mut s = Snapshot { at: Some(std::time::Instant::now()), ..Default::default() };
                if tpcc {
                    s.d_next_o_id = c.query_row("SELECT sum(d_next_o_id) FROM district", [], |r| r.get(0)).map_err(|e| DbError::sql("monitor snapshot", e))?;
                }
                s.stats = sqlite_io::snapshot();
                Ok(s)
            }
        }
    }

    /// The engine's commit + rollback counter (PostgreSQL only).
    pub async fn xact(&mut self) -> Result<Option<i64>> {
        match self {
            Monitor::Pg(m) => m.xact().await,
            Monitor::Sqlite(_) => Ok(None),
        }
    }

    /// The monitor's own transactions so far (taken out of the engine's count).
    pub fn own_xacts(&self) -> i64 {
        match self {
            Monitor::Pg(m) => m.own_xacts,
            Monitor::Sqlite(_) => 0,
        }
    }

    /// The engine's counter once every worker has gone (exits flush their
    /// statistics), with the monitor's own transactions at that moment.
    pub async fn xact_after_disconnects(&mut self) -> Result<Option<(i64, i64)>> {
        match self {
            Monitor::Pg(m) => {
                m.wait_for_disconnects(std::time::Duration::from_secs(10)).await;
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                let own = m.own_xacts;
                Ok(m.xact().await?.map(|x| (x, own)))
            }
            Monitor::Sqlite(_) => Ok(None),
        }
    }

    /// A `count(*)` query (the consistency conditions).
    pub async fn count(&mut self, sql: &str) -> Result<i64> {
        match self {
            Monitor::Pg(m) => m.count(sql).await,
            Monitor::Sqlite(c) => c.query_row(sql, [], |r| r.get(0)).map_err(|e| DbError::sql("consistency check", e)),
        }
    }
}

/// The I/O profile of the measured window: totals and per transaction.
pub fn io_profile(start: &Snapshot, end: &Snapshot, txns: u64, engine: &str, note: Vec<String>) -> serde_json::Value {
    let d = |k: &str| match (start.stats.get(k), end.stats.get(k)) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let per = |v: Option<f64>| v.map(|v| if txns > 0 { v / txns as f64 } else { 0.0 });
    let mut totals = serde_json::Map::new();
    for k in end.stats.keys() {
        if *k == "xact" {
            continue;
        }
        if let Some(v) = d(k) {
            totals.insert((*k).to_string(), v.into());
        }
    }
    let procs = (!end.procs.is_empty()).then(|| delta(&start.procs, &end.procs));
    let hit_ratio = match (d("blks_hit"), d("blks_read")) {
        (Some(h), Some(r)) if h + r > 0.0 => Some(h / (h + r)),
        _ => None,
    };
    let block = engine_block_bytes(engine);
    let reads = procs.map(|p| p.read_bytes as f64).or(d("io_read_bytes")).or(d("blks_read").map(|b| b * block));
    let writes = procs.map(|p| p.write_bytes as f64).or(d("io_write_bytes"));
    let fsyncs = match (d("wal_sync"), d("buffers_backend_fsync"), d("io_fsyncs")) {
        (a, b, Some(io)) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0) + io),
        (Some(a), b, None) => Some(a + b.unwrap_or(0.0)),
        (None, _, None) => d("fsyncs"),
    };
    serde_json::json!({
        "transactions": txns,
        "per_txn": {
            "read_bytes": per(reads),
            "write_bytes": per(writes),
            "read_syscalls": per(procs.map(|p| p.syscr as f64).or(d("read_calls"))),
            "write_syscalls": per(procs.map(|p| p.syscw as f64).or(d("write_calls"))),
            "fsyncs": per(fsyncs),
            "wal_bytes": per(d("wal_bytes")),
        },
        "buffer_cache_hit_ratio": hit_ratio,
        "server_processes": procs,
        "totals": totals,
        "notes": note,
    })
}

fn engine_block_bytes(engine: &str) -> f64 {
    if engine == "sqlite" {
        4096.0
    } else {
        8192.0
    }
}
