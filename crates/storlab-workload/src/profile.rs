//! A recorded database workload profile (docs/profile.md, schema 1):
//! per transaction type its CPU, page accesses, dirtied pages, commits and
//! WAL bytes; a miss-ratio curve; a Universal Scalability Law fit. Written
//! by `storlab bench db --profile-out`, read by the simulator's database
//! model. A profile of another schema version is refused.

use serde::Deserialize;
use std::collections::BTreeMap;

pub const PROFILE_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Profile {
    pub schema_version: u32,
    pub kind: String,
    pub name: String,
    pub workload: String,
    pub scale_unit: String,
    /// `nopm` (TPC-C New-Orders per minute) or `tpm`.
    pub metric: String,
    /// Share of transactions that count toward NOPM.
    #[serde(default)]
    pub nopm_per_txn: f64,
    #[serde(default)]
    pub provenance: BTreeMap<String, toml::Value>,
    pub data: DataSize,
    #[serde(rename = "transaction")]
    pub transactions: Vec<TxnProfile>,
    pub mrc: Mrc,
    pub concurrency: Usl,
    /// The data pages dirty after n transactions since a checkpoint; absent
    /// in older profiles, where every dirtied page counts as a new one.
    #[serde(default)]
    pub writeback: Option<Writeback>,
    /// A workload file's own headline (its `[metric]`: TPC-E-like's tpsE),
    /// recorded with the profile; absent for TPC-C (NOPM) and the insert
    /// storm (rows a minute).
    #[serde(default)]
    pub headline: Option<Headline>,
}

/// A headline of one transaction type's rate: `name` (tpsE) counts
/// `transaction`'s commits over `per_s` seconds (1: a second, 60: a minute).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Headline {
    pub name: String,
    pub transaction: String,
    pub per_s: f64,
}

impl Profile {
    /// The headline at `tpm` transactions a minute of the mix: the counted
    /// transaction's share of them over the headline's period.
    pub fn headline_at(&self, tpm: f64) -> Option<f64> {
        let h = self.headline.as_ref()?;
        let share = self.transactions.iter().find(|t| t.name == h.transaction)?.share;
        Some(tpm * share / 60.0 * h.per_s)
    }
}

impl Writeback {
    /// Each curve a point per entry, ascending, and the checkpoint settings
    /// as PostgreSQL takes them.
    fn check(&self, file: &str) -> Result<(), ProfileError> {
        let field = |f: &str, m: String| ProfileError::Field { file: file.into(), field: f.into(), message: m };
        let w = self;
        let n = w.txns_per_unit.len();
        if n == 0 || w.pages_per_unit.len() != n || w.runs_per_unit.len() != n {
            return Err(field("writeback", format!(
                "{n} txns_per_unit, {} pages_per_unit, {} runs_per_unit — one of each per point, at least one point",
                w.pages_per_unit.len(),
                w.runs_per_unit.len()
            )));
        }
        if w.txns_per_unit[0] < 0.0 || w.txns_per_unit.windows(2).any(|x| x[1] <= x[0]) || w.txns_per_unit.iter().any(|x| !x.is_finite()) {
            return Err(field("writeback.txns_per_unit", "must be 0 or more and ascend".into()));
        }
        if w.pages_per_unit.iter().any(|x| !(x.is_finite() && *x >= 0.0)) || w.pages_per_unit.windows(2).any(|x| x[1] < x[0]) {
            return Err(field("writeback.pages_per_unit", "must be 0 or more and never fall".into()));
        }
        if let Some((r, pg)) = w.runs_per_unit.iter().zip(&w.pages_per_unit).find(|(r, pg)| !(r.is_finite() && **r >= 0.0 && **r <= **pg + 1e-9)) {
            return Err(field("writeback.runs_per_unit", format!("{r} where pages_per_unit is {pg} — runs are 0 or more and at most the pages")));
        }
        for (f, x, lo) in [("units", w.units, 1.0), ("checkpoint_timeout_s", w.checkpoint_timeout_s, 1.0), ("max_wal_bytes", w.max_wal_bytes, 1.0), ("flush_after_bytes", w.flush_after_bytes, 0.0)] {
            if !(x.is_finite() && x >= lo) {
                return Err(field(&format!("writeback.{f}"), format!("{x} — must be at least {lo}")));
            }
        }
        if !(w.completion_target > 0.0 && w.completion_target <= 1.0) {
            return Err(field("writeback.completion_target", format!("{} — PostgreSQL takes 0 to 1 (default 0.9)", w.completion_target)));
        }
        Ok(())
    }
}

impl Profile {
    /// The database engine the profile was recorded on (`postgres`,
    /// `mysql`, `mariadb`, `sqlserver`, `oracle`, `db2`, as a config's
    /// `engine` names them): `provenance.engine` where given, else read off
    /// `provenance.database` ("PostgreSQL 15.18", "MariaDB 10.11.6").
    pub fn engine(&self) -> Option<String> {
        engine_of(&self.provenance)
    }
}

/// The engine a recording's provenance names (a database profile's or an
/// import profile's): `engine`, else read off `database`.
pub fn engine_of(provenance: &BTreeMap<String, toml::Value>) -> Option<String> {
    if let Some(e) = provenance.get("engine").and_then(|v| v.as_str()) {
        return Some(e.to_ascii_lowercase());
    }
    let db = provenance.get("database")?.as_str()?.to_ascii_lowercase();
    [("postgres", "postgres"), ("mariadb", "mariadb"), ("mysql", "mysql"), ("sql server", "sqlserver"), ("oracle", "oracle"), ("db2", "db2")]
        .into_iter()
        .find(|(word, _)| db.contains(word))
        .map(|(_, e)| e.to_string())
}

/// The write-back curve: how many distinct data pages, in how many runs of
/// contiguous pages, are dirty after n transactions since a checkpoint, per
/// home scale unit in use (pg_buffercache sampled during a run that starts
/// at a CHECKPOINT with the data in shared_buffers); and the recording
/// server's checkpoint settings, which the model's checkpoints follow.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Writeback {
    /// Transactions per unit since the checkpoint, ascending from 0.
    pub txns_per_unit: Vec<f64>,
    /// Distinct dirty data pages per unit after them, non-decreasing.
    pub pages_per_unit: Vec<f64>,
    /// Runs of contiguous dirty pages of one relation per unit; at most the pages.
    pub runs_per_unit: Vec<f64>,
    /// The home units the recording run used (TPC-C: its distinct home warehouses).
    #[serde(default = "one")]
    pub units: f64,
    #[serde(default = "checkpoint_timeout_s")]
    pub checkpoint_timeout_s: f64,
    #[serde(default = "max_wal_bytes")]
    pub max_wal_bytes: f64,
    #[serde(default = "completion_target")]
    pub completion_target: f64,
    /// `checkpoint_flush_after`: the checkpointer hands its sorted writes
    /// to the kernel in batches of this many bytes, so a write-back I/O is
    /// at most this long.
    #[serde(default = "flush_after_bytes")]
    pub flush_after_bytes: f64,
    #[serde(default)]
    pub method: String,
}

