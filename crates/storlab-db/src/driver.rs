//! The timed driver: opens one session per virtual user, runs them as tokio
//! tasks, takes the monitor's snapshots at the edges of the measured window,
//! and turns the counts into the run record.

use crate::error::{DbError, Result};
use crate::monitor::{io_profile, PgMonitor, Snapshot};
use crate::tpcc::{self, Input, Kind, Terminal};
use crate::{custom, insert, process_cpu_s, sqlite_io, Outcome, Progress, PHASE_LOAD, PHASE_MEASURE, PHASE_RAMPUP, PHASE_STOP};
use serde_json::json;
use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use storlab_stats::Histogram;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
pub type RunRecord = serde_json::Value;

/// Where the workload runs.
#[derive(Clone)]
pub enum Db {
    Sqlite { path: PathBuf },
    Postgres(crate::pg::Target),
}

impl Db {
    pub fn engine(&self) -> &'static str {
        match self {
            Db::Sqlite { .. } => "sqlite",
            Db::Postgres(_) => "postgres",
        }
    }
    pub fn display(&self) -> String {
        match self {
            Db::Sqlite { path } => format!("sqlite {}", path.display()),
            Db::Postgres(t) => t.display.clone(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct TpccOptions {
    pub warehouses: u32,
    /// HammerDB's "use all warehouses": a warehouse of the VU's slice per transaction.
    pub all_warehouses: bool,
    /// Keying and thinking times of clause 5.2.5.7 (off by default, as in HammerDB).
    pub key_and_think: bool,
}

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
        TpccOptions { warehouses: 1, all_warehouses: false, key_and_think: false }
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
pub fn prepare(db: &Db, wl: &Workload, seed: u64, loaders: u32, progress: &Progress) -> Result<serde_json::Value> {
    progress.phase.store(PHASE_LOAD, Ordering::Relaxed);
    let t0 = Instant::now();
    let rt = runtime()?;
    let loaded = rt.block_on(async {
        match (db, wl) {
            (Db::Postgres(t), Workload::Tpcc(o)) => tpcc::pg::prepare(t, o.warehouses, loaders, seed, progress).await,
            (Db::Sqlite { path }, Workload::Tpcc(o)) => {
                let (p, pr) = (path.clone(), progress.clone());
                let w = o.warehouses;
                tokio::task::spawn_blocking(move || tpcc::sqlite::prepare(&p, w, seed, &pr)).await.map_err(|e| DbError::sql("loader", e))?
            }
            (db, Workload::Insert(_)) => insert::prepare(db).await,
            (db, Workload::Custom(w)) => custom::prepare(db, w, seed, progress).await,
        }
    })?;
    Ok(json!({"loaded": loaded, "load_s": (t0.elapsed().as_secs_f64() * 1000.0).round() / 1000.0}))
}

/// One virtual user's next transaction.
pub struct Plan {
    pub kind: usize,
    pub key: Duration,
    pub think: Duration,
}

/// A virtual user's connection and its workload state.
pub trait Session: Send {
    /// The next transaction to run; `None` when this user is done.
    fn plan(&mut self) -> Option<Plan>;
    /// Runs the planned transaction: its outcome and the rows it wrote.
    fn exec(&mut self) -> BoxFuture<'_, (Outcome, u64)>;
}

enum TpccConn {
    Pg(tpcc::pg::Session),
    Sqlite(Option<rusqlite::Connection>),
}

struct TpccSession {
    conn: TpccConn,
    t: Terminal,
    input: Option<Input>,
    key_and_think: bool,
}

fn pauses(t: &mut Terminal, k: Kind, on: bool) -> (Duration, Duration) {
    if !on {
        return (Duration::ZERO, Duration::ZERO);
    }
    let (key, mean) = k.key_think_s();
    // Think time: −ln(r)·mean, capped at 10× the mean (clause 5.2.5.4).
    let think = (-(1.0 - t.rng.f64()).ln() * mean).min(10.0 * mean);
    (Duration::from_secs_f64(key), Duration::from_secs_f64(think))
}

impl Session for TpccSession {
    fn plan(&mut self) -> Option<Plan> {
        let k = Kind::draw(&mut self.t.rng);
        self.input = Some(self.t.input(k));
        let (key, think) = pauses(&mut self.t, k, self.key_and_think);
        Some(Plan { kind: k.index(), key, think })
    }
    fn exec(&mut self) -> BoxFuture<'_, (Outcome, u64)> {
        Box::pin(async move {
            let input = self.input.take().expect("planned");
            let out = match &mut self.conn {
                TpccConn::Pg(s) => s.run(&input).await,
                TpccConn::Sqlite(slot) => sqlite_io::on_pool(slot, move |c| tpcc::sqlite::run(c, &input)).await.unwrap_or_else(|e| Outcome::Lost(e.to_string())),
            };
            (out, 1)
        })
    }
}

async fn open_session(db: &Db, wl: &Workload, vu: u32, vus: u32, seed: u64) -> Result<Box<dyn Session>> {
    match (db, wl) {
        (db, Workload::Tpcc(o)) => {
            let conn = match db {
                Db::Postgres(t) => TpccConn::Pg(tpcc::pg::Session::open(t).await?),
                Db::Sqlite { path } => {
                    let p = path.clone();
                    TpccConn::Sqlite(Some(tokio::task::spawn_blocking(move || sqlite_io::open(&p)).await.map_err(|e| DbError::sql("opening", e))??))
                }
            };
            Ok(Box::new(TpccSession { conn, t: Terminal::new(seed, vu, vus, o.warehouses, o.all_warehouses), input: None, key_and_think: o.key_and_think }))
        }
        (db, Workload::Insert(o)) => insert::session(db, o, vu, seed).await,
        (db, Workload::Custom(w)) => custom::session(db, w, vu, seed).await,
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
    lost: Mutex<Option<String>>,
}

impl Shared {
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

async fn vu_loop(mut s: Box<dyn Session>, shared: Arc<Shared>, progress: Progress) {
    while !shared.halt.load(Ordering::Relaxed) && !progress.stop.load(Ordering::Relaxed) {
        let Some(plan) = s.plan() else { break };
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

enum Monitor {
    Pg(PgMonitor),
    Sqlite(rusqlite::Connection),
}

impl Monitor {
    async fn snapshot(&mut self, tpcc: bool) -> Result<Snapshot> {
        match self {
            Monitor::Pg(m) => m.snapshot(tpcc).await,
            Monitor::Sqlite(c) => {
                let mut s = Snapshot { at: Some(Instant::now()), ..Default::default() };
                if tpcc {
                    s.d_next_o_id = c.query_row("SELECT sum(d_next_o_id) FROM district", [], |r| r.get(0))
                        .map_err(|e| DbError::sql("monitor snapshot", e))?;
                }
                s.stats = sqlite_io::snapshot();
                Ok(s)
            }
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
    let mut monitor = match db {
        Db::Postgres(t) => Monitor::Pg(PgMonitor::open(t).await?),
        Db::Sqlite { path } => Monitor::Sqlite(sqlite_io::open(path)?),
    };
    progress.phase.store(PHASE_RAMPUP, Ordering::Relaxed);
    progress.done.store(0, Ordering::Relaxed);

    // Log the virtual users in, a few at a time (as HammerDB staggers logins).
    // Each user's connection is opened on its own event loop, where its
    // connection task then lives.
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
    let shared = Arc::new(Shared {
        types: kinds.iter().map(|_| TypeStats::default()).collect(),
        measuring: AtomicBool::new(false),
        halt: AtomicBool::new(false),
        closed: AtomicBool::new(false),
        tail: AtomicU64::new(0),
        errors: Mutex::new(BTreeMap::new()),
        per_second: Mutex::new(Vec::new()),
        start: Instant::now(),
        last_commit_ns: AtomicU64::new(0),
        lost: Mutex::new(None),
    });
    let mut tasks = tokio::task::JoinSet::new();
    let spawn_all = |tasks: &mut tokio::task::JoinSet<()>, sessions: Vec<(usize, Box<dyn Session>)>| {
        for (l, s) in sessions {
            let user = loops[l].spawn(vu_loop(s, shared.clone(), progress.clone()));
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
    }
    // Rampup.
    if !o.rampup.is_zero() {
        phase(o.rampup, &mut tasks, progress).await;
    }
    let interrupted_in_rampup = progress.stop.load(Ordering::Relaxed);
    // Measured window.
    let xact0 = match &mut monitor {
        Monitor::Pg(m) => m.xact().await?,
        _ => None,
    };
    let own0 = match &monitor {
        Monitor::Pg(m) => m.own_xacts,
        _ => 0,
    };
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
    let snap1 = monitor.snapshot(is_tpcc).await?;
    let interrupted = progress.stop.load(Ordering::Relaxed);
    progress.phase.store(PHASE_STOP, Ordering::Relaxed);
    shared.halt.store(true, Ordering::Relaxed);
    while tasks.join_next().await.is_some() {}
    // The engine's counter after every worker has gone: exits flush them.
    let xact1 = match &mut monitor {
        Monitor::Pg(m) => {
            m.wait_for_disconnects(Duration::from_secs(10)).await;
            tokio::time::sleep(Duration::from_millis(50)).await;
            let own = m.own_xacts;
            m.xact().await?.map(|x| (x, own))
        }
        _ => None,
    };
    let consistency = if is_tpcc && o.check { Some(check(&mut monitor).await?) } else { None };

    let minutes = elapsed.as_secs_f64() / 60.0;
    let per_min = |n: f64| if minutes > 0.0 { n / minutes } else { 0.0 };
    let mut txn = serde_json::Map::new();
    let (mut total_ok, mut total_err, mut total_units) = (0u64, 0u64, 0u64);
    for (name, t) in kinds.iter().zip(&shared.types) {
        let (c, r, e, u) = (t.commits.load(Ordering::Relaxed), t.rollbacks.load(Ordering::Relaxed), t.errors.load(Ordering::Relaxed), t.units.load(Ordering::Relaxed));
        total_ok += c + r;
        total_err += e;
        total_units += u;
        let h = t.hist.lock().expect("histogram lock");
        let mut v = serde_json::to_value(h.summary().rounded(1)).expect("summary serialises");
        v["commits"] = c.into();
        v["rollbacks"] = r.into();
        v["errors"] = e.into();
        v["per_min"] = r3(per_min((c + r) as f64)).into();
        if !matches!(wl, Workload::Tpcc(_)) {
            v["rows"] = u.into();
        }
        txn.insert(name.clone(), v);
    }
    let nopm = match (snap0.d_next_o_id, snap1.d_next_o_id) {
        (Some(a), Some(b)) => Some(per_min((b - a) as f64).round()),
        _ => None,
    };
    let tail = shared.tail.load(Ordering::Relaxed);
    let engine_tpm = match (xact0, xact1) {
        (Some(a), Some((b, own_end))) => {
            // Take out the monitor's own statements between the two reads
            // and the workers' transactions that ended after the window.
            let own = (own_end - own0) as f64;
            Some(per_min(((b - a) as f64 - own - tail as f64).max(0.0)).round())
        }
        _ => None,
    };
    let client_tpm = per_min((total_ok + total_err) as f64).round();
    let cpu = (cpu1.0 - cpu0.0) + (cpu1.1 - cpu0.1);
    let done = total_ok + total_err;
    let series = shared.per_second.lock().expect("series lock").clone();
    let lost = shared.lost.lock().expect("lost lock").clone();
    let mut notes = vec![];
    if matches!(db, Db::Postgres(_)) && elapsed.as_secs_f64() < 60.0 {
        notes.push("PostgreSQL flushes its statistics about once a second per busy backend: on a window under a minute the engine's TPM and I/O counters are approximate".to_string());
    }
    let io = io_profile(&snap0, &snap1, done, db.engine(), notes);
    let tpm_label = match db {
        Db::Postgres(_) => "PostgreSQL",
        Db::Sqlite { .. } => "SQLite",
    };
    let tpm_line = engine_tpm.unwrap_or(client_tpm);
    let last_commit_s = {
        let ns = shared.last_commit_ns.load(Ordering::Relaxed);
        let w0 = t0.duration_since(shared.start).as_nanos() as u64;
        if ns > 0 {
            r3(ns.saturating_sub(w0) as f64 / 1e9)
        } else {
            0.0
        }
    };
    let mut rec = json!({
        "workload": wl.name(),
        "db": db.engine(),
        "target": db.display(),
        "vus": o.vus,
        "rampup_s": o.rampup.as_secs_f64(),
        "duration_s": r3(elapsed.as_secs_f64()),
        "interrupted": interrupted,
        "transactions": done,
        "tpm": tpm_line,
        "tpm_source": if engine_tpm.is_some() { "engine" } else { "client" },
        "tpm_engine": engine_tpm,
        "tpm_client": client_tpm,
        "engine_to_client_ratio": engine_tpm.map(|e| if client_tpm > 0.0 { r3(e / client_tpm) } else { 0.0 }),
        "tail_txns": tail,
        "errors": total_err,
        "error_messages": shared.errors.lock().expect("errors lock").clone(),
        "txn": txn,
        "client_cpu_s": r3(cpu),
        "client_cpu_user_s": r3(cpu1.0 - cpu0.0),
        "client_cpu_sys_s": r3(cpu1.1 - cpu0.1),
        "client_cpu_us_per_txn": if done > 0 { r3(cpu / done as f64 * 1e6) } else { 0.0 },
        "io_profile": io,
        "per_second": {"txns": series.iter().map(|x| x.0).collect::<Vec<_>>(), "rows": series.iter().map(|x| x.1).collect::<Vec<_>>()},
        "lost_connection": lost,
        "started_unix_s": r3((std::time::SystemTime::now() - shared.start.elapsed()).duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)),
        "last_commit_s": last_commit_s,
    });
    if let Some(n) = nopm {
        rec["nopm"] = n.into();
        rec["hammerdb"] = format!("System achieved {} NOPM from {} {tpm_label} TPM", n as i64, tpm_line as i64).into();
    }
    if let Workload::Tpcc(t) = wl {
        rec["warehouses"] = t.warehouses.into();
        rec["all_warehouses"] = t.all_warehouses.into();
        rec["key_and_think"] = t.key_and_think.into();
    }
    if matches!(wl, Workload::Insert(_) | Workload::Custom(_)) {
        rec["rows"] = total_units.into();
        rec["rows_per_min"] = r3(per_min(total_units as f64)).into();
    }
    if let Some(c) = consistency {
        rec["consistency"] = c;
    }
    Ok(rec)
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

async fn check(m: &mut Monitor) -> Result<serde_json::Value> {
    let mut out = serde_json::Map::new();
    for (name, sql) in tpcc::CONSISTENCY {
        let bad: i64 = match m {
            Monitor::Pg(pm) => pm.count(sql).await?,
            Monitor::Sqlite(c) => c.query_row(sql, [], |r| r.get(0)).map_err(|e| DbError::sql("consistency check", e))?,
        };
        out.insert(name.to_string(), json!({"violations": bad, "ok": bad == 0}));
    }
    Ok(serde_json::Value::Object(out))
}
