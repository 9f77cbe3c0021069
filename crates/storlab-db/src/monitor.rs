//! The monitor connection: the snapshots a timed run takes at the edges of
//! its window — NOPM's Σd_next_o_id, the engine's commit and rollback
//! counter, and the I/O counters behind `io_profile`. It is a separate
//! connection, as HammerDB's monitor virtual user is, and its own queries
//! are counted so they can be taken out of the engine's count.

use crate::error::{DbError, Result};
use crate::mysql::{message as my_message, Target as MyTarget};
use crate::pg::{pg_message, Target};
use crate::session::Db;
use crate::sqlite_io;
use crate::record::{IoProfile, PerTxnIo, ServerStats, StatementTotals};
use std::collections::BTreeMap;
use tokio_postgres::Client;

/// Counters read from the kernel for a set of processes (/proc/PID/io):
/// bytes that reached the block layer, and read/write system calls.
pub use crate::record::ProcIo;

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

/// User and system CPU of a process in clock ticks (/proc/PID/stat fields 14, 15).
fn proc_cpu(pid: u32) -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut f = stat.rsplit_once(')')?.1.split_whitespace();
    // After the command name: state is field 3, so utime (14) is the 12th.
    let utime = f.nth(11)?.parse().ok()?;
    let stime = f.next()?.parse().ok()?;
    Some((utime, stime))
}

fn ppid(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Field 4, after the parenthesised command name (which may hold spaces).
    stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

/// The postmaster of a local server and all its children, with their I/O
/// and their CPU ticks.
fn server_io(postmaster: u32) -> (BTreeMap<u32, ProcIo>, BTreeMap<u32, (u64, u64)>) {
    let (mut out, mut cpu) = (BTreeMap::new(), BTreeMap::new());
    let mut add = |pid: u32| {
        if let Some(io) = proc_io(pid) {
            out.insert(pid, io);
        }
        if let Some(c) = proc_cpu(pid) {
            cpu.insert(pid, c);
        }
    };
    add(postmaster);
    if let Ok(rd) = std::fs::read_dir("/proc") {
        for e in rd.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
            if ppid(pid) == Some(postmaster) {
                add(pid);
            }
        }
    }
    (out, cpu)
}

/// CPU seconds (user, system) of the processes alive at the end, from the
/// start (a process born in the window counts from zero).
pub fn cpu_delta(start: &Snapshot, end: &Snapshot) -> Option<(f64, f64)> {
    if end.cpu.is_empty() {
        return None;
    }
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let (mut u, mut s) = (0u64, 0u64);
    for (pid, e) in &end.cpu {
        let b = start.cpu.get(pid).copied().unwrap_or_default();
        u += e.0.saturating_sub(b.0);
        s += e.1.saturating_sub(b.1);
    }
    Some((u as f64 / hz, s as f64 / hz))
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
    /// CPU ticks (user, system) per server process.
    pub cpu: BTreeMap<u32, (u64, u64)>,
    /// pg_stat_statements per queryid: its text and counters (calls,
    /// exec ms, blocks hit, read, dirtied, written, WAL bytes, WAL records).
    pub statements: BTreeMap<i64, (String, [f64; 8])>,
}

pub struct PgMonitor {
    c: Client,
    postmaster: Option<u32>,
    server_version: i32,
    /// `PostgreSQL 15.8`.
    pub version: String,
    /// The settings a profile records.
    pub settings: BTreeMap<String, String>,
    /// pg_stat_statements is installed in this database.
    pub statements: bool,
    /// Top-level transactions this monitor ran (each autocommit statement).
    pub own_xacts: i64,
    /// The data directory of a server on this machine, when it shows it.
    pub data_dir: Option<String>,
}

const PG_STATS: &str = "SELECT \
  (SELECT blks_read FROM pg_stat_database WHERE datname = current_database())::float8, \
  (SELECT blks_hit FROM pg_stat_database WHERE datname = current_database())::float8, \
  (SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database())::float8, \
  w.wal_records::float8, w.wal_fpi::float8, w.wal_bytes::float8, w.wal_write::float8, w.wal_sync::float8, \
  w.wal_write_time::float8, w.wal_sync_time::float8, \
  b.buffers_checkpoint::float8, b.buffers_clean::float8, b.buffers_backend::float8, b.buffers_backend_fsync::float8, \
  (b.checkpoints_timed + b.checkpoints_req)::float8 \
  FROM pg_stat_wal w, pg_stat_bgwriter b";