fn one() -> f64 {
    1.0
}
/// PostgreSQL's defaults (postgresql.conf.sample, PostgreSQL 15).
fn checkpoint_timeout_s() -> f64 {
    300.0
}
fn max_wal_bytes() -> f64 {
    1073741824.0
}
fn completion_target() -> f64 {
    0.9
}
fn flush_after_bytes() -> f64 {
    262144.0
}

impl Default for Writeback {
    /// No curve points, PostgreSQL's default checkpoint settings.
    fn default() -> Writeback {
        Writeback {
            txns_per_unit: vec![],
            pages_per_unit: vec![],
            runs_per_unit: vec![],
            units: one(),
            checkpoint_timeout_s: checkpoint_timeout_s(),
            max_wal_bytes: max_wal_bytes(),
            completion_target: completion_target(),
            flush_after_bytes: flush_after_bytes(),
            method: String::new(),
        }
    }
}

impl Writeback {
    /// `ys` at `x` transactions per unit: linear between the points from
    /// (0, 0), on the last segment's slope beyond them.
    fn at(&self, ys: &[f64], x: f64) -> f64 {
        let xs = &self.txns_per_unit;
        let (mut x0, mut y0) = (0.0, 0.0);
        for (i, (&x1, &y1)) in xs.iter().zip(ys).enumerate() {
            if x <= x1 || i + 1 == xs.len() {
                let slope = if x1 > x0 { (y1 - y0) / (x1 - x0) } else { 0.0 };
                return (y0 + slope * (x - x0)).max(0.0);
            }
            (x0, y0) = (x1, y1);
        }
        0.0
    }

    /// Distinct dirty pages per unit after `x` transactions per unit.
    pub fn pages_at(&self, x: f64) -> f64 {
        self.at(&self.pages_per_unit, x)
    }

    /// Runs of contiguous dirty pages per unit after `x` transactions per unit.
    pub fn runs_at(&self, x: f64) -> f64 {
        self.at(&self.runs_per_unit, x).min(self.pages_at(x))
    }
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct DataSize {
    pub bytes_per_scale_unit: f64,
    #[serde(default)]
    pub fixed_bytes: f64,
    #[serde(default = "page_bytes")]
    pub page_bytes: f64,
}

fn page_bytes() -> f64 {
    8192.0
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct TxnProfile {
    pub name: String,
    pub share: f64,
    /// Server CPU per transaction on the recording machine, µs.
    pub cpu_us: f64,
    pub page_accesses: f64,
    pub pages_dirtied: f64,
    pub commits: f64,
    pub wal_bytes: f64,
    #[serde(default)]
    pub rollback_share: f64,
    /// Insert storm: rows per commit.
    #[serde(default)]
    pub rows_per_txn: Option<f64>,
    /// Rows this type updates that other users of the same scale unit
    /// update too, held from the update until the commit is durable
    /// (TPC-C: Payment's warehouse row, a New-Order's or Payment's district
    /// row). Empty where no such rows are known.
    #[serde(default)]
    pub row_locks: Vec<RowLock>,
}

/// One hot row a transaction locks: one of `per_unit` rows of kind `rows`
/// in the user's home scale unit (its TPC-C home warehouse), drawn uniformly.
/// The same `rows` in two types names the same rows.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct RowLock {
    pub rows: String,
    pub per_unit: u32,
}

/// Miss ratio of page accesses against cache size as a fraction of the data.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Mrc {
    pub cache_fraction: Vec<f64>,
    pub miss_ratio: Vec<f64>,
    #[serde(default)]
    pub method: String,
}

