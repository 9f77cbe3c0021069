//! A MariaDB recording's counters dealt to the transaction types. InnoDB
//! counts its work for the whole server, not per statement (SHOW GLOBAL
//! STATUS over each measured window: logical page reads, buffer-pool
//! misses, redo bytes, data fsyncs); what a type gets of them is dealt by
//! the server's time in the type's stored procedure (performance_schema's
//! `events_statements_summary_by_program`: TPC-C on MariaDB is one CALL a
//! transaction), read-only types getting none of the redo and the pages
//! dirtied. The result is in PostgreSQL's per-type names, so the profile's
//! build reads it as it reads pg_stat_statements.

use super::{IoProfile, ProgramEntry, Run, Server};
use indexmap::IndexMap;
use toml::{Table, Value};

/// InnoDB's page (innodb_page_size's default; the recorder refuses another).
pub const PAGE_BYTES: f64 = 16384.0;

/// What weighed the types' shares of a window's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dealt {
    /// The server's mean time per call of the type's procedure × its transactions.
    ProcedureTime,
    /// The client's mean latency × its transactions (performance_schema gave nothing).
    ClientLatency,
}

/// A copy of `run` whose server counters per type are the window's InnoDB
/// counters dealt to the types, and how they were dealt.
///
/// The weight of a type is its transactions in the window × the server's
/// mean time per call of its procedure, or × the client's mean latency
/// where performance_schema gave nothing. Logical reads and misses go by
/// that weight over every type; redo bytes and pages dirtied only over the
/// writing types: a read-only InnoDB transaction writes no redo of its own.
pub fn split(run: &Run, read_only: &[String]) -> (Run, Dealt) {
    // The CPU is the server's own (mariadbd's threads, /proc over the
    // window), not the machine's: a machine shared with other work would
    // otherwise lend its CPU to the profile; the kernel's work for the
    // server's I/O outside its threads is left out.
    let mut out = server_cpu_only(run);
    let tot = run.io_profile.as_ref().and_then(|io| io.totals.clone()).unwrap_or_default();
    let total = |k: &str| tot.get(k).copied().unwrap_or(0.0);
    let progs = run.program_times.clone().unwrap_or_default();
    let procedure = |k: &str| match progs.get(k) {
        Some(ProgramEntry::Procedure { calls, ms }) if *calls != 0.0 => Some((*calls, *ms)),
        _ => None,
    };
    let n: IndexMap<String, f64> = run.txn.iter().map(|(k, t)| (k.clone(), t.commits + t.rollbacks)).collect();
    // Pages newly dirtied in the window: per transaction over the whole run
    // (the dirty-page gauge is read around the run, not the window).
    let dirtied_per_txn = match progs.get("dirtied_per_txn") {
        Some(ProgramEntry::Figure(x)) => *x,
        _ => 0.0,
    };
    let dirtied = dirtied_per_txn * n.values().sum::<f64>();
    let (w, how): (IndexMap<String, f64>, Dealt) = if n.iter().filter(|(_, &c)| c > 0.0).all(|(k, _)| procedure(k).is_some()) {
        let w = n.iter().map(|(k, &c)| (k.clone(), procedure(k).filter(|_| c > 0.0).map_or(0.0, |(calls, ms)| c * ms / calls))).collect();
        (w, Dealt::ProcedureTime)
    } else {
        let w = n.iter().map(|(k, &c)| (k.clone(), c * run.txn[k].lat_mean_us.unwrap_or(0.0) / 1000.0)).collect();
        (w, Dealt::ClientLatency)
    };
    let all_w: f64 = w.values().sum();
    let writers_w: f64 = w.iter().filter(|(k, _)| !read_only.contains(k)).map(|(_, v)| v).sum();
    let mut per_type = IndexMap::new();
    for (k, &c) in &n {
        let sa = if all_w > 0.0 { w[k] / all_w } else { 0.0 };
        let sw = if writers_w > 0.0 && !read_only.contains(k) { w[k] / writers_w } else { 0.0 };
        let stats: IndexMap<String, f64> = [
            ("calls", c),
            ("exec_ms", w[k]),
            ("blks_hit", total("blks_hit") * sa),
            ("blks_read", total("blks_read") * sa),
            // pages_dirtied is what the model writes back to the data pool
            // per transaction where the profile has no write-back curve
            // (docs/dbmodel.md, Write-back): pages that went from clean to
            // dirty, each one page write later — PostgreSQL's
            // shared_blks_dirtied. InnoDB's are the dirty pages' growth
            // plus the pages flushed meanwhile.
            // Innodb_buffer_pool_write_requests counts every change to a
            // page in the pool (a hot page changed a thousand times is one
            // write), which would overstate the writes manyfold; the pages
            // flushed alone depend on when adaptive flushing ran (none in a
            // short window with a large pool).
            ("blks_dirtied", dirtied * sw),
            ("blks_written", 0.0),
            ("wal_bytes", total("wal_bytes") * sw),
            ("wal_records", 0.0),
        ]
        .into_iter()
        .map(|(key, v)| (key.to_string(), v))
        .collect();
        per_type.insert(k.clone(), stats);
    }
    let server = out.server.get_or_insert_with(Server::default);
    server.per_type = Some(per_type);
    server.other = Some(IndexMap::new());
    // Log fsyncs per transaction (group commit), under PostgreSQL's name:
    // Innodb_data_fsyncs, since MariaDB 10.11 has no redo-only count
    // (Innodb_os_log_fsyncs is gone); with O_DIRECT data files the redo
    // log's are nearly all of them.
    if let (Some(fsyncs), Some(io)) = (tot.get("fsyncs"), out.io_profile.as_mut()) {
        io.totals.get_or_insert_with(IndexMap::new).insert("wal_sync".into(), *fsyncs);
    }
    (out, how)
}

