//! `storlab simulate` on a scenario with `[workload.database]`: the
//! profile's closed loop (`db`) at each virtual-user count on each config,
//! as one run record in `bench db`'s columns (`vus`, `nopm`, `tpm`, `txn`)
//! plus what only a model knows (CPU and per-pool use, the binding resource
//! in words, monthly cost and $ per 1,000 TPM), the tipping point per
//! config, and CloudWatch-style series per pool and VU count.
//!
//! Where the profile's I/O goes: data-page reads and background writes on
//! the `data` pool, else `all` — a config with neither is refused; WAL on
//! `log`, else `all`, else the data pool (said under `warnings`). The
//! profiles have no tempdb I/O, so a `tempdb` pool stays idle.

use crate::db::{run_db, run_db_with, DbParams, DbResult, DB_MEMORY_SHARE, WRITEBACK_DELAY_S};
use crate::{Scenario, SimError};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::path::Path;
use storlab_model::cost::monthly_cost;
use storlab_model::deployment::{resolve_all, Deployment};
use storlab_model::scenario::{Role, ScenarioFile};
use storlab_model::Catalog;
use storlab_record::db::{tipping_point_named, Sweep, SweepStep};
use storlab_record::{DbJob, JobExtra, JobResult, PoolUse, RecordExtra, RunRecord, SimRun, TxnStats};
use storlab_workload::database::{Database, Vus};

/// The headline metric of a profile's sweep, as `bench db` names it.
pub fn metric_of(db: &Database) -> &'static str {
    if db.profile.metric == "nopm" {
        "nopm"
    } else if db.profile.headline.is_some() {
        "headline"
    } else if db.profile.transactions.iter().any(|t| t.rows_per_txn.is_some()) {
        "rows_per_min"
    } else {
        "tpm"
    }
}

/// A workload file's headline (tpsE) for each transaction a minute of the
/// mix; 0 where the profile has none.
fn headline_per_tpm(db: &Database) -> f64 {
    db.profile.headline_at(1.0).unwrap_or(0.0)
}

/// The metric's name in the tipping point's note: the headline's own.
fn metric_label(db: &Database, metric: &str) -> String {
    match &db.profile.headline {
        Some(h) if metric == "headline" => h.name.clone(),
        _ => metric.to_uppercase().replace('_', " "),
    }
}

fn round(v: f64, digits: i32) -> f64 {
    storlab_record::round(v, digits)
}

fn has(dep: &Deployment, role: Role) -> bool {
    dep.pools.iter().any(|p| p.role == role)
}

/// Checks a config against the roles the profile needs; returns its notes.
fn check_roles(file: &str, dep: &Deployment) -> Result<Vec<String>, SimError> {
    if !has(dep, Role::Data) && !has(dep, Role::All) {
        return Err(SimError::NoDataPool {
            file: file.to_string(),
            config: dep.name.clone(),
            valid: dep.pools.iter().map(|p| p.role.name()).collect::<Vec<_>>().join(", "),
        });
    }
    let mut notes = Vec::new();
    if !has(dep, Role::Log) && !has(dep, Role::All) {
        notes.push(format!("config {}: no log pool — the WAL is written on the data pool", dep.name));
    }
    if has(dep, Role::Tempdb) {
        notes.push(format!("config {}: the profile has no tempdb I/O — the tempdb pool stays idle", dep.name));
    }
    Ok(notes)
}

/// Simulates the scenario's database workload on every config and returns
/// the run record. `progress` gets the fraction done and returns false to
/// stop; the record then keeps every finished step and the one cut short.
/// The engine a config names (`engine`, or a SQL Server licence) when the
/// profile was recorded on another: its CPU, page and log figures are the
/// other engine's (and, for SQL Server and Db2, its I/O rules their
/// documentation's: `iorules`).
pub fn engine_mismatch(dep: &storlab_model::Deployment, profile: &storlab_workload::profile::Profile) -> Option<String> {
    let documented = crate::iorules::Rules::resolve(dep, profile).documented;
    let what = match documented {
        Some(e) => format!("I/O rules are {e}'s, from its documentation (pages, log writes, write-back); the CPU, page accesses and log bytes"),
        None => "CPU, page and log figures".to_string(),
    };
    mismatch(dep, profile.engine()?, &profile.name, &what)
}

/// The same for a config's engine and the engine a recording (`has`,
/// named `name`) was made on; `what` is what the recording gives.
fn mismatch(dep: &storlab_model::Deployment, has: String, name: &str, what: &str) -> Option<String> {
    let wants = crate::iorules::wanted_engine(dep)?;
    let why = match &dep.engine {
        Some(e) => format!("engine = \"{e}\""),
        None => format!("license = \"{}\"", dep.license),
    };
    // MariaDB forked from MySQL: the same InnoDB write path, near enough.
    let family = |e: &str| if e == "mariadb" { "mysql".to_string() } else { e.to_string() };
    // storlab runs PostgreSQL, MariaDB and SQLite itself; for another engine
    // the fix a user can take is their own measured run.
    let recordable = ["postgres", "mariadb", "mysql", "sqlite"].contains(&wants.as_str());
    let fix = if recordable {
        format!("record a profile on {wants} (bench db --profile-out) for its own")
    } else {
        format!(
            "storlab cannot run {wants}: compare with a measured {wants} run (storlab import hammerdb.log or its job report, \
             then storlab compare) to see how far its CPU is from this recording's"
        )
    };
    (family(&wants) != family(&has))
        .then(|| format!("{why} simulated with the {has} profile {name}: the {what} are {has}'s, not {wants}'s — {fix}"))
}

/// A config's `settings` the database model reads; another name is a
/// mistake (refused with the nearest), not a silent no-op.
fn check_settings(file: &str, dep: &storlab_model::Deployment) -> Result<(), SimError> {
    for (name, s) in &dep.settings {
        if s.from == "config" && !crate::writepath::SETTINGS.contains(&name.as_str()) {
            let near = storlab_model::error::nearest(name, crate::writepath::SETTINGS.iter().copied()).unwrap_or_else(|| crate::writepath::SETTINGS[0].to_string());
            return Err(SimError::Override {
                file: file.to_string(),
                what: format!("configs.{}.settings.{name}", dep.name),
                message: format!("the database model reads {} — nearest valid value '{near}'", crate::writepath::SETTINGS.join(", ")),
            });
        }
        if s.from == "config" {
            if let Err(message) = crate::writepath::check_value(name, &s.value) {
                return Err(SimError::Override { file: file.to_string(), what: format!("configs.{}.settings.{name}", dep.name), message });
            }
        }
    }
    Ok(())
}