/// The concurrency penalty, in the Universal Scalability Law's form: the
/// server's CPU per transaction at N users is its CPU at one user times
/// 1 + α(N − 1) + βN(N − 1) (contention and coherency). With
/// `fit = "cpu_per_txn"` (what the recorder writes) α and β were fitted to
/// the measured CPU per transaction at each N, so the model's CPU queue adds
/// the rest of the slow-down and nothing is counted twice; `fit =
/// "throughput"` (older profiles) fitted them to X(N)/X(1), which on a small
/// machine already holds its CPUs running out.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Usl {
    pub alpha: f64,
    pub beta: f64,
    #[serde(default = "fit_throughput")]
    pub fit: String,
    #[serde(default)]
    pub vus: Vec<f64>,
    /// Client transactions per second at each of `vus`.
    #[serde(default)]
    pub throughput: Vec<f64>,
    /// The run-to-run spread of `throughput` at each of `vus`: the sample
    /// standard deviation of the recording's repeats (`--repeat`), 0 where
    /// a count ran once. The model carries it, relative to the throughput,
    /// to its prediction at each count, and the tipping point takes it as
    /// the noise, as `bench db` takes its repeats'. Empty in older profiles.
    #[serde(default)]
    pub throughput_stdev: Vec<f64>,
    /// The server's CPU per transaction at each of `vus`, µs.
    #[serde(default)]
    pub cpu_us_per_txn: Vec<f64>,
    /// Time per transaction spent outside the server's CPU at one user with
    /// storage out of the way (1 / X(1) − CPU per transaction): the client's
    /// round trip, its own CPU, wake-ups. µs; 0 in older profiles.
    #[serde(default)]
    pub outside_us: f64,
    /// The users' backends waiting for their client at each of `vus`, µs
    /// per transaction (pg_stat_activity's state idle, sampled while the
    /// recording ran: the result on its way, the next call not yet in). It
    /// grows with the users as the client's and the backends' wake-ups
    /// wait for a vCPU; the model adds its growth over the first count to
    /// `outside_us` (`outside_us_at`). Empty in older profiles.
    #[serde(default)]
    pub client_wait_us: Vec<f64>,
    /// The WAL sync's time as the server timed it at each of `vus`, µs, and
    /// the syncs per transaction there (below 1 where group commit shares
    /// a sync). Recorded to show how the log flush behaves as users grow;
    /// the model takes the log device's latency from the catalog instead.
    #[serde(default)]
    pub wal_sync_us: Vec<f64>,
    #[serde(default)]
    pub wal_syncs_per_txn: Vec<f64>,
    /// The host CPU one WAL flush costs on the recording machine, µs: the
    /// CPU per transaction at one user with synchronous_commit on less
    /// with it off, over the WAL syncs per transaction (the write and
    /// fdatasync system calls, the I/O's interrupts and kernel threads, the
    /// wake-ups). It is in each writing type's `cpu_us`; the model takes it
    /// out of the transaction and gives it to the log writer's flush. 0 in
    /// older profiles.
    #[serde(default)]
    pub flush_cpu_us: f64,
    /// The CPU-demand multiplier at each of `vus` with which the model, run
    /// on the recording machine (its vCPUs, its disk's durable write, the
    /// recorded scale), reproduces the recorded throughput there: what the
    /// recording machine lost at each count beyond what the model's own
    /// queues, locks and flushes explain (the CPU per transaction growing,
    /// a vCPU idle while a woken backend waits for the other). Where it is
    /// given it replaces α and β: the model interpolates it in ln N between
    /// the recorded counts and holds the last value past them. Empty in
    /// older profiles.
    #[serde(default)]
    pub penalty: Vec<f64>,
    /// How `penalty` was found (the recorder's words).
    #[serde(default)]
    pub penalty_method: String,
    /// The bounds `[low, high]` the recorder's fit of `penalty` searched
    /// within: a value at a bound is where the model could not reproduce
    /// the recorded throughput and the fit stopped there. Empty in older
    /// profiles, whose recorder searched `PENALTY_BOUNDS`.
    #[serde(default)]
    pub penalty_bounds: Vec<f64>,
    /// The measured window of one run at each of `vus`, s (the median over
    /// its repeats). Empty in older profiles.
    #[serde(default)]
    pub window_s: Vec<f64>,
    /// The wait the model adds to each WAL flush at each of `vus`, µs,
    /// found with `penalty` on the recording machine: the server's WAL sync
    /// took longer as the users grew (`wal_sync_us`, on one device), and
    /// this is the part of that growth the model's own vCPU queue does not
    /// give its flush there. Interpolated as the penalty is. Empty in older
    /// profiles, whose penalty holds the whole of it as CPU.
    #[serde(default)]
    pub flush_wait_us: Vec<f64>,
    /// The server's CPU per transaction growing with the backends that run
    /// at once, in the Universal Scalability Law's contention form (Gunther,
    /// Guerrilla Capacity Planning, 2007): a transaction's CPU at p backends
    /// at once is f(p) = 1 + σ₁(min(p, 2) − 1) + σ₂(p − 2)⁺ times its CPU at
    /// one. σ₁ (`core_contention`) is measured here by running the same
    /// server on 1 CPU and on 2 (bench/core_contention.py); σ₂
    /// (`core_contention_beyond`) is cited from a many-core measurement of
    /// the engine, since a 2-CPU machine cannot show it. The recording
    /// machine's own parallelism is already in `penalty`; the model carries
    /// the rest to a host with more (or fewer) vCPUs (`core_factor`). 0 in
    /// older profiles: no term.
    #[serde(default)]
    pub core_contention: f64,
    #[serde(default)]
    pub core_contention_beyond: f64,
    /// Where `core_contention` and `core_contention_beyond` come from (the
    /// command, date and spread; the cited source).
    #[serde(default)]
    pub core_contention_source: String,
}

fn fit_throughput() -> String {
    "throughput".into()
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    #[error("{file}: {message}")]
    Parse { file: String, message: String },
    #[error("{file}: schema_version {found} is not supported — this storlab reads schema_version {PROFILE_SCHEMA_VERSION}; record the profile again with this version's `storlab bench db --profile-out`")]
    Version { file: String, found: u32 },
    #[error("{file}: {field}: {message}")]
    Field { file: String, field: String, message: String },
}

/// Bounds of a profile's figures, far beyond any recorded server and short
/// of what would keep the model busy for ever: 100 s of CPU, 10 million
/// pages, a million commits and 10 GB of WAL in one transaction; 1 PB of
/// data per scale unit.
pub const MAX_CPU_US: f64 = 1e8;
pub const MAX_PAGES: f64 = 1e7;
pub const MAX_COMMITS: f64 = 1e6;
pub const MAX_WAL_BYTES: f64 = 1e10;
pub const MAX_BYTES: f64 = 1e15;

