//! The timed driver: opens one session per virtual user, runs them as tokio
//! tasks, takes the monitor's snapshots at the edges of the measured window,
//! and turns the counts into the run record.

use crate::error::{DbError, Result};
use crate::monitor::{io_profile, Monitor};
use crate::session::{Db, Outcome, Session};
use crate::tpcc::{self, Kind, TpccOptions};
use crate::{custom, insert, process_cpu_s, Progress, PHASE_LOAD, PHASE_MEASURE, PHASE_RAMPUP, PHASE_STOP};
use crate::record::{Consistency, DbRun, PerSecond, Prepared, TxnStats};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use storlab_stats::Histogram;

/// What `run` returns (kept under its old name for callers).
pub type RunRecord = DbRun;

#[derive(Debug, Clone)]
pub enum Workload {
    Tpcc(TpccOptions),
    Insert(insert::InsertOptions),
    Custom(custom::Workload),
}

impl Workload {
    pub fn name(&self) -> String {
        match self {
            Workload::Tpcc(_) => "tpcc".into(),
            Workload::Insert(_) => "insert".into(),
            Workload::Custom(w) => w.name.clone(),
        }
    }
    /// The transaction types that write nothing, so the server flushes
    /// nothing at their commit: TPC-C's Order-Status and Stock-Level; in a
    /// workload file, a transaction whose statements are all SELECTs.
    pub fn read_only_kinds(&self) -> Vec<String> {
        match self {
            Workload::Tpcc(_) => Kind::ALL.iter().filter(|k| k.read_only()).map(|k| k.name().to_string()).collect(),
            Workload::Insert(_) => Vec::new(),
            Workload::Custom(w) => w
                .transactions
                .iter()
                .filter(|t| !t.statements.is_empty() && t.statements.iter().all(|s| s.sql.trim_start().get(..6).is_some_and(|w| w.eq_ignore_ascii_case("select"))))
                .map(|t| t.name.clone())
                .collect(),
        }
    }
    /// A workload file's headline, if it names one.
    fn metric(&self) -> Option<&crate::custom::Metric> {
        match self {
            Workload::Custom(w) => w.metric.as_ref(),
            _ => None,
        }
    }
    fn tpcc(&self) -> Option<&TpccOptions> {
        match self {
            Workload::Tpcc(t) => Some(t),
            _ => None,
        }
    }
    fn kinds(&self) -> Vec<String> {
        match self {
            Workload::Tpcc(_) => Kind::ALL.iter().map(|k| k.name().to_string()).collect(),
            Workload::Insert(_) => vec!["insert".into()],
            Workload::Custom(w) => w.transactions.iter().map(|t| t.name.clone()).collect(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub vus: u32,
    pub rampup: Duration,
    /// The measured window; zero = until the workload ends (insert storm).
    pub duration: Duration,
    pub seed: u64,
    /// Event loops (threads) the users are dealt over; 0 = one per core, at
    /// most one per user (pgbench's `-j`); 1 = the controller's own thread.
    pub threads: usize,
    /// Run the TPC-C consistency conditions after the run.
    pub check: bool,
}

impl Default for TpccOptions {
    fn default() -> Self {
        TpccOptions { warehouses: 1, all_warehouses: false, key_and_think: false, commit_log: None }
    }
}

impl Default for RunOptions {
    /// One user, no rampup, until the workload ends, one event loop per core.
    fn default() -> Self {
        RunOptions { vus: 1, rampup: Duration::ZERO, duration: Duration::ZERO, seed: 1, threads: 0, check: false }
    }
}

/// Loader connections when the caller does not say: one per core, at most 8.
pub fn default_loaders() -> u32 {
    std::thread::available_parallelism().map_or(2, |n| n.get().min(8) as u32)
}

/// A one-thread runtime: the controller's, and each event loop's.
fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| DbError::sql("starting the driver runtime", e))
}

/// The event loops the virtual users are dealt over, round-robin, as pgbench
/// deals its clients over its threads (`-j`). Each is a one-thread runtime,
/// so a user's task and its connection's never wake each other across
/// threads. One loop (the default) serves every socket from the controller's
/// own thread; SQLite's calls run on the blocking pool either way.
struct Shards {
    stops: Vec<tokio::sync::oneshot::Sender<()>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Shards {
    fn start(n: usize) -> Result<(Shards, Vec<tokio::runtime::Handle>)> {
        let mut shards = Shards { stops: vec![], threads: vec![] };
        let mut handles = vec![];
        for i in 0..n {
            let (htx, hrx) = std::sync::mpsc::channel();
            let (stx, srx) = tokio::sync::oneshot::channel::<()>();
            let t = std::thread::Builder::new()
                .name(format!("storlab-db-{i}"))
                .spawn(move || match runtime() {
                    Ok(rt) => {
                        let _ = htx.send(Ok(rt.handle().clone()));
                        rt.block_on(async {
                            let _ = srx.await;
                        });
                        rt.shutdown_timeout(Duration::from_secs(5));
                    }
                    Err(e) => {
                        let _ = htx.send(Err(e));
                    }
                })
                .map_err(|e| DbError::sql("starting an event-loop thread", e))?;
            shards.threads.push(t);
            shards.stops.push(stx);
            handles.push(hrx.recv().map_err(|e| DbError::sql("starting an event-loop thread", e))??);
        }
        Ok((shards, handles))
    }

    fn stop(self) {
        for s in self.stops {
            let _ = s.send(());
        }
        for t in self.threads {
            let _ = t.join();
        }
    }
}

/// Builds (or checks and reuses) the workload's schema and data.
pub fn prepare(db: &Db, wl: &Workload, seed: u64, loaders: u32, progress: &Progress) -> Result<Prepared> {
    progress.phase.store(PHASE_LOAD, Ordering::Relaxed);
    let t0 = Instant::now();
    let rt = runtime()?;
    let loaded = rt.block_on(async {
        match wl {
            Workload::Tpcc(o) => tpcc::prepare(db, o.warehouses, loaders, seed, progress).await,
            Workload::Insert(_) => insert::prepare(db).await,
            Workload::Custom(w) => custom::prepare(db, w, seed, progress).await,
        }
    })?;
    Ok(Prepared { loaded, load_s: r3(t0.elapsed().as_secs_f64()) })
}

async fn open_session(db: &Db, wl: &Workload, vu: u32, vus: u32, seed: u64) -> Result<Box<dyn Session>> {
    match wl {
        Workload::Tpcc(o) => tpcc::session::session(db, o, vu, vus, seed).await,
        Workload::Insert(o) => insert::session(db, o, vu, seed).await,
        Workload::Custom(w) => custom::session(db, w, vu, seed).await,
    }
}

/// Counts of one transaction type in the measured window.
#[derive(Default)]
struct TypeStats {
    commits: AtomicU64,
    rollbacks: AtomicU64,
    errors: AtomicU64,
    units: AtomicU64,
    hist: Mutex<Histogram>,
}

struct Shared {
    types: Vec<TypeStats>,
    measuring: AtomicBool,
    halt: AtomicBool,
    /// Set when the window has closed; later completions are the tail.
    closed: AtomicBool,
    /// Transactions that ended after the window closed (the engine sees them).
    tail: AtomicU64,
    errors: Mutex<BTreeMap<String, u64>>,
    /// (transactions, units) completed in each second since the start.
    per_second: Mutex<Vec<(u64, u64)>>,
    start: Instant,
    /// Nanoseconds from `start` to the last commit inside the window.
    last_commit_ns: AtomicU64,
    /// Per user, nanoseconds from `start` to when it had nothing left to
    /// run (0: not done).
    finished_ns: Vec<AtomicU64>,
    lost: Mutex<Option<String>>,
}

impl Shared {
    fn new(kinds: usize, vus: u32) -> Shared {
        Shared {
            types: (0..kinds).map(|_| TypeStats::default()).collect(),
            measuring: AtomicBool::new(false),
            halt: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            tail: AtomicU64::new(0),
            errors: Mutex::new(BTreeMap::new()),
            per_second: Mutex::new(Vec::new()),
            start: Instant::now(),
            last_commit_ns: AtomicU64::new(0),
            finished_ns: (0..vus).map(|_| AtomicU64::new(0)).collect(),
            lost: Mutex::new(None),
        }
    }

