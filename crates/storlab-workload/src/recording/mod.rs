//! A profile built from a recording's raw measurements: the sweep's runs
//! as the recorder took them (per run: the users, the client's throughput,
//! each type's transactions, the server's counters per type, its CPU, the
//! WAL's syncs), the miss-ratio points and the recorder's provenance. The
//! recorder drives the server; this turns what it measured into the
//! profile's demand per transaction type, its concurrency figures and its
//! data size (docs/profile.md, "How it is recorded").

pub mod innodb;

use crate::fit;
use indexmap::IndexMap;
use serde::Deserialize;
use toml::{Table, Value};

/// The profile file's schema (docs/profile.md).
pub const SCHEMA_VERSION: i64 = 1;
/// PostgreSQL's page; an engine with another page sets its own afterwards.
pub const PAGE_BYTES: f64 = 8192.0;
/// The server counters summed per type.
const STAT_KEYS: [&str; 8] = ["calls", "exec_ms", "blks_hit", "blks_read", "blks_dirtied", "blks_written", "wal_bytes", "wal_records"];

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct TxnCount {
    pub commits: f64,
    pub rollbacks: f64,
    /// The client's mean latency, µs.
    pub lat_mean_us: Option<f64>,
}

/// One entry of a MariaDB run's `program_times`: a type's stored procedure
/// (its calls and the server's time in it over the run, ms), or a figure
/// of the run (`dirtied_per_txn`: pages newly dirtied per transaction).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ProgramEntry {
    Procedure { calls: f64, ms: f64 },
    Figure(f64),
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Server {
    /// Per transaction type, the server's counters (`STAT_KEYS`).
    pub per_type: Option<IndexMap<String, IndexMap<String, f64>>>,
    /// Statements of no one type (BEGIN, COMMIT).
    pub other: Option<IndexMap<String, f64>>,
    /// Each table with its indexes and TOAST, bytes, at the run's end.
    pub relation_bytes: Option<IndexMap<String, f64>>,
    pub cpu_user_s: Option<f64>,
    pub cpu_sys_s: Option<f64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct HostCpu {
    /// The machine's busy time around the run, s (absent where unread).
    pub busy_s: Option<f64>,
    pub elapsed_s: f64,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ClientWait {
    pub idle_share: Option<f64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct IoProfile {
    pub wal_sync_us: Option<f64>,
    pub transactions: Option<f64>,
    pub totals: Option<IndexMap<String, f64>>,
}

/// One timed run of the sweep, as the recorder measured it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Run {
    pub vus: u32,
    pub tpm_client: f64,
    pub duration_s: Option<f64>,
    pub txn: IndexMap<String, TxnCount>,
    pub server: Option<Server>,
    pub host_cpu: Option<HostCpu>,
    pub client_cpu_us_per_txn: Option<f64>,
    pub client_wait: Option<ClientWait>,
    pub io_profile: Option<IoProfile>,
    /// MariaDB: performance_schema's time per stored procedure and the
    /// pages the run dirtied (`innodb::split` reads them).
    pub program_times: Option<IndexMap<String, ProgramEntry>>,
}

/// The server a recording measured, which says how its counters are read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// Per-statement counters (pg_stat_statements), 8 KiB pages.
    #[default]
    Postgresql,
    /// InnoDB's global counters, dealt to the types (`innodb::split`), 16 KiB pages.
    Mariadb,
}

/// What the recorder hands over besides the runs.
#[derive(Debug, Clone, Deserialize)]
pub struct Recording {
    pub name: String,
    pub workload: String,
    /// `tpcc`, `insert`, or a workload file's.
    pub kind: String,
    pub scale: f64,
    pub scale_unit: String,
    pub sweep: Vec<Run>,
    /// (cache fraction, miss ratio) points.
    pub mrc_points: Vec<(f64, f64)>,
    pub mrc_method: String,
    /// The run whose tables give the data size.
    pub size_run: Run,
    /// The types that write nothing (no commit flush).
    #[serde(default)]
    pub read_only: Vec<String>,
    #[serde(default)]
    pub engine: Engine,
    /// The run at one user without a flush at commit (PostgreSQL's
    /// synchronous_commit off, InnoDB's innodb_flush_log_at_trx_commit 0):
    /// the time outside the server and the CPU a flush costs.
    #[serde(default)]
    pub sync_off: Option<Run>,
    /// The insert storm's rows per commit.
    #[serde(default)]
    pub commit_every: Option<f64>,
}

/// The rows TPC-C's transactions update that the other users of the same
/// home warehouse update too, in the order storlab's functions update them
/// (crates/storlab-db/sql/pg_tpcc_functions.sql, mysql_tpcc_procedures.sql):
/// New-Order increments its district's D_NEXT_O_ID (clause 2.4.2.2);
/// Payment adds to its district's D_YTD and its warehouse's W_YTD (clause
/// 2.5.2.2); Delivery takes each district's oldest NEW-ORDER row FOR
/// UPDATE, districts 1 to 10 in turn (clause 2.7.4.2), so a second Delivery
/// of the warehouse queues behind the first. Each is held until the
/// transaction's commit is durable. (type, [(rows, per warehouse)])
pub const TPCC_ROW_LOCKS: [(&str, &[(&str, i64)]); 3] = [
    ("new_order", &[("district", 10)]),
    ("payment", &[("district", 10), ("warehouse", 1)]),
    ("delivery", &[("oldest new-order", 1)]),
];

/// The CPU of one log flush, µs: the CPU per transaction at one user with a
/// flush at commit (the sweep) less without (`cpu_sync_off`), over the
/// flushes per transaction at one user; 0 where either is missing.
pub fn flush_cpu(vus: &[u32], cpu_us_per_txn: &[f64], syncs_per_txn: Option<&[f64]>, cpu_sync_off: f64) -> f64 {
    let Some(syncs) = syncs_per_txn.filter(|s| s.len() == vus.len()) else { return 0.0 };
    let Some(i) = vus.iter().position(|&v| v == 1) else { return 0.0 };
    let (on, k) = (cpu_us_per_txn[i], syncs[i]);
    if on > 0.0 && k > 0.0 {
        (on - cpu_sync_off).max(0.0) / k
    } else {
        0.0
    }
}

/// From the run without a flush at commit: the time per transaction
/// outside the server, its window over its transactions less its CPU per
/// transaction (the client's round trip, its own CPU, wake-ups), and that
/// CPU, both µs; None where the run measured nothing.
fn outside_sync_off(run: &Run) -> Option<(f64, f64)> {
    let n: f64 = run.txn.values().map(|t| t.commits + t.rollbacks).sum();
    let c = cpu_per_txn(run);
    let d = run.duration_s.filter(|&d| d != 0.0)?;
    if n <= 0.0 || c <= 0.0 {
        return None;
    }
    Some(((d / n * 1e6 - c).max(0.0), c))
}

/// The CPU one transaction of a run costs the server, µs. With the
/// machine's busy time around the run: that, less the client's own CPU
/// (so the kernel's work for the server's I/O outside its processes
/// counts), over the measured window's share of the run; else the user and
/// system time of the server's processes.
pub fn cpu_per_txn(run: &Run) -> f64 {
    let n: f64 = run.txn.values().map(|t| t.commits + t.rollbacks).sum();
    if n <= 0.0 {
        return 0.0;
    }
    if let (Some(h), Some(d)) = (&run.host_cpu, run.duration_s.filter(|&d| d != 0.0)) {
        if let Some(busy) = h.busy_s.filter(|b| !b.is_nan()).filter(|_| h.elapsed_s > 0.0) {
            let window = busy * (d / h.elapsed_s).min(1.0);
            let client = run.client_cpu_us_per_txn.unwrap_or(0.0) * 1e-6 * n;
            return (window - client).max(0.0) / n * 1e6;
        }
    }
    let s = run.server.clone().unwrap_or_default();
    (s.cpu_user_s.unwrap_or(0.0) + s.cpu_sys_s.unwrap_or(0.0)) / n * 1e6
}

/// Per transaction type, summed over the runs: its share of the mix and
/// its demand per transaction. Statements of no one type are dealt out by
/// transaction count; each run's CPU by the types' shares of the
/// statements' execution time.
fn transactions(runs: &[Run], read_only: &[String]) -> Vec<Table> {
    let mut counts: IndexMap<String, f64> = IndexMap::new();
    let mut stats: IndexMap<String, [f64; 8]> = IndexMap::new();
    let mut cpu_by_type: IndexMap<String, f64> = IndexMap::new();
    let mut rollbacks: IndexMap<String, f64> = IndexMap::new();
    let (empty, no_types) = (IndexMap::new(), IndexMap::new());
    for run in runs {
        let server = run.server.clone().unwrap_or_default();
        let per_type = server.per_type.as_ref().unwrap_or(&no_types);
        let other = server.other.as_ref().unwrap_or(&empty);
        let get = |m: &IndexMap<String, f64>, k: &str| m.get(k).copied().unwrap_or(0.0);
        let total_n: f64 = run.txn.values().map(|t| t.commits + t.rollbacks).sum();
        let cpu = cpu_per_txn(run) * 1e-6 * total_n;
        let exec_total = per_type.values().map(|s| get(s, "exec_ms")).sum::<f64>() + get(other, "exec_ms");
        for (k, t) in &run.txn {
            let c = t.commits + t.rollbacks;
            *counts.entry(k.clone()).or_insert(0.0) += c;
            *rollbacks.entry(k.clone()).or_insert(0.0) += t.rollbacks;
            let mine = per_type.get(k).unwrap_or(&empty);
            let share_n = if total_n != 0.0 { c / total_n } else { 0.0 };
            let s = stats.entry(k.clone()).or_insert([0.0; 8]);
            for (i, key) in STAT_KEYS.iter().enumerate() {
                s[i] += get(mine, key) + get(other, key) * share_n;
            }
            let own_exec = get(mine, "exec_ms") + get(other, "exec_ms") * share_n;
            *cpu_by_type.entry(k.clone()).or_insert(0.0) += if exec_total > 0.0 { cpu * own_exec / exec_total } else { cpu * share_n };
        }
    }
    let total: f64 = counts.values().sum();
    let stat = |s: &[f64; 8], key: &str| s[STAT_KEYS.iter().position(|k| *k == key).expect("a stat key")];
    counts
        .iter()
        .filter(|(_, &c)| c > 0.0)
        .map(|(k, &c)| {
            let s = &stats[k];
            let mut t = Table::new();
            t.insert("name".into(), k.clone().into());
            t.insert("share".into(), (c / total).into());
            t.insert("cpu_us".into(), (cpu_by_type[k] / c * 1e6).into());
            t.insert("page_accesses".into(), ((stat(s, "blks_hit") + stat(s, "blks_read")) / c).into());
            t.insert("pages_dirtied".into(), (stat(s, "blks_dirtied") / c).into());
            // A read-only transaction asks for no flush at commit.
            t.insert("commits".into(), (if read_only.contains(k) { 0.0 } else { 1.0 }).into());
            t.insert("wal_bytes".into(), (stat(s, "wal_bytes") / c).into());
            t.insert("rollback_share".into(), (rollbacks[k] / c).into());
            t
        })
        .collect()
}

/// The tables that do not grow with the scale: TPC-C's ITEM.
fn fixed_tables(kind: &str) -> &'static [&'static str] {
    match kind {
        "tpcc" => &["item"],
        _ => &[],
    }
}