const PG_STAT_NAMES: [&str; 15] = [
    "blks_read",
    "blks_hit",
    "xact",
    "wal_records",
    "wal_fpi",
    "wal_bytes",
    "wal_write",
    "wal_sync",
    "wal_write_time",
    "wal_sync_time",
    "buffers_checkpoint",
    "buffers_clean",
    "buffers_backend",
    "buffers_backend_fsync",
    "checkpoints",
];

/// The settings a profile's provenance records.
const SETTING_NAMES: [&str; 13] = [
    "server_version",
    "shared_buffers",
    "synchronous_commit",
    "wal_level",
    "max_wal_size",
    "checkpoint_timeout",
    "full_page_writes",
    "wal_compression",
    "fsync",
    "work_mem",
    "max_connections",
    "effective_io_concurrency",
    "shared_preload_libraries",
];
const SETTINGS: &str = "SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY($1)";

/// Top-level statements of this database. wal_bytes is numeric; every
/// counter comes as float8.
const PGSS: &str = "SELECT queryid, query, calls::float8, total_exec_time::float8, shared_blks_hit::float8, shared_blks_read::float8, \
  shared_blks_dirtied::float8, shared_blks_written::float8, wal_bytes::float8, wal_records::float8 \
  FROM pg_stat_statements WHERE toplevel AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND queryid IS NOT NULL";

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
        let mut own = 1;
        let mut settings = BTreeMap::new();
        let mut version = String::new();
        own += 1;
        if let Ok(rows) = c.query(SETTINGS, &[&SETTING_NAMES.to_vec()]).await {
            for r in rows {
                if let (Ok(k), Ok(v)) = (r.try_get::<_, String>(0), r.try_get::<_, String>(1)) {
                    if k == "server_version" {
                        version = format!("PostgreSQL {}", v.split_whitespace().next().unwrap_or(&v));
                    } else {
                        settings.insert(k, v);
                    }
                }
            }
        }
        own += 1;
        let statements = c
            .query_one("SELECT count(*) FROM pg_extension WHERE extname = 'pg_stat_statements'", &[])
            .await
            .map(|r| r.get::<_, i64>(0) > 0)
            .unwrap_or(false);
        // Where a local server keeps its data (superusers and
        // pg_read_all_settings may read it): a run can then tell a server
        // that died from a volume that went away under it.
        let mut data_dir = None;
        if postmaster.is_some() {
            own += 1;
            data_dir = c.query_one("SELECT current_setting('data_directory')", &[]).await.ok().and_then(|r| r.try_get::<_, String>(0).ok());
        }
        Ok(PgMonitor { c, postmaster, server_version: row.get(1), version, settings, statements, own_xacts: own, data_dir })
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
            (s.procs, s.cpu) = server_io(pm);
        }
        if self.statements {
            self.own_xacts += 1;
            if let Ok(rows) = self.c.query(PGSS, &[]).await {
                for r in rows {
                    let (Ok(id), Ok(q)) = (r.try_get::<_, i64>(0), r.try_get::<_, String>(1)) else { continue };
                    let mut v = [0.0; 8];
                    for (i, x) in v.iter_mut().enumerate() {
                        *x = r.try_get::<_, Option<f64>>(i + 2).ok().flatten().unwrap_or(0.0);
                    }
                    s.statements.insert(id, (q, v));
                }
            }
        }
        Ok(s)
    }

    /// Each table of the current schema with its indexes and TOAST.
    pub async fn relation_bytes(&mut self) -> BTreeMap<String, u64> {
        self.own_xacts += 1;
        let q = "SELECT c.relname::text, pg_total_relation_size(c.oid) FROM pg_class c WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::text::regnamespace";
        match self.c.query(q, &[]).await {
            Ok(rows) => rows.iter().filter_map(|r| Some((r.try_get::<_, String>(0).ok()?, r.try_get::<_, i64>(1).ok()? as u64))).collect(),
            Err(_) => BTreeMap::new(),
        }
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


/// The settings a MySQL or MariaDB record lists (`server.settings`): what
/// moves an OLTP result on InnoDB.
pub const MYSQL_SETTING_NAMES: [&str; 14] = [
    "innodb_buffer_pool_size",
    "innodb_flush_log_at_trx_commit",
    "log_bin",
    "sync_binlog",
    "binlog_format",
    "innodb_doublewrite",
    "innodb_io_capacity",
    "innodb_io_capacity_max",
    "innodb_log_file_size",
    "innodb_flush_method",
    "innodb_page_size",
    "max_connections",
    "performance_schema",
    "innodb_adaptive_flushing",
];

/// SHOW GLOBAL STATUS counters, under the names `io_profile` reads
/// (blks_read, wal_bytes, fsyncs) or their own lower-case names.
const MYSQL_STATUS: [(&str, &str); 14] = [
    ("Innodb_buffer_pool_reads", "blks_read"),
    ("Innodb_buffer_pool_read_requests", "read_requests"),
    ("Innodb_os_log_written", "wal_bytes"),
    ("Innodb_data_fsyncs", "fsyncs"),
    ("Innodb_os_log_fsyncs", "innodb_os_log_fsyncs"),
    ("Innodb_data_written", "innodb_data_written"),
    ("Innodb_data_read", "innodb_data_read"),
    ("Innodb_pages_written", "innodb_pages_written"),
    ("Innodb_dblwr_pages_written", "innodb_dblwr_pages_written"),
    ("Innodb_dblwr_writes", "innodb_dblwr_writes"),
    ("Innodb_buffer_pool_pages_flushed", "innodb_buffer_pool_pages_flushed"),
    ("Binlog_bytes_written", "binlog_bytes_written"),
    ("Com_commit", "com_commit"),
    ("Com_rollback", "com_rollback"),
];

pub struct MyMonitor {
    c: mysql_async::Conn,
    /// mariadbd's (or mysqld's) pid when the server runs on this machine.
    pid: Option<u32>,
    /// `MariaDB 10.11.19` or `MySQL 8.0.36`.
    pub version: String,
    pub mariadb: bool,
    pub settings: BTreeMap<String, String>,
    /// The data directory (@@datadir) of a server on this machine.
    pub data_dir: Option<String>,
}

impl MyMonitor {
    pub async fn open(target: &MyTarget) -> Result<MyMonitor> {
        use mysql_async::prelude::Queryable;
        let mut c = target.connect().await?;
        let v: Option<String> = c.query_first("SELECT version()").await.map_err(|e| DbError::sql("monitor", my_message(&e)))?;
        let v = v.unwrap_or_default();
        let mariadb = v.contains("MariaDB");
        let number = v.split(['-', ' ']).next().unwrap_or(&v).to_string();
        let version = format!("{} {number}", if mariadb { "MariaDB" } else { "MySQL" });
        let list = MYSQL_SETTING_NAMES.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(",");
        let rows: Vec<(String, String)> = c
            .query(format!("SELECT lower(variable_name), variable_value FROM information_schema.global_variables WHERE lower(variable_name) IN ({list})"))
            .await
            .unwrap_or_default();
        let settings = rows.into_iter().collect();
        // A server on this machine: its pid file names a process here.
        let local = matches!(target.host.as_str(), "127.0.0.1" | "localhost" | "::1");
        let pid = if local {
            let f: Option<String> = c.query_first("SELECT @@pid_file").await.ok().flatten();
            f.and_then(|f| std::fs::read_to_string(f).ok()).and_then(|s| s.trim().parse::<u32>().ok()).filter(|p| proc_io(*p).is_some())
        } else {
            None
        };
        let data_dir = if pid.is_some() { c.query_first::<Option<String>, _>("SELECT @@datadir").await.ok().flatten().flatten() } else { None };
        Ok(MyMonitor { c, pid, version, mariadb, settings, data_dir })
    }

    async fn scalar(&mut self, sql: &str) -> Result<Option<i64>> {
        use mysql_async::prelude::Queryable;
        let v: Option<Option<i64>> = self.c.query_first(sql).await.map_err(|e| DbError::sql("monitor snapshot", my_message(&e)))?;
        Ok(v.flatten())
    }

    async fn status(&mut self) -> Result<BTreeMap<String, f64>> {
        use mysql_async::prelude::Queryable;
        let rows: Vec<(String, String)> = self.c.query("SHOW GLOBAL STATUS").await.map_err(|e| DbError::sql("monitor snapshot (SHOW GLOBAL STATUS)", my_message(&e)))?;
        Ok(rows.into_iter().filter_map(|(k, v)| Some((k, v.parse::<f64>().ok()?))).collect())
    }

    /// HammerDB's TPM counter for MySQL: Com_commit + Com_rollback.
    pub async fn xact(&mut self) -> Result<Option<i64>> {
        let s = self.status().await?;
        Ok(match (s.get("Com_commit"), s.get("Com_rollback")) {
            (Some(c), Some(r)) => Some((c + r) as i64),
            _ => None,
        })
    }

    pub async fn snapshot(&mut self, tpcc: bool) -> Result<Snapshot> {
        let mut s = Snapshot { at: Some(std::time::Instant::now()), ..Default::default() };
        if tpcc {
            s.d_next_o_id = self.scalar("SELECT CAST(sum(d_next_o_id) AS SIGNED) FROM district").await?;
        }
        let st = self.status().await?;
        for (name, key) in MYSQL_STATUS {
            if let Some(v) = st.get(name) {
                s.stats.insert(key, *v);
            }
        }
        if let (Some(req), Some(rd)) = (s.stats.get("read_requests").copied(), s.stats.get("blks_read").copied()) {
            s.stats.insert("blks_hit", (req - rd).max(0.0));
        }
        if let Some(pid) = self.pid {
            (s.procs, s.cpu) = server_io(pid);
        }
        Ok(s)
    }

    /// Each table of the current database with its indexes.
    pub async fn relation_bytes(&mut self) -> BTreeMap<String, u64> {
        use mysql_async::prelude::Queryable;
        let q = "SELECT table_name, CAST(data_length + index_length AS SIGNED) FROM information_schema.tables WHERE table_schema = database() AND table_type = 'BASE TABLE'";
        let rows: Vec<(String, i64)> = self.c.query(q).await.unwrap_or_default();
        rows.into_iter().map(|(k, v)| (k, v.max(0) as u64)).collect()
    }
}

/// The monitor of a run: PostgreSQL's statistics views or MySQL's global
/// status on a connection of its own, or SQLite's counting VFS and a
/// connection for the TPC-C queries.
pub enum Monitor {
    Pg(PgMonitor),
    My(MyMonitor),
    Sqlite(rusqlite::Connection),
}

impl Monitor {
    pub async fn open(db: &Db) -> Result<Monitor> {
        Ok(match db {
            Db::Postgres(t) => Monitor::Pg(PgMonitor::open(t).await?),
            Db::Mysql(t) => Monitor::My(MyMonitor::open(t).await?),
            Db::Sqlite { path } => Monitor::Sqlite(sqlite_io::open(path)?),
        })
    }

    pub async fn snapshot(&mut self, tpcc: bool) -> Result<Snapshot> {
        match self {
            Monitor::Pg(m) => m.snapshot(tpcc).await,
            Monitor::My(m) => m.snapshot(tpcc).await,
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

    /// The engine's commit + rollback counter (PostgreSQL, MySQL).
    pub async fn xact(&mut self) -> Result<Option<i64>> {
        match self {
            Monitor::Pg(m) => m.xact().await,
            Monitor::My(m) => m.xact().await,
            Monitor::Sqlite(_) => Ok(None),
        }
    }

    /// The monitor's own transactions so far (taken out of the engine's count).
    pub fn own_xacts(&self) -> i64 {
        match self {
            Monitor::Pg(m) => m.own_xacts,
            Monitor::My(_) | Monitor::Sqlite(_) => 0,
        }
    }

    /// Waits (at most 10 s) until every worker's session has gone, so that
    /// the counters their exits flush are in the next snapshot (PostgreSQL
    /// flushes a busy session's statistics at most once a second).
    pub async fn settle(&mut self) {
        if let Monitor::Pg(m) = self {
            m.wait_for_disconnects(std::time::Duration::from_secs(10)).await;
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// The engine's counter once every worker has gone (exits flush their
    /// statistics), with the monitor's own transactions at that moment.
    pub async fn xact_after_disconnects(&mut self) -> Result<Option<(i64, i64)>> {
        match self {
            Monitor::Pg(_) => {
                self.settle().await;
                let own = self.own_xacts();
                Ok(self.xact().await?.map(|x| (x, own)))
            }
            // SHOW GLOBAL STATUS sums every session's counters, live.
            Monitor::My(m) => Ok(m.xact().await?.map(|x| (x, 0))),
            Monitor::Sqlite(_) => Ok(None),
        }
    }

    /// PostgreSQL's side of the window: version, settings, the server's CPU,
    /// pg_stat_statements' deltas by transaction type (`classify` gives a
    /// statement's type index, `None` for BEGIN/COMMIT, or nothing for a
    /// statement of no type) and the tables' sizes.
    pub async fn server_stats(
        &mut self,
        start: &Snapshot,
        end: &Snapshot,
        classify: impl Fn(&str) -> Option<Option<usize>>,
        kinds: &[String],
    ) -> Option<ServerStats> {
        if let Monitor::My(m) = self {
            let cpu = cpu_delta(start, end);
            return Some(ServerStats {
                version: m.version.clone(),
                settings: m.settings.clone(),
                cpu_user_s: cpu.map(|c| c.0),
                cpu_sys_s: cpu.map(|c| c.1),
                relation_bytes: m.relation_bytes().await,
                data_dir: m.data_dir.clone(),
                ..Default::default()
            });
        }
        let Monitor::Pg(m) = self else { return None };
        let cpu = cpu_delta(start, end);
        let mut st = ServerStats {
            version: m.version.clone(),
            settings: m.settings.clone(),
            cpu_user_s: cpu.map(|c| c.0),
            cpu_sys_s: cpu.map(|c| c.1),
            statements_source: m.statements.then(|| "pg_stat_statements".to_string()),
            data_dir: m.data_dir.clone(),
            ..Default::default()
        };
        for (id, (q, e)) in &end.statements {
            let b = start.statements.get(id).map(|x| x.1).unwrap_or_default();
            let mut d = [0.0; 8];
            for i in 0..8 {
                d[i] = (e[i] - b[i]).max(0.0);
            }
            if d[0] == 0.0 {
                continue;
            }
            match classify(q) {
                Some(Some(k)) => add(st.per_type.entry(kinds[k].clone()).or_default(), &d),
                Some(None) => add(&mut st.other, &d),
                None => {}
            }
        }
        st.relation_bytes = m.relation_bytes().await;
        Some(st)
    }

    /// A `count(*)` query (the consistency conditions).
    pub async fn count(&mut self, sql: &str) -> Result<i64> {
        match self {
            Monitor::Pg(m) => m.count(sql).await,
            Monitor::My(m) => Ok(m.scalar(&format!("SELECT CAST(({sql}) AS SIGNED)")).await?.unwrap_or(0)),
            Monitor::Sqlite(c) => c.query_row(sql, [], |r| r.get(0)).map_err(|e| DbError::sql("consistency check", e)),
        }
    }
}

/// Adds one statement's counters (in PGSS's column order) to `t`.
fn add(t: &mut StatementTotals, v: &[f64; 8]) {
    t.calls += v[0];
    t.exec_ms += v[1];
    t.blks_hit += v[2];
    t.blks_read += v[3];
    t.blks_dirtied += v[4];
    t.blks_written += v[5];
    t.wal_bytes += v[6];
    t.wal_records += v[7];
}

/// The I/O profile of the measured window: totals and per transaction.
pub fn io_profile(start: &Snapshot, end: &Snapshot, txns: u64, engine: &str, note: Vec<String>) -> IoProfile {
    let d = |k: &str| match (start.stats.get(k), end.stats.get(k)) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let per = |v: Option<f64>| v.map(|v| if txns > 0 { v / txns as f64 } else { 0.0 });
    let mut totals = BTreeMap::new();
    for k in end.stats.keys() {
        if *k == "xact" {
            continue;
        }
        if let Some(v) = d(k) {
            totals.insert((*k).to_string(), v);
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
    // pg_stat_wal's times are in ms and stay 0 without track_wal_io_timing.
    let wal_sync_us = match (d("wal_sync_time"), d("wal_sync")) {
        (Some(ms), Some(n)) if ms > 0.0 && n > 0.0 => Some(ms * 1000.0 / n),
        _ => None,
    };
    IoProfile {
        transactions: txns,
        per_txn: PerTxnIo {
            read_bytes: per(reads),
            write_bytes: per(writes),
            read_syscalls: per(procs.map(|p| p.syscr as f64).or(d("read_calls"))),
            write_syscalls: per(procs.map(|p| p.syscw as f64).or(d("write_calls"))),
            fsyncs: per(fsyncs),
            wal_bytes: per(d("wal_bytes")),
        },
        buffer_cache_hit_ratio: hit_ratio,
        wal_sync_us,
        server_processes: procs,
        totals,
        notes: note,
    }
}

fn engine_block_bytes(engine: &str) -> f64 {
    match engine {
        "sqlite" => 4096.0,
        // InnoDB's default page (innodb_page_size).
        "mysql" => 16384.0,
        _ => 8192.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_cpu_follows_the_process_cpu_time() {
        let me = std::process::id();
        let (u0, s0) = proc_cpu(me).unwrap();
        let t0 = crate::process_cpu_s();
        // Spin until getrusage has counted 0.3 s more CPU for this process.
        let mut x = 0u64;
        while {
            let t = crate::process_cpu_s();
            (t.0 + t.1) - (t0.0 + t0.1) < 0.3
        } {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let (u1, s1) = proc_cpu(me).unwrap();
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
        let d = ((u1 - u0) + (s1 - s0)) as f64 / hz;
        // The same CPU time through /proc, up to a few ticks of granularity
        // (and other test threads' time on top).
        assert!(d >= 0.25, "{d} s");
    }
}