    /// Seconds from the window's start (`t0`) to the last commit in it (0:
    /// none), and with `per_user` each user's to when it had nothing left
    /// to run (None: it had not).
    fn finish_times(&self, t0: Instant, per_user: bool) -> (f64, Vec<Option<f64>>) {
        let w0 = t0.duration_since(self.start).as_nanos() as u64;
        let since = |ns: u64| (ns > 0).then(|| r3(ns.saturating_sub(w0) as f64 / 1e9));
        let last = since(self.last_commit_ns.load(Ordering::Relaxed)).unwrap_or(0.0);
        let users = if per_user { self.finished_ns.iter().map(|f| since(f.load(Ordering::Relaxed))).collect() } else { vec![] };
        (last, users)
    }

    fn record(&self, kind: usize, out: &Outcome, units: u64, dt: Duration) {
        let sec = self.start.elapsed().as_secs() as usize;
        {
            let mut ps = self.per_second.lock().expect("series lock");
            if ps.len() <= sec {
                ps.resize(sec + 1, (0, 0));
            }
            if matches!(out, Outcome::Commit | Outcome::Rollback) {
                ps[sec].0 += 1;
                ps[sec].1 += units;
            }
        }
        if !self.measuring.load(Ordering::Relaxed) {
            if self.closed.load(Ordering::Relaxed) {
                self.tail.fetch_add(1, Ordering::Relaxed);
            }
            return;
        }
        let t = &self.types[kind];
        match out {
            Outcome::Commit => {
                self.last_commit_ns.fetch_max(self.start.elapsed().as_nanos() as u64, Ordering::Relaxed);
                t.commits.fetch_add(1, Ordering::Relaxed);
                t.units.fetch_add(units, Ordering::Relaxed);
            }
            Outcome::Rollback => {
                t.rollbacks.fetch_add(1, Ordering::Relaxed);
            }
            Outcome::Error(m) | Outcome::Lost(m) => {
                t.errors.fetch_add(1, Ordering::Relaxed);
                let mut e = self.errors.lock().expect("errors lock");
                let key: String = m.chars().take(200).collect();
                if e.len() < 20 || e.contains_key(&key) {
                    *e.entry(key).or_default() += 1;
                }
                return;
            }
        }
        t.hist.lock().expect("histogram lock").record(dt.as_secs_f64());
    }
}

async fn pause(d: Duration, shared: &Shared, progress: &Progress) {
    let until = Instant::now() + d;
    while Instant::now() < until && !shared.halt.load(Ordering::Relaxed) && !progress.stop.load(Ordering::Relaxed) {
        tokio::time::sleep((until - Instant::now()).min(Duration::from_millis(100))).await;
    }
}

async fn vu_loop(vu: usize, mut s: Box<dyn Session>, shared: Arc<Shared>, progress: Progress) {
    while !shared.halt.load(Ordering::Relaxed) && !progress.stop.load(Ordering::Relaxed) {
        let Some(plan) = s.plan() else {
            shared.finished_ns[vu].store((shared.start.elapsed().as_nanos() as u64).max(1), Ordering::Relaxed);
            break;
        };
        if !plan.key.is_zero() {
            pause(plan.key, &shared, &progress).await;
            if shared.halt.load(Ordering::Relaxed) || progress.stop.load(Ordering::Relaxed) {
                break;
            }
        }
        let t = Instant::now();
        let (out, units) = s.exec().await;
        shared.record(plan.kind, &out, units, t.elapsed());
        progress.done.fetch_add(1, Ordering::Relaxed);
        if let Outcome::Lost(m) = out {
            *shared.lost.lock().expect("lost lock") = Some(m);
            break;
        }
        if !plan.think.is_zero() {
            pause(plan.think, &shared, &progress).await;
        }
    }
}

fn r3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// One timed run: rampup, then the measured window, then stop.
pub fn run(db: &Db, wl: &Workload, o: &RunOptions, progress: &Progress) -> Result<RunRecord> {
    if o.vus == 0 {
        return Err(DbError::Input("--vus must be at least 1".into()));
    }
    let rt = runtime()?;
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let loops = if o.threads == 0 { cores.min(o.vus as usize) } else { o.threads };
    let rec = if loops <= 1 {
        rt.block_on(async { run_async(db, wl, o, progress, &[tokio::runtime::Handle::current()]).await })
    } else {
        let (shards, handles) = Shards::start(loops)?;
        let rec = rt.block_on(run_async(db, wl, o, progress, &handles));
        shards.stop();
        rec
    };
    rt.shutdown_timeout(Duration::from_secs(5));
    rec
}

async fn run_async(db: &Db, wl: &Workload, o: &RunOptions, progress: &Progress, loops: &[tokio::runtime::Handle]) -> Result<RunRecord> {
    let is_tpcc = matches!(wl, Workload::Tpcc(_));
    let kinds = wl.kinds();
    let mut monitor = Monitor::open(db).await?;
    progress.phase.store(PHASE_RAMPUP, Ordering::Relaxed);
    progress.done.store(0, Ordering::Relaxed);
    let sessions = log_in(db, wl, o, progress, loops).await?;
    let shared = Arc::new(Shared::new(kinds.len(), o.vus));
    let mut tasks = tokio::task::JoinSet::new();
    let spawn_all = |tasks: &mut tokio::task::JoinSet<()>, sessions: Vec<(usize, Box<dyn Session>)>| {
        for (vu, (l, s)) in sessions.into_iter().enumerate() {
            let user = loops[l].spawn(vu_loop(vu, s, shared.clone(), progress.clone()));
            tasks.spawn(async move {
                let _ = user.await;
            });
        }
    };
    // With a rampup the users start now; without one, after the window opens,
    // so that nothing they do falls before it.
    let mut waiting = Some(sessions);
    if !o.rampup.is_zero() {
        spawn_all(&mut tasks, waiting.take().unwrap_or_default());
        phase(o.rampup, &mut tasks, progress).await;
    }
    let interrupted_in_rampup = progress.stop.load(Ordering::Relaxed);
    // Measured window.
    let xact0 = monitor.xact().await?;
    let own0 = monitor.own_xacts();
    let autocommitted = || if let Db::Mysql(t) = db { t.autocommitted.load(Ordering::Relaxed) } else { 0 };
    let auto0 = autocommitted();
    let snap0 = monitor.snapshot(is_tpcc).await?;
    let cpu0 = process_cpu_s();
    let t0 = Instant::now();
    shared.measuring.store(true, Ordering::Relaxed);
    progress.phase.store(PHASE_MEASURE, Ordering::Relaxed);
    if let Some(sessions) = waiting.take() {
        spawn_all(&mut tasks, sessions);
    }
    if !interrupted_in_rampup {
        phase(o.duration, &mut tasks, progress).await;
    }
    shared.measuring.store(false, Ordering::Relaxed);
    shared.closed.store(true, Ordering::Relaxed);
    let elapsed = t0.elapsed();
    let cpu1 = process_cpu_s();
    // Users that finished their work inside the window (a fixed number of
    // rows) have logged off: their last counters come with their exits.
    if tasks.is_empty() {
        monitor.settle().await;
    }
    // A monitor that fails once the users have lost their connections
    // means the server went away (it died, or its volume did): the run ends
    // there with the client's side of what was measured, not with an error.
    let user_lost = shared.lost.lock().expect("lost lock").is_some();
    let (snap1, server_lost) = match monitor.snapshot(is_tpcc).await {
        Ok(s) => (s, None),
        Err(e) if user_lost => (crate::monitor::Snapshot { at: Some(Instant::now()), ..Default::default() }, Some(e.to_string())),
        Err(e) => return Err(e),
    };
    let interrupted = progress.stop.load(Ordering::Relaxed);
    progress.phase.store(PHASE_STOP, Ordering::Relaxed);
    shared.halt.store(true, Ordering::Relaxed);
    while tasks.join_next().await.is_some() {}
    // The engine's counter after every worker has gone: exits flush them.
    let xact1 = if server_lost.is_none() { monitor.xact_after_disconnects().await? } else { None };
    let consistency = if is_tpcc && o.check && server_lost.is_none() { Some(check(&mut monitor).await?) } else { None };
    let server = monitor.server_stats(&snap0, &snap1, |q| classify(wl, q), &kinds).await;

    let minutes = elapsed.as_secs_f64() / 60.0;
    let per_min = |n: f64| if minutes > 0.0 { n / minutes } else { 0.0 };
    let (txn, total_ok, total_err, total_units) = txn_table(&kinds, &shared, wl, &per_min);
    let nopm = match (snap0.d_next_o_id, snap1.d_next_o_id) {
        (Some(a), Some(b)) => Some(per_min((b - a) as f64).round()),
        // The server went away: the New-Orders the client saw commit.
        (Some(_), None) if server_lost.is_some() => Some(per_min(shared.types[Kind::NewOrder.index()].commits.load(Ordering::Relaxed) as f64).round()),
        _ => None,
    };
    let tail = shared.tail.load(Ordering::Relaxed);
    let autocommits = autocommitted() - auto0;
    let engine_tpm = match (xact0, xact1) {
        (Some(_), Some(_)) if autocommits > 0 => None,
        // Take out the monitor's own statements between the two reads and
        // the workers' transactions that ended after the window.
        (Some(a), Some((b, own_end))) => Some(per_min(((b - a) as f64 - (own_end - own0) as f64 - tail as f64).max(0.0)).round()),
        _ => None,
    };
    let client_tpm = per_min((total_ok + total_err) as f64).round();
    let cpu = (cpu1.0 - cpu0.0) + (cpu1.1 - cpu0.1);
    let done = total_ok + total_err;
    let series = shared.per_second.lock().expect("series lock").clone();
    let lost = shared.lost.lock().expect("lost lock").clone();
    let notes = run_notes(server_lost.is_some(), autocommits > 0, db.engine(), elapsed);
    let io = io_profile(&snap0, &snap1, done, db.engine(), notes);
    // HammerDB names the engine it measured: "MariaDB TPM" on MariaDB.
    let tpm_label = match &monitor {
        crate::monitor::Monitor::My(m) if m.mariadb => "MariaDB",
        _ => db.label(),
    };
    let tpm_line = engine_tpm.unwrap_or(client_tpm);
    // A workload file's headline: its counted transaction's commits.
    let metric = wl.metric();
    let headline = metric.map(|m| r3(m.of_per_min(per_min(txn.get(&m.transaction).map_or(0, |t| t.commits) as f64))));
    let (last_commit_s, vu_finish_s) = shared.finish_times(t0, matches!(wl, Workload::Insert(_)));
    let tpcc_opts = wl.tpcc();
    let rows_kind = matches!(wl, Workload::Insert(_) | Workload::Custom(_));
    let error_messages = shared.errors.lock().expect("errors lock").clone();
    Ok(DbRun {
        workload: wl.name(),
        db: db.engine().into(),
        target: db.display(),
        vus: o.vus,
        repeat: 1,
        rampup_s: o.rampup.as_secs_f64(),
        duration_s: r3(elapsed.as_secs_f64()),
        interrupted,
        transactions: done,
        tpm: tpm_line,
        tpm_source: if engine_tpm.is_some() { "engine" } else { "client" }.into(),
        tpm_engine: engine_tpm,
        tpm_client: client_tpm,
        engine_to_client_ratio: engine_tpm.map(|e| if client_tpm > 0.0 { r3(e / client_tpm) } else { 0.0 }),
        tail_txns: tail,
        errors: total_err,
        error_messages,
        txn,
        client_cpu_s: r3(cpu),
        client_cpu_user_s: r3(cpu1.0 - cpu0.0),
        client_cpu_sys_s: r3(cpu1.1 - cpu0.1),
        client_cpu_us_per_txn: if done > 0 { r3(cpu / done as f64 * 1e6) } else { 0.0 },
        io_profile: io,
        per_second: PerSecond { txns: series.iter().map(|x| x.0).collect(), rows: series.iter().map(|x| x.1).collect() },
        lost_connection: lost,
        server_lost,
        started_unix_s: r3((std::time::SystemTime::now() - shared.start.elapsed()).duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)),
        last_commit_s,
        vu_finish_s,
        nopm,
        headline,
        headline_name: metric.map(|m| m.name.clone()),
        hammerdb: nopm.map(|n| format!("System achieved {} NOPM from {} {tpm_label} TPM", n as i64, tpm_line as i64)),
        warehouses: tpcc_opts.map(|t| t.warehouses),
        all_warehouses: tpcc_opts.map(|t| t.all_warehouses),
        key_and_think: tpcc_opts.map(|t| t.key_and_think),
        rows: rows_kind.then_some(total_units),
        rows_per_min: rows_kind.then(|| r3(per_min(total_units as f64))),
        consistency,
        server,
    })
}

/// Logs the virtual users in, a few at a time (as HammerDB staggers
/// logins). Each user's connection is opened on its own event loop, where
/// its connection task then lives: (the loop's index, the session).
async fn log_in(db: &Db, wl: &Workload, o: &RunOptions, progress: &Progress, loops: &[tokio::runtime::Handle]) -> Result<Vec<(usize, Box<dyn Session>)>> {
    let mut sessions: Vec<(usize, Box<dyn Session>)> = Vec::with_capacity(o.vus as usize);
    let mut vu = 0;
    while vu < o.vus {
        let batch = (o.vus - vu).min(16);
        let opened = futures_util::future::join_all((vu..vu + batch).map(|k| {
            let (db, wl, vus, seed) = (db.clone(), wl.clone(), o.vus, o.seed);
            loops[k as usize % loops.len()].spawn(async move { open_session(&db, &wl, k, vus, seed).await })
        }))
        .await;
        for (i, s) in opened.into_iter().enumerate() {
            let s = s.map_err(|e| DbError::sql("logging a virtual user in", e))??;
            sessions.push(((vu as usize + i) % loops.len(), s));
        }
        vu += batch;
        if progress.stop.load(Ordering::Relaxed) {
            return Err(DbError::Input("interrupted while logging the virtual users in".into()));
        }
    }
    Ok(sessions)
}

/// Each transaction type's figures over the window, and the totals:
/// (table, commits + rollbacks, errors, units).
fn txn_table(kinds: &[String], shared: &Shared, wl: &Workload, per_min: &dyn Fn(f64) -> f64) -> (BTreeMap<String, TxnStats>, u64, u64, u64) {
    let mut txn = BTreeMap::new();
    let (mut total_ok, mut total_err, mut total_units) = (0u64, 0u64, 0u64);
    for (name, t) in kinds.iter().zip(&shared.types) {
        let (c, r, e, u) = (t.commits.load(Ordering::Relaxed), t.rollbacks.load(Ordering::Relaxed), t.errors.load(Ordering::Relaxed), t.units.load(Ordering::Relaxed));
        total_ok += c + r;
        total_err += e;
        total_units += u;
        let h = t.hist.lock().expect("histogram lock");
        let stats = TxnStats {
            latency: h.summary().rounded(1),
            commits: c,
            rollbacks: r,
            errors: e,
            per_min: r3(per_min((c + r) as f64)),
            rows: (!matches!(wl, Workload::Tpcc(_))).then_some(u),
        };
        txn.insert(name.clone(), stats);
    }
    (txn, total_ok, total_err, total_units)
}

/// What a reader of the run must know about its counts.
fn run_notes(server_lost: bool, autocommits: bool, engine: &str, elapsed: Duration) -> Vec<String> {
    let mut notes = vec![];
    if server_lost {
        notes.push("the server went away before the window's end: NOPM and TPM are the client's counts, the engine's counters are missing".to_string());
    }
    if autocommits {
        notes.push("one-statement transactions ran in autocommit (one round trip, as sysbench and the mysql client run them), which MySQL counts in no Com_commit: TPM is the client's count".to_string());
    }
    if engine == "postgres" && elapsed.as_secs_f64() < 60.0 {
        notes.push("PostgreSQL flushes its statistics about once a second per busy backend: on a window under a minute the engine's TPM and I/O counters are approximate".to_string());
    }
    notes
}

/// Which transaction type a top-level statement of pg_stat_statements
/// belongs to: TPC-C's function calls by name, the storm's insert, a
/// workload file's statements by their text with parameters and constants
/// blotted out (pg_stat_statements shows constants as `$n`). BEGIN, COMMIT
/// and ROLLBACK are shared; anything else (the monitor's queries) is no
/// workload's.
fn classify(wl: &Workload, query: &str) -> Option<Option<usize>> {
    let q = normalize(query);
    if matches!(q.as_str(), "begin" | "commit" | "rollback" | "end" | "start transaction") {
        return Some(None);
    }
    match wl {
        Workload::Tpcc(_) => {
            const CALLS: [&str; 5] = ["neword(", "payment(", "ostat(", "delivery(", "slev("];
            CALLS.iter().position(|c| q.starts_with("select") && q.contains(c)).map(|k| {
                // CALLS follows Kind::ALL's order.
                debug_assert_eq!(Kind::ALL.len(), CALLS.len());
                Some(k)
            })
        }
        Workload::Insert(_) => (q.starts_with("insert") && q.contains(insert::TABLE)).then_some(Some(0)),
        Workload::Custom(w) => w.transactions.iter().position(|t| t.statements.iter().any(|s| normalize(&s.pg_sql) == q)).map(Some),
    }
}

/// Lower case, one space between words, every `$n`, number and quoted
/// string replaced by `?`, no trailing semicolon.
fn normalize(sql: &str) -> String {
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    let mut i = 0;
    let mut space = false;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            space = !out.is_empty();
            i += 1;
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        let prev_word = out.as_bytes().last().is_some_and(|p| p.is_ascii_alphanumeric() || *p == b'_');
        if c == b'$' && b.get(i + 1).is_some_and(u8::is_ascii_digit) || c.is_ascii_digit() && !prev_word {
            i += 1;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
            out.push('?');
        } else if c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != b'\'' {
                i += 1;
            }
            i += 1;
            out.push('?');
        } else {
            out.push(c.to_ascii_lowercase() as char);
            i += 1;
        }
    }
    out.trim_end_matches(';').trim_end().to_string()
}

