//! InnoDB's write path (MySQL, MariaDB) as the database model applies it:
//! the doublewrite buffer's second copy of every page written back, and
//! the binary log's own durable write at commit.
//!
//! The settings come from, in order: the profile's recording
//! (`provenance.settings`), the managed service's rules for the config's
//! engine on its host (the catalog's `engine_settings`: RDS turns the
//! binary log on with automated backups and the doublewrite buffer off
//! where Optimized Writes applies), and the config's own `settings`.
//!
//! - `innodb_doublewrite` (default ON in MySQL and MariaDB): a page is
//!   first written to the doublewrite buffer, a block of one extent (1 MiB
//!   of pages, `TRX_SYS_DOUBLEWRITE_BLOCK_SIZE = FSP_EXTENT_SIZE`, InnoDB's
//!   trx0sys.h) written in one sequential I/O of up to a block
//!   (`buf_dblwr_flush_buffered_writes`), made durable, then written in
//!   place: the data pool takes the pages' bytes twice and one more
//!   durable I/O per block.
//! - `log_bin` with `sync_binlog = N` (N ≥ 1): at commit, after InnoDB's
//!   prepare has made the redo durable, the binary log is written and
//!   synced once every N commit groups, and the commits return only then
//!   (two-phase commit; MySQL reference manual, "sync_binlog"). With
//!   `sync_binlog = 0` the binary log is left to the kernel's write-back.
//!   The binary log lives beside the redo log, on the log pool.

use storlab_model::deployment::Deployment;
use storlab_workload::profile::Profile;

/// The settings the model reads (a config's `settings`).
pub const SETTINGS: &[&str] = &["innodb_doublewrite", "log_bin", "sync_binlog"];

/// The doublewrite buffer's block, bytes: one extent, 1 MiB of pages.
pub const DOUBLEWRITE_BLOCK_BYTES: f64 = 1_048_576.0;

#[derive(Debug, Clone, PartialEq)]
pub struct WritePath {
    pub doublewrite: bool,
    /// Binary log synced once every this many commit groups; 0 for never
    /// (or no binary log).
    pub binlog_sync_every: u32,
    /// The binary log's bytes per transaction: the profile's measurement,
    /// or its redo bytes where it recorded none (`binlog_measured`).
    pub binlog_bytes_per_txn: Option<f64>,
    /// In words, with where each setting came from, for the record.
    pub words: String,
}

fn on(v: &str) -> bool {
    matches!(v.trim().to_ascii_uppercase().as_str(), "ON" | "1" | "TRUE" | "YES")
}

impl WritePath {
    /// The write path for a config, or None where the profile is not
    /// InnoDB's (PostgreSQL has neither).
    pub fn resolve(dep: &Deployment, profile: &Profile) -> Option<WritePath> {
        let engine = profile.engine()?;
        if engine != "mariadb" && engine != "mysql" {
            return None;
        }
        let recorded = profile.provenance.get("settings").and_then(|s| s.as_table());
        let get = |name: &str, default: &str| -> (String, String) {
            if let Some(s) = dep.settings.get(name) {
                let from = if s.from == "config" { "the config's settings".to_string() } else { s.from.clone() };
                return (s.value.clone(), from);
            }
            if let Some(v) = recorded.and_then(|t| t.get(name)) {
                let v = v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
                return (v, format!("as the profile {} was recorded", profile.name));
            }
            (default.to_string(), format!("the {engine} default"))
        };
        let (dw, dw_from) = get("innodb_doublewrite", "ON");
        let (lb, lb_from) = get("log_bin", "OFF");
        let (sb, sb_from) = get("sync_binlog", "0");
        let doublewrite = on(&dw);
        let sync_every: u32 = if on(&lb) { sb.trim().parse().unwrap_or(0) } else { 0 };
        let measured = profile
            .provenance
            .get("write_path")
            .and_then(|w| w.get("binlog_bytes_per_txn"))
            .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
            .filter(|&b| b > 0.0);
        let dw_words = if doublewrite {
            format!("doublewrite on ({dw_from}): every page written back is written twice, first to the doublewrite buffer in sequential durable writes of up to 1 MiB")
        } else {
            format!("doublewrite off ({dw_from}): each page written back once")
        };
        let bl_words = match (on(&lb), sync_every) {
            (false, _) => format!("binary log off ({lb_from})"),
            (true, 0) => format!("binary log on ({lb_from}), sync_binlog = 0 ({sb_from}): left to the kernel, no durable write at commit"),
            (true, n) => {
                let every = if n == 1 { "every commit group".to_string() } else { format!("every {n}th commit group") };
                let bytes = match measured {
                    Some(b) => format!("{b:.0} bytes a transaction, as recorded"),
                    None => "as many bytes as the redo log's (the profile recorded none)".to_string(),
                };
                format!("binary log on ({lb_from}), synced at {every} (sync_binlog = {n}, {sb_from}) after the redo log: a second durable write on the log pool before the commits return, {bytes}")
            }
        };
        Some(WritePath {
            doublewrite,
            binlog_sync_every: sync_every,
            binlog_bytes_per_txn: measured,
            words: format!("InnoDB write path: {dw_words}; {bl_words}"),
        })
    }
}