/// The data size at the end of `run`: the fixed tables apart, the rest per
/// scale unit.
fn data_size(run: &Run, kind: &str, scale: f64) -> Table {
    let rel = run.server.as_ref().and_then(|s| s.relation_bytes.clone()).unwrap_or_default();
    let fixed: f64 = rel.iter().filter(|(k, _)| fixed_tables(kind).contains(&k.as_str())).map(|(_, v)| v).sum();
    let total: f64 = rel.values().sum();
    let mut t = Table::new();
    t.insert("bytes_per_scale_unit".into(), (if scale > 0.0 { (total - fixed) / scale } else { 0.0 }).into());
    t.insert("fixed_bytes".into(), fixed.into());
    t.insert("page_bytes".into(), PAGE_BYTES.into());
    t.insert("total_bytes".into(), total.into());
    t
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// The sample standard deviation (n − 1); 0 for one value.
fn stdev(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
}

fn floats(v: impl IntoIterator<Item = f64>) -> Value {
    Value::Array(v.into_iter().map(Value::from).collect())
}

/// The profile of a recording, as a table in the profile file's order:
/// per-type demand (shares to 6 decimals, summing to 1), the CPU penalty's
/// fit, the time outside the server at one user, the per-count figures
/// (medians over a count's repeats), the data size and the miss-ratio
/// curve. `provenance` goes in as given. An error says why there is no
/// profile.
pub fn build(rec: &Recording, mut provenance: Table) -> Result<Table, String> {
    let (sweep, sync_off) = match rec.engine {
        Engine::Postgresql => (rec.sweep.clone(), rec.sync_off.clone()),
        Engine::Mariadb => {
            let (sweep, dealt): (Vec<Run>, Vec<innodb::Dealt>) = rec.sweep.iter().map(|r| innodb::split(r, &rec.read_only)).unzip();
            innodb::provenance(&mut provenance, &dealt, &rec.sweep);
            (sweep, rec.sync_off.as_ref().map(innodb::server_cpu_only))
        }
    };
    let mut txns = transactions(&sweep, &rec.read_only);
    if txns.is_empty() {
        return Err("the recording measured no transactions — run longer (--duration) or with more --vus".into());
    }
    let six = |x: f64| (x * 1e6).round() / 1e6;
    let share = |t: &Table| t["share"].as_float().unwrap_or(0.0);
    let mut shares: Vec<f64> = txns.iter().map(|t| six(share(t))).collect();
    let last = shares.len() - 1;
    shares[last] = six(1.0 - shares[..last].iter().sum::<f64>());
    for (t, s) in txns.iter_mut().zip(&shares) {
        t.insert("share".into(), (*s).into());
    }
    // Per count, in the order first seen: the throughput, the CPU per
    // transaction, the WAL's sync time and syncs per transaction, the users'
    // wait for the client, and the measured window.
    let mut thr_by: IndexMap<u32, Vec<f64>> = IndexMap::new();
    let (mut cpu_by, mut sync_by, mut syncs_by, mut wait_by, mut window_by) = (thr_by.clone(), thr_by.clone(), thr_by.clone(), thr_by.clone(), thr_by.clone());
    for run in &sweep {
        let x = run.tpm_client / 60.0;
        thr_by.entry(run.vus).or_default().push(x);
        if run.duration_s.unwrap_or(0.0) > 0.0 {
            window_by.entry(run.vus).or_default().push(run.duration_s.unwrap_or(0.0));
        }
        if let Some(idle) = run.client_wait.as_ref().and_then(|cw| cw.idle_share) {
            if run.tpm_client > 0.0 {
                wait_by.entry(run.vus).or_default().push(idle * f64::from(run.vus) / x * 1e6);
            }
        }
        let c = cpu_per_txn(run);
        if c > 0.0 {
            cpu_by.entry(run.vus).or_default().push(c);
        }
        if let Some(io) = &run.io_profile {
            if let Some(w) = io.wal_sync_us.filter(|&w| w != 0.0) {
                sync_by.entry(run.vus).or_default().push(w);
            }
            if let (Some(n), Some(s)) = (io.transactions.filter(|&n| n != 0.0), io.totals.as_ref().and_then(|t| t.get("wal_sync"))) {
                syncs_by.entry(run.vus).or_default().push(s / n);
            }
        }
    }
    let mut vus: Vec<u32> = thr_by.keys().copied().collect();
    vus.sort_unstable();
    let thr: Vec<f64> = vus.iter().map(|v| median(&thr_by[v])).collect();
    let thr_sd: Vec<f64> = vus.iter().map(|v| stdev(&thr_by[v])).collect();
    let cpu: Vec<f64> = vus.iter().map(|v| cpu_by.get(v).map_or(0.0, |c| median(c))).collect();
    let (alpha, beta) = fit::cpu_penalty(&vus, &cpu);
    let mut outside_us = 0.0;
    if let Some(i) = vus.iter().position(|&v| v == 1).filter(|&i| cpu[i] > 0.0 && thr[i] > 0.0) {
        let c1 = cpu[i];
        // Each type's CPU at one user: the sweep's split, scaled to the CPU
        // per transaction measured at one user (the base the penalty
        // multiplies).
        let mean: f64 = txns.iter().map(|t| share(t) * t["cpu_us"].as_float().unwrap_or(0.0)).sum();
        if mean > 0.0 {
            for t in &mut txns {
                let c = t["cpu_us"].as_float().unwrap_or(0.0) * c1 / mean;
                t.insert("cpu_us".into(), c.into());
            }
        }
        // At one user nothing queues: a transaction's time is its server
        // CPU plus the time outside the server.
        outside_us = (1e6 / thr[i] - c1).max(0.0);
    }
    // Better, where the recorder ran one user without a flush at commit:
    // there nothing waits for the log either.
    let sync_off = sync_off.as_ref().and_then(outside_sync_off);
    if let Some((outside, _)) = sync_off {
        outside_us = outside;
    }
    let mut pts = rec.mrc_points.clone();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let nopm_share = txns.iter().find(|t| t["name"].as_str() == Some("new_order")).map_or(0.0, share);

    let mut mrc = Table::new();
    mrc.insert("cache_fraction".into(), floats(pts.iter().map(|p| p.0)));
    mrc.insert("miss_ratio".into(), floats(fit::non_increasing(&pts.iter().map(|p| p.1).collect::<Vec<_>>())));
    mrc.insert("method".into(), rec.mrc_method.clone().into());
    let mut conc = Table::new();
    conc.insert("alpha".into(), alpha.into());
    conc.insert("beta".into(), beta.into());
    conc.insert("fit".into(), "cpu_per_txn".into());
    conc.insert("outside_us".into(), outside_us.into());
    conc.insert("vus".into(), Value::Array(vus.iter().map(|&v| Value::Integer(i64::from(v))).collect()));
    conc.insert("throughput".into(), floats(thr));
    conc.insert("throughput_stdev".into(), floats(thr_sd));
    conc.insert("cpu_us_per_txn".into(), floats(cpu.iter().copied()));
    for (key, by) in [("wal_sync_us", &sync_by), ("wal_syncs_per_txn", &syncs_by), ("client_wait_us", &wait_by), ("window_s", &window_by)] {
        if !vus.is_empty() && vus.iter().all(|v| by.contains_key(v)) {
            conc.insert(key.into(), floats(vus.iter().map(|v| median(&by[v]))));
        }
    }
    if let Some((_, cpu_off)) = sync_off {
        let syncs: Option<Vec<f64>> = vus.iter().map(|v| syncs_by.get(v).map(|s| median(s))).collect();
        conc.insert("cpu_us_sync_off".into(), cpu_off.into());
        conc.insert("flush_cpu_us".into(), flush_cpu(&vus, &cpu, syncs.as_deref(), cpu_off).into());
    }
    for t in &mut txns {
        let name = t["name"].as_str().unwrap_or_default().to_string();
        if rec.kind == "insert" {
            if let Some(rows) = rec.commit_every {
                t.insert("rows_per_txn".into(), rows.into());
            }
        }
        if let Some((_, locks)) = TPCC_ROW_LOCKS.iter().find(|(n, _)| rec.kind == "tpcc" && *n == name) {
            let locks = locks.iter().map(|(rows, per_unit)| {
                let mut l = Table::new();
                l.insert("rows".into(), (*rows).into());
                l.insert("per_unit".into(), (*per_unit).into());
                Value::Table(l)
            });
            t.insert("row_locks".into(), Value::Array(locks.collect()));
        }
    }
    let mut p = Table::new();
    p.insert("schema_version".into(), SCHEMA_VERSION.into());
    p.insert("kind".into(), "storlab-db-profile".into());
    p.insert("name".into(), rec.name.clone().into());
    p.insert("workload".into(), rec.workload.clone().into());
    p.insert("scale_unit".into(), rec.scale_unit.clone().into());
    p.insert("metric".into(), (if rec.kind == "tpcc" { "nopm" } else { "tpm" }).into());
    p.insert("nopm_per_txn".into(), nopm_share.into());
    p.insert("provenance".into(), Value::Table(provenance));
    let mut data = data_size(&rec.size_run, &rec.kind, rec.scale);
    if rec.engine == Engine::Mariadb {
        data.insert("page_bytes".into(), innodb::PAGE_BYTES.into());
    }
    p.insert("data".into(), Value::Table(data));
    p.insert("mrc".into(), Value::Table(mrc));
    p.insert("concurrency".into(), Value::Table(conc));
    p.insert("transaction".into(), Value::Array(txns.into_iter().map(Value::Table).collect()));
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(vus: u32, tpm: f64, cpu_s: f64) -> Run {
        let mut r = Run { vus, tpm_client: tpm, ..Run::default() };
        r.txn.insert("a".into(), TxnCount { commits: 28.0, rollbacks: 2.0, lat_mean_us: None });
        r.txn.insert("b".into(), TxnCount { commits: 10.0, rollbacks: 0.0, lat_mean_us: None });
        let stats = |pairs: &[(&str, f64)]| pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect::<IndexMap<_, _>>();
        let mut per_type = IndexMap::new();
        per_type.insert("a".into(), stats(&[("exec_ms", 30.0), ("blks_hit", 300.0), ("blks_read", 60.0), ("blks_dirtied", 30.0), ("wal_bytes", 3000.0)]));
        per_type.insert("b".into(), stats(&[("exec_ms", 10.0), ("blks_hit", 50.0)]));
        r.server = Some(Server { per_type: Some(per_type), other: Some(stats(&[("exec_ms", 20.0), ("blks_hit", 40.0), ("wal_bytes", 400.0)])), cpu_user_s: Some(cpu_s), ..Server::default() });
        r
    }

    #[test]
    fn per_type_demand_by_hand() {
        // 30 "a" (2 rollbacks) and 10 "b"; BEGIN/COMMIT ("other") dealt out
        // 3:1 by count; the server's 1 s of CPU by execution time: a 30 +
        // 20·0.75 = 45 ms, b 10 + 20·0.25 = 15 ms of 60 ms.
        let t = transactions(&[run(1, 600.0, 1.0)], &["b".to_string()]);
        let f = |i: usize, k: &str| t[i][k].as_float().unwrap();
        assert_eq!((f(0, "share"), f(1, "share")), (0.75, 0.25));
        assert!((f(0, "page_accesses") - (360.0 + 30.0) / 30.0).abs() < 1e-12);
        assert!((f(0, "cpu_us") - 1e6 * 45.0 / 60.0 / 30.0).abs() < 1e-6);
        assert!((f(1, "cpu_us") - 1e6 * 15.0 / 60.0 / 10.0).abs() < 1e-6);
        assert_eq!((f(0, "commits"), f(1, "commits")), (1.0, 0.0));
        assert!((f(0, "wal_bytes") - 3300.0 / 30.0).abs() < 1e-12 && (f(0, "rollback_share") - 2.0 / 30.0).abs() < 1e-12);
    }

    #[test]
    fn a_sweep_takes_each_counts_median_and_the_time_outside_at_one_user() {
        // One user: 40 transactions on 1 s of CPU is 25,000 µs each; 600
        // TPM is 10 a second, 100,000 µs each, so 75,000 µs outside. Two
        // users, run twice: throughput 20 and 30 a second, median 25, sample
        // standard deviation √50 ≈ 7.07.
        let sweep = vec![run(1, 600.0, 1.0), run(2, 1200.0, 1.2), run(2, 1800.0, 1.2)];
        let rec = Recording {
            name: "t".into(),
            workload: "w".into(),
            kind: "custom".into(),
            scale: 1.0,
            scale_unit: "unit".into(),
            size_run: sweep[0].clone(),
            sweep,
            mrc_points: vec![(0.5, 0.1), (0.1, 0.4), (1.0, 0.2)],
            mrc_method: "m".into(),
            read_only: vec![],
            engine: Engine::Postgresql,
            sync_off: None,
            commit_every: None,
        };
        let p = build(&rec, Table::new()).unwrap();
        let c = p["concurrency"].as_table().unwrap();
        let nums = |v: &Value| v.as_array().unwrap().iter().map(|x| x.as_float().unwrap()).collect::<Vec<_>>();
        assert_eq!(nums(&c["throughput"]), vec![10.0, 25.0]);
        assert!((nums(&c["throughput_stdev"])[1] - 50f64.sqrt()).abs() < 1e-9);
        assert!((c["outside_us"].as_float().unwrap() - 75_000.0).abs() < 1e-6);
        assert_eq!(nums(&p["mrc"]["miss_ratio"]), vec![0.4, 0.1, 0.1]);
        assert_eq!(p["metric"].as_str(), Some("tpm"));
        assert!(build(&Recording { sweep: vec![], ..rec }, Table::new()).is_err());
    }

    #[test]
    fn flush_cpu_is_the_sync_cost_at_one_user_over_its_syncs() {
        // 500 µs a transaction with a flush at commit, 410 without, 0.9
        // syncs a transaction: (500 − 410) / 0.9 = 100 µs a flush.
        let (vus, cpu, syncs) = ([1, 2], [500.0, 600.0], [0.9, 0.8]);
        assert!((flush_cpu(&vus, &cpu, Some(&syncs), 410.0) - 100.0).abs() < 1e-9);
        // Faster with the flush than without (noise): no negative CPU.
        assert_eq!(flush_cpu(&vus, &cpu, Some(&syncs), 520.0), 0.0);
        // No sync counts (an older recording) or no one-user point: nothing to split.
        assert_eq!(flush_cpu(&vus, &cpu, None, 410.0), 0.0);
        assert_eq!(flush_cpu(&[2, 4], &cpu, Some(&syncs), 410.0), 0.0);
    }

    #[test]
    fn a_tpcc_recording_without_a_flush_at_one_user_gives_the_time_outside_and_the_flushs_cpu() {
        // The run without a flush: 40 transactions in 2 s on 0.4 s of the
        // server's CPU, 10,000 µs each, so 50,000 − 10,000 = 40,000 µs
        // outside. The sweep at one user: 1 s of CPU over 40, 25,000 µs, and
        // 0.5 WAL syncs a transaction: (25,000 − 10,000) / 0.5 = 30,000 µs a
        // flush.
        let mut sweep = vec![run(1, 600.0, 1.0), run(2, 1200.0, 1.2), run(4, 1500.0, 1.5)];
        for r in &mut sweep {
            r.io_profile = Some(IoProfile { transactions: Some(40.0), totals: Some([("wal_sync".to_string(), 20.0)].into_iter().collect()), ..IoProfile::default() });
        }
        let mut off = run(1, 1200.0, 0.4);
        off.duration_s = Some(2.0);
        let mut names = sweep.clone();
        for r in names.iter_mut().chain(std::iter::once(&mut off)) {
            let txn = std::mem::take(&mut r.txn);
            r.txn = txn.into_iter().map(|(k, t)| (if k == "a" { "payment".to_string() } else { "order_status".to_string() }, t)).collect();
            let server = r.server.as_mut().unwrap();
            let per_type = server.per_type.take().unwrap();
            server.per_type = Some(per_type.into_iter().map(|(k, t)| (if k == "a" { "payment".to_string() } else { "order_status".to_string() }, t)).collect());
        }
        let rec = Recording {
            name: "t".into(),
            workload: "tpcc".into(),
            kind: "tpcc".into(),
            scale: 1.0,
            scale_unit: "warehouse".into(),
            size_run: names[0].clone(),
            sweep: names,
            mrc_points: vec![(1.0, 0.0)],
            mrc_method: "m".into(),
            read_only: vec!["order_status".into()],
            engine: Engine::Postgresql,
            sync_off: Some(off),
            commit_every: None,
        };
        let p = build(&rec, Table::new()).unwrap();
        let c = p["concurrency"].as_table().unwrap();
        assert!((c["outside_us"].as_float().unwrap() - 40_000.0).abs() < 1e-6);
        assert!((c["cpu_us_sync_off"].as_float().unwrap() - 10_000.0).abs() < 1e-6);
        assert!((c["flush_cpu_us"].as_float().unwrap() - 30_000.0).abs() < 1e-6);
        let t = p["transaction"].as_array().unwrap();
        let payment = t.iter().find(|t| t["name"].as_str() == Some("payment")).unwrap();
        let locks: Vec<(String, i64)> = payment["row_locks"].as_array().unwrap().iter().map(|l| (l["rows"].as_str().unwrap().to_string(), l["per_unit"].as_integer().unwrap())).collect();
        assert_eq!(locks, vec![("district".to_string(), 10), ("warehouse".to_string(), 1)]);
        let status = t.iter().find(|t| t["name"].as_str() == Some("order_status")).unwrap();
        assert!(status.get("row_locks").is_none() && status.get("rows_per_txn").is_none());
        assert_eq!(p["data"]["page_bytes"].as_float(), Some(8192.0));
    }

    #[test]
    fn a_mariadb_insert_recording_has_innodb_pages_and_its_rows_per_commit() {
        let mut r = run(1, 600.0, 1.0);
        r.txn = [("insert".to_string(), TxnCount { commits: 30.0, rollbacks: 0.0, lat_mean_us: Some(2000.0) })].into_iter().collect();
        let rec = Recording {
            name: "t".into(),
            workload: "insert".into(),
            kind: "insert".into(),
            scale: 1000.0,
            scale_unit: "row".into(),
            size_run: r.clone(),
            sweep: vec![r.clone(), Run { vus: 2, ..r.clone() }, Run { vus: 4, ..r }],
            mrc_points: vec![(1.0, 0.0)],
            mrc_method: "m".into(),
            read_only: vec![],
            engine: Engine::Mariadb,
            sync_off: None,
            commit_every: Some(100.0),
        };
        let p = build(&rec, Table::new()).unwrap();
        assert_eq!(p["data"]["page_bytes"].as_float(), Some(16384.0));
        assert_eq!(p["transaction"][0]["rows_per_txn"].as_float(), Some(100.0));
        assert!(p["transaction"][0].get("row_locks").is_none());
        assert_eq!(p["provenance"]["engine"].as_str(), Some("mariadb"));
        // No procedure times: the client's latency dealt the counters.
        assert!(p["provenance"]["counters"].as_str().unwrap().contains("mean latency"));
    }
}