/// `run` without the machine's busy time: its CPU per transaction is then
/// the server's threads' own.
pub fn server_cpu_only(run: &Run) -> Run {
    Run { host_cpu: None, ..run.clone() }
}

/// What the server's write path did over the sweep's windows, for
/// diagnosis (the model does not read it): doublewrite copies per page
/// written, the binary log's bytes and the data fsyncs per transaction.
pub fn write_path(runs: &[Run]) -> Table {
    let mut tot: IndexMap<String, f64> = IndexMap::new();
    let mut n = 0.0;
    for io in runs.iter().filter_map(|r| r.io_profile.as_ref()) {
        let IoProfile { transactions, totals, .. } = io;
        n += transactions.unwrap_or(0.0);
        for (k, v) in totals.iter().flatten() {
            *tot.entry(k.clone()).or_insert(0.0) += v;
        }
    }
    let total = |k: &str| tot.get(k).copied().unwrap_or(0.0);
    let per = |x: f64, d: f64| if d != 0.0 { x / d } else { 0.0 };
    let mut t = Table::new();
    t.insert("transactions".into(), n.into());
    t.insert("doublewrite_pages_per_page_written".into(), per(total("innodb_dblwr_pages_written"), total("innodb_pages_written")).into());
    t.insert("binlog_bytes_per_txn".into(), per(total("binlog_bytes_written"), n).into());
    t.insert("data_fsyncs_per_txn".into(), per(total("fsyncs"), n).into());
    t.insert(
        "method".into(),
        "SHOW GLOBAL STATUS over the sweep's windows: Innodb_dblwr_pages_written / Innodb_pages_written, \
         Binlog_bytes_written and Innodb_data_fsyncs per transaction"
            .into(),
    );
    t
}

/// The provenance a MariaDB recording adds: the engine, how its counters
/// were dealt, what it could not record and its write path.
pub fn provenance(provenance: &mut Table, dealt: &[Dealt], raw: &[Run]) {
    let by = if !dealt.is_empty() && dealt.iter().all(|d| *d == Dealt::ProcedureTime) {
        "the server's time in each type's stored procedure (performance_schema \
         events_statements_summary_by_program, sum_timer_wait / count_star) × its transactions"
    } else {
        "the client's transactions of each type × their mean latency (performance_schema gave no procedure times)"
    };
    provenance.insert("engine".into(), "mariadb".into());
    provenance.insert(
        "counters".into(),
        format!(
            "InnoDB's global counters over each measured window (SHOW GLOBAL STATUS), dealt to the types by {by}: \
             page_accesses from Innodb_buffer_pool_read_requests over every type; wal_bytes from \
             Innodb_os_log_written and pages_dirtied from the growth of Innodb_buffer_pool_pages_dirty plus \
             Innodb_buffer_pool_pages_flushed over the writing types only; cpu_us the CPU of mariadbd's threads \
             (/proc), dealt the same way"
        )
        .into(),
    );
    provenance.insert(
        "not_recorded".into(),
        "the write-back curve ([writeback]: InnoDB flushes adaptively, not by checkpoint), the users' wait for \
         their client (client_wait_us) and wal_sync_us"
            .into(),
    );
    provenance.insert("write_path".into(), Value::Table(write_path(raw)));
}

#[cfg(test)]
mod tests {
    use super::super::TxnCount;
    use super::*;

