//! A profile built from a recording's raw measurements: the sweep's runs
//! as the recorder took them (per run: the users, the client's throughput,
//! each type's transactions, the server's counters per type, its CPU, the
//! WAL's syncs), the miss-ratio points and the recorder's provenance. The
//! recorder drives the server; this turns what it measured into the
//! profile's demand per transaction type, its concurrency figures and its
//! data size (docs/profile.md, "How it is recorded").

use crate::fit;
use indexmap::IndexMap;
use serde::Deserialize;
use toml::{Table, Value};

/// The profile file's schema (contracts/PROFILE.md).
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
pub fn build(rec: &Recording, provenance: Table) -> Result<Table, String> {
    let mut txns = transactions(&rec.sweep, &rec.read_only);
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
    for run in &rec.sweep {
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
    conc.insert("cpu_us_per_txn".into(), floats(cpu));
    for (key, by) in [("wal_sync_us", &sync_by), ("wal_syncs_per_txn", &syncs_by), ("client_wait_us", &wait_by), ("window_s", &window_by)] {
        if !vus.is_empty() && vus.iter().all(|v| by.contains_key(v)) {
            conc.insert(key.into(), floats(vus.iter().map(|v| median(&by[v]))));
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
    p.insert("data".into(), Value::Table(data_size(&rec.size_run, &rec.kind, rec.scale)));
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
        r.txn.insert("a".into(), TxnCount { commits: 28.0, rollbacks: 2.0 });
        r.txn.insert("b".into(), TxnCount { commits: 10.0, rollbacks: 0.0 });
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
}