/// Checks one config for a database workload of `profile` (a data pool,
/// settings the model reads); returns what the record says of it.
pub(crate) fn check_config(file: &str, dep: &Deployment, profile: &storlab_workload::profile::Profile) -> Result<Vec<String>, SimError> {
    let mut notes = check_roles(file, dep)?;
    notes.extend(dep.warnings.iter().map(|w| format!("config {}: {w}", dep.name)));
    if let Some(w) = engine_mismatch(dep, profile) {
        notes.push(format!("config {}: {w}", dep.name));
    }
    check_settings(file, dep)?;
    Ok(notes)
}

/// The workload's sweep, as `bench db` runs it too.
fn sweep_of(db: &Database) -> Sweep {
    match &db.vus {
        Vus::List(v) => Sweep::listed(v.clone()),
        Vus::Auto { max } => Sweep::auto(*max),
    }
}

/// The runs a sweep expects (an automatic sweep usually stops well
/// before its last step).
fn runs_expected(sweep: &Sweep) -> usize {
    if sweep.is_auto() {
        sweep.steps().len().min(12)
    } else {
        sweep.steps().len()
    }
}

/// What every run of the workload assumes, whatever the config.
fn workload_assumptions(db: &Database) -> Vec<String> {
    let mut assumptions = Vec::new();
    let dirties = db.profile.writeback.is_some() || db.profile.transactions.iter().any(|t| t.pages_dirtied > 0.0);
    if let Some(delay) = db.writeback_delay_s.filter(|&d| d > 0.0) {
        if dirties {
            let window = if delay > db.rampup_s { format!("; the window's first {:.0} s write none", (delay - db.rampup_s).min(db.duration_s)) } else { String::new() };
            assumptions.push(format!("writeback_delay_s: no data write-back before {delay:.0} s, as on a freshly started server (Linux writes a dirty page back once it is 30 s old){window}"));
        }
    }
    assumptions.push(if db.cold_cache {
        "cold_cache: the database's cache (and a host read cache) start empty, as after a restart, and fill one page a miss; while filling, a cache holding a share of the data misses as the profile's curve at that share (every access below its first point: from 1 at empty); each result's cache_full_s says when the database cache was full. Dirtied pages and write-back are the steady state's".to_string()
    } else {
        "the caches are warm from the start, as HammerDB and sysbench measure after their ramp-up: misses at the steady state's ratio (cold_cache = true fills them from empty)".to_string()
    });
    match &db.profile.writeback {
        Some(w) => assumptions.push(format!(
            "data write-back, by the recording's checkpoint settings where a config's I/O rules do not say otherwise: a checkpoint every {:.0} s or once {:.0} MB of WAL is written, whichever is first, writing the distinct pages dirtied since the last in runs of contiguous pages of up to {:.0} KiB, from the profile's write-back curve",
            w.checkpoint_timeout_s,
            w.max_wal_bytes / (1.0 + w.completion_target) / 1e6,
            w.flush_after_bytes / 1024.0
        )),
        None if dirties => assumptions.push("data write-back: the profile has no write-back curve, so every page a transaction dirties is written as a page of its own (record the profile again for its curve)".into()),
        None => {}
    }
    assumptions
}

/// How the host's cores change the CPU per transaction: the profile's
/// contention term, or that it has none.
fn core_assumption(p: &storlab_workload::profile::Profile) -> String {
    let c = &p.concurrency;
    let src = if c.core_contention_source.is_empty() { "the profile's".to_string() } else { c.core_contention_source.clone() };
    match p.recording_vcpus() {
        Some(rec) if c.core_contention > 0.0 || c.core_contention_beyond > 0.0 => format!(
            "CPU per transaction grows with the backends running at once (the users in a transaction, at most the host's vCPUs) as f(p) = 1 + {:.4}·(min(p, 2) − 1) + {:.4}·(p − 2) ({src}); the penalty above holds the recording machine's {rec} vCPUs, so a host runs each transaction at f(min(users, its vCPUs)) / f(min(users, {rec})) of it",
            c.core_contention, c.core_contention_beyond
        ),
        _ if c.core_contention_source.is_empty() => "CPU per transaction taken as independent of the host's cores: the profile has no core contention term (concurrency.core_contention, measured by bench/core_contention.py), so a many-core host runs each transaction at the recording machine's CPU".to_string(),
        _ => format!("CPU per transaction taken as independent of the host's cores: the profile's core contention term is 0 ({src})"),
    }
}

/// The concurrency penalty and tipping-point rules, said after the
/// configs' write paths.
fn sweep_assumptions(db: &Database, metric: &str) -> Vec<String> {
    let mut assumptions = Vec::new();
    let c = &db.profile.concurrency;
    if db.usl.is_none() && !c.penalty.is_empty() {
        let cpus = db.profile.provenance.get("machine").and_then(|m| m.get("cpus")).and_then(|v| v.as_integer().map(|i| i as f64).or_else(|| v.as_float())).map(|n| format!(" ({n} vCPUs)")).unwrap_or_default();
        let pts: Vec<String> = c.vus.iter().zip(&c.penalty).map(|(n, m)| format!("×{m:.2} at {n}")).collect();
        assumptions.push(format!(
            "concurrency penalty as recorded on the profile's machine{cpus}: CPU per transaction {} users, held past the last count; it carries that machine's scheduler and lock hand-overs to every host",
            pts.join(", ")
        ));
    }
    if db.usl.is_none() {
        assumptions.push(core_assumption(&db.profile));
    }
    assumptions.push(format!(
        "tipping point: the fewest virtual users whose {} reaches 95 % of the sweep's highest; each count is simulated once, and the recording machine's run-to-run spread is not carried to the host",
        metric_label(db, metric)
    ));
    assumptions
}

/// One config's service times and monthly cost, with what the record
/// says of its cache, CPU speed and credits.
struct Prep {
    lats: Vec<crate::engine::Latencies>,
    monthly: Option<f64>,
    /// The database cache InnoDB's buffer pool sets, bytes, and whence.
    pool: Option<(f64, String)>,
}

/// What the record notes of a config's run.
#[derive(Default)]
struct Notes {
    unverified: Vec<String>,
    warnings: Vec<String>,
    assumptions: Vec<String>,
    speeds: serde_json::Map<String, serde_json::Value>,
}

