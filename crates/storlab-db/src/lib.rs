//! storlab-db: real database workloads, measured the way HammerDB measures
//! them. Virtual users are tokio tasks (thousands need no thousands of
//! threads); their PostgreSQL connections speak the wire protocol directly
//! (`wire`), loading and monitoring go through tokio-postgres, and SQLite runs
//! through rusqlite (bundled) with its calls on tokio's blocking pool.
//!
//! A timed run is rampup → snapshot → duration → snapshot → stop, as in
//! HammerDB's timed driver: NOPM from the change in Σd_next_o_id, the
//! engine's TPM from PostgreSQL's commit and rollback counters read after the
//! workers have disconnected, and the client's own per-type counts and
//! latency histograms.

pub mod backend;
pub mod connect;
pub mod custom;
mod driver;
pub mod error;
pub mod insert;
pub mod monitor;
pub mod mysql;
pub mod mysql_target;
pub mod pg;
pub mod record;
pub mod session;
pub mod sqlite_io;
pub mod tpcc;
pub mod wire;

pub use driver::{default_loaders, prepare, run, RunOptions, RunRecord, Workload};
pub use error::{DbError, Result};
pub use record::{DbRun, IoProfile, Prepared, TxnStats};
pub use session::{Db, Outcome};
pub use tpcc::TpccOptions;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8};
use std::sync::Arc;

/// What a caller can watch and stop while a run goes on.
#[derive(Debug, Default)]
pub struct ProgressState {
    /// Set by the caller to stop (Ctrl-C); the run keeps what it measured.
    pub stop: AtomicBool,
    /// 0 loading, 1 ramping up, 2 measuring, 3 stopping.
    pub phase: AtomicU8,
    /// Loading: tables done; running: transactions completed so far.
    pub done: AtomicU64,
    /// Loading: tables to load.
    pub total: AtomicU64,
}

pub type Progress = Arc<ProgressState>;

pub const PHASE_LOAD: u8 = 0;
pub const PHASE_RAMPUP: u8 = 1;
pub const PHASE_MEASURE: u8 = 2;
pub const PHASE_STOP: u8 = 3;

/// CPU time (user, system) of every thread of this process, in seconds.
pub fn process_cpu_s() -> (f64, f64) {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}