/// A TOML error on one line: the file, line and column, and toml's message
/// with its own line breaks folded.
fn syntax(file: &str, text: &str, e: &toml::de::Error) -> ProfileError {
    let mut message = e.message().trim().replace('\n', ", ");
    if message.is_empty() {
        message = "the entry ends without a value — give one or remove the line".into();
    }
    let message = match e.span() {
        Some(s) => {
            let before = &text[..s.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let col = before.rfind('\n').map_or(before.len(), |nl| before.len() - nl - 1) + 1;
            format!("line {line} column {col}: {message}")
        }
        None => message,
    };
    ProfileError::Parse { file: file.into(), message }
}

impl Mrc {
    /// The miss ratio at a cache of `fraction` of the data: linear between
    /// the recorded points, the first point's ratio below them, and no
    /// misses once the whole data fits (fraction ≥ 1).
    pub fn miss_ratio_at(&self, fraction: f64) -> f64 {
        let (xs, ys) = (&self.cache_fraction, &self.miss_ratio);
        if fraction >= 1.0 || xs.is_empty() {
            return 0.0;
        }
        if fraction <= xs[0] {
            return ys[0];
        }
        for i in 1..xs.len() {
            if fraction <= xs[i] {
                let w = (fraction - xs[i - 1]) / (xs[i] - xs[i - 1]);
                return ys[i - 1] + w * (ys[i] - ys[i - 1]);
            }
        }
        ys[ys.len() - 1]
    }

    /// The miss ratio of a cache filling from empty that holds `fraction`
    /// of the data: it holds the distinct pages referenced so far, the
    /// pages an LRU cache of that size would hold, so the curve applies,
    /// but from an empty cache's 1 (every access misses) below the first
    /// recorded point, where `miss_ratio_at` holds that point's ratio.
    pub fn miss_ratio_filling(&self, fraction: f64) -> f64 {
        match (self.cache_fraction.first(), self.miss_ratio.first()) {
            (Some(&x0), Some(&y0)) if x0 > 0.0 && fraction < x0 => 1.0 + fraction.max(0.0) / x0 * (y0 - 1.0),
            _ => self.miss_ratio_at(fraction),
        }
    }
}

/// The first line of every profile file.
pub const PROFILE_HEADER: &str = "# A storlab database workload profile (docs/profile.md).";

/// A profile as a recording builds it, as the text `Profile::from_toml`
/// reads: its top-level values, then its tables, then its arrays of tables,
/// with figures to 6 decimals (the precision the recorder measures to).
pub fn write_toml(doc: toml::Table) -> Result<String, String> {
    fn six(v: toml::Value) -> toml::Value {
        match v {
            toml::Value::Float(f) => toml::Value::Float((f * 1e6).round() / 1e6),
            toml::Value::Array(a) => toml::Value::Array(a.into_iter().map(six).collect()),
            toml::Value::Table(t) => toml::Value::Table(t.into_iter().map(|(k, v)| (k, six(v))).collect()),
            other => other,
        }
    }
    let body = toml::to_string(&six(toml::Value::Table(doc))).map_err(|e| e.to_string())?;
    Ok(format!("{PROFILE_HEADER}\n\n{body}"))
}

impl Profile {
    /// Reads a profile. `file` names it in errors.
    pub fn from_toml(file: &str, text: &str) -> Result<Profile, ProfileError> {
        let value: toml::Table = toml::from_str(text).map_err(|e| syntax(file, text, &e))?;
        match value.get("schema_version").and_then(|v| v.as_integer()) {
            Some(1) => {}
            Some(v) => return Err(ProfileError::Version { file: file.into(), found: v as u32 }),
            None => return Err(ProfileError::Field { file: file.into(), field: "schema_version".into(), message: "missing — add schema_version = 1".into() }),
        }
        let p: Profile = toml::from_str(text).map_err(|e| syntax(file, text, &e))?;
        let field = |f: &str, m: String| ProfileError::Field { file: file.into(), field: f.into(), message: m };
        // Every figure finite and within what a server can do: an infinite
        // or absurd figure would leave the model's loops without an end.
        let range = |f: &str, x: f64, (lo, hi): (f64, f64), what: &str| -> Result<(), ProfileError> {
            if x.is_finite() && (lo..=hi).contains(&x) {
                return Ok(());
            }
            let nearest = if x > hi { hi } else { lo };
            Err(field(f, format!("{x} — {what} lies in [{lo}, {hi}]; nearest valid value {nearest}")))
        };
        range("nopm_per_txn", p.nopm_per_txn, (0.0, 1.0), "a share")?;
        range("data.bytes_per_scale_unit", p.data.bytes_per_scale_unit, (0.0, MAX_BYTES), "data bytes per unit")?;
        range("data.fixed_bytes", p.data.fixed_bytes, (0.0, MAX_BYTES), "fixed data bytes")?;
        range("data.page_bytes", p.data.page_bytes, (512.0, 65536.0), "a page (PostgreSQL 1 to 32 KiB, InnoDB 4 to 64 KiB)")?;
        for t in &p.transactions {
            let f = |k: &str| format!("transaction '{}'.{k}", t.name);
            range(&f("share"), t.share, (0.0, 1.0), "a share")?;
            range(&f("cpu_us"), t.cpu_us, (0.0, MAX_CPU_US), "CPU per transaction, µs,")?;
            range(&f("page_accesses"), t.page_accesses, (0.0, MAX_PAGES), "pages per transaction")?;
            range(&f("pages_dirtied"), t.pages_dirtied, (0.0, MAX_PAGES), "pages per transaction")?;
            range(&f("commits"), t.commits, (0.0, MAX_COMMITS), "commits per transaction")?;
            range(&f("wal_bytes"), t.wal_bytes, (0.0, MAX_WAL_BYTES), "WAL bytes per transaction")?;
            range(&f("rollback_share"), t.rollback_share, (0.0, 1.0), "a share")?;
            if let Some(r) = t.rows_per_txn {
                range(&f("rows_per_txn"), r, (1.0, MAX_PAGES), "rows per commit")?;
            }
        }
        let c = &p.concurrency;
        range("concurrency.alpha", c.alpha, (-1.0, 1e6), "a USL coefficient")?;
        range("concurrency.beta", c.beta, (-1.0, 1e6), "a USL coefficient")?;
        range("concurrency.outside_us", c.outside_us, (0.0, MAX_CPU_US), "a time per transaction, µs,")?;
        range("concurrency.flush_cpu_us", c.flush_cpu_us, (0.0, MAX_CPU_US), "CPU per flush, µs,")?;
        range("concurrency.core_contention", c.core_contention, (0.0, 1.0), "a contention coefficient σ")?;
        range("concurrency.core_contention_beyond", c.core_contention_beyond, (0.0, 1.0), "a contention coefficient σ")?;
        for (name, xs) in [("vus", &c.vus), ("throughput", &c.throughput), ("cpu_us_per_txn", &c.cpu_us_per_txn), ("wal_sync_us", &c.wal_sync_us), ("wal_syncs_per_txn", &c.wal_syncs_per_txn)] {
            for &x in xs.iter() {
                range(&format!("concurrency.{name}"), x, (0.0, 1e12), "each value")?;
            }
        }
        for (name, xs) in [("mrc.cache_fraction", &p.mrc.cache_fraction), ("mrc.miss_ratio", &p.mrc.miss_ratio)] {
            for &x in xs.iter() {
                range(name, x, (0.0, 1e6), "each value")?;
            }
        }
        if p.kind != "storlab-db-profile" {
            return Err(field("kind", format!("'{}' — a profile has kind = \"storlab-db-profile\"", p.kind)));
        }
        if p.transactions.is_empty() {
            return Err(field("transaction", "no [[transaction]] — a profile needs at least one".into()));
        }
        if let Some(h) = &p.headline {
            if !p.transactions.iter().any(|t| t.name == h.transaction) {
                let names: Vec<&str> = p.transactions.iter().map(|t| t.name.as_str()).collect();
                let near = crate::nearest(&h.transaction, names.iter().copied()).unwrap_or_else(|| names[0].to_string());
                return Err(field("headline.transaction", format!("'{}' is not one of the profile's transactions — nearest valid value '{near}'", h.transaction)));
            }
            if h.per_s != 1.0 && h.per_s != 60.0 {
                return Err(field("headline.per_s", format!("{} — a headline is a second's (1) or a minute's (60); nearest valid value {}", h.per_s, if h.per_s < 30.0 { 1 } else { 60 })));
            }
        }
        let shares: f64 = p.transactions.iter().map(|t| t.share).sum();
        if (shares - 1.0).abs() > 0.01 {
            return Err(field("transaction.share", format!("shares sum to {shares:.3} — they must sum to 1")));
        }
        let m = &p.mrc;
        if m.cache_fraction.len() != m.miss_ratio.len() || m.cache_fraction.is_empty() {
            return Err(field("mrc", "cache_fraction and miss_ratio need the same number of points, at least one".into()));
        }
        if m.cache_fraction.windows(2).any(|w| w[1] <= w[0]) || m.miss_ratio.windows(2).any(|w| w[1] > w[0]) {
            return Err(field("mrc", "cache_fraction must ascend and miss_ratio must not increase".into()));
        }
        if m.miss_ratio.iter().any(|r| !(0.0..=1.0).contains(r)) {
            return Err(field("mrc.miss_ratio", "values must lie in [0, 1]".into()));
        }
        // A value per recorded count: as many as the counts, the counts
        // ascending from 1, each value valid.
        let per_count_field = |name: &str, values: &[f64], valid: fn(f64) -> bool, what: &str| -> Result<(), ProfileError> {
            if values.is_empty() {
                return Ok(());
            }
            if values.len() != c.vus.len() {
                return Err(field(&format!("concurrency.{name}"), format!("{} values for {} counts in concurrency.vus — one per count", values.len(), c.vus.len())));
            }
            if c.vus.iter().any(|&n| !(n >= 1.0)) || c.vus.windows(2).any(|w| w[1] <= w[0]) {
                return Err(field("concurrency.vus", format!("counts must be at least 1 and ascend where concurrency.{name} is given")));
            }
            match values.iter().find(|&&x| !valid(x)) {
                Some(x) => Err(field(&format!("concurrency.{name}"), format!("{x} — {what}"))),
                None => Ok(()),
            }
        };
        per_count_field("penalty", &c.penalty, |x| x.is_finite() && x > 0.0, "each multiplier must be above 0 (1 = no penalty)")?;
        per_count_field("throughput", &c.throughput, |x| x.is_finite() && x >= 0.0, "transactions per second are 0 or more")?;
        per_count_field("cpu_us_per_txn", &c.cpu_us_per_txn, |x| x.is_finite() && x >= 0.0, "a CPU time per transaction is 0 µs or more")?;
        per_count_field("window_s", &c.window_s, |x| x.is_finite() && x > 0.0, "a measured window is above 0 s")?;
        if !c.penalty_bounds.is_empty() && !(c.penalty_bounds.len() == 2 && c.penalty_bounds[0] > 0.0 && c.penalty_bounds[0] < c.penalty_bounds[1] && c.penalty_bounds[1].is_finite()) {
            return Err(field("concurrency.penalty_bounds", format!("{:?} — two multipliers [low, high], 0 < low < high (the recorder's are [0.25, 8])", c.penalty_bounds)));
        }
        per_count_field("client_wait_us", &c.client_wait_us, |x| x.is_finite() && x >= 0.0, "a time per transaction is 0 µs or more")?;
        per_count_field("flush_wait_us", &c.flush_wait_us, |x| x.is_finite() && x >= 0.0, "a wait is 0 µs or more")?;
        if !c.throughput_stdev.is_empty() {
            if c.throughput_stdev.len() != c.vus.len() || c.throughput.len() != c.vus.len() {
                return Err(field(
                    "concurrency.throughput_stdev",
                    format!("{} values for {} counts in concurrency.vus and {} in concurrency.throughput — one per count", c.throughput_stdev.len(), c.vus.len(), c.throughput.len()),
                ));
            }
            if c.vus.iter().any(|&n| !(n >= 1.0)) || c.vus.windows(2).any(|w| w[1] <= w[0]) {
                return Err(field("concurrency.vus", "counts must be at least 1 and ascend where concurrency.throughput_stdev is given".into()));
            }
            if let Some(x) = c.throughput_stdev.iter().find(|&&x| !(x.is_finite() && x >= 0.0)) {
                return Err(field("concurrency.throughput_stdev", format!("{x} — a standard deviation is 0 or more")));
            }
            if let Some(x) = c.throughput.iter().find(|&&x| !(x.is_finite() && x > 0.0)) {
                return Err(field("concurrency.throughput", format!("{x} — transactions per second above 0 where throughput_stdev is given")));
            }
        }
        if let Some(w) = &p.writeback {
            w.check(file)?;
        }
        let mut per_unit: BTreeMap<&str, (u32, &str)> = BTreeMap::new();
        for t in &p.transactions {
            for l in &t.row_locks {
                let f = format!("transaction '{}': row_locks '{}'.per_unit", t.name, l.rows);
                if l.per_unit == 0 {
                    return Err(field(&f, "0 — a scale unit has at least 1 such row".into()));
                }
                match per_unit.get(l.rows.as_str()) {
                    Some(&(n, other)) if n != l.per_unit => {
                        return Err(field(&f, format!("{} where transaction '{other}' has {n} — the same rows have one count", l.per_unit)));
                    }
                    _ => {
                        per_unit.insert(&l.rows, (l.per_unit, &t.name));
                    }
                }
            }
        }
        Ok(p)
    }

    /// Data size at `scale` (in the profile's unit), bytes.
    pub fn data_bytes(&self, scale: f64) -> f64 {
        self.data.bytes_per_scale_unit * scale + self.data.fixed_bytes
    }

    /// The USL's service-demand factor at `n` concurrent users.
    pub fn usl_factor(&self, n: f64) -> f64 {
        let (a, b) = (self.concurrency.alpha, self.concurrency.beta);
        1.0 + a * (n - 1.0).max(0.0) + b * n * (n - 1.0).max(0.0)
    }

    /// The recording machine's vCPUs (`provenance.machine.cpus`), where
    /// the profile says.
    pub fn recording_vcpus(&self) -> Option<f64> {
        let m = self.provenance.get("machine")?.as_table()?;
        let c = m.get("cpus").and_then(|v| v.as_integer().map(|i| i as f64).or_else(|| v.as_float()))?;
        (c >= 1.0).then_some(c)
    }

    /// The CPU-demand factor the host's cores add to `penalty_factor` at
    /// `n` concurrent users: the backends that run at once are min(n,
    /// vCPUs), on the host and on the recording machine, and each
    /// transaction's CPU grows with them as `core_contention_at`, so the
    /// factor is f(min(n, host)) / f(min(n, recording machine)). 1 where the
    /// profile has no term or does not say its machine's vCPUs.
    pub fn core_factor(&self, n: f64, host_vcpus: f64) -> f64 {
        match self.recording_vcpus() {
            Some(rec) if host_vcpus >= 1.0 => self.core_contention_at(n.min(host_vcpus)) / self.core_contention_at(n.min(rec)),
            _ => 1.0,
        }
    }

    /// f(p) = 1 + σ₁(min(p, 2) − 1)⁺ + σ₂(p − 2)⁺: a transaction's CPU at
    /// `p` backends running at once over its CPU at one.
    pub fn core_contention_at(&self, p: f64) -> f64 {
        let c = &self.concurrency;
        1.0 + c.core_contention * (p.min(2.0) - 1.0).max(0.0) + c.core_contention_beyond * (p - 2.0).max(0.0)
    }

    /// The CPU-demand factor at `n` concurrent users: the recorded
    /// `penalty`, linear in ln N between its counts, its first value below
    /// them and its last above; the USL factor where there is none.
    pub fn penalty_factor(&self, n: f64) -> f64 {
        let (xs, ys) = (&self.concurrency.vus, &self.concurrency.penalty);
        if ys.is_empty() || ys.len() != xs.len() {
            return self.usl_factor(n);
        }
        per_count(xs, ys, n)
    }

    /// The time per transaction outside the server at `n` users, µs:
    /// `outside_us` (one user, storage out of the way) plus how much longer
    /// the users waited for their client at `n` than at the first recorded
    /// count (`client_wait_us`, read as the penalty is: linear in ln N
    /// between the counts, held past them; never less than at the first).
    pub fn outside_us_at(&self, n: f64) -> f64 {
        let c = &self.concurrency;
        let base = c.outside_us.max(0.0);
        if c.client_wait_us.is_empty() || c.client_wait_us.len() != c.vus.len() {
            return base;
        }
        base + (per_count(&c.vus, &c.client_wait_us, n) - c.client_wait_us[0]).max(0.0)
    }

    /// The wait added to each WAL flush at `n` users, µs (`flush_wait_us`,
    /// read as the penalty is; 0 where the profile has none).
    pub fn flush_wait_us_at(&self, n: f64) -> f64 {
        let c = &self.concurrency;
        if c.flush_wait_us.is_empty() || c.flush_wait_us.len() != c.vus.len() {
            return 0.0;
        }
        per_count(&c.vus, &c.flush_wait_us, n).max(0.0)
    }

    /// The recording's run-to-run spread at `n` users, relative to its
    /// throughput there (`throughput_stdev` / `throughput`), read as the
    /// penalty is: linear in ln N between the counts, held past them.
    /// None where the profile has no spread.
    pub fn throughput_spread(&self, n: f64) -> Option<f64> {
        let c = &self.concurrency;
        if c.throughput_stdev.is_empty() || c.throughput_stdev.len() != c.vus.len() || c.throughput.len() != c.vus.len() {
            return None;
        }
        let rel: Vec<f64> = c.throughput_stdev.iter().zip(&c.throughput).map(|(s, x)| s / x).collect();
        Some(per_count(&c.vus, &rel, n))
    }
}

/// `ys` at `n` from one value per count in `xs` (ascending): linear in
/// ln N between the counts, the first value below them, the last above.
fn per_count(xs: &[f64], ys: &[f64], n: f64) -> f64 {
    if n <= xs[0] {
        return ys[0];
    }
    for i in 1..xs.len() {
        if n <= xs[i] {
            let w = (n.ln() - xs[i - 1].ln()) / (xs[i].ln() - xs[i - 1].ln());
            return ys[i - 1] + w * (ys[i] - ys[i - 1]);
        }
    }
    ys[ys.len() - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error `base` with `from` replaced by `to` is refused with.
    fn refused(base: &str, from: &str, to: &str) -> String {
        Profile::from_toml("p.toml", &base.replace(from, to)).unwrap_err().to_string()
    }

    pub const EXAMPLE: &str = include_str!("../tests/data/example-profile.toml");

    // A figure that is not finite, or beyond what a server does, would keep
    // the model busy for ever: refused with the field and the nearest value.
    #[test]
    fn figures_out_of_range_are_refused_with_the_nearest_valid_value() {
        assert_eq!(refused(EXAMPLE, "wal_bytes = 2500.0", "wal_bytes = inf"), "p.toml: transaction 'new_order'.wal_bytes: inf — WAL bytes per transaction lies in [0, 10000000000]; nearest valid value 10000000000");
        assert_eq!(refused(EXAMPLE, "wal_bytes = 2500.0", "wal_bytes = nan"), "p.toml: transaction 'new_order'.wal_bytes: NaN — WAL bytes per transaction lies in [0, 10000000000]; nearest valid value 0");
        assert_eq!(refused(EXAMPLE, "cpu_us = 350.0", "cpu_us = -5.0"), "p.toml: transaction 'new_order'.cpu_us: -5 — CPU per transaction, µs, lies in [0, 100000000]; nearest valid value 0");
        assert!(refused(EXAMPLE, "alpha = 0.02", "alpha = -inf").starts_with("p.toml: concurrency.alpha: -inf"));
        assert!(refused(EXAMPLE, "bytes_per_scale_unit = 1.0e8", "bytes_per_scale_unit = 1e300").contains("nearest valid value 1000000000000000"));
    }

    // A syntax error is one line with its line and column (line 6 column 8,
    // after the file's three comment lines: the second `=` of `name = = "t"`).
    #[test]
    fn a_syntax_error_names_line_and_column_on_one_line() {
        let e = refused(EXAMPLE, "name = \"t\"", "name = = \"t\"");
        assert!(e.starts_with("p.toml: line 6 column 8: "), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    // σ₁ = 0.05 measured on 2 vCPUs, σ₂ = 0.01 beyond: f(2) = 1.05,
    // f(8) = 1.05 + 0.01 × 6 = 1.11, f(16) = 1.05 + 0.14 = 1.19. 8 users on
    // 16 vCPUs run 8 at once, 1.11 / 1.05; 32 users run 16, 1.19 / 1.05;
    // one user runs one anywhere; a 1-vCPU host runs one of the
    // recording's two, 1 / 1.05.
    #[test]
    fn the_core_term_carries_the_backends_running_at_once() {
        let text = EXAMPLE.replace("beta = 0.0005", "beta = 0.0005\ncore_contention = 0.05\ncore_contention_beyond = 0.01") + "\n[provenance.machine]\ncpus = 2\n";
        let p = Profile::from_toml("t.toml", &text).unwrap();
        assert_eq!(p.recording_vcpus(), Some(2.0));
        assert!((p.core_factor(8.0, 16.0) - 1.11 / 1.05).abs() < 1e-12);
        assert!((p.core_factor(32.0, 16.0) - 1.19 / 1.05).abs() < 1e-12);
        assert_eq!(p.core_factor(1.0, 96.0), 1.0);
        assert!((p.core_factor(8.0, 1.0) - 1.0 / 1.05).abs() < 1e-12);
        assert_eq!(p.core_factor(8.0, 2.0), 1.0);
        // No term, or no machine to carry it from: no factor.
        let bare = Profile::from_toml("t.toml", &(EXAMPLE.to_string() + "\n[provenance.machine]\ncpus = 2\n")).unwrap();
        assert_eq!(bare.core_factor(64.0, 96.0), 1.0);
        let no_machine = Profile::from_toml("t.toml", &EXAMPLE.replace("beta = 0.0005", "beta = 0.0005\ncore_contention_beyond = 0.01")).unwrap();
        assert_eq!(no_machine.core_factor(64.0, 96.0), 1.0);
        assert!(refused(EXAMPLE, "beta = 0.0005", "beta = 0.0005\ncore_contention_beyond = 1.5").starts_with("p.toml: concurrency.core_contention_beyond: 1.5 — a contention coefficient σ lies in [0, 1]; nearest valid value 1"));
    }

    // Linear between (0.01, 0.6) and (0.1, 0.2): at 0.055, halfway, 0.4.
    #[test]
    fn reads_the_contract_and_interpolates_the_mrc() {
        let p = Profile::from_toml("t.toml", EXAMPLE).unwrap();
        assert!((p.mrc.miss_ratio_at(0.055) - 0.4).abs() < 1e-12);
        assert_eq!(p.mrc.miss_ratio_at(0.001), 0.6);
        assert_eq!(p.mrc.miss_ratio_at(2.0), 0.0);
        // 1 + 0.02 × 7 + 0.0005 × 8 × 7 = 1.168.
        assert!((p.usl_factor(8.0) - 1.168).abs() < 1e-12);
    }

    const WRITEBACK: &str = "\n[writeback]\ntxns_per_unit = [1000.0, 3000.0]\npages_per_unit = [500.0, 900.0]\nruns_per_unit = [400.0, 300.0]\nunits = 2\n";

    #[test]
    fn the_writeback_curve_runs_from_the_origin_and_on_along_its_last_slope() {
        let p = Profile::from_toml("t.toml", &format!("{EXAMPLE}{WRITEBACK}")).unwrap();
        let w = p.writeback.unwrap();
        // From (0, 0) to (1000, 500): 250 at 500.
        assert!((w.pages_at(500.0) - 250.0).abs() < 1e-9);
        // Between the points: 500 + 400 × 1000 / 2000 = 700.
        assert!((w.pages_at(2000.0) - 700.0).abs() < 1e-9);
        // Past the last: its slope, 0.2 a transaction: 900 + 0.2 × 2000 = 1300.
        assert!((w.pages_at(5000.0) - 1300.0).abs() < 1e-9);
        // Runs: 400 − 0.05 × 2000 = 300 at 3000; at 11,000, 300 − 400 → none.
        assert!((w.runs_at(2000.0) - 350.0).abs() < 1e-9);
        assert_eq!(w.runs_at(11000.0), 0.0);
        // Runs never exceed the pages: at 100, 40 runs over 50 pages.
        assert!((w.runs_at(100.0) - 40.0).abs() < 1e-9);
        // The checkpoint settings default to PostgreSQL's.
        assert_eq!((w.checkpoint_timeout_s, w.max_wal_bytes, w.completion_target, w.flush_after_bytes), (300.0, 1073741824.0, 0.9, 262144.0));
        assert_eq!(w.units, 2.0);
        assert!(Profile::from_toml("t.toml", EXAMPLE).unwrap().writeback.is_none());
    }

    #[test]
    fn a_writeback_curve_that_falls_or_has_more_runs_than_pages_is_refused() {
        let e = Profile::from_toml("t.toml", &format!("{EXAMPLE}{}", WRITEBACK.replace("[500.0, 900.0]", "[500.0, 400.0]"))).unwrap_err().to_string();
        assert!(e.starts_with("t.toml: writeback.pages_per_unit:") && !e.contains('\n'), "{e}");
        let e = Profile::from_toml("t.toml", &format!("{EXAMPLE}{}", WRITEBACK.replace("[400.0, 300.0]", "[600.0, 300.0]"))).unwrap_err().to_string();
        assert!(e.contains("writeback.runs_per_unit: 600 where pages_per_unit is 500"), "{e}");
        let e = Profile::from_toml("t.toml", &format!("{EXAMPLE}{}completion_target = 1.5\n", WRITEBACK)).unwrap_err().to_string();
        assert!(e.contains("writeback.completion_target: 1.5"), "{e}");
        let e = Profile::from_toml("t.toml", &format!("{EXAMPLE}{}", WRITEBACK.replace("[400.0, 300.0]", "[400.0]"))).unwrap_err().to_string();
        assert!(e.contains("writeback: 2 txns_per_unit, 2 pages_per_unit, 1 runs_per_unit"), "{e}");
    }

    #[test]
    fn refuses_another_version_in_one_line() {
        let e = Profile::from_toml("p.toml", &EXAMPLE.replace("schema_version = 1", "schema_version = 2")).unwrap_err().to_string();
        assert!(e.starts_with("p.toml: schema_version 2 is not supported") && !e.contains('\n'), "{e}");
        let e = Profile::from_toml("p.toml", &EXAMPLE.replace("share = 1.0", "share = 0.5")).unwrap_err().to_string();
        assert!(e.contains("transaction.share"), "{e}");
    }

    // Spreads of 50 and 200 tx/s on 1,000 and 2,000: 5 % at 1 user, 10 % at
    // 4; at 2 users, halfway in ln N, 7.5 %; held past the ends.
    #[test]
    fn the_recordings_spread_is_relative_and_read_in_ln_n() {
        let base = EXAMPLE.replace("alpha = 0.02", "alpha = 0.02\nvus = [1, 4]\nthroughput = [1000.0, 2000.0]");
        let p = Profile::from_toml("p.toml", &base).unwrap();
        assert_eq!(p.throughput_spread(2.0), None);
        let p = Profile::from_toml("p.toml", &base.replace("vus = [1, 4]", "vus = [1, 4]\nthroughput_stdev = [50.0, 200.0]")).unwrap();
        assert!((p.throughput_spread(2.0).unwrap() - 0.075).abs() < 1e-12);
        assert!((p.throughput_spread(1.0).unwrap() - 0.05).abs() < 1e-12);
        assert!((p.throughput_spread(64.0).unwrap() - 0.1).abs() < 1e-12);
        assert_eq!(refused(&base, "vus = [1, 4]", "vus = [1, 4]\nthroughput_stdev = [50.0]"), "p.toml: concurrency.throughput_stdev: 1 values for 2 counts in concurrency.vus and 2 in concurrency.throughput — one per count");
        assert_eq!(refused(&base, "vus = [1, 4]", "vus = [1, 4]\nthroughput_stdev = [50.0, -1.0]"), "p.toml: concurrency.throughput_stdev: -1 — a standard deviation is 0 or more");
    }

    // outside_us 50 µs; the users waited 100 µs a transaction for their
    // client at 1 user and 300 at 4: at 2 users, halfway in ln N, 200 —
    // 100 more than at one, so 150 outside; 250 at 4 and past it; 50 at 1.
    #[test]
    fn the_time_outside_grows_as_the_client_wait_did() {
        let base = EXAMPLE.replace("alpha = 0.02", "alpha = 0.02\noutside_us = 50.0\nvus = [1, 4]");
        let p = Profile::from_toml("p.toml", &base).unwrap();
        assert_eq!(p.outside_us_at(4.0), 50.0);
        let p = Profile::from_toml("p.toml", &base.replace("vus = [1, 4]", "vus = [1, 4]\nclient_wait_us = [100.0, 300.0]")).unwrap();
        assert!((p.outside_us_at(2.0) - 150.0).abs() < 1e-9);
        assert_eq!(p.outside_us_at(1.0), 50.0);
        assert!((p.outside_us_at(4.0) - 250.0).abs() < 1e-9);
        assert!((p.outside_us_at(64.0) - 250.0).abs() < 1e-9);
        // A wait that shrank with the users never takes from the one-user time.
        let p = Profile::from_toml("p.toml", &base.replace("vus = [1, 4]", "vus = [1, 4]\nclient_wait_us = [300.0, 100.0]")).unwrap();
        assert_eq!(p.outside_us_at(4.0), 50.0);
        assert_eq!(refused(&base, "vus = [1, 4]", "vus = [1, 4]\nclient_wait_us = [100.0]"), "p.toml: concurrency.client_wait_us: 1 values for 2 counts in concurrency.vus — one per count");
        assert_eq!(refused(&base, "vus = [1, 4]", "vus = [1, 4]\nclient_wait_us = [100.0, -3.0]"), "p.toml: concurrency.client_wait_us: -3 — a time per transaction is 0 µs or more");
    }

    #[test]
    fn a_penalty_needs_one_value_per_count_each_above_zero() {
        let base = EXAMPLE.replace("alpha = 0.02", "alpha = 0.02\nvus = [1, 2, 4]");
        let p = Profile::from_toml("p.toml", &base.replace("vus = [1, 2, 4]", "vus = [1, 2, 4]\npenalty = [1.0, 1.2, 1.6]")).unwrap();
        // ln-linear between counts: at 3 users 1.2 + 0.4 × ln(3/2) / ln 2 = 1.43398.
        assert!((p.penalty_factor(3.0) - (1.2 + 0.4 * (1.5f64).ln() / 2f64.ln())).abs() < 1e-12);
        assert_eq!(p.penalty_factor(0.5), 1.0);
        assert_eq!(p.penalty_factor(64.0), 1.6);
        assert_eq!(refused(&base, "vus = [1, 2, 4]", "vus = [1, 2, 4]\npenalty = [1.0, 1.2]"), "p.toml: concurrency.penalty: 2 values for 3 counts in concurrency.vus — one per count");
        assert_eq!(refused(&base, "vus = [1, 2, 4]", "vus = [1, 2, 4]\npenalty = [1.0, 0.0, 1.6]"), "p.toml: concurrency.penalty: 0 — each multiplier must be above 0 (1 = no penalty)");
        assert_eq!(refused(&base, "vus = [1, 2, 4]", "vus = [1, 4, 2]\npenalty = [1.0, 1.2, 1.6]"), "p.toml: concurrency.vus: counts must be at least 1 and ascend where concurrency.penalty is given");
    }

    #[test]
    fn a_flush_wait_is_read_per_count_and_never_below_zero() {
        let base = EXAMPLE.replace("alpha = 0.02", "alpha = 0.02\nvus = [1, 4]");
        // None given: no wait, at any count.
        assert_eq!(Profile::from_toml("p.toml", &base).unwrap().flush_wait_us_at(4.0), 0.0);
        let p = Profile::from_toml("p.toml", &base.replace("vus = [1, 4]", "vus = [1, 4]\nflush_wait_us = [0.0, 400.0]")).unwrap();
        // ln-linear: at 2 users halfway, 200 µs; held past the last count.
        assert!((p.flush_wait_us_at(2.0) - 200.0).abs() < 1e-9);
        assert_eq!(p.flush_wait_us_at(1.0), 0.0);
        assert_eq!(p.flush_wait_us_at(64.0), 400.0);
        assert_eq!(refused(&base, "vus = [1, 4]", "vus = [1, 4]\nflush_wait_us = [0.0]"), "p.toml: concurrency.flush_wait_us: 1 values for 2 counts in concurrency.vus — one per count");
        assert_eq!(refused(&base, "vus = [1, 4]", "vus = [1, 4]\nflush_wait_us = [0.0, -5.0]"), "p.toml: concurrency.flush_wait_us: -5 — a wait is 0 µs or more");
        assert_eq!(refused(&base, "vus = [1, 4]", "vus = [4, 1]\nflush_wait_us = [0.0, 5.0]"), "p.toml: concurrency.vus: counts must be at least 1 and ascend where concurrency.flush_wait_us is given");
    }

    #[test]
    fn row_locks_are_read_and_one_kind_of_row_has_one_count() {
        let with = |a: &str, b: &str| {
            EXAMPLE.replace("share = 1.0", "share = 0.5").replace("wal_bytes = 2500.0", &format!("wal_bytes = 2500.0\nrow_locks = [{{ rows = \"district\", per_unit = {a} }}]"))
                + &format!("[[transaction]]\nname = \"payment\"\nshare = 0.5\ncpu_us = 1.0\npage_accesses = 1.0\npages_dirtied = 0.0\ncommits = 1.0\nwal_bytes = 1.0\nrow_locks = [{{ rows = \"warehouse\", per_unit = 1 }}, {{ rows = \"district\", per_unit = {b} }}]\n")
        };
        let p = Profile::from_toml("p.toml", &with("10", "10")).unwrap();
        assert_eq!(p.transactions[1].row_locks, vec![RowLock { rows: "warehouse".into(), per_unit: 1 }, RowLock { rows: "district".into(), per_unit: 10 }]);
        assert!(Profile::from_toml("p.toml", EXAMPLE).unwrap().transactions[0].row_locks.is_empty());
        let e = Profile::from_toml("p.toml", &with("10", "9")).unwrap_err().to_string();
        assert!(e.starts_with("p.toml: transaction 'payment': row_locks 'district'.per_unit: 9 where transaction 'new_order' has 10"), "{e}");
        let e = Profile::from_toml("p.toml", &with("0", "0")).unwrap_err().to_string();
        assert!(e.contains("row_locks 'district'.per_unit: 0"), "{e}");
    }
}