fn prepare_config(cat: &Catalog, dep: &Deployment, db: &Database, notes: &mut Notes) -> Result<Prep, SimError> {
    let db_memory = db.db_memory_gib.map(|g| g * (1u64 << 30) as f64);
    // InnoDB caches in its buffer pool alone (O_DIRECT): a config's
    // innodb_buffer_pool_size is its cache, before the workload's
    // db_memory_gib and the host's share.
    let pool = crate::writepath::buffer_pool_bytes(dep, &db.profile);
    notes.unverified.extend(dep.host.unverified.iter().cloned());
    for p in &dep.pools {
        notes.unverified.extend(p.device.unverified.iter().cloned());
    }
    let lats = dep.pools.iter().map(|p| crate::latencies(cat, dep, p, &mut notes.unverified)).collect::<Result<Vec<_>, _>>()?;
    let cost = monthly_cost(cat, dep);
    let monthly = cost.complete.then_some(cost.monthly_cost_usd);
    if !cost.complete {
        let missing: Vec<&str> = cost.breakdown.iter().filter(|i| i.usd.is_none()).map(|i| i.item.as_str()).collect();
        notes.warnings.push(format!("config {}: no monthly cost and no $ per 1,000 TPM — {}", dep.name, missing.join("; ")));
    }
    let speed = crate::db::cpu_speed_ratio(dep, &db.profile);
    let memory_gib = dep.host.memory_gib.unwrap_or(0.0);
    let cache_bytes = pool.as_ref().map(|p| p.0).or(db_memory).unwrap_or(memory_gib * (1u64 << 30) as f64 * DB_MEMORY_SHARE);
    let data_bytes = db.profile.data_bytes(db.scale);
    let miss = db.profile.mrc.miss_ratio_at(cache_bytes / data_bytes.max(1.0));
    let data_pool = crate::db::pool_for(dep, storlab_model::scenario::Role::Data, 0);
    let host_hit = crate::db::host_cache_hit(dep, data_pool, &db.profile, cache_bytes, data_bytes.max(1.0));
    if dep.pools[data_pool].host_cache != storlab_model::scenario::HostCacheMode::None {
        notes.assumptions.push(format!(
            "config {}: the {} pool's host read cache ({}) sees the database cache's misses and keeps what it read; as an inclusive two-level LRU (Wong and Wilkes, USENIX ATC 2002) the two miss about as the larger alone, so it serves {:.0} % of the data reads, and the rest go to the disks",
            dep.name,
            dep.pools[data_pool].role.name(),
            dep.host.cache_gib.map_or("no published size: taken to hold the data".to_string(), |g| format!("{g} GiB")),
            100.0 * host_hit
        ));
    }
    let gib = |b: f64| b / (1u64 << 30) as f64;
    notes.assumptions.push(format!(
        "config {}: database cache {:.1} GiB ({}) for {:.1} GiB of data at scale {}{}: {:.2} of the data cached, miss ratio {:.4}; {}",
        dep.name,
        gib(cache_bytes),
        if let Some((_, from)) = &pool { format!("innodb_buffer_pool_size, {from}") } else if db.db_memory_gib.is_some() { "db_memory_gib".to_string() } else { format!("{:.0} % of {memory_gib} GiB host memory", DB_MEMORY_SHARE * 100.0) },
        gib(data_bytes),
        db.scale,
        // A workload file's scale is a plain number: "scale 16", not "16 scales".
        if db.profile.scale_unit == "scale" { String::new() } else { format!(" {}s", db.profile.scale_unit) },
        (cache_bytes / data_bytes.max(1.0)).min(1.0),
        miss,
        match speed {
            Some(r) => format!("host CPU speed {r:.2} × the recording machine's ({} over the profile's machine, {})", dep.host.short(), dep.host.cpu_speed_basis.as_deref().unwrap_or("")),
            None => "host CPU speed unknown: the recording machine's CPU per transaction, unscaled".to_string(),
        },
    ));
    if let Some(c) = &dep.host.cpu_credits {
        use storlab_model::deployment::CreditMode;
        let start = dep.buckets_at_start_pct.map_or("full (a day's earnings, as after a day below the baseline)".to_string(), |p| format!("{p}% full"));
        notes.assumptions.push(format!(
            "config {}: {} earns {} CPU credits an hour ({:.0} % of each of its vCPUs, {}); cpu_credits = \"{}\": {}",
            dep.name,
            dep.host.short(),
            c.earned_per_hour,
            100.0 * c.baseline,
            c.src,
            c.mode.name(),
            match c.mode {
                CreditMode::Unlimited => "never slowed; the vCPU time above the baseline at each step is billed at the surplus rate, in that step's monthly cost".to_string(),
                CreditMode::Standard => format!("the balance starts {start} and, once spent, each vCPU runs at the baseline (series CPUCreditBalance)"),
            }
        ));
    }
    notes.speeds.insert(dep.name.clone(), serde_json::json!(speed.map(|r| round(r, 4))));
    if speed.is_none() {
        let (host, own) = (dep.host.cpu_speed_basis.as_deref(), profile_speed_basis(&db.profile));
        let why = match (host, own) {
            (None, _) => format!("the catalog has no CPU speed figure for {}", dep.host.id),
            (Some(_), None) => "the profile records no CPU speed figure for its machine".to_string(),
            (Some(h), Some(p)) => format!("{} gives its speed as {h}, the profile's machine as {p}", dep.host.id),
        };
        notes.warnings.push(format!("config {}: CPU speed not scaled — {why}; each transaction takes the recording machine's CPU time, which is off by the ratio of the two processors' per-core speeds", dep.name));
    }
    Ok(Prep { lats, monthly, pool })
}

/// One step of a sweep as it ran: its VU count, its first seed's run, and
/// each repeat's figures.
type StepRun = (u32, DbResult, Vec<Figures>);

/// A run unit: a config's sweep, one count at a time for a listed sweep,
/// all of it (each next step depending on the last) for an automatic one.
type Unit = (usize, Sweep);