/// Lets the users run for `d` (zero: until they are all done), ending early
/// on a stop request or when no user is left.
async fn phase(d: Duration, tasks: &mut tokio::task::JoinSet<()>, progress: &Progress) {
    let until = Instant::now() + d;
    while !progress.stop.load(Ordering::Relaxed) && (d.is_zero() || Instant::now() < until) {
        if tasks.is_empty() {
            return;
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(20)) => {}
            _ = tasks.join_next() => {}
        }
    }
}

async fn check(m: &mut Monitor) -> Result<BTreeMap<String, Consistency>> {
    let mut out = BTreeMap::new();
    for (name, sql) in tpcc::CONSISTENCY {
        let bad = m.count(sql).await?;
        out.insert(name.to_string(), Consistency { violations: bad.max(0) as u64, ok: bad == 0 });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_are_matched_with_their_constants_blotted_out() {
        // pg_stat_statements shows `SELECT 1 / ($1 - 1)` prepared as
        // `SELECT $2 / ($1 - $3)`; identifiers with digits stay.
        assert_eq!(normalize("SELECT 1 / ($1 - 1)"), normalize("SELECT $2 / ($1 - $3)"));
        assert_eq!(normalize("SELECT s_dist_01 FROM stock WHERE x = 'a b';"), "select s_dist_01 from stock where x = ?");
        let tpcc = Workload::Tpcc(TpccOptions { warehouses: 1, all_warehouses: false, key_and_think: false, commit_log: None });
        assert_eq!(classify(&tpcc, "SELECT r_o_id, r_total FROM neword($1, $2, $3, $4, $5, $6)"), Some(Some(Kind::NewOrder.index())));
        assert_eq!(classify(&tpcc, "SELECT slev($1, $2, $3)"), Some(Some(Kind::StockLevel.index())));
        assert_eq!(classify(&tpcc, "COMMIT"), Some(None));
        assert_eq!(classify(&tpcc, "SELECT sum(d_next_o_id)::bigint FROM district"), None);
        let w = custom::Workload::parse(
            "w.toml",
            "name = \"w\"\ntables = [\"t\"]\n[params]\nx = { uniform = [1, 2] }\n[[transaction]]\nname = \"a\"\nstatements = [\"SELECT 1 / (:x - 1)\"]\n[[transaction]]\nname = \"b\"\nstatements = [\"UPDATE t SET y = 2 WHERE x = :x\"]\n",
        )
        .unwrap();
        let cw = Workload::Custom(w);
        assert_eq!(classify(&cw, "SELECT $2 / ($1 - $3)"), Some(Some(0)));
        assert_eq!(classify(&cw, "UPDATE t SET y = $2 WHERE x = $1"), Some(Some(1)));
    }
}