    /// Two types in a window: 30 writes (one rolled back) and 10 reads,
    /// performance_schema over the whole run giving 60 calls in 120 ms and
    /// 20 calls in 80 ms, 0.5 pages dirtied a transaction.
    fn window() -> Run {
        let mut r = Run::default();
        r.txn.insert("w".into(), TxnCount { commits: 29.0, rollbacks: 1.0, lat_mean_us: Some(9000.0) });
        r.txn.insert("r".into(), TxnCount { commits: 10.0, rollbacks: 0.0, lat_mean_us: Some(1000.0) });
        let totals = [("blks_hit", 990.0), ("blks_read", 10.0), ("wal_bytes", 8000.0), ("fsyncs", 25.0)];
        r.io_profile = Some(IoProfile { transactions: Some(40.0), totals: Some(totals.iter().map(|(k, v)| (k.to_string(), *v)).collect()), ..IoProfile::default() });
        let mut p = IndexMap::new();
        p.insert("w".to_string(), ProgramEntry::Procedure { calls: 60.0, ms: 120.0 });
        p.insert("r".to_string(), ProgramEntry::Procedure { calls: 20.0, ms: 80.0 });
        p.insert("dirtied_per_txn".to_string(), ProgramEntry::Figure(0.5));
        r.program_times = Some(p);
        r.host_cpu = Some(super::super::HostCpu { busy_s: Some(9.0), elapsed_s: 1.0 });
        r.server = Some(Server { cpu_user_s: Some(0.1), ..Server::default() });
        r
    }

    #[test]
    fn counters_go_by_procedure_time_and_redo_only_to_writers() {
        // Weights 30 × 120/60 = 60 and 10 × 80/20 = 40 ms: the window's
        // 1000 logical reads go 600 / 400, its 8000 redo bytes all to the
        // writer; 40 × 0.5 = 20 pages dirtied, all the writer's.
        let (out, how) = split(&window(), &["r".to_string()]);
        assert_eq!(how, Dealt::ProcedureTime);
        let pt = out.server.as_ref().unwrap().per_type.as_ref().unwrap();
        let (w, r) = (&pt["w"], &pt["r"]);
        assert!((w["blks_hit"] + w["blks_read"] - 600.0).abs() < 1e-9 && (r["blks_hit"] + r["blks_read"] - 400.0).abs() < 1e-9);
        assert!((w["wal_bytes"] - 8000.0).abs() < 1e-9 && r["wal_bytes"] == 0.0);
        assert!((w["blks_dirtied"] - 20.0).abs() < 1e-9 && r["blks_dirtied"] == 0.0);
        // The server's CPU, not the machine's.
        assert!(out.host_cpu.is_none());
        assert_eq!(out.io_profile.unwrap().totals.unwrap()["wal_sync"], 25.0);
    }

    #[test]
    fn without_procedure_times_the_clients_latency_weighs() {
        // 30 × 9 ms and 10 × 1 ms: 1000 × 270 / 280 reads for the writer.
        let mut run = window();
        run.program_times = None;
        let (out, how) = split(&run, &["r".to_string()]);
        assert_eq!(how, Dealt::ClientLatency);
        let w = &out.server.unwrap().per_type.unwrap()["w"];
        assert!((w["blks_hit"] + w["blks_read"] - 1000.0 * 270.0 / 280.0).abs() < 1e-9);
    }

    #[test]
    fn the_write_path_by_hand() {
        // Two windows of 40 and 60 transactions, 50 + 150 pages written
        // with 100 + 300 doublewrite copies, 500 + 1500 data fsyncs: 2
        // copies a page, 20 fsyncs a transaction; no binary log.
        let mut a = Run::default();
        let mut b = Run::default();
        for (r, n, pages, copies, fsyncs) in [(&mut a, 40.0, 50.0, 100.0, 500.0), (&mut b, 60.0, 150.0, 300.0, 1500.0)] {
            let totals = [("innodb_pages_written", pages), ("innodb_dblwr_pages_written", copies), ("fsyncs", fsyncs)];
            r.io_profile = Some(IoProfile { transactions: Some(n), totals: Some(totals.iter().map(|(k, v)| (k.to_string(), *v)).collect()), ..IoProfile::default() });
        }
        let t = write_path(&[a, b]);
        assert_eq!(t["transactions"].as_float(), Some(100.0));
        assert_eq!(t["doublewrite_pages_per_page_written"].as_float(), Some(2.0));
        assert_eq!(t["data_fsyncs_per_txn"].as_float(), Some(20.0));
        assert_eq!(t["binlog_bytes_per_txn"].as_float(), Some(0.0));
    }
}