/// The runs: each VU count of each config on its own, or each config's
/// automatic sweep, spread over `threads` cores; each run has its own seed,
/// so the record is the same for any thread count. A unit's entry is None
/// where the work stopped before it ran.
fn run_sweep(sc: &Scenario, db: &Database, preps: &[Prep], units: &[Unit], repeats: u32, threads: usize, progress: &mut dyn FnMut(f64) -> bool) -> (Vec<Option<Vec<StepRun>>>, bool) {
    let run_s = db.rampup_s + db.duration_s;
    let n_planned = runs_expected(&sweep_of(db)) as f64;
    let planned = (sc.deps.len() as f64 * n_planned * run_s * f64::from(repeats)).max(1e-9);
    let metric = metric_of(db);
    let db_memory = db.db_memory_gib.map(|g| g * (1u64 << 30) as f64);
    let params = |ci: usize, vus: u32| {
        let mut p = db_params(db, ci, vus, preps[ci].pool.as_ref().map(|p| p.0).or(db_memory));
        p.period_s = sc.period_s;
        p.steady = db.steady_state;
        p
    };
    let stop = std::sync::atomic::AtomicBool::new(false);
    let done: Vec<std::sync::atomic::AtomicU64> = units.iter().map(|_| std::sync::atomic::AtomicU64::new(0)).collect();
    // `--repeats N`: each step N times, the first with the step's own seed
    // (one repeat gives the record of none), the others with seeds of their own.
    let run_unit = |ui: usize| -> Vec<StepRun> {
        let (ci, planned) = &units[ui];
        let mut sweep = planned.clone();
        let (dep, lats) = (&sc.deps[*ci], &preps[*ci].lats);
        let mut out: Vec<StepRun> = Vec::new();
        for (si, &vus) in planned.steps().iter().enumerate() {
            let mut first: Option<DbResult> = None;
            let mut each = Vec::new();
            for k in 0..repeats {
                let base = (si as f64 * f64::from(repeats) + f64::from(k)) * run_s;
                let mut p = params(*ci, vus);
                p.seed ^= u64::from(k).wrapping_mul(0xD1B5_4A32_D192_ED03);
                let r = run_db_with(dep, &db.profile, &p, lats, &mut |t| {
                    done[ui].store((base + t).to_bits(), Ordering::Relaxed);
                    !stop.load(Ordering::Relaxed)
                });
                done[ui].store((base + run_s).to_bits(), Ordering::Relaxed);
                let interrupted = r.interrupted;
                // A repeat cut short is no repeat.
                if k == 0 || !interrupted {
                    each.push(Figures { nopm: r.nopm, tpm: r.tpm, rows_per_min: rows_per_min(&r, db) });
                }
                if k == 0 {
                    first = Some(r);
                }
                if interrupted {
                    break;
                }
            }
            let r = first.expect("a step runs at least once");
            let mean = |f: &dyn Fn(&Figures) -> f64| each.iter().map(f).sum::<f64>() / each.len() as f64;
            let done = sweep.record(match metric {
                "nopm" => mean(&|f| f.nopm),
                "rows_per_min" => mean(&|f| f.rows_per_min),
                "headline" => mean(&|f| f.tpm) * headline_per_tpm(db),
                _ => mean(&|f| f.tpm),
            });
            let interrupted = r.interrupted || stop.load(Ordering::Relaxed);
            out.push((vus, r, each));
            if interrupted || done {
                break;
            }
        }
        out
    };
    let threads = threads.clamp(1, units.len().max(1));
    let mut results: Vec<Option<Vec<StepRun>>> = (0..units.len()).map(|_| None).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let n_units = units.len();
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Vec<StepRun>)>();
        for _ in 0..threads {
            let tx = tx.clone();
            let (next, run_unit) = (&next, &run_unit);
            scope.spawn(move || loop {
                let ui = next.fetch_add(1, Ordering::Relaxed);
                if ui >= n_units {
                    break;
                }
                // A panic in one run ends the work; the others see the stop.
                let _ = tx.send((ui, run_unit(ui)));
            });
        }
        drop(tx);
        let mut received = 0;
        while received < n_units {
            match rx.recv_timeout(std::time::Duration::from_millis(50)) {
                Ok((ui, out)) => {
                    results[ui] = Some(out);
                    received += 1;
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            }
            let t: f64 = done.iter().map(|d| f64::from_bits(d.load(Ordering::Relaxed))).sum();
            if !progress((t / planned).min(1.0)) {
                stop.store(true, Ordering::Relaxed);
            }
        }
    });
    (results, stop.load(Ordering::Relaxed))
}

/// Simulates the database workload `db` of `sc` on every config and
/// returns the run record. `progress` gets the fraction done and returns
/// false to stop; the record then keeps every finished step and the one
/// cut short.
pub(crate) fn run_database(cat: &Catalog, sc: &Scenario, db: &Database, overrides: &crate::Overrides, progress: &mut dyn FnMut(f64) -> bool) -> Result<RunRecord, SimError> {
    let deps = &sc.deps;
    let metric = metric_of(db);
    let mut notes = Notes { assumptions: workload_assumptions(db), ..Notes::default() };
    for dep in deps {
        if let Some(wp) = crate::writepath::WritePath::resolve(dep, &db.profile) {
            notes.assumptions.push(format!("config {}: {}", dep.name, wp.words));
        }
        if let Some(words) = crate::iorules::Rules::resolve(dep, &db.profile).words(&db.profile) {
            notes.assumptions.push(format!("config {}: {words}", dep.name));
        }
    }
    notes.assumptions.extend(sweep_assumptions(db, metric));
    let preps = deps.iter().map(|dep| prepare_config(cat, dep, db, &mut notes)).collect::<Result<Vec<_>, _>>()?;
    let sweep = sweep_of(db);
    let units: Vec<Unit> = if sweep.is_auto() {
        (0..deps.len()).map(|ci| (ci, sweep.clone())).collect()
    } else {
        (0..deps.len()).flat_map(|ci| sweep.steps().iter().map(move |&v| (ci, Sweep::listed(vec![v])))).collect()
    };
    let repeats = overrides.repeats.unwrap_or(1).max(1);
    let threads = overrides.sim_threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let (results, stopped) = run_sweep(sc, db, &preps, &units, repeats, threads, progress);
    let mut rec = sc.record(&db.profile.name, db.seed);
    let (simulated_s, simulated_ios) = assemble(&mut rec, sc, db, &preps, &units, results, stopped);
    notes.unverified.sort();
    notes.unverified.dedup();
    rec.unverified = notes.unverified;
    rec.warnings.splice(0..0, sc.warnings.iter().cloned().chain(notes.warnings));
    rec.inputs = Some(db_inputs(db, metric, notes.speeds, notes.assumptions, deps));
    rec.extra = Some(RecordExtra::Sim(SimRun { period_s: sc.period_s, simulated_s: round(simulated_s, 6), simulated_ios }));
    Ok(rec)
}

/// The record's results, tipping points and warnings, in config and VU
/// order; an interrupted run ends it. Returns the simulated seconds and
/// events.
fn assemble(rec: &mut RunRecord, sc: &Scenario, db: &Database, preps: &[Prep], units: &[Unit], results: Vec<Option<Vec<StepRun>>>, stopped: bool) -> (f64, u64) {
    let metric = metric_of(db);
    let run_s = db.rampup_s + db.duration_s;
    let (mut simulated_s, mut simulated_ios) = (0.0, 0u64);
    let mut unit_results = units.iter().zip(results).peekable();
    'configs: for (ci, dep) in sc.deps.iter().enumerate() {
        let monthly = preps[ci].monthly;
        let mut steps: Vec<SweepStep> = Vec::new();
        let mut sweep = sweep_of(db);
        let mut ran_all = false;
        while let Some(((_, planned), out)) = unit_results.next_if(|((uci, _), _)| *uci == ci) {
            let out = out.unwrap_or_default();
            ran_all = out.len() == planned.steps().len();
            for (vus, r, each) in out {
                simulated_s += if r.interrupted || r.steady_at_s.is_some() { db.rampup_s + r.window_s } else { run_s } * each.len() as f64;
                if let Some(w) = r.steady_at_s {
                    rec.warnings.push(format!("config {} at {vus} VUs: throughput steady (its mean known within {:.0} %) after {w:.0} s of the {:.0} s window; the figures are of those {w:.0} s", dep.name, crate::db::STEADY_HALF_WIDTH * 100.0, db.duration_s));
                }
                simulated_ios += r.events;
                let spread = Spread::of(&each);
                let (value, sd) = match metric {
                    "nopm" => spread.nopm,
                    "rows_per_min" => spread.rows_per_min,
                    "headline" => (spread.tpm.0 * headline_per_tpm(db), spread.tpm.1 * headline_per_tpm(db)),
                    _ => spread.tpm,
                };
                sweep.record(value);
                let mut figures = BTreeMap::from([(metric.to_string(), round(value, 1))]);
                if each.len() > 1 {
                    figures.insert(format!("{metric}_stdev"), round(sd, 1));
                }
                steps.push(SweepStep { vus, repeats: each.len() as u32, metric: metric.to_string(), figures });
                let interrupted = r.interrupted;
                if interrupted {
                    rec.warnings.push(format!("config {} at {vus} VUs: stopped after {:.0} s of the {:.0} s window", dep.name, r.window_s.max(0.0), db.duration_s));
                }
                push_result(rec, dep, db, r, monthly, (each.len() > 1).then_some(&spread));
                if interrupted {
                    rec.interrupted = true;
                    rec.tipping_point.extend(tipping_point_named(&dep.name, &steps, metric, &metric_label(db, metric)));
                    break 'configs;
                }
            }
        }
        if stopped && steps.is_empty() {
            rec.interrupted = true;
            break;
        }
        if sweep.is_auto() && ran_all && !sweep.passed_tipping_point() {
            if let Some(&vus) = sweep.steps().last() {
                rec.warnings.push(format!("config {}: the automatic sweep reached max_vus = {vus} before the tipping point", dep.name));
            }
        }
        rec.tipping_point.extend(tipping_point_named(&dep.name, &steps, metric, &metric_label(db, metric)));
    }
    (simulated_s, simulated_ios)
}

/// The record's inputs: the workload as it ran, the model's assumptions,
/// and the rules of the day where the scenario has one.
fn db_inputs(db: &Database, metric: &str, speeds: serde_json::Map<String, serde_json::Value>, assumptions: Vec<String>, deps: &[Deployment]) -> storlab_record::Object {
    let mut inputs = storlab_record::Object::new();
    let vus_json = match &db.vus {
        Vus::List(v) => serde_json::json!(v),
        Vus::Auto { max } => serde_json::json!({"auto": true, "max_vus": max}),
    };
    for (k, v) in [
        ("profile", serde_json::json!(db.profile_ref)),
        ("profile_file", serde_json::json!(db.profile_file.display().to_string())),
        ("profile_provenance", serde_json::to_value(&db.profile.provenance).unwrap_or_default()),
        ("scale", serde_json::json!(db.scale)),
        ("scale_unit", serde_json::json!(db.profile.scale_unit)),
        ("vus", vus_json),
        ("rampup_s", serde_json::json!(db.rampup_s)),
        ("duration_s", serde_json::json!(db.duration_s)),
        ("db_memory_gib", serde_json::json!(db.db_memory_gib)),
        ("think_time_ms", serde_json::json!(db.think_time_ms)),
        ("writeback_delay_s", serde_json::json!(db.writeback_delay_s.unwrap_or(WRITEBACK_DELAY_S))),
        ("usl", serde_json::json!(db.usl.map(|(a, b)| serde_json::json!({"alpha": a, "beta": b, "source": "scenario"})).unwrap_or_else(|| {
            let c = &db.profile.concurrency;
            if c.penalty.is_empty() {
                serde_json::json!({"alpha": c.alpha, "beta": c.beta, "source": "profile"})
            } else {
                serde_json::json!({"vus": c.vus, "penalty": c.penalty, "source": "profile"})
            }
        }))),
        ("metric", serde_json::json!(metric)),
        ("cpu_speed_ratio", serde_json::Value::Object(speeds)),
        ("assumptions", serde_json::json!(assumptions)),
    ] {
        inputs.insert(k.to_string(), v);
    }
    if let Some((date, rules)) = crate::rules_applied(deps) {
        inputs.insert("as_of".into(), serde_json::json!(date));
        inputs.insert("rules_applied".into(), rules);
        inputs.insert("prices".into(), serde_json::json!("today's catalog prices, not those of the as_of date"));
    }
    inputs
}

/// The basis of the profile machine's CPU speed figure, where it has one.
/// The model's parameters for `vus` users of the workload on the `ci`th
/// config, whose database cache is `db_memory_bytes` (None: the host's
/// share); each config and count has a seed of its own.
pub fn db_params(db: &Database, ci: usize, vus: u32, db_memory_bytes: Option<f64>) -> DbParams {
    DbParams {
        scale: db.scale,
        vus,
        rampup_s: db.rampup_s,
        duration_s: db.duration_s,
        seed: db.seed ^ ((ci as u64) << 32) ^ u64::from(vus).wrapping_mul(0x9E37_79B9),
        db_memory_bytes,
        period_s: db.period_s,
        think_time_s: db.think_time_ms / 1e3,
        usl: db.usl,
        random_homes: db.random_homes,
        writeback_delay_s: db.writeback_delay_s.unwrap_or(WRITEBACK_DELAY_S),
        steady: db.steady_state,
        cold_cache: db.cold_cache,
    }
}

/// The bounds of the recorder's penalty fit: a multiplier the model needs
/// outside them is held at the bound.
pub const PENALTY_RANGE: (f64, f64) = (0.25, 8.0);
/// How close the model's throughput must come to the recorded one.
pub const PENALTY_TOLERANCE: f64 = 0.005;

/// The concurrency penalty a recording fits: at each recorded count N, the
/// CPU-demand multiplier with which the model reproduces the recorded
/// transactions per second X(N), within `PENALTY_TOLERANCE`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PenaltyFit {
    pub vus: Vec<u32>,
    pub penalty: Vec<f64>,
    /// The counts held at a bound of `PENALTY_RANGE`.
    pub clipped: Vec<u32>,
    pub bounds: [f64; 2],
    pub tolerance: f64,
}

/// Fits the penalty of the scenario's profile (its `[workload.database]`)
/// on its first config, the recording machine, to `throughput` (X(N) at the
/// profile's recorded counts), by geometric bisection per count: the same
/// model runs as `simulate`, with every count's multiplier set to the one
/// tried.
pub fn fit_penalty(cat: &Catalog, file: &str, text: &str, dir: &Path, profiles_dir: &Path, throughput: &[f64]) -> Result<PenaltyFit, SimError> {
    let sc = ScenarioFile::from_toml(file, text)?;
    let deps = resolve_all(cat, file, &sc)?;
    let empty = toml::Table::new();
    let mut db = storlab_workload::database::from_table(file, dir, profiles_dir, sc.workload.as_ref().unwrap_or(&empty))?;
    let Some(dep) = deps.first() else { return Err(SimError::Override { file: file.into(), what: "configs".into(), message: "no config to fit the penalty on".into() }) };
    let mut unverified = Vec::new();
    let lats = dep.pools.iter().map(|pool| crate::latencies(cat, dep, pool, &mut unverified)).collect::<Result<Vec<_>, _>>()?;
    let memory = crate::writepath::buffer_pool_bytes(dep, &db.profile).map(|p| p.0).or(db.db_memory_gib.map(|g| g * (1u64 << 30) as f64));
    let vus: Vec<u32> = db.profile.concurrency.vus.iter().map(|&v| v.round() as u32).collect();
    let mut model = |n: u32, mult: f64| -> f64 {
        db.profile.concurrency.penalty = vec![mult; vus.len()];
        run_db(dep, &db.profile, &db_params(&db, 0, n, memory), &lats).tpm / 60.0
    };
    let (lo0, hi0) = PENALTY_RANGE;
    let (mut penalty, mut clipped) = (Vec::new(), Vec::new());
    for (&n, &x) in vus.iter().zip(throughput) {
        if !(x > 0.0) {
            penalty.push(1.0);
            continue;
        }
        if model(n, lo0) < x {
            penalty.push(lo0);
            clipped.push(n);
            continue;
        }
        if model(n, hi0) > x {
            penalty.push(hi0);
            clipped.push(n);
            continue;
        }
        let (mut lo, mut hi, mut mid) = (lo0, hi0, lo0);
        for _ in 0..40 {
            mid = (lo * hi).sqrt();
            let got = model(n, mid);
            if (got / x - 1.0).abs() <= PENALTY_TOLERANCE {
                break;
            }
            if got > x {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        penalty.push((mid * 1e4).round() / 1e4);
    }
    Ok(PenaltyFit { vus, penalty, clipped, bounds: [lo0, hi0], tolerance: PENALTY_TOLERANCE })
}

fn profile_speed_basis(p: &storlab_workload::profile::Profile) -> Option<&str> {
    p.provenance.get("machine")?.as_table()?.get("cpu_speed_basis")?.as_str()
}

/// Each pool's use in the record's columns (rounded as the tables print).
/// An unlimited burstable host's surplus CPU credits over a month of the
/// step's load (730 h, as the monthly cost counts hours): the vCPU time
/// above the baseline, billed at the flat surplus rate ("If the average CPU
/// usage over a 24-hour period exceeds the baseline, the instance is billed
/// for the additional usage at a flat additional rate per vCPU-hour", EC2
/// user guide, burstable-credits-baseline-concepts). `None` where the host
/// earns no credits or runs standard; `Some((None, why))` where the rate is
/// not known, so the month has no price.
pub fn surplus_credits_month(dep: &Deployment, cpu_utilization: f64) -> Option<(Option<f64>, String)> {
    use storlab_model::deployment::CreditMode;
    let c = dep.host.cpu_credits.as_ref().filter(|c| c.mode == CreditMode::Unlimited)?;
    let vcpus = dep.host.vcpus.unwrap_or(1.0);
    let over = ((cpu_utilization - c.baseline) * vcpus).max(0.0);
    if over <= 0.0 {
        return Some((Some(0.0), format!("unlimited, {:.0} % of each vCPU used, within the {:.0} % baseline: no surplus", 100.0 * cpu_utilization, 100.0 * c.baseline)));
    }
    if dep.license != "linux" {
        return Some((None, format!("unlimited, {over:.2} vCPUs above the {:.0} % baseline; the surplus rate is known for Linux only", 100.0 * c.baseline)));
    }
    let rate = c.surplus_usd_per_vcpu_hour?;
    let usd = over * storlab_model::cost::HOURS_PER_MONTH * rate;
    Some((Some(usd), format!(
        "unlimited, {:.0} % of each vCPU used against a {:.0} % baseline: {over:.2} vCPUs of surplus × {} h × ${rate} a vCPU-hour = ${usd:.2} a month, in the monthly cost",
        100.0 * cpu_utilization,
        100.0 * c.baseline,
        storlab_model::cost::HOURS_PER_MONTH
    )))
}

fn pool_use(pools: &[crate::db::DbPoolResult]) -> BTreeMap<String, PoolUse> {
    pools
        .iter()
        .map(|p| {
            let u = PoolUse {
                read_iops: round(p.read_iops, 1),
                write_iops: round(p.write_iops, 1),
                read_bytes_s: round(p.read_bytes_s, 0),
                write_bytes_s: round(p.write_bytes_s, 0),
                utilization: round(p.utilization, 4),
            };
            (p.role.clone(), u)
        })
        .collect()
}

/// Where a transaction's time went in the model, µs per transaction (the
/// record's `time_us`; 0.1 µs).
fn time_us(r: &DbResult) -> BTreeMap<String, f64> {
    [
        ("cpu", r.time_cpu_s),
        ("cpu_queue", r.time_cpu_queue_s),
        ("row_locks", r.time_locks_s),
        ("data_reads", r.time_reads_s),
        ("commit", r.time_commit_s),
        ("outside", r.time_outside_s),
        ("think", r.time_think_s),
    ]
    .into_iter()
    .map(|(k, s)| (k.to_string(), round(s * 1e6, 1)))
    .collect()
}

/// The sweep's headline figure of one result.
fn rows_per_min(r: &DbResult, db: &Database) -> f64 {
    r.txn.iter().zip(&db.profile.transactions).map(|(t, p)| t.count as f64 * p.rows_per_txn.unwrap_or(0.0)).sum::<f64>() * 60.0 / r.window_s
}

/// One (config, VU count) result in `bench db`'s columns.
/// One seed's headline figures.
#[derive(Debug, Clone, Copy)]
struct Figures {
    nopm: f64,
    tpm: f64,
    rows_per_min: f64,
}

/// The mean and sample standard deviation of each headline figure over
/// the repeats with other seeds (`--repeats`): the model's own
/// seed-to-seed spread.
struct Spread {
    repeats: u32,
    nopm: (f64, f64),
    tpm: (f64, f64),
    rows_per_min: (f64, f64),
}

impl Spread {
    fn of(each: &[Figures]) -> Spread {
        let stat = |f: &dyn Fn(&Figures) -> f64| {
            let n = each.len() as f64;
            let mean = each.iter().map(f).sum::<f64>() / n;
            let var = if each.len() > 1 { each.iter().map(|x| (f(x) - mean).powi(2)).sum::<f64>() / (n - 1.0) } else { 0.0 };
            (mean, var.sqrt())
        };
        Spread { repeats: each.len() as u32, nopm: stat(&|f| f.nopm), tpm: stat(&|f| f.tpm), rows_per_min: stat(&|f| f.rows_per_min) }
    }
}

/// When `target` rows are in, s from the start of the run: each stretch
/// `(ends_at_s, rows a second)` in turn from 0, the last held past its end
/// (the rate the run settled at); None where that rate is 0 and the rows
/// are not in by then.
pub fn finish_time(target: f64, stretches: &[(f64, f64)]) -> Option<f64> {
    let (mut t, mut done) = (0.0f64, 0.0f64);
    for (i, &(end, rate)) in stretches.iter().enumerate() {
        let last = i + 1 == stretches.len();
        let span = if last { f64::INFINITY } else { (end - t).max(0.0) };
        if rate > 0.0 && done + rate * span >= target {
            return Some(t + (target - done) / rate);
        }
        if last {
            return None;
        }
        done += rate * span;
        t = end;
    }
    None
}

fn push_result(rec: &mut RunRecord, dep: &Deployment, db: &Database, r: DbResult, monthly: Option<f64>, seeds: Option<&Spread>) {
    let w = r.window_s;
    let insert = db.profile.transactions.iter().any(|t| t.rows_per_txn.is_some());
    let stats = |count: u64, latency: storlab_record::LatencySummary, p: &storlab_workload::profile::TxnProfile, w: f64| {
        let rollbacks = (count as f64 * p.rollback_share).round() as u64;
        TxnStats {
            latency,
            commits: count - rollbacks.min(count),
            rollbacks: rollbacks.min(count),
            errors: 0,
            per_min: round(count as f64 * 60.0 / w, 1),
            rows: p.rows_per_txn.map(|rows| (rows * count as f64).round() as u64),
        }
    };
    let txn: BTreeMap<String, TxnStats> =
        r.txn.iter().zip(&db.profile.transactions).map(|(t, p)| (t.name.clone(), stats(t.count, t.latency, p, w))).collect();
    // Before and after each bucket emptied: one seed's run (the first with
    // `--repeats`), in the same columns.
    let phases: Vec<storlab_record::Phase> = r
        .phases
        .iter()
        .map(|ph| {
            let pw = (ph.to_s - ph.from_s).max(1e-9);
            let total: u64 = ph.counts.iter().sum();
            let tpm = total as f64 * 60.0 / pw;
            let rows: f64 = ph.counts.iter().zip(&db.profile.transactions).map(|(&c, p)| c as f64 * p.rows_per_txn.unwrap_or(0.0)).sum();
            storlab_record::Phase {
                from_s: round(ph.from_s, 3),
                to_s: round(ph.to_s, 3),
                emptied: ph.emptied.clone(),
                nopm: (db.profile.metric == "nopm").then(|| round(tpm * db.profile.nopm_per_txn, 1)),
                tpm: Some(round(tpm, 1)),
                rows_per_min: insert.then(|| round(rows * 60.0 / pw, 1)),
                txn: Some(
                    r.txn
                        .iter()
                        .zip(&db.profile.transactions)
                        .zip(ph.counts.iter().zip(&ph.hists))
                        .map(|((t, p), (&c, h))| (t.name.clone(), stats(c, h.summary().rounded(3), p, pw)))
                        .collect(),
                ),
                pools: Some(
                    dep.pools
                        .iter()
                        .zip(&ph.pool_ios)
                        .map(|(pool, c)| {
                            let io = storlab_record::PhaseIo {
                                read_iops: round(c.reads / pw, 1),
                                write_iops: round(c.writes / pw, 1),
                                read_bytes_s: round(c.read_bytes / pw, 0),
                                write_bytes_s: round(c.write_bytes / pw, 0),
                            };
                            (pool.role.name().to_string(), io)
                        })
                        .collect(),
                ),
                ..Default::default()
            }
        })
        .collect();
    let pools = pool_use(&r.pools);
    let used: Vec<&str> = r.pools.iter().filter(|p| p.read_iops + p.write_iops > 0.0).map(|p| p.role.as_str()).collect();
    // An unlimited burstable host bills the vCPU time above its baseline.
    let credits = surplus_credits_month(dep, r.cpu_utilization);
    let monthly = match (monthly, &credits) {
        (Some(m), Some((extra, _))) => {
            if extra.is_none() {
                rec.warnings.push(format!("config {} at {} VUs: no monthly cost — surplus CPU credits unpriced", dep.name, r.vus));
            }
            extra.map(|e| round(m + e, 2))
        }
        (m, _) => m,
    };
    // A prediction's spread is the model's own, from repeats with other
    // seeds (`--repeats`); never the recording machine's (its scheduler,
    // its neighbours are not the host's). One seed's run has none.
    let one = Spread::of(&[Figures { nopm: r.nopm, tpm: r.tpm, rows_per_min: rows_per_min(&r, db) }]);
    let s = seeds.unwrap_or(&one);
    let sd = |v: (f64, f64)| seeds.map(|_| round(v.1, 1));
    let tpm = round(s.tpm.0, 1);
    let rows: Option<u64> = insert.then(|| txn.values().filter_map(|t| t.rows).sum());
    let rows_target = db.rows_per_user.filter(|_| insert).map(|n| n * f64::from(r.vus));
    let finish_s = rows_target.and_then(|target| {
        let rates: Vec<(f64, f64)> = if phases.is_empty() {
            vec![(f64::INFINITY, s.rows_per_min.0 / 60.0)]
        } else {
            phases.iter().map(|p| (p.to_s, p.rows_per_min.unwrap_or(0.0) / 60.0)).collect()
        };
        finish_time(target, &rates).map(|t| round(t, 1))
    });
    let job = DbJob {
        vus: r.vus,
        repeats: s.repeats,
        nopm: (db.profile.metric == "nopm").then(|| round(s.nopm.0, 1)),
        tpm: Some(tpm),
        nopm_stdev: sd(s.nopm).filter(|_| db.profile.metric == "nopm"),
        headline: db.profile.headline_at(s.tpm.0).map(|h| round(h, 2)),
        headline_stdev: sd(s.tpm).and_then(|v| db.profile.headline_at(v)).map(|h| round(h, 2)),
        headline_name: db.profile.headline.as_ref().map(|h| h.name.clone()),
        tpm_stdev: sd(s.tpm),
        txn,
        rows,
        rows_per_min: insert.then(|| round(s.rows_per_min.0, 1)),
        rows_per_min_stdev: sd(s.rows_per_min).filter(|_| insert),
        rows_target: rows_target.map(|t| t.round() as u64),
        finish_s,
        cache_full_s: r.cache_full_s.map(|t| round(t, 1)),
        commits: insert.then(|| r.txn.iter().map(|t| t.count).sum()),
        cpu_utilization: Some(round(r.cpu_utilization, 4)),
        pools: Some(pools),
        time_us: Some(time_us(&r)),
        log_flush_us: (r.flushes > 0).then(|| round(r.flush_s * 1e6, 1)),
        commits_per_flush: (r.flushes > 0).then(|| round(r.commits_per_flush, 3)),
        monthly_cost_usd: monthly,
        usd_per_1000_tpm: monthly.filter(|_| tpm > 0.0).map(|m| round(m / (tpm / 1000.0), 4)),
        surplus_credits_usd_month: credits.as_ref().and_then(|c| c.0).map(|u| round(u, 2)),
        cpu_credits: credits.map(|c| c.1),
        ..DbJob::default()
    };
    // A bucket that ran out inside the window without a phase of its own
    // (at its very edge): the averages above mix the burst and the
    // baseline; the series show each.
    for sr in r.series.iter().filter(|sr| phases.is_empty() && (sr.metric == "BurstBalance" || sr.metric.ends_with("Balance%"))) {
        if let Some(i) = sr.values.iter().position(|&v| v <= 0.01) {
            rec.warnings.push(format!(
                "config {} at {} VUs: {} {} reached 0 in the period from {:.0} s — the figures above average the burst and the baseline; the series show each",
                dep.name, r.vus, sr.resource, sr.metric, i as f64 * sr.period_s
            ));
        }
    }
    let suffix = format!(" {} VUs", r.vus);
    rec.series.extend(r.series.into_iter().map(|mut s| {
        s.resource.push_str(&suffix);
        s
    }));
    rec.results.push(JobResult {
        config: dep.name.clone(),
        job: db.profile.workload.clone(),
        pool: used.join("+"),
        binding: r.binding,
        io: None,
        extra: Some(JobExtra::Db(job)),
        phases,
    });
}

/// `[workload.import]`: the load time of the input on every config, one
/// result per config with the I/O columns (`runtime_s` is the load time,
/// `bw_bytes_s` the input read per second) and the pools' use.
pub(crate) fn run_import_record(cat: &Catalog, sc: &Scenario, im: &storlab_workload::import::Import, progress: &mut dyn FnMut(f64) -> bool) -> Result<RunRecord, SimError> {
    use crate::import::{pools_of, run_import};
    let (deps, period) = (&sc.deps, sc.period_s);
    // The pools were checked when the scenario was.
    let plans: Vec<_> = deps.iter().filter_map(|dep| pools_of(dep, &im.input_pool).ok()).collect();
    let mut rec = sc.record(&im.profile.name, im.seed);
    let mut unverified = Vec::new();
    let (mut simulated_s, mut simulated_ios) = (0.0, 0u64);
    let n = deps.len() as f64;
    for (ci, (dep, pools)) in deps.iter().zip(plans).enumerate() {
        unverified.extend(dep.host.unverified.iter().cloned());
        for p in &dep.pools {
            unverified.extend(p.device.unverified.iter().cloned());
        }
        if let Some(w) = storlab_workload::profile::engine_of(&im.profile.provenance)
            .and_then(|e| mismatch(dep, e, &im.profile.name, "bytes written and CPU per input byte"))
        {
            rec.warnings.push(format!("config {}: {w}", dep.name));
        }
        if pools.2 == pools.1 && !has(dep, Role::Log) {
            rec.warnings.push(format!("config {}: no log pool — the WAL is written on the data pool", dep.name));
        }
        let lats = dep.pools.iter().map(|pool| crate::latencies(cat, dep, pool, &mut unverified)).collect::<Result<Vec<_>, _>>()?;
        let cost = monthly_cost(cat, dep);
        // The load time is not known in advance: progress counts configs, and
        // within one the simulated seconds against an hour.
        let r = run_import(dep, im, pools, &lats, period, &mut |t| progress(((ci as f64 + (t / 3600.0).min(0.99)) / n).min(1.0)));
        simulated_s += r.load_s;
        simulated_ios += r.events;
        let w = r.load_s;
        let used_pools = pool_use(&r.pools);
        let used: Vec<&str> = r.pools.iter().filter(|p| p.read_iops + p.write_iops > 0.0).map(|p| p.role.as_str()).collect();
        let suffix = " import";
        rec.series.extend(r.series.into_iter().map(|mut s| {
            s.resource.push_str(suffix);
            s
        }));
        rec.results.push(JobResult {
            config: dep.name.clone(),
            job: "import".into(),
            pool: used.join("+"),
            binding: r.binding,
            io: Some(storlab_record::IoColumns {
                iops: round(r.ios as f64 / w, 1),
                bw_bytes_s: round(r.input_bytes / w, 0),
                read_iops: round(r.read_ios as f64 / w, 1),
                write_iops: round((r.ios - r.read_ios) as f64 / w, 1),
                latency: r.chunk_latency,
                outstanding: u64::from(im.streams),
                runtime_s: round(w, 3),
            }),
            extra: Some(JobExtra::Db(DbJob {
                vus: im.streams,
                cpu_utilization: Some(round(r.cpu_utilization, 4)),
                pools: Some(used_pools),
                monthly_cost_usd: cost.complete.then_some(cost.monthly_cost_usd),
                ..DbJob::default()
            })),
            phases: Vec::new(),
        });
        if r.interrupted {
            rec.interrupted = true;
            break;
        }
    }
    unverified.sort();
    unverified.dedup();
    rec.unverified = unverified;
    let mut inputs = storlab_record::Object::new();
    for (k, v) in [
        ("profile", serde_json::json!(im.profile_ref)),
        ("profile_file", serde_json::json!(im.profile_file.display().to_string())),
        ("profile_provenance", serde_json::to_value(&im.profile.provenance).unwrap_or_default()),
        ("size_bytes", serde_json::json!(im.size_bytes)),
        ("streams", serde_json::json!(im.streams)),
        ("input_pool", serde_json::json!(im.input_pool)),
        ("per_input_byte", serde_json::json!({"wal_bytes": im.profile.per_input_byte.wal_bytes, "table_bytes": im.profile.per_input_byte.table_bytes, "index_bytes": im.profile.per_input_byte.index_bytes})),
        ("cpu_us_per_mib", serde_json::json!(im.profile.cpu_us_per_mib)),
        ("kind", serde_json::json!("import")),
    ] {
        inputs.insert(k.to_string(), v);
    }
    rec.inputs = Some(inputs);
    rec.extra = Some(RecordExtra::Sim(SimRun { period_s: period, simulated_s: round(simulated_s, 6), simulated_ios }));
    Ok(rec)
}
